/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pidmap.h"
#include "tidmap.h"

struct rec {
    uint64_t start_time;
    char comm[12];
};

/* The map's hash, repeated here so the tests can build collisions and chains
 * that wrap around the table end; slot_of checks it against the real layout. */
static size_t home(pid_t key, size_t n_slots)
{
    return (size_t)(((uint64_t)(uint32_t)key * 0x9E3779B97F4A7C15ull) >> 32) & (n_slots - 1);
}

static long slot_of(const struct pidmap *m, pid_t key)
{
    for (size_t i = 0; i < m->n_slots; i++)
        if (*(const pid_t *)(m->slots + i * m->entry_size) == key)
            return (long)i;
    return -1;
}

/* n keys > after whose home in a table of n_slots is `want`. */
static void keys_with_home(size_t n_slots, size_t want, pid_t after, pid_t *out, size_t n)
{
    for (pid_t k = after + 1; n > 0; k++)
        if (home(k, n_slots) == want) {
            *out++ = k;
            n--;
        }
}

static void test_insert_find_remove(void **state)
{
    (void)state;
    struct pidmap m;
    PIDMAP_INIT(&m, struct rec);
    assert_int_equal(m.entry_size % alignof(struct rec), 0);
    assert_null(pidmap_find(&m, 42));
    assert_int_equal(pidmap_remove(&m, 42, NULL), -ENOENT);

    struct rec *r;
    assert_int_equal(pidmap_insert(&m, 42, (void **)&r), 0);
    assert_int_equal(r->start_time, 0); /* zeroed */
    r->start_time = 4200;
    strcpy(r->comm, "worker");
    assert_ptr_equal(pidmap_find(&m, 42), r);
    assert_int_equal(pidmap_count(&m), 1);

    struct rec *again;
    assert_int_equal(pidmap_insert(&m, 42, (void **)&again), -EEXIST);
    assert_ptr_equal(again, r);
    assert_int_equal(pidmap_insert(&m, 0, NULL), -EINVAL);
    assert_int_equal(pidmap_insert(&m, -1, NULL), -EINVAL);
    assert_null(pidmap_find(&m, 0));
    assert_null(pidmap_find(&m, 43));

    struct rec out;
    assert_int_equal(pidmap_remove(&m, 42, &out), 0);
    assert_int_equal(out.start_time, 4200);
    assert_string_equal(out.comm, "worker");
    assert_null(pidmap_find(&m, 42));
    assert_int_equal(pidmap_count(&m), 0);
    assert_int_equal(pidmap_remove(&m, 42, NULL), -ENOENT);
    pidmap_done(&m);
}

static void test_entry_sizes(void **state)
{
    (void)state;
    struct pidmap m;
    PIDMAP_INIT(&m, uint32_t);
    assert_int_equal(m.entry_size, 8);
    PIDMAP_INIT(&m, void *);
    assert_int_equal(m.entry_size, 16);
    assert_int_equal(m.value_offset, 8);
}

/* Keys sharing a home slot sit in consecutive slots; removing the first
 * shifts the others back so each is still found. */
static void test_collisions_and_backward_shift(void **state)
{
    (void)state;
    struct pidmap m;
    PIDMAP_INIT(&m, uint32_t);
    assert_int_equal(pidmap_reserve(&m, 1), 0);
    size_t n = m.n_slots;
    pid_t k[4];
    keys_with_home(n, 10, 0, k, 4);
    for (int i = 0; i < 4; i++) {
        uint32_t *v;
        assert_int_equal(pidmap_insert(&m, k[i], (void **)&v), 0);
        *v = (uint32_t)i + 100;
        assert_int_equal(slot_of(&m, k[i]), 10 + i);
    }
    assert_int_equal(m.n_slots, n); /* no growth: the layout is the one checked */

    assert_int_equal(pidmap_remove(&m, k[0], NULL), 0);
    /* k1..k3 moved back one slot each: no hole left in the chain */
    for (int i = 1; i < 4; i++) {
        assert_int_equal(slot_of(&m, k[i]), 10 + i - 1);
        assert_int_equal(*(uint32_t *)pidmap_find(&m, k[i]), (uint32_t)i + 100);
    }
    assert_int_equal(slot_of(&m, k[0]), -1);

    /* an entry at its home stays when an earlier chain member goes */
    pid_t other[1];
    keys_with_home(n, 12, k[3], other, 1); /* home 12, displaced to 13 by k3 */
    assert_int_equal(pidmap_insert(&m, other[0], NULL), 0);
    assert_int_equal(slot_of(&m, other[0]), 13);
    assert_int_equal(pidmap_remove(&m, k[1], NULL), 0);
    assert_int_equal(slot_of(&m, k[2]), 10);
    assert_int_equal(slot_of(&m, k[3]), 11);
    assert_int_equal(slot_of(&m, other[0]), 12);
    pidmap_done(&m);
}

/* A chain that starts in the last slot continues at slot 0; deleting across
 * the end shifts entries back over it. */
static void test_wrap_around(void **state)
{
    (void)state;
    struct pidmap m;
    PIDMAP_INIT(&m, uint32_t);
    assert_int_equal(pidmap_reserve(&m, 1), 0);
    size_t n = m.n_slots, last = n - 1;
    pid_t k[3], zero[1];
    keys_with_home(n, last, 0, k, 3);
    keys_with_home(n, 0, 0, zero, 1);
    for (int i = 0; i < 3; i++)
        assert_int_equal(pidmap_insert(&m, k[i], NULL), 0);
    assert_int_equal(slot_of(&m, k[0]), (long)last);
    assert_int_equal(slot_of(&m, k[1]), 0);
    assert_int_equal(slot_of(&m, k[2]), 1);
    assert_int_equal(pidmap_insert(&m, zero[0], NULL), 0); /* home 0, pushed to 2 */
    assert_int_equal(slot_of(&m, zero[0]), 2);

    assert_int_equal(pidmap_remove(&m, k[0], NULL), 0);
    assert_int_equal(slot_of(&m, k[1]), (long)last);
    assert_int_equal(slot_of(&m, k[2]), 0);
    assert_int_equal(slot_of(&m, zero[0]), 1); /* home 0 is still behind it */
    for (int i = 1; i < 3; i++)
        assert_non_null(pidmap_find(&m, k[i]));
    assert_non_null(pidmap_find(&m, zero[0]));
    /* a key whose home is 0 never moves over the end to the last slot */
    assert_int_equal(pidmap_remove(&m, k[1], NULL), 0);
    assert_int_equal(pidmap_remove(&m, k[2], NULL), 0);
    assert_int_equal(slot_of(&m, zero[0]), 0);
    assert_int_equal(pidmap_count(&m), 1);
    pidmap_done(&m);
}

/* Growth keeps every value and the load at or below 0.7; a random mix of
 * inserts and removes agrees with a plain array. */
static void test_growth_and_churn(void **state)
{
    (void)state;
    enum { RANGE = 20000 };
    struct pidmap m;
    PIDMAP_INIT(&m, struct rec);
    bool *present = calloc(RANGE, sizeof(bool));
    assert_non_null(present);
    srand(19);
    size_t count = 0;
    for (int step = 0; step < 200000; step++) {
        pid_t k = 1 + rand() % (RANGE - 1);
        if (rand() % 3) {
            struct rec *r;
            int ret = pidmap_insert(&m, k, (void **)&r);
            assert_int_equal(ret, present[k] ? -EEXIST : 0);
            if (!present[k]) {
                r->start_time = (uint64_t)k * 7;
                present[k] = true;
                count++;
            }
        } else {
            assert_int_equal(pidmap_remove(&m, k, NULL), present[k] ? 0 : -ENOENT);
            count -= present[k];
            present[k] = false;
        }
        assert_true(m.count * 10 <= m.n_slots * 7);
    }
    assert_int_equal(pidmap_count(&m), count);
    for (pid_t k = 1; k < RANGE; k++) {
        struct rec *r = pidmap_find(&m, k);
        if (present[k]) {
            assert_non_null(r);
            assert_int_equal(r->start_time, (uint64_t)k * 7);
        } else {
            assert_null(r);
        }
    }
    assert_int_equal(pidmap_memory_bytes(&m), m.n_slots * m.entry_size);
    free(present);
    pidmap_done(&m);
    assert_int_equal(pidmap_memory_bytes(&m), 0);
}

static void test_iterate(void **state)
{
    (void)state;
    struct pidmap m;
    PIDMAP_INIT(&m, uint32_t);
    size_t iter = 0;
    assert_null(pidmap_next(&m, &iter, NULL));
    for (pid_t k = 1; k <= 500; k++) {
        uint32_t *v;
        assert_int_equal(pidmap_insert(&m, k, (void **)&v), 0);
        *v = (uint32_t)k * 2;
    }
    for (pid_t k = 2; k <= 500; k += 2)
        assert_int_equal(pidmap_remove(&m, k, NULL), 0);
    bool seen[501] = {false};
    size_t n = 0;
    pid_t key;
    uint32_t *v;
    iter = 0;
    while ((v = pidmap_next(&m, &iter, &key))) {
        assert_true(key >= 1 && key <= 500 && key % 2 == 1);
        assert_false(seen[key]);
        assert_int_equal(*v, (uint32_t)key * 2);
        seen[key] = true;
        n++;
    }
    assert_int_equal(n, 250);

    /* clear empties the map and keeps its memory for refilling */
    size_t mem = pidmap_memory_bytes(&m);
    pidmap_clear(&m);
    assert_int_equal(pidmap_count(&m), 0);
    assert_int_equal(pidmap_memory_bytes(&m), mem);
    iter = 0;
    assert_null(pidmap_next(&m, &iter, NULL));
    assert_null(pidmap_find(&m, 1));
    assert_int_equal(pidmap_insert(&m, 1, NULL), 0);
    assert_int_equal(pidmap_memory_bytes(&m), mem);
    pidmap_done(&m);
}

/* The applier's dense records over a pidmap: removal moves the last record
 * into the hole and the index follows it. */
static void test_tidmap_dense(void **state)
{
    (void)state;
    struct item {
        pid_t tid;
        int v;
    };
    struct tidmap m;
    tidmap_init(&m, sizeof(struct item));
    for (pid_t k = 1; k <= 100; k++)
        assert_non_null(tidmap_add(&m, &(struct item){.tid = k, .v = k * 3}));
    assert_int_equal(m.n, 100);
    tidmap_remove(&m, 1); /* the first: 100 takes its place */
    tidmap_remove(&m, 1); /* absent: nothing happens */
    assert_int_equal(m.n, 99);
    assert_int_equal(((struct item *)tidmap_item(&m, 0))->tid, 100);
    for (pid_t k = 2; k <= 100; k++) {
        struct item *it = tidmap_find(&m, k);
        assert_non_null(it);
        assert_int_equal(it->v, k * 3);
    }
    assert_null(tidmap_find(&m, 1));
    for (pid_t k = 2; k <= 100; k++)
        tidmap_remove(&m, k);
    assert_int_equal(m.n, 0);
    assert_int_equal(pidmap_count(&m.index), 0);
    tidmap_done(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_insert_find_remove),
        cmocka_unit_test(test_entry_sizes),
        cmocka_unit_test(test_collisions_and_backward_shift),
        cmocka_unit_test(test_wrap_around),
        cmocka_unit_test(test_growth_and_churn),
        cmocka_unit_test(test_iterate),
        cmocka_unit_test(test_tidmap_dense),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
