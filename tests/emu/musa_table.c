/* musa_table.c: Moore Threads MUPTI (MUSA) as a table for the emulated runtime.
 *
 * No MUSA header, library or device was available: the facts are marked [U] (seen in public
 * third-party code that uses MUPTI: the symbol spelling, the record struct names, the
 * runtime callback ids listed as seen in src/backends/musa.c, no injection hook) or [I]
 * (inferred from MUPTI being a port of CUPTI: every layout below is CUPTI's struct of the
 * same name, from the CUDA 11.x headers; kinds, results, domains and memory kinds are
 * CUPTI's). Passing against this emulator means "emulated", nothing more. */
#include "emu_vendors.h"

/* The tables below are laid out by hand, a few fields a line. */
/* clang-format off */
/* MUpti_ActivityKernel6, 168 bytes [I: CUpti_ActivityKernel6]. */
static const emu_field_at musa_kernel6[] = {
    {EMU_F_KIND, 4, 0},           {EMU_F_REGISTERS, 2, 6},    {EMU_F_START, 8, 16},
    {EMU_F_END, 8, 24},           {EMU_F_COMPLETED, 8, 32},   {EMU_F_DEVICE, 4, 40},
    {EMU_F_CONTEXT, 4, 44},       {EMU_F_STREAM, 4, 48},      {EMU_F_GRID_X, 4, 52},
    {EMU_F_GRID_Y, 4, 56},        {EMU_F_GRID_Z, 4, 60},      {EMU_F_BLOCK_X, 4, 64},
    {EMU_F_BLOCK_Y, 4, 68},       {EMU_F_BLOCK_Z, 4, 72},     {EMU_F_STATIC_SMEM, 4, 76},
    {EMU_F_DYNAMIC_SMEM, 4, 80},  {EMU_F_CORRELATION, 4, 92}, {EMU_F_GRID_ID, 8, 96},
    {EMU_F_NAME, 8, 104},         {EMU_F_QUEUED, 8, 120},     {EMU_F_SUBMITTED, 8, 128},
};

/* MUpti_ActivityMemcpy4, 80 bytes [I: CUpti_ActivityMemcpy4]. */
static const emu_field_at musa_memcpy4[] = {
    {EMU_F_KIND, 4, 0},     {EMU_F_COPY_KIND, 1, 4}, {EMU_F_SRC_KIND, 1, 5},     {EMU_F_DST_KIND, 1, 6},
    {EMU_F_FLAGS, 1, 7},    {EMU_F_BYTES, 8, 8},     {EMU_F_START, 8, 16},       {EMU_F_END, 8, 24},
    {EMU_F_DEVICE, 4, 32},  {EMU_F_CONTEXT, 4, 36},  {EMU_F_STREAM, 4, 40},      {EMU_F_CORRELATION, 4, 44},
    {EMU_F_RUNTIME_CORRELATION, 4, 48},
};

/* MUpti_ActivityMemset3, 80 bytes [I: CUpti_ActivityMemset3]. */
static const emu_field_at musa_memset3[] = {
    {EMU_F_KIND, 4, 0},    {EMU_F_VALUE, 4, 4},    {EMU_F_BYTES, 8, 8},        {EMU_F_START, 8, 16},
    {EMU_F_END, 8, 24},    {EMU_F_DEVICE, 4, 32},  {EMU_F_CONTEXT, 4, 36},     {EMU_F_STREAM, 4, 40},
    {EMU_F_CORRELATION, 4, 44}, {EMU_F_FLAGS, 2, 48}, {EMU_F_MEMORY_KIND, 2, 50},
};

/* MUpti_ActivityAPI, 40 bytes [I: CUpti_ActivityAPI]. */
static const emu_field_at musa_api[] = {
    {EMU_F_KIND, 4, 0},     {EMU_F_CBID, 4, 4},    {EMU_F_START, 8, 8},        {EMU_F_END, 8, 16},
    {EMU_F_PROCESS, 4, 24}, {EMU_F_THREAD, 4, 28}, {EMU_F_CORRELATION, 4, 32}, {EMU_F_RETURN_VALUE, 4, 36},
};

/* MUpti_ActivityExternalCorrelation, 24 bytes [I: CUPTI's]. */
static const emu_field_at musa_external_correlation[] = {
    {EMU_F_KIND, 4, 0},
    {EMU_F_EXTERNAL_KIND, 4, 4},
    {EMU_F_EXTERNAL_ID, 8, 8},
    {EMU_F_CORRELATION, 4, 16},
};

/* MUpti_CallbackData, 72 bytes [I: CUpti_CallbackData]. */
static const emu_field_at musa_callback_data[] = {
    {EMU_F_CB_SITE, 4, 0},           {EMU_F_CB_FUNCTION_NAME, 8, 8},     {EMU_F_CB_FUNCTION_PARAMS, 8, 16},
    {EMU_F_CB_RETURN_VALUE_PTR, 8, 24}, {EMU_F_CB_SYMBOL_NAME, 8, 32},   {EMU_F_CB_CONTEXT_PTR, 8, 40},
    {EMU_F_CB_CONTEXT_UID, 4, 48},   {EMU_F_CB_CORRELATION_DATA, 8, 56}, {EMU_F_CORRELATION, 4, 64},
};

const emu_vendor emu_musa_vendor = {
    .name = "musa",
    .result_prefix = "MUPTI_",
    .api_version = 17, /* [I]: third-party code tests MUPTI_API_VERSION >= 17 */
    .kind = {.memcpy = 1, .memset = 2, .kernel = 3, .driver = 4, .runtime = 5, .concurrent_kernel = 10,
             .external_correlation = 39, .max_valid = 55},
    .external_kind_custom0 = 3,
    .external_kind_limit = 6,
    .callback_domain_runtime = 2,
    .callback_domain_limit = 7,
    .callback_site_enter = 0,
    .callback_site_exit = 1,
    .cbid_limit = 531, /* MUPTI_RUNTIME_TRACE_CBID_SIZE [U] */
    .result = {.success = 0, .invalid_parameter = 1, .invalid_operation = 7, .max_limit_reached = 12,
               .not_initialized = 15, .queue_empty = 18, .invalid_kind = 21, .multiple_subscribers = 39,
               .unknown = 999},
    .kernel = EMU_LAYOUT("MUpti_ActivityKernel6", 168, musa_kernel6),
    .memcpy = EMU_LAYOUT("MUpti_ActivityMemcpy4", 80, musa_memcpy4),
    .memset = EMU_LAYOUT("MUpti_ActivityMemset3", 80, musa_memset3),
    .api = EMU_LAYOUT("MUpti_ActivityAPI", 40, musa_api),
    .external_correlation = EMU_LAYOUT("MUpti_ActivityExternalCorrelation", 24, musa_external_correlation),
    .callback_data = EMU_LAYOUT("MUpti_CallbackData", 72, musa_callback_data),
    .copy_kind = {0, 1, 2, 8},
    .src_memory_kind = {0, 1, 3, 3},
    .dst_memory_kind = {0, 3, 1, 3},
    .memset_memory_kind = 3,
    .memcpy_flags_sync = 0,
    .memset_flags_async = 1,
    .malformed_style = EMU_MALFORMED_UNKNOWN_KIND,
    .bogus_kind = 0x0BAD,
    .bogus_size = 32,
    .cbid = {
        [WL_CALL_GET_DEVICE] = 17,             /* musaGetDevice [I] */
        [WL_CALL_GET_DEVICE_COUNT] = 3,        /* musaGetDeviceCount [I] */
        [WL_CALL_GET_DEVICE_PROPERTIES] = 440, /* musaGetDeviceProperties [I] */
        [WL_CALL_SET_DEVICE] = 16,             /* musaSetDevice [I] */
        [WL_CALL_MALLOC] = 20,                 /* musaMalloc_v3020 [U] */
        [WL_CALL_FREE] = 22,                   /* musaFree [I] */
        [WL_CALL_EVENT_RECORD] = 135,          /* musaEventRecord [I] */
        [WL_CALL_LAUNCH] = 211,                /* musaLaunchKernel_v7000 [U] */
        [WL_CALL_MEMCPY] = 31,                 /* musaMemcpy_v3020 [U] */
        [WL_CALL_MEMSET] = 51,                 /* musaMemsetAsync [I] */
        [WL_CALL_SYNC_STREAM] = 131,           /* musaStreamSynchronize_v3020 [U] */
        [WL_CALL_SYNC_DEVICE] = 165,           /* musaDeviceSynchronize [I] */
    },
    .api_name = {
        [WL_CALL_GET_DEVICE] = "musaGetDevice",
        [WL_CALL_GET_DEVICE_COUNT] = "musaGetDeviceCount",
        [WL_CALL_GET_DEVICE_PROPERTIES] = "musaGetDeviceProperties",
        [WL_CALL_SET_DEVICE] = "musaSetDevice",
        [WL_CALL_MALLOC] = "musaMalloc",
        [WL_CALL_FREE] = "musaFree",
        [WL_CALL_EVENT_RECORD] = "musaEventRecord",
        [WL_CALL_LAUNCH] = "musaLaunchKernel",
        [WL_CALL_MEMCPY] = "musaMemcpy",
        [WL_CALL_MEMSET] = "musaMemsetAsync",
        [WL_CALL_SYNC_STREAM] = "musaStreamSynchronize",
        [WL_CALL_SYNC_DEVICE] = "musaDeviceSynchronize",
    },
    .injection_env = NULL, /* [U]: the MUSA runtime loads no injection library */
    .clock_epoch_ns = 0,
    .clock_rate = 1.0,
    .faults_supported = EMU_FAULT_ZERO_TIME | EMU_FAULT_CLOCK | EMU_FAULT_DROP | EMU_FAULT_REFUSE_BUFFER |
                        EMU_FAULT_SUBSCRIBE_FAIL | EMU_FAULT_MALFORMED | EMU_FAULT_SMALL_BUFFER,
};
/* clang-format on */
