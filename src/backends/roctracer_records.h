/* roctracer_records.h: our mirrors of the ROCtracer structures the roctracer backend
 * reads or passes (AMD ROCm, Hygon DTK), and the record decoder's interface, visible to
 * the unit tests. Never the vendor's headers: every number below comes from
 * ../shared/vendor-abi.md and the public ROCtracer 4.1 interface headers (roctracer.h,
 * roctracer_ext.h, roctracer_hip.h, ext/prof_protocol.h) and hip_prof_str.h, with the
 * marks of vendor-abi.md: [H] header, [U] code that ran on the hardware, [I] inference.
 * Each mirror asserts its size and the offset of every field read, so a wrong number
 * cannot compile.
 *
 * Not run on AMD or Hygon hardware by this project: tested against the ROCtracer
 * emulator (tests/emu/roctracer_emu.c) only. */
#ifndef DT_ROCTRACER_RECORDS_H
#define DT_ROCTRACER_RECORDS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/session.h"
#include "devtrace.h"

#define DT_ROC_OFFSET(type, field, at) \
    _Static_assert(offsetof(type, field) == (at), #type "." #field " must sit at byte " #at)
#define DT_ROC_SIZE(type, bytes) _Static_assert(sizeof(type) == (bytes), #type " must be " #bytes " bytes")

/* activity_domain_t [H]. */
enum {
    DT_ROC_DOMAIN_HSA_API = 0,
    DT_ROC_DOMAIN_HSA_OPS = 1,
    DT_ROC_DOMAIN_HIP_OPS = 2,
    DT_ROC_DOMAIN_HIP_API = 3,
    DT_ROC_DOMAIN_KFD_API = 4,
    DT_ROC_DOMAIN_EXT_API = 5,
    DT_ROC_DOMAIN_ROCTX = 6,
    DT_ROC_DOMAIN_HSA_EVT = 7,
    DT_ROC_DOMAIN_NUMBER = 8
};

/* hip_op_id_t [H] (roctracer_hip.h). */
enum { DT_ROC_OP_DISPATCH = 0, DT_ROC_OP_COPY = 1, DT_ROC_OP_BARRIER = 2 };

/* activity_api_phase_t [H]. */
enum { DT_ROC_PHASE_ENTER = 0, DT_ROC_PHASE_EXIT = 1 };

/* HIP_OPS record kinds: the ROCclr command types (OpenCL's CL_COMMAND_* numbers) that
 * ROCtracer puts in `kind`. Measured on DTK [U] (vendor-abi.md); the same constants are
 * spelled out by code that ran on ROCm (Kineto's RoctracerLogger). The directions of the
 * 2-D copies follow the 1-D ones (READ = device to host) [U: Kineto]. */
enum {
    DT_ROC_KIND_KERNEL = 0x11F0,      /* NDRANGE_KERNEL: a kernel dispatch */
    DT_ROC_KIND_TASK = 0x11F1,        /* TASK: a kernel dispatch (single work-item) */
    DT_ROC_KIND_COPY_DTOH = 0x11F3,   /* READ_BUFFER */
    DT_ROC_KIND_COPY_HTOD = 0x11F4,   /* WRITE_BUFFER */
    DT_ROC_KIND_COPY_DTOD = 0x11F5,   /* COPY_BUFFER */
    DT_ROC_KIND_COPY2D_DTOH = 0x1201, /* READ_BUFFER_RECT */
    DT_ROC_KIND_COPY2D_HTOD = 0x1202, /* WRITE_BUFFER_RECT */
    DT_ROC_KIND_COPY2D_DTOD = 0x1203, /* COPY_BUFFER_RECT */
    DT_ROC_KIND_FILL = 0x1207         /* FILL_BUFFER: a memset */
};

/* activity_record_t / roctracer_record_t [H] (ext/prof_protocol.h), 64 bytes. The unions:
 * @40 {device_id i32, queue_id u64 @48} (HIP_OPS) | {process_id u32, thread_id u32 @44}
 * (API domains) | {external_id u64} (EXT_API); @56 {bytes size_t | kernel_name const char*}.
 * Timestamps are ns in ROCtracer's clock (roctracer_get_timestamp). */
typedef struct dt_roc_record {
    uint32_t domain;         /* 0: activity_domain_t */
    uint32_t kind;           /* 4: HIP_OPS: DT_ROC_KIND_* */
    uint32_t op;             /* 8: HIP_OPS: DT_ROC_OP_*; API domains: the API id */
    uint32_t reserved;       /* 12: padding before the 8-byte union */
    uint64_t correlation_id; /* 16 */
    uint64_t begin_ns;       /* 24 */
    uint64_t end_ns;         /* 32 */
    int32_t device_id;       /* 40: or process_id; external_id u64 spans 40..47 */
    uint32_t thread_id;      /* 44 */
    uint64_t queue_id;       /* 48 */
    uint64_t payload;        /* 56: bytes (copies, fills) or kernel_name (dispatches) */
} dt_roc_record;
DT_ROC_SIZE(dt_roc_record, 64);
DT_ROC_OFFSET(dt_roc_record, domain, 0);
DT_ROC_OFFSET(dt_roc_record, kind, 4);
DT_ROC_OFFSET(dt_roc_record, op, 8);
DT_ROC_OFFSET(dt_roc_record, correlation_id, 16);
DT_ROC_OFFSET(dt_roc_record, begin_ns, 24);
DT_ROC_OFFSET(dt_roc_record, end_ns, 32);
DT_ROC_OFFSET(dt_roc_record, device_id, 40);
DT_ROC_OFFSET(dt_roc_record, thread_id, 44);
DT_ROC_OFFSET(dt_roc_record, queue_id, 48);
DT_ROC_OFFSET(dt_roc_record, payload, 56);
#define DT_ROC_RECORD_SIZE 64u

/* roctracer_properties_t [H] (roctracer.h): what roctracer_open_pool_expl takes. The
 * pool is two buffers of buffer_size bytes; buffer_callback_fun gets [begin, end) of
 * whole records when one fills or on a flush, on ROCtracer's own thread. */
typedef void (*dt_roc_alloc_fn)(char **ptr, size_t size, void *arg);
typedef void (*dt_roc_buffer_fn)(const char *begin, const char *end, void *arg);
typedef struct dt_roc_properties {
    uint32_t mode;                        /* 0 */
    size_t buffer_size;                   /* 8 */
    dt_roc_alloc_fn alloc_fun;            /* 16: NULL = malloc/realloc/free */
    void *alloc_arg;                      /* 24 */
    dt_roc_buffer_fn buffer_callback_fun; /* 32 */
    void *buffer_callback_arg;            /* 40 */
} dt_roc_properties;
DT_ROC_SIZE(dt_roc_properties, 48);
DT_ROC_OFFSET(dt_roc_properties, mode, 0);
DT_ROC_OFFSET(dt_roc_properties, buffer_size, 8);
DT_ROC_OFFSET(dt_roc_properties, alloc_fun, 16);
DT_ROC_OFFSET(dt_roc_properties, alloc_arg, 24);
DT_ROC_OFFSET(dt_roc_properties, buffer_callback_fun, 32);
DT_ROC_OFFSET(dt_roc_properties, buffer_callback_arg, 40);

/* activity_rtapi_callback_t [H]: data is a hip_api_data_t for the HIP_API domain. */
typedef void (*dt_roc_api_callback)(uint32_t domain, uint32_t cid, const void *data, void *arg);

/* The prefix of hip_api_data_t [H] (hip_prof_str.h): {u64 correlation_id; u32 phase;
 * union args (8-byte aligned); u64 *phase_data}. The union's size differs between HIP
 * versions, so nothing after it is read. */
typedef struct dt_roc_api_data {
    uint64_t correlation_id; /* 0 */
    uint32_t phase;          /* 8: DT_ROC_PHASE_* */
    uint32_t reserved;       /* 12 */
} dt_roc_api_data;
DT_ROC_SIZE(dt_roc_api_data, 16);
DT_ROC_OFFSET(dt_roc_api_data, correlation_id, 0);
DT_ROC_OFFSET(dt_roc_api_data, phase, 8);
#define DT_ROC_API_ARGS_OFFSET 16u

typedef struct dt_roc_dim3 {
    uint32_t x, y, z;
} dt_roc_dim3;
DT_ROC_SIZE(dt_roc_dim3, 12);

/* args.hipLaunchKernel [H] (also hipExtLaunchKernel's prefix, and hipLaunchCooperativeKernel's
 * through dim_blocks): {const void *function_address; dim3 numBlocks; dim3 dimBlocks;
 * void **args; ...}. What follows `args` differs by HIP version: older hip_prof_str.h has
 * {size_t sharedMemBytes @40; hipStream_t stream @48}; newer ones insert `void *args__val`
 * @40, moving sharedMemBytes to @48. dt_roc_launch_shared_bytes tells them apart. */
typedef struct dt_roc_launch_args {
    const void *function_address; /* 0 */
    dt_roc_dim3 num_blocks;       /* 8: the grid */
    dt_roc_dim3 dim_blocks;       /* 20: the block */
    void **args;                  /* 32 */
    uint64_t word40;              /* 40: sharedMemBytes (older) or args__val (newer) */
    uint64_t word48;              /* 48: stream (older) or sharedMemBytes (newer) */
} dt_roc_launch_args;
DT_ROC_SIZE(dt_roc_launch_args, 56);
DT_ROC_OFFSET(dt_roc_launch_args, num_blocks, 8);
DT_ROC_OFFSET(dt_roc_launch_args, dim_blocks, 20);
DT_ROC_OFFSET(dt_roc_launch_args, args, 32);
DT_ROC_OFFSET(dt_roc_launch_args, word40, 40);
DT_ROC_OFFSET(dt_roc_launch_args, word48, 48);

/* args.hipModuleLaunchKernel [H], the same in every version seen (the __val fields come
 * after stream): {hipFunction_t f; unsigned gridDimX..Z, blockDimX..Z, sharedMemBytes;
 * hipStream_t stream; ...}. */
typedef struct dt_roc_module_launch_args {
    const void *function;      /* 0 */
    uint32_t grid_x;           /* 8 */
    uint32_t grid_y;           /* 12 */
    uint32_t grid_z;           /* 16 */
    uint32_t block_x;          /* 20 */
    uint32_t block_y;          /* 24 */
    uint32_t block_z;          /* 28 */
    uint32_t shared_mem_bytes; /* 32 */
    uint32_t reserved;         /* 36 */
    const void *stream;        /* 40 */
} dt_roc_module_launch_args;
DT_ROC_SIZE(dt_roc_module_launch_args, 48);
DT_ROC_OFFSET(dt_roc_module_launch_args, grid_x, 8);
DT_ROC_OFFSET(dt_roc_module_launch_args, block_x, 20);
DT_ROC_OFFSET(dt_roc_module_launch_args, shared_mem_bytes, 32);

/* hipDeviceAttribute_t numbers [H] (hip_runtime_api.h, HIP 5.0 and later: the
 * "CudaCompatibleBegin = 0" numbering; HIP 4.x numbered them differently, so every
 * answer is checked for plausibility before occupancy is computed). */
enum {
    DT_ROC_ATTR_COMPUTE_MAJOR = 23,
    DT_ROC_ATTR_MAX_BLOCKS_PER_SM = 25, /* "Cuda only" in some headers: optional */
    DT_ROC_ATTR_MAX_THREADS_PER_BLOCK = 56,
    DT_ROC_ATTR_MAX_THREADS_PER_SM = 57,
    DT_ROC_ATTR_COMPUTE_MINOR = 61,
    DT_ROC_ATTR_SM_COUNT = 63,
    DT_ROC_ATTR_MAX_REGS_PER_BLOCK = 71,
    DT_ROC_ATTR_MAX_REGS_PER_SM = 72,
    DT_ROC_ATTR_MAX_SMEM_PER_BLOCK = 74,
    DT_ROC_ATTR_SMEM_PER_SM = 76, /* "Cuda only": the fallback */
    DT_ROC_ATTR_WARP_SIZE = 87,
    DT_ROC_ATTR_AMD_MAX_SMEM_PER_SM = 10002 /* hipDeviceAttributeMaxSharedMemoryPerMultiprocessor */
};

/* ---- classification and decoding (roctracer_decode.c) ---- */

typedef enum dt_roc_class {
    DT_ROC_CLASS_KERNEL = 1,
    DT_ROC_CLASS_MEMCPY = 2,
    DT_ROC_CLASS_MEMSET = 3,
    DT_ROC_CLASS_BARRIER = 4,  /* op BARRIER: a marker, not device work: skipped */
    DT_ROC_CLASS_NOT_OURS = 5, /* a valid record of another domain (EXT_API, HIP_API, ...) */
    DT_ROC_CLASS_MALFORMED = 6 /* a domain or op no ROCtracer writes */
} dt_roc_class;

/* Classifies a record by domain, op and kind. Known kinds decide (the op is not trusted:
 * on DTK the kind carries the class [U]); an unknown kind falls back on the op (DISPATCH:
 * kernel, COPY: copy of unknown direction) and sets *unknown_kind. *direction gets the
 * devtrace_memcpy_dir of copies. */
dt_roc_class dt_roc_classify(uint32_t domain, uint32_t op, uint32_t kind, uint32_t *direction, int *unknown_kind);

/* dynamic shared memory of a hipLaunchKernel call from the two words after `args`
 * (see dt_roc_launch_args): 1 and *bytes set, or 0 when the words fit neither layout.
 * Pointers are NULL or above 1 MiB, shared memory is at most 1 MiB. */
int dt_roc_launch_shared_bytes(uint64_t word40, uint64_t word48, uint32_t *bytes);

/* Launch configurations remembered from the API callback until the kernel record comes,
 * keyed by correlation id: a bounded open-addressing table, lock-free. A slot also marks
 * a call that must produce a device record (launch, copy, fill): slots still present after
 * the final flush are device records ROCtracer lost. */
#define DT_ROC_PENDING_SLOTS (1u << 16)
#define DT_ROC_PENDING_PROBES 64u

typedef struct dt_roc_launch {
    int32_t grid[3], block[3];
    uint32_t dynamic_shared;
    uint8_t has_grid;   /* grid/block known */
    uint8_t has_shared; /* dynamic_shared known */
    uint8_t reserved[2];
} dt_roc_launch;

typedef struct dt_roc_pending {
    _Atomic uint64_t key;   /* correlation id; 0 empty, UINT64_MAX a removed entry */
    _Atomic uint32_t ready; /* launch written */
    uint32_t reserved;
    dt_roc_launch launch;
} dt_roc_pending;

/* What a walk over one delivered range found. */
typedef struct dt_roc_walk_counts {
    uint64_t records;   /* whole 64-byte records seen */
    uint64_t emitted;   /* events stored */
    uint64_t malformed; /* records rejected, plus one for a ragged or inverted range */
    uint64_t malformed_bytes;
    uint64_t zero_time;
    uint64_t barriers;
    uint64_t not_ours;
    uint64_t unknown_kind; /* classified by op */
    uint64_t launches_attached;
} dt_roc_walk_counts;

/* Decoding state, separate from the binding so that tests decode hand-built buffers. */
typedef struct dt_roc_decoder {
    dt_session *s;           /* borrowed */
    dt_roc_pending *pending; /* owned: DT_ROC_PENDING_SLOTS slots */
    uint32_t unnamed_kernel_id;
    _Atomic uint64_t pending_full; /* calls not remembered: no free slot near their key */
    _Atomic uint64_t barriers, not_ours, unknown_kinds;
    _Atomic uint32_t first_unknown_kind; /* for the note; 0 = none yet */
} dt_roc_decoder;

int dt_roc_decoder_init(dt_roc_decoder *d, dt_session *s);
void dt_roc_decoder_free(dt_roc_decoder *d);
/* Remembers a call that must produce a device record (launch may be NULL: no launch
 * configuration). 0, or -1 when the table is full near that key (counted). */
int dt_roc_pending_put(dt_roc_decoder *d, uint64_t correlation, const dt_roc_launch *launch);
/* Takes the entry of a correlation id: 1 (and *launch filled when it has one), or 0. */
int dt_roc_pending_take(dt_roc_decoder *d, uint64_t correlation, dt_roc_launch *launch);
/* Counts and forgets every entry left: calls whose device record never came. */
uint64_t dt_roc_pending_drain(dt_roc_decoder *d);

typedef enum dt_roc_walk_mode {
    DT_ROC_WALK_DECODE = 0,       /* decode and store events */
    DT_ROC_WALK_OUT_OF_WINDOW = 1 /* count device records as out_of_window per kind */
} dt_roc_walk_mode;
/* Walks [begin, end) as whole 64-byte records, validating each; adds the loss counts to
 * the session and fills *counts (may be NULL). Allocates nothing and takes no lock but the
 * name table's, on a kernel name's first sight on this thread. */
void dt_roc_walk(dt_roc_decoder *d, const char *begin, const char *end, dt_roc_walk_mode mode,
                 dt_roc_walk_counts *counts);

/* ---- device properties (roctracer_devices.c) ---- */

/* Adds each HIP device's properties to s (occupancy inputs), read through
 * hipDeviceGetAttribute: a global symbol, a HIP runtime already loaded, or the tracing
 * library `tracer` itself (DTK's libgalaxyhip.so.5 is both); a note says why when none
 * can be read. Call with the API callbacks off: these HIP calls are not to be traced. */
void dt_roc_read_devices(dt_session *s, void *tracer);

#endif /* DT_ROCTRACER_RECORDS_H */
