/* test_store.c: the event store (src/core/store.c).
 *
 * Covers: append, count and visit across chunk boundaries, in append order per
 * thread; the max_events bound (exactly max stored, the rest counted as dropped), alone
 * and shared by threads; many threads appending at once, every event stored exactly
 * once; the on_full hook (full chunks while appending, partial ones from
 * dt_store_flush_thread and dt_store_file_all) seeing every event exactly once; one
 * thread appending to two stores in turn; a recycling store (a traced program's) reusing
 * the chunks it handed over, alone and while dt_store_hand_partial runs; chunks from a
 * chunk source (a file mapping in the recorder) holding the events, never freed by the store;
 * a process of one thread taking its chunks from 2 MiB huge-page regions, four a region, each
 * region unmapped when its last chunk is freed, without starting the provider thread (which
 * the provider tests start once the process has a second thread), and giving regions up for
 * the provider once a region was slow to fault in. Events carry (thread index, sequence number)
 * in (stream, correlation) so every check is exact. */
#include <pthread.h>
#include <sched.h>
#include <dirent.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/filemem.h"
#include "core/store.h"

static devtrace_event seq_event(uint32_t thread, uint64_t seq)
{
    devtrace_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = DEVTRACE_KIND_KERNEL;
    ev.stream = thread;
    ev.correlation = seq;
    ev.start_ns = seq * 10;
    ev.end_ns = seq * 10 + 5;
    return ev;
}

/* Appends thread 0's events [from, to) on the calling thread, each accepted. */
static void append_seq(dt_store *st, uint64_t from, uint64_t to)
{
    for (uint64_t i = from; i < to; i++) {
        devtrace_event ev = seq_event(0, i);
        assert_int_equal(dt_store_append(st, &ev), 0);
    }
}

/* What a visit saw: per (thread, seq) how often, and whether each thread's events came
 * in append order. */
typedef struct tally {
    uint32_t threads;
    uint64_t per_thread;
    unsigned char *seen; /* [threads * per_thread] */
    uint64_t *next_seq;  /* [threads]: the sequence number expected next */
    uint64_t visited, out_of_order, out_of_range, duplicates;
} tally;

static void tally_init(tally *t, uint32_t threads, uint64_t per_thread)
{
    memset(t, 0, sizeof *t);
    t->threads = threads;
    t->per_thread = per_thread;
    t->seen = calloc((size_t)threads * per_thread, 1);
    t->next_seq = calloc(threads, sizeof *t->next_seq);
    assert_non_null(t->seen);
    assert_non_null(t->next_seq);
}

static void tally_free(tally *t)
{
    free(t->seen);
    free(t->next_seq);
}

static void tally_visit(void *user, devtrace_event *ev)
{
    tally *t = user;
    t->visited++;
    if (ev->stream >= t->threads || ev->correlation >= t->per_thread) {
        t->out_of_range++;
        return;
    }
    if (t->seen[ev->stream * t->per_thread + ev->correlation]++)
        t->duplicates++;
    if (ev->correlation != t->next_seq[ev->stream])
        t->out_of_order++;
    t->next_seq[ev->stream] = ev->correlation + 1;
}

/* Every (thread, seq) below stored[thread] seen once, none above. */
static uint64_t tally_missing(const tally *t, const uint64_t *stored)
{
    uint64_t missing = 0;
    for (uint32_t th = 0; th < t->threads; th++)
        for (uint64_t q = 0; q < t->per_thread; q++)
            missing += (q < stored[th]) != (t->seen[th * t->per_thread + q] == 1);
    return missing;
}

/* One thread wrote sequence numbers 0 .. written-1: the store holds exactly the first
 * stored of them, each once, in order. */
static void assert_first_stored_in_order(dt_store *st, uint64_t written, uint64_t stored)
{
    tally t;
    tally_init(&t, 1, written);
    dt_store_visit(st, tally_visit, &t);
    uint64_t expect[1] = {stored};
    assert_int_equal(t.visited, stored);
    assert_int_equal(tally_missing(&t, expect), 0);
    assert_int_equal(t.duplicates, 0);
    assert_int_equal(t.out_of_order, 0);
    assert_int_equal(t.out_of_range, 0);
    tally_free(&t);
}

/* A chunk source (dt_store_set_chunk_source) with room for three chunks, then none. */
typedef struct chunk_pool {
    unsigned char *mem; /* 3 * DT_CHUNK_BYTES, not from malloc's chunks as the store's own */
    int given;
} chunk_pool;

static void *pool_chunk(void *user)
{
    chunk_pool *p = user;
    return p->given < 3 ? p->mem + (size_t)DT_CHUNK_BYTES * (size_t)p->given++ : NULL;
}

typedef struct in_pool_tally {
    const unsigned char *lo, *hi;
    uint64_t in_pool, outside;
} in_pool_tally;

static void count_in_pool(void *user, devtrace_event *ev)
{
    in_pool_tally *t = user;
    const unsigned char *at = (const unsigned char *)ev;
    if (at >= t->lo && at < t->hi)
        t->in_pool++;
    else
        t->outside++;
}

static void test_chunks_from_a_source_hold_the_events_and_are_not_freed(void **state)
{
    (void)state;
    /* A mapping, so that a free() of one of its chunks by the store would abort the test. */
    chunk_pool pool = {
        mmap(NULL, 3 * (size_t)DT_CHUNK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), 0};
    assert_true(pool.mem != MAP_FAILED);
    dt_store st;
    assert_int_equal(dt_store_init(&st, UINT64_MAX), 0);
    dt_store_set_chunk_source(&st, pool_chunk, &pool);
    uint64_t n = 4 * (uint64_t)DT_CHUNK_EVENTS + 10; /* three pool chunks, then two from the heap */
    append_seq(&st, 0, n);
    assert_int_equal(pool.given, 3);
    assert_first_stored_in_order(&st, n, n);
    in_pool_tally t = {pool.mem, pool.mem + 3 * (size_t)DT_CHUNK_BYTES, 0, 0};
    dt_store_visit(&st, count_in_pool, &t);
    assert_int_equal(t.in_pool, 3 * (uint64_t)DT_CHUNK_EVENTS);
    assert_int_equal(t.outside, DT_CHUNK_EVENTS + 10);
    dt_store_destroy(&st); /* frees the two heap chunks only */
    munmap(pool.mem, 3 * (size_t)DT_CHUNK_BYTES);
}

static void test_empty_store_counts_and_visits_nothing(void **state)
{
    (void)state;
    dt_store st;
    assert_int_equal(dt_store_init(&st, UINT64_MAX), 0);
    tally t;
    tally_init(&t, 1, 1);
    dt_store_visit(&st, tally_visit, &t);
    assert_int_equal(t.visited, 0);
    assert_int_equal(dt_store_count(&st), 0);
    assert_int_equal(dt_store_dropped(&st), 0);
    tally_free(&t);
    dt_store_destroy(&st);
}

static void test_ten_thousand_events_are_visited_once_in_append_order(void **state)
{
    (void)state;
    enum { N = 2 * DT_CHUNK_EVENTS + 1818 }; /* two full chunks and a partial third */
    dt_store st;
    assert_int_equal(dt_store_init(&st, UINT64_MAX), 0);
    append_seq(&st, 0, N);
    assert_int_equal(dt_store_count(&st), N);
    assert_int_equal(dt_store_dropped(&st), 0);
    tally t;
    tally_init(&t, 1, N);
    dt_store_visit(&st, tally_visit, &t);
    uint64_t stored[1] = {N};
    assert_int_equal(t.visited, N);
    assert_int_equal(t.duplicates, 0);
    assert_int_equal(t.out_of_range, 0);
    assert_int_equal(tally_missing(&t, stored), 0);
    assert_int_equal(t.out_of_order, 0);
    tally_free(&t);
    dt_store_destroy(&st);
}

typedef struct copy_check {
    devtrace_event expect;
    int calls, same;
} copy_check;

static void compare_copy(void *user, devtrace_event *ev)
{
    copy_check *c = user;
    c->calls++;
    c->same = memcmp(ev, &c->expect, sizeof *ev) == 0;
}

static void test_append_copies_the_event_unchanged(void **state)
{
    (void)state;
    dt_store st;
    assert_int_equal(dt_store_init(&st, UINT64_MAX), 0);
    devtrace_event ev;
    memset(&ev, 0xA5, sizeof ev); /* every byte, the union included */
    copy_check check = {ev, 0, 0};
    assert_int_equal(dt_store_append(&st, &ev), 0);
    memset(&ev, 0, sizeof ev); /* the caller's copy may change afterwards */
    dt_store_visit(&st, compare_copy, &check);
    assert_int_equal(check.calls, 1);
    assert_int_equal(check.same, 1);
    dt_store_destroy(&st);
}

static void test_bound_stores_exactly_max_events_and_counts_the_rest(void **state)
{
    (void)state;
    enum { BOUND = DT_CHUNK_EVENTS + 904, N = BOUND + 1000 }; /* one full chunk, then 904 of the next */
    dt_store st;
    assert_int_equal(dt_store_init(&st, BOUND), 0);
    int refused = 0, first_refused = -1;
    for (uint64_t i = 0; i < N; i++) {
        devtrace_event ev = seq_event(0, i);
        if (dt_store_append(&st, &ev) != 0) {
            if (first_refused < 0)
                first_refused = (int)i;
            refused++;
        }
    }
    assert_int_equal(first_refused, BOUND);
    assert_int_equal(refused, N - BOUND);
    assert_int_equal(dt_store_count(&st), BOUND);
    assert_int_equal(dt_store_dropped(&st), N - BOUND);
    assert_first_stored_in_order(&st, N, BOUND); /* the first BOUND, in order */
    dt_store_destroy(&st);
}

static void test_bound_smaller_than_one_chunk(void **state)
{
    (void)state;
    dt_store st;
    assert_int_equal(dt_store_init(&st, 10), 0);
    for (uint64_t i = 0; i < 25; i++) {
        devtrace_event ev = seq_event(0, i);
        assert_int_equal(dt_store_append(&st, &ev), i < 10 ? 0 : -1);
    }
    assert_int_equal(dt_store_count(&st), 10);
    assert_int_equal(dt_store_dropped(&st), 15);
    dt_store_destroy(&st);
}

/* The cursor (decoders write in place): the same bound, order and drop count as appends,
 * and an event left uncommitted is not stored. */
static void test_cursor_writes_in_place_with_the_bound_and_the_drops_of_append(void **state)
{
    (void)state;
    enum { BOUND = 5000, N = 6000 };
    dt_store st;
    assert_int_equal(dt_store_init(&st, BOUND), 0);
    dt_store_cursor cur = {0};
    int refused = 0, first_refused = -1;
    for (uint64_t i = 0; i < N; i++) {
        devtrace_event *ev = dt_store_cursor_next(&cur, &st);
        if (!ev) {
            if (first_refused < 0)
                first_refused = (int)i;
            refused++;
            dt_store_cursor_drop(&cur);
            continue;
        }
        *ev = seq_event(0, 999999); /* written, then abandoned: the place is reused */
        assert_ptr_equal(dt_store_cursor_next(&cur, &st), ev);
        *ev = seq_event(0, i);
        dt_store_cursor_commit(&cur);
    }
    assert_int_equal(first_refused, BOUND);
    assert_int_equal(refused, N - BOUND);
    assert_int_equal(dt_store_count(&st), BOUND);
    assert_int_equal(dt_store_dropped(&st), N - BOUND);
    assert_first_stored_in_order(&st, N, BOUND);
    dt_store_destroy(&st);
}

/* Appends and a cursor on one thread share its chunk: one sequence, in order. */
static void test_cursor_and_append_share_the_thread_chunk(void **state)
{
    (void)state;
    dt_store st;
    assert_int_equal(dt_store_init(&st, 100000), 0);
    dt_store_cursor cur = {0};
    for (uint64_t i = 0; i < 10000; i++) {
        devtrace_event e = seq_event(0, i);
        if (i % 3 == 0) {
            assert_int_equal(dt_store_append(&st, &e), 0);
        } else {
            devtrace_event *ev = dt_store_cursor_next(&cur, &st);
            assert_non_null(ev);
            *ev = e;
            dt_store_cursor_commit(&cur);
        }
    }
    assert_int_equal(dt_store_count(&st), 10000);
    assert_first_stored_in_order(&st, 10000, 10000);
    dt_store_destroy(&st);
}

/* A run (a walk's appends): the bound, order and drops of appends; the chunk's count is
 * published when the run leaves a chunk and when it closes, not per event; a run after
 * appends continues their chunk, and appends after a closed run continue the run's. */
static void test_run_publishes_at_chunk_ends_and_close_with_the_bound_of_append(void **state)
{
    (void)state;
    enum { BOUND = 3 * DT_CHUNK_EVENTS - 17, BEFORE = 5, N = 3 * DT_CHUNK_EVENTS };
    dt_store st;
    assert_int_equal(dt_store_init(&st, BOUND), 0);
    uint64_t seq = 0;
    for (; seq < BEFORE; seq++) {
        devtrace_event e = seq_event(0, seq);
        assert_int_equal(dt_store_append(&st, &e), 0);
    }
    dt_store_cursor run = {0};
    uint64_t refused = 0, first_refused = 0;
    for (uint64_t i = 0; i < N; i++, seq++) {
        devtrace_event *ev = dt_store_run_next(&run, &st);
        if (!ev) {
            if (!refused)
                first_refused = seq;
            refused++;
            dt_store_cursor_drop(&run);
            continue;
        }
        if (i == 7) {
            *ev = seq_event(0, 999999); /* written, then abandoned: the place is reused */
            assert_ptr_equal(dt_store_run_next(&run, &st), ev);
        }
        *ev = seq_event(0, seq);
        dt_store_run_commit(&run);
        if (seq == DT_CHUNK_EVENTS - 1) /* the first chunk is full but still the thread's */
            assert_int_equal(atomic_load(&run.chunk->count), BEFORE);
        if (seq == DT_CHUNK_EVENTS) /* the run has left the first chunk: it is published */
            assert_int_equal(dt_store_count(&st), DT_CHUNK_EVENTS);
    }
    dt_store_run_close(&run);
    assert_int_equal(first_refused, BOUND);
    assert_int_equal(refused, BEFORE + N - BOUND);
    assert_int_equal(dt_store_count(&st), BOUND);
    assert_int_equal(dt_store_dropped(&st), BEFORE + N - BOUND);
    assert_first_stored_in_order(&st, BEFORE + N, BOUND);
    dt_store_destroy(&st);
}

static void test_runs_and_appends_take_turns_in_the_thread_chunk(void **state)
{
    (void)state;
    dt_store st;
    assert_int_equal(dt_store_init(&st, 100000), 0);
    uint64_t seq = 0;
    for (int turn = 0; turn < 40; turn++) { /* runs of 0..1950 events between appends */
        dt_store_cursor run = {0};
        for (int i = 0; i < turn * 50; i++, seq++) {
            devtrace_event *ev = dt_store_run_next(&run, &st);
            assert_non_null(ev);
            *ev = seq_event(0, seq);
            dt_store_run_commit(&run);
        }
        dt_store_run_close(&run);
        assert_int_equal(dt_store_count(&st), seq);
        devtrace_event e = seq_event(0, seq++);
        assert_int_equal(dt_store_append(&st, &e), 0);
    }
    assert_int_equal(seq, 39 * 40 / 2 * 50 + 40);
    assert_first_stored_in_order(&st, seq, seq);
    dt_store_destroy(&st);
}

static void *do_nothing(void *arg)
{
    return arg;
}

/* The provider runs only in a process that had a second thread (store.c): make it one. */
static void become_multithreaded(void)
{
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, do_nothing, NULL), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
}

static unsigned process_threads(void)
{
    unsigned n = 0;
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* The provider as it is now. */
typedef struct provider_view {
    int state;
    unsigned ready;
    uint64_t handed;
} provider_view;

static provider_view provider_now(void)
{
    provider_view v;
    dt_store_provider_read(&v.state, &v.ready, &v.handed);
    return v;
}

/* Waits (at most 10 s) until the provider has n chunks ready; returns how many it has. */
static unsigned provider_ready_within(unsigned n)
{
    unsigned have = 0;
    for (int i = 0; i < 10000 && (have = provider_now().ready) < n; i++)
        usleep(1000);
    return have;
}

/* A process of one thread (this one, until the provider tests) does not get the provider
 * thread: its chunks are carved, four a region, from 2 MiB-aligned regions (transparent huge
 * pages), and a region is unmapped when the last of its chunks is freed; where huge pages
 * are off, the provider starts as in a process of many threads. */
static void test_a_process_of_one_thread_takes_chunks_from_regions_without_the_provider(void **state)
{
    (void)state;
    unsigned threads0 = process_threads(); /* 1, or 2 under ThreadSanitizer (its own thread) */
    uint64_t mapped0, unmapped0, mapped, unmapped;
    unsigned carved0, carved;
    dt_store_regions_read(&mapped0, &unmapped0, &carved0);
    dt_store st;
    assert_int_equal(dt_store_init(&st, UINT64_MAX), 0);
    append_seq(&st, 0, 6 * DT_CHUNK_EVENTS + 1); /* six full chunks and a seventh */
    assert_int_equal(dt_store_count(&st), 6 * DT_CHUNK_EVENTS + 1);
    if (!dt_thp_enabled()) {
        assert_int_equal(provider_now().state, 1);
        dt_store_destroy(&st);
        return;
    }
    assert_int_equal(provider_now().state, 0); /* never started */
    assert_int_equal(process_threads(), threads0);
    /* Seven chunks from what was left of the current region (4 - carved0) and new ones. */
    unsigned left = 4 - carved0, fresh = 7 > left ? 7 - left : 0;
    dt_store_regions_read(&mapped, &unmapped, &carved);
    assert_int_equal(mapped - mapped0, (fresh + 3) / 4);
    assert_int_equal(carved, fresh ? (fresh - 1) % 4 + 1 : carved0 + 7);
    dt_chunk *c = st.slots->current;
    assert_int_equal(c->alloc_events, DT_CHUNK_REGION);
    assert_int_equal(((uintptr_t)c & ((2u << 20) - 1)) % DT_CHUNK_BYTES, 0);
    dt_store_destroy(&st);
    /* Every region whose four chunks are freed is gone; the current one stays for the next. */
    dt_store_regions_read(&mapped, &unmapped, &carved);
    assert_int_equal(mapped - unmapped, 1);
}

/* A region that took too long to fault in (memory a VM's host had not backed) ends the use of
 * regions: the next full chunk starts the provider, which makes the chunks from then on. */
static void test_a_region_slow_to_fault_in_hands_the_chunks_to_the_provider(void **state)
{
    (void)state;
    if (!dt_thp_enabled() || provider_now().state != 0)
        return; /* no regions here (the test above checked the provider instead) */
    unsigned threads0 = process_threads();
    dt_store_regions_set_slow_ns(-1); /* every region is too slow */
    uint64_t mapped0, unmapped0, mapped, unmapped;
    unsigned carved0, carved;
    dt_store_regions_read(&mapped0, &unmapped0, &carved0);
    dt_store st;
    assert_int_equal(dt_store_init(&st, UINT64_MAX), 0);
    append_seq(&st, 0, 4 * DT_CHUNK_EVENTS + 1);
    assert_int_equal(dt_store_count(&st), 4 * DT_CHUNK_EVENTS + 1);
    dt_store_regions_read(&mapped, &unmapped, &carved);
    /* What was left of the current region (at most four chunks of the five), then one new
     * region, the slow one; none after it. */
    assert_int_equal(mapped - mapped0, 1);
    assert_int_equal(provider_now().state, 1);
    assert_true(process_threads() > threads0); /* the provider's */
    dt_store_destroy(&st);
    dt_store_regions_set_slow_ns(LLONG_MAX);
}

/* The provider (one for the process) runs once a chunk has filled; with chunks ready, each
 * new chunk comes from it. */
static void test_provider_runs_once_a_chunk_fills_and_hands_out_its_chunks(void **state)
{
    (void)state;
    become_multithreaded();
    dt_store st;
    assert_int_equal(dt_store_init(&st, UINT64_MAX), 0);
    uint64_t seq = 0;
    for (; seq <= DT_CHUNK_EVENTS; seq++) { /* the last one files the full chunk */
        devtrace_event ev = seq_event(0, seq);
        assert_int_equal(dt_store_append(&st, &ev), 0);
    }
    assert_int_equal(provider_now().state, 1);
    assert_true(provider_ready_within(DT_PROVIDER_READY) >= DT_PROVIDER_READY);
    uint64_t before = provider_now().handed;
    for (; seq < 2 * DT_CHUNK_EVENTS + 1; seq++) {
        devtrace_event ev = seq_event(0, seq);
        assert_int_equal(dt_store_append(&st, &ev), 0);
    }
    assert_int_equal(provider_now().handed, before + 1); /* the third chunk came from the ready ones */
    assert_true(provider_ready_within(DT_PROVIDER_READY) >= DT_PROVIDER_READY); /* refilled */
    for (; seq < 20 * DT_CHUNK_EVENTS; seq++) {                                 /* many chunks through a cursor */
        dt_store_cursor cur = {0};
        devtrace_event *p = dt_store_cursor_next(&cur, &st);
        assert_non_null(p);
        *p = seq_event(0, seq);
        dt_store_cursor_commit(&cur);
    }
    assert_int_equal(dt_store_count(&st), 20 * DT_CHUNK_EVENTS);
    tally t;
    tally_init(&t, 1, 20 * DT_CHUNK_EVENTS);
    dt_store_visit(&st, tally_visit, &t);
    uint64_t stored[1] = {20 * DT_CHUNK_EVENTS};
    assert_int_equal(tally_missing(&t, stored), 0);
    assert_int_equal(t.out_of_order, 0);
    tally_free(&t);
    /* Chunks 4 to 20 each came from the provider or, when it had none ready, from malloc
     * (appenders never wait): how many from each depends on timing. */
    uint64_t handed = provider_now().handed - before;
    assert_true(handed >= 1 && handed <= 18);
    dt_store_destroy(&st);
    /* The provider outlives the store: a second store finds it running. */
    assert_int_equal(provider_now().state, 1);
}

/* A forked child has the store but not the provider thread: it appends with malloc'd
 * chunks and destroys the store without the provider. */
static void test_a_forked_child_appends_and_destroys_without_the_provider(void **state)
{
    (void)state;
    dt_store st;
    assert_int_equal(dt_store_init(&st, UINT64_MAX), 0);
    for (uint64_t i = 0; i <= DT_CHUNK_EVENTS; i++) {
        devtrace_event ev = seq_event(0, i);
        assert_int_equal(dt_store_append(&st, &ev), 0);
    }
    assert_true(provider_ready_within(DT_PROVIDER_READY) >= DT_PROVIDER_READY);
    uint64_t handed = provider_now().handed;
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        int bad = 0;
        for (uint64_t i = DT_CHUNK_EVENTS + 1; i < 4 * DT_CHUNK_EVENTS; i++) {
            devtrace_event ev = seq_event(0, i);
            bad += dt_store_append(&st, &ev) != 0;
        }
        bad += dt_store_count(&st) != 4 * DT_CHUNK_EVENTS;
        /* Nothing taken from the parent's ready chunks (its provider was waiting, with
         * chunks ready, when the process forked: the lock was free). */
        bad += provider_now().handed != handed;
        dt_store_destroy(&st);
        _exit(bad ? 1 : 0);
    }
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(dt_store_count(&st), DT_CHUNK_EVENTS + 1);
    dt_store_destroy(&st);
}

static void test_event_zero_clears_every_byte(void **state)
{
    (void)state;
    devtrace_event ev[3];
    memset(ev, 0xA5, sizeof ev);
    dt_event_zero(&ev[1]);
    const unsigned char *b = (const unsigned char *)ev;
    for (size_t i = 0; i < sizeof ev; i++)
        assert_int_equal(b[i], i >= sizeof ev[0] && i < 2 * sizeof ev[0] ? 0 : 0xA5);
}

/* Threads. cmocka's asserts are not for other threads: workers only record. */
typedef struct worker {
    dt_store *store;
    pthread_barrier_t *go;
    uint32_t index;
    uint64_t count;
    uint64_t accepted, refused;
    int flush_at_end; /* dt_store_flush_thread after the last append */
} worker;

static void *append_worker(void *arg)
{
    worker *w = arg;
    pthread_barrier_wait(w->go);
    for (uint64_t i = 0; i < w->count; i++) {
        devtrace_event ev = seq_event(w->index, i);
        if (dt_store_append(w->store, &ev) == 0)
            w->accepted++;
        else
            w->refused++;
    }
    if (w->flush_at_end)
        dt_store_flush_thread(w->store);
    return NULL;
}

static void run_workers(dt_store *st, worker *w, uint32_t n, uint64_t per_thread, int flush_at_end)
{
    pthread_t tid[16];
    pthread_barrier_t go;
    assert_true(n <= 16);
    assert_int_equal(pthread_barrier_init(&go, NULL, n), 0);
    for (uint32_t i = 0; i < n; i++) {
        w[i] = (worker){st, &go, i, per_thread, 0, 0, flush_at_end};
        assert_int_equal(pthread_create(&tid[i], NULL, append_worker, &w[i]), 0);
    }
    for (uint32_t i = 0; i < n; i++)
        assert_int_equal(pthread_join(tid[i], NULL), 0);
    pthread_barrier_destroy(&go);
}

static void test_eight_threads_store_every_event_exactly_once(void **state)
{
    (void)state;
    enum { THREADS = 8, PER = 50000 };
    dt_store st;
    assert_int_equal(dt_store_init(&st, UINT64_MAX), 0);
    worker w[THREADS];
    run_workers(&st, w, THREADS, PER, 0);
    uint64_t stored[THREADS];
    for (int i = 0; i < THREADS; i++) {
        assert_int_equal(w[i].accepted, PER);
        assert_int_equal(w[i].refused, 0);
        stored[i] = PER;
    }
    assert_int_equal(dt_store_count(&st), (uint64_t)THREADS * PER);
    assert_int_equal(dt_store_dropped(&st), 0);
    tally t;
    tally_init(&t, THREADS, PER);
    dt_store_visit(&st, tally_visit, &t);
    assert_int_equal(t.visited, (uint64_t)THREADS * PER);
    assert_int_equal(t.duplicates, 0);
    assert_int_equal(t.out_of_range, 0);
    assert_int_equal(tally_missing(&t, stored), 0);
    assert_int_equal(t.out_of_order, 0); /* each thread's events in its append order */
    tally_free(&t);
    dt_store_destroy(&st);
}

static void test_bound_is_shared_by_all_threads(void **state)
{
    (void)state;
    /* Every thread appends far more than the bound, so every chunk that got capacity
     * is filled: exactly the bound is stored, whatever the interleaving. */
    enum { THREADS = 4, PER = 20000, BOUND = 10000 };
    dt_store st;
    assert_int_equal(dt_store_init(&st, BOUND), 0);
    worker w[THREADS];
    run_workers(&st, w, THREADS, PER, 0);
    uint64_t accepted = 0, refused = 0;
    for (int i = 0; i < THREADS; i++) {
        accepted += w[i].accepted;
        refused += w[i].refused;
    }
    assert_int_equal(accepted, BOUND);
    assert_int_equal(refused, (uint64_t)THREADS * PER - BOUND);
    assert_int_equal(dt_store_count(&st), BOUND);
    assert_int_equal(dt_store_dropped(&st), (uint64_t)THREADS * PER - BOUND);
    dt_store_destroy(&st);
}

/* The on_full hook, called from appending threads at once. */
typedef struct hook_tally {
    uint32_t threads;
    uint64_t per_thread;
    unsigned char *seen; /* updated atomically */
    uint64_t calls, events, bad;
    uint64_t last_n;
    uint64_t *next;    /* per thread, the event due next in append order */
    uint64_t disorder; /* events handed before an earlier one of their thread */
} hook_tally;

static void hook_tally_init(hook_tally *h, uint32_t threads, uint64_t per_thread)
{
    memset(h, 0, sizeof *h);
    h->threads = threads;
    h->per_thread = per_thread;
    h->seen = calloc((size_t)threads * per_thread, 1);
    h->next = calloc(threads, sizeof *h->next);
    assert_non_null(h->seen);
    assert_non_null(h->next);
}

static void hook_tally_free(hook_tally *h)
{
    free(h->seen);
    free(h->next);
}

static void on_full_tally(void *user, const devtrace_event *events, size_t n)
{
    hook_tally *h = user;
    __atomic_fetch_add(&h->calls, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&h->events, n, __ATOMIC_RELAXED);
    __atomic_store_n(&h->last_n, n, __ATOMIC_RELAXED);
    for (size_t i = 0; i < n; i++) {
        const devtrace_event *ev = &events[i];
        if (ev->stream >= h->threads || ev->correlation >= h->per_thread) {
            __atomic_fetch_add(&h->bad, 1, __ATOMIC_RELAXED);
            continue;
        }
        __atomic_fetch_add(&h->seen[ev->stream * h->per_thread + ev->correlation], 1, __ATOMIC_RELAXED);
        /* on_full calls never overlap (the store's hand_lock) */
        h->disorder += ev->correlation != h->next[ev->stream];
        h->next[ev->stream] = ev->correlation + 1;
    }
}

static uint64_t hook_not_once(const hook_tally *h)
{
    uint64_t wrong = 0;
    for (size_t i = 0; i < (size_t)h->threads * h->per_thread; i++)
        wrong += h->seen[i] != 1;
    return wrong;
}

static void test_on_full_sees_each_full_chunk_when_it_fills(void **state)
{
    (void)state;
    dt_store st;
    assert_int_equal(dt_store_init(&st, UINT64_MAX), 0);
    hook_tally h;
    hook_tally_init(&h, 1, 2 * DT_CHUNK_EVENTS + 1);
    st.on_full = on_full_tally;
    st.on_full_user = &h;
    append_seq(&st, 0, DT_CHUNK_EVENTS);
    assert_int_equal(h.calls, 0); /* full, but filed only when the next event needs room */
    append_seq(&st, DT_CHUNK_EVENTS, 2 * DT_CHUNK_EVENTS + 1);
    assert_int_equal(h.calls, 2);
    assert_int_equal(h.events, 2 * DT_CHUNK_EVENTS);
    dt_store_file_all(&st);
    assert_int_equal(h.calls, 3);
    assert_int_equal(h.last_n, 1);
    assert_int_equal(hook_not_once(&h), 0);
    hook_tally_free(&h);
    dt_store_destroy(&st);
}

static void test_flush_thread_hands_over_the_partial_chunk_and_appending_continues(void **state)
{
    (void)state;
    dt_store st;
    assert_int_equal(dt_store_init(&st, UINT64_MAX), 0);
    hook_tally h;
    hook_tally_init(&h, 1, 15);
    st.on_full = on_full_tally;
    st.on_full_user = &h;
    append_seq(&st, 0, 10);
    dt_store_flush_thread(&st);
    assert_int_equal(h.calls, 1);
    assert_int_equal(h.last_n, 10);
    dt_store_flush_thread(&st); /* nothing new: no call */
    assert_int_equal(h.calls, 1);
    append_seq(&st, 10, 15);
    dt_store_file_all(&st);
    assert_int_equal(h.calls, 2);
    assert_int_equal(h.last_n, 5);
    assert_int_equal(hook_not_once(&h), 0);
    assert_int_equal(dt_store_count(&st), 15); /* handed-over chunks stay stored */
    hook_tally_free(&h);
    dt_store_destroy(&st);
}

static void test_file_all_and_on_full_see_every_event_of_every_thread_exactly_once(void **state)
{
    (void)state;
    enum { THREADS = 8, PER = 2 * DT_CHUNK_EVENTS + 1818 }; /* not a multiple of the chunk size */
    dt_store st;
    assert_int_equal(dt_store_init(&st, UINT64_MAX), 0);
    hook_tally h;
    hook_tally_init(&h, THREADS, PER);
    st.on_full = on_full_tally;
    st.on_full_user = &h;
    worker w[THREADS];
    run_workers(&st, w, THREADS, PER, 0);
    /* Each thread filed its two full chunks itself; its partial third is still open. */
    assert_int_equal(h.events, (uint64_t)THREADS * 2 * DT_CHUNK_EVENTS);
    dt_store_file_all(&st);
    assert_int_equal(h.calls, THREADS * 3);
    assert_int_equal(h.events, (uint64_t)THREADS * PER);
    assert_int_equal(h.bad, 0);
    assert_int_equal(hook_not_once(&h), 0);
    dt_store_file_all(&st); /* nothing left: the hook is not called again */
    assert_int_equal(h.calls, THREADS * 3);
    assert_int_equal(dt_store_count(&st), (uint64_t)THREADS * PER);
    hook_tally_free(&h);
    dt_store_destroy(&st);
}

static void test_flush_thread_from_many_threads_hands_over_every_event_once(void **state)
{
    (void)state;
    enum { THREADS = 6, PER = DT_CHUNK_EVENTS + 904 }; /* a full chunk and a partial one */
    dt_store st;
    assert_int_equal(dt_store_init(&st, UINT64_MAX), 0);
    hook_tally h;
    hook_tally_init(&h, THREADS, PER);
    st.on_full = on_full_tally;
    st.on_full_user = &h;
    worker w[THREADS];
    run_workers(&st, w, THREADS, PER, 1);
    assert_int_equal(h.events, (uint64_t)THREADS * PER);
    assert_int_equal(hook_not_once(&h), 0);
    dt_store_file_all(&st); /* every thread already handed over its partial chunk */
    assert_int_equal(h.calls, THREADS * 2);
    hook_tally_free(&h);
    dt_store_destroy(&st);
}

static void test_hand_partial_gives_what_is_new_and_leaves_the_chunk_to_its_thread(void **state)
{
    (void)state;
    dt_store st;
    assert_int_equal(dt_store_init(&st, UINT64_MAX), 0);
    hook_tally h;
    hook_tally_init(&h, 1, DT_CHUNK_EVENTS + 1);
    st.on_full = on_full_tally;
    st.on_full_user = &h;
    append_seq(&st, 0, 10);
    dt_store_hand_partial(&st);
    assert_int_equal(h.calls, 1);
    assert_int_equal(h.last_n, 10);
    dt_store_hand_partial(&st); /* nothing new: no call */
    assert_int_equal(h.calls, 1);
    append_seq(&st, 10, DT_CHUNK_EVENTS + 1); /* the same chunk fills, then is filed */
    assert_int_equal(h.calls, 2);
    assert_int_equal(h.last_n, DT_CHUNK_EVENTS - 10); /* the filing hands over only the rest */
    dt_store_file_all(&st);
    assert_int_equal(h.calls, 3);
    assert_int_equal(h.last_n, 1);
    assert_int_equal(hook_not_once(&h), 0);
    assert_int_equal(dt_store_count(&st), DT_CHUNK_EVENTS + 1);
    hook_tally_free(&h);
    dt_store_destroy(&st);
}

typedef struct hander {
    dt_store *store;
    atomic_int stop;
    _Atomic uint64_t rounds;
} hander;

static void *hand_partial_loop(void *arg)
{
    hander *h = arg;
    while (!atomic_load(&h->stop)) {
        dt_store_hand_deferred(h->store); /* a no-op without deferral */
        dt_store_hand_partial(h->store);
        atomic_fetch_add(&h->rounds, 1);
    }
    return NULL;
}

/* Four threads append PER events each while another thread hands over what is new, again
 * and again: every event reaches on_full exactly once. */
static int wake_later(void *user)
{
    __atomic_fetch_add((uint64_t *)user, 1, __ATOMIC_RELAXED);
    return 0; /* the handing thread comes round anyway */
}

static void hand_partial_while_threads_append(int recycle, uint64_t per, int deferred)
{
    enum { THREADS = 4 };
    dt_store st;
    assert_int_equal(dt_store_init(&st, UINT64_MAX), 0);
    hook_tally h;
    hook_tally_init(&h, THREADS, per);
    st.on_full = on_full_tally;
    st.on_full_user = &h;
    st.recycle = recycle;
    uint64_t wakes = 0;
    if (deferred)
        dt_store_set_deferred(&st, wake_later, &wakes);
    hander hd = {&st, 0, 0};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, hand_partial_loop, &hd), 0);
    while (atomic_load(&hd.rounds) == 0) /* it runs before the appenders start (a loaded machine */
        sched_yield();                   /* once ran them all before its first round) */
    worker w[THREADS];
    run_workers(&st, w, THREADS, per, 0);
    atomic_store(&hd.stop, 1);
    assert_int_equal(pthread_join(t, NULL), 0);
    dt_store_file_all(&st);
    assert_true(atomic_load(&hd.rounds) > 0);
    assert_int_equal(h.bad, 0);
    assert_int_equal(h.events, (uint64_t)THREADS * per);
    assert_int_equal(hook_not_once(&h), 0);
    assert_int_equal(h.disorder, 0); /* each thread's events in the order appended */
    if (deferred) /* every full chunk queued (a wake each) or, past the bound, handed by its thread */
        assert_true(wakes > 0 && wakes <= (uint64_t)THREADS * (per / DT_CHUNK_EVENTS));
    hook_tally_free(&h);
    dt_store_destroy(&st);
}

static void test_hand_partial_while_threads_append_hands_every_event_once(void **state)
{
    (void)state;
    hand_partial_while_threads_append(0, 2 * DT_CHUNK_EVENTS + 77, 0);
}

/* Records the distinct chunks on_full was given events from (by the address of the
 * chunk's first event: a call with handed 0 starts there). */
typedef struct chunk_seen {
    hook_tally tally;
    const devtrace_event *firsts[64];
    int nfirsts;
} chunk_seen;

static void on_full_chunks(void *user, const devtrace_event *events, size_t n)
{
    chunk_seen *c = user;
    on_full_tally(&c->tally, events, n);
    int known = 0;
    for (int i = 0; i < c->nfirsts; i++)
        known |= c->firsts[i] == events;
    if (!known && c->nfirsts < 64)
        c->firsts[c->nfirsts++] = events;
}

static void test_a_recycling_store_reuses_its_handed_chunks(void **state)
{
    (void)state;
    enum { CHUNKS = 20 };
    for (int recycle = 0; recycle <= 1; recycle++) {
        dt_store st;
        assert_int_equal(dt_store_init(&st, UINT64_MAX), 0);
        chunk_seen c;
        memset(&c, 0, sizeof c);
        hook_tally_init(&c.tally, 1, CHUNKS * DT_CHUNK_EVENTS + 5);
        st.on_full = on_full_chunks;
        st.on_full_user = &c;
        st.recycle = recycle;
        append_seq(&st, 0, CHUNKS * DT_CHUNK_EVENTS + 5);
        assert_int_equal(c.tally.calls, CHUNKS);
        assert_int_equal(c.tally.events, CHUNKS * DT_CHUNK_EVENTS);
        /* Recycling, one thread fills one chunk again and again: each, filed, is the
         * spare its next chunk is taken from. Without, every chunk is new and kept. */
        assert_int_equal(c.nfirsts, recycle ? 1 : CHUNKS);
        assert_int_equal(dt_store_count(&st), recycle ? 5 : CHUNKS * DT_CHUNK_EVENTS + 5);
        dt_store_file_all(&st);
        assert_int_equal(c.tally.events, CHUNKS * DT_CHUNK_EVENTS + 5);
        assert_int_equal(hook_not_once(&c.tally), 0); /* every event handed once, none overwritten first */
        assert_int_equal(c.tally.bad, 0);
        hook_tally_free(&c.tally);
        dt_store_destroy(&st);
    }
}

static void test_recycling_while_hand_partial_runs_hands_every_event_once(void **state)
{
    (void)state;
    hand_partial_while_threads_append(1, 6 * DT_CHUNK_EVENTS + 77, 0); /* chunks recycled several times */
}

/* Deferred handing: a full chunk waits for the handing thread, up to DT_STORE_PENDING_MAX;
 * one more and the filling thread hands them all itself, oldest first; a wake that fails
 * hands at once; the end hands what waits before the partial chunks. */
static int wake_refused(void *user)
{
    __atomic_fetch_add((uint64_t *)user, 1, __ATOMIC_RELAXED);
    return -1; /* no handing thread */
}

static void test_deferred_chunks_wait_for_the_handing_thread_up_to_the_bound(void **state)
{
    (void)state;
    enum { TOTAL = (3 + DT_STORE_PENDING_MAX + 1) * DT_CHUNK_EVENTS + 9 };
    dt_store st;
    assert_int_equal(dt_store_init(&st, UINT64_MAX), 0);
    chunk_seen c;
    memset(&c, 0, sizeof c);
    hook_tally_init(&c.tally, 1, TOTAL + 2 * DT_CHUNK_EVENTS);
    st.on_full = on_full_chunks;
    st.on_full_user = &c;
    st.recycle = 1;
    uint64_t wakes = 0;
    dt_store_set_deferred(&st, wake_later, &wakes);
    append_seq(&st, 0, 3 * DT_CHUNK_EVENTS + 1); /* three chunks filed */
    assert_int_equal(c.tally.calls, 0);          /* none handed by the appending thread */
    assert_int_equal(wakes, 3);
    assert_int_equal(st.npending, 3);
    assert_int_equal(c.nfirsts, 0);
    dt_store_hand_deferred(&st);
    assert_int_equal(c.tally.calls, 3);
    assert_int_equal(c.tally.events, 3 * DT_CHUNK_EVENTS);
    assert_int_equal(st.npending, 0);
    /* Waiting chunks are not reused: each of the three is a chunk of its own. */
    assert_int_equal(c.nfirsts, 3);
    /* The bound: DT_STORE_PENDING_MAX wait, the next one filed hands all of them. */
    append_seq(&st, 3 * DT_CHUNK_EVENTS + 1, (3 + DT_STORE_PENDING_MAX) * DT_CHUNK_EVENTS + 1);
    assert_int_equal(c.tally.calls, 3);
    assert_int_equal(st.npending, DT_STORE_PENDING_MAX);
    append_seq(&st, (3 + DT_STORE_PENDING_MAX) * DT_CHUNK_EVENTS + 1, TOTAL);
    assert_int_equal(c.tally.calls, 3 + DT_STORE_PENDING_MAX + 1);
    assert_int_equal(st.npending, 0);
    assert_int_equal(wakes, 3 + DT_STORE_PENDING_MAX);
    /* A wake refused: the filling thread hands the chunk at once. */
    uint64_t refused = 0;
    dt_store_set_deferred(&st, wake_refused, &refused);
    append_seq(&st, TOTAL, TOTAL + DT_CHUNK_EVENTS);
    assert_int_equal(refused, 1);
    assert_int_equal(c.tally.calls, 3 + DT_STORE_PENDING_MAX + 2);
    assert_int_equal(st.npending, 0);
    /* The end: one more waits, then the partial chunk; both handed, in order. */
    dt_store_set_deferred(&st, wake_later, &wakes);
    append_seq(&st, TOTAL + DT_CHUNK_EVENTS, TOTAL + 2 * DT_CHUNK_EVENTS);
    assert_int_equal(st.npending, 1);
    dt_store_file_all(&st);
    assert_int_equal(st.npending, 0);
    assert_int_equal(c.tally.events, TOTAL + 2 * DT_CHUNK_EVENTS);
    assert_int_equal(hook_not_once(&c.tally), 0);
    assert_int_equal(c.tally.disorder, 0);
    assert_int_equal(c.tally.bad, 0);
    hook_tally_free(&c.tally);
    dt_store_destroy(&st);
}

static void test_deferred_chunks_handed_by_another_thread_reach_on_full_once_and_in_order(void **state)
{
    (void)state;
    hand_partial_while_threads_append(1, 12 * DT_CHUNK_EVENTS + 77, 1);
}

static void test_one_thread_appending_to_two_stores_in_turn_keeps_one_chunk_each(void **state)
{
    (void)state;
    /* Two sessions in one process, one thread feeding both: switching stores must not
     * take a new chunk (and a new share of the bound) at every switch. */
    enum { BOUND = 5000, N = 3000 };
    dt_store a, b;
    assert_int_equal(dt_store_init(&a, BOUND), 0);
    assert_int_equal(dt_store_init(&b, BOUND), 0);
    for (uint64_t i = 0; i < N; i++) {
        devtrace_event ev = seq_event(0, i);
        assert_int_equal(dt_store_append(&a, &ev), 0);
        assert_int_equal(dt_store_append(&b, &ev), 0);
    }
    assert_int_equal(dt_store_count(&a), N);
    assert_int_equal(dt_store_count(&b), N);
    assert_int_equal(dt_store_dropped(&a), 0);
    assert_int_equal(dt_store_dropped(&b), 0);
    tally t;
    tally_init(&t, 1, N);
    dt_store_visit(&a, tally_visit, &t);
    assert_int_equal(t.out_of_order, 0);
    tally_free(&t);
    dt_store_destroy(&a);
    dt_store_destroy(&b);
}

static void test_destroy_accepts_null_and_a_zeroed_store(void **state)
{
    (void)state;
    dt_store zeroed;
    memset(&zeroed, 0, sizeof zeroed);
    dt_store_destroy(NULL);
    dt_store_destroy(&zeroed);
    dt_store st;
    assert_int_equal(dt_store_init(&st, 1), 0);
    dt_store_destroy(&st);
    dt_store_destroy(&st); /* twice: the first left it zeroed */
}

/* The threads of this process (/proc/self/task). */
static int threads_now(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

/* At exit (the destructor's dt_store_provider_stop) the provider thread ends: nothing of
 * devtrace's is still allocating while the exit's own work (LeakSanitizer's check) runs. A
 * store appends on with malloc'd chunks after. Run last: the provider is one for the process. */
static void test_the_provider_thread_ends_when_the_process_exits(void **state)
{
    (void)state;
    dt_store st;
    assert_int_equal(dt_store_init(&st, UINT64_MAX), 0);
    uint64_t seq = 0;
    for (; seq <= DT_CHUNK_EVENTS; seq++) {
        devtrace_event ev = seq_event(0, seq);
        assert_int_equal(dt_store_append(&st, &ev), 0);
    }
    assert_int_equal(provider_now().state, 1);
    int with_provider = threads_now(); /* this one, the provider (and a sanitizer's own) */
    dt_store_provider_stop();
    assert_int_equal(provider_now().state, -1);
    for (int i = 0; i < 1000 && threads_now() != with_provider - 1; i++)
        usleep(1000);
    assert_int_equal(threads_now(), with_provider - 1);
    uint64_t handed = provider_now().handed;
    for (; seq < 3 * DT_CHUNK_EVENTS; seq++) {
        devtrace_event ev = seq_event(0, seq);
        assert_int_equal(dt_store_append(&st, &ev), 0);
    }
    assert_int_equal(dt_store_count(&st), 3 * DT_CHUNK_EVENTS);
    assert_int_equal(provider_now().handed, handed); /* malloc'd chunks */
    dt_store_destroy(&st);
}

int main(void)
{
    /* A VM's host may be slow to back fresh memory, which would end the use of regions at a
     * time of its choosing: only the test that asks for it sees a slow region. */
    dt_store_regions_set_slow_ns(LLONG_MAX);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_store_counts_and_visits_nothing),
        cmocka_unit_test(test_ten_thousand_events_are_visited_once_in_append_order),
        cmocka_unit_test(test_append_copies_the_event_unchanged),
        cmocka_unit_test(test_bound_stores_exactly_max_events_and_counts_the_rest),
        cmocka_unit_test(test_bound_smaller_than_one_chunk),
        cmocka_unit_test(test_cursor_writes_in_place_with_the_bound_and_the_drops_of_append),
        cmocka_unit_test(test_cursor_and_append_share_the_thread_chunk),
        cmocka_unit_test(test_run_publishes_at_chunk_ends_and_close_with_the_bound_of_append),
        cmocka_unit_test(test_runs_and_appends_take_turns_in_the_thread_chunk),
        cmocka_unit_test(test_event_zero_clears_every_byte),
        cmocka_unit_test(test_chunks_from_a_source_hold_the_events_and_are_not_freed),
        cmocka_unit_test(test_a_process_of_one_thread_takes_chunks_from_regions_without_the_provider),
        cmocka_unit_test(test_a_region_slow_to_fault_in_hands_the_chunks_to_the_provider),
        cmocka_unit_test(test_provider_runs_once_a_chunk_fills_and_hands_out_its_chunks),
        cmocka_unit_test(test_a_forked_child_appends_and_destroys_without_the_provider),
        cmocka_unit_test(test_eight_threads_store_every_event_exactly_once),
        cmocka_unit_test(test_bound_is_shared_by_all_threads),
        cmocka_unit_test(test_on_full_sees_each_full_chunk_when_it_fills),
        cmocka_unit_test(test_flush_thread_hands_over_the_partial_chunk_and_appending_continues),
        cmocka_unit_test(test_file_all_and_on_full_see_every_event_of_every_thread_exactly_once),
        cmocka_unit_test(test_flush_thread_from_many_threads_hands_over_every_event_once),
        cmocka_unit_test(test_hand_partial_gives_what_is_new_and_leaves_the_chunk_to_its_thread),
        cmocka_unit_test(test_hand_partial_while_threads_append_hands_every_event_once),
        cmocka_unit_test(test_a_recycling_store_reuses_its_handed_chunks),
        cmocka_unit_test(test_recycling_while_hand_partial_runs_hands_every_event_once),
        cmocka_unit_test(test_deferred_chunks_wait_for_the_handing_thread_up_to_the_bound),
        cmocka_unit_test(test_deferred_chunks_handed_by_another_thread_reach_on_full_once_and_in_order),
        cmocka_unit_test(test_one_thread_appending_to_two_stores_in_turn_keeps_one_chunk_each),
        cmocka_unit_test(test_destroy_accepts_null_and_a_zeroed_store),
        cmocka_unit_test(test_the_provider_thread_ends_when_the_process_exits), /* last */
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
