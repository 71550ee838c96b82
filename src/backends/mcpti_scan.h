/* mcpti_scan.h: MetaX MCPTI's buffer walker: the vendor's GetNextRecord while it
 * behaves, a record scanner from the first sign that it does not (MACA 3.8.0 can return
 * a stale, repeated pointer after an external-correlation record and stop partway
 * through a valid buffer: ../shared/vendor-abi.md, MetaX quirk 1). Visible for the unit
 * tests and the fuzz target; the descriptor is in mcpti.c.
 *
 * The scanner reads the u32 kind at each 8-byte-aligned offset of the buffer and accepts
 * a record only when it fits in the valid bytes and its fields pass vendor-abi.md's
 * checks; it then advances by the full vendor record size, else by 8 bytes
 * (resynchronising). It stops at the end of the valid bytes, on a position that does not
 * advance, or at a record cap. The walker's records and the scanner's candidates pass the
 * same checks (dt_mcpti_validate_in): their own fields and the session's bounds, so that a
 * candidate the scanner finds inside a cut-short record (a truncated tail) is not taken
 * for a record because its own fields happen to look right. Counting, exact and the same whichever way a buffer was
 * walked:
 *  - every maximal run of bytes that holds no accepted record (garbage, a record whose
 *    fields fail, a truncated last record) is one malformed record (malformed_records)
 *    and its length in malformed_bytes;
 *  - every offset whose kind is one of ours but whose record was rejected is a rejected
 *    candidate (scan_stats, told in the session's note; a run may hold several);
 *  - records with start == end == 0 are records: counted zero_timestamp by the decoder,
 *    never placed at the clock origin. */
#ifndef DT_MCPTI_SCAN_H
#define DT_MCPTI_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "pti_family.h"

/* MACA 3.8.0 record sizes (vendor-abi.md: code that ran on MACA 3.8.0). */
#define DT_MCPTI_KERNEL_SIZE 200u  /* MCpti_ActivityKernel8 */
#define DT_MCPTI_MEMCPY_SIZE 88u   /* MCpti_ActivityMemcpy5 */
#define DT_MCPTI_MEMSET_SIZE 88u   /* MCpti_ActivityMemset4 */
#define DT_MCPTI_API_SIZE 40u      /* MCpti_ActivityAPI */
#define DT_MCPTI_EXTERNAL_SIZE 24u /* MCpti_ActivityExternalCorrelation */

/* Kinds: CUPTI's numbers (vendor-abi.md). */
#define DT_MCPTI_KIND_MEMCPY 1u
#define DT_MCPTI_KIND_MEMSET 2u
#define DT_MCPTI_KIND_KERNEL 3u
#define DT_MCPTI_KIND_RUNTIME 5u
#define DT_MCPTI_KIND_CONCURRENT_KERNEL 10u
#define DT_MCPTI_KIND_EXTERNAL_CORRELATION 39u

/* The validation bounds of vendor-abi.md quirk 1 (and quirk 3 for timestamps). */
#define DT_MCPTI_MAX_CBID 1000u                   /* runtime cbid < 1000 */
#define DT_MCPTI_MAX_DIM (1u << 20)               /* each grid/block dimension in (0, 2^20) */
#define DT_MCPTI_MAX_EXTERNAL_KIND 5u             /* externalKind in 1..5 */
#define DT_MCPTI_MAX_DURATION_NS 3600000000000ull /* a sane duration: at most 1 h */
#define DT_MCPTI_SCAN_MAX_RECORDS (1u << 22)      /* record cap per buffer */
/* Beyond its own fields, a record must fit the session it was taken in: its times within
 * the session's vendor clock samples widened by this margin on each side (the first sample
 * is taken before activity is enabled, the last after the final flush, and one at most
 * every DT_CLOCK_SAMPLE_PERIOD_NS (100 ms) before each live buffer is walked: 1 s covers
 * that period at up to 10 vendor ns per host ns), so its duration within their span too; and
 * its enumerations within CUPTI's values (copy kind < 11, memory kinds <= 7). */
#define DT_MCPTI_CLOCK_MARGIN_NS 1000000000ull
#define DT_MCPTI_MAX_COPY_KIND 10u  /* CUpti_ActivityMemcpyKind: UNKNOWN 0 .. PTOP 10 */
#define DT_MCPTI_MAX_MEMORY_KIND 7u /* CUpti_ActivityMemoryKind: UNKNOWN 0 .. MANAGED_STATIC 7 */

/* Why a record fails validation (DT_MCPTI_VALID when it does not). */
typedef enum dt_mcpti_verdict {
    DT_MCPTI_VALID = 0,
    DT_MCPTI_NOT_OURS,          /* the kind is not one of MCPTI's record kinds */
    DT_MCPTI_TRUNCATED,         /* fewer valid bytes than the record's size */
    DT_MCPTI_BAD_DIMENSION,     /* kernel: a grid or block dimension outside (0, 2^20) */
    DT_MCPTI_ZERO_CORRELATION,  /* correlationId == 0 */
    DT_MCPTI_BAD_TIMESTAMPS,    /* end < start, or a duration over 1 h */
    DT_MCPTI_ZERO_BYTES,        /* memcpy/memset: bytes == 0 */
    DT_MCPTI_BAD_CBID,          /* runtime: cbid >= 1000 */
    DT_MCPTI_BAD_EXTERNAL_KIND, /* external correlation: externalKind outside 1..5 */
    DT_MCPTI_BAD_ENUMERATION,   /* memcpy/memset: a copy or memory kind outside CUPTI's values */
    DT_MCPTI_OUTSIDE_CLOCK,     /* times outside the session's clock samples +- the margin */
    DT_MCPTI_VERDICT_COUNT
} dt_mcpti_verdict;

/* The vendor size of a record kind, 0 when the kind is not MCPTI's. */
uint32_t dt_mcpti_record_size(uint32_t kind);
/* Validates the record at rec with avail valid bytes from rec on (any alignment): its own
 * fields. */
dt_mcpti_verdict dt_mcpti_validate(const uint8_t *rec, size_t avail);

/* The vendor times a record of the session may carry: [lo, hi], from its clock samples
 * (known == 0: no sample yet, or no session: times are not bounded beyond 1 h). */
typedef struct dt_mcpti_time_bounds {
    uint64_t lo, hi;
    int known;
} dt_mcpti_time_bounds;
/* The bounds of session s now (s may be NULL). */
dt_mcpti_time_bounds dt_mcpti_time_bounds_of(dt_session *s);
/* Validates the record as dt_mcpti_validate does, then against the session: its times
 * within b (start == end == 0, a record without timing, passes) and its enumerations. */
dt_mcpti_verdict dt_mcpti_validate_in(const uint8_t *rec, size_t avail, const dt_mcpti_time_bounds *b);
const char *dt_mcpti_verdict_name(dt_mcpti_verdict v);

/* The decoder's scan_stats for MCPTI. */
enum {
    DT_MCPTI_STAT_BUFFERS = 0,        /* buffers walked */
    DT_MCPTI_STAT_ITER_REPEATED,      /* GetNextRecord gave a pointer again (or went back) */
    DT_MCPTI_STAT_ITER_STOPPED_EARLY, /* it ended before the valid size */
    DT_MCPTI_STAT_ITER_SKIPPED,       /* it jumped over bytes, or left the valid bytes */
    DT_MCPTI_STAT_ITER_INVALID,       /* it gave a record that does not validate (or an unknown kind) */
    DT_MCPTI_STAT_NO_ITERATOR,        /* no iterator (replay, tests): scanned whole */
    DT_MCPTI_STAT_CAP,                /* the record cap stopped a walk */
    DT_MCPTI_STAT_SCANNED_BYTES,      /* bytes walked by the scanner */
    DT_MCPTI_STAT_REJECTED,           /* rejected candidates (ours by kind, not by fields) */
    DT_MCPTI_STAT_RUNS,               /* skipped runs (= malformed records found by the scanner) */
    DT_MCPTI_STAT_COUNT
};
_Static_assert(DT_MCPTI_STAT_COUNT <= DT_PTI_SCAN_STATS, "MCPTI's scanner counters fit in the decoder");

/* What one scan found (also added to the session's counters and the decoder's stats). */
typedef struct dt_mcpti_scan_result {
    uint64_t accepted; /* records handed to the decoders */
    uint64_t runs;     /* skipped runs: malformed records */
    uint64_t skipped;  /* bytes in them: malformed bytes */
    uint64_t rejected; /* rejected candidates */
    int capped;        /* stopped by the record cap */
} dt_mcpti_scan_result;

/* Scans buf[from, valid_size) (offsets relative to buf, from a multiple of 8) with at most
 * max_records accepted records; the rest after the cap counts as skipped bytes. */
void dt_mcpti_scan_range(dt_pti_decoder *d, uint8_t *buf, size_t from, size_t valid_size, dt_pti_walk_mode mode,
                         dt_pti_walk_counts *c, uint64_t max_records, dt_mcpti_scan_result *out);
/* The descriptor's scan hook: the iterator while it behaves (d->next), the scanner from
 * the first anomaly to the end of the buffer; without an iterator, the scanner alone. */
void dt_mcpti_walk_buffer(dt_pti_decoder *d, uint8_t *buf, size_t valid_size, dt_pti_walk_mode mode,
                          dt_pti_walk_counts *c);
/* The descriptor's finish hook: a note on how the buffers were walked. */
void dt_mcpti_finish(dt_pti_decoder *d);

extern const dt_pti_descriptor dt_pti_mcpti_descriptor; /* mcpti.c */

#endif
