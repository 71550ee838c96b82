/* emu_drive.c: the application side of the emulated runtime.
 *
 * Installs a vendor table when its emulator is loaded (reading DEVEMU_FAULTS), loads
 * the injection library the way the vendor's driver does, answers device attribute
 * queries from the workload's `device` statement, and exports the devemu_* driving API
 * (devemu.h) that test programs and emu-run use to play a workload. */
#include "emu.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* CUDA device attribute numbers (driver_types.h, cudaDeviceAttr). MetaX's wcuda*
 * wrappers take the same numbers (vendor-abi.md). */
enum cuda_device_attribute {
    CUDA_ATTR_MAX_THREADS_PER_BLOCK = 1,
    CUDA_ATTR_MAX_SHARED_MEMORY_PER_BLOCK = 8,
    CUDA_ATTR_WARP_SIZE = 10,
    CUDA_ATTR_MAX_REGISTERS_PER_BLOCK = 12,
    CUDA_ATTR_MULTIPROCESSOR_COUNT = 16,
    CUDA_ATTR_MAX_THREADS_PER_MULTIPROCESSOR = 39,
    CUDA_ATTR_COMPUTE_CAPABILITY_MAJOR = 75,
    CUDA_ATTR_COMPUTE_CAPABILITY_MINOR = 76,
    CUDA_ATTR_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81,
    CUDA_ATTR_MAX_REGISTERS_PER_MULTIPROCESSOR = 82,
    CUDA_ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
    CUDA_ATTR_MAX_BLOCKS_PER_MULTIPROCESSOR = 106,
};

enum { CUDA_SUCCESS = 0, CUDA_ERROR_INVALID_VALUE = 1, CUDA_ERROR_INVALID_DEVICE = 101 };

/* Properties the `device` statement does not carry. */
#define EMU_COMPUTE_MAJOR 8
#define EMU_COMPUTE_MINOR 0
#define EMU_SHARED_MEMORY_PER_BLOCK 49152

/* The device when the workload declares none: the parity workload's device. */
static const wl_device g_default_device = {
    .id = 0,
    .name = "EmulatedGPU",
    .sms = 104,
    .warp = 64,
    .max_threads_per_sm = 2048,
    .max_blocks_per_sm = 32,
    .regs_per_sm = 65536,
    .smem_per_sm = 65536,
    .max_threads_per_block = 1024,
};

static struct {
    pthread_mutex_t lock;
    wl_workload **all; /* every workload loaded, never freed: records point at their names */
    size_t n, cap;
    _Atomic(wl_workload *) current;
} g_workloads = {.lock = PTHREAD_MUTEX_INITIALIZER};

static struct {
    pthread_mutex_t lock;
    char **names; /* owned, never freed: records point at them */
    size_t n, cap;
} g_kernel_names = {.lock = PTHREAD_MUTEX_INITIALIZER};

static uint64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void emu_install(const emu_vendor *v)
{
    char err[512];
    emu_faults faults;
    if (emu_faults_parse(getenv("DEVEMU_FAULTS"), v, &faults, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        fflush(NULL);
        /* Not exit(): we are inside the loader (dlopen or program start), where atexit
         * handlers must not run; and the raw system call, because sanitizers object to
         * any exit from inside dlopen. */
        syscall(SYS_exit_group, 2);
    }
    emu_core_install(v, &faults, realtime_ns());
}

/* ---- injection: what the vendor's driver does with e.g. CUDA_INJECTION64_PATH ---- */

static pthread_once_t g_inject_once = PTHREAD_ONCE_INIT;

static void *symbol(void *handle, const char *name)
{
    dlerror();
    return dlsym(handle, name);
}

static void load_injection(void)
{
    const char *env = emu_vendor_get()->injection_env;
    const char *path = env ? getenv(env) : NULL;
    if (!path || !*path)
        return;
    void *lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
        fprintf(stderr, "devemu: %s=%s: %s\n", env, path, dlerror());
        return;
    }
    void *sym = symbol(lib, "InitializeInjection");
    int (*initialize)(void);
    if (!sym) {
        fprintf(stderr, "devemu: %s=%s: no InitializeInjection symbol\n", env, path);
        return;
    }
    memcpy(&initialize, &sym, sizeof sym);
    initialize();
}

void emu_ensure_injected(void)
{
    pthread_once(&g_inject_once, load_injection);
}

/* ---- device attributes ---- */

static const wl_device *find_device(int device)
{
    wl_workload *w = atomic_load(&g_workloads.current);
    if (!w || w->ndevices == 0)
        return device == (int)g_default_device.id ? &g_default_device : NULL;
    for (size_t i = 0; i < w->ndevices; i++) {
        if ((int)w->devices[i].id == device)
            return &w->devices[i];
    }
    return NULL;
}

/* The value of a CUDA device attribute for d; -1 for an attribute not emulated. */
static int attribute_value(const wl_device *d, int attr, int *value)
{
    uint32_t v;
    switch (attr) {
    case CUDA_ATTR_MAX_THREADS_PER_BLOCK:
        v = d->max_threads_per_block;
        break;
    case CUDA_ATTR_MAX_SHARED_MEMORY_PER_BLOCK:
        v = d->smem_per_sm < EMU_SHARED_MEMORY_PER_BLOCK ? d->smem_per_sm : EMU_SHARED_MEMORY_PER_BLOCK;
        break;
    case CUDA_ATTR_WARP_SIZE:
        v = d->warp;
        break;
    case CUDA_ATTR_MAX_REGISTERS_PER_BLOCK:
    case CUDA_ATTR_MAX_REGISTERS_PER_MULTIPROCESSOR:
        v = d->regs_per_sm;
        break;
    case CUDA_ATTR_MULTIPROCESSOR_COUNT:
        v = d->sms;
        break;
    case CUDA_ATTR_MAX_THREADS_PER_MULTIPROCESSOR:
        v = d->max_threads_per_sm;
        break;
    case CUDA_ATTR_COMPUTE_CAPABILITY_MAJOR:
        v = EMU_COMPUTE_MAJOR;
        break;
    case CUDA_ATTR_COMPUTE_CAPABILITY_MINOR:
        v = EMU_COMPUTE_MINOR;
        break;
    case CUDA_ATTR_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR:
    case CUDA_ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
        v = d->smem_per_sm;
        break;
    case CUDA_ATTR_MAX_BLOCKS_PER_MULTIPROCESSOR:
        v = d->max_blocks_per_sm;
        break;
    default:
        return -1;
    }
    *value = v > INT_MAX ? INT_MAX : (int)v;
    return 0;
}

int emu_device_attribute(int *value, int attr, int device)
{
    const wl_device *d = find_device(device);
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    if (!d)
        return CUDA_ERROR_INVALID_DEVICE;
    return attribute_value(d, attr, value) == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

int emu_device_count(int *count)
{
    wl_workload *w = atomic_load(&g_workloads.current);
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    *count = w && w->ndevices ? (int)w->ndevices : 1;
    return CUDA_SUCCESS;
}

/* ---- annotations: the workload's `op push/pop` ---- */

static pthread_once_t g_annotate_once = PTHREAD_ONCE_INIT;
static int (*g_annotate_push)(const char *name, uint64_t id);
static int (*g_annotate_pop)(void);

static void resolve_annotate(void)
{
    void *push = symbol(RTLD_DEFAULT, "devtrace_annotate_push");
    void *pop = symbol(RTLD_DEFAULT, "devtrace_annotate_pop");
    if (push && pop) {
        memcpy(&g_annotate_push, &push, sizeof push);
        memcpy(&g_annotate_pop, &pop, sizeof pop);
    }
}

EMU_EXPORT int devemu_op_push(const char *name, uint64_t id)
{
    emu_ensure_injected();
    pthread_once(&g_annotate_once, resolve_annotate);
    if (g_annotate_push) {
        g_annotate_push(name ? name : "", id);
        return 0;
    }
    const emu_vendor *v = emu_vendor_get();
    return emu_push_external((int)v->external_kind_custom0, id) == v->result.success ? 0 : -1;
}

EMU_EXPORT int devemu_op_pop(void)
{
    uint64_t id;
    emu_ensure_injected();
    pthread_once(&g_annotate_once, resolve_annotate);
    if (g_annotate_pop) {
        g_annotate_pop();
        return 0;
    }
    const emu_vendor *v = emu_vendor_get();
    return emu_pop_external((int)v->external_kind_custom0, &id) == v->result.success ? 0 : -1;
}

/* ---- workloads ---- */

EMU_EXPORT int devemu_load_workload(const char *path, char *err, size_t errlen)
{
    wl_workload *w = calloc(1, sizeof *w);
    if (!w || !path) {
        free(w);
        if (err && errlen)
            snprintf(err, errlen, "devemu: %s", path ? "out of memory" : "no workload path");
        return -1;
    }
    if (wl_parse_file(path, w, err, errlen) < 0) {
        free(w);
        return -1;
    }
    pthread_mutex_lock(&g_workloads.lock);
    if (g_workloads.n == g_workloads.cap) {
        size_t ncap = g_workloads.cap ? g_workloads.cap * 2 : 4;
        wl_workload **p = realloc(g_workloads.all, ncap * sizeof *p);
        if (!p) {
            pthread_mutex_unlock(&g_workloads.lock);
            wl_free(w);
            free(w);
            if (err && errlen)
                snprintf(err, errlen, "devemu: out of memory");
            return -1;
        }
        g_workloads.all = p;
        g_workloads.cap = ncap;
    }
    g_workloads.all[g_workloads.n++] = w;
    atomic_store(&g_workloads.current, w);
    pthread_mutex_unlock(&g_workloads.lock);
    emu_core_set_device(w->ndevices ? w->devices[0].id : g_default_device.id);
    return 0;
}

static int run_statement(const wl_stmt *st)
{
    switch (st->kind) {
    case WL_STMT_OP_PUSH:
        return devemu_op_push(st->u.op.name, st->u.op.id);
    case WL_STMT_OP_POP:
        return devemu_op_pop();
    case WL_STMT_API:
        return emu_runtime_call(st->u.call, NULL);
    case WL_STMT_LAUNCH:
        return emu_runtime_call(WL_CALL_LAUNCH, st);
    case WL_STMT_MEMCPY:
        return emu_runtime_call(WL_CALL_MEMCPY, st);
    case WL_STMT_MEMSET:
        return emu_runtime_call(WL_CALL_MEMSET, st);
    case WL_STMT_SYNC:
        return emu_runtime_call(st->u.sync.device_wide ? WL_CALL_SYNC_DEVICE : WL_CALL_SYNC_STREAM, st);
    case WL_STMT_COLLECTIVE:
        return emu_runtime_call(WL_CALL_COLLECTIVE, st);
    case WL_STMT_ALLOC:
        return emu_runtime_call(WL_CALL_MALLOC, st);
    case WL_STMT_FREE:
        return emu_runtime_call(WL_CALL_FREE, st);
    case WL_STMT_MARK_PUSH:
    case WL_STMT_MARK_POP:
        emu_marker(st);
        return 0;
    default:
        return 0; /* device: declared, nothing to run */
    }
}

EMU_EXPORT int devemu_run(void)
{
    wl_workload *w = atomic_load(&g_workloads.current);
    int rc = 0;
    if (!w)
        return -1;
    for (size_t i = 0; i < w->nstmts; i++)
        rc |= run_statement(&w->stmts[i]);
    return rc ? -1 : 0;
}

/* ---- single calls ---- */

/* A stable copy of a kernel name (records keep pointing at it). */
static const char *intern_kernel_name(const char *name)
{
    const char *found = NULL;
    pthread_mutex_lock(&g_kernel_names.lock);
    for (size_t i = 0; i < g_kernel_names.n && !found; i++) {
        if (strcmp(g_kernel_names.names[i], name) == 0)
            found = g_kernel_names.names[i];
    }
    if (!found && g_kernel_names.n == g_kernel_names.cap) {
        size_t ncap = g_kernel_names.cap ? g_kernel_names.cap * 2 : 16;
        char **p = realloc(g_kernel_names.names, ncap * sizeof *p);
        if (p) {
            g_kernel_names.names = p;
            g_kernel_names.cap = ncap;
        }
    }
    if (!found && g_kernel_names.n < g_kernel_names.cap) {
        char *copy = strdup(name);
        if (copy)
            found = g_kernel_names.names[g_kernel_names.n++] = copy;
    }
    pthread_mutex_unlock(&g_kernel_names.lock);
    return found;
}

EMU_EXPORT int devemu_call(int generic)
{
    if (generic < 0 || generic >= WL_CALL_COUNT)
        return -1;
    return emu_runtime_call(generic, NULL);
}

EMU_EXPORT int devemu_launch(const char *mangled, uint32_t grid_x, uint32_t block_x, uint64_t dur_ns, uint32_t stream)
{
    wl_stmt st = {.kind = WL_STMT_LAUNCH};
    if (!mangled || !*mangled || grid_x == 0 || block_x == 0)
        return -1;
    st.u.launch =
        (wl_launch){.grid = {grid_x, 1, 1}, .block = {block_x, 1, 1}, .regs = 32, .dur_ns = dur_ns, .stream = stream};
    st.u.launch.kernel = (char *)intern_kernel_name(mangled);
    if (!st.u.launch.kernel)
        return -1;
    return emu_runtime_call(WL_CALL_LAUNCH, &st);
}

EMU_EXPORT int devemu_memcpy(int dir, uint64_t bytes, uint64_t dur_ns, uint32_t stream)
{
    wl_stmt st = {.kind = WL_STMT_MEMCPY};
    if (dir < WL_COPY_HTOD || dir > WL_COPY_DTOD || bytes == 0)
        return -1;
    st.u.memcpy = (wl_memcpy){.dir = dir, .bytes = bytes, .dur_ns = dur_ns, .stream = stream};
    return emu_runtime_call(WL_CALL_MEMCPY, &st);
}

EMU_EXPORT int devemu_memset(uint64_t bytes, uint32_t value, uint64_t dur_ns, uint32_t stream)
{
    wl_stmt st = {.kind = WL_STMT_MEMSET};
    if (bytes == 0 || value > 255)
        return -1;
    st.u.memset = (wl_memset){.bytes = bytes, .value = value, .dur_ns = dur_ns, .stream = stream};
    return emu_runtime_call(WL_CALL_MEMSET, &st);
}

EMU_EXPORT int devemu_sync_stream(uint32_t stream)
{
    wl_stmt st = {.kind = WL_STMT_SYNC, .u.sync = {.device_wide = 0, .stream = stream}};
    return emu_runtime_call(WL_CALL_SYNC_STREAM, &st);
}

EMU_EXPORT int devemu_sync_device(void)
{
    wl_stmt st = {.kind = WL_STMT_SYNC, .u.sync = {.device_wide = 1}};
    return emu_runtime_call(WL_CALL_SYNC_DEVICE, &st);
}

/* ---- control ---- */

EMU_EXPORT int devemu_set_faults(const char *spec, char *err, size_t errlen)
{
    emu_faults faults;
    if (emu_faults_parse(spec, emu_vendor_get(), &faults, err, errlen) < 0)
        return -1;
    emu_core_set_faults(&faults);
    return 0;
}

EMU_EXPORT void devemu_reset(void)
{
    emu_core_reset();
}

EMU_EXPORT void devemu_get_stats(devemu_stats *out)
{
    if (out)
        emu_stats_get(out);
}

EMU_EXPORT const char *devemu_vendor(void)
{
    return emu_vendor_get()->name;
}

EMU_EXPORT size_t devemu_describe(char *buf, size_t len)
{
    const emu_vendor *v = emu_vendor_get();
    int records_cbid = 0;
    for (uint32_t i = 0; i < v->api.nfields; i++)
        records_cbid |= v->api.fields[i].field == EMU_F_CBID;
    size_t used = 0;
    int n = snprintf(buf, len, "{\"vendor\": \"%s\", \"records_cbid\": %s, \"calls\": {", v->name,
                     records_cbid ? "true" : "false");
    used += n > 0 ? (size_t)n : 0;
    for (int call = 0; call < WL_CALL_COUNT; call++) {
        n = snprintf(used < len ? buf + used : NULL, used < len ? len - used : 0,
                     "%s\"%s\": {\"name\": \"%s\", \"cbid\": %u}", call ? ", " : "", wl_call_name(call),
                     v->api_name[call] ? v->api_name[call] : "", (unsigned)v->cbid[call]);
        used += n > 0 ? (size_t)n : 0;
    }
    n = snprintf(used < len ? buf + used : NULL, used < len ? len - used : 0, "}}");
    used += n > 0 ? (size_t)n : 0;
    return used;
}
