/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "engine-reqpath.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "apply.h"
#include "engine-internal.h"
#include "sampler.h"
#include "task.h"
#include "util.h"

void engine_reqpath_init(struct engine_reqpath *r)
{
    *r = (struct engine_reqpath){.logs = {.what = "messages about request paths"}};
    PIDMAP_INIT(&r->procs, struct reqpath_proc);
}

void engine_reqpath_done(struct engine_reqpath *r)
{
    pidmap_done(&r->procs);
    procsock_table_free(&r->socks);
}

static uint64_t leader_start(const struct engine *e, const struct task *t)
{
    const struct task *l = t->tid == t->pid ? t : task_table_find(e->tasks, t->pid);
    return l && !l->start_pending ? l->start_time : 0;
}

/* The process's entry, made (or made anew, for a reused PID) if create. */
static struct reqpath_proc *proc_of(struct engine *e, const struct task *t, bool create)
{
    uint64_t start = leader_start(e, t);
    struct reqpath_proc *p = pidmap_find(&e->reqpath.procs, t->pid);
    if (p && start && p->start_time && p->start_time != start) {
        *p = (struct reqpath_proc){.start_time = start, .serves = -1};
        return p;
    }
    if (p || !create)
        return p;
    if (pidmap_insert(&e->reqpath.procs, t->pid, (void **)&p) < 0)
        return NULL;
    *p = (struct reqpath_proc){.start_time = start, .serves = -1};
    return p;
}

static void check_sockets(struct engine *e, const struct task *t, struct reqpath_proc *p, uint32_t now32)
{
    struct engine_reqpath *r = &e->reqpath;
    char why[sizeof p->why];
    r->socket_checks++;
    int k = procsock_serves(e->params.root, t->pid, &r->socks, now32, why, sizeof why);
    p->checked_ms = now32;
    if (k > 0) {
        p->serves = 1;
        snprintf(p->why, sizeof p->why, "%s", why);
    } else if (k == 0) {
        p->serves = 0;
        p->why[0] = '\0';
    } else if (errno_is_gone(k)) {
        p->serves = -1; /* its exit event follows */
    } else {
        p->serves = 2;
        snprintf(p->why, sizeof p->why, "its sockets could not be read (%s)", strerror(-k));
        if (!r->unreadable_said && (k == -EACCES || k == -EPERM)) {
            r->unreadable_said = true;
            log_notice("request paths: the sockets of pid %d could not be read (%s); behaviour packs no process "
                       "whose sockets it cannot read (CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH are needed)",
                       (int)t->pid, strerror(-k));
        }
    }
}

/* Evidence that t's wake-ups are its own timer's: where it sleeps now. */
static bool sleeps_as_housekeeping(struct engine *e, const struct task *t, struct reqpath_proc *p)
{
    struct reqpath_syscall sc;
    const char *name = "?";
    e->reqpath.sleep_reads++;
    int k = procsock_sleep(e->params.root, t->pid, t->tid, &sc);
    enum reqpath_sleep kind = k < 0 ? REQPATH_SLEEP_UNKNOWN : reqpath_sleep_of(&sc, &name);
    if (k < 0)
        name = "unreadable";
    p->sleep = (uint8_t)kind;
    snprintf(p->sleep_call, sizeof p->sleep_call, "%s", name);
    return kind != REQPATH_SLEEP_UNKNOWN && !reqpath_sleep_is_request(kind);
}

bool engine_reqpath_may_be_jitter(struct engine *e, struct task *t, bool granting)
{
    uint32_t now32 = (uint32_t)now_ms();
    struct reqpath_proc *p = proc_of(e, t, e->cfg->request_paths || e->cfg->tail_guard);
    if (!p)
        return !e->cfg->request_paths; /* out of memory: pack nothing new by behaviour */
    if (e->cfg->tail_guard && reqpath_tail_cooling(&p->tail, now32))
        return false;
    if (!e->cfg->request_paths)
        return true;
    if (p->serves < 0 || now32 - p->checked_ms >= REQPATH_RECHECK_MS)
        check_sockets(e, t, p, now32);
    if (p->serves != 0) {
        if (granting)
            e->reqpath.held_serving++;
        return false;
    }
    if (!granting)
        return true;
    if (!sleeps_as_housekeeping(e, t, p)) {
        e->reqpath.held_sleep++;
        return false;
    }
    return true;
}

void engine_reqpath_sample(struct engine *e, struct task *t, const struct sampler_sample *d)
{
    if (!e->cfg->tail_guard || !d->slices)
        return;
    struct reqpath_proc *p = proc_of(e, t, true);
    if (!p)
        return;
    bool packed = t->class == CLASS_JITTER && t->source == SOURCE_BEHAVIOUR && applier_find(e->applier, t->tid);
    /* the run-delay budget is the slack: waits within it are packing's accepted cost */
    uint64_t budget_ns = e->cfg->policy.max_run_delay_ns;
    double slack_us = budget_ns ? (double)budget_ns / 1000 : REQPATH_GUARD_SLACK_US;
    if (!reqpath_tail_sample(&p->tail, packed, d->wait_ns, d->run_ns, d->slices, d->dt_ms, d->now_ms,
                             e->cfg->behaviour.window_ms, slack_us))
        return;
    e->reqpath.released++;
    log_ratelimited(&e->reqpath.logs, LOG_INFO,
                    "pid %d (%s): packed, it waited %.0f µs per wake-up at its tail against %.0f µs unpacked "
                    "(limit %.0f µs): released, and not packed by behaviour for %u min",
                    (int)t->pid, t->comm, p->tail.packed_us, p->tail.unpacked_us, reqpath_tail_limit_us(&p->tail),
                    REQPATH_GUARD_COOLDOWN_MS / 60000u);
}

void engine_reqpath_gone(struct engine *e, const struct task *t)
{
    if (t->tid == t->pid)
        pidmap_remove(&e->reqpath.procs, t->pid, NULL);
}

unsigned engine_reqpath_cooling(const struct engine *e)
{
    unsigned n = 0;
    size_t iter = 0;
    uint32_t now32 = (uint32_t)now_ms();
    struct reqpath_proc *p;
    while ((p = pidmap_next(&e->reqpath.procs, &iter, NULL)))
        if (reqpath_tail_left_ms(&p->tail, now32))
            n++;
    return n;
}

void engine_reqpath_explain(const struct engine *e, const struct task *t, char *buf, size_t size)
{
    const struct reqpath_proc *p = pidmap_find(&e->reqpath.procs, t->pid);
    uint32_t now32 = (uint32_t)now_ms();
    if (!e->cfg->behaviour.enabled || (!e->cfg->request_paths && !e->cfg->tail_guard)) {
        snprintf(buf, size, "not looked at (request_paths = no, tail_guard = no)");
        return;
    }
    if (!p) {
        snprintf(buf, size, "not looked at yet");
        return;
    }
    int n = 0;
    if (!e->cfg->request_paths)
        n = snprintf(buf, size, "not looked for (request_paths = no)");
    else if (p->serves == 1)
        n = snprintf(buf, size, "serves: %s, so not jitter by behaviour", p->why);
    else if (p->serves == 2)
        n = snprintf(buf, size, "unknown: %s, so not jitter by behaviour", p->why);
    else if (p->serves == 0 && p->sleep_call[0])
        n = snprintf(buf, size, "serves no one; a thread was last found in %s (%s%s)", p->sleep_call,
                     reqpath_sleep_to_string((enum reqpath_sleep)p->sleep),
                     reqpath_sleep_is_request((enum reqpath_sleep)p->sleep) || p->sleep == REQPATH_SLEEP_UNKNOWN
                         ? ": no evidence of housekeeping, held back"
                         : ": its own timer or deadline");
    else if (p->serves == 0)
        n = snprintf(buf, size, "serves no one");
    else
        n = snprintf(buf, size, "sockets not read yet");
    if (n < 0 || (size_t)n >= size || !e->cfg->tail_guard)
        return;
    const struct reqpath_tail *tl = &p->tail;
    uint32_t left_ms = reqpath_tail_left_ms(tl, now32);
    if (left_ms)
        snprintf(buf + n, size - (size_t)n,
                 "; released by the tail guard: %.0f µs per wake-up packed against %.0f µs unpacked, kept out "
                 "%u s more",
                 tl->packed_us, tl->unpacked_us, left_ms / 1000u);
    else if (tl->unpacked_samples || tl->packed_samples)
        snprintf(buf + n, size - (size_t)n,
                 "; run-queue wait tail %.0f µs per wake-up unpacked, %.0f µs packed (limit %.0f µs)", tl->unpacked_us,
                 tl->packed_us, reqpath_tail_limit_us(tl));
}
