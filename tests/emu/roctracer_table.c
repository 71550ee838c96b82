/* roctracer_table.c: AMD ROCtracer (and Hygon DTK's copy of it) as a table for the
 * emulated runtime.
 *
 * The core writes records through these layouts as "staged" 64-byte records: every
 * field already at its activity_record_t offset [H] (correlation_id u64 @16, begin_ns
 * @24, end_ns @32, device_id @40, queue_id @48, bytes/kernel_name @56; for API records
 * op = the API id @8, process_id @40, thread_id @44; for EXT_API records external_id
 * @40), and a staging kind at offset 0 that roctracer_emu.c turns into the record's
 * domain, kind and op before the tracer sees it. The copy and fill kinds go in place
 * through the copy-kind and memory-kind fields, their op (COPY = 1 [H]) through the
 * flags field. The callback-data layout is the emulated hip_api_data_t prefix
 * (correlation_id u64 @0, phase u32 @8 [H]; phase_data after the args union). */
#include "roctracer_emu.h"

/* The tables below are laid out by hand, a few fields a line. */
/* clang-format off */
static const emu_field_at roc_staged_kernel[] = {
    {EMU_F_KIND, 4, 0},         {EMU_F_CORRELATION, 8, 16}, {EMU_F_START, 8, 24}, {EMU_F_END, 8, 32},
    {EMU_F_DEVICE, 4, 40},      {EMU_F_STREAM, 8, 48},      {EMU_F_NAME, 8, 56},
};

static const emu_field_at roc_staged_memcpy[] = {
    {EMU_F_KIND, 4, 0},      {EMU_F_COPY_KIND, 4, 4}, {EMU_F_FLAGS, 4, 8},   {EMU_F_CORRELATION, 8, 16},
    {EMU_F_START, 8, 24},    {EMU_F_END, 8, 32},      {EMU_F_DEVICE, 4, 40}, {EMU_F_STREAM, 8, 48},
    {EMU_F_BYTES, 8, 56},
};

static const emu_field_at roc_staged_memset[] = {
    {EMU_F_KIND, 4, 0},      {EMU_F_MEMORY_KIND, 4, 4}, {EMU_F_FLAGS, 4, 8},   {EMU_F_CORRELATION, 8, 16},
    {EMU_F_START, 8, 24},    {EMU_F_END, 8, 32},        {EMU_F_DEVICE, 4, 40}, {EMU_F_STREAM, 8, 48},
    {EMU_F_BYTES, 8, 56},
};

/* HIP_API activity records (written when the tracer enables the HIP_API domain's activity). */
static const emu_field_at roc_staged_api[] = {
    {EMU_F_KIND, 4, 0},    {EMU_F_CBID, 4, 8},     {EMU_F_CORRELATION, 8, 16}, {EMU_F_START, 8, 24},
    {EMU_F_END, 8, 32},    {EMU_F_PROCESS, 4, 40}, {EMU_F_THREAD, 4, 44},
};

/* EXT_API records (op EXTERN_ID [H]), written just before the API record they belong to,
 * as ROCtracer does; the external kind is overwritten by the op. */
static const emu_field_at roc_staged_external[] = {
    {EMU_F_KIND, 4, 0},
    {EMU_F_EXTERNAL_KIND, 4, 8},
    {EMU_F_CORRELATION, 8, 16},
    {EMU_F_EXTERNAL_ID, 8, 40},
};

static const emu_field_at roc_api_data[] = {
    {EMU_F_CORRELATION, 8, 0},
    {EMU_F_CB_SITE, 4, 8},
    {EMU_F_CB_CORRELATION_DATA, 8, EMU_ROC_PHASE_DATA_OFFSET},
};

const emu_vendor emu_roctracer_vendor = {
    .name = "roctracer",
    .result_prefix = "ROCTRACER_STATUS_",
    .api_version = 401, /* the 4.1 interface (roctracer_version_major/minor) */
    .kind = {.memcpy = EMU_ROC_STAGED_MEMCPY, .memset = EMU_ROC_STAGED_MEMSET, .kernel = EMU_ROC_STAGED_KERNEL,
             .driver = 0, .runtime = EMU_ROC_STAGED_API, .concurrent_kernel = 0,
             .external_correlation = EMU_ROC_STAGED_EXTERNAL, .max_valid = 7},
    .external_kind_custom0 = 1, /* ROCtracer has one external id stack per thread */
    .external_kind_limit = 2,
    .callback_domain_runtime = EMU_ROC_DOMAIN_HIP_API,
    .callback_domain_limit = EMU_ROC_DOMAIN_NUMBER,
    .callback_site_enter = 0, /* ACTIVITY_API_PHASE_ENTER [H] */
    .callback_site_exit = 1,  /* ACTIVITY_API_PHASE_EXIT [H] */
    .cbid_limit = EMU_ROC_CID_LIMIT,
    .result = {.success = EMU_ROC_STATUS_SUCCESS, .invalid_parameter = EMU_ROC_STATUS_INVALID_ARGUMENT,
               .invalid_operation = EMU_ROC_STATUS_ERROR, .max_limit_reached = -100, .not_initialized = -101,
               .queue_empty = EMU_ROC_STATUS_MISMATCHED_EXTERNAL_ID, .invalid_kind = EMU_ROC_STATUS_INVALID_DOMAIN,
               .multiple_subscribers = -102, .unknown = EMU_ROC_STATUS_ERROR},
    .kernel = EMU_LAYOUT("activity_record_t (HIP_OPS dispatch)", EMU_ROC_RECORD_SIZE, roc_staged_kernel),
    .memcpy = EMU_LAYOUT("activity_record_t (HIP_OPS copy)", EMU_ROC_RECORD_SIZE, roc_staged_memcpy),
    .memset = EMU_LAYOUT("activity_record_t (HIP_OPS fill)", EMU_ROC_RECORD_SIZE, roc_staged_memset),
    .api = EMU_LAYOUT("activity_record_t (HIP_API)", EMU_ROC_RECORD_SIZE, roc_staged_api),
    .external_correlation = EMU_LAYOUT("activity_record_t (EXT_API)", EMU_ROC_RECORD_SIZE, roc_staged_external),
    .callback_data = EMU_LAYOUT("hip_api_data_t (emulated)", EMU_ROC_API_DATA_SIZE, roc_api_data),
    /* HIP_OPS copy kinds by wl_copy_dir (HTOD, DTOH, DTOD) [U] */
    .copy_kind = {0, EMU_ROC_KIND_COPY_HTOD, EMU_ROC_KIND_COPY_DTOH, EMU_ROC_KIND_COPY_DTOD},
    .src_memory_kind = {0, 0, 0, 0},
    .dst_memory_kind = {0, 0, 0, 0},
    .memset_memory_kind = EMU_ROC_KIND_FILL,
    .memcpy_flags_sync = EMU_ROC_OP_COPY,
    .memset_flags_async = EMU_ROC_OP_COPY, /* a fill is a COPY op [U: kind=0x1207 op=1 on DTK] */
    .malformed_style = EMU_MALFORMED_UNKNOWN_KIND,
    .bogus_kind = EMU_ROC_STAGED_BOGUS, /* read as a domain no ROCtracer has */
    .bogus_size = EMU_ROC_RECORD_SIZE,
    .cbid = {
        [WL_CALL_GET_DEVICE] = 901,
        [WL_CALL_GET_DEVICE_COUNT] = 907,
        [WL_CALL_GET_DEVICE_PROPERTIES] = 913,
        [WL_CALL_SET_DEVICE] = 919,
        [WL_CALL_MALLOC] = 925,
        [WL_CALL_FREE] = 931,
        [WL_CALL_EVENT_RECORD] = 937,
        [WL_CALL_LAUNCH] = 943,
        [WL_CALL_MEMCPY] = 949,
        [WL_CALL_MEMSET] = 955,
        [WL_CALL_SYNC_STREAM] = 961,
        [WL_CALL_SYNC_DEVICE] = 967,
    },
    /* HIP API names as roctracer_op_string gives them (ROCm 5.x; ROCm 6 reports
     * hipGetDevicePropertiesR0600 for the properties call [I]). */
    .api_name = {
        [WL_CALL_GET_DEVICE] = "hipGetDevice",
        [WL_CALL_GET_DEVICE_COUNT] = "hipGetDeviceCount",
        [WL_CALL_GET_DEVICE_PROPERTIES] = "hipGetDeviceProperties",
        [WL_CALL_SET_DEVICE] = "hipSetDevice",
        [WL_CALL_MALLOC] = "hipMalloc",
        [WL_CALL_FREE] = "hipFree",
        [WL_CALL_EVENT_RECORD] = "hipEventRecord",
        [WL_CALL_LAUNCH] = "hipLaunchKernel",
        [WL_CALL_MEMCPY] = "hipMemcpy",
        [WL_CALL_MEMSET] = "hipMemsetAsync",
        [WL_CALL_SYNC_STREAM] = "hipStreamSynchronize",
        [WL_CALL_SYNC_DEVICE] = "hipDeviceSynchronize",
    },
    .injection_env = NULL, /* no injection hook: tracers are preloaded or linked */
    .clock_epoch_ns = 0,   /* set when loaded: a CLOCK_BOOTTIME-like clock (roctracer_emu.c) */
    .clock_rate = 1.0,
    /* activity_correlation_id_t is u64 [H]: start past 32 bits, so a tracer that keeps
     * fewer bits is caught. */
    .first_correlation = (1ull << 32) + 1,
    .faults_supported = EMU_FAULT_ZERO_TIME | EMU_FAULT_CLOCK | EMU_FAULT_DROP | EMU_FAULT_MALFORMED |
                        EMU_FAULT_SMALL_BUFFER,
};
/* clang-format on */
