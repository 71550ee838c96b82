/* mcpti_table.c: MetaX MCPTI (MACA 3.8.0) as a table for the emulated runtime.
 *
 * Facts from shared/vendor-abi.md, with its marks: [U] seen in code that ran on a C550,
 * [I] inferred and unverified. No MetaX header is available: where the vendor-abi notes
 * say a record is "identical to CUPTI" up to some field, the offsets below are CUPTI's
 * (test_emu_layout.c checks them against the CUPTI headers); what lies beyond that prefix
 * is left zero rather than guessed. Nothing here is validated on MetaX hardware. */
#include "emu_cuda_fields.h"
#include "emu_vendors.h"

/* The tables below are laid out by hand, a few fields a line. */
/* clang-format off */
/* MCpti_ActivityKernel8, 200 bytes [U]: the prefix through name@104 is CUPTI Kernel8/9's [U];
 * gridId@96 is part of that prefix [I]. */
static const emu_field_at mcpti_kernel8[] = {
    {EMU_F_KIND, 4, 0},          {EMU_F_REGISTERS, 2, 6},    {EMU_F_START, 8, 16},
    {EMU_F_END, 8, 24},          {EMU_F_COMPLETED, 8, 32},   {EMU_F_DEVICE, 4, 40},
    {EMU_F_CONTEXT, 4, 44},      {EMU_F_STREAM, 4, 48},      {EMU_F_GRID_X, 4, 52},
    {EMU_F_GRID_Y, 4, 56},       {EMU_F_GRID_Z, 4, 60},      {EMU_F_BLOCK_X, 4, 64},
    {EMU_F_BLOCK_Y, 4, 68},      {EMU_F_BLOCK_Z, 4, 72},     {EMU_F_STATIC_SMEM, 4, 76},
    {EMU_F_DYNAMIC_SMEM, 4, 80}, {EMU_F_CORRELATION, 4, 92}, {EMU_F_GRID_ID, 8, 96},
    {EMU_F_NAME, 8, 104},
};

const emu_vendor emu_mcpti_vendor = {
    .name = "mcpti",
    .result_prefix = "MCPTI_",
    .api_version = 18, /* mcptiGetVersion on MACA 3.5.3 and 3.7.1 [U] */
    /* CUPTI's kind numbers [U]; the valid range is assumed to be CUPTI's [I] */
    .kind = {.memcpy = 1, .memset = 2, .kernel = 3, .driver = 4, .runtime = 5, .concurrent_kernel = 10,
             .external_correlation = 39, .max_valid = 55},
    .external_kind_custom0 = 3, /* [U] */
    .external_kind_limit = 6,   /* [I] as CUPTI */
    .callback_domain_runtime = 2, /* [I] as CUPTI */
    .callback_domain_limit = 7,   /* [I] */
    .callback_site_enter = 0,
    .callback_site_exit = 1,
    .cbid_limit = 1000, /* the validation bound of vendor-abi.md quirk 1 */
    /* end of buffer = 12 [U]; the others [I] as CUPTI */
    .result = {.success = 0, .invalid_parameter = 1, .invalid_operation = 7, .max_limit_reached = 12,
               .not_initialized = 15, .queue_empty = 18, .invalid_kind = 21, .multiple_subscribers = 39,
               .unknown = 999},
    .kernel = EMU_LAYOUT("MCpti_ActivityKernel8", 200, mcpti_kernel8),
    /* The other records are CUPTI's layouts (emu_cuda_fields.h). MCpti_ActivityMemcpy5, 88 bytes
     * [U], its fields [I] CUPTI's Memcpy5/6 prefix (copy kinds as u8 @4..7, bytes@8, start@16,
     * end@24, deviceId@32, contextId@36, streamId@40, correlationId@44, runtimeCorrelationId@48).
     * MCpti_ActivityMemset4, 88 bytes [U]: value u32@4 replaces memcpy's four u8 kind fields
     * [U]; the rest [I] as CUPTI Memset4 (bytes@8 ... correlationId@44, flags u16@48,
     * memoryKind u16@50). The API record, 40 bytes, and the external correlation record, 24
     * bytes: CUPTI's layouts [U]. MCpti_CallbackData [I]: CUPTI's CUpti_CallbackData, 72 bytes. */
    .memcpy = EMU_LAYOUT("MCpti_ActivityMemcpy5", 88, emu_cuda_memcpy_fields),
    .memset = EMU_LAYOUT("MCpti_ActivityMemset4", 88, emu_cuda_memset_fields),
    .api = EMU_LAYOUT("MCpti_ActivityAPI", 40, emu_cuda_api_fields),
    .external_correlation = EMU_LAYOUT("MCpti_ActivityExternalCorrelation", 24, emu_cuda_external_correlation_fields),
    .callback_data = EMU_LAYOUT("MCpti_CallbackData", 72, emu_cuda_callback_data_fields),
    /* [I] CUPTI's memcpy and memory kind numbers */
    .copy_kind = {0, 1, 2, 8},
    .src_memory_kind = {0, 1, 3, 3},
    .dst_memory_kind = {0, 3, 1, 3},
    .memset_memory_kind = 3,
    .memcpy_flags_sync = 0,
    .memset_flags_async = 1,
    .malformed_style = EMU_MALFORMED_INVALID_FIELDS,
    .cbid = {
        /* MetaX's own callback-id namespace [U] */
        [WL_CALL_GET_DEVICE] = 19,
        [WL_CALL_GET_DEVICE_COUNT] = 20,
        [WL_CALL_GET_DEVICE_PROPERTIES] = 22,
        [WL_CALL_SET_DEVICE] = 23,
        [WL_CALL_MALLOC] = 107,
        [WL_CALL_FREE] = 108,
        [WL_CALL_EVENT_RECORD] = 74,
        [WL_CALL_LAUNCH] = 56,
        [WL_CALL_MEMCPY] = 118,
        [WL_CALL_MEMSET] = 147,
        [WL_CALL_SYNC_STREAM] = 46,
        [WL_CALL_SYNC_DEVICE] = 18,
    },
    .api_name = {
        [WL_CALL_GET_DEVICE] = "mcGetDevice",
        [WL_CALL_GET_DEVICE_COUNT] = "mcGetDeviceCount",
        [WL_CALL_GET_DEVICE_PROPERTIES] = "mcGetDeviceProperties",
        [WL_CALL_SET_DEVICE] = "mcSetDevice",
        [WL_CALL_MALLOC] = "mcMalloc",
        [WL_CALL_FREE] = "mcFree",
        [WL_CALL_EVENT_RECORD] = "mcEventRecord",
        [WL_CALL_LAUNCH] = "mcLaunchKernel",
        [WL_CALL_MEMCPY] = "mcMemcpy",
        [WL_CALL_MEMSET] = "mcMemsetAsync",
        [WL_CALL_SYNC_STREAM] = "mcStreamSynchronize",
        [WL_CALL_SYNC_DEVICE] = "mcDeviceSynchronize",
    },
    .injection_env = "MACA_INJECTION64_PATH", /* [I]: by analogy with CUDA_INJECTION64_PATH */
    .clock_epoch_ns = 0,
    .clock_rate = 1.0,
    .faults_supported = EMU_FAULT_ZERO_TIME | EMU_FAULT_CLOCK | EMU_FAULT_DROP | EMU_FAULT_REFUSE_BUFFER |
                        EMU_FAULT_SUBSCRIBE_FAIL | EMU_FAULT_MALFORMED | EMU_FAULT_SMALL_BUFFER |
                        EMU_FAULT_STALE_ITERATOR | EMU_FAULT_VENDOR_PRESET,
    /* The quirks measured on a C550 with MACA 3.8.0, at once: the stale iterator (quirk 1),
     * 4 records that fail validation, 3 start == end == 0 kernels (quirk 2), and a device
     * counter that starts at load (small values, quirk 3) running 250 ppm fast. */
    .preset_name = "maca-3.8",
    .preset_spec = "stale-iterator,malformed=4,zero-time=3,clock-epoch=load,clock-rate=1.00025",
};
/* clang-format on */
