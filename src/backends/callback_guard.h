/* callback_guard.h: how a backend's vendor callbacks reach the session that is open,
 * and how close waits for the callbacks still in flight.
 *
 * A vendor's callbacks carry no pointer of ours and cannot be unregistered, so a
 * backend keeps one guard per process: `active` is the attached state. A callback
 * counts itself in the current epoch's slot before it reads `active`, and leaves when
 * done; detaching clears `active`, starts the next epoch and waits until the slot of
 * the one before is empty on every thread, so no callback still uses what was detached.
 *
 * The slots are per thread (a record each thread takes on its first callback, kept in a
 * thread-local pointer the backend owns): threads calling at once write no shared cache
 * line, and only the owning thread writes its record, so leaving is a plain store. A
 * thread that can get no record counts in the guard's shared slots. Records outlive
 * their threads (released at exit, adopted by a later thread) and are never freed.
 * The callbacks' side is inline (one atomic add, two loads, one store); the waiting side
 * is callback_guard.c. */
#ifndef DT_CALLBACK_GUARD_H
#define DT_CALLBACK_GUARD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

typedef struct dt_guard_thread {
    _Atomic unsigned inflight[2];           /* this thread's callbacks inside, per epoch parity */
    struct dt_guard_thread *next;           /* the guard's list: pushed once, never removed */
    struct dt_guard_thread *next_of_thread; /* the owner's records (one per guard), for its exit */
    struct dt_guard_thread **self;          /* the owner's thread-local pointer, cleared at its exit */
    _Atomic int owned;
} dt_guard_thread;

typedef struct dt_callback_guard {
    void *_Atomic active; /* the attached backend state, or NULL */
    _Atomic unsigned epoch;
    _Atomic(dt_guard_thread *) threads;
    _Atomic unsigned shared[2]; /* callbacks of threads that got no record */
    /* A wait gave up with callbacks still inside (a quiesce past its timeout): they are
     * counted in the parity slot that the next epoch's callbacks share, so the next wait
     * also drains that slot, one epoch later (under the backend's lock). */
    int stale;
} dt_callback_guard;

/* What a callback leaves with. */
typedef struct dt_guard_pass {
    dt_guard_thread *thread; /* NULL: counted in the guard's shared slots */
    unsigned epoch;
} dt_guard_pass;

/* The calling thread's record of g (made or adopted, and stored in *self), or NULL. */
dt_guard_thread *dt_guard_thread_attach(dt_callback_guard *g, dt_guard_thread **self);

/* A callback begins: returns the attached state (NULL: none). self is the backend's
 * thread-local pointer for this guard (NULL before the thread's first callback). */
static inline void *dt_guard_enter(dt_callback_guard *g, dt_guard_thread **self, dt_guard_pass *pass)
{
    dt_guard_thread *t = *self;
    if (__builtin_expect(t == NULL, 0))
        t = dt_guard_thread_attach(g, self);
    _Atomic unsigned *slots = t ? t->inflight : g->shared;
    unsigned e;
    for (;;) {
        e = atomic_load(&g->epoch);
        /* Sequentially consistent with the waiter's epoch change: either it sees this
         * count, or this thread sees the new epoch (and the cleared `active`). */
        atomic_fetch_add(&slots[e & 1], 1);
        if (atomic_load(&g->epoch) == e)
            break;
        atomic_fetch_sub(&slots[e & 1], 1);
    }
    pass->thread = t;
    pass->epoch = e;
    return atomic_load(&g->active);
}

static inline void dt_guard_leave(dt_callback_guard *g, const dt_guard_pass *pass)
{
    dt_guard_thread *t = pass->thread;
    if (__builtin_expect(t != NULL, 1)) {
        /* Only the owner writes its record: a release store (no read-modify-write)
         * publishes what the callback wrote to the waiter that sees it. */
        _Atomic unsigned *slot = &t->inflight[pass->epoch & 1];
        atomic_store_explicit(slot, atomic_load_explicit(slot, memory_order_relaxed) - 1, memory_order_release);
    } else {
        atomic_fetch_sub_explicit(&g->shared[pass->epoch & 1], 1, memory_order_release);
    }
}

/* Waits until every callback that entered before this call has left: 0; -1 when one is
 * still inside after timeout_ms (0: no limit). lock is the backend's, the one its
 * attach and detach take. */
int dt_guard_quiesce(dt_callback_guard *g, pthread_mutex_t *lock, uint64_t timeout_ms);

/* Detaches state (when it is the attached one), then waits, without limit, until no
 * callback can still be using it. */
void dt_guard_detach(dt_callback_guard *g, pthread_mutex_t *lock, void *state);

#endif
