/* mcpti.c: the MetaX MCPTI backend ("mcpti"): MACA's CUPTI-shaped tracing library as a
 * descriptor of the CUPTI-family engine, with the workarounds for what was measured on a
 * C550 with MACA 3.8.0 (../shared/vendor-abi.md, MetaX section). Facts are [U] (code that
 * ran on the hardware) unless marked; no MetaX header was seen by this project, and no
 * MetaX device is available to it: every quirk below is tested against the MCPTI emulator
 * (tests/emu) that reproduces the observations, not on hardware.
 *
 *  - Library: libmcpti.so in $DEVTRACE_MCPTI_LIBRARY (a path), else under each of
 *    $METAX_PATH, $METAX_HOME, $MACA_PATH, $MACA_HOME, /opt/maca in lib/ then lib64/,
 *    else a copy already loaded or on the loader's path, else the process itself (a
 *    program linked with it: only under the mcpti* spelling).
 *  - Symbols: mcpti* and the cupti* aliases code that ran on MACA 3.8 used [I: aliases];
 *    mcpti* is preferred. Completion callback (MCcontext ctx, uint32_t streamId, uint8_t *buf,
 *    size_t size, size_t validSize): CUPTI's shape.
 *  - Kinds: CUPTI's numbers (MEMCPY 1, MEMSET 2, KERNEL 3, RUNTIME 5, CONCURRENT_KERNEL 10,
 *    EXTERNAL_CORRELATION 39), CUSTOM0 = 3, end of buffer = 12. Records (MACA 3.8.0 sizes):
 *    MCpti_ActivityKernel8 200 B (CUPTI's kernel prefix through name@104), Memcpy5 88 B,
 *    Memset4 88 B (value u32@4), API 40 B, external correlation 24 B. mcptiGetVersion
 *    returned 18 on MACA 3.5.3 and 3.7.1; the sizes are taken for every version.
 *  - Callback ids: MetaX's own namespace (the table below), never CUDA's. Names come from
 *    mcptiActivityGetApiName(RUNTIME, cbid, &name) after the final flush and disable: it
 *    deadlocks when called inside the buffer-completed callback on MACA 3.8.0 (quirk 4).
 *    An id neither it nor the table knows is shown as mcRuntime#<cbid>, counted in
 *    unresolved_names.
 *  - Quirk 1 (stale iterator, malformed advancement): GetNextRecord is used while it
 *    behaves; from its first anomaly the buffer is scanned (mcpti_scan.c), and the trace's
 *    notes say how many buffers needed it. Quirk 2 (start == end == 0): skipped and
 *    counted zero_timestamp. Quirk 3 (device-counter timestamps): small values are valid;
 *    the counter is mapped to host realtime from clock samples at start, at stop and at
 *    most every 100 ms while buffers complete. Quirk 5 (FlushAll completes on the
 *    flushing thread): the engine holds no lock across it. Quirk 6 (register before the
 *    first context, RUNTIME only while a session runs): the engine's order.
 *  - Occupancy: wcudaDeviceGetAttribute (libruntime_cu.so, CUDA attribute numbers), else
 *    mcDeviceGetAttribute; with neither, the trace has no occupancy keys and a note says
 *    why. */
#include "pti_decode.h"
#include "mcpti_scan.h"

/* MetaX runtime callback ids (vendor-abi.md), sorted. Launch-like ids seen beyond these
 * (57, 58, 61, 63..66, 333, 394) have no known name: the resolver names them. */
static const dt_pti_cbid_name mcpti_runtime_names[] = {
    {18, "mcDeviceSynchronize"},
    {19, "mcGetDevice"},
    {20, "mcGetDeviceCount"},
    {22, "mcGetDeviceProperties"},
    {23, "mcSetDevice"},
    {46, "mcStreamSynchronize"},
    {47, "mcStreamWaitEvent"},
    {56, "mcLaunchKernel"},
    {60, "mcModuleLaunchKernel"},
    {62, "mcLaunchKernelExC"},
    {74, "mcEventRecord"},
    {76, "mcEventSynchronize"},
    {107, "mcMalloc"},
    {108, "mcFree"},
    {118, "mcMemcpy"},
    {119, "mcMemcpyAsync"},
    {146, "mcMemset"},
    {147, "mcMemsetAsync"},
};

/* One layout per kind, for every library version: MACA 3.8.0's sizes. The decoders are
 * the engine's CUPTI ones (the prefixes are CUPTI's); the walker validates first. */
static const dt_pti_layout mcpti_layouts[] = {
    {DT_MCPTI_KIND_CONCURRENT_KERNEL, 0, UINT32_MAX, sizeof(dt_mcpti_kernel8), sizeof(dt_cupti_kernel_prefix),
     DEVTRACE_KIND_KERNEL, DT_PTI_DECODE_CUPTI_KERNEL, "MCpti_ActivityKernel8"},
    {DT_MCPTI_KIND_KERNEL, 0, UINT32_MAX, sizeof(dt_mcpti_kernel8), sizeof(dt_cupti_kernel_prefix),
     DEVTRACE_KIND_KERNEL, DT_PTI_DECODE_CUPTI_KERNEL, "MCpti_ActivityKernel8"},
    {DT_MCPTI_KIND_MEMCPY, 0, UINT32_MAX, DT_MCPTI_MEMCPY_SIZE, sizeof(dt_cupti_memcpy_prefix), DEVTRACE_KIND_MEMCPY,
     DT_PTI_DECODE_CUPTI_MEMCPY, "MCpti_ActivityMemcpy5"},
    {DT_MCPTI_KIND_MEMSET, 0, UINT32_MAX, DT_MCPTI_MEMSET_SIZE, offsetof(dt_cupti_memset4, tail), DEVTRACE_KIND_MEMSET,
     DT_PTI_DECODE_CUPTI_MEMSET, "MCpti_ActivityMemset4"},
    {DT_MCPTI_KIND_RUNTIME, 0, UINT32_MAX, DT_MCPTI_API_SIZE, sizeof(dt_cupti_api), DEVTRACE_KIND_RUNTIME,
     DT_PTI_DECODE_CUPTI_API, "MCpti_ActivityAPI"},
    {DT_MCPTI_KIND_EXTERNAL_CORRELATION, 0, UINT32_MAX, DT_MCPTI_EXTERNAL_SIZE, sizeof(dt_cupti_external_correlation),
     DEVTRACE_KIND_EXTCORR, DT_PTI_DECODE_CUPTI_EXTERNAL, "MCpti_ActivityExternalCorrelation"},
};
_Static_assert(sizeof(dt_mcpti_kernel8) == DT_MCPTI_KERNEL_SIZE, "MCpti_ActivityKernel8 is 200 bytes");
_Static_assert(sizeof(dt_cupti_memset4) == DT_MCPTI_MEMSET_SIZE, "MCpti_ActivityMemset4 is 88 bytes");
_Static_assert(sizeof(dt_cupti_api) == DT_MCPTI_API_SIZE, "MCpti_ActivityAPI is 40 bytes");
_Static_assert(sizeof(dt_cupti_external_correlation) == DT_MCPTI_EXTERNAL_SIZE,
               "MCpti_ActivityExternalCorrelation is 24 bytes");

const dt_pti_descriptor dt_pti_mcpti_descriptor = {
    .name = "mcpti",
    .vendor_api = "MCPTI",
    .override_env = "DEVTRACE_MCPTI_LIBRARY",
    .library_names = {"libmcpti.so"},
    .sdk_env = {"METAX_PATH", "METAX_HOME", "MACA_PATH", "MACA_HOME"},
    .sdk_default_roots = {"/opt/maca"},
    .sdk_subdirs = {"lib", "lib64"},
    .system_names = {"libmcpti.so"},
    .search_process = 1,
    .symbol_prefixes = {"mcpti", "cupti"},
    .required = DT_PTI_REQUIRED_DEFAULT,
    .kinds = {.memcpy = DT_MCPTI_KIND_MEMCPY,
              .memset = DT_MCPTI_KIND_MEMSET,
              .kernel = DT_MCPTI_KIND_KERNEL,
              .concurrent_kernel = DT_MCPTI_KIND_CONCURRENT_KERNEL,
              .runtime = DT_MCPTI_KIND_RUNTIME,
              .external_correlation = DT_MCPTI_KIND_EXTERNAL_CORRELATION},
    /* end of buffer 12 [U]; NOT_COMPATIBLE and MULTIPLE_SUBSCRIBERS as CUPTI [I] */
    .results = {.success = 0, .max_limit_reached = 12, .not_compatible = 14, .multiple_subscribers = 39},
    .external_kind_custom0 = 3,
    .refuse_from_version = UINT32_MAX, /* unknown whether MACA survives a refused buffer: never refuse */
    .layouts = mcpti_layouts,
    .nlayouts = sizeof mcpti_layouts / sizeof mcpti_layouts[0],
    .copy_kinds = dt_pti_cupti_copy_kinds, /* CUPTI's memcpy kind numbers [I] */
    .ncopy_kinds = DT_PTI_CUPTI_NCOPY_KINDS,
    .runtime_names = mcpti_runtime_names,
    .nruntime_names = sizeof mcpti_runtime_names / sizeof mcpti_runtime_names[0],
    .unknown_runtime_prefix = "mcRuntime",
    .attribute_fn = {"wcudaDeviceGetAttribute", "mcDeviceGetAttribute"},
    .device_count_fn = {"wcudaGetDeviceCount", "mcGetDeviceCount"},
    .runtime_libraries = {"libruntime_cu.so", "libmcruntime.so"},
    .device_name_prefix = "MetaX GPU",
    .quirks = DT_PTI_QUIRK_VENDOR_CLOCK | DT_PTI_QUIRK_STRICT_RECORDS,
    .scan = dt_mcpti_walk_buffer,
    .api_name_suffix = "ActivityGetApiName",
    .api_name_arg = DT_MCPTI_KIND_RUNTIME,
    .finish = dt_mcpti_finish,
};

DT_PTI_BACKEND(dt_backend_mcpti, dt_pti_mcpti_descriptor, .name = "mcpti", .description = "MetaX MCPTI (MACA)",
               .caps = DT_CAP_KERNEL_LAUNCH | DT_CAP_OCCUPANCY | DT_CAP_EXTERNAL | DT_CAP_RAW_CAPTURE,
               .validated = DT_VALIDATED_EMULATED,
               .validation_note = "quirks emulated from MACA 3.8.0 observations on a C550 (stale iterator, malformed "
                                  "records, zero timestamps, device clock, resolver deadlock), facts from code that "
                                  "ran there; no MetaX header or hardware used by this project",
               .runtime_category = "privateuse1_runtime", .load_method = DEVTRACE_LOAD_PRELOAD);
