/* session.h: the session object and the core's internal API, used by backends,
 * sinks, the collector and the recorder. Not part of the public header. */
#ifndef DT_SESSION_H
#define DT_SESSION_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "backend.h"
#include "clock.h"
#include "filemem.h"
#include "devtrace.h"
#include "hostclock.h"
#include "intern.h"
#include "op_window.h"
#include "tls.h"
#include "store.h"

#define DT_MAX_DEVICES 64
#define DT_DEFAULT_MAX_EVENTS (16ull * 1024 * 1024) /* the bound on stored events without $DEVTRACE_MAX_EVENTS */
#define DT_MAX_NOTES 32
#define DT_EVENT_FLOW 0x8000u      /* internal: this event is one half of a paired flow */
#define DT_EVENT_DELIVERED 0x2000u /* internal: given to a devtrace_flush callback (not delivered again) */
#define DT_EVENT_RETIRED 0x1000u   /* internal: of an earlier capture window (a restarted session) */

typedef struct dt_device_props {
    int id;
    char name[128];
    uint64_t total_global_mem;
    int compute_major, compute_minor;
    int max_threads_per_block, max_threads_per_sm, max_blocks_per_sm;
    int regs_per_block, regs_per_sm, warp_size, num_sms;
    uint64_t smem_per_block, smem_per_sm;
    int has_occupancy; /* the attributes above are real: occupancy can be computed */
} dt_device_props;

typedef enum dt_state { DT_OPEN, DT_RUNNING, DT_STOPPED, DT_FINAL } dt_state;

/* A process of the tree devtrace record traced into this session (the recorder fills these;
 * the sinks name the lanes and list the processes). */
typedef struct dt_traced_process {
    uint32_t pid, ppid;
    uint32_t device_base;               /* its device d is the lane device_base + d here (0: the first process) */
    uint64_t events;                    /* events received from it */
    int ended;                          /* its final flush arrived */
    int running;                        /* it was still running when the trace was written (a capture window) */
    int crash_signal;                   /* it shipped a crash flush on this signal (0: none) */
    char command[256];                  /* its command line, arguments joined by spaces */
    int32_t rank, world_size;           /* what it reported ($RANK, $WORLD_SIZE) */
    uint64_t window_start, window_stop; /* its own capture window (0: none of its own / open) */
} dt_traced_process;
/* Whether a trace lists its processes (and names each one's lanes): a trace of a process
 * tree (several processes, or forked children counted); a trace of one process is the same
 * as its raw capture's replay. */
static inline int dt_trace_lists_processes(size_t nprocesses, uint64_t forked_untraced)
{
    return nprocesses > 1 || forked_untraced > 0;
}
/* Device lanes of a process after the first of a session: base + its device index,
 * above any process id (at most 2^22 on Linux). */
#define DT_PROCESS_DEVICE_BASE(index) ((index) ? (1u << 30) + (uint32_t)(index)*256u : 0u)

struct devtrace_session {
    const dt_backend *backend; /* borrowed; NULL for an offline (replayed/received) session */
    void *bstate;              /* owned */
    char backend_name[32];
    char validation[256];
    char runtime_category[40];
    char unavailable_reason[8192]; /* every backend's reason, in the auto order */
    char raw_path[1024];           /* .dtraw capture to write ("" = none): config, else $DEVTRACE_RAW */
    _Atomic dt_state state; /* written by the controlling thread, read by every thread inside an op or a callback */
    uint32_t kinds;         /* DEVTRACE_KIND_BIT mask of the kinds recorded (devtrace_config.kinds); never 0 */
    int flushed_final;      /* devtrace_flush delivered the last events of the window */
    uint64_t store_dropped_base; /* the store's drops before this capture window (a restarted session) */
    uint64_t generation;
    int rank, world_size;
    dt_store store;
    dt_intern names;
    pthread_mutex_t lock; /* samples, devices, notes */
    dt_clock_sample *samples;
    size_t nsamples, samples_cap;
    dt_host_clock_choice host_clock; /* $DEVTRACE_HOST_CLOCK, read at open */
    dt_ticks ticks;                  /* the callbacks stamp TSC ticks (hostclock.h) */
    dt_clock_sample *tick_samples;   /* (ticks, backend clock ns) pairs; owned, under lock */
    size_t ntick_samples, tick_samples_cap;
    uint64_t window_start, window_stop; /* host realtime ns; 0 = not set */
    dt_op_window *op_window;            /* owned; NULL: the window is the session's start and stop */
    dt_device_props devices[DT_MAX_DEVICES];
    int ndevices;
    char *notes[DT_MAX_NOTES]; /* owned; the ones not kept are counted in stats.notes_dropped */
    int nnotes;
    /* Loss counters updated atomically; per-kind counts at finalise. devtrace record sets
     * forked_untraced, device_pending and events_missing (1: events are known to be missing,
     * how many unknown; the notes say why). */
    devtrace_stats stats;
    /* Set by devtrace record. */
    dt_traced_process *processes; /* owned */
    size_t nprocesses;
    int ranks_differ;    /* its processes reported different ranks: each on its lanes' labels */
    int process_windows; /* each process's events are kept in its own window (--capture-op) */
    /* Results of finalise. */
    devtrace_event **sorted; /* array of pointers into the store (in sorted_mem) */
    dt_bigmem sorted_mem;
    size_t nsorted;
    /* The lanes of the events kept, for the trace's names (process_name, thread_name):
     * dt_lane_key values (owned), the device lanes ascending then the host lanes ascending;
     * the first DT_MAX_LANES met, and how many events are on lanes past those (noted). */
    uint64_t *lanes;
    size_t nlanes, ndevice_lanes;
    uint64_t unnamed_lane_events;
    dt_clock_map clock;
    uint64_t base_ns;
    /* Hooks for the collector. */
    void (*on_stop)(dt_session *s, void *user);
    void *on_stop_user;
    int owner_collector; /* devtrace record's session (collector.c): stays the default */
};

/* A lane of the timeline: a device's stream, or a host thread (runtime calls and CPU ops,
 * whose device is the process and stream the thread): device << 32 | stream. */
#define DT_MAX_LANES 4096
static inline int dt_lane_is_host(const devtrace_event *ev)
{
    return ev->kind == DEVTRACE_KIND_RUNTIME || ev->kind == DEVTRACE_KIND_CPU_OP || ev->kind == DEVTRACE_KIND_MEMORY ||
           (ev->kind == DEVTRACE_KIND_MARKER && !ev->u.marker.device);
}
static inline uint64_t dt_lane_key(const devtrace_event *ev)
{
    return (uint64_t)ev->device << 32 | ev->stream;
}

/* The scalar counters of devtrace_stats in DEVTRACE_STATS_COUNTERS order (session_info.c):
 * what the wire, the summary, the trace and the raw capture's replay go through. */
typedef struct dt_stats_counter {
    const char *field, *group, *key, *what;
    size_t offset;
} dt_stats_counter;
enum {
#define DT__STATS_INDEX(field, group, key, what) DT_STATS_INDEX_##field,
    DEVTRACE_STATS_COUNTERS(DT__STATS_INDEX)
#undef DT__STATS_INDEX
        DT_STATS_NCOUNTERS
};
extern const dt_stats_counter dt_stats_counters[DT_STATS_NCOUNTERS];
static inline uint64_t *dt_stats_counter_at(devtrace_stats *st, int i)
{
    return (uint64_t *)(void *)((char *)st + dt_stats_counters[i].offset);
}
static inline uint64_t dt_stats_counter_value(const devtrace_stats *st, int i)
{
    return *(const uint64_t *)(const void *)((const char *)st + dt_stats_counters[i].offset);
}

/* Counters: atomic, relaxed. field is a devtrace_stats member name. */
#define DT_COUNT(s, field, n) __atomic_fetch_add(&(s)->stats.field, (uint64_t)(n), __ATOMIC_RELAXED)

/* An offline session (no backend): events, names and samples are added through the
 * functions below, then finalised and written like a live one. */
dt_session *dt_session_new_offline(const char *backend_name, const char *validation, const char *runtime_category,
                                   devtrace_error *err);

/* Stores a copy of ev. Returns -1 when the store is full: the store counts that drop
 * itself (dropped_store_full at finalise), so callers must not count it again. */
static inline int dt_emit(dt_session *s, const devtrace_event *ev)
{
    if (dt_store_append(&s->store, ev) != 0)
        return -1;
    return 0;
}
void dt_add_clock_sample(dt_session *s, uint64_t vendor_ns, uint64_t host_ns);
/* The vendor times of the session's first and last clock samples, the lower first (they
 * are taken in time order): 0, or -1 when it has none. */
int dt_vendor_clock_span(dt_session *s, uint64_t *lo, uint64_t *hi);
/* A paired clock sample taken now: the vendor's clock read (read_vendor) between two host
 * CLOCK_REALTIME readings, paired with their middle. When read_vendor returns success the
 * sample is added and 0 returned, with *vendor_ns and *host_ns set when not NULL (for a
 * raw capture); else -1. */
int dt_sample_vendor_clock(dt_session *s, int (*read_vendor)(uint64_t *ns), int success, uint64_t *vendor_ns,
                           uint64_t *host_ns);
void dt_add_device(dt_session *s, const dt_device_props *p);

/* The TSC as the backend's host timestamp (hostclock.h). dt_ticks_start, from a backend's
 * start: 1 when calls are to be stamped with dt_ticks_stamp (and their events marked
 * DT_EVENT_TICKS), after taking the first samples against read; 0: stamp with read (the
 * counter is not usable, or $DEVTRACE_HOST_CLOCK=clock; a note says why when not chosen). */
int dt_ticks_start(dt_session *s, dt_ticks_read_fn read);
/* From devtrace_start, after the backend's start, for a session of its own process (not
 * devtrace record's: its recorder converts what is shipped with the backend's samples) whose
 * backend stamps nothing with the counter (none, or a backend without a host-side callback):
 * the operator observer's ops are stamped with the counter under the same rule
 * (dt_tsc_usable, $DEVTRACE_HOST_CLOCK), converted at finalise to CLOCK_REALTIME and marked
 * DEVTRACE_EVENT_HOST_CLOCK as ops stamped with the clock are. 1 when stamping ticks; no note
 * when not (the ops then read CLOCK_REALTIME, as before). */
int dt_ticks_start_ops(dt_session *s);
/* A paired sample now, when the session stamps ticks: 0, else -1. */
int dt_ticks_sample(dt_session *s);
void dt_add_tick_sample(dt_session *s, uint64_t ticks, uint64_t ns);
void dt_ticks_sample_due(dt_session *s, uint64_t last);
/* At finalise, first: ticks -> the backend's clock in every marked event. */
void dt_ticks_convert(dt_session *s);
/* The same in pieces, for a pass over the store that does more (a running flush, which
 * would otherwise visit every stored event once more): begin (the map from the samples so
 * far), apply to each event, end (frees; notes the events it could not convert). */
typedef struct dt_ticks_converter {
    dt_clock_map map;
    int built;
    size_t nsamples;
    uint64_t lost;
    uint16_t converted_flags;
} dt_ticks_converter;
void dt_ticks_converter_begin(dt_session *s, dt_ticks_converter *cv);
void dt_ticks_converter_apply(dt_ticks_converter *cv, devtrace_event *ev);
void dt_ticks_converter_end(dt_session *s, dt_ticks_converter *cv);

/* A call's timestamp in ticks; a periodic sample when DT_TICKS_SAMPLE_PERIOD_MS passed. */
static inline uint64_t dt_ticks_stamp(dt_session *s)
{
    uint64_t t = dt_tsc_read(), last = atomic_load_explicit(&s->ticks.last, memory_order_relaxed);
    if (__builtin_expect((int64_t)(t - last) >= (int64_t)s->ticks.period, 0))
        dt_ticks_sample_due(s, last);
    return t;
}
void dt_add_note(dt_session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void dt_set_window(dt_session *s, uint64_t start_host_ns, uint64_t stop_host_ns);
uint32_t dt_session_intern(dt_session *s, const char *name);

/* The thread's stack of external ids (and annotation ranges) of one session, kept by
 * session.c; here so that the runtime callbacks read the innermost id inline. */
#define DT_EXTERNAL_DEPTH 128
typedef struct dt_external_frame {
    uint64_t id;
    uint64_t start_ns; /* ranges only: realtime ns, or ticks when clock_flags has DT_EVENT_TICKS */
    uint32_t name_id;  /* ranges only */
    uint16_t is_range;
    uint16_t clock_flags;   /* ranges only: DEVTRACE_EVENT_HOST_CLOCK or DT_EVENT_TICKS */
    int64_t sequence_nr;    /* ranges only: the framework's sequence number, -1: none */
    uint64_t fwd_thread_id; /* ranges only, with a sequence number */
} dt_external_frame;
#define DT_OP_NAME_CACHE 64
#define DT_OP_TEXT_CACHE 64
#define DT_USER_DEPTH 32
typedef struct dt_external_stack {
    uint64_t generation; /* the session the frames belong to */
    int depth;
    int overflow; /* pushes beyond the depth, popped without effect */
    /* The user correlation stack (devtrace_push_user_correlation), for the same session. */
    int user_depth;
    int user_overflow;
    uint64_t user_ids[DT_USER_DEPTH];
    /* The operator observer's path (devtrace_op_enter/exit), for the same session: the
     * thread's id, the place of its events in the thread's chunk, and its op names by
     * pointer (checked against the entry's text), so that an op finds all it needs here. */
    uint32_t tid;
    dt_store_cursor ops;
    struct {
        const char *ptr;
        const char *text; /* the session's copy, compared with the text at ptr */
        uint32_t id;
    } names[DT_OP_NAME_CACHE];
    /* ... and by text, for names whose pointer changes from op to op (a RecordFunction's
     * own string: autograd nodes, record_function scopes): hash, length and id, so that such
     * a name is found without the session's table and its mutex. */
    struct {
        uint32_t hash, len, id;
    } texts[DT_OP_TEXT_CACHE];
    dt_external_frame frames[DT_EXTERNAL_DEPTH];
} dt_external_stack;
extern _Thread_local dt_external_stack dt__external_stack;

/* The innermost external id in x, this thread's stack (DT_TLS_SELF(dt__external_stack),
 * which a callback may keep), for session s: 1 and *id set, or 0 when none. */
static inline int dt_current_external_in(const dt_external_stack *x, const dt_session *s, uint64_t *id)
{
    if (x->generation != s->generation || x->depth == 0)
        return 0;
    *id = x->frames[x->depth - 1].id;
    return 1;
}

/* The innermost user correlation id in x for session s: 1 and *id set, or 0 when none. */
static inline int dt_current_user_external_in(const dt_external_stack *x, const dt_session *s, uint64_t *id)
{
    if (x->generation != s->generation || x->user_depth == 0)
        return 0;
    *id = x->user_ids[x->user_depth - 1];
    return 1;
}

/* The innermost external id pushed on this thread (1 and *id set), or 0 when none. */
static inline int dt_current_external(const dt_session *s, uint64_t *id)
{
    return dt_current_external_in(&dt__external_stack, s, id);
}

/* Whether the session records events of kind (devtrace_config.kinds): EXTCORR whenever a
 * device or runtime kind is recorded, since it carries their op links. */
static inline int dt_session_wants(const dt_session *s, int kind)
{
    if (kind == DEVTRACE_KIND_EXTCORR)
        return (s->kinds & (DEVTRACE_KIND_BIT(DEVTRACE_KIND_KERNEL) | DEVTRACE_KIND_BIT(DEVTRACE_KIND_MEMCPY) |
                            DEVTRACE_KIND_BIT(DEVTRACE_KIND_MEMSET) | DEVTRACE_KIND_BIT(DEVTRACE_KIND_RUNTIME))) != 0;
    return kind >= 0 && kind < 32 && (s->kinds & DEVTRACE_KIND_BIT(kind)) != 0;
}

/* Clock alignment, window filter, correlation, flows, demangling, sort. Idempotent. */
int dt_session_finalize(dt_session *s);
/* devtrace_flush on a running session: the events that can be finalised now, not delivered
 * before, to cb in time order; returns their count, or -1 out of memory. */
long dt_session_flush_running(dt_session *s, devtrace_event_cb cb, void *user);
/* A restart (devtrace_start after stop): the stored events are retired, every counter reset. */
void dt_session_retire_window(dt_session *s);
/* A finalised session's events to cb (NULL: none) in order; returns their count. */
size_t dt_session_deliver(dt_session *s, devtrace_event_cb cb, void *user);

/* Process and thread ids, cached per thread. */
uint32_t dt_process_id(void);
uint32_t dt_thread_id(void);

/* The CPUs this process may run on (its affinity mask), at least 1. */
int dt_online_cpus(void);

/* Configuration from the environment: strict parse of an unsigned number. */
int dt_parse_u64(const char *text, uint64_t *out);

/* Calls fn(arg) on a helper thread and waits for it at most timeout_ms: for vendor calls that
 * may never return (a flush waiting on a hung device). 0 with *rc set when it returned; -1 when
 * it had not by the deadline: it goes on running on its own, so arg must outlive the process's
 * use of it (a static). Without a thread to spare, fn runs on the caller's, unbounded. */
int dt_call_with_deadline(int (*fn)(void *arg), void *arg, uint64_t timeout_ms, int *rc);
#define DT_FLUSH_TIMEOUT_MS 10000u
/* How long stop waits for a vendor's flush: $DEVTRACE_FLUSH_TIMEOUT_MS (a positive number of
 * ms), else DT_FLUSH_TIMEOUT_MS; *bad is set when the variable holds anything else. */
uint64_t dt_flush_timeout_ms(int *bad);
/* A vendor's flush, fn(arg), with that deadline: 0 with *rc when it returned. -1 when it
 * had not by timeout_ms: *hung is set and a note names the call (what, as written in the
 * note) and says what is missing. -1 too, with nothing called, when *hung is set already
 * (the library is stuck: another flush would only queue behind the one that never
 * returned). */
int dt_flush_with_deadline(dt_session *s, const char *what, int (*fn)(void *arg), void *arg, uint64_t timeout_ms,
                           _Atomic int *hung, int *rc);

/* Demangles an Itanium C++ name when the process can (__cxa_demangle), else returns
 * NULL; the result is malloc'd. */
char *dt_demangle(const char *mangled);

/* The default session of the process (collector). */
void dt_set_default_session(dt_session *s);

/* What a layer above the core hands it to be called back (the core names no such layer). */
typedef struct dt_core_hooks {
    /* Starts the collector's session on its first use in the program (an annotation, or
     * devtrace_default_session), before the backend's own hook does (inject/collector.c);
     * NULL: nothing to start. */
    void (*start_early)(void);
    /* Starts the collector's session for the named backend from the vendor's own hook into
     * the library (the CUDA driver's InitializeInjection, the OpenCL loader's layer init). */
    void (*autostart)(const char *backend_name);
    /* Puts the collector's signal handlers back on top after a call that may have installed
     * others (an OpenCL platform start or program build: PoCL's LLVM). */
    void (*keep_handlers)(void);
} dt_core_hooks;
/* Registers hooks (borrowed: static storage); NULL removes them. */
void dt_core_set_hooks(const dt_core_hooks *hooks);
/* The registered hooks' autostart and keep_handlers, for the backends: nothing without
 * them (a program that links devtrace without the collector). */
void dt_core_autostart(const char *backend_name);
void dt_core_keep_handlers(void);

/* Occupancy (occupancy.c). Returns 0 and fills the figures, or -1 when the device has
 * no attributes or the launch is not valid for it. */
typedef struct dt_occupancy {
    double blocks_per_sm;     /* launched blocks / SMs */
    double warps_per_sm;      /* blocks_per_sm * warps per block */
    int active_blocks_per_sm; /* theoretical limit from registers, shared memory, threads */
    double est_achieved_occupancy_pct;
} dt_occupancy;
int dt_occupancy_compute(const dt_device_props *dev, const devtrace_event *kernel, dt_occupancy *out);

#endif
