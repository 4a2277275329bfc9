/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A whole engine against a fixture root, shared by test-engine and
 * test-report: the x86-smt2-2s topology (siblings N and N+8, two packages),
 * a /proc/stat whose counters the test advances between ticks, and a /proc
 * listing a few tasks under names the config's rules match.
 *
 * efx_setup: the tasks are made up, the engine's system calls go to a fake
 * sysops that keeps each task's mask, and no proc connector is opened (the
 * test passes events with engine_on_event): no privilege is needed.
 * efx_setup_real: the tasks are real ones the fixture forks, the engine uses
 * sysops_real and the proc connector, in dry run, so nothing on the system
 * changes; it skips without the privilege to open the proc connector. */
#pragma once
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "engine.h"
#include "sysops.h"

#define EFX_N_CPUS 16

/* The fake sysops: a made-up task's mask and start time. */
struct efx_fake_task {
    pid_t pid, tid;
    pid_t ppid; /* 1 unless efx_set_parent says otherwise */
    uint64_t start_time;
    cpu_set_t mask;
};

struct efx_fake {
    struct efx_fake_task tasks[32];
    size_t n_tasks;
    cpu_set_t online;
    unsigned n_setaffinity; /* calls that changed a mask */
};

struct engine_fixture {
    bool real;         /* efx_setup_real */
    bool live;         /* efx_setup_live: not a dry run */
    pid_t spawned[4];  /* efx_spawn_real */
    int spawned_go[4]; /* written to: the child renames itself */
    size_t n_spawned;
    struct efx_fake fake;
    struct sysops ops; /* over fake, unless real */
    char root[PATH_MAX / 4];
    char conf[PATH_MAX / 2];
    /* tasks listed in the fixture's /proc */
    pid_t jit_a;               /* comm "jitterbug": rule jitterbugs -> jitter */
    pid_t jit_b, jit_b_thread; /* a process with two threads, both "jitterbug" */
    pid_t crunch;              /* comm "crunch": rule crunchers -> intensive */
    pid_t self;                /* comm "runner": no rule -> ignore (real: the test itself) */
    cpu_set_t real_mask;       /* the tasks' affinity: what the applier reads as their original */
    unsigned long long busy[EFX_N_CPUS], idle[EFX_N_CPUS]; /* /proc/stat counters */
    int n_cpus;                                            /* the topology's: EFX_N_CPUS, or 2 (efx_setup_2cpu) */
    struct engine *e;
};

/* cmocka setup/teardown: *state is a struct engine_fixture with the
 * engine created (engine_new) from efx_write_config(fx, true), not started. */
int efx_setup(void **state);
int efx_setup_real(void **state);
/* As efx_setup, but not a dry run: the engine changes the fake's masks. */
int efx_setup_live(void **state);
/* As efx_setup_live, on one chip of two single-thread cores (vm-2cpu, CPUs
 * 0-1, copied into the tree so that a test may add files to its sys, such
 * as cpufreq's): one domain, as the benefit model and the probe need. */
int efx_setup_2cpu(void **state);
/* Write the file rel (below the fixture's root; directories made). */
void efx_put(struct engine_fixture *fx, const char *rel, const char *text);
int efx_teardown(void **state);

/* engine_start. Real: skips the test (cmocka skip()) when the proc connector
 * cannot be opened for want of privilege, or when the real CPU mask leaves
 * the fixture's plan nothing to narrow. */
void efx_start(struct engine_fixture *fx);

/* A made-up task (efx_setup only): listed in the fixture's /proc and known
 * to the fake with the mask real_mask. Remove takes it out of both. */
void efx_add_task(struct engine_fixture *fx, pid_t pid, pid_t tid, const char *comm);
/* The parent process the fake sysops report for tid (parent_of). */
void efx_set_parent(struct engine_fixture *fx, pid_t tid, pid_t ppid);
void efx_remove_task(struct engine_fixture *fx, pid_t pid, pid_t tid);
/* A real task (efx_setup_real) forked now and listed in the tree under
 * comm, while its real comm is still its parent's; it is killed at
 * teardown. The kernel reports its fork to the proc connector, and a comm
 * event once efx_rename_real has it take comm as its name. */
pid_t efx_spawn_real(struct engine_fixture *fx, const char *comm);
void efx_rename_real(struct engine_fixture *fx, pid_t pid);
/* A made-up task's /proc/PID/task/TID/schedstat: run ns, run-queue wait
 * ns, timeslices. */
void efx_set_schedstat(struct engine_fixture *fx, pid_t pid, pid_t tid, uint64_t run_ns, uint64_t wait_ns,
                       uint64_t slices);
/* The fake's current mask of a made-up task. */
const cpu_set_t *efx_fake_mask(struct engine_fixture *fx, pid_t tid);

/* The config file: the base settings (dry run, no hold, no smoothing to
 * speak of, no uclamp or unit opt-in, state file in the tree) plus, with
 * rules, [rule jitterbugs] and [rule crunchers]. extra is appended as is. */
void efx_write_config(struct engine_fixture *fx, bool rules, const char *extra);

/* Advance every CPU's /proc/stat counters by 1000 ticks, util_pct[cpu] of
 * them busy, then wait long enough for the engine's smoothing (half_life
 * 1ms) to forget the previous sample, and tick. */
void efx_tick_with(struct engine_fixture *fx, const unsigned util_pct[EFX_N_CPUS]);

/* Load that makes the plan restricted: in package 0, core 0 (CPUs 0,8) busy
 * with room and core 2 (CPUs 1,9) saturated (no room); in package 1, core 0
 * (CPUs 4,12) busy with room. The plan is then CPUs 0,4,8,12. */
extern const unsigned efx_busy_load[EFX_N_CPUS];
extern const unsigned efx_no_load[EFX_N_CPUS];
#define EFX_BUSY_PLAN "0,4,8,12"

/* Messages logged since the last efx_log_reset (the fixture installs the
 * sink; engine_reload removes it, efx_log_reset puts it back). */
const char *efx_log(void);
/* A CPU list for messages and comparisons; four calls may be alive at once. */
const char *efx_fmt(const cpu_set_t *set);
void efx_log_reset(void);

/* For tests that see the engine through engine.h alone (test-report): the
 * packed count as of the last tick, a thread put straight into the task
 * table (0 or -errno), and the placement latency histogram. */
unsigned efx_packed_at_tick(struct engine_fixture *fx);
int efx_track(struct engine_fixture *fx, pid_t pid, pid_t tid);
struct histogram *efx_placement_latency(struct engine_fixture *fx);

/* One sample's value of a metrics family in report_metrics(), the sample
 * with label=value (label NULL: the family's last sample); -1 if absent. */
double efx_metric(struct engine_fixture *fx, const char *family, const char *label, const char *value);
