/* test_atomic_write.c: devtrace_write_chrome writing the trace atomically
 * (src/sinks/chrome_json.c): through <path>.tmp and a rename.
 *
 * Covers: a write creates exactly the file, byte for byte the trace
 * dt_chrome_write_buffer gives, and leaves no .tmp; an existing file is replaced; a
 * path in a missing directory fails with DEVTRACE_EIO, a message naming the path and
 * the fix, and creates nothing; a write that fails (the .tmp cannot be opened, or the
 * write stops partway as on a full disk) leaves the old file untouched and no .tmp of
 * its own; a failed rename leaves no .tmp; ".gz" output is valid gzip whose content
 * is the plain trace byte for byte, at the level $DEVTRACE_GZIP_LEVEL asks; invalid
 * arguments and a session that never ran. Each test works in its own temporary
 * directory. */
#include <dirent.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "unit_write_fixture.h"

static int setup(void **state)
{
    ut_write_fixture *f = ut_write_fixture_new(1000000, 9000000);
    uint32_t name = dt_session_intern(f->s, "kernel_with_a_name_that_compresses_well");
    for (uint64_t i = 0; i < 2000; i++) { /* enough text for compression to show */
        devtrace_event k = ut_kernel(1000000 + i * 1000, 1000000 + i * 1000 + 500, i + 1);
        k.name_id = name;
        dt_emit(f->s, &k);
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    unsetenv("DEVTRACE_GZIP_LEVEL");
    return ut_write_fixture_free(state);
}

static void write_text(const char *path, const char *text)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

/* The trace as dt_chrome_write_buffer writes it, named like the file. */
static char *expected_trace(ut_write_fixture *f, const char *path, size_t *len)
{
    char *text = NULL;
    assert_int_equal(dt_chrome_write_buffer(f->s, path, &text, len), 0);
    return text;
}

static void test_write_creates_the_file_and_leaves_no_tmp(void **state)
{
    ut_write_fixture *f = *state;
    char path[512], tmp[520];
    ut_path_in(f, "trace.json", path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    devtrace_error err = {0, ""};
    assert_int_equal(devtrace_write_chrome(f->s, path, &err), 0);
    assert_true(ut_exists(path));
    assert_false(ut_exists(tmp));
    assert_int_equal(ut_entries_in(f->dir), 1);
    size_t want_len;
    char *want = expected_trace(f, path, &want_len);
    ut_assert_file_holds(path, want, want_len);
    free(want);
}

static void test_write_replaces_an_existing_file(void **state)
{
    ut_write_fixture *f = *state;
    char path[512];
    ut_path_in(f, "trace.json", path, sizeof path);
    write_text(path, "old contents");
    devtrace_error err = {0, ""};
    assert_int_equal(devtrace_write_chrome(f->s, path, &err), 0);
    size_t len;
    char *got = ut_read_file(path, &len);
    assert_true(len > 1000);
    assert_int_equal(got[0], '{');
    assert_int_equal(ut_entries_in(f->dir), 1);
    free(got);
}

static void test_write_into_a_missing_directory_fails_with_eio_and_creates_nothing(void **state)
{
    ut_write_fixture *f = *state;
    char path[512], missing[512];
    ut_path_in(f, "missing", missing, sizeof missing);
    ut_path_in(f, "missing/sub/trace.json", path, sizeof path);
    devtrace_error err = {0, ""};
    assert_int_equal(devtrace_write_chrome(f->s, path, &err), DEVTRACE_EIO);
    assert_int_equal(err.code, DEVTRACE_EIO);
    assert_non_null(strstr(err.message, path));                              /* the path */
    assert_non_null(strstr(err.message, "No such file or directory"));       /* the cause */
    assert_non_null(strstr(err.message, "check that the directory exists")); /* the fix */
    assert_false(ut_exists(missing));
    assert_int_equal(ut_entries_in(f->dir), 0);
}

static void test_a_name_at_the_tmp_that_is_not_ours_is_left_alone(void **state)
{
    ut_write_fixture *f = *state;
    char path[512], tmp[520];
    ut_path_in(f, "trace.json", path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    write_text(path, "the previous trace");
    assert_int_equal(mkdir(tmp, 0700), 0); /* not a stale temporary file of ours */
    devtrace_error err = {0, ""};
    assert_int_equal(devtrace_write_chrome(f->s, path, &err), 0); /* through a free name beside it */
    size_t len;
    char *got = ut_read_file(path, &len);
    assert_non_null(strstr(got, "\"traceEvents\""));
    free(got);
    struct stat st;
    assert_int_equal(stat(tmp, &st), 0);
    assert_true(S_ISDIR(st.st_mode));           /* not ours: left alone */
    assert_int_equal(ut_entries_in(f->dir), 2); /* the trace and that folder: no temporary file left */
}

static void test_failed_rename_leaves_no_tmp_behind(void **state)
{
    ut_write_fixture *f = *state;
    char path[512], tmp[520], inside[600];
    ut_path_in(f, "trace.json", path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    snprintf(inside, sizeof inside, "%s/keep", path);
    assert_int_equal(mkdir(path, 0700), 0); /* a non-empty directory where the file goes */
    write_text(inside, "x");
    devtrace_error err = {0, ""};
    assert_int_equal(devtrace_write_chrome(f->s, path, &err), DEVTRACE_EIO);
    assert_non_null(strstr(err.message, path));
    assert_false(ut_exists(tmp));
    assert_true(ut_exists(inside));
}

/* Writes path with the process's file size limit at 4 KiB (SIGXFSZ ignored), so the
 * write fails partway as on a full disk. Returns devtrace_write_chrome's result. */
static int write_with_a_4k_file_limit(ut_write_fixture *f, const char *path, devtrace_error *err)
{
    struct rlimit old, small;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    small = old;
    small.rlim_cur = 4096;
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    int rc = devtrace_write_chrome(f->s, path, err);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, old_handler);
    return rc;
}

static void test_write_failing_partway_keeps_the_old_file_and_removes_the_tmp(void **state)
{
    ut_write_fixture *f = *state;
    const char *names[] = {"trace.json", "trace.json.gz"};
    setenv("DEVTRACE_GZIP_LEVEL", "0", 1); /* stored: the gzip file outgrows 4 KiB too */
    for (size_t i = 0; i < 2; i++) {
        char path[512], tmp[520];
        ut_path_in(f, names[i], path, sizeof path);
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        write_text(path, "the previous trace");
        devtrace_error err = {0, ""};
        assert_int_equal(write_with_a_4k_file_limit(f, path, &err), DEVTRACE_EIO);
        assert_int_equal(err.code, DEVTRACE_EIO);
        assert_non_null(strstr(err.message, path));
        size_t len;
        char *got = ut_read_file(path, &len);
        assert_string_equal(got, "the previous trace");
        free(got);
        assert_false(ut_exists(tmp));
    }
    assert_int_equal(ut_entries_in(f->dir), 2);
}

static void test_gz_output_is_gzip_of_the_plain_trace(void **state)
{
    ut_write_fixture *f = *state;
    char path[512], tmp[520];
    ut_path_in(f, "trace.json.gz", path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    devtrace_error err = {0, ""};
    assert_int_equal(devtrace_write_chrome(f->s, path, &err), 0);
    assert_false(ut_exists(tmp));
    assert_true(ut_is_gzip(path));
    size_t want_len, file_len;
    char *want = expected_trace(f, path, &want_len);
    ut_assert_gunzipped_holds(path, want, want_len);
    free(ut_read_file(path, &file_len));
    assert_true(file_len < want_len / 4); /* it is compressed */
    free(want);
}

static void test_gzip_level_comes_from_the_environment(void **state)
{
    ut_write_fixture *f = *state;
    char stored[512], best[512];
    ut_path_in(f, "stored.json.gz", stored, sizeof stored);
    ut_path_in(f, "best.json.gz", best, sizeof best);
    devtrace_error err = {0, ""};
    setenv("DEVTRACE_GZIP_LEVEL", "0", 1); /* level 0: stored, not compressed */
    assert_int_equal(devtrace_write_chrome(f->s, stored, &err), 0);
    setenv("DEVTRACE_GZIP_LEVEL", "9", 1);
    assert_int_equal(devtrace_write_chrome(f->s, best, &err), 0);
    size_t stored_len, best_len, plain_len;
    char *plain = expected_trace(f, stored, &plain_len);
    free(ut_read_file(stored, &stored_len));
    free(ut_read_file(best, &best_len));
    assert_true(stored_len > plain_len);
    assert_true(best_len < plain_len / 4);
    ut_assert_gunzipped_holds(stored, plain, plain_len);
    free(plain);
}

static void test_a_bad_gzip_level_is_noted_and_level_1_used(void **state)
{
    ut_write_fixture *f = *state;
    char bad[512], one[512];
    ut_path_in(f, "bad-level.json.gz", bad, sizeof bad);
    ut_path_in(f, "level-1.json.gz", one, sizeof one);
    devtrace_error err = {0, ""};
    setenv("DEVTRACE_GZIP_LEVEL", "1", 1);
    assert_int_equal(devtrace_write_chrome(f->s, one, &err), 0);
    assert_int_equal(f->s->nnotes, 0);
    setenv("DEVTRACE_GZIP_LEVEL", "07", 1);
    assert_int_equal(devtrace_write_chrome(f->s, bad, &err), 0);
    unsetenv("DEVTRACE_GZIP_LEVEL");
    assert_int_equal(f->s->nnotes, 1);
    assert_string_equal(f->s->notes[0], "$DEVTRACE_GZIP_LEVEL=\"07\" is not a level from 0 to 9: 1 used");
    size_t bad_len, one_len;
    char *b = ut_read_file(bad, &bad_len), *o = ut_read_file(one, &one_len);
    assert_true(bad_len > 0 && bad_len < one_len * 2); /* compressed at level 1, not stored */
    free(b);
    free(o);
    size_t got_len;
    char *got = ut_gunzip_file(bad, &got_len);
    assert_true(got_len > 0 && strstr(got, "$DEVTRACE_GZIP_LEVEL=\\\"07\\\" is not a level") != NULL);
    free(got);
}

static void test_missing_path_is_invalid(void **state)
{
    ut_write_fixture *f = *state;
    devtrace_error err = {0, ""};
    assert_int_equal(devtrace_write_chrome(f->s, NULL, &err), DEVTRACE_EINVAL);
    assert_string_equal(err.message, "no output path given");
    assert_int_equal(devtrace_write_chrome(f->s, "", &err), DEVTRACE_EINVAL);
    assert_int_equal(devtrace_write_chrome(NULL, "x.json", &err), DEVTRACE_EINVAL);
    assert_int_equal(devtrace_write_chrome(f->s, "", NULL), DEVTRACE_EINVAL); /* err optional */
}

static void test_session_that_never_started_writes_nothing(void **state)
{
    ut_write_fixture *f = *state;
    devtrace_config cfg;
    devtrace_config_init(&cfg);
    cfg.backend = "none";
    devtrace_error err = {0, ""};
    devtrace_session *s = devtrace_open(&cfg, &err);
    assert_non_null(s);
    char path[512];
    ut_path_in(f, "trace.json", path, sizeof path);
    assert_int_equal(devtrace_write_chrome(s, path, &err), DEVTRACE_ESTATE);
    assert_non_null(strstr(err.message, "devtrace_start"));
    assert_int_equal(ut_entries_in(f->dir), 0);
    devtrace_close(s);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_write_creates_the_file_and_leaves_no_tmp),
        T(test_write_replaces_an_existing_file),
        T(test_write_into_a_missing_directory_fails_with_eio_and_creates_nothing),
        T(test_a_name_at_the_tmp_that_is_not_ours_is_left_alone),
        T(test_failed_rename_leaves_no_tmp_behind),
        T(test_write_failing_partway_keeps_the_old_file_and_removes_the_tmp),
        T(test_gz_output_is_gzip_of_the_plain_trace),
        T(test_gzip_level_comes_from_the_environment),
        T(test_a_bad_gzip_level_is_noted_and_level_1_used),
        T(test_missing_path_is_invalid),
        T(test_session_that_never_started_writes_nothing),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
