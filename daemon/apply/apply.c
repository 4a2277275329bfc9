/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The applier's life cycle and the one operation that spans its parts:
 * restore everything. See apply.h; the parts are in affinity.c, groups.c and
 * recovery.c. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apply-internal.h"
#include "log.h"

int applier_new(const struct sysops *ops, const char *state_file, bool dry_run, struct applier **ret)
{
    struct applier *a = calloc(1, sizeof *a);
    if (!a)
        return -ENOMEM;
    a->ops = ops;
    a->dry_run = dry_run;
    a->state_fd = -1;
    a->task_logs = (struct log_ratelimit){.what = "messages about tasks that changed or refused a mask"};
    tidmap_init(&a->tasks, sizeof(struct applied_task));
    tidmap_init(&a->hands_off, sizeof(struct hands_off));
    if (state_file && !(a->state_file = strdup(state_file))) {
        free(a);
        return -ENOMEM;
    }
    *ret = a;
    return 0;
}

void applier_free(struct applier *a)
{
    if (!a)
        return;
    tidmap_done(&a->tasks);
    tidmap_done(&a->hands_off);
    for (size_t i = 0; i < a->n_groups; i++)
        apply_group_free(&a->groups[i]);
    free(a->groups);
    free(a->failed_group);
    free(a->state_file);
    if (a->state_fd >= 0)
        close(a->state_fd);
    free(a->pending);
    free(a);
}

/* cpulist text of a set, in one of a few rotating buffers so that a message
 * can show several sets. */
const char *apply_fmt_set(const cpu_set_t *set)
{
    static char bufs[4][CPULIST_MAX];
    static unsigned next;
    return format_cpulist(set, bufs[next++ % ELEMENTSOF(bufs)], CPULIST_MAX);
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
        int r = g->kind == GROUP_CPUSET_V1 ? apply_cpuset_undo(a, g, !a->dry_run) : apply_unit_undo(a, g);
        if (r > 0)
            restored++;
        apply_group_drop(a, g);
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
