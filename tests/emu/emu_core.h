/* emu_core.h: what the emulated runtime's files share, and nothing an emulator uses (that
 * is emu.h): the installed vendor table, the faults and their counters still to be spent,
 * the statistics, and the functions one part of the runtime calls in another. emu_core.c
 * installs, resets and counts; emu_clock.c keeps the vendor clock and the device timeline;
 * emu_buffers.c the activity buffers; emu_call.c one runtime call and its subscriber.
 * Internal names have a double underscore (emu__). */
#ifndef DEVEMU_CORE_H
#define DEVEMU_CORE_H

#include <stdatomic.h>
#include <stdint.h>

#include "emu.h"

#define EMU_MAX_RECORD 512
#define EMU_MAX_KINDS 64
#define EMU_MAX_CBIDS 1024
#define EMU_MAX_DOMAINS 16
#define EMU_EXT_KINDS 8
#define EMU_EXT_DEPTH 64
#define EMU_WAIT_SLACK_NS 1000000000ull /* sync gives up this long after the expected end */
#define EMU_WAIT_MAX_NS 60000000000ull  /* and never waits longer than this in all */

/* The devemu_stats fields counted in shared counters, in one list for the counters, reset
 * and read; callbacks_fired is counted per thread (emu_core.c). */
/* clang-format off */
#define EMU_STAT_NAMES(X)           \
    X(runtime_calls)                \
    X(api_records)                  \
    X(kernel_records)               \
    X(memcpy_records)               \
    X(memset_records)               \
    X(external_correlation_records) \
    X(injected_zero_time)           \
    X(injected_malformed)           \
    X(dropped_records)              \
    X(buffers_requested)            \
    X(buffers_refused)              \
    X(buffers_completed)
/* clang-format on */

typedef struct emu_stat_counters {
#define EMU__DECLARE_STAT(name) _Atomic uint64_t name;
    EMU_STAT_NAMES(EMU__DECLARE_STAT)
#undef EMU__DECLARE_STAT
} emu_stat_counters;

/* ---- emu_core.c ---- */

extern const emu_vendor *emu__vendor; /* the installed table */
extern emu_faults emu__faults;
extern emu_stat_counters emu__stats;
/* Fault counters still to be spent. */
extern _Atomic uint64_t emu__pending_zero_time, emu__pending_malformed, emu__pending_drop, emu__pending_refuse;

/* Prints "devemu: what" and aborts: a vendor table or the process is beyond use. */
_Noreturn void emu__die(const char *what);

/* A thread's own record of the callbacks it fired (no shared cache line). */
typedef struct emu_thread_counts emu_thread_counts;
/* The calling thread's record, or NULL when none can be had (counted in a shared one). */
emu_thread_counts *emu__thread_counts(void);
void emu__count_callback_fired(emu_thread_counts *t);

/* Writes v into dst at f's offset in f's width. */
void emu__put_field(uint8_t *dst, const emu_field_at *f, uint64_t v);
/* One record of layout l from values (by EMU_F_*), zero where the layout has no field. */
void emu__layout_write(const emu_layout *l, uint8_t *dst, const uint64_t values[EMU_F_COUNT]);

static inline void emu__count(_Atomic uint64_t *counter)
{
    atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
}

/* Takes one unit from a fault counter; 1 when there was one. */
static inline int emu__take_one(_Atomic uint64_t *counter)
{
    uint64_t left = atomic_load(counter);
    while (left > 0) {
        if (atomic_compare_exchange_weak(counter, &left, left - 1))
            return 1;
    }
    return 0;
}

/* ---- emu_clock.c ---- */

uint64_t emu__realtime_ns(void);
/* A device duration in vendor ticks: maps back to exactly dur_ns (to rounding). */
uint64_t emu__vendor_duration(uint64_t dur_ns);
/* Busy-waits until the vendor clock reaches target (gives up well after it should have). */
void emu__wait_until(uint64_t target);
/* Places dur ticks of work on stream no earlier than now; returns its start. */
uint64_t emu__timeline_place(uint32_t stream, uint64_t now, uint64_t dur);
/* The end of the last work on stream, or on every stream. */
uint64_t emu__timeline_last_end(int all_streams, uint32_t stream);
/* A new vendor clock; the timeline, in the old clock, is forgotten. */
void emu__clock_set(int64_t epoch_ns, long double rate);
/* Forgets the tracer's timestamp callback. */
void emu__clock_reset(void);

/* ---- emu_buffers.c ---- */

int emu__kind_on(uint32_t kind);
/* Stores one record of size bytes, or counts it as dropped. */
void emu__append_record(const uint8_t *record, uint32_t size);
void emu__write_and_append(const emu_layout *l, const uint64_t values[EMU_F_COUNT]);
/* A record lost: for GetNumDroppedRecords and the statistics. */
void emu__count_drop(void);
/* A buffer is registered and some kind enabled: a record written now would be kept. */
int emu__recording_possible(void);
emu_result emu__flush_all_now(uint32_t flag);
/* Flushes, hands the unused buffers back empty and forgets the tracer's buffers and kinds. */
void emu__buffers_reset(void);

/* ---- emu_call.c ---- */

/* At flush: the faults the workload gave no chance to inject, so that exactly N come out. */
void emu__inject_leftover_faults(void);
/* The next call's correlation id is first (1 when 0). */
void emu__correlation_restart(uint64_t first);
/* No subscriber, nothing enabled. */
void emu__subscriber_reset(void);

#endif /* DEVEMU_CORE_H */
