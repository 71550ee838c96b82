/* opencl.c: the OpenCL backend, an OpenCL ICD loader layer (see opencl_layer.h).
 *
 * libdevtrace.so exports clGetLayerInfo and clInitLayer. The loader (ocl-icd 2.3+, the
 * Khronos loader) loads the layer named by $OPENCL_LAYERS when it initialises, hands it
 * its dispatch table (the target), and sends every OpenCL call through the dispatch
 * table returned here: a wrapper for each function of opencl_api.h, the target's entry
 * for everything else.
 *
 * While a session records, every call is a runtime event (its name, start and end on
 * the backend's host clock CLOCK_MONOTONIC_RAW (see dt_cl_host_ns), a process-wide
 * correlation id, the thread's external id, the status), and each enqueue of a kernel,
 * copy or fill a device event: the layer creates every queue with
 * CL_QUEUE_PROFILING_ENABLE (the program's queries still see what it asked for),
 * supplies an event where the program passes NULL, and reads QUEUED/START/END when the
 * command completes (opencl_pending.c). Device event and enqueue share the correlation.
 * When no session records, a wrapper costs one atomic load and a branch.
 *
 * Nothing here calls OpenCL through the loader: the layer uses the target only, and
 * never from clInitLayer or the backend's open/start (they run inside the loader's
 * initialisation when the collector starts a session from clInitLayer).
 *
 * The parts opencl_describe.c, opencl_objects.c and opencl_pending.c are compiled inside
 * this file: the build compiles one source file per backend (src/CMakeLists.txt). */
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

#ifndef CL_LAYER_NAME
#define CL_LAYER_NAME 0x4241
#endif

#define DT_CL_LAYER_NAME "devtrace"
#define DT_CL_STOP_TIMEOUT_MS 10000u           /* default wait for running commands at stop */
#define DT_CL_SAMPLE_INTERVAL_NS 1000000000ull /* clock samples while recording, at most */

/* Declared here, weak, so that the backend builds without the collector. */
extern void dt_collector_autostart(const char *backend_name) __attribute__((weak));

cl_icd_dispatch dt_cl_target;
dt_cl_recording *_Atomic dt_cl_recording_now;

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

/* ------------------------------------------------------------------ one call */

typedef struct dt_cl_call {
    dt_cl_recording *rec; /* the recording when the call began; NULL: not recording */
    uint64_t start_ns;
} dt_cl_call;

typedef struct dt_cl_external {
    int has;
    uint64_t id;
} dt_cl_external;

static inline int call_begin(dt_cl_call *c)
{
    c->rec = atomic_load_explicit(&dt_cl_recording_now, memory_order_acquire);
    if (__builtin_expect(c->rec == NULL, 1))
        return 0;
    c->start_ns = dt_cl_stamp(c->rec);
    return 1;
}

/* Enters a recording section if the call's recording still records: the thread, with
 * its guard held, or NULL. */
static dt_cl_thread *section_enter(const dt_cl_call *c)
{
    dt_cl_thread *t = dt_cl_thread_self();
    if (!t)
        return NULL;
    dt_cl_guard_enter(t);
    if (atomic_load_explicit(&dt_cl_recording_now, memory_order_seq_cst) != c->rec) {
        dt_cl_guard_exit(t);
        return NULL;
    }
    return t;
}

/* Emits the call's runtime event (inside a section); returns its correlation. */
static uint64_t emit_runtime(dt_cl_thread *t, const dt_cl_call *c, dt_cl_fn fn, uint64_t end_ns, cl_int status,
                             dt_cl_external *ext)
{
    dt_cl_recording *r = c->rec;
    uint64_t correlation = dt_cl_next_correlation(t);
    ext->has = dt_current_external(r->session, &ext->id);
    dt_store_cursor cur = {0};
    devtrace_event *ev = dt_store_cursor_next(&cur, &r->session->store); /* written in place */
    if (!ev) {
        dt_store_cursor_drop(&cur); /* the store is at its bound */
        return correlation;
    }
    dt_event_zero(ev);
    ev->kind = DEVTRACE_KIND_RUNTIME;
    ev->flags = r->ticks ? DT_EVENT_TICKS : 0;
    ev->start_ns = c->start_ns;
    ev->end_ns = end_ns;
    ev->correlation = correlation;
    ev->name_id = r->api_name[fn];
    ev->device = r->pid;
    ev->stream = dt_cl_thread_id(t);
    ev->u.runtime.return_value = status;
    if (ext->has) {
        ev->flags |= DEVTRACE_EVENT_HAS_EXTERNAL;
        ev->external_id = ext->id;
    }
    dt_store_cursor_commit(&cur);
    return correlation;
}

/* Pairs the host clock with CLOCK_REALTIME (the middle of two host readings). */
static void add_clock_sample(dt_cl_recording *r)
{
    uint64_t h0 = dt_cl_host_ns();
    uint64_t realtime = dt_realtime_ns();
    uint64_t h1 = dt_cl_host_ns();
    atomic_store_explicit(&r->last_sample_ns, h1, memory_order_relaxed);
    dt_add_clock_sample(r->session, h0 + (h1 - h0) / 2, realtime);
}

/* Reads this thread's completed commands when due (inside a section), and adds a clock
 * sample at most once a second (CLOCK_MONOTONIC_RAW and CLOCK_REALTIME differ in rate
 * by the NTP frequency correction: more samples, a closer map). */
static void poll_when_due(dt_cl_thread *t, dt_cl_recording *r, int now)
{
    if (!now && !dt_cl_pending_due(t))
        return;
    dt_cl_pending_poll(t, r);
    uint64_t last = atomic_load_explicit(&r->last_sample_ns, memory_order_relaxed);
    uint64_t host = dt_cl_host_ns();
    if (host - last >= DT_CL_SAMPLE_INTERVAL_NS &&
        atomic_compare_exchange_strong_explicit(&r->last_sample_ns, &last, host, memory_order_relaxed,
                                                memory_order_relaxed))
        add_clock_sample(r);
}

/* The end of a call that enqueues no device event. waits_for_device: the call waited
 * for the device, so this thread's completed commands are read now. */
static void call_end(const dt_cl_call *c, dt_cl_fn fn, cl_int status, int waits_for_device)
{
    uint64_t end_ns = dt_cl_stamp_end(c->rec);
    dt_cl_thread *t = section_enter(c);
    if (!t)
        return;
    dt_cl_external ext;
    emit_runtime(t, c, fn, end_ns, status, &ext);
    poll_when_due(t, c->rec, waits_for_device);
    dt_cl_guard_exit(t);
}

/* ------------------------------------------------------------------ enqueues */

static void enqueue_init(dt_cl_enqueue *e)
{
    /* Every field, one by one (keep in step with dt_cl_enqueue): a memset of the whole
     * compiles to rep stos, whose start-up costs more than the rest of the call. */
    dt_event_zero(&e->device);
    e->kernel_name = NULL;
    e->local_mem_device = -1;
    e->blocking = 0;
    e->queue = NULL;
    e->app_event = NULL;
    e->own_event = NULL;
}

/* The event pointer to pass down: the program's, else the layer's own when a device
 * event can be read from the queue. */
static cl_event *enqueue_event_slot(dt_cl_enqueue *e, cl_command_queue queue, cl_event *app_event)
{
    e->queue = dt_cl_queue_get(queue);
    e->app_event = app_event;
    if (app_event || !e->queue || !e->queue->profiled)
        return app_event;
    return &e->own_event;
}

/* Keeps the device event until its command completes (inside a section). 1 when kept. */
static int keep_device_event(dt_cl_thread *t, const dt_cl_call *c, dt_cl_enqueue *e, uint64_t correlation,
                             const dt_cl_external *ext, uint64_t call_end_ns)
{
    dt_cl_recording *r = c->rec;
    const dt_cl_queue_rec *q = e->queue;
    if (!q || !q->profiled) {
        atomic_fetch_add(&r->unprofiled_enqueues, 1);
        DT_COUNT(r->session, dropped_vendor, 1);
        return 0;
    }
    cl_event event = e->app_event ? *e->app_event : e->own_event;
    if (!event)
        return 0;
    devtrace_event *d = &e->device;
    d->correlation = correlation;
    d->device = q->device_index;
    d->context = q->context_id;
    d->stream = q->id;
    if (ext->has) {
        d->flags |= DEVTRACE_EVENT_HAS_EXTERNAL;
        d->external_id = ext->id;
    }
    if (e->kernel_name)
        d->name_id = dt_intern_ptr(&r->session->names, e->kernel_name);
    if (e->local_mem_device >= 0 && (uint32_t)e->local_mem_device == q->device_index)
        d->flags |= DEVTRACE_EVENT_HAS_SHARED; /* known for the device the launch ran on */
    else
        d->u.kernel.static_shared = d->u.kernel.dynamic_shared = 0;
    if (dt_cl_pending_add(t, event, e->app_event != NULL, d, c->start_ns, call_end_ns) != 0) {
        atomic_fetch_add(&r->no_memory, 1);
        DT_COUNT(r->session, dropped_pool_full, 1);
        return 0;
    }
    return 1;
}

static void call_end_enqueue(const dt_cl_call *c, dt_cl_fn fn, cl_int status, dt_cl_enqueue *e)
{
    uint64_t end_ns = dt_cl_stamp_end(c->rec);
    int kept = 0;
    dt_cl_thread *t = section_enter(c);
    if (t) {
        dt_cl_external ext;
        uint64_t correlation = emit_runtime(t, c, fn, end_ns, status, &ext);
        if (status == CL_SUCCESS)
            kept = keep_device_event(t, c, e, correlation, &ext, end_ns);
        poll_when_due(t, c->rec, e->blocking);
        dt_cl_guard_exit(t);
    }
    if (!kept && e->own_event)
        dt_cl_target.clReleaseEvent(e->own_event);
}

/* ------------------------------------------------------------------ generated wrappers */

/* Returns a cl_int status; waits_for_device: 1 for the SYNC list. */
#define DT_CL_DEFINE_STATUS(ret, name, params, args, waits_for_device) \
    static ret CL_API_CALL wrap_##name params                          \
    {                                                                  \
        dt_cl_call call;                                               \
        if (!call_begin(&call))                                        \
            return dt_cl_target.name args;                             \
        ret status = dt_cl_target.name args;                           \
        call_end(&call, DT_CL_FN_##name, status, waits_for_device);    \
        return status;                                                 \
    }
#define DT_CL_DEFINE_RC(ret, name, params, args) DT_CL_DEFINE_STATUS(ret, name, params, args, 0)
#define DT_CL_DEFINE_SYNC(ret, name, params, args) DT_CL_DEFINE_STATUS(ret, name, params, args, 1)

/* Returns an object; the status is *errcode_ret (the wrapper's own when NULL was passed). */
#define DT_CL_DEFINE_OBJ(ret, name, params, args)          \
    static ret CL_API_CALL wrap_##name params              \
    {                                                      \
        dt_cl_call call;                                   \
        if (!call_begin(&call))                            \
            return dt_cl_target.name args;                 \
        cl_int own_status = CL_SUCCESS;                    \
        if (!errcode_ret)                                  \
            errcode_ret = &own_status;                     \
        ret result = dt_cl_target.name args;               \
        call_end(&call, DT_CL_FN_##name, *errcode_ret, 0); \
        return result;                                     \
    }

/* Returns a pointer and no status. */
#define DT_CL_DEFINE_PTR(ret, name, params, args)                                    \
    static ret CL_API_CALL wrap_##name params                                        \
    {                                                                                \
        dt_cl_call call;                                                             \
        if (!call_begin(&call))                                                      \
            return dt_cl_target.name args;                                           \
        ret result = dt_cl_target.name args;                                         \
        call_end(&call, DT_CL_FN_##name, result ? CL_SUCCESS : CL_INVALID_VALUE, 0); \
        return result;                                                               \
    }

#define DT_CL_DEFINE_VOID(ret, name, params, args)           \
    static ret CL_API_CALL wrap_##name params                \
    {                                                        \
        dt_cl_call call;                                     \
        int recording = call_begin(&call);                   \
        dt_cl_target.name args;                              \
        if (recording)                                       \
            call_end(&call, DT_CL_FN_##name, CL_SUCCESS, 0); \
    }

/* Enqueues device work: dt_cl_describe_<name> (opencl_describe.c) says what it is; the event is the program's or
 * the layer's own. */
#define DT_CL_DEFINE_ENQUEUE(ret, name, params, args)               \
    static ret CL_API_CALL wrap_##name params                       \
    {                                                               \
        dt_cl_call call;                                            \
        if (!call_begin(&call))                                     \
            return dt_cl_target.name args;                          \
        dt_cl_enqueue enqueue;                                      \
        enqueue_init(&enqueue);                                     \
        dt_cl_describe_##name(&enqueue, DT_CL_UNPAREN args);        \
        event = enqueue_event_slot(&enqueue, command_queue, event); \
        ret status = dt_cl_target.name args;                        \
        call_end_enqueue(&call, DT_CL_FN_##name, status, &enqueue); \
        return status;                                              \
    }

/* Retain/release of an object the layer keeps a record for: the record follows the
 * program's reference count. A release is counted before the call, so that stop never
 * takes a reference on an object whose last one the program is dropping. */
#define DT_CL_DEFINE_REFCOUNT(ret, name, params, args, map, delta)              \
    static ret CL_API_CALL wrap_##name params                                   \
    {                                                                           \
        dt_cl_call call;                                                        \
        int recording = call_begin(&call);                                      \
        const void *handle = DT_CL_UNPAREN args;                                \
        if ((delta) < 0)                                                        \
            dt_cl_map_refcount(&map, handle, delta);                            \
        ret status = dt_cl_target.name args;                                    \
        if (((delta) > 0) == (status == CL_SUCCESS))                            \
            dt_cl_map_refcount(&map, handle, (delta) > 0 ? (delta) : -(delta)); \
        if (recording)                                                          \
            call_end(&call, DT_CL_FN_##name, status, 0);                        \
        return status;                                                          \
    }

DT_CL_API_RC(DT_CL_DEFINE_RC)
DT_CL_API_SYNC(DT_CL_DEFINE_SYNC)
DT_CL_API_OBJ(DT_CL_DEFINE_OBJ)
DT_CL_API_PTR(DT_CL_DEFINE_PTR)
DT_CL_API_VOID(DT_CL_DEFINE_VOID)
DT_CL_API_ENQUEUE(DT_CL_DEFINE_ENQUEUE)
DT_CL_API_REFCOUNT(DT_CL_DEFINE_REFCOUNT)

/* ------------------------------------------------------------------ hand-written wrappers */

/* The SPECIAL list's signatures, declared from the table: a hand-written wrapper that
 * drifts from it does not compile. */
#define DT_CL_DECLARE_WRAPPER(ret, name, params, args) static ret CL_API_CALL wrap_##name params;
DT_CL_API_SPECIAL(DT_CL_DECLARE_WRAPPER)
#undef DT_CL_DECLARE_WRAPPER

static cl_context CL_API_CALL wrap_clCreateContext(
    const cl_context_properties *properties, cl_uint num_devices, const cl_device_id *devices,
    void(CL_CALLBACK *pfn_notify)(const char *, const void *, size_t, void *), void *user_data, cl_int *errcode_ret)
{
    dt_cl_call call;
    int recording = call_begin(&call);
    cl_int own_status = CL_SUCCESS;
    if (!errcode_ret)
        errcode_ret = &own_status;
    cl_context context =
        dt_cl_target.clCreateContext(properties, num_devices, devices, pfn_notify, user_data, errcode_ret);
    if (recording)
        call_end(&call, DT_CL_FN_clCreateContext, *errcode_ret, 0);
    if (context)
        dt_cl_context_learn(context, num_devices, devices);
    return context;
}

static cl_context CL_API_CALL wrap_clCreateContextFromType(
    const cl_context_properties *properties, cl_device_type device_type,
    void(CL_CALLBACK *pfn_notify)(const char *, const void *, size_t, void *), void *user_data, cl_int *errcode_ret)
{
    dt_cl_call call;
    int recording = call_begin(&call);
    cl_int own_status = CL_SUCCESS;
    if (!errcode_ret)
        errcode_ret = &own_status;
    cl_context context =
        dt_cl_target.clCreateContextFromType(properties, device_type, pfn_notify, user_data, errcode_ret);
    if (recording)
        call_end(&call, DT_CL_FN_clCreateContextFromType, *errcode_ret, 0);
    if (context)
        dt_cl_context_learn(context, 0, NULL);
    return context;
}

static cl_command_queue CL_API_CALL wrap_clCreateCommandQueue(cl_context context, cl_device_id device,
                                                              cl_command_queue_properties properties,
                                                              cl_int *errcode_ret)
{
    dt_cl_call call;
    int recording = call_begin(&call);
    cl_int own_status = CL_SUCCESS;
    if (!errcode_ret)
        errcode_ret = &own_status;
    cl_command_queue_properties with_profiling = properties | CL_QUEUE_PROFILING_ENABLE;
    cl_command_queue queue = dt_cl_target.clCreateCommandQueue(context, device, with_profiling, errcode_ret);
    int profiled = queue != NULL;
    if (!queue && with_profiling != properties) {
        /* The device refused profiling: the program gets the queue it asked for. */
        queue = dt_cl_target.clCreateCommandQueue(context, device, properties, errcode_ret);
        profiled = 0;
    }
    if (recording)
        call_end(&call, DT_CL_FN_clCreateCommandQueue, *errcode_ret, 0);
    if (queue) {
        dt_cl_queue_rec asked;
        memset(&asked, 0, sizeof asked);
        asked.profiled = (uint8_t)profiled;
        asked.forced = profiled && !(properties & CL_QUEUE_PROFILING_ENABLE);
        asked.app_properties = properties;
        asked.array_mode = DT_CL_ARRAY_ASK_DRIVER;
        dt_cl_queue_created(queue, context, device, &asked);
    }
    return queue;
}

/* Copies the program's queue properties into asked (what it asked for) and into merged
 * with CL_QUEUE_PROFILING_ENABLE added to CL_QUEUE_PROPERTIES (the pair appended when
 * absent). merged holds DT_CL_QUEUE_ARRAY_MAX + 3 entries. Returns 1 when merged
 * differs from the program's list, 0 when nothing is to be added (profiling already
 * asked for, or a list too long to copy). */
static int queue_properties_with_profiling(const cl_queue_properties *properties, cl_queue_properties *merged,
                                           dt_cl_queue_rec *asked)
{
    size_t n = 0;
    asked->app_properties = 0;
    asked->array_mode = DT_CL_ARRAY_ASK_DRIVER;
    if (!properties) {
        asked->array_mode = DT_CL_ARRAY_EMPTY;
        merged[0] = CL_QUEUE_PROPERTIES;
        merged[1] = CL_QUEUE_PROFILING_ENABLE;
        merged[2] = 0;
        return 1;
    }
    for (; properties[n] != 0; n += 2) {
        if (n + 2 >= DT_CL_QUEUE_ARRAY_MAX)
            return 0;
        if (properties[n] == CL_QUEUE_PROPERTIES)
            asked->app_properties = (cl_command_queue_properties)properties[n + 1];
    }
    if (asked->app_properties & CL_QUEUE_PROFILING_ENABLE)
        return 0;
    memcpy(asked->app_array, properties, (n + 1) * sizeof *properties);
    asked->app_array_len = n + 1;
    asked->array_mode = DT_CL_ARRAY_COPY;
    memcpy(merged, properties, (n + 1) * sizeof *properties);
    for (size_t i = 0; i < n; i += 2)
        if (merged[i] == CL_QUEUE_PROPERTIES) {
            merged[i + 1] |= CL_QUEUE_PROFILING_ENABLE;
            return 1;
        }
    merged[n] = CL_QUEUE_PROPERTIES;
    merged[n + 1] = CL_QUEUE_PROFILING_ENABLE;
    merged[n + 2] = 0;
    return 1;
}

static cl_command_queue CL_API_CALL wrap_clCreateCommandQueueWithProperties(cl_context context, cl_device_id device,
                                                                            const cl_queue_properties *properties,
                                                                            cl_int *errcode_ret)
{
    dt_cl_call call;
    int recording = call_begin(&call);
    cl_int own_status = CL_SUCCESS;
    if (!errcode_ret)
        errcode_ret = &own_status;
    cl_queue_properties merged[DT_CL_QUEUE_ARRAY_MAX + 3];
    dt_cl_queue_rec asked;
    memset(&asked, 0, sizeof asked);
    int adds_profiling = queue_properties_with_profiling(properties, merged, &asked);
    cl_command_queue queue = NULL;
    if (adds_profiling)
        queue = dt_cl_target.clCreateCommandQueueWithProperties(context, device, merged, errcode_ret);
    asked.forced = queue != NULL;
    asked.profiled = queue != NULL;
    if (!queue) {
        /* Nothing to add, or the device refused profiling: the program's own list. */
        queue = dt_cl_target.clCreateCommandQueueWithProperties(context, device, properties, errcode_ret);
        asked.profiled = (asked.app_properties & CL_QUEUE_PROFILING_ENABLE) != 0;
        asked.array_mode = DT_CL_ARRAY_ASK_DRIVER;
    }
    if (recording)
        call_end(&call, DT_CL_FN_clCreateCommandQueueWithProperties, *errcode_ret, 0);
    if (queue)
        dt_cl_queue_created(queue, context, device, &asked);
    return queue;
}

/* CL_QUEUE_PROPERTIES_ARRAY of a queue the layer added profiling to: the program's list
 * (the driver is asked first, so a driver without the query still says so). */
static cl_int answer_properties_array(const dt_cl_queue_rec *q, cl_command_queue queue, size_t size, void *value,
                                      size_t *size_ret)
{
    size_t driver_size = 0;
    cl_int status = dt_cl_target.clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES_ARRAY, 0, NULL, &driver_size);
    if (status != CL_SUCCESS)
        return status;
    size_t need = q->array_mode == DT_CL_ARRAY_EMPTY ? 0 : q->app_array_len * sizeof q->app_array[0];
    if (value && size < need)
        return CL_INVALID_VALUE;
    if (value && need)
        memcpy(value, q->app_array, need);
    if (size_ret)
        *size_ret = need;
    return CL_SUCCESS;
}

static cl_int CL_API_CALL wrap_clGetCommandQueueInfo(cl_command_queue command_queue, cl_command_queue_info param_name,
                                                     size_t param_value_size, void *param_value,
                                                     size_t *param_value_size_ret)
{
    dt_cl_call call;
    int recording = call_begin(&call);
    const dt_cl_queue_rec *q = NULL;
    if (param_name == CL_QUEUE_PROPERTIES || param_name == CL_QUEUE_PROPERTIES_ARRAY)
        q = dt_cl_map_find(&dt_cl_queues, command_queue);
    if (q && !q->forced)
        q = NULL; /* the driver's answer is the program's */
    cl_int status;
    if (q && param_name == CL_QUEUE_PROPERTIES_ARRAY && q->array_mode != DT_CL_ARRAY_ASK_DRIVER) {
        status = answer_properties_array(q, command_queue, param_value_size, param_value, param_value_size_ret);
    } else {
        status = dt_cl_target.clGetCommandQueueInfo(command_queue, param_name, param_value_size, param_value,
                                                    param_value_size_ret);
        if (status == CL_SUCCESS && q && param_name == CL_QUEUE_PROPERTIES && param_value)
            memcpy(param_value, &q->app_properties, sizeof q->app_properties);
    }
    if (recording)
        call_end(&call, DT_CL_FN_clGetCommandQueueInfo, status, 0);
    return status;
}

/* OpenCL 1.0's clSetCommandQueueProperty: the program may not turn off the profiling
 * the layer added; it sees the properties it set. */
static cl_int CL_API_CALL wrap_clSetCommandQueueProperty(cl_command_queue command_queue,
                                                         cl_command_queue_properties properties, cl_bool enable,
                                                         cl_command_queue_properties *old_properties)
{
    dt_cl_call call;
    int recording = call_begin(&call);
    const dt_cl_queue_rec *q = dt_cl_map_find(&dt_cl_queues, command_queue);
    int forced = q && q->forced;
    cl_command_queue_properties app_before = forced ? q->app_properties : 0;
    cl_command_queue_properties passed = properties;
    if (forced && !enable)
        passed &= ~(cl_command_queue_properties)CL_QUEUE_PROFILING_ENABLE;
    cl_int status = dt_cl_target.clSetCommandQueueProperty(command_queue, passed, enable, old_properties);
    if (status == CL_SUCCESS && forced) {
        if (old_properties)
            *old_properties = (*old_properties & ~(cl_command_queue_properties)CL_QUEUE_PROFILING_ENABLE) |
                              (app_before & CL_QUEUE_PROFILING_ENABLE);
        dt_cl_queue_set_app_properties(command_queue, enable ? app_before | properties : app_before & ~properties);
    }
    if (recording)
        call_end(&call, DT_CL_FN_clSetCommandQueueProperty, status, 0);
    return status;
}

static cl_kernel CL_API_CALL wrap_clCreateKernel(cl_program program, const char *kernel_name, cl_int *errcode_ret)
{
    dt_cl_call call;
    int recording = call_begin(&call);
    cl_int own_status = CL_SUCCESS;
    if (!errcode_ret)
        errcode_ret = &own_status;
    cl_kernel kernel = dt_cl_target.clCreateKernel(program, kernel_name, errcode_ret);
    if (recording)
        call_end(&call, DT_CL_FN_clCreateKernel, *errcode_ret, 0);
    if (kernel)
        dt_cl_kernel_created(kernel, kernel_name);
    return kernel;
}

static cl_int CL_API_CALL wrap_clCreateKernelsInProgram(cl_program program, cl_uint num_kernels, cl_kernel *kernels,
                                                        cl_uint *num_kernels_ret)
{
    dt_cl_call call;
    int recording = call_begin(&call);
    cl_uint own_count = 0;
    if (!num_kernels_ret)
        num_kernels_ret = &own_count;
    cl_int status = dt_cl_target.clCreateKernelsInProgram(program, num_kernels, kernels, num_kernels_ret);
    if (recording)
        call_end(&call, DT_CL_FN_clCreateKernelsInProgram, status, 0);
    if (status == CL_SUCCESS && kernels)
        for (cl_uint i = 0; i < num_kernels && i < *num_kernels_ret; i++)
            dt_cl_kernel_created(kernels[i], NULL);
    return status;
}

static cl_kernel CL_API_CALL wrap_clCloneKernel(cl_kernel source_kernel, cl_int *errcode_ret)
{
    dt_cl_call call;
    int recording = call_begin(&call);
    cl_int own_status = CL_SUCCESS;
    if (!errcode_ret)
        errcode_ret = &own_status;
    cl_kernel kernel = dt_cl_target.clCloneKernel(source_kernel, errcode_ret);
    if (recording)
        call_end(&call, DT_CL_FN_clCloneKernel, *errcode_ret, 0);
    if (kernel)
        dt_cl_kernel_cloned(kernel, source_kernel);
    return kernel;
}

/* Recorded like any call returning a status; the sizes of __local arguments are followed
 * whether or not a session records (a launch inside one may use arguments set before). */
static cl_int CL_API_CALL wrap_clSetKernelArg(cl_kernel kernel, cl_uint arg_index, size_t arg_size,
                                              const void *arg_value)
{
    dt_cl_call call;
    int recording = call_begin(&call);
    cl_int status = dt_cl_target.clSetKernelArg(kernel, arg_index, arg_size, arg_value);
    if (recording)
        call_end(&call, DT_CL_FN_clSetKernelArg, status, 0);
    if (status == CL_SUCCESS)
        dt_cl_kernel_arg_set(kernel, arg_index, arg_size, arg_value);
    return status;
}

/* ------------------------------------------------------------------ the layer's entry points */

static void install_wrappers(void)
{
#define DT_CL_INSTALL(ret, name, ...) \
    if (dt_cl_target.name)            \
        layer_dispatch.name = wrap_##name;
    DT_CL_API_ALL(DT_CL_INSTALL)
#undef DT_CL_INSTALL
}

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
    layer_dispatch = dt_cl_target; /* every entry passes through ... */
    install_wrappers();            /* ... but those the layer wraps */
    atomic_store(&layer_ready, 1);
    *num_entries_ret = layer_entries;
    *layer_dispatch_ret = &layer_dispatch;
    /* Under devtrace record, the collector starts its session now (no OpenCL call). */
    if (dt_collector_autostart)
        dt_collector_autostart("opencl");
    return CL_SUCCESS;
}

/* ------------------------------------------------------------------ sessions */

static void publish_device(dt_cl_recording *r, int index)
{
    const dt_cl_device *d = dt_cl_device_at(index);
    if (!d)
        return;
    dt_add_device(r->session, &d->props);
    if (d->has_host_timer) /* a sample taken at the check: one more point for the map */
        dt_add_clock_sample(r->session, d->clock_sample.vendor_ns, d->clock_sample.host_ns);
}

void dt_cl_device_registered(int index)
{
    dt_cl_call call;
    if (!call_begin(&call))
        return;
    dt_cl_thread *t = section_enter(&call);
    if (!t)
        return;
    publish_device(call.rec, index);
    dt_cl_guard_exit(t);
}

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
    add_clock_sample(r);
    atomic_store(&dt_cl_recording_now, r);
    /* After the store: a device registered from now on publishes itself. */
    for (int i = 0; i < dt_cl_device_count(); i++)
        publish_device(r, i);
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
    if (list->n == list->cap) {
        size_t cap = list->cap ? list->cap * 2 : 16;
        cl_command_queue *items = realloc(list->items, cap * sizeof *items);
        if (!items)
            return;
        list->items = items;
        list->cap = cap;
    }
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
    atomic_store(&dt_cl_recording_now, NULL);
    dt_cl_guards_drain(); /* from here on, no thread adds or resolves */
    uint64_t timeout_ms = stop_timeout_ms(s);
    if (atomic_load(&layer_ready)) {
        flush_live_queues();
        dt_cl_pending_resolve_all(r, timeout_ms * 1000000u);
    }
    add_clock_sample(r);
    add_device_clock_notes(r);
    add_loss_notes(r, timeout_ms);
    if (!atomic_load(&layer_ready))
        dt_add_note(s, "the OpenCL loader never loaded the devtrace layer: nothing was traced; set "
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

static void opencl_close(dt_session *s, void *state)
{
    if (state && atomic_load(&dt_cl_recording_now) == state)
        opencl_stop(s, state);
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
    .open = opencl_open,
    .start = opencl_start,
    .stop = opencl_stop,
    .close = opencl_close,
    .pending_events = opencl_pending_events,
};

#endif /* __has_include(<CL/cl_layer.h>) */
