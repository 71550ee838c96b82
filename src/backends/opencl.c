/* opencl.c: the OpenCL backend, an OpenCL ICD loader layer (see opencl_layer.h): its
 * entry points and its sessions.
 *
 * libdevtrace.so exports clGetLayerInfo and clInitLayer. The loader (ocl-icd 2.3+, the
 * Khronos loader) loads the layer named by $OPENCL_LAYERS when it initialises, hands it
 * its dispatch table (the target), and sends every OpenCL call through the dispatch
 * table returned here: a wrapper for each function of opencl_api.h (opencl_wrappers.c),
 * the target's entry for everything else.
 *
 * While a session records, every call is a runtime event (its name, start and end on
 * the backend's host clock CLOCK_MONOTONIC_RAW (see dt_cl_host_ns), a process-wide
 * correlation id, the thread's external id, the status), and each enqueue of a kernel,
 * copy or fill a device event: the layer creates every queue with
 * CL_QUEUE_PROFILING_ENABLE (the program's queries still see what it asked for),
 * supplies an event where the program passes NULL, and reads QUEUED/START/END when the
 * command completes (opencl_pending.c). Device event and enqueue share the correlation.
 * When no session records, a wrapper costs one atomic load and a branch. This file: the
 * session's open, start (the recording pointer set), stop (the recording pointer cleared,
 * the calls in flight waited for, the pending commands resolved, the notes) and close.
 *
 * Nothing here calls OpenCL through the loader: the layer uses the target only, and
 * never from clInitLayer or the backend's open/start (they run inside the loader's
 * initialisation when the collector starts a session from clInitLayer).
 *
 * The parts opencl_wrappers.c, opencl_describe.c, opencl_objects.c and opencl_pending.c
 * are compiled beside this file (src/CMakeLists.txt takes a backend's files named after
 * it). */
#include "backend.h"

#if !__has_include(<CL/cl_layer.h>)

#include <stdio.h>

static int opencl_probe_without_headers(char *why, size_t whylen)
{
    snprintf(why, whylen, "built without the OpenCL headers (CL/cl_layer.h): install opencl-headers and rebuild");
    return 0;
}

const dt_backend dt_backend_opencl = {
    .name = "opencl",
    .description = "OpenCL loader layer",
    .validated = DT_VALIDATED_HARDWARE,
    .validation_note = "real kernels on PoCL 3.1 (CPU device) in CI; GPU OpenCL drivers not tested",
    .runtime_category = "privateuse1_runtime",
    .load_method = DEVTRACE_LOAD_LAYER,
    .load_variable = "OPENCL_LAYERS",
    .probe = opencl_probe_without_headers,
};

#else

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "opencl_layer.h"
#include "core/grow.h"

#ifndef CL_LAYER_NAME
#define CL_LAYER_NAME 0x4241
#endif

#define DT_CL_LAYER_NAME "devtrace"
#define DT_CL_STOP_TIMEOUT_MS 10000u /* default wait for running commands at stop */

cl_icd_dispatch dt_cl_target;
dt_cl_recording *_Atomic dt_cl_recording_now;
dt_cl_recording *_Atomic dt_cl_recording_stopping;

static cl_icd_dispatch layer_dispatch;
static cl_uint layer_entries;
static const cl_icd_dispatch *layer_target; /* what the loader passed */
static atomic_int layer_ready;
static pthread_mutex_t control_lock = PTHREAD_MUTEX_INITIALIZER; /* start/stop */

static const char *const api_names[DT_CL_FN_COUNT] = {
#define DT_CL_FN_NAME(ret, name, ...) #name,
    DT_CL_API_ALL(DT_CL_FN_NAME)
#undef DT_CL_FN_NAME
};

/* ------------------------------------------------------------------ the layer's entry points */

DEVTRACE_EXPORT cl_int CL_API_CALL clGetLayerInfo(cl_layer_info param_name, size_t param_value_size, void *param_value,
                                                  size_t *param_value_size_ret)
{
    static const cl_layer_api_version version = CL_LAYER_API_VERSION_100;
    const void *value;
    size_t size;
    switch (param_name) {
    case CL_LAYER_API_VERSION:
        value = &version;
        size = sizeof version;
        break;
    case CL_LAYER_NAME:
        value = DT_CL_LAYER_NAME;
        size = sizeof DT_CL_LAYER_NAME;
        break;
    default:
        return CL_INVALID_VALUE;
    }
    if (param_value) {
        if (param_value_size < size)
            return CL_INVALID_VALUE;
        memcpy(param_value, value, size);
    }
    if (param_value_size_ret)
        *param_value_size_ret = size;
    return CL_SUCCESS;
}

DEVTRACE_EXPORT cl_int CL_API_CALL clInitLayer(cl_uint num_entries, const cl_icd_dispatch *target_dispatch,
                                               cl_uint *num_entries_ret, const cl_icd_dispatch **layer_dispatch_ret)
{
    const cl_uint ours = (cl_uint)(sizeof(cl_icd_dispatch) / sizeof(void *));
    if (!target_dispatch || !num_entries_ret || !layer_dispatch_ret)
        return CL_INVALID_VALUE;
    if (atomic_load(&layer_ready)) {
        /* One target per process: a second loader (another libOpenCL) is refused. */
        if (target_dispatch != layer_target)
            return CL_INVALID_OPERATION;
        *num_entries_ret = layer_entries;
        *layer_dispatch_ret = &layer_dispatch;
        return CL_SUCCESS;
    }
    layer_entries = num_entries < ours ? num_entries : ours;
    layer_target = target_dispatch;
    memset(&dt_cl_target, 0, sizeof dt_cl_target);
    memcpy(&dt_cl_target, target_dispatch, layer_entries * sizeof(void *));
    layer_dispatch = dt_cl_target;           /* every entry passes through ... */
    dt_cl_install_wrappers(&layer_dispatch); /* ... but those the layer wraps */
    atomic_store(&layer_ready, 1);
    *num_entries_ret = layer_entries;
    *layer_dispatch_ret = &layer_dispatch;
    /* Under devtrace record, the collector starts its session now (no OpenCL call). */
    dt_core_autostart("opencl");
    return CL_SUCCESS;
}

/* ------------------------------------------------------------------ sessions */

static int opencl_probe(char *why, size_t whylen)
{
    if (atomic_load(&layer_ready))
        return 1;
    void *loader = dlopen("libOpenCL.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!loader) {
        snprintf(why, whylen,
                 "libOpenCL.so.1 not found (install ocl-icd-libopencl1 and an ICD such as pocl-opencl-icd)");
        return 0;
    }
    dlclose(loader);
    return 1;
}

/* Whether the path list (':'-separated) already names the file at path. */
static int layer_list_has(const char *list, const char *path)
{
    struct stat want;
    if (!list || stat(path, &want) != 0)
        return 0;
    char item[4096];
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ":");
        struct stat have;
        if (n && n < sizeof item) {
            memcpy(item, p, n);
            item[n] = '\0';
            if (stat(item, &have) == 0 && have.st_dev == want.st_dev && have.st_ino == want.st_ino)
                return 1;
        }
        p += n + (p[n] == ':');
    }
    return 0;
}

/* The layer is not loaded yet: name this library in $OPENCL_LAYERS, so that the loader
 * loads it when the program makes its first OpenCL call. */
static int request_layer(dt_session *s, devtrace_error *err)
{
    Dl_info info;
    if (!dladdr(&layer_dispatch, &info) || !info.dli_fname || !*info.dli_fname) {
        snprintf(err->message, sizeof err->message,
                 "cannot find the path of libdevtrace.so (dladdr failed); set OPENCL_LAYERS=/path/to/libdevtrace.so "
                 "before the program's first OpenCL call");
        return err->code = DEVTRACE_EVENDOR;
    }
    void *self = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    void *program = dlopen(NULL, RTLD_LAZY);
    int is_program = self && self == program;
    if (self)
        dlclose(self);
    if (program)
        dlclose(program);
    if (is_program || strchr(info.dli_fname, ':')) {
        snprintf(err->message, sizeof err->message,
                 "devtrace is linked statically into %s: the OpenCL layer must be the shared libdevtrace.so "
                 "(link libdevtrace.so, or run the program under 'devtrace record')",
                 info.dli_fname);
        return err->code = DEVTRACE_EUNAVAILABLE;
    }
    const char *old = getenv("OPENCL_LAYERS");
    if (layer_list_has(old, info.dli_fname)) {
        dt_add_note(s, "OPENCL_LAYERS names libdevtrace.so: the OpenCL loader loads the devtrace layer at the "
                       "program's first OpenCL call");
        return 0;
    }
    size_t n = strlen(info.dli_fname) + (old ? strlen(old) + 1 : 0) + 1;
    char *value = malloc(n);
    if (!value) {
        snprintf(err->message, sizeof err->message, "out of memory setting OPENCL_LAYERS");
        return err->code = DEVTRACE_ENOMEM;
    }
    snprintf(value, n, "%s%s%s", old && *old ? old : "", old && *old ? ":" : "", info.dli_fname);
    setenv("OPENCL_LAYERS", value, 1);
    dt_add_note(s,
                "OPENCL_LAYERS set to %s: the OpenCL loader loads the devtrace layer at the program's first OpenCL "
                "call (a loader the program used before devtrace_open was initialised without it)",
                value);
    free(value);
    return 0;
}

static int opencl_open(dt_session *s, void *state, devtrace_error *err)
{
    dt_cl_recording *r = state;
    r->session = s;
    r->pid = dt_process_id();
    for (int i = 0; i < DT_CL_FN_COUNT; i++) {
        r->api_name[i] = dt_session_intern(s, api_names[i]);
        if (!r->api_name[i]) {
            snprintf(err->message, sizeof err->message, "out of memory interning the OpenCL API names");
            return err->code = DEVTRACE_ENOMEM;
        }
    }
    return atomic_load(&layer_ready) ? 0 : request_layer(s, err);
}

static void forget_recording_in_child(void)
{
    atomic_store(&dt_cl_recording_now, NULL);
    pthread_mutex_init(&control_lock, NULL);
    dt_cl_objects_after_fork();
    dt_cl_threads_forget_after_fork();
}

static void install_fork_handler(void)
{
    pthread_atfork(NULL, NULL, forget_recording_in_child);
}

static void add_method_notes(dt_session *s)
{
    dt_add_note(s, "OpenCL queues are created with CL_QUEUE_PROFILING_ENABLE added; the program's queries see the "
                   "properties it asked for");
    dt_add_note(s, "OpenCL kernel grid: work-groups per dimension (global size / local size) when the launch gives "
                   "a local size; else the global size with block 1 (the runtime chose the work-group size)");
    dt_add_note(s, "OpenCL has no register, warp or per-SM limits: deviceProperties carry no occupancy attributes "
                   "and kernels no occupancy keys");
}

static int read_host_clock(uint64_t *ns)
{
    *ns = dt_cl_host_ns();
    return 0;
}

/* A sample pairing the backend's host clock with CLOCK_REALTIME, bracketed and retried
 * like every backend's (dt_sample_vendor_clock: a read preempted inside its bracket is
 * taken again). */
void dt_cl_add_clock_sample(dt_cl_recording *r)
{
    dt_sample_vendor_clock(r->session, read_host_clock, 0, NULL, NULL);
    atomic_store_explicit(&r->last_sample_ns, dt_cl_host_ns(), memory_order_relaxed);
}

static int opencl_start(dt_session *s, void *state)
{
    static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
    dt_cl_recording *r = state;
    pthread_once(&fork_once, install_fork_handler);
    pthread_mutex_lock(&control_lock);
    if (atomic_load(&dt_cl_recording_now)) {
        pthread_mutex_unlock(&control_lock);
        dt_add_note(s, "another devtrace session already records OpenCL in this process: this one records nothing");
        return DEVTRACE_ESTATE;
    }
    r->ticks = dt_ticks_start(s, read_host_clock);
    dt_cl_add_clock_sample(r);
    atomic_store(&dt_cl_recording_now, r);
    /* After the store: a device registered from now on publishes itself. */
    for (int i = 0; i < dt_cl_device_count(); i++)
        dt_cl_publish_device(r, i);
    add_method_notes(s);
    pthread_mutex_unlock(&control_lock);
    return 0;
}

typedef struct queue_list {
    cl_command_queue *items;
    size_t n, cap;
} queue_list;

static void retain_live_queue(const void *key, void *user)
{
    queue_list *list = user;
    cl_command_queue *items = dt_room_for_one(list->items, list->n, &list->cap, sizeof *items, 16);
    if (!items)
        return;
    list->items = items;
    cl_command_queue queue = (cl_command_queue)(uintptr_t)key;
    if (dt_cl_target.clRetainCommandQueue(queue) == CL_SUCCESS)
        list->items[list->n++] = queue;
}

/* Submits what the program enqueued but never flushed, so that it can complete. */
static void flush_live_queues(void)
{
    if (!dt_cl_target.clFlush || !dt_cl_target.clRetainCommandQueue || !dt_cl_target.clReleaseCommandQueue)
        return;
    queue_list list = {NULL, 0, 0};
    dt_cl_map_each_live(&dt_cl_queues, retain_live_queue, &list);
    for (size_t i = 0; i < list.n; i++) {
        dt_cl_target.clFlush(list.items[i]);
        dt_cl_target.clReleaseCommandQueue(list.items[i]);
    }
    free(list.items);
}

static uint64_t stop_timeout_ms(dt_session *s)
{
    const char *text = getenv("DEVTRACE_OPENCL_STOP_TIMEOUT_MS");
    uint64_t ms = DT_CL_STOP_TIMEOUT_MS;
    if (text && *text && dt_parse_u64(text, &ms) != 0) {
        dt_add_note(s, "$DEVTRACE_OPENCL_STOP_TIMEOUT_MS=\"%s\" is not a number of milliseconds: %u used", text,
                    DT_CL_STOP_TIMEOUT_MS);
        ms = DT_CL_STOP_TIMEOUT_MS;
    }
    return ms;
}

static void add_device_clock_notes(dt_cl_recording *r)
{
    char note[400];
    for (int i = 0; i < dt_cl_device_count(); i++) {
        dt_cl_device_clock_note(i, note, sizeof note);
        dt_add_note(r->session, "%s", note);
    }
}

static void add_loss_notes(dt_cl_recording *r, uint64_t timeout_ms)
{
    dt_session *s = r->session;
    unsigned long long n;
    if ((n = atomic_load(&r->failed_commands)))
        dt_add_note(s, "%llu OpenCL commands ended with an error status: no device event (counted in dropped_vendor)",
                    n);
    if ((n = atomic_load(&r->unreadable_times)))
        dt_add_note(s,
                    "%llu OpenCL commands' profiling times could not be read: no device event (counted in "
                    "dropped_vendor)",
                    n);
    if ((n = atomic_load(&r->unprofiled_enqueues)))
        dt_add_note(s,
                    "%llu enqueues on queues without profiling (the device refused CL_QUEUE_PROFILING_ENABLE): "
                    "no device event (counted in dropped_vendor)",
                    n);
    if ((n = atomic_load(&r->incomplete_at_stop)))
        dt_add_note(s,
                    "%llu OpenCL commands had not completed %llu ms after stop began: not recorded (counted in "
                    "dropped_vendor; $DEVTRACE_OPENCL_STOP_TIMEOUT_MS sets the wait)",
                    n, (unsigned long long)timeout_ms);
    if ((n = atomic_load(&r->no_memory)))
        dt_add_note(s, "%llu device events lost: no memory for their pending records (counted in dropped_pool_full)",
                    n);
    dt_cl_map *maps[] = {&dt_cl_queues, &dt_cl_kernels, &dt_cl_contexts};
    for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++)
        if ((n = atomic_load(&maps[i]->refused)))
            dt_add_note(s, "%llu OpenCL %ss could not be tracked (table full or out of memory)", n, maps[i]->what);
}

static int opencl_stop(dt_session *s, void *state)
{
    dt_cl_recording *r = state;
    pthread_mutex_lock(&control_lock);
    if (atomic_load(&dt_cl_recording_now) != r) {
        pthread_mutex_unlock(&control_lock);
        return 0;
    }
    atomic_store(&dt_cl_recording_stopping, r);
    atomic_store(&dt_cl_recording_now, NULL);
    dt_cl_guards_drain(); /* from here on, no thread adds or resolves */
    uint64_t unprofiled = dt_cl_unprofiled_take();
    atomic_fetch_add(&r->unprofiled_enqueues, unprofiled);
    DT_COUNT(s, dropped_vendor, unprofiled);
    uint64_t timeout_ms = stop_timeout_ms(s);
    if (atomic_load(&layer_ready)) {
        flush_live_queues();
        dt_cl_pending_resolve_all(r, timeout_ms * 1000000u);
    }
    dt_cl_add_clock_sample(r);
    atomic_store(&dt_cl_recording_stopping, NULL);
    uint64_t during = atomic_load(&r->calls_while_stopping);
    if (during)
        dt_add_note(s,
                    "%llu OpenCL call(s) were made while devtrace stopped recording (the program ran on, e.g. "
                    "after a Ctrl-C, while what it had enqueued was read back): they are not recorded, nor the "
                    "device work they enqueued, some of which may have ended before the window's stop",
                    (unsigned long long)during);
    add_device_clock_notes(r);
    add_loss_notes(r, timeout_ms);
    /* What is missing, and what is not: ops and annotations (cpu_op events) do not need the layer. */
    if (!atomic_load(&layer_ready) && s->owner_collector)
        dt_add_note(s, "no OpenCL call reached devtrace (the program made none through the OpenCL loader): no "
                       "OpenCL runtime call, kernel, copy or memset was traced; ops and annotations (cpu_op events) "
                       "were recorded");
    else if (!atomic_load(&layer_ready))
        dt_add_note(s, "the OpenCL loader never loaded the devtrace layer: no OpenCL runtime call, kernel, copy or "
                       "memset was traced (ops and annotations, cpu_op events, were recorded); set "
                       "OPENCL_LAYERS=/path/to/libdevtrace.so before the program's first OpenCL call, or use "
                       "'devtrace record'");
    pthread_mutex_unlock(&control_lock);
    return 0;
}

static uint64_t opencl_pending_events(void *state)
{
    (void)state;
    return dt_cl_pending_count();
}

static void opencl_unfolded_counts(void *state, devtrace_stats *st)
{
    if (state && atomic_load(&dt_cl_recording_now) == state)
        st->dropped_vendor += dt_cl_unprofiled_count(); /* the enqueues stop would add */
}

static void opencl_close(dt_session *s, void *state)
{
    if (state && atomic_load(&dt_cl_recording_now) == state)
        opencl_stop(s, state);
}

/* The loader, found by the loader's own search only (opencl_probe). */
static void opencl_describe_library(devtrace_backend_info *info)
{
    info->library_api = "OpenCL";
    info->library_files[0] = "libOpenCL.so.1";
}

const dt_backend dt_backend_opencl = {
    .name = "opencl",
    .description = "OpenCL loader layer",
    /* No DT_CAP_*: grid/block and shared (local) memory are known but registers are not
     * (kernels carry DEVTRACE_EVENT_HAS_SHARED, not HAS_REGS), there is no occupancy
     * data, and external ids are attached by devtrace, not the vendor. */
    .caps = 0,
    .validated = DT_VALIDATED_HARDWARE,
    .validation_note = "real kernels on PoCL 3.1 (CPU device) in CI; GPU OpenCL drivers not tested",
    .runtime_category = "privateuse1_runtime",
    .load_method = DEVTRACE_LOAD_LAYER,
    .load_variable = "OPENCL_LAYERS",
    .state_size = sizeof(dt_cl_recording),
    .probe = opencl_probe,
    .describe_library = opencl_describe_library,
    .open = opencl_open,
    .start = opencl_start,
    .stop = opencl_stop,
    .close = opencl_close,
    .pending_events = opencl_pending_events,
    .unfolded_counts = opencl_unfolded_counts,
};

#endif /* __has_include(<CL/cl_layer.h>) */
