/* opencl_objects.c: what the OpenCL layer remembers about the program's objects:
 * devices (trace index, properties, device timer against the host clock), contexts and queues (the small
 * ids that become the trace's context and stream), the queue properties the program
 * asked for (so its queries see them, not the profiling flag the layer added), and kernel
 * function names.
 *
 * Part of the OpenCL backend: compiled on its own, with the OpenCL headers (the build compiles every
 * backends/opencl_*.c beside opencl.c). Everything here goes through the target dispatch (dt_cl_target),
 * never through the loader, and never runs inside clInitLayer. Lookups on the enqueue
 * path are lock-free; records are written under a mutex when objects are created,
 * retained or released. */
#if __has_include(<CL/cl_layer.h>) /* else the backend is opencl.c's stub alone */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opencl_layer.h"

#define DT_CL_QUEUES_CAPACITY 4096u
#define DT_CL_KERNELS_CAPACITY 65536u
#define DT_CL_CONTEXTS_CAPACITY 1024u
#define DT_CL_QUEUED_LATE_NS 10000000 /* a QUEUED time this long after its call still fits the host clock */

dt_cl_map dt_cl_contexts = {"context", sizeof(dt_cl_context_rec), DT_CL_CONTEXTS_CAPACITY,
                            NULL,      PTHREAD_MUTEX_INITIALIZER, 0};
dt_cl_map dt_cl_queues = {"queue", sizeof(dt_cl_queue_rec), DT_CL_QUEUES_CAPACITY, NULL, PTHREAD_MUTEX_INITIALIZER, 0};
dt_cl_map dt_cl_kernels = {"kernel", sizeof(dt_cl_kernel_rec),  DT_CL_KERNELS_CAPACITY,
                           NULL,     PTHREAD_MUTEX_INITIALIZER, 0};

static _Atomic uint32_t next_context_id = 1;
static _Atomic uint32_t next_queue_id = 1;

/* ------------------------------------------------------------------ handle maps */

static size_t handle_hash(const void *key, size_t mask)
{
    uint64_t h = (uint64_t)(uintptr_t)key >> 4;
    return (size_t)((h * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

const void *dt_cl_map_find(dt_cl_map *m, const void *key)
{
    dt_cl_slot *slots = atomic_load_explicit(&m->slots, memory_order_acquire);
    if (!slots || !key)
        return NULL;
    size_t mask = m->capacity - 1;
    size_t i = handle_hash(key, mask);
    for (size_t probes = 0; probes < m->capacity; probes++, i = (i + 1) & mask) {
        const void *k = atomic_load_explicit(&slots[i].key, memory_order_acquire);
        if (k == key)
            return atomic_load_explicit(&slots[i].live, memory_order_acquire) ? slots[i].record : NULL;
        if (!k)
            return NULL;
    }
    return NULL;
}

/* The slot holding key, or NULL (map lock held). */
static dt_cl_slot *slot_of(dt_cl_map *m, dt_cl_slot *slots, const void *key)
{
    size_t mask = m->capacity - 1;
    size_t i = handle_hash(key, mask);
    for (size_t probes = 0; probes < m->capacity; probes++, i = (i + 1) & mask) {
        const void *k = atomic_load_explicit(&slots[i].key, memory_order_relaxed);
        if (k == key)
            return &slots[i];
        if (!k)
            return NULL;
    }
    return NULL;
}

/* Where key goes (map lock held): its own slot, else the first released or empty one. */
static dt_cl_slot *slot_for_insert(dt_cl_map *m, dt_cl_slot *slots, const void *key)
{
    dt_cl_slot *own = slot_of(m, slots, key);
    if (own)
        return own;
    size_t mask = m->capacity - 1;
    size_t i = handle_hash(key, mask);
    for (size_t probes = 0; probes < m->capacity; probes++, i = (i + 1) & mask) {
        if (!atomic_load_explicit(&slots[i].key, memory_order_relaxed) ||
            !atomic_load_explicit(&slots[i].live, memory_order_relaxed))
            return &slots[i];
    }
    return NULL;
}

static dt_cl_slot *map_slots(dt_cl_map *m)
{
    dt_cl_slot *slots = atomic_load_explicit(&m->slots, memory_order_relaxed);
    if (!slots) {
        slots = calloc(m->capacity, sizeof *slots);
        atomic_store_explicit(&m->slots, slots, memory_order_release);
    }
    return slots;
}

/* Inserts or overwrites key's record; with keep_live, a record the key has that is still
 * live is kept as it is (another thread learnt the object first). The record now stored,
 * or NULL when the map refused. */
static const void *map_insert(dt_cl_map *m, const void *key, const void *record, int keep_live)
{
    const void *stored = NULL;
    pthread_mutex_lock(&m->lock);
    dt_cl_slot *slots = map_slots(m);
    dt_cl_slot *slot = slots ? slot_for_insert(m, slots, key) : NULL;
    if (keep_live && slot && atomic_load_explicit(&slot->key, memory_order_relaxed) == key &&
        atomic_load_explicit(&slot->live, memory_order_relaxed)) {
        stored = slot->record;
        goto end;
    }
    if (slot && !slot->record)
        slot->record = malloc(m->record_size);
    if (!slot || !slot->record) {
        atomic_fetch_add(&m->refused, 1);
        goto end;
    }
    memcpy(slot->record, record, m->record_size);
    slot->refs = 1;
    atomic_store_explicit(&slot->live, 1, memory_order_release);
    atomic_store_explicit(&slot->key, key, memory_order_release);
    stored = slot->record;
end:
    pthread_mutex_unlock(&m->lock);
    return stored;
}

int dt_cl_map_put(dt_cl_map *m, const void *key, const void *record)
{
    return map_insert(m, key, record, 0) ? 0 : -1;
}

const void *dt_cl_map_learn(dt_cl_map *m, const void *key, const void *record)
{
    return map_insert(m, key, record, 1);
}

void dt_cl_map_refcount(dt_cl_map *m, const void *key, int delta)
{
    pthread_mutex_lock(&m->lock);
    dt_cl_slot *slots = atomic_load_explicit(&m->slots, memory_order_relaxed);
    dt_cl_slot *slot = slots && key ? slot_of(m, slots, key) : NULL;
    if (slot && atomic_load_explicit(&slot->live, memory_order_relaxed)) {
        slot->refs += delta;
        if (slot->refs <= 0)
            atomic_store_explicit(&slot->live, 0, memory_order_release);
    }
    pthread_mutex_unlock(&m->lock);
}

void dt_cl_map_each_live(dt_cl_map *m, void (*fn)(const void *key, void *user), void *user)
{
    pthread_mutex_lock(&m->lock);
    dt_cl_slot *slots = atomic_load_explicit(&m->slots, memory_order_relaxed);
    for (size_t i = 0; slots && i < m->capacity; i++) {
        const void *key = atomic_load_explicit(&slots[i].key, memory_order_relaxed);
        if (key && atomic_load_explicit(&slots[i].live, memory_order_relaxed))
            fn(key, user);
    }
    pthread_mutex_unlock(&m->lock);
}

/* ------------------------------------------------------------------ name pool */

static struct {
    pthread_mutex_t lock;
    char **slots; /* open addressing; owned strings, never freed */
    size_t capacity, count;
} name_pool = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};

static size_t string_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (size_t)h;
}

static int name_pool_grow(void)
{
    size_t capacity = name_pool.capacity ? name_pool.capacity * 2 : 256;
    char **slots = calloc(capacity, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < name_pool.capacity; i++) {
        if (!name_pool.slots[i])
            continue;
        size_t j = string_hash(name_pool.slots[i]) & (capacity - 1);
        while (slots[j])
            j = (j + 1) & (capacity - 1);
        slots[j] = name_pool.slots[i];
    }
    free(name_pool.slots);
    name_pool.slots = slots;
    name_pool.capacity = capacity;
    return 0;
}

const char *dt_cl_pool_name(const char *s)
{
    const char *found = NULL;
    pthread_mutex_lock(&name_pool.lock);
    if ((name_pool.count + 1) * 2 > name_pool.capacity && name_pool_grow() != 0)
        goto end;
    size_t mask = name_pool.capacity - 1;
    size_t i = string_hash(s) & mask;
    while (name_pool.slots[i] && strcmp(name_pool.slots[i], s) != 0)
        i = (i + 1) & mask;
    if (!name_pool.slots[i]) {
        name_pool.slots[i] = strdup(s);
        if (name_pool.slots[i])
            name_pool.count++;
    }
    found = name_pool.slots[i];
end:
    pthread_mutex_unlock(&name_pool.lock);
    return found;
}

/* ------------------------------------------------------------------ devices */

static dt_cl_device known_devices[DT_MAX_DEVICES];
static _Atomic int ndevices;
static pthread_mutex_t devices_lock = PTHREAD_MUTEX_INITIALIZER;

int dt_cl_device_count(void)
{
    return atomic_load_explicit(&ndevices, memory_order_acquire);
}

const dt_cl_device *dt_cl_device_at(int index)
{
    return index >= 0 && index < dt_cl_device_count() ? &known_devices[index] : NULL;
}

static int device_find(cl_device_id device)
{
    int n = dt_cl_device_count();
    for (int i = 0; i < n; i++)
        if (known_devices[i].handle == device)
            return i;
    return -1;
}

static cl_ulong device_ulong(cl_device_id device, cl_device_info what)
{
    cl_ulong v = 0;
    if (dt_cl_target.clGetDeviceInfo(device, what, sizeof v, &v, NULL) != CL_SUCCESS)
        return 0;
    return v;
}

static cl_uint device_uint(cl_device_id device, cl_device_info what)
{
    cl_uint v = 0;
    if (dt_cl_target.clGetDeviceInfo(device, what, sizeof v, &v, NULL) != CL_SUCCESS)
        return 0;
    return v;
}

/* The device's name, truncated to fit. */
static void device_query_name(cl_device_id device, int index, char *out, size_t cap)
{
    size_t bytes = 0;
    char *full = NULL;
    if (dt_cl_target.clGetDeviceInfo(device, CL_DEVICE_NAME, 0, NULL, &bytes) == CL_SUCCESS && bytes)
        full = malloc(bytes);
    if (full && dt_cl_target.clGetDeviceInfo(device, CL_DEVICE_NAME, bytes, full, NULL) == CL_SUCCESS) {
        full[bytes - 1] = '\0';
        snprintf(out, cap, "%s", full);
    } else {
        snprintf(out, cap, "OpenCL device %d", index);
    }
    free(full);
}

static int clamp_int(uint64_t v)
{
    return v > INT32_MAX ? INT32_MAX : (int)v;
}

static void device_query_props(cl_device_id device, int index, dt_device_props *p)
{
    memset(p, 0, sizeof *p);
    p->id = index;
    device_query_name(device, index, p->name, sizeof p->name);
    p->total_global_mem = device_ulong(device, CL_DEVICE_GLOBAL_MEM_SIZE);
    size_t max_group = 0;
    if (dt_cl_target.clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof max_group, &max_group, NULL) ==
        CL_SUCCESS)
        p->max_threads_per_block = clamp_int(max_group);
    p->num_sms = clamp_int(device_uint(device, CL_DEVICE_MAX_COMPUTE_UNITS));
    p->smem_per_block = device_ulong(device, CL_DEVICE_LOCAL_MEM_SIZE);
    p->smem_per_sm = p->smem_per_block;
    p->has_occupancy = 0; /* OpenCL has no register, warp or per-SM limits */
}

/* The device timer against the host clock with clGetDeviceAndHostTimer, when the
 * device has it (OpenCL 2.1; PoCL 3.1 answers CL_INVALID_OPERATION). */
static void device_check_host_timer(cl_device_id device, dt_cl_device *d)
{
    cl_ulong device_ts = 0, host_ts = 0;
    atomic_init(&d->queued_lo_ns, INT64_MIN);
    atomic_init(&d->queued_hi_ns, INT64_MAX);
    if (!dt_cl_target.clGetDeviceAndHostTimer)
        return;
    uint64_t h0 = dt_cl_host_ns();
    cl_int rc = dt_cl_target.clGetDeviceAndHostTimer(device, &device_ts, &host_ts);
    uint64_t h1 = dt_cl_host_ns();
    uint64_t realtime = dt_realtime_ns();
    if (rc != CL_SUCCESS || device_ts == 0)
        return;
    /* The host timer is implementation-defined: use it when it reads the host clock,
     * else the middle of the call. */
    uint64_t host = (host_ts + 1000000 >= h0 && host_ts <= h1 + 1000000) ? host_ts : h0 + (h1 - h0) / 2;
    d->has_host_timer = 1;
    d->host_timer_offset_ns = (int64_t)(host - device_ts);
    d->clock_sample = (dt_clock_sample){h0 + (h1 - h0) / 2, realtime};
}

static void atomic_max_i64(_Atomic int64_t *v, int64_t x)
{
    int64_t cur = atomic_load_explicit(v, memory_order_relaxed);
    while (x > cur && !atomic_compare_exchange_weak_explicit(v, &cur, x, memory_order_relaxed, memory_order_relaxed))
        ;
}

static void atomic_min_i64(_Atomic int64_t *v, int64_t x)
{
    int64_t cur = atomic_load_explicit(v, memory_order_relaxed);
    while (x < cur && !atomic_compare_exchange_weak_explicit(v, &cur, x, memory_order_relaxed, memory_order_relaxed))
        ;
}

/* 0 when the host clock fits every command seen (QUEUED not before its enqueue call
 * began, and not long after it ended: a driver may stamp it just after the call), else
 * the largest lower bound. */
static int64_t calibrated_offset(const dt_cl_device *d)
{
    int64_t lo = atomic_load_explicit(&d->queued_lo_ns, memory_order_relaxed);
    int64_t hi = atomic_load_explicit(&d->queued_hi_ns, memory_order_relaxed);
    return (lo <= 0 && hi >= -DT_CL_QUEUED_LATE_NS) ? 0 : lo;
}

int64_t dt_cl_device_clock_offset(int index, int has_queued, uint64_t queued_ns, uint64_t call_start_ns,
                                  uint64_t call_end_ns)
{
    if (index < 0 || index >= dt_cl_device_count())
        return 0;
    dt_cl_device *d = &known_devices[index];
    if (d->has_host_timer)
        return d->host_timer_offset_ns;
    if (has_queued && queued_ns) {
        atomic_max_i64(&d->queued_lo_ns, (int64_t)(call_start_ns - queued_ns));
        atomic_min_i64(&d->queued_hi_ns, (int64_t)(call_end_ns - queued_ns));
        atomic_fetch_add_explicit(&d->commands_checked, 1, memory_order_relaxed);
    }
    int64_t lo = atomic_load_explicit(&d->queued_lo_ns, memory_order_relaxed);
    return lo == INT64_MIN ? 0 : calibrated_offset(d);
}

int dt_cl_device_clock_settled(int index, int64_t lo_ns, int64_t hi_ns, int64_t margin_ns)
{
    if (index < 0 || index >= dt_cl_device_count())
        return 0;
    const dt_cl_device *d = &known_devices[index];
    if (d->has_host_timer)
        return 0;
    /* The bounds only ever tighten (other threads may tighten them meanwhile): a command
     * strictly inside them by more than its error leaves them as they are. */
    int64_t lo = atomic_load_explicit(&d->queued_lo_ns, memory_order_relaxed);
    int64_t hi = atomic_load_explicit(&d->queued_hi_ns, memory_order_relaxed);
    return lo > INT64_MIN + margin_ns && hi < INT64_MAX - margin_ns && lo_ns < lo - margin_ns && hi_ns > hi + margin_ns;
}

int64_t dt_cl_device_clock_offset_counted(int index)
{
    dt_cl_device *d = &known_devices[index];
    atomic_fetch_add_explicit(&d->commands_checked, 1, memory_order_relaxed);
    return calibrated_offset(d);
}

void dt_cl_device_clock_note(int index, char *out, size_t cap)
{
    const dt_cl_device *d = dt_cl_device_at(index);
    if (!d) {
        snprintf(out, cap, "OpenCL device %d: unknown", index);
        return;
    }
    const char *name = d->props.name;
    uint64_t checked = atomic_load_explicit(&d->commands_checked, memory_order_relaxed);
    int64_t offset = calibrated_offset(d);
    if (d->has_host_timer)
        snprintf(out, cap,
                 "OpenCL device %d (%s): device timer %+lld ns from CLOCK_MONOTONIC_RAW, measured with "
                 "clGetDeviceAndHostTimer; device times corrected by it",
                 index, name, (long long)d->host_timer_offset_ns);
    else if (!checked)
        snprintf(out, cap,
                 "OpenCL device %d (%s): device timer assumed CLOCK_MONOTONIC_RAW (clGetDeviceAndHostTimer "
                 "unsupported; no completed command to check it with)",
                 index, name);
    else if (offset == 0)
        snprintf(out, cap,
                 "OpenCL device %d (%s): device timer is CLOCK_MONOTONIC_RAW, the backend's host clock (checked on "
                 "%llu commands: each QUEUED time lies within its enqueue call; clGetDeviceAndHostTimer "
                 "unsupported)",
                 index, name, (unsigned long long)checked);
    else
        snprintf(out, cap,
                 "OpenCL device %d (%s): device timer is not CLOCK_MONOTONIC_RAW (clGetDeviceAndHostTimer "
                 "unsupported): offset %+lld ns estimated from %llu commands' QUEUED times and enqueue calls; "
                 "device times accurate to about one enqueue call",
                 index, name, (long long)offset, (unsigned long long)checked);
}

int dt_cl_device_index(cl_device_id device)
{
    if (!device)
        return -1;
    int index = device_find(device);
    if (index >= 0)
        return index;
    int added = 0;
    pthread_mutex_lock(&devices_lock);
    index = device_find(device);
    int n = dt_cl_device_count();
    if (index < 0 && n < DT_MAX_DEVICES) {
        dt_cl_device *d = &known_devices[n];
        memset(d, 0, sizeof *d);
        d->handle = device;
        device_query_props(device, n, &d->props);
        device_check_host_timer(device, d);
        atomic_store_explicit(&ndevices, n + 1, memory_order_release);
        index = n;
        added = 1;
    }
    pthread_mutex_unlock(&devices_lock);
    if (added)
        dt_cl_device_registered(index);
    return index;
}

/* ------------------------------------------------------------------ contexts */

static void context_learn_own_devices(cl_context context)
{
    size_t bytes = 0;
    if (dt_cl_target.clGetContextInfo(context, CL_CONTEXT_DEVICES, 0, NULL, &bytes) != CL_SUCCESS || !bytes)
        return;
    cl_device_id *list = malloc(bytes);
    if (list && dt_cl_target.clGetContextInfo(context, CL_CONTEXT_DEVICES, bytes, list, NULL) == CL_SUCCESS)
        for (size_t i = 0; i < bytes / sizeof *list; i++)
            dt_cl_device_index(list[i]);
    free(list);
}

uint32_t dt_cl_context_learn(cl_context context, cl_uint num_devices, const cl_device_id *devices_given)
{
    const dt_cl_context_rec *known = dt_cl_map_find(&dt_cl_contexts, context);
    if (known)
        return known->id;
    if (devices_given)
        for (cl_uint i = 0; i < num_devices; i++)
            dt_cl_device_index(devices_given[i]);
    else
        context_learn_own_devices(context);
    dt_cl_context_rec rec = {atomic_fetch_add(&next_context_id, 1)};
    const dt_cl_context_rec *kept = dt_cl_map_learn(&dt_cl_contexts, context, &rec);
    return kept ? kept->id : rec.id; /* another thread's id when it learnt the context first */
}

/* ------------------------------------------------------------------ queues */

/* The queue's record as asked, with its id, device and context; learnt: kept as another
 * thread stored it if that thread learnt the queue first. */
static const dt_cl_queue_rec *queue_insert(cl_command_queue queue, cl_context context, cl_device_id device,
                                           const dt_cl_queue_rec *asked, int learnt)
{
    dt_cl_queue_rec rec = *asked;
    int index = dt_cl_device_index(device);
    rec.id = atomic_fetch_add(&next_queue_id, 1);
    rec.device_index = index < 0 ? 0 : (uint32_t)index;
    rec.context_id = dt_cl_context_learn(context, 0, NULL);
    return map_insert(&dt_cl_queues, queue, &rec, learnt);
}

void dt_cl_queue_created(cl_command_queue queue, cl_context context, cl_device_id device, const dt_cl_queue_rec *asked)
{
    queue_insert(queue, context, device, asked, 0);
}

/* A queue created without the layer seeing it (an extension entry point): learnt as it
 * is, profiling only if the program enabled it. */
static const dt_cl_queue_rec *queue_learn(cl_command_queue queue)
{
    cl_context context = NULL;
    cl_device_id device = NULL;
    cl_command_queue_properties props = 0;
    if (!dt_cl_target.clGetCommandQueueInfo ||
        dt_cl_target.clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof context, &context, NULL) != CL_SUCCESS ||
        dt_cl_target.clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof device, &device, NULL) != CL_SUCCESS ||
        dt_cl_target.clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL) != CL_SUCCESS)
        return NULL;
    dt_cl_queue_rec asked;
    memset(&asked, 0, sizeof asked);
    asked.profiled = (props & CL_QUEUE_PROFILING_ENABLE) != 0;
    asked.app_properties = props;
    return queue_insert(queue, context, device, &asked, 1);
}

const dt_cl_queue_rec *dt_cl_queue_get(cl_command_queue queue)
{
    const dt_cl_queue_rec *rec = dt_cl_map_find(&dt_cl_queues, queue);
    return rec ? rec : queue_learn(queue);
}

void dt_cl_queue_set_app_properties(cl_command_queue queue, cl_command_queue_properties props)
{
    pthread_mutex_lock(&dt_cl_queues.lock);
    dt_cl_slot *slots = atomic_load_explicit(&dt_cl_queues.slots, memory_order_relaxed);
    dt_cl_slot *slot = slots ? slot_of(&dt_cl_queues, slots, queue) : NULL;
    if (slot && atomic_load_explicit(&slot->live, memory_order_relaxed))
        ((dt_cl_queue_rec *)slot->record)->app_properties = props;
    pthread_mutex_unlock(&dt_cl_queues.lock);
}

/* ------------------------------------------------------------------ kernels */

static const char *kernel_query_name(cl_kernel kernel, const char *fallback)
{
    char stack_buf[256];
    char *buf = stack_buf;
    size_t bytes = 0;
    const char *pooled = NULL;
    if (dt_cl_target.clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, 0, NULL, &bytes) == CL_SUCCESS && bytes) {
        if (bytes > sizeof stack_buf)
            buf = malloc(bytes);
        if (buf && dt_cl_target.clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, bytes, buf, NULL) == CL_SUCCESS) {
            buf[bytes - 1] = '\0';
            pooled = dt_cl_pool_name(buf);
        }
        if (buf != stack_buf)
            free(buf);
    }
    if (!pooled)
        pooled = dt_cl_pool_name(fallback && *fallback ? fallback : "unknown OpenCL kernel");
    return pooled;
}

/* CL_KERNEL_LOCAL_MEM_SIZE of a kernel no argument was set on yet, for the first device of
 * its program: the device's index, or -1 when the target cannot say. */
static int kernel_query_local_mem(cl_kernel kernel, uint32_t *bytes)
{
    cl_program program = NULL;
    cl_device_id devices[DT_MAX_DEVICES];
    size_t size = 0;
    cl_ulong local = 0;
    if (dt_cl_target.clGetKernelInfo(kernel, CL_KERNEL_PROGRAM, sizeof program, &program, NULL) != CL_SUCCESS ||
        dt_cl_target.clGetProgramInfo(program, CL_PROGRAM_DEVICES, sizeof devices, devices, &size) != CL_SUCCESS ||
        size < sizeof devices[0] ||
        dt_cl_target.clGetKernelWorkGroupInfo(kernel, devices[0], CL_KERNEL_LOCAL_MEM_SIZE, sizeof local, &local,
                                              NULL) != CL_SUCCESS)
        return -1;
    *bytes = local > UINT32_MAX ? UINT32_MAX : (uint32_t)local;
    return dt_cl_device_index(devices[0]);
}

static dt_cl_kernel_rec kernel_rec(const char *name, int local_mem_device, uint32_t static_local_mem)
{
    dt_cl_kernel_rec rec;
    memset(&rec, 0, sizeof rec);
    rec.name = name;
    rec.local_mem_device = local_mem_device;
    rec.static_local_mem = static_local_mem;
    return rec;
}

void dt_cl_kernel_created(cl_kernel kernel, const char *fallback_name)
{
    uint32_t local = 0;
    int device = kernel_query_local_mem(kernel, &local);
    dt_cl_kernel_rec rec = kernel_rec(kernel_query_name(kernel, fallback_name), device, local);
    if (rec.name)
        dt_cl_map_put(&dt_cl_kernels, kernel, &rec);
}

void dt_cl_kernel_cloned(cl_kernel kernel, cl_kernel source)
{
    dt_cl_kernel_rec scratch;
    const dt_cl_kernel_rec *from = dt_cl_kernel_get(source, &scratch);
    if (!from)
        return;
    dt_cl_kernel_rec rec = *from; /* the clone has the source's argument values (clCloneKernel) */
    dt_cl_map_put(&dt_cl_kernels, kernel, &rec);
}

/* Is argument index of kernel declared __local? A kernel built without argument info
 * (-cl-kernel-arg-info) cannot say: then a NULL value with a size is taken as one, the
 * only way OpenCL sets a __local argument. */
static int arg_is_local(cl_kernel kernel, cl_uint index)
{
    cl_kernel_arg_address_qualifier q = 0;
    if (dt_cl_target.clGetKernelArgInfo(kernel, index, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof q, &q, NULL) !=
        CL_SUCCESS)
        return 1;
    return q == CL_KERNEL_ARG_ADDRESS_LOCAL;
}

void dt_cl_kernel_arg_set(cl_kernel kernel, cl_uint index, size_t size, const void *value)
{
    /* The record lives in its own allocation until the kernel is released: the layer may
     * write its atomics (the map hands out const pointers for the readers). */
    dt_cl_kernel_rec *k = (dt_cl_kernel_rec *)dt_cl_map_find(&dt_cl_kernels, kernel);
    if (!k)
        return;
    size_t local = !value && size && arg_is_local(kernel, index) ? size : 0;
    if (index >= DT_CL_LOCAL_ARGS_MAX) {
        if (local)
            atomic_store_explicit(&k->local_args_unknown, 1, memory_order_relaxed);
        return;
    }
    uint32_t bytes = local > UINT32_MAX ? UINT32_MAX : (uint32_t)local;
    uint32_t before = atomic_exchange_explicit(&k->local_arg_bytes[index], bytes, memory_order_relaxed);
    atomic_fetch_add_explicit(&k->local_args_total, bytes - before, memory_order_relaxed); /* mod 2^32 */
}

const dt_cl_kernel_rec *dt_cl_kernel_get(cl_kernel kernel, dt_cl_kernel_rec *scratch)
{
    const dt_cl_kernel_rec *rec = dt_cl_map_find(&dt_cl_kernels, kernel);
    if (rec || !kernel)
        return rec;
    /* Not seen created (an extension entry point): learn its name now (its arguments may
     * be set already: no local memory); when the map is full, this asks the target at
     * each launch. */
    *scratch = kernel_rec(kernel_query_name(kernel, NULL), -1, 0);
    if (!scratch->name)
        return NULL;
    rec = dt_cl_map_learn(&dt_cl_kernels, kernel, scratch); /* another thread's when it learnt it first */
    return rec ? rec : scratch;
}

void dt_cl_objects_after_fork(void)
{
    dt_cl_map *maps[] = {&dt_cl_contexts, &dt_cl_queues, &dt_cl_kernels};
    for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++)
        pthread_mutex_init(&maps[i]->lock, NULL);
    pthread_mutex_init(&name_pool.lock, NULL);
    pthread_mutex_init(&devices_lock, NULL);
}

#endif /* __has_include(<CL/cl_layer.h>) */
