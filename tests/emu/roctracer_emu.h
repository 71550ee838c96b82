/* roctracer_emu.h: the ROCtracer emulator (libroctracer-emu.so): its vendor table, the
 * numbers it shares with its tests, and the ROCtracer and HIP functions it exports.
 *
 * ROCtracer is not CUPTI-shaped: the library owns the activity buffers (a pool opened
 * with a properties struct), hands [begin, end) of fixed 64-byte records to one
 * completion callback on its own thread, and calls a per-domain API callback
 * void(domain, cid, data, arg) with a hip_api_data_t. roctracer_emu.c adapts the shared
 * emulated runtime (emu_core.c) to that protocol through its vendor table:
 *  - the core writes "staged" 64-byte records through roctracer_table.c's layouts (every
 *    field already at its ROCtracer offset, a small staging kind at offset 0); before a
 *    buffer is handed to the tracer the adapter rewrites domain, kind and op in place and
 *    copies kernel names into a scratch area that is poisoned and freed once the
 *    callback returns (names in newer ROCtracer live in the pool buffer);
 *  - buffers come from the pool's allocator; full ones and flushes go to a consumer
 *    thread that calls buffer_callback_fun, one at a time, as ROCtracer's MemoryPool;
 *  - the core's CUPTI-shaped subscriber callback becomes the HIP_API callback: the core's
 *    callback data is the whole hip_api_data_t, its launch, copy and fill arguments
 *    filled in from the workload statement by the table's complete_callback_data.
 * Numbers marked [H] are from the public ROCtracer/HIP headers, [U] from code that ran
 * on the hardware, [I] inference; everything else is the emulator's own choice. */
#ifndef DEVEMU_ROCTRACER_EMU_H
#define DEVEMU_ROCTRACER_EMU_H

#include <stddef.h>
#include <stdint.h>

#include "emu.h"

extern const emu_vendor emu_roctracer_vendor; /* roctracer_table.c */

/* ROCtracer numbers [H] (roctracer.h, roctracer_hip.h, roctracer_ext.h, prof_protocol.h). */
enum {
    EMU_ROC_STATUS_SUCCESS = 0,
    EMU_ROC_STATUS_ERROR = -1,
    EMU_ROC_STATUS_INVALID_DOMAIN = -2,
    EMU_ROC_STATUS_INVALID_ARGUMENT = -3,
    EMU_ROC_STATUS_DEFAULT_POOL_UNDEFINED = -4,
    EMU_ROC_STATUS_MISMATCHED_EXTERNAL_ID = -7,
};
enum { EMU_ROC_DOMAIN_HIP_OPS = 2, EMU_ROC_DOMAIN_HIP_API = 3, EMU_ROC_DOMAIN_EXT_API = 5, EMU_ROC_DOMAIN_NUMBER = 8 };
enum { EMU_ROC_OP_DISPATCH = 0, EMU_ROC_OP_COPY = 1, EMU_ROC_OP_BARRIER = 2, EMU_ROC_EXT_OP_EXTERN_ID = 1 };
/* HIP_OPS kinds measured on DTK [U] (vendor-abi.md). */
enum {
    EMU_ROC_KIND_KERNEL = 0x11F0,
    EMU_ROC_KIND_COPY_DTOH = 0x11F3,
    EMU_ROC_KIND_COPY_HTOD = 0x11F4,
    EMU_ROC_KIND_COPY_DTOD = 0x11F5,
    EMU_ROC_KIND_FILL = 0x1207,
};
#define EMU_ROC_RECORD_SIZE 64u

/* The staging kinds the core writes at offset 0 (its kind numbers in the table). */
enum {
    EMU_ROC_STAGED_MEMCPY = 1,
    EMU_ROC_STAGED_MEMSET = 2,
    EMU_ROC_STAGED_KERNEL = 3,
    EMU_ROC_STAGED_API = 5,
    EMU_ROC_STAGED_EXTERNAL = 6,
    EMU_ROC_STAGED_BOGUS = 0x0BAD, /* malformed=N: 64 bytes of 0xA5 behind this "domain" */
};

/* The emulated hip_api_data_t: {u64 correlation_id @0; u32 phase @8; union args @16
 * (EMU_ROC_ARGS_SIZE bytes here: its real size differs by HIP version [I]); u64 *phase_data}. */
#define EMU_ROC_ARGS_OFFSET 16u
#define EMU_ROC_ARGS_SIZE 256u
#define EMU_ROC_PHASE_DATA_OFFSET (EMU_ROC_ARGS_OFFSET + EMU_ROC_ARGS_SIZE)
#define EMU_ROC_API_DATA_SIZE (EMU_ROC_PHASE_DATA_OFFSET + 8u)

/* The emulated HIP API ids of the generic calls: deliberately not HIP's own numbers, so
 * a tracer must resolve them by name (roctracer_op_code). */
#define EMU_ROC_CID_LIMIT 1000u

/* roctracer_properties_t [H]. */
typedef void (*emu_roc_alloc_fn)(char **ptr, size_t size, void *arg);
typedef void (*emu_roc_buffer_fn)(const char *begin, const char *end, void *arg);
typedef struct emu_roc_properties {
    uint32_t mode;
    size_t buffer_size;
    emu_roc_alloc_fn alloc_fun;
    void *alloc_arg;
    emu_roc_buffer_fn buffer_callback_fun;
    void *buffer_callback_arg;
} emu_roc_properties;
_Static_assert(sizeof(emu_roc_properties) == 48, "roctracer_properties_t is 48 bytes");

typedef void (*emu_roc_api_callback)(uint32_t domain, uint32_t cid, const void *data, void *arg);

/* The exported ROCtracer API (signatures of roctracer.h / roctracer_ext.h 4.1; the
 * activity_domain_t enums are passed as uint32_t, the same in the x86-64 ABI). */
int roctracer_open_pool_expl(const emu_roc_properties *properties, void **pool);
int roctracer_close_pool_expl(void *pool);
int roctracer_enable_domain_activity_expl(uint32_t domain, void *pool);
int roctracer_disable_domain_activity(uint32_t domain);
int roctracer_flush_activity_expl(void *pool);
int roctracer_enable_domain_callback(uint32_t domain, emu_roc_api_callback callback, void *arg);
int roctracer_disable_domain_callback(uint32_t domain);
int roctracer_next_record(const void *record, const void **next);
const char *roctracer_op_string(uint32_t domain, uint32_t op, uint32_t kind);
int roctracer_op_code(uint32_t domain, const char *name, uint32_t *op, uint32_t *kind);
int roctracer_get_timestamp(uint64_t *timestamp);
int roctracer_activity_push_external_correlation_id(uint64_t id);
int roctracer_activity_pop_external_correlation_id(uint64_t *last_id);
const char *roctracer_error_string(void);
uint32_t roctracer_version_major(void);
uint32_t roctracer_version_minor(void);
void roctracer_start(void); /* resumes what roctracer_stop paused */
void roctracer_stop(void);  /* pauses every callback and activity record, process-wide */
/* The emulated HIP runtime's device queries, with HIP 5+ hipDeviceAttribute_t numbers;
 * not workload calls: no callback, no record. */
int hipDeviceGetAttribute(int *value, int attr, int device);
int hipGetDeviceCount(int *count);

#endif /* DEVEMU_ROCTRACER_EMU_H */
