/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Pause and resume in the engine (engine-pause.c): every change undone at
 * once, nothing packed while paused (ticks, a reload), packing again on
 * resume; pauses held by the administrator and by control connections, each
 * released on its own, a connection's when it closes. Against the engine
 * fixture's fake sysops, not a dry run, so masks really change. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>

#include "apply.h"
#include "engine-fixture.h"
#include "engine-internal.h"
#include "util.h"

static void expect_jitter_on(struct engine_fixture *fx, const char *cpus)
{
    const pid_t jitter[] = {fx->jit_a, fx->jit_b, fx->jit_b_thread};
    for (size_t i = 0; i < ELEMENTSOF(jitter); i++)
        assert_string_equal(efx_fmt(efx_fake_mask(fx, jitter[i])), cpus);
}

static void pack(struct engine_fixture *fx)
{
    efx_tick_with(fx, efx_busy_load);
    efx_tick_with(fx, efx_busy_load);
    assert_true(fx->e->plan->restricted);
    expect_jitter_on(fx, EFX_BUSY_PLAN);
    assert_int_equal(applier_count(fx->e->applier), 3);
}

static void test_pause_restores_and_resume_packs(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    char original[64];
    snprintf(original, sizeof original, "%s", efx_fmt(&fx->real_mask));
    efx_start(fx);
    pack(fx);

    assert_int_equal(engine_pause(e, 0), 3);
    assert_true(engine_paused(e));
    assert_int_equal(applier_count(e->applier), 0);
    expect_jitter_on(fx, original);
    unsigned calls = fx->fake.n_setaffinity;

    /* busy ticks and a reload: still nothing packed, classes still kept */
    efx_tick_with(fx, efx_busy_load);
    efx_tick_with(fx, efx_busy_load);
    char msg[256];
    assert_int_equal(engine_reload(e, msg, sizeof msg), 0);
    efx_tick_with(fx, efx_busy_load);
    assert_true(engine_paused(e));
    expect_jitter_on(fx, original);
    assert_int_equal(fx->fake.n_setaffinity, calls);
    assert_int_equal(task_table_find(e->tasks, fx->jit_a)->class, CLASS_JITTER);
    assert_int_equal(engine_pause(e, 0), 0); /* already paused */

    assert_int_equal(engine_resume(e, 0), 1);
    assert_false(engine_paused(e));
    /* packed again by the resume itself, under the plan made meanwhile */
    expect_jitter_on(fx, EFX_BUSY_PLAN);
    assert_int_equal(e->n_packed, 3);
    efx_tick_with(fx, efx_busy_load);
    expect_jitter_on(fx, EFX_BUSY_PLAN);
    assert_int_equal(e->pause.pauses, 1);
    assert_int_equal(engine_resume(e, 0), 0); /* not paused */
}

static void test_session_pauses(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    char original[64];
    snprintf(original, sizeof original, "%s", efx_fmt(&fx->real_mask));
    efx_start(fx);
    pack(fx);

    /* a connection's pause ends when it closes */
    assert_int_equal(engine_pause(e, 7), 3);
    expect_jitter_on(fx, original);
    engine_session_closed(e, 8); /* another connection: nothing */
    assert_true(engine_paused(e));
    engine_session_closed(e, 7);
    assert_false(engine_paused(e));
    efx_tick_with(fx, efx_busy_load);
    expect_jitter_on(fx, EFX_BUSY_PLAN);

    /* the administrator's pause outlives a session's, and the other way round */
    assert_int_equal(engine_pause(e, 9), 3);
    assert_int_equal(engine_pause(e, 0), 0);
    engine_session_closed(e, 9);
    assert_true(engine_paused(e));
    expect_jitter_on(fx, original);
    assert_int_equal(engine_pause(e, 10), 0);
    assert_int_equal(engine_resume(e, 0), 0); /* session 10 still holds it */
    assert_true(engine_paused(e));
    assert_int_equal(engine_resume(e, 10), 1);
    efx_tick_with(fx, efx_busy_load);
    expect_jitter_on(fx, EFX_BUSY_PLAN);

    /* bounded: one connection too many is refused, and nothing changes */
    for (uint64_t s = 100; s < 100 + ENGINE_PAUSE_SESSIONS_MAX; s++)
        assert_true(engine_pause(e, s) >= 0);
    assert_int_equal(engine_pause(e, 999), -EUSERS);
    for (uint64_t s = 100; s < 100 + ENGINE_PAUSE_SESSIONS_MAX; s++)
        engine_session_closed(e, s);
    assert_false(engine_paused(e));
    assert_int_equal(e->pause.pauses, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pause_restores_and_resume_packs, efx_setup_live, efx_teardown),
        cmocka_unit_test_setup_teardown(test_session_pauses, efx_setup_live, efx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
