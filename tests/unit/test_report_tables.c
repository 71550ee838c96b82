/* test_report_tables.c: the report of one trace (src/report/report.c, table.c) on a trace devtrace
 * wrote (an offline session's Chrome trace, written by the sink and read back by the reader).
 *
 * Covers: kernels (count, total, avg, min, max, median, percent); memory (bytes, GB/s); api;
 * ops (device time through the launches' correlations, unlinked device time counted apart);
 * streams (busy time as the union of intervals, span, the longest gaps and where they begin);
 * the devtrace section's losses and notes; the csv text of a table, exactly; --names short;
 * an empty trace gives empty tables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report/report.h"
#include "unit_session.h"

static void emit(dt_session *s, devtrace_event ev)
{
    assert_int_equal(dt_emit(s, &ev), 0);
}

static devtrace_event kernel(dt_session *s, const char *name, uint64_t start, uint64_t end, uint64_t corr)
{
    devtrace_event k = ut_kernel(start, end, corr);
    k.name_id = dt_session_intern(s, name);
    return k;
}

/* An op aten::mm (ext 5) whose two gemm kernels link to it through their correlations; a relu
 * kernel, a copy and a set linked to nothing. Times in ns. */
static dt_session *sample_session(void)
{
    dt_session *s = ut_offline_session();
    devtrace_event op = ut_runtime(1000, 9000, 0);
    op.kind = DEVTRACE_KIND_CPU_OP;
    op.flags |= DEVTRACE_EVENT_HAS_EXTERNAL;
    op.external_id = 5;
    op.name_id = dt_session_intern(s, "aten::mm");
    emit(s, op);
    devtrace_event launch = ut_runtime(1500, 1800, 10);
    launch.name_id = dt_session_intern(s, "cudaLaunchKernel");
    emit(s, launch);
    launch = ut_runtime(5500, 5600, 11);
    launch.name_id = dt_session_intern(s, "cudaLaunchKernel");
    emit(s, launch);
    emit(s, kernel(s, "void gemm<float, 4>(float*)", 2000, 5000, 10));
    emit(s, kernel(s, "void gemm<float, 4>(float*)", 6000, 7000, 11));
    emit(s, kernel(s, "relu", 7500, 8000, 12));
    emit(s, ut_extcorr(10, 5));
    emit(s, ut_extcorr(11, 5));
    devtrace_event copy = ut_event(DEVTRACE_KIND_MEMCPY, 8000, 8500, 13);
    copy.flags = DEVTRACE_EVENT_HOST_CLOCK;
    copy.stream = 7;
    copy.u.memcpy.bytes = 1000;
    copy.u.memcpy.direction = DEVTRACE_COPY_DTOH;
    emit(s, copy);
    devtrace_event set = ut_event(DEVTRACE_KIND_MEMSET, 9000, 9100, 14);
    set.flags = DEVTRACE_EVENT_HOST_CLOCK;
    set.stream = 9;
    set.u.memset.bytes = 256;
    emit(s, set);
    return s;
}

static void read_session(dt_session *s, dt_report *r, dt_names_mode mode)
{
    char *buf = NULL;
    size_t len = 0;
    assert_int_equal(dt_chrome_write_buffer(s, "unit-trace", &buf, &len), 0);
    char err[256] = "";
    int rc = dt_report_read_buffer(r, "unit-trace", buf, len, mode, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    free(buf);
}

static char *table_csv(const dt_report *r, void (*make)(const dt_report *, dt_table *))
{
    dt_table t;
    make(r, &t);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    dt_table_write_csv(&t, out, 0);
    fclose(out);
    dt_table_free(&t);
    return text;
}

static void test_kernel_rows(void **state)
{
    (void)state;
    dt_session *s = sample_session();
    dt_report r;
    read_session(s, &r, DT_NAMES_FULL);
    assert_int_equal(r.nkernels, 2);
    assert_string_equal(dt_report_name(&r, r.kernels[0].name), "void gemm<float, 4>(float*)");
    assert_int_equal(r.kernels[0].count, 2);
    assert_int_equal(r.kernels[0].total_ns, 4000);
    assert_int_equal(r.kernels[0].min_ns, 1000);
    assert_int_equal(r.kernels[0].max_ns, 3000);
    assert_int_equal(r.kernels[0].median_ns, 2000);
    assert_int_equal(r.kernel_ns, 4500);
    char *csv = table_csv(&r, dt_report_kernels_table);
    assert_string_equal(csv, "name,count,total_us,avg_us,min_us,max_us,median_us,percent\n"
                             "\"void gemm<float, 4>(float*)\",2,4.000,2.000,1.000,3.000,2.000,88.89\n"
                             "relu,1,0.500,0.500,0.500,0.500,0.500,11.11\n");
    free(csv);
    dt_report_free(&r);
    devtrace_close(s);
}

static void test_memory_api_and_ops_rows(void **state)
{
    (void)state;
    dt_session *s = sample_session();
    dt_report r;
    read_session(s, &r, DT_NAMES_FULL);
    char *csv = table_csv(&r, dt_report_memory_table);
    assert_string_equal(csv, "name,count,bytes,total_us,avg_gbps\n"
                             "Memcpy DtoH (Device -> Pageable),1,1000,0.500,2.000\n"
                             "Memset (Device),1,256,0.100,2.560\n");
    free(csv);
    csv = table_csv(&r, dt_report_api_table);
    assert_string_equal(csv, "name,count,total_us,avg_us,max_us\n"
                             "cudaLaunchKernel,2,0.400,0.200,0.300\n");
    free(csv);
    csv = table_csv(&r, dt_report_ops_table);
    assert_string_equal(csv, "name,count,cpu_total_us,device_self_us,device_total_us\n"
                             "aten::mm,1,8.000,4.000,4.000\n");
    free(csv);
    assert_int_equal(r.unlinked_device_ns, 500 + 500 + 100);
    dt_report_free(&r);
    devtrace_close(s);
}

static void test_stream_busy_time_and_gaps(void **state)
{
    (void)state;
    dt_session *s = sample_session();
    dt_report r;
    read_session(s, &r, DT_NAMES_FULL);
    /* stream 7: [2000,5000] [6000,7000] [7500,8000] [8000,8500] (touching: one stretch); the
     * first event (the op) is at 1000, so the gaps begin at 4.000 and 6.000 us */
    char *csv = table_csv(&r, dt_report_streams_table);
    assert_string_equal(csv, "device,stream,busy_us,span_us,busy_percent,gap1_us,gap1_at_us,gap2_us,gap2_at_us,"
                             "gap3_us,gap3_at_us\n"
                             "0,7,5.000,6.500,76.92,1.000,4.000,0.500,6.000,,\n"
                             "0,9,0.100,0.100,100.00,,,,,,\n");
    free(csv);
    dt_report_free(&r);
    devtrace_close(s);
}

static void test_devtrace_section_losses_and_notes(void **state)
{
    (void)state;
    dt_session *s = sample_session();
    DT_COUNT(s, dropped_vendor, 7);
    DT_COUNT(s, zero_timestamp, 2);
    dt_add_note(s, "a note for the reader");
    dt_report r;
    read_session(s, &r, DT_NAMES_FULL);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    dt_report_write_devtrace_text(&r, out);
    fclose(out);
    assert_string_equal(text, "devtrace: backend unit (unit test)\n"
                              "  loss: dropped.vendor = 7\n"
                              "  loss: zero_timestamp = 2\n"
                              "  loss: unpaired_flows = 3\n" /* relu, the copy and the set: no launch */
                              "  note: a note for the reader\n");
    free(text);
    dt_report_free(&r);
    devtrace_close(s);
}

static void test_short_names_merge_instantiations(void **state)
{
    (void)state;
    dt_session *s = ut_offline_session();
    emit(s, kernel(s, "void k<float>(int)", 1000, 2000, 0));
    emit(s, kernel(s, "void k<double>(int)", 3000, 3500, 0));
    dt_report r;
    read_session(s, &r, DT_NAMES_SHORT);
    assert_int_equal(r.nkernels, 1);
    assert_string_equal(dt_report_name(&r, r.kernels[0].name), "void k<...>(int)");
    assert_int_equal(r.kernels[0].count, 2);
    assert_int_equal(r.kernels[0].median_ns, 750);
    dt_report_free(&r);
    devtrace_close(s);
    char out[64];
    static const char *const cases[][2] = {
        {"void a::b<c<d>, 4>(e<f>*)", "void a::b<...>(e<...>*)"},
        {"Memcpy DtoH (Device -> Pageable)", "Memcpy DtoH (Device -> Pageable)"},
        {"bool operator<(x, y)", "bool operator<(x, y)"},
        {"x operator<<(y)", "x operator<<(y)"},
        {"plain", "plain"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dt_short_name(cases[i][0], strlen(cases[i][0]), out, sizeof out);
        assert_string_equal(out, cases[i][1]);
    }
}

static void test_empty_trace_gives_empty_tables(void **state)
{
    (void)state;
    dt_report r;
    char err[256];
    const char *text = "{\"traceEvents\": []}";
    assert_int_equal(dt_report_read_buffer(&r, "empty", text, strlen(text), DT_NAMES_FULL, err, sizeof err), 0);
    assert_int_equal(r.nkernels + r.nmemory + r.napi + r.nops + r.nstreams, 0);
    char *csv = table_csv(&r, dt_report_kernels_table);
    assert_string_equal(csv, "name,count,total_us,avg_us,min_us,max_us,median_us,percent\n");
    free(csv);
    dt_report_free(&r);
}

static void test_truncated_trace_is_an_error_not_a_partial_report(void **state)
{
    (void)state;
    dt_session *s = sample_session();
    char *buf = NULL;
    size_t len = 0;
    assert_int_equal(dt_chrome_write_buffer(s, "unit-trace", &buf, &len), 0);
    dt_report r;
    char err[256];
    assert_int_equal(dt_report_read_buffer(&r, "cut", buf, len / 2, DT_NAMES_FULL, err, sizeof err), -1);
    char expect[96];
    snprintf(expect, sizeof expect, "cut: truncated at byte %zu (the end of the data)", len / 2);
    assert_memory_equal(err, expect, strlen(expect));
    dt_report_free(&r);
    free(buf);
    devtrace_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernel_rows),
        cmocka_unit_test(test_memory_api_and_ops_rows),
        cmocka_unit_test(test_stream_busy_time_and_gaps),
        cmocka_unit_test(test_devtrace_section_losses_and_notes),
        cmocka_unit_test(test_short_names_merge_instantiations),
        cmocka_unit_test(test_empty_trace_gives_empty_tables),
        cmocka_unit_test(test_truncated_trace_is_an_error_not_a_partial_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
