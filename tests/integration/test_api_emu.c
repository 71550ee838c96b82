/* test_api_emu.c: the calls a child profiler (a Kineto adaptor) makes, end to end against a
 * vendor ABI emulator in process, on the parity workload (kernel=17 memcpy=1 memset=1
 * runtime=187 cpu_op=17):
 *
 *   test_api_emu MODE EMULATOR.so WORKLOAD.wl
 *
 * Modes (one process each: the engine binds one vendor library per process):
 *   kinds-kernel    devtrace_config.kinds = kernel only: 17 kernels, 0 of every other kind,
 *                   no loss counted (no unpaired flow: the runtime halves were not asked for)
 *   kinds-copies    memcpy and memset only: 1 and 1, nothing else
 *   user            a user correlation id pushed around the whole run: every runtime call and
 *                   every device event carries it (DEVTRACE_EVENT_HAS_USER_EXTERNAL), the op's
 *                   External id is kept; the Chrome trace writes "User external id"
 *   streams         the stream list after drain: the workload's streams, named "stream N"
 * $DT_TEST_BACKEND picks the backend (default cupti); the emulator is given to it as
 * $DEVTRACE_<BACKEND>_LIBRARY. Exit status 0 when every assertion holds. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_harness.h"

#define USER_ID 4242u

static devtrace_session *open_kinds(const char *backend, uint32_t kinds)
{
    devtrace_config cfg;
    devtrace_error err;
    devtrace_config_init(&cfg);
    cfg.backend = backend;
    cfg.kinds = kinds;
    devtrace_session *s = devtrace_open(&cfg, &err);
    if (!s) {
        fprintf(stderr, "FAIL: devtrace_open: %s\n", err.message);
        exit(1);
    }
    return s;
}

static uint64_t losses(const devtrace_stats *st)
{
    uint64_t n = 0;
    for (int k = 0; k < DEVTRACE_KIND_COUNT; k++)
        n += st->out_of_window[k];
    for (int i = 0; i < DT_STATS_NCOUNTERS; i++)
        n += dt_stats_counter_value(st, i);
    return n;
}

static void mode_kinds(const char *backend, const emu_lib *e, const char *wl, uint32_t kinds, const uint64_t *want)
{
    devtrace_session *s = open_kinds(backend, kinds);
    emu_run_workload(s, e, wl);
    devtrace_drain(s, NULL, NULL);
    devtrace_stats st = {.size = sizeof st};
    CHECK(devtrace_stats_read(s, &st) == 0, "devtrace_stats_read failed");
    for (int k = 1; k < DEVTRACE_KIND_COUNT; k++) {
        printf("  %s=%" PRIu64, devtrace_kind_name(k), st.events[k]);
        CHECK(st.events[k] == want[k], "%s: %" PRIu64 " events, not %" PRIu64, devtrace_kind_name(k), st.events[k],
              want[k]);
    }
    printf("\n");
    CHECK(losses(&st) == 0, "%" PRIu64 " losses counted for kinds not asked for", losses(&st));
    devtrace_close(s);
}

typedef struct user_tally {
    uint64_t events, with_user, wrong_user, device_with_external;
} user_tally;

static void tally_user(const devtrace_event *ev, const char *name, void *arg)
{
    (void)name;
    user_tally *t = arg;
    if (ev->kind == DEVTRACE_KIND_CPU_OP)
        return;
    t->events++;
    if (ev->flags & DEVTRACE_EVENT_HAS_USER_EXTERNAL) {
        t->with_user++;
        t->wrong_user += ev->user_external_id != USER_ID;
    }
    if (ev->kind != DEVTRACE_KIND_RUNTIME && (ev->flags & DEVTRACE_EVENT_HAS_EXTERNAL))
        t->device_with_external++;
}

static void mode_user(const char *backend, const emu_lib *e, const char *wl, const char *trace)
{
    devtrace_session *s = emu_open(backend);
    uint64_t popped = 0;
    CHECK(devtrace_pop_user_correlation(s, &popped) == DEVTRACE_EEMPTY, "a pop of an empty user stack");
    CHECK(devtrace_push_user_correlation(s, USER_ID) == 0, "devtrace_push_user_correlation failed");
    emu_run_workload(s, e, wl);
    CHECK(devtrace_pop_user_correlation(s, &popped) == 0 && popped == USER_ID, "the pop gave %" PRIu64, popped);
    user_tally t = {0};
    devtrace_drain(s, tally_user, &t);
    printf("  %" PRIu64 " runtime and device events, %" PRIu64 " with the user id, %" PRIu64
           " device events with an External id\n",
           t.events, t.with_user, t.device_with_external);
    CHECK(t.events == 187 + 17 + 1 + 1, "%" PRIu64 " runtime and device events", t.events);
    CHECK(t.with_user == t.events && t.wrong_user == 0,
          "%" PRIu64 " of %" PRIu64 " carry the user id (%" PRIu64 " another)", t.with_user, t.events, t.wrong_user);
    CHECK(t.device_with_external == 19, "the op's External id on %" PRIu64 " of 19 device events",
          t.device_with_external);
    devtrace_error err;
    CHECK(devtrace_write_chrome(s, trace, &err) == 0, "devtrace_write_chrome: %s", err.message);
    FILE *f = fopen(trace, "r");
    CHECK(f != NULL, "cannot read %s", trace);
    if (f) {
        char line[8192];
        uint64_t n = 0;
        while (fgets(line, sizeof line, f))
            n += strstr(line, "\"User external id\": 4242") != NULL;
        fclose(f);
        CHECK(n == t.events, "\"User external id\" on %" PRIu64 " trace events, not %" PRIu64, n, t.events);
    }
    devtrace_close(s);
}

static void mode_streams(const char *backend, const emu_lib *e, const char *wl)
{
    devtrace_session *s = emu_open(backend);
    CHECK(devtrace_stream_count(s) == 0, "streams before the drain");
    emu_run_workload(s, e, wl);
    devtrace_drain(s, NULL, NULL);
    int n = devtrace_stream_count(s);
    CHECK(n == 1, "%d streams, not 1 (the parity workload uses stream 7)", n);
    devtrace_stream st = {.size = sizeof st};
    CHECK(devtrace_stream_get(s, 0, &st) == 0, "devtrace_stream_get(0) failed");
    printf("  stream 0: device %d context %u stream %u \"%s\"\n", st.device, st.context, st.stream, st.name);
    CHECK(st.device == 0 && st.stream == 7 && strcmp(st.name, "stream 7") == 0, "stream 0 is not device 0's stream 7");
    CHECK(devtrace_stream_get(s, 1, &st) == DEVTRACE_EINVAL, "an index past the count");
    devtrace_stream small = {.size = sizeof(size_t)};
    CHECK(devtrace_stream_get(s, 0, &small) == DEVTRACE_EINVAL, "a size without the name");
    devtrace_close(s);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: test_api_emu MODE EMULATOR.so WORKLOAD.wl [TRACE.json]\n");
        return 2;
    }
    const char *mode = argv[1], *lib = argv[2], *wl = argv[3];
    const char *backend = getenv("DT_TEST_BACKEND") && *getenv("DT_TEST_BACKEND") ? getenv("DT_TEST_BACKEND") : "cupti";
    char var[64];
    snprintf(var, sizeof var, "DEVTRACE_%s_LIBRARY", backend);
    for (char *c = var; *c; c++)
        if (*c >= 'a' && *c <= 'z')
            *c = (char)(*c - 'a' + 'A');
    setenv(var, lib, 1);
    emu_lib emu;
    emu_load(lib, &emu);
    printf("%s on %s\n", mode, backend);
    if (strcmp(mode, "kinds-kernel") == 0)
        mode_kinds(backend, &emu, wl, DEVTRACE_KIND_BIT(DEVTRACE_KIND_KERNEL),
                   (const uint64_t[]){0, 17, 0, 0, 0, 0, 0});
    else if (strcmp(mode, "kinds-copies") == 0)
        mode_kinds(backend, &emu, wl, DEVTRACE_KIND_BIT(DEVTRACE_KIND_MEMCPY) | DEVTRACE_KIND_BIT(DEVTRACE_KIND_MEMSET),
                   (const uint64_t[]){0, 0, 1, 1, 0, 0, 0});
    else if (strcmp(mode, "user") == 0 && argc > 4)
        mode_user(backend, &emu, wl, argv[4]);
    else if (strcmp(mode, "streams") == 0)
        mode_streams(backend, &emu, wl);
    else {
        fprintf(stderr, "unknown mode %s (or no TRACE.json for user)\n", mode);
        return 2;
    }
    return emu_finish(mode);
}
