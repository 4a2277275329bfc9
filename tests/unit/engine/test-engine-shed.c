/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The rename shed (engine-shed.c): when a flood of renames is left
 * unheard, for how long, and when the doubling ends. comm_shed_step is
 * pure; the shed on a real socket is integration-rename-flood's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine-shed.h"

/* Renames: a tick with more than COMM_FLOOD_PER_S leaves them unheard for
 * COMM_SHED_MIN_MS, twice as long each time a flood comes again, up to
 * COMM_SHED_MAX_MS; only that long without a flood ends the doubling, and a
 * window shorter than COMM_FLOOD_WINDOW_MS is not judged alone. */
static void test_comm_shed_step(void **state)
{
    struct comm_shed s = {0};
    uint64_t now = 1000, total = 0;
    assert_int_equal(comm_shed_step(&s, total, now), 0); /* the first: nothing to compare */
    now += 250, total += COMM_FLOOD_PER_S / 4;           /* at the bound: not a flood */
    assert_int_equal(comm_shed_step(&s, total, now), 0);
    now += 2, total += 2000; /* a reload's tick 2 ms on: not judged */
    assert_int_equal(comm_shed_step(&s, total, now), 0);
    now += 248; /* ...but counted with the next */
    assert_int_equal(comm_shed_step(&s, total, now), 1);
    assert_int_equal(s.period_ms, COMM_SHED_MIN_MS);
    now += COMM_SHED_MIN_MS;
    assert_int_equal(comm_shed_step(&s, total, now), -1);
    unsigned period = 2 * COMM_SHED_MIN_MS;
    for (int round = 0; round < 8; round++) {
        now += 250, total += 10; /* a quiet tick: the doubling goes on */
        assert_int_equal(comm_shed_step(&s, total, now), 0);
        now += 250, total += COMM_FLOOD_PER_S; /* 4x the bound */
        assert_int_equal(comm_shed_step(&s, total, now), 1);
        assert_true(s.on);
        assert_int_equal(s.period_ms, period);
        now += period - 1;
        assert_int_equal(comm_shed_step(&s, total, now), 0); /* none heard meanwhile */
        now += 1;
        assert_int_equal(comm_shed_step(&s, total, now), -1);
        assert_false(s.on);
        period = period * 2 > COMM_SHED_MAX_MS ? COMM_SHED_MAX_MS : period * 2;
    }
    assert_int_equal(s.sheds, 9);
    now += COMM_SHED_MAX_MS, total += 10; /* that long without a flood */
    assert_int_equal(comm_shed_step(&s, total, now), 0);
    assert_int_equal(s.period_ms, 0);
    now += 250, total += COMM_FLOOD_PER_S;
    assert_int_equal(comm_shed_step(&s, total, now), 1);
    assert_int_equal(s.period_ms, COMM_SHED_MIN_MS);
    struct comm_shed u = {.unsupported = true};
    assert_int_equal(comm_shed_step(&u, 0, 1000), 0);
    assert_int_equal(comm_shed_step(&u, 1000000, 1250), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_comm_shed_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
