/* emu_u64_fields.h: what the tables of the emulated vendors whose correlation ids are u64
 * and whose callback ids are not public share: MSPTI (mspti_table.c) and CNPAPI
 * (cnpapi_emu.c). Their external correlation records are the same 24 bytes; their callback
 * ids are the emulator's own choice, the same for both. A table gives the list its own
 * struct name and record size (EMU_LAYOUT, EMU_LAYOUT_PACKED). */
#ifndef DEVEMU_EMU_U64_FIELDS_H
#define DEVEMU_EMU_U64_FIELDS_H

#include "emu.h"

/* msptiActivityExternalCorrelation [H] and cnpapiActivityExternalCorrelation [H-copy],
 * 24 bytes: kind@0, external kind@4, external id u64@8, correlation id u64@16. */
static const emu_field_at emu_u64_external_correlation_fields[] = {
    {EMU_F_KIND, 4, 0},
    {EMU_F_EXTERNAL_KIND, 4, 4},
    {EMU_F_EXTERNAL_ID, 8, 8},
    {EMU_F_CORRELATION, 8, 16},
};

/* The callback id of each generic call (emu_vendor.cbid) [I]: no public table of the
 * vendor's ids was found, so they are chosen for the emulator, 1 up in the calls' order
 * (src/backends/cnpapi.c names CNDrv's by these; MSPTI's API records carry names, so its
 * ids serve only msptiGetCallbackName and the callback API). */
#define EMU_U64_CHOSEN_CBIDS                                                                            \
    {                                                                                                   \
        [WL_CALL_GET_DEVICE] = 1, [WL_CALL_GET_DEVICE_COUNT] = 2, [WL_CALL_GET_DEVICE_PROPERTIES] = 3,  \
        [WL_CALL_SET_DEVICE] = 4, [WL_CALL_MALLOC] = 5, [WL_CALL_FREE] = 6, [WL_CALL_EVENT_RECORD] = 7, \
        [WL_CALL_LAUNCH] = 8, [WL_CALL_MEMCPY] = 9, [WL_CALL_MEMSET] = 10, [WL_CALL_SYNC_STREAM] = 11,  \
        [WL_CALL_SYNC_DEVICE] = 12,                                                                     \
    }

#endif
