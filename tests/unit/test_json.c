/* test_json.c: the JSON writer (src/sinks/jsonw.c) and the Chrome trace it writes
 * (src/sinks/chrome_json.c).
 *
 * Covers: dt_json_escape of hostile names (quotes, backslashes, every control
 * character 0x00-0x1f, invalid UTF-8: lone continuation bytes, overlong forms,
 * surrogates, truncated sequences, bytes F5-FF, code points above U+10FFFF; one
 * \ufffd per bad byte; valid multi-byte UTF-8 kept), and every one- and two-byte input
 * escaping to valid JSON; exact number formatting (dt_jsonw_us3, _u64, _i64, _fixed)
 * and buffer growth. Then a whole trace of a crafted session, checked with the strict
 * reader in unit_json.h (no Python needed): it parses; top-level keys in the DESIGN
 * order; "rank": 0 written with a space; deviceProperties, kernel, memcpy, memset and
 * runtime args keys in the DESIGN order with exact values; memcpy names per direction;
 * metadata events; hostile names and trace names round-trip; numbers keep a '.' when
 * the traced program set a locale whose decimal point is ','. */
#include <locale.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sinks/jsonw.h"
#include "unit_session.h"

/* dt_json_escape of n bytes, as a NUL-terminated string in a static buffer. */
static const char *escape(const char *s, size_t n)
{
    static char out[4096];
    assert_true(6 * n + 3 < sizeof out);
    size_t len = dt_json_escape(out, s, n);
    assert_true(len <= 6 * n + 2);
    out[len] = '\0';
    return out;
}

#define ESC(lit) escape((lit), sizeof(lit) - 1)

static void test_escape_plain_ascii_is_quoted_unchanged(void **state)
{
    (void)state;
    assert_string_equal(ESC(""), "\"\"");
    assert_string_equal(ESC("vectorAdd<float>(int)"), "\"vectorAdd<float>(int)\"");
}

static void test_escape_quotes_and_backslashes(void **state)
{
    (void)state;
    assert_string_equal(ESC("a\"b\\c"), "\"a\\\"b\\\\c\"");
    assert_string_equal(ESC("\"\"\\\\"), "\"\\\"\\\"\\\\\\\\\"");
    assert_string_equal(ESC("/"), "\"/\""); /* '/' needs no escape */
}

static void test_escape_every_control_character(void **state)
{
    (void)state;
    for (int c = 0; c < 0x20; c++) {
        char in[1] = {(char)c}, expect[16];
        if (c == '\n')
            strcpy(expect, "\"\\n\"");
        else if (c == '\t')
            strcpy(expect, "\"\\t\"");
        else if (c == '\r')
            strcpy(expect, "\"\\r\"");
        else
            snprintf(expect, sizeof expect, "\"\\u%04x\"", c);
        assert_string_equal(escape(in, 1), expect);
    }
    assert_string_equal(escape("\0", 1), "\"\\u0000\"");
    assert_string_equal(ESC("\b\f\x1f"), "\"\\u0008\\u000c\\u001f\"");
    assert_string_equal(ESC("a\0b"), "\"a\\u0000b\""); /* embedded NUL: n counts */
}

static void test_escape_keeps_printable_ascii_and_del(void **state)
{
    (void)state;
    char in[96], expect[128];
    size_t n = 0, e = 0;
    expect[e++] = '"';
    for (int c = 0x20; c <= 0x7f; c++) {
        in[n++] = (char)c;
        if (c == '"' || c == '\\')
            expect[e++] = '\\';
        expect[e++] = (char)c;
    }
    expect[e++] = '"';
    expect[e] = '\0';
    assert_string_equal(escape(in, n), expect);
}

static void test_escape_lone_continuation_byte(void **state)
{
    (void)state;
    assert_string_equal(ESC("a\x80"
                            "b"),
                        "\"a\\ufffdb\"");
    assert_string_equal(ESC("\xBF\x80"), "\"\\ufffd\\ufffd\"");
}

static void test_escape_overlong_forms(void **state)
{
    (void)state;
    assert_string_equal(ESC("\xC0\x80"), "\"\\ufffd\\ufffd\"");            /* NUL, 2 bytes */
    assert_string_equal(ESC("\xC1\xBF"), "\"\\ufffd\\ufffd\"");            /* DEL, 2 bytes */
    assert_string_equal(ESC("\xE0\x80\xAF"), "\"\\ufffd\\ufffd\\ufffd\""); /* '/', 3 bytes */
    assert_string_equal(ESC("\xF0\x80\x80\xAF"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
}

static void test_escape_surrogates(void **state)
{
    (void)state;
    assert_string_equal(ESC("\xED\xA0\x80"), "\"\\ufffd\\ufffd\\ufffd\""); /* U+D800 */
    assert_string_equal(ESC("\xED\xBF\xBF"), "\"\\ufffd\\ufffd\\ufffd\""); /* U+DFFF */
    assert_string_equal(ESC("\xED\x9F\xBF"), "\"\xED\x9F\xBF\"");          /* U+D7FF is fine */
}

static void test_escape_truncated_sequence_at_the_end(void **state)
{
    (void)state;
    assert_string_equal(ESC("ok\xE2\x82"), "\"ok\\ufffd\\ufffd\"");
    assert_string_equal(ESC("\xC3"), "\"\\ufffd\"");
    assert_string_equal(ESC("\xF0\x9F\x98"), "\"\\ufffd\\ufffd\\ufffd\"");
    /* Cut short by the next character, not by the end. */
    assert_string_equal(ESC("\xE2\x82"
                            "A"),
                        "\"\\ufffd\\ufffdA\"");
}

static void test_escape_bytes_f5_to_ff(void **state)
{
    (void)state;
    for (int c = 0xF5; c <= 0xFF; c++) {
        char in[1] = {(char)c};
        assert_string_equal(escape(in, 1), "\"\\ufffd\"");
    }
    assert_string_equal(ESC("\xF5\x80\x80\x80"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
}

static void test_escape_code_points_above_10ffff(void **state)
{
    (void)state;
    assert_string_equal(ESC("\xF4\x90\x80\x80"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\""); /* U+110000 */
}

static void test_escape_keeps_valid_multibyte_utf8(void **state)
{
    (void)state;
    const char *valid = "\xC2\x80"          /* U+0080 */
                        "\xC3\xA9"          /* é */
                        "\xDF\xBF"          /* U+07FF */
                        "\xE0\xA0\x80"      /* U+0800 */
                        "\xE2\x82\xAC"      /* € */
                        "\xEF\xBF\xBF"      /* U+FFFF */
                        "\xF0\x90\x80\x80"  /* U+10000 */
                        "\xF0\x9F\x98\x80"  /* 😀 */
                        "\xF4\x8F\xBF\xBF"; /* U+10FFFF */
    char expect[64];
    snprintf(expect, sizeof expect, "\"%s\"", valid);
    assert_string_equal(escape(valid, strlen(valid)), expect);
    /* Valid and invalid side by side: only the bad byte is replaced. */
    assert_string_equal(ESC("\xC3\xA9\xFF\xC3\xA9"), "\"\xC3\xA9\\ufffd\xC3\xA9\"");
}

static void test_every_one_and_two_byte_input_escapes_to_valid_json(void **state)
{
    (void)state;
    char out[32], error[160];
    for (int a = 0; a < 256; a++) {
        char in1[1] = {(char)a};
        size_t n = dt_json_escape(out, in1, 1);
        uj_value *v = uj_parse(out, n, error);
        if (!v)
            fail_msg("byte 0x%02x: %s", a, error);
        uj_free(v);
        for (int b = 0; b < 256; b++) {
            char in[2] = {(char)a, (char)b};
            n = dt_json_escape(out, in, 2);
            assert_true(n <= 6 * 2 + 2);
            v = uj_parse(out, n, error);
            if (!v || v->type != UJ_STRING)
                fail_msg("bytes 0x%02x 0x%02x: %s", a, b, error);
            uj_free(v);
        }
    }
}

static void test_the_strict_reader_rejects_what_json_forbids(void **state)
{
    (void)state;
    /* The trace checks below are only as good as the reader: it must say no. */
    static const char *const bad[] = {
        "",
        "{",
        "{\"a\": 1,}",
        "[1,]",
        "[01]",
        "[1.]",
        "[.5]",
        "[1e]",
        "[+1]",
        "[NaN]",
        "{'a': 1}",
        "{\"a\" 1}",
        "{\"a\": 1} x",
        "[\"tab\there\"]",
        "[\"\\x\"]",
        "[\"\\u12\"]",
        "[\"\\ud800\"]",
        "[\"\\udc00\"]",
        "[\"\xC0\x80\"]",
        "[\"\xFF\"]",
        "[\"\xED\xA0\x80\"]",
        "{\"a\": 1, \"a\": 2}",
        "[\"unterminated]",
        "[tru]",
    };
    char error[160];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uj_value *v = uj_parse(bad[i], strlen(bad[i]), error);
        if (v)
            fail_msg("accepted invalid JSON #%zu: %s", i, bad[i]);
    }
    const char *good = " {\"a\": [1, -0.5, 2E+3, true, false, null, \"\\u00e9\\ud83d\\ude00\\n\"], \"b\": {}} ";
    uj_value *v = uj_parse(good, strlen(good), error);
    if (!v)
        fail_msg("rejected valid JSON: %s", error);
    assert_string_equal(uj_get(v, "a")->items[6]->str, "\xC3\xA9\xF0\x9F\x98\x80\n");
    assert_string_equal(uj_get(v, "a")->items[2]->raw, "2E+3");
    uj_free(v);
}

/* dt_jsonw into memory. */
static const char *written(dt_jsonw *w)
{
    assert_int_equal(w->failed, 0);
    dt_jsonw_raw(w, "", 1); /* the terminator, for comparing */
    w->len--;
    return w->buf;
}

static void test_us3_writes_microseconds_with_three_decimals(void **state)
{
    (void)state;
    const struct {
        uint64_t ns;
        const char *text;
    } cases[] = {
        {0, "0.000"},
        {5, "0.005"},
        {999, "0.999"},
        {1000, "1.000"},
        {1234, "1.234"},
        {1234567891, "1234567.891"},
        {UINT64_MAX, "18446744073709551.615"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dt_jsonw w;
        assert_int_equal(dt_jsonw_init(&w, 8), 0);
        dt_jsonw_us3(&w, cases[i].ns);
        assert_string_equal(written(&w), cases[i].text);
        dt_jsonw_free(&w);
    }
}

static void test_integers_are_written_exactly(void **state)
{
    (void)state;
    dt_jsonw w;
    assert_int_equal(dt_jsonw_init(&w, 4), 0);
    dt_jsonw_u64(&w, 0);
    DT_JSONW_LIT(&w, " ");
    dt_jsonw_u64(&w, UINT64_MAX);
    DT_JSONW_LIT(&w, " ");
    dt_jsonw_i64(&w, -1);
    DT_JSONW_LIT(&w, " ");
    dt_jsonw_i64(&w, INT64_MIN);
    DT_JSONW_LIT(&w, " ");
    dt_jsonw_i64(&w, INT64_MAX);
    assert_string_equal(written(&w), "0 18446744073709551615 -1 -9223372036854775808 9223372036854775807");
    dt_jsonw_free(&w);
}

static void test_fixed_writes_decimals_and_zero_for_non_finite(void **state)
{
    (void)state;
    dt_jsonw w;
    assert_int_equal(dt_jsonw_init(&w, 16), 0);
    dt_jsonw_fixed(&w, 2.0, 6);
    DT_JSONW_LIT(&w, " ");
    dt_jsonw_fixed(&w, 0.1, 3);
    DT_JSONW_LIT(&w, " ");
    dt_jsonw_fixed(&w, NAN, 2);
    DT_JSONW_LIT(&w, " ");
    dt_jsonw_fixed(&w, INFINITY, 2);
    DT_JSONW_LIT(&w, " ");
    dt_jsonw_fixed(&w, 1e16, 1);
    assert_string_equal(written(&w), "2.000000 0.100 0.00 0.00 0.0");
    dt_jsonw_free(&w);
}

static void test_writer_grows_its_buffer_in_memory(void **state)
{
    (void)state;
    enum { N = 10000 };
    char *s = malloc(N);
    assert_non_null(s);
    for (int i = 0; i < N; i++)
        s[i] = (char)('a' + i % 26);
    dt_jsonw w;
    assert_int_equal(dt_jsonw_init(&w, 4), 0);
    dt_jsonw_str(&w, s, N);
    assert_int_equal(w.len, N + 2);
    assert_int_equal(w.buf[0], '"');
    assert_memory_equal(w.buf + 1, s, N);
    assert_int_equal(w.buf[N + 1], '"');
    dt_jsonw_free(&w);
    free(s);
}

/* The crafted session: one device with occupancy attributes, a launch (runtime + kernel,
 * External id 10), a DtoH copy (External id 11), a memset without external id, and a
 * kernel with a hostile name. Times on the host clock, window [1 ms, 2 ms]. */
#define HOSTILE_NAME "bad\"name\\\n\x01\xFF"

typedef struct fixture {
    dt_session *s;
    char *text;
    uj_value *root;
} fixture;

static void add_device(dt_session *s)
{
    dt_device_props d = ut_occupancy_device("Unit \"Test\" GPU", 9, 80, 48 * 1024, 100 * 1024);
    dt_add_device(s, &d);
}

static int setup_trace(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    dt_session *s = ut_offline_session();
    if (!f || !s)
        return -1;
    f->s = s;
    dt_set_window(s, 1000000, 2000000);
    add_device(s);

    devtrace_event rt = ut_runtime(1000100, 1000200, 1);
    rt.flags |= DEVTRACE_EVENT_HAS_CBID | DEVTRACE_EVENT_HAS_EXTERNAL;
    rt.u.runtime.cbid = 211;
    rt.external_id = 10;
    rt.name_id = dt_session_intern(s, "cudaLaunchKernel");
    dt_emit(s, &rt);

    devtrace_event k = ut_kernel(1000300, 1000400, 1);
    k.flags |= DEVTRACE_EVENT_HAS_LAUNCH | DEVTRACE_EVENT_HAS_REGS | DEVTRACE_EVENT_HAS_QUEUED;
    k.name_id = dt_session_intern(s, "_Z6vecAddPfS_S_i");
    k.context = 1;
    k.u.kernel.grid[0] = 160, k.u.kernel.grid[1] = 1, k.u.kernel.grid[2] = 1;
    k.u.kernel.block[0] = 256, k.u.kernel.block[1] = 1, k.u.kernel.block[2] = 1;
    k.u.kernel.registers_per_thread = 32;
    k.u.kernel.static_shared = 1024;
    k.u.kernel.dynamic_shared = 1024;
    k.u.kernel.queued_ns = 1000250;
    dt_emit(s, &k);

    devtrace_event copy = ut_kernel(1000500, 1010500, 2);
    copy.kind = DEVTRACE_KIND_MEMCPY;
    copy.context = 1;
    copy.u.memcpy.bytes = 1000000; /* over 10 us: 100 GB/s */
    copy.u.memcpy.direction = DEVTRACE_COPY_DTOH;
    dt_emit(s, &copy);
    devtrace_event link = ut_extcorr(2, 11);
    dt_emit(s, &link);

    devtrace_event set = ut_kernel(1020000, 1020100, 3);
    set.kind = DEVTRACE_KIND_MEMSET;
    set.context = 1;
    set.u.memset.bytes = 2048;
    dt_emit(s, &set);

    devtrace_event bad = ut_kernel(1030000, 1030100, 4);
    bad.name_id = dt_session_intern(s, HOSTILE_NAME);
    dt_emit(s, &bad);

    char error[160] = "";
    f->root = ut_chrome_trace(s, &f->text, error);
    if (!f->root) {
        fprintf(stderr, "the trace is not valid JSON: %s\n", error);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown_trace(void **state)
{
    fixture *f = *state;
    uj_free(f->root);
    free(f->text);
    devtrace_close(f->s);
    free(f);
    return 0;
}

static const uj_value *args_of(const uj_value *root, const char *cat, const char *correlation)
{
    const uj_value *events = uj_get(root, "traceEvents");
    for (size_t i = 0; events && i < events->n; i++) {
        const uj_value *e = events->items[i];
        const char *ph = uj_get_str(e, "ph"), *c = uj_get_str(e, "cat");
        const uj_value *args = uj_get(e, "args");
        const char *corr = uj_get_raw(args, "correlation");
        if (ph && c && corr && !strcmp(ph, "X") && !strcmp(c, cat) && !strcmp(corr, correlation))
            return e;
    }
    return NULL;
}

static void test_trace_is_valid_json_with_top_level_keys_in_order(void **state)
{
    fixture *f = *state;
    char keys[512];
    assert_int_equal(f->root->type, UJ_OBJECT);
    assert_string_equal(uj_keys(f->root, keys, sizeof keys),
                        "schemaVersion,deviceProperties,distributedInfo,devtrace,displayTimeUnit,"
                        "baseTimeNanoseconds,traceEvents,traceName");
    assert_string_equal(uj_get_raw(f->root, "schemaVersion"), "1");
    assert_string_equal(uj_get_str(f->root, "displayTimeUnit"), "ms");
    assert_string_equal(uj_get_raw(f->root, "baseTimeNanoseconds"), "1000000");
    assert_string_equal(uj_get_str(f->root, "traceName"), "unit-trace");
}

static void test_distributed_info_writes_rank_with_a_space_after_the_colon(void **state)
{
    fixture *f = *state;
    char keys[64];
    assert_non_null(strstr(f->text, "\"distributedInfo\": {\"rank\": 0, \"world_size\": 1}"));
    const uj_value *di = uj_get(f->root, "distributedInfo");
    assert_string_equal(uj_keys(di, keys, sizeof keys), "rank,world_size");
    assert_string_equal(uj_get_raw(di, "rank"), "0");
}

static void test_device_properties_keys_in_design_order(void **state)
{
    fixture *f = *state;
    const uj_value *props = uj_get(f->root, "deviceProperties");
    char keys[512];
    assert_non_null(props);
    assert_int_equal(props->type, UJ_ARRAY);
    assert_int_equal(props->n, 1);
    const uj_value *d = props->items[0];
    assert_string_equal(uj_keys(d, keys, sizeof keys),
                        "id,name,totalGlobalMem,computeMajor,computeMinor,maxThreadsPerBlock,"
                        "maxThreadsPerMultiprocessor,regsPerBlock,regsPerMultiprocessor,warpSize,"
                        "sharedMemPerBlock,sharedMemPerMultiprocessor,numSms");
    assert_string_equal(uj_get_str(d, "name"), "Unit \"Test\" GPU");
    assert_string_equal(uj_get_raw(d, "totalGlobalMem"), "85899345920");
    assert_string_equal(uj_get_raw(d, "sharedMemPerBlock"), "49152");
    assert_string_equal(uj_get_raw(d, "sharedMemPerMultiprocessor"), "102400");
    assert_string_equal(uj_get_raw(d, "numSms"), "80");
}

static void test_devtrace_object_carries_backend_and_loss_counters(void **state)
{
    fixture *f = *state;
    const uj_value *dt = uj_get(f->root, "devtrace");
    char keys[512];
    assert_non_null(dt);
    uj_keys(dt, keys, sizeof keys);
    assert_true(strncmp(keys, "version,backend,validation,", 27) == 0);
    assert_non_null(strstr(keys, ",counts,dropped,malformed,out_of_window,"));
    assert_string_equal(uj_get_str(dt, "version"), DEVTRACE_VERSION_STRING);
    assert_string_equal(uj_get_str(dt, "backend"), "unit");
    assert_string_equal(uj_get_str(dt, "validation"), "unit test");
    const uj_value *counts = uj_get(dt, "counts");
    assert_string_equal(uj_keys(counts, keys, sizeof keys), "kernel,memcpy,memset,runtime,cpu_op");
    assert_string_equal(uj_get_raw(counts, "kernel"), "2");
    assert_string_equal(uj_get_raw(counts, "memcpy"), "1");
    assert_string_equal(uj_get_raw(counts, "memset"), "1");
    assert_string_equal(uj_get_raw(counts, "runtime"), "1");
    assert_string_equal(uj_get_raw(counts, "cpu_op"), "0");
    assert_string_equal(uj_keys(uj_get(dt, "dropped"), keys, sizeof keys), "store_full,pool_full,vendor");
    assert_string_equal(uj_keys(uj_get(dt, "malformed"), keys, sizeof keys), "records,bytes");
}

static void test_kernel_args_keys_in_design_order_with_exact_values(void **state)
{
    fixture *f = *state;
    const uj_value *k = args_of(f->root, "kernel", "1");
    assert_non_null(k);
    const uj_value *args = uj_get(k, "args");
    char keys[512];
    assert_string_equal(uj_keys(args, keys, sizeof keys),
                        "External id,queued,device,context,stream,correlation,registers per thread,"
                        "shared memory,blocks per SM,warps per SM,grid,block,est. achieved occupancy %");
    assert_string_equal(uj_get_raw(args, "External id"), "10");
    assert_string_equal(uj_get_raw(args, "queued"), "50");
    assert_string_equal(uj_get_raw(args, "device"), "0");
    assert_string_equal(uj_get_raw(args, "context"), "1");
    assert_string_equal(uj_get_raw(args, "stream"), "7");
    assert_string_equal(uj_get_raw(args, "registers per thread"), "32");
    assert_string_equal(uj_get_raw(args, "shared memory"), "2048");
    assert_string_equal(uj_get_raw(args, "blocks per SM"), "2.000000");
    assert_string_equal(uj_get_raw(args, "warps per SM"), "16.000000");
    const uj_value *grid = uj_get(args, "grid"), *block = uj_get(args, "block");
    assert_int_equal(grid->n, 3);
    assert_string_equal(grid->items[0]->raw, "160");
    assert_string_equal(grid->items[1]->raw, "1");
    assert_string_equal(block->items[0]->raw, "256");
    assert_string_equal(uj_get_raw(args, "est. achieved occupancy %"), "25");
    assert_string_equal(uj_get_raw(k, "pid"), "0");
    assert_string_equal(uj_get_raw(k, "tid"), "7");
    assert_string_equal(uj_get_raw(k, "ts"), "0.300");
    assert_string_equal(uj_get_raw(k, "dur"), "0.100");
}

static void test_kernel_without_launch_data_has_only_the_id_keys(void **state)
{
    fixture *f = *state;
    const uj_value *k = args_of(f->root, "kernel", "4");
    char keys[256];
    assert_non_null(k);
    assert_string_equal(uj_keys(uj_get(k, "args"), keys, sizeof keys), "queued,device,context,stream,correlation");
}

/* OpenCL: shared memory known, registers not (DEVTRACE_EVENT_HAS_SHARED without HAS_REGS). */
static void test_kernel_with_shared_memory_alone_has_no_register_key(void **state)
{
    (void)state;
    dt_session *s = ut_offline_session();
    assert_non_null(s);
    devtrace_event k = ut_kernel(1000, 2000, 9);
    k.flags |= DEVTRACE_EVENT_HAS_SHARED;
    k.u.kernel.registers_per_thread = 99; /* not written: the flag says it is not known */
    k.u.kernel.static_shared = 256;
    k.u.kernel.dynamic_shared = 160;
    assert_int_equal(dt_emit(s, &k), 0);
    char error[160] = "";
    uj_value *root = ut_chrome_trace(s, NULL, error);
    assert_non_null(root);
    const uj_value *args = uj_get(args_of(root, "kernel", "9"), "args");
    char keys[256];
    assert_string_equal(uj_keys(args, keys, sizeof keys), "queued,device,context,stream,correlation,shared memory");
    assert_string_equal(uj_get_raw(args, "shared memory"), "416");
    uj_free(root);
    devtrace_close(s);
}

static void test_mangled_kernel_name_is_demangled(void **state)
{
    fixture *f = *state;
    char *d = dt_demangle("_Z6vecAddPfS_S_i");
    if (!d)
        skip(); /* no C++ runtime in this process: the raw name stays (tested below) */
    free(d);
    const uj_value *k = args_of(f->root, "kernel", "1");
    assert_string_equal(uj_get_str(k, "name"), "vecAdd(float*, float*, float*, int)");
}

static void test_memcpy_name_and_args(void **state)
{
    fixture *f = *state;
    const uj_value *m = args_of(f->root, "gpu_memcpy", "2");
    char keys[256];
    assert_non_null(m);
    assert_string_equal(uj_get_str(m, "name"), "Memcpy DtoH (Device -> Pageable)");
    const uj_value *args = uj_get(m, "args");
    assert_string_equal(uj_keys(args, keys, sizeof keys),
                        "External id,device,context,stream,correlation,bytes,memory bandwidth (GB/s)");
    assert_string_equal(uj_get_raw(args, "External id"), "11");
    assert_string_equal(uj_get_raw(args, "bytes"), "1000000");
    assert_string_equal(uj_get_raw(args, "memory bandwidth (GB/s)"), "100.000000");
    assert_string_equal(uj_get_raw(m, "dur"), "10.000");
}

static void test_memset_name_and_args(void **state)
{
    fixture *f = *state;
    const uj_value *m = args_of(f->root, "gpu_memset", "3");
    char keys[256];
    assert_non_null(m);
    assert_string_equal(uj_get_str(m, "name"), "Memset (Device)");
    assert_string_equal(uj_keys(uj_get(m, "args"), keys, sizeof keys),
                        "device,context,stream,correlation,bytes,memory bandwidth (GB/s)");
    assert_string_equal(uj_get_raw(uj_get(m, "args"), "bytes"), "2048");
}

static void test_runtime_event_category_name_and_args(void **state)
{
    fixture *f = *state;
    const uj_value *r = args_of(f->root, "cuda_runtime", "1");
    char keys[256];
    assert_non_null(r);
    assert_string_equal(uj_get_str(r, "name"), "cudaLaunchKernel");
    assert_string_equal(uj_get_raw(r, "pid"), "100");
    assert_string_equal(uj_get_raw(r, "tid"), "200");
    assert_string_equal(uj_keys(uj_get(r, "args"), keys, sizeof keys), "External id,cbid,correlation");
    assert_string_equal(uj_get_raw(uj_get(r, "args"), "cbid"), "211");
}

static void test_metadata_names_the_device_and_stream(void **state)
{
    fixture *f = *state;
    const uj_value *ev[32];
    size_t n = ut_events_with_ph(f->root, "M", ev, 32);
    int process_name = 0, sort_index = 0, stream = 0, thread = 0;
    for (size_t i = 0; i < n && i < 32; i++) {
        const char *name = uj_get_str(ev[i], "name");
        const uj_value *args = uj_get(ev[i], "args");
        if (!strcmp(name, "process_name") && !strcmp(uj_get_raw(ev[i], "pid"), "0"))
            process_name += !strcmp(uj_get_str(args, "name"), "GPU 0");
        if (!strcmp(name, "process_sort_index"))
            sort_index += !strcmp(uj_get_raw(args, "sort_index"), "5000000");
        if (!strcmp(name, "thread_name") && !strcmp(uj_get_raw(ev[i], "tid"), "7"))
            stream += !strcmp(uj_get_str(args, "name"), "stream 7");
        if (!strcmp(name, "thread_name") && !strcmp(uj_get_raw(ev[i], "tid"), "200"))
            thread += !strcmp(uj_get_str(args, "name"), "thread 200");
    }
    assert_int_equal(process_name, 1);
    assert_int_equal(sort_index, 1);
    assert_int_equal(stream, 1);
    assert_int_equal(thread, 1);
}

/* The metadata lists every lane once: device streams by device and stream (each device's
 * process events before its first stream), then host threads by process and thread,
 * whatever order the events came in; a device id with its top bit set is a device. */
static void test_metadata_lists_each_lane_once_devices_then_threads_in_order(void **state)
{
    (void)state;
    dt_session *s = ut_offline_session();
    struct {
        int kind;
        uint32_t device, stream;
    } lanes[] = {{DEVTRACE_KIND_RUNTIME, 100, 300},      {DEVTRACE_KIND_KERNEL, 1, 9},    {DEVTRACE_KIND_MEMCPY, 0, 7},
                 {DEVTRACE_KIND_RUNTIME, 100, 200},      {DEVTRACE_KIND_KERNEL, 0, 7},    {DEVTRACE_KIND_MEMSET, 1, 2},
                 {DEVTRACE_KIND_KERNEL, 0x80000001u, 5}, {DEVTRACE_KIND_CPU_OP, 100, 200}};
    for (unsigned i = 0; i < sizeof lanes / sizeof lanes[0]; i++) {
        devtrace_event ev = ut_kernel(1000 + 10 * i, 1005 + 10 * i, 0);
        ev.kind = (uint16_t)lanes[i].kind;
        ev.device = lanes[i].device;
        ev.stream = lanes[i].stream;
        dt_emit(s, &ev);
    }
    char *text = NULL, error[160];
    uj_value *root = ut_chrome_trace(s, &text, error);
    if (!root)
        fail_msg("not valid JSON: %s", error);
    const uj_value *ev[32];
    size_t n = ut_events_with_ph(root, "M", ev, 32);
    char got[1024] = "";
    for (size_t i = 0; i < n && i < 32; i++) {
        const char *name = uj_get_str(ev[i], "name");
        if (!strcmp(name, "process_labels") || !strcmp(name, "process_sort_index"))
            continue;
        size_t used = strlen(got);
        snprintf(got + used, sizeof got - used, "%s%s %s/%s %s", used ? "; " : "", name, uj_get_raw(ev[i], "pid"),
                 uj_get_raw(ev[i], "tid"), uj_get_str(uj_get(ev[i], "args"), "name"));
    }
    assert_string_equal(got, "process_name 0/0 GPU 0; thread_name 0/7 stream 7; "
                             "process_name 1/0 GPU 1; thread_name 1/2 stream 2; thread_name 1/9 stream 9; "
                             "process_name 2147483649/0 GPU 2147483649; thread_name 2147483649/5 stream 5; "
                             "thread_name 100/200 thread 200; thread_name 100/300 thread 300");
    assert_int_equal(s->nlanes, 6);
    assert_int_equal(s->ndevice_lanes, 4);
    assert_int_equal(s->unnamed_lane_events, 0);
    uj_free(root);
    free(text);
    devtrace_close(s);
}

/* Lanes past DT_MAX_LANES are not named; their events are counted in a note. */
static void test_lanes_past_the_bound_are_counted_not_named(void **state)
{
    (void)state;
    dt_session *s = ut_offline_session();
    for (uint32_t i = 0; i < DT_MAX_LANES + 3; i++) {
        devtrace_event ev = ut_kernel(1000 + i, 1001 + i, 0);
        ev.stream = i;
        dt_emit(s, &ev);
        if (i >= DT_MAX_LANES) /* a second event on each lane past the bound */
            dt_emit(s, &ev);
    }
    assert_int_equal(dt_session_finalize(s), 0);
    assert_int_equal(s->nlanes, DT_MAX_LANES);
    assert_int_equal(s->ndevice_lanes, DT_MAX_LANES);
    assert_int_equal(s->lanes[0], 0);
    assert_int_equal(s->lanes[DT_MAX_LANES - 1], DT_MAX_LANES - 1);
    assert_int_equal(s->unnamed_lane_events, 6);
    assert_int_equal(s->nnotes, 1);
    assert_string_equal(s->notes[0], "the trace names the first 4096 streams and threads it meets; 6 events are on "
                                     "further ones, which have no thread_name");
    devtrace_close(s);
}

static void test_hostile_kernel_name_round_trips(void **state)
{
    fixture *f = *state;
    const uj_value *k = args_of(f->root, "kernel", "4");
    assert_non_null(k);
    /* Everything kept but the invalid byte 0xFF, which reads back as U+FFFD. */
    assert_string_equal(uj_get_str(k, "name"), "bad\"name\\\n\x01\xEF\xBF\xBD");
}

static void test_hostile_trace_name_is_escaped(void **state)
{
    fixture *f = *state;
    char *text = NULL, error[160];
    size_t len = 0;
    assert_int_equal(dt_chrome_write_buffer(f->s, "run \"7\"\t\xC0", &text, &len), 0);
    uj_value *root = uj_parse(text, len, error);
    if (!root)
        fail_msg("not valid JSON: %s", error);
    assert_string_equal(uj_get_str(root, "traceName"), "run \"7\"\t\xEF\xBF\xBD");
    uj_free(root);
    free(text);
}

static void test_memcpy_names_per_direction(void **state)
{
    (void)state;
    const struct {
        uint32_t dir;
        const char *name;
    } cases[] = {
        {DEVTRACE_COPY_HTOD, "Memcpy HtoD (Pageable -> Device)"},
        {DEVTRACE_COPY_DTOH, "Memcpy DtoH (Device -> Pageable)"},
        {DEVTRACE_COPY_DTOD, "Memcpy DtoD (Device -> Device)"},
        {DEVTRACE_COPY_HTOH, "Memcpy HtoH (Pageable -> Pageable)"},
        {DEVTRACE_COPY_UNKNOWN, "Memcpy (Unknown)"},
        {99, "Memcpy (Unknown)"},
    };
    dt_session *s = ut_offline_session();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        devtrace_event c = ut_kernel(1000 * (i + 1), 1000 * (i + 1) + 10, 100 + i);
        c.kind = DEVTRACE_KIND_MEMCPY;
        c.u.memcpy.direction = cases[i].dir;
        assert_int_equal(dt_emit(s, &c), 0);
    }
    char error[160];
    uj_value *root = ut_chrome_trace(s, NULL, error);
    if (!root)
        fail_msg("not valid JSON: %s", error);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char corr[16];
        snprintf(corr, sizeof corr, "%zu", 100 + i);
        const uj_value *e = args_of(root, "gpu_memcpy", corr);
        assert_non_null(e);
        assert_string_equal(uj_get_str(e, "name"), cases[i].name);
    }
    uj_free(root);
    devtrace_close(s);
}

static void test_empty_session_writes_a_valid_trace(void **state)
{
    (void)state;
    dt_session *s = ut_offline_session();
    char *text = NULL, error[160], keys[512];
    uj_value *root = ut_chrome_trace(s, &text, error);
    if (!root)
        fail_msg("not valid JSON: %s", error);
    assert_non_null(strstr(text, "\"deviceProperties\": [],"));
    assert_string_equal(uj_keys(root, keys, sizeof keys),
                        "schemaVersion,deviceProperties,distributedInfo,devtrace,displayTimeUnit,"
                        "baseTimeNanoseconds,traceEvents,traceName");
    const uj_value *events = uj_get(root, "traceEvents");
    assert_int_equal(events->n, 1);
    assert_string_equal(uj_get_str(events->items[0], "name"), "Record Window End");
    uj_free(root);
    free(text);
    devtrace_close(s);
}

/* Sets LC_NUMERIC to a locale whose decimal point is ',' (de_DE, compiled with
 * localedef into a temporary directory named by $LOCPATH). 0 when this system cannot. */
static int use_comma_locale(char *dir, size_t len)
{
    const char *tmp = getenv("TMPDIR");
    char cmd[600];
    snprintf(dir, len, "%s/devtrace-locale-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        return 0;
    snprintf(cmd, sizeof cmd, "localedef -i de_DE -f UTF-8 '%s/de_DE.UTF-8' >/dev/null 2>&1", dir);
    if (system(cmd) != 0)
        return 0;
    setenv("LOCPATH", dir, 1);
    return setlocale(LC_NUMERIC, "de_DE.UTF-8") != NULL && strcmp(localeconv()->decimal_point, ",") == 0;
}

static void test_numbers_use_a_dot_whatever_the_programs_locale(void **state)
{
    (void)state;
    /* devtrace runs inside the traced program, which may have called setlocale. */
    char dir[256], cmd[400];
    int have = use_comma_locale(dir, sizeof dir);
    dt_jsonw w;
    char *text = NULL, error[160] = "";
    void *trace = NULL;
    if (have) {
        assert_int_equal(dt_jsonw_init(&w, 16), 0);
        dt_jsonw_fixed(&w, 2.5, 6);
        DT_JSONW_LIT(&w, " ");
        dt_jsonw_fixed(&w, -0.25, 2);
        text = strdup(written(&w));
        dt_jsonw_free(&w);
        if (setup_trace(&trace) == 0) { /* a whole trace, written under the locale */
            fixture *f = trace;
            const uj_value *k = args_of(f->root, "kernel", "1");
            assert_string_equal(uj_get_raw(uj_get(k, "args"), "blocks per SM"), "2.000000");
            teardown_trace(&trace);
        } else {
            snprintf(error, sizeof error, "the trace written under LC_NUMERIC=de_DE is not valid JSON");
        }
    }
    setlocale(LC_NUMERIC, "C");
    unsetenv("LOCPATH");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        print_message("could not remove %s\n", dir);
    if (!have)
        skip(); /* no de_DE locale can be built here */
    assert_string_equal(error, "");
    assert_string_equal(text, "2.500000 -0.25");
    free(text);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup_trace, teardown_trace)
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape_plain_ascii_is_quoted_unchanged),
        cmocka_unit_test(test_escape_quotes_and_backslashes),
        cmocka_unit_test(test_escape_every_control_character),
        cmocka_unit_test(test_escape_keeps_printable_ascii_and_del),
        cmocka_unit_test(test_escape_lone_continuation_byte),
        cmocka_unit_test(test_escape_overlong_forms),
        cmocka_unit_test(test_escape_surrogates),
        cmocka_unit_test(test_escape_truncated_sequence_at_the_end),
        cmocka_unit_test(test_escape_bytes_f5_to_ff),
        cmocka_unit_test(test_escape_code_points_above_10ffff),
        cmocka_unit_test(test_escape_keeps_valid_multibyte_utf8),
        cmocka_unit_test(test_the_strict_reader_rejects_what_json_forbids),
        cmocka_unit_test(test_every_one_and_two_byte_input_escapes_to_valid_json),
        cmocka_unit_test(test_us3_writes_microseconds_with_three_decimals),
        cmocka_unit_test(test_integers_are_written_exactly),
        cmocka_unit_test(test_fixed_writes_decimals_and_zero_for_non_finite),
        cmocka_unit_test(test_writer_grows_its_buffer_in_memory),
        T(test_trace_is_valid_json_with_top_level_keys_in_order),
        T(test_distributed_info_writes_rank_with_a_space_after_the_colon),
        T(test_device_properties_keys_in_design_order),
        T(test_devtrace_object_carries_backend_and_loss_counters),
        T(test_kernel_args_keys_in_design_order_with_exact_values),
        T(test_kernel_without_launch_data_has_only_the_id_keys),
        cmocka_unit_test(test_kernel_with_shared_memory_alone_has_no_register_key),
        T(test_mangled_kernel_name_is_demangled),
        T(test_memcpy_name_and_args),
        T(test_memset_name_and_args),
        T(test_runtime_event_category_name_and_args),
        T(test_metadata_names_the_device_and_stream),
        T(test_hostile_kernel_name_round_trips),
        T(test_hostile_trace_name_is_escaped),
        cmocka_unit_test(test_memcpy_names_per_direction),
        cmocka_unit_test(test_metadata_lists_each_lane_once_devices_then_threads_in_order),
        cmocka_unit_test(test_lanes_past_the_bound_are_counted_not_named),
        cmocka_unit_test(test_empty_session_writes_a_valid_trace),
        cmocka_unit_test(test_numbers_use_a_dot_whatever_the_programs_locale),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
