/* SPDX-License-Identifier: GPL-2.0-or-later */
/* struct sched_attr as sched_getattr(2)/sched_setattr(2) take it. Our own
 * copy: <linux/sched/types.h> clashes with <sched.h>. */
#pragma once
#include <stdint.h>

/* Layout of SCHED_ATTR_SIZE_VER1 (56 bytes, Linux 5.3). */
struct kernel_sched_attr {
    uint32_t size;
    uint32_t sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime;
    uint64_t sched_deadline;
    uint64_t sched_period;
    uint32_t sched_util_min;
    uint32_t sched_util_max;
};
_Static_assert(sizeof(struct kernel_sched_attr) == 56, "sched_attr VER1 is 56 bytes");
