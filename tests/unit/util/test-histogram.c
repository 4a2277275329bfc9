/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>

#include "histogram.h"

#define US 1000ull
#define MS 1000000ull

/* A sample on a bound belongs to that bound's bucket (le: less or equal),
 * one above it to the next; above the highest to the last. */
static void test_bucket_edges(void **state)
{
    (void)state;
    struct histogram h = {0};
    histogram_add(&h, 0);
    histogram_add(&h, 10 * US);
    histogram_add(&h, 10 * US + 1);
    histogram_add(&h, 20 * MS);
    histogram_add(&h, 20 * MS + 1);
    histogram_add(&h, 5000 * MS);
    assert_int_equal(h.bucket[0], 2);
    assert_int_equal(h.bucket[1], 1);
    assert_int_equal(h.bucket[10], 1); /* 20 ms */
    assert_int_equal(h.bucket[11], 1); /* 50 ms */
    assert_int_equal(h.bucket[HISTOGRAM_N_BOUNDS], 1);
    assert_int_equal(h.count, 6);
    assert_int_equal(h.sum_ns, 0 + 10 * US + 10 * US + 1 + 20 * MS + 20 * MS + 1 + 5000 * MS);
    assert_int_equal(h.max_ns, 5000 * MS);
    uint64_t total = 0;
    for (size_t i = 0; i <= HISTOGRAM_N_BOUNDS; i++)
        total += h.bucket[i];
    assert_int_equal(total, h.count);
}

static void test_bounds_ascend(void **state)
{
    (void)state;
    for (size_t i = 1; i < HISTOGRAM_N_BOUNDS; i++)
        assert_true(histogram_bounds_ns[i] > histogram_bounds_ns[i - 1]);
    assert_int_equal(histogram_bounds_ns[10], 20 * MS); /* the storm's "in time" */
}

static void test_count_le(void **state)
{
    (void)state;
    struct histogram h = {0};
    for (int i = 0; i < 99; i++)
        histogram_add(&h, 300 * US);
    histogram_add(&h, 30 * MS);
    assert_int_equal(histogram_count_le(&h, 20 * MS), 99);
    assert_int_equal(histogram_count_le(&h, 250 * US), 0);
    assert_int_equal(histogram_count_le(&h, 500 * US), 99);
    assert_int_equal(histogram_count_le(&h, 1000000 * MS), 100);
    /* between two bounds: the buckets below it only */
    assert_int_equal(histogram_count_le(&h, 499 * US), 0);
}

static void test_quantiles(void **state)
{
    (void)state;
    struct histogram h = {0};
    assert_int_equal(histogram_quantile_ns(&h, 0.5), 0);
    /* 100 samples evenly in (100 us, 250 us]: the median is interpolated
     * half-way through the bucket, p99 near its top. */
    for (int i = 0; i < 100; i++)
        histogram_add(&h, 240 * US);
    assert_int_equal(histogram_quantile_ns(&h, 0.5), 175 * US);
    /* never above the largest sample */
    assert_int_equal(histogram_quantile_ns(&h, 0.99), 240 * US);
    assert_int_equal(histogram_quantile_ns(&h, 1.0), 240 * US);

    /* one slow sample in a hundred: p50 stays low, p99 stays in the fast
     * bucket, p100 is the slow one */
    struct histogram g = {0};
    for (int i = 0; i < 99; i++)
        histogram_add(&g, 40 * US);
    histogram_add(&g, 3 * MS);
    assert_true(histogram_quantile_ns(&g, 0.5) <= 50 * US);
    assert_true(histogram_quantile_ns(&g, 0.99) <= 50 * US);
    assert_int_equal(histogram_quantile_ns(&g, 1.0), 3 * MS);
    /* two slow ones in a hundred: p99 in (2.5, 5] ms, capped at the max */
    histogram_add(&g, 3 * MS);
    uint64_t p99 = histogram_quantile_ns(&g, 0.99);
    assert_true(p99 > 2500 * US && p99 <= 3 * MS);
}

static void test_above_every_bound(void **state)
{
    (void)state;
    struct histogram h = {0};
    histogram_add(&h, 2000 * MS);
    histogram_add(&h, 4000 * MS);
    /* the last bucket runs from the highest bound to the largest sample */
    uint64_t p50 = histogram_quantile_ns(&h, 0.5);
    assert_true(p50 > 1000 * MS && p50 <= 4000 * MS);
    assert_int_equal(histogram_quantile_ns(&h, 1.0), 4000 * MS);
    assert_int_equal(histogram_count_le(&h, 1000 * MS), 0);
}

static void test_weighted(void **state)
{
    (void)state;
    struct histogram h = {0};
    /* a thread's mean over its wake-ups counts once per wake-up */
    histogram_add_n(&h, 100 * US, 200);
    histogram_add_n(&h, 3 * MS, 5);
    histogram_add_n(&h, 50 * MS, 0); /* no wake-ups: nothing */
    assert_int_equal(h.count, 205);
    assert_int_equal(h.sum_ns, 200 * 100 * US + 5 * 3 * MS);
    assert_int_equal(h.max_ns, 3 * MS);
    assert_int_equal(histogram_count_le(&h, 100 * US), 200);
    assert_int_equal(histogram_count_le(&h, 5 * MS), 205);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bucket_edges), cmocka_unit_test(test_bounds_ascend),     cmocka_unit_test(test_count_le),
        cmocka_unit_test(test_quantiles),    cmocka_unit_test(test_above_every_bound), cmocka_unit_test(test_weighted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
