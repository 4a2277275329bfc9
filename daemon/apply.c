#include "apply.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "tidmap.h"
#include "util.h"

#define CPULIST_MAX 8192

struct hands_off {
    pid_t tid;
    uint64_t start_time;
    int reason;                 /* -EPERM, -EINVAL...: the kernel refused; -EBUSY: changed by someone else */
};

/* --- the applier -------------------------------------------------------------------- */

struct applier {
    const struct sysops *ops;
    char *state_file;
    bool dry_run;
    struct tidmap tasks;        /* of struct applied_task */
    struct tidmap hands_off;    /* of struct hands_off */
    struct applied_group *groups;
    size_t n_groups;
    size_t verify_cursor;
    /* the last group/unit failure, so one that repeats every tick is logged once */
    char *failed_group;
    int failed_err;
    bool dirty;                 /* the state file is behind */
    bool unsaved;               /* ...on a change made, not only one undone */
    uint64_t written_ms;        /* when the file was last written (monotonic) */
    bool state_warned;
    /* the state file left by a previous run was damaged: a narrowed mask
     * may be one that run set, and is not taken for a task's own silently */
    bool state_untrusted;
    unsigned untrusted_notes;
    char boot_id[40];
};

/* A change the state file must learn of before a crash could strand it. */
static void mark_changed(struct applier *a)
{
    a->dirty = true;
    a->unsaved = true;
}

int applier_new(const struct sysops *ops, const char *state_file, bool dry_run, struct applier **ret)
{
    struct applier *a = calloc(1, sizeof *a);
    if (!a)
        return -ENOMEM;
    a->ops = ops;
    a->dry_run = dry_run;
    tidmap_init(&a->tasks, sizeof(struct applied_task));
    tidmap_init(&a->hands_off, sizeof(struct hands_off));
    if (state_file && !(a->state_file = strdup(state_file))) {
        free(a);
        return -ENOMEM;
    }
    *ret = a;
    return 0;
}

static void group_free(struct applied_group *g)
{
    applied_group_free_members(g);
    free(g->name);
}

void applier_free(struct applier *a)
{
    if (!a)
        return;
    tidmap_done(&a->tasks);
    tidmap_done(&a->hands_off);
    for (size_t i = 0; i < a->n_groups; i++)
        group_free(&a->groups[i]);
    free(a->groups);
    free(a->failed_group);
    free(a->state_file);
    free(a);
}

/* cpulist text of a set, in one of a few rotating buffers so that a message
 * can show several sets. */
static const char *fmt_set(const cpu_set_t *set)
{
    static char bufs[4][CPULIST_MAX];
    static unsigned next;
    char *b = bufs[next++ % ELEMENTSOF(bufs)];
    if (cpulist_format(set, b, CPULIST_MAX) < 0)
        snprintf(b, CPULIST_MAX, "(%d CPUs)", CPU_COUNT(set));
    return b;
}

/* What a task's mask reads now if nobody else touched it: in a dry run we
 * never changed it. */
static const cpu_set_t *expected_mask(const struct applier *a, const struct applied_task *t)
{
    return a->dry_run ? &t->original : &t->set;
}

/* Is now (a task's mask as sched_getaffinity reports it) the mask we set?
 * The kernel reports the mask intersected with the online CPUs and keeps the
 * mask itself while a CPU is offline: a packed task whose CPU went offline
 * is still ours (and gets its original back when the time comes). */
static bool mask_matches(const struct applier *a, const cpu_set_t *now, const cpu_set_t *expected)
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
        a->dirty = true;
    }
}

static void set_hands_off(struct applier *a, pid_t tid, uint64_t start_time, int reason)
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
    log_info("pid %d (%s): affinity changed to %s by someone else after we set %s, leaving it alone",
             (int)t->tid, t->comm, fmt_set(now), fmt_set(&t->set));
    set_hands_off(a, t->tid, t->start_time, -EBUSY);
    forget(a, t->tid);
}

/* The kernel refused a change: log once (the task goes on the hands-off list). */
static void refused(struct applier *a, pid_t tid, uint64_t start_time, const char *comm, int r)
{
    log_warning("pid %d (%s): sched_setaffinity: %s, leaving it alone", (int)tid, comm, strerror(-r));
    set_hands_off(a, tid, start_time, r);
}

/* Put the original mask back; the caller checked the mask is still ours.
 * Forgets the task in every case. */
static int restore_entry(struct applier *a, struct applied_task *e)
{
    struct applied_task t = *e;
    forget(a, t.tid);
    if (a->dry_run) {
        log_info("would restore pid %d (%s) affinity %s -> %s", (int)t.tid, t.comm, fmt_set(&t.set),
                 fmt_set(&t.original));
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
    log_debug("pid %d (%s): affinity %s -> %s (restored)", (int)t.tid, t.comm, fmt_set(&t.set),
              fmt_set(&t.original));
    return 1;
}

/* tid's mask as the kernel keeps it, offline CPUs included: what originals
 * are recorded from and what "still ours" is judged on. getaffinity leaves
 * out every CPU not active at the moment (see sysops.h), so a mask read
 * from it while a CPU is offline, or on its way down, would be recorded
 * without that CPU for good. Without the full read (none in the sysops, or
 * a status file we cannot parse) getaffinity stands in. */
static int get_full(struct applier *a, pid_t tid, cpu_set_t *ret)
{
    if (a->ops->getaffinity_full) {
        int r = a->ops->getaffinity_full(a->ops->userdata, tid, ret);
        if (r >= 0 || errno_is_gone(r))
            return r;
        log_debug("pid %d: reading its full mask: %s, taking sched_getaffinity's", (int)tid, strerror(-r));
    }
    return a->ops->getaffinity(a->ops->userdata, tid, ret);
}

static bool subset_of(const cpu_set_t *part, const cpu_set_t *whole)
{
    cpu_set_t both;
    CPU_AND(&both, part, whole);
    return CPU_EQUAL(&both, part);
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
    NOT_OURS = 0,       /* gone, or changed by someone else: forgotten */
    OURS,               /* the mask is still the one we set */
    RESET,              /* the kernel's fallback replaced it: original given back, forgotten */
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
        r = get_full(a, e->tid, &full);
    } else if (r >= 0)
        full = reported;
    if (r < 0) {
        if (!errno_is_gone(r))
            log_warning("pid %d (%s): reading its affinity: %s, forgetting it", (int)e->tid, e->comm, strerror(-r));
        forget(a, e->tid);
        return NOT_OURS;
    }
    if (a->ops->getaffinity_full ? CPU_EQUAL(&full, expected_mask(a, e))
                                 : mask_matches(a, &reported, expected_mask(a, e)))
        return OURS;
    if (kernel_fallback(a, e, &full, &reported)) {
        log_info("pid %d (%s): CPUs %s went offline and the kernel moved it to %s: giving its original %s "
                 "back", (int)e->tid, e->comm, fmt_set(&e->set), fmt_set(&full), fmt_set(&e->original));
        return restore_entry(a, e) > 0 ? RESET : NOT_OURS;
    }
    someone_else(a, e, &full);
    return NOT_OURS;
}

static int set_mask(struct applier *a, pid_t tid, const char *comm, const cpu_set_t *from, const cpu_set_t *to)
{
    if (a->dry_run) {
        log_info("would set pid %d (%s) affinity %s -> %s", (int)tid, comm, fmt_set(from), fmt_set(to));
        return 0;
    }
    int r = a->ops->setaffinity(a->ops->userdata, tid, to);
    if (r >= 0)
        log_debug("pid %d (%s): affinity %s -> %s", (int)tid, comm, fmt_set(from), fmt_set(to));
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
        tidmap_remove(&a->hands_off, t->tid);       /* TID reused by a new task */
    }

    struct applied_task *e = tidmap_find(&a->tasks, t->tid);
    if (e && e->start_time != t->start_time) {
        forget(a, t->tid);                      /* ours exited unseen; TID reused */
        e = NULL;
    }

    cpu_set_t want, known_original;
    if (e)
        known_original = e->original;
    enum ours ours = e ? check_ours(a, e) : NOT_OURS;
    if (e && ours == NOT_OURS)
        return 0;
    if (ours == OURS) {
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
            log_warning("pid %d (%s): sched_setaffinity: %s, restoring it and leaving it alone", (int)t->tid,
                        t->comm, strerror(-r));
            int k = restore_entry(a, e);
            set_hands_off(a, t->tid, t->start_time, r);
            return k;
        }
        e->set = want;
        mark_changed(a);
        return 1;
    }

    /* Just given back after the kernel's fallback: its original is known,
     * and getaffinity would omit the CPUs still offline. */
    cpu_set_t original;
    int r = 0;
    if (ours == RESET)
        original = known_original;
    else
        r = get_full(a, t->tid, &original);
    if (errno_is_gone(r))
        return 0;
    if (r < 0) {
        log_warning("pid %d (%s): sched_getaffinity: %s, leaving it alone", (int)t->tid, t->comm, strerror(-r));
        set_hands_off(a, t->tid, t->start_time, r);
        return 0;
    }
    /* A thread we never saw created (events lost, or no adopt call) may
     * carry the mask it inherited from its packed thread group leader: its
     * original is the leader's, or it could never be restored. */
    const struct applied_task *leader = t->pid != t->tid ? tidmap_find(&a->tasks, t->pid) : NULL;
    cpu_set_t current = original;
    bool inherited = leader && mask_matches(a, &original, expected_mask(a, leader));
    if (inherited) {
        original = leader->original;
        log_debug("pid %d (%s): carries the mask we set on its leader %d, taking over its original %s",
                  (int)t->tid, t->comm, (int)t->pid, fmt_set(&original));
    }
    /* The same for a process: one whose fork we never saw (events lost and
     * found by a rescan, or created while the table was full) inherited the
     * mask we set on its parent. A mask already within the plan is the sign;
     * taken for its original it would never be undone. */
    const struct applied_task *parent = NULL;
    pid_t ppid;
    if (!inherited && a->ops->parent_of && subset_of(&current, plan) &&
        a->ops->parent_of(a->ops->userdata, t->tid, &ppid) == 0 && ppid != t->tid)
        parent = tidmap_find(&a->tasks, ppid);
    if (parent && mask_matches(a, &current, expected_mask(a, parent))) {
        inherited = true;
        original = parent->original;
        log_debug("pid %d (%s): carries the mask we set on its parent %d, taking over its original %s",
                  (int)t->tid, t->comm, (int)parent->tid, fmt_set(&original));
    }
    CPU_AND(&want, plan, &original);
    if (CPU_COUNT(&want) == 0) {
        if (!inherited) {
            /* a mask the user narrowed is never widened or moved */
            log_debug("pid %d (%s): mask %s has no CPU in the plan %s, leaving it alone", (int)t->tid, t->comm,
                      fmt_set(&original), fmt_set(plan));
            return 0;
        }
        want = original;        /* the mask is ours: give the original back */
    }
    /* want is a subset of the mask the kernel keeps (or the original an
     * inherited mask came from), so the kernel stores it as it is and
     * reads back exactly it afterwards. */
    bool changed = !CPU_EQUAL(&want, &current);
    if (changed) {
        /* The start time was read when the task's event was handled, maybe
         * long ago under a flood of events: the TID may name another task
         * by now (a reused PID), which must not be touched. Checked last,
         * right before the call. */
        uint64_t start_time;
        r = a->ops->task_start_time(a->ops->userdata, t->tid, &start_time);
        if (r < 0 || start_time != t->start_time) {
            log_debug("pid %d (%s): %s before it was packed, leaving the TID alone", (int)t->tid, t->comm,
                      r < 0 ? "gone" : "reused");
            return 0;
        }
        r = set_mask(a, t->tid, t->comm, &current, &want);
        if (errno_is_gone(r))
            return 0;
        if (r < 0) {
            refused(a, t->tid, t->start_time, t->comm, r);
            return 0;
        }
    }
    if (a->state_untrusted && !inherited && a->ops->online_cpus) {
        cpu_set_t online;
        if (a->ops->online_cpus(a->ops->userdata, &online) == 0 && !subset_of(&online, &original))
            log_internal(a->untrusted_notes++ < 64 ? LOG_NOTICE : LOG_DEBUG, "pid %d (%s): mask %s may be one a previous run set (its state file was damaged); taken "
                       "as the task's own", (int)t->tid, t->comm, fmt_set(&original));
    }
    if (CPU_EQUAL(&want, &original))
        return changed;         /* nothing restricted: nothing to remember */
    struct applied_task rec = {.tid = t->tid, .pid = t->pid, .start_time = t->start_time,
                               .original = original, .set = want};
    memcpy(rec.comm, t->comm, sizeof rec.comm);
    rec.comm[sizeof rec.comm - 1] = '\0';
    if (!tidmap_add(&a->tasks, &rec)) {
        /* we could not remember it, so we must not leave it changed */
        log_err("pid %d (%s): out of memory recording its affinity, restoring it", (int)t->tid, t->comm);
        if (!a->dry_run && changed)
            (void)a->ops->setaffinity(a->ops->userdata, t->tid, &current);
        return -ENOMEM;
    }
    mark_changed(a);
    return changed;
}

int applier_adopt_inherited(struct applier *a, pid_t tid, pid_t pid, uint64_t start_time, pid_t parent_tid)
{
    const struct applied_task *p = tidmap_find(&a->tasks, parent_tid);
    if (!p || tid == parent_tid)
        return 0;
    const struct applied_task *e = tidmap_find(&a->tasks, tid);
    if (e) {
        if (e->start_time == start_time)
            return 0;
        forget(a, tid);
        p = tidmap_find(&a->tasks, parent_tid);     /* the removal may have moved it */
    }
    cpu_set_t now;
    if (get_full(a, tid, &now) < 0)
        return 0;
    /* the kernel copied the parent's mask at fork; anything else is not ours */
    if (!mask_matches(a, &now, expected_mask(a, p)))
        return 0;
    struct applied_task rec = *p;
    rec.tid = tid;
    rec.pid = pid;
    rec.start_time = start_time;
    if (!tidmap_add(&a->tasks, &rec))
        return -ENOMEM;
    mark_changed(a);
    log_debug("pid %d (%s): inherited affinity %s from %d, adopted", (int)tid, rec.comm, fmt_set(&rec.set),
              (int)parent_tid);
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

static void member_drop(struct applier *a, struct applied_group *g, size_t i)
{
    free(g->members[i].original_path);
    g->members[i] = g->members[--g->n_members];
    a->dirty = true;
}

static struct applied_member *member_find(struct applied_group *g, pid_t tid, size_t *idx)
{
    for (size_t i = 0; i < g->n_members; i++)
        if (g->members[i].tid == tid) {
            *idx = i;
            return &g->members[i];
        }
    return NULL;
}

void applier_forget_task(struct applier *a, pid_t tid)
{
    forget(a, tid);
    tidmap_remove(&a->hands_off, tid);
    /* An exited member: nothing to move back. */
    for (size_t k = 0; k < a->n_groups; k++) {
        size_t i;
        if (a->groups[k].kind == GROUP_CPUSET_V1 && member_find(&a->groups[k], tid, &i))
            member_drop(a, &a->groups[k], i);
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
            forgotten++;        /* the last element moved into this place: check it next */
    }
    return forgotten;
}

int applier_hands_off(const struct applier *a, pid_t tid)
{
    const struct hands_off *h = tidmap_find(&a->hands_off, tid);
    return h ? h->reason : 0;
}

const struct applied_task *applier_find(const struct applier *a, pid_t tid)
{
    return tidmap_find(&a->tasks, tid);
}

size_t applier_count(const struct applier *a) { return a->tasks.n; }

const struct applied_task *applier_next(const struct applier *a, size_t *iter)
{
    if (*iter >= a->tasks.n)
        return NULL;
    return tidmap_item(&a->tasks, (*iter)++);
}

/* --- groups --------------------------------------------------------------------------- */

/* Log a group or unit failure at error level once; the same failure of the
 * same group again (the next tick) only at debug level. */
static void group_failed(struct applier *a, const char *name, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void group_failed(struct applier *a, const char *name, int err, const char *fmt, ...)
{
    bool again = a->failed_group && a->failed_err == err && strcmp(a->failed_group, name) == 0;
    if (!again) {
        free(a->failed_group);
        a->failed_group = strdup(name);
        a->failed_err = err;
    }
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    log_internal(again ? LOG_DEBUG : LOG_ERR, "%s", msg);
}

static void group_succeeded(struct applier *a, const char *name)
{
    if (a->failed_group && strcmp(a->failed_group, name) == 0) {
        free(a->failed_group);
        a->failed_group = NULL;
    }
}

static struct applied_group *group_find(struct applier *a, enum applied_group_kind kind, const char *name)
{
    for (size_t i = 0; i < a->n_groups; i++)
        if (a->groups[i].kind == kind && strcmp(a->groups[i].name, name) == 0)
            return &a->groups[i];
    return NULL;
}

static struct applied_group *group_add(struct applier *a, enum applied_group_kind kind, const char *name)
{
    struct applied_group *n = reallocarray(a->groups, a->n_groups + 1, sizeof *n);
    if (!n)
        return NULL;
    a->groups = n;
    struct applied_group *g = &a->groups[a->n_groups];
    *g = (struct applied_group){.kind = kind, .name = strdup(name)};
    if (!g->name)
        return NULL;
    a->n_groups++;
    return g;
}

static void group_drop(struct applier *a, struct applied_group *g)
{
    group_free(g);
    size_t i = (size_t)(g - a->groups);
    memmove(g, g + 1, (a->n_groups - i - 1) * sizeof *g);
    a->n_groups--;
    a->dirty = true;
}

/* Names go into the state file one per line and into paths. */
static bool name_ok(const char *name)
{
    if (!name || !*name || strstr(name, ".."))
        return false;
    for (const char *p = name; *p; p++)
        if ((unsigned char)*p <= ' ' || *p == 0x7f)
            return false;
    return true;
}

static bool cpuset_group_ok(const char *group)
{
    return name_ok(group) && group[0] == '/' && group[1] != '\0';
}

static void parent_of(const char *group, char *buf, size_t size)
{
    snprintf(buf, size, "%s", group);
    char *slash = strrchr(buf, '/');
    if (slash == buf)
        slash[1] = '\0';
    else if (slash)
        *slash = '\0';
}

int applier_group_set_v1(struct applier *a, const char *group, const cpu_set_t *mask)
{
    if (!cpuset_group_ok(group)) {
        group_failed(a, group, -EINVAL, "cpuset group '%s': not a path under the cpuset root", group);
        return -EINVAL;
    }
    char parent[4096];
    parent_of(group, parent, sizeof parent);

    char buf[CPULIST_MAX];
    cpu_set_t parent_cpus, want;
    int r = a->ops->cpuset_read(a->ops->userdata, parent, "cpuset.cpus", buf, sizeof buf);
    if (r >= 0)
        r = cpulist_parse(buf, &parent_cpus);
    if (r < 0) {
        group_failed(a, group, r, "cpuset group %s: reading cpuset.cpus of %s: %s", group, parent, strerror(-r));
        return r;
    }
    /* a child cpuset cannot hold CPUs its parent lacks */
    if (mask)
        CPU_AND(&want, mask, &parent_cpus);
    else
        want = parent_cpus;
    if (CPU_COUNT(&want) == 0) {
        log_debug("cpuset group %s: plan %s has no CPU of %s (%s), leaving it", group, mask ? fmt_set(mask) : "(all)", parent,
                  fmt_set(&parent_cpus));
        return 0;
    }

    struct applied_group *g = group_find(a, GROUP_CPUSET_V1, group);
    if (!g) {
        char mems[CPULIST_MAX];
        r = a->ops->cpuset_read(a->ops->userdata, parent, "cpuset.mems", mems, sizeof mems);
        if (r < 0) {
            group_failed(a, group, r, "cpuset group %s: reading cpuset.mems of %s: %s", group, parent,
                         strerror(-r));
            return r;
        }
        if (a->dry_run)
            log_info("would create cpuset group %s with cpus %s, mems %s", group, fmt_set(&want), mems);
        else {
            r = a->ops->cpuset_create(a->ops->userdata, group, fmt_set(&want), mems);
            if (r < 0) {
                group_failed(a, group, r, "cpuset group %s: creating it: %s", group, strerror(-r));
                return r;
            }
            log_info("cpuset group %s: created with cpus %s", group, fmt_set(&want));
        }
        g = group_add(a, GROUP_CPUSET_V1, group);
        if (!g) {
            if (!a->dry_run)
                (void)a->ops->cpuset_delete(a->ops->userdata, group);
            return -ENOMEM;
        }
        g->set = want;
        mark_changed(a);
        group_succeeded(a, group);
        return 1;
    }

    if (CPU_EQUAL(&want, &g->set))
        return 0;
    if (a->dry_run)
        log_info("would set cpuset group %s cpus %s -> %s", group, fmt_set(&g->set), fmt_set(&want));
    else {
        r = a->ops->cpuset_write(a->ops->userdata, group, "cpuset.cpus", fmt_set(&want));
        if (r < 0) {
            group_failed(a, group, r, "cpuset group %s: writing cpuset.cpus %s: %s", group, fmt_set(&want),
                         strerror(-r));
            return r;
        }
        log_debug("cpuset group %s: cpus %s -> %s", group, fmt_set(&g->set), fmt_set(&want));
    }
    g->set = want;
    mark_changed(a);
    group_succeeded(a, group);
    return 1;
}

int applier_group_attach_v1(struct applier *a, const char *group, pid_t tid, pid_t pid, uint64_t start_time)
{
    struct applied_group *g = group_find(a, GROUP_CPUSET_V1, group);
    if (!g)
        return -ENOENT;
    const struct hands_off *h = tidmap_find(&a->hands_off, tid);
    if (h && h->start_time == start_time)
        return 0;

    struct applied_member *m = NULL;
    for (size_t i = 0; i < g->n_members; i++)
        if (g->members[i].tid == tid)
            m = &g->members[i];
    if (m && m->start_time == start_time)
        return 0;

    char path[4096];
    int r = a->ops->cpuset_task_path(a->ops->userdata, tid, path, sizeof path);
    if (errno_is_gone(r))
        return 0;
    if (r < 0) {
        log_warning("pid %d: reading its cpuset: %s, leaving it alone", (int)tid, strerror(-r));
        set_hands_off(a, tid, start_time, r);
        return 0;
    }
    if (strcmp(path, group) == 0)
        return 0;
    if (strchr(path, '\n')) {
        log_warning("pid %d: cpuset path with a newline, leaving it alone", (int)tid);
        set_hands_off(a, tid, start_time, -EINVAL);
        return 0;
    }

    if (a->dry_run)
        log_info("would move pid %d from cpuset %s to %s", (int)tid, path, group);
    else {
        r = a->ops->cpuset_attach(a->ops->userdata, group, tid);
        if (errno_is_gone(r))
            return 0;
        if (r < 0) {
            log_warning("pid %d: moving it to cpuset %s: %s, leaving it alone", (int)tid, group, strerror(-r));
            set_hands_off(a, tid, start_time, r);
            return 0;
        }
        log_debug("pid %d: cpuset %s -> %s", (int)tid, path, group);
    }

    char *orig = strdup(path);
    if (!orig)
        return -ENOMEM;
    if (m) {
        /* a stale record of a TID that was reused */
        free(m->original_path);
    } else {
        /* capacity doubles at each power of two: attaching many threads stays linear */
        size_t n_members = g->n_members;
        if (n_members < 16 ? n_members == 0 : (n_members & (n_members - 1)) == 0) {
            struct applied_member *n = reallocarray(g->members, n_members < 16 ? 16 : n_members * 2, sizeof *n);
            if (!n) {
                free(orig);
                return -ENOMEM;
            }
            g->members = n;
        }
        m = &g->members[g->n_members++];
    }
    *m = (struct applied_member){.tid = tid, .pid = pid, .start_time = start_time, .original_path = orig};
    mark_changed(a);
    return 1;
}

/* Move the members still in the group (and still the same tasks) back to
 * where they were, then remove the group; libcgroup moves any thread left
 * (children forked inside) to the parent. applied: the moves really happened
 * (false for the groups of a dry run, true for those a previous run left). */
static int cpuset_undo(struct applier *a, const struct applied_group *g, bool applied)
{
    for (size_t i = 0; i < g->n_members; i++) {
        const struct applied_member *m = &g->members[i];
        char path[4096];
        uint64_t start_time;
        if (a->ops->task_start_time(a->ops->userdata, m->tid, &start_time) < 0 || start_time != m->start_time)
            continue;
        if (a->ops->cpuset_task_path(a->ops->userdata, m->tid, path, sizeof path) < 0)
            continue;
        if (strcmp(path, applied ? g->name : m->original_path) != 0) {
            log_info("pid %d: moved to cpuset %s by someone else, leaving it there", (int)m->tid, path);
            continue;
        }
        if (a->dry_run) {
            log_info("would move pid %d back from cpuset %s to %s", (int)m->tid, g->name, m->original_path);
            continue;
        }
        int r = a->ops->cpuset_attach(a->ops->userdata, m->original_path, m->tid);
        if (r < 0 && !errno_is_gone(r))
            log_warning("pid %d: moving it back to cpuset %s: %s, it goes to the parent of %s", (int)m->tid,
                        m->original_path, strerror(-r), g->name);
    }
    if (a->dry_run) {
        log_info("would remove cpuset group %s", g->name);
        return 1;
    }
    int r = a->ops->cpuset_delete(a->ops->userdata, g->name);
    if (r < 0 && r != -ENOENT) {
        log_err("cpuset group %s: removing it: %s, it is left behind", g->name, strerror(-r));
        return r;
    }
    log_info("cpuset group %s: removed", g->name);
    return 1;
}

int applier_group_detach_v1(struct applier *a, const char *group, pid_t tid)
{
    struct applied_group *g = group_find(a, GROUP_CPUSET_V1, group);
    size_t i;
    struct applied_member *m = g ? member_find(g, tid, &i) : NULL;
    if (!m)
        return 0;
    char path[4096];
    uint64_t start_time;
    int r = 0;
    if (a->ops->task_start_time(a->ops->userdata, tid, &start_time) < 0 || start_time != m->start_time ||
        a->ops->cpuset_task_path(a->ops->userdata, tid, path, sizeof path) < 0)
        goto drop;   /* gone, or another task under a reused TID */
    if (strcmp(path, g->name) != 0 && !a->dry_run) {
        log_info("pid %d: moved to cpuset %s by someone else, leaving it there", (int)tid, path);
        goto drop;
    }
    if (a->dry_run) {
        log_info("would move pid %d back from cpuset %s to %s", (int)tid, g->name, m->original_path);
        r = 1;
        goto drop;
    }
    r = a->ops->cpuset_attach(a->ops->userdata, m->original_path, tid);
    if (r < 0 && !errno_is_gone(r))
        log_warning("pid %d: moving it back to cpuset %s: %s", (int)tid, m->original_path, strerror(-r));
    r = r < 0 ? 0 : 1;
drop:
    member_drop(a, g, i);
    return r;
}

int applier_group_remove_v1(struct applier *a, const char *group)
{
    struct applied_group *g = group_find(a, GROUP_CPUSET_V1, group);
    if (!g)
        return 0;
    int r = cpuset_undo(a, g, !a->dry_run);
    group_drop(a, g);
    return r;
}

static bool unit_name_ok(const char *unit)
{
    return name_ok(unit) && strchr(unit, '.') && !strchr(unit, '/');
}

/* Put a unit's AllowedCPUs= back, unless someone changed it after us. */
static int unit_undo(struct applier *a, const struct applied_group *g)
{
    uint8_t bits[CPU_SETSIZE / 8];
    if (a->dry_run) {
        log_info("would restore unit %s AllowedCPUs %s -> %s", g->name, fmt_set(&g->set),
                 g->original_all ? "(all)" : fmt_set(&g->original));
        return 1;
    }
    int n = a->ops->unit_get_allowed_cpus(a->ops->userdata, g->name, bits, sizeof bits);
    if (n < 0) {
        log_warning("unit %s: reading AllowedCPUs before restoring it: %s, leaving it", g->name, strerror(-n));
        return n;
    }
    cpu_set_t now;
    cpuset_from_bitmask(bits, (size_t)n, &now);
    if (n == 0 || !CPU_EQUAL(&now, &g->set)) {
        log_info("unit %s: AllowedCPUs changed to %s by someone else after we set %s, leaving it", g->name,
                 n ? fmt_set(&now) : "(all)", fmt_set(&g->set));
        return 0;
    }
    n = g->original_all ? 0 : cpuset_to_bitmask(&g->original, bits, sizeof bits);
    int r = n < 0 ? n : a->ops->unit_set_allowed_cpus(a->ops->userdata, g->name, bits, (size_t)n);
    if (r < 0) {
        log_err("unit %s: restoring AllowedCPUs %s: %s", g->name, g->original_all ? "(all)" : fmt_set(&g->original),
                strerror(-r));
        return r;
    }
    log_info("unit %s: AllowedCPUs restored to %s", g->name, g->original_all ? "(all)" : fmt_set(&g->original));
    return 1;
}

int applier_unit_set_allowed_cpus(struct applier *a, const char *unit, const cpu_set_t *mask)
{
    if (!unit_name_ok(unit)) {
        group_failed(a, unit, -EINVAL, "unit '%s': not a unit name", unit);
        return -EINVAL;
    }
    struct applied_group *g = group_find(a, GROUP_UNIT, unit);
    if (!mask) {
        if (!g)
            return 0;
        int r = unit_undo(a, g);
        group_drop(a, g);
        return r;
    }
    if (CPU_COUNT(mask) == 0)
        return -EINVAL;         /* an empty AllowedCPUs= would mean all CPUs */

    uint8_t bits[CPU_SETSIZE / 8];
    bool created = false;
    if (!g) {
        int n = a->ops->unit_get_allowed_cpus(a->ops->userdata, unit, bits, sizeof bits);
        if (n < 0) {
            group_failed(a, unit, n, "unit %s: reading AllowedCPUs: %s", unit, strerror(-n));
            return n;
        }
        g = group_add(a, GROUP_UNIT, unit);
        if (!g)
            return -ENOMEM;
        g->original_all = n == 0;
        cpuset_from_bitmask(bits, (size_t)n, &g->original);
        created = true;
    } else if (CPU_EQUAL(mask, &g->set))
        return 0;

    const char *from = created ? (g->original_all ? "(all)" : fmt_set(&g->original)) : fmt_set(&g->set);
    if (a->dry_run)
        log_info("would set unit %s AllowedCPUs %s -> %s", unit, from, fmt_set(mask));
    else {
        int n = cpuset_to_bitmask(mask, bits, sizeof bits);
        int r = n < 0 ? n : a->ops->unit_set_allowed_cpus(a->ops->userdata, unit, bits, (size_t)n);
        if (r < 0) {
            group_failed(a, unit, r, "unit %s: setting AllowedCPUs %s: %s", unit, fmt_set(mask), strerror(-r));
            if (created)
                group_drop(a, g);
            return r;
        }
        log_debug("unit %s: AllowedCPUs %s -> %s", unit, from, fmt_set(mask));
    }
    g->set = *mask;
    mark_changed(a);
    group_succeeded(a, unit);
    return 1;
}

size_t applier_group_count(const struct applier *a) { return a->n_groups; }

const struct applied_group *applier_next_group(const struct applier *a, size_t *iter)
{
    if (*iter >= a->n_groups)
        return NULL;
    return &a->groups[(*iter)++];
}

int applier_restore_all(struct applier *a)
{
    int restored = 0;
    while (a->tasks.n > 0) {
        const struct applied_task *e = tidmap_item(&a->tasks, a->tasks.n - 1);
        if (applier_restore_task(a, e->tid) > 0)
            restored++;
    }
    while (a->n_groups > 0) {
        struct applied_group *g = &a->groups[a->n_groups - 1];
        int r = g->kind == GROUP_CPUSET_V1 ? cpuset_undo(a, g, !a->dry_run) : unit_undo(a, g);
        if (r > 0)
            restored++;
        group_drop(a, g);
    }
    /* A mask someone else set stays theirs across a reload; a refusal by
     * the kernel is tried again under the new configuration. */
    for (size_t i = a->hands_off.n; i-- > 0;) {
        const struct hands_off *h = tidmap_item(&a->hands_off, i);
        if (h->reason != -EBUSY)
            tidmap_remove(&a->hands_off, h->tid);
    }
    a->verify_cursor = 0;
    return restored;
}

/* --- state file ---------------------------------------------------------------------------- */

static int boot_id_get(struct applier *a)
{
    if (a->boot_id[0])
        return 0;
    int r = a->ops->boot_id(a->ops->userdata, a->boot_id, sizeof a->boot_id);
    if (r < 0)
        a->boot_id[0] = '\0';
    return r;
}

int applier_flush_state(struct applier *a)
{
    if (!a->state_file || a->dry_run || !a->dirty)
        return 0;
    int r = boot_id_get(a);
    if (r >= 0) {
        struct state s = {
            .tasks = (struct applied_task *)a->tasks.items,
            .n_tasks = a->tasks.n,
            .groups = a->groups,
            .n_groups = a->n_groups,
        };
        snprintf(s.boot_id, sizeof s.boot_id, "%s", a->boot_id);
        r = state_write(a->state_file, &s);
    }
    if (r < 0) {
        /* kept dirty: the next flush tries again */
        if (!a->state_warned)
            log_warning("state file %s: writing it: %s; changes would not be undone after a crash",
                        a->state_file, strerror(-r));
        a->state_warned = true;
        return r;
    }
    if (a->state_warned)
        log_info("state file %s: written again", a->state_file);
    a->state_warned = false;
    a->dirty = false;
    a->unsaved = false;
    a->written_ms = now_ms();
    return 0;
}

int64_t applier_changes_due_ms(const struct applier *a, uint64_t now)
{
    if (!a->unsaved || !a->state_file || a->dry_run)
        return -1;
    uint64_t next = a->written_ms + STATE_EARLY_WRITE_MS;
    return now >= next ? 0 : (int64_t)(next - now);
}

int applier_flush_changes(struct applier *a, uint64_t now)
{
    return applier_changes_due_ms(a, now) == 0 ? applier_flush_state(a) : 0;
}

/* Give tid the original mask of a change a previous run made, if its mask is
 * still the one that run set. */
static bool recover_mask(struct applier *a, pid_t tid, const char *comm, const cpu_set_t *set,
                         const cpu_set_t *original)
{
    cpu_set_t now;
    if (get_full(a, tid, &now) < 0)
        return false;
    if (!mask_matches(a, &now, set)) {
        log_info("pid %d (%s): affinity is %s, not the %s a previous run set, leaving it", (int)tid, comm,
                 fmt_set(&now), fmt_set(set));
        return false;
    }
    if (a->dry_run) {
        log_info("would restore pid %d (%s) affinity %s -> %s", (int)tid, comm, fmt_set(set), fmt_set(original));
        return true;
    }
    int r = a->ops->setaffinity(a->ops->userdata, tid, original);
    if (r < 0) {
        if (!errno_is_gone(r))
            log_warning("pid %d (%s): restoring affinity %s: %s", (int)tid, comm, fmt_set(original), strerror(-r));
        return false;
    }
    log_debug("pid %d (%s): affinity %s -> %s (left by a previous run)", (int)tid, comm, fmt_set(set),
              fmt_set(original));
    return true;
}

static bool recover_task(struct applier *a, const struct applied_task *t)
{
    uint64_t start_time;
    if (a->ops->task_start_time(a->ops->userdata, t->tid, &start_time) < 0 || start_time != t->start_time)
        return false;           /* exited, or the TID names another task now */
    return recover_mask(a, t->tid, t->comm, &t->set, &t->original);
}

/* Threads and processes created while no daemon ran inherited the mask a
 * previous run had set on their creator. They are in no state file, yet the
 * mask is ours: walk the threads of each recorded task's process and, from
 * every thread, its child processes (and theirs), and give each one that
 * still carries the creator's set mask the creator's original. A task whose
 * mask is something else was changed by someone else: neither it nor what
 * it created since is touched. At most RECOVER_MAX tasks are visited. */
#define RECOVER_MAX 65536
#define RECOVER_BATCH 4096

struct recover_walk {
    struct applier *a;
    const struct state *s;
    struct pidmap seen;         /* a set: no values */
    struct { pid_t tid, pid; size_t rec; } *queue;
    size_t head, n, cap;
    int restored;
    bool truncated;
};

static void walk_push(struct recover_walk *w, pid_t tid, pid_t pid, size_t rec)
{
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 256;
        void *q = cap <= RECOVER_MAX ? reallocarray(w->queue, cap, sizeof *w->queue) : NULL;
        if (!q) {
            w->truncated = true;
            return;
        }
        w->queue = q;
        w->cap = cap;
    }
    w->queue[w->n].tid = tid;
    w->queue[w->n].pid = pid;
    w->queue[w->n].rec = rec;
    w->n++;
}

/* A task found in the walk: not seen before and not in the file itself. */
static void walk_visit(struct recover_walk *w, pid_t tid, pid_t pid, size_t rec)
{
    if (pidmap_find(&w->seen, tid) || tid <= 0)
        return;
    if (pidmap_count(&w->seen) >= RECOVER_MAX || pidmap_insert(&w->seen, tid, NULL) < 0) {
        w->truncated = true;
        return;
    }
    const struct applied_task *t = &w->s->tasks[rec];
    if (recover_mask(w->a, tid, t->comm, &t->set, &t->original)) {
        w->restored++;
        walk_push(w, tid, pid, rec);
    }
}

static int recover_offspring(struct applier *a, const struct state *s)
{
    if (!a->ops->threads_of || !a->ops->children_of)
        return 0;
    struct recover_walk w = {.a = a, .s = s};
    pidmap_init(&w.seen, 0, 1);
    pid_t *buf = malloc(RECOVER_BATCH * sizeof *buf);
    if (!buf)
        return -ENOMEM;
    for (size_t i = 0; i < s->n_tasks; i++)
        if (pidmap_insert(&w.seen, s->tasks[i].tid, NULL) == -ENOMEM)
            w.truncated = true;
    for (size_t i = 0; i < s->n_tasks; i++) {
        uint64_t start_time;
        const struct applied_task *t = &s->tasks[i];
        if (a->ops->task_start_time(a->ops->userdata, t->tid, &start_time) == 0 && start_time == t->start_time)
            walk_push(&w, t->tid, t->pid, i);
    }
    while (w.head < w.n) {
        pid_t tid = w.queue[w.head].tid, pid = w.queue[w.head].pid;
        size_t rec = w.queue[w.head].rec;
        w.head++;
        int k = a->ops->threads_of(a->ops->userdata, pid, buf, RECOVER_BATCH);
        w.truncated |= k > RECOVER_BATCH;
        for (int j = 0; j < k && j < RECOVER_BATCH; j++)
            walk_visit(&w, buf[j], pid, rec);
        k = a->ops->children_of(a->ops->userdata, tid, buf, RECOVER_BATCH);
        w.truncated |= k > RECOVER_BATCH;
        for (int j = 0; j < k && j < RECOVER_BATCH; j++)
            walk_visit(&w, buf[j], buf[j], rec);     /* a child process: its TID is its PID */
    }
    if (w.truncated)
        log_warning("state file %s: too many tasks created while no daemon ran; some may keep a mask a previous "
                    "run set", a->state_file);
    if (w.restored)
        log_info("state file %s: %d tasks created while no daemon ran carried a mask a previous run set; "
                 "restored", a->state_file, w.restored);
    free(buf);
    free(w.queue);
    pidmap_done(&w.seen);
    return w.restored;
}

/* What can be saved from a state file cut short (no end line, so no
 * checksum to hold its lines against): the task lines before the cut, one
 * by one. None is believed on its own word: a line counts only when it
 * names a live task of this boot with its exact start time whose mask is
 * still exactly the one the line says we set, strictly within the original
 * the line gives (a line cut inside a field fails one of these); it then
 * gets its original back, as from a sound file. A file whose lines do not
 * match their end line was altered, and nothing in it is believed. Either
 * way the tasks a previous run confined that are not restored may keep
 * their masks: that is said, here and for each task later packed with a
 * narrowed mask taken for its own (pack_task). */
#define SALVAGE_MAX_TASKS 65536
static int recover_salvage(struct applier *a)
{
    a->state_untrusted = true;
    _cleanup_fclose_ FILE *f = fopen(a->state_file, "re");
    if (!f) {
        log_warning("state file %s: damaged and unreadable (%m): tasks a previous run confined may keep their "
                    "masks", a->state_file);
        return 0;
    }
    char line[512 + CPULIST_MAX * 2];
    bool same_boot = false, altered = false;
    struct applied_task *cand = NULL;
    size_t n = 0, cap = 0;
    int r = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char boot[64];
        if (strncmp(line, "end ", 4) == 0) {
            altered = true;             /* whole, yet its checksum or count is wrong */
            break;
        }
        if (sscanf(line, "boot %63s", boot) == 1) {
            same_boot = strcmp(boot, a->boot_id) == 0;
            continue;
        }
        struct applied_task t = {0};
        int tid, pid, comm_at = 0;
        unsigned long long start;
        char orig[CPULIST_MAX], set[CPULIST_MAX];
        _Static_assert(CPULIST_MAX == 8192, "the scanf widths below follow CPULIST_MAX");
        if (!same_boot || n >= SALVAGE_MAX_TASKS ||
            sscanf(line, "task %d %d %llu %8191s %8191s %n", &tid, &pid, &start, orig, set, &comm_at) < 5 ||
            tid <= 0 || pid <= 0 || cpulist_parse(orig, &t.original) < 0 || cpulist_parse(set, &t.set) < 0 ||
            CPU_COUNT(&t.set) == 0 || CPU_EQUAL(&t.set, &t.original) || !subset_of(&t.set, &t.original))
            continue;
        t.tid = tid;
        t.pid = pid;
        t.start_time = start;
        snprintf(t.comm, sizeof t.comm, "%s", comm_at > 0 ? line + comm_at : "?");
        if (n == cap) {
            size_t c = cap ? cap * 2 : 64;
            struct applied_task *m = reallocarray(cand, c, sizeof *m);
            if (!m) {
                r = -ENOMEM;
                break;
            }
            cand = m;
            cap = c;
        }
        cand[n++] = t;
    }
    int restored = 0;
    if (altered || r < 0)
        log_warning("state file %s: damaged, nothing in it restored: tasks a previous run confined may keep their "
                    "masks", a->state_file);
    else {
        for (size_t i = 0; i < n; i++)
            restored += recover_task(a, &cand[i]);
        log_warning("state file %s: cut short; of its %zu task lines, %d still matched their live task exactly and "
                    "got their original back; other tasks a previous run confined may keep their masks",
                    a->state_file, n, restored);
    }
    free(cand);
    return r < 0 ? r : restored;
}

int applier_recover(struct applier *a)
{
    if (!a->state_file)
        return 0;
    int r = boot_id_get(a);
    if (r < 0) {
        log_warning("state file %s: reading the boot id: %s, not recovering", a->state_file, strerror(-r));
        return r;
    }
    struct state s;
    r = state_read(a->state_file, a->boot_id, &s);
    if (r == -ENOENT)
        return 0;
    if (r == -EBADMSG) {
        /* Damaged (state_read said how): the tasks a previous run of this
         * boot confined would otherwise be packed again with their confined
         * mask taken for their own, for good. */
        r = recover_salvage(a);
        if (!a->dry_run)
            (void)unlink(a->state_file);
        return r;
    }
    if (r < 0) {
        /* state_read said why; a bad file would only confuse the next start */
        if (!a->dry_run)
            (void)unlink(a->state_file);
        return r == -ENOMEM ? r : 0;
    }

    /* Restoring (rather than adopting) is simpler and safe: the task is
     * repacked at the next tick if it still is jitter. */
    int restored = 0;
    for (size_t i = 0; i < s.n_tasks; i++)
        restored += recover_task(a, &s.tasks[i]);
    r = recover_offspring(a, &s);
    if (r < 0) {
        state_free(&s);
        return r;
    }
    restored += r;
    for (size_t i = 0; i < s.n_groups; i++) {
        int k = s.groups[i].kind == GROUP_CPUSET_V1 ? cpuset_undo(a, &s.groups[i], true) : unit_undo(a, &s.groups[i]);
        restored += k > 0;
    }
    log_info("state file %s: undid %d of %zu changes left by a previous run", a->state_file, restored,
             s.n_tasks + s.n_groups);
    state_free(&s);
    if (!a->dry_run && unlink(a->state_file) < 0 && errno != ENOENT)
        log_warning("state file %s: removing it: %m", a->state_file);
    return restored;
}
