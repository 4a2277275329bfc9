/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Groups: a cgroup v1 cpuset the daemon owns and systemd units'
 * AllowedCPUs=, with the members moved and the originals to restore. See
 * apply.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apply-internal.h"
#include "log.h"

void apply_group_free(struct applied_group *g)
{
    applied_group_free_members(g);
    free(g->name);
}

void apply_member_drop(struct applier *a, struct applied_group *g, size_t i)
{
    free(g->members[i].original_path);
    g->members[i] = g->members[--g->n_members];
    mark_removed(a);
}

struct applied_member *apply_member_find(struct applied_group *g, pid_t tid, size_t *idx)
{
    for (size_t i = 0; i < g->n_members; i++)
        if (g->members[i].tid == tid) {
            *idx = i;
            return &g->members[i];
        }
    return NULL;
}

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

void apply_group_drop(struct applier *a, struct applied_group *g)
{
    apply_group_free(g);
    size_t i = (size_t)(g - a->groups);
    memmove(g, g + 1, (a->n_groups - i - 1) * sizeof *g);
    a->n_groups--;
    mark_removed(a);
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

static bool cpuset_group_ok(const char *group) { return name_ok(group) && group[0] == '/' && group[1] != '\0'; }

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
        log_debug("cpuset group %s: plan %s has no CPU of %s (%s), leaving it", group,
                  mask ? apply_fmt_set(mask) : "(all)", parent, apply_fmt_set(&parent_cpus));
        return 0;
    }

    struct applied_group *g = group_find(a, GROUP_CPUSET_V1, group);
    if (!g) {
        char mems[CPULIST_MAX];
        r = a->ops->cpuset_read(a->ops->userdata, parent, "cpuset.mems", mems, sizeof mems);
        if (r < 0) {
            group_failed(a, group, r, "cpuset group %s: reading cpuset.mems of %s: %s", group, parent, strerror(-r));
            return r;
        }
        if (a->dry_run)
            log_info("would create cpuset group %s with cpus %s, mems %s", group, apply_fmt_set(&want), mems);
        else {
            r = a->ops->cpuset_create(a->ops->userdata, group, apply_fmt_set(&want), mems);
            if (r < 0) {
                group_failed(a, group, r, "cpuset group %s: creating it: %s", group, strerror(-r));
                return r;
            }
            log_info("cpuset group %s: created with cpus %s", group, apply_fmt_set(&want));
        }
        g = group_add(a, GROUP_CPUSET_V1, group);
        if (!g) {
            int d = a->dry_run ? 0 : a->ops->cpuset_delete(a->ops->userdata, group);
            if (d < 0 && d != -ENOENT)
                log_error_errno(d, "cpuset group %s: removing it: %m, it is left behind", group);
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
        log_info("would set cpuset group %s cpus %s -> %s", group, apply_fmt_set(&g->set), apply_fmt_set(&want));
    else {
        r = a->ops->cpuset_write(a->ops->userdata, group, "cpuset.cpus", apply_fmt_set(&want));
        if (r < 0) {
            group_failed(a, group, r, "cpuset group %s: writing cpuset.cpus %s: %s", group, apply_fmt_set(&want),
                         strerror(-r));
            return r;
        }
        log_debug("cpuset group %s: cpus %s -> %s", group, apply_fmt_set(&g->set), apply_fmt_set(&want));
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
        log_warning_errno(r, "pid %d: reading its cpuset: %m, leaving it alone", (int)tid);
        apply_set_hands_off(a, tid, start_time, r);
        return 0;
    }
    if (strcmp(path, group) == 0)
        return 0;
    if (strchr(path, '\n')) {
        log_warning("pid %d: cpuset path with a newline, leaving it alone", (int)tid);
        apply_set_hands_off(a, tid, start_time, -EINVAL);
        return 0;
    }

    if (a->dry_run)
        log_info("would move pid %d from cpuset %s to %s", (int)tid, path, group);
    else {
        r = a->ops->cpuset_attach(a->ops->userdata, group, tid);
        if (errno_is_gone(r))
            return 0;
        if (r < 0) {
            log_warning_errno(r, "pid %d: moving it to cpuset %s: %m, leaving it alone", (int)tid, group);
            apply_set_hands_off(a, tid, start_time, r);
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
int apply_cpuset_undo(struct applier *a, const struct applied_group *g, bool applied)
{
    for (size_t i = 0; i < g->n_members; i++) {
        const struct applied_member *m = &g->members[i];
        char path[4096];
        uint64_t start_time;
        if (a->ops->task_start_time(a->ops->userdata, m->tid, &start_time) < 0 || start_time != m->start_time)
            continue;
        int r = a->ops->cpuset_task_path(a->ops->userdata, m->tid, path, sizeof path);
        if (r < 0) {
            if (!errno_is_gone(r))
                log_warning_errno(r, "pid %d: reading its cpuset: %m; it goes to the parent of %s", (int)m->tid,
                                  g->name);
            continue;
        }
        if (strcmp(path, applied ? g->name : m->original_path) != 0) {
            log_info("pid %d: moved to cpuset %s by someone else, leaving it there", (int)m->tid, path);
            continue;
        }
        if (a->dry_run) {
            log_info("would move pid %d back from cpuset %s to %s", (int)m->tid, g->name, m->original_path);
            continue;
        }
        r = a->ops->cpuset_attach(a->ops->userdata, m->original_path, m->tid);
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
        log_error_errno(r, "cpuset group %s: removing it: %m, it is left behind", g->name);
        return r;
    }
    log_info("cpuset group %s: removed", g->name);
    return 1;
}

int applier_group_detach_v1(struct applier *a, const char *group, pid_t tid)
{
    struct applied_group *g = group_find(a, GROUP_CPUSET_V1, group);
    size_t i;
    struct applied_member *m = g ? apply_member_find(g, tid, &i) : NULL;
    if (!m)
        return 0;
    char path[4096];
    uint64_t start_time;
    int r = 0;
    if (a->ops->task_start_time(a->ops->userdata, tid, &start_time) < 0 || start_time != m->start_time)
        goto drop; /* gone, or another task under a reused TID */
    if ((r = a->ops->cpuset_task_path(a->ops->userdata, tid, path, sizeof path)) < 0) {
        if (!errno_is_gone(r))
            log_warning_errno(r, "pid %d: reading its cpuset: %m; left in %s", (int)tid, g->name);
        r = 0;
        goto drop;
    }
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
        log_warning_errno(r, "pid %d: moving it back to cpuset %s: %m", (int)tid, m->original_path);
    r = r < 0 ? 0 : 1;
drop:
    apply_member_drop(a, g, i);
    return r;
}

int applier_group_remove_v1(struct applier *a, const char *group)
{
    struct applied_group *g = group_find(a, GROUP_CPUSET_V1, group);
    if (!g)
        return 0;
    int r = apply_cpuset_undo(a, g, !a->dry_run);
    apply_group_drop(a, g);
    return r;
}

static bool unit_name_ok(const char *unit) { return name_ok(unit) && strchr(unit, '.') && !strchr(unit, '/'); }

static bool unit_is_original(const struct applied_group *g, const cpu_set_t *now, int n_bytes)
{
    return g->original_all ? n_bytes == 0 : n_bytes > 0 && CPU_EQUAL(now, &g->original);
}

/* An earlier write timed out: did systemd apply it after all? 1: yes, it is
 * ours now; 0: it is not there, write it again; -errno: cannot tell. */
static int unit_confirm(struct applier *a, struct applied_group *g)
{
    uint8_t bits[CPU_SETSIZE / 8];
    int n = a->ops->unit_get_allowed_cpus(a->ops->userdata, g->name, bits, sizeof bits);
    if (n < 0)
        return n;
    cpu_set_t now;
    cpuset_from_bitmask(bits, (size_t)n, &now);
    if (n == 0 || !CPU_EQUAL(&now, &g->set))
        return 0;
    g->unconfirmed = false;
    log_info("unit %s: AllowedCPUs %s took effect after the call timed out", g->name, apply_fmt_set(&g->set));
    return 1;
}

/* Put a unit's AllowedCPUs= back, unless someone changed it after us. */
int apply_unit_undo(struct applier *a, const struct applied_group *g)
{
    uint8_t bits[CPU_SETSIZE / 8];
    if (a->dry_run) {
        log_info("would restore unit %s AllowedCPUs %s -> %s", g->name, apply_fmt_set(&g->set),
                 g->original_all ? "(all)" : apply_fmt_set(&g->original));
        return 1;
    }
    int n = a->ops->unit_get_allowed_cpus(a->ops->userdata, g->name, bits, sizeof bits);
    if (n < 0) {
        log_warning_errno(n, "unit %s: reading AllowedCPUs before restoring it: %m, leaving it", g->name);
        return n;
    }
    cpu_set_t now;
    cpuset_from_bitmask(bits, (size_t)n, &now);
    if (g->unconfirmed && unit_is_original(g, &now, n)) {
        log_info("unit %s: our AllowedCPUs %s never took effect, nothing to restore", g->name, apply_fmt_set(&g->set));
        return 0;
    }
    if (n == 0 || !CPU_EQUAL(&now, &g->set)) {
        log_info("unit %s: AllowedCPUs changed to %s by someone else after we set %s, leaving it", g->name,
                 n ? apply_fmt_set(&now) : "(all)", apply_fmt_set(&g->set));
        return 0;
    }
    n = g->original_all ? 0 : cpuset_to_bitmask(&g->original, bits, sizeof bits);
    int r = n < 0 ? n : a->ops->unit_set_allowed_cpus(a->ops->userdata, g->name, bits, (size_t)n);
    if (r < 0) {
        log_error_errno(r, "unit %s: restoring AllowedCPUs %s: %m", g->name,
                        g->original_all ? "(all)" : apply_fmt_set(&g->original));
        return r;
    }
    log_info("unit %s: AllowedCPUs restored to %s", g->name, g->original_all ? "(all)" : apply_fmt_set(&g->original));
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
        int r = apply_unit_undo(a, g);
        apply_group_drop(a, g);
        return r;
    }
    if (CPU_COUNT(mask) == 0)
        return -EINVAL; /* an empty AllowedCPUs= would mean all CPUs */

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
    } else if (CPU_EQUAL(mask, &g->set)) {
        if (!g->unconfirmed)
            return 0;
        int r = unit_confirm(a, g);
        if (r != 0)
            return r < 0 ? r : 0;
    }

    const char *from = created ? (g->original_all ? "(all)" : apply_fmt_set(&g->original)) : apply_fmt_set(&g->set);
    if (a->dry_run)
        log_info("would set unit %s AllowedCPUs %s -> %s", unit, from, apply_fmt_set(mask));
    else {
        int n = cpuset_to_bitmask(mask, bits, sizeof bits);
        int r = n < 0 ? n : a->ops->unit_set_allowed_cpus(a->ops->userdata, unit, bits, (size_t)n);
        if (r == -ETIMEDOUT) {
            /* systemd may still apply it (a daemon-reload holds its bus for
             * longer than the call waits): keep the original and count the
             * write as possibly ours, so a late success is undone too. */
            group_failed(a, unit, r, "unit %s: setting AllowedCPUs %s: %s, will read it back", unit,
                         apply_fmt_set(mask), strerror(-r));
            g->set = *mask;
            g->unconfirmed = true;
            mark_changed(a);
            return r;
        }
        if (r < 0) {
            group_failed(a, unit, r, "unit %s: setting AllowedCPUs %s: %s", unit, apply_fmt_set(mask), strerror(-r));
            if (created)
                apply_group_drop(a, g);
            return r;
        }
        g->unconfirmed = false;
        log_debug("unit %s: AllowedCPUs %s -> %s", unit, from, apply_fmt_set(mask));
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
