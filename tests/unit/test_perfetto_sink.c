/* test_perfetto_sink.c: the Perfetto sink's contract beyond what tests/perfetto compares
 * with the JSON: which names choose it (any case; nothing else), that devtrace_write_trace
 * follows the name, the atomic file (a missing folder fails with the path and the fix, and
 * leaves nothing; the rest of the atomic write, shared with the Chrome sink, is in
 * test_atomic_write.c), the same bytes from the buffer and from a
 * file written by three threads, ".gz" (one gzip stream of the same bytes, serially and by
 * threads), and protobuf lengths of 128 bytes or more. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "sinks/protow.h"
#include "sinks/sinks.h"
#include "unit_write_fixture.h"

/* A session of 3000 launches (a call and a kernel each): three pieces of events. */
static int set_up(void **state)
{
    ut_write_fixture *f = ut_write_fixture_new(1000, 100000000);
    for (uint64_t i = 0; i < 3000; i++) {
        devtrace_event call = ut_runtime(2000 + i * 1000, 2300 + i * 1000, i + 1);
        call.name_id = dt_session_intern(f->s, "cudaLaunchKernel");
        devtrace_event kernel = ut_kernel(2500 + i * 1000, 2900 + i * 1000, i + 1);
        kernel.name_id = dt_session_intern(f->s, i % 2 ? "vadd" : "scale");
        assert_int_equal(dt_emit(f->s, &call), 0);
        assert_int_equal(dt_emit(f->s, &kernel), 0);
    }
    *state = f;
    return 0;
}

static void test_the_names_that_choose_perfetto(void **state)
{
    (void)state;
    assert_int_equal(dt_trace_format_of("trace.pftrace"), DT_FORMAT_PERFETTO);
    assert_int_equal(dt_trace_format_of("dir/TRACE.PFTRACE"), DT_FORMAT_PERFETTO);
    assert_int_equal(dt_trace_format_of("run.Perfetto-Trace"), DT_FORMAT_PERFETTO);
    assert_int_equal(dt_trace_format_of(".pftrace"), DT_FORMAT_PERFETTO);
    assert_int_equal(dt_trace_format_of("trace.json"), DT_FORMAT_CHROME_JSON);
    assert_int_equal(dt_trace_format_of("trace.json.gz"), DT_FORMAT_CHROME_JSON);
    assert_int_equal(dt_trace_format_of("trace.pftrace.gz"), DT_FORMAT_PERFETTO);
    assert_int_equal(dt_trace_format_of("trace.PERFETTO-TRACE.gz"), DT_FORMAT_PERFETTO);
    assert_int_equal(dt_trace_format_of("trace.gz"), DT_FORMAT_CHROME_JSON);
    assert_int_equal(dt_trace_format_of("pftrace"), DT_FORMAT_CHROME_JSON);
    assert_int_equal(dt_trace_format_of("trace.pftrace.tmp"), DT_FORMAT_CHROME_JSON);
    assert_int_equal(dt_trace_format_of(NULL), DT_FORMAT_CHROME_JSON);
}

static void test_write_trace_follows_the_name(void **state)
{
    ut_write_fixture *f = *state;
    char perfetto[512], json[512];
    ut_path_in(f, "t.PfTrace", perfetto, sizeof perfetto);
    ut_path_in(f, "t.json", json, sizeof json);
    devtrace_error err = {0, ""};
    assert_int_equal(devtrace_write_trace(f->s, perfetto, &err), 0);
    assert_int_equal(devtrace_write_trace(f->s, json, &err), 0);
    size_t plen, jlen;
    char *p = ut_read_file(perfetto, &plen), *j = ut_read_file(json, &jlen);
    assert_int_equal((unsigned char)p[0], 0x0A); /* Trace.packet: field 1, length-delimited */
    assert_int_equal(j[0], '{');
    assert_true(plen > 100000 && plen < jlen / 2);
    assert_int_equal(ut_entries_in(f->dir), 2); /* no .tmp left */
    free(p);
    free(j);
}

static void test_the_buffer_and_three_threads_give_the_same_bytes(void **state)
{
    ut_write_fixture *f = *state;
    char path[512];
    ut_path_in(f, "threads.pftrace", path, sizeof path);
    devtrace_error err = {0, ""};
    assert_int_equal(dt_perfetto_write_file(f->s, path, 3, &err), 0);
    char *buf = NULL;
    size_t len = 0;
    assert_int_equal(dt_perfetto_write_buffer(f->s, &buf, &len), 0);
    ut_assert_file_holds(path, buf, len);
    free(buf);
}

static void test_a_gz_name_compresses_the_same_bytes_serially_and_by_threads(void **state)
{
    ut_write_fixture *f = *state;
    char serial[512], threads[512];
    ut_path_in(f, "serial.pftrace.gz", serial, sizeof serial);
    ut_path_in(f, "threads.perfetto-trace.gz", threads, sizeof threads);
    devtrace_error err = {0, ""};
    assert_int_equal(dt_perfetto_write_file(f->s, serial, 0, &err), 0);
    assert_int_equal(dt_perfetto_write_file(f->s, threads, 3, &err), 0);
    char *buf = NULL;
    size_t len = 0, zlen;
    assert_int_equal(dt_perfetto_write_buffer(f->s, &buf, &len), 0);
    assert_true(ut_is_gzip(serial));
    free(ut_read_file(serial, &zlen));
    assert_true(zlen < len / 2);
    ut_assert_gunzipped_holds(serial, buf, len);
    ut_assert_gunzipped_holds(threads, buf, len);
    free(buf);
}

static void test_write_into_a_missing_directory_fails_with_eio_and_creates_nothing(void **state)
{
    ut_write_fixture *f = *state;
    char path[512];
    ut_path_in(f, "missing/trace.pftrace", path, sizeof path);
    devtrace_error err = {0, ""};
    assert_int_equal(devtrace_write_perfetto(f->s, path, &err), DEVTRACE_EIO);
    assert_non_null(strstr(err.message, path));
    assert_non_null(strstr(err.message, "No such file or directory"));
    assert_non_null(strstr(err.message, "check that the directory exists"));
    assert_int_equal(ut_entries_in(f->dir), 0);
}

static void test_a_long_message_gets_a_two_byte_length(void **state)
{
    (void)state;
    char buf[512], text[300], *len_at;
    memset(text, 'x', sizeof text);
    char *p = dt_pb_open(buf, 12, &len_at);
    p = dt_pb_bytes(p, 2, text, sizeof text); /* 0x12, 0xAC 0x02, 300 bytes: 303 */
    p = dt_pb_close(len_at, p);
    assert_int_equal(p - buf, 1 + 2 + 303);
    assert_int_equal((unsigned char)buf[0], 12 << 3 | 2);
    assert_int_equal((unsigned char)buf[1], 0xAF); /* 303 = 0x12F: 0xAF 0x02 */
    assert_int_equal((unsigned char)buf[2], 0x02);
    assert_int_equal((unsigned char)buf[3], 0x12);
    assert_int_equal((unsigned char)buf[4], 0xAC);
    assert_int_equal((unsigned char)buf[5], 0x02);
    assert_memory_equal(buf + 6, text, sizeof text);
    p = dt_pb_open(buf, 1, &len_at);
    p = dt_pb_uint(p, 8, 300);
    assert_ptr_equal(dt_pb_close(len_at, p), buf + 5);
    assert_int_equal(buf[1], 3); /* 0x40, 0xAC 0x02 */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_names_that_choose_perfetto),
        cmocka_unit_test_setup_teardown(test_write_trace_follows_the_name, set_up, ut_write_fixture_free),
        cmocka_unit_test_setup_teardown(test_the_buffer_and_three_threads_give_the_same_bytes, set_up,
                                        ut_write_fixture_free),
        cmocka_unit_test_setup_teardown(test_a_gz_name_compresses_the_same_bytes_serially_and_by_threads, set_up,
                                        ut_write_fixture_free),
        cmocka_unit_test_setup_teardown(test_write_into_a_missing_directory_fails_with_eio_and_creates_nothing, set_up,
                                        ut_write_fixture_free),
        cmocka_unit_test(test_a_long_message_gets_a_two_byte_length),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
