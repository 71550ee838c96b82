/* cupti.c: the NVIDIA CUPTI backend ("cupti"): the CUPTI-family engine with NVIDIA's
 * descriptor, and InitializeInjection, the entry point the CUDA driver calls in the
 * library named by CUDA_INJECTION64_PATH (how `devtrace record --backend cupti` starts
 * the collector inside the program).
 *
 * Facts (CUDA 13.0 toolkit headers, CUPTI_API_VERSION 130001; ../shared/vendor-abi.md):
 * kinds MEMCPY 1, MEMSET 2, KERNEL 3, DRIVER 4, RUNTIME 5, CONCURRENT_KERNEL 10,
 * EXTERNAL_CORRELATION 39; CUSTOM0 = 3; GetNextRecord ends a buffer with
 * MAX_LIMIT_REACHED (12); NOT_COMPATIBLE 14; MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED 39 (one
 * subscriber per process before CUPTI 13.3); refusing a buffer crashed CUPTI before API
 * version 27 (CUDA 12.9). Without a driver, CUDA 13.0's libcupti answers
 * cuptiActivityEnable with CUPTI_ERROR_UNKNOWN (999): the session is then unavailable. */
#include "pti_family.h"

const dt_pti_descriptor dt_pti_cupti_descriptor = {
    .name = "cupti",
    .vendor_api = "CUPTI",
    .override_env = "DEVTRACE_CUPTI_LIBRARY",
    .library_names = {"libcupti.so.13", "libcupti.so.12", "libcupti.so"},
    .sdk_env = {"CUDA_HOME", "CUDA_PATH"},
    .sdk_default_roots = {"/usr/local/cuda"},
    .sdk_subdirs = {"lib64", "extras/CUPTI/lib64"},
    .system_names = {"libcupti.so.13", "libcupti.so.12", "libcupti.so"},
    .search_process = 1,
    .symbol_prefixes = {"cupti"},
    .required = DT_PTI_REQUIRED_DEFAULT,
    .kinds = {.memcpy = 1, .memset = 2, .kernel = 3, .concurrent_kernel = 10, .runtime = 5, .external_correlation = 39},
    .results = {.success = 0, .max_limit_reached = 12, .not_compatible = 14, .multiple_subscribers = 39},
    .external_kind_custom0 = 3,
    .refuse_from_version = 27,
    DT_PTI_CUDA_SHAPED_TABLES,
    .unknown_runtime_prefix = "cudaRuntime",
    .attribute_fn = {"cudaDeviceGetAttribute"},
    .device_count_fn = {"cudaGetDeviceCount"},
    .runtime_libraries = {"libcudart.so.13", "libcudart.so.12", "libcudart.so"},
    .device_name_prefix = "CUDA device",
    .quirks = 0,
};

DT_PTI_BACKEND(dt_backend_cupti, dt_pti_cupti_descriptor, .name = "cupti", .description = "NVIDIA CUPTI",
               .caps = DT_CAP_KERNEL_LAUNCH | DT_CAP_OCCUPANCY | DT_CAP_EXTERNAL | DT_CAP_RAW_CAPTURE,
               .validated = DT_VALIDATED_HEADERS | DT_VALIDATED_EMULATED,
               .validation_note = "record mirrors checked against CUDA 13.0 headers; end to end against the CUPTI "
                                  "emulator; not run on an NVIDIA GPU by this project",
               .runtime_category = "cuda_runtime", .load_method = DEVTRACE_LOAD_INJECTION,
               .load_variable = "CUDA_INJECTION64_PATH");

/* Called by the CUDA driver (CUDA_INJECTION64_PATH=libdevtrace.so) during its
 * initialisation: the collector's session starts (through the core's hooks: nothing in a
 * program that links devtrace without the collector). Returns 1: the driver treats 0 as a
 * failed injection. */
DEVTRACE_EXPORT int InitializeInjection(void);

DEVTRACE_EXPORT int InitializeInjection(void)
{
    dt_pti_set_in_vendor_init(1); /* do not call the CUDA runtime from inside the driver's init */
    dt_core_autostart("cupti");
    dt_pti_set_in_vendor_init(0);
    return 1;
}
