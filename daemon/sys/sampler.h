/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The load sampler: what the packer needs to know about load, measured once
 * a tick. Per CPU: utilisation from /proc/stat deltas, smoothed. Per jitter
 * task: CPU time from its schedstat, smoothed, and charged to the CPU it last
 * ran on. It reads through load.c below a root directory, so tests point it
 * at a fixture tree; it decides nothing. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "behaviour.h"
#include "freelist.h"
#include "load.h"

struct task;
struct task_table;

struct sampler_reading;

struct sampler {
    const char *root;           /* "/" on a real system */
    int n_cpus;                 /* entries in the per-CPU arrays */
    struct cpu_stat *stat_prev; /* the previous /proc/stat sample */
    int n_stat_prev;
    uint64_t stat_prev_ms;
    int *util_milli;            /* smoothed per-CPU utilisation, -1 = no sample */
    int *jitter_milli;          /* share of it from jitter tasks, by the CPU each last ran on */
    unsigned jitter_load_milli; /* every jitter task's utilisation, summed */
    size_t cursor;              /* where the next tick's task sampling starts */
    unsigned idle_backoff_ms;   /* SAMPLER_IDLE_BACKOFF_MS (sampler_init); 0: read every tick */
    /* behaviour: one entry per candidate thread (struct task.watch) */
    struct freelist watch;         /* of struct sampler_watch, linked through next_ms */
    uint32_t n_watching;           /* entries in use */
    size_t watch_cursor;           /* where the next tick's walk starts: the first thread it could not read */
    unsigned behaviour_new_wanted; /* new and unseen threads the last tick met */
    uint64_t behaviour_reads;      /* schedstat reads for behaviour, for metrics */
    /* per process, whether its threads ran at all (sampler-gate.c) */
    struct freelist gate;          /* of struct sampler_gate, linked through read_ms */
    uint64_t gate_reads;           /* /proc/PID/stat reads for the gates */
    uint64_t gate_skips;           /* thread reads the gates spared */
    uint64_t jitter_reads;         /* reads of jitter tasks by sampler_sample_tasks */
    uint64_t first_reads_deferred; /* new jitter tasks passed over once (TASK_F_FIRST_READ_DUE) */
    uint64_t behaviour_capped;     /* jitter-by-behaviour reads put off by their user's share of a tick */
    uint64_t catchup_reads;        /* first reads of threads of still processes (SAMPLER_CATCHUP_READS_PER_TICK) */
    uint64_t catchup_deferred;     /* ...put off to a later tick by that budget */
    /* Called with each jitter thread's schedstat reading that
     * sampler_sample_tasks makes (the run-delay guard); NULL: none. */
    void (*on_jitter_reading)(struct task *t, const struct sampler_reading *rd, void *userdata);
    void *hook_data;
};

/* What the sampler keeps per candidate thread: 64 bytes. */
struct sampler_watch {
    struct behaviour_state st;
    uint32_t next_ms;   /* read it again at or after this (monotonic ms, wraps) */
    uint8_t idle_reads; /* consecutive reads that found it had not run: its gap doubles */
    uint8_t in_use;
    uint8_t verdict; /* what the classifier uses: behaviour's, with hysteresis (below) */
};

/* Per process: the CPU time of all its threads (utime + stime of
 * /proc/PID/stat, clock ticks), and since when it has not changed. A thread
 * that slept through its last read, in a process whose total has not moved
 * by one clock tick since then, ran less than a tick (10 ms) in between: it
 * is not read. One read of the process's stat (about 0.15 µs per thread in
 * the kernel) stands for a schedstat read of each of its sleeping threads
 * (about 11 µs each on the development VM). */
struct sampler_gate {
    uint64_t ticks;     /* the total at the last read */
    uint32_t read_ms;   /* when it was last read (monotonic ms, wraps) */
    uint32_t stable_ms; /* the first read that saw `ticks` */
    uint32_t threads;   /* its thread count at the last read */
    uint8_t in_use, valid;
    uint8_t compared; /* the last read had a valid one before it */
    uint8_t moved;    /* ...and found the total changed since */
};
/* How often a process's total is read at most, as a share of the window
 * (window / SAMPLER_GATE_REFRESH_DIV); a sleeping thread that wakes is read
 * at most that much later than without the gate. */
#define SAMPLER_GATE_REFRESH_DIV 4
/* A thread the gate spares is read anyway after this many windows without a
 * read: whatever the process's total, the thread's own figures are fresh at
 * least that often. */
#define SAMPLER_GATE_MAX_WINDOWS 30
/* ...and at most once per this many ms per thread of the process: the read
 * walks every thread in the kernel (measured 0.15-0.4 µs a thread on the
 * development VM), so a process costs at most about 0.04% of a CPU however
 * many threads it has (10,000 threads: once per 10 s). */
#define SAMPLER_GATE_MS_PER_THREAD 1u
/* The same for jitter tasks (sampler_sample_tasks): their process's total
 * is read at most every SAMPLER_GATE_JITTER_REFRESH_MS, and the task itself
 * at least every SAMPLER_GATE_JITTER_MAX_MS (its smoothed figure decays
 * only when it is read). */
#define SAMPLER_GATE_JITTER_REFRESH_MS 2000u
#define SAMPLER_GATE_JITTER_MAX_MS 30000u

/* A jitter thread whose wake-ups fall below behaviour_jitter_min_wakeups
 * stays jitter until they fall below this share of it (in percent): the
 * weighted rate of a thread that wakes once a second swings 0.88..1.08 per
 * second around the limit of 1, which would change its mask every few
 * seconds. Any other reason (turned heavy, long runs) releases it at once. */
#define SAMPLER_WAKEUPS_HYSTERESIS_PCT 50

/* Per tick, at most this many behaviour reads of threads that are not
 * jitter by behaviour (those are read every tick, to release them at once
 * when they turn heavy): bounds the cost on machines with many threads. */
#define SAMPLER_BEHAVIOUR_READS_PER_TICK 96

/* Per tick, at most this many behaviour reads of one user's threads that
 * are jitter by behaviour (of one process's where the uid is not known):
 * the rest are read at the next ticks, the walk starting with the first
 * one left. Read every tick without it, a user's 20,000 light threads
 * were 20,000 reads a tick once they had turned jitter, most of them at
 * realtime priority while the user's exec loop kept events coming. */
#define SAMPLER_JITTER_READS_PER_USER 256u

/* Catch-up: a thread never read, of a process not seen running
 * (sampler_gate_still: its total CPU time was the same at the last two
 * reads of its gate, or the gate was read once only), has nothing to show
 * yet: its first read only takes a baseline. Such first reads are spread,
 * at most this many threads a tick for behaviour (each a candidate ask, a
 * system call, and a schedstat read) and as many for jitter tasks. Where
 * the gate saw the process still (two reads), the thread is taken as
 * found asleep, so that the gate spares its next reads until the process
 * runs. Threads of a process seen running, leaders and single-threaded
 * processes are read at once as before; a thread of a new process waits at
 * most for the gate's second read (a quarter of the window, or
 * SAMPLER_GATE_JITTER_REFRESH_MS) while a catch-up is under way.
 * The bound: the first minutes after a start cost at most the settled
 * state plus 32 /proc reads and 16 mask reads a tick (0.08-0.14% of a CPU
 * on the development VM), for threads/16 ticks (10,000 sleeping threads:
 * 2.6 minutes); before, 96 reads a tick for the first 80 s, 0.38-0.41% of
 * a CPU from 3 s against 0.25% settled, now 0.30-0.33% (20 s windows up
 * to 140 s: 0.28-0.36%, against 0.26-0.30% settled). Measured in
 * docs/hacking.md, "What costs time at steady state". */
#define SAMPLER_CATCHUP_READS_PER_TICK 16u

/* A new process whose fork event added it (not read since: no exec yet) is
 * watched for behaviour only once it is this old: most children of a fork
 * storm exec, and are classified afresh, or exit before then. Watched at
 * once, a child a tick met between its fork and its exec cost a mask read
 * and a schedstat read, out of the tick's budget for new threads. */
#define SAMPLER_FORKED_WAIT_MS 250u

/* A tick reads at most this many tasks (round robin); see sampler.c. */
#define SAMPLER_TASKS_PER_TICK 64
/* A jitter task found not to have run since its last read is read again
 * only SAMPLER_IDLE_BACKOFF_MS later, twice that if it still had not, and so
 * on up to SAMPLER_IDLE_BACKOFF_MS << (SAMPLER_IDLE_BACKOFF_MAX_SHIFT - 1),
 * 8 s: a machine full of sleeping jitter threads costs a read of each per
 * 8 s, not one per tick. CPU time is a counter, so a later read loses
 * nothing: a thread that wakes after a long sleep is counted at most 8 s
 * late, and read every tick again once it has run. (A sleeping thread of a
 * multi-threaded process whose figure has decayed to 0 may wait longer: its
 * process's gate, SAMPLER_GATE_JITTER_*, decides when it is read.) */
#define SAMPLER_IDLE_BACKOFF_MS 250u
#define SAMPLER_IDLE_BACKOFF_MAX_SHIFT 6u

/* Arrays for n_cpus CPUs (at least 1), no sample yet. root is kept, not copied. */
int sampler_init(struct sampler *s, const char *root, int n_cpus);
void sampler_destroy(struct sampler *s);
/* Grow the per-CPU arrays (hotplug brought a higher CPU); never shrinks. New
 * CPUs have no sample yet. */
int sampler_resize(struct sampler *s, int n_cpus);

/* Read /proc/stat and fold it into util_milli (the first sample of a CPU is
 * taken as is; later ones are smoothed with half_life_ms). -errno when
 * /proc/stat could not be read, logged: the tick has no load figures then
 * (-ERANGE when it lists a CPU beyond n_cpus: sampler_resize first, as the
 * engine does when the topology changes). */
int sampler_sample_cpus(struct sampler *s, uint64_t now_ms, unsigned half_life_ms);

/* Read up to SAMPLER_TASKS_PER_TICK jitter tasks from where the last call
 * stopped, then recompute jitter_milli and jitter_load_milli from every
 * jitter task's latest figures. Tasks that are gone are left for their exit
 * event to remove. */
void sampler_sample_tasks(struct sampler *s, struct task_table *tt, uint64_t now_ms, unsigned half_life_ms);

/* One reading of a task's scheduler counters, and what changed since the
 * previous one: the one place a task's counters are read and differenced. */
struct sampler_reading {
    uint64_t runtime_ns; /* CPU time so far (schedstat, or utime+stime) */
    uint64_t wait_ns;    /* run-queue wait so far (schedstat; 0 without it) */
    uint64_t slices;     /* timeslices run so far (schedstat; 0 without it) */
    bool schedstat;      /* the figures came from schedstat */
};
struct sampler_delta {
    uint32_t dt_ms;  /* since the previous reading; 0: no previous one */
    uint64_t run_ns; /* CPU time in between */
};
int sampler_read_task(const struct sampler *s, const struct task *t, struct sampler_reading *ret);
/* One behaviour read against the previous one of the same thread. */
struct sampler_sample {
    uint64_t run_ns, wait_ns, slices; /* in between */
    uint32_t dt_ms;
    uint32_t now_ms;
};
/* Behaviour sampling, once a tick: for every task whose class comes from
 * behaviour or the default (the candidates), read its schedstat when due and
 * feed behaviour_update(). Jitter-by-behaviour threads are read every tick
 * (up to SAMPLER_JITTER_READS_PER_USER of one user's);
 * new and exec'd ones may use the whole budget (those of a process not seen
 * running SAMPLER_CATCHUP_READS_PER_TICK of it); the rest when due (window/5
 * after the last read, doubling for a thread that had not run, up to 6
 * windows; a sleeping thread with no verdict in a quiet process is gated, see
 * struct sampler_gate), at most SAMPLER_BEHAVIOUR_READS_PER_TICK a tick. A thread is asked about once with
 * is_candidate (kernel thread, pinned by its user) before it is watched.
 * on_verdict is called for each thread whose verdict changed or that turned
 * heavy while jitter (r->released). */
struct sampler_behaviour_hooks {
    bool (*is_candidate)(struct task *t, void *userdata);
    void (*on_verdict)(struct task *t, const struct behaviour_result *r, void *userdata);
    /* Each read with a previous one to compare: what the thread did in
     * between (the tail guard's samples). NULL: none. */
    void (*on_sample)(struct task *t, const struct sampler_sample *d, void *userdata);
    /* Asked whenever behaviour would make or keep t jitter; false holds it
     * back (the verdict is then none, why BEHAVIOUR_WHY_HELD). granting: t
     * is not jitter by behaviour yet. NULL: never held back. */
    bool (*may_be_jitter)(struct task *t, bool granting, void *userdata);
    void *userdata;
};
void sampler_sample_behaviour(struct sampler *s, struct task_table *tt, const struct behaviour_params *p,
                              uint64_t now_ms, const struct sampler_behaviour_hooks *h);
/* The task's watch entry, NULL if it has none. */
struct sampler_watch *sampler_watch_of(const struct sampler *s, const struct task *t);
/* The task leaves the table, or stops being a candidate: free its entry. */
void sampler_unwatch(struct sampler *s, struct task *t);
/* Exec: a new program, observed afresh and read first. */
void sampler_watch_reset(struct sampler *s, struct task *t);
/* explain's line: the figures now (read afresh, the watch unchanged) and
 * the verdict, or why the task is not classified by behaviour. */
void sampler_behaviour_explain(const struct sampler *s, const struct task *t, const struct behaviour_params *p,
                               uint64_t now_ms, char *buf, size_t size);
/* True when t is a thread other than its process's leader, and the
 * process's total CPU time (read again when older than refresh_ms) has not
 * moved since a read at or before since_ms: t ran less than a clock tick
 * since then. False when it cannot tell (no leader tracked, stat
 * unreadable): the caller reads the thread. */
bool sampler_gate_quiet(struct sampler *s, struct task_table *tt, const struct task *t, uint32_t since_ms,
                        uint32_t now32, uint32_t refresh_ms);
/* Whether t's process has been seen running, by its gate (t a thread
 * other than its leader): SAMPLER_STILL when the last read of its total
 * CPU time found it as the read before (at least still_ms earlier),
 * SAMPLER_NOT_SEEN when there was one read only, SAMPLER_RUNNING when the
 * total moved or the gate cannot tell (a leader, no leader tracked, stat
 * unreadable, never read and !may_read). The total is read again when the
 * last read is still_ms old if it was the first or found the total moving,
 * else as sampler_gate_quiet does; only when may_read. */
enum sampler_still { SAMPLER_RUNNING, SAMPLER_NOT_SEEN, SAMPLER_STILL };
enum sampler_still sampler_gate_still(struct sampler *s, struct task_table *tt, const struct task *t, uint32_t now32,
                                      uint32_t still_ms, bool may_read);
/* The leader leaves the table: free its process's entry. */
void sampler_gate_release(struct sampler *s, struct task *leader);
/* Heap bytes of the watch table. */
size_t sampler_memory_bytes(const struct sampler *s);
/* A kernel thread, as procscan found it (TASK_F_KTHREAD); reads nothing. */
bool sampler_is_kernel_thread(const struct task *t);

/* false when there is no valid previous reading to compare with (first
 * sample, no time passed, or a counter that went backwards). */
bool sampler_task_delta(const struct task *t, const struct sampler_reading *now, uint32_t now32,
                        struct sampler_delta *ret);
