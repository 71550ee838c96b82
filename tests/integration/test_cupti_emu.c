/* test_cupti_emu.c: the CUPTI backend end to end against the CUPTI emulator, in
 * process: the program plays the application (it dlopens the emulator as a program
 * linked with the CUDA runtime would have it and drives it through devemu_*), and
 * traces itself through the public API with backend "cupti", the emulator found
 * through $DEVTRACE_CUPTI_LIBRARY exactly as the real library would be.
 *
 *   test_cupti_emu MODE EMULATOR.so WORKLOAD.wl [TRACE.json] [kernel=N memcpy=N memset=N runtime=N]
 *
 * Modes (one process each: the engine binds one vendor library per process):
 *   parity             the workload once; counts from the workload file, no loss
 *   faults             the workload under $DEVEMU_FAULTS; every loss counter equals what
 *                      the emulator says it injected; counts as given
 *   second-subscriber  another tool holds the callback API first: a note, not fatal
 *   missing-required   EMULATOR lacks a required symbol: unavailable, the symbol named,
 *                      the program runs on
 *   missing-optional   EMULATOR lacks Push/PopExternalCorrelationId: traces without it
 *   threads            16 threads x 10,000 runtime calls: every event and correlation kept
 *   old-version        EMULATOR reports CUPTI API 26 (before 12.9: a refusal crashed CUPTI) and
 *                      the pool has one buffer: never refused, the overflow buffers' records
 *                      are dropped and counted in dropped_pool_full, exactly
 * $DT_TEST_BACKEND picks the backend (cupti, ppu, iluvatar: all CUPTI-shaped); the
 * emulator is given to it as $DEVTRACE_<BACKEND>_LIBRARY.
 * Exit status 0 when every assertion holds; each failure prints one line. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_harness.h"

static const char *backend = "cupti";

static devtrace_session *open_backend(void)
{
    return emu_open(backend);
}

/* What a parity run expects besides the workload's counts, from its mode (never from the
 * environment): faults injected (the losses are the emulator's), the subscription refused
 * (a note names it), a one-buffer pool (requests refused, each one record). */
typedef struct parity_expect {
    int faults, subscribe_refused, pool_refusals;
} parity_expect;

static int mode_parity(const emu_lib *emu, const char *wl, const char *trace, const emu_expected *e, parity_expect x)
{
    int faults = x.faults;
    devtrace_session *s = open_backend();
    CHECK(strcmp(devtrace_backend_name(s), backend) == 0, "backend %s, not cupti: %s", devtrace_backend_name(s),
          devtrace_unavailable_reason(s));
    emu_run_traced(s, emu, wl, trace);
    devemu_stats es;
    emu->get_stats(&es);
    const devtrace_stats *st = devtrace_stats_get(s);
    emu_print_notes(s);
    emu_print_losses(st, &es);
    emu_check_counts(st, e);
    emu_check_injected_losses(st, &es);
    CHECK(st->dropped_pool_full == 0, "dropped_pool_full=%" PRIu64 " (CUPTI 130001 may be refused)",
          st->dropped_pool_full);
    CHECK(st->unresolved_names == 0, "unresolved_names=%" PRIu64, st->unresolved_names);
    CHECK(st->bad_timestamps == 0, "bad_timestamps=%" PRIu64, st->bad_timestamps);
    int refused_note =
        emu_find_note(s, "cuptiSubscribe refused: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (39)") != 0;
    CHECK(refused_note == x.subscribe_refused, "%s note about a refused subscription",
          refused_note ? "an unexpected" : "no");
    if (x.pool_refusals)
        CHECK(st->refused_buffers > 0 && st->refused_buffers == st->dropped_vendor,
              "a 1-buffer pool: refused_buffers=%" PRIu64 " should be > 0 and equal dropped_vendor=%" PRIu64,
              st->refused_buffers, st->dropped_vendor);
    if (!faults) {
        CHECK(st->dropped_vendor + st->malformed_records + st->zero_timestamp + st->refused_buffers == 0,
              "losses in a run without faults");
        CHECK(st->unpaired_flows == 0, "unpaired_flows=%" PRIu64, st->unpaired_flows);
    }
    devtrace_close(s);
    return 0;
}

static int mode_second_subscriber(const emu_lib *emu, const char *wl, const char *trace, const emu_expected *e)
{
    CHECK(emu_take_subscriber(emu, "cuptiSubscribe") == 0, "the first subscriber (another tool) was refused");
    devtrace_session *s = open_backend();
    CHECK(strcmp(devtrace_backend_name(s), backend) == 0, "a second subscriber made the session unavailable: %s",
          devtrace_unavailable_reason(s));
    CHECK(emu_find_note(s, "cuptiSubscribe refused: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (39)"),
          "no note about the refused subscription");
    emu_run_traced(s, emu, wl, trace);
    emu_print_notes(s);
    emu_check_counts(devtrace_stats_get(s), e);
    devtrace_close(s);
    return 0;
}

static int mode_missing_required(const emu_lib *emu, const char *wl)
{
    devtrace_session *s = open_backend();
    static const char *const needles[] = {"cuptiActivityFlushAll", NULL}; /* the missing symbol named */
    emu_check_unavailable(s, needles);
    emu_run_untraced(s, emu, wl); /* the host program runs on, untraced */
    devtrace_close(s);
    return 0;
}

static int mode_missing_optional(const emu_lib *emu, const char *wl, const char *trace, const emu_expected *e)
{
    devtrace_session *s = open_backend();
    CHECK(strcmp(devtrace_backend_name(s), backend) == 0, "a missing optional symbol made it unavailable: %s",
          devtrace_unavailable_reason(s));
    CHECK(emu_find_note(s, "external correlation unavailable"), "no note about the missing PushExternalCorrelationId");
    emu_run_traced(s, emu, wl, trace);
    emu_print_notes(s);
    emu_check_counts(devtrace_stats_get(s), e);
    devtrace_close(s);
    return 0;
}

static int mode_old_version(const emu_lib *emu, const char *wl, const char *trace, const emu_expected *e)
{
    devtrace_session *s = open_backend();
    CHECK(strcmp(devtrace_backend_name(s), backend) == 0, "backend %s: %s", devtrace_backend_name(s),
          devtrace_unavailable_reason(s));
    CHECK(emu_find_note(s, "API version 26;"), "the library's version (26) is not in the notes");
    emu_run_traced(s, emu, wl, trace);
    devemu_stats es;
    emu->get_stats(&es);
    const devtrace_stats *st = devtrace_stats_get(s);
    emu_print_notes(s);
    emu_print_losses(st, &es);
    uint64_t events = st->events[DEVTRACE_KIND_KERNEL] + st->events[DEVTRACE_KIND_MEMCPY] +
                      st->events[DEVTRACE_KIND_MEMSET] + st->events[DEVTRACE_KIND_RUNTIME];
    uint64_t want = e->kernel + e->memcpy + e->memset + e->runtime;
    CHECK(st->refused_buffers == 0 && es.buffers_refused == 0,
          "a buffer was refused to CUPTI API 26 (%" PRIu64 " refused by us, %" PRIu64 " seen by the emulator)",
          st->refused_buffers, es.buffers_refused);
    CHECK(st->dropped_vendor == 0, "dropped_vendor=%" PRIu64, st->dropped_vendor);
    CHECK(st->dropped_pool_full > 0, "the one-buffer pool never overflowed (small-buffer fault missing?)");
    CHECK(events + st->dropped_pool_full == want,
          "%" PRIu64 " events + %" PRIu64 " dropped_pool_full != %" PRIu64 " records of the workload", events,
          st->dropped_pool_full, want);
    devtrace_close(s);
    return 0;
}

/* ---- threads ---- */

static int mode_threads(const emu_lib *emu)
{
    devtrace_session *s = open_backend();
    CHECK(strcmp(devtrace_backend_name(s), backend) == 0, "backend %s: %s", devtrace_backend_name(s),
          devtrace_unavailable_reason(s));
    emu_threads t;
    emu_run_threads(s, emu, NULL, &t);
    const devtrace_stats *st = devtrace_stats_get(s);
    emu_print_notes(s);
    printf("threads: runtime=%" PRIu64 " linked=%" PRIu64 " dropped_vendor=%" PRIu64 " refused=%" PRIu64
           " store_full=%" PRIu64 "\n",
           t.runtime, t.linked, st->dropped_vendor, st->refused_buffers, st->dropped_store_full);
    uint64_t want = (uint64_t)EMU_THREADS * EMU_CALLS_PER_THREAD;
    emu_check_threads(&t);
    CHECK(st->events[DEVTRACE_KIND_RUNTIME] == want, "stats runtime %" PRIu64, st->events[DEVTRACE_KIND_RUNTIME]);
    CHECK(t.wrong_external == 0, "%" PRIu64 " runtime events carry another thread's external id", t.wrong_external);
    CHECK(t.zero_correlation == 0, "%" PRIu64 " runtime events without a correlation id", t.zero_correlation);
    CHECK(st->dropped_vendor + st->refused_buffers + st->malformed_records + st->dropped_store_full == 0,
          "losses under threads");
    devtrace_close(s);
    return 0;
}

int main(int argc, char **argv)
{
    emu_args a;
    if (emu_parse_args(argc, argv, &a) != 0)
        return 2;
    const char *mode = a.mode, *lib = a.lib, *wl = a.wl, *trace = a.trace;
    if (getenv("DT_TEST_BACKEND") && *getenv("DT_TEST_BACKEND"))
        backend = getenv("DT_TEST_BACKEND");
    char var[64];
    snprintf(var, sizeof var, "DEVTRACE_%s_LIBRARY", backend);
    for (char *c = var; *c; c++)
        if (*c >= 'a' && *c <= 'z')
            *c = (char)(*c - 'a' + 'A');
    setenv(var, lib, 1);
    emu_lib emu;
    emu_load(lib, &emu);
    emu_expected e = emu_expectations_file(wl, argc, argv, a.first_expect);
    if (strcmp(mode, "parity") == 0)
        mode_parity(&emu, wl, trace, &e, (parity_expect){0, 0, 0});
    else if (strcmp(mode, "faults") == 0)
        mode_parity(&emu, wl, trace, &e, (parity_expect){1, 0, 0});
    else if (strcmp(mode, "subscribe-refused") == 0)
        mode_parity(&emu, wl, trace, &e, (parity_expect){1, 1, 0});
    else if (strcmp(mode, "pool-refusals") == 0)
        mode_parity(&emu, wl, trace, &e, (parity_expect){1, 0, 1});
    else if (strcmp(mode, "second-subscriber") == 0)
        mode_second_subscriber(&emu, wl, trace, &e);
    else if (strcmp(mode, "missing-required") == 0)
        mode_missing_required(&emu, wl);
    else if (strcmp(mode, "missing-optional") == 0)
        mode_missing_optional(&emu, wl, trace, &e);
    else if (strcmp(mode, "threads") == 0)
        mode_threads(&emu);
    else if (strcmp(mode, "old-version") == 0)
        mode_old_version(&emu, wl, trace, &e);
    else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    return emu_finish(mode);
}
