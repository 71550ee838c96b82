/* emu_records.h: realistic activity buffers for the decode benchmarks, written by the
 * vendor ABI emulator's own runtime (tests/emu: emu_core, the vendor tables), so that the
 * bytes decoded are the bytes the emulator tests check against the vendors' layouts.
 *
 * The emulated runtime plays a PyTorch-like mix of calls, each inside an operator whose
 * external correlation id is pushed (so each call also writes an external-correlation
 * record): kernel launches (with the parity workload's kernel names), synchronous
 * copies, memsets and plain API calls. Buffers are the engine's default size (1 MiB). */
#ifndef DT_BENCH_EMU_RECORDS_H
#define DT_BENCH_EMU_RECORDS_H

#include <stddef.h>
#include <stdint.h>

typedef struct bench_buffers {
    uint8_t **data; /* owned, each buffer_size bytes */
    size_t *valid;  /* valid bytes of each */
    size_t n, cap;
    size_t buffer_size;
    uint64_t bytes;     /* valid bytes in all */
    uint64_t records;   /* records in all (valid ones, and injected bad ones) */
    uint64_t bad_bytes; /* bytes of garbage and invalid records (MCPTI) */
    uint64_t calls;     /* runtime calls the emulator ran */
} bench_buffers;

typedef enum bench_vendor { BENCH_CUPTI = 0, BENCH_MCPTI = 1 } bench_vendor;

/* Builds at least target_bytes of records. MCPTI: about 5% of the bytes are bad: the
 * emulator's own malformed records (a valid kind whose fields fail validation, as after
 * a stale pointer) and random garbage regions between records, which a scanner must
 * resynchronise over. Returns 0, -1 when out of memory. */
int bench_buffers_build(bench_buffers *b, bench_vendor vendor, uint64_t target_bytes, uint64_t seed);
void bench_buffers_free(bench_buffers *b);

/* The emulator's GetNextRecord for the vendor last built (the decoder's iterator). */
int bench_emu_next_record(uint8_t *buffer, size_t valid_size, void **record);
/* The API version the emulated library reports (CUPTI 130001, MCPTI 18). */
uint32_t bench_emu_version(bench_vendor vendor);

#endif
