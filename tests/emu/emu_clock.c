/* emu_clock.c: the emulated runtime's clocks: the vendor clock (an epoch and a rate from
 * the vendor table, changed by the clock-epoch and clock-rate faults, or the tracer's own
 * timestamp callback) and the device timeline, on which each stream's work is placed one
 * item after the other in the vendor clock. */
#include <math.h>
#include <sched.h>
#include <time.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_core.h"

static struct {
    int64_t epoch_ns;
    long double rate;
} g_clock = {0, 1.0L};
static _Atomic(emu_timestamp_fn) g_timestamp_fn;

typedef struct stream_time {
    uint32_t stream;
    uint64_t last_end; /* vendor clock */
} stream_time;

static struct {
    pthread_mutex_t lock;
    stream_time *streams;
    size_t n, cap;
} g_timeline = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* ---- clock ---- */

uint64_t emu__realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t vendor_from_realtime(uint64_t rt)
{
    int64_t delta = (int64_t)(rt - (uint64_t)g_clock.epoch_ns);
    if (g_clock.rate == 1.0L)
        return (uint64_t)delta;
    return (uint64_t)llroundl((long double)delta * g_clock.rate);
}

uint64_t emu_now(void)
{
    emu_timestamp_fn fn = atomic_load_explicit(&g_timestamp_fn, memory_order_acquire);
    return fn ? fn() : vendor_from_realtime(emu__realtime_ns());
}

/* A device duration in vendor ticks: maps back to exactly dur_ns (to rounding). */
uint64_t emu__vendor_duration(uint64_t dur_ns)
{
    if (atomic_load(&g_timestamp_fn) || g_clock.rate == 1.0L)
        return dur_ns;
    return (uint64_t)llroundl((long double)dur_ns * g_clock.rate);
}

emu_result emu_get_timestamp(uint64_t *ts)
{
    if (!ts)
        return emu__vendor->result.invalid_parameter;
    *ts = emu_now();
    return emu__vendor->result.success;
}

emu_result emu_register_timestamp_callback(emu_timestamp_fn fn)
{
    atomic_store_explicit(&g_timestamp_fn, fn, memory_order_release);
    return emu__vendor->result.success;
}

/* Busy-waits until the vendor clock reaches target (gives up well after it should have). */
void emu__wait_until(uint64_t target)
{
    uint64_t now = emu_now();
    if (now >= target)
        return;
    long double rate = atomic_load(&g_timestamp_fn) ? 1.0L : g_clock.rate;
    long double expected = (long double)(target - now) / rate;
    uint64_t give_up = emu__realtime_ns() + EMU_WAIT_SLACK_NS +
                       (expected < (long double)EMU_WAIT_MAX_NS ? (uint64_t)expected : EMU_WAIT_MAX_NS);
    while ((now = emu_now()) < target && emu__realtime_ns() < give_up) {
        uint64_t left_ns = (uint64_t)((long double)(target - now) / rate);
        if (left_ns > 200000) {
            struct timespec nap = {0, (long)(left_ns / 2 < 100000000 ? left_ns / 2 : 100000000)};
            nanosleep(&nap, NULL);
        } else {
            sched_yield();
        }
    }
}

/* ---- the device timeline ---- */

static stream_time *timeline_stream(uint32_t stream)
{
    for (size_t i = 0; i < g_timeline.n; i++) {
        if (g_timeline.streams[i].stream == stream)
            return &g_timeline.streams[i];
    }
    if (g_timeline.n == g_timeline.cap) {
        size_t ncap = g_timeline.cap ? g_timeline.cap * 2 : 16;
        stream_time *p = realloc(g_timeline.streams, ncap * sizeof *p);
        if (!p)
            emu__die("out of memory (stream timeline)");
        g_timeline.streams = p;
        g_timeline.cap = ncap;
    }
    g_timeline.streams[g_timeline.n] = (stream_time){stream, 0};
    return &g_timeline.streams[g_timeline.n++];
}

/* Places dur ticks of work on stream no earlier than now; returns its start. */
uint64_t emu__timeline_place(uint32_t stream, uint64_t now, uint64_t dur)
{
    pthread_mutex_lock(&g_timeline.lock);
    stream_time *s = timeline_stream(stream);
    uint64_t start = s->last_end > now ? s->last_end : now;
    s->last_end = start + dur;
    pthread_mutex_unlock(&g_timeline.lock);
    return start;
}

/* Forgets every stream's work: needed when the vendor clock changes. */
static void timeline_clear(void)
{
    pthread_mutex_lock(&g_timeline.lock);
    g_timeline.n = 0;
    pthread_mutex_unlock(&g_timeline.lock);
}

uint64_t emu__timeline_last_end(int all_streams, uint32_t stream)
{
    uint64_t end = 0;
    pthread_mutex_lock(&g_timeline.lock);
    for (size_t i = 0; i < g_timeline.n; i++) {
        const stream_time *s = &g_timeline.streams[i];
        if ((all_streams || s->stream == stream) && s->last_end > end)
            end = s->last_end;
    }
    pthread_mutex_unlock(&g_timeline.lock);
    return end;
}

void emu__clock_set(int64_t epoch_ns, long double rate)
{
    g_clock.epoch_ns = epoch_ns;
    g_clock.rate = rate;
    timeline_clear(); /* its times were in the old clock */
}

void emu__clock_reset(void)
{
    atomic_store(&g_timestamp_fn, NULL);
}
