/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The unit opt-in's systemd unit, turbosched-jitter.slice (the jitter
 * unit: not the EEVDF slice of slice.h), and the CPU pins of every other
 * task around the cpuset controller toggles that setting its AllowedCPUs=
 * may cause (see pins.h). */
#include "engine-unit.h"

#include "engine-internal.h"

#include <errno.h>
#include <time.h>

#include "apply.h"
#include "classifier.h"
#include "log.h"
#include "pins.h"
#include "procscan.h"
#include "task.h"

#define JITTER_UNIT "turbosched-jitter.slice"

/* Take a snapshot of narrowed masks before a change that may toggle the
 * cpuset controller, and put them back after it (see pins.h). A task the
 * daemon packed is managed: it keeps the mask the applier holds it to at
 * each repair, and its original once the applier has restored it. */
static enum pin_choice pin_of(const struct task *t, cpu_set_t *mask, void *userdata)
{
    const struct engine *e = userdata;
    if (t->source == SOURCE_SLICE || (t->flags & TASK_F_GROUP))
        return PIN_SKIP;
    const struct applied_task *at = applier_find(e->applier, t->tid);
    if (!at)
        return PIN_CURRENT;
    *mask = at->original;
    return PIN_MANAGED;
}

static bool pin_now(pid_t tid, uint64_t start_time, cpu_set_t *mask, void *userdata)
{
    const struct engine *e = userdata;
    const struct applied_task *at = applier_find(e->applier, tid);
    if (!at || at->start_time != start_time)
        return false;
    *mask = at->set;
    return true;
}

static void pins_guard_begin(struct engine *e, unsigned passes)
{
    /* A pin is guarded by the start time: read the ones still pending. */
    size_t iter = 0;
    struct task *t;
    while ((t = task_table_next(e->tasks, &iter)))
        (void)procscan_ensure_start(e->params.root, t);
    if (!e->cfg->dry_run &&
        pins_snapshot(&e->unit.pins, e->tasks, &e->topo->online, e->ops, passes, pin_of, pin_now, e) < 0)
        log_warning_errno(-ENOMEM, "remembering CPU pins before a cpuset change: %m");
}

/* The jitter unit's CPUs follow the plan. Setting AllowedCPUs= the first
 * time enables the cpuset controller; emptying it again may disable it. Both
 * reset every task's affinity on Debian 12's kernel, so the unit is touched
 * only once a task lives in it, and while the plan is unrestricted it spans
 * every online CPU instead of going back to empty until stop. */
void engine_unit_follow_plan(struct engine *e, const cpu_set_t *mask)
{
    if (!classifier_unit_optin_active(e->classifier) || (!e->unit.set && (!mask || !e->unit.n_tasks)))
        return;
    if (!mask)
        mask = &e->topo->online;
    bool toggle = !e->unit.set;
    if (toggle)
        pins_guard_begin(e, 10);
    if (applier_unit_set_allowed_cpus(e->applier, JITTER_UNIT, mask) >= 0)
        e->unit.set = true;
    if (toggle)
        pins_repair(&e->unit.pins, e->ops);
}

/* Undo every change; with the unit touched, keep other tasks' pins. */
int engine_restore_everything(struct engine *e, bool wait_for_toggle)
{
    bool guard = e->unit.set;
    if (guard)
        pins_guard_begin(e, wait_for_toggle ? 15 : 10);
    engine_adopt_due(e, 0); /* what they inherited from us, too */
    int n = applier_restore_all(e->applier);
    applier_flush_state(e->applier);
    e->unit.set = false;
    if (guard && wait_for_toggle) {
        /* systemd applies the change after its reply: look a few times. */
        for (int i = 0; i < 15; i++) {
            pins_repair(&e->unit.pins, e->ops);
            nanosleep(&(struct timespec){.tv_nsec = 20 * 1000 * 1000}, NULL);
        }
    } else if (guard)
        pins_repair(&e->unit.pins, e->ops);
    return n;
}

void engine_unit_tick(struct engine *e) { pins_repair(&e->unit.pins, e->ops); }

bool engine_unit_repairing(const struct engine *e) { return e->unit.pins.repairs_left != 0; }

void engine_unit_done(struct engine_unit *u) { pins_clear(&u->pins); }
