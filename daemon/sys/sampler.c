/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "sampler.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "procscan.h"
#include "task.h"
#include "util.h"

int sampler_init(struct sampler *s, const char *root, int n_cpus)
{
    *s = (struct sampler){.root = root,
                          .idle_backoff_ms = SAMPLER_IDLE_BACKOFF_MS,
                          .watch = FREELIST_INIT(struct sampler_watch, next_ms, 256),
                          .gate = FREELIST_INIT(struct sampler_gate, read_ms, 64)};
    return sampler_resize(s, MAX(n_cpus, 1));
}

void sampler_destroy(struct sampler *s)
{
    free(s->stat_prev);
    free(s->util_milli);
    free(s->jitter_milli);
    freelist_done(&s->watch);
    freelist_done(&s->gate);
    *s = (struct sampler){.root = s->root,
                          .watch = s->watch,
                          .gate = s->gate,
                          .on_jitter_reading = s->on_jitter_reading,
                          .hook_data = s->hook_data};
}

int sampler_resize(struct sampler *s, int n_cpus)
{
    if (n_cpus <= s->n_cpus)
        return 0;
    struct cpu_stat *st = realloc(s->stat_prev, sizeof(*st) * (size_t)n_cpus);
    if (!st)
        return -ENOMEM;
    s->stat_prev = st;
    int *u = realloc(s->util_milli, sizeof(*u) * (size_t)n_cpus);
    if (!u)
        return -ENOMEM;
    for (int i = s->n_cpus; i < n_cpus; i++) {
        st[i] = (struct cpu_stat){0};
        u[i] = -1;
    }
    s->util_milli = u;
    int *j = realloc(s->jitter_milli, sizeof(*j) * (size_t)n_cpus);
    if (!j)
        return -ENOMEM;
    for (int i = s->n_cpus; i < n_cpus; i++)
        j[i] = 0;
    s->jitter_milli = j;
    s->n_cpus = n_cpus;
    return 0;
}

/* Fold one raw sample per CPU into the smoothed figures. A CPU without a
 * valid raw sample keeps its figure while it is present (one bad delta) and
 * loses it when it went offline. */
static void smooth_cpus(struct sampler *s, const struct cpu_stat *cur, int n_cur, const int *raw, uint64_t dt_ms,
                        unsigned half_life_ms)
{
    for (int i = 0; i < s->n_cpus; i++) {
        int *u = &s->util_milli[i];
        if (i >= n_cur || raw[i] < 0)
            *u = (i < n_cur && cur[i].present && *u >= 0) ? *u : -1;
        else if (*u < 0)
            *u = raw[i]; /* first sample: nothing to smooth with */
        else
            *u = (int)load_ewma((unsigned)*u, (unsigned)raw[i], dt_ms, half_life_ms);
    }
}

int sampler_sample_cpus(struct sampler *s, uint64_t now_ms, unsigned half_life_ms)
{
    int cap = s->n_cpus;
    _cleanup_free_ struct cpu_stat *cur = calloc((size_t)cap, sizeof(*cur));
    _cleanup_free_ int *raw = calloc((size_t)cap, sizeof(*raw));
    int n_cur, r;
    if (!cur || !raw)
        return -ENOMEM;
    r = load_read_stat(s->root, cur, cap, &n_cur);
    if (r < 0) {
        log_warning_errno(r, "reading /proc/stat: %m");
        return r;
    }
    if ((r = sampler_resize(s, n_cur)) < 0)
        return r;
    /* the wall time since the last sample, in /proc/stat's ticks: on the
     * live system only, where the counters and now_ms keep the same time
     * (a fixture tree's counters move at a pace of their own) */
    long hz = sysconf(_SC_CLK_TCK);
    bool live = strcmp(s->root, "/") == 0 || s->root[0] == '\0';
    uint64_t wall = live && s->stat_prev_ms && now_ms > s->stat_prev_ms && hz > 0
                        ? (now_ms - s->stat_prev_ms) * (uint64_t)hz / 1000
                        : 0;
    load_cpu_util(s->stat_prev, s->n_stat_prev, cur, n_cur, wall, raw, n_cur);
    smooth_cpus(s, cur, n_cur, raw, s->stat_prev_ms ? now_ms - s->stat_prev_ms : 0, half_life_ms);
    memcpy(s->stat_prev, cur, sizeof(*cur) * (size_t)n_cur);
    s->n_stat_prev = n_cur;
    s->stat_prev_ms = now_ms;
    return 0;
}

int sampler_read_task(const struct sampler *s, const struct task *t, struct sampler_reading *ret)
{
    char buf[128];
    *ret = (struct sampler_reading){0};
    /* One read gives all three: run ns, run-queue wait ns, timeslices. */
    ssize_t n = read_proc_task(s->root, t->pid > 0 ? t->pid : t->tid, t->tid, "schedstat", buf, sizeof buf);
    if (n >= 0 && sscanf(buf, "%" SCNu64 " %" SCNu64 " %" SCNu64, &ret->runtime_ns, &ret->wait_ns, &ret->slices) == 3) {
        ret->schedstat = true;
        return 0;
    }
    if (n < 0 && errno_is_gone((int)n))
        return (int)n;
    return load_read_task_runtime(s->root, t->pid > 0 ? t->pid : t->tid, t->tid, &ret->runtime_ns);
}

bool sampler_is_kernel_thread(const struct task *t)
{
    /* Not read from /proc here: a thread in the middle of an exec holds its
     * process's exec_update_lock, which a read of its stat waits for, and
     * the exec'ing task itself may wait for a CPU meanwhile (measured: 6-27
     * ms per tick under a fork storm). procscan read the flag already. */
    return t->flags & TASK_F_KTHREAD;
}

/* A walk of every task in the table once, from a cursor (a slot) to the
 * table's end and on from its start: each tick's reads start where the last
 * tick's stopped. */
struct table_walk {
    size_t iter;   /* the slot to look at next */
    unsigned left; /* tasks not visited yet */
};

static struct table_walk walk_from(const struct task_table *tt, size_t cursor)
{
    return (struct table_walk){.iter = cursor, .left = task_table_count(tt)};
}

/* The next task, NULL when every one was visited. *at (may be NULL): its
 * slot, the cursor of a walk that starts with it. */
static struct task *walk_next(struct task_table *tt, struct table_walk *walk, size_t *at)
{
    while (walk->left) {
        size_t here = walk->iter;
        struct task *t = task_table_next(tt, &walk->iter);
        if (t) {
            walk->left--;
            if (at)
                *at = here;
            return t;
        }
        if (walk->iter == 0)
            return NULL;
        walk->iter = 0;
    }
    return NULL;
}

/* ------------------------------------------------------------ behaviour */

struct sampler_watch *sampler_watch_of(const struct sampler *s, const struct task *t)
{
    return freelist_get(&s->watch, t->watch);
}

static int watch_new(struct sampler *s, struct task *t)
{
    struct sampler_watch *w = freelist_take(&s->watch, &t->watch);
    if (!w)
        return -ENOMEM;
    w->in_use = 1;
    behaviour_state_init(&w->st);
    s->n_watching++;
    return 0;
}

void sampler_unwatch(struct sampler *s, struct task *t)
{
    struct sampler_watch *w = sampler_watch_of(s, t);
    uint32_t id = t->watch;
    t->watch = 0;
    if (!w || !w->in_use)
        return;
    freelist_put(&s->watch, id);
    s->n_watching--;
}

void sampler_watch_reset(struct sampler *s, struct task *t)
{
    struct sampler_watch *w = sampler_watch_of(s, t);
    if (!w)
        return;
    behaviour_state_init(&w->st);
    w->next_ms = 0;
    w->idle_reads = 0;
    w->verdict = BEHAVIOUR_NONE;
}

void sampler_behaviour_explain(const struct sampler *s, const struct task *t, const struct behaviour_params *p,
                               uint64_t now_ms, char *buf, size_t size)
{
    const struct sampler_watch *w = sampler_watch_of(s, t);
    struct sampler_reading rd;
    if (!p->enabled) {
        snprintf(buf, size, "behaviour: off (behaviour = no)");
    } else if (t->flags & TASK_F_NOT_CANDIDATE) {
        snprintf(buf, size, "behaviour: never (kernel thread, or pinned by its user)");
    } else if (t->source != SOURCE_DEFAULT && t->source != SOURCE_BEHAVIOUR) {
        snprintf(buf, size, "behaviour: not needed (decided by %s)", class_source_to_string(t->source));
    } else if (!w) {
        snprintf(buf, size, "behaviour: not watched yet");
    } else if (sampler_read_task(s, t, &rd) < 0 || !rd.schedstat) {
        snprintf(buf, size, "behaviour: no schedstat to read");
    } else {
        /* a copy: explaining must not change what the tick decides */
        struct behaviour_state st = w->st;
        struct behaviour_sample in = {
            .now_ms = (uint32_t)now_ms, .run_ns = rd.runtime_ns, .wait_ns = rd.wait_ns, .slices = rd.slices};
        struct behaviour_result res;
        behaviour_update(p, &st, &in, &res);
        int n = behaviour_format(p, &res, buf, size);
        if (w->verdict == BEHAVIOUR_JITTER && res.verdict != BEHAVIOUR_JITTER && n >= 0 && (size_t)n < size)
            snprintf(buf + n, size - (size_t)n, "; held jitter until below %u%% of the wake-ups",
                     SAMPLER_WAKEUPS_HYSTERESIS_PCT);
    }
}

size_t sampler_memory_bytes(const struct sampler *s)
{
    return freelist_memory_bytes(&s->watch) + freelist_memory_bytes(&s->gate);
}

static bool due(const struct sampler_watch *w, uint32_t now32) { return (int32_t)(now32 - w->next_ms) >= 0; }

/* Read one watched thread and feed the verdict machine. */
static void watch_read(struct sampler *s, struct task *t, struct sampler_watch *w, const struct behaviour_params *p,
                       uint32_t now32, const struct sampler_behaviour_hooks *h)
{
    struct sampler_reading rd;
    s->behaviour_reads++;
    if (sampler_read_task(s, t, &rd) < 0 || !rd.schedstat) {
        /* gone (its exit event follows), or no schedstat: no wake-ups to judge by */
        w->next_ms = now32 + p->window_ms;
        return;
    }
    bool ran = !(w->st.flags & BEHAVIOUR_F_SEEN) || rd.slices != w->st.slices;
    if (h->on_sample && (w->st.flags & BEHAVIOUR_F_SEEN) && rd.runtime_ns >= w->st.run_ns &&
        rd.wait_ns >= w->st.wait_ns && rd.slices >= w->st.slices && now32 != w->st.last_ms) {
        struct sampler_sample d = {.run_ns = rd.runtime_ns - w->st.run_ns,
                                   .wait_ns = rd.wait_ns - w->st.wait_ns,
                                   .slices = rd.slices - w->st.slices,
                                   .dt_ms = now32 - w->st.last_ms,
                                   .now_ms = now32};
        h->on_sample(t, &d, h->userdata);
    }
    struct behaviour_sample in = {.now_ms = now32, .run_ns = rd.runtime_ns, .wait_ns = rd.wait_ns, .slices = rd.slices};
    struct behaviour_result res;
    behaviour_update(p, &w->st, &in, &res);
    /* Every program is heavy for a moment after exec (loading, start-up):
     * within its first window that is not a phase change, and the window's
     * figures count it anyway. The cool-down is for what turns heavy later. */
    if (res.heavy && w->verdict != BEHAVIOUR_JITTER && res.observed_ms < p->window_ms) {
        w->st.flags &= (uint8_t)~BEHAVIOUR_F_COOLING;
        w->st.cooldown_until_ms = 0;
    }
    /* A thread that sleeps through reads is read less and less often: it
     * has no wake-ups to count. One that runs is read every window/5, and
     * one that is jitter by behaviour every tick (next_ms = now). */
    unsigned base = MAX(p->window_ms / 5, BEHAVIOUR_MIN_SAMPLE_MS);
    w->idle_reads = ran ? 0 : (uint8_t)MIN(w->idle_reads + 1u, 8u);
    uint64_t gap = (uint64_t)base << w->idle_reads;
    gap = MIN(gap, (uint64_t)p->window_ms * 6);
    enum behaviour_verdict v = res.verdict;
    if (w->verdict == BEHAVIOUR_JITTER && v == BEHAVIOUR_NONE && res.why == BEHAVIOUR_WHY_FEW_WAKEUPS &&
        res.wakeups_per_s * 100 >= (double)p->jitter_min_wakeups_per_s * SAMPLER_WAKEUPS_HYSTERESIS_PCT)
        v = BEHAVIOUR_JITTER;
    if (v == BEHAVIOUR_JITTER && h->may_be_jitter &&
        !h->may_be_jitter(t, w->verdict != BEHAVIOUR_JITTER, h->userdata)) {
        v = BEHAVIOUR_NONE;
        res.verdict = v;
        res.why = BEHAVIOUR_WHY_HELD;
    }
    bool changed = v != w->verdict;
    w->verdict = (uint8_t)v;
    w->next_ms = v == BEHAVIOUR_JITTER ? now32 : now32 + (uint32_t)gap;
    if ((changed || res.released) && h->on_verdict)
        h->on_verdict(t, &res, h->userdata);
}

static bool is_candidate_source(const struct task *t)
{
    return t->source == SOURCE_DEFAULT || t->source == SOURCE_BEHAVIOUR;
}

/* What the last process asked about this tick showed: the threads of a
 * process sit side by side in the table, so one look at its gate serves
 * the lot. */
struct still_memo {
    pid_t pid; /* 0: none yet */
    enum sampler_still still;
};

/* sampler_gate_still, asked once per process and tick. */
static enum sampler_still process_still(struct sampler *s, struct task_table *tt, const struct task *t, uint32_t now32,
                                        uint32_t still_ms, bool may_read, struct still_memo *m)
{
    if (t->tid == t->pid || t->pid <= 0)
        return SAMPLER_RUNNING;
    if (m->pid != t->pid) {
        m->pid = t->pid;
        m->still = sampler_gate_still(s, tt, t, now32, still_ms, may_read);
    }
    return m->still;
}

/* What a tick may still read for behaviour: reads in all, and of those,
 * reads for threads that are merely due (the rest is kept for new ones). */
struct tick_budget {
    unsigned reads, due;
    unsigned catchup;                   /* of reads: first reads of threads of still processes */
    unsigned new_wanted;                /* new and unseen threads met this tick, catch-up ones aside */
    struct procscan_user_counts jitter; /* jitter-by-behaviour reads per user */
    struct still_memo still;
};

/* A thread that slept through its last read and holds no verdict, in a
 * process that has not run since (sampler_gate_quiet), is not read: it is
 * looked at again after window/5, and read anyway SAMPLER_GATE_MAX_WINDOWS
 * windows after its last read. A thread with a verdict is read until its
 * figures let it go. A read of the process's total counts as a due read. */
static bool gated(struct sampler *s, struct task_table *tt, const struct task *t, struct sampler_watch *w,
                  const struct behaviour_params *p, uint32_t now32, struct tick_budget *b)
{
    if (!w->idle_reads || w->verdict != BEHAVIOUR_NONE ||
        now32 - w->st.last_ms >= p->window_ms * SAMPLER_GATE_MAX_WINDOWS)
        return false;
    uint64_t reads = s->gate_reads;
    bool quiet = sampler_gate_quiet(s, tt, t, w->st.last_ms, now32, p->window_ms / SAMPLER_GATE_REFRESH_DIV);
    if (s->gate_reads != reads) {
        b->reads--; /* > 0 both: the caller checked */
        b->due--;
    }
    if (!quiet)
        return false;
    s->gate_skips++;
    w->next_ms = now32 + MAX(p->window_ms / 5, BEHAVIOUR_MIN_SAMPLE_MS);
    return true;
}

enum visit { VISIT_DONE, VISIT_STARVED, VISIT_STOP };

/* A due thread (it has a baseline, no jitter verdict): read unless gated. */
static enum visit visit_due(struct sampler *s, struct task_table *tt, struct task *t, struct sampler_watch *w,
                            const struct behaviour_params *p, uint32_t now32, const struct sampler_behaviour_hooks *h,
                            struct tick_budget *b)
{
    if (b->due == 0 || b->reads == 0)
        return VISIT_STARVED;
    if (gated(s, tt, t, w, p, now32, b))
        return VISIT_DONE;
    if (b->due == 0 || b->reads == 0)
        return VISIT_STARVED; /* the gate's read took the last one */
    b->due--;
    b->reads--;
    watch_read(s, t, w, p, now32, h);
    return VISIT_DONE;
}

/* A first read of a thread of a process not seen running (still) takes
 * one of the tick's catch-up reads (*left); false, counted, when none is
 * left. Any other thread's first read needs none. */
static bool catchup_take(struct sampler *s, enum sampler_still still, unsigned *left)
{
    if (still == SAMPLER_RUNNING)
        return true;
    if (*left == 0) {
        s->catchup_deferred++;
        return false;
    }
    --*left;
    s->catchup_reads++;
    return true;
}

/* Whether a thread not read yet may take one read now (the candidate ask
 * or its first schedstat read; the tick's budget is charged for it).
 * *still: what its gate showed of its process; one not seen running is
 * caught up with (SAMPLER_CATCHUP_READS_PER_TICK). */
static bool take_first_read(struct sampler *s, struct task_table *tt, const struct task *t,
                            const struct behaviour_params *p, uint32_t now32, struct tick_budget *b,
                            enum sampler_still *still)
{
    uint64_t reads = s->gate_reads;
    *still = process_still(s, tt, t, now32, p->window_ms / SAMPLER_GATE_REFRESH_DIV, b->reads > 0, &b->still);
    if (s->gate_reads != reads)
        b->reads--; /* > 0: may_read */
    if (*still == SAMPLER_RUNNING)
        b->new_wanted++;
    if (b->reads == 0 || !catchup_take(s, *still, &b->catchup))
        return false;
    b->reads--;
    return true;
}

/* A process added by its own fork event and not read since (start_pending:
 * start_time holds the event's monotonic time), less than
 * SAMPLER_FORKED_WAIT_MS ago. */
static bool forked_just_now(const struct task *t, uint64_t now_ms)
{
    uint64_t fork_ms = t->start_time / 1000000;
    return t->start_pending && now_ms >= fork_ms && now_ms - fork_ms < SAMPLER_FORKED_WAIT_MS;
}

/* One thread's turn in the tick's walk. */
static enum visit behaviour_visit(struct sampler *s, struct task_table *tt, struct task *t,
                                  const struct behaviour_params *p, uint64_t now_ms,
                                  const struct sampler_behaviour_hooks *h, struct tick_budget *b)
{
    uint32_t now32 = (uint32_t)now_ms;
    struct sampler_watch *w = sampler_watch_of(s, t);
    if (!is_candidate_source(t) || (t->flags & TASK_F_NOT_CANDIDATE)) {
        if (w)
            sampler_unwatch(s, t);
        return VISIT_DONE;
    }
    enum sampler_still still = SAMPLER_RUNNING;
    if (!w) {
        if (t->class == CLASS_UNSET || forked_just_now(t, now_ms))
            return VISIT_DONE;
        if (!take_first_read(s, tt, t, p, now32, b, &still))
            return VISIT_DONE;
        if (h->is_candidate && !h->is_candidate(t, h->userdata))
            return VISIT_DONE; /* the hook marked it: not asked again */
        if (watch_new(s, t) < 0)
            return VISIT_STOP;
        w = sampler_watch_of(s, t);
    }
    if (w->verdict == BEHAVIOUR_JITTER) {
        /* every tick, whatever the budget, up to its user's share */
        if (!procscan_user_take(&b->jitter, t, SAMPLER_JITTER_READS_PER_USER)) {
            s->behaviour_capped++;
            return VISIT_STARVED;
        }
        watch_read(s, t, w, p, now32, h);
    } else if (!(w->st.flags & BEHAVIOUR_F_SEEN)) {
        if (take_first_read(s, tt, t, p, now32, b, &still)) {
            watch_read(s, t, w, p, now32, h);
            /* Its process had not run for a while before the read: it was
             * asleep, and its gate spares it until the process runs. */
            if (still == SAMPLER_STILL && w->verdict == BEHAVIOUR_NONE && w->idle_reads == 0)
                w->idle_reads = 1;
        }
    } else if (due(w, now32)) {
        return visit_due(s, tt, t, w, p, now32, h, b);
    }
    return VISIT_DONE;
}

void sampler_sample_behaviour(struct sampler *s, struct task_table *tt, const struct behaviour_params *p,
                              uint64_t now_ms, const struct sampler_behaviour_hooks *h)
{
    size_t iter = 0;
    struct task *t;
    if (!p->enabled) {
        /* Turned off by a reload: what was observed would be stale when it
         * is turned on again. */
        while (s->n_watching && (t = task_table_next(tt, &iter)))
            sampler_unwatch(s, t);
        return;
    }
    /* One walk, from the first due thread the last tick could not read.
     * Jitter-by-behaviour threads are read every tick (released at once
     * when they turn heavy), up to their user's share. New and exec'd threads, which have no baseline
     * yet, may use the whole budget (those of a process not seen running,
     * SAMPLER_CATCHUP_READS_PER_TICK of it); threads that are merely due use what
     * the new ones of the last tick left, and at least half of it. */
    unsigned kept = MIN(s->behaviour_new_wanted, SAMPLER_BEHAVIOUR_READS_PER_TICK / 2);
    struct tick_budget b = {.reads = SAMPLER_BEHAVIOUR_READS_PER_TICK,
                            .due = SAMPLER_BEHAVIOUR_READS_PER_TICK - kept,
                            .catchup = 2 * SAMPLER_CATCHUP_READS_PER_TICK}; /* an ask and a read each */
    struct table_walk walk = walk_from(tt, s->watch_cursor);
    bool starved = false;
    size_t here;
    while ((t = walk_next(tt, &walk, &here))) {
        enum visit v = behaviour_visit(s, tt, t, p, now_ms, h, &b);
        if (v == VISIT_STOP)
            break;
        if (v == VISIT_STARVED && !starved) {
            s->watch_cursor = here; /* the next tick starts with it */
            starved = true;
        }
    }
    s->behaviour_new_wanted = b.new_wanted;
}

bool sampler_task_delta(const struct task *t, const struct sampler_reading *now, uint32_t now32,
                        struct sampler_delta *ret)
{
    *ret = (struct sampler_delta){.dt_ms = now32 - t->sample_ms};
    /* runtime_ns 0: never read (a task that never ran is read again next time) */
    if (!t->runtime_ns || !ret->dt_ms || now->runtime_ns < t->runtime_ns)
        return false;
    ret->run_ns = now->runtime_ns - t->runtime_ns;
    return true;
}

/* CPU time of jitter tasks, smoothed per task and charged to the CPU each
 * last ran on: the packer then does not count jitter it packed onto a core
 * against that core's own spare room. Reading a task costs a /proc read, so
 * a tick reads at most SAMPLER_TASKS_PER_TICK of them, round robin; a task
 * not read this tick counts with its last figures. With that many jitter
 * tasks or fewer, each is read every tick; with more, each is read every few
 * ticks and its figure is its mean over that longer interval. */
static void sample_one(struct sampler *s, struct task *t, uint32_t now32, unsigned half_life_ms, bool asleep)
{
    struct sampler_reading now;
    s->jitter_reads++;
    struct sampler_delta d;
    int cpu = t->last_cpu;
    if (sampler_read_task(s, t, &now) < 0)
        return; /* gone: its exit event removes it */
    if (now.schedstat && s->on_jitter_reading)
        s->on_jitter_reading(t, &now, s->hook_data);
    /* A task that has not run since its last sample is still where it was:
     * the stat file (for its CPU) is read only when it ran, which spares
     * half the reads of a machine full of sleeping threads. A first read
     * (catch-up) of a process its gate saw still is of a thread asleep: it
     * is read again, and its CPU, once the process runs. */
    bool ran = !asleep && (t->sample_ms == 0 || now.runtime_ns != t->runtime_ns);
    if (ran && load_read_task_cpu(s->root, t->pid, t->tid, &cpu) < 0)
        return;
    t->idle_samples = ran ? 0 : (uint8_t)MIN(t->idle_samples + 1u, SAMPLER_IDLE_BACKOFF_MAX_SHIFT);
    if (sampler_task_delta(t, &now, now32, &d)) {
        uint64_t sample = d.run_ns / 1000 / d.dt_ms; /* ns per ms = milli of a CPU */
        t->util_milli = load_ewma(t->util_milli, (unsigned)MIN(sample, 1000), d.dt_ms, half_life_ms);
    }
    t->runtime_ns = now.runtime_ns;
    t->sample_ms = now32;
    t->last_cpu = (int16_t)MIN(cpu, INT16_MAX);
}

/* Asleep at its last reads, and not due again yet (SAMPLER_IDLE_BACKOFF_MS). */
static bool backing_off(const struct sampler *s, const struct task *t, uint32_t now32)
{
    return t->idle_samples && now32 - t->sample_ms < s->idle_backoff_ms << (t->idle_samples - 1);
}

/* What a tick may still read of jitter tasks. */
struct jitter_budget {
    unsigned read;    /* reads so far, of SAMPLER_TASKS_PER_TICK */
    unsigned catchup; /* first reads of tasks of still processes left */
    struct still_memo still;
};

/* A jitter task's turn: read it if it is due and the tick may still read. */
static void jitter_visit(struct sampler *s, struct task_table *tt, struct task *t, uint32_t now32,
                         unsigned half_life_ms, struct jitter_budget *b)
{
    if (b->read >= SAMPLER_TASKS_PER_TICK || backing_off(s, t, now32))
        return;
    bool never_read = !t->sample_ms && !t->runtime_ns, asleep = false;
    /* Never read: the first read only sets a baseline, and most tasks of
     * a fork storm exit before a second; it waits for the next tick. */
    if (never_read && !(t->flags & TASK_F_FIRST_READ_DUE)) {
        t->flags |= TASK_F_FIRST_READ_DUE;
        s->first_reads_deferred++;
        return;
    }
    if (never_read) {
        uint64_t reads = s->gate_reads;
        enum sampler_still still = process_still(s, tt, t, now32, SAMPLER_GATE_JITTER_REFRESH_MS, true, &b->still);
        b->read += (unsigned)(s->gate_reads - reads);
        if (!catchup_take(s, still, &b->catchup))
            return;
        asleep = still == SAMPLER_STILL;
    }
    /* asleep at its last read with nothing left of its figure (which decays
     * only when it is read), in a process that has not run since */
    if (t->idle_samples && t->util_milli == 0 && now32 - t->sample_ms < SAMPLER_GATE_JITTER_MAX_MS) {
        uint64_t reads = s->gate_reads;
        bool quiet = sampler_gate_quiet(s, tt, t, t->sample_ms, now32, SAMPLER_GATE_JITTER_REFRESH_MS);
        b->read += (unsigned)(s->gate_reads - reads);
        if (quiet) {
            s->gate_skips++;
            return;
        }
    }
    sample_one(s, t, now32, half_life_ms, asleep);
    b->read++;
}

/* One walk from where the last tick's reads stopped: read up to
 * SAMPLER_TASKS_PER_TICK jitter tasks that are due, and sum every jitter
 * task's latest figures into jitter_milli and jitter_load_milli. */
void sampler_sample_tasks(struct sampler *s, struct task_table *tt, uint64_t now_ms, unsigned half_life_ms)
{
    uint32_t now32 = (uint32_t)now_ms;
    struct jitter_budget b = {.catchup = SAMPLER_CATCHUP_READS_PER_TICK};
    uint64_t total = 0;
    struct table_walk walk = walk_from(tt, s->cursor);
    struct task *t;
    memset(s->jitter_milli, 0, sizeof(*s->jitter_milli) * (size_t)s->n_cpus);
    while ((t = walk_next(tt, &walk, NULL))) {
        if (t->class != CLASS_JITTER)
            continue;
        bool was_full = b.read >= SAMPLER_TASKS_PER_TICK;
        jitter_visit(s, tt, t, now32, half_life_ms, &b);
        if (!was_full && b.read >= SAMPLER_TASKS_PER_TICK)
            s->cursor = walk.iter; /* the next tick reads from the task after it */
        total += t->util_milli;
        if (t->last_cpu >= 0 && t->last_cpu < s->n_cpus)
            s->jitter_milli[t->last_cpu] = (int)MIN((unsigned)s->jitter_milli[t->last_cpu] + t->util_milli, 1000u);
    }
    s->jitter_load_milli = (unsigned)MIN(total, (uint64_t)UINT_MAX);
}
