/* roctracer_devices.c: the device properties (occupancy inputs) of a ROCtracer session,
 * read at stop through hipDeviceGetAttribute found in the process: HIP 5.0's attribute
 * numbers (roctracer_records.h), each answer checked for plausibility, since HIP 4.x
 * numbered them differently. */
#include <string.h>

#include "core/session.h"
#include "device_attrs.h"
#include "roctracer_records.h"
#include "vendor_lib.h"

static const char *const roc_hip_runtimes[DT_VLIB_MAX_NAMES] = {
    "libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5", "libgalaxyhip.so.5", "libgalaxyhip.so"};

/* The HIP attribute numbers (HIP 5.0 and later) of each dt_device_props field; shared
 * memory per multiprocessor is read apart (AMD's own attribute first). */
static const dt_device_attr roc_device_attrs[] = {
    {DT_ROC_ATTR_MAX_THREADS_PER_BLOCK, DT_DEV_MAX_THREADS_PER_BLOCK, 1},
    {DT_ROC_ATTR_MAX_SMEM_PER_BLOCK, DT_DEV_SMEM_PER_BLOCK, 0},
    {DT_ROC_ATTR_WARP_SIZE, DT_DEV_WARP_SIZE, 1},
    {DT_ROC_ATTR_MAX_REGS_PER_BLOCK, DT_DEV_REGS_PER_BLOCK, 0},
    {DT_ROC_ATTR_SM_COUNT, DT_DEV_NUM_SMS, 1},
    {DT_ROC_ATTR_MAX_THREADS_PER_SM, DT_DEV_MAX_THREADS_PER_SM, 1},
    {DT_ROC_ATTR_COMPUTE_MAJOR, DT_DEV_COMPUTE_MAJOR, 0},
    {DT_ROC_ATTR_COMPUTE_MINOR, DT_DEV_COMPUTE_MINOR, 0},
    {DT_ROC_ATTR_MAX_REGS_PER_SM, DT_DEV_REGS_PER_SM, 0},
    {DT_ROC_ATTR_MAX_BLOCKS_PER_SM, DT_DEV_MAX_BLOCKS_PER_SM, 0},
};

/* A HIP runtime function in the process: global symbols, a HIP runtime already loaded,
 * then the tracing library itself (DTK's libgalaxyhip.so.5 is both; so is the emulator). */
static void *roc_runtime_symbol(const char *name, void *tracer)
{
    const char *const names[] = {name, NULL};
    return dt_vlib_runtime_symbol(names, roc_hip_runtimes, tracer, NULL);
}

void dt_roc_read_devices(dt_session *s, void *tracer)
{
    void *asym = roc_runtime_symbol("hipDeviceGetAttribute", tracer);
    void *csym = roc_runtime_symbol("hipGetDeviceCount", tracer);
    dt_attribute_query_fn attr;
    dt_device_count_fn count = NULL;
    if (!asym) {
        dt_add_note(s, "occupancy unavailable: no hipDeviceGetAttribute in the process");
        return;
    }
    memcpy(&attr, &asym, sizeof attr);
    if (csym)
        memcpy(&count, &csym, sizeof count);
    int n = dt_device_count(count);
    for (int dev = 0; dev < n; dev++) {
        dt_device_props p;
        int missing = dt_device_attrs_read(s, attr, "hipDeviceGetAttribute", dev, "HIP device", roc_device_attrs,
                                           sizeof roc_device_attrs / sizeof roc_device_attrs[0], &p);
        /* Shared memory per multiprocessor: AMD's own attribute, else the CUDA-compatible one. */
        int v = 0;
        if (attr(&v, DT_ROC_ATTR_AMD_MAX_SMEM_PER_SM, dev) == 0 && v > 0)
            p.smem_per_sm = (uint64_t)v;
        else if (attr(&v, DT_ROC_ATTR_SMEM_PER_SM, dev) == 0 && v > 0)
            p.smem_per_sm = (uint64_t)v;
        /* HIP 4.x numbered the attributes differently: refuse answers that cannot be right. */
        int plausible = (p.warp_size == 32 || p.warp_size == 64) && p.num_sms > 0 && p.num_sms <= 65536 &&
                        p.max_threads_per_block > 0 && p.max_threads_per_block <= 65536 &&
                        p.max_threads_per_sm >= p.max_threads_per_block && p.max_threads_per_sm <= 1 << 20;
        p.has_occupancy = missing == 0 && plausible;
        if (!missing && !plausible)
            dt_add_note(s,
                        "occupancy unavailable for device %d: hipDeviceGetAttribute answers are implausible "
                        "(warp size %d, %d multiprocessors, %d threads per block, %d per multiprocessor): a HIP "
                        "older than 5.0 numbers its attributes differently",
                        dev, p.warp_size, p.num_sms, p.max_threads_per_block, p.max_threads_per_sm);
        dt_add_device(s, &p);
    }
}
