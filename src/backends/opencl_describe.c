/* opencl_describe.c: what each enqueue of device work is, read from its arguments
 * before the call: the device event's kind, bytes and copy direction, the fill value,
 * the kernel's name, launch shape (grid in work-groups, block = work-group size) and
 * shared (local) memory.
 * One function per row of the ENQUEUE list in opencl_api.h, with that function's
 * parameters. Part of the OpenCL backend: compiled on its own, with the OpenCL headers. */
#if __has_include(<CL/cl_layer.h>) /* else the backend is opencl.c's stub alone */

#include <stdatomic.h>
#include <string.h>

#include "opencl_layer.h"

static int32_t clamp_dim(size_t v)
{
    return v > INT32_MAX ? INT32_MAX : (int32_t)v;
}

static void describe_launch(dt_cl_enqueue *e, cl_kernel kernel, cl_uint work_dim, const size_t *global,
                            const size_t *local)
{
    e->device.kind = DEVTRACE_KIND_KERNEL;
    dt_cl_kernel_rec scratch;
    const dt_cl_kernel_rec *k = dt_cl_kernel_get(kernel, &scratch);
    if (k) {
        e->kernel_name = k->name;
        /* The sizes as they are now: arguments set after this call do not change this launch. */
        if (k->local_mem_device >= 0 && !atomic_load_explicit(&k->local_args_unknown, memory_order_relaxed)) {
            e->local_mem_device = k->local_mem_device;
            e->device.u.kernel.static_shared = k->static_local_mem;
            e->device.u.kernel.dynamic_shared = atomic_load_explicit(&k->local_args_total, memory_order_relaxed);
        }
    }
    if (!global || work_dim < 1 || work_dim > 3)
        return;
    for (cl_uint d = 0; d < 3; d++) {
        size_t g = d < work_dim ? global[d] : 1;
        size_t l = d < work_dim && local ? local[d] : 0;
        /* With a local size: work-groups per dimension (rounded up: OpenCL 2 allows a
         * last partial group). Without: the global size, block 1 (see the note). */
        e->device.u.kernel.grid[d] = clamp_dim(l ? (g + l - 1) / l : g);
        e->device.u.kernel.block[d] = clamp_dim(l ? l : 1);
    }
    e->device.flags |= DEVTRACE_EVENT_HAS_LAUNCH;
}

static void describe_copy(dt_cl_enqueue *e, devtrace_memcpy_dir direction, uint64_t bytes, cl_bool blocking)
{
    e->device.kind = DEVTRACE_KIND_MEMCPY;
    e->device.u.memcpy.direction = direction;
    e->device.u.memcpy.bytes = bytes;
    e->blocking = blocking == CL_TRUE;
}

static void describe_fill(dt_cl_enqueue *e, uint64_t bytes, const void *pattern, size_t pattern_size)
{
    uint32_t value = 0;
    if (pattern)
        memcpy(&value, pattern, pattern_size < sizeof value ? pattern_size : sizeof value);
    e->device.kind = DEVTRACE_KIND_MEMSET;
    e->device.u.memset.bytes = bytes;
    e->device.u.memset.value = value;
}

static uint64_t region_size(const size_t *region)
{
    return region ? (uint64_t)region[0] * region[1] * region[2] : 0;
}

/* Bytes of an image region: pixels times the image's element size. */
static uint64_t image_region_bytes(cl_mem image, const size_t *region)
{
    size_t element = 0;
    if (dt_cl_target.clGetImageInfo(image, CL_IMAGE_ELEMENT_SIZE, sizeof element, &element, NULL) != CL_SUCCESS)
        element = 0;
    return region_size(region) * element;
}

void dt_cl_describe_clEnqueueNDRangeKernel(dt_cl_enqueue *e, cl_command_queue q, cl_kernel kernel, cl_uint work_dim,
                                           const size_t *offset, const size_t *global, const size_t *local,
                                           cl_uint nwait, const cl_event *wait, cl_event *event)
{
    describe_launch(e, kernel, work_dim, global, local);
}

void dt_cl_describe_clEnqueueTask(dt_cl_enqueue *e, cl_command_queue q, cl_kernel kernel, cl_uint nwait,
                                  const cl_event *wait, cl_event *event)
{
    static const size_t one[1] = {1};
    describe_launch(e, kernel, 1, one, one);
}

void dt_cl_describe_clEnqueueReadBuffer(dt_cl_enqueue *e, cl_command_queue q, cl_mem buffer, cl_bool blocking,
                                        size_t offset, size_t size, void *ptr, cl_uint nwait, const cl_event *wait,
                                        cl_event *event)
{
    describe_copy(e, DEVTRACE_COPY_DTOH, size, blocking);
}

void dt_cl_describe_clEnqueueWriteBuffer(dt_cl_enqueue *e, cl_command_queue q, cl_mem buffer, cl_bool blocking,
                                         size_t offset, size_t size, const void *ptr, cl_uint nwait,
                                         const cl_event *wait, cl_event *event)
{
    describe_copy(e, DEVTRACE_COPY_HTOD, size, blocking);
}

void dt_cl_describe_clEnqueueCopyBuffer(dt_cl_enqueue *e, cl_command_queue q, cl_mem src, cl_mem dst, size_t src_offset,
                                        size_t dst_offset, size_t size, cl_uint nwait, const cl_event *wait,
                                        cl_event *event)
{
    describe_copy(e, DEVTRACE_COPY_DTOD, size, CL_FALSE);
}

void dt_cl_describe_clEnqueueReadBufferRect(dt_cl_enqueue *e, cl_command_queue q, cl_mem buffer, cl_bool blocking,
                                            const size_t *buffer_origin, const size_t *host_origin,
                                            const size_t *region, size_t brp, size_t bsp, size_t hrp, size_t hsp,
                                            void *ptr, cl_uint nwait, const cl_event *wait, cl_event *event)
{
    describe_copy(e, DEVTRACE_COPY_DTOH, region_size(region), blocking);
}

void dt_cl_describe_clEnqueueWriteBufferRect(dt_cl_enqueue *e, cl_command_queue q, cl_mem buffer, cl_bool blocking,
                                             const size_t *buffer_origin, const size_t *host_origin,
                                             const size_t *region, size_t brp, size_t bsp, size_t hrp, size_t hsp,
                                             const void *ptr, cl_uint nwait, const cl_event *wait, cl_event *event)
{
    describe_copy(e, DEVTRACE_COPY_HTOD, region_size(region), blocking);
}

void dt_cl_describe_clEnqueueCopyBufferRect(dt_cl_enqueue *e, cl_command_queue q, cl_mem src, cl_mem dst,
                                            const size_t *src_origin, const size_t *dst_origin, const size_t *region,
                                            size_t srp, size_t ssp, size_t drp, size_t dsp, cl_uint nwait,
                                            const cl_event *wait, cl_event *event)
{
    describe_copy(e, DEVTRACE_COPY_DTOD, region_size(region), CL_FALSE);
}

void dt_cl_describe_clEnqueueFillBuffer(dt_cl_enqueue *e, cl_command_queue q, cl_mem buffer, const void *pattern,
                                        size_t pattern_size, size_t offset, size_t size, cl_uint nwait,
                                        const cl_event *wait, cl_event *event)
{
    describe_fill(e, size, pattern, pattern_size);
}

void dt_cl_describe_clEnqueueReadImage(dt_cl_enqueue *e, cl_command_queue q, cl_mem image, cl_bool blocking,
                                       const size_t *origin, const size_t *region, size_t row_pitch, size_t slice_pitch,
                                       void *ptr, cl_uint nwait, const cl_event *wait, cl_event *event)
{
    describe_copy(e, DEVTRACE_COPY_DTOH, image_region_bytes(image, region), blocking);
}

void dt_cl_describe_clEnqueueWriteImage(dt_cl_enqueue *e, cl_command_queue q, cl_mem image, cl_bool blocking,
                                        const size_t *origin, const size_t *region, size_t row_pitch,
                                        size_t slice_pitch, const void *ptr, cl_uint nwait, const cl_event *wait,
                                        cl_event *event)
{
    describe_copy(e, DEVTRACE_COPY_HTOD, image_region_bytes(image, region), blocking);
}

void dt_cl_describe_clEnqueueCopyImage(dt_cl_enqueue *e, cl_command_queue q, cl_mem src, cl_mem dst,
                                       const size_t *src_origin, const size_t *dst_origin, const size_t *region,
                                       cl_uint nwait, const cl_event *wait, cl_event *event)
{
    describe_copy(e, DEVTRACE_COPY_DTOD, image_region_bytes(src, region), CL_FALSE);
}

void dt_cl_describe_clEnqueueFillImage(dt_cl_enqueue *e, cl_command_queue q, cl_mem image, const void *fill_color,
                                       const size_t *origin, const size_t *region, cl_uint nwait, const cl_event *wait,
                                       cl_event *event)
{
    /* fill_color is four 4-byte components: the value is the first one's bits. */
    describe_fill(e, image_region_bytes(image, region), fill_color, 4);
}

void dt_cl_describe_clEnqueueCopyImageToBuffer(dt_cl_enqueue *e, cl_command_queue q, cl_mem src, cl_mem dst,
                                               const size_t *src_origin, const size_t *region, size_t dst_offset,
                                               cl_uint nwait, const cl_event *wait, cl_event *event)
{
    describe_copy(e, DEVTRACE_COPY_DTOD, image_region_bytes(src, region), CL_FALSE);
}

void dt_cl_describe_clEnqueueCopyBufferToImage(dt_cl_enqueue *e, cl_command_queue q, cl_mem src, cl_mem dst,
                                               size_t src_offset, const size_t *dst_origin, const size_t *region,
                                               cl_uint nwait, const cl_event *wait, cl_event *event)
{
    describe_copy(e, DEVTRACE_COPY_DTOD, image_region_bytes(dst, region), CL_FALSE);
}

#endif /* __has_include(<CL/cl_layer.h>) */
