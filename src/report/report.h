/* report.h: what `devtrace report` computes from one trace: per kernel, copy/set, runtime call
 * and op name the counts and times, per device stream its busy time and idle gaps, and the
 * devtrace section's losses and notes; read in one pass over the file (trace_reader.h), and
 * made into tables (table.h). Times are integer nanoseconds throughout.
 *
 * Memory: the file is read in 1 MiB pieces; what is kept grows with what is aggregated, not
 * with the file's size: one entry per distinct name, 8 bytes per kernel (its duration, for the
 * exact median), 16 per device event (the stream's intervals, for busy time and gaps) and 32
 * more per kernel, copy and set, 40 per cpu_op and per runtime call with a correlation (to
 * link device work to the ops around its launch once the whole trace is read). */
#ifndef DT_REPORT_H
#define DT_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/intern.h"
#include "report/keymap.h"
#include "report/table.h"
#include "report/trace_reader.h"

typedef enum dt_names_mode { DT_NAMES_FULL, DT_NAMES_SHORT } dt_names_mode;

typedef struct dt_kernel_row {
    uint32_t name;
    uint64_t count;
    int64_t total_ns, min_ns, max_ns, median_ns;
} dt_kernel_row;

typedef struct dt_memory_row {
    uint32_t name;
    uint64_t count, bytes;
    int64_t total_ns;
    uint64_t with_bytes; /* the copies / sets that have "bytes": bytes is their sum */
    int64_t bytes_ns;    /* their time: the bandwidth is bytes / bytes_ns */
} dt_memory_row;

/* user_annotation (on a host thread) and gpu_user_annotation (on a device stream), per name. */
typedef struct dt_annotation_row {
    uint32_t name;
    int on_device;
    uint64_t count;
    int64_t total_ns, max_ns;
} dt_annotation_row;

typedef struct dt_api_row {
    uint32_t name;
    uint64_t count;
    int64_t total_ns, max_ns;
} dt_api_row;

typedef struct dt_op_row {
    uint32_t name;
    uint64_t count;
    int64_t cpu_ns;          /* the instances' durations */
    int64_t device_self_ns;  /* device work whose innermost enclosing op is an instance of this name */
    int64_t device_total_ns; /* device work with an instance of this name anywhere on its op stack,
                                each device event counted once per name (recursion counts once) */
} dt_op_row;

/* Why a device event (kernel, copy, set) is linked to no op: the link is device event ->
 * correlation -> the runtime call with that correlation -> the innermost cpu_op on that call's
 * thread that contains it; a trace whose runtime calls carry no correlation at all is linked
 * through External id instead (dt_link_stats.by_external_id). */
#define DT_UNLINKED_CAUSES(X)                                       \
    X(no_correlation, "without a correlation")                      \
    X(no_runtime, "whose correlation names no runtime call")        \
    X(outside_op, "launched by a runtime call inside no cpu_op")    \
    X(no_external_id, "without an External id (External id links)") \
    X(unknown_external_id, "whose External id names no cpu_op (External id links)")

typedef enum dt_unlinked_cause {
#define DT_CAUSE_ENUM(name, text) DT_UNLINKED_##name,
    DT_UNLINKED_CAUSES(DT_CAUSE_ENUM)
#undef DT_CAUSE_ENUM
        DT_UNLINKED_COUNT
} dt_unlinked_cause;

/* Why an event was left out of every table (it is counted, with where the first one is): a
 * complete event ('X') without a usable ts or dur, or an event without "ph". */
#define DT_SKIP_CAUSES(X)                                           \
    X(no_ph, "without ph")                                          \
    X(no_ts, "without ts")                                          \
    X(ts_not_number, "whose ts is not a number")                    \
    X(ts_out_of_range, "whose ts is out of range (beyond 2^61 ns)") \
    X(no_dur, "without dur")                                        \
    X(dur_not_number, "whose dur is not a number")                  \
    X(negative_dur, "with a negative dur")                          \
    X(dur_out_of_range, "whose dur is out of range (beyond 2^61 ns)")

typedef enum dt_skip_cause {
#define DT_SKIP_ENUM(name, text) DT_SKIP_##name,
    DT_SKIP_CAUSES(DT_SKIP_ENUM)
#undef DT_SKIP_ENUM
        DT_SKIP_COUNT
} dt_skip_cause;
const char *dt_skip_cause_text(dt_skip_cause cause);
const char *dt_skip_cause_key(dt_skip_cause cause);

typedef struct dt_link_stats {
    int by_external_id; /* no runtime call has a correlation: device events linked by External id */
    uint64_t linked;    /* device events linked to an op */
    int64_t linked_ns;
    uint64_t unlinked[DT_UNLINKED_COUNT];
    int64_t unlinked_ns[DT_UNLINKED_COUNT];
    /* Linked through the correlation, carrying an External id, and the op found has one too:
     * how many, and how many of those name another op instance (older exports give kernels
     * their correlation as External id). */
    uint64_t external_id_checked, external_id_disagree;
} dt_link_stats;
const char *dt_unlinked_cause_text(dt_unlinked_cause cause);

#define DT_REPORT_GAPS 3
typedef struct dt_stream_row {
    int64_t device, stream;
    uint64_t events;
    int64_t busy_ns, span_ns;
    int ngaps;
    int64_t gap_ns[DT_REPORT_GAPS], gap_at_ns[DT_REPORT_GAPS]; /* at: from the trace's first event */
} dt_stream_row;

struct dt_report_acc;

typedef struct dt_report {
    char *path; /* owned */
    dt_names_mode names_mode;
    dt_intern names; /* every name met (ids in the rows) */
    dt_tr_info info; /* the top-level members: rank, the devtrace section */
    int64_t rank;    /* distributedInfo's rank, or the trace's place among those given */
    /* The rows, each table sorted by time (longest first, then by name). */
    dt_kernel_row *kernels;
    size_t nkernels;
    dt_memory_row *memory;
    size_t nmemory;
    dt_api_row *api;
    size_t napi;
    dt_op_row *ops;
    size_t nops;
    dt_stream_row *streams;
    size_t nstreams;
    dt_annotation_row *annotations;
    size_t nannotations;
    int64_t kernel_ns;                  /* all kernels' time */
    int64_t unlinked_device_ns;         /* device time linked to no op (the sum of link.unlinked_ns) */
    dt_link_stats link;                 /* how device events were linked to ops */
    int64_t first_ts_ns, last_end_ns;   /* the trace's first event and the end of its last */
    uint64_t counted[DT_TR_KIND_COUNT]; /* complete ('X') events per kind */
    uint64_t skipped[DT_SKIP_COUNT];    /* events left out of the tables, per cause */
    uint64_t skipped_at[DT_SKIP_COUNT]; /* the byte offset of the first of each */
    uint64_t nskipped;
    /* ProfilerStep#N events (cpu_op or user_annotation): how many distinct names, and the span
     * from the first one's start to the last one's end */
    uint64_t nsteps;
    int64_t steps_from_ns, steps_to_ns;
    /* The straggler view (compare.h): the collectives' kernel time (kernels named like NCCL's,
     * RCCL's, hccl (MTIA's hccl::, devtrace's hccl:) or xccl::), each step's span in time
     * order, and each collective kernel. */
    int64_t collective_ns;
    struct dt_span {
        int64_t start, end;
    } * step_spans, *collectives; /* owned */
    size_t nstep_spans, ncollectives;
    /* Each runtime call's correlation -> 1 when the call starts inside the steps' span, else 0
     * (owned; built when the trace has steps: dt_report_read_steps uses it). */
    dt_keymap step_correlations;
    /* dt_report_read_steps: only what lies in [window_from_ns, window_to_ns] is counted (a
     * device event by its runtime call's start when the window's correlations know it) */
    int windowed;
    int64_t window_from_ns, window_to_ns;
    const dt_keymap *window_correlations; /* borrowed */
    struct dt_report_acc *acc;            /* owned: the state while reading */
} dt_report;

/* a + b, held at INT64_MAX / INT64_MIN instead of overflowing (totals of hostile traces). */
static inline int64_t dt_add_saturating(int64_t a, int64_t b)
{
    int64_t sum;
    if (__builtin_add_overflow(a, b, &sum))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return sum;
}

/* The median of two sorted values a <= b, rounded up, without overflow. */
static inline int64_t dt_midpoint(int64_t a, int64_t b)
{
    return a + (int64_t)(((uint64_t)b - (uint64_t)a + 1) / 2);
}

/* Reads the trace at path into r (initialised here). 0, or -1 with one line in err. */
int dt_report_read(dt_report *r, const char *path, dt_names_mode mode, char *err, size_t errlen);
/* The same from a buffer (tests, the fuzz target). */
int dt_report_read_buffer(dt_report *r, const char *name, const void *data, size_t len, dt_names_mode mode, char *err,
                          size_t errlen);
/* The same from events that are not in a file (devtrace record's exit summary): begin, add each
 * event (its strings only need to live during the call; -1: out of memory), end (0 or -1 with err). */
int dt_report_begin(dt_report *r, const char *name, dt_names_mode mode, char *err, size_t errlen);
int dt_report_add(dt_report *r, const dt_tr_event *ev);
int dt_report_end(dt_report *r, char *err, size_t errlen);
/* The trace of `whole` (read with dt_report_read, nsteps > 0) read again, counting only what
 * lies inside its steps' span: host events by their start, device events by their runtime
 * call's start (their own start when no runtime call has their correlation). */
int dt_report_read_steps(dt_report *r, const dt_report *whole, char *err, size_t errlen);
/* The same over the trace's text in memory (whole read with dt_report_read_buffer: the fuzz
 * target). */
int dt_report_read_steps_buffer(dt_report *r, const dt_report *whole, const void *data, size_t len, char *err,
                                size_t errlen);
void dt_report_free(dt_report *r);
/* One line (no newline) saying how many events were skipped and why, with the first's offset:
 * "skipped 3 events: 1 without dur (first at byte 812), ...". Empty when none was. */
void dt_report_skipped_text(const dt_report *r, char *buf, size_t len);
const char *dt_report_name(const dt_report *r, uint32_t id);
/* A name with its template arguments elided: "void k<float, 4>(float*)" -> "void k<...>(float*)".
 * Writes at most outlen - 1 bytes and a NUL; returns the length written. */
size_t dt_short_name(const char *name, size_t len, char *out, size_t outlen);

/* The report's tables (initialised here; dt_table_free each). */
void dt_report_kernels_table(const dt_report *r, dt_table *t);
void dt_report_memory_table(const dt_report *r, dt_table *t);
void dt_report_api_table(const dt_report *r, dt_table *t);
void dt_report_ops_table(const dt_report *r, dt_table *t);
void dt_report_streams_table(const dt_report *r, dt_table *t);
void dt_report_annotations_table(const dt_report *r, dt_table *t);

/* The whole report of one trace: in `table` format the header lines (events, the devtrace
 * section's backend, losses and notes) and the five tables; csv: the tables one after another,
 * each after a line "# title"; json: one object. */
void dt_report_write(const dt_report *r, dt_format format, FILE *out, size_t top);
/* The tables as DIR/kernels.csv ... (csv) or DIR/report.json: 0, or -1 with err. */
int dt_report_write_dir(const dt_report *r, dt_format format, const char *dir, size_t top, char *err, size_t errlen);
/* The devtrace section: backend, every non-zero loss counter (all but its per-kind counts), notes. */
void dt_report_write_devtrace_text(const dt_report *r, FILE *out);
/* mkdir DIR unless it exists: 0, or -1 with err. */
int dt_report_make_dir(const char *dir, char *err, size_t errlen);

/* The rest of the report layer's interface, for the command (src/cli includes this one
 * header of the layer; scripts/check-layers): the timeline picture, the comparison of two
 * traces, the exit summary. Last, so that their own include of this header finds it whole. */
#include "report/compare.h"
#include "report/summary.h"
#include "report/svg.h"

#endif
