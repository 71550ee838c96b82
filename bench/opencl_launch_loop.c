/* opencl_launch_loop.c: the end-to-end benchmark's program (opencl-launch-loop): a
 * launch-bound OpenCL loop, run untraced and under `devtrace record` by devtrace-bench.
 *
 * On the first OpenCL device (a GPU if a platform has one, else any: PoCL's CPU device
 * here): N launches (default 20,000) of a 4096-float vector add with local size 64, with
 * a clFinish after every F of them (--finish-every F; default 0: none), then a 128x128
 * GEMM, a fill and a blocking read-back, the way a framework's eager loop drives a
 * device. Arguments are set once; every kernel is launched once before the
 * timed part so that the driver's first-launch compilation is not timed.
 *
 * Prints one line: `launch-loop: launches=N seconds=S per_launch_us=U thread_cpu_seconds=T
 * cpu_seconds=C parent_cpu_seconds=P check=ok`, where S is the wall time from the first
 * timed launch to the end of the read-back (clFinish after it), and T, C and P the CPU
 * time over the same part of the main thread, of every thread of the process, and of
 * every thread of its parent (the recorder, under `devtrace record`): on this loop, whose
 * threads wait for each other, the wall clock hides work added to the main thread, and
 * its CPU time shows it. --threads prints every thread's first ("thread: program|parent
 * TID NAME cpu_us_per_launch=X"). Exit status: 0 ok; 1 an OpenCL call failed or the
 * results are wrong; 77 no OpenCL device (the benchmark reports the figure as not
 * measurable).
 *
 * --own-events (for measuring what any OpenCL-layer tracer must cost, without one): the
 * queue has CL_QUEUE_PROFILING_ENABLE, every launch gets an event, and at each clFinish
 * (or at the end) each event's QUEUED, START and END are read and the event released.
 *
 * Run under valgrind --tool=callgrind --instr-atstart=no, the timed part alone is
 * instrumented (every thread's instructions from the first timed launch to the end of
 * the read-back): the instruction counts of docs/performance.md (OpenCL launch
 * overhead). Outside valgrind the two requests cost a few instructions. */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS

#include <CL/cl.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#endif

#define VECTOR_N 4096u
#define LOCAL_SIZE 64u
#define GEMM_N 128u
#define GEMM_TILE 8u

static const char *source =
    "__kernel void vadd(__global const float *a, __global const float *b, __global float *c)\n"
    "{ size_t i = get_global_id(0); c[i] = a[i] + b[i]; }\n"
    "__kernel void gemm(__global const float *A, __global const float *B, __global float *C, uint n)\n"
    "{ size_t r = get_global_id(1), col = get_global_id(0); float acc = 0.0f;\n"
    "  for (uint k = 0; k < n; k++) acc += A[r * n + k] * B[k * n + col];\n"
    "  C[r * n + col] = acc; }\n";

#define CHECK_CL(call)                                                                         \
    do {                                                                                       \
        cl_int check_status_ = (call);                                                         \
        if (check_status_ != CL_SUCCESS) {                                                     \
            fprintf(stderr, "opencl-launch-loop: %s failed: %d\n", #call, (int)check_status_); \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static cl_device_id pick_device(void)
{
    cl_platform_id platforms[8];
    cl_uint np = 0;
    if (clGetPlatformIDs(8, platforms, &np) != CL_SUCCESS || np == 0)
        return NULL;
    if (np > 8)
        np = 8;
    cl_device_id device = NULL;
    for (cl_uint i = 0; i < np && !device; i++)
        if (clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_GPU, 1, &device, NULL) != CL_SUCCESS)
            device = NULL;
    for (cl_uint i = 0; i < np && !device; i++)
        if (clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 1, &device, NULL) != CL_SUCCESS)
            device = NULL;
    return device;
}

static cl_mem buffer(cl_context ctx, size_t bytes, void *host)
{
    cl_int status;
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | (host ? CL_MEM_COPY_HOST_PTR : 0), bytes, host, &status);
    CHECK_CL(status);
    return m;
}

/* The CPU time of every thread of this process so far, in seconds (user and system:
 * Linux keeps it in ns and getrusage reports us). */
static double cpu_self_s(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return NAN;
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* The CPU time of the calling thread so far, in seconds. */
static double cpu_thread_s(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return NAN;
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --threads: every thread's CPU time over the timed part, this process's and its parent's. */
typedef struct thread_time {
    int tid;
    char name[32];
    unsigned long long ns;
} thread_time;
#define MAX_THREADS 64

static int read_threads(pid_t pid, thread_time *out)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *dir = opendir(path);
    int n = 0;
    for (struct dirent *e; dir && n < MAX_THREADS && (e = readdir(dir)) != NULL;) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char file[128];
        thread_time *t = &out[n];
        t->tid = atoi(e->d_name);
        snprintf(file, sizeof file, "/proc/%d/task/%d/comm", (int)pid, t->tid);
        FILE *f = fopen(file, "r");
        if (!f || !fgets(t->name, sizeof t->name, f))
            snprintf(t->name, sizeof t->name, "?");
        t->name[strcspn(t->name, "\n")] = '\0';
        if (f)
            fclose(f);
        snprintf(file, sizeof file, "/proc/%d/task/%d/schedstat", (int)pid, t->tid);
        f = fopen(file, "r");
        if (f && fscanf(f, "%llu", &t->ns) == 1)
            n++;
        if (f)
            fclose(f);
    }
    if (dir)
        closedir(dir);
    return n;
}

/* The CPU time of every live thread of process pid so far (up to MAX_THREADS of them), in
 * seconds: the sum of read_threads'. NAN when unreadable. */
static double cpu_of_process_s(pid_t pid)
{
    static thread_time threads[MAX_THREADS];
    int n = read_threads(pid, threads);
    unsigned long long total = 0;
    for (int i = 0; i < n; i++)
        total += threads[i].ns;
    return n ? (double)total / 1e9 : NAN;
}

static void print_threads(const char *who, const thread_time *before, int nb, const thread_time *after, int na,
                          unsigned long launches)
{
    for (int i = 0; i < na; i++) {
        unsigned long long ns = after[i].ns;
        for (int j = 0; j < nb; j++)
            if (before[j].tid == after[i].tid)
                ns -= before[j].ns;
        printf("thread: %s %d %s cpu_us_per_launch=%.3f\n", who, after[i].tid, after[i].name,
               launches ? (double)ns / 1e3 / (double)launches : 0.0);
    }
}

/* --own-events: what a tracer does with each completed command's event. */
static void read_and_release(cl_event *events, unsigned long n)
{
    for (unsigned long i = 0; events && i < n; i++) {
        cl_ulong queued, start, end;
        CHECK_CL(clGetEventProfilingInfo(events[i], CL_PROFILING_COMMAND_QUEUED, sizeof queued, &queued, NULL));
        CHECK_CL(clGetEventProfilingInfo(events[i], CL_PROFILING_COMMAND_START, sizeof start, &start, NULL));
        CHECK_CL(clGetEventProfilingInfo(events[i], CL_PROFILING_COMMAND_END, sizeof end, &end, NULL));
        CHECK_CL(clReleaseEvent(events[i]));
    }
}

int main(int argc, char **argv)
{
    unsigned long launches = 20000, finish_every = 0;
    int own_events = 0, threads = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--launches") && i + 1 < argc) {
            launches = strtoul(argv[++i], NULL, 10);
        } else if (!strcmp(argv[i], "--finish-every") && i + 1 < argc) {
            finish_every = strtoul(argv[++i], NULL, 10);
        } else if (!strcmp(argv[i], "--threads")) {
            threads = 1;
        } else if (!strcmp(argv[i], "--own-events")) {
            own_events = 1;
        } else {
            fprintf(stderr, "usage: opencl-launch-loop [--launches N] [--finish-every F] [--own-events] [--threads]\n");
            return 2;
        }
    }
    cl_device_id device = pick_device();
    if (!device) {
        fprintf(stderr, "opencl-launch-loop: no OpenCL platform or device\n");
        return 77;
    }
    cl_int status;
    cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &status);
    CHECK_CL(status);
    cl_command_queue queue = clCreateCommandQueue(ctx, device, own_events ? CL_QUEUE_PROFILING_ENABLE : 0, &status);
    CHECK_CL(status);
    cl_program program = clCreateProgramWithSource(ctx, 1, &source, NULL, &status);
    CHECK_CL(status);
    CHECK_CL(clBuildProgram(program, 1, &device, "", NULL, NULL));
    cl_kernel vadd = clCreateKernel(program, "vadd", &status);
    CHECK_CL(status);
    cl_kernel gemm = clCreateKernel(program, "gemm", &status);
    CHECK_CL(status);

    static float a[VECTOR_N], b[VECTOR_N], c[VECTOR_N], A[GEMM_N * GEMM_N], B[GEMM_N * GEMM_N], C[GEMM_N * GEMM_N];
    for (unsigned i = 0; i < VECTOR_N; i++)
        a[i] = (float)i, b[i] = (float)(2 * i);
    for (unsigned i = 0; i < GEMM_N * GEMM_N; i++)
        A[i] = (float)(i % 7), B[i] = (float)(i % 5);
    cl_mem da = buffer(ctx, sizeof a, a), db = buffer(ctx, sizeof b, b), dc = buffer(ctx, sizeof c, NULL);
    cl_mem dA = buffer(ctx, sizeof A, A), dB = buffer(ctx, sizeof B, B), dC = buffer(ctx, sizeof C, NULL);
    cl_uint n = GEMM_N;
    CHECK_CL(clSetKernelArg(vadd, 0, sizeof da, &da));
    CHECK_CL(clSetKernelArg(vadd, 1, sizeof db, &db));
    CHECK_CL(clSetKernelArg(vadd, 2, sizeof dc, &dc));
    CHECK_CL(clSetKernelArg(gemm, 0, sizeof dA, &dA));
    CHECK_CL(clSetKernelArg(gemm, 1, sizeof dB, &dB));
    CHECK_CL(clSetKernelArg(gemm, 2, sizeof dC, &dC));
    CHECK_CL(clSetKernelArg(gemm, 3, sizeof n, &n));
    const size_t global = VECTOR_N, local = LOCAL_SIZE;
    const size_t gemm_global[2] = {GEMM_N, GEMM_N}, gemm_local[2] = {GEMM_TILE, GEMM_TILE};
    const float one = 1.0f;

    /* Warm-up: each command once (PoCL compiles a kernel at its first launch). */
    CHECK_CL(clEnqueueNDRangeKernel(queue, vadd, 1, NULL, &global, &local, 0, NULL, NULL));
    CHECK_CL(clEnqueueNDRangeKernel(queue, gemm, 2, NULL, gemm_global, gemm_local, 0, NULL, NULL));
    CHECK_CL(clEnqueueFillBuffer(queue, dA, &one, sizeof one, 0, sizeof A, 0, NULL, NULL));
    CHECK_CL(clEnqueueReadBuffer(queue, dc, CL_TRUE, 0, sizeof c, c, 0, NULL, NULL));
    CHECK_CL(clFinish(queue));

    CALLGRIND_START_INSTRUMENTATION;
    pid_t parent = getppid();
    static thread_time self_before[MAX_THREADS], parent_before[MAX_THREADS];
    int nself = threads ? read_threads(getpid(), self_before) : 0;
    int nparent = threads ? read_threads(parent, parent_before) : 0;
    double parent0 = cpu_of_process_s(parent), cpu0 = cpu_self_s(), thread0 = cpu_thread_s();
    double t0 = now_s();
    unsigned long batch = finish_every ? finish_every : launches, held = 0;
    cl_event *events = own_events ? calloc(batch ? batch : 1, sizeof *events) : NULL;
    if (own_events && !events)
        return 1;
    for (unsigned long i = 0; i < launches; i++) {
        CHECK_CL(
            clEnqueueNDRangeKernel(queue, vadd, 1, NULL, &global, &local, 0, NULL, events ? &events[held++] : NULL));
        if (finish_every && (i + 1) % finish_every == 0) {
            CHECK_CL(clFinish(queue));
            read_and_release(events, held);
            held = 0;
        }
    }
    CHECK_CL(clEnqueueNDRangeKernel(queue, gemm, 2, NULL, gemm_global, gemm_local, 0, NULL, NULL));
    CHECK_CL(clEnqueueFillBuffer(queue, dc, &one, sizeof one, 0, sizeof c / 2, 0, NULL, NULL));
    CHECK_CL(clEnqueueReadBuffer(queue, dC, CL_TRUE, 0, sizeof C, C, 0, NULL, NULL));
    CHECK_CL(clFinish(queue));
    read_and_release(events, held);
    free(events);
    double seconds = now_s() - t0;
    double main_cpu = cpu_thread_s() - thread0;
    double cpu = cpu_self_s() - cpu0, parent_cpu = cpu_of_process_s(parent) - parent0;
    if (threads) {
        static thread_time self_after[MAX_THREADS], parent_after[MAX_THREADS];
        int na = read_threads(getpid(), self_after), np = read_threads(parent, parent_after);
        print_threads("program", self_before, nself, self_after, na, launches);
        print_threads("parent", parent_before, nparent, parent_after, np, launches);
    }
    CALLGRIND_STOP_INSTRUMENTATION;

    /* Results: C = ones(A) x B after the fill; c = a + b, its first half then 1. */
    CHECK_CL(clEnqueueReadBuffer(queue, dc, CL_TRUE, 0, sizeof c, c, 0, NULL, NULL));
    int ok = 1;
    for (unsigned i = 0; i < VECTOR_N; i++)
        ok &= c[i] == (i < VECTOR_N / 2 ? 1.0f : (float)(3 * i));
    float want = 0;
    for (unsigned k = 0; k < GEMM_N; k++)
        want += B[k * GEMM_N + 3];
    ok &= fabsf(C[5 * GEMM_N + 3] - want) <= 1e-3f * want;

    clReleaseMemObject(da), clReleaseMemObject(db), clReleaseMemObject(dc);
    clReleaseMemObject(dA), clReleaseMemObject(dB), clReleaseMemObject(dC);
    clReleaseKernel(vadd), clReleaseKernel(gemm), clReleaseProgram(program);
    clReleaseCommandQueue(queue), clReleaseContext(ctx);
    printf("launch-loop: launches=%lu seconds=%.6f per_launch_us=%.3f thread_cpu_seconds=%.6f cpu_seconds=%.6f "
           "parent_cpu_seconds=%.6f check=%s\n",
           launches, seconds, launches ? seconds * 1e6 / (double)launches : 0.0, main_cpu, cpu, parent_cpu,
           ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
