/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the applier's modules share and nothing else sees: the applier
 * itself and a few helpers. The modules: apply.c (life cycle, restore all),
 * affinity.c (per-thread affinity), groups.c (cpuset and unit groups),
 * recovery.c (the state file and crash recovery), apply-slice.c (the jitter
 * slice of packed threads). */
#pragma once
#include "log.h"
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "apply.h"
#include "slice.h"
#include "tidmap.h"
#include "util.h"

struct hands_off {
    pid_t tid;
    uint64_t start_time;
    int reason; /* -EPERM, -EINVAL...: the kernel refused; -EBUSY: changed by someone else */
};

struct applier {
    const struct sysops *ops;
    char *state_file;
    bool dry_run;
    struct tidmap tasks;     /* of struct applied_task */
    struct tidmap hands_off; /* of struct hands_off */
    struct applied_group *groups;
    size_t n_groups;
    size_t verify_cursor;
    /* the last group/unit failure, so one that repeats every tick is logged once */
    char *failed_group;
    int failed_err;
    bool dirty;          /* the state file is behind */
    bool unsaved;        /* ...on a change made, not only one undone */
    uint64_t written_ms; /* when the file was last written (monotonic) */
    uint64_t unsaved_ms; /* when an early write first found a change unsaved (0: none yet) */
    /* Changes go to the file as blocks appended (state_append) while only
     * tasks' records changed: state_fd is the file last written (-1: none),
     * pending the TIDs whose records changed since, journal_lines what the
     * blocks hold. A change a block cannot say (a group's, or a TID not
     * noted for want of memory) needs the whole file at the next write:
     * rewrite; a record removed waits for a whole write at the tick (a
     * stale record harms no one): removed. */
    int state_fd;
    pid_t *pending;
    size_t n_pending, cap_pending;
    size_t journal_lines;
    bool rewrite, removed;
    bool state_warned;
    /* the state file left by a previous run was damaged: a narrowed mask
     * may be one that run set, and is not taken for a task's own silently */
    bool state_untrusted;
    unsigned untrusted_notes;
    /* what tasks cause at will: a mask reset by its owner, a change refused */
    struct log_ratelimit task_logs;
    char boot_id[40];
    /* The jitter slice packed threads get: 0 off, or unsupported. */
    struct slice_support slice_support;
    uint64_t slice_ns;
};

/* A change the state file must learn of before a crash could strand it:
 * mark_changed for a group's, mark_task_changed for one task's record. */
static inline void mark_changed(struct applier *a)
{
    a->dirty = true;
    a->unsaved = true;
    a->rewrite = true;
}
void mark_task_changed(struct applier *a, pid_t tid);
/* A record gone: the file keeps it until it is written again whole. */
static inline void mark_removed(struct applier *a)
{
    a->dirty = true;
    a->removed = true;
}

static inline bool subset_of(const cpu_set_t *part, const cpu_set_t *whole)
{
    cpu_set_t both;
    CPU_AND(&both, part, whole);
    return CPU_EQUAL(&both, part);
}

/* apply.c: the cpulist text of a set, in one of a few rotating buffers so
 * that a message can show several sets. */
const char *apply_fmt_set(const cpu_set_t *set);

/* affinity.c */
/* Is now (a task's mask as sched_getaffinity reports it) the mask we set? */
bool apply_mask_matches(const struct applier *a, const cpu_set_t *now, const cpu_set_t *expected);
/* tid's mask as the kernel keeps it, offline CPUs included. */
int apply_get_full(struct applier *a, pid_t tid, cpu_set_t *ret);
/* Leave tid alone from now on, for reason (see struct hands_off). */
void apply_set_hands_off(struct applier *a, pid_t tid, uint64_t start_time, int reason);

/* apply-slice.c */
/* e was just recorded as packed: give it the jitter slice (recorded in
 * e->slice). Failures are logged; the mask stays packed either way. */
void apply_slice_pack(struct applier *a, struct applied_task *e);
/* We are done with tid (t: its record, or a previous run's): put back the
 * attributes we changed, unless someone changed them after us. true when
 * they were put back. */
bool apply_slice_undo(struct applier *a, pid_t tid, const struct applied_task *t);

/* groups.c */
void apply_group_free(struct applied_group *g);
void apply_group_drop(struct applier *a, struct applied_group *g);
void apply_member_drop(struct applier *a, struct applied_group *g, size_t i);
struct applied_member *apply_member_find(struct applied_group *g, pid_t tid, size_t *idx);
/* Undo what we did to a group: 1 restored, 0 nothing to do, -errno. */
int apply_cpuset_undo(struct applier *a, const struct applied_group *g, bool applied);
int apply_unit_undo(struct applier *a, const struct applied_group *g);
