/* The load sampler: what the packer needs to know about load, measured once
 * a tick. Per CPU: utilisation from /proc/stat deltas, smoothed. Per jitter
 * task: CPU time from its schedstat, smoothed, and charged to the CPU it last
 * ran on. It reads through load.c below a root directory, so tests point it
 * at a fixture tree; it decides nothing. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "load.h"

struct task;
struct task_table;

struct sampler {
    const char *root;            /* "/" on a real system */
    int n_cpus;                  /* entries in the per-CPU arrays */
    struct cpu_stat *stat_prev;  /* the previous /proc/stat sample */
    int n_stat_prev;
    uint64_t stat_prev_ms;
    int *util_milli;             /* smoothed per-CPU utilisation, -1 = no sample */
    int *jitter_milli;           /* share of it from jitter tasks, by the CPU each last ran on */
    unsigned jitter_load_milli;  /* every jitter task's utilisation, summed */
    size_t cursor;               /* where the next tick's task sampling starts */
};

/* A tick reads at most this many tasks (round robin); see sampler.c. */
#define SAMPLER_TASKS_PER_TICK 64

/* Arrays for n_cpus CPUs (at least 1), no sample yet. root is kept, not copied. */
int sampler_init(struct sampler *s, const char *root, int n_cpus);
void sampler_destroy(struct sampler *s);
/* Grow the per-CPU arrays (hotplug brought a higher CPU); never shrinks. New
 * CPUs have no sample yet. */
int sampler_resize(struct sampler *s, int n_cpus);

/* Read /proc/stat and fold it into util_milli (the first sample of a CPU is
 * taken as is; later ones are smoothed with half_life_ms). -errno when
 * /proc/stat could not be read, logged: the tick has no load figures then
 * (-ERANGE when it lists a CPU beyond n_cpus: sampler_resize first, as the
 * engine does when the topology changes). */
int sampler_sample_cpus(struct sampler *s, uint64_t now_ms, unsigned half_life_ms);

/* Read up to SAMPLER_TASKS_PER_TICK jitter tasks from where the last call
 * stopped, then recompute jitter_milli and jitter_load_milli from every
 * jitter task's latest figures. Tasks that are gone are left for their exit
 * event to remove. */
void sampler_sample_tasks(struct sampler *s, struct task_table *tt, uint64_t now_ms, unsigned half_life_ms);

/* One reading of a task's scheduler counters, and what changed since the
 * previous one: the one place a task's counters are read and differenced. */
struct sampler_reading {
    uint64_t runtime_ns;         /* CPU time so far (schedstat, or utime+stime) */
};
struct sampler_delta {
    uint32_t dt_ms;              /* since the previous reading; 0: no previous one */
    uint64_t run_ns;             /* CPU time in between */
};
int sampler_read_task(const struct sampler *s, const struct task *t, struct sampler_reading *ret);
/* false when there is no valid previous reading to compare with (first
 * sample, no time passed, or a counter that went backwards). */
bool sampler_task_delta(const struct task *t, const struct sampler_reading *now, uint32_t now32,
                        struct sampler_delta *ret);
