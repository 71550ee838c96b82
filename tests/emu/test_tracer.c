/* test_tracer.c: the minimal tracer of the emulator tests (see test_tracer.h). */
#include "test_tracer.h"

#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "devemu.h"

tt_trace tt = {.lock = PTHREAD_MUTEX_INITIALIZER};
const int tt_parity_kinds[] = {KIND_RUNTIME, KIND_CONCURRENT_KERNEL,    KIND_MEMCPY,
                               KIND_MEMSET,  KIND_EXTERNAL_CORRELATION, 0};
static tt_vendor_api g_api;

void tt_bind(const tt_vendor_api *api)
{
    g_api = *api;
}

uint32_t tt_u32_at(const uint8_t *r, size_t off)
{
    uint32_t v;
    memcpy(&v, r + off, 4);
    return v;
}

uint64_t tt_u64_at(const uint8_t *r, size_t off)
{
    uint64_t v;
    memcpy(&v, r + off, 8);
    return v;
}

/* The CUPTI-family offsets (vendor-abi.md); MCPTI shares these prefixes. */
static tt_rec parse_record(const uint8_t *r)
{
    tt_rec x = {.kind = tt_u32_at(r, 0)};
    switch (x.kind) {
    case KIND_RUNTIME:
        x.cbid = tt_u32_at(r, 4), x.start = tt_u64_at(r, 8), x.end = tt_u64_at(r, 16);
        x.process = tt_u32_at(r, 24), x.thread = tt_u32_at(r, 28), x.correlation = tt_u32_at(r, 32);
        break;
    case KIND_KERNEL:
    case KIND_CONCURRENT_KERNEL:
        x.start = tt_u64_at(r, 16), x.end = tt_u64_at(r, 24), x.stream = tt_u32_at(r, 48);
        memcpy(&x.grid_x, r + 52, 4);
        x.correlation = tt_u32_at(r, 92);
        memcpy(&x.name, r + 104, sizeof x.name);
        break;
    case KIND_MEMCPY:
        x.copy_kind = r[4], x.bytes = tt_u64_at(r, 8), x.start = tt_u64_at(r, 16), x.end = tt_u64_at(r, 24);
        x.stream = tt_u32_at(r, 40), x.correlation = tt_u32_at(r, 44);
        break;
    case KIND_MEMSET:
        x.value = tt_u32_at(r, 4), x.bytes = tt_u64_at(r, 8), x.start = tt_u64_at(r, 16), x.end = tt_u64_at(r, 24);
        x.stream = tt_u32_at(r, 40), x.correlation = tt_u32_at(r, 44);
        break;
    case KIND_EXTERNAL_CORRELATION:
        x.external_kind = tt_u32_at(r, 4), x.external_id = tt_u64_at(r, 8), x.correlation = tt_u32_at(r, 16);
        break;
    default:
        break;
    }
    return x;
}

static void keep(tt_rec x)
{
    if (tt.n == tt.cap) {
        tt.cap = tt.cap ? tt.cap * 2 : 4096;
        tt.recs = realloc(tt.recs, tt.cap * sizeof *tt.recs);
        assert_non_null(tt.recs);
    }
    tt.recs[tt.n++] = x;
}

static void on_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    pthread_mutex_lock(&tt.lock);
    int refuse = tt.refuse_next > 0;
    tt.refuse_next -= (size_t)refuse;
    size_t bytes = tt.buffer_bytes;
    pthread_mutex_unlock(&tt.lock);
    *buffer = refuse ? NULL : aligned_alloc(8, bytes);
    *size = refuse ? 0 : bytes;
    *max_records = 0;
}

static void on_buffer_completed(emu_context ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    void *record = NULL, *previous = NULL;
    (void)ctx, (void)stream, (void)size;
    if (tt.completion_hook)
        tt.completion_hook(buffer, valid);
    if (tt.reenter_from_completion) { /* a tracer may call back in: must not deadlock */
        uint64_t ts;
        assert_int_equal(g_api.get_timestamp(&ts), SUCCESS);
        assert_int_equal(g_api.flush_all(0), SUCCESS);
    }
    pthread_mutex_lock(&tt.lock);
    tt.buffers++;
    tt.last_completion_thread = pthread_self();
    if (valid > tt.max_valid_seen)
        tt.max_valid_seen = valid;
    while (g_api.next_record(buffer, valid, &record) == SUCCESS) {
        if (record == previous) { /* a stale iterator: a careful tracer stops here */
            tt.stale_pointers++;
            break;
        }
        if (previous)
            tt.recs[tt.n - 1].stride = (size_t)((uint8_t *)record - (uint8_t *)previous);
        keep(parse_record(record));
        previous = record;
    }
    pthread_mutex_unlock(&tt.lock);
    free(buffer);
}

void tt_start(const char *faults, const int *kinds)
{
    char err[256];
    size_t stale;
    devemu_reset();
    assert_int_equal(devemu_set_faults(faults, err, sizeof err), 0);
    free(tt.recs);
    tt.recs = NULL;
    tt.n = tt.cap = tt.buffers = tt.refuse_next = tt.max_valid_seen = tt.stale_pointers = 0;
    tt.buffer_bytes = 65536;
    tt.reenter_from_completion = 0;
    tt.completion_hook = NULL;
    assert_int_equal(g_api.register_callbacks(on_buffer_requested, on_buffer_completed), SUCCESS);
    for (const int *k = kinds; *k; k++)
        assert_int_equal(g_api.enable(*k), SUCCESS);
    g_api.dropped(NULL, 0, &stale);
}

void tt_flush(void)
{
    assert_int_equal(g_api.flush_all(0), SUCCESS);
}

size_t tt_count_kind(uint32_t kind)
{
    size_t n = 0;
    for (size_t i = 0; i < tt.n; i++)
        n += tt.recs[i].kind == kind;
    return n;
}

size_t tt_count_zero_time_kernels(void)
{
    size_t n = 0;
    for (size_t i = 0; i < tt.n; i++)
        n += tt.recs[i].kind == KIND_CONCURRENT_KERNEL && tt.recs[i].start == 0 && tt.recs[i].end == 0;
    return n;
}

const tt_rec *tt_find(uint32_t kind, uint32_t correlation)
{
    for (size_t i = 0; i < tt.n; i++) {
        if (tt.recs[i].kind == kind && tt.recs[i].correlation == correlation)
            return &tt.recs[i];
    }
    return NULL;
}

int tt_is_device_kind(uint32_t kind)
{
    return kind == KIND_CONCURRENT_KERNEL || kind == KIND_KERNEL || kind == KIND_MEMCPY || kind == KIND_MEMSET;
}

uint64_t tt_realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int tt_has_symbol(const char *path, const char *name)
{
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(lib);
    int found = dlsym(lib, name) != NULL;
    dlclose(lib);
    return found;
}
