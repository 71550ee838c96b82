/* test_cupti_layout.c: our CUPTI record mirrors (src/backends/pti_records.h) and the
 * CUPTI descriptor's numbers against the installed CUDA toolkit's own headers: sizeof
 * and the offset of every field the decoders read, the activity kinds, result codes,
 * CUSTOM0, memcpy kinds and the runtime callback ids. Built with -DDT_HAVE_CUPTI_HEADERS
 * and the toolkit's include directory when they exist; otherwise it says so and exits
 * 77 (skipped). */
#include <stddef.h>
#include <stdio.h>

#ifndef DT_HAVE_CUPTI_HEADERS
int main(void)
{
    puts("SKIPPED: CUDA toolkit headers not found (cupti_activity.h)");
    return 77;
}
#else
#include <cupti.h>
#include <string.h>

#include "backends/pti_family.h"
#include "backends/pti_records.h"

#define LAYOUT_THEIRS "the CUDA header's"
#include "layout_check.h"

#define KERNEL_PREFIX(T)                                                                      \
    CHECK_SAME_OFFSET(dt_cupti_kernel_prefix, kind, T, kind);                                 \
    CHECK_SAME_OFFSET(dt_cupti_kernel_prefix, registers_per_thread, T, registersPerThread);   \
    CHECK_SAME_OFFSET(dt_cupti_kernel_prefix, start, T, start);                               \
    CHECK_SAME_OFFSET(dt_cupti_kernel_prefix, end, T, end);                                   \
    CHECK_SAME_OFFSET(dt_cupti_kernel_prefix, completed, T, completed);                       \
    CHECK_SAME_OFFSET(dt_cupti_kernel_prefix, device_id, T, deviceId);                        \
    CHECK_SAME_OFFSET(dt_cupti_kernel_prefix, context_id, T, contextId);                      \
    CHECK_SAME_OFFSET(dt_cupti_kernel_prefix, stream_id, T, streamId);                        \
    CHECK_SAME_OFFSET(dt_cupti_kernel_prefix, grid_x, T, gridX);                              \
    CHECK_SAME_OFFSET(dt_cupti_kernel_prefix, grid_y, T, gridY);                              \
    CHECK_SAME_OFFSET(dt_cupti_kernel_prefix, grid_z, T, gridZ);                              \
    CHECK_SAME_OFFSET(dt_cupti_kernel_prefix, block_x, T, blockX);                            \
    CHECK_SAME_OFFSET(dt_cupti_kernel_prefix, block_y, T, blockY);                            \
    CHECK_SAME_OFFSET(dt_cupti_kernel_prefix, block_z, T, blockZ);                            \
    CHECK_SAME_OFFSET(dt_cupti_kernel_prefix, static_shared_memory, T, staticSharedMemory);   \
    CHECK_SAME_OFFSET(dt_cupti_kernel_prefix, dynamic_shared_memory, T, dynamicSharedMemory); \
    CHECK_SAME_OFFSET(dt_cupti_kernel_prefix, correlation_id, T, correlationId);              \
    CHECK_SAME_OFFSET(dt_cupti_kernel_prefix, grid_id, T, gridId);                            \
    CHECK_SAME_OFFSET(dt_cupti_kernel_prefix, name, T, name);                                 \
    CHECK_SAME_OFFSET(dt_cupti_kernel_prefix, queued, T, queued);                             \
    CHECK_SAME_OFFSET(dt_cupti_kernel_prefix, submitted, T, submitted)

#define MEMCPY_PREFIX(T)                                                 \
    CHECK_SAME_OFFSET(dt_cupti_memcpy_prefix, kind, T, kind);            \
    CHECK_SAME_OFFSET(dt_cupti_memcpy_prefix, copy_kind, T, copyKind);   \
    CHECK_SAME_OFFSET(dt_cupti_memcpy_prefix, src_kind, T, srcKind);     \
    CHECK_SAME_OFFSET(dt_cupti_memcpy_prefix, dst_kind, T, dstKind);     \
    CHECK_SAME_OFFSET(dt_cupti_memcpy_prefix, flags, T, flags);          \
    CHECK_SAME_OFFSET(dt_cupti_memcpy_prefix, bytes, T, bytes);          \
    CHECK_SAME_OFFSET(dt_cupti_memcpy_prefix, start, T, start);          \
    CHECK_SAME_OFFSET(dt_cupti_memcpy_prefix, end, T, end);              \
    CHECK_SAME_OFFSET(dt_cupti_memcpy_prefix, device_id, T, deviceId);   \
    CHECK_SAME_OFFSET(dt_cupti_memcpy_prefix, context_id, T, contextId); \
    CHECK_SAME_OFFSET(dt_cupti_memcpy_prefix, stream_id, T, streamId);   \
    CHECK_SAME_OFFSET(dt_cupti_memcpy_prefix, correlation_id, T, correlationId)

static void runtime_name(uint32_t cbid, const char *want)
{
    layout_checks++;
    if (cbid == 0 || cbid > DT_PTI_CUDA_NRUNTIME_NAMES || strcmp(dt_pti_cuda_runtime_names[cbid - 1].name, want) != 0 ||
        dt_pti_cuda_runtime_names[cbid - 1].cbid != cbid) {
        layout_failures++;
        fprintf(stderr, "FAIL: runtime cbid %u should be named %s\n", cbid, want);
    }
}

int main(void)
{
    /* records */
    CHECK_SAME_SIZE(dt_cupti_kernel9, CUpti_ActivityKernel9);
    CHECK_SAME_SIZE(dt_cupti_kernel10, CUpti_ActivityKernel10);
    KERNEL_PREFIX(CUpti_ActivityKernel9);
    KERNEL_PREFIX(CUpti_ActivityKernel10);
    CHECK_SAME_SIZE(dt_cupti_memcpy5, CUpti_ActivityMemcpy5);
    CHECK_SAME_SIZE(dt_cupti_memcpy6, CUpti_ActivityMemcpy6);
    MEMCPY_PREFIX(CUpti_ActivityMemcpy5);
    MEMCPY_PREFIX(CUpti_ActivityMemcpy6);
    CHECK_SAME_SIZE(dt_cupti_memset4, CUpti_ActivityMemset4);
    CHECK_SAME_OFFSET(dt_cupti_memset4, kind, CUpti_ActivityMemset4, kind);
    CHECK_SAME_OFFSET(dt_cupti_memset4, value, CUpti_ActivityMemset4, value);
    CHECK_SAME_OFFSET(dt_cupti_memset4, bytes, CUpti_ActivityMemset4, bytes);
    CHECK_SAME_OFFSET(dt_cupti_memset4, start, CUpti_ActivityMemset4, start);
    CHECK_SAME_OFFSET(dt_cupti_memset4, end, CUpti_ActivityMemset4, end);
    CHECK_SAME_OFFSET(dt_cupti_memset4, device_id, CUpti_ActivityMemset4, deviceId);
    CHECK_SAME_OFFSET(dt_cupti_memset4, context_id, CUpti_ActivityMemset4, contextId);
    CHECK_SAME_OFFSET(dt_cupti_memset4, stream_id, CUpti_ActivityMemset4, streamId);
    CHECK_SAME_OFFSET(dt_cupti_memset4, correlation_id, CUpti_ActivityMemset4, correlationId);
    CHECK_SAME_OFFSET(dt_cupti_memset4, flags, CUpti_ActivityMemset4, flags);
    CHECK_SAME_OFFSET(dt_cupti_memset4, memory_kind, CUpti_ActivityMemset4, memoryKind);
    CHECK_SAME_SIZE(dt_cupti_api, CUpti_ActivityAPI);
    CHECK_SAME_OFFSET(dt_cupti_api, kind, CUpti_ActivityAPI, kind);
    CHECK_SAME_OFFSET(dt_cupti_api, cbid, CUpti_ActivityAPI, cbid);
    CHECK_SAME_OFFSET(dt_cupti_api, start, CUpti_ActivityAPI, start);
    CHECK_SAME_OFFSET(dt_cupti_api, end, CUpti_ActivityAPI, end);
    CHECK_SAME_OFFSET(dt_cupti_api, process_id, CUpti_ActivityAPI, processId);
    CHECK_SAME_OFFSET(dt_cupti_api, thread_id, CUpti_ActivityAPI, threadId);
    CHECK_SAME_OFFSET(dt_cupti_api, correlation_id, CUpti_ActivityAPI, correlationId);
    CHECK_SAME_OFFSET(dt_cupti_api, return_value, CUpti_ActivityAPI, returnValue);
    CHECK_SAME_SIZE(dt_cupti_external_correlation, CUpti_ActivityExternalCorrelation);
    CHECK_SAME_OFFSET(dt_cupti_external_correlation, kind, CUpti_ActivityExternalCorrelation, kind);
    CHECK_SAME_OFFSET(dt_cupti_external_correlation, external_kind, CUpti_ActivityExternalCorrelation, externalKind);
    CHECK_SAME_OFFSET(dt_cupti_external_correlation, external_id, CUpti_ActivityExternalCorrelation, externalId);
    CHECK_SAME_OFFSET(dt_cupti_external_correlation, correlation_id, CUpti_ActivityExternalCorrelation, correlationId);

    /* the descriptor's numbers */
    const dt_pti_descriptor *d = &dt_pti_cupti_descriptor;
    CHECK_SAME_VALUE(d->kinds.memcpy, CUPTI_ACTIVITY_KIND_MEMCPY);
    CHECK_SAME_VALUE(d->kinds.memset, CUPTI_ACTIVITY_KIND_MEMSET);
    CHECK_SAME_VALUE(d->kinds.kernel, CUPTI_ACTIVITY_KIND_KERNEL);
    CHECK_SAME_VALUE(d->kinds.concurrent_kernel, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    CHECK_SAME_VALUE(d->kinds.runtime, CUPTI_ACTIVITY_KIND_RUNTIME);
    CHECK_SAME_VALUE(d->kinds.external_correlation, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
    CHECK_SAME_VALUE(d->results.success, CUPTI_SUCCESS);
    CHECK_SAME_VALUE(d->results.max_limit_reached, CUPTI_ERROR_MAX_LIMIT_REACHED);
    CHECK_SAME_VALUE(d->results.not_compatible, CUPTI_ERROR_NOT_COMPATIBLE);
    CHECK_SAME_VALUE(d->results.multiple_subscribers, CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
    CHECK_SAME_VALUE(d->external_kind_custom0, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
    CHECK_SAME_VALUE(DT_CUPTI_TIMESTAMP_UNKNOWN_ZERO, CUPTI_TIMESTAMP_UNKNOWN);
    /* memcpy kinds: the ones whose direction is unambiguous */
    CHECK_SAME_VALUE(d->copy_kinds[CUPTI_ACTIVITY_MEMCPY_KIND_HTOD], DEVTRACE_COPY_HTOD);
    CHECK_SAME_VALUE(d->copy_kinds[CUPTI_ACTIVITY_MEMCPY_KIND_DTOH], DEVTRACE_COPY_DTOH);
    CHECK_SAME_VALUE(d->copy_kinds[CUPTI_ACTIVITY_MEMCPY_KIND_DTOD], DEVTRACE_COPY_DTOD);
    CHECK_SAME_VALUE(d->copy_kinds[CUPTI_ACTIVITY_MEMCPY_KIND_HTOH], DEVTRACE_COPY_HTOH);
    CHECK_SAME_VALUE(d->ncopy_kinds, CUPTI_ACTIVITY_MEMCPY_KIND_PTOP + 1);
    /* the runtime callback ids */
    CHECK_SAME_VALUE(DT_PTI_CUDA_NRUNTIME_NAMES, CUPTI_RUNTIME_TRACE_CBID_SIZE - 1);
    runtime_name(CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020, "cudaGetDeviceCount");
    runtime_name(CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, "cudaGetDevice");
    runtime_name(CUPTI_RUNTIME_TRACE_CBID_cudaSetDevice_v3020, "cudaSetDevice");
    runtime_name(CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceProperties_v12000, "cudaGetDeviceProperties");
    runtime_name(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, "cudaMalloc");
    runtime_name(CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, "cudaFree");
    runtime_name(CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020, "cudaEventRecord");
    runtime_name(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, "cudaMemcpy");
    runtime_name(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, "cudaMemcpyAsync");
    runtime_name(CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020, "cudaMemset");
    runtime_name(CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, "cudaMemsetAsync");
    runtime_name(CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, "cudaStreamSynchronize");
    runtime_name(CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, "cudaDeviceSynchronize");
    runtime_name(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel");
    runtime_name(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060, "cudaLaunchKernelExC");
    runtime_name(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_ptds_v7000, "cudaMemcpy_ptds");
    runtime_name(CUPTI_RUNTIME_TRACE_CBID_cudaDeviceGetP2PAtomicCapabilities_v13000,
                 "cudaDeviceGetP2PAtomicCapabilities");
    printf("%d checks against the CUDA headers (CUPTI_API_VERSION %d), %d failed\n", layout_checks, CUPTI_API_VERSION,
           layout_failures);
    return layout_failures ? 1 : 0;
}
#endif
