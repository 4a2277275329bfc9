/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The applier: the only module that changes the system. It sets per-thread
 * affinity (plan intersected with the thread's original mask) and group CPU
 * sets (a cgroup v1 cpuset the daemon owns, or a systemd unit's AllowedCPUs=),
 * remembers what it changed and restores exactly that, never over a change
 * someone else made after us. What it changed is kept in a state file so a
 * daemon restarted after a crash can undo it (applier_recover).
 *
 * Shutdown: applier_restore_all() then applier_flush_state() (which removes
 * the file once nothing is left to undo), then applier_free().
 *
 * Dry run: every decision is made and logged ("would set pid 123 (comm)
 * affinity 0-1 -> 0"), tasks are recorded as if changed (so dump and explain
 * show the plan and a decision is logged once), but nothing is written: no
 * setaffinity, no cgroup or unit change, no state file.
 *
 * The sections below are implemented in affinity.c, groups.c and recovery.c,
 * the life cycle and applier_restore_all in apply.c; apply-internal.h is what
 * they share. */
#pragma once
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "state.h"
#include "sysops.h"
#include "task.h"

struct applier;

/* ops and state_file are borrowed and must outlive the applier; state_file
 * NULL: no state file. */
int applier_new(const struct sysops *ops, const char *state_file, bool dry_run, struct applier **ret);
void applier_free(struct applier *a);

/* --- per-thread affinity --------------------------------------------------- */

/* Confine t to plan ∩ its original mask. plan NULL = no restriction: restore.
 * Returns 1 if the affinity was changed (or, in dry run, would be), 0 if there
 * was nothing to do or the task is left alone (empty intersection, task gone,
 * kernel refused, someone else changed it since we did), -errno on failure
 * of the applier itself (-ENOMEM). */
int applier_pack_task(struct applier *a, const struct task *t, const cpu_set_t *plan);

/* A new thread or process of a task we packed inherits the packed mask from
 * the kernel. If parent_tid is ours and tid's mask still equals what we set on
 * the parent, record tid with the parent's original mask so it is restored
 * like the parent. Call it on the fork event, before tid is packed itself
 * (packing first would take the inherited mask for its original). Returns 1
 * if adopted, 0 if not, -ENOMEM. */
int applier_adopt_inherited(struct applier *a, pid_t tid, pid_t pid, uint64_t start_time, pid_t parent_tid);
/* The same in two steps, for an adoption that waits: what a task created
 * now inherits from parent_tid (a copy of its record; false if parent_tid
 * is not ours), then, later, the adoption from that copy: the parent may
 * have been restored in between, and its record is gone. */
bool applier_inheritance(const struct applier *a, pid_t parent_tid, struct applied_task *out);
int applier_adopt_from(struct applier *a, pid_t tid, pid_t pid, uint64_t start_time, const struct applied_task *parent);

/* Restore tid's original mask if it is ours and its mask is still what we
 * set (same start time, too); forget it either way. 1 restored, 0 not ours
 * / left as it is. */
int applier_restore_task(struct applier *a, pid_t tid);

/* The jitter slice (slice.h) each thread gets while packed: slice_ns 0 for
 * none; sup is what slice_detect found (copied). A thread packed already
 * keeps what it has until it is restored. */
struct slice_support;
void applier_set_jitter_slice(struct applier *a, const struct slice_support *sup, uint64_t slice_ns);

/* The task exited: forget it without any syscall. */
void applier_forget_task(struct applier *a, pid_t tid);

/* Restore every task and every group; clears the hands-off list (reload and
 * stop start afresh). Returns the number restored. */
int applier_restore_all(struct applier *a);

/* Check up to max_tasks recorded tasks (round robin, so a per-tick call has a
 * bounded cost; 0 = all): a task whose mask is no longer what we set was
 * changed by someone else and is forgotten and left alone; a gone task is
 * forgotten. Returns the number forgotten. */
int applier_verify(struct applier *a, size_t max_tasks);

/* Why tid is left alone: -EPERM/-EINVAL (the kernel refused our change),
 * -EBUSY (someone else changed its mask after us), 0 if it is not. */
int applier_hands_off(const struct applier *a, pid_t tid);

/* For dump/explain. NULL if tid is not ours. */
const struct applied_task *applier_find(const struct applier *a, pid_t tid);
/* The mask a task with record t carries while it is ours: the one set (in a
 * dry run, nothing was set: its original). */
const cpu_set_t *applier_expected_mask(const struct applier *a, const struct applied_task *t);
size_t applier_count(const struct applier *a);
/* Iterate: start with *iter = 0; NULL at the end. No changes during the walk. */
const struct applied_task *applier_next(const struct applier *a, size_t *iter);

/* --- groups ----------------------------------------------------------------- */

/* cgroup v1 cpuset group owned by the daemon (group: path under the cpuset
 * root, e.g. "/turbosched"). Creates it on first use (cpuset.mems copied from
 * its parent), then writes cpuset.cpus = mask ∩ parent's cpus; an empty
 * intersection leaves the group as it is. mask NULL = no restriction (the
 * parent's cpus). 1 written, 0 unchanged, -errno. */
int applier_group_set_v1(struct applier *a, const char *group, const cpu_set_t *mask);

/* Move thread tid into the group (created by applier_group_set_v1 first),
 * recording the cpuset it was in so it goes back there. 1 moved, 0 already
 * there / gone, -errno. */
int applier_group_attach_v1(struct applier *a, const char *group, pid_t tid, pid_t pid, uint64_t start_time);

/* Move tid back to the cpuset it came from (unless it was moved elsewhere
 * since) and stop recording it. 1 moved back, 0 not a member / left alone. */
int applier_group_detach_v1(struct applier *a, const char *group, pid_t tid);

/* Move every recorded member back to its original cpuset (unless it was moved
 * elsewhere since) and remove the group. 1 removed, 0 not ours, -errno. */
int applier_group_remove_v1(struct applier *a, const char *group);

/* systemd unit (a slice, or a service) on cgroup v2: AllowedCPUs= = mask,
 * at runtime. The unit's AllowedCPUs= is read and kept the first time; mask
 * NULL restores it (an empty original is restored as empty = all CPUs).
 * 1 changed, 0 unchanged, -errno. */
int applier_unit_set_allowed_cpus(struct applier *a, const char *unit, const cpu_set_t *mask);

size_t applier_group_count(const struct applier *a);
const struct applied_group *applier_next_group(const struct applier *a, size_t *iter);

/* --- state file --------------------------------------------------------------- */

/* Write the state file if anything changed since the last flush; call once
 * per tick/batch. Removes the file when nothing is left to undo. */
int applier_flush_state(struct applier *a);
/* After a batch of events: write the file when a change was made since the
 * last write (not when changes were only undone or tasks went away), so
 * that a crash strands nothing changed between two ticks; but at most once
 * per STATE_EARLY_WRITE_MS, as each write is a file created and renamed
 * (on a disk file system the rename also starts writeback). A change left
 * waiting is written within STATE_EARLY_WRITE_MS of the first call that
 * found it (now_ms: the caller's clock, which the write time is kept in):
 * by a later call once the last write is that old, or by the caller's
 * timer. applier_changes_due_ms: -1 nothing to write early; 0 now; else
 * the ms until the timer must write it. */
#define STATE_EARLY_WRITE_MS 50
int applier_flush_changes(struct applier *a, uint64_t now_ms);
int64_t applier_changes_due_ms(const struct applier *a, uint64_t now_ms);

/* On start, before any change: read the state file a crashed daemon left.
 * Each task still alive with the same start time whose mask is still the one
 * we set gets its original back; any other is left as it is. cpuset members
 * still in our group go back to their original cpuset and the group is
 * removed; units get their original AllowedCPUs= back. An unusable file is
 * ignored with a message. The file is removed afterwards (not in a dry run).
 * Returns the number of things restored (0 without a usable file), -errno
 * only when the boot id cannot be read or memory runs out. */
int applier_recover(struct applier *a);
