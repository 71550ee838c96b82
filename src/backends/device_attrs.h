/* device_attrs.h: device properties for occupancy, read through a vendor runtime's
 * attribute query of CUDA's shape, int query(int *value, int attribute, int device)
 * (cudaDeviceGetAttribute, mcDeviceGetAttribute, hipDeviceGetAttribute, ...). The
 * attribute numbers are the vendor's: each backend passes its table, and judges
 * whether the answers allow occupancy. */
#ifndef DT_DEVICE_ATTRS_H
#define DT_DEVICE_ATTRS_H

#include <stddef.h>

#include "core/session.h"

typedef int (*dt_attribute_query_fn)(int *value, int attribute, int device);
typedef int (*dt_device_count_fn)(int *count);

/* The dt_device_props fields an attribute fills. */
typedef enum dt_device_field {
    DT_DEV_MAX_THREADS_PER_BLOCK,
    DT_DEV_SMEM_PER_BLOCK,
    DT_DEV_WARP_SIZE,
    DT_DEV_REGS_PER_BLOCK,
    DT_DEV_NUM_SMS,
    DT_DEV_MAX_THREADS_PER_SM,
    DT_DEV_COMPUTE_MAJOR,
    DT_DEV_COMPUTE_MINOR,
    DT_DEV_SMEM_PER_SM,
    DT_DEV_REGS_PER_SM,
    DT_DEV_MAX_BLOCKS_PER_SM
} dt_device_field;

typedef struct dt_device_attr {
    int attribute; /* the vendor's number */
    dt_device_field field;
    int needed; /* occupancy cannot be computed without it */
} dt_device_attr;

/* How many devices to read: count's answer (count NULL, failing or below 1: one), at
 * most DT_MAX_DEVICES. */
int dt_device_count(dt_device_count_fn count);

/* Fills *p for device dev: zeroed, its id, the name "<name_prefix> <dev>", then each
 * field from its attribute when query answers it with a value >= 0 (else 0), in table
 * order. When needed ones have no value, a note says how many and the first's number
 * ("occupancy unavailable for device 0: <query_name> gave no value for 2 attributes
 * (first: 81)"). Returns how many needed ones had no value; has_occupancy is left 0. */
int dt_device_attrs_read(dt_session *s, dt_attribute_query_fn query, const char *query_name, int dev,
                         const char *name_prefix, const dt_device_attr *attrs, size_t nattrs, dt_device_props *p);

#endif
