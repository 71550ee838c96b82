/* test_pti_decode.c: the CUPTI-family record walker and decoders on hand-built
 * buffers. Records are written byte by byte at the numeric offsets of vendor-abi.md
 * (never through our mirrors), walked with a stand-in for the vendor's GetNextRecord
 * that strides by its own size table, and the resulting events are compared field by
 * field. Also: loss counters (zero timestamps, malformed, unknown kinds), layout choice
 * by library version, the runtime callback-id names, the dispatch to a layout's decoder by
 * its id (the engine's or a vendor's), and the stride walk by the layouts' sizes. MSPTI's
 * records have their own file (test_mspti_decode.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backends/pti_decode.h"
#include "core/session.h"
#include "unit_bytes.h"
#include "unit_decoder.h"

#define MAX_LIMIT 12 /* CUPTI_ERROR_MAX_LIMIT_REACHED */

/* ---- writing records at numeric offsets ---- */

static const char kernel_name[] = "_ZN7example6kernelEv";

/* CUpti_ActivityKernel10/9 (216/208 B): the prefix we read. */
static size_t write_kernel(uint8_t *b, uint32_t kind, uint64_t start, uint64_t end, uint32_t corr, uint64_t queued,
                           size_t size)
{
    memset(b, 0, size);
    ut_put32(b, 0, kind);
    ut_put16(b, 6, 40); /* registersPerThread */
    ut_put64(b, 16, start);
    ut_put64(b, 24, end);
    ut_put64(b, 32, end);                                         /* completed */
    ut_put32(b, 40, 2);                                           /* deviceId */
    ut_put32(b, 44, 5);                                           /* contextId */
    ut_put32(b, 48, 7);                                           /* streamId */
    ut_put32(b, 52, 416), ut_put32(b, 56, 2), ut_put32(b, 60, 3); /* grid */
    ut_put32(b, 64, 256), ut_put32(b, 68, 1), ut_put32(b, 72, 1); /* block */
    ut_put32(b, 76, 1024);                                        /* staticSharedMemory */
    ut_put32(b, 80, 81920);                                       /* dynamicSharedMemory */
    ut_put32(b, 92, corr);                                        /* correlationId */
    ut_put64(b, 96, 77);                                          /* gridId */
    ut_putptr(b, 104, kernel_name);                               /* name */
    ut_put64(b, 120, queued);                                     /* queued */
    ut_put64(b, 128, queued);                                     /* submitted */
    return size;
}

/* CUpti_ActivityMemcpy6 (96 B) / Memcpy5 (88 B). */
static size_t write_memcpy(uint8_t *b, uint8_t copy_kind, uint64_t bytes, uint64_t start, uint64_t end, uint32_t corr,
                           size_t size)
{
    memset(b, 0, size);
    ut_put32(b, 0, 1);
    ut_put8(b, 4, copy_kind);
    ut_put8(b, 5, 3); /* srcKind DEVICE */
    ut_put8(b, 6, 1); /* dstKind PAGEABLE */
    ut_put8(b, 7, 0);
    ut_put64(b, 8, bytes);
    ut_put64(b, 16, start);
    ut_put64(b, 24, end);
    ut_put32(b, 32, 0);
    ut_put32(b, 36, 1);
    ut_put32(b, 40, 9);
    ut_put32(b, 44, corr);
    return size;
}

/* CUpti_ActivityMemset4 (88 B). */
static size_t write_memset(uint8_t *b, uint32_t value, uint64_t bytes, uint64_t start, uint64_t end, uint32_t corr)
{
    memset(b, 0, 88);
    ut_put32(b, 0, 2);
    ut_put32(b, 4, value);
    ut_put64(b, 8, bytes);
    ut_put64(b, 16, start);
    ut_put64(b, 24, end);
    ut_put32(b, 32, 1);
    ut_put32(b, 36, 1);
    ut_put32(b, 40, 11);
    ut_put32(b, 44, corr);
    ut_put16(b, 48, 1); /* flags: async */
    ut_put16(b, 50, 3); /* memoryKind: device */
    return 88;
}

/* CUpti_ActivityAPI (40 B). */
static size_t write_api(uint8_t *b, uint32_t kind, uint32_t cbid, uint64_t start, uint64_t end, uint32_t corr,
                        uint32_t ret)
{
    memset(b, 0, 40);
    ut_put32(b, 0, kind);
    ut_put32(b, 4, cbid);
    ut_put64(b, 8, start);
    ut_put64(b, 16, end);
    ut_put32(b, 24, 4242); /* processId */
    ut_put32(b, 28, 4343); /* threadId */
    ut_put32(b, 32, corr);
    ut_put32(b, 36, ret);
    return 40;
}

/* CUpti_ActivityExternalCorrelation (24 B). */
static size_t write_extcorr(uint8_t *b, uint32_t external_kind, uint64_t external_id, uint32_t corr)
{
    memset(b, 0, 24);
    ut_put32(b, 0, 39);
    ut_put32(b, 4, external_kind);
    ut_put64(b, 8, external_id);
    ut_put32(b, 16, corr);
    return 24;
}

/* ---- a stand-in GetNextRecord: strides by its own table, lenient about the end ---- */

static size_t g_kernel_size = 216, g_memcpy_size = 96;

static size_t record_size(uint32_t kind)
{
    switch (kind) {
    case 3:
    case 10:
        return g_kernel_size;
    case 1:
        return g_memcpy_size;
    case 2:
        return 88;
    case 4:
    case 5:
        return 40;
    case 39:
        return 24;
    case 0x0BAD:
        return 32;
    default:
        return 8;
    }
}

static int stand_in_next(uint8_t *buf, size_t valid, void **rec)
{
    size_t off = 0;
    if (*rec) {
        uint32_t kind;
        memcpy(&kind, *rec, 4);
        off = (size_t)((uint8_t *)*rec - buf) + record_size(kind);
    }
    if (off + 4 > valid)
        return MAX_LIMIT;
    *rec = buf + off; /* does not check that the whole record fits: the walker must */
    return 0;
}

/* An iterator that hands out a pointer outside the buffer. */
static int wild_next(uint8_t *buf, size_t valid, void **rec)
{
    *rec = buf + valid + 64;
    return 0;
}

/* An iterator that repeats its first record (a stale pointer). */
static int stuck_next(uint8_t *buf, size_t valid, void **rec)
{
    (void)valid;
    *rec = buf;
    return 0;
}

/* An iterator that ends with success and a NULL record (PPU). */
static int null_end_next(uint8_t *buf, size_t valid, void **rec)
{
    int rc = stand_in_next(buf, valid, rec);
    if (rc == MAX_LIMIT) {
        *rec = NULL;
        return 0;
    }
    return rc;
}

/* An iterator that ends with an unknown error code (PPU's own MAX_LIMIT). */
static int odd_end_next(uint8_t *buf, size_t valid, void **rec)
{
    int rc = stand_in_next(buf, valid, rec);
    return rc == MAX_LIMIT ? 7777 : rc;
}

/* ---- fixture (unit_decoder.h): CUPTI 13.0's descriptor, stepped by stand_in_next ---- */

static int setup(void **state)
{
    g_kernel_size = 216;
    g_memcpy_size = 96;
    *state = ut_decoder_fixture_new(&dt_pti_cupti_descriptor, 130001, stand_in_next, "cuda_runtime");
    return *state ? 0 : -1;
}

static int teardown(void **state)
{
    ut_decoder_fixture_free(*state);
    return 0;
}

/* ---- tests ---- */

static void kernel10_record_becomes_a_kernel_event_with_launch_metadata(void **state)
{
    ut_decoder_fixture *f = *state;
    f->used = write_kernel(f->buf, 10, 5000, 8200, 11, 4900, 216);
    dt_pti_walk_counts c = ut_decoder_walk(f, DT_PTI_WALK_DECODE);
    assert_int_equal(c.records, 1);
    assert_int_equal(c.emitted, 1);
    assert_int_equal(f->nev, 1);
    const devtrace_event *ev = &f->ev[0];
    assert_int_equal(ev->kind, DEVTRACE_KIND_KERNEL);
    assert_int_equal(ev->start_ns, 5000);
    assert_int_equal(ev->end_ns, 8200);
    assert_int_equal(ev->correlation, 11);
    assert_int_equal(ev->device, 2);
    assert_int_equal(ev->context, 5);
    assert_int_equal(ev->stream, 7);
    assert_int_equal(ev->u.kernel.grid[0], 416);
    assert_int_equal(ev->u.kernel.grid[1], 2);
    assert_int_equal(ev->u.kernel.grid[2], 3);
    assert_int_equal(ev->u.kernel.block[0], 256);
    assert_int_equal(ev->u.kernel.block[1], 1);
    assert_int_equal(ev->u.kernel.block[2], 1);
    assert_int_equal(ev->u.kernel.registers_per_thread, 40);
    assert_int_equal(ev->u.kernel.static_shared, 1024);
    assert_int_equal(ev->u.kernel.dynamic_shared, 81920);
    assert_int_equal(ev->u.kernel.queued_ns, 4900);
    assert_int_equal(ev->flags, DEVTRACE_EVENT_HAS_LAUNCH | DEVTRACE_EVENT_HAS_REGS | DEVTRACE_EVENT_HAS_QUEUED);
    assert_string_equal(ut_decoded_name(f, ev), kernel_name);
}

static void kernel_queued_unknown_sentinels_leave_queued_unset(void **state)
{
    ut_decoder_fixture *f = *state;
    f->used = write_kernel(f->buf, 10, 5000, 6000, 1, 0, 216);
    f->used += write_kernel(f->buf + f->used, 10, 7000, 8000, 2, ~0ull, 216);
    dt_pti_walk_counts c = ut_decoder_walk(f, DT_PTI_WALK_DECODE);
    assert_int_equal(c.emitted, 2);
    for (size_t i = 0; i < f->nev; i++) {
        assert_false(f->ev[i].flags & DEVTRACE_EVENT_HAS_QUEUED);
        assert_int_equal(f->ev[i].u.kernel.queued_ns, 0);
    }
}

static void kernel_kind_3_decodes_like_concurrent_kernel(void **state)
{
    ut_decoder_fixture *f = *state;
    f->used = write_kernel(f->buf, 3, 100, 200, 9, 0, 216);
    dt_pti_walk_counts c = ut_decoder_walk(f, DT_PTI_WALK_DECODE);
    assert_int_equal(c.emitted, 1);
    assert_int_equal(f->ev[0].kind, DEVTRACE_KIND_KERNEL);
    assert_int_equal(f->ev[0].correlation, 9);
}

static void memcpy6_record_keeps_bytes_and_direction(void **state)
{
    ut_decoder_fixture *f = *state;
    f->used = write_memcpy(f->buf, 1, 4096, 100, 200, 21, 96);          /* HTOD */
    f->used += write_memcpy(f->buf + f->used, 2, 4, 300, 400, 22, 96);  /* DTOH */
    f->used += write_memcpy(f->buf + f->used, 8, 64, 500, 600, 23, 96); /* DTOD */
    f->used += write_memcpy(f->buf + f->used, 9, 8, 700, 800, 24, 96);  /* HTOH */
    f->used += write_memcpy(f->buf + f->used, 99, 8, 900, 950, 25, 96); /* unknown copy kind */
    dt_pti_walk_counts c = ut_decoder_walk(f, DT_PTI_WALK_DECODE);
    assert_int_equal(c.emitted, 5);
    uint32_t want_dir[5] = {DEVTRACE_COPY_HTOD, DEVTRACE_COPY_DTOH, DEVTRACE_COPY_DTOD, DEVTRACE_COPY_HTOH,
                            DEVTRACE_COPY_UNKNOWN};
    uint64_t want_bytes[5] = {4096, 4, 64, 8, 8};
    for (size_t i = 0; i < 5; i++) {
        const devtrace_event *ev = NULL;
        for (size_t j = 0; j < f->nev; j++)
            if (f->ev[j].correlation == 21 + i)
                ev = &f->ev[j];
        assert_non_null(ev);
        assert_int_equal(ev->kind, DEVTRACE_KIND_MEMCPY);
        assert_int_equal(ev->u.memcpy.direction, want_dir[i]);
        assert_int_equal(ev->u.memcpy.bytes, want_bytes[i]);
        assert_int_equal(ev->u.memcpy.src_kind, 3);
        assert_int_equal(ev->u.memcpy.dst_kind, 1);
        assert_int_equal(ev->device, 0);
        assert_int_equal(ev->context, 1);
        assert_int_equal(ev->stream, 9);
        assert_int_equal(ev->start_ns, 100 + 200 * i);
    }
}

static void memset4_record_keeps_bytes_and_value(void **state)
{
    ut_decoder_fixture *f = *state;
    f->used = write_memset(f->buf, 0xAB, 128, 1000, 1500, 31);
    dt_pti_walk_counts c = ut_decoder_walk(f, DT_PTI_WALK_DECODE);
    assert_int_equal(c.emitted, 1);
    const devtrace_event *ev = &f->ev[0];
    assert_int_equal(ev->kind, DEVTRACE_KIND_MEMSET);
    assert_int_equal(ev->u.memset.bytes, 128);
    assert_int_equal(ev->u.memset.value, 0xAB);
    assert_int_equal(ev->start_ns, 1000);
    assert_int_equal(ev->end_ns, 1500);
    assert_int_equal(ev->correlation, 31);
    assert_int_equal(ev->device, 1);
    assert_int_equal(ev->stream, 11);
}

static void api_record_becomes_a_runtime_event_named_from_its_cbid(void **state)
{
    ut_decoder_fixture *f = *state;
    f->used = write_api(f->buf, 5, 211, 900, 990, 41, 0);
    f->used += write_api(f->buf + f->used, 5, 430, 1000, 1100, 42, 1);
    f->used += write_api(f->buf + f->used, 5, 3, 1200, 1300, 43, 0);
    dt_pti_walk_counts c = ut_decoder_walk(f, DT_PTI_WALK_DECODE);
    assert_int_equal(c.emitted, 3);
    const char *want[3] = {"cudaLaunchKernel", "cudaLaunchKernelExC", "cudaGetDeviceCount"};
    uint32_t cbid[3] = {211, 430, 3};
    for (size_t i = 0; i < 3; i++) {
        const devtrace_event *ev = NULL;
        for (size_t j = 0; j < f->nev; j++)
            if (f->ev[j].correlation == 41 + i)
                ev = &f->ev[j];
        assert_non_null(ev);
        assert_int_equal(ev->kind, DEVTRACE_KIND_RUNTIME);
        assert_int_equal(ev->flags, DEVTRACE_EVENT_HAS_CBID);
        assert_int_equal(ev->u.runtime.cbid, cbid[i]);
        assert_int_equal(ev->device, 4242);
        assert_int_equal(ev->stream, 4343);
        assert_string_equal(ut_decoded_name(f, ev), want[i]);
    }
    assert_int_equal(f->ev[1].u.runtime.return_value, 1);
    assert_int_equal(f->s->stats.unresolved_names, 0);
}

static void unknown_cbid_is_named_by_number_and_counted_once(void **state)
{
    ut_decoder_fixture *f = *state;
    f->used = write_api(f->buf, 5, 3999, 900, 990, 51, 0);
    f->used += write_api(f->buf + f->used, 5, 3999, 1000, 1090, 52, 0);
    f->used += write_api(f->buf + f->used, 5, 600, 1100, 1190, 53, 0);
    f->used += write_api(f->buf + f->used, 5, 100000, 1200, 1290, 54, 0); /* implausible: malformed */
    dt_pti_walk_counts c = ut_decoder_walk(f, DT_PTI_WALK_DECODE);
    assert_int_equal(c.emitted, 3);
    assert_int_equal(c.malformed, 1);
    assert_string_equal(ut_decoded_name(f, &f->ev[0]), "cudaRuntime#3999");
    assert_string_equal(ut_decoded_name(f, &f->ev[1]), "cudaRuntime#3999");
    assert_string_equal(ut_decoded_name(f, &f->ev[2]), "cudaRuntime#600");
    assert_int_equal(f->s->stats.unresolved_names, 2);
}

static void driver_api_records_are_ignored_not_malformed(void **state)
{
    ut_decoder_fixture *f = *state;
    f->used = write_api(f->buf, 4, 7, 900, 990, 61, 0);
    dt_pti_walk_counts c = ut_decoder_walk(f, DT_PTI_WALK_DECODE);
    assert_int_equal(c.records, 1);
    assert_int_equal(c.emitted, 0);
    assert_int_equal(c.ignored, 1);
    assert_int_equal(f->s->stats.malformed_records, 0);
}

static void external_correlation_custom0_links_runtime_and_device(void **state)
{
    ut_decoder_fixture *f = *state;
    f->used = write_extcorr(f->buf, 3, 0, 71);              /* id 0 is valid */
    f->used += write_extcorr(f->buf + f->used, 1, 555, 71); /* another tool's kind */
    f->used += write_api(f->buf + f->used, 5, 211, 900, 990, 71, 0);
    f->used += write_kernel(f->buf + f->used, 10, 1000, 2000, 71, 0, 216);
    dt_pti_walk_counts c = ut_decoder_walk(f, DT_PTI_WALK_DECODE);
    assert_int_equal(c.records, 4);
    assert_int_equal(c.emitted, 3);
    assert_int_equal(c.ignored, 1);
    const devtrace_event *x = NULL;
    for (size_t j = 0; j < f->nev; j++)
        if (f->ev[j].kind == DEVTRACE_KIND_EXTCORR)
            x = &f->ev[j];
    assert_non_null(x);
    assert_int_equal(x->correlation, 71);
    assert_int_equal(x->external_id, 0);
    assert_int_equal(x->flags, DEVTRACE_EVENT_HAS_EXTERNAL);
    /* at drain, both halves carry External id 0 */
    dt_session_finalize(f->s);
    assert_int_equal(f->s->nsorted, 2);
    for (size_t i = 0; i < f->s->nsorted; i++) {
        assert_true(f->s->sorted[i]->flags & DEVTRACE_EVENT_HAS_EXTERNAL);
        assert_int_equal(f->s->sorted[i]->external_id, 0);
    }
}

static void zero_start_and_end_are_skipped_and_counted(void **state)
{
    ut_decoder_fixture *f = *state;
    f->used = write_kernel(f->buf, 10, 0, 0, 81, 0, 216);
    f->used += write_memcpy(f->buf + f->used, 1, 8, 0, 0, 82, 96);
    f->used += write_memset(f->buf + f->used, 0, 8, 0, 0, 83);
    f->used += write_api(f->buf + f->used, 5, 211, 0, 0, 84, 0);
    f->used += write_kernel(f->buf + f->used, 10, 0, 5, 85, 0, 216); /* small values are valid */
    dt_pti_walk_counts c = ut_decoder_walk(f, DT_PTI_WALK_DECODE);
    assert_int_equal(c.zero_time, 4);
    assert_int_equal(c.emitted, 1);
    assert_int_equal(f->ev[0].correlation, 85);
    assert_int_equal(f->s->stats.zero_timestamp, 4);
    assert_int_equal(f->s->stats.malformed_records, 0);
}

static void record_running_past_valid_size_is_rejected_and_counted(void **state)
{
    ut_decoder_fixture *f = *state;
    f->used = write_api(f->buf, 5, 17, 10, 20, 91, 0);
    write_kernel(f->buf + f->used, 10, 100, 200, 92, 0, 216);
    f->used += 200; /* the kernel record's last 16 bytes are not valid */
    dt_pti_walk_counts c = ut_decoder_walk(f, DT_PTI_WALK_DECODE);
    assert_int_equal(c.emitted, 1);
    assert_int_equal(c.malformed, 1);
    assert_int_equal(f->ev[0].correlation, 91);
    assert_int_equal(f->s->stats.malformed_records, 1);
}

static void unknown_kind_is_skipped_counted_and_walking_goes_on(void **state)
{
    ut_decoder_fixture *f = *state;
    f->used = write_api(f->buf, 5, 17, 10, 20, 101, 0);
    memset(f->buf + f->used, 0xA5, 32);
    ut_put32(f->buf, f->used, 0x0BAD);
    f->used += 32;
    f->used += write_api(f->buf + f->used, 5, 17, 30, 40, 102, 0);
    dt_pti_walk_counts c = ut_decoder_walk(f, DT_PTI_WALK_DECODE);
    assert_int_equal(c.emitted, 2);
    assert_int_equal(c.malformed, 1);
    assert_int_equal(f->s->stats.malformed_records, 1);
}

static void kernel_with_zero_grid_is_malformed(void **state)
{
    ut_decoder_fixture *f = *state;
    f->used = write_kernel(f->buf, 10, 100, 200, 111, 0, 216);
    ut_put32(f->buf, 52, 0); /* gridX */
    dt_pti_walk_counts c = ut_decoder_walk(f, DT_PTI_WALK_DECODE);
    assert_int_equal(c.emitted, 0);
    assert_int_equal(c.malformed, 1);
}

static void iterator_pointer_outside_the_buffer_stops_the_walk(void **state)
{
    ut_decoder_fixture *f = *state;
    f->used = write_api(f->buf, 5, 17, 10, 20, 121, 0);
    f->d->next = wild_next;
    dt_pti_walk_counts c = ut_decoder_walk(f, DT_PTI_WALK_DECODE);
    assert_int_equal(c.emitted, 0);
    assert_int_equal(c.malformed, 1);
}

static void iterator_repeating_a_pointer_stops_the_walk(void **state)
{
    ut_decoder_fixture *f = *state;
    f->used = write_api(f->buf, 5, 17, 10, 20, 131, 0);
    f->used += write_api(f->buf + f->used, 5, 17, 30, 40, 132, 0);
    f->d->next = stuck_next;
    dt_pti_walk_counts c = ut_decoder_walk(f, DT_PTI_WALK_DECODE);
    assert_int_equal(c.emitted, 1);
    assert_int_equal(c.malformed, 1);
}

/* ---- stepping by verified sizes ---- */

static unsigned g_next_calls;
static size_t g_api_step = 40; /* what counting_next steps over an API record */

/* stand_in_next that counts its calls and may step API records by a different size. */
static int counting_next(uint8_t *buf, size_t valid, void **rec)
{
    g_next_calls++;
    size_t off = 0;
    if (*rec) {
        uint32_t kind;
        memcpy(&kind, *rec, 4);
        off = (size_t)((uint8_t *)*rec - buf) + (kind == 5 ? g_api_step : record_size(kind));
    }
    if (off + 4 > valid)
        return MAX_LIMIT;
    *rec = buf + off;
    return 0;
}

/* n launches: API record, kernel, external correlation, each API record followed by pad bytes. */
static void write_launches(ut_decoder_fixture *f, unsigned n, size_t pad)
{
    f->used = 0;
    for (unsigned i = 0; i < n; i++) {
        f->used += write_api(f->buf + f->used, 5, 211, 10 + 100 * i, 20 + 100 * i, 1000 + i, 0);
        memset(f->buf + f->used, 0, pad);
        f->used += pad;
        f->used += write_kernel(f->buf + f->used, 10, 30 + 100 * i, 90 + 100 * i, 1000 + i, 0, 216);
        f->used += write_extcorr(f->buf + f->used, 3, 500 + i, 1000 + i);
    }
}

static void verified_kinds_are_stepped_without_the_library(void **state)
{
    ut_decoder_fixture *f = *state;
    f->d->next = counting_next;
    g_api_step = 40;
    write_launches(f, 20, 0); /* 20 * 280 bytes */
    g_next_calls = 0;
    dt_pti_walk_counts c = ut_decoder_walk(f, DT_PTI_WALK_DECODE);
    /* the first record, then one step from each kind (API, kernel, external): after that
     * every step is by size, and the end is the end of the valid bytes */
    assert_int_equal(g_next_calls, 4);
    assert_int_equal(c.records, 60);
    assert_int_equal(c.emitted, 60);
    assert_int_equal(c.malformed, 0);
    assert_int_equal(f->nev, 60);
    for (unsigned i = 0; i < 20; i++) {
        assert_int_equal(f->ev[3 * i].kind, DEVTRACE_KIND_RUNTIME);
        assert_int_equal(f->ev[3 * i].correlation, 1000 + i);
        assert_int_equal(f->ev[3 * i + 1].kind, DEVTRACE_KIND_KERNEL);
        assert_int_equal(f->ev[3 * i + 1].start_ns, 30 + 100 * i);
        assert_int_equal(f->ev[3 * i + 2].kind, DEVTRACE_KIND_EXTCORR);
        assert_int_equal(f->ev[3 * i + 2].external_id, 500 + i);
    }
    assert_int_equal(f->d->stride[5], DT_PTI_STRIDE_OK);
    assert_int_equal(f->d->stride[10], DT_PTI_STRIDE_OK);
    assert_int_equal(f->d->stride[39], DT_PTI_STRIDE_OK);
    assert_int_equal(f->d->stride_size[5], 40); /* the steps the walk takes by itself */
    assert_int_equal(f->d->stride_size[10], f->d->by_kind[10]->size);
    assert_int_equal(f->d->stride_size[39], 24);
    /* the next buffer: every kind known, one call for its first record */
    g_next_calls = 0;
    ut_decoder_walk(f, DT_PTI_WALK_DECODE);
    assert_int_equal(g_next_calls, 1);
    assert_int_equal(f->s->stats.malformed_records, 0);
    assert_int_equal(f->s->nnotes, 0);
}

static void iterator_only_walks_call_the_library_for_every_record(void **state)
{
    ut_decoder_fixture *f = *state;
    f->d->next = counting_next;
    f->d->iterator_only = 1;
    g_api_step = 40;
    write_launches(f, 20, 0);
    g_next_calls = 0;
    dt_pti_walk_counts c = ut_decoder_walk(f, DT_PTI_WALK_DECODE);
    assert_int_equal(g_next_calls, 61); /* 60 records and the end */
    assert_int_equal(c.emitted, 60);
    assert_int_equal(f->d->stride[5], DT_PTI_STRIDE_UNSEEN);
    assert_int_equal(f->d->stride_size[5], 0);
}

static void a_kind_the_library_steps_differently_stays_on_the_library(void **state)
{
    ut_decoder_fixture *f = *state;
    f->d->next = counting_next;
    g_api_step = 48; /* 8 bytes the layout does not know of after each API record */
    write_launches(f, 10, 8);
    g_next_calls = 0;
    dt_pti_walk_counts c = ut_decoder_walk(f, DT_PTI_WALK_DECODE);
    assert_int_equal(c.emitted, 30);
    assert_int_equal(c.malformed, 0);
    assert_int_equal(f->nev, 30);
    for (unsigned i = 0; i < 10; i++) {
        assert_int_equal(f->ev[3 * i].correlation, 1000 + i);
        assert_int_equal(f->ev[3 * i + 1].correlation, 1000 + i);
        assert_int_equal(f->ev[3 * i + 2].external_id, 500 + i);
    }
    assert_int_equal(f->d->stride[5], DT_PTI_STRIDE_NO);
    assert_int_equal(f->d->stride[10], DT_PTI_STRIDE_OK);
    assert_int_equal(f->d->stride[39], DT_PTI_STRIDE_OK);
    assert_int_equal(f->d->stride_size[5], 0);
    assert_int_equal(f->d->stride_size[39], 24);
    /* every step from an API record, and every step to one, asks the library: 10 + 9, then
     * the first record and the first kernel -> external step: 21 */
    assert_int_equal(g_next_calls, 21);
    assert_int_equal(f->s->nnotes, 1);
    assert_string_equal(f->s->notes[0], "CUPTI's record iterator stepped 48 bytes over a CUpti_ActivityAPI record "
                                        "(kind 5), whose layout has 40: records of that kind are stepped by the "
                                        "library's iterator only");
}

/* A name's address is trusted within one buffer, and checked again in the next. */
static void a_reused_name_address_is_checked_again_in_the_next_buffer(void **state)
{
    ut_decoder_fixture *f = *state;
    static char name[] = "_ZN1a1fEv";
    f->used = write_kernel(f->buf, 10, 100, 200, 1, 0, 216);
    ut_putptr(f->buf, 104, name);
    f->used += write_kernel(f->buf + f->used, 10, 300, 400, 2, 0, 216);
    ut_putptr(f->buf, 216 + 104, name);
    ut_decoder_walk(f, DT_PTI_WALK_DECODE);
    assert_int_equal(f->nev, 2);
    assert_string_equal(ut_decoded_name(f, &f->ev[0]), "_ZN1a1fEv");
    assert_int_equal(f->ev[1].name_id, f->ev[0].name_id);
    memcpy(name, "_ZN1b1gEv", sizeof name); /* the vendor reused the address */
    ut_decoder_walk(f, DT_PTI_WALK_DECODE);
    assert_int_equal(f->nev, 4);
    assert_string_equal(ut_decoded_name(f, &f->ev[2]), "_ZN1b1gEv");
    assert_string_equal(ut_decoded_name(f, &f->ev[3]), "_ZN1b1gEv");
    assert_string_equal(ut_decoded_name(f, &f->ev[0]), "_ZN1a1fEv");
}

/* Addresses that share a slot of the walk's name cache replace each other there: each
 * record still gets its own name. */
static void name_addresses_sharing_a_cache_slot_keep_their_names(void **state)
{
    ut_decoder_fixture *f = *state;
    static _Alignas(8) char pool[1 << 16];
    const char *names[3] = {"_Z5alphav", "_Z4betav", "_Z5gammav"};
    char *at[3];
    int found = 0;
    unsigned slot = dt_pti_name_slot(pool);
    for (size_t off = 0; off + 16 <= sizeof pool && found < 3; off += 16)
        if (dt_pti_name_slot(pool + off) == slot) {
            at[found] = pool + off;
            strcpy(at[found], names[found]);
            found++;
        }
    assert_int_equal(found, 3);
    const int order[12] = {0, 1, 0, 2, 1, 0, 0, 2, 2, 1, 0, 1};
    f->used = 0;
    for (int i = 0; i < 12; i++) {
        f->used += write_kernel(f->buf + f->used, 10, 100 + 10 * (uint64_t)i, 105 + 10 * (uint64_t)i, (uint32_t)(1 + i),
                                0, 216);
        ut_putptr(f->buf, 216 * (size_t)i + 104, at[order[i]]);
    }
    dt_pti_walk_counts c = ut_decoder_walk(f, DT_PTI_WALK_DECODE);
    assert_int_equal(c.emitted, 12);
    assert_int_equal(f->nev, 12);
    for (int i = 0; i < 12; i++)
        assert_string_equal(ut_decoded_name(f, &f->ev[i]), names[order[i]]);
}

static void cuda12_library_uses_kernel9_and_memcpy5_strides(void **state)
{
    ut_decoder_fixture *f = *state;
    dt_pti_decoder_init(f->d, &dt_pti_cupti_descriptor, f->s, 28, stand_in_next); /* CUDA 12.9 Update 1 */
    g_kernel_size = 208;
    g_memcpy_size = 88;
    assert_int_equal(f->d->check_size[10], 208);
    assert_int_equal(f->d->check_size[1], 88);
    assert_string_equal(f->d->by_kind[10]->name, "CUpti_ActivityKernel9");
    assert_int_equal(f->d->prefix_only, 0);
    f->used = write_kernel(f->buf, 10, 100, 200, 141, 0, 208);
    f->used += write_memcpy(f->buf + f->used, 2, 16, 300, 400, 142, 88);
    f->used += write_kernel(f->buf + f->used, 10, 500, 600, 143, 0, 208);
    dt_pti_walk_counts c = ut_decoder_walk(f, DT_PTI_WALK_DECODE);
    assert_int_equal(c.emitted, 3);
    assert_int_equal(c.malformed, 0);
    /* a Kernel9 buffer read with the CUDA 13.0 size: the last record runs past the end */
    dt_pti_decoder_init(f->d, &dt_pti_cupti_descriptor, f->s, 130001, stand_in_next);
    assert_int_equal(f->d->check_size[10], 216);
    assert_string_equal(f->d->by_kind[10]->name, "CUpti_ActivityKernel10");
    f->used = write_kernel(f->buf, 10, 100, 200, 144, 0, 208);
    dt_pti_walk_buffer(f->d, f->buf, f->used, DT_PTI_WALK_DECODE, &c);
    assert_int_equal(c.malformed, 1);
}

static void newer_library_falls_back_to_the_checked_prefix(void **state)
{
    ut_decoder_fixture *f = *state;
    dt_pti_decoder_init(f->d, &dt_pti_cupti_descriptor, f->s, 130100, stand_in_next); /* CUDA 13.1 */
    assert_int_equal(f->d->prefix_only, 1);
    assert_string_equal(f->d->by_kind[10]->name, "CUpti_ActivityKernel10");
    assert_int_equal(f->d->check_size[10], 136);
    assert_int_equal(f->d->check_size[5], 40);
    dt_pti_decoder_init(f->d, &dt_pti_cupti_descriptor, f->s, 0, stand_in_next); /* no GetVersion */
    assert_int_equal(f->d->prefix_only, 1);
    assert_string_equal(f->d->by_kind[10]->name, "CUpti_ActivityKernel9");
}

static void ppu_null_record_and_unknown_end_code_end_the_buffer(void **state)
{
    ut_decoder_fixture *f = *state;
    dt_pti_decoder_init(f->d, &dt_pti_ppu_descriptor, f->s, 130001, null_end_next);
    f->used = write_api(f->buf, 5, 17, 10, 20, 151, 0);
    dt_pti_walk_counts c = ut_decoder_walk(f, DT_PTI_WALK_DECODE);
    assert_int_equal(c.emitted, 1);
    assert_int_equal(c.malformed, 0);
    f->d->next = odd_end_next;
    dt_pti_walk_buffer(f->d, f->buf, f->used, DT_PTI_WALK_DECODE, &c);
    assert_int_equal(c.malformed, 0);
    /* the same endings are malformed for NVIDIA's CUPTI */
    dt_pti_decoder_init(f->d, &dt_pti_cupti_descriptor, f->s, 130001, null_end_next);
    dt_pti_walk_buffer(f->d, f->buf, f->used, DT_PTI_WALK_DECODE, &c);
    assert_int_equal(c.malformed, 1);
    f->d->next = odd_end_next;
    dt_pti_walk_buffer(f->d, f->buf, f->used, DT_PTI_WALK_DECODE, &c);
    assert_int_equal(c.malformed, 1);
}

static void pool_full_and_out_of_window_walks_count_without_storing(void **state)
{
    ut_decoder_fixture *f = *state;
    f->used = write_extcorr(f->buf, 3, 1, 161);
    f->used += write_api(f->buf + f->used, 5, 211, 10, 20, 161, 0);
    f->used += write_kernel(f->buf + f->used, 10, 30, 40, 161, 0, 216);
    f->used += write_memcpy(f->buf + f->used, 1, 8, 50, 60, 162, 96);
    dt_pti_walk_buffer(f->d, f->buf, f->used, DT_PTI_WALK_POOL_FULL, NULL);
    assert_int_equal(f->s->stats.dropped_pool_full, 3);
    dt_pti_walk_buffer(f->d, f->buf, f->used, DT_PTI_WALK_OUT_OF_WINDOW, NULL);
    assert_int_equal(f->s->stats.out_of_window[DEVTRACE_KIND_RUNTIME], 1);
    assert_int_equal(f->s->stats.out_of_window[DEVTRACE_KIND_KERNEL], 1);
    assert_int_equal(f->s->stats.out_of_window[DEVTRACE_KIND_MEMCPY], 1);
    assert_int_equal(dt_store_count(&f->s->store), 0);
}

static void cuda_runtime_table_is_sorted_dense_and_names_the_design_calls(void **state)
{
    (void)state;
    for (size_t i = 0; i < DT_PTI_CUDA_NRUNTIME_NAMES; i++) {
        assert_int_equal(dt_pti_cuda_runtime_names[i].cbid, i + 1);
        assert_non_null(dt_pti_cuda_runtime_names[i].name);
        assert_true(strchr(dt_pti_cuda_runtime_names[i].name, '_') == NULL ||
                    strncmp(dt_pti_cuda_runtime_names[i].name, "__cuda", 6) == 0 ||
                    strstr(dt_pti_cuda_runtime_names[i].name, "_pt") ||
                    strstr(dt_pti_cuda_runtime_names[i].name, "_v2"));
    }
    struct {
        uint32_t cbid;
        const char *name;
    } want[] = {{3, "cudaGetDeviceCount"},
                {16, "cudaSetDevice"},
                {17, "cudaGetDevice"},
                {20, "cudaMalloc"},
                {22, "cudaFree"},
                {31, "cudaMemcpy"},
                {41, "cudaMemcpyAsync"},
                {49, "cudaMemset"},
                {51, "cudaMemsetAsync"},
                {131, "cudaStreamSynchronize"},
                {135, "cudaEventRecord"},
                {165, "cudaDeviceSynchronize"},
                {211, "cudaLaunchKernel"},
                {430, "cudaLaunchKernelExC"},
                {440, "cudaGetDeviceProperties"}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        assert_string_equal(dt_pti_cuda_runtime_names[want[i].cbid - 1].name, want[i].name);
}

/* ---- dispatch by the layouts' decoder ids ---- */

/* Every CUPTI-family backend compiled in: each layout names a decoder that exists (one of the
 * engine's, or a vendor's id with the descriptor's vendor_decode), so no kind is left unread
 * by a mistake in a table. */
static void every_compiled_layout_names_a_decoder_that_exists(void **state)
{
    (void)state;
    int descriptors = 0;
    for (const dt_backend *const *b = dt_backends(); *b; b++) {
        if ((*b)->raw_decoder != &dt_pti_raw_decoder)
            continue;
        const dt_pti_descriptor *desc = (*b)->raw_tables;
        descriptors++;
        assert_true(desc->nlayouts > 0);
        for (size_t i = 0; i < desc->nlayouts; i++) {
            unsigned id = desc->layouts[i].decoder;
            if (id >= DT_PTI_DECODE_VENDOR) {
                if (!desc->vendor_decode)
                    fail_msg("%s: layout %s names vendor decoder %u, and the descriptor has none", desc->name,
                             desc->layouts[i].name, id);
            } else if (id < DT_PTI_DECODE_CUPTI_KERNEL || id > DT_PTI_DECODE_CUPTI_EXTERNAL) {
                fail_msg("%s: layout %s names decoder %u, not one of the engine's", desc->name, desc->layouts[i].name,
                         id);
            }
        }
    }
    assert_true(descriptors >= 2); /* cupti and ppu at least (main's condition) */
}

/* A vendor's own decoders, reached through the layout's id: the descriptor's vendor_decode
 * gets the layout (whose id says which of the vendor's decoders) and the walk's name cache. */
enum { VENDOR_KIND = 33 }; /* stepped over in 8 bytes by stand_in_next */
static int g_vendor_calls[2];
static dt_pti_name_cache *g_vendor_names;
static dt_pti_decoded vendor_decode(const dt_pti_layout *l, dt_pti_decoder *d, const uint8_t *rec, devtrace_event *ev,
                                    dt_pti_name_cache *nc)
{
    unsigned which = l->decoder - DT_PTI_DECODE_VENDOR;
    if (which > 1)
        return DT_PTI_MALFORMED;
    g_vendor_calls[which]++;
    g_vendor_names = nc;
    uint32_t stamp;
    memcpy(&stamp, rec + 4, sizeof stamp);
    dt_pti_set_span(ev, DEVTRACE_KIND_RUNTIME, stamp, stamp + 1, stamp, 0, 0);
    ev->name_id = dt_pti_vendor_string_cached(d, nc, which ? "vendorCall1" : "vendorCall0");
    return DT_PTI_EMIT;
}

/* CUPTI's layouts and one more, of VENDOR_KIND, naming decoder id; the descriptor's
 * vendor_decode is the one above when with_decode. The tables stay valid while the
 * fixture walks. */
static dt_pti_layout g_layouts[DT_PTI_CUPTI_NLAYOUTS + 1];
static dt_pti_descriptor g_with_vendor;
static void with_vendor_layout(ut_decoder_fixture *f, unsigned id, int with_decode)
{
    memcpy(g_layouts, dt_pti_cupti_layouts, sizeof dt_pti_cupti_layouts);
    g_layouts[DT_PTI_CUPTI_NLAYOUTS] =
        (dt_pti_layout){VENDOR_KIND, 0, UINT32_MAX, 8, 8, DEVTRACE_KIND_RUNTIME, (uint16_t)id, "vendor"};
    g_with_vendor = dt_pti_cupti_descriptor;
    g_with_vendor.layouts = g_layouts;
    g_with_vendor.nlayouts = DT_PTI_CUPTI_NLAYOUTS + 1;
    g_with_vendor.vendor_decode = with_decode ? vendor_decode : NULL;
    dt_pti_decoder_init(f->d, &g_with_vendor, f->s, 130001, stand_in_next);
    memset(g_vendor_calls, 0, sizeof g_vendor_calls);
    g_vendor_names = NULL;
}

static void a_vendor_decoder_id_reaches_the_descriptors_vendor_decode_with_that_id(void **state)
{
    ut_decoder_fixture *f = *state;
    with_vendor_layout(f, DT_PTI_DECODE_VENDOR + 1, 1);
    f->used = write_api(f->buf, 5, 17, 10, 20, 171, 0);
    ut_put32(f->buf + f->used, 0, VENDOR_KIND), ut_put32(f->buf + f->used, 4, 500);
    f->used += 8;
    f->used += write_api(f->buf + f->used, 5, 17, 30, 40, 172, 0);
    dt_pti_walk_counts c = ut_decoder_walk(f, DT_PTI_WALK_DECODE);
    assert_int_equal(c.emitted, 3);
    assert_int_equal(c.malformed, 0);
    assert_int_equal(g_vendor_calls[0], 0);
    assert_int_equal(g_vendor_calls[1], 1);
    assert_non_null(g_vendor_names); /* the walk's name cache, not NULL */
    const devtrace_event *ev = &f->ev[1];
    assert_int_equal(ev->start_ns, 500);
    assert_string_equal(ut_decoded_name(f, ev), "vendorCall1");
    assert_string_equal(ut_decoded_name(f, &f->ev[0]), "cudaGetDevice"); /* the engine's API decoder */
}

/* A layout with a vendor's id in a descriptor without vendor_decode is not used: its kind
 * is unknown (malformed, stepped over by the iterator), never a call through NULL. */
static void a_vendor_id_without_a_vendor_decode_leaves_its_kind_unknown(void **state)
{
    ut_decoder_fixture *f = *state;
    with_vendor_layout(f, DT_PTI_DECODE_VENDOR + 1, 0);
    assert_null(f->d->by_kind[VENDOR_KIND]);
    ut_put32(f->buf, 0, VENDOR_KIND), ut_put32(f->buf, 4, 500);
    f->used = 8 + write_api(f->buf + 8, 5, 17, 30, 40, 172, 0);
    dt_pti_walk_counts c = ut_decoder_walk(f, DT_PTI_WALK_DECODE);
    assert_int_equal(c.emitted, 1);
    assert_int_equal(c.malformed, 1);
    assert_int_equal(g_vendor_calls[0] + g_vendor_calls[1], 0);
}

/* ---- the stride walk (dt_pti_stride_walk) ---- */

static int g_iterator_calls;
static int counted_never_next(uint8_t *buf, size_t valid, void **rec)
{
    (void)buf, (void)valid, (void)rec;
    g_iterator_calls++;
    return MAX_LIMIT;
}

/* A vendor scanner that is the engine's stride walk, as a vendor whose iterator cannot be
 * used has it (mspti.c). */
static void stride_scan(dt_pti_decoder *d, uint8_t *buf, size_t valid, dt_pti_walk_mode mode, dt_pti_walk_counts *c)
{
    dt_pti_stride_walk(d, buf, valid, mode, c, dt_pti_decode_record);
}

/* The stride walk steps by the layouts' sizes alone, the vendor's iterator never called; a
 * kind without a layout (no size known) ends the buffer, counted once. */
static void stride_walk_steps_by_the_layouts_and_never_calls_the_iterator(void **state)
{
    ut_decoder_fixture *f = *state;
    dt_pti_descriptor desc = dt_pti_cupti_descriptor;
    desc.scan = stride_scan;
    dt_pti_decoder_init(f->d, &desc, f->s, 130001, counted_never_next);
    g_iterator_calls = 0;
    f->used = write_api(f->buf, 5, 17, 10, 20, 171, 0);
    f->used += write_kernel(f->buf + f->used, 10, 30, 40, 172, 0, 216);
    f->used += write_memcpy(f->buf + f->used, 1, 64, 50, 60, 173, 96);
    size_t before_unknown = f->used;
    memset(f->buf + f->used, 0, 32);
    ut_put32(f->buf + f->used, 0, 41); /* no layout: its size is unknown */
    f->used += 32;
    f->used += write_api(f->buf + f->used, 5, 17, 70, 80, 174, 0); /* past it: not read */
    dt_pti_walk_counts c = ut_decoder_walk(f, DT_PTI_WALK_DECODE);
    assert_int_equal(g_iterator_calls, 0);
    assert_int_equal(c.records, 3);
    assert_int_equal(c.emitted, 3);
    assert_int_equal(c.malformed, 1);
    assert_int_equal(f->ev[1].kind, DEVTRACE_KIND_KERNEL);
    assert_int_equal(f->ev[2].correlation, 173);
    assert_int_equal(before_unknown, 40 + 216 + 96);
}

/* A vendor scanner (MCPTI style): 8-byte steps, resynchronising over what does not decode. */
static void resync_scan(dt_pti_decoder *d, uint8_t *buf, size_t valid, dt_pti_walk_mode mode, dt_pti_walk_counts *c)
{
    size_t off = 0;
    while (off + 4 <= valid) {
        uint32_t kind;
        memcpy(&kind, buf + off, 4);
        dt_pti_walk_counts one = {0};
        dt_pti_taken t = dt_pti_take_record(d, buf + off, valid - off, mode, &one);
        if (t == DT_PTI_TAKEN) {
            c->records += one.records, c->emitted += one.emitted, c->zero_time += one.zero_time;
            c->ignored += one.ignored;
            off += d->by_kind[kind]->size;
        } else {
            off += 8; /* skipped bytes, not records: the scanner decides what counts */
        }
    }
}

static int never_next(uint8_t *buf, size_t valid, void **rec)
{
    (void)buf, (void)valid, (void)rec;
    fail_msg("the vendor iterator was used although the descriptor has a scanner");
    return 0;
}

static void descriptor_scanner_replaces_the_vendor_iterator(void **state)
{
    ut_decoder_fixture *f = *state;
    dt_pti_descriptor with_scan = dt_pti_cupti_descriptor;
    with_scan.scan = resync_scan;
    dt_pti_decoder_init(f->d, &with_scan, f->s, 130001, never_next);
    f->used = write_api(f->buf, 5, 17, 10, 20, 171, 0);
    memset(f->buf + f->used, 0, 16); /* 16 bytes of nothing between records */
    f->used += 16;
    f->used += write_kernel(f->buf + f->used, 10, 30, 40, 172, 0, 216);
    dt_pti_walk_counts c = ut_decoder_walk(f, DT_PTI_WALK_DECODE);
    assert_int_equal(c.emitted, 2);
    assert_int_equal(c.malformed, 0);
    assert_int_equal(f->s->stats.malformed_records, 0);
}

int main(void)
{
#if !defined(DT_HAVE_CUPTI) || !defined(DT_HAVE_PPU)
    puts("SKIPPED: the cupti and ppu backends are not compiled in (DEVTRACE_BACKENDS)");
    return 0;
#endif
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(kernel10_record_becomes_a_kernel_event_with_launch_metadata, setup, teardown),
        cmocka_unit_test_setup_teardown(kernel_queued_unknown_sentinels_leave_queued_unset, setup, teardown),
        cmocka_unit_test_setup_teardown(kernel_kind_3_decodes_like_concurrent_kernel, setup, teardown),
        cmocka_unit_test_setup_teardown(memcpy6_record_keeps_bytes_and_direction, setup, teardown),
        cmocka_unit_test_setup_teardown(memset4_record_keeps_bytes_and_value, setup, teardown),
        cmocka_unit_test_setup_teardown(api_record_becomes_a_runtime_event_named_from_its_cbid, setup, teardown),
        cmocka_unit_test_setup_teardown(unknown_cbid_is_named_by_number_and_counted_once, setup, teardown),
        cmocka_unit_test_setup_teardown(driver_api_records_are_ignored_not_malformed, setup, teardown),
        cmocka_unit_test_setup_teardown(external_correlation_custom0_links_runtime_and_device, setup, teardown),
        cmocka_unit_test_setup_teardown(zero_start_and_end_are_skipped_and_counted, setup, teardown),
        cmocka_unit_test_setup_teardown(record_running_past_valid_size_is_rejected_and_counted, setup, teardown),
        cmocka_unit_test_setup_teardown(unknown_kind_is_skipped_counted_and_walking_goes_on, setup, teardown),
        cmocka_unit_test_setup_teardown(kernel_with_zero_grid_is_malformed, setup, teardown),
        cmocka_unit_test_setup_teardown(iterator_pointer_outside_the_buffer_stops_the_walk, setup, teardown),
        cmocka_unit_test_setup_teardown(iterator_repeating_a_pointer_stops_the_walk, setup, teardown),
        cmocka_unit_test_setup_teardown(verified_kinds_are_stepped_without_the_library, setup, teardown),
        cmocka_unit_test_setup_teardown(iterator_only_walks_call_the_library_for_every_record, setup, teardown),
        cmocka_unit_test_setup_teardown(a_kind_the_library_steps_differently_stays_on_the_library, setup, teardown),
        cmocka_unit_test_setup_teardown(a_reused_name_address_is_checked_again_in_the_next_buffer, setup, teardown),
        cmocka_unit_test_setup_teardown(name_addresses_sharing_a_cache_slot_keep_their_names, setup, teardown),
        cmocka_unit_test_setup_teardown(cuda12_library_uses_kernel9_and_memcpy5_strides, setup, teardown),
        cmocka_unit_test_setup_teardown(newer_library_falls_back_to_the_checked_prefix, setup, teardown),
        cmocka_unit_test_setup_teardown(ppu_null_record_and_unknown_end_code_end_the_buffer, setup, teardown),
        cmocka_unit_test_setup_teardown(pool_full_and_out_of_window_walks_count_without_storing, setup, teardown),
        cmocka_unit_test(cuda_runtime_table_is_sorted_dense_and_names_the_design_calls),
        cmocka_unit_test(every_compiled_layout_names_a_decoder_that_exists),
        cmocka_unit_test_setup_teardown(a_vendor_decoder_id_reaches_the_descriptors_vendor_decode_with_that_id, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_vendor_id_without_a_vendor_decode_leaves_its_kind_unknown, setup, teardown),
        cmocka_unit_test_setup_teardown(stride_walk_steps_by_the_layouts_and_never_calls_the_iterator, setup, teardown),
        cmocka_unit_test_setup_teardown(descriptor_scanner_replaces_the_vendor_iterator, setup, teardown),
    };
    return cmocka_run_group_tests_name("pti_decode", tests, NULL, NULL);
}
