/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The daemon's state and what it does on each input: a proc connector event,
 * a tick, a reload, a stop. It orchestrates: procscan tracks tasks, the
 * classifier decides their class, the sampler measures load, the packer
 * plans, the applier changes affinity through the injected sysops. main.c
 * wires these to the sd-event loop; the control socket's replies are built
 * from this state by report.c. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "config.h"
#include "delay-guard.h"
#include "engine-reqpath.h"
#include "freq-meter.h"
#include "histogram.h"
#include "idle-meter.h"
#include "log.h"
#include "procmon.h"
#include "seat.h"
#include "packer.h"
#include "pidmap.h"
#include "pins.h"
#include "sampler.h"
#include "slice.h"
#include "state.h"
#include "topology.h"

struct task;
struct task_table;
struct classifier;
struct applier;
struct procmon;
struct procmon_event;
struct sysops;

struct engine_params {
    const char *config_path;     /* for reloads */
    const char *dropin_dir;      /* NULL: derived from config_path */
    const char *root;            /* "/" on a real system; /proc and /sys are read below it */
    bool dry_run;                /* --dry-run: overrides the config */
    int log_level;               /* --log-level, or -1: the config decides */
    /* Every system call that reads or changes a task's placement goes
     * through these; NULL: sysops_real. Tests pass a fake. */
    const struct sysops *sysops;
    /* No proc connector: the caller passes events in through
     * engine_on_event() and engine_events_lost() (tests, replays). */
    bool events_from_caller;
};

/* struct task.flags */
#define TASK_F_GROUP 0x1u        /* attached to the daemon's cpuset group */

struct engine_counters {
    uint64_t ticks;
    uint64_t rescans;
    uint64_t reloads_ok, reloads_failed;
    uint64_t classified;         /* classifications run */
    uint64_t packs, restores;    /* affinity changes made */
    uint64_t plan_changes;
    uint64_t table_full;         /* tasks not tracked because the table was full */
    uint64_t behaviour_verdicts; /* behaviour verdicts that changed */
    uint64_t behaviour_released; /* jitter by behaviour that turned heavy: mask given back */
};

/* cgroup mode: jitter tasks live in a v1 cpuset group the daemon owns,
 * whose CPUs follow the plan with one write. */
struct engine_group {
    bool usable;                 /* v1 cpuset mounted, privilege kept */
    bool privileged;             /* cgroup mode configured at start, v1 cpuset mounted */
    char path[256];              /* "/" + cfg->cgroup_name */
    bool ready;                  /* created by the applier */
};

/* turbosched-jitter.slice under systemd: its AllowedCPUs= is ours while
 * set; pins survive the cpuset controller toggles that causes. */
struct engine_slice {
    bool set;
    unsigned n_tasks;            /* tasks in it, as of the last tick */
    struct pins pins;
};

/* The exec doorbell (engine-doorbell.c): a second proc connector socket
 * that the kernel filters to exec events (6.6+). Waking on it alone, the
 * daemon reads every other event in order from the main socket when the
 * next exec comes, not one wake-up each. */
#define DOORBELL_RUNG_MAX 32
#define DOORBELL_EARLY_MAX 64
struct engine_doorbell {
    struct procmon *procmon;     /* NULL: none (older kernel, events_from_caller) */
    /* the execs of this ring, and whether the main socket had each */
    struct procmon_event rung[DOORBELL_RUNG_MAX];
    bool rung_seen[DOORBELL_RUNG_MAX];
    unsigned n_rung;
    /* execs handled from the doorbell ahead of the main socket: skipped
     * when the main socket brings them (a ring of the latest) */
    struct doorbell_key { pid_t tid; uint64_t timestamp_ns; } early[DOORBELL_EARLY_MAX];
    unsigned early_next;
    /* execs the main socket handled outside a ring (read before the
     * doorbell that rang for them): a ring that brings them later is done
     * already (a ring of the latest) */
    struct doorbell_key handled[DOORBELL_EARLY_MAX];
    unsigned handled_next;
    uint64_t rings, ahead, skipped, already;
};

/* New processes of a task whose mask we set, whose adoption waits
 * (engine-adopt.c): each with its creator's record as it was at the fork. */
struct engine_adopt_due {
    pid_t tid;
    uint64_t fork_ns;           /* the fork event's timestamp: which task of that TID */
    struct applied_task parent;
};
/* The records of tasks that exited while confined, one per distinct
 * (set, original) pair, the earliest start kept: what a process whose fork
 * event was lost and whose creator is gone may carry (engine-adopt.c). */
#define ADOPT_GONE_MAX 16
struct engine_adopt {
    struct engine_adopt_due *items;
    size_t n, cap;
    uint64_t at_exec, at_tick, at_restore;      /* adopted there */
    struct applied_task gone[ADOPT_GONE_MAX];
    unsigned n_gone, next_gone;
    uint64_t orphans;                           /* adopted by the mask an exited record had set */
};

/* Renames are the one event any local user sends at will and at almost no
 * cost: a thread calling prctl(PR_SET_NAME) in a loop sends hundreds of
 * thousands a second, and receiving them took the daemon half a CPU. Above
 * COMM_FLOOD_PER_S over a tick (at least COMM_FLOOD_WINDOW_MS), the main
 * socket stops hearing them (the kernel's event filter, 6.6+) for
 * COMM_SHED_MIN_MS, twice as long each time a flood comes again, up to
 * COMM_SHED_MAX_MS; then a rescan finds what was renamed meanwhile (within
 * each user's rename budget). Only COMM_SHED_MAX_MS without a flood ends
 * the doubling: a flood of a tick at a time gets the longest shed too. */
#define COMM_FLOOD_PER_S 5000u
#define COMM_FLOOD_WINDOW_MS 100u
#define COMM_SHED_MIN_MS 1000u
#define COMM_SHED_MAX_MS 16000u
struct comm_shed {
    uint64_t last_total, last_ms;       /* comm events counted at the last step */
    uint64_t until_ms;                  /* while on: when they are heard again */
    unsigned period_ms;                 /* of the last shed; 0: no flood going on */
    bool on;                            /* comm events not heard now */
    bool unsupported;                   /* the kernel cannot filter: never tried again */
    uint64_t sheds;
};
/* Pure: one tick's step, from the socket's comm events so far: +1 stop
 * hearing them, -1 hear them again, 0 nothing to do. */
int comm_shed_step(struct comm_shed *s, uint64_t comm_total, uint64_t now_ms);

/* A rescan that put renames off (procscan's per-user budget) is followed by
 * another this many ticks later: they are found then, not at the next
 * overflow, and a rename flood costs a walk per second, not per tick. */
#define RESCAN_RENAMES_TICKS 4u

#define ENGINE_RESCAN_GAP_MAX_MS 8000
/* Where events come from, and what happens when some are lost. */
struct engine_events {
    struct procmon *procmon;     /* NULL with params.events_from_caller */
    struct engine_doorbell doorbell;
    pid_t fork_parent_tid;       /* a fork event in flight: whose mask the new task inherited */
    struct engine_adopt adopt;
    struct comm_shed shed;
    struct log_ratelimit logs;   /* what a flood of events says: overflows, renames unheard */
    uint64_t rescan_renames_at;  /* tick at which renames a rescan put off are looked at again; 0: none */
    bool rescan_pending;         /* events were lost: rescan, at most once a tick */
    bool rescan_failed;          /* the last rescan did not finish: the next tick tries again */
    bool tick_at_rt;             /* this tick runs at realtime priority: the rescan waits for one that does not */
    uint64_t last_rescan_ms;
    /* Walks of /proc close together (the socket overflowing again and
     * again, which any user's fork storm can make it do) wait this long
     * after the last one: twice as long each time, up to
     * ENGINE_RESCAN_GAP_MAX_MS; 0 after a quiet while. */
    uint64_t rescan_gap_ms;
    bool rescan_overflow;        /* the pending walk is for lost events (the one kind that backs off) */
    uint64_t event_ns;           /* the kernel's timestamp of the event in flight (monotonic), 0: none */
    /* From an event's kernel timestamp to the return of the call that
     * placed its task: the daemon's own latency, per placement. */
    struct histogram placement_latency;
    /* Where the time goes (a profile that is always on: two reads of the
     * monotonic clock per event, through the vDSO): from each event's
     * timestamp to the start of its handling (queued in the socket or
     * behind other work), the handling itself by kind, and the wake-ups
     * that read the socket with their whole time (reading included). */
    struct histogram queue_delay;
    uint64_t handled_ns[PROCMON_KINDS];
    uint64_t wakeups, wakeups_ns;
};

/* Paused: every change undone, nothing packed, tasks still tracked and
 * classified (engine-pause.c). Held by the administrator (Pause until
 * Resume) or by control connections (a comparison's paused blocks), each
 * released when its connection closes. Kept across a reload, not a restart. */
#define ENGINE_PAUSE_SESSIONS_MAX 16
struct engine_pause {
    bool admin;
    unsigned n_sessions;
    uint64_t sessions[ENGINE_PAUSE_SESSIONS_MAX];   /* control connection ids */
    uint64_t since_ms;           /* when the current pause began */
    uint64_t pauses, paused_ms_total;               /* counters for metrics */
};

/* The run-delay guard (engine-delay.c): how long packed jitter waits on a
 * run queue per wake-up, from the schedstat the sampler reads of every
 * jitter thread, and the spill or fallback that delay-guard.c decides. */
struct engine_delay {
    struct delay_guard_config cfg;
    struct delay_guard guard;
    struct pidmap threads;       /* tid -> its last readings (engine-delay.c) */
    uint32_t tick;               /* ticks counted here, for the age of a reading */
    uint64_t delay_ns;           /* this tick's figure: the percentile over packed jitter */
    uint64_t wakeups;            /* ... and the wake-ups behind it */
    cpu_set_t spill_cpus;        /* threads of the cores spilled to, for the packer */
    char note[160];              /* the decision behind a spill or fallback in effect, else "" */
    char last[160];              /* this tick's decision in words */
    /* each packed jitter thread's mean wait per wake-up between two
     * readings, once per wake-up */
    struct histogram hist;
};

struct engine_reload_status {
    time_t time;
    bool ok;
    char msg[256];
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
    struct seat seat;            /* where the daemon itself runs (main.c moves it at each tick) */

    /* plan */
    struct packer_state pstate;
    struct packer_plan *plan;    /* last computed plan (large: heap) */
    bool planned;

    struct engine_group group;
    struct engine_slice slice;
    struct engine_events events;

    /* bookkeeping */
    bool table_full_logged;      /* said once per episode of a full table */
    uint64_t last_counters_log_ms;
    uint64_t last_uclamp_ms;
    uint64_t start_ms;
    struct engine_counters counters;
    struct engine_reload_status last_reload;
    unsigned n_by_class[_TASK_CLASS_MAX];      /* indexed by enum task_class, as of the last tick */
    unsigned n_packed;
    struct engine_pause pause;
    struct slice_support jitter_slice;  /* found once at start (engine_start) */
    struct engine_delay delay;
    struct engine_reqpath reqpath;
    /* The frequency table read from the CPU (turbo-ratio.h) where the
     * configuration gives none: at start and at each reload. */
    struct engine_freq {
        struct freq_response hw;   /* n_cores 0: none */
        char what[192];            /* what was read, or why nothing was */
    } freq;
    /* Without a table: the probe loop that learns which plan pays from the
     * busy cores' measured frequency (engine-probe.c). */
    struct engine_probe {
        struct freq_meter meter;   /* looked for once probe = yes (at start: see freq-meter.h) */
        bool on;                   /* no table, probe = yes, and a source */
        char off_why[448];         /* when not on: why, for status */
        struct probe_state state;
        struct packer_probe input; /* this tick's measurement, for the packer */
        bool read_failed;          /* said once per episode */
        enum benefit_plan learned; /* the learned plan last logged */
        unsigned learned_round;    /* ... and its round */
        char last_change[BENEFIT_EXPLAIN_MAX + 64];   /* why it last changed, "" none yet */
    } probe;
    /* Idle cores kept out of the deep idle states by unconfined jitter
     * (engine-idle.c), where cpuidle has a deep state. */
    struct engine_idle {
        struct idle_meter meter;
        bool on;                   /* a deep state to measure */
        bool said;                 /* "not measured" logged */
        bool unconfined;           /* the jitter was unconfined after the last plan */
        bool isolated;             /* ... or isolated on idle cores, chosen under planned_sig */
        uint64_t planned_sig;
        struct idle_measurement last;   /* this tick's, whatever the plan */
        struct packer_idle fig;    /* the model's: kept from ticks unconfined and isolated; the trial */
        bool tried;                /* a trial of isolation started, at trial_at_ms */
        uint64_t trial_at_ms;
        unsigned trials;           /* trials started, for the metrics */
    } idle;
};

/* The frequency table plans are weighed by: the configuration's, else the
 * CPU's; NULL when there is none and the thresholds alone decide. */
static inline const struct freq_response *engine_freq_table(const struct engine *e)
{
    if (e->cfg->freq.n_cores)
        return &e->cfg->freq;
    return e->freq.hw.n_cores ? &e->freq.hw : NULL;
}
/* Find it (engine-freq.c) and say which it is, or why there is none;
 * without one, start the probe loop where a frequency can be measured. */
void engine_find_freq_table(struct engine *e);

/* engine-probe.c. Without a table and with probe = yes: find the busy
 * cores' frequency source (once: opening the msr files needs a capability
 * the daemon gives up after start) and start the probe loop; false when
 * there is no source (e->probe.meter.what says what was looked for). */
bool engine_probe_setup(struct engine *e, bool have_table);
/* Before the plan: the busy cores' mean frequency since the previous tick,
 * for the packer; NULL when not probing. */
const struct packer_probe *engine_probe_measure(struct engine *e);
/* After the plan: start readings of cores that turned busy, and log the
 * learned plan when it changed, with why. */
void engine_probe_planned(struct engine *e);
/* The probe phase in one word: "off", "idle", "running", "learned",
 * "unmeasurable". */
const char *engine_probe_phase(const struct engine *e);

/* engine-idle.c. Find the deep idle states (at start, at each reload, and
 * after a topology change, which drops the kept measurement: keep false). */
void engine_idle_setup(struct engine *e, bool keep);
/* Before the plan: this tick's measurement, and the kept ones for the
 * packer (NULL when nothing can be measured). */
const struct packer_idle *engine_idle_measure(struct engine *e, uint64_t now);
/* After the plan: whether the jitter runs unconfined, or isolated, until
 * the next tick, and the trial of isolation it starts or ends. */
void engine_idle_planned(struct engine *e, uint64_t now);

/* The CPUs jitter is confined to now, or NULL when the plan does not
 * restrict it (or there is no plan yet). */
static inline const cpu_set_t *engine_plan_mask(const struct engine *e)
{
    return e->planned && e->plan->restricted ? &e->plan->mask : NULL;
}

/* Tasks by class right now (indexed by enum task_class), and how many the
 * daemon has changed: for replies, which must not lag a tick behind. */
void engine_count_now(const struct engine *e, unsigned by_class[_TASK_CLASS_MAX], unsigned *packed);

/* Takes ownership of cfg. Nothing on the system is touched yet. */
int engine_new(struct config *cfg, const struct engine_params *p, struct engine **ret);
/* Undo every change (restore_all, state file removed), release everything. */
void engine_free(struct engine *e);

/* Recover from a crashed predecessor, open the proc connector, scan every
 * existing thread through the same path as a new one, take the first load
 * sample. After this the daemon is ready. */
int engine_start(struct engine *e);
/* The proc connector's fd, -EBADF without one (params.events_from_caller). */
int engine_procmon_fd(const struct engine *e);
/* Drain the proc connector; rescans /proc after an overflow. Call
 * engine_state_due_ms() after it: changes it made go to the state file. */
int engine_on_events(struct engine *e);
/* engine-events.c: walk /proc for what lost events hid (procscan_reconcile),
 * with the hooks every change of the table goes through (engine.c). */
int engine_rescan(struct engine *e);
/* Whether gap_ms have passed since the last walk of /proc. */
bool engine_rescan_due(const struct engine *e, uint64_t gap_ms);
const struct procscan_hooks *engine_hooks(struct engine *e);
/* One event, as engine_on_events hands each on (a failure is logged and
 * the event dropped: the next rescan corrects it). */
void engine_on_event(struct engine *e, const struct procmon_event *ev);
/* Bring t's placement in line with its class and the plan (engine.c). */
void engine_place(struct engine *e, struct task *t);
/* engine-adopt.c. A process created by one whose mask we set inherited
 * that mask. Recording it needs its start time, from its /proc/PID/stat,
 * and reading that file waits while the process is inside an exec, which
 * a new process usually is: on a CPU crowded with what was packed there
 * it waited 100-250 ms, with every event behind it (a storm of 20,000
 * tasks left 1-2% unplaced when its forking parent had been packed). So
 * its adoption and placement wait: for its exec event (after which the
 * file no longer waits), else for a tick once it is a tick old, and for
 * any restore of everything. engine_adopt_defer: true if t waits, with
 * parent, the record it inherited. */
bool engine_adopt_defer(struct engine *e, struct task *t, const struct applied_task *parent);
/* What a task created now by parent_tid inherits (false: nothing of ours):
 * its record, or, while it waits itself, the one it inherited. A process
 * forked by a child that waits is confined by its grandparent's mask too. */
bool engine_inheritance(struct engine *e, pid_t parent_tid, struct applied_task *out);
/* For a process found without its fork event (lost, and found by a rescan):
 * what it inherits (engine_inheritance) from its nearest ancestor, a few
 * generations up, that has a record; false for none. Reads nothing while
 * no task is packed. */
bool engine_ancestor_inheritance(struct engine *e, pid_t tid, struct applied_task *out);
/* A task with a record is gone: keep what it was set to (engine_adopt). */
void engine_adopt_note_gone(struct engine *e, pid_t tid);
/* For a process found without its fork event whose ancestors have no
 * record: orphaned (its parent is init now), started after a task that
 * exited confined, and carrying exactly the mask the daemon had set on
 * that one. Its creator's record is gone, so its mask is recognised by
 * value: without this it kept the confined mask for good, taken for one
 * its user chose. A user's own pin equal to the plan's mask on a process
 * whose parent is init is taken for ours too (the mask alone cannot tell). */
bool engine_orphan_inheritance(struct engine *e, struct task *t, struct applied_task *out);
/* engine-shed.c: comm_shed_step, done on the main socket (each tick). */
void engine_shed_renames(struct engine *e, uint64_t now_ms);
/* t's exec came, its start time read: adopt it now (before its placement). */
void engine_adopt_at_exec(struct engine *e, struct task *t);
/* Adopt and place the waiting tasks forked before older_than_ns (0: all). */
void engine_adopt_due(struct engine *e, uint64_t older_than_ns);
void engine_adopt_free(struct engine *e);
/* The exec doorbell's fd, -EBADF without one. */
int engine_doorbell_fd(const struct engine *e);
/* An exec rang: read the main socket (engine_on_events), then handle
 * whatever exec it did not have yet. */
int engine_on_doorbell(struct engine *e);
/* After the main socket's dispatch: handle the rung execs it did not have,
 * and remember them. */
void engine_doorbell_settle(struct engine *e);
/* For the main socket's dispatch: true when ev is an exec the doorbell
 * handled already (skip it); notes the execs of the current ring, and the
 * ones handled outside a ring (for the ring that comes for them). */
bool engine_doorbell_filter(struct engine_doorbell *d, const struct procmon_event *ev);
/* Open the doorbell where the kernel filters events; its absence is not
 * an error. */
void engine_doorbell_open(struct engine *e);
/* Events were lost: rescan /proc now, or at the next tick when one ran
 * within the last tick interval or when events are handled at a realtime
 * priority (a walk of /proc is the work of a tick at normal priority:
 * events.tick_at_rt holds it back). */
int engine_events_lost(struct engine *e);
/* Write the state file if a change waits and may be written now; returns
 * -1 when nothing waits, else the ms after which to call again. */
int64_t engine_state_due_ms(struct engine *e);
/* Sample load, plan, apply; called every tick_interval. */
int engine_tick(struct engine *e);
/* Parse, validate, swap, reclassify. A bad config keeps the old one; the
 * reason goes to the log and into *msg. */
int engine_reload(struct engine *e, char *msg, size_t size);
/* Restore every change; the engine can be freed afterwards. */
void engine_stop(struct engine *e);
/* "412 tasks, 23 jitter packed on CPUs 0-3; uclamp unsupported" */
void engine_status_line(const struct engine *e, char *buf, size_t size);

/* engine-delay.c */
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

/* engine-pause.c */
static inline bool engine_paused(const struct engine *e)
{
    return e->pause.admin || e->pause.n_sessions > 0;
}
/* Pause for the administrator (session 0) or while control connection
 * `session` lives. Returns the changes undone (0 when it was already
 * paused), -EUSERS when too many connections hold a pause. */
int engine_pause(struct engine *e, uint64_t session);
/* Release the administrator's pause (session 0) or that connection's;
 * packs again once nothing holds a pause. Returns 1 when packing resumed,
 * 0 when it was not paused or something still holds a pause. */
int engine_resume(struct engine *e, uint64_t session);
/* A control connection closed: its pause, if any, ends with it. */
void engine_session_closed(struct engine *e, uint64_t session);
/* Milliseconds paused since start, the current pause included. */
uint64_t engine_paused_ms_total(const struct engine *e);
/* Used by engine-pause.c (engine.c): undo every change; place every
 * classified task under the current plan. */
int engine_undo_all(struct engine *e);
void engine_place_all(struct engine *e);
/* engine-slice.c: the jitter slice's CPUs follow the plan (mask NULL: no
 * restriction); undo every change, keeping other tasks' pins. */
void engine_set_slice(struct engine *e, const cpu_set_t *mask);
int engine_restore_everything(struct engine *e, bool wait_for_toggle);
