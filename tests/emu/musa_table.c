/* musa_table.c: Moore Threads MUPTI (MUSA) as a table for the emulated runtime.
 *
 * No MUSA header, library or device was available: the facts are marked [U] (seen in public
 * third-party code that uses MUPTI: the symbol spelling, the record struct names, the
 * runtime callback ids listed as seen in src/backends/musa.c, no injection hook) or [I]
 * (inferred from MUPTI being a port of CUPTI: every layout below is CUPTI's struct of the
 * same name, from the CUDA 11.x headers; kinds, results, domains and memory kinds are
 * CUPTI's). Passing against this emulator means "emulated", nothing more. */
#include "emu_cuda_fields.h"
#include "emu_vendors.h"

/* clang-format off */
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
    .kernel = EMU_LAYOUT("MUpti_ActivityKernel6", 168, emu_cuda_kernel_fields),
    .memcpy = EMU_LAYOUT("MUpti_ActivityMemcpy4", 80, emu_cuda_memcpy_fields),
    .memset = EMU_LAYOUT("MUpti_ActivityMemset3", 80, emu_cuda_memset_fields),
    .api = EMU_LAYOUT("MUpti_ActivityAPI", 40, emu_cuda_api_fields),
    .external_correlation = EMU_LAYOUT("MUpti_ActivityExternalCorrelation", 24, emu_cuda_external_correlation_fields),
    .callback_data = EMU_LAYOUT("MUpti_CallbackData", 72, emu_cuda_callback_data_fields),
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
