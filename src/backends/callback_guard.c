/* callback_guard.c: the waiting side of the guard between a backend's vendor callbacks
 * and close (see callback_guard.h). */
#include "callback_guard.h"

#include <sched.h>

#include "core/clock.h"

/* Waits until the callbacks counted in epoch e have left. */
static int wait_epoch(dt_callback_guard *g, unsigned e, uint64_t timeout_ms)
{
    uint64_t t0 = dt_monotonic_ns();
    while (atomic_load(&g->inflight[e & 1]) != 0) {
        if (timeout_ms && dt_monotonic_ns() - t0 > timeout_ms * 1000000ull)
            return -1;
        sched_yield();
    }
    return 0;
}

int dt_guard_quiesce(dt_callback_guard *g, pthread_mutex_t *lock, uint64_t timeout_ms)
{
    pthread_mutex_lock(lock);
    unsigned e = atomic_fetch_add(&g->epoch, 1);
    pthread_mutex_unlock(lock);
    return wait_epoch(g, e, timeout_ms);
}

void dt_guard_detach(dt_callback_guard *g, pthread_mutex_t *lock, void *state)
{
    pthread_mutex_lock(lock);
    void *expected = state;
    atomic_compare_exchange_strong(&g->active, &expected, NULL);
    unsigned e = atomic_fetch_add(&g->epoch, 1);
    pthread_mutex_unlock(lock);
    wait_epoch(g, e, 0);
}
