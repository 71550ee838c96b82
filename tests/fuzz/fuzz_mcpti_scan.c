/* fuzz_mcpti_scan.c: libFuzzer target for MetaX MCPTI's buffer walker and record scanner
 * (src/backends/mcpti_scan.c): the fuzzer's bytes are a completed MCPTI activity buffer.
 *
 * The buffer (a heap copy of exactly the valid bytes: AddressSanitizer sees any read past
 * them) is walked with dt_pti_walk_buffer through the MCPTI descriptor, by
 *   - no iterator (the scanner alone, as in replay);
 *   - an honest GetNextRecord striding by MACA 3.8.0's sizes, ending with MAX_LIMIT_REACHED
 *     or an error for an unknown or cut record;
 *   - MACA 3.8.0's stale iterator (the same pointer again after an external correlation);
 *   - a hostile one scripted by the input: pointers one past the end, before the buffer,
 *     inside a record, repeated, backwards, NULL with success, error codes;
 * in any walk mode; then the scanner alone with a record cap from the input. Record
 * pointers (kernel names) are never followed: they resolve through a table as in replay
 * (an even value to a name, an odd one to nothing). Oracles: the counted skipped bytes never
 * exceed the buffer, a scan from the start accounts for every byte, and the session still
 * writes a strict-JSON trace.
 *
 * Input: u8 flags (bits 0-1 iterator, 2-3 walk mode), u8 record cap, u8 script length
 * (x2 bytes), the script, the buffer. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backends/pti_family.h"
#include "backends/mcpti_scan.h"
#include "fuzz_common.h"

#define FZ_MAX_LIMIT 12
#define FZ_INVALID_KIND 21

static const uint8_t *script;
static size_t script_len, script_pos;

static int honest_step(uint8_t *buf, size_t valid, void **rec, int stale)
{
    size_t off = 0;
    if (*rec) {
        uintptr_t p = (uintptr_t)*rec, b = (uintptr_t)buf;
        if (p < b || p - b >= valid || valid - (p - b) < 4)
            return FZ_INVALID_KIND;
        uint32_t kind;
        memcpy(&kind, *rec, 4);
        if (stale && kind == DT_MCPTI_KIND_EXTERNAL_CORRELATION)
            return 0;
        uint32_t size = dt_mcpti_record_size(kind);
        if (!size)
            return FZ_INVALID_KIND;
        off = (size_t)(p - b) + size;
    }
    if (off >= valid || valid - off < 4)
        return FZ_MAX_LIMIT;
    uint32_t kind;
    memcpy(&kind, buf + off, 4);
    uint32_t size = dt_mcpti_record_size(kind);
    if (!size || valid - off < size)
        return FZ_INVALID_KIND;
    *rec = buf + off;
    return 0;
}

static int honest_next(uint8_t *buf, size_t valid, void **rec)
{
    return honest_step(buf, valid, rec, 0);
}
static int stale_next(uint8_t *buf, size_t valid, void **rec)
{
    return honest_step(buf, valid, rec, 1);
}

static int scripted_next(uint8_t *buf, size_t valid, void **rec)
{
    if (script_pos + 2 > script_len)
        return honest_step(buf, valid, rec, 0);
    uint8_t op = script[script_pos], arg = script[script_pos + 1];
    script_pos += 2;
    switch (op % 8) {
    case 0:
        return honest_step(buf, valid, rec, 0);
    case 1:
        return 0; /* the same pointer again */
    case 2:
        *rec = buf + valid; /* one past the end */
        return 0;
    case 3:
        *rec = (uint8_t *)((uintptr_t)buf - 8u * (arg + 1u)); /* before the buffer (never read) */
        return 0;
    case 4:
        *rec = NULL;
        return 0;
    case 5:
        return 1 + arg; /* an error code */
    case 6:
        *rec = buf + ((size_t)arg * 8 % (valid + 1)); /* anywhere in it, maybe inside a record */
        return 0;
    default:
        return FZ_MAX_LIMIT;
    }
}

static const char *resolve(void *user, uint64_t pointer)
{
    (void)user;
    return pointer & 1 ? NULL : "_ZN4fuzz6kernelEv";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    uint8_t flags = data[0], cap = data[1];
    size_t slen = (size_t)data[2] * 2;
    if (slen > size - 3)
        slen = size - 3;
    script = data + 3;
    script_len = slen;
    script_pos = 0;
    size_t n = size - 3 - slen;
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf)
        return 0;
    if (n)
        memcpy(buf, data + 3 + slen, n);

    devtrace_error err = {0, ""};
    dt_session *s = dt_session_new_offline("mcpti", "fuzz", "privateuse1_runtime", &err);
    dt_pti_decoder *d = calloc(1, sizeof *d);
    if (!s || !d) {
        free(buf);
        free(d);
        devtrace_close(s);
        return 0;
    }
    dt_pti_decoder_init_offline(d, &dt_pti_mcpti_descriptor, s, 18, resolve, NULL);
    static const dt_pti_next_fn iterators[4] = {NULL, honest_next, stale_next, scripted_next};
    d->next = iterators[flags & 3];
    static const dt_pti_walk_mode modes[4] = {DT_PTI_WALK_DECODE, DT_PTI_WALK_OUT_OF_WINDOW, DT_PTI_WALK_POOL_FULL,
                                              DT_PTI_WALK_DECODE};
    dt_pti_walk_counts c;
    dt_pti_walk_buffer(d, buf, n, modes[(flags >> 2) & 3], &c);
    if (s->stats.malformed_bytes > n) {
        fprintf(stderr, "fuzz oracle: %llu malformed bytes counted in a buffer of %zu\n",
                (unsigned long long)s->stats.malformed_bytes, n);
        abort();
    }

    /* the scanner alone from the start, with a cap: every byte is a record or skipped */
    dt_pti_walk_counts c2 = {0};
    dt_mcpti_scan_result r;
    dt_mcpti_scan_range(d, buf, 0, n, DT_PTI_WALK_DECODE, &c2, cap, &r);
    dt_pti_commit_counts(d, &c2);
    if (r.skipped > n || r.runs > n / 8 + 1 || (r.skipped > 0) != (r.runs > 0) || r.accepted > cap ||
        (!r.capped && r.accepted * DT_MCPTI_EXTERNAL_SIZE + r.skipped > n)) {
        fprintf(stderr, "fuzz oracle: scan of %zu bytes: %llu accepted, %llu runs, %llu skipped, capped %d\n", n,
                (unsigned long long)r.accepted, (unsigned long long)r.runs, (unsigned long long)r.skipped, r.capped);
        abort();
    }
    dt_mcpti_finish(d);
    fz_check_trace(s);
    devtrace_close(s);
    free(d);
    free(buf);
    return 0;
}
