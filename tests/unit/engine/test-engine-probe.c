/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Pack only when it pays, learned by probes (engine-probe.c with
 * packer-benefit.c): without a frequency table, where the busy cores'
 * frequency can be read (here cpufreq files in the fixture's tree), the
 * engine measures it every tick, steps probe_step() and applies the plan it
 * returns; without a source it keeps the thresholds' plan and says what it
 * looked for. On one chip of two single-thread cores (vm-2cpu): CPU 0
 * busy, CPU 1 idle, three jitter threads; the fake sysops keeps masks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "engine-fixture.h"
#include "engine-internal.h"
#include "report.h"
#include "util.h"

/* CPU 0 70% busy, CPU 1 idle */
static const unsigned load[EFX_N_CPUS] = {70, 0};
static const unsigned both_busy[EFX_N_CPUS] = {70, 70};

#define CUR_FREQ "sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq"

static void set_mhz(struct engine_fixture *fx, unsigned mhz)
{
    char rel[96], text[32];
    snprintf(text, sizeof text, "%u000\n", mhz);
    for (int cpu = 0; cpu < 2; cpu++) {
        snprintf(rel, sizeof rel, CUR_FREQ, cpu);
        efx_put(fx, rel, text);
    }
}

static void expect_jitter_on(struct engine_fixture *fx, const char *cpus)
{
    const pid_t jitter[] = {fx->jit_a, fx->jit_b, fx->jit_b_thread};
    for (size_t i = 0; i < ELEMENTSOF(jitter); i++)
        assert_string_equal(efx_fmt(efx_fake_mask(fx, jitter[i])), cpus);
}

/* The plan the engine applied is the probe's: none leaves jitter free,
 * isolate confines it to the idle CPU 1. */
static void expect_applied(struct engine_fixture *fx)
{
    const struct packer_plan *pl = fx->e->plan;
    assert_true(pl->benefit_probed);
    if (pl->benefit == BENEFIT_ISOLATE) {
        assert_true(pl->restricted);
        assert_int_equal(pl->reason, PACKER_REASON_ISOLATED);
        expect_jitter_on(fx, "1");
    } else {
        assert_int_equal(pl->benefit, BENEFIT_NONE);
        assert_false(pl->restricted);
        expect_jitter_on(fx, "0-1");
    }
}

/* The chip, faked: the busy core runs at 3.3 GHz while jitter is isolated
 * and at 3.0 GHz otherwise (a made-up response, steep enough to beat the
 * probe's margin), read by the engine at the next tick. Ticks until the
 * probe has learned round `round`, checking at every tick that the plan
 * applied is the one probe_step() returned. */
static void tick_until_round(struct engine_fixture *fx, const unsigned *util, unsigned round)
{
    for (unsigned i = 0; i < 20; i++) {
        efx_tick_with(fx, util);
        if (fx->e->plan->benefit_probed)
            expect_applied(fx);
        set_mhz(fx, fx->e->plan->reason == PACKER_REASON_ISOLATED ? 3300 : 3000);
        if (fx->e->probe.state.phase == PROBE_LEARNED && fx->e->probe.state.rounds == round)
            return;
    }
    fail_msg("round %u not learned after 20 ticks: %s", round, fx->e->probe.state.explain);
}

static const char *probe_field(struct engine_fixture *fx, const char *key, char *buf, size_t size)
{
    struct json_object *st = report_status(fx->e), *plan, *b, *p, *v;
    assert_true(json_object_object_get_ex(st, "plan", &plan));
    assert_true(json_object_object_get_ex(plan, "benefit", &b));
    assert_true(json_object_object_get_ex(b, "probe", &p));
    assert_true(json_object_object_get_ex(p, key, &v));
    snprintf(buf, size, "%s", json_object_get_string(v));
    json_object_put(st);
    return buf;
}

static void test_probe_learns_and_applies(void **state)
{
    struct engine_fixture *fx = *state;
    char buf[512];
    set_mhz(fx, 3000);
    efx_start(fx);
    assert_non_null(strstr(efx_log(), "benefit: no frequency table ([capacity] active<N> keys; turbo ratios: "));
    assert_non_null(strstr(efx_log(), "learning which plan pays by probes of the busy cores' frequency "
                                      "(cpufreq scaling_cur_freq of the busy CPUs)"));
    assert_true(fx->e->probe.on);
    /* a long hold: the probe's plans must not wait for it */
    efx_write_config(fx, true, "[packing]\nhold_time = 1min\nmin_change_interval = 1min\n");
    assert_int_equal(engine_reload(fx->e, NULL, 0), 0);
    efx_log_reset();

    tick_until_round(fx, load, 1);
    const struct probe_state *ps = &fx->e->probe.state;
    assert_int_equal(ps->learned, BENEFIT_ISOLATE);
    assert_int_equal(ps->rounds, 1);
    assert_int_equal(fx->e->plan->benefit, BENEFIT_ISOLATE);
    expect_jitter_on(fx, "1");
    assert_non_null(strstr(efx_log(), "benefit probe: isolate after round 1: probed: isolate +10.0%"));
    assert_string_equal(probe_field(fx, "state", buf, sizeof buf), "learned");
    assert_string_equal(probe_field(fx, "source", buf, sizeof buf), "cpufreq");
    assert_string_equal(probe_field(fx, "rounds", buf, sizeof buf), "1");
    assert_non_null(strstr(probe_field(fx, "explain", buf, sizeof buf), "probed: isolate +10.0%"));
    assert_non_null(strstr(probe_field(fx, "last_change", buf, sizeof buf), "isolate after round 1"));
    /* and in the metrics */
    assert_true(efx_metric(fx, "turbosched_probe_rounds_total", "outcome", "completed") == 1);
    assert_true(efx_metric(fx, "turbosched_probe_learned", "plan", "isolate") == 1);
    assert_true(efx_metric(fx, "turbosched_probe_learned", "plan", "pack") == 0);
    assert_true(efx_metric(fx, "turbosched_benefit_plan", "plan", "isolate") == 1);
    /* it holds while the load does */
    efx_tick_with(fx, load);
    set_mhz(fx, 3300);
    efx_tick_with(fx, load);
    assert_int_equal(fx->e->plan->benefit, BENEFIT_ISOLATE);
    expect_jitter_on(fx, "1");

    /* both cores busy: a new load, a new round; nothing is idle to
     * isolate on, so it learns none and jitter is free again at once */
    efx_log_reset();
    tick_until_round(fx, both_busy, 2);
    assert_int_equal(ps->learned, BENEFIT_NONE);
    assert_int_equal(ps->rounds, 2);
    expect_jitter_on(fx, "0-1");
    assert_non_null(strstr(efx_log(), "benefit probe: isolate -> none after round 2: probed: none pays"));

    /* the frequency stops reading: the thresholds' plan, said once */
    for (int cpu = 0; cpu < 2; cpu++) {
        char rel[96];
        snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpu%d/cpufreq", cpu);
        char cmd[2 * PATH_MAX];
        snprintf(cmd, sizeof cmd, "rm -r '%s/%s'", fx->root, rel);
        assert_int_equal(system(cmd), 0);
    }
    efx_log_reset();
    efx_tick_with(fx, load);
    efx_tick_with(fx, load);
    assert_int_equal(fx->e->plan->benefit, BENEFIT_UNKNOWN);
    assert_int_equal(ps->phase, PROBE_UNMEASURABLE);
    const char *said = strstr(efx_log(), "benefit probe: reading the busy CPUs' frequency (cpufreq)");
    assert_non_null(said);
    assert_null(strstr(said + 1, "benefit probe: reading the busy CPUs' frequency"));
}

/* Paused in the middle of a round: nothing it names is applied, so the
 * round is thrown away and starts over on resume. */
static void test_pause_discards_round(void **state)
{
    struct engine_fixture *fx = *state;
    const struct probe_state *ps = &fx->e->probe.state;
    set_mhz(fx, 3000);
    efx_start(fx);
    for (int i = 0; i < 6 && ps->phase != PROBE_RUNNING; i++)
        efx_tick_with(fx, load);
    assert_int_equal(ps->phase, PROBE_RUNNING);
    assert_true(engine_pause(fx->e, 0) >= 0);
    efx_tick_with(fx, load);
    assert_false(fx->e->plan->benefit_probed);
    assert_int_equal(ps->phase, PROBE_IDLE);
    assert_int_equal(ps->discarded, 1);
    assert_string_equal(ps->explain, "probe interrupted (paused), starting over");
    assert_int_equal(engine_resume(fx->e, 0), 1);
    tick_until_round(fx, load, 1);
    assert_int_equal(ps->learned, BENEFIT_ISOLATE);
    expect_jitter_on(fx, "1");
}

/* No table and no source (as on the development VM): the thresholds'
 * plan, and the notice says what was looked for. */
static void test_no_source_keeps_thresholds(void **state)
{
    struct engine_fixture *fx = *state;
    char buf[512];
    efx_start(fx);
    assert_non_null(strstr(efx_log(), "benefit: no frequency table ([capacity] active<N> keys; turbo ratios: "));
    assert_non_null(strstr(efx_log(), "and no measurable frequency to probe with (APERF/MPERF: "));
    assert_non_null(strstr(efx_log(), "/dev/cpu/0/msr: No such file or directory"));
    assert_non_null(strstr(efx_log(), "cpufreq: "));
    assert_non_null(strstr(efx_log(), "), packing by the thresholds alone"));
    assert_false(fx->e->probe.on);
    for (int i = 0; i < 3; i++)
        efx_tick_with(fx, load);
    /* today's policy: CPU 0 has room by the thresholds */
    assert_false(fx->e->plan->benefit_probed);
    assert_int_equal(fx->e->plan->benefit, BENEFIT_UNKNOWN);
    assert_true(fx->e->plan->restricted);
    assert_int_equal(fx->e->plan->reason, PACKER_REASON_PACKED);
    expect_jitter_on(fx, "0");
    assert_string_equal(probe_field(fx, "state", buf, sizeof buf), "off");
    assert_non_null(strstr(probe_field(fx, "what", buf, sizeof buf), "no measurable frequency (APERF/MPERF: "));

    /* probe = no: not looked for though there is a source now, and said
     * so (the reload's messages go to stderr: its reason is checked) */
    set_mhz(fx, 3000);
    efx_write_config(fx, true, "[capacity]\nprobe = no\n");
    assert_int_equal(engine_reload(fx->e, NULL, 0), 0);
    assert_false(fx->e->probe.on);
    assert_string_equal(probe_field(fx, "what", buf, sizeof buf), "probe = no in [capacity]");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_probe_learns_and_applies, efx_setup_2cpu, efx_teardown),
        cmocka_unit_test_setup_teardown(test_pause_discards_round, efx_setup_2cpu, efx_teardown),
        cmocka_unit_test_setup_teardown(test_no_source_keeps_thresholds, efx_setup_2cpu, efx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
