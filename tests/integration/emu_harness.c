/* emu_harness.c: what the emulator-driven tests share (see emu_harness.h). */
#include "emu_harness.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

int emu_failures;

int emu_finish(const char *mode)
{
    if (emu_failures)
        fprintf(stderr, "%s: %d assertion(s) failed\n", mode, emu_failures);
    else
        printf("%s: ok\n", mode);
    return emu_failures ? 1 : 0;
}

int emu_parse_args(int argc, char **argv, emu_args *a)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s MODE EMULATOR.so WORKLOAD.wl [TRACE.json] [kind=N ...]\n", argv[0]);
        return 2;
    }
    a->mode = argv[1];
    a->lib = argv[2];
    a->wl = argv[3];
    a->trace = argc > 4 && !strchr(argv[4], '=') ? argv[4] : NULL;
    a->first_expect = a->trace ? 5 : 4;
    return 0;
}

void *emu_sym(void *handle, const char *name, int required)
{
    void *p = dlsym(handle, name);
    if (!p && required) {
        fprintf(stderr, "FAIL: the emulator has no %s\n", name);
        exit(1);
    }
    return p;
}

void emu_load(const char *path, emu_lib *e)
{
    e->handle = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!e->handle) {
        fprintf(stderr, "FAIL: cannot load %s: %s\n", path, dlerror());
        exit(1);
    }
    void *p;
    p = emu_sym(e->handle, "devemu_load_workload", 1);
    memcpy(&e->load_workload, &p, sizeof p);
    p = emu_sym(e->handle, "devemu_run", 1);
    memcpy(&e->run, &p, sizeof p);
    p = emu_sym(e->handle, "devemu_call", 1);
    memcpy(&e->call, &p, sizeof p);
    p = emu_sym(e->handle, "devemu_get_stats", 1);
    memcpy(&e->get_stats, &p, sizeof p);
}

/* Another profiling tool's subscriber callback. */
static void other_tool_callback(void *userdata, int domain, uint32_t cbid, const void *data)
{
    (void)userdata, (void)domain, (void)cbid, (void)data;
}

int emu_take_subscriber(const emu_lib *e, const char *subscribe_symbol)
{
    int (*subscribe)(void **, void (*)(void *, int, uint32_t, const void *), void *);
    void *p = emu_sym(e->handle, subscribe_symbol, 1);
    memcpy(&subscribe, &p, sizeof p);
    void *other = NULL;
    return subscribe(&other, other_tool_callback, NULL);
}

emu_expected emu_expectations(const wl_workload *w, int argc, char **argv, int first)
{
    wl_counts c;
    wl_expected_counts(w, &c);
    emu_expected e = {c.kernels, c.memcpys, c.memsets, c.runtime};
    for (int i = first; i < argc; i++) {
        uint64_t v = EMU_ANY;
        const char *eq = strchr(argv[i], '=');
        if (!eq || (strcmp(eq + 1, "any") != 0 && dt_parse_u64(eq + 1, &v) != 0)) {
            fprintf(stderr, "FAIL: bad expectation '%s'\n", argv[i]);
            exit(2);
        }
        if (strncmp(argv[i], "kernel=", 7) == 0)
            e.kernel = v;
        else if (strncmp(argv[i], "memcpy=", 7) == 0)
            e.memcpy = v;
        else if (strncmp(argv[i], "memset=", 7) == 0)
            e.memset = v;
        else if (strncmp(argv[i], "runtime=", 8) == 0)
            e.runtime = v;
    }
    return e;
}

emu_expected emu_expectations_file(const char *wl_path, int argc, char **argv, int first)
{
    wl_workload w;
    char err[512];
    if (wl_parse_file(wl_path, &w, err, sizeof err) != 0) {
        fprintf(stderr, "FAIL: %s\n", err);
        exit(1);
    }
    emu_expected e = emu_expectations(&w, argc, argv, first);
    wl_free(&w);
    return e;
}

void emu_check_counts(const devtrace_stats *st, const emu_expected *e)
{
    CHECK(e->kernel == EMU_ANY || st->events[DEVTRACE_KIND_KERNEL] == e->kernel,
          "kernel=%" PRIu64 ", expected %" PRIu64, st->events[DEVTRACE_KIND_KERNEL], e->kernel);
    CHECK(e->memcpy == EMU_ANY || st->events[DEVTRACE_KIND_MEMCPY] == e->memcpy,
          "memcpy=%" PRIu64 ", expected %" PRIu64, st->events[DEVTRACE_KIND_MEMCPY], e->memcpy);
    CHECK(e->memset == EMU_ANY || st->events[DEVTRACE_KIND_MEMSET] == e->memset,
          "memset=%" PRIu64 ", expected %" PRIu64, st->events[DEVTRACE_KIND_MEMSET], e->memset);
    CHECK(e->runtime == EMU_ANY || st->events[DEVTRACE_KIND_RUNTIME] == e->runtime,
          "runtime=%" PRIu64 ", expected %" PRIu64, st->events[DEVTRACE_KIND_RUNTIME], e->runtime);
    printf("counts: kernel=%" PRIu64 " memcpy=%" PRIu64 " memset=%" PRIu64 " runtime=%" PRIu64 "\n",
           st->events[DEVTRACE_KIND_KERNEL], st->events[DEVTRACE_KIND_MEMCPY], st->events[DEVTRACE_KIND_MEMSET],
           st->events[DEVTRACE_KIND_RUNTIME]);
}

uint64_t emu_refusals(void)
{
    const char *f = getenv("DEVEMU_FAULTS");
    const char *p = f ? strstr(f, "refuse-buffer=") : NULL;
    return p ? strtoull(p + 14, NULL, 10) : 0;
}

void emu_print_losses(const devtrace_stats *st, const devemu_stats *es)
{
    printf("losses: zero_timestamp=%" PRIu64 " malformed=%" PRIu64 " dropped_vendor=%" PRIu64
           " dropped_pool_full=%" PRIu64 " refused_buffers=%" PRIu64 " unpaired_flows=%" PRIu64
           " unresolved_names=%" PRIu64 "\n",
           st->zero_timestamp, st->malformed_records, st->dropped_vendor, st->dropped_pool_full, st->refused_buffers,
           st->unpaired_flows, st->unresolved_names);
    printf("emulator: injected_zero_time=%" PRIu64 " injected_malformed=%" PRIu64 " dropped=%" PRIu64
           " buffers requested=%" PRIu64 " refused=%" PRIu64 " completed=%" PRIu64 "\n",
           es->injected_zero_time, es->injected_malformed, es->dropped_records, es->buffers_requested,
           es->buffers_refused, es->buffers_completed);
}

void emu_check_injected_losses(const devtrace_stats *st, const devemu_stats *es)
{
    CHECK(st->zero_timestamp == es->injected_zero_time, "zero_timestamp=%" PRIu64 ", the emulator injected %" PRIu64,
          st->zero_timestamp, es->injected_zero_time);
    CHECK(st->malformed_records == es->injected_malformed, "malformed_records=%" PRIu64 ", injected %" PRIu64,
          st->malformed_records, es->injected_malformed);
    CHECK(st->dropped_vendor == es->dropped_records, "dropped_vendor=%" PRIu64 ", the emulator dropped %" PRIu64,
          st->dropped_vendor, es->dropped_records);
    CHECK(st->refused_buffers == es->buffers_refused - emu_refusals(),
          "refused_buffers=%" PRIu64 ", the emulator saw %" PRIu64 " refusals (%" PRIu64 " its own)",
          st->refused_buffers, es->buffers_refused, emu_refusals());
}

devtrace_session *emu_open(const char *backend)
{
    devtrace_config cfg;
    devtrace_error err;
    devtrace_config_init(&cfg);
    cfg.backend = backend;
    devtrace_session *s = devtrace_open(&cfg, &err);
    if (!s) {
        fprintf(stderr, "FAIL: devtrace_open: %s\n", err.message);
        exit(1);
    }
    return s;
}

void emu_check_unavailable(devtrace_session *s, const char *const *needles)
{
    const char *why = devtrace_unavailable_reason(s);
    printf("unavailable: %s\n", why);
    CHECK(strcmp(devtrace_backend_name(s), "none") == 0, "backend %s, expected none", devtrace_backend_name(s));
    for (const char *const *n = needles; *n; n++)
        CHECK(strstr(why, *n) != NULL, "the reason lacks \"%s\": %s", *n, why);
}

const char *emu_find_note(const dt_session *s, const char *needle)
{
    for (int i = 0; i < s->nnotes; i++)
        if (strstr(s->notes[i], needle))
            return s->notes[i];
    return NULL;
}

void emu_print_notes(const dt_session *s)
{
    for (int i = 0; i < s->nnotes; i++)
        printf("  note: %s\n", s->notes[i]);
}

void emu_run_workload(devtrace_session *s, const emu_lib *e, const char *wl_path)
{
    char err[512];
    CHECK(e->load_workload(wl_path, err, sizeof err) == 0, "devemu_load_workload: %s", err);
    dt_set_default_session(s); /* the emulator's `op push` goes through devtrace_annotate_push */
    CHECK(devtrace_start(s) == 0, "devtrace_start failed");
    CHECK(e->run() == 0, "devemu_run failed: the host program did not complete");
    CHECK(devtrace_stop(s) == 0, "devtrace_stop failed");
}

void emu_write_trace(devtrace_session *s, const char *trace)
{
    devtrace_error err;
    if (trace)
        CHECK(devtrace_write_chrome(s, trace, &err) == 0, "devtrace_write_chrome: %s", err.message);
}

void emu_run_traced(devtrace_session *s, const emu_lib *e, const char *wl_path, const char *trace)
{
    emu_run_workload(s, e, wl_path);
    emu_write_trace(s, trace);
}

void emu_run_untraced(devtrace_session *s, const emu_lib *e, const char *wl_path)
{
    char err[512];
    CHECK(e->load_workload(wl_path, err, sizeof err) == 0, "devemu_load_workload: %s", err);
    CHECK(devtrace_start(s) == 0, "devtrace_start on the unavailable session failed");
    CHECK(e->run() == 0, "the host program did not complete");
    CHECK(devtrace_stop(s) == 0, "devtrace_stop failed");
    CHECK(devtrace_stats_get(s)->events[DEVTRACE_KIND_RUNTIME] == 0, "an unavailable session recorded events");
}

/* ---- threads ---- */

typedef struct worker {
    const emu_lib *emu;
    devtrace_session *s;
    uint64_t external;
    uint32_t tid;
    int failed;
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    w->tid = dt_thread_id();
    if (devtrace_push_external(w->s, w->external) != 0)
        w->failed = 1;
    for (int i = 0; i < EMU_CALLS_PER_THREAD; i++)
        if (w->emu->call(WL_CALL_GET_DEVICE) != 0)
            w->failed = 1;
    uint64_t popped = 0;
    if (devtrace_pop_external(w->s, &popped) != 0 || popped != w->external)
        w->failed = 1;
    return NULL;
}

typedef struct tally {
    emu_threads *t;
    const worker *workers;
    int (*odd)(const devtrace_event *ev, const char *name);
    uint64_t *correlations;
} tally;

static void tally_event(const devtrace_event *ev, const char *name, void *user)
{
    tally *y = user;
    emu_threads *t = y->t;
    if (ev->kind != DEVTRACE_KIND_RUNTIME)
        return;
    t->runtime++;
    if (y->odd && y->odd(ev, name))
        t->odd++;
    if (!ev->correlation)
        t->zero_correlation++;
    if (t->ncorr < (size_t)EMU_THREADS * EMU_CALLS_PER_THREAD)
        y->correlations[t->ncorr++] = ev->correlation;
    if (!(ev->flags & DEVTRACE_EVENT_HAS_EXTERNAL))
        return;
    t->linked++;
    for (int i = 0; i < EMU_THREADS; i++)
        if (y->workers[i].tid == ev->stream) {
            if (ev->external_id == y->workers[i].external)
                t->per_thread[i]++;
            else
                t->wrong_external++;
        }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

void emu_run_threads(devtrace_session *s, const emu_lib *e, int (*odd)(const devtrace_event *ev, const char *name),
                     emu_threads *t)
{
    memset(t, 0, sizeof *t);
    CHECK(devtrace_start(s) == 0, "devtrace_start failed");
    worker workers[EMU_THREADS];
    pthread_t threads[EMU_THREADS];
    for (int i = 0; i < EMU_THREADS; i++) {
        workers[i] = (worker){e, s, 1000u + (uint64_t)i, 0, 0};
        pthread_create(&threads[i], NULL, worker_main, &workers[i]);
    }
    for (int i = 0; i < EMU_THREADS; i++) {
        pthread_join(threads[i], NULL);
        CHECK(!workers[i].failed, "thread %d: a runtime call or external push/pop failed", i);
    }
    CHECK(devtrace_stop(s) == 0, "devtrace_stop failed");
    tally y = {t, workers, odd, calloc((size_t)EMU_THREADS * EMU_CALLS_PER_THREAD, sizeof(uint64_t))};
    devtrace_drain(s, tally_event, &y);
    qsort(y.correlations, t->ncorr, sizeof(uint64_t), cmp_u64);
    for (size_t i = 1; i < t->ncorr; i++)
        t->duplicates += y.correlations[i] == y.correlations[i - 1];
    free(y.correlations);
}

void emu_check_threads(const emu_threads *t)
{
    uint64_t want = (uint64_t)EMU_THREADS * EMU_CALLS_PER_THREAD;
    CHECK(t->runtime == want, "runtime events %" PRIu64 ", expected %" PRIu64, t->runtime, want);
    CHECK(t->linked == want, "runtime events linked to an external id: %" PRIu64, t->linked);
    for (int i = 0; i < EMU_THREADS; i++)
        CHECK(t->per_thread[i] == EMU_CALLS_PER_THREAD, "thread %d: %" PRIu64 " events with its external id", i,
              t->per_thread[i]);
    CHECK(t->duplicates == 0 && t->ncorr == want, "%" PRIu64 " duplicate correlation ids among %zu", t->duplicates,
          t->ncorr);
}
