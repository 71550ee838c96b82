/* annotate_before_opencl.c: a program that annotates before its first OpenCL call, for
 * devtrace record (record_annotate_early.py checks the trace). It links libdevtrace.so,
 * marks an op "before_first_opencl_call" (id 41) before touching OpenCL, then fills a
 * buffer inside "fill" (id 42). Prints each annotation call's status; exits 1 when one of
 * them failed, 77 when there is no OpenCL device. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>

#include "devtrace.h"

int main(void)
{
    int before_push = devtrace_annotate_push("before_first_opencl_call", 41);
    int before_pop = devtrace_annotate_pop();
    printf("before_first_opencl_call: push %d pop %d\n", before_push, before_pop);

    cl_platform_id platform;
    cl_device_id device;
    cl_int err;
    if (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL) != CL_SUCCESS) {
        printf("SKIPPED: no OpenCL device\n");
        return 77;
    }
    cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    cl_command_queue q = clCreateCommandQueue(ctx, device, 0, &err);
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
    int fill_push = devtrace_annotate_push("fill", 42);
    cl_uint zero = 0;
    err = clEnqueueFillBuffer(q, buf, &zero, sizeof zero, 0, 4096, 0, NULL, NULL);
    clFinish(q);
    int fill_pop = devtrace_annotate_pop();
    printf("fill: push %d pop %d (enqueue %d)\n", fill_push, fill_pop, err);
    clReleaseMemObject(buf);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return before_push || before_pop || fill_push || fill_pop || err != CL_SUCCESS;
}
