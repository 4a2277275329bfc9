#include "sampler.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "task.h"
#include "util.h"

int sampler_init(struct sampler *s, const char *root, int n_cpus)
{
    *s = (struct sampler){.root = root};
    return sampler_resize(s, MAX(n_cpus, 1));
}

void sampler_destroy(struct sampler *s)
{
    free(s->stat_prev);
    free(s->util_milli);
    free(s->jitter_milli);
    *s = (struct sampler){.root = s->root};
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
            *u = raw[i];     /* first sample: nothing to smooth with */
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
        log_warning("reading /proc/stat: %s", strerror(-r));
        return r;
    }
    if ((r = sampler_resize(s, n_cur)) < 0)
        return r;
    load_cpu_util(s->stat_prev, s->n_stat_prev, cur, n_cur, raw, n_cur);
    smooth_cpus(s, cur, n_cur, raw, s->stat_prev_ms ? now_ms - s->stat_prev_ms : 0, half_life_ms);
    memcpy(s->stat_prev, cur, sizeof(*cur) * (size_t)n_cur);
    s->n_stat_prev = n_cur;
    s->stat_prev_ms = now_ms;
    return 0;
}

int sampler_read_task(const struct sampler *s, const struct task *t, struct sampler_reading *ret)
{
    *ret = (struct sampler_reading){0};
    return load_read_task_runtime(s->root, t->pid, t->tid, &ret->runtime_ns);
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
static void sample_one(const struct sampler *s, struct task *t, uint32_t now32, unsigned half_life_ms)
{
    struct sampler_reading now;
    struct sampler_delta d;
    int cpu = t->last_cpu;
    if (sampler_read_task(s, t, &now) < 0)
        return;     /* gone: its exit event removes it */
    /* A task that has not run since its last sample is still where it was:
     * the stat file (for its CPU) is read only when it ran, which spares
     * half the reads of a machine full of sleeping threads. */
    if ((t->sample_ms == 0 || now.runtime_ns != t->runtime_ns) &&
        load_read_task_cpu(s->root, t->pid, t->tid, &cpu) < 0)
        return;
    if (sampler_task_delta(t, &now, now32, &d)) {
        uint64_t sample = d.run_ns / 1000 / d.dt_ms;   /* ns per ms = milli of a CPU */
        t->util_milli = load_ewma(t->util_milli, (unsigned)MIN(sample, 1000), d.dt_ms, half_life_ms);
    }
    t->runtime_ns = now.runtime_ns;
    t->sample_ms = now32;
    t->last_cpu = (int16_t)MIN(cpu, INT16_MAX);
}

/* Read up to SAMPLER_TASKS_PER_TICK jitter tasks, from where the last tick stopped. */
static void read_some(struct sampler *s, struct task_table *tt, uint32_t now32, unsigned half_life_ms)
{
    unsigned n = task_table_count(tt), visited = 0, read = 0;
    size_t iter = s->cursor;
    struct task *t;
    while (visited < n && read < SAMPLER_TASKS_PER_TICK) {
        if (!(t = task_table_next(tt, &iter))) {
            if (iter == 0)
                break;
            iter = 0;
            continue;
        }
        visited++;
        if (t->class == CLASS_JITTER) {
            sample_one(s, t, now32, half_life_ms);
            read++;
        }
    }
    s->cursor = iter;
}

/* Totals from every jitter task's latest figures. */
static void sum_jitter(struct sampler *s, struct task_table *tt)
{
    uint64_t total = 0;
    size_t iter = 0;
    struct task *t;
    memset(s->jitter_milli, 0, sizeof(*s->jitter_milli) * (size_t)s->n_cpus);
    while ((t = task_table_next(tt, &iter))) {
        if (t->class != CLASS_JITTER)
            continue;
        total += t->util_milli;
        if (t->last_cpu >= 0 && t->last_cpu < s->n_cpus)
            s->jitter_milli[t->last_cpu] = (int)MIN((unsigned)s->jitter_milli[t->last_cpu] + t->util_milli, 1000u);
    }
    s->jitter_load_milli = (unsigned)MIN(total, (uint64_t)UINT_MAX);
}

void sampler_sample_tasks(struct sampler *s, struct task_table *tt, uint64_t now_ms, unsigned half_life_ms)
{
    read_some(s, tt, (uint32_t)now_ms, half_life_ms);
    sum_jitter(s, tt);
}
