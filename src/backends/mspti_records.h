/* mspti_records.h: our mirrors of the Huawei Ascend MSPTI activity records ([H]: the
 * Ascend/mspti csrc/include headers' facts; never the vendor's headers, which devtrace's
 * sources do not include), the MSPTI numbers devtrace uses, and the ids of the decoders in
 * mspti.c that read them. tests/integration/test_mspti_layout.c compiles them against the
 * headers' snapshot (commit a38916051d9a10467591f05c564f2f80985ee292): a size, offset, width
 * or number that differs from the header's fails that build.
 *
 * The records are packed (a u64 can sit at offset 4) and their sizes rounded up to 8 by
 * the headers' aligned(8); correlation ids are u64. Each mirror asserts its size and the
 * offset of every field the decoders read, so a wrong number cannot compile. */
#ifndef DT_MSPTI_RECORDS_H
#define DT_MSPTI_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "cupti_family.h"  /* DT_CF_DECODE_VENDOR */
#include "cupti_records.h" /* DT_RECORD_SIZE, DT_RECORD_OFFSET */

/* MSPTI's numbers that devtrace uses (mspti_activity.h, mspti_result.h); each is asserted
 * against the headers by tests/integration/test_mspti_layout.c. */
enum {
    DT_MSPTI_KIND_KERNEL = 2,
    DT_MSPTI_KIND_API = 3,
    DT_MSPTI_KIND_MEMSET = 6,
    DT_MSPTI_KIND_MEMCPY = 7,
    DT_MSPTI_KIND_EXTERNAL_CORRELATION = 8,
    DT_MSPTI_KIND_ACL_API = 10,
    DT_MSPTI_KIND_NODE_API = 11,
    DT_MSPTI_KIND_RUNTIME_API = 12,
};

enum {
    DT_MSPTI_SUCCESS = 0,
    DT_MSPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED = 2,
    DT_MSPTI_ERROR_MAX_LIMIT_REACHED = 3,
    DT_MSPTI_ERROR_WITHOUT_LD_PRELOAD = 6,
};

enum { DT_MSPTI_EXTERNAL_KIND_CUSTOM0 = 2 }; /* CUPTI's CUSTOM0 is 3 */

enum {
    DT_MSPTI_MEMCPY_KIND_UNKNOWN = 0,
    DT_MSPTI_MEMCPY_KIND_HTOH = 1,
    DT_MSPTI_MEMCPY_KIND_HTOD = 2,
    DT_MSPTI_MEMCPY_KIND_DTOH = 3,
    DT_MSPTI_MEMCPY_KIND_DTOD = 4,
    DT_MSPTI_MEMCPY_KIND_DEFAULT = 5, /* chosen by the addresses */
};

/* The decoders of mspti.c, by the id a layout names them with (from DT_CF_DECODE_VENDOR
 * on: dt_cf_mspti_descriptor's vendor_decode reads them). */
typedef enum dt_mspti_decode_id {
    DT_MSPTI_DECODE_KERNEL = DT_CF_DECODE_VENDOR, /* dt_mspti_kernel */
    DT_MSPTI_DECODE_API,                          /* dt_mspti_api: every API record level */
    DT_MSPTI_DECODE_MEMSET,                       /* dt_mspti_memset */
    DT_MSPTI_DECODE_MEMCPY,                       /* dt_mspti_memcpy */
    DT_MSPTI_DECODE_EXTERNAL,                     /* dt_mspti_external_correlation */
    DT_MSPTI_DECODE_END
} dt_mspti_decode_id;

#pragma pack(push, 1)
typedef struct dt_mspti_kernel {
    uint32_t kind;           /* 0: KERNEL 2 */
    uint64_t start;          /* 4 */
    uint64_t end;            /* 12 */
    uint32_t device_id;      /* 20 */
    uint32_t stream_id;      /* 24 */
    uint64_t correlation_id; /* 28 */
    const char *type;        /* 36 */
    const char *name;        /* 44 */
    uint8_t tail[56 - 52];
} dt_mspti_kernel;

typedef struct dt_mspti_api {
    uint32_t kind;           /* 0: API 3 */
    uint64_t start;          /* 4 */
    uint64_t end;            /* 12 */
    uint32_t process_id;     /* 20 */
    uint32_t thread_id;      /* 24 */
    uint64_t correlation_id; /* 28 */
    const char *name;        /* 36: the API's name; no cbid */
    uint8_t tail[48 - 44];
} dt_mspti_api;

typedef struct dt_mspti_memset {
    uint32_t kind;           /* 0: MEMSET 6 */
    uint32_t value;          /* 4 */
    uint64_t bytes;          /* 8 */
    uint64_t start;          /* 16 */
    uint64_t end;            /* 24 */
    uint32_t device_id;      /* 32 */
    uint32_t stream_id;      /* 36 */
    uint64_t correlation_id; /* 40 */
    uint8_t is_async;        /* 48 */
    uint8_t tail[56 - 49];
} dt_mspti_memset;

typedef struct dt_mspti_memcpy {
    uint32_t kind;           /* 0: MEMCPY 7 */
    uint32_t copy_kind;      /* 4: HTOH 1, HTOD 2, DTOH 3, DTOD 4, DEFAULT 5 */
    uint64_t bytes;          /* 8 */
    uint64_t start;          /* 16 */
    uint64_t end;            /* 24 */
    uint32_t device_id;      /* 32 */
    uint32_t stream_id;      /* 36 */
    uint64_t correlation_id; /* 40 */
    uint8_t is_async;        /* 48 */
    uint8_t tail[56 - 49];
} dt_mspti_memcpy;

typedef struct dt_mspti_external_correlation {
    uint32_t kind;           /* 0: EXTERNAL_CORRELATION 8 */
    uint32_t external_kind;  /* 4: CUSTOM0 2 */
    uint64_t external_id;    /* 8 */
    uint64_t correlation_id; /* 16 */
} dt_mspti_external_correlation;
#pragma pack(pop)

DT_RECORD_SIZE(dt_mspti_kernel, 56);
DT_RECORD_OFFSET(dt_mspti_kernel, start, 4);
DT_RECORD_OFFSET(dt_mspti_kernel, end, 12);
DT_RECORD_OFFSET(dt_mspti_kernel, device_id, 20);
DT_RECORD_OFFSET(dt_mspti_kernel, stream_id, 24);
DT_RECORD_OFFSET(dt_mspti_kernel, correlation_id, 28);
DT_RECORD_OFFSET(dt_mspti_kernel, name, 44);
DT_RECORD_SIZE(dt_mspti_api, 48);
DT_RECORD_OFFSET(dt_mspti_api, start, 4);
DT_RECORD_OFFSET(dt_mspti_api, end, 12);
DT_RECORD_OFFSET(dt_mspti_api, process_id, 20);
DT_RECORD_OFFSET(dt_mspti_api, thread_id, 24);
DT_RECORD_OFFSET(dt_mspti_api, correlation_id, 28);
DT_RECORD_OFFSET(dt_mspti_api, name, 36);
DT_RECORD_SIZE(dt_mspti_memset, 56);
DT_RECORD_OFFSET(dt_mspti_memset, value, 4);
DT_RECORD_OFFSET(dt_mspti_memset, bytes, 8);
DT_RECORD_OFFSET(dt_mspti_memset, start, 16);
DT_RECORD_OFFSET(dt_mspti_memset, end, 24);
DT_RECORD_OFFSET(dt_mspti_memset, device_id, 32);
DT_RECORD_OFFSET(dt_mspti_memset, stream_id, 36);
DT_RECORD_OFFSET(dt_mspti_memset, correlation_id, 40);
DT_RECORD_SIZE(dt_mspti_memcpy, 56);
DT_RECORD_OFFSET(dt_mspti_memcpy, copy_kind, 4);
DT_RECORD_OFFSET(dt_mspti_memcpy, bytes, 8);
DT_RECORD_OFFSET(dt_mspti_memcpy, start, 16);
DT_RECORD_OFFSET(dt_mspti_memcpy, end, 24);
DT_RECORD_OFFSET(dt_mspti_memcpy, device_id, 32);
DT_RECORD_OFFSET(dt_mspti_memcpy, stream_id, 36);
DT_RECORD_OFFSET(dt_mspti_memcpy, correlation_id, 40);
DT_RECORD_SIZE(dt_mspti_external_correlation, 24);
DT_RECORD_OFFSET(dt_mspti_external_correlation, external_kind, 4);
DT_RECORD_OFFSET(dt_mspti_external_correlation, external_id, 8);
DT_RECORD_OFFSET(dt_mspti_external_correlation, correlation_id, 16);

#endif /* DT_MSPTI_RECORDS_H */
