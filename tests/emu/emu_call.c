/* emu_call.c: one emulated runtime call, and what it reports to: the subscriber (its
 * enter and exit callbacks, fired with one block of callback data written at the first
 * from the layout's field list), the per-thread external correlation stacks, and the
 * external correlation, API and device records, with the faults (drop, zero-time,
 * malformed) injected among them. */
#include <sys/syscall.h>
#include <unistd.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_core.h"

static _Atomic uint32_t g_device_id;
static _Atomic uint64_t g_next_correlation = 1;
static _Atomic uint64_t g_next_grid_id = 1;

static struct {
    _Atomic int claimed; /* a subscriber exists (Subscribe succeeded) */
    _Atomic int active;  /* fn/userdata are published */
    _Atomic(emu_callback_fn) fn;
    _Atomic(void *) userdata;
    _Atomic uint8_t domain_on[EMU_MAX_DOMAINS];
    _Atomic uint8_t cbid_on[EMU_MAX_CBIDS];
} g_sub;

static char g_context_token; /* the address is the emulated context handle */

typedef struct ext_stacks {
    uint64_t ids[EMU_EXT_KINDS][EMU_EXT_DEPTH];
    uint32_t depth[EMU_EXT_KINDS];
} ext_stacks;

static _Thread_local ext_stacks t_ext;
static _Thread_local uint32_t t_tid;

/* ---- external correlation ---- */

static int external_kind_ok(int kind)
{
    return kind > 0 && (uint32_t)kind < emu__vendor->external_kind_limit && kind < EMU_EXT_KINDS;
}

emu_result emu_push_external(int kind, uint64_t id)
{
    if (!external_kind_ok(kind))
        return emu__vendor->result.invalid_parameter;
    if (t_ext.depth[kind] == EMU_EXT_DEPTH)
        return emu__vendor->result.invalid_operation;
    t_ext.ids[kind][t_ext.depth[kind]++] = id;
    return emu__vendor->result.success;
}

emu_result emu_pop_external(int kind, uint64_t *id)
{
    if (!external_kind_ok(kind))
        return emu__vendor->result.invalid_parameter;
    if (t_ext.depth[kind] == 0)
        return emu__vendor->result.queue_empty;
    uint64_t top = t_ext.ids[kind][--t_ext.depth[kind]];
    if (id)
        *id = top;
    return emu__vendor->result.success;
}

/* ---- the subscriber ---- */

static int subscriber_ok(void *handle)
{
    return handle == (void *)&g_sub && atomic_load(&g_sub.claimed);
}

emu_result emu_subscribe(void **handle, emu_callback_fn fn, void *userdata)
{
    int expected = 0;
    if (!handle || !fn)
        return emu__vendor->result.invalid_parameter;
    if (emu__faults.subscribe_fail || !atomic_compare_exchange_strong(&g_sub.claimed, &expected, 1))
        return emu__vendor->result.multiple_subscribers;
    atomic_store(&g_sub.fn, fn);
    atomic_store(&g_sub.userdata, userdata);
    atomic_store_explicit(&g_sub.active, 1, memory_order_release);
    *handle = (void *)&g_sub;
    return emu__vendor->result.success;
}

static void clear_enables(void)
{
    for (int i = 0; i < EMU_MAX_DOMAINS; i++)
        atomic_store(&g_sub.domain_on[i], 0);
    for (int i = 0; i < EMU_MAX_CBIDS; i++)
        atomic_store(&g_sub.cbid_on[i], 0);
}

void emu__subscriber_reset(void)
{
    atomic_store(&g_sub.active, 0);
    clear_enables();
    atomic_store(&g_sub.claimed, 0);
}

emu_result emu_unsubscribe(void *handle)
{
    if (!subscriber_ok(handle))
        return emu__vendor->result.invalid_parameter;
    emu__subscriber_reset();
    return emu__vendor->result.success;
}

static int domain_ok(int domain)
{
    return domain > 0 && (uint32_t)domain < emu__vendor->callback_domain_limit && domain < EMU_MAX_DOMAINS;
}

emu_result emu_enable_domain(uint32_t enable, void *handle, int domain)
{
    if (!subscriber_ok(handle) || !domain_ok(domain))
        return emu__vendor->result.invalid_parameter;
    atomic_store(&g_sub.domain_on[domain], enable ? 1 : 0);
    if ((uint32_t)domain == emu__vendor->callback_domain_runtime) {
        for (uint32_t i = 0; i < emu__vendor->cbid_limit && i < EMU_MAX_CBIDS; i++)
            atomic_store(&g_sub.cbid_on[i], enable ? 1 : 0);
    }
    return emu__vendor->result.success;
}

emu_result emu_enable_callback(uint32_t enable, void *handle, int domain, uint32_t cbid)
{
    if (!subscriber_ok(handle) || !domain_ok(domain))
        return emu__vendor->result.invalid_parameter;
    if ((uint32_t)domain != emu__vendor->callback_domain_runtime)
        return emu__vendor->result.success; /* other domains never fire here */
    if (cbid >= emu__vendor->cbid_limit || cbid >= EMU_MAX_CBIDS)
        return emu__vendor->result.invalid_parameter;
    atomic_store(&g_sub.cbid_on[cbid], enable ? 1 : 0);
    return emu__vendor->result.success;
}

int emu_call_for_cbid(uint32_t cbid)
{
    for (int i = 0; i < WL_CALL_COUNT; i++) {
        if (emu__vendor->cbid[i] == cbid)
            return i;
    }
    return -1;
}

/* ---- one runtime call ---- */

typedef struct call_ctx {
    int call;
    const wl_stmt *st;
    uint32_t cbid;
    uint64_t correlation;
    uint64_t start, end;         /* the API call, vendor clock */
    uint64_t queued;             /* when the device work was placed */
    uint64_t dev_start, dev_end; /* the device work, vendor clock */
    int has_device_work;
    uint32_t levels;                      /* the launch's levels= the vendor has (1u << wl_level) */
    uint64_t level_start[WL_LEVEL_COUNT]; /* ... and their records' times, vendor clock */
    uint64_t level_end[WL_LEVEL_COUNT];
    int return_value;          /* what the emulated call returns (always 0) */
    uint64_t correlation_data; /* the subscriber's per-call slot */
    /* The callback data, written at the call's first callback and handed to both, as a
     * runtime hands its tracer one prebuilt struct: only the site changes at exit. */
    uint8_t *cb_block;           /* EMU_MAX_RECORD bytes on emu_runtime_call's stack */
    const emu_field_at *cb_site; /* the site's place in it, or NULL */
    emu_thread_counts *counts;   /* the calling thread's statistics */
    int cb_built;
} call_ctx;

static uint64_t next_correlation(void)
{
    uint64_t id;
    do
        id = atomic_fetch_add(&g_next_correlation, 1);
    while (id == 0);
    return id;
}

/* Every field, one by one (keep in step with call_ctx): an initializer of the whole
 * struct compiles to rep stos, whose start-up costs more than the rest of a plain call. */
static void call_ctx_init(call_ctx *c, int call, const wl_stmt *st, uint8_t *cb_block)
{
    c->call = call;
    c->st = st;
    c->cbid = emu__vendor->cbid[call];
    c->correlation = next_correlation();
    c->start = c->end = c->queued = c->dev_start = c->dev_end = 0;
    c->has_device_work = 0;
    c->levels = 0;
    c->return_value = 0;
    c->correlation_data = 0;
    c->cb_block = cb_block;
    c->cb_site = NULL;
    c->counts = NULL;
    c->cb_built = 0;
}

static uint32_t thread_id(void)
{
    if (!t_tid)
        t_tid = (uint32_t)syscall(SYS_gettid);
    return t_tid;
}

static const char *symbol_of(const call_ctx *c)
{
    return c->st && c->st->kind == WL_STMT_LAUNCH ? c->st->u.launch.kernel : NULL;
}

/* What a callback-data field carries for call c at site; 0 for a field a callback has not. */
static uint64_t callback_value(call_ctx *c, int field, uint32_t site)
{
    switch (field) {
    case EMU_F_CB_SITE:
        return site;
    case EMU_F_CB_FUNCTION_NAME:
        return (uintptr_t)emu__vendor->api_name[c->call];
    case EMU_F_CB_RETURN_VALUE_PTR:
        return (uintptr_t)&c->return_value;
    case EMU_F_CB_SYMBOL_NAME:
        return (uintptr_t)symbol_of(c);
    case EMU_F_CB_CONTEXT_PTR:
        return (uintptr_t)&g_context_token;
    case EMU_F_CB_CONTEXT_UID:
        return 1;
    case EMU_F_CB_CORRELATION_DATA:
        return (uintptr_t)&c->correlation_data;
    case EMU_F_CORRELATION:
        return c->correlation;
    default:
        return 0;
    }
}

/* The call's callback data, from the layout's field list (zero where no field is). */
static void build_callback_block(call_ctx *c, uint32_t site)
{
    const emu_layout *l = &emu__vendor->callback_data;
    memset(c->cb_block, 0, l->size);
    c->cb_site = NULL;
    for (uint32_t i = 0; i < l->nfields; i++) {
        const emu_field_at *f = &l->fields[i];
        emu__put_field(c->cb_block, f, callback_value(c, f->field, site));
        if (f->field == EMU_F_CB_SITE)
            c->cb_site = f;
    }
    if (emu__vendor->complete_callback_data)
        emu__vendor->complete_callback_data(c->cb_block, c->call, c->st);
    c->counts = emu__thread_counts();
    c->cb_built = 1;
}

static void fire_callback(call_ctx *c, uint32_t site)
{
    if (!atomic_load_explicit(&g_sub.active, memory_order_acquire) || c->cbid >= EMU_MAX_CBIDS ||
        !atomic_load_explicit(&g_sub.cbid_on[c->cbid], memory_order_relaxed))
        return;
    emu_callback_fn fn = atomic_load(&g_sub.fn);
    void *userdata = atomic_load(&g_sub.userdata);
    if (!c->cb_built)
        build_callback_block(c, site);
    else if (c->cb_site)
        emu__put_field(c->cb_block, c->cb_site, site);
    emu__count_callback_fired(c->counts);
    fn(userdata, (int)emu__vendor->callback_domain_runtime, c->cbid, c->cb_block);
}

static void emit_external_correlations(const call_ctx *c)
{
    if (!emu__kind_on(emu__vendor->kind.external_correlation))
        return;
    for (int k = 1; k < EMU_EXT_KINDS && (uint32_t)k < emu__vendor->external_kind_limit; k++) {
        if (t_ext.depth[k] == 0)
            continue;
        uint64_t v[EMU_F_COUNT] = {0};
        v[EMU_F_KIND] = emu__vendor->kind.external_correlation;
        v[EMU_F_EXTERNAL_KIND] = (uint64_t)k;
        v[EMU_F_EXTERNAL_ID] = t_ext.ids[k][t_ext.depth[k] - 1];
        v[EMU_F_CORRELATION] = c->correlation;
        emu__write_and_append(&emu__vendor->external_correlation, v);
        emu__count(&emu__stats.external_correlation_records);
    }
}

static void emit_api_record(const call_ctx *c)
{
    if (!emu__kind_on(emu__vendor->kind.runtime))
        return;
    uint64_t v[EMU_F_COUNT] = {0};
    v[EMU_F_KIND] = emu__vendor->kind.runtime;
    v[EMU_F_CBID] = c->cbid;
    v[EMU_F_START] = c->start;
    v[EMU_F_END] = c->end;
    v[EMU_F_PROCESS] = (uint64_t)getpid();
    v[EMU_F_THREAD] = thread_id();
    v[EMU_F_CORRELATION] = c->correlation;
    v[EMU_F_RETURN_VALUE] = (uint64_t)c->return_value;
    v[EMU_F_NAME] = (uintptr_t)emu__vendor->api_name[c->call]; /* vendors that name API records (MSPTI) */
    if (c->st && c->st->kind == WL_STMT_COLLECTIVE)
        v[EMU_F_NAME] = (uintptr_t)c->st->u.collective.call; /* the collective's own call */
    emu__write_and_append(&emu__vendor->api, v);
    emu__count(&emu__stats.api_records);
    for (int l = 0; l < WL_LEVEL_COUNT; l++) { /* the launch at the levels below the call */
        uint32_t kind = emu__vendor->level_kind[l];
        if (!(c->levels & (1u << l)) || !emu__kind_on(kind))
            continue;
        const char *name = emu__vendor->level_name[l];
        v[EMU_F_KIND] = kind;
        v[EMU_F_START] = c->level_start[l];
        v[EMU_F_END] = c->level_end[l];
        v[EMU_F_NAME] = (uintptr_t)(name ? name : c->st->u.launch.kernel);
        emu__write_and_append(&emu__vendor->api, v);
        emu__count(&emu__stats.api_records);
    }
}

#define LEVEL_GAP_NS 200 /* between the starts (and the ends) of nested levels: apart in any trace */

/* The launch's levels below the call, outermost first, entered before its device work is
 * placed and left, innermost first, after; each level starts and ends LEVEL_GAP_NS inside
 * the one around it. */
static void enter_levels(call_ctx *c)
{
    if (!c->st || c->st->kind != WL_STMT_LAUNCH || !c->st->u.launch.levels)
        return;
    uint64_t around = c->start;
    for (int l = 0; l < WL_LEVEL_COUNT; l++)
        if ((c->st->u.launch.levels & (1u << l)) && emu__vendor->level_kind[l]) {
            c->levels |= 1u << l;
            emu__wait_until(around + LEVEL_GAP_NS);
            around = c->level_start[l] = emu_now();
        }
}

static void leave_levels(call_ctx *c)
{
    if (!c->levels)
        return;
    uint64_t inner = 0;
    for (int l = WL_LEVEL_COUNT - 1; l >= 0; l--)
        if (c->levels & (1u << l)) {
            if (inner)
                emu__wait_until(inner + LEVEL_GAP_NS);
            inner = c->level_end[l] = emu_now();
        }
    emu__wait_until(inner + LEVEL_GAP_NS); /* before the call's own end */
}

/* The kernel kind records are written with: CONCURRENT_KERNEL when enabled, else KERNEL, else 0. */
static uint32_t kernel_kind(void)
{
    if (emu__kind_on(emu__vendor->kind.concurrent_kernel))
        return emu__vendor->kind.concurrent_kernel;
    return emu__kind_on(emu__vendor->kind.kernel) ? emu__vendor->kind.kernel : 0;
}

/* What every device record carries: its time on the device, where it ran, its call. */
static void device_values(const call_ctx *c, uint32_t stream, uint64_t v[EMU_F_COUNT])
{
    v[EMU_F_START] = c->dev_start;
    v[EMU_F_END] = c->dev_end;
    v[EMU_F_DEVICE] = atomic_load(&g_device_id);
    v[EMU_F_CONTEXT] = 1;
    v[EMU_F_STREAM] = stream;
    v[EMU_F_CORRELATION] = c->correlation;
}

static void kernel_values(const call_ctx *c, const wl_launch *l, uint64_t v[EMU_F_COUNT])
{
    v[EMU_F_KIND] = kernel_kind();
    device_values(c, l->stream, v);
    v[EMU_F_COMPLETED] = c->dev_end;
    v[EMU_F_QUEUED] = c->queued;
    v[EMU_F_SUBMITTED] = c->queued;
    v[EMU_F_GRID_X] = l->grid[0];
    v[EMU_F_GRID_Y] = l->grid[1];
    v[EMU_F_GRID_Z] = l->grid[2];
    v[EMU_F_BLOCK_X] = l->block[0];
    v[EMU_F_BLOCK_Y] = l->block[1];
    v[EMU_F_BLOCK_Z] = l->block[2];
    v[EMU_F_REGISTERS] = l->regs;
    v[EMU_F_STATIC_SMEM] = l->smem;
    v[EMU_F_DYNAMIC_SMEM] = l->dyn_smem;
    v[EMU_F_GRID_ID] = atomic_fetch_add(&g_next_grid_id, 1);
    v[EMU_F_NAME] = (uintptr_t)l->kernel;
    v[EMU_F_KERNEL_TYPE] = (uintptr_t)emu__vendor->kernel_type;
}

static void emit_zero_time_kernel(uint64_t v[EMU_F_COUNT])
{
    v[EMU_F_START] = v[EMU_F_END] = v[EMU_F_COMPLETED] = v[EMU_F_QUEUED] = v[EMU_F_SUBMITTED] = 0;
    emu__write_and_append(&emu__vendor->kernel, v);
    emu__count(&emu__stats.injected_zero_time);
}

static void emit_kernel_record(const call_ctx *c)
{
    uint64_t v[EMU_F_COUNT] = {0};
    if (!kernel_kind())
        return;
    kernel_values(c, &c->st->u.launch, v);
    if (emu__take_one(&emu__pending_drop)) {
        emu__count_drop();
    } else {
        emu__write_and_append(&emu__vendor->kernel, v);
        emu__count(&emu__stats.kernel_records);
    }
    if (emu__take_one(&emu__pending_zero_time))
        emit_zero_time_kernel(v);
}

static void emit_memcpy_record(const call_ctx *c)
{
    const wl_memcpy *m = &c->st->u.memcpy;
    uint64_t v[EMU_F_COUNT] = {0};
    if (!emu__kind_on(emu__vendor->kind.memcpy))
        return;
    if (emu__take_one(&emu__pending_drop)) {
        emu__count_drop();
        return;
    }
    v[EMU_F_KIND] = emu__vendor->kind.memcpy;
    v[EMU_F_COPY_KIND] = emu__vendor->copy_kind[m->dir & 3];
    v[EMU_F_SRC_KIND] = emu__vendor->src_memory_kind[m->dir & 3];
    v[EMU_F_DST_KIND] = emu__vendor->dst_memory_kind[m->dir & 3];
    v[EMU_F_FLAGS] = emu__vendor->memcpy_flags_sync;
    v[EMU_F_BYTES] = m->bytes;
    device_values(c, m->stream, v);
    v[EMU_F_RUNTIME_CORRELATION] = c->correlation;
    emu__write_and_append(&emu__vendor->memcpy, v);
    emu__count(&emu__stats.memcpy_records);
}

static void emit_memset_record(const call_ctx *c)
{
    const wl_memset *m = &c->st->u.memset;
    uint64_t v[EMU_F_COUNT] = {0};
    if (!emu__kind_on(emu__vendor->kind.memset))
        return;
    if (emu__take_one(&emu__pending_drop)) {
        emu__count_drop();
        return;
    }
    v[EMU_F_KIND] = emu__vendor->kind.memset;
    v[EMU_F_VALUE] = m->value;
    v[EMU_F_BYTES] = m->bytes;
    device_values(c, m->stream, v);
    v[EMU_F_FLAGS] = emu__vendor->memset_flags_async;
    v[EMU_F_MEMORY_KIND] = emu__vendor->memset_memory_kind;
    emu__write_and_append(&emu__vendor->memset, v);
    emu__count(&emu__stats.memset_records);
}

/* A kernel record of launch l, [start, end] on the device, whatever the kinds enabled. */
static void emit_bad_kernel(const wl_launch *l, uint64_t start, uint64_t end, uint64_t correlation)
{
    const emu_vendor *vd = emu__vendor;
    uint64_t v[EMU_F_COUNT] = {0};
    call_ctx c = {.dev_start = start, .dev_end = end, .queued = start, .correlation = correlation};
    kernel_values(&c, l, v);
    v[EMU_F_KIND] = vd->kind.concurrent_kernel ? vd->kind.concurrent_kernel : vd->kind.kernel;
    emu__write_and_append(&vd->kernel, v);
}

/* One bad record in the vendor's style (malformed=N). */
static void emit_malformed_record(void)
{
    const emu_vendor *vd = emu__vendor;
    if (vd->malformed_style == EMU_MALFORMED_UNKNOWN_KIND) {
        _Alignas(8) uint8_t junk[EMU_MAX_RECORD];
        memset(junk, 0xA5, vd->bogus_size);
        memcpy(junk, &vd->bogus_kind, 4);
        emu__append_record(junk, vd->bogus_size);
    } else if (vd->malformed_style == EMU_MALFORMED_END_BEFORE_START) {
        static const wl_launch bad = {.kernel = "devemu_malformed_kernel", .grid = {1, 1, 1}, .block = {1, 1, 1}};
        uint64_t now = emu_now();
        emit_bad_kernel(&bad, now, now - 1000, next_correlation());
    } else {
        static const wl_launch bad = {.kernel = "devemu_malformed_kernel", .grid = {0, 0, 0}, .block = {0, 0, 0}};
        uint64_t now = emu_now();
        emit_bad_kernel(&bad, now, now + 1000, 0);
    }
    emu__count(&emu__stats.injected_malformed);
}

static void emit_pending_malformed(void)
{
    if (atomic_load(&emu__pending_malformed) && emu__recording_possible() && emu__take_one(&emu__pending_malformed))
        emit_malformed_record();
}

/* At flush: what the workload gave no chance to inject, so that exactly N come out. */
void emu__inject_leftover_faults(void)
{
    while (atomic_load(&emu__pending_malformed) && emu__recording_possible() && emu__take_one(&emu__pending_malformed))
        emit_malformed_record();
    while (kernel_kind() && emu__take_one(&emu__pending_zero_time)) {
        static const wl_launch leftover = {.kernel = "devemu_zero_time_kernel", .grid = {1, 1, 1}, .block = {1, 1, 1}};
        uint64_t v[EMU_F_COUNT] = {0};
        call_ctx c = {.correlation = next_correlation()};
        kernel_values(&c, &leftover, v);
        emit_zero_time_kernel(v);
    }
}

static void run_device_work(call_ctx *c)
{
    const wl_stmt *st = c->st;
    uint64_t dur_ns;
    uint32_t stream;
    if (!st)
        return;
    switch (st->kind) {
    case WL_STMT_LAUNCH:
        dur_ns = st->u.launch.dur_ns;
        stream = st->u.launch.stream;
        break;
    case WL_STMT_MEMCPY:
        dur_ns = st->u.memcpy.dur_ns;
        stream = st->u.memcpy.stream;
        break;
    case WL_STMT_MEMSET:
        dur_ns = st->u.memset.dur_ns;
        stream = st->u.memset.stream;
        break;
    case WL_STMT_COLLECTIVE:
        dur_ns = st->u.collective.dur_ns;
        stream = st->u.collective.stream;
        break;
    case WL_STMT_SYNC:
        emu__wait_until(emu__timeline_last_end(st->u.sync.device_wide, st->u.sync.stream));
        return;
    default:
        return;
    }
    c->queued = emu_now();
    c->dev_start = emu__timeline_place(stream, c->queued, emu__vendor_duration(dur_ns));
    c->dev_end = c->dev_start + emu__vendor_duration(dur_ns);
    c->has_device_work = 1;
    if (st->kind == WL_STMT_MEMCPY)
        emu__wait_until(c->dev_end); /* cudaMemcpy is synchronous */
}

/* A collective on its stream, with the call's correlation id (the vendor's communication record). */
static void emit_communication_record(const call_ctx *c)
{
    const wl_collective *k = &c->st->u.collective;
    const emu_vendor *vd = emu__vendor;
    uint64_t v[EMU_F_COUNT] = {0};
    if (!vd->kind.communication || !emu__kind_on(vd->kind.communication))
        return;
    if (emu__take_one(&emu__pending_drop)) {
        emu__count_drop();
        return;
    }
    v[EMU_F_KIND] = vd->kind.communication;
    device_values(c, k->stream, v);
    v[EMU_F_DATA_TYPE] = vd->dtype[k->dtype];
    v[EMU_F_ELEMENTS] = k->count;
    v[EMU_F_ALGORITHM] = (uintptr_t)k->alg;
    v[EMU_F_NAME] = (uintptr_t)k->name;
    v[EMU_F_COMM_NAME] = (uintptr_t)k->comm;
    emu__write_and_append(&vd->communication, v);
}

/* An allocation or release (alloc/free statements), at the call's end, with its correlation id. */
static void emit_memory_record(const call_ctx *c)
{
    const wl_memory *m = &c->st->u.memory;
    const emu_vendor *vd = emu__vendor;
    uint64_t v[EMU_F_COUNT] = {0};
    if (!vd->kind.memory || !emu__kind_on(vd->kind.memory))
        return;
    v[EMU_F_KIND] = vd->kind.memory;
    v[EMU_F_MEMORY_OP] = c->st->kind == WL_STMT_FREE ? vd->memory_release : vd->memory_allocation;
    v[EMU_F_MEMORY_KIND] = 1; /* device memory */
    v[EMU_F_CORRELATION] = c->correlation;
    v[EMU_F_START] = c->start;
    v[EMU_F_END] = c->end;
    v[EMU_F_ADDRESS] = m->address;
    v[EMU_F_BYTES] = m->bytes;
    v[EMU_F_PROCESS] = (uint64_t)getpid();
    v[EMU_F_DEVICE] = atomic_load(&g_device_id);
    v[EMU_F_STREAM] = m->stream;
    emu__write_and_append(&vd->memory, v);
}

void emu_marker(const wl_stmt *st)
{
    const emu_vendor *vd = emu__vendor;
    static _Thread_local uint64_t open_ids[64];
    static _Thread_local size_t nopen;
    if (!vd || !vd->kind.marker)
        return;
    uint64_t id;
    if (st->kind == WL_STMT_MARK_PUSH) {
        id = st->u.mark.id;
        if (nopen < 64)
            open_ids[nopen++] = id;
    } else {
        if (nopen == 0)
            return;
        id = open_ids[--nopen];
    }
    if (!emu__kind_on(vd->kind.marker))
        return;
    uint64_t v[EMU_F_COUNT] = {0};
    v[EMU_F_KIND] = vd->kind.marker;
    v[EMU_F_MARKER_FLAG] = st->kind == WL_STMT_MARK_PUSH ? vd->marker_start : vd->marker_end;
    v[EMU_F_SOURCE_KIND] = 0; /* host */
    v[EMU_F_TIMESTAMP] = emu_now();
    v[EMU_F_MARKER_ID] = id;
    v[EMU_F_PROCESS] = (uint64_t)getpid();
    v[EMU_F_THREAD] = thread_id();
    v[EMU_F_NAME] = st->kind == WL_STMT_MARK_PUSH ? (uintptr_t)st->u.mark.name : 0;
    emu__write_and_append(&vd->marker, v);
}

static void emit_device_record(const call_ctx *c)
{
    if (c->st && (c->st->kind == WL_STMT_ALLOC || c->st->kind == WL_STMT_FREE)) {
        emit_memory_record(c);
        return;
    }
    if (!c->has_device_work)
        return;
    if (c->st->kind == WL_STMT_COLLECTIVE) {
        emit_communication_record(c);
        return;
    }
    if (c->st->kind == WL_STMT_LAUNCH)
        emit_kernel_record(c);
    else if (c->st->kind == WL_STMT_MEMCPY)
        emit_memcpy_record(c);
    else
        emit_memset_record(c);
}

int emu_runtime_call(int call, const wl_stmt *st)
{
    if (!emu__vendor || call < 0 || call >= WL_CALL_COUNT)
        return -1;
    emu_ensure_injected();
    _Alignas(8) uint8_t cb_block[EMU_MAX_RECORD]; /* written only when a callback fires */
    call_ctx c;
    call_ctx_init(&c, call, st, cb_block);
    emu__count(&emu__stats.runtime_calls);
    fire_callback(&c, emu__vendor->callback_site_enter);
    c.start = emu_now();
    emit_external_correlations(&c);
    enter_levels(&c);
    run_device_work(&c);
    leave_levels(&c);
    c.end = emu_now();
    emit_api_record(&c);
    emit_device_record(&c);
    emit_pending_malformed();
    fire_callback(&c, emu__vendor->callback_site_exit);
    return 0;
}

void emu__correlation_restart(uint64_t first)
{
    atomic_store(&g_next_correlation, first ? first : 1);
}

void emu_core_set_device(uint32_t device_id)
{
    atomic_store(&g_device_id, device_id);
}
