/* test_cupti_real.c: the CUPTI backend against the real libcupti.so of the installed
 * CUDA toolkit (no emulator). Every function the engine binds must resolve in it; on a
 * machine without the NVIDIA driver a session must come out unavailable (with CUPTI's
 * own error text in the reason) or started, without crashing, and the host program
 * runs on. Skipped (exit 77) when the toolkit's libcupti.so is not installed.
 *
 *   test_cupti_real [PATH/TO/libcupti.so]    (default /usr/local/cuda/lib64/libcupti.so) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/pti_family.h"
#include "devtrace.h"

static int failures;

#define CHECK(cond, ...)                                         \
    do {                                                         \
        if (!(cond)) {                                           \
            failures++;                                          \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                        \
            fputc('\n', stderr);                                 \
        }                                                        \
    } while (0)

int main(int argc, char **argv)
{
    const char *lib = argc > 1 ? argv[1] : "/usr/local/cuda/lib64/libcupti.so";
    if (access(lib, R_OK) != 0) {
        printf("SKIPPED: %s not found (no CUDA toolkit)\n", lib);
        return 77;
    }
    setenv("DEVTRACE_CUPTI_LIBRARY", lib, 1);

    /* Every function the engine calls for this descriptor resolves in the real library. */
    char path[1024];
    unsigned found = dt_pti_symbols_found(&dt_pti_cupti_descriptor, path, sizeof path);
    unsigned all = (1u << DT_PTI_FN_COUNT) - 1;
    if (!(dt_pti_cupti_descriptor.quirks & DT_PTI_QUIRK_INIT_FIRST))
        all &= ~DT_PTI_BIT(INIT); /* <prefix>Init: only a vendor that needs it (CNPAPI) */
    printf("library: %s; functions found: 0x%x of 0x%x\n", path, found, all);
    CHECK((found & DT_PTI_REQUIRED_DEFAULT) == DT_PTI_REQUIRED_DEFAULT, "a required function is missing (0x%x)", found);
    CHECK(found == all, "an optional function is missing from the real library (0x%x of 0x%x)", found, all);

    /* Probe: available, or unavailable with CUPTI's own words. */
    char why[1024] = "";
    extern const dt_backend dt_backend_cupti;
    int available = dt_backend_cupti.probe(why, sizeof why);
    printf("probe: %s: %s\n", available ? "available" : "unavailable", why);
    if (!available)
        CHECK(strstr(why, "CUPTI_ERROR_") != NULL && strstr(why, "cuptiActivityEnable") != NULL,
              "the reason lacks the library's own error: %s", why);

    /* A session: unavailable with the library's error, or started; either way no crash. */
    devtrace_config cfg;
    devtrace_error err;
    devtrace_config_init(&cfg);
    cfg.backend = "cupti";
    devtrace_session *s = devtrace_open(&cfg, &err);
    CHECK(s != NULL, "devtrace_open returned NULL: %s", err.message);
    if (!s)
        return 1;
    const char *backend = devtrace_backend_name(s), *reason = devtrace_unavailable_reason(s);
    printf("session: backend=%s reason=%s\n", backend, reason);
    if (strcmp(backend, "none") == 0)
        CHECK(strstr(reason, "cupti: ") == reason && strstr(reason, "CUPTI_ERROR_") != NULL,
              "unavailable without CUPTI's own error: %s", reason);
    else
        CHECK(strcmp(backend, "cupti") == 0, "unexpected backend %s", backend);
    CHECK(devtrace_start(s) == 0 || strcmp(backend, "cupti") == 0, "start failed on the unavailable session");
    CHECK(devtrace_push_external(s, 7) == 0, "push_external failed");
    uint64_t id = 0;
    CHECK(devtrace_pop_external(s, &id) == 0 && id == 7, "pop_external failed");
    devtrace_stop(s);
    char trace[256];
    snprintf(trace, sizeof trace, "%s/cupti_real.json", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    CHECK(devtrace_write_chrome(s, trace, &err) == 0, "writing the (empty) trace failed: %s", err.message);
    devtrace_close(s);
    printf("host program ran on\n");
    if (failures)
        fprintf(stderr, "%d assertion(s) failed\n", failures);
    return failures ? 1 : 0;
}
