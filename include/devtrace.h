/* devtrace.h: the public C API of devtrace, the only header a user includes.
 *
 * devtrace records the device timeline of an accelerator program (kernels, memory
 * copies, memsets and the runtime calls that caused them) through the vendor's own
 * tracing API and writes it as a Kineto-compatible Chrome trace.
 *
 * Conventions: 0 is success, a negative DEVTRACE_E* value is an error; functions that
 * can fail for a reason worth telling fill a devtrace_error with a message that names
 * the problem and the fix. Nothing here aborts the host program. */
#ifndef DEVTRACE_H
#define DEVTRACE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define DEVTRACE_EXPORT __attribute__((visibility("default")))
#else
#define DEVTRACE_EXPORT
#endif

#define DEVTRACE_VERSION_MAJOR 0
#define DEVTRACE_VERSION_MINOR 2
#define DEVTRACE_VERSION_PATCH 0
#define DEVTRACE_VERSION_STRING "0.2.0"
/* The version as one number, major * 10000 + minor * 100 + patch (200 for 0.2.0), for
 * comparisons: #if DEVTRACE_VERSION_NUMBER >= 200. */
#define DEVTRACE_VERSION_NUMBER (DEVTRACE_VERSION_MAJOR * 10000 + DEVTRACE_VERSION_MINOR * 100 + DEVTRACE_VERSION_PATCH)

/* The version of the library loaded at run time ("0.2.0"), which may be newer than the
 * header the program was compiled with (DEVTRACE_VERSION_STRING). */
DEVTRACE_EXPORT const char *devtrace_version(void);
/* The same as a number (DEVTRACE_VERSION_NUMBER of the library loaded at run time). */
DEVTRACE_EXPORT unsigned devtrace_version_number(void);

/* ---- Thread safety ----
 * A session has one controlling thread at a time: devtrace_open, start, stop, flush, drain,
 * write_*, stats_get/stats_read, stream_*, device_*, note*, capture_window and close must
 * not run concurrently with each other on the same session (serialise them yourself).
 * Any number of threads may at once call devtrace_push_external/pop_external,
 * devtrace_push_user_correlation/pop_user_correlation (each thread has its own stacks),
 * devtrace_range_push/pop, devtrace_annotate_push/pop, devtrace_op_enter/op_exit and
 * devtrace_add_note, and make their own calls into the traced vendor runtime, while the
 * controlling thread starts, stops, flushes, drains or restarts the session: a flush or a
 * drain reads only events already published to the store, and one published while it runs
 * is delivered by the next flush. An op that ends while devtrace_stop runs is in the window
 * or not, never half; one that is still open at stop has no cpu_op. devtrace_close must not
 * run while any other call on the session is in flight. Different sessions are independent. The calls without a
 * session (devtrace_version*, devtrace_strerror/errname, devtrace_kind_name,
 * devtrace_backend_*, devtrace_event_size, devtrace_abi_*) are safe on any thread. */

/* One table generates the codes, devtrace_strerror and devtrace_errname. */
#define DEVTRACE_ERRNO_MAP(X)                                           \
    X(OK, 0, "success")                                                 \
    X(INVAL, -1, "invalid argument")                                    \
    X(NOMEM, -2, "out of memory")                                       \
    X(UNAVAILABLE, -3, "no tracing backend is available")               \
    X(UNKNOWN_BACKEND, -4, "unknown backend name")                      \
    X(STATE, -5, "call not valid in the session's current state")       \
    X(IO, -6, "input/output error")                                     \
    X(VENDOR, -7, "the vendor library reported an error")               \
    X(EMPTY, -8, "no external correlation id is pushed on this thread") \
    X(FORMAT, -9, "malformed input")                                    \
    X(NOTSUP, -10, "not supported by this backend")

typedef enum devtrace_status {
#define DEVTRACE__ERRNO_ENUM(name, value, msg) DEVTRACE_E##name = (value),
    DEVTRACE_ERRNO_MAP(DEVTRACE__ERRNO_ENUM)
#undef DEVTRACE__ERRNO_ENUM
} devtrace_status;

DEVTRACE_EXPORT const char *devtrace_strerror(int code);
DEVTRACE_EXPORT const char *devtrace_errname(int code);

/* An error as a value: the code and a message with the cause chain, most general
 * first ("could not open backend mcpti: dlopen libmcpti.so: ...; searched ..."). */
typedef struct devtrace_error {
    int code;
    char message[1024];
} devtrace_error;

/* Event kinds. Values are stable: they index devtrace_stats arrays, which have room for
 * DEVTRACE_KIND_CAPACITY kinds so that a new kind moves no field. */
typedef enum devtrace_kind {
    DEVTRACE_KIND_NONE = 0,
    DEVTRACE_KIND_KERNEL = 1,
    DEVTRACE_KIND_MEMCPY = 2,
    DEVTRACE_KIND_MEMSET = 3,
    DEVTRACE_KIND_RUNTIME = 4,
    DEVTRACE_KIND_CPU_OP = 5,  /* an annotated CPU operator (devtrace_range_push/pop) */
    DEVTRACE_KIND_EXTCORR = 6, /* vendor correlation -> external id link; consumed at drain */
    DEVTRACE_KIND_MARKER = 7,  /* a marker (range or mark) from the vendor's marker API (u.marker) */
    DEVTRACE_KIND_MEMORY = 8,  /* an allocation or release of device memory (u.memory), an instant */
    DEVTRACE_KIND_COUNT = 9
} devtrace_kind;
#define DEVTRACE_KIND_CAPACITY 16
/* A kind's bit in devtrace_config.kinds. */
#define DEVTRACE_KIND_BIT(k) (1u << (k))

DEVTRACE_EXPORT const char *devtrace_kind_name(int kind);

typedef enum devtrace_memcpy_dir {
    DEVTRACE_COPY_UNKNOWN = 0,
    DEVTRACE_COPY_HTOD = 1,
    DEVTRACE_COPY_DTOH = 2,
    DEVTRACE_COPY_DTOD = 3,
    DEVTRACE_COPY_HTOH = 4
} devtrace_memcpy_dir;

/* The name a copy of this direction (devtrace_memcpy_dir) has in a trace, as Kineto names
 * CUPTI's copies: "Memcpy HtoD (Pageable -> Device)", "Memcpy DtoH (Device -> Pageable)",
 * "Memcpy DtoD (Device -> Device)", "Memcpy HtoH (Pageable -> Pageable)", and
 * "Memcpy (Unknown)" for DEVTRACE_COPY_UNKNOWN or any other value. Static storage; never NULL. */
DEVTRACE_EXPORT const char *devtrace_memcpy_name(uint32_t direction);

/* Data types of collectives (u.collective.data_type). */
typedef enum devtrace_dtype {
    DEVTRACE_DTYPE_UNKNOWN = 0,
    DEVTRACE_DTYPE_INT8,
    DEVTRACE_DTYPE_INT16,
    DEVTRACE_DTYPE_INT32,
    DEVTRACE_DTYPE_INT64,
    DEVTRACE_DTYPE_UINT8,
    DEVTRACE_DTYPE_UINT16,
    DEVTRACE_DTYPE_UINT32,
    DEVTRACE_DTYPE_UINT64,
    DEVTRACE_DTYPE_FP16,
    DEVTRACE_DTYPE_BF16,
    DEVTRACE_DTYPE_FP32,
    DEVTRACE_DTYPE_FP64,
    DEVTRACE_DTYPE_INT128,
    DEVTRACE_DTYPE_FP8,
    DEVTRACE_DTYPE_COUNT
} devtrace_dtype;

/* Marker phases (u.marker.phase): a range's start and end are paired by id at drain. */
#define DEVTRACE_MARKER_START 0u
#define DEVTRACE_MARKER_END 1u
#define DEVTRACE_MARKER_INSTANT 2u
#define DEVTRACE_MARKER_RANGE 3u

/* Event flags. */
#define DEVTRACE_EVENT_HAS_EXTERNAL 0x01u       /* external_id is set (0 is a valid id) */
#define DEVTRACE_EVENT_HOST_CLOCK 0x02u         /* timestamps already host CLOCK_REALTIME ns */
#define DEVTRACE_EVENT_HAS_LAUNCH 0x04u         /* kernel grid/block are known */
#define DEVTRACE_EVENT_HAS_QUEUED 0x08u         /* kernel queued_ns is known */
#define DEVTRACE_EVENT_HAS_CBID 0x10u           /* runtime cbid is known */
#define DEVTRACE_EVENT_HAS_REGS 0x20u           /* kernel registers/shared memory are known */
#define DEVTRACE_EVENT_HAS_SHARED 0x40u         /* kernel shared memory is known, registers are not (OpenCL) */
#define DEVTRACE_EVENT_HAS_SEQUENCE 0x80u       /* cpu op sequence number and forward thread id are known */
#define DEVTRACE_EVENT_COLLECTIVE 0x100u        /* a kernel that is a collective communication (u.collective) */
#define DEVTRACE_EVENT_HAS_LEVEL 0x200u         /* runtime: u.runtime.level_id names the call's API level */
#define DEVTRACE_EVENT_HAS_USER_EXTERNAL 0x400u /* user_external_id is set (0 is a valid id) */

/* One event: fixed size, names interned (name_id), no per-event allocation.
 * Timestamps are ns; after drain they are host CLOCK_REALTIME ns. For runtime and
 * CPU-op events, device/stream hold the process id and thread id.
 * The struct can grow: a later version only appends fields (devtrace_event_size() is the
 * size of the library's), and a callback reads only the fields its header knows, so a
 * program compiled against an older header keeps working. It stays at most 128 bytes. */
typedef struct devtrace_event {
    uint64_t start_ns;
    uint64_t end_ns;
    uint64_t correlation; /* vendor correlation id; 0 = none */
    uint64_t external_id; /* valid when flags & DEVTRACE_EVENT_HAS_EXTERNAL */
    uint32_t name_id;     /* interned name; 0 = no name */
    uint16_t kind;        /* devtrace_kind */
    uint16_t flags;       /* DEVTRACE_EVENT_* */
    uint32_t device;      /* device id, or process id for host-side kinds */
    uint32_t context;
    uint32_t stream; /* stream/queue id, or thread id for host-side kinds */
    uint32_t reserved;
    union {
        struct {
            int32_t grid[3];
            int32_t block[3];
            uint32_t registers_per_thread;
            uint32_t static_shared;
            uint32_t dynamic_shared;
            uint32_t reserved;
            uint64_t queued_ns;
        } kernel;
        struct {
            uint64_t bytes;
            uint32_t direction;          /* devtrace_memcpy_dir */
            uint32_t src_kind, dst_kind; /* vendor memory kinds, informational */
        } memcpy;
        struct {
            uint64_t bytes;
            uint32_t value;
        } memset;
        struct {
            uint32_t cbid;
            int32_t return_value;
            uint32_t level_id; /* interned name of the API level ("acl", "runtime"), with HAS_LEVEL */
            uint32_t depth;    /* with HAS_LEVEL: the level's depth in the vendor's call stack, 1 the
                                  outermost; of one correlation id's runtime events, the flow starts
                                  at the deepest (0: no level) */
        } runtime;
        struct {
            int64_t sequence_nr;    /* the framework's autograd sequence number */
            uint64_t fwd_thread_id; /* the framework's id of the forward op's thread */
        } cpu_op;
        struct {                    /* a kernel with DEVTRACE_EVENT_COLLECTIVE */
            uint64_t count;         /* elements communicated; 0 = unknown */
            double bandwidth_gbps;  /* as the vendor measured it; 0 = not given (the sink derives it) */
            uint32_t comm_name_id;  /* interned communicator (group) name; 0 = none */
            uint32_t algorithm_id;  /* interned algorithm name; 0 = none */
            uint32_t data_type;     /* DEVTRACE_DTYPE_*; DEVTRACE_DTYPE_UNKNOWN when not given */
            uint32_t vendor_record; /* the vendor's record kind it came from */
        } collective;
        struct { /* device/stream hold the process id (as its thread: the record has no thread) */
            uint64_t address;
            uint64_t bytes;
            int64_t total;      /* after drain: bytes allocated on the device after this event */
            uint32_t release;   /* 0: allocation, 1: release */
            uint32_t device_id; /* the device whose memory it is */
            uint32_t stream_id; /* UINT32_MAX when not on a stream */
        } memory;
        struct {
            uint64_t id;        /* pairs a range's start and end */
            uint32_t device;    /* 1: a device-side marker (device/stream set), 0: host (pid/tid) */
            uint32_t domain_id; /* interned domain name; 0 = the default domain */
            uint32_t phase;     /* DEVTRACE_MARKER_*: after drain, RANGE or INSTANT */
        } marker;
    } u;
    /* Since 0.2. The id on top of the launching thread's user correlation stack
     * (devtrace_push_user_correlation), on runtime calls and the device work they launched;
     * valid when flags & DEVTRACE_EVENT_HAS_USER_EXTERNAL. */
    uint64_t user_external_id;
} devtrace_event;
#if defined(__cplusplus)
static_assert(sizeof(devtrace_event) <= 128, "devtrace_event stays within 128 bytes");
#else
_Static_assert(sizeof(devtrace_event) <= 128, "devtrace_event stays within 128 bytes");
#endif
/* sizeof(devtrace_event) in the library loaded at run time. */
DEVTRACE_EXPORT size_t devtrace_event_size(void);

/* The scalar loss and quality counters, each named after its cause, as one table that
 * generates the devtrace_stats fields, the recorder's wire, the exit summary and the trace's
 * "devtrace" block: X(field, group, key, what). field is the struct member; the trace
 * writes it as "key" inside the object "group" ("" for none); what is the summary's line.
 * A new counter is appended at the end, never inserted. */
#define DEVTRACE_STATS_COUNTERS(X)                                                                        \
    X(dropped_store_full, "dropped", "store_full", "dropped (event store full)")                          \
    X(dropped_pool_full, "dropped", "pool_full", "dropped (buffer pool full)")                            \
    X(dropped_vendor, "dropped", "vendor", "dropped (reported by the vendor)")                            \
    X(malformed_records, "malformed", "records", "malformed records skipped")                             \
    X(malformed_bytes, "malformed", "bytes", "malformed bytes skipped")                                   \
    X(zero_timestamp, "", "zero_timestamp", "records without timing (start == end == 0)")                 \
    X(refused_buffers, "", "refused_buffers", "buffers refused")                                          \
    X(unpaired_flows, "", "unpaired_flows", "unpaired flow halves")                                       \
    X(unresolved_names, "", "unresolved_names", "names the vendor could not resolve")                     \
    X(bad_timestamps, "", "bad_timestamps", "bad timestamps (end before start)")                          \
    X(device_pending, "lost", "device_pending", "lost (device work not read back when the program died)") \
    X(events_missing, "", "events_missing", "processes whose events are missing, how many not known")     \
    X(notes_dropped, "", "notes_dropped", "notes not kept (past the cap)")                                \
    X(forked_untraced, "", "forked_untraced", "children forked without exec (not traced)")

/* Loss and quality counters. The struct can grow: size first, per-kind arrays with room
 * for DEVTRACE_KIND_CAPACITY kinds, then the counters of DEVTRACE_STATS_COUNTERS, to which a
 * later version only appends. Read it with devtrace_stats_read, which fills no more than
 * out->size bytes; devtrace_stats_get returns the library's own (its size is the library's). */
typedef struct devtrace_stats {
    size_t size;                                    /* bytes of the struct that are filled */
    uint64_t events[DEVTRACE_KIND_CAPACITY];        /* events written, per kind */
    uint64_t out_of_window[DEVTRACE_KIND_CAPACITY]; /* dropped at drain: outside [start, stop] */
#define DEVTRACE__STATS_FIELD(field, group, key, what) uint64_t field;
    DEVTRACE_STATS_COUNTERS(DEVTRACE__STATS_FIELD)
#undef DEVTRACE__STATS_FIELD
} devtrace_stats;

typedef struct devtrace_session devtrace_session;

/* Settings for devtrace_open. Fill it with devtrace_config_init, which sets size; a later
 * version only appends fields, and the library reads the first `size` bytes (the fields
 * after them take their defaults). A config zeroed without devtrace_config_init (size 0)
 * is read as this version's whole struct, as before size existed. */
typedef struct devtrace_config {
    size_t size;                  /* sizeof(devtrace_config), set by devtrace_config_init */
    const char *backend;          /* NULL: $DEVTRACE_BACKEND, else "auto" */
    const char *runtime_category; /* NULL: the backend's default ("cuda_runtime", "privateuse1_runtime") */
    uint64_t max_events;          /* bound on stored events; 0: $DEVTRACE_MAX_EVENTS or 16 M */
    int rank;                     /* -1: from $RANK, else 0 */
    int world_size;               /* -1: from $WORLD_SIZE, else 1 */
    const char *raw_path;         /* .dtraw capture file; NULL: $DEVTRACE_RAW or none */
    /* Since 0.2. The kinds to record, DEVTRACE_KIND_BIT(DEVTRACE_KIND_KERNEL) | ...; 0: every
     * kind. Backends enable only the vendor activity kinds asked for where they can, and the
     * rest is filtered before it is stored; events of kinds not asked for are not losses.
     * DEVTRACE_KIND_EXTCORR is implied whenever a device or runtime kind is asked for (it
     * carries the op links). */
    uint32_t kinds;
} devtrace_config;

DEVTRACE_EXPORT void devtrace_config_init(devtrace_config *cfg);

/* Selects and binds a backend. Returns NULL only on invalid arguments or an unknown
 * backend name (err says which names exist); when the selected backend cannot trace,
 * the session is the "unavailable" one: it records nothing and says why. */
DEVTRACE_EXPORT devtrace_session *devtrace_open(const devtrace_config *cfg, devtrace_error *err);
DEVTRACE_EXPORT int devtrace_start(devtrace_session *s); /* opens the capture window */
DEVTRACE_EXPORT int devtrace_stop(devtrace_session *s);  /* flushes, closes the window */
/* The same, saying why they failed: err (may be NULL) gets the code and a message naming
 * the cause ("the session is already running", "backend cupti: start failed: ...").
 * A backend whose start fails still leaves the session running (stop it as usual). */
DEVTRACE_EXPORT int devtrace_start_with_error(devtrace_session *s, devtrace_error *err);
DEVTRACE_EXPORT int devtrace_stop_with_error(devtrace_session *s, devtrace_error *err);

/* External correlation (the framework's CPU op id). 0 is a valid id. */
DEVTRACE_EXPORT int devtrace_push_external(devtrace_session *s, uint64_t id);
/* Pops must match pushes: popping a plain id over a range (or the reverse) leaves the
 * stack unchanged and returns DEVTRACE_ESTATE; DEVTRACE_EEMPTY when nothing is pushed. */
DEVTRACE_EXPORT int devtrace_pop_external(devtrace_session *s, uint64_t *id);

/* User correlation (Kineto's pushUserCorrelationId): a second per-thread stack, like
 * push_external. Runtime calls and the device work they launch while an id is pushed carry
 * it in devtrace_event.user_external_id (flag DEVTRACE_EVENT_HAS_USER_EXTERNAL), written in
 * the Chrome trace as the arg "User external id". 0 is a valid id. Pop: DEVTRACE_EEMPTY when
 * nothing is pushed on this thread. */
DEVTRACE_EXPORT int devtrace_push_user_correlation(devtrace_session *s, uint64_t id);
DEVTRACE_EXPORT int devtrace_pop_user_correlation(devtrace_session *s, uint64_t *id);

/* Annotation: a named CPU operator with an id; pushes the id as the external
 * correlation id, and the op appears in the trace as a cpu_op event. */
DEVTRACE_EXPORT int devtrace_range_push(devtrace_session *s, const char *name, uint64_t id);
DEVTRACE_EXPORT int devtrace_range_pop(devtrace_session *s);

/* Annotation on the process's default session: the one devtrace record (or the
 * injection library) started. No-ops returning DEVTRACE_ESTATE when none runs, so an
 * application can call them unconditionally. */
DEVTRACE_EXPORT int devtrace_annotate_push(const char *name, uint64_t id);
DEVTRACE_EXPORT int devtrace_annotate_pop(void);
/* The default session; under devtrace record, the collector's, started by this call when
 * the program asks before its first call through the traced runtime. NULL when none. */
DEVTRACE_EXPORT devtrace_session *devtrace_default_session(void);
/* Makes s (NULL: none) the default session of the annotation and op calls, for in-process
 * profiling; DEVTRACE_ESTATE while devtrace record's session is the default. */
DEVTRACE_EXPORT int devtrace_set_default_session(devtrace_session *s);

/* Operator observers (the PyTorch observer, python/devtrace/observer.cpp): an op of the
 * framework on the default session, with the framework's own id (the External id of the op
 * and of the device work launched inside it), its sequence number (-1: none) and forward
 * thread id. Like devtrace_annotate_push/pop, on the hot path: no lock, no formatting, the
 * name's pointer interned once per thread (a name's text is checked against the pointer's
 * entry, so a reused address is safe); DEVTRACE_ESTATE when no session records. An exit
 * ends the thread's innermost op only when its id is that op's (an op that ends on another
 * thread than it began on ends nothing there: DEVTRACE_ESTATE, counted in a note). */
DEVTRACE_EXPORT int devtrace_op_enter(const char *name, uint64_t id, int64_t sequence_nr, uint64_t fwd_thread_id);
/* sequence_nr for an op that takes the sequence number and forward thread id of the first op
 * entered inside it that has one (torch's "autograd::engine::evaluate_function: X" and its X). */
#define DEVTRACE_SEQUENCE_FROM_CHILD (-2)
DEVTRACE_EXPORT int devtrace_op_exit(uint64_t id);

/* Adds a note (a line in the trace's devtrace.notes and the summary). */
DEVTRACE_EXPORT int devtrace_add_note(devtrace_session *s, const char *text);

/* Finalises the events (clock alignment, window filter, correlation, names) on the
 * first call, then calls cb once per event in start-time order. Returns the count.
 * devtrace_drain stops a running session first, and returns 0 both for a session with no
 * event and when it cannot finalise (never started, out of memory): devtrace_drain_events
 * tells these apart. */
typedef void (*devtrace_event_cb)(const devtrace_event *ev, const char *name, void *user);
DEVTRACE_EXPORT size_t devtrace_drain(devtrace_session *s, devtrace_event_cb cb, void *user);
/* 0 with *count (may be NULL) set to the events given to cb, 0 for a session with none;
 * or DEVTRACE_ESTATE for a session still running (it is left running: call devtrace_stop
 * first) or never started, DEVTRACE_ENOMEM when finalising ran out of memory,
 * DEVTRACE_EINVAL without a session; err (may be NULL) says which. */
DEVTRACE_EXPORT int devtrace_drain_events(devtrace_session *s, devtrace_event_cb cb, void *user, size_t *count,
                                          devtrace_error *err);
/* The text of a name id of the session's events (u.runtime.level_id, u.collective.comm_name_id,
 * u.marker.domain_id, and name_id, whose text cb is also given): "" for 0 or an id the session
 * does not have; valid until devtrace_close. For a program that writes its own output. */
DEVTRACE_EXPORT const char *devtrace_interned_name(const devtrace_session *s, uint32_t id);
/* Delivers events while the session runs: flushes the backend's buffers, then calls cb
 * (NULL: none) once per event completed since the previous flush that can be finalised now
 * (clock aligned, runtime<->device correlation and external ids resolved), in start-time
 * order within the call. When runtime calls are recorded, a device event whose runtime half
 * has not arrived yet is held back until a later flush (nothing is counted lost for it
 * unless it is still unpaired at stop); its external ids come from the runtime half and the
 * external-correlation records that arrived with or before it. Backends with a flush of
 * their own (the CUPTI family, ROCtracer) hand over their buffers first; the others deliver
 * what their buffers handed over by then. Call it any number of times while the session runs
 * and once more after devtrace_stop to get the rest: every event is delivered exactly once
 * across the flushes. After a flush, devtrace_drain and the writers see only the events not
 * delivered yet. 0 with *count (may be NULL) set; DEVTRACE_ESTATE before devtrace_start or
 * after the final flush; DEVTRACE_ENOMEM; DEVTRACE_EINVAL without a session; err (may be
 * NULL) says which.
 *
 * After the final flush every event has been given once: devtrace_stats (its per-kind counts
 * include the events given by earlier flushes), the stream list and the writers then have
 * the whole window's counts but no event to write.
 *
 * A session can start again: devtrace_start after devtrace_stop begins a new capture window
 * (take the events first, with a drain or the final flush: the events of the window closed
 * are retired at the restart, written and delivered by nothing after it). What resets: the
 * events, the per-kind counts and every counter of devtrace_stats, the capture window, the
 * stream list and the final flush. What stays: the backend binding, the devices, the notes,
 * the interned names, the config (kinds), and each thread's external and user correlation
 * stacks (ids pushed before a restart still apply after it). The retired events stay in the
 * store until devtrace_close and count against max_events. */
DEVTRACE_EXPORT int devtrace_flush(devtrace_session *s, devtrace_event_cb cb, void *user, size_t *count,
                                   devtrace_error *err);

/* Writes the Kineto-compatible Chrome trace atomically (path.tmp, then rename);
 * gzip when path ends in ".gz" (in any case: ".GZ" too). */
DEVTRACE_EXPORT int devtrace_write_chrome(devtrace_session *s, const char *path, devtrace_error *err);
/* Writes the trace as Perfetto's own protobuf format (TrackEvents: a track per device
 * stream and per host thread, interned names, the same args and flows), atomically;
 * gzip when path ends in ".gz". */
DEVTRACE_EXPORT int devtrace_write_perfetto(devtrace_session *s, const char *path, devtrace_error *err);
/* Writes the format the path's name asks for: Perfetto's for a name ending in ".pftrace"
 * or ".perfetto-trace" (in any case, either followed by ".gz"), else the Chrome trace;
 * gzip for a name ending in ".gz". */
DEVTRACE_EXPORT int devtrace_write_trace(devtrace_session *s, const char *path, devtrace_error *err);

/* The library's own stats (its size field is the library's sizeof(devtrace_stats)). */
DEVTRACE_EXPORT const devtrace_stats *devtrace_stats_get(devtrace_session *s);
/* Copies the stats into *out: set out->size to sizeof(devtrace_stats) first; no more than
 * out->size bytes are written, and out->size is set to the bytes filled (the smaller of the
 * two versions' sizes). 0, or DEVTRACE_EINVAL without a session or for a size smaller than
 * the size field and the per-kind arrays. */
DEVTRACE_EXPORT int devtrace_stats_read(const devtrace_session *s, devtrace_stats *out);
DEVTRACE_EXPORT const char *devtrace_backend_name(const devtrace_session *s);
/* Why the session cannot trace ("" when it can). */
DEVTRACE_EXPORT const char *devtrace_unavailable_reason(const devtrace_session *s);

/* What the trace says about the session, for a program that writes its own output
 * (a profiler adaptor, a language binding). Strings belong to the session and live until
 * devtrace_close. */

/* How far the backend is validated ("emulated: ...", "hardware: ..."), as in the trace. */
DEVTRACE_EXPORT const char *devtrace_validation(const devtrace_session *s);
/* The category of runtime calls in the trace ("cuda_runtime", "privateuse1_runtime"). */
DEVTRACE_EXPORT const char *devtrace_runtime_category(const devtrace_session *s);
/* The capture window in host CLOCK_REALTIME ns: 0, with *stop_ns 0 while the session
 * runs; DEVTRACE_ESTATE before devtrace_start (both set to 0). */
DEVTRACE_EXPORT int devtrace_capture_window(const devtrace_session *s, uint64_t *start_ns, uint64_t *stop_ns);
/* The notes (what the backend or the drain noticed: quirks, fallbacks, losses explained),
 * in the order they were made: devtrace_note(s, i) for i < devtrace_note_count(s), NULL
 * past the end. */
DEVTRACE_EXPORT int devtrace_note_count(const devtrace_session *s);
DEVTRACE_EXPORT const char *devtrace_note(const devtrace_session *s, int index);

/* A device the backend described (the trace's deviceProperties). Set size to
 * sizeof(devtrace_device) before devtrace_device_get: a later version only appends
 * fields and fills no more than size bytes. 0 or -1: unknown. */
typedef struct devtrace_device {
    size_t size; /* set by the caller */
    int id;      /* the device id events carry in devtrace_event.device */
    char name[128];
    uint64_t total_global_mem; /* bytes */
    int compute_major, compute_minor;
    int max_threads_per_block, max_threads_per_sm, max_blocks_per_sm;
    int regs_per_block, regs_per_sm, warp_size, num_sms;
    uint64_t smem_per_block, smem_per_sm; /* bytes */
    int has_occupancy;                    /* 1: the limits above are the device's, so occupancy is computed */
} devtrace_device;

DEVTRACE_EXPORT int devtrace_device_count(const devtrace_session *s);
/* 0 with *out filled (its first out->size bytes); DEVTRACE_EINVAL for an index past the
 * count or a size smaller than the fields up to name. */
DEVTRACE_EXPORT int devtrace_device_get(const devtrace_session *s, int index, devtrace_device *out);

/* The occupancy of a kernel launch on its device, as the trace's kernel args give it ("blocks
 * per SM", "warps per SM", "est. achieved occupancy %"), for a program that writes its own
 * output (the Kineto adaptor). Set size to sizeof(devtrace_occupancy) first: a later version
 * only appends fields and fills no more than size bytes. 0 with *out filled; DEVTRACE_ENOTSUP
 * when the kernel has no launch shape or its device no attributes (the trace then has no
 * occupancy keys); DEVTRACE_EINVAL for a NULL argument, an event that is not a kernel or a
 * size smaller than the struct's first version. */
typedef struct devtrace_occupancy {
    size_t size;                       /* set by the caller */
    double blocks_per_sm;              /* launched blocks / SMs */
    double warps_per_sm;               /* blocks_per_sm * warps per block */
    int active_blocks_per_sm;          /* the limit from registers, shared memory, threads */
    double est_achieved_occupancy_pct; /* the trace writes it rounded to an integer */
} devtrace_occupancy;

DEVTRACE_EXPORT int devtrace_kernel_occupancy(const devtrace_session *s, const devtrace_event *kernel,
                                              devtrace_occupancy *out);

/* A device stream that carried events (after devtrace_drain or devtrace_flush: the streams
 * of the events delivered or finalised in the current capture window, ascending by device
 * then stream), named as the trace names it ("stream 7"). Set size to
 * sizeof(devtrace_stream) first: a later version only appends fields. */
typedef struct devtrace_stream {
    size_t size;      /* set by the caller */
    int device;       /* devtrace_event.device */
    uint32_t context; /* devtrace_event.context of the stream's first event */
    uint32_t stream;  /* devtrace_event.stream */
    char name[64];    /* "stream 7" */
} devtrace_stream;
DEVTRACE_EXPORT int devtrace_stream_count(const devtrace_session *s);
/* 0 with *out filled (its first out->size bytes); DEVTRACE_EINVAL for an index past the
 * count or a size smaller than the fields up to name. */
DEVTRACE_EXPORT int devtrace_stream_get(const devtrace_session *s, int index, devtrace_stream *out);

DEVTRACE_EXPORT void devtrace_close(devtrace_session *s);

/* The layout of the public structs in the library loaded at run time, for bindings that
 * mirror them (the Python package checks its ctypes structs against it):
 * devtrace_abi_layout("devtrace_config", "kinds", &off, &size) gives the field's offset
 * and size; field NULL gives offset 0 and the struct's sizeof. 0, or
 * DEVTRACE_EINVAL for a struct or field it does not know. devtrace_abi_field(struct, i)
 * names the struct's i-th field (NULL past the last), so a binding can list them all. */
DEVTRACE_EXPORT int devtrace_abi_layout(const char *struct_name, const char *field, size_t *offset, size_t *size);
DEVTRACE_EXPORT const char *devtrace_abi_field(const char *struct_name, int index);

/* ---- The backends compiled into this library ----
 * What a tool that starts traced programs (devtrace record) must know about each: how the
 * collector (this library) gets loaded into the program, what it can record, how far it is
 * validated. */

/* How the collector gets loaded into a traced program for a backend. */
typedef enum devtrace_load_method {
    /* LD_PRELOAD=<this library> with DEVTRACE_COLLECT_MODE=preload and
     * DEVTRACE_COLLECT_PRELOAD=<backend name>: the library's constructor starts the collector. */
    DEVTRACE_LOAD_PRELOAD = 0,
    /* The vendor runtime loads the library named in an environment variable (load_variable,
     * set to the library's path) and calls its injection entry point. */
    DEVTRACE_LOAD_INJECTION = 1,
    /* A loader's layer list (load_variable, entries separated by ':'): the library is
     * prepended to it, and the loader starts it as a layer. */
    DEVTRACE_LOAD_LAYER = 2
} devtrace_load_method;

/* Capabilities (devtrace_backend_info.capabilities). */
#define DEVTRACE_CAP_KERNEL_LAUNCH 0x1u /* grid/block/registers/shared memory known */
#define DEVTRACE_CAP_OCCUPANCY 0x2u     /* device attributes for the occupancy calculator */
#define DEVTRACE_CAP_EXTERNAL 0x4u      /* vendor-side external correlation */
#define DEVTRACE_CAP_RAW_CAPTURE 0x8u   /* saves the vendor's buffers as a raw capture (.dtraw) for replay */

/* One backend. Set size to sizeof(devtrace_backend_info) before the call: a later version
 * only appends fields and fills no more than size bytes. The strings are the library's own
 * and live as long as it is loaded. */
typedef struct devtrace_backend_info {
    size_t size;                  /* set by the caller */
    const char *name;             /* the selection name: "cupti", "opencl", ..., "none" */
    const char *description;      /* "NVIDIA CUPTI", ... */
    unsigned capabilities;        /* DEVTRACE_CAP_* */
    const char *runtime_category; /* of its runtime calls in the trace: "cuda_runtime", ... */
    int load_method;              /* devtrace_load_method */
    /* DEVTRACE_LOAD_INJECTION: the variable set to the library's path ("CUDA_INJECTION64_PATH");
     * DEVTRACE_LOAD_LAYER: the layer list the library is prepended to ("OPENCL_LAYERS");
     * DEVTRACE_LOAD_PRELOAD: NULL. */
    const char *load_variable;
    /* A vendor library that must itself be in LD_PRELOAD, ahead of the collector, for the
     * backend to record everything ("libmspti.so"; devtrace_backend_locate_library finds the
     * file the backend will load); NULL: none. */
    const char *preload_library;
    char validation[256]; /* how far it is validated, as the trace says: "emulated: ..." */
    /* Where the backend looks for its vendor library, as its reason says when it finds none
     * (NULL where it has no library of its own, as "none"): the API's name in its messages
     * ("CUPTI"), the variable that names the library's path ("DEVTRACE_CUPTI_LIBRARY"), the
     * variables that name an SDK root, in the order tried ("CUDA_HOME", "CUDA_PATH"), and
     * the file names it looks for, under the SDK roots and through the loader
     * ("libcupti.so.13", ...). Each list ends at its first NULL. */
    const char *library_api;
    const char *library_variable;
    const char *sdk_variables[8];
    const char *library_files[16];
} devtrace_backend_info;

/* The compiled-in backends, in the order DEVTRACE_BACKEND=auto tries them ("none", the
 * backend of last resort, is not counted: devtrace_backend_find finds it). */
DEVTRACE_EXPORT int devtrace_backend_count(void);
/* 0 with *out filled (its first out->size bytes); DEVTRACE_EINVAL for an index past the
 * count or a size smaller than the fields up to name. */
DEVTRACE_EXPORT int devtrace_backend_get(int index, devtrace_backend_info *out);
/* The same by name ("none" too); DEVTRACE_EUNKNOWN_BACKEND for a name not compiled in. */
DEVTRACE_EXPORT int devtrace_backend_find(const char *name, devtrace_backend_info *out);
/* Whether the backend can trace on this machine (it binds nothing): 1; 0 with the reason in
 * why ("libcupti.so not found; searched ..."); DEVTRACE_EUNKNOWN_BACKEND (why says so). */
DEVTRACE_EXPORT int devtrace_backend_probe(const char *name, char *why, size_t whylen);
/* The path of the vendor library the backend would load here (its own search: override
 * variable, SDK roots, $LD_LIBRARY_PATH): 0 with path filled; DEVTRACE_EUNAVAILABLE when it
 * is not found, DEVTRACE_ENOTSUP for a backend without such a search (the OpenCL layer is
 * loaded by the program's own loader; ROCtracer, "none"), DEVTRACE_EUNKNOWN_BACKEND,
 * DEVTRACE_EINVAL (no path or cap); err (may be NULL) says which. */
DEVTRACE_EXPORT int devtrace_backend_locate_library(const char *name, char *path, size_t cap, devtrace_error *err);

#ifdef __cplusplus
}
#endif
#endif /* DEVTRACE_H */
