/* fuzz_wl.c: libFuzzer target for the workload parser (wl_parse_buffer, tests/emu/wl.h): any
 * bytes must parse or fail with a message that names the line, never crash, leak or read out of
 * bounds. Built with -DDEVTRACE_BUILD_FUZZ=ON and clang (tests/fuzz/CMakeLists.txt); seeds in
 * tests/fuzz/corpus/fuzz_wl/ (shared/workloads/ and small files of every statement).
 * FUZZ_EXTRA_SOURCES: tests/emu/wl.c */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    wl_workload w;
    wl_counts counts;
    char err[256];
    err[0] = '\0';
    if (wl_parse_buffer((const char *)data, size, "fuzz", &w, err, sizeof err) == 0) {
        wl_expected_counts(&w, &counts);
        wl_free(&w);
    } else if (strncmp(err, "fuzz:", 5) != 0 || !memchr(err, '\0', sizeof err) || strchr(err, '\n')) {
        abort(); /* a failure must be one line that starts with FILE:LINE */
    }
    return 0;
}
