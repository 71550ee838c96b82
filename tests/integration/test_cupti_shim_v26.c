/* test_cupti_shim_v26.c: libcupti-shim-v26.so, the CUPTI emulator presenting itself as
 * CUPTI API version 26 (CUDA 12.8), a library that must never be refused a buffer (a
 * refusal crashed CUPTI before version 27). It defines cuptiGetVersion only; every other
 * symbol (cupti*, devemu_*) resolves through its dependency, libcupti-emu.so. */
#include <stdint.h>

__attribute__((visibility("default"))) int cuptiGetVersion(uint32_t *version);

int cuptiGetVersion(uint32_t *version)
{
    if (!version)
        return 1; /* CUPTI_ERROR_INVALID_PARAMETER */
    *version = 26;
    return 0;
}
