/* cnpapi_emu.c: libcnpapi-emu.so, an emulator of Cambricon CNPAPI (Neuware) for testing
 * tracers: its vendor table and its exported API in one file.
 *
 * No Cambricon library or device was available. The facts are marked [H-copy] (read in a
 * copy of CNPAPI's public headers, cnpapi.h, cnpapi_types.h and cnpapi_activity_api.h,
 * as public repositories carry them: record layouts, activity types, result codes,
 * external correlation types, the functions' signatures), [U] (seen in public third-party
 * code that uses CNPAPI) or [I] (inferred, unverified). What differs from CUPTI's shape:
 * cnpapiInit() before anything else; the completion callback is (buffer, size, validSize);
 * cnpapiActivityFlushAll() takes no flag; uint64_t cnpapiGetTimestamp() returns the time;
 * correlation ids are u64; no GetVersion, no dropped-record count. Passing against this
 * emulator means "emulated", nothing more. */
#include <string.h>

#include "emu.h"
#include "emu_u64_fields.h"

/* cnpapiResult [H-copy]. */
enum {
    CNPAPI_SUCCESS = 0,
    CNPAPI_ERROR_NOT_INITIALIZED = 1,
    CNPAPI_ERROR_INVALID_ARGUMENT = 3,
    CNPAPI_ERROR_UNKNOWN = 8,
    CNPAPI_ERROR_MAX_LIMIT_REACHED = 9,
    CNPAPI_ERROR_ALREADY_IN_USE = 12,
};

/* cnpapiActivityKernel, 120 bytes [H-copy]: type@0, correlation_id u64@8 (the CNDrv call's),
 * start@16, end@24, received@32, queued@40, submitted@48, device_id u64@56, name@64,
 * queue_id u64@72, runtime_correlation_id u64@80, kernel_type u64@88, dimx/dimy/dimz u32
 * @96/100/104 (the task's dimensions, not CUDA's grid and block), context_id u64@112. */
static const emu_field_at cnpapi_kernel[] = {
    {EMU_F_KIND, 4, 0},      {EMU_F_CORRELATION, 8, 8}, {EMU_F_START, 8, 16},   {EMU_F_END, 8, 24},
    {EMU_F_QUEUED, 8, 40},   {EMU_F_SUBMITTED, 8, 48},  {EMU_F_DEVICE, 8, 56},  {EMU_F_NAME, 8, 64},
    {EMU_F_STREAM, 8, 72},   {EMU_F_GRID_X, 4, 96},     {EMU_F_GRID_Y, 4, 100}, {EMU_F_GRID_Z, 4, 104},
    {EMU_F_CONTEXT, 8, 112},
};

/* cnpapiActivityMemcpy, 104 bytes [H-copy]: type@0, flags@4, correlation_id@8, bytes@16,
 * copy_type u32@24, start@32, end@40, received@48, queued@56, submitted@64, device_id@72,
 * queue_id@80, runtime_correlation_id@88, context_id@96. */
static const emu_field_at cnpapi_memcpy[] = {
    {EMU_F_KIND, 4, 0},       {EMU_F_FLAGS, 4, 4},   {EMU_F_CORRELATION, 8, 8}, {EMU_F_BYTES, 8, 16},
    {EMU_F_COPY_KIND, 4, 24}, {EMU_F_START, 8, 32},  {EMU_F_END, 8, 40},        {EMU_F_QUEUED, 8, 56},
    {EMU_F_SUBMITTED, 8, 64}, {EMU_F_DEVICE, 8, 72}, {EMU_F_STREAM, 8, 80},     {EMU_F_CONTEXT, 8, 96},
};

/* cnpapiActivityMemset, 104 bytes [H-copy]: type@0, flags@4, correlation_id@8, bytes@16,
 * start@24, end@32, received@40, queued@48, submitted@56, device_id@64, queue_id@72,
 * runtime_correlation_id@80, value u64@88, context_id@96. */
static const emu_field_at cnpapi_memset[] = {
    {EMU_F_KIND, 4, 0},    {EMU_F_FLAGS, 4, 4},   {EMU_F_CORRELATION, 8, 8}, {EMU_F_BYTES, 8, 16},
    {EMU_F_START, 8, 24},  {EMU_F_END, 8, 32},    {EMU_F_QUEUED, 8, 48},     {EMU_F_SUBMITTED, 8, 56},
    {EMU_F_DEVICE, 8, 64}, {EMU_F_STREAM, 8, 72}, {EMU_F_VALUE, 8, 88},      {EMU_F_CONTEXT, 8, 96},
};

/* cnpapiActivityAPI, 56 bytes [H-copy]: type@0, correlation_id u64@8, cbid u32@16, start@24,
 * end@32, process_id u32@40, thread_id u32@44, return_value (a pointer)@48. */
static const emu_field_at cnpapi_api[] = {
    {EMU_F_KIND, 4, 0}, {EMU_F_CORRELATION, 8, 8}, {EMU_F_CBID, 4, 16},   {EMU_F_START, 8, 24},
    {EMU_F_END, 8, 32}, {EMU_F_PROCESS, 4, 40},    {EMU_F_THREAD, 4, 44},
};

/* cnpapi_CallbackData [I]: CUPTI's shape (the callback API is not what the tracer uses). */
static const emu_field_at cnpapi_callback_data[] = {
    {EMU_F_CB_SITE, 4, 0},
    {EMU_F_CB_FUNCTION_NAME, 8, 8},
    {EMU_F_CORRELATION, 8, 16},
};

static const emu_vendor emu_cnpapi_vendor = {
    .name = "cnpapi",
    .result_prefix = "CNPAPI_",
    .api_version = 0, /* CNPAPI has no GetVersion (cnpapiGetLibVersion gives major, minor, patch) */
    /* cnpapiActivityType [H-copy]: KERNEL 1, CNDRV_API 3, CNRT_API 4, MEMCPY 9, MEMSET 10,
     * EXTERNAL_CORRELATION 27, SIZE 29. The runtime calls are written as CNDrv API records
     * (the layer whose correlation ids the device records carry). */
    .kind = {.memcpy = 9,
             .memset = 10,
             .kernel = 1,
             .driver = 0,
             .runtime = 3,
             .concurrent_kernel = 0,
             .external_correlation = 27,
             .max_valid = 28},
    .external_kind_custom0 = 2, /* INVALID 0, UNKNOWN 1, CUSTOM0 2, CUSTOM1 3, CUSTOM2 4 [H-copy] */
    .external_kind_limit = 5,
    .callback_domain_runtime = 1,
    .callback_domain_limit = 8,
    .callback_site_enter = 0, /* CNPAPI_API_ENTER 0, CNPAPI_API_EXIT 1 [H-copy] */
    .callback_site_exit = 1,
    .cbid_limit = 512,
    .result = {.success = CNPAPI_SUCCESS,
               .invalid_parameter = CNPAPI_ERROR_INVALID_ARGUMENT,
               .invalid_operation = CNPAPI_ERROR_UNKNOWN,
               .max_limit_reached = CNPAPI_ERROR_MAX_LIMIT_REACHED,
               .not_initialized = CNPAPI_ERROR_NOT_INITIALIZED,
               .queue_empty = CNPAPI_ERROR_UNKNOWN,
               .invalid_kind = CNPAPI_ERROR_INVALID_ARGUMENT,
               .multiple_subscribers = CNPAPI_ERROR_ALREADY_IN_USE,
               .unknown = CNPAPI_ERROR_UNKNOWN},
    .kernel = EMU_LAYOUT("cnpapiActivityKernel", 120, cnpapi_kernel),
    .memcpy = EMU_LAYOUT("cnpapiActivityMemcpy", 104, cnpapi_memcpy),
    .memset = EMU_LAYOUT("cnpapiActivityMemset", 104, cnpapi_memset),
    .api = EMU_LAYOUT("cnpapiActivityAPI", 56, cnpapi_api),
    .external_correlation = EMU_LAYOUT("cnpapiActivityExternalCorrelation", 24, emu_u64_external_correlation_fields),
    .callback_data = EMU_LAYOUT("cnpapi_CallbackData", 24, cnpapi_callback_data),
    .copy_kind = {0, 1, 2, 3}, /* cnpapiActivityMemcpyType [H-copy]: HTOD 1, DTOH 2, DTOD 3 */
    .src_memory_kind = {0, 0, 0, 0},
    .dst_memory_kind = {0, 0, 0, 0},
    .memset_memory_kind = 0,
    .memcpy_flags_sync = 0,  /* CNPAPI_ACTIVITY_FLAG_NONE [H-copy] */
    .memset_flags_async = 1, /* CNPAPI_ACTIVITY_FLAG_MEMSET_ASYNC [H-copy] */
    .malformed_style = EMU_MALFORMED_END_BEFORE_START,
    .cbid = EMU_U64_CHOSEN_CBIDS, /* [I] the same placeholders as src/backends/cnpapi.c's names */
    .api_name =
        {
            /* The CNDrv API's names [I: spellings as public code and Cambricon's docs use them;
         * cnInvokeKernel and cnMemcpyAsync [U] as CNPAPI_CNDRV_TRACE_CBID_ names]. */
            [WL_CALL_GET_DEVICE] = "cnCtxGetDevice",
            [WL_CALL_GET_DEVICE_COUNT] = "cnDeviceGetCount",
            [WL_CALL_GET_DEVICE_PROPERTIES] = "cnDeviceGetAttribute",
            [WL_CALL_SET_DEVICE] = "cnCtxSetCurrent",
            [WL_CALL_MALLOC] = "cnMalloc",
            [WL_CALL_FREE] = "cnFree",
            [WL_CALL_EVENT_RECORD] = "cnPlaceNotifier",
            [WL_CALL_LAUNCH] = "cnInvokeKernel",
            [WL_CALL_MEMCPY] = "cnMemcpy",
            [WL_CALL_MEMSET] = "cnMemsetD8Async",
            [WL_CALL_SYNC_STREAM] = "cnQueueSync",
            [WL_CALL_SYNC_DEVICE] = "cnCtxSync",
        },
    .injection_env = NULL, /* [I]: no injection hook is known */
    /* The device clock stands apart from the host's by a fixed gap [U: third-party code
     * measures cnpapiGetTimestamp() against the host clock once and adds the difference]. */
    .clock_epoch_ns = 1600000000000000000,
    .clock_rate = 1.0,
    .faults_supported = EMU_FAULT_ZERO_TIME | EMU_FAULT_CLOCK | EMU_FAULT_MALFORMED | EMU_FAULT_SMALL_BUFFER,
};

/* ---- the exported API, CNPAPI's signatures [H-copy] ---- */

typedef void (*cnpapi_request_fn)(uint64_t **buffer, size_t *size, size_t *max_records);
typedef void (*cnpapi_complete_fn)(uint64_t *buffer, size_t size, size_t valid_size);

static _Atomic int g_initialised; /* cnpapiInit was called: nothing else answers before */

__attribute__((constructor)) static void cnpapi_emu_load(void)
{
    emu_install(&emu_cnpapi_vendor);
}

EMU_EXPORT emu_result cnpapiInit(void);
EMU_EXPORT emu_result cnpapiRelease(void);
EMU_EXPORT emu_result cnpapiGetResultString(emu_result result, const char **str);
EMU_EXPORT uint64_t cnpapiGetTimestamp(void);
EMU_EXPORT emu_result cnpapiActivityRegisterCallbacks(cnpapi_request_fn requested, cnpapi_complete_fn completed);
EMU_EXPORT emu_result cnpapiActivityEnable(int type);
EMU_EXPORT emu_result cnpapiActivityDisable(int type);
EMU_EXPORT emu_result cnpapiActivityGetNextRecord(void *buffer, size_t valid_size, void **record);
EMU_EXPORT emu_result cnpapiActivityFlushAll(void);
EMU_EXPORT emu_result cnpapiActivityPushExternalCorrelationId(int type, uint64_t id);
EMU_EXPORT emu_result cnpapiActivityPopExternalCorrelationId(int type, uint64_t *last_id);

EMU_EXPORT emu_result cnpapiInit(void)
{
    g_initialised = 1;
    return CNPAPI_SUCCESS;
}

EMU_EXPORT emu_result cnpapiRelease(void)
{
    return CNPAPI_SUCCESS;
}

EMU_EXPORT emu_result cnpapiGetResultString(emu_result result, const char **str)
{
    return emu_result_string(result, str);
}

EMU_EXPORT uint64_t cnpapiGetTimestamp(void)
{
    uint64_t ts = 0;
    emu_get_timestamp(&ts);
    return ts;
}

EMU_EXPORT emu_result cnpapiActivityRegisterCallbacks(cnpapi_request_fn requested, cnpapi_complete_fn completed)
{
    if (!g_initialised)
        return CNPAPI_ERROR_NOT_INITIALIZED;
    /* uint64_t ** and uint8_t ** buffers: the same pointer, as the library hands them. */
    emu_buffer_request_fn request;
    emu_buffer_complete3_fn complete;
    memcpy(&request, &requested, sizeof request);
    memcpy(&complete, &completed, sizeof complete);
    return emu_register_buffers3(request, complete);
}

EMU_EXPORT emu_result cnpapiActivityEnable(int type)
{
    return g_initialised ? emu_activity_enable(type, 1) : CNPAPI_ERROR_NOT_INITIALIZED;
}

EMU_EXPORT emu_result cnpapiActivityDisable(int type)
{
    return g_initialised ? emu_activity_enable(type, 0) : CNPAPI_ERROR_NOT_INITIALIZED;
}

EMU_EXPORT emu_result cnpapiActivityGetNextRecord(void *buffer, size_t valid_size, void **record)
{
    return emu_next_record(buffer, valid_size, record);
}

EMU_EXPORT emu_result cnpapiActivityFlushAll(void)
{
    return emu_flush_all(1);
}

EMU_EXPORT emu_result cnpapiActivityPushExternalCorrelationId(int type, uint64_t id)
{
    return emu_push_external(type, id);
}

EMU_EXPORT emu_result cnpapiActivityPopExternalCorrelationId(int type, uint64_t *last_id)
{
    return emu_pop_external(type, last_id);
}
