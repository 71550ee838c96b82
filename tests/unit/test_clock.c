/* test_clock.c: mapping a vendor clock to host CLOCK_REALTIME ns (src/core/clock.c).
 *
 * Covers, on crafted samples with exact expected values: affine interpolation and
 * extrapolation from two samples; rounding to the nearest ns (rates 1/3, 2/3, 10/3);
 * a piecewise map from three samples given in any order; the fallbacks (no sample:
 * identity; one sample: offset; host values that do not increase: offset from the
 * first sample taken; duplicate vendor values); values near 2^63 and across the whole
 * 64-bit range without overflow, clamped to [0, UINT64_MAX]; dt_clock_map_span equal to
 * mapping each value alone (within a segment, across segments, at points, beyond the
 * ends, with every mode); dt_clock_mode_name; the host clock readers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "core/clock.h"

#define P63 (UINT64_C(1) << 63)

static dt_clock_map build(const dt_clock_sample *samples, size_t n)
{
    dt_clock_map map;
    assert_int_equal(dt_clock_map_build(&map, samples, n), 0);
    return map;
}

static uint64_t map_at(const dt_clock_map *map, uint64_t vendor_ns)
{
    return dt_clock_map_to_realtime(map, vendor_ns);
}

static void test_two_samples_interpolate_exactly(void **state)
{
    (void)state;
    const dt_clock_sample s[] = {{1000, 5000}, {2000, 7000}};
    dt_clock_map m = build(s, 2);
    assert_int_equal(m.mode, DT_CLOCK_AFFINE);
    assert_int_equal(m.npoints, 2);
    assert_int_equal(map_at(&m, 1000), 5000);
    assert_int_equal(map_at(&m, 1500), 6000);
    assert_int_equal(map_at(&m, 1999), 6998);
    assert_int_equal(map_at(&m, 2000), 7000);
    dt_clock_map_free(&m);
}

static void test_two_samples_extrapolate_below_the_first(void **state)
{
    (void)state;
    const dt_clock_sample s[] = {{1000, 5000}, {2000, 7000}};
    dt_clock_map m = build(s, 2);
    assert_int_equal(map_at(&m, 500), 4000);
    assert_int_equal(map_at(&m, 0), 3000);
    dt_clock_map_free(&m);
}

static void test_two_samples_extrapolate_above_the_last(void **state)
{
    (void)state;
    const dt_clock_sample s[] = {{1000, 5000}, {2000, 7000}};
    dt_clock_map m = build(s, 2);
    assert_int_equal(map_at(&m, 3000), 9000);
    assert_int_equal(map_at(&m, 1000000), 2003000);
    dt_clock_map_free(&m);
}

static void test_rate_one_third_rounds_to_nearest(void **state)
{
    (void)state;
    /* 3 vendor ns per host ns. */
    const dt_clock_sample s[] = {{0, 0}, {3, 1}};
    dt_clock_map m = build(s, 2);
    assert_int_equal(map_at(&m, 1), 0); /* 0.333 */
    assert_int_equal(map_at(&m, 2), 1); /* 0.667 */
    assert_int_equal(map_at(&m, 3), 1);
    assert_int_equal(map_at(&m, 4), 1);                   /* 1.333 */
    assert_int_equal(map_at(&m, 5), 2);                   /* 1.667 */
    assert_int_equal(map_at(&m, 3000000001), 1000000000); /* 1e9 + 0.333 */
    assert_int_equal(map_at(&m, 3000000002), 1000000001); /* 1e9 + 0.667 */
    dt_clock_map_free(&m);
}

static void test_rate_one_third_rounds_to_nearest_below_the_first_sample(void **state)
{
    (void)state;
    const dt_clock_sample s[] = {{3000, 1000}, {6000, 2000}};
    dt_clock_map m = build(s, 2);
    assert_int_equal(map_at(&m, 2999), 1000); /* 999.667 */
    assert_int_equal(map_at(&m, 2998), 999);  /* 999.333 */
    assert_int_equal(map_at(&m, 2997), 999);
    assert_int_equal(map_at(&m, 1), 0); /* 0.333 */
    dt_clock_map_free(&m);
}

static void test_rate_ten_thirds_rounds_to_nearest(void **state)
{
    (void)state;
    const dt_clock_sample s[] = {{100, 1000}, {103, 1010}};
    dt_clock_map m = build(s, 2);
    assert_int_equal(map_at(&m, 101), 1003); /* 1003.333 */
    assert_int_equal(map_at(&m, 102), 1007); /* 1006.667 */
    assert_int_equal(map_at(&m, 99), 997);   /* 996.667 */
    dt_clock_map_free(&m);
}

static void test_three_samples_map_piecewise(void **state)
{
    (void)state;
    /* Rate 2 between the first two, rate 1/2 between the last two. */
    const dt_clock_sample s[] = {{1000, 5000}, {2000, 7000}, {3000, 7500}};
    dt_clock_map m = build(s, 3);
    assert_int_equal(m.mode, DT_CLOCK_AFFINE);
    assert_int_equal(m.npoints, 3);
    assert_int_equal(map_at(&m, 500), 4000);  /* first segment, extrapolated */
    assert_int_equal(map_at(&m, 1500), 6000); /* first segment */
    assert_int_equal(map_at(&m, 2000), 7000); /* the middle sample itself */
    assert_int_equal(map_at(&m, 2500), 7250); /* second segment */
    assert_int_equal(map_at(&m, 2998), 7499); /* second segment */
    assert_int_equal(map_at(&m, 4000), 8000); /* last segment, extrapolated */
    dt_clock_map_free(&m);
}

static void test_samples_in_any_order_give_the_same_map(void **state)
{
    (void)state;
    const dt_clock_sample s[] = {{3000, 7500}, {1000, 5000}, {2000, 7000}};
    dt_clock_map m = build(s, 3);
    assert_int_equal(m.mode, DT_CLOCK_AFFINE);
    assert_int_equal(map_at(&m, 1500), 6000);
    assert_int_equal(map_at(&m, 2500), 7250);
    assert_int_equal(s[0].vendor_ns, 3000); /* the caller's array is left as it was */
    dt_clock_map_free(&m);
}

static void test_no_sample_is_identity(void **state)
{
    (void)state;
    dt_clock_map m = build(NULL, 0);
    assert_int_equal(m.mode, DT_CLOCK_IDENTITY);
    assert_int_equal(map_at(&m, 0), 0);
    assert_int_equal(map_at(&m, 123456789), 123456789);
    assert_int_equal(map_at(&m, UINT64_MAX), UINT64_MAX);
    dt_clock_map_free(&m);
}

static void test_one_sample_is_an_offset(void **state)
{
    (void)state;
    const dt_clock_sample s[] = {{1000, 5000}};
    dt_clock_map m = build(s, 1);
    assert_int_equal(m.mode, DT_CLOCK_OFFSET);
    assert_int_equal(map_at(&m, 1000), 5000);
    assert_int_equal(map_at(&m, 1500), 5500);
    assert_int_equal(map_at(&m, 0), 4000);
    dt_clock_map_free(&m);
}

static void test_offset_clamps_to_zero_and_to_the_maximum(void **state)
{
    (void)state;
    const dt_clock_sample back[] = {{1000, 500}};
    dt_clock_map m = build(back, 1);
    assert_int_equal(map_at(&m, 0), 0); /* -500 */
    assert_int_equal(map_at(&m, 499), 0);
    assert_int_equal(map_at(&m, 501), 1);
    dt_clock_map_free(&m);
    const dt_clock_sample ahead[] = {{500, 1000}};
    m = build(ahead, 1);
    assert_int_equal(map_at(&m, UINT64_MAX), UINT64_MAX);
    assert_int_equal(map_at(&m, UINT64_MAX - 500), UINT64_MAX);
    assert_int_equal(map_at(&m, UINT64_MAX - 501), UINT64_MAX - 1);
    dt_clock_map_free(&m);
}

static void test_host_going_backwards_falls_back_to_offset_from_the_first_sample_taken(void **state)
{
    (void)state;
    const dt_clock_sample s[] = {{1000, 5000}, {2000, 4000}};
    dt_clock_map m = build(s, 2);
    assert_int_equal(m.mode, DT_CLOCK_OFFSET);
    assert_int_equal(m.npoints, 1);
    assert_int_equal(map_at(&m, 1500), 5500);
    dt_clock_map_free(&m);
    /* The first sample taken, not the one with the smallest vendor value. */
    const dt_clock_sample later_first[] = {{2000, 4000}, {1000, 5000}};
    m = build(later_first, 2);
    assert_int_equal(m.mode, DT_CLOCK_OFFSET);
    assert_int_equal(map_at(&m, 1500), 3500);
    dt_clock_map_free(&m);
}

static void test_equal_host_values_fall_back_to_offset(void **state)
{
    (void)state;
    const dt_clock_sample s[] = {{1000, 5000}, {2000, 5000}};
    dt_clock_map m = build(s, 2);
    assert_int_equal(m.mode, DT_CLOCK_OFFSET);
    assert_int_equal(map_at(&m, 3000), 7000);
    dt_clock_map_free(&m);
}

static void test_one_backwards_sample_among_three_falls_back_to_offset(void **state)
{
    (void)state;
    const dt_clock_sample s[] = {{1000, 5000}, {2000, 7000}, {3000, 6000}};
    dt_clock_map m = build(s, 3);
    assert_int_equal(m.mode, DT_CLOCK_OFFSET);
    assert_int_equal(m.npoints, 1);
    assert_int_equal(map_at(&m, 2500), 6500);
    dt_clock_map_free(&m);
}

static void test_duplicate_vendor_value_is_skipped(void **state)
{
    (void)state;
    const dt_clock_sample s[] = {{1000, 5000}, {1000, 5100}, {2000, 7000}};
    dt_clock_map m = build(s, 3);
    assert_int_equal(m.mode, DT_CLOCK_AFFINE);
    assert_int_equal(m.npoints, 2);
    assert_int_equal(map_at(&m, 1500), 6000);
    dt_clock_map_free(&m);
}

static void test_only_duplicate_vendor_values_fall_back_to_offset_from_the_first_sample_taken(void **state)
{
    (void)state;
    const dt_clock_sample s[] = {{1000, 5100}, {1000, 5000}};
    dt_clock_map m = build(s, 2);
    assert_int_equal(m.mode, DT_CLOCK_OFFSET);
    assert_int_equal(map_at(&m, 1500), 5600);
    dt_clock_map_free(&m);
}

static void test_values_near_two_to_the_63_map_exactly(void **state)
{
    (void)state;
    /* Rate 1, host 1 s ahead, both clocks near 2^63. */
    const dt_clock_sample s[] = {{P63 - 2000000000u, P63 - 1000000000u}, {P63 - 1000000000u, P63}};
    dt_clock_map m = build(s, 2);
    assert_int_equal(map_at(&m, P63 - 1500000000u), P63 - 500000000u);
    assert_int_equal(map_at(&m, P63 + 500000000u), P63 + 1500000000u);
    assert_int_equal(map_at(&m, 0), 1000000000u);
    assert_int_equal(map_at(&m, UINT64_MAX - 1000000000u), UINT64_MAX);
    assert_int_equal(map_at(&m, UINT64_MAX), UINT64_MAX); /* 2^64 + 1e9 - 1: clamped */
    dt_clock_map_free(&m);
    /* Rate 1/3 near 2^63: the 128-bit arithmetic keeps every ns. */
    const dt_clock_sample third[] = {{P63 + 3, P63 + 7}, {P63 + 3 + 3000000000u, P63 + 7 + 1000000000u}};
    m = build(third, 2);
    assert_int_equal(map_at(&m, P63 + 5), P63 + 8);                         /* +0.667 */
    assert_int_equal(map_at(&m, P63 + 3 + 3000000001u), P63 + 1000000007u); /* +0.333 */
    assert_int_equal(map_at(&m, P63 + 3 + 6000000000u), P63 + 2000000007u); /* extrapolated */
    dt_clock_map_free(&m);
}

static void test_full_64_bit_range_maps_exactly(void **state)
{
    (void)state;
    /* Samples at both ends of the range: the product (v - v0) * (h1 - h0) needs all of
     * 128 bits, unsigned. */
    const dt_clock_sample s[] = {{0, 0}, {UINT64_MAX, UINT64_MAX}};
    dt_clock_map m = build(s, 2);
    assert_int_equal(map_at(&m, UINT64_MAX - 1), UINT64_MAX - 1);
    assert_int_equal(map_at(&m, P63 + 12345), P63 + 12345);
    dt_clock_map_free(&m);
    const dt_clock_sample down[] = {{UINT64_MAX - 1, 1}, {UINT64_MAX, 2}};
    m = build(down, 2);
    assert_int_equal(map_at(&m, 0), 0); /* 2 - 2^64: clamped to 0 */
    dt_clock_map_free(&m);
}

static void test_absurd_rate_clamps_instead_of_overflowing(void **state)
{
    (void)state;
    /* 2^64 - 1 host ns per vendor ns: replayed or fuzzed samples can say anything. */
    const dt_clock_sample s[] = {{0, 0}, {1, UINT64_MAX}};
    dt_clock_map m = build(s, 2);
    assert_int_equal(map_at(&m, 1), UINT64_MAX);
    assert_int_equal(map_at(&m, 2), UINT64_MAX);
    assert_int_equal(map_at(&m, UINT64_MAX), UINT64_MAX); /* (2^64 - 1)^2: clamped */
    dt_clock_map_free(&m);
    const dt_clock_sample high[] = {{UINT64_MAX - 1, 0}, {UINT64_MAX, UINT64_MAX}};
    m = build(high, 2);
    assert_int_equal(map_at(&m, UINT64_MAX - 1), 0);
    assert_int_equal(map_at(&m, UINT64_MAX - 2), 0);
    assert_int_equal(map_at(&m, 0), 0); /* about -2^128: clamped, not wrapped */
    dt_clock_map_free(&m);
}

static void test_free_leaves_an_identity_map(void **state)
{
    (void)state;
    const dt_clock_sample s[] = {{1000, 5000}, {2000, 7000}};
    dt_clock_map m = build(s, 2);
    dt_clock_map_free(&m);
    assert_int_equal(m.mode, DT_CLOCK_IDENTITY);
    assert_null(m.points);
    assert_int_equal(map_at(&m, 42), 42);
    dt_clock_map_free(&m); /* twice is fine */
}

static void check_span(const dt_clock_map *m, uint64_t start, uint64_t end, uint64_t queued)
{
    uint64_t a = start, b = end, q = queued;
    dt_clock_map_span(m, &a, &b, &q);
    assert_int_equal(a, map_at(m, start));
    assert_int_equal(b, map_at(m, end));
    assert_int_equal(q, map_at(m, queued));
    a = start, b = end;
    dt_clock_map_span(m, &a, &b, NULL);
    assert_int_equal(a, map_at(m, start));
    assert_int_equal(b, map_at(m, end));
}

static void test_span_maps_each_value_as_alone(void **state)
{
    (void)state;
    /* rate 1, rate 1/3, rate 10/3 and a huge rate (the 128-bit path) */
    const dt_clock_sample s[] = {{1000, 5000}, {2000, 6000}, {2300, 6100}, {2600, 7100}, {2601, UINT64_MAX / 2}};
    dt_clock_map m = build(s, 5);
    const uint64_t v[] = {0,    1,    999,  1000, 1001, 1500, 1999, 2000, 2001,           2150,
                          2299, 2300, 2301, 2599, 2600, 2601, 2602, 5000, UINT64_MAX - 1, UINT64_MAX};
    size_t n = sizeof v / sizeof v[0];
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            check_span(&m, v[i], v[j], v[(i + j) % n]);
    dt_clock_map_free(&m);
    const dt_clock_sample one[] = {{1000, 5000}};
    m = build(one, 1);
    check_span(&m, 0, 1000, UINT64_MAX);
    dt_clock_map_free(&m);
    check_span(&m, 7, 8, 9); /* identity */
}

static void test_clock_mode_names(void **state)
{
    (void)state;
    assert_string_equal(dt_clock_mode_name(DT_CLOCK_IDENTITY), "identity");
    assert_string_equal(dt_clock_mode_name(DT_CLOCK_OFFSET), "offset");
    assert_string_equal(dt_clock_mode_name(DT_CLOCK_AFFINE), "affine");
}

static void test_host_clocks_read_realtime_and_monotonic(void **state)
{
    (void)state;
    uint64_t before = (uint64_t)time(NULL);
    uint64_t rt = dt_realtime_ns();
    uint64_t after = (uint64_t)time(NULL);
    assert_in_range(rt / 1000000000u, before, after + 1); /* time() may lag a tick behind */
    uint64_t m1 = dt_monotonic_ns(), m2 = dt_monotonic_ns();
    assert_true(m2 >= m1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_samples_interpolate_exactly),
        cmocka_unit_test(test_two_samples_extrapolate_below_the_first),
        cmocka_unit_test(test_two_samples_extrapolate_above_the_last),
        cmocka_unit_test(test_rate_one_third_rounds_to_nearest),
        cmocka_unit_test(test_rate_one_third_rounds_to_nearest_below_the_first_sample),
        cmocka_unit_test(test_rate_ten_thirds_rounds_to_nearest),
        cmocka_unit_test(test_three_samples_map_piecewise),
        cmocka_unit_test(test_samples_in_any_order_give_the_same_map),
        cmocka_unit_test(test_no_sample_is_identity),
        cmocka_unit_test(test_one_sample_is_an_offset),
        cmocka_unit_test(test_offset_clamps_to_zero_and_to_the_maximum),
        cmocka_unit_test(test_host_going_backwards_falls_back_to_offset_from_the_first_sample_taken),
        cmocka_unit_test(test_equal_host_values_fall_back_to_offset),
        cmocka_unit_test(test_one_backwards_sample_among_three_falls_back_to_offset),
        cmocka_unit_test(test_duplicate_vendor_value_is_skipped),
        cmocka_unit_test(test_only_duplicate_vendor_values_fall_back_to_offset_from_the_first_sample_taken),
        cmocka_unit_test(test_values_near_two_to_the_63_map_exactly),
        cmocka_unit_test(test_full_64_bit_range_maps_exactly),
        cmocka_unit_test(test_absurd_rate_clamps_instead_of_overflowing),
        cmocka_unit_test(test_free_leaves_an_identity_map),
        cmocka_unit_test(test_span_maps_each_value_as_alone),
        cmocka_unit_test(test_clock_mode_names),
        cmocka_unit_test(test_host_clocks_read_realtime_and_monotonic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
