/* test_trace_reader.c: the streaming Kineto-JSON reader (src/report/trace_reader.c).
 *
 * Covers: microsecond numbers (fractions, integers, exponents) to integer ns, exact; the
 * fields of an event (ph, cat -> kind, name with escapes, pid/tid as numbers or strings, the
 * args it knows, flow ids) and unknown keys skipped; the top-level members (distributedInfo,
 * baseTimeNanoseconds, the devtrace section's counters and notes); the same events whatever the
 * pieces the text arrives in (every boundary, 1 byte at a time); the top-level array form;
 * errors: one line naming the byte offset and what was expected, for truncation, a bad
 * character, a control character in a string, nesting too deep, text after the end; a callback
 * that stops the read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report/trace_reader.h"

#define MAX_SEEN 16

/* What the callback saw: a copy of each event's fields (strings copied). */
typedef struct seen_event {
    dt_tr_event ev;
    char name[128], cat[64], pid[64], tid[64], meta[64];
} seen_event;

typedef struct seen {
    seen_event e[MAX_SEEN];
    size_t n;
    size_t stop_after; /* 0: never stop */
} seen;

static void copy_str(char *out, size_t cap, dt_tr_str s)
{
    size_t n = s.len < cap - 1 ? s.len : cap - 1;
    if (n) /* an absent string is {NULL, 0} */
        memcpy(out, s.s, n);
    out[n] = 0;
}

static int collect(const dt_tr_event *ev, void *user)
{
    seen *s = user;
    if (s->n < MAX_SEEN) {
        seen_event *e = &s->e[s->n];
        e->ev = *ev;
        copy_str(e->name, sizeof e->name, ev->name);
        copy_str(e->cat, sizeof e->cat, ev->cat);
        copy_str(e->pid, sizeof e->pid, ev->pid);
        copy_str(e->tid, sizeof e->tid, ev->tid);
        copy_str(e->meta, sizeof e->meta, ev->meta_name);
    }
    s->n++;
    return s->stop_after && s->n >= s->stop_after ? 7 : 0;
}

static int read_text(const char *text, size_t piece, seen *s, dt_tr_info *info, char *err)
{
    memset(s, 0, sizeof *s);
    return dt_tr_read_buffer_pieces("t.json", text, strlen(text), piece, collect, s, info, err, 256);
}

static void test_microseconds_become_exact_nanoseconds(void **state)
{
    (void)state;
    const char *text = "{\"traceEvents\": ["
                       "{\"ph\": \"X\", \"ts\": 1700000000000100.125, \"dur\": 50.5},"
                       "{\"ph\": \"X\", \"ts\": 12, \"dur\": 0.0004},"
                       "{\"ph\": \"X\", \"ts\": 1.0005, \"dur\": 1.5e3},"
                       "{\"ph\": \"X\", \"ts\": -2.25, \"dur\": 0.123456789}]}";
    seen s;
    char err[256];
    assert_int_equal(read_text(text, 0, &s, NULL, err), 0);
    assert_int_equal(s.n, 4);
    assert_true(s.e[0].ev.ts_ns == 1700000000000100125ll);
    assert_int_equal(s.e[0].ev.dur_ns, 50500);
    assert_int_equal(s.e[1].ev.ts_ns, 12000);
    assert_int_equal(s.e[1].ev.dur_ns, 0);       /* 0.4 ns rounds to 0 */
    assert_int_equal(s.e[2].ev.ts_ns, 1001);     /* 1000.5 ns rounds half up */
    assert_int_equal(s.e[2].ev.dur_ns, 1500000); /* exponent */
    assert_int_equal(s.e[3].ev.ts_ns, -2250);
    assert_int_equal(s.e[3].ev.dur_ns, 123);
    assert_int_equal(s.e[0].ev.has & (DT_TR_HAS_TS | DT_TR_HAS_DUR), DT_TR_HAS_TS | DT_TR_HAS_DUR);
}

static void test_event_fields_and_unknown_keys(void **state)
{
    (void)state;
    const char *text =
        "{\"schemaVersion\": 1, \"unknown\": {\"deep\": [1, {\"x\": null}, true, false]},\n"
        " \"traceEvents\": [\n"
        "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\\u00e9\\\"q\\\\\\n\", \"pid\": 0, \"tid\": 7,"
        " \"ts\": 1, \"dur\": 2, \"extra\": [[]], \"args\": {\"External id\": 10, \"device\": 1, \"stream\": 7,"
        " \"correlation\": 100, \"grid\": [4, 4, 1], \"bytes\": 64}},\n"
        "  {\"ph\": \"X\", \"cat\": \"Memcpy\", \"name\": \"m\", \"pid\": \"Spans\", \"tid\": \"stream 20\", \"ts\": "
        "3},\n"
        "  {\"ph\": \"f\", \"cat\": \"ac2g\", \"id\": 100, \"bp\": \"e\", \"pid\": 0, \"tid\": 7, \"ts\": 1},\n"
        "  {\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 0, \"tid\": 7, \"args\": {\"name\": \"stream 7\"}},\n"
        "  {\"ph\": \"X\", \"cat\": \"cuda_driver\", \"name\": \"cuLaunchKernel\", \"ts\": 5, \"args\": {\"External "
        "id\": 3.0}},\n"
        "  {\"ph\": \"X\", \"cat\": \"privateuse1_runtime\", \"name\": \"r\", \"ts\": \"5\"},\n"
        "  {\"ph\": \"X\", \"cat\": \"Operator\", \"name\": \"aten::mm\", \"ts\": 5},\n"
        "  {\"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"a\", \"ts\": 5},\n"
        "  {}\n"
        "]}";
    seen s;
    char err[256];
    assert_int_equal(read_text(text, 0, &s, NULL, err), 0);
    assert_int_equal(s.n, 9);
    const dt_tr_event *k = &s.e[0].ev;
    assert_int_equal(k->ph, 'X');
    assert_int_equal(k->kind, DT_TR_KERNEL);
    assert_string_equal(s.e[0].name, "k\xc3\xa9\"q\\\n");
    assert_string_equal(s.e[0].pid, "0");
    assert_int_equal(k->tid_num, 7);
    assert_int_equal(k->external_id, 10);
    assert_int_equal(k->device, 1);
    assert_int_equal(k->stream, 7);
    assert_int_equal(k->correlation, 100);
    assert_int_equal(k->bytes, 64);
    assert_int_equal(k->has, DT_TR_HAS_TS | DT_TR_HAS_DUR | DT_TR_HAS_PID | DT_TR_HAS_PID_NUM | DT_TR_HAS_TID |
                                 DT_TR_HAS_TID_NUM | DT_TR_HAS_EXTERNAL_ID | DT_TR_HAS_DEVICE | DT_TR_HAS_STREAM |
                                 DT_TR_HAS_CORRELATION | DT_TR_HAS_BYTES);
    assert_int_equal(s.e[1].ev.kind, DT_TR_MEMCPY);
    assert_string_equal(s.e[1].pid, "Spans");
    assert_false(s.e[1].ev.has & DT_TR_HAS_PID_NUM);
    assert_string_equal(s.e[1].tid, "stream 20");
    assert_int_equal(s.e[1].ev.tid_num, 20);
    assert_int_equal(s.e[2].ev.ph, 'f');
    assert_int_equal(s.e[2].ev.bp, 'e');
    assert_int_equal(s.e[2].ev.flow_id, 100);
    assert_true(s.e[2].ev.has & DT_TR_HAS_FLOW_ID);
    assert_string_equal(s.e[3].meta, "stream 7");
    assert_int_equal(s.e[4].ev.kind, DT_TR_RUNTIME);
    assert_int_equal(s.e[4].ev.external_id, 3);
    assert_int_equal(s.e[5].ev.kind, DT_TR_RUNTIME);
    assert_false(s.e[5].ev.has & DT_TR_HAS_TS); /* a string ts counts as absent, and says why */
    assert_true(s.e[5].ev.has & DT_TR_TS_NOT_NUMBER);
    assert_int_equal(s.e[6].ev.kind, DT_TR_CPU_OP);
    assert_int_equal(s.e[7].ev.kind, DT_TR_GPU_ANNOTATION);
    assert_int_equal(s.e[8].ev.ph, 0);
    assert_int_equal(s.e[8].ev.kind, DT_TR_OTHER);
    assert_int_equal(s.e[8].ev.offset, (uint64_t)(strstr(text, "{}") - text));
}

static const char devtrace_text[] =
    "{\"schemaVersion\": 1, \"distributedInfo\": {\"rank\": 3, \"world_size\": 8},\n"
    " \"devtrace\": {\"version\": \"0.1.0\", \"backend\": \"mcpti\", \"validation\": \"emulated\",\n"
    "   \"counts\": {\"kernel\": 2}, \"dropped\": {\"store_full\": 0, \"vendor\": 5},\n"
    "   \"zero_timestamp\": 4, \"window\": [1, 2], \"notes\": [\"first note\", \"second \\\"note\\\"\"]},\n"
    " \"baseTimeNanoseconds\": 1796134502336383685,\n"
    " \"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"a\", \"ts\": 1.5, \"dur\": 2}], "
    "\"traceName\": \"x\"}\n";

static void test_top_level_members(void **state)
{
    (void)state;
    seen s;
    dt_tr_info info;
    char err[256];
    assert_int_equal(read_text(devtrace_text, 0, &s, &info, err), 0);
    assert_int_equal(info.has_rank, 1);
    assert_int_equal(info.rank, 3);
    assert_int_equal(info.world_size, 8);
    assert_int_equal(info.has_base_time, 1);
    assert_true(info.base_time_ns == 1796134502336383685ll);
    assert_int_equal(info.has_devtrace, 1);
    assert_string_equal(info.backend, "mcpti");
    assert_string_equal(info.validation, "emulated");
    assert_int_equal(info.ncounters, 4);
    assert_string_equal(info.counters[0].path, "counts.kernel");
    assert_string_equal(info.counters[2].path, "dropped.vendor");
    assert_int_equal(info.counters[2].value, 5);
    assert_string_equal(info.counters[3].path, "zero_timestamp");
    assert_int_equal(info.counters[3].value, 4);
    assert_int_equal(info.nnotes, 2);
    assert_string_equal(info.notes[1], "second \"note\"");
    assert_int_equal(info.events, 1);
    assert_int_equal(info.bytes, strlen(devtrace_text));
    dt_tr_info_free(&info);
}

/* Every piece size from 1 byte: the same events and members as one piece. */
static void test_same_result_whatever_the_pieces(void **state)
{
    (void)state;
    char err[256];
    for (size_t piece = 1; piece < 64; piece++) {
        seen s;
        dt_tr_info info;
        assert_int_equal(read_text(devtrace_text, piece, &s, &info, err), 0);
        assert_int_equal(s.n, 1);
        assert_int_equal(s.e[0].ev.ts_ns, 1500);
        assert_int_equal(s.e[0].ev.dur_ns, 2000);
        assert_string_equal(s.e[0].name, "a");
        assert_int_equal(info.nnotes, 2);
        assert_int_equal(info.ncounters, 4);
        assert_int_equal(info.rank, 3);
        dt_tr_info_free(&info);
    }
}

static void test_top_level_array(void **state)
{
    (void)state;
    seen s;
    char err[256];
    assert_int_equal(read_text(" [{\"ph\": \"X\", \"ts\": 1}, {\"ph\": \"i\"}]\n", 0, &s, NULL, err), 0);
    assert_int_equal(s.n, 2);
    /* an object without traceEvents is not a trace: the offset of its closing '}' */
    assert_int_equal(read_text("{\"nodes\": []}", 0, &s, NULL, err), -1);
    assert_memory_equal(err, "t.json: byte 12: the top-level object ends without traceEvents", 62);
    assert_int_equal(read_text("{\"traceEvents\": []}", 0, &s, NULL, err), 0);
    assert_int_equal(s.n, 0);
}

static void expect_error(const char *text, const char *message)
{
    seen s;
    char err[256];
    for (size_t piece = 0; piece < 3; piece++) { /* whole, and 1 and 2 bytes at a time */
        assert_int_equal(read_text(text, piece, &s, NULL, err), -1);
        assert_string_equal(err, message);
    }
}

static void test_errors_name_the_offset_and_what_was_expected(void **state)
{
    (void)state;
    expect_error("", "t.json: truncated at byte 0 (the end of the data): expected '{' (a trace is a JSON object with "
                     "traceEvents)");
    expect_error("{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"ker",
                 "t.json: truncated at byte 41 (the end of the data): expected the rest of a string and its closing "
                 "'\"' (in the event at byte 17)");
    expect_error("{\"traceEvents\": [{\"ph\": \"X\"}, ",
                 "t.json: truncated at byte 30 (the end of the data): expected an event after ','");
    expect_error("{\"traceEvents\": [{\"ph\": \"X\"}]",
                 "t.json: truncated at byte 29 (the end of the data): expected ',' or '}' after a top-level member");
    expect_error("{\"traceEvents\": [{\"ph\": \"X\"; \"ts\": 1}]}",
                 "t.json: byte 27: expected ',' or '}' after a member, found ';'");
    expect_error("{\"traceEvents\": [{\"ts\": 1.}]}",
                 "t.json: byte 26: expected a digit after a number's '.', found '}'");
    expect_error("{\"traceEvents\": [{\"name\": \"a\tb\"}]}",
                 "t.json: byte 28: expected a character of a string (a control character must be escaped), found byte "
                 "0x09");
    expect_error("{\"traceEvents\": [1]}", "t.json: byte 17: expected an event (an object, '{'), found '1'");
    expect_error("{\"traceEvents\": {}}",
                 "t.json: byte 16: expected '[' (traceEvents is an array of events), found '{'");
    expect_error("{} x", "t.json: byte 3: expected the end of the file after the trace's closing bracket, found 'x'");
    expect_error("{\"a\": tru}", "t.json: byte 9: expected true, false or null, found '}'");
    expect_error("{\"traceEvents\": [{\"name\": \"\\x\"}]}",
                 "t.json: byte 27: expected an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX), found '\\'");
}

static void test_nesting_deeper_than_128_is_an_error(void **state)
{
    (void)state;
    char text[400];
    size_t n = 0;
    n += (size_t)sprintf(text, "{\"a\": ");
    for (int i = 0; i < 130; i++)
        text[n++] = '[';
    text[n] = 0;
    seen s;
    char err[256];
    assert_int_equal(read_text(text, 0, &s, NULL, err), -1);
    assert_string_equal(err, "t.json: byte 134: expected a value nested at most 128 deep, found '['");
}

static void test_callback_stops_the_read(void **state)
{
    (void)state;
    seen s;
    memset(&s, 0, sizeof s);
    s.stop_after = 2;
    char err[256];
    const char *text = "{\"traceEvents\": [{}, {}, {}]}";
    assert_int_equal(dt_tr_read_buffer("t.json", text, strlen(text), collect, &s, NULL, err, sizeof err), 7);
    assert_int_equal(s.n, 2);
    assert_string_equal(err, "t.json: stopped at the event at byte 21");
}

static void test_kind_of_cat(void **state)
{
    (void)state;
    static const struct {
        const char *cat;
        dt_tr_kind kind;
    } cases[] = {{"kernel", DT_TR_KERNEL},
                 {"Kernel", DT_TR_KERNEL},
                 {"gpu_memcpy", DT_TR_MEMCPY},
                 {"gpu_memset", DT_TR_MEMSET},
                 {"Memset", DT_TR_MEMSET},
                 {"cuda_runtime", DT_TR_RUNTIME},
                 {"cuda_driver", DT_TR_RUNTIME},
                 {"Runtime", DT_TR_RUNTIME},
                 {"xpu_runtime", DT_TR_RUNTIME},
                 {"cpu_op", DT_TR_CPU_OP},
                 {"python_function", DT_TR_PYTHON},
                 {"user_annotation", DT_TR_ANNOTATION},
                 {"gpu_user_annotation", DT_TR_GPU_ANNOTATION},
                 {"mtia_ccp_events", DT_TR_KERNEL},
                 {"cuda_sync", DT_TR_SYNC},
                 {"cuda_event", DT_TR_SYNC},
                 {"xpu_sync", DT_TR_SYNC},
                 {"hpu_op", DT_TR_RUNTIME},
                 {"mtia_runtime", DT_TR_RUNTIME},
                 {"mtia_insight", DT_TR_OTHER},
                 {"collective_comm", DT_TR_OTHER},
                 {"ac2g", DT_TR_OTHER},
                 {"cpu_instant_event", DT_TR_OTHER},
                 {"", DT_TR_OTHER}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_int_equal(dt_tr_kind_of_cat(cases[i].cat, strlen(cases[i].cat)), cases[i].kind);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_microseconds_become_exact_nanoseconds),
        cmocka_unit_test(test_event_fields_and_unknown_keys),
        cmocka_unit_test(test_top_level_members),
        cmocka_unit_test(test_same_result_whatever_the_pieces),
        cmocka_unit_test(test_top_level_array),
        cmocka_unit_test(test_errors_name_the_offset_and_what_was_expected),
        cmocka_unit_test(test_nesting_deeper_than_128_is_an_error),
        cmocka_unit_test(test_callback_stops_the_read),
        cmocka_unit_test(test_kind_of_cat),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
