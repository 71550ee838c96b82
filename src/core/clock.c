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
 * h1 - h0 are below 2^64, so their product fits in 128 bits unsigned (not signed). */
static uint64_t affine(dt_clock_sample a, dt_clock_sample b, uint64_t v)
{
    int below = v < a.vendor_ns;
    unsigned __int128 dv = below ? a.vendor_ns - v : v - a.vendor_ns;
    unsigned __int128 num = dv * (b.host_ns - a.host_ns);
    uint64_t den = b.vendor_ns - a.vendor_ns;
    unsigned __int128 q = num / den, r = num % den;
    if (r >= den - r)
        q++;
    if (below)
        return q > a.host_ns ? 0 : a.host_ns - (uint64_t)q;
    return q > UINT64_MAX - a.host_ns ? UINT64_MAX : a.host_ns + (uint64_t)q;
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
    const dt_clock_sample *p = map->points;
    size_t n = map->npoints;
    if (v <= p[0].vendor_ns)
        return affine(p[0], p[1], v);
    if (v >= p[n - 1].vendor_ns)
        return affine(p[n - 2], p[n - 1], v);
    size_t lo = 0, hi = n - 1; /* p[lo] < v < p[hi] */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (p[mid].vendor_ns <= v)
            lo = mid;
        else
            hi = mid;
    }
    return affine(p[lo], p[hi], v);
}
