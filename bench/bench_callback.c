/* bench_callback.c: the callback-cost figures: what devtrace adds to a runtime call on
 * the paths where devtrace owns the callback.
 *
 * OpenCL layer: clInitLayer is given a fake target dispatch whose clSetKernelArg does
 * nothing (so the driver's own work is excluded), and the program-side call goes
 * through the dispatch table the layer returns, as the ICD loader's does. The same
 * loop of calls is timed with the layer idle (no session) and with a session recording
 * (each call a runtime event in the store), alternately, and the median of the
 * per-repetition differences is the cost added per call. At 16 threads each thread's
 * CPU time is summed (the machines have 2 cores: wall time would measure the
 * scheduler) and divided by the calls.
 *
 * ROCtracer: the enter/exit path through the emulated runtime, when the backend exists,
 * and its two parts: the emulator's dispatch to a callback, and devtrace's callback.
 *
 * Both are taken through libdevtrace.so, the library programs load (`devtrace record`
 * preloads it), opened with dlopen and used through its public functions only, not through
 * the static archive the rest of the bench links: in the shared library a thread-local
 * access is a call to __tls_get_addr, which the static link turns into one instruction
 * (measured: 55 to 58 ns added per ROCtracer call through the shared library against 45 to
 * 52 through the archive, before the callbacks pinned their thread-local addresses). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "core/hostclock.h"

#if defined(DT_HAVE_OPENCL) && __has_include(<CL/cl_layer.h>)
#define BENCH_HAVE_OPENCL_LAYER 1
#include "backends/opencl_layer.h"
#include "opencl_fake.h" /* tests/emu */
#endif

#define MT_THREADS 16

/* The targets: the cost a traced call adds over one clock_gettime in a call (the reference,
 * measured on as many threads in the same repetition), at 1 thread and at 16. */
#define OPENCL_1T_MAX_RATIO 5.5
#define OPENCL_16T_MAX_RATIO 6.5
#define ROCTRACER_1T_MAX_RATIO 4.5
#define ROCTRACER_16T_MAX_RATIO 5.0

#include <dlfcn.h>

/* libdevtrace.so's public functions (shared_load). */
static struct {
    void (*config_init)(devtrace_config *cfg);
    devtrace_session *(*open)(const devtrace_config *cfg, devtrace_error *err);
    int (*start)(devtrace_session *s);
    int (*stop)(devtrace_session *s);
    size_t (*drain)(devtrace_session *s, devtrace_event_cb cb, void *user);
    const char *(*backend_name)(const devtrace_session *s);
    const char *(*unavailable_reason)(const devtrace_session *s);
    void (*close)(devtrace_session *s);
    void *init_layer; /* clInitLayer, when the library has the OpenCL layer */
    int loaded;
} lib;

#define SHARED_SYM(field, name)                                    \
    do {                                                           \
        void *f_ = dlsym(h, name);                                 \
        if (!f_) {                                                 \
            snprintf(why, sizeof why, "%s has no %s", path, name); \
            return why;                                            \
        }                                                          \
        memcpy(&lib.field, &f_, sizeof f_);                        \
    } while (0)

/* Opens libdevtrace.so at path (once); NULL, or why it could not. */
static const char *shared_load(const char *path)
{
    static char why[512];
    if (lib.loaded)
        return lib.loaded > 0 ? NULL : why;
    lib.loaded = -1;
    void *h = path && *path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!h) {
        const char *e = path && *path ? dlerror() : "this build has no shared library";
        snprintf(why, sizeof why, "cannot load %s: %s", path && *path ? path : "libdevtrace.so",
                 e ? e : "unknown error");
        return why;
    }
    SHARED_SYM(config_init, "devtrace_config_init");
    SHARED_SYM(open, "devtrace_open");
    SHARED_SYM(start, "devtrace_start");
    SHARED_SYM(stop, "devtrace_stop");
    SHARED_SYM(drain, "devtrace_drain");
    SHARED_SYM(backend_name, "devtrace_backend_name");
    SHARED_SYM(unavailable_reason, "devtrace_unavailable_reason");
    SHARED_SYM(close, "devtrace_close");
    lib.init_layer = dlsym(h, "clInitLayer");
    lib.loaded = 1;
    return NULL;
}

/* A session of the shared library recording with backend, or NULL (why says why). */
static devtrace_session *shared_recording(const char *backend, char *why, size_t whylen)
{
    devtrace_config cfg;
    lib.config_init(&cfg);
    cfg.backend = backend;
    cfg.max_events = UINT64_MAX / 2;
    devtrace_error err;
    devtrace_session *s = lib.open(&cfg, &err);
    if (!s || strcmp(lib.backend_name(s), backend) != 0 || lib.start(s) != 0) {
        snprintf(why, whylen, "the %s backend would not record: %.400s", backend,
                 s ? lib.unavailable_reason(s) : err.message);
        lib.close(s);
        return NULL;
    }
    return s;
}

/* Stops and closes a recording session; with count, first finalises it and returns the
 * events it kept (for the note: that the calls were recorded). */
static uint64_t shared_finish(devtrace_session *s, int count)
{
    lib.stop(s);
    uint64_t n = count ? (uint64_t)lib.drain(s, NULL, NULL) : 0;
    lib.close(s);
    return n;
}

#if defined(BENCH_HAVE_OPENCL_LAYER) || (defined(DT_HAVE_ROCTRACER) && defined(DT_BENCH_ROCTRACER_EMU))

/* ---- per-thread CPU time per call, at 1 thread or many ---- */

/* Runs calls calls of a loop on this thread and returns the thread's CPU ns for them. */
typedef uint64_t (*loop_fn)(const void *ctx, uint64_t calls);

/* The figure whose component the loops now timed belong to, when it is to be slowed
 * (bench_slow_cpu): set only around the recording runs. */
static const char *volatile slowed_region;

typedef struct loop_arg {
    loop_fn run;
    const void *ctx;
    uint64_t calls;
    pthread_barrier_t *start;
    uint64_t cpu_ns;
} loop_arg;

static void *loop_thread(void *p)
{
    loop_arg *a = p;
    pthread_barrier_wait(a->start);
    a->cpu_ns = a->run(a->ctx, a->calls);
    return NULL;
}

/* CPU ns per call over nthreads threads (1: the calling thread), each making calls calls. */
static double ns_per_call(loop_fn run, const void *ctx, int nthreads, uint64_t calls)
{
    if (nthreads == 1)
        return (double)run(ctx, calls) / (double)calls;
    pthread_t tids[MT_THREADS];
    loop_arg args[MT_THREADS];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)nthreads);
    for (int i = 0; i < nthreads; i++) {
        args[i] = (loop_arg){run, ctx, calls, &start, 0};
        if (pthread_create(&tids[i], NULL, loop_thread, &args[i]) != 0) {
            fprintf(stderr, "bench: callback: could not start %d threads\n", nthreads);
            exit(1);
        }
    }
    uint64_t total = 0;
    for (int i = 0; i < nthreads; i++) {
        pthread_join(tids[i], NULL);
        total += args[i].cpu_ns;
    }
    pthread_barrier_destroy(&start);
    return (double)total / (double)(calls * (uint64_t)nthreads);
}

/* The reference of the callback targets: a call through a function pointer that reads
 * CLOCK_MONOTONIC_RAW once (what a traced call does at least twice when the TSC is not
 * used), timed as the figures are, on as many threads, in the same repetition. */
static void read_clock_once(uint64_t *sum)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    *sum += (uint64_t)ts.tv_nsec;
}
static void (*volatile clock_call)(uint64_t *sum) = read_clock_once;

static uint64_t run_clock_calls(const void *ctx, uint64_t calls)
{
    (void)ctx;
    uint64_t sum = 0, t0 = bench_thread_cpu_ns();
    for (uint64_t i = 0; i < calls; i++)
        clock_call(&sum);
    bench_keep(&sum);
    return bench_thread_cpu_ns() - t0;
}

static double clock_ns_per_call(int nthreads, uint64_t calls)
{
    return ns_per_call(run_clock_calls, NULL, nthreads, calls);
}

/* The judged figure of a callback: its cost per call over the reference's, the best of the
 * repetitions' ratios (bench_best); the cost itself is reported beside it (information). */
static void report_vs_clock(const char *name, const double *ratio, int reps, double max_ratio, const char *note)
{
    char figure[64];
    snprintf(figure, sizeof figure, "%s.vs_clock_read", name);
    bench_report(figure, bench_best(ratio, reps, BENCH_AT_MOST), "ratio", BENCH_AT_MOST, max_ratio, note);
}

#endif

static void unmeasurable_vs_clock(const char *name, const char *unit, double max_ratio, const char *why)
{
    char figure[64];
    bench_unmeasurable(name, unit, BENCH_INFO, 0, "%s", why);
    snprintf(figure, sizeof figure, "%s.vs_clock_read", name);
    bench_unmeasurable(figure, "ratio", BENCH_AT_MOST, max_ratio, "%s", why);
}

#ifdef BENCH_HAVE_OPENCL_LAYER

static cl_int CL_API_CALL stub_set_kernel_arg(cl_kernel kernel, cl_uint index, size_t size, const void *value)
{
    bench_keep(value);
    return CL_SUCCESS;
}

static cl_icd_dispatch fake_target;
static const cl_icd_dispatch *volatile layer_table;  /* the layer's wrappers */
static const cl_icd_dispatch *volatile direct_table; /* the fake target itself */

static uint64_t run_calls(const void *ctx, uint64_t calls)
{
    const cl_icd_dispatch *table = ctx;
    cl_kernel kernel = (cl_kernel)(uintptr_t)0x1000;
    int value = 0;
    uint64_t t0 = bench_thread_cpu_ns();
    for (uint64_t i = 0; i < calls; i++)
        table->clSetKernelArg(kernel, 0, sizeof value, &value);
    if (slowed_region)
        bench_slow_cpu(slowed_region, t0);
    return bench_thread_cpu_ns() - t0;
}

static void measure_opencl(const char *name, int nthreads, uint64_t calls, int reps, double max_ratio)
{
    double *added = calloc((size_t)reps, sizeof *added), *idle = calloc((size_t)reps, sizeof *idle);
    double *on = calloc((size_t)reps, sizeof *on), *ratio = calloc((size_t)reps, sizeof *ratio);
    double *ref = calloc((size_t)reps, sizeof *ref);
    char figure[64], note[320];
    uint64_t events = 0;
    for (int i = 0; added && idle && on && ratio && ref && i < reps; i++) {
        ref[i] = clock_ns_per_call(nthreads, calls);
        double direct = ns_per_call(run_calls, direct_table, nthreads, calls);
        double off = ns_per_call(run_calls, layer_table, nthreads, calls);
        char why[512];
        devtrace_session *s = shared_recording("opencl", why, sizeof why);
        if (!s) {
            unmeasurable_vs_clock(name, "ns/call", max_ratio, why);
            free(added), free(idle), free(on), free(ratio), free(ref);
            return;
        }
        slowed_region = name;
        on[i] = ns_per_call(run_calls, layer_table, nthreads, calls);
        slowed_region = NULL;
        uint64_t kept = shared_finish(s, i == reps - 1);
        if (i == reps - 1)
            events = kept;
        added[i] = on[i] - off;
        idle[i] = off - direct;
        ratio[i] = added[i] / ref[i];
    }
    if (!added || !idle || !on || !ratio || !ref) {
        unmeasurable_vs_clock(name, "ns/call", max_ratio, "out of memory");
        free(added), free(idle), free(on), free(ratio), free(ref);
        return;
    }
    snprintf(note, sizeof note,
             "clSetKernelArg through libdevtrace.so's layer to a no-op target, %d thread%s x %llu calls, "
             "recording vs idle, %llu events in the last repetition's trace, median of %d",
             nthreads, nthreads > 1 ? "s" : "", (unsigned long long)calls, (unsigned long long)events, reps);
    report_vs_clock(name, ratio, reps, max_ratio,
                    "the cost added per call over one clock_gettime(CLOCK_MONOTONIC_RAW) in a call, same threads, "
                    "same repetition, per-thread CPU time; the best of the repetitions");
    bench_report(name, bench_median(added, reps), "ns/call", BENCH_INFO, 0, note);
    snprintf(figure, sizeof figure, "%s.reference", name);
    bench_report(figure, bench_median(ref, reps), "ns/call", BENCH_INFO, 0,
                 "one clock_gettime(CLOCK_MONOTONIC_RAW) in a call through a function pointer, same threads");
    snprintf(figure, sizeof figure, "%s.recording", name);
    bench_report(figure, bench_median(on, reps), "ns/call", BENCH_INFO, 0,
                 "a whole call through the layer while recording (the no-op target included)");
    snprintf(figure, sizeof figure, "%s.idle", name);
    bench_report(figure, bench_median(idle, reps), "ns/call", BENCH_INFO, 0,
                 "the layer with no session recording, over calling the target directly");
    free(added), free(idle), free(on), free(ratio), free(ref);
}

/* ---- launches: clEnqueueNDRangeKernel on a profiling queue, a clFinish every 256 ----
 *
 * The fake target answers what the layer asks about a launch: the queue (its context,
 * its device, CL_QUEUE_PROFILING_ENABLE), the kernel's name, and each command's QUEUED,
 * START and END. Its commands are complete as soon as they are enqueued, and its events
 * are slots of a ring, never freed. The same stub work (a clock read and the slot
 * written) is done with or without an event asked for, so that only devtrace's work
 * differs between the runs compared: the runtime event, the launch described, the
 * pending record, and at the clFinish the three profiling reads, the device event and
 * the release. The device's other queries are refused (a device with no properties). */

#define FAKE_QUEUE ((cl_command_queue)(uintptr_t)0x3000)
#define FAKE_KERNEL ((cl_kernel)(uintptr_t)0x5000)
#define FAKE_KERNEL_FAILING ((cl_kernel)(uintptr_t)0x5100) /* its launches fail: no event, no device event */
#define FAKE_EVENTS 4096u                                  /* more than the commands pending between two clFinish */
#define LAUNCHES_PER_FINISH 256u

typedef struct fake_command {
    cl_ulong queued, start, end;
} fake_command;

static fake_command fake_commands[FAKE_EVENTS];
static unsigned fake_next;

static cl_ulong fake_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts); /* PoCL's profiling clock, and the layer's host clock */
    return (cl_ulong)ts.tv_sec * 1000000000u + (cl_ulong)ts.tv_nsec;
}

static cl_int CL_API_CALL stub_enqueue_nd_range(cl_command_queue q, cl_kernel kernel, cl_uint work_dim,
                                                const size_t *offset, const size_t *global, const size_t *local,
                                                cl_uint nwait, const cl_event *wait, cl_event *event)
{
    (void)q, (void)work_dim, (void)offset, (void)global, (void)local, (void)nwait, (void)wait;
    fake_command *c = &fake_commands[fake_next++ % FAKE_EVENTS];
    c->queued = fake_clock_ns();
    c->start = c->queued + 100;
    c->end = c->queued + 200;
    bench_keep(c);
    if (kernel == FAKE_KERNEL_FAILING)
        return CL_INVALID_KERNEL_ARGS;
    if (event)
        *event = (cl_event)(void *)c;
    return CL_SUCCESS;
}

static cl_int CL_API_CALL stub_event_profiling(cl_event event, cl_profiling_info what, size_t size, void *value,
                                               size_t *size_ret)
{
    const fake_command *c = (const fake_command *)(void *)event;
    cl_ulong v = what == CL_PROFILING_COMMAND_QUEUED  ? c->queued
                 : what == CL_PROFILING_COMMAND_START ? c->start
                 : what == CL_PROFILING_COMMAND_END   ? c->end
                                                      : 0;
    if (!v || size < sizeof v)
        return CL_INVALID_VALUE;
    memcpy(value, &v, sizeof v);
    if (size_ret)
        *size_ret = sizeof v;
    return CL_SUCCESS;
}

static cl_int CL_API_CALL stub_event_info(cl_event event, cl_event_info what, size_t size, void *value,
                                          size_t *size_ret)
{
    (void)event;
    cl_int complete = CL_COMPLETE;
    if (what != CL_EVENT_COMMAND_EXECUTION_STATUS || size < sizeof complete)
        return CL_INVALID_VALUE;
    memcpy(value, &complete, sizeof complete);
    if (size_ret)
        *size_ret = sizeof complete;
    return CL_SUCCESS;
}

static cl_int CL_API_CALL stub_event_ref(cl_event event)
{
    bench_keep(event);
    return CL_SUCCESS;
}

static uint64_t run_launches(const cl_icd_dispatch *table, cl_kernel kernel, uint64_t launches)
{
    size_t global = 4096, local = 64;
    uint64_t t0 = bench_thread_cpu_ns();
    for (uint64_t i = 1; i <= launches; i++) {
        table->clEnqueueNDRangeKernel(FAKE_QUEUE, kernel, 1, NULL, &global, &local, 0, NULL, NULL);
        if (i % LAUNCHES_PER_FINISH == 0)
            table->clFinish(FAKE_QUEUE);
    }
    return bench_thread_cpu_ns() - t0;
}

/* Per launch on the launching thread: devtrace recording over the layer idle (the median
 * of reps alternations), and the events the last repetition's trace kept. */
static double launch_added_ns(cl_kernel kernel, uint64_t launches, int reps, uint64_t *events, char *why, size_t whylen)
{
    double *added = calloc((size_t)reps, sizeof *added);
    double result = -1;
    for (int i = 0; added && i < reps; i++) {
        double off = (double)run_launches(layer_table, kernel, launches) / (double)launches;
        devtrace_session *s = shared_recording("opencl", why, whylen);
        if (!s)
            break;
        double on = (double)run_launches(layer_table, kernel, launches) / (double)launches;
        uint64_t kept = shared_finish(s, i == reps - 1);
        added[i] = on - off;
        if (i == reps - 1) {
            *events = kept;
            result = bench_median(added, reps);
        }
    }
    free(added);
    return result;
}

/* One launch figure: what describes the launches measured, then how they were measured. */
static int report_launch(const char *name, cl_kernel kernel, uint64_t launches, int reps, const char *what)
{
    char why[512], note[480];
    uint64_t events = 0;
    double added = launch_added_ns(kernel, launches, reps, &events, why, sizeof why);
    if (added < 0) {
        bench_unmeasurable(name, "ns/launch", BENCH_INFO, 0, "%s", why);
        return -1;
    }
    snprintf(note, sizeof note,
             "%s; %llu launches, a clFinish every %u, launching thread's CPU, recording less idle, %llu events "
             "kept, median of %d",
             what, (unsigned long long)launches, LAUNCHES_PER_FINISH, (unsigned long long)events, reps);
    bench_report(name, added, "ns/launch", BENCH_INFO, 0, note);
    return 0;
}

static void measure_opencl_launch(uint64_t launches, int reps)
{
    if (report_launch("callback.opencl.launch", FAKE_KERNEL, launches, reps,
                      "clEnqueueNDRangeKernel through libdevtrace.so's layer to a fake target whose commands "
                      "complete at once (a runtime event per call, a kernel per launch)") != 0)
        return;
    /* The same with launches that fail: the launch described and its runtime event (with
     * the status), no device event. */
    report_launch("callback.opencl.launch.runtime_only", FAKE_KERNEL_FAILING, launches, reps,
                  "launches the fake target fails: the launch described and its runtime event, no device event "
                  "(callback.opencl.launch less this: the device event's part)");
}

static int install_layer(void)
{
    memset(&fake_target, 0, sizeof fake_target);
    fake_target.clSetKernelArg = stub_set_kernel_arg;
    fake_target.clEnqueueNDRangeKernel = stub_enqueue_nd_range;
    fake_target.clGetEventProfilingInfo = stub_event_profiling;
    fake_target.clGetEventInfo = stub_event_info;
    fake_target.clRetainEvent = stub_event_ref;
    fake_target.clReleaseEvent = stub_event_ref;
    fake_cl_install_objects(&fake_target);
    fake_cl_queue_properties = CL_QUEUE_PROFILING_ENABLE;
    cl_uint entries = 0;
    const cl_icd_dispatch *layer = NULL;
    cl_int(CL_API_CALL * init_layer)(cl_uint, const cl_icd_dispatch *, cl_uint *, const cl_icd_dispatch **);
    if (!lib.init_layer)
        return -1;
    memcpy(&init_layer, &lib.init_layer, sizeof init_layer);
    if (init_layer((cl_uint)(sizeof fake_target / sizeof(void *)), &fake_target, &entries, &layer) != CL_SUCCESS ||
        !layer || layer->clSetKernelArg == stub_set_kernel_arg)
        return -1;
    layer_table = layer;
    direct_table = &fake_target;
    return 0;
}

static void bench_opencl_layer(const bench_sizes *sz, const char *library)
{
    const char *why = shared_load(library);
    if (!why && install_layer() != 0)
        why = lib.init_layer ? "clInitLayer refused the fake target" : "libdevtrace.so has no clInitLayer";
    if (why) {
        unmeasurable_vs_clock("callback.opencl.1t", "ns/call", OPENCL_1T_MAX_RATIO, why);
        unmeasurable_vs_clock("callback.opencl.16t", "ns/call", OPENCL_16T_MAX_RATIO, why);
        bench_unmeasurable("callback.opencl.launch", "ns/launch", BENCH_INFO, 0, "%s", why);
        return;
    }
    measure_opencl("callback.opencl.1t", 1, sz->callback_calls, sz->reps, OPENCL_1T_MAX_RATIO);
    measure_opencl("callback.opencl.16t", MT_THREADS, sz->callback_calls_mt, sz->reps, OPENCL_16T_MAX_RATIO);
    measure_opencl_launch(sz->callback_calls / 8, sz->reps);
}

#else

static void bench_opencl_layer(const bench_sizes *sz, const char *library)
{
    (void)sz, (void)library;
    static const char why[] = "this build has no OpenCL backend (the OpenCL headers CL/cl_layer.h were not found)";
    unmeasurable_vs_clock("callback.opencl.1t", "ns/call", OPENCL_1T_MAX_RATIO, why);
    unmeasurable_vs_clock("callback.opencl.16t", "ns/call", OPENCL_16T_MAX_RATIO, why);
    bench_unmeasurable("callback.opencl.launch", "ns/launch", BENCH_INFO, 0, "%s", why);
}

#endif

/* ---- ROCtracer: the HIP_API enter/exit callbacks through the emulated runtime ---- */

#if defined(DT_HAVE_ROCTRACER) && defined(DT_BENCH_ROCTRACER_EMU)

#include "wl.h"

typedef int (*devemu_call_fn)(int generic);
typedef void (*roc_api_callback_fn)(uint32_t domain, uint32_t cid, const void *data, void *arg);

/* The emulator's own roctracer_enable/disable_domain_callback: a subscriber that does
 * nothing measures what the stand-in runtime spends to call one. */
static struct {
    int (*enable)(uint32_t domain, roc_api_callback_fn callback, void *arg);
    int (*disable)(uint32_t domain);
} roc_emu;

#define ROC_DOMAIN_HIP_API 3u

static void roc_nothing(uint32_t domain, uint32_t cid, const void *data, void *arg)
{
    (void)domain, (void)cid, (void)data, (void)arg;
}

static uint64_t roc_run(const void *ctx, uint64_t calls)
{
    const devemu_call_fn *call = ctx;
    uint64_t t0 = bench_thread_cpu_ns();
    for (uint64_t i = 0; i < calls; i++)
        (*call)(WL_CALL_GET_DEVICE);
    if (slowed_region)
        bench_slow_cpu(slowed_region, t0);
    return bench_thread_cpu_ns() - t0;
}

/* Per repetition, alternately: the emulated call with no subscriber (off), with a no-op
 * HIP_API callback (the stand-in's dispatch), with a session recording (on). The figure is
 * on - off; its two parts, on - no-op (devtrace's) and no-op - off (the emulator's), are
 * reported beside it. */
static void roc_measure(const char *name, devemu_call_fn call, int nthreads, uint64_t calls, int reps, double max_ratio)
{
    double *added = calloc((size_t)reps, sizeof *added), *off = calloc((size_t)reps, sizeof *off);
    double *dispatch = calloc((size_t)reps, sizeof *dispatch), *own = calloc((size_t)reps, sizeof *own);
    double *ratio = calloc((size_t)reps, sizeof *ratio), *ref = calloc((size_t)reps, sizeof *ref);
    char note[320], figure[64];
    uint64_t events = 0;
    int have_noop = roc_emu.enable && roc_emu.disable;
    if (!added || !off || !dispatch || !own || !ratio || !ref) {
        unmeasurable_vs_clock(name, "ns/call", max_ratio, "out of memory");
        free(added), free(off), free(dispatch), free(own), free(ratio), free(ref);
        return;
    }
    for (int i = 0; i < reps; i++) {
        ref[i] = clock_ns_per_call(nthreads, calls);
        off[i] = ns_per_call(roc_run, &call, nthreads, calls);
        double noop = off[i];
        if (have_noop && roc_emu.enable(ROC_DOMAIN_HIP_API, roc_nothing, NULL) == 0) {
            noop = ns_per_call(roc_run, &call, nthreads, calls);
            roc_emu.disable(ROC_DOMAIN_HIP_API);
        } else {
            have_noop = 0;
        }
        char why[512];
        devtrace_session *s = shared_recording("roctracer", why, sizeof why);
        if (!s) {
            unmeasurable_vs_clock(name, "ns/call", max_ratio, why);
            free(added), free(off), free(dispatch), free(own), free(ratio), free(ref);
            return;
        }
        slowed_region = name;
        double on = ns_per_call(roc_run, &call, nthreads, calls);
        slowed_region = NULL;
        uint64_t kept = shared_finish(s, i == reps - 1);
        if (i == reps - 1)
            events = kept;
        added[i] = on - off[i];
        dispatch[i] = noop - off[i];
        own[i] = on - noop;
        ratio[i] = added[i] / ref[i];
    }
    snprintf(note, sizeof note,
             "hipGetDevice through the ROCtracer emulator's runtime, %d thread%s x %llu calls, a libdevtrace.so "
             "session recording vs none (%llu events in the last trace), median of %d; the emulated call alone: "
             "%.0f ns; includes the emulator's dispatch (.dispatch)",
             nthreads, nthreads > 1 ? "s" : "", (unsigned long long)calls, (unsigned long long)events, reps,
             bench_median(off, reps));
    report_vs_clock(name, ratio, reps, max_ratio,
                    "the cost added per call (the emulator's dispatch included) over one "
                    "clock_gettime(CLOCK_MONOTONIC_RAW) in a call, same threads, same repetition, per-thread CPU "
                    "time; the best of the repetitions");
    bench_report(name, bench_median(added, reps), "ns/call", BENCH_INFO, 0, note);
    snprintf(figure, sizeof figure, "%s.reference", name);
    bench_report(figure, bench_median(ref, reps), "ns/call", BENCH_INFO, 0,
                 "one clock_gettime(CLOCK_MONOTONIC_RAW) in a call through a function pointer, same threads");
    if (have_noop) {
        snprintf(figure, sizeof figure, "%s.dispatch", name);
        bench_report(figure, bench_median(dispatch, reps), "ns/call", BENCH_INFO, 0,
                     "the emulator calling a HIP_API callback that does nothing (enter and exit) vs no callback: "
                     "the stand-in runtime's part of the figure; a difference of two timed runs, so with more "
                     "threads than cores its noise can exceed it and it can come out below 0");
        snprintf(figure, sizeof figure, "%s.devtrace", name);
        bench_report(figure, bench_median(own, reps), "ns/call", BENCH_INFO, 0,
                     "a session recording vs the do-nothing callback: devtrace's part of the figure");
    }
    free(added), free(off), free(dispatch), free(own), free(ratio), free(ref);
}

static void bench_roctracer(const bench_sizes *sz, const char *library)
{
    const char *why = shared_load(library);
    if (why) {
        unmeasurable_vs_clock("callback.roctracer.1t", "ns/call", ROCTRACER_1T_MAX_RATIO, why);
        unmeasurable_vs_clock("callback.roctracer.16t", "ns/call", ROCTRACER_16T_MAX_RATIO, why);
        return;
    }
    setenv("DEVTRACE_ROCTRACER_LIBRARY", DT_BENCH_ROCTRACER_EMU, 1);
    void *h = dlopen(DT_BENCH_ROCTRACER_EMU, RTLD_NOW | RTLD_GLOBAL);
    devemu_call_fn call = h ? (devemu_call_fn)(uintptr_t)dlsym(h, "devemu_call") : NULL;
    if (h) {
        void *en = dlsym(h, "roctracer_enable_domain_callback"), *dis = dlsym(h, "roctracer_disable_domain_callback");
        memcpy(&roc_emu.enable, &en, sizeof en);
        memcpy(&roc_emu.disable, &dis, sizeof dis);
    }
    if (!call) {
        const char *e = dlerror();
        char cannot[512];
        snprintf(cannot, sizeof cannot, "cannot load the emulator %s: %s", DT_BENCH_ROCTRACER_EMU,
                 e ? e : "no devemu_call");
        unmeasurable_vs_clock("callback.roctracer.1t", "ns/call", ROCTRACER_1T_MAX_RATIO, cannot);
        unmeasurable_vs_clock("callback.roctracer.16t", "ns/call", ROCTRACER_16T_MAX_RATIO, cannot);
        return;
    }
    roc_measure("callback.roctracer.1t", call, 1, sz->callback_calls / 4, sz->reps, ROCTRACER_1T_MAX_RATIO);
    roc_measure("callback.roctracer.16t", call, MT_THREADS, sz->callback_calls_mt / 4, sz->reps,
                ROCTRACER_16T_MAX_RATIO);
}

#else

static void bench_roctracer(const bench_sizes *sz, const char *library)
{
    (void)sz, (void)library;
#ifndef DT_HAVE_ROCTRACER
    static const char why[] = "not measurable yet: no ROCtracer backend in this build (src/backends/roctracer.c)";
#else
    static const char why[] = "the ROCtracer emulator (tests/emu, target roctracer_emu) is not part of this build: "
                              "configure with -DDEVTRACE_BUILD_TESTS=ON";
#endif
    unmeasurable_vs_clock("callback.roctracer.1t", "ns/call", ROCTRACER_1T_MAX_RATIO, why);
    unmeasurable_vs_clock("callback.roctracer.16t", "ns/call", ROCTRACER_16T_MAX_RATIO, why);
}

#endif

/* One read of the clock a runtime event's start and end come from when the TSC is not
 * used (the OpenCL layer's CLOCK_MONOTONIC_RAW), and one read of the TSC (what a traced
 * call reads instead where the kernel's clocksource is tsc): two per traced call,
 * measured in the same run. */
static void bench_clock_read(void)
{
    enum { N = 2000000 };
    double v[5];
    for (int r = 0; r < 5; r++) {
        struct timespec ts;
        uint64_t sum = 0, t0 = bench_now_ns();
        for (int i = 0; i < N; i++) {
            clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
            sum += (uint64_t)ts.tv_nsec;
        }
        v[r] = (double)(bench_now_ns() - t0) / N;
        bench_keep(&sum);
    }
    bench_report("callback.clock_read", bench_median(v, 5), "ns", BENCH_INFO, 0,
                 "one clock_gettime(CLOCK_MONOTONIC_RAW): a traced call reads it twice (start, end) when the TSC "
                 "is not used ($DEVTRACE_HOST_CLOCK)");
#if DT_HAVE_TSC
    for (int r = 0; r < 5; r++) {
        uint64_t sum = 0, t0 = bench_now_ns();
        for (int i = 0; i < N; i++)
            sum += dt_tsc_read();
        v[r] = (double)(bench_now_ns() - t0) / N;
        bench_keep(&sum);
    }
    bench_report("callback.tsc_read", bench_median(v, 5), "ns", BENCH_INFO, 0,
                 "one rdtsc: what a traced call reads instead, twice, where the kernel's clocksource is tsc");
#endif
}

void bench_callback(const bench_sizes *sz, const bench_paths *paths)
{
    bench_clock_read();
    bench_opencl_layer(sz, paths->library);
    bench_roctracer(sz, paths->library);
}
