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

static int checks;

#define FIELD_SIZE(T, f) sizeof(((T *)0)->f)

/* The mirror's field sits where the header's does, with the same width. */
#define SAME_FIELD(ours, of, theirs, tf)                                                                            \
    _Static_assert(offsetof(ours, of) == offsetof(theirs, tf), #ours "." #of " vs " #theirs "." #tf ": offset");    \
    _Static_assert(FIELD_SIZE(ours, of) == FIELD_SIZE(theirs, tf), #ours "." #of " vs " #theirs "." #tf ": width"); \
    checks += 2
#define SAME_SIZE(ours, theirs)                                                            \
    _Static_assert(sizeof(ours) == sizeof(theirs), "sizeof " #ours " vs sizeof " #theirs); \
    checks++
#define SAME_VALUE(ours, theirs)                                                            \
    _Static_assert((long long)(ours) == (long long)(theirs), #ours " must equal " #theirs); \
    checks++

static void records(void)
{
    SAME_SIZE(dt_mspti_kernel, msptiActivityKernel);
    SAME_FIELD(dt_mspti_kernel, kind, msptiActivityKernel, kind);
    SAME_FIELD(dt_mspti_kernel, start, msptiActivityKernel, start);
    SAME_FIELD(dt_mspti_kernel, end, msptiActivityKernel, end);
    SAME_FIELD(dt_mspti_kernel, device_id, msptiActivityKernel, ds.deviceId);
    SAME_FIELD(dt_mspti_kernel, stream_id, msptiActivityKernel, ds.streamId);
    SAME_FIELD(dt_mspti_kernel, correlation_id, msptiActivityKernel, correlationId);
    SAME_FIELD(dt_mspti_kernel, type, msptiActivityKernel, type);
    SAME_FIELD(dt_mspti_kernel, name, msptiActivityKernel, name);

    SAME_SIZE(dt_mspti_api, msptiActivityApi);
    SAME_FIELD(dt_mspti_api, kind, msptiActivityApi, kind);
    SAME_FIELD(dt_mspti_api, start, msptiActivityApi, start);
    SAME_FIELD(dt_mspti_api, end, msptiActivityApi, end);
    SAME_FIELD(dt_mspti_api, process_id, msptiActivityApi, pt.processId);
    SAME_FIELD(dt_mspti_api, thread_id, msptiActivityApi, pt.threadId);
    SAME_FIELD(dt_mspti_api, correlation_id, msptiActivityApi, correlationId);
    SAME_FIELD(dt_mspti_api, name, msptiActivityApi, name);

    SAME_SIZE(dt_mspti_memset, msptiActivityMemset);
    SAME_FIELD(dt_mspti_memset, kind, msptiActivityMemset, kind);
    SAME_FIELD(dt_mspti_memset, value, msptiActivityMemset, value);
    SAME_FIELD(dt_mspti_memset, bytes, msptiActivityMemset, bytes);
    SAME_FIELD(dt_mspti_memset, start, msptiActivityMemset, start);
    SAME_FIELD(dt_mspti_memset, end, msptiActivityMemset, end);
    SAME_FIELD(dt_mspti_memset, device_id, msptiActivityMemset, deviceId);
    SAME_FIELD(dt_mspti_memset, stream_id, msptiActivityMemset, streamId);
    SAME_FIELD(dt_mspti_memset, correlation_id, msptiActivityMemset, correlationId);
    SAME_FIELD(dt_mspti_memset, is_async, msptiActivityMemset, isAsync);

    SAME_SIZE(dt_mspti_memcpy, msptiActivityMemcpy);
    SAME_FIELD(dt_mspti_memcpy, kind, msptiActivityMemcpy, kind);
    SAME_FIELD(dt_mspti_memcpy, copy_kind, msptiActivityMemcpy, copyKind);
    SAME_FIELD(dt_mspti_memcpy, bytes, msptiActivityMemcpy, bytes);
    SAME_FIELD(dt_mspti_memcpy, start, msptiActivityMemcpy, start);
    SAME_FIELD(dt_mspti_memcpy, end, msptiActivityMemcpy, end);
    SAME_FIELD(dt_mspti_memcpy, device_id, msptiActivityMemcpy, deviceId);
    SAME_FIELD(dt_mspti_memcpy, stream_id, msptiActivityMemcpy, streamId);
    SAME_FIELD(dt_mspti_memcpy, correlation_id, msptiActivityMemcpy, correlationId);
    SAME_FIELD(dt_mspti_memcpy, is_async, msptiActivityMemcpy, isAsync);

    SAME_SIZE(dt_mspti_external_correlation, msptiActivityExternalCorrelation);
    SAME_FIELD(dt_mspti_external_correlation, kind, msptiActivityExternalCorrelation, kind);
    SAME_FIELD(dt_mspti_external_correlation, external_kind, msptiActivityExternalCorrelation, externalKind);
    SAME_FIELD(dt_mspti_external_correlation, external_id, msptiActivityExternalCorrelation, externalId);
    SAME_FIELD(dt_mspti_external_correlation, correlation_id, msptiActivityExternalCorrelation, correlationId);

    SAME_SIZE(dt_mspti_hccl, msptiActivityHccl);
    SAME_FIELD(dt_mspti_hccl, kind, msptiActivityHccl, kind);
    SAME_FIELD(dt_mspti_hccl, start, msptiActivityHccl, start);
    SAME_FIELD(dt_mspti_hccl, end, msptiActivityHccl, end);
    SAME_FIELD(dt_mspti_hccl, device_id, msptiActivityHccl, ds.deviceId);
    SAME_FIELD(dt_mspti_hccl, stream_id, msptiActivityHccl, ds.streamId);
    SAME_FIELD(dt_mspti_hccl, bandwidth, msptiActivityHccl, bandWidth);
    SAME_FIELD(dt_mspti_hccl, name, msptiActivityHccl, name);
    SAME_FIELD(dt_mspti_hccl, comm_name, msptiActivityHccl, commName);

    SAME_SIZE(dt_mspti_communication, msptiActivityCommunication);
    SAME_FIELD(dt_mspti_communication, kind, msptiActivityCommunication, kind);
    SAME_FIELD(dt_mspti_communication, data_type, msptiActivityCommunication, dataType);
    SAME_FIELD(dt_mspti_communication, count, msptiActivityCommunication, count);
    SAME_FIELD(dt_mspti_communication, device_id, msptiActivityCommunication, ds.deviceId);
    SAME_FIELD(dt_mspti_communication, stream_id, msptiActivityCommunication, ds.streamId);
    SAME_FIELD(dt_mspti_communication, start, msptiActivityCommunication, start);
    SAME_FIELD(dt_mspti_communication, end, msptiActivityCommunication, end);
    SAME_FIELD(dt_mspti_communication, alg_type, msptiActivityCommunication, algType);
    SAME_FIELD(dt_mspti_communication, name, msptiActivityCommunication, name);
    SAME_FIELD(dt_mspti_communication, comm_name, msptiActivityCommunication, commName);
    SAME_FIELD(dt_mspti_communication, correlation_id, msptiActivityCommunication, correlationId);

    SAME_SIZE(dt_mspti_marker, msptiActivityMarker);
    SAME_FIELD(dt_mspti_marker, kind, msptiActivityMarker, kind);
    SAME_FIELD(dt_mspti_marker, flag, msptiActivityMarker, flag);
    SAME_FIELD(dt_mspti_marker, source_kind, msptiActivityMarker, sourceKind);
    SAME_FIELD(dt_mspti_marker, timestamp, msptiActivityMarker, timestamp);
    SAME_FIELD(dt_mspti_marker, id, msptiActivityMarker, id);
    SAME_FIELD(dt_mspti_marker, object_a, msptiActivityMarker, objectId.pt.processId);
    SAME_FIELD(dt_mspti_marker, object_b, msptiActivityMarker, objectId.pt.threadId);
    SAME_FIELD(dt_mspti_marker, object_a, msptiActivityMarker, objectId.ds.deviceId);
    SAME_FIELD(dt_mspti_marker, object_b, msptiActivityMarker, objectId.ds.streamId);
    SAME_FIELD(dt_mspti_marker, name, msptiActivityMarker, name);
    SAME_FIELD(dt_mspti_marker, domain, msptiActivityMarker, domain);

    SAME_SIZE(dt_mspti_memory, msptiActivityMemory);
    SAME_FIELD(dt_mspti_memory, kind, msptiActivityMemory, kind);
    SAME_FIELD(dt_mspti_memory, operation, msptiActivityMemory, memoryOperationType);
    SAME_FIELD(dt_mspti_memory, memory_kind, msptiActivityMemory, memoryKind);
    SAME_FIELD(dt_mspti_memory, correlation_id, msptiActivityMemory, correlationId);
    SAME_FIELD(dt_mspti_memory, start, msptiActivityMemory, start);
    SAME_FIELD(dt_mspti_memory, end, msptiActivityMemory, end);
    SAME_FIELD(dt_mspti_memory, address, msptiActivityMemory, address);
    SAME_FIELD(dt_mspti_memory, bytes, msptiActivityMemory, bytes);
    SAME_FIELD(dt_mspti_memory, process_id, msptiActivityMemory, processId);
    SAME_FIELD(dt_mspti_memory, device_id, msptiActivityMemory, deviceId);
    SAME_FIELD(dt_mspti_memory, stream_id, msptiActivityMemory, streamId);
}

static void numbers(void)
{
    /* Activity kinds devtrace enables or decodes. */
    SAME_VALUE(DT_MSPTI_KIND_MARKER, MSPTI_ACTIVITY_KIND_MARKER);
    SAME_VALUE(DT_MSPTI_KIND_KERNEL, MSPTI_ACTIVITY_KIND_KERNEL);
    SAME_VALUE(DT_MSPTI_KIND_HCCL, MSPTI_ACTIVITY_KIND_HCCL);
    SAME_VALUE(DT_MSPTI_KIND_MEMORY, MSPTI_ACTIVITY_KIND_MEMORY);
    SAME_VALUE(DT_MSPTI_KIND_COMMUNICATION, MSPTI_ACTIVITY_KIND_COMMUNICATION);
    SAME_VALUE(DT_MSPTI_KIND_API, MSPTI_ACTIVITY_KIND_API);
    SAME_VALUE(DT_MSPTI_KIND_MEMSET, MSPTI_ACTIVITY_KIND_MEMSET);
    SAME_VALUE(DT_MSPTI_KIND_MEMCPY, MSPTI_ACTIVITY_KIND_MEMCPY);
    SAME_VALUE(DT_MSPTI_KIND_EXTERNAL_CORRELATION, MSPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
    SAME_VALUE(DT_MSPTI_KIND_ACL_API, MSPTI_ACTIVITY_KIND_ACL_API);
    SAME_VALUE(DT_MSPTI_KIND_NODE_API, MSPTI_ACTIVITY_KIND_NODE_API);
    SAME_VALUE(DT_MSPTI_KIND_RUNTIME_API, MSPTI_ACTIVITY_KIND_RUNTIME_API);
    /* The kind field is the enum, 4 bytes, as every mirror reads it. */
    SAME_VALUE(sizeof(msptiActivityKind), sizeof(uint32_t));

    /* Result codes the engine tells apart. */
    SAME_VALUE(DT_MSPTI_SUCCESS, MSPTI_SUCCESS);
    SAME_VALUE(DT_MSPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, MSPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
    SAME_VALUE(DT_MSPTI_ERROR_MAX_LIMIT_REACHED, MSPTI_ERROR_MAX_LIMIT_REACHED);
    SAME_VALUE(DT_MSPTI_ERROR_WITHOUT_LD_PRELOAD, MSPTI_ERROR_WITHOUT_LD_PRELOAD);

    /* External correlation: CUSTOM0 is 2 (CUPTI's is 3). */
    SAME_VALUE(DT_MSPTI_EXTERNAL_KIND_CUSTOM0, MSPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);

    /* Memcpy kinds, the indices of the descriptor's direction table. */
    SAME_VALUE(DT_MSPTI_MEMCPY_KIND_UNKNOWN, MSPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN);
    SAME_VALUE(DT_MSPTI_MEMCPY_KIND_HTOH, MSPTI_ACTIVITY_MEMCPY_KIND_HTOH);
    SAME_VALUE(DT_MSPTI_MEMCPY_KIND_HTOD, MSPTI_ACTIVITY_MEMCPY_KIND_HTOD);
    SAME_VALUE(DT_MSPTI_MEMCPY_KIND_DTOH, MSPTI_ACTIVITY_MEMCPY_KIND_DTOH);
    SAME_VALUE(DT_MSPTI_MEMCPY_KIND_DTOD, MSPTI_ACTIVITY_MEMCPY_KIND_DTOD);
    SAME_VALUE(DT_MSPTI_MEMCPY_KIND_DEFAULT, MSPTI_ACTIVITY_MEMCPY_KIND_DEFAULT);

    /* Marker flags and sources, memory operations. */
    SAME_VALUE(DT_MSPTI_MARKER_INSTANTANEOUS, MSPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS);
    SAME_VALUE(DT_MSPTI_MARKER_START, MSPTI_ACTIVITY_FLAG_MARKER_START);
    SAME_VALUE(DT_MSPTI_MARKER_END, MSPTI_ACTIVITY_FLAG_MARKER_END);
    SAME_VALUE(DT_MSPTI_MARKER_INSTANTANEOUS_WITH_DEVICE, MSPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS_WITH_DEVICE);
    SAME_VALUE(DT_MSPTI_MARKER_START_WITH_DEVICE, MSPTI_ACTIVITY_FLAG_MARKER_START_WITH_DEVICE);
    SAME_VALUE(DT_MSPTI_MARKER_END_WITH_DEVICE, MSPTI_ACTIVITY_FLAG_MARKER_END_WITH_DEVICE);
    SAME_VALUE(DT_MSPTI_SOURCE_HOST, MSPTI_ACTIVITY_SOURCE_KIND_HOST);
    SAME_VALUE(DT_MSPTI_SOURCE_DEVICE, MSPTI_ACTIVITY_SOURCE_KIND_DEVICE);
    SAME_VALUE(DT_MSPTI_MEMORY_ALLOCATION, MSPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION);
    SAME_VALUE(DT_MSPTI_MEMORY_RELEASE, MSPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE);

    /* Communication data types, every one the decoder maps. */
    SAME_VALUE(DT_MSPTI_DTYPE_INT8, MSPTI_ACTIVITY_COMMUNICATION_INT8);
    SAME_VALUE(DT_MSPTI_DTYPE_INT16, MSPTI_ACTIVITY_COMMUNICATION_INT16);
    SAME_VALUE(DT_MSPTI_DTYPE_INT32, MSPTI_ACTIVITY_COMMUNICATION_INT32);
    SAME_VALUE(DT_MSPTI_DTYPE_FP16, MSPTI_ACTIVITY_COMMUNICATION_FP16);
    SAME_VALUE(DT_MSPTI_DTYPE_FP32, MSPTI_ACTIVITY_COMMUNICATION_FP32);
    SAME_VALUE(DT_MSPTI_DTYPE_INT64, MSPTI_ACTIVITY_COMMUNICATION_INT64);
    SAME_VALUE(DT_MSPTI_DTYPE_UINT64, MSPTI_ACTIVITY_COMMUNICATION_UINT64);
    SAME_VALUE(DT_MSPTI_DTYPE_UINT8, MSPTI_ACTIVITY_COMMUNICATION_UINT8);
    SAME_VALUE(DT_MSPTI_DTYPE_UINT16, MSPTI_ACTIVITY_COMMUNICATION_UINT16);
    SAME_VALUE(DT_MSPTI_DTYPE_UINT32, MSPTI_ACTIVITY_COMMUNICATION_UINT32);
    SAME_VALUE(DT_MSPTI_DTYPE_FP64, MSPTI_ACTIVITY_COMMUNICATION_FP64);
    SAME_VALUE(DT_MSPTI_DTYPE_BFP16, MSPTI_ACTIVITY_COMMUNICATION_BFP16);
    SAME_VALUE(DT_MSPTI_DTYPE_INT128, MSPTI_ACTIVITY_COMMUNICATION_INT128);
    SAME_VALUE(DT_MSPTI_DTYPE_HIF8, MSPTI_ACTIVITY_COMMUNICATION_HIF8);
    SAME_VALUE(DT_MSPTI_DTYPE_FP8E4M3, MSPTI_ACTIVITY_COMMUNICATION_FP8E4M3);
    SAME_VALUE(DT_MSPTI_DTYPE_FP8E5M2, MSPTI_ACTIVITY_COMMUNICATION_FP8E5M2);
    SAME_VALUE(DT_MSPTI_DTYPE_FP8E8M0, MSPTI_ACTIVITY_COMMUNICATION_FP8E8M0);
    SAME_VALUE(DT_MSPTI_DTYPE_INVALID, MSPTI_ACTIVITY_COMMUNICATION_INVALID_TYPE);

    /* The snapshot's kinds end at RUNTIME_API: 13 is the count, not an OVERHEAD kind (an older
     * note had OVERHEAD 13); devtrace enables nothing past RUNTIME_API. */
    SAME_VALUE(DT_MSPTI_KIND_RUNTIME_API + 1, MSPTI_ACTIVITY_KIND_COUNT);
}

int main(void)
{
    records();
    numbers();
    printf("MSPTI mirrors and numbers: %d facts checked at compile time against the MSPTI headers\n", checks);
    return 0;
}
#endif
