/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The free-list table: ids from 1, entries zeroed when taken and given
 * back, freed ids reused last-freed first before the table grows, the free
 * chain kept inside the entries. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <string.h>

#include "freelist.h"

struct entry {
    uint64_t a;
    uint32_t link;
    uint8_t in_use;
};

static void test_ids_start_at_one(void **state)
{
    (void)state;
    struct freelist fl = FREELIST_INIT(struct entry, link, 4);
    assert_null(freelist_get(&fl, 0));
    assert_null(freelist_get(&fl, 1));
    assert_int_equal(freelist_memory_bytes(&fl), 0);
    uint32_t id = 0;
    struct entry *e = freelist_take(&fl, &id);
    assert_non_null(e);
    assert_int_equal(id, 1);
    assert_ptr_equal(freelist_get(&fl, 1), e);
    assert_null(freelist_get(&fl, 0));
    assert_null(freelist_get(&fl, 2)); /* never handed out */
    assert_int_equal(fl.cap, 4);
    assert_int_equal(freelist_memory_bytes(&fl), 4 * sizeof(struct entry));
    freelist_done(&fl);
}

/* Taken entries are zeroed, whatever they held before. */
static void test_taken_zeroed(void **state)
{
    (void)state;
    struct freelist fl = FREELIST_INIT(struct entry, link, 2);
    uint32_t a, b;
    struct entry *e = freelist_take(&fl, &a);
    e->a = 0xdeadbeef;
    e->in_use = 1;
    freelist_put(&fl, a);
    /* given back: zeroed but for the link (no other free entry: 0) */
    e = freelist_get(&fl, a);
    assert_int_equal(e->a, 0);
    assert_int_equal(e->in_use, 0);
    assert_int_equal(e->link, 0);
    e->a = 7; /* a stale write after the put */
    e = freelist_take(&fl, &b);
    assert_int_equal(b, a);
    assert_int_equal(e->a, 0);
    assert_int_equal(e->link, 0);
    freelist_done(&fl);
}

/* Freed entries are reused before the table grows, the last freed first;
 * the chain runs through the entries' link fields. */
static void test_reuse_before_growth(void **state)
{
    (void)state;
    struct freelist fl = FREELIST_INIT(struct entry, link, 8);
    uint32_t ids[5];
    for (int i = 0; i < 5; i++) {
        assert_non_null(freelist_take(&fl, &ids[i]));
        assert_int_equal(ids[i], i + 1);
    }
    freelist_put(&fl, ids[1]);
    freelist_put(&fl, ids[3]);
    assert_int_equal(fl.free, 4);
    assert_int_equal(((struct entry *)freelist_get(&fl, 4))->link, 2);
    assert_int_equal(((struct entry *)freelist_get(&fl, 2))->link, 0);
    uint32_t id;
    assert_non_null(freelist_take(&fl, &id));
    assert_int_equal(id, 4);
    assert_non_null(freelist_take(&fl, &id));
    assert_int_equal(id, 2);
    assert_int_equal(fl.free, 0);
    assert_non_null(freelist_take(&fl, &id));
    assert_int_equal(id, 6); /* none free: a new one */
    assert_int_equal(fl.n, 6);
    freelist_done(&fl);
}

/* Growth doubles from the first capacity and keeps what the entries hold;
 * done empties the table and keeps its layout. */
static void test_growth_keeps_entries(void **state)
{
    (void)state;
    struct freelist fl = FREELIST_INIT(struct entry, link, 4);
    for (uint32_t i = 1; i <= 100; i++) {
        uint32_t id;
        struct entry *e = freelist_take(&fl, &id);
        assert_non_null(e);
        assert_int_equal(id, i);
        e->a = i * 3;
        e->in_use = 1;
    }
    assert_int_equal(fl.n, 100);
    assert_int_equal(fl.cap, 128);
    for (uint32_t i = 1; i <= 100; i++)
        assert_int_equal(((struct entry *)freelist_get(&fl, i))->a, i * 3);
    freelist_done(&fl);
    assert_null(fl.items);
    assert_int_equal(fl.n, 0);
    assert_int_equal(fl.free, 0);
    uint32_t id;
    assert_non_null(freelist_take(&fl, &id));
    assert_int_equal(id, 1);
    assert_int_equal(fl.cap, 4);
    assert_int_equal(fl.size, sizeof(struct entry));
    freelist_done(&fl);
}

/* Putting back an id never handed out changes nothing. */
static void test_put_unknown(void **state)
{
    (void)state;
    struct freelist fl = FREELIST_INIT(struct entry, link, 4);
    uint32_t id;
    assert_non_null(freelist_take(&fl, &id));
    freelist_put(&fl, 0);
    freelist_put(&fl, 9);
    assert_int_equal(fl.free, 0);
    assert_non_null(freelist_take(&fl, &id));
    assert_int_equal(id, 2);
    freelist_done(&fl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ids_start_at_one),    cmocka_unit_test(test_taken_zeroed),
        cmocka_unit_test(test_reuse_before_growth), cmocka_unit_test(test_growth_keeps_entries),
        cmocka_unit_test(test_put_unknown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
