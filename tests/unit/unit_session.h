/* unit_session.h: helpers shared by the unit tests (header only): building events and
 * offline sessions, and turning a session into a parsed Chrome trace. */
#ifndef UNIT_SESSION_H
#define UNIT_SESSION_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "backends/backend.h" /* the registry: devtrace_open's backends */
#include "core/session.h"
#include "devtrace.h"
#include "sinks/sinks.h"
#include "unit_json.h"

/* An event of a kind with times and a correlation id; everything else zero. */
static inline devtrace_event ut_event(int kind, uint64_t start_ns, uint64_t end_ns, uint64_t correlation)
{
    devtrace_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = (uint16_t)kind;
    ev.start_ns = start_ns;
    ev.end_ns = end_ns;
    ev.correlation = correlation;
    return ev;
}

/* A runtime call on host clock (process 100, thread 200). */
static inline devtrace_event ut_runtime(uint64_t start_ns, uint64_t end_ns, uint64_t correlation)
{
    devtrace_event ev = ut_event(DEVTRACE_KIND_RUNTIME, start_ns, end_ns, correlation);
    ev.flags = DEVTRACE_EVENT_HOST_CLOCK;
    ev.device = 100;
    ev.stream = 200;
    return ev;
}

/* A kernel on device 0, stream 7, host clock. */
static inline devtrace_event ut_kernel(uint64_t start_ns, uint64_t end_ns, uint64_t correlation)
{
    devtrace_event ev = ut_event(DEVTRACE_KIND_KERNEL, start_ns, end_ns, correlation);
    ev.flags = DEVTRACE_EVENT_HOST_CLOCK;
    ev.stream = 7;
    return ev;
}

/* An EXTCORR link from a correlation id to an external id. */
static inline devtrace_event ut_extcorr(uint64_t correlation, uint64_t external_id)
{
    devtrace_event ev = ut_event(DEVTRACE_KIND_EXTCORR, 0, 0, correlation);
    ev.flags = DEVTRACE_EVENT_HAS_EXTERNAL;
    ev.external_id = external_id;
    return ev;
}

/* A device with every attribute occupancy needs (an A100/H100-like SM: 1024 threads a
 * block, 2048 and 32 blocks an SM, 64 K registers, warps of 32), 80 GiB. */
static inline dt_device_props ut_occupancy_device(const char *name, int major, int num_sms, uint64_t smem_per_block,
                                                  uint64_t smem_per_sm)
{
    dt_device_props d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "%s", name);
    d.total_global_mem = 85899345920ull;
    d.compute_major = major;
    d.max_threads_per_block = 1024;
    d.max_threads_per_sm = 2048;
    d.max_blocks_per_sm = 32;
    d.regs_per_block = 65536;
    d.regs_per_sm = 65536;
    d.warp_size = 32;
    d.num_sms = num_sms;
    d.smem_per_block = smem_per_block;
    d.smem_per_sm = smem_per_sm;
    d.has_occupancy = 1;
    return d;
}

/* An offline session whose runtime category is "cuda_runtime". */
static inline dt_session *ut_offline_session(void)
{
    devtrace_error err = {0, ""};
    return dt_session_new_offline("unit", "unit test", "cuda_runtime", &err);
}

/* The session's Chrome trace, parsed. *text (optional) receives the raw text (free it).
 * Returns NULL when the trace cannot be written or is not valid JSON (error says why). */
static inline uj_value *ut_chrome_trace(dt_session *s, char **text, char *error)
{
    char *buf = NULL;
    size_t len = 0;
    if (dt_chrome_write_buffer(s, "unit-trace", &buf, &len) != 0) {
        snprintf(error, 160, "dt_chrome_write_buffer failed");
        return NULL;
    }
    uj_value *root = uj_parse(buf, len, error);
    if (text)
        *text = buf;
    else
        free(buf);
    return root;
}

/* The trace events of a parsed trace whose "ph" equals ph (NULL: all), in order. */
static inline size_t ut_events_with_ph(const uj_value *root, const char *ph, const uj_value **out, size_t max)
{
    const uj_value *events = uj_get(root, "traceEvents");
    size_t n = 0;
    for (size_t i = 0; events && events->type == UJ_ARRAY && i < events->n; i++) {
        const char *p = uj_get_str(events->items[i], "ph");
        if (!ph || (p && strcmp(p, ph) == 0)) {
            if (n < max)
                out[n] = events->items[i];
            n++;
        }
    }
    return n;
}

/* The first trace event with this "ph" and "cat" (and name when not NULL), or NULL. */
static inline const uj_value *ut_find_event(const uj_value *root, const char *ph, const char *cat, const char *name)
{
    const uj_value *events = uj_get(root, "traceEvents");
    for (size_t i = 0; events && events->type == UJ_ARRAY && i < events->n; i++) {
        const uj_value *e = events->items[i];
        const char *p = uj_get_str(e, "ph"), *c = uj_get_str(e, "cat"), *nm = uj_get_str(e, "name");
        if (p && c && strcmp(p, ph) == 0 && strcmp(c, cat) == 0 && (!name || (nm && strcmp(nm, name) == 0)))
            return e;
    }
    return NULL;
}

#endif /* UNIT_SESSION_H */
