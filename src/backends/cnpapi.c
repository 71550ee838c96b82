/* cnpapi.c: the Cambricon CNPAPI backend ("cnpapi"): Neuware's CUPTI-shaped tracing
 * library, as a descriptor of the PTI-family engine, with its own record mirrors and
 * decoders (its records are not CUPTI's).
 *
 * Emulated only: no Cambricon library, header install or device was available to this
 * project. Facts are marked [H-copy] (read in a copy of CNPAPI's public headers, cnpapi.h,
 * cnpapi_types.h and cnpapi_activity_api.h, as public repositories carry them), [U] (seen
 * in public third-party code that uses CNPAPI) or [I] (inferred, unverified); the backend
 * is tested against the CNPAPI emulator (tests/emu/cnpapi_emu.c) built from the same facts.
 *  - Library: libcnpapi.so [H-copy] in $DEVTRACE_CNPAPI_LIBRARY (a path), else under
 *    $NEUWARE_HOME [U], else /usr/local/neuware [H-copy], in lib64/ then lib/, else on the
 *    loader's path, else the process itself.
 *  - Calls [H-copy]: cnpapiInit() before anything else (DT_PTI_QUIRK_INIT_FIRST);
 *    cnpapiActivityRegisterCallbacks(request(uint64_t **, size_t *, size_t *),
 *    complete(uint64_t *buffer, size_t size, size_t validSize)): no context or stream;
 *    cnpapiActivityFlushAll() with no flag; uint64_t cnpapiGetTimestamp() returns the time;
 *    cnpapiActivityPush/PopExternalCorrelationId(type, u64); cnpapiGetResultString. No
 *    GetVersion (cnpapiGetLibVersion(&major, &minor, &patch) has another shape) and no
 *    dropped-record count: records CNPAPI drops cannot be counted (the session says so).
 *  - Activity types [H-copy]: KERNEL 1, CNDRV_API 3, CNRT_API 4, MEMCPY 9, MEMSET 10,
 *    EXTERNAL_CORRELATION 27. The device records' correlation_id is the CNDrv call's
 *    [H-copy: "cndrv correlation id"] (runtime_correlation_id the CNRT call's), so the
 *    runtime events are the CNDRV_API records [U: third-party tracers enable CNDRV_API and
 *    link by correlation_id]; their callback ids are in CNDrv's namespace.
 *  - Results [H-copy]: SUCCESS 0, NOT_INITIALIZED 1, INVALID_ARGUMENT 3, UNKNOWN 8,
 *    MAX_LIMIT_REACHED 9 (GetNextRecord: end of buffer), ALREADY_IN_USE 12. External
 *    correlation types [H-copy]: CUSTOM0 2, CUSTOM1 3.
 *  - Records, natural alignment, u64 correlation ids [H-copy]: below, with every offset
 *    read asserted. Kernel records carry no grid, block, registers or shared memory (dimx,
 *    dimy, dimz are the task's dimensions): no launch keys and no occupancy in the trace.
 *  - Callback ids [I]: no public table of CNDrv's ids was found: the names below carry ids
 *    chosen with the emulator; on a real library an id that is not here is shown as
 *    cnDrv#<cbid> and counted in unresolved_names.
 *  - Clock [U]: the device clock stands apart from the host's by a fixed gap (third-party
 *    code measures it once against cnpapiGetTimestamp()): sampled like every vendor clock.
 *  - No injection hook is known [I]: `devtrace record` preloads the collector. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pti_decode.h"

enum {
    DT_CNPAPI_KIND_KERNEL = 1,
    DT_CNPAPI_KIND_CNDRV_API = 3,
    DT_CNPAPI_KIND_MEMCPY = 9,
    DT_CNPAPI_KIND_MEMSET = 10,
    DT_CNPAPI_KIND_EXTERNAL_CORRELATION = 27,
};

enum {
    DT_CNPAPI_DECODE_KERNEL = DT_PTI_DECODE_VENDOR,
    DT_CNPAPI_DECODE_API,
    DT_CNPAPI_DECODE_MEMCPY,
    DT_CNPAPI_DECODE_MEMSET,
    DT_CNPAPI_DECODE_EXTERNAL,
};

/* Our mirrors of the records [H-copy], read at the asserted offsets only. */
typedef struct dt_cnpapi_kernel {
    uint32_t type;
    uint64_t correlation_id; /* the CNDrv call's */
    uint64_t start, end, received, queued, submitted;
    uint64_t device_id;
    const char *name; /* NULL: not collected */
    uint64_t queue_id;
    uint64_t runtime_correlation_id; /* the CNRT call's */
    uint64_t kernel_type;
    uint32_t dimx, dimy, dimz;
    uint64_t context_id;
} dt_cnpapi_kernel;
DT_RECORD_SIZE(dt_cnpapi_kernel, 120);
DT_RECORD_OFFSET(dt_cnpapi_kernel, correlation_id, 8);
DT_RECORD_OFFSET(dt_cnpapi_kernel, start, 16);
DT_RECORD_OFFSET(dt_cnpapi_kernel, end, 24);
DT_RECORD_OFFSET(dt_cnpapi_kernel, device_id, 56);
DT_RECORD_OFFSET(dt_cnpapi_kernel, name, 64);
DT_RECORD_OFFSET(dt_cnpapi_kernel, queue_id, 72);
DT_RECORD_OFFSET(dt_cnpapi_kernel, context_id, 112);

typedef struct dt_cnpapi_memcpy {
    uint32_t type, flags;
    uint64_t correlation_id;
    uint64_t bytes;
    uint32_t copy_type; /* cnpapiActivityMemcpyType */
    uint64_t start, end, received, queued, submitted;
    uint64_t device_id, queue_id, runtime_correlation_id, context_id;
} dt_cnpapi_memcpy;
DT_RECORD_SIZE(dt_cnpapi_memcpy, 104);
DT_RECORD_OFFSET(dt_cnpapi_memcpy, correlation_id, 8);
DT_RECORD_OFFSET(dt_cnpapi_memcpy, bytes, 16);
DT_RECORD_OFFSET(dt_cnpapi_memcpy, copy_type, 24);
DT_RECORD_OFFSET(dt_cnpapi_memcpy, start, 32);
DT_RECORD_OFFSET(dt_cnpapi_memcpy, end, 40);
DT_RECORD_OFFSET(dt_cnpapi_memcpy, device_id, 72);
DT_RECORD_OFFSET(dt_cnpapi_memcpy, queue_id, 80);
DT_RECORD_OFFSET(dt_cnpapi_memcpy, context_id, 96);

typedef struct dt_cnpapi_memset {
    uint32_t type, flags;
    uint64_t correlation_id;
    uint64_t bytes;
    uint64_t start, end, received, queued, submitted;
    uint64_t device_id, queue_id, runtime_correlation_id;
    uint64_t value;
    uint64_t context_id;
} dt_cnpapi_memset;
DT_RECORD_SIZE(dt_cnpapi_memset, 104);
DT_RECORD_OFFSET(dt_cnpapi_memset, correlation_id, 8);
DT_RECORD_OFFSET(dt_cnpapi_memset, bytes, 16);
DT_RECORD_OFFSET(dt_cnpapi_memset, start, 24);
DT_RECORD_OFFSET(dt_cnpapi_memset, end, 32);
DT_RECORD_OFFSET(dt_cnpapi_memset, device_id, 64);
DT_RECORD_OFFSET(dt_cnpapi_memset, queue_id, 72);
DT_RECORD_OFFSET(dt_cnpapi_memset, value, 88);
DT_RECORD_OFFSET(dt_cnpapi_memset, context_id, 96);

typedef struct dt_cnpapi_api {
    uint32_t type;
    uint64_t correlation_id;
    uint32_t cbid;
    uint64_t start, end;
    uint32_t process_id, thread_id;
    const void *return_value; /* a pointer to the call's result, not the result */
} dt_cnpapi_api;
DT_RECORD_SIZE(dt_cnpapi_api, 56);
DT_RECORD_OFFSET(dt_cnpapi_api, correlation_id, 8);
DT_RECORD_OFFSET(dt_cnpapi_api, cbid, 16);
DT_RECORD_OFFSET(dt_cnpapi_api, start, 24);
DT_RECORD_OFFSET(dt_cnpapi_api, end, 32);
DT_RECORD_OFFSET(dt_cnpapi_api, process_id, 40);
DT_RECORD_OFFSET(dt_cnpapi_api, thread_id, 44);

typedef struct dt_cnpapi_external_correlation {
    uint32_t type, external_type;
    uint64_t external_id;
    uint64_t correlation_id;
} dt_cnpapi_external_correlation;
DT_RECORD_SIZE(dt_cnpapi_external_correlation, 24);
DT_RECORD_OFFSET(dt_cnpapi_external_correlation, external_type, 4);
DT_RECORD_OFFSET(dt_cnpapi_external_correlation, external_id, 8);
DT_RECORD_OFFSET(dt_cnpapi_external_correlation, correlation_id, 16);

static const dt_pti_layout cnpapi_layouts[] = {
    DT_PTI_LAYOUT_WHOLE(DT_CNPAPI_KIND_KERNEL, dt_cnpapi_kernel, DEVTRACE_KIND_KERNEL, DT_CNPAPI_DECODE_KERNEL,
                        "cnpapiActivityKernel"),
    DT_PTI_LAYOUT_WHOLE(DT_CNPAPI_KIND_CNDRV_API, dt_cnpapi_api, DEVTRACE_KIND_RUNTIME, DT_CNPAPI_DECODE_API,
                        "cnpapiActivityAPI (CNDRV_API)"),
    DT_PTI_LAYOUT_WHOLE(DT_CNPAPI_KIND_MEMCPY, dt_cnpapi_memcpy, DEVTRACE_KIND_MEMCPY, DT_CNPAPI_DECODE_MEMCPY,
                        "cnpapiActivityMemcpy"),
    DT_PTI_LAYOUT_WHOLE(DT_CNPAPI_KIND_MEMSET, dt_cnpapi_memset, DEVTRACE_KIND_MEMSET, DT_CNPAPI_DECODE_MEMSET,
                        "cnpapiActivityMemset"),
    DT_PTI_LAYOUT_WHOLE(DT_CNPAPI_KIND_EXTERNAL_CORRELATION, dt_cnpapi_external_correlation, DEVTRACE_KIND_EXTCORR,
                        DT_CNPAPI_DECODE_EXTERNAL, "cnpapiActivityExternalCorrelation"),
};

/* Where each decoder reads a string (the descriptor's vendor_pointers): the kernel's name. */
static const dt_pti_pointer_fields cnpapi_pointers[] = {
    [DT_CNPAPI_DECODE_KERNEL - DT_PTI_DECODE_VENDOR] = {{offsetof(dt_cnpapi_kernel, name)}},
};

/* cnpapiActivityMemcpyType [H-copy]: HTOD 1, DTOH 2, DTOD 3, HTOH 4; PTOP 5 (between two
 * devices, its own record kind when enabled) has no direction of ours: unknown. */
static const uint8_t cnpapi_copy_kinds[] = {DEVTRACE_COPY_UNKNOWN, DEVTRACE_COPY_HTOD, DEVTRACE_COPY_DTOH,
                                            DEVTRACE_COPY_DTOD,    DEVTRACE_COPY_HTOH, DEVTRACE_COPY_UNKNOWN};

/* CNDrv callback ids, sorted [I: ids chosen with the emulator; names as CNDrv spells them]. */
static const dt_pti_cbid_name cnpapi_cndrv_names[] = {
    {1, "cnCtxGetDevice"}, {2, "cnDeviceGetCount"}, {3, "cnDeviceGetAttribute"}, {4, "cnCtxSetCurrent"},
    {5, "cnMalloc"},       {6, "cnFree"},           {7, "cnPlaceNotifier"},      {8, "cnInvokeKernel"},
    {9, "cnMemcpy"},       {10, "cnMemsetD8Async"}, {11, "cnQueueSync"},         {12, "cnCtxSync"},
};

/* A device record's span: its queue is the stream, its ids are u64 (devtrace's u32). */
#define CNPAPI_DEVICE_SPAN(r)                                                                               \
    ((dt_pti_span){(r).start, (r).end, (r).correlation_id, (uint32_t)(r).device_id, (uint32_t)(r).queue_id, \
                   (uint32_t)(r).context_id})

static inline dt_pti_decoded cnpapi_decode_kernel(dt_pti_decoder *d, const uint8_t *rec, devtrace_event *ev,
                                                  dt_pti_name_cache *nc)
{
    dt_cnpapi_kernel k;
    memcpy(&k, rec, sizeof k);
    return dt_pti_take_kernel(d, nc, ev, CNPAPI_DEVICE_SPAN(k), k.name);
}

static inline dt_pti_decoded cnpapi_decode_api(dt_pti_decoder *d, const uint8_t *rec, devtrace_event *ev)
{
    dt_cnpapi_api a;
    memcpy(&a, rec, sizeof a);
    dt_pti_decoded r = dt_pti_span_check(a.start, a.end);
    if (r != DT_PTI_EMIT)
        return r;
    if (a.cbid >= DT_PTI_CBID_CACHE)
        return DT_PTI_MALFORMED; /* no API has this many calls: garbage, and it would grow the names */
    dt_pti_set_span(ev, DEVTRACE_KIND_RUNTIME, a.start, a.end, a.correlation_id, a.process_id, a.thread_id);
    ev->flags = DEVTRACE_EVENT_HAS_CBID;
    ev->name_id = dt_pti_runtime_name_inline(d, a.cbid);
    ev->u.runtime.cbid = a.cbid;
    return DT_PTI_EMIT;
}

static inline dt_pti_decoded cnpapi_decode_memcpy(dt_pti_decoder *d, const uint8_t *rec, devtrace_event *ev)
{
    dt_cnpapi_memcpy m;
    memcpy(&m, rec, sizeof m);
    return dt_pti_take_memcpy(d, ev, CNPAPI_DEVICE_SPAN(m), m.bytes, m.copy_type);
}

static inline dt_pti_decoded cnpapi_decode_memset(const uint8_t *rec, devtrace_event *ev)
{
    dt_cnpapi_memset m;
    memcpy(&m, rec, sizeof m);
    return dt_pti_take_memset(ev, CNPAPI_DEVICE_SPAN(m), m.bytes, (uint32_t)m.value);
}

#undef CNPAPI_DEVICE_SPAN

/* The decoder of a layout by its id: the descriptor's vendor_decode. */
static dt_pti_decoded cnpapi_decode_record(const dt_pti_layout *l, dt_pti_decoder *d, const uint8_t *rec,
                                           devtrace_event *ev, dt_pti_name_cache *nc)
{
    switch (l->decoder) {
    case DT_CNPAPI_DECODE_KERNEL:
        return cnpapi_decode_kernel(d, rec, ev, nc);
    case DT_CNPAPI_DECODE_API:
        return cnpapi_decode_api(d, rec, ev);
    case DT_CNPAPI_DECODE_MEMCPY:
        return cnpapi_decode_memcpy(d, rec, ev);
    case DT_CNPAPI_DECODE_MEMSET:
        return cnpapi_decode_memset(rec, ev);
    case DT_CNPAPI_DECODE_EXTERNAL: {
        dt_cnpapi_external_correlation x;
        memcpy(&x, rec, sizeof x);
        return dt_pti_external(d, x.external_type, x.correlation_id, x.external_id, ev);
    }
    default:
        return DT_PTI_MALFORMED;
    }
}

const dt_pti_descriptor dt_pti_cnpapi_descriptor = {
    .name = "cnpapi",
    .vendor_api = "CNPAPI",
    .override_env = "DEVTRACE_CNPAPI_LIBRARY",
    .library_names = {"libcnpapi.so"},
    .sdk_env = {"NEUWARE_HOME"},
    .sdk_default_roots = {"/usr/local/neuware"},
    .sdk_subdirs = {"lib64", "lib"},
    .system_names = {"libcnpapi.so"},
    .search_process = 1,
    .symbol_prefixes = {"cnpapi"},
    .required = DT_PTI_REQUIRED_DEFAULT,
    .kinds = {.memcpy = DT_CNPAPI_KIND_MEMCPY,
              .memset = DT_CNPAPI_KIND_MEMSET,
              .kernel = DT_CNPAPI_KIND_KERNEL,
              .concurrent_kernel = 0,
              .runtime = DT_CNPAPI_KIND_CNDRV_API,
              .external_correlation = DT_CNPAPI_KIND_EXTERNAL_CORRELATION},
    .results = {.success = 0, .max_limit_reached = 9, .not_compatible = -1, .multiple_subscribers = 12},
    .external_kind_custom0 = 2,
    .refuse_from_version = UINT32_MAX, /* unknown whether CNPAPI survives a refused buffer: never refuse */
    .layouts = cnpapi_layouts,
    .nlayouts = sizeof cnpapi_layouts / sizeof cnpapi_layouts[0],
    .vendor_decode = cnpapi_decode_record,
    .vendor_pointers = cnpapi_pointers,
    .nvendor_pointers = sizeof cnpapi_pointers / sizeof cnpapi_pointers[0],
    .copy_kinds = cnpapi_copy_kinds,
    .ncopy_kinds = sizeof cnpapi_copy_kinds,
    .runtime_names = cnpapi_cndrv_names,
    .nruntime_names = sizeof cnpapi_cndrv_names / sizeof cnpapi_cndrv_names[0],
    .unknown_runtime_prefix = "cnDrv",
    .attribute_fn = {NULL}, /* no CUDA-style attribute query: no occupancy */
    .device_count_fn = {NULL},
    .runtime_libraries = {NULL},
    .device_name_prefix = "MLU",
    .quirks = DT_PTI_QUIRK_COMPLETE_NO_CONTEXT | DT_PTI_QUIRK_FLUSH_NO_FLAG | DT_PTI_QUIRK_TIMESTAMP_VALUE |
              DT_PTI_QUIRK_INIT_FIRST | DT_PTI_QUIRK_VENDOR_CLOCK,
    .facts_note = "kernel records carry no grid, block, registers or shared memory (the trace omits those keys) "
                  "and there is no device attribute query, so no occupancy",
};

DT_PTI_BACKEND(dt_backend_cnpapi, dt_pti_cnpapi_descriptor, .name = "cnpapi",
               .description = "Cambricon CNPAPI (Neuware)", .caps = DT_CAP_EXTERNAL, .validated = DT_VALIDATED_EMULATED,
               .validation_note = "record layouts and calls from a public copy of CNPAPI's headers, callback ids "
                                  "chosen for the emulator; tested against the CNPAPI emulator only; not run on "
                                  "Cambricon hardware by this project",
               .runtime_category = "privateuse1_runtime", .load_method = DEVTRACE_LOAD_PRELOAD);
