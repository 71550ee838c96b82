/* fuzz_trace_reader.c: libFuzzer target for the Kineto-JSON trace reader (src/report/
 * trace_reader.h) and the report built on it (src/report/report.h): a trace file is outside
 * data, often truncated or hand-edited. Whatever the bytes, the reader must not crash, must
 * either read the whole text or fail with one line naming a byte offset inside it, and must
 * give the same answer whatever the pieces the text arrives in.
 *
 * Input: u8 piece seed, then the text. The text is read whole, then in pieces of 1 to 256
 * bytes (from the seed); both reads must agree on the result, the message and the number of
 * events. Then the report is built from it. Seeds: tests/fuzz/corpus/fuzz_trace_reader/. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "report/report.h"
#include "report/trace_reader.h"

typedef struct tally {
    uint64_t events;
    uint64_t name_bytes;
} tally;

static int count_event(const dt_tr_event *ev, void *user)
{
    tally *t = user;
    t->events++;
    for (size_t i = 0; i < ev->name.len; i++) /* every byte of the name must be readable */
        t->name_bytes += (unsigned char)ev->name.s[i];
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_input in = {data, size};
    size_t piece = 1 + fz_u8(&in);
    char err_whole[512], err_pieces[512];
    tally whole = {0, 0}, pieces = {0, 0};
    int rc_whole = dt_tr_read_buffer("fuzz", in.p, in.n, count_event, &whole, NULL, err_whole, sizeof err_whole);
    int rc_pieces =
        dt_tr_read_buffer_pieces("fuzz", in.p, in.n, piece, count_event, &pieces, NULL, err_pieces, sizeof err_pieces);
    if (rc_whole != rc_pieces || whole.events != pieces.events || whole.name_bytes != pieces.name_bytes ||
        (rc_whole != 0 && strcmp(err_whole, err_pieces) != 0)) {
        fprintf(stderr, "fuzz oracle: whole and %zu-byte pieces differ: %d/%d, %llu/%llu events\n%s\n%s\n", piece,
                rc_whole, rc_pieces, (unsigned long long)whole.events, (unsigned long long)pieces.events, err_whole,
                err_pieces);
        abort();
    }
    if (rc_whole != 0 && !strstr(err_whole, "byte ")) {
        fprintf(stderr, "fuzz oracle: an error without a byte offset: %s\n", err_whole);
        abort();
    }
    dt_report r;
    char err[512];
    int rc = dt_report_read_buffer(&r, "fuzz", in.p, in.n, DT_NAMES_SHORT, err, sizeof err);
    if ((rc == 0) != (rc_whole == 0)) {
        fprintf(stderr, "fuzz oracle: the report's read (%d) and the reader's (%d) differ: %s\n", rc, rc_whole, err);
        abort();
    }
    if (rc == 0) {
        FILE *null = fopen("/dev/null", "w");
        if (null) {
            dt_report_write(&r, DT_FORMAT_TABLE, null, 0);
            dt_report_write(&r, DT_FORMAT_JSON, null, 0);
            fclose(null);
        }
    }
    dt_report_free(&r);
    return 0;
}
