/* emu_harness.h: what the tests that drive a vendor ABI emulator in process share (the
 * program plays the application: it dlopens the emulator as a program linked with the
 * vendor runtime would have it, and traces itself through the public API):
 *  - CHECK, which counts a failed assertion and prints one line, and emu_finish;
 *  - the emulator's devemu_* driving functions, loaded from the library;
 *  - a workload's expected counts (kind=N arguments override them) and their check;
 *  - a session of one backend, one traced or untraced run of a workload, notes;
 *  - the 16-thread run: each thread under its own external id, its runtime events tallied.
 * Each test keeps its own assertions about what its backend must show. */
#ifndef DT_EMU_HARNESS_H
#define DT_EMU_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/session.h"
#include "devemu.h"
#include "devtrace.h"
#include "wl.h"

/* Failed assertions so far. */
extern int emu_failures;

#define CHECK(cond, ...)                                         \
    do {                                                         \
        if (!(cond)) {                                           \
            emu_failures++;                                      \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                        \
            fputc('\n', stderr);                                 \
        }                                                        \
    } while (0)

/* Prints "MODE: ok" or "MODE: N assertion(s) failed"; the exit status (0 or 1). */
int emu_finish(const char *mode);

/* MODE EMULATOR.so WORKLOAD.wl [TRACE.json] [kind=N ...]: 0, or 2 after the usage line. */
typedef struct emu_args {
    const char *mode, *lib, *wl;
    const char *trace; /* NULL when the 4th argument is a kind=N */
    int first_expect;  /* the first kind=N argument */
} emu_args;
int emu_parse_args(int argc, char **argv, emu_args *a);

/* The emulator's driving API, from the loaded library. */
typedef struct emu_lib {
    void *handle;
    int (*load_workload)(const char *path, char *err, size_t errlen);
    int (*run)(void);
    int (*call)(int generic);
    void (*get_stats)(devemu_stats *out);
} emu_lib;

/* A symbol of the emulator; a required one that is missing: a FAIL line, exit 1. */
void *emu_sym(void *handle, const char *name, int required);
/* Loads the emulator (RTLD_GLOBAL, as the application's runtime) and its devemu_*
 * functions; exit 1 when it does not load or lacks one. */
void emu_load(const char *path, emu_lib *e);

/* Another tool takes the callback API first: subscribe_symbol (cuptiSubscribe, ...) with a
 * callback of its own; its result. */
int emu_take_subscriber(const emu_lib *e, const char *subscribe_symbol);

#define EMU_ANY UINT64_MAX /* kind=any: not checked */

typedef struct emu_expected {
    uint64_t kernel, memcpy, memset, runtime;
} emu_expected;

/* Counts from the workload (wl_expected_counts), overridden by argv[first..] kind=N (or
 * kind=any); a bad one: a FAIL line, exit 2. The _file form parses the workload first
 * (exit 1 when it does not parse). */
emu_expected emu_expectations(const wl_workload *w, int argc, char **argv, int first);
emu_expected emu_expectations_file(const char *wl_path, int argc, char **argv, int first);
/* CHECKs the per-kind counts against e and prints them. */
void emu_check_counts(const devtrace_stats *st, const emu_expected *e);

/* refuse-buffer=N in $DEVEMU_FAULTS: the emulator refuses N requests itself. */
uint64_t emu_refusals(void);
/* The session's loss counters and what the emulator says it did, one line each. */
void emu_print_losses(const devtrace_stats *st, const devemu_stats *es);
/* CHECKs that every loss counter equals what the emulator says it injected: zero-time and
 * malformed records, dropped records, and the buffers refused (less its own refusals). */
void emu_check_injected_losses(const devtrace_stats *st, const devemu_stats *es);

/* devtrace_open with this backend (exit 1 when it fails: an unavailable session is a
 * session). */
devtrace_session *emu_open(const char *backend);

/* CHECKs that the session is unavailable (backend "none") with a reason that contains
 * each of needles (NULL-terminated); prints the reason. */
void emu_check_unavailable(devtrace_session *s, const char *const *needles);

/* The note that contains needle, or NULL. */
const char *emu_find_note(const dt_session *s, const char *needle);
void emu_print_notes(const dt_session *s);

/* One run of the workload in the session: loaded, the session made the default (the
 * emulator's `op push` goes through devtrace_annotate_push), started, run, stopped. */
void emu_run_workload(devtrace_session *s, const emu_lib *e, const char *wl_path);
/* Writes the trace when a path is given. */
void emu_write_trace(devtrace_session *s, const char *trace);
/* emu_run_workload, then emu_write_trace. */
void emu_run_traced(devtrace_session *s, const emu_lib *e, const char *wl_path, const char *trace);
/* The host program runs on untraced under an unavailable session: no event recorded. */
void emu_run_untraced(devtrace_session *s, const emu_lib *e, const char *wl_path);

/* ---- threads ---- */

#define EMU_THREADS 16
#define EMU_CALLS_PER_THREAD 10000

/* The runtime events of a threads run. */
typedef struct emu_threads {
    uint64_t runtime, linked, zero_correlation;
    uint64_t wrong_external;          /* linked to another thread's id */
    uint64_t odd;                     /* events the test's predicate calls odd */
    uint64_t per_thread[EMU_THREADS]; /* events linked to that thread's own id */
    uint64_t duplicates;              /* correlation ids seen twice */
    size_t ncorr;                     /* correlation ids kept (at most all calls) */
} emu_threads;

/* Starts the session; EMU_THREADS threads each push their own external id (1000 + i),
 * make EMU_CALLS_PER_THREAD get_device calls and pop it (CHECKed); stops; tallies the
 * runtime events into *t, with odd (NULL: none) asked about each. */
void emu_run_threads(devtrace_session *s, const emu_lib *e, int (*odd)(const devtrace_event *ev, const char *name),
                     emu_threads *t);
/* CHECKs what every backend must show: a runtime event for every call, each linked to its
 * own thread's external id, no correlation id twice. */
void emu_check_threads(const emu_threads *t);

#endif
