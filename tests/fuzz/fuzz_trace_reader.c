/* fuzz_trace_reader.c: libFuzzer target for the Kineto-JSON trace reader (src/report/
 * trace_reader.h) and the report built on it (src/report/report.h): a trace file is outside
 * data, often truncated or hand-edited. Whatever the bytes, the reader must not crash, must
 * either read the whole text or fail with one line naming a byte offset inside it, and must
 * give the same answer whatever the pieces the text arrives in.
 *
 * Input: u8 piece seed, then the text. The text is read whole, then in pieces of 1 to 256
 * bytes (from the seed); both reads must agree on the result, the message and the number of
 * events. Then the report is built from it, and must hold together: the device time linked to
 * ops is the sum of the ops' device_self, each op's device_total is at least its device_self,
 * the unlinked causes add up to the unlinked time, the skipped causes to the skipped count; and
 * every diff table and the top changes are made (the report against itself: every delta 0);
 * a trace with steps is read again within them (the per-step read) and holds together too.
 * Seeds: tests/fuzz/corpus/fuzz_trace_reader/. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "report/compare.h"
#include "report/report.h"
#include "report/trace_reader.h"

typedef struct tally {
    uint64_t events;
    uint64_t name_bytes;
} tally;

static void fail(const char *what)
{
    fprintf(stderr, "fuzz oracle: %s\n", what);
    abort();
}

/* The report's figures hold together (saturated sums aside: a hostile trace may reach them). */
static void check_report(const dt_report *r)
{
    int64_t self = 0, unlinked = 0;
    int saturated = 0;
    uint64_t skipped = 0;
    for (size_t i = 0; i < r->nops; i++) {
        self = dt_add_saturating(self, r->ops[i].device_self_ns);
        if (r->ops[i].device_total_ns < r->ops[i].device_self_ns)
            fail("an op's device_total below its device_self");
        saturated |= r->ops[i].device_total_ns == INT64_MAX;
    }
    for (int c = 0; c < DT_UNLINKED_COUNT; c++)
        unlinked = dt_add_saturating(unlinked, r->link.unlinked_ns[c]);
    for (int c = 0; c < DT_SKIP_COUNT; c++)
        skipped += r->skipped[c];
    saturated |= self == INT64_MAX || self == INT64_MIN || r->link.linked_ns == INT64_MAX ||
                 r->link.linked_ns == INT64_MIN || unlinked == INT64_MAX || unlinked == INT64_MIN;
    if (!saturated && (self != r->link.linked_ns || unlinked != r->unlinked_device_ns))
        fail("linked or unlinked device time does not add up");
    if (skipped != r->nskipped)
        fail("the skipped causes do not add up");
    if (r->link.external_id_disagree > r->link.external_id_checked)
        fail("more External id disagreements than checks");
    dt_diff_options o = {0};
    for (int by = 0; by < DT_BY_COUNT; by++) {
        dt_table t;
        if (dt_diff_table(r, r, (dt_compare_by)by, &o, &t) == 0)
            for (size_t row = 0; row < t.nrows; row++) { /* the report against itself */
                int delta = -1;
                for (int c = 0; c < t.ncolumns; c++)
                    if (!strcmp(t.columns[c].name, "delta_us"))
                        delta = c;
                if (delta < 0 || strcmp(t.cells[row * (size_t)t.ncolumns + (size_t)delta], "0.000") != 0)
                    fail("a trace diffed against itself has a change");
            }
        dt_table_free(&t);
    }
    dt_table t;
    dt_diff_top_table(r, r, (1u << DT_BY_COUNT) - 1, &o, &t);
    dt_table_free(&t);
    const dt_report *one[1] = {r};
    dt_ranks_table(one, 1, DT_BY_OP, &t);
    dt_table_free(&t);
}

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
        check_report(&r);
        if (r.nsteps) { /* the per-step read: what lies inside the steps, a part of the whole */
            dt_report steps;
            if (dt_report_read_steps_buffer(&steps, &r, in.p, in.n, err, sizeof err) != 0)
                fail("the per-step read of a trace read whole failed");
            check_report(&steps);
            if (steps.nskipped != r.nskipped || steps.nsteps != r.nsteps)
                fail("the per-step read skipped other events or counted other steps");
            dt_diff_options per = {1};
            dt_table t;
            dt_diff_top_table(&steps, &steps, (1u << DT_BY_COUNT) - 1, &per, &t);
            dt_table_free(&t);
            dt_report_free(&steps);
        }
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
