/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The run-delay guard wired to the plan. The sampler reads every jitter
 * thread's schedstat each tick (round robin beyond SAMPLER_TASKS_PER_TICK);
 * while jitter is packed, the run-queue wait and timeslice counts it found
 * go into a small record per thread here. Once a tick the percentile of the
 * threads' mean wait per wake-up goes to delay_guard_step(), and its answer
 * to the packer: busy cores to spill to, or packing given up for a while. */
#include "engine-delay.h"

#include "engine-internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "procscan.h"
#include "sampler.h"
#include "task.h"
#include "util.h"

/* A reading older than this many ticks is of a thread the sampler no longer
 * reads (exited, reclassified): dropped. With more jitter threads than the
 * sampler reads in a tick, each is read every few ticks; this leaves room
 * for a few hundred of them. */
#define DELAY_STALE_TICKS 16u

struct delay_record {
    uint64_t start_time; /* the thread's, so that a reused TID starts afresh */
    uint32_t seen_tick;
    uint32_t uid; /* its user's: the percentile is taken per user */
    struct delay_thread d;
};

/* A uid that could not be read: a group of its own. */
#define DELAY_UID_UNKNOWN UINT32_MAX

/* The thread's effective uid: the task's where known, else its status
 * file's. Not /proc/PID's owner: a process that made itself non-dumpable
 * shows root's there, and would hide among root's threads. */
static uint32_t thread_uid(const struct engine *e, const struct task *t)
{
    if (t->uid != TASK_UID_UNKNOWN)
        return (uint32_t)t->uid;
    char buf[4096];
    uid_t uid;
    if (read_proc_task(e->params.root, t->pid, t->tid, "status", buf, sizeof buf) < 0 ||
        procscan_parse_status_uid(buf, &uid) < 0)
        return DELAY_UID_UNKNOWN;
    return (uint32_t)uid;
}

/* Ticks after which a record not read again is dropped: DELAY_STALE_TICKS,
 * or two rounds of the sampler over every jitter task, whichever is more:
 * one user's thousands of jitter threads must not push another user's out
 * of the figure before the sampler comes back to them. */
static uint32_t stale_ticks(const struct engine *e)
{
    unsigned rounds = (e->n_by_class[CLASS_JITTER] + SAMPLER_TASKS_PER_TICK - 1) / SAMPLER_TASKS_PER_TICK;
    return rounds * 2 > DELAY_STALE_TICKS ? rounds * 2 : DELAY_STALE_TICKS;
}

static void guard_config(struct engine_delay *d, const struct config *cfg)
{
    delay_guard_config_defaults(&d->cfg);
    d->cfg.max_run_delay_ns = cfg->policy.max_run_delay_ns;
}

void engine_delay_init(struct engine_delay *d, const struct config *cfg)
{
    *d = (struct engine_delay){0};
    PIDMAP_INIT(&d->threads, struct delay_record);
    delay_guard_init(&d->guard);
    guard_config(d, cfg);
}

void engine_delay_done(struct engine_delay *d) { pidmap_done(&d->threads); }

static void forget(struct engine_delay *d)
{
    delay_guard_reset(&d->guard);
    pidmap_clear(&d->threads);
    CPU_ZERO(&d->spill_cpus);
    d->note[0] = '\0';
    d->delay_ns = d->wakeups = 0;
}

void engine_delay_reset(struct engine_delay *d, const struct config *cfg)
{
    guard_config(d, cfg);
    forget(d);
}

void engine_delay_plan_changed(struct engine *e) { pidmap_clear(&e->delay.threads); }

/* The sampler's hook: one jitter thread's counters, as read this tick. */
static void on_reading(struct task *t, const struct sampler_reading *rd, void *userdata)
{
    struct engine *e = userdata;
    struct engine_delay *d = &e->delay;
    struct delay_record *rec;
    if (!d->cfg.max_run_delay_ns || !engine_plan_mask(e))
        return;
    int r = pidmap_insert(&d->threads, t->tid, (void **)&rec);
    if (r == -ENOMEM)
        return; /* judged without it: a thread fewer */
    if (r == 0 || rec->start_time != t->start_time)
        *rec = (struct delay_record){.start_time = t->start_time, .uid = thread_uid(e, t)};
    struct delay_schedstat now = {.run_ns = rd->runtime_ns, .wait_ns = rd->wait_ns, .timeslices = rd->slices};
    uint64_t mean;
    uint64_t n = delay_thread_sample(&rec->d, &now, &mean);
    histogram_add_n(&d->hist, mean, n);
    rec->seen_tick = d->tick;
}

void engine_delay_hook(struct engine *e)
{
    e->sampler.on_jitter_reading = on_reading;
    e->sampler.hook_data = e;
}

/* The percentile over the threads read lately, weighted by their wake-ups,
 * taken per user and the worst user's kept; threads not read for
 * stale_ticks() are dropped. */
static void measure(struct engine_delay *d, uint32_t stale_after)
{
    size_t n = pidmap_count(&d->threads), n_pts = 0, n_stale = 0, iter = 0;
    struct delay_point *pts = calloc(n ? n : 1, sizeof *pts);
    pid_t *stale = calloc(n ? n : 1, sizeof *stale);
    struct delay_record *rec;
    pid_t tid;
    d->delay_ns = d->wakeups = 0;
    if (!pts || !stale) {
        free(pts);
        free(stale);
        return; /* no figure this tick: the guard holds */
    }
    while ((rec = pidmap_next(&d->threads, &iter, &tid))) {
        if (d->tick - rec->seen_tick > stale_after) {
            stale[n_stale++] = tid;
            continue;
        }
        pts[n_pts].delay_ns = delay_thread_mean_ns(&rec->d, &pts[n_pts].weight);
        pts[n_pts].group = rec->uid;
        d->wakeups += pts[n_pts].weight;
        n_pts++;
    }
    for (size_t i = 0; i < n_stale; i++)
        pidmap_remove(&d->threads, stale[i], NULL);
    d->delay_ns = delay_percentile_by_group(pts, n_pts, d->cfg.percentile);
    free(pts);
    free(stale);
}

static const struct packer_core_info *plan_core(const struct engine *e, int core)
{
    for (int i = 0; e->planned && i < e->plan->n_cores; i++)
        if (e->plan->cores[i].core == core)
            return &e->plan->cores[i];
    return NULL;
}

/* Busy cores outside the mask in effect, most spare first: where jitter
 * can go without waking an idle core. Spilled cores that are no longer
 * busy are forgotten. */
static size_t candidates(struct engine *e, int *out)
{
    struct delay_guard *g = &e->delay.guard;
    for (unsigned i = g->n_spilled; i-- > 0;) {
        const struct packer_core_info *ci = plan_core(e, g->spilled[i]);
        if (!ci || !ci->busy)
            delay_guard_forget_core(g, g->spilled[i]);
    }
    size_t n = 0;
    for (int i = 0; e->planned && i < e->plan->n_cores; i++) {
        const struct packer_core_info *ci = &e->plan->cores[i];
        if (!ci->busy || ci->applied || ci->n_online == 0 || ci->core >= e->topo->n_cores)
            continue;
        size_t j = n++;
        while (j > 0 && e->plan->cores[out[j - 1]].spare_milli < ci->spare_milli) {
            out[j] = out[j - 1];
            j--;
        }
        out[j] = i;
    }
    for (size_t k = 0; k < n; k++)
        out[k] = e->plan->cores[out[k]].core;
    return n;
}

static void spill_set(struct engine *e)
{
    struct engine_delay *d = &e->delay;
    CPU_ZERO(&d->spill_cpus);
    for (unsigned i = 0; i < d->guard.n_spilled; i++)
        if (d->guard.spilled[i] >= 0 && d->guard.spilled[i] < e->topo->n_cores)
            CPU_OR(&d->spill_cpus, &d->spill_cpus, &e->topo->cores[d->guard.spilled[i]].online);
}

void engine_delay_tick(struct engine *e, uint64_t now_ms)
{
    struct engine_delay *d = &e->delay;
    d->tick++;
    if (!d->cfg.max_run_delay_ns || engine_paused(e)) {
        if (d->guard.n_spilled || d->guard.fallen_back || pidmap_count(&d->threads))
            forget(d);
        snprintf(d->last, sizeof d->last, "%s", d->cfg.max_run_delay_ns ? "paused" : "off");
        return;
    }
    if (!engine_plan_mask(e) && !d->guard.fallen_back) {
        /* Jitter runs anywhere: its waits say nothing of a plan. */
        if (d->guard.n_spilled || pidmap_count(&d->threads))
            forget(d);
        snprintf(d->last, sizeof d->last, "jitter not packed");
        return;
    }
    measure(d, stale_ticks(e));
    int *cand = calloc((size_t)(e->planned ? e->plan->n_cores : 0) + 1, sizeof *cand);
    if (!cand)
        return;
    struct delay_guard_input in = {
        .now_ms = now_ms, .delay_ns = d->delay_ns, .wakeups = d->wakeups, .candidates = cand};
    in.n_candidates = candidates(e, cand);
    struct delay_decision dec = delay_guard_step(&d->guard, &d->cfg, &in);
    free(cand);
    snprintf(d->last, sizeof d->last, "%s", dec.reason);
    if (dec.action != DELAY_HOLD) {
        log_notice("run delay: %s", dec.reason);
        snprintf(d->note, sizeof d->note, "%s", dec.reason);
    }
    if (!d->guard.n_spilled && !d->guard.fallen_back)
        d->note[0] = '\0';
    spill_set(e);
}

bool engine_delay_of(const struct engine *e, pid_t tid, uint64_t *mean_ns, uint64_t *wakeups)
{
    const struct delay_record *rec = pidmap_find(&e->delay.threads, tid);
    if (!rec)
        return false;
    *mean_ns = delay_thread_mean_ns(&rec->d, wakeups);
    return *wakeups > 0;
}

void engine_delay_snapshot(const struct engine *e, struct engine_delay_snapshot *out)
{
    const struct engine_delay *d = &e->delay;
    *out = (struct engine_delay_snapshot){
        .limit_ns = d->cfg.max_run_delay_ns,
        .delay_ns = d->delay_ns,
        .wakeups = d->wakeups,
        .percentile = d->cfg.percentile,
        .guard = &d->guard,
        .hist = &d->hist,
        .last = d->last,
    };
}
