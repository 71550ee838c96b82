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
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_harness.h"

static wl_workload g_wl;

static devtrace_session *open_roctracer(void)
{
    return emu_open("roctracer");
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

/* One traced run of the workload; returns the session (stopped, drained, written). */
static devtrace_session *traced_run(const emu_lib *emu, const char *wl_path, const char *trace, tally *t)
{
    devtrace_session *s = open_roctracer();
    CHECK(strcmp(devtrace_backend_name(s), "roctracer") == 0, "backend %s: %s", devtrace_backend_name(s),
          devtrace_unavailable_reason(s));
    emu_run_workload(s, emu, wl_path);
    dt_set_default_session(NULL);
    memset(t, 0, sizeof *t);
    t->skip_launches = dropped_launches();
    devtrace_drain(s, tally_event, t);
    emu_write_trace(s, trace);
    emu_print_notes(s);
    return s;
}

static void check_launches_and_names(const tally *t)
{
    CHECK(t->with_launch == t->kernels, "%" PRIu64 " of %" PRIu64 " kernels carry their launch configuration",
          t->with_launch, t->kernels);
    CHECK(t->launch_mismatch == 0, "%" PRIu64 " grid/block values differ from the launch statements",
          t->launch_mismatch);
    CHECK(t->shared_mismatch == 0, "%" PRIu64 " kernels' dynamic shared memory differs from the statements",
          t->shared_mismatch);
    CHECK(t->non_hip_names == 0, "%" PRIu64 " runtime events without a real hip* name", t->non_hip_names);
}

static int mode_parity(const emu_lib *emu, const char *wl, const char *trace, const emu_expected *e, int faults)
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
           st->dropped_vendor, dropped, st->malformed_records, malformed, st->zero_timestamp, zero, st->unpaired_flows,
           st->unresolved_names);
    emu_check_counts(st, e);
    check_launches_and_names(&t);
    CHECK(st->dropped_vendor == dropped, "dropped_vendor=%" PRIu64 ", the emulator dropped %" PRIu64,
          st->dropped_vendor, dropped);
    CHECK(st->malformed_records == malformed, "malformed_records=%" PRIu64 ", injected %" PRIu64, st->malformed_records,
          malformed);
    CHECK(st->zero_timestamp == zero, "zero_timestamp=%" PRIu64 ", injected %" PRIu64, st->zero_timestamp, zero);
    CHECK(st->bad_timestamps == 0, "bad_timestamps=%" PRIu64, st->bad_timestamps);
    CHECK(st->unresolved_names == 0, "unresolved_names=%" PRIu64, st->unresolved_names);
    CHECK(s->nsamples >= 2, "%zu clock samples (start and stop at least)", s->nsamples);
    CHECK(s->ndevices == 1 && s->devices[0].has_occupancy && s->devices[0].warp_size == (int)g_wl.devices[0].warp &&
              s->devices[0].num_sms == (int)g_wl.devices[0].sms,
          "device properties not read from hipDeviceGetAttribute (%d devices)", s->ndevices);
    CHECK(emu_find_note(s, "ROCtracer interface 4.1"), "no note naming the library and its interface");
    int drop_note = emu_find_note(s, "ROCtracer reports no drop count") != 0;
    CHECK(drop_note == (dropped != 0), "%s note explaining dropped.vendor (the emulator dropped %" PRIu64 ")",
          drop_note ? "a" : "no", dropped); /* exactly when records were dropped */
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
static int mode_two_sessions(const emu_lib *emu, const char *wl, const emu_expected *e)
{
    void (*pause)(void);
    void *p = emu_sym(emu->handle, "roctracer_stop", 1);
    memcpy(&pause, &p, sizeof p);
    for (int round = 0; round < 2; round++) {
        tally t;
        if (round == 1)
            pause();
        devtrace_session *s = traced_run(emu, wl, NULL, &t);
        emu_check_counts(devtrace_stats_get(s), e);
        check_launches_and_names(&t);
        CHECK(devtrace_stats_get(s)->dropped_vendor == 0, "round %d: dropped_vendor=%" PRIu64, round,
              devtrace_stats_get(s)->dropped_vendor);
        devtrace_close(s);
    }
    return 0;
}

static int mode_missing_library(const char *lib, const char *wl)
{
    /* Nowhere to find it (the emulator is loaded only afterwards: a loaded copy would be found). */
    unsetenv("DEVTRACE_ROCTRACER_LIBRARY");
    unsetenv("DTK_PATH");
    setenv("ROCM_PATH", "/nonexistent-rocm", 1);
    devtrace_session *s = open_roctracer();
    static const char *const named[] = {"ROCtracer not found",
                                        "/nonexistent-rocm/lib",
                                        "$DTK_PATH (unset)",
                                        "/opt/rocm/lib",
                                        "/opt/dtk/lib",
                                        "libgalaxyhip.so.5",
                                        "the process itself",
                                        "DEVTRACE_ROCTRACER_LIBRARY",
                                        NULL};
    emu_check_unavailable(s, named);
    devtrace_close(s);
    /* A path that does not load: named, with the loader's message. */
    setenv("DEVTRACE_ROCTRACER_LIBRARY", "/nonexistent/libroctracer64.so", 1);
    s = open_roctracer();
    const char *why = devtrace_unavailable_reason(s);
    printf("unavailable: %s\n", why);
    CHECK(strstr(why, "$DEVTRACE_ROCTRACER_LIBRARY=/nonexistent/libroctracer64.so cannot be loaded") != NULL,
          "the reason does not name the bad path: %s", why);
    devtrace_close(s);
    emu_lib emu;
    emu_load(lib, &emu);
    s = open_roctracer();          /* still unavailable: the variable wins over the loaded copy */
    emu_run_untraced(s, &emu, wl); /* the program runs on, untraced */
    devtrace_close(s);
    return 0;
}

static int mode_missing_symbol(const emu_lib *emu, const char *wl)
{
    devtrace_session *s = open_roctracer();
    static const char *const needles[] = {"lacks the required symbol roctracer_enable_domain_callback;", NULL};
    emu_check_unavailable(s, needles);
    emu_run_untraced(s, emu, wl); /* the program runs on, untraced */
    devtrace_close(s);
    return 0;
}

/* ---- threads ---- */

/* A runtime event not named hipGetDevice (counted with those of another thread's id). */
static int not_hip_get_device(const devtrace_event *ev, const char *name)
{
    (void)ev;
    return strcmp(name, "hipGetDevice") != 0;
}

static int mode_threads(const emu_lib *emu)
{
    devtrace_session *s = open_roctracer();
    CHECK(strcmp(devtrace_backend_name(s), "roctracer") == 0, "backend %s: %s", devtrace_backend_name(s),
          devtrace_unavailable_reason(s));
    emu_threads t;
    emu_run_threads(s, emu, not_hip_get_device, &t);
    const devtrace_stats *st = devtrace_stats_get(s);
    emu_print_notes(s);
    printf("threads: runtime=%" PRIu64 " linked=%" PRIu64 " dropped_vendor=%" PRIu64 " store_full=%" PRIu64 "\n",
           t.runtime, t.linked, st->dropped_vendor, st->dropped_store_full);
    emu_check_threads(&t);
    CHECK(t.wrong_external + t.odd == 0, "%" PRIu64 " runtime events with another thread's external id or name",
          t.wrong_external + t.odd);
    CHECK(t.zero_correlation == 0, "%" PRIu64 " runtime events without a correlation id", t.zero_correlation);
    CHECK(st->dropped_vendor + st->malformed_records + st->dropped_store_full == 0, "losses under threads");
    devtrace_close(s);
    return 0;
}

int main(int argc, char **argv)
{
    emu_args a;
    if (emu_parse_args(argc, argv, &a) != 0)
        return 2;
    const char *mode = a.mode, *lib = a.lib, *wl = a.wl, *trace = a.trace;
    char err[512];
    if (wl_parse_file(wl, &g_wl, err, sizeof err) != 0) {
        fprintf(stderr, "FAIL: %s\n", err);
        return 2;
    }
    emu_expected e = emu_expectations(&g_wl, argc, argv, a.first_expect);
    if (strcmp(mode, "missing-library") == 0) {
        mode_missing_library(lib, wl);
    } else {
        setenv("DEVTRACE_ROCTRACER_LIBRARY", lib, 1);
        emu_lib emu;
        emu_load(lib, &emu);
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
    return emu_finish(mode);
}
