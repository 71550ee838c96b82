/* callback_guard.c: the threads' records and the waiting side of the guard between a
 * backend's vendor callbacks and close (see callback_guard.h). */
#include "callback_guard.h"

#include <sched.h>
#include <stdlib.h>

#include "core/clock.h"

/* One key for every guard: its value is the thread's chain of records. */
static pthread_once_t thread_key_once = PTHREAD_ONCE_INIT;
static pthread_key_t thread_key;
static int has_thread_key;

/* The thread exits: its records go back for adoption (a record with a callback still
 * counted, of a thread that left from inside one, is kept: close must wait for it). */
static void release_records(void *chain)
{
    for (dt_guard_thread *t = chain, *next; t; t = next) {
        next = t->next_of_thread;
        *t->self = NULL;
        t->next_of_thread = NULL;
        if (atomic_load_explicit(&t->inflight[0], memory_order_relaxed) == 0 &&
            atomic_load_explicit(&t->inflight[1], memory_order_relaxed) == 0)
            atomic_store_explicit(&t->owned, 0, memory_order_release);
    }
}

static void make_thread_key(void)
{
    has_thread_key = pthread_key_create(&thread_key, release_records) == 0;
}

/* A record of g that no thread owns, now the caller's; or NULL. */
static dt_guard_thread *adopt_record(dt_callback_guard *g)
{
    for (dt_guard_thread *t = atomic_load(&g->threads); t; t = t->next) {
        int unowned = 0;
        if (atomic_compare_exchange_strong(&t->owned, &unowned, 1))
            return t;
    }
    return NULL;
}

static dt_guard_thread *new_record(dt_callback_guard *g)
{
    dt_guard_thread *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    atomic_init(&t->owned, 1);
    t->next = atomic_load(&g->threads);
    while (!atomic_compare_exchange_weak(&g->threads, &t->next, t))
        ;
    return t;
}

dt_guard_thread *dt_guard_thread_attach(dt_callback_guard *g, dt_guard_thread **self)
{
    pthread_once(&thread_key_once, make_thread_key);
    if (!has_thread_key)
        return NULL; /* no way to release it at exit: the shared slots */
    dt_guard_thread *t = adopt_record(g);
    if (!t && !(t = new_record(g)))
        return NULL;
    t->self = self;
    t->next_of_thread = pthread_getspecific(thread_key);
    if (pthread_setspecific(thread_key, t) != 0) {
        atomic_store_explicit(&t->owned, 0, memory_order_release);
        return NULL;
    }
    *self = t;
    return t;
}

/* Callbacks counted in epoch e's slots, on every thread. */
static int epoch_busy(dt_callback_guard *g, unsigned e)
{
    if (atomic_load(&g->shared[e & 1]) != 0)
        return 1;
    for (dt_guard_thread *t = atomic_load(&g->threads); t; t = t->next) {
        if (atomic_load(&t->inflight[e & 1]) != 0)
            return 1;
    }
    return 0;
}

/* Waits until the callbacks counted in epoch e have left. */
static int wait_epoch(dt_callback_guard *g, unsigned e, uint64_t timeout_ms)
{
    uint64_t t0 = dt_monotonic_ns();
    while (epoch_busy(g, e)) {
        if (timeout_ms && dt_monotonic_ns() - t0 > timeout_ms * 1000000ull)
            return -1;
        sched_yield();
    }
    return 0;
}

/* Starts the next epoch and waits for the callbacks of the one before. After a wait that
 * gave up, callbacks of an older epoch may still be counted in the other parity slot,
 * with the new epoch's: a second epoch is started and that slot drained too (only the
 * callbacks that entered before it are in it then). */
static int next_epoch_and_wait(dt_callback_guard *g, pthread_mutex_t *lock, uint64_t timeout_ms)
{
    pthread_mutex_lock(lock);
    unsigned e = atomic_fetch_add(&g->epoch, 1);
    int stale = g->stale;
    pthread_mutex_unlock(lock);
    int rc = wait_epoch(g, e, timeout_ms);
    if (rc == 0 && stale) {
        pthread_mutex_lock(lock);
        e = atomic_fetch_add(&g->epoch, 1);
        pthread_mutex_unlock(lock);
        rc = wait_epoch(g, e, timeout_ms);
    }
    pthread_mutex_lock(lock);
    g->stale = rc != 0;
    pthread_mutex_unlock(lock);
    return rc;
}

int dt_guard_quiesce(dt_callback_guard *g, pthread_mutex_t *lock, uint64_t timeout_ms)
{
    return next_epoch_and_wait(g, lock, timeout_ms);
}

void dt_guard_detach(dt_callback_guard *g, pthread_mutex_t *lock, void *state)
{
    pthread_mutex_lock(lock);
    void *expected = state;
    atomic_compare_exchange_strong(&g->active, &expected, NULL);
    pthread_mutex_unlock(lock);
    next_epoch_and_wait(g, lock, 0);
}
