/* emu_core.c: the emulated runtime behind every CUPTI-shaped vendor emulator.
 *
 * Each runtime call fires the subscriber's enter/exit callbacks, appends the external
 * correlation, API and device records (written through the vendor's layout table)
 * into buffers obtained from the tracer's buffer-requested callback, and hands full
 * buffers back through buffer-completed, outside every emulator lock, on the thread
 * that filled them (FlushAll: on the flushing thread). Device work is placed on a
 * virtual per-stream timeline in the vendor clock. Many threads may call at once:
 * records are appended under one mutex, external correlation stacks are per thread,
 * counters are atomic (the callback count per thread), and every record is either
 * delivered or counted as dropped. A subscriber callback gets one block of callback data
 * per call, written at its first callback from the layout's field list. */
#include "emu.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define EMU_MAX_RECORD 512
#define EMU_MAX_KINDS 64
#define EMU_MAX_CBIDS 1024
#define EMU_MAX_DOMAINS 16
#define EMU_EXT_KINDS 8
#define EMU_EXT_DEPTH 64
#define EMU_WAIT_SLACK_NS 1000000000ull /* sync gives up this long after the expected end */
#define EMU_WAIT_MAX_NS 60000000000ull  /* and never waits longer than this in all */

/* ---- state ---- */

static const emu_vendor *g_vendor;
static emu_faults g_faults;
static uint64_t g_load_realtime_ns;
static _Atomic uint32_t g_device_id;
static _Atomic uint64_t g_next_correlation = 1;
static _Atomic uint64_t g_next_grid_id = 1;
static _Atomic uint8_t g_kind_on[EMU_MAX_KINDS];

static struct {
    int64_t epoch_ns;
    long double rate;
} g_clock = {0, 1.0L};
static _Atomic(emu_timestamp_fn) g_timestamp_fn;

/* Fault counters still to be spent. */
static _Atomic uint64_t g_pending_zero_time, g_pending_malformed, g_pending_drop, g_pending_refuse;

static _Atomic uint64_t g_dropped_unread; /* reset by GetNumDroppedRecords */

/* The devemu_stats fields counted in shared counters, in one list for the counters, reset
 * and read; callbacks_fired is counted per thread (below). */
/* clang-format off */
#define EMU_STAT_NAMES(X)           \
    X(runtime_calls)                \
    X(api_records)                  \
    X(kernel_records)               \
    X(memcpy_records)               \
    X(memset_records)               \
    X(external_correlation_records) \
    X(injected_zero_time)           \
    X(injected_malformed)           \
    X(dropped_records)              \
    X(buffers_requested)            \
    X(buffers_refused)              \
    X(buffers_completed)
/* clang-format on */

static struct {
#define EMU__DECLARE_STAT(name) _Atomic uint64_t name;
    EMU_STAT_NAMES(EMU__DECLARE_STAT)
#undef EMU__DECLARE_STAT
} g_stats;

/* An activity buffer lent by the tracer. */
typedef struct emu_buffer {
    uint8_t *base;
    size_t size;  /* as the tracer gave it */
    size_t limit; /* bytes we fill at most (small-buffer fault) */
    size_t used;
    size_t records;
    size_t max_records; /* 0 = no limit */
} emu_buffer;

typedef struct buffer_list {
    emu_buffer *items;
    size_t n, cap;
} buffer_list;

static struct {
    pthread_mutex_t lock;
    emu_buffer_request_fn request;
    emu_buffer_complete_fn complete;
    emu_buffer_complete3_fn complete3; /* instead of complete: no context or stream */
    emu_buffer current;
    int has_current;
    buffer_list ready; /* full, waiting to be handed back (FIFO) */
    buffer_list spare; /* fresh buffers not yet in use */
} g_buf = {.lock = PTHREAD_MUTEX_INITIALIZER};

typedef struct stream_time {
    uint32_t stream;
    uint64_t last_end; /* vendor clock */
} stream_time;

static struct {
    pthread_mutex_t lock;
    stream_time *streams;
    size_t n, cap;
} g_timeline = {.lock = PTHREAD_MUTEX_INITIALIZER};

static struct {
    _Atomic int claimed; /* a subscriber exists (Subscribe succeeded) */
    _Atomic int active;  /* fn/userdata are published */
    _Atomic(emu_callback_fn) fn;
    _Atomic(void *) userdata;
    _Atomic uint8_t domain_on[EMU_MAX_DOMAINS];
    _Atomic uint8_t cbid_on[EMU_MAX_CBIDS];
} g_sub;

static char g_context_token; /* the address is the emulated context handle */

typedef struct ext_stacks {
    uint64_t ids[EMU_EXT_KINDS][EMU_EXT_DEPTH];
    uint32_t depth[EMU_EXT_KINDS];
} ext_stacks;

static _Thread_local ext_stacks t_ext;
static _Thread_local int t_in_completed;
static _Thread_local uint32_t t_tid;

static _Noreturn void die(const char *what)
{
    fprintf(stderr, "devemu: %s\n", what);
    abort();
}

static void count(_Atomic uint64_t *counter)
{
    atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
}

/* ---- per-thread statistics ----
 *
 * callbacks_fired grows twice per traced call: counted by the calling thread in a record
 * of its own, so that threads calling at once share no cache line for it. A read sums
 * every record (and the fallback counter) less the sum at the last reset; a reset writes
 * no record, so no count of a thread calling meanwhile is lost or doubled. A record
 * outlives its thread: released at the thread's exit, adopted by a later thread. */
typedef struct emu_thread_counts {
    struct emu_thread_counts *next;   /* g_thread_counts.all: pushed once, never removed */
    _Atomic int owned;                /* a live thread counts here */
    _Atomic uint64_t callbacks_fired; /* written by the owning thread alone */
} emu_thread_counts;

static struct {
    _Atomic(emu_thread_counts *) all;
    _Atomic uint64_t callbacks_fired_unowned; /* threads that could get no record */
    _Atomic uint64_t callbacks_fired_at_reset;
    pthread_once_t once;
    pthread_key_t key;
    int has_key;
} g_thread_counts = {.once = PTHREAD_ONCE_INIT};

static _Thread_local emu_thread_counts *t_counts;

static void thread_counts_release(void *p)
{
    emu_thread_counts *t = p;
    t_counts = NULL;
    atomic_store_explicit(&t->owned, 0, memory_order_release);
}

static void thread_counts_make_key(void)
{
    g_thread_counts.has_key = pthread_key_create(&g_thread_counts.key, thread_counts_release) == 0;
}

__attribute__((destructor)) static void thread_counts_unload(void)
{
    if (g_thread_counts.has_key)
        pthread_key_delete(g_thread_counts.key); /* no exiting thread calls into an unloaded library */
}

/* The calling thread's record: adopted from an exited thread, else made; NULL when none
 * can be had (the thread then counts in the shared fallback). */
static __attribute__((noinline)) emu_thread_counts *thread_counts_attach(void)
{
    pthread_once(&g_thread_counts.once, thread_counts_make_key);
    if (!g_thread_counts.has_key)
        return NULL;
    emu_thread_counts *t = atomic_load(&g_thread_counts.all);
    for (; t; t = t->next) {
        int unowned = 0;
        if (atomic_compare_exchange_strong(&t->owned, &unowned, 1))
            break;
    }
    if (!t) {
        t = calloc(1, sizeof *t);
        if (!t)
            return NULL;
        atomic_init(&t->owned, 1);
        t->next = atomic_load(&g_thread_counts.all);
        while (!atomic_compare_exchange_weak(&g_thread_counts.all, &t->next, t))
            ;
    }
    if (pthread_setspecific(g_thread_counts.key, t) != 0) {
        atomic_store(&t->owned, 0);
        return NULL;
    }
    t_counts = t;
    return t;
}

static emu_thread_counts *thread_counts(void)
{
    emu_thread_counts *t = t_counts;
    return __builtin_expect(t != NULL, 1) ? t : thread_counts_attach();
}

static void count_callback_fired(emu_thread_counts *t)
{
    if (!t) {
        count(&g_thread_counts.callbacks_fired_unowned);
        return;
    }
    uint64_t n = atomic_load_explicit(&t->callbacks_fired, memory_order_relaxed);
    atomic_store_explicit(&t->callbacks_fired, n + 1, memory_order_relaxed);
}

static uint64_t callbacks_fired_total(void)
{
    uint64_t n = atomic_load(&g_thread_counts.callbacks_fired_unowned);
    for (emu_thread_counts *t = atomic_load(&g_thread_counts.all); t; t = t->next)
        n += atomic_load_explicit(&t->callbacks_fired, memory_order_relaxed);
    return n;
}

/* Takes one unit from a fault counter; 1 when there was one. */
static int take_one(_Atomic uint64_t *counter)
{
    uint64_t left = atomic_load(counter);
    while (left > 0) {
        if (atomic_compare_exchange_weak(counter, &left, left - 1))
            return 1;
    }
    return 0;
}

static void count_drop(void)
{
    count(&g_dropped_unread);
    count(&g_stats.dropped_records);
}

/* ---- layouts ---- */

const emu_field_at *emu_layout_find(const emu_layout *layout, int field)
{
    for (uint32_t i = 0; i < layout->nfields; i++) {
        if (layout->fields[i].field == field)
            return &layout->fields[i];
    }
    return NULL;
}

static void put_field(uint8_t *dst, const emu_field_at *f, uint64_t v)
{
    uint8_t u8 = (uint8_t)v;
    uint16_t u16 = (uint16_t)v;
    uint32_t u32 = (uint32_t)v;
    switch (f->width) {
    case 1:
        memcpy(dst + f->offset, &u8, 1);
        break;
    case 2:
        memcpy(dst + f->offset, &u16, 2);
        break;
    case 4:
        memcpy(dst + f->offset, &u32, 4);
        break;
    default:
        memcpy(dst + f->offset, &v, 8);
        break;
    }
}

static void layout_write(const emu_layout *l, uint8_t *dst, const uint64_t values[EMU_F_COUNT])
{
    memset(dst, 0, l->size);
    for (uint32_t i = 0; i < l->nfields; i++)
        put_field(dst, &l->fields[i], values[l->fields[i].field]);
}

static void check_layout(const emu_layout *l)
{
    char msg[256];
    if (l->size == 0 || l->size > EMU_MAX_RECORD || l->size % 8 != 0) {
        snprintf(msg, sizeof msg, "vendor table: %s has a bad size %u", l->name, (unsigned)l->size);
        die(msg);
    }
    for (uint32_t i = 0; i < l->nfields; i++) {
        const emu_field_at *f = &l->fields[i];
        int width_ok = f->width == 1 || f->width == 2 || f->width == 4 || f->width == 8;
        if (!width_ok || f->field >= EMU_F_COUNT || f->offset + f->width > l->size ||
            (!l->packed && f->offset % f->width != 0)) {
            snprintf(msg, sizeof msg, "vendor table: %s field %u at %u width %u is not valid", l->name,
                     (unsigned)f->field, (unsigned)f->offset, (unsigned)f->width);
            die(msg);
        }
    }
}

/* ---- clock ---- */

static uint64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t vendor_from_realtime(uint64_t rt)
{
    int64_t delta = (int64_t)(rt - (uint64_t)g_clock.epoch_ns);
    if (g_clock.rate == 1.0L)
        return (uint64_t)delta;
    return (uint64_t)llroundl((long double)delta * g_clock.rate);
}

uint64_t emu_now(void)
{
    emu_timestamp_fn fn = atomic_load_explicit(&g_timestamp_fn, memory_order_acquire);
    return fn ? fn() : vendor_from_realtime(realtime_ns());
}

/* A device duration in vendor ticks: maps back to exactly dur_ns (to rounding). */
static uint64_t vendor_duration(uint64_t dur_ns)
{
    if (atomic_load(&g_timestamp_fn) || g_clock.rate == 1.0L)
        return dur_ns;
    return (uint64_t)llroundl((long double)dur_ns * g_clock.rate);
}

emu_result emu_get_timestamp(uint64_t *ts)
{
    if (!ts)
        return g_vendor->result.invalid_parameter;
    *ts = emu_now();
    return g_vendor->result.success;
}

emu_result emu_register_timestamp_callback(emu_timestamp_fn fn)
{
    atomic_store_explicit(&g_timestamp_fn, fn, memory_order_release);
    return g_vendor->result.success;
}

/* Busy-waits until the vendor clock reaches target (gives up well after it should have). */
static void wait_until(uint64_t target)
{
    uint64_t now = emu_now();
    if (now >= target)
        return;
    long double rate = atomic_load(&g_timestamp_fn) ? 1.0L : g_clock.rate;
    long double expected = (long double)(target - now) / rate;
    uint64_t give_up = realtime_ns() + EMU_WAIT_SLACK_NS +
                       (expected < (long double)EMU_WAIT_MAX_NS ? (uint64_t)expected : EMU_WAIT_MAX_NS);
    while ((now = emu_now()) < target && realtime_ns() < give_up) {
        uint64_t left_ns = (uint64_t)((long double)(target - now) / rate);
        if (left_ns > 200000) {
            struct timespec nap = {0, (long)(left_ns / 2 < 100000000 ? left_ns / 2 : 100000000)};
            nanosleep(&nap, NULL);
        } else {
            sched_yield();
        }
    }
}

/* ---- the device timeline ---- */

static stream_time *timeline_stream(uint32_t stream)
{
    for (size_t i = 0; i < g_timeline.n; i++) {
        if (g_timeline.streams[i].stream == stream)
            return &g_timeline.streams[i];
    }
    if (g_timeline.n == g_timeline.cap) {
        size_t ncap = g_timeline.cap ? g_timeline.cap * 2 : 16;
        stream_time *p = realloc(g_timeline.streams, ncap * sizeof *p);
        if (!p)
            die("out of memory (stream timeline)");
        g_timeline.streams = p;
        g_timeline.cap = ncap;
    }
    g_timeline.streams[g_timeline.n] = (stream_time){stream, 0};
    return &g_timeline.streams[g_timeline.n++];
}

/* Places dur ticks of work on stream no earlier than now; returns its start. */
static uint64_t timeline_place(uint32_t stream, uint64_t now, uint64_t dur)
{
    pthread_mutex_lock(&g_timeline.lock);
    stream_time *s = timeline_stream(stream);
    uint64_t start = s->last_end > now ? s->last_end : now;
    s->last_end = start + dur;
    pthread_mutex_unlock(&g_timeline.lock);
    return start;
}

/* Forgets every stream's work: needed when the vendor clock changes. */
static void timeline_clear(void)
{
    pthread_mutex_lock(&g_timeline.lock);
    g_timeline.n = 0;
    pthread_mutex_unlock(&g_timeline.lock);
}

static uint64_t timeline_last_end(int all_streams, uint32_t stream)
{
    uint64_t end = 0;
    pthread_mutex_lock(&g_timeline.lock);
    for (size_t i = 0; i < g_timeline.n; i++) {
        const stream_time *s = &g_timeline.streams[i];
        if ((all_streams || s->stream == stream) && s->last_end > end)
            end = s->last_end;
    }
    pthread_mutex_unlock(&g_timeline.lock);
    return end;
}

/* ---- buffers ---- */

static void list_push(buffer_list *l, emu_buffer b)
{
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 8;
        emu_buffer *p = realloc(l->items, ncap * sizeof *p);
        if (!p)
            die("out of memory (buffer list)");
        l->items = p;
        l->cap = ncap;
    }
    l->items[l->n++] = b;
}

static emu_buffer list_pop_front(buffer_list *l)
{
    emu_buffer b = l->items[0];
    memmove(l->items, l->items + 1, (l->n - 1) * sizeof *l->items);
    l->n--;
    return b;
}

static size_t align8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

static int buffer_fits(const emu_buffer *b, size_t need)
{
    return b->used + need <= b->limit && (b->max_records == 0 || b->records < b->max_records);
}

/* Called with g_buf.lock held. */
static void retire_current(void)
{
    list_push(&g_buf.ready, g_buf.current);
    g_buf.has_current = 0;
}

/* Asks the tracer for a buffer (no lock held); 0 when refused. */
static int request_buffer(emu_buffer_request_fn request, emu_buffer *out)
{
    uint8_t *base = NULL;
    size_t size = 0, max_records = 0;
    count(&g_stats.buffers_requested);
    if (take_one(&g_pending_refuse)) {
        count(&g_stats.buffers_refused);
        return 0;
    }
    request(&base, &size, &max_records);
    if (!base || size == 0) {
        count(&g_stats.buffers_refused);
        return 0;
    }
    size_t limit = size;
    if (g_faults.small_buffer && g_faults.small_buffer < limit)
        limit = g_faults.small_buffer;
    *out = (emu_buffer){base, size, limit, 0, 0, max_records};
    return 1;
}

/* Calls the tracer's completion callback, in the shape it was registered with. */
static void hand_back(emu_buffer_complete_fn complete, emu_buffer_complete3_fn complete3, const emu_buffer *b)
{
    if (complete3)
        complete3(b->base, b->size, b->used);
    else if (complete)
        complete(NULL, 0, b->base, b->size, b->used);
}

/* Hands every full buffer back to the tracer, outside the lock. */
static void deliver_ready(void)
{
    for (;;) {
        pthread_mutex_lock(&g_buf.lock);
        if (g_buf.ready.n == 0) {
            pthread_mutex_unlock(&g_buf.lock);
            return;
        }
        emu_buffer b = list_pop_front(&g_buf.ready);
        emu_buffer_complete_fn complete = g_buf.complete;
        emu_buffer_complete3_fn complete3 = g_buf.complete3;
        pthread_mutex_unlock(&g_buf.lock);
        count(&g_stats.buffers_completed);
        t_in_completed++;
        hand_back(complete, complete3, &b);
        t_in_completed--;
    }
}

/* Stores one record of size bytes, or counts it as dropped. */
static void append_record(const uint8_t *record, uint32_t size)
{
    size_t need = align8(size);
    size_t ready_before;
    pthread_mutex_lock(&g_buf.lock);
    for (;;) {
        if (!g_buf.request) {
            count_drop();
            break;
        }
        if (g_buf.has_current && buffer_fits(&g_buf.current, need)) {
            emu_buffer *b = &g_buf.current;
            memcpy(b->base + b->used, record, size);
            memset(b->base + b->used + size, 0, need - size);
            b->used += need;
            b->records++;
            if (b->max_records && b->records == b->max_records)
                retire_current();
            break;
        }
        if (g_buf.has_current && g_buf.current.used == 0) {
            count_drop(); /* larger than an empty buffer */
            break;
        }
        if (g_buf.has_current)
            retire_current();
        if (g_buf.spare.n) {
            g_buf.current = list_pop_front(&g_buf.spare);
            g_buf.has_current = 1;
            continue;
        }
        emu_buffer_request_fn request = g_buf.request;
        emu_buffer fresh;
        pthread_mutex_unlock(&g_buf.lock);
        int ok = request_buffer(request, &fresh);
        pthread_mutex_lock(&g_buf.lock);
        if (!ok) {
            count_drop();
            break;
        }
        list_push(&g_buf.spare, fresh);
    }
    ready_before = g_buf.ready.n;
    pthread_mutex_unlock(&g_buf.lock);
    if (ready_before)
        deliver_ready();
}

static void write_and_append(const emu_layout *l, const uint64_t values[EMU_F_COUNT])
{
    _Alignas(8) uint8_t record[EMU_MAX_RECORD];
    layout_write(l, record, values);
    append_record(record, l->size);
}

static emu_result register_buffers(emu_buffer_request_fn request, emu_buffer_complete_fn complete,
                                   emu_buffer_complete3_fn complete3)
{
    if (!request || (!complete && !complete3))
        return g_vendor->result.invalid_parameter;
    pthread_mutex_lock(&g_buf.lock);
    g_buf.request = request;
    g_buf.complete = complete;
    g_buf.complete3 = complete3;
    pthread_mutex_unlock(&g_buf.lock);
    return g_vendor->result.success;
}

emu_result emu_register_buffers(emu_buffer_request_fn request, emu_buffer_complete_fn complete)
{
    return register_buffers(request, complete, NULL);
}

emu_result emu_register_buffers3(emu_buffer_request_fn request, emu_buffer_complete3_fn complete)
{
    return register_buffers(request, NULL, complete);
}

static int kind_on(uint32_t kind)
{
    return kind > 0 && kind < EMU_MAX_KINDS && atomic_load_explicit(&g_kind_on[kind], memory_order_relaxed);
}

emu_result emu_activity_enable(int kind, int enable)
{
    if (kind <= 0 || (uint32_t)kind > g_vendor->kind.max_valid || kind >= EMU_MAX_KINDS)
        return g_vendor->result.invalid_kind;
    atomic_store(&g_kind_on[kind], enable ? 1 : 0);
    return g_vendor->result.success;
}

static void inject_leftover_faults(void);

/* The flush-hang fault: the vendor's FlushAll blocks for ever, or flush-hang=MS long, as a
 * library waiting on a hung device does. No emulator lock is held meanwhile. */
static void flush_hang(void)
{
    uint64_t ms = g_faults.flush_hang_ms;
    uint64_t until = realtime_ns() + ms * 1000000u;
    while (!ms || realtime_ns() < until) {
        struct timespec nap = {0, 20000000};
        nanosleep(&nap, NULL);
    }
}

static emu_result flush_all_now(uint32_t flag)
{
    (void)flag; /* every record is complete when written: forced or not is the same */
    inject_leftover_faults();
    pthread_mutex_lock(&g_buf.lock);
    if (g_buf.has_current && g_buf.current.used > 0)
        retire_current();
    pthread_mutex_unlock(&g_buf.lock);
    deliver_ready();
    return g_vendor->result.success;
}

emu_result emu_flush_all(uint32_t flag)
{
    if (g_faults.flush_hang)
        flush_hang();
    return flush_all_now(flag);
}

emu_result emu_dropped_records(size_t *dropped)
{
    if (!dropped)
        return g_vendor->result.invalid_parameter;
    *dropped = (size_t)atomic_exchange(&g_dropped_unread, 0);
    return g_vendor->result.success;
}

int emu_in_buffer_completed(void)
{
    return t_in_completed > 0;
}

/* ---- iterating a buffer (GetNextRecord) ---- */

static uint32_t read_u32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static uint32_t record_size_of_kind(uint32_t kind)
{
    const emu_vendor *v = g_vendor;
    if (kind == 0)
        return 0;
    if (kind == v->kind.kernel || kind == v->kind.concurrent_kernel)
        return v->kernel.size;
    if (kind == v->kind.memcpy)
        return v->memcpy.size;
    if (kind == v->kind.memset)
        return v->memset.size;
    if (kind == v->kind.runtime || kind == v->kind.driver)
        return v->api.size;
    if (kind == v->kind.external_correlation)
        return v->external_correlation.size;
    if (v->malformed_style == EMU_MALFORMED_UNKNOWN_KIND && kind == v->bogus_kind)
        return v->bogus_size;
    return 0;
}

emu_result emu_next_record(uint8_t *buffer, size_t valid_size, void **record)
{
    const emu_result_codes *r = &g_vendor->result;
    size_t offset = 0;
    if (!buffer || !record)
        return r->invalid_parameter;
    if (*record) {
        uintptr_t prev = (uintptr_t)*record, base = (uintptr_t)buffer;
        if (prev < base || prev - base >= valid_size || valid_size - (prev - base) < 4)
            return r->invalid_parameter;
        uint32_t kind = read_u32((const uint8_t *)*record);
        uint32_t size = record_size_of_kind(kind);
        if (size == 0)
            return r->invalid_kind;
        if (kind == g_vendor->kind.external_correlation && g_faults.stale_iterator)
            return r->success; /* MACA 3.8: the same pointer again */
        offset = (size_t)(prev - base) + size;
    }
    if (offset >= valid_size || valid_size - offset < 4)
        return r->max_limit_reached;
    uint32_t size = record_size_of_kind(read_u32(buffer + offset));
    if (size == 0 || valid_size - offset < size)
        return r->invalid_kind;
    *record = buffer + offset;
    return r->success;
}

/* ---- external correlation ---- */

static int external_kind_ok(int kind)
{
    return kind > 0 && (uint32_t)kind < g_vendor->external_kind_limit && kind < EMU_EXT_KINDS;
}

emu_result emu_push_external(int kind, uint64_t id)
{
    if (!external_kind_ok(kind))
        return g_vendor->result.invalid_parameter;
    if (t_ext.depth[kind] == EMU_EXT_DEPTH)
        return g_vendor->result.invalid_operation;
    t_ext.ids[kind][t_ext.depth[kind]++] = id;
    return g_vendor->result.success;
}

emu_result emu_pop_external(int kind, uint64_t *id)
{
    if (!external_kind_ok(kind))
        return g_vendor->result.invalid_parameter;
    if (t_ext.depth[kind] == 0)
        return g_vendor->result.queue_empty;
    uint64_t top = t_ext.ids[kind][--t_ext.depth[kind]];
    if (id)
        *id = top;
    return g_vendor->result.success;
}

/* ---- the subscriber ---- */

static int subscriber_ok(void *handle)
{
    return handle == (void *)&g_sub && atomic_load(&g_sub.claimed);
}

emu_result emu_subscribe(void **handle, emu_callback_fn fn, void *userdata)
{
    int expected = 0;
    if (!handle || !fn)
        return g_vendor->result.invalid_parameter;
    if (g_faults.subscribe_fail || !atomic_compare_exchange_strong(&g_sub.claimed, &expected, 1))
        return g_vendor->result.multiple_subscribers;
    atomic_store(&g_sub.fn, fn);
    atomic_store(&g_sub.userdata, userdata);
    atomic_store_explicit(&g_sub.active, 1, memory_order_release);
    *handle = (void *)&g_sub;
    return g_vendor->result.success;
}

static void clear_enables(void)
{
    for (int i = 0; i < EMU_MAX_DOMAINS; i++)
        atomic_store(&g_sub.domain_on[i], 0);
    for (int i = 0; i < EMU_MAX_CBIDS; i++)
        atomic_store(&g_sub.cbid_on[i], 0);
}

emu_result emu_unsubscribe(void *handle)
{
    if (!subscriber_ok(handle))
        return g_vendor->result.invalid_parameter;
    atomic_store(&g_sub.active, 0);
    clear_enables();
    atomic_store(&g_sub.claimed, 0);
    return g_vendor->result.success;
}

static int domain_ok(int domain)
{
    return domain > 0 && (uint32_t)domain < g_vendor->callback_domain_limit && domain < EMU_MAX_DOMAINS;
}

emu_result emu_enable_domain(uint32_t enable, void *handle, int domain)
{
    if (!subscriber_ok(handle) || !domain_ok(domain))
        return g_vendor->result.invalid_parameter;
    atomic_store(&g_sub.domain_on[domain], enable ? 1 : 0);
    if ((uint32_t)domain == g_vendor->callback_domain_runtime) {
        for (uint32_t i = 0; i < g_vendor->cbid_limit && i < EMU_MAX_CBIDS; i++)
            atomic_store(&g_sub.cbid_on[i], enable ? 1 : 0);
    }
    return g_vendor->result.success;
}

emu_result emu_enable_callback(uint32_t enable, void *handle, int domain, uint32_t cbid)
{
    if (!subscriber_ok(handle) || !domain_ok(domain))
        return g_vendor->result.invalid_parameter;
    if ((uint32_t)domain != g_vendor->callback_domain_runtime)
        return g_vendor->result.success; /* other domains never fire here */
    if (cbid >= g_vendor->cbid_limit || cbid >= EMU_MAX_CBIDS)
        return g_vendor->result.invalid_parameter;
    atomic_store(&g_sub.cbid_on[cbid], enable ? 1 : 0);
    return g_vendor->result.success;
}

int emu_call_for_cbid(uint32_t cbid)
{
    for (int i = 0; i < WL_CALL_COUNT; i++) {
        if (g_vendor->cbid[i] == cbid)
            return i;
    }
    return -1;
}

/* ---- result strings ---- */

#define EMU_RESULT_NAMES(X)                                             \
    X(success, "SUCCESS")                                               \
    X(invalid_parameter, "ERROR_INVALID_PARAMETER")                     \
    X(invalid_operation, "ERROR_INVALID_OPERATION")                     \
    X(max_limit_reached, "ERROR_MAX_LIMIT_REACHED")                     \
    X(not_initialized, "ERROR_NOT_INITIALIZED")                         \
    X(queue_empty, "ERROR_QUEUE_EMPTY")                                 \
    X(invalid_kind, "ERROR_INVALID_KIND")                               \
    X(multiple_subscribers, "ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED") \
    X(unknown, "ERROR_UNKNOWN")

#define EMU__COUNT_ONE(field, text) +1
static char g_result_names[0 EMU_RESULT_NAMES(EMU__COUNT_ONE)][64];

static void build_result_names(void)
{
    int i = 0;
#define EMU__BUILD_NAME(field, text) \
    snprintf(g_result_names[i++], sizeof g_result_names[0], "%s%s", g_vendor->result_prefix, text);
    EMU_RESULT_NAMES(EMU__BUILD_NAME)
#undef EMU__BUILD_NAME
}

emu_result emu_result_string(emu_result code, const char **str)
{
    int i = 0;
    if (!str)
        return g_vendor->result.invalid_parameter;
#define EMU__MATCH_NAME(field, text)      \
    if (code == g_vendor->result.field) { \
        *str = g_result_names[i];         \
        return g_vendor->result.success;  \
    }                                     \
    i++;
    EMU_RESULT_NAMES(EMU__MATCH_NAME)
#undef EMU__MATCH_NAME
    *str = NULL;
    return g_vendor->result.invalid_parameter;
}

/* ---- one runtime call ---- */

typedef struct call_ctx {
    int call;
    const wl_stmt *st;
    uint32_t cbid;
    uint64_t correlation;
    uint64_t start, end;         /* the API call, vendor clock */
    uint64_t queued;             /* when the device work was placed */
    uint64_t dev_start, dev_end; /* the device work, vendor clock */
    int has_device_work;
    int return_value;          /* what the emulated call returns (always 0) */
    uint64_t correlation_data; /* the subscriber's per-call slot */
    /* The callback data, written at the call's first callback and handed to both, as a
     * runtime hands its tracer one prebuilt struct: only the site changes at exit. */
    uint8_t *cb_block;           /* EMU_MAX_RECORD bytes on emu_runtime_call's stack */
    const emu_field_at *cb_site; /* the site's place in it, or NULL */
    emu_thread_counts *counts;   /* the calling thread's statistics */
    int cb_built;
} call_ctx;

static uint64_t next_correlation(void)
{
    uint64_t id;
    do
        id = atomic_fetch_add(&g_next_correlation, 1);
    while (id == 0);
    return id;
}

/* Every field, one by one (keep in step with call_ctx): an initializer of the whole
 * struct compiles to rep stos, whose start-up costs more than the rest of a plain call. */
static void call_ctx_init(call_ctx *c, int call, const wl_stmt *st, uint8_t *cb_block)
{
    c->call = call;
    c->st = st;
    c->cbid = g_vendor->cbid[call];
    c->correlation = next_correlation();
    c->start = c->end = c->queued = c->dev_start = c->dev_end = 0;
    c->has_device_work = 0;
    c->return_value = 0;
    c->correlation_data = 0;
    c->cb_block = cb_block;
    c->cb_site = NULL;
    c->counts = NULL;
    c->cb_built = 0;
}

static uint32_t thread_id(void)
{
    if (!t_tid)
        t_tid = (uint32_t)syscall(SYS_gettid);
    return t_tid;
}

static const char *symbol_of(const call_ctx *c)
{
    return c->st && c->st->kind == WL_STMT_LAUNCH ? c->st->u.launch.kernel : NULL;
}

/* What a callback-data field carries for call c at site; 0 for a field a callback has not. */
static uint64_t callback_value(call_ctx *c, int field, uint32_t site)
{
    switch (field) {
    case EMU_F_CB_SITE:
        return site;
    case EMU_F_CB_FUNCTION_NAME:
        return (uintptr_t)g_vendor->api_name[c->call];
    case EMU_F_CB_RETURN_VALUE_PTR:
        return (uintptr_t)&c->return_value;
    case EMU_F_CB_SYMBOL_NAME:
        return (uintptr_t)symbol_of(c);
    case EMU_F_CB_CONTEXT_PTR:
        return (uintptr_t)&g_context_token;
    case EMU_F_CB_CONTEXT_UID:
        return 1;
    case EMU_F_CB_CORRELATION_DATA:
        return (uintptr_t)&c->correlation_data;
    case EMU_F_CORRELATION:
        return c->correlation;
    default:
        return 0;
    }
}

/* The call's callback data, from the layout's field list (zero where no field is). */
static void build_callback_block(call_ctx *c, uint32_t site)
{
    const emu_layout *l = &g_vendor->callback_data;
    memset(c->cb_block, 0, l->size);
    c->cb_site = NULL;
    for (uint32_t i = 0; i < l->nfields; i++) {
        const emu_field_at *f = &l->fields[i];
        put_field(c->cb_block, f, callback_value(c, f->field, site));
        if (f->field == EMU_F_CB_SITE)
            c->cb_site = f;
    }
    if (g_vendor->complete_callback_data)
        g_vendor->complete_callback_data(c->cb_block, c->call, c->st);
    c->counts = thread_counts();
    c->cb_built = 1;
}

static void fire_callback(call_ctx *c, uint32_t site)
{
    if (!atomic_load_explicit(&g_sub.active, memory_order_acquire) || c->cbid >= EMU_MAX_CBIDS ||
        !atomic_load_explicit(&g_sub.cbid_on[c->cbid], memory_order_relaxed))
        return;
    emu_callback_fn fn = atomic_load(&g_sub.fn);
    void *userdata = atomic_load(&g_sub.userdata);
    if (!c->cb_built)
        build_callback_block(c, site);
    else if (c->cb_site)
        put_field(c->cb_block, c->cb_site, site);
    count_callback_fired(c->counts);
    fn(userdata, (int)g_vendor->callback_domain_runtime, c->cbid, c->cb_block);
}

static void emit_external_correlations(const call_ctx *c)
{
    if (!kind_on(g_vendor->kind.external_correlation))
        return;
    for (int k = 1; k < EMU_EXT_KINDS && (uint32_t)k < g_vendor->external_kind_limit; k++) {
        if (t_ext.depth[k] == 0)
            continue;
        uint64_t v[EMU_F_COUNT] = {0};
        v[EMU_F_KIND] = g_vendor->kind.external_correlation;
        v[EMU_F_EXTERNAL_KIND] = (uint64_t)k;
        v[EMU_F_EXTERNAL_ID] = t_ext.ids[k][t_ext.depth[k] - 1];
        v[EMU_F_CORRELATION] = c->correlation;
        write_and_append(&g_vendor->external_correlation, v);
        count(&g_stats.external_correlation_records);
    }
}

static void emit_api_record(const call_ctx *c)
{
    if (!kind_on(g_vendor->kind.runtime))
        return;
    uint64_t v[EMU_F_COUNT] = {0};
    v[EMU_F_KIND] = g_vendor->kind.runtime;
    v[EMU_F_CBID] = c->cbid;
    v[EMU_F_START] = c->start;
    v[EMU_F_END] = c->end;
    v[EMU_F_PROCESS] = (uint64_t)getpid();
    v[EMU_F_THREAD] = thread_id();
    v[EMU_F_CORRELATION] = c->correlation;
    v[EMU_F_RETURN_VALUE] = (uint64_t)c->return_value;
    v[EMU_F_NAME] = (uintptr_t)g_vendor->api_name[c->call]; /* vendors that name API records (MSPTI) */
    write_and_append(&g_vendor->api, v);
    count(&g_stats.api_records);
}

/* The kernel kind records are written with: CONCURRENT_KERNEL when enabled, else KERNEL, else 0. */
static uint32_t kernel_kind(void)
{
    if (kind_on(g_vendor->kind.concurrent_kernel))
        return g_vendor->kind.concurrent_kernel;
    return kind_on(g_vendor->kind.kernel) ? g_vendor->kind.kernel : 0;
}

static void kernel_values(const call_ctx *c, const wl_launch *l, uint64_t v[EMU_F_COUNT])
{
    v[EMU_F_KIND] = kernel_kind();
    v[EMU_F_START] = c->dev_start;
    v[EMU_F_END] = c->dev_end;
    v[EMU_F_COMPLETED] = c->dev_end;
    v[EMU_F_QUEUED] = c->queued;
    v[EMU_F_SUBMITTED] = c->queued;
    v[EMU_F_DEVICE] = atomic_load(&g_device_id);
    v[EMU_F_CONTEXT] = 1;
    v[EMU_F_STREAM] = l->stream;
    v[EMU_F_CORRELATION] = c->correlation;
    v[EMU_F_GRID_X] = l->grid[0];
    v[EMU_F_GRID_Y] = l->grid[1];
    v[EMU_F_GRID_Z] = l->grid[2];
    v[EMU_F_BLOCK_X] = l->block[0];
    v[EMU_F_BLOCK_Y] = l->block[1];
    v[EMU_F_BLOCK_Z] = l->block[2];
    v[EMU_F_REGISTERS] = l->regs;
    v[EMU_F_STATIC_SMEM] = l->smem;
    v[EMU_F_DYNAMIC_SMEM] = l->dyn_smem;
    v[EMU_F_GRID_ID] = atomic_fetch_add(&g_next_grid_id, 1);
    v[EMU_F_NAME] = (uintptr_t)l->kernel;
    v[EMU_F_KERNEL_TYPE] = (uintptr_t)g_vendor->kernel_type;
}

static void emit_zero_time_kernel(uint64_t v[EMU_F_COUNT])
{
    v[EMU_F_START] = v[EMU_F_END] = v[EMU_F_COMPLETED] = v[EMU_F_QUEUED] = v[EMU_F_SUBMITTED] = 0;
    write_and_append(&g_vendor->kernel, v);
    count(&g_stats.injected_zero_time);
}

static void emit_kernel_record(const call_ctx *c)
{
    uint64_t v[EMU_F_COUNT] = {0};
    if (!kernel_kind())
        return;
    kernel_values(c, &c->st->u.launch, v);
    if (take_one(&g_pending_drop)) {
        count_drop();
    } else {
        write_and_append(&g_vendor->kernel, v);
        count(&g_stats.kernel_records);
    }
    if (take_one(&g_pending_zero_time))
        emit_zero_time_kernel(v);
}

static void emit_memcpy_record(const call_ctx *c)
{
    const wl_memcpy *m = &c->st->u.memcpy;
    uint64_t v[EMU_F_COUNT] = {0};
    if (!kind_on(g_vendor->kind.memcpy))
        return;
    if (take_one(&g_pending_drop)) {
        count_drop();
        return;
    }
    v[EMU_F_KIND] = g_vendor->kind.memcpy;
    v[EMU_F_COPY_KIND] = g_vendor->copy_kind[m->dir & 3];
    v[EMU_F_SRC_KIND] = g_vendor->src_memory_kind[m->dir & 3];
    v[EMU_F_DST_KIND] = g_vendor->dst_memory_kind[m->dir & 3];
    v[EMU_F_FLAGS] = g_vendor->memcpy_flags_sync;
    v[EMU_F_BYTES] = m->bytes;
    v[EMU_F_START] = c->dev_start;
    v[EMU_F_END] = c->dev_end;
    v[EMU_F_DEVICE] = atomic_load(&g_device_id);
    v[EMU_F_CONTEXT] = 1;
    v[EMU_F_STREAM] = m->stream;
    v[EMU_F_CORRELATION] = c->correlation;
    v[EMU_F_RUNTIME_CORRELATION] = c->correlation;
    write_and_append(&g_vendor->memcpy, v);
    count(&g_stats.memcpy_records);
}

static void emit_memset_record(const call_ctx *c)
{
    const wl_memset *m = &c->st->u.memset;
    uint64_t v[EMU_F_COUNT] = {0};
    if (!kind_on(g_vendor->kind.memset))
        return;
    if (take_one(&g_pending_drop)) {
        count_drop();
        return;
    }
    v[EMU_F_KIND] = g_vendor->kind.memset;
    v[EMU_F_VALUE] = m->value;
    v[EMU_F_BYTES] = m->bytes;
    v[EMU_F_START] = c->dev_start;
    v[EMU_F_END] = c->dev_end;
    v[EMU_F_DEVICE] = atomic_load(&g_device_id);
    v[EMU_F_CONTEXT] = 1;
    v[EMU_F_STREAM] = m->stream;
    v[EMU_F_CORRELATION] = c->correlation;
    v[EMU_F_FLAGS] = g_vendor->memset_flags_async;
    v[EMU_F_MEMORY_KIND] = g_vendor->memset_memory_kind;
    write_and_append(&g_vendor->memset, v);
    count(&g_stats.memset_records);
}

static int recording_possible(void)
{
    int any = 0;
    pthread_mutex_lock(&g_buf.lock);
    any = g_buf.request != NULL;
    pthread_mutex_unlock(&g_buf.lock);
    for (uint32_t k = 1; any && k < EMU_MAX_KINDS; k++) {
        if (kind_on(k))
            return 1;
    }
    return 0;
}

/* One bad record in the vendor's style (malformed=N). */
static void emit_malformed_record(void)
{
    const emu_vendor *vd = g_vendor;
    if (vd->malformed_style == EMU_MALFORMED_UNKNOWN_KIND) {
        _Alignas(8) uint8_t junk[EMU_MAX_RECORD];
        memset(junk, 0xA5, vd->bogus_size);
        memcpy(junk, &vd->bogus_kind, 4);
        append_record(junk, vd->bogus_size);
    } else if (vd->malformed_style == EMU_MALFORMED_END_BEFORE_START) {
        static const wl_launch bad = {.kernel = "devemu_malformed_kernel", .grid = {1, 1, 1}, .block = {1, 1, 1}};
        uint64_t now = emu_now(), v[EMU_F_COUNT] = {0};
        call_ctx c = {.dev_start = now, .dev_end = now - 1000, .queued = now, .correlation = next_correlation()};
        kernel_values(&c, &bad, v);
        v[EMU_F_KIND] = vd->kind.concurrent_kernel ? vd->kind.concurrent_kernel : vd->kind.kernel;
        write_and_append(&vd->kernel, v);
    } else {
        static const wl_launch bad = {.kernel = "devemu_malformed_kernel", .grid = {0, 0, 0}, .block = {0, 0, 0}};
        uint64_t now = emu_now(), v[EMU_F_COUNT] = {0};
        call_ctx c = {.dev_start = now, .dev_end = now + 1000, .queued = now, .correlation = 0};
        kernel_values(&c, &bad, v);
        v[EMU_F_KIND] = vd->kind.concurrent_kernel ? vd->kind.concurrent_kernel : vd->kind.kernel;
        write_and_append(&vd->kernel, v);
    }
    count(&g_stats.injected_malformed);
}

static void emit_pending_malformed(void)
{
    if (atomic_load(&g_pending_malformed) && recording_possible() && take_one(&g_pending_malformed))
        emit_malformed_record();
}

/* At flush: what the workload gave no chance to inject, so that exactly N come out. */
static void inject_leftover_faults(void)
{
    while (atomic_load(&g_pending_malformed) && recording_possible() && take_one(&g_pending_malformed))
        emit_malformed_record();
    while (kernel_kind() && take_one(&g_pending_zero_time)) {
        static const wl_launch leftover = {.kernel = "devemu_zero_time_kernel", .grid = {1, 1, 1}, .block = {1, 1, 1}};
        uint64_t v[EMU_F_COUNT] = {0};
        call_ctx c = {.correlation = next_correlation()};
        kernel_values(&c, &leftover, v);
        emit_zero_time_kernel(v);
    }
}

static void run_device_work(call_ctx *c)
{
    const wl_stmt *st = c->st;
    uint64_t dur_ns;
    uint32_t stream;
    if (!st)
        return;
    switch (st->kind) {
    case WL_STMT_LAUNCH:
        dur_ns = st->u.launch.dur_ns;
        stream = st->u.launch.stream;
        break;
    case WL_STMT_MEMCPY:
        dur_ns = st->u.memcpy.dur_ns;
        stream = st->u.memcpy.stream;
        break;
    case WL_STMT_MEMSET:
        dur_ns = st->u.memset.dur_ns;
        stream = st->u.memset.stream;
        break;
    case WL_STMT_SYNC:
        wait_until(timeline_last_end(st->u.sync.device_wide, st->u.sync.stream));
        return;
    default:
        return;
    }
    c->queued = emu_now();
    c->dev_start = timeline_place(stream, c->queued, vendor_duration(dur_ns));
    c->dev_end = c->dev_start + vendor_duration(dur_ns);
    c->has_device_work = 1;
    if (st->kind == WL_STMT_MEMCPY)
        wait_until(c->dev_end); /* cudaMemcpy is synchronous */
}

static void emit_device_record(const call_ctx *c)
{
    if (!c->has_device_work)
        return;
    if (c->st->kind == WL_STMT_LAUNCH)
        emit_kernel_record(c);
    else if (c->st->kind == WL_STMT_MEMCPY)
        emit_memcpy_record(c);
    else
        emit_memset_record(c);
}

int emu_runtime_call(int call, const wl_stmt *st)
{
    if (!g_vendor || call < 0 || call >= WL_CALL_COUNT)
        return -1;
    emu_ensure_injected();
    _Alignas(8) uint8_t cb_block[EMU_MAX_RECORD]; /* written only when a callback fires */
    call_ctx c;
    call_ctx_init(&c, call, st, cb_block);
    count(&g_stats.runtime_calls);
    fire_callback(&c, g_vendor->callback_site_enter);
    c.start = emu_now();
    emit_external_correlations(&c);
    run_device_work(&c);
    c.end = emu_now();
    emit_api_record(&c);
    emit_device_record(&c);
    emit_pending_malformed();
    fire_callback(&c, g_vendor->callback_site_exit);
    return 0;
}

/* ---- installation, faults, reset, statistics ---- */

static void arm_faults(void)
{
    atomic_store(&g_pending_zero_time, g_faults.zero_time);
    atomic_store(&g_pending_malformed, g_faults.malformed);
    atomic_store(&g_pending_drop, g_faults.drop);
    atomic_store(&g_pending_refuse, g_faults.refuse_buffer);
    g_clock.epoch_ns = g_vendor->clock_epoch_ns;
    g_clock.rate = g_vendor->clock_rate;
    if (g_faults.has_epoch)
        g_clock.epoch_ns = g_faults.epoch_at_load ? (int64_t)g_load_realtime_ns : g_faults.clock_epoch_ns;
    if (g_faults.has_rate)
        g_clock.rate = g_faults.clock_rate;
    timeline_clear(); /* its times were in the old clock */
}

void emu_core_set_faults(const emu_faults *f)
{
    g_faults = *f;
    arm_faults();
}

void emu_core_install(const emu_vendor *v, const emu_faults *f, uint64_t load_realtime_ns)
{
    const emu_layout *layouts[] = {&v->kernel,       &v->memcpy, &v->memset, &v->api, &v->external_correlation,
                                   &v->callback_data};
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
        check_layout(layouts[i]);
    g_vendor = v;
    g_load_realtime_ns = load_realtime_ns;
    atomic_store(&g_next_correlation, v->first_correlation ? v->first_correlation : 1);
    build_result_names();
    emu_core_set_faults(f);
}

const emu_vendor *emu_vendor_get(void)
{
    return g_vendor;
}

void emu_core_set_device(uint32_t device_id)
{
    atomic_store(&g_device_id, device_id);
}

void emu_core_reset(void)
{
    flush_all_now(0);
    pthread_mutex_lock(&g_buf.lock);
    buffer_list unused = g_buf.spare; /* handed back empty, so the tracer loses nothing */
    emu_buffer_complete_fn complete = g_buf.complete;
    emu_buffer_complete3_fn complete3 = g_buf.complete3;
    if (g_buf.has_current)
        list_push(&unused, g_buf.current);
    g_buf.spare = (buffer_list){0};
    g_buf.has_current = 0;
    g_buf.request = NULL;
    g_buf.complete = NULL;
    g_buf.complete3 = NULL;
    pthread_mutex_unlock(&g_buf.lock);
    for (size_t i = 0; i < unused.n; i++)
        hand_back(complete, complete3, &unused.items[i]);
    free(unused.items);
    for (int k = 0; k < EMU_MAX_KINDS; k++)
        atomic_store(&g_kind_on[k], 0);
    atomic_store(&g_sub.active, 0);
    clear_enables();
    atomic_store(&g_sub.claimed, 0);
    atomic_store(&g_timestamp_fn, NULL);
    atomic_store(&g_dropped_unread, 0);
#define EMU__ZERO(name) atomic_store(&g_stats.name, 0);
    EMU_STAT_NAMES(EMU__ZERO)
#undef EMU__ZERO
    atomic_store(&g_thread_counts.callbacks_fired_at_reset, callbacks_fired_total());
    arm_faults();
}

void emu_stats_get(devemu_stats *out)
{
#define EMU__READ(name) out->name = atomic_load(&g_stats.name);
    EMU_STAT_NAMES(EMU__READ)
#undef EMU__READ
    out->callbacks_fired = callbacks_fired_total() - atomic_load(&g_thread_counts.callbacks_fired_at_reset);
}
