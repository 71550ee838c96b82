/* test_opencl_inproc.c: the OpenCL backend end to end, in one process, on a real
 * OpenCL platform (PoCL's CPU device in CI).
 *
 * The program names libdevtrace.so in $OPENCL_LAYERS before its first OpenCL call (the
 * path comes from the build: DEVTRACE_LIBRARY_PATH), opens a session with the "opencl"
 * backend through the public API, and runs a small OpenCL program while it records:
 * one write (with an event the program asks for), one fill, two kernels and one
 * blocking read (NULL events), each inside an annotated range. Then it checks the
 * drained events: the counts per kind, the copy directions and sizes, the fill, the
 * kernel names and launch shapes, that each device event shares its correlation with
 * the runtime event of the call that enqueued it and lies after that call's start, that
 * everything lies inside the capture window, that the external ids come from the
 * ranges, that there is one runtime event per OpenCL call the program made, that the
 * queue's properties read back as the program asked (no profiling) and that the results
 * computed by the device are right. Last, it writes the Chrome trace, and with
 * $DEVTRACE_TEST_TRACE_PAIR=PREFIX both PREFIX.json and PREFIX.pftrace (tests/perfetto).
 *
 * Exit 0: pass; 1: a check failed (the message says which); 77: skipped, no OpenCL
 * platform here. */
#define CL_TARGET_OPENCL_VERSION 300

#include <CL/cl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "devtrace.h"

#ifndef DEVTRACE_LIBRARY_PATH
#error "DEVTRACE_LIBRARY_PATH (the path of libdevtrace.so) must be defined by the build"
#endif

#define N 1024u
#define LOCAL_SIZE 64u
#define FILL_VALUE 2.0f
#define SCALE 3.0f
#define OT_MAX_EVENTS 512
#include "opencl_test.h" /* after OT_MAX_EVENTS: the shared event collector */

/* Every OpenCL call goes through CL(): the count is what the trace must show. */
static unsigned opencl_calls;
#define CL(call) (opencl_calls++, (call))

static const char *kernel_source =
    "__kernel void vadd(__global const float *a, __global const float *b, __global float *c)\n"
    "{ size_t i = get_global_id(0); c[i] = a[i] + b[i]; }\n"
    "__kernel void scale(__global float *c, float k)\n"
    "{ size_t i = get_global_id(0); c[i] *= k; }\n";

static uint64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

typedef struct opencl_objects {
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    cl_program program;
    cl_kernel vadd, scale;
    cl_mem a, b, c;
} opencl_objects;

/* Platform and device; returns 0, or -1 when this machine has no OpenCL platform. */
static int find_device(opencl_objects *o)
{
    cl_uint nplatforms = 0;
    if (CL(clGetPlatformIDs(1, &o->platform, &nplatforms)) != CL_SUCCESS || nplatforms == 0)
        return -1;
    if (CL(clGetDeviceIDs(o->platform, CL_DEVICE_TYPE_ALL, 1, &o->device, NULL)) != CL_SUCCESS)
        return -1;
    return 0;
}

static void set_up(opencl_objects *o)
{
    cl_int err;
    o->context = CL(clCreateContext(NULL, 1, &o->device, NULL, NULL, &err));
    CHECK(o->context && err == CL_SUCCESS, "clCreateContext: %d", err);
    o->queue = CL(clCreateCommandQueueWithProperties(o->context, o->device, NULL, &err));
    CHECK(o->queue && err == CL_SUCCESS, "clCreateCommandQueueWithProperties: %d", err);
    cl_command_queue_properties props = 99;
    err = CL(clGetCommandQueueInfo(o->queue, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL));
    CHECK(err == CL_SUCCESS && props == 0,
          "the queue's properties read back as %#llx; the program asked for none (the layer's profiling "
          "flag must not show)",
          (unsigned long long)props);
    o->program = CL(clCreateProgramWithSource(o->context, 1, &kernel_source, NULL, &err));
    CHECK(o->program && err == CL_SUCCESS, "clCreateProgramWithSource: %d", err);
    err = CL(clBuildProgram(o->program, 1, &o->device, NULL, NULL, NULL));
    CHECK(err == CL_SUCCESS, "clBuildProgram: %d", err);
    o->vadd = CL(clCreateKernel(o->program, "vadd", &err));
    CHECK(o->vadd && err == CL_SUCCESS, "clCreateKernel(vadd): %d", err);
    o->scale = CL(clCreateKernel(o->program, "scale", NULL));
    CHECK(o->scale, "clCreateKernel(scale) with a NULL errcode_ret returned NULL");
    size_t bytes = N * sizeof(float);
    o->a = CL(clCreateBuffer(o->context, CL_MEM_READ_ONLY, bytes, NULL, &err));
    o->b = CL(clCreateBuffer(o->context, CL_MEM_READ_ONLY, bytes, NULL, &err));
    o->c = CL(clCreateBuffer(o->context, CL_MEM_READ_WRITE, bytes, NULL, &err));
    CHECK(o->a && o->b && o->c, "clCreateBuffer failed: %d", err);
}

/* The workload: write (program's event), fill, vadd (local size given), scale (no
 * local size), blocking read; ids 101, 102, 0 (a valid id), 103. */
static void run_workload(devtrace_session *s, opencl_objects *o, const float *host_a, float *host_c)
{
    size_t bytes = N * sizeof(float);
    cl_event write_done = NULL;
    CHECK(devtrace_range_push(s, "op.write", 101) == 0, "range push");
    cl_int err = CL(clEnqueueWriteBuffer(o->queue, o->a, CL_FALSE, 0, bytes, host_a, 0, NULL, &write_done));
    CHECK(err == CL_SUCCESS && write_done, "clEnqueueWriteBuffer: %d", err);
    CHECK(devtrace_range_pop(s) == 0, "range pop");
    err = CL(clWaitForEvents(1, &write_done));
    CHECK(err == CL_SUCCESS, "clWaitForEvents: %d", err);
    err = CL(clReleaseEvent(write_done));
    CHECK(err == CL_SUCCESS, "clReleaseEvent: %d", err);

    float pattern = FILL_VALUE;
    CHECK(devtrace_range_push(s, "op.fill", 102) == 0, "range push");
    err = CL(clEnqueueFillBuffer(o->queue, o->b, &pattern, sizeof pattern, 0, bytes, 0, NULL, NULL));
    CHECK(err == CL_SUCCESS, "clEnqueueFillBuffer: %d", err);
    CHECK(devtrace_range_pop(s) == 0, "range pop");

    size_t global = N, local = LOCAL_SIZE;
    float k = SCALE;
    CHECK(devtrace_range_push(s, "op.compute", 0) == 0, "range push");
    err = CL(clSetKernelArg(o->vadd, 0, sizeof(cl_mem), &o->a));
    err |= CL(clSetKernelArg(o->vadd, 1, sizeof(cl_mem), &o->b));
    err |= CL(clSetKernelArg(o->vadd, 2, sizeof(cl_mem), &o->c));
    err |= CL(clEnqueueNDRangeKernel(o->queue, o->vadd, 1, NULL, &global, &local, 0, NULL, NULL));
    err |= CL(clSetKernelArg(o->scale, 0, sizeof(cl_mem), &o->c));
    err |= CL(clSetKernelArg(o->scale, 1, sizeof k, &k));
    err |= CL(clEnqueueNDRangeKernel(o->queue, o->scale, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(err == CL_SUCCESS, "kernel arguments or launches failed");
    CHECK(devtrace_range_pop(s) == 0, "range pop");

    CHECK(devtrace_range_push(s, "op.read", 103) == 0, "range push");
    err = CL(clEnqueueReadBuffer(o->queue, o->c, CL_TRUE, 0, bytes, host_c, 0, NULL, NULL));
    CHECK(err == CL_SUCCESS, "clEnqueueReadBuffer: %d", err);
    CHECK(devtrace_range_pop(s) == 0, "range pop");
    err = CL(clFinish(o->queue));
    CHECK(err == CL_SUCCESS, "clFinish: %d", err);
}

static void tear_down(opencl_objects *o)
{
    cl_int err = CL(clReleaseKernel(o->vadd));
    err |= CL(clReleaseKernel(o->scale));
    err |= CL(clReleaseProgram(o->program));
    err |= CL(clReleaseMemObject(o->a));
    err |= CL(clReleaseMemObject(o->b));
    err |= CL(clReleaseMemObject(o->c));
    err |= CL(clReleaseCommandQueue(o->queue));
    err |= CL(clReleaseContext(o->context));
    CHECK(err == CL_SUCCESS, "releasing the OpenCL objects failed");
}

/* ------------------------------------------------------------------ checks */

static const recorded *runtime_partner(const devtrace_event *device)
{
    const recorded *found = NULL;
    for (size_t i = 0; i < nevents; i++)
        if (events[i].ev.kind == DEVTRACE_KIND_RUNTIME && events[i].ev.correlation == device->correlation) {
            CHECK(!found, "two runtime events share correlation %" PRIu64, device->correlation);
            found = &events[i];
        }
    return found;
}

static const recorded *find_device_event(int kind, const char *name, int direction)
{
    const recorded *found = NULL;
    for (size_t i = 0; i < nevents; i++) {
        const devtrace_event *ev = &events[i].ev;
        if (ev->kind != kind || (name && strcmp(events[i].name, name) != 0) ||
            (kind == DEVTRACE_KIND_MEMCPY && (int)ev->u.memcpy.direction != direction))
            continue;
        CHECK(!found, "two %s events named \"%s\"", devtrace_kind_name(kind), name ? name : "");
        found = &events[i];
    }
    CHECK(found, "no %s event \"%s\" (direction %d)", devtrace_kind_name(kind), name ? name : "", direction);
    return found;
}

/* The device event's enqueue call, its external id, and where it lies in time. */
static void check_device_event(const recorded *d, const char *call, uint64_t external, uint64_t window_lo,
                               uint64_t window_hi)
{
    const devtrace_event *ev = &d->ev;
    CHECK(ev->correlation != 0, "%s: device event without a correlation", call);
    const recorded *r = runtime_partner(ev);
    CHECK(r, "%s: no runtime event with the device event's correlation %" PRIu64, call, ev->correlation);
    CHECK(strcmp(r->name, call) == 0, "device event paired with %s, expected %s", r->name, call);
    CHECK(ev->flags & DEVTRACE_EVENT_HAS_EXTERNAL, "%s: device event without an external id", call);
    CHECK(ev->external_id == external, "%s: external id %" PRIu64 ", expected %" PRIu64, call, ev->external_id,
          external);
    CHECK((r->ev.flags & DEVTRACE_EVENT_HAS_EXTERNAL) && r->ev.external_id == external,
          "%s: the runtime event's external id is not %" PRIu64, call, external);
    CHECK(ev->start_ns >= r->ev.start_ns, "%s: device work starts %" PRIu64 " ns before its enqueue call", call,
          r->ev.start_ns - ev->start_ns);
    CHECK(ev->end_ns >= ev->start_ns, "%s: device event ends before it starts", call);
    CHECK(ev->start_ns >= window_lo && ev->end_ns <= window_hi,
          "%s: device event [%" PRIu64 ", %" PRIu64 "] outside the window [%" PRIu64 ", %" PRIu64 "]", call,
          ev->start_ns, ev->end_ns, window_lo, window_hi);
    CHECK(ev->device == 0 && ev->stream >= 1 && ev->context >= 1,
          "%s: device %u stream %u context %u (expected device 0, ids from 1)", call, ev->device, ev->stream,
          ev->context);
}

static void check_kinds(void)
{
    unsigned counts[DEVTRACE_KIND_COUNT] = {0};
    for (size_t i = 0; i < nevents; i++)
        counts[events[i].ev.kind]++;
    CHECK(counts[DEVTRACE_KIND_KERNEL] == 2, "%u kernel events, expected 2", counts[DEVTRACE_KIND_KERNEL]);
    CHECK(counts[DEVTRACE_KIND_MEMCPY] == 2, "%u memcpy events, expected 2", counts[DEVTRACE_KIND_MEMCPY]);
    CHECK(counts[DEVTRACE_KIND_MEMSET] == 1, "%u memset events, expected 1", counts[DEVTRACE_KIND_MEMSET]);
    CHECK(counts[DEVTRACE_KIND_CPU_OP] == 4, "%u cpu ops, expected 4", counts[DEVTRACE_KIND_CPU_OP]);
    CHECK(counts[DEVTRACE_KIND_RUNTIME] == opencl_calls, "%u runtime events, but the program made %u OpenCL calls",
          counts[DEVTRACE_KIND_RUNTIME], opencl_calls);
}

static void check_runtime_events(uint64_t window_lo, uint64_t window_hi)
{
    uint64_t last_correlation_seen = 0;
    unsigned set_arg = 0, platform_ids = 0;
    for (size_t i = 0; i < nevents; i++) {
        const devtrace_event *ev = &events[i].ev;
        if (ev->kind != DEVTRACE_KIND_RUNTIME)
            continue;
        CHECK(strncmp(events[i].name, "cl", 2) == 0, "runtime event named \"%s\"", events[i].name);
        CHECK(ev->u.runtime.return_value == CL_SUCCESS, "%s returned %d", events[i].name, ev->u.runtime.return_value);
        CHECK(!(ev->flags & DEVTRACE_EVENT_HAS_CBID), "%s: OpenCL has no cbid", events[i].name);
        CHECK(ev->correlation != 0 && ev->correlation != last_correlation_seen, "%s: correlation %" PRIu64,
              events[i].name, ev->correlation);
        CHECK(ev->device == (uint32_t)getpid(), "%s: pid %u", events[i].name, ev->device);
        CHECK(ev->start_ns >= window_lo && ev->end_ns <= window_hi, "%s outside the capture window", events[i].name);
        last_correlation_seen = ev->correlation;
        set_arg += strcmp(events[i].name, "clSetKernelArg") == 0;
        platform_ids += strcmp(events[i].name, "clGetPlatformIDs") == 0;
        if (strcmp(events[i].name, "clGetPlatformIDs") == 0)
            CHECK(!(ev->flags & DEVTRACE_EVENT_HAS_EXTERNAL), "clGetPlatformIDs ran outside any range");
    }
    CHECK(set_arg == 5, "%u clSetKernelArg events, expected 5", set_arg);
    CHECK(platform_ids == 1, "%u clGetPlatformIDs events, expected 1", platform_ids);
}

static void check_device_events(uint64_t window_lo, uint64_t window_hi)
{
    const uint64_t bytes = N * sizeof(float);
    const recorded *write = find_device_event(DEVTRACE_KIND_MEMCPY, NULL, DEVTRACE_COPY_HTOD);
    CHECK(write->ev.u.memcpy.bytes == bytes, "write: %" PRIu64 " bytes", write->ev.u.memcpy.bytes);
    check_device_event(write, "clEnqueueWriteBuffer", 101, window_lo, window_hi);

    const recorded *read = find_device_event(DEVTRACE_KIND_MEMCPY, NULL, DEVTRACE_COPY_DTOH);
    CHECK(read->ev.u.memcpy.bytes == bytes, "read: %" PRIu64 " bytes", read->ev.u.memcpy.bytes);
    check_device_event(read, "clEnqueueReadBuffer", 103, window_lo, window_hi);

    const recorded *fill = find_device_event(DEVTRACE_KIND_MEMSET, NULL, 0);
    float pattern = FILL_VALUE;
    uint32_t pattern_bits;
    memcpy(&pattern_bits, &pattern, sizeof pattern_bits);
    CHECK(fill->ev.u.memset.bytes == bytes && fill->ev.u.memset.value == pattern_bits,
          "fill: %" PRIu64 " bytes, value %#x", fill->ev.u.memset.bytes, fill->ev.u.memset.value);
    check_device_event(fill, "clEnqueueFillBuffer", 102, window_lo, window_hi);

    const recorded *vadd = find_device_event(DEVTRACE_KIND_KERNEL, "vadd", 0);
    check_device_event(vadd, "clEnqueueNDRangeKernel", 0, window_lo, window_hi);
    const devtrace_event *k = &vadd->ev;
    CHECK((k->flags & DEVTRACE_EVENT_HAS_LAUNCH) && k->u.kernel.grid[0] == N / LOCAL_SIZE &&
              k->u.kernel.block[0] == LOCAL_SIZE && k->u.kernel.grid[1] == 1 && k->u.kernel.block[2] == 1,
          "vadd: grid %d,%d,%d block %d,%d,%d", k->u.kernel.grid[0], k->u.kernel.grid[1], k->u.kernel.grid[2],
          k->u.kernel.block[0], k->u.kernel.block[1], k->u.kernel.block[2]);
    CHECK((k->flags & DEVTRACE_EVENT_HAS_QUEUED) && k->u.kernel.queued_ns <= k->start_ns,
          "vadd: queued time missing or after the start");
    CHECK(!(k->flags & DEVTRACE_EVENT_HAS_REGS), "vadd: OpenCL does not know registers");

    const recorded *scale = find_device_event(DEVTRACE_KIND_KERNEL, "scale", 0);
    check_device_event(scale, "clEnqueueNDRangeKernel", 0, window_lo, window_hi);
    k = &scale->ev;
    CHECK((k->flags & DEVTRACE_EVENT_HAS_LAUNCH) && k->u.kernel.grid[0] == N && k->u.kernel.block[0] == 1,
          "scale (no local size): grid %d block %d, expected %u and 1", k->u.kernel.grid[0], k->u.kernel.block[0], N);
    CHECK(scale->ev.start_ns >= vadd->ev.end_ns, "scale starts before vadd ends on an in-order queue");
}

static void check_trace_file(devtrace_session *s)
{
    char path[256];
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/devtrace_opencl_inproc_%ld.json", dir && *dir ? dir : "/tmp", (long)getpid());
    devtrace_error err;
    int rc = devtrace_write_chrome(s, path, &err);
    CHECK(rc == 0, "devtrace_write_chrome(%s): %s", path, err.message);
    struct stat st;
    CHECK(stat(path, &st) == 0 && st.st_size > 0, "%s is missing or empty", path);
    FILE *f = fopen(path, "r");
    CHECK(f, "cannot read %s", path);
    char *text = calloc(1, (size_t)st.st_size + 1);
    CHECK(text && fread(text, 1, (size_t)st.st_size, f) == (size_t)st.st_size, "cannot read %s", path);
    fclose(f);
    CHECK(strstr(text, "\"vadd\"") && strstr(text, "\"privateuse1_runtime\"") && strstr(text, "\"ac2g\""),
          "%s lacks the kernel name, the runtime category or the flows", path);
    free(text);
    unlink(path);
}

/* The session's Chrome and Perfetto traces as PREFIX.json and PREFIX.pftrace, for the
 * Perfetto sink's test, which compares them (tests/perfetto/opencl.sh). */
static void write_trace_pair(devtrace_session *s, const char *prefix)
{
    static const char *const suffixes[] = {".json", ".pftrace"};
    for (size_t i = 0; i < 2; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s%s", prefix, suffixes[i]);
        devtrace_error err;
        CHECK(devtrace_write_trace(s, path, &err) == 0, "devtrace_write_trace(%s): %s", path, err.message);
    }
}

int main(void)
{
    /* Before any OpenCL call: the loader reads $OPENCL_LAYERS when it initialises. */
    setenv("OPENCL_LAYERS", DEVTRACE_LIBRARY_PATH, 1);

    devtrace_session *s = ot_open_session();
    if (ot_skip_without_loader(s)) {
        devtrace_close(s);
        return SKIP_EXIT;
    }
    uint64_t window_lo = realtime_ns();
    CHECK(devtrace_start(s) == 0, "devtrace_start failed");

    opencl_objects o;
    memset(&o, 0, sizeof o);
    if (find_device(&o) != 0) {
        printf("SKIPPED: no OpenCL platform\n");
        devtrace_close(s);
        return SKIP_EXIT;
    }
    float *host_a = malloc(N * sizeof(float)), *host_c = malloc(N * sizeof(float));
    CHECK(host_a && host_c, "out of memory");
    for (unsigned i = 0; i < N; i++)
        host_a[i] = (float)i;
    set_up(&o);
    run_workload(s, &o, host_a, host_c);
    tear_down(&o);
    CHECK(devtrace_stop(s) == 0, "devtrace_stop failed");
    uint64_t window_hi = realtime_ns();

    for (unsigned i = 0; i < N; i++)
        CHECK(host_c[i] == ((float)i + FILL_VALUE) * SCALE, "c[%u] = %g, expected %g", i, host_c[i],
              ((float)i + FILL_VALUE) * SCALE);

    devtrace_drain(s, collect, NULL);
    check_kinds();
    check_runtime_events(window_lo, window_hi);
    check_device_events(window_lo, window_hi);
    const devtrace_stats *st = devtrace_stats_get(s);
    CHECK(st->dropped_vendor == 0 && st->dropped_pool_full == 0 && st->dropped_store_full == 0,
          "losses: vendor %" PRIu64 ", pool %" PRIu64 ", store %" PRIu64, st->dropped_vendor, st->dropped_pool_full,
          st->dropped_store_full);
    CHECK(st->unpaired_flows == 0, "%" PRIu64 " unpaired flows", st->unpaired_flows);
    check_trace_file(s);
    const char *pair = getenv("DEVTRACE_TEST_TRACE_PAIR"); /* tests/perfetto: both formats of this session */
    if (pair && *pair)
        write_trace_pair(s, pair);
    devtrace_close(s);
    free(host_a);
    free(host_c);
    printf("ok: %u OpenCL calls, %zu events\n", opencl_calls, nevents);
    return 0;
}
