/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Keeping other tasks' CPU pins across a cpuset controller toggle.
 *
 * On cgroup v2 with kernels before 6.2 (Debian 12's 6.1), systemd enabling or
 * disabling the cpuset controller (the first AllowedCPUs= on any unit, or
 * the last one emptied) resets the affinity of every task in the hierarchy
 * to its cpuset's CPUs: a service's CPUAffinity= or a user's taskset is lost.
 * Around such a toggle the daemon snapshots every narrowed mask and, for a
 * little while after it, puts back the ones that were reset. */
#pragma once
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sysops.h"

struct task;
struct task_table;

/* Which mask a task should keep across the toggle: its current one, none
 * (confined with the daemon's slice or group: the toggle's reset is what is
 * wanted there), or one the caller manages (a task the daemon packed). A
 * managed task's mask may change while the pins are kept (the plan moves, or
 * everything is undone), so pins_repair asks the caller again (pins_now_fn)
 * and uses the mask given here (the task's original) once the caller has
 * let the task go. */
enum pin_choice { PIN_CURRENT, PIN_MANAGED, PIN_SKIP };
typedef enum pin_choice (*pins_choose_fn)(const struct task *t, cpu_set_t *mask, void *userdata);
/* The mask the caller holds a managed task to now; false once it let it go. */
typedef bool (*pins_now_fn)(pid_t tid, uint64_t start_time, cpu_set_t *mask, void *userdata);

struct pin {
    pid_t tid;
    uint64_t start_time;
    cpu_set_t mask;
    bool managed; /* the caller's own change: ask it again at repair */
};

struct pins {
    struct pin *v;
    size_t n, cap;
    cpu_set_t online;      /* a task reset by the toggle has all of these */
    unsigned repairs_left; /* passes still to make */
    pins_now_fn now;       /* for managed pins */
    void *userdata;
};

/* Record every managed task, and every other tracked task whose mask is
 * narrower than the online CPUs. Returns the number recorded or -ENOMEM.
 * passes: how many pins_repair calls keep looking (the toggle happens
 * asynchronously in systemd). choose NULL: every task's current mask. */
int pins_snapshot(struct pins *p, struct task_table *tt, const cpu_set_t *online, const struct sysops *ops,
                  unsigned passes, pins_choose_fn choose, pins_now_fn now, void *userdata);
/* Put back the recorded masks of tasks now spanning every online CPU (the
 * reset's signature; any other change is someone's choice and is left),
 * each task once: found widened again after that, it was widened by its
 * user. Returns the number re-applied; the snapshot is dropped after its
 * last pass. A user who widens a task to every online CPU before the
 * toggle's reset has reached it looks like the reset and is narrowed back
 * once (the mask alone cannot tell them apart). */
int pins_repair(struct pins *p, const struct sysops *ops);
void pins_clear(struct pins *p);
