/* musa.c: the Moore Threads MUSA backend ("musa"): MUPTI, MUSA's CUPTI-shaped tracing
 * library, as a descriptor of the CUPTI-family engine.
 *
 * Emulated only: no MUSA header, library or device was available to this project; every
 * fact below comes from public third-party code that uses MUPTI ([U]: seen there) or is
 * inferred from MUPTI being a port of CUPTI ([I]: unverified), and the backend is tested
 * against the MUPTI emulator (tests/emu/musa_table.c) built from the same facts.
 *  - Library: libmupti.so [U], in $DEVTRACE_MUSA_LIBRARY (a path), else under $MUSA_HOME,
 *    $MUSA_PATH, else /usr/local/musa [U], in lib/ [U] then lib64/, else on the loader's path.
 *  - Symbols: the mupti* spelling of CUPTI's activity and callback API [U]
 *    (muptiActivityRegisterCallbacks, muptiActivityEnable, muptiActivityGetNextRecord,
 *    muptiActivityFlushAll, muptiSubscribe, ...).
 *  - Records [U: the struct names third-party decoders read]: MUpti_ActivityKernel6,
 *    MUpti_ActivityMemcpy4, MUpti_ActivityMemset3, MUpti_ActivityAPI,
 *    MUpti_ActivityExternalCorrelation; their layouts [I] are CUPTI's of the same names
 *    (Kernel6 168 B, Memcpy4 80 B, Memset3 80 B, API 40 B, external correlation 24 B), read
 *    through the engine's checked CUPTI prefixes. Kinds and result codes [I]: CUPTI's.
 *  - Callback ids [U for the ones listed as seen]: CUDA's runtime numbering with musa*
 *    names (musaMalloc 20, musaMemcpy 31, musaMemcpyAsync 41, musaStreamSynchronize 131,
 *    musaLaunchKernel 211, musaLaunchKernelExC 430; 531 ids); the others below [I]. An id
 *    not in the table is shown as musaRuntime#<cbid> and counted in unresolved_names.
 *  - No injection hook [U: the MUSA runtime loads no injection library]: `devtrace record`
 *    preloads the collector, as for every backend without one.
 *  - Occupancy: musaDeviceGetAttribute / musaGetDeviceCount in libmusart.so [U: names],
 *    with CUDA's attribute numbers [I]. */
#include "pti_decode.h"

/* MUpti record sizes [I: CUPTI's structs of the same names]. */
#define DT_MUPTI_KERNEL6_SIZE 168u
#define DT_MUPTI_MEMCPY4_SIZE 80u
#define DT_MUPTI_MEMSET3_SIZE 80u
#define DT_MUPTI_API_SIZE 40u
#define DT_MUPTI_EXTERNAL_SIZE 24u
_Static_assert(sizeof(dt_cupti_kernel_prefix) <= DT_MUPTI_KERNEL6_SIZE, "the kernel prefix fits Kernel6");
_Static_assert(sizeof(dt_cupti_memcpy_prefix) <= DT_MUPTI_MEMCPY4_SIZE, "the memcpy prefix fits Memcpy4");
_Static_assert(offsetof(dt_cupti_memset4, tail) <= DT_MUPTI_MEMSET3_SIZE, "the memset prefix fits Memset3");
_Static_assert(sizeof(dt_cupti_api) == DT_MUPTI_API_SIZE, "MUpti_ActivityAPI is 40 bytes");
_Static_assert(sizeof(dt_cupti_external_correlation) == DT_MUPTI_EXTERNAL_SIZE,
               "MUpti_ActivityExternalCorrelation is 24 bytes");

/* MUSA runtime callback ids, sorted: CUDA's numbers with MUSA's names. */
static const dt_pti_cbid_name musa_runtime_names[] = {
    {3, "musaGetDeviceCount"},
    {16, "musaSetDevice"},
    {17, "musaGetDevice"},
    {20, "musaMalloc"},
    {22, "musaFree"},
    {31, "musaMemcpy"},
    {41, "musaMemcpyAsync"},
    {49, "musaMemset"},
    {51, "musaMemsetAsync"},
    {131, "musaStreamSynchronize"},
    {135, "musaEventRecord"},
    {142, "musaMemset3D"},
    {165, "musaDeviceSynchronize"},
    {211, "musaLaunchKernel"},
    {430, "musaLaunchKernelExC"},
    {440, "musaGetDeviceProperties"},
};

/* One layout per kind, for every library version (no version is known to change them). */
static const dt_pti_layout musa_layouts[] = {
    {10, 0, UINT32_MAX, DT_MUPTI_KERNEL6_SIZE, sizeof(dt_cupti_kernel_prefix), DEVTRACE_KIND_KERNEL,
     DT_PTI_DECODE_CUPTI_KERNEL, "MUpti_ActivityKernel6"},
    {3, 0, UINT32_MAX, DT_MUPTI_KERNEL6_SIZE, sizeof(dt_cupti_kernel_prefix), DEVTRACE_KIND_KERNEL,
     DT_PTI_DECODE_CUPTI_KERNEL, "MUpti_ActivityKernel6"},
    {1, 0, UINT32_MAX, DT_MUPTI_MEMCPY4_SIZE, sizeof(dt_cupti_memcpy_prefix), DEVTRACE_KIND_MEMCPY,
     DT_PTI_DECODE_CUPTI_MEMCPY, "MUpti_ActivityMemcpy4"},
    {2, 0, UINT32_MAX, DT_MUPTI_MEMSET3_SIZE, offsetof(dt_cupti_memset4, tail), DEVTRACE_KIND_MEMSET,
     DT_PTI_DECODE_CUPTI_MEMSET, "MUpti_ActivityMemset3"},
    {5, 0, UINT32_MAX, DT_MUPTI_API_SIZE, sizeof(dt_cupti_api), DEVTRACE_KIND_RUNTIME, DT_PTI_DECODE_CUPTI_API,
     "MUpti_ActivityAPI"},
    {39, 0, UINT32_MAX, DT_MUPTI_EXTERNAL_SIZE, sizeof(dt_cupti_external_correlation), DEVTRACE_KIND_EXTCORR,
     DT_PTI_DECODE_CUPTI_EXTERNAL, "MUpti_ActivityExternalCorrelation"},
};

const dt_pti_descriptor dt_pti_musa_descriptor = {
    .name = "musa",
    .vendor_api = "MUPTI",
    .override_env = "DEVTRACE_MUSA_LIBRARY",
    .library_names = {"libmupti.so"},
    .sdk_env = {"MUSA_HOME", "MUSA_PATH"},
    .sdk_default_roots = {"/usr/local/musa"},
    .sdk_subdirs = {"lib", "lib64"},
    .system_names = {"libmupti.so"},
    .search_process = 1,
    .symbol_prefixes = {"mupti"},
    .required = DT_PTI_REQUIRED_DEFAULT,
    .kinds = {.memcpy = 1, .memset = 2, .kernel = 3, .concurrent_kernel = 10, .runtime = 5, .external_correlation = 39},
    .results = {.success = 0, .max_limit_reached = 12, .not_compatible = 14, .multiple_subscribers = 39},
    .external_kind_custom0 = 3,
    .refuse_from_version = UINT32_MAX, /* unknown whether MUPTI survives a refused buffer: never refuse */
    .layouts = musa_layouts,
    .nlayouts = sizeof musa_layouts / sizeof musa_layouts[0],
    .copy_kinds = dt_pti_cupti_copy_kinds, /* CUPTI's memcpy kind numbers [I] */
    .ncopy_kinds = DT_PTI_CUPTI_NCOPY_KINDS,
    .runtime_names = musa_runtime_names,
    .nruntime_names = sizeof musa_runtime_names / sizeof musa_runtime_names[0],
    .unknown_runtime_prefix = "musaRuntime",
    .attribute_fn = {"musaDeviceGetAttribute"},
    .device_count_fn = {"musaGetDeviceCount"},
    .runtime_libraries = {"libmusart.so"},
    .device_name_prefix = "MUSA GPU",
    .quirks = DT_PTI_QUIRK_VENDOR_CLOCK,
};

DT_PTI_BACKEND(dt_backend_musa, dt_pti_musa_descriptor, .name = "musa", .description = "Moore Threads MUSA (MUPTI)",
               .caps = DT_CAP_KERNEL_LAUNCH | DT_CAP_OCCUPANCY | DT_CAP_EXTERNAL, .validated = DT_VALIDATED_EMULATED,
               .validation_note = "facts from third-party code using MUPTI, record layouts inferred from CUPTI's; "
                                  "tested against the MUPTI emulator only; not run on MUSA hardware by this project",
               .runtime_category = "privateuse1_runtime", .load_method = DEVTRACE_LOAD_PRELOAD);
