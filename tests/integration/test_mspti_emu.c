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
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_harness.h"

static devtrace_session *open_mspti(void)
{
    return emu_open("mspti");
}

/* faults: losses injected (the emulator's counts are expected); subscribe_refused: the run
 * expects the note naming the refused subscription (and every other run its absence). Both
 * come from the mode, never from the environment. */
static void mode_parity(const emu_lib *emu, const char *wl, const char *trace, const emu_expected *e, int faults,
                        int subscribe_refused)
{
    devtrace_session *s = open_mspti();
    CHECK(strcmp(devtrace_backend_name(s), "mspti") == 0, "backend %s, not mspti: %s", devtrace_backend_name(s),
          devtrace_unavailable_reason(s));
    CHECK(emu_find_note(s, "no grid, block, registers"), "no note on what MSPTI records lack");
    emu_run_traced(s, emu, wl, trace);
    devemu_stats es;
    emu->get_stats(&es);
    const devtrace_stats *st = devtrace_stats_get(s);
    emu_print_notes(s);
    emu_print_losses(st, &es);
    emu_check_counts(st, e);
    emu_check_injected_losses(st, &es);
    CHECK(st->unresolved_names == 0, "unresolved_names=%" PRIu64, st->unresolved_names);
    CHECK(st->bad_timestamps == 0, "bad_timestamps=%" PRIu64, st->bad_timestamps);
    int refused_note =
        emu_find_note(s, "msptiSubscribe refused: MSPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (2)") != 0;
    CHECK(refused_note == subscribe_refused, "%s note about a refused subscription",
          refused_note ? "an unexpected" : "no");
    if (!faults) {
        CHECK(st->dropped_vendor + st->malformed_records + st->zero_timestamp + st->refused_buffers +
                      st->dropped_pool_full ==
                  0,
              "losses in a run without faults");
        CHECK(st->unpaired_flows == 0, "unpaired_flows=%" PRIu64, st->unpaired_flows);
    }
    devtrace_close(s);
}

static void mode_second_subscriber(const emu_lib *emu, const char *wl, const char *trace, const emu_expected *e)
{
    CHECK(emu_take_subscriber(emu, "msptiSubscribe") == 0, "the first subscriber (another tool) was refused");
    devtrace_session *s = open_mspti();
    CHECK(strcmp(devtrace_backend_name(s), "mspti") == 0, "a second subscriber made the session unavailable: %s",
          devtrace_unavailable_reason(s));
    CHECK(emu_find_note(s, "msptiSubscribe refused: MSPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (2)"),
          "no note about the refused subscription");
    emu_run_traced(s, emu, wl, trace);
    emu_print_notes(s);
    emu_check_counts(devtrace_stats_get(s), e);
    devtrace_close(s);
}

static void mode_node_api_refused(const emu_lib *emu, const char *wl, const char *trace, const emu_expected *e)
{
    devtrace_session *s = open_mspti();
    CHECK(strcmp(devtrace_backend_name(s), "mspti") == 0, "backend %s: %s", devtrace_backend_name(s),
          devtrace_unavailable_reason(s));
    emu_run_traced(s, emu, wl, trace);
    emu_print_notes(s);
    CHECK(emu_find_note(s, "msptiActivityEnable(NODE_API) refused (optional"), "no note about the refused NODE_API");
    CHECK(!emu_find_note(s, "failed"), "an enable failed besides the optional NODE_API");
    emu_check_counts(devtrace_stats_get(s), e);
    devtrace_close(s);
}

static void mode_unavailable(const emu_lib *emu, const char *wl, const char *const *needles)
{
    devtrace_session *s = open_mspti();
    emu_check_unavailable(s, needles);
    if (emu)
        emu_run_untraced(s, emu, wl); /* the host program runs on untraced */
    devtrace_close(s);
}

/* ---- threads ---- */

/* A runtime event that lost the upper half of its u64 correlation id, or its name. */
static int small_correlation(const devtrace_event *ev, const char *name)
{
    return ev->correlation <= UINT32_MAX || strcmp(name, "aclrtGetDevice") != 0;
}

static void mode_threads(const emu_lib *emu)
{
    devtrace_session *s = open_mspti();
    CHECK(strcmp(devtrace_backend_name(s), "mspti") == 0, "backend %s: %s", devtrace_backend_name(s),
          devtrace_unavailable_reason(s));
    emu_threads t;
    emu_run_threads(s, emu, small_correlation, &t);
    const devtrace_stats *st = devtrace_stats_get(s);
    emu_print_notes(s);
    printf("threads: runtime=%" PRIu64 " linked=%" PRIu64 " dropped_vendor=%" PRIu64 " refused=%" PRIu64 "\n",
           t.runtime, t.linked, st->dropped_vendor, st->refused_buffers);
    emu_check_threads(&t);
    CHECK(t.wrong_external == 0, "%" PRIu64 " runtime events carry another thread's external id", t.wrong_external);
    CHECK(t.odd == 0, "%" PRIu64 " runtime events lost the upper half of their u64 id or their name", t.odd);
    CHECK(st->dropped_vendor + st->refused_buffers + st->malformed_records + st->dropped_store_full == 0,
          "losses under threads");
    devtrace_close(s);
}

int main(int argc, char **argv)
{
    emu_args a;
    if (emu_parse_args(argc, argv, &a) != 0)
        return 2;
    const char *mode = a.mode, *lib = a.lib, *wl = a.wl, *trace = a.trace;
    emu_expected e = emu_expectations_file(wl, argc, argv, a.first_expect);
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
        emu_lib emu;
        emu_load(lib, &emu);
        if (strcmp(mode, "parity") == 0)
            mode_parity(&emu, wl, trace, &e, 0, 0);
        else if (strcmp(mode, "faults") == 0)
            mode_parity(&emu, wl, trace, &e, 1, 0);
        else if (strcmp(mode, "subscribe-refused") == 0)
            mode_parity(&emu, wl, trace, &e, 1, 1);
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
    return emu_finish(mode);
}
