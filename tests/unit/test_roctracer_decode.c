/* test_roctracer_decode.c: the ROCtracer backend's record classification and decoder on
 * hand-built buffers. Records are written byte by byte at the numeric offsets of
 * vendor-abi.md (domain @0, kind @4, op @8, correlation_id @16, begin_ns @24, end_ns @32,
 * device_id @40, queue_id @48, bytes/kernel_name @56; 64 bytes), never through our
 * mirror, then walked and compared field by field. Also: every HIP_OPS kind value
 * vendor-abi.md lists, loss counters (malformed, ragged ranges, zero timestamps,
 * barriers, other domains), launch configurations attached by correlation id, calls
 * whose record never came, and the two hipLaunchKernel argument layouts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backends/roctracer_records.h"
#include "core/session.h"
#include "unit_bytes.h"

#define REC 64

/* One HIP_OPS-shaped record at b. */
static void write_record(uint8_t *b, uint32_t domain, uint32_t kind, uint32_t op, uint64_t corr, uint64_t begin,
                         uint64_t end, int32_t device, uint64_t queue, uint64_t payload)
{
    memset(b, 0xEE, REC); /* padding and unread fields hold junk */
    ut_put32(b, 0, domain);
    ut_put32(b, 4, kind);
    ut_put32(b, 8, op);
    ut_put64(b, 16, corr);
    ut_put64(b, 24, begin);
    ut_put64(b, 32, end);
    ut_put32(b, 40, (uint32_t)device);
    ut_put64(b, 48, queue);
    ut_put64(b, 56, payload);
}

static void write_kernel(uint8_t *b, uint64_t corr, uint64_t begin, uint64_t end, const char *name)
{
    write_record(b, 2, 0x11F0, 0, corr, begin, end, 0, 7, 0);
    ut_putptr(b, 56, name);
}

typedef struct seen {
    devtrace_event ev[64];
    char name[64][128];
    size_t n;
} seen;

static void collect(const devtrace_event *ev, const char *name, void *user)
{
    seen *s = user;
    if (s->n < 64) {
        s->ev[s->n] = *ev;
        snprintf(s->name[s->n], sizeof s->name[0], "%s", name ? name : "");
        s->n++;
    }
}

typedef struct fixture {
    dt_session *s;
    dt_roc_decoder d;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    devtrace_error err = {0, ""};
    f->s = dt_session_new_offline("roctracer", "unit test", "cuda_runtime", &err);
    assert_non_null(f->s);
    assert_int_equal(dt_roc_decoder_init(&f->d, f->s), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    dt_roc_decoder_free(&f->d);
    devtrace_close(f->s);
    free(f);
    return 0;
}

/* ---- classification: every kind of vendor-abi.md ---- */

static void test_every_listed_kind_is_classified(void **state)
{
    static const struct {
        uint32_t kind, op;
        dt_roc_class cls;
        uint32_t direction;
    } cases[] = {
        {0x11F0, 0, DT_ROC_CLASS_KERNEL, DEVTRACE_COPY_UNKNOWN}, /* kernel dispatch */
        {0x11F1, 0, DT_ROC_CLASS_KERNEL, DEVTRACE_COPY_UNKNOWN}, /* task dispatch */
        {0x11F3, 1, DT_ROC_CLASS_MEMCPY, DEVTRACE_COPY_DTOH},    /* copy D2H */
        {0x11F4, 1, DT_ROC_CLASS_MEMCPY, DEVTRACE_COPY_HTOD},    /* copy H2D */
        {0x11F5, 1, DT_ROC_CLASS_MEMCPY, DEVTRACE_COPY_DTOD},    /* copy D2D */
        {0x1201, 1, DT_ROC_CLASS_MEMCPY, DEVTRACE_COPY_DTOH},    /* 2-D copy D2H */
        {0x1202, 1, DT_ROC_CLASS_MEMCPY, DEVTRACE_COPY_HTOD},    /* 2-D copy H2D */
        {0x1203, 1, DT_ROC_CLASS_MEMCPY, DEVTRACE_COPY_DTOD},    /* 2-D copy D2D */
        {0x1207, 1, DT_ROC_CLASS_MEMSET, DEVTRACE_COPY_UNKNOWN}, /* fill */
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint32_t dir = 99;
        int unknown = 99;
        assert_int_equal(dt_roc_classify(2, cases[i].op, cases[i].kind, &dir, &unknown), cases[i].cls);
        assert_int_equal(dir, cases[i].direction);
        assert_int_equal(unknown, 0);
        /* the kind decides, whatever op says (on DTK the class is in the kind) */
        uint32_t other_op = cases[i].op == 0 ? 1 : 0;
        assert_int_equal(dt_roc_classify(2, other_op, cases[i].kind, &dir, &unknown), cases[i].cls);
    }
}

static void test_unknown_kinds_fall_back_on_the_op(void **state)
{
    uint32_t dir;
    int unknown;
    (void)state;
    assert_int_equal(dt_roc_classify(2, 0, 0x1, &dir, &unknown), DT_ROC_CLASS_KERNEL);
    assert_int_equal(unknown, 1);
    assert_int_equal(dt_roc_classify(2, 1, 0x1206, &dir, &unknown), DT_ROC_CLASS_MEMCPY);
    assert_int_equal(unknown, 1);
    assert_int_equal(dir, DEVTRACE_COPY_UNKNOWN);
}

static void test_barriers_other_domains_and_bad_values(void **state)
{
    uint32_t dir;
    int unknown;
    (void)state;
    assert_int_equal(dt_roc_classify(2, 2, 0x11F0, &dir, &unknown), DT_ROC_CLASS_BARRIER);
    assert_int_equal(dt_roc_classify(2, 2, 0, &dir, &unknown), DT_ROC_CLASS_BARRIER);
    assert_int_equal(dt_roc_classify(2, 3, 0x11F0, &dir, &unknown), DT_ROC_CLASS_MALFORMED); /* no op 3 */
    for (uint32_t domain = 0; domain < 8; domain++)
        if (domain != 2)
            assert_int_equal(dt_roc_classify(domain, 0, 0x11F0, &dir, &unknown), DT_ROC_CLASS_NOT_OURS);
    assert_int_equal(dt_roc_classify(8, 0, 0x11F0, &dir, &unknown), DT_ROC_CLASS_MALFORMED);
    assert_int_equal(dt_roc_classify(0xBAD, 0, 0x11F0, &dir, &unknown), DT_ROC_CLASS_MALFORMED);
}

/* ---- the walker ---- */

static void test_a_buffer_decodes_field_by_field(void **state)
{
    fixture *f = *state;
    static const char name[] = "_ZN2at6native6kernelEv";
    _Alignas(8) uint8_t buf[REC * 3];
    write_kernel(buf, 11, 1000, 4200, name);
    write_record(buf + REC, 2, 0x11F4, 1, 12, 5000, 6000, 1, 9, 1 << 20);  /* H2D copy of 1 MiB */
    write_record(buf + 2 * REC, 2, 0x1207, 1, 13, 7000, 7500, 0, 7, 4096); /* fill of 4 KiB */
    dt_roc_walk_counts c;
    dt_roc_walk(&f->d, (const char *)buf, (const char *)buf + sizeof buf, DT_ROC_WALK_DECODE, &c);
    assert_int_equal(c.records, 3);
    assert_int_equal(c.emitted, 3);
    assert_int_equal(c.malformed, 0);
    seen s = {.n = 0};
    assert_int_equal(devtrace_drain(f->s, collect, &s), 3);
    const devtrace_event *k = &s.ev[0], *m = &s.ev[1], *z = &s.ev[2];
    assert_int_equal(k->kind, DEVTRACE_KIND_KERNEL);
    assert_int_equal(k->start_ns, 1000);
    assert_int_equal(k->end_ns, 4200);
    assert_int_equal(k->correlation, 11);
    assert_int_equal(k->device, 0);
    assert_int_equal(k->stream, 7);
    assert_string_equal(s.name[0], "at::native::kernel()"); /* demangled at drain */
    assert_false(k->flags & DEVTRACE_EVENT_HAS_LAUNCH);     /* no launch call seen */
    assert_int_equal(m->kind, DEVTRACE_KIND_MEMCPY);
    assert_int_equal(m->u.memcpy.bytes, 1 << 20);
    assert_int_equal(m->u.memcpy.direction, DEVTRACE_COPY_HTOD);
    assert_int_equal(m->device, 1);
    assert_int_equal(m->stream, 9);
    assert_int_equal(m->correlation, 12);
    assert_int_equal(z->kind, DEVTRACE_KIND_MEMSET);
    assert_int_equal(z->u.memset.bytes, 4096);
    assert_int_equal(z->correlation, 13);
}

static void test_losses_are_counted_by_cause(void **state)
{
    fixture *f = *state;
    _Alignas(8) uint8_t buf[REC * 7 + 24];
    write_kernel(buf, 1, 10, 20, "k");
    write_record(buf + REC, 2, 0, 2, 2, 30, 40, 0, 7, 0);           /* barrier: skipped */
    write_record(buf + 2 * REC, 5, 0, 1, 3, 0, 0, 0, 0, 0);         /* EXT_API: not ours */
    write_record(buf + 3 * REC, 0xBAD, 0, 0, 0, 0, 0, 0, 0, 0);     /* no such domain */
    write_record(buf + 4 * REC, 2, 0x11F0, 0, 5, 0, 0, 0, 7, 0);    /* start == end == 0 */
    write_record(buf + 5 * REC, 2, 0x11F3, 1, 6, 50, 60, -1, 7, 8); /* a negative device */
    write_record(buf + 6 * REC, 2, 0x4242, 0, 7, 70, 80, 0, 7, 0);  /* unknown kind, DISPATCH */
    dt_roc_walk_counts c;
    dt_roc_walk(&f->d, (const char *)buf, (const char *)buf + sizeof buf, DT_ROC_WALK_DECODE, &c);
    assert_int_equal(c.records, 7);
    assert_int_equal(c.emitted, 2);   /* the kernel and the unknown-kind dispatch */
    assert_int_equal(c.malformed, 3); /* bad domain, negative device, the ragged 24-byte tail */
    assert_int_equal(c.malformed_bytes, 24);
    assert_int_equal(c.zero_time, 1);
    assert_int_equal(c.barriers, 1);
    assert_int_equal(c.not_ours, 1);
    assert_int_equal(c.unknown_kind, 1);
    const devtrace_stats *st = devtrace_stats_get(f->s);
    assert_int_equal(st->malformed_records, 3);
    assert_int_equal(st->malformed_bytes, 24);
    assert_int_equal(st->zero_timestamp, 1);
    assert_int_equal(atomic_load(&f->d.barriers), 1);
    assert_int_equal(atomic_load(&f->d.unknown_kinds), 1);
    assert_int_equal(atomic_load(&f->d.first_unknown_kind), 0x4242);
}

static void test_ranges_that_hold_no_record(void **state)
{
    fixture *f = *state;
    _Alignas(8) uint8_t buf[REC];
    dt_roc_walk_counts c;
    write_kernel(buf, 1, 10, 20, "k");
    dt_roc_walk(&f->d, NULL, NULL, DT_ROC_WALK_DECODE, &c); /* nothing */
    assert_int_equal(c.records + c.malformed, 0);
    dt_roc_walk(&f->d, (const char *)buf, (const char *)buf, DT_ROC_WALK_DECODE, &c); /* empty */
    assert_int_equal(c.records + c.malformed, 0);
    dt_roc_walk(&f->d, (const char *)buf + REC, (const char *)buf, DT_ROC_WALK_DECODE, &c); /* inverted */
    assert_int_equal(c.records, 0);
    assert_int_equal(c.malformed, 1);
    dt_roc_walk(&f->d, (const char *)buf, (const char *)buf + 63, DT_ROC_WALK_DECODE, &c); /* short */
    assert_int_equal(c.records, 0);
    assert_int_equal(c.malformed, 1);
    assert_int_equal(c.malformed_bytes, 63);
    assert_int_equal(devtrace_stats_get(f->s)->malformed_records, 2);
}

static void test_out_of_window_records_are_counted_per_kind(void **state)
{
    fixture *f = *state;
    _Alignas(8) uint8_t buf[REC * 2];
    write_kernel(buf, 1, 10, 20, "k");
    write_record(buf + REC, 2, 0x11F5, 1, 2, 30, 40, 0, 7, 64);
    dt_roc_walk_counts c;
    dt_roc_walk(&f->d, (const char *)buf, (const char *)buf + sizeof buf, DT_ROC_WALK_OUT_OF_WINDOW, &c);
    assert_int_equal(c.emitted, 0);
    const devtrace_stats *st = devtrace_stats_get(f->s);
    assert_int_equal(st->out_of_window[DEVTRACE_KIND_KERNEL], 1);
    assert_int_equal(st->out_of_window[DEVTRACE_KIND_MEMCPY], 1);
}

/* ---- launch configurations and lost records ---- */

static void test_launch_configuration_attaches_by_correlation(void **state)
{
    fixture *f = *state;
    dt_roc_launch l = {
        .grid = {416, 2, 1}, .block = {256, 1, 1}, .dynamic_shared = 81920, .has_grid = 1, .has_shared = 1};
    assert_int_equal(dt_roc_pending_put(&f->d, 77, &l), 0);
    assert_int_equal(dt_roc_pending_put(&f->d, 78, NULL), 0); /* a copy whose record never comes */
    _Alignas(8) uint8_t buf[REC];
    write_kernel(buf, 77, 100, 200, "k");
    dt_roc_walk_counts c;
    dt_roc_walk(&f->d, (const char *)buf, (const char *)buf + REC, DT_ROC_WALK_DECODE, &c);
    assert_int_equal(c.launches_attached, 1);
    assert_int_equal(dt_roc_pending_drain(&f->d), 1); /* 78: lost */
    assert_int_equal(dt_roc_pending_drain(&f->d), 0); /* and forgotten */
    seen s = {.n = 0};
    assert_int_equal(devtrace_drain(f->s, collect, &s), 1);
    const devtrace_event *k = &s.ev[0];
    assert_true(k->flags & DEVTRACE_EVENT_HAS_LAUNCH);
    assert_int_equal(k->u.kernel.grid[0], 416);
    assert_int_equal(k->u.kernel.grid[1], 2);
    assert_int_equal(k->u.kernel.grid[2], 1);
    assert_int_equal(k->u.kernel.block[0], 256);
    assert_int_equal(k->u.kernel.dynamic_shared, 81920);
    assert_false(k->flags & DEVTRACE_EVENT_HAS_REGS); /* ROCtracer has no register counts */
}

static void test_a_second_record_of_one_call_finds_no_entry(void **state)
{
    fixture *f = *state;
    dt_roc_launch got;
    assert_int_equal(dt_roc_pending_put(&f->d, 5, NULL), 0);
    assert_int_equal(dt_roc_pending_take(&f->d, 5, &got), 1);
    assert_int_equal(dt_roc_pending_take(&f->d, 5, &got), 0); /* a copy split in two records */
    assert_int_equal(dt_roc_pending_put(&f->d, 0, NULL), -1); /* 0 is no correlation id */
    assert_int_equal(dt_roc_pending_drain(&f->d), 0);
}

static void test_a_full_table_refuses_and_counts(void **state)
{
    fixture *f = *state;
    uint64_t k = 1, stored = 0;
    /* Probing is bounded: keys go in until one finds no free slot near its own. */
    while (k <= 2ull * DT_ROC_PENDING_SLOTS && dt_roc_pending_put(&f->d, k, NULL) == 0)
        k++, stored++;
    assert_true(stored >= DT_ROC_PENDING_SLOTS / 2 && stored < DT_ROC_PENDING_SLOTS);
    assert_int_equal(atomic_load(&f->d.pending_full), 1);
    assert_int_equal(dt_roc_pending_take(&f->d, k - 1, NULL), 1);
    assert_int_equal(dt_roc_pending_put(&f->d, k - 1, NULL), 0); /* a freed slot is reused */
    assert_int_equal(dt_roc_pending_drain(&f->d), stored);
}

static void test_launch_shared_memory_in_both_argument_layouts(void **state)
{
    const uint64_t ptr = 0x7f0000001000ull; /* a pointer: above 1 MiB */
    uint32_t b = 99;
    (void)state;
    /* older hip_prof_str.h: sharedMemBytes @40, stream @48 */
    assert_int_equal(dt_roc_launch_shared_bytes(4096, ptr, &b), 1);
    assert_int_equal(b, 4096);
    assert_int_equal(dt_roc_launch_shared_bytes(81920, 0, &b), 1);
    assert_int_equal(b, 81920);
    assert_int_equal(dt_roc_launch_shared_bytes(0, ptr, &b), 1);
    assert_int_equal(b, 0);
    assert_int_equal(dt_roc_launch_shared_bytes(0, 2, &b), 1); /* hipStreamPerThread */
    assert_int_equal(b, 0);
    /* newer: args__val @40, sharedMemBytes @48 */
    assert_int_equal(dt_roc_launch_shared_bytes(ptr, 81920, &b), 1);
    assert_int_equal(b, 81920);
    assert_int_equal(dt_roc_launch_shared_bytes(ptr, 0, &b), 1);
    assert_int_equal(b, 0);
    assert_int_equal(dt_roc_launch_shared_bytes(0, 512, &b), 1); /* args NULL: args__val 0 */
    assert_int_equal(b, 512);
    /* neither */
    assert_int_equal(dt_roc_launch_shared_bytes(ptr, ptr, &b), 0);
}

/* ---- names ---- */

static void test_kernel_names_are_copied_not_kept_as_pointers(void **state)
{
    fixture *f = *state;
    char area[2][64];
    _Alignas(8) uint8_t buf[REC * 2] = {0};
    snprintf(area[0], sizeof area[0], "_Z5firstv");
    write_kernel(buf, 1, 10, 20, area[0]);
    dt_roc_walk(&f->d, (const char *)buf, (const char *)buf + REC, DT_ROC_WALK_DECODE, NULL);
    /* the vendor reuses the memory for another name, and the first one comes again elsewhere */
    snprintf(area[0], sizeof area[0], "_Z6secondv");
    snprintf(area[1], sizeof area[1], "_Z5firstv");
    write_kernel(buf, 2, 30, 40, area[0]);
    write_kernel(buf + REC, 3, 50, 60, area[1]);
    dt_roc_walk(&f->d, (const char *)buf, (const char *)buf + 2 * REC, DT_ROC_WALK_DECODE, NULL);
    write_kernel(buf, 4, 70, 80, NULL);
    dt_roc_walk(&f->d, (const char *)buf, (const char *)buf + REC, DT_ROC_WALK_DECODE, NULL);
    memset(area, 0, sizeof area);
    seen s = {.n = 0};
    assert_int_equal(devtrace_drain(f->s, collect, &s), 4);
    assert_string_equal(s.name[0], "first()");
    assert_string_equal(s.name[1], "second()");
    assert_string_equal(s.name[2], "first()");
    assert_string_equal(s.name[3], "(unnamed kernel)");
    assert_int_equal(s.ev[0].name_id, s.ev[2].name_id);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_listed_kind_is_classified),
        cmocka_unit_test(test_unknown_kinds_fall_back_on_the_op),
        cmocka_unit_test(test_barriers_other_domains_and_bad_values),
        cmocka_unit_test_setup_teardown(test_a_buffer_decodes_field_by_field, setup, teardown),
        cmocka_unit_test_setup_teardown(test_losses_are_counted_by_cause, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ranges_that_hold_no_record, setup, teardown),
        cmocka_unit_test_setup_teardown(test_out_of_window_records_are_counted_per_kind, setup, teardown),
        cmocka_unit_test_setup_teardown(test_launch_configuration_attaches_by_correlation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_second_record_of_one_call_finds_no_entry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_full_table_refuses_and_counts, setup, teardown),
        cmocka_unit_test(test_launch_shared_memory_in_both_argument_layouts),
        cmocka_unit_test_setup_teardown(test_kernel_names_are_copied_not_kept_as_pointers, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
