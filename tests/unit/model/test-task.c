/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "task.h"
#include "util.h"

static struct task proto(pid_t tid)
{
    struct task t = {.tid = tid, .pid = tid, .start_time = (uint64_t)tid * 10, .rule = -1};
    snprintf(t.comm, sizeof t.comm, "t%d", (int)tid);
    return t;
}

static void test_add_find_remove(void **state)
{
    struct task_table *tt;
    struct task *t;
    assert_int_equal(task_table_new(0, &tt), -EINVAL);
    assert_int_equal(task_table_new(100, &tt), 0);
    assert_int_equal(task_table_max(tt), 100);

    struct task p = proto(42);
    assert_int_equal(task_table_add(tt, &p, &t), 0);
    assert_non_null(t);
    assert_int_equal(t->tid, 42);
    assert_string_equal(t->comm, "t42");
    assert_ptr_equal(task_table_find(tt, 42), t);
    assert_int_equal(task_table_count(tt), 1);
    /* the table holds a copy */
    p.start_time = 1;
    assert_int_equal(t->start_time, 420);

    assert_int_equal(task_table_add(tt, &p, NULL), -EEXIST);
    assert_null(task_table_find(tt, 43));
    assert_null(task_table_find(tt, 0));
    assert_null(task_table_find(tt, -1));
    struct task bad = proto(0);
    assert_int_equal(task_table_add(tt, &bad, NULL), -EINVAL);

    assert_int_equal(task_table_remove(tt, 43), -ENOENT);
    assert_int_equal(task_table_remove(tt, 42), 0);
    assert_int_equal(task_table_remove(tt, 42), -ENOENT);
    assert_null(task_table_find(tt, 42));
    assert_int_equal(task_table_count(tt), 0);
    task_table_free(tt);
}

/* TIDs that land on the same index bucket: probing and removal from the
 * middle of a probe chain must keep every other one findable. */
static void test_collisions(void **state)
{
    struct task_table *tt;
    assert_int_equal(task_table_new(1000, &tt), 0);
    /* TIDs with the same home bucket in task.c's Fibonacci hash at any index
     * size up to 1024 buckets: one long probe chain. */
    pid_t tids[40];
    int found = 0;
    for (uint32_t tid = 1; found < 40; tid++)
        if (((((uint64_t)tid * 0x9E3779B97F4A7C15ull) >> 32) & 1023) == 5)
            tids[found++] = (pid_t)tid;
    for (int i = 0; i < 40; i++) {
        struct task p = proto(tids[i]);
        assert_int_equal(task_table_add(tt, &p, NULL), 0);
    }
    for (int i = 0; i < 40; i += 2)
        assert_int_equal(task_table_remove(tt, tids[i]), 0);
    for (int i = 0; i < 40; i++) {
        struct task *t = task_table_find(tt, tids[i]);
        if (i % 2)
            assert_true(t && t->tid == tids[i] && t->start_time == (uint64_t)tids[i] * 10);
        else
            assert_null(t);
    }
    assert_int_equal(task_table_count(tt), 20);
    task_table_free(tt);
}

/* Random add/remove against a plain array as the model. */
static void test_against_model(void **state)
{
    enum { RANGE = 5000, STEPS = 200000 };
    struct task_table *tt;
    bool *present = calloc(RANGE, sizeof(bool));
    unsigned n = 0;
    assert_int_equal(task_table_new(RANGE, &tt), 0);
    srand(1234);
    for (int s = 0; s < STEPS; s++) {
        pid_t tid = 1 + rand() % (RANGE - 1);
        if (rand() % 3) {
            struct task p = proto(tid);
            int r = task_table_add(tt, &p, NULL);
            assert_int_equal(r, present[tid] ? -EEXIST : 0);
            if (!present[tid])
                n++;
            present[tid] = true;
        } else {
            int r = task_table_remove(tt, tid);
            assert_int_equal(r, present[tid] ? 0 : -ENOENT);
            if (present[tid])
                n--;
            present[tid] = false;
        }
    }
    assert_int_equal(task_table_count(tt), n);
    for (pid_t tid = 1; tid < RANGE; tid++) {
        struct task *t = task_table_find(tt, tid);
        assert_true(present[tid] ? t && t->tid == tid : t == NULL);
    }
    free(present);
    task_table_free(tt);
}

static void test_growth_keeps_pointers(void **state)
{
    enum { N = 50000 };
    struct task_table *tt;
    struct task **ptrs = calloc(N, sizeof(*ptrs));
    assert_int_equal(task_table_new(N, &tt), 0);
    size_t mem0 = task_table_memory_bytes(tt);
    for (int i = 0; i < N; i++) {
        struct task p = proto(100 + i * 7);
        assert_int_equal(task_table_add(tt, &p, &ptrs[i]), 0);
    }
    /* growing the index moves no task */
    for (int i = 0; i < N; i++) {
        assert_ptr_equal(task_table_find(tt, 100 + i * 7), ptrs[i]);
        assert_int_equal(ptrs[i]->tid, 100 + i * 7);
    }
    size_t mem = task_table_memory_bytes(tt);
    assert_true(mem > mem0);
    /* about 72 bytes of task plus index and free-slot room per thread */
    assert_true(mem / N < 150);
    free(ptrs);
    task_table_free(tt);
}

static void test_bound(void **state)
{
    struct task_table *tt;
    assert_int_equal(task_table_new(3, &tt), 0);
    for (pid_t tid = 1; tid <= 3; tid++) {
        struct task p = proto(tid);
        assert_int_equal(task_table_add(tt, &p, NULL), 0);
    }
    struct task p = proto(4);
    assert_int_equal(task_table_add(tt, &p, NULL), -ENOSPC);
    assert_null(task_table_find(tt, 4));
    /* room again after a removal, and the freed slot is reused */
    assert_int_equal(task_table_remove(tt, 2), 0);
    assert_int_equal(task_table_add(tt, &p, NULL), 0);
    assert_non_null(task_table_find(tt, 4));
    assert_int_equal(task_table_count(tt), 3);
    task_table_free(tt);
}

static void test_iterate_and_remove(void **state)
{
    enum { N = 3000 };
    struct task_table *tt;
    assert_int_equal(task_table_new(N, &tt), 0);
    for (pid_t tid = 1; tid <= N; tid++) {
        struct task p = proto(tid);
        assert_int_equal(task_table_add(tt, &p, NULL), 0);
    }
    /* a walk visits each task once */
    char *seen = calloc(N + 1, 1);
    size_t iter = 0;
    struct task *t;
    unsigned visits = 0;
    while ((t = task_table_next(tt, &iter))) {
        assert_int_equal(seen[t->tid], 0);
        seen[t->tid] = 1;
        visits++;
    }
    assert_int_equal(visits, N);

    /* removing the current task while walking: no task skipped or repeated */
    memset(seen, 0, N + 1);
    iter = 0;
    visits = 0;
    while ((t = task_table_next(tt, &iter))) {
        pid_t tid = t->tid;
        assert_int_equal(seen[tid], 0);
        seen[tid] = 1;
        visits++;
        if (tid % 3 == 0)
            assert_int_equal(task_table_remove(tt, tid), 0);
    }
    assert_int_equal(visits, N);
    assert_int_equal(task_table_count(tt), N - N / 3);
    for (pid_t tid = 1; tid <= N; tid++)
        assert_true((task_table_find(tt, tid) != NULL) == (tid % 3 != 0));
    /* the remaining walk sees exactly the survivors */
    iter = 0;
    visits = 0;
    while ((t = task_table_next(tt, &iter))) {
        assert_true(t->tid % 3 != 0);
        visits++;
    }
    assert_int_equal(visits, N - N / 3);
    free(seen);
    task_table_free(tt);
}

static void test_generation(void **state)
{
    struct task_table *tt;
    assert_int_equal(task_table_new(10, &tt), 0);
    assert_int_equal(task_table_generation(tt), 0);
    assert_int_equal(task_table_new_generation(tt), 1);
    assert_int_equal(task_table_new_generation(tt), 2);
    assert_int_equal(task_table_generation(tt), 2);
    task_table_free(tt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_find_remove), cmocka_unit_test(test_collisions),
        cmocka_unit_test(test_against_model),   cmocka_unit_test(test_growth_keeps_pointers),
        cmocka_unit_test(test_bound),           cmocka_unit_test(test_iterate_and_remove),
        cmocka_unit_test(test_generation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
