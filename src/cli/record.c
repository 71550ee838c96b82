/* record.c: devtrace record: runs a program with the collector set up, receives the
 * events it and the programs it starts ship (record_tree.c), and writes the trace when
 * the program ends (also on SIGINT/SIGTERM to the recorder, which are passed on to the
 * program). Exits as the program did. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "core/core.h"
#include "devtrace.h"
#include "record_capture.h"
#include "record_options.h"
#include "record_spill.h"
#include "record_tree.h"
#include "record_windows.h"
#include "report/report.h"
#include "sinks/sinks.h"

static volatile sig_atomic_t pending_signal;
static volatile pid_t child_pid;

static void forward_signal(int sig)
{
    pending_signal = sig;
    if (child_pid > 0)
        kill(child_pid, sig);
}

/* A backend named by --backend that cannot trace here: its reason (the one 'devtrace list'
 * prints) on stderr before the program runs, kept in why ("" when it can trace) for
 * say_untraced. */
static void forced_backend_reason(const char *name, const char *program, char *why, size_t cap)
{
    why[0] = '\0';
    if (!strcmp(name, "auto") || devtrace_backend_probe(name, why, cap) != 0) {
        why[0] = '\0';
        return;
    }
    fprintf(stderr, "devtrace record: backend %s cannot trace here, so %s runs untraced (see 'devtrace list'): %s\n",
            name, program, why);
}

/* No process of the tree started tracing: the trace says why, as the library records an
 * unavailable backend (backend none, 'unavailable' = "NAME: why") when the named backend
 * cannot trace here, else that the program made no call through a traced runtime. */
static void say_untraced(const dt_record_opts *o, dt_session *s, const char *forced_why)
{
    /* The rank and world size the process would have had ($RANK, $WORLD_SIZE: checked
     * before the run), as the trace's name has them. */
    const char *rank = getenv("RANK"), *world = getenv("WORLD_SIZE");
    if (rank && *rank)
        s->rank = atoi(rank);
    if (world && *world)
        s->world_size = atoi(world);
    if (forced_why[0]) {
        snprintf(s->unavailable_reason, sizeof s->unavailable_reason, "%s: %s", o->backend, forced_why);
        devtrace_backend_info none = {.size = sizeof none};
        if (devtrace_backend_find("none", &none) == 0) { /* the backend of last resort, always there */
            snprintf(s->backend_name, sizeof s->backend_name, "%s", none.name);
            snprintf(s->validation, sizeof s->validation, "%s", none.validation);
        }
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

/* The backend's own hook, from its descriptor: the runtime's injection variable set to the
 * collector, or the collector put first in the loader's layer list. 0 for a backend that is
 * loaded by preloading the collector. */
static int set_up_hook(const devtrace_backend_info *b, const char *lib)
{
    if (!b->load_variable)
        return 0;
    if (b->load_method == DEVTRACE_LOAD_INJECTION)
        setenv(b->load_variable, lib, 1);
    else if (b->load_method == DEVTRACE_LOAD_LAYER)
        prepend_env(b->load_variable, lib, ':');
    return b->load_method == DEVTRACE_LOAD_INJECTION || b->load_method == DEVTRACE_LOAD_LAYER;
}

/* For --backend auto: the first backend in the auto order that can trace on this
 * machine (probed here, in the recorder), when it is loaded by preloading; NULL when it
 * is loaded through its runtime's own hook (or none can trace). Every backend's hook is
 * set up in any case, so a program of any of those runtimes still starts its collector. */
static const char *auto_preload_backend(void)
{
    for (int i = 0; i < devtrace_backend_count(); i++) {
        devtrace_backend_info b = {.size = sizeof b};
        char why[2048];
        if (devtrace_backend_get(i, &b) == 0 && devtrace_backend_probe(b.name, why, sizeof why) == 1)
            return b.load_method == DEVTRACE_LOAD_PRELOAD ? b.name : NULL;
    }
    return NULL;
}

/* A backend whose vendor library must itself be in LD_PRELOAD (its descriptor's
 * preload_library): the very file the backend will load (its own search), ahead of the
 * collector. Not found: one line here, and the session says it is unavailable, and why. */
static void preload_vendor_library(const char *backend)
{
    devtrace_backend_info b = {.size = sizeof b};
    if (devtrace_backend_find(backend, &b) != 0 || !b.preload_library)
        return;
    char path[PATH_MAX];
    devtrace_error err;
    if (devtrace_backend_locate_library(backend, path, sizeof path, &err) == 0)
        prepend_env("LD_PRELOAD", path, ':');
    else
        fprintf(stderr, "devtrace record: cannot preload %s: %s\n", b.preload_library, err.message);
}

/* In the child, before exec: what the program needs to load the collector. */
static void setup_child_env(const dt_record_opts *o, const char *lib, const char *socket_path,
                            const char *preload_backend)
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
    devtrace_backend_info b = {.size = sizeof b};
    if (!strcmp(o->backend, "auto")) {
        for (int i = 0; i < devtrace_backend_count(); i++)
            if (devtrace_backend_get(i, &b) == 0)
                set_up_hook(&b, lib);
    } else if (devtrace_backend_find(o->backend, &b) == 0 && !set_up_hook(&b, lib)) {
        preload_backend = o->backend;
    }
    if (preload_backend) {
        /* Backends without a hook of their runtime's: preload the collector. */
        setenv("DEVTRACE_COLLECT_MODE", "preload", 1);
        setenv("DEVTRACE_COLLECT_PRELOAD", preload_backend, 1);
        prepend_env("LD_PRELOAD", lib, ':');
        preload_vendor_library(preload_backend);
    }
}

typedef struct child_result {
    int status; /* from waitpid */
    int exec_errno;
} child_result;

static pid_t start_child(const dt_record_opts *o, const char *lib, const char *preload_backend, const char *socket_path,
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
static int describe_end(const dt_record_opts *o, dt_session *top, const child_result *res)
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

/* Writes one trace and its summary; 0 or -1 (said on stderr). */
static int write_output(const dt_record_opts *o, dt_session *s, const char *path)
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
    const dt_record_opts *o;
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
    else if (dt_record_expand_output(ww->o->output, pid ? (pid_t)pid : ww->top, pid ? rank : getenv("RANK"), window,
                                     path, cap) != 0)
        return -1;
    return write_output(ww->o, s, path);
}

/* DEVTRACE_RECORDER_STATS=1: the recorder's memory at a point of its run, from
 * /proc/self/status (VmHWM: its peak resident memory so far; RssAnon: its anonymous
 * memory now, the events it holds among it), one line on stderr. */
static void print_recorder_memory(const char *when)
{
    const char *on = getenv("DEVTRACE_RECORDER_STATS");
    if (!on || strcmp(on, "1") != 0)
        return;
    FILE *f = fopen("/proc/self/status", "re");
    char line[256];
    long hwm = -1, anon = -1, file = -1;
    while (f && fgets(line, sizeof line, f)) {
        sscanf(line, "VmHWM: %ld", &hwm);
        sscanf(line, "RssAnon: %ld", &anon);
        sscanf(line, "RssFile: %ld", &file);
    }
    if (f)
        fclose(f);
    fprintf(stderr, "devtrace record: memory %s: VmHWM %ld kB, RssAnon %ld kB, RssFile %ld kB\n", when, hwm, anon,
            file);
}

/* The spill for the run (record_spill.h), beside the trace probe_path names; -1 (said)
 * when it cannot be made. */
static int open_spill(const dt_record_opts *o, const char *probe_path, int per_process, dt_spill *sp)
{
    dt_spill_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, DT_SPILL_MAGIC, sizeof h.magic);
    h.version = DT_SPILL_VERSION;
    h.wire_version = DT_WIRE_VERSION;
    h.event_size = (uint32_t)sizeof(devtrace_event);
    h.flags = (per_process ? DT_SPILL_PER_PROCESS : 0) | (o->capture.has_delay ? DT_SPILL_HAS_DELAY : 0) |
              (o->capture.has_duration ? DT_SPILL_HAS_DURATION : 0);
    h.delay_ns = o->capture.delay_ns;
    h.duration_ns = o->capture.duration_ns;
    snprintf(h.backend, sizeof h.backend, "%s", o->backend);
    char why[PATH_MAX + 200];
    if (dt_spill_create(sp, probe_path, &h, why, sizeof why) != 0) {
        fprintf(stderr, "devtrace record: %s (DEVTRACE_RECORD_SPILL=0 keeps the events in memory instead)\n", why);
        return -1;
    }
    return 0;
}

/* The program's start, in the spill's header (for 'devtrace convert' of a kept spill). */
static void spill_set_start(dt_spill *sp, uint64_t program_start_ns)
{
    ssize_t w = pwrite(sp->fd, &program_start_ns, sizeof program_start_ns, offsetof(dt_spill_header, program_start_ns));
    (void)w; /* a header that says 0: convert applies no --delay/--duration window */
}

int dt_cmd_record(int argc, char **argv)
{
    dt_record_opts o;
    if (dt_record_parse_options(argc, argv, &o) != 0 || dt_record_check_env() != 0)
        return DT_EXIT_USAGE;
    const char *own_rank = getenv("RANK");
    char probe_path[PATH_MAX];
    if (dt_record_expand_output(o.output, getpid(), own_rank, 0, probe_path, sizeof probe_path) != 0) {
        fprintf(stderr,
                "devtrace record: the trace path from -o '%.100s...' is longer than %d bytes; choose a shorter one\n",
                o.output, PATH_MAX - 1);
        return DT_EXIT_USAGE;
    }
    if (dt_record_check_output_dir(probe_path, "trace", "-o", 0) != 0 ||
        (o.raw && dt_record_check_output_dir(o.raw, "raw capture", "--raw", 1) != 0))
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
    int per_process = o.output_given && dt_record_output_has(o.output, "pr");
    dt_tree tree;
    char why[PATH_MAX + 200];
    int errp[2];
    if (dt_tree_open(&tree, o.backend, per_process, why, sizeof why) != 0 || pipe2(errp, O_CLOEXEC) != 0) {
        fprintf(stderr, "devtrace record: cannot set up: %s\n", tree.listen_fd >= 0 ? strerror(errno) : why);
        dt_tree_close(&tree);
        return DT_EXIT_FAILURE;
    }
    const char *spill_env = getenv("DEVTRACE_RECORD_SPILL");
    dt_spill spill = {.fd = -1};
    if (!o.capture.on_demand && !(spill_env && !strcmp(spill_env, "0"))) {
        if (open_spill(&o, probe_path, per_process, &spill) != 0) {
            dt_tree_close(&tree);
            return DT_EXIT_FAILURE;
        }
        tree.spill = &spill;
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
        dt_spill_close(&spill, 1);
        dt_tree_close(&tree);
        return DT_EXIT_FAILURE;
    }
    if (tree.spill)
        spill_set_start(&spill, program_start_ns);
    child_pid = pid;
    ww.top = pid;
    child_result res = {0, 0};
    if (read(errp[0], &res.exec_errno, sizeof res.exec_errno) == (ssize_t)sizeof res.exec_errno) {
        waitpid(pid, NULL, 0);
        fprintf(stderr, "devtrace record: cannot run '%s': %s%s\n", o.argv[0], strerror(res.exec_errno),
                res.exec_errno == ENOENT ? " (check the name and $PATH)" : "");
        dt_spill_close(&spill, 1);
        dt_tree_close(&tree);
        return DT_EXIT_CANNOT_RUN;
    }
    close(errp[0]);

    dt_tree_receive(&tree, pid, &res.status);
    print_recorder_memory("at the program's end");
    uint64_t build_start = dt_realtime_ns();
    int built = dt_tree_build(&tree, why, sizeof why);
    uint64_t build_done = dt_realtime_ns();
    print_recorder_memory("with the sessions built");
    if (built != 0) {
        fprintf(stderr,
                "devtrace record: %s; the events are kept in %s: 'devtrace convert %s OUT.json' writes the trace "
                "from it\n",
                why, spill.path, spill.path);
        dt_spill_close(&spill, 0);
        dt_tree_close(&tree);
        return DT_EXIT_FAILURE;
    }
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
            dt_spill_close(&spill, 1); /* no process sent anything */
            dt_tree_close(&tree);
            return DT_EXIT_FAILURE;
        }
        top = untraced;
    }
    if (none_traced && top) /* top is NULL only when per-process outputs left out the top's own */
        say_untraced(&o, top, forced_why);
    int code = describe_end(&o, top, &res);
    if (o.raw && none_traced)
        fprintf(stderr, "devtrace record: --raw %s was not written: the program never started tracing\n", o.raw);
    else if (o.raw) {
        /* The backend that traced: the top program's, else (its own trace left out of the
         * per-process outputs: it never traced) the first traced process's. */
        uint32_t first_pid;
        const dt_session *traced = top ? top : dt_tree_output(&tree, 0, &first_pid);
        if (traced && !dt_record_backend_saves_raw(traced->backend_name))
            dt_record_say_raw_not_written(o.raw, traced->backend_name, "was not written", "");
    }

    int failed = 0;
    char **taken = calloc(outputs + 1, sizeof *taken);
    for (size_t i = 0; i < (outputs ? outputs : 1); i++) {
        uint32_t out_pid = 0;
        dt_session *s = outputs ? dt_tree_output(&tree, i, &out_pid) : untraced;
        dt_capture_apply(&o.capture, s, program_start_ns);
        char path[PATH_MAX], rank[16];
        snprintf(rank, sizeof rank, "%d", s->rank);
        int own = per_process && outputs; /* this process's pid and rank, else the top's and $RANK */
        dt_record_output_path("devtrace record", o.output, own ? (pid_t)out_pid : pid, own ? rank : own_rank, taken,
                              taken ? i : 0, path, sizeof path);
        if (write_output(&o, s, path) != 0)
            failed = 1;
        if (taken)
            taken[i] = strdup(path);
    }
    for (size_t i = 0; taken && i < outputs + 1; i++)
        free(taken[i]);
    free(taken);
    print_recorder_memory("after writing");
    dt_filemem_trimmer_stop();
    const char *stats_env = getenv("DEVTRACE_RECORDER_STATS");
    if (stats_env && !strcmp(stats_env, "1"))
        fprintf(stderr,
                "devtrace record: end of run: %.3f s from the program's end to the trace written (%.3f s of it "
                "building the sessions); spill %llu bytes in %llu records; file memory trimmed %llu times\n",
                (double)(dt_realtime_ns() - build_start) / 1e9, (double)(build_done - build_start) / 1e9,
                (unsigned long long)spill.file_bytes, (unsigned long long)spill.records,
                (unsigned long long)dt_filemem_trims());
    /* A trace not written: the spill is kept when it holds the whole run (not when its own
     * write failed: the rest was in memory). */
    int keep = failed && spill.fd >= 0 && !spill.write_errno;
    if (keep)
        fprintf(stderr,
                "devtrace record: the events are kept in %s: 'devtrace convert %s OUT.json' writes the trace "
                "from it\n",
                spill.path, spill.path);
    else if (!failed && spill.write_errno && !o.quiet)
        fprintf(stderr,
                "devtrace record: the spill file %s could not be written (%s): what arrived after that was "
                "kept in memory\n",
                spill.path, strerror(spill.write_errno));
    dt_spill_close(&spill, !keep);
    devtrace_close(untraced);
    dt_tree_close(&tree);
    return code ? code : failed ? DT_EXIT_FAILURE : 0;
}
