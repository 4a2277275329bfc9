/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The busy cores' measured frequency (see freq-meter.h). */
#include "freq-meter.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "turbo-ratio.h"
#include "util.h"

const char *freq_source_name(enum freq_source s)
{
    switch (s) {
    case FREQ_SOURCE_APERF:
        return "APERF/MPERF";
    case FREQ_SOURCE_CPUFREQ:
        return "cpufreq";
    default:
        return "none";
    }
}

bool freq_counter_delta(uint64_t prev, uint64_t now, uint64_t *delta)
{
    /* unsigned arithmetic carries a wrap; a counter that went back by
     * more than half the range was reset, not wrapped */
    *delta = now - prev;
    return *delta < (UINT64_C(1) << 63);
}

unsigned freq_base_from_model_name(const char *cpuinfo)
{
    const char *l = cpuinfo;
    while (l && strncmp(l, "model name", 10) != 0) {
        l = strchr(l, '\n');
        l = l ? l + 1 : NULL;
    }
    if (!l)
        return 0;
    const char *eol = strchr(l, '\n');
    const char *at = strchr(l, '@');
    if (!at || (eol && at > eol))
        return 0;
    char *end;
    errno = 0;
    double v = strtod(at + 1, &end);
    if (errno || end == at + 1 || !(v > 0))
        return 0;
    if (strncasecmp(end, "GHz", 3) == 0)
        v *= 1000000;
    else if (strncasecmp(end, "MHz", 3) == 0)
        v *= 1000;
    else
        return 0;
    return v < 1e8 ? (unsigned)(v + 0.5) : 0;
}

void freq_meter_init(struct freq_meter *m)
{
    memset(m, 0, sizeof(*m));
    for (size_t i = 0; i < ELEMENTSOF(m->fd); i++)
        m->fd[i] = -1;
    m->source = FREQ_SOURCE_NONE;
    m->seq = 1; /* a counter read at seq 0 would pass for never read */
}

void freq_meter_close(struct freq_meter *m)
{
    for (size_t i = 0; i < ELEMENTSOF(m->fd); i++)
        if (m->fd[i] >= 0)
            close(m->fd[i]);
    freq_meter_init(m);
}

static int read_msr(int fd, unsigned reg, uint64_t *v)
{
    ssize_t k = pread(fd, v, sizeof *v, reg);
    if (k == (ssize_t)sizeof *v)
        return 0;
    return k < 0 ? -errno : -EIO;
}

/* A kHz figure from a one-number sysfs file below the root. */
static int read_khz(const char *root, const char *rel, uint64_t *khz)
{
    int r = read_u64_below(root, rel, khz);
    if (r < 0)
        return r;
    return *khz > 0 ? 0 : -EINVAL;
}

static int cpufreq_khz(const char *root, int cpu, uint64_t *khz, char *path_out, size_t path_len)
{
    char rel[96];
    snprintf(rel, sizeof rel, "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", cpu);
    int r = read_khz(root, rel, khz);
    if (r >= 0)
        return r;
    snprintf(rel, sizeof rel, "/sys/devices/system/cpu/cpu%d/cpufreq/cpuinfo_cur_freq", cpu);
    int r2 = read_khz(root, rel, khz);
    if (r2 >= 0)
        return r2;
    if (path_out) {
        /* the first one's failure says more: the second is root-only */
        snprintf(rel, sizeof rel, "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", cpu);
        if (path_join(path_out, path_len, root, rel) < 0)
            snprintf(path_out, path_len, "%s", rel);
    }
    return r;
}

/* What MPERF counts at, in kHz, and where that came from; 0 when unknown. */
static unsigned find_base(const struct freq_meter *m, int cpu, char *src, size_t src_len)
{
    char rel[96], path[PATH_MAX], text[16384];
    uint64_t khz;
    snprintf(rel, sizeof rel, "/sys/devices/system/cpu/cpu%d/cpufreq/base_frequency", cpu);
    if (read_khz(m->root, rel, &khz) == 0 && khz < UINT32_MAX) {
        snprintf(src, src_len, "cpufreq base_frequency");
        return (unsigned)khz;
    }
    if (path_join(path, sizeof path, m->root, "/proc/cpuinfo") < 0 ||
        read_file_prefix_at(AT_FDCWD, path, text, sizeof text) < 0)
        return 0;
    struct cpu_ident id;
    uint64_t info;
    if (cpu_ident_parse(text, &id) == 0 && strcmp(id.vendor, "GenuineIntel") == 0 && id.family == 6 &&
        read_msr(m->fd[cpu], MSR_PLATFORM_INFO, &info) == 0 && ((info >> 8) & 0xff) != 0) {
        snprintf(src, src_len, "MSR_PLATFORM_INFO");
        return (unsigned)((info >> 8) & 0xff) * turbo_ratio_bclk_khz(id.model);
    }
    unsigned base = freq_base_from_model_name(text);
    if (base)
        snprintf(src, src_len, "the model name");
    return base;
}

static int first_cpu(const cpu_set_t *cpus)
{
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, cpus))
            return c;
    return -1;
}

/* Open the msr files of cpus, and check the first answers and has a base
 * frequency; or why not, in why. */
static int try_aperf(struct freq_meter *m, const cpu_set_t *cpus, char *why, size_t why_len)
{
    int first = first_cpu(cpus), r = 0;
    char path[PATH_MAX], rel[64], src[64];
    for (int c = first; c >= 0 && c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, cpus))
            continue;
        snprintf(rel, sizeof rel, "/dev/cpu/%d/msr", c);
        if (path_join(path, sizeof path, m->root, rel) < 0)
            return -ENAMETOOLONG;
        m->fd[c] = open(path, O_RDONLY | O_CLOEXEC);
        if (m->fd[c] < 0 && c == first) {
            r = -errno;
            snprintf(why, why_len, "%.120s: %s (%s)", path, strerror(-r),
                     r == -ENOENT ? "no msr module, or the unit's PrivateDevices= hides it"
                                  : "opening it needs CAP_SYS_RAWIO");
            return r;
        }
    }
    uint64_t v;
    snprintf(rel, sizeof rel, "/dev/cpu/%d/msr", first);
    if (path_join(path, sizeof path, m->root, rel) < 0)
        return -ENAMETOOLONG;
    if ((r = read_msr(m->fd[first], MSR_IA32_MPERF, &v)) < 0 || (r = read_msr(m->fd[first], MSR_IA32_APERF, &v)) < 0) {
        snprintf(why, why_len, "%.120s: reading APERF/MPERF: %s (a virtual machine often hides them)", path,
                 strerror(-r));
        return r;
    }
    m->base_khz = find_base(m, first, src, sizeof src);
    if (!m->base_khz) {
        snprintf(why, why_len,
                 "readable, but no base frequency to scale them by (no cpufreq base_frequency, "
                 "no MSR_PLATFORM_INFO, no \"@ GHz\" in the model name)");
        return -ENODEV;
    }
    snprintf(m->what, sizeof m->what, "APERF/MPERF of /dev/cpu/N/msr, base %u MHz from %s", (m->base_khz + 500) / 1000,
             src);
    return 0;
}

static int try_cpufreq(struct freq_meter *m, const cpu_set_t *cpus, char *why, size_t why_len)
{
    char path[PATH_MAX] = "";
    uint64_t khz;
    int first = first_cpu(cpus);
    int r = cpufreq_khz(m->root, first, &khz, path, sizeof path);
    if (r < 0) {
        snprintf(why, why_len, "%s: %s", path, strerror(-r));
        return r;
    }
    snprintf(m->what, sizeof m->what, "cpufreq scaling_cur_freq of the busy CPUs");
    return 0;
}

int freq_meter_open(struct freq_meter *m, const char *root, const cpu_set_t *cpus)
{
    char why_aperf[192] = "", why_cpufreq[160] = "";
    freq_meter_close(m);
    int n = snprintf(m->root, sizeof m->root, "%s", root ? root : "/");
    if (n < 0 || (size_t)n >= sizeof m->root)
        return -ENAMETOOLONG;
    if (first_cpu(cpus) < 0) {
        snprintf(m->what, sizeof m->what, "no online CPU");
        return -ENODEV;
    }
    if (try_aperf(m, cpus, why_aperf, sizeof why_aperf) == 0) {
        m->source = FREQ_SOURCE_APERF;
        return m->source;
    }
    for (size_t i = 0; i < ELEMENTSOF(m->fd); i++)
        if (m->fd[i] >= 0) {
            close(m->fd[i]);
            m->fd[i] = -1;
        }
    if (try_cpufreq(m, cpus, why_cpufreq, sizeof why_cpufreq) == 0) {
        m->source = FREQ_SOURCE_CPUFREQ;
        return m->source;
    }
    snprintf(m->what, sizeof m->what, "APERF/MPERF: %s; cpufreq: %s", why_aperf, why_cpufreq);
    return -ENODEV;
}

static int sample_aperf(struct freq_meter *m, const cpu_set_t *cpus, double *mhz)
{
    double sum_a = 0, sum_m = 0;
    int n = 0, read_ok = 0, err = 0;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, cpus) || m->fd[c] < 0)
            continue;
        struct freq_counters *p = &m->prev[c], now = {.seq = m->seq};
        int r = read_msr(m->fd[c], MSR_IA32_MPERF, &now.mperf);
        if (r == 0)
            r = read_msr(m->fd[c], MSR_IA32_APERF, &now.aperf);
        if (r < 0) {
            err = r; /* offline now (ENXIO), or the counters went away */
            p->seq = 0;
            continue;
        }
        read_ok++;
        uint64_t da, dm;
        if (p->seq && p->seq + 1 == m->seq && freq_counter_delta(p->aperf, now.aperf, &da) &&
            freq_counter_delta(p->mperf, now.mperf, &dm) && dm > 0) {
            sum_a += (double)da;
            sum_m += (double)dm;
            n++;
        }
        *p = now;
    }
    if (!read_ok && err)
        return err;
    *mhz = n ? m->base_khz / 1000.0 * sum_a / sum_m : 0;
    return n;
}

static int sample_cpufreq(struct freq_meter *m, const cpu_set_t *cpus, double *mhz)
{
    double sum = 0;
    int n = 0, err = 0;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        uint64_t khz;
        if (!CPU_ISSET(c, cpus))
            continue;
        int r = cpufreq_khz(m->root, c, &khz, NULL, 0);
        if (r < 0) {
            err = r;
            continue;
        }
        sum += (double)khz / 1000.0;
        n++;
    }
    if (!n && err)
        return err;
    *mhz = n ? sum / n : 0;
    return n;
}

int freq_meter_sample(struct freq_meter *m, const cpu_set_t *cpus, double *mhz)
{
    *mhz = 0;
    m->seq++;
    switch (m->source) {
    case FREQ_SOURCE_APERF:
        return sample_aperf(m, cpus, mhz);
    case FREQ_SOURCE_CPUFREQ:
        return sample_cpufreq(m, cpus, mhz);
    default:
        return -ENODEV;
    }
}

void freq_meter_prime(struct freq_meter *m, const cpu_set_t *cpus)
{
    if (m->source != FREQ_SOURCE_APERF)
        return;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        struct freq_counters *p = &m->prev[c], now = {.seq = m->seq};
        if (!CPU_ISSET(c, cpus) || m->fd[c] < 0 || (p->seq && p->seq == m->seq))
            continue;
        if (read_msr(m->fd[c], MSR_IA32_MPERF, &now.mperf) == 0 && read_msr(m->fd[c], MSR_IA32_APERF, &now.aperf) == 0)
            *p = now;
        else
            p->seq = 0;
    }
}
