/* bench_torch.c: the PyTorch figures.
 *
 * torch_ops.py runs one of two workloads on one thread (N torch.add calls on 1-element
 * tensors, or training steps of a small model: 685 ops a step), in interleaved blocks of
 * several modes inside one process, timed in the thread's CPU time: a whole process here may
 * run 1.5x slower than the next one (the machine is shared), so modes are compared inside
 * one process, where they see the same machine, and the figure is the median over
 * processes of each process's own ratio. Two kinds of process, alternating:
 *  - a plain one: plain, the floor (a RecordFunction callback that returns at once: torch's
 *    part of any observer), the callback alone (devtrace's callback forwarding to functions
 *    that do nothing), devtrace.torch.profile (none backend) and torch.profiler.profile;
 *  - one under `devtrace record --torch`: recorded, the observer removed, and
 *    torch.profiler with the observer removed. It counts only when its trace holds every
 *    op its recorded blocks ran.
 * The judged figures are what devtrace adds divided by what torch.profiler adds, each
 * against the same process's plain blocks (target: at most 0.5).
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
static void instructions(const bench_sizes *sz, const bench_paths *paths, const char *py, const char *errpath,
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
    instructions(sz, paths, py, errpath, 0);
    instructions(sz, paths, py, errpath, 1);
    unlink(errpath);
}

/* The modes of the two kinds of process (torch_ops.py's names). */
enum { P_PLAIN, P_FLOOR, P_CALLBACK, P_PROFILE, P_PROFILER, NPLAIN };
static const char *const plain_modes[NPLAIN] = {"plain", "floor", "callback", "profile", "profiler"};
enum { R_ON, R_OFF, R_PROFILER, NRECORD };
static const char *const record_modes[NRECORD] = {"on", "off", "profiler"};

/* The median ns per unit of each mode in torch_ops.py's output; 0 when one is missing. */
static int parse_modes(const char *out, const char *const *names, int n, double *median)
{
    for (int m = 0; m < n; m++) {
        char key[64];
        snprintf(key, sizeof key, "mode %s median ", names[m]);
        const char *line = strstr(out, key);
        if (!line)
            return 0;
        median[m] = strtod(line + strlen(key), NULL);
    }
    return 1;
}

static long parse_count(const char *out, const char *key)
{
    const char *line = strstr(out, key);
    return line ? strtol(line + strlen(key), NULL, 10) : -1;
}

/* One workload (tiny ops, or realistic steps): rounds of one plain process and one under
 * devtrace record --torch, each running its modes in interleaved blocks; the figures are
 * medians over the processes of each process's own differences and ratios. */
static void side_by_side(const bench_sizes *sz, const bench_paths *paths, const char *py, const char *errpath, int step)
{
    const char *fig = step ? "torch.step.devtrace_vs_profiler_added" : "torch.devtrace_vs_profiler_added";
    const char *prefix = step ? "torch.step." : "torch.";
    const char *unit = step ? "step" : "op";
    /* A tiny-op block holds at least one chunk's worth of ops (4680), a step block about as
     * many (7 steps), so that every block pays the chunk changes its share. */
    unsigned size = step ? (sz->torch_ops >= 5000 ? 7 : 1) : (sz->torch_ops < 5000 ? sz->torch_ops : 5000);
    unsigned blocks = step ? sz->torch_ops / 2500 : 2 * (sz->torch_ops / size);
    if (blocks < 2)
        blocks = 2;
    char trace[4096], nblocks[32], nsize[32];
    snprintf(trace, sizeof trace, "%s/torch.json", paths->tmpdir);
    snprintf(nblocks, sizeof nblocks, "%u", blocks);
    snprintf(nsize, sizeof nsize, "%u", size);
    char *workload = step ? "step" : "add";
    char *plain_argv[] = {
        (char *)py, DT_BENCH_TORCH_PROGRAM, "plain,floor,callback,profile,profiler", nblocks, nsize, workload, NULL};
    char *record_argv[] = {
        (char *)paths->cli,     "record",          "--torch", "-q",  "-o",     trace, "--", (char *)py,
        DT_BENCH_TORCH_PROGRAM, "on,off,profiler", nblocks,   nsize, workload, NULL};
    int rounds = sz->e2e_pairs;
    double *added[NPLAIN],
        *record_added = calloc((size_t)rounds, sizeof(double)),
        *record_profiler = calloc((size_t)rounds, sizeof(double)),
        *record_ratio = calloc((size_t)rounds, sizeof(double)),
        *record_process = calloc((size_t)rounds, sizeof(double)), *plain = calloc((size_t)rounds, sizeof(double)),
        *profile_ratio = calloc((size_t)rounds, sizeof(double)), *floor_ratio = calloc((size_t)rounds, sizeof(double));
    for (int m = 0; m < NPLAIN; m++)
        added[m] = calloc((size_t)rounds, sizeof(double));
    long per_step = 1, recorded = 0, in_trace = 0;
    for (int r = 0; r < rounds; r++) {
        char out[4096], err[256];
        double med[NPLAIN], rec[NRECORD];
        for (int kind = 0; kind < 2; kind++) {
            int record = (kind + r) % 2; /* which kind goes first alternates */
            unlink(trace);
            int rc = bench_run_program(record ? record_argv : plain_argv, 1, errpath, out, sizeof out, err, sizeof err);
            int ok = rc == 0 && (record ? parse_modes(out, record_modes, NRECORD, rec)
                                        : parse_modes(out, plain_modes, NPLAIN, med));
            if (!ok) {
                bench_unmeasurable(fig, "ratio", BENCH_AT_MOST, 0.5, "the %s process failed: %s",
                                   record ? "devtrace record --torch" : "plain", err[0] ? err : "no result lines");
                goto end;
            }
            if (step && (per_step = parse_count(out, "ops_per_step ")) <= 0) {
                bench_unmeasurable(fig, "ratio", BENCH_AT_MOST, 0.5, "torch_ops.py printed no ops_per_step");
                goto end;
            }
            if (record) {
                /* Every op of the recorded blocks in the trace, or the process does not count. */
                recorded = parse_count(out, "ops_recorded ");
                in_trace = bench_count_lines(trace, step ? "\"cat\": \"cpu_op\""
                                                         : "\"cat\": \"cpu_op\", \"name\": \"aten::add\"");
                if (recorded <= 0 || in_trace < recorded) {
                    bench_unmeasurable(fig, "ratio", BENCH_AT_MOST, 0.5,
                                       "the devtrace record --torch process's trace holds %ld cpu_ops, fewer than "
                                       "the %ld ops its recorded blocks ran",
                                       in_trace, recorded);
                    goto end;
                }
            }
        }
        for (int m = 0; m < NPLAIN; m++)
            added[m][r] = med[m] - med[P_PLAIN];
        plain[r] = med[P_PLAIN];
        profile_ratio[r] = added[P_PROFILE][r] / added[P_PROFILER][r];
        floor_ratio[r] = added[P_FLOOR][r] / added[P_PROFILER][r];
        record_added[r] = rec[R_ON] - rec[R_OFF];
        record_profiler[r] = rec[R_PROFILER] - rec[R_OFF];
        record_ratio[r] = record_added[r] / record_profiler[r];
        record_process[r] = rec[R_OFF] - med[P_PLAIN];
    }
    double profiler_added = bench_median(added[P_PROFILER], rounds);
    double rec_profiler_added = bench_median(record_profiler, rounds);
    if (profiler_added <= 0 || rec_profiler_added <= 0) {
        bench_unmeasurable(fig, "ratio", BENCH_AT_MOST, 0.5,
                           "torch.profiler added nothing measurable (%.0f ns/%s in plain processes, %.0f under "
                           "devtrace record)",
                           profiler_added, unit, rec_profiler_added);
        goto end;
    }
    char note[400];
    double rec_added = bench_median(record_added, rounds);
    snprintf(note, sizeof note,
             "%d processes under devtrace record --torch, %u blocks of %u %s%s each (%s); medians: recording adds %.0f "
             "ns/%s, torch.profiler %.0f, in the same processes; %ld of %ld ops in the last trace",
             rounds, blocks, size, step ? "training step" : "torch.add", size == 1 ? "" : "s", py, rec_added, unit,
             rec_profiler_added, in_trace, recorded);
    bench_report(fig, bench_median(record_ratio, rounds), "ratio", BENCH_AT_MOST, 0.5, note);
    char name[96];
    snprintf(note, sizeof note,
             "devtrace.torch.profile (none backend: the ops alone) against torch.profiler in %d plain processes, "
             "the same blocks",
             rounds);
    snprintf(name, sizeof name, "%sprofile_vs_profiler_added", prefix);
    bench_report(name, bench_median(profile_ratio, rounds), "ratio", BENCH_AT_MOST, 0.5, note);
    snprintf(name, sizeof name, "%sfloor_vs_profiler_added", prefix);
    bench_report(name, bench_median(floor_ratio, rounds), "ratio", BENCH_INFO, 0,
                 "a global RecordFunction callback that returns at once (torch's cost of any observer) against "
                 "torch.profiler: no observer of every op goes below it");
    snprintf(name, sizeof name, "%splain_ns_per_%s", prefix, unit);
    bench_report(name, bench_median(plain, rounds), "ns", BENCH_INFO, 0, NULL);
    static const char *const figure_names[NPLAIN] = {NULL, "floor_added_ns_per_", "callback_added_ns_per_",
                                                     "profile_added_ns_per_", "profiler_added_ns_per_"};
    static const char *const figure_notes[NPLAIN] = {
        NULL, "torch's RecordFunction for a callback that returns at once",
        "torch's RecordFunction and devtrace's callback, forwarding to functions that do nothing", NULL, NULL};
    for (int m = P_FLOOR; m < NPLAIN; m++) {
        snprintf(name, sizeof name, "%s%s%s", prefix, figure_names[m], unit);
        bench_report(name, bench_median(added[m], rounds), "ns", BENCH_INFO, 0, figure_notes[m]);
    }
    snprintf(name, sizeof name, "%sdevtrace_added_ns_per_%s", prefix, unit);
    bench_report(name, rec_added, "ns", BENCH_INFO, 0, "recorded blocks against the observer removed, same process");
    snprintf(name, sizeof name, "%srecord_process_added_ns_per_%s", prefix, unit);
    bench_report(name, bench_median(record_process, rounds), "ns", BENCH_INFO, 0,
                 "the observer removed under devtrace record against the plain process's plain blocks: what the "
                 "process under record pays besides the ops (its threads); two processes, so as noisy as they are");
end:
    unlink(trace);
    for (int m = 0; m < NPLAIN; m++)
        free(added[m]);
    free(record_added), free(record_profiler), free(record_ratio), free(record_process), free(plain);
    free(profile_ratio), free(floor_ratio);
}

/* The same modes counted in instructions (valgrind's callgrind): exact where the times of
 * this shared machine are not, though blind to what costs time without instructions (cache
 * misses, faults). Each mode in a process of its own: set up, warmed up (past the first
 * chunk of events), then one chunk's worth of ops counted three times (4680 torch.add, or 7
 * steps of 685 ops), so that each count holds one chunk change, its share; the least of
 * the three. */
static void instructions(const bench_sizes *sz, const bench_paths *paths, const char *py, const char *errpath, int step)
{
    const char *prefix = step ? "torch.step.instr." : "torch.instr.";
    const char *unit = step ? "step" : "op";
    char fig[96];
    snprintf(fig, sizeof fig, "%sprofile_vs_profiler_added", prefix);
#ifndef DT_BENCH_CALLGRIND_LIB
    (void)sz, (void)paths, (void)py, (void)errpath;
    bench_unmeasurable(fig, "ratio", BENCH_INFO, 0, "built without valgrind/callgrind.h (Debian: valgrind)");
#else
    if (strcmp(sz->mode, "smoke") == 0) {
        bench_unmeasurable(fig, "ratio", BENCH_INFO, 0, "not counted at smoke sizes (a minute under valgrind)");
        return;
    }
    char *version_argv[] = {"valgrind", "--version", NULL};
    char out[512], err[256];
    if (bench_run_program(version_argv, 0, errpath, out, sizeof out, err, sizeof err) != 0) {
        bench_unmeasurable(fig, "ratio", BENCH_INFO, 0, "valgrind is not on PATH (Debian: valgrind)");
        return;
    }
    const char *size = step ? "7" : "4680", *warmup = step ? "8" : "6000";
    double units = step ? 7 : 4680;
    enum { I_PLAIN, I_FLOOR, I_CALLBACK, I_PROFILE, I_PROFILER, I_RECORD, NI };
    static const char *const modes[NI] = {"plain", "floor", "callback", "profile", "profiler", "on"};
    double per[NI];
    char trace[4096], cgout[4096], cgopt[4200];
    snprintf(trace, sizeof trace, "%s/torch-instr.json", paths->tmpdir);
    snprintf(cgout, sizeof cgout, "%s/torch.callgrind", paths->tmpdir);
    snprintf(cgopt, sizeof cgopt, "--callgrind-out-file=%s", cgout);
    for (int m = 0; m < NI; m++) {
        char *argv[24];
        int k = 0;
        if (m == I_RECORD) {
            char *const head[] = {(char *)paths->cli, "record", "--torch", "-q", "-o", trace, "--"};
            for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
                argv[k++] = head[i];
        }
        char *const tail[] = {"valgrind",
                              "--tool=callgrind",
                              "--instr-atstart=no",
                              "--collect-atstart=no",
                              cgopt,
                              (char *)py,
                              DT_BENCH_TORCH_PROGRAM,
                              (char *)modes[m],
                              "1",
                              (char *)size,
                              step ? "step" : "add",
                              "--callgrind",
                              DT_BENCH_CALLGRIND_LIB,
                              (char *)warmup,
                              NULL};
        for (size_t i = 0; i < sizeof tail / sizeof tail[0]; i++)
            argv[k++] = tail[i];
        /* The dumps at devtrace_bench_callgrind_stop: three counts, the least (glibc consolidates
         * its free lists before it grows the heap, about 2 M instructions at once, in a count now
         * and then in every mode, plain included: torch_ops.py). */
        char dump[3][4300];
        for (int d = 0; d < 3; d++) {
            snprintf(dump[d], sizeof dump[d], "%s.%d", cgout, d + 1);
            unlink(dump[d]);
        }
        int rc = bench_run_program(argv, 1, errpath, out, sizeof out, err, sizeof err);
        double counts[3];
        int ncounts = 0;
        for (int d = 0; d < 3; d++) {
            FILE *f = rc == 0 ? fopen(dump[d], "r") : NULL;
            char line[256];
            while (f && fgets(line, sizeof line, f))
                if (strncmp(line, "totals: ", 8) == 0 && ncounts < 3)
                    counts[ncounts++] = strtod(line + 8, NULL);
            if (f)
                fclose(f);
            unlink(dump[d]);
        }
        unlink(cgout), unlink(trace);
        double total = -1;
        for (int d = 0; d < ncounts; d++)
            if (total < 0 || counts[d] < total)
                total = counts[d];
        if (ncounts != 3)
            total = -1;
        if (total <= 0) {
            bench_unmeasurable(fig, "ratio", BENCH_INFO, 0, "the %s count under callgrind failed: %s", modes[m],
                               err[0] ? err : "no totals in its dump");
            return;
        }
        per[m] = total / units;
    }
    double profiler = per[I_PROFILER] - per[I_PLAIN];
    char name[96], note[256];
    snprintf(note, sizeof note,
             "instructions (callgrind), one process a mode, the least of three counts of %s after a "
             "warm-up; %s the plain count",
             step ? "7 training steps" : "4680 torch.add", unit);
    snprintf(name, sizeof name, "%splain_per_%s", prefix, unit);
    bench_report(name, per[I_PLAIN], "instr", BENCH_INFO, 0, note);
    static const char *const added_names[NI] = {NULL, "floor", "callback", "profile", "profiler", "devtrace"};
    for (int m = I_FLOOR; m < NI; m++) {
        snprintf(name, sizeof name, "%s%s_added_per_%s", prefix, added_names[m], unit);
        bench_report(name, per[m] - per[I_PLAIN], "instr", BENCH_INFO, 0,
                     m == I_RECORD ? "under devtrace record --torch (its process also has the recorder's threads)"
                                   : NULL);
    }
    snprintf(name, sizeof name, "%sfloor_vs_profiler_added", prefix);
    bench_report(name, (per[I_FLOOR] - per[I_PLAIN]) / profiler, "ratio", BENCH_INFO, 0,
                 "torch's RecordFunction for a callback that does nothing, against torch.profiler, in instructions: "
                 "no observer of every op goes below it");
    bench_report(fig, (per[I_PROFILE] - per[I_PLAIN]) / profiler, "ratio", BENCH_INFO, 0, NULL);
    snprintf(name, sizeof name, "%sdevtrace_vs_profiler_added", prefix);
    bench_report(name, (per[I_RECORD] - per[I_PLAIN]) / profiler, "ratio", BENCH_INFO, 0, NULL);
#endif
}
