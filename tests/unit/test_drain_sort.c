/* test_drain_sort.c: the time sort of finalise (src/core/drain.c) on sessions large
 * enough for it to sort two halves on two threads and merge them. The order must be the
 * one a stable sort by (start, CPU ops first, kind, longer first, correlation) gives,
 * ties in collection order, whether the sort used one thread or two: the test finalises
 * the same events with this process bound to one CPU and to every CPU it may use, and
 * compares both orders with a reference computed here. */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/session.h"
#include "unit_session.h"

#define N 200000u /* above the threshold for the two-thread sort */

/* Event i: starts collide in groups, some events are equal for the sort's key and differ
 * only in name_id (i + 1), which records the collection order. */
static devtrace_event event_at(uint32_t i)
{
    uint32_t r = i * 2654435761u; /* a permutation of the order: times not collected sorted */
    uint64_t start = 1000 + (r % 2000u);
    int kind = (r >> 20) % 3 == 0   ? DEVTRACE_KIND_CPU_OP
               : (r >> 20) % 3 == 1 ? DEVTRACE_KIND_RUNTIME
                                    : DEVTRACE_KIND_KERNEL;
    devtrace_event ev = ut_event(kind, start, start + 10 + (r >> 28) % 4, (r >> 24) % 4);
    ev.flags = DEVTRACE_EVENT_HOST_CLOCK;
    ev.name_id = i + 1;
    return ev;
}

typedef struct keyed {
    devtrace_event ev;
    uint32_t index;
} keyed;

static int kind_rank_cmp(const devtrace_event *x, const devtrace_event *y)
{
    if (x->kind == y->kind)
        return 0;
    if (x->kind == DEVTRACE_KIND_CPU_OP)
        return -1;
    if (y->kind == DEVTRACE_KIND_CPU_OP)
        return 1;
    return x->kind < y->kind ? -1 : 1;
}

/* The reference: the key, then the collection index (what stability means). */
static int reference_cmp(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->ev.start_ns != y->ev.start_ns)
        return x->ev.start_ns < y->ev.start_ns ? -1 : 1;
    int k = kind_rank_cmp(&x->ev, &y->ev);
    if (k)
        return k;
    if (x->ev.end_ns != y->ev.end_ns)
        return x->ev.end_ns > y->ev.end_ns ? -1 : 1;
    if (x->ev.correlation != y->ev.correlation)
        return x->ev.correlation < y->ev.correlation ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Finalises a session of the N events and returns their name ids in sorted order. */
static uint32_t *sorted_order(void)
{
    dt_session *s = ut_offline_session();
    assert_non_null(s);
    for (uint32_t i = 0; i < N; i++) {
        devtrace_event ev = event_at(i);
        assert_int_equal(dt_emit(s, &ev), 0);
    }
    assert_int_equal(dt_session_finalize(s), 0);
    assert_int_equal(s->nsorted, N);
    uint32_t *order = malloc(N * sizeof *order);
    assert_non_null(order);
    for (size_t i = 0; i < N; i++)
        order[i] = s->sorted[i]->name_id;
    devtrace_close(s);
    return order;
}

/* Runs this thread on the first CPU it may use; *all gets the affinity it had (restore it
 * with sched_setaffinity), and the number of CPUs in it is returned. */
static int pin_to_one_cpu(cpu_set_t *all)
{
    cpu_set_t one;
    assert_int_equal(sched_getaffinity(0, sizeof *all, all), 0);
    int first = -1;
    for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
        if (CPU_ISSET(c, all))
            first = c;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    assert_int_equal(sched_setaffinity(0, sizeof one, &one), 0);
    return CPU_COUNT(all);
}

static void test_one_and_two_thread_sorts_give_the_stable_order(void **state)
{
    (void)state;
    keyed *ref = malloc(N * sizeof *ref);
    assert_non_null(ref);
    for (uint32_t i = 0; i < N; i++)
        ref[i] = (keyed){event_at(i), i};
    qsort(ref, N, sizeof *ref, reference_cmp);

    cpu_set_t all;
    int cpus = pin_to_one_cpu(&all);
    assert_int_equal(dt_online_cpus(), 1);
    uint32_t *single = sorted_order();
    assert_int_equal(sched_setaffinity(0, sizeof all, &all), 0);
    assert_int_equal(dt_online_cpus(), cpus);
    uint32_t *multi = sorted_order();
    if (cpus < 2)
        print_message("only one CPU here: the two-thread sort was not exercised\n");

    size_t ties = 0;
    for (uint32_t i = 0; i < N; i++) {
        assert_int_equal(single[i], ref[i].index + 1);
        assert_int_equal(multi[i], ref[i].index + 1);
        if (i && reference_cmp(&(keyed){ref[i].ev, 0}, &(keyed){ref[i - 1].ev, 0}) == 0)
            ties++;
    }
    assert_true(ties > 1000); /* the stability is tested, not only the key */
    free(single);
    free(multi);
    free(ref);
}

/* Flow pairs for correlations 1 .. PAIRS_N: a runtime call and its kernel, except that
 * every 10th correlation has only its kernel (an unpaired device half) and every 7th
 * that is not a 10th has only its runtime call (not counted: nothing recorded its
 * partner). Each sort thread marks the flows of its half; the totals must not depend on
 * how many threads did. */
#define PAIRS_N 100000u
#define DEVICE_ONLY 10000u  /* multiples of 10 up to PAIRS_N */
#define RUNTIME_ONLY 12857u /* multiples of 7 (14285) less those of 70 (1428) */
#define FLOW_EVENTS 154286u /* 2 * (PAIRS_N - DEVICE_ONLY - RUNTIME_ONLY) */

static uint8_t *flow_bits_in_order(uint64_t *unpaired)
{
    dt_session *s = ut_offline_session();
    assert_non_null(s);
    for (uint32_t i = 1; i <= PAIRS_N; i++) {
        uint64_t t = 1000 + 10 * (uint64_t)i;
        devtrace_event rt = ut_runtime(t, t + 5, i), k = ut_kernel(t + 3, t + 7, i);
        if (i % 10 != 0)
            assert_int_equal(dt_emit(s, &rt), 0);
        if (i % 7 != 0 || i % 10 == 0)
            assert_int_equal(dt_emit(s, &k), 0);
    }
    assert_int_equal(dt_session_finalize(s), 0);
    assert_int_equal(s->nsorted, FLOW_EVENTS + DEVICE_ONLY + RUNTIME_ONLY);
    uint8_t *bits = malloc(s->nsorted);
    assert_non_null(bits);
    for (size_t i = 0; i < s->nsorted; i++)
        bits[i] = (s->sorted[i]->flags & DT_EVENT_FLOW) != 0;
    *unpaired = s->stats.unpaired_flows;
    devtrace_close(s);
    return bits;
}

static void test_flows_are_marked_alike_by_one_and_two_threads(void **state)
{
    (void)state;
    cpu_set_t all;
    pin_to_one_cpu(&all);
    uint64_t unpaired_single = 0, unpaired_multi = 0;
    uint8_t *single = flow_bits_in_order(&unpaired_single);
    assert_int_equal(sched_setaffinity(0, sizeof all, &all), 0);
    uint8_t *multi = flow_bits_in_order(&unpaired_multi);
    assert_int_equal(unpaired_single, DEVICE_ONLY);
    assert_int_equal(unpaired_multi, DEVICE_ONLY);
    size_t n = FLOW_EVENTS + DEVICE_ONLY + RUNTIME_ONLY, flagged = 0;
    assert_memory_equal(single, multi, n);
    for (size_t i = 0; i < n; i++)
        flagged += multi[i];
    assert_int_equal(flagged, FLOW_EVENTS);
    free(single);
    free(multi);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_and_two_thread_sorts_give_the_stable_order),
        cmocka_unit_test(test_flows_are_marked_alike_by_one_and_two_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
