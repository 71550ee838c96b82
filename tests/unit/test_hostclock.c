/* test_hostclock.c: the TSC as a backend's host timestamp (src/core/hostclock.c).
 *
 * Covers: $DEVTRACE_HOST_CLOCK (unset, empty, tsc, clock, a bad value refused by
 * devtrace_open with its one-line message); whether the counter is usable, from the
 * clocksource file (tsc, another one; always refused off x86-64); ticks converted between
 * two samples with exact values (interpolation, extrapolation on both sides, samples in
 * either order, one point); a paired sample (the clock read inside the counter window, a
 * failed read refused); finalise converting marked events exactly with a piecewise map
 * from three samples, leaving unmarked events alone, and counting marked events it
 * cannot convert (one sample) in bad_timestamps with a note; dt_ticks_start honouring
 * "clock" (no counter) and, on x86-64, "tsc" (two samples, a period); the operators' ops of a
 * session whose backend stamps nothing with the counter taking it (on CLOCK_REALTIME at
 * finalise), except in devtrace record's session. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/hostclock.h"
#include "core/session.h"
#include "unit_session.h"

static void test_env_unset_or_empty_is_automatic(void **state)
{
    (void)state;
    dt_host_clock_choice c = DT_HOST_CLOCK_CLOCK;
    devtrace_error err = {0, ""};
    unsetenv("DEVTRACE_HOST_CLOCK");
    assert_int_equal(dt_host_clock_choice_from_env(&c, &err), 0);
    assert_int_equal(c, DT_HOST_CLOCK_AUTO);
    setenv("DEVTRACE_HOST_CLOCK", "", 1);
    assert_int_equal(dt_host_clock_choice_from_env(&c, &err), 0);
    assert_int_equal(c, DT_HOST_CLOCK_AUTO);
    unsetenv("DEVTRACE_HOST_CLOCK");
}

static void test_env_clock_forces_the_backend_clock(void **state)
{
    (void)state;
    dt_host_clock_choice c = DT_HOST_CLOCK_AUTO;
    devtrace_error err = {0, ""};
    setenv("DEVTRACE_HOST_CLOCK", "clock", 1);
    assert_int_equal(dt_host_clock_choice_from_env(&c, &err), 0);
    assert_int_equal(c, DT_HOST_CLOCK_CLOCK);
    unsetenv("DEVTRACE_HOST_CLOCK");
}

static void test_env_tsc_forces_the_counter_where_there_is_one(void **state)
{
    (void)state;
    dt_host_clock_choice c = DT_HOST_CLOCK_AUTO;
    devtrace_error err = {0, ""};
    setenv("DEVTRACE_HOST_CLOCK", "tsc", 1);
    int rc = dt_host_clock_choice_from_env(&c, &err);
    unsetenv("DEVTRACE_HOST_CLOCK");
#if DT_HAVE_TSC
    assert_int_equal(rc, 0);
    assert_int_equal(c, DT_HOST_CLOCK_TSC);
#else
    assert_int_equal(rc, -1);
    assert_int_equal(err.code, DEVTRACE_EINVAL);
    assert_string_equal(err.message, "$DEVTRACE_HOST_CLOCK=tsc: this CPU has no time-stamp counter devtrace can read "
                                     "(x86-64 only); unset it or set clock");
#endif
}

static void test_env_bad_value_refused_at_open_with_one_line(void **state)
{
    (void)state;
    const char *bad[] = {"TSC", "tsc ", "rdtsc", "1", "clock,tsc"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        devtrace_config cfg;
        devtrace_config_init(&cfg);
        cfg.backend = "none";
        devtrace_error err = {0, ""};
        setenv("DEVTRACE_HOST_CLOCK", bad[i], 1);
        devtrace_session *s = devtrace_open(&cfg, &err);
        unsetenv("DEVTRACE_HOST_CLOCK");
        assert_null(s);
        assert_int_equal(err.code, DEVTRACE_EINVAL);
        char want[200];
        snprintf(want, sizeof want,
                 "$DEVTRACE_HOST_CLOCK=\"%s\" is not tsc or clock; unset it (automatic) or set one of them", bad[i]);
        assert_string_equal(err.message, want);
        assert_null(strchr(err.message, '\n'));
    }
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_counter_usable_only_with_the_tsc_clocksource(void **state)
{
    (void)state;
    char path[] = "/tmp/devtrace-clocksource-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    char why[256] = "";
    write_file(path, "tsc\n");
    int tsc = dt_tsc_usable(path, why, sizeof why);
    write_file(path, "kvm-clock\n");
    int kvm = dt_tsc_usable(path, why, sizeof why);
    unlink(path);
#if DT_HAVE_TSC
    assert_int_equal(tsc, 1);
    assert_int_equal(kvm, 0);
    assert_string_equal(why, "the kernel's clocksource is \"kvm-clock\", not tsc");
#else
    assert_int_equal(tsc, 0);
    assert_int_equal(kvm, 0);
    assert_string_equal(why, "no time-stamp counter on this architecture (x86-64 only)");
#endif
}

static void test_ticks_between_two_samples_exact(void **state)
{
    (void)state;
    /* 3 ticks per ns: 1000 ticks -> 5000 ns, 4000 ticks -> 6000 ns. */
    dt_clock_sample a = {1000, 5000}, b = {4000, 6000};
    assert_int_equal(dt_ticks_between(a, b, 1000), 5000);
    assert_int_equal(dt_ticks_between(a, b, 4000), 6000);
    assert_int_equal(dt_ticks_between(a, b, 2500), 5500);
    assert_int_equal(dt_ticks_between(a, b, 2501), 5500); /* 5500.33 rounds down */
    assert_int_equal(dt_ticks_between(a, b, 2502), 5501); /* 5500.67 rounds up */
    assert_int_equal(dt_ticks_between(a, b, 7000), 7000); /* beyond the later sample, on the same line */
    assert_int_equal(dt_ticks_between(a, b, 400), 4800);  /* before the earlier one */
    assert_int_equal(dt_ticks_between(b, a, 2500), 5500); /* either order */
    assert_int_equal(dt_ticks_between(a, a, 1500), 5500); /* one point: by its offset */
}

static uint64_t fake_clock_ns;
static int fake_clock_fails;

static int fake_read(uint64_t *ns)
{
    *ns = fake_clock_ns;
    return fake_clock_fails ? -1 : 0;
}

static void test_pair_reads_the_clock_inside_the_counter_window(void **state)
{
    (void)state;
    dt_clock_sample p;
    fake_clock_ns = 123456789;
    fake_clock_fails = 0;
    uint64_t before = dt_tsc_read();
    assert_int_equal(dt_ticks_pair(fake_read, &p), 0);
    uint64_t after = dt_tsc_read();
    assert_int_equal(p.host_ns, 123456789);
#if DT_HAVE_TSC
    assert_true(p.vendor_ns >= before && p.vendor_ns <= after);
#else
    (void)before, (void)after;
#endif
    fake_clock_fails = 1;
    assert_int_equal(dt_ticks_pair(fake_read, &p), -1);
    fake_clock_fails = 0;
}

typedef struct drained {
    devtrace_event ev[8];
    int n;
} drained;

static void collect(const devtrace_event *ev, const char *name, void *user)
{
    (void)name;
    drained *d = user;
    if (d->n < 8)
        d->ev[d->n++] = *ev;
}

static devtrace_event ticks_runtime(uint64_t start, uint64_t end, uint64_t correlation)
{
    devtrace_event ev = ut_event(DEVTRACE_KIND_RUNTIME, start, end, correlation);
    ev.flags = DT_EVENT_TICKS;
    return ev;
}

static void test_finalise_converts_marked_events_exactly(void **state)
{
    (void)state;
    dt_session *s = ut_offline_session();
    /* Two segments: 3 ticks per ns, then 2 ticks per ns. */
    dt_add_tick_sample(s, 4000, 6000);
    dt_add_tick_sample(s, 1000, 5000); /* any order */
    dt_add_tick_sample(s, 8000, 8000);
    dt_emit(s, &(devtrace_event){0});                 /* kind NONE: counted malformed, not converted */
    devtrace_event a = ticks_runtime(2500, 5000, 1);  /* 5500, 6000 + 1000/2 = 6500 */
    devtrace_event b = ticks_runtime(9000, 10001, 2); /* beyond: 8500, 9000.5 -> 9001 */
    devtrace_event c = ut_runtime(7000, 7100, 3);     /* not marked: host clock already */
    dt_emit(s, &a);
    dt_emit(s, &b);
    dt_emit(s, &c);
    drained d = {.n = 0};
    assert_int_equal(devtrace_drain(s, collect, &d), 3);
    assert_int_equal(d.n, 3);
    assert_int_equal(d.ev[0].start_ns, 5500);
    assert_int_equal(d.ev[0].end_ns, 6500);
    assert_int_equal(d.ev[1].start_ns, 7000);
    assert_int_equal(d.ev[1].end_ns, 7100);
    assert_int_equal(d.ev[2].start_ns, 8500);
    assert_int_equal(d.ev[2].end_ns, 9001);
    for (int i = 0; i < 3; i++)
        assert_int_equal(d.ev[i].flags & DT_EVENT_TICKS, 0);
    assert_int_equal(devtrace_stats_get(s)->bad_timestamps, 0);
    devtrace_close(s);
}

static void test_marked_events_without_two_samples_counted_bad(void **state)
{
    (void)state;
    dt_session *s = ut_offline_session();
    dt_add_tick_sample(s, 1000, 5000);
    devtrace_event a = ticks_runtime(2500, 5000, 1);
    devtrace_event c = ut_runtime(7000, 7100, 3);
    dt_emit(s, &a);
    dt_emit(s, &c);
    drained d = {.n = 0};
    assert_int_equal(devtrace_drain(s, collect, &d), 1);
    assert_int_equal(d.ev[0].correlation, 3);
    assert_int_equal(devtrace_stats_get(s)->bad_timestamps, 1);
    assert_int_equal(s->nnotes, 1);
    assert_string_equal(s->notes[0], "1 runtime events were stamped with the TSC but the samples that convert its "
                                     "ticks are missing (1 of the 2 needed): counted in bad_timestamps");
    devtrace_close(s);
}

static int raw_clock(uint64_t *ns)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    *ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    return 0;
}

static void test_start_honours_the_choice(void **state)
{
    (void)state;
    dt_session *s = ut_offline_session();
    s->host_clock = DT_HOST_CLOCK_CLOCK;
    assert_int_equal(dt_ticks_start(s, raw_clock), 0);
    assert_int_equal(s->ticks.on, 0);
    assert_int_equal(s->ntick_samples, 0);
    assert_int_equal(dt_ticks_sample(s), -1); /* not stamping: no sample */
    s->host_clock = DT_HOST_CLOCK_TSC;
    int on = dt_ticks_start(s, raw_clock);
#if DT_HAVE_TSC
    assert_int_equal(on, 1);
    assert_int_equal(s->ntick_samples, 2);
    assert_true(s->tick_samples[1].host_ns - s->tick_samples[0].host_ns >= 200000);
    assert_true(s->ticks.period > 0);
    assert_int_equal(dt_ticks_sample(s), 0);
    assert_int_equal(s->ntick_samples, 3);
#else
    assert_int_equal(on, 0);
#endif
    devtrace_close(s);
}

/* A vendor clock 1 s ahead of CLOCK_REALTIME whose first read stalls 3 ms inside the
 * bracket (as a preempted thread would): the sample pairs a later, narrow read instead, so
 * its host time is the vendor time less 1 s to within the bracket, not 1.5 ms off. */
static int stalled_reads;
static int vendor_read_stalling_once(uint64_t *ns)
{
    *ns = dt_realtime_ns() + 1000000000ull;
    if (stalled_reads++ == 0) {
        struct timespec stall = {0, 3000000};
        nanosleep(&stall, NULL);
    }
    return 0;
}

static void test_a_vendor_read_stalled_inside_its_bracket_is_taken_again(void **state)
{
    (void)state;
    dt_session *s = ut_offline_session();
    stalled_reads = 0;
    uint64_t vendor = 0, host = 0;
    assert_int_equal(dt_sample_vendor_clock(s, vendor_read_stalling_once, 0, &vendor, &host), 0);
    assert_true(stalled_reads >= 2);
    assert_int_equal(s->nsamples, 1);
    assert_int_equal(s->samples[0].vendor_ns, vendor);
    int64_t off = (int64_t)(vendor - 1000000000ull) - (int64_t)host;
    assert_in_range(off < 0 ? -off : off, 0, DT_CLOCK_BRACKET_NS);
    devtrace_close(s);
}

/* The operator observer's ops on a session of this process whose backend stamps nothing
 * with the counter (none): with the counter forced, they are stamped in ticks and leave
 * finalise on CLOCK_REALTIME, marked host clock like ops stamped with the clock, inside the
 * realtime reads around them (to within a sample's pairing); with the clock forced, no
 * counter; devtrace record's session (owner_collector) keeps the clock. */
static void none_session_op(const char *host_clock, int owner_collector, int want_ticks)
{
    setenv("DEVTRACE_HOST_CLOCK", host_clock, 1);
    devtrace_config cfg;
    devtrace_config_init(&cfg);
    cfg.backend = "none";
    devtrace_error err;
    devtrace_session *s = devtrace_open(&cfg, &err);
    unsetenv("DEVTRACE_HOST_CLOCK");
    assert_non_null(s);
    s->owner_collector = owner_collector;
    assert_int_equal(devtrace_start(s), 0);
    assert_int_equal(s->ticks.on, want_ticks);
    assert_int_equal(s->ntick_samples, want_ticks ? 2 : 0);
    assert_int_equal(devtrace_set_default_session(s), 0);
    uint64_t before = dt_realtime_ns();
    assert_int_equal(devtrace_op_enter("aten::add", 7, -1, 0), 0);
    assert_int_equal(devtrace_op_exit(7), 0);
    uint64_t after = dt_realtime_ns();
    s->owner_collector = 0; /* so that the default can be reset */
    assert_int_equal(devtrace_set_default_session(NULL), 0);
    assert_int_equal(devtrace_stop(s), 0);
    assert_int_equal(s->ntick_samples, want_ticks ? 3 : 0); /* stop's pair */
    drained d = {.n = 0};
    assert_int_equal(devtrace_drain(s, collect, &d), 1);
    assert_int_equal(d.ev[0].kind, DEVTRACE_KIND_CPU_OP);
    assert_int_equal(d.ev[0].flags, DEVTRACE_EVENT_HAS_EXTERNAL | DEVTRACE_EVENT_HOST_CLOCK);
    assert_in_range(d.ev[0].start_ns, before - DT_CLOCK_BRACKET_NS, after + DT_CLOCK_BRACKET_NS);
    assert_in_range(d.ev[0].end_ns, d.ev[0].start_ns, after + DT_CLOCK_BRACKET_NS);
    assert_int_equal(devtrace_stats_get(s)->bad_timestamps, 0);
    devtrace_close(s);
}

static void test_ops_of_a_session_without_backend_ticks_take_the_counter(void **state)
{
    (void)state;
    none_session_op("clock", 0, 0);
    none_session_op("tsc", 1, 0);
    none_session_op("tsc", 0, DT_HAVE_TSC);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_vendor_read_stalled_inside_its_bracket_is_taken_again),
        cmocka_unit_test(test_env_unset_or_empty_is_automatic),
        cmocka_unit_test(test_env_clock_forces_the_backend_clock),
        cmocka_unit_test(test_env_tsc_forces_the_counter_where_there_is_one),
        cmocka_unit_test(test_env_bad_value_refused_at_open_with_one_line),
        cmocka_unit_test(test_counter_usable_only_with_the_tsc_clocksource),
        cmocka_unit_test(test_ticks_between_two_samples_exact),
        cmocka_unit_test(test_pair_reads_the_clock_inside_the_counter_window),
        cmocka_unit_test(test_finalise_converts_marked_events_exactly),
        cmocka_unit_test(test_marked_events_without_two_samples_counted_bad),
        cmocka_unit_test(test_start_honours_the_choice),
        cmocka_unit_test(test_ops_of_a_session_without_backend_ticks_take_the_counter),
    };
    return cmocka_run_group_tests_name("hostclock", tests, NULL, NULL);
}
