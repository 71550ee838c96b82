/* bench_memory.c: resident bytes per stored event. The benchmark runs in its own
 * process (main forks one per group): the resident set is read, a session stores the
 * events, and the resident set is read again; the delta over the stored events
 * (external-correlation records included: they are stored until drain) is the figure.
 * The same after finalising (the sorted index and the correlation map) is reported as
 * information: the peak a drain adds. */
#include <stdio.h>

#include "bench.h"
#include "events.h"

/* The target: resident bytes per stored event over the event's own size (the reference). */
#define MEMORY_MAX_RATIO 1.25

void bench_memory(const bench_sizes *sz, const bench_paths *paths)
{
    (void)paths;
    char note[320];
    uint64_t before = bench_rss_bytes();
    dt_session *s = bench_events_session(sz->memory_events, BENCH_MIX_ALL, 99);
    if (!s || before == 0) {
        bench_unmeasurable("memory.vs_event_size", "ratio", BENCH_AT_MOST, MEMORY_MAX_RATIO,
                           before ? "out of memory" : "/proc/self/statm cannot be read");
        devtrace_close(s);
        return;
    }
    dt_store_file_all(&s->store);
    uint64_t stored = dt_store_count(&s->store);
    uint64_t after = bench_rss_bytes();
    snprintf(note, sizeof note,
             "RSS delta over %llu stored events (%zu-byte events in chunks of %u), names and device included",
             (unsigned long long)stored, sizeof(devtrace_event), DT_CHUNK_EVENTS);
    double per_event = (double)(after - before) / (double)stored;
    bench_report("memory.vs_event_size", per_event / (double)sizeof(devtrace_event), "ratio", BENCH_AT_MOST,
                 MEMORY_MAX_RATIO, "resident bytes per stored event over sizeof(devtrace_event)");
    bench_report("memory.bytes_per_event", per_event, "B/event", BENCH_INFO, 0, note);
    dt_session_finalize(s);
    uint64_t drained = bench_rss_bytes();
    bench_report("memory.bytes_per_event.at_drain", (double)(drained - before) / (double)stored, "B/event", BENCH_INFO,
                 0, "after finalising: the sorted index and the correlation map added");
    devtrace_close(s);
}
