/* mspti.c: the Huawei Ascend MSPTI backend ("mspti"): the CUPTI-family engine with
 * Ascend's descriptor, MSPTI's own record decoders, and its walker (the engine's stride
 * walk, in place of the vendor's iterator).
 *
 * Facts ([H]: the Ascend/mspti csrc/include headers, ../shared/vendor-abi.md; the record
 * mirrors are in mspti_records.h, their decoders here):
 *  - libmspti.so in $ASCEND_HOME_PATH/{lib64,tools/mspti/lib64}, or under
 *    /usr/local/Ascend/ascend-toolkit/latest;
 *  - kinds KERNEL 2, API 3, MEMSET 6, MEMCPY 7, EXTERNAL_CORRELATION 8, and the API record
 *    levels ACL_API 10, NODE_API 11, RUNTIME_API 12 (all written as msptiActivityApi);
 *    NODE_API is missing from some CANN releases, so a refusal is only noted; API 3 (calls
 *    of no ACL/node/runtime level) is not enabled;
 *  - results SUCCESS 0, INVALID_PARAMETER 1, MULTIPLE_SUBSCRIBERS 2, MAX_LIMIT_REACHED 3,
 *    WITHOUT_LD_PRELOAD 6, INNER 999; external kind CUSTOM0 = 2 (CUPTI's is 3);
 *  - records are packed (a u64 at offset 4), sizes rounded to 8 by the headers'
 *    aligned(8): Kernel 56, Api 48, Memset 56, Memcpy 56, ExternalCorrelation 24;
 *    correlation ids are u64; API records carry a name string and no callback id (the
 *    trace writes no cbid); kernels carry no grid/block/registers (no such keys in the
 *    trace, and no occupancy); timestamps are host CLOCK_REALTIME ns;
 *  - the completion callback is (buffer, size, validSize): no context or stream;
 *  - msptiActivityGetNumDroppedRecords(void *context, uint32_t streamId, size_t *dropped)
 *    in the header read (CUPTI's shape);
 *  - without libmspti.so in $LD_PRELOAD, enabling MEMCPY/MEMSET (on runtimes without
 *    memory reporting) and the callback domains returns MSPTI_ERROR_WITHOUT_LD_PRELOAD (6):
 *    MEMCPY is the kind enabled to check that the library can trace, so a session that
 *    would lose its copies is unavailable, with the fix in the reason. `devtrace record
 *    --backend mspti` preloads the library itself (src/cli/record.c).
 * The mirrors and numbers are checked at compile time against MSPTI's public headers (the
 * snapshot of Ascend/mspti csrc/include at a38916051d9a10467591f05c564f2f80985ee292, by
 * tests/integration/test_mspti_layout.c); not run on Ascend hardware. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pti_decode.h"
#include "mspti_records.h"

/* Every record layout is version independent so far: one decoder per kind. */
static const dt_pti_layout mspti_layouts[] = {
    DT_PTI_LAYOUT_WHOLE(DT_MSPTI_KIND_KERNEL, dt_mspti_kernel, DEVTRACE_KIND_KERNEL, DT_MSPTI_DECODE_KERNEL,
                        "msptiActivityKernel"),
    DT_PTI_LAYOUT_WHOLE(DT_MSPTI_KIND_API, dt_mspti_api, DEVTRACE_KIND_RUNTIME, DT_MSPTI_DECODE_API,
                        "msptiActivityApi (API)"),
    DT_PTI_LAYOUT_WHOLE(DT_MSPTI_KIND_ACL_API, dt_mspti_api, DEVTRACE_KIND_RUNTIME, DT_MSPTI_DECODE_API,
                        "msptiActivityApi (ACL_API)"),
    DT_PTI_LAYOUT_WHOLE(DT_MSPTI_KIND_NODE_API, dt_mspti_api, DEVTRACE_KIND_RUNTIME, DT_MSPTI_DECODE_API,
                        "msptiActivityApi (NODE_API)"),
    DT_PTI_LAYOUT_WHOLE(DT_MSPTI_KIND_RUNTIME_API, dt_mspti_api, DEVTRACE_KIND_RUNTIME, DT_MSPTI_DECODE_API,
                        "msptiActivityApi (RUNTIME_API)"),
    DT_PTI_LAYOUT_WHOLE(DT_MSPTI_KIND_MEMSET, dt_mspti_memset, DEVTRACE_KIND_MEMSET, DT_MSPTI_DECODE_MEMSET,
                        "msptiActivityMemset"),
    DT_PTI_LAYOUT_WHOLE(DT_MSPTI_KIND_MEMCPY, dt_mspti_memcpy, DEVTRACE_KIND_MEMCPY, DT_MSPTI_DECODE_MEMCPY,
                        "msptiActivityMemcpy"),
    DT_PTI_LAYOUT_WHOLE(DT_MSPTI_KIND_EXTERNAL_CORRELATION, dt_mspti_external_correlation, DEVTRACE_KIND_EXTCORR,
                        DT_MSPTI_DECODE_EXTERNAL, "msptiActivityExternalCorrelation"),
    DT_PTI_LAYOUT_WHOLE(DT_MSPTI_KIND_HCCL, dt_mspti_hccl, DEVTRACE_KIND_KERNEL, DT_MSPTI_DECODE_HCCL,
                        "msptiActivityHccl"),
    DT_PTI_LAYOUT_WHOLE(DT_MSPTI_KIND_COMMUNICATION, dt_mspti_communication, DEVTRACE_KIND_KERNEL,
                        DT_MSPTI_DECODE_COMMUNICATION, "msptiActivityCommunication"),
    DT_PTI_LAYOUT_WHOLE(DT_MSPTI_KIND_MARKER, dt_mspti_marker, DEVTRACE_KIND_MARKER, DT_MSPTI_DECODE_MARKER,
                        "msptiActivityMarker"),
    DT_PTI_LAYOUT_WHOLE(DT_MSPTI_KIND_MEMORY, dt_mspti_memory, DEVTRACE_KIND_MEMORY, DT_MSPTI_DECODE_MEMORY,
                        "msptiActivityMemory"),
};

/* Where each decoder reads a string (the descriptor's vendor_pointers). */
#define MSPTI_POINTERS(id) [DT_MSPTI_DECODE_##id - DT_PTI_DECODE_VENDOR]
static const dt_pti_pointer_fields mspti_pointers[DT_MSPTI_DECODE_END - DT_PTI_DECODE_VENDOR] = {
    MSPTI_POINTERS(KERNEL) = {{offsetof(dt_mspti_kernel, type), offsetof(dt_mspti_kernel, name)}},
    MSPTI_POINTERS(API) = {{offsetof(dt_mspti_api, name)}},
    MSPTI_POINTERS(HCCL) = {{offsetof(dt_mspti_hccl, name), offsetof(dt_mspti_hccl, comm_name)}},
    MSPTI_POINTERS(COMMUNICATION) = {{offsetof(dt_mspti_communication, alg_type),
                                      offsetof(dt_mspti_communication, name),
                                      offsetof(dt_mspti_communication, comm_name)}},
    MSPTI_POINTERS(MARKER) = {{offsetof(dt_mspti_marker, name), offsetof(dt_mspti_marker, domain)}},
};
#undef MSPTI_POINTERS

/* msptiCommunicationDataType -> devtrace_dtype (HIF8 and the FP8 forms as FP8). */
static uint32_t mspti_dtype(uint32_t t)
{
    switch (t) {
    case DT_MSPTI_DTYPE_INT8:
        return DEVTRACE_DTYPE_INT8;
    case DT_MSPTI_DTYPE_INT16:
        return DEVTRACE_DTYPE_INT16;
    case DT_MSPTI_DTYPE_INT32:
        return DEVTRACE_DTYPE_INT32;
    case DT_MSPTI_DTYPE_FP16:
        return DEVTRACE_DTYPE_FP16;
    case DT_MSPTI_DTYPE_FP32:
        return DEVTRACE_DTYPE_FP32;
    case DT_MSPTI_DTYPE_INT64:
        return DEVTRACE_DTYPE_INT64;
    case DT_MSPTI_DTYPE_UINT64:
        return DEVTRACE_DTYPE_UINT64;
    case DT_MSPTI_DTYPE_UINT8:
        return DEVTRACE_DTYPE_UINT8;
    case DT_MSPTI_DTYPE_UINT16:
        return DEVTRACE_DTYPE_UINT16;
    case DT_MSPTI_DTYPE_UINT32:
        return DEVTRACE_DTYPE_UINT32;
    case DT_MSPTI_DTYPE_FP64:
        return DEVTRACE_DTYPE_FP64;
    case DT_MSPTI_DTYPE_BFP16:
        return DEVTRACE_DTYPE_BF16;
    case DT_MSPTI_DTYPE_INT128:
        return DEVTRACE_DTYPE_INT128;
    case DT_MSPTI_DTYPE_HIF8:
    case DT_MSPTI_DTYPE_FP8E4M3:
    case DT_MSPTI_DTYPE_FP8E5M2:
    case DT_MSPTI_DTYPE_FP8E8M0:
        return DEVTRACE_DTYPE_FP8;
    default:
        return DEVTRACE_DTYPE_UNKNOWN;
    }
}

/* msptiActivityMemcpyKind (DEFAULT: chosen by address, so unknown here). */
static const uint8_t mspti_copy_kinds[] = {
    [DT_MSPTI_MEMCPY_KIND_UNKNOWN] = DEVTRACE_COPY_UNKNOWN, [DT_MSPTI_MEMCPY_KIND_HTOH] = DEVTRACE_COPY_HTOH,
    [DT_MSPTI_MEMCPY_KIND_HTOD] = DEVTRACE_COPY_HTOD,       [DT_MSPTI_MEMCPY_KIND_DTOH] = DEVTRACE_COPY_DTOH,
    [DT_MSPTI_MEMCPY_KIND_DTOD] = DEVTRACE_COPY_DTOD,       [DT_MSPTI_MEMCPY_KIND_DEFAULT] = DEVTRACE_COPY_UNKNOWN,
};

/* MSPTI records carry no launch configuration and no context: the events have no
 * HAS_LAUNCH/HAS_REGS/HAS_CBID flag, so the trace omits those keys. Timestamps are host
 * CLOCK_REALTIME ns (MSPTI maps device time itself): an end before the start is not a
 * clock artefact but a bad record (dt_pti_span_check). A device record's span: */
#define MSPTI_DEVICE_SPAN(r) ((dt_pti_span){(r).start, (r).end, (r).correlation_id, (r).device_id, (r).stream_id, 0})

static inline __attribute__((always_inline)) dt_pti_decoded mspti_decode_kernel(dt_pti_decoder *d, const uint8_t *rec,
                                                                                devtrace_event *ev,
                                                                                dt_pti_name_cache *nc)
{
    dt_mspti_kernel k;
    memcpy(&k, rec, sizeof k);
    return dt_pti_take_kernel(d, nc, ev, MSPTI_DEVICE_SPAN(k), k.name);
}

/* The API levels, by record kind: each runtime event says which in args ("level"), and how
 * deep in CANN's stack it sits (u.runtime.depth): MSPTI gives every level's record of one
 * call the calling thread's current correlation id, so one launch can have an ACL, a node
 * and a runtime record with one id, and the flow must start at the one that launched, the
 * deepest. MSPTI's documentation of msptiActivityKind: ACL_API is the AscendCL API (the
 * application's), NODE_API the operator delivery API of the CANN layer, RUNTIME_API the
 * CANN runtime API; API is every other level CANN reports, placed between ACL and node. */
static const char *mspti_api_level(uint32_t kind, uint32_t *depth)
{
    switch (kind) {
    case DT_MSPTI_KIND_ACL_API:
        *depth = 1;
        return "acl";
    case DT_MSPTI_KIND_NODE_API:
        *depth = 3;
        return "node";
    case DT_MSPTI_KIND_RUNTIME_API:
        *depth = 4;
        return "runtime";
    default:
        *depth = 2;
        return "api";
    }
}

/* Every API record level (API, ACL_API, NODE_API, RUNTIME_API) is named by its string. */
static inline __attribute__((always_inline)) dt_pti_decoded mspti_decode_api(dt_pti_decoder *d, const uint8_t *rec,
                                                                             devtrace_event *ev, dt_pti_name_cache *nc)
{
    dt_mspti_api a;
    memcpy(&a, rec, sizeof a);
    dt_pti_decoded r = dt_pti_take_span(ev, DEVTRACE_KIND_RUNTIME,
                                        (dt_pti_span){a.start, a.end, a.correlation_id, a.process_id, a.thread_id, 0});
    if (r != DT_PTI_EMIT)
        return r;
    if (!a.name)
        return DT_PTI_MALFORMED; /* an API record is named by its string: without one it says nothing */
    ev->name_id = dt_pti_vendor_string_cached(d, nc, a.name);
    uint32_t depth = 0;
    ev->u.runtime.level_id = dt_pti_vendor_string_cached(d, nc, mspti_api_level(a.kind, &depth));
    if (ev->u.runtime.level_id) {
        ev->flags |= DEVTRACE_EVENT_HAS_LEVEL;
        ev->u.runtime.depth = depth;
    }
    return DT_PTI_EMIT;
}

static inline __attribute__((always_inline)) dt_pti_decoded mspti_decode_memset(dt_pti_decoder *d, const uint8_t *rec,
                                                                                devtrace_event *ev,
                                                                                dt_pti_name_cache *nc)
{
    (void)d, (void)nc;
    dt_mspti_memset m;
    memcpy(&m, rec, sizeof m);
    return dt_pti_take_memset(ev, MSPTI_DEVICE_SPAN(m), m.bytes, m.value);
}

static inline __attribute__((always_inline)) dt_pti_decoded mspti_decode_memcpy(dt_pti_decoder *d, const uint8_t *rec,
                                                                                devtrace_event *ev,
                                                                                dt_pti_name_cache *nc)
{
    (void)nc;
    dt_mspti_memcpy m;
    memcpy(&m, rec, sizeof m);
    return dt_pti_take_memcpy(d, ev, MSPTI_DEVICE_SPAN(m), m.bytes, m.copy_kind);
}

static inline __attribute__((always_inline)) dt_pti_decoded mspti_decode_external(dt_pti_decoder *d, const uint8_t *rec,
                                                                                  devtrace_event *ev,
                                                                                  dt_pti_name_cache *nc)
{
    (void)nc;
    dt_mspti_external_correlation x;
    memcpy(&x, rec, sizeof x);
    return dt_pti_external(d, x.external_kind, x.correlation_id, x.external_id, ev);
}

/* A collective's names: its operation (the event's name; the trace prefixes it for HTA),
 * its communicator and algorithm. A collective without an operation name is malformed. */
static inline dt_pti_decoded mspti_collective(dt_pti_decoder *d, dt_pti_name_cache *nc, devtrace_event *ev,
                                              const char *name, const char *comm, const char *alg, uint32_t kind)
{
    if (!name)
        return DT_PTI_MALFORMED;
    ev->flags |= DEVTRACE_EVENT_COLLECTIVE;
    ev->name_id = dt_pti_vendor_string_cached(d, nc, name);
    ev->u.collective.comm_name_id = comm ? dt_pti_vendor_string_cached(d, nc, comm) : 0;
    ev->u.collective.algorithm_id = alg ? dt_pti_vendor_string_cached(d, nc, alg) : 0;
    ev->u.collective.vendor_record = kind;
    return ev->name_id ? DT_PTI_EMIT : DT_PTI_MALFORMED;
}

/* HCCL: an operation with the bandwidth MSPTI measured; no correlation, count or type. */
static inline __attribute__((always_inline)) dt_pti_decoded mspti_decode_hccl(dt_pti_decoder *d, const uint8_t *rec,
                                                                              devtrace_event *ev, dt_pti_name_cache *nc)
{
    dt_mspti_hccl h;
    memcpy(&h, rec, sizeof h);
    dt_pti_decoded r =
        dt_pti_take_span(ev, DEVTRACE_KIND_KERNEL, (dt_pti_span){h.start, h.end, 0, h.device_id, h.stream_id, 0});
    if (r != DT_PTI_EMIT)
        return r;
    ev->u.collective.bandwidth_gbps = h.bandwidth >= 0 && h.bandwidth < 1e12 ? h.bandwidth : 0; /* NaN: 0 */
    ev->u.collective.data_type = DEVTRACE_DTYPE_UNKNOWN;
    return mspti_collective(d, nc, ev, h.name, h.comm_name, NULL, DT_MSPTI_KIND_HCCL);
}

/* COMMUNICATION: a collective on the device, linked to its call by correlation. */
static inline __attribute__((always_inline)) dt_pti_decoded mspti_decode_communication(dt_pti_decoder *d,
                                                                                       const uint8_t *rec,
                                                                                       devtrace_event *ev,
                                                                                       dt_pti_name_cache *nc)
{
    dt_mspti_communication c;
    memcpy(&c, rec, sizeof c);
    dt_pti_decoded r = dt_pti_take_span(ev, DEVTRACE_KIND_KERNEL, MSPTI_DEVICE_SPAN(c));
    if (r != DT_PTI_EMIT)
        return r;
    ev->u.collective.count = c.count;
    ev->u.collective.data_type = mspti_dtype(c.data_type);
    return mspti_collective(d, nc, ev, c.name, c.comm_name, c.alg_type, DT_MSPTI_KIND_COMMUNICATION);
}

/* MARKER: one point of a range (start or end, paired by id at finalise) or a mark. A host
 * marker sits on its process and thread, a device one on its device and stream. */
static inline __attribute__((always_inline)) dt_pti_decoded mspti_decode_marker(dt_pti_decoder *d, const uint8_t *rec,
                                                                                devtrace_event *ev,
                                                                                dt_pti_name_cache *nc)
{
    dt_mspti_marker m;
    memcpy(&m, rec, sizeof m);
    if (m.timestamp == 0)
        return DT_PTI_ZERO_TIME;
    uint32_t host = DT_MSPTI_MARKER_INSTANTANEOUS | DT_MSPTI_MARKER_START | DT_MSPTI_MARKER_END;
    uint32_t device =
        DT_MSPTI_MARKER_INSTANTANEOUS_WITH_DEVICE | DT_MSPTI_MARKER_START_WITH_DEVICE | DT_MSPTI_MARKER_END_WITH_DEVICE;
    uint32_t flag = m.flag;
    if (!flag || (flag & (flag - 1)) || !(flag & (host | device)))
        return DT_PTI_MALFORMED; /* exactly one known flag */
    int is_end = (flag & (DT_MSPTI_MARKER_END | DT_MSPTI_MARKER_END_WITH_DEVICE)) != 0;
    if (!is_end && !m.name)
        return DT_PTI_MALFORMED; /* a start or a mark is named */
    dt_pti_set_span(ev, DEVTRACE_KIND_MARKER, m.timestamp, m.timestamp, 0, m.object_a, m.object_b);
    ev->name_id = m.name ? dt_pti_vendor_string_cached(d, nc, m.name) : 0;
    ev->u.marker.id = m.id;
    ev->u.marker.device = (flag & device) != 0 || m.source_kind == DT_MSPTI_SOURCE_DEVICE;
    ev->u.marker.domain_id = m.domain ? dt_pti_vendor_string_cached(d, nc, m.domain) : 0;
    ev->u.marker.phase = is_end ? DEVTRACE_MARKER_END
                         : (flag & (DT_MSPTI_MARKER_INSTANTANEOUS | DT_MSPTI_MARKER_INSTANTANEOUS_WITH_DEVICE))
                             ? DEVTRACE_MARKER_INSTANT
                             : DEVTRACE_MARKER_START;
    return DT_PTI_EMIT;
}

/* MEMORY: an allocation or release, an instant at its end; the running total per device is
 * made at finalise. */
static inline __attribute__((always_inline)) dt_pti_decoded mspti_decode_memory(dt_pti_decoder *d, const uint8_t *rec,
                                                                                devtrace_event *ev,
                                                                                dt_pti_name_cache *nc)
{
    (void)d, (void)nc;
    dt_mspti_memory m;
    memcpy(&m, rec, sizeof m);
    dt_pti_decoded r = dt_pti_span_check(m.start, m.end);
    if (r != DT_PTI_EMIT)
        return r;
    if (m.operation != DT_MSPTI_MEMORY_ALLOCATION && m.operation != DT_MSPTI_MEMORY_RELEASE)
        return DT_PTI_MALFORMED;
    dt_pti_set_span(ev, DEVTRACE_KIND_MEMORY, m.end, m.end, m.correlation_id, m.process_id, m.process_id);
    ev->u.memory.address = m.address;
    ev->u.memory.bytes = m.bytes;
    ev->u.memory.release = m.operation == DT_MSPTI_MEMORY_RELEASE;
    ev->u.memory.device_id = m.device_id;
    ev->u.memory.stream_id = m.stream_id;
    return DT_PTI_EMIT;
}

#undef MSPTI_DEVICE_SPAN

/* The decoder of a layout by its id (DT_MSPTI_DECODE_*, mspti_records.h): the descriptor's
 * vendor_decode, for the engine's walks, and inline in mspti_walk_buffer's. The engine's
 * own ids have no MSPTI layout. */
static inline __attribute__((always_inline)) dt_pti_decoded mspti_decode_record(const dt_pti_layout *l,
                                                                                dt_pti_decoder *d, const uint8_t *rec,
                                                                                devtrace_event *ev,
                                                                                dt_pti_name_cache *nc)
{
    switch (l->decoder) {
    case DT_MSPTI_DECODE_KERNEL:
        return mspti_decode_kernel(d, rec, ev, nc);
    case DT_MSPTI_DECODE_API:
        return mspti_decode_api(d, rec, ev, nc);
    case DT_MSPTI_DECODE_MEMSET:
        return mspti_decode_memset(d, rec, ev, nc);
    case DT_MSPTI_DECODE_MEMCPY:
        return mspti_decode_memcpy(d, rec, ev, nc);
    case DT_MSPTI_DECODE_EXTERNAL:
        return mspti_decode_external(d, rec, ev, nc);
    case DT_MSPTI_DECODE_HCCL:
        return mspti_decode_hccl(d, rec, ev, nc);
    case DT_MSPTI_DECODE_COMMUNICATION:
        return mspti_decode_communication(d, rec, ev, nc);
    case DT_MSPTI_DECODE_MARKER:
        return mspti_decode_marker(d, rec, ev, nc);
    case DT_MSPTI_DECODE_MEMORY:
        return mspti_decode_memory(d, rec, ev, nc);
    default:
        return DT_PTI_MALFORMED;
    }
}

/* MSPTI's walker: the engine's stride walk with MSPTI's decoders inline, never
 * msptiActivityGetNextRecord. The library's iterator keeps its position in a thread-local
 * cursor and ignores the record passed in (Ascend/mspti, csrc/activity/activity_manager.cpp,
 * ActivityManager::GetNextRecord); only MAX_LIMIT_REACHED resets it, so a walk that stopped
 * early (INVALID_KIND, a record rejected as truncated) would make the next buffer walked on
 * that thread start mid-way. Records lie back to back, each its kind's full size; a kind
 * without a layout has no known size, so the rest of the buffer is unreadable (counted
 * malformed, once). Replay walks MSPTI's captures with it too. */
static void mspti_walk_buffer(dt_pti_decoder *d, uint8_t *buf, size_t valid_size, dt_pti_walk_mode mode,
                              dt_pti_walk_counts *counts)
{
    dt_pti_stride_walk(d, buf, valid_size, mode, counts, mspti_decode_record);
}

const dt_pti_descriptor dt_pti_mspti_descriptor = {
    .name = "mspti",
    .vendor_api = "MSPTI",
    .override_env = "DEVTRACE_MSPTI_LIBRARY",
    .library_names = {"libmspti.so"},
    .sdk_env = {"ASCEND_HOME_PATH"},
    .sdk_default_roots = {"/usr/local/Ascend/ascend-toolkit/latest"},
    .sdk_subdirs = {"lib64", "tools/mspti/lib64"},
    .system_names = {"libmspti.so"},
    .search_process = 1, /* a program that links or preloads libmspti.so */
    .symbol_prefixes = {"mspti"},
    .required = DT_PTI_REQUIRED_DEFAULT,
    /* The API record kinds are all in more_kinds, each under its own name. */
    .kinds = {.memcpy = DT_MSPTI_KIND_MEMCPY,
              .memset = DT_MSPTI_KIND_MEMSET,
              .kernel = DT_MSPTI_KIND_KERNEL,
              .concurrent_kernel = 0,
              .runtime = 0,
              .external_correlation = DT_MSPTI_KIND_EXTERNAL_CORRELATION},
    .results = {.success = DT_MSPTI_SUCCESS,
                .max_limit_reached = DT_MSPTI_ERROR_MAX_LIMIT_REACHED,
                .not_compatible = -1 /* MSPTI has none */,
                .multiple_subscribers = DT_MSPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED},
    .external_kind_custom0 = DT_MSPTI_EXTERNAL_KIND_CUSTOM0,
    .refuse_from_version = 0, /* the header: a request may be declined (NULL); records are then dropped */
    .layouts = mspti_layouts,
    .nlayouts = sizeof mspti_layouts / sizeof mspti_layouts[0],
    .vendor_decode = mspti_decode_record,
    .vendor_pointers = mspti_pointers,
    .nvendor_pointers = sizeof mspti_pointers / sizeof mspti_pointers[0],
    .copy_kinds = mspti_copy_kinds,
    .ncopy_kinds = sizeof mspti_copy_kinds,
    .runtime_names = NULL,
    .nruntime_names = 0,
    .unknown_runtime_prefix = NULL,
    .attribute_fn = {NULL}, /* no CUDA-style device attribute query: no occupancy */
    .device_count_fn = {NULL},
    .runtime_libraries = {NULL},
    .device_name_prefix = "Ascend NPU",
    .quirks = DT_PTI_QUIRK_COMPLETE_NO_CONTEXT,
    .scan = mspti_walk_buffer,
    .usable_check_kind = DT_MSPTI_KIND_MEMCPY,
    .more_kinds = {{DT_MSPTI_KIND_ACL_API, "ACL_API", 0, 0},
                   {DT_MSPTI_KIND_NODE_API, "NODE_API", 1, 0},
                   {DT_MSPTI_KIND_RUNTIME_API, "RUNTIME_API", 0, 0},
                   /* A collective is one COMMUNICATION record (with its correlation, count and
                    * type), or, from a library without that kind, one HCCL record: never both. */
                   {DT_MSPTI_KIND_COMMUNICATION, "COMMUNICATION", 1, 0},
                   {DT_MSPTI_KIND_HCCL, "HCCL", 1, 1},
                   {DT_MSPTI_KIND_MARKER, "MARKER", 1, 0},
                   {DT_MSPTI_KIND_MEMORY, "MEMORY", 1, 0}},
    .result_hints = {{DT_MSPTI_ERROR_WITHOUT_LD_PRELOAD,
                      "libmspti.so must be in LD_PRELOAD: run under 'devtrace record --backend mspti', or "
                      "LD_PRELOAD=/path/libmspti.so"}},
    .facts_note = "kernel records carry no grid, block, registers or shared memory (the trace omits those keys) "
                  "and there is no device attribute query, so no occupancy; API records are named by string "
                  "(no cbid)",
};

DT_PTI_BACKEND(
    dt_backend_mspti, dt_pti_mspti_descriptor, .name = "mspti", .description = "Huawei Ascend MSPTI",
    .caps = DT_CAP_EXTERNAL | DT_CAP_RAW_CAPTURE, .validated = DT_VALIDATED_HEADERS | DT_VALIDATED_EMULATED,
    .validation_note = "record mirrors checked against the MSPTI headers (Ascend/mspti "
                       "a38916051d9a10467591f05c564f2f80985ee292); end to end on the MSPTI emulator; not run "
                       "on Ascend hardware",
    .runtime_category = "privateuse1_runtime", .load_method = DEVTRACE_LOAD_PRELOAD, .preload_library = "libmspti.so");
