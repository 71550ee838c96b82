/* test_errors.c: errors as values (src/core/errors.c) and what devtrace_open says when
 * it cannot do what was asked (src/core/session.c, src/backends/registry.c).
 *
 * Covers: devtrace_strerror and devtrace_errname for every code of DEVTRACE_ERRNO_MAP
 * and for unknown codes; dt_error_set and dt_error_wrap building an "outer: inner"
 * cause chain, truncated safely; devtrace_open with an unknown backend (NULL,
 * DEVTRACE_EUNKNOWN_BACKEND, a message listing the backend names), by argument and by
 * $DEVTRACE_BACKEND; a $DEVTRACE_BACKEND=none session (a non-empty reason, start and
 * stop work, drain gives 0 events, the trace says "backend": "none" and why); bad
 * $DEVTRACE_MAX_EVENTS, $RANK, $WORLD_SIZE (NULL with a message naming the variable);
 * state errors and NULL arguments of the public API; the kind names. Every test starts
 * and ends with the devtrace variables unset. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/errors.h"
#include "unit_session.h"

static const char *const env_vars[] = {"DEVTRACE_BACKEND", "DEVTRACE_MAX_EVENTS", "RANK", "WORLD_SIZE", "DEVTRACE_RAW"};

static int clean_env(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof env_vars / sizeof env_vars[0]; i++)
        unsetenv(env_vars[i]);
    return 0;
}

static void test_every_code_has_its_name_and_message(void **state)
{
    (void)state;
    const struct {
        int code;
        const char *name, *message;
    } expect[] = {
        {DEVTRACE_EOK, "DEVTRACE_EOK", "success"},
        {DEVTRACE_EINVAL, "DEVTRACE_EINVAL", "invalid argument"},
        {DEVTRACE_ENOMEM, "DEVTRACE_ENOMEM", "out of memory"},
        {DEVTRACE_EUNAVAILABLE, "DEVTRACE_EUNAVAILABLE", "no tracing backend is available"},
        {DEVTRACE_EUNKNOWN_BACKEND, "DEVTRACE_EUNKNOWN_BACKEND", "unknown backend name"},
        {DEVTRACE_ESTATE, "DEVTRACE_ESTATE", "call not valid in the session's current state"},
        {DEVTRACE_EIO, "DEVTRACE_EIO", "input/output error"},
        {DEVTRACE_EVENDOR, "DEVTRACE_EVENDOR", "the vendor library reported an error"},
        {DEVTRACE_EEMPTY, "DEVTRACE_EEMPTY", "no external correlation id is pushed on this thread"},
        {DEVTRACE_EFORMAT, "DEVTRACE_EFORMAT", "malformed input"},
        {DEVTRACE_ENOTSUP, "DEVTRACE_ENOTSUP", "not supported by this backend"},
    };
    size_t n = sizeof expect / sizeof expect[0];
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(expect[i].code, -(int)i); /* 0, -1, -2, ... in table order */
        assert_string_equal(devtrace_errname(expect[i].code), expect[i].name);
        assert_string_equal(devtrace_strerror(expect[i].code), expect[i].message);
    }
    /* The table above covers the whole map: a code added there must be added here. */
    size_t in_map = 0;
#define COUNT_CODE(name, value, msg) in_map++;
    DEVTRACE_ERRNO_MAP(COUNT_CODE)
#undef COUNT_CODE
    assert_int_equal(in_map, n);
}

static void test_unknown_codes_have_a_fallback_name_and_message(void **state)
{
    (void)state;
    const int unknown[] = {1, -11, -999, 12345};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        assert_string_equal(devtrace_strerror(unknown[i]), "unknown error code");
        assert_string_equal(devtrace_errname(unknown[i]), "DEVTRACE_E?");
    }
}

static void test_error_set_fills_code_and_formatted_message(void **state)
{
    (void)state;
    devtrace_error err = {0, ""};
    assert_int_equal(dt_error_set(&err, DEVTRACE_EVENDOR, "dlopen %s: %s", "libmcpti.so", "not found"),
                     DEVTRACE_EVENDOR);
    assert_int_equal(err.code, DEVTRACE_EVENDOR);
    assert_string_equal(err.message, "dlopen libmcpti.so: not found");
    assert_int_equal(dt_error_set(NULL, DEVTRACE_EIO, "ignored"), DEVTRACE_EIO); /* err optional */
}

static void test_error_wrap_builds_outer_colon_inner(void **state)
{
    (void)state;
    devtrace_error err = {0, ""};
    dt_error_set(&err, DEVTRACE_EVENDOR, "dlopen libmcpti.so: no such file");
    assert_int_equal(dt_error_wrap(&err, "could not open backend %s", "mcpti"), DEVTRACE_EVENDOR);
    assert_string_equal(err.message, "could not open backend mcpti: dlopen libmcpti.so: no such file");
    dt_error_wrap(&err, "devtrace_open");
    assert_string_equal(err.message, "devtrace_open: could not open backend mcpti: dlopen libmcpti.so: no such file");
    assert_int_equal(err.code, DEVTRACE_EVENDOR); /* the code is the root cause's */
    assert_int_equal(dt_error_wrap(NULL, "outer"), DEVTRACE_EINVAL);
}

static void test_error_wrap_truncates_a_full_message_safely(void **state)
{
    (void)state;
    devtrace_error err = {DEVTRACE_EIO, ""};
    memset(err.message, 'x', sizeof err.message - 1);
    err.message[sizeof err.message - 1] = '\0';
    dt_error_wrap(&err, "outer");
    assert_int_equal(strlen(err.message), sizeof err.message - 1);
    assert_memory_equal(err.message, "outer: xxx", 10);
    assert_int_equal(err.message[sizeof err.message - 2], 'x');
}

static void test_open_with_an_unknown_backend_lists_the_names(void **state)
{
    (void)state;
    devtrace_config cfg;
    devtrace_config_init(&cfg);
    cfg.backend = "nonexistent";
    devtrace_error err = {0, ""};
    assert_null(devtrace_open(&cfg, &err));
    assert_int_equal(err.code, DEVTRACE_EUNKNOWN_BACKEND);
    assert_non_null(strstr(err.message, "\"nonexistent\""));
    char names[256];
    dt_backend_names(names, sizeof names); /* every compiled-in backend, then "none" */
    assert_non_null(strstr(err.message, names));
    assert_non_null(strstr(err.message, "auto, "));
    assert_non_null(strstr(err.message, "none"));
    assert_null(devtrace_open(&cfg, NULL)); /* err optional */
}

static void test_unknown_backend_from_the_environment(void **state)
{
    (void)state;
    setenv("DEVTRACE_BACKEND", "bogus", 1);
    devtrace_error err = {0, ""};
    assert_null(devtrace_open(NULL, &err));
    assert_int_equal(err.code, DEVTRACE_EUNKNOWN_BACKEND);
    assert_non_null(strstr(err.message, "\"bogus\""));
}

static void test_backend_none_from_the_environment_runs_and_records_nothing(void **state)
{
    (void)state;
    setenv("DEVTRACE_BACKEND", "none", 1);
    devtrace_error err = {0, ""};
    devtrace_session *s = devtrace_open(NULL, &err);
    assert_non_null(s);
    assert_int_equal(err.code, 0);
    assert_string_equal(devtrace_backend_name(s), "none");
    const char *reason = devtrace_unavailable_reason(s);
    assert_true(strlen(reason) > 0);
    assert_int_equal(devtrace_start(s), 0);
    assert_int_equal(devtrace_stop(s), 0);
    assert_int_equal(devtrace_drain(s, NULL, NULL), 0);
    const devtrace_stats *st = devtrace_stats_get(s);
    for (int k = 0; k < DEVTRACE_KIND_COUNT; k++)
        assert_int_equal(st->events[k], 0);

    char error[160] = "";
    uj_value *root = ut_chrome_trace(s, NULL, error);
    if (!root)
        fail_msg("the trace is not valid JSON: %s", error);
    const uj_value *dt = uj_get(root, "devtrace");
    assert_string_equal(uj_get_str(dt, "backend"), "none");
    assert_string_equal(uj_get_str(dt, "unavailable"), reason);
    assert_int_equal(uj_get(root, "traceEvents")->n, 1); /* only "Record Window End" */
    uj_free(root);
    devtrace_close(s);
}

/* The test's dlopen (the executable is linked with --wrap=dlopen): the OpenCL loader is
 * absent while hide_opencl_loader is set, as on a machine without it. */
void *__real_dlopen(const char *file, int flags);
void *__wrap_dlopen(const char *file, int flags);
static int hide_opencl_loader;

void *__wrap_dlopen(const char *file, int flags)
{
    if (hide_opencl_loader && file && strcmp(file, "libOpenCL.so.1") == 0)
        return NULL;
    return __real_dlopen(file, flags);
}

/* auto on a machine where no backend can trace: every vendor library's override names a
 * missing file and the OpenCL loader is absent. The session is "none", and its reason lists
 * every compiled-in backend, in the auto order, each with its own cause. */
static void test_auto_falling_back_to_none_says_why(void **state)
{
    (void)state;
    char vars[16][64], paths[16][128];
    int nvars = 0;
    for (const dt_backend *const *b = dt_backends(); *b && nvars < 16; b++) {
        if (strcmp((*b)->name, "opencl") == 0)
            continue;
        snprintf(vars[nvars], sizeof vars[nvars], "DEVTRACE_%s_LIBRARY", (*b)->name);
        for (char *c = vars[nvars]; *c; c++)
            *c = (char)(*c >= 'a' && *c <= 'z' ? *c - 'a' + 'A' : *c);
        snprintf(paths[nvars], sizeof paths[nvars], "/nonexistent/lib%s.so", (*b)->name);
        setenv(vars[nvars], paths[nvars], 1);
        nvars++;
    }
    hide_opencl_loader = 1;
    devtrace_config cfg;
    devtrace_config_init(&cfg);
    cfg.backend = "auto";
    devtrace_error err = {0, ""};
    devtrace_session *s = devtrace_open(&cfg, &err);
    hide_opencl_loader = 0;
    for (int i = 0; i < nvars; i++)
        unsetenv(vars[i]);
    assert_non_null(s);
    assert_string_equal(devtrace_backend_name(s), "none");
    const char *reason = devtrace_unavailable_reason(s), *at = reason;
    int i = 0;
    for (const dt_backend *const *b = dt_backends(); *b; b++) {
        char cause[512];
        if (strcmp((*b)->name, "opencl") == 0) {
            snprintf(cause, sizeof cause,
                     "%sopencl: libOpenCL.so.1 not found (install ocl-icd-libopencl1 and an ICD "
                     "such as pocl-opencl-icd)",
                     at == reason ? "" : "; ");
        } else {
            snprintf(cause, sizeof cause,
                     "%s%s: $%s=%s cannot be loaded: %s: cannot open shared object file: No such "
                     "file or directory; point it at ",
                     at == reason ? "" : "; ", (*b)->name, vars[i], paths[i], paths[i]);
            i++;
        }
        const char *found = strstr(at, cause); /* each after the one before; the first at the start */
        if (!found || (at == reason && found != reason))
            fail_msg("the reason lacks, after offset %td, \"%s\"; it is: %s", at - reason, cause, reason);
        at = found + strlen(cause);
    }
    assert_string_equal(at, ""); /* the last backend's cause (OpenCL's) ends the reason */
    devtrace_close(s);
}

static void expect_bad_variable(const char *name, const char *value)
{
    setenv(name, value, 1);
    devtrace_config cfg;
    devtrace_config_init(&cfg);
    cfg.backend = "none";
    devtrace_error err = {0, ""};
    devtrace_session *s = devtrace_open(&cfg, &err);
    if (s)
        fail_msg("$%s=\"%s\" was accepted", name, value);
    assert_int_equal(err.code, DEVTRACE_EINVAL);
    char quoted[128];
    snprintf(quoted, sizeof quoted, "$%s=\"%s\"", name, value);
    if (!strstr(err.message, quoted))
        fail_msg("message does not name %s: %s", quoted, err.message);
    unsetenv(name);
}

static void test_bad_max_events_variable_is_refused_by_name(void **state)
{
    (void)state;
    expect_bad_variable("DEVTRACE_MAX_EVENTS", "abc");
    expect_bad_variable("DEVTRACE_MAX_EVENTS", "0");
    expect_bad_variable("DEVTRACE_MAX_EVENTS", "-5");
    expect_bad_variable("DEVTRACE_MAX_EVENTS", "12abc");
    expect_bad_variable("DEVTRACE_MAX_EVENTS", "99999999999999999999999");
}

static void test_max_events_variable_sets_the_bound(void **state)
{
    (void)state;
    setenv("DEVTRACE_MAX_EVENTS", "100", 1);
    devtrace_config cfg;
    devtrace_config_init(&cfg);
    cfg.backend = "none";
    devtrace_session *s = devtrace_open(&cfg, NULL);
    assert_non_null(s);
    assert_int_equal(s->store.max_events, 100);
    devtrace_close(s);
    cfg.max_events = 50; /* the configuration wins over the environment */
    setenv("DEVTRACE_MAX_EVENTS", "abc", 1);
    s = devtrace_open(&cfg, NULL);
    assert_non_null(s);
    assert_int_equal(s->store.max_events, 50);
    devtrace_close(s);
}

static void test_bad_rank_and_world_size_variables_are_refused_by_name(void **state)
{
    (void)state;
    expect_bad_variable("RANK", "abc");
    expect_bad_variable("RANK", "-1");
    expect_bad_variable("WORLD_SIZE", "two");
}

static void test_rank_and_world_size_come_from_the_environment(void **state)
{
    (void)state;
    setenv("RANK", "3", 1);
    setenv("WORLD_SIZE", "8", 1);
    devtrace_config cfg;
    devtrace_config_init(&cfg);
    cfg.backend = "none";
    devtrace_session *s = devtrace_open(&cfg, NULL);
    assert_non_null(s);
    assert_int_equal(devtrace_start(s), 0);
    assert_int_equal(devtrace_stop(s), 0);
    char *text = NULL, error[160];
    uj_value *root = ut_chrome_trace(s, &text, error);
    assert_non_null(root);
    assert_non_null(strstr(text, "\"distributedInfo\": {\"rank\": 3, \"world_size\": 8}"));
    uj_free(root);
    free(text);
    devtrace_close(s);
}

static void test_calls_out_of_order_are_state_errors(void **state)
{
    (void)state;
    devtrace_config cfg;
    devtrace_config_init(&cfg);
    cfg.backend = "none";
    devtrace_session *s = devtrace_open(&cfg, NULL);
    assert_non_null(s);
    assert_int_equal(devtrace_stop(s), DEVTRACE_ESTATE); /* not started */
    assert_int_equal(devtrace_drain(s, NULL, NULL), 0);  /* nothing to finalise yet */
    assert_int_equal(devtrace_start(s), 0);
    assert_int_equal(devtrace_start(s), DEVTRACE_ESTATE); /* already running */
    assert_int_equal(devtrace_stop(s), 0);
    assert_int_equal(devtrace_stop(s), DEVTRACE_ESTATE);  /* already stopped */
    assert_int_equal(devtrace_start(s), 0);               /* a restart: a new capture window */
    assert_int_equal(devtrace_start(s), DEVTRACE_ESTATE); /* already running */
    assert_int_equal(devtrace_stop(s), 0);
    devtrace_close(s);
}

static void test_null_session_arguments(void **state)
{
    (void)state;
    devtrace_close(NULL);
    assert_int_equal(devtrace_start(NULL), DEVTRACE_EINVAL);
    assert_int_equal(devtrace_stop(NULL), DEVTRACE_EINVAL);
    assert_int_equal(devtrace_drain(NULL, NULL, NULL), 0);
    assert_null(devtrace_stats_get(NULL));
    assert_string_equal(devtrace_backend_name(NULL), "");
    assert_string_equal(devtrace_unavailable_reason(NULL), "no session");
}

typedef struct name_check {
    devtrace_session *s;
    int events, same;
} name_check;

static void check_name_text(const devtrace_event *ev, const char *name, void *user)
{
    name_check *c = user;
    c->events++;
    c->same += strcmp(devtrace_interned_name(c->s, ev->name_id), name) == 0;
}

/* An event's name id reads back as the name the drain gives with it; 0, unknown ids and no
 * session read as "". */
static void test_name_text_of_an_event_id_is_its_name(void **state)
{
    (void)state;
    setenv("DEVTRACE_BACKEND", "none", 1);
    devtrace_error err = {0, ""};
    devtrace_session *s = devtrace_open(NULL, &err);
    assert_non_null(s);
    assert_int_equal(devtrace_start(s), 0);
    assert_int_equal(devtrace_range_push(s, "aten::mm", 7), 0);
    assert_int_equal(devtrace_range_push(s, "aten::addmm", 8), 0);
    assert_int_equal(devtrace_range_pop(s), 0);
    assert_int_equal(devtrace_range_pop(s), 0);
    assert_int_equal(devtrace_stop(s), 0);
    name_check c = {s, 0, 0};
    assert_int_equal(devtrace_drain(s, check_name_text, &c), 2);
    assert_int_equal(c.events, 2);
    assert_int_equal(c.same, 2);
    assert_string_equal(devtrace_interned_name(s, 0), "");
    assert_string_equal(devtrace_interned_name(s, 0xfffffffu), "");
    assert_string_equal(devtrace_interned_name(NULL, 1), "");
    devtrace_close(s);
}

static void test_annotation_without_a_default_session_is_a_state_error(void **state)
{
    (void)state;
    assert_null(devtrace_default_session());
    assert_int_equal(devtrace_annotate_push("op", 1), DEVTRACE_ESTATE);
    assert_int_equal(devtrace_annotate_pop(), DEVTRACE_ESTATE);
}

static void test_kind_names(void **state)
{
    (void)state;
    assert_string_equal(devtrace_kind_name(DEVTRACE_KIND_NONE), "none");
    assert_string_equal(devtrace_kind_name(DEVTRACE_KIND_KERNEL), "kernel");
    assert_string_equal(devtrace_kind_name(DEVTRACE_KIND_MEMCPY), "memcpy");
    assert_string_equal(devtrace_kind_name(DEVTRACE_KIND_MEMSET), "memset");
    assert_string_equal(devtrace_kind_name(DEVTRACE_KIND_RUNTIME), "runtime");
    assert_string_equal(devtrace_kind_name(DEVTRACE_KIND_CPU_OP), "cpu_op");
    assert_string_equal(devtrace_kind_name(DEVTRACE_KIND_EXTCORR), "external_correlation");
    assert_string_equal(devtrace_kind_name(DEVTRACE_KIND_COUNT), "none");
    assert_string_equal(devtrace_kind_name(-1), "none");
}

/* The public copy names are the ones the trace writes (Kineto's for CUPTI's copies). */
static void test_memcpy_names(void **state)
{
    (void)state;
    assert_string_equal(devtrace_memcpy_name(DEVTRACE_COPY_HTOD), "Memcpy HtoD (Pageable -> Device)");
    assert_string_equal(devtrace_memcpy_name(DEVTRACE_COPY_DTOH), "Memcpy DtoH (Device -> Pageable)");
    assert_string_equal(devtrace_memcpy_name(DEVTRACE_COPY_DTOD), "Memcpy DtoD (Device -> Device)");
    assert_string_equal(devtrace_memcpy_name(DEVTRACE_COPY_HTOH), "Memcpy HtoH (Pageable -> Pageable)");
    assert_string_equal(devtrace_memcpy_name(DEVTRACE_COPY_UNKNOWN), "Memcpy (Unknown)");
    assert_string_equal(devtrace_memcpy_name(DEVTRACE_COPY_HTOH + 1), "Memcpy (Unknown)");
    assert_string_equal(devtrace_memcpy_name(UINT32_MAX), "Memcpy (Unknown)");
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, clean_env, clean_env)
    const struct CMUnitTest tests[] = {
        T(test_every_code_has_its_name_and_message),
        T(test_unknown_codes_have_a_fallback_name_and_message),
        T(test_error_set_fills_code_and_formatted_message),
        T(test_error_wrap_builds_outer_colon_inner),
        T(test_error_wrap_truncates_a_full_message_safely),
        T(test_open_with_an_unknown_backend_lists_the_names),
        T(test_unknown_backend_from_the_environment),
        T(test_backend_none_from_the_environment_runs_and_records_nothing),
        T(test_auto_falling_back_to_none_says_why),
        T(test_bad_max_events_variable_is_refused_by_name),
        T(test_max_events_variable_sets_the_bound),
        T(test_bad_rank_and_world_size_variables_are_refused_by_name),
        T(test_rank_and_world_size_come_from_the_environment),
        T(test_calls_out_of_order_are_state_errors),
        T(test_null_session_arguments),
        T(test_name_text_of_an_event_id_is_its_name),
        T(test_annotation_without_a_default_session_is_a_state_error),
        T(test_kind_names),
        T(test_memcpy_names),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
