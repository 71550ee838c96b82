/* test_mspti_emu.c: the MSPTI backend end to end against the MSPTI emulator, in process:
 * the program plays the application (it dlopens the emulator as a program linked with the
 * Ascend runtime would have it and drives it through devemu_*), and traces itself through
 * the public API with backend "mspti", the emulator found through $DEVTRACE_MSPTI_LIBRARY
 * exactly as the real library would be.
 *
 *   test_mspti_emu MODE EMULATOR.so WORKLOAD.wl [TRACE.json] [kernel=N memcpy=N memset=N runtime=N]
 *
 * Modes (one process each: the engine binds one vendor library per process, and MSPTI
 * reads $LD_PRELOAD once). ctest runs the traced modes with the emulator in $LD_PRELOAD,
 * as `devtrace record --backend mspti` would:
 *   parity             the workload once; counts from the workload file, no loss
 *   faults             the workload under $DEVEMU_FAULTS; every loss counter equals what the
 *                      emulator says it injected (drop=N: dropped_vendor == N exactly)
 *   second-subscriber  another tool holds MSPTI's one subscriber slot: a note, not fatal
 *   node-api-refused   EMULATOR refuses NODE_API (a CANN release without it): a note, traced
 *   without-preload    $LD_PRELOAD lacks the library: unavailable, the fix in the reason,
 *                      the program runs on untraced
 *   missing-library    $DEVTRACE_MSPTI_LIBRARY names no file: unavailable, said why
 *   missing-required   EMULATOR lacks msptiActivityFlushAll: unavailable, the symbol named
 *   threads            16 threads x 10,000 runtime calls: every event, u64 correlation and
 *                      external id kept
 * Exit status 0 when every assertion holds; each failure prints one line. */
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/session.h"
#include "devemu.h"
#include "devtrace.h"
#include "wl.h"

#define THREADS 16
#define CALLS_PER_THREAD 10000

static int failures;

#define CHECK(cond, ...)                                                                                     \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            failures++;                                                                                      \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                             \
            fprintf(stderr, __VA_ARGS__);                                                                    \
            fputc('\n', stderr);                                                                             \
        }                                                                                                    \
    } while (0)

typedef struct emulator {
    void *handle;
    int (*load_workload)(const char *path, char *err, size_t errlen);
    int (*run)(void);
    int (*call)(int generic);
    void (*get_stats)(devemu_stats *out);
} emulator;

static void *must_sym(void *h, const char *name)
{
    void *p = dlsym(h, name);
    if (!p) {
        fprintf(stderr, "FAIL: the emulator has no %s\n", name);
        exit(1);
    }
    return p;
}

static void load_emulator(const char *path, emulator *e)
{
    e->handle = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!e->handle) {
        fprintf(stderr, "FAIL: cannot load %s: %s\n", path, dlerror());
        exit(1);
    }
    void *p;
    p = must_sym(e->handle, "devemu_load_workload");
    memcpy(&e->load_workload, &p, sizeof p);
    p = must_sym(e->handle, "devemu_run");
    memcpy(&e->run, &p, sizeof p);
    p = must_sym(e->handle, "devemu_call");
    memcpy(&e->call, &p, sizeof p);
    p = must_sym(e->handle, "devemu_get_stats");
    memcpy(&e->get_stats, &p, sizeof p);
}

static int has_note(const dt_session *s, const char *needle)
{
    for (int i = 0; i < s->nnotes; i++)
        if (strstr(s->notes[i], needle))
            return 1;
    return 0;
}

static void print_notes(const dt_session *s)
{
    for (int i = 0; i < s->nnotes; i++)
        printf("  note: %s\n", s->notes[i]);
}

#define ANY UINT64_MAX

typedef struct expected {
    uint64_t kernel, memcpy, memset, runtime;
} expected;

static expected expectations(const char *wl_path, int argc, char **argv, int first)
{
    wl_workload w;
    wl_counts c;
    char err[512];
    if (wl_parse_file(wl_path, &w, err, sizeof err) != 0) {
        fprintf(stderr, "FAIL: %s\n", err);
        exit(1);
    }
    wl_expected_counts(&w, &c);
    expected e = {c.kernels, c.memcpys, c.memsets, c.runtime};
    wl_free(&w);
    for (int i = first; i < argc; i++) {
        uint64_t v = ANY;
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

static devtrace_session *open_mspti(void)
{
    devtrace_config cfg;
    devtrace_error err;
    devtrace_config_init(&cfg);
    cfg.backend = "mspti";
    devtrace_session *s = devtrace_open(&cfg, &err);
    if (!s) {
        fprintf(stderr, "FAIL: devtrace_open: %s\n", err.message);
        exit(1);
    }
    return s;
}

static void run_traced(devtrace_session *s, emulator *emu, const char *wl_path, const char *trace)
{
    char err[512];
    CHECK(emu->load_workload(wl_path, err, sizeof err) == 0, "devemu_load_workload: %s", err);
    dt_set_default_session(s); /* the emulator's `op push` goes through devtrace_annotate_push */
    CHECK(devtrace_start(s) == 0, "devtrace_start failed");
    CHECK(emu->run() == 0, "devemu_run failed: the host program did not complete");
    CHECK(devtrace_stop(s) == 0, "devtrace_stop failed");
    if (trace) {
        devtrace_error werr;
        CHECK(devtrace_write_chrome(s, trace, &werr) == 0, "devtrace_write_chrome: %s", werr.message);
    }
}

static void check_counts(devtrace_session *s, const expected *e)
{
    const devtrace_stats *st = devtrace_stats_get(s);
    CHECK(e->kernel == ANY || st->events[DEVTRACE_KIND_KERNEL] == e->kernel, "kernel=%" PRIu64 ", expected %" PRIu64,
          st->events[DEVTRACE_KIND_KERNEL], e->kernel);
    CHECK(e->memcpy == ANY || st->events[DEVTRACE_KIND_MEMCPY] == e->memcpy, "memcpy=%" PRIu64 ", expected %" PRIu64,
          st->events[DEVTRACE_KIND_MEMCPY], e->memcpy);
    CHECK(e->memset == ANY || st->events[DEVTRACE_KIND_MEMSET] == e->memset, "memset=%" PRIu64 ", expected %" PRIu64,
          st->events[DEVTRACE_KIND_MEMSET], e->memset);
    CHECK(e->runtime == ANY || st->events[DEVTRACE_KIND_RUNTIME] == e->runtime,
          "runtime=%" PRIu64 ", expected %" PRIu64, st->events[DEVTRACE_KIND_RUNTIME], e->runtime);
    printf("counts: kernel=%" PRIu64 " memcpy=%" PRIu64 " memset=%" PRIu64 " runtime=%" PRIu64 "\n",
           st->events[DEVTRACE_KIND_KERNEL], st->events[DEVTRACE_KIND_MEMCPY], st->events[DEVTRACE_KIND_MEMSET],
           st->events[DEVTRACE_KIND_RUNTIME]);
}

/* refuse-buffer=N in $DEVEMU_FAULTS: the emulator refuses N requests itself. */
static uint64_t emulator_refusals(void)
{
    const char *f = getenv("DEVEMU_FAULTS");
    const char *p = f ? strstr(f, "refuse-buffer=") : NULL;
    return p ? strtoull(p + 14, NULL, 10) : 0;
}

static void mode_parity(emulator *emu, const char *wl, const char *trace, const expected *e, int faults)
{
    devtrace_session *s = open_mspti();
    CHECK(strcmp(devtrace_backend_name(s), "mspti") == 0, "backend %s, not mspti: %s", devtrace_backend_name(s),
          devtrace_unavailable_reason(s));
    CHECK(has_note(s, "no grid, block, registers"), "no note on what MSPTI records lack");
    run_traced(s, emu, wl, trace);
    devemu_stats es;
    emu->get_stats(&es);
    const devtrace_stats *st = devtrace_stats_get(s);
    print_notes(s);
    printf("losses: zero_timestamp=%" PRIu64 " malformed=%" PRIu64 " dropped_vendor=%" PRIu64
           " dropped_pool_full=%" PRIu64 " refused_buffers=%" PRIu64 " unpaired_flows=%" PRIu64 "\n",
           st->zero_timestamp, st->malformed_records, st->dropped_vendor, st->dropped_pool_full, st->refused_buffers,
           st->unpaired_flows);
    printf("emulator: injected_zero_time=%" PRIu64 " injected_malformed=%" PRIu64 " dropped=%" PRIu64
           " buffers requested=%" PRIu64 " refused=%" PRIu64 " completed=%" PRIu64 "\n",
           es.injected_zero_time, es.injected_malformed, es.dropped_records, es.buffers_requested,
           es.buffers_refused, es.buffers_completed);
    check_counts(s, e);
    CHECK(st->zero_timestamp == es.injected_zero_time, "zero_timestamp=%" PRIu64 ", the emulator injected %" PRIu64,
          st->zero_timestamp, es.injected_zero_time);
    CHECK(st->malformed_records == es.injected_malformed, "malformed_records=%" PRIu64 ", injected %" PRIu64,
          st->malformed_records, es.injected_malformed);
    CHECK(st->dropped_vendor == es.dropped_records, "dropped_vendor=%" PRIu64 ", the emulator dropped %" PRIu64,
          st->dropped_vendor, es.dropped_records);
    CHECK(st->refused_buffers == es.buffers_refused - emulator_refusals(),
          "refused_buffers=%" PRIu64 ", the emulator saw %" PRIu64 " refusals (%" PRIu64 " its own)",
          st->refused_buffers, es.buffers_refused, emulator_refusals());
    CHECK(st->unresolved_names == 0, "unresolved_names=%" PRIu64, st->unresolved_names);
    CHECK(st->bad_timestamps == 0, "bad_timestamps=%" PRIu64, st->bad_timestamps);
    const char *spec = getenv("DEVEMU_FAULTS");
    if (spec && strstr(spec, "subscribe-fail"))
        CHECK(has_note(s, "msptiSubscribe refused: MSPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (2)"),
              "no note about the refused subscription");
    if (!faults) {
        CHECK(st->dropped_vendor + st->malformed_records + st->zero_timestamp + st->refused_buffers +
                      st->dropped_pool_full ==
                  0,
              "losses in a run without faults");
        CHECK(st->unpaired_flows == 0, "unpaired_flows=%" PRIu64, st->unpaired_flows);
    }
    devtrace_close(s);
}

static void other_tool_callback(void *userdata, int domain, uint32_t cbid, const void *data)
{
    (void)userdata, (void)domain, (void)cbid, (void)data;
}

static void mode_second_subscriber(emulator *emu, const char *wl, const char *trace, const expected *e)
{
    int (*subscribe)(void **, void (*)(void *, int, uint32_t, const void *), void *);
    void *p = must_sym(emu->handle, "msptiSubscribe");
    memcpy(&subscribe, &p, sizeof p);
    void *other = NULL;
    CHECK(subscribe(&other, other_tool_callback, NULL) == 0, "the first subscriber (another tool) was refused");
    devtrace_session *s = open_mspti();
    CHECK(strcmp(devtrace_backend_name(s), "mspti") == 0, "a second subscriber made the session unavailable: %s",
          devtrace_unavailable_reason(s));
    CHECK(has_note(s, "msptiSubscribe refused: MSPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (2)"),
          "no note about the refused subscription");
    run_traced(s, emu, wl, trace);
    print_notes(s);
    check_counts(s, e);
    devtrace_close(s);
}

static void mode_node_api_refused(emulator *emu, const char *wl, const char *trace, const expected *e)
{
    devtrace_session *s = open_mspti();
    CHECK(strcmp(devtrace_backend_name(s), "mspti") == 0, "backend %s: %s", devtrace_backend_name(s),
          devtrace_unavailable_reason(s));
    run_traced(s, emu, wl, trace);
    print_notes(s);
    CHECK(has_note(s, "msptiActivityEnable(NODE_API) refused (optional"), "no note about the refused NODE_API");
    CHECK(!has_note(s, "failed"), "an enable failed besides the optional NODE_API");
    check_counts(s, e);
    devtrace_close(s);
}

/* The host program runs on untraced under an unavailable session. */
static void run_untraced(devtrace_session *s, emulator *emu, const char *wl)
{
    char err[512];
    CHECK(emu->load_workload(wl, err, sizeof err) == 0, "devemu_load_workload: %s", err);
    CHECK(devtrace_start(s) == 0, "devtrace_start on the unavailable session failed");
    CHECK(emu->run() == 0, "the host program did not complete");
    CHECK(devtrace_stop(s) == 0, "devtrace_stop failed");
    CHECK(devtrace_stats_get(s)->events[DEVTRACE_KIND_RUNTIME] == 0, "an unavailable session recorded events");
}

static void mode_unavailable(emulator *emu, const char *wl, const char *const *needles)
{
    devtrace_session *s = open_mspti();
    const char *why = devtrace_unavailable_reason(s);
    printf("unavailable: %s\n", why);
    CHECK(strcmp(devtrace_backend_name(s), "none") == 0, "backend %s, expected none", devtrace_backend_name(s));
    for (const char *const *n = needles; *n; n++)
        CHECK(strstr(why, *n) != NULL, "the reason lacks \"%s\": %s", *n, why);
    if (emu)
        run_untraced(s, emu, wl);
    devtrace_close(s);
}

/* ---- threads ---- */

typedef struct worker {
    emulator *emu;
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
    for (int i = 0; i < CALLS_PER_THREAD; i++)
        if (w->emu->call(WL_CALL_GET_DEVICE) != 0)
            w->failed = 1;
    uint64_t popped = 0;
    if (devtrace_pop_external(w->s, &popped) != 0 || popped != w->external)
        w->failed = 1;
    return NULL;
}

typedef struct tally {
    worker *workers;
    uint64_t runtime, linked, wrong_external, small_correlation;
    uint64_t per_thread[THREADS];
    uint64_t *correlations;
    size_t ncorr;
} tally;

static void tally_event(const devtrace_event *ev, const char *name, void *user)
{
    tally *t = user;
    if (ev->kind != DEVTRACE_KIND_RUNTIME)
        return;
    t->runtime++;
    if (ev->correlation <= UINT32_MAX || strcmp(name, "aclrtGetDevice") != 0)
        t->small_correlation++;
    if (t->ncorr < (size_t)THREADS * CALLS_PER_THREAD)
        t->correlations[t->ncorr++] = ev->correlation;
    if (!(ev->flags & DEVTRACE_EVENT_HAS_EXTERNAL))
        return;
    t->linked++;
    for (int i = 0; i < THREADS; i++)
        if (t->workers[i].tid == ev->stream) {
            if (ev->external_id == t->workers[i].external)
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

static void mode_threads(emulator *emu)
{
    devtrace_session *s = open_mspti();
    CHECK(strcmp(devtrace_backend_name(s), "mspti") == 0, "backend %s: %s", devtrace_backend_name(s),
          devtrace_unavailable_reason(s));
    CHECK(devtrace_start(s) == 0, "devtrace_start failed");
    worker workers[THREADS];
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++) {
        workers[i] = (worker){emu, s, 1000u + (uint64_t)i, 0, 0};
        pthread_create(&threads[i], NULL, worker_main, &workers[i]);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(threads[i], NULL);
        CHECK(!workers[i].failed, "thread %d: a runtime call or external push/pop failed", i);
    }
    CHECK(devtrace_stop(s) == 0, "devtrace_stop failed");
    tally t = {workers, 0, 0, 0, 0, {0}, calloc((size_t)THREADS * CALLS_PER_THREAD, sizeof(uint64_t)), 0};
    devtrace_drain(s, tally_event, &t);
    const devtrace_stats *st = devtrace_stats_get(s);
    print_notes(s);
    uint64_t want = (uint64_t)THREADS * CALLS_PER_THREAD;
    printf("threads: runtime=%" PRIu64 " linked=%" PRIu64 " dropped_vendor=%" PRIu64 " refused=%" PRIu64 "\n",
           t.runtime, t.linked, st->dropped_vendor, st->refused_buffers);
    CHECK(t.runtime == want, "runtime events %" PRIu64 ", expected %" PRIu64, t.runtime, want);
    CHECK(t.linked == want, "runtime events linked to an external id: %" PRIu64, t.linked);
    CHECK(t.wrong_external == 0, "%" PRIu64 " runtime events carry another thread's external id", t.wrong_external);
    for (int i = 0; i < THREADS; i++)
        CHECK(t.per_thread[i] == CALLS_PER_THREAD, "thread %d: %" PRIu64 " events with its external id", i,
              t.per_thread[i]);
    CHECK(t.small_correlation == 0, "%" PRIu64 " runtime events lost the upper half of their u64 id or their name",
          t.small_correlation);
    qsort(t.correlations, t.ncorr, sizeof(uint64_t), cmp_u64);
    uint64_t dup = 0;
    for (size_t i = 1; i < t.ncorr; i++)
        dup += t.correlations[i] == t.correlations[i - 1];
    CHECK(dup == 0 && t.ncorr == want, "%" PRIu64 " duplicate correlation ids among %zu", dup, t.ncorr);
    CHECK(st->dropped_vendor + st->refused_buffers + st->malformed_records + st->dropped_store_full == 0,
          "losses under threads");
    free(t.correlations);
    devtrace_close(s);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s MODE EMULATOR.so WORKLOAD.wl [TRACE.json] [kind=N ...]\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1], *lib = argv[2], *wl = argv[3];
    const char *trace = argc > 4 && !strchr(argv[4], '=') ? argv[4] : NULL;
    int first_expect = trace ? 5 : 4;
    expected e = expectations(wl, argc, argv, first_expect);
    if (strcmp(mode, "missing-library") == 0) {
        static const char *const needles[] = {"$DEVTRACE_MSPTI_LIBRARY=/nonexistent/libmspti.so cannot be loaded",
                                              NULL};
        setenv("DEVTRACE_MSPTI_LIBRARY", "/nonexistent/libmspti.so", 1);
        mode_unavailable(NULL, wl, needles);
        unsetenv("DEVTRACE_MSPTI_LIBRARY");
        setenv("ASCEND_HOME_PATH", "/nonexistent/ascend", 1);
        static const char *const searched[] = {
            "MSPTI library not found; tried /nonexistent/ascend/lib64/libmspti.so, "
            "/nonexistent/ascend/tools/mspti/lib64/libmspti.so",
            "set $DEVTRACE_MSPTI_LIBRARY to the library's path or $ASCEND_HOME_PATH to the SDK root", NULL};
        mode_unavailable(NULL, wl, searched);
    } else {
        if (strcmp(mode, "without-preload") == 0)
            unsetenv("LD_PRELOAD"); /* the library reads it at its first check, after this */
        setenv("DEVTRACE_MSPTI_LIBRARY", lib, 1);
        emulator emu;
        load_emulator(lib, &emu);
        if (strcmp(mode, "parity") == 0)
            mode_parity(&emu, wl, trace, &e, 0);
        else if (strcmp(mode, "faults") == 0)
            mode_parity(&emu, wl, trace, &e, 1);
        else if (strcmp(mode, "second-subscriber") == 0)
            mode_second_subscriber(&emu, wl, trace, &e);
        else if (strcmp(mode, "node-api-refused") == 0)
            mode_node_api_refused(&emu, wl, trace, &e);
        else if (strcmp(mode, "without-preload") == 0) {
            static const char *const needles[] = {
                "msptiActivityEnable(MEMCPY) returned MSPTI_ERROR_WITHOUT_LD_PRELOAD (6)",
                "libmspti.so must be in LD_PRELOAD: run under 'devtrace record --backend mspti', or "
                "LD_PRELOAD=/path/libmspti.so",
                NULL};
            mode_unavailable(&emu, wl, needles);
        } else if (strcmp(mode, "missing-required") == 0) {
            static const char *const needles[] = {"lacks the required symbol msptiActivityFlushAll", NULL};
            mode_unavailable(&emu, wl, needles);
        } else if (strcmp(mode, "threads") == 0)
            mode_threads(&emu);
        else {
            fprintf(stderr, "unknown mode %s\n", mode);
            return 2;
        }
    }
    if (failures)
        fprintf(stderr, "%s: %d assertion(s) failed\n", mode, failures);
    else
        printf("%s: ok\n", mode);
    return failures ? 1 : 0;
}
