/* test_public_api.c: what include/devtrace.h gives a consumer that writes its own output
 * (src/core/session_info.c): the version, the validation text and runtime category, the
 * capture window, the notes and the devices; devtrace_config's size (a zeroed config, a
 * config from an older header, one too small); start and stop that say why they failed;
 * devtrace_drain_events telling a running or never-started session, an empty one and one
 * with events apart, and leaving a running session running. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "unit_session.h"

static devtrace_session *open_none(void)
{
    devtrace_config cfg;
    devtrace_config_init(&cfg);
    cfg.backend = "none";
    devtrace_error err = {0, ""};
    devtrace_session *s = devtrace_open(&cfg, &err);
    assert_non_null(s);
    return s;
}

static void version_is_the_headers(void **state)
{
    assert_string_equal(devtrace_version(), DEVTRACE_VERSION_STRING);
    char v[32];
    snprintf(v, sizeof v, "%d.%d.%d", DEVTRACE_VERSION_MAJOR, DEVTRACE_VERSION_MINOR, DEVTRACE_VERSION_PATCH);
    assert_string_equal(v, DEVTRACE_VERSION_STRING);
}

static void config_init_sets_the_size(void **state)
{
    devtrace_config cfg;
    memset(&cfg, 0xff, sizeof cfg);
    devtrace_config_init(&cfg);
    assert_int_equal(cfg.size, sizeof cfg);
    assert_null(cfg.backend);
    assert_int_equal(cfg.rank, -1);
}

static void a_zeroed_config_is_read_whole(void **state)
{
    devtrace_config cfg;
    memset(&cfg, 0, sizeof cfg); /* no devtrace_config_init: size 0, rank 0 given */
    cfg.backend = "none";
    cfg.runtime_category = "my_runtime";
    devtrace_session *s = devtrace_open(&cfg, NULL);
    assert_non_null(s);
    assert_string_equal(devtrace_backend_name(s), "none");
    assert_string_equal(devtrace_runtime_category(s), "my_runtime");
    devtrace_close(s);
}

static void an_older_configs_missing_fields_take_their_defaults(void **state)
{
    devtrace_config cfg;
    devtrace_config_init(&cfg);
    cfg.backend = "none";
    cfg.runtime_category = "ignored: past the older size";
    cfg.size = offsetof(devtrace_config, runtime_category); /* a header that ended after backend */
    devtrace_session *s = devtrace_open(&cfg, NULL);
    assert_non_null(s);
    assert_string_equal(devtrace_backend_name(s), "none");
    assert_string_equal(devtrace_runtime_category(s), "cuda_runtime"); /* the none backend's default */
    devtrace_close(s);
}

static void a_config_smaller_than_any_is_refused(void **state)
{
    devtrace_config cfg;
    devtrace_config_init(&cfg);
    cfg.size = 3;
    devtrace_error err = {0, ""};
    assert_null(devtrace_open(&cfg, &err));
    assert_int_equal(err.code, DEVTRACE_EINVAL);
    assert_string_equal(err.message, "devtrace_config.size is 3, smaller than any devtrace_config; fill the config "
                                     "with devtrace_config_init");
}

static void validation_and_category_are_the_traces(void **state)
{
    devtrace_session *s = open_none();
    char expected[256];
    dt_backend_validation_text(&dt_backend_none, expected, sizeof expected);
    assert_string_equal(devtrace_validation(s), expected);
    assert_true(strlen(expected) > 0);
    assert_string_equal(devtrace_runtime_category(s), "cuda_runtime"); /* the none backend's default */
    devtrace_close(s);
    assert_string_equal(devtrace_validation(NULL), "");
    assert_string_equal(devtrace_runtime_category(NULL), "");
}

static void capture_window_follows_start_and_stop(void **state)
{
    devtrace_session *s = open_none();
    uint64_t start = 7, stop = 7;
    assert_int_equal(devtrace_capture_window(s, &start, &stop), DEVTRACE_ESTATE);
    assert_int_equal(start, 0);
    assert_int_equal(stop, 0);
    uint64_t before = dt_realtime_ns();
    assert_int_equal(devtrace_start(s), 0);
    assert_int_equal(devtrace_capture_window(s, &start, &stop), 0);
    assert_in_range(start, before, dt_realtime_ns());
    assert_int_equal(stop, 0);
    assert_int_equal(devtrace_stop(s), 0);
    uint64_t after = dt_realtime_ns();
    assert_int_equal(devtrace_capture_window(s, &start, &stop), 0);
    assert_in_range(stop, start, after);
    devtrace_close(s);
}

static void notes_are_listed_in_order(void **state)
{
    dt_session *s = ut_offline_session();
    assert_int_equal(devtrace_note_count(s), 0);
    assert_null(devtrace_note(s, 0));
    dt_add_note(s, "first %d", 1);
    dt_add_note(s, "second");
    assert_int_equal(devtrace_note_count(s), 2);
    assert_string_equal(devtrace_note(s, 0), "first 1");
    assert_string_equal(devtrace_note(s, 1), "second");
    assert_null(devtrace_note(s, 2));
    assert_null(devtrace_note(s, -1));
    devtrace_close(s);
}

/* A trace keeps 31 distinct notes; the 32nd slot says that more were dropped, and the
 * session counts them (9 of the 40 here: the one the last slot replaced and the 8 after). */
static void notes_past_the_cap_are_counted_and_said(void **state)
{
    (void)state;
    dt_session *s = ut_offline_session();
    for (int i = 0; i < 40; i++)
        dt_add_note(s, "note %d", i);
    dt_add_note(s, "note %d", 3); /* a repeat is not a new note */
    assert_int_equal(devtrace_note_count(s), 32);
    assert_string_equal(devtrace_note(s, 30), "note 30");
    assert_string_equal(devtrace_note(s, 31), "further notes were dropped: a trace keeps 31 distinct notes");
    assert_int_equal(s->stats.notes_dropped, 9);
    devtrace_close(s);
}

static void devices_are_given_up_to_the_callers_size(void **state)
{
    dt_session *s = ut_offline_session();
    dt_device_props p = ut_occupancy_device("Device zero", 9, 132, 49152, 233472);
    p.id = 3;
    p.compute_minor = 0;
    dt_add_device(s, &p);
    assert_int_equal(devtrace_device_count(s), 1);
    devtrace_device d;
    memset(&d, 0, sizeof d);
    d.size = sizeof d;
    assert_int_equal(devtrace_device_get(s, 0, &d), 0);
    assert_int_equal(d.size, sizeof d);
    assert_int_equal(d.id, 3);
    assert_string_equal(d.name, "Device zero");
    assert_int_equal(d.total_global_mem, 85899345920ull);
    assert_int_equal(d.compute_major, 9);
    assert_int_equal(d.num_sms, 132);
    assert_int_equal(d.warp_size, 32);
    assert_int_equal(d.smem_per_sm, 233472);
    assert_int_equal(d.has_occupancy, 1);
    /* An older caller's struct that ends after total_global_mem: nothing past it is written. */
    unsigned char older[sizeof d];
    memset(older, 0xab, sizeof older);
    devtrace_device *o = (devtrace_device *)older;
    size_t older_size = offsetof(devtrace_device, compute_major);
    o->size = older_size;
    assert_int_equal(devtrace_device_get(s, 0, o), 0);
    assert_int_equal(o->total_global_mem, 85899345920ull);
    assert_int_equal(older[older_size], 0xab);
    o->size = offsetof(devtrace_device, name); /* without the name: refused */
    assert_int_equal(devtrace_device_get(s, 0, o), DEVTRACE_EINVAL);
    d.size = sizeof d;
    assert_int_equal(devtrace_device_get(s, 1, &d), DEVTRACE_EINVAL);
    devtrace_close(s);
}

/* devtrace_interned_name: the text of an id of the session's string table ("" for 0, an id
 * it does not have, or no session). */
static void interned_names_are_given_by_id(void **state)
{
    (void)state;
    dt_session *s = ut_offline_session();
    uint32_t acl = dt_session_intern(s, "acl"), runtime = dt_session_intern(s, "runtime");
    assert_true(acl != 0 && runtime != 0 && acl != runtime);
    assert_string_equal(devtrace_interned_name(s, acl), "acl");
    assert_string_equal(devtrace_interned_name(s, runtime), "runtime");
    assert_string_equal(devtrace_interned_name(s, 0), "");
    assert_string_equal(devtrace_interned_name(s, runtime + 1000), "");
    assert_string_equal(devtrace_interned_name(NULL, acl), "");
    devtrace_close(s);
}

static void start_and_stop_say_why_they_fail(void **state)
{
    devtrace_session *s = open_none();
    devtrace_error err = {0, ""};
    assert_int_equal(devtrace_stop_with_error(s, &err), DEVTRACE_ESTATE);
    assert_string_equal(err.message, "the session is open and not started; only a running session stops");
    assert_int_equal(devtrace_start_with_error(s, &err), 0);
    assert_int_equal(err.code, 0);
    assert_string_equal(err.message, "");
    assert_int_equal(devtrace_start_with_error(s, &err), DEVTRACE_ESTATE);
    assert_string_equal(err.message, "the session is already running; a session starts once, after devtrace_open");
    assert_int_equal(devtrace_stop_with_error(s, &err), 0);
    assert_int_equal(devtrace_stop_with_error(s, &err), DEVTRACE_ESTATE);
    assert_string_equal(err.message, "the session is stopped; only a running session stops");
    devtrace_close(s);
    assert_int_equal(devtrace_start_with_error(NULL, &err), DEVTRACE_EINVAL);
    assert_string_equal(err.message, "no session (devtrace_open returned NULL)");
}

static void count_events(const devtrace_event *ev, const char *name, void *user)
{
    (*(size_t *)user)++;
}

static void drain_events_tells_running_empty_and_full_apart(void **state)
{
    devtrace_session *s = open_none();
    devtrace_error err = {0, ""};
    size_t count = 99, seen = 0;
    assert_int_equal(devtrace_drain_events(s, count_events, &seen, &count, &err), DEVTRACE_ESTATE);
    assert_string_equal(err.message, "the session is open and not started; call devtrace_stop before draining it");
    assert_int_equal(count, 0);
    assert_int_equal(devtrace_start(s), 0);
    assert_int_equal(devtrace_drain_events(s, count_events, &seen, &count, &err), DEVTRACE_ESTATE);
    assert_string_equal(err.message, "the session is already running; call devtrace_stop before draining it");
    uint64_t start, stop;
    assert_int_equal(devtrace_capture_window(s, &start, &stop), 0);
    assert_int_equal(stop, 0); /* still running: the drain did not stop it */
    assert_int_equal(devtrace_stop(s), 0);
    count = 99;
    assert_int_equal(devtrace_drain_events(s, count_events, &seen, &count, &err), 0); /* empty: success, 0 */
    assert_int_equal(count, 0);
    assert_int_equal(seen, 0);
    devtrace_close(s);

    dt_session *full = ut_offline_session();
    devtrace_event k = ut_kernel(100, 200, 1), r = ut_runtime(50, 90, 1);
    assert_int_equal(dt_emit(full, &k), 0);
    assert_int_equal(dt_emit(full, &r), 0);
    assert_int_equal(devtrace_drain_events(full, count_events, &seen, &count, &err), 0);
    assert_int_equal(count, 2);
    assert_int_equal(seen, 2);
    assert_int_equal(devtrace_drain_events(full, NULL, NULL, NULL, &err), 0); /* again; no callback, no count */
    devtrace_close(full);
    assert_int_equal(devtrace_drain_events(NULL, NULL, NULL, &count, &err), DEVTRACE_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(version_is_the_headers),
        cmocka_unit_test(config_init_sets_the_size),
        cmocka_unit_test(a_zeroed_config_is_read_whole),
        cmocka_unit_test(an_older_configs_missing_fields_take_their_defaults),
        cmocka_unit_test(a_config_smaller_than_any_is_refused),
        cmocka_unit_test(validation_and_category_are_the_traces),
        cmocka_unit_test(capture_window_follows_start_and_stop),
        cmocka_unit_test(notes_are_listed_in_order),
        cmocka_unit_test(notes_past_the_cap_are_counted_and_said),
        cmocka_unit_test(devices_are_given_up_to_the_callers_size),
        cmocka_unit_test(interned_names_are_given_by_id),
        cmocka_unit_test(start_and_stop_say_why_they_fail),
        cmocka_unit_test(drain_events_tells_running_empty_and_full_apart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
