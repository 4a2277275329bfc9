/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The engine's state as the control socket's replies show it: report.c and
 * control-pause.c render these, and read no field of struct engine. */
#include "engine-snapshot.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "apply.h"
#include "classifier.h"
#include "engine-internal.h"
#include "sysops.h"
#include "task.h"
#include "util.h"

void engine_snapshot(const struct engine *e, struct engine_snapshot *out)
{
    const struct engine_events *ev = &e->events;
    *out = (struct engine_snapshot){
        .start_ms = e->start_ms,
        .mode_cgroup = e->cfg->mode == APPLY_CGROUP,
        .dry_run = e->cfg->dry_run,
        .uclamp_supported = classifier_uclamp_supported(e->classifier),
        .unit_optin = classifier_unit_optin_active(e->classifier),
        .request_paths = e->cfg->behaviour.enabled && e->cfg->request_paths,
        .tail_guard = e->cfg->behaviour.enabled && e->cfg->tail_guard,
        .capacity = &e->cfg->capacity,
        .topo = e->topo,
        .sampler = &e->sampler,
        .tracked = task_table_count(e->tasks),
        .max_tasks = task_table_max(e->tasks),
        .memory_bytes = task_table_memory_bytes(e->tasks),
        .held_serving = e->reqpath.held_serving,
        .held_sleep = e->reqpath.held_sleep,
        .released = e->reqpath.released,
        .socket_checks = e->reqpath.socket_checks,
        .sleep_reads = e->reqpath.sleep_reads,
        .procmon = ev->procmon ? procmon_counters(ev->procmon) : NULL,
        .rename_floods = ev->shed.sheds,
        .renames_unheard = ev->shed.on,
        .placement_latency = &ev->placement_latency,
        .queue_delay = &ev->queue_delay,
        .handled_ns = ev->handled_ns,
        .wakeups = ev->wakeups,
        .wakeups_ns = ev->wakeups_ns,
        .doorbell = ev->doorbell.procmon != NULL,
        .doorbell_rings = ev->doorbell.rings,
        .doorbell_ahead = ev->doorbell.ahead,
        .doorbell_skipped = ev->doorbell.skipped,
        .doorbell_already = ev->doorbell.already,
        .adopted_at_exec = ev->adopt.at_exec,
        .adopted_at_tick = ev->adopt.at_tick,
        .adopted_at_restore = ev->adopt.at_restore,
        .daemon_moves = e->seat.moves,
        .counters = e->counters,
        .last_reload = &e->last_reload,
        .planned = e->planned,
        .plan = e->plan,
        .freq_table = engine_freq_table(e) != NULL,
    };
    engine_count_now(e, out->by_class, &out->packed);
    engine_pause_snapshot(e, &out->pause);
    engine_delay_snapshot(e, &out->delay);
    engine_probe_snapshot(e, &out->probe);
    engine_idle_snapshot(e, &out->idle);
}

void engine_snapshot_status(const struct engine *e, struct engine_snapshot *out)
{
    engine_snapshot(e, out);
    out->kept_out = engine_reqpath_cooling(e);
}

const struct task *engine_task_next(const struct engine *e, size_t *iter) { return task_table_next(e->tasks, iter); }

void engine_task_snapshot(const struct engine *e, const struct task *t, struct engine_task_snapshot *out)
{
    out->masks = out->slice = out->run_delay = false;
    if (classifier_explain(e->classifier, t, out->detail, sizeof out->detail) < 0)
        snprintf(out->detail, sizeof out->detail, "%s", class_source_to_string(t->source));
    const struct applied_task *at = applier_find(e->applier, t->tid);
    if (at) {
        out->masks = true;
        out->original = at->original;
        out->current = at->set;
        if (at->slice.applied) {
            out->slice = true;
            out->slice_ns = at->slice.set_runtime_ns;
            out->original_slice_ns = at->slice.orig.runtime_ns;
        }
        out->run_delay = engine_delay_of(e, t->tid, &out->run_delay_ns, &out->run_delay_wakeups);
    } else if (e->ops->getaffinity(e->ops->userdata, t->tid, &out->current) == 0) {
        out->masks = true;
        out->original = out->current;
    }
}

static void placement(const struct engine *e, const struct task *t, char *buf, size_t size)
{
    char mask[256];
    const struct applied_task *at = applier_find(e->applier, t->tid);
    int hands_off = applier_hands_off(e->applier, t->tid);
    if (at) {
        char slice[96] = "";
        if (at->slice.applied)
            snprintf(slice, sizeof slice, " with a %" PRIu64 " us slice (its own: %" PRIu64 " us)",
                     at->slice.set_runtime_ns / 1000, at->slice.orig.runtime_ns / 1000);
        snprintf(buf, size, "packed on CPUs %.200s%s (plan: %.200s)", format_cpulist(&at->set, mask, sizeof mask),
                 slice, e->plan->summary);
    } else if (t->source == SOURCE_SLICE && e->unit.set)
        snprintf(buf, size, "confined with turbosched-jitter.slice, whose AllowedCPUs= follows the plan (%.200s)",
                 e->plan->summary);
    else if (t->flags & TASK_F_GROUP)
        snprintf(buf, size, "in cpuset group %.100s, whose CPUs follow the plan (%.200s)", e->group.path,
                 e->planned ? e->plan->summary : "no plan yet");
    else if (hands_off == -EBUSY)
        snprintf(buf, size, "left alone: its affinity was changed by someone else after we set it");
    else if (hands_off < 0)
        snprintf(buf, size, "left alone: the kernel refused a change (%s)", strerror(-hands_off));
    else if (t->class != CLASS_JITTER)
        snprintf(buf, size, "not moved: class %s", task_class_to_string(t->class));
    else if (!e->planned || !e->plan->restricted)
        snprintf(buf, size, "not confined: %s", e->planned ? e->plan->summary : "no plan yet");
    else
        snprintf(buf, size, "not confined: its own affinity does not intersect the plan");
}

/* "0.14 ms per wake-up over its last 48 wake-ups (limit 1 ms)" */
static void run_delay_explain(const struct engine *e, const struct task *t, char *buf, size_t size)
{
    uint64_t ns, n, limit = e->delay.cfg.max_run_delay_ns;
    if (!limit)
        snprintf(buf, size, "not guarded (max_run_delay = off)");
    else if (engine_delay_of(e, t->tid, &ns, &n))
        snprintf(buf, size, "%.2f ms per wake-up over its last %" PRIu64 " wake-ups (limit %.2f ms)", (double)ns / 1e6,
                 n, (double)limit / 1e6);
    else if (t->class != CLASS_JITTER || !engine_plan_mask(e))
        snprintf(buf, size, "not measured: only packed jitter is");
    else
        snprintf(buf, size, "not measured yet");
}

void engine_task_explain(const struct engine *e, const struct task *t, struct engine_task_explain *out)
{
    placement(e, t, out->placement, sizeof out->placement);
    sampler_behaviour_explain(&e->sampler, t, &e->cfg->behaviour, now_ms(), out->behaviour, sizeof out->behaviour);
    run_delay_explain(e, t, out->run_delay, sizeof out->run_delay);
    engine_reqpath_explain(e, t, out->request_path, sizeof out->request_path);
}
