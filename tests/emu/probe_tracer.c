/* probe_tracer.c: a stand-in tracer for the emulators' own tests.
 *
 * Loaded through the injection variable (CUDA_INJECTION64_PATH, or MACA_INJECTION64_PATH
 * for the MCPTI emulator), exactly as a real
 * tracer's injection library would be: InitializeInjection binds the CUPTI-shaped
 * symbols of whichever emulator is loaded (prefix from devemu_vendor()), registers
 * buffers, enables the parity kinds, and at exit flushes and prints one line of counts:
 *   probe: init=1 kernel=17 memcpy=1 memset=1 runtime=187 extcorr=.. unpaired=0 ...
 * Records are read with the CUPTI offsets of vendor-abi.md written out here, not with the
 * emulator's tables, so the test checks the tables too. Built with PROBE_EXPORTS_ANNOTATE
 * it also exports devtrace_annotate_push/pop (forwarding to PushExternalCorrelationId),
 * which the emulator's `op push` must find and prefer. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROBE_EXPORT __attribute__((visibility("default")))
#define PROBE_BUFFER_BYTES 65536
#define PROBE_MAX_IDS 65536

enum {
    KIND_MEMCPY = 1,
    KIND_MEMSET = 2,
    KIND_KERNEL = 3,
    KIND_RUNTIME = 5,
    KIND_CONCURRENT_KERNEL = 10,
    KIND_EXTERNAL_CORRELATION = 39,
    EXTERNAL_KIND_CUSTOM0 = 3,
    RESULT_SUCCESS = 0
};

typedef void (*request_fn)(uint8_t **, size_t *, size_t *);
typedef void (*complete_fn)(void *, uint32_t, uint8_t *, size_t, size_t);

static struct {
    int (*register_callbacks)(request_fn, complete_fn);
    int (*enable)(int);
    int (*flush_all)(uint32_t);
    int (*next_record)(uint8_t *, size_t, void **);
    int (*dropped)(void *, uint32_t, size_t *);
    int (*push)(int, uint64_t);
    int (*pop)(int, uint64_t *);
} api;

static struct {
    pthread_mutex_t lock;
    int init, kernel, memcpy, memset, runtime, extcorr, zero_time, unknown, buffers, stale, annotate_push;
    uint32_t api_ids[PROBE_MAX_IDS], device_ids[PROBE_MAX_IDS], ext_ids[PROBE_MAX_IDS];
    int napi, ndevice, next;
} probe = {.lock = PTHREAD_MUTEX_INITIALIZER};

static uint32_t u32_at(const uint8_t *r, size_t off)
{
    uint32_t v;
    memcpy(&v, r + off, 4);
    return v;
}

static uint64_t u64_at(const uint8_t *r, size_t off)
{
    uint64_t v;
    memcpy(&v, r + off, 8);
    return v;
}

static void remember(uint32_t *ids, int *n, uint32_t id)
{
    if (*n < PROBE_MAX_IDS)
        ids[(*n)++] = id;
}

static int contains(const uint32_t *ids, int n, uint32_t id)
{
    for (int i = 0; i < n; i++) {
        if (ids[i] == id)
            return 1;
    }
    return 0;
}

/* Called with probe.lock held. */
static void count_record(const uint8_t *r)
{
    switch (u32_at(r, 0)) {
    case KIND_RUNTIME:
        probe.runtime++;
        remember(probe.api_ids, &probe.napi, u32_at(r, 32));
        break;
    case KIND_KERNEL:
    case KIND_CONCURRENT_KERNEL:
        if (u64_at(r, 16) == 0 && u64_at(r, 24) == 0) {
            probe.zero_time++;
            break;
        }
        probe.kernel++;
        remember(probe.device_ids, &probe.ndevice, u32_at(r, 92));
        break;
    case KIND_MEMCPY:
        probe.memcpy++;
        remember(probe.device_ids, &probe.ndevice, u32_at(r, 44));
        break;
    case KIND_MEMSET:
        probe.memset++;
        remember(probe.device_ids, &probe.ndevice, u32_at(r, 44));
        break;
    case KIND_EXTERNAL_CORRELATION:
        probe.extcorr++;
        remember(probe.ext_ids, &probe.next, u32_at(r, 16));
        break;
    default:
        probe.unknown++;
        break;
    }
}

static void buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = malloc(PROBE_BUFFER_BYTES);
    *size = *buffer ? PROBE_BUFFER_BYTES : 0;
    *max_records = 0;
}

static void buffer_completed(void *ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    void *record = NULL, *previous = NULL;
    (void)ctx, (void)stream, (void)size;
    pthread_mutex_lock(&probe.lock);
    probe.buffers++;
    while (api.next_record(buffer, valid, &record) == RESULT_SUCCESS) {
        if (record == previous) { /* a stale iterator: stop, as a careful tracer must */
            probe.stale++;
            break;
        }
        count_record(record);
        previous = record;
    }
    pthread_mutex_unlock(&probe.lock);
    free(buffer);
}

static void report(void)
{
    size_t dropped = 0;
    int unpaired = 0, unattributed = 0;
    api.flush_all(1);
    api.dropped(NULL, 0, &dropped);
    pthread_mutex_lock(&probe.lock);
    for (int i = 0; i < probe.ndevice; i++) {
        unpaired += !contains(probe.api_ids, probe.napi, probe.device_ids[i]);
        unattributed += !contains(probe.ext_ids, probe.next, probe.device_ids[i]);
    }
    printf("probe: init=%d kernel=%d memcpy=%d memset=%d runtime=%d extcorr=%d unpaired=%d unattributed=%d "
           "dropped=%zu annotate_push=%d zero_time=%d unknown=%d buffers=%d stale=%d\n",
           probe.init, probe.kernel, probe.memcpy, probe.memset, probe.runtime, probe.extcorr, unpaired, unattributed,
           dropped, probe.annotate_push, probe.zero_time, probe.unknown, probe.buffers, probe.stale);
    pthread_mutex_unlock(&probe.lock);
    fflush(stdout);
}

/* Binds prefix+name from the process (the emulator was loaded RTLD_GLOBAL). */
static void *bind(const char *prefix, const char *name)
{
    char full[128];
    snprintf(full, sizeof full, "%s%s", prefix, name);
    void *sym = dlsym(RTLD_DEFAULT, full);
    if (!sym)
        fprintf(stderr, "probe: no %s\n", full);
    return sym;
}

#define PROBE_BIND(field, name)                 \
    do {                                        \
        void *sym_ = bind(prefix, name);        \
        if (!sym_)                              \
            return -1;                          \
        memcpy(&api.field, &sym_, sizeof sym_); \
    } while (0)

static int bind_with_prefix(const char *prefix)
{
    PROBE_BIND(register_callbacks, "ActivityRegisterCallbacks");
    PROBE_BIND(enable, "ActivityEnable");
    PROBE_BIND(flush_all, "ActivityFlushAll");
    PROBE_BIND(next_record, "ActivityGetNextRecord");
    PROBE_BIND(dropped, "ActivityGetNumDroppedRecords");
    PROBE_BIND(push, "ActivityPushExternalCorrelationId");
    PROBE_BIND(pop, "ActivityPopExternalCorrelationId");
    return 0;
}

/* The emulator's own prefix (mcpti, ...), else the cupti* spelling. */
static int bind_api(void)
{
    const char *(*vendor)(void);
    void *sym = dlsym(RTLD_DEFAULT, "devemu_vendor");
    if (!sym)
        return -1;
    memcpy(&vendor, &sym, sizeof sym);
    return bind_with_prefix(vendor()) == 0 || bind_with_prefix("cupti") == 0 ? 0 : -1;
}

PROBE_EXPORT int InitializeInjection(void);
PROBE_EXPORT int InitializeInjection(void)
{
    static const int kinds[] = {KIND_RUNTIME, KIND_CONCURRENT_KERNEL, KIND_MEMCPY, KIND_MEMSET,
                                KIND_EXTERNAL_CORRELATION};
    probe.init++;
    if (bind_api() < 0 || api.register_callbacks(buffer_requested, buffer_completed) != RESULT_SUCCESS)
        return 0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        api.enable(kinds[i]);
    atexit(report);
    return 1;
}

#ifdef PROBE_EXPORTS_ANNOTATE
PROBE_EXPORT int devtrace_annotate_push(const char *name, uint64_t id);
PROBE_EXPORT int devtrace_annotate_pop(void);

PROBE_EXPORT int devtrace_annotate_push(const char *name, uint64_t id)
{
    (void)name;
    pthread_mutex_lock(&probe.lock);
    probe.annotate_push++;
    pthread_mutex_unlock(&probe.lock);
    return api.push(EXTERNAL_KIND_CUSTOM0, id);
}

PROBE_EXPORT int devtrace_annotate_pop(void)
{
    uint64_t id;
    return api.pop(EXTERNAL_KIND_CUSTOM0, &id);
}
#endif
