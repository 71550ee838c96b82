/* emu_vendors.h: the vendor tables the emulators are built from (one .c file each),
 * shared with the layout test that checks them against the real headers. */
#ifndef DEVEMU_EMU_VENDORS_H
#define DEVEMU_EMU_VENDORS_H

#include "emu.h"

extern const emu_vendor emu_cupti_vendor; /* cupti_table.c: CUDA 13.0, CUPTI API 130001 */
extern const emu_vendor emu_mcpti_vendor; /* mcpti_table.c: MetaX MACA 3.8.0 */
extern const emu_vendor emu_mspti_vendor; /* mspti_table.c: Huawei Ascend MSPTI (packed records) */
extern const emu_vendor emu_musa_vendor;  /* musa_table.c: Moore Threads MUPTI (inferred layouts) */

#endif /* DEVEMU_EMU_VENDORS_H */
