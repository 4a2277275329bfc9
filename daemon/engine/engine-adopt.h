/* SPDX-License-Identifier: GPL-2.0-or-later */
/* New processes of tasks the daemon packed: their adoption (engine-adopt.c). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "state.h"

struct engine;
struct task;

/* New processes of a task whose mask we set, whose adoption waits
 * (engine-adopt.c): each with its creator's record as it was at the fork. */
struct engine_adopt_due {
    pid_t tid;
    uint64_t fork_ns; /* the fork event's timestamp: which task of that TID */
    struct applied_task parent;
};
/* The records of tasks that exited while confined, one per distinct
 * (set, original) pair, the earliest start kept: what a process whose fork
 * event was lost and whose creator is gone may carry (engine-adopt.c). */
#define ADOPT_GONE_MAX 16
struct engine_adopt {
    struct engine_adopt_due *items;
    size_t n, cap;
    uint64_t at_exec, at_tick, at_restore; /* adopted there */
    struct applied_task gone[ADOPT_GONE_MAX];
    unsigned n_gone, next_gone;
    uint64_t orphans; /* adopted by the mask an exited record had set */
};

/* A process created by one whose mask we set inherited that mask.
 * Recording it needs its start time, from its /proc/PID/stat,
 * and reading that file waits while the process is inside an exec, which
 * a new process usually is: on a CPU crowded with what was packed there
 * it waited 100-250 ms, with every event behind it (a storm of 20,000
 * tasks left 1-2% unplaced when its forking parent had been packed). So
 * its adoption and placement wait: for its exec event (after which the
 * file no longer waits), else for a tick once it is a tick old, and for
 * any restore of everything. engine_adopt_defer: true if t waits, with
 * parent, the record it inherited. */
bool engine_adopt_defer(struct engine *e, struct task *t, const struct applied_task *parent);
/* What a task created now by parent_tid inherits (false: nothing of ours):
 * its record, or, while it waits itself, the one it inherited. A process
 * forked by a child that waits is confined by its grandparent's mask too. */
bool engine_inheritance(struct engine *e, pid_t parent_tid, struct applied_task *out);
/* For a process found without its fork event (lost, and found by a rescan):
 * what it inherits (engine_inheritance) from its nearest ancestor, a few
 * generations up, that has a record; false for none. Reads nothing while
 * no task is packed. */
bool engine_ancestor_inheritance(struct engine *e, pid_t tid, struct applied_task *out);
/* A task with a record is gone: keep what it was set to (engine_adopt). */
void engine_adopt_note_gone(struct engine *e, pid_t tid);
/* For a process found without its fork event whose ancestors have no
 * record: orphaned (its parent is init now), started after a task that
 * exited confined, and carrying exactly the mask the daemon had set on
 * that one. Its creator's record is gone, so its mask is recognised by
 * value: without this it kept the confined mask for good, taken for one
 * its user chose. A user's own pin equal to the plan's mask on a process
 * whose parent is init is taken for ours too (the mask alone cannot tell). */
bool engine_orphan_inheritance(struct engine *e, struct task *t, struct applied_task *out);
/* t's exec came, its start time read: adopt it now (before its placement). */
void engine_adopt_at_exec(struct engine *e, struct task *t);
/* Adopt and place the waiting tasks forked before older_than_ns (0: all). */
void engine_adopt_due(struct engine *e, uint64_t older_than_ns);
void engine_adopt_free(struct engine *e);
