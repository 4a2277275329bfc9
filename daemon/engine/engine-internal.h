/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The engine's own state, for the engine's files alone (engine.c,
 * engine-*.c) and the engine's white-box tests: engine.h is what the rest of
 * the daemon sees. struct engine is made of its parts, each with its
 * struct, its functions and its header (engine-<part>.h, which include no
 * other engine header but the parts they hold); what engine.c itself
 * offers the parts is declared here. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "config.h"
#include "engine-adopt.h"
#include "engine-delay.h"
#include "engine-doorbell.h"
#include "engine-events.h"
#include "engine-freq.h"
#include "engine-idle.h"
#include "engine-pause.h"
#include "engine-probe.h"
#include "engine-reqpath.h"
#include "engine-shed.h"
#include "engine-snapshot.h"
#include "engine-unit.h"
#include "engine.h"
#include "packer.h"
#include "procmon.h"
#include "sampler.h"
#include "seat.h"
#include "slice.h"
#include "topology.h"

struct task;
struct task_table;
struct classifier;
struct applier;
struct procmon;
struct procmon_event;
struct sysops;

/* struct task.flags */
#define TASK_F_GROUP 0x1u /* attached to the daemon's cpuset group */

/* cgroup mode: jitter tasks live in a v1 cpuset group the daemon owns,
 * whose CPUs follow the plan with one write. */
struct engine_group {
    bool usable;     /* v1 cpuset mounted, privilege kept */
    bool privileged; /* cgroup mode configured at start, v1 cpuset mounted */
    char path[256];  /* "/" + cfg->cgroup_name */
    bool ready;      /* created by the applier */
};

struct engine {
    struct engine_params params;
    const struct sysops *ops;
    struct config *cfg;
    struct topology *topo;
    struct task_table *tasks;
    struct classifier *classifier;
    struct applier *applier;
    struct sampler sampler;
    struct seat seat; /* where the daemon itself runs (main.c moves it at each tick) */

    /* plan */
    struct packer_state pstate;
    struct packer_plan *plan; /* last computed plan (large: heap) */
    bool planned;

    struct engine_group group;
    struct engine_unit unit;
    struct engine_events events;

    /* bookkeeping */
    bool table_full_logged; /* said once per episode of a full table */
    uint64_t last_counters_log_ms;
    uint64_t last_uclamp_ms;
    uint64_t start_ms;
    struct engine_counters counters;
    struct engine_reload_status last_reload;
    unsigned n_by_class[_TASK_CLASS_MAX]; /* indexed by enum task_class, as of the last tick */
    unsigned n_packed;
    struct engine_pause pause;
    struct slice_support jitter_slice; /* found once at start (engine_start) */
    struct engine_delay delay;
    struct engine_reqpath reqpath;
    struct engine_freq freq;
    struct engine_probe probe;
    struct engine_idle idle;
};

/* The frequency table plans are weighed by: the configuration's, else the
 * CPU's; NULL when there is none and the thresholds alone decide. */
static inline const struct freq_response *engine_freq_table(const struct engine *e)
{
    if (e->cfg->freq.n_cores)
        return &e->cfg->freq;
    return e->freq.hw.n_cores ? &e->freq.hw : NULL;
}

/* The CPUs jitter is confined to now, or NULL when the plan does not
 * restrict it (or there is no plan yet). */
static inline const cpu_set_t *engine_plan_mask(const struct engine *e)
{
    return e->planned && e->plan->restricted ? &e->plan->mask : NULL;
}

/* Tasks by class right now (indexed by enum task_class), and how many the
 * daemon has changed: for replies, which must not lag a tick behind. */
void engine_count_now(const struct engine *e, unsigned by_class[_TASK_CLASS_MAX], unsigned *packed);

const struct procscan_hooks *engine_hooks(struct engine *e);
/* Bring t's placement in line with its class and the plan (engine.c). */
void engine_place(struct engine *e, struct task *t);

/* Used by engine-pause.c (engine.c): undo every change; place every
 * classified task under the current plan. */
int engine_undo_all(struct engine *e);
void engine_place_all(struct engine *e);
