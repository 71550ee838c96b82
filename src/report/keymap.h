/* keymap.h: an open-addressing hash map from a pair of 64-bit integers to a 32-bit index, for
 * the report's per-lane and per-op-instance tables (keys are device/stream pairs and External
 * ids, met millions of times while a trace is read). */
#ifndef DT_KEYMAP_H
#define DT_KEYMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct dt_keymap {
    int64_t *keys;    /* owned: two per slot */
    uint32_t *values; /* owned: value + 1 per slot, 0 = empty */
    size_t nslots, count;
} dt_keymap;

/* The index stored for (a, b), or -1. */
int64_t dt_keymap_get(const dt_keymap *m, int64_t a, int64_t b);
/* Stores (a, b) -> value when absent; returns the index now stored for the key, or -1 when out
 * of memory. */
int64_t dt_keymap_put(dt_keymap *m, int64_t a, int64_t b, uint32_t value);
void dt_keymap_free(dt_keymap *m);

#endif
