/* SPDX-License-Identifier: GPL-2.0-or-later */
/* turbosched-ctl compare, the pure part: which mode each block runs in,
 * the spread of a measure across blocks, and the one-line verdict. Plain
 * structs in, plain structs and text out; no I/O. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CMP_MAX_CPUS 256
#define CMP_MAX_BLOCKS 4096

enum cmp_mode { CMP_PAUSED = 0, CMP_PACKED = 1, _CMP_MODE_MAX };

const char *cmp_mode_name(enum cmp_mode m);

struct cmp_block {
    enum cmp_mode mode;
    bool warmup; /* the first block of each mode: discarded */
};

/* duration / block blocks, rounded down to an even number: a paused then a
 * packed warm-up block, then measured pairs in alternating order (paused
 * packed, packed paused, ...) so that a drift of the workload over the run
 * falls on both modes alike. -EINVAL when that leaves fewer than four
 * blocks (one measured block of each mode), -E2BIG over max. Returns the
 * number of blocks. */
int cmp_schedule(uint64_t duration_ms, uint64_t block_ms, struct cmp_block *out, size_t max);

/* What one block measured; NAN where a source is absent (no cpufreq, no
 * RAPL, no jitter task woke). */
struct cmp_block_result {
    enum cmp_mode mode;
    bool warmup;
    double seconds;
    unsigned n_cpus;
    double wakeups_ps[CMP_MAX_CPUS];
    double idle_pct[CMP_MAX_CPUS];
    double freq_mhz[CMP_MAX_CPUS];
    double energy_w;                  /* package power, RAPL */
    double intensive_cpu_pct;         /* CPU time of intensive tasks, % of one CPU */
    double intensive_wait_ms_ps;      /* their run-queue wait, ms per second */
    double jitter_wait_ms_per_wakeup; /* jitter run-queue wait per timeslice */
    double daemon_cpu_pct;            /* the daemon's CPU time, % of one CPU */
    double daemon_wakeups_ps;
};

/* A measure across the measured blocks of one mode. NAN values (absent
 * sources) are left out; n counts the rest, and with n == 0 every field
 * is NAN. sd is the sample standard deviation (0 for one value). */
struct cmp_spread {
    unsigned n;
    double mean, sd, min, max;
};
void cmp_spread_of(const double *v, size_t n, struct cmp_spread *out);

struct cmp_summary {
    unsigned n_blocks; /* measured blocks of this mode */
    unsigned n_cpus;
    struct cmp_spread wakeups_ps[CMP_MAX_CPUS], idle_pct[CMP_MAX_CPUS], freq_mhz[CMP_MAX_CPUS];
    struct cmp_spread energy_w, intensive_cpu_pct, intensive_wait_ms_ps, jitter_wait_ms_per_wakeup;
    struct cmp_spread daemon_cpu_pct, daemon_wakeups_ps;
};
/* The summary of one mode over the blocks that are not warm-ups. */
void cmp_summarize(const struct cmp_block_result *b, size_t n, enum cmp_mode m, struct cmp_summary *out);

/* "CPU 1: 91% fewer wake-ups, idle 99.1% vs 93.4%; jitter waits 0.3 ms more
 * per wake-up; the daemon used 0.2% of a CPU", with the intensive tasks'
 * extra run-queue wait where there are any, and package power where RAPL
 * is exposed. The CPU is the one of
 * idle_cpus (CPUs the plan kept free; all CPUs when NULL or empty) whose
 * wake-ups fell most. Ranges that overlap are said to be within the
 * spread. Returns the length written (truncated to size). */
int cmp_verdict(const struct cmp_summary *paused, const struct cmp_summary *packed, const bool *idle_cpus, char *buf,
                size_t size);
