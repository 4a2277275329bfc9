/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The control socket's replies, built from the engine's state as json-c
 * objects in the schemas turbosched-ctl renders. */
#pragma once
#include <sys/types.h>

struct engine;
struct json_object;

struct json_object *report_status(const struct engine *e);
struct json_object *report_dump(const struct engine *e);
/* Each thread of pid (at most REPORT_EXPLAIN_THREADS_MAX: each costs a read
 * of the process, and a process may have thousands), with threads_total.
 * -ESRCH if no thread of pid is tracked. */
#define REPORT_EXPLAIN_THREADS_MAX 256
int report_explain(const struct engine *e, pid_t pid, struct json_object **ret);
struct json_object *report_metrics(const struct engine *e);
