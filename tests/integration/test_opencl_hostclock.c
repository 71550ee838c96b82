/* test_opencl_hostclock.c: a traced OpenCL call's runtime event lies where the host clock
 * says the call was, whether the layer stamped it with the TSC or with CLOCK_MONOTONIC_RAW.
 *
 * The layer is given a fake target dispatch (no OpenCL platform needed; links the static
 * library for the session's clock map). The test reads CLOCK_MONOTONIC_RAW before and
 * after each of 2000 clSetKernelArg calls through the layer; after the drain it maps both
 * readings to CLOCK_REALTIME with the session's own map (the one that placed the events)
 * and checks that each call's event lies within [before - bound, after + bound]:
 *   argv[1] "clock": DEVTRACE_HOST_CLOCK=clock, bound 0 (the same clock, read inside);
 *   argv[1] "tsc":   DEVTRACE_HOST_CLOCK=tsc, bound TSC_BOUND_NS (the ticks are converted
 *                    from paired samples: the bound covers the pairing window); skipped
 *                    where there is no TSC (not x86-64).
 * Exit 0: pass; 1: a check failed; 77: skipped. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/opencl_layer.h"
#include "opencl_test.h"

#define CALLS 2000
#define TSC_BOUND_NS 250

static cl_int CL_API_CALL stub_set_kernel_arg(cl_kernel kernel, cl_uint index, size_t size, const void *value)
{
    (void)kernel, (void)index, (void)size, (void)value;
    return CL_SUCCESS;
}

static uint64_t raw_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t before[CALLS], after[CALLS];
static devtrace_event calls[CALLS];
static int ncalls;

static void collect_calls(const devtrace_event *ev, const char *name, void *user)
{
    (void)user;
    if (ev->kind == DEVTRACE_KIND_RUNTIME && name && strcmp(name, "clSetKernelArg") == 0) {
        CHECK(ncalls < CALLS, "more than %d clSetKernelArg events", CALLS);
        calls[ncalls++] = *ev;
    }
}

int main(int argc, char **argv)
{
    int tsc = argc > 1 && strcmp(argv[1], "tsc") == 0;
    int64_t bound = tsc ? TSC_BOUND_NS : 0;
    setenv("DEVTRACE_HOST_CLOCK", tsc ? "tsc" : "clock", 1);

    static cl_icd_dispatch target;
    target.clSetKernelArg = stub_set_kernel_arg;
    cl_uint entries = 0;
    const cl_icd_dispatch *layer = NULL;
    CHECK(clInitLayer((cl_uint)(sizeof target / sizeof(void *)), &target, &entries, &layer) == CL_SUCCESS && layer,
          "clInitLayer refused the fake target");

    devtrace_config cfg;
    devtrace_config_init(&cfg);
    cfg.backend = "opencl";
    devtrace_error err;
    dt_session *s = devtrace_open(&cfg, &err);
    if (!s && tsc && !DT_HAVE_TSC) {
        printf("SKIPPED: %s\n", err.message);
        return SKIP_EXIT;
    }
    CHECK(s, "devtrace_open: %s", err.message);
    CHECK(devtrace_start(s) == 0, "devtrace_start");
    CHECK(s->ticks.on == tsc, "stamping with %s expected", tsc ? "the TSC" : "the host clock");

    cl_kernel kernel = (cl_kernel)(uintptr_t)0x1000;
    int value = 0;
    for (int i = 0; i < CALLS; i++) {
        before[i] = raw_ns();
        layer->clSetKernelArg(kernel, 0, sizeof value, &value);
        after[i] = raw_ns();
    }
    CHECK(devtrace_stop(s) == 0, "devtrace_stop");
    devtrace_drain(s, collect_calls, NULL);
    CHECK(ncalls == CALLS, "%d clSetKernelArg events, %d calls", ncalls, CALLS);

    /* One thread, calls in sequence: the time order is the call order. */
    int64_t worst_early = INT64_MIN, worst_late = INT64_MIN;
    for (int i = 0; i < CALLS; i++) {
        int64_t lo = (int64_t)dt_clock_map_to_realtime(&s->clock, before[i]);
        int64_t hi = (int64_t)dt_clock_map_to_realtime(&s->clock, after[i]);
        int64_t early = lo - (int64_t)calls[i].start_ns, late = (int64_t)calls[i].end_ns - hi;
        if (early > worst_early)
            worst_early = early;
        if (late > worst_late)
            worst_late = late;
        CHECK(calls[i].end_ns >= calls[i].start_ns, "call %d ends before it starts", i);
        CHECK(early <= bound && late <= bound,
              "call %d: event [%" PRIu64 ", %" PRIu64 "] outside [%" PRId64 ", %" PRId64 "] by more than %" PRId64
              " ns",
              i, calls[i].start_ns, calls[i].end_ns, lo, hi, bound);
    }
    printf("%s: %d calls; the event starts at most %" PRId64 " ns before the reading before the call and ends at most "
           "%" PRId64 " ns after the reading after it (bound %" PRId64 " ns; negative: inside)\n",
           tsc ? "tsc" : "clock", CALLS, worst_early, worst_late, bound);
    devtrace_close(s);
    return 0;
}
