/* record_capture.h: devtrace record's capture window options: --delay and --duration
 * (a window in time from the program's start), --capture-op with --skip and --count (a
 * window from an operator's ranges, chosen inside each traced process). The window is the
 * trace's own (devtrace.window): finalise keeps the events inside it and counts the rest
 * out_of_window per kind. */
#ifndef DT_RECORD_CAPTURE_H
#define DT_RECORD_CAPTURE_H

#include <stdint.h>

#include "core/core.h"

#define DT_CAPTURE_MAX_SECONDS 1e7 /* about 115 days */

/* A number of seconds, "2" or "0.25" (at most DT_CAPTURE_MAX_SECONDS): 0 and *ns set, or -1. */
int dt_capture_parse_seconds(const char *text, uint64_t *ns);

typedef struct dt_capture_opts {
    uint64_t delay_ns, duration_ns;
    int has_delay, has_duration;
    const char *op; /* --capture-op NAME, or NULL */
    uint64_t skip, count;
    int has_skip, has_count;
    int on_demand; /* --on-demand: windows opened by devtrace capture (record_windows.h) */
} dt_capture_opts;

/* (DT_CAPTURE_HELP below is a printf format: %% for a percent sign.)
 * One command-line option: 1 when it is a capture option (value used), 2 when it is one
 * without a value, 0 when it is not, -1 when its value is wrong (said on stderr). */
int dt_capture_option(dt_capture_opts *c, const char *flag, const char *value);
/* The options together: 0, or -1 (said on stderr). */
int dt_capture_check(const dt_capture_opts *c);
/* In the program's environment: what the collectors need (--capture-op). */
void dt_capture_child_env(const dt_capture_opts *c);
/* The window of a received session: it opens --delay after program_start_ns and closes
 * --duration later, or when its processes stopped, if that is sooner (a note when the
 * program ended before it opened). */
void dt_capture_apply(const dt_capture_opts *c, dt_session *s, uint64_t program_start_ns);

#define DT_CAPTURE_HELP                                                                   \
    "  --delay S           open the capture window S seconds after PROGRAM starts\n"      \
    "  --duration S        close it S seconds after it opens (events wholly inside the\n" \
    "                      window are kept; the rest are counted out_of_window)\n"        \
    "  --capture-op NAME   open the window when the (K+1)-th op (annotation or range)\n"  \
    "                      called NAME begins and close it when the (K+C)-th ends, in\n"  \
    "                      each traced process\n"                                         \
    "  --skip K            ops called NAME before the window (default 0)\n"               \
    "  --count C           ops called NAME in the window (default 1)\n"                   \
    "  --on-demand         capture nothing until 'devtrace capture PID' opens a window\n" \
    "                      (PID: the traced program, or any process it started); each\n"  \
    "                      window is its own trace: %%w in -o is the window's index\n"

#endif
