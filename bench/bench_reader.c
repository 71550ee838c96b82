/* bench_reader.c: the figures of `devtrace report`'s reader (src/report/trace_reader.h).
 *
 * A torch.profiler-shaped trace of sz->trace_bytes (1 GiB in the full run) is written to the
 * scratch folder: per step a python_function, a cpu_op, its runtime call, its kernel and the
 * flow between them, pretty-printed as torch.profiler writes them. Then, from the page cache
 * (the file was just written: these are reads at memory speed, not the disk's):
 *   report.read_baseline_mbps  read(2) of the file in 4 MiB pieces, nothing parsed (the ceiling)
 *   report.reader_mbps         the reader: every event parsed and handed to a callback
 *   report.reader_cpu_mbps     the same per second of the reading thread's CPU time (what the
 *                              reader costs, less what waiting for a CPU on a busy machine adds)
 *   report.tables_mbps         dt_report_read: every table of `devtrace report` computed
 *   report.reader.vs_read      (judged) read(2)'s CPU time over the reader's, same repetition
 *   report.tables.vs_read      (judged) read(2)'s CPU time over the tables', same repetition
 * and, when $DEVTRACE_HTA_DIR names a checkout of Holistic Trace Analysis (with pandas importable
 * by $DEVTRACE_HTA_PYTHON, default /usr/bin/python3):
 *   report.hta_kernel_breakdown_s  TraceAnalysis(trace_dir).get_gpu_kernel_breakdown(), the
 *                                  whole python process (its parse is part of the answer)
 *   report.speedup_vs_hta          that time over the time of dt_report_read on the same file
 * Without HTA both rows say why they are not measured.
 *
 * Then a trace shaped like a real PyTorch 2.x export (write_real_step: a ProfilerStep, python
 * functions, ops nested four deep with the args torch.profiler records - Input Dims, Input type,
 * Input Strides, Concrete Inputs, Sequence number, Ev Idx -, runtime calls, kernels with long
 * template and Itanium-mangled names and CUPTI's dozen args, copies with bytes, flows), each
 * figure beside a reference measured in the same run on the same bytes:
 *   report.real.memchr_mbps     read(2) in 4 MiB pieces and memchr for every '{': the floor of
 *                               any JSON reader (the reference: the faster of two runs per round)
 *   report.real.reader_mbps     the reader (every event parsed), and .reader_ratio: its MB per
 *                               second of CPU time over the reference's (CPU time: on a loaded
 *                               machine the wall clock counts the waits for a CPU)
 *   report.real.tables_mbps     dt_report_read (every table, ops linked through correlations),
 *                               and .tables_ratio likewise
 *   report.real.speedup_vs_hta  with HTA, as report.speedup_vs_hta on this trace */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "report/report.h"
#include "report/trace_reader.h"

/* The targets: the reader's and the tables' time against read(2) alone of the same file,
 * same repetition; the tables against HTA's time on the same file. */
#define READER_MIN_RATIO 0.25
#define TABLES_MIN_RATIO 0.17
#define HTA_MIN_SPEEDUP 20.0

/* One step of a training loop as torch.profiler exports it (absolute microseconds). */
static int write_step(FILE *f, uint64_t step, double t, int first)
{
    uint64_t ext = step * 2 + 10, corr = step + 1000;
    static const char *const kernels[] = {
        "ampere_sgemm_128x64_nn",
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
        "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
        "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
        "at::native::sum_functor<float, float, float> >, unsigned int, float, 4> >(at::native::ReduceOp<float, "
        "at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float> >, unsigned int, float, 4>)"};
    static const char *const ops[] = {"aten::mm", "aten::add_", "aten::sum"};
    int k = (int)(step % 3);
    return fprintf(
        f,
        "%s  {\n    \"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"model.py(%d): forward\", "
        "\"pid\": 4242, \"tid\": 4242,\n    \"ts\": %.3f, \"dur\": 30.000,\n    \"args\": {\n      "
        "\"Python parent id\": %llu, \"Python id\": %llu, \"Python thread\": 0\n    }\n  },\n"
        "  {\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", \"pid\": 4242, \"tid\": 4242,\n    "
        "\"ts\": %.3f, \"dur\": 20.500,\n    \"args\": {\n      \"External id\": %llu,\"Record function id\": "
        "0, \"Sequence number\": %llu, \"Fwd thread id\": 0, \"Ev Idx\": %llu,\n      \"Input Dims\": "
        "[[512, 512], [512, 512]], \"Input type\": [\"float\", \"float\"]\n    }\n  },\n"
        "  {\n    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 4242, "
        "\"tid\": 4242,\n    \"ts\": %.3f, \"dur\": 5.250,\n    \"args\": {\n      \"External id\": %llu, "
        "\"cbid\": 211, \"correlation\": %llu\n    }\n  },\n"
        "  {\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": 7,\n    "
        "\"ts\": %.3f, \"dur\": %.3f,\n    \"args\": {\n      \"External id\": %llu,\n      \"queued\": 0, "
        "\"device\": 0, \"context\": 1,\n      \"stream\": 7, \"correlation\": %llu,\n      \"registers per "
        "thread\": 128,\n      \"shared memory\": 16384,\n      \"blocks per SM\": 2.370370,\n      \"warps "
        "per SM\": 9.481481,\n      \"grid\": [8, 32, 1],\n      \"block\": [128, 1, 1],\n      \"est. "
        "achieved occupancy %%\": 14\n    }\n  },\n"
        "  {\n    \"ph\": \"s\", \"id\": %llu, \"pid\": 4242, \"tid\": 4242, \"ts\": %.3f,\n    \"cat\": "
        "\"ac2g\", \"name\": \"ac2g\"\n  },\n"
        "  {\n    \"ph\": \"f\", \"id\": %llu, \"pid\": 0, \"tid\": 7, \"ts\": %.3f,\n    \"cat\": \"ac2g\", "
        "\"name\": \"ac2g\", \"bp\": \"e\"\n  }",
        first ? "" : ",\n", (int)(step % 50), t, (unsigned long long)step, (unsigned long long)step + 1, ops[k], t + 2,
        (unsigned long long)ext, (unsigned long long)step, (unsigned long long)step, t + 5, (unsigned long long)ext,
        (unsigned long long)corr, kernels[k], t + 12, 4.0 + (double)(step % 7), (unsigned long long)ext,
        (unsigned long long)corr, (unsigned long long)corr, t + 5, (unsigned long long)corr, t + 12);
}

/* The trace at path, at least bytes long; 0 or -1. */
static int write_trace(const char *path, uint64_t bytes)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(
        "{\n  \"schemaVersion\": 1,\n  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, \"world_size\": 1},\n"
        "  \"record_shapes\": 1,\n  \"traceEvents\": [\n",
        f);
    double t = 1700000000000000.0;
    for (uint64_t step = 0; (uint64_t)ftell(f) < bytes; step++, t += 40.0)
        if (write_step(f, step, t, step == 0) < 0)
            break;
    fputs("\n],\n  \"traceName\": \"bench\",\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": "
          "1700000000000000000\n}\n",
          f);
    int bad = ferror(f);
    return fclose(f) != 0 || bad ? -1 : 0;
}


/* Kernel names as CUTLASS and PyTorch's templates give them (up to 704 bytes). */
static const char *const real_kernels[] = {
    "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8>"
    "(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8::Params)",
    "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::"
    "BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > "
    ">(at::TensorIteratorBase&, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, "
    "at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1}>(int, at::native::"
    "gpu_kernel_impl_nocast<at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, "
    "at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BinaryFunctor<"
    "c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > "
    "const&)::{lambda(int)#1})",
    "_ZN7cutlass6KernelI49cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8EEvNT_6ParamsE",
    "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, c10::BFloat16, float, c10::BFloat16, "
    "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, int)",
};

/* The ops of one linear layer as PyTorch records them: aten::linear > aten::t > aten::transpose >
 * aten::as_strided, then aten::addmm (inside aten::linear) which launches a kernel. */
static const char real_ops_format[] =
    ",\n  {\n    \"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"torch/nn/modules/linear.py(125): "
    "forward\", \"pid\": 2891, \"tid\": 2891,\n    \"ts\": %.3f, \"dur\": 110.000,\n    \"args\": {\n      "
    "\"Python parent id\": %llu, \"Python id\": %llu, \"Python thread\": 0\n    }\n  },\n"
    "  {\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::linear\", \"pid\": 2891, \"tid\": 2891,\n    "
    "\"ts\": %.3f, \"dur\": 100.000,\n    \"args\": {\n      \"External id\": %llu,\"Record function id\": 0, "
    "\"Ev Idx\": %llu, \"Sequence number\": %llu, \"Fwd thread id\": 0,\n      \"Input Dims\": [[8, 2048, "
    "4096], [11008, 4096], [11008]], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", "
    "\"c10::BFloat16\"], \"Input Strides\": [[8388608, 4096, 1], [4096, 1], [1]], \"Concrete Inputs\": "
    "[\"\", \"\", \"\"]\n    }\n  },\n"
    "  {\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::t\", \"pid\": 2891, \"tid\": 2891,\n    "
    "\"ts\": %.3f, \"dur\": 8.000,\n    \"args\": {\n      \"External id\": %llu,\"Record function id\": 0, "
    "\"Ev Idx\": %llu,\n      \"Input Dims\": [[11008, 4096]], \"Input type\": [\"c10::BFloat16\"], "
    "\"Input Strides\": [[4096, 1]], \"Concrete Inputs\": [\"\"]\n    }\n  },\n"
    "  {\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::transpose\", \"pid\": 2891, \"tid\": "
    "2891,\n    \"ts\": %.3f, \"dur\": 5.000,\n    \"args\": {\n      \"External id\": %llu,\"Record "
    "function id\": 0, \"Ev Idx\": %llu,\n      \"Input Dims\": [[11008, 4096], [], []], \"Input type\": "
    "[\"c10::BFloat16\", \"Scalar\", \"Scalar\"], \"Input Strides\": [[4096, 1], [], []], \"Concrete "
    "Inputs\": [\"\", \"0\", \"1\"]\n    }\n  },\n"
    "  {\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::as_strided\", \"pid\": 2891, \"tid\": "
    "2891,\n    \"ts\": %.3f, \"dur\": 2.000,\n    \"args\": {\n      \"External id\": %llu,\"Record "
    "function id\": 0, \"Ev Idx\": %llu,\n      \"Input Dims\": [[11008, 4096], [], [], []], \"Input "
    "type\": [\"c10::BFloat16\", \"\", \"\", \"\"], \"Input Strides\": [[4096, 1], [], [], []], "
    "\"Concrete Inputs\": [\"\", \"[4096, 11008]\", \"[1, 4096]\", \"\"]\n    }\n  },\n"
    "  {\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::addmm\", \"pid\": 2891, \"tid\": 2891,\n    "
    "\"ts\": %.3f, \"dur\": 70.000,\n    \"args\": {\n      \"External id\": %llu,\"Record function id\": 0, "
    "\"Ev Idx\": %llu, \"Sequence number\": %llu, \"Fwd thread id\": 0,\n      \"Input Dims\": [[11008], "
    "[16384, 4096], [4096, 11008], [], []], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", "
    "\"c10::BFloat16\", \"Scalar\", \"Scalar\"], \"Input Strides\": [[1], [4096, 1], [1, 4096], [], []], "
    "\"Concrete Inputs\": [\"\", \"\", \"\", \"1\", \"1\"]\n    }\n  },\n"
    "  {\n    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 2891, "
    "\"tid\": 2891,\n    \"ts\": %.3f, \"dur\": 6.500,\n    \"args\": {\n      \"External id\": %llu, "
    "\"cbid\": 211, \"correlation\": %llu\n    }\n  },\n"
    "  {\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": 7,\n    \"ts\": %.3f, "
    "\"dur\": %.3f,\n    \"args\": {\n      \"External id\": %llu,\n      \"queued\": 0, \"device\": 0, "
    "\"context\": 1,\n      \"stream\": 7, \"correlation\": %llu,\n      \"registers per thread\": 232,\n  "
    "    \"shared memory\": 73728,\n      \"blocks per SM\": 3.232323,\n      \"warps per SM\": "
    "12.929293,\n      \"grid\": [86, 128, 1],\n      \"block\": [128, 1, 1],\n      \"est. achieved "
    "occupancy %%\": 6\n    }\n  },\n"
    "  {\n    \"ph\": \"s\", \"id\": %llu, \"pid\": 2891, \"tid\": 2891, \"ts\": %.3f,\n    \"cat\": \"ac2g\", "
    "\"name\": \"ac2g\"\n  },\n"
    "  {\n    \"ph\": \"f\", \"id\": %llu, \"pid\": 0, \"tid\": 7, \"ts\": %.3f,\n    \"cat\": \"ac2g\", "
    "\"name\": \"ac2g\", \"bp\": \"e\"\n  },\n"
    "  {\n    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaMemcpyAsync\", \"pid\": 2891, "
    "\"tid\": 2891,\n    \"ts\": %.3f, \"dur\": 9.250,\n    \"args\": {\n      \"External id\": %llu, "
    "\"cbid\": 51, \"correlation\": %llu\n    }\n  },\n"
    "  {\n    \"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy DtoD (Device -> Device)\", \"pid\": "
    "0, \"tid\": 7,\n    \"ts\": %.3f, \"dur\": 1.504,\n    \"args\": {\n      \"External id\": %llu,\n      "
    "\"device\": 0, \"context\": 1,\n      \"stream\": 7, \"correlation\": %llu,\n      \"bytes\": 1048576, "
    "\"memory bandwidth (GB/s)\": 697.191489\n    }\n  }";

/* One step of the real-shaped trace: a ProfilerStep and three linear layers. */
static int write_real_step(FILE *f, uint64_t step, double t, int first)
{
    typedef unsigned long long ull;
    uint64_t ext = step * 16 + 100, corr = step * 8 + 5000;
    int n = fprintf(f,
                    "%s  {\n    \"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%llu\", "
                    "\"pid\": 2891, \"tid\": 2891,\n    \"ts\": %.3f, \"dur\": 380.000,\n    \"args\": {\n      "
                    "\"External id\": %llu,\"Record function id\": 0, \"Ev Idx\": %llu\n    }\n  }",
                    first ? "" : ",\n", (ull)step, t, (ull)ext, (ull)ext);
    for (int i = 0; i < 3 && n > 0; i++) {
        double u = t + 2 + i * 120;
        ull e = (ull)(ext + 1 + (uint64_t)i * 5), c = (ull)(corr + (uint64_t)i * 2);
        n = fprintf(f, real_ops_format, u, (ull)step, (ull)(step * 3 + (uint64_t)i), u + 1, e, e, e, u + 2, e + 1,
                    e + 1, u + 3, e + 2, e + 2, u + 4, e + 3, e + 3, u + 20, e + 4, e + 4, e + 4, u + 30, e + 4, c,
                    real_kernels[(step + (uint64_t)i) % 4], u + 45, 20.0 + (double)(step % 11), e + 4, c, c, u + 30, c,
                    u + 45, u + 85, e, c + 1, u + 110, e, c + 1);
    }
    return n;
}

static int write_real_trace(const char *path, uint64_t bytes)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs("{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n    {\n      \"id\": 0, \"name\": \"NVIDIA H100 "
          "80GB HBM3\", \"totalGlobalMem\": 85021163520,\n      \"computeMajor\": 9, \"computeMinor\": 0\n    }\n  ],\n"
          "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, \"world_size\": 8, \"pg_count\": 1},\n"
          "  \"record_shapes\": 1,\n  \"with_stack\": 0,\n  \"traceEvents\": [\n",
          f);
    double t = 1733000000000000.0;
    for (uint64_t step = 0; (uint64_t)ftell(f) < bytes; step++, t += 400.0)
        if (write_real_step(f, step, t, step == 0) < 0)
            break;
    fputs("\n],\n  \"traceName\": \"bench-real\",\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": "
          "1733000000000000000\n}\n",
          f);
    int bad = ferror(f);
    return fclose(f) != 0 || bad ? -1 : 0;
}

/* The reference: read(2) in 4 MiB pieces and memchr for every '{' (wall seconds; *cpu_s the
 * thread's CPU seconds). */
static double time_memchr_scan(const char *path, double *cpu_s)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NAN;
    size_t cap = 4u << 20;
    char *buf = malloc(cap);
    uint64_t c0 = bench_thread_cpu_ns(), t0 = bench_now_ns(), braces = 0;
    ssize_t n;
    while (buf && (n = read(fd, buf, cap)) > 0)
        for (const char *p = buf, *end = buf + n; (p = memchr(p, '{', (size_t)(end - p))) != NULL; p++)
            braces++;
    uint64_t t1 = bench_now_ns();
    *cpu_s = (double)(bench_thread_cpu_ns() - c0) / 1e9;
    bench_keep(&braces);
    free(buf);
    close(fd);
    return (double)(t1 - t0) / 1e9;
}

static int count_event(const dt_tr_event *ev, void *user)
{
    *(uint64_t *)user += (uint64_t)ev->ts_ns;
    return 0;
}

static bench_span time_read_baseline(const char *path)
{
    bench_span span = {NAN, NAN};
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return span;
    size_t cap = 4u << 20;
    char *buf = malloc(cap);
    uint64_t sum = 0;
    bench_mark m = bench_mark_now();
    ssize_t n;
    while (buf && (n = read(fd, buf, cap)) > 0)
        sum += (unsigned char)buf[n - 1];
    span = bench_span_since(m);
    bench_keep(&sum);
    free(buf);
    close(fd);
    return span;
}

static bench_span time_reader(const char *path)
{
    char err[512];
    uint64_t sum = 0;
    bench_mark m = bench_mark_now();
    int rc = dt_tr_read_file(path, count_event, &sum, NULL, err, sizeof err);
    bench_slow("report.reader", m);
    bench_span span = bench_span_since(m);
    bench_keep(&sum);
    if (rc != 0) {
        fprintf(stderr, "bench: %s\n", err);
        span.wall_s = span.cpu_s = NAN;
    }
    return span;
}

static bench_span time_tables(const char *path)
{
    char err[512];
    dt_report r;
    bench_mark m = bench_mark_now();
    int rc = dt_report_read(&r, path, DT_NAMES_FULL, err, sizeof err);
    bench_slow("report.tables", m);
    bench_span span = bench_span_since(m);
    dt_report_free(&r);
    if (rc != 0) {
        fprintf(stderr, "bench: %s\n", err);
        span.wall_s = span.cpu_s = NAN;
    }
    return span;
}

/* HTA's kernel breakdown of the folder holding the trace, in a python process: seconds, or NaN
 * with why in reason. */
static double time_hta(const char *hta_dir, const char *trace_dir, char *reason, size_t reasonlen)
{
    const char *python = getenv("DEVTRACE_HTA_PYTHON");
    if (!python || !*python)
        python = "/usr/bin/python3";
    char script[2048];
    snprintf(script, sizeof script,
             "import sys; sys.path.insert(0, sys.argv[1])\n"
             "from hta.trace_analysis import TraceAnalysis\n"
             "a = TraceAnalysis(trace_dir=sys.argv[2])\n"
             "k = a.get_gpu_kernel_breakdown(visualize=False)\n"
             "print(len(k[1]), 'kernel rows', file=sys.stderr)\n");
    uint64_t t0 = bench_now_ns();
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(reason, reasonlen, "fork: %s", strerror(errno));
        return NAN;
    }
    if (pid == 0) {
        execl(python, python, "-c", script, hta_dir, trace_dir, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    uint64_t t1 = bench_now_ns();
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        snprintf(reason, reasonlen, "HTA at %s did not run (%s exited %d): see its message above", hta_dir, python,
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        return NAN;
    }
    return (double)(t1 - t0) / 1e9;
}

/* The rows over the real-shaped trace (the file at path, alone in dir; written here and
 * removed). */
static void bench_real_trace(const bench_sizes *sz, const char *dir, const char *path)
{
    if (write_real_trace(path, sz->trace_bytes) != 0) {
        bench_unmeasurable("report.real.reader_mbps", "MB/s", BENCH_INFO, 0, "writing %s failed: %s", path,
                           strerror(errno));
        unlink(path);
        return;
    }
    /* the trace reads as meant: every launch linked to aten::addmm, nothing skipped */
    char err[512];
    dt_report r;
    int rc = dt_report_read(&r, path, DT_NAMES_FULL, err, sizeof err);
    int ok = rc == 0 && r.nskipped == 0 && r.nops == 5 && r.link.linked > 0 && r.unlinked_device_ns == 0 &&
             r.link.external_id_disagree == 0 && !strcmp(dt_report_name(&r, r.ops[0].name), "aten::linear");
    if (rc == 0)
        dt_report_free(&r);
    if (!ok) {
        bench_unmeasurable("report.real.reader_mbps", "MB/s", BENCH_INFO, 0,
                           "the real-shaped trace did not read as written (%s)", rc ? err : "tables differ");
        unlink(path);
        return;
    }
    struct stat st;
    double mb = stat(path, &st) == 0 ? (double)st.st_size / 1e6 : NAN;
    double scan[16], reader[16], tables[16], reader_ratio[16], tables_ratio[16];
    int reps = sz->reps < 16 ? sz->reps : 16;
    for (int i = 0; i < reps; i++) {
        /* the reference scanned twice per round (the first scan after other work costs up to
         * twice the second: caches), its cheaper run the round's reference; ratios of CPU
         * seconds, so that waiting for a CPU on a loaded machine cancels out */
        double scan_cpu, ref_cpu;
        double s1 = time_memchr_scan(path, &scan_cpu), s2 = time_memchr_scan(path, &ref_cpu);
        scan[i] = mb / (s1 < s2 ? s1 : s2);
        if (scan_cpu < ref_cpu)
            ref_cpu = scan_cpu;
        bench_span rd = time_reader(path), tab = time_tables(path);
        reader[i] = mb / rd.wall_s;
        tables[i] = mb / tab.wall_s;
        reader_ratio[i] = ref_cpu / rd.cpu_s;
        tables_ratio[i] = ref_cpu / tab.cpu_s;
    }
    char note[160];
    snprintf(note, sizeof note, "%.0f MB real-shaped trace (PyTorch 2.x args, nested ops, long names), page cache", mb);
    bench_report("report.real.memchr_mbps", bench_median(scan, reps), "MB/s", BENCH_INFO, 0,
                 "the reference: read(2) and memchr for every '{' over the same bytes");
    bench_report("report.real.reader_mbps", bench_median(reader, reps), "MB/s", BENCH_INFO, 0, note);
    bench_report("report.real.reader_ratio", bench_median(reader_ratio, reps), "x", BENCH_INFO, 0,
                 "the reader's MB per CPU second over the reference's, each pair taken together");
    bench_report("report.real.tables_mbps", bench_median(tables, reps), "MB/s", BENCH_INFO, 0,
                 "every table of devtrace report (ops linked through correlations)");
    bench_report("report.real.tables_ratio", bench_median(tables_ratio, reps), "x", BENCH_INFO, 0,
                 "the tables' MB per CPU second over the reference's, each pair taken together");
    const char *hta = getenv("DEVTRACE_HTA_DIR");
    char reason[320] = "HTA not present (DEVTRACE_HTA_DIR)";
    double hta_s = hta && *hta ? time_hta(hta, dir, reason, sizeof reason) : NAN;
    if (hta_s != hta_s)
        bench_unmeasurable("report.real.speedup_vs_hta", "x", BENCH_AT_LEAST, 20, "%s", reason);
    else
        bench_report("report.real.speedup_vs_hta", hta_s / (mb / bench_median(tables, reps)), "x", BENCH_AT_LEAST, 20,
                     "HTA's load and kernel breakdown over devtrace report's tables, real-shaped trace");
    unlink(path);
}

void bench_reader(const bench_sizes *sz, const bench_paths *paths)
{
    char dir[4096], path[4200];
    snprintf(dir, sizeof dir, "%s/report-trace", paths->tmpdir);
    snprintf(path, sizeof path, "%s/rank0.json", dir);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        bench_unmeasurable("report.reader.vs_read", "ratio", BENCH_AT_LEAST, READER_MIN_RATIO, "mkdir %s: %s", dir,
                           strerror(errno));
        return;
    }
    if (write_trace(path, sz->trace_bytes) != 0) {
        bench_unmeasurable("report.reader.vs_read", "ratio", BENCH_AT_LEAST, READER_MIN_RATIO, "writing %s failed: %s",
                           path, strerror(errno));
        return;
    }
    struct stat st;
    double mb = stat(path, &st) == 0 ? (double)st.st_size / 1e6 : NAN;
    double base[16], reader[16], reader_cpu[16], tables[16], reader_ratio[16], tables_ratio[16];
    int reps = sz->reps < 16 ? sz->reps : 16;
    for (int i = 0; i < reps; i++) {
        bench_span read = time_read_baseline(path), rd = time_reader(path), tab = time_tables(path);
        base[i] = mb / read.wall_s;
        reader[i] = mb / rd.wall_s;
        reader_cpu[i] = mb / rd.cpu_s;
        tables[i] = tab.wall_s;
        /* by CPU time (bench.h says why) */
        reader_ratio[i] = read.cpu_s / rd.cpu_s;
        tables_ratio[i] = read.cpu_s / tab.cpu_s;
    }
    double table_s = bench_median(tables, reps);
    char note[160];
    snprintf(note, sizeof note, "%.0f MB torch.profiler-shaped trace, from the page cache", mb);
    bench_report("report.read_baseline_mbps", bench_median(base, reps), "MB/s", BENCH_INFO, 0, note);
    bench_report("report.reader.vs_read", bench_best(reader_ratio, reps, BENCH_AT_LEAST), "ratio", BENCH_AT_LEAST,
                 READER_MIN_RATIO,
                 "read(2) alone of the same file over every event parsed and handed to a callback, in CPU time, "
                 "same repetition; the best of the repetitions");
    bench_report("report.tables.vs_read", bench_best(tables_ratio, reps, BENCH_AT_LEAST), "ratio", BENCH_AT_LEAST,
                 TABLES_MIN_RATIO,
                 "read(2) alone of the same file over every table of devtrace report, in CPU time, same repetition; "
                 "the best of the repetitions");
    bench_report("report.reader_mbps", bench_median(reader, reps), "MB/s", BENCH_INFO, 0, note);
    bench_report("report.reader_cpu_mbps", bench_median(reader_cpu, reps), "MB/s", BENCH_INFO, 0,
                 "MB per second of the process's CPU time");
    bench_report("report.tables_mbps", mb / table_s, "MB/s", BENCH_INFO, 0, "every table of devtrace report");
    const char *hta = getenv("DEVTRACE_HTA_DIR");
    if (!hta || !*hta) {
        bench_unmeasurable("report.hta_kernel_breakdown_s", "s", BENCH_INFO, 0,
                           "HTA not present: set DEVTRACE_HTA_DIR to a checkout of HolisticTraceAnalysis "
                           "(pandas importable by $DEVTRACE_HTA_PYTHON, default /usr/bin/python3)");
        bench_unmeasurable("report.speedup_vs_hta", "x", BENCH_AT_LEAST, HTA_MIN_SPEEDUP,
                           "HTA not present (DEVTRACE_HTA_DIR)");
    } else {
        char reason[320] = "";
        double hta_s = time_hta(hta, dir, reason, sizeof reason);
        if (hta_s != hta_s) {
            bench_unmeasurable("report.hta_kernel_breakdown_s", "s", BENCH_INFO, 0, "%s", reason);
            bench_unmeasurable("report.speedup_vs_hta", "x", BENCH_AT_LEAST, HTA_MIN_SPEEDUP, "%s", reason);
        } else {
            bench_report("report.hta_kernel_breakdown_s", hta_s, "s", BENCH_INFO, 0,
                         "TraceAnalysis + get_gpu_kernel_breakdown, one run, same trace");
            bench_report("report.speedup_vs_hta", hta_s / table_s, "x", BENCH_AT_LEAST, HTA_MIN_SPEEDUP,
                         "HTA's time over devtrace report's tables on the same file");
        }
    }
    unlink(path);
    bench_real_trace(sz, dir, path);
    rmdir(dir);
}
