/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The run-delay guard in the engine (engine-delay.c): packed jitter's
 * run-queue wait read from schedstat, spills, fallback and retry through the
 * whole engine. See engine-fixture.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "apply.h"
#include "engine-expect.h"
#include "engine-fixture.h"
#include "engine-internal.h"
#include "packer.h"
#include "util.h"

/* Each packed jitter thread woke 200 times since the last tick and waited
 * wait_per_wakeup_ns on a run queue each time; then a busy tick. */
struct delay_feed {
    uint64_t wait[3], slices[3];
};
static void feed_delay(struct engine_fixture *fx, struct delay_feed *f, uint64_t wait_per_wakeup_ns)
{
    const pid_t pids[] = {fx->jit_a, fx->jit_b, fx->jit_b}, tids[] = {fx->jit_a, fx->jit_b, fx->jit_b_thread};
    for (size_t i = 0; i < 3; i++) {
        f->slices[i] += 200;
        f->wait[i] += 200 * wait_per_wakeup_ns;
        /* 100 ns of run time per wake-up: it ran, and the jitter load
         * rounds to 0 */
        efx_set_schedstat(fx, pids[i], tids[i], 1000000 + 100 * f->slices[i], f->wait[i], 10 + f->slices[i]);
    }
    efx_tick_with(fx, efx_busy_load);
}

static bool jitter_masks_are(struct engine_fixture *fx, const char *cpus)
{
    const pid_t jitter[] = {fx->jit_a, fx->jit_b, fx->jit_b_thread};
    for (size_t i = 0; i < ELEMENTSOF(jitter); i++) {
        cpu_set_t now = mask_of(fx, jitter[i]);
        if (strcmp(efx_fmt(&now), cpus) != 0)
            return false;
    }
    return true;
}

/* Feed ticks at this delay until the plan's mask is want ("" for none), at
 * most max_ticks. */
static void feed_until(struct engine_fixture *fx, struct delay_feed *f, uint64_t ns, const char *want, int max_ticks)
{
    struct engine *e = fx->e;
    for (int i = 0; i < max_ticks; i++) {
        feed_delay(fx, f, ns);
        const char *now = e->plan->restricted ? efx_fmt(&e->plan->mask) : "";
        if (strcmp(now, want) == 0)
            return;
    }
    fail_msg("plan not \"%s\" after %d ticks at %llu ns per wake-up: %s (guard: %s); the log:\n%s", want, max_ticks,
             (unsigned long long)ns, e->plan->summary, e->delay.last, efx_log());
}

/* The run-delay guard through the whole engine: packed jitter that waits
 * 2 ms per wake-up (limit 1 ms) spills to the busy core with no room,
 * gets it back once the delay is low, and with no busy core left the plan
 * falls back, every mask restored; after the retry time it packs again.
 * Holds are 0 here: the decisions' order is what is tested. */
static void test_run_delay_guard(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    /* every tick reads every packed thread, asleep while packing or not:
     * the counts below are per tick */
    e->sampler.idle_backoff_ms = 0;
    efx_start(fx);
    pack(fx);
    e->delay.cfg.hold_ms = 60000;
    e->delay.cfg.shrink_hold_ms = 0;
    e->delay.cfg.fallback_retry_ms = 0;
    struct delay_feed f = {{0}, {0}};
    const char *spilled = "0-1,4,8-9,12"; /* + core 2 of package 0 (CPUs 1,9): busy, no room */

    /* measured, and held while the hold lasts */
    for (int i = 0; i < 3; i++)
        feed_delay(fx, &f, 2000000);
    uint64_t delay_ns, wakeups;
    assert_true(engine_delay_of(e, fx->jit_a, &delay_ns, &wakeups));
    assert_int_equal(delay_ns, 2000000);
    assert_int_equal(wakeups, 3 * 200); /* the base was read by pack()'s last tick */
    assert_int_equal(e->delay.delay_ns, 2000000);
    assert_int_equal(e->delay.wakeups, 3 * 600);
    assert_non_null(strstr(e->delay.last, "holding: jitter waited 2.0 ms per wake-up, above 1.0 ms"));
    assert_int_equal(e->delay.hist.count, 3 * 600);
    assert_int_equal(e->delay.hist.max_ns, 2000000);
    assert_string_equal(efx_fmt(&e->plan->mask), EFX_BUSY_PLAN);

    e->delay.cfg.hold_ms = 0;
    feed_until(fx, &f, 2000000, spilled, 6);
    expect_log("run delay: spilled to core ");
    expect_log("jitter waited 2.0 ms per wake-up");
    assert_non_null(strstr(e->plan->summary, "(spilled to core "));
    assert_true(jitter_masks_are(fx, spilled));
    assert_int_equal(e->delay.guard.spills_total, 1);

    feed_until(fx, &f, 100000, EFX_BUSY_PLAN, 6);
    expect_log("run delay: released core ");
    assert_true(jitter_masks_are(fx, EFX_BUSY_PLAN));

    /* high again: spill, and then no busy core is left */
    efx_log_reset();
    feed_until(fx, &f, 2000000, spilled, 6);
    feed_until(fx, &f, 2000000, "", 6);
    assert_int_equal(e->plan->reason, PACKER_REASON_RUN_DELAY);
    expect_log("run delay: fell back: jitter waited 2.0 ms per wake-up and no busy core is left");
    if (!strstr(e->plan->summary, "fallback: jitter waited too long to run (fell back: "))
        fail_msg("summary: %s", e->plan->summary);
    assert_true(jitter_masks_are(fx, efx_fmt(&fx->real_mask)));
    assert_int_equal(e->n_packed, 0);
    assert_int_equal(e->delay.guard.fallbacks_total, 1);

    /* the retry: packing again, delay measured afresh */
    feed_until(fx, &f, 100000, EFX_BUSY_PLAN, 4);
    expect_log("run delay: packing again after ");
    assert_true(jitter_masks_are(fx, EFX_BUSY_PLAN));

    /* off: the guard forgets and decides nothing */
    e->delay.cfg.max_run_delay_ns = 0;
    feed_delay(fx, &f, 5000000);
    feed_delay(fx, &f, 5000000);
    assert_string_equal(efx_fmt(&e->plan->mask), EFX_BUSY_PLAN);
    assert_false(engine_delay_of(e, fx->jit_a, &delay_ns, &wakeups));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_run_delay_guard, efx_setup_live, efx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
