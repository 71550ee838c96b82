/* bench_kineto_group.c: devtrace-bench's "kineto" group: runs devtrace-bench-kineto (built
 * with the Kineto tests: bench/bench_kineto.cpp, linked with libkineto from the shared
 * snapshot) on the CUPTI emulator and the parity workload, and reports its figures: the
 * adaptor's added cost per op and per event against devtrace's own path, measured in its run
 * (docs/kineto.md). The judged figure: kineto.event_ratio (processTrace per event over
 * devtrace_write_chrome per event) at most 1.10. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#ifndef DT_BENCH_KINETO
#define DT_BENCH_KINETO ""
#endif
#ifndef DT_BENCH_KINETO_EMU
#define DT_BENCH_KINETO_EMU ""
#endif
#ifndef DT_BENCH_KINETO_WORKLOAD
#define DT_BENCH_KINETO_WORKLOAD ""
#endif

/* The value of "bench: NAME = VALUE" in out, NaN when absent. */
static double figure_of(const char *out, const char *name)
{
    char key[96];
    snprintf(key, sizeof key, "bench: %s = ", name);
    const char *p = strstr(out, key);
    return p ? strtod(p + strlen(key), NULL) : NAN;
}

void bench_kineto(const bench_sizes *sz, const bench_paths *paths)
{
    const char *fig = "kineto.event_ratio";
    if (!DT_BENCH_KINETO[0] || access(DT_BENCH_KINETO, X_OK) != 0) {
        bench_unmeasurable(fig, "ratio", BENCH_AT_MOST, 1.10,
                           "devtrace-bench-kineto was not built (it needs the Kineto tests: libkineto from the shared "
                           "snapshot, a C++20 compiler, libfmt-dev, and the CUPTI emulator)");
        return;
    }
    /* Ops for the per-op figure, runs of parity.wl for the per-event one (206 events a run). */
    const char *ops = strcmp(sz->mode, "smoke") == 0 ? "2000" : strcmp(sz->mode, "quick") == 0 ? "60000" : "200000";
    const char *runs = strcmp(sz->mode, "smoke") == 0 ? "2" : strcmp(sz->mode, "quick") == 0 ? "100" : "500";
    char reps[16], errpath[4096], out[4096], err[512];
    snprintf(reps, sizeof reps, "%d", sz->reps < 3 ? 3 : sz->reps);
    snprintf(errpath, sizeof errpath, "%s/kineto.err", paths->tmpdir);
    setenv("DEVTRACE_BACKEND", "cupti", 1);
    setenv("DEVTRACE_CUPTI_LIBRARY", DT_BENCH_KINETO_EMU, 1);
    char *argv[] = {
        DT_BENCH_KINETO, DT_BENCH_KINETO_EMU, DT_BENCH_KINETO_WORKLOAD, (char *)ops, (char *)runs, reps, NULL};
    int rc = bench_run_program(argv, 0, errpath, out, sizeof out, err, sizeof err);
    unlink(errpath);
    double ratio = figure_of(out, "kineto.event_ratio");
    if (rc != 0 || !isfinite(ratio)) {
        bench_unmeasurable(fig, "ratio", BENCH_AT_MOST, 1.10, "devtrace-bench-kineto failed (status %d): %s", rc,
                           err[0] ? err : "no figures");
        return;
    }
    char note[320];
    snprintf(note, sizeof note,
             "the adaptor (processTrace, names, args) %.0f ns/event vs devtrace_write_chrome %.0f ns/event (CPU time, "
             "medians of %s); "
             "the previous GenericTraceActivity way: %.0f ns/event",
             figure_of(out, "kineto.event_adaptor_ns"), figure_of(out, "kineto.event_devtrace_own_ns"), reps,
             figure_of(out, "kineto.event_generic_ns"));
    bench_report(fig, ratio, "ratio", BENCH_AT_MOST, 1.10, note);
    bench_report("kineto.event_adaptor_ns", figure_of(out, "kineto.event_adaptor_ns"), "ns", BENCH_INFO, 0, NULL);
    bench_report("kineto.event_devtrace_own_ns", figure_of(out, "kineto.event_devtrace_own_ns"), "ns", BENCH_INFO, 0,
                 NULL);
    bench_report("kineto.event_generic_ratio", figure_of(out, "kineto.event_generic_ratio"), "ratio", BENCH_INFO, 0,
                 "the previous way (one GenericTraceActivity per event, args in its map) / devtrace's own");
    bench_report("kineto.op_ratio", figure_of(out, "kineto.op_ratio"), "ratio", BENCH_INFO, 0,
                 "libkineto push+pop: what the adaptor adds / devtrace_push_external+pop_external");
    bench_report("kineto.op_added_ns", figure_of(out, "kineto.op_added_ns"), "ns", BENCH_INFO, 0, NULL);
}
