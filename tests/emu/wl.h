/* wl.h: the workload (.wl) file format used by the vendor ABI emulators.
 *
 * A workload is a list of statements (grammar in shared/workloads/parity.wl):
 * `device`, `op push|pop`, `api call=`, `launch`, `memcpy`, `memset`, `sync`.
 * The parser is strict (every unknown statement, key or value is an error naming
 * the file and line) and safe on arbitrary bytes: wl_parse_buffer is the fuzz entry.
 * wl_expected_counts derives from a parsed file what a tracer must report, so tests
 * compare against the file instead of hard-coding numbers. */
#ifndef DEVEMU_WL_H
#define DEVEMU_WL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The generic runtime calls (DESIGN.md, "Generic runtime calls"). The values are
 * stable: vendor tables index their callback ids and names with them. */
#define WL_CALL_MAP(X)                                \
    X(GET_DEVICE, "get_device")                       \
    X(GET_DEVICE_COUNT, "get_device_count")           \
    X(GET_DEVICE_PROPERTIES, "get_device_properties") \
    X(SET_DEVICE, "set_device")                       \
    X(MALLOC, "malloc")                               \
    X(FREE, "free")                                   \
    X(EVENT_RECORD, "event_record")                   \
    X(LAUNCH, "launch")                               \
    X(MEMCPY, "memcpy")                               \
    X(MEMSET, "memset")                               \
    X(SYNC_STREAM, "sync_stream")                     \
    X(SYNC_DEVICE, "sync_device")                     \
    X(COLLECTIVE, "collective")

typedef enum wl_call {
#define WL__CALL_ENUM(id, name) WL_CALL_##id,
    WL_CALL_MAP(WL__CALL_ENUM)
#undef WL__CALL_ENUM
        WL_CALL_COUNT
} wl_call;

/* "get_device" for WL_CALL_GET_DEVICE; NULL when out of range. */
const char *wl_call_name(int call);
/* The wl_call for a generic name of len bytes, or -1. */
int wl_call_from_name(const char *name, size_t len);

typedef enum wl_stmt_kind {
    WL_STMT_DEVICE = 1,
    WL_STMT_OP_PUSH,
    WL_STMT_OP_POP,
    WL_STMT_API,
    WL_STMT_LAUNCH,
    WL_STMT_MEMCPY,
    WL_STMT_MEMSET,
    WL_STMT_SYNC,
    WL_STMT_COLLECTIVE, /* a collective of a communicator: one runtime call, device work on a stream */
    WL_STMT_MARK_PUSH,  /* a marker range begins on the calling thread (no runtime call) */
    WL_STMT_MARK_POP,   /* the innermost marker range ends */
    WL_STMT_ALLOC,      /* device memory allocated: the malloc call and a memory record */
    WL_STMT_FREE        /* device memory released: the free call and a memory record */
} wl_stmt_kind;

typedef enum wl_copy_dir { WL_COPY_HTOD = 1, WL_COPY_DTOH = 2, WL_COPY_DTOD = 3 } wl_copy_dir;

/* The properties a `device` statement declares (the emulated device attributes). */
typedef struct wl_device {
    uint32_t id;
    char *name; /* owned */
    uint32_t sms;
    uint32_t warp;
    uint32_t max_threads_per_sm;
    uint32_t max_blocks_per_sm;
    uint32_t regs_per_sm;
    uint32_t smem_per_sm;
    uint32_t max_threads_per_block;
} wl_device;

/* The API levels below the call a launch can also be recorded at (launch levels=), for
 * vendors that record one call at several levels (MSPTI: node and runtime below ACL). */
typedef enum wl_level { WL_LEVEL_NODE, WL_LEVEL_RUNTIME, WL_LEVEL_COUNT } wl_level;

typedef struct wl_launch {
    char *kernel;    /* owned: the mangled name */
    uint32_t levels; /* 1u << wl_level for each level the launch is also recorded at; 0: none */
    uint32_t grid[3];
    uint32_t block[3];
    uint32_t regs;     /* registers per thread, 0..65535 */
    uint32_t smem;     /* static shared memory, bytes */
    uint32_t dyn_smem; /* dynamic shared memory, bytes */
    uint64_t dur_ns;
    uint32_t stream;
} wl_launch;

typedef struct wl_memcpy {
    int dir; /* wl_copy_dir */
    uint64_t bytes;
    uint64_t dur_ns;
    uint32_t stream;
} wl_memcpy;

typedef struct wl_memset {
    uint64_t bytes;
    uint32_t value;
    uint64_t dur_ns;
    uint32_t stream;
} wl_memset;

typedef struct wl_sync {
    int device_wide; /* 1: what=device; 0: what=stream */
    uint32_t stream; /* what=stream only */
} wl_sync;

/* The data types a collective names (dtype=), in this order. */
#define WL_DTYPE_MAP(X) X(INT8, "int8", 1) X(INT32, "int32", 4) X(FP16, "fp16", 2) X(FP32, "fp32", 4) X(BF16, "bf16", 2)
typedef enum wl_dtype {
#define WL__DTYPE_ENUM(id, name, size) WL_DTYPE_##id,
    WL_DTYPE_MAP(WL__DTYPE_ENUM)
#undef WL__DTYPE_ENUM
        WL_DTYPE_COUNT
} wl_dtype;
/* Bytes of one element of a wl_dtype. */
unsigned wl_dtype_size(int dtype);

typedef struct wl_collective {
    char *call;     /* owned: the vendor's API name of the call (HcclAllReduce) */
    char *name;     /* owned: the operation's name in the device record */
    char *comm;     /* owned: the communicator */
    char *alg;      /* owned: the algorithm */
    uint64_t count; /* elements */
    int dtype;      /* wl_dtype */
    uint64_t dur_ns;
    uint32_t stream;
} wl_collective;

typedef struct wl_mark {
    char *name; /* owned */
    uint64_t id;
} wl_mark;

typedef struct wl_memory {
    uint64_t address;
    uint64_t bytes;
    uint32_t stream;
} wl_memory;

typedef struct wl_op_push {
    char *name; /* owned */
    uint64_t id;
} wl_op_push;

typedef struct wl_stmt {
    int kind; /* wl_stmt_kind */
    int line; /* 1-based line in the file */
    union {
        size_t device_index; /* WL_STMT_DEVICE: index into wl_workload.devices */
        wl_op_push op;
        int call; /* WL_STMT_API: wl_call */
        wl_launch launch;
        wl_memcpy memcpy;
        wl_memset memset;
        wl_sync sync;
        wl_collective collective;
        wl_mark mark;     /* WL_STMT_MARK_PUSH */
        wl_memory memory; /* WL_STMT_ALLOC, WL_STMT_FREE */
    } u;
} wl_stmt;

/* Expected device time of one CPU op id: the sum of dur_ns of the device statements
 * (launch, memcpy, memset) whose innermost open op has this id. */
typedef struct wl_op_expect {
    uint64_t id;
    const char *name; /* borrowed from the workload: the first push with this id */
    uint64_t device_ns;
    uint64_t device_events;
} wl_op_expect;

#define WL_MAX_DEVICES 16

typedef struct wl_workload {
    char *path; /* owned: the name used in messages */
    wl_device devices[WL_MAX_DEVICES];
    size_t ndevices;
    wl_stmt *stmts; /* owned */
    size_t nstmts;
    wl_op_expect *ops; /* owned: one entry per distinct op id, in first-push order */
    size_t nops;
} wl_workload;

/* What a tracer must report for one run of the workload. */
typedef struct wl_counts {
    uint64_t kernels;
    uint64_t memcpys;
    uint64_t memsets;
    uint64_t runtime; /* one per api, launch, memcpy, memset, sync, collective, alloc and free statement */
    uint64_t collectives;
    uint64_t marks;
    uint64_t memory_events;   /* alloc and free statements */
    uint64_t unattributed_ns; /* device ns outside every op */
    const wl_op_expect *ops;  /* borrowed from the workload */
    size_t nops;
} wl_counts;

/* 0 on success; -1 with err = "FILE:LINE: message" otherwise (out is then empty). */
int wl_parse_file(const char *path, wl_workload *out, char *err, size_t errlen);
/* Parses len bytes of text (any bytes; no NUL terminator needed). name is used in
 * messages; NULL means "<buffer>". */
int wl_parse_buffer(const char *text, size_t len, const char *name, wl_workload *out, char *err, size_t errlen);
/* Releases what a successful parse allocated; accepts a zeroed or freed workload. */
void wl_free(wl_workload *w);

void wl_expected_counts(const wl_workload *w, wl_counts *out);
/* The expectation for op id, or NULL. */
const wl_op_expect *wl_find_op(const wl_workload *w, uint64_t id);

#ifdef __cplusplus
}
#endif
#endif /* DEVEMU_WL_H */
