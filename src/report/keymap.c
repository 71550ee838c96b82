/* keymap.c: the report's integer-pair hash map (keymap.h): linear probing, grown at half full. */
#include "keymap.h"

#include <stdlib.h>

static size_t slot_of(const dt_keymap *m, int64_t a, int64_t b)
{
    uint64_t h = (uint64_t)a * 0x9E3779B97F4A7C15ull ^ ((uint64_t)b + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
    h ^= h >> 29;
    return (size_t)h & (m->nslots - 1);
}

int64_t dt_keymap_get(const dt_keymap *m, int64_t a, int64_t b)
{
    if (!m->nslots)
        return -1;
    for (size_t i = slot_of(m, a, b);; i = (i + 1) & (m->nslots - 1)) {
        if (!m->values[i])
            return -1;
        if (m->keys[2 * i] == a && m->keys[2 * i + 1] == b)
            return m->values[i] - 1;
    }
}

static int grow(dt_keymap *m)
{
    size_t n = m->nslots ? m->nslots * 2 : 64;
    int64_t *keys = malloc(n * 2 * sizeof *keys);
    uint32_t *values = calloc(n, sizeof *values);
    if (!keys || !values) {
        free(keys);
        free(values);
        return -1;
    }
    dt_keymap old = *m;
    m->keys = keys;
    m->values = values;
    m->nslots = n;
    for (size_t i = 0; i < old.nslots; i++) {
        if (!old.values[i])
            continue;
        size_t j = slot_of(m, old.keys[2 * i], old.keys[2 * i + 1]);
        while (values[j])
            j = (j + 1) & (n - 1);
        keys[2 * j] = old.keys[2 * i];
        keys[2 * j + 1] = old.keys[2 * i + 1];
        values[j] = old.values[i];
    }
    free(old.keys);
    free(old.values);
    return 0;
}

int64_t dt_keymap_put(dt_keymap *m, int64_t a, int64_t b, uint32_t value)
{
    if ((m->count + 1) * 2 > m->nslots && grow(m) != 0)
        return -1;
    size_t i = slot_of(m, a, b);
    for (;; i = (i + 1) & (m->nslots - 1)) {
        if (!m->values[i])
            break;
        if (m->keys[2 * i] == a && m->keys[2 * i + 1] == b)
            return m->values[i] - 1;
    }
    m->keys[2 * i] = a;
    m->keys[2 * i + 1] = b;
    m->values[i] = value + 1;
    m->count++;
    return value;
}

void dt_keymap_free(dt_keymap *m)
{
    free(m->keys);
    free(m->values);
    m->keys = NULL;
    m->values = NULL;
    m->nslots = m->count = 0;
}
