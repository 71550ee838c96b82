/* roctracer_emu.c: libroctracer-emu.so, an emulator of AMD ROCtracer (as Hygon DTK's
 * libgalaxyhip.so.5 also provides it) for testing tracers.
 *
 * Exports ROCtracer's own symbols with its signatures (roctracer_emu.h), the emulated HIP
 * runtime's device queries (hipDeviceGetAttribute, hipGetDeviceCount) and the devemu_*
 * driving API. The protocol, on top of the shared emulated runtime (emu_core.c):
 *  - a pool (roctracer_open_pool_expl): the core asks for a buffer when it needs one and
 *    gets buffer_size bytes from the pool's allocator (alloc_fun, else malloc); a full
 *    buffer, and at a flush the partly filled one, is rewritten into ROCtracer records and
 *    handed to the pool's consumer thread, which calls buffer_callback_fun(begin, end,
 *    arg) with whole records, one buffer at a time (a producer waits while the consumer
 *    is busy, as ROCtracer's MemoryPool does); the buffer and the kernel-name scratch are
 *    poisoned and freed when the callback returns: a tracer must copy what it keeps;
 *    roctracer_flush_activity_expl returns when everything written so far was delivered;
 *  - activity: HIP_OPS (kernels, copies, fills), HIP_API (API records, each preceded by an
 *    EXT_API record when an external id is pushed); other domains are accepted and idle;
 *    roctracer_stop pauses every callback and record of the process, roctracer_start resumes;
 *  - callbacks: HIP_API only, enter and exit of every workload statement, with one
 *    hip_api_data_t per call (its phase rewritten at exit) whose args carry the launch
 *    configuration (hipLaunchKernel's layout: newer HIP, with args__val;
 *    DEVEMU_HIP_LAUNCH_ARGS=without-val gives the older one), hipMemcpy's and
 *    hipMemsetAsync's arguments;
 *  - HIP API ids are the emulator's own (roctracer_table.c): roctracer_op_code and
 *    roctracer_op_string translate them; the clock is CLOCK_BOOTTIME-like (an epoch
 *    offset from CLOCK_REALTIME) unless DEVEMU_FAULTS sets clock-epoch/clock-rate.
 * Faults (DEVEMU_FAULTS): drop=N (lost without a trace: ROCtracer has no drop count),
 * malformed=N (64-byte records of a domain no ROCtracer has), zero-time=N, clock-epoch,
 * clock-rate, small-buffer. Variant: -DDEVEMU_OMIT_CALLBACK (libroctracer-emu-nocb.so:
 * no roctracer_enable_domain_callback). One pool at a time. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "roctracer_emu.h"

#define ROC_POISON 0xDD

/* ---- state ---- */

static emu_vendor g_vendor; /* the table, with the clock epoch of this process */
#ifndef DEVEMU_OMIT_CALLBACK
static void complete_api_data(uint8_t *block, int call, const wl_stmt *st);
#endif
static int g_launch_args_with_val = 1;

static _Thread_local char t_error[256];

static struct {
    pthread_mutex_t lock; /* open/close */
    int open;
    emu_roc_properties props;
    pthread_t consumer;
    pthread_mutex_t cmutex;
    pthread_cond_t ccond;
    struct {
        const char *begin, *end;
        char *buffer, *names;
        size_t names_len;
        int valid, quit;
    } slot;
} P = {.lock = PTHREAD_MUTEX_INITIALIZER, .cmutex = PTHREAD_MUTEX_INITIALIZER, .ccond = PTHREAD_COND_INITIALIZER};

static struct {
    pthread_mutex_t lock;
    void *subscriber; /* the core's subscriber handle, once subscribed */
    _Atomic(emu_roc_api_callback) fn;
    _Atomic(void *) arg;
} A = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int set_error(int rc, const char *msg)
{
    snprintf(t_error, sizeof t_error, "%s", msg);
    return rc;
}

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((constructor)) static void roctracer_emu_load(void)
{
    const char *layout = getenv("DEVEMU_HIP_LAUNCH_ARGS");
    if (layout && *layout) {
        if (strcmp(layout, "with-val") == 0) {
            g_launch_args_with_val = 1;
        } else if (strcmp(layout, "without-val") == 0) {
            g_launch_args_with_val = 0;
        } else {
            fprintf(stderr, "devemu: DEVEMU_HIP_LAUNCH_ARGS=%s: expected with-val or without-val\n", layout);
            fflush(NULL);
            syscall(SYS_exit_group, 2); /* inside the loader: no atexit handlers (see emu_install) */
        }
    }
    g_vendor = emu_roctracer_vendor;
#ifndef DEVEMU_OMIT_CALLBACK
    g_vendor.complete_callback_data = complete_api_data;
#endif
    /* vendor clock = CLOCK_REALTIME - epoch: CLOCK_BOOTTIME, to the moment of loading. */
    g_vendor.clock_epoch_ns = (int64_t)(clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_BOOTTIME));
    emu_install(&g_vendor);
}

/* ---- the pool ---- */

static void release_buffer(char *b, const emu_roc_properties *props)
{
    if (!b)
        return;
    if (props->alloc_fun)
        props->alloc_fun(&b, 0, props->alloc_arg);
    else
        free(b);
}

/* The core needs a buffer. */
static void pool_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = NULL;
    *size = 0;
    *max_records = 0;
    pthread_mutex_lock(&P.lock);
    int open = P.open;
    emu_roc_properties props = P.props;
    pthread_mutex_unlock(&P.lock);
    if (!open)
        return; /* no pool: the record is dropped (counted by the core) */
    char *b = NULL;
    if (props.alloc_fun)
        props.alloc_fun(&b, props.buffer_size, props.alloc_arg);
    else
        b = malloc(props.buffer_size);
    if (!b)
        return;
    *buffer = (uint8_t *)b;
    *size = props.buffer_size;
}

static uint32_t get32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static void put32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

/* Staged records -> ROCtracer records, in place; kernel names copied into a scratch
 * area (returned, NULL when there are none) that lives as long as the delivery. */
static char *finish_records(uint8_t *buf, size_t valid, size_t *names_size)
{
    size_t n = valid / EMU_ROC_RECORD_SIZE, names_len = 0;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *r = buf + i * EMU_ROC_RECORD_SIZE;
        const char *name;
        memcpy(&name, r + 56, sizeof name);
        if (get32(r) == EMU_ROC_STAGED_KERNEL && name)
            names_len += strlen(name) + 1;
    }
    char *names = names_len ? malloc(names_len) : NULL, *at = names;
    *names_size = names ? names_len : 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t *r = buf + i * EMU_ROC_RECORD_SIZE;
        switch (get32(r)) {
        case EMU_ROC_STAGED_KERNEL: {
            put32(r, EMU_ROC_DOMAIN_HIP_OPS);
            put32(r + 4, EMU_ROC_KIND_KERNEL);
            put32(r + 8, EMU_ROC_OP_DISPATCH);
            const char *name;
            memcpy(&name, r + 56, sizeof name);
            if (name && names) {
                size_t len = strlen(name) + 1;
                memcpy(at, name, len);
                memcpy(r + 56, &at, sizeof at);
                at += len;
            }
            break;
        }
        case EMU_ROC_STAGED_MEMCPY:
        case EMU_ROC_STAGED_MEMSET:
            put32(r, EMU_ROC_DOMAIN_HIP_OPS); /* kind and op are in place */
            break;
        case EMU_ROC_STAGED_API:
            put32(r, EMU_ROC_DOMAIN_HIP_API);
            put32(r + 4, 0); /* the API id is the op */
            break;
        case EMU_ROC_STAGED_EXTERNAL:
            put32(r, EMU_ROC_DOMAIN_EXT_API);
            put32(r + 4, 0);
            put32(r + 8, EMU_ROC_EXT_OP_EXTERN_ID);
            break;
        default:
            break; /* an injected malformed record stays as it is */
        }
    }
    return names;
}

/* The core hands back a buffer (full, or at a flush): deliver it through the consumer. */
static void pool_complete(emu_context ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    (void)ctx, (void)stream, (void)size;
    if (!buffer)
        return;
    pthread_mutex_lock(&P.lock);
    int open = P.open;
    emu_roc_properties props = P.props;
    pthread_mutex_unlock(&P.lock);
    valid -= valid % EMU_ROC_RECORD_SIZE;
    if (!open || valid == 0) {
        release_buffer((char *)buffer, &props); /* nothing to tell: ROCtracer never delivers an empty range */
        return;
    }
    size_t names_len = 0;
    char *names = finish_records(buffer, valid, &names_len);
    pthread_mutex_lock(&P.cmutex);
    while (P.slot.valid)
        pthread_cond_wait(&P.ccond, &P.cmutex);
    P.slot.begin = (const char *)buffer;
    P.slot.end = (const char *)buffer + valid;
    P.slot.buffer = (char *)buffer;
    P.slot.names = names;
    P.slot.names_len = names_len;
    P.slot.valid = 1;
    pthread_cond_broadcast(&P.ccond);
    pthread_mutex_unlock(&P.cmutex);
}

/* ROCtracer's consumer thread: calls the tracer with its lock held, one buffer at a time. */
static void *consumer_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&P.cmutex);
    for (;;) {
        while (!P.slot.valid)
            pthread_cond_wait(&P.ccond, &P.cmutex);
        if (P.slot.quit) {
            P.slot.quit = 0;
            P.slot.valid = 0;
            pthread_cond_broadcast(&P.ccond);
            break;
        }
        P.props.buffer_callback_fun(P.slot.begin, P.slot.end, P.props.buffer_callback_arg);
        size_t bytes = (size_t)(P.slot.end - P.slot.begin);
        memset(P.slot.buffer, ROC_POISON, bytes);
        if (P.slot.names) {
            memset(P.slot.names, ROC_POISON, P.slot.names_len);
            free(P.slot.names);
        }
        release_buffer(P.slot.buffer, &P.props);
        P.slot.buffer = P.slot.names = NULL;
        P.slot.valid = 0;
        pthread_cond_broadcast(&P.ccond);
    }
    pthread_mutex_unlock(&P.cmutex);
    return NULL;
}

static void wait_consumer_idle(void)
{
    pthread_mutex_lock(&P.cmutex);
    while (P.slot.valid)
        pthread_cond_wait(&P.ccond, &P.cmutex);
    pthread_mutex_unlock(&P.cmutex);
}

static int is_pool(const void *pool)
{
    return pool == (const void *)&P;
}

/* Activity the tracer enabled, per domain, and roctracer_stop's pause. */
static _Atomic int g_domain_on[EMU_ROC_DOMAIN_NUMBER];
static _Atomic int g_stopped;

static void set_kinds(uint32_t domain, int on)
{
    const emu_vendor *v = emu_vendor_get();
    if (domain == EMU_ROC_DOMAIN_HIP_OPS) {
        emu_activity_enable((int)v->kind.kernel, on);
        emu_activity_enable((int)v->kind.memcpy, on);
        emu_activity_enable((int)v->kind.memset, on);
    } else if (domain == EMU_ROC_DOMAIN_HIP_API) {
        emu_activity_enable((int)v->kind.runtime, on);
        emu_activity_enable((int)v->kind.external_correlation, on);
    }
}

EMU_EXPORT int roctracer_open_pool_expl(const emu_roc_properties *properties, void **pool)
{
    if (!properties || !properties->buffer_callback_fun || properties->buffer_size < EMU_ROC_RECORD_SIZE)
        return set_error(EMU_ROC_STATUS_INVALID_ARGUMENT, "invalid pool properties");
    if (!pool)
        return set_error(EMU_ROC_STATUS_INVALID_ARGUMENT, "devemu: only explicit pools are emulated");
    pthread_mutex_lock(&P.lock);
    if (P.open) {
        pthread_mutex_unlock(&P.lock);
        return set_error(EMU_ROC_STATUS_ERROR, "devemu: one pool at a time is emulated");
    }
    P.props = *properties;
    P.props.buffer_size -= P.props.buffer_size % EMU_ROC_RECORD_SIZE;
    P.slot.valid = 0;
    P.slot.quit = 0;
    if (pthread_create(&P.consumer, NULL, consumer_main, NULL) != 0) {
        pthread_mutex_unlock(&P.lock);
        return set_error(EMU_ROC_STATUS_ERROR, "cannot start the pool's consumer thread");
    }
    P.open = 1;
    pthread_mutex_unlock(&P.lock);
    emu_register_buffers(pool_request, pool_complete);
    *pool = &P;
    return EMU_ROC_STATUS_SUCCESS;
}

EMU_EXPORT int roctracer_flush_activity_expl(void *pool)
{
    if (!is_pool(pool))
        return set_error(EMU_ROC_STATUS_INVALID_ARGUMENT, "not a pool of this library");
    emu_flush_all(0); /* the partly filled buffer goes to the consumer */
    wait_consumer_idle();
    return EMU_ROC_STATUS_SUCCESS;
}

EMU_EXPORT int roctracer_close_pool_expl(void *pool)
{
    if (!pool)
        return EMU_ROC_STATUS_SUCCESS; /* no default pool: nothing to close */
    if (!is_pool(pool) || !P.open)
        return set_error(EMU_ROC_STATUS_INVALID_ARGUMENT, "not an open pool of this library");
    roctracer_flush_activity_expl(pool);
    /* "closing a pool disables the activities using it" */
    roctracer_disable_domain_activity(EMU_ROC_DOMAIN_HIP_OPS);
    roctracer_disable_domain_activity(EMU_ROC_DOMAIN_HIP_API);
    pthread_mutex_lock(&P.cmutex);
    while (P.slot.valid)
        pthread_cond_wait(&P.ccond, &P.cmutex);
    P.slot.quit = 1;
    P.slot.valid = 1;
    pthread_cond_broadcast(&P.ccond);
    pthread_mutex_unlock(&P.cmutex);
    pthread_join(P.consumer, NULL);
    pthread_mutex_lock(&P.lock);
    P.open = 0;
    pthread_mutex_unlock(&P.lock);
    return EMU_ROC_STATUS_SUCCESS;
}

EMU_EXPORT int roctracer_enable_domain_activity_expl(uint32_t domain, void *pool)
{
    if (domain >= EMU_ROC_DOMAIN_NUMBER)
        return set_error(EMU_ROC_STATUS_INVALID_DOMAIN, "invalid domain ID");
    if (!pool)
        return set_error(EMU_ROC_STATUS_DEFAULT_POOL_UNDEFINED, "no default pool");
    if (!is_pool(pool) || !P.open)
        return set_error(EMU_ROC_STATUS_INVALID_ARGUMENT, "not an open pool of this library");
    atomic_store(&g_domain_on[domain], 1);
    if (!atomic_load(&g_stopped))
        set_kinds(domain, 1);
    return EMU_ROC_STATUS_SUCCESS;
}

EMU_EXPORT int roctracer_disable_domain_activity(uint32_t domain)
{
    if (domain >= EMU_ROC_DOMAIN_NUMBER)
        return set_error(EMU_ROC_STATUS_INVALID_DOMAIN, "invalid domain ID");
    atomic_store(&g_domain_on[domain], 0);
    set_kinds(domain, 0);
    return EMU_ROC_STATUS_SUCCESS;
}

/* roctracer_ext.h: tracing is on from the start; roctracer_stop pauses it for everyone. */
EMU_EXPORT void roctracer_stop(void)
{
    atomic_store(&g_stopped, 1);
    set_kinds(EMU_ROC_DOMAIN_HIP_OPS, 0);
    set_kinds(EMU_ROC_DOMAIN_HIP_API, 0);
}

EMU_EXPORT void roctracer_start(void)
{
    atomic_store(&g_stopped, 0);
    for (uint32_t d = 0; d < EMU_ROC_DOMAIN_NUMBER; d++)
        if (atomic_load(&g_domain_on[d]))
            set_kinds(d, 1);
}

EMU_EXPORT int roctracer_next_record(const void *record, const void **next)
{
    if (!record || !next)
        return set_error(EMU_ROC_STATUS_INVALID_ARGUMENT, "invalid argument");
    *next = (const uint8_t *)record + EMU_ROC_RECORD_SIZE; /* fixed stride, as ROCtracer */
    return EMU_ROC_STATUS_SUCCESS;
}

/* ---- the HIP_API callback (absent from the -nocb variant) ---- */

#ifndef DEVEMU_OMIT_CALLBACK

/* Distinct non-NULL addresses standing in for the kernel's argument array and streams. */
static void *g_kernel_arg_value[1];
static void **g_kernel_args[1] = {g_kernel_arg_value};
static char g_stream_tokens[256];
static char g_device_memory[64], g_host_memory[64];

static void put64(uint8_t *p, uint64_t v)
{
    memcpy(p, &v, 8);
}

static void put_ptr(uint8_t *p, const void *v)
{
    memcpy(p, &v, sizeof v);
}

static const void *stream_handle(uint32_t stream)
{
    return stream ? (const void *)&g_stream_tokens[stream % sizeof g_stream_tokens] : NULL;
}

/* The call's arguments in the args union, from the statement being run. */
static void fill_args(uint8_t *args, int call, const wl_stmt *st)
{
    if (!st)
        return;
    if (call == WL_CALL_LAUNCH && st->kind == WL_STMT_LAUNCH) {
        /* hipLaunchKernel {function_address @0, numBlocks @8, dimBlocks @20, args @32, ...} [H] */
        const wl_launch *l = &st->u.launch;
        put_ptr(args, l->kernel);
        for (int i = 0; i < 3; i++) {
            put32(args + 8 + 4 * i, l->grid[i]);
            put32(args + 20 + 4 * i, l->block[i]);
        }
        put_ptr(args + 32, g_kernel_args);
        if (g_launch_args_with_val) { /* args__val @40, sharedMemBytes @48, stream @56 */
            put_ptr(args + 40, g_kernel_args[0]);
            put64(args + 48, l->dyn_smem);
            put_ptr(args + 56, stream_handle(l->stream));
        } else { /* sharedMemBytes @40, stream @48 */
            put64(args + 40, l->dyn_smem);
            put_ptr(args + 48, stream_handle(l->stream));
        }
    } else if (call == WL_CALL_MEMCPY && st->kind == WL_STMT_MEMCPY) {
        /* hipMemcpy {dst, src, sizeBytes, kind} [H]; hipMemcpyKind: HtoD 1, DtoH 2, DtoD 3 */
        const wl_memcpy *m = &st->u.memcpy;
        put_ptr(args, m->dir == WL_COPY_DTOH ? (const void *)g_host_memory : (const void *)g_device_memory);
        put_ptr(args + 8, m->dir == WL_COPY_HTOD ? (const void *)g_host_memory : (const void *)g_device_memory);
        put64(args + 16, m->bytes);
        put32(args + 24, m->dir == WL_COPY_HTOD ? 1u : m->dir == WL_COPY_DTOH ? 2u : 3u);
    } else if (call == WL_CALL_MEMSET && st->kind == WL_STMT_MEMSET) {
        /* hipMemsetAsync {dst, value, sizeBytes, stream} [H] */
        const wl_memset *m = &st->u.memset;
        put_ptr(args, g_device_memory);
        put32(args + 8, m->value);
        put64(args + 16, m->bytes);
        put_ptr(args + 24, stream_handle(m->stream));
    }
}

/* The core's callback data is the whole emulated hip_api_data_t: the args union is filled
 * in once per call, when the core writes the block. */
static void complete_api_data(uint8_t *block, int call, const wl_stmt *st)
{
    fill_args(block + EMU_ROC_ARGS_OFFSET, call, st);
}

/* The core's subscriber callback, as ROCtracer's HIP_API callback: the core's block is
 * handed on as it is, one struct for the call's enter and exit, as ROCtracer does. */
static void api_adapter(void *userdata, int domain, uint32_t cbid, const void *cbdata)
{
    (void)userdata;
    emu_roc_api_callback fn = atomic_load(&A.fn);
    void *arg = atomic_load(&A.arg);
    if (!fn || domain != EMU_ROC_DOMAIN_HIP_API || atomic_load(&g_stopped))
        return;
    fn(EMU_ROC_DOMAIN_HIP_API, cbid, cbdata, arg);
}

EMU_EXPORT int roctracer_enable_domain_callback(uint32_t domain, emu_roc_api_callback callback, void *arg)
{
    if (domain >= EMU_ROC_DOMAIN_NUMBER)
        return set_error(EMU_ROC_STATUS_INVALID_DOMAIN, "invalid domain ID");
    if (!callback)
        return set_error(EMU_ROC_STATUS_INVALID_ARGUMENT, "invalid argument");
    if (domain != EMU_ROC_DOMAIN_HIP_API)
        return EMU_ROC_STATUS_SUCCESS; /* accepted; never fires here */
    pthread_mutex_lock(&A.lock);
    atomic_store(&A.arg, arg);
    atomic_store(&A.fn, callback);
    int rc = EMU_ROC_STATUS_SUCCESS;
    /* Subscribed once; again after devemu_reset forgot the subscriber. */
    if (!A.subscriber || emu_enable_domain(1, A.subscriber, EMU_ROC_DOMAIN_HIP_API) != 0) {
        A.subscriber = NULL;
        if (emu_subscribe(&A.subscriber, api_adapter, NULL) != 0 ||
            emu_enable_domain(1, A.subscriber, EMU_ROC_DOMAIN_HIP_API) != 0)
            rc = set_error(EMU_ROC_STATUS_ERROR, "devemu: the emulated runtime refused the callback");
    }
    pthread_mutex_unlock(&A.lock);
    return rc;
}
#endif

EMU_EXPORT int roctracer_disable_domain_callback(uint32_t domain)
{
    if (domain >= EMU_ROC_DOMAIN_NUMBER)
        return set_error(EMU_ROC_STATUS_INVALID_DOMAIN, "invalid domain ID");
    if (domain != EMU_ROC_DOMAIN_HIP_API)
        return EMU_ROC_STATUS_SUCCESS;
    pthread_mutex_lock(&A.lock);
    if (A.subscriber)
        emu_enable_domain(0, A.subscriber, EMU_ROC_DOMAIN_HIP_API);
    atomic_store(&A.fn, NULL);
    pthread_mutex_unlock(&A.lock);
    return EMU_ROC_STATUS_SUCCESS;
}

/* ---- names, time, external ids, errors ---- */

EMU_EXPORT const char *roctracer_op_string(uint32_t domain, uint32_t op, uint32_t kind)
{
    const emu_vendor *v = emu_vendor_get();
    if (domain == EMU_ROC_DOMAIN_HIP_API) {
        int call = emu_call_for_cbid(op);
        return call >= 0 ? v->api_name[call] : NULL;
    }
    if (domain == EMU_ROC_DOMAIN_HIP_OPS) {
        switch (kind) {
        case EMU_ROC_KIND_KERNEL:
            return "KernelExecution";
        case EMU_ROC_KIND_COPY_DTOH:
            return "CopyDeviceToHost";
        case EMU_ROC_KIND_COPY_HTOD:
            return "CopyHostToDevice";
        case EMU_ROC_KIND_COPY_DTOD:
            return "CopyDeviceToDevice";
        case EMU_ROC_KIND_FILL:
            return "FillBuffer";
        default:
            return NULL;
        }
    }
    if (domain == EMU_ROC_DOMAIN_EXT_API)
        return "EXT_API";
    set_error(EMU_ROC_STATUS_INVALID_DOMAIN, "invalid domain ID");
    return NULL;
}

EMU_EXPORT int roctracer_op_code(uint32_t domain, const char *name, uint32_t *op, uint32_t *kind)
{
    const emu_vendor *v = emu_vendor_get();
    if (domain != EMU_ROC_DOMAIN_HIP_API)
        return set_error(EMU_ROC_STATUS_INVALID_DOMAIN, "limited domain ID");
    if (!name || !op)
        return set_error(EMU_ROC_STATUS_INVALID_ARGUMENT, "invalid argument");
    for (int i = 0; i < WL_CALL_COUNT; i++) {
        if (v->api_name[i] && strcmp(v->api_name[i], name) == 0) {
            *op = v->cbid[i];
            if (kind)
                *kind = 0;
            return EMU_ROC_STATUS_SUCCESS;
        }
    }
    char msg[160];
    snprintf(msg, sizeof msg, "Invalid API name \"%.100s\", domain ID(%u)", name, domain);
    return set_error(EMU_ROC_STATUS_INVALID_ARGUMENT, msg);
}

EMU_EXPORT int roctracer_get_timestamp(uint64_t *timestamp)
{
    return emu_get_timestamp(timestamp);
}

EMU_EXPORT int roctracer_activity_push_external_correlation_id(uint64_t id)
{
    return emu_push_external((int)emu_vendor_get()->external_kind_custom0, id);
}

EMU_EXPORT int roctracer_activity_pop_external_correlation_id(uint64_t *last_id)
{
    uint64_t ignored;
    return emu_pop_external((int)emu_vendor_get()->external_kind_custom0, last_id ? last_id : &ignored);
}

/* The 4.1 interface: the caller owns (frees) the returned string. */
EMU_EXPORT const char *roctracer_error_string(void)
{
    return strdup(t_error);
}

EMU_EXPORT uint32_t roctracer_version_major(void)
{
    return 4;
}

EMU_EXPORT uint32_t roctracer_version_minor(void)
{
    return 1;
}

/* ---- the emulated HIP runtime's device queries ---- */

/* hipDeviceAttribute_t (HIP 5.0 and later) [H] -> the CUDA attribute numbers the core answers. */
static int cuda_attribute_of(int hip_attr)
{
    switch (hip_attr) {
    case 56:
        return 1; /* MaxThreadsPerBlock */
    case 74:
        return 8; /* MaxSharedMemoryPerBlock */
    case 87:
        return 10; /* WarpSize */
    case 71:
        return 12; /* MaxRegistersPerBlock */
    case 63:
        return 16; /* MultiprocessorCount */
    case 57:
        return 39; /* MaxThreadsPerMultiProcessor */
    case 23:
        return 75; /* ComputeCapabilityMajor */
    case 61:
        return 76; /* ComputeCapabilityMinor */
    case 76:
        return 81; /* SharedMemPerMultiprocessor */
    case 10002:
        return 81; /* MaxSharedMemoryPerMultiprocessor (AMD specific) */
    case 72:
        return 82; /* MaxRegistersPerMultiprocessor */
    case 25:
        return 106; /* MaxBlocksPerMultiProcessor */
    default:
        return -1;
    }
}

EMU_EXPORT int hipDeviceGetAttribute(int *value, int attr, int device)
{
    int cuda = cuda_attribute_of(attr);
    if (!value)
        return 1; /* hipErrorInvalidValue */
    if (cuda < 0) {
        int ignored;
        return emu_device_attribute(&ignored, 0, device) == 101 ? 101 : 1; /* hipErrorInvalidDevice / Value */
    }
    return emu_device_attribute(value, cuda, device); /* 0, 1 or 101: HIP's codes are CUDA's here */
}

EMU_EXPORT int hipGetDeviceCount(int *count)
{
    return emu_device_count(count);
}
