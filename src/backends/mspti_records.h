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

#include "pti_family.h"  /* DT_PTI_DECODE_VENDOR */
#include "pti_records.h" /* DT_RECORD_SIZE, DT_RECORD_OFFSET */

/* MSPTI's numbers that devtrace uses (mspti_activity.h, mspti_result.h); each is asserted
 * against the headers by tests/integration/test_mspti_layout.c. */
enum {
    DT_MSPTI_KIND_MARKER = 1,
    DT_MSPTI_KIND_KERNEL = 2,
    DT_MSPTI_KIND_API = 3,
    DT_MSPTI_KIND_HCCL = 4,
    DT_MSPTI_KIND_MEMORY = 5,
    DT_MSPTI_KIND_MEMSET = 6,
    DT_MSPTI_KIND_MEMCPY = 7,
    DT_MSPTI_KIND_EXTERNAL_CORRELATION = 8,
    DT_MSPTI_KIND_COMMUNICATION = 9,
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

/* msptiActivityFlag: what a marker record is (one bit each). */
enum {
    DT_MSPTI_MARKER_INSTANTANEOUS = 1 << 0,
    DT_MSPTI_MARKER_START = 1 << 1,
    DT_MSPTI_MARKER_END = 1 << 2,
    DT_MSPTI_MARKER_INSTANTANEOUS_WITH_DEVICE = 1 << 3,
    DT_MSPTI_MARKER_START_WITH_DEVICE = 1 << 4,
    DT_MSPTI_MARKER_END_WITH_DEVICE = 1 << 5,
};

/* msptiActivitySourceKind: where a marker's timestamp was taken. */
enum { DT_MSPTI_SOURCE_HOST = 0, DT_MSPTI_SOURCE_DEVICE = 1 };

/* msptiActivityMemoryOperationType. */
enum { DT_MSPTI_MEMORY_ALLOCATION = 0, DT_MSPTI_MEMORY_RELEASE = 1 };

/* msptiCommunicationDataType (13 is not used; INVALID_TYPE 0xFFFF). */
enum {
    DT_MSPTI_DTYPE_INT8 = 0,
    DT_MSPTI_DTYPE_INT16 = 1,
    DT_MSPTI_DTYPE_INT32 = 2,
    DT_MSPTI_DTYPE_FP16 = 3,
    DT_MSPTI_DTYPE_FP32 = 4,
    DT_MSPTI_DTYPE_INT64 = 5,
    DT_MSPTI_DTYPE_UINT64 = 6,
    DT_MSPTI_DTYPE_UINT8 = 7,
    DT_MSPTI_DTYPE_UINT16 = 8,
    DT_MSPTI_DTYPE_UINT32 = 9,
    DT_MSPTI_DTYPE_FP64 = 10,
    DT_MSPTI_DTYPE_BFP16 = 11,
    DT_MSPTI_DTYPE_INT128 = 12,
    DT_MSPTI_DTYPE_HIF8 = 14,
    DT_MSPTI_DTYPE_FP8E4M3 = 15,
    DT_MSPTI_DTYPE_FP8E5M2 = 16,
    DT_MSPTI_DTYPE_FP8E8M0 = 17,
    DT_MSPTI_DTYPE_INVALID = 0xFFFF,
};

/* The decoders of mspti.c, by the id a layout names them with (from DT_PTI_DECODE_VENDOR
 * on: dt_pti_mspti_descriptor's vendor_decode reads them). */
typedef enum dt_mspti_decode_id {
    DT_MSPTI_DECODE_KERNEL = DT_PTI_DECODE_VENDOR, /* dt_mspti_kernel */
    DT_MSPTI_DECODE_API,                           /* dt_mspti_api: every API record level */
    DT_MSPTI_DECODE_MEMSET,                        /* dt_mspti_memset */
    DT_MSPTI_DECODE_MEMCPY,                        /* dt_mspti_memcpy */
    DT_MSPTI_DECODE_EXTERNAL,                      /* dt_mspti_external_correlation */
    DT_MSPTI_DECODE_HCCL,                          /* dt_mspti_hccl */
    DT_MSPTI_DECODE_COMMUNICATION,                 /* dt_mspti_communication */
    DT_MSPTI_DECODE_MARKER,                        /* dt_mspti_marker */
    DT_MSPTI_DECODE_MEMORY,                        /* dt_mspti_memory */
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

/* msptiActivityHccl: one HCCL operation; no correlation id. */
typedef struct dt_mspti_hccl {
    uint32_t kind;         /* 0: HCCL 4 */
    uint64_t start;        /* 4 */
    uint64_t end;          /* 12 */
    uint32_t device_id;    /* 20 */
    uint32_t stream_id;    /* 24 */
    double bandwidth;      /* 28: GB/s */
    const char *name;      /* 36: the operation */
    const char *comm_name; /* 44: the communicator */
    uint8_t tail[56 - 52];
} dt_mspti_hccl;

/* msptiActivityCommunication: one collective on the device, with its correlation id. */
typedef struct dt_mspti_communication {
    uint32_t kind;           /* 0: COMMUNICATION 9 */
    uint32_t data_type;      /* 4: msptiCommunicationDataType */
    uint64_t count;          /* 8: elements */
    uint32_t device_id;      /* 16 */
    uint32_t stream_id;      /* 20 */
    uint64_t start;          /* 24 */
    uint64_t end;            /* 32 */
    const char *alg_type;    /* 40: the algorithm */
    const char *name;        /* 48: the operation */
    const char *comm_name;   /* 56: the communicator (group) */
    uint64_t correlation_id; /* 64 */
} dt_mspti_communication;

/* msptiActivityMarker: one point of an mstx range or mark; a range's start and end are two
 * records with the same id. objectId is (processId, threadId) for a host marker,
 * (deviceId, streamId) for a device one. */
typedef struct dt_mspti_marker {
    uint32_t kind;        /* 0: MARKER 1 */
    uint32_t flag;        /* 4: DT_MSPTI_MARKER_* */
    uint32_t source_kind; /* 8: DT_MSPTI_SOURCE_* */
    uint64_t timestamp;   /* 12 */
    uint64_t id;          /* 20 */
    uint32_t object_a;    /* 28: processId or deviceId */
    uint32_t object_b;    /* 32: threadId or streamId */
    const char *name;     /* 36: NULL for an end */
    const char *domain;   /* 44: NULL for the default domain */
    uint8_t tail[56 - 52];
} dt_mspti_marker;

/* msptiActivityMemory: one allocation or release. */
typedef struct dt_mspti_memory {
    uint32_t kind;           /* 0: MEMORY 5 */
    uint32_t operation;      /* 4: DT_MSPTI_MEMORY_* */
    uint32_t memory_kind;    /* 8: UNKNOWN 0, DEVICE 1 */
    uint64_t correlation_id; /* 12 */
    uint64_t start;          /* 20 */
    uint64_t end;            /* 28 */
    uint64_t address;        /* 36 */
    uint64_t bytes;          /* 44 */
    uint32_t process_id;     /* 52 */
    uint32_t device_id;      /* 56 */
    uint32_t stream_id;      /* 60: MSPTI_INVALID_STREAM_ID when synchronous */
} dt_mspti_memory;
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
DT_RECORD_SIZE(dt_mspti_hccl, 56);
DT_RECORD_OFFSET(dt_mspti_hccl, start, 4);
DT_RECORD_OFFSET(dt_mspti_hccl, end, 12);
DT_RECORD_OFFSET(dt_mspti_hccl, device_id, 20);
DT_RECORD_OFFSET(dt_mspti_hccl, stream_id, 24);
DT_RECORD_OFFSET(dt_mspti_hccl, bandwidth, 28);
DT_RECORD_OFFSET(dt_mspti_hccl, name, 36);
DT_RECORD_OFFSET(dt_mspti_hccl, comm_name, 44);
DT_RECORD_SIZE(dt_mspti_communication, 72);
DT_RECORD_OFFSET(dt_mspti_communication, data_type, 4);
DT_RECORD_OFFSET(dt_mspti_communication, count, 8);
DT_RECORD_OFFSET(dt_mspti_communication, device_id, 16);
DT_RECORD_OFFSET(dt_mspti_communication, stream_id, 20);
DT_RECORD_OFFSET(dt_mspti_communication, start, 24);
DT_RECORD_OFFSET(dt_mspti_communication, end, 32);
DT_RECORD_OFFSET(dt_mspti_communication, alg_type, 40);
DT_RECORD_OFFSET(dt_mspti_communication, name, 48);
DT_RECORD_OFFSET(dt_mspti_communication, comm_name, 56);
DT_RECORD_OFFSET(dt_mspti_communication, correlation_id, 64);
DT_RECORD_SIZE(dt_mspti_marker, 56);
DT_RECORD_OFFSET(dt_mspti_marker, flag, 4);
DT_RECORD_OFFSET(dt_mspti_marker, source_kind, 8);
DT_RECORD_OFFSET(dt_mspti_marker, timestamp, 12);
DT_RECORD_OFFSET(dt_mspti_marker, id, 20);
DT_RECORD_OFFSET(dt_mspti_marker, object_a, 28);
DT_RECORD_OFFSET(dt_mspti_marker, object_b, 32);
DT_RECORD_OFFSET(dt_mspti_marker, name, 36);
DT_RECORD_OFFSET(dt_mspti_marker, domain, 44);
DT_RECORD_SIZE(dt_mspti_memory, 64);
DT_RECORD_OFFSET(dt_mspti_memory, operation, 4);
DT_RECORD_OFFSET(dt_mspti_memory, memory_kind, 8);
DT_RECORD_OFFSET(dt_mspti_memory, correlation_id, 12);
DT_RECORD_OFFSET(dt_mspti_memory, start, 20);
DT_RECORD_OFFSET(dt_mspti_memory, end, 28);
DT_RECORD_OFFSET(dt_mspti_memory, address, 36);
DT_RECORD_OFFSET(dt_mspti_memory, bytes, 44);
DT_RECORD_OFFSET(dt_mspti_memory, process_id, 52);
DT_RECORD_OFFSET(dt_mspti_memory, device_id, 56);
DT_RECORD_OFFSET(dt_mspti_memory, stream_id, 60);

#endif /* DT_MSPTI_RECORDS_H */
