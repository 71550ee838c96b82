/* cupti_table.c: NVIDIA CUPTI as a table for the emulated runtime.
 *
 * Every number was read from the CUDA 13.0 toolkit headers (CUPTI_API_VERSION 130001):
 * cupti_activity.h (record offsets and sizes, kinds, memcpy/memory kinds, flags),
 * cupti_callbacks.h (CUpti_CallbackData, domains, sites), cupti_result.h (results),
 * cupti_runtime_cbid.h (callback ids). test_emu_layout.c compares the layouts with
 * offsetof/sizeof of the real structs whenever those headers are installed. */
#include "emu_cuda_fields.h"
#include "emu_vendors.h"

/* clang-format off */
const emu_vendor emu_cupti_vendor = {
    .name = "cupti",
    .result_prefix = "CUPTI_",
    .api_version = 130001, /* CUPTI_API_VERSION in cupti_version.h: what cuptiGetVersion reports */
    .kind = {.memcpy = 1, .memset = 2, .kernel = 3, .driver = 4, .runtime = 5, .concurrent_kernel = 10,
             .external_correlation = 39, .max_valid = 55 /* CUPTI_ACTIVITY_KIND_COUNT - 1 */},
    .external_kind_custom0 = 3, /* CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 */
    .external_kind_limit = 6,   /* CUPTI_EXTERNAL_CORRELATION_KIND_SIZE */
    .callback_domain_runtime = 2,
    .callback_domain_limit = 7, /* CUPTI_CB_DOMAIN_SIZE */
    .callback_site_enter = 0,
    .callback_site_exit = 1,
    .cbid_limit = 523, /* CUPTI_RUNTIME_TRACE_CBID_SIZE */
    .result = {.success = 0, .invalid_parameter = 1, .invalid_operation = 7, .max_limit_reached = 12,
               .not_initialized = 15, .queue_empty = 18, .invalid_kind = 21, .multiple_subscribers = 39,
               .unknown = 999},
    .kernel = EMU_LAYOUT("CUpti_ActivityKernel10", 216, emu_cuda_kernel_fields),
    .memcpy = EMU_LAYOUT("CUpti_ActivityMemcpy6", 96, emu_cuda_memcpy_fields),
    .memset = EMU_LAYOUT("CUpti_ActivityMemset4", 88, emu_cuda_memset_fields),
    .api = EMU_LAYOUT("CUpti_ActivityAPI", 40, emu_cuda_api_fields),
    .external_correlation = EMU_LAYOUT("CUpti_ActivityExternalCorrelation", 24, emu_cuda_external_correlation_fields),
    .callback_data = EMU_LAYOUT("CUpti_CallbackData", 72, emu_cuda_callback_data_fields),
    /* CUpti_ActivityMemcpyKind HTOD 1, DTOH 2, DTOD 8; CUpti_ActivityMemoryKind PAGEABLE 1, DEVICE 3 */
    .copy_kind = {0, 1, 2, 8},
    .src_memory_kind = {0, 1, 3, 3},
    .dst_memory_kind = {0, 3, 1, 3},
    .memset_memory_kind = 3,
    .memcpy_flags_sync = 0,
    .memset_flags_async = 1, /* CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC */
    .malformed_style = EMU_MALFORMED_UNKNOWN_KIND,
    .bogus_kind = 0x0BAD, /* no CUpti_ActivityKind has this value */
    .bogus_size = 32,
    .cbid = {
        [WL_CALL_GET_DEVICE] = 17,             /* cudaGetDevice_v3020 */
        [WL_CALL_GET_DEVICE_COUNT] = 3,        /* cudaGetDeviceCount_v3020 */
        [WL_CALL_GET_DEVICE_PROPERTIES] = 440, /* cudaGetDeviceProperties_v12000 (the CUDA 12+ entry) */
        [WL_CALL_SET_DEVICE] = 16,             /* cudaSetDevice_v3020 */
        [WL_CALL_MALLOC] = 20,                 /* cudaMalloc_v3020 */
        [WL_CALL_FREE] = 22,                   /* cudaFree_v3020 */
        [WL_CALL_EVENT_RECORD] = 135,          /* cudaEventRecord_v3020 */
        [WL_CALL_LAUNCH] = 211,                /* cudaLaunchKernel_v7000 */
        [WL_CALL_MEMCPY] = 31,                 /* cudaMemcpy_v3020 */
        [WL_CALL_MEMSET] = 51,                 /* cudaMemsetAsync_v3020 */
        [WL_CALL_SYNC_STREAM] = 131,           /* cudaStreamSynchronize_v3020 */
        [WL_CALL_SYNC_DEVICE] = 165,           /* cudaDeviceSynchronize_v3020 */
    },
    .api_name = {
        [WL_CALL_GET_DEVICE] = "cudaGetDevice",
        [WL_CALL_GET_DEVICE_COUNT] = "cudaGetDeviceCount",
        [WL_CALL_GET_DEVICE_PROPERTIES] = "cudaGetDeviceProperties",
        [WL_CALL_SET_DEVICE] = "cudaSetDevice",
        [WL_CALL_MALLOC] = "cudaMalloc",
        [WL_CALL_FREE] = "cudaFree",
        [WL_CALL_EVENT_RECORD] = "cudaEventRecord",
        [WL_CALL_LAUNCH] = "cudaLaunchKernel",
        [WL_CALL_MEMCPY] = "cudaMemcpy",
        [WL_CALL_MEMSET] = "cudaMemsetAsync",
        [WL_CALL_SYNC_STREAM] = "cudaStreamSynchronize",
        [WL_CALL_SYNC_DEVICE] = "cudaDeviceSynchronize",
    },
    .injection_env = "CUDA_INJECTION64_PATH",
    .clock_epoch_ns = 0,
    .clock_rate = 1.0,
    .faults_supported = EMU_FAULT_ZERO_TIME | EMU_FAULT_CLOCK | EMU_FAULT_DROP | EMU_FAULT_REFUSE_BUFFER |
                        EMU_FAULT_SUBSCRIBE_FAIL | EMU_FAULT_MALFORMED | EMU_FAULT_SMALL_BUFFER,
};
/* clang-format on */
