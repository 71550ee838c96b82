/* trace_reader.h: a streaming reader of Kineto-format Chrome traces (.json, or gzip by its
 * magic bytes): devtrace's own and the ones torch.profiler exports. It reads the file in
 * pieces (the buffer holds one event at a time, however large the file), checks the JSON as it
 * goes, and hands every element of `traceEvents` to a callback as a dt_tr_event. Other top-level
 * members are read into dt_tr_info (distributedInfo, baseTimeNanoseconds, the devtrace section)
 * or skipped; unknown keys anywhere are ignored.
 *
 * The event (dt_tr_event), as the callback sees it:
 *   ph        the first character of "ph" ('X', 'M', 's', 'f', 'i', ...), 0 when absent
 *   kind      what "cat" says it is (dt_tr_kind_of_cat): kernel (also mtia_ccp_events), memcpy,
 *             memset, runtime (any "..._runtime" or "..._driver", hpu_op), cpu_op,
 *             python_function, user_annotation, gpu_user_annotation, sync (cuda_sync,
 *             cuda_event, xpu_sync), other
 *   name, cat the strings, unescaped; NOT NUL-terminated ({s, len}); borrowed: valid only until
 *             the callback returns
 *   ts_ns     "ts" (microseconds in the file, often with a fraction) as integer nanoseconds,
 *             rounded to the nearest ns; dur_ns likewise from "dur"; a value beyond
 *             +-DT_TR_TIME_MAX (2^61 ns, 73 years) counts as absent (DT_TR_*_OUT_OF_RANGE), so
 *             sums and differences of two never overflow
 *   pid, tid  the value's text (a number's digits or a string's content) and, when the value is
 *             a number or a string ending in digits ("stream 7"), pid_num / tid_num
 *   args      "External id", "correlation", "device", "stream", "bytes" as integers, and for
 *             'M' events args.name (meta_name)
 *   id        a flow's "id" (number, or string of digits) as flow_id; bp its "bp"
 *   has       DT_TR_HAS_* bits: which of the numeric fields were present
 *   offset    where the event's '{' is in the (decompressed) text
 * Numbers that are not integers where an integer is expected (an "External id" of 3.0) are
 * truncated; fields of the wrong type (a string "ts") count as absent (for ts and dur the
 * DT_TR_*_NOT_NUMBER bit says so).
 *
 * Errors: one line naming the byte offset and what was expected there, e.g.
 *   "trace.json: byte 1834: expected ',' or '}' after a member of an event".
 * A trace that ends early is an error (never a partial result reported as complete). */
#ifndef DT_TRACE_READER_H
#define DT_TRACE_READER_H

#include <stddef.h>
#include <stdint.h>

typedef enum dt_tr_kind {
    DT_TR_KERNEL,
    DT_TR_MEMCPY,
    DT_TR_MEMSET,
    DT_TR_RUNTIME,
    DT_TR_CPU_OP,
    DT_TR_PYTHON,
    DT_TR_ANNOTATION,     /* user_annotation: a range on a host thread */
    DT_TR_GPU_ANNOTATION, /* gpu_user_annotation: the same range on the device stream it covers */
    DT_TR_SYNC,           /* cuda_sync, cuda_event, xpu_sync: device-side waits, not device work */
    DT_TR_OTHER,
    DT_TR_KIND_COUNT
} dt_tr_kind;

typedef struct dt_tr_str {
    const char *s; /* borrowed, not NUL-terminated */
    size_t len;
} dt_tr_str;

enum {
    DT_TR_HAS_TS = 1u << 0,
    DT_TR_HAS_DUR = 1u << 1,
    DT_TR_HAS_PID_NUM = 1u << 2,
    DT_TR_HAS_TID_NUM = 1u << 3,
    DT_TR_HAS_EXTERNAL_ID = 1u << 4,
    DT_TR_HAS_CORRELATION = 1u << 5,
    DT_TR_HAS_DEVICE = 1u << 6,
    DT_TR_HAS_STREAM = 1u << 7,
    DT_TR_HAS_BYTES = 1u << 8,
    DT_TR_HAS_FLOW_ID = 1u << 9,
    DT_TR_HAS_PID = 1u << 10, /* pid present (text in pid) */
    DT_TR_HAS_TID = 1u << 11,
    /* "ts" / "dur" present but unusable (the event then lacks DT_TR_HAS_TS / _DUR): */
    DT_TR_TS_NOT_NUMBER = 1u << 12,   /* a string, object, ... */
    DT_TR_DUR_NOT_NUMBER = 1u << 13,  /* likewise */
    DT_TR_TS_OUT_OF_RANGE = 1u << 14, /* beyond +-DT_TR_TIME_MAX (e.g. 1e300) */
    DT_TR_DUR_OUT_OF_RANGE = 1u << 15,
};

typedef struct dt_tr_event {
    char ph;
    char bp;
    dt_tr_kind kind;
    uint32_t has;
    dt_tr_str name, cat, pid, tid, meta_name;
    int64_t ts_ns, dur_ns;
    int64_t pid_num, tid_num;
    int64_t external_id, correlation, device, stream, bytes, flow_id;
    uint64_t offset;
} dt_tr_event;

/* Nonzero stops the read; dt_tr_read returns that value (and the error text says so). */
typedef int (*dt_tr_event_fn)(const dt_tr_event *ev, void *user);

#define DT_TR_MAX_COUNTERS 64
#define DT_TR_MAX_NOTES 32

/* The top-level members besides traceEvents. Strings are owned (dt_tr_info_free). */
typedef struct dt_tr_info {
    int has_rank, has_base_time;
    int64_t rank, world_size;
    int64_t base_time_ns;
    int has_devtrace;           /* the trace has a "devtrace" section */
    char *backend, *validation; /* owned; NULL when absent */
    struct {
        char *path; /* owned: "dropped.store_full", "zero_timestamp", ... */
        int64_t value;
    } counters[DT_TR_MAX_COUNTERS]; /* the devtrace section's numeric members, one level deep */
    int ncounters;
    char *notes[DT_TR_MAX_NOTES]; /* owned */
    int nnotes;
    uint64_t events;      /* elements of traceEvents */
    uint64_t bytes;       /* bytes of JSON text read */
    int has_trace_events; /* the top level is an array of events or has a traceEvents member */
    uint64_t top_end;     /* the offset of the top level's closing bracket */
} dt_tr_info;

dt_tr_kind dt_tr_kind_of_cat(const char *cat, size_t len);
const char *dt_tr_kind_name(dt_tr_kind kind);

/* Reads a trace file. Returns 0 when the whole trace was read and is well-formed (a top-level
 * object without traceEvents is not a trace: an error naming the offset of its closing '}');
 * otherwise
 * -1 with one line in err (the path, the byte offset, what was expected), or the callback's
 * nonzero value. info may be NULL. */
int dt_tr_read_file(const char *path, dt_tr_event_fn fn, void *user, dt_tr_info *info, char *err, size_t errlen);
/* The same over a buffer in memory (name appears in errors). */
int dt_tr_read_buffer(const char *name, const void *data, size_t len, dt_tr_event_fn fn, void *user, dt_tr_info *info,
                      char *err, size_t errlen);
/* ... reading at most piece bytes at a time (tests and the fuzz target: every boundary). */
int dt_tr_read_buffer_pieces(const char *name, const void *data, size_t len, size_t piece, dt_tr_event_fn fn,
                             void *user, dt_tr_info *info, char *err, size_t errlen);
void dt_tr_info_free(dt_tr_info *info);

#define DT_TR_TIME_MAX ((int64_t)1 << 61)

/* The largest single event (or other top-level member) the reader accepts. */
#define DT_TR_MAX_UNIT (256u << 20)

#endif
