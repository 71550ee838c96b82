/* rel_load.c: load tests of the CUPTI backend against the CUPTI emulator, in process (the engine
 * is the one every CUPTI-shaped vendor uses). Figures are printed as one line for docs/reliability.md.
 *
 *   rel_load threads EMULATOR.so [--threads T] [--calls C] [--no-loss]
 *       T threads (default 64) each make C runtime calls (default 100000; CI uses fewer): ops of 10
 *       calls, each op its own external id pushed on its own thread, alternating a kernel launch
 *       and cudaGetDevice. Checks: every record the emulator wrote (API, kernel, external link) is
 *       a stored event or counted in a loss counter (no loss without a count); every launch's
 *       runtime event and kernel are one paired flow (same correlation, both flagged); every op's
 *       attribution is exact (its 5 kernels and 10 runtime calls carry its id, its kernels' time is
 *       its launches' durations); correlation ids unique. A counted loss (a buffer request the
 *       pool could not serve) may spoil one op, link and flow each; with --no-loss there must be none.
 *   rel_load bound EMULATOR.so [--events N] [--bound B] [--threads T]
 *       N runtime calls (default 10,000,000) on T threads (default 4) into a session bounded at B
 *       events (default 1,000,000; $DEVTRACE_MAX_EVENTS style): stored + dropped_store_full equals
 *       N exactly, stored never exceeds B, and the peak memory growth (VmHWM) stays within what B
 *       events cost plus the fixed buffers.
 * Exit status 0 when every check holds; each failure prints one line. */
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/session.h"
#include "devemu.h"
#include "devtrace.h"
#include "wl.h"

/* Under a sanitizer the allocator adds redzones and a quarantine (ASan) or 4 bytes of shadow per
 * byte (TSan): the memory bound is checked with that allowance there, the counts exactly all the
 * same. */
#if defined(__SANITIZE_THREAD__)
#define REL_MEMORY_FACTOR 5
#elif defined(__SANITIZE_ADDRESS__)
#define REL_MEMORY_FACTOR 2
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define REL_MEMORY_FACTOR 5
#elif __has_feature(address_sanitizer)
#define REL_MEMORY_FACTOR 2
#endif
#endif
#ifndef REL_MEMORY_FACTOR
#define REL_MEMORY_FACTOR 1
#endif

#define OP_CALLS 10
#define OP_LAUNCHES (OP_CALLS / 2)
#define LAUNCH_NS 1000u /* each launch's device duration */

static int failures;
#define CHECK(cond, ...)                                         \
    do {                                                         \
        if (!(cond)) {                                           \
            failures++;                                          \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                        \
            fputc('\n', stderr);                                 \
        }                                                        \
    } while (0)

static struct {
    int (*call)(int generic);
    int (*launch)(const char *mangled, uint32_t grid_x, uint32_t block_x, uint64_t dur_ns, uint32_t stream);
    void (*get_stats)(devemu_stats *out);
} emu;

static void *must_sym(void *h, const char *name)
{
    void *p = dlsym(h, name);
    if (!p) {
        fprintf(stderr, "FAIL: the emulator has no %s\n", name);
        exit(2);
    }
    return p;
}

static void load_emulator(const char *path)
{
    setenv("DEVTRACE_CUPTI_LIBRARY", path, 1);
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        fprintf(stderr, "FAIL: cannot load %s: %s\n", path, dlerror());
        exit(2);
    }
    void *p = must_sym(h, "devemu_call");
    memcpy(&emu.call, &p, sizeof p);
    p = must_sym(h, "devemu_launch");
    memcpy(&emu.launch, &p, sizeof p);
    p = must_sym(h, "devemu_get_stats");
    memcpy(&emu.get_stats, &p, sizeof p);
}

static devtrace_session *open_cupti(uint64_t max_events)
{
    devtrace_config cfg;
    devtrace_error err;
    devtrace_config_init(&cfg);
    cfg.backend = "cupti";
    cfg.max_events = max_events;
    devtrace_session *s = devtrace_open(&cfg, &err);
    if (!s || strcmp(devtrace_backend_name(s), "cupti") != 0) {
        fprintf(stderr, "FAIL: no cupti session: %s\n", s ? devtrace_unavailable_reason(s) : err.message);
        exit(1);
    }
    return s;
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Peak resident set (VmHWM) in KiB. */
static uint64_t peak_rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    uint64_t kib = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %" SCNu64, &kib) == 1)
            break;
    if (f)
        fclose(f);
    return kib;
}

/* ---- threads ---- */

typedef struct worker {
    devtrace_session *s;
    uint32_t index;
    uint64_t calls;
    uint32_t tid;
    int failed;
} worker;

static uint64_t op_id(uint32_t thread, uint64_t op)
{
    return ((uint64_t)(thread + 1) << 40) | op; /* never 0, unique per thread and op */
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    w->tid = dt_thread_id();
    for (uint64_t c = 0; c < w->calls; c += OP_CALLS) {
        if (devtrace_push_external(w->s, op_id(w->index, c / OP_CALLS)) != 0)
            w->failed = 1;
        for (int i = 0; i < OP_CALLS; i++) {
            int rc = i % 2 == 0 ? emu.launch("_Z10loadKernelPfi", 64, 128, LAUNCH_NS, w->index + 1)
                                : emu.call(WL_CALL_GET_DEVICE);
            if (rc != 0)
                w->failed = 1;
        }
        uint64_t popped = 0;
        if (devtrace_pop_external(w->s, &popped) != 0 || popped != op_id(w->index, c / OP_CALLS))
            w->failed = 1;
    }
    return NULL;
}

typedef struct op_tally {
    uint32_t runtime, kernels;
    uint64_t kernel_ns;
} op_tally;

typedef struct tally {
    uint32_t threads;
    uint64_t ops_per_thread;
    op_tally *ops;      /* [thread * ops_per_thread + op] */
    uint8_t *corr_seen; /* per correlation id: 1 runtime launch, 2 kernel (bits) */
    uint64_t max_corr;
    uint64_t runtime, kernels, launches, unlinked, foreign, bad_corr, dup_corr, unflagged, bad_stream;
    const worker *workers;
} tally;

static op_tally *find_op(tally *t, uint64_t id)
{
    uint64_t thread = (id >> 40) - 1, op = id & ((1ull << 40) - 1);
    if (thread >= t->threads || op >= t->ops_per_thread)
        return NULL;
    return &t->ops[thread * t->ops_per_thread + op];
}

static void tally_event(const devtrace_event *ev, const char *name, void *user)
{
    tally *t = user;
    if (ev->kind != DEVTRACE_KIND_RUNTIME && ev->kind != DEVTRACE_KIND_KERNEL)
        return;
    int kernel = ev->kind == DEVTRACE_KIND_KERNEL;
    int launch = kernel || strcmp(name, "cudaLaunchKernel") == 0;
    kernel ? t->kernels++ : t->runtime++;
    if (!(ev->flags & DEVTRACE_EVENT_HAS_EXTERNAL)) {
        t->unlinked++;
        return;
    }
    op_tally *op = find_op(t, ev->external_id);
    if (!op) {
        t->foreign++;
        return;
    }
    if (kernel) {
        op->kernels++;
        op->kernel_ns += ev->end_ns - ev->start_ns;
        if (ev->stream != (uint32_t)((ev->external_id >> 40)))
            t->bad_stream++; /* thread i launched on stream i + 1 */
    } else {
        op->runtime++;
        uint32_t thread = (uint32_t)(ev->external_id >> 40) - 1;
        if (ev->stream != t->workers[thread].tid)
            t->bad_stream++; /* a runtime event carries its calling thread */
    }
    if (!launch)
        return;
    t->launches += !kernel;
    if (ev->correlation == 0 || ev->correlation > t->max_corr) {
        t->bad_corr++;
        return;
    }
    uint8_t bit = kernel ? 2 : 1;
    if (t->corr_seen[ev->correlation] & bit)
        t->dup_corr++;
    t->corr_seen[ev->correlation] |= bit;
    if (!(ev->flags & DT_EVENT_FLOW))
        t->unflagged++;
}

static void count_stored(void *user, devtrace_event *ev)
{
    uint64_t *per_kind = user;
    if (ev->kind < DEVTRACE_KIND_COUNT)
        per_kind[ev->kind]++;
}

static int mode_threads(uint32_t threads, uint64_t calls, int expect_no_loss)
{
    calls = (calls + OP_CALLS - 1) / OP_CALLS * OP_CALLS;
    uint64_t total_calls = (uint64_t)threads * calls;
    /* Each call makes a runtime event, half of them a kernel, every one an external link. */
    devtrace_session *s = open_cupti(total_calls * 3 + (1u << 20));
    devemu_stats before, after;
    emu.get_stats(&before);
    CHECK(devtrace_start(s) == 0, "devtrace_start failed");
    worker *workers = calloc(threads, sizeof *workers);
    pthread_t *ids = calloc(threads, sizeof *ids);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (uint32_t i = 0; i < threads; i++) {
        workers[i] = (worker){s, i, calls, 0, 0};
        if (pthread_create(&ids[i], NULL, worker_main, &workers[i]) != 0) {
            fprintf(stderr, "FAIL: cannot start thread %u\n", i);
            return 1;
        }
    }
    for (uint32_t i = 0; i < threads; i++) {
        pthread_join(ids[i], NULL);
        CHECK(!workers[i].failed, "thread %u: a runtime call or an external push/pop failed", i);
    }
    double run_s = seconds_since(&t0);
    CHECK(devtrace_stop(s) == 0, "devtrace_stop failed");
    emu.get_stats(&after);

    tally t = {.threads = threads, .ops_per_thread = calls / OP_CALLS, .workers = workers};
    t.ops = calloc((size_t)threads * t.ops_per_thread, sizeof *t.ops);
    t.max_corr = after.runtime_calls + 1;
    t.corr_seen = calloc(t.max_corr + 1, 1);
    if (!t.ops || !t.corr_seen) {
        fprintf(stderr, "FAIL: out of memory for the tally\n");
        return 1;
    }
    uint64_t stored[DEVTRACE_KIND_COUNT] = {0};
    dt_store_visit(&s->store, count_stored, stored); /* before finalise consumes the links */
    clock_gettime(CLOCK_MONOTONIC, &t0);
    devtrace_drain(s, NULL, NULL); /* finalises: clock, window, correlation, flows */
    double drain_s = seconds_since(&t0);
    /* The finalised events themselves (drain's copies hide the internal flow flag). */
    for (size_t i = 0; i < s->nsorted; i++)
        tally_event(s->sorted[i], dt_intern_get(&s->names, s->sorted[i]->name_id), &t);
    const devtrace_stats *st = devtrace_stats_get(s);

    uint64_t written_api = after.api_records - before.api_records;
    uint64_t written_kernels = after.kernel_records - before.kernel_records;
    uint64_t losses = st->dropped_store_full + st->dropped_pool_full + st->dropped_vendor + st->malformed_records +
                      st->zero_timestamp + st->out_of_window[DEVTRACE_KIND_RUNTIME] +
                      st->out_of_window[DEVTRACE_KIND_KERNEL];
    printf("load: threads=%u calls/thread=%" PRIu64 " runtime_calls=%" PRIu64 " records api=%" PRIu64 " kernel=%" PRIu64
           " events runtime=%" PRIu64 " kernel=%" PRIu64 " losses=%" PRIu64 " (store_full=%" PRIu64
           " pool_full=%" PRIu64 " vendor=%" PRIu64 " refused_buffers=%" PRIu64 ") unpaired_flows=%" PRIu64
           " run=%.2fs (%.0f calls/s) drain=%.2fs\n",
           threads, calls, total_calls, written_api, written_kernels, t.runtime, t.kernels, losses,
           st->dropped_store_full, st->dropped_pool_full, st->dropped_vendor, st->refused_buffers, st->unpaired_flows,
           run_s, (double)total_calls / run_s, drain_s);

    /* Every record the emulator wrote (API, kernel, external-correlation) is a stored event or a
     * counted loss: nothing lost without a count. */
    uint64_t written_ext = after.external_correlation_records - before.external_correlation_records;
    uint64_t stored_all = stored[DEVTRACE_KIND_RUNTIME] + stored[DEVTRACE_KIND_KERNEL] + stored[DEVTRACE_KIND_EXTCORR];
    CHECK(written_api == total_calls, "the emulator wrote %" PRIu64 " API records for %" PRIu64 " calls", written_api,
          total_calls);
    CHECK(stored_all + losses == written_api + written_kernels + written_ext,
          "%" PRIu64 " events + %" PRIu64 " counted losses != %" PRIu64 " records written: lost without a count",
          stored_all, losses, written_api + written_kernels + written_ext);
    CHECK(t.runtime == stored[DEVTRACE_KIND_RUNTIME] && t.kernels == stored[DEVTRACE_KIND_KERNEL],
          "the trace has %" PRIu64 " runtime and %" PRIu64 " kernel events of %" PRIu64 " and %" PRIu64 " stored",
          t.runtime, t.kernels, stored[DEVTRACE_KIND_RUNTIME], stored[DEVTRACE_KIND_KERNEL]);
    if (expect_no_loss)
        CHECK(losses == 0, "%" PRIu64 " records lost (counted) under load", losses);
    /* A lost record spoils at most one op, one link and one flow: without losses, all exact. */
    CHECK(t.foreign == 0, "%" PRIu64 " events carry an id no op pushed", t.foreign);
    CHECK(t.unlinked <= 2 * losses, "%" PRIu64 " events without an external id, %" PRIu64 " counted losses", t.unlinked,
          losses);
    CHECK(t.bad_stream == 0, "%" PRIu64 " events on the wrong thread or stream", t.bad_stream);
    /* Flows: every launch's two halves, once each, flagged; nothing unpaired. */
    uint64_t pairs = 0, halves = 0;
    for (uint64_t c = 1; c <= t.max_corr; c++) {
        pairs += t.corr_seen[c] == 3;
        halves += t.corr_seen[c] == 1 || t.corr_seen[c] == 2;
    }
    CHECK(pairs + halves == total_calls / 2 && halves <= losses,
          "%" PRIu64 " paired launches, %" PRIu64 " half pairs, expected %" PRIu64 " pairs (%" PRIu64 " losses)", pairs,
          halves, total_calls / 2, losses);
    CHECK(t.dup_corr == 0 && t.bad_corr == 0, "%" PRIu64 " duplicate and %" PRIu64 " invalid correlation ids",
          t.dup_corr, t.bad_corr);
    CHECK(t.unflagged == halves && st->unpaired_flows <= losses,
          "%" PRIu64 " launch halves without a flow (%" PRIu64 " half pairs), unpaired_flows=%" PRIu64, t.unflagged,
          halves, st->unpaired_flows);
    /* Attribution: each op has exactly its own 10 calls and 5 kernels, and its kernels' time. */
    uint64_t bad_ops = 0, ops = (uint64_t)threads * t.ops_per_thread;
    for (uint64_t i = 0; i < ops; i++) {
        const op_tally *op = &t.ops[i];
        int64_t dt = (int64_t)op->kernel_ns - (int64_t)OP_LAUNCHES * LAUNCH_NS;
        if (op->runtime != OP_CALLS || op->kernels != OP_LAUNCHES || dt > 5 || dt < -5) {
            if (bad_ops++ < 5 && !losses)
                fprintf(stderr, "  op %" PRIu64 ": runtime=%u kernels=%u kernel_ns=%" PRIu64 "\n", i, op->runtime,
                        op->kernels, op->kernel_ns);
        }
    }
    CHECK(bad_ops <= losses, "%" PRIu64 " of %" PRIu64 " ops not attributed exactly, %" PRIu64 " counted losses",
          bad_ops, ops, losses);
    printf("load: ops=%" PRIu64 " attributed exactly=%" PRIu64 " flows paired=%" PRIu64 " external links=%" PRIu64
           " of %" PRIu64 "\n",
           ops, ops - bad_ops, pairs, stored[DEVTRACE_KIND_EXTCORR], written_ext);
    free(t.ops);
    free(t.corr_seen);
    free(workers);
    free(ids);
    devtrace_close(s);
    return 0;
}

/* ---- bound ---- */

typedef struct caller {
    uint64_t calls;
    int failed;
} caller;

static void *caller_main(void *arg)
{
    caller *c = arg;
    for (uint64_t i = 0; i < c->calls; i++)
        if (emu.call(WL_CALL_GET_DEVICE) != 0)
            c->failed = 1;
    return NULL;
}

static void count_event(const devtrace_event *ev, const char *name, void *user)
{
    (void)name;
    if (ev->kind == DEVTRACE_KIND_RUNTIME)
        (*(uint64_t *)user)++;
}

static int mode_bound(uint64_t events, uint64_t bound, uint32_t threads)
{
    uint64_t rss0 = peak_rss_kib();
    devtrace_session *s = open_cupti(bound);
    CHECK(devtrace_start(s) == 0, "devtrace_start failed");
    caller *callers = calloc(threads, sizeof *callers);
    pthread_t *ids = calloc(threads, sizeof *ids);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (uint32_t i = 0; i < threads; i++) {
        callers[i].calls = events / threads + (i < events % threads);
        pthread_create(&ids[i], NULL, caller_main, &callers[i]);
    }
    for (uint32_t i = 0; i < threads; i++) {
        pthread_join(ids[i], NULL);
        CHECK(!callers[i].failed, "caller %u: a runtime call failed", i);
    }
    double run_s = seconds_since(&t0);
    CHECK(devtrace_stop(s) == 0, "devtrace_stop failed");
    uint64_t stored = 0;
    devtrace_drain(s, count_event, &stored);
    uint64_t rss1 = peak_rss_kib();
    const devtrace_stats *st = devtrace_stats_get(s);
    /* What B events may cost: the events, one pointer each for sorting, the chunks' slack (one
     * partly used chunk per thread), the vendor buffer pool (64 x 1 MiB) and 32 MiB of the rest. */
    uint64_t allowed_kib =
        (bound * (sizeof(devtrace_event) + sizeof(void *)) +
         (uint64_t)(threads + 2) * DT_CHUNK_EVENTS * sizeof(devtrace_event) + (64u << 20) + (32u << 20)) /
        1024 * REL_MEMORY_FACTOR;
    printf("bound: calls=%" PRIu64 " threads=%u bound=%" PRIu64 " stored=%" PRIu64 " dropped_store_full=%" PRIu64
           " peak_rss_growth=%" PRIu64 " MiB (allowed %" PRIu64
           " MiB, %.1f bytes/stored event) run=%.2fs (%.0f calls/s)\n",
           events, threads, bound, stored, st->dropped_store_full, (rss1 - rss0) / 1024, allowed_kib / 1024,
           stored ? (double)(rss1 - rss0) * 1024.0 / (double)stored : 0.0, run_s, (double)events / run_s);
    CHECK(stored <= bound, "%" PRIu64 " events stored over a bound of %" PRIu64, stored, bound);
    CHECK(stored + st->dropped_store_full == events,
          "%" PRIu64 " stored + %" PRIu64 " dropped_store_full != %" PRIu64 " runtime calls", stored,
          st->dropped_store_full, events);
    CHECK(st->dropped_vendor + st->dropped_pool_full + st->malformed_records == 0,
          "other losses: vendor=%" PRIu64 " pool_full=%" PRIu64 " malformed=%" PRIu64, st->dropped_vendor,
          st->dropped_pool_full, st->malformed_records);
    CHECK(rss1 - rss0 <= allowed_kib,
          "memory grew by %" PRIu64 " MiB, more than %" PRIu64 " MiB for %" PRIu64 " events", (rss1 - rss0) / 1024,
          allowed_kib / 1024, bound);
    free(callers);
    free(ids);
    devtrace_close(s);
    return 0;
}

static uint64_t number(const char *flag, const char *text)
{
    uint64_t v;
    if (!text || dt_parse_u64(text, &v) != 0 || v == 0) {
        fprintf(stderr, "rel_load: %s needs a positive number\n", flag);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: rel_load threads|bound EMULATOR.so [--threads T] [--calls C] [--no-loss] "
                        "[--events N] [--bound B]\n");
        return 2;
    }
    const char *mode = argv[1];
    uint64_t threads = 0, calls = 100000, events = 10000000, bound = 1000000;
    int expect_no_loss = 0;
    for (int i = 3; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--no-loss"))
            expect_no_loss = 1;
        else if (!strcmp(argv[i], "--threads"))
            threads = number(argv[i], v), i++;
        else if (!strcmp(argv[i], "--calls"))
            calls = number(argv[i], v), i++;
        else if (!strcmp(argv[i], "--events"))
            events = number(argv[i], v), i++;
        else if (!strcmp(argv[i], "--bound"))
            bound = number(argv[i], v), i++;
        else {
            fprintf(stderr, "rel_load: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    load_emulator(argv[2]);
    if (!strcmp(mode, "threads"))
        mode_threads(threads ? (uint32_t)threads : 64, calls, expect_no_loss);
    else if (!strcmp(mode, "bound"))
        mode_bound(events, bound, threads ? (uint32_t)threads : 4);
    else {
        fprintf(stderr, "rel_load: unknown mode %s\n", mode);
        return 2;
    }
    if (failures)
        fprintf(stderr, "%s: %d check(s) failed\n", mode, failures);
    else
        printf("%s: ok\n", mode);
    return failures ? 1 : 0;
}
