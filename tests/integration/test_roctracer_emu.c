/* test_roctracer_emu.c: the roctracer backend end to end against the ROCtracer emulator,
 * in process: the program plays the application (it dlopens the emulator as a program
 * linked with HIP would have it and drives it through devemu_*), and traces itself
 * through the public API with backend "roctracer", the emulator found through
 * $DEVTRACE_ROCTRACER_LIBRARY exactly as the real library would be.
 *
 *   test_roctracer_emu MODE EMULATOR.so WORKLOAD.wl [TRACE.json] [kind=N ...]
 *
 * Modes (one process each):
 *   parity           the workload once: counts from the workload file, no loss, every
 *                    kernel with the grid, block and dynamic shared memory of its launch
 *                    statement, hip* runtime names, device properties for occupancy
 *   faults           the workload under $DEVEMU_FAULTS: each loss counter equals what the
 *                    emulator says it did (drop=N: dropped_vendor, malformed=N, zero-time=N)
 *   two-sessions     parity twice in one process, a session closed between the runs, and
 *                    ROCtracer paused by another tool (roctracer_stop) before the second
 *   missing-library  no library anywhere: unavailable, every place tried and the variable
 *                    to set named; a bad $DEVTRACE_ROCTRACER_LIBRARY named; the program runs on
 *   missing-symbol   EMULATOR lacks roctracer_enable_domain_callback: unavailable, the
 *                    symbol named, the program runs on
 *   threads          16 threads x 10,000 runtime calls: every event, correlation and
 *                    external id kept
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

static wl_workload g_wl;

static expected expectations(int argc, char **argv, int first)
{
    wl_counts c;
    wl_expected_counts(&g_wl, &c);
    expected e = {c.kernels, c.memcpys, c.memsets, c.runtime};
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

static devtrace_session *open_roctracer(void)
{
    devtrace_config cfg;
    devtrace_error err;
    devtrace_config_init(&cfg);
    cfg.backend = "roctracer";
    devtrace_session *s = devtrace_open(&cfg, &err);
    if (!s) {
        fprintf(stderr, "FAIL: devtrace_open: %s\n", err.message);
        exit(1);
    }
    return s;
}

/* ---- what the drain gives ---- */

typedef struct tally {
    uint64_t kernels, with_launch, launch_mismatch, shared_mismatch, runtime, non_hip_names;
    uint64_t per_kind[DEVTRACE_KIND_COUNT];
    size_t next_launch, skip_launches;
} tally;

/* The n-th launch statement of the workload. */
static const wl_launch *nth_launch(size_t n)
{
    for (size_t i = 0; i < g_wl.nstmts; i++)
        if (g_wl.stmts[i].kind == WL_STMT_LAUNCH && n-- == 0)
            return &g_wl.stmts[i].u.launch;
    return NULL;
}

static void tally_event(const devtrace_event *ev, const char *name, void *user)
{
    tally *t = user;
    t->per_kind[ev->kind]++;
    if (ev->kind == DEVTRACE_KIND_RUNTIME) {
        t->runtime++;
        if (strncmp(name, "hip", 3) != 0 || strchr(name, '#'))
            t->non_hip_names++;
        return;
    }
    if (ev->kind != DEVTRACE_KIND_KERNEL)
        return;
    /* one stream: kernels run in launch order, less those whose records were dropped */
    const wl_launch *l = nth_launch(t->skip_launches + t->next_launch++);
    t->kernels++;
    if (!(ev->flags & DEVTRACE_EVENT_HAS_LAUNCH) || !l)
        return;
    t->with_launch++;
    for (int i = 0; i < 3; i++)
        if ((uint32_t)ev->u.kernel.grid[i] != l->grid[i] || (uint32_t)ev->u.kernel.block[i] != l->block[i])
            t->launch_mismatch++;
    if (ev->u.kernel.dynamic_shared != l->dyn_smem)
        t->shared_mismatch++;
}

/* drop=N in $DEVEMU_FAULTS: the first N device statements lose their records; how many
 * of them are launches. */
static size_t dropped_launches(void)
{
    const char *f = getenv("DEVEMU_FAULTS");
    const char *p = f ? strstr(f, "drop=") : NULL;
    uint64_t n = p ? strtoull(p + 5, NULL, 10) : 0, launches = 0;
    for (size_t i = 0; i < g_wl.nstmts && n; i++) {
        int k = g_wl.stmts[i].kind;
        if (k == WL_STMT_LAUNCH || k == WL_STMT_MEMCPY || k == WL_STMT_MEMSET) {
            launches += k == WL_STMT_LAUNCH;
            n--;
        }
    }
    return (size_t)launches;
}

static void check_counts(const devtrace_stats *st, const expected *e)
{
    CHECK(e->kernel == ANY || st->events[DEVTRACE_KIND_KERNEL] == e->kernel, "kernel=%" PRIu64 ", expected %" PRIu64,
          st->events[DEVTRACE_KIND_KERNEL], e->kernel);
    CHECK(e->memcpy == ANY || st->events[DEVTRACE_KIND_MEMCPY] == e->memcpy, "memcpy=%" PRIu64 ", expected %" PRIu64,
          st->events[DEVTRACE_KIND_MEMCPY], e->memcpy);
    CHECK(e->memset == ANY || st->events[DEVTRACE_KIND_MEMSET] == e->memset, "memset=%" PRIu64 ", expected %" PRIu64,
          st->events[DEVTRACE_KIND_MEMSET], e->memset);
    CHECK(e->runtime == ANY || st->events[DEVTRACE_KIND_RUNTIME] == e->runtime, "runtime=%" PRIu64 ", expected %" PRIu64,
          st->events[DEVTRACE_KIND_RUNTIME], e->runtime);
    printf("counts: kernel=%" PRIu64 " memcpy=%" PRIu64 " memset=%" PRIu64 " runtime=%" PRIu64 "\n",
           st->events[DEVTRACE_KIND_KERNEL], st->events[DEVTRACE_KIND_MEMCPY], st->events[DEVTRACE_KIND_MEMSET],
           st->events[DEVTRACE_KIND_RUNTIME]);
}

/* One traced run of the workload; returns the session (stopped, drained, written). */
static devtrace_session *traced_run(emulator *emu, const char *wl_path, const char *trace, tally *t)
{
    char err[512];
    devtrace_session *s = open_roctracer();
    CHECK(strcmp(devtrace_backend_name(s), "roctracer") == 0, "backend %s: %s", devtrace_backend_name(s),
          devtrace_unavailable_reason(s));
    CHECK(emu->load_workload(wl_path, err, sizeof err) == 0, "devemu_load_workload: %s", err);
    dt_set_default_session(s); /* the emulator's `op push` goes through devtrace_annotate_push */
    CHECK(devtrace_start(s) == 0, "devtrace_start failed");
    CHECK(emu->run() == 0, "devemu_run failed: the host program did not complete");
    CHECK(devtrace_stop(s) == 0, "devtrace_stop failed");
    dt_set_default_session(NULL);
    memset(t, 0, sizeof *t);
    t->skip_launches = dropped_launches();
    devtrace_drain(s, tally_event, t);
    if (trace) {
        devtrace_error werr;
        CHECK(devtrace_write_chrome(s, trace, &werr) == 0, "devtrace_write_chrome: %s", werr.message);
    }
    print_notes(s);
    return s;
}

static void check_launches_and_names(const tally *t)
{
    CHECK(t->with_launch == t->kernels, "%" PRIu64 " of %" PRIu64 " kernels carry their launch configuration",
          t->with_launch, t->kernels);
    CHECK(t->launch_mismatch == 0, "%" PRIu64 " grid/block values differ from the launch statements", t->launch_mismatch);
    CHECK(t->shared_mismatch == 0, "%" PRIu64 " kernels' dynamic shared memory differs from the statements",
          t->shared_mismatch);
    CHECK(t->non_hip_names == 0, "%" PRIu64 " runtime events without a real hip* name", t->non_hip_names);
}

static int mode_parity(emulator *emu, const char *wl, const char *trace, const expected *e, int faults)
{
    tally t;
    devemu_stats before, after;
    emu->get_stats(&before);
    devtrace_session *s = traced_run(emu, wl, trace, &t);
    emu->get_stats(&after);
    const devtrace_stats *st = devtrace_stats_get(s);
    uint64_t dropped = after.dropped_records - before.dropped_records;
    uint64_t malformed = after.injected_malformed - before.injected_malformed;
    uint64_t zero = after.injected_zero_time - before.injected_zero_time;
    printf("losses: dropped_vendor=%" PRIu64 " (emulator dropped %" PRIu64 ") malformed=%" PRIu64 " (injected %" PRIu64
           ") zero_timestamp=%" PRIu64 " (injected %" PRIu64 ") unpaired_flows=%" PRIu64 " unresolved=%" PRIu64 "\n",
           st->dropped_vendor, dropped, st->malformed_records, malformed, st->zero_timestamp, zero,
           st->unpaired_flows, st->unresolved_names);
    check_counts(st, e);
    check_launches_and_names(&t);
    CHECK(st->dropped_vendor == dropped, "dropped_vendor=%" PRIu64 ", the emulator dropped %" PRIu64,
          st->dropped_vendor, dropped);
    CHECK(st->malformed_records == malformed, "malformed_records=%" PRIu64 ", injected %" PRIu64,
          st->malformed_records, malformed);
    CHECK(st->zero_timestamp == zero, "zero_timestamp=%" PRIu64 ", injected %" PRIu64, st->zero_timestamp, zero);
    CHECK(st->bad_timestamps == 0, "bad_timestamps=%" PRIu64, st->bad_timestamps);
    CHECK(st->unresolved_names == 0, "unresolved_names=%" PRIu64, st->unresolved_names);
    CHECK(s->nsamples >= 2, "%zu clock samples (start and stop at least)", s->nsamples);
    CHECK(s->ndevices == 1 && s->devices[0].has_occupancy && s->devices[0].warp_size == (int)g_wl.devices[0].warp &&
              s->devices[0].num_sms == (int)g_wl.devices[0].sms,
          "device properties not read from hipDeviceGetAttribute (%d devices)", s->ndevices);
    CHECK(has_note(s, "ROCtracer interface 4.1"), "no note naming the library and its interface");
    if (dropped)
        CHECK(has_note(s, "ROCtracer reports no drop count"), "no note explaining dropped.vendor");
    CHECK(st->unpaired_flows == 0, "unpaired_flows=%" PRIu64, st->unpaired_flows);
    if (!faults) {
        CHECK(dropped + malformed + zero == 0, "the emulator injected faults in a run without faults");
        CHECK(st->dropped_vendor + st->malformed_records + st->zero_timestamp == 0, "losses in a run without faults");
    }
    devtrace_close(s);
    return 0;
}

/* Two sessions one after the other; before the second, another tool pauses ROCtracer
 * (roctracer_stop): the session resumes it. */
static int mode_two_sessions(emulator *emu, const char *wl, const expected *e)
{
    void (*pause)(void);
    void *p = must_sym(emu->handle, "roctracer_stop");
    memcpy(&pause, &p, sizeof p);
    for (int round = 0; round < 2; round++) {
        tally t;
        if (round == 1)
            pause();
        devtrace_session *s = traced_run(emu, wl, NULL, &t);
        check_counts(devtrace_stats_get(s), e);
        check_launches_and_names(&t);
        CHECK(devtrace_stats_get(s)->dropped_vendor == 0, "round %d: dropped_vendor=%" PRIu64, round,
              devtrace_stats_get(s)->dropped_vendor);
        devtrace_close(s);
    }
    return 0;
}

/* The program runs on, untraced, under an unavailable session. */
static void run_untraced(devtrace_session *s, emulator *emu, const char *wl)
{
    char err[512];
    CHECK(emu->load_workload(wl, err, sizeof err) == 0, "devemu_load_workload: %s", err);
    CHECK(devtrace_start(s) == 0, "devtrace_start on the unavailable session failed");
    CHECK(emu->run() == 0, "the host program did not complete");
    CHECK(devtrace_stop(s) == 0, "devtrace_stop failed");
    CHECK(devtrace_stats_get(s)->events[DEVTRACE_KIND_RUNTIME] == 0, "an unavailable session recorded events");
}

static int mode_missing_library(const char *lib, const char *wl)
{
    /* Nowhere to find it (the emulator is loaded only afterwards: a loaded copy would be found). */
    unsetenv("DEVTRACE_ROCTRACER_LIBRARY");
    unsetenv("DTK_PATH");
    setenv("ROCM_PATH", "/nonexistent-rocm", 1);
    devtrace_session *s = open_roctracer();
    const char *why = devtrace_unavailable_reason(s);
    printf("unavailable: %s\n", why);
    CHECK(strcmp(devtrace_backend_name(s), "none") == 0, "backend %s, expected none", devtrace_backend_name(s));
    static const char *const named[] = {"ROCtracer not found", "/nonexistent-rocm/lib", "$DTK_PATH (unset)",
                                        "/opt/rocm/lib", "/opt/dtk/lib", "libgalaxyhip.so.5",
                                        "the process itself", "DEVTRACE_ROCTRACER_LIBRARY"};
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        CHECK(strstr(why, named[i]) != NULL, "the reason does not say '%s': %s", named[i], why);
    devtrace_close(s);
    /* A path that does not load: named, with the loader's message. */
    setenv("DEVTRACE_ROCTRACER_LIBRARY", "/nonexistent/libroctracer64.so", 1);
    s = open_roctracer();
    why = devtrace_unavailable_reason(s);
    printf("unavailable: %s\n", why);
    CHECK(strstr(why, "$DEVTRACE_ROCTRACER_LIBRARY=/nonexistent/libroctracer64.so cannot be loaded") != NULL,
          "the reason does not name the bad path: %s", why);
    devtrace_close(s);
    emulator emu;
    load_emulator(lib, &emu);
    s = open_roctracer(); /* still unavailable: the variable wins over the loaded copy */
    run_untraced(s, &emu, wl);
    devtrace_close(s);
    return 0;
}

static int mode_missing_symbol(emulator *emu, const char *wl)
{
    devtrace_session *s = open_roctracer();
    const char *why = devtrace_unavailable_reason(s);
    printf("unavailable: %s\n", why);
    CHECK(strcmp(devtrace_backend_name(s), "none") == 0, "backend %s, expected none", devtrace_backend_name(s));
    CHECK(strstr(why, "lacks the required symbol roctracer_enable_domain_callback;") != NULL,
          "the reason does not name the missing symbol: %s", why);
    run_untraced(s, emu, wl);
    devtrace_close(s);
    return 0;
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

typedef struct thread_tally {
    worker *workers;
    uint64_t runtime, linked, wrong_external, zero_correlation;
    uint64_t per_thread[THREADS];
    uint64_t *correlations;
    size_t ncorr;
} thread_tally;

static void thread_event(const devtrace_event *ev, const char *name, void *user)
{
    thread_tally *t = user;
    if (ev->kind != DEVTRACE_KIND_RUNTIME)
        return;
    t->runtime++;
    if (strcmp(name, "hipGetDevice") != 0)
        t->wrong_external++;
    if (!ev->correlation)
        t->zero_correlation++;
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

static int mode_threads(emulator *emu)
{
    devtrace_session *s = open_roctracer();
    CHECK(strcmp(devtrace_backend_name(s), "roctracer") == 0, "backend %s: %s", devtrace_backend_name(s),
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
    thread_tally t = {workers, 0, 0, 0, 0, {0}, calloc((size_t)THREADS * CALLS_PER_THREAD, sizeof(uint64_t)), 0};
    devtrace_drain(s, thread_event, &t);
    const devtrace_stats *st = devtrace_stats_get(s);
    print_notes(s);
    printf("threads: runtime=%" PRIu64 " linked=%" PRIu64 " dropped_vendor=%" PRIu64 " store_full=%" PRIu64 "\n",
           t.runtime, t.linked, st->dropped_vendor, st->dropped_store_full);
    uint64_t want = (uint64_t)THREADS * CALLS_PER_THREAD;
    CHECK(t.runtime == want, "runtime events %" PRIu64 ", expected %" PRIu64, t.runtime, want);
    CHECK(t.linked == want, "runtime events linked to an external id: %" PRIu64, t.linked);
    CHECK(t.wrong_external == 0, "%" PRIu64 " runtime events with another thread's external id or name",
          t.wrong_external);
    for (int i = 0; i < THREADS; i++)
        CHECK(t.per_thread[i] == CALLS_PER_THREAD, "thread %d: %" PRIu64 " events with its external id", i,
              t.per_thread[i]);
    CHECK(t.zero_correlation == 0, "%" PRIu64 " runtime events without a correlation id", t.zero_correlation);
    qsort(t.correlations, t.ncorr, sizeof(uint64_t), cmp_u64);
    uint64_t dup = 0;
    for (size_t i = 1; i < t.ncorr; i++)
        dup += t.correlations[i] == t.correlations[i - 1];
    CHECK(dup == 0 && t.ncorr == want, "%" PRIu64 " duplicate correlation ids among %zu", dup, t.ncorr);
    CHECK(st->dropped_vendor + st->malformed_records + st->dropped_store_full == 0, "losses under threads");
    free(t.correlations);
    devtrace_close(s);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s MODE EMULATOR.so WORKLOAD.wl [TRACE.json] [kind=N ...]\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1], *lib = argv[2], *wl = argv[3];
    const char *trace = argc > 4 && !strchr(argv[4], '=') ? argv[4] : NULL;
    char err[512];
    if (wl_parse_file(wl, &g_wl, err, sizeof err) != 0) {
        fprintf(stderr, "FAIL: %s\n", err);
        return 2;
    }
    expected e = expectations(argc, argv, trace ? 5 : 4);
    if (strcmp(mode, "missing-library") == 0) {
        mode_missing_library(lib, wl);
    } else {
        setenv("DEVTRACE_ROCTRACER_LIBRARY", lib, 1);
        emulator emu;
        load_emulator(lib, &emu);
        if (strcmp(mode, "parity") == 0)
            mode_parity(&emu, wl, trace, &e, 0);
        else if (strcmp(mode, "faults") == 0)
            mode_parity(&emu, wl, trace, &e, 1);
        else if (strcmp(mode, "two-sessions") == 0)
            mode_two_sessions(&emu, wl, &e);
        else if (strcmp(mode, "missing-symbol") == 0)
            mode_missing_symbol(&emu, wl);
        else if (strcmp(mode, "threads") == 0)
            mode_threads(&emu);
        else {
            fprintf(stderr, "unknown mode %s\n", mode);
            wl_free(&g_wl);
            return 2;
        }
    }
    wl_free(&g_wl);
    if (failures)
        fprintf(stderr, "%s: %d assertion(s) failed\n", mode, failures);
    else
        printf("%s: ok\n", mode);
    return failures ? 1 : 0;
}
