/* test_mspti_layout.c: devtrace's MSPTI mirrors (src/backends/mspti_records.h) against
 * MSPTI's own public headers (the snapshot of Ascend/mspti csrc/include under the shared
 * folder's third_party/, found through DEVTRACE_SHARED_DIR; never copied into this
 * repository, never included by devtrace's own sources).
 *
 * Every assertion is a _Static_assert: a mirror whose size, field offset or field width
 * differs from the header's, or a kind, enum value or result code that the header numbers
 * otherwise, fails the build of this test, and so the suite. Built without the headers it
 * says so and exits 77 (skipped). Run, it prints how many facts were checked. */
#include <stdio.h>

#ifndef DT_HAVE_MSPTI_HEADERS
int main(void)
{
    puts("SKIPPED: the MSPTI header snapshot was not found (DEVTRACE_SHARED_DIR/third_party/mspti/csrc/include)");
    return 77;
}
#else
#include <mspti.h>
#include <stddef.h>

#include "backends/mspti_records.h"
#include "layout_check.h"

static void records(void)
{
    ASSERT_SAME_SIZE(dt_mspti_kernel, msptiActivityKernel);
    ASSERT_SAME_FIELD(dt_mspti_kernel, kind, msptiActivityKernel, kind);
    ASSERT_SAME_FIELD(dt_mspti_kernel, start, msptiActivityKernel, start);
    ASSERT_SAME_FIELD(dt_mspti_kernel, end, msptiActivityKernel, end);
    ASSERT_SAME_FIELD(dt_mspti_kernel, device_id, msptiActivityKernel, ds.deviceId);
    ASSERT_SAME_FIELD(dt_mspti_kernel, stream_id, msptiActivityKernel, ds.streamId);
    ASSERT_SAME_FIELD(dt_mspti_kernel, correlation_id, msptiActivityKernel, correlationId);
    ASSERT_SAME_FIELD(dt_mspti_kernel, type, msptiActivityKernel, type);
    ASSERT_SAME_FIELD(dt_mspti_kernel, name, msptiActivityKernel, name);

    ASSERT_SAME_SIZE(dt_mspti_api, msptiActivityApi);
    ASSERT_SAME_FIELD(dt_mspti_api, kind, msptiActivityApi, kind);
    ASSERT_SAME_FIELD(dt_mspti_api, start, msptiActivityApi, start);
    ASSERT_SAME_FIELD(dt_mspti_api, end, msptiActivityApi, end);
    ASSERT_SAME_FIELD(dt_mspti_api, process_id, msptiActivityApi, pt.processId);
    ASSERT_SAME_FIELD(dt_mspti_api, thread_id, msptiActivityApi, pt.threadId);
    ASSERT_SAME_FIELD(dt_mspti_api, correlation_id, msptiActivityApi, correlationId);
    ASSERT_SAME_FIELD(dt_mspti_api, name, msptiActivityApi, name);

    ASSERT_SAME_SIZE(dt_mspti_memset, msptiActivityMemset);
    ASSERT_SAME_FIELD(dt_mspti_memset, kind, msptiActivityMemset, kind);
    ASSERT_SAME_FIELD(dt_mspti_memset, value, msptiActivityMemset, value);
    ASSERT_SAME_FIELD(dt_mspti_memset, bytes, msptiActivityMemset, bytes);
    ASSERT_SAME_FIELD(dt_mspti_memset, start, msptiActivityMemset, start);
    ASSERT_SAME_FIELD(dt_mspti_memset, end, msptiActivityMemset, end);
    ASSERT_SAME_FIELD(dt_mspti_memset, device_id, msptiActivityMemset, deviceId);
    ASSERT_SAME_FIELD(dt_mspti_memset, stream_id, msptiActivityMemset, streamId);
    ASSERT_SAME_FIELD(dt_mspti_memset, correlation_id, msptiActivityMemset, correlationId);
    ASSERT_SAME_FIELD(dt_mspti_memset, is_async, msptiActivityMemset, isAsync);

    ASSERT_SAME_SIZE(dt_mspti_memcpy, msptiActivityMemcpy);
    ASSERT_SAME_FIELD(dt_mspti_memcpy, kind, msptiActivityMemcpy, kind);
    ASSERT_SAME_FIELD(dt_mspti_memcpy, copy_kind, msptiActivityMemcpy, copyKind);
    ASSERT_SAME_FIELD(dt_mspti_memcpy, bytes, msptiActivityMemcpy, bytes);
    ASSERT_SAME_FIELD(dt_mspti_memcpy, start, msptiActivityMemcpy, start);
    ASSERT_SAME_FIELD(dt_mspti_memcpy, end, msptiActivityMemcpy, end);
    ASSERT_SAME_FIELD(dt_mspti_memcpy, device_id, msptiActivityMemcpy, deviceId);
    ASSERT_SAME_FIELD(dt_mspti_memcpy, stream_id, msptiActivityMemcpy, streamId);
    ASSERT_SAME_FIELD(dt_mspti_memcpy, correlation_id, msptiActivityMemcpy, correlationId);
    ASSERT_SAME_FIELD(dt_mspti_memcpy, is_async, msptiActivityMemcpy, isAsync);

    ASSERT_SAME_SIZE(dt_mspti_external_correlation, msptiActivityExternalCorrelation);
    ASSERT_SAME_FIELD(dt_mspti_external_correlation, kind, msptiActivityExternalCorrelation, kind);
    ASSERT_SAME_FIELD(dt_mspti_external_correlation, external_kind, msptiActivityExternalCorrelation, externalKind);
    ASSERT_SAME_FIELD(dt_mspti_external_correlation, external_id, msptiActivityExternalCorrelation, externalId);
    ASSERT_SAME_FIELD(dt_mspti_external_correlation, correlation_id, msptiActivityExternalCorrelation, correlationId);

    ASSERT_SAME_SIZE(dt_mspti_hccl, msptiActivityHccl);
    ASSERT_SAME_FIELD(dt_mspti_hccl, kind, msptiActivityHccl, kind);
    ASSERT_SAME_FIELD(dt_mspti_hccl, start, msptiActivityHccl, start);
    ASSERT_SAME_FIELD(dt_mspti_hccl, end, msptiActivityHccl, end);
    ASSERT_SAME_FIELD(dt_mspti_hccl, device_id, msptiActivityHccl, ds.deviceId);
    ASSERT_SAME_FIELD(dt_mspti_hccl, stream_id, msptiActivityHccl, ds.streamId);
    ASSERT_SAME_FIELD(dt_mspti_hccl, bandwidth, msptiActivityHccl, bandWidth);
    ASSERT_SAME_FIELD(dt_mspti_hccl, name, msptiActivityHccl, name);
    ASSERT_SAME_FIELD(dt_mspti_hccl, comm_name, msptiActivityHccl, commName);

    ASSERT_SAME_SIZE(dt_mspti_communication, msptiActivityCommunication);
    ASSERT_SAME_FIELD(dt_mspti_communication, kind, msptiActivityCommunication, kind);
    ASSERT_SAME_FIELD(dt_mspti_communication, data_type, msptiActivityCommunication, dataType);
    ASSERT_SAME_FIELD(dt_mspti_communication, count, msptiActivityCommunication, count);
    ASSERT_SAME_FIELD(dt_mspti_communication, device_id, msptiActivityCommunication, ds.deviceId);
    ASSERT_SAME_FIELD(dt_mspti_communication, stream_id, msptiActivityCommunication, ds.streamId);
    ASSERT_SAME_FIELD(dt_mspti_communication, start, msptiActivityCommunication, start);
    ASSERT_SAME_FIELD(dt_mspti_communication, end, msptiActivityCommunication, end);
    ASSERT_SAME_FIELD(dt_mspti_communication, alg_type, msptiActivityCommunication, algType);
    ASSERT_SAME_FIELD(dt_mspti_communication, name, msptiActivityCommunication, name);
    ASSERT_SAME_FIELD(dt_mspti_communication, comm_name, msptiActivityCommunication, commName);
    ASSERT_SAME_FIELD(dt_mspti_communication, correlation_id, msptiActivityCommunication, correlationId);

    ASSERT_SAME_SIZE(dt_mspti_marker, msptiActivityMarker);
    ASSERT_SAME_FIELD(dt_mspti_marker, kind, msptiActivityMarker, kind);
    ASSERT_SAME_FIELD(dt_mspti_marker, flag, msptiActivityMarker, flag);
    ASSERT_SAME_FIELD(dt_mspti_marker, source_kind, msptiActivityMarker, sourceKind);
    ASSERT_SAME_FIELD(dt_mspti_marker, timestamp, msptiActivityMarker, timestamp);
    ASSERT_SAME_FIELD(dt_mspti_marker, id, msptiActivityMarker, id);
    ASSERT_SAME_FIELD(dt_mspti_marker, object_a, msptiActivityMarker, objectId.pt.processId);
    ASSERT_SAME_FIELD(dt_mspti_marker, object_b, msptiActivityMarker, objectId.pt.threadId);
    ASSERT_SAME_FIELD(dt_mspti_marker, object_a, msptiActivityMarker, objectId.ds.deviceId);
    ASSERT_SAME_FIELD(dt_mspti_marker, object_b, msptiActivityMarker, objectId.ds.streamId);
    ASSERT_SAME_FIELD(dt_mspti_marker, name, msptiActivityMarker, name);
    ASSERT_SAME_FIELD(dt_mspti_marker, domain, msptiActivityMarker, domain);

    ASSERT_SAME_SIZE(dt_mspti_memory, msptiActivityMemory);
    ASSERT_SAME_FIELD(dt_mspti_memory, kind, msptiActivityMemory, kind);
    ASSERT_SAME_FIELD(dt_mspti_memory, operation, msptiActivityMemory, memoryOperationType);
    ASSERT_SAME_FIELD(dt_mspti_memory, memory_kind, msptiActivityMemory, memoryKind);
    ASSERT_SAME_FIELD(dt_mspti_memory, correlation_id, msptiActivityMemory, correlationId);
    ASSERT_SAME_FIELD(dt_mspti_memory, start, msptiActivityMemory, start);
    ASSERT_SAME_FIELD(dt_mspti_memory, end, msptiActivityMemory, end);
    ASSERT_SAME_FIELD(dt_mspti_memory, address, msptiActivityMemory, address);
    ASSERT_SAME_FIELD(dt_mspti_memory, bytes, msptiActivityMemory, bytes);
    ASSERT_SAME_FIELD(dt_mspti_memory, process_id, msptiActivityMemory, processId);
    ASSERT_SAME_FIELD(dt_mspti_memory, device_id, msptiActivityMemory, deviceId);
    ASSERT_SAME_FIELD(dt_mspti_memory, stream_id, msptiActivityMemory, streamId);
}

static void numbers(void)
{
    /* Activity kinds devtrace enables or decodes. */
    ASSERT_SAME_VALUE(DT_MSPTI_KIND_MARKER, MSPTI_ACTIVITY_KIND_MARKER);
    ASSERT_SAME_VALUE(DT_MSPTI_KIND_KERNEL, MSPTI_ACTIVITY_KIND_KERNEL);
    ASSERT_SAME_VALUE(DT_MSPTI_KIND_HCCL, MSPTI_ACTIVITY_KIND_HCCL);
    ASSERT_SAME_VALUE(DT_MSPTI_KIND_MEMORY, MSPTI_ACTIVITY_KIND_MEMORY);
    ASSERT_SAME_VALUE(DT_MSPTI_KIND_COMMUNICATION, MSPTI_ACTIVITY_KIND_COMMUNICATION);
    ASSERT_SAME_VALUE(DT_MSPTI_KIND_API, MSPTI_ACTIVITY_KIND_API);
    ASSERT_SAME_VALUE(DT_MSPTI_KIND_MEMSET, MSPTI_ACTIVITY_KIND_MEMSET);
    ASSERT_SAME_VALUE(DT_MSPTI_KIND_MEMCPY, MSPTI_ACTIVITY_KIND_MEMCPY);
    ASSERT_SAME_VALUE(DT_MSPTI_KIND_EXTERNAL_CORRELATION, MSPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
    ASSERT_SAME_VALUE(DT_MSPTI_KIND_ACL_API, MSPTI_ACTIVITY_KIND_ACL_API);
    ASSERT_SAME_VALUE(DT_MSPTI_KIND_NODE_API, MSPTI_ACTIVITY_KIND_NODE_API);
    ASSERT_SAME_VALUE(DT_MSPTI_KIND_RUNTIME_API, MSPTI_ACTIVITY_KIND_RUNTIME_API);
    /* The kind field is the enum, 4 bytes, as every mirror reads it. */
    ASSERT_SAME_VALUE(sizeof(msptiActivityKind), sizeof(uint32_t));

    /* Result codes the engine tells apart. */
    ASSERT_SAME_VALUE(DT_MSPTI_SUCCESS, MSPTI_SUCCESS);
    ASSERT_SAME_VALUE(DT_MSPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
                      MSPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
    ASSERT_SAME_VALUE(DT_MSPTI_ERROR_MAX_LIMIT_REACHED, MSPTI_ERROR_MAX_LIMIT_REACHED);
    ASSERT_SAME_VALUE(DT_MSPTI_ERROR_WITHOUT_LD_PRELOAD, MSPTI_ERROR_WITHOUT_LD_PRELOAD);

    /* External correlation: CUSTOM0 is 2 (CUPTI's is 3). */
    ASSERT_SAME_VALUE(DT_MSPTI_EXTERNAL_KIND_CUSTOM0, MSPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);

    /* Memcpy kinds, the indices of the descriptor's direction table. */
    ASSERT_SAME_VALUE(DT_MSPTI_MEMCPY_KIND_UNKNOWN, MSPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN);
    ASSERT_SAME_VALUE(DT_MSPTI_MEMCPY_KIND_HTOH, MSPTI_ACTIVITY_MEMCPY_KIND_HTOH);
    ASSERT_SAME_VALUE(DT_MSPTI_MEMCPY_KIND_HTOD, MSPTI_ACTIVITY_MEMCPY_KIND_HTOD);
    ASSERT_SAME_VALUE(DT_MSPTI_MEMCPY_KIND_DTOH, MSPTI_ACTIVITY_MEMCPY_KIND_DTOH);
    ASSERT_SAME_VALUE(DT_MSPTI_MEMCPY_KIND_DTOD, MSPTI_ACTIVITY_MEMCPY_KIND_DTOD);
    ASSERT_SAME_VALUE(DT_MSPTI_MEMCPY_KIND_DEFAULT, MSPTI_ACTIVITY_MEMCPY_KIND_DEFAULT);

    /* Marker flags and sources, memory operations. */
    ASSERT_SAME_VALUE(DT_MSPTI_MARKER_INSTANTANEOUS, MSPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS);
    ASSERT_SAME_VALUE(DT_MSPTI_MARKER_START, MSPTI_ACTIVITY_FLAG_MARKER_START);
    ASSERT_SAME_VALUE(DT_MSPTI_MARKER_END, MSPTI_ACTIVITY_FLAG_MARKER_END);
    ASSERT_SAME_VALUE(DT_MSPTI_MARKER_INSTANTANEOUS_WITH_DEVICE, MSPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS_WITH_DEVICE);
    ASSERT_SAME_VALUE(DT_MSPTI_MARKER_START_WITH_DEVICE, MSPTI_ACTIVITY_FLAG_MARKER_START_WITH_DEVICE);
    ASSERT_SAME_VALUE(DT_MSPTI_MARKER_END_WITH_DEVICE, MSPTI_ACTIVITY_FLAG_MARKER_END_WITH_DEVICE);
    ASSERT_SAME_VALUE(DT_MSPTI_SOURCE_HOST, MSPTI_ACTIVITY_SOURCE_KIND_HOST);
    ASSERT_SAME_VALUE(DT_MSPTI_SOURCE_DEVICE, MSPTI_ACTIVITY_SOURCE_KIND_DEVICE);
    ASSERT_SAME_VALUE(DT_MSPTI_MEMORY_ALLOCATION, MSPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION);
    ASSERT_SAME_VALUE(DT_MSPTI_MEMORY_RELEASE, MSPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE);

    /* Communication data types, every one the decoder maps. */
    ASSERT_SAME_VALUE(DT_MSPTI_DTYPE_INT8, MSPTI_ACTIVITY_COMMUNICATION_INT8);
    ASSERT_SAME_VALUE(DT_MSPTI_DTYPE_INT16, MSPTI_ACTIVITY_COMMUNICATION_INT16);
    ASSERT_SAME_VALUE(DT_MSPTI_DTYPE_INT32, MSPTI_ACTIVITY_COMMUNICATION_INT32);
    ASSERT_SAME_VALUE(DT_MSPTI_DTYPE_FP16, MSPTI_ACTIVITY_COMMUNICATION_FP16);
    ASSERT_SAME_VALUE(DT_MSPTI_DTYPE_FP32, MSPTI_ACTIVITY_COMMUNICATION_FP32);
    ASSERT_SAME_VALUE(DT_MSPTI_DTYPE_INT64, MSPTI_ACTIVITY_COMMUNICATION_INT64);
    ASSERT_SAME_VALUE(DT_MSPTI_DTYPE_UINT64, MSPTI_ACTIVITY_COMMUNICATION_UINT64);
    ASSERT_SAME_VALUE(DT_MSPTI_DTYPE_UINT8, MSPTI_ACTIVITY_COMMUNICATION_UINT8);
    ASSERT_SAME_VALUE(DT_MSPTI_DTYPE_UINT16, MSPTI_ACTIVITY_COMMUNICATION_UINT16);
    ASSERT_SAME_VALUE(DT_MSPTI_DTYPE_UINT32, MSPTI_ACTIVITY_COMMUNICATION_UINT32);
    ASSERT_SAME_VALUE(DT_MSPTI_DTYPE_FP64, MSPTI_ACTIVITY_COMMUNICATION_FP64);
    ASSERT_SAME_VALUE(DT_MSPTI_DTYPE_BFP16, MSPTI_ACTIVITY_COMMUNICATION_BFP16);
    ASSERT_SAME_VALUE(DT_MSPTI_DTYPE_INT128, MSPTI_ACTIVITY_COMMUNICATION_INT128);
    ASSERT_SAME_VALUE(DT_MSPTI_DTYPE_HIF8, MSPTI_ACTIVITY_COMMUNICATION_HIF8);
    ASSERT_SAME_VALUE(DT_MSPTI_DTYPE_FP8E4M3, MSPTI_ACTIVITY_COMMUNICATION_FP8E4M3);
    ASSERT_SAME_VALUE(DT_MSPTI_DTYPE_FP8E5M2, MSPTI_ACTIVITY_COMMUNICATION_FP8E5M2);
    ASSERT_SAME_VALUE(DT_MSPTI_DTYPE_FP8E8M0, MSPTI_ACTIVITY_COMMUNICATION_FP8E8M0);
    ASSERT_SAME_VALUE(DT_MSPTI_DTYPE_INVALID, MSPTI_ACTIVITY_COMMUNICATION_INVALID_TYPE);

    /* The snapshot's kinds end at RUNTIME_API: 13 is the count, not an OVERHEAD kind (an older
     * note had OVERHEAD 13); devtrace enables nothing past RUNTIME_API. */
    ASSERT_SAME_VALUE(DT_MSPTI_KIND_RUNTIME_API + 1, MSPTI_ACTIVITY_KIND_COUNT);
}

int main(void)
{
    records();
    numbers();
    printf("MSPTI mirrors and numbers: %d facts checked at compile time against the MSPTI headers\n", layout_checks);
    return 0;
}
#endif
