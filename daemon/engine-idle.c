/* Idle cores kept out of the deep idle states, measured (idle-meter.h):
 * each tick that follows a plan leaving the jitter unconfined, the engine
 * reads cpuidle's counters, measures the cores that plan treated as idle,
 * and keeps, smoothed, what it measured over ticks the jitter ran
 * unconfined. The packer passes that to the benefit
 * model as its measured figures for no restriction (packer-benefit.c). */
#include "engine.h"

#include "log.h"
#include "util.h"

/* Paused, every change is undone: the jitter is free whatever the plan. */
static bool jitter_unconfined(const struct engine *e)
{
    return engine_paused(e) || !e->pstate.restricted;
}

void engine_idle_setup(struct engine *e, bool keep)
{
    struct engine_idle *d = &e->idle;
    bool was_on = d->on;
    d->on = idle_meter_open(&d->meter, e->params.root, e->topo) > 0;
    d->unconfined = false;      /* the counters start over: no interval yet */
    d->last = (struct idle_measurement){0};
    if (!keep || !d->on)
        d->kept = (struct idle_kept){0};
    if (d->on)
        log_info("benefit: idle cores' deep idle states measured from %s", d->meter.what);
    else if (was_on || !d->said)
        log_info("benefit: deep idle states not measured (%s): one woken idle core per jitter task assumed",
                 d->meter.what);
    d->said = true;
}

const struct idle_kept *engine_idle_measure(struct engine *e, uint64_t now)
{
    struct engine_idle *d = &e->idle;
    if (!d->on)
        return NULL;
    if (!d->unconfined) {
        /* Confined since the last plan: nothing to keep, so nothing is
         * read (a machine packed as it should be reads no cpuidle file,
         * two per deep state and CPU); the next tick reads the base. */
        idle_meter_restart(&d->meter);
        d->last = (struct idle_measurement){0};
        return &d->kept;
    }
    /* the cores busy on the last plan: the others were idle since */
    idle_meter_sample(&d->meter, e->topo, &e->pstate.busy_cpus, now_ns() / 1000, &d->last);
    /* unconfined since the previous tick: then (after its plan) and now
     * (a pause or a resume in between would mix the two) */
    idle_keep(&d->kept, &d->last, jitter_unconfined(e), now, e->cfg->half_life_ms);
    return &d->kept;
}

void engine_idle_planned(struct engine *e)
{
    e->idle.unconfined = jitter_unconfined(e);
}
