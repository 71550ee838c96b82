/* opencl_parity.c: the parity workload as a real OpenCL program (opencl-parity).
 *
 * It runs the shape of ../shared/workloads/parity.wl (the PyTorch workload
 * x,y = randn(N,N); small = randn(16); 5 x (x @ y).relu(); torch.sort(small);
 * z.sum().item()) on the first OpenCL device (a GPU if any platform has one, else any
 * device; PoCL's CPU device on a machine without accelerators), so that devtrace's
 * OpenCL backend can be checked against the same counts as every other backend:
 *
 *   17 kernel enqueues (clEnqueueNDRangeKernel), 1 memset (clEnqueueFillBuffer),
 *   1 memcpy (clEnqueueReadBuffer, blocking, 4 bytes: the only host<->device
 *   transfer; all data is created on the device by randn_philox).
 *
 * Each op is wrapped in an annotation with the workload's name and id:
 *   ProfilerStep#0 id 0 around everything; aten::randn 1,2,3; aten::mm/aten::relu
 *   4..13 alternating; aten::sort 14; aten::sum 15; aten::item 16.
 *
 * Annotations: devtrace_annotate_push/pop are resolved at run time with
 * dlsym(RTLD_DEFAULT, ...), so the program runs with or without libdevtrace (under
 * `devtrace record` the collector provides them). When the build links libdevtrace
 * (CMake defines DEVTRACE_EXAMPLE_LINKED when the target `devtrace` exists) the linked
 * functions are the fallback when dlsym finds nothing. Without either, ops run
 * unannotated.
 *
 * OpenCL API calls: every cl* call goes through CL_CALL, which counts it by name
 * (--print-api-count prints the total, --verbose the per-name table), so a test can
 * compare the trace's runtime event count with the program's exact number of calls.
 * The sequence is fixed; only device selection depends on the machine, as
 * 1 clGetPlatformIDs + 2 clGetDeviceIDs per platform (GPU, then ALL, on every
 * platform). With P platforms the program makes 117 + 2*P calls (119 with one
 * platform, as with PoCL alone):
 *   setup     15 + 2P: clGetPlatformIDs 1, clGetDeviceIDs 2P, clGetPlatformInfo 1,
 *                      clGetDeviceInfo 2, clCreateContext 1,
 *                      clCreateCommandQueue[WithProperties] 1,
 *                      clCreateProgramWithSource 1, clBuildProgram 1, clCreateKernel 7
 *   workload  84:      clCreateBuffer 8, clSetKernelArg 54, clEnqueueNDRangeKernel 17,
 *                      clEnqueueFillBuffer 1, clWaitForEvents 1, clReleaseEvent 1,
 *                      clEnqueueReadBuffer 1, clFinish 1
 *   teardown  18:      clReleaseKernel 7, clReleaseProgram 1, clReleaseMemObject 8,
 *                      clReleaseCommandQueue 1, clReleaseContext 1
 * --check adds 6 clEnqueueReadBuffer calls after ProfilerStep#0 (not part of the
 * parity shape). A failed clBuildProgram adds clGetProgramBuildInfo calls before exit.
 *
 * Output: `result: sum=<%.9g> checksum=<bits of the float in hex>` on stdout; the same
 * device gives the same bits on every run, traced or not. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_DEFAULT */
#endif
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS /* clCreateCommandQueue for 1.x platforms */

#include <CL/cl.h>
#include <dlfcn.h>
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef DEVTRACE_EXAMPLE_LINKED
#include "devtrace.h"
#endif

#define PROGRAM_NAME "opencl-parity"
#define DEFAULT_SIZE 256u
#define MAX_SIZE 8192u
#define MAX_PLATFORMS 8u
#define GEMM_TILE 16u     /* gemm_tiled work-group: GEMM_TILE x GEMM_TILE */
#define SORT_N 16u        /* torch.sort(small): one work-group of SORT_N */
#define REDUCE_GROUP 256u /* reduce_sum: one work-group */
#define ELEMENTWISE_GROUP 256u
#define FILL_GROUP 64u
#define RANDN_SEED_BASE 0x5eedu

#define STR_(x) #x
#define STR(x) STR_(x)

/* ---------------------------------------------------------------- options */

typedef struct options {
    unsigned size;
    int quiet;
    int verbose;
    int check;
    int print_api_count;
} options;

static void print_usage(FILE *out)
{
    fprintf(out,
            "usage: " PROGRAM_NAME " [--size N] [--check] [--quiet] [--verbose] [--print-api-count]\n"
            "Runs the parity workload (randn x3, 5 x mm+relu, sort, sum, item) on the first\n"
            "OpenCL device (GPU preferred), each op annotated for devtrace.\n"
            "  --size N           matrix size N (1..%u, default %u)\n"
            "  --check            verify randn, mm, relu, sort and sum against a CPU reference\n"
            "                     (adds 6 buffer reads after the workload); prints 'check: ok'\n"
            "  --quiet            no informational lines on stderr (the result line stays)\n"
            "  --verbose          print the OpenCL API calls made, by name, to stderr\n"
            "  --print-api-count  print 'api_calls=<N>': the OpenCL API calls this run made\n"
            "  --help             this text\n",
            MAX_SIZE, DEFAULT_SIZE);
}

static int parse_size(const char *text, unsigned *size)
{
    char *end = NULL;
    errno = 0;
    unsigned long value = strtoul(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || value < 1 || value > MAX_SIZE)
        return -1;
    *size = (unsigned)value;
    return 0;
}

static void parse_options(int argc, char **argv, options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->size = DEFAULT_SIZE;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--size") == 0 && i + 1 < argc) {
            if (parse_size(argv[++i], &opt->size) != 0) {
                fprintf(stderr, PROGRAM_NAME ": --size wants an integer in 1..%u, got '%s'\n", MAX_SIZE, argv[i]);
                exit(2);
            }
        } else if (strcmp(arg, "--quiet") == 0) {
            opt->quiet = 1;
        } else if (strcmp(arg, "--verbose") == 0) {
            opt->verbose = 1;
        } else if (strcmp(arg, "--check") == 0) {
            opt->check = 1;
        } else if (strcmp(arg, "--print-api-count") == 0) {
            opt->print_api_count = 1;
        } else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            print_usage(stdout);
            exit(0);
        } else {
            fprintf(stderr, PROGRAM_NAME ": unknown or incomplete option '%s'\n", arg);
            print_usage(stderr);
            exit(2);
        }
    }
}

/* ---------------------------------------------------------- API call count */

#define MAX_API_NAMES 48

typedef struct api_counter {
    const char *name;
    unsigned long count;
} api_counter;

static api_counter g_api[MAX_API_NAMES];
static unsigned g_api_names;
static unsigned long g_api_total;

static void api_note(const char *name)
{
    g_api_total++;
    for (unsigned i = 0; i < g_api_names; i++) {
        if (strcmp(g_api[i].name, name) == 0) {
            g_api[i].count++;
            return;
        }
    }
    if (g_api_names < MAX_API_NAMES)
        g_api[g_api_names++] = (api_counter){name, 1};
}

static void api_print(FILE *out)
{
    fprintf(out, PROGRAM_NAME ": OpenCL API calls made: %lu\n", g_api_total);
    for (unsigned i = 0; i < g_api_names; i++)
        fprintf(out, "  %-36s %lu\n", g_api[i].name, g_api[i].count);
}

/* Every OpenCL call goes through CL_CALL: counted, then made. */
#define CL_CALL(fn, ...) (api_note(#fn), fn(__VA_ARGS__))
/* For calls that return a cl_int status: count, make, exit on error. */
#define CL_CHECK(fn, ...) cl_check(CL_CALL(fn, __VA_ARGS__), #fn)

/* ------------------------------------------------------------------ errors */

#ifndef CL_PLATFORM_NOT_FOUND_KHR
#define CL_PLATFORM_NOT_FOUND_KHR -1001
#endif

/* The error names, packed by hand, several a line. */
/* clang-format off */
#define CL_ERROR_NAMES(X)                                                                          \
    X(CL_SUCCESS) X(CL_DEVICE_NOT_FOUND) X(CL_DEVICE_NOT_AVAILABLE) X(CL_COMPILER_NOT_AVAILABLE)   \
    X(CL_MEM_OBJECT_ALLOCATION_FAILURE) X(CL_OUT_OF_RESOURCES) X(CL_OUT_OF_HOST_MEMORY)            \
    X(CL_PROFILING_INFO_NOT_AVAILABLE) X(CL_MEM_COPY_OVERLAP) X(CL_IMAGE_FORMAT_MISMATCH)          \
    X(CL_IMAGE_FORMAT_NOT_SUPPORTED) X(CL_BUILD_PROGRAM_FAILURE) X(CL_MAP_FAILURE)                 \
    X(CL_MISALIGNED_SUB_BUFFER_OFFSET) X(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)             \
    X(CL_COMPILE_PROGRAM_FAILURE) X(CL_LINKER_NOT_AVAILABLE) X(CL_LINK_PROGRAM_FAILURE)            \
    X(CL_DEVICE_PARTITION_FAILED) X(CL_KERNEL_ARG_INFO_NOT_AVAILABLE) X(CL_INVALID_VALUE)          \
    X(CL_INVALID_DEVICE_TYPE) X(CL_INVALID_PLATFORM) X(CL_INVALID_DEVICE) X(CL_INVALID_CONTEXT)    \
    X(CL_INVALID_QUEUE_PROPERTIES) X(CL_INVALID_COMMAND_QUEUE) X(CL_INVALID_HOST_PTR)              \
    X(CL_INVALID_MEM_OBJECT) X(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR) X(CL_INVALID_IMAGE_SIZE)        \
    X(CL_INVALID_SAMPLER) X(CL_INVALID_BINARY) X(CL_INVALID_BUILD_OPTIONS) X(CL_INVALID_PROGRAM)   \
    X(CL_INVALID_PROGRAM_EXECUTABLE) X(CL_INVALID_KERNEL_NAME) X(CL_INVALID_KERNEL_DEFINITION)     \
    X(CL_INVALID_KERNEL) X(CL_INVALID_ARG_INDEX) X(CL_INVALID_ARG_VALUE) X(CL_INVALID_ARG_SIZE)    \
    X(CL_INVALID_KERNEL_ARGS) X(CL_INVALID_WORK_DIMENSION) X(CL_INVALID_WORK_GROUP_SIZE)           \
    X(CL_INVALID_WORK_ITEM_SIZE) X(CL_INVALID_GLOBAL_OFFSET) X(CL_INVALID_EVENT_WAIT_LIST)         \
    X(CL_INVALID_EVENT) X(CL_INVALID_OPERATION) X(CL_INVALID_GL_OBJECT) X(CL_INVALID_BUFFER_SIZE)  \
    X(CL_INVALID_MIP_LEVEL) X(CL_INVALID_GLOBAL_WORK_SIZE) X(CL_INVALID_PROPERTY)                  \
    X(CL_INVALID_IMAGE_DESCRIPTOR) X(CL_INVALID_COMPILER_OPTIONS) X(CL_INVALID_LINKER_OPTIONS)     \
    X(CL_INVALID_DEVICE_PARTITION_COUNT) X(CL_INVALID_PIPE_SIZE) X(CL_INVALID_DEVICE_QUEUE)        \
    X(CL_INVALID_SPEC_ID) X(CL_MAX_SIZE_RESTRICTION_EXCEEDED) X(CL_PLATFORM_NOT_FOUND_KHR)
/* clang-format on */

static const char *cl_error_name(cl_int err)
{
#define CL_ERROR_CASE(name) \
    case name:              \
        return #name;
    switch (err) {
        CL_ERROR_NAMES(CL_ERROR_CASE)
    default:
        return "unknown OpenCL error";
    }
#undef CL_ERROR_CASE
}

static void die_cl(const char *call, cl_int err)
{
    fprintf(stderr, PROGRAM_NAME ": %s failed: %s (%d)\n", call, cl_error_name(err), (int)err);
    exit(1);
}

static void cl_check(cl_int err, const char *call)
{
    if (err != CL_SUCCESS)
        die_cl(call, err);
}

static void die(const char *message)
{
    fprintf(stderr, PROGRAM_NAME ": %s\n", message);
    exit(1);
}

/* ------------------------------------------------------------- annotations */

typedef int (*annotate_push_fn)(const char *name, uint64_t id);
typedef int (*annotate_pop_fn)(void);

static annotate_push_fn g_annotate_push;
static annotate_pop_fn g_annotate_pop;

/* Returns how the annotation API was bound, for --verbose. */
static const char *bind_annotations(void)
{
    void *push = dlsym(RTLD_DEFAULT, "devtrace_annotate_push");
    void *pop = dlsym(RTLD_DEFAULT, "devtrace_annotate_pop");
    if (push != NULL && pop != NULL) {
        g_annotate_push = (annotate_push_fn)push;
        g_annotate_pop = (annotate_pop_fn)pop;
        return "resolved with dlsym(RTLD_DEFAULT)";
    }
#ifdef DEVTRACE_EXAMPLE_LINKED
    g_annotate_push = devtrace_annotate_push;
    g_annotate_pop = devtrace_annotate_pop;
    return "linked libdevtrace";
#else
    return "not found: ops run unannotated";
#endif
}

static void op_begin(const char *name, uint64_t id)
{
    if (g_annotate_push != NULL)
        (void)g_annotate_push(name, id);
}

static void op_end(void)
{
    if (g_annotate_pop != NULL)
        (void)g_annotate_pop();
}

/* ----------------------------------------------------------------- kernels */

/* Kernel names mirror what each PyTorch op launches. */
enum kernel_id { K_RANDN, K_GEMM, K_RELU, K_FILL_INDEX, K_BITONIC, K_FILL_ZERO, K_REDUCE, KERNEL_COUNT };

static const char *const kernel_names[KERNEL_COUNT] = {
    "randn_philox", "gemm_tiled", "relu", "fill_index", "bitonic_sort_kv", "fill_zero", "reduce_sum",
};

static const char kernel_source[] = "#define TILE " STR(
    GEMM_TILE) "\n"
               "#define SORT_N " STR(
                   SORT_N) "\n"
                           "#define REDUCE_GROUP " STR(
                               REDUCE_GROUP) "\n"
                                             "\n"
                                             "/* Philox4x32-10 (Salmon et al., Random123): counter-based, so element "
                                             "i's value\n"
                                             "   depends only on (seed, i). */\n"
                                             "uint4 philox4x32_10(uint4 c, uint2 k)\n"
                                             "{\n"
                                             "    for (int r = 0; r < 10; r++) {\n"
                                             "        uint hi0 = mul_hi(0xD2511F53u, c.x), lo0 = 0xD2511F53u * c.x;\n"
                                             "        uint hi1 = mul_hi(0xCD9E8D57u, c.z), lo1 = 0xCD9E8D57u * c.z;\n"
                                             "        c = (uint4)(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);\n"
                                             "        k += (uint2)(0x9E3779B9u, 0xBB67AE85u);\n"
                                             "    }\n"
                                             "    return c;\n"
                                             "}\n"
                                             "\n"
                                             "/* aten::randn: standard normal values by Box-Muller on two Philox "
                                             "words. */\n"
                                             "__kernel void randn_philox(__global float *out, uint count, uint seed)\n"
                                             "{\n"
                                             "    uint i = get_global_id(0);\n"
                                             "    if (i >= count) return;\n"
                                             "    uint4 r = philox4x32_10((uint4)(i, 0u, 0u, 0u), (uint2)(seed, "
                                             "0x5eedu));\n"
                                             "    float u1 = (float)((r.x >> 8) + 1u) * (1.0f / 16777216.0f); /* (0, "
                                             "1] */\n"
                                             "    float u2 = (float)(r.y >> 8) * (1.0f / 16777216.0f);        /* [0, "
                                             "1) */\n"
                                             "    out[i] = sqrt(-2.0f * log(u1)) * cos(6.28318530717958648f * u2);\n"
                                             "}\n"
                                             "\n"
                                             "/* aten::mm: c = a @ b, n x n row-major, local-memory tiles. */\n"
                                             "__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1)))\n"
                                             "void gemm_tiled(__global const float *a, __global const float *b, "
                                             "__global float *c, uint n)\n"
                                             "{\n"
                                             "    __local float as[TILE][TILE];\n"
                                             "    __local float bs[TILE][TILE];\n"
                                             "    uint col = get_global_id(0), row = get_global_id(1);\n"
                                             "    uint lx = get_local_id(0), ly = get_local_id(1);\n"
                                             "    float acc = 0.0f;\n"
                                             "    for (uint t = 0; t < n; t += TILE) {\n"
                                             "        uint acol = t + lx, brow = t + ly;\n"
                                             "        as[ly][lx] = (row < n && acol < n) ? a[row * n + acol] : 0.0f;\n"
                                             "        bs[ly][lx] = (brow < n && col < n) ? b[brow * n + col] : 0.0f;\n"
                                             "        barrier(CLK_LOCAL_MEM_FENCE);\n"
                                             "        for (uint k = 0; k < TILE; k++) acc += as[ly][k] * bs[k][lx];\n"
                                             "        barrier(CLK_LOCAL_MEM_FENCE);\n"
                                             "    }\n"
                                             "    if (row < n && col < n) c[row * n + col] = acc;\n"
                                             "}\n"
                                             "\n"
                                             "/* aten::relu: out = max(in, 0), elementwise. */\n"
                                             "__kernel void relu(__global const float *in, __global float *out, uint "
                                             "count)\n"
                                             "{\n"
                                             "    uint i = get_global_id(0);\n"
                                             "    if (i < count) { float v = in[i]; out[i] = v > 0.0f ? v : 0.0f; }\n"
                                             "}\n"
                                             "\n"
                                             "/* aten::sort, first kernel: indices 0..count-1 (int64, as torch.sort "
                                             "returns). */\n"
                                             "__kernel void fill_index(__global long *idx, uint count)\n"
                                             "{\n"
                                             "    uint i = get_global_id(0);\n"
                                             "    if (i < count) idx[i] = (long)i;\n"
                                             "}\n"
                                             "\n"
                                             "/* aten::sort, second kernel: ascending bitonic sort of SORT_N keys "
                                             "carrying their\n"
                                             "   indices, one work-group in local memory. keys_out is the sorted copy. "
                                             "*/\n"
                                             "__kernel __attribute__((reqd_work_group_size(SORT_N, 1, 1)))\n"
                                             "void bitonic_sort_kv(__global const float *keys_in, __global float "
                                             "*keys_out, __global long *idx)\n"
                                             "{\n"
                                             "    __local float keys[SORT_N];\n"
                                             "    __local long vals[SORT_N];\n"
                                             "    uint i = get_local_id(0);\n"
                                             "    keys[i] = keys_in[i];\n"
                                             "    vals[i] = idx[i];\n"
                                             "    barrier(CLK_LOCAL_MEM_FENCE);\n"
                                             "    for (uint size = 2; size <= SORT_N; size <<= 1) {\n"
                                             "        for (uint stride = size >> 1; stride > 0; stride >>= 1) {\n"
                                             "            uint partner = i ^ stride;\n"
                                             "            if (partner > i) {\n"
                                             "                float ki = keys[i], kp = keys[partner];\n"
                                             "                int swap = ((i & size) == 0) ? (ki > kp) : (ki < kp);\n"
                                             "                if (swap) {\n"
                                             "                    long vi = vals[i];\n"
                                             "                    keys[i] = kp; keys[partner] = ki;\n"
                                             "                    vals[i] = vals[partner]; vals[partner] = vi;\n"
                                             "                }\n"
                                             "            }\n"
                                             "            barrier(CLK_LOCAL_MEM_FENCE);\n"
                                             "        }\n"
                                             "    }\n"
                                             "    keys_out[i] = keys[i];\n"
                                             "    idx[i] = vals[i];\n"
                                             "}\n"
                                             "\n"
                                             "/* aten::sum, first kernel: zero the accumulator. */\n"
                                             "__kernel void fill_zero(__global float *out, uint count)\n"
                                             "{\n"
                                             "    uint i = get_global_id(0);\n"
                                             "    if (i < count) out[i] = 0.0f;\n"
                                             "}\n"
                                             "\n"
                                             "/* aten::sum, second kernel: one work-group; strided per-item partial "
                                             "sums, then a\n"
                                             "   tree in local memory; a fixed order, so the result is the same on "
                                             "every run. */\n"
                                             "__kernel __attribute__((reqd_work_group_size(REDUCE_GROUP, 1, 1)))\n"
                                             "void reduce_sum(__global const float *in, uint count, __global float "
                                             "*out)\n"
                                             "{\n"
                                             "    __local float partial[REDUCE_GROUP];\n"
                                             "    uint lid = get_local_id(0);\n"
                                             "    float acc = 0.0f;\n"
                                             "    for (uint i = lid; i < count; i += REDUCE_GROUP) acc += in[i];\n"
                                             "    partial[lid] = acc;\n"
                                             "    barrier(CLK_LOCAL_MEM_FENCE);\n"
                                             "    for (uint s = REDUCE_GROUP / 2; s > 0; s >>= 1) {\n"
                                             "        if (lid < s) partial[lid] += partial[lid + s];\n"
                                             "        barrier(CLK_LOCAL_MEM_FENCE);\n"
                                             "    }\n"
                                             "    if (lid == 0) out[0] += partial[0];\n"
                                             "}\n";

/* ------------------------------------------------------------ OpenCL state */

typedef struct parity_cl {
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    cl_program program;
    cl_kernel kernels[KERNEL_COUNT];
    char device_name[256];
    char platform_version[256];
} parity_cl;

/* Device buffers, created inside the op that first needs them (as PyTorch allocates). */
typedef struct parity_buffers {
    cl_mem x, y, small;
    cl_mem mm_out, relu_out;
    cl_mem sort_values, sort_indices;
    cl_mem sum_out;
} parity_buffers;

/* One clGetDeviceIDs call; a platform without such a device is not an error. */
static cl_device_id first_device_of_type(cl_platform_id platform, cl_device_type type)
{
    cl_device_id device = NULL;
    cl_uint found = 0;
    cl_int err = CL_CALL(clGetDeviceIDs, platform, type, 1, &device, &found);
    if (err == CL_DEVICE_NOT_FOUND || (err == CL_SUCCESS && found == 0))
        return NULL;
    cl_check(err, "clGetDeviceIDs");
    return device;
}

/* 1 + 2 * platforms calls, whatever the devices are: GPU preferred, else any device. */
static void select_device(parity_cl *cl)
{
    cl_platform_id platforms[MAX_PLATFORMS];
    cl_uint count = 0;
    cl_int err = CL_CALL(clGetPlatformIDs, MAX_PLATFORMS, platforms, &count);
    if (err == CL_PLATFORM_NOT_FOUND_KHR || (err == CL_SUCCESS && count == 0))
        die("no OpenCL platform found: install an OpenCL driver (e.g. pocl-opencl-icd) and its ICD file");
    cl_check(err, "clGetPlatformIDs");
    if (count > MAX_PLATFORMS)
        count = MAX_PLATFORMS;

    cl_device_id gpu = NULL, any = NULL;
    cl_platform_id gpu_platform = NULL, any_platform = NULL;
    for (cl_uint p = 0; p < count; p++) {
        cl_device_id g = first_device_of_type(platforms[p], CL_DEVICE_TYPE_GPU);
        cl_device_id a = first_device_of_type(platforms[p], CL_DEVICE_TYPE_ALL);
        if (gpu == NULL && g != NULL) {
            gpu = g;
            gpu_platform = platforms[p];
        }
        if (any == NULL && a != NULL) {
            any = a;
            any_platform = platforms[p];
        }
    }
    if (gpu == NULL && any == NULL)
        die("no OpenCL device found on any platform");
    cl->device = gpu != NULL ? gpu : any;
    cl->platform = gpu != NULL ? gpu_platform : any_platform;
}

/* clGetPlatformInfo 1 + clGetDeviceInfo 2. */
static void query_device(parity_cl *cl)
{
    size_t max_group = 0;
    CL_CHECK(clGetPlatformInfo, cl->platform, CL_PLATFORM_VERSION, sizeof cl->platform_version - 1,
             cl->platform_version, NULL);
    CL_CHECK(clGetDeviceInfo, cl->device, CL_DEVICE_NAME, sizeof cl->device_name - 1, cl->device_name, NULL);
    CL_CHECK(clGetDeviceInfo, cl->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof max_group, &max_group, NULL);
    if (max_group < GEMM_TILE * GEMM_TILE || max_group < REDUCE_GROUP) {
        fprintf(stderr, PROGRAM_NAME ": device '%s' allows work-groups of %zu items; this program needs %u\n",
                cl->device_name, max_group, GEMM_TILE * GEMM_TILE);
        exit(1);
    }
}

/* "OpenCL <major>.<minor> ..." -> major; 1 when unreadable. */
static int platform_major_version(const char *version)
{
    int major = 1, minor = 0;
    if (sscanf(version, "OpenCL %d.%d", &major, &minor) != 2)
        return 1;
    return major;
}

/* clCreateContext 1 + one queue call. No profiling requested: the tracer forces it. */
static void create_context_and_queue(parity_cl *cl)
{
    cl_int err = CL_SUCCESS;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)cl->platform, 0};
    cl->context = CL_CALL(clCreateContext, props, 1, &cl->device, NULL, NULL, &err);
    cl_check(err, "clCreateContext");
    if (platform_major_version(cl->platform_version) >= 2) {
        cl->queue = CL_CALL(clCreateCommandQueueWithProperties, cl->context, cl->device, NULL, &err);
        cl_check(err, "clCreateCommandQueueWithProperties");
    } else {
        cl->queue = CL_CALL(clCreateCommandQueue, cl->context, cl->device, 0, &err);
        cl_check(err, "clCreateCommandQueue");
    }
}

static void print_build_log(parity_cl *cl)
{
    char log[8192];
    size_t size = 0;
    cl_int err =
        CL_CALL(clGetProgramBuildInfo, cl->program, cl->device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, &size);
    if (err != CL_SUCCESS)
        return;
    log[size < sizeof log ? size : sizeof log - 1] = '\0';
    fprintf(stderr, PROGRAM_NAME ": build log:\n%s\n", log);
}

/* clCreateProgramWithSource 1 + clBuildProgram 1 + clCreateKernel 7. */
static void build_kernels(parity_cl *cl)
{
    cl_int err = CL_SUCCESS;
    const char *source = kernel_source;
    size_t length = sizeof kernel_source - 1;
    cl->program = CL_CALL(clCreateProgramWithSource, cl->context, 1, &source, &length, &err);
    cl_check(err, "clCreateProgramWithSource");
    err = CL_CALL(clBuildProgram, cl->program, 1, &cl->device, "-cl-std=CL1.2", NULL, NULL);
    if (err == CL_BUILD_PROGRAM_FAILURE)
        print_build_log(cl);
    cl_check(err, "clBuildProgram");
    for (int k = 0; k < KERNEL_COUNT; k++) {
        cl->kernels[k] = CL_CALL(clCreateKernel, cl->program, kernel_names[k], &err);
        cl_check(err, "clCreateKernel");
    }
}

static void setup_opencl(parity_cl *cl)
{
    memset(cl, 0, sizeof *cl);
    select_device(cl);
    query_device(cl);
    create_context_and_queue(cl);
    build_kernels(cl);
}

/* ------------------------------------------------------- workload helpers */

static cl_mem create_buffer(parity_cl *cl, size_t bytes)
{
    cl_int err = CL_SUCCESS;
    cl_mem mem = CL_CALL(clCreateBuffer, cl->context, CL_MEM_READ_WRITE, bytes, NULL, &err);
    cl_check(err, "clCreateBuffer");
    return mem;
}

static void set_mem_arg(cl_kernel kernel, cl_uint index, cl_mem mem)
{
    CL_CHECK(clSetKernelArg, kernel, index, sizeof mem, &mem);
}

static void set_uint_arg(cl_kernel kernel, cl_uint index, cl_uint value)
{
    CL_CHECK(clSetKernelArg, kernel, index, sizeof value, &value);
}

static size_t round_up(size_t value, size_t multiple)
{
    return (value + multiple - 1) / multiple * multiple;
}

/* One clEnqueueNDRangeKernel; event may be NULL (the common case). */
static void launch(parity_cl *cl, cl_kernel kernel, cl_uint dims, const size_t *global, const size_t *local,
                   cl_event *event)
{
    CL_CHECK(clEnqueueNDRangeKernel, cl->queue, kernel, dims, NULL, global, local, 0, NULL, event);
}

static void launch_1d(parity_cl *cl, cl_kernel kernel, size_t items, size_t group, cl_event *event)
{
    size_t global = round_up(items, group);
    launch(cl, kernel, 1, &global, &group, event);
}

/* ----------------------------------------------------------------- the ops */

/* aten::randn: clCreateBuffer 1, clSetKernelArg 3, 1 kernel. */
static cl_mem op_randn(parity_cl *cl, uint64_t id, cl_uint count)
{
    op_begin("aten::randn", id);
    cl_kernel k = cl->kernels[K_RANDN];
    cl_mem out = create_buffer(cl, (size_t)count * sizeof(float));
    set_mem_arg(k, 0, out);
    set_uint_arg(k, 1, count);
    set_uint_arg(k, 2, RANDN_SEED_BASE + (cl_uint)id);
    launch_1d(cl, k, count, ELEMENTWISE_GROUP, NULL);
    op_end();
    return out;
}

/* aten::mm: clSetKernelArg 4, 1 kernel (plus clCreateBuffer the first time). */
static void op_mm(parity_cl *cl, parity_buffers *b, uint64_t id, cl_uint n)
{
    op_begin("aten::mm", id);
    cl_kernel k = cl->kernels[K_GEMM];
    if (b->mm_out == NULL)
        b->mm_out = create_buffer(cl, (size_t)n * n * sizeof(float));
    set_mem_arg(k, 0, b->x);
    set_mem_arg(k, 1, b->y);
    set_mem_arg(k, 2, b->mm_out);
    set_uint_arg(k, 3, n);
    size_t global[2] = {round_up(n, GEMM_TILE), round_up(n, GEMM_TILE)};
    size_t local[2] = {GEMM_TILE, GEMM_TILE};
    launch(cl, k, 2, global, local, NULL);
    op_end();
}

/* aten::relu: clSetKernelArg 3, 1 kernel (plus clCreateBuffer the first time). */
static void op_relu(parity_cl *cl, parity_buffers *b, uint64_t id, cl_uint n)
{
    op_begin("aten::relu", id);
    cl_kernel k = cl->kernels[K_RELU];
    cl_uint count = n * n;
    if (b->relu_out == NULL)
        b->relu_out = create_buffer(cl, (size_t)count * sizeof(float));
    set_mem_arg(k, 0, b->mm_out);
    set_mem_arg(k, 1, b->relu_out);
    set_uint_arg(k, 2, count);
    launch_1d(cl, k, count, ELEMENTWISE_GROUP, NULL);
    op_end();
}

/* aten::sort: clCreateBuffer 2, clEnqueueFillBuffer 1 (the memset), clSetKernelArg 5,
 * 2 kernels (fill_index, bitonic_sort_kv). */
static void op_sort(parity_cl *cl, parity_buffers *b, uint64_t id)
{
    op_begin("aten::sort", id);
    const cl_long zero = 0;
    b->sort_values = create_buffer(cl, SORT_N * sizeof(cl_float));
    b->sort_indices = create_buffer(cl, SORT_N * sizeof(cl_long));
    CL_CHECK(clEnqueueFillBuffer, cl->queue, b->sort_indices, &zero, sizeof zero, 0, SORT_N * sizeof(cl_long), 0, NULL,
             NULL);
    cl_kernel fill = cl->kernels[K_FILL_INDEX];
    set_mem_arg(fill, 0, b->sort_indices);
    set_uint_arg(fill, 1, SORT_N);
    launch_1d(cl, fill, SORT_N, SORT_N, NULL);
    cl_kernel sort = cl->kernels[K_BITONIC];
    set_mem_arg(sort, 0, b->small);
    set_mem_arg(sort, 1, b->sort_values);
    set_mem_arg(sort, 2, b->sort_indices);
    launch_1d(cl, sort, SORT_N, SORT_N, NULL);
    op_end();
}

/* aten::sum: clCreateBuffer 1, clSetKernelArg 5, 2 kernels (fill_zero, reduce_sum);
 * reduce_sum carries a real event: clWaitForEvents 1, clReleaseEvent 1. */
static void op_sum(parity_cl *cl, parity_buffers *b, uint64_t id, cl_uint n)
{
    op_begin("aten::sum", id);
    cl_event done = NULL;
    b->sum_out = create_buffer(cl, sizeof(cl_float));
    cl_kernel zero = cl->kernels[K_FILL_ZERO];
    set_mem_arg(zero, 0, b->sum_out);
    set_uint_arg(zero, 1, 1);
    launch_1d(cl, zero, 1, FILL_GROUP, NULL);
    cl_kernel reduce = cl->kernels[K_REDUCE];
    set_mem_arg(reduce, 0, b->relu_out);
    set_uint_arg(reduce, 1, n * n);
    set_mem_arg(reduce, 2, b->sum_out);
    launch_1d(cl, reduce, REDUCE_GROUP, REDUCE_GROUP, &done);
    CL_CHECK(clWaitForEvents, 1, &done);
    CL_CHECK(clReleaseEvent, done);
    op_end();
}

/* aten::item: one blocking 4-byte clEnqueueReadBuffer, the only transfer. */
static float op_item(parity_cl *cl, parity_buffers *b, uint64_t id)
{
    op_begin("aten::item", id);
    cl_float value = 0.0f;
    CL_CHECK(clEnqueueReadBuffer, cl->queue, b->sum_out, CL_TRUE, 0, sizeof value, &value, 0, NULL, NULL);
    op_end();
    return value;
}

/* ProfilerStep#0: the whole workload, ids 0..16 as in parity.wl, then clFinish. */
static float run_workload(parity_cl *cl, parity_buffers *b, cl_uint n)
{
    uint64_t id = 0;
    op_begin("ProfilerStep#0", id++);
    b->x = op_randn(cl, id++, n * n);
    b->y = op_randn(cl, id++, n * n);
    b->small = op_randn(cl, id++, SORT_N);
    for (int i = 0; i < 5; i++) {
        op_mm(cl, b, id++, n);
        op_relu(cl, b, id++, n);
    }
    op_sort(cl, b, id++);
    op_sum(cl, b, id++, n);
    float sum = op_item(cl, b, id++);
    CL_CHECK(clFinish, cl->queue);
    op_end();
    return sum;
}

/* ---------------------------------------------------------------- teardown */

static void release_mem(cl_mem mem)
{
    if (mem != NULL)
        CL_CHECK(clReleaseMemObject, mem);
}

/* clReleaseKernel 7, clReleaseProgram 1, clReleaseMemObject 8, queue 1, context 1. */
static void release_all(parity_cl *cl, parity_buffers *b)
{
    cl_mem mems[] = {b->x, b->y, b->small, b->mm_out, b->relu_out, b->sort_values, b->sort_indices, b->sum_out};
    for (size_t i = 0; i < sizeof mems / sizeof mems[0]; i++)
        release_mem(mems[i]);
    for (int k = 0; k < KERNEL_COUNT; k++)
        CL_CHECK(clReleaseKernel, cl->kernels[k]);
    CL_CHECK(clReleaseProgram, cl->program);
    CL_CHECK(clReleaseCommandQueue, cl->queue);
    CL_CHECK(clReleaseContext, cl->context);
}

/* ------------------------------------------------------------ --check mode */

/* Host Philox4x32-10 and Box-Muller, mirroring randn_philox (in double). */
static void host_philox(uint32_t c[4], uint32_t k0, uint32_t k1)
{
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c[0];
        uint64_t p1 = (uint64_t)0xCD9E8D57u * c[2];
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c[1] ^ k0;
        uint32_t n2 = (uint32_t)(p0 >> 32) ^ c[3] ^ k1;
        c[1] = (uint32_t)p1;
        c[3] = (uint32_t)p0;
        c[0] = n0;
        c[2] = n2;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
}

static double host_randn(uint32_t seed, uint32_t i)
{
    uint32_t c[4] = {i, 0, 0, 0};
    host_philox(c, seed, 0x5eedu);
    double u1 = (double)((c[0] >> 8) + 1u) / 16777216.0;
    double u2 = (double)(c[1] >> 8) / 16777216.0;
    return sqrt(-2.0 * log(u1)) * cos(6.28318530717958648 * u2);
}

static float *read_floats(parity_cl *cl, cl_mem mem, size_t count)
{
    float *host = malloc(count * sizeof *host);
    if (host == NULL)
        die("out of host memory for --check");
    CL_CHECK(clEnqueueReadBuffer, cl->queue, mem, CL_TRUE, 0, count * sizeof *host, host, 0, NULL, NULL);
    return host;
}

static int check_randn(const char *what, const float *values, size_t count, uint32_t seed)
{
    for (size_t i = 0; i < count; i++) {
        double want = host_randn(seed, (uint32_t)i);
        if (fabs(values[i] - want) > 1e-4 * (1.0 + fabs(want))) {
            fprintf(stderr, "check: randn %s[%zu] = %.9g, reference %.9g\n", what, i, values[i], want);
            return -1;
        }
    }
    return 0;
}

/* relu(x @ y) against a double reference, tolerance from the float error bound. */
static int check_mm_relu(const float *x, const float *y, const float *relu, unsigned n)
{
    for (size_t r = 0; r < n; r++) {
        for (size_t c = 0; c < n; c++) {
            double acc = 0.0, magnitude = 0.0;
            for (size_t k = 0; k < n; k++) {
                acc += (double)x[r * n + k] * y[k * n + c];
                magnitude += fabs((double)x[r * n + k] * y[k * n + c]);
            }
            double want = acc > 0.0 ? acc : 0.0;
            double tolerance = 2.0 * n * FLT_EPSILON * magnitude + 1e-6;
            if (fabs(relu[r * n + c] - want) > tolerance) {
                fprintf(stderr, "check: relu(x@y)[%zu,%zu] = %.9g, reference %.9g\n", r, c, relu[r * n + c], want);
                return -1;
            }
        }
    }
    return 0;
}

static int check_sort(const float *small, const float *sorted, const cl_long *indices)
{
    int seen[SORT_N] = {0};
    for (unsigned i = 0; i < SORT_N; i++) {
        if (indices[i] < 0 || indices[i] >= (cl_long)SORT_N || seen[indices[i]]++) {
            fprintf(stderr, "check: sort indices are not a permutation (at %u)\n", i);
            return -1;
        }
        if (memcmp(&sorted[i], &small[indices[i]], sizeof(float)) != 0 || (i > 0 && sorted[i - 1] > sorted[i])) {
            fprintf(stderr, "check: sort output wrong at %u\n", i);
            return -1;
        }
    }
    return 0;
}

static int check_sum(float sum, const float *relu, size_t count)
{
    double want = 0.0;
    for (size_t i = 0; i < count; i++)
        want += relu[i];
    if (fabs(sum - want) > 1e-4 * want + 1e-6) {
        fprintf(stderr, "check: sum = %.9g, reference %.9g\n", sum, want);
        return -1;
    }
    return 0;
}

/* Reads x, y, small, relu_out, sorted values and indices (6 reads) and compares. */
static int run_check(parity_cl *cl, parity_buffers *b, unsigned n, float sum)
{
    size_t count = (size_t)n * n;
    float *x = read_floats(cl, b->x, count);
    float *y = read_floats(cl, b->y, count);
    float *relu = read_floats(cl, b->relu_out, count);
    float *small = read_floats(cl, b->small, SORT_N);
    float *sorted = read_floats(cl, b->sort_values, SORT_N);
    cl_long indices[SORT_N];
    CL_CHECK(clEnqueueReadBuffer, cl->queue, b->sort_indices, CL_TRUE, 0, sizeof indices, indices, 0, NULL, NULL);

    int bad = check_randn("x", x, count, RANDN_SEED_BASE + 1) || check_randn("y", y, count, RANDN_SEED_BASE + 2) ||
              check_randn("small", small, SORT_N, RANDN_SEED_BASE + 3) || check_mm_relu(x, y, relu, n) ||
              check_sort(small, sorted, indices) || check_sum(sum, relu, count);
    free(x);
    free(y);
    free(relu);
    free(small);
    free(sorted);
    return bad ? -1 : 0;
}

/* -------------------------------------------------------------------- main */

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void print_result(float sum)
{
    uint32_t bits;
    memcpy(&bits, &sum, sizeof bits);
    printf("result: sum=%.9g checksum=%08" PRIx32 "\n", (double)sum, bits);
}

int main(int argc, char **argv)
{
    options opt;
    parity_cl cl;
    parity_buffers buffers = {0};
    parse_options(argc, argv, &opt);
    const char *binding = bind_annotations();

    double start = now_seconds();
    setup_opencl(&cl);
    if (!opt.quiet)
        fprintf(stderr, PROGRAM_NAME ": device: %s (%s)\n", cl.device_name, cl.platform_version);
    float sum = run_workload(&cl, &buffers, opt.size);
    int check_failed = opt.check && run_check(&cl, &buffers, opt.size, sum) != 0;
    release_all(&cl, &buffers);
    double elapsed = now_seconds() - start;

    print_result(sum);
    if (opt.check)
        printf("check: %s\n", check_failed ? "FAILED" : "ok");
    if (opt.print_api_count)
        printf("api_calls=%lu\n", g_api_total);
    if (opt.verbose) {
        fprintf(stderr, PROGRAM_NAME ": annotations: %s\n", binding);
        fprintf(stderr, PROGRAM_NAME ": size %u, %.3f s from setup to teardown\n", opt.size, elapsed);
        api_print(stderr);
    }
    return check_failed ? 1 : 0;
}
