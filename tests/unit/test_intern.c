/* test_intern.c: the string table (src/core/intern.c).
 *
 * Covers: one id per distinct string and the same id for the same string; id 0 is the
 * empty string (and "no name"); unknown ids read as ""; strings with embedded NULs and
 * long strings are kept byte for byte; the table copies what it is given; ids survive
 * the hash table's growth; dt_intern_ptr's per-thread pointer cache (a pointer reused
 * for another string gets the new string's id, tables do not share cache entries);
 * 100,000 distinct names interned from several threads at once, each read back while
 * the others still write. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/intern.h"

static int setup_table(void **state)
{
    dt_intern *t = malloc(sizeof *t); /* 128 KiB of block pointers: not on the stack */
    if (!t || dt_intern_init(t) != 0) {
        free(t);
        return -1;
    }
    *state = t;
    return 0;
}

static int teardown_table(void **state)
{
    dt_intern_destroy(*state);
    free(*state);
    return 0;
}

static void test_same_string_gets_the_same_id(void **state)
{
    dt_intern *t = *state;
    uint32_t a = dt_intern_str(t, "vectorAdd");
    char copy[] = "vectorAdd"; /* another pointer, same bytes */
    assert_int_not_equal(a, 0);
    assert_int_equal(dt_intern_str(t, copy), a);
    assert_int_equal(dt_intern_n(t, "vectorAdd and more", 9), a);
    assert_int_equal(dt_intern_count(t), 2); /* "" and "vectorAdd" */
}

static void test_distinct_strings_get_distinct_ids(void **state)
{
    dt_intern *t = *state;
    const char *names[] = {"a", "ab", "abc", "b", "A", "a ", " a", "cudaLaunchKernel", "cudaLaunchKernel_v7000"};
    uint32_t ids[sizeof names / sizeof names[0]];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        ids[i] = dt_intern_str(t, names[i]);
        assert_int_not_equal(ids[i], 0);
        for (size_t j = 0; j < i; j++)
            assert_int_not_equal(ids[i], ids[j]);
    }
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        assert_string_equal(dt_intern_get(t, ids[i]), names[i]);
    assert_int_equal(dt_intern_count(t), 1 + sizeof names / sizeof names[0]);
}

static void test_id_zero_is_the_empty_string(void **state)
{
    dt_intern *t = *state;
    assert_string_equal(dt_intern_get(t, 0), "");
    assert_int_equal(dt_intern_count(t), 1);
    /* The empty string is id 0: interning it adds nothing. */
    assert_int_equal(dt_intern_str(t, ""), 0);
    assert_int_equal(dt_intern_n(t, "abc", 0), 0);
    assert_int_equal(dt_intern_count(t), 1);
}

static void test_null_string_is_id_zero(void **state)
{
    dt_intern *t = *state;
    assert_int_equal(dt_intern_str(t, NULL), 0);
    assert_int_equal(dt_intern_n(t, NULL, 5), 0);
    assert_int_equal(dt_intern_ptr(t, NULL), 0);
    assert_int_equal(dt_intern_count(t), 1);
}

static void test_unknown_id_reads_as_empty(void **state)
{
    dt_intern *t = *state;
    uint32_t id = dt_intern_str(t, "k");
    assert_string_equal(dt_intern_get(t, id + 1), "");
    assert_string_equal(dt_intern_get(t, 123456), "");
    assert_string_equal(dt_intern_get(t, UINT32_MAX), "");
}

static void test_embedded_nul_strings_are_kept_apart_byte_for_byte(void **state)
{
    dt_intern *t = *state;
    uint32_t anb = dt_intern_n(t, "a\0b", 3);
    uint32_t anc = dt_intern_n(t, "a\0c", 3);
    uint32_t a = dt_intern_n(t, "a", 1);
    uint32_t an = dt_intern_n(t, "a\0", 2);
    assert_int_not_equal(anb, anc);
    assert_int_not_equal(anb, a);
    assert_int_not_equal(anb, an);
    assert_int_not_equal(a, an);
    assert_int_equal(dt_intern_n(t, "a\0b", 3), anb);
    assert_int_equal(dt_intern_str(t, "a"), a);            /* strlen stops at the NUL: "a" */
    assert_memory_equal(dt_intern_get(t, anb), "a\0b", 4); /* bytes and a terminator */
    assert_memory_equal(dt_intern_get(t, anc), "a\0c", 4);
    assert_int_equal(dt_intern_count(t), 5);
}

static void test_long_strings_are_kept_whole(void **state)
{
    dt_intern *t = *state;
    enum { LEN = 1 << 20 };
    char *s = malloc(LEN + 1);
    assert_non_null(s);
    for (size_t i = 0; i < LEN; i++)
        s[i] = (char)('a' + i % 26);
    s[LEN] = '\0';
    uint32_t id = dt_intern_str(t, s);
    assert_int_not_equal(id, 0);
    assert_int_equal(strlen(dt_intern_get(t, id)), LEN);
    assert_memory_equal(dt_intern_get(t, id), s, LEN + 1);
    s[LEN - 1] = '#'; /* differs only in the last byte */
    uint32_t other = dt_intern_str(t, s);
    assert_int_not_equal(other, id);
    assert_int_equal(dt_intern_get(t, other)[LEN - 1], '#');
    assert_int_not_equal(dt_intern_get(t, id)[LEN - 1], '#'); /* the table copied it */
    free(s);
}

static void test_the_table_copies_the_string(void **state)
{
    dt_intern *t = *state;
    char buf[16] = "kernel_one";
    uint32_t id = dt_intern_str(t, buf);
    strcpy(buf, "overwritten");
    assert_string_equal(dt_intern_get(t, id), "kernel_one");
    assert_int_not_equal(dt_intern_str(t, buf), id);
}

static void test_ids_survive_hash_table_growth(void **state)
{
    dt_intern *t = *state;
    enum { N = 5000 }; /* the table starts with 1024 slots and 1024-entry blocks */
    uint32_t *ids = malloc(N * sizeof *ids);
    char name[32];
    assert_non_null(ids);
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "name-%d", i);
        ids[i] = dt_intern_str(t, name);
        assert_int_equal(ids[i], (uint32_t)i + 1); /* ids are handed out in order */
    }
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "name-%d", i);
        assert_int_equal(dt_intern_str(t, name), ids[i]);
        assert_string_equal(dt_intern_get(t, ids[i]), name);
    }
    assert_int_equal(dt_intern_count(t), N + 1);
    free(ids);
}

static void test_intern_ptr_returns_the_strings_id(void **state)
{
    dt_intern *t = *state;
    static const char kernel[] = "_Z6kernelPf";
    uint32_t id = dt_intern_ptr(t, kernel);
    assert_int_not_equal(id, 0);
    assert_int_equal(dt_intern_ptr(t, kernel), id); /* from the cache */
    assert_int_equal(dt_intern_str(t, kernel), id);
    assert_int_equal(dt_intern_count(t), 2);
}

static void test_intern_ptr_with_a_reused_pointer_returns_the_new_strings_id(void **state)
{
    dt_intern *t = *state;
    char buf[32];
    strcpy(buf, "alpha");
    uint32_t alpha = dt_intern_ptr(t, buf);
    strcpy(buf, "beta"); /* the vendor reused the address for another name */
    uint32_t beta = dt_intern_ptr(t, buf);
    assert_int_not_equal(beta, alpha);
    assert_int_equal(beta, dt_intern_str(t, "beta"));
    assert_string_equal(dt_intern_get(t, beta), "beta");
    strcpy(buf, "alph"); /* a prefix of the first string */
    uint32_t alph = dt_intern_ptr(t, buf);
    assert_string_equal(dt_intern_get(t, alph), "alph");
    strcpy(buf, "alpha");
    assert_int_equal(dt_intern_ptr(t, buf), alpha);
}

static void test_intern_ptr_cache_does_not_leak_between_tables(void **state)
{
    dt_intern *a = *state;
    dt_intern *b = malloc(sizeof *b);
    assert_non_null(b);
    assert_int_equal(dt_intern_init(b), 0);
    static const char name[] = "shared_pointer";
    assert_int_equal(dt_intern_str(a, "x"), 1);
    assert_int_equal(dt_intern_str(a, "y"), 2);
    assert_int_equal(dt_intern_ptr(a, name), 3);
    assert_int_equal(dt_intern_ptr(b, name), 1); /* b's own id, not a's cached 3 */
    assert_int_equal(dt_intern_ptr(a, name), 3);
    assert_string_equal(dt_intern_get(b, 1), name);
    dt_intern_destroy(b);
    free(b);
}

/* Threads: each interns its own names and a shared set, reading each id back at once
 * (while the others keep writing). Workers record; the main thread asserts. */
enum { THREADS = 4, OWN = 25000, SHARED = 1000 };

typedef struct name_worker {
    dt_intern *t;
    pthread_barrier_t *go;
    int index;
    uint32_t own[OWN];
    uint32_t shared[SHARED];
    int wrong_readback, zero_ids;
} name_worker;

static void *intern_worker(void *arg)
{
    name_worker *w = arg;
    char name[48];
    pthread_barrier_wait(w->go);
    for (int i = 0; i < OWN; i++) {
        if (i % (OWN / SHARED) == 0) {
            int k = (i / (OWN / SHARED) + w->index * 250) % SHARED; /* threads start apart */
            snprintf(name, sizeof name, "shared-%d", k);
            w->shared[k] = dt_intern_ptr(w->t, name);
            w->zero_ids += w->shared[k] == 0;
            w->wrong_readback += strcmp(dt_intern_get(w->t, w->shared[k]), name) != 0;
        }
        snprintf(name, sizeof name, "thread-%d-name-%d", w->index, i);
        w->own[i] = i % 2 ? dt_intern_str(w->t, name) : dt_intern_ptr(w->t, name);
        w->zero_ids += w->own[i] == 0;
        w->wrong_readback += strcmp(dt_intern_get(w->t, w->own[i]), name) != 0;
    }
    return NULL;
}

static void test_hundred_thousand_names_from_four_threads(void **state)
{
    dt_intern *t = *state;
    name_worker *w = calloc(THREADS, sizeof *w);
    pthread_t tid[THREADS];
    pthread_barrier_t go;
    assert_non_null(w);
    assert_int_equal(pthread_barrier_init(&go, NULL, THREADS), 0);
    for (int i = 0; i < THREADS; i++) {
        w[i].t = t;
        w[i].go = &go;
        w[i].index = i;
        assert_int_equal(pthread_create(&tid[i], NULL, intern_worker, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_join(tid[i], NULL), 0);
    pthread_barrier_destroy(&go);

    uint32_t count = dt_intern_count(t);
    assert_int_equal(count, 1 + THREADS * OWN + SHARED);
    unsigned char *used = calloc(count, 1);
    assert_non_null(used);
    char name[48];
    for (int i = 0; i < THREADS; i++) {
        assert_int_equal(w[i].zero_ids, 0);
        assert_int_equal(w[i].wrong_readback, 0);
        for (int k = 0; k < OWN; k++) {
            assert_true(w[i].own[k] < count);
            assert_int_equal(used[w[i].own[k]]++, 0); /* no two names share an id */
        }
        for (int k = 0; k < SHARED; k++)
            assert_int_equal(w[i].shared[k], w[0].shared[k]); /* one id per shared name */
    }
    for (int k = 0; k < SHARED; k++) {
        assert_int_equal(used[w[0].shared[k]]++, 0);
        snprintf(name, sizeof name, "shared-%d", k);
        assert_string_equal(dt_intern_get(t, w[0].shared[k]), name);
    }
    for (int i = 0; i < THREADS; i++)
        for (int k = 0; k < OWN; k += 997) {
            snprintf(name, sizeof name, "thread-%d-name-%d", i, k);
            assert_int_equal(dt_intern_str(t, name), w[i].own[k]);
        }
    free(used);
    free(w);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup_table, teardown_table)
    const struct CMUnitTest tests[] = {
        T(test_same_string_gets_the_same_id),
        T(test_distinct_strings_get_distinct_ids),
        T(test_id_zero_is_the_empty_string),
        T(test_null_string_is_id_zero),
        T(test_unknown_id_reads_as_empty),
        T(test_embedded_nul_strings_are_kept_apart_byte_for_byte),
        T(test_long_strings_are_kept_whole),
        T(test_the_table_copies_the_string),
        T(test_ids_survive_hash_table_growth),
        T(test_intern_ptr_returns_the_strings_id),
        T(test_intern_ptr_with_a_reused_pointer_returns_the_new_strings_id),
        T(test_intern_ptr_cache_does_not_leak_between_tables),
        T(test_hundred_thousand_names_from_four_threads),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
