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

bool sampler_gate_quiet(struct sampler *s, struct task_table *tt, const struct task *t, uint32_t since_ms,
                        uint32_t now32, uint32_t refresh_ms)
{
    if (t->tid == t->pid || t->pid <= 0)
        return false; /* a leader's own schedstat costs less than the process's stat */
    struct task *leader = task_table_find(tt, t->pid);
    if (!leader)
        return false;
    struct sampler_gate *g = gate_of(s, leader);
    if (!g && !(g = gate_new(s, leader)))
        return false;
    /* the read costs the kernel a walk of every thread: a big process is
     * read less often (SAMPLER_GATE_MS_PER_THREAD) */
    refresh_ms = MAX(refresh_ms, g->threads * SAMPLER_GATE_MS_PER_THREAD);
    if (!g->valid && g->read_ms && now32 - g->read_ms < refresh_ms)
        return false; /* unreadable a moment ago: not tried again before refresh_ms */
    if (!g->valid || now32 - g->read_ms >= refresh_ms) {
        uint64_t ticks;
        s->gate_reads++;
        if (read_total(s, t->pid, &ticks, &g->threads) < 0) {
            g->valid = 0;
            g->read_ms = now32 | 1; /* never 0: "not tried" */
            return false;
        }
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
    return (int32_t)(since_ms - g->stable_ms) >= 0;
}
