/* test_backend_info.c: what include/devtrace.h says about the compiled-in backends
 * (src/backends/registry.c, from each descriptor): the list in the auto order, and for each
 * backend exactly how the collector gets loaded into a traced program (injection variable,
 * loader layer, or preload; a vendor library preloaded too), its capabilities and runtime
 * category; the caller's size (a smaller, older struct is filled no further); probing and
 * locating a backend's vendor library by name, with the reason when it cannot. Only the
 * public header is used. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "devtrace.h"

/* What each descriptor says, written out by hand: the test fails when a descriptor changes. */
static const struct expected_backend {
    const char *name;
    int load_method;
    const char *load_variable;   /* NULL: none */
    const char *preload_library; /* NULL: none */
    unsigned capabilities;
    const char *runtime_category;
} expected[] = {
#ifdef DT_HAVE_CUPTI
    {"cupti", DEVTRACE_LOAD_INJECTION, "CUDA_INJECTION64_PATH", NULL,
     DEVTRACE_CAP_KERNEL_LAUNCH | DEVTRACE_CAP_OCCUPANCY | DEVTRACE_CAP_EXTERNAL | DEVTRACE_CAP_RAW_CAPTURE,
     "cuda_runtime"},
#endif
#ifdef DT_HAVE_MCPTI
    {"mcpti", DEVTRACE_LOAD_PRELOAD, NULL, NULL,
     DEVTRACE_CAP_KERNEL_LAUNCH | DEVTRACE_CAP_OCCUPANCY | DEVTRACE_CAP_EXTERNAL | DEVTRACE_CAP_RAW_CAPTURE,
     "privateuse1_runtime"},
#endif
#ifdef DT_HAVE_PPU
    {"ppu", DEVTRACE_LOAD_PRELOAD, NULL, NULL,
     DEVTRACE_CAP_KERNEL_LAUNCH | DEVTRACE_CAP_OCCUPANCY | DEVTRACE_CAP_EXTERNAL | DEVTRACE_CAP_RAW_CAPTURE,
     "privateuse1_runtime"},
#endif
#ifdef DT_HAVE_ILUVATAR
    {"iluvatar", DEVTRACE_LOAD_PRELOAD, NULL, NULL,
     DEVTRACE_CAP_KERNEL_LAUNCH | DEVTRACE_CAP_OCCUPANCY | DEVTRACE_CAP_EXTERNAL | DEVTRACE_CAP_RAW_CAPTURE,
     "privateuse1_runtime"},
#endif
#ifdef DT_HAVE_ROCTRACER
    {"roctracer", DEVTRACE_LOAD_PRELOAD, NULL, NULL,
     DEVTRACE_CAP_KERNEL_LAUNCH | DEVTRACE_CAP_OCCUPANCY | DEVTRACE_CAP_EXTERNAL, "cuda_runtime"},
#endif
#ifdef DT_HAVE_MSPTI
    {"mspti", DEVTRACE_LOAD_PRELOAD, NULL, "libmspti.so", DEVTRACE_CAP_EXTERNAL | DEVTRACE_CAP_RAW_CAPTURE,
     "privateuse1_runtime"},
#endif
#ifdef DT_HAVE_MUSA
    {"musa", DEVTRACE_LOAD_PRELOAD, NULL, NULL,
     DEVTRACE_CAP_KERNEL_LAUNCH | DEVTRACE_CAP_OCCUPANCY | DEVTRACE_CAP_EXTERNAL, "privateuse1_runtime"},
#endif
#ifdef DT_HAVE_OPENCL
    {"opencl", DEVTRACE_LOAD_LAYER, "OPENCL_LAYERS", NULL, 0, "privateuse1_runtime"},
#endif
};
#define NEXPECTED ((int)(sizeof expected / sizeof expected[0]))

static void assert_same_string(const char *want, const char *got)
{
    if (!want)
        assert_null(got);
    else
        assert_string_equal(got, want);
}

static void assert_backend(const struct expected_backend *e, const devtrace_backend_info *b)
{
    assert_string_equal(b->name, e->name);
    assert_int_equal(b->load_method, e->load_method);
    assert_same_string(e->load_variable, b->load_variable);
    assert_same_string(e->preload_library, b->preload_library);
    assert_int_equal(b->capabilities, e->capabilities);
    assert_string_equal(b->runtime_category, e->runtime_category);
    assert_int_equal(b->size, sizeof *b);
}

static void the_list_is_the_compiled_in_backends_in_auto_order(void **state)
{
    (void)state;
    assert_int_equal(devtrace_backend_count(), NEXPECTED);
    for (int i = 0; i < NEXPECTED; i++) {
        devtrace_backend_info b;
        memset(&b, 0xa5, sizeof b);
        b.size = sizeof b;
        assert_int_equal(devtrace_backend_get(i, &b), 0);
        assert_backend(&expected[i], &b);
    }
    devtrace_backend_info b = {.size = sizeof b};
    assert_int_equal(devtrace_backend_get(NEXPECTED, &b), DEVTRACE_EINVAL);
    assert_int_equal(devtrace_backend_get(-1, &b), DEVTRACE_EINVAL);
}

static void each_backend_is_found_by_name_with_the_same_fields(void **state)
{
    (void)state;
    for (int i = 0; i < NEXPECTED; i++) {
        devtrace_backend_info b = {.size = sizeof b};
        assert_int_equal(devtrace_backend_find(expected[i].name, &b), 0);
        assert_backend(&expected[i], &b);
    }
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

#ifdef DT_HAVE_MSPTI
/* The preload library is found by the backend's own search: its override variable first. */
static void mspti_locates_the_file_its_override_names(void **state)
{
    (void)state;
    char file[] = "/tmp/devtrace-libmspti-XXXXXX";
    int fd = mkstemp(file);
    assert_true(fd >= 0);
    setenv("DEVTRACE_MSPTI_LIBRARY", file, 1);
    char path[4096];
    devtrace_error err;
    assert_int_equal(devtrace_backend_locate_library("mspti", path, sizeof path, &err), 0);
    assert_string_equal(path, file);
    assert_int_equal(err.code, 0);
    unlink(file);
    assert_int_equal(devtrace_backend_locate_library("mspti", path, sizeof path, &err), DEVTRACE_EUNAVAILABLE);
    char want[256];
    snprintf(want, sizeof want, "$DEVTRACE_MSPTI_LIBRARY=%s: No such file or directory", file);
    assert_string_equal(err.message, want);
    assert_string_equal(path, "");
    unsetenv("DEVTRACE_MSPTI_LIBRARY");
    close(fd);
}
#endif

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
#ifdef DT_HAVE_MSPTI
        cmocka_unit_test(mspti_locates_the_file_its_override_names),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
