/* test_summary.c: the exit summary (src/sinks/summary.c), compared line for line.
 *
 * Covers: backend line and counts per kind; every non-zero loss counter named after
 * its cause (and only those); "nothing dropped" when all are zero; the reason of a
 * session that cannot trace; notes; the top kernels by total device time, ordered,
 * limited to `top` (no heading at all when `top` is 0): devtrace report's kernels table,
 * names without template arguments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report/summary.h"
#include "unit_session.h"

/* The summary as text (malloc'd). */
static char *summary_of(dt_session *s, size_t top)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    dt_summary_print(s, out, top);
    fclose(out);
    return text;
}

static void emit(dt_session *s, devtrace_event ev)
{
    assert_int_equal(dt_emit(s, &ev), 0);
}

static devtrace_event named_kernel(dt_session *s, const char *name, uint64_t start, uint64_t dur)
{
    devtrace_event k = ut_kernel(start, start + dur, 0);
    k.name_id = dt_session_intern(s, name);
    return k;
}

static void test_clean_session_says_nothing_was_dropped(void **state)
{
    (void)state;
    dt_session *s = ut_offline_session();
    emit(s, ut_runtime(100, 200, 0));
    char *text = summary_of(s, 5);
    assert_string_equal(text, "devtrace: backend unit (unit test)\n"
                              "  events: kernel=0 memcpy=0 memset=0 runtime=1 cpu_op=0\n"
                              "  nothing dropped, malformed or out of window\n");
    free(text);
    devtrace_close(s);
}

static void test_losses_are_listed_by_cause(void **state)
{
    (void)state;
    dt_session *s = ut_offline_session();
    dt_set_window(s, 1000, 2000);
    emit(s, ut_runtime(1100, 1200, 0));
    emit(s, ut_runtime(10, 20, 0));     /* out of window */
    emit(s, ut_runtime(1300, 1250, 0)); /* end before start */
    DT_COUNT(s, dropped_vendor, 7);
    DT_COUNT(s, malformed_records, 2);
    dt_add_note(s, "clock samples went backwards: %s", "offset used");
    char *text = summary_of(s, 5);
    assert_string_equal(text, "devtrace: backend unit (unit test)\n"
                              "  events: kernel=0 memcpy=0 memset=0 runtime=1 cpu_op=0\n"
                              "  dropped (reported by the vendor): 7\n"
                              "  malformed records skipped: 2\n"
                              "  outside the capture window: 1\n"
                              "  bad timestamps (end before start): 1\n"
                              "  note: clock samples went backwards: offset used\n");
    free(text);
    devtrace_close(s);
}

static void test_top_kernels_by_total_device_time(void **state)
{
    (void)state;
    dt_session *s = ut_offline_session();
    emit(s, named_kernel(s, "small", 1000, 500));
    emit(s, named_kernel(s, "big", 2000, 2000));
    emit(s, named_kernel(s, "big", 5000, 1000));
    emit(s, named_kernel(s, "middle", 7000, 1500));
    emit(s, named_kernel(s, "tiny", 9000, 1));
    char *text = summary_of(s, 3);
    assert_string_equal(text, "devtrace: backend unit (unit test)\n"
                              "  events: kernel=5 memcpy=0 memset=0 runtime=0 cpu_op=0\n"
                              "  nothing dropped, malformed or out of window\n"
                              "  kernels (top 3 of 4):\n"
                              "  count total_us avg_us min_us max_us median_us percent name\n"
                              "      2    3.000  1.500  1.000  2.000     1.500   59.99 big\n"
                              "      1    1.500  1.500  1.500  1.500     1.500   29.99 middle\n"
                              "      1    0.500  0.500  0.500  0.500     0.500   10.00 small\n");
    free(text);
    devtrace_close(s);
}

static void test_top_zero_prints_no_kernel_heading(void **state)
{
    (void)state;
    dt_session *s = ut_offline_session();
    emit(s, named_kernel(s, "big", 2000, 2000));
    char *text = summary_of(s, 0);
    assert_string_equal(text, "devtrace: backend unit (unit test)\n"
                              "  events: kernel=1 memcpy=0 memset=0 runtime=0 cpu_op=0\n"
                              "  nothing dropped, malformed or out of window\n");
    free(text);
    devtrace_close(s);
}

static void test_kernel_names_lose_their_template_arguments(void **state)
{
    (void)state;
    dt_session *s = ut_offline_session();
    char name[200], expect[512];
    memset(name, 'k', 150);
    snprintf(name + 150, sizeof name - 150, "<float, 4>(int)");
    emit(s, named_kernel(s, name, 1000, 1000));
    char *text = summary_of(s, 1);
    snprintf(expect, sizeof expect, " 100.00 %.150s<...>(int)\n", name);
    assert_non_null(strstr(text, expect));
    free(text);
    devtrace_close(s);
}

static void test_unavailable_session_says_why(void **state)
{
    (void)state;
    devtrace_config cfg;
    devtrace_config_init(&cfg);
    cfg.backend = "none";
    devtrace_session *s = devtrace_open(&cfg, NULL);
    assert_non_null(s);
    assert_int_equal(devtrace_start(s), 0);
    assert_int_equal(devtrace_stop(s), 0);
    char *text = summary_of(s, 5);
    char expect[256];
    snprintf(expect, sizeof expect, "\n  nothing was traced: %s\n", devtrace_unavailable_reason(s));
    assert_non_null(strstr(text, expect));
    assert_true(strncmp(text, "devtrace: backend none (", 24) == 0);
    free(text);
    devtrace_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clean_session_says_nothing_was_dropped),
        cmocka_unit_test(test_losses_are_listed_by_cause),
        cmocka_unit_test(test_top_kernels_by_total_device_time),
        cmocka_unit_test(test_top_zero_prints_no_kernel_heading),
        cmocka_unit_test(test_kernel_names_lose_their_template_arguments),
        cmocka_unit_test(test_unavailable_session_says_why),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
