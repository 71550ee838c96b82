/* musa_emu.c: libmusa-emu.so, an emulator of Moore Threads MUPTI (MUSA) for testing tracers.
 *
 * Exports the mupti* spelling of the CUPTI-shaped API, the MUSA runtime's device queries
 * (musaDeviceGetAttribute, musaGetDeviceCount) and the devemu_* driving API. The MUSA
 * facts, and how far they go, are in musa_table.c. */
#include "emu_cupti_shape.h"
#include "emu_vendors.h"

__attribute__((constructor)) static void musa_emu_load(void)
{
    emu_install(&emu_musa_vendor);
}

EMU_CUPTI_SHAPE_DEFINE(mupti)

EMU_EXPORT int musaDeviceGetAttribute(int *value, int attr, int device);
EMU_EXPORT int musaGetDeviceCount(int *count);

EMU_EXPORT int musaDeviceGetAttribute(int *value, int attr, int device)
{
    return emu_device_attribute(value, attr, device);
}

EMU_EXPORT int musaGetDeviceCount(int *count)
{
    return emu_device_count(count);
}
