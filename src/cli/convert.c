/* convert.c: devtrace convert IN OUT: reads a recorded input into a session and writes it
 * in the format OUT's name asks for (Perfetto's protobuf for .pftrace/.perfetto-trace,
 * else Chrome JSON). The inputs it knows are one table: each kind says how it is
 * recognised from its first bytes and how it is read; a kind recognised but not yet
 * readable says so in one line. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/backend.h" /* dt_replay_file with the compiled-in backends */
#include "cli.h"
#include "core/core.h"
#include "inject/wire.h"
#include "record_capture.h"
#include "record_options.h"
#include "record_spill.h"
#include "record_tree.h"
#include "report/report.h"
#include "sinks/sinks.h"

static const char convert_usage[] =
    "usage: devtrace convert IN OUT [--backend NAME] [-q]\n"
    "\n"
    "Reads IN and writes its trace to OUT, in the format OUT's name asks for: Perfetto's\n"
    "protobuf for a name ending in '.pftrace' or '.perfetto-trace', else a Chrome JSON trace;\n"
    "'.gz' after either compresses.\n"
    "\n"
    "IN: a raw capture (.dtraw, saved with 'devtrace record --raw'), decoded through the\n"
    "same decoders as live collection, as 'devtrace replay' does; or the spill file of\n"
    "'devtrace record' (PATH.spill), which a recorder that was killed, or could not write\n"
    "its trace, leaves beside the trace: the trace it would have written (every process in\n"
    "one file, each on lanes of its own; with %p or %r in OUT, one trace per process, OUT\n"
    "expanded with its pid and rank as 'devtrace record -o' does; a process that did not\n"
    "finish shipping is noted and counted in events_missing, as the recorder does; a\n"
    "spill cut short mid-message is said in one line and every whole message kept).\n"
    "\n"
    "options:\n"
    "  -b, --backend NAME   decode a raw capture as this backend's vendor (default: the capture's)\n"
    "  -q, --quiet          no summary\n"
    "  -h, --help           this text\n";

typedef struct convert_opts {
    const char *input, *output;
    dt_replay_options replay;
    int quiet;
} convert_opts;

/* A kind of input: recognised by its first bytes; read into a stopped session, or NULL
 * when devtrace cannot read it yet. */
typedef struct input_kind {
    const char *what;
    int (*recognises)(const unsigned char *head, size_t n);
    int (*read)(const convert_opts *o, dt_session **out, devtrace_error *err);
} input_kind;

static int is_raw_capture(const unsigned char *head, size_t n)
{
    return n >= 8 && memcmp(head, "DTRAW1\0\0", 8) == 0;
}

static int read_raw_capture(const convert_opts *o, dt_session **out, devtrace_error *err)
{
    return dt_replay_file(o->input, &o->replay, out, NULL, err);
}

/* A recorder's spill: the sessions it would have built, from the messages it kept, into t
 * (per_process: one session a process, else one for all); *flags gets the spill's. */
static int read_spill_tree(const convert_opts *o, int per_process, dt_tree *t, uint32_t *flags, devtrace_error *err)
{
    int fd = open(o->input, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        dt_error_set(err, DEVTRACE_EIO, "cannot read %s: %s; check the path", o->input, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    size_t size = (size_t)st.st_size;
    void *map = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    close(fd);
    if (map == MAP_FAILED) {
        dt_error_set(err, DEVTRACE_EIO, "cannot read %s: %s", o->input, strerror(errno));
        return -1;
    }
    madvise(map, size, MADV_SEQUENTIAL);
    dt_spill_header h;
    memcpy(&h, map, size < sizeof h ? size : sizeof h);
    char why[512];
    int rc = -1;
    if (dt_spill_check_header(&h, size, why, sizeof why) != 0) {
        dt_error_set(err, DEVTRACE_EFORMAT, "%s: %s", o->input, why);
        goto end;
    }
    h.backend[sizeof h.backend - 1] = '\0';
    *flags = h.flags;
    if (dt_tree_open_offline(t, h.backend, per_process) != 0) {
        dt_error_set(err, DEVTRACE_ENOMEM, "out of memory");
        goto end;
    }
    dt_tree_chunks_beside(t, o->input);
    uint64_t whole = 0;
    size_t body = size - sizeof h;
    size_t read = dt_tree_replay_mapped(t, map, sizeof h, size, &whole);
    if (read < body) {
        /* Cut short (the recorder killed mid-write), or a record no recorder writes (damage). */
        size_t left = body - read;
        dt_spill_record rec = {0, 0, 0};
        if (left >= sizeof rec)
            memcpy(&rec, (const unsigned char *)map + sizeof h + read, sizeof rec);
        int cut = left < sizeof rec ||
                  (rec.length <= DT_WIRE_MAX_PAYLOAD && ((rec.length + 7u) & ~(uint64_t)7u) > left - sizeof rec);
        if (cut) {
            fprintf(stderr,
                    "devtrace convert: %s ends mid-message (its last %zu bytes are part of a message the recorder "
                    "was writing when it stopped): the %llu whole messages before them are converted\n",
                    o->input, left, (unsigned long long)whole);
            for (size_t i = 0; i < t->nsessions; i++)
                dt_add_note(t->sessions[i],
                            "the spill ends mid-message: its last %zu bytes were dropped, the %llu whole messages kept",
                            left, (unsigned long long)whole);
        } else {
            fprintf(stderr,
                    "devtrace convert: %s is damaged at byte %zu (a record of connection %u, type %u, %llu bytes, "
                    "that no recorder writes): the %llu whole messages before it are converted, the %zu bytes from "
                    "there are not\n",
                    o->input, sizeof h + read, rec.connection, rec.type, (unsigned long long)rec.length,
                    (unsigned long long)whole, left);
            for (size_t i = 0; i < t->nsessions; i++)
                dt_add_note(t->sessions[i],
                            "the spill is damaged at byte %zu: the %zu bytes from there were not read, the %llu whole "
                            "messages before kept",
                            sizeof h + read, left, (unsigned long long)whole);
        }
    }
    if (dt_tree_describe(t) && !per_process)
        dt_add_note(t->sessions[0], "no traced process started in this spill: the trace has no events");
    if (h.program_start_ns) {
        dt_capture_opts c = {.delay_ns = h.delay_ns,
                             .duration_ns = h.duration_ns,
                             .has_delay = !!(h.flags & DT_SPILL_HAS_DELAY),
                             .has_duration = !!(h.flags & DT_SPILL_HAS_DURATION)};
        for (size_t i = 0; i < t->nsessions; i++)
            dt_capture_apply(&c, t->sessions[i], h.program_start_ns);
    }
    rc = 0;
end:
    munmap(map, size);
    return rc;
}

static int read_spill(const convert_opts *o, dt_session **out, devtrace_error *err)
{
    dt_tree t;
    uint32_t flags = 0;
    int rc = read_spill_tree(o, 0, &t, &flags, err);
    if (rc == 0) {
        *out = t.sessions[0]; /* the tree's one session, now the caller's */
        t.sessions[0] = NULL;
        t.nsessions = 0;
        if ((flags & DT_SPILL_PER_PROCESS) && !o->quiet)
            fprintf(stderr,
                    "devtrace convert: the recorder was writing one trace per process (-o had %%p or %%r); this "
                    "writes them all to %s (an OUT with %%p or %%r writes one each)\n",
                    o->output);
    }
    dt_tree_close(&t);
    return rc;
}

/* A spill to one trace per traced process, OUT expanded with each one's pid and rank as the
 * recorder does. 0, or DT_EXIT_FAILURE (said). */
static int convert_per_process(const convert_opts *o)
{
    dt_tree t;
    uint32_t flags = 0;
    devtrace_error err = {0, ""};
    int failed = read_spill_tree(o, 1, &t, &flags, &err) != 0;
    size_t outputs = failed ? 0 : dt_tree_outputs(&t);
    if (!failed && !outputs) {
        snprintf(err.message, sizeof err.message, "no traced process started in %s: there is no trace to write",
                 o->input);
        failed = 1;
    }
    char **taken = calloc(outputs + 1, sizeof *taken);
    for (size_t i = 0; !failed && i < outputs; i++) {
        uint32_t pid = 0;
        dt_session *s = dt_tree_output(&t, i, &pid);
        char path[PATH_MAX], rank[16];
        snprintf(rank, sizeof rank, "%d", s->rank);
        dt_record_output_path("devtrace convert", o->output, (pid_t)pid, rank, taken, taken ? i : 0, path, sizeof path);
        if (devtrace_write_trace(s, path, &err) != 0) {
            failed = 1;
            break;
        }
        if (!o->quiet) {
            dt_summary_print(s, stderr, 5);
            fprintf(stderr, "trace: %s\n", path);
        }
        if (taken)
            taken[i] = strdup(path);
    }
    for (size_t i = 0; taken && i < outputs + 1; i++)
        free(taken[i]);
    free(taken);
    dt_filemem_trimmer_stop();
    if (failed)
        fprintf(stderr, "devtrace convert: %s\n", err.message);
    dt_tree_close(&t);
    return failed ? DT_EXIT_FAILURE : 0;
}

/* A JSON object (after white space), or gzip's magic. */
static int is_json_trace(const unsigned char *head, size_t n)
{
    if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b)
        return 1;
    size_t i = 0;
    while (i < n && strchr(" \t\r\n", head[i]) && head[i])
        i++;
    return i < n && head[i] == '{';
}

static const input_kind input_kinds[] = {
    {"a raw capture (.dtraw)", is_raw_capture, read_raw_capture},
    {"a recorder's spill (.spill)", dt_spill_recognises, read_spill},
    {"a Chrome JSON trace", is_json_trace, NULL},
};

static int parse_args(int argc, char **argv, convert_opts *o)
{
    memset(o, 0, sizeof *o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(convert_usage, stdout);
            return 1;
        }
        if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            o->quiet = 1;
        } else if (!strcmp(a, "-b") || !strcmp(a, "--backend")) {
            if (i + 1 >= argc || !*argv[i + 1]) {
                fprintf(stderr, "devtrace convert: %s needs a value; run 'devtrace convert --help'\n", a);
                return -1;
            }
            o->replay.backend = argv[++i];
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "devtrace convert: unknown option '%s'; run 'devtrace convert --help'\n", a);
            return -1;
        } else if (!o->input) {
            o->input = a;
        } else if (!o->output) {
            o->output = a;
        } else {
            fprintf(stderr,
                    "devtrace convert: one input and one output ('%s' is a third); usage: devtrace convert IN OUT\n",
                    a);
            return -1;
        }
    }
    if (!o->output) {
        fprintf(stderr, "devtrace convert: %s; usage: devtrace convert IN OUT\n",
                !o->input ? "no input and no output given" : "no output given");
        return -1;
    }
    return 0;
}

int dt_cmd_convert(int argc, char **argv)
{
    convert_opts o;
    int parsed = parse_args(argc, argv, &o);
    if (parsed)
        return parsed > 0 ? 0 : DT_EXIT_USAGE;
    FILE *f = fopen(o.input, "rb");
    if (!f) {
        fprintf(stderr, "devtrace convert: cannot read %s: %s; check the path\n", o.input, strerror(errno));
        return DT_EXIT_FAILURE;
    }
    unsigned char head[64];
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    const input_kind *kind = NULL;
    for (size_t i = 0; !kind && i < sizeof input_kinds / sizeof input_kinds[0]; i++)
        if (input_kinds[i].recognises(head, n))
            kind = &input_kinds[i];
    if (!kind || !kind->read) {
        fprintf(stderr,
                "devtrace convert: %s is %s; devtrace convert reads a raw capture (.dtraw) or a recorder's spill "
                "(.spill)%s\n",
                o.input, kind ? kind->what : "not an input devtrace knows", kind ? ", not yet this kind" : "");
        return DT_EXIT_FAILURE;
    }
    if (strstr(o.output, "%p") || strstr(o.output, "%r")) {
        if (kind->read != read_spill) {
            fprintf(stderr,
                    "devtrace convert: OUT %s has %%p or %%r, which name a process: only a recorder's spill has "
                    "several; give OUT without them\n",
                    o.output);
            return DT_EXIT_USAGE;
        }
        return convert_per_process(&o);
    }
    devtrace_error err = {0, ""};
    dt_session *s = NULL;
    int failed = kind->read(&o, &s, &err) != 0 || devtrace_write_trace(s, o.output, &err) != 0;
    dt_filemem_trimmer_stop(); /* a spill's events were in file memory (record_tree.c) */
    if (failed) {
        fprintf(stderr, "devtrace convert: %s\n", err.message);
        devtrace_close(s);
        return DT_EXIT_FAILURE;
    }
    if (!o.quiet) {
        dt_summary_print(s, stderr, 5);
        fprintf(stderr, "trace: %s\n", o.output);
    }
    devtrace_close(s);
    return 0;
}
