/* opencl_pending.c: device events waiting for their OpenCL command to complete, and
 * the per-thread records that hold them.
 *
 * Design. Each enqueue of device work leaves one pending record on the enqueuing
 * thread's own list: the command's event (a reference the layer owns) and the device
 * event, complete but for its times. Only that thread touches its list while a session
 * records, so adding and resolving take no lock and allocate nothing in the steady
 * state (records come from a per-thread free list, refilled a slab at a time). The
 * thread resolves its list without ever waiting: at the calls that wait for the device
 * (clFinish, clWaitForEvents, blocking reads and writes), and whenever its list has
 * grown past a threshold that doubles with what stays pending (so a thread that never
 * synchronises still reads its completed commands, at an amortised constant cost).
 * Resolving asks the command's END time first (profiling times can be read only once the
 * command is complete); a complete command's QUEUED and START are read then, the device
 * event is emitted and the reference released; when END cannot be read, the status
 * (clGetEventInfo) says why: a command that failed is counted, never emitted; a running
 * one stays.
 *
 * Stop. A thread records only inside a guard (a per-thread depth counter): it enters,
 * then checks that the session still records. Stop clears the recording pointer, then
 * waits until no thread is inside a guard: after that no thread adds or resolves, and
 * stop owns every list. It flushes the live queues, resolves every thread's records
 * (threads that have exited included), waiting for running commands up to a deadline,
 * and counts and releases what is still incomplete then (a command waiting on a user
 * event the program never sets must not hang the program's exit).
 *
 * Thread records are never freed: a thread that exits leaves its record (and its
 * pending events) for stop, and a new thread adopts it. Part of the OpenCL backend:
 * compiled on its own, with the OpenCL headers. */
#if __has_include(<CL/cl_layer.h>) /* else the backend is opencl.c's stub alone */

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opencl_layer.h"

#define DT_CL_SLAB_ENTRIES 128u
#define DT_CL_POLL_MIN 256u /* pending records per thread before a poll is due */

typedef struct dt_cl_pending {
    struct dt_cl_pending *next;
    cl_event event;             /* one reference owned by the layer */
    const void *in_order_queue; /* the queue when in order (its commands complete in order), else NULL */
    uint64_t call_start_ns;     /* the enqueue call, as stamped (dt_cl_stamp: ticks or host clock) */
    uint64_t call_end_ns;
    devtrace_event device; /* complete but for its times; device = the device index */
} dt_cl_pending;

typedef struct dt_cl_slab {
    struct dt_cl_slab *next;
    dt_cl_pending entries[DT_CL_SLAB_ENTRIES];
} dt_cl_slab;

struct dt_cl_thread {
    struct dt_cl_thread *next;    /* in the list of all records; never removed */
    atomic_int guard_depth;       /* > 0 while inside a recording section */
    atomic_int owned;             /* a running thread uses this record */
    dt_cl_pending *pending;       /* oldest first; owner's while recording, stop's after the drain */
    dt_cl_pending **pending_tail; /* where the next one is linked */
    size_t npending;
    size_t poll_at;
    dt_cl_pending *free_entries;
    dt_cl_slab *slabs;  /* owned */
    uint64_t corr_next; /* this thread's block of correlation ids: [corr_next, corr_end) */
    uint64_t corr_end;
    uint64_t unprofiled; /* enqueues on unprofiled queues not yet added to the recording's counts
                          * (written by the owner only; summed and cleared at stop) */
    uint32_t tid;        /* 0: not known yet */
    /* The last kernel name this thread launched, and its id in the session of generation
     * name_generation (launches repeat a few kernels: the id without a table lookup). */
    const char *name_ptr;
    uint64_t name_generation;
    uint32_t name_id;
    /* Where this thread writes its runtime events in the store of generation
     * cursor_generation (kept from call to call: no slot lookup per call). */
    dt_store_cursor cursor;
    uint64_t cursor_generation;
};

static dt_cl_thread *_Atomic all_threads;
static _Thread_local dt_cl_thread *this_thread;
static pthread_key_t thread_exit_key;
static pthread_once_t thread_key_once = PTHREAD_ONCE_INIT;

/* npending is the owner's, but read by dt_cl_pending_count from any thread. */
static void set_npending(dt_cl_thread *t, size_t n)
{
    __atomic_store_n(&t->npending, n, __ATOMIC_RELAXED);
}

void dt_cl_count_unprofiled(dt_cl_thread *t)
{
    /* The owner's counter: a load and a store, no read-modify-write on a shared line. */
    __atomic_store_n(&t->unprofiled, __atomic_load_n(&t->unprofiled, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

uint64_t dt_cl_unprofiled_count(void)
{
    uint64_t n = 0;
    for (dt_cl_thread *t = atomic_load(&all_threads); t; t = t->next)
        n += __atomic_load_n(&t->unprofiled, __ATOMIC_RELAXED);
    return n;
}

uint64_t dt_cl_unprofiled_take(void)
{
    uint64_t n = 0;
    for (dt_cl_thread *t = atomic_load(&all_threads); t; t = t->next)
        n += __atomic_exchange_n(&t->unprofiled, 0, __ATOMIC_RELAXED);
    return n;
}

uint64_t dt_cl_pending_count(void)
{
    uint64_t n = 0;
    for (dt_cl_thread *t = atomic_load(&all_threads); t; t = t->next)
        n += __atomic_load_n(&t->npending, __ATOMIC_RELAXED);
    return n;
}

/* ------------------------------------------------------------------ thread records */

static void on_thread_exit(void *record)
{
    dt_cl_thread *t = record;
    if (this_thread == t)
        this_thread = NULL;
    atomic_store(&t->owned, 0);
}

static void make_thread_key(void)
{
    pthread_key_create(&thread_exit_key, on_thread_exit);
}

static dt_cl_thread *adopt_unowned_record(void)
{
    for (dt_cl_thread *t = atomic_load(&all_threads); t; t = t->next) {
        int unowned = 0;
        if (atomic_compare_exchange_strong(&t->owned, &unowned, 1))
            return t;
    }
    return NULL;
}

static dt_cl_thread *new_record(void)
{
    dt_cl_thread *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    atomic_init(&t->owned, 1);
    t->poll_at = DT_CL_POLL_MIN;
    t->pending_tail = &t->pending;
    t->next = atomic_load(&all_threads);
    while (!atomic_compare_exchange_weak(&all_threads, &t->next, t))
        ;
    return t;
}

static dt_cl_thread *thread_attach(void)
{
    pthread_once(&thread_key_once, make_thread_key);
    dt_cl_thread *t = adopt_unowned_record();
    if (!t)
        t = new_record();
    if (!t)
        return NULL;
    t->tid = 0;               /* an adopted record was another thread's */
    t->cursor_generation = 0; /* ... and so was its place in the store */
    this_thread = t;
    pthread_setspecific(thread_exit_key, t);
    return t;
}

dt_cl_thread *dt_cl_thread_self(void)
{
    dt_cl_thread *t = this_thread;
    return __builtin_expect(t != NULL, 1) ? t : thread_attach();
}

void dt_cl_guard_enter(dt_cl_thread *t)
{
    /* Sequentially consistent with stop's clearing of the recording pointer: either stop
     * sees this depth and waits, or this thread sees the cleared pointer. */
    atomic_fetch_add_explicit(&t->guard_depth, 1, memory_order_seq_cst);
}

void dt_cl_guard_exit(dt_cl_thread *t)
{
    /* Only the owner thread writes its depth: a release store (no read-modify-write)
     * publishes what the section wrote to the stop that sees it. */
    int depth = atomic_load_explicit(&t->guard_depth, memory_order_relaxed);
    atomic_store_explicit(&t->guard_depth, depth - 1, memory_order_release);
}

static _Atomic uint64_t next_correlation = 1;

uint64_t dt_cl_next_correlation(dt_cl_thread *t)
{
    if (__builtin_expect(t->corr_next == t->corr_end, 0)) {
        t->corr_next = atomic_fetch_add_explicit(&next_correlation, DT_CL_CORRELATION_BLOCK, memory_order_relaxed);
        t->corr_end = t->corr_next + DT_CL_CORRELATION_BLOCK;
    }
    return t->corr_next++;
}

dt_store_cursor *dt_cl_thread_cursor(dt_cl_thread *t, dt_store *st)
{
    if (__builtin_expect(t->cursor_generation != st->generation, 0)) {
        memset(&t->cursor, 0, sizeof t->cursor);
        t->cursor_generation = st->generation;
    }
    return &t->cursor;
}

uint32_t dt_cl_kernel_name_id(dt_cl_thread *t, dt_session *s, const char *pooled_name)
{
    if (t->name_ptr == pooled_name && t->name_generation == s->generation)
        return t->name_id;
    uint32_t id = dt_intern_ptr(&s->names, pooled_name);
    if (id) { /* 0: out of memory, asked again next time */
        t->name_ptr = pooled_name;
        t->name_generation = s->generation;
        t->name_id = id;
    }
    return id;
}

uint32_t dt_cl_thread_id(dt_cl_thread *t)
{
    if (__builtin_expect(!t->tid, 0))
        t->tid = dt_thread_id();
    return t->tid;
}

static void pause_briefly(long ns)
{
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
}

void dt_cl_guards_drain(void)
{
    for (dt_cl_thread *t = atomic_load(&all_threads); t; t = t->next) {
        if (t == this_thread)
            continue; /* stop called from inside a wrapped call on this thread */
        for (unsigned spins = 0; atomic_load_explicit(&t->guard_depth, memory_order_seq_cst) > 0; spins++) {
            if (spins < 64)
                sched_yield();
            else
                pause_briefly(50000);
        }
    }
}

void dt_cl_threads_forget_after_fork(void)
{
    for (dt_cl_thread *t = atomic_load(&all_threads); t; t = t->next) {
        atomic_store(&t->guard_depth, 0);
        t->tid = 0; /* the child's thread has an id of its own */
        t->cursor_generation = 0;
        if (t != this_thread)
            atomic_store(&t->owned, 0);
        /* The parent's events mean nothing here: forget them (not released: the
         * child's OpenCL state is not the parent's). */
        t->pending = NULL;
        t->pending_tail = &t->pending;
        set_npending(t, 0);
        t->poll_at = DT_CL_POLL_MIN;
        t->unprofiled = 0;
    }
}

/* ------------------------------------------------------------------ pending records */

static dt_cl_pending *take_free_entry(dt_cl_thread *t)
{
    if (!t->free_entries) {
        dt_cl_slab *slab = malloc(sizeof *slab);
        if (!slab)
            return NULL;
        slab->next = t->slabs;
        t->slabs = slab;
        for (size_t i = 0; i < DT_CL_SLAB_ENTRIES; i++) {
            slab->entries[i].next = t->free_entries;
            t->free_entries = &slab->entries[i];
        }
    }
    dt_cl_pending *p = t->free_entries;
    t->free_entries = p->next;
    return p;
}

static void give_back_entry(dt_cl_thread *t, dt_cl_pending *p)
{
    p->event = NULL;
    p->next = t->free_entries;
    t->free_entries = p;
}

int dt_cl_pending_add(dt_cl_thread *t, cl_event event, int retain, const void *in_order_queue,
                      const devtrace_event *device, uint64_t call_start_ns, uint64_t call_end_ns)
{
    dt_cl_pending *p = take_free_entry(t);
    if (!p)
        return -1;
    if (retain && dt_cl_target.clRetainEvent(event) != CL_SUCCESS) {
        give_back_entry(t, p);
        return -1;
    }
    p->event = event;
    p->in_order_queue = in_order_queue;
    p->call_start_ns = call_start_ns;
    p->call_end_ns = call_end_ns;
    p->device = *device;
    p->next = NULL;
    *t->pending_tail = p;
    t->pending_tail = &p->next;
    set_npending(t, t->npending + 1);
    return 0;
}

int dt_cl_pending_due(const dt_cl_thread *t)
{
    return t->npending >= t->poll_at;
}

static uint64_t device_to_host(cl_ulong device_ns, int64_t offset)
{
    return (uint64_t)((int64_t)device_ns + offset);
}

/* How a poll puts the enqueue calls' stamps on the host clock: ticks converted on the
 * line through the session's first tick sample and one taken at the poll (every call
 * polled lies between the two, and CLOCK_MONOTONIC_RAW is affine in the TSC). The line's
 * slope in floating point too (fast): the device clock check of most commands needs the
 * stamps only to within DT_CL_APPROX_NS (see read_times). */
typedef struct poll_clock {
    int ticks, fast;
    dt_clock_sample anchor, now;
    double ns_per_tick;
} poll_clock;

/* Bound on the error of call_host_ns_approx (a double's rounding is below 1 ns here:
 * stamps below 2^53 ticks past the anchor). */
#define DT_CL_APPROX_NS 64

static poll_clock poll_clock_now(const dt_cl_recording *r)
{
    poll_clock pc = {0, 0, {0, 0}, {0, 0}, 0};
    if (r->ticks && dt_ticks_pair(r->session->ticks.read, &pc.now) == 0) {
        pc.ticks = 1;
        pc.anchor = r->session->ticks.anchor;
        pc.fast = pc.now.vendor_ns > pc.anchor.vendor_ns && pc.now.host_ns > pc.anchor.host_ns;
        if (pc.fast)
            pc.ns_per_tick =
                (double)(pc.now.host_ns - pc.anchor.host_ns) / (double)(pc.now.vendor_ns - pc.anchor.vendor_ns);
    }
    return pc;
}

static uint64_t call_host_ns(const dt_cl_recording *r, const poll_clock *pc, uint64_t stamp)
{
    if (!r->ticks)
        return stamp;
    return pc->ticks ? dt_ticks_between(pc->anchor, pc->now, stamp) : 0;
}

/* call_host_ns to within DT_CL_APPROX_NS, with a multiply instead of a division (pc->fast). */
static int64_t call_host_ns_approx(const poll_clock *pc, uint64_t stamp)
{
    return (int64_t)pc->anchor.host_ns + (int64_t)((double)(int64_t)(stamp - pc->anchor.vendor_ns) * pc->ns_per_tick);
}

/* The offset that puts the command's device times on the host clock, checking its QUEUED
 * time against its enqueue call (dt_cl_device_clock_offset). When the call's stamps are
 * ticks, the exact conversion (two divisions) is needed only when the command might move
 * the device's bounds; the approximate one says when it cannot, and the result is the same. */
static int64_t device_offset(const dt_cl_recording *r, const poll_clock *pc, const dt_cl_pending *p, int has_queued,
                             cl_ulong queued)
{
    int device = (int)p->device.device;
    if (has_queued && r->ticks && pc->fast) {
        int64_t lo = call_host_ns_approx(pc, p->call_start_ns) - (int64_t)queued;
        int64_t hi = call_host_ns_approx(pc, p->call_end_ns) - (int64_t)queued;
        if (dt_cl_device_clock_settled(device, lo, hi, DT_CL_APPROX_NS))
            return dt_cl_device_clock_offset_counted(device);
    }
    uint64_t call_start = call_host_ns(r, pc, p->call_start_ns), call_end = call_host_ns(r, pc, p->call_end_ns);
    return dt_cl_device_clock_offset(device, has_queued && call_start, queued, call_start, call_end);
}

/* A completed command's times into the device event, on the host clock. END was read
 * (by resolve_if_complete); 0, 1 when the driver gave start == end == 0 (timing not
 * collected), -1 when START cannot be read. */
static int read_times(const dt_cl_recording *r, const poll_clock *pc, dt_cl_pending *p, cl_ulong end)
{
    cl_ulong queued = 0, start = 0;
    cl_int rq =
        dt_cl_target.clGetEventProfilingInfo(p->event, CL_PROFILING_COMMAND_QUEUED, sizeof queued, &queued, NULL);
    if (dt_cl_target.clGetEventProfilingInfo(p->event, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL) !=
        CL_SUCCESS)
        return -1;
    if (start == 0 && end == 0)
        return 1;
    devtrace_event *ev = &p->device;
    int has_queued = rq == CL_SUCCESS && queued != 0;
    int64_t offset = device_offset(r, pc, p, has_queued, queued);
    ev->start_ns = device_to_host(start, offset);
    ev->end_ns = device_to_host(end, offset);
    if (ev->kind == DEVTRACE_KIND_KERNEL && has_queued) {
        ev->u.kernel.queued_ns = device_to_host(queued, offset);
        ev->flags |= DEVTRACE_EVENT_HAS_QUEUED;
    }
    return 0;
}

static void emit_device_event(dt_cl_recording *r, const poll_clock *pc, dt_cl_pending *p, cl_ulong end)
{
    int rc = read_times(r, pc, p, end);
    if (rc < 0) {
        atomic_fetch_add(&r->unreadable_times, 1);
        DT_COUNT(r->session, dropped_vendor, 1);
        return;
    }
    if (rc > 0) {
        DT_COUNT(r->session, zero_timestamp, 1);
        return;
    }
    dt_emit(r->session, &p->device); /* a full store counts its own drops */
}

static cl_int read_end(const dt_cl_pending *p, cl_ulong *end)
{
    return dt_cl_target.clGetEventProfilingInfo(p->event, CL_PROFILING_COMMAND_END, sizeof *end, end, NULL);
}

/* 1 when the record is finished with (emitted or counted; reference released), 0 when
 * its command still runs. Never waits. The command's END time is asked first: the
 * profiling queries succeed only once the command is CL_COMPLETE (OpenCL 1.0 on: else
 * CL_PROFILING_INFO_NOT_AVAILABLE), so a completed command needs no status query; the
 * status (clGetEventInfo, which takes the event's lock in PoCL) is asked only when END
 * cannot be read: running, failed, or times unreadable. A command that completed between
 * the two queries says CL_COMPLETE: its END is asked again (PoCL reads the status for the
 * profiling query without the lock, so this happens). */
static int resolve_if_complete(dt_cl_recording *r, const poll_clock *pc, dt_cl_pending *p)
{
    cl_ulong end = 0;
    if (read_end(p, &end) == CL_SUCCESS) {
        emit_device_event(r, pc, p, end);
    } else {
        cl_int status = CL_COMPLETE;
        cl_int rc =
            dt_cl_target.clGetEventInfo(p->event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
        if (rc == CL_SUCCESS && status > CL_COMPLETE)
            return 0;
        if (rc == CL_SUCCESS && status == CL_COMPLETE && read_end(p, &end) == CL_SUCCESS) {
            emit_device_event(r, pc, p, end);
        } else {
            if (rc == CL_SUCCESS && status < 0)
                atomic_fetch_add(&r->failed_commands, 1);
            else
                atomic_fetch_add(&r->unreadable_times, 1); /* complete, or its status unreadable: no times */
            DT_COUNT(r->session, dropped_vendor, 1);
        }
    }
    dt_cl_target.clReleaseEvent(p->event);
    return 1;
}

#define DT_CL_BLOCKED_QUEUES 8u /* in-order queues a poll remembers as blocked */

static int queue_blocked(const void *const *blocked, size_t n, const void *queue)
{
    for (size_t i = 0; i < n; i++)
        if (blocked[i] == queue)
            return 1;
    return 0;
}

/* Resolves the thread's records, oldest first. Past a command still running on an
 * in-order queue, that queue's later commands cannot have completed: they are not asked
 * (up to DT_CL_BLOCKED_QUEUES such queues per poll; past that, every record is asked). */
static size_t poll_thread(dt_cl_thread *t, dt_cl_recording *r)
{
    const void *blocked[DT_CL_BLOCKED_QUEUES];
    size_t nblocked = 0;
    dt_cl_pending **link = &t->pending;
    poll_clock pc = poll_clock_now(r);
    while (*link) {
        dt_cl_pending *p = *link;
        if (p->in_order_queue && queue_blocked(blocked, nblocked, p->in_order_queue)) {
            link = &p->next;
        } else if (resolve_if_complete(r, &pc, p)) {
            *link = p->next;
            give_back_entry(t, p);
            set_npending(t, t->npending - 1);
        } else {
            if (p->in_order_queue && nblocked < DT_CL_BLOCKED_QUEUES)
                blocked[nblocked++] = p->in_order_queue;
            link = &p->next;
        }
    }
    t->pending_tail = link;
    t->poll_at = t->npending * 2 > DT_CL_POLL_MIN ? t->npending * 2 : DT_CL_POLL_MIN;
    return t->npending;
}

void dt_cl_pending_poll(dt_cl_thread *t, dt_cl_recording *r)
{
    if (t->pending)
        poll_thread(t, r);
}

static void abandon_incomplete(dt_cl_thread *t, dt_cl_recording *r)
{
    while (t->pending) {
        dt_cl_pending *p = t->pending;
        t->pending = p->next;
        atomic_fetch_add(&r->incomplete_at_stop, 1);
        DT_COUNT(r->session, dropped_vendor, 1);
        dt_cl_target.clReleaseEvent(p->event); /* the command itself runs on */
        give_back_entry(t, p);
    }
    t->pending_tail = &t->pending;
    set_npending(t, 0);
}

void dt_cl_pending_resolve_all(dt_cl_recording *r, uint64_t timeout_ns)
{
    uint64_t deadline = dt_monotonic_ns() + timeout_ns;
    long pause_ns = 20000;
    for (;;) {
        size_t left = 0;
        for (dt_cl_thread *t = atomic_load(&all_threads); t; t = t->next)
            if (t->pending)
                left += poll_thread(t, r);
        if (!left)
            return;
        if (dt_monotonic_ns() >= deadline)
            break;
        pause_briefly(pause_ns);
        if (pause_ns < 2000000)
            pause_ns *= 2;
    }
    for (dt_cl_thread *t = atomic_load(&all_threads); t; t = t->next)
        abandon_incomplete(t, r);
}

#endif /* __has_include(<CL/cl_layer.h>) */
