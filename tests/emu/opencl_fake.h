/* opencl_fake.h: what a fake OpenCL target (a dispatch table given to the devtrace layer's
 * clInitLayer, no OpenCL platform behind it) answers about the objects of a launch, for the
 * tests and the bench that drive the layer that way (header only).
 *
 * The queue says it belongs to FAKE_CL_CONTEXT and FAKE_CL_DEVICE and has the properties
 * fake_cl_queue_properties (set them before the layer first sees the queue: it learns a
 * queue once); every kernel is named FAKE_CL_KERNEL_NAME; the device's and the context's
 * queries are refused (a device with no properties, a context with no device list); the
 * queue calls (clFinish, clFlush, retain, release) succeed and do nothing. */
#ifndef DT_OPENCL_FAKE_H
#define DT_OPENCL_FAKE_H

#include <CL/cl_icd.h>
#include <string.h>

#define FAKE_CL_CONTEXT ((cl_context)(uintptr_t)0x4000)
#define FAKE_CL_DEVICE ((cl_device_id)(uintptr_t)0x2000)
#define FAKE_CL_KERNEL_NAME "fake_kernel"

static cl_command_queue_properties fake_cl_queue_properties;

/* Copies v (bytes) into an info query's answer. */
static inline cl_int fake_cl_answer(const void *v, size_t bytes, size_t size, void *value, size_t *size_ret)
{
    if (size_ret)
        *size_ret = bytes;
    if (value) {
        if (size < bytes)
            return CL_INVALID_VALUE;
        memcpy(value, v, bytes);
    }
    return CL_SUCCESS;
}

static inline cl_int CL_API_CALL fake_cl_queue_info(cl_command_queue q, cl_command_queue_info what, size_t size,
                                                    void *value, size_t *size_ret)
{
    (void)q;
    cl_context context = FAKE_CL_CONTEXT;
    cl_device_id device = FAKE_CL_DEVICE;
    switch (what) {
    case CL_QUEUE_CONTEXT:
        return fake_cl_answer(&context, sizeof context, size, value, size_ret);
    case CL_QUEUE_DEVICE:
        return fake_cl_answer(&device, sizeof device, size, value, size_ret);
    case CL_QUEUE_PROPERTIES:
        return fake_cl_answer(&fake_cl_queue_properties, sizeof fake_cl_queue_properties, size, value, size_ret);
    default:
        return CL_INVALID_VALUE;
    }
}

static inline cl_int CL_API_CALL fake_cl_kernel_info(cl_kernel kernel, cl_kernel_info what, size_t size, void *value,
                                                     size_t *size_ret)
{
    (void)kernel;
    static const char name[] = FAKE_CL_KERNEL_NAME;
    return what == CL_KERNEL_FUNCTION_NAME ? fake_cl_answer(name, sizeof name, size, value, size_ret)
                                           : CL_INVALID_VALUE;
}

static inline cl_int CL_API_CALL fake_cl_device_info(cl_device_id device, cl_device_info what, size_t size, void *value,
                                                     size_t *size_ret)
{
    (void)device, (void)what, (void)size, (void)value, (void)size_ret;
    return CL_INVALID_VALUE;
}

static inline cl_int CL_API_CALL fake_cl_context_info(cl_context context, cl_context_info what, size_t size,
                                                      void *value, size_t *size_ret)
{
    (void)context, (void)what, (void)size, (void)value, (void)size_ret;
    return CL_INVALID_VALUE;
}

static inline cl_int CL_API_CALL fake_cl_queue_call(cl_command_queue q)
{
    (void)q;
    return CL_SUCCESS;
}

/* Puts the answers above in target (its other entries are the caller's). */
static inline void fake_cl_install_objects(cl_icd_dispatch *target)
{
    target->clGetCommandQueueInfo = fake_cl_queue_info;
    target->clGetKernelInfo = fake_cl_kernel_info;
    target->clGetDeviceInfo = fake_cl_device_info;
    target->clGetContextInfo = fake_cl_context_info;
    target->clFinish = fake_cl_queue_call;
    target->clFlush = fake_cl_queue_call;
    target->clRetainCommandQueue = fake_cl_queue_call;
    target->clReleaseCommandQueue = fake_cl_queue_call;
}

#endif
