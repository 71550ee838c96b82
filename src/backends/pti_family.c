/* pti_family.c: the CUPTI-family engine (see pti_family.h): finding and binding the
 * vendor library, the bounded buffer pool and the vendor's buffer callbacks, the raw
 * capture, enabling activity kinds and the dt_backend functions. Its other jobs have files
 * of their own: the walker and decoders (pti_walk.c), device properties
 * (pti_devices.c), replay (pti_replay.c), the CUDA-shaped tables (pti_tables.c). */
#include "pti_family.h"
#include "pti_decode.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "callback_guard.h"
#include "core/errors.h"
#include "core/raw.h"
#include "pti_records.h"
#include "device_attrs.h"
#include "vendor_lib.h"

#define CF_DEFAULT_BUFFER_SIZE (1u << 20)
#define CF_DEFAULT_BUFFER_COUNT 64u
#define CF_MIN_BUFFER_SIZE 4096u
#define CF_MAX_BUFFER_SIZE (256u << 20)
#define CF_MAX_BUFFER_COUNT 4096u
#define CF_OVERFLOW_SIZE (64u << 10) /* a buffer lent past the pool bound; its records are dropped */

typedef void (*pti_request_fn)(uint8_t **buffer, size_t *size, size_t *max_records);
typedef void (*pti_complete_fn)(void *context, uint32_t stream, uint8_t *buffer, size_t size, size_t valid_size);
typedef void (*pti_complete3_fn)(uint8_t *buffer, size_t size, size_t valid_size);
typedef void (*pti_callback_fn)(void *userdata, int domain, uint32_t cbid, const void *data);
typedef void (*pti_any_fn)(void);

/* The bound vendor functions, typed (NULL when absent). */
typedef struct pti_api {
    int (*get_version)(uint32_t *version);
    int (*get_result_string)(int result, const char **str);
    int (*get_error_message)(int result, const char **str);
    int (*register_callbacks)(pti_request_fn request, pti_complete_fn complete);
    int (*enable)(int kind);
    int (*disable)(int kind);
    int (*get_next_record)(uint8_t *buffer, size_t valid_size, void **record);
    int (*flush_all)(uint32_t flag);
    int (*get_dropped)(void *context, uint32_t stream, size_t *dropped);
    int (*push_external)(int kind, uint64_t id);
    int (*pop_external)(int kind, uint64_t *id);
    int (*get_timestamp)(uint64_t *timestamp);
    int (*subscribe)(void **subscriber, pti_callback_fn callback, void *userdata);
    int (*unsubscribe)(void *subscriber);
    int (*init)(void);
    char names[DT_PTI_FN_COUNT][64]; /* the spelling each function was found under */
} pti_api;

static const size_t pti_api_offsets[DT_PTI_FN_COUNT] = {
    offsetof(pti_api, get_version),
    offsetof(pti_api, get_result_string),
    offsetof(pti_api, get_error_message),
    offsetof(pti_api, register_callbacks),
    offsetof(pti_api, enable),
    offsetof(pti_api, disable),
    offsetof(pti_api, get_next_record),
    offsetof(pti_api, flush_all),
    offsetof(pti_api, get_dropped),
    offsetof(pti_api, push_external),
    offsetof(pti_api, pop_external),
    offsetof(pti_api, get_timestamp),
    offsetof(pti_api, subscribe),
    offsetof(pti_api, unsubscribe),
    offsetof(pti_api, init),
};

static const char *const pti_fn_suffix[DT_PTI_FN_COUNT] = {
#define DT_PTI__FN_SUFFIX(id, suffix) suffix,
    DT_PTI_FN_MAP(DT_PTI__FN_SUFFIX)
#undef DT_PTI__FN_SUFFIX
};

/* A buffer lent past the pool bound (to a library that must not be refused). */
typedef struct pti_overflow {
    struct pti_overflow *next;
    uint8_t *buffer; /* points into this allocation */
} pti_overflow;

/* The process's one engine: the bound library and its pool. Written under lock while
 * binding, before the callbacks are registered; read without a lock by the callbacks. */
static struct pti_engine {
    pthread_mutex_t lock;          /* bind, attach, detach; never held across FlushAll */
    const dt_pti_descriptor *desc; /* bound descriptor; NULL: nothing bound yet */
    void *handle;
    char path[512];
    uint32_t version;
    pti_api api;
    char config_note[384]; /* a rejected DEVTRACE_BUFFER_* or _FLUSH_TIMEOUT_MS value, told in every session */
    int (*api_name)(uint32_t arg, uint32_t cbid, const char **name); /* descriptor's name resolver, or NULL */
    char api_name_sym[64];
    /* The pool: buffer_count buffers of buffer_size bytes, allocated on first use. */
    size_t buffer_size;
    uint32_t buffer_count;
    uint8_t *_Atomic *buffers;
    _Atomic uint8_t *busy;
    int may_refuse;
    pthread_mutex_t overflow_lock;
    pti_overflow *overflow; /* outstanding overflow buffers */
    /* The attached session (guard.active, a dt_pti_state), and the guard that lets close
     * wait for callbacks that may still be using it. */
    dt_callback_guard guard;
    uint64_t flush_timeout_ms; /* how long stop waits for FlushAll */
    _Atomic int flush_hung;    /* a FlushAll never returned: the library is stuck, no further flush */
} G = {.lock = PTHREAD_MUTEX_INITIALIZER, .overflow_lock = PTHREAD_MUTEX_INITIALIZER};

static _Thread_local int t_in_vendor_init;
static _Thread_local dt_guard_thread *t_guard; /* this thread's record in G.guard */

void dt_pti_set_in_vendor_init(int on)
{
    t_in_vendor_init = on;
}

_Static_assert(DT_PTI_MAX_NAMES == DT_VLIB_MAX_NAMES, "a descriptor's name lists are vendor_lib.h's");

/* "CUPTI_ERROR_UNKNOWN (999): <message>", from the library's own strings when it has them. */
static void result_text(const pti_api *api, const dt_pti_descriptor *d, int rc, char *buf, size_t len)
{
    const char *name = NULL, *msg = NULL;
    if (api->get_result_string && api->get_result_string(rc, &name) != d->results.success)
        name = NULL;
    if (api->get_error_message && api->get_error_message(rc, &msg) != d->results.success)
        msg = NULL;
    if (name && msg && strcmp(name, msg) != 0)
        snprintf(buf, len, "%s (%d): %s", name, rc, msg);
    else if (name || msg)
        snprintf(buf, len, "%s (%d)", name ? name : msg, rc);
    else
        snprintf(buf, len, "%s error %d", d->vendor_api, rc);
}

static void pti_result_text(const dt_pti_descriptor *d, int rc, char *buf, size_t len)
{
    result_text(&G.api, d, rc, buf, len);
}

static const char *pti_prefix(const dt_pti_descriptor *d)
{
    return d->symbol_prefixes[0] ? d->symbol_prefixes[0] : "";
}

/* The name a bound function was found under ("cuptiActivityEnable"). */
static const char *fn_name(const pti_api *api, dt_pti_fn fn)
{
    return api->names[fn][0] ? api->names[fn] : pti_fn_suffix[fn];
}

/* ---- finding the library ---- */

/* Does the process itself have the vendor's register function? Only under the
 * vendor's own (first) spelling: a cupti* alias in a process is NVIDIA's CUPTI as likely
 * as another vendor's. */
static int has_register_symbol(void *handle, const void *user)
{
    const dt_pti_descriptor *d = user;
    char name[128];
    snprintf(name, sizeof name, "%s%s", pti_prefix(d), pti_fn_suffix[DT_PTI_REGISTER_CALLBACKS]);
    return dlsym(handle, name) != NULL;
}

/* The descriptor's search (vendor_lib.h): a copy already loaded and the loader's search
 * go by system_names (not library_names: for CUDA-named vendors that would be NVIDIA's). */
static dt_vlib_search pti_search(const dt_pti_descriptor *d)
{
    return (dt_vlib_search){.override_env = d->override_env,
                            .loaded_names = d->system_names,
                            .sdk_env = d->sdk_env,
                            .default_roots = d->sdk_default_roots,
                            .subdirs = d->sdk_subdirs,
                            .dir_names = d->library_names,
                            .loader_names = d->system_names,
                            .search_process = d->search_process,
                            .process_accept = has_register_symbol,
                            .user = d,
                            .names_in_tried = 1};
}

static void pti_not_found(const dt_pti_descriptor *d, const char *tried, char *why, size_t whylen)
{
    snprintf(why, whylen, "%s library not found; tried %s; set $%s to the library's path%s%s%s", d->vendor_api, tried,
             d->override_env ? d->override_env : "?", d->sdk_env[0] ? " or $" : "", d->sdk_env[0] ? d->sdk_env[0] : "",
             d->sdk_env[0] ? " to the SDK root" : "");
}

static int pti_find_library(const dt_pti_descriptor *d, dt_vlib_found *out, char *why, size_t whylen)
{
    char tried_buf[1024] = "";
    dt_text tried = {tried_buf, sizeof tried_buf, 0};
    dt_vlib_search q = pti_search(d);
    int found = dt_vlib_find(&q, out, &tried);
    if (found > 0)
        return 1;
    if (found < 0) {
        snprintf(why, whylen, "$%s=%s cannot be loaded: %s; point it at the %s library (or unset it to search)",
                 d->override_env, out->override, out->error, d->vendor_api);
        return 0;
    }
    int nsys = dt_vlib_names_count(d->system_names);
    if (nsys) {
        dt_text_add(&tried, "%sthe loader's search path for ", tried.used ? ", " : "");
        for (int i = 0; i < nsys; i++)
            dt_text_add(&tried, "%s%s", i ? "," : "", d->system_names[i]);
    }
    if (d->search_process)
        dt_text_add(&tried, "%sthe process itself", tried.used ? ", " : "");
    pti_not_found(d, tried_buf, why, whylen);
    return 0;
}

void dt_pti_describe_library(const dt_pti_descriptor *d, devtrace_backend_info *info)
{
    dt_vlib_search q = pti_search(d);
    dt_vlib_describe(&q, d->vendor_api, info);
}

int dt_pti_locate_library(const dt_pti_descriptor *d, char *path, size_t pathlen, char *why, size_t whylen)
{
    char tried_buf[1024] = "";
    dt_text tried = {tried_buf, sizeof tried_buf, 0};
    dt_vlib_search q = pti_search(d);
    int found = dt_vlib_locate(&q, path, pathlen, &tried, why, whylen);
    if (found > 0)
        return 0;
    if (found == 0)
        pti_not_found(d, tried_buf, why, whylen);
    return -1;
}

/* Resolves every function in its spellings; 0, or -1 with the missing required ones. */
static int pti_resolve(const dt_pti_descriptor *d, void *handle, const char *path, pti_api *api, char *why,
                       size_t whylen)
{
    char missing_buf[768] = "";
    dt_text missing = {missing_buf, sizeof missing_buf, 0};
    unsigned required = d->required ? d->required : DT_PTI_REQUIRED_DEFAULT;
    if (d->quirks & DT_PTI_QUIRK_INIT_FIRST)
        required |= DT_PTI_BIT(INIT);
    memset(api, 0, sizeof *api);
    int nmissing = dt_vlib_bind(handle, d->symbol_prefixes, pti_fn_suffix, pti_api_offsets, DT_PTI_FN_COUNT, required,
                                api, api->names, &missing);
    if (nmissing) {
        snprintf(why, whylen, "%s in %s lacks the required symbol%s %s; it is not a usable %s library", d->vendor_api,
                 path, nmissing > 1 ? "s" : "", missing_buf, d->vendor_api);
        return -1;
    }
    if (!(d->quirks & DT_PTI_QUIRK_INIT_FIRST))
        api->init = NULL; /* a function of that name is called only where the descriptor says so */
    else {
        int rc = api->init(); /* CNPAPI: nothing else answers before cnpapiInit (repeat calls are harmless) */
        if (rc != d->results.success) {
            char text[256];
            result_text(api, d, rc, text, sizeof text);
            snprintf(why, whylen, "%s in %s failed: %s; is the driver installed and a device visible?",
                     api->names[DT_PTI_INIT], path, text);
            return -1;
        }
    }
    return 0;
}

static const char *kind_label(const dt_pti_descriptor *d, uint32_t kind)
{
    const dt_pti_kinds *k = &d->kinds;
    if (kind == k->concurrent_kernel)
        return "CONCURRENT_KERNEL";
    if (kind == k->kernel)
        return "KERNEL";
    if (kind == k->memcpy)
        return "MEMCPY";
    if (kind == k->memset)
        return "MEMSET";
    if (kind == k->runtime)
        return "RUNTIME";
    if (kind == k->external_correlation)
        return "EXTERNAL_CORRELATION";
    for (int i = 0; i < DT_PTI_MAX_MORE_KINDS && d->more_kinds[i].kind; i++)
        if (kind == d->more_kinds[i].kind)
            return d->more_kinds[i].name ? d->more_kinds[i].name : "?";
    return "?";
}

/* The known fix for a vendor result code, or NULL. */
static const char *result_fix(const dt_pti_descriptor *d, int rc)
{
    for (int i = 0; i < DT_PTI_MAX_HINTS && d->result_hints[i].result; i++)
        if (d->result_hints[i].result == rc)
            return d->result_hints[i].fix;
    return NULL;
}

/* Can the library trace here? Enabling a harmless kind (external correlation: no record
 * appears unless an id is pushed) fails without a driver or device (CUDA 13.0 without a
 * driver: CUPTI_ERROR_UNKNOWN). */
static int pti_check_usable(const dt_pti_descriptor *d, const pti_api *api, const char *path, char *why, size_t whylen)
{
    uint32_t kind = d->usable_check_kind            ? d->usable_check_kind
                    : d->kinds.external_correlation ? d->kinds.external_correlation
                                                    : d->kinds.memcpy;
    int rc = api->enable((int)kind);
    if (rc != d->results.success) {
        char text[256];
        uint32_t version = 0;
        if (api->get_version && api->get_version(&version) != d->results.success)
            version = 0;
        result_text(api, d, rc, text, sizeof text);
        const char *fix = result_fix(d, rc);
        snprintf(why, whylen, "%s (%s, API version %u) cannot trace here: %s(%s) returned %s; %s", d->vendor_api, path,
                 version, fn_name(api, DT_PTI_ENABLE), kind_label(d, kind), text,
                 fix ? fix : "is the driver installed and a device visible?");
        return -1;
    }
    api->disable((int)kind);
    return 0;
}

int dt_pti_probe(const dt_pti_descriptor *d, char *why, size_t whylen)
{
    pthread_mutex_lock(&G.lock);
    int bound = G.desc == d;
    pthread_mutex_unlock(&G.lock);
    if (bound) {
        snprintf(why, whylen, "bound to %s", G.path);
        return 1;
    }
    dt_vlib_found f;
    if (!pti_find_library(d, &f, why, whylen))
        return 0;
    pti_api api;
    if (pti_resolve(d, f.handle, f.path, &api, why, whylen) != 0)
        return 0; /* the handle stays loaded: unloading a vendor library is not safe */
    if (pti_check_usable(d, &api, f.path, why, whylen) != 0)
        return 0;
    snprintf(why, whylen, "%s", f.path);
    return 1;
}

unsigned dt_pti_symbols_found(const dt_pti_descriptor *d, char *path, size_t pathlen)
{
    dt_vlib_found f;
    char why[1024];
    unsigned found = 0;
    if (!pti_find_library(d, &f, why, sizeof why)) {
        snprintf(path, pathlen, "%s", why);
        return 0;
    }
    snprintf(path, pathlen, "%s", f.path);
    pti_api api;
    memset(&api, 0, sizeof api);
    dt_vlib_bind(f.handle, d->symbol_prefixes, pti_fn_suffix, pti_api_offsets, DT_PTI_FN_COUNT, 0, &api, api.names,
                 NULL);
    for (int fn = 0; fn < DT_PTI_FN_COUNT; fn++)
        if (api.names[fn][0])
            found |= 1u << fn;
    return found;
}

/* ---- the buffer pool and the vendor's callbacks ---- */

static uint8_t *pool_take(void)
{
    for (uint32_t i = 0; i < G.buffer_count; i++) {
        uint8_t expected = 0;
        if (atomic_load_explicit(&G.busy[i], memory_order_relaxed) ||
            !atomic_compare_exchange_strong(&G.busy[i], &expected, 1))
            continue;
        uint8_t *b = atomic_load(&G.buffers[i]);
        if (!b) {
            b = malloc(G.buffer_size);
            if (!b) {
                atomic_store(&G.busy[i], 0);
                return NULL;
            }
            atomic_store(&G.buffers[i], b);
        }
        return b;
    }
    return NULL;
}

static int pool_index(const uint8_t *b)
{
    for (uint32_t i = 0; i < G.buffer_count; i++)
        if (atomic_load_explicit(&G.buffers[i], memory_order_relaxed) == b)
            return (int)i;
    return -1;
}

static uint8_t *overflow_new(void)
{
    pti_overflow *o = malloc(sizeof(pti_overflow) + 16 + CF_OVERFLOW_SIZE);
    if (!o)
        return NULL;
    o->buffer = (uint8_t *)o + ((sizeof(pti_overflow) + 15) & ~(size_t)15);
    pthread_mutex_lock(&G.overflow_lock);
    o->next = G.overflow;
    G.overflow = o;
    pthread_mutex_unlock(&G.overflow_lock);
    return o->buffer;
}

/* Unlinks the overflow allocation holding b, or returns NULL when b is not one. */
static pti_overflow *overflow_take(const uint8_t *b)
{
    pthread_mutex_lock(&G.overflow_lock);
    pti_overflow **p = &G.overflow;
    while (*p && (*p)->buffer != b)
        p = &(*p)->next;
    pti_overflow *o = *p;
    if (o)
        *p = o->next;
    pthread_mutex_unlock(&G.overflow_lock);
    return o;
}

/* ---- raw capture ($DEVTRACE_RAW): what live collection saw, for replay ---- */

static void pti_raw_open(dt_session *s, dt_pti_state *st);
static int pti_quiesce(void);

static dt_raw_writer *pti_raw(dt_pti_state *st)
{
    dt_raw_writer *w = st ? atomic_load_explicit(&st->raw, memory_order_acquire) : NULL;
    return w && st->raw_pid == (int)getpid() ? w : NULL;
}

/* A loss counted outside the buffers (replay cannot find it in them). */
static void pti_raw_counter(dt_pti_state *st, const char *name, uint64_t n)
{
    dt_raw_writer *w = pti_raw(st);
    if (w)
        dt_raw_counter(w, name, n);
}

/* Counts a loss in the session's field, and in the raw capture under the field's name. */
#define CF_COUNT_LOSS(st, field, n)     \
    do {                                \
        DT_COUNT((st)->s, field, n);    \
        pti_raw_counter(st, #field, n); \
    } while (0)

static void pti_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    dt_guard_pass pass;
    dt_pti_state *st = dt_guard_enter(&G.guard, &t_guard, &pass);
    *max_records = 0;
    uint8_t *b = pool_take();
    if (b) {
        *buffer = b;
        *size = G.buffer_size;
    } else {
        /* Refused; except that a library version that crashes on a refusal is lent a small
         * buffer whose records are dropped. */
        b = G.may_refuse ? NULL : overflow_new();
        *buffer = b;
        *size = b ? CF_OVERFLOW_SIZE : 0;
        if (!b && st)
            CF_COUNT_LOSS(st, refused_buffers, 1);
    }
    dt_guard_leave(&G.guard, &pass);
}

static void pti_clock_sample(dt_pti_state *st)
{
    uint64_t vendor, host;
    if (!G.api.get_timestamp ||
        dt_sample_vendor_clock(st->s, G.api.get_timestamp, st->desc->results.success, &vendor, &host) != 0)
        return;
    dt_raw_writer *w = pti_raw(st);
    if (w)
        dt_raw_clock(w, vendor, host);
}

/* From the completion callback: a clock sample at most every DT_CLOCK_SAMPLE_PERIOD_NS. */
static void pti_maybe_sample(dt_pti_state *st)
{
    if (G.api.get_timestamp && atomic_load_explicit(&st->accepting, memory_order_relaxed) &&
        dt_clock_sample_due(&st->last_sample_ns))
        pti_clock_sample(st);
}

static void pti_buffer_completed_common(uint8_t *buffer, size_t valid_size)
{
    if (!buffer)
        return;
    dt_guard_pass pass;
    dt_pti_state *st = dt_guard_enter(&G.guard, &t_guard, &pass);
    /* Before the walk: the records of this buffer ended before this sample, or at most a
     * sampling period after the last one (the MCPTI scanner bounds record times by them). */
    if (st)
        pti_maybe_sample(st);
    int idx = pool_index(buffer);
    if (idx >= 0) {
        if (valid_size > G.buffer_size) {
            if (st)
                CF_COUNT_LOSS(st, malformed_bytes, valid_size - G.buffer_size);
            valid_size = G.buffer_size;
        }
        if (st && valid_size) {
            int live = atomic_load(&st->accepting);
            dt_raw_writer *w = pti_raw(st);
            if (w)
                dt_raw_buffer_mode(w, live ? DT_RAW_BUFFER_DECODE : DT_RAW_BUFFER_OUT_OF_WINDOW, buffer, valid_size);
            dt_pti_walk_buffer(&st->dec, buffer, valid_size, live ? DT_PTI_WALK_DECODE : DT_PTI_WALK_OUT_OF_WINDOW,
                               NULL);
        }
        atomic_store(&G.busy[idx], 0);
    } else {
        pti_overflow *o = overflow_take(buffer);
        if (o) {
            if (valid_size > CF_OVERFLOW_SIZE)
                valid_size = CF_OVERFLOW_SIZE;
            if (st && valid_size) {
                dt_raw_writer *w = pti_raw(st);
                if (w)
                    dt_raw_buffer_mode(w, DT_RAW_BUFFER_POOL_FULL, buffer, valid_size);
                dt_pti_walk_buffer(&st->dec, buffer, valid_size, DT_PTI_WALK_POOL_FULL, NULL);
            }
            free(o);
        }
        /* else: not a buffer we lent; never touch it */
    }
    dt_guard_leave(&G.guard, &pass);
}

static void pti_buffer_completed(void *context, uint32_t stream, uint8_t *buffer, size_t size, size_t valid_size)
{
    (void)context, (void)stream, (void)size;
    pti_buffer_completed_common(buffer, valid_size);
}

static void pti_buffer_completed3(uint8_t *buffer, size_t size, size_t valid_size)
{
    (void)size;
    pti_buffer_completed_common(buffer, valid_size);
}

/* The callback-API subscriber: held so that a refusal (another tool holds it) is told;
 * no domain is enabled, so it is never called on the program's hot path. */
static void pti_subscriber(void *userdata, int domain, uint32_t cbid, const void *data)
{
    (void)userdata, (void)domain, (void)cbid, (void)data;
}

/* ---- binding (once per process) ---- */

static void pool_configure(void)
{
    uint64_t size = CF_DEFAULT_BUFFER_SIZE, count = CF_DEFAULT_BUFFER_COUNT, v;
    const char *es = getenv("DEVTRACE_BUFFER_SIZE"), *ec = getenv("DEVTRACE_BUFFER_COUNT");
    G.config_note[0] = '\0';
    if (es && *es) {
        if (dt_parse_u64(es, &v) == 0 && v >= CF_MIN_BUFFER_SIZE && v <= CF_MAX_BUFFER_SIZE)
            size = (v + 7) & ~(uint64_t)7;
        else
            snprintf(G.config_note, sizeof G.config_note,
                     "$DEVTRACE_BUFFER_SIZE=\"%s\" is not a byte count in [%u, %u]; using %u", es, CF_MIN_BUFFER_SIZE,
                     CF_MAX_BUFFER_SIZE, CF_DEFAULT_BUFFER_SIZE);
    }
    if (ec && *ec) {
        if (dt_parse_u64(ec, &v) == 0 && v >= 1 && v <= CF_MAX_BUFFER_COUNT)
            count = v;
        else
            snprintf(G.config_note + strlen(G.config_note), sizeof G.config_note - strlen(G.config_note),
                     "%s$DEVTRACE_BUFFER_COUNT=\"%s\" is not a count in [1, %u]; using %u",
                     G.config_note[0] ? "; " : "", ec, CF_MAX_BUFFER_COUNT, CF_DEFAULT_BUFFER_COUNT);
    }
    G.buffer_size = (size_t)size;
    G.buffer_count = (uint32_t)count;
    int bad;
    G.flush_timeout_ms = dt_flush_timeout_ms(&bad);
    if (bad)
        snprintf(G.config_note + strlen(G.config_note), sizeof G.config_note - strlen(G.config_note),
                 "%s$DEVTRACE_FLUSH_TIMEOUT_MS=\"%s\" is not a positive number of milliseconds; using %u",
                 G.config_note[0] ? "; " : "", getenv("DEVTRACE_FLUSH_TIMEOUT_MS"), DT_FLUSH_TIMEOUT_MS);
}

/* GetTimestamp for a library whose function returns the value (DT_PTI_QUIRK_TIMESTAMP_VALUE:
 * CNPAPI's uint64_t cnpapiGetTimestamp(void)), in the shape the clock sampling calls. */
static uint64_t (*pti_timestamp_value)(void);
static int pti_timestamp_by_value(uint64_t *timestamp)
{
    *timestamp = pti_timestamp_value();
    return G.desc->results.success;
}

/* Called with G.lock held. */
static int pti_bind(const dt_pti_descriptor *d, char *why, size_t whylen)
{
    dt_vlib_found f;
    pti_api api;
    if (!pti_find_library(d, &f, why, whylen) || pti_resolve(d, f.handle, f.path, &api, why, whylen) != 0)
        return -1;
    uint32_t version = 0;
    if (api.get_version && api.get_version(&version) != d->results.success)
        version = 0;
    if (!G.buffers) {
        pool_configure();
        G.buffers = calloc(G.buffer_count, sizeof *G.buffers);
        G.busy = calloc(G.buffer_count, sizeof *G.busy);
        if (!G.buffers || !G.busy) {
            free((void *)G.buffers);
            free((void *)G.busy);
            G.buffers = NULL;
            G.busy = NULL;
            snprintf(why, whylen, "out of memory for the buffer pool");
            return -1;
        }
    }
    G.api = api;
    if ((d->quirks & DT_PTI_QUIRK_TIMESTAMP_VALUE) && api.get_timestamp) {
        pti_timestamp_value = (uint64_t(*)(void))(pti_any_fn)api.get_timestamp;
        G.api.get_timestamp = pti_timestamp_by_value;
    }
    G.handle = f.handle;
    G.version = version;
    G.api_name = NULL;
    G.api_name_sym[0] = '\0';
    if (d->api_name_suffix) {
        static const size_t at_start = 0;
        dt_vlib_bind(f.handle, d->symbol_prefixes, &d->api_name_suffix, &at_start, 1, 0, &G.api_name, &G.api_name_sym,
                     NULL);
    }
    snprintf(G.path, sizeof G.path, "%s", f.path);
    G.may_refuse = d->refuse_from_version != UINT32_MAX && version >= d->refuse_from_version;
    G.desc = d;
    int rc;
    if (d->quirks & DT_PTI_QUIRK_COMPLETE_NO_CONTEXT) {
        /* Called through the library's own type, so that no function is ever called
         * through a pointer of another type (MSPTI: complete(buffer, size, validSize)). */
        int (*register3)(pti_request_fn, pti_complete3_fn) =
            (int (*)(pti_request_fn, pti_complete3_fn))(pti_any_fn)G.api.register_callbacks;
        rc = register3(pti_buffer_requested, pti_buffer_completed3);
    } else
        rc = G.api.register_callbacks(pti_buffer_requested, pti_buffer_completed);
    if (rc != d->results.success) {
        char text[256];
        pti_result_text(d, rc, text, sizeof text);
        snprintf(why, whylen, "%s in %s failed: %s", fn_name(&G.api, DT_PTI_REGISTER_CALLBACKS), G.path, text);
        G.desc = NULL;
        memset(&G.api, 0, sizeof G.api);
        return -1;
    }
    return 0;
}

/* ---- the dt_backend functions ---- */

int dt_pti_open(const dt_pti_descriptor *d, dt_session *s, void *state, devtrace_error *err)
{
    dt_pti_state *st = state;
    char why[1024];
    int code = DEVTRACE_EUNAVAILABLE;
    st->desc = d;
    st->s = s;
    pthread_mutex_lock(&G.lock);
    if (G.desc && G.desc != d) {
        snprintf(why, sizeof why,
                 "this process already traces through %s (%s); one vendor tracing library per "
                 "process (its callbacks cannot be unregistered)",
                 G.desc->name, G.path);
        goto fail;
    }
    if (atomic_load(&G.guard.active)) {
        snprintf(why, sizeof why,
                 "another devtrace session of this process is using %s; close it first (the "
                 "vendor's callbacks reach one session per process)",
                 d->vendor_api);
        code = DEVTRACE_ESTATE;
        goto fail;
    }
    if (!G.desc && pti_bind(d, why, sizeof why) != 0)
        goto fail;
    if (pti_check_usable(d, &G.api, G.path, why, sizeof why) != 0) {
        code = DEVTRACE_EVENDOR;
        goto fail;
    }
    dt_pti_decoder_init(&st->dec, d, s, G.version, G.api.get_next_record);
    dt_add_note(s, "%s: %s, API version %u; buffers %u x %zu bytes", d->name, G.path, G.version, G.buffer_count,
                G.buffer_size);
    if (st->dec.prefix_only)
        dt_add_note(s,
                    "%s: API version %u is outside the layouts we checked; records are decoded through their "
                    "common prefix (not validated for this version)",
                    d->name, G.version);
    if (G.config_note[0])
        dt_add_note(s, "%s", G.config_note);
    if (d->facts_note)
        dt_add_note(s, "%s: %s", d->name, d->facts_note);
    if (!G.api.push_external)
        dt_add_note(s, "external correlation unavailable: %s has no %s%s; device work is not linked to CPU ops", G.path,
                    pti_prefix(d), pti_fn_suffix[DT_PTI_PUSH_EXTERNAL]);
    if (!G.api.get_timestamp)
        dt_add_note(s, "%s has no %s%s: vendor timestamps are taken as host CLOCK_REALTIME", G.path, pti_prefix(d),
                    pti_fn_suffix[DT_PTI_GET_TIMESTAMP]);
    if (!G.api.get_dropped)
        dt_add_note(s, "%s has no %s%s: records the vendor drops cannot be counted", G.path, pti_prefix(d),
                    pti_fn_suffix[DT_PTI_GET_DROPPED]);
    if (G.api.subscribe) {
        void *sub = NULL;
        int rc = G.api.subscribe(&sub, pti_subscriber, NULL);
        if (rc == d->results.success) {
            st->subscriber = sub;
        } else {
            char text[256];
            pti_result_text(d, rc, text, sizeof text);
            dt_add_note(s, "%s refused: %s%s; activity tracing continues without the callback API",
                        fn_name(&G.api, DT_PTI_SUBSCRIBE), text,
                        rc == d->results.multiple_subscribers ? " (another tool holds the one subscriber slot)" : "");
        }
    }
    if (d->api_name_suffix && !G.api_name)
        dt_add_note(s,
                    "%s: %s has no %s%s: runtime names come from devtrace's %s table; ids it does not know are "
                    "shown as %s#<cbid>",
                    d->name, G.path, pti_prefix(d), d->api_name_suffix, d->vendor_api,
                    d->unknown_runtime_prefix ? d->unknown_runtime_prefix : "runtime");
    atomic_store(&st->accepting, 0);
    st->attached = 1;
    atomic_store(&G.guard.active, st);
    pthread_mutex_unlock(&G.lock);
    pti_raw_open(s, st);
    return 0;
fail:
    pthread_mutex_unlock(&G.lock);
    dt_error_set(err, code, "%s", why);
    return code;
}

/* Store visitor: the CPU operators (annotations) are not in the vendor's buffers. */
typedef struct pti_raw_ops_ctx {
    dt_session *s;
    dt_raw_writer *w;
} pti_raw_ops_ctx;

static void pti_raw_cpu_op(void *user, devtrace_event *ev)
{
    pti_raw_ops_ctx *c = user;
    if (ev->kind == DEVTRACE_KIND_CPU_OP)
        dt_raw_cpu_op(c->w, ev, dt_intern_get(&c->s->names, ev->name_id));
}

/* Completes the capture: what the trace depends on beyond the buffers (the session's
 * metadata, devices, notes, CPU operators and window), then closes the file. From the
 * session's on_stop (the window is closed by then) or from close. */
static void pti_raw_finish(dt_session *s, dt_pti_state *st)
{
    dt_raw_writer *w = atomic_exchange(&st->raw, NULL);
    if (!w)
        return;
    atomic_store(&st->dec.raw, NULL);
    /* A late buffer callback may still hold the writer: wait for it, boundedly (a library
     * whose flush never returned may hold one forever: then the writer is left open). */
    int quiet = !st->attached || pti_quiesce() == 0;
    if (st->raw_pid != (int)getpid())
        return; /* a forked child: the parent completes the file (every chunk was flushed) */
    uint64_t start, stop;
    pthread_mutex_lock(&s->lock);
    dt_raw_meta(w, s->rank, s->world_size, s->backend_name, s->validation, s->runtime_category);
    for (int i = 0; i < s->ndevices; i++)
        dt_raw_device(w, &s->devices[i]);
    for (int i = 0; i < s->nnotes; i++)
        dt_raw_note(w, s->notes[i]);
    start = s->window_start;
    stop = s->window_stop;
    pthread_mutex_unlock(&s->lock);
    pti_raw_ops_ctx ops = {s, w};
    dt_store_visit(&s->store, pti_raw_cpu_op, &ops);
    dt_raw_window(w, start, stop);
    devtrace_error err;
    if (!quiet)
        return; /* every chunk is flushed already; freeing the writer is what is not safe */
    if (dt_raw_close(w, &err) != 0)
        dt_add_note(s, "raw capture incomplete: %s", err.message);
}

static void pti_raw_on_stop(dt_session *s, void *user)
{
    dt_pti_state *st = user;
    pti_raw_finish(s, st);
    if (st->prev_on_stop)
        st->prev_on_stop(s, st->prev_on_stop_user);
}

/* The session's raw path (devtrace_config.raw_path, else $DEVTRACE_RAW): every
 * completed buffer, the strings its records point to, the clock samples and the
 * resolved names are saved as they come; the rest at on_stop. */
static void pti_raw_open(dt_session *s, dt_pti_state *st)
{
    const char *path = s->raw_path;
    if (!*path)
        return;
    devtrace_error err;
    dt_raw_writer *w = dt_raw_open(path, st->desc->name, G.version, &err);
    if (!w) {
        dt_add_note(s, "raw capture not written: %s", err.message);
        return;
    }
    dt_add_note(s, "raw capture: %s (replay it with 'devtrace replay %s -o TRACE.json')", path, path);
    st->raw_pid = (int)getpid();
    st->prev_on_stop = s->on_stop;
    st->prev_on_stop_user = s->on_stop_user;
    s->on_stop = pti_raw_on_stop;
    s->on_stop_user = st;
    atomic_store(&st->dec.raw, w);
    atomic_store(&st->raw, w);
}

/* Waits until no vendor callback is inside the engine (new ones see accepting == 0):
 * 0; -1 when one is still inside after the flush timeout (a stuck library). */
static int pti_quiesce(void)
{
    return dt_guard_quiesce(&G.guard, &G.lock, G.flush_timeout_ms ? G.flush_timeout_ms : 10000);
}

/* The vendor's names for every runtime cbid seen, after the final flush and disable:
 * never from a buffer callback (MACA 3.8.0's resolver deadlocks there). */
static void pti_resolve_api_names(dt_pti_state *st)
{
    dt_pti_decoder *d = &st->dec;
    if (!G.api_name)
        return;
    if (atomic_load(&G.flush_hung)) {
        dt_add_note(st->s,
                    "%s: %s not called: the library's flush never returned (the names from devtrace's table "
                    "stand)",
                    st->desc->name, G.api_name_sym);
        return;
    }
    for (uint32_t cbid = 0; cbid < DT_PTI_CBID_CACHE; cbid++) {
        if (!atomic_load_explicit(&d->cbid_name[cbid], memory_order_relaxed))
            continue;
        const char *name = NULL;
        if (G.api_name(st->desc->api_name_arg, cbid, &name) != st->desc->results.success || !name || !*name ||
            strlen(name) > 200)
            continue; /* the table's name, or the placeholder, stands */
        dt_raw_writer *w = pti_raw(st);
        if (w)
            dt_raw_api_name(w, st->desc->api_name_arg, cbid, name);
        dt_pti_apply_api_name(d, cbid, name);
    }
    uint64_t unresolved = 0;
    for (uint32_t i = 0; i < DT_PTI_CBID_CACHE / 32; i++)
        unresolved += (uint64_t)__builtin_popcount(atomic_load_explicit(&d->cbid_unresolved[i], memory_order_relaxed));
    if (unresolved)
        dt_add_note(st->s,
                    "%s: %llu runtime callback id(s) named neither by %s nor by devtrace's %s table: shown as "
                    "%s#<cbid>",
                    st->desc->name, (unsigned long long)unresolved, G.api_name_sym, st->desc->vendor_api,
                    st->desc->unknown_runtime_prefix ? st->desc->unknown_runtime_prefix : "runtime");
}

static int pti_enable(dt_pti_state *st, uint32_t kind, int *rc_out)
{
    int rc = G.api.enable((int)kind);
    *rc_out = rc;
    if (rc != st->desc->results.success)
        return -1;
    if (st->nenabled < DT_PTI_MAX_ENABLED)
        st->enabled[st->nenabled++] = (int)kind;
    return 0;
}

static int pti_enable_noted(dt_pti_state *st, uint32_t kind, int optional, int *failures)
{
    int rc;
    if (!kind || pti_enable(st, kind, &rc) == 0)
        return 0;
    char text[256];
    pti_result_text(st->desc, rc, text, sizeof text);
    const char *fix = result_fix(st->desc, rc);
    dt_add_note(st->s, "%s(%s) %s: %s%s%s", fn_name(&G.api, DT_PTI_ENABLE), kind_label(st->desc, kind),
                optional ? "refused (optional: not every library version has it)" : "failed", text, fix ? "; " : "",
                fix ? fix : "");
    if (!optional)
        (*failures)++;
    return -1;
}

/* The devtrace kind a vendor kind's records make (its layout's), DEVTRACE_KIND_NONE when
 * the descriptor has no layout for it. */
static int pti_devtrace_kind(const dt_pti_descriptor *d, uint32_t vendor_kind)
{
    for (size_t i = 0; i < d->nlayouts; i++)
        if (d->layouts[i].kind == vendor_kind)
            return d->layouts[i].dt_kind;
    return DEVTRACE_KIND_NONE;
}

int dt_pti_start(dt_session *s, void *state)
{
    dt_pti_state *st = state;
    const dt_pti_descriptor *d = st->desc;
    int failures = 0, rc;
    if (!st->attached)
        return DEVTRACE_ESTATE;
    /* Device properties first: the runtime calls they take must not be traced. */
    if (!t_in_vendor_init && !st->devices_done) {
        dt_pti_read_devices(st, G.handle, G.path);
        st->devices_done = 1;
    }
    atomic_store(&st->last_sample_ns, dt_monotonic_ns());
    pti_clock_sample(st);
    st->nenabled = 0;
    atomic_store(&st->accepting, 1);
    /* Only the kinds the session asks for (devtrace_config.kinds) are enabled. */
    int kernels = dt_session_wants(s, DEVTRACE_KIND_KERNEL);
    /* Kernels: CONCURRENT_KERNEL, else KERNEL (exclusive on some vendors). */
    if (!kernels) {
        /* not asked for */
    } else if (d->kinds.concurrent_kernel && pti_enable(st, d->kinds.concurrent_kernel, &rc) != 0) {
        char text[256];
        pti_result_text(d, rc, text, sizeof text);
        int rc2 = 0;
        if (d->kinds.kernel && pti_enable(st, d->kinds.kernel, &rc2) == 0) {
            if (!(d->quirks & DT_PTI_QUIRK_KERNEL_EXCLUSIVE) || rc != d->results.not_compatible)
                dt_add_note(s, "%s(CONCURRENT_KERNEL) failed (%s); KERNEL enabled instead (kernels serialised)",
                            fn_name(&G.api, DT_PTI_ENABLE), text);
        } else {
            dt_add_note(s, "%s(CONCURRENT_KERNEL) failed: %s", fn_name(&G.api, DT_PTI_ENABLE), text);
            failures++;
        }
    } else if (!d->kinds.concurrent_kernel) {
        pti_enable_noted(st, d->kinds.kernel, 0, &failures);
    }
    if (dt_session_wants(s, DEVTRACE_KIND_MEMCPY))
        pti_enable_noted(st, d->kinds.memcpy, 0, &failures);
    if (dt_session_wants(s, DEVTRACE_KIND_MEMSET))
        pti_enable_noted(st, d->kinds.memset, 0, &failures);
    if (dt_session_wants(s, DEVTRACE_KIND_EXTCORR))
        pti_enable_noted(st, d->kinds.external_correlation, 0, &failures);
    if (dt_session_wants(s, DEVTRACE_KIND_RUNTIME))
        pti_enable_noted(st, d->kinds.runtime, 0, &failures); /* runtime only while a session runs */
    int previous_on = 0;
    for (int i = 0; i < DT_PTI_MAX_MORE_KINDS && d->more_kinds[i].kind; i++) {
        if (d->more_kinds[i].fallback && previous_on)
            continue; /* the kind before it gives the same records */
        previous_on = dt_session_wants(s, pti_devtrace_kind(d, d->more_kinds[i].kind)) &&
                      pti_enable_noted(st, d->more_kinds[i].kind, d->more_kinds[i].optional, &failures) == 0;
    }
    return st->nenabled == 0 ? DEVTRACE_EVENDOR : 0;
}

/* FlushAll(1), forced; run with a deadline: a library whose flush never returns (a hung device)
 * must not hang the program at stop. Completion runs on the calling thread, no lock of ours held. */
static int pti_flush_forced(void *unused)
{
    (void)unused;
    if (G.desc->quirks & DT_PTI_QUIRK_FLUSH_NO_FLAG) {
        /* Called through the library's own type (CNPAPI: cnpapiActivityFlushAll(void)). */
        int (*flush0)(void) = (int (*)(void))(pti_any_fn)G.api.flush_all;
        return flush0();
    }
    return G.api.flush_all(1);
}

static void pti_flush(dt_pti_state *st)
{
    int rc;
    char what[80];
    snprintf(what, sizeof what, "%s(%s)", fn_name(&G.api, DT_PTI_FLUSH_ALL),
             G.desc->quirks & DT_PTI_QUIRK_FLUSH_NO_FLAG ? "" : "1");
    if (dt_flush_with_deadline(st->s, what, pti_flush_forced, NULL, G.flush_timeout_ms, &G.flush_hung, &rc) != 0)
        return;
    if (rc != st->desc->results.success) {
        char text[256];
        pti_result_text(st->desc, rc, text, sizeof text);
        dt_add_note(st->s, "%s(1) failed: %s", fn_name(&G.api, DT_PTI_FLUSH_ALL), text);
    }
}

int dt_pti_flush(dt_session *s, void *state)
{
    dt_pti_state *st = state;
    (void)s;
    if (!st->attached)
        return DEVTRACE_ESTATE;
    pti_flush(st);
    return 0;
}

int dt_pti_stop(dt_session *s, void *state)
{
    dt_pti_state *st = state;
    if (!st->attached)
        return DEVTRACE_ESTATE;
    pti_flush(st);
    for (int i = st->nenabled - 1; i >= 0; i--)
        G.api.disable(st->enabled[i]);
    st->nenabled = 0;
    if (!st->devices_done) {
        dt_pti_read_devices(st, G.handle, G.path); /* runtime kind is off: these calls are not traced */
        st->devices_done = 1;
    }
    pti_flush(st); /* records written between the first flush and the disable */
    if (G.api.get_dropped) {
        size_t dropped = 0;
        int rc;
        if (st->desc->quirks & DT_PTI_QUIRK_DROPPED_NO_CONTEXT)
            rc = ((int (*)(size_t *))(pti_any_fn)G.api.get_dropped)(&dropped);
        else
            rc = G.api.get_dropped(NULL, 0, &dropped);
        if (rc == st->desc->results.success && dropped)
            CF_COUNT_LOSS(st, dropped_vendor, dropped);
    }
    pti_clock_sample(st);
    atomic_store(&st->accepting, 0);
    if (pti_quiesce() != 0) /* buffers completing now are counted out of window, not stored */
        dt_add_note(s, "%s: a buffer callback was still running %llu ms after the flush; its events may be missing",
                    st->desc->name, (unsigned long long)(G.flush_timeout_ms ? G.flush_timeout_ms : 10000));
    pti_resolve_api_names(st);
    if (st->desc->finish)
        st->desc->finish(&st->dec);
    return 0;
}

int dt_pti_push_external(void *state, uint64_t id)
{
    dt_pti_state *st = state;
    if (!st || !st->attached || !G.api.push_external)
        return DEVTRACE_ENOTSUP;
    return G.api.push_external((int)st->desc->external_kind_custom0, id) == st->desc->results.success
               ? 0
               : DEVTRACE_EVENDOR;
}

int dt_pti_push_user_external(void *state, uint64_t id)
{
    dt_pti_state *st = state;
    if (!st || !st->attached || !G.api.push_external)
        return DEVTRACE_ENOTSUP;
    return G.api.push_external((int)st->desc->external_kind_custom0 + 1, id) == st->desc->results.success
               ? 0
               : DEVTRACE_EVENDOR;
}

int dt_pti_pop_user_external(void *state, uint64_t *id)
{
    dt_pti_state *st = state;
    uint64_t ignored;
    if (!st || !st->attached || !G.api.pop_external)
        return DEVTRACE_ENOTSUP;
    return G.api.pop_external((int)st->desc->external_kind_custom0 + 1, id ? id : &ignored) == st->desc->results.success
               ? 0
               : DEVTRACE_EVENDOR;
}

int dt_pti_pop_external(void *state, uint64_t *id)
{
    dt_pti_state *st = state;
    uint64_t ignored;
    if (!st || !st->attached || !G.api.pop_external)
        return DEVTRACE_ENOTSUP;
    return G.api.pop_external((int)st->desc->external_kind_custom0, id ? id : &ignored) == st->desc->results.success
               ? 0
               : DEVTRACE_EVENDOR;
}

void dt_pti_close(dt_session *s, void *state)
{
    (void)s;
    dt_pti_state *st = state;
    if (!st || !st->attached)
        return;
    if (atomic_load(&st->accepting))
        dt_pti_stop(s, st);
    if (st->subscriber && G.api.unsubscribe)
        G.api.unsubscribe(st->subscriber);
    st->subscriber = NULL;
    dt_guard_detach(&G.guard, &G.lock, st); /* after this, no callback uses st */
    st->attached = 0;
    if (s && s->on_stop == pti_raw_on_stop && s->on_stop_user == st) {
        s->on_stop = st->prev_on_stop;
        s->on_stop_user = st->prev_on_stop_user;
    }
    if (s)
        pti_raw_finish(s, st); /* a session closed before it stopped */
}
