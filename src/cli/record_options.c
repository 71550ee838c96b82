/* record_options.c: devtrace record's command line and the checks before the program runs
 * (see record_options.h). */
#include "record_options.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"
#include "devtrace.h"

/* A printf format: the default bound is filled in from the library's (DT_DEFAULT_MAX_EVENTS). */
static const char record_usage[] =
    "usage: devtrace record [OPTIONS] -- PROGRAM [ARGS...]\n"
    "\n"
    "Runs PROGRAM with devtrace's collector loaded, and writes the Chrome trace of its\n"
    "device timeline when it exits (also when it crashes, or on SIGINT/SIGTERM, which are\n"
    "passed on to it). The programs it starts that exec (shell scripts, sh -c, system(),\n"
    "subprocess, torchrun's workers) are traced too, each on lanes of its own; children\n"
    "forked without exec are not (they are counted). devtrace exits with PROGRAM's status.\n"
    "\n"
    "options:\n"
    "  -o, --output PATH   the trace file (default devtrace-PID.json, PID: PROGRAM's); a\n"
    "                      name ending in .gz (any case) is compressed; '.pftrace' or\n"
    "                      '.perfetto-trace' (and '.pftrace.gz') writes Perfetto's\n"
    "                      protobuf. With %%p (pid) or %%r (rank: the process's $RANK, 0\n"
    "                      without) in PATH, one file per traced process; else one file\n"
    "                      holds every traced process; checked before PROGRAM runs\n"
    "  --no-children       trace PROGRAM only, not the programs it starts\n" DT_CAPTURE_HELP
    "  -b, --backend NAME  a name from 'devtrace list', or auto (the default, unless\n"
    "                      $DEVTRACE_BACKEND names one): the first that can trace here\n"
    "  --raw PATH          also save the vendor's raw buffers (.dtraw) for replay\n"
    "  --torch             a Python program that imports torch: every PyTorch op in the\n"
    "                      trace (cpu_op), device work carrying the innermost op's id\n"
    "  --top N             kernels in the summary (default 5)\n"
    "  -q, --quiet         no summary, only errors\n"
    "  -h, --help          this text\n"
    "\n"
    "While PROGRAM runs, what it ships is written to a spill file beside the trace\n"
    "(PATH.spill, or PATH.spill.XXXXXX when that name is taken), not kept in memory; the\n"
    "trace is written from it at the end (its events in the pages of an unnamed file\n"
    "there, not the recorder's memory) and the file removed. A recorder killed before\n"
    "leaves it: 'devtrace convert PATH.spill OUT.json' writes the trace from it. With\n"
    "--on-demand the events of an open window are kept in memory instead.\n"
    "\n"
    "environment: DEVTRACE_MAX_EVENTS (bound on stored events; default %llu: events\n"
    "  past it are counted as dropped), DEVTRACE_GZIP_LEVEL (0 to 9; default 1),\n"
    "  DEVTRACE_WRITE_THREADS (1 to 64; default one per CPU, at most 8),\n"
    "  DEVTRACE_<VENDOR>_LIBRARY (the vendor library to load), RANK and WORLD_SIZE\n"
    "  (RANK below WORLD_SIZE),\n"
    "  DEVTRACE_HOST_CLOCK (tsc or clock: how runtime calls are stamped; default tsc\n"
    "  where the kernel's clocksource is tsc); with --torch: DEVTRACE_TORCH_CACHE (where the\n"
    "  PyTorch observer is built, default ~/.cache/devtrace), CXX (its compiler),\n"
    "  DEVTRACE_PYTHON_DIR (the folder holding the devtrace Python package),\n"
    "  DEVTRACE_RECORD_SPILL (0: keep the events in memory, no spill file),\n"
    "  DEVTRACE_RECORD_CHUNKS (heap: build the trace from the spill on the heap, not in\n"
    "  an unnamed file's pages beside it),\n"
    "  DEVTRACE_RECORD_RESIDENT_MB (how much of those pages stays resident while the trace\n"
    "  is built, default 24: more is faster, the recorder's peak is about this + 10 MB),\n"
    "  DEVTRACE_RECORDER_STATS (1: print the recorder's memory, VmHWM and RssAnon).\n";

/* The compiled-in backends with every capability in caps, ", " between them, then tail
 * (NULL: nothing). */
static void backend_names(unsigned caps, const char *tail, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < devtrace_backend_count(); i++) {
        devtrace_backend_info info = {.size = sizeof info};
        if (devtrace_backend_get(i, &info) != 0 || (info.capabilities & caps) != caps)
            continue;
        int n = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", info.name);
        if (n < 0 || (size_t)n >= len - used)
            return;
        used += (size_t)n;
    }
    if (tail)
        snprintf(buf + used, len - used, "%s%s", used ? ", " : "", tail);
}

int dt_record_backend_saves_raw(const char *name)
{
    devtrace_backend_info info = {.size = sizeof info};
    return devtrace_backend_find(name, &info) == 0 && (info.capabilities & DEVTRACE_CAP_RAW_CAPTURE);
}

void dt_record_say_raw_not_written(const char *raw, const char *backend, const char *what_happens, const char *fix)
{
    char can[256];
    backend_names(DEVTRACE_CAP_RAW_CAPTURE, NULL, can, sizeof can);
    fprintf(stderr,
            "devtrace record: --raw %s %s: the %s backend cannot save raw captures (the backends that can: "
            "%s)%s\n",
            raw, what_happens, backend, can[0] ? can : "none in this build", fix);
}

int dt_record_output_has(const char *pattern, const char *which)
{
    for (const char *p = pattern; *p; p++)
        if (*p == '%') {
            if (p[1] && strchr(which, p[1]))
                return 1;
            if (p[1])
                p++;
        }
    return 0;
}

int dt_record_parse_options(int argc, char **argv, dt_record_opts *o)
{
    memset(o, 0, sizeof *o);
    o->output = "devtrace-%p.json";
    const char *env_backend = getenv("DEVTRACE_BACKEND");
    o->backend = env_backend && *env_backend ? env_backend : "auto"; /* --backend wins */
    o->top = 5;
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        if (a[0] != '-')
            break;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            printf(record_usage, (unsigned long long)DT_DEFAULT_MAX_EVENTS);
            exit(0);
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            o->quiet = 1;
            continue;
        } else if (!strcmp(a, "--torch")) {
            o->torch_python = "";
            continue;
        } else if (!strcmp(a, "--no-children")) {
            o->no_children = 1;
            continue;
        }
        int capture = dt_capture_option(&o->capture, a, value);
        if (capture < 0)
            return -1;
        if (capture > 0) {
            i += capture == 1;
            continue;
        }
        const char **slot = !strcmp(a, "-o") || !strcmp(a, "--output")    ? &o->output
                            : !strcmp(a, "-b") || !strcmp(a, "--backend") ? &o->backend
                            : !strcmp(a, "--raw")                         ? &o->raw
                                                                          : NULL;
        if (slot || !strcmp(a, "--top")) {
            if (!value || !strcmp(value, "--")) { /* '-o -- prog' is -o without its file, not a file named '--' */
                fprintf(stderr, "devtrace record: %s needs a value%s; run 'devtrace record --help'\n", a,
                        value ? " before '--'" : "");
                return -1;
            }
            i++;
            if (slot) {
                *slot = value;
                o->output_given |= slot == &o->output;
            } else {
                uint64_t n;
                if (dt_parse_u64(value, &n) != 0 || n > 1000) {
                    fprintf(stderr, "devtrace record: --top takes a number from 0 to 1000, not '%s'\n", value);
                    return -1;
                }
                o->top = (int)n;
            }
            continue;
        }
        fprintf(stderr, "devtrace record: unknown option '%s'; run 'devtrace record --help'\n", a);
        return -1;
    }
    if (i >= argc) {
        fprintf(stderr, "devtrace record: no program given; usage: devtrace record [-o TRACE] -- PROGRAM [ARGS...]\n");
        return -1;
    }
    o->argv = argv + i;
    if (dt_capture_check(&o->capture) != 0)
        return -1;
    if (o->capture.on_demand && !o->output_given)
        o->output = "devtrace-%p-w%w.json";
    if (o->capture.on_demand != dt_record_output_has(o->output, "w")) {
        fprintf(stderr, o->capture.on_demand
                            ? "devtrace record: --on-demand writes a trace per capture window: put %%w "
                              "(the window's index) in -o, like -o trace-%%w.json\n"
                            : "devtrace record: %%w in -o names a capture window; it needs --on-demand\n");
        return -1;
    }
    if (!*o->output) {
        fprintf(stderr, "devtrace record: -o needs a file name\n");
        return -1;
    }
    devtrace_backend_info info = {.size = sizeof info};
    if (strcmp(o->backend, "auto") != 0 && devtrace_backend_find(o->backend, &info) != 0) {
        char names[256];
        backend_names(0, "none", names, sizeof names);
        fprintf(stderr, "devtrace record: unknown backend '%s'; choose one of: auto, %s (see 'devtrace list')\n",
                o->backend, names);
        return -1;
    }
    if (o->raw && strcmp(o->backend, "auto") != 0 && !dt_record_backend_saves_raw(o->backend)) {
        dt_record_say_raw_not_written(o->raw, o->backend, "would not be written",
                                      "; drop --raw or choose one of those");
        return -1;
    }
    return 0;
}

/* The settings the collector and the writer read from the environment, checked before the
 * program runs: a bad value is one line and exit 2 here, not a note in a trace (or no trace, or
 * an old trace overwritten) after the program has run. The library itself falls back and notes. */
static const struct env_setting {
    const char *name;
    uint64_t min, max;
    const char *what;
} env_settings[] = {
    {"DEVTRACE_MAX_EVENTS", 1, UINT64_MAX, "a positive count of events, like 1000000"},
    {"RANK", 0, 1u << 30, "a rank from 0 to 1073741824"},
    {"WORLD_SIZE", 0, 1u << 30, "a process count from 0 to 1073741824"},
    {"DEVTRACE_GZIP_LEVEL", 0, 9, "one digit, a gzip level from 0 to 9"},
    {"DEVTRACE_WRITE_THREADS", 1, 64, "a thread count from 1 to 64"},
    {"DEVTRACE_BUFFER_SIZE", 4096, 256u << 20, "a buffer size in bytes from 4096 to 268435456"},
    {"DEVTRACE_BUFFER_COUNT", 1, 4096, "a buffer count from 1 to 4096"},
    {"DEVTRACE_FLUSH_TIMEOUT_MS", 1, UINT64_MAX, "a positive number of milliseconds"},
    {"DEVTRACE_OPENCL_STOP_TIMEOUT_MS", 0, UINT64_MAX, "a number of milliseconds"},
    {"DEVTRACE_RECORD_SPILL", 0, 1, "0 (events kept in memory) or 1 (spilled to disk: the default)"},
    {"DEVTRACE_RECORDER_STATS", 0, 1, "0 or 1 (print the recorder's memory at the end)"},
    {"DEVTRACE_RECORD_RESIDENT_MB", 4, 1u << 20, "a size in MiB from 4 to 1048576"},
};

int dt_record_check_env(void)
{
    dt_host_clock_choice host_clock;
    devtrace_error err = {0, ""};
    if (dt_host_clock_choice_from_env(&host_clock, &err) != 0) {
        fprintf(stderr, "devtrace record: %s\n", err.message);
        return -1;
    }
    for (size_t i = 0; i < sizeof env_settings / sizeof env_settings[0]; i++) {
        const struct env_setting *e = &env_settings[i];
        const char *v = getenv(e->name);
        uint64_t n;
        if (!v || !*v)
            continue;
        if (dt_parse_u64(v, &n) != 0 || n < e->min || n > e->max || (e->max == 9 && v[1])) {
            fprintf(stderr, "devtrace record: $%s=\"%.200s\" is not %s; fix it or unset it\n", e->name, v, e->what);
            return -1;
        }
    }
    const char *rank = getenv("RANK"), *world = getenv("WORLD_SIZE");
    uint64_t r, w;
    if (rank && *rank && world && *world && dt_parse_u64(rank, &r) == 0 && dt_parse_u64(world, &w) == 0 && r >= w) {
        fprintf(stderr,
                "devtrace record: $RANK=%llu is not below $WORLD_SIZE=%llu (ranks are 0 to WORLD_SIZE - 1); "
                "fix one of them or unset both\n",
                (unsigned long long)r, (unsigned long long)w);
        return -1;
    }
    return 0;
}

/* access() alone is not enough: root may write everywhere, but not create a file in /proc;
 * so <path>.tmp, the name the file is first written under, is created (then removed; one
 * that is already there is left as it was). */
int dt_record_check_output_dir(const char *path, const char *what, const char *flag, int in_place)
{
    char copy[PATH_MAX];
    snprintf(copy, sizeof copy, "%s", path);
    const char *dir = dirname(copy);
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(
            stderr,
            "devtrace record: cannot write the %s to %s: directory %s does not exist; create it or choose another %s\n",
            what, path, dir, flag);
        return -1;
    }
    if (access(dir, W_OK) != 0) {
        fprintf(stderr,
                "devtrace record: cannot write the %s to %s: directory %s is not writable (%s); choose another %s\n",
                what, path, dir, strerror(errno), flag);
        return -1;
    }
    struct stat target;
    if (stat(path, &target) == 0 && S_ISDIR(target.st_mode)) {
        fprintf(stderr, "devtrace record: cannot write the %s to %s: it is a directory; give a file name\n", what,
                path);
        return -1;
    }
    struct stat here;
    if (in_place && dt_path_has_foreign_link(path)) {
        fprintf(stderr, "devtrace record: cannot write the %s to %s: %s\n", what, path, dt_file_refusal(EXDEV));
        return -1;
    }
    if (in_place && lstat(path, &here) == 0) {
        /* Written in place (not renamed over): what dt_file_create_or_empty refuses, refused now. */
        int refusal = S_ISLNK(here.st_mode)      ? ELOOP
                      : !S_ISREG(here.st_mode)   ? EINVAL
                      : here.st_uid != geteuid() ? EPERM
                      : here.st_nlink != 1       ? EMLINK
                                                 : 0;
        if (refusal) {
            fprintf(stderr, "devtrace record: cannot write the %s to %s: %s\n", what, path, dt_file_refusal(refusal));
            return -1;
        }
    }
    /* A file made there as the writer will make it (never through a name planted there),
     * then removed. */
    char tmp[PATH_MAX + 16];
    int fd = dt_file_create_tmp(path, tmp, sizeof tmp);
    if (fd < 0) {
        int e = errno;
        if (dt_file_refusal(e))
            fprintf(stderr, "devtrace record: cannot write the %s to %s: %s\n", what, path, dt_file_refusal(e));
        else
            fprintf(stderr, "devtrace record: cannot write the %s to %s: creating %s failed (%s); choose another %s\n",
                    what, path, tmp, strerror(e), flag);
        return -1;
    }
    close(fd);
    unlink(tmp);
    return 0;
}

int dt_record_expand_output(const char *pattern, pid_t pid, const char *rank, int window, char *out, size_t cap)
{
    size_t o = 0;
    for (const char *p = pattern; *p; p++) {
        char piece[32];
        const char *add = piece;
        if (*p == '%' && p[1] == 'p') {
            snprintf(piece, sizeof piece, "%ld", (long)pid);
            p++;
        } else if (*p == '%' && p[1] == 'r') {
            add = rank && *rank ? rank : "0";
            p++;
        } else if (*p == '%' && p[1] == 'w' && window >= 0) {
            snprintf(piece, sizeof piece, "%d", window);
            p++;
        } else if (*p == '%' && p[1] == '%') {
            add = "%";
            p++;
        } else {
            piece[0] = *p;
            piece[1] = '\0';
        }
        size_t n = strlen(add);
        if (o + n + 1 > cap)
            return -1;
        memcpy(out + o, add, n);
        o += n;
    }
    out[o] = '\0';
    return 0;
}

/* Where a trace file's extension begins in path: one the writers know (the format and
 * gzip come from it), in the file's name, not in a folder's; else the end of path. */
static size_t trace_extension_at(const char *path)
{
    static const char *const extensions[] = {".perfetto-trace.gz", ".perfetto-trace", ".pftrace.gz", ".pftrace",
                                             ".json.gz",           ".json",           ".gz"};
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof extensions / sizeof extensions[0]; i++) {
        size_t m = strlen(extensions[i]);
        if (n > m && strcasecmp(name + n - m, extensions[i]) == 0)
            return (size_t)(name - path) + n - m;
    }
    return strlen(path);
}

/* The trace's path for one output: the pattern expanded with the process's pid and rank
 * (the recorder's $RANK for the tree's one file); a path another output took already gets
 * ".PID" before its extension, in the same folder and the same format. */
void dt_record_output_path(const char *who, const char *pattern, pid_t pid, const char *rank, char **taken,
                           size_t ntaken, char *path, size_t cap)
{
    dt_record_expand_output(pattern, pid, rank, -1, path, cap);
    for (size_t i = 0; i < ntaken; i++)
        if (!strcmp(taken[i], path)) {
            char base[PATH_MAX];
            snprintf(base, sizeof base, "%s", path);
            size_t at = trace_extension_at(base);
            if (snprintf(path, cap, "%.*s.%ld%s", (int)at, base, (long)pid, base + at) >= (int)cap)
                path[cap - 1] = '\0';
            fprintf(stderr, "%s: two processes would write %s; process %ld writes %s\n", who, taken[i], (long)pid,
                    path);
            return;
        }
}
