/* device_attrs.c: device properties from a vendor runtime's attribute query (see
 * device_attrs.h). */
#include "device_attrs.h"

#include <stdio.h>
#include <string.h>

int dt_device_count(dt_device_count_fn count)
{
    int n = 1;
    if (count && (count(&n) != 0 || n <= 0))
        n = 1;
    return n > DT_MAX_DEVICES ? DT_MAX_DEVICES : n;
}

static void set_field(dt_device_props *p, dt_device_field field, int v)
{
    switch (field) {
    case DT_DEV_MAX_THREADS_PER_BLOCK:
        p->max_threads_per_block = v;
        break;
    case DT_DEV_SMEM_PER_BLOCK:
        p->smem_per_block = (uint64_t)v;
        break;
    case DT_DEV_WARP_SIZE:
        p->warp_size = v;
        break;
    case DT_DEV_REGS_PER_BLOCK:
        p->regs_per_block = v;
        break;
    case DT_DEV_NUM_SMS:
        p->num_sms = v;
        break;
    case DT_DEV_MAX_THREADS_PER_SM:
        p->max_threads_per_sm = v;
        break;
    case DT_DEV_COMPUTE_MAJOR:
        p->compute_major = v;
        break;
    case DT_DEV_COMPUTE_MINOR:
        p->compute_minor = v;
        break;
    case DT_DEV_SMEM_PER_SM:
        p->smem_per_sm = (uint64_t)v;
        break;
    case DT_DEV_REGS_PER_SM:
        p->regs_per_sm = v;
        break;
    case DT_DEV_MAX_BLOCKS_PER_SM:
        p->max_blocks_per_sm = v;
        break;
    }
}

int dt_device_attrs_read(dt_session *s, dt_attribute_query_fn query, const char *query_name, int dev,
                         const char *name_prefix, const dt_device_attr *attrs, size_t nattrs, dt_device_props *p)
{
    int missing = 0, first_missing = 0;
    memset(p, 0, sizeof *p);
    p->id = dev;
    snprintf(p->name, sizeof p->name, "%s %d", name_prefix, dev);
    for (size_t i = 0; i < nattrs; i++) {
        int v = 0;
        if (query(&v, attrs[i].attribute, dev) == 0 && v >= 0) {
            set_field(p, attrs[i].field, v);
        } else {
            set_field(p, attrs[i].field, 0);
            if (attrs[i].needed && !missing++)
                first_missing = attrs[i].attribute;
        }
    }
    if (missing)
        dt_add_note(s, "occupancy unavailable for device %d: %s gave no value for %d attribute%s (first: %d)", dev,
                    query_name, missing, missing > 1 ? "s" : "", first_missing);
    return missing;
}
