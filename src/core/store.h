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

/* A chunk is 512 KiB: a 32-byte header and 4680 events. */
#define DT_CHUNK_BYTES (512u << 10)
#define DT_CHUNK_EVENTS 4680u

/* Zeroes an event with seven 16-byte stores. A memset of its 112 bytes
 * at an address the compiler cannot see the alignment of becomes `rep stos`, whose start-up
 * alone costs more than building the event. */
typedef uint64_t dt_event_words __attribute__((vector_size(16), aligned(8), may_alias));
_Static_assert(sizeof(devtrace_event) == 7 * sizeof(dt_event_words), "dt_event_zero covers every byte of an event");
static inline void dt_event_zero(devtrace_event *ev)
{
    dt_event_words *v = (dt_event_words *)(void *)ev, z = {0, 0};
    v[0] = z, v[1] = z, v[2] = z, v[3] = z, v[4] = z, v[5] = z, v[6] = z;
}

typedef struct dt_chunk {
    struct dt_chunk *next;
    _Atomic uint32_t count; /* published with release by the owner thread */
    uint32_t capacity;
    uint32_t handed;       /* events [0, handed) were given to on_full (under the store's hand_lock) */
    uint32_t alloc_events; /* the events it has room for (capacity may be fewer: the bound);
                              DT_CHUNK_EXTERNAL: a chunk from the store's chunk source */
    uint32_t reuses;       /* times it was emptied for reuse (under the store's hand_lock) */
    devtrace_event events[];
} dt_chunk;
#define DT_CHUNK_EXTERNAL 0u
#define DT_CHUNK_REGION UINT32_MAX /* alloc_events: a full-size chunk carved from a huge-page region (store.c) */
_Static_assert(sizeof(dt_chunk) + DT_CHUNK_EVENTS * sizeof(devtrace_event) <= DT_CHUNK_BYTES,
               "a chunk fits its 512 KiB");

/* Chunks made ahead, off the appending threads (store.c): a thread filling chunks as fast
 * as it can would otherwise take a page fault (about 2 us on these VMs) every 39 events.
 * One for the process, started only where the process has other threads already (a
 * process of one thread takes its chunks from huge-page regions instead: store.c). */
#define DT_PROVIDER_READY 8u /* chunks the provider keeps ready */
typedef struct dt_chunk_provider {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    dt_chunk *ready; /* allocated and touched, not yet handed out (owned) */
    unsigned nready;
    uint64_t handed; /* chunks handed out */
    int state;       /* 0: not started; 1: running; -1: not available */
    int pid;         /* the process that started the thread (a forked child does not have it) */
    int stop;        /* the process is exiting: the thread ends */
} dt_chunk_provider;
/* The provider's state, ready chunks and chunks handed out so far (for tests). */
void dt_store_provider_read(int *state, unsigned *nready, uint64_t *handed);
/* Huge-page regions (store.c: a process of one thread takes its chunks from them instead of
 * starting the provider): mapped so far, unmapped again (every chunk freed), and the chunks
 * handed out of the current one (for tests). */
void dt_store_regions_read(uint64_t *mapped, uint64_t *unmapped, unsigned *carved);
/* How long a region may take to fault in before regions are given up for the provider (for
 * tests): ns, LLONG_MAX never, a negative value: every region is too slow, 0: the default. */
void dt_store_regions_set_slow_ns(long long ns);
/* Ends the provider thread and waits (at most a second) until it has: run when the process
 * exits (a destructor), so that no thread of devtrace's is still allocating while the exit's
 * own work runs (LeakSanitizer's check stops every thread; one inside an madvise of a new
 * chunk made it fail now and then). Appenders allocate their own chunks after it. */
void dt_store_provider_stop(void);

typedef struct dt_slot {
    struct dt_slot *next;
    pthread_t owner;          /* the appending thread */
    dt_chunk *current;        /* owned by the slot's thread until stop */
    _Atomic uint64_t dropped; /* events refused because the bound was hit */
} dt_slot;

/* Where a store's chunks come from instead of the heap (dt_store_set_chunk_source): room
 * for one chunk of DT_CHUNK_BYTES, 8-byte aligned, owned by the source's owner (the store
 * never frees it, and it must outlive the store), or NULL (the store then uses the heap). */
typedef void *(*dt_chunk_source_fn)(void *user);

typedef struct dt_store dt_store;
/* Called with the events of a chunk not handed over before: on the appending thread when
 * the chunk is full, before it is filed (with deferral, from dt_store_hand_deferred); for partial chunks from dt_store_flush_thread,
 * dt_store_file_all and dt_store_hand_partial. Calls never overlap (hand_lock). */
typedef void (*dt_chunk_full_fn)(void *user, const devtrace_event *events, size_t n);

struct dt_store {
    pthread_mutex_t lock;
    dt_chunk *full;       /* filed chunks, in filing order (owned) */
    dt_chunk **full_tail; /* where the next filed chunk is linked */
    dt_slot *slots;       /* one per appending thread (owned) */
    uint64_t generation;  /* identifies this store in thread-local caches */
    uint64_t max_events;
    _Atomic uint64_t reserved; /* event capacity handed out to chunks */
    dt_chunk_full_fn on_full;
    void *on_full_user;
    pthread_mutex_t hand_lock; /* serialises on_full and every chunk's handed count */
    /* Set with on_full when what on_full was given is not needed here again (a traced
     * program's store: what was shipped is the recorder's): a filed chunk, its events
     * handed over, is kept for reuse instead of in full (not visited, not counted), so
     * that the program's memory stays a few chunks however long it runs, and no new
     * chunk's pages are faulted in after the first few. */
    int recycle;
    dt_chunk *spare;                 /* recycled chunks, full size (under lock; owned) */
    dt_chunk_source_fn chunk_source; /* NULL: chunks from the heap */
    void *chunk_source_user;
    /* Deferred handing (dt_store_set_deferred): full chunks waiting for another thread to
     * hand them to on_full (under lock; owned), oldest first. */
    dt_chunk *pending;
    dt_chunk **pending_tail;
    pthread_mutex_t defer_lock; /* held while waiting chunks are handed: one batch at a time, in order */
    unsigned npending;
    int (*defer_wake)(void *user);
    void *defer_user;
};

/* How many full chunks may wait for deferred handing (4 MiB) before the thread that filled
 * one hands it itself, as without deferral (so a handing thread that cannot keep up slows
 * the appenders instead of growing the program's memory). */
#define DT_STORE_PENDING_MAX 8u

int dt_store_init(dt_store *st, uint64_t max_events);
void dt_store_destroy(dt_store *st);
/* New chunks from source from now on (a file mapping, say, so that the events are not in
 * the process's anonymous memory); the chunk provider is not used for this store. Set it
 * before the first append. */
void dt_store_set_chunk_source(dt_store *st, dt_chunk_source_fn source, void *user);
/* Full chunks are handed to on_full by another thread instead of the one that filled them
 * (a traced program's store: shipping a chunk, a copy of 512 KiB into a socket, cost its
 * appending thread about 100 ns an event): the filling thread queues the chunk and calls
 * wake(user), which returns 0 when the handing thread will call dt_store_hand_deferred
 * soon, else nonzero (the filling thread then hands what waits itself). Set with on_full,
 * before the first append. */
void dt_store_set_deferred(dt_store *st, int (*wake)(void *user), void *user);
/* Hands every chunk that waits for deferred handing, oldest first, then keeps it for reuse
 * or files it as a full chunk would be. */
void dt_store_hand_deferred(dt_store *st);
/* Appends one event (copied). Returns 0, or -1 when dropped (counted). Thread-safe. */
int dt_store_append(dt_store *st, const devtrace_event *ev);
/* A run of appends by one thread (the records of one vendor buffer): the caller writes
 * each event in place in the thread's chunk instead of building it elsewhere and copying
 * it, and finds its slot once per run instead of once per event. Zero-initialise; use on
 * one thread; nothing to close. */
typedef struct dt_store_cursor {
    dt_store *st;
    dt_slot *slot;   /* NULL until the first dt_store_cursor_next */
    dt_chunk *chunk; /* the chunk the last dt_store_cursor_next returned a place in */
    uint32_t n;      /* ... and the index of that place */
    int failed;      /* no slot could be made: every event is a drop */
    /* A run (dt_store_run_*): the free places of chunk, run_next the next one; events
     * before run_next are written but not yet counted in the chunk. */
    devtrace_event *run_next, *run_end;
} dt_store_cursor;

dt_slot *dt_store_cursor_open_slow(dt_store_cursor *cur, dt_store *st);
devtrace_event *dt_store_cursor_refill(dt_store_cursor *cur);

/* The place of the next event, not yet stored (write it, then commit, or leave it), or
 * NULL when the bound is reached: the caller then counts the event with
 * dt_store_cursor_drop if it would have been stored. */
static inline devtrace_event *dt_store_cursor_next(dt_store_cursor *cur, dt_store *st)
{
    dt_slot *slot = cur->slot;
    if (__builtin_expect(!slot, 0) && !(slot = dt_store_cursor_open_slow(cur, st)))
        return NULL;
    dt_chunk *c = slot->current;
    if (__builtin_expect(c != NULL, 1)) {
        uint32_t n = atomic_load_explicit(&c->count, memory_order_relaxed);
        if (__builtin_expect(n < c->capacity, 1)) {
            cur->chunk = c;
            cur->n = n;
            return &c->events[n];
        }
    }
    return dt_store_cursor_refill(cur);
}

/* Asks for the cache lines of the place after ev, for writing: a thread that stores an
 * event now and then (a launch's, microseconds apart) may find the next place's lines
 * gone from its caches by then, and wait for them at the next store. Two instructions;
 * on PoCL its gain was within the noise (docs/performance.md, OpenCL launch overhead). A
 * prefetch never faults, past the chunk's end too. */
static inline void dt_store_prefetch_after(const devtrace_event *ev)
{
    __builtin_prefetch(ev + 1, 1, 3);
    __builtin_prefetch((const char *)(ev + 2) - 1, 1, 3);
}

/* Stores the event written at the place dt_store_cursor_next returned last. */
static inline void dt_store_cursor_commit(dt_store_cursor *cur)
{
    atomic_store_explicit(&cur->chunk->count, cur->n + 1, memory_order_release);
    dt_store_prefetch_after(&cur->chunk->events[cur->n]);
}

/* Counts one event refused for the bound (dt_store_cursor_next returned NULL). */
void dt_store_cursor_drop(dt_store_cursor *cur);

/* A run: the appends of one walk over a vendor buffer, by one thread that appends
 * nothing else to the store until dt_store_run_close. The places are the free part of
 * the thread's chunk, taken in order; the chunk's count is published once, when the run
 * leaves the chunk or closes, instead of once per event. A zeroed cursor starts one. */
devtrace_event *dt_store_run_refill(dt_store_cursor *cur, dt_store *st);
/* The place of the run's next event (write it, then commit, or leave it), or NULL at the
 * bound: count the event with dt_store_cursor_drop then. */
static inline devtrace_event *dt_store_run_next(dt_store_cursor *cur, dt_store *st)
{
    if (__builtin_expect(cur->run_next != cur->run_end, 1))
        return cur->run_next;
    return dt_store_run_refill(cur, st);
}
/* Keeps the event written at the place dt_store_run_next returned last. */
static inline void dt_store_run_commit(dt_store_cursor *cur)
{
    cur->run_next++;
}
/* Publishes the run's events in the chunk (with release): call when the walk ends. */
void dt_store_run_close(dt_store_cursor *cur);

/* Events stored so far (after every appender has stopped) and dropped for the bound. */
uint64_t dt_store_count(dt_store *st);
uint64_t dt_store_dropped(dt_store *st);
/* Calls fn for every stored event (for drain, after appenders stopped). */
typedef void (*dt_store_visit_fn)(void *user, devtrace_event *ev);
void dt_store_visit(dt_store *st, dt_store_visit_fn fn, void *user);
/* Hands the calling thread's partially filled chunk to on_full (for shipping), and
 * starts a new one. */
void dt_store_flush_thread(dt_store *st);

/* Hands on_full the events every thread published since they were last handed over,
 * leaving the chunks with their threads (which go on appending): for shipping what was
 * captured at a bounded age, and from a thread other than the appenders. */
void dt_store_hand_partial(dt_store *st);

/* Files every thread's partially filled chunk (calling on_full for each): for the end
 * of a session, after every appender has stopped. */
void dt_store_file_all(dt_store *st);
#endif
