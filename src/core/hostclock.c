/* hostclock.c: the TSC as the callbacks' host timestamp, and the conversion of its ticks
 * at finalise (see hostclock.h). */
#include "hostclock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "session.h"
#include "grow.h"

#define DT_CLOCKSOURCE_PATH "/sys/devices/system/clocksource/clocksource0/current_clocksource"
#define DT_PAIR_TRIES 3

int dt_host_clock_choice_from_env(dt_host_clock_choice *choice, devtrace_error *err)
{
    const char *v = getenv("DEVTRACE_HOST_CLOCK");
    *choice = DT_HOST_CLOCK_AUTO;
    if (!v || !*v)
        return 0;
    if (strcmp(v, "tsc") == 0) {
        if (!DT_HAVE_TSC) {
            dt_error_set(err, DEVTRACE_EINVAL,
                         "$DEVTRACE_HOST_CLOCK=tsc: this CPU has no time-stamp counter devtrace can read (x86-64 "
                         "only); unset it or set clock");
            return -1;
        }
        *choice = DT_HOST_CLOCK_TSC;
        return 0;
    }
    if (strcmp(v, "clock") == 0) {
        *choice = DT_HOST_CLOCK_CLOCK;
        return 0;
    }
    dt_error_set(err, DEVTRACE_EINVAL,
                 "$DEVTRACE_HOST_CLOCK=\"%s\" is not tsc or clock; unset it (automatic) or set "
                 "one of them",
                 v);
    return -1;
}

#if DT_HAVE_TSC
#include <cpuid.h>

/* CPUID 0x80000007 EDX bit 8: the counter runs at a constant rate in every power state. */
static int cpu_has_invariant_tsc(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
        return 0;
    __get_cpuid(0x80000007u, &a, &b, &c, &d);
    return (d >> 8) & 1;
}
#endif

int dt_tsc_usable(const char *clocksource_path, char *why, size_t whylen)
{
#if DT_HAVE_TSC
    char name[64] = "";
    FILE *f = fopen(clocksource_path ? clocksource_path : DT_CLOCKSOURCE_PATH, "r");
    if (!f) {
        /* No sysfs (a container without it): the CPU's word that the counter is invariant. */
        if (cpu_has_invariant_tsc())
            return 1;
        snprintf(why, whylen, "the clocksource is unknown (no %s) and the CPU does not report an invariant TSC",
                 clocksource_path ? clocksource_path : DT_CLOCKSOURCE_PATH);
        return 0;
    }
    int got = fgets(name, sizeof name, f) != NULL;
    fclose(f);
    name[strcspn(name, "\n")] = '\0';
    if (got && strcmp(name, "tsc") == 0)
        return 1;
    snprintf(why, whylen, "the kernel's clocksource is \"%s\", not tsc", name);
    return 0;
#else
    (void)clocksource_path;
    snprintf(why, whylen, "no time-stamp counter on this architecture (x86-64 only)");
    return 0;
#endif
}

int dt_ticks_pair(dt_ticks_read_fn read, dt_clock_sample *out)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < DT_PAIR_TRIES; i++) {
        uint64_t ns = 0, t0 = dt_tsc_read();
        int rc = read(&ns);
        uint64_t t1 = dt_tsc_read();
        if (rc != 0)
            return -1;
        if (i == 0 || t1 - t0 < best) {
            best = t1 - t0;
            *out = (dt_clock_sample){t0 + (t1 - t0) / 2, ns};
        }
    }
    return 0;
}

uint64_t dt_ticks_between(dt_clock_sample a, dt_clock_sample b, uint64_t ticks)
{
    dt_clock_sample p[2] = {a, b};
    if (b.vendor_ns < a.vendor_ns) {
        p[0] = b;
        p[1] = a;
    }
    if (p[1].vendor_ns == p[0].vendor_ns || p[1].host_ns <= p[0].host_ns) /* one point: by its offset */
        return p[0].host_ns + (ticks - p[0].vendor_ns);
    dt_clock_map m = {DT_CLOCK_AFFINE, p, 2};
    return dt_clock_map_to_realtime(&m, ticks);
}

/* ---- the session's samples ---- */

void dt_add_tick_sample(dt_session *s, uint64_t ticks, uint64_t ns)
{
    pthread_mutex_lock(&s->lock);
    /* Room for 10 s of periodic samples at first: a realloc in the middle of a run also
     * consolidates the allocator's free lists (glibc), 1.6 M instructions on the calling thread. */
    dt_clock_sample *p = dt_room_for_one(s->tick_samples, s->ntick_samples, &s->tick_samples_cap, sizeof *p, 1024);
    if (!p) {
        pthread_mutex_unlock(&s->lock);
        return;
    }
    s->tick_samples = p;
    s->tick_samples[s->ntick_samples++] = (dt_clock_sample){ticks, ns};
    pthread_mutex_unlock(&s->lock);
}

int dt_ticks_sample(dt_session *s)
{
    dt_clock_sample p;
    if (!s->ticks.on || dt_ticks_pair(s->ticks.read, &p) != 0)
        return -1;
    atomic_store_explicit(&s->ticks.last, p.vendor_ns, memory_order_relaxed);
    dt_add_tick_sample(s, p.vendor_ns, p.host_ns);
    return 0;
}

void dt_ticks_sample_due(dt_session *s, uint64_t last)
{
    /* One of the threads that saw the period pass takes the sample. */
    if (atomic_compare_exchange_strong_explicit(&s->ticks.last, &last, dt_tsc_read(), memory_order_relaxed,
                                                memory_order_relaxed))
        dt_ticks_sample(s);
}

/* Starts stamping with the counter against read; converted events gain converted_flags.
 * note: whether to say in a note why the counter is not used. */
static int ticks_start(dt_session *s, dt_ticks_read_fn read, uint16_t converted_flags, int note)
{
    char why[256] = "";
    memset(&s->ticks, 0, sizeof s->ticks);
    if (s->host_clock == DT_HOST_CLOCK_CLOCK)
        return 0;
    if (s->host_clock == DT_HOST_CLOCK_AUTO && !dt_tsc_usable(NULL, why, sizeof why)) {
        if (note)
            dt_add_note(s, "runtime calls stamped with the backend's clock on every call: %s", why);
        return 0;
    }
    dt_clock_sample a, b;
    if (dt_ticks_pair(read, &a) != 0)
        return 0;
    /* The period in ticks, from the counter's rate over a short wait (any rate within
     * a factor of two serves: it only spaces the samples). */
    uint64_t until = a.host_ns + 200000;
    do {
        if (dt_ticks_pair(read, &b) != 0)
            return 0;
    } while (b.host_ns < until);
    if (b.vendor_ns <= a.vendor_ns)
        return 0;
    s->ticks.read = read;
    s->ticks.anchor = a;
    s->ticks.period = (b.vendor_ns - a.vendor_ns) * (DT_TICKS_SAMPLE_PERIOD_MS * 1000000ull) / (b.host_ns - a.host_ns);
    s->ticks.converted_flags = converted_flags;
    atomic_store_explicit(&s->ticks.last, b.vendor_ns, memory_order_relaxed);
    s->ticks.on = 1;
    dt_add_tick_sample(s, a.vendor_ns, a.host_ns);
    dt_add_tick_sample(s, b.vendor_ns, b.host_ns);
    return 1;
}

int dt_ticks_start(dt_session *s, dt_ticks_read_fn read)
{
    return ticks_start(s, read, 0, 1);
}

static int read_realtime(uint64_t *ns)
{
    *ns = dt_realtime_ns();
    return 0;
}

int dt_ticks_start_ops(dt_session *s)
{
    if (s->ticks.on)
        return 1;
    return ticks_start(s, read_realtime, DEVTRACE_EVENT_HOST_CLOCK, 0);
}

void dt_ticks_converter_begin(dt_session *s, dt_ticks_converter *cv)
{
    memset(cv, 0, sizeof *cv);
    pthread_mutex_lock(&s->lock);
    cv->nsamples = s->ntick_samples;
    cv->built = cv->nsamples >= 2 && dt_clock_map_build(&cv->map, s->tick_samples, cv->nsamples) == 0;
    pthread_mutex_unlock(&s->lock);
    cv->converted_flags = s->ticks.converted_flags;
}

void dt_ticks_converter_apply(dt_ticks_converter *cv, devtrace_event *ev)
{
    if (!(ev->flags & DT_EVENT_TICKS))
        return;
    ev->flags = (uint16_t)((ev->flags & ~DT_EVENT_TICKS) | cv->converted_flags);
    if (cv->built && cv->map.mode == DT_CLOCK_AFFINE) {
        dt_clock_map_span(&cv->map, &ev->start_ns, &ev->end_ns, NULL);
    } else {
        ev->start_ns = 1; /* end before start: the drain counts it in bad_timestamps */
        ev->end_ns = 0;
        cv->lost++;
    }
}

void dt_ticks_converter_end(dt_session *s, dt_ticks_converter *cv)
{
    if (cv->built)
        dt_clock_map_free(&cv->map);
    cv->built = 0;
    if (cv->lost)
        dt_add_note(s,
                    "%llu runtime events were stamped with the TSC but the samples that convert its ticks are "
                    "missing (%zu of the 2 needed): counted in bad_timestamps",
                    (unsigned long long)cv->lost, cv->nsamples);
}

static void convert_event(void *user, devtrace_event *ev)
{
    dt_ticks_converter_apply(user, ev);
}

void dt_ticks_convert(dt_session *s)
{
    dt_ticks_converter cv;
    dt_ticks_converter_begin(s, &cv);
    if (cv.nsamples != 0) /* else nothing was stamped with the counter */
        dt_store_visit(&s->store, convert_event, &cv);
    dt_ticks_converter_end(s, &cv);
}
