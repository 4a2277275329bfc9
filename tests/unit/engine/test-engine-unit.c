/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The jitter unit (engine-unit.c), on the fixture's fake sysops: every
 * change undone at once, and, once the unit has been touched, the CPU pins
 * of other tasks kept across the cpuset controller toggle that follows
 * (pins.h). The fixture has no systemd: the unit opt-in is inactive, so the
 * unit's AllowedCPUs= is never set, and a test marks the unit touched
 * itself. See engine-fixture.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sched.h>

#include "apply.h"
#include "engine-expect.h"
#include "engine-fixture.h"
#include "engine-internal.h"
#include "util.h"

static void expect_jitter_on(struct engine_fixture *fx, const char *cpus)
{
    const pid_t jitter[] = {fx->jit_a, fx->jit_b, fx->jit_b_thread};
    for (size_t i = 0; i < ELEMENTSOF(jitter); i++)
        assert_string_equal(efx_fmt(efx_fake_mask(fx, jitter[i])), cpus);
}

/* The unit untouched: the restore gives every mask back, pins nothing, and
 * following the plan does not touch the unit while the opt-in is off. */
static void test_restore_everything(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    efx_start(fx);
    pack(fx);
    expect_jitter_on(fx, EFX_BUSY_PLAN);

    engine_unit_follow_plan(e, &e->plan->mask);
    assert_false(e->unit.set);

    assert_int_equal(engine_restore_everything(e, false), 3);
    assert_int_equal(applier_count(e->applier), 0);
    expect_jitter_on(fx, efx_fmt(&fx->real_mask));
    assert_false(e->unit.set);
    assert_false(engine_unit_repairing(e));
    assert_int_equal(e->unit.pins.n, 0);
}

/* The unit touched: a task its user pinned to CPU 3 is recorded before the
 * restore; reset to every CPU by the toggle, it is pinned again at the
 * next tick's repair, once: widened again after that, its user did it. The
 * repairs end after their passes. */
static void test_pins_kept_across_toggle(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    efx_start(fx);
    pack(fx);
    cpu_set_t *crunch = (cpu_set_t *)efx_fake_mask(fx, fx->crunch);
    CPU_ZERO(crunch);
    CPU_SET(3, crunch);
    e->unit.set = true;

    assert_int_equal(engine_restore_everything(e, false), 3);
    assert_false(e->unit.set);
    expect_jitter_on(fx, efx_fmt(&fx->real_mask));
    assert_true(engine_unit_repairing(e));
    assert_string_equal(efx_fmt(crunch), "3");

    *crunch = fx->fake.online; /* the toggle's reset */
    unsigned sets = fx->fake.n_setaffinity;
    engine_unit_tick(e);
    assert_string_equal(efx_fmt(crunch), "3");
    assert_int_equal(fx->fake.n_setaffinity, sets + 1);

    *crunch = fx->fake.online; /* its user's choice now */
    engine_unit_tick(e);
    assert_string_equal(efx_fmt(crunch), efx_fmt(&fx->fake.online));
    for (int i = 0; i < 20 && engine_unit_repairing(e); i++)
        engine_unit_tick(e);
    assert_false(engine_unit_repairing(e));
    assert_int_equal(fx->fake.n_setaffinity, sets + 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_restore_everything, efx_setup_live, efx_teardown),
        cmocka_unit_test_setup_teardown(test_pins_kept_across_toggle, efx_setup_live, efx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
