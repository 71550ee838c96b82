/* test_wl.c: the workload parser's specification: what it accepts, the counts it derives,
 * the exact message for each kind of bad input, and that no bytes make it crash.
 * Usage: test_wl [PATH/TO/parity.wl] */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "wl.h"

static const char *g_parity_path;

static void test_parity_counts_match_the_file_header(void **state)
{
    wl_workload w;
    wl_counts c;
    char err[512];
    (void)state;
    assert_int_equal(wl_parse_file(g_parity_path, &w, err, sizeof err), 0);
    wl_expected_counts(&w, &c);
    assert_int_equal(c.kernels, 17);
    assert_int_equal(c.memcpys, 1);
    assert_int_equal(c.memsets, 1);
    assert_int_equal(c.runtime, 187);
    assert_int_equal(c.unattributed_ns, 0);
    wl_free(&w);
}

static void test_parity_ops_attribute_to_the_innermost(void **state)
{
    wl_workload w;
    wl_counts c;
    char err[512];
    (void)state;
    assert_int_equal(wl_parse_file(g_parity_path, &w, err, sizeof err), 0);
    wl_expected_counts(&w, &c);
    assert_int_equal(c.nops, 17);
    const wl_op_expect *step = wl_find_op(&w, 0);
    assert_non_null(step);
    assert_string_equal(step->name, "ProfilerStep#0"); /* '#' inside a value is not a comment */
    assert_int_equal(step->device_ns, 0);              /* everything sits in nested ops */
    assert_int_equal(wl_find_op(&w, 4)->device_ns, 48000);
    assert_string_equal(wl_find_op(&w, 14)->name, "aten::sort");
    assert_int_equal(wl_find_op(&w, 14)->device_ns, 1500 + 2100 + 6400);
    assert_int_equal(wl_find_op(&w, 14)->device_events, 3);
    assert_int_equal(wl_find_op(&w, 16)->device_ns, 2600);
    assert_null(wl_find_op(&w, 17));
    wl_free(&w);
}

static void test_parity_statements_keep_their_values(void **state)
{
    wl_workload w;
    char err[512];
    (void)state;
    assert_int_equal(wl_parse_file(g_parity_path, &w, err, sizeof err), 0);
    assert_int_equal(w.ndevices, 1);
    assert_string_equal(w.devices[0].name, "EmulatedGPU");
    assert_int_equal(w.devices[0].sms, 104);
    assert_int_equal(w.devices[0].warp, 64);
    const wl_stmt *first_launch = NULL;
    for (size_t i = 0; i < w.nstmts && !first_launch; i++) {
        if (w.stmts[i].kind == WL_STMT_LAUNCH)
            first_launch = &w.stmts[i];
    }
    assert_non_null(first_launch);
    assert_int_equal(first_launch->u.launch.grid[0], 416);
    assert_int_equal(first_launch->u.launch.block[0], 256);
    assert_int_equal(first_launch->u.launch.regs, 30);
    assert_int_equal(first_launch->u.launch.dur_ns, 3200);
    assert_int_equal(first_launch->u.launch.stream, 7);
    assert_true(strncmp(first_launch->u.launch.kernel, "_ZN2at6native", 13) == 0);
    wl_free(&w);
}

static void test_blank_lines_comments_and_crlf_are_accepted(void **state)
{
    static const char text[] =
        "# a comment\r\n\n   # indented comment\n\t\r\n"
        "api call=get_device\r\n"
        "op push name=a#b id=18446744073709551615\n"
        "  launch kernel=k grid=1,2,3 block=4,5,6 regs=65535 smem=0 dyn_smem=0 dur_ns=5 stream=0\n"
        "op pop\n"
        "sync what=device";
    wl_workload w;
    wl_counts c;
    char err[512];
    (void)state;
    assert_int_equal(wl_parse_buffer(text, strlen(text), "ok.wl", &w, err, sizeof err), 0);
    wl_expected_counts(&w, &c);
    assert_int_equal(c.runtime, 3);
    assert_int_equal(c.kernels, 1);
    assert_int_equal(wl_find_op(&w, UINT64_MAX)->device_ns, 5);
    assert_int_equal(w.stmts[2].u.launch.grid[2], 3);
    assert_int_equal(w.stmts[0].line, 5); /* statements keep their line numbers */
    assert_int_equal(w.stmts[4].line, 9);
    wl_free(&w);
}

/* levels= lists the API levels below the call a launch is also recorded at, in any order;
 * without it, none. */
static void test_launch_levels_are_parsed_as_a_set(void **state)
{
    static const char text[] = "launch kernel=k grid=1,1,1 block=1,1,1 regs=0 smem=0 dyn_smem=0 dur_ns=5 stream=0\n"
                               "launch kernel=k grid=1,1,1 block=1,1,1 regs=0 smem=0 dyn_smem=0 dur_ns=5 stream=0 "
                               "levels=runtime,node\n"
                               "launch kernel=k grid=1,1,1 block=1,1,1 regs=0 smem=0 dyn_smem=0 dur_ns=5 stream=0 "
                               "levels=runtime\n";
    wl_workload w;
    char err[512];
    (void)state;
    assert_int_equal(wl_parse_buffer(text, strlen(text), "ok.wl", &w, err, sizeof err), 0);
    assert_int_equal(w.stmts[0].u.launch.levels, 0);
    assert_int_equal(w.stmts[1].u.launch.levels, (1u << WL_LEVEL_NODE) | (1u << WL_LEVEL_RUNTIME));
    assert_int_equal(w.stmts[2].u.launch.levels, 1u << WL_LEVEL_RUNTIME);
    wl_free(&w);
}

static void test_generic_names_round_trip(void **state)
{
    (void)state;
    for (int i = 0; i < WL_CALL_COUNT; i++)
        assert_int_equal(wl_call_from_name(wl_call_name(i), strlen(wl_call_name(i))), i);
    assert_int_equal(wl_call_from_name("get_devic", 9), -1);
    assert_null(wl_call_name(WL_CALL_COUNT));
    assert_string_equal(wl_call_name(WL_CALL_SYNC_DEVICE), "sync_device");
}

/* Each bad input and the exact message it must give. */
static const struct bad_case {
    const char *text;
    const char *message;
} bad_cases[] = {
    {"frobnicate x=1\n", "bad.wl:1: unknown statement 'frobnicate' (expected device, op, api, launch, memcpy, memset, "
                         "sync, collective, mark, alloc or free)"},
    {"api call=malloc colour=red\n", "bad.wl:1: api: unknown key 'colour'"},
    {"api call=mallocc\n",
     "bad.wl:1: api: unknown call 'mallocc' (expected a generic name such as get_device or malloc)"},
    {"# header\nmemset bytes=4 value=0 stream=7\n", "bad.wl:2: memset: missing required key 'dur_ns='"},
    {"memcpy dir=dtoh bytes=4x dur_ns=1 stream=7\n",
     "bad.wl:1: memcpy: bad number '4x' for bytes= (expected an integer 1..18446744073709551615)"},
    {"memcpy dir=dtoh bytes=0 dur_ns=1 stream=7\n",
     "bad.wl:1: memcpy: bad number '0' for bytes= (expected an integer 1..18446744073709551615)"},
    {"memset bytes=4 value=256 dur_ns=1 stream=7\n",
     "bad.wl:1: memset: bad number '256' for value= (expected an integer 0..255)"},
    {"launch kernel=k grid=1,1,1 block=1,1,1 regs=0 smem=0 dyn_smem=0 dur_ns=1 stream=4294967296\n",
     "bad.wl:1: launch: bad number '4294967296' for stream= (expected an integer 0..4294967295)"},
    {"launch kernel=k grid=1,1,1 block=1,1,1 regs=0 smem=0 dyn_smem=0 dur_ns=99999999999999999999 stream=1\n",
     "bad.wl:1: launch: bad number '99999999999999999999' for dur_ns= (expected an integer 0..3600000000000)"},
    {"launch kernel=k grid=1,2 block=1,1,1 regs=0 smem=0 dyn_smem=0 dur_ns=1 stream=1\n",
     "bad.wl:1: launch: bad value '1,2' for grid= (expected x,y,z with each 1..2147483647)"},
    {"launch kernel=k grid=1,1,1 block=1,0,1 regs=0 smem=0 dyn_smem=0 dur_ns=1 stream=1\n",
     "bad.wl:1: launch: bad value '1,0,1' for block= (expected x,y,z with each 1..2147483647)"},
    {"launch kernel=k grid=1,1,1,1 block=1,1,1 regs=0 smem=0 dyn_smem=0 dur_ns=1 stream=1\n",
     "bad.wl:1: launch: bad value '1,1,1,1' for grid= (expected x,y,z with each 1..2147483647)"},
    {"launch kernel=k grid=1,1,1 block=1,1,1 regs=0 smem=0 dyn_smem=0 dur_ns=1 stream=1 levels=node,node\n",
     "bad.wl:1: launch: bad value 'node,node' for levels= (expected node, runtime or node,runtime, each once)"},
    {"launch kernel=k grid=1,1,1 block=1,1,1 regs=0 smem=0 dyn_smem=0 dur_ns=1 stream=1 levels=acl\n",
     "bad.wl:1: launch: bad value 'acl' for levels= (expected node, runtime or node,runtime, each once)"},
    {"launch kernel=k grid=1,1,1 block=1,1,1 regs=0 smem=0 dyn_smem=0 dur_ns=1 stream=1 levels=runtime,\n",
     "bad.wl:1: launch: bad value 'runtime,' for levels= (expected node, runtime or node,runtime, each once)"},
    {"memcpy dir=up bytes=4 dur_ns=1 stream=7\n",
     "bad.wl:1: memcpy: bad value 'up' for dir= (expected htod, dtoh or dtod)"},
    {"sync what=everything\n", "bad.wl:1: sync: bad value 'everything' for what= (expected stream or device)"},
    {"sync what=device stream=7\n", "bad.wl:1: sync: stream= is only valid with what=stream"},
    {"sync what=stream\n", "bad.wl:1: sync: missing required key 'stream='"},
    {"api call=get_device call=free\n", "bad.wl:1: api: key 'call=' given twice"},
    {"api call=\n", "bad.wl:1: api: empty value for call="},
    {"api get_device\n", "bad.wl:1: api: token 'get_device' is not key=value"},
    {"call=get_device\n", "bad.wl:1: line starts with 'call=get_device'; expected a statement name"},
    {"api =x\n", "bad.wl:1: api: token '=x' is not key=value"},
    {"op\n", "bad.wl:1: op: expected push or pop"},
    {"op pull name=a id=1\n", "bad.wl:1: op: unknown verb 'pull' (expected push or pop)"},
    {"op push name=a\n", "bad.wl:1: op push: missing required key 'id='"},
    {"op push name=a id=-1\n",
     "bad.wl:1: op push: bad number '-1' for id= (expected an integer 0..18446744073709551615)"},
    {"op push name=a id=1\nop pop id=1\n", "bad.wl:2: op pop: unknown key 'id'"},
    {"# nothing open\nop pop\n", "bad.wl:2: op pop without a matching op push"},
    {"op push name=a id=1\nop push name=b id=2\nop pop\n",
     "bad.wl:3: end of file with 1 op still open (innermost 'a' id=1 pushed at line 1)"},
    {"op push name=a id=1\nop push name=b id=2\n",
     "bad.wl:2: end of file with 2 ops still open (innermost 'b' id=2 pushed at line 2)"},
    {"api call=get_device\001\n", "bad.wl:1: invalid byte 0x01 in column 20"},
    {"api call=get\0device\n", "bad.wl:1: invalid byte 0x00 in column 13"},
    {"device id=0 name=g sms=1 warp=32 max_threads_per_sm=1 max_blocks_per_sm=1 regs_per_sm=1 smem_per_sm=1 "
     "max_threads_per_block=1\n"
     "device id=0 name=h sms=1 warp=32 max_threads_per_sm=1 max_blocks_per_sm=1 regs_per_sm=1 smem_per_sm=1 "
     "max_threads_per_block=1\n",
     "bad.wl:2: device: duplicate device id 0"},
    {"device id=1 name=g sms=0 warp=32 max_threads_per_sm=1 max_blocks_per_sm=1 regs_per_sm=1 smem_per_sm=1 "
     "max_threads_per_block=1\n",
     "bad.wl:1: device: bad number '0' for sms= (expected an integer 1..4294967295)"},
};

/* Lengths include embedded NULs: sizeof of each literal is not available through the
 * table, so the one case with a NUL gives its length here. */
static size_t bad_case_length(const struct bad_case *c)
{
    if (strcmp(c->message, "bad.wl:1: invalid byte 0x00 in column 13") == 0)
        return sizeof "api call=get\0device\n" - 1;
    return strlen(c->text);
}

static void test_each_bad_input_gives_its_exact_message(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        wl_workload w;
        char err[512] = "";
        int rc = wl_parse_buffer(bad_cases[i].text, bad_case_length(&bad_cases[i]), "bad.wl", &w, err, sizeof err);
        if (rc != -1 || strcmp(err, bad_cases[i].message) != 0)
            fail_msg("case %zu: rc %d, message\n  got:      %s\n  expected: %s", i, rc, err, bad_cases[i].message);
        assert_null(w.stmts); /* nothing left allocated */
    }
}

static void test_missing_file_names_the_file(void **state)
{
    wl_workload w;
    char err[512];
    (void)state;
    assert_int_equal(wl_parse_file("/nonexistent/x.wl", &w, err, sizeof err), -1);
    assert_string_equal(err, "/nonexistent/x.wl: cannot open: No such file or directory");
}

static void test_tiny_error_buffers_are_respected(void **state)
{
    wl_workload w;
    char err[8];
    (void)state;
    memset(err, 'x', sizeof err);
    assert_int_equal(wl_parse_buffer("nope\n", 5, "bad.wl", &w, err, sizeof err), -1);
    assert_string_equal(err, "bad.wl:");
    assert_int_equal(wl_parse_buffer("nope\n", 5, "bad.wl", &w, NULL, 0), -1);
}

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* A cheap fuzz pass that runs on every build (the libFuzzer target is fuzz_wl.c):
 * random bytes, and the parity text with random bytes changed, never crash. */
static void test_random_and_mutated_inputs_never_crash(void **state)
{
    static const char tokens[] = "apiopushpoplaunchmemcpymemsetsyncdevice=,#\n 0123456789kernelgridblockid=name=";
    wl_workload parity, w;
    char err[256];
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    (void)state;
    assert_int_equal(wl_parse_file(g_parity_path, &parity, err, sizeof err), 0);
    FILE *f = fopen(g_parity_path, "rb");
    assert_non_null(f);
    static char text[65536], mutated[65536];
    size_t len = fread(text, 1, sizeof text, f);
    fclose(f);
    for (int round = 0; round < 3000; round++) {
        size_t n = (size_t)(xorshift(&seed) % 512);
        for (size_t i = 0; i < n; i++)
            mutated[i] = (round & 1) ? (char)xorshift(&seed) : tokens[xorshift(&seed) % (sizeof tokens - 1)];
        if (wl_parse_buffer(mutated, n, "fuzz", &w, err, sizeof err) == 0)
            wl_free(&w);
        memcpy(mutated, text, len);
        for (int k = 0; k < 4; k++)
            mutated[xorshift(&seed) % len] = (char)xorshift(&seed);
        size_t cut = (size_t)(xorshift(&seed) % (len + 1));
        if (wl_parse_buffer(mutated, cut, "fuzz", &w, err, sizeof err) == 0)
            wl_free(&w);
    }
    wl_free(&parity);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parity_counts_match_the_file_header),
        cmocka_unit_test(test_parity_ops_attribute_to_the_innermost),
        cmocka_unit_test(test_parity_statements_keep_their_values),
        cmocka_unit_test(test_blank_lines_comments_and_crlf_are_accepted),
        cmocka_unit_test(test_launch_levels_are_parsed_as_a_set),
        cmocka_unit_test(test_generic_names_round_trip),
        cmocka_unit_test(test_each_bad_input_gives_its_exact_message),
        cmocka_unit_test(test_missing_file_names_the_file),
        cmocka_unit_test(test_tiny_error_buffers_are_respected),
        cmocka_unit_test(test_random_and_mutated_inputs_never_crash),
    };
    if (argc != 2) {
        fprintf(stderr, "usage: test_wl PATH/TO/parity.wl\n");
        return 2;
    }
    g_parity_path = argv[1];
    return cmocka_run_group_tests(tests, NULL, NULL);
}
