/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The dense TID-keyed records: a record is found by its TID wherever
 * removals moved it, the array stays dense (the last record fills a hole),
 * growth keeps every record and its bytes, and a map emptied by done can be
 * used again. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tidmap.h"

/* A record as the applier keeps them: the TID first, then its own bytes. */
struct rec {
    pid_t tid;
    uint64_t start_time;
    char comm[16];
};

static struct rec rec_of(pid_t tid)
{
    struct rec r = {.tid = tid, .start_time = (uint64_t)tid * 1000 + 7};
    snprintf(r.comm, sizeof r.comm, "t%d", (int)tid);
    return r;
}

/* Every position holds a distinct record whose TID finds that very
 * position, with the bytes it was added with. */
static void check_consistent(const struct tidmap *m)
{
    for (size_t i = 0; i < m->n; i++) {
        const struct rec *r = tidmap_item(m, i);
        assert_ptr_equal(tidmap_find(m, r->tid), r);
        struct rec want = rec_of(r->tid);
        assert_memory_equal(r, &want, sizeof want);
    }
    assert_int_equal(pidmap_count(&m->index), m->n);
}

static void test_add_find_copy(void **state)
{
    (void)state;
    struct tidmap m;
    tidmap_init(&m, sizeof(struct rec));
    assert_null(tidmap_find(&m, 42));
    struct rec in = rec_of(42);
    struct rec *r = tidmap_add(&m, &in);
    assert_non_null(r);
    assert_ptr_not_equal(r, &in); /* a copy */
    in.start_time = 0;
    assert_int_equal(r->start_time, 42007);
    assert_string_equal(r->comm, "t42");
    assert_ptr_equal(tidmap_find(&m, 42), r);
    assert_null(tidmap_find(&m, 43));
    /* the record is the map's: a change through the pointer is kept */
    r->start_time = 5;
    assert_int_equal(((struct rec *)tidmap_find(&m, 42))->start_time, 5);
    tidmap_done(&m);
}

/* Removing from the middle moves the last record into the hole, and its
 * TID follows it; removing the last moves nothing; an absent TID is
 * nothing to remove. */
static void test_remove_keeps_dense(void **state)
{
    (void)state;
    struct tidmap m;
    tidmap_init(&m, sizeof(struct rec));
    for (pid_t tid = 10; tid < 15; tid++) {
        struct rec r = rec_of(tid);
        assert_non_null(tidmap_add(&m, &r));
    }
    assert_int_equal(m.n, 5);
    tidmap_remove(&m, 11); /* [10 14 12 13] */
    assert_int_equal(m.n, 4);
    assert_int_equal(((struct rec *)tidmap_item(&m, 1))->tid, 14);
    assert_null(tidmap_find(&m, 11));
    check_consistent(&m);
    tidmap_remove(&m, 13); /* the last: [10 14 12] */
    assert_int_equal(m.n, 3);
    assert_int_equal(((struct rec *)tidmap_item(&m, 2))->tid, 12);
    tidmap_remove(&m, 99);
    tidmap_remove(&m, 13);
    assert_int_equal(m.n, 3);
    check_consistent(&m);
    /* a removed TID can come back (a reused TID) */
    struct rec again = rec_of(11);
    assert_non_null(tidmap_add(&m, &again));
    assert_int_equal(m.n, 4);
    check_consistent(&m);
    tidmap_done(&m);
}

/* Growth from 64 records by doubling, with removals in between in an order
 * that is neither the order of adding nor its reverse. */
static void test_growth_and_churn(void **state)
{
    (void)state;
    struct tidmap m;
    tidmap_init(&m, sizeof(struct rec));
    for (pid_t tid = 1; tid <= 64; tid++) {
        struct rec r = rec_of(tid);
        assert_non_null(tidmap_add(&m, &r));
    }
    assert_int_equal(m.cap, 64);
    struct rec r = rec_of(65);
    assert_non_null(tidmap_add(&m, &r));
    assert_int_equal(m.cap, 128);
    check_consistent(&m);
    for (pid_t tid = 66; tid <= 1000; tid++) {
        r = rec_of(tid);
        assert_non_null(tidmap_add(&m, &r));
    }
    assert_int_equal(m.n, 1000);
    assert_int_equal(m.cap, 1024);
    check_consistent(&m);
    /* half of them, 7 apart modulo 1000 (7 and 1000 share no factor: no
     * TID twice), then check what is left */
    unsigned removed = 0;
    for (unsigned k = 0; k < 1000; k += 2) {
        pid_t tid = (pid_t)((k * 7) % 1000 + 1);
        tidmap_remove(&m, tid);
        removed++;
        assert_int_equal(m.n, 1000 - removed);
        assert_null(tidmap_find(&m, tid));
    }
    check_consistent(&m);
    for (unsigned k = 1; k < 1000; k += 2)
        assert_non_null(tidmap_find(&m, (pid_t)((k * 7) % 1000 + 1)));
    tidmap_done(&m);
    assert_int_equal(m.n, 0);
    assert_null(m.items);
    /* usable again after done */
    r = rec_of(3);
    assert_non_null(tidmap_add(&m, &r));
    check_consistent(&m);
    tidmap_done(&m);
}

/* A record of another size: the size given to init is what is copied and
 * what the positions step by. */
static void test_small_records(void **state)
{
    (void)state;
    struct tidmap m;
    tidmap_init(&m, sizeof(pid_t));
    for (pid_t tid = 100; tid < 300; tid++)
        assert_non_null(tidmap_add(&m, &tid));
    for (size_t i = 0; i < m.n; i++)
        assert_int_equal(*(pid_t *)tidmap_item(&m, i), (pid_t)(100 + i));
    tidmap_remove(&m, 100);
    assert_int_equal(*(pid_t *)tidmap_item(&m, 0), 299);
    assert_ptr_equal(tidmap_find(&m, 299), tidmap_item(&m, 0));
    tidmap_done(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_find_copy),
        cmocka_unit_test(test_remove_keeps_dense),
        cmocka_unit_test(test_growth_and_churn),
        cmocka_unit_test(test_small_records),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
