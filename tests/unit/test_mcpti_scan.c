/* test_mcpti_scan.c: MetaX MCPTI's buffer walker and record scanner on hand-built
 * buffers, with exact counts. Records are written byte by byte at vendor-abi.md's offsets
 * and MACA 3.8.0 sizes (kernel 200, memcpy 88, memset 88, API 40, external correlation
 * 24), never through our mirrors. Field values are chosen so that no 8-byte-aligned u32
 * inside a record reads as an MCPTI kind (1, 2, 3, 5, 10, 39) unless a test says so, which
 * makes every count below exact. Stand-in iterators play MACA's GetNextRecord: well
 * behaved, stale after an external-correlation record (MACA 3.8.0), stopping early,
 * jumping, handing out a record that fails validation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backends/pti_family.h"
#include "backends/mcpti_scan.h"
#include "core/session.h"
#include "unit_bytes.h"
#include "unit_decoder.h"

#define MAX_LIMIT 12
#define INVALID_KIND 21

static const char kernel_name[] = "_ZN7example6kernelEv";

/* ---- records at numeric offsets ---- */

typedef struct kernel_args {
    uint32_t kind;
    uint64_t start, end;
    int32_t grid[3], block[3];
    uint32_t corr;
} kernel_args;

static kernel_args good_kernel(uint32_t corr)
{
    kernel_args k = {10, 5000, 8000, {416, 6, 7}, {256, 8, 9}, corr};
    return k;
}

/* MCpti_ActivityKernel8, 200 B. */
static size_t write_kernel(uint8_t *b, kernel_args k)
{
    memset(b, 0, 200);
    ut_put32(b, 0, k.kind);
    ut_put16(b, 6, 40); /* registersPerThread */
    ut_put64(b, 16, k.start);
    ut_put64(b, 24, k.end);
    ut_put64(b, 32, k.end); /* completed */
    ut_put32(b, 40, 0);     /* deviceId */
    ut_put32(b, 44, 1);     /* contextId */
    ut_put32(b, 48, 7);     /* streamId */
    for (int i = 0; i < 3; i++) {
        ut_put32(b, 52 + 4 * (size_t)i, (uint32_t)k.grid[i]);
        ut_put32(b, 64 + 4 * (size_t)i, (uint32_t)k.block[i]);
    }
    ut_put32(b, 76, 1024);   /* staticSharedMemory */
    ut_put32(b, 80, 81920);  /* dynamicSharedMemory */
    ut_put32(b, 92, k.corr); /* correlationId */
    ut_put64(b, 96, 77);     /* gridId */
    const char *name = kernel_name;
    memcpy(b + 104, &name, sizeof name);
    ut_put64(b, 120, k.start > 900 ? k.start - 100 : 0); /* queued */
    ut_put64(b, 128, k.start > 900 ? k.start - 50 : 0);  /* submitted */
    return 200;
}

/* MCpti_ActivityMemcpy5 (kind 1) or Memset4 (kind 2), 88 B. */
static size_t write_copy(uint8_t *b, uint32_t kind, uint64_t bytes, uint64_t start, uint64_t end, uint32_t corr)
{
    memset(b, 0, 88);
    ut_put32(b, 0, kind);
    if (kind == 1) {
        b[4] = 2; /* DTOH */
        b[5] = 3;
        b[6] = 1;
    } else {
        ut_put32(b, 4, 0xAB); /* value */
        ut_put16(b, 48, 1);
        ut_put16(b, 50, 3);
    }
    ut_put64(b, 8, bytes);
    ut_put64(b, 16, start);
    ut_put64(b, 24, end);
    ut_put32(b, 36, 1);
    ut_put32(b, 40, kind == 1 ? 11 : 13);
    ut_put32(b, 44, corr);
    return 88;
}

/* MCpti_ActivityAPI, 40 B (kind 5). */
static size_t write_api(uint8_t *b, uint32_t cbid, uint64_t start, uint64_t end, uint32_t corr)
{
    memset(b, 0, 40);
    ut_put32(b, 0, 5);
    ut_put32(b, 4, cbid);
    ut_put64(b, 8, start);
    ut_put64(b, 16, end);
    ut_put32(b, 24, 4242);
    ut_put32(b, 28, 4343);
    ut_put32(b, 32, corr);
    return 40;
}

/* MCpti_ActivityExternalCorrelation, 24 B (kind 39). */
static size_t write_ext(uint8_t *b, uint32_t external_kind, uint64_t id, uint32_t corr)
{
    memset(b, 0, 24);
    ut_put32(b, 0, 39);
    ut_put32(b, 4, external_kind);
    ut_put64(b, 8, id);
    ut_put32(b, 16, corr);
    return 24;
}

/* ---- stand-in iterators ---- */

static size_t iter_limit;   /* early: records handed out before MAX_LIMIT */
static size_t iter_jump_at; /* jump: the record index skipped */
static size_t iter_count;

static void iter_reset(void)
{
    iter_count = 0;
}

static int stride(uint8_t *buf, size_t valid, void **rec, int stale)
{
    size_t off = 0;
    if (*rec) {
        uint32_t kind;
        memcpy(&kind, *rec, 4);
        if (stale && kind == 39)
            return 0; /* MACA 3.8.0: the same pointer again */
        off = (size_t)((uint8_t *)*rec - buf) + dt_mcpti_record_size(kind);
    }
    if (off + 4 > valid)
        return MAX_LIMIT;
    uint32_t kind;
    memcpy(&kind, buf + off, 4);
    uint32_t size = dt_mcpti_record_size(kind);
    if (!size || off + size > valid)
        return INVALID_KIND;
    *rec = buf + off;
    return 0;
}

static int good_next(uint8_t *buf, size_t valid, void **rec)
{
    return stride(buf, valid, rec, 0);
}
static int stale_next(uint8_t *buf, size_t valid, void **rec)
{
    return stride(buf, valid, rec, 1);
}

static int early_next(uint8_t *buf, size_t valid, void **rec)
{
    if (iter_count++ >= iter_limit)
        return MAX_LIMIT;
    return stride(buf, valid, rec, 0);
}

static int jump_next(uint8_t *buf, size_t valid, void **rec)
{
    int rc = stride(buf, valid, rec, 0);
    if (rc == 0 && iter_count++ == iter_jump_at)
        rc = stride(buf, valid, rec, 0);
    return rc;
}

/* Hands out the first record, then a pointer into the middle of it. */
static int inside_next(uint8_t *buf, size_t valid, void **rec)
{
    if (!*rec) {
        *rec = buf;
        return 0;
    }
    if ((uint8_t *)*rec == buf) {
        *rec = buf + 8;
        return 0;
    }
    (void)valid;
    return MAX_LIMIT;
}

/* ---- fixture (unit_decoder.h): MCPTI's descriptor, library version 18 ---- */

static int setup(void **state)
{
    iter_reset();
    *state = ut_decoder_fixture_new(&dt_pti_mcpti_descriptor, 18, good_next, "privateuse1_runtime");
    return *state ? 0 : -1;
}

static int teardown(void **state)
{
    ut_decoder_fixture_free(*state);
    return 0;
}

/* Walks the buffer in mode with next as the library's iterator (NULL: offline). */
static dt_pti_walk_counts walk_with(ut_decoder_fixture *f, dt_pti_next_fn next, dt_pti_walk_mode mode)
{
    f->d->next = next;
    iter_reset();
    return ut_decoder_walk(f, mode);
}

static dt_pti_walk_counts walk(ut_decoder_fixture *f, dt_pti_next_fn next)
{
    return walk_with(f, next, DT_PTI_WALK_DECODE);
}

static uint64_t stat_of(ut_decoder_fixture *f, int which)
{
    return f->d->scan_stats[which];
}

/* api(corr 101), ext(corr 102), kernel(102), memcpy(103), memset(104), api(105): 480 bytes. */
static void build_valid_buffer(ut_decoder_fixture *f)
{
    uint8_t *b = f->buf;
    size_t o = 0;
    o += write_api(b + o, 19, 1000, 1200, 101);
    o += write_ext(b + o, 3, 42, 102);
    o += write_kernel(b + o, good_kernel(102));
    o += write_copy(b + o, 1, 4096, 9000, 9500, 103);
    o += write_copy(b + o, 2, 4096, 9600, 9700, 104);
    o += write_api(b + o, 56, 10000, 10100, 105);
    f->used = o;
}

static void expect_valid_buffer_events(ut_decoder_fixture *f, const dt_pti_walk_counts *c)
{
    assert_int_equal(c->records, 6);
    assert_int_equal(c->emitted, 6);
    assert_int_equal(c->malformed, 0);
    assert_int_equal(f->nev, 6);
    assert_int_equal(ut_decoded_count(f, DEVTRACE_KIND_RUNTIME), 2);
    assert_int_equal(ut_decoded_count(f, DEVTRACE_KIND_EXTCORR), 1);
    assert_int_equal(ut_decoded_count(f, DEVTRACE_KIND_KERNEL), 1);
    assert_int_equal(ut_decoded_count(f, DEVTRACE_KIND_MEMCPY), 1);
    assert_int_equal(ut_decoded_count(f, DEVTRACE_KIND_MEMSET), 1);
    for (size_t i = 0; i < f->nev; i++) {
        const devtrace_event *e = &f->ev[i];
        if (e->kind == DEVTRACE_KIND_KERNEL) {
            assert_string_equal(f->names[i], kernel_name);
            assert_int_equal(e->start_ns, 5000);
            assert_int_equal(e->end_ns, 8000);
            assert_int_equal(e->correlation, 102);
            assert_int_equal(e->u.kernel.grid[0], 416);
            assert_int_equal(e->u.kernel.block[2], 9);
            assert_int_equal(e->u.kernel.dynamic_shared, 81920);
            assert_int_equal(e->u.kernel.queued_ns, 4900);
        } else if (e->kind == DEVTRACE_KIND_RUNTIME) {
            assert_string_equal(f->names[i], e->u.runtime.cbid == 19 ? "mcGetDevice" : "mcLaunchKernel");
        } else if (e->kind == DEVTRACE_KIND_MEMCPY) {
            assert_int_equal(e->u.memcpy.direction, DEVTRACE_COPY_DTOH);
            assert_int_equal(e->u.memcpy.bytes, 4096);
        } else if (e->kind == DEVTRACE_KIND_MEMSET) {
            assert_int_equal(e->u.memset.value, 0xAB);
        } else {
            assert_int_equal(e->external_id, 42);
        }
    }
    assert_int_equal(f->s->stats.malformed_records, 0);
    assert_int_equal(f->s->stats.malformed_bytes, 0);
    assert_int_equal(f->s->stats.zero_timestamp, 0);
}

/* ---- a valid buffer ---- */

static void valid_buffer_walks_with_the_iterator_alone(void **state)
{
    ut_decoder_fixture *f = *state;
    build_valid_buffer(f);
    dt_pti_walk_counts c = walk(f, good_next);
    expect_valid_buffer_events(f, &c);
    assert_int_equal(stat_of(f, DT_MCPTI_STAT_BUFFERS), 1);
    for (int s = DT_MCPTI_STAT_ITER_REPEATED; s <= DT_MCPTI_STAT_CAP; s++)
        assert_int_equal(stat_of(f, s), 0);
    assert_int_equal(stat_of(f, DT_MCPTI_STAT_SCANNED_BYTES), 0);
}

static void valid_buffer_scans_to_the_same_events_without_an_iterator(void **state)
{
    ut_decoder_fixture *f = *state;
    build_valid_buffer(f);
    dt_pti_walk_counts c = walk(f, NULL);
    expect_valid_buffer_events(f, &c);
    assert_int_equal(stat_of(f, DT_MCPTI_STAT_NO_ITERATOR), 1);
    assert_int_equal(stat_of(f, DT_MCPTI_STAT_SCANNED_BYTES), 480);
    assert_int_equal(stat_of(f, DT_MCPTI_STAT_RUNS), 0);
    assert_int_equal(stat_of(f, DT_MCPTI_STAT_REJECTED), 0);
}

/* ---- MACA 3.8.0's stale iterator ---- */

static void stale_pointer_mid_buffer_is_scanned_past_and_every_record_kept_once(void **state)
{
    ut_decoder_fixture *f = *state;
    build_valid_buffer(f);
    dt_pti_walk_counts c = walk(f, stale_next);
    expect_valid_buffer_events(f, &c);
    assert_int_equal(stat_of(f, DT_MCPTI_STAT_ITER_REPEATED), 1);
    /* the iterator gave api and ext (64 bytes); the scanner took the other 416 */
    assert_int_equal(stat_of(f, DT_MCPTI_STAT_SCANNED_BYTES), 480 - 64);
}

static void stale_pointer_before_the_last_record_and_at_the_end(void **state)
{
    ut_decoder_fixture *f = *state;
    size_t o = 0;
    o += write_api(f->buf + o, 19, 1000, 1200, 101);
    o += write_ext(f->buf + o, 3, 42, 102);
    o += write_ext(f->buf + o, 3, 43, 103);
    o += write_api(f->buf + o, 19, 1300, 1400, 103);
    o += write_ext(f->buf + o, 3, 44, 104);
    f->used = o;
    dt_pti_walk_counts c = walk(f, stale_next);
    assert_int_equal(c.emitted, 5);
    assert_int_equal(c.malformed, 0);
    assert_int_equal(ut_decoded_count(f, DEVTRACE_KIND_EXTCORR), 3);
    assert_int_equal(stat_of(f, DT_MCPTI_STAT_ITER_REPEATED), 1);
}

/* ---- garbage ---- */

static void garbage_between_records_is_one_malformed_run(void **state)
{
    ut_decoder_fixture *f = *state;
    size_t o = write_api(f->buf, 19, 1000, 1200, 101);
    memset(f->buf + o, 0xA5, 40);
    o += 40;
    o += write_kernel(f->buf + o, good_kernel(102));
    f->used = o;
    dt_pti_walk_counts c = walk(f, good_next);
    assert_int_equal(c.emitted, 2);
    assert_int_equal(c.malformed, 1);
    assert_int_equal(f->s->stats.malformed_records, 1);
    assert_int_equal(f->s->stats.malformed_bytes, 40);
    assert_int_equal(stat_of(f, DT_MCPTI_STAT_ITER_STOPPED_EARLY), 1); /* the iterator cannot read garbage */
    assert_int_equal(stat_of(f, DT_MCPTI_STAT_REJECTED), 0);
    assert_int_equal(stat_of(f, DT_MCPTI_STAT_RUNS), 1);
}

static void garbage_that_starts_like_a_record_is_a_rejected_candidate(void **state)
{
    ut_decoder_fixture *f = *state;
    size_t o = write_api(f->buf, 19, 1000, 1200, 101);
    memset(f->buf + o, 0xA5, 24);
    ut_put32(f->buf + o, 0, 5); /* reads as an API record: cbid 0xA5A5A5A5 fails */
    o += 24;
    o += write_api(f->buf + o, 20, 1300, 1400, 102);
    f->used = o;
    dt_pti_walk_counts c = walk(f, NULL);
    assert_int_equal(c.emitted, 2);
    assert_int_equal(c.malformed, 1);
    assert_int_equal(f->s->stats.malformed_bytes, 24);
    assert_int_equal(stat_of(f, DT_MCPTI_STAT_REJECTED), 1);
    assert_int_equal(stat_of(f, DT_MCPTI_STAT_RUNS), 1);
}

static void truncated_last_record_is_one_run_to_the_end(void **state)
{
    ut_decoder_fixture *f = *state;
    size_t o = write_api(f->buf, 19, 1000, 1200, 101);
    write_kernel(f->buf + o, good_kernel(102));
    f->used = o + 100; /* the kernel's last 100 bytes are not valid */
    dt_pti_walk_counts c = walk(f, good_next);
    assert_int_equal(c.emitted, 1);
    assert_int_equal(c.malformed, 1);
    assert_int_equal(f->s->stats.malformed_bytes, 100);
    assert_int_equal(stat_of(f, DT_MCPTI_STAT_REJECTED), 1); /* the kernel kind at its start */
    assert_int_equal(stat_of(f, DT_MCPTI_STAT_ITER_STOPPED_EARLY), 1);
}

static void a_buffer_of_only_garbage(void **state)
{
    ut_decoder_fixture *f = *state;
    memset(f->buf, 0xFF, 256);
    f->used = 256;
    dt_pti_walk_counts c = walk(f, good_next);
    assert_int_equal(c.emitted, 0);
    assert_int_equal(c.records, 0);
    assert_int_equal(c.malformed, 1);
    assert_int_equal(f->s->stats.malformed_records, 1);
    assert_int_equal(f->s->stats.malformed_bytes, 256);
    assert_int_equal(f->nev, 0);
}

static void zeros_and_an_unaligned_size_are_garbage_too(void **state)
{
    ut_decoder_fixture *f = *state;
    memset(f->buf, 0, 64);
    f->used = 13;
    dt_pti_walk_counts c = walk(f, NULL);
    assert_int_equal(c.malformed, 1);
    assert_int_equal(f->s->stats.malformed_bytes, 13);
    /* a valid record followed by 4 stray bytes: the record, then one 4-byte run */
    size_t o = write_api(f->buf, 19, 1000, 1200, 101);
    memset(f->buf + o, 0, 4);
    f->used = o + 4;
    c = walk(f, good_next);
    assert_int_equal(c.emitted, 1);
    assert_int_equal(c.malformed, 1);
    assert_int_equal(f->s->stats.malformed_bytes, 13 + 4);
}

/* ---- every kind with each validation rule violated ---- */

typedef enum { K_KERNEL, K_MEMCPY, K_MEMSET, K_API, K_EXT } rec_kind;

typedef struct rule_case {
    const char *what;
    rec_kind kind;
    int field; /* which field to break, per kind (see build_bad) */
    int64_t value;
    dt_mcpti_verdict verdict;
    size_t size;
} rule_case;

#define HOUR_PLUS 3600000000001ull

static const rule_case rule_cases[] = {
    {"kernel grid.x 0", K_KERNEL, 0, 0, DT_MCPTI_BAD_DIMENSION, 200},
    {"kernel grid.y negative", K_KERNEL, 1, -4, DT_MCPTI_BAD_DIMENSION, 200},
    {"kernel grid.z 2^20", K_KERNEL, 2, 1 << 20, DT_MCPTI_BAD_DIMENSION, 200},
    {"kernel block.x 0", K_KERNEL, 3, 0, DT_MCPTI_BAD_DIMENSION, 200},
    {"kernel block.y 2^20", K_KERNEL, 4, 1 << 20, DT_MCPTI_BAD_DIMENSION, 200},
    {"kernel block.z negative", K_KERNEL, 5, -9, DT_MCPTI_BAD_DIMENSION, 200},
    {"kernel correlation 0", K_KERNEL, 6, 0, DT_MCPTI_ZERO_CORRELATION, 200},
    {"kernel end before start", K_KERNEL, 7, 0, DT_MCPTI_BAD_TIMESTAMPS, 200},
    {"kernel longer than 1 h", K_KERNEL, 8, 0, DT_MCPTI_BAD_TIMESTAMPS, 200},
    {"memcpy bytes 0", K_MEMCPY, 0, 0, DT_MCPTI_ZERO_BYTES, 88},
    {"memcpy correlation 0", K_MEMCPY, 1, 0, DT_MCPTI_ZERO_CORRELATION, 88},
    {"memcpy end before start", K_MEMCPY, 2, 0, DT_MCPTI_BAD_TIMESTAMPS, 88},
    {"memcpy longer than 1 h", K_MEMCPY, 3, 0, DT_MCPTI_BAD_TIMESTAMPS, 88},
    {"memset bytes 0", K_MEMSET, 0, 0, DT_MCPTI_ZERO_BYTES, 88},
    {"memset correlation 0", K_MEMSET, 1, 0, DT_MCPTI_ZERO_CORRELATION, 88},
    {"memset end before start", K_MEMSET, 2, 0, DT_MCPTI_BAD_TIMESTAMPS, 88},
    {"memset longer than 1 h", K_MEMSET, 3, 0, DT_MCPTI_BAD_TIMESTAMPS, 88},
    {"api cbid 1000", K_API, 0, 1000, DT_MCPTI_BAD_CBID, 40},
    {"api correlation 0", K_API, 1, 0, DT_MCPTI_ZERO_CORRELATION, 40},
    {"api end before start", K_API, 2, 0, DT_MCPTI_BAD_TIMESTAMPS, 40},
    {"api longer than 1 h", K_API, 3, 0, DT_MCPTI_BAD_TIMESTAMPS, 40},
    {"external kind 0", K_EXT, 0, 0, DT_MCPTI_BAD_EXTERNAL_KIND, 24},
    {"external kind 6", K_EXT, 0, 6, DT_MCPTI_BAD_EXTERNAL_KIND, 24},
    {"external correlation 0", K_EXT, 1, 0, DT_MCPTI_ZERO_CORRELATION, 24},
};

static size_t build_bad(uint8_t *b, const rule_case *rc)
{
    switch (rc->kind) {
    case K_KERNEL: {
        kernel_args k = good_kernel(301);
        if (rc->field < 3)
            k.grid[rc->field] = (int32_t)rc->value;
        else if (rc->field < 6)
            k.block[rc->field - 3] = (int32_t)rc->value;
        else if (rc->field == 6)
            k.corr = 0;
        else if (rc->field == 7)
            k.end = k.start - 1000;
        else
            k.end = k.start + HOUR_PLUS;
        return write_kernel(b, k);
    }
    case K_MEMCPY:
    case K_MEMSET: {
        uint32_t kind = rc->kind == K_MEMCPY ? 1 : 2;
        uint64_t bytes = rc->field == 0 ? 0 : 4096, start = 9000, end = 9500;
        uint32_t corr = rc->field == 1 ? 0 : 301;
        if (rc->field == 2)
            end = 8000;
        if (rc->field == 3)
            end = start + HOUR_PLUS;
        return write_copy(b, kind, bytes, start, end, corr);
    }
    case K_API: {
        uint64_t start = 1000, end = 1200;
        if (rc->field == 2)
            end = 900;
        if (rc->field == 3)
            end = start + HOUR_PLUS;
        return write_api(b, rc->field == 0 ? (uint32_t)rc->value : 19, start, end, rc->field == 1 ? 0 : 301);
    }
    default:
        return write_ext(b, rc->field == 0 ? (uint32_t)rc->value : 3, 42, rc->field == 1 ? 0 : 301);
    }
}

static void every_kind_with_each_validation_rule_violated(void **state)
{
    ut_decoder_fixture *f = *state;
    for (size_t i = 0; i < sizeof rule_cases / sizeof rule_cases[0]; i++) {
        const rule_case *rc = &rule_cases[i];
        size_t n = build_bad(f->buf, rc);
        assert_int_equal(n, rc->size);
        if (dt_mcpti_validate(f->buf, n + 40) != rc->verdict)
            fail_msg("%s: verdict %s, expected %s", rc->what, dt_mcpti_verdict_name(dt_mcpti_validate(f->buf, n + 40)),
                     dt_mcpti_verdict_name(rc->verdict));
        f->used = n + write_api(f->buf + n, 20, 20000, 20100, 302);
        /* through the iterator (it gives the bad record first) and through the scanner alone */
        for (int pass = 0; pass < 2; pass++) {
            uint64_t before_records = f->s->stats.malformed_records, before_bytes = f->s->stats.malformed_bytes;
            size_t stored_before = (size_t)dt_store_count(&f->s->store);
            dt_pti_walk_counts c = walk(f, pass ? NULL : good_next);
            if (c.malformed != 1 || c.emitted != 1 || f->s->stats.malformed_records - before_records != 1 ||
                f->s->stats.malformed_bytes - before_bytes != rc->size ||
                (size_t)dt_store_count(&f->s->store) != stored_before + 1)
                fail_msg("%s (pass %d): malformed %llu, emitted %llu, bytes %llu", rc->what, pass,
                         (unsigned long long)c.malformed, (unsigned long long)c.emitted,
                         (unsigned long long)(f->s->stats.malformed_bytes - before_bytes));
        }
    }
    /* each bad record was one rejected candidate, in both passes */
    size_t ncases = sizeof rule_cases / sizeof rule_cases[0];
    assert_int_equal(stat_of(f, DT_MCPTI_STAT_REJECTED), 2 * ncases);
    assert_int_equal(stat_of(f, DT_MCPTI_STAT_ITER_INVALID), ncases);
    assert_int_equal(stat_of(f, DT_MCPTI_STAT_NO_ITERATOR), ncases);
}

static void short_and_unknown_records_are_not_ours_or_truncated(void **state)
{
    (void)state;
    uint8_t b[256];
    write_api(b, 19, 1000, 1200, 101);
    assert_int_equal(dt_mcpti_validate(b, 40), DT_MCPTI_VALID);
    assert_int_equal(dt_mcpti_validate(b, 39), DT_MCPTI_TRUNCATED);
    assert_int_equal(dt_mcpti_validate(b, 3), DT_MCPTI_NOT_OURS);
    ut_put32(b, 0, 4); /* DRIVER: not an MCPTI record kind here */
    assert_int_equal(dt_mcpti_validate(b, 40), DT_MCPTI_NOT_OURS);
    assert_int_equal(dt_mcpti_record_size(3), 200);
    assert_int_equal(dt_mcpti_record_size(10), 200);
    assert_int_equal(dt_mcpti_record_size(1), 88);
    assert_int_equal(dt_mcpti_record_size(2), 88);
    assert_int_equal(dt_mcpti_record_size(5), 40);
    assert_int_equal(dt_mcpti_record_size(39), 24);
    assert_int_equal(dt_mcpti_record_size(0), 0);
}

/* ---- a truncated tail: no phantom record from inside the cut-short bytes ---- */

#define SAMPLE_LO 1000000000000ull /* the session's vendor clock samples (device ns) */
#define SAMPLE_HI 1001000000000ull

/* One API record inside the samples, then a kernel cut short after 120 of its 200 bytes
 * whose fields, read from 8-byte-aligned offsets inside it, look like other records: at +8
 * a memcpy (partitionedGlobalCacheRequested = 1 reads as its kind, start 2 as its bytes,
 * end 2 as its start, completed 2^32 as its end: copy kind 0, 2 bytes, 2 -> 2^32 ns), at
 * +16 and +24 memsets (start 2 and end 2 read as kind MEMSET). Each passes its own fields'
 * checks; none lies within the session's clock samples. */
static size_t build_truncated_kernel_tail(ut_decoder_fixture *f)
{
    size_t o = write_api(f->buf, 19, SAMPLE_LO + 1000, SAMPLE_LO + 1200, 501);
    kernel_args k = good_kernel(502);
    k.start = 2;
    k.end = 2;
    write_kernel(f->buf + o, k);
    ut_put32(f->buf + o, 8, 1);           /* partitionedGlobalCacheRequested: OFF */
    ut_put64(f->buf + o, 32, 1ull << 32); /* completed */
    f->used = o + 120;
    return o;
}

static void truncated_tail_gives_no_phantom_record_and_its_bytes_are_malformed(void **state)
{
    ut_decoder_fixture *f = *state;
    dt_add_clock_sample(f->s, SAMPLE_LO, 5000);
    dt_add_clock_sample(f->s, SAMPLE_HI, 1000005000);
    size_t tail = build_truncated_kernel_tail(f);
    /* Each candidate passes its own fields' checks: only the session's bounds reject it. */
    const dt_mcpti_time_bounds b = dt_mcpti_time_bounds_of(f->s);
    assert_true(b.known);
    assert_int_equal(b.lo, SAMPLE_LO - DT_MCPTI_CLOCK_MARGIN_NS);
    assert_int_equal(b.hi, SAMPLE_HI + DT_MCPTI_CLOCK_MARGIN_NS);
    for (size_t at = 8; at <= 24; at += 8) {
        assert_int_equal(dt_mcpti_validate(f->buf + tail + at, 120 - at), DT_MCPTI_VALID);
        assert_int_equal(dt_mcpti_validate_in(f->buf + tail + at, 120 - at, &b), DT_MCPTI_OUTSIDE_CLOCK);
    }
    for (int pass = 0; pass < 2; pass++) {
        uint64_t bytes_before = f->s->stats.malformed_bytes, runs_before = stat_of(f, DT_MCPTI_STAT_RUNS);
        uint64_t rejected_before = stat_of(f, DT_MCPTI_STAT_REJECTED);
        dt_pti_walk_counts c = walk(f, pass ? NULL : good_next);
        assert_int_equal(c.records, 1);
        assert_int_equal(c.emitted, 1);
        assert_int_equal(c.malformed, 1);
        assert_int_equal(f->s->stats.malformed_bytes - bytes_before, 120);
        assert_int_equal(stat_of(f, DT_MCPTI_STAT_RUNS) - runs_before, 1);
        /* the kernel (truncated) and the three look-alikes */
        assert_int_equal(stat_of(f, DT_MCPTI_STAT_REJECTED) - rejected_before, 4);
        assert_int_equal(ut_decoded_count(f, DEVTRACE_KIND_MEMCPY), 0);
        assert_int_equal(ut_decoded_count(f, DEVTRACE_KIND_MEMSET), 0);
        assert_int_equal(ut_decoded_count(f, DEVTRACE_KIND_RUNTIME), pass + 1);
    }
}

/* Without clock samples (no vendor timestamp function) times are bounded by the fields'
 * checks alone: the same tail's look-alike memcpy is taken, as before the samples existed. */
static void without_clock_samples_times_are_not_bounded(void **state)
{
    ut_decoder_fixture *f = *state;
    size_t tail = build_truncated_kernel_tail(f);
    const dt_mcpti_time_bounds b = dt_mcpti_time_bounds_of(f->s);
    assert_false(b.known);
    assert_int_equal(dt_mcpti_validate_in(f->buf + tail + 8, 112, &b), DT_MCPTI_VALID);
    assert_int_equal(dt_mcpti_validate_in(f->buf + tail + 8, 112, NULL), DT_MCPTI_VALID);
}

/* Enumerations: a memcpy's copy kind above PTOP (10) or a memory kind above
 * MANAGED_STATIC (7), a memset's memory kind above 7: rejected, whatever the times. */
static void copy_and_memory_kinds_outside_their_enumerations_are_rejected(void **state)
{
    ut_decoder_fixture *f = *state;
    const dt_mcpti_time_bounds none = dt_mcpti_time_bounds_of(NULL);
    uint8_t *b = f->buf;
    write_copy(b, 1, 4096, 9000, 9500, 103);
    assert_int_equal(dt_mcpti_validate_in(b, 88, &none), DT_MCPTI_VALID);
    b[4] = 10; /* PTOP: the last one */
    assert_int_equal(dt_mcpti_validate_in(b, 88, &none), DT_MCPTI_VALID);
    b[4] = 11;
    assert_int_equal(dt_mcpti_validate_in(b, 88, &none), DT_MCPTI_BAD_ENUMERATION);
    b[4] = 2;
    b[5] = 8;
    assert_int_equal(dt_mcpti_validate_in(b, 88, &none), DT_MCPTI_BAD_ENUMERATION);
    b[5] = 3;
    b[6] = 200;
    assert_int_equal(dt_mcpti_validate_in(b, 88, &none), DT_MCPTI_BAD_ENUMERATION);
    assert_int_equal(dt_mcpti_validate(b, 88), DT_MCPTI_VALID); /* its own fields are fine */
    write_copy(b, 2, 4096, 9600, 9700, 104);
    assert_int_equal(dt_mcpti_validate_in(b, 88, &none), DT_MCPTI_VALID);
    ut_put16(b, 50, 8);
    assert_int_equal(dt_mcpti_validate_in(b, 88, &none), DT_MCPTI_BAD_ENUMERATION);
    assert_string_equal(dt_mcpti_verdict_name(DT_MCPTI_BAD_ENUMERATION), "copy kind > 10 or memory kind > 7");
    assert_string_equal(dt_mcpti_verdict_name(DT_MCPTI_OUTSIDE_CLOCK),
                        "times outside the session's clock samples +- 1 s");
}

/* A record without timing (start == end == 0) is a record, whatever the bounds. */
static void zero_time_records_pass_the_clock_bounds(void **state)
{
    ut_decoder_fixture *f = *state;
    dt_add_clock_sample(f->s, SAMPLE_LO, 5000);
    const dt_mcpti_time_bounds b = dt_mcpti_time_bounds_of(f->s);
    write_api(f->buf, 19, 0, 0, 601);
    assert_int_equal(dt_mcpti_validate_in(f->buf, 40, &b), DT_MCPTI_VALID);
    write_api(f->buf, 19, 0, 1, 601);
    assert_int_equal(dt_mcpti_validate_in(f->buf, 40, &b), DT_MCPTI_OUTSIDE_CLOCK);
    write_api(f->buf, 19, SAMPLE_LO - DT_MCPTI_CLOCK_MARGIN_NS, SAMPLE_LO + DT_MCPTI_CLOCK_MARGIN_NS, 601);
    assert_int_equal(dt_mcpti_validate_in(f->buf, 40, &b), DT_MCPTI_VALID); /* both ends inclusive */
    write_api(f->buf, 19, SAMPLE_LO, SAMPLE_LO + DT_MCPTI_CLOCK_MARGIN_NS + 1, 601);
    assert_int_equal(dt_mcpti_validate_in(f->buf, 40, &b), DT_MCPTI_OUTSIDE_CLOCK);
}

/* ---- timestamps: start == end == 0 skipped and counted; small values valid ---- */

static void zero_time_records_are_counted_and_small_timestamps_kept(void **state)
{
    ut_decoder_fixture *f = *state;
    size_t o = 0;
    kernel_args zero = good_kernel(401);
    zero.start = zero.end = 0;
    o += write_kernel(f->buf + o, zero);
    o += write_api(f->buf + o, 19, 0, 0, 402);
    kernel_args small = good_kernel(403);
    small.start = 1;
    small.end = 2;
    o += write_kernel(f->buf + o, small);
    o += write_copy(f->buf + o, 1, 4096, 0, 5, 404);
    f->used = o;
    for (int pass = 0; pass < 2; pass++) {
        dt_pti_walk_counts c = walk(f, pass ? NULL : good_next);
        assert_int_equal(c.zero_time, 2);
        assert_int_equal(c.emitted, 2);
        assert_int_equal(c.malformed, 0);
    }
    assert_int_equal(f->s->stats.zero_timestamp, 4);
    assert_int_equal(f->s->stats.malformed_records, 0);
    for (size_t i = 0; i < f->nev; i++)
        assert_true(f->ev[i].end_ns > 0); /* nothing placed at the clock origin */
}

/* ---- the record cap ---- */

static void the_record_cap_stops_a_scan_and_counts_the_rest(void **state)
{
    ut_decoder_fixture *f = *state;
    build_valid_buffer(f);
    dt_pti_walk_counts c = {0};
    dt_mcpti_scan_result r;
    dt_mcpti_scan_range(f->d, f->buf, 0, f->used, DT_PTI_WALK_DECODE, &c, 2, &r);
    dt_pti_commit_counts(f->d, &c);
    assert_int_equal(r.accepted, 2);
    assert_int_equal(r.capped, 1);
    assert_int_equal(r.runs, 1);
    assert_int_equal(r.skipped, 480 - 64);
    assert_int_equal(c.emitted, 2);
    assert_int_equal(f->s->stats.malformed_records, 1);
    assert_int_equal(f->s->stats.malformed_bytes, 416);
    assert_int_equal(stat_of(f, DT_MCPTI_STAT_CAP), 1);
    /* a scan from the end of the buffer finds nothing and counts nothing */
    dt_mcpti_scan_range(f->d, f->buf, f->used, f->used, DT_PTI_WALK_DECODE, &c, 10, &r);
    assert_int_equal(r.accepted + r.runs + r.skipped, 0);
}

/* ---- the iterator's other anomalies ---- */

static void iterator_that_stops_early_leaves_the_rest_to_the_scanner(void **state)
{
    ut_decoder_fixture *f = *state;
    build_valid_buffer(f);
    iter_limit = 3;
    dt_pti_walk_counts c = walk(f, early_next);
    expect_valid_buffer_events(f, &c);
    assert_int_equal(stat_of(f, DT_MCPTI_STAT_ITER_STOPPED_EARLY), 1);
    assert_int_equal(stat_of(f, DT_MCPTI_STAT_SCANNED_BYTES), 480 - 264);
}

static void iterator_that_jumps_over_a_record_leaves_it_to_the_scanner(void **state)
{
    ut_decoder_fixture *f = *state;
    build_valid_buffer(f);
    iter_jump_at = 2; /* the kernel is jumped over */
    dt_pti_walk_counts c = walk(f, jump_next);
    expect_valid_buffer_events(f, &c);
    assert_int_equal(stat_of(f, DT_MCPTI_STAT_ITER_SKIPPED), 1);
}

static void iterator_pointing_inside_a_record_is_not_followed(void **state)
{
    ut_decoder_fixture *f = *state;
    build_valid_buffer(f);
    dt_pti_walk_counts c = walk(f, inside_next);
    expect_valid_buffer_events(f, &c);
    assert_int_equal(stat_of(f, DT_MCPTI_STAT_ITER_REPEATED), 1); /* buf + 8 is before the first record's end */
}

/* ---- walk modes ---- */

static void outside_the_window_records_are_counted_per_kind_and_garbage_still_malformed(void **state)
{
    ut_decoder_fixture *f = *state;
    build_valid_buffer(f);
    memset(f->buf + f->used, 0xA5, 16);
    f->used += 16;
    dt_pti_walk_counts c = walk_with(f, stale_next, DT_PTI_WALK_OUT_OF_WINDOW);
    assert_int_equal(f->nev, 0);
    assert_int_equal(c.records, 6);
    assert_int_equal(f->s->stats.out_of_window[DEVTRACE_KIND_RUNTIME], 2);
    assert_int_equal(f->s->stats.out_of_window[DEVTRACE_KIND_KERNEL], 1);
    assert_int_equal(f->s->stats.out_of_window[DEVTRACE_KIND_MEMCPY], 1);
    assert_int_equal(f->s->stats.out_of_window[DEVTRACE_KIND_MEMSET], 1);
    assert_int_equal(f->s->stats.malformed_records, 1);
    assert_int_equal(f->s->stats.malformed_bytes, 16);
}

/* ---- MetaX callback-id names ---- */

static void runtime_names_are_metax_ones_and_unknown_ids_show_their_number(void **state)
{
    ut_decoder_fixture *f = *state;
    size_t o = 0;
    o += write_api(f->buf + o, 118, 1000, 1100, 501); /* mcMemcpy */
    o += write_api(f->buf + o, 233, 1200, 1300, 502); /* not in the table */
    o += write_api(f->buf + o, 211, 1400, 1500, 503); /* cudaLaunchKernel in CUDA's namespace: not here */
    o += write_api(f->buf + o, 233, 1600, 1700, 504);
    f->used = o;
    walk(f, good_next);
    assert_int_equal(f->nev, 4);
    assert_string_equal(f->names[0], "mcMemcpy");
    assert_string_equal(f->names[1], "mcRuntime#233");
    assert_string_equal(f->names[2], "mcRuntime#211");
    assert_string_equal(f->names[3], "mcRuntime#233");
    assert_int_equal(f->s->stats.unresolved_names, 2);
    /* the vendor's resolver (after the run) names 233: every such event renamed, no longer unresolved */
    dt_pti_apply_api_name(f->d, 233, "mcLaunchCooperativeKernel");
    ut_decoder_collect_stored(f);
    assert_string_equal(f->names[1], "mcLaunchCooperativeKernel");
    assert_string_equal(f->names[3], "mcLaunchCooperativeKernel");
    assert_string_equal(f->names[2], "mcRuntime#211");
    assert_int_equal(f->s->stats.unresolved_names, 1);
    /* a resolver name for a known id replaces the table's; the count does not move */
    dt_pti_apply_api_name(f->d, 118, "mcMemcpy_v2");
    ut_decoder_collect_stored(f);
    assert_string_equal(f->names[0], "mcMemcpy_v2");
    assert_int_equal(f->s->stats.unresolved_names, 1);
    assert_string_equal(dt_intern_get(&f->s->names, dt_pti_runtime_name(f->d, 233)), "mcLaunchCooperativeKernel");
}

/* ---- the note ---- */

static void the_walk_is_told_in_a_note(void **state)
{
    ut_decoder_fixture *f = *state;
    build_valid_buffer(f);
    walk(f, stale_next);
    walk(f, good_next);
    walk(f, stale_next);
    dt_mcpti_finish(f->d);
    assert_int_equal(f->s->nnotes, 1);
    assert_string_equal(f->s->notes[0],
                        "mcpti: GetNextRecord repeated a pointer in 2 of 3 buffers; those buffers were scanned from "
                        "there (MACA 3.8.0 workaround: 832 bytes scanned, 0 malformed run(s) skipped, 0 rejected "
                        "candidate(s))");
}

static void a_well_behaved_iterator_is_told_too(void **state)
{
    ut_decoder_fixture *f = *state;
    build_valid_buffer(f);
    walk(f, good_next);
    dt_mcpti_finish(f->d);
    assert_int_equal(f->s->nnotes, 1);
    assert_string_equal(f->s->notes[0],
                        "mcpti: GetNextRecord behaved in all 1 buffers; the record scanner was not needed");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(valid_buffer_walks_with_the_iterator_alone, setup, teardown),
        cmocka_unit_test_setup_teardown(valid_buffer_scans_to_the_same_events_without_an_iterator, setup, teardown),
        cmocka_unit_test_setup_teardown(stale_pointer_mid_buffer_is_scanned_past_and_every_record_kept_once, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(stale_pointer_before_the_last_record_and_at_the_end, setup, teardown),
        cmocka_unit_test_setup_teardown(garbage_between_records_is_one_malformed_run, setup, teardown),
        cmocka_unit_test_setup_teardown(garbage_that_starts_like_a_record_is_a_rejected_candidate, setup, teardown),
        cmocka_unit_test_setup_teardown(truncated_last_record_is_one_run_to_the_end, setup, teardown),
        cmocka_unit_test_setup_teardown(a_buffer_of_only_garbage, setup, teardown),
        cmocka_unit_test_setup_teardown(zeros_and_an_unaligned_size_are_garbage_too, setup, teardown),
        cmocka_unit_test_setup_teardown(every_kind_with_each_validation_rule_violated, setup, teardown),
        cmocka_unit_test_setup_teardown(short_and_unknown_records_are_not_ours_or_truncated, setup, teardown),
        cmocka_unit_test_setup_teardown(zero_time_records_are_counted_and_small_timestamps_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(truncated_tail_gives_no_phantom_record_and_its_bytes_are_malformed, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(without_clock_samples_times_are_not_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(copy_and_memory_kinds_outside_their_enumerations_are_rejected, setup, teardown),
        cmocka_unit_test_setup_teardown(zero_time_records_pass_the_clock_bounds, setup, teardown),
        cmocka_unit_test_setup_teardown(the_record_cap_stops_a_scan_and_counts_the_rest, setup, teardown),
        cmocka_unit_test_setup_teardown(iterator_that_stops_early_leaves_the_rest_to_the_scanner, setup, teardown),
        cmocka_unit_test_setup_teardown(iterator_that_jumps_over_a_record_leaves_it_to_the_scanner, setup, teardown),
        cmocka_unit_test_setup_teardown(iterator_pointing_inside_a_record_is_not_followed, setup, teardown),
        cmocka_unit_test_setup_teardown(outside_the_window_records_are_counted_per_kind_and_garbage_still_malformed,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(runtime_names_are_metax_ones_and_unknown_ids_show_their_number, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(the_walk_is_told_in_a_note, setup, teardown),
        cmocka_unit_test_setup_teardown(a_well_behaved_iterator_is_told_too, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
