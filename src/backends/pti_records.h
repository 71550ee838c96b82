/* pti_records.h: our mirrors of the CUDA-shaped activity records the CUPTI-family
 * engine's own decoders read (CUPTI's, and the vendors that write its shapes: MCPTI, PPU,
 * Iluvatar, MUSA), and the assertions every mirror uses (DT_RECORD_SIZE, DT_RECORD_OFFSET).
 * A vendor with records of its own shape keeps their mirrors in its own files
 * (mspti_records.h). Never the vendor's headers: every offset below is a number from
 * ../shared/vendor-abi.md, checked against the installed CUDA 13.0 headers by
 * tests/integration/test_cupti_layout.c whenever they are present (offsetof/sizeof of
 * the real structs). Each mirror asserts its size and the offset of every field the
 * decoders read, so a wrong number cannot compile.
 *
 * Unknown values: a kernel's queued/submitted time is 0 (CUPTI_TIMESTAMP_UNKNOWN in the
 * CUDA 13.0 header) or ~0 (seen from older libraries) when it was not collected; a
 * record with start == end == 0 carries no timing at all. */
#ifndef DT_PTI_RECORDS_H
#define DT_PTI_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#define DT_CUPTI_TIMESTAMP_UNKNOWN_ZERO 0ull
#define DT_CUPTI_TIMESTAMP_UNKNOWN_ALL_ONES (~0ull)

#define DT_RECORD_OFFSET(type, field, at) \
    _Static_assert(offsetof(type, field) == (at), #type "." #field " must sit at byte " #at)
#define DT_RECORD_SIZE(type, bytes) _Static_assert(sizeof(type) == (bytes), #type " must be " #bytes " bytes")

/* ---- NVIDIA CUPTI (CUDA 12.x and 13.0), also MetaX MCPTI, PPU HGPTI, Iluvatar ---- */

/* The common prefix of CUpti_ActivityKernel4..10 (and MCpti_ActivityKernel8): identical
 * through `submitted`. Kernel9 (CUDA 12.x) is 208 bytes, Kernel10 (CUDA 13.0) 216,
 * MCPTI Kernel8 200; the tails are not read. */
typedef struct dt_cupti_kernel_prefix {
    uint32_t kind;                        /* 0: CONCURRENT_KERNEL 10 or KERNEL 3 */
    uint8_t cache_config;                 /* 4 */
    uint8_t shared_memory_config;         /* 5 */
    uint16_t registers_per_thread;        /* 6 */
    uint32_t partitioned_cache_requested; /* 8 */
    uint32_t partitioned_cache_executed;  /* 12 */
    uint64_t start;                       /* 16: ns, vendor clock */
    uint64_t end;                         /* 24 */
    uint64_t completed;                   /* 32 */
    uint32_t device_id;                   /* 40 */
    uint32_t context_id;                  /* 44 */
    uint32_t stream_id;                   /* 48 */
    int32_t grid_x, grid_y, grid_z;       /* 52, 56, 60 */
    int32_t block_x, block_y, block_z;    /* 64, 68, 72 */
    int32_t static_shared_memory;         /* 76: bytes */
    int32_t dynamic_shared_memory;        /* 80: bytes */
    uint32_t local_memory_per_thread;     /* 84 */
    uint32_t local_memory_total;          /* 88 */
    uint32_t correlation_id;              /* 92 */
    int64_t grid_id;                      /* 96 */
    const char *name;                     /* 104: mangled name, owned by the vendor */
    void *reserved0;                      /* 112 */
    uint64_t queued;                      /* 120: 0 or ~0 = unknown */
    uint64_t submitted;                   /* 128: 0 or ~0 = unknown */
} dt_cupti_kernel_prefix;
DT_RECORD_SIZE(dt_cupti_kernel_prefix, 136);
DT_RECORD_OFFSET(dt_cupti_kernel_prefix, kind, 0);
DT_RECORD_OFFSET(dt_cupti_kernel_prefix, registers_per_thread, 6);
DT_RECORD_OFFSET(dt_cupti_kernel_prefix, start, 16);
DT_RECORD_OFFSET(dt_cupti_kernel_prefix, end, 24);
DT_RECORD_OFFSET(dt_cupti_kernel_prefix, completed, 32);
DT_RECORD_OFFSET(dt_cupti_kernel_prefix, device_id, 40);
DT_RECORD_OFFSET(dt_cupti_kernel_prefix, context_id, 44);
DT_RECORD_OFFSET(dt_cupti_kernel_prefix, stream_id, 48);
DT_RECORD_OFFSET(dt_cupti_kernel_prefix, grid_x, 52);
DT_RECORD_OFFSET(dt_cupti_kernel_prefix, grid_y, 56);
DT_RECORD_OFFSET(dt_cupti_kernel_prefix, grid_z, 60);
DT_RECORD_OFFSET(dt_cupti_kernel_prefix, block_x, 64);
DT_RECORD_OFFSET(dt_cupti_kernel_prefix, block_y, 68);
DT_RECORD_OFFSET(dt_cupti_kernel_prefix, block_z, 72);
DT_RECORD_OFFSET(dt_cupti_kernel_prefix, static_shared_memory, 76);
DT_RECORD_OFFSET(dt_cupti_kernel_prefix, dynamic_shared_memory, 80);
DT_RECORD_OFFSET(dt_cupti_kernel_prefix, correlation_id, 92);
DT_RECORD_OFFSET(dt_cupti_kernel_prefix, grid_id, 96);
DT_RECORD_OFFSET(dt_cupti_kernel_prefix, name, 104);
DT_RECORD_OFFSET(dt_cupti_kernel_prefix, queued, 120);
DT_RECORD_OFFSET(dt_cupti_kernel_prefix, submitted, 128);

/* CUpti_ActivityKernel9: CUDA 12.x (CUPTI API 19..28). */
typedef struct dt_cupti_kernel9 {
    dt_cupti_kernel_prefix p;
    uint8_t tail[208 - sizeof(dt_cupti_kernel_prefix)];
} dt_cupti_kernel9;
DT_RECORD_SIZE(dt_cupti_kernel9, 208);

/* CUpti_ActivityKernel10: CUDA 13.0 (CUPTI API 130000, 130001). */
typedef struct dt_cupti_kernel10 {
    dt_cupti_kernel_prefix p;
    uint8_t tail[216 - sizeof(dt_cupti_kernel_prefix)];
} dt_cupti_kernel10;
DT_RECORD_SIZE(dt_cupti_kernel10, 216);

/* MCpti_ActivityKernel8 (MACA 3.x, [U]): the same prefix, 200 bytes. */
typedef struct dt_mcpti_kernel8 {
    dt_cupti_kernel_prefix p;
    uint8_t tail[200 - sizeof(dt_cupti_kernel_prefix)];
} dt_mcpti_kernel8;
DT_RECORD_SIZE(dt_mcpti_kernel8, 200);

/* The common prefix of CUpti_ActivityMemcpy5 (88 B, CUDA 12.x) and Memcpy6 (96 B,
 * CUDA 13.0; appends copyCount). */
typedef struct dt_cupti_memcpy_prefix {
    uint32_t kind;           /* 0: MEMCPY 1 */
    uint8_t copy_kind;       /* 4: CUpti_ActivityMemcpyKind (HTOD 1, DTOH 2, DTOD 8, HTOH 9, ...) */
    uint8_t src_kind;        /* 5: CUpti_ActivityMemoryKind */
    uint8_t dst_kind;        /* 6 */
    uint8_t flags;           /* 7 */
    uint64_t bytes;          /* 8 */
    uint64_t start;          /* 16 */
    uint64_t end;            /* 24 */
    uint32_t device_id;      /* 32 */
    uint32_t context_id;     /* 36 */
    uint32_t stream_id;      /* 40 */
    uint32_t correlation_id; /* 44 */
} dt_cupti_memcpy_prefix;
DT_RECORD_SIZE(dt_cupti_memcpy_prefix, 48);
DT_RECORD_OFFSET(dt_cupti_memcpy_prefix, kind, 0);
DT_RECORD_OFFSET(dt_cupti_memcpy_prefix, copy_kind, 4);
DT_RECORD_OFFSET(dt_cupti_memcpy_prefix, src_kind, 5);
DT_RECORD_OFFSET(dt_cupti_memcpy_prefix, dst_kind, 6);
DT_RECORD_OFFSET(dt_cupti_memcpy_prefix, flags, 7);
DT_RECORD_OFFSET(dt_cupti_memcpy_prefix, bytes, 8);
DT_RECORD_OFFSET(dt_cupti_memcpy_prefix, start, 16);
DT_RECORD_OFFSET(dt_cupti_memcpy_prefix, end, 24);
DT_RECORD_OFFSET(dt_cupti_memcpy_prefix, device_id, 32);
DT_RECORD_OFFSET(dt_cupti_memcpy_prefix, context_id, 36);
DT_RECORD_OFFSET(dt_cupti_memcpy_prefix, stream_id, 40);
DT_RECORD_OFFSET(dt_cupti_memcpy_prefix, correlation_id, 44);

typedef struct dt_cupti_memcpy5 {
    dt_cupti_memcpy_prefix p;
    uint8_t tail[88 - sizeof(dt_cupti_memcpy_prefix)];
} dt_cupti_memcpy5;
DT_RECORD_SIZE(dt_cupti_memcpy5, 88);

typedef struct dt_cupti_memcpy6 {
    dt_cupti_memcpy_prefix p;
    uint8_t tail[96 - sizeof(dt_cupti_memcpy_prefix)];
} dt_cupti_memcpy6;
DT_RECORD_SIZE(dt_cupti_memcpy6, 96);

/* CUpti_ActivityMemset4 (88 B, CUDA 12.x and 13.0; MCPTI Memset4 has the same size). */
typedef struct dt_cupti_memset4 {
    uint32_t kind;           /* 0: MEMSET 2 */
    uint32_t value;          /* 4 */
    uint64_t bytes;          /* 8 */
    uint64_t start;          /* 16 */
    uint64_t end;            /* 24 */
    uint32_t device_id;      /* 32 */
    uint32_t context_id;     /* 36 */
    uint32_t stream_id;      /* 40 */
    uint32_t correlation_id; /* 44 */
    uint16_t flags;          /* 48 */
    uint16_t memory_kind;    /* 50 */
    uint8_t tail[88 - 52];
} dt_cupti_memset4;
DT_RECORD_SIZE(dt_cupti_memset4, 88);
DT_RECORD_OFFSET(dt_cupti_memset4, kind, 0);
DT_RECORD_OFFSET(dt_cupti_memset4, value, 4);
DT_RECORD_OFFSET(dt_cupti_memset4, bytes, 8);
DT_RECORD_OFFSET(dt_cupti_memset4, start, 16);
DT_RECORD_OFFSET(dt_cupti_memset4, end, 24);
DT_RECORD_OFFSET(dt_cupti_memset4, device_id, 32);
DT_RECORD_OFFSET(dt_cupti_memset4, context_id, 36);
DT_RECORD_OFFSET(dt_cupti_memset4, stream_id, 40);
DT_RECORD_OFFSET(dt_cupti_memset4, correlation_id, 44);
DT_RECORD_OFFSET(dt_cupti_memset4, flags, 48);
DT_RECORD_OFFSET(dt_cupti_memset4, memory_kind, 50);

/* CUpti_ActivityAPI (40 B): runtime (kind 5) and driver (kind 4) API calls. */
typedef struct dt_cupti_api {
    uint32_t kind;           /* 0 */
    uint32_t cbid;           /* 4: CUpti_CallbackId in the domain of the kind */
    uint64_t start;          /* 8 */
    uint64_t end;            /* 16 */
    uint32_t process_id;     /* 24 */
    uint32_t thread_id;      /* 28 */
    uint32_t correlation_id; /* 32 */
    uint32_t return_value;   /* 36 */
} dt_cupti_api;
DT_RECORD_SIZE(dt_cupti_api, 40);
DT_RECORD_OFFSET(dt_cupti_api, kind, 0);
DT_RECORD_OFFSET(dt_cupti_api, cbid, 4);
DT_RECORD_OFFSET(dt_cupti_api, start, 8);
DT_RECORD_OFFSET(dt_cupti_api, end, 16);
DT_RECORD_OFFSET(dt_cupti_api, process_id, 24);
DT_RECORD_OFFSET(dt_cupti_api, thread_id, 28);
DT_RECORD_OFFSET(dt_cupti_api, correlation_id, 32);
DT_RECORD_OFFSET(dt_cupti_api, return_value, 36);

/* CUpti_ActivityExternalCorrelation (24 B). */
typedef struct dt_cupti_external_correlation {
    uint32_t kind;           /* 0: EXTERNAL_CORRELATION 39 */
    uint32_t external_kind;  /* 4: CUSTOM0 3, ... */
    uint64_t external_id;    /* 8 */
    uint32_t correlation_id; /* 16 */
    uint32_t reserved;       /* 20 */
} dt_cupti_external_correlation;
DT_RECORD_SIZE(dt_cupti_external_correlation, 24);
DT_RECORD_OFFSET(dt_cupti_external_correlation, kind, 0);
DT_RECORD_OFFSET(dt_cupti_external_correlation, external_kind, 4);
DT_RECORD_OFFSET(dt_cupti_external_correlation, external_id, 8);
DT_RECORD_OFFSET(dt_cupti_external_correlation, correlation_id, 16);

#endif /* DT_PTI_RECORDS_H */
