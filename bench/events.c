/* events.c: realistic stored events for the sink, drain and memory benchmarks (see
 * events.h). Deterministic for a seed. */
#include "events.h"

#include <stdio.h>
#include <string.h>

#include "bench.h"

#define VENDOR_OFFSET_NS 1000000000000ull /* vendor clock = realtime - this (CUPTI-like) */
#define CALLS_PER_OP 8u

/* The parity workload's kernels (shared/workloads/parity.wl) with their launch shapes. */
static const struct {
    const char *name;
    int32_t grid[3], block[3];
    uint32_t regs, smem, dyn_smem;
    uint32_t dur_ns;
} kernels[] = {
    {"_ZN2at6native12_GLOBAL__N_126distribution_elementwise_grid_stride_kernelIfLi4EEEvlN2at15PhiloxCudaStateET_",
     {416, 1, 1},
     {256, 1, 1},
     30,
     0,
     0,
     3200},
    {"_ZN7cutlass6KernelINS_4gemm6kernel4GemmINS1_11threadblock8MmaMultistageEEEEEvNT_6ParamsE",
     {8, 8, 1},
     {256, 1, 1},
     232,
     0,
     81920,
     48000},
    {"_ZN2at6native29vectorized_elementwise_kernelILi4EZZZNS0_15clamp_min_kernelERNS_18TensorIteratorBaseEENKUlvE_"
     "clEvEUlfE_St5arrayIPcLm2EEEEviT0_T1_",
     {1024, 1, 1},
     {128, 1, 1},
     18,
     0,
     0,
     9000},
    {"_ZN2at6native12_GLOBAL__N_117fill_index_kernelIlEEvPT_S3_l", {1, 1, 1}, {16, 1, 1}, 16, 0, 0, 2100},
    {"_ZN2at6native29bitonicSortKVInPlaceILin1ELin1ELi16ELi16EfljNS0_4LTOpIfLb1EEEEEvNS_4cuda6detail10TensorInfoIT3_"
     "T5_EES9_S9_S9_NS6_IT4_S9_EES9_T6_",
     {1, 1, 1},
     {16, 1, 1},
     40,
     2048,
     0,
     6400},
    {"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_23FillFunctor_float_EEEvT0_",
     {1, 1, 1},
     {64, 1, 1},
     16,
     0,
     0,
     1800},
    {"_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIfNS0_14func_wrapper_tIfNS0_15sum_functorIfffEEEEjfLi4EEEE"
     "EvT1_",
     {640, 1, 1},
     {512, 1, 1},
     32,
     0,
     16,
     21000},
};
#define NKERNELS (sizeof kernels / sizeof kernels[0])

/* CUDA runtime calls (cbid, name). */
enum { CALL_LAUNCH, CALL_MEMCPY, CALL_MEMSET, CALL_GET_DEVICE, CALL_EVENT_RECORD, CALL_STREAM_SYNC, NCALLS };
static const struct {
    uint32_t cbid;
    const char *name;
} calls[NCALLS] = {
    {211, "cudaLaunchKernel"}, {41, "cudaMemcpyAsync"},  {51, "cudaMemsetAsync"},
    {17, "cudaGetDevice"},     {135, "cudaEventRecord"}, {131, "cudaStreamSynchronize"},
};

static void add_device(dt_session *s)
{
    dt_device_props d;
    memset(&d, 0, sizeof d);
    d.id = 0;
    snprintf(d.name, sizeof d.name, "NVIDIA A100-SXM4-80GB (benchmark)");
    d.total_global_mem = 85899345920ull;
    d.compute_major = 8;
    d.compute_minor = 0;
    d.max_threads_per_block = 1024;
    d.max_threads_per_sm = 2048;
    d.max_blocks_per_sm = 32;
    d.regs_per_block = 65536;
    d.regs_per_sm = 65536;
    d.warp_size = 32;
    d.num_sms = 108;
    d.smem_per_block = 49152;
    d.smem_per_sm = 167936;
    d.has_occupancy = 1;
    dt_add_device(s, &d);
}

int bench_events_fill(dt_session *s, uint64_t events, bench_mix mix, uint64_t seed)
{
    uint32_t kernel_ids[NKERNELS], call_ids[NCALLS];
    for (size_t i = 0; i < NKERNELS; i++)
        kernel_ids[i] = dt_session_intern(s, kernels[i].name);
    for (size_t i = 0; i < NCALLS; i++)
        call_ids[i] = dt_session_intern(s, calls[i].name);
    add_device(s);
    uint64_t rng = seed | 1;
    uint64_t host = 1700000000000000000ull; /* Nov 2023: fixed, so traces are reproducible */
    uint64_t t = host - VENDOR_OFFSET_NS;   /* vendor clock */
    uint64_t stream_end[3] = {t, t, t};
    uint64_t op = 0, correlation = 0, stored = 0;
    uint32_t pid = 4242, tids[2] = {4242, 4250};
    int full = 0;
    while (stored < events && !full) {
        uint64_t r = bench_rand(&rng);
        unsigned pick = (unsigned)(r % 100);
        int call = pick < 60   ? CALL_LAUNCH
                   : pick < 68 ? CALL_MEMCPY
                   : pick < 75 ? CALL_MEMSET
                               : CALL_GET_DEVICE + (int)(r >> 8) % 3;
        if (mix == BENCH_MIX_KERNEL || mix == BENCH_MIX_FLOW_PAIRS)
            call = CALL_LAUNCH;
        else if (mix == BENCH_MIX_MEMCPY)
            call = CALL_MEMCPY;
        else if (mix == BENCH_MIX_MEMSET)
            call = CALL_MEMSET;
        else if (mix == BENCH_MIX_RUNTIME)
            call = CALL_GET_DEVICE;
        if (correlation % CALLS_PER_OP == 0)
            op++;
        correlation++;
        t += 2000 + (r >> 16) % 6000;
        uint64_t call_end = t + 1200 + (r >> 24) % 800;
        int keep_runtime = mix == BENCH_MIX_ALL || mix == BENCH_MIX_RUNTIME || mix == BENCH_MIX_FLOW_PAIRS;
        int keep_device = mix != BENCH_MIX_RUNTIME;
        uint64_t id = mix == BENCH_MIX_ALL || mix == BENCH_MIX_FLOW_PAIRS ? correlation : 0;
        devtrace_event ev;
        if (mix == BENCH_MIX_ALL || mix == BENCH_MIX_FLOW_PAIRS) {
            /* The external-correlation record CUPTI writes before the API record. */
            memset(&ev, 0, sizeof ev);
            ev.kind = DEVTRACE_KIND_EXTCORR;
            ev.flags = DEVTRACE_EVENT_HAS_EXTERNAL;
            ev.correlation = id;
            ev.external_id = op;
            full |= dt_emit(s, &ev) != 0;
        }
        if (keep_runtime) {
            memset(&ev, 0, sizeof ev);
            ev.kind = DEVTRACE_KIND_RUNTIME;
            ev.flags = DEVTRACE_EVENT_HAS_CBID;
            ev.start_ns = t;
            ev.end_ns = call_end;
            ev.correlation = id;
            ev.device = pid;
            ev.stream = tids[(op >> 4) & 1];
            ev.name_id = call_ids[call];
            ev.u.runtime.cbid = calls[call].cbid;
            full |= dt_emit(s, &ev) != 0;
            stored++;
        }
        if (call > CALL_MEMSET || !keep_device)
            continue;
        memset(&ev, 0, sizeof ev);
        unsigned sidx = (unsigned)(r >> 40) % 3;
        uint64_t queued = t + 900;
        uint64_t start = stream_end[sidx] > queued + 2000 ? stream_end[sidx] : queued + 2000;
        ev.correlation = id;
        ev.device = 0;
        ev.context = 1;
        ev.stream = 7 + 2 * sidx;
        if (call == CALL_LAUNCH) {
            unsigned k = (unsigned)(r >> 32) % NKERNELS;
            ev.kind = DEVTRACE_KIND_KERNEL;
            ev.flags = DEVTRACE_EVENT_HAS_LAUNCH | DEVTRACE_EVENT_HAS_REGS | DEVTRACE_EVENT_HAS_QUEUED;
            ev.name_id = kernel_ids[k];
            memcpy(ev.u.kernel.grid, kernels[k].grid, sizeof ev.u.kernel.grid);
            memcpy(ev.u.kernel.block, kernels[k].block, sizeof ev.u.kernel.block);
            ev.u.kernel.registers_per_thread = kernels[k].regs;
            ev.u.kernel.static_shared = kernels[k].smem;
            ev.u.kernel.dynamic_shared = kernels[k].dyn_smem;
            ev.u.kernel.queued_ns = queued;
            ev.start_ns = start;
            ev.end_ns = start + kernels[k].dur_ns;
        } else if (call == CALL_MEMCPY) {
            ev.kind = DEVTRACE_KIND_MEMCPY;
            ev.u.memcpy.bytes = 4096ull << ((r >> 48) % 10);
            ev.u.memcpy.direction = (r >> 52) & 1 ? DEVTRACE_COPY_HTOD : DEVTRACE_COPY_DTOH;
            ev.u.memcpy.src_kind = ev.u.memcpy.direction == DEVTRACE_COPY_HTOD ? 1 : 3;
            ev.u.memcpy.dst_kind = ev.u.memcpy.direction == DEVTRACE_COPY_HTOD ? 3 : 1;
            ev.start_ns = start;
            ev.end_ns = start + 1000 + ev.u.memcpy.bytes / 20;
        } else {
            ev.kind = DEVTRACE_KIND_MEMSET;
            ev.u.memset.bytes = 65536;
            ev.start_ns = start;
            ev.end_ns = start + 1500;
        }
        stream_end[sidx] = ev.end_ns;
        full |= dt_emit(s, &ev) != 0;
        stored++;
    }
    uint64_t last = t;
    for (int i = 0; i < 3; i++)
        last = stream_end[i] > last ? stream_end[i] : last;
    /* Two samples: the vendor clock runs at the host's rate, offset by VENDOR_OFFSET_NS. */
    dt_add_clock_sample(s, host - VENDOR_OFFSET_NS, host);
    dt_add_clock_sample(s, last + 1000000, last + 1000000 + VENDOR_OFFSET_NS);
    dt_set_window(s, host - 1000, last + VENDOR_OFFSET_NS + 1000000);
    return full ? -1 : 0;
}

dt_session *bench_events_session(uint64_t events, bench_mix mix, uint64_t seed)
{
    devtrace_error err;
    dt_session *s = dt_session_new_offline("cupti", "benchmark (synthetic events)", "cuda_runtime", &err);
    if (!s)
        return NULL;
    if (bench_events_fill(s, events, mix, seed) != 0) {
        devtrace_close(s);
        return NULL;
    }
    return s;
}
