/* cupti_emu.c: libcupti-emu.so, an emulator of NVIDIA CUPTI for testing tracers.
 *
 * Exports CUPTI's own symbols with CUPTI's signatures (cupti*), the emulated CUDA
 * runtime's device queries (cudaDeviceGetAttribute, cudaGetDeviceCount) and the devemu_*
 * driving API. Everything vendor-specific is in cupti_table.c. Variants, built from this
 * file: -DDEVEMU_OMIT_FLUSH (libcupti-emu-noflush.so: no cuptiActivityFlushAll) and
 * -DDEVEMU_OMIT_EXTCORR (libcupti-emu-nopush.so: no Push/PopExternalCorrelationId). */
#include "emu_cupti_shape.h"
#include "emu_vendors.h"

__attribute__((constructor)) static void cupti_emu_load(void)
{
    emu_install(&emu_cupti_vendor);
}

EMU_CUPTI_SHAPE_DEFINE(cupti)

EMU_EXPORT int cudaDeviceGetAttribute(int *value, int attr, int device);
EMU_EXPORT int cudaGetDeviceCount(int *count);

EMU_EXPORT int cudaDeviceGetAttribute(int *value, int attr, int device)
{
    return emu_device_attribute(value, attr, device);
}

EMU_EXPORT int cudaGetDeviceCount(int *count)
{
    return emu_device_count(count);
}
