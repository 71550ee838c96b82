/* pti_walk.c: the CUPTI-family engine's decoding (see pti_family.h): the decoder of a
 * session, the walks of a completed buffer (the vendor's iterator until each kind's step is
 * verified, then the stride; offline, the stride walk by the layouts' sizes alone,
 * pti_decode.h), and the runtime and kernel names. The records are decoded by the
 * decoder each layout names (pti_decode.h). Nothing here allocates, locks or formats
 * text while a buffer is walked. */
#include "pti_decode.h"
#include "pti_family.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/raw.h"

/* Whether the decoder a layout names exists: one of the engine's, or a vendor's id with the
 * descriptor's vendor_decode to read it. */
static int layout_has_decoder(const dt_pti_descriptor *desc, const dt_pti_layout *l)
{
    if (l->decoder >= DT_PTI_DECODE_VENDOR)
        return desc->vendor_decode != NULL;
    return l->decoder >= DT_PTI_DECODE_CUPTI_KERNEL && l->decoder <= DT_PTI_DECODE_CUPTI_EXTERNAL;
}

void dt_pti_decoder_init(dt_pti_decoder *d, const dt_pti_descriptor *desc, dt_session *s, uint32_t version,
                         dt_pti_next_fn next)
{
    memset(d, 0, sizeof *d);
    d->desc = desc;
    d->s = s;
    d->version = version;
    d->next = next;
    for (size_t i = 0; i < desc->nlayouts; i++) {
        const dt_pti_layout *l = &desc->layouts[i];
        if (l->kind >= DT_PTI_MAX_KIND || !layout_has_decoder(desc, l))
            continue;
        const dt_pti_layout *cur = d->by_kind[l->kind];
        int exact = version >= l->min_version && version <= l->max_version;
        int cur_exact = cur && version >= cur->min_version && version <= cur->max_version;
        if (cur_exact)
            continue;
        if (!exact && cur) {
            /* Neither matches: keep the layout whose version range is nearest. */
            uint64_t dl = version > l->max_version ? version - l->max_version : l->min_version - version;
            uint64_t dc = version > cur->max_version ? version - cur->max_version : cur->min_version - version;
            if (dl >= dc)
                continue;
        }
        d->by_kind[l->kind] = l;
    }
    for (uint32_t k = 0; k < DT_PTI_MAX_KIND; k++) {
        const dt_pti_layout *l = d->by_kind[k];
        if (!l)
            continue;
        int exact = version >= l->min_version && version <= l->max_version;
        d->check_size[k] = exact ? l->size : l->read_size;
        if (!exact)
            d->prefix_only = 1;
    }
    d->unnamed_kernel_id = s ? dt_session_intern(s, "(unnamed kernel)") : 0;
}

static uint32_t read_u32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

#define CF_MAX_SKIP_SIZE (1u << 16)

uint32_t dt_pti_learned_kind_size(dt_pti_decoder *d, uint32_t kind)
{
    for (int i = 0; i < DT_PTI_SKIP_KINDS; i++) {
        uint64_t e = atomic_load_explicit(&d->skip_sizes[i], memory_order_relaxed);
        if (!e)
            return 0;
        if ((uint32_t)(e >> 32) == kind)
            return (uint32_t)e;
    }
    return 0;
}

int dt_pti_learn_kind_size(dt_pti_decoder *d, uint32_t kind, uint32_t size)
{
    if (size < 4 || size > CF_MAX_SKIP_SIZE || (kind < DT_PTI_MAX_KIND && d->by_kind[kind]))
        return 0;
    uint64_t e = (uint64_t)kind << 32 | size;
    for (int i = 0; i < DT_PTI_SKIP_KINDS; i++) {
        uint64_t expected = 0;
        if (atomic_compare_exchange_strong(&d->skip_sizes[i], &expected, e))
            return 1;
        if ((uint32_t)(expected >> 32) == kind)
            return 0; /* known (the first size seen stands) */
    }
    return 0;
}

void dt_pti_decoder_init_offline(dt_pti_decoder *d, const dt_pti_descriptor *desc, dt_session *s, uint32_t version,
                                 const char *(*resolve_string)(void *user, uint64_t pointer), void *user)
{
    dt_pti_decoder_init(d, desc, s, version, NULL);
    d->resolve_string = resolve_string;
    d->resolve_user = user;
}

dt_pti_taken dt_pti_take_record(dt_pti_decoder *d, const uint8_t *rec, size_t avail, dt_pti_walk_mode mode,
                                dt_pti_walk_counts *c)
{
    return dt_pti_take_record_inline(d, rec, avail, mode, c);
}

void dt_pti_commit_counts(dt_pti_decoder *d, dt_pti_walk_counts *c)
{
    dt_store_run_close(&c->cursor);
    if (c->malformed)
        DT_COUNT(d->s, malformed_records, c->malformed);
    if (c->zero_time)
        DT_COUNT(d->s, zero_timestamp, c->zero_time);
}

enum { CF_ASK, CF_NEXT, CF_END };

/* The step from the record at prev, when the layouts make it certain: CF_NEXT with *next
 * where the library's iterator would go (prev's kind and the next record's kind were both
 * seen to step by their layouts' sizes, and the next record fits), CF_END where it would
 * report the end of the buffer (MAX_LIMIT_REACHED), CF_ASK otherwise: the library steps. */
static inline int pti_stride(const dt_pti_decoder *d, uintptr_t prev, uintptr_t hi, uintptr_t *next)
{
    uint32_t kind = read_u32((const uint8_t *)prev);
    uint32_t size = kind < DT_PTI_MAX_KIND ? atomic_load_explicit(&d->stride_size[kind], memory_order_relaxed) : 0;
    if (!size)
        return CF_ASK;
    uintptr_t q = prev + size;
    if (q == hi)
        return CF_END;
    if (q > hi || hi - q < 4)
        return CF_ASK;
    uint32_t k2 = read_u32((const uint8_t *)q);
    size = k2 < DT_PTI_MAX_KIND ? atomic_load_explicit(&d->stride_size[k2], memory_order_relaxed) : 0;
    if (!size || hi - q < size)
        return CF_ASK;
    *next = q;
    return CF_NEXT;
}

/* The library stepped from prev to p: when prev's kind has a layout for this version, the
 * step says whether that kind can be stepped by its size from now on. */
static void pti_learn_stride(dt_pti_decoder *d, uintptr_t prev, uintptr_t p)
{
    uint32_t kind = read_u32((const uint8_t *)prev);
    if (kind >= DT_PTI_MAX_KIND || !d->by_kind[kind] ||
        atomic_load_explicit(&d->stride[kind], memory_order_relaxed) != DT_PTI_STRIDE_UNSEEN)
        return;
    const dt_pti_layout *l = d->by_kind[kind];
    if (d->check_size[kind] != l->size)
        return; /* decoded by a prefix: the size is not this version's */
    uint8_t expected = DT_PTI_STRIDE_UNSEEN;
    uint8_t verdict = p - prev == l->size ? DT_PTI_STRIDE_OK : DT_PTI_STRIDE_NO;
    if (!atomic_compare_exchange_strong(&d->stride[kind], &expected, verdict))
        return;
    if (verdict == DT_PTI_STRIDE_OK)
        atomic_store_explicit(&d->stride_size[kind], l->size, memory_order_relaxed);
    else
        dt_add_note(d->s,
                    "%s's record iterator stepped %llu bytes over a %s record (kind %u), whose layout has %u: "
                    "records of that kind are stepped by the library's iterator only",
                    d->desc->vendor_api, (unsigned long long)(p - prev), l->name, kind, l->size);
}

/* Offline (replay): no vendor iterator; the stride walk by the layouts' sizes. */
static void walk_by_layout_sizes(dt_pti_decoder *d, uint8_t *buf, size_t valid_size, dt_pti_walk_mode mode,
                                 dt_pti_walk_counts *c)
{
    dt_pti_stride_walk(d, buf, valid_size, mode, c, dt_pti_decode_record);
}

/* The vendor's iterator's next record after prev (0: the first) in [lo, hi): 1 with *p
 * set, or 0 when the buffer ends there (counted malformed unless the vendor ends buffers
 * that way). A step is learnt for the stride when the iterator made it. */
static inline int iterator_next(dt_pti_decoder *d, uint8_t *buf, size_t valid_size, uintptr_t lo, uintptr_t hi,
                                uintptr_t prev, void **rec, uintptr_t *p, dt_pti_walk_counts *c)
{
    const dt_pti_descriptor *desc = d->desc;
    int rc = d->next(buf, valid_size, rec);
    if (rc != desc->results.success) {
        if (rc != desc->results.max_limit_reached && !(desc->quirks & DT_PTI_QUIRK_ANY_ERROR_ENDS))
            c->malformed++; /* an incomplete or invalid record: the rest is unreadable */
        return 0;
    }
    if (!*rec) {
        if (!(desc->quirks & DT_PTI_QUIRK_NULL_RECORD_ENDS))
            c->malformed++;
        return 0;
    }
    *p = (uintptr_t)*rec;
    if (*p < lo || *p >= hi || (prev && *p <= prev)) {
        c->malformed++; /* outside the valid bytes, or not advancing: stop before looping */
        return 0;
    }
    if (prev && !d->iterator_only)
        pti_learn_stride(d, prev, *p);
    return 1;
}

/* The iterator stepped from unknown_at, a record of a kind we have no layout for, to p:
 * that kind's size, kept (and written to the raw capture, for replay). */
static void learn_unknown_kind_size(dt_pti_decoder *d, uint32_t kind, uintptr_t unknown_at, uintptr_t p)
{
    dt_raw_writer *w = atomic_load_explicit(&d->raw, memory_order_acquire);
    if (dt_pti_learn_kind_size(d, kind, (uint32_t)(p - unknown_at)) && w)
        dt_raw_kind_size(w, kind, (uint32_t)(p - unknown_at));
}

/* Live: the vendor's iterator until a kind's step is verified, then the stride for it. */
static void walk_with_iterator(dt_pti_decoder *d, uint8_t *buf, size_t valid_size, dt_pti_walk_mode mode,
                               dt_pti_walk_counts *c)
{
    uintptr_t lo = (uintptr_t)buf, hi = lo + valid_size, prev = 0, unknown_at = 0;
    uint32_t unknown_kind = 0;
    void *rec = NULL;
    for (;;) {
        uintptr_t p = 0;
        int step = prev && !d->iterator_only ? pti_stride(d, prev, hi, &p) : CF_ASK;
        if (step == CF_END)
            break;
        if (step == CF_ASK) {
            if (!iterator_next(d, buf, valid_size, lo, hi, prev, &rec, &p, c))
                break;
        } else {
            rec = (void *)p; /* where the library would have stepped: its next call starts here */
        }
        prev = p;
        if (unknown_at) {
            learn_unknown_kind_size(d, unknown_kind, unknown_at, p);
            unknown_at = 0;
        }
        /* An unknown kind is skipped (the vendor's iterator knows its size); a record that
         * does not fit in the valid bytes ends the buffer. */
        dt_pti_taken t = dt_pti_take_record_inline(d, (const uint8_t *)rec, hi - p, mode, c);
        if (t == DT_PTI_TAKEN_TRUNCATED)
            break;
        if (t == DT_PTI_TAKEN_UNKNOWN_KIND && p - lo <= UINT32_MAX) {
            unknown_at = p;
            unknown_kind = read_u32((const uint8_t *)rec);
        }
    }
}

void dt_pti_walk_buffer(dt_pti_decoder *d, uint8_t *buf, size_t valid_size, dt_pti_walk_mode mode,
                        dt_pti_walk_counts *counts)
{
    dt_pti_walk_counts c = {0};
    if (d->desc->scan)
        d->desc->scan(d, buf, valid_size, mode, &c); /* the vendor's own scanner (iterator not trusted) */
    else if (!d->next)
        walk_by_layout_sizes(d, buf, valid_size, mode, &c);
    else
        walk_with_iterator(d, buf, valid_size, mode, &c);
    dt_pti_commit_counts(d, &c);
    if (counts)
        *counts = c;
}

/* Writes "<prefix>#<cbid>" without formatting functions. */
static void unknown_name(char *out, size_t len, const char *prefix, uint32_t cbid)
{
    char digits[16];
    int n = 0;
    do {
        digits[n++] = (char)('0' + cbid % 10);
        cbid /= 10;
    } while (cbid);
    size_t used = 0, plen = strlen(prefix);
    if (plen > len - 18)
        plen = len - 18;
    memcpy(out, prefix, plen);
    used = plen;
    out[used++] = '#';
    while (n)
        out[used++] = digits[--n];
    out[used] = '\0';
}

static const char *lookup_cbid(const dt_pti_descriptor *desc, uint32_t cbid)
{
    size_t lo = 0, hi = desc->nruntime_names;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (desc->runtime_names[mid].cbid == cbid)
            return desc->runtime_names[mid].name;
        if (desc->runtime_names[mid].cbid < cbid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* First sight of a cbid in this session: intern its name (once per distinct id). */
uint32_t dt_pti_runtime_name_slow(dt_pti_decoder *d, uint32_t cbid)
{
    const char *name = lookup_cbid(d->desc, cbid);
    char buf[96];
    if (!name) {
        unknown_name(buf, sizeof buf, d->desc->unknown_runtime_prefix ? d->desc->unknown_runtime_prefix : "runtime",
                     cbid);
        name = buf;
    }
    uint32_t id = dt_session_intern(d->s, name), expected = 0;
    /* The thread that fills the slot counts the unresolved name: once per distinct id. */
    if (cbid < DT_PTI_CBID_CACHE && id && atomic_compare_exchange_strong(&d->cbid_name[cbid], &expected, id) &&
        name == buf) {
        DT_COUNT(d->s, unresolved_names, 1);
        atomic_fetch_or(&d->cbid_unresolved[cbid / 32], 1u << (cbid % 32));
    }
    return id;
}

uint32_t dt_pti_runtime_name(dt_pti_decoder *d, uint32_t cbid)
{
    return dt_pti_runtime_name_inline(d, cbid);
}

uint32_t dt_pti_vendor_string(dt_pti_decoder *d, const char *p)
{
    if (!p)
        return 0;
    if (d->resolve_string) {
        const char *s = d->resolve_string(d->resolve_user, (uint64_t)(uintptr_t)p);
        return s ? dt_session_intern(d->s, s) : 0;
    }
    dt_raw_writer *w = atomic_load_explicit(&d->raw, memory_order_acquire);
    if (w)
        dt_raw_string(w, (uint64_t)(uintptr_t)p, p);
    return dt_intern_ptr(&d->s->names, p);
}

uint32_t dt_pti_vendor_string_miss(dt_pti_decoder *d, dt_pti_name_cache *nc, const char *p)
{
    uint32_t id = dt_pti_vendor_string(d, p);
    if (id) {
        unsigned slot = dt_pti_name_slot(p);
        nc->ptr[slot] = p;
        nc->id[slot] = id;
    }
    return id;
}

typedef struct pti_rename {
    uint32_t cbid, from, to;
} pti_rename;

static void rename_runtime_events(void *user, devtrace_event *ev)
{
    const pti_rename *r = user;
    if (ev->kind == DEVTRACE_KIND_RUNTIME && (ev->flags & DEVTRACE_EVENT_HAS_CBID) && ev->u.runtime.cbid == r->cbid &&
        ev->name_id == r->from)
        ev->name_id = r->to;
}

void dt_pti_apply_api_name(dt_pti_decoder *d, uint32_t cbid, const char *name)
{
    if (cbid >= DT_PTI_CBID_CACHE || !name || !*name)
        return;
    uint32_t id = dt_session_intern(d->s, name);
    if (!id)
        return;
    uint32_t old = atomic_exchange(&d->cbid_name[cbid], id);
    uint32_t bit = 1u << (cbid % 32);
    if (atomic_fetch_and(&d->cbid_unresolved[cbid / 32], ~bit) & bit)
        __atomic_fetch_sub(&d->s->stats.unresolved_names, 1, __ATOMIC_RELAXED);
    if (old && old != id) {
        pti_rename r = {cbid, old, id};
        dt_store_visit(&d->s->store, rename_runtime_events, &r);
    }
}
