/* test_backend_info.c: what include/devtrace.h says about the compiled-in backends
 * (src/backends/registry.c, from each descriptor): the list in the auto order, each entry
 * exactly its descriptor's facts (how the collector gets loaded into a traced program,
 * capabilities, runtime category, validation), the rules those facts follow, and where each
 * backend looks for its vendor library (its override variable finds the file it names); the
 * caller's size (a smaller, older struct is filled no further); probing and locating a
 * backend's vendor library by name, with the reason when it cannot. No backend is named
 * here: each is read from the registry's list (backends/backend.h) and its public view. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "backends/backend.h"
#include "devtrace.h"

#define DT_CAP_ALL \
    (DEVTRACE_CAP_KERNEL_LAUNCH | DEVTRACE_CAP_OCCUPANCY | DEVTRACE_CAP_EXTERNAL | DEVTRACE_CAP_RAW_CAPTURE)

static int count_registry(void)
{
    int n = 0;
    for (const dt_backend *const *b = dt_backends(); *b; b++)
        n++;
    return n;
}

static void assert_same_string(const char *want, const char *got)
{
    if (!want)
        assert_null(got);
    else
        assert_string_equal(got, want);
}

/* The public view of descriptor d is d's facts, and they follow the rules of the header. */
static void assert_backend(const dt_backend *d, const devtrace_backend_info *b)
{
    assert_string_equal(b->name, d->name);
    assert_string_equal(b->description, d->description);
    assert_int_equal(b->load_method, d->load_method);
    assert_same_string(d->load_variable, b->load_variable);
    assert_same_string(d->preload_library, b->preload_library);
    assert_int_equal(b->capabilities, d->caps);
    assert_string_equal(b->runtime_category, d->runtime_category);
    assert_int_equal(b->size, sizeof *b);
    char validation[256];
    dt_backend_validation_text(d, validation, sizeof validation);
    assert_string_equal(b->validation, validation);
    /* An injection variable or a layer list names where the library goes; a preload names none. */
    assert_int_equal(b->load_variable != NULL, b->load_method != DEVTRACE_LOAD_PRELOAD);
    assert_int_equal(b->capabilities & ~DT_CAP_ALL, 0);
    /* Every backend but none looks for a library of its own, and says what it is called. */
    assert_non_null(b->library_api);
    assert_non_null(b->library_files[0]);
}

static void the_list_is_the_compiled_in_backends_in_auto_order(void **state)
{
    (void)state;
    int n = count_registry();
    assert_int_equal(devtrace_backend_count(), n);
    for (int i = 0; i < n; i++) {
        devtrace_backend_info b;
        memset(&b, 0xa5, sizeof b);
        b.size = sizeof b;
        assert_int_equal(devtrace_backend_get(i, &b), 0);
        assert_backend(dt_backends()[i], &b);
    }
    devtrace_backend_info b = {.size = sizeof b};
    assert_int_equal(devtrace_backend_get(n, &b), DEVTRACE_EINVAL);
    assert_int_equal(devtrace_backend_get(-1, &b), DEVTRACE_EINVAL);
}

static void each_backend_is_found_by_name_with_the_same_fields(void **state)
{
    (void)state;
    for (const dt_backend *const *d = dt_backends(); *d; d++) {
        devtrace_backend_info b = {.size = sizeof b};
        assert_int_equal(devtrace_backend_find((*d)->name, &b), 0);
        assert_backend(*d, &b);
    }
}

/* Every backend with a library variable of its own finds the file it names there first,
 * and says why when that file is gone ($VAR=path: reason). */
static void each_library_variable_names_the_library_found(void **state)
{
    (void)state;
    int checked = 0;
    for (const dt_backend *const *d = dt_backends(); *d; d++) {
        devtrace_backend_info b = {.size = sizeof b};
        assert_int_equal(devtrace_backend_find((*d)->name, &b), 0);
        char path[4096];
        devtrace_error err;
        if (!b.library_variable)
            continue;
        if (devtrace_backend_locate_library(b.name, path, sizeof path, &err) == DEVTRACE_ENOTSUP) {
            printf("not checked: %s does not locate its library without loading it (no locate_library)\n", b.name);
            continue;
        }
        char file[] = "/tmp/devtrace-library-XXXXXX";
        int fd = mkstemp(file);
        assert_true(fd >= 0);
        setenv(b.library_variable, file, 1);
        assert_int_equal(devtrace_backend_locate_library(b.name, path, sizeof path, &err), 0);
        assert_string_equal(path, file);
        assert_int_equal(err.code, 0);
        unlink(file);
        assert_int_equal(devtrace_backend_locate_library(b.name, path, sizeof path, &err), DEVTRACE_EUNAVAILABLE);
        char want[256];
        snprintf(want, sizeof want, "$%s=%s: No such file or directory", b.library_variable, file);
        assert_string_equal(err.message, want);
        assert_string_equal(path, "");
        unsetenv(b.library_variable);
        close(fd);
        checked++;
    }
    printf("checked the library variable of %d backend(s)\n", checked);
}

static void none_is_found_by_name_but_not_listed(void **state)
{
    (void)state;
    devtrace_backend_info b = {.size = sizeof b};
    assert_int_equal(devtrace_backend_find("none", &b), 0);
    assert_string_equal(b.name, "none");
    assert_string_equal(b.description, "unavailable (records nothing, says why)");
    assert_int_equal(b.load_method, DEVTRACE_LOAD_PRELOAD);
    assert_null(b.load_variable);
    assert_null(b.preload_library);
    assert_int_equal(b.capabilities, 0);
    assert_string_equal(b.validation, "n/a: records nothing");
    assert_null(b.library_api);
    assert_null(b.library_variable);
    assert_null(b.sdk_variables[0]);
    assert_null(b.library_files[0]);
    for (int i = 0; i < devtrace_backend_count(); i++) {
        assert_int_equal(devtrace_backend_get(i, &b), 0);
        assert_string_not_equal(b.name, "none");
    }
}

static void an_unknown_name_is_refused(void **state)
{
    (void)state;
    devtrace_backend_info b = {.size = sizeof b};
    assert_int_equal(devtrace_backend_find("cuda", &b), DEVTRACE_EUNKNOWN_BACKEND);
    assert_int_equal(devtrace_backend_find(NULL, &b), DEVTRACE_EUNKNOWN_BACKEND);
    char why[512];
    assert_int_equal(devtrace_backend_probe("cuda", why, sizeof why), DEVTRACE_EUNKNOWN_BACKEND);
    assert_non_null(strstr(why, "unknown backend 'cuda'; choose one of: "));
    assert_non_null(strstr(why, "none"));
    char path[64] = "untouched";
    devtrace_error err;
    assert_int_equal(devtrace_backend_locate_library("cuda", path, sizeof path, &err), DEVTRACE_EUNKNOWN_BACKEND);
    assert_int_equal(err.code, DEVTRACE_EUNKNOWN_BACKEND);
    assert_string_equal(path, "");
}

/* A caller compiled against a header whose struct ended at load_method: nothing after it is
 * written; a size that does not reach the name is refused. */
static void an_older_callers_struct_is_filled_no_further(void **state)
{
    (void)state;
    union {
        devtrace_backend_info info;
        unsigned char bytes[sizeof(devtrace_backend_info)];
    } u;
    memset(&u, 0x5a, sizeof u);
    size_t older = offsetof(devtrace_backend_info, load_method) + sizeof u.info.load_method;
    u.info.size = older;
    assert_int_equal(devtrace_backend_find("none", &u.info), 0);
    assert_int_equal(u.info.size, older);
    assert_string_equal(u.info.name, "none");
    assert_int_equal(u.info.load_method, DEVTRACE_LOAD_PRELOAD);
    for (size_t i = older; i < sizeof u; i++)
        assert_int_equal(u.bytes[i], 0x5a);
    u.info.size = offsetof(devtrace_backend_info, name);
    assert_int_equal(devtrace_backend_find("none", &u.info), DEVTRACE_EINVAL);
    assert_int_equal(devtrace_backend_find("none", NULL), DEVTRACE_EINVAL);
}

static void none_probes_as_able_with_its_reason(void **state)
{
    (void)state;
    char why[256] = "";
    assert_int_equal(devtrace_backend_probe("none", why, sizeof why), 1);
    assert_string_equal(why, "records nothing; selected when no other backend can trace");
    assert_int_equal(devtrace_backend_probe("none", NULL, 0), 1);
}

static void a_backend_without_a_library_search_says_so(void **state)
{
    (void)state;
    char path[256] = "untouched";
    devtrace_error err;
    assert_int_equal(devtrace_backend_locate_library("none", path, sizeof path, &err), DEVTRACE_ENOTSUP);
    assert_string_equal(err.message, "backend none does not look for a vendor library of its own");
    assert_string_equal(path, "");
    assert_int_equal(devtrace_backend_locate_library("none", NULL, 0, &err), DEVTRACE_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_list_is_the_compiled_in_backends_in_auto_order),
        cmocka_unit_test(each_backend_is_found_by_name_with_the_same_fields),
        cmocka_unit_test(none_is_found_by_name_but_not_listed),
        cmocka_unit_test(an_unknown_name_is_refused),
        cmocka_unit_test(an_older_callers_struct_is_filled_no_further),
        cmocka_unit_test(none_probes_as_able_with_its_reason),
        cmocka_unit_test(a_backend_without_a_library_search_says_so),
        cmocka_unit_test(each_library_variable_names_the_library_found),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
