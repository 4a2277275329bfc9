/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Where the daemon sits under an exec storm: seat_choose. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "seat.h"

static void storm(struct seat *s, int cpu, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        seat_note_exec(s, (uint32_t)cpu);
}

static cpu_set_t own; /* the daemon's mask, as seat_tick reads it */

static void setup_seat(struct seat *s, int ncpus)
{
    memset(s, 0, sizeof *s);
    CPU_ZERO(&own);
    for (int c = 0; c < ncpus; c++)
        CPU_SET(c, &own);
}

static void test_moves_to_the_storm(void **state)
{
    static struct seat s;
    setup_seat(&s, 4);
    storm(&s, 2, SEAT_MIN_EXECS_PER_S / 4);
    assert_int_equal(seat_choose(&s, 0, 250, &own), 2);
    assert_int_equal(seat_choose(&s, 2, 250, &own), -1); /* there already */
}

/* a rate: 50 execs in a quarter of a second are enough, in a second not */
static void test_too_few_execs(void **state)
{
    static struct seat s;
    setup_seat(&s, 4);
    storm(&s, 2, SEAT_MIN_EXECS_PER_S / 4 - 1);
    assert_int_equal(seat_choose(&s, 0, 250, &own), -1);
    storm(&s, 2, 1);
    assert_int_equal(seat_choose(&s, 0, 250, &own), 2);
    assert_int_equal(seat_choose(&s, 0, 1000, &own), -1);
    assert_int_equal(seat_choose(&s, 0, 0, &own), -1);
}

static void test_needs_a_majority(void **state)
{
    static struct seat s;
    setup_seat(&s, 4);
    storm(&s, 1, 60);
    storm(&s, 2, 60);
    assert_int_equal(seat_choose(&s, 0, 250, &own), -1); /* half is not more than half */
    storm(&s, 1, 1);
    assert_int_equal(seat_choose(&s, 0, 250, &own), 1);
}

static void test_only_within_its_own_mask(void **state)
{
    static struct seat s;
    setup_seat(&s, 2);
    storm(&s, 3, 100);
    assert_int_equal(seat_choose(&s, 0, 250, &own), -1);
    /* a CPU beyond any mask is not counted at all */
    seat_note_exec(&s, CPU_SETSIZE);
    assert_int_equal(s.total, 100);
}

static void test_without_its_mask_stays(void **state)
{
    static struct seat s;
    setup_seat(&s, 4);
    storm(&s, 2, 100);
    assert_int_equal(seat_choose(&s, 0, 250, NULL), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_moves_to_the_storm),     cmocka_unit_test(test_too_few_execs),
        cmocka_unit_test(test_needs_a_majority),       cmocka_unit_test(test_only_within_its_own_mask),
        cmocka_unit_test(test_without_its_mask_stays),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
