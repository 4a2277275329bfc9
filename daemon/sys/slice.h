/* SPDX-License-Identifier: GPL-2.0-or-later */
/* EEVDF custom slices for packed jitter: a thread with a shorter slice than
 * the task running on its CPU preempts it when it wakes (Linux 6.12 and
 * later, sched_setattr(2) with sched_runtime on a SCHED_OTHER or SCHED_BATCH
 * task). Detects support, shortens a thread's slice while recording its own
 * attributes, and puts them back. All system access goes through sysops. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy-params.h"
#include "sysops.h"

/* SLICE_DEFAULT_NS, SLICE_MIN_NS, SLICE_MAX_NS: policy-params.h, with the
 * parameter they bound. */

struct slice_support {
    bool supported;
    /* The kernel's default slice as sched_getattr reports it for a task
     * without a custom one (1.4 ms on a 2-CPU machine); 0 when unsupported. */
    uint64_t default_slice_ns;
    /* Why not, for the one log line: "sched_setattr: Function not
     * implemented", "kernel ignores sched_runtime for SCHED_OTHER (before 6.12)". */
    char reason[96];
};

/* Set a custom slice on the calling thread, read it back, and put the
 * thread's own attributes back. Fills *ret either way; returns 0, or -errno
 * when the calling thread's attributes could not be put back (then
 * ret->supported is false too). Unsupported is not an error: the caller logs
 * ret->reason once and carries on without slices. */
int slice_detect(const struct sysops *ops, struct slice_support *ret);

/* What slice_apply found on a thread and what it set. The state file carries
 * it (slice_saved_to_string) so a restarted daemon can restore it. */
struct slice_saved {
    bool applied;                  /* false: nothing of ours to undo */
    struct sysops_sched_attr orig; /* policy, nice, flags, runtime as found */
    bool orig_default;             /* orig.runtime_ns was the kernel default, not a custom slice */
    uint64_t set_runtime_ns;       /* the slice as read back after we set it */
};

/* Results besides 0 (applied / restored) and -errno. */
enum {
    SLICE_SKIP_POLICY = 1,  /* real-time, deadline or SCHED_IDLE: never touched */
    SLICE_SKIP_SHORTER = 2, /* its slice is already this short or shorter */
    SLICE_SKIP_CHANGED = 3, /* restore: someone changed it after us, left alone */
};

/* Give thread tid a slice of slice_ns, keeping its policy, nice and flags.
 * Fills *saved (saved->applied false unless it returns 0). -ESRCH: gone. */
int slice_apply(const struct sysops *ops, const struct slice_support *sup, pid_t tid, uint64_t slice_ns,
                struct slice_saved *saved);

/* Put back what slice_apply found, if the thread still has exactly what we
 * set (policy, nice, flags, slice); otherwise leave it alone
 * (SLICE_SKIP_CHANGED). A default slice is restored as the default (runtime
 * 0), so it follows the kernel's base slice again. Returns 0 also when
 * saved->applied is false. -ESRCH: gone. */
int slice_restore(const struct sysops *ops, pid_t tid, const struct slice_saved *saved);

/* Compact one-token form for the state file:
 * "p=0,n=-5,f=0x0,r=1400000,d=1,s=100000" (policy, nice, flags, runtime ns,
 * runtime was the default, slice we set). Returns the length, -ENOSPC when
 * buf is too small. Only for saved->applied; -EINVAL otherwise. */
int slice_saved_to_string(const struct slice_saved *saved, char *buf, size_t size);
/* The reverse; -EINVAL on anything malformed. */
int slice_saved_from_string(const char *text, struct slice_saved *ret);
