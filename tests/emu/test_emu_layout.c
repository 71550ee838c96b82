/* test_emu_layout.c: the emulators' vendor tables against the real CUPTI headers.
 *
 * Built only where the CUDA toolkit's cupti_activity.h is installed (else
 * test_emu_layout_skip.c reports a skip). Every {field, offset, width} of the CUPTI
 * table must equal offsetof/sizeof of the member it stands for, every member listed
 * here must be in the table, and the kind, result, domain and callback-id numbers must
 * equal the header's enumerators. The MetaX table's records that vendor-abi.md calls
 * identical to CUPTI's (or sharing its prefix) are checked against the same headers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <cupti_result.h>
#include <cupti_runtime_cbid.h>
#include <cupti_version.h>

#include "emu_vendors.h"

typedef struct member {
    int field;
    const char *name;
    size_t offset, size;
} member;

#define M(T, F, m)                                 \
    {                                              \
        F, #m, offsetof(T, m), sizeof(((T *)0)->m) \
    }

static const member kernel10[] = {
    M(CUpti_ActivityKernel10, EMU_F_KIND, kind),
    M(CUpti_ActivityKernel10, EMU_F_REGISTERS, registersPerThread),
    M(CUpti_ActivityKernel10, EMU_F_START, start),
    M(CUpti_ActivityKernel10, EMU_F_END, end),
    M(CUpti_ActivityKernel10, EMU_F_COMPLETED, completed),
    M(CUpti_ActivityKernel10, EMU_F_DEVICE, deviceId),
    M(CUpti_ActivityKernel10, EMU_F_CONTEXT, contextId),
    M(CUpti_ActivityKernel10, EMU_F_STREAM, streamId),
    M(CUpti_ActivityKernel10, EMU_F_GRID_X, gridX),
    M(CUpti_ActivityKernel10, EMU_F_GRID_Y, gridY),
    M(CUpti_ActivityKernel10, EMU_F_GRID_Z, gridZ),
    M(CUpti_ActivityKernel10, EMU_F_BLOCK_X, blockX),
    M(CUpti_ActivityKernel10, EMU_F_BLOCK_Y, blockY),
    M(CUpti_ActivityKernel10, EMU_F_BLOCK_Z, blockZ),
    M(CUpti_ActivityKernel10, EMU_F_STATIC_SMEM, staticSharedMemory),
    M(CUpti_ActivityKernel10, EMU_F_DYNAMIC_SMEM, dynamicSharedMemory),
    M(CUpti_ActivityKernel10, EMU_F_CORRELATION, correlationId),
    M(CUpti_ActivityKernel10, EMU_F_GRID_ID, gridId),
    M(CUpti_ActivityKernel10, EMU_F_NAME, name),
    M(CUpti_ActivityKernel10, EMU_F_QUEUED, queued),
    M(CUpti_ActivityKernel10, EMU_F_SUBMITTED, submitted),
};

static const member memcpy6[] = {
    M(CUpti_ActivityMemcpy6, EMU_F_KIND, kind),
    M(CUpti_ActivityMemcpy6, EMU_F_COPY_KIND, copyKind),
    M(CUpti_ActivityMemcpy6, EMU_F_SRC_KIND, srcKind),
    M(CUpti_ActivityMemcpy6, EMU_F_DST_KIND, dstKind),
    M(CUpti_ActivityMemcpy6, EMU_F_FLAGS, flags),
    M(CUpti_ActivityMemcpy6, EMU_F_BYTES, bytes),
    M(CUpti_ActivityMemcpy6, EMU_F_START, start),
    M(CUpti_ActivityMemcpy6, EMU_F_END, end),
    M(CUpti_ActivityMemcpy6, EMU_F_DEVICE, deviceId),
    M(CUpti_ActivityMemcpy6, EMU_F_CONTEXT, contextId),
    M(CUpti_ActivityMemcpy6, EMU_F_STREAM, streamId),
    M(CUpti_ActivityMemcpy6, EMU_F_CORRELATION, correlationId),
    M(CUpti_ActivityMemcpy6, EMU_F_RUNTIME_CORRELATION, runtimeCorrelationId),
};

static const member memset4[] = {
    M(CUpti_ActivityMemset4, EMU_F_KIND, kind),
    M(CUpti_ActivityMemset4, EMU_F_VALUE, value),
    M(CUpti_ActivityMemset4, EMU_F_BYTES, bytes),
    M(CUpti_ActivityMemset4, EMU_F_START, start),
    M(CUpti_ActivityMemset4, EMU_F_END, end),
    M(CUpti_ActivityMemset4, EMU_F_DEVICE, deviceId),
    M(CUpti_ActivityMemset4, EMU_F_CONTEXT, contextId),
    M(CUpti_ActivityMemset4, EMU_F_STREAM, streamId),
    M(CUpti_ActivityMemset4, EMU_F_CORRELATION, correlationId),
    M(CUpti_ActivityMemset4, EMU_F_FLAGS, flags),
    M(CUpti_ActivityMemset4, EMU_F_MEMORY_KIND, memoryKind),
};

static const member api[] = {
    M(CUpti_ActivityAPI, EMU_F_KIND, kind),
    M(CUpti_ActivityAPI, EMU_F_CBID, cbid),
    M(CUpti_ActivityAPI, EMU_F_START, start),
    M(CUpti_ActivityAPI, EMU_F_END, end),
    M(CUpti_ActivityAPI, EMU_F_PROCESS, processId),
    M(CUpti_ActivityAPI, EMU_F_THREAD, threadId),
    M(CUpti_ActivityAPI, EMU_F_CORRELATION, correlationId),
    M(CUpti_ActivityAPI, EMU_F_RETURN_VALUE, returnValue),
};

static const member external_correlation[] = {
    M(CUpti_ActivityExternalCorrelation, EMU_F_KIND, kind),
    M(CUpti_ActivityExternalCorrelation, EMU_F_EXTERNAL_KIND, externalKind),
    M(CUpti_ActivityExternalCorrelation, EMU_F_EXTERNAL_ID, externalId),
    M(CUpti_ActivityExternalCorrelation, EMU_F_CORRELATION, correlationId),
};

static const member callback_data[] = {
    M(CUpti_CallbackData, EMU_F_CB_SITE, callbackSite),
    M(CUpti_CallbackData, EMU_F_CB_FUNCTION_NAME, functionName),
    M(CUpti_CallbackData, EMU_F_CB_FUNCTION_PARAMS, functionParams),
    M(CUpti_CallbackData, EMU_F_CB_RETURN_VALUE_PTR, functionReturnValue),
    M(CUpti_CallbackData, EMU_F_CB_SYMBOL_NAME, symbolName),
    M(CUpti_CallbackData, EMU_F_CB_CONTEXT_PTR, context),
    M(CUpti_CallbackData, EMU_F_CB_CONTEXT_UID, contextUid),
    M(CUpti_CallbackData, EMU_F_CB_CORRELATION_DATA, correlationData),
    M(CUpti_CallbackData, EMU_F_CORRELATION, correlationId),
};

static const emu_field_at *table_entry(const emu_layout *l, int field)
{
    for (uint32_t i = 0; i < l->nfields; i++) {
        if (l->fields[i].field == field)
            return &l->fields[i];
    }
    return NULL;
}

static const member *member_for(const member *ms, size_t n, int field)
{
    for (size_t i = 0; i < n; i++) {
        if (ms[i].field == field)
            return &ms[i];
    }
    return NULL;
}

/* Both directions: each table entry is a member at its offset and width, and each
 * member is in the table. */
static void check_layout(const emu_layout *l, size_t struct_size, const member *ms, size_t n)
{
    if (l->size != struct_size)
        fail_msg("%s: table size %u, sizeof %zu", l->name, (unsigned)l->size, struct_size);
    for (uint32_t i = 0; i < l->nfields; i++) {
        const emu_field_at *f = &l->fields[i];
        const member *m = member_for(ms, n, f->field);
        if (!m)
            fail_msg("%s: table field %u has no member in this test", l->name, (unsigned)f->field);
        if (f->offset != m->offset || f->width != m->size)
            fail_msg("%s.%s: table says @%u width %u, header says @%zu width %zu", l->name, m->name,
                     (unsigned)f->offset, (unsigned)f->width, m->offset, m->size);
    }
    for (size_t i = 0; i < n; i++) {
        if (!table_entry(l, ms[i].field))
            fail_msg("%s.%s is missing from the table", l->name, ms[i].name);
    }
}

#define CHECK_LAYOUT(layout, T, ms) check_layout(&(layout), sizeof(T), ms, sizeof(ms) / sizeof((ms)[0]))

/* One direction only, for MetaX records that share CUPTI's prefix but not its size:
 * each table entry is the CUPTI member at its offset and width, below prefix_end. */
static void check_prefix(const emu_layout *l, const member *ms, size_t n, size_t prefix_end)
{
    for (uint32_t i = 0; i < l->nfields; i++) {
        const emu_field_at *f = &l->fields[i];
        const member *m = member_for(ms, n, f->field);
        if (!m)
            fail_msg("%s: table field %u has no CUPTI member", l->name, (unsigned)f->field);
        if (f->offset != m->offset || f->width != m->size || f->offset + f->width > prefix_end)
            fail_msg("%s.%s: table says @%u width %u, CUPTI has @%zu width %zu (prefix ends at %zu)", l->name, m->name,
                     (unsigned)f->offset, (unsigned)f->width, m->offset, m->size, prefix_end);
    }
}

#define CHECK_PREFIX(layout, ms, end) check_prefix(&(layout), ms, sizeof(ms) / sizeof((ms)[0]), end)

static void test_cupti_kernel10_layout(void **state)
{
    (void)state;
    CHECK_LAYOUT(emu_cupti_vendor.kernel, CUpti_ActivityKernel10, kernel10);
}

static void test_cupti_memcpy6_layout(void **state)
{
    (void)state;
    CHECK_LAYOUT(emu_cupti_vendor.memcpy, CUpti_ActivityMemcpy6, memcpy6);
}

static void test_cupti_memset4_layout(void **state)
{
    (void)state;
    CHECK_LAYOUT(emu_cupti_vendor.memset, CUpti_ActivityMemset4, memset4);
}

static void test_cupti_api_layout(void **state)
{
    (void)state;
    CHECK_LAYOUT(emu_cupti_vendor.api, CUpti_ActivityAPI, api);
}

static void test_cupti_external_correlation_layout(void **state)
{
    (void)state;
    CHECK_LAYOUT(emu_cupti_vendor.external_correlation, CUpti_ActivityExternalCorrelation, external_correlation);
}

static void test_cupti_callback_data_layout(void **state)
{
    (void)state;
    CHECK_LAYOUT(emu_cupti_vendor.callback_data, CUpti_CallbackData, callback_data);
}

static void test_cupti_numbers_match_the_enumerators(void **state)
{
    const emu_vendor *v = &emu_cupti_vendor;
    (void)state;
    assert_int_equal(v->api_version, CUPTI_API_VERSION);
    assert_int_equal(v->kind.memcpy, CUPTI_ACTIVITY_KIND_MEMCPY);
    assert_int_equal(v->kind.memset, CUPTI_ACTIVITY_KIND_MEMSET);
    assert_int_equal(v->kind.kernel, CUPTI_ACTIVITY_KIND_KERNEL);
    assert_int_equal(v->kind.driver, CUPTI_ACTIVITY_KIND_DRIVER);
    assert_int_equal(v->kind.runtime, CUPTI_ACTIVITY_KIND_RUNTIME);
    assert_int_equal(v->kind.concurrent_kernel, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    assert_int_equal(v->kind.external_correlation, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
    assert_int_equal(v->kind.max_valid, CUPTI_ACTIVITY_KIND_COUNT - 1);
    assert_true(v->bogus_kind >= CUPTI_ACTIVITY_KIND_COUNT);
    assert_int_equal(v->external_kind_custom0, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
    assert_int_equal(v->external_kind_limit, CUPTI_EXTERNAL_CORRELATION_KIND_SIZE);
    assert_int_equal(v->callback_domain_runtime, CUPTI_CB_DOMAIN_RUNTIME_API);
    assert_int_equal(v->callback_domain_limit, CUPTI_CB_DOMAIN_SIZE);
    assert_int_equal(v->callback_site_enter, CUPTI_API_ENTER);
    assert_int_equal(v->callback_site_exit, CUPTI_API_EXIT);
    assert_int_equal(v->cbid_limit, CUPTI_RUNTIME_TRACE_CBID_SIZE);
    assert_int_equal(v->result.success, CUPTI_SUCCESS);
    assert_int_equal(v->result.invalid_parameter, CUPTI_ERROR_INVALID_PARAMETER);
    assert_int_equal(v->result.invalid_operation, CUPTI_ERROR_INVALID_OPERATION);
    assert_int_equal(v->result.max_limit_reached, CUPTI_ERROR_MAX_LIMIT_REACHED);
    assert_int_equal(v->result.not_initialized, CUPTI_ERROR_NOT_INITIALIZED);
    assert_int_equal(v->result.queue_empty, CUPTI_ERROR_QUEUE_EMPTY);
    assert_int_equal(v->result.invalid_kind, CUPTI_ERROR_INVALID_KIND);
    assert_int_equal(v->result.multiple_subscribers, CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
    assert_int_equal(v->result.unknown, CUPTI_ERROR_UNKNOWN);
    assert_int_equal(v->copy_kind[WL_COPY_HTOD], CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
    assert_int_equal(v->copy_kind[WL_COPY_DTOH], CUPTI_ACTIVITY_MEMCPY_KIND_DTOH);
    assert_int_equal(v->copy_kind[WL_COPY_DTOD], CUPTI_ACTIVITY_MEMCPY_KIND_DTOD);
    assert_int_equal(v->src_memory_kind[WL_COPY_HTOD], CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE);
    assert_int_equal(v->dst_memory_kind[WL_COPY_HTOD], CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
    assert_int_equal(v->memset_memory_kind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
    assert_int_equal(v->memset_flags_async, CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC);
}

static void test_cupti_callback_ids_match_the_enumerators(void **state)
{
    const uint32_t *cbid = emu_cupti_vendor.cbid;
    (void)state;
    assert_int_equal(cbid[WL_CALL_GET_DEVICE], CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020);
    assert_int_equal(cbid[WL_CALL_GET_DEVICE_COUNT], CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020);
    assert_int_equal(cbid[WL_CALL_GET_DEVICE_PROPERTIES], CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceProperties_v12000);
    assert_int_equal(cbid[WL_CALL_SET_DEVICE], CUPTI_RUNTIME_TRACE_CBID_cudaSetDevice_v3020);
    assert_int_equal(cbid[WL_CALL_MALLOC], CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020);
    assert_int_equal(cbid[WL_CALL_FREE], CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020);
    assert_int_equal(cbid[WL_CALL_EVENT_RECORD], CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020);
    assert_int_equal(cbid[WL_CALL_LAUNCH], CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
    assert_int_equal(cbid[WL_CALL_MEMCPY], CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020);
    assert_int_equal(cbid[WL_CALL_MEMSET], CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020);
    assert_int_equal(cbid[WL_CALL_SYNC_STREAM], CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020);
    assert_int_equal(cbid[WL_CALL_SYNC_DEVICE], CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020);
}

/* MetaX MCPTI: the records vendor-abi.md calls identical to CUPTI's, or sharing its prefix. */
static void test_mcpti_kernel8_shares_the_cupti_prefix_through_name(void **state)
{
    (void)state;
    assert_int_equal(emu_mcpti_vendor.kernel.size, 200);
    CHECK_PREFIX(emu_mcpti_vendor.kernel, kernel10, offsetof(CUpti_ActivityKernel10, name) + sizeof(void *));
}

static void test_mcpti_memcpy5_and_memset4_share_the_cupti_layouts(void **state)
{
    (void)state;
    assert_int_equal(emu_mcpti_vendor.memcpy.size, 88);
    CHECK_PREFIX(emu_mcpti_vendor.memcpy, memcpy6, 88);
    CHECK_LAYOUT(emu_mcpti_vendor.memset, CUpti_ActivityMemset4, memset4);
}

static void test_mcpti_api_external_correlation_and_callback_data_are_cupti_layouts(void **state)
{
    (void)state;
    CHECK_LAYOUT(emu_mcpti_vendor.api, CUpti_ActivityAPI, api);
    CHECK_LAYOUT(emu_mcpti_vendor.external_correlation, CUpti_ActivityExternalCorrelation, external_correlation);
    CHECK_LAYOUT(emu_mcpti_vendor.callback_data, CUpti_CallbackData, callback_data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cupti_kernel10_layout),
        cmocka_unit_test(test_cupti_memcpy6_layout),
        cmocka_unit_test(test_cupti_memset4_layout),
        cmocka_unit_test(test_cupti_api_layout),
        cmocka_unit_test(test_cupti_external_correlation_layout),
        cmocka_unit_test(test_cupti_callback_data_layout),
        cmocka_unit_test(test_cupti_numbers_match_the_enumerators),
        cmocka_unit_test(test_cupti_callback_ids_match_the_enumerators),
        cmocka_unit_test(test_mcpti_kernel8_shares_the_cupti_prefix_through_name),
        cmocka_unit_test(test_mcpti_memcpy5_and_memset4_share_the_cupti_layouts),
        cmocka_unit_test(test_mcpti_api_external_correlation_and_callback_data_are_cupti_layouts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
