/* test_raw_format.c: the .dtraw container (src/core/raw.c, docs/raw-format.md): every
 * chunk written and read back with exact values and order; strings saved once per
 * pointer; unknown tags skipped and counted; a capture cut at every byte parsed without
 * reading past it (whole chunks kept, the cut one flagged); malformed chunks and headers
 * refused with the offset and the reason; write failures reported at close. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/raw.h"

/* ---- reading a whole file ---- */

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(n > 0 ? (size_t)n : 1);
    if (b && n > 0 && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *len = (size_t)(n > 0 ? n : 0);
    return b;
}

static char *temp_path(const char *tag)
{
    static char path[256];
    snprintf(path, sizeof path, "/tmp/devtrace-test-raw-%s-%ld.dtraw", tag, (long)getpid());
    return path;
}

/* ---- a visitor that logs what it sees, one line a chunk ---- */

typedef struct log {
    char text[8192];
    size_t used;
} log_t;

static void logf_(log_t *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(log_t *l, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(l->text + l->used, sizeof l->text - l->used, fmt, ap);
    va_end(ap);
    if (n > 0 && (size_t)n < sizeof l->text - l->used)
        l->used += (size_t)n;
}

static void v_buffer_mode(void *u, uint32_t mode, const uint8_t *d, size_t n)
{
    log_t *l = u;
    logf_(l, "BUF mode=%u n=%zu first=%02x\n", mode, n, n ? d[0] : 0);
}
static void v_string(void *u, uint64_t p, const char *s, uint32_t len)
{
    logf_(u, "STR %llx %.*s\n", (unsigned long long)p, (int)len, s);
}
static void v_clock(void *u, uint64_t v, uint64_t h)
{
    logf_(u, "CLK %llu %llu\n", (unsigned long long)v, (unsigned long long)h);
}
static void v_api(void *u, uint32_t dom, uint32_t cbid, const char *s, uint32_t len)
{
    logf_(u, "API %u %u %.*s\n", dom, cbid, (int)len, s);
}
static void v_window(void *u, uint64_t a, uint64_t b)
{
    logf_(u, "WIN %llu %llu\n", (unsigned long long)a, (unsigned long long)b);
}
static void v_counter(void *u, const char *name, uint32_t len, uint64_t v)
{
    logf_(u, "CNT %.*s %llu\n", (int)len, name, (unsigned long long)v);
}
static void v_device(void *u, const dt_device_props *p)
{
    logf_(u, "DEV %d %s %llu %d.%d %d %d %d %d %d %d %d %d %llu %llu %d\n", p->id, p->name,
          (unsigned long long)p->total_global_mem, p->compute_major, p->compute_minor, p->max_threads_per_block,
          p->max_threads_per_sm, p->max_blocks_per_sm, p->regs_per_block, p->regs_per_sm, p->warp_size, p->num_sms,
          p->has_occupancy, (unsigned long long)p->smem_per_block, (unsigned long long)p->smem_per_sm, 0);
}
static void v_note(void *u, const char *s, uint32_t len)
{
    logf_(u, "NOTE %.*s\n", (int)len, s);
}
static void v_meta(void *u, const dt_raw_meta_info *m)
{
    logf_(u, "META %d %d %.*s|%.*s|%.*s\n", m->rank, m->world_size, (int)m->backend_len, m->backend,
          (int)m->validation_len, m->validation, (int)m->runtime_category_len, m->runtime_category);
}
static void v_cpu_op(void *u, uint64_t s, uint64_t e, uint64_t x, uint32_t pid, uint32_t tid, const char *n,
                     uint32_t len)
{
    logf_(u, "OPS %llu %llu %llu %u %u %.*s\n", (unsigned long long)s, (unsigned long long)e, (unsigned long long)x,
          pid, tid, (int)len, n);
}

static dt_raw_visitor logging_visitor(log_t *l)
{
    dt_raw_visitor v = {.user = l,
                        .buffer_mode = v_buffer_mode,
                        .string = v_string,
                        .clock = v_clock,
                        .api_name = v_api,
                        .window = v_window,
                        .counter = v_counter,
                        .device = v_device,
                        .note = v_note,
                        .meta = v_meta,
                        .cpu_op = v_cpu_op};
    return v;
}

static const char expected_log[] = "BUF mode=0 n=16 first=05\n"
                                   "STR 1234 kernelA\n"
                                   "BUF mode=1 n=8 first=01\n"
                                   "BUF mode=2 n=0 first=00\n"
                                   "CLK 10 1000000000010\n"
                                   "API 5 233 mcFancyCall\n"
                                   "CNT dropped_vendor 2\n"
                                   "DEV 0 MetaX GPU 0 68719476736 8.0 1024 2048 32 65536 65536 64 104 1 49152 65536 0\n"
                                   "META 3 8 mcpti|emulated: test|privateuse1_runtime\n"
                                   "NOTE first note\n"
                                   "NOTE \n"
                                   "OPS 100 200 7 4242 4343 aten::mm\n"
                                   "WIN 50 250\n";

/* Writes one of every chunk; returns the number of chunks. */
static int write_every_chunk(const char *path)
{
    devtrace_error err = {0, ""};
    dt_raw_writer *w = dt_raw_open(path, "mcpti", 18, &err);
    if (!w)
        return -1;
    uint8_t buf[16] = {5};
    dt_raw_buffer(w, buf, sizeof buf);
    dt_raw_string(w, 0x1234, "kernelA");
    dt_raw_string(w, 0x1234, "kernelA again"); /* once per pointer: not written */
    dt_raw_string(w, 0, "null pointer");       /* not written */
    dt_raw_string(w, 0x9999, NULL);            /* not written */
    uint8_t one[8] = {1};
    dt_raw_buffer_mode(w, DT_RAW_BUFFER_OUT_OF_WINDOW, one, sizeof one);
    dt_raw_buffer_mode(w, DT_RAW_BUFFER_POOL_FULL, one, 0);
    dt_raw_clock(w, 10, 1000000000010ull);
    dt_raw_api_name(w, 5, 233, "mcFancyCall");
    dt_raw_counter(w, "dropped_vendor", 2);
    dt_device_props d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "MetaX GPU 0");
    d.total_global_mem = 64ull << 30;
    d.compute_major = 8;
    d.max_threads_per_block = 1024;
    d.max_threads_per_sm = 2048;
    d.max_blocks_per_sm = 32;
    d.regs_per_block = d.regs_per_sm = 65536;
    d.warp_size = 64;
    d.num_sms = 104;
    d.has_occupancy = 1;
    d.smem_per_block = 49152;
    d.smem_per_sm = 65536;
    dt_raw_device(w, &d);
    dt_raw_meta(w, 3, 8, "mcpti", "emulated: test", "privateuse1_runtime");
    dt_raw_note(w, "first note");
    dt_raw_note(w, "");
    devtrace_event op;
    memset(&op, 0, sizeof op);
    op.kind = DEVTRACE_KIND_CPU_OP;
    op.start_ns = 100;
    op.end_ns = 200;
    op.external_id = 7;
    op.device = 4242;
    op.stream = 4343;
    dt_raw_cpu_op(w, &op, "aten::mm");
    dt_raw_window(w, 50, 250);
    return dt_raw_close(w, &err) == 0 ? 13 : -1;
}

static void every_chunk_reads_back_exactly_in_order(void **state)
{
    (void)state;
    const char *path = temp_path("all");
    assert_int_equal(write_every_chunk(path), 13);
    size_t len;
    uint8_t *data = slurp(path, &len);
    assert_non_null(data);
    log_t l = {.used = 0};
    dt_raw_visitor v = logging_visitor(&l);
    dt_raw_info info;
    devtrace_error err = {0, ""};
    assert_int_equal(dt_raw_parse(data, len, &v, &info, &err), 0);
    assert_string_equal(l.text, expected_log);
    assert_string_equal(info.vendor, "mcpti");
    assert_int_equal(info.api_version, 18);
    assert_int_equal(info.chunks, 13);
    assert_int_equal(info.unknown_chunks, 0);
    assert_int_equal(info.buffers, 3);
    assert_int_equal(info.buffer_bytes, 24);
    assert_int_equal(info.has_window, 1);
    assert_int_equal(info.truncated, 0);
    /* the header is 8 + 4 + 4 + 5 + 4 = 25 bytes; the first chunk's tag follows */
    assert_memory_equal(data, "DTRAW1\0\0\1\0\0\0\5\0\0\0mcpti\x12\0\0\0BUF ", 29);
    /* a plain buffer callback sees BUF chunks only */
    dt_raw_visitor only_buf = {.user = &l, .buffer = NULL};
    assert_int_equal(dt_raw_parse(data, len, &only_buf, &info, &err), 0);
    assert_int_equal(dt_raw_parse(data, len, NULL, NULL, &err), 0);
    free(data);
    unlink(path);
}

static void unknown_tags_are_skipped_and_counted(void **state)
{
    (void)state;
    const char *path = temp_path("unknown");
    assert_int_equal(write_every_chunk(path), 13);
    size_t len;
    uint8_t *data = slurp(path, &len);
    assert_non_null(data);
    /* insert "ZZZZ" with 5 payload bytes after the header (25 bytes) */
    uint8_t *more = malloc(len + 17);
    memcpy(more, data, 25);
    memcpy(more + 25, "ZZZZ\5\0\0\0\0\0\0\0abcde", 17);
    memcpy(more + 42, data + 25, len - 25);
    log_t l = {.used = 0};
    dt_raw_visitor v = logging_visitor(&l);
    dt_raw_info info;
    devtrace_error err = {0, ""};
    assert_int_equal(dt_raw_parse(more, len + 17, &v, &info, &err), 0);
    assert_string_equal(l.text, expected_log);
    assert_int_equal(info.chunks, 14);
    assert_int_equal(info.unknown_chunks, 1);
    free(more);
    free(data);
    unlink(path);
}

static void a_capture_cut_at_any_byte_keeps_its_whole_chunks(void **state)
{
    (void)state;
    const char *path = temp_path("cut");
    assert_int_equal(write_every_chunk(path), 13);
    size_t len;
    uint8_t *data = slurp(path, &len);
    assert_non_null(data);
    /* chunk boundaries, from the lengths in the file */
    size_t bounds[32], nb = 0, off = 25;
    bounds[nb++] = off;
    while (off < len) {
        uint64_t n;
        memcpy(&n, data + off + 4, 8);
        off += 12 + (size_t)n;
        bounds[nb++] = off;
    }
    assert_int_equal(off, len);
    assert_int_equal(nb, 14);
    for (size_t cut = 25; cut <= len; cut++) {
        uint8_t *copy = malloc(cut); /* exactly cut bytes: ASan sees any read past them */
        memcpy(copy, data, cut);
        dt_raw_info info;
        devtrace_error err = {0, ""};
        assert_int_equal(dt_raw_parse(copy, cut, NULL, &info, &err), 0);
        size_t whole = 0;
        int at_bound = 0;
        for (size_t b = 1; b < nb; b++)
            whole += bounds[b] <= cut;
        for (size_t b = 0; b < nb; b++)
            at_bound |= bounds[b] == cut;
        assert_int_equal(info.chunks, whole);
        assert_int_equal(info.truncated, !at_bound);
        free(copy);
    }
    /* a cut inside the header is not a capture */
    for (size_t cut = 0; cut < 25; cut++) {
        uint8_t *copy = malloc(cut ? cut : 1);
        memcpy(copy, data, cut);
        devtrace_error err = {0, ""};
        dt_raw_info info;
        assert_int_equal(dt_raw_parse(copy, cut, NULL, &info, &err), DEVTRACE_EFORMAT);
        free(copy);
    }
    free(data);
    unlink(path);
}

/* A header for vendor "x" (21 bytes) followed by one chunk. */
static size_t one_chunk(uint8_t *out, const char *tag, const void *payload, uint64_t n)
{
    memcpy(out, "DTRAW1\0\0\1\0\0\0\1\0\0\0x\0\0\0\0", 21);
    memcpy(out + 21, tag, 4);
    memcpy(out + 25, &n, 8);
    memcpy(out + 33, payload, (size_t)n);
    return 33 + (size_t)n;
}

static void malformed_chunks_are_refused_with_their_offset(void **state)
{
    (void)state;
    uint8_t b[256], p[64];
    devtrace_error err = {0, ""};
    dt_raw_info info;
    struct {
        const char *tag;
        size_t n;
        int fill;
    } cases[] = {
        {"BUF ", 4, 0},  /* shorter than its valid_size field */
        {"BUF ", 16, 1}, /* valid_size says 0x0101..., not 8 */
        {"BUFM", 15, 0}, {"STR ", 11, 0}, {"STR ", 20, 1}, {"CLK ", 15, 0}, {"CLK ", 17, 0},
        {"API ", 11, 0}, {"API ", 16, 1}, {"WIN ", 8, 0},  {"CNT ", 11, 0}, {"CNT ", 20, 1},
        {"DEV ", 40, 0}, {"META", 7, 0},  {"META", 30, 1}, {"OPS ", 35, 0}, {"OPS ", 60, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memset(p, cases[i].fill, sizeof p);
        size_t len = one_chunk(b, cases[i].tag, p, cases[i].n);
        if (dt_raw_parse(b, len, NULL, &info, &err) != DEVTRACE_EFORMAT)
            fail_msg("chunk %s of %zu bytes was accepted", cases[i].tag, cases[i].n);
        char want[96];
        snprintf(want, sizeof want, "raw capture chunk '%s' at offset 21 is malformed", cases[i].tag);
        assert_string_equal(err.message, want);
    }
    /* a tag of unprintable bytes is named with '?' */
    uint8_t tag[4] = {0, 'B', 0xff, 'F'};
    size_t len = one_chunk(b, (const char *)tag, p, 3);
    assert_int_equal(dt_raw_parse(b, len, NULL, &info, &err), 0); /* unknown: skipped */
    assert_int_equal(info.unknown_chunks, 1);
}

static void bad_headers_are_refused(void **state)
{
    (void)state;
    uint8_t b[64];
    devtrace_error err = {0, ""};
    dt_raw_info info;
    memcpy(b, "DTRAW2\0\0\1\0\0\0\1\0\0\0x\0\0\0\0", 21);
    assert_int_equal(dt_raw_parse(b, 21, NULL, &info, &err), DEVTRACE_EFORMAT);
    assert_string_equal(err.message, "not a devtrace raw capture (no DTRAW1 header)");
    memcpy(b, "DTRAW1\0\0\2\0\0\0\1\0\0\0x\0\0\0\0", 21);
    assert_int_equal(dt_raw_parse(b, 21, NULL, &info, &err), DEVTRACE_EFORMAT);
    assert_string_equal(err.message, "raw capture version 2 is not supported (this devtrace reads 1)");
    memcpy(b, "DTRAW1\0\0\1\0\0\0\x41\0\0\0x\0\0\0\0", 21);
    assert_int_equal(dt_raw_parse(b, 21, NULL, &info, &err), DEVTRACE_EFORMAT);
    assert_string_equal(err.message, "raw capture header is corrupt (vendor name length 65)");
    memcpy(b, "DTRAW1\0\0\1\0\0\0\x08\0\0\0x\0\0\0\0", 21);
    assert_int_equal(dt_raw_parse(b, 21, NULL, &info, &err), DEVTRACE_EFORMAT);
    /* the smallest valid capture: a header, no chunk */
    memcpy(b, "DTRAW1\0\0\1\0\0\0\0\0\0\0\7\0\0\0", 20);
    assert_int_equal(dt_raw_parse(b, 20, NULL, &info, &err), 0);
    assert_string_equal(info.vendor, "");
    assert_int_equal(info.api_version, 7);
    assert_int_equal(info.chunks, 0);
    assert_int_equal(info.has_window, 0);
}

static void write_failures_are_reported(void **state)
{
    (void)state;
    devtrace_error err = {0, ""};
    assert_null(dt_raw_open("/nonexistent-dir/x.dtraw", "mcpti", 18, &err));
    assert_int_equal(err.code, DEVTRACE_EIO);
    assert_non_null(strstr(err.message, "cannot write the raw capture /nonexistent-dir/x.dtraw"));
    char longname[80];
    memset(longname, 'v', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    assert_null(dt_raw_open(temp_path("long"), longname, 18, &err));
    assert_int_equal(err.code, DEVTRACE_EINVAL);
    assert_int_equal(dt_raw_close(NULL, &err), 0);
    /* not a regular file (a device, a link): refused, never written through */
    assert_null(dt_raw_open("/dev/full", "mcpti", 18, &err));
    assert_string_equal(err.message, "cannot write the raw capture /dev/full: it is not a regular file; choose another "
                                     "path");
    /* a disk that fills up (a file size limit of 100 bytes, SIGXFSZ ignored): close says so */
    struct rlimit old_limit, limit = {100, 100};
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
    limit.rlim_max = old_limit.rlim_max;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &limit), 0);
    const char *full = temp_path("full");
    dt_raw_writer *w = dt_raw_open(full, "mcpti", 18, &err);
    assert_non_null(w);
    uint8_t buf[64] = {0};
    for (int i = 0; i < 4; i++)
        dt_raw_buffer(w, buf, sizeof buf);
    int rc = dt_raw_close(w, &err);
    setrlimit(RLIMIT_FSIZE, &old_limit);
    signal(SIGXFSZ, old_handler);
    assert_int_equal(rc, DEVTRACE_EIO);
    char want[600];
    snprintf(want, sizeof want, "writing the raw capture %s failed", full);
    assert_non_null(strstr(err.message, want));
    unlink(full);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_chunk_reads_back_exactly_in_order),
        cmocka_unit_test(unknown_tags_are_skipped_and_counted),
        cmocka_unit_test(a_capture_cut_at_any_byte_keeps_its_whole_chunks),
        cmocka_unit_test(malformed_chunks_are_refused_with_their_offset),
        cmocka_unit_test(bad_headers_are_refused),
        cmocka_unit_test(write_failures_are_reported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
