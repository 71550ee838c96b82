/* opencl_test.h: what the OpenCL backend's integration tests share (header only): the
 * CHECK macro (print and exit 1), the skip code, opening an "opencl" session, the one
 * reason to skip (no OpenCL loader: any other unavailable reason is a failure), and a
 * collector of drained events with their names (define OT_MAX_EVENTS first to use it). */
#ifndef OPENCL_TEST_H
#define OPENCL_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devtrace.h"

#define SKIP_EXIT 77

#define CHECK(cond, ...)                                                    \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                   \
            fputc('\n', stderr);                                            \
            exit(1);                                                        \
        }                                                                   \
    } while (0)

static inline devtrace_session *ot_open_session(void)
{
    devtrace_config cfg;
    devtrace_config_init(&cfg);
    cfg.backend = "opencl";
    devtrace_error err;
    devtrace_session *s = devtrace_open(&cfg, &err);
    CHECK(s, "devtrace_open: %s", err.message);
    return s;
}

/* 1 (after printing SKIPPED) when the session cannot trace because there is no OpenCL
 * loader; 0 when it can; fails the test for any other reason. */
static inline int ot_skip_without_loader(devtrace_session *s)
{
    if (strcmp(devtrace_backend_name(s), "opencl") == 0)
        return 0;
    const char *why = devtrace_unavailable_reason(s);
    CHECK(strstr(why, "libOpenCL.so.1 not found"), "the opencl backend is unavailable: %s", why);
    printf("SKIPPED: no OpenCL platform (%s)\n", why);
    return 1;
}

#ifdef OT_MAX_EVENTS
typedef struct recorded {
    devtrace_event ev;
    char name[64];
} recorded;

static recorded events[OT_MAX_EVENTS];
static size_t nevents;

static void collect(const devtrace_event *ev, const char *name, void *user)
{
    (void)user;
    CHECK(nevents < OT_MAX_EVENTS, "more than %d events", OT_MAX_EVENTS);
    events[nevents].ev = *ev;
    snprintf(events[nevents].name, sizeof events[nevents].name, "%s", name ? name : "");
    nevents++;
}
#endif

#endif
