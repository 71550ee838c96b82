/* roctracer_decode.c: ROCtracer's activity records into devtrace events: classifying a
 * record by domain, op and kind, the launch table that carries a kernel's grid, block and
 * dynamic shared memory from the HIP call's enter to its device record, and the walk over
 * one delivered range of 64-byte records (roctracer_records.h has the layouts and the
 * declarations). The binding and the callbacks are in roctracer.c; tests decode
 * hand-built buffers through these functions alone.
 *
 * Allocates nothing but the launch table (at dt_roc_decoder_init), takes no lock but the
 * name table's on a kernel name's first sight on a thread, formats no text. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/session.h"
#include "roctracer_records.h"

#define ROC_NAME_CACHE 256 /* kernel names per decoding thread */
#define ROC_MAX_NAME 4096  /* bytes of a kernel name read at most */
#define ROC_TOMBSTONE UINT64_MAX
#define ROC_SMALL_MAX (1u << 20)  /* pointers are NULL or above this; shared memory below */
#define ROC_STREAM_HANDLE_MAX 15u /* hipStreamLegacy, hipStreamPerThread: tiny handles */

dt_roc_class dt_roc_classify(uint32_t domain, uint32_t op, uint32_t kind, uint32_t *direction, int *unknown_kind)
{
    *direction = DEVTRACE_COPY_UNKNOWN;
    *unknown_kind = 0;
    if (domain != DT_ROC_DOMAIN_HIP_OPS)
        return domain < DT_ROC_DOMAIN_NUMBER ? DT_ROC_CLASS_NOT_OURS : DT_ROC_CLASS_MALFORMED;
    if (op > DT_ROC_OP_BARRIER)
        return DT_ROC_CLASS_MALFORMED;
    if (op == DT_ROC_OP_BARRIER)
        return DT_ROC_CLASS_BARRIER;
    switch (kind) {
    case DT_ROC_KIND_KERNEL:
    case DT_ROC_KIND_TASK:
        return DT_ROC_CLASS_KERNEL;
    case DT_ROC_KIND_COPY_DTOH:
    case DT_ROC_KIND_COPY2D_DTOH:
        *direction = DEVTRACE_COPY_DTOH;
        return DT_ROC_CLASS_MEMCPY;
    case DT_ROC_KIND_COPY_HTOD:
    case DT_ROC_KIND_COPY2D_HTOD:
        *direction = DEVTRACE_COPY_HTOD;
        return DT_ROC_CLASS_MEMCPY;
    case DT_ROC_KIND_COPY_DTOD:
    case DT_ROC_KIND_COPY2D_DTOD:
        *direction = DEVTRACE_COPY_DTOD;
        return DT_ROC_CLASS_MEMCPY;
    case DT_ROC_KIND_FILL:
        return DT_ROC_CLASS_MEMSET;
    default:
        *unknown_kind = 1;
        return op == DT_ROC_OP_DISPATCH ? DT_ROC_CLASS_KERNEL : DT_ROC_CLASS_MEMCPY;
    }
}

int dt_roc_launch_shared_bytes(uint64_t word40, uint64_t word48, uint32_t *bytes)
{
    if (word40 >= ROC_SMALL_MAX) { /* args__val (a pointer) @40: sharedMemBytes @48 */
        if (word48 >= ROC_SMALL_MAX)
            return 0;
        *bytes = (uint32_t)word48;
        return 1;
    }
    if (word40 != 0) { /* sharedMemBytes @40 (older layout) */
        *bytes = (uint32_t)word40;
        return 1;
    }
    /* 0 @40: older layout with no shared memory (@48: the stream, NULL, a pointer or a
     * tiny special handle), or newer with args__val NULL (@48: sharedMemBytes). */
    *bytes = word48 <= ROC_STREAM_HANDLE_MAX || word48 >= ROC_SMALL_MAX ? 0 : (uint32_t)word48;
    return 1;
}

static size_t pending_slot(uint64_t key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 40) & (DT_ROC_PENDING_SLOTS - 1);
}

int dt_roc_pending_put(dt_roc_decoder *d, uint64_t correlation, const dt_roc_launch *launch)
{
    if (!d->pending || correlation == 0 || correlation == ROC_TOMBSTONE)
        return -1;
    size_t i = pending_slot(correlation);
    for (unsigned p = 0; p < DT_ROC_PENDING_PROBES; p++, i = (i + 1) & (DT_ROC_PENDING_SLOTS - 1)) {
        dt_roc_pending *e = &d->pending[i];
        uint64_t k = atomic_load_explicit(&e->key, memory_order_acquire);
        if ((k == 0 || k == ROC_TOMBSTONE) && atomic_compare_exchange_strong(&e->key, &k, correlation)) {
            if (launch)
                e->launch = *launch;
            else
                memset(&e->launch, 0, sizeof e->launch);
            atomic_store_explicit(&e->ready, 1, memory_order_release);
            return 0;
        }
    }
    atomic_fetch_add_explicit(&d->pending_full, 1, memory_order_relaxed);
    return -1;
}

int dt_roc_pending_take(dt_roc_decoder *d, uint64_t correlation, dt_roc_launch *launch)
{
    if (!d->pending || correlation == 0 || correlation == ROC_TOMBSTONE)
        return 0;
    size_t i = pending_slot(correlation);
    for (unsigned p = 0; p < DT_ROC_PENDING_PROBES; p++, i = (i + 1) & (DT_ROC_PENDING_SLOTS - 1)) {
        dt_roc_pending *e = &d->pending[i];
        uint64_t k = atomic_load_explicit(&e->key, memory_order_acquire);
        if (k == 0)
            return 0;
        if (k != correlation)
            continue;
        if (!atomic_load_explicit(&e->ready, memory_order_acquire))
            return 0; /* still being written: cannot happen after the call's enter */
        dt_roc_launch copy = e->launch;
        atomic_store_explicit(&e->ready, 0, memory_order_relaxed);
        if (!atomic_compare_exchange_strong(&e->key, &k, ROC_TOMBSTONE))
            return 0;
        if (launch)
            *launch = copy;
        return 1;
    }
    return 0;
}

uint64_t dt_roc_pending_drain(dt_roc_decoder *d)
{
    uint64_t left = 0;
    if (!d->pending)
        return 0;
    for (size_t i = 0; i < DT_ROC_PENDING_SLOTS; i++) {
        uint64_t k = atomic_load(&d->pending[i].key);
        if (k != 0 && k != ROC_TOMBSTONE)
            left++;
        atomic_store(&d->pending[i].ready, 0);
        atomic_store(&d->pending[i].key, 0);
    }
    return left;
}

int dt_roc_decoder_init(dt_roc_decoder *d, dt_session *s)
{
    memset(d, 0, sizeof *d);
    d->s = s;
    d->pending = calloc(DT_ROC_PENDING_SLOTS, sizeof *d->pending);
    d->unnamed_kernel_id = dt_session_intern(s, "(unnamed kernel)");
    return d->pending ? 0 : -1;
}

void dt_roc_decoder_free(dt_roc_decoder *d)
{
    free(d->pending);
    d->pending = NULL;
}

static uint32_t fnv1a(const char *s, size_t len)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

/* The interned id of a kernel name. Newer ROCtracer copies names into the pool buffer
 * (valid during the callback only), so the pointer is no key: a per-thread cache keyed
 * by the bytes keeps the name table's lock to a name's first sight. */
static uint32_t roc_kernel_name(dt_roc_decoder *d, const char *name)
{
    static _Thread_local struct {
        uint64_t generation;
        uint32_t hash, len, id;
    } cache[ROC_NAME_CACHE];
    if (!name)
        return d->unnamed_kernel_id;
    size_t len = strnlen(name, ROC_MAX_NAME);
    if (len == 0)
        return d->unnamed_kernel_id;
    uint32_t h = fnv1a(name, len);
    unsigned slot = h & (ROC_NAME_CACHE - 1);
    uint64_t gen = d->s->names.generation;
    if (cache[slot].generation == gen && cache[slot].hash == h && cache[slot].len == len &&
        memcmp(dt_intern_get(&d->s->names, cache[slot].id), name, len) == 0)
        return cache[slot].id;
    uint32_t id = dt_intern_n(&d->s->names, name, len);
    if (!id)
        return d->unnamed_kernel_id;
    cache[slot].generation = gen;
    cache[slot].hash = h;
    cache[slot].len = (uint32_t)len;
    cache[slot].id = id;
    return id;
}

static void note_unknown_kind(dt_roc_decoder *d, uint32_t kind)
{
    uint32_t expected = 0;
    atomic_fetch_add_explicit(&d->unknown_kinds, 1, memory_order_relaxed);
    atomic_compare_exchange_strong(&d->first_unknown_kind, &expected, kind ? kind : UINT32_MAX);
}

/* How many whole records [begin, end) holds; a ragged tail or an inverted or half-NULL
 * range is counted as malformed in *c. */
static size_t roc_range_records(const char *begin, const char *end, dt_roc_walk_counts *c)
{
    if (!begin || !end || end < begin) {
        if (begin != end)
            c->malformed++; /* an inverted or half-NULL range: nothing in it can be read */
        return 0;
    }
    size_t bytes = (size_t)(end - begin);
    if (bytes % DT_ROC_RECORD_SIZE) {
        c->malformed++; /* a ragged tail: not a whole record */
        c->malformed_bytes += bytes % DT_ROC_RECORD_SIZE;
    }
    return bytes / DT_ROC_RECORD_SIZE;
}

/* The event of a device record of `kind` (kernel, copy or fill); its launch
 * configuration, when the call's enter left one, attached. */
static void roc_event_of(dt_roc_decoder *d, const dt_roc_record *r, int kind, uint32_t direction,
                         const dt_roc_launch *launch, devtrace_event *ev, dt_roc_walk_counts *c)
{
    dt_event_zero(ev);
    ev->kind = (uint16_t)kind;
    ev->start_ns = r->begin_ns;
    ev->end_ns = r->end_ns;
    ev->correlation = r->correlation_id;
    ev->device = (uint32_t)r->device_id;
    ev->stream = (uint32_t)r->queue_id;
    if (kind == DEVTRACE_KIND_KERNEL) {
        const char *name;
        memcpy(&name, &r->payload, sizeof name);
        ev->name_id = roc_kernel_name(d, name);
        if (launch && launch->has_grid) {
            ev->flags |= DEVTRACE_EVENT_HAS_LAUNCH;
            memcpy(ev->u.kernel.grid, launch->grid, sizeof launch->grid);
            memcpy(ev->u.kernel.block, launch->block, sizeof launch->block);
            ev->u.kernel.dynamic_shared = launch->has_shared ? launch->dynamic_shared : 0;
            c->launches_attached++;
        }
    } else if (kind == DEVTRACE_KIND_MEMCPY) {
        ev->u.memcpy.bytes = r->payload;
        ev->u.memcpy.direction = direction;
    } else {
        ev->u.memset.bytes = r->payload; /* the fill value is not in the record */
    }
}

/* One record: counted by what it is, stored when it is device work in the window. */
static void roc_walk_record(dt_roc_decoder *d, const dt_roc_record *r, dt_roc_walk_mode mode, dt_roc_walk_counts *c)
{
    c->records++;
    uint32_t direction;
    int unknown;
    dt_roc_class cls = dt_roc_classify(r->domain, r->op, r->kind, &direction, &unknown);
    if (cls == DT_ROC_CLASS_MALFORMED || (cls <= DT_ROC_CLASS_MEMSET && r->device_id < 0)) {
        c->malformed++;
        return;
    }
    if (cls == DT_ROC_CLASS_NOT_OURS) {
        c->not_ours++;
        return;
    }
    if (cls == DT_ROC_CLASS_BARRIER) {
        c->barriers++;
        return;
    }
    if (unknown) {
        c->unknown_kind++;
        note_unknown_kind(d, r->kind);
    }
    int kind = cls == DT_ROC_CLASS_KERNEL   ? DEVTRACE_KIND_KERNEL
               : cls == DT_ROC_CLASS_MEMCPY ? DEVTRACE_KIND_MEMCPY
                                            : DEVTRACE_KIND_MEMSET;
    dt_roc_launch launch;
    int has_launch = dt_roc_pending_take(d, r->correlation_id, &launch);
    if (r->begin_ns == 0 && r->end_ns == 0) {
        c->zero_time++; /* timing not collected: never placed at the clock's origin */
        return;
    }
    if (mode == DT_ROC_WALK_OUT_OF_WINDOW) {
        DT_COUNT(d->s, out_of_window[kind], 1);
        return;
    }
    devtrace_event ev;
    roc_event_of(d, r, kind, direction, has_launch ? &launch : NULL, &ev, c);
    if (dt_emit(d->s, &ev) == 0)
        c->emitted++;
}

void dt_roc_walk(dt_roc_decoder *d, const char *begin, const char *end, dt_roc_walk_mode mode,
                 dt_roc_walk_counts *counts)
{
    dt_roc_walk_counts c;
    memset(&c, 0, sizeof c);
    size_t n = roc_range_records(begin, end, &c);
    for (size_t i = 0; i < n; i++) {
        dt_roc_record r;
        memcpy(&r, begin + i * DT_ROC_RECORD_SIZE, sizeof r);
        roc_walk_record(d, &r, mode, &c);
    }
    if (c.malformed)
        DT_COUNT(d->s, malformed_records, c.malformed);
    if (c.malformed_bytes)
        DT_COUNT(d->s, malformed_bytes, c.malformed_bytes);
    if (c.zero_time)
        DT_COUNT(d->s, zero_timestamp, c.zero_time);
    if (c.barriers)
        atomic_fetch_add_explicit(&d->barriers, c.barriers, memory_order_relaxed);
    if (c.not_ours)
        atomic_fetch_add_explicit(&d->not_ours, c.not_ours, memory_order_relaxed);
    if (counts)
        *counts = c;
}
