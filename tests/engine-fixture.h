/* A whole engine against a fixture root, shared by test-engine and
 * test-report: the x86-smt2-2s topology (siblings N and N+8, two packages),
 * a /proc/stat whose counters the test advances between ticks, and a /proc
 * listing a few real tasks the fixture forks, under names the config's rules
 * match. The tasks are real because the engine's applier reads their
 * affinity with sched_getaffinity; the engine runs in dry run, so nothing on
 * the system changes. */
#pragma once
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/types.h>

#include "engine.h"

#define EFX_N_CPUS 16

struct engine_fixture {
    char root[PATH_MAX / 4];
    char conf[PATH_MAX / 2];
    /* real tasks, listed in the fixture's /proc */
    pid_t jit_a;              /* comm "jitterbug": rule jitterbugs -> jitter */
    pid_t jit_b, jit_b_thread; /* a process with two threads, both "jitterbug" */
    pid_t crunch;             /* comm "crunch": rule crunchers -> intensive */
    pid_t self;               /* the test itself, comm "runner": no rule -> ignore */
    cpu_set_t real_mask;      /* the tasks' affinity: what the applier reads as their original */
    unsigned long long busy[EFX_N_CPUS], idle[EFX_N_CPUS];   /* /proc/stat counters */
    struct engine *e;
};

/* cmocka group setup/teardown: *state is a struct engine_fixture with the
 * engine created (engine_new) from efx_write_config(fx, true), not started. */
/* Before running any test: 77 (ctest's skip) with a one-line reason when the
 * proc connector cannot be opened here, else 0. */
int efx_preflight(void);
int efx_setup(void **state);
int efx_teardown(void **state);

/* engine_start; skips the test (cmocka skip()) when the proc connector
 * cannot be opened for want of privilege, or when the real CPU mask leaves
 * the fixture's plan nothing to narrow. */
void efx_start(struct engine_fixture *fx);

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
