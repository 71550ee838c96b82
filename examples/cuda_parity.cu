/* cuda_parity.cu: the shape of the parity workload (shared/workloads/parity.wl) as a
 * real CUDA program, for checking the CUPTI backend on an NVIDIA GPU (scripts/gpu-check):
 * x, y = randn(N, N) and small = randn(16) made on the device (three kernels, no
 * uploads), 5 x (GEMM, ReLU), a sort (one cudaMemsetAsync and two kernels), a sum (two
 * kernels) and one 4-byte read-back: exactly 17 kernels, 1 memset, 1 memcpy DtoH. Each
 * op is wrapped in devtrace_annotate_push/pop (ids as in parity.wl) when libdevtrace is
 * loaded in the process (under `devtrace record --backend cupti` the CUDA driver loads it
 * through CUDA_INJECTION64_PATH); without it the program runs unannotated.
 *
 * Prints `result: sum=... checksum=...` (deterministic) and, with --print-api-count,
 * `api_calls=N`: the CUDA runtime calls the program made itself (each <<<>>> launch
 * counted as one cudaLaunchKernel). */
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int api_calls;
#define CUDA(call)                                                                               \
    do {                                                                                         \
        api_calls++;                                                                             \
        cudaError_t rc_ = (call);                                                                \
        if (rc_ != cudaSuccess) {                                                                \
            fprintf(stderr, "cuda-parity: %s failed: %s\n", #call, cudaGetErrorString(rc_));    \
            exit(1);                                                                             \
        }                                                                                        \
    } while (0)
#define LAUNCH(...)                                                                              \
    do {                                                                                         \
        api_calls++;                                                                             \
        __VA_ARGS__;                                                                             \
        cudaError_t rc_ = cudaPeekAtLastError(); /* not a traced call of ours: not counted */    \
        if (rc_ != cudaSuccess) {                                                                \
            fprintf(stderr, "cuda-parity: launch failed: %s\n", cudaGetErrorString(rc_));       \
            exit(1);                                                                             \
        }                                                                                        \
    } while (0)

typedef int (*push_fn)(const char *, uint64_t);
typedef int (*pop_fn)(void);
static push_fn annotate_push;
static pop_fn annotate_pop;

static void find_annotations(void)
{
    if (annotate_push)
        return;
    void *lib = dlopen("libdevtrace.so.0", RTLD_NOW | RTLD_NOLOAD);
    const char *path = getenv("CUDA_INJECTION64_PATH");
    if (!lib && path)
        lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    void *h = lib ? lib : RTLD_DEFAULT;
    annotate_push = (push_fn)dlsym(h, "devtrace_annotate_push");
    annotate_pop = (pop_fn)dlsym(h, "devtrace_annotate_pop");
}

static void op_push(const char *name, uint64_t id)
{
    find_annotations();
    if (annotate_push)
        annotate_push(name, id);
}

static void op_pop(void)
{
    if (annotate_pop)
        annotate_pop();
}

__device__ static float uniform01(uint64_t seed, uint64_t i)
{
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + i;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return ((float)(z >> 40) + 0.5f) / 16777216.0f;
}

__global__ void randn_philox(float *out, uint64_t n, uint64_t seed)
{
    uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float u1 = uniform01(seed, 2 * i), u2 = uniform01(seed, 2 * i + 1);
    out[i] = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
}

#define TILE 16
__global__ void gemm_tiled(const float *a, const float *b, float *c, int n)
{
    __shared__ float ta[TILE][TILE], tb[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < n; t += TILE) {
        ta[threadIdx.y][threadIdx.x] = (row < n && t + threadIdx.x < n) ? a[row * n + t + threadIdx.x] : 0.0f;
        tb[threadIdx.y][threadIdx.x] = (col < n && t + threadIdx.y < n) ? b[(t + threadIdx.y) * n + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; k++)
            acc += ta[threadIdx.y][k] * tb[k][threadIdx.x];
        __syncthreads();
    }
    if (row < n && col < n)
        c[row * n + col] = acc;
}

__global__ void relu(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = fmaxf(x[i], 0.0f);
}

__global__ void fill_index(int64_t *idx, int n)
{
    int i = threadIdx.x;
    if (i < n)
        idx[i] += i; /* the memset zeroed it */
}

__global__ void bitonic_sort_kv(float *keys, int64_t *vals)
{
    __shared__ float k[16];
    __shared__ int64_t v[16];
    int i = threadIdx.x;
    k[i] = keys[i];
    v[i] = vals[i];
    __syncthreads();
    for (int size = 2; size <= 16; size <<= 1)
        for (int stride = size >> 1; stride > 0; stride >>= 1) {
            int j = i ^ stride;
            if (j > i) {
                bool up = (i & size) == 0;
                if ((k[i] > k[j]) == up) {
                    float tk = k[i]; k[i] = k[j]; k[j] = tk;
                    int64_t tv = v[i]; v[i] = v[j]; v[j] = tv;
                }
            }
            __syncthreads();
        }
    keys[i] = k[i];
    vals[i] = v[i];
}

__global__ void fill_zero(float *x)
{
    if (threadIdx.x == 0)
        *x = 0.0f;
}

__global__ void reduce_sum(const float *x, int n, float *out)
{
    __shared__ float part[512];
    float acc = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        acc += x[i];
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        *out += part[0];
}

static unsigned blocks_for(uint64_t n, unsigned threads)
{
    return (unsigned)((n + threads - 1) / threads);
}

int main(int argc, char **argv)
{
    int n = 256, print_count = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--size") && i + 1 < argc)
            n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--print-api-count"))
            print_count = 1;
        else if (!strcmp(argv[i], "--help")) {
            printf("usage: cuda-parity [--size N] [--print-api-count]\n");
            return 0;
        } else {
            fprintf(stderr, "cuda-parity: unknown option '%s'\n", argv[i]);
            return 2;
        }
    }
    if (n < 16 || n > 8192) {
        fprintf(stderr, "cuda-parity: --size must be 16..8192\n");
        return 2;
    }
    size_t nn = (size_t)n * n;
    float *x, *y, *z, *small, *sum;
    int64_t *idx;
    CUDA(cudaSetDevice(0));
    cudaStream_t stream;
    CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    op_push("ProfilerStep#0", 0);
    op_push("aten::randn", 1);
    CUDA(cudaMalloc(&x, nn * sizeof(float)));
    LAUNCH(randn_philox<<<blocks_for(nn, 256), 256, 0, stream>>>(x, nn, 1));
    op_pop();
    op_push("aten::randn", 2);
    CUDA(cudaMalloc(&y, nn * sizeof(float)));
    LAUNCH(randn_philox<<<blocks_for(nn, 256), 256, 0, stream>>>(y, nn, 2));
    op_pop();
    op_push("aten::randn", 3);
    CUDA(cudaMalloc(&small, 16 * sizeof(float)));
    LAUNCH(randn_philox<<<1, 256, 0, stream>>>(small, 16, 3));
    op_pop();
    CUDA(cudaMalloc(&z, nn * sizeof(float)));
    dim3 tile(TILE, TILE), grid((unsigned)((n + TILE - 1) / TILE), (unsigned)((n + TILE - 1) / TILE));
    for (int r = 0; r < 5; r++) {
        op_push("aten::mm", 4 + 2 * r);
        LAUNCH(gemm_tiled<<<grid, tile, 0, stream>>>(x, y, z, n));
        op_pop();
        op_push("aten::relu", 5 + 2 * r);
        LAUNCH(relu<<<blocks_for(nn, 128), 128, 0, stream>>>(z, (int)nn));
        op_pop();
    }
    op_push("aten::sort", 14);
    CUDA(cudaMalloc(&idx, 16 * sizeof(int64_t)));
    CUDA(cudaMemsetAsync(idx, 0, 16 * sizeof(int64_t), stream));
    LAUNCH(fill_index<<<1, 16, 0, stream>>>(idx, 16));
    LAUNCH(bitonic_sort_kv<<<1, 16, 0, stream>>>(small, idx));
    op_pop();
    op_push("aten::sum", 15);
    CUDA(cudaMalloc(&sum, sizeof(float)));
    LAUNCH(fill_zero<<<1, 64, 0, stream>>>(sum));
    LAUNCH(reduce_sum<<<1, 512, 0, stream>>>(z, (int)nn, sum));
    op_pop();
    op_push("aten::item", 16);
    float host = 0.0f;
    CUDA(cudaMemcpyAsync(&host, sum, sizeof host, cudaMemcpyDeviceToHost, stream));
    CUDA(cudaStreamSynchronize(stream));
    op_pop();
    op_pop();
    CUDA(cudaFree(x));
    CUDA(cudaFree(y));
    CUDA(cudaFree(z));
    CUDA(cudaFree(small));
    CUDA(cudaFree(idx));
    CUDA(cudaFree(sum));
    CUDA(cudaStreamDestroy(stream));
    uint32_t bits;
    memcpy(&bits, &host, sizeof bits);
    printf("result: sum=%.9g checksum=%08x\n", host, bits);
    if (print_count)
        printf("api_calls=%d\n", api_calls);
    return 0;
}
