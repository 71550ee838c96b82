/* clock.c: vendor-to-realtime clock map (see clock.h). */
#include "clock.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t dt_realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t dt_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int dt_clock_sample_due(_Atomic uint64_t *last_ns)
{
    uint64_t now = dt_monotonic_ns(), last = atomic_load_explicit(last_ns, memory_order_relaxed);
    return now - last >= DT_CLOCK_SAMPLE_PERIOD_NS && atomic_compare_exchange_strong(last_ns, &last, now);
}

const char *dt_clock_mode_name(dt_clock_mode mode)
{
    switch (mode) {
    case DT_CLOCK_AFFINE:
        return "affine";
    case DT_CLOCK_OFFSET:
        return "offset";
    default:
        return "identity";
    }
}

static int by_vendor(const void *a, const void *b)
{
    const dt_clock_sample *x = a, *y = b;
    if (x->vendor_ns != y->vendor_ns)
        return x->vendor_ns < y->vendor_ns ? -1 : 1;
    return x->host_ns < y->host_ns ? -1 : x->host_ns > y->host_ns;
}

int dt_clock_map_build(dt_clock_map *map, const dt_clock_sample *samples, size_t n)
{
    memset(map, 0, sizeof *map);
    if (n == 0)
        return 0;
    map->points = malloc(n * sizeof *map->points);
    if (!map->points)
        return -1;
    memcpy(map->points, samples, n * sizeof *samples);
    /* Keep the first sample (in time order of taking) as the offset anchor. */
    dt_clock_sample first = samples[0];
    qsort(map->points, n, sizeof *map->points, by_vendor);
    size_t kept = 1;
    int monotonic = 1;
    for (size_t i = 1; i < n; i++) {
        dt_clock_sample p = map->points[i], q = map->points[kept - 1];
        if (p.vendor_ns == q.vendor_ns)
            continue; /* duplicate vendor value: keep the first */
        if (p.host_ns <= q.host_ns) {
            monotonic = 0;
            break;
        }
        map->points[kept++] = p;
    }
    if (!monotonic || kept < 2) {
        map->points[0] = first;
        map->npoints = 1;
        map->mode = DT_CLOCK_OFFSET;
        return 0;
    }
    map->npoints = kept;
    map->mode = DT_CLOCK_AFFINE;
    return 0;
}

void dt_clock_map_free(dt_clock_map *map)
{
    free(map->points);
    memset(map, 0, sizeof *map);
}

static uint64_t clamp_u64(__int128 v)
{
    if (v < 0)
        return 0;
    if (v > (__int128)UINT64_MAX)
        return UINT64_MAX;
    return (uint64_t)v;
}

/* host = h0 + (v - v0) * (h1 - h0) / (v1 - v0), rounded to nearest. |v - v0| and
 * h1 - h0 are below 2^64, so their product fits in 128 bits unsigned (not signed).
 * The common cases skip the 128-bit division (a library call) with the same result:
 * a segment at rate 1 (h1 - h0 == v1 - v0, the quotient is |v - v0| exactly), and a
 * product that fits in 64 bits (one 64-bit division, the same quotient and remainder). */
static inline uint64_t affine(dt_clock_sample a, dt_clock_sample b, uint64_t v)
{
    int below = v < a.vendor_ns;
    uint64_t dv = below ? a.vendor_ns - v : v - a.vendor_ns;
    uint64_t dh = b.host_ns - a.host_ns, den = b.vendor_ns - a.vendor_ns, num64, q;
    if (dh == den) {
        q = dv;
    } else if (!__builtin_mul_overflow(dv, dh, &num64)) {
        uint64_t r = num64 % den; /* den == 1: r == 0, nothing added, so no wrap */
        q = num64 / den + (r >= den - r);
    } else {
        unsigned __int128 num = (unsigned __int128)dv * dh, r = num % den, q128 = num / den + (r >= den - r);
        if (q128 > UINT64_MAX)
            return below ? 0 : UINT64_MAX; /* beyond either end: clamped */
        q = (uint64_t)q128;
    }
    if (below)
        return q > a.host_ns ? 0 : a.host_ns - q;
    return q > UINT64_MAX - a.host_ns ? UINT64_MAX : a.host_ns + q;
}

/* The segment (p[i], p[i + 1]) that maps v: the first one below p[0], the last one
 * above p[n - 1]. A v equal to a point maps to that point's host value from either of
 * its segments, so any segment whose closed range holds v gives the same result. */
static size_t segment_of(const dt_clock_sample *p, size_t n, uint64_t v)
{
    if (v <= p[0].vendor_ns)
        return 0;
    if (v >= p[n - 1].vendor_ns)
        return n - 2;
    size_t lo = 0, hi = n - 1; /* p[lo] <= v < p[hi] */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (p[mid].vendor_ns <= v)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static inline uint64_t map_near(const dt_clock_map *map, size_t *seg, uint64_t v)
{
    const dt_clock_sample *p = map->points;
    size_t n = map->npoints, i = *seg;
    if (!((i == 0 || p[i].vendor_ns <= v) && (i == n - 2 || v <= p[i + 1].vendor_ns)))
        *seg = i = segment_of(p, n, v);
    return affine(p[i], p[i + 1], v);
}

uint64_t dt_clock_map_to_realtime(const dt_clock_map *map, uint64_t v)
{
    switch (map->mode) {
    case DT_CLOCK_IDENTITY:
        return v;
    case DT_CLOCK_OFFSET:
        return clamp_u64((__int128)v - map->points[0].vendor_ns + map->points[0].host_ns);
    case DT_CLOCK_AFFINE:
        break;
    }
    size_t i = segment_of(map->points, map->npoints, v);
    return affine(map->points[i], map->points[i + 1], v);
}

void dt_clock_map_span(const dt_clock_map *map, uint64_t *start, uint64_t *end, uint64_t *queued)
{
    if (map->mode != DT_CLOCK_AFFINE) {
        *start = dt_clock_map_to_realtime(map, *start);
        *end = dt_clock_map_to_realtime(map, *end);
        if (queued)
            *queued = dt_clock_map_to_realtime(map, *queued);
        return;
    }
    size_t seg = segment_of(map->points, map->npoints, *start);
    *start = affine(map->points[seg], map->points[seg + 1], *start);
    *end = map_near(map, &seg, *end);
    if (queued)
        *queued = map_near(map, &seg, *queued);
}
