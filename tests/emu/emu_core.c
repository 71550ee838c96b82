/* emu_core.c: the emulated runtime behind every CUPTI-shaped vendor emulator: the vendor
 * table installed and checked, the faults armed, the statistics, the result strings, and
 * the reset between tests.
 *
 * Each runtime call (emu_call.c) fires the subscriber's enter/exit callbacks, appends the
 * external correlation, API and device records (written through the vendor's layout
 * table) into buffers obtained from the tracer's buffer-requested callback, and hands full
 * buffers back through buffer-completed (emu_buffers.c), outside every emulator lock, on
 * the thread that filled them (FlushAll: on the flushing thread). Device work is placed on
 * a virtual per-stream timeline in the vendor clock (emu_clock.c). Many threads may call at
 * once: records are appended under one mutex, external correlation stacks are per thread,
 * counters are atomic (the callback count per thread), and every record is either
 * delivered or counted as dropped. emu_core.h is what these files share. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_core.h"

const emu_vendor *emu__vendor;
emu_faults emu__faults;
emu_stat_counters emu__stats;
_Atomic uint64_t emu__pending_zero_time, emu__pending_malformed, emu__pending_drop, emu__pending_refuse;
static uint64_t g_load_realtime_ns;

_Noreturn void emu__die(const char *what)
{
    fprintf(stderr, "devemu: %s\n", what);
    abort();
}

/* ---- per-thread statistics ----
 *
 * callbacks_fired grows twice per traced call: counted by the calling thread in a record
 * of its own, so that threads calling at once share no cache line for it. A read sums
 * every record (and the fallback counter) less the sum at the last reset; a reset writes
 * no record, so no count of a thread calling meanwhile is lost or doubled. A record
 * outlives its thread: released at the thread's exit, adopted by a later thread. */
struct emu_thread_counts {
    struct emu_thread_counts *next;   /* g_thread_counts.all: pushed once, never removed */
    _Atomic int owned;                /* a live thread counts here */
    _Atomic uint64_t callbacks_fired; /* written by the owning thread alone */
};

static struct {
    _Atomic(emu_thread_counts *) all;
    _Atomic uint64_t callbacks_fired_unowned; /* threads that could get no record */
    _Atomic uint64_t callbacks_fired_at_reset;
    pthread_once_t once;
    pthread_key_t key;
    int has_key;
} g_thread_counts = {.once = PTHREAD_ONCE_INIT};

static _Thread_local emu_thread_counts *t_counts;

static void thread_counts_release(void *p)
{
    emu_thread_counts *t = p;
    t_counts = NULL;
    atomic_store_explicit(&t->owned, 0, memory_order_release);
}

static void thread_counts_make_key(void)
{
    g_thread_counts.has_key = pthread_key_create(&g_thread_counts.key, thread_counts_release) == 0;
}

__attribute__((destructor)) static void thread_counts_unload(void)
{
    if (g_thread_counts.has_key)
        pthread_key_delete(g_thread_counts.key); /* no exiting thread calls into an unloaded library */
}

/* The calling thread's record: adopted from an exited thread, else made; NULL when none
 * can be had (the thread then counts in the shared fallback). */
static __attribute__((noinline)) emu_thread_counts *thread_counts_attach(void)
{
    pthread_once(&g_thread_counts.once, thread_counts_make_key);
    if (!g_thread_counts.has_key)
        return NULL;
    emu_thread_counts *t = atomic_load(&g_thread_counts.all);
    for (; t; t = t->next) {
        int unowned = 0;
        if (atomic_compare_exchange_strong(&t->owned, &unowned, 1))
            break;
    }
    if (!t) {
        t = calloc(1, sizeof *t);
        if (!t)
            return NULL;
        atomic_init(&t->owned, 1);
        t->next = atomic_load(&g_thread_counts.all);
        while (!atomic_compare_exchange_weak(&g_thread_counts.all, &t->next, t))
            ;
    }
    if (pthread_setspecific(g_thread_counts.key, t) != 0) {
        atomic_store(&t->owned, 0);
        return NULL;
    }
    t_counts = t;
    return t;
}

emu_thread_counts *emu__thread_counts(void)
{
    emu_thread_counts *t = t_counts;
    return __builtin_expect(t != NULL, 1) ? t : thread_counts_attach();
}

void emu__count_callback_fired(emu_thread_counts *t)
{
    if (!t) {
        emu__count(&g_thread_counts.callbacks_fired_unowned);
        return;
    }
    uint64_t n = atomic_load_explicit(&t->callbacks_fired, memory_order_relaxed);
    atomic_store_explicit(&t->callbacks_fired, n + 1, memory_order_relaxed);
}

static uint64_t callbacks_fired_total(void)
{
    uint64_t n = atomic_load(&g_thread_counts.callbacks_fired_unowned);
    for (emu_thread_counts *t = atomic_load(&g_thread_counts.all); t; t = t->next)
        n += atomic_load_explicit(&t->callbacks_fired, memory_order_relaxed);
    return n;
}

/* ---- layouts ---- */

const emu_field_at *emu_layout_find(const emu_layout *layout, int field)
{
    for (uint32_t i = 0; i < layout->nfields; i++) {
        if (layout->fields[i].field == field)
            return &layout->fields[i];
    }
    return NULL;
}

void emu__put_field(uint8_t *dst, const emu_field_at *f, uint64_t v)
{
    uint8_t u8 = (uint8_t)v;
    uint16_t u16 = (uint16_t)v;
    uint32_t u32 = (uint32_t)v;
    switch (f->width) {
    case 1:
        memcpy(dst + f->offset, &u8, 1);
        break;
    case 2:
        memcpy(dst + f->offset, &u16, 2);
        break;
    case 4:
        memcpy(dst + f->offset, &u32, 4);
        break;
    default:
        memcpy(dst + f->offset, &v, 8);
        break;
    }
}

void emu__layout_write(const emu_layout *l, uint8_t *dst, const uint64_t values[EMU_F_COUNT])
{
    memset(dst, 0, l->size);
    for (uint32_t i = 0; i < l->nfields; i++)
        emu__put_field(dst, &l->fields[i], values[l->fields[i].field]);
}

static void check_layout(const emu_layout *l)
{
    char msg[256];
    if (l->size == 0 || l->size > EMU_MAX_RECORD || l->size % 8 != 0) {
        snprintf(msg, sizeof msg, "vendor table: %s has a bad size %u", l->name, (unsigned)l->size);
        emu__die(msg);
    }
    for (uint32_t i = 0; i < l->nfields; i++) {
        const emu_field_at *f = &l->fields[i];
        int width_ok = f->width == 1 || f->width == 2 || f->width == 4 || f->width == 8;
        if (!width_ok || f->field >= EMU_F_COUNT || f->offset + f->width > l->size ||
            (!l->packed && f->offset % f->width != 0)) {
            snprintf(msg, sizeof msg, "vendor table: %s field %u at %u width %u is not valid", l->name,
                     (unsigned)f->field, (unsigned)f->offset, (unsigned)f->width);
            emu__die(msg);
        }
    }
}

/* ---- result strings ---- */

#define EMU_RESULT_NAMES(X)                                             \
    X(success, "SUCCESS")                                               \
    X(invalid_parameter, "ERROR_INVALID_PARAMETER")                     \
    X(invalid_operation, "ERROR_INVALID_OPERATION")                     \
    X(max_limit_reached, "ERROR_MAX_LIMIT_REACHED")                     \
    X(not_initialized, "ERROR_NOT_INITIALIZED")                         \
    X(queue_empty, "ERROR_QUEUE_EMPTY")                                 \
    X(invalid_kind, "ERROR_INVALID_KIND")                               \
    X(multiple_subscribers, "ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED") \
    X(unknown, "ERROR_UNKNOWN")

#define EMU__COUNT_ONE(field, text) +1
static char g_result_names[0 EMU_RESULT_NAMES(EMU__COUNT_ONE)][64];

static void build_result_names(void)
{
    int i = 0;
#define EMU__BUILD_NAME(field, text) \
    snprintf(g_result_names[i++], sizeof g_result_names[0], "%s%s", emu__vendor->result_prefix, text);
    EMU_RESULT_NAMES(EMU__BUILD_NAME)
#undef EMU__BUILD_NAME
}

emu_result emu_result_string(emu_result code, const char **str)
{
    int i = 0;
    if (!str)
        return emu__vendor->result.invalid_parameter;
#define EMU__MATCH_NAME(field, text)         \
    if (code == emu__vendor->result.field) { \
        *str = g_result_names[i];            \
        return emu__vendor->result.success;  \
    }                                        \
    i++;
    EMU_RESULT_NAMES(EMU__MATCH_NAME)
#undef EMU__MATCH_NAME
    *str = NULL;
    return emu__vendor->result.invalid_parameter;
}

/* ---- installation, faults, reset, statistics ---- */

static void arm_faults(void)
{
    atomic_store(&emu__pending_zero_time, emu__faults.zero_time);
    atomic_store(&emu__pending_malformed, emu__faults.malformed);
    atomic_store(&emu__pending_drop, emu__faults.drop);
    atomic_store(&emu__pending_refuse, emu__faults.refuse_buffer);
    int64_t epoch_ns = emu__vendor->clock_epoch_ns;
    long double rate = emu__vendor->clock_rate;
    if (emu__faults.has_epoch)
        epoch_ns = emu__faults.epoch_at_load ? (int64_t)g_load_realtime_ns : emu__faults.clock_epoch_ns;
    if (emu__faults.has_rate)
        rate = emu__faults.clock_rate;
    emu__clock_set(epoch_ns, rate);
}

void emu_core_set_faults(const emu_faults *f)
{
    emu__faults = *f;
    arm_faults();
}

void emu_core_install(const emu_vendor *v, const emu_faults *f, uint64_t load_realtime_ns)
{
    const emu_layout *layouts[] = {&v->kernel,       &v->memcpy, &v->memset, &v->api, &v->external_correlation,
                                   &v->callback_data};
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
        check_layout(layouts[i]);
    emu__vendor = v;
    g_load_realtime_ns = load_realtime_ns;
    emu__correlation_restart(v->first_correlation);
    build_result_names();
    emu_core_set_faults(f);
}

const emu_vendor *emu_vendor_get(void)
{
    return emu__vendor;
}

void emu_core_reset(void)
{
    emu__buffers_reset();
    emu__subscriber_reset();
    emu__clock_reset();
#define EMU__ZERO(name) atomic_store(&emu__stats.name, 0);
    EMU_STAT_NAMES(EMU__ZERO)
#undef EMU__ZERO
    atomic_store(&g_thread_counts.callbacks_fired_at_reset, callbacks_fired_total());
    arm_faults();
}

void emu_stats_get(devemu_stats *out)
{
#define EMU__READ(name) out->name = atomic_load(&emu__stats.name);
    EMU_STAT_NAMES(EMU__READ)
#undef EMU__READ
    out->callbacks_fired = callbacks_fired_total() - atomic_load(&g_thread_counts.callbacks_fired_at_reset);
}
