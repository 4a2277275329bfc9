/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Decides a task's class. Precedence, first that applies wins:
 *   1. turbosched-jitter.slice (cgroup path) → jitter       [unit_optin]
 *   2. X-TurboSched= of the task's unit                     [unit_optin, systemd]
 *   3. the first matching [rule NAME]
 *   4. uclamp util_max <= uclamp_threshold → jitter          [uclamp, kernel support]
 *   5. observed behaviour (behaviour = yes)                 [behaviour]
 *   6. [classify] default_class
 * util_max reads 0 for every task on kernels without CONFIG_UCLAMP_TASK, so
 * step 4 only runs where support was detected. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <systemd/sd-event.h>

#include "config.h"
#include "task.h"
#include "uclamp.h"
#include "units.h"

struct classifier;

/* Detects uclamp support under proc_root (NULL = "/") and, if
 * cfg->unit_optin, connects to systemd (absent: logged once, unit opt-in off;
 * the slice still works). cfg must outlive the classifier (or until the next
 * classifier_set_config). */
int classifier_new(const struct config *cfg, const char *proc_root, struct classifier **ret);
void classifier_free(struct classifier *c);
/* Let systemd's Reloading signal flush the unit cache. */
int classifier_attach_event(struct classifier *c, sd_event *e);
/* After a reload; flushes caches. Tasks keep their class until reclassified. */
void classifier_set_config(struct classifier *c, const struct config *cfg);

/* Sets t->class, t->source, t->rule (-1 unless a rule decided). Returns 1 if
 * the class changed, 0 if not, -ESRCH/-ENOENT if the task is gone (t
 * unchanged), other -errno on failure. Reads the process-wide inputs (exe,
 * cmdline, cgroup, unit) as the rules need them: for a new task or an exec.
 * The thread's comm is t->comm (its comm file if empty), the user t->uid's. */
int classifier_classify(struct classifier *c, struct task *t);
/* The same after a comm or uid event: only t->comm or t->uid changed, so
 * what the process-wide inputs decided at the leader's last classify is
 * used, and nothing is read (but the comm file if t->comm is empty). Without
 * that (leader not classified since the last reload or rescan, or gone):
 * as classifier_classify. */
int classifier_classify_thread(struct classifier *c, struct task *t);
/* The task leaves the table: a leader takes its process's inputs along. */
void classifier_task_gone(struct classifier *c, const struct task *t);
/* Where behaviour verdicts come from (the engine's sampler): the verdict a
 * task holds now, BEHAVIOUR_NONE when it has none or is no candidate. */
typedef enum behaviour_verdict (*classifier_behaviour_fn)(const struct task *t, void *userdata);
void classifier_set_behaviour(struct classifier *c, classifier_behaviour_fn fn, void *userdata);
/* After a task's behaviour verdict changed: tasks whose class came from
 * behaviour or the default take the new one; reads nothing. 1 if the
 * class changed, else 0. */
int classifier_apply_behaviour(struct classifier *c, struct task *t);
/* Heap bytes of what is remembered per process. */
size_t classifier_memory_bytes(const struct classifier *c);
/* For tasks whose class came from uclamp or the default: re-read util_max
 * only (util_max changes without any proc event; call every
 * uclamp_recheck_ms). Same returns; 0 without work for other sources. */
int classifier_recheck_uclamp(struct classifier *c, struct task *t);
/* Between begin and end, process-wide inputs (exe, cmdline, cgroup, unit)
 * are read once per process, for classifying many threads at once (a
 * rescan, a reload). Begin forgets what was remembered per process: a rescan
 * follows lost events, and an exec may be among them. */
void classifier_batch_begin(struct classifier *c);
void classifier_batch_end(struct classifier *c);

/* One line saying why t gets its class, e.g. "rule 'monitoring-agents'
 * (turbosched.conf:12) matched comm 'telegraf'", or why nothing matched.
 * Reads /proc afresh. Returns the length (truncated to size-1) or -errno. */
int classifier_explain(struct classifier *c, const struct task *t, char *buf, size_t size);

bool classifier_uclamp_supported(const struct classifier *c);
/* Some rule matches on `user`: tasks' uids are worth reading as they come. */
bool classifier_uses_user(const struct classifier *c);
/* X-TurboSched= lookups are possible (unit_optin and systemd on the bus). */
bool classifier_unit_optin_active(const struct classifier *c);

/* Tests: replace sched_getattr and uclamp detection, and the unit store
 * (ownership of u passes to the classifier; NULL: none). */
void classifier_set_uclamp_ops(struct classifier *c, bool supported, uclamp_get_fn fn, void *userdata);
void classifier_set_units(struct classifier *c, struct units *u);
