/* rr_opencl.c: the OpenCL program the real-run tests trace (test_realruns.py): a loop of
 * kernels on the first OpenCL device (PoCL's CPU device here), each waited for, with a
 * pause between them, then an ending chosen on the command line (a crash, _exit, SIGKILL).
 *
 *   rr_opencl [--kernels N] [--pause-ms MS] [--work W] [--annotate NAME]
 *             [--pending K] [--fork F] [--then exit|segv|abort|build-abort|_exit|kill] [--linger-ms MS]
 *
 * Each iteration i (0..N-1) is annotated NAME with id i when --annotate is given
 * (devtrace_annotate_push/pop), enqueues the kernel `spin` (W iterations of arithmetic per
 * work-item) and waits for it with clFinish, then sleeps MS. For each it prints
 * `kernel I BEGIN_NS END_NS` on stdout: CLOCK_REALTIME before the enqueue and after
 * clFinish, so the kernel's device times lie between them. --pending K then enqueues K more
 * kernels and does not wait for them; --fork F forks F children that exit without exec
 * (and waits for them); --linger-ms sleeps before the ending; `ready` is
 * printed (and stdout flushed) before the loop, `done` after it. `--then build-abort` builds
 * a second program of the same source and aborts as soon as the build returns; the build's notify callback
 * installs a SIGABRT handler as LLVM's (which PoCL loads) does: on the signal it puts back the
 * handler it displaced and returns, so that abort() ends the process with the default action.
 * Exit 0, or the ending's signal; 77 when there is no OpenCL device. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "devtrace.h"

static const char spin_source[] = "__kernel void spin(__global float *out, int work) {\n"
                                  "  size_t i = get_global_id(0);\n"
                                  "  float x = (float)i;\n"
                                  "  for (int k = 0; k < work; k++) x = x * 0.999f + 1.0f;\n"
                                  "  out[i] = x;\n"
                                  "}\n";

#define WORK_ITEMS 256u

static uint64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static void fail(const char *what, cl_int rc)
{
    fprintf(stderr, "rr_opencl: %s failed (%d)\n", what, (int)rc);
    exit(1);
}

typedef struct options {
    long kernels, pause_ms, work, pending, forks, linger_ms;
    const char *annotate, *then;
} options;

static long number(const char *text, const char *flag)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || v < 0) {
        fprintf(stderr, "rr_opencl: %s takes a number, not '%s'\n", flag, text);
        exit(2);
    }
    return v;
}

static void parse(int argc, char **argv, options *o)
{
    *o = (options){.kernels = 10, .pause_ms = 50, .work = 20000, .then = "exit"};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "rr_opencl: unknown option or missing value: %s\n", a);
            exit(2);
        }
        i++;
        if (!strcmp(a, "--kernels"))
            o->kernels = number(v, a);
        else if (!strcmp(a, "--pause-ms"))
            o->pause_ms = number(v, a);
        else if (!strcmp(a, "--work"))
            o->work = number(v, a);
        else if (!strcmp(a, "--pending"))
            o->pending = number(v, a);
        else if (!strcmp(a, "--fork"))
            o->forks = number(v, a);
        else if (!strcmp(a, "--linger-ms"))
            o->linger_ms = number(v, a);
        else if (!strcmp(a, "--annotate"))
            o->annotate = v;
        else if (!strcmp(a, "--then"))
            o->then = v;
        else {
            fprintf(stderr, "rr_opencl: unknown option %s\n", a);
            exit(2);
        }
    }
}

static struct sigaction displaced; /* what the build's handler displaced */

static void llvm_like_handler(int sig)
{
    sigaction(sig, &displaced, NULL); /* as LLVM's UnregisterHandlers, then return */
}

static void CL_CALLBACK install_handler_in_build(cl_program program, void *user)
{
    (void)program, (void)user;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = llvm_like_handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGABRT, &sa, &displaced);
}

static void end_as_asked(const char *then)
{
    fflush(stdout);
    if (!strcmp(then, "segv")) {
        volatile int *nowhere = NULL;
        *nowhere = 1;
    } else if (!strcmp(then, "abort")) {
        abort();
    } else if (!strcmp(then, "_exit")) {
        _exit(0);
    } else if (!strcmp(then, "kill")) {
        kill(getpid(), SIGKILL);
    }
}

int main(int argc, char **argv)
{
    options o;
    parse(argc, argv, &o);
    cl_platform_id platform;
    cl_device_id device;
    cl_uint n = 0;
    cl_int rc;
    if (clGetPlatformIDs(1, &platform, &n) != CL_SUCCESS || n == 0 ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL) != CL_SUCCESS) {
        printf("SKIPPED: no OpenCL device\n");
        return 77;
    }
    cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &rc);
    if (rc != CL_SUCCESS)
        fail("clCreateContext", rc);
    cl_command_queue q = clCreateCommandQueue(ctx, device, 0, &rc);
    if (rc != CL_SUCCESS)
        fail("clCreateCommandQueue", rc);
    const char *src = spin_source;
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &rc);
    if (rc != CL_SUCCESS || (rc = clBuildProgram(prog, 1, &device, NULL, NULL, NULL)) != CL_SUCCESS)
        fail("building the kernel", rc);
    cl_kernel k = clCreateKernel(prog, "spin", &rc);
    if (rc != CL_SUCCESS)
        fail("clCreateKernel", rc);
    cl_mem out = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, WORK_ITEMS * sizeof(float), NULL, &rc);
    if (rc != CL_SUCCESS)
        fail("clCreateBuffer", rc);
    cl_int work = (cl_int)o.work;
    clSetKernelArg(k, 0, sizeof out, &out);
    clSetKernelArg(k, 1, sizeof work, &work);
    size_t global = WORK_ITEMS;
    printf("ready\n");
    fflush(stdout);
    for (long i = 0; i < o.kernels; i++) {
        if (o.annotate)
            devtrace_annotate_push(o.annotate, (uint64_t)i);
        uint64_t begin = realtime_ns();
        if ((rc = clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL)) != CL_SUCCESS)
            fail("clEnqueueNDRangeKernel", rc);
        clFinish(q);
        uint64_t end = realtime_ns();
        if (o.annotate)
            devtrace_annotate_pop();
        printf("kernel %ld %llu %llu\n", i, (unsigned long long)begin, (unsigned long long)end);
        fflush(stdout);
        if (o.pause_ms)
            sleep_ms(o.pause_ms);
    }
    for (long i = 0; i < o.pending; i++)
        clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL);
    for (long i = 0; i < o.forks; i++) {
        pid_t child = fork();
        if (child == 0)
            _exit(0);
        if (child > 0)
            waitpid(child, NULL, 0);
    }
    printf("done\n");
    fflush(stdout);
    if (o.linger_ms)
        sleep_ms(o.linger_ms);
    if (!strcmp(o.then, "build-abort")) {
        cl_program again = clCreateProgramWithSource(ctx, 1, &src, NULL, &rc);
        if (rc != CL_SUCCESS ||
            (rc = clBuildProgram(again, 1, &device, NULL, install_handler_in_build, NULL)) != CL_SUCCESS)
            fail("building the kernel again", rc);
        abort();
    }
    end_as_asked(o.then);
    clFinish(q);
    clReleaseMemObject(out);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return 0;
}
