/* record.c: devtrace record: runs a program with the collector set up, receives the
 * events it and the programs it starts ship (record_tree.c), and writes the trace when
 * the program ends (also on SIGINT/SIGTERM to the recorder, which are passed on to the
 * program). Exits as the program did. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/backend.h"
#ifdef DT_HAVE_MSPTI
#include "backends/cupti_family.h" /* dt_cf_locate_library: where the MSPTI backend finds libmspti.so */
#endif
#include "cli.h"
#include "core/errors.h"
#include "core/session.h"
#include "inject/wire.h"
#include "record_capture.h"
#include "record_tree.h"
#include "record_windows.h"
#include "sinks/sinks.h"

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
    "environment: DEVTRACE_MAX_EVENTS (bound on stored events; default %llu: events\n"
    "  past it are counted as dropped), DEVTRACE_GZIP_LEVEL (0 to 9; default 1),\n"
    "  DEVTRACE_WRITE_THREADS (1 to 64; default one per CPU, at most 8),\n"
    "  DEVTRACE_<VENDOR>_LIBRARY (the vendor library to load), RANK and WORLD_SIZE\n"
    "  (RANK below WORLD_SIZE),\n"
    "  DEVTRACE_HOST_CLOCK (tsc or clock: how runtime calls are stamped; default tsc\n"
    "  where the kernel's clocksource is tsc); with --torch: DEVTRACE_TORCH_CACHE (where the\n"
    "  PyTorch observer is built, default ~/.cache/devtrace), CXX (its compiler),\n"
    "  DEVTRACE_PYTHON_DIR (the folder holding the devtrace Python package).\n";

typedef struct record_opts {
    const char *output;
    int output_given; /* -o was given (the default name is one file for the tree) */
    int no_children;
    dt_capture_opts capture;
    const char *backend;
    const char *raw;
    int top;
    int quiet;
    const char *torch_python; /* --torch: the folder with the devtrace Python package */
    char **argv;              /* the program and its arguments */
} record_opts;

static volatile sig_atomic_t pending_signal;
static volatile pid_t child_pid;

static void forward_signal(int sig)
{
    pending_signal = sig;
    if (child_pid > 0)
        kill(child_pid, sig);
}

/* --raw with a backend that cannot save raw captures (OpenCL, ROCtracer, none): one line
 * saying so, before the program runs when the backend was named (and after it, for auto). */
static void say_raw_not_written(const char *raw, const char *backend, const char *what_happens, const char *fix)
{
    char can[256];
    dt_backend_names_with(DT_CAP_RAW_CAPTURE, can, sizeof can);
    fprintf(stderr,
            "devtrace record: --raw %s %s: the %s backend cannot save raw captures (the backends that can: "
            "%s)%s\n",
            raw, what_happens, backend, can[0] ? can : "none in this build", fix);
}

static int backend_saves_raw(const char *name)
{
    const dt_backend *b = dt_backend_find(name);
    return b && (b->caps & DT_CAP_RAW_CAPTURE);
}

/* Whether the pattern has one of the conversions in which ("pr": %p or %r; not %%p). */
static int output_has(const char *pattern, const char *which)
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

static int parse_args(int argc, char **argv, record_opts *o)
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
    if (o->capture.on_demand != output_has(o->output, "w")) {
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
    if (strcmp(o->backend, "auto") != 0 && !dt_backend_find(o->backend)) {
        char names[256];
        dt_backend_names(names, sizeof names);
        fprintf(stderr, "devtrace record: unknown backend '%s'; choose one of: auto, %s (see 'devtrace list')\n",
                o->backend, names);
        return -1;
    }
    if (o->raw && strcmp(o->backend, "auto") != 0 && !backend_saves_raw(o->backend)) {
        say_raw_not_written(o->raw, o->backend, "would not be written", "; drop --raw or choose one of those");
        return -1;
    }
    return 0;
}

/* A backend named by --backend that cannot trace here: its reason (the one 'devtrace list'
 * prints) on stderr before the program runs, kept in why ("" when it can trace) for
 * say_untraced. */
static void forced_backend_reason(const char *name, const char *program, char *why, size_t cap)
{
    const dt_backend *b = strcmp(name, "auto") != 0 ? dt_backend_find(name) : NULL;
    why[0] = '\0';
    if (!b || !b->probe || b->probe(why, cap)) {
        why[0] = '\0';
        return;
    }
    fprintf(stderr, "devtrace record: backend %s cannot trace here, so %s runs untraced (see 'devtrace list'): %s\n",
            b->name, program, why);
}

/* No process of the tree started tracing: the trace says why, as the library records an
 * unavailable backend (backend none, 'unavailable' = "NAME: why") when the named backend
 * cannot trace here, else that the program made no call through a traced runtime. */
static void say_untraced(const record_opts *o, dt_session *s, const char *forced_why)
{
    if (forced_why[0]) {
        snprintf(s->unavailable_reason, sizeof s->unavailable_reason, "%s: %s", o->backend, forced_why);
        snprintf(s->backend_name, sizeof s->backend_name, "%s", dt_backend_unavailable.name);
        dt_backend_validation_text(&dt_backend_unavailable, s->validation, sizeof s->validation);
        dt_add_note(s, "the program ran untraced: backend %s cannot trace here (the reason is in 'unavailable')",
                    o->backend);
        return;
    }
    dt_add_note(s,
                "the program never started tracing: it made no call through a traced runtime "
                "(backend %s)%s, so the trace has no events",
                o->backend, o->no_children ? ", and --no-children left the programs it started untraced" : "");
    snprintf(s->backend_name, sizeof s->backend_name, "%s", o->backend);
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
};

static int check_env(void)
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

/* Expands %p (pid), %r (rank: NULL or "" is 0), %w (the capture window's index; kept as it
 * is when window < 0) and %% in the output pattern. */
static int expand_output(const char *pattern, pid_t pid, const char *rank, int window, char *out, size_t cap)
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

/* The output must be creatable before the program runs (the trace's, and the raw capture's):
 * its directory exists and is writable, and <path>.tmp, the name the file is first written
 * under, can be created there (then removed; one that is already there is left as it was).
 * access() alone is not enough: root may write everywhere, but not create a file in /proc. */
static int check_output_dir(const char *path, const char *what, const char *flag)
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
    char tmp[PATH_MAX + 8];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    int created = fd >= 0;
    if (fd < 0 && errno == EEXIST)
        fd = open(tmp, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "devtrace record: cannot write the %s to %s: creating %s failed (%s); choose another %s\n",
                what, path, tmp, strerror(errno), flag);
        return -1;
    }
    close(fd);
    if (created)
        unlink(tmp);
    return 0;
}

#ifndef DT_INSTALL_BIN_TO_LIB
#define DT_INSTALL_BIN_TO_LIB "../lib"
#endif

/* libdevtrace.so, the collector loaded into the program: $DEVTRACE_LIBRARY, else
 * libdevtrace.so.0 in the install's library folder seen from this executable's
 * (DT_INSTALL_BIN_TO_LIB: ../lib, or ../lib/<multiarch>), else in ../lib (the build tree). */
static int find_collector_library(char *out, size_t cap)
{
    const char *env = getenv("DEVTRACE_LIBRARY");
    if (env && *env) {
        snprintf(out, cap, "%s", env);
        return access(out, R_OK) == 0 ? 0 : -1;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    char *dir = dirname(exe);
    static const char *const lib_dirs[] = {DT_INSTALL_BIN_TO_LIB, "../lib"};
    for (size_t i = 0; i < sizeof lib_dirs / sizeof lib_dirs[0]; i++) {
        char resolved[PATH_MAX];
        snprintf(out, cap, "%s/%s/libdevtrace.so.0", dir, lib_dirs[i]);
        if (realpath(out, resolved)) {
            snprintf(out, cap, "%s", resolved);
            return 0;
        }
    }
    return -1;
}

static void prepend_env(const char *name, const char *value, char sep)
{
    const char *old = getenv(name);
    if (!old || !*old) {
        setenv(name, value, 1);
        return;
    }
    size_t n = strlen(old) + strlen(value) + 2;
    char *joined = malloc(n);
    if (!joined)
        return;
    snprintf(joined, n, "%s%c%s", value, sep, old);
    setenv(name, joined, 1);
    free(joined);
}

/* In the child, before exec: what the program needs to load the collector. */
/* Backends that start through their own injection hook (the OpenCL loader's layers,
 * the CUDA driver's CUDA_INJECTION64_PATH); the others are started by preloading. */
static int has_injection_hook(const char *backend)
{
    return !strcmp(backend, "opencl") || !strcmp(backend, "cupti");
}

/* For --backend auto: the first backend in the auto order that can trace on this
 * machine (probed here, in the recorder), when it needs the preload; NULL when that
 * backend starts through its own hook (or none can trace). The hooks of opencl and
 * cupti are set up in any case, so a program of either runtime still starts its
 * collector. */
static const char *auto_preload_backend(void)
{
    for (const dt_backend *const *b = dt_backends(); *b; b++) {
        char why[2048];
        if ((*b)->probe && (*b)->probe(why, sizeof why))
            return has_injection_hook((*b)->name) ? NULL : (*b)->name;
    }
    return NULL;
}

static void setup_child_env(const record_opts *o, const char *lib, const char *socket_path, const char *preload_backend)
{
    setenv("DEVTRACE_COLLECT_SOCKET", socket_path, 1);
    unsetenv("DEVTRACE_COLLECT_FD");
    unsetenv("DEVTRACE_COLLECT_PID");
    if (o->no_children) {
        char num[32];
        snprintf(num, sizeof num, "%ld", (long)getpid());
        setenv("DEVTRACE_COLLECT_PID", num, 1);
    }
    dt_capture_child_env(&o->capture);
    setenv("DEVTRACE_BACKEND", o->backend, 1);
    if (o->raw)
        setenv("DEVTRACE_RAW", o->raw, 1);
    setenv("DEVTRACE_COLLECT_LIBRARY", lib, 1); /* the collector: this file, no other copy */
    if (o->torch_python)
        dt_torch_setup_env(o->torch_python);
    int any = !strcmp(o->backend, "auto");
    if (any || !strcmp(o->backend, "opencl"))
        prepend_env("OPENCL_LAYERS", lib, ':');
    if (any || !strcmp(o->backend, "cupti"))
        setenv("CUDA_INJECTION64_PATH", lib, 1);
    if (!any && !has_injection_hook(o->backend))
        preload_backend = o->backend;
    if (preload_backend) {
        /* Vendors without an injection hook: preload the collector. */
        setenv("DEVTRACE_COLLECT_MODE", "preload", 1);
        setenv("DEVTRACE_COLLECT_PRELOAD", preload_backend, 1);
        prepend_env("LD_PRELOAD", lib, ':');
    }
#ifdef DT_HAVE_MSPTI
    /* MSPTI enables memcpy/memset (and its callbacks) only when libmspti.so itself is in
     * LD_PRELOAD (MSPTI_ERROR_WITHOUT_LD_PRELOAD otherwise): preload the very library the
     * backend will load (same search: $DEVTRACE_MSPTI_LIBRARY, $ASCEND_HOME_PATH, ...),
     * ahead of the collector. Not found: the session says it is unavailable, and why. */
    if (preload_backend && !strcmp(preload_backend, "mspti")) {
        char path[PATH_MAX], why[1024];
        if (dt_cf_locate_library(&dt_cf_mspti_descriptor, path, sizeof path, why, sizeof why) == 0)
            prepend_env("LD_PRELOAD", path, ':');
        else
            fprintf(stderr, "devtrace record: cannot preload libmspti.so: %s\n", why);
    }
#endif
}

typedef struct child_result {
    int status; /* from waitpid */
    int exec_errno;
} child_result;

static pid_t start_child(const record_opts *o, const char *lib, const char *preload_backend, const char *socket_path,
                         int err_fd_w, int err_fd_r)
{
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    close(err_fd_r);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    setup_child_env(o, lib, socket_path, preload_backend);
    execvp(o->argv[0], o->argv);
    int e = errno;
    ssize_t ignored = write(err_fd_w, &e, sizeof e);
    (void)ignored;
    _exit(DT_EXIT_CANNOT_RUN);
}

/* What the trace and the summary say about how the top program ended (each traced
 * process's own end: dt_tree_describe). top: its session, when it has one of its own. */
static int describe_end(const record_opts *o, dt_session *top, const child_result *res)
{
    int code = 0;
    if (WIFEXITED(res->status)) {
        code = WEXITSTATUS(res->status);
        if (code)
            fprintf(stderr, "devtrace: %s exited with status %d\n", o->argv[0], code);
    } else if (WIFSIGNALED(res->status)) {
        int sig = WTERMSIG(res->status);
        code = 128 + sig;
        fprintf(stderr, "devtrace: %s was killed by %s (%s)%s\n", o->argv[0], dt_record_signal_name(sig),
                strsignal(sig), WCOREDUMP(res->status) ? ", core dumped" : "");
        if (top)
            dt_add_note(top, "the program was killed by %s", dt_record_signal_name(sig));
    }
    return code;
}

/* The trace's path for one output: the pattern expanded with the process's pid and rank
 * (the recorder's $RANK for the tree's one file); a path another output took already gets
 * ".PID" before its extension. */
static void output_path(const record_opts *o, pid_t pid, const char *rank, char **taken, size_t ntaken, char *path,
                        size_t cap)
{
    expand_output(o->output, pid, rank, -1, path, cap);
    for (size_t i = 0; i < ntaken; i++)
        if (!strcmp(taken[i], path)) {
            char base[PATH_MAX];
            snprintf(base, sizeof base, "%s", path);
            char *ext = strstr(base, ".json");
            char tail[32] = "";
            if (ext) {
                snprintf(tail, sizeof tail, "%s", ext);
                *ext = '\0';
            }
            if (snprintf(path, cap, "%s.%ld%s", base, (long)pid, tail) >= (int)cap)
                path[cap - 1] = '\0';
            fprintf(stderr, "devtrace record: two processes would write %s; process %ld writes %s\n", taken[i],
                    (long)pid, path);
            return;
        }
}

/* Writes one trace and its summary; 0 or -1 (said on stderr). */
static int write_output(const record_opts *o, dt_session *s, const char *path)
{
    devtrace_error err;
    if (devtrace_write_trace(s, path, &err) != 0) {
        fprintf(stderr, "devtrace record: %s\n", err.message);
        return -1;
    }
    if (!o->quiet) {
        dt_summary_print(s, stderr, (size_t)o->top);
        fprintf(stderr, "trace: %s\n", path);
    }
    return 0;
}

/* --on-demand: where each window's trace goes (record_windows.h's dt_window_write_fn). */
typedef struct window_writer {
    const record_opts *o;
    pid_t top; /* the program's pid, for the tree's one file */
} window_writer;

static int write_window(void *user, dt_session *s, uint32_t pid, int window, const char *requested_path, char *path,
                        size_t cap)
{
    window_writer *ww = user;
    char rank[16];
    snprintf(rank, sizeof rank, "%d", s->rank);
    if (requested_path && *requested_path)
        snprintf(path, cap, "%s", requested_path);
    else if (expand_output(ww->o->output, pid ? (pid_t)pid : ww->top, pid ? rank : getenv("RANK"), window, path, cap) !=
             0)
        return -1;
    return write_output(ww->o, s, path);
}

int dt_cmd_record(int argc, char **argv)
{
    record_opts o;
    if (parse_args(argc, argv, &o) != 0 || check_env() != 0)
        return DT_EXIT_USAGE;
    const char *own_rank = getenv("RANK");
    char probe_path[PATH_MAX];
    if (expand_output(o.output, getpid(), own_rank, 0, probe_path, sizeof probe_path) != 0) {
        fprintf(stderr,
                "devtrace record: the trace path from -o '%.100s...' is longer than %d bytes; choose a shorter one\n",
                o.output, PATH_MAX - 1);
        return DT_EXIT_USAGE;
    }
    if (check_output_dir(probe_path, "trace", "-o") != 0 ||
        (o.raw && check_output_dir(o.raw, "raw capture", "--raw") != 0))
        return DT_EXIT_USAGE;
    char lib[PATH_MAX];
    if (find_collector_library(lib, sizeof lib) != 0) {
        fprintf(stderr, "devtrace record: cannot find libdevtrace.so.0 next to this program (" DT_INSTALL_BIN_TO_LIB
                        "/ or ../lib/); set DEVTRACE_LIBRARY to its path\n");
        return DT_EXIT_FAILURE;
    }
    char torch_python[PATH_MAX];
    if (o.torch_python) {
        if (dt_torch_python_dir(torch_python, sizeof torch_python) != 0)
            return DT_EXIT_FAILURE;
        o.torch_python = torch_python;
    }
    int per_process = o.output_given && output_has(o.output, "pr");
    dt_tree tree;
    char why[PATH_MAX + 200];
    int errp[2];
    if (dt_tree_open(&tree, o.backend, per_process, why, sizeof why) != 0 || pipe2(errp, O_CLOEXEC) != 0) {
        fprintf(stderr, "devtrace record: cannot set up: %s\n", tree.listen_fd >= 0 ? strerror(errno) : why);
        dt_tree_close(&tree);
        return DT_EXIT_FAILURE;
    }
    window_writer ww = {&o, 0};
    dt_windows windows = {.listen_fd = -1, .client_fd = -1};
    if (o.capture.on_demand && (dt_tree_set_windowed(&tree) != 0 ||
                                dt_windows_open(&windows, &tree, write_window, &ww, why, sizeof why) != 0)) {
        fprintf(stderr, "devtrace record: cannot set up the capture control: %s\n", why);
        dt_windows_close(&windows);
        dt_tree_close(&tree);
        return DT_EXIT_FAILURE;
    }
    char forced_why[2048];
    forced_backend_reason(o.backend, o.argv[0], forced_why, sizeof forced_why);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = forward_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);

    const char *preload_backend = strcmp(o.backend, "auto") == 0 ? auto_preload_backend() : NULL;
    uint64_t program_start_ns = dt_realtime_ns();
    pid_t pid = start_child(&o, lib, preload_backend, tree.socket_path, errp[1], errp[0]);
    close(errp[1]);
    if (pid < 0) {
        fprintf(stderr, "devtrace record: cannot start %s: %s\n", o.argv[0], strerror(errno));
        dt_tree_close(&tree);
        return DT_EXIT_FAILURE;
    }
    child_pid = pid;
    ww.top = pid;
    child_result res = {0, 0};
    if (read(errp[0], &res.exec_errno, sizeof res.exec_errno) == (ssize_t)sizeof res.exec_errno) {
        waitpid(pid, NULL, 0);
        fprintf(stderr, "devtrace record: cannot run '%s': %s%s\n", o.argv[0], strerror(res.exec_errno),
                res.exec_errno == ENOENT ? " (check the name and $PATH)" : "");
        dt_tree_close(&tree);
        return DT_EXIT_CANNOT_RUN;
    }
    close(errp[0]);

    dt_tree_receive(&tree, pid, &res.status);
    int none_traced = dt_tree_describe(&tree);
    if (o.capture.on_demand) {
        dt_windows_finish(&windows);
        int code = describe_end(&o, NULL, &res);
        if (!windows.index)
            fprintf(stderr,
                    "devtrace record: no capture window was opened ('devtrace capture %ld' opens one): no trace "
                    "written\n",
                    (long)pid);
        else if (!o.quiet)
            fprintf(stderr, "devtrace record: %d capture window%s, %d trace%s written\n", windows.index,
                    windows.index == 1 ? "" : "s", windows.written, windows.written == 1 ? "" : "s");
        int failed = windows.failed;
        dt_windows_close(&windows);
        dt_tree_close(&tree);
        return code ? code : failed ? DT_EXIT_FAILURE : 0;
    }
    /* The trace of the top program: the tree's one file, else its own if it was traced, else
     * (no process traced) a file that says so: never no trace at all. */
    size_t outputs = dt_tree_outputs(&tree);
    dt_session *top = NULL, *untraced = NULL;
    for (size_t i = 0; i < outputs && !top; i++) {
        uint32_t out_pid;
        dt_session *s = dt_tree_output(&tree, i, &out_pid);
        if (!per_process || out_pid == (uint32_t)pid)
            top = s;
    }
    if (!outputs) {
        devtrace_error err;
        if (!(untraced = dt_session_new_offline(o.backend, "", NULL, &err))) {
            fprintf(stderr, "devtrace record: %s\n", err.message);
            dt_tree_close(&tree);
            return DT_EXIT_FAILURE;
        }
        top = untraced;
    }
    if (none_traced)
        say_untraced(&o, top, forced_why);
    int code = describe_end(&o, top, &res);
    if (o.raw && none_traced)
        fprintf(stderr, "devtrace record: --raw %s was not written: the program never started tracing\n", o.raw);
    else if (o.raw && !backend_saves_raw(top->backend_name))
        say_raw_not_written(o.raw, top->backend_name, "was not written", "");

    int failed = 0;
    char **taken = calloc(outputs + 1, sizeof *taken);
    for (size_t i = 0; i < (outputs ? outputs : 1); i++) {
        uint32_t out_pid = 0;
        dt_session *s = outputs ? dt_tree_output(&tree, i, &out_pid) : untraced;
        dt_capture_apply(&o.capture, s, program_start_ns);
        char path[PATH_MAX], rank[16];
        snprintf(rank, sizeof rank, "%d", s->rank);
        int own = per_process && outputs; /* this process's pid and rank, else the top's and $RANK */
        output_path(&o, own ? (pid_t)out_pid : pid, own ? rank : own_rank, taken, taken ? i : 0, path, sizeof path);
        if (write_output(&o, s, path) != 0)
            failed = 1;
        if (taken)
            taken[i] = strdup(path);
    }
    for (size_t i = 0; taken && i < outputs + 1; i++)
        free(taken[i]);
    free(taken);
    devtrace_close(untraced);
    dt_tree_close(&tree);
    return code ? code : failed ? DT_EXIT_FAILURE : 0;
}
