/* emu_cuda_fields.h: where the CUDA-shaped records the emulated runtime writes keep the
 * fields it writes, as CUPTI's structs have them (CUDA 13.0 headers: cupti_activity.h,
 * cupti_callbacks.h), for the vendor tables whose records are CUPTI's layouts: cupti_table.c,
 * musa_table.c (MUPTI's structs are CUPTI's of the same name [I]) and mcpti_table.c (all but
 * its kernel record). A table gives each list its own struct name and record size
 * (EMU_LAYOUT). A vendor whose fields sit elsewhere (MSPTI, ROCtracer) has its own lists. */
#ifndef DEVEMU_EMU_CUDA_FIELDS_H
#define DEVEMU_EMU_CUDA_FIELDS_H

#include "emu.h"

/* The tables below are laid out by hand, a few fields a line. */
/* clang-format off */
/* CUpti_ActivityKernel10 (216 bytes); Kernel9 (CUDA 12.x) and Kernel6 have the same prefix
 * through submitted. */
static const emu_field_at emu_cuda_kernel_fields[] = {
    {EMU_F_KIND, 4, 0},           {EMU_F_REGISTERS, 2, 6},    {EMU_F_START, 8, 16},
    {EMU_F_END, 8, 24},           {EMU_F_COMPLETED, 8, 32},   {EMU_F_DEVICE, 4, 40},
    {EMU_F_CONTEXT, 4, 44},       {EMU_F_STREAM, 4, 48},      {EMU_F_GRID_X, 4, 52},
    {EMU_F_GRID_Y, 4, 56},        {EMU_F_GRID_Z, 4, 60},      {EMU_F_BLOCK_X, 4, 64},
    {EMU_F_BLOCK_Y, 4, 68},       {EMU_F_BLOCK_Z, 4, 72},     {EMU_F_STATIC_SMEM, 4, 76},
    {EMU_F_DYNAMIC_SMEM, 4, 80},  {EMU_F_CORRELATION, 4, 92}, {EMU_F_GRID_ID, 8, 96},
    {EMU_F_NAME, 8, 104},         {EMU_F_QUEUED, 8, 120},     {EMU_F_SUBMITTED, 8, 128},
};

/* CUpti_ActivityMemcpy6 (96 bytes; Memcpy4, 80 bytes, has the same fields). */
static const emu_field_at emu_cuda_memcpy_fields[] = {
    {EMU_F_KIND, 4, 0},     {EMU_F_COPY_KIND, 1, 4}, {EMU_F_SRC_KIND, 1, 5},     {EMU_F_DST_KIND, 1, 6},
    {EMU_F_FLAGS, 1, 7},    {EMU_F_BYTES, 8, 8},     {EMU_F_START, 8, 16},       {EMU_F_END, 8, 24},
    {EMU_F_DEVICE, 4, 32},  {EMU_F_CONTEXT, 4, 36},  {EMU_F_STREAM, 4, 40},      {EMU_F_CORRELATION, 4, 44},
    {EMU_F_RUNTIME_CORRELATION, 4, 48},
};

/* CUpti_ActivityMemset4 (88 bytes; Memset3, 80 bytes, has the same fields). */
static const emu_field_at emu_cuda_memset_fields[] = {
    {EMU_F_KIND, 4, 0},    {EMU_F_VALUE, 4, 4},    {EMU_F_BYTES, 8, 8},        {EMU_F_START, 8, 16},
    {EMU_F_END, 8, 24},    {EMU_F_DEVICE, 4, 32},  {EMU_F_CONTEXT, 4, 36},     {EMU_F_STREAM, 4, 40},
    {EMU_F_CORRELATION, 4, 44}, {EMU_F_FLAGS, 2, 48}, {EMU_F_MEMORY_KIND, 2, 50},
};

/* CUpti_ActivityAPI (40 bytes): runtime and driver API records. */
static const emu_field_at emu_cuda_api_fields[] = {
    {EMU_F_KIND, 4, 0},     {EMU_F_CBID, 4, 4},    {EMU_F_START, 8, 8},        {EMU_F_END, 8, 16},
    {EMU_F_PROCESS, 4, 24}, {EMU_F_THREAD, 4, 28}, {EMU_F_CORRELATION, 4, 32}, {EMU_F_RETURN_VALUE, 4, 36},
};

/* CUpti_ActivityExternalCorrelation (24 bytes). */
static const emu_field_at emu_cuda_external_correlation_fields[] = {
    {EMU_F_KIND, 4, 0},
    {EMU_F_EXTERNAL_KIND, 4, 4},
    {EMU_F_EXTERNAL_ID, 8, 8},
    {EMU_F_CORRELATION, 4, 16},
};

/* CUpti_CallbackData (72 bytes): what a runtime-domain callback receives. */
static const emu_field_at emu_cuda_callback_data_fields[] = {
    {EMU_F_CB_SITE, 4, 0},           {EMU_F_CB_FUNCTION_NAME, 8, 8},     {EMU_F_CB_FUNCTION_PARAMS, 8, 16},
    {EMU_F_CB_RETURN_VALUE_PTR, 8, 24}, {EMU_F_CB_SYMBOL_NAME, 8, 32},   {EMU_F_CB_CONTEXT_PTR, 8, 40},
    {EMU_F_CB_CONTEXT_UID, 4, 48},   {EMU_F_CB_CORRELATION_DATA, 8, 56}, {EMU_F_CORRELATION, 4, 64},
};
/* clang-format on */

#endif
