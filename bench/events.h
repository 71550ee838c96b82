/* events.h: sessions full of realistic events for the sink, drain and memory benchmarks.
 *
 * What the CUPTI decoder stores for a PyTorch-like run, without running the decoder
 * (the decode benchmarks time that): runtime calls on two host threads, each with its
 * device work (kernels with launch shape, registers, shared memory and queued time, on
 * three streams; copies; memsets) and the external-correlation record that gives both
 * halves the operator's id; vendor timestamps on a clock with an offset from realtime,
 * two clock samples, a capture window around it all, and one device with the attributes
 * the occupancy figures need. */
#ifndef DT_BENCH_EVENTS_H
#define DT_BENCH_EVENTS_H

#include <stdint.h>

#include "core/session.h"

/* Which events: the mix, or one kind only (no flows: its partners are absent). */
typedef enum bench_mix {
    BENCH_MIX_ALL = 0,
    BENCH_MIX_KERNEL = DEVTRACE_KIND_KERNEL,
    BENCH_MIX_MEMCPY = DEVTRACE_KIND_MEMCPY,
    BENCH_MIX_MEMSET = DEVTRACE_KIND_MEMSET,
    BENCH_MIX_RUNTIME = DEVTRACE_KIND_RUNTIME,
    BENCH_MIX_FLOW_PAIRS = 100 /* launches only: runtime + kernel pairs, flows between them */
} bench_mix;

/* Stores events in an offline session (stopped, not finalised) until about `events`
 * events will be in the trace (external-correlation records come in addition). */
int bench_events_fill(dt_session *s, uint64_t events, bench_mix mix, uint64_t seed);
/* A new offline session filled as above; NULL when out of memory. */
dt_session *bench_events_session(uint64_t events, bench_mix mix, uint64_t seed);

#endif
