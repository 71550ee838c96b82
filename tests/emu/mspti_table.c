/* mspti_table.c: Huawei Ascend MSPTI as a table for the emulated runtime.
 *
 * Numbers from shared/vendor-abi.md ([H]: the Ascend/mspti csrc/include headers
 * mspti_activity.h, mspti_callback.h, mspti_result.h), written here independently of
 * devtrace's decoder mirrors (src/backends/pti_records.h), so that the two can
 * disagree and a test can see it. The records are packed (the headers' PACKED_ALIGNMENT:
 * packed, then aligned to 8), so a u64 sits at offset 4 and each size is rounded up to 8:
 * Kernel 52 -> 56, Api 44 -> 48, Memset/Memcpy 49 -> 56, ExternalCorrelation 24.
 * Marked [I]: what no header or vendor-abi.md gives (chosen for the emulator, documented
 * in README.md). Nothing here is validated on Ascend hardware. */
#include "emu_u64_fields.h"
#include "emu_vendors.h"

/* The tables below are laid out by hand, a few fields a line. */
/* clang-format off */
/* msptiActivityKernel, 56 bytes: kind@0, start@4, end@12, ds.deviceId@20, ds.streamId@24,
 * correlationId u64@28, type char*@36, name char*@44. No grid/block/registers. */
static const emu_field_at mspti_kernel[] = {
    {EMU_F_KIND, 4, 0},    {EMU_F_START, 8, 4},        {EMU_F_END, 8, 12},          {EMU_F_DEVICE, 4, 20},
    {EMU_F_STREAM, 4, 24}, {EMU_F_CORRELATION, 8, 28}, {EMU_F_KERNEL_TYPE, 8, 36}, {EMU_F_NAME, 8, 44},
};

/* msptiActivityMemcpy, 56 bytes: kind@0, copyKind u32@4, bytes@8, start@16, end@24,
 * deviceId@32, streamId@36, correlationId u64@40, isAsync u8@48. */
static const emu_field_at mspti_memcpy[] = {
    {EMU_F_KIND, 4, 0},   {EMU_F_COPY_KIND, 4, 4}, {EMU_F_BYTES, 8, 8},         {EMU_F_START, 8, 16},
    {EMU_F_END, 8, 24},   {EMU_F_DEVICE, 4, 32},   {EMU_F_STREAM, 4, 36},       {EMU_F_CORRELATION, 8, 40},
    {EMU_F_FLAGS, 1, 48},
};

/* msptiActivityMemset, 56 bytes: kind@0, value u32@4, bytes@8, start@16, end@24,
 * deviceId@32, streamId@36, correlationId u64@40, isAsync u8@48. */
static const emu_field_at mspti_memset[] = {
    {EMU_F_KIND, 4, 0},   {EMU_F_VALUE, 4, 4},   {EMU_F_BYTES, 8, 8},         {EMU_F_START, 8, 16},
    {EMU_F_END, 8, 24},   {EMU_F_DEVICE, 4, 32}, {EMU_F_STREAM, 4, 36},       {EMU_F_CORRELATION, 8, 40},
    {EMU_F_FLAGS, 1, 48},
};

/* msptiActivityApi, 48 bytes: kind@0, start@4, end@12, pt.processId@20, pt.threadId@24,
 * correlationId u64@28, name char*@36. No callback id, no return value. */
static const emu_field_at mspti_api[] = {
    {EMU_F_KIND, 4, 0},     {EMU_F_START, 8, 4},   {EMU_F_END, 8, 12},          {EMU_F_PROCESS, 4, 20},
    {EMU_F_THREAD, 4, 24},  {EMU_F_CORRELATION, 8, 28}, {EMU_F_NAME, 8, 36},
};

/* msptiActivityCommunication, 72 bytes: kind@0, dataType@4, count u64@8, ds.deviceId@16,
 * ds.streamId@20, start@24, end@32, algType char*@40, name char*@48, commName char*@56,
 * correlationId u64@64. */
static const emu_field_at mspti_communication[] = {
    {EMU_F_KIND, 4, 0},       {EMU_F_DATA_TYPE, 4, 4},  {EMU_F_ELEMENTS, 8, 8},    {EMU_F_DEVICE, 4, 16},
    {EMU_F_STREAM, 4, 20},    {EMU_F_START, 8, 24},     {EMU_F_END, 8, 32},        {EMU_F_ALGORITHM, 8, 40},
    {EMU_F_NAME, 8, 48},      {EMU_F_COMM_NAME, 8, 56}, {EMU_F_CORRELATION, 8, 64},
};

/* msptiActivityMarker, 56 bytes: kind@0, flag@4, sourceKind@8, timestamp u64@12, id u64@20,
 * objectId (pt.processId@28, pt.threadId@32), name char*@36, domain char*@44. */
static const emu_field_at mspti_marker[] = {
    {EMU_F_KIND, 4, 0},       {EMU_F_MARKER_FLAG, 4, 4}, {EMU_F_SOURCE_KIND, 4, 8}, {EMU_F_TIMESTAMP, 8, 12},
    {EMU_F_MARKER_ID, 8, 20}, {EMU_F_PROCESS, 4, 28},    {EMU_F_THREAD, 4, 32},     {EMU_F_NAME, 8, 36},
};

/* msptiActivityMemory, 64 bytes: kind@0, memoryOperationType@4, memoryKind@8, correlationId u64@12,
 * start@20, end@28, address@36, bytes@44, processId@52, deviceId@56, streamId@60. */
static const emu_field_at mspti_memory[] = {
    {EMU_F_KIND, 4, 0},       {EMU_F_MEMORY_OP, 4, 4}, {EMU_F_MEMORY_KIND, 4, 8}, {EMU_F_CORRELATION, 8, 12},
    {EMU_F_START, 8, 20},     {EMU_F_END, 8, 28},      {EMU_F_ADDRESS, 8, 36},    {EMU_F_BYTES, 8, 44},
    {EMU_F_PROCESS, 4, 52},   {EMU_F_DEVICE, 4, 56},   {EMU_F_STREAM, 4, 60},
};

/* msptiCallbackData (not packed), 72 bytes: callbackSite@0, functionName@8,
 * functionParams@16, functionReturnValue@24, symbolName@32, correlationId u64@40,
 * reserved1@48, reserved2@56, correlationData@64. */
static const emu_field_at mspti_callback_data[] = {
    {EMU_F_CB_SITE, 4, 0},           {EMU_F_CB_FUNCTION_NAME, 8, 8},  {EMU_F_CB_FUNCTION_PARAMS, 8, 16},
    {EMU_F_CB_RETURN_VALUE_PTR, 8, 24}, {EMU_F_CB_SYMBOL_NAME, 8, 32}, {EMU_F_CORRELATION, 8, 40},
    {EMU_F_CB_CORRELATION_DATA, 8, 64},
};

const emu_vendor emu_mspti_vendor = {
    .name = "mspti",
    .result_prefix = "MSPTI_",
    .api_version = 260000, /* [I] msptiGetVersion's xxyyzz format (newer headers); the value is a choice */
    /* The aclrt* calls are ACL-level API records: kind ACL_API 10. MARKER 1 ... OVERHEAD 13
     * may be enabled (max_valid); only the kinds below are written. */
    .kind = {.memcpy = 7, .memset = 6, .kernel = 2, .driver = 0, .runtime = 10, .concurrent_kernel = 0,
             .external_correlation = 8, .max_valid = 13, .communication = 9, .marker = 1, .memory = 5},
    .external_kind_custom0 = 2,
    .external_kind_limit = 5, /* INVALID 0, UNKNOWN 1, CUSTOM0 2, CUSTOM1 3, CUSTOM2 4 */
    .callback_domain_runtime = 1, /* MSPTI_CB_DOMAIN_RUNTIME; HCCL 2 */
    .callback_domain_limit = 3,
    .callback_site_enter = 0,
    .callback_site_exit = 1,
    .cbid_limit = 64,
    /* SUCCESS 0, INVALID_PARAMETER 1, MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED 2, MAX_LIMIT_REACHED 3,
     * QUEUE_EMPTY 5, NOT_INITIALIZED 7, INVALID_KIND 8, INNER 999. MSPTI has no
     * INVALID_OPERATION: an external-id stack overflow answers INNER [I]. mspti_emu.c names
     * the codes itself (WITHOUT_LD_PRELOAD 6 is not a core result). */
    .result = {.success = 0, .invalid_parameter = 1, .invalid_operation = 999, .max_limit_reached = 3,
               .not_initialized = 7, .queue_empty = 5, .invalid_kind = 8, .multiple_subscribers = 2,
               .unknown = 999},
    .kernel = EMU_LAYOUT_PACKED("msptiActivityKernel", 56, mspti_kernel),
    .memcpy = EMU_LAYOUT_PACKED("msptiActivityMemcpy", 56, mspti_memcpy),
    .memset = EMU_LAYOUT_PACKED("msptiActivityMemset", 56, mspti_memset),
    .api = EMU_LAYOUT_PACKED("msptiActivityApi", 48, mspti_api),
    .external_correlation = EMU_LAYOUT_PACKED("msptiActivityExternalCorrelation", 24,
                                              emu_u64_external_correlation_fields),
    .callback_data = EMU_LAYOUT("msptiCallbackData", 72, mspti_callback_data),
    /* msptiActivityMemcpyKind by wl_copy_dir (index 0 unused): HTOD 2, DTOH 3, DTOD 4 */
    .copy_kind = {0, 2, 3, 4},
    .src_memory_kind = {0, 0, 0, 0},
    .dst_memory_kind = {0, 0, 0, 0},
    .memset_memory_kind = 0,
    .memcpy_flags_sync = 0,  /* isAsync: aclrtMemcpy is synchronous */
    .memset_flags_async = 1, /* isAsync: aclrtMemsetAsync */
    .malformed_style = EMU_MALFORMED_END_BEFORE_START,
    .cbid = EMU_U64_CHOSEN_CBIDS, /* only for msptiGetCallbackName and the callback API */
    .api_name = {
        /* DESIGN.md's Ascend column; the launch is aclrtLaunchKernel (CANN's ACL runtime
         * kernel launch), standing for "an aclnn kernel launch" [I]. */
        [WL_CALL_GET_DEVICE] = "aclrtGetDevice",
        [WL_CALL_GET_DEVICE_COUNT] = "aclrtGetDeviceCount",
        [WL_CALL_GET_DEVICE_PROPERTIES] = "aclrtGetDeviceInfo",
        [WL_CALL_SET_DEVICE] = "aclrtSetDevice",
        [WL_CALL_MALLOC] = "aclrtMalloc",
        [WL_CALL_FREE] = "aclrtFree",
        [WL_CALL_EVENT_RECORD] = "aclrtRecordEvent",
        [WL_CALL_LAUNCH] = "aclrtLaunchKernel",
        [WL_CALL_MEMCPY] = "aclrtMemcpy",
        [WL_CALL_MEMSET] = "aclrtMemsetAsync",
        [WL_CALL_SYNC_STREAM] = "aclrtSynchronizeStream",
        [WL_CALL_SYNC_DEVICE] = "aclrtSynchronizeDevice",
        [WL_CALL_COLLECTIVE] = "HcclAllReduce", /* a collective statement names its own call */
    },
    .injection_env = NULL, /* MSPTI has no injection hook: a tracer is preloaded */
    .clock_epoch_ns = 0,   /* CLOCK_REALTIME ns, MSPTI's default */
    .clock_rate = 1.0,
    .faults_supported = EMU_FAULT_ZERO_TIME | EMU_FAULT_CLOCK | EMU_FAULT_DROP | EMU_FAULT_REFUSE_BUFFER |
                        EMU_FAULT_SUBSCRIBE_FAIL | EMU_FAULT_MALFORMED | EMU_FAULT_SMALL_BUFFER,
    .kernel_type = "KERNEL_AICORE", /* [I] a plausible msptiActivityKernel.type string */
    /* [I] a test choice: ids start above 2^32, so a tracer that keeps only 32 bits of
     * MSPTI's u64 correlation ids loses every flow. The real library's first id is unknown. */
    .first_correlation = (1ull << 32) + 1,
    .communication = EMU_LAYOUT_PACKED("msptiActivityCommunication", 72, mspti_communication),
    .marker = EMU_LAYOUT_PACKED("msptiActivityMarker", 56, mspti_marker),
    .memory = EMU_LAYOUT_PACKED("msptiActivityMemory", 64, mspti_memory),
    /* msptiCommunicationDataType by wl_dtype: INT8 0, INT32 2, FP16 3, FP32 4, BFP16 11 */
    .dtype = {0, 2, 3, 4, 11},
    .marker_start = 1 << 1, /* MSPTI_ACTIVITY_FLAG_MARKER_START */
    .marker_end = 1 << 2,   /* MSPTI_ACTIVITY_FLAG_MARKER_END */
    .memory_allocation = 0,
    .memory_release = 1,
    /* A launch with levels= is also a NODE_API 11 record named after its kernel (the operator
     * the node delivers [I]) and a RUNTIME_API 12 record named rtKernelLaunch (CANN runtime's
     * kernel launch [I]), with the ACL call's correlation id: MSPTI gives every level's record
     * the calling thread's current id. */
    .level_kind = {[WL_LEVEL_NODE] = 11, [WL_LEVEL_RUNTIME] = 12},
    .level_name = {[WL_LEVEL_NODE] = NULL, [WL_LEVEL_RUNTIME] = "rtKernelLaunch"},
};
/* clang-format on */
