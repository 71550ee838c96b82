/* pti_devices.c: device properties for the occupancy calculator, read through the
 * vendor's CUDA-style attribute query (the descriptor's attribute_fn and device_count_fn,
 * found in the process, its runtime libraries or the tracing library itself) with CUDA's
 * attribute numbers; without the query a note says why the trace has no occupancy. */
#include <string.h>

#include "pti_family.h"
#include "device_attrs.h"
#include "vendor_lib.h"

typedef void (*pti_any_fn)(void);

/* CUDA device attribute numbers (driver_types.h, cudaDeviceAttr). */
enum {
    CF_ATTR_MAX_THREADS_PER_BLOCK = 1,
    CF_ATTR_MAX_SHARED_MEMORY_PER_BLOCK = 8,
    CF_ATTR_WARP_SIZE = 10,
    CF_ATTR_MAX_REGISTERS_PER_BLOCK = 12,
    CF_ATTR_MULTIPROCESSOR_COUNT = 16,
    CF_ATTR_MAX_THREADS_PER_MULTIPROCESSOR = 39,
    CF_ATTR_COMPUTE_CAPABILITY_MAJOR = 75,
    CF_ATTR_COMPUTE_CAPABILITY_MINOR = 76,
    CF_ATTR_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81,
    CF_ATTR_MAX_REGISTERS_PER_MULTIPROCESSOR = 82,
    CF_ATTR_MAX_BLOCKS_PER_MULTIPROCESSOR = 106,
};

/* The CUDA attribute numbers (CF_ATTR_*) of each dt_device_props field. */
static const dt_device_attr pti_device_attrs[] = {
    {CF_ATTR_MAX_THREADS_PER_BLOCK, DT_DEV_MAX_THREADS_PER_BLOCK, 1},
    {CF_ATTR_MAX_SHARED_MEMORY_PER_BLOCK, DT_DEV_SMEM_PER_BLOCK, 0},
    {CF_ATTR_WARP_SIZE, DT_DEV_WARP_SIZE, 1},
    {CF_ATTR_MAX_REGISTERS_PER_BLOCK, DT_DEV_REGS_PER_BLOCK, 0},
    {CF_ATTR_MULTIPROCESSOR_COUNT, DT_DEV_NUM_SMS, 1},
    {CF_ATTR_MAX_THREADS_PER_MULTIPROCESSOR, DT_DEV_MAX_THREADS_PER_SM, 1},
    {CF_ATTR_COMPUTE_CAPABILITY_MAJOR, DT_DEV_COMPUTE_MAJOR, 0},
    {CF_ATTR_COMPUTE_CAPABILITY_MINOR, DT_DEV_COMPUTE_MINOR, 0},
    {CF_ATTR_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, DT_DEV_SMEM_PER_SM, 1},
    {CF_ATTR_MAX_REGISTERS_PER_MULTIPROCESSOR, DT_DEV_REGS_PER_SM, 1},
    {CF_ATTR_MAX_BLOCKS_PER_MULTIPROCESSOR, DT_DEV_MAX_BLOCKS_PER_SM, 1},
};

/* A vendor runtime function, in the process: global symbols, an already loaded runtime
 * library, then the tracing library itself (an emulator exports both). */
static pti_any_fn pti_runtime_symbol(const dt_pti_descriptor *d, void *handle, const char *const *names,
                                     const char **found)
{
    void *sym = dt_vlib_runtime_symbol(names, d->runtime_libraries, handle, found);
    pti_any_fn fn = NULL;
    memcpy(&fn, &sym, sizeof fn);
    return fn;
}

void dt_pti_read_devices(dt_pti_state *st, void *handle, const char *path)
{
    const dt_pti_descriptor *d = st->desc;
    if (!d->attribute_fn[0])
        return; /* the vendor has no CUDA-style attribute query (its facts_note says so) */
    const char *attr_name = d->attribute_fn[0], *count_name = NULL;
    dt_attribute_query_fn attr = (dt_attribute_query_fn)pti_runtime_symbol(d, handle, d->attribute_fn, &attr_name);
    if (!attr) {
        char names[256] = "", libs[256] = "";
        dt_text tn = {names, sizeof names, 0}, tl = {libs, sizeof libs, 0};
        int n = dt_vlib_names_count(d->attribute_fn);
        for (int i = 0; i < n; i++)
            dt_text_add(&tn, "%s%s", i ? (i == n - 1 ? " or " : ", ") : "", d->attribute_fn[i]);
        for (int i = 0; i < dt_vlib_names_count(d->runtime_libraries); i++)
            dt_text_add(&tl, ", %s", d->runtime_libraries[i]);
        dt_add_note(st->s,
                    "occupancy unavailable: no %s in the process (its global symbols%s, %s); the trace has "
                    "no deviceProperties and no occupancy keys",
                    names, libs, path);
        return;
    }
    dt_device_count_fn count = (dt_device_count_fn)pti_runtime_symbol(d, handle, d->device_count_fn, &count_name);
    int n = dt_device_count(count);
    for (int dev = 0; dev < n; dev++) {
        dt_device_props p;
        int missing =
            dt_device_attrs_read(st->s, attr, attr_name, dev, d->device_name_prefix ? d->device_name_prefix : "device",
                                 pti_device_attrs, sizeof pti_device_attrs / sizeof pti_device_attrs[0], &p);
        p.has_occupancy = missing == 0 && p.warp_size > 0 && p.num_sms > 0 && p.max_threads_per_sm > 0;
        dt_add_device(st->s, &p);
    }
}
