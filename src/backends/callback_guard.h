/* callback_guard.h: how a backend's vendor callbacks reach the session that is open,
 * and how close waits for the callbacks still in flight.
 *
 * A vendor's callbacks carry no pointer of ours and cannot be unregistered, so a
 * backend keeps one guard per process: `active` is the attached state. A callback
 * counts itself in the current epoch's slot before it reads `active`, and leaves when
 * done; detaching clears `active`, starts the next epoch and waits until the slot of
 * the one before is empty, so no callback still uses what was detached. The callbacks'
 * side is inline (two atomic adds, two loads); the waiting side is callback_guard.c. */
#ifndef DT_CALLBACK_GUARD_H
#define DT_CALLBACK_GUARD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

typedef struct dt_callback_guard {
    void *_Atomic active; /* the attached backend state, or NULL */
    _Atomic unsigned epoch;
    _Atomic int inflight[2];
} dt_callback_guard;

/* A callback begins: returns the attached state (NULL: none) and its epoch to leave with. */
static inline void *dt_guard_enter(dt_callback_guard *g, unsigned *epoch)
{
    unsigned e;
    for (;;) {
        e = atomic_load(&g->epoch);
        atomic_fetch_add(&g->inflight[e & 1], 1);
        if (atomic_load(&g->epoch) == e)
            break;
        atomic_fetch_sub(&g->inflight[e & 1], 1);
    }
    *epoch = e;
    return atomic_load(&g->active);
}

static inline void dt_guard_leave(dt_callback_guard *g, unsigned epoch)
{
    atomic_fetch_sub(&g->inflight[epoch & 1], 1);
}

/* Waits until every callback that entered before this call has left: 0; -1 when one is
 * still inside after timeout_ms (0: no limit). lock is the backend's, the one its
 * attach and detach take. */
int dt_guard_quiesce(dt_callback_guard *g, pthread_mutex_t *lock, uint64_t timeout_ms);

/* Detaches state (when it is the attached one), then waits, without limit, until no
 * callback can still be using it. */
void dt_guard_detach(dt_callback_guard *g, pthread_mutex_t *lock, void *state);

#endif
