/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Idle cores kept out of the deep idle states, wired through the engine
 * (engine-idle.c): on one chip of two single-thread cores (vm-2cpu) with
 * cpuidle files in the fixture's tree, CPU 0 busy and CPU 1 idle, the
 * engine measures every tick but keeps for the benefit model only what it
 * measured over ticks with the jitter unconfined (paused here: the
 * thresholds pack it otherwise), and says what it measures in the status
 * reply. It keeps what it measured with the jitter isolated too, for the
 * load the isolation was chosen under, and follows a trial of isolation
 * from the plan that starts it (through the packer and the applier, with a
 * frequency table) to the one that keeps or leaves it. Without a deep
 * state (a virtual machine's POLL and haltpoll) nothing is measured, and
 * the daemon says so. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "engine-fixture.h"
#include "engine-internal.h"
#include "report.h"

static const unsigned load[EFX_N_CPUS] = {70, 0};

static void put_state(struct engine_fixture *fx, int cpu, int k, const char *file, const char *text)
{
    char rel[128];
    snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpu%d/cpuidle/state%d/%s", cpu, k, file);
    efx_put(fx, rel, text);
}

static void put_state_u64(struct engine_fixture *fx, int cpu, int k, const char *file, uint64_t v)
{
    char text[32];
    snprintf(text, sizeof text, "%llu\n", (unsigned long long)v);
    put_state(fx, cpu, k, file, text);
}

/* POLL and C6 (82 us) on both CPUs; C6's counters as given. */
static void put_c6(struct engine_fixture *fx, const uint64_t time_us[2], const uint64_t usage[2])
{
    for (int cpu = 0; cpu < 2; cpu++) {
        put_state(fx, cpu, 0, "name", "POLL\n");
        put_state(fx, cpu, 0, "latency", "0\n");
        put_state(fx, cpu, 1, "name", "C6\n");
        put_state(fx, cpu, 1, "latency", "82\n");
        put_state_u64(fx, cpu, 1, "time", time_us[cpu]);
        put_state_u64(fx, cpu, 1, "usage", usage[cpu]);
    }
}

static struct json_object *deep_idle(struct json_object *st)
{
    struct json_object *plan, *b, *d;
    assert_true(json_object_object_get_ex(st, "plan", &plan));
    assert_true(json_object_object_get_ex(plan, "benefit", &b));
    assert_true(json_object_object_get_ex(b, "deep_idle", &d));
    return d;
}

static int64_t field_int(struct json_object *o, const char *key)
{
    struct json_object *v;
    assert_true(json_object_object_get_ex(o, key, &v));
    return v ? json_object_get_int64(v) : -1;
}

static unsigned kept_wakes(const struct engine_idle *d) { return d->fig.none.measured ? d->fig.none.wakes_per_s : 0; }

/* CPU 1 stays out of C6 all along (its residency never moves); the ticks
 * tell apart by its wake-ups: C6 entries while the jitter is packed, and
 * while it is free, but only the latter are kept. */
static void test_kept_only_unconfined(void **state)
{
    struct engine_fixture *fx = *state;
    const struct engine_idle *d = &fx->e->idle;
    uint64_t time_us[2] = {0, 0}, usage[2] = {0, 0};
    put_c6(fx, time_us, usage);
    efx_start(fx);
    assert_true(d->on);
    assert_non_null(strstr(efx_log(), "benefit: idle cores' deep idle states measured from cpuidle, deep from 50 us "
                                      "(cpu0: POLL 0us, C6 82us) on 2 CPUs"));

    /* the thresholds pack the jitter on CPU 0; whatever the first ticks
     * kept (the daemon starts unrestricted) had no wake-up */
    for (int i = 0; i < 5 && !fx->e->plan->restricted; i++)
        efx_tick_with(fx, load);
    assert_true(fx->e->plan->restricted);
    efx_tick_with(fx, load);
    assert_int_equal(kept_wakes(d), 0);

    /* packed: CPU 1 enters C6 now and then, not read (nothing would be
     * kept), not kept */
    for (int i = 0; i < 3; i++) {
        usage[1] += 10;
        put_c6(fx, time_us, usage);
        efx_tick_with(fx, load);
        assert_false(d->last.measured);
        assert_int_equal(d->meter.prev_us, 0);
        assert_int_equal(kept_wakes(d), 0);
    }
    struct json_object *st = report_status(fx->e);
    assert_true(field_int(deep_idle(st), "wakes_per_s") <= 0);
    json_object_put(st);

    /* paused: the jitter is free. The tick whose interval began packed
     * reads nothing, the next reads the base, the one after is kept. */
    assert_true(engine_pause(fx->e, 0) >= 0);
    for (int i = 0; i < 2; i++) {
        usage[1] += 10;
        put_c6(fx, time_us, usage);
        efx_tick_with(fx, load);
        assert_false(d->last.measured);
        assert_int_equal(kept_wakes(d), 0);
    }
    usage[1] += 10;
    put_c6(fx, time_us, usage);
    efx_tick_with(fx, load);
    assert_true(d->fig.none.measured);
    assert_int_equal(d->fig.none.woken_milli, 1000);
    unsigned wakes = kept_wakes(d);
    assert_true(wakes > 0);
    assert_true(efx_metric(fx, "turbosched_idle_cores_woken_ratio", NULL, NULL) == 1.0);
    assert_true(efx_metric(fx, "turbosched_idle_core_wakeups_per_second", NULL, NULL) == wakes);

    /* packed again: not read, the kept figures stay */
    assert_int_equal(engine_resume(fx->e, 0), 1);
    for (int i = 0; i < 3; i++)
        efx_tick_with(fx, load);
    assert_true(fx->e->plan->restricted);
    assert_false(d->last.measured);
    assert_int_equal(kept_wakes(d), wakes);
    st = report_status(fx->e);
    assert_int_equal(field_int(deep_idle(st), "wakes_per_s"), wakes);
    assert_int_equal(field_int(deep_idle(st), "woken_milli"), 1000);
    json_object_put(st);
}

/* The plan as the packer would leave it: isolation on CPU 1 (or not),
 * chosen under the load sig, a trial or not. */
static void plan_isolated(struct engine *e, bool isolated, bool trial, enum benefit_plan benefit, uint64_t sig,
                          uint64_t now)
{
    e->pstate.restricted = isolated;
    e->pstate.reason = isolated ? PACKER_REASON_ISOLATED : PACKER_REASON_NONE;
    e->plan->benefit = benefit;
    e->plan->benefit_trial = trial;
    e->plan->benefit_trial_from = BENEFIT_PACK;
    e->plan->benefit_iso_sig = sig;
    snprintf(e->plan->benefit_explain, sizeof e->plan->benefit_explain, "isolate on 1 core: a trial");
    engine_idle_planned(e, now);
}

/* One more interval of CPU 1 out of C6, woken `wakes` times. */
static const struct packer_idle *measure_after(struct engine_fixture *fx, uint64_t usage[2], unsigned wakes,
                                               uint64_t now)
{
    static const uint64_t time_us[2] = {0, 0};
    usage[1] += wakes;
    put_c6(fx, time_us, usage);
    nanosleep(&(struct timespec){.tv_nsec = 5 * 1000 * 1000}, NULL); /* an interval to measure over */
    return engine_idle_measure(fx->e, now);
}

/* Isolation is measured while it is applied, and kept for the load it was
 * chosen under; a trial of it is followed from the plan that starts it to
 * the one that ends it, and not started again for a minute. */
static void test_isolated_kept_and_trial(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    const struct engine_idle *d = &e->idle;
    uint64_t time_us[2] = {0, 0}, usage[2] = {0, 0};
    put_c6(fx, time_us, usage);
    efx_start(fx);
    for (int i = 0; i < 5 && !e->plan->restricted; i++)
        efx_tick_with(fx, load);
    assert_true(e->plan->restricted && e->pstate.reason != PACKER_REASON_ISOLATED);
    const uint64_t t0 = 1000000;
    assert_true(engine_idle_measure(e, t0)->trial_ok);

    /* a trial starts: said, and followed */
    efx_log_reset();
    plan_isolated(e, true, true, BENEFIT_ISOLATE, 77, t0);
    assert_true(d->fig.in_trial);
    assert_int_equal(d->trials, 1);
    assert_int_equal(d->fig.trial_from, BENEFIT_PACK);
    assert_non_null(strstr(efx_log(), "benefit: isolate on 1 core: a trial"));
    /* the first interval reads the base, the next is kept for load 77 */
    const struct packer_idle *fig = measure_after(fx, usage, 0, t0 + 250);
    assert_false(fig->iso.measured);
    assert_false(fig->trial_ok);
    fig = measure_after(fx, usage, 10, t0 + 500);
    assert_true(fig->iso.measured);
    assert_int_equal(fig->iso_sig, 77);
    assert_int_equal(fig->iso.woken_milli, 1000);
    assert_true(fig->iso.wakes_per_s > 0);
    assert_false(fig->none.measured); /* packed before: nothing for none */
    struct json_object *st = report_status(e), *iso, *v;
    assert_true(json_object_object_get_ex(deep_idle(st), "isolated", &iso));
    assert_int_equal(field_int(iso, "woken_milli"), 1000);
    assert_true(json_object_object_get_ex(iso, "trial", &v) && json_object_get_boolean(v));
    json_object_put(st);

    /* still the trial while the choice to leave it waits for the packer,
     * and while a choice to stay comes before the plan could change
     * anyway; one at or after that ends it */
    e->cfg->policy.min_change_ms = 2000; /* the fixture's 0 would end it at once */
    const uint64_t settled = t0 + 2000;
    plan_isolated(e, true, false, BENEFIT_PACK, 77, t0 + 500);
    assert_true(d->fig.in_trial);
    plan_isolated(e, true, false, BENEFIT_ISOLATE, 77, t0 + 750);
    assert_true(d->fig.in_trial);
    plan_isolated(e, true, false, BENEFIT_ISOLATE, 77, settled - 1);
    assert_true(d->fig.in_trial);
    plan_isolated(e, true, false, BENEFIT_ISOLATE, 77, settled);
    assert_false(d->fig.in_trial);

    /* another load: what was kept is not for it, measured afresh (no
     * wake-up now: not smoothed with the last figure) */
    plan_isolated(e, true, false, BENEFIT_ISOLATE, 78, settled + 250);
    fig = measure_after(fx, usage, 0, settled + 500);
    assert_true(fig->iso.measured);
    assert_int_equal(fig->iso_sig, 78);
    assert_int_equal(fig->iso.wakes_per_s, 0);

    /* a second trial, then packed: the trial is over, nothing is read,
     * and a third may start only a minute after the second did */
    plan_isolated(e, true, true, BENEFIT_ISOLATE, 78, settled + 500);
    assert_true(d->fig.in_trial);
    e->pstate.reason = PACKER_REASON_PACKED;
    engine_idle_planned(e, settled + 750);
    assert_false(d->fig.in_trial);
    assert_int_equal(d->trial_at_ms, settled + 500);
    assert_int_equal(d->trials, 2);
    assert_true(efx_metric(fx, "turbosched_benefit_isolation_trials_total", NULL, NULL) == 2);
    fig = measure_after(fx, usage, 10, settled + 500 + BENEFIT_TRIAL_AGAIN_MS - 1);
    assert_false(d->last.measured);
    assert_false(fig->trial_ok);
    assert_true(fig->iso.measured && fig->iso_sig == 78); /* kept */
    assert_true(engine_idle_measure(e, settled + 500 + BENEFIT_TRIAL_AGAIN_MS)->trial_ok);
}

/* A trial through the engine, packer and applier: [capacity] gives a
 * steep table (4.0 GHz with one active core, 3.0 with two) and a 500 us
 * re-evaluation; CPU 0 busy, CPU 1 in C6 but for 20 wake-ups a second,
 * and three jitter threads using 0.2% of a CPU each. With one idle core,
 * two of the three run beside the busy thread unconfined; on CPU 1 alone
 * they would cost nothing, and would pay if they woke it together, but
 * not if each woke it (three times the wake-ups): a trial. */
struct trial_rig {
    uint64_t time_us[2], usage[2], run_ns, last_ns;
    double wakes;
    unsigned tick;
};

static uint64_t mono_ns(void)
{
    struct timespec ts;
    assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &ts), 0);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One tick: since the last, CPU 1 woken `rate` times a second, never
 * counted out of C6 (its residency runs ahead of the clock), and each
 * jitter thread 2 ms of CPU a second, whatever the pace of the ticks. */
static void trial_tick(struct engine_fixture *fx, struct trial_rig *r, unsigned rate)
{
    const pid_t pids[] = {fx->jit_a, fx->jit_b, fx->jit_b}, tids[] = {fx->jit_a, fx->jit_b, fx->jit_b_thread};
    uint64_t now = mono_ns(), dt = r->last_ns ? now - r->last_ns : 30000000u;
    r->last_ns = now;
    r->wakes += (double)rate * (double)dt / 1e9;
    r->usage[1] = (uint64_t)r->wakes;
    r->time_us[1] += 1000000;
    put_c6(fx, r->time_us, r->usage);
    r->run_ns += dt / 500;
    r->tick++;
    for (int k = 0; k < 3; k++)
        efx_set_schedstat(fx, pids[k], tids[k], r->run_ns, 0, r->tick);
    efx_tick_with(fx, load);
}

static void expect_jitter_on(struct engine_fixture *fx, const char *cpus)
{
    const pid_t tids[] = {fx->jit_a, fx->jit_b, fx->jit_b_thread};
    for (int k = 0; k < 3; k++)
        assert_string_equal(efx_fmt(efx_fake_mask(fx, tids[k])), cpus);
}

/* Ticks (at most 10) until the plan's explanation holds `what`, or with
 * what NULL until the trial is over. */
static void tick_until(struct engine_fixture *fx, struct trial_rig *r, unsigned rate, const char *what)
{
    for (int i = 0; i < 10; i++) {
        trial_tick(fx, r, rate);
        if (what ? strstr(fx->e->plan->benefit_explain, what) != NULL : !fx->e->idle.fig.in_trial)
            return;
    }
    const struct packer_idle *fig = &fx->e->idle.fig;
    fail_msg("no \"%s\" after 10 ticks: %s (jitter load %u milli; CPU 1 with the jitter free: %u milli awake, "
             "%u wake-ups/s)",
             what ? what : "trial over", fx->e->plan->benefit_explain, fx->e->sampler.jitter_load_milli,
             fig->none.woken_milli, fig->none.wakes_per_s);
}

static void trial_start(struct engine_fixture *fx, struct trial_rig *r)
{
    struct engine *e = fx->e;
    put_c6(fx, r->time_us, r->usage);
    efx_write_config(fx, true, "[capacity]\nactive1 = 4000\nactive2 = 3000\nfrequency_reevaluation = 500us\n");
    efx_start(fx);
    assert_int_equal(engine_reload(e, NULL, 0), 0);
    efx_log_reset();
    tick_until(fx, r, 20, "a trial, ");
    assert_true(e->plan->restricted);
    assert_int_equal(e->plan->reason, PACKER_REASON_ISOLATED);
    expect_jitter_on(fx, "1");
    assert_true(e->idle.fig.in_trial);
    assert_int_equal(e->idle.fig.trial_from, BENEFIT_NONE);
    assert_non_null(strstr(efx_log(), "benefit: isolate on 1 core: a trial, "));
    assert_true(efx_metric(fx, "turbosched_benefit_isolation_trials_total", NULL, NULL) == 1);
}

/* A trial from its start to its end, with CPU 1 woken `rate` times a
 * second while isolated: measured, and the plan the trial ended in. */
static void trial_run(struct engine_fixture *fx, struct trial_rig *r, unsigned rate, enum benefit_plan want)
{
    struct engine *e = fx->e;
    const struct packer_idle *fig = &e->idle.fig;
    trial_start(fx, r);
    tick_until(fx, r, rate, NULL);
    assert_true(fig->iso.measured);
    if (e->plan->benefit != want)
        fail_msg("%s (jitter load %u; isolated %u milli awake, %u wake-ups/s; free %u, %u)", e->plan->benefit_explain,
                 e->sampler.jitter_load_milli, fig->iso.woken_milli, fig->iso.wakes_per_s, fig->none.woken_milli,
                 fig->none.wakes_per_s);
}

/* Isolated, CPU 1 is woken a quarter as often as before: the threads wake
 * it together. Measured, isolation is kept, and the trial is over. */
static void test_trial_kept(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    struct trial_rig r = {0};
    trial_run(fx, &r, 5, BENEFIT_ISOLATE);
    assert_int_equal(e->plan->reason, PACKER_REASON_ISOLATED);
    expect_jitter_on(fx, "1");
    trial_tick(fx, &r, 5);
    assert_false(e->idle.fig.in_trial);
    assert_int_equal(e->plan->reason, PACKER_REASON_ISOLATED);
    assert_non_null(strstr(e->plan->benefit_explain, "isolate on 1 core: +"));
    expect_jitter_on(fx, "1");
}

/* Isolated, CPU 1 is woken 2,000 times a second: measured worse than no
 * restriction, the trial gives way to it, and is not tried again. */
static void test_trial_left(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    struct trial_rig r = {0};
    trial_run(fx, &r, 2000, BENEFIT_NONE);
    assert_false(e->plan->restricted);
    expect_jitter_on(fx, "0-1");
    for (int i = 0; i < 5; i++) {
        trial_tick(fx, &r, 20);
        assert_false(e->plan->restricted);
        assert_false(e->idle.fig.in_trial);
    }
    assert_true(efx_metric(fx, "turbosched_benefit_isolation_trials_total", NULL, NULL) == 1);
}

/* POLL and haltpoll only, as on the development VM. */
static void test_vm_not_measured(void **state)
{
    struct engine_fixture *fx = *state;
    for (int cpu = 0; cpu < 2; cpu++) {
        put_state(fx, cpu, 0, "name", "POLL\n");
        put_state(fx, cpu, 0, "latency", "0\n");
        put_state(fx, cpu, 1, "name", "haltpoll idle\n");
        put_state(fx, cpu, 1, "latency", "1\n");
    }
    efx_start(fx);
    assert_false(fx->e->idle.on);
    assert_true(efx_metric(fx, "turbosched_idle_cores_woken_ratio", NULL, NULL) == -1); /* no family */
    assert_true(efx_metric(fx, "turbosched_benefit_isolation_trials_total", NULL, NULL) == -1);
    assert_non_null(strstr(efx_log(), "benefit: deep idle states not measured (no enabled idle state with an exit "
                                      "latency of 50 us or more (cpu0: POLL 0us, haltpoll idle 1us)): one woken idle "
                                      "core per jitter task assumed"));
    efx_tick_with(fx, load);
    efx_tick_with(fx, load);
    struct json_object *st = report_status(fx->e), *m;
    struct json_object *di = deep_idle(st);
    assert_true(json_object_object_get_ex(di, "measured", &m));
    assert_false(json_object_get_boolean(m));
    json_object_put(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_kept_only_unconfined, efx_setup_2cpu, efx_teardown),
        cmocka_unit_test_setup_teardown(test_isolated_kept_and_trial, efx_setup_2cpu, efx_teardown),
        cmocka_unit_test_setup_teardown(test_trial_kept, efx_setup_2cpu, efx_teardown),
        cmocka_unit_test_setup_teardown(test_trial_left, efx_setup_2cpu, efx_teardown),
        cmocka_unit_test_setup_teardown(test_vm_not_measured, efx_setup_2cpu, efx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
