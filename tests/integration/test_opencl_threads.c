/* test_opencl_threads.c: the OpenCL backend with many threads enqueueing at once, and a
 * stop that finds commands still pending.
 *
 * The context, program and one shared queue are created before the session starts (the
 * layer forces profiling on queues whether or not a session records). Then each of
 * THREADS threads creates its own queue with the OpenCL 1.x clCreateCommandQueue, its own
 * kernel, and enqueues LAUNCHES slow kernels with NULL events, one with an event it
 * releases at once (before the command completes), and one on the shared queue; nobody
 * waits. The session stops right after the threads join: stop must wait for every
 * command and record it. Checks: one kernel event per launch, each paired by correlation
 * with exactly one clEnqueueNDRangeKernel runtime event, unique correlations, one runtime
 * event per OpenCL call made while recording (none for the calls before start or after
 * stop), one stream per queue, queue properties and property lists reading back as the
 * program asked, no loss counted. Meanwhile another thread keeps making OpenCL calls while
 * the stop runs (as a program does after a Ctrl-C, while devtrace's final flush reads back
 * what it enqueued): the stop's note counts them, at least one and at most the calls that
 * overlapped the stop.
 *
 * Exit 0: pass; 1: a check failed; 77: skipped, no OpenCL platform here. */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS /* clCreateCommandQueue */

#include <CL/cl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devtrace.h"
#include "opencl_test.h"

#ifndef DEVTRACE_LIBRARY_PATH
#error "DEVTRACE_LIBRARY_PATH (the path of libdevtrace.so) must be defined by the build"
#endif

#define THREADS 4
#define LAUNCHES 50
#define KERNELS_PER_THREAD (LAUNCHES + 2)
#define GLOBAL_SIZE 256u
#define MAX_EVENTS 4096

/* OpenCL calls made while the session records (CL) and outside it (CL_UNTRACED). */
static atomic_uint traced_calls;
#define CL(call) (atomic_fetch_add(&traced_calls, 1), (call))
#define CL_UNTRACED(call) (call)

static const char *kernel_source = "__kernel void spin(__global float *x)\n"
                                   "{ size_t i = get_global_id(0); float v = x[i];\n"
                                   "  for (int k = 0; k < 20000; k++) v = v * 0.999f + 1.0f;\n"
                                   "  x[i] = v; }\n";

typedef struct shared_state {
    cl_context context;
    cl_device_id device;
    cl_program program;
    cl_command_queue shared_queue;
} shared_state;

typedef struct worker {
    pthread_t thread;
    const shared_state *shared;
    cl_command_queue queue;
    cl_kernel kernel;
    cl_mem buffer;
} worker;

/* The caller thread: clGetDeviceInfo in a loop until told to end, counting the calls that
 * overlapped devtrace_stop (ended after it began, began before it returned). */
static atomic_int stop_begun, stop_ended, caller_quit;
static atomic_ullong calls_overlapping_stop;
static size_t caller_recorded; /* the caller's calls recorded (before the stop took effect) */

static void *caller_main(void *arg)
{
    const shared_state *sh = arg;
    while (!atomic_load(&caller_quit)) {
        int ended_before = atomic_load(&stop_ended);
        cl_uint units = 0;
        /* Not counted in traced_calls: its calls recorded are told apart by name (no other
         * thread calls clGetDeviceInfo while recording). */
        cl_int err = clGetDeviceInfo(sh->device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL);
        CHECK(err == CL_SUCCESS, "clGetDeviceInfo: %d", err);
        if (!ended_before && atomic_load(&stop_begun))
            atomic_fetch_add(&calls_overlapping_stop, 1);
    }
    return NULL;
}

/* The count in the stop's note of calls made while it ran, or 0 when there is no such note. */
static unsigned long long calls_in_stop_note(const devtrace_session *s)
{
    for (int i = 0; i < devtrace_note_count(s); i++) {
        const char *note = devtrace_note(s, i);
        unsigned long long n = 0;
        if (note && strstr(note, "were made while devtrace stopped recording") && sscanf(note, "%llu", &n) == 1)
            return n;
    }
    return 0;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    const shared_state *sh = w->shared;
    cl_int err;
    w->queue = CL(clCreateCommandQueue(sh->context, sh->device, 0, &err));
    CHECK(w->queue && err == CL_SUCCESS, "clCreateCommandQueue: %d", err);
    cl_command_queue_properties props = 99;
    err = CL(clGetCommandQueueInfo(w->queue, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL));
    CHECK(err == CL_SUCCESS && props == 0, "queue properties read back as %#llx, asked 0", (unsigned long long)props);
    w->kernel = CL(clCreateKernel(sh->program, "spin", &err));
    CHECK(w->kernel, "clCreateKernel: %d", err);
    w->buffer = CL(clCreateBuffer(sh->context, CL_MEM_READ_WRITE, GLOBAL_SIZE * sizeof(float), NULL, &err));
    CHECK(w->buffer, "clCreateBuffer: %d", err);
    err = CL(clSetKernelArg(w->kernel, 0, sizeof w->buffer, &w->buffer));
    CHECK(err == CL_SUCCESS, "clSetKernelArg: %d", err);
    size_t global = GLOBAL_SIZE;
    for (int i = 0; i < LAUNCHES; i++) {
        err = CL(clEnqueueNDRangeKernel(w->queue, w->kernel, 1, NULL, &global, NULL, 0, NULL, NULL));
        CHECK(err == CL_SUCCESS, "clEnqueueNDRangeKernel: %d", err);
    }
    cl_event mine = NULL;
    err = CL(clEnqueueNDRangeKernel(w->queue, w->kernel, 1, NULL, &global, NULL, 0, NULL, &mine));
    CHECK(err == CL_SUCCESS && mine, "clEnqueueNDRangeKernel with an event: %d", err);
    err = CL(clReleaseEvent(mine)); /* before the command completes: the layer keeps its own reference */
    CHECK(err == CL_SUCCESS, "clReleaseEvent: %d", err);
    err = CL(clEnqueueNDRangeKernel(sh->shared_queue, w->kernel, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(err == CL_SUCCESS, "clEnqueueNDRangeKernel on the shared queue: %d", err);
    return NULL;
}

/* Untraced set-up; returns -1 when this machine has no OpenCL platform. */
static int set_up(shared_state *sh)
{
    cl_platform_id platform;
    cl_uint n = 0;
    cl_int err;
    if (CL_UNTRACED(clGetPlatformIDs(1, &platform, &n)) != CL_SUCCESS || !n)
        return -1;
    if (CL_UNTRACED(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &sh->device, NULL)) != CL_SUCCESS)
        return -1;
    sh->context = CL_UNTRACED(clCreateContext(NULL, 1, &sh->device, NULL, NULL, &err));
    CHECK(sh->context, "clCreateContext: %d", err);
    const cl_queue_properties asked[] = {CL_QUEUE_PROPERTIES, 0, 0};
    sh->shared_queue = CL_UNTRACED(clCreateCommandQueueWithProperties(sh->context, sh->device, asked, &err));
    CHECK(sh->shared_queue, "clCreateCommandQueueWithProperties: %d", err);
    cl_queue_properties back[8] = {0};
    size_t size = 0;
    err = CL_UNTRACED(clGetCommandQueueInfo(sh->shared_queue, CL_QUEUE_PROPERTIES_ARRAY, sizeof back, back, &size));
    if (err == CL_SUCCESS) /* OpenCL 3.0: the program's own list, nothing added */
        CHECK(size == sizeof asked && memcmp(back, asked, sizeof asked) == 0,
              "CL_QUEUE_PROPERTIES_ARRAY: %zu bytes, {%#llx, %#llx}, expected the program's list", size,
              (unsigned long long)back[0], (unsigned long long)back[1]);
    sh->program = CL_UNTRACED(clCreateProgramWithSource(sh->context, 1, &kernel_source, NULL, &err));
    CHECK(sh->program, "clCreateProgramWithSource: %d", err);
    err = CL_UNTRACED(clBuildProgram(sh->program, 1, &sh->device, NULL, NULL, NULL));
    CHECK(err == CL_SUCCESS, "clBuildProgram: %d", err);
    return 0;
}

static void tear_down(shared_state *sh, worker *w)
{
    for (int i = 0; i < THREADS; i++) {
        CL_UNTRACED(clFinish(w[i].queue));
        CL_UNTRACED(clReleaseKernel(w[i].kernel));
        CL_UNTRACED(clReleaseMemObject(w[i].buffer));
        CL_UNTRACED(clReleaseCommandQueue(w[i].queue));
    }
    CL_UNTRACED(clFinish(sh->shared_queue));
    CL_UNTRACED(clReleaseCommandQueue(sh->shared_queue));
    CL_UNTRACED(clReleaseProgram(sh->program));
    CL_UNTRACED(clReleaseContext(sh->context));
}

/* ------------------------------------------------------------------ checks */

static devtrace_event events[MAX_EVENTS];
static char is_launch[MAX_EVENTS];
static size_t nevents;

static void collect(const devtrace_event *ev, const char *name, void *user)
{
    (void)user;
    CHECK(nevents < MAX_EVENTS, "more than %d events", MAX_EVENTS);
    is_launch[nevents] = name && strcmp(name, "clEnqueueNDRangeKernel") == 0;
    caller_recorded += ev->kind == DEVTRACE_KIND_RUNTIME && name && strcmp(name, "clGetDeviceInfo") == 0;
    events[nevents++] = *ev;
}

static int by_correlation(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void check_events(void)
{
    static uint64_t runtime_corr[MAX_EVENTS];
    size_t nruntime = 0, nkernels = 0, nlaunch_calls = 0;
    uint32_t streams[MAX_EVENTS];
    size_t nstreams = 0;
    for (size_t i = 0; i < nevents; i++) {
        if (events[i].kind == DEVTRACE_KIND_RUNTIME) {
            runtime_corr[nruntime++] = events[i].correlation;
            nlaunch_calls += is_launch[i];
        }
        if (events[i].kind != DEVTRACE_KIND_KERNEL)
            continue;
        nkernels++;
        size_t s = 0;
        while (s < nstreams && streams[s] != events[i].stream)
            s++;
        if (s == nstreams)
            streams[nstreams++] = events[i].stream;
    }
    CHECK(nkernels == THREADS * KERNELS_PER_THREAD, "%zu kernel events, expected %d", nkernels,
          THREADS * KERNELS_PER_THREAD);
    CHECK(nlaunch_calls == nkernels, "%zu launch calls for %zu kernels", nlaunch_calls, nkernels);
    CHECK(nruntime == atomic_load(&traced_calls) + caller_recorded,
          "%zu runtime events for %u OpenCL calls made while recording and %zu of the caller's", nruntime,
          atomic_load(&traced_calls), caller_recorded);
    CHECK(nstreams == THREADS + 1, "%zu streams, expected one per queue (%d)", nstreams, THREADS + 1);
    qsort(runtime_corr, nruntime, sizeof runtime_corr[0], by_correlation);
    for (size_t i = 1; i < nruntime; i++)
        CHECK(runtime_corr[i] != runtime_corr[i - 1], "correlation %" PRIu64 " used twice", runtime_corr[i]);
    for (size_t i = 0; i < nevents; i++) {
        if (events[i].kind != DEVTRACE_KIND_KERNEL)
            continue;
        size_t partner = 0;
        for (size_t j = 0; j < nevents; j++)
            if (events[j].kind == DEVTRACE_KIND_RUNTIME && events[j].correlation == events[i].correlation) {
                CHECK(is_launch[j], "a kernel paired with a runtime event that is not a launch");
                CHECK(events[i].start_ns >= events[j].start_ns, "kernel before its launch call");
                partner++;
            }
        CHECK(partner == 1, "kernel with correlation %" PRIu64 " has %zu runtime partners", events[i].correlation,
              partner);
    }
}

int main(void)
{
    setenv("OPENCL_LAYERS", DEVTRACE_LIBRARY_PATH, 1);
    devtrace_session *s = ot_open_session();
    if (ot_skip_without_loader(s)) {
        devtrace_close(s);
        return SKIP_EXIT;
    }
    shared_state sh;
    memset(&sh, 0, sizeof sh);
    if (set_up(&sh) != 0) {
        printf("SKIPPED: no OpenCL platform\n");
        devtrace_close(s);
        return SKIP_EXIT;
    }
    CHECK(devtrace_start(s) == 0, "devtrace_start failed");
    worker workers[THREADS];
    memset(workers, 0, sizeof workers);
    for (int i = 0; i < THREADS; i++) {
        workers[i].shared = &sh;
        CHECK(pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]) == 0, "pthread_create");
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(workers[i].thread, NULL);
    pthread_t caller;
    CHECK(pthread_create(&caller, NULL, caller_main, &sh) == 0, "pthread_create");
    atomic_store(&stop_begun, 1);
    CHECK(devtrace_stop(s) == 0, "devtrace_stop failed"); /* commands still run: stop waits for them */
    atomic_store(&stop_ended, 1);
    atomic_store(&caller_quit, 1);
    pthread_join(caller, NULL);
    tear_down(&sh, workers);
    unsigned long long noted = calls_in_stop_note(s), overlapping = atomic_load(&calls_overlapping_stop);
    CHECK(noted >= 1 && noted <= overlapping,
          "the stop's note counts %llu calls made while it ran; the caller made %llu that overlapped it", noted,
          overlapping);

    devtrace_drain(s, collect, NULL);
    check_events();
    const devtrace_stats *st = devtrace_stats_get(s);
    CHECK(st->dropped_vendor == 0 && st->dropped_pool_full == 0 && st->unpaired_flows == 0,
          "losses: vendor %" PRIu64 ", pool %" PRIu64 ", unpaired flows %" PRIu64, st->dropped_vendor,
          st->dropped_pool_full, st->unpaired_flows);
    devtrace_close(s);
    printf("ok: %u OpenCL calls from %d threads, %zu events; %llu calls while the stop ran, noted\n",
           atomic_load(&traced_calls), THREADS, nevents, noted);
    return 0;
}
