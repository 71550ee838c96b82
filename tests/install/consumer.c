/* consumer.c: a program built against an installed devtrace (tests/install): it runs one
 * OpenCL kernel inside an annotated operator, so that the installed command, tracing it,
 * records the kernel and the operator through the library the program itself links. */
#include <stdio.h>
#include <string.h>

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <devtrace.h>

static const char *kernel_source = "__kernel void add_one(__global int *x) { x[get_global_id(0)] += 1; }";

int main(void)
{
    if (strcmp(devtrace_version(), DEVTRACE_VERSION_STRING) != 0) {
        fprintf(stderr, "consumer: library %s, header %s\n", devtrace_version(), DEVTRACE_VERSION_STRING);
        return 1;
    }
    cl_platform_id platform;
    cl_device_id device;
    cl_int err;
    if (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL) != CL_SUCCESS) {
        fprintf(stderr, "consumer: no OpenCL device\n");
        return 2;
    }
    cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    cl_command_queue q = clCreateCommandQueue(ctx, device, 0, &err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &kernel_source, NULL, &err);
    if (clBuildProgram(prog, 1, &device, NULL, NULL, NULL) != CL_SUCCESS) {
        fprintf(stderr, "consumer: the kernel does not build\n");
        return 2;
    }
    cl_kernel k = clCreateKernel(prog, "add_one", &err);
    int host[64];
    memset(host, 0, sizeof host);
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof host, host, &err);
    clSetKernelArg(k, 0, sizeof buf, &buf);
    size_t global = 64;
    devtrace_annotate_push("install_consumer_op", 42); /* a no-op when not traced */
    clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL);
    clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL);
    devtrace_annotate_pop();
    clReleaseMemObject(buf);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    if (host[0] != 1 || host[63] != 1) {
        fprintf(stderr, "consumer: the kernel gave %d, %d (expected 1, 1)\n", host[0], host[63]);
        return 1;
    }
    puts("consumer: ok");
    return 0;
}
