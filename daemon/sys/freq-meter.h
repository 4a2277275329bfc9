/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The busy cores' frequency, measured: the mean frequency of some CPUs
 * between two samples, which the benefit probe loop (benefit.h) learns from
 * where no frequency table is known. Sources, in this order:
 *
 * - APERF/MPERF (MSR 0xE8/0xE7) through the msr driver, /dev/cpu/N/msr:
 *   dAPERF/dMPERF is the actual over the base frequency while the CPU was
 *   not halted, i.e. the frequency the work ran at. Times the base
 *   frequency: cpufreq's base_frequency (intel_pstate), else the ratio in
 *   Intel's MSR_PLATFORM_INFO (0xCE), else the "@ 2.40GHz" of the model
 *   name. Opening the files needs CAP_SYS_RAWIO, which the daemon gives up
 *   after start: they are opened once, for the CPUs online then, and kept.
 *   Only the CPUs asked for are read (a read is an IPI to that CPU: an idle
 *   CPU is never woken to be measured).
 * - cpufreq: scaling_cur_freq, else cpuinfo_cur_freq, of each CPU, at each
 *   sample (the driver's current frequency, not a mean).
 *
 * Files are read below a root directory ("/" on a real system), so that
 * tests use fixture trees. */
#pragma once

#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MSR_IA32_MPERF 0xe7
#define MSR_IA32_APERF 0xe8
#define MSR_PLATFORM_INFO 0xce

enum freq_source {
    FREQ_SOURCE_NONE,
    FREQ_SOURCE_APERF,   /* APERF/MPERF through /dev/cpu/N/msr */
    FREQ_SOURCE_CPUFREQ, /* cpufreq's scaling_cur_freq or cpuinfo_cur_freq */
};
/* "none", "APERF/MPERF", "cpufreq" */
const char *freq_source_name(enum freq_source s);

struct freq_counters {
    uint64_t aperf, mperf;
    uint64_t seq; /* the sample it was read at; 0: never */
};

struct freq_meter {
    char root[PATH_MAX];
    enum freq_source source;
    unsigned base_khz;   /* APERF: what MPERF counts at */
    int fd[CPU_SETSIZE]; /* APERF: /dev/cpu/N/msr, -1 where not open */
    struct freq_counters prev[CPU_SETSIZE];
    uint64_t seq; /* samples taken */
    /* the source found ("APERF/MPERF of /dev/cpu/N/msr, base 2400 MHz from
     * ..."), or what was looked for and why each is absent */
    char what[384];
};

/* No source, nothing open. */
void freq_meter_init(struct freq_meter *m);
/* Find a source for the CPUs in `cpus` below root: APERF/MPERF first (the
 * msr files of those CPUs are opened here), else cpufreq. Returns the
 * source (> 0), or -ENODEV when there is none; m->what says which, or
 * what was looked for and why it is absent. Does not log. */
int freq_meter_open(struct freq_meter *m, const char *root, const cpu_set_t *cpus);
/* Close what is open; the meter is as after freq_meter_init. */
void freq_meter_close(struct freq_meter *m);

/* The mean frequency of the CPUs in `cpus` since the previous sample, in
 * MHz, into *mhz. APERF/MPERF: over the CPUs read at the previous sample
 * (or primed since) too, weighted by their unhalted time; cpufreq: the
 * mean of their current frequencies. Returns how many CPUs it is the mean
 * of (0: none to tell yet), or a negative errno when every read failed. */
int freq_meter_sample(struct freq_meter *m, const cpu_set_t *cpus, double *mhz);
/* APERF/MPERF: read now the CPUs of `cpus` not read at the last sample,
 * so that the next sample has a start for them (CPUs that just turned
 * busy). No-op for cpufreq. */
void freq_meter_prime(struct freq_meter *m, const cpu_set_t *cpus);

/* Pure helpers. A counter's advance from prev to now, across a 64-bit
 * wrap; false when it went back instead (a reset: CPU replugged, resume,
 * a migrated virtual CPU), whose delta means nothing. */
bool freq_counter_delta(uint64_t prev, uint64_t now, uint64_t *delta);
/* The "@ 2.40GHz" (or "MHz") of the first "model name" line of
 * /proc/cpuinfo text, in kHz; 0 when there is none. */
unsigned freq_base_from_model_name(const char *cpuinfo);
