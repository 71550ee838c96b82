/* iluvatar.c: the Iluvatar CoreX backend ("iluvatar"): CoreX ships a CUDA-compatible
 * tracing library under the CUDA name (libcupti.so in /usr/local/corex/lib64), so this
 * is NVIDIA's descriptor with CoreX's paths.
 *
 * Facts: [U] only (third-party code that ran on CoreX; no header seen by this project):
 * the library path, and CUPTI's symbols, kinds and record layouts. Records are decoded
 * through the CUDA layouts' checked common prefix unless the library reports a CUDA
 * API version; buffer requests are never refused (not known to be safe); the loader's
 * plain search and the process's own symbols are not used (they would find NVIDIA's
 * CUPTI). SDK root: $COREX_HOME, $COREX_PATH, else /usr/local/corex. */
#include "pti_family.h"

const dt_pti_descriptor dt_pti_iluvatar_descriptor = {
    .name = "iluvatar",
    .vendor_api = "CoreX CUPTI",
    .override_env = "DEVTRACE_ILUVATAR_LIBRARY",
    .library_names = {"libcupti.so", "libcupti.so.1"},
    .sdk_env = {"COREX_HOME", "COREX_PATH"},
    .sdk_default_roots = {"/usr/local/corex"},
    .sdk_subdirs = {"lib64", "lib"},
    .system_names = {NULL},
    .search_process = 0,
    .symbol_prefixes = {"cupti"},
    .required = DT_PTI_REQUIRED_DEFAULT,
    .kinds = {.memcpy = 1, .memset = 2, .kernel = 3, .concurrent_kernel = 10, .runtime = 5, .external_correlation = 39},
    .results = {.success = 0, .max_limit_reached = 12, .not_compatible = 14, .multiple_subscribers = 39},
    .external_kind_custom0 = 3,
    .refuse_from_version = UINT32_MAX,
    DT_PTI_CUDA_SHAPED_TABLES,
    .unknown_runtime_prefix = "cudaRuntime",
    .attribute_fn = {"cudaDeviceGetAttribute"},
    .device_count_fn = {"cudaGetDeviceCount"},
    .runtime_libraries = {"libcudart.so"},
    .device_name_prefix = "Iluvatar GPU",
    .quirks = DT_PTI_QUIRK_VENDOR_CLOCK,
};

DT_PTI_BACKEND(dt_backend_iluvatar, dt_pti_iluvatar_descriptor, .name = "iluvatar",
               .description = "Iluvatar CoreX (CUDA-compatible CUPTI)",
               .caps = DT_CAP_KERNEL_LAUNCH | DT_CAP_OCCUPANCY | DT_CAP_EXTERNAL | DT_CAP_RAW_CAPTURE,
               .validated = DT_VALIDATED_EMULATED,
               .validation_note = "facts from third-party code that ran on CoreX, not from vendor headers; tested "
                                  "against the CUPTI emulator only; not run on Iluvatar hardware by this project",
               .runtime_category = "privateuse1_runtime", .load_method = DEVTRACE_LOAD_PRELOAD);
