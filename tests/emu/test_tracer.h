/* test_tracer.h: a minimal tracer for the emulator tests, vendor-neutral.
 *
 * Binds one emulator's CUPTI-shaped functions (either spelling), registers buffer
 * callbacks, enables kinds and collects every record of every completed buffer, read
 * with the CUPTI-family offsets of vendor-abi.md written out in test_tracer.c (never the
 * emulator's own tables, so the tests check those tables). */
#ifndef DEVEMU_TEST_TRACER_H
#define DEVEMU_TEST_TRACER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "emu.h"

enum {
    KIND_MEMCPY = 1,
    KIND_MEMSET = 2,
    KIND_KERNEL = 3,
    KIND_RUNTIME = 5,
    KIND_CONCURRENT_KERNEL = 10,
    KIND_EXTERNAL_CORRELATION = 39
};
enum {
    SUCCESS = 0,
    ERROR_INVALID_PARAMETER = 1,
    ERROR_MAX_LIMIT_REACHED = 12,
    ERROR_QUEUE_EMPTY = 18,
    ERROR_INVALID_KIND = 21,
    ERROR_MULTIPLE_SUBSCRIBERS = 39
};
enum { DOMAIN_RUNTIME = 2, CUSTOM0 = 3, CUSTOM1 = 4 };

/* The emulator functions the tracer uses. */
typedef struct tt_vendor_api {
    emu_result (*get_timestamp)(uint64_t *ts);
    emu_result (*register_callbacks)(emu_buffer_request_fn, emu_buffer_complete_fn);
    emu_result (*enable)(int kind);
    emu_result (*flush_all)(uint32_t flag);
    emu_result (*next_record)(uint8_t *buffer, size_t valid, void **record);
    emu_result (*dropped)(emu_context ctx, uint32_t stream, size_t *dropped);
} tt_vendor_api;

/* One record as the tracer read it. */
typedef struct tt_rec {
    uint32_t kind, correlation, cbid, process, thread, stream, value, copy_kind, external_kind;
    int32_t grid_x;
    uint64_t start, end, external_id, bytes;
    const char *name;
    size_t stride; /* bytes to the next record GetNextRecord gave in the same buffer; 0 for the last */
} tt_rec;

typedef struct tt_trace {
    pthread_mutex_t lock;
    tt_rec *recs;
    size_t n, cap;
    size_t buffers, refuse_next, max_valid_seen, buffer_bytes, stale_pointers;
    pthread_t last_completion_thread;
    int reenter_from_completion;                            /* call GetTimestamp and FlushAll from inside */
    void (*completion_hook)(uint8_t *buffer, size_t valid); /* called first inside the completion */
} tt_trace;

extern tt_trace tt;
extern const int tt_parity_kinds[]; /* 0-terminated */

void tt_bind(const tt_vendor_api *api);
/* A fresh emulator (devemu_reset), faults set, buffers registered, kinds enabled. */
void tt_start(const char *faults, const int *kinds);
void tt_flush(void);
size_t tt_count_kind(uint32_t kind);
size_t tt_count_zero_time_kernels(void);
const tt_rec *tt_find(uint32_t kind, uint32_t correlation);
int tt_is_device_kind(uint32_t kind);
uint64_t tt_realtime_ns(void);
/* Whether the library at path exports name (loaded RTLD_LOCAL, then closed). */
int tt_has_symbol(const char *path, const char *name);
uint32_t tt_u32_at(const uint8_t *record, size_t offset);
uint64_t tt_u64_at(const uint8_t *record, size_t offset);

#endif /* DEVEMU_TEST_TRACER_H */
