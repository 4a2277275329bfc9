/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the control socket's replies show of the engine, filled by the
 * engine (engine-snapshot.c) and rendered by report.c and control-pause.c,
 * which read no field of struct engine. A snapshot's pointers and strings
 * point into the engine: good until its next event, tick or reload. */
#pragma once
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "benefit.h"
#include "packer.h"
#include "procmon.h"
#include "task-class.h"

struct engine;
struct delay_guard;
struct histogram;
struct sampler;
struct task;
struct topology;
struct capacity_table;

struct engine_counters {
    uint64_t ticks;
    uint64_t rescans;
    uint64_t reloads_ok, reloads_failed;
    uint64_t classified;      /* classifications run */
    uint64_t packs, restores; /* affinity changes made */
    uint64_t plan_changes;
    uint64_t table_full;         /* tasks not tracked because the table was full */
    uint64_t behaviour_verdicts; /* behaviour verdicts that changed */
    uint64_t behaviour_released; /* jitter by behaviour that turned heavy: mask given back */
};

struct engine_reload_status {
    time_t time;
    bool ok;
    char msg[256];
};

/* engine-pause.c's state. */
struct engine_pause_snapshot {
    bool paused;
    bool admin;
    unsigned n_sessions;
    uint64_t since_ms;                /* when the current pause began */
    uint64_t pauses, paused_ms_total; /* the current pause included */
};
void engine_pause_snapshot(const struct engine *e, struct engine_pause_snapshot *out);

struct engine_snapshot {
    uint64_t start_ms;
    bool mode_cgroup; /* cfg mode = cgroup */
    bool dry_run;
    bool uclamp_supported;
    bool unit_optin;
    bool request_paths, tail_guard; /* on (behaviour on too) */
    const struct capacity_table *capacity;
    const struct topology *topo;
    const struct sampler *sampler; /* load, behaviour watch and reads */

    /* tasks, counted now (replies must not lag a tick behind) */
    unsigned tracked, max_tasks;
    size_t memory_bytes;
    unsigned by_class[_TASK_CLASS_MAX];
    unsigned packed;

    /* request paths and the tail guard */
    uint64_t held_serving, held_sleep, released, socket_checks, sleep_reads;
    unsigned kept_out; /* engine_snapshot_status only, else 0 */

    /* events: the proc connector's counters (NULL without one) */
    const struct procmon_counters *procmon;
    uint64_t rename_floods;
    bool renames_unheard;
    const struct histogram *placement_latency, *queue_delay;
    const uint64_t *handled_ns; /* [PROCMON_KINDS] */
    uint64_t wakeups, wakeups_ns;
    bool doorbell; /* an exec doorbell is open */
    uint64_t doorbell_rings, doorbell_ahead, doorbell_skipped, doorbell_already;
    uint64_t adopted_at_exec, adopted_at_tick, adopted_at_restore;
    uint64_t daemon_moves;

    struct engine_counters counters;
    const struct engine_reload_status *last_reload;
    struct engine_pause_snapshot pause;

    /* the plan: never NULL, its contents meaningful when planned */
    bool planned;
    const struct packer_plan *plan;
    bool freq_table; /* a frequency table to weigh plans by */

    /* the run-delay guard */
    struct engine_delay_snapshot {
        uint64_t limit_ns; /* 0: off */
        uint64_t delay_ns, wakeups;
        unsigned percentile;
        const struct delay_guard *guard;
        const struct histogram *hist;
        const char *last; /* this tick's decision, "" none yet */
    } delay;

    /* the probe loop */
    struct engine_probe_snapshot {
        bool on;
        const char *phase;   /* engine_probe_phase */
        const char *source;  /* freq_source_name */
        const char *what;    /* on: what it measures; off: why not */
        const char *explain; /* on only */
        unsigned rounds, discarded;
        bool learned_any; /* a learned plan logged */
        enum benefit_plan learned;
        const char *last_change; /* "" none yet */
    } probe;

    /* the deep idle measurement */
    struct engine_idle_snapshot {
        bool on;
        struct packer_idle fig;
        const char *what;
        unsigned trials;
    } idle;
};

/* What status, dump and metrics show; engine_snapshot_status adds what
 * only status shows (kept_out: a walk of the tail guard's processes). */
void engine_snapshot(const struct engine *e, struct engine_snapshot *out);
void engine_snapshot_status(const struct engine *e, struct engine_snapshot *out);

/* The tracked tasks, in the table's order: iter starts at 0; NULL at the
 * end. */
const struct task *engine_task_next(const struct engine *e, size_t *iter);

/* One task, as dump and explain show it. */
struct engine_task_snapshot {
    char detail[512]; /* what decided its class */
    bool masks;       /* original and current known */
    cpu_set_t original, current;
    bool slice; /* the jitter slice we gave it */
    uint64_t slice_ns, original_slice_ns;
    bool run_delay; /* its mean wait per wake-up is known */
    uint64_t run_delay_ns, run_delay_wakeups;
};
void engine_task_snapshot(const struct engine *e, const struct task *t, struct engine_task_snapshot *out);

/* explain's lines for one task. */
struct engine_task_explain {
    char placement[512];
    char behaviour[512];
    char run_delay[512];
    char request_path[512];
};
void engine_task_explain(const struct engine *e, const struct task *t, struct engine_task_explain *out);
