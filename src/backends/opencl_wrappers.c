/* opencl_wrappers.c: the OpenCL layer's wrappers (see opencl_layer.h): what one call
 * records, and the wrapper of every function of opencl_api.h.
 *
 * A wrapper reads the recording pointer once; when no session records it calls the
 * target and returns (one atomic load and a branch). While one records: the call's start
 * and end stamps (dt_cl_stamp: TSC ticks or the host clock), its runtime event (name,
 * correlation, the thread's external id, the status) written in place in the thread's
 * chunk, and for an enqueue of device work the device event, kept with the command's
 * event until it completes (opencl_pending.c). Most wrappers are generated from the
 * lists of opencl_api.h; those that change what they pass down (queues with profiling
 * added, the properties the program asked for) or learn objects are written by hand.
 * Part of the OpenCL backend: compiled beside opencl.c, with the OpenCL headers. */
#if __has_include(<CL/cl_layer.h>) /* else the backend is opencl.c's stub alone */

#include <string.h>

#include "opencl_layer.h"

#define DT_CL_SAMPLE_INTERVAL_NS 1000000000ull /* clock samples while recording, at most */

/* ------------------------------------------------------------------ one call */

typedef struct dt_cl_call {
    dt_cl_recording *rec; /* the recording when the call began; NULL: not recording */
    uint64_t start_ns;
} dt_cl_call;

typedef struct dt_cl_external {
    int has, has_user;
    uint64_t id, user_id; /* the op's, and the user correlation's */
} dt_cl_external;

static inline int call_begin(dt_cl_call *c)
{
    c->rec = atomic_load_explicit(&dt_cl_recording_now, memory_order_acquire);
    if (__builtin_expect(c->rec == NULL, 1)) {
        dt_cl_recording *stopping = atomic_load_explicit(&dt_cl_recording_stopping, memory_order_relaxed);
        if (__builtin_expect(stopping != NULL, 0))
            atomic_fetch_add_explicit(&stopping->calls_while_stopping, 1, memory_order_relaxed);
        return 0;
    }
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
        atomic_fetch_add_explicit(&c->rec->calls_while_stopping, 1, memory_order_relaxed); /* ended as it stopped */
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
    ext->has_user = dt_current_user_external_in(&dt__external_stack, r->session, &ext->user_id);
    dt_store_cursor *cur = dt_cl_thread_cursor(t, &r->session->store);
    devtrace_event *ev = dt_store_cursor_next(cur, &r->session->store); /* written in place */
    if (!ev) {
        dt_store_cursor_drop(cur); /* the store is at its bound */
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
    if (ext->has_user) {
        ev->flags |= DEVTRACE_EVENT_HAS_USER_EXTERNAL;
        ev->user_external_id = ext->user_id;
    }
    dt_store_cursor_commit(cur);
    return correlation;
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
        dt_cl_add_clock_sample(r);
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
        dt_cl_count_unprofiled(t); /* added to the recording's counts at stop */
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
    if (ext->has_user) {
        d->flags |= DEVTRACE_EVENT_HAS_USER_EXTERNAL;
        d->user_external_id = ext->user_id;
    }
    if (e->kernel_name)
        d->name_id = dt_cl_kernel_name_id(t, r->session, e->kernel_name);
    if (e->local_mem_device >= 0 && (uint32_t)e->local_mem_device == q->device_index)
        d->flags |= DEVTRACE_EVENT_HAS_SHARED; /* known for the device the launch ran on */
    else
        d->u.kernel.static_shared = d->u.kernel.dynamic_shared = 0;
    const void *in_order = (q->app_properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) ? NULL : q;
    if (dt_cl_pending_add(t, event, e->app_event != NULL, in_order, d, c->start_ns, call_end_ns) != 0) {
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

/* The calls after which the platform may have installed signal handlers over the
 * collector's crash handlers: PoCL's LLVM installs its own when the platform starts
 * (clGetPlatformIDs, clGetDeviceIDs, a context) and a compiler may at a build. The
 * collector puts its own back on top at once (dt_collector_keep_handlers), so that a crash
 * right after one still ships what was captured; a constant test: other calls pay nothing. */
#define DT_CL_MAY_INSTALL_HANDLERS(fn)                                                                          \
    ((fn) == DT_CL_FN_clGetPlatformIDs || (fn) == DT_CL_FN_clGetDeviceIDs || (fn) == DT_CL_FN_clBuildProgram || \
     (fn) == DT_CL_FN_clCompileProgram || (fn) == DT_CL_FN_clLinkProgram ||                                     \
     (fn) == DT_CL_FN_clCreateProgramWithSource || (fn) == DT_CL_FN_clCreateProgramWithBinary ||                \
     (fn) == DT_CL_FN_clCreateProgramWithIL || (fn) == DT_CL_FN_clCreateProgramWithBuiltInKernels)

static void keep_crash_handlers(void)
{
    dt_core_keep_handlers(); /* the collector's, through the core's hooks */
}

/* Returns a cl_int status; waits_for_device: 1 for the SYNC list. */
#define DT_CL_DEFINE_STATUS(ret, name, params, args, waits_for_device)  \
    static ret CL_API_CALL wrap_##name params                           \
    {                                                                   \
        dt_cl_call call;                                                \
        int recording = call_begin(&call);                              \
        ret status = dt_cl_target.name args;                            \
        if (DT_CL_MAY_INSTALL_HANDLERS(DT_CL_FN_##name))                \
            keep_crash_handlers();                                      \
        if (recording)                                                  \
            call_end(&call, DT_CL_FN_##name, status, waits_for_device); \
        return status;                                                  \
    }
#define DT_CL_DEFINE_RC(ret, name, params, args) DT_CL_DEFINE_STATUS(ret, name, params, args, 0)
#define DT_CL_DEFINE_SYNC(ret, name, params, args) DT_CL_DEFINE_STATUS(ret, name, params, args, 1)

/* Returns an object; the status is *errcode_ret (the wrapper's own when NULL was passed). */
#define DT_CL_DEFINE_OBJ(ret, name, params, args)            \
    static ret CL_API_CALL wrap_##name params                \
    {                                                        \
        dt_cl_call call;                                     \
        if (!call_begin(&call)) {                            \
            ret result = dt_cl_target.name args;             \
            if (DT_CL_MAY_INSTALL_HANDLERS(DT_CL_FN_##name)) \
                keep_crash_handlers();                       \
            return result;                                   \
        }                                                    \
        cl_int own_status = CL_SUCCESS;                      \
        if (!errcode_ret)                                    \
            errcode_ret = &own_status;                       \
        ret result = dt_cl_target.name args;                 \
        if (DT_CL_MAY_INSTALL_HANDLERS(DT_CL_FN_##name))     \
            keep_crash_handlers();                           \
        call_end(&call, DT_CL_FN_##name, *errcode_ret, 0);   \
        return result;                                       \
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

/* The end of a context's creation (either call): the call recorded when it began
 * recording, the context learnt with its devices (none given: the context's own). */
static cl_context context_created(const dt_cl_call *c, int recording, dt_cl_fn fn, cl_int status, cl_context context,
                                  cl_uint num_devices, const cl_device_id *devices)
{
    if (recording)
        call_end(c, fn, status, 0);
    if (context)
        dt_cl_context_learn(context, num_devices, devices);
    return context;
}

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
    keep_crash_handlers();
    return context_created(&call, recording, DT_CL_FN_clCreateContext, *errcode_ret, context, num_devices, devices);
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
    keep_crash_handlers();
    return context_created(&call, recording, DT_CL_FN_clCreateContextFromType, *errcode_ret, context, 0, NULL);
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
    keep_crash_handlers(); /* a platform may compile the kernel now */
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
    keep_crash_handlers();
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

/* ------------------------------------------------------------------ the dispatch table */

void dt_cl_install_wrappers(cl_icd_dispatch *layer)
{
#define DT_CL_INSTALL(ret, name, ...) \
    if (dt_cl_target.name)            \
        layer->name = wrap_##name;
    DT_CL_API_ALL(DT_CL_INSTALL)
#undef DT_CL_INSTALL
}

/* ------------------------------------------------------------------ devices seen while recording */

void dt_cl_publish_device(dt_cl_recording *r, int index)
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
    dt_cl_publish_device(call.rec, index);
    dt_cl_guard_exit(t);
}

#endif /* __has_include(<CL/cl_layer.h>) */
