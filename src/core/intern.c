/* intern.c: string interning with an open-addressing hash table under one mutex.
 * Entries live in fixed blocks that never move, so an id, once returned, can be read
 * without the lock; a per-thread pointer cache keeps the decode path off the mutex. */
#include "intern.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static atomic_uint_fast64_t intern_generations = 1;

/* Eight bytes a step (FNV-1a a byte at a time took about 60 ns for an autograd node's
 * 50-character name, which the PyTorch observer hashes whenever the name's pointer is new). */
uint32_t dt_intern_hash(const char *s, size_t len)
{
    uint64_t h = 0x9E3779B97F4A7C15ull ^ len, w;
    for (; len >= 8; s += 8, len -= 8) {
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDull;
        h ^= h >> 29;
    }
    if (len) {
        w = 0;
        memcpy(&w, s, len);
        h = (h ^ w) * 0xFF51AFD7ED558CCDull;
    }
    h = (h ^ (h >> 32)) * 0xC4CEB9FE1A85EC53ull;
    return (uint32_t)(h ^ (h >> 29));
}

static struct dt_intern_entry *entry_at(const dt_intern *t, uint32_t id)
{
    return &t->blocks[id / DT_INTERN_BLOCK][id % DT_INTERN_BLOCK];
}

int dt_intern_init(dt_intern *t)
{
    memset(t, 0, sizeof *t);
    pthread_mutex_init(&t->lock, NULL);
    t->nslots = 1024;
    t->slots = calloc(t->nslots, sizeof *t->slots);
    t->blocks[0] = calloc(DT_INTERN_BLOCK, sizeof(struct dt_intern_entry));
    if (!t->slots || !t->blocks[0])
        goto fail;
    t->blocks[0][0].str = calloc(1, 1);
    if (!t->blocks[0][0].str)
        goto fail;
    t->count = 1;
    t->generation = atomic_fetch_add(&intern_generations, 1);
    return 0;
fail:
    dt_intern_destroy(t);
    return -1;
}

void dt_intern_destroy(dt_intern *t)
{
    if (!t || !t->nslots)
        return;
    for (uint32_t b = 0; b < DT_INTERN_BLOCKS && t->blocks[b]; b++) {
        for (uint32_t i = 0; i < DT_INTERN_BLOCK; i++)
            free(t->blocks[b][i].str);
        free(t->blocks[b]);
    }
    free(t->slots);
    pthread_mutex_destroy(&t->lock);
    memset(t, 0, sizeof *t);
}

static int grow_slots(dt_intern *t)
{
    uint32_t n = t->nslots * 2;
    uint32_t *slots = calloc(n, sizeof *slots);
    if (!slots)
        return -1;
    for (uint32_t id = 1; id < t->count; id++) {
        const struct dt_intern_entry *e = entry_at(t, id);
        uint32_t i = dt_intern_hash(e->str, e->len) & (n - 1);
        while (slots[i])
            i = (i + 1) & (n - 1);
        slots[i] = id;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = n;
    return 0;
}

uint32_t dt_intern_n(dt_intern *t, const char *s, size_t len)
{
    return s ? dt_intern_nh(t, s, len, dt_intern_hash(s, len)) : 0;
}

uint32_t dt_intern_nh(dt_intern *t, const char *s, size_t len, uint32_t h)
{
    if (!s || len == 0 || len > UINT32_MAX / 2)
        return 0; /* id 0 is the empty string: never a second entry for it */
    uint32_t id = 0;
    pthread_mutex_lock(&t->lock);
    t->lookups++;
    uint32_t i = h & (t->nslots - 1);
    for (; t->slots[i]; i = (i + 1) & (t->nslots - 1)) {
        const struct dt_intern_entry *e = entry_at(t, t->slots[i]);
        if (e->len == len && memcmp(e->str, s, len) == 0) {
            id = t->slots[i];
            goto end;
        }
    }
    uint32_t block = t->count / DT_INTERN_BLOCK;
    if (block >= DT_INTERN_BLOCKS)
        goto end;
    if (!t->blocks[block] && !(t->blocks[block] = calloc(DT_INTERN_BLOCK, sizeof(struct dt_intern_entry))))
        goto end;
    char *copy = malloc(len + 1);
    if (!copy)
        goto end;
    memcpy(copy, s, len);
    copy[len] = '\0';
    id = t->count;
    entry_at(t, id)->str = copy;
    entry_at(t, id)->len = (uint32_t)len;
    __atomic_store_n(&t->count, id + 1, __ATOMIC_RELEASE); /* read without the lock by get */
    t->slots[i] = id;
    if ((uint64_t)t->count * 2 > t->nslots)
        grow_slots(t); /* on failure the table stays valid, only fuller */
end:
    pthread_mutex_unlock(&t->lock);
    return id;
}

uint32_t dt_intern_str(dt_intern *t, const char *s)
{
    return s ? dt_intern_n(t, s, strlen(s)) : 0;
}

#define DT_PTR_CACHE 64
static _Thread_local struct {
    const char *ptr;
    uint64_t generation;
    uint32_t id;
} ptr_cache[DT_PTR_CACHE];

uint32_t dt_intern_ptr(dt_intern *t, const char *s)
{
    if (!s)
        return 0;
    unsigned slot = (unsigned)((((uintptr_t)s >> 3) * 0x9E3779B1u) >> 26) & (DT_PTR_CACHE - 1);
    if (ptr_cache[slot].ptr == s && ptr_cache[slot].generation == t->generation) {
        uint32_t id = ptr_cache[slot].id;
        /* The vendor may reuse an address for another string: verify. */
        if (strcmp(entry_at(t, id)->str, s) == 0)
            return id;
    }
    uint32_t id = dt_intern_str(t, s);
    if (id) {
        ptr_cache[slot].ptr = s;
        ptr_cache[slot].generation = t->generation;
        ptr_cache[slot].id = id;
    }
    return id;
}

const char *dt_intern_get(const dt_intern *t, uint32_t id)
{
    if (id >= __atomic_load_n(&t->count, __ATOMIC_ACQUIRE))
        return "";
    return entry_at(t, id)->str;
}

uint64_t dt_intern_lookups(dt_intern *t)
{
    pthread_mutex_lock(&t->lock);
    uint64_t n = t->lookups;
    pthread_mutex_unlock(&t->lock);
    return n;
}

uint32_t dt_intern_count(dt_intern *t)
{
    pthread_mutex_lock(&t->lock);
    uint32_t n = t->count;
    pthread_mutex_unlock(&t->lock);
    return n;
}
