/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "compare-read.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

static int read_proc_stat(const char *root, struct cmp_cpus *out)
{
    char p[PATH_MAX];
    if (path_join(p, sizeof p, root, "/proc/stat") < 0)
        return -ENAMETOOLONG;
    _cleanup_fclose_ FILE *f = fopen(p, "re");
    if (!f)
        return -errno;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        unsigned cpu;
        unsigned long long v[10] = {0};
        if (strncmp(line, "cpu", 3) != 0 || !isdigit((unsigned char)line[3]))
            continue;
        int k = sscanf(line, "cpu%u %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &v[0], &v[1], &v[2],
                       &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]);
        if (k < 5 || cpu >= CMP_MAX_CPUS)
            continue;
        struct cmp_cpu *c = &out->cpu[cpu];
        c->present = true;
        c->idle_jiffies = v[3] + v[4];
        /* guest time is already counted in user time */
        c->total_jiffies = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
        if (cpu + 1 > out->n_cpus)
            out->n_cpus = cpu + 1;
    }
    return out->n_cpus ? 0 : -ENODATA;
}

/* LOC and RES: the local timer and rescheduling interrupts wake an idle CPU
 * where no cpuidle driver counts idle entries. */
static void read_interrupts(const char *root, struct cmp_cpus *out)
{
    char p[PATH_MAX];
    if (path_join(p, sizeof p, root, "/proc/interrupts") < 0)
        return;
    _cleanup_fclose_ FILE *f = fopen(p, "re");
    if (!f)
        return;
    char line[4096];
    int cols[CMP_MAX_CPUS], n_cols = 0;
    if (!fgets(line, sizeof line, f))
        return;
    /* the header names the columns: "CPU0 CPU1 ..." (offline CPUs missing) */
    for (char *t = strtok(line, " \t\n"); t && n_cols < CMP_MAX_CPUS; t = strtok(NULL, " \t\n"))
        if (strncmp(t, "CPU", 3) == 0)
            cols[n_cols++] = atoi(t + 3);
    while (fgets(line, sizeof line, f)) {
        char *s = line;
        while (*s == ' ')
            s++;
        if (strncmp(s, "LOC:", 4) != 0 && strncmp(s, "RES:", 4) != 0)
            continue;
        s += 4;
        for (int i = 0; i < n_cols; i++) {
            char *end;
            unsigned long long v = strtoull(s, &end, 10);
            if (end == s)
                break;
            s = end;
            if (cols[i] >= 0 && cols[i] < CMP_MAX_CPUS)
                out->cpu[cols[i]].irq_wakeups += v;
        }
    }
}

static void read_cpuidle(const char *root, unsigned cpu, struct cmp_cpu *c)
{
    char rel[128], p[PATH_MAX];
    snprintf(rel, sizeof rel, "/sys/devices/system/cpu/cpu%u/cpuidle", cpu);
    if (path_join(p, sizeof p, root, rel) < 0)
        return;
    for (unsigned s = 0; s < 32; s++) {
        char sp[192];
        uint64_t usage, time_us;
        snprintf(sp, sizeof sp, "%s/state%u/usage", rel, s);
        if (read_u64_below(root, sp, &usage) < 0)
            break;
        snprintf(sp, sizeof sp, "%s/state%u/time", rel, s);
        if (read_u64_below(root, sp, &time_us) < 0)
            break;
        c->has_cpuidle = true;
        c->idle_entries += usage;
        c->idle_time_us += time_us;
    }
}

int cmp_read_cpus(const char *root, struct cmp_cpus *out)
{
    memset(out, 0, sizeof *out);
    int r = read_proc_stat(root, out);
    if (r < 0)
        return r;
    read_interrupts(root, out);
    for (unsigned i = 0; i < out->n_cpus; i++) {
        struct cmp_cpu *c = &out->cpu[i];
        if (!c->present)
            continue;
        read_cpuidle(root, i, c);
        char rel[128];
        uint64_t khz;
        snprintf(rel, sizeof rel, "/sys/devices/system/cpu/cpu%u/cpufreq/scaling_cur_freq", i);
        c->freq_khz = read_u64_below(root, rel, &khz) == 0 ? (unsigned)khz : 0;
    }
    return 0;
}

int cmp_read_rapl(const char *root, struct cmp_rapl *out)
{
    memset(out, 0, sizeof *out);
    char p[PATH_MAX];
    if (path_join(p, sizeof p, root, "/sys/class/powercap") < 0)
        return -ENAMETOOLONG;
    DIR *d = opendir(p);
    if (!d)
        return -ENOENT;
    struct dirent *de;
    while ((de = readdir(d)) && out->n_zones < 16) {
        /* top-level zones only: intel-rapl:0, not intel-rapl:0:0 (core, uncore) */
        const char *n = de->d_name;
        if (strncmp(n, "intel-rapl:", 11) != 0 || strchr(n + 11, ':'))
            continue;
        char rel[PATH_MAX], name[64];
        snprintf(rel, sizeof rel, "/sys/class/powercap/%s/name", n);
        char np[PATH_MAX];
        if (path_join(np, sizeof np, root, rel) < 0 || read_file(np, name, sizeof name) < 0 ||
            strncmp(name, "package", 7) != 0)
            continue;
        uint64_t e, range;
        snprintf(rel, sizeof rel, "/sys/class/powercap/%s/energy_uj", n);
        if (read_u64_below(root, rel, &e) < 0)
            continue; /* energy_uj is root-only on current kernels */
        snprintf(rel, sizeof rel, "/sys/class/powercap/%s/max_energy_range_uj", n);
        if (read_u64_below(root, rel, &range) < 0)
            range = 0;
        out->energy_uj[out->n_zones] = e;
        out->range_uj[out->n_zones] = range;
        out->n_zones++;
    }
    closedir(d);
    return out->n_zones ? 0 : -ENOENT;
}

double cmp_rapl_joules(const struct cmp_rapl *a, const struct cmp_rapl *b)
{
    double j = 0;
    for (unsigned i = 0; i < a->n_zones && i < b->n_zones; i++) {
        uint64_t d = b->energy_uj[i] >= a->energy_uj[i] ? b->energy_uj[i] - a->energy_uj[i]
                                                        : b->energy_uj[i] + a->range_uj[i] - a->energy_uj[i];
        j += (double)d / 1e6;
    }
    return j;
}

int cmp_parse_stat(const char *line, struct cmp_thread *t)
{
    /* comm may hold spaces and parentheses: it ends at the last ')' */
    const char *open = strchr(line, '('), *close = strrchr(line, ')');
    if (!open || !close || close < open)
        return -EINVAL;
    size_t n = (size_t)(close - open - 1);
    if (n >= sizeof t->comm)
        n = sizeof t->comm - 1;
    memcpy(t->comm, open + 1, n);
    t->comm[n] = '\0';
    /* after ") ": field 3 (state) onwards; start time is field 22, the
     * last CPU field 39 */
    const char *s = close + 1;
    int field = 2;
    unsigned long long start = 0;
    long cpu = -1;
    while (*s && field < 39) {
        while (*s == ' ')
            s++;
        field++;
        char *end;
        if (field == 22)
            start = strtoull(s, &end, 10);
        else if (field == 39)
            cpu = strtol(s, &end, 10);
        while (*s && *s != ' ')
            s++;
    }
    if (field < 39)
        return -EINVAL;
    t->start_time = start;
    t->last_cpu = (int)cpu;
    return 0;
}

static int add_thread(struct cmp_threads *out, const struct cmp_thread *t)
{
    if (out->n == out->cap) {
        size_t cap = out->cap ? out->cap * 2 : 256;
        struct cmp_thread *p = realloc(out->t, cap * sizeof *p);
        if (!p)
            return -ENOMEM;
        out->t = p;
        out->cap = cap;
    }
    out->t[out->n++] = *t;
    return 0;
}

static void read_thread(const char *dir, pid_t pid, pid_t tid, struct cmp_threads *out)
{
    char p[PATH_MAX + 32], buf[1024];
    struct cmp_thread t = {.tid = tid, .pid = pid};
    snprintf(p, sizeof p, "%s/%d/schedstat", dir, (int)tid);
    unsigned long long run, wait, slices;
    if (read_file(p, buf, sizeof buf) < 0 || sscanf(buf, "%llu %llu %llu", &run, &wait, &slices) != 3)
        return; /* gone meanwhile */
    t.run_ns = run;
    t.wait_ns = wait;
    t.slices = slices;
    snprintf(p, sizeof p, "%s/%d/stat", dir, (int)tid);
    if (read_file(p, buf, sizeof buf) < 0 || cmp_parse_stat(buf, &t) < 0)
        return;
    add_thread(out, &t);
}

static int by_tid(const void *a, const void *b)
{
    pid_t x = ((const struct cmp_thread *)a)->tid, y = ((const struct cmp_thread *)b)->tid;
    return (x > y) - (x < y);
}

static bool numeric(const char *s, pid_t *v)
{
    unsigned u;
    if (parse_uint(s, &u) < 0 || u == 0 || u > INT32_MAX)
        return false;
    *v = (pid_t)u;
    return true;
}

static void read_process(const char *proc, pid_t pid, struct cmp_threads *out)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/%d/task", proc, (int)pid);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    pid_t tid;
    while ((de = readdir(d)))
        if (numeric(de->d_name, &tid))
            read_thread(dir, pid, tid, out);
    closedir(d);
}

int cmp_read_threads(const char *root, pid_t only_pid, struct cmp_threads *out)
{
    out->n = 0;
    char proc[PATH_MAX];
    if (path_join(proc, sizeof proc, root, "/proc") < 0)
        return -ENAMETOOLONG;
    if (only_pid > 0)
        read_process(proc, only_pid, out);
    else {
        DIR *d = opendir(proc);
        if (!d)
            return -errno;
        struct dirent *de;
        pid_t pid;
        while ((de = readdir(d)))
            if (numeric(de->d_name, &pid))
                read_process(proc, pid, out);
        closedir(d);
    }
    if (out->n)
        qsort(out->t, out->n, sizeof *out->t, by_tid);
    return 0;
}

void cmp_threads_done(struct cmp_threads *t)
{
    free(t->t);
    *t = (struct cmp_threads){0};
}

const struct cmp_thread *cmp_threads_find(const struct cmp_threads *t, pid_t tid)
{
    struct cmp_thread key = {.tid = tid};
    return t->n ? bsearch(&key, t->t, t->n, sizeof *t->t, by_tid) : NULL;
}
