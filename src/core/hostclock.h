/* hostclock.h: the cheap host timestamp of the runtime callbacks devtrace owns (the
 * OpenCL layer's wrappers, ROCtracer's API callbacks).
 *
 * A backend that stamps each call with its own host clock (CLOCK_MONOTONIC_RAW for
 * OpenCL, roctracer_get_timestamp for ROCtracer) pays that clock's read twice per call:
 * about 22 ns each through the vDSO here. Where the CPU's time-stamp counter is usable
 * (x86-64, and the kernel's clocksource is "tsc": the kernel itself then derives its
 * clocks from the same counter, synchronised across CPUs), the callback stores raw TSC
 * ticks instead (one rdtsc, about 8 ns) in an event marked DT_EVENT_TICKS, and finalise
 * converts them to the backend's clock with the clock map (clock.c) built from paired
 * (ticks, backend clock) samples: taken when the session starts, when it stops, every
 * DT_TICKS_SAMPLE_PERIOD_MS while calls are stamped, when a chunk is shipped and when
 * the backend samples its own clock. A sample reads the backend clock between two TSC
 * reads (the closest of three tries), so each pairs the clock with the middle of a
 * window of a few tens of ns; CLOCK_MONOTONIC_RAW is an exact affine function of the
 * TSC (no NTP slewing), so events between two samples land within that pairing error.
 *
 * $DEVTRACE_HOST_CLOCK: "tsc" forces the counter (refused where there is none: not
 * x86-64), "clock" forces the backend clock read per call (the behaviour before the
 * counter), unset or empty: the counter when the clocksource is "tsc". Anything else is
 * an error at devtrace_open. */
#ifndef DT_HOSTCLOCK_H
#define DT_HOSTCLOCK_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "clock.h"
#include "devtrace.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#define DT_HAVE_TSC 1
#else
#define DT_HAVE_TSC 0
#endif

#define DT_EVENT_TICKS 0x4000u /* internal: start_ns/end_ns are TSC ticks, converted at finalise */
#define DT_TICKS_SAMPLE_PERIOD_MS 10u

typedef enum dt_host_clock_choice {
    DT_HOST_CLOCK_AUTO = 0, /* the counter when the clocksource is "tsc" */
    DT_HOST_CLOCK_TSC = 1,  /* forced */
    DT_HOST_CLOCK_CLOCK = 2 /* the backend's clock on every call */
} dt_host_clock_choice;

/* Reads the clock that ticks are converted to (the backend's host clock): 0 on success. */
typedef int (*dt_ticks_read_fn)(uint64_t *ns);

/* A session's counter state (session.h embeds it; zero is "not stamping ticks"). */
typedef struct dt_ticks {
    int on;                   /* the backend stamps calls with the counter */
    dt_ticks_read_fn read;    /* the clock the ticks are converted to */
    uint64_t period;          /* ticks between periodic samples (0 until calibrated) */
    _Atomic uint64_t last;    /* ticks of the last sample */
    dt_clock_sample anchor;   /* the first sample (ticks, clock ns): for conversions while recording */
    uint16_t converted_flags; /* what a marked event's flags gain when converted: DEVTRACE_EVENT_HOST_CLOCK
                                 when read is CLOCK_REALTIME (the operators' own counter), else 0 */
} dt_ticks;

static inline uint64_t dt_tsc_read(void)
{
#if DT_HAVE_TSC
    return __rdtsc();
#else
    return 0;
#endif
}

/* $DEVTRACE_HOST_CLOCK as a choice: 0, or -1 with err set ("$DEVTRACE_HOST_CLOCK=..."). */
int dt_host_clock_choice_from_env(dt_host_clock_choice *choice, devtrace_error *err);

/* Whether the counter can stamp calls here: 1, or 0 with why set (the reason for a note).
 * clocksource_path: the file naming the current clocksource (NULL: the system's). */
int dt_tsc_usable(const char *clocksource_path, char *why, size_t whylen);

/* One paired sample: the clock read between two counter reads, the closest of three
 * tries; 0 and *out = {ticks, clock ns}, or -1 when the clock read fails. */
int dt_ticks_pair(dt_ticks_read_fn read, dt_clock_sample *out);

/* Conversion of ticks between two samples (or beyond them, by their line): the clock
 * map's affine step. For conversions while recording (the map is built at finalise). */
uint64_t dt_ticks_between(dt_clock_sample a, dt_clock_sample b, uint64_t ticks);

#endif
