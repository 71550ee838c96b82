/* bench_torch.c: the PyTorch figures.
 *
 * End to end: torch_ops.py runs one of two workloads on one thread, timing its own loop (the
 * thread's CPU time: these machines are shared, and wall time there mostly measures the
 * neighbours): N torch.add calls on 1-element tensors, or N/1000 realistic training steps
 * (685 ops each). Each in five modes, in interleaved rounds (the order rotates), medians:
 * plain, under `devtrace record --torch`, inside torch.profiler.profile(activities=[CPU]),
 * inside devtrace.torch.profile (none backend), and the callback alone (devtrace's
 * RecordFunction callback forwarding to functions that do nothing: torch's part). The figure
 * is what devtrace record adds divided by what torch.profiler adds (target: at most 0.5). A
 * devtrace run counts only when its trace holds every op.
 *
 * devtrace's own part: devtrace_op_enter + devtrace_op_exit per op, called through the
 * shared library's addresses as the observer calls them, on an OpenCL session; and what one
 * CLOCK_REALTIME read costs (an op takes two where the TSC is not used). */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "devtrace.h"

#ifndef DT_BENCH_TORCH_PROGRAM
#define DT_BENCH_TORCH_PROGRAM ""
#endif
#ifndef DT_BENCH_PYTHON_DIR
#define DT_BENCH_PYTHON_DIR ""
#endif

enum { MODE_PLAIN, MODE_DEVTRACE, MODE_PROFILER, MODE_PROFILE, MODE_CALLBACK, NMODES };
static const char *const mode_names[NMODES] = {"plain", "devtrace record --torch", "torch.profiler",
                                               "devtrace.torch.profile", "the callback alone"};
static const char *const mode_args[NMODES] = {"plain", "plain", "profiler", "devtrace", "callback"};

/* An interpreter that imports torch: /usr/bin/python3 (Debian's python3-torch), else the
 * python3 on PATH. */
static const char *torch_python(const char *errpath)
{
    static const char *const candidates[] = {"/usr/bin/python3", "python3"};
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        char *argv[] = {(char *)candidates[i], "-c", "import torch", NULL};
        char out[256], err[256];
        if (bench_run_program(argv, 0, errpath, out, sizeof out, err, sizeof err) == 0)
            return candidates[i];
    }
    return NULL;
}

#ifdef DT_BENCH_SHARED_LIB
/* ns per op of devtrace's op path (enter + exit), the median of reps sessions of n ops. */
static double op_path_ns(uint32_t n, int reps, char *why, size_t whylen)
{
    void *h = dlopen(DT_BENCH_SHARED_LIB, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(why, whylen, "cannot load %s: %s", DT_BENCH_SHARED_LIB, dlerror());
        return NAN;
    }
    struct {
        void (*config_init)(devtrace_config *);
        devtrace_session *(*open)(const devtrace_config *, devtrace_error *);
        int (*start)(devtrace_session *), (*stop)(devtrace_session *), (*set_default)(devtrace_session *);
        void (*close)(devtrace_session *);
        int (*enter)(const char *, uint64_t, int64_t, uint64_t), (*exit_)(uint64_t);
    } f;
    const char *const names[] = {
        "devtrace_config_init",         "devtrace_open",  "devtrace_start",    "devtrace_stop",
        "devtrace_set_default_session", "devtrace_close", "devtrace_op_enter", "devtrace_op_exit"};
    void **slots[] = {(void **)&f.config_init, (void **)&f.open,  (void **)&f.start, (void **)&f.stop,
                      (void **)&f.set_default, (void **)&f.close, (void **)&f.enter, (void **)&f.exit_};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *sym = dlsym(h, names[i]);
        if (!sym) {
            snprintf(why, whylen, "%s has no %s", DT_BENCH_SHARED_LIB, names[i]);
            return NAN;
        }
        memcpy(slots[i], &sym, sizeof sym);
    }
    double *per_op = calloc((size_t)reps, sizeof *per_op);
    static const char op[] = "aten::add";
    for (int r = 0; r < reps; r++) {
        devtrace_config cfg;
        f.config_init(&cfg);
        cfg.backend = "opencl";
        devtrace_error err;
        devtrace_session *s = f.open(&cfg, &err);
        if (!s || f.start(s) != 0 || f.set_default(s) != 0) {
            snprintf(why, whylen, "cannot start an opencl session: %.400s", s ? "start failed" : err.message);
            f.close(s);
            free(per_op);
            return NAN;
        }
        f.enter(op, 0, -1, 0), f.exit_(0); /* the thread's first op: its name and place */
        uint64_t t0 = bench_thread_cpu_ns();
        for (uint32_t i = 1; i <= n; i++) {
            f.enter(op, i, (int64_t)i, 0);
            f.exit_(i);
        }
        per_op[r] = (double)(bench_thread_cpu_ns() - t0) / n;
        f.set_default(NULL);
        f.stop(s);
        f.close(s);
    }
    double m = bench_median(per_op, reps);
    free(per_op);
    return m;
}
#endif

static void side_by_side(const bench_sizes *sz, const bench_paths *paths, const char *py, const char *errpath,
                         int step);

void bench_torch(const bench_sizes *sz, const bench_paths *paths)
{
#ifdef DT_BENCH_SHARED_LIB
    char why[512] = "";
    double own = op_path_ns(sz->torch_ops * 2, sz->reps, why, sizeof why);
    if (isfinite(own))
        bench_report("torch.devtrace_op_path_ns", own, "ns", BENCH_INFO, 0,
                     "devtrace_op_enter + devtrace_op_exit per op on an OpenCL session, thread CPU time");
    else
        bench_unmeasurable("torch.devtrace_op_path_ns", "ns", BENCH_INFO, 0, "%s", why);
#endif
    /* Of which the two timestamps, where the session stamps with CLOCK_REALTIME (no usable TSC). */
    uint64_t t0 = bench_thread_cpu_ns();
    struct timespec ts;
    for (uint32_t i = 0; i < sz->torch_ops * 2; i++)
        clock_gettime(CLOCK_REALTIME, &ts);
    bench_report("torch.clock_read_ns", (double)(bench_thread_cpu_ns() - t0) / (sz->torch_ops * 2.0), "ns", BENCH_INFO,
                 0, "one clock_gettime(CLOCK_REALTIME): an op takes two where the TSC is not used");
    if (!paths->cli[0] || access(paths->cli, X_OK) != 0 || access(DT_BENCH_TORCH_PROGRAM, R_OK) != 0) {
        bench_unmeasurable("torch.devtrace_vs_profiler_added", "ratio", BENCH_AT_MOST, 0.5,
                           "the devtrace command or bench/torch_ops.py is missing");
        return;
    }
    char errpath[4096];
    snprintf(errpath, sizeof errpath, "%s/torch.err", paths->tmpdir);
    const char *py = torch_python(errpath);
    if (!py) {
        bench_unmeasurable("torch.devtrace_vs_profiler_added", "ratio", BENCH_AT_MOST, 0.5,
                           "no interpreter imports torch (/usr/bin/python3, python3); install python3-torch");
        return;
    }
    /* The in-process modes: the source tree's package on this build's library. */
    setenv("PYTHONPATH", DT_BENCH_PYTHON_DIR, 1);
#ifdef DT_BENCH_SHARED_LIB
    setenv("DEVTRACE_LIBRARY", DT_BENCH_SHARED_LIB, 1);
#endif
    side_by_side(sz, paths, py, errpath, 0);
    side_by_side(sz, paths, py, errpath, 1);
    unlink(errpath);
}

/* One workload (tiny ops, or realistic steps) in every mode, interleaved rounds (the order
 * rotates), medians of the thread's CPU time per op or per step. */
static void side_by_side(const bench_sizes *sz, const bench_paths *paths, const char *py, const char *errpath, int step)
{
    const char *fig = step ? "torch.step.devtrace_vs_profiler_added" : "torch.devtrace_vs_profiler_added";
    const char *prefix = step ? "torch.step." : "torch.";
    const char *unit = step ? "step" : "op";
    unsigned n = step ? (sz->torch_ops / 1000 ? sz->torch_ops / 1000 : 1) : sz->torch_ops;
    char trace[4096], count[32];
    snprintf(trace, sizeof trace, "%s/torch.json", paths->tmpdir);
    snprintf(count, sizeof count, "%u", n);
    char *workload = step ? "step" : "add";
    char *argv[NMODES][14];
    for (int m = 0; m < NMODES; m++) {
        char **a = argv[m];
        int k = 0;
        if (m == MODE_DEVTRACE) {
            char *const head[] = {(char *)paths->cli, "record", "--torch", "-q", "-o", trace, "--"};
            for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
                a[k++] = head[i];
        }
        a[k++] = (char *)py;
        a[k++] = DT_BENCH_TORCH_PROGRAM;
        a[k++] = (char *)mode_args[m];
        a[k++] = count;
        a[k++] = workload;
        a[k] = NULL;
    }
    int rounds = sz->e2e_pairs < 3 ? sz->e2e_pairs : sz->e2e_pairs + 2;
    double *ns[NMODES];
    for (int m = 0; m < NMODES; m++)
        ns[m] = calloc((size_t)rounds, sizeof(double));
    long recorded = 0, per_step = 0;
    const char *key = step ? "ns_per_step " : "ns_per_op ";
    /* Round -1 is a warm-up (the observer's first build, file caches), not counted. */
    for (int r = -1; r < rounds; r++) {
        for (int k = 0; k < NMODES; k++) {
            int m = (k + (r < 0 ? 0 : r)) % NMODES;
            char out[512], err[256];
            unlink(trace);
            int rc = bench_run_program(argv[m], 1, errpath, out, sizeof out, err, sizeof err);
            const char *line = strstr(out, key);
            if (rc != 0 || !line) {
                bench_unmeasurable(fig, "ratio", BENCH_AT_MOST, 0.5, "the %s run failed: %s", mode_names[m],
                                   err[0] ? err : "no result line");
                goto end;
            }
            const char *ops_line = strstr(out, "ops_per_step ");
            if (ops_line)
                per_step = strtol(ops_line + 13, NULL, 10);
            if (m == MODE_DEVTRACE) {
                /* Every op in the trace, or the run does not count. */
                long want = step ? per_step * (long)n : (long)n;
                recorded = bench_count_lines(trace, step ? "\"cat\": \"cpu_op\""
                                                         : "\"cat\": \"cpu_op\", \"name\": \"aten::add\"");
                if (recorded < want) {
                    bench_unmeasurable(fig, "ratio", BENCH_AT_MOST, 0.5,
                                       "the devtrace run's trace holds %ld cpu_ops, fewer than the %ld ops run",
                                       recorded, want);
                    goto end;
                }
            }
            if (r >= 0)
                ns[m][r] = strtod(line + strlen(key), NULL);
        }
    }
    double med[NMODES];
    for (int m = 0; m < NMODES; m++)
        med[m] = bench_median(ns[m], rounds);
    double added[NMODES];
    for (int m = 0; m < NMODES; m++)
        added[m] = med[m] - med[MODE_PLAIN];
    char note[320];
    if (step)
        snprintf(note, sizeof note,
                 "%u training steps of %ld ops, %s; %d interleaved rounds, medians: plain %.0f us/step, devtrace "
                 "record --torch adds %.0f us/step, torch.profiler %.0f",
                 n, per_step, py, rounds, med[MODE_PLAIN] / 1e3, added[MODE_DEVTRACE] / 1e3,
                 added[MODE_PROFILER] / 1e3);
    else
        snprintf(note, sizeof note,
                 "%u torch.add on 1-element tensors, one thread, %s; %d interleaved rounds, medians: devtrace adds "
                 "%.0f ns/op, torch.profiler %.0f ns/op; %ld aten::add cpu_ops in the trace",
                 n, py, rounds, added[MODE_DEVTRACE], added[MODE_PROFILER], recorded);
    if (added[MODE_PROFILER] > 0) {
        bench_report(fig, added[MODE_DEVTRACE] / added[MODE_PROFILER], "ratio", BENCH_AT_MOST, 0.5, note);
        char name[96];
        snprintf(name, sizeof name, "%sprofile_vs_profiler_added", prefix);
        bench_report(name, added[MODE_PROFILE] / added[MODE_PROFILER], "ratio", BENCH_AT_MOST, 0.5,
                     "devtrace.torch.profile (none backend: the ops alone) in the same rounds");
    } else {
        bench_unmeasurable(fig, "ratio", BENCH_AT_MOST, 0.5, "torch.profiler added nothing measurable (%.0f ns/%s)",
                           added[MODE_PROFILER], unit);
    }
    static const char *const figure_names[NMODES] = {"plain_ns_per_", "devtrace_added_ns_per_",
                                                     "profiler_added_ns_per_", "profile_added_ns_per_",
                                                     "callback_added_ns_per_"};
    for (int m = 0; m < NMODES; m++) {
        char name[96];
        snprintf(name, sizeof name, "%s%s%s", prefix, figure_names[m], unit);
        bench_report(name, m == MODE_PLAIN ? med[m] : added[m], "ns", BENCH_INFO, 0,
                     m == MODE_CALLBACK ? "torch's RecordFunction and devtrace's callback, forwarding to functions "
                                          "that do nothing"
                                        : NULL);
    }
end:
    unlink(trace);
    for (int m = 0; m < NMODES; m++)
        free(ns[m]);
}
