/* fuzz_cli_options.c: libFuzzer target for the option parser of `devtrace record`
 * (src/cli/record_options.c: dt_record_parse_options and the -o pattern expansion), the very
 * file the command links, called without running a program.
 *
 * Input: NUL-separated arguments (argv[1..]; "-h" and "--help" print the usage and exit, so they
 * are replaced). Oracle: dt_record_parse_options either accepts, with the program inside argv, or prints exactly
 * one line starting "devtrace record: " and returns -1; the expansion of any -o pattern fits its
 * buffer or fails, and never writes past it. (An argument with a newline in it may be quoted in the
 * message: those newlines are allowed.)
 * FUZZ_EXTRA_SOURCES: src/cli/record_options.c src/cli/record_capture.c */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/record_options.h"

#include "fuzz_common.h"

#define MAX_ARGS 32

/* stderr into a temporary file while the parser runs, then read back. */
static FILE *captured;

static size_t capture_stderr(int (*fn)(int, char **, dt_record_opts *), int argc, char **argv, dt_record_opts *o,
                             int *rc, char *out, size_t cap)
{
    if (!captured && !(captured = tmpfile()))
        abort();
    fflush(stderr);
    int saved = dup(2);
    if (ftruncate(fileno(captured), 0) != 0 || lseek(fileno(captured), 0, SEEK_SET) != 0 || saved < 0)
        abort();
    dup2(fileno(captured), 2);
    *rc = fn(argc, argv, o);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ssize_t n = pread(fileno(captured), out, cap - 1, 0);
    out[n > 0 ? n : 0] = '\0';
    return n > 0 ? (size_t)n : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *copy = malloc(size + 1);
    if (!copy)
        abort();
    memcpy(copy, data, size);
    copy[size] = '\0';
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = "record";
    size_t arg_newlines = 0;
    for (char *p = copy; p < copy + size && argc < MAX_ARGS + 1;) {
        size_t n = strlen(p);
        for (size_t i = 0; i < n; i++)
            arg_newlines += p[i] == '\n';
        argv[argc++] = !strcmp(p, "-h") || !strcmp(p, "--help") ? "-q" : p;
        p += n + 1;
    }
    argv[argc] = NULL;

    dt_record_opts o;
    int rc;
    static char text[1 << 20]; /* more than any message of an input up to libFuzzer's length limits */
    size_t len = capture_stderr(dt_record_parse_options, argc, argv, &o, &rc, text, sizeof text);
    if (rc == 0) {
        if (len || !o.argv || o.argv < argv + 1 || o.argv >= argv + argc || !o.output || !*o.output || !o.backend)
            abort();
        char path[PATH_MAX];
        if (dt_record_expand_output(o.output, 12345, "3", 7, path, sizeof path) == 0) {
            if (strlen(path) >= sizeof path)
                abort();
        }
        char small[16];
        if (dt_record_expand_output(o.output, 2147483647, NULL, 2147483647, small, sizeof small) == 0 &&
            strlen(small) >= sizeof small)
            abort();
    } else {
        size_t lines = 0;
        for (size_t i = 0; i < len; i++)
            lines += text[i] == '\n';
        if (rc == -1 && len && !strncmp(text, "devtrace record: ", 17) && text[len - 1] == '\n' &&
            lines <= 1 + arg_newlines)
            goto ok;
        fprintf(stderr, "fuzz oracle: dt_record_parse_options returned %d with this on stderr: '%s'\n", rc, text);
        abort();
    }
ok:
    free(copy);
    return 0;
}
