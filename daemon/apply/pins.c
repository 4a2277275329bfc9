/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "pins.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "task.h"
#include "util.h"

void pins_clear(struct pins *p)
{
    free(p->v);
    *p = (struct pins){0};
}

int pins_snapshot(struct pins *p, struct task_table *tt, const cpu_set_t *online, const struct sysops *ops,
                  unsigned passes, pins_choose_fn choose, pins_now_fn now, void *userdata)
{
    size_t iter = 0;
    struct task *t;
    p->n = 0;
    p->online = *online;
    p->now = now;
    p->userdata = userdata;
    while ((t = task_table_next(tt, &iter))) {
        cpu_set_t m;
        enum pin_choice c = choose ? choose(t, &m, userdata) : PIN_CURRENT;
        if (c == PIN_SKIP || (c == PIN_CURRENT && ops->getaffinity(ops->userdata, t->tid, &m) < 0) ||
            (c == PIN_CURRENT && cpuset_covers(&m, online)))
            continue;
        if (p->n == p->cap) {
            size_t cap = p->cap ? p->cap * 2 : 64;
            struct pin *v = reallocarray(p->v, cap, sizeof *v);
            if (!v)
                return -ENOMEM;
            p->v = v;
            p->cap = cap;
        }
        p->v[p->n++] = (struct pin){.tid = t->tid, .start_time = t->start_time, .mask = m, .managed = c == PIN_MANAGED};
    }
    p->repairs_left = passes;
    return (int)p->n;
}

int pins_repair(struct pins *p, const struct sysops *ops)
{
    int fixed = 0;
    if (p->repairs_left == 0)
        return 0;
    for (size_t i = 0; i < p->n; i++) {
        struct pin *pin = &p->v[i];
        cpu_set_t m;
        uint64_t st;
        if (pin->tid == 0 || ops->task_start_time(ops->userdata, pin->tid, &st) < 0 || st != pin->start_time ||
            ops->getaffinity(ops->userdata, pin->tid, &m) < 0) {
            pin->tid = 0; /* gone: stop looking */
            continue;
        }
        /* A managed task's mask is the one its manager holds it to now:
         * the snapshot's would undo a change made since (a restore). */
        cpu_set_t want = pin->mask;
        if (pin->managed && p->now)
            (void)p->now(pin->tid, pin->start_time, &want, p->userdata);
        if (!cpuset_covers(&m, &p->online) || CPU_EQUAL(&m, &want))
            continue;
        int r = ops->setaffinity(ops->userdata, pin->tid, &want);
        /* Put back once: a toggle resets a task once, so a task found
         * widened again in a later pass was widened by its user, whose
         * choice stands (re-narrowed, it would be overruled for every pass
         * left). */
        pid_t tid = pin->tid;
        pin->tid = 0;
        if (r == 0) {
            fixed++;
            log_debug("pid %d: CPU pin reset by a cpuset controller toggle, put back", (int)tid);
        } else if (!errno_is_gone(r))
            log_debug_errno(r, "pid %d: putting its CPU pin back: %m", (int)tid);
    }
    if (fixed)
        log_info("put back %d CPU pins that a cpuset controller toggle reset", fixed);
    if (--p->repairs_left == 0)
        p->n = 0;
    return fixed;
}
