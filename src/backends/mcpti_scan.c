/* mcpti_scan.c: MetaX MCPTI's buffer walker and record scanner (see mcpti_scan.h):
 * vendor-abi.md's field checks per record kind, the 8-byte resynchronising scanner, the
 * iterator-while-it-behaves walker, and the note that tells how buffers were walked.
 * Compiled on its own, beside mcpti.c (the descriptor). Like every
 * decoder it allocates nothing, takes no lock of its own and formats no text while
 * walking; the note is written once, at stop. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "core/session.h"
#include "pti_decode.h"
#include "pti_records.h"
#include "mcpti_scan.h"

uint32_t dt_mcpti_record_size(uint32_t kind)
{
    switch (kind) {
    case DT_MCPTI_KIND_KERNEL:
    case DT_MCPTI_KIND_CONCURRENT_KERNEL:
        return DT_MCPTI_KERNEL_SIZE;
    case DT_MCPTI_KIND_MEMCPY:
        return DT_MCPTI_MEMCPY_SIZE;
    case DT_MCPTI_KIND_MEMSET:
        return DT_MCPTI_MEMSET_SIZE;
    case DT_MCPTI_KIND_RUNTIME:
        return DT_MCPTI_API_SIZE;
    case DT_MCPTI_KIND_EXTERNAL_CORRELATION:
        return DT_MCPTI_EXTERNAL_SIZE;
    default:
        return 0;
    }
}

/* Device-counter timestamps (quirk 3): small values are valid; start == end == 0 means
 * timing was not collected (quirk 2: a record, skipped and counted by the decoder). */
static int plausible_times(uint64_t start, uint64_t end)
{
    if (start == 0 && end == 0)
        return 1;
    return end >= start && end - start <= DT_MCPTI_MAX_DURATION_NS;
}

static int dimension_ok(int32_t v)
{
    return v > 0 && (uint32_t)v < DT_MCPTI_MAX_DIM;
}

dt_mcpti_verdict dt_mcpti_validate(const uint8_t *rec, size_t avail)
{
    uint32_t kind;
    if (avail < sizeof kind)
        return DT_MCPTI_NOT_OURS;
    memcpy(&kind, rec, sizeof kind);
    uint32_t size = dt_mcpti_record_size(kind);
    if (!size)
        return DT_MCPTI_NOT_OURS;
    if (avail < size)
        return DT_MCPTI_TRUNCATED;
    switch (kind) {
    case DT_MCPTI_KIND_KERNEL:
    case DT_MCPTI_KIND_CONCURRENT_KERNEL: {
        dt_cupti_kernel_prefix k;
        memcpy(&k, rec, sizeof k);
        if (!dimension_ok(k.grid_x) || !dimension_ok(k.grid_y) || !dimension_ok(k.grid_z) || !dimension_ok(k.block_x) ||
            !dimension_ok(k.block_y) || !dimension_ok(k.block_z))
            return DT_MCPTI_BAD_DIMENSION;
        if (k.correlation_id == 0)
            return DT_MCPTI_ZERO_CORRELATION;
        return plausible_times(k.start, k.end) ? DT_MCPTI_VALID : DT_MCPTI_BAD_TIMESTAMPS;
    }
    case DT_MCPTI_KIND_MEMCPY: {
        dt_cupti_memcpy_prefix m;
        memcpy(&m, rec, sizeof m);
        if (m.bytes == 0)
            return DT_MCPTI_ZERO_BYTES;
        if (m.correlation_id == 0)
            return DT_MCPTI_ZERO_CORRELATION;
        return plausible_times(m.start, m.end) ? DT_MCPTI_VALID : DT_MCPTI_BAD_TIMESTAMPS;
    }
    case DT_MCPTI_KIND_MEMSET: {
        dt_cupti_memset4 m;
        memcpy(&m, rec, offsetof(dt_cupti_memset4, tail));
        if (m.bytes == 0)
            return DT_MCPTI_ZERO_BYTES;
        if (m.correlation_id == 0)
            return DT_MCPTI_ZERO_CORRELATION;
        return plausible_times(m.start, m.end) ? DT_MCPTI_VALID : DT_MCPTI_BAD_TIMESTAMPS;
    }
    case DT_MCPTI_KIND_RUNTIME: {
        dt_cupti_api a;
        memcpy(&a, rec, sizeof a);
        if (a.cbid >= DT_MCPTI_MAX_CBID)
            return DT_MCPTI_BAD_CBID;
        if (a.correlation_id == 0)
            return DT_MCPTI_ZERO_CORRELATION;
        return plausible_times(a.start, a.end) ? DT_MCPTI_VALID : DT_MCPTI_BAD_TIMESTAMPS;
    }
    default: { /* DT_MCPTI_KIND_EXTERNAL_CORRELATION */
        dt_cupti_external_correlation x;
        memcpy(&x, rec, sizeof x);
        if (x.external_kind < 1 || x.external_kind > DT_MCPTI_MAX_EXTERNAL_KIND)
            return DT_MCPTI_BAD_EXTERNAL_KIND;
        return x.correlation_id ? DT_MCPTI_VALID : DT_MCPTI_ZERO_CORRELATION;
    }
    }
}

dt_mcpti_time_bounds dt_mcpti_time_bounds_of(dt_session *s)
{
    dt_mcpti_time_bounds b = {0, UINT64_MAX, 0};
    uint64_t first, last;
    if (!s || dt_vendor_clock_span(s, &first, &last) != 0)
        return b;
    b.lo = first > DT_MCPTI_CLOCK_MARGIN_NS ? first - DT_MCPTI_CLOCK_MARGIN_NS : 0;
    b.hi = last < UINT64_MAX - DT_MCPTI_CLOCK_MARGIN_NS ? last + DT_MCPTI_CLOCK_MARGIN_NS : UINT64_MAX;
    b.known = 1;
    return b;
}

_Static_assert(offsetof(dt_cupti_api, end) == offsetof(dt_cupti_api, start) + 8, "end follows start");
_Static_assert(offsetof(dt_cupti_memset4, end) == offsetof(dt_cupti_memset4, start) + 8, "end follows start");
_Static_assert(offsetof(dt_cupti_memcpy_prefix, end) == offsetof(dt_cupti_memcpy_prefix, start) + 8,
               "end follows start");
_Static_assert(offsetof(dt_cupti_kernel_prefix, end) == offsetof(dt_cupti_kernel_prefix, start) + 8,
               "end follows start");

/* The start and end of a valid record of a timed kind; 0 for the external correlation. */
static int record_times(const uint8_t *rec, uint32_t kind, uint64_t *start, uint64_t *end)
{
    size_t at = kind == DT_MCPTI_KIND_RUNTIME                ? offsetof(dt_cupti_api, start)
                : kind == DT_MCPTI_KIND_MEMSET               ? offsetof(dt_cupti_memset4, start)
                : kind == DT_MCPTI_KIND_MEMCPY               ? offsetof(dt_cupti_memcpy_prefix, start)
                : kind == DT_MCPTI_KIND_EXTERNAL_CORRELATION ? 0
                                                             : offsetof(dt_cupti_kernel_prefix, start);
    if (!at)
        return 0;
    memcpy(start, rec + at, sizeof *start);
    memcpy(end, rec + at + sizeof *start, sizeof *end); /* end follows start in every layout */
    return 1;
}

dt_mcpti_verdict dt_mcpti_validate_in(const uint8_t *rec, size_t avail, const dt_mcpti_time_bounds *b)
{
    dt_mcpti_verdict v = dt_mcpti_validate(rec, avail);
    if (v != DT_MCPTI_VALID)
        return v;
    uint32_t kind;
    memcpy(&kind, rec, sizeof kind);
    if (kind == DT_MCPTI_KIND_MEMCPY) {
        dt_cupti_memcpy_prefix m;
        memcpy(&m, rec, sizeof m);
        if (m.copy_kind > DT_MCPTI_MAX_COPY_KIND || m.src_kind > DT_MCPTI_MAX_MEMORY_KIND ||
            m.dst_kind > DT_MCPTI_MAX_MEMORY_KIND)
            return DT_MCPTI_BAD_ENUMERATION;
    } else if (kind == DT_MCPTI_KIND_MEMSET) {
        dt_cupti_memset4 m;
        memcpy(&m, rec, offsetof(dt_cupti_memset4, tail));
        if (m.memory_kind > DT_MCPTI_MAX_MEMORY_KIND)
            return DT_MCPTI_BAD_ENUMERATION;
    }
    uint64_t start, end;
    if (b && b->known && record_times(rec, kind, &start, &end) && (start || end) && (start < b->lo || end > b->hi))
        return DT_MCPTI_OUTSIDE_CLOCK;
    return DT_MCPTI_VALID;
}

const char *dt_mcpti_verdict_name(dt_mcpti_verdict v)
{
    static const char *const names[DT_MCPTI_VERDICT_COUNT] = {
        "valid",
        "not an MCPTI kind",
        "truncated",
        "grid or block dimension outside (0, 2^20)",
        "correlationId 0",
        "end before start or longer than 1 h",
        "bytes 0",
        "cbid >= 1000",
        "externalKind outside 1..5",
        "copy kind > 10 or memory kind > 7",
        "times outside the session's clock samples +- 1 s",
    };
    return (unsigned)v < DT_MCPTI_VERDICT_COUNT ? names[v] : "?";
}

static void stat_add(dt_pti_decoder *d, int which, uint64_t n)
{
    if (n)
        atomic_fetch_add_explicit(&d->scan_stats[which], n, memory_order_relaxed);
}

static void scan_range(dt_pti_decoder *d, uint8_t *buf, size_t from, size_t valid_size, dt_pti_walk_mode mode,
                       dt_pti_walk_counts *c, uint64_t max_records, const dt_mcpti_time_bounds *bounds,
                       dt_mcpti_scan_result *out)
{
    dt_mcpti_scan_result r = {0, 0, 0, 0, 0};
    size_t off = from, run_start = 0;
    int in_run = 0;
    while (off < valid_size) {
        if (r.accepted >= max_records) {
            r.capped = 1; /* the rest is not looked at: counted as skipped bytes below */
            break;
        }
        const uint8_t *rec = buf + off;
        size_t avail = valid_size - off;
        dt_mcpti_verdict v = dt_mcpti_validate_in(rec, avail, bounds);
        if (v == DT_MCPTI_VALID) {
            if (in_run) {
                r.runs++;
                r.skipped += off - run_start;
                in_run = 0;
            }
            uint32_t kind;
            memcpy(&kind, rec, sizeof kind);
            /* Validation covers every check the decoders make, so the record is taken
             * (emitted, ignored or counted zero time), never rejected a second time. */
            dt_pti_take_record_inline(d, rec, avail, mode, c);
            r.accepted++;
            off += dt_mcpti_record_size(kind); /* > 0 for a valid record: always advances */
            continue;
        }
        if (v != DT_MCPTI_NOT_OURS)
            r.rejected++;
        if (!in_run) {
            in_run = 1;
            run_start = off;
        }
        off += 8;
    }
    if (r.capped && !in_run && off < valid_size) {
        in_run = 1;
        run_start = off;
    }
    if (in_run) {
        r.runs++;
        r.skipped += valid_size - run_start;
    }
    c->malformed += r.runs;
    if (r.skipped && d->s)
        DT_COUNT(d->s, malformed_bytes, r.skipped);
    stat_add(d, DT_MCPTI_STAT_SCANNED_BYTES, valid_size > from ? valid_size - from : 0);
    stat_add(d, DT_MCPTI_STAT_REJECTED, r.rejected);
    stat_add(d, DT_MCPTI_STAT_RUNS, r.runs);
    stat_add(d, DT_MCPTI_STAT_CAP, (uint64_t)r.capped);
    if (out)
        *out = r;
}

void dt_mcpti_scan_range(dt_pti_decoder *d, uint8_t *buf, size_t from, size_t valid_size, dt_pti_walk_mode mode,
                         dt_pti_walk_counts *c, uint64_t max_records, dt_mcpti_scan_result *out)
{
    dt_mcpti_time_bounds bounds = dt_mcpti_time_bounds_of(d->s);
    scan_range(d, buf, from, valid_size, mode, c, max_records, &bounds, out);
}

void dt_mcpti_walk_buffer(dt_pti_decoder *d, uint8_t *buf, size_t valid_size, dt_pti_walk_mode mode,
                          dt_pti_walk_counts *c)
{
    size_t pos = 0; /* the end of the last record the iterator gave: all before it is handled */
    uint64_t taken = 0;
    int reason = -1;
    const dt_mcpti_time_bounds bounds = dt_mcpti_time_bounds_of(d->s);
    stat_add(d, DT_MCPTI_STAT_BUFFERS, 1);
    if (!d->next) {
        reason = DT_MCPTI_STAT_NO_ITERATOR;
    } else {
        uintptr_t base = (uintptr_t)buf;
        void *rec = NULL;
        for (;;) {
            int rc = d->next(buf, valid_size, &rec);
            if (rc != d->desc->results.success || !rec) {
                if (pos < valid_size)
                    reason = DT_MCPTI_STAT_ITER_STOPPED_EARLY;
                break;
            }
            uintptr_t p = (uintptr_t)rec;
            if (p < base || p - base >= valid_size) {
                reason = DT_MCPTI_STAT_ITER_SKIPPED;
                break;
            }
            size_t off = (size_t)(p - base);
            if (off < pos) {
                reason = DT_MCPTI_STAT_ITER_REPEATED; /* MACA 3.8.0: the same pointer again */
                break;
            }
            if (off != pos) {
                reason = DT_MCPTI_STAT_ITER_SKIPPED;
                break;
            }
            if (dt_mcpti_validate_in(buf + off, valid_size - off, &bounds) != DT_MCPTI_VALID) {
                reason = DT_MCPTI_STAT_ITER_INVALID;
                break;
            }
            if (taken >= DT_MCPTI_SCAN_MAX_RECORDS) {
                reason = DT_MCPTI_STAT_CAP;
                break;
            }
            uint32_t kind;
            memcpy(&kind, buf + off, sizeof kind);
            dt_pti_take_record_inline(d, buf + off, valid_size - off, mode, c);
            taken++;
            pos = off + dt_mcpti_record_size(kind);
        }
    }
    if (reason < 0)
        return;
    if (reason != DT_MCPTI_STAT_CAP)
        stat_add(d, reason, 1);
    scan_range(d, buf, pos, valid_size, mode, c, DT_MCPTI_SCAN_MAX_RECORDS - taken, &bounds, NULL);
}

void dt_mcpti_finish(dt_pti_decoder *d)
{
    uint64_t st[DT_MCPTI_STAT_COUNT];
    for (int i = 0; i < DT_MCPTI_STAT_COUNT; i++)
        st[i] = atomic_load_explicit(&d->scan_stats[i], memory_order_relaxed);
    if (!st[DT_MCPTI_STAT_BUFFERS] || !d->s)
        return;
    static const struct {
        int stat;
        const char *what;
    } reasons[] = {
        {DT_MCPTI_STAT_ITER_REPEATED, "repeated a pointer"},
        {DT_MCPTI_STAT_ITER_STOPPED_EARLY, "stopped before the valid size"},
        {DT_MCPTI_STAT_ITER_SKIPPED, "jumped over bytes"},
        {DT_MCPTI_STAT_ITER_INVALID, "gave a record that fails validation"},
        {DT_MCPTI_STAT_NO_ITERATOR, "was not there"},
    };
    char text[400];
    size_t used = 0;
    uint64_t scanned = 0;
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++) {
        uint64_t n = st[reasons[i].stat];
        if (!n)
            continue;
        scanned += n;
        int w = snprintf(text + used, sizeof text - used, "%s%s in %llu", used ? ", " : "", reasons[i].what,
                         (unsigned long long)n);
        if (w > 0 && (size_t)w < sizeof text - used)
            used += (size_t)w;
    }
    if (!scanned)
        dt_add_note(d->s, "%s: GetNextRecord behaved in all %llu buffers; the record scanner was not needed",
                    d->desc->name, (unsigned long long)st[DT_MCPTI_STAT_BUFFERS]);
    else
        dt_add_note(d->s,
                    "%s: GetNextRecord %s of %llu buffers; those buffers were scanned from there "
                    "(MACA 3.8.0 workaround: %llu bytes scanned, %llu malformed run(s) skipped, %llu rejected "
                    "candidate(s))",
                    d->desc->name, text, (unsigned long long)st[DT_MCPTI_STAT_BUFFERS],
                    (unsigned long long)st[DT_MCPTI_STAT_SCANNED_BYTES], (unsigned long long)st[DT_MCPTI_STAT_RUNS],
                    (unsigned long long)st[DT_MCPTI_STAT_REJECTED]);
    if (st[DT_MCPTI_STAT_CAP])
        dt_add_note(d->s,
                    "%s: the record cap (%u records a buffer) stopped %llu walk(s); the rest of those buffers "
                    "is counted as malformed bytes",
                    d->desc->name, DT_MCPTI_SCAN_MAX_RECORDS, (unsigned long long)st[DT_MCPTI_STAT_CAP]);
}
