/* test_opencl_api.c: the OpenCL backend on the less common paths, on a real platform.
 *
 * One session records: kernels created with clCreateKernelsInProgram and clCloneKernel
 * (names), clEnqueueTask and a 2-D launch (launch shapes), copy, rectangular read and
 * write (directions and bytes), images when the device has them (write, fill, copy to
 * a buffer, read), calls that fail (the status recorded, no device event), a queue on
 * which the program itself asked for profiling (nothing hidden, its own event's times
 * readable), and a command that waits on a user event the program sets only after stop
 * (stop must not hang: it gives up after $DEVTRACE_OPENCL_STOP_TIMEOUT_MS and counts the
 * command in dropped_vendor). A second session started while the first records is
 * refused; a session started after the first one stopped records on its own.
 *
 * Exit 0: pass; 1: a check failed; 77: skipped, no OpenCL platform here. */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS /* clEnqueueTask */

#include <CL/cl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "devtrace.h"

#ifndef DEVTRACE_LIBRARY_PATH
#error "DEVTRACE_LIBRARY_PATH (the path of libdevtrace.so) must be defined by the build"
#endif

#define OT_MAX_EVENTS 512
#include "opencl_test.h" /* after OT_MAX_EVENTS: the shared event collector */
#define IMAGE_W 16u
#define IMAGE_H 8u
#define IMAGE_BYTES (IMAGE_W * IMAGE_H * 4u * sizeof(float))
#define STOP_TIMEOUT_MS 300

static unsigned opencl_calls;
#define CL(call) (opencl_calls++, (call))

static const char *kernel_source =
    "__kernel void first(__global int *x) { x[get_global_id(0)] += 1; }\n"
    "__kernel void second(__global int *x) { x[0] = 42; }\n"
    "__kernel void grid2d(__global int *x) { x[get_global_id(1) * get_global_size(0) + get_global_id(0)] = 1; }\n";

static uint64_t monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

typedef struct objects {
    cl_device_id device;
    cl_context context;
    cl_command_queue queue, profiled_queue;
    cl_program program;
    cl_kernel first, second, grid2d, clone;
    cl_mem buf, buf2, buf2d;
    cl_bool images;
} objects;

static cl_kernel kernel_named(cl_kernel *kernels, cl_uint n, const char *name)
{
    for (cl_uint i = 0; i < n; i++) {
        char got[64] = "";
        CHECK(CL(clGetKernelInfo(kernels[i], CL_KERNEL_FUNCTION_NAME, sizeof got, got, NULL)) == CL_SUCCESS,
              "clGetKernelInfo");
        if (strcmp(got, name) == 0)
            return kernels[i];
    }
    CHECK(0, "no kernel %s in the program", name);
    return NULL;
}

static void set_up(objects *o, cl_platform_id platform)
{
    cl_int err;
    CHECK(CL(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &o->device, NULL)) == CL_SUCCESS, "clGetDeviceIDs");
    CHECK(CL(clGetDeviceInfo(o->device, CL_DEVICE_IMAGE_SUPPORT, sizeof o->images, &o->images, NULL)) == CL_SUCCESS,
          "clGetDeviceInfo");
    o->context = CL(clCreateContextFromType(NULL, CL_DEVICE_TYPE_ALL, NULL, NULL, &err));
    CHECK(o->context, "clCreateContextFromType: %d", err);
    const cl_queue_properties asked[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    o->queue = CL(clCreateCommandQueueWithProperties(o->context, o->device, NULL, &err));
    o->profiled_queue = CL(clCreateCommandQueueWithProperties(o->context, o->device, asked, &err));
    CHECK(o->queue && o->profiled_queue, "clCreateCommandQueueWithProperties: %d", err);
    cl_command_queue_properties props = 0;
    CHECK(CL(clGetCommandQueueInfo(o->profiled_queue, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL)) == CL_SUCCESS &&
              props == CL_QUEUE_PROFILING_ENABLE,
          "a queue the program asked profiling for reads back %#llx", (unsigned long long)props);
    o->program = CL(clCreateProgramWithSource(o->context, 1, &kernel_source, NULL, &err));
    CHECK(CL(clBuildProgram(o->program, 0, NULL, NULL, NULL, NULL)) == CL_SUCCESS, "clBuildProgram");
    cl_kernel kernels[3];
    cl_uint n = 0;
    CHECK(CL(clCreateKernelsInProgram(o->program, 3, kernels, &n)) == CL_SUCCESS && n == 3,
          "clCreateKernelsInProgram: %u kernels", n);
    o->first = kernel_named(kernels, n, "first");
    o->second = kernel_named(kernels, n, "second");
    o->grid2d = kernel_named(kernels, n, "grid2d");
    o->clone = CL(clCloneKernel(o->first, &err));
    CHECK(o->clone, "clCloneKernel: %d", err);
    o->buf = CL(clCreateBuffer(o->context, CL_MEM_READ_WRITE, 256, NULL, &err));
    o->buf2 = CL(clCreateBuffer(o->context, CL_MEM_READ_WRITE, 256, NULL, &err));
    o->buf2d = CL(clCreateBuffer(o->context, CL_MEM_READ_WRITE, 32 * 8 * sizeof(int), NULL, &err));
    CHECK(o->buf && o->buf2 && o->buf2d, "clCreateBuffer: %d", err);
}

static void run_kernels_and_copies(objects *o)
{
    int zeros[64] = {0};
    CHECK(CL(clEnqueueWriteBuffer(o->queue, o->buf, CL_TRUE, 0, sizeof zeros, zeros, 0, NULL, NULL)) == CL_SUCCESS,
          "write");
    CHECK(CL(clSetKernelArg(o->clone, 0, sizeof o->buf, &o->buf)) == CL_SUCCESS, "arg");
    CHECK(CL(clSetKernelArg(o->second, 0, sizeof o->buf2, &o->buf2)) == CL_SUCCESS, "arg");
    CHECK(CL(clSetKernelArg(o->grid2d, 0, sizeof o->buf2d, &o->buf2d)) == CL_SUCCESS, "arg");
    size_t global1 = 64, local1 = 16, global2[2] = {32, 8}, local2[2] = {8, 4};
    CHECK(CL(clEnqueueNDRangeKernel(o->queue, o->clone, 1, NULL, &global1, &local1, 0, NULL, NULL)) == CL_SUCCESS,
          "1-D launch");
    CHECK(CL(clEnqueueNDRangeKernel(o->queue, o->grid2d, 2, NULL, global2, local2, 0, NULL, NULL)) == CL_SUCCESS,
          "2-D launch");
    CHECK(CL(clEnqueueTask(o->queue, o->second, 0, NULL, NULL)) == CL_SUCCESS, "clEnqueueTask");
    CHECK(CL(clEnqueueCopyBuffer(o->queue, o->buf, o->buf2, 0, 0, 128, 0, NULL, NULL)) == CL_SUCCESS, "copy");
    size_t origin[3] = {0, 0, 0}, region_w[3] = {16, 4, 1}, region_r[3] = {8, 2, 1};
    char host[64] = {0};
    CHECK(CL(clEnqueueWriteBufferRect(o->queue, o->buf2, CL_FALSE, origin, origin, region_w, 16, 0, 16, 0, host, 0,
                                      NULL, NULL)) == CL_SUCCESS,
          "write rect");
    CHECK(CL(clEnqueueReadBufferRect(o->queue, o->buf2, CL_TRUE, origin, origin, region_r, 16, 0, 8, 0, host, 0, NULL,
                                     NULL)) == CL_SUCCESS,
          "read rect");
    int back[64];
    CHECK(CL(clEnqueueReadBuffer(o->queue, o->buf, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL)) == CL_SUCCESS,
          "read");
    for (int i = 0; i < 64; i++)
        CHECK(back[i] == 1, "x[%d] = %d after the 1-D launch", i, back[i]);
}

static void run_images(objects *o)
{
    cl_int err;
    cl_image_format format = {CL_RGBA, CL_FLOAT};
    cl_image_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = IMAGE_W;
    desc.image_height = IMAGE_H;
    cl_mem image = CL(clCreateImage(o->context, CL_MEM_READ_WRITE, &format, &desc, NULL, &err));
    cl_mem out = CL(clCreateBuffer(o->context, CL_MEM_READ_WRITE, IMAGE_BYTES, NULL, &err));
    CHECK(image && out, "clCreateImage/clCreateBuffer: %d", err);
    static float pixels[IMAGE_W * IMAGE_H * 4];
    size_t origin[3] = {0, 0, 0}, region[3] = {IMAGE_W, IMAGE_H, 1};
    float color[4] = {1.5f, 0, 0, 1};
    CHECK(CL(clEnqueueWriteImage(o->queue, image, CL_FALSE, origin, region, 0, 0, pixels, 0, NULL, NULL)) == CL_SUCCESS,
          "write image");
    CHECK(CL(clEnqueueFillImage(o->queue, image, color, origin, region, 0, NULL, NULL)) == CL_SUCCESS, "fill image");
    CHECK(CL(clEnqueueCopyImageToBuffer(o->queue, image, out, origin, region, 0, 0, NULL, NULL)) == CL_SUCCESS,
          "copy image to buffer");
    CHECK(CL(clEnqueueReadImage(o->queue, image, CL_TRUE, origin, region, 0, 0, pixels, 0, NULL, NULL)) == CL_SUCCESS,
          "read image");
    CHECK(pixels[0] == 1.5f && pixels[4 * IMAGE_W * IMAGE_H - 1] == 1.0f, "the filled image reads back %g", pixels[0]);
    CL(clReleaseMemObject(image));
    CL(clReleaseMemObject(out));
}

/* Failing calls: each one a runtime event with its status, none a device event. */
static void run_failures(objects *o)
{
    char value[8];
    CHECK(CL(clGetDeviceInfo(o->device, 0x7FFF, sizeof value, value, NULL)) == CL_INVALID_VALUE,
          "an unknown device query must fail");
    CHECK(CL(clCreateBuffer(o->context, CL_MEM_READ_WRITE, 0, NULL, NULL)) == NULL, "a 0-byte buffer must fail");
    size_t global = 4;
    CHECK(CL(clEnqueueNDRangeKernel(o->queue, o->clone, 0, NULL, &global, NULL, 0, NULL, NULL)) ==
              CL_INVALID_WORK_DIMENSION,
          "work_dim 0 must fail");
}

/* The program's own profiled queue and event: its times stay readable. */
static void run_profiled_queue(objects *o)
{
    int pattern = 7;
    cl_event done;
    CHECK(CL(clEnqueueFillBuffer(o->profiled_queue, o->buf2, &pattern, sizeof pattern, 0, 64, 0, NULL, &done)) ==
              CL_SUCCESS,
          "fill");
    CHECK(CL(clWaitForEvents(1, &done)) == CL_SUCCESS, "wait");
    cl_ulong end = 0;
    CHECK(CL(clGetEventProfilingInfo(done, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL)) == CL_SUCCESS && end,
          "the program's own event lost its profiling times");
    CHECK(CL(clReleaseEvent(done)) == CL_SUCCESS, "release");
}

static void tear_down(objects *o)
{
    cl_kernel kernels[] = {o->first, o->second, o->grid2d, o->clone};
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
        clReleaseKernel(kernels[i]);
    clReleaseMemObject(o->buf);
    clReleaseMemObject(o->buf2);
    clReleaseMemObject(o->buf2d);
    clReleaseProgram(o->program);
    clReleaseCommandQueue(o->queue);
    clReleaseCommandQueue(o->profiled_queue);
    clReleaseContext(o->context);
}

/* ------------------------------------------------------------------ checks */

typedef struct expected {
    int kind;
    const char *name; /* kernels */
    int direction;    /* memcpy */
    uint64_t bytes;   /* memcpy, memset */
    int32_t grid[3], block[3];
} expected;

static int matches(const recorded *r, const expected *x)
{
    const devtrace_event *ev = &r->ev;
    if (ev->kind != x->kind)
        return 0;
    if (x->kind == DEVTRACE_KIND_KERNEL)
        return strcmp(r->name, x->name) == 0 && memcmp(ev->u.kernel.grid, x->grid, sizeof x->grid) == 0 &&
               memcmp(ev->u.kernel.block, x->block, sizeof x->block) == 0;
    if (x->kind == DEVTRACE_KIND_MEMCPY)
        return (int)ev->u.memcpy.direction == x->direction && ev->u.memcpy.bytes == x->bytes;
    return ev->u.memset.bytes == x->bytes;
}

static void expect_device_events(const expected *list, size_t n)
{
    size_t device_events = 0;
    for (size_t i = 0; i < nevents; i++) {
        int kind = events[i].ev.kind;
        if (kind != DEVTRACE_KIND_KERNEL && kind != DEVTRACE_KIND_MEMCPY && kind != DEVTRACE_KIND_MEMSET)
            continue;
        device_events++;
        size_t j = 0;
        while (j < n && !matches(&events[i], &list[j]))
            j++;
        CHECK(j < n, "unexpected %s event \"%s\" (%" PRIu64 " bytes, direction %u, grid %d,%d,%d block %d,%d,%d)",
              devtrace_kind_name(kind), events[i].name, events[i].ev.u.memcpy.bytes, events[i].ev.u.memcpy.direction,
              events[i].ev.u.kernel.grid[0], events[i].ev.u.kernel.grid[1], events[i].ev.u.kernel.grid[2],
              events[i].ev.u.kernel.block[0], events[i].ev.u.kernel.block[1], events[i].ev.u.kernel.block[2]);
    }
    CHECK(device_events == n, "%zu device events, expected %zu", device_events, n);
}

static const recorded *runtime_named(const char *name, int status)
{
    for (size_t i = 0; i < nevents; i++)
        if (events[i].ev.kind == DEVTRACE_KIND_RUNTIME && strcmp(events[i].name, name) == 0 &&
            events[i].ev.u.runtime.return_value == status)
            return &events[i];
    return NULL;
}

static void check_first_session(const objects *o, devtrace_session *s)
{
    devtrace_drain(s, collect, NULL);
    expected list[16] = {
        {DEVTRACE_KIND_KERNEL, "first", 0, 0, {4, 1, 1}, {16, 1, 1}},
        {DEVTRACE_KIND_KERNEL, "grid2d", 0, 0, {4, 2, 1}, {8, 4, 1}},
        {DEVTRACE_KIND_KERNEL, "second", 0, 0, {1, 1, 1}, {1, 1, 1}},
        {DEVTRACE_KIND_MEMCPY, NULL, DEVTRACE_COPY_HTOD, 256, {0}, {0}},
        {DEVTRACE_KIND_MEMCPY, NULL, DEVTRACE_COPY_DTOD, 128, {0}, {0}},
        {DEVTRACE_KIND_MEMCPY, NULL, DEVTRACE_COPY_HTOD, 64, {0}, {0}},
        {DEVTRACE_KIND_MEMCPY, NULL, DEVTRACE_COPY_DTOH, 16, {0}, {0}},
        {DEVTRACE_KIND_MEMCPY, NULL, DEVTRACE_COPY_DTOH, 256, {0}, {0}},
        {DEVTRACE_KIND_MEMSET, NULL, 0, 64, {0}, {0}},
    };
    size_t n = 9;
    if (o->images) {
        list[n++] = (expected){DEVTRACE_KIND_MEMCPY, NULL, DEVTRACE_COPY_HTOD, IMAGE_BYTES, {0}, {0}};
        list[n++] = (expected){DEVTRACE_KIND_MEMSET, NULL, 0, IMAGE_BYTES, {0}, {0}};
        list[n++] = (expected){DEVTRACE_KIND_MEMCPY, NULL, DEVTRACE_COPY_DTOD, IMAGE_BYTES, {0}, {0}};
        list[n++] = (expected){DEVTRACE_KIND_MEMCPY, NULL, DEVTRACE_COPY_DTOH, IMAGE_BYTES, {0}, {0}};
    }
    expect_device_events(list, n);
    size_t runtime = 0;
    for (size_t i = 0; i < nevents; i++)
        runtime += events[i].ev.kind == DEVTRACE_KIND_RUNTIME;
    CHECK(runtime == opencl_calls, "%zu runtime events for %u OpenCL calls", runtime, opencl_calls);
    CHECK(runtime_named("clGetDeviceInfo", CL_INVALID_VALUE), "no clGetDeviceInfo event with CL_INVALID_VALUE");
    CHECK(runtime_named("clCreateBuffer", CL_INVALID_BUFFER_SIZE),
          "no clCreateBuffer event with CL_INVALID_BUFFER_SIZE (errcode_ret was NULL)");
    CHECK(runtime_named("clEnqueueNDRangeKernel", CL_INVALID_WORK_DIMENSION),
          "no clEnqueueNDRangeKernel event with CL_INVALID_WORK_DIMENSION");
    CHECK(runtime_named("clCloneKernel", CL_SUCCESS) && runtime_named("clCreateKernelsInProgram", CL_SUCCESS) &&
              runtime_named("clCreateContextFromType", CL_SUCCESS) && runtime_named("clEnqueueTask", CL_SUCCESS),
          "a runtime event is missing");
    const devtrace_stats *st = devtrace_stats_get(s);
    CHECK(st->dropped_vendor == 1, "dropped_vendor %" PRIu64 ": expected 1 (the command still waiting at stop)",
          st->dropped_vendor);
}

int main(void)
{
    setenv("OPENCL_LAYERS", DEVTRACE_LIBRARY_PATH, 1);
    devtrace_session *s = ot_open_session();
    if (ot_skip_without_loader(s)) {
        return SKIP_EXIT;
    }
    CHECK(devtrace_start(s) == 0, "devtrace_start");
    devtrace_session *rival = ot_open_session();
    CHECK(devtrace_start(rival) == DEVTRACE_ESTATE, "a second session recording OpenCL at once must be refused");
    devtrace_close(rival);

    cl_platform_id platform;
    cl_uint nplatforms = 0;
    if (CL(clGetPlatformIDs(1, &platform, &nplatforms)) != CL_SUCCESS || !nplatforms) {
        printf("SKIPPED: no OpenCL platform\n");
        return SKIP_EXIT;
    }
    objects o;
    memset(&o, 0, sizeof o);
    set_up(&o, platform);
    run_kernels_and_copies(&o);
    if (o.images)
        run_images(&o);
    else
        printf("note: the device has no images; image enqueues not checked\n");
    run_failures(&o);
    run_profiled_queue(&o);

    /* A command the session cannot see complete: it waits on a user event set after stop. */
    cl_int err;
    cl_event gate = CL(clCreateUserEvent(o.context, &err));
    CHECK(gate, "clCreateUserEvent: %d", err);
    CHECK(CL(clEnqueueTask(o.queue, o.second, 1, &gate, NULL)) == CL_SUCCESS, "gated task");
    setenv("DEVTRACE_OPENCL_STOP_TIMEOUT_MS", "300", 1);
    uint64_t before = monotonic_ms();
    CHECK(devtrace_stop(s) == 0, "devtrace_stop");
    uint64_t took = monotonic_ms() - before;
    CHECK(took >= STOP_TIMEOUT_MS - 10 && took < 10000, "stop took %" PRIu64 " ms with a %d ms deadline", took,
          STOP_TIMEOUT_MS);
    check_first_session(&o, s);
    devtrace_close(s);
    CHECK(clSetUserEventStatus(gate, CL_COMPLETE) == CL_SUCCESS && clFinish(o.queue) == CL_SUCCESS,
          "the gated command did not run after stop");
    clReleaseEvent(gate);

    /* A later session records on its own. */
    devtrace_session *again = ot_open_session();
    CHECK(devtrace_start(again) == 0, "a session after the first one stopped");
    size_t global = 64;
    CHECK(clEnqueueNDRangeKernel(o.queue, o.clone, 1, NULL, &global, NULL, 0, NULL, NULL) == CL_SUCCESS &&
              clFinish(o.queue) == CL_SUCCESS,
          "launch");
    CHECK(devtrace_stop(again) == 0, "stop");
    nevents = 0;
    devtrace_drain(again, collect, NULL);
    expected one = {DEVTRACE_KIND_KERNEL, "first", 0, 0, {64, 1, 1}, {1, 1, 1}};
    expect_device_events(&one, 1);
    CHECK(nevents == 3, "%zu events in the second session, expected a kernel and 2 calls", nevents);
    devtrace_close(again);
    tear_down(&o);
    printf("ok: %u OpenCL calls in the first session\n", opencl_calls);
    return 0;
}
