/* test_window_and_flows.c: finalising a session (src/core/drain.c) as seen through
 * devtrace_drain, devtrace_stats_get and the Chrome trace (dt_chrome_write_buffer).
 *
 * Every test builds an offline session with the capture window [1 ms, 2 ms] on the host
 * clock and two clock samples that put the device clock 500,000 ns behind the host
 * (vendor 100 -> host 500,100, vendor 1,000,100 -> host 1,500,100). Runtime events
 * carry host times, device events vendor times.
 *
 * Covers: clock alignment of device events; events outside the window dropped and
 * counted per kind (out_of_window[kind]); Kineto's rule at both edges (an event
 * straddling an edge or spanning the window is dropped, one starting or ending exactly on
 * an edge kept, one ns beyond dropped); flows: a runtime/device pair with both halves inside
 * gets DT_EVENT_FLOW on both and one "s"/"f" pair in the trace (the set of "s" ids
 * equals the set of "f" ids), a pair with one half outside gets no flow and counts one
 * unpaired half, a runtime call without device work gets no flow and counts nothing;
 * one correlation id with runtime calls at several API levels: one "s", on the deepest
 * level in the window (the first stored of equal ones);
 * drain order and flags; bad timestamps and unknown kinds counted; finalising twice. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "unit_session.h"

#define W0 1000000u  /* window start, host ns */
#define W1 2000000u  /* window stop, host ns */
#define SKEW 500000u /* host = vendor + SKEW */

static dt_session *window_session(void)
{
    dt_session *s = ut_offline_session();
    assert_non_null(s);
    dt_set_window(s, W0, W1);
    dt_add_clock_sample(s, 100, 100 + SKEW);
    dt_add_clock_sample(s, 1000100, 1000100 + SKEW);
    return s;
}

/* A device event on the vendor clock, given in HOST ns for readability. */
static devtrace_event device_at(int kind, uint64_t host_start, uint64_t host_end, uint64_t correlation)
{
    devtrace_event ev = ut_event(kind, host_start - SKEW, host_end - SKEW, correlation);
    ev.device = 0;
    ev.stream = 7;
    if (kind == DEVTRACE_KIND_MEMCPY) {
        ev.u.memcpy.bytes = 4096;
        ev.u.memcpy.direction = DEVTRACE_COPY_HTOD;
    } else if (kind == DEVTRACE_KIND_MEMSET) {
        ev.u.memset.bytes = 1024;
    }
    return ev;
}

static void emit(dt_session *s, devtrace_event ev)
{
    assert_int_equal(dt_emit(s, &ev), 0);
}

/* What devtrace_drain delivered. */
typedef struct drained {
    size_t n;
    devtrace_event ev[64];
    char name[64][32];
} drained;

static void collect(const devtrace_event *ev, const char *name, void *user)
{
    drained *d = user;
    if (d->n < 64) {
        d->ev[d->n] = *ev;
        snprintf(d->name[d->n], sizeof d->name[d->n], "%s", name);
    }
    d->n++;
}

/* The "id"s of the trace's flow events with this "ph", sorted, as text "a,b,c". */
static const char *flow_ids(const uj_value *root, const char *ph, char *buf, size_t len)
{
    const uj_value *ev[64];
    size_t n = ut_events_with_ph(root, ph, ev, 64);
    uint64_t ids[64];
    assert_true(n <= 64);
    for (size_t i = 0; i < n; i++) {
        const char *id = uj_get_raw(ev[i], "id");
        assert_non_null(id);
        assert_string_equal(uj_get_str(ev[i], "cat"), "ac2g");
        ids[i] = strtoull(id, NULL, 10);
    }
    for (size_t i = 1; i < n; i++) /* insertion sort */
        for (size_t j = i; j > 0 && ids[j - 1] > ids[j]; j--) {
            uint64_t t = ids[j];
            ids[j] = ids[j - 1];
            ids[j - 1] = t;
        }
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%llu", i ? "," : "", (unsigned long long)ids[i]);
    return buf;
}

static uj_value *trace_of(dt_session *s)
{
    char error[160] = "";
    uj_value *root = ut_chrome_trace(s, NULL, error);
    if (!root)
        fail_msg("the trace is not valid JSON: %s", error);
    return root;
}

static void test_device_times_are_mapped_to_host_realtime(void **state)
{
    (void)state;
    dt_session *s = window_session();
    devtrace_event k = ut_event(DEVTRACE_KIND_KERNEL, 500200, 500300, 0); /* vendor ns */
    k.flags = DEVTRACE_EVENT_HAS_QUEUED;
    k.u.kernel.queued_ns = 500150;
    emit(s, k);
    drained d = {0};
    assert_int_equal(devtrace_drain(s, collect, &d), 1);
    assert_int_equal(d.ev[0].start_ns, 1000200);
    assert_int_equal(d.ev[0].end_ns, 1000300);
    assert_int_equal(d.ev[0].u.kernel.queued_ns, 1000150);
    assert_true(d.ev[0].flags & DEVTRACE_EVENT_HOST_CLOCK);
    devtrace_close(s);
}

static void test_host_clock_events_are_not_mapped(void **state)
{
    (void)state;
    dt_session *s = window_session();
    emit(s, ut_runtime(W0 + 10, W0 + 20, 0));
    drained d = {0};
    assert_int_equal(devtrace_drain(s, collect, &d), 1);
    assert_int_equal(d.ev[0].start_ns, W0 + 10);
    assert_int_equal(d.ev[0].end_ns, W0 + 20);
    devtrace_close(s);
}

static void test_events_outside_the_window_are_dropped_and_counted_per_kind(void **state)
{
    (void)state;
    dt_session *s = window_session();
    const uint64_t before = W0 - 5000, after = W1 + 5000;
    /* Inside: one of each kind. */
    emit(s, device_at(DEVTRACE_KIND_KERNEL, W0 + 100, W0 + 200, 0));
    emit(s, device_at(DEVTRACE_KIND_MEMCPY, W0 + 300, W0 + 400, 0));
    emit(s, device_at(DEVTRACE_KIND_MEMSET, W0 + 500, W0 + 600, 0));
    emit(s, ut_runtime(W0 + 700, W0 + 800, 0));
    devtrace_event op = ut_runtime(W0 + 900, W0 + 950, 0);
    op.kind = DEVTRACE_KIND_CPU_OP;
    op.flags |= DEVTRACE_EVENT_HAS_EXTERNAL;
    emit(s, op);
    /* Before: 2 kernels, 1 memcpy, 3 runtime, 1 cpu op. */
    emit(s, device_at(DEVTRACE_KIND_KERNEL, before, before + 10, 0));
    emit(s, device_at(DEVTRACE_KIND_KERNEL, before + 20, before + 30, 0));
    emit(s, device_at(DEVTRACE_KIND_MEMCPY, before, before + 10, 0));
    for (int i = 0; i < 3; i++)
        emit(s, ut_runtime(before + 100 * (uint64_t)i, before + 100 * (uint64_t)i + 50, 0));
    op.start_ns = before;
    op.end_ns = before + 1;
    emit(s, op);
    /* After: 1 kernel, 2 memsets, 1 runtime. */
    emit(s, device_at(DEVTRACE_KIND_KERNEL, after, after + 10, 0));
    emit(s, device_at(DEVTRACE_KIND_MEMSET, after, after + 10, 0));
    emit(s, device_at(DEVTRACE_KIND_MEMSET, after + 20, after + 30, 0));
    emit(s, ut_runtime(after, after + 10, 0));

    drained d = {0};
    assert_int_equal(devtrace_drain(s, collect, &d), 5);
    for (size_t i = 0; i < d.n; i++)
        assert_in_range(d.ev[i].start_ns, W0, W1);
    const devtrace_stats *st = devtrace_stats_get(s);
    assert_int_equal(st->out_of_window[DEVTRACE_KIND_NONE], 0);
    assert_int_equal(st->out_of_window[DEVTRACE_KIND_KERNEL], 3);
    assert_int_equal(st->out_of_window[DEVTRACE_KIND_MEMCPY], 1);
    assert_int_equal(st->out_of_window[DEVTRACE_KIND_MEMSET], 2);
    assert_int_equal(st->out_of_window[DEVTRACE_KIND_RUNTIME], 4);
    assert_int_equal(st->out_of_window[DEVTRACE_KIND_CPU_OP], 1);
    assert_int_equal(st->out_of_window[DEVTRACE_KIND_EXTCORR], 0);
    for (int k = DEVTRACE_KIND_KERNEL; k <= DEVTRACE_KIND_CPU_OP; k++)
        assert_int_equal(st->events[k], 1);

    /* The same counts are written into the trace. */
    uj_value *root = trace_of(s);
    const uj_value *oow = uj_get(uj_get(root, "devtrace"), "out_of_window");
    assert_non_null(oow);
    assert_string_equal(uj_get_raw(oow, "kernel"), "3");
    assert_string_equal(uj_get_raw(oow, "memcpy"), "1");
    assert_string_equal(uj_get_raw(oow, "memset"), "2");
    assert_string_equal(uj_get_raw(oow, "runtime"), "4");
    assert_string_equal(uj_get_raw(oow, "cpu_op"), "1");
    uj_free(root);
    devtrace_close(s);
}

/* Kineto's rule (outOfRange: timestamp < start || timestamp + duration > end): an event
 * that starts before the window's start is dropped, even though it ends inside. */
static void test_event_straddling_the_window_start_is_dropped_and_counted(void **state)
{
    (void)state;
    dt_session *s = window_session();
    emit(s, device_at(DEVTRACE_KIND_KERNEL, W0 - 1000, W0 + 1000, 0));
    emit(s, device_at(DEVTRACE_KIND_KERNEL, W0 + 10, W0 + 20, 0));
    assert_int_equal(devtrace_drain(s, NULL, NULL), 1);
    assert_int_equal(devtrace_stats_get(s)->out_of_window[DEVTRACE_KIND_KERNEL], 1);
    /* The trace's time base is the window's start: nothing kept starts before it. */
    uj_value *root = trace_of(s);
    assert_string_equal(uj_get_raw(root, "baseTimeNanoseconds"), "1000000");
    const uj_value *k = ut_find_event(root, "X", "kernel", NULL);
    assert_non_null(k);
    assert_string_equal(uj_get_raw(k, "ts"), "0.010");
    assert_string_equal(uj_get_raw(k, "dur"), "0.010");
    assert_string_equal(uj_get_raw(uj_get(uj_get(root, "devtrace"), "out_of_window"), "kernel"), "1");
    uj_free(root);
    devtrace_close(s);
}

static void test_event_straddling_the_window_stop_is_dropped_and_counted(void **state)
{
    (void)state;
    dt_session *s = window_session();
    emit(s, ut_runtime(W1 - 10, W1 + 10, 0));
    assert_int_equal(devtrace_drain(s, NULL, NULL), 0);
    assert_int_equal(devtrace_stats_get(s)->out_of_window[DEVTRACE_KIND_RUNTIME], 1);
    devtrace_close(s);
}

static void test_event_spanning_the_whole_window_is_dropped_and_counted(void **state)
{
    (void)state;
    dt_session *s = window_session();
    emit(s, device_at(DEVTRACE_KIND_MEMCPY, W0 - 10, W1 + 10, 0));
    assert_int_equal(devtrace_drain(s, NULL, NULL), 0);
    assert_int_equal(devtrace_stats_get(s)->out_of_window[DEVTRACE_KIND_MEMCPY], 1);
    devtrace_close(s);
}

static void test_events_on_the_window_edges_are_kept_one_ns_beyond_dropped(void **state)
{
    (void)state;
    dt_session *s = window_session();
    emit(s, ut_runtime(W0, W0 + 100, 1));     /* starts on the start: kept */
    emit(s, ut_runtime(W0 - 1, W0 + 100, 2)); /* starts 1 ns before: dropped */
    emit(s, ut_runtime(W1 - 100, W1, 3));     /* ends on the stop: kept */
    emit(s, ut_runtime(W1 - 100, W1 + 1, 4)); /* ends 1 ns after: dropped */
    emit(s, ut_runtime(W0, W1, 5));           /* the whole window: kept */
    drained d = {0};
    assert_int_equal(devtrace_drain(s, collect, &d), 3);
    assert_int_equal(d.ev[0].correlation, 5); /* same start: the longer first */
    assert_int_equal(d.ev[1].correlation, 1);
    assert_int_equal(d.ev[2].correlation, 3);
    assert_int_equal(devtrace_stats_get(s)->out_of_window[DEVTRACE_KIND_RUNTIME], 2);
    devtrace_close(s);
}

static void test_open_window_keeps_everything_after_its_start(void **state)
{
    (void)state;
    dt_session *s = ut_offline_session();
    assert_non_null(s);
    dt_set_window(s, W0, 0); /* stop not known */
    emit(s, ut_runtime(W0 - 10, W0 - 5, 0));
    emit(s, ut_runtime(UINT64_MAX - 10, UINT64_MAX - 5, 0));
    assert_int_equal(devtrace_drain(s, NULL, NULL), 1);
    assert_int_equal(devtrace_stats_get(s)->out_of_window[DEVTRACE_KIND_RUNTIME], 1);
    devtrace_close(s);
}

static void test_flow_pairs_inside_the_window_are_marked_on_both_halves(void **state)
{
    (void)state;
    dt_session *s = window_session();
    emit(s, ut_runtime(W0 + 100, W0 + 200, 11));
    emit(s, device_at(DEVTRACE_KIND_KERNEL, W0 + 300, W0 + 400, 11));
    emit(s, ut_runtime(W0 + 500, W0 + 600, 12));
    emit(s, device_at(DEVTRACE_KIND_MEMCPY, W0 + 700, W0 + 800, 12));
    emit(s, ut_runtime(W0 + 900, W0 + 1000, 13));
    emit(s, device_at(DEVTRACE_KIND_MEMSET, W0 + 1100, W0 + 1200, 13));
    assert_int_equal(dt_session_finalize(s), 0);
    assert_int_equal(s->nsorted, 6);
    for (size_t i = 0; i < s->nsorted; i++)
        assert_true(s->sorted[i]->flags & DT_EVENT_FLOW);
    assert_int_equal(devtrace_stats_get(s)->unpaired_flows, 0);

    uj_value *root = trace_of(s);
    char sids[256], fids[256];
    assert_string_equal(flow_ids(root, "s", sids, sizeof sids), "11,12,13");
    assert_string_equal(flow_ids(root, "f", fids, sizeof fids), "11,12,13");
    /* "s" sits on the runtime call's process/thread and time, "f" (bp "e") on the
     * device event's. */
    const uj_value *ev[8];
    assert_int_equal(ut_events_with_ph(root, "s", ev, 8), 3);
    assert_string_equal(uj_get_raw(ev[0], "pid"), "100");
    assert_string_equal(uj_get_raw(ev[0], "tid"), "200");
    assert_string_equal(uj_get_raw(ev[0], "ts"), "0.100");
    assert_int_equal(ut_events_with_ph(root, "f", ev, 8), 3);
    assert_string_equal(uj_get_str(ev[0], "bp"), "e");
    assert_string_equal(uj_get_raw(ev[0], "pid"), "0");
    assert_string_equal(uj_get_raw(ev[0], "tid"), "7");
    assert_string_equal(uj_get_raw(ev[0], "ts"), "0.300");
    uj_free(root);
    devtrace_close(s);
}

static void test_device_event_whose_runtime_is_outside_the_window_gets_no_flow(void **state)
{
    (void)state;
    dt_session *s = window_session();
    emit(s, ut_runtime(W0 - 500, W0 - 400, 21));
    emit(s, device_at(DEVTRACE_KIND_KERNEL, W0 + 100, W0 + 200, 21));
    drained d = {0};
    assert_int_equal(devtrace_drain(s, collect, &d), 1);
    assert_int_equal(d.ev[0].kind, DEVTRACE_KIND_KERNEL);
    assert_false(s->sorted[0]->flags & DT_EVENT_FLOW);
    assert_int_equal(devtrace_stats_get(s)->unpaired_flows, 1);
    uj_value *root = trace_of(s);
    char ids[64];
    assert_string_equal(flow_ids(root, "s", ids, sizeof ids), "");
    assert_string_equal(flow_ids(root, "f", ids, sizeof ids), "");
    /* The kernel still names its correlation id. */
    const uj_value *k = ut_find_event(root, "X", "kernel", NULL);
    assert_string_equal(uj_get_raw(uj_get(k, "args"), "correlation"), "21");
    uj_free(root);
    devtrace_close(s);
}

static void test_runtime_whose_device_work_is_outside_the_window_gets_no_flow(void **state)
{
    (void)state;
    dt_session *s = window_session();
    emit(s, ut_runtime(W1 - 200, W1 - 100, 22));
    emit(s, device_at(DEVTRACE_KIND_KERNEL, W1 + 100, W1 + 200, 22));
    assert_int_equal(devtrace_drain(s, NULL, NULL), 1);
    assert_int_equal(devtrace_stats_get(s)->unpaired_flows, 1);
    uj_value *root = trace_of(s);
    char ids[64];
    assert_string_equal(flow_ids(root, "s", ids, sizeof ids), "");
    assert_string_equal(flow_ids(root, "f", ids, sizeof ids), "");
    uj_free(root);
    devtrace_close(s);
}

static void test_runtime_call_without_device_work_gets_no_flow_and_is_not_counted(void **state)
{
    (void)state;
    dt_session *s = window_session();
    emit(s, ut_runtime(W0 + 100, W0 + 200, 31));
    assert_int_equal(devtrace_drain(s, NULL, NULL), 1);
    assert_false(s->sorted[0]->flags & DT_EVENT_FLOW);
    assert_int_equal(devtrace_stats_get(s)->unpaired_flows, 0);
    uj_value *root = trace_of(s);
    char ids[64];
    assert_string_equal(flow_ids(root, "s", ids, sizeof ids), "");
    uj_free(root);
    devtrace_close(s);
}

static void test_device_event_without_any_runtime_counts_one_unpaired(void **state)
{
    (void)state;
    dt_session *s = window_session();
    emit(s, device_at(DEVTRACE_KIND_MEMSET, W0 + 100, W0 + 200, 41));
    assert_int_equal(devtrace_drain(s, NULL, NULL), 1);
    assert_int_equal(devtrace_stats_get(s)->unpaired_flows, 1);
    devtrace_close(s);
}

static void test_pair_entirely_outside_the_window_counts_no_unpaired_half(void **state)
{
    (void)state;
    dt_session *s = window_session();
    emit(s, ut_runtime(W0 - 500, W0 - 400, 51));
    emit(s, device_at(DEVTRACE_KIND_KERNEL, W0 - 300, W0 - 200, 51));
    assert_int_equal(devtrace_drain(s, NULL, NULL), 0);
    const devtrace_stats *st = devtrace_stats_get(s);
    assert_int_equal(st->unpaired_flows, 0);
    assert_int_equal(st->out_of_window[DEVTRACE_KIND_RUNTIME], 1);
    assert_int_equal(st->out_of_window[DEVTRACE_KIND_KERNEL], 1);
    devtrace_close(s);
}

static void test_unpaired_flows_are_counted_exactly(void **state)
{
    (void)state;
    dt_session *s = window_session();
    uint64_t t = W0 + 1000;
    /* 2 pairs inside: no unpaired half. */
    for (uint64_t c = 101; c <= 102; c++, t += 1000) {
        emit(s, ut_runtime(t, t + 100, c));
        emit(s, device_at(DEVTRACE_KIND_KERNEL, t + 200, t + 300, c));
    }
    /* 3 device events whose runtime is before the window: 3 unpaired. */
    for (uint64_t c = 201; c <= 203; c++, t += 1000) {
        emit(s, ut_runtime(W0 - 900 + c, W0 - 800 + c, c));
        emit(s, device_at(DEVTRACE_KIND_MEMCPY, t, t + 100, c));
    }
    /* 1 runtime whose device work is after the window: 1 unpaired. */
    emit(s, ut_runtime(t, t + 100, 301));
    emit(s, device_at(DEVTRACE_KIND_KERNEL, W1 + 10, W1 + 20, 301));
    t += 1000;
    /* 2 device events without any runtime: 2 unpaired. */
    for (uint64_t c = 401; c <= 402; c++, t += 1000)
        emit(s, device_at(DEVTRACE_KIND_KERNEL, t, t + 100, c));
    /* 4 runtime calls without device work: nothing. */
    for (uint64_t c = 501; c <= 504; c++, t += 1000)
        emit(s, ut_runtime(t, t + 100, c));

    assert_int_equal(devtrace_drain(s, NULL, NULL), 4 + 3 + 1 + 2 + 4);
    assert_int_equal(devtrace_stats_get(s)->unpaired_flows, 3 + 1 + 2);
    uj_value *root = trace_of(s);
    char sids[64], fids[64];
    assert_string_equal(flow_ids(root, "s", sids, sizeof sids), "101,102");
    assert_string_equal(flow_ids(root, "f", fids, sizeof fids), "101,102");
    assert_string_equal(uj_get_raw(uj_get(root, "devtrace"), "unpaired_flows"), "6");
    uj_free(root);
    devtrace_close(s);
}

/* A runtime call at an API level of the given depth (MSPTI: 1 ACL, 3 node, 4 runtime). */
static devtrace_event runtime_level(uint64_t start, uint64_t end, uint64_t correlation, uint32_t depth)
{
    devtrace_event ev = ut_runtime(start, end, correlation);
    ev.flags |= DEVTRACE_EVENT_HAS_LEVEL;
    ev.u.runtime.depth = depth;
    return ev;
}

/* The runtime events of the session that carry a flow, as "start ns-W0" text "a,b". */
static const char *flow_runtime_starts(const dt_session *s, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < s->nsorted; i++) {
        const devtrace_event *ev = s->sorted[i];
        if (ev->kind == DEVTRACE_KIND_RUNTIME && (ev->flags & DT_EVENT_FLOW))
            used += (size_t)snprintf(buf + used, len - used, "%s%llu", used ? "," : "",
                                     (unsigned long long)(ev->start_ns - W0));
    }
    return buf;
}

/* One launch recorded at three API levels with one correlation id (the runtime level
 * stored first, then the outer ones): the flow starts at the deepest, the runtime level,
 * whatever the order they were stored in; the ACL and node calls carry no half and count
 * as no unpaired half. */
static void test_flow_starts_at_the_deepest_api_level_of_a_correlation(void **state)
{
    (void)state;
    dt_session *s = window_session();
    emit(s, runtime_level(W0 + 300, W0 + 500, 21, 4));
    emit(s, runtime_level(W0 + 100, W0 + 900, 21, 1));
    emit(s, runtime_level(W0 + 200, W0 + 800, 21, 3));
    emit(s, device_at(DEVTRACE_KIND_KERNEL, W0 + 1000, W0 + 1100, 21));
    /* Another launch, its levels stored outermost first: node is the deepest there. */
    emit(s, runtime_level(W0 + 2000, W0 + 2900, 22, 1));
    emit(s, runtime_level(W0 + 2100, W0 + 2800, 22, 3));
    emit(s, device_at(DEVTRACE_KIND_KERNEL, W0 + 3000, W0 + 3100, 22));
    assert_int_equal(dt_session_finalize(s), 0);
    char starts[64];
    assert_string_equal(flow_runtime_starts(s, starts, sizeof starts), "300,2100");
    assert_int_equal(devtrace_stats_get(s)->unpaired_flows, 0);

    uj_value *root = trace_of(s);
    char sids[64], fids[64];
    assert_string_equal(flow_ids(root, "s", sids, sizeof sids), "21,22");
    assert_string_equal(flow_ids(root, "f", fids, sizeof fids), "21,22");
    const uj_value *ev[8];
    assert_int_equal(ut_events_with_ph(root, "s", ev, 8), 2);
    assert_string_equal(uj_get_raw(ev[0], "ts"), "0.300");
    assert_string_equal(uj_get_raw(ev[1], "ts"), "2.100");
    uj_free(root);
    devtrace_close(s);
}

/* Two calls of one level with one id: one half, on the first stored; a deeper level
 * outside the window leaves the flow on the deepest inside it; calls without a level rank
 * below every level. */
static void test_one_flow_start_per_correlation_on_ties_and_at_the_window_edge(void **state)
{
    (void)state;
    dt_session *s = window_session();
    emit(s, runtime_level(W0 + 500, W0 + 600, 31, 4));
    emit(s, runtime_level(W0 + 100, W0 + 200, 31, 4));
    emit(s, device_at(DEVTRACE_KIND_KERNEL, W0 + 1000, W0 + 1100, 31));
    emit(s, runtime_level(W0 - 50, W0 + 50, 32, 4)); /* straddles the window start: dropped */
    emit(s, runtime_level(W0 + 2000, W0 + 2100, 32, 1));
    emit(s, device_at(DEVTRACE_KIND_KERNEL, W0 + 3000, W0 + 3100, 32));
    emit(s, ut_runtime(W0 + 4000, W0 + 4900, 33));
    emit(s, runtime_level(W0 + 4200, W0 + 4300, 33, 1));
    emit(s, device_at(DEVTRACE_KIND_KERNEL, W0 + 5000, W0 + 5100, 33));
    assert_int_equal(dt_session_finalize(s), 0);
    char starts[64];
    assert_string_equal(flow_runtime_starts(s, starts, sizeof starts), "500,2000,4200");
    assert_int_equal(devtrace_stats_get(s)->unpaired_flows, 0);
    uj_value *root = trace_of(s);
    char sids[64], fids[64];
    assert_string_equal(flow_ids(root, "s", sids, sizeof sids), "31,32,33");
    assert_string_equal(flow_ids(root, "f", fids, sizeof fids), "31,32,33");
    uj_free(root);
    devtrace_close(s);
}

/* A memory event of process pid on device dev at host time t (an allocation, or a release). */
static devtrace_event memory_at(uint32_t pid, uint32_t dev, uint64_t t, uint64_t bytes, int release)
{
    devtrace_event ev = ut_event(DEVTRACE_KIND_MEMORY, t, t, 0);
    ev.flags = DEVTRACE_EVENT_HOST_CLOCK;
    ev.device = ev.stream = pid;
    ev.u.memory.bytes = bytes;
    ev.u.memory.release = (uint32_t)release;
    ev.u.memory.device_id = dev;
    ev.u.memory.stream_id = UINT32_MAX;
    return ev;
}

/* Two processes of one trace, each on its device 0, interleaved, and one on its device 1:
 * each running total is the process's own on that device. */
static void test_memory_totals_are_per_process_and_device(void **state)
{
    (void)state;
    dt_session *s = window_session();
    emit(s, memory_at(100, 0, W0 + 100, 4096, 0));
    emit(s, memory_at(101, 0, W0 + 200, 1000, 0));
    emit(s, memory_at(100, 1, W0 + 300, 7, 0));
    emit(s, memory_at(100, 0, W0 + 400, 4096, 1));
    emit(s, memory_at(101, 0, W0 + 500, 24, 0));
    emit(s, memory_at(101, 0, W0 + 600, 1024, 1));
    assert_int_equal(dt_session_finalize(s), 0);
    static const int64_t want[] = {4096, 1000, 7, 0, 1024, 0};
    assert_int_equal(s->nsorted, 6);
    for (size_t i = 0; i < 6; i++)
        assert_int_equal(s->sorted[i]->u.memory.total, want[i]);
    devtrace_close(s);
}

static void test_drain_delivers_events_in_start_order_without_internal_flags(void **state)
{
    (void)state;
    dt_session *s = window_session();
    devtrace_event k = device_at(DEVTRACE_KIND_KERNEL, W0 + 500, W0 + 600, 61);
    k.name_id = dt_session_intern(s, "kernel_b");
    emit(s, k);
    devtrace_event r = ut_runtime(W0 + 100, W0 + 200, 61);
    r.name_id = dt_session_intern(s, "cudaLaunchKernel");
    emit(s, r);
    emit(s, ut_runtime(W0 + 300, W0 + 400, 0));
    drained d = {0};
    assert_int_equal(devtrace_drain(s, collect, &d), 3);
    assert_int_equal(d.ev[0].start_ns, W0 + 100);
    assert_string_equal(d.name[0], "cudaLaunchKernel");
    assert_int_equal(d.ev[1].start_ns, W0 + 300);
    assert_string_equal(d.name[1], "");
    assert_int_equal(d.ev[2].start_ns, W0 + 500);
    assert_string_equal(d.name[2], "kernel_b");
    for (size_t i = 0; i < d.n; i++)
        assert_int_equal(d.ev[i].flags & DT_EVENT_FLOW, 0);
    assert_true(s->sorted[0]->flags & DT_EVENT_FLOW); /* kept inside for the sinks */
    devtrace_close(s);
}

static void test_end_before_start_is_dropped_and_counted_as_bad_timestamp(void **state)
{
    (void)state;
    dt_session *s = window_session();
    emit(s, ut_runtime(W0 + 200, W0 + 100, 0));
    emit(s, device_at(DEVTRACE_KIND_KERNEL, W0 + 300, W0 + 300, 0)); /* zero length: fine */
    assert_int_equal(devtrace_drain(s, NULL, NULL), 1);
    const devtrace_stats *st = devtrace_stats_get(s);
    assert_int_equal(st->bad_timestamps, 1);
    assert_int_equal(st->out_of_window[DEVTRACE_KIND_RUNTIME], 0);
    devtrace_close(s);
}

static void test_event_of_unknown_kind_is_dropped_and_counted_as_malformed(void **state)
{
    (void)state;
    dt_session *s = window_session();
    emit(s, ut_event(DEVTRACE_KIND_NONE, W0 + 100, W0 + 200, 0));
    emit(s, ut_event(DEVTRACE_KIND_COUNT, W0 + 100, W0 + 200, 0));
    emit(s, ut_event(0xffff, W0 + 100, W0 + 200, 0));
    emit(s, ut_runtime(W0 + 100, W0 + 200, 0));
    assert_int_equal(devtrace_drain(s, NULL, NULL), 1);
    assert_int_equal(devtrace_stats_get(s)->malformed_records, 3);
    devtrace_close(s);
}

static void test_finalizing_twice_changes_nothing(void **state)
{
    (void)state;
    dt_session *s = window_session();
    emit(s, ut_runtime(W0 - 500, W0 - 400, 71));
    emit(s, device_at(DEVTRACE_KIND_KERNEL, W0 + 100, W0 + 200, 71));
    emit(s, device_at(DEVTRACE_KIND_KERNEL, W0 + 300, W0 + 400, 0));
    assert_int_equal(devtrace_drain(s, NULL, NULL), 2);
    assert_int_equal(dt_session_finalize(s), 0);
    drained d = {0};
    assert_int_equal(devtrace_drain(s, collect, &d), 2);
    assert_int_equal(d.ev[0].start_ns, W0 + 100); /* not mapped a second time */
    const devtrace_stats *st = devtrace_stats_get(s);
    assert_int_equal(st->out_of_window[DEVTRACE_KIND_RUNTIME], 1);
    assert_int_equal(st->unpaired_flows, 1);
    assert_int_equal(st->events[DEVTRACE_KIND_KERNEL], 2);
    devtrace_close(s);
}

static void test_record_window_end_marks_the_window_stop(void **state)
{
    (void)state;
    dt_session *s = window_session();
    emit(s, ut_runtime(W0 + 100, W0 + 200, 0));
    uj_value *root = trace_of(s);
    assert_string_equal(uj_get_raw(root, "baseTimeNanoseconds"), "1000000");
    const uj_value *ev[4];
    assert_int_equal(ut_events_with_ph(root, "i", ev, 4), 1);
    assert_string_equal(uj_get_str(ev[0], "name"), "Record Window End");
    assert_string_equal(uj_get_raw(ev[0], "ts"), "1000.000");
    uj_free(root);
    devtrace_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_times_are_mapped_to_host_realtime),
        cmocka_unit_test(test_host_clock_events_are_not_mapped),
        cmocka_unit_test(test_events_outside_the_window_are_dropped_and_counted_per_kind),
        cmocka_unit_test(test_event_straddling_the_window_start_is_dropped_and_counted),
        cmocka_unit_test(test_event_straddling_the_window_stop_is_dropped_and_counted),
        cmocka_unit_test(test_event_spanning_the_whole_window_is_dropped_and_counted),
        cmocka_unit_test(test_events_on_the_window_edges_are_kept_one_ns_beyond_dropped),
        cmocka_unit_test(test_open_window_keeps_everything_after_its_start),
        cmocka_unit_test(test_flow_pairs_inside_the_window_are_marked_on_both_halves),
        cmocka_unit_test(test_device_event_whose_runtime_is_outside_the_window_gets_no_flow),
        cmocka_unit_test(test_runtime_whose_device_work_is_outside_the_window_gets_no_flow),
        cmocka_unit_test(test_runtime_call_without_device_work_gets_no_flow_and_is_not_counted),
        cmocka_unit_test(test_device_event_without_any_runtime_counts_one_unpaired),
        cmocka_unit_test(test_pair_entirely_outside_the_window_counts_no_unpaired_half),
        cmocka_unit_test(test_unpaired_flows_are_counted_exactly),
        cmocka_unit_test(test_flow_starts_at_the_deepest_api_level_of_a_correlation),
        cmocka_unit_test(test_one_flow_start_per_correlation_on_ties_and_at_the_window_edge),
        cmocka_unit_test(test_memory_totals_are_per_process_and_device),
        cmocka_unit_test(test_drain_delivers_events_in_start_order_without_internal_flags),
        cmocka_unit_test(test_end_before_start_is_dropped_and_counted_as_bad_timestamp),
        cmocka_unit_test(test_event_of_unknown_kind_is_dropped_and_counted_as_malformed),
        cmocka_unit_test(test_finalizing_twice_changes_nothing),
        cmocka_unit_test(test_record_window_end_marks_the_window_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
