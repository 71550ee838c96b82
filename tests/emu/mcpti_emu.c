/* mcpti_emu.c: libmcpti-emu.so, an emulator of MetaX MCPTI (MACA 3.8.0) for testing tracers.
 *
 * Exports the CUPTI-shaped API in both spellings code that ran on MACA resolves from
 * libmcpti.so: mcpti* and cupti* (vendor-abi.md: the cupti* ones are aliases [I]), plus
 * mcptiActivityGetApiName, the CUDA-compatible wrappers wcudaDeviceGetAttribute and
 * wcudaGetDeviceCount, and the devemu_* driving API. The MetaX facts are in mcpti_table.c.
 * Variants, built from this file: -DDEVEMU_ONLY_CUPTI (libmcpti-emu-only-cupti.so: no
 * mcpti* symbol at all), -DDEVEMU_ONLY_MCPTI (libmcpti-emu-only-mcpti.so: no cupti*) and
 * -DDEVEMU_NO_WCUDA (no wcuda* device queries: a MACA without libruntime_cu.so; built by
 * tests/integration for the occupancy fallbacks). */
#include <stdio.h>
#include <stdlib.h>

#include "emu_cupti_shape.h"
#include "emu_vendors.h"

__attribute__((constructor)) static void mcpti_emu_load(void)
{
    emu_install(&emu_mcpti_vendor);
}

#ifndef DEVEMU_ONLY_CUPTI
EMU_CUPTI_SHAPE_DEFINE(mcpti)

EMU_EXPORT emu_result mcptiActivityGetApiName(int kind, uint32_t cbid, const char **name);

/* The runtime API's name for a callback id. MACA 3.8.0 deadlocks when this is called
 * from inside the buffer-completed callback (vendor-abi.md quirk 4): the emulator aborts
 * there instead, with a message, so a test fails at once rather than hanging. */
EMU_EXPORT emu_result mcptiActivityGetApiName(int kind, uint32_t cbid, const char **name)
{
    const emu_vendor *v = emu_vendor_get();
    if (emu_in_buffer_completed()) {
        fprintf(stderr, "devemu: mcptiActivityGetApiName called inside the buffer-completed callback: "
                        "the real MACA 3.8.0 library deadlocks here\n");
        abort();
    }
    int call = emu_call_for_cbid(cbid);
    if (!name || (uint32_t)kind != v->kind.runtime || call < 0)
        return v->result.invalid_parameter;
    *name = v->api_name[call];
    return v->result.success;
}
#endif

#ifndef DEVEMU_ONLY_MCPTI
EMU_CUPTI_SHAPE_DEFINE(cupti)
#endif

#ifndef DEVEMU_NO_WCUDA
EMU_EXPORT int wcudaDeviceGetAttribute(int *value, int attr, int device);
EMU_EXPORT int wcudaGetDeviceCount(int *count);

EMU_EXPORT int wcudaDeviceGetAttribute(int *value, int attr, int device)
{
    return emu_device_attribute(value, attr, device);
}

EMU_EXPORT int wcudaGetDeviceCount(int *count)
{
    return emu_device_count(count);
}
#endif
