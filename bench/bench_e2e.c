/* bench_e2e.c: the end-to-end figure on PoCL: opencl-launch-loop (opencl_launch_loop.c)
 * run untraced and under `devtrace record -b opencl`, in interleaved pairs (the order
 * alternates), each run timing its own loop; the overhead per launch is the difference
 * of the two medians over the launches. A traced run counts only when its trace holds
 * every launch as a kernel event (so the figure is never that of a run that traced
 * nothing). The trace is written after the timed part (at exit), so the figure is what
 * tracing costs the program while it runs. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

typedef struct run_result {
    int status; /* exit status, -1 when it did not run or died */
    double seconds;
    char err[256];
} run_result;

/* Runs argv (stdout parsed for seconds=, stderr into errpath). */
static run_result run(char *const argv[], int traced, const char *errpath)
{
    run_result r = {-1, NAN, ""};
    char out[4096];
    r.status = bench_run_program(argv, traced, errpath, out, sizeof out, r.err, sizeof r.err);
    const char *sec = strstr(out, "seconds=");
    if (sec && strstr(out, "check=ok"))
        r.seconds = strtod(sec + 8, NULL);
    return r;
}

void bench_e2e(const bench_sizes *sz, const bench_paths *paths)
{
    const char *fig = "e2e.pocl.overhead_us_per_launch";
    if (!paths->launch_loop[0] || access(paths->launch_loop, X_OK) != 0) {
        bench_unmeasurable(fig, "us", BENCH_AT_MOST, 1.0, "opencl-launch-loop was not built (no OpenCL found)");
        return;
    }
    if (!paths->cli[0] || access(paths->cli, X_OK) != 0) {
        bench_unmeasurable(fig, "us", BENCH_AT_MOST, 1.0, "the devtrace command was not built");
        return;
    }
    char launches[32], trace[4096], errpath[4096];
    snprintf(launches, sizeof launches, "%u", sz->e2e_launches);
    snprintf(trace, sizeof trace, "%s/e2e.json", paths->tmpdir);
    snprintf(errpath, sizeof errpath, "%s/e2e.err", paths->tmpdir);
    char *plain[] = {(char *)paths->launch_loop, "--launches", launches, NULL};
    char *traced[] = {(char *)paths->cli,         "record",     "-q",     "-b", "opencl", "-o", trace, "--",
                      (char *)paths->launch_loop, "--launches", launches, NULL};
    /* A first untraced run: PoCL's kernel cache, and whether there is a device at all. */
    run_result r = run(plain, 0, errpath);
    if (r.status == 77 || r.status != 0 || !isfinite(r.seconds)) {
        bench_unmeasurable(fig, "us", BENCH_AT_MOST, 1.0, "%s",
                           r.status == 77 ? "no OpenCL device on this machine"
                           : r.err[0]     ? r.err
                                          : "opencl-launch-loop failed");
        return;
    }
    int pairs = sz->e2e_pairs;
    double *u = calloc((size_t)pairs, sizeof *u), *t = calloc((size_t)pairs, sizeof *t);
    if (!u || !t)
        return;
    long kernels = 0;
    for (int i = 0; i < pairs; i++) {
        for (int k = 0; k < 2; k++) {
            int traced_now = (k == 0) == (i % 2 == 1);
            unlink(trace);
            r = run(traced_now ? traced : plain, traced_now, errpath);
            if (r.status != 0 || !isfinite(r.seconds)) {
                bench_unmeasurable(fig, "us", BENCH_AT_MOST, 1.0, "%s run failed: %s",
                                   traced_now ? "the traced" : "an untraced", r.err[0] ? r.err : "no result line");
                free(u), free(t);
                return;
            }
            if (traced_now) {
                kernels = bench_count_lines(trace, "\"cat\": \"kernel\"");
                /* The loop's launches, the warm-up's vadd and GEMM, and the timed GEMM. */
                if (kernels < (long)sz->e2e_launches + 3) {
                    bench_unmeasurable(fig, "us", BENCH_AT_MOST, 1.0,
                                       "the traced run's trace holds %ld kernel events, fewer than the %u launches",
                                       kernels, sz->e2e_launches);
                    free(u), free(t);
                    return;
                }
                t[i] = r.seconds;
            } else {
                u[i] = r.seconds;
            }
        }
    }
    unlink(trace);
    unlink(errpath);
    double mu = bench_median(u, pairs), mt = bench_median(t, pairs);
    double n = (double)sz->e2e_launches;
    char note[320];
    snprintf(note, sizeof note,
             "%u launches of a 4096-float vector add (local 64), then GEMM, fill, read-back; %d interleaved "
             "pairs, median; %ld kernel events in the trace",
             sz->e2e_launches, pairs, kernels);
    bench_report(fig, (mt - mu) * 1e6 / n, "us", BENCH_AT_MOST, 1.0, note);
    bench_report("e2e.pocl.untraced_us_per_launch", mu * 1e6 / n, "us", BENCH_INFO, 0, NULL);
    bench_report("e2e.pocl.traced_us_per_launch", mt * 1e6 / n, "us", BENCH_INFO, 0, NULL);
    free(u), free(t);
}
