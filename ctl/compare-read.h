/* SPDX-License-Identifier: GPL-2.0-or-later */
/* turbosched-ctl compare: the readers of /proc and /sys. Each takes the
 * root directory the trees live under ("/" on a real system; tests pass
 * fixture trees). Counters only: the caller takes differences. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "compare-stats.h"

struct cmp_cpu {
    bool present;                         /* a cpuN line in /proc/stat */
    uint64_t idle_jiffies, total_jiffies; /* /proc/stat: idle + iowait, all fields */
    bool has_cpuidle;                     /* /sys/devices/system/cpu/cpuN/cpuidle/state* */
    uint64_t idle_entries;                /* cpuidle: usage, all states */
    uint64_t idle_time_us;                /* cpuidle: time, all states */
    uint64_t irq_wakeups;                 /* /proc/interrupts: LOC + RES */
    unsigned freq_khz;                    /* cpufreq scaling_cur_freq; 0 without cpufreq */
};

struct cmp_cpus {
    unsigned n_cpus; /* highest present CPU + 1 */
    struct cmp_cpu cpu[CMP_MAX_CPUS];
};
/* Every source that exists; -errno only when /proc/stat is unreadable. */
int cmp_read_cpus(const char *root, struct cmp_cpus *out);

/* Package energy under /sys/class/powercap (intel-rapl:N zones named
 * "package-N"): the sum of energy_uj and of the wrap ranges. -ENOENT when
 * no package zone is exposed (or none is readable, as for non-root). */
struct cmp_rapl {
    unsigned n_zones;
    uint64_t energy_uj[16], range_uj[16];
};
int cmp_read_rapl(const char *root, struct cmp_rapl *out);
/* Joules between two readings, each zone's wrap-around taken into account. */
double cmp_rapl_joules(const struct cmp_rapl *a, const struct cmp_rapl *b);

struct cmp_thread {
    pid_t tid, pid;
    uint64_t start_time;              /* /proc/TID/stat field 22: guards against TID reuse */
    uint64_t run_ns, wait_ns, slices; /* /proc/TID/schedstat */
    int last_cpu;                     /* /proc/TID/stat field 39 */
    char comm[32];
};
struct cmp_threads {
    size_t n, cap;
    struct cmp_thread *t; /* sorted by tid */
};
/* Every thread under root/proc; a thread that exits meanwhile is skipped.
 * only_pid > 0 reads one process's threads. */
int cmp_read_threads(const char *root, pid_t only_pid, struct cmp_threads *out);
void cmp_threads_done(struct cmp_threads *t);
const struct cmp_thread *cmp_threads_find(const struct cmp_threads *t, pid_t tid);
/* Parses one /proc/TID/stat line: start time, last CPU and comm. */
int cmp_parse_stat(const char *line, struct cmp_thread *t);
