/* test_write_alloc_failure.c: the Chrome writer (dt_chrome_write_file, src/sinks/) when an
 * allocation fails, for every allocation it makes.
 *
 * The executable is linked with the linker's --wrap for malloc, calloc and realloc, so
 * every allocation devtrace's own code makes goes through the counters here (the C
 * library's and zlib's own allocations do not). A first write of a finalised session counts
 * the allocations the writer makes; then, for N = 1, 2, ... until a write makes fewer than N,
 * the Nth allocation fails and the test checks the outcome exactly: the write returns
 * DEVTRACE_ENOMEM or DEVTRACE_EIO with "memory" in the message, and leaves neither the trace
 * nor its .tmp behind; a write that never reached the Nth allocation returns 0 and writes
 * the same bytes as the first. ASan (scripts/test) checks that no failure leaks or frees
 * twice. Run for the serial writer and for three workers, plain and gzip. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "unit_files.h"
#include "unit_session.h"

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);

static atomic_int armed;      /* 1 while a write is being counted */
static atomic_size_t made;    /* allocations counted since armed */
static atomic_size_t fail_at; /* the allocation that fails (1-based); 0: none */
static atomic_int fired;      /* the failing allocation was reached */

/* 1 when this allocation is to fail. */
static int allocation_fails(void)
{
    if (!atomic_load(&armed))
        return 0;
    size_t n = atomic_fetch_add(&made, 1) + 1;
    if (n != atomic_load(&fail_at))
        return 0;
    atomic_store(&fired, 1);
    errno = ENOMEM;
    return 1;
}

void *__wrap_malloc(size_t size)
{
    return allocation_fails() ? NULL : __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
    return allocation_fails() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
    return allocation_fails() ? NULL : __real_realloc(p, size);
}

static const char *const names[] = {
    "plain_kernel",
    "quote\"and\\slash",
    "tab\tand\x01 control",
    "long_name__ZN2at6native29vectorized_elementwise_kernelILi4ENS0_23FillFunctor_float_EEEvT0_",
};
#define NNAMES (sizeof names / sizeof names[0])
#define CALLS 1500 /* 3000 events: three pieces of events for the pipeline */

/* An offline session, finalised when asked: CALLS runtime calls each launching a kernel, a
 * note, a device. */
static dt_session *small_session(int finalised)
{
    dt_session *s = ut_offline_session();
    assert_non_null(s);
    dt_device_props d = ut_occupancy_device("Device zero", 8, 108, 49152, 167936);
    dt_add_device(s, &d);
    uint32_t ids[NNAMES];
    for (size_t i = 0; i < NNAMES; i++)
        ids[i] = dt_session_intern(s, names[i]);
    uint64_t t = 1000000;
    for (uint64_t corr = 1; corr <= CALLS; corr++, t += 5000) {
        devtrace_event call = ut_runtime(t, t + 700, corr);
        call.name_id = ids[corr % NNAMES];
        assert_int_equal(dt_emit(s, &call), 0);
        devtrace_event k = ut_kernel(t + 1000, t + 3000, corr);
        k.name_id = ids[(corr + 1) % NNAMES];
        assert_int_equal(dt_emit(s, &k), 0);
    }
    dt_set_window(s, 500000, t + 1000);
    dt_add_note(s, "a note");
    if (finalised)
        assert_int_equal(dt_session_finalize(s), 0);
    return s;
}

/* The write with the Nth allocation failing (0: none); *reached when it was reached. */
static int write_failing(dt_session *s, const char *path, unsigned workers, size_t n, int *reached, devtrace_error *err,
                         size_t *count)
{
    atomic_store(&made, 0);
    atomic_store(&fail_at, n);
    atomic_store(&fired, 0);
    atomic_store(&armed, 1);
    int rc = dt_chrome_write_file(s, path, workers, err);
    atomic_store(&armed, 0);
    *reached = atomic_load(&fired);
    if (count)
        *count = atomic_load(&made);
    return rc;
}

static void every_allocation_fails_in_turn(const char *file, unsigned workers)
{
    char dir[256], path[512], tmp[520];
    assert_int_equal(ut_make_temp_dir(dir, sizeof dir), 0);
    snprintf(path, sizeof path, "%s/%s", dir, file);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    dt_session *s = small_session(1);
    devtrace_error err = {0, ""};
    int reached;
    size_t total = 0, len = 0, again_len = 0;
    assert_int_equal(write_failing(s, path, workers, 0, &reached, &err, &total), 0);
    char *reference = ut_read_file(path, &len);
    assert_true(total >= 4); /* the names, the escaped text, the writer and its buffer at least */
    remove(path);
    size_t failures = 0;
    for (size_t n = 1;; n++) {
        devtrace_error e = {0, ""};
        int rc = write_failing(s, path, workers, n, &reached, &e, NULL);
        if (!reached) { /* this write made fewer than n allocations: it must succeed as the first did */
            assert_int_equal(rc, 0);
            char *again = ut_read_file(path, &again_len);
            assert_int_equal(again_len, len);
            assert_memory_equal(again, reference, len);
            free(again);
            break;
        }
        failures++;
        if (rc != DEVTRACE_ENOMEM && rc != DEVTRACE_EIO)
            fail_msg("allocation %zu of %s (%u workers): rc %d (%s)", n, file, workers, rc, e.message);
        if (!strstr(e.message, "memory"))
            fail_msg("allocation %zu of %s (%u workers): message without the cause: %s", n, file, workers, e.message);
        assert_false(ut_exists(path));
        assert_false(ut_exists(tmp));
    }
    assert_true(failures >= total); /* every allocation of the first write was made to fail */
    print_message("%s, %u workers: %zu allocations, each failed in turn\n", file, workers, failures);
    free(reference);
    devtrace_close(s);
    ut_remove_tree(dir);
}

static void serial_plain_write_fails_cleanly_at_every_allocation(void **state)
{
    every_allocation_fails_in_turn("trace.json", 0);
}

static void serial_gzip_write_fails_cleanly_at_every_allocation(void **state)
{
    every_allocation_fails_in_turn("trace.json.gz", 0);
}

static void pipeline_plain_write_fails_cleanly_at_every_allocation(void **state)
{
    every_allocation_fails_in_turn("trace.json", 3);
}

static void pipeline_gzip_write_fails_cleanly_at_every_allocation(void **state)
{
    every_allocation_fails_in_turn("trace.json.gz", 3);
}

/* The first write finalises the session (sorts its events); when one of that step's first
 * allocations fails, the write says out of memory (not "never started"), leaves no file, and
 * the session stays whole: the next write succeeds with the bytes of a session finalised
 * beforehand. */
static void finalising_out_of_memory_is_reported_and_recoverable(void **state)
{
    (void)state;
    char dir[256], path[512], tmp[520];
    assert_int_equal(ut_make_temp_dir(dir, sizeof dir), 0);
    snprintf(path, sizeof path, "%s/trace.json", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int reached;
    size_t len = 0, again_len = 0;
    dt_session *ref = small_session(1);
    devtrace_error err = {0, ""};
    assert_int_equal(write_failing(ref, path, 0, 0, &reached, &err, NULL), 0);
    char *reference = ut_read_file(path, &len);
    remove(path);
    devtrace_close(ref);
    for (size_t n = 1; n <= 4; n++) {
        dt_session *s = small_session(0);
        devtrace_error e = {0, ""};
        assert_int_equal(write_failing(s, path, 0, n, &reached, &e, NULL), DEVTRACE_ENOMEM);
        assert_true(reached);
        assert_string_equal(e.message, "out of memory while sorting the session's events for the trace");
        assert_false(ut_exists(path));
        assert_false(ut_exists(tmp));
        assert_int_equal(write_failing(s, path, 0, 0, &reached, &e, NULL), 0);
        char *again = ut_read_file(path, &again_len);
        assert_int_equal(again_len, len);
        assert_memory_equal(again, reference, len);
        free(again);
        remove(path);
        devtrace_close(s);
    }
    free(reference);
    ut_remove_tree(dir);
}

int main(void)
{
    unsetenv("DEVTRACE_WRITE_THREADS");
    unsetenv("DEVTRACE_GZIP_LEVEL");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(serial_plain_write_fails_cleanly_at_every_allocation),
        cmocka_unit_test(serial_gzip_write_fails_cleanly_at_every_allocation),
        cmocka_unit_test(pipeline_plain_write_fails_cleanly_at_every_allocation),
        cmocka_unit_test(pipeline_gzip_write_fails_cleanly_at_every_allocation),
        cmocka_unit_test(finalising_out_of_memory_is_reported_and_recoverable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
