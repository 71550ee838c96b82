/* intern.h: the session's string table. Names are stored once and referred to by a
 * u32 id (0 = no name); events never own strings. */
#ifndef DT_INTERN_H
#define DT_INTERN_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define DT_INTERN_BLOCK 1024u
#define DT_INTERN_BLOCKS 16384u /* at most 16 M distinct names */

struct dt_intern_entry {
    char *str; /* owned */
    uint32_t len;
};

typedef struct dt_intern {
    pthread_mutex_t lock;
    struct dt_intern_entry *blocks[DT_INTERN_BLOCKS]; /* owned; entries never move */
    uint32_t count;
    uint32_t *slots; /* open addressing: id, 0 = empty */
    uint32_t nslots;
    uint64_t generation; /* distinguishes tables in thread-local caches */
    uint64_t lookups;    /* calls that took the lock to find or add a string (under lock) */
} dt_intern;

int dt_intern_init(dt_intern *t);
void dt_intern_destroy(dt_intern *t);
/* Returns the id of the string (adding it), or 0 for the empty string or when out of
 * memory. Thread-safe. */
uint32_t dt_intern_n(dt_intern *t, const char *s, size_t len);
/* The table's hash of the len bytes at s, and dt_intern_n with it computed already (a
 * caller that keeps its own cache keyed on it). */
uint32_t dt_intern_hash(const char *s, size_t len);
uint32_t dt_intern_nh(dt_intern *t, const char *s, size_t len, uint32_t hash);
uint32_t dt_intern_str(dt_intern *t, const char *s);
/* Like dt_intern_str, with a per-thread cache keyed on the pointer value: for vendor
 * name pointers that repeat (kernel names). Verifies the cached string. */
uint32_t dt_intern_ptr(dt_intern *t, const char *s);
/* The string of an id ("" for 0 or an unknown id). Stable until destroy. */
const char *dt_intern_get(const dt_intern *t, uint32_t id);
uint32_t dt_intern_count(dt_intern *t);
/* How many times the table itself was searched (for tests of the callers' caches). */
uint64_t dt_intern_lookups(dt_intern *t);

#endif
