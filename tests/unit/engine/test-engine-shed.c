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

/* A flood is shed as it comes: renames at COMM_FLOOD_PER_S never start a
 * shed, a burst of COMM_FLOOD_BURST over that rate does at once (not at
 * the next tick), and the doubling is the tick's. */
static void test_comm_shed_event(void **state)
{
    struct comm_shed s = {0};
    uint64_t each = 1000000000ull / COMM_FLOOD_PER_S, now = 5000000000ull;
    for (unsigned i = 0; i < 10 * COMM_FLOOD_PER_S; i++, now += each) /* ten seconds at the bound */
        assert_false(comm_shed_event(&s, now));
    /* then a burst: the bucket holds COMM_FLOOD_BURST of them */
    unsigned n = 0;
    while (!comm_shed_event(&s, now) && n < 10 * COMM_FLOOD_BURST)
        n++, now += 1000; /* a thousand a millisecond */
    assert_in_range(n, COMM_FLOOD_BURST, COMM_FLOOD_BURST + COMM_FLOOD_BURST / 10);
    assert_true(s.on);
    assert_int_equal(s.period_ms, COMM_SHED_MIN_MS);
    assert_int_equal(s.sheds, 1);
    assert_false(comm_shed_event(&s, now)); /* on already: nothing more to do */
    /* the tick ends it, and hears them again */
    uint64_t ms = now / 1000000 + COMM_SHED_MIN_MS;
    assert_int_equal(comm_shed_step(&s, 0, ms), -1);
    /* the flood again: shed within a burst, twice as long */
    now = ms * 1000000;
    for (n = 0; !comm_shed_event(&s, now) && n < 10 * COMM_FLOOD_BURST; n++)
        now += 1000;
    assert_true(n <= COMM_FLOOD_BURST + COMM_FLOOD_BURST / 10);
    assert_int_equal(s.period_ms, 2 * COMM_SHED_MIN_MS);
    /* COMM_SHED_MAX_MS without a flood: the doubling starts over */
    ms = now / 1000000 + s.period_ms;
    assert_int_equal(comm_shed_step(&s, 0, ms), -1);
    now = (ms + COMM_SHED_MAX_MS) * 1000000;
    for (n = 0; !comm_shed_event(&s, now) && n < 10 * COMM_FLOOD_BURST; n++)
        now += 1000;
    assert_int_equal(s.period_ms, COMM_SHED_MIN_MS);
    struct comm_shed u = {.unsupported = true};
    for (n = 0; n < 10 * COMM_FLOOD_BURST; n++)
        assert_false(comm_shed_event(&u, now + n));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_comm_shed_step),
        cmocka_unit_test(test_comm_shed_event),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
