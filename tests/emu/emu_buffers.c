/* emu_buffers.c: the activity buffers of the emulated runtime: buffers asked of the
 * tracer's buffer-requested callback, records appended under one mutex (or counted as
 * dropped), full buffers handed back through buffer-completed outside the lock on the
 * thread that filled them, FlushAll, the activity kinds enabled, and GetNextRecord's walk
 * over a delivered buffer. */
#include <time.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_core.h"

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

static _Atomic uint8_t g_kind_on[EMU_MAX_KINDS];
static _Atomic uint64_t g_dropped_unread; /* reset by GetNumDroppedRecords */
static _Thread_local int t_in_completed;

void emu__count_drop(void)
{
    emu__count(&g_dropped_unread);
    emu__count(&emu__stats.dropped_records);
}

/* ---- buffers ---- */

static void list_push(buffer_list *l, emu_buffer b)
{
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 8;
        emu_buffer *p = realloc(l->items, ncap * sizeof *p);
        if (!p)
            emu__die("out of memory (buffer list)");
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
    emu__count(&emu__stats.buffers_requested);
    if (emu__take_one(&emu__pending_refuse)) {
        emu__count(&emu__stats.buffers_refused);
        return 0;
    }
    request(&base, &size, &max_records);
    if (!base || size == 0) {
        emu__count(&emu__stats.buffers_refused);
        return 0;
    }
    size_t limit = size;
    if (emu__faults.small_buffer && emu__faults.small_buffer < limit)
        limit = emu__faults.small_buffer;
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
        emu__count(&emu__stats.buffers_completed);
        t_in_completed++;
        hand_back(complete, complete3, &b);
        t_in_completed--;
    }
}

/* Stores one record of size bytes, or counts it as dropped. */
void emu__append_record(const uint8_t *record, uint32_t size)
{
    size_t need = align8(size);
    size_t ready_before;
    pthread_mutex_lock(&g_buf.lock);
    for (;;) {
        if (!g_buf.request) {
            emu__count_drop();
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
            emu__count_drop(); /* larger than an empty buffer */
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
            emu__count_drop();
            break;
        }
        list_push(&g_buf.spare, fresh);
    }
    ready_before = g_buf.ready.n;
    pthread_mutex_unlock(&g_buf.lock);
    if (ready_before)
        deliver_ready();
}

void emu__write_and_append(const emu_layout *l, const uint64_t values[EMU_F_COUNT])
{
    _Alignas(8) uint8_t record[EMU_MAX_RECORD];
    emu__layout_write(l, record, values);
    emu__append_record(record, l->size);
}

static emu_result register_buffers(emu_buffer_request_fn request, emu_buffer_complete_fn complete,
                                   emu_buffer_complete3_fn complete3)
{
    if (!request || (!complete && !complete3))
        return emu__vendor->result.invalid_parameter;
    pthread_mutex_lock(&g_buf.lock);
    g_buf.request = request;
    g_buf.complete = complete;
    g_buf.complete3 = complete3;
    pthread_mutex_unlock(&g_buf.lock);
    return emu__vendor->result.success;
}

emu_result emu_register_buffers(emu_buffer_request_fn request, emu_buffer_complete_fn complete)
{
    return register_buffers(request, complete, NULL);
}

emu_result emu_register_buffers3(emu_buffer_request_fn request, emu_buffer_complete3_fn complete)
{
    return register_buffers(request, NULL, complete);
}

int emu__kind_on(uint32_t kind)
{
    return kind > 0 && kind < EMU_MAX_KINDS && atomic_load_explicit(&g_kind_on[kind], memory_order_relaxed);
}

emu_result emu_activity_enable(int kind, int enable)
{
    if (kind <= 0 || (uint32_t)kind > emu__vendor->kind.max_valid || kind >= EMU_MAX_KINDS)
        return emu__vendor->result.invalid_kind;
    atomic_store(&g_kind_on[kind], enable ? 1 : 0);
    return emu__vendor->result.success;
}

/* The flush-hang fault: the vendor's FlushAll blocks for ever, or flush-hang=MS long, as a
 * library waiting on a hung device does. No emulator lock is held meanwhile. */
static void flush_hang(void)
{
    uint64_t ms = emu__faults.flush_hang_ms;
    uint64_t until = emu__realtime_ns() + ms * 1000000u;
    while (!ms || emu__realtime_ns() < until) {
        struct timespec nap = {0, 20000000};
        nanosleep(&nap, NULL);
    }
}

emu_result emu__flush_all_now(uint32_t flag)
{
    (void)flag; /* every record is complete when written: forced or not is the same */
    emu__inject_leftover_faults();
    pthread_mutex_lock(&g_buf.lock);
    if (g_buf.has_current && g_buf.current.used > 0)
        retire_current();
    pthread_mutex_unlock(&g_buf.lock);
    deliver_ready();
    return emu__vendor->result.success;
}

emu_result emu_flush_all(uint32_t flag)
{
    if (emu__faults.flush_hang)
        flush_hang();
    return emu__flush_all_now(flag);
}

emu_result emu_dropped_records(size_t *dropped)
{
    if (!dropped)
        return emu__vendor->result.invalid_parameter;
    *dropped = (size_t)atomic_exchange(&g_dropped_unread, 0);
    return emu__vendor->result.success;
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
    const emu_vendor *v = emu__vendor;
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
    if (v->kind.communication && kind == v->kind.communication)
        return v->communication.size;
    if (v->kind.marker && kind == v->kind.marker)
        return v->marker.size;
    if (v->kind.memory && kind == v->kind.memory)
        return v->memory.size;
    if (v->malformed_style == EMU_MALFORMED_UNKNOWN_KIND && kind == v->bogus_kind)
        return v->bogus_size;
    return 0;
}

emu_result emu_next_record(uint8_t *buffer, size_t valid_size, void **record)
{
    const emu_result_codes *r = &emu__vendor->result;
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
        if (kind == emu__vendor->kind.external_correlation && emu__faults.stale_iterator)
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

int emu__recording_possible(void)
{
    int any = 0;
    pthread_mutex_lock(&g_buf.lock);
    any = g_buf.request != NULL;
    pthread_mutex_unlock(&g_buf.lock);
    for (uint32_t k = 1; any && k < EMU_MAX_KINDS; k++) {
        if (emu__kind_on(k))
            return 1;
    }
    return 0;
}

void emu__buffers_reset(void)
{
    emu__flush_all_now(0);
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
    atomic_store(&g_dropped_unread, 0);
}
