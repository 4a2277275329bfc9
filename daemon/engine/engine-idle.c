/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Idle cores kept out of the deep idle states, measured (idle-meter.h):
 * each tick that follows a plan leaving the jitter unconfined, or isolating
 * it on idle cores, the engine reads cpuidle's counters, measures the cores
 * that plan treated as idle, and keeps, smoothed, what it measured under
 * each. The packer passes both to the benefit model (packer-benefit.c):
 * no restriction is weighed by the first, and isolation, under the load it
 * was measured in, by the second. Where isolation is worth a trial to
 * measure it (benefit_choice.trial), this is where the trial is followed. */
#include "engine-idle.h"

#include "engine-internal.h"

#include "log.h"
#include "util.h"

/* Paused, every change is undone: the jitter is free whatever the plan. */
static bool jitter_unconfined(const struct engine *e) { return engine_paused(e) || !e->pstate.restricted; }

static bool jitter_isolated(const struct engine *e)
{
    return !engine_paused(e) && e->pstate.restricted && e->pstate.reason == PACKER_REASON_ISOLATED;
}

void engine_idle_setup(struct engine *e, bool keep)
{
    struct engine_idle *d = &e->idle;
    bool was_on = d->on;
    d->on = idle_meter_open(&d->meter, e->params.root, e->topo) > 0;
    d->unconfined = d->isolated = false; /* the counters start over: no interval yet */
    d->last = (struct idle_measurement){0};
    d->fig.in_trial = false;
    if (!keep || !d->on) {
        d->fig = (struct packer_idle){0};
        d->tried = false;
    }
    if (d->on)
        log_info("benefit: idle cores' deep idle states measured from %s", d->meter.what);
    else if (was_on || !d->said)
        log_info("benefit: deep idle states not measured (%s): one woken idle core per jitter task assumed",
                 d->meter.what);
    d->said = true;
}

const struct packer_idle *engine_idle_measure(struct engine *e, uint64_t now)
{
    struct engine_idle *d = &e->idle;
    if (!d->on)
        return NULL;
    d->fig.trial_ok = !d->tried || now >= d->trial_at_ms + BENEFIT_TRIAL_AGAIN_MS;
    if (!d->unconfined && !d->isolated) {
        /* Packed since the last plan: nothing to keep, so nothing is read
         * (a machine packed as it should be reads no cpuidle file, two
         * per deep state and CPU); the next tick reads the base. */
        idle_meter_restart(&d->meter);
        d->last = (struct idle_measurement){0};
        return &d->fig;
    }
    /* the cores busy on the last plan: the others were idle since */
    idle_meter_sample(&d->meter, e->topo, &e->pstate.busy_cpus, now_ns() / 1000, &d->last);
    /* kept when the jitter ran as the last plan left it until now (a
     * pause or a resume in between would mix two plans) */
    if (d->unconfined) {
        idle_keep(&d->fig.none, &d->last, jitter_unconfined(e), now, e->cfg->policy.half_life_ms);
    } else if (jitter_isolated(e)) {
        if (d->fig.iso_sig != d->planned_sig)
            d->fig.iso = (struct idle_kept){0}; /* another load: measured afresh */
        d->fig.iso_sig = d->planned_sig;
        idle_keep(&d->fig.iso, &d->last, true, now, e->cfg->policy.half_life_ms);
    }
    return &d->fig;
}

void engine_idle_planned(struct engine *e, uint64_t now)
{
    struct engine_idle *d = &e->idle;
    const struct packer_plan *pl = e->plan;
    d->unconfined = jitter_unconfined(e);
    d->isolated = jitter_isolated(e);
    if (!d->isolated) {
        d->fig.in_trial = false;
        return;
    }
    /* what the next tick measures is isolation under this load */
    d->planned_sig = pl->benefit_iso_sig;
    if (pl->benefit_trial && !d->fig.in_trial) {
        d->tried = true;
        d->trial_at_ms = now;
        d->trials++;
        log_info("benefit: %s", pl->benefit_explain);
    }
    /* the packer may change the plan min_change after the trial began */
    bool may_change = now >= d->trial_at_ms + e->cfg->policy.min_change_ms;
    d->fig.in_trial = benefit_trial_goes_on(d->fig.in_trial, pl->benefit_trial, pl->benefit, may_change);
    if (pl->benefit_trial)
        d->fig.trial_from = pl->benefit_trial_from;
}

void engine_idle_snapshot(const struct engine *e, struct engine_idle_snapshot *out)
{
    const struct engine_idle *d = &e->idle;
    *out = (struct engine_idle_snapshot){
        .on = d->on,
        .fig = d->fig,
        .what = d->meter.what,
        .trials = d->trials,
    };
}
