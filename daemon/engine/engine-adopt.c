/* SPDX-License-Identifier: GPL-2.0-or-later */
/* New processes of a task whose mask we set, adopted once their start time
 * can be read without waiting (engine.h says why). */
#include <stdlib.h>

#include "apply.h"
#include "engine-adopt.h"

#include "engine-internal.h"
#include "procscan.h"
#include "task.h"
#include "util.h"

/* Beyond this many waiting (320 bytes each: 1.25 MiB), a new process
 * is adopted at once, as before. 4,096 a tick is 16,000 forks a second, at
 * the default tick, of packed creators whose children do not exec. */
#define ADOPT_DUE_MAX 4096
/* How far up a process found without its fork event looks for a creator
 * whose mask it may carry (a child, a grandchild, ... of a packed task). */
#define ADOPT_ANCESTORS_MAX 4

bool engine_adopt_defer(struct engine *e, struct task *t, const struct applied_task *parent)
{
    struct engine_adopt *ad = &e->events.adopt;
    /* A thread is not in an exec of its own; a start time already known
     * needs no read. */
    if (t->tid != t->pid || !t->start_pending)
        return false;
    if (ad->n == ad->cap) {
        size_t cap = ad->cap ? 2 * ad->cap : 64;
        void *p = cap <= ADOPT_DUE_MAX ? reallocarray(ad->items, cap, sizeof *ad->items) : NULL;
        if (!p)
            return false;
        ad->items = p;
        ad->cap = cap;
    }
    ad->items[ad->n++] = (struct engine_adopt_due){.tid = t->tid, .fork_ns = t->start_time, .parent = *parent};
    t->flags |= TASK_F_ADOPT_DUE;
    return true;
}

/* Whether it (a waiting entry) is t's and not an earlier task's of the same
 * TID: until its start is read, t's start time is its fork's timestamp;
 * after, t started at that fork, not after it. */
static bool entry_is_for(const struct engine_adopt_due *it, const struct task *t)
{
    if (it->tid != t->tid || !(t->flags & TASK_F_ADOPT_DUE))
        return false;
    return t->start_pending ? t->start_time == it->fork_ns : procscan_started_by_fork(t->start_time, it->fork_ns);
}

bool engine_inheritance(struct engine *e, pid_t parent_tid, struct applied_task *out)
{
    if (applier_inheritance(e->applier, parent_tid, out))
        return true;
    struct engine_adopt *ad = &e->events.adopt;
    struct task *p = ad->n ? task_table_find(e->tasks, parent_tid) : NULL;
    if (!p || !(p->flags & TASK_F_ADOPT_DUE))
        return false;
    for (size_t i = ad->n; i-- > 0;)
        if (entry_is_for(&ad->items[i], p)) {
            *out = ad->items[i].parent;
            return true;
        }
    return false;
}

bool engine_ancestor_inheritance(struct engine *e, pid_t tid, struct applied_task *out)
{
    if (!applier_count(e->applier) || !e->ops->parent_of)
        return false;
    pid_t p = tid;
    for (int i = 0; i < ADOPT_ANCESTORS_MAX; i++) {
        pid_t pp;
        /* init and kthreadd: what they start is not ours */
        if (e->ops->parent_of(e->ops->userdata, p, &pp) < 0 || pp <= 2 || pp == p)
            return false;
        if (engine_inheritance(e, pp, out))
            return true;
        p = pp;
    }
    return false;
}

void engine_adopt_note_gone(struct engine *e, pid_t tid)
{
    struct engine_adopt *ad = &e->events.adopt;
    const struct applied_task *r = applier_find(e->applier, tid);
    if (!r)
        return;
    for (unsigned i = 0; i < ad->n_gone; i++) {
        struct applied_task *g = &ad->gone[i];
        if (CPU_EQUAL(&g->set, &r->set) && CPU_EQUAL(&g->original, &r->original) &&
            g->slice.applied == r->slice.applied) {
            g->start_time = MIN(g->start_time, r->start_time);
            return;
        }
    }
    unsigned i = ad->n_gone < ADOPT_GONE_MAX ? ad->n_gone++ : ad->next_gone++ % ADOPT_GONE_MAX;
    ad->gone[i] = *r;
}

bool engine_orphan_inheritance(struct engine *e, struct task *t, struct applied_task *out)
{
    struct engine_adopt *ad = &e->events.adopt;
    pid_t pp;
    cpu_set_t now;
    /* found by a rescan (at normal priority): its start time may be read */
    if (!ad->n_gone || t->tid != t->pid || !e->ops->parent_of || !e->ops->getaffinity ||
        procscan_ensure_start(e->params.root, t) < 0 || e->ops->parent_of(e->ops->userdata, t->tid, &pp) < 0 ||
        pp != 1 || e->ops->getaffinity(e->ops->userdata, t->tid, &now) < 0)
        return false;
    for (unsigned i = 0; i < ad->n_gone; i++) {
        const struct applied_task *g = &ad->gone[i];
        /* started after a task so confined began, and exactly that mask */
        if (t->start_time >= g->start_time && CPU_EQUAL(&now, applier_expected_mask(e->applier, g))) {
            *out = *g;
            ad->orphans++;
            return true;
        }
    }
    return false;
}

static void adopt(struct engine *e, struct engine_adopt_due *it, struct task *t)
{
    t->flags &= ~TASK_F_ADOPT_DUE;
    it->tid = 0; /* done: dropped at the next compaction */
    (void)applier_adopt_from(e->applier, t->tid, t->pid, t->start_time, &it->parent);
}

void engine_adopt_at_exec(struct engine *e, struct task *t)
{
    struct engine_adopt *ad = &e->events.adopt;
    if (!(t->flags & TASK_F_ADOPT_DUE))
        return;
    /* the latest first: its fork was a moment ago */
    for (size_t i = ad->n; i-- > 0;)
        if (entry_is_for(&ad->items[i], t)) {
            adopt(e, &ad->items[i], t);
            ad->at_exec++;
            return;
        }
    t->flags &= ~TASK_F_ADOPT_DUE; /* no entry: placed as any task */
}

void engine_adopt_due(struct engine *e, uint64_t older_than_ns)
{
    struct engine_adopt *ad = &e->events.adopt;
    size_t kept = 0;
    for (size_t i = 0; i < ad->n; i++) {
        struct engine_adopt_due *it = &ad->items[i];
        if (!it->tid)
            continue;
        if (older_than_ns && it->fork_ns >= older_than_ns) {
            ad->items[kept++] = *it;
            continue;
        }
        struct task *t = task_table_find(e->tasks, it->tid);
        if (!t || !entry_is_for(it, t))
            continue; /* gone (its exit event came), or the TID is another task's */
        int r = procscan_ensure_start(e->params.root, t);
        if (r < 0 && errno_is_transient(r) && older_than_ns) {
            ad->items[kept++] = *it; /* out of fds or memory: at a later tick */
            continue;
        }
        if (r < 0) {
            t->flags &= ~TASK_F_ADOPT_DUE;
            continue; /* gone: its exit event follows */
        }
        adopt(e, it, t);
        if (older_than_ns)
            ad->at_tick++;
        else
            ad->at_restore++;
        engine_place(e, t);
    }
    ad->n = kept;
}

void engine_adopt_free(struct engine *e)
{
    free(e->events.adopt.items);
    e->events.adopt = (struct engine_adopt){0};
}
