/* fuzz_spill.c: libFuzzer target for the reading of a recorder's spill (src/cli/record_spill.h):
 * the records after its header, as 'devtrace convert SPILL' replays them (dt_tree_replay on a tree
 * without a socket: each record's connection gets a wire reader of its own into the one session).
 * A spill is a file: cut short, corrupted or made by someone else, it must be read up to its
 * first bad record, never crash, and the trace then written must be strict JSON.
 *
 * Input: the records (what follows the 96-byte header). Oracle: the bytes read are a multiple of
 * 8 and at most the input; a second replay of only those bytes reads all of them; the processes'
 * notes (dt_tree_describe) and the trace are written; nothing leaks. Seeds in
 * tests/fuzz/corpus/fuzz_spill/: a short spill of one process (hello, names, events, end) and one
 * cut mid-record.
 * FUZZ_EXTRA_SOURCES: src/cli/record_tree.c src/cli/record_spill.c */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "cli/record_tree.h"
#include "fuzz_common.h"

static size_t replay(const uint8_t *data, size_t size, int check)
{
    dt_tree t;
    if (dt_tree_open_offline(&t, "none", 0) != 0)
        abort();
    size_t read = dt_tree_replay(&t, data, size, NULL);
    if (check) {
        int quiet = fz_quiet_begin();
        dt_tree_describe(&t);
        fz_quiet_end(quiet);
        fz_check_trace(t.sessions[0]);
    }
    dt_tree_close(&t);
    return read;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t read = replay(data, size, 1);
    if (read > size || read % 8)
        abort();
    if (read && replay(data, read, 0) != read)
        abort();
    return 0;
}
