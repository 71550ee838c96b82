/* test_external.c: external correlation (the framework's CPU op ids).
 *
 * Covers, at drain (src/core/drain.c) on offline sessions: EXTCORR events attach their
 * external id to the runtime and device events with the same correlation id and are
 * not themselves delivered; a runtime event's own external id reaches its device work;
 * an event's own external id is kept; id 0 is valid and distinct from absent ("External
 * id": 0 versus no key at all). And through the public API on a session from
 * devtrace_open with backend "none" (src/core/session.c): nested push/pop (innermost
 * first, pop on empty -> DEVTRACE_EEMPTY, depth overflow), per-thread stacks,
 * devtrace_range_push/pop emitting a cpu_op event only while the session runs. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "unit_session.h"

/* The PyTorch observer's view of devtrace_op_enter/exit (built at first use, without
 * devtrace's headers) must match devtrace.h. */
#include "../../python/devtrace/observer_api.h"
_Static_assert(__builtin_types_compatible_p(__typeof__(&devtrace_op_enter), devtrace_op_enter_fn) &&
                   __builtin_types_compatible_p(__typeof__(&devtrace_op_exit), devtrace_op_exit_fn),
               "python/devtrace/observer_api.h must match devtrace.h");
/* Two headers' spellings of one value: equal is what is checked. */
/* NOLINTBEGIN(misc-redundant-expression) */
_Static_assert(DEVTRACE_OBSERVER_SEQUENCE_FROM_CHILD == DEVTRACE_SEQUENCE_FROM_CHILD,
               "python/devtrace/observer_api.h must match devtrace.h");
/* NOLINTEND(misc-redundant-expression) */

#define DRAINED_MAX 64
typedef struct drained {
    size_t n;
    devtrace_event ev[DRAINED_MAX];
    char name[DRAINED_MAX][64];
} drained;

static void collect(const devtrace_event *ev, const char *name, void *user)
{
    drained *d = user;
    if (d->n < DRAINED_MAX) {
        d->ev[d->n] = *ev;
        snprintf(d->name[d->n], sizeof d->name[d->n], "%s", name);
    }
    d->n++;
}

static const devtrace_event *find_kind(const drained *d, int kind, uint64_t correlation)
{
    for (size_t i = 0; i < d->n && i < DRAINED_MAX; i++)
        if (d->ev[i].kind == kind && d->ev[i].correlation == correlation)
            return &d->ev[i];
    return NULL;
}

static void emit(dt_session *s, devtrace_event ev)
{
    assert_int_equal(dt_emit(s, &ev), 0);
}

static uj_value *trace_of(dt_session *s)
{
    char error[160] = "";
    uj_value *root = ut_chrome_trace(s, NULL, error);
    if (!root)
        fail_msg("the trace is not valid JSON: %s", error);
    return root;
}

/* The args of the trace's first "X" event of this category and correlation. */
static const uj_value *args_of(const uj_value *root, const char *cat, const char *correlation)
{
    const uj_value *events = uj_get(root, "traceEvents");
    for (size_t i = 0; events && i < events->n; i++) {
        const uj_value *e = events->items[i];
        const char *ph = uj_get_str(e, "ph"), *c = uj_get_str(e, "cat");
        const uj_value *args = uj_get(e, "args");
        const char *corr = uj_get_raw(args, "correlation");
        if (ph && c && corr && strcmp(ph, "X") == 0 && strcmp(c, cat) == 0 && strcmp(corr, correlation) == 0)
            return args;
    }
    return NULL;
}

static void test_extcorr_attaches_the_external_id_to_runtime_and_device_events(void **state)
{
    (void)state;
    dt_session *s = ut_offline_session();
    emit(s, ut_runtime(1000, 2000, 7));
    emit(s, ut_kernel(3000, 4000, 7));
    devtrace_event copy = ut_kernel(5000, 6000, 8);
    copy.kind = DEVTRACE_KIND_MEMCPY;
    emit(s, copy);
    emit(s, ut_extcorr(7, 42)); /* may arrive after the events it links */
    emit(s, ut_extcorr(8, 43));
    drained d = {0};
    assert_int_equal(devtrace_drain(s, collect, &d), 3); /* EXTCORR is consumed */
    const devtrace_event *rt = find_kind(&d, DEVTRACE_KIND_RUNTIME, 7);
    const devtrace_event *k = find_kind(&d, DEVTRACE_KIND_KERNEL, 7);
    const devtrace_event *m = find_kind(&d, DEVTRACE_KIND_MEMCPY, 8);
    assert_non_null(rt);
    assert_non_null(k);
    assert_non_null(m);
    assert_true(rt->flags & DEVTRACE_EVENT_HAS_EXTERNAL);
    assert_int_equal(rt->external_id, 42);
    assert_true(k->flags & DEVTRACE_EVENT_HAS_EXTERNAL);
    assert_int_equal(k->external_id, 42);
    assert_true(m->flags & DEVTRACE_EVENT_HAS_EXTERNAL);
    assert_int_equal(m->external_id, 43);
    assert_null(find_kind(&d, DEVTRACE_KIND_EXTCORR, 7));
    assert_int_equal(devtrace_stats_get(s)->events[DEVTRACE_KIND_EXTCORR], 0);

    uj_value *root = trace_of(s);
    assert_string_equal(uj_get_raw(args_of(root, "cuda_runtime", "7"), "External id"), "42");
    assert_string_equal(uj_get_raw(args_of(root, "kernel", "7"), "External id"), "42");
    assert_string_equal(uj_get_raw(args_of(root, "gpu_memcpy", "8"), "External id"), "43");
    uj_free(root);
    devtrace_close(s);
}

static void test_external_id_zero_is_written_and_absent_is_not(void **state)
{
    (void)state;
    dt_session *s = ut_offline_session();
    emit(s, ut_runtime(1000, 2000, 1));
    emit(s, ut_kernel(3000, 4000, 1));
    emit(s, ut_extcorr(1, 0)); /* id 0: valid */
    emit(s, ut_runtime(5000, 6000, 2));
    emit(s, ut_kernel(7000, 8000, 2)); /* no link at all */
    drained d = {0};
    assert_int_equal(devtrace_drain(s, collect, &d), 4);
    const devtrace_event *k0 = find_kind(&d, DEVTRACE_KIND_KERNEL, 1);
    const devtrace_event *kn = find_kind(&d, DEVTRACE_KIND_KERNEL, 2);
    assert_true(k0->flags & DEVTRACE_EVENT_HAS_EXTERNAL);
    assert_int_equal(k0->external_id, 0);
    assert_false(kn->flags & DEVTRACE_EVENT_HAS_EXTERNAL);

    uj_value *root = trace_of(s);
    char keys[512];
    assert_string_equal(uj_get_raw(args_of(root, "kernel", "1"), "External id"), "0");
    assert_string_equal(uj_get_raw(args_of(root, "cuda_runtime", "1"), "External id"), "0");
    assert_null(uj_get(args_of(root, "kernel", "2"), "External id"));
    assert_string_equal(uj_keys(args_of(root, "cuda_runtime", "2"), keys, sizeof keys), "correlation");
    uj_free(root);
    devtrace_close(s);
}

static void test_runtime_events_external_id_reaches_its_device_work(void **state)
{
    (void)state;
    dt_session *s = ut_offline_session();
    devtrace_event rt = ut_runtime(1000, 2000, 9);
    rt.flags |= DEVTRACE_EVENT_HAS_EXTERNAL;
    rt.external_id = 5;
    emit(s, rt);
    emit(s, ut_kernel(3000, 4000, 9));
    drained d = {0};
    assert_int_equal(devtrace_drain(s, collect, &d), 2);
    const devtrace_event *k = find_kind(&d, DEVTRACE_KIND_KERNEL, 9);
    assert_true(k->flags & DEVTRACE_EVENT_HAS_EXTERNAL);
    assert_int_equal(k->external_id, 5);
    devtrace_close(s);
}

static void test_an_events_own_external_id_is_kept(void **state)
{
    (void)state;
    dt_session *s = ut_offline_session();
    devtrace_event k = ut_kernel(3000, 4000, 10);
    k.flags |= DEVTRACE_EVENT_HAS_EXTERNAL;
    k.external_id = 77;
    emit(s, k);
    emit(s, ut_extcorr(10, 88));
    drained d = {0};
    assert_int_equal(devtrace_drain(s, collect, &d), 1);
    assert_int_equal(d.ev[0].external_id, 77);
    devtrace_close(s);
}

static void test_cpu_op_keeps_its_own_external_id(void **state)
{
    (void)state;
    dt_session *s = ut_offline_session();
    devtrace_event op = ut_runtime(1000, 9000, 0);
    op.kind = DEVTRACE_KIND_CPU_OP;
    op.flags |= DEVTRACE_EVENT_HAS_EXTERNAL;
    op.external_id = 3;
    op.name_id = dt_session_intern(s, "aten::matmul");
    emit(s, op);
    uj_value *root = trace_of(s);
    const uj_value *e = ut_find_event(root, "X", "cpu_op", "aten::matmul");
    assert_non_null(e);
    assert_string_equal(uj_get_raw(uj_get(e, "args"), "External id"), "3");
    uj_free(root);
    devtrace_close(s);
}

/* The public API on a session that records nothing. */
static devtrace_session *none_session(void)
{
    devtrace_config cfg;
    devtrace_config_init(&cfg);
    cfg.backend = "none";
    devtrace_error err = {0, ""};
    devtrace_session *s = devtrace_open(&cfg, &err);
    assert_non_null(s);
    assert_int_equal(err.code, 0);
    return s;
}

static void test_nested_push_pop_returns_the_innermost_first(void **state)
{
    (void)state;
    devtrace_session *s = none_session();
    uint64_t id = 999;
    assert_int_equal(dt_current_external(s, &id), 0);
    assert_int_equal(devtrace_push_external(s, 1), 0);
    assert_int_equal(devtrace_push_external(s, 2), 0);
    assert_int_equal(devtrace_push_external(s, 0), 0); /* 0 is a valid id */
    assert_int_equal(dt_current_external(s, &id), 1);
    assert_int_equal(id, 0);
    assert_int_equal(devtrace_pop_external(s, &id), 0);
    assert_int_equal(id, 0);
    assert_int_equal(dt_current_external(s, &id), 1);
    assert_int_equal(id, 2);
    assert_int_equal(devtrace_pop_external(s, &id), 0);
    assert_int_equal(id, 2);
    assert_int_equal(devtrace_pop_external(s, &id), 0);
    assert_int_equal(id, 1);
    id = 999;
    assert_int_equal(dt_current_external(s, &id), 0);
    assert_int_equal(id, 999); /* untouched when none */
    devtrace_close(s);
}

static void test_pop_on_empty_stack_returns_eempty(void **state)
{
    (void)state;
    devtrace_session *s = none_session();
    uint64_t id = 12345;
    assert_int_equal(devtrace_pop_external(s, &id), DEVTRACE_EEMPTY);
    assert_int_equal(id, 12345);
    assert_int_equal(devtrace_pop_external(s, NULL), DEVTRACE_EEMPTY);
    assert_int_equal(devtrace_push_external(s, 4), 0);
    assert_int_equal(devtrace_pop_external(s, NULL), 0); /* the id is optional */
    assert_int_equal(devtrace_pop_external(s, &id), DEVTRACE_EEMPTY);
    devtrace_close(s);
}

static void test_push_and_pop_on_null_session_are_invalid(void **state)
{
    (void)state;
    uint64_t id;
    assert_int_equal(devtrace_push_external(NULL, 1), DEVTRACE_EINVAL);
    assert_int_equal(devtrace_pop_external(NULL, &id), DEVTRACE_EINVAL);
    assert_int_equal(devtrace_range_push(NULL, "op", 1), DEVTRACE_EINVAL);
    assert_int_equal(devtrace_range_pop(NULL), DEVTRACE_EINVAL);
    devtrace_session *s = none_session();
    assert_int_equal(devtrace_range_push(s, NULL, 1), DEVTRACE_EINVAL);
    devtrace_close(s);
}

static void test_a_new_session_starts_with_an_empty_stack(void **state)
{
    (void)state;
    devtrace_session *a = none_session();
    assert_int_equal(devtrace_push_external(a, 1), 0);
    devtrace_close(a); /* closed with an id still pushed */
    devtrace_session *b = none_session();
    uint64_t id;
    assert_int_equal(dt_current_external(b, &id), 0);
    assert_int_equal(devtrace_pop_external(b, &id), DEVTRACE_EEMPTY);
    devtrace_close(b);
}

static void test_pushes_beyond_the_depth_are_refused_and_popped_without_effect(void **state)
{
    (void)state;
    devtrace_session *s = none_session();
    for (uint64_t i = 0; i < 128; i++)
        assert_int_equal(devtrace_push_external(s, i), 0);
    assert_int_equal(devtrace_push_external(s, 1000), DEVTRACE_ENOMEM);
    uint64_t id = 0;
    assert_int_equal(dt_current_external(s, &id), 1);
    assert_int_equal(id, 127);
    assert_int_equal(devtrace_pop_external(s, &id), DEVTRACE_ENOMEM); /* the refused one */
    assert_int_equal(devtrace_pop_external(s, &id), 0);
    assert_int_equal(id, 127);
    for (uint64_t i = 127; i-- > 0;) {
        assert_int_equal(devtrace_pop_external(s, &id), 0);
        assert_int_equal(id, i);
    }
    assert_int_equal(devtrace_pop_external(s, &id), DEVTRACE_EEMPTY);
    devtrace_close(s);
}

/* Two threads, each with its own stack, taking turns on a barrier. */
typedef struct stack_thread {
    devtrace_session *s;
    pthread_barrier_t *turn;
    uint64_t base;
    int errors;
} stack_thread;

static void check(stack_thread *t, int ok)
{
    t->errors += !ok;
}

static void *stack_worker(void *arg)
{
    stack_thread *t = arg;
    uint64_t id = 0;
    for (int round = 0; round < 200; round++) {
        check(t, dt_current_external(t->s, &id) == 0); /* the other's pushes are not ours */
        check(t, devtrace_push_external(t->s, t->base + (uint64_t)round) == 0);
        check(t, devtrace_push_external(t->s, t->base + 1000000 + (uint64_t)round) == 0);
        pthread_barrier_wait(t->turn); /* both threads have pushed two */
        check(t, dt_current_external(t->s, &id) == 1 && id == t->base + 1000000 + (uint64_t)round);
        check(t, devtrace_pop_external(t->s, &id) == 0 && id == t->base + 1000000 + (uint64_t)round);
        pthread_barrier_wait(t->turn); /* both have popped one */
        check(t, devtrace_pop_external(t->s, &id) == 0 && id == t->base + (uint64_t)round);
        check(t, devtrace_pop_external(t->s, &id) == DEVTRACE_EEMPTY);
        pthread_barrier_wait(t->turn);
    }
    return NULL;
}

static void test_each_thread_has_its_own_stack(void **state)
{
    (void)state;
    devtrace_session *s = none_session();
    assert_int_equal(devtrace_push_external(s, 5), 0); /* the main thread's, untouched */
    pthread_barrier_t turn;
    assert_int_equal(pthread_barrier_init(&turn, NULL, 2), 0);
    stack_thread t[2] = {{s, &turn, 100, 0}, {s, &turn, 200, 0}};
    pthread_t tid[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&tid[i], NULL, stack_worker, &t[i]), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_join(tid[i], NULL), 0);
    pthread_barrier_destroy(&turn);
    assert_int_equal(t[0].errors, 0);
    assert_int_equal(t[1].errors, 0);
    uint64_t id = 0;
    assert_int_equal(devtrace_pop_external(s, &id), 0);
    assert_int_equal(id, 5);
    devtrace_close(s);
}

static void test_range_push_pop_emits_a_cpu_op_only_while_running(void **state)
{
    (void)state;
    devtrace_session *s = none_session();
    /* Before start: the id is pushed, no event. */
    assert_int_equal(devtrace_range_push(s, "before", 1), 0);
    uint64_t id = 0;
    assert_int_equal(dt_current_external(s, &id), 1);
    assert_int_equal(id, 1);
    assert_int_equal(devtrace_range_pop(s), 0);
    assert_int_equal(devtrace_start(s), 0);
    assert_int_equal(devtrace_range_push(s, "aten::add", 2), 0);
    assert_int_equal(devtrace_range_push(s, "aten::add_inner", 3), 0);
    assert_int_equal(dt_current_external(s, &id), 1);
    assert_int_equal(id, 3);
    assert_int_equal(devtrace_range_pop(s), 0);
    assert_int_equal(devtrace_range_pop(s), 0);
    assert_int_equal(devtrace_range_push(s, "spans stop", 4), 0);
    assert_int_equal(devtrace_stop(s), 0);
    assert_int_equal(devtrace_range_pop(s), 0); /* popped after stop: no event */
    assert_int_equal(devtrace_range_push(s, "after", 5), 0);
    assert_int_equal(devtrace_range_pop(s), 0);
    assert_int_equal(devtrace_range_pop(s), DEVTRACE_EEMPTY);

    drained d = {0};
    assert_int_equal(devtrace_drain(s, collect, &d), 2);
    /* Start order; the outer op first. */
    assert_int_equal(d.ev[0].kind, DEVTRACE_KIND_CPU_OP);
    assert_string_equal(d.name[0], "aten::add");
    assert_true(d.ev[0].flags & DEVTRACE_EVENT_HAS_EXTERNAL);
    assert_int_equal(d.ev[0].external_id, 2);
    assert_string_equal(d.name[1], "aten::add_inner");
    assert_int_equal(d.ev[1].external_id, 3);
    assert_true(d.ev[0].start_ns <= d.ev[1].start_ns);
    assert_true(d.ev[1].end_ns <= d.ev[0].end_ns); /* nested */
    assert_int_equal(d.ev[0].device, dt_process_id());
    assert_int_equal(d.ev[0].stream, dt_thread_id());
    assert_int_equal(devtrace_stats_get(s)->events[DEVTRACE_KIND_CPU_OP], 2);
    devtrace_close(s);
}

/* The operator observer's ops (devtrace_op_enter/exit) on the default session: names by
 * pointer (a reused address with new text gets the new name), the sequence number and
 * forward thread id kept, an exit with another op's id ends nothing. */
static void test_ops_on_the_default_session(void **state)
{
    (void)state;
    devtrace_session *s = none_session();
    assert_int_equal(devtrace_op_enter("aten::mm", 1, -1, 0), DEVTRACE_ESTATE); /* no default session */
    assert_int_equal(devtrace_set_default_session(s), 0);
    assert_int_equal(devtrace_op_enter("aten::mm", 1, -1, 0), DEVTRACE_ESTATE); /* not started */
    assert_int_equal(devtrace_start(s), 0);
    char name[16] = "outer_scope";
    assert_int_equal(devtrace_op_enter(name, 10, 5, 0), 0);
    assert_int_equal(devtrace_op_enter("MulBackward0", 11, 5, 3), 0);
    uint64_t id = 0;
    assert_int_equal(dt_current_external(s, &id), 1);
    assert_int_equal(id, 11);
    assert_int_equal(devtrace_op_exit(10), DEVTRACE_ESTATE); /* not the innermost: nothing ends */
    assert_int_equal(devtrace_op_exit(11), 0);
    assert_int_equal(devtrace_op_exit(10), 0);
    snprintf(name, sizeof name, "other_scope"); /* the same address, another name */
    assert_int_equal(devtrace_op_enter(name, 12, -1, 0), 0);
    assert_int_equal(devtrace_op_exit(12), 0);
    assert_int_equal(devtrace_stop(s), 0);
    assert_int_equal(devtrace_set_default_session(NULL), 0);

    drained d = {0};
    assert_int_equal(devtrace_drain(s, collect, &d), 3);
    assert_string_equal(d.name[0], "outer_scope");
    assert_int_equal(d.ev[0].external_id, 10);
    assert_true(d.ev[0].flags & DEVTRACE_EVENT_HAS_SEQUENCE);
    assert_int_equal(d.ev[0].u.cpu_op.sequence_nr, 5);
    assert_string_equal(d.name[1], "MulBackward0");
    assert_int_equal(d.ev[1].u.cpu_op.fwd_thread_id, 3);
    assert_string_equal(d.name[2], "other_scope");
    assert_false(d.ev[2].flags & DEVTRACE_EVENT_HAS_SEQUENCE);
    assert_int_equal(d.ev[2].stream, dt_thread_id());
    devtrace_close(s);
}

/* A name whose pointer changes from op to op (a RecordFunction's own string: autograd
 * nodes, record_function scopes) is found by its text in the thread's cache, without the
 * session's table; names that share a slot of that cache, and an address reused for another
 * text, still get their own names. */
static void test_op_names_at_new_addresses_are_found_by_text(void **state)
{
    (void)state;
    devtrace_session *s = none_session();
    assert_int_equal(devtrace_set_default_session(s), 0);
    assert_int_equal(devtrace_start(s), 0);
    /* Two names in one slot of the text cache (DT_OP_TEXT_CACHE), found by search. */
    char first[64], second[64];
    snprintf(first, sizeof first, "autograd::engine::evaluate_function: N0");
    unsigned want = dt_intern_hash(first, strlen(first)) & (DT_OP_TEXT_CACHE - 1);
    int k = 1;
    for (;; k++) {
        snprintf(second, sizeof second, "autograd::engine::evaluate_function: N%d", k);
        if ((dt_intern_hash(second, strlen(second)) & (DT_OP_TEXT_CACHE - 1)) == want)
            break;
    }
    enum { OPS = 40 };
    char *copies[OPS];
    uint64_t lookups = 0;
    for (int i = 0; i < OPS; i++) {
        /* A new address every op: even ops the first name, odd ones the second until op 20,
         * then the first only (it stays in the text cache). */
        const char *text = (i % 2 == 0 || i >= 20) ? first : second;
        copies[i] = strdup(text);
        assert_non_null(copies[i]);
        if (i == 22)
            lookups = dt_intern_lookups(&s->names);
        assert_int_equal(devtrace_op_enter(copies[i], 100 + (uint64_t)i, -1, 0), 0);
        assert_int_equal(devtrace_op_exit(100 + (uint64_t)i), 0);
    }
    /* From op 22 on, the first name at new addresses: never the session's table. */
    assert_int_equal(dt_intern_lookups(&s->names), lookups);
    /* One address, two texts in turn (a reused stack buffer). */
    char buf[64];
    for (int i = 0; i < 4; i++) {
        snprintf(buf, sizeof buf, "%s", i % 2 ? second : first);
        assert_int_equal(devtrace_op_enter(buf, 200 + (uint64_t)i, -1, 0), 0);
        assert_int_equal(devtrace_op_exit(200 + (uint64_t)i), 0);
    }
    assert_int_equal(devtrace_stop(s), 0);
    assert_int_equal(devtrace_set_default_session(NULL), 0);
    static drained d; /* 64 events: off the stack */
    memset(&d, 0, sizeof d);
    assert_int_equal(devtrace_drain(s, collect, &d), OPS + 4);
    for (int i = 0; i < OPS + 4; i++) {
        const char *text = i < OPS ? ((i % 2 == 0 || i >= 20) ? first : second) : ((i - OPS) % 2 ? second : first);
        assert_int_equal(d.ev[i].kind, DEVTRACE_KIND_CPU_OP);
        assert_int_equal(d.ev[i].external_id, i < OPS ? 100 + (uint64_t)i : 200 + (uint64_t)(i - OPS));
        assert_string_equal(d.name[i], text);
    }
    for (int i = 0; i < OPS; i++)
        free(copies[i]);
    devtrace_close(s);
}

/* An op entered with DEVTRACE_SEQUENCE_FROM_CHILD (torch's evaluate_function) takes the
 * sequence number and forward thread id of the first op inside it that has one; an op
 * whose children have none has none. */
static void test_an_op_takes_its_first_childs_sequence_number(void **state)
{
    (void)state;
    devtrace_session *s = none_session();
    assert_int_equal(devtrace_set_default_session(s), 0);
    assert_int_equal(devtrace_start(s), 0);
    assert_int_equal(devtrace_op_enter("evaluate: MulBackward0", 20, DEVTRACE_SEQUENCE_FROM_CHILD, 0), 0);
    assert_int_equal(devtrace_op_enter("MulBackward0", 21, 7, 4), 0);
    assert_int_equal(devtrace_op_enter("aten::mul", 22, 9, 5), 0); /* a grandchild: not the first */
    assert_int_equal(devtrace_op_exit(22), 0);
    assert_int_equal(devtrace_op_exit(21), 0);
    assert_int_equal(devtrace_op_enter("aten::add", 23, 8, 6), 0); /* a second child: not the first */
    assert_int_equal(devtrace_op_exit(23), 0);
    assert_int_equal(devtrace_op_exit(20), 0);
    assert_int_equal(devtrace_op_enter("evaluate: AccumulateGrad", 30, DEVTRACE_SEQUENCE_FROM_CHILD, 0), 0);
    assert_int_equal(devtrace_op_enter("AccumulateGrad", 31, -1, 0), 0);
    assert_int_equal(devtrace_op_exit(31), 0);
    assert_int_equal(devtrace_op_exit(30), 0);
    assert_int_equal(devtrace_stop(s), 0);
    assert_int_equal(devtrace_set_default_session(NULL), 0);

    drained d = {0};
    assert_int_equal(devtrace_drain(s, collect, &d), 6);
    assert_string_equal(d.name[0], "evaluate: MulBackward0");
    assert_true(d.ev[0].flags & DEVTRACE_EVENT_HAS_SEQUENCE);
    assert_int_equal(d.ev[0].u.cpu_op.sequence_nr, 7);
    assert_int_equal(d.ev[0].u.cpu_op.fwd_thread_id, 4);
    assert_string_equal(d.name[1], "MulBackward0");
    assert_int_equal(d.ev[1].u.cpu_op.sequence_nr, 7);
    assert_string_equal(d.name[4], "evaluate: AccumulateGrad");
    assert_false(d.ev[4].flags & DEVTRACE_EVENT_HAS_SEQUENCE);
    assert_false(d.ev[5].flags & DEVTRACE_EVENT_HAS_SEQUENCE);
    devtrace_close(s);
}

static void test_ranges_refused_by_a_full_store_are_counted_once(void **state)
{
    (void)state;
    devtrace_config cfg;
    devtrace_config_init(&cfg);
    cfg.backend = "none";
    cfg.max_events = 1;
    devtrace_session *s = devtrace_open(&cfg, NULL);
    assert_non_null(s);
    assert_int_equal(devtrace_start(s), 0);
    for (uint64_t i = 0; i < 3; i++) {
        assert_int_equal(devtrace_range_push(s, "op", i), 0);
        assert_int_equal(devtrace_range_pop(s), 0);
    }
    assert_int_equal(devtrace_stop(s), 0);
    assert_int_equal(devtrace_drain(s, NULL, NULL), 1);
    assert_int_equal(devtrace_stats_get(s)->dropped_store_full, 2);
    devtrace_close(s);
}

static void test_range_pop_over_a_plain_external_id_is_a_state_error(void **state)
{
    (void)state;
    devtrace_session *s = none_session();
    assert_int_equal(devtrace_push_external(s, 8), 0);
    assert_int_equal(devtrace_range_pop(s), DEVTRACE_ESTATE);
    /* The mismatched pop left the plain id in place. */
    uint64_t id = 0;
    assert_int_equal(devtrace_pop_external(s, &id), 0);
    assert_int_equal(id, 8);
    assert_int_equal(devtrace_pop_external(s, &id), DEVTRACE_EEMPTY);
    devtrace_close(s);
}

static void test_pop_external_over_a_range_leaves_the_range_in_place(void **state)
{
    (void)state;
    devtrace_session *s = none_session();
    assert_int_equal(devtrace_range_push(s, "aten::mm", 4), 0);
    uint64_t id = 99;
    assert_int_equal(devtrace_pop_external(s, &id), DEVTRACE_ESTATE);
    assert_int_equal(id, 99);
    uint64_t top = 0;
    assert_int_equal(dt_current_external(s, &top), 1);
    assert_int_equal(top, 4);
    assert_int_equal(devtrace_range_pop(s), 0);
    assert_int_equal(dt_current_external(s, &top), 0);
    devtrace_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_extcorr_attaches_the_external_id_to_runtime_and_device_events),
        cmocka_unit_test(test_external_id_zero_is_written_and_absent_is_not),
        cmocka_unit_test(test_runtime_events_external_id_reaches_its_device_work),
        cmocka_unit_test(test_an_events_own_external_id_is_kept),
        cmocka_unit_test(test_cpu_op_keeps_its_own_external_id),
        cmocka_unit_test(test_nested_push_pop_returns_the_innermost_first),
        cmocka_unit_test(test_pop_on_empty_stack_returns_eempty),
        cmocka_unit_test(test_push_and_pop_on_null_session_are_invalid),
        cmocka_unit_test(test_a_new_session_starts_with_an_empty_stack),
        cmocka_unit_test(test_pushes_beyond_the_depth_are_refused_and_popped_without_effect),
        cmocka_unit_test(test_each_thread_has_its_own_stack),
        cmocka_unit_test(test_range_push_pop_emits_a_cpu_op_only_while_running),
        cmocka_unit_test(test_ops_on_the_default_session),
        cmocka_unit_test(test_op_names_at_new_addresses_are_found_by_text),
        cmocka_unit_test(test_an_op_takes_its_first_childs_sequence_number),
        cmocka_unit_test(test_ranges_refused_by_a_full_store_are_counted_once),
        cmocka_unit_test(test_range_pop_over_a_plain_external_id_is_a_state_error),
        cmocka_unit_test(test_pop_external_over_a_range_leaves_the_range_in_place),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
