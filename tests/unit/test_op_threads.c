/* test_op_threads.c: the controlling thread stops, flushes, drains and restarts the default
 * session while other threads are inside devtrace_op_enter/op_exit (devtrace.h, "Thread
 * safety"). Run under ThreadSanitizer too (label threads): a data race fails the suite there.
 *
 * Exact checks: every op delivered is delivered once, carries an id a worker entered and
 * a name it used, ends after it starts, and the ops delivered equal the session's own count
 * of cpu_ops; after the final flush of a window nothing more is delivered; the workers'
 * calls only ever return 0, DEVTRACE_ESTATE (the session not running) or DEVTRACE_EEMPTY (an
 * exit whose enter was refused). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "devtrace.h"

enum { WORKERS = 4, ROUNDS = 3, FLUSHES = 20, MAX_ID = 1u << 20 };

static const char *const op_names[] = {"aten::linear", "aten::addmm", "aten::relu"};

typedef struct worker {
    pthread_t tid;
    unsigned index;
    atomic_int *quit;
    uint64_t entered, refused, other, last_serial;
} worker;

static void pause_us(long us)
{
    struct timespec ts = {0, us * 1000L};
    nanosleep(&ts, NULL);
}

/* Ids are the worker in the low 4 bits and a serial above: unique across workers. */
static void *work(void *arg)
{
    worker *w = arg;
    uint64_t serial = 1;
    for (; !atomic_load(w->quit) && serial < MAX_ID; serial++) {
        uint64_t outer = (serial << 5 | 0u << 4 | w->index), inner = (serial << 5 | 1u << 4 | w->index);
        int a = devtrace_op_enter(op_names[serial % 3], outer, -1, 0);
        int b = devtrace_op_enter(op_names[(serial + 1) % 3], inner, (int64_t)serial, w->index);
        int c = devtrace_op_exit(inner);
        int d = devtrace_op_exit(outer);
        if (serial % 4 == 0)
            pause_us(50); /* the store keeps every op: thousands a window, not millions */
        int rcs[] = {a, b, c, d};
        for (int i = 0; i < 4; i++) {
            if (rcs[i] == 0)
                w->entered++;
            else if (rcs[i] == DEVTRACE_ESTATE || rcs[i] == DEVTRACE_EEMPTY) /* not running; its enter refused */
                w->refused++;
            else
                w->other++;
        }
    }
    w->last_serial = serial;
    return NULL;
}

typedef struct seen {
    uint8_t *ids; /* one byte per id: delivered how many times */
    uint64_t ops, duplicates, bad_id, bad_name, backwards, other_kinds;
} seen;

static void on_event(const devtrace_event *ev, const char *name, void *user)
{
    seen *s = user;
    if (ev->kind != DEVTRACE_KIND_CPU_OP) {
        s->other_kinds++;
        return;
    }
    s->ops++;
    uint64_t id = ev->external_id;
    if ((id & 15u) >= WORKERS || (id >> 5) >= MAX_ID) {
        s->bad_id++;
        return;
    }
    if (s->ids[id]++)
        s->duplicates++;
    int known = 0;
    for (size_t i = 0; i < sizeof op_names / sizeof op_names[0]; i++)
        known |= name && strcmp(name, op_names[i]) == 0;
    s->bad_name += !known;
    s->backwards += ev->end_ns < ev->start_ns;
}

static void check_window(devtrace_session *s, seen *got, int final_by_drain)
{
    uint64_t before = got->ops;
    for (int i = 0; i < FLUSHES; i++) {
        size_t n = 0;
        assert_int_equal(devtrace_flush(s, on_event, got, &n, NULL), 0);
        pause_us(500);
    }
    assert_int_equal(devtrace_stop(s), 0);
    if (final_by_drain) {
        /* The rest through devtrace_drain while the workers keep calling in. */
        (void)devtrace_drain(s, on_event, got);
    } else {
        size_t n = 0;
        assert_int_equal(devtrace_flush(s, on_event, got, &n, NULL), 0);
        /* Nothing after the final flush: the window is closed. */
        assert_int_equal(devtrace_flush(s, on_event, got, &n, NULL), DEVTRACE_ESTATE);
    }
    devtrace_stats st = {.size = sizeof st};
    assert_int_equal(devtrace_stats_read(s, &st), 0);
    /* Every op the session counted was delivered once, and the workers got some in. */
    print_message("window: %llu ops delivered, %llu counted, %llu outside the window\n",
                  (unsigned long long)(got->ops - before), (unsigned long long)st.events[DEVTRACE_KIND_CPU_OP],
                  (unsigned long long)st.out_of_window[DEVTRACE_KIND_CPU_OP]);
    assert_int_equal(got->ops - before, st.events[DEVTRACE_KIND_CPU_OP]);
    assert_true(got->ops > before);
}

static void test_stop_flush_drain_and_restart_while_threads_are_inside_ops(void **state)
{
    (void)state;
    devtrace_config cfg;
    devtrace_config_init(&cfg);
    cfg.backend = "none";
    devtrace_session *s = devtrace_open(&cfg, NULL);
    assert_non_null(s);
    assert_int_equal(devtrace_set_default_session(s), 0);

    seen got = {.ids = calloc((size_t)MAX_ID << 5, 1)};
    assert_non_null(got.ids);
    atomic_int quit = 0;
    worker w[WORKERS];
    for (unsigned i = 0; i < WORKERS; i++) {
        w[i] = (worker){.index = i, .quit = &quit};
        assert_int_equal(pthread_create(&w[i].tid, NULL, work, &w[i]), 0);
    }
    for (int round = 0; round < ROUNDS; round++) {
        pause_us(2000); /* the workers run into a stopped session between windows */
        assert_int_equal(devtrace_start(s), 0);
        check_window(s, &got, round == ROUNDS - 1);
    }
    atomic_store(&quit, 1);
    uint64_t entered = 0, refused = 0, other = 0;
    for (unsigned i = 0; i < WORKERS; i++) {
        assert_int_equal(pthread_join(w[i].tid, NULL), 0);
        entered += w[i].entered, refused += w[i].refused, other += w[i].other;
        assert_true(w[i].last_serial < MAX_ID); /* each worker ran to the end, its ids unique */
    }
    assert_int_equal(other, 0);
    assert_true(entered > 0 && refused > 0);
    assert_int_equal(got.duplicates, 0);
    assert_int_equal(got.bad_id, 0);
    assert_int_equal(got.bad_name, 0);
    assert_int_equal(got.backwards, 0);
    assert_int_equal(got.other_kinds, 0);
    assert_int_equal(devtrace_set_default_session(NULL), 0);
    devtrace_close(s);
    free(got.ids);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stop_flush_drain_and_restart_while_threads_are_inside_ops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
