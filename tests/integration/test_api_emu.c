/* test_api_emu.c: the calls a child profiler (a Kineto adaptor) makes, end to end against a
 * vendor ABI emulator in process, on the parity workload (kernel=17 memcpy=1 memset=1
 * runtime=187 cpu_op=17):
 *
 *   test_api_emu MODE EMULATOR.so WORKLOAD.wl
 *
 * Modes (one process each: the engine binds one vendor library per process):
 *   kinds-kernel    devtrace_config.kinds = kernel only: 17 kernels, 0 of every other kind,
 *                   no loss counted (no unpaired flow: the runtime halves were not asked for)
 *   kinds-copies    memcpy and memset only: 1 and 1, nothing else
 *   user            a user correlation id pushed around the whole run: every runtime call and
 *                   every device event carries it (DEVTRACE_EVENT_HAS_USER_EXTERNAL), the op's
 *                   External id is kept; the Chrome trace writes "User external id"
 *   streams         the stream list after drain: the workload's streams, named "stream N"
 *   flush           the workload run 3 times in one session, devtrace_flush after each run
 *                   (the first gives exactly one run's 223 events), then stop and a final
 *                   flush: 3 x the parity counts in all, no event twice, nothing left for a
 *                   drain after it, no loss
 *   restart         start, run, stop, drain; start again, run, stop, drain: each window has the
 *                   parity counts exactly, the second none of the first's events
 * $DT_TEST_BACKEND picks the backend (default cupti); the emulator is given to it as
 * $DEVTRACE_<BACKEND>_LIBRARY. Exit status 0 when every assertion holds. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_harness.h"

#define USER_ID 4242u

static devtrace_session *open_kinds(const char *backend, uint32_t kinds)
{
    devtrace_config cfg;
    devtrace_error err;
    devtrace_config_init(&cfg);
    cfg.backend = backend;
    cfg.kinds = kinds;
    devtrace_session *s = devtrace_open(&cfg, &err);
    if (!s) {
        fprintf(stderr, "FAIL: devtrace_open: %s\n", err.message);
        exit(1);
    }
    return s;
}

static uint64_t losses(const devtrace_stats *st)
{
    uint64_t n = 0;
    for (int k = 0; k < DEVTRACE_KIND_COUNT; k++)
        n += st->out_of_window[k];
    for (int i = 0; i < DT_STATS_NCOUNTERS; i++)
        n += dt_stats_counter_value(st, i);
    return n;
}

static void mode_kinds(const char *backend, const emu_lib *e, const char *wl, uint32_t kinds, const uint64_t *want)
{
    devtrace_session *s = open_kinds(backend, kinds);
    emu_run_workload(s, e, wl);
    devtrace_drain(s, NULL, NULL);
    devtrace_stats st = {.size = sizeof st};
    CHECK(devtrace_stats_read(s, &st) == 0, "devtrace_stats_read failed");
    for (int k = 1; k < DEVTRACE_KIND_COUNT; k++) {
        printf("  %s=%" PRIu64, devtrace_kind_name(k), st.events[k]);
        CHECK(st.events[k] == want[k], "%s: %" PRIu64 " events, not %" PRIu64, devtrace_kind_name(k), st.events[k],
              want[k]);
    }
    printf("\n");
    CHECK(losses(&st) == 0, "%" PRIu64 " losses counted for kinds not asked for", losses(&st));
    devtrace_close(s);
}

typedef struct user_tally {
    uint64_t events, with_user, wrong_user, device_with_external;
} user_tally;

static void tally_user(const devtrace_event *ev, const char *name, void *arg)
{
    (void)name;
    user_tally *t = arg;
    if (ev->kind == DEVTRACE_KIND_CPU_OP)
        return;
    t->events++;
    if (ev->flags & DEVTRACE_EVENT_HAS_USER_EXTERNAL) {
        t->with_user++;
        t->wrong_user += ev->user_external_id != USER_ID;
    }
    if (ev->kind != DEVTRACE_KIND_RUNTIME && (ev->flags & DEVTRACE_EVENT_HAS_EXTERNAL))
        t->device_with_external++;
}

static void mode_user(const char *backend, const emu_lib *e, const char *wl, const char *trace)
{
    devtrace_session *s = emu_open(backend);
    uint64_t popped = 0;
    CHECK(devtrace_pop_user_correlation(s, &popped) == DEVTRACE_EEMPTY, "a pop of an empty user stack");
    CHECK(devtrace_push_user_correlation(s, USER_ID) == 0, "devtrace_push_user_correlation failed");
    emu_run_workload(s, e, wl);
    CHECK(devtrace_pop_user_correlation(s, &popped) == 0 && popped == USER_ID, "the pop gave %" PRIu64, popped);
    user_tally t = {0};
    devtrace_drain(s, tally_user, &t);
    printf("  %" PRIu64 " runtime and device events, %" PRIu64 " with the user id, %" PRIu64
           " device events with an External id\n",
           t.events, t.with_user, t.device_with_external);
    CHECK(t.events == 187 + 17 + 1 + 1, "%" PRIu64 " runtime and device events", t.events);
    CHECK(t.with_user == t.events && t.wrong_user == 0,
          "%" PRIu64 " of %" PRIu64 " carry the user id (%" PRIu64 " another)", t.with_user, t.events, t.wrong_user);
    CHECK(t.device_with_external == 19, "the op's External id on %" PRIu64 " of 19 device events",
          t.device_with_external);
    devtrace_error err;
    CHECK(devtrace_write_chrome(s, trace, &err) == 0, "devtrace_write_chrome: %s", err.message);
    FILE *f = fopen(trace, "r");
    CHECK(f != NULL, "cannot read %s", trace);
    if (f) {
        char line[8192];
        uint64_t n = 0;
        while (fgets(line, sizeof line, f))
            n += strstr(line, "\"User external id\": 4242") != NULL;
        fclose(f);
        CHECK(n == t.events, "\"User external id\" on %" PRIu64 " trace events, not %" PRIu64, n, t.events);
    }
    devtrace_close(s);
}

static void mode_streams(const char *backend, const emu_lib *e, const char *wl)
{
    devtrace_session *s = emu_open(backend);
    CHECK(devtrace_stream_count(s) == 0, "streams before the drain");
    emu_run_workload(s, e, wl);
    devtrace_drain(s, NULL, NULL);
    int n = devtrace_stream_count(s);
    CHECK(n == 1, "%d streams, not 1 (the parity workload uses stream 7)", n);
    devtrace_stream st = {.size = sizeof st};
    CHECK(devtrace_stream_get(s, 0, &st) == 0, "devtrace_stream_get(0) failed");
    printf("  stream 0: device %d context %u stream %u \"%s\"\n", st.device, st.context, st.stream, st.name);
    CHECK(st.device == 0 && st.stream == 7 && strcmp(st.name, "stream 7") == 0, "stream 0 is not device 0's stream 7");
    CHECK(devtrace_stream_get(s, 1, &st) == DEVTRACE_EINVAL, "an index past the count");
    devtrace_stream small = {.size = sizeof(size_t)};
    CHECK(devtrace_stream_get(s, 0, &small) == DEVTRACE_EINVAL, "a size without the name");
    devtrace_close(s);
}

typedef struct delivered {
    uint64_t per_kind[DEVTRACE_KIND_COUNT];
    uint64_t n, duplicates, out_of_order;
    uint64_t last_start;
    uint64_t keys[4096]; /* (kind, correlation or external id, start) hashed: what was delivered */
    size_t nkeys;
} delivered;

static uint64_t event_key(const devtrace_event *ev)
{
    uint64_t id = ev->kind == DEVTRACE_KIND_CPU_OP ? ev->external_id : ev->correlation;
    return (uint64_t)ev->kind * 0x9E3779B97F4A7C15ull ^ id * 0xC2B2AE3D27D4EB4Full ^ ev->start_ns;
}

static void take(const devtrace_event *ev, const char *name, void *arg)
{
    (void)name;
    delivered *d = arg;
    d->n++;
    if (ev->kind < DEVTRACE_KIND_COUNT)
        d->per_kind[ev->kind]++;
    d->out_of_order += ev->start_ns < d->last_start;
    d->last_start = ev->start_ns;
    uint64_t k = event_key(ev);
    for (size_t i = 0; i < d->nkeys; i++)
        if (d->keys[i] == k) {
            d->duplicates++;
            return;
        }
    if (d->nkeys < sizeof d->keys / sizeof d->keys[0])
        d->keys[d->nkeys++] = k;
}

static void check_parity_counts(const uint64_t *per_kind, uint64_t times, const char *what)
{
    static const uint64_t parity[DEVTRACE_KIND_COUNT] = {0, 17, 1, 1, 187, 17, 0};
    for (int k = 1; k < DEVTRACE_KIND_COUNT; k++)
        CHECK(per_kind[k] == times * parity[k], "%s: %" PRIu64 " %s events, not %" PRIu64, what, per_kind[k],
              devtrace_kind_name(k), times * parity[k]);
}

static void mode_flush(const char *backend, const emu_lib *e, const char *wl)
{
    devtrace_session *s = emu_open(backend);
    char err[512];
    CHECK(e->load_workload(wl, err, sizeof err) == 0, "devemu_load_workload: %s", err);
    dt_set_default_session(s);
    size_t n = 0;
    CHECK(devtrace_flush(s, NULL, NULL, &n, NULL) == DEVTRACE_ESTATE, "a flush before start");
    CHECK(devtrace_start(s) == 0, "devtrace_start failed");
    static delivered d;
    for (int run = 0; run < 3; run++) {
        CHECK(e->run() == 0, "devemu_run failed");
        uint64_t before = d.n;
        d.last_start = 0; /* time order within one call */
        CHECK(devtrace_flush(s, take, &d, &n, NULL) == 0, "devtrace_flush failed");
        CHECK(n == d.n - before, "the count %zu is not the events given (%" PRIu64 ")", n, d.n - before);
        printf("  flush after run %d: %zu events\n", run + 1, n);
        if (run == 0)
            CHECK(n == 223, "the first flush gave %zu events, not one run's 223", n);
    }
    CHECK(devtrace_stop(s) == 0, "devtrace_stop failed");
    d.last_start = 0;
    CHECK(devtrace_flush(s, take, &d, &n, NULL) == 0, "the final flush failed");
    printf("  final flush: %zu events; %" PRIu64 " in all, %" PRIu64 " twice\n", n, d.n, d.duplicates);
    CHECK(devtrace_flush(s, take, &d, &n, NULL) == DEVTRACE_ESTATE, "a second final flush");
    check_parity_counts(d.per_kind, 3, "delivered");
    CHECK(d.duplicates == 0, "%" PRIu64 " events delivered twice", d.duplicates);
    CHECK(d.out_of_order == 0, "%" PRIu64 " events out of time order within a flush", d.out_of_order);
    CHECK(devtrace_drain(s, NULL, NULL) == 0, "a drain after the final flush gives nothing");
    devtrace_stats st = {.size = sizeof st};
    devtrace_stats_read(s, &st);
    check_parity_counts(st.events, 3, "stats");
    CHECK(losses(&st) == 0, "%" PRIu64 " losses", losses(&st));
    devtrace_close(s);
}

static void mode_restart(const char *backend, const emu_lib *e, const char *wl)
{
    devtrace_session *s = emu_open(backend);
    for (int window = 0; window < 2; window++) {
        static delivered d;
        memset(&d, 0, sizeof d);
        emu_run_workload(s, e, wl);
        devtrace_drain(s, take, &d);
        devtrace_stats st = {.size = sizeof st};
        devtrace_stats_read(s, &st);
        printf("  window %d: %" PRIu64 " events, kernel=%" PRIu64 "\n", window + 1, d.n, st.events[1]);
        check_parity_counts(d.per_kind, 1, "delivered");
        check_parity_counts(st.events, 1, "stats");
        CHECK(losses(&st) == 0, "window %d: %" PRIu64 " losses", window + 1, losses(&st));
        CHECK(d.duplicates == 0, "window %d: %" PRIu64 " events twice", window + 1, d.duplicates);
        CHECK(devtrace_stream_count(s) == 1, "window %d: %d streams", window + 1, devtrace_stream_count(s));
    }
    devtrace_close(s);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: test_api_emu MODE EMULATOR.so WORKLOAD.wl [TRACE.json]\n");
        return 2;
    }
    const char *mode = argv[1], *lib = argv[2], *wl = argv[3];
    const char *backend = getenv("DT_TEST_BACKEND") && *getenv("DT_TEST_BACKEND") ? getenv("DT_TEST_BACKEND") : "cupti";
    char var[64];
    snprintf(var, sizeof var, "DEVTRACE_%s_LIBRARY", backend);
    for (char *c = var; *c; c++)
        if (*c >= 'a' && *c <= 'z')
            *c = (char)(*c - 'a' + 'A');
    setenv(var, lib, 1);
    emu_lib emu;
    emu_load(lib, &emu);
    printf("%s on %s\n", mode, backend);
    if (strcmp(mode, "kinds-kernel") == 0)
        mode_kinds(backend, &emu, wl, DEVTRACE_KIND_BIT(DEVTRACE_KIND_KERNEL),
                   (const uint64_t[]){0, 17, 0, 0, 0, 0, 0});
    else if (strcmp(mode, "kinds-copies") == 0)
        mode_kinds(backend, &emu, wl, DEVTRACE_KIND_BIT(DEVTRACE_KIND_MEMCPY) | DEVTRACE_KIND_BIT(DEVTRACE_KIND_MEMSET),
                   (const uint64_t[]){0, 0, 1, 1, 0, 0, 0});
    else if (strcmp(mode, "user") == 0 && argc > 4)
        mode_user(backend, &emu, wl, argv[4]);
    else if (strcmp(mode, "streams") == 0)
        mode_streams(backend, &emu, wl);
    else if (strcmp(mode, "flush") == 0)
        mode_flush(backend, &emu, wl);
    else if (strcmp(mode, "restart") == 0)
        mode_restart(backend, &emu, wl);
    else {
        fprintf(stderr, "unknown mode %s (or no TRACE.json for user)\n", mode);
        return 2;
    }
    return emu_finish(mode);
}
