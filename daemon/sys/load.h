/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Load measurement: per-CPU utilisation from /proc/stat deltas, per-task CPU
 * time, and EWMA smoothing. The parsers and the smoother are pure; the readers
 * take a root directory so tests can point them at fixture trees. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct cpu_stat {
    bool present;  /* a cpuN line was seen */
    uint64_t busy; /* total − idle − iowait, in USER_HZ ticks */
    uint64_t idle; /* idle + iowait */
    uint64_t total;
};

/* Parse the text of /proc/stat into cpus[0..max_cpus); *n_cpus = highest CPU
 * seen + 1. CPUs absent from the text (offline) are !present. */
int load_parse_stat(const char *text, struct cpu_stat *cpus, int max_cpus, int *n_cpus);
int load_read_stat(const char *root, struct cpu_stat *cpus, int max_cpus, int *n_cpus);

/* Utilisation of each CPU between two samples, in milli (0..1000), or -1
 * where there is no valid sample: absent in either snapshot, no time passed,
 * or counters that went backwards (a CPU that went offline and came back).
 * wall_ticks: the wall time between the samples, in USER_HZ ticks (0:
 * unknown). A kernel that accounts user and system time by sampling at its
 * tick (CONFIG_TICK_CPU_ACCOUNTING) can charge a CPU more ticks than
 * passed, while its idle time, where the tick stops in idle, is measured:
 * on a 2-vCPU VM, 113 busy ticks (93 of them softirq) beside 484 idle in
 * 504 ticks of wall time, 19% busy by the counters for 4% by the clock.
 * Where the counters ran ahead of the wall time, busy is the wall time
 * less idle. */
void load_cpu_util(const struct cpu_stat *prev, int n_prev, const struct cpu_stat *cur, int n_cur, uint64_t wall_ticks,
                   int *util_milli, int n_out);

/* Exponentially weighted moving average whose weight on the past halves every
 * half_life_ms, rounded towards the sample, so that a steady sample is
 * reached (and 0 after samples of 0). half_life_ms 0 means no smoothing. */
unsigned load_ewma(unsigned prev_milli, unsigned sample_milli, uint64_t dt_ms, unsigned half_life_ms);

/* CPU time a thread has consumed, in ns: /proc/PID/task/TID/schedstat (first
 * field), falling back to utime+stime from .../stat. -ESRCH/-ENOENT when gone. */
int load_read_task_runtime(const char *root, pid_t pid, pid_t tid, uint64_t *runtime_ns);
/* The same, plus the CPU the thread last ran on (field 39 of its stat), so
 * its load can be charged to that CPU. */
int load_read_task_sample(const char *root, pid_t pid, pid_t tid, uint64_t *runtime_ns, int *last_cpu);
/* The CPU a task last ran on (field 39 of its stat), alone. */
int load_read_task_cpu(const char *root, pid_t pid, pid_t tid, int *last_cpu);
/* Pure parsers behind them. */
int load_parse_task_stat_cpu(const char *text, int *cpu);
int load_parse_schedstat(const char *text, uint64_t *runtime_ns);
int load_parse_task_stat_cputime(const char *text, long clk_tck, uint64_t *runtime_ns);
