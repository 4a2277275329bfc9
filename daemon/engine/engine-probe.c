/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Pack only when it pays, without a frequency table: the probe loop
 * (benefit.h) learns which plan pays from the busy cores' measured
 * frequency (freq-meter.h). Every tick the engine measures the mean
 * frequency of the cores that were busy since the previous tick, the packer
 * steps the loop with it and applies the plan it returns (packer-benefit.c),
 * and this file says when the learned plan changes, and why. */
#include "engine-probe.h"

#include "engine-internal.h"

#include <stdio.h>
#include <string.h>

#include "log.h"
#include "util.h"

static const char *const phase_names[] = {
    [PROBE_IDLE] = "idle",
    [PROBE_RUNNING] = "running",
    [PROBE_LEARNED] = "learned",
    [PROBE_UNMEASURABLE] = "unmeasurable",
};

const char *engine_probe_phase(const struct engine *e)
{
    unsigned p = (unsigned)e->probe.state.phase;
    if (!e->probe.on)
        return "off";
    return p < ELEMENTSOF(phase_names) && phase_names[p] ? phase_names[p] : "?";
}

bool engine_probe_setup(struct engine *e, bool have_table)
{
    struct engine_probe *p = &e->probe;
    p->on = false;
    p->input = (struct packer_probe){0};
    if (have_table) {
        snprintf(p->off_why, sizeof p->off_why, "the frequency table decides");
        return false;
    }
    if (!e->cfg->freq_probe) {
        snprintf(p->off_why, sizeof p->off_why, "probe = no in [capacity]");
        return false;
    }
    /* Looked for once: at start the daemon may still open the msr files;
     * a reload that finds none tries again (cpufreq needs no privilege). */
    if (p->meter.source == FREQ_SOURCE_NONE && freq_meter_open(&p->meter, e->params.root, &e->topo->online) < 0) {
        snprintf(p->off_why, sizeof p->off_why, "no measurable frequency (%s)", p->meter.what);
        return false;
    }
    struct probe_config pc;
    probe_config_default(&pc);
    probe_init(&p->state, &pc);
    p->on = true;
    p->off_why[0] = '\0';
    p->read_failed = false;
    p->learned = BENEFIT_NONE;
    p->learned_round = 0;
    p->last_change[0] = '\0';
    return true;
}

const struct packer_probe *engine_probe_measure(struct engine *e)
{
    struct engine_probe *p = &e->probe;
    if (!p->on)
        return NULL;
    /* The cores busy on the last plan ran since the previous tick; idle
     * ones are not read (an msr read would wake them). */
    cpu_set_t cpus;
    CPU_AND(&cpus, &e->pstate.busy_cpus, &e->topo->online);
    double mhz = 0;
    int r = freq_meter_sample(&p->meter, &cpus, &mhz);
    if (r < 0) {
        if (!p->read_failed)
            log_warning_errno(r,
                              "benefit probe: reading the busy CPUs' frequency (%s): %m; "
                              "packing by the thresholds until it reads again",
                              freq_source_name(p->meter.source));
        p->read_failed = true;
    } else if (p->read_failed) {
        log_info("benefit probe: the busy CPUs' frequency reads again");
        p->read_failed = false;
    }
    /* r == 0: no busy CPU, or none with a reading from the previous tick
     * (the first tick): nothing ran busy to compare, which a round starts
     * from or the load signature discards. */
    p->input = (struct packer_probe){.state = &p->state, .measurable = r >= 0, .busy_mhz = mhz};
    /* Paused, no plan is applied: a probe would measure nothing it names.
     * The reading above still moves on, so that none spans the pause. */
    return engine_paused(e) ? NULL : &p->input;
}

/* The learned plan changed (or was learned the first time): say so, and
 * keep why for status. */
static void learned_changed(struct engine *e)
{
    struct engine_probe *p = &e->probe;
    const struct probe_state *ps = &p->state;
    if (p->learned_round != 0)
        snprintf(p->last_change, sizeof p->last_change, "%s -> %s after round %u: %s", benefit_plan_name(p->learned),
                 benefit_plan_name(ps->learned), ps->rounds, ps->explain);
    else
        snprintf(p->last_change, sizeof p->last_change, "%s after round %u: %s", benefit_plan_name(ps->learned),
                 ps->rounds, ps->explain);
    log_info("benefit probe: %s", p->last_change);
    p->learned = ps->learned;
    p->learned_round = ps->rounds;
}

void engine_probe_planned(struct engine *e)
{
    struct engine_probe *p = &e->probe;
    if (!p->on)
        return;
    freq_meter_prime(&p->meter, &e->pstate.busy_cpus);
    struct probe_state *ps = &p->state;
    if (!e->plan->benefit_probed && ps->phase == PROBE_RUNNING) {
        /* The plan was not weighed this tick (machine nearly idle, no
         * data, paused): what runs now is not the plan under probe, so the
         * next sample would be put down to the wrong plan. Start over. */
        probe_discard(ps, engine_paused(e) ? "paused" : packer_reason_describe(e->plan->wanted_reason));
        return;
    }
    if (ps->phase != PROBE_LEARNED)
        return;
    if (p->learned_round == 0 || ps->learned != p->learned) {
        learned_changed(e);
        return;
    }
    if (ps->rounds != p->learned_round) {
        log_debug("benefit probe: round %u: %s", ps->rounds, ps->explain);
        p->learned_round = ps->rounds;
    }
}

void engine_probe_snapshot(const struct engine *e, struct engine_probe_snapshot *out)
{
    const struct engine_probe *p = &e->probe;
    *out = (struct engine_probe_snapshot){
        .on = p->on,
        .phase = engine_probe_phase(e),
        .source = freq_source_name(p->meter.source),
        .what = p->on ? p->meter.what : p->off_why,
        .explain = p->on ? p->state.explain : NULL,
        .rounds = p->state.rounds,
        .discarded = p->state.discarded,
        .learned_any = p->learned_round != 0,
        .learned = p->learned,
        .last_change = p->last_change,
    };
}
