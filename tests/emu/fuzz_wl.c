/* fuzz_wl.c: libFuzzer target for the workload parser (wl_parse_buffer): any bytes
 * must parse or fail with a message, never crash, leak or read out of bounds.
 * Built with -DDEVTRACE_BUILD_FUZZ=ON and clang; seed it with shared/workloads/. */
#include <stddef.h>
#include <stdint.h>

#include "wl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    wl_workload w;
    wl_counts counts;
    char err[256];
    if (wl_parse_buffer((const char *)data, size, "fuzz", &w, err, sizeof err) == 0) {
        wl_expected_counts(&w, &counts);
        wl_free(&w);
    }
    return 0;
}
