/* emu.h: the emulated accelerator runtime shared by every vendor ABI emulator.
 *
 * A vendor emulator (cupti_emu.c, mcpti_emu.c) is a TABLE (struct emu_vendor: kind
 * numbers, record layouts as {field, byte offset, width}, callback ids, result codes,
 * clock, quirks) plus thin exported wrappers with the vendor's symbol names. Everything
 * else lives here: the activity buffer protocol, record writing, the per-stream device
 * timeline, external correlation stacks, the subscriber callback, fault injection and
 * the driving API (devemu.h). Internal: nothing here is exported from the .so files
 * except through EMU_EXPORT. */
#ifndef DEVEMU_EMU_H
#define DEVEMU_EMU_H

#include <stddef.h>
#include <stdint.h>

#include "devemu.h"
#include "wl.h"

#define EMU_EXPORT __attribute__((visibility("default")))

/* ---- the vendor-neutral C types of the CUPTI-shaped ABI ---- */
typedef int emu_result;    /* CUptiResult / MCptiResult: an int-sized enum */
typedef void *emu_context; /* CUcontext / MCcontext */
typedef void (*emu_buffer_request_fn)(uint8_t **buffer, size_t *size, size_t *max_records);
typedef void (*emu_buffer_complete_fn)(emu_context ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                       size_t valid_size);
/* The completion callback of vendors that pass no context or stream (MSPTI). */
typedef void (*emu_buffer_complete3_fn)(uint8_t *buffer, size_t size, size_t valid_size);
typedef void (*emu_callback_fn)(void *userdata, int domain, uint32_t cbid, const void *cbdata);
typedef uint64_t (*emu_timestamp_fn)(void);

/* ---- record layouts ---- */

/* The values a record or callback-data block can carry; a layout says where each goes. */
typedef enum emu_field {
    EMU_F_KIND,
    EMU_F_START,
    EMU_F_END,
    EMU_F_COMPLETED,
    EMU_F_QUEUED,
    EMU_F_SUBMITTED,
    EMU_F_DEVICE,
    EMU_F_CONTEXT,
    EMU_F_STREAM,
    EMU_F_CORRELATION,
    EMU_F_RUNTIME_CORRELATION, /* memcpy: the runtime API's id (no driver layer here: the same) */
    EMU_F_GRID_X,
    EMU_F_GRID_Y,
    EMU_F_GRID_Z,
    EMU_F_BLOCK_X,
    EMU_F_BLOCK_Y,
    EMU_F_BLOCK_Z,
    EMU_F_REGISTERS,
    EMU_F_STATIC_SMEM,
    EMU_F_DYNAMIC_SMEM,
    EMU_F_GRID_ID,
    EMU_F_NAME,        /* const char *: the kernel's name; in an API record, the call's name */
    EMU_F_KERNEL_TYPE, /* const char *: the vendor's kernel type string (emu_vendor.kernel_type) */
    EMU_F_COPY_KIND,
    EMU_F_SRC_KIND,
    EMU_F_DST_KIND,
    EMU_F_FLAGS,
    EMU_F_BYTES,
    EMU_F_VALUE,
    EMU_F_MEMORY_KIND,
    EMU_F_CBID,
    EMU_F_PROCESS,
    EMU_F_THREAD,
    EMU_F_RETURN_VALUE,
    EMU_F_EXTERNAL_KIND,
    EMU_F_EXTERNAL_ID,
    /* callback data (CUpti_CallbackData) */
    EMU_F_CB_SITE,
    EMU_F_CB_FUNCTION_NAME,    /* const char * */
    EMU_F_CB_FUNCTION_PARAMS,  /* const void * */
    EMU_F_CB_RETURN_VALUE_PTR, /* void * */
    EMU_F_CB_SYMBOL_NAME,      /* const char * */
    EMU_F_CB_CONTEXT_PTR,      /* the context handle */
    EMU_F_CB_CONTEXT_UID,
    EMU_F_CB_CORRELATION_DATA, /* uint64_t * */
    /* collectives, markers, memory (MSPTI) */
    EMU_F_DATA_TYPE,   /* the vendor's number of the collective's data type */
    EMU_F_ELEMENTS,    /* a collective's element count */
    EMU_F_ALGORITHM,   /* const char * */
    EMU_F_COMM_NAME,   /* const char * */
    EMU_F_MARKER_FLAG, /* the vendor's start/end/instant flag */
    EMU_F_SOURCE_KIND, /* host or device */
    EMU_F_TIMESTAMP,   /* a point in time (markers) */
    EMU_F_MARKER_ID,   /* pairs a range's start and end */
    EMU_F_MEMORY_OP,   /* allocation or release */
    EMU_F_ADDRESS,     /* a device address */
    EMU_F_COUNT
} emu_field;

/* One field of a record: where it sits and how many bytes it takes (1, 2, 4 or 8). */
typedef struct emu_field_at {
    uint8_t field; /* emu_field */
    uint8_t width;
    uint16_t offset;
} emu_field_at;

typedef struct emu_layout {
    const char *name; /* the vendor's struct name, for messages */
    uint32_t size;    /* the full record size: GetNextRecord advances by it */
    uint32_t nfields;
    const emu_field_at *fields;
    int packed; /* fields may sit at any offset (#pragma pack(1) records, MSPTI) */
} emu_layout;

#define EMU_LAYOUT(struct_name, record_size, field_table)                                                          \
    {                                                                                                              \
        (struct_name), (record_size), (uint32_t)(sizeof(field_table) / sizeof((field_table)[0])), (field_table), 0 \
    }
#define EMU_LAYOUT_PACKED(struct_name, record_size, field_table)                                                   \
    {                                                                                                              \
        (struct_name), (record_size), (uint32_t)(sizeof(field_table) / sizeof((field_table)[0])), (field_table), 1 \
    }

/* The field's entry in a layout, or NULL. */
const emu_field_at *emu_layout_find(const emu_layout *layout, int field);

/* ---- the vendor table ---- */

typedef struct emu_kind_numbers {
    uint32_t memcpy;
    uint32_t memset;
    uint32_t kernel;
    uint32_t driver;
    uint32_t runtime;
    uint32_t concurrent_kernel;
    uint32_t external_correlation;
    uint32_t max_valid;     /* kinds 1..max_valid may be enabled */
    uint32_t communication; /* 0: the vendor has no collective records */
    uint32_t marker;        /* 0: no marker records */
    uint32_t memory;        /* 0: no memory records */
} emu_kind_numbers;

typedef struct emu_result_codes {
    emu_result success;
    emu_result invalid_parameter;
    emu_result invalid_operation;
    emu_result max_limit_reached; /* GetNextRecord: end of buffer */
    emu_result not_initialized;
    emu_result queue_empty; /* PopExternalCorrelationId on an empty stack */
    emu_result invalid_kind;
    emu_result multiple_subscribers;
    emu_result unknown;
} emu_result_codes;

/* How the `malformed=N` fault makes a bad record for this vendor. */
typedef enum emu_malformed_style {
    EMU_MALFORMED_UNKNOWN_KIND = 1,     /* a kind the tracer does not know; the iterator skips its size */
    EMU_MALFORMED_INVALID_FIELDS = 2,   /* a kernel record with grid 0 and correlation 0 */
    EMU_MALFORMED_END_BEFORE_START = 3, /* a kernel record that ends 1 us before it starts */
} emu_malformed_style;

/* Faults (DEVEMU_FAULTS); a vendor lists the ones it can emulate. */
enum {
    EMU_FAULT_ZERO_TIME = 1u << 0,
    EMU_FAULT_CLOCK = 1u << 1, /* clock-epoch and clock-rate */
    EMU_FAULT_DROP = 1u << 2,
    EMU_FAULT_REFUSE_BUFFER = 1u << 3,
    EMU_FAULT_SUBSCRIBE_FAIL = 1u << 4,
    EMU_FAULT_MALFORMED = 1u << 5,
    EMU_FAULT_SMALL_BUFFER = 1u << 6,
    EMU_FAULT_STALE_ITERATOR = 1u << 7,
    EMU_FAULT_VENDOR_PRESET = 1u << 8, /* the vendor's named preset, e.g. maca-3.8 */
    EMU_FAULT_FLUSH_HANG = 1u << 9,    /* the vendor's FlushAll never returns (or late) */
};
/* Faults of the core that every vendor emulates, whatever its table lists. */
#define EMU_FAULTS_EVERY_VENDOR EMU_FAULT_FLUSH_HANG

typedef struct emu_vendor {
    const char *name;          /* "cupti": in messages and devemu_vendor() */
    const char *result_prefix; /* "CUPTI_": GetResultString gives "CUPTI_ERROR_MAX_LIMIT_REACHED" */
    uint32_t api_version;      /* what GetVersion reports */
    emu_kind_numbers kind;
    uint32_t external_kind_custom0; /* the external-correlation kind devemu_op_push falls back to */
    uint32_t external_kind_limit;   /* valid external kinds are 1..limit-1 */
    uint32_t callback_domain_runtime;
    uint32_t callback_domain_limit; /* valid domains are 1..limit-1 */
    uint32_t callback_site_enter, callback_site_exit;
    uint32_t cbid_limit; /* valid runtime cbids are 0..limit-1 */
    emu_result_codes result;
    emu_layout kernel, memcpy, memset, api, external_correlation, callback_data;
    /* memcpy direction and memory kinds, indexed by wl_copy_dir */
    uint32_t copy_kind[4], src_memory_kind[4], dst_memory_kind[4];
    uint32_t memset_memory_kind;
    uint32_t memcpy_flags_sync, memset_flags_async;
    emu_malformed_style malformed_style;
    uint32_t bogus_kind, bogus_size; /* EMU_MALFORMED_UNKNOWN_KIND: the record injected */
    uint32_t cbid[WL_CALL_COUNT];    /* the runtime callback id of each generic call */
    const char *api_name[WL_CALL_COUNT];
    const char *injection_env; /* the env var naming the injection library, or NULL */
    int64_t clock_epoch_ns;    /* vendor clock = (CLOCK_REALTIME - epoch) * rate */
    double clock_rate;
    unsigned faults_supported;  /* EMU_FAULT_* */
    const char *preset_name;    /* EMU_FAULT_VENDOR_PRESET: the name, e.g. "maca-3.8" */
    const char *preset_spec;    /* ... and what it expands to */
    const char *kernel_type;    /* EMU_F_KERNEL_TYPE of kernel records, or NULL */
    uint64_t first_correlation; /* the first correlation id (0: 1); ids are u64, written at the
                                   layout's width */
    /* A vendor whose callback data carries more than the layout's fields (ROCtracer's args
     * union) completes the block here, once per call, after the fields; or NULL. */
    void (*complete_callback_data)(uint8_t *block, int call, const wl_stmt *st);
    /* Collective, marker and memory records, for a vendor whose kind numbers name them. */
    emu_layout communication, marker, memory;
    uint32_t dtype[WL_DTYPE_COUNT];             /* the vendor's data type number, by wl_dtype */
    uint32_t marker_start, marker_end;          /* the vendor's marker flags (host side) */
    uint32_t memory_allocation, memory_release; /* the vendor's memory operation numbers */
    /* A launch with levels= is also recorded at those API levels below the call, in the API
     * record layout, with the call's correlation id, nested inside it, around the device
     * work's placement: the record kind of each level (0: the vendor has none) and the name
     * of the launch there (NULL: the kernel's name). */
    uint32_t level_kind[WL_LEVEL_COUNT];
    const char *level_name[WL_LEVEL_COUNT];
} emu_vendor;

/* ---- faults ---- */

typedef struct emu_faults {
    uint64_t zero_time;     /* extra kernel records with start == end == 0 */
    uint64_t drop;          /* the first N device records are dropped (counted) */
    uint64_t refuse_buffer; /* the first N buffer requests are refused */
    uint64_t malformed;     /* extra bad records between valid ones */
    size_t small_buffer;    /* use at most this many bytes of each buffer; 0 = off */
    int subscribe_fail;
    int stale_iterator;
    int has_epoch, epoch_at_load, has_rate;
    int64_t clock_epoch_ns;
    double clock_rate;
    int flush_hang;         /* the vendor's FlushAll blocks ... */
    uint64_t flush_hang_ms; /* ... this long before it flushes; 0 = for ever */
} emu_faults;

#define EMU_SMALL_BUFFER_DEFAULT 1024

/* Parses a DEVEMU_FAULTS spec for vendor v; 0, or -1 with err = "devemu: ...". */
int emu_faults_parse(const char *spec, const emu_vendor *v, emu_faults *out, char *err, size_t errlen);

/* ---- the core (emu_core.c) ---- */

/* Installs the vendor table and faults; resets all activity state. */
void emu_core_install(const emu_vendor *v, const emu_faults *f, uint64_t load_realtime_ns);
const emu_vendor *emu_vendor_get(void);
void emu_core_reset(void);

uint64_t emu_now(void); /* the vendor clock */
emu_result emu_get_timestamp(uint64_t *ts);
emu_result emu_register_timestamp_callback(emu_timestamp_fn fn);

emu_result emu_register_buffers(emu_buffer_request_fn request, emu_buffer_complete_fn complete);
/* The same for a completion callback without context and stream. */
emu_result emu_register_buffers3(emu_buffer_request_fn request, emu_buffer_complete3_fn complete);
emu_result emu_activity_enable(int kind, int enable);
emu_result emu_flush_all(uint32_t flag);
emu_result emu_next_record(uint8_t *buffer, size_t valid_size, void **record);
emu_result emu_dropped_records(size_t *dropped);
emu_result emu_push_external(int kind, uint64_t id);
emu_result emu_pop_external(int kind, uint64_t *id);
emu_result emu_result_string(emu_result code, const char **str);

emu_result emu_subscribe(void **handle, emu_callback_fn fn, void *userdata);
emu_result emu_unsubscribe(void *handle);
emu_result emu_enable_domain(uint32_t enable, void *handle, int domain);
emu_result emu_enable_callback(uint32_t enable, void *handle, int domain, uint32_t cbid);

/* The generic call whose runtime cbid is cbid, or -1. */
int emu_call_for_cbid(uint32_t cbid);
/* Nonzero while the calling thread is inside the tracer's buffer-completed callback. */
int emu_in_buffer_completed(void);

/* The device id device records carry (the workload's first device). */
void emu_core_set_device(uint32_t device_id);
/* Replaces the faults and re-arms their counters. */
void emu_core_set_faults(const emu_faults *f);
void emu_stats_get(devemu_stats *out);

/* One runtime call: callbacks, records, device timeline. st is NULL for a plain API
 * call, else the launch/memcpy/memset/sync statement it performs. */
int emu_runtime_call(int call, const wl_stmt *st);
/* A marker range begins (WL_STMT_MARK_PUSH) or the innermost one ends (WL_STMT_MARK_POP) on the
 * calling thread: one marker record, when the vendor has them and the kind is enabled. */
void emu_marker(const wl_stmt *st);

/* ---- the driving side (emu_drive.c) ---- */

/* Called from each emulator's constructor: reads DEVEMU_FAULTS (a bad spec prints one
 * line and exits 2) and installs the vendor. */
void emu_install(const emu_vendor *v);
/* Loads the injection library named by the vendor's env var, once, before the first call. */
void emu_ensure_injected(void);
/* cudaDeviceGetAttribute semantics with CUDA attribute numbers: 0, 1 (invalid value)
 * or 101 (invalid device). */
int emu_device_attribute(int *value, int attr, int device);
int emu_device_count(int *count);

#endif /* DEVEMU_EMU_H */
