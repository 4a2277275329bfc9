/* SPDX-License-Identifier: GPL-2.0-or-later */
/* How much the jitter keeps idle cores out of the deep idle states, measured
 * from cpuidle's counters (<root>/sys/devices/system/cpu/cpuN/cpuidle/stateK):
 * the benefit model's none_woken and none_wakes inputs (benefit.h).
 *
 * A state is deep when its exit latency is at least
 * IDLE_DEEP_EXIT_LATENCY_US: a core whose threads are all in such a state
 * leaves the count of active cores the chip's frequency limit depends on.
 * Per tick, over the cores the plan treats as idle: the share of the tick
 * each core spent out of the deep states, summed (woken milli), and the
 * deep-state entries of their threads per second (wake-ups: each entry ends
 * one wake-up). Where there is no cpuidle driver, or no enabled deep state
 * (virtual machines with POLL and haltpoll only), nothing is measured and
 * the model counts one woken core per jitter task, as without this.
 *
 * The reader takes a root directory ("/" on a real system) so tests use
 * fixture trees; the computation (idle_measure, idle_keep) is pure. */
#pragma once

#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "idle-kept.h"
#include "topology.h"

/* Exit latency (us) from which a state leaves the turbo count. Intel's
 * turbo limits count a core active in C0, C1 (intel_idle: 1 us) and C1E
 * (10 us), not in C3 (59 us) or C6 (82 us); POWER9's stop0-2 (tens of us
 * at most) are shallow, stop4/5 (hundreds of us) deep. 50 us falls between
 * the two groups on both. */
#define IDLE_DEEP_EXIT_LATENCY_US 50
/* cpuidle has at most CPUIDLE_STATE_MAX (10) states per CPU */
#define IDLE_MAX_STATES 16

/* A CPU's totals over its enabled deep states, as cpuidle reports them. */
struct idle_counters {
    bool valid;       /* read this time */
    uint64_t time_us; /* residency */
    uint64_t usage;   /* entries */
};

struct idle_meter {
    char root[PATH_MAX];
    int n_cpus;                 /* CPUs 0..n_cpus-1 are read */
    uint16_t deep[CPU_SETSIZE]; /* per CPU: bit K = stateK is deep and enabled; 0: none */
    struct idle_counters prev[CPU_SETSIZE], cur[CPU_SETSIZE];
    uint64_t carry_us[CPU_SETSIZE]; /* deep time that ran past its tick (see idle_measure) */
    uint64_t prev_us;               /* monotonic time of prev; 0: none yet */
    /* the states found ("cpuidle, deep from 50 us (cpu0: POLL 0us, C1 1us,
     * ..., C6 82us) on 4 CPUs"), or what was looked for and why nothing is
     * measured */
    char what[256];
};

/* What one tick measured. */
struct idle_measurement {
    bool measured;
    unsigned woken_milli; /* idle cores out of the deep states, thousandths of a core */
    unsigned wakes_per_s; /* deep-state entries of the idle cores' threads, per second */
};

/* Which states of each online CPU are deep and enabled (latency and
 * disable, read once here: call again after a reload or a topology
 * change). Returns the number of CPUs with a deep state, or -ENODEV when
 * none has one (m->what says why). The counters start over. */
int idle_meter_open(struct idle_meter *m, const char *root, const struct topology *topo);
/* Forget the last reading: the next idle_meter_sample only reads the base
 * of the tick after it. */
void idle_meter_restart(struct idle_meter *m);
/* Read the counters of every CPU with a deep state into cur[0..n_cpus).
 * A CPU that cannot be read is !valid. Returns the CPUs read. */
int idle_meter_read(const struct idle_meter *m, struct idle_counters *cur);
/* Once a tick: read, measure the tick since the previous call over the
 * cores not in busy_cpus (idle_measure), and keep the reading for the next.
 * now_us: a monotonic clock. Returns the CPUs read. */
int idle_meter_sample(struct idle_meter *m, const struct topology *topo, const cpu_set_t *busy_cpus, uint64_t now_us,
                      struct idle_measurement *out);

struct idle_measure_input {
    const struct topology *topo;
    const cpu_set_t *busy_cpus;             /* threads of the cores the plan treats as busy: not counted */
    const uint16_t *deep;                   /* per CPU, as struct idle_meter's */
    const struct idle_counters *prev, *cur; /* per CPU */
    uint64_t dt_us;                         /* between prev and cur */
};

/* The tick from prev to cur. carry_us (per CPU, in and out) holds deep
 * time reported after the tick it ran in. Not measured when dt_us is 0, no
 * core is idle, or an idle core has a thread without a deep state or
 * without both readings (counters that went back: a replugged CPU). */
void idle_measure(const struct idle_measure_input *in, uint64_t *carry_us, struct idle_measurement *out);

/* Fold m in when it was measured over a tick with the jitter unconfined;
 * otherwise *k stays. */
void idle_keep(struct idle_kept *k, const struct idle_measurement *m, bool unconfined, uint64_t now_ms,
               unsigned half_life_ms);
