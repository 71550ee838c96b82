/* store.h: the event store. Each thread appends to its own chunk (no global lock per
 * event); a full chunk moves to the session's list under a mutex, once per chunk.
 * The bound on stored events is reserved a chunk at a time; events past it are
 * dropped and counted, never allocated. */
#ifndef DT_STORE_H
#define DT_STORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "devtrace.h"

#define DT_CHUNK_EVENTS 4096u

typedef struct dt_chunk {
    struct dt_chunk *next;
    _Atomic uint32_t count; /* published with release by the owner thread */
    uint32_t capacity;
    devtrace_event events[];
} dt_chunk;

typedef struct dt_slot {
    struct dt_slot *next;
    pthread_t owner;          /* the appending thread */
    dt_chunk *current;        /* owned by the slot's thread until stop */
    _Atomic uint64_t dropped; /* events refused because the bound was hit */
} dt_slot;

typedef struct dt_store dt_store;
/* Called (on the appending thread) when a chunk is full, before it is filed. */
typedef void (*dt_chunk_full_fn)(void *user, const devtrace_event *events, size_t n);

struct dt_store {
    pthread_mutex_t lock;
    dt_chunk *full;        /* filed chunks, in filing order (owned) */
    dt_chunk **full_tail;  /* where the next filed chunk is linked */
    dt_slot *slots;        /* one per appending thread (owned) */
    uint64_t generation;   /* identifies this store in thread-local caches */
    uint64_t max_events;
    _Atomic uint64_t reserved; /* event capacity handed out to chunks */
    dt_chunk_full_fn on_full;
    void *on_full_user;
};

int dt_store_init(dt_store *st, uint64_t max_events);
void dt_store_destroy(dt_store *st);
/* Appends one event (copied). Returns 0, or -1 when dropped (counted). Thread-safe. */
int dt_store_append(dt_store *st, const devtrace_event *ev);
/* Events stored so far (after every appender has stopped) and dropped for the bound. */
uint64_t dt_store_count(dt_store *st);
uint64_t dt_store_dropped(dt_store *st);
/* Calls fn for every stored event (for drain, after appenders stopped). */
typedef void (*dt_store_visit_fn)(void *user, devtrace_event *ev);
void dt_store_visit(dt_store *st, dt_store_visit_fn fn, void *user);
/* Hands the calling thread's partially filled chunk to on_full (for shipping), and
 * starts a new one. */
void dt_store_flush_thread(dt_store *st);



/* Files every thread's partially filled chunk (calling on_full for each): for the end
 * of a session, after every appender has stopped. */
void dt_store_file_all(dt_store *st);
#endif
