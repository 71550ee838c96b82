/* opencl_layer.h: what the parts of the OpenCL backend share (opencl.c, opencl_wrappers.c,
 * opencl_describe.c, opencl_objects.c, opencl_pending.c). Not a public header and not for other backends.
 *
 * The backend is an OpenCL ICD loader layer: the loader (ocl-icd, or the Khronos
 * loader) finds libdevtrace.so through $OPENCL_LAYERS, calls clInitLayer with its own
 * dispatch table (the "target"), and from then on sends every OpenCL call the program
 * makes through the layer's dispatch table. The layer's wrappers call the target, and
 * while a session records, each call becomes a runtime event and each enqueue of device
 * work a device event read from the command's profiling information.
 *
 * Process-wide state (lives as long as the process, across sessions): the target
 * dispatch, the records of devices, contexts, queues and kernels, the per-thread records
 * of pending device events. Per-session state: dt_cl_recording (the backend state). */
#ifndef DT_OPENCL_LAYER_H
#define DT_OPENCL_LAYER_H

#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_0_APIS
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_2_0_APIS

#include <CL/cl_layer.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "core/session.h"
#include "opencl_api.h"

/* One index per wrapped function: the runtime event's name is api_name[index]. */
typedef enum dt_cl_fn {
#define DT_CL_FN_ENUM(ret, name, ...) DT_CL_FN_##name,
    DT_CL_API_ALL(DT_CL_FN_ENUM)
#undef DT_CL_FN_ENUM
        DT_CL_FN_COUNT
} dt_cl_fn;

/* The backend's host clock: CLOCK_MONOTONIC_RAW, the clock PoCL stamps its profiling
 * times with on Linux (pocl_gettimemono_ns), so that runtime and device events share one
 * clock domain and one clock map (samples pair it with CLOCK_REALTIME). */
static inline uint64_t dt_cl_host_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The backend state of one session (allocated zeroed by the core). While it records,
 * dt_cl_recording_now points to it; the wrappers read that pointer once per call. */
typedef struct dt_cl_recording {
    dt_session *session; /* borrowed */
    uint32_t pid;
    uint32_t api_name[DT_CL_FN_COUNT]; /* interned at open */
    /* Device events that could not be recorded, by cause (also counted in the session's
     * dropped_vendor / dropped_pool_full; these feed the notes written at stop). */
    _Atomic uint64_t failed_commands;      /* the command ended with an error status */
    _Atomic uint64_t unreadable_times;     /* clGetEventProfilingInfo/clGetEventInfo failed */
    _Atomic uint64_t unprofiled_enqueues;  /* the queue has no profiling, or could not be queried */
    _Atomic uint64_t incomplete_at_stop;   /* not complete when the stop deadline passed */
    _Atomic uint64_t no_memory;            /* no memory for the pending record */
    _Atomic uint64_t last_sample_ns;       /* host clock of the last clock sample */
    _Atomic uint64_t calls_while_stopping; /* calls made while the stop ran: not recorded (a note) */
    int ticks; /* calls are stamped with TSC ticks (DT_EVENT_TICKS), not the host clock (hostclock.h) */
} dt_cl_recording;

/* A call's start on the recording's clock: TSC ticks, else the host clock. */
static inline uint64_t dt_cl_stamp(const dt_cl_recording *r)
{
    return r->ticks ? dt_tsc_read() : dt_cl_host_ns();
}

/* A call's end: the same, with the periodic tick sample when due. */
static inline uint64_t dt_cl_stamp_end(const dt_cl_recording *r)
{
    return r->ticks ? dt_ticks_stamp(r->session) : dt_cl_host_ns();
}

/* The loader's dispatch table as clInitLayer received it (entries past the loader's
 * count are NULL): every wrapper calls through it, and so does the layer itself. */
extern cl_icd_dispatch dt_cl_target;
/* The recording session's backend state, or NULL: the wrappers' one load and branch. */
extern dt_cl_recording *_Atomic dt_cl_recording_now;
/* The recording whose stop is running (it reads back what was enqueued before), or NULL:
 * the calls made meanwhile are counted in its calls_while_stopping. */
extern dt_cl_recording *_Atomic dt_cl_recording_stopping;

/* ------------------------------------------------------------ opencl_wrappers.c */

/* Puts the layer's wrapper in layer for every function of opencl_api.h the target has. */
void dt_cl_install_wrappers(cl_icd_dispatch *layer);
/* Adds the device at index (discovery order) to the recording's session, with the clock
 * sample its timer check took. */
void dt_cl_publish_device(dt_cl_recording *r, int index);
/* Pairs the host clock with CLOCK_REALTIME (the middle of two host readings). */
void dt_cl_add_clock_sample(dt_cl_recording *r);

/* ------------------------------------------------------------ opencl_objects.c */

/* A map from an OpenCL handle to a fixed-size record. Lookups are lock-free (the
 * enqueue path); inserts and reference-count changes take the map's mutex (object
 * creation, retain, release). A slot is reused when the program has released its
 * object (its reference count, as seen through retain/release, reached 0). */
typedef struct dt_cl_slot {
    const void *_Atomic key; /* NULL: never used */
    _Atomic int live;        /* the program still holds the object */
    int refs;                /* the program's references (map lock) */
    void *record;            /* owned; overwritten when the slot is reused */
} dt_cl_slot;

typedef struct dt_cl_map {
    const char *what; /* "queue", "kernel", "context": for notes */
    size_t record_size;
    size_t capacity;           /* a power of two */
    dt_cl_slot *_Atomic slots; /* allocated on the first insert */
    pthread_mutex_t lock;
    _Atomic uint64_t refused; /* inserts refused: the map is full or out of memory */
} dt_cl_map;

/* A device the layer has seen; its index (discovery order) is the trace's device id.
 *
 * Its timer against the backend's host clock (dt_cl_host_ns): with clGetDeviceAndHostTimer
 * (OpenCL 2.1) a measured offset; without it (PoCL), checked on every completed command:
 * a command's QUEUED time is taken during its enqueue call, so each command bounds the
 * offset to [call start - QUEUED, call end - QUEUED]. The offset is 0 while 0 fits every
 * such interval (the device uses the host clock: PoCL does; a QUEUED stamped shortly
 * after the call still fits), else the largest lower bound (device work never starts
 * before its enqueue call). */
typedef struct dt_cl_device {
    cl_device_id handle;
    dt_device_props props;
    int has_host_timer;           /* clGetDeviceAndHostTimer gave the offset below */
    int64_t host_timer_offset_ns; /* device timestamp + this = host clock ns */
    dt_clock_sample clock_sample; /* host clock ns, CLOCK_REALTIME ns at that check */
    _Atomic int64_t queued_lo_ns; /* largest call start - QUEUED seen */
    _Atomic int64_t queued_hi_ns; /* smallest call end - QUEUED seen */
    _Atomic uint64_t commands_checked;
} dt_cl_device;

#define DT_CL_QUEUE_ARRAY_MAX 32 /* properties entries kept to answer CL_QUEUE_PROPERTIES_ARRAY */

typedef enum dt_cl_array_mode {
    DT_CL_ARRAY_ASK_DRIVER = 0, /* the driver's answer is the program's (nothing was added) */
    DT_CL_ARRAY_EMPTY = 1,      /* the program passed NULL properties: size 0 */
    DT_CL_ARRAY_COPY = 2        /* answer from app_array */
} dt_cl_array_mode;

typedef struct dt_cl_queue_rec {
    uint32_t id;           /* the trace's stream: 1, 2, ... in creation order */
    uint32_t device_index; /* the trace's device id */
    uint32_t context_id;
    uint8_t profiled;                           /* CL_QUEUE_PROFILING_ENABLE is on: device events can be read */
    uint8_t forced;                             /* the layer added CL_QUEUE_PROFILING_ENABLE */
    uint8_t array_mode;                         /* dt_cl_array_mode */
    cl_command_queue_properties app_properties; /* what the program asked for */
    size_t app_array_len;                       /* entries, terminating 0 included */
    cl_queue_properties app_array[DT_CL_QUEUE_ARRAY_MAX];
} dt_cl_queue_rec;

#define DT_CL_LOCAL_ARGS_MAX 32 /* __local arguments followed per kernel: indices 0 to 31 */

/* A kernel: its name, and its shared (local) memory, the trace's "shared memory": the
 * static part is CL_KERNEL_LOCAL_MEM_SIZE asked when the kernel was created, before any
 * argument was set (its __local variables and what the implementation needs), for the
 * first device of its program; the dynamic part is the sizes its __local arguments were
 * given (clSetKernelArg(kernel, i, size, NULL)). Argument sizes are written by
 * clSetKernelArg and read at each launch: atomics, each on its own. */
typedef struct dt_cl_kernel_rec {
    const char *name;          /* from dt_cl_pool_name: never freed */
    int local_mem_device;      /* the device index static_local_mem is for; -1: not known */
    uint32_t static_local_mem; /* bytes */
    _Atomic uint32_t local_arg_bytes[DT_CL_LOCAL_ARGS_MAX];
    _Atomic uint32_t local_args_total;  /* the sum of local_arg_bytes */
    _Atomic uint8_t local_args_unknown; /* a __local argument past DT_CL_LOCAL_ARGS_MAX was set */
} dt_cl_kernel_rec;

typedef struct dt_cl_context_rec {
    uint32_t id; /* 1, 2, ... in creation order */
} dt_cl_context_rec;

extern dt_cl_map dt_cl_contexts, dt_cl_queues, dt_cl_kernels;

const void *dt_cl_map_find(dt_cl_map *m, const void *key);
int dt_cl_map_put(dt_cl_map *m, const void *key, const void *record);
/* An object the layer learns on first sight (it did not see it created), from any thread:
 * the record is inserted unless the key has a live one already (another thread learnt it
 * first), which is kept as it is. The record stored, or NULL when the map refused. */
const void *dt_cl_map_learn(dt_cl_map *m, const void *key, const void *record);
void dt_cl_map_refcount(dt_cl_map *m, const void *key, int delta);
/* Calls fn(key, user) for every live entry, with the map's mutex held (so the program
 * cannot drop its last reference meanwhile). */
void dt_cl_map_each_live(dt_cl_map *m, void (*fn)(const void *key, void *user), void *user);

/* The index of a device, registering it (properties and clock check through the
 * target) on first sight; -1 when the table is full. Thread-safe. */
int dt_cl_device_index(cl_device_id device);
int dt_cl_device_count(void);
const dt_cl_device *dt_cl_device_at(int index);
/* The offset to add to a completed command's device timestamps (see dt_cl_device),
 * learning from its QUEUED time (has_queued) and its enqueue call's host interval. */
int64_t dt_cl_device_clock_offset(int index, int has_queued, uint64_t queued_ns, uint64_t call_start_ns,
                                  uint64_t call_end_ns);
/* A cheaper check for the common case: 1 when a command whose (call start - QUEUED, call
 * end - QUEUED) are within margin_ns of (lo_ns, hi_ns) cannot move the device's bounds
 * (both strictly inside them by more than margin_ns; never for a device with a host
 * timer): then dt_cl_device_clock_offset_counted counts it as checked and returns the
 * offset dt_cl_device_clock_offset would have, with no exact stamps needed. */
int dt_cl_device_clock_settled(int index, int64_t lo_ns, int64_t hi_ns, int64_t margin_ns);
int64_t dt_cl_device_clock_offset_counted(int index);
/* One line on how the device's timestamps were put on the host clock. */
void dt_cl_device_clock_note(int index, char *out, size_t cap);

/* The id of a context, registering it (and the devices given, or its own) on first sight. */
uint32_t dt_cl_context_learn(cl_context context, cl_uint num_devices, const cl_device_id *devices);

/* Records a queue the program just created through the layer. */
void dt_cl_queue_created(cl_command_queue queue, cl_context context, cl_device_id device, const dt_cl_queue_rec *asked);
/* The record of a queue; a queue the layer has not seen created is learnt through the
 * target. NULL only when the queue cannot be queried or the map refuses it. */
const dt_cl_queue_rec *dt_cl_queue_get(cl_command_queue queue);
/* clSetCommandQueueProperty: the properties the program now believes the queue has. */
void dt_cl_queue_set_app_properties(cl_command_queue queue, cl_command_queue_properties props);

/* Records a kernel the program created: its function name (queried through the target;
 * fallback when that fails) and its static local memory. */
void dt_cl_kernel_created(cl_kernel kernel, const char *fallback_name);
/* clCloneKernel: the copy has the source's name, local memory and argument values. */
void dt_cl_kernel_cloned(cl_kernel kernel, cl_kernel source);
/* A successful clSetKernelArg: a NULL value with a size sets a __local argument's size. */
void dt_cl_kernel_arg_set(cl_kernel kernel, cl_uint index, size_t size, const void *value);
/* The kernel's record, learnt through the target if the layer did not see it created
 * (then into *scratch when the map is full, and with no local memory known). */
const dt_cl_kernel_rec *dt_cl_kernel_get(cl_kernel kernel, dt_cl_kernel_rec *scratch);

/* In a forked child: the mutexes here may have been held by a thread of the parent. */
void dt_cl_objects_after_fork(void);

/* A copy of s that lives as long as the process: one per distinct string. */
const char *dt_cl_pool_name(const char *s);

/* Called when a device is registered: adds it to the recording session, if any
 * (opencl_wrappers.c). */
void dt_cl_device_registered(int index);

/* ------------------------------------------------------------ opencl_describe.c */

#define DT_CL_UNPAREN(...) __VA_ARGS__

/* An enqueue of device work, described before the call. */
typedef struct dt_cl_enqueue {
    devtrace_event device;   /* kind and per-kind fields; ids and times come later */
    const char *kernel_name; /* kernels: a pooled name */
    int local_mem_device;    /* kernels: the device index the shared memory in device is for; -1: none */
    int blocking;            /* the call waits for the command */
    const dt_cl_queue_rec *queue;
    cl_event *app_event; /* what the program passed */
    cl_event own_event;  /* the layer's event when the program passed NULL */
} dt_cl_enqueue;

/* What each enqueue of the ENQUEUE list is: kind, sizes, direction, kernel name and
 * launch shape. Same parameters as the OpenCL function (checked against the table). */
#define DT_CL_DECLARE_DESCRIBE(ret, name, params, args) \
    void dt_cl_describe_##name(dt_cl_enqueue *e, DT_CL_UNPAREN params);
DT_CL_API_ENQUEUE(DT_CL_DECLARE_DESCRIBE)
#undef DT_CL_DECLARE_DESCRIBE

/* ------------------------------------------------------------ opencl_pending.c */

typedef struct dt_cl_thread dt_cl_thread;

/* Correlation ids: each thread takes a block of this many from the process-wide counter
 * (one atomic add per block instead of one per call); ids are unique, not dense. */
#define DT_CL_CORRELATION_BLOCK 1024u
uint64_t dt_cl_next_correlation(dt_cl_thread *t);
/* The calling thread's store cursor for st (t: dt_cl_thread_self()), kept across calls. */
dt_store_cursor *dt_cl_thread_cursor(dt_cl_thread *t, dt_store *st);
/* The id of a kernel name from dt_cl_pool_name (one copy per distinct string, never
 * freed) in session s: the thread's last one kept, else interned. */
uint32_t dt_cl_kernel_name_id(dt_cl_thread *t, dt_session *s, const char *pooled_name);
/* The thread's id (dt_thread_id), kept in its record. */
uint32_t dt_cl_thread_id(dt_cl_thread *t);

/* This thread's record, created (or adopted from an exited thread) on first use; NULL
 * only when out of memory. */
dt_cl_thread *dt_cl_thread_self(void);
/* A recording section: between enter and exit, stop waits before it touches pending
 * events or lets the session go. */
void dt_cl_guard_enter(dt_cl_thread *t);
void dt_cl_guard_exit(dt_cl_thread *t);
/* Waits until no other thread is inside a recording section. */
void dt_cl_guards_drain(void);

/* Keeps a device event until its command completes. event: the command's event, one
 * reference owned by the layer (retain = 1 takes one first: the program's event).
 * in_order_queue: the queue's record when the queue is in order, else NULL (a poll skips
 * the commands queued after one still running there).
 * device: the device event but for its times (its device field: the device index).
 * call_*: the enqueue call's interval as stamped (dt_cl_stamp: ticks or the host clock; checks the device's timer). Returns 0, or -1 (out of memory or
 * the retain failed: nothing kept, the caller still owns what it owned). */
int dt_cl_pending_add(dt_cl_thread *t, cl_event event, int retain, const void *in_order_queue,
                      const devtrace_event *device, uint64_t call_start_ns, uint64_t call_end_ns);
/* Emits the device events of this thread's completed commands; never waits. */
void dt_cl_pending_poll(dt_cl_thread *t, dt_cl_recording *r);
/* Whether this thread has enough pending events to poll now (amortised: the threshold
 * doubles with what stays pending). */
int dt_cl_pending_due(const dt_cl_thread *t);
/* An enqueue on a queue without profiling (no device event), counted in the thread's
 * record: no shared counter written per launch. */
void dt_cl_count_unprofiled(dt_cl_thread *t);
/* Those counts of every thread (any thread, a reading). */
uint64_t dt_cl_unprofiled_count(void);
/* At stop, when no thread can add: the counts of every thread, cleared. */
uint64_t dt_cl_unprofiled_take(void);
/* Device events of every thread waiting for their command to complete (any thread, a reading). */
uint64_t dt_cl_pending_count(void);
/* At stop, when no thread can add: waits (up to timeout_ns) for every thread's pending
 * commands and emits them; what is still incomplete then is counted and released. */
void dt_cl_pending_resolve_all(dt_cl_recording *r, uint64_t timeout_ns);
/* In a forked child: forget the parent's threads and their pending events. */
void dt_cl_threads_forget_after_fork(void);

#endif
