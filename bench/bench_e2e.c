/* bench_e2e.c: the end-to-end figures on PoCL: opencl-launch-loop (opencl_launch_loop.c,
 * a clFinish every 256 launches) run untraced, under `devtrace record -b opencl`, and
 * under the peers that are present, in interleaved rounds (each round runs every mode
 * once, the order rotating from round to round), each run timing its own loop. A mode's
 * overhead per launch is the median over the rounds of its run's time less the untraced
 * run's of the same round, over the launches. A traced run counts only when its trace
 * holds every launch as a kernel event (so no figure is that of a run that traced
 * nothing). The traces are written after the timed part (at exit), so a figure is what
 * tracing costs the program while it runs. The floor (the loop with its own profiled
 * events) runs in the same rounds; the median of devtrace's differences comes with its 95%
 * bootstrap interval; and the CPU time the loop reads for its main thread and for its
 * parent (the recorder) is reported too: the wall clock of this loop hides work added to
 * the program's thread (docs/performance.md, OpenCL launch overhead).
 *
 * The peers (an optional row each; without one the row says which variable to set):
 *   CLIntercept, the build folder (or install prefix) named by $DEVTRACE_CLINTERCEPT_DIR:
 *     `cliloader -ccl -cdt` (host calls and the per-queue device timeline as a Chrome
 *     trace, what devtrace records); its trace must hold every launch;
 *   PoCL's own tracer, POCL_TRACING=text (one line per command status change to a file);
 *     its log must hold every launch's completion.
 * e2e.pocl.vs_cheapest_peer is devtrace's overhead over the cheapest peer's. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#define E2E_FINISH_EVERY "256"
/* The target of e2e.pocl.cpu_overhead_vs_untraced (docs/performance.md). */
#define E2E_MAX_CPU_RATIO 1.6

typedef enum e2e_mode_id {
    E2E_UNTRACED,
    E2E_DEVTRACE,
    E2E_FLOOR,
    E2E_CLINTERCEPT,
    E2E_POCL_TRACING,
    E2E_MODES
} e2e_mode_id;

typedef struct e2e_mode {
    const char *label;  /* in notes */
    const char *figure; /* its overhead figure (NULL: the baseline) */
    char *argv[24];
    int keep_layers;      /* OPENCL_LAYERS stays (devtrace record sets it itself) */
    const char *env_name; /* set for the run (PoCL's tracer), or NULL */
    const char *env_value;
    char check_path[4096]; /* the file that must hold every launch */
    const char *check_needle;
    int available;
    char why[400];                             /* why not available */
    double *seconds, *thread_cpu, *parent_cpu; /* per round */
} e2e_mode;

typedef struct run_result {
    int status; /* exit status, -1 when it did not run or died */
    double seconds;
    double thread_cpu; /* the timed part's CPU time of the program's thread */
    double parent_cpu; /* ... and of its parent's threads (the recorder, under devtrace record) */
    char err[256];
} run_result;

/* The number after key in out, or NAN. */
static double field(const char *out, const char *key)
{
    const char *p = strstr(out, key);
    return p ? strtod(p + strlen(key), NULL) : NAN;
}

/* Runs argv (stdout parsed for seconds=, stderr into errpath). */
static run_result run(char *const argv[], int keep_layers, const char *errpath)
{
    run_result r = {-1, NAN, NAN, NAN, ""};
    char out[4096];
    r.status = bench_run_program(argv, keep_layers, errpath, out, sizeof out, r.err, sizeof r.err);
    if (strstr(out, "check=ok")) {
        r.seconds = field(out, " seconds=");
        r.thread_cpu = field(out, " thread_cpu_seconds=");
        r.parent_cpu = field(out, " parent_cpu_seconds=");
    }
    return r;
}

/* One run of a mode (its figures in round i of m's arrays when they are there); its
 * seconds, or NAN (with why) when it failed or its trace misses launches. */
static double run_mode(e2e_mode *m, int round, uint32_t launches, const char *errpath, char *why, size_t whycap)
{
    if (m->check_path[0])
        unlink(m->check_path);
    if (m->env_name)
        setenv(m->env_name, m->env_value, 1);
    run_result r = run(m->argv, m->keep_layers, errpath);
    if (m->env_name)
        unsetenv(m->env_name);
    if (r.status != 0 || !isfinite(r.seconds)) {
        snprintf(why, whycap, "the %s run failed: %s", m->label, r.err[0] ? r.err : "no result line");
        return NAN;
    }
    if (m->check_path[0]) {
        long n = bench_count_lines(m->check_path, m->check_needle);
        if (n < (long)launches) {
            snprintf(why, whycap, "the %s run's trace (%.200s) holds %ld launches, fewer than the %u made", m->label,
                     m->check_path, n, launches);
            return NAN;
        }
    }
    if (m->seconds) {
        m->seconds[round] = r.seconds;
        m->thread_cpu[round] = r.thread_cpu;
        m->parent_cpu[round] = r.parent_cpu;
    }
    return r.seconds;
}

/* Round by round, a[i] - b[i] (per launch, in us) into d; the median of d. */
static double median_difference(const double *a, const double *b, int rounds, double launches, double *d)
{
    for (int i = 0; i < rounds; i++)
        d[i] = (a[i] - (b ? b[i] : 0)) * 1e6 / launches;
    return bench_median(d, rounds);
}

/* The 95% bootstrap interval of the median of d[0..n) (2,000 resamples, a fixed seed: the
 * same rounds give the same interval). 0, or -1 when out of memory. */
static int median_interval(const double *d, int n, double *low, double *high)
{
    enum { resamples = 2000 };
    double *medians = malloc(resamples * sizeof *medians), *pick = malloc((size_t)n * sizeof *pick);
    if (!medians || !pick) {
        free(medians), free(pick);
        return -1;
    }
    uint64_t state = 0x9e3779b97f4a7c15ull;
    for (int r = 0; r < resamples; r++) {
        for (int i = 0; i < n; i++) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            pick[i] = d[(state >> 33) % (uint64_t)n];
        }
        medians[r] = bench_median(pick, n);
    }
    bench_median(medians, resamples); /* sorts them */
    *low = medians[resamples / 40];
    *high = medians[resamples - 1 - resamples / 40];
    free(medians), free(pick);
    return 0;
}

/* The CLIntercept launcher under $DEVTRACE_CLINTERCEPT_DIR (a build folder or an install
 * prefix), or 0 with why. */
static int find_cliloader(char *path, size_t cap, char *why, size_t whycap)
{
    const char *dir = getenv("DEVTRACE_CLINTERCEPT_DIR");
    if (!dir || !*dir) {
        snprintf(why, whycap,
                 "CLIntercept not present: set DEVTRACE_CLINTERCEPT_DIR to its build folder (docs/performance.md, "
                 "OpenCL launch overhead)");
        return 0;
    }
    const char *candidates[] = {"cliloader/cliloader", "bin/cliloader", "cliloader"};
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        snprintf(path, cap, "%s/%s", dir, candidates[i]);
        if (access(path, X_OK) == 0)
            return 1;
    }
    snprintf(why, whycap, "DEVTRACE_CLINTERCEPT_DIR=%s has no cliloader (cliloader/cliloader or bin/cliloader)", dir);
    return 0;
}

static void set_argv(e2e_mode *m, char *const *words)
{
    size_t n = 0;
    while (words[n] && n + 1 < sizeof m->argv / sizeof m->argv[0]) {
        m->argv[n] = words[n];
        n++;
    }
    m->argv[n] = NULL;
}

void bench_e2e(const bench_sizes *sz, const bench_paths *paths)
{
    /* The targets: the CPU time devtrace adds to the program's thread per launch over the
     * untraced loop's, and devtrace's overhead over the cheapest peer's, same rounds. */
    const char *fig = "e2e.pocl.cpu_overhead_vs_untraced";
    const double target = E2E_MAX_CPU_RATIO, ratio_target = 0.15;
    const char *ratio_fig = "e2e.pocl.vs_cheapest_peer";
    if (!paths->launch_loop[0] || access(paths->launch_loop, X_OK) != 0) {
        bench_unmeasurable(fig, "ratio", BENCH_AT_MOST, target, "opencl-launch-loop was not built (no OpenCL found)");
        return;
    }
    if (!paths->cli[0] || access(paths->cli, X_OK) != 0) {
        bench_unmeasurable(fig, "ratio", BENCH_AT_MOST, target, "the devtrace command was not built");
        return;
    }
    static char launches[32], trace[4096], errpath[4096], dumpdir[3072], cliloader[4096], pocl_log[4096];
    snprintf(launches, sizeof launches, "%u", sz->e2e_launches);
    snprintf(trace, sizeof trace, "%s/e2e.json", paths->tmpdir);
    snprintf(errpath, sizeof errpath, "%s/e2e.err", paths->tmpdir);
    snprintf(dumpdir, sizeof dumpdir, "%s/e2e-clintercept", paths->tmpdir);
    snprintf(pocl_log, sizeof pocl_log, "%s/e2e-pocl-trace.log", paths->tmpdir);
    char *loop = (char *)paths->launch_loop;

    e2e_mode modes[E2E_MODES];
    memset(modes, 0, sizeof modes);
    modes[E2E_UNTRACED] = (e2e_mode){.label = "untraced", .available = 1};
    set_argv(&modes[E2E_UNTRACED], (char *[]){loop, "--launches", launches, "--finish-every", E2E_FINISH_EVERY, NULL});
    modes[E2E_DEVTRACE] =
        (e2e_mode){.label = "devtrace", .keep_layers = 1, .available = 1, .check_needle = "\"cat\": \"kernel\""};
    snprintf(modes[E2E_DEVTRACE].check_path, sizeof modes[E2E_DEVTRACE].check_path, "%s", trace);
    set_argv(&modes[E2E_DEVTRACE], (char *[]){(char *)paths->cli, "record", "-q", "-b", "opencl", "-o", trace, "--",
                                              loop, "--launches", launches, "--finish-every", E2E_FINISH_EVERY, NULL});
    modes[E2E_FLOOR] = (e2e_mode){.label = "floor", .figure = "e2e.pocl.floor_overhead_us_per_launch", .available = 1};
    set_argv(&modes[E2E_FLOOR],
             (char *[]){loop, "--launches", launches, "--finish-every", E2E_FINISH_EVERY, "--own-events", NULL});
    modes[E2E_CLINTERCEPT] = (e2e_mode){.label = "CLIntercept",
                                        .figure = "e2e.pocl.clintercept_overhead_us_per_launch",
                                        .check_needle = "\"name\":\"vadd\""};
    e2e_mode *cli = &modes[E2E_CLINTERCEPT];
    cli->available = find_cliloader(cliloader, sizeof cliloader, cli->why, sizeof cli->why);
    snprintf(cli->check_path, sizeof cli->check_path, "%s/clintercept_trace.json", dumpdir);
    set_argv(cli, (char *[]){cliloader, "-q", "-ccl", "-cdt", "--dump-dir", dumpdir, loop, "--launches", launches,
                             "--finish-every", E2E_FINISH_EVERY, NULL});
    modes[E2E_POCL_TRACING] = (e2e_mode){.label = "PoCL tracer",
                                         .figure = "e2e.pocl.pocl_tracing_overhead_us_per_launch",
                                         .env_name = "POCL_TRACING",
                                         .env_value = "text",
                                         .check_needle = "ndrange_kernel | complete",
                                         .available = 1};
    snprintf(modes[E2E_POCL_TRACING].check_path, sizeof modes[E2E_POCL_TRACING].check_path, "%s", pocl_log);
    set_argv(&modes[E2E_POCL_TRACING], modes[E2E_UNTRACED].argv);
    setenv("POCL_TRACING_OPT", pocl_log, 1); /* read by PoCL only with POCL_TRACING set */

    /* A first run of each mode: PoCL's kernel cache, whether there is a device at all,
     * and whether each peer works here. */
    char why[400];
    double first = run_mode(&modes[E2E_UNTRACED], 0, sz->e2e_launches, errpath, why, sizeof why);
    if (!isfinite(first)) {
        run_result r = run(modes[E2E_UNTRACED].argv, 0, errpath);
        bench_unmeasurable(fig, "ratio", BENCH_AT_MOST, target, "%s",
                           r.status == 77 ? "no OpenCL device on this machine"
                           : r.err[0]     ? r.err
                                          : "opencl-launch-loop failed");
        return;
    }
    for (int k = E2E_DEVTRACE; k < E2E_MODES; k++)
        if (modes[k].available && !isfinite(run_mode(&modes[k], 0, sz->e2e_launches, errpath, why, sizeof why))) {
            if (k == E2E_DEVTRACE) {
                bench_unmeasurable(fig, "ratio", BENCH_AT_MOST, target, "%s", why);
                return;
            }
            modes[k].available = 0;
            snprintf(modes[k].why, sizeof modes[k].why, "%s", why);
        }

    int rounds = sz->e2e_rounds;
    double *figures = calloc((size_t)(3 * E2E_MODES + 1) * (size_t)rounds, sizeof(double));
    int ok = figures != NULL;
    for (int k = 0; ok && k < E2E_MODES; k++) {
        modes[k].seconds = figures + (size_t)(3 * k) * (size_t)rounds;
        modes[k].thread_cpu = modes[k].seconds + rounds;
        modes[k].parent_cpu = modes[k].thread_cpu + rounds;
    }
    double *diff = ok ? figures + (size_t)(3 * E2E_MODES) * (size_t)rounds : NULL;
    for (int i = 0; ok && i < rounds; i++) {
        for (int j = 0; j < E2E_MODES; j++) {
            e2e_mode *m = &modes[(i + j) % E2E_MODES]; /* the order rotates */
            if (!m->available)
                continue;
            if (!isfinite(run_mode(m, i, sz->e2e_launches, errpath, why, sizeof why))) {
                bench_unmeasurable(m->figure ? m->figure : fig, m->figure ? "us" : "ratio",
                                   m->figure ? BENCH_INFO : BENCH_AT_MOST, m->figure ? 0 : target, "%s", why);
                if (m == &modes[E2E_DEVTRACE] || m == &modes[E2E_UNTRACED]) {
                    ok = 0;
                    break;
                }
                m->available = 0;
                m->why[0] = '\0'; /* reported */
                continue;
            }
        }
    }
    if (ok) {
        double n = (double)sz->e2e_launches, overhead[E2E_MODES] = {0};
        const e2e_mode *base = &modes[E2E_UNTRACED];
        for (int k = E2E_DEVTRACE; k < E2E_MODES; k++)
            if (modes[k].available)
                overhead[k] = median_difference(modes[k].seconds, base->seconds, rounds, n, diff);
        double low = NAN, high = NAN;
        median_difference(modes[E2E_DEVTRACE].seconds, base->seconds, rounds, n, diff);
        if (rounds >= 5)
            median_interval(diff, rounds, &low, &high);
        char note[400];
        snprintf(note, sizeof note,
                 "%u launches of a 4096-float vector add (local 64), a clFinish every %s, then GEMM, fill, "
                 "read-back; %d interleaved rounds, median of the per-round differences (95%% interval %.2f to %.2f)",
                 sz->e2e_launches, E2E_FINISH_EVERY, rounds, low, high);
        /* Judged by the program thread's CPU time (bench.h says why): what devtrace adds to
         * it over what the untraced loop spends, per launch, same rounds. */
        double cpu_added = median_difference(modes[E2E_DEVTRACE].thread_cpu, base->thread_cpu, rounds, n, diff);
        double cpu_untraced = median_difference(base->thread_cpu, NULL, rounds, n, diff);
        bench_report(fig, cpu_added / cpu_untraced, "ratio", BENCH_AT_MOST, target,
                     "the CPU time devtrace adds to the program's thread per launch over the untraced loop's, "
                     "medians of the same rounds");
        double untraced = bench_median(base->seconds, rounds) * 1e6 / n;
        bench_report("e2e.pocl.overhead_us_per_launch", overhead[E2E_DEVTRACE], "us", BENCH_INFO, 0, note);
        if (isfinite(high))
            bench_report("e2e.pocl.overhead_interval_high_us_per_launch", high, "us", BENCH_INFO, 0,
                         "the upper end of the median's 95% bootstrap interval");
        bench_report("e2e.pocl.untraced_us_per_launch", untraced, "us", BENCH_INFO, 0, NULL);
        bench_report("e2e.pocl.traced_us_per_launch", bench_median(modes[E2E_DEVTRACE].seconds, rounds) * 1e6 / n, "us",
                     BENCH_INFO, 0, NULL);
        bench_report(modes[E2E_FLOOR].figure, overhead[E2E_FLOOR], "us", BENCH_INFO, 0,
                     "the loop with its own profiled events, read and released: what any OpenCL-layer tracer pays");
        /* CPU time: what the wall clock of this loop (its threads waiting on each other) does not show. */
        bench_report("e2e.pocl.thread_cpu_overhead_us_per_launch",
                     median_difference(modes[E2E_DEVTRACE].thread_cpu, base->thread_cpu, rounds, n, diff), "us",
                     BENCH_INFO, 0, "CPU time devtrace adds to the program's thread, the floor's included");
        bench_report("e2e.pocl.floor_thread_cpu_overhead_us_per_launch",
                     median_difference(modes[E2E_FLOOR].thread_cpu, base->thread_cpu, rounds, n, diff), "us",
                     BENCH_INFO, 0, "the floor's, on the program's thread");
        bench_report("e2e.pocl.recorder_cpu_us_per_launch",
                     median_difference(modes[E2E_DEVTRACE].parent_cpu, NULL, rounds, n, diff), "us", BENCH_INFO, 0,
                     "the recorder's CPU time while the loop runs (on the other CPUs)");
        int cheapest = -1;
        for (int k = E2E_CLINTERCEPT; k < E2E_MODES; k++) {
            if (modes[k].available) {
                bench_report(modes[k].figure, overhead[k], "us", BENCH_INFO, 0, "same rounds as devtrace's");
                if (cheapest < 0 || overhead[k] < overhead[cheapest])
                    cheapest = k;
            } else if (modes[k].why[0]) {
                bench_unmeasurable(modes[k].figure, "us", BENCH_INFO, 0, "%s", modes[k].why);
            }
        }
        if (cheapest < 0)
            bench_unmeasurable(ratio_fig, "ratio", BENCH_AT_MOST, ratio_target,
                               "no peer ran (CLIntercept: DEVTRACE_CLINTERCEPT_DIR; PoCL's tracer: POCL_TRACING)");
        else if (overhead[cheapest] <= 0)
            bench_unmeasurable(ratio_fig, "ratio", BENCH_AT_MOST, ratio_target,
                               "the cheapest peer (%s) measured no overhead in these rounds", modes[cheapest].label);
        else {
            snprintf(note, sizeof note, "devtrace's overhead over %s's, the cheapest peer here", modes[cheapest].label);
            bench_report(ratio_fig, overhead[E2E_DEVTRACE] / overhead[cheapest], "ratio", BENCH_AT_MOST, ratio_target,
                         note);
        }
    }
    unsetenv("POCL_TRACING_OPT");
    for (int k = 0; k < E2E_MODES; k++) {
        if (modes[k].check_path[0])
            unlink(modes[k].check_path);
    }
    free(figures);
    char report[4200];
    snprintf(report, sizeof report, "%s/clintercept_report.txt", dumpdir);
    unlink(report);
    unlink(errpath);
    rmdir(dumpdir);
}
