/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Per-CPU frequency and idle-state statistics through libcpupower, for
 * `status`/`dump` and for benchmarks that count wake-ups of idle CPUs.
 * libcpupower reads fixed /sys paths, so there is no root parameter. */
#pragma once
#include <stdint.h>

struct json_object;

#define CPUSTATS_MAX_IDLE_STATES 16
#define CPUSTATS_NAME_MAX 32

struct cpustats_idle_state {
    char name[CPUSTATS_NAME_MAX];
    uint64_t usage;   /* times the state was entered */
    uint64_t time_us; /* total residency */
};

struct cpustats_cpu {
    unsigned cpu;
    uint64_t freq_khz; /* 0: no cpufreq driver or unknown */
    unsigned n_idle;   /* 0: no cpuidle driver */
    struct cpustats_idle_state idle[CPUSTATS_MAX_IDLE_STATES];
};

struct cpustats {
    unsigned n_cpus;
    struct cpustats_cpu *cpus; /* indexed by CPU number */
};

/* Every configured CPU (offline ones read as n/a and no idle states).
 * Returns 0 or -errno; free with cpustats_done. */
int cpustats_read(struct cpustats *ret);
void cpustats_done(struct cpustats *s);

/* The "cpus" array of Status/Dump replies:
 * [{"cpu":0,"freq_khz":null|N,"idle":[{"name":"POLL","usage":N,"time_us":N}]}].
 * NULL on allocation failure. */
struct json_object *cpustats_to_json(const struct cpustats *s);

/* Total idle-state entries per CPU (sum of usage over states) into
 * usage[0..n_cpus). Returns the number of CPUs filled, or -ENODATA when no
 * cpuidle driver is active (then nothing counts wake-ups). */
int cpustats_idle_usage(uint64_t *usage, unsigned n_cpus);
