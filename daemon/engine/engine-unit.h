/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The unit opt-in's turbosched-jitter.slice, the jitter unit (engine-unit.c). */
#pragma once
#include <sched.h>
#include <stdbool.h>

#include "pins.h"

struct engine;

/* The jitter unit, turbosched-jitter.slice under systemd (the unit opt-in;
 * "slice" alone means the EEVDF slice of slice.h): its AllowedCPUs= is
 * ours while set; pins survive the cpuset controller toggles that causes. */
struct engine_unit {
    bool set;
    unsigned n_tasks; /* tasks in it, as of the last tick */
    struct pins pins;
};

/* The jitter unit's CPUs follow the plan (mask NULL: no restriction);
 * undo every change, keeping other tasks' pins. */
void engine_unit_follow_plan(struct engine *e, const cpu_set_t *mask);
int engine_restore_everything(struct engine *e, bool wait_for_toggle);
/* Each tick: put back the pins a cpuset controller toggle reset. */
void engine_unit_tick(struct engine *e);
/* Whether a toggle may still reset masks: a packed task whose mask changed
 * is being put back then, not changed by someone else. */
bool engine_unit_repairing(const struct engine *e);
void engine_unit_done(struct engine_unit *u);
