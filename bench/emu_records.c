/* emu_records.c: builds realistic activity buffers with the emulator's runtime (see
 * emu_records.h). The emulator calls back into this file for buffers, exactly as it
 * calls a tracer's buffer-requested and buffer-completed callbacks. */
#include "emu_records.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "emu.h"
#include "emu_vendors.h"
#include "wl.h"

#define BENCH_BUFFER_SIZE (1u << 20) /* the CUPTI-family engine's default buffer */
#define BENCH_OP_CALLS 8u            /* runtime calls per operator (external id) */
#define MCPTI_BAD_PERCENT 5u         /* bytes that are garbage or invalid records */

/* Kernel names of the parity workload (shared/workloads/parity.wl). */
static const char *const kernel_names[] = {
    "_ZN2at6native12_GLOBAL__N_126distribution_elementwise_grid_stride_kernelIfLi4EEEvlN2at15PhiloxCudaStateET_",
    "_ZN7cutlass6KernelINS_4gemm6kernel4GemmINS1_11threadblock8MmaMultistageEEEEEvNT_6ParamsE",
    "_ZN2at6native29vectorized_elementwise_kernelILi4EZZZNS0_15clamp_min_kernelERNS_18TensorIteratorBaseEENKUlvE_"
    "clEvEUlfE_St5arrayIPcLm2EEEEviT0_T1_",
    "_ZN2at6native12_GLOBAL__N_117fill_index_kernelIlEEvPT_S3_l",
    "_ZN2at6native29bitonicSortKVInPlaceILin1ELin1ELi16ELi16EfljNS0_4LTOpIfLb1EEEEEvNS_4cuda6detail10TensorInfoIT3_"
    "T5_EES9_S9_S9_NS6_IT4_S9_EES9_T6_",
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_23FillFunctor_float_EEEvT0_",
    "_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIfNS0_14func_wrapper_tIfNS0_15sum_functorIfffEEEEjfLi4EEEE"
    "EvT1_",
};
#define NKERNELS (sizeof kernel_names / sizeof kernel_names[0])

/* The buffer list the emulator is filling (its callbacks carry no user pointer). */
static bench_buffers *filling;
static const emu_vendor *installed;

static void request_buffer(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(8, BENCH_BUFFER_SIZE);
    *size = *buffer ? BENCH_BUFFER_SIZE : 0;
    *max_records = 0;
}

static void complete_buffer(emu_context ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    (void)ctx, (void)stream, (void)size;
    bench_buffers *b = filling;
    if (!b || valid == 0 || (b->n == b->cap && b->cap >= ((size_t)1 << 40))) {
        free(buffer);
        return;
    }
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        uint8_t **data = realloc(b->data, cap * sizeof *data);
        size_t *sizes = data ? realloc(b->valid, cap * sizeof *sizes) : NULL;
        if (data)
            b->data = data;
        if (!sizes) {
            free(buffer);
            return;
        }
        b->valid = sizes;
        b->cap = cap;
    }
    b->data[b->n] = buffer;
    b->valid[b->n] = valid;
    b->n++;
    b->bytes += valid;
}

static uint64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const emu_vendor *vendor_table(bench_vendor v)
{
    return v == BENCH_MCPTI ? &emu_mcpti_vendor : &emu_cupti_vendor;
}

uint32_t bench_emu_version(bench_vendor vendor)
{
    return vendor_table(vendor)->api_version;
}

int bench_emu_next_record(uint8_t *buffer, size_t valid_size, void **record)
{
    return emu_next_record(buffer, valid_size, record);
}

static void install(const emu_vendor *v, const emu_faults *faults)
{
    if (installed)
        emu_core_reset();
    emu_core_install(v, faults, realtime_ns());
    installed = v;
    emu_core_set_device(0);
    emu_register_buffers(request_buffer, complete_buffer);
    const uint32_t kinds[] = {v->kind.concurrent_kernel, v->kind.memcpy, v->kind.memset, v->kind.runtime,
                              v->kind.external_correlation};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        emu_activity_enable((int)kinds[i], 1);
}

/* One runtime call of the mix: 60% launches, 8% copies, 7% memsets, 25% plain calls. */
static void one_call(uint64_t *rng)
{
    static const int plain[] = {WL_CALL_GET_DEVICE, WL_CALL_SET_DEVICE, WL_CALL_EVENT_RECORD,
                                WL_CALL_MALLOC,     WL_CALL_FREE,       WL_CALL_GET_DEVICE_COUNT};
    uint64_t r = bench_rand(rng);
    unsigned pick = (unsigned)(r % 100);
    wl_stmt st;
    memset(&st, 0, sizeof st);
    if (pick < 60) {
        static const uint32_t grids[] = {416, 8, 1024, 1, 640, 160, 2048};
        static const uint32_t blocks[] = {256, 256, 128, 16, 512, 64, 128};
        unsigned k = (unsigned)((r >> 8) % NKERNELS);
        st.kind = WL_STMT_LAUNCH;
        st.u.launch = (wl_launch){.grid = {grids[k], k == 1 ? 8u : 1u, 1},
                                  .block = {blocks[k], 1, 1},
                                  .regs = 16 + 8 * k,
                                  .smem = k == 4 ? 2048u : 0u,
                                  .dyn_smem = k == 1 ? 81920u : 0u,
                                  .dur_ns = 200,
                                  .stream = 7};
        st.u.launch.kernel = (char *)kernel_names[k];
        emu_runtime_call(WL_CALL_LAUNCH, &st);
    } else if (pick < 68) {
        st.kind = WL_STMT_MEMCPY;
        st.u.memcpy = (wl_memcpy){.dir = (r >> 8) & 1 ? WL_COPY_HTOD : WL_COPY_DTOH,
                                  .bytes = 4096u << ((r >> 9) % 8),
                                  .dur_ns = 100,
                                  .stream = 9};
        emu_runtime_call(WL_CALL_MEMCPY, &st);
    } else if (pick < 75) {
        st.kind = WL_STMT_MEMSET;
        st.u.memset = (wl_memset){.bytes = 65536, .value = 0, .dur_ns = 100, .stream = 7};
        emu_runtime_call(WL_CALL_MEMSET, &st);
    } else {
        emu_runtime_call(plain[(r >> 8) % (sizeof plain / sizeof plain[0])], NULL);
    }
}

/* Counts the records of a buffer with the emulator's iterator. */
static uint64_t count_records(uint8_t *buf, size_t valid)
{
    uint64_t n = 0;
    void *rec = NULL;
    while (emu_next_record(buf, valid, &rec) == installed->result.success)
        n++;
    return n;
}

/* MCPTI: copies the emulator's records into fresh buffers, inserting garbage regions
 * (random bytes, 8-byte multiples) so that the garbage and the emulator's invalid
 * records together make about MCPTI_BAD_PERCENT of the bytes. */
static int insert_garbage(bench_buffers *b, uint64_t *rng)
{
    bench_buffers out;
    memset(&out, 0, sizeof out);
    uint64_t good = 0, garbage = 0;
    uint8_t *cur = NULL;
    size_t used = 0;
    filling = &out;
    for (size_t i = 0; i < b->n; i++) {
        void *rec = NULL;
        while (emu_next_record(b->data[i], b->valid[i], &rec) == installed->result.success) {
            const uint8_t *r = rec;
            uint32_t kind;
            memcpy(&kind, r, 4);
            size_t size = kind == installed->kind.external_correlation ? installed->external_correlation.size
                          : kind == installed->kind.runtime            ? installed->api.size
                          : kind == installed->kind.memcpy             ? installed->memcpy.size
                          : kind == installed->kind.memset             ? installed->memset.size
                                                                       : installed->kernel.size;
            /* Half the bad bytes are the emulator's invalid records; the other half garbage. */
            size_t gap = 0;
            if ((garbage + 1) * 200 < good * MCPTI_BAD_PERCENT)
                gap = 8 * (1 + bench_rand(rng) % 48);
            if (!cur || used + size + gap > BENCH_BUFFER_SIZE) {
                if (cur)
                    complete_buffer(NULL, 0, cur, BENCH_BUFFER_SIZE, used);
                cur = aligned_alloc(8, BENCH_BUFFER_SIZE);
                if (!cur)
                    return -1;
                used = 0;
            }
            for (size_t g = 0; g < gap; g += 8) {
                uint64_t junk = bench_rand(rng);
                memcpy(cur + used + g, &junk, 8);
            }
            used += gap;
            garbage += gap;
            memcpy(cur + used, r, size);
            used += size;
            good += size;
        }
        free(b->data[i]);
    }
    if (cur)
        complete_buffer(NULL, 0, cur, BENCH_BUFFER_SIZE, used);
    out.records = b->records;
    out.calls = b->calls;
    out.bad_bytes = b->bad_bytes + garbage;
    free(b->data);
    free(b->valid);
    *b = out;
    return 0;
}

int bench_buffers_build(bench_buffers *b, bench_vendor vendor, uint64_t target_bytes, uint64_t seed)
{
    memset(b, 0, sizeof *b);
    b->buffer_size = BENCH_BUFFER_SIZE;
    const emu_vendor *v = vendor_table(vendor);
    emu_faults faults;
    memset(&faults, 0, sizeof faults);
    install(v, &faults);
    filling = b;
    uint64_t rng = seed | 1, op = 1;
    /* MCPTI: stop a little short: the garbage inserted afterwards makes up the rest. */
    uint64_t want = vendor == BENCH_MCPTI ? target_bytes / 100 * (100 - MCPTI_BAD_PERCENT / 2) : target_bytes;
    devemu_stats before;
    emu_stats_get(&before);
    while (b->bytes < want) {
        emu_push_external((int)v->external_kind_custom0, op++);
        for (unsigned i = 0; i < BENCH_OP_CALLS; i++) {
            one_call(&rng);
            /* MCPTI: an invalid record (the emulator's malformed style) every 10 operators. */
            if (vendor == BENCH_MCPTI && i == 0 && op % 10 == 0) {
                faults.malformed = 1;
                emu_core_set_faults(&faults);
            }
        }
        uint64_t ignored;
        emu_pop_external((int)v->external_kind_custom0, &ignored);
    }
    emu_flush_all(0);
    devemu_stats after;
    emu_stats_get(&after);
    b->calls = after.runtime_calls - before.runtime_calls;
    b->bad_bytes = (after.injected_malformed - before.injected_malformed) * v->kernel.size;
    for (size_t i = 0; i < b->n; i++)
        b->records += count_records(b->data[i], b->valid[i]);
    int rc = vendor == BENCH_MCPTI ? insert_garbage(b, &rng) : 0;
    filling = NULL;
    return b->n && rc == 0 ? 0 : -1;
}

void bench_buffers_free(bench_buffers *b)
{
    for (size_t i = 0; i < b->n; i++)
        free(b->data[i]);
    free(b->data);
    free(b->valid);
    memset(b, 0, sizeof *b);
}
