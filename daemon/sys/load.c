/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "load.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

/* /proc/stat: "cpuN user nice system idle iowait irq softirq steal guest guest_nice".
 * guest and guest_nice are already counted in user and nice, so they are not added. */
static int parse_cpu_line(const char *line, int *cpu, struct cpu_stat *st)
{
    unsigned long long v[8] = {0};
    int id, n;
    n = sscanf(line, "cpu%d %llu %llu %llu %llu %llu %llu %llu %llu", &id, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
               &v[6], &v[7]);
    if (n < 5 || id < 0)
        return -EINVAL;
    uint64_t total = 0;
    for (int i = 0; i < 8; i++)
        total += v[i];
    uint64_t idle = v[3] + v[4];
    st->present = true;
    st->total = total;
    st->idle = idle;
    st->busy = total - idle;
    *cpu = id;
    return 0;
}

int load_parse_stat(const char *text, struct cpu_stat *cpus, int max_cpus, int *n_cpus)
{
    int n = 0;
    for (int i = 0; i < max_cpus; i++)
        cpus[i] = (struct cpu_stat){0};
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, "cpu", 3) != 0 || !(p[3] >= '0' && p[3] <= '9'))
            continue;
        int cpu;
        struct cpu_stat st;
        if (parse_cpu_line(p, &cpu, &st) < 0)
            return -EINVAL;
        if (cpu >= max_cpus)
            return -ERANGE;
        cpus[cpu] = st;
        n = MAX(n, cpu + 1);
    }
    if (n == 0)
        return -EINVAL;
    *n_cpus = n;
    return 0;
}

int load_read_stat(const char *root, struct cpu_stat *cpus, int max_cpus, int *n_cpus)
{
    char path[PATH_MAX];
    int r = path_join(path, sizeof path, root, "/proc/stat");
    if (r < 0)
        return r;
    /* Roughly 100 bytes a CPU plus the interrupt line, which can be long. */
    size_t size = 65536 + (size_t)max_cpus * 160;
    _cleanup_free_ char *buf = malloc(size);
    if (!buf)
        return -ENOMEM;
    ssize_t n = read_file(path, buf, size);
    if (n < 0)
        return (int)n;
    return load_parse_stat(buf, cpus, max_cpus, n_cpus);
}

void load_cpu_util(const struct cpu_stat *prev, int n_prev, const struct cpu_stat *cur, int n_cur, uint64_t wall_ticks,
                   int *util_milli, int n_out)
{
    for (int i = 0; i < n_out; i++) {
        util_milli[i] = -1;
        if (i >= n_prev || i >= n_cur || !prev[i].present || !cur[i].present)
            continue;
        /* Counters restart from an unrelated value when a CPU goes offline
         * and back: a delta that goes backwards is no sample, not a negative load. */
        if (cur[i].total <= prev[i].total || cur[i].busy < prev[i].busy || cur[i].idle < prev[i].idle)
            continue;
        uint64_t dt = cur[i].total - prev[i].total;
        uint64_t db = cur[i].busy - prev[i].busy;
        if (wall_ticks && dt > wall_ticks) { /* sampled busy ticks beyond the time that passed */
            uint64_t di = cur[i].idle - prev[i].idle;
            dt = wall_ticks;
            db = di < dt ? dt - di : 0;
        }
        if (db > dt)
            db = dt;
        util_milli[i] = (int)((db * 1000 + dt / 2) / dt);
    }
}

unsigned load_ewma(unsigned prev_milli, unsigned sample_milli, uint64_t dt_ms, unsigned half_life_ms)
{
    if (half_life_ms == 0 || prev_milli == sample_milli)
        return sample_milli;
    double keep = exp2(-(double)dt_ms / (double)half_life_ms);
    double v = keep * prev_milli + (1.0 - keep) * sample_milli;
    /* In whole milli, rounding to the nearest stops short of a steady sample
     * once a step is under half a milli: up to 0.5 / (1 - keep) below or
     * above it, 3 milli at a 250 ms tick and a 1 s half-life, a tenth of a
     * light jitter task's load, and a figure of 1-3 never decays to 0.
     * Rounding towards the sample reaches it (a step under a milli then
     * takes a whole one); the slack absorbs floating-point error on an
     * exact result, and the sample bounds the step. */
    if (sample_milli > prev_milli) {
        double up = ceil(v - 1e-9);
        return up < (double)sample_milli ? (unsigned)up : sample_milli;
    }
    double down = floor(v + 1e-9);
    return down > (double)sample_milli ? (unsigned)down : sample_milli;
}

int load_parse_schedstat(const char *text, uint64_t *runtime_ns)
{
    unsigned long long v;
    if (sscanf(text, "%llu", &v) != 1)
        return -EINVAL;
    *runtime_ns = v;
    return 0;
}

int load_parse_task_stat_cputime(const char *text, long clk_tck, uint64_t *runtime_ns)
{
    uint64_t utime, stime;
    if (clk_tck <= 0 || procstat_u64(text, 14, &utime) < 0 || procstat_u64(text, 15, &stime) < 0)
        return -EINVAL;
    *runtime_ns = (utime + stime) * (1000000000ull / (uint64_t)clk_tck);
    return 0;
}

int load_parse_task_stat_cpu(const char *text, int *cpu)
{
    uint64_t v;
    /* field 39: the CPU it last ran on */
    if (procstat_u64(text, 39, &v) < 0 || v >= CPU_SETSIZE)
        return -EINVAL;
    *cpu = (int)v;
    return 0;
}

int load_read_task_sample(const char *root, pid_t pid, pid_t tid, uint64_t *runtime_ns, int *last_cpu)
{
    int r = load_read_task_runtime(root, pid, tid, runtime_ns);
    if (r < 0)
        return r;
    return load_read_task_cpu(root, pid, tid, last_cpu);
}

int load_read_task_cpu(const char *root, pid_t pid, pid_t tid, int *last_cpu)
{
    char buf[1024];
    ssize_t n = read_proc_task(root, pid, tid, "stat", buf, sizeof buf);
    if (n < 0)
        return (int)n;
    return load_parse_task_stat_cpu(buf, last_cpu);
}

int load_read_task_runtime(const char *root, pid_t pid, pid_t tid, uint64_t *runtime_ns)
{
    char buf[1024];
    ssize_t n = read_proc_task(root, pid, tid, "schedstat", buf, sizeof buf);
    if (n >= 0 && load_parse_schedstat(buf, runtime_ns) == 0)
        return 0;
    /* schedstat needs CONFIG_SCHED_INFO; stat is always there, in ticks. A
     * task that is gone fails here too, with ENOENT or ESRCH. */
    n = read_proc_task(root, pid, tid, "stat", buf, sizeof buf);
    if (n < 0)
        return (int)n;
    return load_parse_task_stat_cputime(buf, sysconf(_SC_CLK_TCK), runtime_ns);
}
