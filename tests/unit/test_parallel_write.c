/* test_parallel_write.c: the Chrome trace written by a pool of threads
 * (src/sinks/pipeline.c, dt_chrome_write_file in src/sinks/chrome_json.c).
 *
 * Covers: the pipeline writes its pieces in order whatever their sizes and the number of
 * workers, and a piece that runs out of memory stops it with ENOMEM, every thread joined;
 * the plain trace written by 1, 2 and 5 workers is byte for byte the one this thread
 * writes alone, on a session of 300 k events (40 k under ThreadSanitizer) of every kind (kernels with and without
 * occupancy, copies in every direction, memsets, runtime calls, CPU operators, flows,
 * External ids, names needing escapes and invalid UTF-8); the .gz trace is exactly one
 * gzip member (inflate reaches its end with no byte left over) holding the plain trace,
 * the same compressed bytes for 1 and 5 workers, at levels 1, 0 and 9, for a big session, one smaller than a piece and an empty one;
 * $DEVTRACE_WRITE_THREADS: the counts it accepts, the values it refuses (noted in the
 * trace, the default used) and 1 meaning this thread alone; a disk that fills up partway
 * (a file size limit) gives DEVTRACE_EIO naming the .tmp and the cause and leaves nothing
 * behind. */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "unit_files.h"

#include "sinks/pipeline.h"
#include "unit_session.h"

/* 300 k events make 293 pieces of 1024; ThreadSanitizer's build writes 40 k (40 pieces, still
 * several per worker), which keeps it well inside its time limit on two loaded cores. */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DT_UNDER_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) || defined(DT_UNDER_TSAN)
#define BIG_EVENTS 40000
#else
#define BIG_EVENTS 300000
#endif

typedef struct fixture {
    char dir[256];
    char path[512], gz_path[512];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f || ut_make_temp_dir(f->dir, sizeof f->dir) != 0)
        return -1;
    snprintf(f->path, sizeof f->path, "%s/trace.json", f->dir);
    snprintf(f->gz_path, sizeof f->gz_path, "%s/trace.json.gz", f->dir);
    unsetenv("DEVTRACE_WRITE_THREADS");
    unsetenv("DEVTRACE_GZIP_LEVEL");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    ut_remove_tree(f->dir);
    free(f);
    unsetenv("DEVTRACE_WRITE_THREADS");
    unsetenv("DEVTRACE_GZIP_LEVEL");
    return 0;
}

/* ---- sessions ---- */

static const char *const odd_names[] = {
    "plain_kernel",
    "quote\"inside",
    "back\\slash",
    "control\x01\x1f chars",
    "tab\tnew\nline\rreturn",
    "invalid utf-8 \xff\xfe\xc3",
    "accents \xc3\xa9\xc3\xbc and \xe4\xb8\xad",
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_23FillFunctor_float_EEEvT0_",
};
#define NODD (sizeof odd_names / sizeof odd_names[0])

static const int32_t shapes[][6] = {
    {416, 1, 1, 256, 1, 1}, {8, 8, 1, 256, 1, 1}, {1024, 1, 1, 128, 1, 1}, {1, 1, 1, 16, 1, 1}, {-1, 2, 3, 64, 0, 1},
};
#define NSHAPES (sizeof shapes / sizeof shapes[0])

static uint64_t next_random(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* An offline session of about `events` events of every kind on the host clock, seeded. */
static dt_session *mixed_session(size_t events, uint64_t seed)
{
    dt_session *s = ut_offline_session();
    assert_non_null(s);
    dt_device_props d = ut_occupancy_device("Device \"zero\" \\ with occupancy", 8, 108, 49152, 167936);
    dt_add_device(s, &d);
    uint32_t ids[NODD];
    for (size_t i = 0; i < NODD; i++)
        ids[i] = dt_session_intern(s, odd_names[i]);
    uint64_t x = seed | 1, t = 1000000, last = t;
    size_t stored = 0;
    for (uint64_t corr = 1; stored < events; corr++) {
        uint64_t r = next_random(&x);
        t += 1000 + r % 3000;
        if (r % 5 == 0) {
            devtrace_event link = ut_extcorr(corr, 1000 + corr / 4);
            assert_int_equal(dt_emit(s, &link), 0);
        }
        devtrace_event call = ut_runtime(t, t + 700 + (r >> 8) % 500, corr);
        call.stream = 200 + (uint32_t)((r >> 12) & 1);
        call.name_id = ids[(r >> 16) % NODD];
        if ((r >> 20) & 1) {
            call.flags |= DEVTRACE_EVENT_HAS_CBID;
            call.u.runtime.cbid = (uint32_t)(r >> 24) % 400;
        }
        assert_int_equal(dt_emit(s, &call), 0);
        stored++;
        unsigned what = (unsigned)((r >> 32) % 10);
        devtrace_event ev = ut_event(DEVTRACE_KIND_KERNEL, t + 2000, t + 2000 + 500 + (r >> 36) % 20000, corr);
        ev.flags = DEVTRACE_EVENT_HOST_CLOCK;
        ev.context = 1;
        ev.stream = 7 + 2 * (uint32_t)((r >> 40) % 3);
        if (what < 6) { /* a kernel, its launch paired with the call (a flow) */
            const int32_t *sh = shapes[(r >> 44) % NSHAPES];
            ev.device = (r >> 48) % 4 == 0 ? 1 : 0; /* device 1: no occupancy data */
            ev.name_id = ids[(r >> 50) % NODD];
            ev.flags |= DEVTRACE_EVENT_HAS_LAUNCH | DEVTRACE_EVENT_HAS_REGS | DEVTRACE_EVENT_HAS_QUEUED;
            memcpy(ev.u.kernel.grid, sh, 3 * sizeof *sh);
            memcpy(ev.u.kernel.block, sh + 3, 3 * sizeof *sh);
            ev.u.kernel.registers_per_thread = 16 + (uint32_t)(r >> 53) % 4 * 8;
            ev.u.kernel.static_shared = (uint32_t)(r >> 55) % 2 * 2048;
            ev.u.kernel.queued_ns = t + 1500;
        } else if (what < 8) {
            ev.kind = DEVTRACE_KIND_MEMCPY;
            ev.u.memcpy.bytes = 4096ull << ((r >> 44) % 10);
            ev.u.memcpy.direction = (uint32_t)(r >> 48) % 6; /* every direction and unknown ones */
        } else if (what < 9) {
            ev.kind = DEVTRACE_KIND_MEMSET;
            ev.u.memset.bytes = 65536;
        } else { /* a CPU operator around the call */
            ev = ut_event(DEVTRACE_KIND_CPU_OP, t - 500, t + 1500, 0);
            ev.flags = DEVTRACE_EVENT_HOST_CLOCK | DEVTRACE_EVENT_HAS_EXTERNAL;
            ev.device = 100;
            ev.stream = 200;
            ev.external_id = 1000 + corr / 4;
            ev.name_id = ids[(r >> 44) % NODD];
        }
        assert_int_equal(dt_emit(s, &ev), 0);
        stored++;
        last = ev.end_ns > last ? ev.end_ns : last;
    }
    dt_set_window(s, 500000, last + 1000);
    dt_add_note(s, "a note with \"quotes\" and \\ backslashes");
    assert_int_equal(dt_session_finalize(s), 0);
    return s;
}

/* ---- files ---- */

/* The file written with `workers` threads (0: this thread alone), malloc'd. */
static char *written(dt_session *s, const char *path, unsigned workers, size_t *len)
{
    devtrace_error err = {0, ""};
    assert_int_equal(dt_chrome_write_file(s, path, workers, &err), 0);
    return ut_read_file(path, len);
}

/* A gzip file's bytes inflated as zlib does (windowBits 31): exactly one member, ending
 * exactly at the end of the file. Malloc'd. */
static char *gunzip_one_member(const char *gz, size_t gzlen, size_t *len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    assert_int_equal(inflateInit2(&z, 31), Z_OK);
    size_t cap = 1 << 20;
    char *out = malloc(cap);
    assert_non_null(out);
    z.next_in = (Bytef *)gz;
    z.avail_in = (uInt)gzlen;
    int rc;
    do {
        if (cap - z.total_out < (1 << 16)) {
            cap *= 2;
            out = realloc(out, cap);
            assert_non_null(out);
        }
        z.next_out = (Bytef *)out + z.total_out;
        z.avail_out = (uInt)(cap - z.total_out);
        rc = inflate(&z, Z_NO_FLUSH);
    } while (rc == Z_OK);
    assert_int_equal(rc, Z_STREAM_END);
    assert_int_equal(z.avail_in, 0); /* nothing after the member: no second member */
    *len = z.total_out;
    assert_int_equal(inflateEnd(&z), Z_OK);
    return out;
}

/* The plain trace of s named like gz_path, as this thread writes it alone. */
static char *plain_named(dt_session *s, const char *gz_path, size_t *len)
{
    char *text = NULL;
    assert_int_equal(dt_chrome_write_buffer(s, gz_path, &text, len), 0);
    return text;
}

/* The .gz written with `workers` threads holds exactly the plain trace. */
static void check_gzip_holds_the_plain_trace(fixture *f, dt_session *s, unsigned workers)
{
    size_t plain_len, gz_len, got_len;
    char *plain = plain_named(s, f->gz_path, &plain_len);
    char *gz = written(s, f->gz_path, workers, &gz_len);
    assert_int_equal((unsigned char)gz[0], 0x1f);
    assert_int_equal((unsigned char)gz[1], 0x8b);
    char *got = gunzip_one_member(gz, gz_len, &got_len);
    assert_int_equal(got_len, plain_len);
    assert_memory_equal(got, plain, plain_len);
    free(plain), free(gz), free(got);
}

/* ---- the pipeline alone ---- */

typedef struct counting_worker {
    size_t made;
    size_t fail_at; /* a piece to fail (SIZE_MAX: none) */
} counting_worker;

/* Piece i: "<i>:" then i % 977 copies of a letter, then a newline. */
static void make_numbered(void *worker, size_t index, dt_jsonw *out)
{
    counting_worker *w = worker;
    w->made++;
    if (index == w->fail_at) {
        out->failed = 1;
        out->err = ENOMEM;
        return;
    }
    char head[32];
    int n = snprintf(head, sizeof head, "%zu:", index);
    dt_jsonw_raw(out, head, (size_t)n);
    for (size_t k = 0; k < index % 977; k++)
        dt_jsonw_raw(out, &"abcdefghijklmnopqrstuvwxyz"[index % 26], 1);
    DT_JSONW_LIT(out, "\n");
}

static char *numbered_text(size_t npieces, size_t *len)
{
    dt_jsonw w;
    assert_int_equal(dt_jsonw_init(&w, 1024), 0);
    counting_worker cw = {0, SIZE_MAX};
    for (size_t i = 0; i < npieces; i++)
        make_numbered(&cw, i, &w);
    *len = w.len;
    return w.buf;
}

static int run_numbered(const char *path, int level, size_t npieces, unsigned nworkers, counting_worker *cws)
{
    void *states[8];
    for (unsigned i = 0; i < nworkers; i++)
        states[i] = &cws[i];
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    dt_pipeline p = {fileno(fp), level, npieces, make_numbered, states, nworkers};
    int rc = dt_pipeline_write(&p);
    fclose(fp);
    return rc;
}

static void test_pipeline_writes_every_piece_once_in_order(void **state)
{
    fixture *f = *state;
    const unsigned counts[] = {1, 2, 3, 8};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        for (int level = -1; level <= 1; level += 2) {
            counting_worker cws[8];
            for (unsigned i = 0; i < 8; i++)
                cws[i] = (counting_worker){0, SIZE_MAX};
            assert_int_equal(run_numbered(f->path, level, 3000, counts[c], cws), 0);
            size_t made = 0;
            for (unsigned i = 0; i < counts[c]; i++)
                made += cws[i].made;
            assert_int_equal(made, 3000);
            size_t want_len, got_len, file_len;
            char *want = numbered_text(3000, &want_len), *file = ut_read_file(f->path, &file_len);
            char *got = level < 0 ? file : gunzip_one_member(file, file_len, &got_len);
            if (level < 0)
                got_len = file_len;
            assert_int_equal(got_len, want_len);
            assert_memory_equal(got, want, want_len);
            if (got != file)
                free(got);
            free(want), free(file);
        }
    }
}

static void test_pipeline_stops_with_enomem_when_a_piece_runs_out_of_memory(void **state)
{
    fixture *f = *state;
    for (int level = -1; level <= 1; level += 2) {
        counting_worker cws[3];
        for (unsigned i = 0; i < 3; i++)
            cws[i] = (counting_worker){0, 500};
        assert_int_equal(run_numbered(f->path, level, 100000, 3, cws), ENOMEM);
        size_t made = cws[0].made + cws[1].made + cws[2].made;
        assert_true(made <= 500 + 2 * 3 + 1); /* at most a ring ahead of the failed piece */
        if (level >= 0)
            continue;
        size_t len, pieces = 0; /* the file: pieces 0 .. k-1 for some k <= 500, whole, in order */
        char *file = ut_read_file(f->path, &len);
        for (size_t i = 0; i < len; i++)
            pieces += file[i] == '\n';
        assert_true(pieces <= 500);
        size_t want_len;
        char *want = numbered_text(pieces, &want_len);
        assert_int_equal(len, want_len);
        assert_memory_equal(file, want, len);
        free(file), free(want);
    }
}

/* ---- the Chrome trace ---- */

static void test_plain_trace_by_1_2_and_5_workers_is_byte_for_byte_the_serial_one(void **state)
{
    fixture *f = *state;
    dt_session *s = mixed_session(BIG_EVENTS, 7);
    assert_true(s->nsorted >= BIG_EVENTS);
    size_t want_len;
    char *want = written(s, f->path, 0, &want_len);
    assert_true(want_len > (size_t)BIG_EVENTS * 80); /* over 80 bytes an event: 24 MB for 300 k, many pieces */
    size_t buf_len;
    char *buf = plain_named(s, f->path, &buf_len); /* and the in-memory writer agrees */
    assert_int_equal(buf_len, want_len);
    assert_memory_equal(buf, want, want_len);
    free(buf);
    const unsigned workers[] = {1, 2, 5};
    for (size_t i = 0; i < 3; i++) {
        size_t got_len;
        char *got = written(s, f->path, workers[i], &got_len);
        assert_int_equal(got_len, want_len);
        assert_memory_equal(got, want, want_len);
        free(got);
    }
    /* every kind and every odd name made it into the text */
    assert_non_null(strstr(want, "\"cat\": \"gpu_memset\""));
    assert_non_null(strstr(want, "\"Memcpy (Unknown)\""));
    assert_non_null(strstr(want, "\"cat\": \"cpu_op\""));
    assert_non_null(strstr(want, "\"ph\": \"f\", \"bp\": \"e\""));
    assert_non_null(strstr(want, "\"est. achieved occupancy %\""));
    assert_non_null(strstr(want, "\"quote\\\"inside\""));
    assert_non_null(strstr(want, "\"control\\u0001\\u001f chars\""));
    assert_non_null(strstr(want, "\"invalid utf-8 \\ufffd\\ufffd\\ufffd\""));
    assert_int_equal(ut_entries_in(f->dir), 1);
    free(want);
    devtrace_close(s);
}

static void test_gzip_by_1_2_and_5_workers_is_one_member_of_the_plain_trace(void **state)
{
    fixture *f = *state;
    dt_session *s = mixed_session(BIG_EVENTS, 11);
    const unsigned workers[] = {1, 2, 5, 0};
    for (size_t i = 0; i < 4; i++)
        check_gzip_holds_the_plain_trace(f, s, workers[i]);
    size_t one_len, five_len; /* the pieces do not depend on the count: nor do the bytes */
    char *one = written(s, f->gz_path, 1, &one_len), *five = written(s, f->gz_path, 5, &five_len);
    assert_int_equal(five_len, one_len);
    assert_memory_equal(five, one, one_len);
    free(one), free(five);
    devtrace_close(s);
}

static void test_gzip_of_a_session_smaller_than_a_piece_and_of_an_empty_one(void **state)
{
    fixture *f = *state;
    dt_session *small = mixed_session(100, 3);
    dt_session *empty = ut_offline_session();
    assert_int_equal(dt_session_finalize(empty), 0);
    assert_int_equal(empty->nsorted, 0);
    const unsigned workers[] = {1, 2, 5};
    for (size_t i = 0; i < 3; i++) {
        check_gzip_holds_the_plain_trace(f, small, workers[i]);
        check_gzip_holds_the_plain_trace(f, empty, workers[i]);
        size_t want_len, got_len;
        char *want = written(empty, f->path, 0, &want_len), *got = written(empty, f->path, workers[i], &got_len);
        assert_int_equal(got_len, want_len);
        assert_memory_equal(got, want, want_len);
        free(want), free(got);
    }
    devtrace_close(small);
    devtrace_close(empty);
}

static void test_gzip_levels_0_and_9_hold_the_plain_trace(void **state)
{
    fixture *f = *state;
    dt_session *s = mixed_session(20000, 5);
    size_t plain_len, gz_len;
    char *plain = plain_named(s, f->gz_path, &plain_len);
    setenv("DEVTRACE_GZIP_LEVEL", "0", 1);
    check_gzip_holds_the_plain_trace(f, s, 2);
    free(ut_read_file(f->gz_path, &gz_len));
    assert_true(gz_len > plain_len); /* stored */
    setenv("DEVTRACE_GZIP_LEVEL", "9", 1);
    check_gzip_holds_the_plain_trace(f, s, 2);
    free(ut_read_file(f->gz_path, &gz_len));
    assert_true(gz_len < plain_len / 8);
    free(plain);
    devtrace_close(s);
}

static unsigned default_threads(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus < 1 ? 1 : cpus > 8 ? 8 : (unsigned)cpus;
}

static int has_note(const dt_session *s, const char *note)
{
    for (int i = 0; i < s->nnotes; i++)
        if (strcmp(s->notes[i], note) == 0)
            return 1;
    return 0;
}

static void test_write_threads_takes_a_count_from_1_to_64(void **state)
{
    (void)state;
    dt_session *s = ut_offline_session();
    assert_int_equal(dt_chrome_write_threads(s), default_threads()); /* unset */
    setenv("DEVTRACE_WRITE_THREADS", "", 1);
    assert_int_equal(dt_chrome_write_threads(s), default_threads()); /* empty: unset */
    setenv("DEVTRACE_WRITE_THREADS", "1", 1);
    assert_int_equal(dt_chrome_write_threads(s), 1);
    setenv("DEVTRACE_WRITE_THREADS", "3", 1);
    assert_int_equal(dt_chrome_write_threads(s), 3);
    setenv("DEVTRACE_WRITE_THREADS", "64", 1);
    assert_int_equal(dt_chrome_write_threads(s), 64);
    assert_int_equal(s->nnotes, 0);
    devtrace_close(s);
}

static void test_write_threads_refuses_bad_values_with_a_note_and_uses_the_default(void **state)
{
    (void)state;
    const char *bad[] = {"0", "65", "x", "-1", " 2", "2 ", "+2", "2x", "99999999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dt_session *s = ut_offline_session();
        setenv("DEVTRACE_WRITE_THREADS", bad[i], 1);
        assert_int_equal(dt_chrome_write_threads(s), default_threads());
        char note[200];
        snprintf(note, sizeof note,
                 "$DEVTRACE_WRITE_THREADS=\"%s\" is not a thread count from 1 to 64: one per CPU (at most 8) used",
                 bad[i]);
        assert_int_equal(s->nnotes, 1);
        assert_string_equal(s->notes[0], note);
        devtrace_close(s);
    }
}

static void test_bad_write_threads_is_noted_in_the_trace(void **state)
{
    fixture *f = *state;
    dt_session *s = mixed_session(100, 9);
    setenv("DEVTRACE_WRITE_THREADS", "many", 1);
    devtrace_error err = {0, ""};
    assert_int_equal(devtrace_write_chrome(s, f->path, &err), 0);
    assert_true(has_note(s, "$DEVTRACE_WRITE_THREADS=\"many\" is not a thread count from 1 to 64: one per CPU (at "
                            "most 8) used"));
    size_t len;
    char *text = ut_read_file(f->path, &len);
    assert_non_null(strstr(text, "\"$DEVTRACE_WRITE_THREADS=\\\"many\\\" is not a thread count from 1 to 64"));
    free(text);
    devtrace_close(s);
}

static void test_write_chrome_gives_the_same_file_for_every_thread_count(void **state)
{
    fixture *f = *state;
    dt_session *s = mixed_session(50000, 13);
    devtrace_error err = {0, ""};
    setenv("DEVTRACE_WRITE_THREADS", "1", 1); /* this thread alone */
    assert_int_equal(devtrace_write_chrome(s, f->path, &err), 0);
    size_t want_len, got_len;
    char *want = ut_read_file(f->path, &want_len);
    setenv("DEVTRACE_WRITE_THREADS", "4", 1);
    assert_int_equal(devtrace_write_chrome(s, f->path, &err), 0);
    char *got = ut_read_file(f->path, &got_len);
    assert_int_equal(got_len, want_len);
    assert_memory_equal(got, want, want_len);
    free(want), free(got);
    devtrace_close(s);
}

static void test_a_full_disk_partway_fails_with_eio_and_leaves_nothing(void **state)
{
    fixture *f = *state;
    /* No room after 1 MiB: a file size limit (SIGXFSZ ignored: the write fails with EFBIG). A
     * link at the .tmp to /dev/full would not do: the writer never writes through a link. */
    struct rlimit old_limit, limit = {1u << 20, 1u << 20};
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
    limit.rlim_max = old_limit.rlim_max;
    if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < limit.rlim_cur)
        limit.rlim_cur = limit.rlim_max;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &limit), 0);
    dt_session *s = mixed_session(50000, 17); /* ~20 MB: the failure comes partway */
    const char *paths[] = {f->path, f->gz_path};
    const unsigned workers[] = {0, 1, 2, 5};
    for (size_t p = 0; p < 2; p++) {
        for (size_t i = 0; i < 4; i++) {
            char tmp[520];
            snprintf(tmp, sizeof tmp, "%s.tmp", paths[p]);
            devtrace_error err = {0, ""};
            assert_int_equal(dt_chrome_write_file(s, paths[p], workers[i], &err), DEVTRACE_EIO);
            assert_int_equal(err.code, DEVTRACE_EIO);
            char want[700];
            snprintf(want, sizeof want, "writing the trace to %s failed: File too large", tmp);
            assert_string_equal(err.message, want);
            assert_false(ut_exists(tmp));
            assert_false(ut_exists(paths[p]));
            assert_int_equal(ut_entries_in(f->dir), 0);
        }
    }
    setrlimit(RLIMIT_FSIZE, &old_limit);
    signal(SIGXFSZ, old_handler);
    devtrace_close(s);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_pipeline_writes_every_piece_once_in_order),
        T(test_pipeline_stops_with_enomem_when_a_piece_runs_out_of_memory),
        T(test_plain_trace_by_1_2_and_5_workers_is_byte_for_byte_the_serial_one),
        T(test_gzip_by_1_2_and_5_workers_is_one_member_of_the_plain_trace),
        T(test_gzip_of_a_session_smaller_than_a_piece_and_of_an_empty_one),
        T(test_gzip_levels_0_and_9_hold_the_plain_trace),
        T(test_write_threads_takes_a_count_from_1_to_64),
        T(test_write_threads_refuses_bad_values_with_a_note_and_uses_the_default),
        T(test_bad_write_threads_is_noted_in_the_trace),
        T(test_write_chrome_gives_the_same_file_for_every_thread_count),
        T(test_a_full_disk_partway_fails_with_eio_and_leaves_nothing),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
