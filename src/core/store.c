/* store.c: chunked, per-thread event store (see store.h). */
#include "store.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h> /* glibc 2.32 */
#define DT_HAVE_SINGLE_THREADED 1
#endif
#endif

#include "filemem.h"

static atomic_uint_fast64_t store_generations = 1;

static _Thread_local struct {
    const dt_store *store;
    uint64_t generation;
    dt_slot *slot;
} slot_cache;

/* ---- the chunk provider ----
 *
 * A thread appending as fast as it can takes a page fault every 39 events in fresh memory
 * (about 2 us each on these VMs: 50 ns an event). Once a first chunk of any store fills, a
 * provider thread (one for the process, for every store) keeps a few chunks ready: it
 * allocates them and touches every page, off the appending threads. An appending thread
 * takes a ready chunk under the provider's lock (once per chunk) and falls back to malloc
 * when none is ready: it never waits for the provider. Chunks are malloc's like any other,
 * from the provider's arena: memory a closed session gave back returns there and is made
 * into the next session's chunks (a profiler's repeated windows) without faulting again,
 * as long as malloc keeps it. The thread lives as long as the process; a forked child does
 * not have it and allocates its own chunks. */

static dt_chunk_provider provider = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, 0, 0, 0, 0, 0};

/* Faults in every page of [p, p + n) for writing: with one madvise(MADV_POPULATE_WRITE)
 * (Linux 5.14) for the whole pages, without a trap per page; by touching each page where
 * the kernel does not have it. */
static void populate(void *p, size_t n)
{
    uintptr_t page = 4096, start = ((uintptr_t)p + page - 1) & ~(page - 1), end = ((uintptr_t)p + n) & ~(page - 1);
    ((volatile char *)p)[0] = 0; /* the page the chunk starts in */
#ifdef MADV_POPULATE_WRITE
    if (end > start && madvise((void *)start, end - start, MADV_POPULATE_WRITE) == 0) {
        ((volatile char *)p)[n - 1] = 0; /* the page it ends in */
        return;
    }
#endif
    for (size_t off = 0; off < n; off += page)
        ((volatile char *)p)[off] = 0;
    ((volatile char *)p)[n - 1] = 0;
}

static void *provider_main(void *arg)
{
    dt_chunk_provider *p = arg;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        if (p->stop)
            break;
        if (p->nready >= DT_PROVIDER_READY) {
            pthread_cond_wait(&p->wake, &p->lock);
            continue;
        }
        pthread_mutex_unlock(&p->lock);
        dt_chunk *c = malloc(DT_CHUNK_BYTES);
        if (c)
            populate(c, DT_CHUNK_BYTES);
        pthread_mutex_lock(&p->lock);
        if (!c)
            break; /* out of memory: appenders allocate their own */
        c->next = p->ready;
        p->ready = c;
        p->nready++;
    }
    __atomic_store_n(&p->state, -1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&p->wake); /* dt_store_provider_stop waits for this */
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

void dt_store_provider_stop(void)
{
    dt_chunk_provider *p = &provider;
    if (__atomic_load_n(&p->state, __ATOMIC_ACQUIRE) != 1 || p->pid != (int)getpid())
        return; /* never started, ended, or a forked child (which does not have the thread) */
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_broadcast(&p->wake);
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 1;
    while (__atomic_load_n(&p->state, __ATOMIC_RELAXED) == 1)
        if (pthread_cond_timedwait(&p->wake, &p->lock, &deadline) != 0)
            break;
    pthread_mutex_unlock(&p->lock);
}

__attribute__((destructor)) static void provider_stop_at_exit(void)
{
    dt_store_provider_stop();
}

/* ---- huge-page regions, for a process of one thread ----
 *
 * Starting the provider makes a process of one thread a process of two, and glibc then
 * takes every lock and every malloc/free of the whole process with atomic instructions
 * instead of plain ones (its single-thread fast paths, __libc_single_threaded, are off for
 * good once a thread was created): a PyTorch op on a 1-element tensor cost about 40 ns more
 * with one idle thread beside it (docs/performance.md). So while the process has only ever
 * had one thread, the appending thread makes its chunks itself, four at a time from a 2 MiB
 * region asked to be a transparent huge page and faulted in with one madvise: about 5 ns an
 * event here, against about 40 for 4 KiB pages, faulted or populated. A region is unmapped
 * when its last chunk is freed. Where transparent huge pages are off ("never") or
 * unavailable, once the process has other threads, or once a region took more than
 * DT_REGION_SLOW_NS to fault in (memory its VM's host had not backed: its first touch
 * costs about 190 ns an event here, better paid on another thread), the provider serves as
 * before. */
#define DT_REGION_BYTES (2u << 20)
#define DT_REGION_CHUNKS (DT_REGION_BYTES / DT_CHUNK_BYTES)
/* A region whose faulting-in took longer ends the use of regions (region_map). */
#define DT_REGION_SLOW_NS 1000000ll
/* The region's count of chunks not yet freed, in the spare tail of its first chunk. */
#define DT_REGION_LIVE_OFFSET (DT_CHUNK_BYTES - 64u)
_Static_assert(sizeof(dt_chunk) + DT_CHUNK_EVENTS * sizeof(devtrace_event) <= DT_REGION_LIVE_OFFSET,
               "a region's count fits behind its first chunk's events");
_Static_assert(DT_REGION_BYTES % DT_CHUNK_BYTES == 0, "a region holds whole chunks");

static struct {
    char *current;     /* the region chunks are carved from (under provider.lock) */
    unsigned next;     /* its next chunk */
    int pid;           /* the process that mapped it (0: none yet) */
    int thp;           /* transparent huge pages: 0 not known yet, 1 on, -1 off */
    long long slow_ns; /* DT_REGION_SLOW_NS unless a test set it (0: the default) */
    uint64_t mapped;   /* regions mapped (for tests) */
    _Atomic uint64_t unmapped;
} regions;

static _Atomic uint32_t *region_live(char *region)
{
    return (_Atomic uint32_t *)(void *)(region + DT_REGION_LIVE_OFFSET);
}

/* Whether the process has only ever had one thread (unknown: no). */
static int single_threaded(void)
{
#ifdef DT_HAVE_SINGLE_THREADED
    return __libc_single_threaded != 0;
#else
    return 0;
#endif
}

/* Chunks come from regions here: one thread, huge pages on, and not a forked child of a
 * process that had regions (its copy of the lock may be held by a thread it lacks). */
static int regions_serve(void)
{
    if (!single_threaded())
        return 0;
    if (regions.pid && regions.pid != (int)getpid())
        return 0;
    if (!regions.thp)
        regions.thp = dt_thp_enabled() ? 1 : -1; /* one thread: no race */
    return regions.thp > 0;
}

/* A new 2 MiB region, 2 MiB-aligned, faulted in, its count at DT_REGION_CHUNKS; NULL when
 * out of memory. */
static char *region_map(void)
{
    char *r = dt_huge_map(DT_REGION_BYTES); /* one 2 MiB huge page (DT_REGION_BYTES, above) */
    if (!r)
        return NULL;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    populate(r, DT_REGION_BYTES);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    /* Memory the host of a VM has not backed yet (or took back: free page reporting) costs
     * it a fault per page on first touch: about 3.5 ms for a region here against 0.1 ms.
     * Where a region took that long, the faults go to the provider thread from now on (off
     * this thread, at the price of the process's atomics). */
    long long slow = regions.slow_ns ? regions.slow_ns : DT_REGION_SLOW_NS;
    if ((t1.tv_sec - t0.tv_sec) * 1000000000ll + (t1.tv_nsec - t0.tv_nsec) > slow)
        regions.thp = -1;
    atomic_init(region_live(r), DT_REGION_CHUNKS);
    regions.mapped++;
    return r;
}

/* A chunk from the current region (a new region when it is used up), or NULL. */
static dt_chunk *region_take(void)
{
    pthread_mutex_lock(&provider.lock);
    if (!regions.current || regions.next == DT_REGION_CHUNKS) {
        regions.current = region_map();
        regions.next = 0;
        regions.pid = (int)getpid();
    }
    dt_chunk *c = NULL;
    if (regions.current)
        c = (dt_chunk *)(void *)(regions.current + (size_t)regions.next++ * DT_CHUNK_BYTES);
    pthread_mutex_unlock(&provider.lock);
    return c;
}

/* Frees a chunk the store allocated (not one of a chunk source). */
static void chunk_free(dt_chunk *c)
{
    if (!c || c->alloc_events == DT_CHUNK_EXTERNAL)
        return;
    if (c->alloc_events != DT_CHUNK_REGION) {
        free(c);
        return;
    }
    char *region = (char *)((uintptr_t)c & ~(uintptr_t)(DT_REGION_BYTES - 1));
    if (atomic_fetch_sub(region_live(region), 1) == 1) {
        munmap(region, DT_REGION_BYTES);
        atomic_fetch_add(&regions.unmapped, 1);
    }
}

void dt_store_regions_set_slow_ns(long long ns)
{
    pthread_mutex_lock(&provider.lock);
    regions.slow_ns = ns;
    pthread_mutex_unlock(&provider.lock);
}

void dt_store_regions_read(uint64_t *mapped, uint64_t *unmapped, unsigned *carved)
{
    pthread_mutex_lock(&provider.lock);
    *mapped = regions.mapped;
    *carved = regions.current ? regions.next : DT_REGION_CHUNKS;
    pthread_mutex_unlock(&provider.lock);
    *unmapped = atomic_load(&regions.unmapped);
}

/* A chunk filled: from now on chunks are made ahead. */
static void provider_start(void)
{
    dt_chunk_provider *p = &provider;
    if (__atomic_load_n(&p->state, __ATOMIC_ACQUIRE) != 0)
        return;
    pthread_mutex_lock(&p->lock);
    if (__atomic_load_n(&p->state, __ATOMIC_RELAXED) == 0) {
        p->pid = (int)getpid();
        pthread_attr_t attr;
        pthread_t t;
        int started = pthread_attr_init(&attr) == 0;
        started = started && pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0 &&
                  pthread_create(&t, &attr, provider_main, p) == 0;
        pthread_attr_destroy(&attr);
        __atomic_store_n(&p->state, started ? 1 : -1, __ATOMIC_RELEASE); /* read without the lock */
    }
    pthread_mutex_unlock(&p->lock);
}

/* A ready chunk, or NULL (none ready, no provider, or a forked child: its copy of the
 * lock may be held by a thread that does not exist in it). */
static dt_chunk *provider_take(void)
{
    dt_chunk_provider *p = &provider;
    if (__atomic_load_n(&p->state, __ATOMIC_ACQUIRE) != 1 || p->pid != (int)getpid())
        return NULL;
    pthread_mutex_lock(&p->lock);
    dt_chunk *c = p->ready;
    if (c) {
        p->ready = c->next;
        p->nready--;
        p->handed++;
        pthread_cond_signal(&p->wake);
    }
    pthread_mutex_unlock(&p->lock);
    return c;
}

void dt_store_provider_read(int *state, unsigned *nready, uint64_t *handed)
{
    pthread_mutex_lock(&provider.lock);
    *state = provider.state;
    *nready = provider.nready;
    *handed = provider.handed;
    pthread_mutex_unlock(&provider.lock);
}

int dt_store_init(dt_store *st, uint64_t max_events)
{
    memset(st, 0, sizeof *st);
    if (pthread_mutex_init(&st->lock, NULL) != 0)
        return -1;
    if (pthread_mutex_init(&st->hand_lock, NULL) != 0) {
        pthread_mutex_destroy(&st->lock);
        return -1;
    }
    if (pthread_mutex_init(&st->defer_lock, NULL) != 0) {
        pthread_mutex_destroy(&st->hand_lock);
        pthread_mutex_destroy(&st->lock);
        return -1;
    }

    st->max_events = max_events;
    st->full_tail = &st->full;
    st->pending_tail = &st->pending;
    st->generation = atomic_fetch_add(&store_generations, 1);
    return 0;
}

void dt_store_set_deferred(dt_store *st, int (*wake)(void *user), void *user)
{
    st->defer_wake = wake;
    st->defer_user = user;
}

void dt_store_set_chunk_source(dt_store *st, dt_chunk_source_fn source, void *user)
{
    st->chunk_source = source;
    st->chunk_source_user = user;
}

void dt_store_destroy(dt_store *st)
{
    if (!st || !st->generation)
        return;
    size_t walked = 0;
    for (dt_chunk *c = st->full, *next; c; c = next) {
        next = c->next;
        if (c->alloc_events == DT_CHUNK_EXTERNAL && ++walked % 32 == 0)
            dt_filemem_check(); /* each header read maps its neighbours too (the kernel's fault-around) */
        chunk_free(c);
    }
    for (dt_chunk *c = st->spare, *next; c; c = next) {
        next = c->next;
        chunk_free(c);
    }
    for (dt_chunk *c = st->pending, *next; c; c = next) {
        next = c->next;
        chunk_free(c);
    }
    for (dt_slot *s = st->slots, *next; s; s = next) {
        next = s->next;
        chunk_free(s->current);
        free(s);
    }
    pthread_mutex_destroy(&st->lock);
    pthread_mutex_destroy(&st->hand_lock);
    pthread_mutex_destroy(&st->defer_lock);
    memset(st, 0, sizeof *st);
}

/* The thread's first append to this store (or after it appended to another): find or
 * make its slot under the lock. Out of line, so that the cached case stays a few
 * instructions with no register spills in every append. */
static __attribute__((noinline)) dt_slot *slot_lookup(dt_store *st)
{
    /* The cache holds one store: a thread that appended here before, then to another
     * store, finds its slot again instead of taking a new chunk (and share of the bound). */
    pthread_t self = pthread_self();
    pthread_mutex_lock(&st->lock);
    dt_slot *slot = st->slots;
    while (slot && !pthread_equal(slot->owner, self))
        slot = slot->next;
    if (!slot && (slot = calloc(1, sizeof *slot)) != NULL) {
        slot->owner = self;
        slot->next = st->slots;
        st->slots = slot;
    }
    pthread_mutex_unlock(&st->lock);
    if (!slot)
        return NULL;
    slot_cache.store = st;
    slot_cache.generation = st->generation;
    slot_cache.slot = slot;
    return slot;
}

static inline dt_slot *slot_for_thread(dt_store *st)
{
    if (slot_cache.store == st && slot_cache.generation == st->generation)
        return slot_cache.slot;
    return slot_lookup(st);
}

/* Reserves capacity for a new chunk against the bound; 0 when the bound is reached. */
static uint32_t reserve_capacity(dt_store *st)
{
    uint64_t want = DT_CHUNK_EVENTS;
    uint64_t before = atomic_fetch_add(&st->reserved, want);
    if (before >= st->max_events)
        return 0;
    uint64_t left = st->max_events - before;
    return (uint32_t)(left < want ? left : want);
}

/* Gives on_full the chunk's events published and not yet handed over; with reuses set
 * (not UINT32_MAX), only if the chunk was not emptied for reuse since it was read then. */
static void hand_events_of(dt_store *st, dt_chunk *c, uint32_t reuses)
{
    if (!st->on_full)
        return;
    pthread_mutex_lock(&st->hand_lock);
    if (reuses != UINT32_MAX && reuses != c->reuses) {
        /* Another thread's chunk now, whose older chunk may still wait to be handed
         * (deferred): its events go at its next hand-over, after that one. */
        pthread_mutex_unlock(&st->hand_lock);
        return;
    }
    uint32_t n = atomic_load_explicit(&c->count, memory_order_acquire);
    if (n > c->handed) {
        st->on_full(st->on_full_user, c->events + c->handed, n - c->handed);
        c->handed = n;
    }
    pthread_mutex_unlock(&st->hand_lock);
}

static void hand_new_events(dt_store *st, dt_chunk *c)
{
    hand_events_of(st, c, UINT32_MAX);
}

/* A chunk whose events were all handed over: kept for reuse, or filed. */
static void put_handed(dt_store *st, dt_chunk *c)
{
    pthread_mutex_lock(&st->lock);
    if (st->recycle && st->on_full && (c->alloc_events == DT_CHUNK_EVENTS || c->alloc_events == DT_CHUNK_REGION)) {
        c->next = st->spare;                               /* its events were all handed over */
        __atomic_store_n(&st->spare, c, __ATOMIC_RELAXED); /* also read without the lock */
    } else {
        c->next = NULL; /* appended, so that a visit sees each thread's events in order */
        *st->full_tail = c;
        st->full_tail = &c->next;
    }
    pthread_mutex_unlock(&st->lock);
}

void dt_store_hand_deferred(dt_store *st)
{
    if (!__atomic_load_n(&st->pending, __ATOMIC_RELAXED))
        return;
    /* A batch another thread took is handed before this one: each thread's chunks in order. */
    pthread_mutex_lock(&st->defer_lock);
    pthread_mutex_lock(&st->lock);
    dt_chunk *list = st->pending;
    __atomic_store_n(&st->pending, NULL, __ATOMIC_RELAXED);
    st->pending_tail = &st->pending;
    st->npending = 0;
    pthread_mutex_unlock(&st->lock);
    for (dt_chunk *c = list, *next; c; c = next) {
        next = c->next;
        hand_new_events(st, c);
        put_handed(st, c);
    }
    pthread_mutex_unlock(&st->defer_lock);
}

/* Queues a full chunk for deferred handing: 1 when queued (and the handing thread woken),
 * 0 when the caller must hand it itself (no deferral, too many waiting, no handing thread:
 * what waits was handed first, oldest first). */
static int defer_chunk(dt_store *st, dt_chunk *c)
{
    if (!st->defer_wake || !st->on_full)
        return 0;
    pthread_mutex_lock(&st->lock);
    int queued = st->npending < DT_STORE_PENDING_MAX;
    if (queued) {
        c->next = NULL;
        __atomic_store_n(st->pending_tail, c, __ATOMIC_RELAXED); /* the head is read without the lock */
        st->pending_tail = &c->next;
        st->npending++;
    }
    pthread_mutex_unlock(&st->lock);
    if (queued && st->defer_wake(st->defer_user) == 0)
        return 1;
    dt_store_hand_deferred(st);
    return queued;
}

/* Files a chunk: its events not yet handed go to on_full now (a thread's partial chunk at
 * the end, or any chunk of a store without deferral), or later, from the handing thread
 * (a full chunk, with deferral: defer). */
static void file_chunk(dt_store *st, dt_chunk *c, int defer)
{
    if (defer && defer_chunk(st, c))
        return;
    dt_store_hand_deferred(st); /* the older ones first */
    hand_new_events(st, c);
    put_handed(st, c);
}

/* A recycled chunk, emptied, or NULL. It is emptied under hand_lock: a
 * dt_store_hand_partial that read it as some thread's current chunk before it was filed
 * may still hand its events, and then sees the new ones, each once. */
static dt_chunk *take_spare(dt_store *st)
{
    if (!__atomic_load_n(&st->spare, __ATOMIC_RELAXED))
        return NULL;
    pthread_mutex_lock(&st->lock);
    dt_chunk *c = st->spare;
    if (c)
        __atomic_store_n(&st->spare, c->next, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&st->lock);
    if (c) {
        pthread_mutex_lock(&st->hand_lock);
        atomic_store_explicit(&c->count, 0, memory_order_relaxed);
        c->handed = 0;
        __atomic_store_n(&c->reuses, c->reuses + 1, __ATOMIC_RELAXED); /* also read under the store's lock */
        pthread_mutex_unlock(&st->hand_lock);
    }
    return c;
}

static dt_chunk *new_chunk(dt_store *st)
{
    uint32_t cap = reserve_capacity(st);
    if (!cap)
        return NULL;
    dt_chunk *c = take_spare(st);
    if (c) {
        c->next = NULL;
        c->capacity = cap;
        return c;
    }
    uint32_t alloc = DT_CHUNK_EVENTS;
    if (st->chunk_source && (c = st->chunk_source(st->chunk_source_user)) != NULL)
        alloc = DT_CHUNK_EXTERNAL;
    else if (!st->chunk_source && (c = provider_take()) != NULL)
        alloc = DT_CHUNK_EVENTS;
    else if (!st->chunk_source && cap == DT_CHUNK_EVENTS && regions_serve() && (c = region_take()) != NULL)
        alloc = DT_CHUNK_REGION;
    else {
        alloc = cap;
        if (!(c = malloc(sizeof *c + (size_t)cap * sizeof(devtrace_event))))
            return NULL;
    }
    c->next = NULL;
    atomic_init(&c->count, 0);
    c->capacity = cap;
    c->alloc_events = alloc;
    c->handed = 0;
    c->reuses = 0;
    return c;
}

/* The slot's chunk is full (or it has none): files it and makes a new one current;
 * NULL when the bound is reached. */
static dt_chunk *replace_chunk(dt_store *st, dt_slot *slot)
{
    dt_chunk *c = slot->current;
    if (c) {
        __atomic_store_n(&slot->current, NULL, __ATOMIC_RELEASE); /* read by dt_store_hand_partial */
        file_chunk(st, c, 1);
        if (!st->chunk_source && !regions_serve())
            provider_start(); /* not in a process of one thread: see regions */
    }
    c = new_chunk(st);
    __atomic_store_n(&slot->current, c, __ATOMIC_RELEASE);
    return c;
}

int dt_store_append(dt_store *st, const devtrace_event *ev)
{
    dt_slot *slot = slot_for_thread(st);
    if (!slot)
        return -1;
    dt_chunk *c = slot->current;
    uint32_t n = c ? atomic_load_explicit(&c->count, memory_order_relaxed) : 0;
    if (!c || n == c->capacity) {
        if (!(c = replace_chunk(st, slot))) {
            atomic_fetch_add_explicit(&slot->dropped, 1, memory_order_relaxed);
            return -1;
        }
        n = 0;
    }
    c->events[n] = *ev;
    atomic_store_explicit(&c->count, n + 1, memory_order_release);
    dt_store_prefetch_after(&c->events[n]);
    return 0;
}

dt_slot *dt_store_cursor_open_slow(dt_store_cursor *cur, dt_store *st)
{
    if (cur->failed)
        return NULL;
    cur->st = st;
    cur->slot = slot_for_thread(st);
    cur->failed = cur->slot == NULL;
    return cur->slot;
}

/* The thread's chunk is full (or it has none): file it and take a new one. */
devtrace_event *dt_store_cursor_refill(dt_store_cursor *cur)
{
    dt_store *st = cur->st;
    dt_slot *slot = cur->slot;
    dt_chunk *c = slot->current;
    if (c && atomic_load_explicit(&c->count, memory_order_relaxed) < c->capacity)
        return dt_store_cursor_next(cur, st); /* not full: another caller refilled it */
    if (!(c = replace_chunk(st, slot)))
        return NULL;
    cur->chunk = c;
    cur->n = 0;
    return &c->events[0];
}

/* The run's events in its chunk so far: published (release) for readers of the count. */
static void run_publish(dt_store_cursor *cur)
{
    if (cur->run_next)
        atomic_store_explicit(&cur->chunk->count, (uint32_t)(cur->run_next - cur->chunk->events), memory_order_release);
}

devtrace_event *dt_store_run_refill(dt_store_cursor *cur, dt_store *st)
{
    run_publish(cur);
    cur->run_next = cur->run_end = NULL;
    if (!cur->slot && !dt_store_cursor_open_slow(cur, st))
        return NULL;
    dt_slot *slot = cur->slot;
    dt_chunk *c = slot->current;
    if ((!c || atomic_load_explicit(&c->count, memory_order_relaxed) >= c->capacity) && !(c = replace_chunk(st, slot)))
        return NULL;
    cur->chunk = c;
    cur->run_next = c->events + atomic_load_explicit(&c->count, memory_order_relaxed);
    cur->run_end = c->events + c->capacity;
    return cur->run_next;
}

void dt_store_run_close(dt_store_cursor *cur)
{
    run_publish(cur);
}

void dt_store_cursor_drop(dt_store_cursor *cur)
{
    if (cur->slot)
        atomic_fetch_add_explicit(&cur->slot->dropped, 1, memory_order_relaxed);
}

void dt_store_flush_thread(dt_store *st)
{
    dt_slot *slot = slot_for_thread(st);
    if (!slot || !slot->current || !atomic_load(&slot->current->count))
        return;
    dt_chunk *c = slot->current;
    __atomic_store_n(&slot->current, NULL, __ATOMIC_RELEASE);
    file_chunk(st, c, 0);
}

void dt_store_hand_partial(dt_store *st)
{
    /* The chunks current now, a batch at a time (on_full is not called under the store's
     * lock, which appenders filing a chunk take after hand_lock). A chunk filed meanwhile
     * stays valid (chunks are freed only with the store; a recycled one is emptied under
     * hand_lock, see take_spare), and hand_new_events gives only
     * what its filing did not; a slot made meanwhile shifts the list by one, so a slot may
     * be seen twice (harmless) or wait for the next call. */
    enum { batch = 64 };
    for (size_t skip = 0;; skip += batch) {
        dt_chunk *current[batch];
        uint32_t reuses[batch];
        size_t n = 0, index = 0;
        pthread_mutex_lock(&st->lock);
        dt_slot *s = st->slots;
        for (; s && n < batch; s = s->next, index++) {
            dt_chunk *c = index < skip ? NULL : __atomic_load_n(&s->current, __ATOMIC_ACQUIRE);
            if (c) {
                reuses[n] = __atomic_load_n(&c->reuses, __ATOMIC_RELAXED);
                current[n++] = c;
            }
        }
        int more = s != NULL;
        pthread_mutex_unlock(&st->lock);
        /* A chunk a thread filed before its current one was read above waits here: handed
         * first, so that each thread's events are handed in order. */
        dt_store_hand_deferred(st);
        for (size_t i = 0; i < n; i++)
            hand_events_of(st, current[i], reuses[i]);
        if (!more)
            return;
    }
}

static void visit_chunk(dt_chunk *c, dt_store_visit_fn fn, void *user)
{
    uint32_t n = atomic_load_explicit(&c->count, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++)
        fn(user, &c->events[i]);
}

void dt_store_visit(dt_store *st, dt_store_visit_fn fn, void *user)
{
    pthread_mutex_lock(&st->lock);
    for (dt_chunk *c = st->full; c; c = c->next) {
        visit_chunk(c, fn, user);
        dt_filemem_check(); /* a recorder's chunks are file memory: a chunk's pages at a time */
    }
    /* A thread may be filing its current chunk meanwhile (replace_chunk): a chunk between
     * the two is seen by the next visit, never twice. */
    for (dt_slot *s = st->slots; s; s = s->next) {
        dt_chunk *c = __atomic_load_n(&s->current, __ATOMIC_ACQUIRE);
        if (c)
            visit_chunk(c, fn, user);
    }
    pthread_mutex_unlock(&st->lock);
}

/* The chunks' counts, as dt_store_visit would see them, without reading an event (a
 * recorder's events are file memory: a walk over them would read each page back). */
uint64_t dt_store_count(dt_store *st)
{
    uint64_t n = 0;
    pthread_mutex_lock(&st->lock);
    size_t walked = 0;
    for (dt_chunk *c = st->full; c; c = c->next) {
        n += atomic_load_explicit(&c->count, memory_order_acquire);
        if (++walked % 32 == 0)
            dt_filemem_check(); /* each header read maps its neighbours too (the kernel's fault-around) */
    }
    for (dt_slot *s = st->slots; s; s = s->next) {
        dt_chunk *c = __atomic_load_n(&s->current, __ATOMIC_ACQUIRE);
        if (c)
            n += atomic_load_explicit(&c->count, memory_order_acquire);
    }
    pthread_mutex_unlock(&st->lock);
    return n;
}

uint64_t dt_store_dropped(dt_store *st)
{
    uint64_t n = 0;
    pthread_mutex_lock(&st->lock);
    for (dt_slot *s = st->slots; s; s = s->next)
        n += atomic_load(&s->dropped);
    pthread_mutex_unlock(&st->lock);
    return n;
}

void dt_store_file_all(dt_store *st)
{
    pthread_mutex_lock(&st->lock);
    dt_slot *slots = st->slots;
    pthread_mutex_unlock(&st->lock);
    for (dt_slot *s = slots; s; s = s->next) {
        dt_chunk *c = s->current;
        if (c && atomic_load(&c->count)) {
            __atomic_store_n(&s->current, NULL, __ATOMIC_RELEASE);
            file_chunk(st, c, 0);
        }
    }
}
