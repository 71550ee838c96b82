/* fuzz_wire.c: libFuzzer target for the wire reader (src/inject/wire.h, dt_wire_feed): the
 * recorder's parser of what the traced program sends. The program is someone else's process: a
 * corrupted, truncated or hostile stream must be counted and skipped, never crash the recorder,
 * and the trace the recorder then writes must be strict JSON.
 *
 * Input: u8 split seed, then the byte stream. The stream is fed in pieces whose sizes come from the
 * seed (1 byte to 4 KiB), so that every message boundary falls everywhere; then the session is
 * finalised and written (dt_chrome_write_buffer) and the JSON checked. A seed with bit 4 set reads
 * the stream as the recorder does for capture windows (dt_wire_reader_keep_metadata): each piece
 * goes, by the seed, into the session, into none (counted only) or into a second session given
 * the metadata kept so far (dt_wire_reader_feed_into), which is checked too. Seeds in
 * tests/fuzz/corpus/fuzz_wire/ are real collector streams (scripts/fuzz --make-seeds). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_common.h"
#include "inject/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_input in = {data, size};
    uint8_t mode = fz_u8(&in);
    uint32_t seed = mode * 2654435761u + 1;
    int windows = (mode & 0x10) != 0;
    devtrace_error err;
    dt_session *s = dt_session_new_offline("none", "", NULL, &err);
    dt_session *second = windows ? dt_session_new_offline("none", "", NULL, &err) : NULL;
    if (!s || (windows && !second))
        abort();
    dt_wire_reader r;
    dt_wire_reader_init(&r);
    if (windows && dt_wire_reader_keep_metadata(&r) != 0)
        abort();
    int second_fed = 0;
    size_t off = 0;
    while (off < in.n) {
        seed = seed * 1103515245u + 12345u;
        size_t piece = (seed >> 16) % 4 == 0 ? 1 + (seed >> 8) % 4096 : 1 + (seed >> 8) % 64;
        if (piece > in.n - off)
            piece = in.n - off;
        dt_session *into = s;
        if (windows && (seed >> 4) % 3 == 1)
            into = NULL;
        else if (windows && (seed >> 4) % 3 == 2) {
            if (!second_fed)
                dt_wire_reader_feed_into(&r, second);
            second_fed = 1;
            into = second;
        }
        if (dt_wire_feed(&r, into, in.p + off, piece) != 0)
            abort(); /* out of memory: not expected for inputs this small */
        off += piece;
    }
    if (dt_wire_pending(&r) > in.n)
        abort();
    fz_check_trace(s);
    if (second)
        fz_check_trace(second);
    dt_wire_reader_free(&r);
    devtrace_close(s);
    devtrace_close(second);
    return 0;
}
