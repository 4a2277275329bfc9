/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A task's uclamp util_max, read with sched_getattr(2). */
#pragma once
#include <stdbool.h>
#include <sys/types.h>

/* Kernel scale of util_min/util_max. */
#define UCLAMP_SCALE 1024u
/* Default threshold: the top of uclamp's lowest bucket. With the default
 * CONFIG_UCLAMP_BUCKETS_COUNT=5 a bucket spans DIV_ROUND_CLOSEST(1024, 5) =
 * 205, so bucket 0 holds 0..204; TurboSched (v2/v3) treated a util_max in
 * bucket 0 as jitter. */
#define UCLAMP_THRESHOLD_DEFAULT 204u

/* /proc/sys/kernel/sched_util_clamp_max exists only with CONFIG_UCLAMP_TASK;
 * without it util_max reads 0 for every task. */
bool uclamp_supported(const char *proc_root);
/* Raw sched_getattr; -ESRCH if the task is gone. */
int uclamp_get_util_max(pid_t tid, unsigned *util_max);

/* Injectable for tests. */
typedef int (*uclamp_get_fn)(pid_t tid, unsigned *util_max, void *userdata);
