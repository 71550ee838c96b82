/* ppu.c: the Alibaba PPU backend ("ppu"): HGPTI, a CUPTI-compatible tracing library, as a
 * descriptor of the CUPTI-family engine.
 *
 * Facts: [U] only (third-party code that ran on PPU hardware; no header seen by this
 * project), so the descriptor is tolerant: both symbol spellings (hgpti*, then cupti*),
 * CUDA record layouts decoded through their checked common prefix unless the library
 * reports a CUDA version, and these quirks:
 *  - KERNEL and CONCURRENT_KERNEL cannot both be enabled (HGPTI_ERROR_NOT_COMPATIBLE):
 *    CONCURRENT_KERNEL is tried first, KERNEL on refusal;
 *  - GetNextRecord can end a buffer with a NULL record;
 *  - its MAX_LIMIT_REACHED code differs from CUPTI's (value unknown): any error from
 *    GetNextRecord ends the buffer without counting it as malformed;
 *  - the clock differs from the host's in epoch and rate: clock samples at start, stop
 *    and every 100 ms while buffers complete map it (affine, piecewise).
 * SDK root: $PPU_SDK, $PPU_HOME. */
#include "pti_family.h"

const dt_pti_descriptor dt_pti_ppu_descriptor = {
    .name = "ppu",
    .vendor_api = "HGPTI",
    .override_env = "DEVTRACE_PPU_LIBRARY",
    .library_names = {"libhgpti.so", "libcupti.so"},
    .sdk_env = {"PPU_SDK", "PPU_HOME"},
    .sdk_default_roots = {NULL},
    .sdk_subdirs = {"lib64", "lib", "extras/CUPTI/lib64"},
    .system_names = {"libhgpti.so"},
    .search_process = 0, /* cupti* in the process would be NVIDIA's */
    .symbol_prefixes = {"hgpti", "cupti"},
    .required = DT_PTI_REQUIRED_DEFAULT,
    .kinds = {.memcpy = 1, .memset = 2, .kernel = 3, .concurrent_kernel = 10, .runtime = 5, .external_correlation = 39},
    .results = {.success = 0, .max_limit_reached = 12, .not_compatible = 14, .multiple_subscribers = 39},
    .external_kind_custom0 = 3,
    .refuse_from_version = UINT32_MAX, /* unknown whether a refusal is safe: never refuse */
    DT_PTI_CUDA_SHAPED_TABLES,
    .unknown_runtime_prefix = "ppuRuntime",
    .attribute_fn = {"cudaDeviceGetAttribute"},
    .device_count_fn = {"cudaGetDeviceCount"},
    .runtime_libraries = {"libcudart.so"},
    .device_name_prefix = "PPU",
    .quirks = DT_PTI_QUIRK_KERNEL_EXCLUSIVE | DT_PTI_QUIRK_NULL_RECORD_ENDS | DT_PTI_QUIRK_ANY_ERROR_ENDS |
              DT_PTI_QUIRK_VENDOR_CLOCK,
};

DT_PTI_BACKEND(dt_backend_ppu, dt_pti_ppu_descriptor, .name = "ppu", .description = "Alibaba PPU (HGPTI)",
               .caps = DT_CAP_KERNEL_LAUNCH | DT_CAP_OCCUPANCY | DT_CAP_EXTERNAL | DT_CAP_RAW_CAPTURE,
               .validated = DT_VALIDATED_EMULATED,
               .validation_note = "facts from third-party code that ran on PPU, not from vendor headers; tested "
                                  "against the CUPTI emulator only; not run on PPU hardware by this project",
               .runtime_category = "privateuse1_runtime", .load_method = DEVTRACE_LOAD_PRELOAD);
