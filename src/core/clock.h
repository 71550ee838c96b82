/* clock.h: mapping a vendor clock to host CLOCK_REALTIME ns from paired samples.
 *
 * With two or more samples whose vendor and host values both increase, the map is
 * piecewise affine between neighbouring samples and extrapolated with the nearest
 * segment. Fallbacks: one usable sample, or samples that do not increase -> offset
 * only (rate 1) from the first sample; no sample -> identity (the vendor clock is
 * taken as realtime). Arithmetic is exact (128-bit), rounded to nearest. */
#ifndef DT_CLOCK_H
#define DT_CLOCK_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct dt_clock_sample {
    uint64_t vendor_ns;
    uint64_t host_ns;
} dt_clock_sample;

typedef enum dt_clock_mode {
    DT_CLOCK_IDENTITY = 0, /* no sample */
    DT_CLOCK_OFFSET = 1,   /* one sample, or non-increasing samples */
    DT_CLOCK_AFFINE = 2    /* two or more increasing samples */
} dt_clock_mode;

typedef struct dt_clock_map {
    dt_clock_mode mode;
    dt_clock_sample *points; /* owned, increasing in both values */
    size_t npoints;
} dt_clock_map;

/* Builds the map from samples in any order. Returns 0, -1 on allocation failure. */
int dt_clock_map_build(dt_clock_map *map, const dt_clock_sample *samples, size_t n);
void dt_clock_map_free(dt_clock_map *map);
uint64_t dt_clock_map_to_realtime(const dt_clock_map *map, uint64_t vendor_ns);
/* Maps an event's start, end and (unless NULL) queued time in place, each exactly as
 * dt_clock_map_to_realtime would, with one segment lookup when they share a segment. */
void dt_clock_map_span(const dt_clock_map *map, uint64_t *start, uint64_t *end, uint64_t *queued);
const char *dt_clock_mode_name(dt_clock_mode mode);

uint64_t dt_realtime_ns(void);
uint64_t dt_monotonic_ns(void);

/* Periodic vendor clock samples (taken as buffers complete): at most one per 100 ms. */
#define DT_CLOCK_SAMPLE_PERIOD_NS 100000000ull
/* A vendor clock sample is retried until its host bracket is under DT_CLOCK_BRACKET_NS, at most
 * DT_CLOCK_BRACKET_TRIES reads (dt_sample_vendor_clock). */
#define DT_CLOCK_BRACKET_NS 20000ull
#define DT_CLOCK_BRACKET_TRIES 8
/* Is a periodic sample due? 1 when DT_CLOCK_SAMPLE_PERIOD_NS or more have passed since
 * *last_ns (monotonic ns), which is then set to now: of callers racing, one takes it. */
int dt_clock_sample_due(_Atomic uint64_t *last_ns);

#endif
