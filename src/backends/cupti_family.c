/* cupti_family.c: the CUPTI-family engine (see cupti_family.h): finding and binding the
 * vendor library, the bounded buffer pool and the vendor's buffer callbacks, enabling
 * activity kinds, the record walker and decoders, device properties for occupancy,
 * and the tables shared by the CUDA-shaped vendors (layouts, memcpy kinds, the CUDA
 * runtime callback-id names). */
#include "cupti_family.h"
#include "cupti_decode.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "callback_guard.h"
#include "core/errors.h"
#include "core/raw.h"
#include "cupti_records.h"
#include "device_attrs.h"
#include "vendor_lib.h"

#define CF_DEFAULT_BUFFER_SIZE (1u << 20)
#define CF_DEFAULT_BUFFER_COUNT 64u
#define CF_MIN_BUFFER_SIZE 4096u
#define CF_MAX_BUFFER_SIZE (256u << 20)
#define CF_MAX_BUFFER_COUNT 4096u
#define CF_OVERFLOW_SIZE (64u << 10)   /* a buffer lent past the pool bound; its records are dropped */

/* CUDA device attribute numbers (driver_types.h, cudaDeviceAttr). */
enum {
    CF_ATTR_MAX_THREADS_PER_BLOCK = 1,
    CF_ATTR_MAX_SHARED_MEMORY_PER_BLOCK = 8,
    CF_ATTR_WARP_SIZE = 10,
    CF_ATTR_MAX_REGISTERS_PER_BLOCK = 12,
    CF_ATTR_MULTIPROCESSOR_COUNT = 16,
    CF_ATTR_MAX_THREADS_PER_MULTIPROCESSOR = 39,
    CF_ATTR_COMPUTE_CAPABILITY_MAJOR = 75,
    CF_ATTR_COMPUTE_CAPABILITY_MINOR = 76,
    CF_ATTR_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81,
    CF_ATTR_MAX_REGISTERS_PER_MULTIPROCESSOR = 82,
    CF_ATTR_MAX_BLOCKS_PER_MULTIPROCESSOR = 106,
};

typedef void (*cf_request_fn)(uint8_t **buffer, size_t *size, size_t *max_records);
typedef void (*cf_complete_fn)(void *context, uint32_t stream, uint8_t *buffer, size_t size, size_t valid_size);
typedef void (*cf_complete3_fn)(uint8_t *buffer, size_t size, size_t valid_size);
typedef void (*cf_callback_fn)(void *userdata, int domain, uint32_t cbid, const void *data);
typedef void (*cf_any_fn)(void);

/* The bound vendor functions, typed (NULL when absent). */
typedef struct cf_api {
    int (*get_version)(uint32_t *version);
    int (*get_result_string)(int result, const char **str);
    int (*get_error_message)(int result, const char **str);
    int (*register_callbacks)(cf_request_fn request, cf_complete_fn complete);
    int (*enable)(int kind);
    int (*disable)(int kind);
    int (*get_next_record)(uint8_t *buffer, size_t valid_size, void **record);
    int (*flush_all)(uint32_t flag);
    int (*get_dropped)(void *context, uint32_t stream, size_t *dropped);
    int (*push_external)(int kind, uint64_t id);
    int (*pop_external)(int kind, uint64_t *id);
    int (*get_timestamp)(uint64_t *timestamp);
    int (*subscribe)(void **subscriber, cf_callback_fn callback, void *userdata);
    int (*unsubscribe)(void *subscriber);
    char names[DT_CF_FN_COUNT][64]; /* the spelling each function was found under */
} cf_api;

static const size_t cf_api_offsets[DT_CF_FN_COUNT] = {
    offsetof(cf_api, get_version),   offsetof(cf_api, get_result_string), offsetof(cf_api, get_error_message),
    offsetof(cf_api, register_callbacks), offsetof(cf_api, enable),   offsetof(cf_api, disable),
    offsetof(cf_api, get_next_record), offsetof(cf_api, flush_all),   offsetof(cf_api, get_dropped),
    offsetof(cf_api, push_external), offsetof(cf_api, pop_external),  offsetof(cf_api, get_timestamp),
    offsetof(cf_api, subscribe),     offsetof(cf_api, unsubscribe),
};

static const char *const cf_fn_suffix[DT_CF_FN_COUNT] = {
#define DT_CF__FN_SUFFIX(id, suffix) suffix,
    DT_CF_FN_MAP(DT_CF__FN_SUFFIX)
#undef DT_CF__FN_SUFFIX
};

/* A buffer lent past the pool bound (to a library that must not be refused). */
typedef struct cf_overflow {
    struct cf_overflow *next;
    uint8_t *buffer; /* points into this allocation */
} cf_overflow;

/* The process's one engine: the bound library and its pool. Written under lock while
 * binding, before the callbacks are registered; read without a lock by the callbacks. */
static struct cf_engine {
    pthread_mutex_t lock; /* bind, attach, detach; never held across FlushAll */
    const dt_cf_descriptor *desc; /* bound descriptor; NULL: nothing bound yet */
    void *handle;
    char path[512];
    uint32_t version;
    cf_api api;
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
    cf_overflow *overflow; /* outstanding overflow buffers */
    /* The attached session (guard.active, a dt_cf_state), and the guard that lets close
     * wait for callbacks that may still be using it. */
    dt_callback_guard guard;
    uint64_t flush_timeout_ms; /* how long stop waits for FlushAll */
    _Atomic int flush_hung;    /* a FlushAll never returned: the library is stuck, no further flush */
} G = {.lock = PTHREAD_MUTEX_INITIALIZER, .overflow_lock = PTHREAD_MUTEX_INITIALIZER};

static _Thread_local int t_in_vendor_init;
static _Thread_local dt_guard_thread *t_guard; /* this thread's record in G.guard */

void dt_cf_set_in_vendor_init(int on)
{
    t_in_vendor_init = on;
}

_Static_assert(DT_CF_MAX_NAMES == DT_VLIB_MAX_NAMES, "a descriptor's name lists are vendor_lib.h's");

/* "CUPTI_ERROR_UNKNOWN (999): <message>", from the library's own strings when it has them. */
static void result_text(const cf_api *api, const dt_cf_descriptor *d, int rc, char *buf, size_t len)
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

static void cf_result_text(const dt_cf_descriptor *d, int rc, char *buf, size_t len)
{
    result_text(&G.api, d, rc, buf, len);
}

static const char *cf_prefix(const dt_cf_descriptor *d)
{
    return d->symbol_prefixes[0] ? d->symbol_prefixes[0] : "";
}

/* The name a bound function was found under ("cuptiActivityEnable"). */
static const char *fn_name(const cf_api *api, dt_cf_fn fn)
{
    return api->names[fn][0] ? api->names[fn] : cf_fn_suffix[fn];
}

/* ---- finding the library ---- */

/* Does the process itself have the vendor's register function? Only under the
 * vendor's own (first) spelling: a cupti* alias in a process is NVIDIA's CUPTI as likely
 * as another vendor's. */
static int has_register_symbol(void *handle, const void *user)
{
    const dt_cf_descriptor *d = user;
    char name[128];
    snprintf(name, sizeof name, "%s%s", cf_prefix(d), cf_fn_suffix[DT_CF_REGISTER_CALLBACKS]);
    return dlsym(handle, name) != NULL;
}

/* The descriptor's search (vendor_lib.h): a copy already loaded and the loader's search
 * go by system_names (not library_names: for CUDA-named vendors that would be NVIDIA's). */
static dt_vlib_search cf_search(const dt_cf_descriptor *d)
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

static void cf_not_found(const dt_cf_descriptor *d, const char *tried, char *why, size_t whylen)
{
    snprintf(why, whylen, "%s library not found; tried %s; set $%s to the library's path%s%s%s", d->vendor_api,
             tried, d->override_env ? d->override_env : "?", d->sdk_env[0] ? " or $" : "",
             d->sdk_env[0] ? d->sdk_env[0] : "", d->sdk_env[0] ? " to the SDK root" : "");
}

static int cf_find_library(const dt_cf_descriptor *d, dt_vlib_found *out, char *why, size_t whylen)
{
    char tried_buf[1024] = "";
    dt_text tried = {tried_buf, sizeof tried_buf, 0};
    dt_vlib_search q = cf_search(d);
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
    cf_not_found(d, tried_buf, why, whylen);
    return 0;
}

int dt_cf_locate_library(const dt_cf_descriptor *d, char *path, size_t pathlen, char *why, size_t whylen)
{
    char tried_buf[1024] = "";
    dt_text tried = {tried_buf, sizeof tried_buf, 0};
    dt_vlib_search q = cf_search(d);
    int found = dt_vlib_locate(&q, path, pathlen, &tried, why, whylen);
    if (found > 0)
        return 0;
    if (found == 0)
        cf_not_found(d, tried_buf, why, whylen);
    return -1;
}

/* Resolves every function in its spellings; 0, or -1 with the missing required ones. */
static int cf_resolve(const dt_cf_descriptor *d, void *handle, const char *path, cf_api *api, char *why,
                      size_t whylen)
{
    char missing_buf[768] = "";
    dt_text missing = {missing_buf, sizeof missing_buf, 0};
    unsigned required = d->required ? d->required : DT_CF_REQUIRED_DEFAULT;
    memset(api, 0, sizeof *api);
    int nmissing = dt_vlib_bind(handle, d->symbol_prefixes, cf_fn_suffix, cf_api_offsets, DT_CF_FN_COUNT, required,
                                api, api->names, &missing);
    if (nmissing) {
        snprintf(why, whylen, "%s in %s lacks the required symbol%s %s; it is not a usable %s library",
                 d->vendor_api, path, nmissing > 1 ? "s" : "", missing_buf, d->vendor_api);
        return -1;
    }
    return 0;
}

static const char *kind_label(const dt_cf_descriptor *d, uint32_t kind)
{
    const dt_cf_kinds *k = &d->kinds;
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
    for (int i = 0; i < DT_CF_MAX_MORE_KINDS && d->more_kinds[i].kind; i++)
        if (kind == d->more_kinds[i].kind)
            return d->more_kinds[i].name ? d->more_kinds[i].name : "?";
    return "?";
}

/* The known fix for a vendor result code, or NULL. */
static const char *result_fix(const dt_cf_descriptor *d, int rc)
{
    for (int i = 0; i < DT_CF_MAX_HINTS && d->result_hints[i].result; i++)
        if (d->result_hints[i].result == rc)
            return d->result_hints[i].fix;
    return NULL;
}

/* Can the library trace here? Enabling a harmless kind (external correlation: no record
 * appears unless an id is pushed) fails without a driver or device (CUDA 13.0 without a
 * driver: CUPTI_ERROR_UNKNOWN). */
static int cf_check_usable(const dt_cf_descriptor *d, const cf_api *api, const char *path, char *why, size_t whylen)
{
    uint32_t kind = d->usable_check_kind         ? d->usable_check_kind
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
        snprintf(why, whylen, "%s (%s, API version %u) cannot trace here: %s(%s) returned %s; %s",
                 d->vendor_api, path, version, fn_name(api, DT_CF_ENABLE), kind_label(d, kind), text,
                 fix ? fix : "is the driver installed and a device visible?");
        return -1;
    }
    api->disable((int)kind);
    return 0;
}

int dt_cf_probe(const dt_cf_descriptor *d, char *why, size_t whylen)
{
    pthread_mutex_lock(&G.lock);
    int bound = G.desc == d;
    pthread_mutex_unlock(&G.lock);
    if (bound) {
        snprintf(why, whylen, "bound to %s", G.path);
        return 1;
    }
    dt_vlib_found f;
    if (!cf_find_library(d, &f, why, whylen))
        return 0;
    cf_api api;
    if (cf_resolve(d, f.handle, f.path, &api, why, whylen) != 0)
        return 0; /* the handle stays loaded: unloading a vendor library is not safe */
    if (cf_check_usable(d, &api, f.path, why, whylen) != 0)
        return 0;
    snprintf(why, whylen, "%s", f.path);
    return 1;
}

unsigned dt_cf_symbols_found(const dt_cf_descriptor *d, char *path, size_t pathlen)
{
    dt_vlib_found f;
    char why[1024];
    unsigned found = 0;
    if (!cf_find_library(d, &f, why, sizeof why)) {
        snprintf(path, pathlen, "%s", why);
        return 0;
    }
    snprintf(path, pathlen, "%s", f.path);
    cf_api api;
    memset(&api, 0, sizeof api);
    dt_vlib_bind(f.handle, d->symbol_prefixes, cf_fn_suffix, cf_api_offsets, DT_CF_FN_COUNT, 0, &api, api.names, NULL);
    for (int fn = 0; fn < DT_CF_FN_COUNT; fn++)
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
    cf_overflow *o = malloc(sizeof(cf_overflow) + 16 + CF_OVERFLOW_SIZE);
    if (!o)
        return NULL;
    o->buffer = (uint8_t *)o + ((sizeof(cf_overflow) + 15) & ~(size_t)15);
    pthread_mutex_lock(&G.overflow_lock);
    o->next = G.overflow;
    G.overflow = o;
    pthread_mutex_unlock(&G.overflow_lock);
    return o->buffer;
}

/* Unlinks the overflow allocation holding b, or returns NULL when b is not one. */
static cf_overflow *overflow_take(const uint8_t *b)
{
    pthread_mutex_lock(&G.overflow_lock);
    cf_overflow **p = &G.overflow;
    while (*p && (*p)->buffer != b)
        p = &(*p)->next;
    cf_overflow *o = *p;
    if (o)
        *p = o->next;
    pthread_mutex_unlock(&G.overflow_lock);
    return o;
}

/* ---- raw capture ($DEVTRACE_RAW): what live collection saw, for replay ---- */

static void cf_raw_open(dt_session *s, dt_cf_state *st);
static int cf_quiesce(void);

static dt_raw_writer *cf_raw(dt_cf_state *st)
{
    dt_raw_writer *w = st ? atomic_load_explicit(&st->raw, memory_order_acquire) : NULL;
    return w && st->raw_pid == (int)getpid() ? w : NULL;
}

/* A loss counted outside the buffers (replay cannot find it in them). */
static void cf_raw_counter(dt_cf_state *st, const char *name, uint64_t n)
{
    dt_raw_writer *w = cf_raw(st);
    if (w)
        dt_raw_counter(w, name, n);
}

/* Counts a loss in the session's field, and in the raw capture under the field's name. */
#define CF_COUNT_LOSS(st, field, n)                                                      \
    do {                                                                                 \
        DT_COUNT((st)->s, field, n);                                                     \
        cf_raw_counter(st, #field, n);                                                   \
    } while (0)

static void cf_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    dt_guard_pass pass;
    dt_cf_state *st = dt_guard_enter(&G.guard, &t_guard, &pass);
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

static void cf_clock_sample(dt_cf_state *st)
{
    uint64_t vendor, host;
    if (!G.api.get_timestamp ||
        dt_sample_vendor_clock(st->s, G.api.get_timestamp, st->desc->results.success, &vendor, &host) != 0)
        return;
    dt_raw_writer *w = cf_raw(st);
    if (w)
        dt_raw_clock(w, vendor, host);
}

/* From the completion callback: a clock sample at most every DT_CLOCK_SAMPLE_PERIOD_NS. */
static void cf_maybe_sample(dt_cf_state *st)
{
    if (G.api.get_timestamp && atomic_load_explicit(&st->accepting, memory_order_relaxed) &&
        dt_clock_sample_due(&st->last_sample_ns))
        cf_clock_sample(st);
}

static void cf_buffer_completed_common(uint8_t *buffer, size_t valid_size)
{
    if (!buffer)
        return;
    dt_guard_pass pass;
    dt_cf_state *st = dt_guard_enter(&G.guard, &t_guard, &pass);
    int idx = pool_index(buffer);
    if (idx >= 0) {
        if (valid_size > G.buffer_size) {
            if (st)
                CF_COUNT_LOSS(st, malformed_bytes, valid_size - G.buffer_size);
            valid_size = G.buffer_size;
        }
        if (st && valid_size) {
            int live = atomic_load(&st->accepting);
            dt_raw_writer *w = cf_raw(st);
            if (w)
                dt_raw_buffer_mode(w, live ? DT_RAW_BUFFER_DECODE : DT_RAW_BUFFER_OUT_OF_WINDOW, buffer, valid_size);
            dt_cf_walk_buffer(&st->dec, buffer, valid_size, live ? DT_CF_WALK_DECODE : DT_CF_WALK_OUT_OF_WINDOW,
                              NULL);
        }
        atomic_store(&G.busy[idx], 0);
    } else {
        cf_overflow *o = overflow_take(buffer);
        if (o) {
            if (valid_size > CF_OVERFLOW_SIZE)
                valid_size = CF_OVERFLOW_SIZE;
            if (st && valid_size) {
                dt_raw_writer *w = cf_raw(st);
                if (w)
                    dt_raw_buffer_mode(w, DT_RAW_BUFFER_POOL_FULL, buffer, valid_size);
                dt_cf_walk_buffer(&st->dec, buffer, valid_size, DT_CF_WALK_POOL_FULL, NULL);
            }
            free(o);
        }
        /* else: not a buffer we lent; never touch it */
    }
    if (st)
        cf_maybe_sample(st);
    dt_guard_leave(&G.guard, &pass);
}

static void cf_buffer_completed(void *context, uint32_t stream, uint8_t *buffer, size_t size, size_t valid_size)
{
    (void)context, (void)stream, (void)size;
    cf_buffer_completed_common(buffer, valid_size);
}

static void cf_buffer_completed3(uint8_t *buffer, size_t size, size_t valid_size)
{
    (void)size;
    cf_buffer_completed_common(buffer, valid_size);
}

/* The callback-API subscriber: held so that a refusal (another tool holds it) is told;
 * no domain is enabled, so it is never called on the program's hot path. */
static void cf_subscriber(void *userdata, int domain, uint32_t cbid, const void *data)
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
                     "$DEVTRACE_BUFFER_SIZE=\"%s\" is not a byte count in [%u, %u]; using %u", es,
                     CF_MIN_BUFFER_SIZE, CF_MAX_BUFFER_SIZE, CF_DEFAULT_BUFFER_SIZE);
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

/* Called with G.lock held. */
static int cf_bind(const dt_cf_descriptor *d, char *why, size_t whylen)
{
    dt_vlib_found f;
    cf_api api;
    if (!cf_find_library(d, &f, why, whylen) || cf_resolve(d, f.handle, f.path, &api, why, whylen) != 0)
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
    if (d->quirks & DT_CF_QUIRK_COMPLETE_NO_CONTEXT) {
        /* Called through the library's own type, so that no function is ever called
         * through a pointer of another type (MSPTI: complete(buffer, size, validSize)). */
        int (*register3)(cf_request_fn, cf_complete3_fn) =
            (int (*)(cf_request_fn, cf_complete3_fn))(cf_any_fn)G.api.register_callbacks;
        rc = register3(cf_buffer_requested, cf_buffer_completed3);
    } else
        rc = G.api.register_callbacks(cf_buffer_requested, cf_buffer_completed);
    if (rc != d->results.success) {
        char text[256];
        cf_result_text(d, rc, text, sizeof text);
        snprintf(why, whylen, "%s in %s failed: %s", fn_name(&G.api, DT_CF_REGISTER_CALLBACKS), G.path,
                 text);
        G.desc = NULL;
        memset(&G.api, 0, sizeof G.api);
        return -1;
    }
    return 0;
}

/* ---- device properties (occupancy) ---- */

/* The CUDA attribute numbers (CF_ATTR_*) of each dt_device_props field. */
static const dt_device_attr cf_device_attrs[] = {
    {CF_ATTR_MAX_THREADS_PER_BLOCK, DT_DEV_MAX_THREADS_PER_BLOCK, 1},
    {CF_ATTR_MAX_SHARED_MEMORY_PER_BLOCK, DT_DEV_SMEM_PER_BLOCK, 0},
    {CF_ATTR_WARP_SIZE, DT_DEV_WARP_SIZE, 1},
    {CF_ATTR_MAX_REGISTERS_PER_BLOCK, DT_DEV_REGS_PER_BLOCK, 0},
    {CF_ATTR_MULTIPROCESSOR_COUNT, DT_DEV_NUM_SMS, 1},
    {CF_ATTR_MAX_THREADS_PER_MULTIPROCESSOR, DT_DEV_MAX_THREADS_PER_SM, 1},
    {CF_ATTR_COMPUTE_CAPABILITY_MAJOR, DT_DEV_COMPUTE_MAJOR, 0},
    {CF_ATTR_COMPUTE_CAPABILITY_MINOR, DT_DEV_COMPUTE_MINOR, 0},
    {CF_ATTR_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, DT_DEV_SMEM_PER_SM, 1},
    {CF_ATTR_MAX_REGISTERS_PER_MULTIPROCESSOR, DT_DEV_REGS_PER_SM, 1},
    {CF_ATTR_MAX_BLOCKS_PER_MULTIPROCESSOR, DT_DEV_MAX_BLOCKS_PER_SM, 1},
};

/* A vendor runtime function, in the process: global symbols, an already loaded runtime
 * library, then the tracing library itself (an emulator exports both). */
static cf_any_fn cf_runtime_symbol(const dt_cf_descriptor *d, const char *const *names, const char **found)
{
    void *sym = dt_vlib_runtime_symbol(names, d->runtime_libraries, G.handle, found);
    cf_any_fn fn = NULL;
    memcpy(&fn, &sym, sizeof fn);
    return fn;
}

static void cf_read_devices(dt_cf_state *st)
{
    const dt_cf_descriptor *d = st->desc;
    if (!d->attribute_fn[0])
        return; /* the vendor has no CUDA-style attribute query (its facts_note says so) */
    const char *attr_name = d->attribute_fn[0], *count_name = NULL;
    dt_attribute_query_fn attr = (dt_attribute_query_fn)cf_runtime_symbol(d, d->attribute_fn, &attr_name);
    if (!attr) {
        char names[256] = "", libs[256] = "";
        dt_text tn = {names, sizeof names, 0}, tl = {libs, sizeof libs, 0};
        int n = dt_vlib_names_count(d->attribute_fn);
        for (int i = 0; i < n; i++)
            dt_text_add(&tn, "%s%s", i ? (i == n - 1 ? " or " : ", ") : "", d->attribute_fn[i]);
        for (int i = 0; i < dt_vlib_names_count(d->runtime_libraries); i++)
            dt_text_add(&tl, ", %s", d->runtime_libraries[i]);
        dt_add_note(st->s, "occupancy unavailable: no %s in the process (its global symbols%s, %s); the trace has "
                    "no deviceProperties and no occupancy keys", names, libs, G.path);
        return;
    }
    dt_device_count_fn count = (dt_device_count_fn)cf_runtime_symbol(d, d->device_count_fn, &count_name);
    int n = dt_device_count(count);
    for (int dev = 0; dev < n; dev++) {
        dt_device_props p;
        int missing = dt_device_attrs_read(st->s, attr, attr_name, dev,
                                           d->device_name_prefix ? d->device_name_prefix : "device", cf_device_attrs,
                                           sizeof cf_device_attrs / sizeof cf_device_attrs[0], &p);
        p.has_occupancy = missing == 0 && p.warp_size > 0 && p.num_sms > 0 && p.max_threads_per_sm > 0;
        dt_add_device(st->s, &p);
    }
}

/* ---- the dt_backend functions ---- */

int dt_cf_open(const dt_cf_descriptor *d, dt_session *s, void *state, devtrace_error *err)
{
    dt_cf_state *st = state;
    char why[1024];
    int code = DEVTRACE_EUNAVAILABLE;
    st->desc = d;
    st->s = s;
    pthread_mutex_lock(&G.lock);
    if (G.desc && G.desc != d) {
        snprintf(why, sizeof why, "this process already traces through %s (%s); one vendor tracing library per "
                 "process (its callbacks cannot be unregistered)", G.desc->name, G.path);
        goto fail;
    }
    if (atomic_load(&G.guard.active)) {
        snprintf(why, sizeof why, "another devtrace session of this process is using %s; close it first (the "
                 "vendor's callbacks reach one session per process)", d->vendor_api);
        code = DEVTRACE_ESTATE;
        goto fail;
    }
    if (!G.desc && cf_bind(d, why, sizeof why) != 0)
        goto fail;
    if (cf_check_usable(d, &G.api, G.path, why, sizeof why) != 0) {
        code = DEVTRACE_EVENDOR;
        goto fail;
    }
    dt_cf_decoder_init(&st->dec, d, s, G.version, G.api.get_next_record);
    dt_add_note(s, "%s: %s, API version %u; buffers %u x %zu bytes", d->name, G.path, G.version, G.buffer_count,
                G.buffer_size);
    if (st->dec.prefix_only)
        dt_add_note(s, "%s: API version %u is outside the layouts we checked; records are decoded through their "
                    "common prefix (not validated for this version)", d->name, G.version);
    if (G.config_note[0])
        dt_add_note(s, "%s", G.config_note);
    if (d->facts_note)
        dt_add_note(s, "%s: %s", d->name, d->facts_note);
    if (!G.api.push_external)
        dt_add_note(s, "external correlation unavailable: %s has no %s%s; device work is not linked to CPU ops",
                    G.path, cf_prefix(d), cf_fn_suffix[DT_CF_PUSH_EXTERNAL]);
    if (!G.api.get_timestamp)
        dt_add_note(s, "%s has no %s%s: vendor timestamps are taken as host CLOCK_REALTIME", G.path, cf_prefix(d),
                    cf_fn_suffix[DT_CF_GET_TIMESTAMP]);
    if (!G.api.get_dropped)
        dt_add_note(s, "%s has no %s%s: records the vendor drops cannot be counted", G.path, cf_prefix(d),
                    cf_fn_suffix[DT_CF_GET_DROPPED]);
    if (G.api.subscribe) {
        void *sub = NULL;
        int rc = G.api.subscribe(&sub, cf_subscriber, NULL);
        if (rc == d->results.success) {
            st->subscriber = sub;
        } else {
            char text[256];
            cf_result_text(d, rc, text, sizeof text);
            dt_add_note(s, "%s refused: %s%s; activity tracing continues without the callback API",
                        fn_name(&G.api, DT_CF_SUBSCRIBE), text,
                        rc == d->results.multiple_subscribers ? " (another tool holds the one subscriber slot)" : "");
        }
    }
    if (d->api_name_suffix && !G.api_name)
        dt_add_note(s, "%s: %s has no %s%s: runtime names come from devtrace's %s table; ids it does not know are "
                    "shown as %s#<cbid>", d->name, G.path, cf_prefix(d), d->api_name_suffix, d->vendor_api,
                    d->unknown_runtime_prefix ? d->unknown_runtime_prefix : "runtime");
    atomic_store(&st->accepting, 0);
    st->attached = 1;
    atomic_store(&G.guard.active, st);
    pthread_mutex_unlock(&G.lock);
    cf_raw_open(s, st);
    return 0;
fail:
    pthread_mutex_unlock(&G.lock);
    dt_error_set(err, code, "%s", why);
    return code;
}

/* Store visitor: the CPU operators (annotations) are not in the vendor's buffers. */
typedef struct cf_raw_ops_ctx {
    dt_session *s;
    dt_raw_writer *w;
} cf_raw_ops_ctx;

static void cf_raw_cpu_op(void *user, devtrace_event *ev)
{
    cf_raw_ops_ctx *c = user;
    if (ev->kind == DEVTRACE_KIND_CPU_OP)
        dt_raw_cpu_op(c->w, ev, dt_intern_get(&c->s->names, ev->name_id));
}

/* Completes the capture: what the trace depends on beyond the buffers (the session's
 * metadata, devices, notes, CPU operators and window), then closes the file. From the
 * session's on_stop (the window is closed by then) or from close. */
static void cf_raw_finish(dt_session *s, dt_cf_state *st)
{
    dt_raw_writer *w = atomic_exchange(&st->raw, NULL);
    if (!w)
        return;
    atomic_store(&st->dec.raw, NULL);
    /* A late buffer callback may still hold the writer: wait for it, boundedly (a library
     * whose flush never returned may hold one forever: then the writer is left open). */
    int quiet = !st->attached || cf_quiesce() == 0;
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
    cf_raw_ops_ctx ops = {s, w};
    dt_store_visit(&s->store, cf_raw_cpu_op, &ops);
    dt_raw_window(w, start, stop);
    devtrace_error err;
    if (!quiet)
        return; /* every chunk is flushed already; freeing the writer is what is not safe */
    if (dt_raw_close(w, &err) != 0)
        dt_add_note(s, "raw capture incomplete: %s", err.message);
}

static void cf_raw_on_stop(dt_session *s, void *user)
{
    dt_cf_state *st = user;
    cf_raw_finish(s, st);
    if (st->prev_on_stop)
        st->prev_on_stop(s, st->prev_on_stop_user);
}

/* The session's raw path (devtrace_config.raw_path, else $DEVTRACE_RAW): every
 * completed buffer, the strings its records point to, the clock samples and the
 * resolved names are saved as they come; the rest at on_stop. */
static void cf_raw_open(dt_session *s, dt_cf_state *st)
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
    s->on_stop = cf_raw_on_stop;
    s->on_stop_user = st;
    atomic_store(&st->dec.raw, w);
    atomic_store(&st->raw, w);
}

/* Waits until no vendor callback is inside the engine (new ones see accepting == 0):
 * 0; -1 when one is still inside after the flush timeout (a stuck library). */
static int cf_quiesce(void)
{
    return dt_guard_quiesce(&G.guard, &G.lock, G.flush_timeout_ms ? G.flush_timeout_ms : 10000);
}

/* The vendor's names for every runtime cbid seen, after the final flush and disable:
 * never from a buffer callback (MACA 3.8.0's resolver deadlocks there). */
static void cf_resolve_api_names(dt_cf_state *st)
{
    dt_cf_decoder *d = &st->dec;
    if (!G.api_name)
        return;
    if (atomic_load(&G.flush_hung)) {
        dt_add_note(st->s, "%s: %s not called: the library's flush never returned (the names from devtrace's table "
                    "stand)", st->desc->name, G.api_name_sym);
        return;
    }
    for (uint32_t cbid = 0; cbid < DT_CF_CBID_CACHE; cbid++) {
        if (!atomic_load_explicit(&d->cbid_name[cbid], memory_order_relaxed))
            continue;
        const char *name = NULL;
        if (G.api_name(st->desc->api_name_arg, cbid, &name) != st->desc->results.success || !name || !*name ||
            strlen(name) > 200)
            continue; /* the table's name, or the placeholder, stands */
        dt_raw_writer *w = cf_raw(st);
        if (w)
            dt_raw_api_name(w, st->desc->api_name_arg, cbid, name);
        dt_cf_apply_api_name(d, cbid, name);
    }
    uint64_t unresolved = 0;
    for (uint32_t i = 0; i < DT_CF_CBID_CACHE / 32; i++)
        unresolved += (uint64_t)__builtin_popcount(atomic_load_explicit(&d->cbid_unresolved[i], memory_order_relaxed));
    if (unresolved)
        dt_add_note(st->s, "%s: %llu runtime callback id(s) named neither by %s nor by devtrace's %s table: shown as "
                    "%s#<cbid>", st->desc->name, (unsigned long long)unresolved, G.api_name_sym, st->desc->vendor_api,
                    st->desc->unknown_runtime_prefix ? st->desc->unknown_runtime_prefix : "runtime");
}

static int cf_enable(dt_cf_state *st, uint32_t kind, int *rc_out)
{
    int rc = G.api.enable((int)kind);
    *rc_out = rc;
    if (rc != st->desc->results.success)
        return -1;
    if (st->nenabled < DT_CF_MAX_ENABLED)
        st->enabled[st->nenabled++] = (int)kind;
    return 0;
}

static void cf_enable_noted(dt_cf_state *st, uint32_t kind, int optional, int *failures)
{
    int rc;
    if (!kind || cf_enable(st, kind, &rc) == 0)
        return;
    char text[256];
    cf_result_text(st->desc, rc, text, sizeof text);
    const char *fix = result_fix(st->desc, rc);
    dt_add_note(st->s, "%s(%s) %s: %s%s%s", fn_name(&G.api, DT_CF_ENABLE), kind_label(st->desc, kind),
                optional ? "refused (optional: not every library version has it)" : "failed", text,
                fix ? "; " : "", fix ? fix : "");
    if (!optional)
        (*failures)++;
}

int dt_cf_start(dt_session *s, void *state)
{
    dt_cf_state *st = state;
    const dt_cf_descriptor *d = st->desc;
    int failures = 0, rc;
    if (!st->attached)
        return DEVTRACE_ESTATE;
    /* Device properties first: the runtime calls they take must not be traced. */
    if (!t_in_vendor_init && !st->devices_done) {
        cf_read_devices(st);
        st->devices_done = 1;
    }
    atomic_store(&st->last_sample_ns, dt_monotonic_ns());
    cf_clock_sample(st);
    st->nenabled = 0;
    atomic_store(&st->accepting, 1);
    /* Kernels: CONCURRENT_KERNEL, else KERNEL (exclusive on some vendors). */
    if (d->kinds.concurrent_kernel && cf_enable(st, d->kinds.concurrent_kernel, &rc) != 0) {
        char text[256];
        cf_result_text(d, rc, text, sizeof text);
        int rc2 = 0;
        if (d->kinds.kernel && cf_enable(st, d->kinds.kernel, &rc2) == 0) {
            if (!(d->quirks & DT_CF_QUIRK_KERNEL_EXCLUSIVE) || rc != d->results.not_compatible)
                dt_add_note(s, "%s(CONCURRENT_KERNEL) failed (%s); KERNEL enabled instead (kernels serialised)",
                            fn_name(&G.api, DT_CF_ENABLE), text);
        } else {
            dt_add_note(s, "%s(CONCURRENT_KERNEL) failed: %s", fn_name(&G.api, DT_CF_ENABLE), text);
            failures++;
        }
    } else if (!d->kinds.concurrent_kernel) {
        cf_enable_noted(st, d->kinds.kernel, 0, &failures);
    }
    cf_enable_noted(st, d->kinds.memcpy, 0, &failures);
    cf_enable_noted(st, d->kinds.memset, 0, &failures);
    cf_enable_noted(st, d->kinds.external_correlation, 0, &failures);
    cf_enable_noted(st, d->kinds.runtime, 0, &failures); /* runtime only while a session runs */
    for (int i = 0; i < DT_CF_MAX_MORE_KINDS && d->more_kinds[i].kind; i++)
        cf_enable_noted(st, d->more_kinds[i].kind, d->more_kinds[i].optional, &failures);
    return st->nenabled == 0 ? DEVTRACE_EVENDOR : 0;
}

/* FlushAll(1), forced; run with a deadline: a library whose flush never returns (a hung device)
 * must not hang the program at stop. Completion runs on the calling thread, no lock of ours held. */
static int cf_flush_forced(void *unused)
{
    (void)unused;
    return G.api.flush_all(1);
}

static void cf_flush(dt_cf_state *st)
{
    int rc;
    char what[80];
    snprintf(what, sizeof what, "%s(1)", fn_name(&G.api, DT_CF_FLUSH_ALL));
    if (dt_flush_with_deadline(st->s, what, cf_flush_forced, NULL, G.flush_timeout_ms, &G.flush_hung, &rc) != 0)
        return;
    if (rc != st->desc->results.success) {
        char text[256];
        cf_result_text(st->desc, rc, text, sizeof text);
        dt_add_note(st->s, "%s(1) failed: %s", fn_name(&G.api, DT_CF_FLUSH_ALL), text);
    }
}

int dt_cf_stop(dt_session *s, void *state)
{
    dt_cf_state *st = state;
    if (!st->attached)
        return DEVTRACE_ESTATE;
    cf_flush(st);
    for (int i = st->nenabled - 1; i >= 0; i--)
        G.api.disable(st->enabled[i]);
    st->nenabled = 0;
    if (!st->devices_done) {
        cf_read_devices(st); /* runtime kind is off: these calls are not traced */
        st->devices_done = 1;
    }
    cf_flush(st); /* records written between the first flush and the disable */
    if (G.api.get_dropped) {
        size_t dropped = 0;
        int rc;
        if (st->desc->quirks & DT_CF_QUIRK_DROPPED_NO_CONTEXT)
            rc = ((int (*)(size_t *))(cf_any_fn)G.api.get_dropped)(&dropped);
        else
            rc = G.api.get_dropped(NULL, 0, &dropped);
        if (rc == st->desc->results.success && dropped)
            CF_COUNT_LOSS(st, dropped_vendor, dropped);
    }
    cf_clock_sample(st);
    atomic_store(&st->accepting, 0);
    if (cf_quiesce() != 0) /* buffers completing now are counted out of window, not stored */
        dt_add_note(s, "%s: a buffer callback was still running %llu ms after the flush; its events may be missing",
                    st->desc->name, (unsigned long long)(G.flush_timeout_ms ? G.flush_timeout_ms : 10000));
    cf_resolve_api_names(st);
    if (st->desc->finish)
        st->desc->finish(&st->dec);
    return 0;
}

int dt_cf_push_external(void *state, uint64_t id)
{
    dt_cf_state *st = state;
    if (!st || !st->attached || !G.api.push_external)
        return DEVTRACE_ENOTSUP;
    return G.api.push_external((int)st->desc->external_kind_custom0, id) == st->desc->results.success
               ? 0
               : DEVTRACE_EVENDOR;
}

int dt_cf_pop_external(void *state, uint64_t *id)
{
    dt_cf_state *st = state;
    uint64_t ignored;
    if (!st || !st->attached || !G.api.pop_external)
        return DEVTRACE_ENOTSUP;
    return G.api.pop_external((int)st->desc->external_kind_custom0, id ? id : &ignored) ==
                   st->desc->results.success
               ? 0
               : DEVTRACE_EVENDOR;
}

void dt_cf_close(dt_session *s, void *state)
{
    (void)s;
    dt_cf_state *st = state;
    if (!st || !st->attached)
        return;
    if (atomic_load(&st->accepting))
        dt_cf_stop(s, st);
    if (st->subscriber && G.api.unsubscribe)
        G.api.unsubscribe(st->subscriber);
    st->subscriber = NULL;
    dt_guard_detach(&G.guard, &G.lock, st); /* after this, no callback uses st */
    st->attached = 0;
    if (s && s->on_stop == cf_raw_on_stop && s->on_stop_user == st) {
        s->on_stop = st->prev_on_stop;
        s->on_stop_user = st->prev_on_stop_user;
    }
    if (s)
        cf_raw_finish(s, st); /* a session closed before it stopped */
}

/* ---- descriptors by name (replay) ---- */

static const dt_cf_descriptor *_Atomic cf_descriptors[32];

void dt_cf_register_descriptor(const dt_cf_descriptor *d)
{
    for (size_t i = 0; i < sizeof cf_descriptors / sizeof cf_descriptors[0]; i++) {
        const dt_cf_descriptor *expected = NULL;
        if (atomic_load(&cf_descriptors[i]) == d || atomic_compare_exchange_strong(&cf_descriptors[i], &expected, d))
            return;
    }
}

const dt_cf_descriptor *dt_cf_descriptor_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof cf_descriptors / sizeof cf_descriptors[0]; i++) {
        const dt_cf_descriptor *d = atomic_load(&cf_descriptors[i]);
        if (d && strcmp(d->name, name) == 0)
            return d;
    }
    return NULL;
}

/* ---- decoding ---- */

void dt_cf_decoder_init(dt_cf_decoder *d, const dt_cf_descriptor *desc, dt_session *s, uint32_t version,
                        dt_cf_next_fn next)
{
    memset(d, 0, sizeof *d);
    d->desc = desc;
    d->s = s;
    d->version = version;
    d->next = next;
    for (size_t i = 0; i < desc->nlayouts; i++) {
        const dt_cf_layout *l = &desc->layouts[i];
        if (l->kind >= DT_CF_MAX_KIND)
            continue;
        const dt_cf_layout *cur = d->by_kind[l->kind];
        int exact = version >= l->min_version && version <= l->max_version;
        int cur_exact = cur && version >= cur->min_version && version <= cur->max_version;
        if (cur_exact)
            continue;
        if (!exact && cur) {
            /* Neither matches: keep the layout whose version range is nearest. */
            uint64_t dl = version > l->max_version ? version - l->max_version : l->min_version - version;
            uint64_t dc = version > cur->max_version ? version - cur->max_version : cur->min_version - version;
            if (dl >= dc)
                continue;
        }
        d->by_kind[l->kind] = l;
    }
    for (uint32_t k = 0; k < DT_CF_MAX_KIND; k++) {
        const dt_cf_layout *l = d->by_kind[k];
        if (!l)
            continue;
        int exact = version >= l->min_version && version <= l->max_version;
        d->check_size[k] = exact ? l->size : l->read_size;
        if (!exact)
            d->prefix_only = 1;
    }
    d->unnamed_kernel_id = s ? dt_session_intern(s, "(unnamed kernel)") : 0;
}

static uint32_t read_u32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

#define CF_MAX_SKIP_SIZE (1u << 16)

/* The learned size of a kind without a layout, or 0. */
static uint32_t skip_size(dt_cf_decoder *d, uint32_t kind)
{
    for (int i = 0; i < DT_CF_SKIP_KINDS; i++) {
        uint64_t e = atomic_load_explicit(&d->skip_sizes[i], memory_order_relaxed);
        if (!e)
            return 0;
        if ((uint32_t)(e >> 32) == kind)
            return (uint32_t)e;
    }
    return 0;
}

int dt_cf_learn_kind_size(dt_cf_decoder *d, uint32_t kind, uint32_t size)
{
    if (size < 4 || size > CF_MAX_SKIP_SIZE || (kind < DT_CF_MAX_KIND && d->by_kind[kind]))
        return 0;
    uint64_t e = (uint64_t)kind << 32 | size;
    for (int i = 0; i < DT_CF_SKIP_KINDS; i++) {
        uint64_t expected = 0;
        if (atomic_compare_exchange_strong(&d->skip_sizes[i], &expected, e))
            return 1;
        if ((uint32_t)(expected >> 32) == kind)
            return 0; /* known (the first size seen stands) */
    }
    return 0;
}

void dt_cf_decoder_init_offline(dt_cf_decoder *d, const dt_cf_descriptor *desc, dt_session *s, uint32_t version,
                                const char *(*resolve_string)(void *user, uint64_t pointer), void *user)
{
    dt_cf_decoder_init(d, desc, s, version, NULL);
    d->resolve_string = resolve_string;
    d->resolve_user = user;
}

dt_cf_taken dt_cf_take_record(dt_cf_decoder *d, const uint8_t *rec, size_t avail, dt_cf_walk_mode mode,
                              dt_cf_walk_counts *c)
{
    return dt_cf_take_record_inline(d, rec, avail, mode, c);
}

void dt_cf_commit_counts(dt_cf_decoder *d, dt_cf_walk_counts *c)
{
    dt_store_run_close(&c->cursor);
    if (c->malformed)
        DT_COUNT(d->s, malformed_records, c->malformed);
    if (c->zero_time)
        DT_COUNT(d->s, zero_timestamp, c->zero_time);
}

enum { CF_ASK, CF_NEXT, CF_END };

/* The step from the record at prev, when the layouts make it certain: CF_NEXT with *next
 * where the library's iterator would go (prev's kind and the next record's kind were both
 * seen to step by their layouts' sizes, and the next record fits), CF_END where it would
 * report the end of the buffer (MAX_LIMIT_REACHED), CF_ASK otherwise: the library steps. */
static inline int cf_stride(const dt_cf_decoder *d, uintptr_t prev, uintptr_t hi, uintptr_t *next)
{
    uint32_t kind = read_u32((const uint8_t *)prev);
    uint32_t size = kind < DT_CF_MAX_KIND ? atomic_load_explicit(&d->stride_size[kind], memory_order_relaxed) : 0;
    if (!size)
        return CF_ASK;
    uintptr_t q = prev + size;
    if (q == hi)
        return CF_END;
    if (q > hi || hi - q < 4)
        return CF_ASK;
    uint32_t k2 = read_u32((const uint8_t *)q);
    size = k2 < DT_CF_MAX_KIND ? atomic_load_explicit(&d->stride_size[k2], memory_order_relaxed) : 0;
    if (!size || hi - q < size)
        return CF_ASK;
    *next = q;
    return CF_NEXT;
}

/* The library stepped from prev to p: when prev's kind has a layout for this version, the
 * step says whether that kind can be stepped by its size from now on. */
static void cf_learn_stride(dt_cf_decoder *d, uintptr_t prev, uintptr_t p)
{
    uint32_t kind = read_u32((const uint8_t *)prev);
    if (kind >= DT_CF_MAX_KIND || !d->by_kind[kind] ||
        atomic_load_explicit(&d->stride[kind], memory_order_relaxed) != DT_CF_STRIDE_UNSEEN)
        return;
    const dt_cf_layout *l = d->by_kind[kind];
    if (d->check_size[kind] != l->size)
        return; /* decoded by a prefix: the size is not this version's */
    uint8_t expected = DT_CF_STRIDE_UNSEEN;
    uint8_t verdict = p - prev == l->size ? DT_CF_STRIDE_OK : DT_CF_STRIDE_NO;
    if (!atomic_compare_exchange_strong(&d->stride[kind], &expected, verdict))
        return;
    if (verdict == DT_CF_STRIDE_OK)
        atomic_store_explicit(&d->stride_size[kind], l->size, memory_order_relaxed);
    else
        dt_add_note(d->s,
                    "%s's record iterator stepped %llu bytes over a %s record (kind %u), whose layout has %u: "
                    "records of that kind are stepped by the library's iterator only",
                    d->desc->vendor_api, (unsigned long long)(p - prev), l->name, kind, l->size);
}

void dt_cf_walk_buffer(dt_cf_decoder *d, uint8_t *buf, size_t valid_size, dt_cf_walk_mode mode,
                       dt_cf_walk_counts *counts)
{
    const dt_cf_descriptor *desc = d->desc;
    dt_cf_walk_counts c = {0};
    if (desc->scan) {
        desc->scan(d, buf, valid_size, mode, &c); /* the vendor's own scanner (iterator not trusted) */
        goto end;
    }
    if (!d->next) {
        /* Offline (replay): no vendor iterator; stride by the layouts' record sizes, as
         * the vendor's iterator does. An unknown kind or a short record ends the buffer. */
        size_t off = 0;
        while (off < valid_size) {
            uint32_t kind = valid_size - off >= 4 ? read_u32(buf + off) : 0;
            dt_cf_taken t = dt_cf_take_record_inline(d, buf + off, valid_size - off, mode, &c);
            uint32_t step = t == DT_CF_TAKEN_UNKNOWN_KIND ? skip_size(d, kind)
                            : t == DT_CF_TAKEN_TRUNCATED   ? 0
                                                           : d->by_kind[kind]->size;
            if (!step)
                break; /* a kind the live iterator never stepped over, or a short record */
            off += step;
        }
        goto end;
    }
    uintptr_t lo = (uintptr_t)buf, hi = lo + valid_size, prev = 0, unknown_at = 0;
    uint32_t unknown_kind = 0;
    void *rec = NULL;
    for (;;) {
        uintptr_t p = 0;
        int step = prev && !d->iterator_only ? cf_stride(d, prev, hi, &p) : CF_ASK;
        if (step == CF_END)
            break;
        if (step == CF_ASK) {
            int rc = d->next(buf, valid_size, &rec);
            if (rc != desc->results.success) {
                if (rc != desc->results.max_limit_reached && !(desc->quirks & DT_CF_QUIRK_ANY_ERROR_ENDS))
                    c.malformed++; /* an incomplete or invalid record: the rest is unreadable */
                break;
            }
            if (!rec) {
                if (!(desc->quirks & DT_CF_QUIRK_NULL_RECORD_ENDS))
                    c.malformed++;
                break;
            }
            p = (uintptr_t)rec;
            if (p < lo || p >= hi || (prev && p <= prev)) {
                c.malformed++; /* outside the valid bytes, or not advancing: stop before looping */
                break;
            }
            if (prev && !d->iterator_only)
                cf_learn_stride(d, prev, p);
        } else {
            rec = (void *)p; /* where the library would have stepped: its next call starts here */
        }
        prev = p;
        if (unknown_at) {
            /* the iterator stepped over a kind we have no layout for: its size, for replay */
            dt_raw_writer *w = atomic_load_explicit(&d->raw, memory_order_acquire);
            if (dt_cf_learn_kind_size(d, unknown_kind, (uint32_t)(p - unknown_at)) && w)
                dt_raw_kind_size(w, unknown_kind, (uint32_t)(p - unknown_at));
            unknown_at = 0;
        }
        /* An unknown kind is skipped (the vendor's iterator knows its size); a record that
         * does not fit in the valid bytes ends the buffer. */
        dt_cf_taken t = dt_cf_take_record_inline(d, (const uint8_t *)rec, hi - p, mode, &c);
        if (t == DT_CF_TAKEN_TRUNCATED)
            break;
        if (t == DT_CF_TAKEN_UNKNOWN_KIND && p - lo <= UINT32_MAX) {
            unknown_at = p;
            unknown_kind = read_u32((const uint8_t *)rec);
        }
    }
end:
    dt_cf_commit_counts(d, &c);
    if (counts)
        *counts = c;
}

/* Writes "<prefix>#<cbid>" without formatting functions. */
static void unknown_name(char *out, size_t len, const char *prefix, uint32_t cbid)
{
    char digits[16];
    int n = 0;
    do {
        digits[n++] = (char)('0' + cbid % 10);
        cbid /= 10;
    } while (cbid);
    size_t used = 0, plen = strlen(prefix);
    if (plen > len - 18)
        plen = len - 18;
    memcpy(out, prefix, plen);
    used = plen;
    out[used++] = '#';
    while (n)
        out[used++] = digits[--n];
    out[used] = '\0';
}

static const char *lookup_cbid(const dt_cf_descriptor *desc, uint32_t cbid)
{
    size_t lo = 0, hi = desc->nruntime_names;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (desc->runtime_names[mid].cbid == cbid)
            return desc->runtime_names[mid].name;
        if (desc->runtime_names[mid].cbid < cbid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* First sight of a cbid in this session: intern its name (once per distinct id). */
uint32_t dt_cf_runtime_name_slow(dt_cf_decoder *d, uint32_t cbid)
{
    const char *name = lookup_cbid(d->desc, cbid);
    char buf[96];
    if (!name) {
        unknown_name(buf, sizeof buf, d->desc->unknown_runtime_prefix ? d->desc->unknown_runtime_prefix : "runtime",
                     cbid);
        name = buf;
    }
    uint32_t id = dt_session_intern(d->s, name), expected = 0;
    /* The thread that fills the slot counts the unresolved name: once per distinct id. */
    if (cbid < DT_CF_CBID_CACHE && id && atomic_compare_exchange_strong(&d->cbid_name[cbid], &expected, id) &&
        name == buf) {
        DT_COUNT(d->s, unresolved_names, 1);
        atomic_fetch_or(&d->cbid_unresolved[cbid / 32], 1u << (cbid % 32));
    }
    return id;
}

uint32_t dt_cf_runtime_name(dt_cf_decoder *d, uint32_t cbid)
{
    return dt_cf_runtime_name_inline(d, cbid);
}

uint32_t dt_cf_vendor_string(dt_cf_decoder *d, const char *p)
{
    if (!p)
        return 0;
    if (d->resolve_string) {
        const char *s = d->resolve_string(d->resolve_user, (uint64_t)(uintptr_t)p);
        return s ? dt_session_intern(d->s, s) : 0;
    }
    dt_raw_writer *w = atomic_load_explicit(&d->raw, memory_order_acquire);
    if (w)
        dt_raw_string(w, (uint64_t)(uintptr_t)p, p);
    return dt_intern_ptr(&d->s->names, p);
}

uint32_t dt_cf_vendor_string_miss(dt_cf_decoder *d, dt_cf_name_cache *nc, const char *p)
{
    uint32_t id = dt_cf_vendor_string(d, p);
    if (id) {
        unsigned slot = dt_cf_name_slot(p);
        nc->ptr[slot] = p;
        nc->id[slot] = id;
    }
    return id;
}

typedef struct cf_rename {
    uint32_t cbid, from, to;
} cf_rename;

static void rename_runtime_events(void *user, devtrace_event *ev)
{
    const cf_rename *r = user;
    if (ev->kind == DEVTRACE_KIND_RUNTIME && (ev->flags & DEVTRACE_EVENT_HAS_CBID) && ev->u.runtime.cbid == r->cbid &&
        ev->name_id == r->from)
        ev->name_id = r->to;
}

void dt_cf_apply_api_name(dt_cf_decoder *d, uint32_t cbid, const char *name)
{
    if (cbid >= DT_CF_CBID_CACHE || !name || !*name)
        return;
    uint32_t id = dt_session_intern(d->s, name);
    if (!id)
        return;
    uint32_t old = atomic_exchange(&d->cbid_name[cbid], id);
    uint32_t bit = 1u << (cbid % 32);
    if (atomic_fetch_and(&d->cbid_unresolved[cbid / 32], ~bit) & bit)
        __atomic_fetch_sub(&d->s->stats.unresolved_names, 1, __ATOMIC_RELAXED);
    if (old && old != id) {
        cf_rename r = {cbid, old, id};
        dt_store_visit(&d->s->store, rename_runtime_events, &r);
    }
}

dt_cf_decoded dt_cf_decode_cupti_kernel(dt_cf_decoder *d, const uint8_t *rec, devtrace_event *ev)
{
    return dt_cf_cupti_kernel(d, rec, ev, NULL);
}

dt_cf_decoded dt_cf_decode_cupti_memcpy(dt_cf_decoder *d, const uint8_t *rec, devtrace_event *ev)
{
    return dt_cf_cupti_memcpy(d, rec, ev);
}

dt_cf_decoded dt_cf_decode_cupti_memset(dt_cf_decoder *d, const uint8_t *rec, devtrace_event *ev)
{
    return dt_cf_cupti_memset(d, rec, ev);
}

dt_cf_decoded dt_cf_decode_cupti_api(dt_cf_decoder *d, const uint8_t *rec, devtrace_event *ev)
{
    return dt_cf_cupti_api(d, rec, ev);
}

dt_cf_decoded dt_cf_decode_cupti_external(dt_cf_decoder *d, const uint8_t *rec, devtrace_event *ev)
{
    return dt_cf_cupti_external(d, rec, ev);
}

dt_cf_decoded dt_cf_decode_mspti_kernel(dt_cf_decoder *d, const uint8_t *rec, devtrace_event *ev)
{
    return dt_cf_mspti_kernel(d, rec, ev, NULL);
}

dt_cf_decoded dt_cf_decode_mspti_memcpy(dt_cf_decoder *d, const uint8_t *rec, devtrace_event *ev)
{
    dt_mspti_memcpy m;
    memcpy(&m, rec, sizeof m);
    dt_cf_decoded r = dt_cf_mspti_span_valid(m.start, m.end);
    if (r != DT_CF_EMIT)
        return r;
    dt_cf_set_span(ev, DEVTRACE_KIND_MEMCPY, m.start, m.end, m.correlation_id, m.device_id, m.stream_id);
    ev->u.memcpy.bytes = m.bytes;
    ev->u.memcpy.direction = dt_cf_copy_direction(d, m.copy_kind);
    return DT_CF_EMIT;
}

dt_cf_decoded dt_cf_decode_mspti_memset(dt_cf_decoder *d, const uint8_t *rec, devtrace_event *ev)
{
    (void)d;
    dt_mspti_memset m;
    memcpy(&m, rec, sizeof m);
    dt_cf_decoded r = dt_cf_mspti_span_valid(m.start, m.end);
    if (r != DT_CF_EMIT)
        return r;
    dt_cf_set_span(ev, DEVTRACE_KIND_MEMSET, m.start, m.end, m.correlation_id, m.device_id, m.stream_id);
    ev->u.memset.bytes = m.bytes;
    ev->u.memset.value = m.value;
    return DT_CF_EMIT;
}

dt_cf_decoded dt_cf_decode_mspti_api(dt_cf_decoder *d, const uint8_t *rec, devtrace_event *ev)
{
    return dt_cf_mspti_api(d, rec, ev, NULL);
}

dt_cf_decoded dt_cf_decode_mspti_external(dt_cf_decoder *d, const uint8_t *rec, devtrace_event *ev)
{
    dt_mspti_external_correlation x;
    memcpy(&x, rec, sizeof x);
    return dt_cf_external(d, x.external_kind, x.correlation_id, x.external_id, ev);
}

/* ---- replay: a raw capture's buffers through the same decoders (raw.h) ---- */

typedef struct cf_replay {
    dt_cf_decoder dec;
    uint64_t *keys; /* pointer values (open addressing; 0 = empty) */
    char **vals;    /* owned NUL-terminated copies */
    size_t mask, count;
    uint8_t *copy; /* the buffer being walked: writable, aligned */
    size_t copy_cap;
} cf_replay;

static size_t replay_slot(const cf_replay *r, uint64_t key)
{
    size_t i = (size_t)(key * 0x9E3779B97F4A7C15ull >> 17) & r->mask;
    while (r->keys[i] && r->keys[i] != key)
        i = (i + 1) & r->mask;
    return i;
}

static const char *replay_resolve(void *user, uint64_t pointer)
{
    cf_replay *r = user;
    if (!pointer || !r->keys)
        return NULL;
    size_t i = replay_slot(r, pointer);
    return r->keys[i] ? r->vals[i] : NULL;
}

static void *replay_open(dt_session *s, const char *vendor, uint32_t api_version, devtrace_error *err)
{
    const dt_cf_descriptor *desc = dt_cf_descriptor_find(vendor);
    if (!desc) {
        dt_error_set(err, DEVTRACE_EUNKNOWN_BACKEND, "no CUPTI-family backend named \"%s\" is compiled into this "
                     "devtrace; decode it as another with --backend NAME (see 'devtrace list')", vendor);
        return NULL;
    }
    cf_replay *r = calloc(1, sizeof *r);
    if (!r) {
        dt_error_set(err, DEVTRACE_ENOMEM, "out of memory");
        return NULL;
    }
    dt_cf_decoder_init_offline(&r->dec, desc, s, api_version, replay_resolve, r);
    return r;
}

static int replay_grow(cf_replay *r)
{
    size_t cap = r->mask ? (r->mask + 1) * 2 : 256;
    uint64_t *keys = calloc(cap, sizeof *keys);
    char **vals = calloc(cap, sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return -1;
    }
    cf_replay old = *r;
    r->keys = keys;
    r->vals = vals;
    r->mask = cap - 1;
    for (size_t i = 0; old.keys && i <= old.mask; i++)
        if (old.keys[i]) {
            size_t j = replay_slot(r, old.keys[i]);
            r->keys[j] = old.keys[i];
            r->vals[j] = old.vals[i];
        }
    free(old.keys);
    free(old.vals);
    return 0;
}

static void replay_string(void *st, uint64_t pointer, const char *text, uint32_t len)
{
    cf_replay *r = st;
    if (!pointer || ((r->count + 1) * 2 > r->mask && replay_grow(r) != 0))
        return;
    size_t i = replay_slot(r, pointer);
    if (r->keys[i])
        return; /* the first capture of a pointer stands, as in the writer */
    char *copy = malloc((size_t)len + 1);
    if (!copy)
        return;
    memcpy(copy, text, len);
    copy[len] = '\0';
    r->keys[i] = pointer;
    r->vals[i] = copy;
    r->count++;
}

static void replay_kind_size(void *st, uint32_t kind, uint32_t size)
{
    cf_replay *r = st;
    dt_cf_learn_kind_size(&r->dec, kind, size);
}

static void replay_buffer(void *st, uint32_t mode, const uint8_t *data, size_t valid_size)
{
    cf_replay *r = st;
    if (mode > DT_RAW_BUFFER_POOL_FULL) {
        DT_COUNT(r->dec.s, malformed_bytes, valid_size); /* a mode this devtrace does not know */
        return;
    }
    if (valid_size > r->copy_cap) {
        uint8_t *b = realloc(r->copy, valid_size);
        if (!b) {
            DT_COUNT(r->dec.s, malformed_bytes, valid_size);
            return;
        }
        r->copy = b;
        r->copy_cap = valid_size;
    }
    if (valid_size)
        memcpy(r->copy, data, valid_size);
    dt_cf_walk_mode walk = mode == DT_RAW_BUFFER_DECODE        ? DT_CF_WALK_DECODE
                           : mode == DT_RAW_BUFFER_OUT_OF_WINDOW ? DT_CF_WALK_OUT_OF_WINDOW
                                                                 : DT_CF_WALK_POOL_FULL;
    if (valid_size)
        dt_cf_walk_buffer(&r->dec, r->copy, valid_size, walk, NULL);
}

static void replay_api_name(void *st, uint32_t domain, uint32_t cbid, const char *name, uint32_t len)
{
    cf_replay *r = st;
    char copy[256];
    (void)domain;
    if (len == 0 || len >= sizeof copy)
        return;
    memcpy(copy, name, len);
    copy[len] = '\0';
    if (memchr(copy, '\0', len))
        return;
    dt_cf_apply_api_name(&r->dec, cbid, copy);
}

static void replay_close(void *st)
{
    cf_replay *r = st;
    if (!r)
        return;
    for (size_t i = 0; r->keys && i <= r->mask; i++)
        free(r->vals[i]);
    free(r->keys);
    free(r->vals);
    free(r->copy);
    free(r);
}

static int replay_same_records(const char *vendor_a, const char *vendor_b)
{
    const dt_cf_descriptor *a = dt_cf_descriptor_find(vendor_a), *b = dt_cf_descriptor_find(vendor_b);
    if (!a || !b)
        return -1;
    return a->layouts == b->layouts && a->nlayouts == b->nlayouts && memcmp(&a->kinds, &b->kinds, sizeof a->kinds) == 0;
}

const dt_raw_decoder dt_cf_raw_decoder = {
    .engine = "CUPTI family",
    .open = replay_open,
    .string = replay_string,
    .kind_size = replay_kind_size,
    .buffer = replay_buffer,
    .api_name = replay_api_name,
    .close = replay_close,
    .same_records = replay_same_records,
};

/* ---- tables of the CUDA-shaped vendors ---- */

/* CUPTI API versions (cupti_version.h): 19 = CUDA 12.0 ... 28 = 12.9 Update 1; from CUDA
 * 13.0 the format is xxyyzz (130000, 130001). CUDA 13.1 (1301zz) adds Kernel11, which
 * falls back to Kernel10's checked prefix. */
#define CF_CUDA12_FIRST 19u
#define CF_CUDA12_LAST 129999u
#define CF_CUDA130_FIRST 130000u
#define CF_CUDA130_LAST 130099u

const dt_cf_layout dt_cf_cupti_layouts[DT_CF_CUPTI_NLAYOUTS] = {
    {10, CF_CUDA12_FIRST, CF_CUDA12_LAST, sizeof(dt_cupti_kernel9), sizeof(dt_cupti_kernel_prefix),
     DEVTRACE_KIND_KERNEL, dt_cf_decode_cupti_kernel, "CUpti_ActivityKernel9"},
    {10, CF_CUDA130_FIRST, CF_CUDA130_LAST, sizeof(dt_cupti_kernel10), sizeof(dt_cupti_kernel_prefix),
     DEVTRACE_KIND_KERNEL, dt_cf_decode_cupti_kernel, "CUpti_ActivityKernel10"},
    {3, CF_CUDA12_FIRST, CF_CUDA12_LAST, sizeof(dt_cupti_kernel9), sizeof(dt_cupti_kernel_prefix),
     DEVTRACE_KIND_KERNEL, dt_cf_decode_cupti_kernel, "CUpti_ActivityKernel9"},
    {3, CF_CUDA130_FIRST, CF_CUDA130_LAST, sizeof(dt_cupti_kernel10), sizeof(dt_cupti_kernel_prefix),
     DEVTRACE_KIND_KERNEL, dt_cf_decode_cupti_kernel, "CUpti_ActivityKernel10"},
    {1, CF_CUDA12_FIRST, CF_CUDA12_LAST, sizeof(dt_cupti_memcpy5), sizeof(dt_cupti_memcpy_prefix),
     DEVTRACE_KIND_MEMCPY, dt_cf_decode_cupti_memcpy, "CUpti_ActivityMemcpy5"},
    {1, CF_CUDA130_FIRST, CF_CUDA130_LAST, sizeof(dt_cupti_memcpy6), sizeof(dt_cupti_memcpy_prefix),
     DEVTRACE_KIND_MEMCPY, dt_cf_decode_cupti_memcpy, "CUpti_ActivityMemcpy6"},
    {2, CF_CUDA12_FIRST, CF_CUDA130_LAST, sizeof(dt_cupti_memset4), offsetof(dt_cupti_memset4, tail),
     DEVTRACE_KIND_MEMSET, dt_cf_decode_cupti_memset, "CUpti_ActivityMemset4"},
    {5, 0, UINT32_MAX, sizeof(dt_cupti_api), sizeof(dt_cupti_api), DEVTRACE_KIND_RUNTIME, dt_cf_decode_cupti_api,
     "CUpti_ActivityAPI"},
    {4, 0, UINT32_MAX, sizeof(dt_cupti_api), sizeof(dt_cupti_api), DEVTRACE_KIND_RUNTIME, dt_cf_decode_cupti_api,
     "CUpti_ActivityAPI"},
    {39, 0, UINT32_MAX, sizeof(dt_cupti_external_correlation), sizeof(dt_cupti_external_correlation),
     DEVTRACE_KIND_EXTCORR, dt_cf_decode_cupti_external, "CUpti_ActivityExternalCorrelation"},
};

/* CUpti_ActivityMemcpyKind: UNKNOWN 0, HTOD 1, DTOH 2, HTOA 3, ATOH 4, ATOA 5, ATOD 6,
 * DTOA 7, DTOD 8, HTOH 9, PTOP 10 (arrays live on the device). */
const uint8_t dt_cf_cupti_copy_kinds[DT_CF_CUPTI_NCOPY_KINDS] = {
    DEVTRACE_COPY_UNKNOWN, DEVTRACE_COPY_HTOD, DEVTRACE_COPY_DTOH, DEVTRACE_COPY_HTOD,
    DEVTRACE_COPY_DTOH,    DEVTRACE_COPY_DTOD, DEVTRACE_COPY_DTOD, DEVTRACE_COPY_DTOD,
    DEVTRACE_COPY_DTOD,    DEVTRACE_COPY_HTOH, DEVTRACE_COPY_DTOD,
};

/* The CUDA runtime's callback ids, CUPTI_RUNTIME_TRACE_CBID_* of cupti_runtime_cbid.h in
 * CUDA 13.0 (1..522), written as {cbid, the function's name without its _vNNNNN suffix}. */
const dt_cf_cbid_name dt_cf_cuda_runtime_names[DT_CF_CUDA_NRUNTIME_NAMES] = {
    {1, "cudaDriverGetVersion"}, {2, "cudaRuntimeGetVersion"}, {3, "cudaGetDeviceCount"},
    {4, "cudaGetDeviceProperties"}, {5, "cudaChooseDevice"}, {6, "cudaGetChannelDesc"},
    {7, "cudaCreateChannelDesc"}, {8, "cudaConfigureCall"}, {9, "cudaSetupArgument"}, {10, "cudaGetLastError"},
    {11, "cudaPeekAtLastError"}, {12, "cudaGetErrorString"}, {13, "cudaLaunch"}, {14, "cudaFuncSetCacheConfig"},
    {15, "cudaFuncGetAttributes"}, {16, "cudaSetDevice"}, {17, "cudaGetDevice"}, {18, "cudaSetValidDevices"},
    {19, "cudaSetDeviceFlags"}, {20, "cudaMalloc"}, {21, "cudaMallocPitch"}, {22, "cudaFree"},
    {23, "cudaMallocArray"}, {24, "cudaFreeArray"}, {25, "cudaMallocHost"}, {26, "cudaFreeHost"},
    {27, "cudaHostAlloc"}, {28, "cudaHostGetDevicePointer"}, {29, "cudaHostGetFlags"}, {30, "cudaMemGetInfo"},
    {31, "cudaMemcpy"}, {32, "cudaMemcpy2D"}, {33, "cudaMemcpyToArray"}, {34, "cudaMemcpy2DToArray"},
    {35, "cudaMemcpyFromArray"}, {36, "cudaMemcpy2DFromArray"}, {37, "cudaMemcpyArrayToArray"},
    {38, "cudaMemcpy2DArrayToArray"}, {39, "cudaMemcpyToSymbol"}, {40, "cudaMemcpyFromSymbol"},
    {41, "cudaMemcpyAsync"}, {42, "cudaMemcpyToArrayAsync"}, {43, "cudaMemcpyFromArrayAsync"},
    {44, "cudaMemcpy2DAsync"}, {45, "cudaMemcpy2DToArrayAsync"}, {46, "cudaMemcpy2DFromArrayAsync"},
    {47, "cudaMemcpyToSymbolAsync"}, {48, "cudaMemcpyFromSymbolAsync"}, {49, "cudaMemset"}, {50, "cudaMemset2D"},
    {51, "cudaMemsetAsync"}, {52, "cudaMemset2DAsync"}, {53, "cudaGetSymbolAddress"}, {54, "cudaGetSymbolSize"},
    {55, "cudaBindTexture"}, {56, "cudaBindTexture2D"}, {57, "cudaBindTextureToArray"}, {58, "cudaUnbindTexture"},
    {59, "cudaGetTextureAlignmentOffset"}, {60, "cudaGetTextureReference"}, {61, "cudaBindSurfaceToArray"},
    {62, "cudaGetSurfaceReference"}, {63, "cudaGLSetGLDevice"}, {64, "cudaGLRegisterBufferObject"},
    {65, "cudaGLMapBufferObject"}, {66, "cudaGLUnmapBufferObject"}, {67, "cudaGLUnregisterBufferObject"},
    {68, "cudaGLSetBufferObjectMapFlags"}, {69, "cudaGLMapBufferObjectAsync"}, {70, "cudaGLUnmapBufferObjectAsync"},
    {71, "cudaWGLGetDevice"}, {72, "cudaGraphicsGLRegisterImage"}, {73, "cudaGraphicsGLRegisterBuffer"},
    {74, "cudaGraphicsUnregisterResource"}, {75, "cudaGraphicsResourceSetMapFlags"},
    {76, "cudaGraphicsMapResources"}, {77, "cudaGraphicsUnmapResources"},
    {78, "cudaGraphicsResourceGetMappedPointer"}, {79, "cudaGraphicsSubResourceGetMappedArray"},
    {80, "cudaVDPAUGetDevice"}, {81, "cudaVDPAUSetVDPAUDevice"}, {82, "cudaGraphicsVDPAURegisterVideoSurface"},
    {83, "cudaGraphicsVDPAURegisterOutputSurface"}, {84, "cudaD3D11GetDevice"}, {85, "cudaD3D11GetDevices"},
    {86, "cudaD3D11SetDirect3DDevice"}, {87, "cudaGraphicsD3D11RegisterResource"}, {88, "cudaD3D10GetDevice"},
    {89, "cudaD3D10GetDevices"}, {90, "cudaD3D10SetDirect3DDevice"}, {91, "cudaGraphicsD3D10RegisterResource"},
    {92, "cudaD3D10RegisterResource"}, {93, "cudaD3D10UnregisterResource"}, {94, "cudaD3D10MapResources"},
    {95, "cudaD3D10UnmapResources"}, {96, "cudaD3D10ResourceSetMapFlags"},
    {97, "cudaD3D10ResourceGetSurfaceDimensions"}, {98, "cudaD3D10ResourceGetMappedArray"},
    {99, "cudaD3D10ResourceGetMappedPointer"}, {100, "cudaD3D10ResourceGetMappedSize"},
    {101, "cudaD3D10ResourceGetMappedPitch"}, {102, "cudaD3D9GetDevice"}, {103, "cudaD3D9GetDevices"},
    {104, "cudaD3D9SetDirect3DDevice"}, {105, "cudaD3D9GetDirect3DDevice"},
    {106, "cudaGraphicsD3D9RegisterResource"}, {107, "cudaD3D9RegisterResource"},
    {108, "cudaD3D9UnregisterResource"}, {109, "cudaD3D9MapResources"}, {110, "cudaD3D9UnmapResources"},
    {111, "cudaD3D9ResourceSetMapFlags"}, {112, "cudaD3D9ResourceGetSurfaceDimensions"},
    {113, "cudaD3D9ResourceGetMappedArray"}, {114, "cudaD3D9ResourceGetMappedPointer"},
    {115, "cudaD3D9ResourceGetMappedSize"}, {116, "cudaD3D9ResourceGetMappedPitch"}, {117, "cudaD3D9Begin"},
    {118, "cudaD3D9End"}, {119, "cudaD3D9RegisterVertexBuffer"}, {120, "cudaD3D9UnregisterVertexBuffer"},
    {121, "cudaD3D9MapVertexBuffer"}, {122, "cudaD3D9UnmapVertexBuffer"}, {123, "cudaThreadExit"},
    {124, "cudaSetDoubleForDevice"}, {125, "cudaSetDoubleForHost"}, {126, "cudaThreadSynchronize"},
    {127, "cudaThreadGetLimit"}, {128, "cudaThreadSetLimit"}, {129, "cudaStreamCreate"}, {130, "cudaStreamDestroy"},
    {131, "cudaStreamSynchronize"}, {132, "cudaStreamQuery"}, {133, "cudaEventCreate"},
    {134, "cudaEventCreateWithFlags"}, {135, "cudaEventRecord"}, {136, "cudaEventDestroy"},
    {137, "cudaEventSynchronize"}, {138, "cudaEventQuery"}, {139, "cudaEventElapsedTime"}, {140, "cudaMalloc3D"},
    {141, "cudaMalloc3DArray"}, {142, "cudaMemset3D"}, {143, "cudaMemset3DAsync"}, {144, "cudaMemcpy3D"},
    {145, "cudaMemcpy3DAsync"}, {146, "cudaThreadSetCacheConfig"}, {147, "cudaStreamWaitEvent"},
    {148, "cudaD3D11GetDirect3DDevice"}, {149, "cudaD3D10GetDirect3DDevice"}, {150, "cudaThreadGetCacheConfig"},
    {151, "cudaPointerGetAttributes"}, {152, "cudaHostRegister"}, {153, "cudaHostUnregister"},
    {154, "cudaDeviceCanAccessPeer"}, {155, "cudaDeviceEnablePeerAccess"}, {156, "cudaDeviceDisablePeerAccess"},
    {157, "cudaPeerRegister"}, {158, "cudaPeerUnregister"}, {159, "cudaPeerGetDevicePointer"},
    {160, "cudaMemcpyPeer"}, {161, "cudaMemcpyPeerAsync"}, {162, "cudaMemcpy3DPeer"},
    {163, "cudaMemcpy3DPeerAsync"}, {164, "cudaDeviceReset"}, {165, "cudaDeviceSynchronize"},
    {166, "cudaDeviceGetLimit"}, {167, "cudaDeviceSetLimit"}, {168, "cudaDeviceGetCacheConfig"},
    {169, "cudaDeviceSetCacheConfig"}, {170, "cudaProfilerInitialize"}, {171, "cudaProfilerStart"},
    {172, "cudaProfilerStop"}, {173, "cudaDeviceGetByPCIBusId"}, {174, "cudaDeviceGetPCIBusId"},
    {175, "cudaGLGetDevices"}, {176, "cudaIpcGetEventHandle"}, {177, "cudaIpcOpenEventHandle"},
    {178, "cudaIpcGetMemHandle"}, {179, "cudaIpcOpenMemHandle"}, {180, "cudaIpcCloseMemHandle"},
    {181, "cudaArrayGetInfo"}, {182, "cudaFuncSetSharedMemConfig"}, {183, "cudaDeviceGetSharedMemConfig"},
    {184, "cudaDeviceSetSharedMemConfig"}, {185, "cudaCreateTextureObject"}, {186, "cudaDestroyTextureObject"},
    {187, "cudaGetTextureObjectResourceDesc"}, {188, "cudaGetTextureObjectTextureDesc"},
    {189, "cudaCreateSurfaceObject"}, {190, "cudaDestroySurfaceObject"}, {191, "cudaGetSurfaceObjectResourceDesc"},
    {192, "cudaMallocMipmappedArray"}, {193, "cudaGetMipmappedArrayLevel"}, {194, "cudaFreeMipmappedArray"},
    {195, "cudaBindTextureToMipmappedArray"}, {196, "cudaGraphicsResourceGetMappedMipmappedArray"},
    {197, "cudaStreamAddCallback"}, {198, "cudaStreamCreateWithFlags"},
    {199, "cudaGetTextureObjectResourceViewDesc"}, {200, "cudaDeviceGetAttribute"}, {201, "cudaStreamDestroy"},
    {202, "cudaStreamCreateWithPriority"}, {203, "cudaStreamGetPriority"}, {204, "cudaStreamGetFlags"},
    {205, "cudaDeviceGetStreamPriorityRange"}, {206, "cudaMallocManaged"},
    {207, "cudaOccupancyMaxActiveBlocksPerMultiprocessor"}, {208, "cudaStreamAttachMemAsync"},
    {209, "cudaGetErrorName"}, {210, "cudaOccupancyMaxActiveBlocksPerMultiprocessor"}, {211, "cudaLaunchKernel"},
    {212, "cudaGetDeviceFlags"}, {213, "cudaLaunch_ptsz"}, {214, "cudaLaunchKernel_ptsz"}, {215, "cudaMemcpy_ptds"},
    {216, "cudaMemcpy2D_ptds"}, {217, "cudaMemcpyToArray_ptds"}, {218, "cudaMemcpy2DToArray_ptds"},
    {219, "cudaMemcpyFromArray_ptds"}, {220, "cudaMemcpy2DFromArray_ptds"}, {221, "cudaMemcpyArrayToArray_ptds"},
    {222, "cudaMemcpy2DArrayToArray_ptds"}, {223, "cudaMemcpyToSymbol_ptds"}, {224, "cudaMemcpyFromSymbol_ptds"},
    {225, "cudaMemcpyAsync_ptsz"}, {226, "cudaMemcpyToArrayAsync_ptsz"}, {227, "cudaMemcpyFromArrayAsync_ptsz"},
    {228, "cudaMemcpy2DAsync_ptsz"}, {229, "cudaMemcpy2DToArrayAsync_ptsz"},
    {230, "cudaMemcpy2DFromArrayAsync_ptsz"}, {231, "cudaMemcpyToSymbolAsync_ptsz"},
    {232, "cudaMemcpyFromSymbolAsync_ptsz"}, {233, "cudaMemset_ptds"}, {234, "cudaMemset2D_ptds"},
    {235, "cudaMemsetAsync_ptsz"}, {236, "cudaMemset2DAsync_ptsz"}, {237, "cudaStreamGetPriority_ptsz"},
    {238, "cudaStreamGetFlags_ptsz"}, {239, "cudaStreamSynchronize_ptsz"}, {240, "cudaStreamQuery_ptsz"},
    {241, "cudaStreamAttachMemAsync_ptsz"}, {242, "cudaEventRecord_ptsz"}, {243, "cudaMemset3D_ptds"},
    {244, "cudaMemset3DAsync_ptsz"}, {245, "cudaMemcpy3D_ptds"}, {246, "cudaMemcpy3DAsync_ptsz"},
    {247, "cudaStreamWaitEvent_ptsz"}, {248, "cudaStreamAddCallback_ptsz"}, {249, "cudaMemcpy3DPeer_ptds"},
    {250, "cudaMemcpy3DPeerAsync_ptsz"}, {251, "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags"},
    {252, "cudaMemPrefetchAsync"}, {253, "cudaMemPrefetchAsync_ptsz"}, {254, "cudaMemAdvise"},
    {255, "cudaDeviceGetP2PAttribute"}, {256, "cudaGraphicsEGLRegisterImage"},
    {257, "cudaEGLStreamConsumerConnect"}, {258, "cudaEGLStreamConsumerDisconnect"},
    {259, "cudaEGLStreamConsumerAcquireFrame"}, {260, "cudaEGLStreamConsumerReleaseFrame"},
    {261, "cudaEGLStreamProducerConnect"}, {262, "cudaEGLStreamProducerDisconnect"},
    {263, "cudaEGLStreamProducerPresentFrame"}, {264, "cudaEGLStreamProducerReturnFrame"},
    {265, "cudaGraphicsResourceGetMappedEglFrame"}, {266, "cudaMemRangeGetAttribute"},
    {267, "cudaMemRangeGetAttributes"}, {268, "cudaEGLStreamConsumerConnectWithFlags"},
    {269, "cudaLaunchCooperativeKernel"}, {270, "cudaLaunchCooperativeKernel_ptsz"},
    {271, "cudaEventCreateFromEGLSync"}, {272, "cudaLaunchCooperativeKernelMultiDevice"},
    {273, "cudaFuncSetAttribute"}, {274, "cudaImportExternalMemory"}, {275, "cudaExternalMemoryGetMappedBuffer"},
    {276, "cudaExternalMemoryGetMappedMipmappedArray"}, {277, "cudaDestroyExternalMemory"},
    {278, "cudaImportExternalSemaphore"}, {279, "cudaSignalExternalSemaphoresAsync"},
    {280, "cudaSignalExternalSemaphoresAsync_ptsz"}, {281, "cudaWaitExternalSemaphoresAsync"},
    {282, "cudaWaitExternalSemaphoresAsync_ptsz"}, {283, "cudaDestroyExternalSemaphore"},
    {284, "cudaLaunchHostFunc"}, {285, "cudaLaunchHostFunc_ptsz"}, {286, "cudaGraphCreate"},
    {287, "cudaGraphKernelNodeGetParams"}, {288, "cudaGraphKernelNodeSetParams"}, {289, "cudaGraphAddKernelNode"},
    {290, "cudaGraphAddMemcpyNode"}, {291, "cudaGraphMemcpyNodeGetParams"}, {292, "cudaGraphMemcpyNodeSetParams"},
    {293, "cudaGraphAddMemsetNode"}, {294, "cudaGraphMemsetNodeGetParams"}, {295, "cudaGraphMemsetNodeSetParams"},
    {296, "cudaGraphAddHostNode"}, {297, "cudaGraphHostNodeGetParams"}, {298, "cudaGraphAddChildGraphNode"},
    {299, "cudaGraphChildGraphNodeGetGraph"}, {300, "cudaGraphAddEmptyNode"}, {301, "cudaGraphClone"},
    {302, "cudaGraphNodeFindInClone"}, {303, "cudaGraphNodeGetType"}, {304, "cudaGraphGetRootNodes"},
    {305, "cudaGraphNodeGetDependencies"}, {306, "cudaGraphNodeGetDependentNodes"},
    {307, "cudaGraphAddDependencies"}, {308, "cudaGraphRemoveDependencies"}, {309, "cudaGraphDestroyNode"},
    {310, "cudaGraphInstantiate"}, {311, "cudaGraphLaunch"}, {312, "cudaGraphLaunch_ptsz"},
    {313, "cudaGraphExecDestroy"}, {314, "cudaGraphDestroy"}, {315, "cudaStreamBeginCapture"},
    {316, "cudaStreamBeginCapture_ptsz"}, {317, "cudaStreamIsCapturing"}, {318, "cudaStreamIsCapturing_ptsz"},
    {319, "cudaStreamEndCapture"}, {320, "cudaStreamEndCapture_ptsz"}, {321, "cudaGraphHostNodeSetParams"},
    {322, "cudaGraphGetNodes"}, {323, "cudaGraphGetEdges"}, {324, "cudaStreamGetCaptureInfo"},
    {325, "cudaStreamGetCaptureInfo_ptsz"}, {326, "cudaGraphExecKernelNodeSetParams"},
    {327, "cudaThreadExchangeStreamCaptureMode"}, {328, "cudaDeviceGetNvSciSyncAttributes"},
    {329, "cudaOccupancyAvailableDynamicSMemPerBlock"}, {330, "cudaStreamSetFlags"},
    {331, "cudaStreamSetFlags_ptsz"}, {332, "cudaGraphExecMemcpyNodeSetParams"},
    {333, "cudaGraphExecMemsetNodeSetParams"}, {334, "cudaGraphExecHostNodeSetParams"},
    {335, "cudaGraphExecUpdate"}, {336, "cudaGetFuncBySymbol"}, {337, "cudaCtxResetPersistingL2Cache"},
    {338, "cudaGraphKernelNodeCopyAttributes"}, {339, "cudaGraphKernelNodeGetAttribute"},
    {340, "cudaGraphKernelNodeSetAttribute"}, {341, "cudaStreamCopyAttributes"},
    {342, "cudaStreamCopyAttributes_ptsz"}, {343, "cudaStreamGetAttribute"}, {344, "cudaStreamGetAttribute_ptsz"},
    {345, "cudaStreamSetAttribute"}, {346, "cudaStreamSetAttribute_ptsz"},
    {347, "cudaDeviceGetTexture1DLinearMaxWidth"}, {348, "cudaGraphUpload"}, {349, "cudaGraphUpload_ptsz"},
    {350, "cudaGraphAddMemcpyNodeToSymbol"}, {351, "cudaGraphAddMemcpyNodeFromSymbol"},
    {352, "cudaGraphAddMemcpyNode1D"}, {353, "cudaGraphMemcpyNodeSetParamsToSymbol"},
    {354, "cudaGraphMemcpyNodeSetParamsFromSymbol"}, {355, "cudaGraphMemcpyNodeSetParams1D"},
    {356, "cudaGraphExecMemcpyNodeSetParamsToSymbol"}, {357, "cudaGraphExecMemcpyNodeSetParamsFromSymbol"},
    {358, "cudaGraphExecMemcpyNodeSetParams1D"}, {359, "cudaArrayGetSparseProperties"},
    {360, "cudaMipmappedArrayGetSparseProperties"}, {361, "cudaGraphExecChildGraphNodeSetParams"},
    {362, "cudaGraphAddEventRecordNode"}, {363, "cudaGraphEventRecordNodeGetEvent"},
    {364, "cudaGraphEventRecordNodeSetEvent"}, {365, "cudaGraphAddEventWaitNode"},
    {366, "cudaGraphEventWaitNodeGetEvent"}, {367, "cudaGraphEventWaitNodeSetEvent"},
    {368, "cudaGraphExecEventRecordNodeSetEvent"}, {369, "cudaGraphExecEventWaitNodeSetEvent"},
    {370, "cudaEventRecordWithFlags"}, {371, "cudaEventRecordWithFlags_ptsz"}, {372, "cudaDeviceGetDefaultMemPool"},
    {373, "cudaMallocAsync"}, {374, "cudaMallocAsync_ptsz"}, {375, "cudaFreeAsync"}, {376, "cudaFreeAsync_ptsz"},
    {377, "cudaMemPoolTrimTo"}, {378, "cudaMemPoolSetAttribute"}, {379, "cudaMemPoolGetAttribute"},
    {380, "cudaMemPoolSetAccess"}, {381, "cudaArrayGetPlane"}, {382, "cudaMemPoolGetAccess"},
    {383, "cudaMemPoolCreate"}, {384, "cudaMemPoolDestroy"}, {385, "cudaDeviceSetMemPool"},
    {386, "cudaDeviceGetMemPool"}, {387, "cudaMemPoolExportToShareableHandle"},
    {388, "cudaMemPoolImportFromShareableHandle"}, {389, "cudaMemPoolExportPointer"},
    {390, "cudaMemPoolImportPointer"}, {391, "cudaMallocFromPoolAsync"}, {392, "cudaMallocFromPoolAsync_ptsz"},
    {393, "cudaSignalExternalSemaphoresAsync"}, {394, "cudaSignalExternalSemaphoresAsync_ptsz"},
    {395, "cudaWaitExternalSemaphoresAsync"}, {396, "cudaWaitExternalSemaphoresAsync_ptsz"},
    {397, "cudaGraphAddExternalSemaphoresSignalNode"}, {398, "cudaGraphExternalSemaphoresSignalNodeGetParams"},
    {399, "cudaGraphExternalSemaphoresSignalNodeSetParams"}, {400, "cudaGraphAddExternalSemaphoresWaitNode"},
    {401, "cudaGraphExternalSemaphoresWaitNodeGetParams"}, {402, "cudaGraphExternalSemaphoresWaitNodeSetParams"},
    {403, "cudaGraphExecExternalSemaphoresSignalNodeSetParams"},
    {404, "cudaGraphExecExternalSemaphoresWaitNodeSetParams"}, {405, "cudaDeviceFlushGPUDirectRDMAWrites"},
    {406, "cudaGetDriverEntryPoint"}, {407, "cudaGetDriverEntryPoint_ptsz"}, {408, "cudaGraphDebugDotPrint"},
    {409, "cudaStreamGetCaptureInfo_v2"}, {410, "cudaStreamGetCaptureInfo_v2_ptsz"},
    {411, "cudaStreamUpdateCaptureDependencies"}, {412, "cudaStreamUpdateCaptureDependencies_ptsz"},
    {413, "cudaUserObjectCreate"}, {414, "cudaUserObjectRetain"}, {415, "cudaUserObjectRelease"},
    {416, "cudaGraphRetainUserObject"}, {417, "cudaGraphReleaseUserObject"}, {418, "cudaGraphInstantiateWithFlags"},
    {419, "cudaGraphAddMemAllocNode"}, {420, "cudaGraphMemAllocNodeGetParams"}, {421, "cudaGraphAddMemFreeNode"},
    {422, "cudaGraphMemFreeNodeGetParams"}, {423, "cudaDeviceGraphMemTrim"},
    {424, "cudaDeviceGetGraphMemAttribute"}, {425, "cudaDeviceSetGraphMemAttribute"},
    {426, "cudaGraphNodeSetEnabled"}, {427, "cudaGraphNodeGetEnabled"}, {428, "cudaArrayGetMemoryRequirements"},
    {429, "cudaMipmappedArrayGetMemoryRequirements"}, {430, "cudaLaunchKernelExC"},
    {431, "cudaLaunchKernelExC_ptsz"}, {432, "cudaOccupancyMaxPotentialClusterSize"},
    {433, "cudaOccupancyMaxActiveClusters"}, {434, "cudaCreateTextureObject_v2"},
    {435, "cudaGetTextureObjectTextureDesc_v2"}, {436, "cudaGraphInstantiateWithParams"},
    {437, "cudaGraphInstantiateWithParams_ptsz"}, {438, "cudaGraphExecGetFlags"}, {439, "cudaGetKernel"},
    {440, "cudaGetDeviceProperties"}, {441, "cudaStreamGetId"}, {442, "cudaStreamGetId_ptsz"},
    {443, "cudaGraphInstantiate"}, {444, "cudaInitDevice"}, {445, "cudaGraphAddNode"},
    {446, "cudaGraphNodeSetParams"}, {447, "cudaGraphExecNodeSetParams"}, {448, "cudaMemAdvise"},
    {449, "cudaMemPrefetchAsync"}, {450, "cudaMemPrefetchAsync_ptsz"}, {451, "cudaFuncGetName"},
    {452, "cudaStreamBeginCaptureToGraph"}, {453, "cudaStreamBeginCaptureToGraph_ptsz"},
    {454, "cudaGraphConditionalHandleCreate"}, {455, "cudaGraphGetEdges"}, {456, "cudaGraphNodeGetDependencies"},
    {457, "cudaGraphNodeGetDependentNodes"}, {458, "cudaGraphAddDependencies"},
    {459, "cudaGraphRemoveDependencies"}, {460, "cudaGraphAddNode"}, {461, "cudaStreamGetCaptureInfo"},
    {462, "cudaStreamGetCaptureInfo_ptsz"}, {463, "cudaStreamUpdateCaptureDependencies"},
    {464, "cudaStreamUpdateCaptureDependencies_ptsz"}, {465, "cudaDeviceRegisterAsyncNotification"},
    {466, "cudaDeviceUnregisterAsyncNotification"}, {467, "cudaFuncGetParamInfo"},
    {468, "cudaGetDriverEntryPointByVersion"}, {469, "cudaGetDriverEntryPointByVersion_ptsz"},
    {470, "cudaLibraryLoadData"}, {471, "cudaLibraryLoadFromFile"}, {472, "cudaLibraryUnload"},
    {473, "cudaLibraryGetKernel"}, {474, "cudaLibraryGetGlobal"}, {475, "cudaLibraryGetManaged"},
    {476, "cudaLibraryGetUnifiedFunction"}, {477, "cudaLibraryGetKernelCount"},
    {478, "cudaLibraryEnumerateKernels"}, {479, "cudaKernelSetAttributeForDevice"}, {480, "cudaStreamGetDevice"},
    {481, "cudaStreamGetDevice_ptsz"}, {482, "cudaMemcpyBatchAsync"}, {483, "cudaMemcpyBatchAsync_ptsz"},
    {484, "cudaMemcpy3DBatchAsync"}, {485, "cudaMemcpy3DBatchAsync_ptsz"}, {486, "cudaEventElapsedTime"},
    {487, "cudaMemPrefetchBatchAsync"}, {488, "cudaMemPrefetchBatchAsync_ptsz"}, {489, "cudaMemDiscardBatchAsync"},
    {490, "cudaMemDiscardBatchAsync_ptsz"}, {491, "cudaMemDiscardAndPrefetchBatchAsync"},
    {492, "cudaMemDiscardAndPrefetchBatchAsync_ptsz"}, {493, "cudaGetExportTable"},
    {494, "__cudaRegisterFatBinary"}, {495, "__cudaRegisterFatBinaryEnd"}, {496, "__cudaUnregisterFatBinary"},
    {497, "__cudaRegisterVar"}, {498, "__cudaRegisterHostVar"}, {499, "__cudaRegisterFunction"},
    {500, "__cudaRegisterManagedVar"}, {501, "__cudaInitModule"}, {502, "__cudaPushCallConfiguration"},
    {503, "__cudaPopCallConfiguration"}, {504, "__cudaGetKernel"}, {505, "__cudaLaunchKernel"},
    {506, "__cudaLaunchKernel_ptsz"}, {507, "__cudaRegisterUnifiedTable"}, {508, "__cudaGetProcAddress"},
    {509, "cudaMemcpyBatchAsync"}, {510, "cudaMemcpyBatchAsync_ptsz"}, {511, "cudaMemcpy3DBatchAsync"},
    {512, "cudaMemcpy3DBatchAsync_ptsz"}, {513, "cudaLogsRegisterCallback"}, {514, "cudaLogsUnregisterCallback"},
    {515, "cudaLogsCurrent"}, {516, "cudaLogsDumpToFile"}, {517, "cudaLogsDumpToMemory"},
    {518, "cudaMemGetDefaultMemPool"}, {519, "cudaMemGetMemPool"}, {520, "cudaMemSetMemPool"},
    {521, "cudaDeviceGetHostAtomicCapabilities"}, {522, "cudaDeviceGetP2PAtomicCapabilities"},
};
_Static_assert(sizeof dt_cf_cuda_runtime_names / sizeof dt_cf_cuda_runtime_names[0] == DT_CF_CUDA_NRUNTIME_NAMES,
               "the runtime name table has its declared size");
