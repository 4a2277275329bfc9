/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Per-process gates (sampler.h, struct sampler_gate): one read of
 * /proc/PID/stat tells whether any thread of a process ran, so that its
 * sleeping threads need not be read one by one. */
#include "sampler.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "task.h"
#include "util.h"

#define SAMPLER_GATE_STABLE_CLAMP_MS (1 << 30)

static struct sampler_gate *gate_of(const struct sampler *s, const struct task *leader)
{
    struct sampler_gate *g = freelist_get(&s->gate, leader->gate);
    return g && g->in_use ? g : NULL;
}

static struct sampler_gate *gate_new(struct sampler *s, struct task *leader)
{
    struct sampler_gate *g = freelist_take(&s->gate, &leader->gate);
    if (g)
        g->in_use = 1;
    return g;
}

void sampler_gate_release(struct sampler *s, struct task *leader)
{
    uint32_t id = leader->gate;
    struct sampler_gate *g = gate_of(s, leader);
    leader->gate = 0;
    if (!g)
        return;
    freelist_put(&s->gate, id);
}

/* utime + stime of the whole process, in clock ticks */
static int read_total(const struct sampler *s, pid_t pid, uint64_t *ret, uint32_t *threads)
{
    char rel[48], path[PATH_MAX], buf[1024];
    uint64_t utime, stime, threads_n;
    snprintf(rel, sizeof rel, "/proc/%d/stat", (int)pid);
    int r = path_join(path, sizeof path, s->root, rel);
    if (r < 0)
        return r;
    ssize_t n = read_proc_file(path, buf, sizeof buf);
    if (n < 0)
        return (int)n;
    if (procstat_u64(buf, 14, &utime) < 0 || procstat_u64(buf, 15, &stime) < 0 || procstat_u64(buf, 20, &threads_n) < 0)
        return -EBADMSG;
    *ret = utime + stime;
    *threads = (uint32_t)MIN(threads_n, UINT32_MAX);
    return 0;
}

/* The gate of t's process, read again when its last read is refresh_ms old
 * (fast_ms, when not 0, instead, while that read found the total moving or
 * was the first), or NULL when it cannot tell: t is a leader, its leader is
 * not tracked, its stat is unreadable, or it was never read and may_read is
 * false. */
static struct sampler_gate *gate_fresh(struct sampler *s, struct task_table *tt, const struct task *t, uint32_t now32,
                                       uint32_t refresh_ms, uint32_t fast_ms, bool may_read)
{
    if (t->tid == t->pid || t->pid <= 0)
        return NULL; /* a leader's own schedstat costs less than the process's stat */
    struct task *leader = task_table_find(tt, t->pid);
    if (!leader)
        return NULL;
    struct sampler_gate *g = gate_of(s, leader);
    if (!g && !(g = gate_new(s, leader)))
        return NULL;
    /* the read costs the kernel a walk of every thread: a big process is
     * read less often (SAMPLER_GATE_MS_PER_THREAD) */
    refresh_ms = MAX(refresh_ms, g->threads * SAMPLER_GATE_MS_PER_THREAD);
    if (fast_ms && g->valid && g->stable_ms == g->read_ms)
        refresh_ms = fast_ms;
    if (!g->valid && g->read_ms && now32 - g->read_ms < refresh_ms)
        return NULL; /* unreadable a moment ago: not tried again before refresh_ms */
    if (may_read && (!g->valid || now32 - g->read_ms >= refresh_ms)) {
        uint64_t ticks;
        s->gate_reads++;
        if (read_total(s, t->pid, &ticks, &g->threads) < 0) {
            g->valid = 0;
            g->read_ms = now32 | 1; /* never 0: "not tried" */
            return NULL;
        }
        g->compared = g->valid;
        g->moved = g->valid && ticks != g->ticks;
        if (!g->valid || ticks != g->ticks) {
            g->ticks = ticks;
            g->stable_ms = now32;
        } else if ((int32_t)(now32 - g->stable_ms) > SAMPLER_GATE_STABLE_CLAMP_MS) {
            /* quiet for weeks: kept within half the clock's range, or the
             * comparison below would turn around (callers ask about the last
             * SAMPLER_GATE_MAX_WINDOWS windows only) */
            g->stable_ms = now32 - SAMPLER_GATE_STABLE_CLAMP_MS;
        }
        g->valid = 1;
        g->read_ms = now32;
    }
    return g->valid ? g : NULL;
}

bool sampler_gate_quiet(struct sampler *s, struct task_table *tt, const struct task *t, uint32_t since_ms,
                        uint32_t now32, uint32_t refresh_ms)
{
    const struct sampler_gate *g = gate_fresh(s, tt, t, now32, refresh_ms, 0, true);
    return g && (int32_t)(since_ms - g->stable_ms) >= 0;
}

enum sampler_still sampler_gate_still(struct sampler *s, struct task_table *tt, const struct task *t, uint32_t now32,
                                      uint32_t still_ms, bool may_read)
{
    const struct sampler_gate *g = gate_fresh(s, tt, t, now32, still_ms, still_ms, may_read);
    if (!g || g->moved)
        return SAMPLER_RUNNING;
    return g->compared ? SAMPLER_STILL : SAMPLER_NOT_SEEN;
}
