/* fuzz_roctracer_walk.c: libFuzzer target for the ROCtracer record walker and its helpers
 * (src/backends/roctracer_records.h): the fuzzer's bytes are a range of activity records as
 * ROCtracer delivers them (64-byte roctracer_record_t, any domain, op and kind, a ragged tail),
 * walked by dt_roc_walk after launch configurations taken from the input are remembered with
 * dt_roc_pending_put, as the API callback does; then dt_roc_pending_drain, and the session is
 * finalised and written: the trace must be strict JSON. dt_roc_launch_shared_bytes gets two words
 * of the input. The range is a heap copy of exactly its bytes (reads past it are reported); a
 * kernel record's payload is the vendor's name pointer, trusted by design, so the harness points
 * it at one of its strings (or NULL) first.
 *
 * Input: u8 flags (bit 0: out-of-window walk, bit 1: an inverted range, bit 2: a NULL begin),
 * u8 count of launches, 37 bytes per launch (u64 correlation, 6 x i32 grid and block, u32 shared,
 * u8 has-bits), u64 word40, u64 word48, then the records. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backends/roctracer_records.h"
#include "fuzz_common.h"

static char long_name[5000];
static const char *const strings[] = {
    "",
    "_Z6kernelPf",
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float> >(int, float*)",
    "_Z",
    "bad UTF-8 \xff\xfe\xc0\x80",
    "ctrl \x01\x1f \"quoted\" \\ back",
    long_name,
};
#define NSTRINGS (sizeof strings / sizeof strings[0])

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!long_name[0])
        memset(long_name, 'k', sizeof long_name - 1);
    fz_input in = {data, size};
    uint8_t flags = fz_u8(&in);
    unsigned launches = fz_u8(&in);

    devtrace_error err;
    dt_session *s = dt_session_new_offline("roctracer", "fuzz", "privateuse1_runtime", &err);
    if (!s)
        abort();
    /* The launch table (64 Ki slots) is allocated once: dt_roc_pending_drain at the end of every
     * input empties it, and the rest is set up as dt_roc_decoder_init does. */
    static dt_roc_decoder d;
    if (!d.pending) {
        if (dt_roc_decoder_init(&d, s) != 0)
            abort();
    } else {
        dt_roc_pending *table = d.pending;
        memset(&d, 0, sizeof d);
        d.pending = table;
        d.s = s;
        d.unnamed_kernel_id = dt_session_intern(s, "(unnamed kernel)");
    }
    for (unsigned i = 0; i < launches; i++) {
        uint64_t corr = fz_bytes_u64(&in, 8);
        dt_roc_launch l;
        memset(&l, 0, sizeof l);
        for (int k = 0; k < 3; k++)
            l.grid[k] = (int32_t)fz_bytes_u64(&in, 4);
        for (int k = 0; k < 3; k++)
            l.block[k] = (int32_t)fz_bytes_u64(&in, 4);
        l.dynamic_shared = (uint32_t)fz_bytes_u64(&in, 4);
        uint8_t has = fz_u8(&in);
        l.has_grid = has & 1;
        l.has_shared = (has >> 1) & 1;
        dt_roc_pending_put(&d, corr, has & 4 ? NULL : &l);
    }
    uint64_t word40 = fz_bytes_u64(&in, 8), word48 = fz_bytes_u64(&in, 8);
    uint32_t shared = 0;
    if (dt_roc_launch_shared_bytes(word40, word48, &shared) == 1 && shared > (1u << 20))
        abort(); /* documented: at most 1 MiB */

    char *buf = malloc(in.n ? in.n : 1);
    if (!buf)
        abort();
    memcpy(buf, in.p, in.n);
    size_t records = in.n / DT_ROC_RECORD_SIZE;
    for (size_t i = 0; i < records; i++) {
        dt_roc_record r;
        memcpy(&r, buf + i * DT_ROC_RECORD_SIZE, sizeof r);
        uint32_t direction;
        int unknown;
        if (dt_roc_classify(r.domain, r.op, r.kind, &direction, &unknown) == DT_ROC_CLASS_KERNEL) {
            uint8_t pick = (uint8_t)r.payload;
            const char *name = pick % (NSTRINGS + 1) == NSTRINGS ? NULL : strings[pick % (NSTRINGS + 1)];
            memcpy(buf + i * DT_ROC_RECORD_SIZE + offsetof(dt_roc_record, payload), &name, sizeof name);
        }
    }
    const char *begin = flags & 4 ? NULL : buf, *end = buf + in.n;
    if (flags & 2)
        begin = end, end = buf;
    dt_roc_walk_counts c;
    dt_roc_walk(&d, begin, end, (flags & 1) ? DT_ROC_WALK_OUT_OF_WINDOW : DT_ROC_WALK_DECODE, &c);
    if (c.emitted > c.records || (!(flags & 6) && c.records != records) || s->stats.malformed_records != c.malformed ||
        s->stats.zero_timestamp != c.zero_time)
        abort(); /* the walk's counts and the session's must agree */
    dt_roc_pending_drain(&d);
    fz_check_trace(s);
    free(buf);
    devtrace_close(s);
    return 0;
}
