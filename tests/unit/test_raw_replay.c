/* test_raw_replay.c: replaying a raw capture (src/core/replay.c) into a session: the
 * captured metadata, devices, notes (in order), clock samples, window, CPU operators and
 * losses as they were; every buffer through the engine's decoders and the vendor's
 * scanner (MCPTI) or the layout stride (CUPTI); record pointers resolved through the
 * capture's strings; the vendor's resolved names applied after every buffer. Captures
 * are written with the real writer from hand-built records; every value is exact. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "backends/backend.h" /* dt_replay_file with the compiled-in backends */
#include "core/raw.h"
#include "core/session.h"
#include "sinks/sinks.h"
#include "unit_bytes.h"

#define NAME_PTR 0x7f0000001000ull   /* a kernel-name pointer of the captured process */
#define OTHER_PTR 0x7f0000002000ull  /* one the capture has no string for */
#define HOST_OFFSET 1000000000000ull /* host = vendor + 1e12 in the captured clock samples */

static size_t kernel(uint8_t *b, size_t size, uint32_t kind, uint64_t start, uint64_t end, uint32_t corr, uint64_t name)
{
    memset(b, 0, size);
    ut_put32(b, 0, kind);
    ut_put16(b, 6, 32);
    ut_put64(b, 16, start);
    ut_put64(b, 24, end);
    ut_put64(b, 32, end);
    ut_put32(b, 44, 1);
    ut_put32(b, 48, 7);
    ut_put32(b, 52, 416), ut_put32(b, 56, 6), ut_put32(b, 60, 7);
    ut_put32(b, 64, 256), ut_put32(b, 68, 8), ut_put32(b, 72, 9);
    ut_put32(b, 92, corr);
    ut_put64(b, 104, name);
    return size;
}

static size_t api(uint8_t *b, uint32_t cbid, uint64_t start, uint64_t end, uint32_t corr)
{
    memset(b, 0, 40);
    ut_put32(b, 0, 5);
    ut_put32(b, 4, cbid);
    ut_put64(b, 8, start);
    ut_put64(b, 16, end);
    ut_put32(b, 24, 4242);
    ut_put32(b, 28, 4343);
    ut_put32(b, 32, corr);
    return 40;
}

static size_t ext(uint8_t *b, uint64_t id, uint32_t corr)
{
    memset(b, 0, 24);
    ut_put32(b, 0, 39);
    ut_put32(b, 4, 3);
    ut_put64(b, 8, id);
    ut_put32(b, 16, corr);
    return 24;
}

static size_t copy(uint8_t *b, size_t size, uint64_t start, uint64_t end, uint32_t corr)
{
    memset(b, 0, size);
    ut_put32(b, 0, 1);
    b[4] = 1; /* HTOD */
    ut_put64(b, 8, 1 << 20);
    ut_put64(b, 16, start);
    ut_put64(b, 24, end);
    ut_put32(b, 40, 11);
    ut_put32(b, 44, corr);
    return size;
}

static char path[256];

static uint8_t *slurp(size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

/* An MCPTI capture: ext+api+kernel of op 7, an API with an id only the resolver knows,
 * 16 bytes of garbage, a memcpy, a buffer outside the window; everything else too. */
static void write_mcpti_capture(int with_stop)
{
    devtrace_error err = {0, ""};
    dt_raw_writer *w = dt_raw_open(path, "mcpti", 18, &err);
    assert_non_null(w);
    uint8_t b[1024];
    size_t o = 0;
    o += ext(b + o, 7, 11);
    o += api(b + o, 56, 1000, 1100, 11);
    o += kernel(b + o, 200, 10, 2000, 3000, 11, NAME_PTR);
    o += api(b + o, 233, 3100, 3200, 12);
    memset(b + o, 0xA5, 16);
    o += 16;
    o += api(b + o, 118, 3300, 4400, 13);
    o += copy(b + o, 88, 3400, 4300, 13);
    o += kernel(b + o, 200, 10, 4500, 4600, 14, OTHER_PTR);
    o += api(b + o, 56, 4450, 4460, 14);
    dt_raw_string(w, NAME_PTR, "_ZN7example6kernelEv");
    dt_raw_buffer(w, b, o);
    uint8_t late[40];
    api(late, 19, 90000, 90100, 15);
    dt_raw_buffer_mode(w, DT_RAW_BUFFER_OUT_OF_WINDOW, late, sizeof late);
    dt_raw_buffer_mode(w, DT_RAW_BUFFER_POOL_FULL, late, sizeof late);
    dt_raw_clock(w, 0, HOST_OFFSET);
    dt_raw_clock(w, 100000, HOST_OFFSET + 100000);
    dt_raw_counter(w, "dropped_vendor", 2);
    dt_raw_counter(w, "refused_buffers", 1);
    if (with_stop) {
        dt_raw_api_name(w, 5, 233, "mcFancyCall");
        dt_raw_api_name(w, 5, 56, "mcLaunchKernel");
        dt_device_props d;
        memset(&d, 0, sizeof d);
        snprintf(d.name, sizeof d.name, "MetaX GPU 0");
        d.warp_size = 64;
        d.num_sms = 104;
        d.max_threads_per_sm = 2048;
        d.max_threads_per_block = 1024;
        d.max_blocks_per_sm = 32;
        d.regs_per_sm = 65536;
        d.smem_per_sm = 65536;
        d.has_occupancy = 1;
        dt_raw_device(w, &d);
        dt_raw_meta(w, 3, 8, "mcpti", "emulated: unit test", "privateuse1_runtime");
        dt_raw_note(w, "first note");
        dt_raw_note(w, "second note");
        devtrace_event op;
        memset(&op, 0, sizeof op);
        op.kind = DEVTRACE_KIND_CPU_OP;
        op.start_ns = HOST_OFFSET + 900;
        op.end_ns = HOST_OFFSET + 3500;
        op.external_id = 7;
        op.device = 4242;
        op.stream = 4343;
        dt_raw_cpu_op(w, &op, "aten::mm");
        dt_raw_window(w, HOST_OFFSET + 500, HOST_OFFSET + 50000);
    }
    assert_int_equal(dt_raw_close(w, &err), 0);
}

typedef struct seen {
    int kernels, runtime, memcpy, ops;
    char names[16][64];
    int n;
    uint64_t kernel_ext, kernel_start;
    int kernel_has_ext;
} seen;

static void record(const devtrace_event *ev, const char *name, void *user)
{
    seen *s = user;
    if (s->n < 16)
        snprintf(s->names[s->n++], sizeof s->names[0], "%d:%s", ev->kind, name);
    if (ev->kind == DEVTRACE_KIND_KERNEL) {
        if (!s->kernels) {
            s->kernel_ext = ev->external_id;
            s->kernel_has_ext = !!(ev->flags & DEVTRACE_EVENT_HAS_EXTERNAL);
            s->kernel_start = ev->start_ns;
        }
        s->kernels++;
    }
    s->runtime += ev->kind == DEVTRACE_KIND_RUNTIME;
    s->memcpy += ev->kind == DEVTRACE_KIND_MEMCPY;
    s->ops += ev->kind == DEVTRACE_KIND_CPU_OP;
}

static int has_name(const seen *s, const char *want)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->names[i], want) == 0)
            return 1;
    return 0;
}

static void a_capture_replays_to_its_session(void **state)
{
    (void)state;
    write_mcpti_capture(1);
    size_t len;
    uint8_t *data = slurp(&len);
    dt_session *s = NULL;
    dt_raw_info info;
    devtrace_error err = {0, ""};
    assert_int_equal(dt_replay_capture(data, len, NULL, &s, &info, &err), 0);
    assert_string_equal(s->backend_name, "mcpti");
    assert_string_equal(s->validation, "emulated: unit test");
    assert_string_equal(s->runtime_category, "privateuse1_runtime");
    assert_int_equal(s->rank, 3);
    assert_int_equal(s->world_size, 8);
    assert_int_equal(s->nnotes, 2);
    assert_string_equal(s->notes[0], "first note");
    assert_string_equal(s->notes[1], "second note");
    assert_int_equal(s->ndevices, 1);
    assert_string_equal(s->devices[0].name, "MetaX GPU 0");
    assert_int_equal(s->devices[0].num_sms, 104);
    assert_int_equal(s->nsamples, 2);
    assert_int_equal(s->window_start, HOST_OFFSET + 500);
    assert_int_equal(s->window_stop, HOST_OFFSET + 50000);
    assert_int_equal(info.buffers, 3);
    seen v;
    memset(&v, 0, sizeof v);
    devtrace_drain(s, record, &v);
    const devtrace_stats *st = devtrace_stats_get(s);
    assert_int_equal(v.kernels, 2);
    assert_int_equal(v.runtime, 4);
    assert_int_equal(v.memcpy, 1);
    assert_int_equal(v.ops, 1);
    assert_true(has_name(&v, "1:example::kernel()")); /* the captured string, demangled */
    assert_true(has_name(&v, "1:(unnamed kernel)"));  /* a pointer the capture has no string for */
    assert_true(has_name(&v, "4:mcFancyCall"));       /* named by the resolver's API chunk */
    assert_true(has_name(&v, "4:mcLaunchKernel"));
    assert_true(has_name(&v, "4:mcMemcpy"));
    assert_true(has_name(&v, "5:aten::mm"));
    assert_int_equal(v.kernel_has_ext, 1);
    assert_int_equal(v.kernel_ext, 7);
    assert_int_equal(v.kernel_start, HOST_OFFSET + 2000); /* mapped through the captured samples */
    assert_int_equal(st->malformed_records, 1);
    assert_int_equal(st->malformed_bytes, 16);
    assert_int_equal(st->unresolved_names, 0);
    assert_int_equal(st->dropped_vendor, 2);
    assert_int_equal(st->refused_buffers, 1);
    assert_int_equal(st->out_of_window[DEVTRACE_KIND_RUNTIME], 1); /* the BUFM mode-1 buffer */
    assert_int_equal(st->dropped_pool_full, 1);                    /* the BUFM mode-2 buffer */
    /* the same capture replays to the same trace, byte for byte */
    char *a = NULL, *b = NULL;
    size_t alen = 0, blen = 0;
    assert_int_equal(dt_chrome_write_buffer(s, "t", &a, &alen), 0);
    dt_session *again = NULL;
    assert_int_equal(dt_replay_capture(data, len, NULL, &again, NULL, &err), 0);
    assert_int_equal(dt_chrome_write_buffer(again, "t", &b, &blen), 0);
    assert_int_equal(alen, blen);
    assert_memory_equal(a, b, alen);
    free(a);
    free(b);
    devtrace_close(again);
    devtrace_close(s);
    free(data);
    unlink(path);
}

static void without_the_resolver_names_an_unknown_id_keeps_its_number(void **state)
{
    (void)state;
    write_mcpti_capture(0); /* killed before stop: no API names, no window, no metadata */
    size_t len;
    uint8_t *data = slurp(&len);
    dt_session *s = NULL;
    dt_raw_info info;
    devtrace_error err = {0, ""};
    assert_int_equal(dt_replay_capture(data, len, NULL, &s, &info, &err), 0);
    assert_int_equal(info.has_window, 0);
    assert_string_equal(s->backend_name, "mcpti");
    assert_non_null(strstr(s->validation, "emulated")); /* the backend's own text */
    assert_int_equal(s->nnotes, 1);
    assert_string_equal(s->notes[0], "the raw capture ends before its session stopped (the program was killed, "
                                     "or called _exit): it has no window, devices or notes; events come from its 3 "
                                     "buffers");
    seen v;
    memset(&v, 0, sizeof v);
    devtrace_drain(s, record, &v);
    assert_true(has_name(&v, "4:mcRuntime#233"));
    assert_int_equal(devtrace_stats_get(s)->unresolved_names, 1);
    devtrace_close(s);
    /* cut inside its last chunk: that chunk is dropped and told */
    assert_int_equal(dt_replay_capture(data, len - 3, NULL, &s, &info, &err), 0);
    assert_int_equal(info.truncated, 1);
    assert_int_equal(s->nnotes, 2);
    assert_string_equal(s->notes[1], "the raw capture's last chunk is cut short and was ignored");
    devtrace_close(s);
    free(data);
    unlink(path);
}

static void a_capture_decodes_as_another_backend_on_request(void **state)
{
    (void)state;
    devtrace_error err = {0, ""};
    dt_raw_writer *w = dt_raw_open(path, "no-such-vendor", 18, &err);
    assert_non_null(w);
    uint8_t b[40];
    dt_raw_buffer(w, b, api(b, 19, 1000, 1100, 1));
    assert_int_equal(dt_raw_close(w, &err), 0);
    size_t len;
    uint8_t *data = slurp(&len);
    dt_session *s = NULL;
    assert_int_equal(dt_replay_capture(data, len, NULL, &s, NULL, &err), DEVTRACE_EUNKNOWN_BACKEND);
    assert_null(s);
    assert_non_null(strstr(err.message, "no backend named \"no-such-vendor\" that replays raw captures"));
    dt_replay_options opt = {"mcpti"};
    assert_int_equal(dt_replay_capture(data, len, &opt, &s, NULL, &err), 0);
    assert_string_equal(s->backend_name, "mcpti");
    seen v;
    memset(&v, 0, sizeof v);
    devtrace_drain(s, record, &v);
    assert_int_equal(v.runtime, 1);
    assert_string_equal(v.names[0], "4:mcGetDevice");
    devtrace_close(s);
    free(data);
    unlink(path);
}

static void a_cupti_capture_strides_by_its_layouts(void **state)
{
    (void)state;
    devtrace_error err = {0, ""};
    dt_raw_writer *w = dt_raw_open(path, "cupti", 130001, &err);
    assert_non_null(w);
    uint8_t b[1024];
    size_t o = 0;
    o += api(b + o, 211, 1000, 1100, 21);
    o += kernel(b + o, 216, 10, 2000, 3000, 21, NAME_PTR); /* CUpti_ActivityKernel10 */
    o += api(b + o, 31, 3100, 4000, 22);
    o += copy(b + o, 96, 3200, 3900, 22); /* CUpti_ActivityMemcpy6 */
    dt_raw_string(w, NAME_PTR, "_ZN7example6kernelEv");
    dt_raw_buffer(w, b, o);
    uint8_t junk[16];
    memset(junk, 0xA5, sizeof junk);
    dt_raw_buffer(w, junk, sizeof junk); /* an unknown kind ends its buffer: one malformed */
    assert_int_equal(dt_raw_close(w, &err), 0);
    size_t len;
    uint8_t *data = slurp(&len);
    dt_session *s = NULL;
    assert_int_equal(dt_replay_capture(data, len, NULL, &s, NULL, &err), 0);
    assert_string_equal(s->runtime_category, "cuda_runtime");
    seen v;
    memset(&v, 0, sizeof v);
    devtrace_drain(s, record, &v);
    assert_int_equal(v.kernels, 1);
    assert_int_equal(v.runtime, 2);
    assert_int_equal(v.memcpy, 1);
    assert_true(has_name(&v, "4:cudaLaunchKernel"));
    assert_true(has_name(&v, "4:cudaMemcpy"));
    assert_true(has_name(&v, "1:example::kernel()"));
    assert_int_equal(devtrace_stats_get(s)->malformed_records, 1);
    devtrace_close(s);
    free(data);
    unlink(path);
}

static void files_that_are_not_captures_are_refused(void **state)
{
    (void)state;
    dt_session *s = NULL;
    devtrace_error err = {0, ""};
    assert_int_equal(dt_replay_file("/nonexistent.dtraw", NULL, &s, NULL, &err), DEVTRACE_EIO);
    assert_string_equal(err.message, "cannot open the raw capture /nonexistent.dtraw: No such file or directory");
    FILE *f = fopen(path, "wb");
    fclose(f);
    assert_int_equal(dt_replay_file(path, NULL, &s, NULL, &err), DEVTRACE_EFORMAT);
    assert_non_null(strstr(err.message, "no DTRAW1 header"));
    assert_null(s);
    assert_int_equal(dt_replay_file("/tmp", NULL, &s, NULL, &err), DEVTRACE_EIO);
    unlink(path);
}

int main(void)
{
    snprintf(path, sizeof path, "/tmp/devtrace-test-replay-%ld.dtraw", (long)getpid());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_capture_replays_to_its_session),
        cmocka_unit_test(without_the_resolver_names_an_unknown_id_keeps_its_number),
        cmocka_unit_test(a_capture_decodes_as_another_backend_on_request),
        cmocka_unit_test(a_cupti_capture_strides_by_its_layouts),
        cmocka_unit_test(files_that_are_not_captures_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
