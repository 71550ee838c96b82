/* replay.c: devtrace replay: decodes a raw capture (.dtraw, saved with 'devtrace record
 * --raw' or $DEVTRACE_RAW) into a trace, through the same decoders and scanner as live
 * collection (core/replay.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backend.h" /* dt_replay_file with the compiled-in backends */
#include "cli.h"
#include "core/core.h"
#include "report/report.h"
#include "sinks/sinks.h"

static const char replay_usage[] =
    "usage: devtrace replay FILE.dtraw -o TRACE.json [--backend NAME] [--trace-name NAME] [-q]\n"
    "\n"
    "Decodes a raw capture saved with 'devtrace record --raw' (or $DEVTRACE_RAW) through the\n"
    "same decoders as live collection, and writes its Chrome trace ('.gz' compresses), or\n"
    "Perfetto's protobuf for a TRACE ending in '.pftrace' or '.perfetto-trace'.\n"
    "\n"
    "options:\n"
    "  -o, --output PATH    the trace file (required)\n"
    "  -b, --backend NAME   decode the buffers as this backend's vendor (default: the capture's);\n"
    "                       refused when that vendor's records differ from the capture's\n"
    "                       (a note names both vendors when they are the same records)\n"
    "  --trace-name NAME    the trace's traceName (default: PATH); the same name as the live\n"
    "                       trace makes a replay of an unchanged capture byte-identical to it\n"
    "  -q, --quiet          no summary\n"
    "  -h, --help           this text\n";

/* The trace with a chosen traceName, written to path.tmp (made new) and renamed. */
static int write_named(dt_session *s, const char *path, const char *name, devtrace_error *err)
{
    char *buf = NULL;
    size_t len = 0;
    if (dt_chrome_write_buffer(s, name, &buf, &len) != 0)
        return dt_error_set(err, DEVTRACE_ENOMEM, "cannot build the trace");
    size_t cap = strlen(path) + 16;
    char *tmp = malloc(cap);
    int rc = 0;
    FILE *f = NULL;
    if (!tmp) {
        rc = dt_error_set(err, DEVTRACE_ENOMEM, "out of memory");
        goto end;
    }
    int fd = dt_file_create_tmp(path, tmp, cap); /* never through a name planted there */
    f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f) {
        rc = dt_error_set(err, DEVTRACE_EIO, "cannot write the trace to %s: %s", tmp,
                          dt_file_refusal(errno) ? dt_file_refusal(errno) : strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
        goto end;
    }
    if (fwrite(buf, 1, len, f) != len) {
        rc = dt_error_set(err, DEVTRACE_EIO, "writing the trace to %s failed: %s", tmp, strerror(errno));
        fclose(f);
        unlink(tmp);
        goto end;
    }
    if (fclose(f) != 0) {
        rc = dt_error_set(err, DEVTRACE_EIO, "writing the trace to %s failed: %s", tmp, strerror(errno));
        unlink(tmp);
        goto end;
    }
    if (rename(tmp, path) != 0) {
        rc = dt_error_set(err, DEVTRACE_EIO, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
        unlink(tmp);
    }
end:
    free(tmp);
    free(buf);
    return rc;
}

int dt_cmd_replay(int argc, char **argv)
{
    const char *input = NULL, *output = NULL, *trace_name = NULL;
    dt_replay_options opt = {NULL};
    int quiet = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(replay_usage, stdout);
            return 0;
        }
        if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
            continue;
        }
        const char **slot = !strcmp(a, "-o") || !strcmp(a, "--output")    ? &output
                            : !strcmp(a, "-b") || !strcmp(a, "--backend") ? &opt.backend
                            : !strcmp(a, "--trace-name")                  ? &trace_name
                                                                          : NULL;
        if (slot) {
            if (i + 1 >= argc || !*argv[i + 1]) {
                fprintf(stderr, "devtrace replay: %s needs a value; run 'devtrace replay --help'\n", a);
                return DT_EXIT_USAGE;
            }
            *slot = argv[++i];
            continue;
        }
        if (a[0] == '-' && a[1]) {
            fprintf(stderr, "devtrace replay: unknown option '%s'; run 'devtrace replay --help'\n", a);
            return DT_EXIT_USAGE;
        }
        if (input) {
            fprintf(stderr, "devtrace replay: one capture at a time ('%s' and '%s' given)\n", input, a);
            return DT_EXIT_USAGE;
        }
        input = a;
    }
    if (!input || !output) {
        fprintf(stderr, "devtrace replay: %s; usage: devtrace replay FILE.dtraw -o TRACE.json\n",
                !input ? "no capture given" : "no output given (-o TRACE.json)");
        return DT_EXIT_USAGE;
    }
    if (trace_name && dt_trace_path_is_gzip(output)) {
        fprintf(stderr, "devtrace replay: --trace-name writes plain JSON; choose an output without '.gz'\n");
        return DT_EXIT_USAGE;
    }
    if (trace_name && dt_trace_format_of(output) == DT_FORMAT_PERFETTO) {
        fprintf(stderr, "devtrace replay: --trace-name names a JSON trace; a Perfetto trace (%s) has no name\n",
                output);
        return DT_EXIT_USAGE;
    }
    devtrace_error err = {0, ""};
    dt_session *s = NULL;
    dt_raw_info info;
    if (dt_replay_file(input, &opt, &s, &info, &err) != 0) {
        fprintf(stderr, "devtrace replay: %s\n", err.message);
        return DT_EXIT_FAILURE;
    }
    int rc = trace_name ? write_named(s, output, trace_name, &err) : devtrace_write_trace(s, output, &err);
    if (rc != 0) {
        fprintf(stderr, "devtrace replay: %s\n", err.message);
        devtrace_close(s);
        return DT_EXIT_FAILURE;
    }
    if (!quiet) {
        fprintf(stderr, "replayed a %s capture (API version %u): %llu buffers, %llu bytes, %llu chunks%s\n",
                info.vendor, info.api_version, (unsigned long long)info.buffers, (unsigned long long)info.buffer_bytes,
                (unsigned long long)info.chunks, info.truncated ? " (the last one cut short)" : "");
        dt_summary_print(s, stderr, 5);
        fprintf(stderr, "trace: %s\n", output);
    }
    devtrace_close(s);
    return 0;
}
