/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The task table: every thread on the machine, keyed by TID, guarded against
 * TID reuse by the start time from /proc/TID/stat. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"

/* A uid not read yet (procscan_hooks.lazy_uid): read by whoever needs it. */
#define TASK_UID_UNKNOWN ((uid_t)-1)

struct task {
    pid_t tid;
    pid_t pid;            /* thread group id */
    uint64_t start_time;  /* field 22 of /proc/TID/stat, clock ticks after boot */
    bool start_pending;   /* start_time not read yet (procscan_ensure_start) */
    uint8_t idle_samples; /* jitter samples in a row that found it had not run (sampler.c) */
    int16_t last_cpu;     /* CPU it ran on at its last sample (its util_milli is 0 until one) */
    char comm[16];
    uid_t uid; /* effective; TASK_UID_UNKNOWN until a user rule needs it */
    /* classification (written by the classifier) */
    enum task_class class;
    enum class_source source;
    int rule; /* index into config.rules, -1 when no rule decided */
    /* load tracking (written by the load sampler) */
    uint64_t runtime_ns; /* CPU time at the last sample */
    unsigned util_milli; /* smoothed utilisation of one CPU, 0..1000 */
    uint32_t sample_ms;  /* when runtime_ns was read (monotonic ms, wraps) */
    /* bookkeeping */
    uint32_t seen_gen; /* rescan generation that last saw it */
    uint32_t flags;
    /* behaviour: 1 + index of its entry in the sampler's watch table, 0 for
     * none (only candidates have one: no kernel threads, no pinned tasks,
     * nothing a rule decided) */
    uint32_t watch;
    /* on a process's leader: 1 + index of the process's entry in the
     * sampler's gate table (sampler-gate.c), 0 for none */
    uint32_t gate;
};
#if defined(__x86_64__)
/* The memory per thread stated in task.c and the docs. */
_Static_assert(sizeof(struct task) == 88, "struct task grew: update the figures in task.c and docs/how-it-works.md");
#endif

/* struct task.flags bits of the task's own (the engine's start at 0x1) */
#define TASK_F_NOT_CANDIDATE 0x100u /* kernel thread or pinned by its user: never classified by behaviour */
/* A kernel thread (PF_KTHREAD), as its stat said when procscan read it, or
 * as its creator is until it execs: known without reading /proc again. */
#define TASK_F_KTHREAD 0x200u
/* Its start time was read from /proc just now, by procscan handling the
 * event the hooks are called for: set only while they run. Whoever acts on
 * the TID in them need not read it again to know the TID was not reused. */
#define TASK_F_START_FRESH 0x400u
/* A jitter task the load sampler has passed over once without reading:
 * its first read, which only sets a baseline, waits a tick (sampler.c). */
#define TASK_F_FIRST_READ_DUE 0x800u
/* A new process created by one whose mask we set: its adoption, and its
 * placement, wait for its exec or a later tick (engine-adopt.c). */
#define TASK_F_ADOPT_DUE 0x1000u

struct task_table;

int task_table_new(unsigned max_tasks, struct task_table **ret);
void task_table_free(struct task_table *t);
/* O(1) average. NULL if not tracked. */
struct task *task_table_find(struct task_table *t, pid_t tid);
/* Add a task (copied in); -EEXIST if the TID is tracked, -ENOSPC at the bound. */
int task_table_add(struct task_table *t, const struct task *proto, struct task **ret);
/* Remove by TID; 0 if removed, -ENOENT if it was not tracked. */
int task_table_remove(struct task_table *t, pid_t tid);
unsigned task_table_count(const struct task_table *t);
/* Iterate: start with *iter = 0; returns NULL at the end. The table must not
 * be changed during the walk except by task_table_remove of the current task. */
struct task *task_table_next(struct task_table *t, size_t *iter);

/* Additions for discovery. */
unsigned task_table_max(const struct task_table *t);
/* Rescan generations (procscan_reconcile): the count of rescans done so far. */
uint32_t task_table_generation(const struct task_table *t);
uint32_t task_table_new_generation(struct task_table *t);
/* Heap bytes held by the table now (tasks + index), for status output. */
size_t task_table_memory_bytes(const struct task_table *t);
