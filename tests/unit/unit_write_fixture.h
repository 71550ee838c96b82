/* unit_write_fixture.h: the fixture of the unit tests that write trace files (header only):
 * a temporary folder of the test's own and an offline session to fill, both gone after the
 * test, and names of files in that folder. */
#ifndef UNIT_WRITE_FIXTURE_H
#define UNIT_WRITE_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "unit_files.h"
#include "unit_session.h"

typedef struct ut_write_fixture {
    char dir[256]; /* made empty for the test, removed with all in it after */
    dt_session *s; /* owned: offline, its window set, no events yet */
} ut_write_fixture;

/* A new folder and a session whose capture window is [window_start, window_stop]; fails
 * the test when either cannot be made. */
static inline ut_write_fixture *ut_write_fixture_new(uint64_t window_start, uint64_t window_stop)
{
    ut_write_fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    assert_int_equal(ut_make_temp_dir(f->dir, sizeof f->dir), 0);
    f->s = ut_offline_session();
    assert_non_null(f->s);
    dt_set_window(f->s, window_start, window_stop);
    return f;
}

/* Removes the folder and closes the session (a cmocka teardown). */
static inline int ut_write_fixture_free(void **state)
{
    ut_write_fixture *f = *state;
    ut_remove_tree(f->dir);
    devtrace_close(f->s);
    free(f);
    return 0;
}

/* "<the fixture's folder>/name" in buf. */
static inline const char *ut_path_in(const ut_write_fixture *f, const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s", f->dir, name);
    return buf;
}

#endif
