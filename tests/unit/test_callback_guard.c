/* test_callback_guard.c: the guard between vendor callbacks and close
 * (src/backends/callback_guard.c).
 *
 * Covers: enter sees the attached state, and nothing once detached; quiesce waits for a
 * callback still inside, and gives up after its timeout while one stays; detach never
 * returns while a callback can still use the state (16 threads entering and leaving
 * while the main thread detaches: no callback sees the state after it was retired, which
 * ThreadSanitizer also checks through the plain flag); nested callbacks on one thread
 * across a quiesce; a thread's record goes back at its exit and is adopted by the next
 * thread; a thread using two guards has one record in each, both released at its exit. */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "backends/callback_guard.h"

static _Thread_local dt_guard_thread *t_guard_a, *t_guard_b;

typedef struct fake_state {
    int retired; /* plain: written by the detaching thread after detach returns */
    _Atomic uint64_t uses;
} fake_state;

static size_t count_records(dt_callback_guard *g, size_t *owned)
{
    size_t n = 0;
    *owned = 0;
    for (dt_guard_thread *t = atomic_load(&g->threads); t; t = t->next) {
        n++;
        *owned += atomic_load(&t->owned) != 0;
    }
    return n;
}

static void test_enter_sees_the_attached_state_until_detached(void **state)
{
    (void)state;
    static dt_callback_guard g;
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    fake_state fs = {0};
    dt_guard_pass pass;
    atomic_store(&g.active, &fs);
    assert_ptr_equal(dt_guard_enter(&g, &t_guard_a, &pass), &fs);
    assert_non_null(t_guard_a);
    assert_ptr_equal(pass.thread, t_guard_a);
    assert_int_equal(atomic_load(&t_guard_a->inflight[pass.epoch & 1]), 1);
    dt_guard_leave(&g, &pass);
    assert_int_equal(atomic_load(&t_guard_a->inflight[pass.epoch & 1]), 0);
    dt_guard_detach(&g, &lock, &fs);
    assert_null(dt_guard_enter(&g, &t_guard_a, &pass));
    dt_guard_leave(&g, &pass);
    assert_int_equal(dt_guard_quiesce(&g, &lock, 0), 0);
    t_guard_a = NULL; /* the next test's guard is another one */
}

/* A callback that enters, says so, and stays until told to leave. */
typedef struct holder {
    dt_callback_guard *g;
    _Atomic int inside, leave, left;
} holder;

static void *hold_a_callback(void *p)
{
    holder *h = p;
    dt_guard_pass pass;
    dt_guard_enter(h->g, &t_guard_a, &pass);
    atomic_store(&h->inside, 1);
    while (!atomic_load(&h->leave))
        sched_yield();
    atomic_store(&h->left, 1);
    dt_guard_leave(h->g, &pass);
    return NULL;
}

/* Starts a thread holding a callback in h->g and returns once it is inside. */
static void start_holder(holder *h, pthread_t *tid)
{
    assert_int_equal(pthread_create(tid, NULL, hold_a_callback, h), 0);
    while (!atomic_load(&h->inside))
        sched_yield();
}

static void *release_later(void *p)
{
    holder *h = p;
    struct timespec nap = {0, 20000000};
    nanosleep(&nap, NULL);
    atomic_store(&h->leave, 1);
    return NULL;
}

static void test_quiesce_waits_for_a_callback_inside(void **state)
{
    (void)state;
    static dt_callback_guard g;
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    holder h = {.g = &g};
    pthread_t tid, releaser;
    start_holder(&h, &tid);
    assert_int_equal(pthread_create(&releaser, NULL, release_later, &h), 0);
    assert_int_equal(dt_guard_quiesce(&g, &lock, 0), 0);
    assert_int_equal(atomic_load(&h.left), 1);
    pthread_join(tid, NULL);
    pthread_join(releaser, NULL);
}

static void test_quiesce_gives_up_after_its_timeout(void **state)
{
    (void)state;
    static dt_callback_guard g;
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    holder h = {.g = &g};
    pthread_t tid;
    start_holder(&h, &tid);
    assert_int_equal(dt_guard_quiesce(&g, &lock, 20), -1); /* still inside after 20 ms */
    assert_int_equal(atomic_load(&h.left), 0);
    atomic_store(&h.leave, 1);
    pthread_join(tid, NULL);
}

/* A callback still inside after a quiesce gave up is counted in the parity slot the
 * next epoch's callbacks share: the next quiesce, and a detach, still wait for it. */
static void test_a_callback_left_inside_by_a_timed_out_quiesce_is_waited_for_next_time(void **state)
{
    (void)state;
    static dt_callback_guard g;
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    holder h = {.g = &g};
    pthread_t tid, releaser;
    start_holder(&h, &tid);
    assert_int_equal(dt_guard_quiesce(&g, &lock, 20), -1);
    assert_int_equal(dt_guard_quiesce(&g, &lock, 20), -1); /* it is still inside */
    assert_int_equal(dt_guard_quiesce(&g, &lock, 20), -1);
    assert_int_equal(pthread_create(&releaser, NULL, release_later, &h), 0);
    assert_int_equal(dt_guard_quiesce(&g, &lock, 0), 0);
    assert_int_equal(atomic_load(&h.left), 1);
    pthread_join(tid, NULL);
    pthread_join(releaser, NULL);
    assert_int_equal(dt_guard_quiesce(&g, &lock, 20), 0); /* nothing left behind */
}

static void test_detach_after_a_timed_out_quiesce_waits_for_the_callback_left_inside(void **state)
{
    (void)state;
    static dt_callback_guard g;
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static int attached;
    atomic_store(&g.active, &attached);
    holder h = {.g = &g};
    pthread_t tid, releaser;
    start_holder(&h, &tid);
    assert_int_equal(dt_guard_quiesce(&g, &lock, 20), -1);
    assert_int_equal(pthread_create(&releaser, NULL, release_later, &h), 0);
    dt_guard_detach(&g, &lock, &attached);
    assert_int_equal(atomic_load(&h.left), 1);
    assert_null(atomic_load(&g.active));
    pthread_join(tid, NULL);
    pthread_join(releaser, NULL);
}

static void test_nested_callbacks_across_a_quiesce_are_waited_for(void **state)
{
    (void)state;
    static dt_callback_guard g;
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    dt_guard_pass outer, inner;
    dt_guard_enter(&g, &t_guard_b, &outer);
    assert_int_equal(dt_guard_quiesce(&g, &lock, 1), -1); /* the outer one is inside */
    dt_guard_enter(&g, &t_guard_b, &inner);               /* the next epoch */
    assert_int_equal(inner.epoch, outer.epoch + 1);
    assert_int_equal(dt_guard_quiesce(&g, &lock, 1), -1);
    dt_guard_leave(&g, &inner);
    assert_int_equal(dt_guard_quiesce(&g, &lock, 1), -1); /* the outer one still */
    dt_guard_leave(&g, &outer);
    assert_int_equal(dt_guard_quiesce(&g, &lock, 0), 0);
    assert_int_equal(atomic_load(&t_guard_b->inflight[0]), 0);
    assert_int_equal(atomic_load(&t_guard_b->inflight[1]), 0);
    t_guard_b = NULL;
}

#define CALLERS 16

static struct {
    dt_callback_guard g;
    pthread_mutex_t lock;
    _Atomic int stop;
    _Atomic uint64_t after_retire; /* callbacks that saw a retired state: must stay 0 */
} D = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void *call_until_stopped(void *p)
{
    (void)p;
    while (!atomic_load(&D.stop)) {
        dt_guard_pass pass;
        fake_state *fs = dt_guard_enter(&D.g, &t_guard_a, &pass);
        if (fs) {
            if (fs->retired)
                atomic_fetch_add(&D.after_retire, 1);
            atomic_fetch_add(&fs->uses, 1);
        }
        dt_guard_leave(&D.g, &pass);
    }
    return NULL;
}

static void test_detach_never_returns_while_a_callback_uses_the_state(void **state)
{
    (void)state;
    pthread_t tids[CALLERS];
    fake_state states[8];
    memset(states, 0, sizeof states);
    for (int t = 0; t < CALLERS; t++)
        assert_int_equal(pthread_create(&tids[t], NULL, call_until_stopped, NULL), 0);
    uint64_t used = 0;
    for (int i = 0; i < 8; i++) {
        atomic_store(&D.g.active, &states[i]);
        struct timespec nap = {0, 2000000};
        nanosleep(&nap, NULL);
        dt_guard_detach(&D.g, &D.lock, &states[i]);
        states[i].retired = 1;
        used += atomic_load(&states[i].uses);
    }
    atomic_store(&D.stop, 1);
    for (int t = 0; t < CALLERS; t++)
        pthread_join(tids[t], NULL);
    assert_int_equal(atomic_load(&D.after_retire), 0);
    assert_true(used > 0);
    size_t owned;
    assert_int_equal(count_records(&D.g, &owned), CALLERS); /* one per thread, made while all ran */
    assert_int_equal(owned, 0);                             /* every one released at its thread's exit */
}

static void *enter_and_leave_both(void *p)
{
    dt_callback_guard *g = p;
    dt_guard_pass a, b;
    dt_guard_enter(&g[0], &t_guard_a, &a);
    dt_guard_enter(&g[1], &t_guard_b, &b);
    dt_guard_leave(&g[1], &b);
    dt_guard_leave(&g[0], &a);
    return (void *)((uintptr_t)(t_guard_a != NULL) + (uintptr_t)(t_guard_b != NULL));
}

static void test_records_are_released_at_exit_and_adopted(void **state)
{
    (void)state;
    static dt_callback_guard g[2];
    size_t owned;
    for (int i = 0; i < 3; i++) {
        pthread_t tid;
        void *had = NULL;
        assert_int_equal(pthread_create(&tid, NULL, enter_and_leave_both, g), 0);
        pthread_join(tid, &had);
        assert_int_equal((uintptr_t)had, 2);               /* a record in each guard */
        assert_int_equal(count_records(&g[0], &owned), 1); /* the first thread's, adopted since */
        assert_int_equal(owned, 0);
        assert_int_equal(count_records(&g[1], &owned), 1);
        assert_int_equal(owned, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_enter_sees_the_attached_state_until_detached),
        cmocka_unit_test(test_quiesce_waits_for_a_callback_inside),
        cmocka_unit_test(test_quiesce_gives_up_after_its_timeout),
        cmocka_unit_test(test_a_callback_left_inside_by_a_timed_out_quiesce_is_waited_for_next_time),
        cmocka_unit_test(test_detach_after_a_timed_out_quiesce_waits_for_the_callback_left_inside),
        cmocka_unit_test(test_nested_callbacks_across_a_quiesce_are_waited_for),
        cmocka_unit_test(test_detach_never_returns_while_a_callback_uses_the_state),
        cmocka_unit_test(test_records_are_released_at_exit_and_adopted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
