/* pti_decode.h: the engine's decoders of the CUDA-shaped record layouts, the helpers a
 * vendor's own decoders share with them, the step that takes one record into the store and
 * the stride walk, inline in the walkers (pti_walk.c's iterator walk and replay's stride
 * walk, mcpti_scan.c, mspti.c's walker). A walk
 * over a 1 MiB buffer meets some 14,000 records; what is per record here is the cost of a
 * decode (docs/performance.md):
 *  - a layout names its decoder by an id (dt_pti_decode_id); dt_pti_decode_record switches on
 *    it and inlines the engine's decoder it names, so the record's fields go from the buffer
 *    to the event in registers, with no call, no spill and no copy of the record; a vendor's
 *    decoder (an id from DT_PTI_DECODE_VENDOR on: MSPTI's, in mspti.c) is reached through the
 *    descriptor's vendor_decode, called, or inline where the vendor's own walker passes its
 *    dispatch to the stride walk (dt_pti_stride_walk);
 *  - a field is read where it lies (DT_PTI_READ), not from a copy of the whole record;
 *  - a kernel's name address is looked up in the walk's own small cache first
 *    (dt_pti_name_cache), the session's table only on its first sight in the walk. */
#ifndef DT_PTI_DECODE_H
#define DT_PTI_DECODE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pti_family.h"
#include "pti_records.h"

/* dst = rec's field of a record type, read at its offset (any alignment). */
#define DT_PTI_READ(dst, type, rec, field)                                                         \
    do {                                                                                           \
        _Static_assert(sizeof(dst) == sizeof(((type *)0)->field), #type "." #field " read whole"); \
        memcpy(&(dst), (rec) + offsetof(type, field), sizeof(dst));                                \
    } while (0)

/* The walk's name cache: where an address was interned in this walk. */
static inline unsigned dt_pti_name_slot(const char *p)
{
    return (unsigned)(((uintptr_t)p >> 3) * 0x9E3779B1u) >> 26 & (DT_PTI_NAME_CACHE - 1);
}

/* A record's string (a kernel name) by its address: the walk's cache, then the session's
 * table (dt_pti_vendor_string: verified, saved into a raw capture); nc may be NULL. */
static inline uint32_t dt_pti_vendor_string_cached(dt_pti_decoder *d, dt_pti_name_cache *nc, const char *p)
{
    if (!nc)
        return dt_pti_vendor_string(d, p);
    unsigned slot = dt_pti_name_slot(p);
    if (nc->ptr[slot] == p)
        return nc->id[slot];
    return dt_pti_vendor_string_miss(d, nc, p);
}

/* The interned name of a runtime callback id (dt_pti_runtime_name). */
static inline uint32_t dt_pti_runtime_name_inline(dt_pti_decoder *d, uint32_t cbid)
{
    if (cbid < DT_PTI_CBID_CACHE) {
        uint32_t id = atomic_load_explicit(&d->cbid_name[cbid], memory_order_relaxed);
        if (id)
            return id;
    }
    return dt_pti_runtime_name_slow(d, cbid);
}

static inline uint32_t dt_pti_copy_direction(const dt_pti_decoder *d, uint32_t copy_kind)
{
    return copy_kind < d->desc->ncopy_kinds ? d->desc->copy_kinds[copy_kind] : DEVTRACE_COPY_UNKNOWN;
}

static inline uint32_t dt_pti_nonnegative(int32_t v)
{
    return v > 0 ? (uint32_t)v : 0;
}

/* What every timed record sets: its kind, span and correlation, and where it ran (device
 * and stream; process and thread for API records). */
static inline void dt_pti_set_span(devtrace_event *ev, uint16_t kind, uint64_t start, uint64_t end,
                                   uint64_t correlation, uint32_t device, uint32_t stream)
{
    ev->kind = kind;
    ev->start_ns = start;
    ev->end_ns = end;
    ev->correlation = correlation;
    ev->device = device;
    ev->stream = stream;
}

/* A kernel's interned name, "(unnamed kernel)" when the record has none. */
static inline uint32_t dt_pti_kernel_name(dt_pti_decoder *d, dt_pti_name_cache *nc, const char *name)
{
    uint32_t id = name ? dt_pti_vendor_string_cached(d, nc, name) : 0;
    return id ? id : d->unnamed_kernel_id;
}

/* ---- the steps a vendor's own decoders share (cnpapi.c, mspti.c) ----
 * A vendor decoder copies its record into its mirror, gives the mirror's fields here and
 * adds what only its kind has; these are inline (always) in its decoders, as they are in
 * the walks. */

/* Where and when a record ran, as its decoder read it (a vendor's, or the engine's memcpy
 * and memset): the span, the correlation, the device and stream (process and thread for API
 * records) and the context (0: the vendor's records carry none). */
typedef struct dt_pti_span {
    uint64_t start, end, correlation;
    uint32_t device, stream, context;
} dt_pti_span;

/* A vendor record's times: both 0 is "not collected" (ZERO_TIME); an end before its start
 * is a bad record (MALFORMED: these vendors' times are one clock's, so it is no clock
 * artefact); else EMIT. */
static inline dt_pti_decoded dt_pti_span_check(uint64_t start, uint64_t end)
{
    if (start == 0 && end == 0)
        return DT_PTI_ZERO_TIME;
    return end < start ? DT_PTI_MALFORMED : DT_PTI_EMIT;
}

/* A vendor record's span checked (dt_pti_span_check) and, when it holds, set on ev as an
 * event of kind (dt_pti_set_span), with its context. */
static inline __attribute__((always_inline)) dt_pti_decoded dt_pti_take_span(devtrace_event *ev, uint16_t kind,
                                                                             dt_pti_span sp)
{
    dt_pti_decoded r = dt_pti_span_check(sp.start, sp.end);
    if (r != DT_PTI_EMIT)
        return r;
    dt_pti_set_span(ev, kind, sp.start, sp.end, sp.correlation, sp.device, sp.stream);
    ev->context = sp.context;
    return DT_PTI_EMIT;
}

/* A vendor's kernel record with no launch data: its span and its name (dt_pti_kernel_name). */
static inline __attribute__((always_inline)) dt_pti_decoded dt_pti_take_kernel(dt_pti_decoder *d, dt_pti_name_cache *nc,
                                                                               devtrace_event *ev, dt_pti_span sp,
                                                                               const char *name)
{
    dt_pti_decoded r = dt_pti_take_span(ev, DEVTRACE_KIND_KERNEL, sp);
    if (r == DT_PTI_EMIT)
        ev->name_id = dt_pti_kernel_name(d, nc, name);
    return r;
}

/* A vendor's memcpy record: its span, bytes and the direction of its copy kind (the
 * descriptor's copy_kinds). */
static inline __attribute__((always_inline)) dt_pti_decoded dt_pti_take_memcpy(dt_pti_decoder *d, devtrace_event *ev,
                                                                               dt_pti_span sp, uint64_t bytes,
                                                                               uint32_t copy_kind)
{
    dt_pti_decoded r = dt_pti_take_span(ev, DEVTRACE_KIND_MEMCPY, sp);
    if (r == DT_PTI_EMIT) {
        ev->u.memcpy.bytes = bytes;
        ev->u.memcpy.direction = dt_pti_copy_direction(d, copy_kind);
    }
    return r;
}

/* A vendor's memset record: its span, bytes and value. */
static inline __attribute__((always_inline)) dt_pti_decoded dt_pti_take_memset(devtrace_event *ev, dt_pti_span sp,
                                                                               uint64_t bytes, uint32_t value)
{
    dt_pti_decoded r = dt_pti_take_span(ev, DEVTRACE_KIND_MEMSET, sp);
    if (r == DT_PTI_EMIT) {
        ev->u.memset.bytes = bytes;
        ev->u.memset.value = value;
    }
    return r;
}

/* An external correlation record: ours (CUSTOM0) and with a correlation id. */
static inline dt_pti_decoded dt_pti_external(dt_pti_decoder *d, uint32_t external_kind, uint64_t correlation,
                                             uint64_t external_id, devtrace_event *ev)
{
    /* CUSTOM0 carries the op's id, CUSTOM1 (the next kind, for every vendor of the family)
     * the user correlation's, as Kineto uses them. */
    if (external_kind == d->desc->external_kind_custom0 + 1) {
        if (correlation == 0)
            return DT_PTI_MALFORMED;
        ev->kind = DEVTRACE_KIND_EXTCORR;
        ev->flags = DEVTRACE_EVENT_HAS_USER_EXTERNAL;
        ev->correlation = correlation;
        ev->user_external_id = external_id;
        return DT_PTI_EMIT;
    }
    if (external_kind != d->desc->external_kind_custom0)
        return DT_PTI_IGNORED; /* another tool's external ids */
    if (correlation == 0)
        return DT_PTI_MALFORMED;
    ev->kind = DEVTRACE_KIND_EXTCORR;
    ev->flags = DEVTRACE_EVENT_HAS_EXTERNAL;
    ev->correlation = correlation;
    ev->external_id = external_id;
    return DT_PTI_EMIT;
}

static inline __attribute__((always_inline)) dt_pti_decoded dt_pti_cupti_kernel(dt_pti_decoder *d, const uint8_t *rec,
                                                                                devtrace_event *ev,
                                                                                dt_pti_name_cache *nc)
{
    typedef dt_cupti_kernel_prefix K;
    uint64_t start, end, queued;
    int32_t grid_x, grid_y, grid_z, block_x, block_y, block_z, static_shared, dynamic_shared;
    uint32_t correlation, device, context, stream;
    uint16_t registers;
    const char *name;
    DT_PTI_READ(start, K, rec, start);
    DT_PTI_READ(end, K, rec, end);
    if (start == 0 && end == 0)
        return DT_PTI_ZERO_TIME;
    DT_PTI_READ(grid_x, K, rec, grid_x);
    DT_PTI_READ(grid_y, K, rec, grid_y);
    DT_PTI_READ(grid_z, K, rec, grid_z);
    DT_PTI_READ(block_x, K, rec, block_x);
    DT_PTI_READ(block_y, K, rec, block_y);
    DT_PTI_READ(block_z, K, rec, block_z);
    if (grid_x <= 0 || grid_y <= 0 || grid_z <= 0 || block_x <= 0 || block_y <= 0 || block_z <= 0)
        return DT_PTI_MALFORMED;
    DT_PTI_READ(correlation, K, rec, correlation_id);
    if ((d->desc->quirks & DT_PTI_QUIRK_STRICT_RECORDS) && correlation == 0)
        return DT_PTI_MALFORMED;
    DT_PTI_READ(device, K, rec, device_id);
    DT_PTI_READ(context, K, rec, context_id);
    DT_PTI_READ(stream, K, rec, stream_id);
    DT_PTI_READ(registers, K, rec, registers_per_thread);
    DT_PTI_READ(static_shared, K, rec, static_shared_memory);
    DT_PTI_READ(dynamic_shared, K, rec, dynamic_shared_memory);
    DT_PTI_READ(name, K, rec, name);
    DT_PTI_READ(queued, K, rec, queued);
    dt_pti_set_span(ev, DEVTRACE_KIND_KERNEL, start, end, correlation, device, stream);
    ev->flags = DEVTRACE_EVENT_HAS_LAUNCH | DEVTRACE_EVENT_HAS_REGS;
    ev->context = context;
    ev->name_id = dt_pti_kernel_name(d, nc, name);
    ev->u.kernel.grid[0] = grid_x;
    ev->u.kernel.grid[1] = grid_y;
    ev->u.kernel.grid[2] = grid_z;
    ev->u.kernel.block[0] = block_x;
    ev->u.kernel.block[1] = block_y;
    ev->u.kernel.block[2] = block_z;
    ev->u.kernel.registers_per_thread = registers;
    ev->u.kernel.static_shared = dt_pti_nonnegative(static_shared);
    ev->u.kernel.dynamic_shared = dt_pti_nonnegative(dynamic_shared);
    if (queued != DT_CUPTI_TIMESTAMP_UNKNOWN_ZERO && queued != DT_CUPTI_TIMESTAMP_UNKNOWN_ALL_ONES) {
        ev->flags |= DEVTRACE_EVENT_HAS_QUEUED;
        ev->u.kernel.queued_ns = queued;
    }
    return DT_PTI_EMIT;
}

/* What the engine's memcpy and memset decoders share: both times 0 is "not collected"
 * (ZERO_TIME); with DT_PTI_QUIRK_STRICT_RECORDS, a record without a correlation id or without
 * bytes is MALFORMED; else its span is set as an event of kind, with its context. */
static inline __attribute__((always_inline)) dt_pti_decoded dt_pti_cupti_take_bytes_span(const dt_pti_decoder *d,
                                                                                         devtrace_event *ev,
                                                                                         uint16_t kind, dt_pti_span sp,
                                                                                         uint64_t bytes)
{
    if (sp.start == 0 && sp.end == 0)
        return DT_PTI_ZERO_TIME;
    if ((d->desc->quirks & DT_PTI_QUIRK_STRICT_RECORDS) && (sp.correlation == 0 || bytes == 0))
        return DT_PTI_MALFORMED;
    dt_pti_set_span(ev, kind, sp.start, sp.end, sp.correlation, sp.device, sp.stream);
    ev->context = sp.context;
    return DT_PTI_EMIT;
}

static inline __attribute__((always_inline)) dt_pti_decoded dt_pti_cupti_memcpy(dt_pti_decoder *d, const uint8_t *rec,
                                                                                devtrace_event *ev)
{
    dt_cupti_memcpy_prefix m;
    memcpy(&m, rec, sizeof m);
    dt_pti_decoded r = dt_pti_cupti_take_bytes_span(
        d, ev, DEVTRACE_KIND_MEMCPY,
        (dt_pti_span){m.start, m.end, m.correlation_id, m.device_id, m.stream_id, m.context_id}, m.bytes);
    if (r != DT_PTI_EMIT)
        return r;
    ev->u.memcpy.bytes = m.bytes;
    ev->u.memcpy.direction = dt_pti_copy_direction(d, m.copy_kind);
    ev->u.memcpy.src_kind = m.src_kind;
    ev->u.memcpy.dst_kind = m.dst_kind;
    return DT_PTI_EMIT;
}

static inline __attribute__((always_inline)) dt_pti_decoded dt_pti_cupti_memset(dt_pti_decoder *d, const uint8_t *rec,
                                                                                devtrace_event *ev)
{
    dt_cupti_memset4 m;
    memcpy(&m, rec, offsetof(dt_cupti_memset4, tail));
    dt_pti_decoded r = dt_pti_cupti_take_bytes_span(
        d, ev, DEVTRACE_KIND_MEMSET,
        (dt_pti_span){m.start, m.end, m.correlation_id, m.device_id, m.stream_id, m.context_id}, m.bytes);
    if (r != DT_PTI_EMIT)
        return r;
    ev->u.memset.bytes = m.bytes;
    ev->u.memset.value = m.value;
    return DT_PTI_EMIT;
}

static inline __attribute__((always_inline)) dt_pti_decoded dt_pti_cupti_api(dt_pti_decoder *d, const uint8_t *rec,
                                                                             devtrace_event *ev)
{
    dt_cupti_api a;
    memcpy(&a, rec, sizeof a);
    if (a.kind != d->desc->kinds.runtime)
        return DT_PTI_IGNORED; /* driver API records: not enabled by us */
    if (a.start == 0 && a.end == 0)
        return DT_PTI_ZERO_TIME;
    if (a.cbid >= DT_PTI_CBID_CACHE)
        return DT_PTI_MALFORMED; /* no vendor has this many calls: garbage, and it would grow the names */
    dt_pti_set_span(ev, DEVTRACE_KIND_RUNTIME, a.start, a.end, a.correlation_id, a.process_id, a.thread_id);
    ev->flags = DEVTRACE_EVENT_HAS_CBID;
    ev->name_id = dt_pti_runtime_name_inline(d, a.cbid);
    ev->u.runtime.cbid = a.cbid;
    ev->u.runtime.return_value = (int32_t)a.return_value;
    return DT_PTI_EMIT;
}

static inline __attribute__((always_inline)) dt_pti_decoded dt_pti_cupti_external(dt_pti_decoder *d, const uint8_t *rec,
                                                                                  devtrace_event *ev)
{
    dt_cupti_external_correlation x;
    memcpy(&x, rec, sizeof x);
    return dt_pti_external(d, x.external_kind, x.correlation_id, x.external_id, ev);
}

/* Decodes one record with its layout's decoder, chosen by the layout's id: the engine's
 * own inline (a switch on the id), a vendor's through the descriptor's table. */
static inline __attribute__((always_inline)) dt_pti_decoded dt_pti_decode_record(const dt_pti_layout *l,
                                                                                 dt_pti_decoder *d, const uint8_t *rec,
                                                                                 devtrace_event *ev,
                                                                                 dt_pti_name_cache *nc)
{
    switch (l->decoder) {
    case DT_PTI_DECODE_CUPTI_API:
        return dt_pti_cupti_api(d, rec, ev);
    case DT_PTI_DECODE_CUPTI_KERNEL:
        return dt_pti_cupti_kernel(d, rec, ev, nc);
    case DT_PTI_DECODE_CUPTI_EXTERNAL:
        return dt_pti_cupti_external(d, rec, ev);
    case DT_PTI_DECODE_CUPTI_MEMCPY:
        return dt_pti_cupti_memcpy(d, rec, ev);
    case DT_PTI_DECODE_CUPTI_MEMSET:
        return dt_pti_cupti_memset(d, rec, ev);
    default: /* a vendor's id: dt_pti_decoder_init took the layout only with a vendor_decode */
        return d->desc->vendor_decode(l, d, rec, ev, nc);
    }
}

/* dt_pti_take_record with the record decoded by decode, inline in the walkers' loops: the
 * decoder's state and the walk's counters stay in registers from one record to the next.
 * decode is a constant at every use (dt_pti_decode_record, or a vendor's own dispatch whose
 * decoders are inline too), so it is inlined as well. */
static inline __attribute__((always_inline)) dt_pti_taken dt_pti_take_record_by(dt_pti_decoder *d, const uint8_t *rec,
                                                                                size_t avail, dt_pti_walk_mode mode,
                                                                                dt_pti_walk_counts *c,
                                                                                dt_pti_decode_record_fn decode)
{
    if (avail < 4) {
        c->malformed++;
        return DT_PTI_TAKEN_TRUNCATED;
    }
    uint32_t kind;
    memcpy(&kind, rec, sizeof kind);
    const dt_pti_layout *l = kind < DT_PTI_MAX_KIND ? d->by_kind[kind] : NULL;
    if (!l) {
        c->malformed++;
        return DT_PTI_TAKEN_UNKNOWN_KIND;
    }
    if (avail < d->check_size[kind]) {
        c->malformed++;
        return DT_PTI_TAKEN_TRUNCATED;
    }
    c->records++;
    if (mode != DT_PTI_WALK_DECODE) {
        if (l->dt_kind != DEVTRACE_KIND_EXTCORR) {
            if (mode == DT_PTI_WALK_POOL_FULL)
                DT_COUNT(d->s, dropped_pool_full, 1);
            else
                DT_COUNT(d->s, out_of_window[l->dt_kind], 1);
        }
        return DT_PTI_TAKEN;
    }
    /* Decoded in place in the thread's chunk (kept only when it is emitted), or, with the
     * store at its bound, on the stack so that the record is still counted by what it is. */
    devtrace_event scratch, *place = dt_store_run_next(&c->cursor, &d->s->store), *ev = place ? place : &scratch;
    dt_event_zero(ev);
    switch (decode(l, d, rec, ev, &c->names)) {
    case DT_PTI_EMIT:
        if (place) {
            dt_store_run_commit(&c->cursor);
            c->emitted++;
        } else {
            dt_store_cursor_drop(&c->cursor);
        }
        return DT_PTI_TAKEN;
    case DT_PTI_ZERO_TIME:
        c->zero_time++;
        return DT_PTI_TAKEN;
    case DT_PTI_IGNORED:
        c->ignored++;
        return DT_PTI_TAKEN;
    case DT_PTI_MALFORMED:
    default:
        c->malformed++;
        return DT_PTI_TAKEN_INVALID;
    }
}

/* dt_pti_take_record, with the layouts' decoders as the engine dispatches them. */
static inline __attribute__((always_inline)) dt_pti_taken dt_pti_take_record_inline(dt_pti_decoder *d,
                                                                                    const uint8_t *rec, size_t avail,
                                                                                    dt_pti_walk_mode mode,
                                                                                    dt_pti_walk_counts *c)
{
    return dt_pti_take_record_by(d, rec, avail, mode, c, dt_pti_decode_record);
}

/* The stride walk, the one engine walk that needs no vendor iterator: records lie back to
 * back, each its kind's full size, so it steps by the layouts' record sizes, as the
 * vendor's iterator does. Replay walks with it (pti_walk.c), and so does a vendor whose
 * iterator cannot be used, as its scanner, with its own decoders inline (mspti.c). A kind
 * without a layout is stepped over by the size the live iterator was seen to step over it
 * (learned, or read from the capture); unknown that too, or a record cut by the end of the
 * valid bytes, the rest of the buffer cannot be read: counted malformed (once, by the take)
 * and the walk ends. */
static inline __attribute__((always_inline)) void dt_pti_stride_walk(dt_pti_decoder *d, uint8_t *buf, size_t valid_size,
                                                                     dt_pti_walk_mode mode, dt_pti_walk_counts *c,
                                                                     dt_pti_decode_record_fn decode)
{
    size_t off = 0;
    while (off < valid_size) {
        uint32_t kind = 0;
        if (valid_size - off >= 4)
            memcpy(&kind, buf + off, sizeof kind);
        dt_pti_taken t = dt_pti_take_record_by(d, buf + off, valid_size - off, mode, c, decode);
        uint32_t step = t == DT_PTI_TAKEN_UNKNOWN_KIND ? dt_pti_learned_kind_size(d, kind)
                        : t == DT_PTI_TAKEN_TRUNCATED  ? 0
                                                       : d->by_kind[kind]->size;
        if (!step)
            break; /* a kind the live iterator never stepped over, or a short record */
        off += step;
    }
}

#endif /* DT_PTI_DECODE_H */
