/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The run-delay guard's wiring (engine-delay.c). */
#pragma once
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "delay-guard.h"
#include "engine-snapshot.h"
#include "histogram.h"
#include "pidmap.h"

struct engine;

/* The run-delay guard (engine-delay.c): how long packed jitter waits on a
 * run queue per wake-up, from the schedstat the sampler reads of every
 * jitter thread, and the spill or fallback that delay-guard.c decides. */
struct engine_delay {
    struct delay_guard_config cfg;
    struct delay_guard guard;
    struct pidmap threads; /* tid -> its last readings (engine-delay.c) */
    uint32_t tick;         /* ticks counted here, for the age of a reading */
    uint64_t delay_ns;     /* this tick's figure: the percentile over packed jitter */
    uint64_t wakeups;      /* ... and the wake-ups behind it */
    cpu_set_t spill_cpus;  /* threads of the cores spilled to, for the packer */
    char note[160];        /* the decision behind a spill or fallback in effect, else "" */
    char last[160];        /* this tick's decision in words */
    /* each packed jitter thread's mean wait per wake-up between two
     * readings, once per wake-up */
    struct histogram hist;
};

void engine_delay_init(struct engine_delay *d, const struct config *cfg);
void engine_delay_done(struct engine_delay *d);
/* Listen to the sampler's readings of jitter threads. */
void engine_delay_hook(struct engine *e);
/* A new configuration (max_run_delay), or a new topology (the guard counts
 * cores by their index in it): start over, keeping the totals. */
void engine_delay_reset(struct engine_delay *d, const struct config *cfg);
/* Once a tick, after the sampler read the jitter threads and before the
 * plan: judge the delay, spill, shrink or fall back (logged when it acts). */
void engine_delay_tick(struct engine *e, uint64_t now_ms);
/* The mask in effect changed: what jitter waited before says nothing of it. */
void engine_delay_plan_changed(struct engine *e);
/* A thread's mean wait per wake-up over its last readings; false when
 * there is none to tell (not packed jitter, or too few readings). */
bool engine_delay_of(const struct engine *e, pid_t tid, uint64_t *mean_ns, uint64_t *wakeups);
/* For status and metrics (engine-snapshot.h). */
void engine_delay_snapshot(const struct engine *e, struct engine_delay_snapshot *out);
