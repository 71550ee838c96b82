/* record_options.h: devtrace record's command line and what is checked before the program
 * runs: the options (with --help), the environment settings the collector and the writer
 * read, the trace's and the raw capture's folders, and the -o pattern's conversions (%p the
 * pid, %r the rank, %w the capture window). Backends are known only through the public API
 * (devtrace_backend_*). A compilation unit of its own, so that the fuzz target
 * (tests/fuzz/fuzz_cli_options.c) links the very parser the command runs. */
#ifndef DT_RECORD_OPTIONS_H
#define DT_RECORD_OPTIONS_H

#include <stddef.h>
#include <sys/types.h>

#include "record_capture.h"

typedef struct dt_record_opts {
    const char *output;
    int output_given; /* -o was given (the default name is one file for the tree) */
    int no_children;
    dt_capture_opts capture;
    const char *backend; /* a compiled-in backend's name, "none" or "auto" */
    const char *raw;
    int top;
    int quiet;
    const char *torch_python; /* --torch: the folder with the devtrace Python package */
    char **argv;              /* the program and its arguments (borrowed from argv) */
} dt_record_opts;

/* Parses argv[1..] (argv[0] is "record"): 0 with *o filled; -1 after one line on stderr
 * naming the problem and the fix. -h/--help prints the usage and exits 0. */
int dt_record_parse_options(int argc, char **argv, dt_record_opts *o);
/* The settings read from the environment ($DEVTRACE_MAX_EVENTS, $RANK, ...): 0, or -1 after
 * one line on stderr (the value, what it must be). */
int dt_record_check_env(void);
/* The output can be created before the program runs: its folder exists and is writable, and
 * <path>.tmp can be created there. what: "trace"; flag: "-o". in_place: the file is written
 * where it is (the raw capture), so a link or another user's file at path is refused. 0, or
 * -1 after one line. */
int dt_record_check_output_dir(const char *path, const char *what, const char *flag, int in_place);

/* Whether the pattern has one of the conversions in which ("pr": %p or %r; not %%p). */
int dt_record_output_has(const char *pattern, const char *which);
/* Expands %p (pid), %r (rank: NULL or "" is 0), %w (the capture window's index; kept as it
 * is when window < 0) and %% into out: 0, or -1 when it does not fit in cap. */
int dt_record_expand_output(const char *pattern, pid_t pid, const char *rank, int window, char *out, size_t cap);
/* The trace's path for one process's output: pattern expanded with its pid and rank; a path
 * one of taken[0, ntaken) already has gets ".PID" before its extension, in the same folder
 * and the same format (said in one line, from who: "devtrace record"). */
void dt_record_output_path(const char *who, const char *pattern, pid_t pid, const char *rank, char **taken,
                           size_t ntaken, char *path, size_t cap);

/* Whether the backend saves raw captures (DEVTRACE_CAP_RAW_CAPTURE). */
int dt_record_backend_saves_raw(const char *name);
/* --raw with a backend that cannot save raw captures: one line saying so, with the backends
 * that can (what_happens: "would not be written"; fix: "; drop --raw ..." or ""). */
void dt_record_say_raw_not_written(const char *raw, const char *backend, const char *what_happens, const char *fix);

#endif
