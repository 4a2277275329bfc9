/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Per-thread affinity: confine a thread to plan ∩ its original mask,
 * remember what we set, and restore exactly that. See apply.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apply-internal.h"
#include "log.h"

/* What a task's mask reads now if nobody else touched it: in a dry run we
 * never changed it. */
static const cpu_set_t *expected_mask(const struct applier *a, const struct applied_task *t)
{
    return a->dry_run ? &t->original : &t->set;
}

const cpu_set_t *applier_expected_mask(const struct applier *a, const struct applied_task *t)
{
    return expected_mask(a, t);
}

/* Is now (a task's mask as sched_getaffinity reports it) the mask we set?
 * The kernel reports the mask intersected with the online CPUs and keeps the
 * mask itself while a CPU is offline: a packed task whose CPU went offline
 * is still ours (and gets its original back when the time comes). */
bool apply_mask_matches(const struct applier *a, const cpu_set_t *now, const cpu_set_t *expected)
{
    if (CPU_EQUAL(now, expected))
        return true;
    cpu_set_t online, in;
    if (!a->ops->online_cpus || a->ops->online_cpus(a->ops->userdata, &online) < 0)
        return false;
    /* the kernel reports the mask without offline CPUs: empty when every
     * CPU we confined the task to has gone (it moves when it next wakes) */
    CPU_AND(&in, expected, &online);
    return CPU_EQUAL(now, &in);
}

static void forget(struct applier *a, pid_t tid)
{
    if (tidmap_find(&a->tasks, tid)) {
        tidmap_remove(&a->tasks, tid);
        mark_removed(a);
    }
}

void apply_set_hands_off(struct applier *a, pid_t tid, uint64_t start_time, int reason)
{
    struct hands_off *h = tidmap_find(&a->hands_off, tid);
    if (h) {
        h->start_time = start_time;
        h->reason = reason;
        return;
    }
    /* without memory we may log about this task again: harmless */
    (void)tidmap_add(&a->hands_off, &(struct hands_off){.tid = tid, .start_time = start_time, .reason = reason});
}

/* Someone else set tid's mask after we did: it is theirs now. */
static void someone_else(struct applier *a, const struct applied_task *t, const cpu_set_t *now)
{
    log_ratelimited(&a->task_logs, LOG_INFO,
                    "pid %d (%s): affinity changed to %s by someone else after we set %s, leaving it alone",
                    (int)t->tid, t->comm, apply_fmt_set(now), apply_fmt_set(&t->set));
    apply_set_hands_off(a, t->tid, t->start_time, -EBUSY);
    /* the slice is still ours unless its attributes changed too */
    (void)apply_slice_undo(a, t->tid, t);
    forget(a, t->tid);
}

/* The kernel refused a change: log once (the task goes on the hands-off list). */
static void refused(struct applier *a, pid_t tid, uint64_t start_time, const char *comm, int r)
{
    int level = log_ratelimit_level(&a->task_logs, LOG_WARNING);
    log_errno_full(level, r, "pid %d (%s): sched_setaffinity: %m, leaving it alone", (int)tid, comm);
    apply_set_hands_off(a, tid, start_time, r);
}

/* Put the original mask back; the caller checked the mask is still ours.
 * Forgets the task in every case. */
static int restore_entry(struct applier *a, struct applied_task *e)
{
    struct applied_task t = *e;
    forget(a, t.tid);
    (void)apply_slice_undo(a, t.tid, &t);
    if (a->dry_run) {
        log_info("would restore pid %d (%s) affinity %s -> %s", (int)t.tid, t.comm, apply_fmt_set(&t.set),
                 apply_fmt_set(&t.original));
        return 1;
    }
    int r = a->ops->setaffinity(a->ops->userdata, t.tid, &t.original);
    if (errno_is_gone(r)) {
        log_debug("pid %d (%s): gone before its affinity was restored", (int)t.tid, t.comm);
        return 0;
    }
    if (r < 0) {
        refused(a, t.tid, t.start_time, t.comm, r);
        return 0;
    }
    log_debug("pid %d (%s): affinity %s -> %s (restored)", (int)t.tid, t.comm, apply_fmt_set(&t.set),
              apply_fmt_set(&t.original));
    return 1;
}

/* tid's mask as the kernel keeps it, offline CPUs included: what originals
 * are recorded from and what "still ours" is judged on. getaffinity leaves
 * out every CPU not active at the moment (see sysops.h), so a mask read
 * from it while a CPU is offline, or on its way down, would be recorded
 * without that CPU for good. Without the full read (none in the sysops, or
 * a status file we cannot parse) getaffinity stands in. */
int apply_get_full(struct applier *a, pid_t tid, cpu_set_t *ret)
{
    if (a->ops->getaffinity_full) {
        int r = a->ops->getaffinity_full(a->ops->userdata, tid, ret);
        if (r >= 0 || errno_is_gone(r))
            return r;
        log_debug_errno(r, "pid %d: reading its full mask: %m, taking sched_getaffinity's", (int)tid);
    }
    return a->ops->getaffinity(a->ops->userdata, tid, ret);
}
/* When no CPU we confined a task to is active any more, the kernel gives it
 * a fallback mask as it wakes (v1: its cpuset's CPUs, every possible CPU in
 * the root; v2: its cpuset's CPUs): a strict superset of what we set.
 * full is the mask kept now, reported what getaffinity showed (full minus
 * the CPUs not active): when it has none of ours, they are all inactive,
 * even while /sys/devices/system/cpu/online still lists a CPU on its way
 * down. That change is the kernel's, not a user's: the task stays ours, to
 * get its original back and be packed again. A user who narrows a mask, or
 * changes it while our CPUs are up, never matches this. */
static bool kernel_fallback(const struct applier *a, const struct applied_task *e, const cpu_set_t *full,
                            const cpu_set_t *reported)
{
    if (a->dry_run || CPU_EQUAL(full, &e->set) || !subset_of(&e->set, full))
        return false;
    cpu_set_t left;
    CPU_AND(&left, &e->set, reported);
    if (CPU_COUNT(&left) == 0)
        return true;
    cpu_set_t online;
    if (!a->ops->online_cpus || a->ops->online_cpus(a->ops->userdata, &online) < 0)
        return false;
    CPU_AND(&left, &e->set, &online);
    return CPU_COUNT(&left) == 0;
}

enum ours {
    NOT_OURS = 0, /* gone, or changed by someone else: forgotten */
    OURS,         /* the mask is still the one we set */
    RESET,        /* the kernel's fallback replaced it: original given back, forgotten */
};

/* Read tid's mask and check it is still what we set. The cheap read first:
 * a mask reported as exactly what we set is ours (the kernel only ever
 * leaves CPUs out of the report). Anything else is judged on the full mask,
 * which a CPU going offline does not change. */
static enum ours check_ours(struct applier *a, struct applied_task *e)
{
    cpu_set_t reported, full;
    int r = a->ops->getaffinity(a->ops->userdata, e->tid, &reported);
    if (r >= 0 && CPU_EQUAL(&reported, expected_mask(a, e)))
        return OURS;
    if (r >= 0 && a->ops->getaffinity_full) {
        full = reported;
        r = apply_get_full(a, e->tid, &full);
    } else if (r >= 0)
        full = reported;
    if (r < 0) {
        if (!errno_is_gone(r))
            log_warning_errno(r, "pid %d (%s): reading its affinity: %m, forgetting it", (int)e->tid, e->comm);
        forget(a, e->tid);
        return NOT_OURS;
    }
    if (a->ops->getaffinity_full ? CPU_EQUAL(&full, expected_mask(a, e))
                                 : apply_mask_matches(a, &reported, expected_mask(a, e)))
        return OURS;
    if (kernel_fallback(a, e, &full, &reported)) {
        log_info("pid %d (%s): CPUs %s went offline and the kernel moved it to %s: giving its original %s "
                 "back",
                 (int)e->tid, e->comm, apply_fmt_set(&e->set), apply_fmt_set(&full), apply_fmt_set(&e->original));
        return restore_entry(a, e) > 0 ? RESET : NOT_OURS;
    }
    someone_else(a, e, &full);
    return NOT_OURS;
}

static int set_mask(struct applier *a, pid_t tid, const char *comm, const cpu_set_t *from, const cpu_set_t *to)
{
    if (a->dry_run) {
        log_info("would set pid %d (%s) affinity %s -> %s", (int)tid, comm, apply_fmt_set(from), apply_fmt_set(to));
        return 0;
    }
    int r = a->ops->setaffinity(a->ops->userdata, tid, to);
    if (r >= 0)
        log_debug("pid %d (%s): affinity %s -> %s", (int)tid, comm, apply_fmt_set(from), apply_fmt_set(to));
    return r;
}

/* A task we confined whose mask is still ours: confine it to plan ∩ its
 * original now, or give the original back when nothing is left to restrict. */
static int repack_known(struct applier *a, const struct task *t, struct applied_task *e, const cpu_set_t *plan)
{
    cpu_set_t want;
    CPU_AND(&want, plan, &e->original);
    /* nothing left to restrict: back to where it was */
    if (CPU_COUNT(&want) == 0 || CPU_EQUAL(&want, &e->original))
        return restore_entry(a, e);
    if (CPU_EQUAL(&want, &e->set))
        return 0;
    int r = set_mask(a, e->tid, e->comm, &e->set, &want);
    if (errno_is_gone(r)) {
        forget(a, t->tid);
        return 0;
    }
    if (r < 0) {
        /* we cannot move it: put it back the way it was and stay away */
        log_warning_errno(r, "pid %d (%s): sched_setaffinity: %m, restoring it and leaving it alone", (int)t->tid,
                          t->comm);
        int k = restore_entry(a, e);
        apply_set_hands_off(a, t->tid, t->start_time, r);
        return k;
    }
    e->set = want;
    mark_task_changed(a, e->tid);
    return 1;
}

/* Does t's mask (current) come from a thread group leader or a parent we
 * packed? Then its original is theirs (into *original), or it could never
 * be restored; so is its slice record (into *slice), as fork copies the
 * scheduling attributes too. */
static bool take_inherited_original(struct applier *a, const struct task *t, const cpu_set_t *plan,
                                    const cpu_set_t *current, cpu_set_t *original, struct slice_saved *slice)
{
    /* A thread we never saw created (events lost, or no adopt call) may
     * carry the mask it inherited from its packed thread group leader. */
    const struct applied_task *leader = t->pid != t->tid ? tidmap_find(&a->tasks, t->pid) : NULL;
    if (leader && apply_mask_matches(a, current, expected_mask(a, leader))) {
        *original = leader->original;
        *slice = leader->slice;
        log_debug("pid %d (%s): carries the mask we set on its leader %d, taking over its original %s", (int)t->tid,
                  t->comm, (int)t->pid, apply_fmt_set(original));
        return true;
    }
    /* The same for a process: one whose fork we never saw (events lost and
     * found by a rescan, or created while the table was full) inherited the
     * mask we set on its parent. A mask already within the plan is the sign;
     * taken for its original it would never be undone. */
    const struct applied_task *parent = NULL;
    pid_t ppid;
    if (a->ops->parent_of && subset_of(current, plan) && a->ops->parent_of(a->ops->userdata, t->tid, &ppid) == 0 &&
        ppid != t->tid)
        parent = tidmap_find(&a->tasks, ppid);
    if (parent && apply_mask_matches(a, current, expected_mask(a, parent))) {
        *original = parent->original;
        *slice = parent->slice;
        log_debug("pid %d (%s): carries the mask we set on its parent %d, taking over its original %s", (int)t->tid,
                  t->comm, (int)parent->tid, apply_fmt_set(original));
        return true;
    }
    return false;
}

/* The start time was read when the task's event was handled, maybe long
 * ago under a flood of events: the TID may name another task by now (a
 * reused PID), which must not be touched. Checked last, right before the
 * first change. */
static bool still_the_task(struct applier *a, const struct task *t)
{
    if (t->flags & TASK_F_START_FRESH)
        return true; /* read microseconds ago, for this very event */
    uint64_t start_time;
    int r = a->ops->task_start_time(a->ops->userdata, t->tid, &start_time);
    if (r < 0 || start_time != t->start_time) {
        log_debug("pid %d (%s): %s before it was packed, leaving the TID alone", (int)t->tid, t->comm,
                  r < 0 ? "gone" : "reused");
        return false;
    }
    return true;
}

/* Set want on a task not ours yet. 1 set, 0 gone, -errno refused (left
 * alone from now on). */
static int set_new_mask(struct applier *a, const struct task *t, const cpu_set_t *current, const cpu_set_t *want)
{
    int r = set_mask(a, t->tid, t->comm, current, want);
    if (errno_is_gone(r))
        return 0;
    if (r < 0) {
        refused(a, t->tid, t->start_time, t->comm, r);
        return r;
    }
    return 1;
}

/* After a damaged state file, a narrowed mask may be one a previous run set. */
static void note_untrusted(struct applier *a, const struct task *t, const cpu_set_t *original)
{
    cpu_set_t online;
    if (a->ops->online_cpus(a->ops->userdata, &online) == 0 && !subset_of(&online, original))
        log_internal(a->untrusted_notes++ < 64 ? LOG_NOTICE : LOG_DEBUG,
                     "pid %d (%s): mask %s may be one a previous run set (its state file was damaged); taken "
                     "as the task's own",
                     (int)t->tid, t->comm, apply_fmt_set(original));
}

/* Remember a task we confined (or, in a dry run, would have), with the
 * jitter slice it was given or inherited. */
static int record_new(struct applier *a, const struct task *t, const cpu_set_t *original, const cpu_set_t *want,
                      const cpu_set_t *current, bool changed, const struct slice_saved *slice)
{
    struct applied_task rec = {.tid = t->tid,
                               .pid = t->pid,
                               .start_time = t->start_time,
                               .original = *original,
                               .set = *want,
                               .slice = *slice};
    memcpy(rec.comm, t->comm, sizeof rec.comm);
    rec.comm[sizeof rec.comm - 1] = '\0';
    if (!tidmap_add(&a->tasks, &rec)) {
        /* we could not remember it, so we must not leave it changed */
        log_err("pid %d (%s): out of memory recording its affinity, restoring it", (int)t->tid, t->comm);
        int r = !a->dry_run && changed ? a->ops->setaffinity(a->ops->userdata, t->tid, current) : 0;
        if (r < 0 && !errno_is_gone(r))
            log_error_errno(r, "pid %d (%s): restoring its affinity: %m; left on %s, unrecorded", (int)t->tid, t->comm,
                            apply_fmt_set(want));
        return -ENOMEM; /* the caller takes back a slice it gave */
    }
    mark_task_changed(a, t->tid);
    return changed;
}

/* A task not ours (known_original NULL), or just given back after the
 * kernel's fallback (known_original: its original, as getaffinity would
 * omit the CPUs still offline): confine it to plan ∩ its original. */
static int pack_new(struct applier *a, const struct task *t, const cpu_set_t *plan, const cpu_set_t *known_original)
{
    cpu_set_t original, want;
    int r = 0;
    if (known_original)
        original = *known_original;
    else
        r = apply_get_full(a, t->tid, &original);
    if (errno_is_gone(r))
        return 0;
    if (r < 0) {
        log_warning_errno(r, "pid %d (%s): sched_getaffinity: %m, leaving it alone", (int)t->tid, t->comm);
        apply_set_hands_off(a, t->tid, t->start_time, r);
        return 0;
    }
    cpu_set_t current = original;
    struct slice_saved slice = {.applied = false};
    bool inherited = take_inherited_original(a, t, plan, &current, &original, &slice);
    CPU_AND(&want, plan, &original);
    if (CPU_COUNT(&want) == 0) {
        if (!inherited) {
            /* a mask the user narrowed is never widened or moved */
            log_debug("pid %d (%s): mask %s has no CPU in the plan %s, leaving it alone", (int)t->tid, t->comm,
                      apply_fmt_set(&original), apply_fmt_set(plan));
            return 0;
        }
        want = original; /* the mask is ours: give the original back */
    }
    /* want is a subset of the mask the kernel keeps (or the original an
     * inherited mask came from), so the kernel stores it as it is and
     * reads back exactly it afterwards. */
    bool changed = !CPU_EQUAL(&want, &current), restricting = !CPU_EQUAL(&want, &original);
    if (changed && !still_the_task(a, t))
        return 0;
    /* The slice comes with a restriction (unless inherited with the mask),
     * and before the mask: moved first, the task sits on the packed CPU's
     * run queue, and setting its slice there took that queue's lock across
     * CPUs (of 16 unpaced storms alternating with mask first, 13 spent
     * less, median ratio 0.90). A mask refused, or a record that cannot be
     * kept, takes the slice back. */
    struct applied_task holder = {.tid = t->tid};
    memcpy(holder.comm, t->comm, sizeof holder.comm);
    holder.comm[sizeof holder.comm - 1] = '\0';
    bool sliced_now = false;
    if (restricting && !slice.applied) {
        apply_slice_pack(a, &holder);
        slice = holder.slice;
        sliced_now = slice.applied;
    }
    if (changed && (r = set_new_mask(a, t, &current, &want)) <= 0) {
        if (r < 0 && sliced_now)
            (void)apply_slice_undo(a, t->tid, &holder);
        return 0;
    }
    if (a->state_untrusted && !inherited && a->ops->online_cpus)
        note_untrusted(a, t, &original);
    if (!restricting)
        return changed; /* nothing restricted: nothing to remember */
    r = record_new(a, t, &original, &want, &current, changed, &slice);
    if (r == -ENOMEM && sliced_now)
        (void)apply_slice_undo(a, t->tid, &holder);
    return r;
}

int applier_pack_task(struct applier *a, const struct task *t, const cpu_set_t *plan)
{
    if (!plan)
        return applier_restore_task(a, t->tid);

    struct hands_off *h = tidmap_find(&a->hands_off, t->tid);
    if (h) {
        if (h->start_time == t->start_time)
            return 0;
        tidmap_remove(&a->hands_off, t->tid); /* TID reused by a new task */
    }

    struct applied_task *e = tidmap_find(&a->tasks, t->tid);
    if (e && e->start_time != t->start_time) {
        forget(a, t->tid); /* ours exited unseen; TID reused */
        e = NULL;
    }
    if (!e)
        return pack_new(a, t, plan, NULL);
    /* check_ours may forget e: keep its original for the RESET case */
    cpu_set_t known_original = e->original;
    switch (check_ours(a, e)) {
    case OURS:
        return repack_known(a, t, e, plan);
    case RESET:
        return pack_new(a, t, plan, &known_original);
    default:
        return 0;
    }
}

bool applier_inheritance(const struct applier *a, pid_t parent_tid, struct applied_task *out)
{
    const struct applied_task *p = tidmap_find(&a->tasks, parent_tid);
    if (p)
        *out = *p;
    return p != NULL;
}

int applier_adopt_inherited(struct applier *a, pid_t tid, pid_t pid, uint64_t start_time, pid_t parent_tid)
{
    struct applied_task parent;
    if (!applier_inheritance(a, parent_tid, &parent))
        return 0;
    return applier_adopt_from(a, tid, pid, start_time, &parent);
}

int applier_adopt_from(struct applier *a, pid_t tid, pid_t pid, uint64_t start_time, const struct applied_task *p)
{
    if (tid == p->tid)
        return 0;
    const struct applied_task *e = tidmap_find(&a->tasks, tid);
    if (e) {
        if (e->start_time == start_time)
            return 0;
        forget(a, tid);
    }
    cpu_set_t now;
    int r = apply_get_full(a, tid, &now);
    if (r < 0) {
        if (!errno_is_gone(r))
            log_warning_errno(r,
                              "pid %d: reading the mask it inherited from %d: %m; not adopted, so not restored "
                              "with it",
                              (int)tid, (int)p->tid);
        return 0;
    }
    /* the kernel copied the parent's mask at fork; anything else is not ours */
    if (!apply_mask_matches(a, &now, expected_mask(a, p)))
        return 0;
    /* fork copied the parent's scheduling attributes too: its slice record
     * holds for the child (restore checks them before undoing anything) */
    struct applied_task rec = *p;
    rec.tid = tid;
    rec.pid = pid;
    rec.start_time = start_time;
    if (!tidmap_add(&a->tasks, &rec)) {
        log_err("pid %d (%s): out of memory recording the affinity it inherited, restoring it", (int)tid, rec.comm);
        (void)restore_entry(a, &rec); /* it logs a failure */
        return -ENOMEM;
    }
    mark_task_changed(a, tid);
    log_debug("pid %d (%s): inherited affinity %s from %d, adopted", (int)tid, rec.comm, apply_fmt_set(&rec.set),
              (int)p->tid);
    return 1;
}

int applier_restore_task(struct applier *a, pid_t tid)
{
    struct applied_task *e = tidmap_find(&a->tasks, tid);
    if (!e)
        return 0;
    uint64_t start_time;
    int r = a->ops->task_start_time(a->ops->userdata, tid, &start_time);
    if (r < 0 || start_time != e->start_time) {
        /* gone, or the TID now names another task: nothing of ours to undo */
        forget(a, tid);
        return 0;
    }
    switch (check_ours(a, e)) {
    case OURS:
        return restore_entry(a, e);
    case RESET:
        return 1;
    default:
        return 0;
    }
}

void applier_forget_task(struct applier *a, pid_t tid)
{
    forget(a, tid);
    tidmap_remove(&a->hands_off, tid);
    /* An exited member: nothing to move back. */
    for (size_t k = 0; k < a->n_groups; k++) {
        size_t i;
        if (a->groups[k].kind == GROUP_CPUSET_V1 && apply_member_find(&a->groups[k], tid, &i))
            apply_member_drop(a, &a->groups[k], i);
    }
}

int applier_verify(struct applier *a, size_t max_tasks)
{
    size_t n = a->tasks.n;
    if (max_tasks == 0 || max_tasks > n)
        max_tasks = n;
    int forgotten = 0;
    for (size_t k = 0; k < max_tasks && a->tasks.n > 0; k++) {
        if (a->verify_cursor >= a->tasks.n)
            a->verify_cursor = 0;
        struct applied_task *e = tidmap_item(&a->tasks, a->verify_cursor);
        if (check_ours(a, e) == OURS)
            a->verify_cursor++;
        else
            forgotten++; /* the last element moved into this place: check it next */
    }
    return forgotten;
}

int applier_hands_off(const struct applier *a, pid_t tid)
{
    const struct hands_off *h = tidmap_find(&a->hands_off, tid);
    return h ? h->reason : 0;
}

const struct applied_task *applier_find(const struct applier *a, pid_t tid) { return tidmap_find(&a->tasks, tid); }

size_t applier_count(const struct applier *a) { return a->tasks.n; }

const struct applied_task *applier_next(const struct applier *a, size_t *iter)
{
    if (*iter >= a->tasks.n)
        return NULL;
    return tidmap_item(&a->tasks, (*iter)++);
}
