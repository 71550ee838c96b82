/* test_dlopen.c: libdevtrace.so opened with dlopen by a program that does not link it (as
 * Python's ctypes does), then used through its public functions: a session records
 * annotation ranges on two threads and drains them. What this guards: every thread-local
 * of the library must stay in the general-dynamic model; one initial-exec variable puts
 * the library's whole thread-local block (some 11 KB) into the static TLS space, which
 * glibc keeps too small for it, and dlopen then fails ("cannot allocate memory in static
 * TLS block"). Exit 0 when every check holds; each failure prints one line. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "devtrace.h"

static struct {
    void (*config_init)(devtrace_config *cfg);
    devtrace_session *(*open)(const devtrace_config *cfg, devtrace_error *err);
    int (*start)(devtrace_session *s);
    int (*stop)(devtrace_session *s);
    int (*range_push)(devtrace_session *s, const char *name, uint64_t id);
    int (*range_pop)(devtrace_session *s);
    size_t (*drain)(devtrace_session *s, devtrace_event_cb cb, void *user);
    void (*close)(devtrace_session *s);
} api;

static int failures;
#define CHECK(cond, ...)                  \
    do {                                  \
        if (!(cond)) {                    \
            printf("FAIL: " __VA_ARGS__); \
            printf("\n");                 \
            failures++;                   \
        }                                 \
    } while (0)

static int bind(void *h, void *field, const char *name)
{
    void *f = dlsym(h, name);
    if (!f) {
        printf("FAIL: %s has no %s\n", DEVTRACE_LIBRARY_PATH, name);
        return -1;
    }
    memcpy(field, &f, sizeof f);
    return 0;
}

static devtrace_session *session;

static void *annotate(void *arg)
{
    uint64_t id = (uint64_t)(uintptr_t)arg;
    for (uint64_t i = 0; i < 3; i++) {
        CHECK(api.range_push(session, "dlopen-range", id * 10 + i) == 0, "range_push on thread %llu",
              (unsigned long long)id);
        CHECK(api.range_pop(session) == 0, "range_pop on thread %llu", (unsigned long long)id);
    }
    return NULL;
}

typedef struct seen {
    unsigned ranges;
    uint64_t ids;
} seen;

static void count(const devtrace_event *ev, const char *name, void *user)
{
    seen *s = user;
    if (ev->kind == DEVTRACE_KIND_CPU_OP && strcmp(name, "dlopen-range") == 0) {
        s->ranges++;
        s->ids += ev->external_id;
    }
}

int main(void)
{
    void *h = dlopen(DEVTRACE_LIBRARY_PATH, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("FAIL: dlopen %s: %s\n", DEVTRACE_LIBRARY_PATH, dlerror());
        return 1;
    }
    if (bind(h, &api.config_init, "devtrace_config_init") || bind(h, &api.open, "devtrace_open") ||
        bind(h, &api.start, "devtrace_start") || bind(h, &api.stop, "devtrace_stop") ||
        bind(h, &api.range_push, "devtrace_range_push") || bind(h, &api.range_pop, "devtrace_range_pop") ||
        bind(h, &api.drain, "devtrace_drain") || bind(h, &api.close, "devtrace_close"))
        return 1;
    devtrace_config cfg;
    api.config_init(&cfg);
    cfg.backend = "none";
    devtrace_error err;
    session = api.open(&cfg, &err);
    if (!session) {
        printf("FAIL: devtrace_open: %s\n", err.message);
        return 1;
    }
    CHECK(api.start(session) == 0, "devtrace_start");
    pthread_t other;
    CHECK(pthread_create(&other, NULL, annotate, (void *)(uintptr_t)2) == 0, "pthread_create");
    annotate((void *)(uintptr_t)1);
    pthread_join(other, NULL);
    CHECK(api.stop(session) == 0, "devtrace_stop");
    seen s = {0, 0};
    size_t n = api.drain(session, count, &s);
    CHECK(s.ranges == 6, "%u dlopen-range events drained (%zu in all), not 6", s.ranges, n);
    CHECK(s.ids == 10 + 11 + 12 + 20 + 21 + 22, "the ranges' external ids add up to %llu, not 96",
          (unsigned long long)s.ids);
    api.close(session);
    if (!failures)
        printf("ok: libdevtrace.so works when dlopen'd (6 ranges on 2 threads)\n");
    return failures ? 1 : 0;
}
