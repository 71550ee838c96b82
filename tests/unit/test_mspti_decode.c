/* test_mspti_decode.c: the MSPTI backend's decoding on hand-built buffers.
 *
 * Records are written byte by byte at the offsets of vendor-abi.md's MSPTI section
 * (packed: a u64 at offset 4; never through our mirrors), walked by the real MSPTI
 * descriptor (dt_pti_mspti_descriptor: its layouts, its own decoders and its walker, the
 * engine's stride walk; the vendor's GetNextRecord must never be called) and compared
 * field by field: u64 correlation ids, API records named by string without a cbid, no
 * launch data, memcpy kinds, CUSTOM0 = 2, the loss counters, and the trace keys that
 * follow; and the same events from the engine's iterator walk over MSPTI's layouts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backends/pti_family.h"
#include "unit_bytes.h"
#include "unit_decoder.h"
#include "unit_session.h"

/* vendor-abi.md: kinds, sizes, external kind. */
enum {
    K_MARKER = 1,
    K_KERNEL = 2,
    K_API = 3,
    K_HCCL = 4,
    K_MEMORY = 5,
    K_MEMSET = 6,
    K_MEMCPY = 7,
    K_EXTCORR = 8,
    K_COMMUNICATION = 9,
    K_ACL_API = 10,
    K_NODE_API = 11,
    K_RUNTIME_API = 12,
    K_PAST_THE_HEADER = 13 /* MSPTI_ACTIVITY_KIND_COUNT in the header: no such record */
};
enum { SIZE_KERNEL = 56, SIZE_API = 48, SIZE_MEMSET = 56, SIZE_MEMCPY = 56, SIZE_EXTCORR = 24 };
enum { CUSTOM0 = 2, CUSTOM1 = 3 };

#define BIG 0x100000005ull        /* a correlation id that needs its upper 32 bits */
#define T0 1700000000000000000ull /* CLOCK_REALTIME-like ns */

static const char api_name[] = "aclrtLaunchKernel", kernel_name[] = "_ZN2at6native9addKernelEPfi",
                  kernel_type[] = "KERNEL_AICORE";

/* msptiActivityExternalCorrelation, 24 B: externalKind@4, externalId@8, correlationId u64@16. */
static size_t w_extcorr(uint8_t *b, uint32_t external_kind, uint64_t external_id, uint64_t corr)
{
    memset(b, 0, SIZE_EXTCORR);
    ut_put32(b, 0, K_EXTCORR), ut_put32(b, 4, external_kind), ut_put64(b, 8, external_id), ut_put64(b, 16, corr);
    return SIZE_EXTCORR;
}

/* msptiActivityApi, 48 B: start@4 end@12 processId@20 threadId@24 correlationId u64@28 name@36. */
static size_t w_api(uint8_t *b, uint32_t kind, uint64_t start, uint64_t end, uint64_t corr, const char *name)
{
    memset(b, 0, SIZE_API);
    ut_put32(b, 0, kind), ut_put64(b, 4, start), ut_put64(b, 12, end), ut_put32(b, 20, 4242), ut_put32(b, 24, 4343);
    ut_put64(b, 28, corr), ut_putptr(b, 36, name);
    return SIZE_API;
}

/* msptiActivityKernel, 56 B: start@4 end@12 deviceId@20 streamId@24 correlationId u64@28 type@36 name@44. */
static size_t w_kernel(uint8_t *b, uint64_t start, uint64_t end, uint64_t corr, const char *name)
{
    memset(b, 0, SIZE_KERNEL);
    ut_put32(b, 0, K_KERNEL), ut_put64(b, 4, start), ut_put64(b, 12, end), ut_put32(b, 20, 3), ut_put32(b, 24, 9);
    ut_put64(b, 28, corr), ut_putptr(b, 36, kernel_type), ut_putptr(b, 44, name);
    return SIZE_KERNEL;
}

/* msptiActivityMemcpy, 56 B: copyKind@4 bytes@8 start@16 end@24 deviceId@32 streamId@36
 * correlationId u64@40 isAsync u8@48. */
static size_t w_memcpy(uint8_t *b, uint32_t copy_kind, uint64_t bytes, uint64_t start, uint64_t end, uint64_t corr)
{
    memset(b, 0, SIZE_MEMCPY);
    ut_put32(b, 0, K_MEMCPY), ut_put32(b, 4, copy_kind), ut_put64(b, 8, bytes), ut_put64(b, 16, start),
        ut_put64(b, 24, end);
    ut_put32(b, 32, 3), ut_put32(b, 36, 9), ut_put64(b, 40, corr);
    b[48] = 0;
    return SIZE_MEMCPY;
}

/* msptiActivityMemset, 56 B: value@4 bytes@8 start@16 end@24 deviceId@32 streamId@36
 * correlationId u64@40 isAsync u8@48. */
static size_t w_memset(uint8_t *b, uint32_t value, uint64_t bytes, uint64_t start, uint64_t end, uint64_t corr)
{
    memset(b, 0, SIZE_MEMSET);
    ut_put32(b, 0, K_MEMSET), ut_put32(b, 4, value), ut_put64(b, 8, bytes), ut_put64(b, 16, start),
        ut_put64(b, 24, end);
    ut_put32(b, 32, 3), ut_put32(b, 36, 9), ut_put64(b, 40, corr);
    b[48] = 1;
    return SIZE_MEMSET;
}

/* The vendor's iterator: MSPTI's keeps a thread-local cursor, so the backend must not use it. */
static int g_next_calls;
static int forbidden_next(uint8_t *buf, size_t valid, void **rec)
{
    (void)buf, (void)valid, (void)rec;
    g_next_calls++;
    return 3; /* MAX_LIMIT_REACHED */
}

/* ---- fixture (unit_decoder.h): the real MSPTI descriptor, its iterator forbidden ---- */

static int setup(void **state)
{
    g_next_calls = 0;
    *state = ut_decoder_fixture_new(&dt_pti_mspti_descriptor, 0, forbidden_next, "privateuse1_runtime");
    return *state ? 0 : -1;
}

static int teardown(void **state)
{
    ut_decoder_fixture_free(*state);
    return 0;
}

/* Walks the buffer as a live MSPTI session does, and checks that the iterator was not used. */
static dt_pti_walk_counts walk(ut_decoder_fixture *f)
{
    dt_pti_walk_counts c = ut_decoder_walk(f, DT_PTI_WALK_DECODE);
    assert_int_equal(g_next_calls, 0);
    return c;
}

/* ---- tests ---- */

static void descriptor_holds_the_vendor_abi_numbers(void **state)
{
    (void)state;
    const dt_pti_descriptor *d = &dt_pti_mspti_descriptor;
    assert_string_equal(d->name, "mspti");
    assert_string_equal(d->override_env, "DEVTRACE_MSPTI_LIBRARY");
    assert_string_equal(d->library_names[0], "libmspti.so");
    assert_string_equal(d->sdk_env[0], "ASCEND_HOME_PATH");
    assert_string_equal(d->sdk_subdirs[0], "lib64");
    assert_string_equal(d->sdk_subdirs[1], "tools/mspti/lib64");
    assert_string_equal(d->symbol_prefixes[0], "mspti");
    assert_int_equal(d->kinds.kernel, K_KERNEL);
    assert_int_equal(d->kinds.memcpy, K_MEMCPY);
    assert_int_equal(d->kinds.memset, K_MEMSET);
    assert_int_equal(d->kinds.external_correlation, K_EXTCORR);
    assert_int_equal(d->external_kind_custom0, CUSTOM0);
    assert_int_equal(d->results.max_limit_reached, 3);
    assert_int_equal(d->results.multiple_subscribers, 2);
    assert_true(d->quirks & DT_PTI_QUIRK_COMPLETE_NO_CONTEXT);
    assert_false(d->quirks & DT_PTI_QUIRK_DROPPED_NO_CONTEXT); /* the header: (context, streamId, dropped) */
    assert_non_null(d->scan);                                  /* its walker: never msptiActivityGetNextRecord */
    assert_non_null(d->vendor_decode);                         /* its own decoders */
    /* the memcpy kind is the usability check: it is what needs LD_PRELOAD */
    assert_int_equal(d->usable_check_kind, K_MEMCPY);
    assert_int_equal(d->result_hints[0].result, 6);
    assert_non_null(strstr(d->result_hints[0].fix, "libmspti.so must be in LD_PRELOAD"));
    assert_non_null(strstr(d->result_hints[0].fix, "devtrace record --backend mspti"));
    /* ACL_API, NODE_API (optional), RUNTIME_API */
    assert_int_equal(d->more_kinds[0].kind, K_ACL_API);
    assert_false(d->more_kinds[0].optional);
    assert_int_equal(d->more_kinds[1].kind, K_NODE_API);
    assert_true(d->more_kinds[1].optional);
    assert_int_equal(d->more_kinds[2].kind, K_RUNTIME_API);
    assert_false(d->more_kinds[2].optional);
    /* COMMUNICATION, else HCCL (the fallback: never both), MARKER, MEMORY: all optional */
    assert_int_equal(d->more_kinds[3].kind, K_COMMUNICATION);
    assert_true(d->more_kinds[3].optional);
    assert_false(d->more_kinds[3].fallback);
    assert_int_equal(d->more_kinds[4].kind, K_HCCL);
    assert_true(d->more_kinds[4].fallback);
    assert_int_equal(d->more_kinds[5].kind, K_MARKER);
    assert_int_equal(d->more_kinds[6].kind, K_MEMORY);
}

/* One record of each kind, back to back: 24 + 48 + 56 + 56 + 56 bytes. */
static void write_one_record_of_each_kind(ut_decoder_fixture *f)
{
    uint8_t *b = f->buf;
    b += w_extcorr(b, CUSTOM0, 900, BIG);
    b += w_api(b, K_ACL_API, T0 + 100, T0 + 200, BIG, api_name);
    b += w_kernel(b, T0 + 300, T0 + 400, BIG, kernel_name);
    b += w_memcpy(b, 3, 64, T0 + 500, T0 + 600, BIG + 1);
    b += w_memset(b, 0x5a, 32, T0 + 700, T0 + 800, BIG + 2);
    f->used = (size_t)(b - f->buf);
}

static void each_record_kind_is_read_at_its_packed_offsets(void **state)
{
    ut_decoder_fixture *f = *state;
    write_one_record_of_each_kind(f);
    assert_int_equal(f->used, 24 + 48 + 56 + 56 + 56);
    dt_pti_walk_counts c = walk(f);
    assert_int_equal(c.records, 5);
    assert_int_equal(c.emitted, 5);
    assert_int_equal(c.malformed + c.zero_time + c.ignored, 0);

    const devtrace_event *x = ut_decoded_event(f, DEVTRACE_KIND_EXTCORR, 0);
    assert_non_null(x);
    assert_int_equal(x->correlation, BIG);
    assert_int_equal(x->external_id, 900);
    assert_true(x->flags & DEVTRACE_EVENT_HAS_EXTERNAL);

    const devtrace_event *a = ut_decoded_event(f, DEVTRACE_KIND_RUNTIME, 0);
    assert_non_null(a);
    assert_string_equal(ut_decoded_name(f, a), api_name);
    assert_int_equal(a->start_ns, T0 + 100);
    assert_int_equal(a->end_ns, T0 + 200);
    assert_int_equal(a->device, 4242); /* processId */
    assert_int_equal(a->stream, 4343); /* threadId */
    assert_int_equal(a->correlation, BIG);
    assert_false(a->flags & DEVTRACE_EVENT_HAS_CBID); /* named by string: no cbid */

    const devtrace_event *k = ut_decoded_event(f, DEVTRACE_KIND_KERNEL, 0);
    assert_non_null(k);
    assert_string_equal(ut_decoded_name(f, k), kernel_name);
    assert_int_equal(k->start_ns, T0 + 300);
    assert_int_equal(k->end_ns, T0 + 400);
    assert_int_equal(k->device, 3);
    assert_int_equal(k->stream, 9);
    assert_int_equal(k->correlation, BIG);
    assert_false(k->flags & (DEVTRACE_EVENT_HAS_LAUNCH | DEVTRACE_EVENT_HAS_REGS | DEVTRACE_EVENT_HAS_QUEUED));

    const devtrace_event *m = ut_decoded_event(f, DEVTRACE_KIND_MEMCPY, 0);
    assert_non_null(m);
    assert_int_equal(m->u.memcpy.bytes, 64);
    assert_int_equal(m->u.memcpy.direction, DEVTRACE_COPY_DTOH);
    assert_int_equal(m->start_ns, T0 + 500);
    assert_int_equal(m->end_ns, T0 + 600);
    assert_int_equal(m->device, 3);
    assert_int_equal(m->stream, 9);
    assert_int_equal(m->correlation, BIG + 1);

    const devtrace_event *s = ut_decoded_event(f, DEVTRACE_KIND_MEMSET, 0);
    assert_non_null(s);
    assert_int_equal(s->u.memset.bytes, 32);
    assert_int_equal(s->u.memset.value, 0x5a);
    assert_int_equal(s->start_ns, T0 + 700);
    assert_int_equal(s->end_ns, T0 + 800);
    assert_int_equal(s->device, 3);
    assert_int_equal(s->stream, 9);
    assert_int_equal(s->correlation, BIG + 2);
}

static void every_api_record_level_is_a_runtime_event_named_by_its_string(void **state)
{
    ut_decoder_fixture *f = *state;
    static const char *const names[] = {"aclrtMemcpy", "aclrtMalloc", "GraphNode", "rtKernelLaunch"};
    static const uint32_t kinds[] = {K_API, K_ACL_API, K_NODE_API, K_RUNTIME_API};
    static const uint32_t depths[] = {2, 1, 3, 4}; /* the launch is the deepest: runtime, node, api, acl */
    uint8_t *b = f->buf;
    for (int i = 0; i < 4; i++)
        b += w_api(b, kinds[i], T0 + 10 * (uint64_t)i, T0 + 10 * (uint64_t)i + 5, BIG + (uint64_t)i, names[i]);
    f->used = (size_t)(b - f->buf);
    dt_pti_walk_counts c = walk(f);
    assert_int_equal(c.emitted, 4);
    for (int i = 0; i < 4; i++) {
        const devtrace_event *a = ut_decoded_event(f, DEVTRACE_KIND_RUNTIME, (size_t)i);
        assert_non_null(a);
        assert_string_equal(ut_decoded_name(f, a), names[i]);
        assert_int_equal(a->correlation, BIG + (uint64_t)i);
        assert_true(a->flags & DEVTRACE_EVENT_HAS_LEVEL);
        assert_int_equal(a->u.runtime.depth, depths[i]);
    }
}

static void memcpy_copy_kinds_map_to_directions_and_out_of_range_to_unknown(void **state)
{
    ut_decoder_fixture *f = *state;
    /* HTOH 1, HTOD 2, DTOH 3, DTOD 4, DEFAULT 5 (by address: unknown), and out of range */
    static const uint32_t copy_kinds[] = {1, 2, 3, 4, 5, 0, 99};
    static const int want[] = {DEVTRACE_COPY_HTOH,    DEVTRACE_COPY_HTOD,    DEVTRACE_COPY_DTOH,   DEVTRACE_COPY_DTOD,
                               DEVTRACE_COPY_UNKNOWN, DEVTRACE_COPY_UNKNOWN, DEVTRACE_COPY_UNKNOWN};
    uint8_t *b = f->buf;
    for (size_t i = 0; i < 7; i++)
        b += w_memcpy(b, copy_kinds[i], 8, T0 + i * 10, T0 + i * 10 + 5, i + 1);
    f->used = (size_t)(b - f->buf);
    dt_pti_walk_counts c = walk(f);
    assert_int_equal(c.emitted, 7);
    for (size_t i = 0; i < 7; i++) {
        const devtrace_event *m = ut_decoded_event(f, DEVTRACE_KIND_MEMCPY, i);
        assert_non_null(m);
        assert_int_equal(m->correlation, i + 1);
        assert_int_equal(m->u.memcpy.direction, want[i]);
    }
}

static void bad_records_are_counted_and_skipped_by_their_size(void **state)
{
    ut_decoder_fixture *f = *state;
    uint8_t *b = f->buf;
    b += w_kernel(b, 0, 0, 1, kernel_name);               /* no timing: zero_time */
    b += w_kernel(b, T0 + 500, T0 + 400, 2, kernel_name); /* ends before it starts: malformed */
    b += w_api(b, K_ACL_API, T0, T0 + 5, 3, NULL);        /* no name: malformed */
    b += w_memcpy(b, 2, 8, T0 + 9, T0 + 1, 4);            /* backwards: malformed */
    b += w_memset(b, 0, 8, T0 + 9, T0 + 1, 5);            /* backwards: malformed */
    b += w_extcorr(b, CUSTOM1 + 1, 77,
                   6); /* CUSTOM2, another tool's external kind (CUSTOM1 is the user correlation): ignored */
    b += w_extcorr(b, CUSTOM0, 77, 0);                 /* no correlation: malformed */
    b += w_kernel(b, T0, T0 + 1, 8, NULL);             /* no name: kept, "(unnamed kernel)" */
    b += w_api(b, K_ACL_API, T0, T0 + 5, 9, api_name); /* still read after all that */
    f->used = (size_t)(b - f->buf);
    dt_pti_walk_counts c = walk(f);
    assert_int_equal(c.records, 9);
    assert_int_equal(c.zero_time, 1);
    assert_int_equal(c.malformed, 5);
    assert_int_equal(c.ignored, 1);
    assert_int_equal(c.emitted, 2);
    assert_int_equal(f->s->stats.malformed_records, 5);
    assert_int_equal(f->s->stats.zero_timestamp, 1);
    const devtrace_event *k = ut_decoded_event(f, DEVTRACE_KIND_KERNEL, 0);
    assert_non_null(k);
    assert_string_equal(ut_decoded_name(f, k), "(unnamed kernel)");
    assert_non_null(ut_decoded_event(f, DEVTRACE_KIND_RUNTIME, 0));
}

static void unknown_kind_or_truncated_record_ends_the_buffer(void **state)
{
    ut_decoder_fixture *f = *state;
    uint8_t *b = f->buf;
    b += w_api(b, K_ACL_API, T0, T0 + 5, 1, api_name);
    memset(b, 0, 72);
    ut_put32(b, 0, K_PAST_THE_HEADER); /* a kind we have no layout for: its size is unknown */
    b += 72;
    b += w_api(b, K_ACL_API, T0, T0 + 5, 2, api_name); /* unreachable */
    f->used = (size_t)(b - f->buf);
    dt_pti_walk_counts c = walk(f);
    assert_int_equal(c.emitted, 1);
    assert_int_equal(c.malformed, 1);

    /* A record cut by the end of the valid bytes (and a 3-byte tail) is malformed, once. */
    b = f->buf;
    b += w_kernel(b, T0, T0 + 1, 10, kernel_name);
    b += w_kernel(b, T0, T0 + 1, 11, kernel_name);
    f->used = (size_t)(b - f->buf) - 8; /* the second kernel lacks its name */
    c = walk(f);
    assert_int_equal(c.emitted, 1);
    assert_int_equal(c.malformed, 1);
    f->used = SIZE_KERNEL + 3;
    c = walk(f);
    assert_int_equal(c.emitted, 1);
    assert_int_equal(c.malformed, 1);
}

static void out_of_window_walk_counts_each_kind_and_stores_nothing(void **state)
{
    ut_decoder_fixture *f = *state;
    uint8_t *b = f->buf;
    b += w_extcorr(b, CUSTOM0, 1, 1);
    b += w_api(b, K_ACL_API, T0, T0 + 5, 1, api_name);
    b += w_kernel(b, T0, T0 + 1, 1, kernel_name);
    b += w_memset(b, 0, 8, T0, T0 + 1, 1);
    f->used = (size_t)(b - f->buf);
    dt_pti_walk_counts c;
    dt_pti_walk_buffer(f->d, f->buf, f->used, DT_PTI_WALK_OUT_OF_WINDOW, &c);
    assert_int_equal(c.records, 4);
    assert_int_equal(f->s->stats.out_of_window[DEVTRACE_KIND_RUNTIME], 1);
    assert_int_equal(f->s->stats.out_of_window[DEVTRACE_KIND_KERNEL], 1);
    assert_int_equal(f->s->stats.out_of_window[DEVTRACE_KIND_MEMSET], 1);
    assert_int_equal(f->s->stats.out_of_window[DEVTRACE_KIND_EXTCORR], 0);
    assert_int_equal(g_next_calls, 0);
}

/* A stand-in for an iterator that steps by MSPTI's record sizes (which the real one, with
 * its thread-local cursor, cannot be trusted to do). */
static int stepping_next(uint8_t *buf, size_t valid, void **rec)
{
    size_t off = 0;
    if (*rec) {
        uint32_t kind;
        memcpy(&kind, *rec, 4);
        off = (size_t)((uint8_t *)*rec - buf) + (kind == K_EXTCORR   ? SIZE_EXTCORR
                                                 : kind == K_ACL_API ? SIZE_API
                                                                     : SIZE_KERNEL);
    }
    if (off + 4 > valid)
        return 3; /* MAX_LIMIT_REACHED */
    *rec = buf + off;
    return 0;
}

/* MSPTI's decoders are reached by their layouts' ids whichever walk steps over the records:
 * MSPTI's walker (the stride walk, its decoders inline) and the engine's iterator walk (the
 * same layouts without the walker: through vendor_decode) store the same events, u64
 * correlation ids whole. */
static void iterator_walk_and_stride_walk_store_the_same_events(void **state)
{
    ut_decoder_fixture *f = *state;
    write_one_record_of_each_kind(f);
    dt_pti_walk_counts by_sizes = walk(f);

    dt_pti_descriptor with_iterator = dt_pti_mspti_descriptor;
    with_iterator.scan = NULL;
    ut_decoder_fixture *g = ut_decoder_fixture_new(&with_iterator, 0, stepping_next, "privateuse1_runtime");
    assert_non_null(g);
    memcpy(g->buf, f->buf, f->used);
    g->used = f->used;
    dt_pti_walk_counts by_iterator = ut_decoder_walk(g, DT_PTI_WALK_DECODE);

    assert_int_equal(by_sizes.emitted, 5);
    assert_int_equal(by_iterator.emitted, 5);
    assert_int_equal(by_iterator.records, by_sizes.records);
    assert_int_equal(by_iterator.malformed + by_sizes.malformed, 0);
    assert_int_equal(g->nev, f->nev);
    for (size_t i = 0; i < f->nev; i++) {
        assert_true(f->ev[i].correlation >= BIG); /* the u64 whole */
        assert_string_equal(g->names[i], f->names[i]);
        devtrace_event x = f->ev[i], y = g->ev[i];
        x.name_id = y.name_id = 0; /* two sessions: the ids may differ, the names must not */
        assert_memory_equal(&x, &y, sizeof x);
    }
    assert_string_equal(ut_decoded_name(g, ut_decoded_event(g, DEVTRACE_KIND_RUNTIME, 0)), api_name);
    assert_string_equal(ut_decoded_name(g, ut_decoded_event(g, DEVTRACE_KIND_KERNEL, 0)), kernel_name);
    ut_decoder_fixture_free(g);
}

/* The trace an MSPTI session writes: no cbid, no grid/block/registers/occupancy keys,
 * flows and External ids joined through u64 correlation ids. */
static void trace_omits_the_keys_mspti_records_lack(void **state)
{
    ut_decoder_fixture *f = *state;
    uint8_t *b = f->buf;
    b += w_extcorr(b, CUSTOM0, 41, BIG);
    b += w_api(b, K_ACL_API, T0 + 100, T0 + 200, BIG, api_name);
    b += w_kernel(b, T0 + 300, T0 + 400, BIG, kernel_name);
    b += w_api(b, K_ACL_API, T0 + 500, T0 + 900, BIG + 1, "aclrtMemcpy");
    b += w_memcpy(b, 2, 4096, T0 + 600, T0 + 800, BIG + 1);
    f->used = (size_t)(b - f->buf);
    walk(f);
    dt_set_window(f->s, T0, T0 + 1000);
    char error[160] = "", keys[512];
    uj_value *root = ut_chrome_trace(f->s, NULL, error);
    if (!root)
        fail_msg("the trace is not valid JSON: %s", error);
    const uj_value *k = ut_find_event(root, "X", "kernel", NULL);
    assert_non_null(k);
    assert_string_equal(uj_keys(uj_get(k, "args"), keys, sizeof keys),
                        "External id,queued,device,context,stream,correlation");
    assert_string_equal(uj_get_raw(uj_get(k, "args"), "correlation"), "4294967301");
    assert_string_equal(uj_get_raw(uj_get(k, "args"), "External id"), "41");
    const uj_value *r = ut_find_event(root, "X", "privateuse1_runtime", api_name);
    assert_non_null(r);
    assert_string_equal(uj_keys(uj_get(r, "args"), keys, sizeof keys), "External id,correlation,level");
    assert_string_equal(uj_get_str(uj_get(r, "args"), "level"), "acl");
    const uj_value *m = ut_find_event(root, "X", "gpu_memcpy", NULL);
    assert_non_null(m);
    assert_string_equal(uj_get_str(m, "name"), "Memcpy HtoD (Pageable -> Device)");
    const uj_value *ev[8];
    assert_int_equal(ut_events_with_ph(root, "s", ev, 8), 2);
    assert_int_equal(ut_events_with_ph(root, "f", ev, 8), 2);
    uj_free(root);
}

/* msptiActivityCommunication, 72 B: dataType@4 count@8 deviceId@16 streamId@20 start@24 end@32
 * algType@40 name@48 commName@56 correlationId u64@64. */
static size_t w_communication(uint8_t *b, uint32_t dtype, uint64_t count, uint64_t start, uint64_t end,
                              const char *name, uint64_t corr)
{
    memset(b, 0, 72);
    ut_put32(b, 0, K_COMMUNICATION), ut_put32(b, 4, dtype), ut_put64(b, 8, count), ut_put32(b, 16, 1),
        ut_put32(b, 20, 11);
    ut_put64(b, 24, start), ut_put64(b, 32, end), ut_putptr(b, 40, "RING"), ut_putptr(b, 48, name);
    ut_putptr(b, 56, "hccl_world_group"), ut_put64(b, 64, corr);
    return 72;
}

/* msptiActivityHccl, 56 B: start@4 end@12 deviceId@20 streamId@24 bandWidth double@28 name@36 commName@44. */
static size_t w_hccl(uint8_t *b, uint64_t start, uint64_t end, double bandwidth, const char *name)
{
    memset(b, 0, 56);
    ut_put32(b, 0, K_HCCL), ut_put64(b, 4, start), ut_put64(b, 12, end), ut_put32(b, 20, 1), ut_put32(b, 24, 12);
    uint64_t bits;
    memcpy(&bits, &bandwidth, sizeof bits);
    ut_put64(b, 28, bits), ut_putptr(b, 36, name), ut_putptr(b, 44, "hccl_world_group");
    return 56;
}

/* msptiActivityMarker, 56 B: flag@4 sourceKind@8 timestamp@12 id@20 objectId@28 (8 B) name@36 domain@44. */
static size_t w_marker(uint8_t *b, uint32_t flag, uint32_t source, uint64_t ts, uint64_t id, uint32_t a, uint32_t c,
                       const char *name)
{
    memset(b, 0, 56);
    ut_put32(b, 0, K_MARKER), ut_put32(b, 4, flag), ut_put32(b, 8, source), ut_put64(b, 12, ts), ut_put64(b, 20, id);
    ut_put32(b, 28, a), ut_put32(b, 32, c), ut_putptr(b, 36, name);
    return 56;
}

/* msptiActivityMemory, 64 B: operationType@4 memoryKind@8 correlationId@12 start@20 end@28 address@36
 * bytes@44 processId@52 deviceId@56 streamId@60. */
static size_t w_memory(uint8_t *b, uint32_t op, uint64_t t, uint64_t address, uint64_t bytes, uint32_t device)
{
    memset(b, 0, 64);
    ut_put32(b, 0, K_MEMORY), ut_put32(b, 4, op), ut_put32(b, 8, 1), ut_put64(b, 12, 77), ut_put64(b, 20, t);
    ut_put64(b, 28, t + 1), ut_put64(b, 36, address), ut_put64(b, 44, bytes), ut_put32(b, 52, 4242);
    ut_put32(b, 56, device), ut_put32(b, 60, 0xFFFFFFFFu);
    return 64;
}

static void collectives_are_kernels_named_for_hta_with_their_args(void **state)
{
    ut_decoder_fixture *f = *state;
    uint8_t *b = f->buf;
    b += w_api(b, K_ACL_API, T0 + 100, T0 + 200, BIG, "HcclAllReduce");
    b += w_communication(b, 4 /* FP32 */, 1024, T0 + 300, T0 + 1300, "hcom_allReduce_", BIG);
    b += w_hccl(b, T0 + 1400, T0 + 1500, 12.5, "hcclBroadcast");
    b += w_communication(b, 4, 8, T0 + 1600, T0 + 1700, NULL, BIG + 1); /* no name: malformed */
    f->used = (size_t)(b - f->buf);
    dt_pti_walk_counts c = walk(f);
    assert_int_equal(c.emitted, 3);
    assert_int_equal(c.malformed, 1);
    const devtrace_event *k = ut_decoded_event(f, DEVTRACE_KIND_KERNEL, 0);
    assert_non_null(k);
    assert_true(k->flags & DEVTRACE_EVENT_COLLECTIVE);
    assert_string_equal(ut_decoded_name(f, k), "hcom_allReduce_");
    assert_int_equal(k->correlation, BIG);
    assert_int_equal(k->device, 1);
    assert_int_equal(k->stream, 11);
    assert_int_equal(k->u.collective.count, 1024);
    assert_int_equal(k->u.collective.data_type, DEVTRACE_DTYPE_FP32);
    const devtrace_event *h = ut_decoded_event(f, DEVTRACE_KIND_KERNEL, 1);
    assert_non_null(h);
    assert_int_equal(h->correlation, 0); /* HCCL records have none */
    assert_true(h->u.collective.bandwidth_gbps == 12.5);

    dt_set_window(f->s, T0, T0 + 2000);
    char error[160] = "", keys[512];
    uj_value *root = ut_chrome_trace(f->s, NULL, error);
    if (!root)
        fail_msg("the trace is not valid JSON: %s", error);
    const uj_value *a = ut_find_event(root, "X", "kernel", "hccl:hcom_allReduce_");
    assert_non_null(a);
    assert_string_equal(uj_keys(uj_get(a, "args"), keys, sizeof keys),
                        "queued,device,context,stream,correlation,Collective name,dtype,In msg nelems,"
                        "Out msg nelems,Process Group Name,algorithm,bytes,bandwidth (GB/s)");
    const uj_value *args = uj_get(a, "args");
    assert_string_equal(uj_get_str(args, "Collective name"), "hcom_allReduce_");
    assert_string_equal(uj_get_str(args, "dtype"), "Float");
    assert_string_equal(uj_get_raw(args, "In msg nelems"), "1024");
    assert_string_equal(uj_get_str(args, "Process Group Name"), "hccl_world_group");
    assert_string_equal(uj_get_str(args, "algorithm"), "RING");
    assert_string_equal(uj_get_raw(args, "bytes"), "4096");
    assert_string_equal(uj_get_raw(args, "bandwidth (GB/s)"), "4.096000"); /* 4096 B in 1000 ns */
    assert_string_equal(uj_get_raw(args, "stream"), "11");
    /* A name HTA already classifies is kept; the vendor's bandwidth is written as given. */
    const uj_value *bc = ut_find_event(root, "X", "kernel", "hcclBroadcast");
    assert_non_null(bc);
    assert_string_equal(uj_get_raw(uj_get(bc, "args"), "bandwidth (GB/s)"), "12.500000");
    const uj_value *ev[8];
    assert_int_equal(ut_events_with_ph(root, "s", ev, 8), 1); /* the collective's call to it */
    assert_int_equal(ut_events_with_ph(root, "f", ev, 8), 1);
    uj_free(root);
}

static void marker_starts_and_ends_pair_by_id_into_annotations(void **state)
{
    ut_decoder_fixture *f = *state;
    uint8_t *b = f->buf;
    b += w_marker(b, 1 << 1, 0, T0 + 100, 5, 4242, 4343, "step");       /* host start */
    b += w_marker(b, 1 << 4, 1, T0 + 150, 6, 1, 11, "step@device");     /* device start */
    b += w_marker(b, 1 << 0, 0, T0 + 160, 7, 4242, 4343, "checkpoint"); /* a mark */
    b += w_marker(b, 1 << 5, 1, T0 + 250, 6, 1, 11, NULL);              /* device end */
    b += w_marker(b, 1 << 2, 0, T0 + 300, 5, 4242, 4343, NULL);         /* host end */
    b += w_marker(b, 1 << 2, 0, T0 + 320, 99, 4242, 4343, NULL);        /* an end without a start */
    b += w_marker(b, 3, 0, T0 + 330, 8, 4242, 4343, "two flags");       /* malformed */
    f->used = (size_t)(b - f->buf);
    dt_pti_walk_counts c = walk(f);
    assert_int_equal(c.emitted, 6);
    assert_int_equal(c.malformed, 1);
    dt_set_window(f->s, T0, T0 + 1000);
    char error[160] = "";
    uj_value *root = ut_chrome_trace(f->s, NULL, error);
    if (!root)
        fail_msg("the trace is not valid JSON: %s", error);
    const uj_value *h = ut_find_event(root, "X", "user_annotation", "step");
    assert_non_null(h);
    assert_string_equal(uj_get_raw(h, "dur"), "0.200");
    assert_string_equal(uj_get_raw(h, "pid"), "4242");
    assert_string_equal(uj_get_raw(h, "tid"), "4343");
    const uj_value *d = ut_find_event(root, "X", "gpu_user_annotation", "step@device");
    assert_non_null(d);
    assert_string_equal(uj_get_raw(d, "dur"), "0.100");
    assert_string_equal(uj_get_raw(d, "pid"), "1");
    assert_string_equal(uj_get_raw(d, "tid"), "11");
    const uj_value *m = ut_find_event(root, "X", "user_annotation", "checkpoint");
    assert_non_null(m);
    assert_string_equal(uj_get_raw(m, "dur"), "0.000");
    assert_int_equal(f->s->stats.events[DEVTRACE_KIND_MARKER], 3); /* two ranges and a mark */
    uj_free(root);
}

static void memory_events_carry_the_running_total_per_device(void **state)
{
    ut_decoder_fixture *f = *state;
    uint8_t *b = f->buf;
    b += w_memory(b, 0, T0 + 100, 0x1000, 4096, 0);
    b += w_memory(b, 0, T0 + 200, 0x9000, 100, 1);
    b += w_memory(b, 0, T0 + 300, 0x2000, 1024, 0);
    b += w_memory(b, 1, T0 + 400, 0x1000, 4096, 0);
    b += w_memory(b, 1, T0 + 500, 0x9000, 100, 1);
    b += w_memory(b, 1, T0 + 600, 0x2000, 1024, 0);
    b += w_memory(b, 2, T0 + 700, 0x2000, 1024, 0); /* neither allocation nor release */
    f->used = (size_t)(b - f->buf);
    dt_pti_walk_counts c = walk(f);
    assert_int_equal(c.emitted, 6);
    assert_int_equal(c.malformed, 1);
    dt_set_window(f->s, T0, T0 + 1000);
    char error[160] = "", keys[256];
    uj_value *root = ut_chrome_trace(f->s, NULL, error);
    if (!root)
        fail_msg("the trace is not valid JSON: %s", error);
    const uj_value *ev[8];
    assert_int_equal(ut_events_with_ph(root, "i", ev, 8), 7); /* six and the window's end */
    static const char *const total[] = {"4096", "100", "5120", "1024", "0", "0"};
    static const char *const bytes[] = {"4096", "100", "1024", "-4096", "-100", "-1024"};
    for (int i = 0; i < 6; i++) {
        assert_string_equal(uj_get_str(ev[i], "name"), "[memory]");
        assert_string_equal(uj_get_str(ev[i], "cat"), "cpu_instant_event");
        const uj_value *args = uj_get(ev[i], "args");
        assert_string_equal(uj_get_raw(args, "Total Allocated"), total[i]);
        assert_string_equal(uj_get_raw(args, "Bytes"), bytes[i]);
    }
    assert_string_equal(uj_keys(uj_get(ev[0], "args"), keys, sizeof keys),
                        "Device Type,Device Id,Addr,Bytes,Total Allocated,correlation");
    assert_string_equal(uj_get_raw(uj_get(ev[1], "args"), "Device Id"), "1");
    assert_string_equal(uj_get_raw(ev[0], "pid"), "4242");
    uj_free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(descriptor_holds_the_vendor_abi_numbers),
        cmocka_unit_test_setup_teardown(each_record_kind_is_read_at_its_packed_offsets, setup, teardown),
        cmocka_unit_test_setup_teardown(every_api_record_level_is_a_runtime_event_named_by_its_string, setup, teardown),
        cmocka_unit_test_setup_teardown(memcpy_copy_kinds_map_to_directions_and_out_of_range_to_unknown, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(bad_records_are_counted_and_skipped_by_their_size, setup, teardown),
        cmocka_unit_test_setup_teardown(unknown_kind_or_truncated_record_ends_the_buffer, setup, teardown),
        cmocka_unit_test_setup_teardown(out_of_window_walk_counts_each_kind_and_stores_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(iterator_walk_and_stride_walk_store_the_same_events, setup, teardown),
        cmocka_unit_test_setup_teardown(trace_omits_the_keys_mspti_records_lack, setup, teardown),
        cmocka_unit_test_setup_teardown(collectives_are_kernels_named_for_hta_with_their_args, setup, teardown),
        cmocka_unit_test_setup_teardown(marker_starts_and_ends_pair_by_id_into_annotations, setup, teardown),
        cmocka_unit_test_setup_teardown(memory_events_carry_the_running_total_per_device, setup, teardown),
    };
    return cmocka_run_group_tests_name("mspti decode", tests, NULL, NULL);
}
