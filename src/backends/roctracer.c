/* roctracer.c: the ROCtracer backend ("roctracer") for AMD ROCm and Hygon DCU (DTK).
 *
 * ROCtracer is not CUPTI-shaped, so this is its own backend, not a descriptor of the
 * CUPTI-family engine:
 *  - device work comes from an activity pool on the HIP_OPS domain: ROCtracer owns the
 *    buffers and hands [begin, end) of fixed 64-byte records to our completion callback
 *    on its own thread (roctracer_open_pool_expl, roctracer_flush_activity_expl);
 *  - runtime calls come from HIP_API callbacks (roctracer_enable_domain_callback) on the
 *    calling thread: on enter we take our own timestamp, on exit we store the runtime
 *    event, named by roctracer_op_string; both timestamps are on
 *    roctracer_get_timestamp's clock, the clock of the activity records, so one clock map
 *    (paired samples with host CLOCK_REALTIME at start, stop and every 100 ms of
 *    deliveries) serves both: read from it per call, or, where the TSC is usable
 *    (hostclock.h), TSC ticks converted to it at finalise from (ticks, roctracer_get_timestamp)
 *    pairs taken at start, stop and every 10 ms while calls arrive;
 *  - a kernel's grid, block and dynamic shared memory come from the launch call's
 *    arguments, remembered by correlation id on enter (a bounded lock-free table) and
 *    attached when the kernel's record is decoded. HIP API ids change between HIP
 *    versions: launch, copy and fill calls are found by name with roctracer_op_code;
 *  - a launch, copy or fill call whose device record never arrives by the final flush
 *    is a record ROCtracer lost (it reports no drop count): counted as dropped_vendor;
 *  - external correlation: the session's own per-thread stack (dt_current_external) is
 *    attached to runtime events, and the drain passes it on to their device work;
 *    roctracer_activity_push/pop_external_correlation_id are called too, when present;
 *  - occupancy from hipDeviceGetAttribute found in the process, read at stop (the
 *    program has initialised HIP by then; callbacks are off, so it is not traced).
 *
 * The library: $DEVTRACE_ROCTRACER_LIBRARY; a copy the process already loaded;
 * $ROCM_PATH/lib, /opt/rocm/lib; Hygon DTK's $DTK_PATH/lib, /opt/dtk/lib, where
 * libgalaxyhip.so.5 exports the roctracer symbols; the loader's search; the process.
 *
 * The API callback and the record decoder allocate nothing, take no global lock (the
 * name table's lock only on a name's first sight) and format no text; a runtime event is
 * written in place in the thread's chunk of the store. The vendor's callbacks reach the
 * session through a static pointer guarded by two-epoch counters kept per thread
 * (callback_guard.h), so close waits for callbacks in flight and they never touch freed
 * state.
 *
 * The record decoder is roctracer_decode.c, the device properties roctracer_devices.c.
 * Facts: roctracer_records.h. Validated against the ROCtracer emulator only. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "callback_guard.h"
#include "core/errors.h"
#include "core/session.h"
#include "device_attrs.h"
#include "roctracer_records.h"
#include "vendor_lib.h"

#define ROC_DEFAULT_BUFFER_SIZE (1u << 20)
#define ROC_MIN_BUFFER_SIZE 4096u
#define ROC_MAX_BUFFER_SIZE (256u << 20)
#define ROC_MAX_CID 4096u /* HIP API ids with a cached name and class */
#define ROC_FRAMES 16     /* nested HIP calls per thread */

/* ---- the library's functions ---- */

typedef int (*roc_open_pool_fn)(const dt_roc_properties *properties, void **pool);
typedef int (*roc_pool_fn)(void *pool);
typedef int (*roc_domain_pool_fn)(uint32_t domain, void *pool);
typedef int (*roc_domain_fn)(uint32_t domain);
typedef int (*roc_enable_callback_fn)(uint32_t domain, dt_roc_api_callback callback, void *arg);
typedef const char *(*roc_op_string_fn)(uint32_t domain, uint32_t op, uint32_t kind);
typedef int (*roc_op_code_fn)(uint32_t domain, const char *name, uint32_t *op, uint32_t *kind);
typedef int (*roc_timestamp_fn)(uint64_t *timestamp);
typedef int (*roc_push_fn)(uint64_t id);
typedef int (*roc_pop_fn)(uint64_t *id);
typedef const char *(*roc_error_string_fn)(void);
typedef uint32_t (*roc_version_fn)(void);
typedef void (*roc_void_fn)(void);

typedef struct roc_api {
    roc_open_pool_fn open_pool;
    roc_pool_fn close_pool;
    roc_domain_pool_fn enable_activity;
    roc_domain_fn disable_activity;
    roc_pool_fn flush;
    roc_enable_callback_fn enable_callback;
    roc_domain_fn disable_callback;
    roc_op_string_fn op_string;
    roc_op_code_fn op_code;
    roc_timestamp_fn get_timestamp;
    roc_push_fn push_external;
    roc_pop_fn pop_external;
    roc_error_string_fn error_string;
    roc_version_fn version_major;
    roc_version_fn version_minor;
    roc_void_fn start_tracing;
} roc_api;

/* name, required, where it goes */
#define ROC_FN_MAP(X)                                                      \
    X("roctracer_open_pool_expl", 1, open_pool)                            \
    X("roctracer_close_pool_expl", 1, close_pool)                          \
    X("roctracer_enable_domain_activity_expl", 1, enable_activity)         \
    X("roctracer_disable_domain_activity", 1, disable_activity)            \
    X("roctracer_flush_activity_expl", 1, flush)                           \
    X("roctracer_enable_domain_callback", 1, enable_callback)              \
    X("roctracer_disable_domain_callback", 1, disable_callback)            \
    X("roctracer_op_string", 1, op_string)                                 \
    X("roctracer_op_code", 1, op_code)                                     \
    X("roctracer_get_timestamp", 1, get_timestamp)                         \
    X("roctracer_activity_push_external_correlation_id", 0, push_external) \
    X("roctracer_activity_pop_external_correlation_id", 0, pop_external)   \
    X("roctracer_error_string", 0, error_string)                           \
    X("roctracer_version_major", 0, version_major)                         \
    X("roctracer_version_minor", 0, version_minor)                         \
    X("roctracer_start", 0, start_tracing)

enum {
#define ROC__FN_ID(name, required, field) ROC_FN_##field,
    ROC_FN_MAP(ROC__FN_ID)
#undef ROC__FN_ID
        ROC_NFNS
};
static const char *const roc_fn_names[ROC_NFNS] = {
#define ROC__FN_NAME(name, required, field) name,
    ROC_FN_MAP(ROC__FN_NAME)
#undef ROC__FN_NAME
};
static const size_t roc_fn_offsets[ROC_NFNS] = {
#define ROC__FN_OFFSET(name, required, field) offsetof(roc_api, field),
    ROC_FN_MAP(ROC__FN_OFFSET)
#undef ROC__FN_OFFSET
};
#define ROC__FN_REQUIRED(name, required, field) | ((unsigned)(required) << ROC_FN_##field)
static const unsigned roc_fn_required = 0u ROC_FN_MAP(ROC__FN_REQUIRED);
#undef ROC__FN_REQUIRED

/* ---- what calls are launches, copies and fills (resolved by name) ---- */

enum {
    ROC_CALL_OTHER = 0,
    ROC_CALL_LAUNCH = 1,        /* hipLaunchKernel layout: grid, block, dynamic shared memory */
    ROC_CALL_LAUNCH_DIM3 = 2,   /* grid and block at hipLaunchKernel's offsets, no size_t smem */
    ROC_CALL_LAUNCH_MODULE = 3, /* hipModuleLaunchKernel layout */
    ROC_CALL_DEVICE_WORK = 4    /* a launch with arguments we do not read, a copy or a fill */
};

static const struct {
    const char *name;
    uint8_t kind;
} roc_device_calls[] = {
    {"hipLaunchKernel", ROC_CALL_LAUNCH},
    {"hipExtLaunchKernel", ROC_CALL_LAUNCH},
    {"hipLaunchCooperativeKernel", ROC_CALL_LAUNCH_DIM3},
    {"hipModuleLaunchKernel", ROC_CALL_LAUNCH_MODULE},
    {"hipExtModuleLaunchKernel", ROC_CALL_DEVICE_WORK}, /* global work size, not the grid */
    {"hipHccModuleLaunchKernel", ROC_CALL_DEVICE_WORK},
    {"hipModuleLaunchCooperativeKernel", ROC_CALL_DEVICE_WORK},
    {"hipMemcpy", ROC_CALL_DEVICE_WORK},
    {"hipMemcpyAsync", ROC_CALL_DEVICE_WORK},
    {"hipMemcpyWithStream", ROC_CALL_DEVICE_WORK},
    {"hipMemcpyHtoD", ROC_CALL_DEVICE_WORK},
    {"hipMemcpyHtoDAsync", ROC_CALL_DEVICE_WORK},
    {"hipMemcpyDtoH", ROC_CALL_DEVICE_WORK},
    {"hipMemcpyDtoHAsync", ROC_CALL_DEVICE_WORK},
    {"hipMemcpyDtoD", ROC_CALL_DEVICE_WORK},
    {"hipMemcpyDtoDAsync", ROC_CALL_DEVICE_WORK},
    {"hipMemset", ROC_CALL_DEVICE_WORK},
    {"hipMemsetAsync", ROC_CALL_DEVICE_WORK},
    {"hipMemsetD8", ROC_CALL_DEVICE_WORK},
    {"hipMemsetD8Async", ROC_CALL_DEVICE_WORK},
    {"hipMemsetD16", ROC_CALL_DEVICE_WORK},
    {"hipMemsetD16Async", ROC_CALL_DEVICE_WORK},
    {"hipMemsetD32", ROC_CALL_DEVICE_WORK},
    {"hipMemsetD32Async", ROC_CALL_DEVICE_WORK},
};

/* ---- state ---- */

/* Per session (the core allocates it zeroed). */
typedef struct roc_state {
    dt_session *s; /* borrowed */
    dt_roc_decoder dec;
    void *pool; /* the vendor's, opened at open, closed at close */
    size_t buffer_size;
    _Atomic int accepting; /* between start and the end of stop */
    int ticks;             /* calls stamped with TSC ticks, converted to the roctracer clock at finalise */
    _Atomic uint64_t last_sample_ns;
    int attached;
    int activity_on, callbacks_on, devices_done;
    uint8_t call_kind[ROC_MAX_CID];         /* ROC_CALL_* per HIP API id */
    _Atomic uint32_t cid_name[ROC_MAX_CID]; /* interned name per HIP API id; 0 = not yet */
    _Atomic uint64_t frames_overflow;       /* calls nested deeper than ROC_FRAMES */
    _Atomic uint64_t unmatched_exits;       /* exits without their enter */
    _Atomic uint64_t no_timestamp;          /* roctracer_get_timestamp failed in a callback */
    char config_note[160];
} roc_state;

/* The process's one binding; the callbacks find the attached session (a roc_state)
 * through guard.active. */
static struct roc_engine {
    pthread_mutex_t lock; /* bind, attach, detach; never held across a flush */
    int bound;
    void *handle;
    char path[512];
    roc_api api;
    dt_callback_guard guard;
    int atfork_registered; /* roc_forget_ids_in_child */
} G = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* ---- finding the library ---- */

static const char *const roc_library_names[DT_VLIB_MAX_NAMES] = {"libroctracer64.so", "libroctracer64.so.4",
                                                                 "libroctracer64.so.1", "libgalaxyhip.so.5"};
static const char *const roc_sdk_env[DT_VLIB_MAX_NAMES] = {"ROCM_PATH", "DTK_PATH"};
static const char *const roc_default_roots[DT_VLIB_MAX_NAMES] = {"/opt/rocm", "/opt/dtk"};
static const char *const roc_sdk_subdirs[DT_VLIB_MAX_NAMES] = {"lib"};

static int has_roctracer(void *handle, const void *unused)
{
    (void)unused;
    return dlsym(handle, "roctracer_open_pool_expl") != NULL;
}

/* Every library name in every step; a library without the roctracer symbols (a HIP
 * runtime of a DTK that does not carry them) is passed over. */
static const dt_vlib_search roc_search = {
    .override_env = "DEVTRACE_ROCTRACER_LIBRARY",
    .loaded_names = roc_library_names,
    .sdk_env = roc_sdk_env,
    .default_roots = roc_default_roots,
    .subdirs = roc_sdk_subdirs,
    .dir_names = roc_library_names,
    .loader_names = roc_library_names,
    .search_process = 1,
    .accept = has_roctracer,
    .process_accept = has_roctracer,
    .rejected = "no roctracer symbols",
    .names_in_tried = 0,
};

static int roc_find_library(dt_vlib_found *out, char *why, size_t whylen)
{
    char tried_buf[768] = "";
    dt_text tried = {tried_buf, sizeof tried_buf, 0};
    int found = dt_vlib_find(&roc_search, out, &tried);
    if (found > 0)
        return 1;
    if (found < 0)
        snprintf(why, whylen,
                 "$DEVTRACE_ROCTRACER_LIBRARY=%s cannot be loaded: %s; point it at libroctracer64.so "
                 "(ROCm) or libgalaxyhip.so.5 (Hygon DTK), or unset it to search",
                 out->override, out->error);
    else
        snprintf(why, whylen,
                 "ROCtracer not found; tried %s (libroctracer64.so{,.4,.1}, libgalaxyhip.so.5), the "
                 "loader's search path, the process itself; set DEVTRACE_ROCTRACER_LIBRARY to libroctracer64.so "
                 "(ROCm) or libgalaxyhip.so.5 (Hygon DTK), or ROCM_PATH or DTK_PATH to the SDK root",
                 tried_buf);
    return 0;
}

/* Resolves every function; 0, or -1 with the missing required ones named. */
static int roc_resolve(void *handle, const char *path, roc_api *api, char *why, size_t whylen)
{
    char missing_buf[512] = "";
    dt_text missing = {missing_buf, sizeof missing_buf, 0};
    memset(api, 0, sizeof *api);
    int nmissing =
        dt_vlib_bind(handle, NULL, roc_fn_names, roc_fn_offsets, ROC_NFNS, roc_fn_required, api, NULL, &missing);
    if (nmissing) {
        snprintf(why, whylen, "%s lacks the required symbol%s %s; it is not a usable ROCtracer library", path,
                 nmissing > 1 ? "s" : "", missing_buf);
        return -1;
    }
    return 0;
}

/* "ROCtracer error -3: <the library's last error>" */
static void roc_error_text(int rc, char *buf, size_t len)
{
    const char *msg = G.api.error_string ? G.api.error_string() : NULL;
    if (msg && *msg)
        snprintf(buf, len, "ROCtracer error %d: %s", rc, msg);
    else
        snprintf(buf, len, "ROCtracer error %d", rc);
    /* The 4.1 interface (the one with roctracer_version_major) hands the caller a
     * strdup'd string; older libraries returned their own buffer. */
    if (msg && G.api.version_major)
        free((void *)msg);
}

static void roc_describe_library(devtrace_backend_info *info)
{
    dt_vlib_describe(&roc_search, "ROCtracer", info);
}

static int roc_probe(char *why, size_t whylen)
{
    pthread_mutex_lock(&G.lock);
    int bound = G.bound;
    pthread_mutex_unlock(&G.lock);
    if (bound) {
        snprintf(why, whylen, "bound to %s", G.path);
        return 1;
    }
    dt_vlib_found f;
    roc_api api;
    if (!roc_find_library(&f, why, whylen))
        return 0;
    if (roc_resolve(f.handle, f.path, &api, why, whylen) != 0)
        return 0; /* the handle stays loaded: unloading a vendor library is not safe */
    snprintf(why, whylen, "%s", f.path);
    return 1;
}

/* ---- clock ---- */

static void roc_clock_sample(roc_state *st)
{
    dt_sample_vendor_clock(st->s, G.api.get_timestamp, 0, NULL, NULL);
}

/* From the buffer callback: a clock sample at most every DT_CLOCK_SAMPLE_PERIOD_NS. */
static void roc_maybe_sample(roc_state *st)
{
    if (atomic_load_explicit(&st->accepting, memory_order_relaxed) && dt_clock_sample_due(&st->last_sample_ns))
        roc_clock_sample(st);
}

/* ---- the vendor's callbacks ---- */

/* One open HIP call on this thread. */
typedef struct roc_frame {
    uint64_t correlation;
    uint64_t start;
    uint64_t external;
    uint64_t user_external;
    uint32_t cid;
    int has_external, has_user_external;
} roc_frame;

/* What a thread keeps between its callbacks. */
typedef struct roc_thread {
    uint64_t generation; /* the session the frames and the cursor belong to */
    int depth;
    int overflow;                       /* enters beyond ROC_FRAMES not yet exited */
    uint32_t pid, tid;                  /* 0 until the first event; cleared in a forked child */
    dt_guard_thread *guard;             /* this thread's record in G.guard (for every session) */
    const dt_external_stack *externals; /* this thread's (tls.h: kept, not looked up per call) */
    dt_store_cursor cur;                /* where the thread's runtime events go in the session's store */
    roc_frame frames[ROC_FRAMES];
} roc_thread;

static _Thread_local roc_thread t_roc;

/* In a forked child (on the one thread it has): its process and thread ids are new. */
static void roc_forget_ids_in_child(void)
{
    t_roc.pid = 0;
    t_roc.tid = 0;
}

/* ROCtracer's thread: a full buffer, or a flush. */
static void roc_buffer_callback(const char *begin, const char *end, void *arg)
{
    (void)arg;
    dt_guard_pass pass;
    roc_state *st = dt_guard_enter(&G.guard, &t_roc.guard, &pass);
    if (st) {
        int live = atomic_load(&st->accepting);
        dt_roc_walk(&st->dec, begin, end, live ? DT_ROC_WALK_DECODE : DT_ROC_WALK_OUT_OF_WINDOW, NULL);
        roc_maybe_sample(st);
    }
    dt_guard_leave(&G.guard, &pass);
}

/* The launch configuration in a launch call's arguments. */
static void read_launch(uint8_t call_kind, const void *data, dt_roc_launch *l)
{
    const uint8_t *args = (const uint8_t *)data + DT_ROC_API_ARGS_OFFSET;
    memset(l, 0, sizeof *l);
    if (call_kind == ROC_CALL_LAUNCH_MODULE) {
        dt_roc_module_launch_args m;
        memcpy(&m, args, sizeof m);
        uint32_t g[3] = {m.grid_x, m.grid_y, m.grid_z}, b[3] = {m.block_x, m.block_y, m.block_z};
        for (int i = 0; i < 3; i++) {
            l->grid[i] = g[i] > INT32_MAX ? INT32_MAX : (int32_t)g[i];
            l->block[i] = b[i] > INT32_MAX ? INT32_MAX : (int32_t)b[i];
        }
        l->dynamic_shared = m.shared_mem_bytes;
        l->has_shared = 1;
    } else {
        dt_roc_launch_args a;
        memcpy(&a, args, call_kind == ROC_CALL_LAUNCH ? sizeof a : offsetof(dt_roc_launch_args, word40));
        uint32_t g[3] = {a.num_blocks.x, a.num_blocks.y, a.num_blocks.z};
        uint32_t b[3] = {a.dim_blocks.x, a.dim_blocks.y, a.dim_blocks.z};
        for (int i = 0; i < 3; i++) {
            l->grid[i] = g[i] > INT32_MAX ? INT32_MAX : (int32_t)g[i];
            l->block[i] = b[i] > INT32_MAX ? INT32_MAX : (int32_t)b[i];
        }
        if (call_kind == ROC_CALL_LAUNCH)
            l->has_shared = (uint8_t)dt_roc_launch_shared_bytes(a.word40, a.word48, &l->dynamic_shared);
    }
    l->has_grid = 1;
    for (int i = 0; i < 3; i++)
        if (l->grid[i] <= 0 || l->block[i] <= 0)
            l->has_grid = 0; /* not a launch anyone could make: keep no configuration */
}

/* The thread's first call in this session: its frames and its place in the store are the
 * previous session's. */
static __attribute__((noinline)) void roc_thread_bind(roc_thread *t, const dt_session *s)
{
    t->generation = s->generation;
    t->depth = 0;
    t->overflow = 0;
    memset(&t->cur, 0, sizeof t->cur);
    t->externals = DT_TLS_SELF(dt__external_stack);
}

static void roc_on_enter(roc_state *st, roc_thread *t, uint32_t cid, uint64_t correlation, const void *data,
                         uint64_t now)
{
    dt_session *s = st->s;
    if (__builtin_expect(t->generation != s->generation, 0))
        roc_thread_bind(t, s);
    uint8_t call_kind = cid < ROC_MAX_CID ? st->call_kind[cid] : ROC_CALL_OTHER;
    if (call_kind != ROC_CALL_OTHER) {
        dt_roc_launch l;
        if (call_kind != ROC_CALL_DEVICE_WORK)
            read_launch(call_kind, data, &l);
        dt_roc_pending_put(&st->dec, correlation, call_kind == ROC_CALL_DEVICE_WORK ? NULL : &l);
    }
    if (t->depth == ROC_FRAMES) {
        t->overflow++;
        atomic_fetch_add_explicit(&st->frames_overflow, 1, memory_order_relaxed);
        return;
    }
    roc_frame *f = &t->frames[t->depth++];
    f->correlation = correlation;
    f->start = now;
    f->cid = cid;
    f->has_external = dt_current_external_in(t->externals, s, &f->external);
    f->has_user_external = dt_current_user_external_in(t->externals, s, &f->user_external);
}

/* The interned name of a HIP API id: roctracer_op_string once per id. */
static __attribute__((noinline)) uint32_t roc_api_name_slow(roc_state *st, uint32_t cid)
{
    const char *name = G.api.op_string(DT_ROC_DOMAIN_HIP_API, cid, 0);
    uint32_t id = 0, expected = 0;
    int unresolved = !name || !*name;
    if (unresolved) {
        char buf[32] = "hipApi#";
        size_t n = strlen(buf);
        char digits[12];
        int nd = 0;
        uint32_t v = cid;
        do {
            digits[nd++] = (char)('0' + v % 10);
            v /= 10;
        } while (v);
        while (nd)
            buf[n++] = digits[--nd];
        buf[n] = '\0';
        id = dt_session_intern(st->s, buf);
    } else {
        id = dt_session_intern(st->s, name);
    }
    if (cid < ROC_MAX_CID && id && atomic_compare_exchange_strong(&st->cid_name[cid], &expected, id) && unresolved)
        DT_COUNT(st->s, unresolved_names, 1);
    return id;
}

static uint32_t roc_api_name(roc_state *st, uint32_t cid)
{
    if (cid < ROC_MAX_CID) {
        uint32_t id = atomic_load_explicit(&st->cid_name[cid], memory_order_relaxed);
        if (id)
            return id;
    }
    return roc_api_name_slow(st, cid);
}

/* The process and thread ids, kept in the thread's record. */
static __attribute__((noinline)) void roc_thread_ids(roc_thread *t)
{
    t->pid = dt_process_id();
    t->tid = dt_thread_id();
}

static void roc_on_exit(roc_state *st, roc_thread *t, uint32_t cid, uint64_t correlation, uint64_t now)
{
    dt_session *s = st->s;
    if (t->generation != s->generation) {
        atomic_fetch_add_explicit(&st->unmatched_exits, 1, memory_order_relaxed);
        return;
    }
    if (t->overflow) {
        t->overflow--; /* the innermost calls were the ones not kept */
        return;
    }
    int at = t->depth - 1;
    while (at >= 0 && t->frames[at].correlation != correlation)
        at--;
    if (at < 0) {
        atomic_fetch_add_explicit(&st->unmatched_exits, 1, memory_order_relaxed);
        return;
    }
    const roc_frame *f = &t->frames[at];
    if (t->depth - 1 > at) /* inner calls that never exited */
        atomic_fetch_add_explicit(&st->unmatched_exits, (uint64_t)(t->depth - 1 - at), memory_order_relaxed);
    t->depth = at;
    if (__builtin_expect(!t->tid, 0))
        roc_thread_ids(t);
    devtrace_event *ev = dt_store_cursor_next(&t->cur, &s->store); /* written in place */
    if (!ev) {
        dt_store_cursor_drop(&t->cur); /* the store is at its bound */
        t->cur.failed = 0;             /* no slot could be made: try again next time */
        return;
    }
    dt_event_zero(ev);
    ev->kind = DEVTRACE_KIND_RUNTIME;
    ev->flags = (uint16_t)(DEVTRACE_EVENT_HAS_CBID | (st->ticks ? DT_EVENT_TICKS : 0));
    ev->start_ns = f->start;
    ev->end_ns = now >= f->start ? now : f->start;
    ev->correlation = f->correlation;
    if (f->has_external) {
        ev->flags |= DEVTRACE_EVENT_HAS_EXTERNAL;
        ev->external_id = f->external;
    }
    if (f->has_user_external) {
        ev->flags |= DEVTRACE_EVENT_HAS_USER_EXTERNAL;
        ev->user_external_id = f->user_external;
    }
    ev->name_id = roc_api_name(st, cid);
    ev->device = t->pid;
    ev->stream = t->tid;
    ev->u.runtime.cbid = cid;
    dt_store_cursor_commit(&t->cur);
}

/* A call's timestamp when the session does not stamp ticks. */
static uint64_t roc_api_timestamp(roc_state *st)
{
    uint64_t now = 0;
    if (G.api.get_timestamp(&now) != 0)
        atomic_fetch_add_explicit(&st->no_timestamp, 1, memory_order_relaxed);
    return now;
}

static __attribute__((noinline)) void roc_api_enter(uint32_t cid, uint64_t correlation, const void *data)
{
    roc_thread *t = DT_TLS_SELF(t_roc); /* one thread-local lookup per callback (tls.h) */
    dt_guard_pass pass;
    roc_state *st = dt_guard_enter(&G.guard, &t->guard, &pass);
    if (st && atomic_load_explicit(&st->accepting, memory_order_relaxed))
        roc_on_enter(st, t, cid, correlation, data, st->ticks ? dt_tsc_read() : roc_api_timestamp(st));
    dt_guard_leave(&G.guard, &pass);
}

static __attribute__((noinline)) void roc_api_exit(uint32_t cid, uint64_t correlation)
{
    roc_thread *t = DT_TLS_SELF(t_roc); /* one thread-local lookup per callback (tls.h) */
    dt_guard_pass pass;
    roc_state *st = dt_guard_enter(&G.guard, &t->guard, &pass);
    if (st && atomic_load_explicit(&st->accepting, memory_order_relaxed))
        roc_on_exit(st, t, cid, correlation, st->ticks ? dt_ticks_stamp(st->s) : roc_api_timestamp(st));
    dt_guard_leave(&G.guard, &pass);
}

/* The calling thread, on entering and leaving each HIP call. */
static void roc_api_callback(uint32_t domain, uint32_t cid, const void *data, void *arg)
{
    (void)arg;
    if (domain != DT_ROC_DOMAIN_HIP_API || !data)
        return;
    dt_roc_api_data p;
    memcpy(&p, data, sizeof p);
    if (p.phase == DT_ROC_PHASE_ENTER)
        roc_api_enter(cid, p.correlation_id, data);
    else if (p.phase == DT_ROC_PHASE_EXIT)
        roc_api_exit(cid, p.correlation_id);
}

/* ---- the dt_backend functions ---- */

static void pool_size_configure(roc_state *st)
{
    uint64_t v;
    const char *es = getenv("DEVTRACE_BUFFER_SIZE");
    st->buffer_size = ROC_DEFAULT_BUFFER_SIZE;
    st->config_note[0] = '\0';
    if (es && *es) {
        if (dt_parse_u64(es, &v) == 0 && v >= ROC_MIN_BUFFER_SIZE && v <= ROC_MAX_BUFFER_SIZE)
            st->buffer_size = (size_t)(v / DT_ROC_RECORD_SIZE) * DT_ROC_RECORD_SIZE;
        else
            snprintf(st->config_note, sizeof st->config_note,
                     "$DEVTRACE_BUFFER_SIZE=\"%.40s\" is not a byte count in [%u, %u]; using %u", es,
                     ROC_MIN_BUFFER_SIZE, ROC_MAX_BUFFER_SIZE, ROC_DEFAULT_BUFFER_SIZE);
    }
}

/* Which HIP API ids are launches, copies and fills, by name (ids differ by version). */
static void resolve_device_calls(roc_state *st)
{
    int launch_found = 0;
    for (size_t i = 0; i < sizeof roc_device_calls / sizeof roc_device_calls[0]; i++) {
        uint32_t op = 0, kind = 0;
        if (G.api.op_code(DT_ROC_DOMAIN_HIP_API, roc_device_calls[i].name, &op, &kind) != 0)
            continue;
        if (op >= ROC_MAX_CID) {
            dt_add_note(st->s, "roctracer_op_code gave %s the id %u, beyond %u: its device work is not tracked",
                        roc_device_calls[i].name, op, ROC_MAX_CID);
            continue;
        }
        st->call_kind[op] = roc_device_calls[i].kind;
        if (i == 0)
            launch_found = 1;
    }
    if (!launch_found)
        dt_add_note(st->s, "roctracer_op_code does not know hipLaunchKernel: kernels carry no grid/block");
}

/* Finds and binds the library, once per process (G.lock held): 0, or -1 with why set. */
static int roc_bind(char *why, size_t whylen)
{
    dt_vlib_found f;
    roc_api api;
    if (!roc_find_library(&f, why, whylen) || roc_resolve(f.handle, f.path, &api, why, whylen) != 0)
        return -1;
    G.api = api;
    G.handle = f.handle;
    snprintf(G.path, sizeof G.path, "%s", f.path);
    G.bound = 1;
    return 0;
}

/* What the session's notes say about the library and the pool. */
static void roc_notes_at_open(roc_state *st)
{
    dt_session *s = st->s;
    if (G.api.version_major && G.api.version_minor)
        dt_add_note(s, "roctracer: %s, ROCtracer interface %u.%u; pool 2 x %zu bytes", G.path, G.api.version_major(),
                    G.api.version_minor(), st->buffer_size);
    else
        dt_add_note(s, "roctracer: %s (no version symbols: before the 4.1 interface); pool 2 x %zu bytes", G.path,
                    st->buffer_size);
    if (st->config_note[0])
        dt_add_note(s, "%s", st->config_note);
    if (!G.api.push_external)
        dt_add_note(s,
                    "%s has no roctracer_activity_push_external_correlation_id: external ids are attached by "
                    "devtrace alone",
                    G.path);
}

static int roc_open(dt_session *s, void *state, devtrace_error *err)
{
    roc_state *st = state;
    char why[1024];
    int code = DEVTRACE_EUNAVAILABLE;
    st->s = s;
    pthread_mutex_lock(&G.lock);
    if (!G.atfork_registered)
        G.atfork_registered = pthread_atfork(NULL, NULL, roc_forget_ids_in_child) == 0;
    if (atomic_load(&G.guard.active)) {
        snprintf(why, sizeof why, "another devtrace session of this process is using ROCtracer; close it first");
        code = DEVTRACE_ESTATE;
        goto fail;
    }
    if (!G.bound && roc_bind(why, sizeof why) != 0)
        goto fail;
    if (dt_roc_decoder_init(&st->dec, s) != 0) {
        snprintf(why, sizeof why, "out of memory for the launch table");
        code = DEVTRACE_ENOMEM;
        goto fail;
    }
    pool_size_configure(st);
    dt_roc_properties props;
    memset(&props, 0, sizeof props);
    props.buffer_size = st->buffer_size;
    props.buffer_callback_fun = roc_buffer_callback;
    int rc = G.api.open_pool(&props, &st->pool);
    if (rc != 0 || !st->pool) {
        char text[512];
        roc_error_text(rc, text, sizeof text);
        snprintf(why, sizeof why, "roctracer_open_pool_expl in %.400s failed: %.400s", G.path, text);
        code = DEVTRACE_EVENDOR;
        st->pool = NULL;
        goto fail;
    }
    resolve_device_calls(st);
    roc_notes_at_open(st);
    atomic_store(&st->accepting, 0);
    st->attached = 1;
    atomic_store(&G.guard.active, st);
    pthread_mutex_unlock(&G.lock);
    return 0;
fail:
    pthread_mutex_unlock(&G.lock);
    dt_roc_decoder_free(&st->dec);
    dt_error_set(err, code, "%s", why);
    return code;
}

static int roc_start(dt_session *s, void *state)
{
    roc_state *st = state;
    char text[512];
    if (!st->attached)
        return DEVTRACE_ESTATE;
    atomic_store(&st->last_sample_ns, dt_monotonic_ns());
    roc_clock_sample(st);
    /* The API callbacks' stamps: TSC ticks paired with roctracer_get_timestamp (the clock of
     * the activity records), so that one map still puts both on the host clock. */
    st->ticks = dt_ticks_start(s, G.api.get_timestamp);
    atomic_store(&st->accepting, 1);
    if (G.api.start_tracing)
        G.api.start_tracing(); /* resumes tracing if another tool paused it (roctracer_stop) */
    int rc = G.api.enable_activity(DT_ROC_DOMAIN_HIP_OPS, st->pool);
    st->activity_on = rc == 0;
    if (rc != 0) {
        roc_error_text(rc, text, sizeof text);
        dt_add_note(s, "roctracer_enable_domain_activity_expl(HIP_OPS) failed: %s; no device activity", text);
    }
    rc = G.api.enable_callback(DT_ROC_DOMAIN_HIP_API, roc_api_callback, NULL);
    st->callbacks_on = rc == 0;
    if (rc != 0) {
        roc_error_text(rc, text, sizeof text);
        dt_add_note(s, "roctracer_enable_domain_callback(HIP_API) failed: %s; no runtime calls", text);
    }
    return st->activity_on || st->callbacks_on ? 0 : DEVTRACE_EVENDOR;
}

/* A flush that never returned (a hung device): the library is stuck; no further flush or close. */
static _Atomic int roc_flush_hung;
static void *roc_flush_pool; /* the pool the helper flushes: outlives a flush left running */

static int roc_flush_call(void *unused)
{
    (void)unused;
    return G.api.flush(roc_flush_pool); /* no lock of ours held: the completion runs meanwhile */
}

static void roc_flush(roc_state *st)
{
    int rc, bad;
    if (atomic_load(&roc_flush_hung))
        return;
    uint64_t timeout_ms = dt_flush_timeout_ms(&bad);
    roc_flush_pool = st->pool;
    if (dt_flush_with_deadline(st->s, "roctracer_flush_activity_expl", roc_flush_call, NULL, timeout_ms,
                               &roc_flush_hung, &rc) != 0)
        return;
    if (rc != 0) {
        char text[512];
        roc_error_text(rc, text, sizeof text);
        dt_add_note(st->s, "roctracer_flush_activity_expl failed: %s", text);
    }
}

static void roc_notes_at_stop(roc_state *st, uint64_t lost)
{
    dt_session *s = st->s;
    uint64_t n;
    if (lost)
        dt_add_note(s,
                    "ROCtracer reports no drop count: %llu launch/copy/fill call(s) had no device record by the "
                    "final flush (counted in dropped.vendor)",
                    (unsigned long long)lost);
    if ((n = atomic_load(&st->dec.barriers)))
        dt_add_note(s, "%llu HIP_OPS barrier/marker record(s) skipped (not device work)", (unsigned long long)n);
    if ((n = atomic_load(&st->dec.unknown_kinds))) {
        uint32_t k = atomic_load(&st->dec.first_unknown_kind);
        dt_add_note(s,
                    "%llu HIP_OPS record(s) of a kind not in vendor-abi.md (first: 0x%X) classified by op "
                    "(DISPATCH: kernel, COPY: copy of unknown direction)",
                    (unsigned long long)n, k == UINT32_MAX ? 0u : k);
    }
    if ((n = atomic_load(&st->dec.not_ours)))
        dt_add_note(s, "%llu record(s) of other ROCtracer domains ignored", (unsigned long long)n);
    if ((n = atomic_load(&st->dec.pending_full)))
        dt_add_note(s, "launch table full: %llu call(s) without grid/block, not checked for lost records",
                    (unsigned long long)n);
    if ((n = atomic_load(&st->frames_overflow)))
        dt_add_note(s, "%llu HIP call(s) nested deeper than %d: their runtime events are lost", (unsigned long long)n,
                    ROC_FRAMES);
    if ((n = atomic_load(&st->unmatched_exits)))
        dt_add_note(s, "%llu HIP call exit(s) without a matching enter: no runtime event", (unsigned long long)n);
    if ((n = atomic_load(&st->no_timestamp)))
        dt_add_note(s, "roctracer_get_timestamp failed %llu time(s) in the API callback", (unsigned long long)n);
}

/* devtrace_flush: the pool's records handed over while the session runs. */
static int roc_flush_running(dt_session *s, void *state)
{
    roc_state *st = state;
    (void)s;
    if (!st->attached)
        return DEVTRACE_ESTATE;
    roc_flush(st);
    return 0;
}

static int roc_stop(dt_session *s, void *state)
{
    roc_state *st = state;
    (void)s;
    if (!st->attached)
        return DEVTRACE_ESTATE;
    if (st->callbacks_on)
        G.api.disable_callback(DT_ROC_DOMAIN_HIP_API);
    st->callbacks_on = 0;
    dt_guard_quiesce(&G.guard, &G.lock, 0); /* every API callback in flight has stored its event */
    roc_flush(st);
    if (!st->devices_done) {
        dt_roc_read_devices(st->s, G.handle); /* HIP calls made here are not traced: callbacks are off */
        st->devices_done = 1;
    }
    if (st->activity_on)
        G.api.disable_activity(DT_ROC_DOMAIN_HIP_OPS);
    st->activity_on = 0;
    roc_flush(st); /* records written between the first flush and the disable */
    uint64_t lost = dt_roc_pending_drain(&st->dec);
    if (lost)
        DT_COUNT(st->s, dropped_vendor, lost);
    roc_notes_at_stop(st, lost);
    roc_clock_sample(st);
    atomic_store(&st->accepting, 0);
    return 0;
}

static int roc_push_external(void *state, uint64_t id)
{
    roc_state *st = state;
    if (!st || !st->attached || !G.api.push_external)
        return DEVTRACE_ENOTSUP;
    return G.api.push_external(id) == 0 ? 0 : DEVTRACE_EVENDOR;
}

static int roc_pop_external(void *state, uint64_t *id)
{
    roc_state *st = state;
    uint64_t ignored;
    if (!st || !st->attached || !G.api.pop_external)
        return DEVTRACE_ENOTSUP;
    return G.api.pop_external(id ? id : &ignored) == 0 ? 0 : DEVTRACE_EVENDOR;
}

static void roc_close(dt_session *s, void *state)
{
    roc_state *st = state;
    if (!st || !st->attached)
        return;
    if (atomic_load(&st->accepting))
        roc_stop(s, st);
    if (st->pool && !atomic_load(&roc_flush_hung)) {
        G.api.close_pool(st->pool); /* flushes: what comes now is counted out of window */
        st->pool = NULL;
    }
    dt_guard_detach(&G.guard, &G.lock, st);
    st->attached = 0;
    dt_roc_decoder_free(&st->dec);
}

const dt_backend dt_backend_roctracer = {
    .name = "roctracer",
    .description = "AMD ROCtracer (ROCm, Hygon DCU DTK)",
    .caps = DT_CAP_KERNEL_LAUNCH | DT_CAP_OCCUPANCY | DT_CAP_EXTERNAL,
    .validated = DT_VALIDATED_EMULATED,
    .validation_note = "ROCtracer emulator only; record layout from roctracer.h facts; DTK kind values from "
                       "third-party code that ran on DTK; not run on AMD or Hygon hardware",
    /* Kineto's ROCm build writes HIP runtime calls as ActivityType::CUDA_RUNTIME
     * (RoctracerActivity.h): "cuda_runtime", which is what its readers look for. */
    .runtime_category = "cuda_runtime",
    .load_method = DEVTRACE_LOAD_PRELOAD,
    .state_size = sizeof(roc_state),
    .probe = roc_probe,
    .describe_library = roc_describe_library,
    .open = roc_open,
    .start = roc_start,
    .stop = roc_stop,
    .push_external = roc_push_external,
    .pop_external = roc_pop_external,
    .close = roc_close,
    .flush = roc_flush_running,
};
