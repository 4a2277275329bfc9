/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The jitter slice of packed threads (issue 16): a packed thread shares its
 * CPU with busy work, and a shorter EEVDF slice lets it preempt that work
 * when it wakes. Given with the narrowed mask, taken back with it. See
 * slice.h for the attributes and apply.h for when. */
#include <errno.h>
#include <inttypes.h>

#include "apply-internal.h"
#include "log.h"

void applier_set_jitter_slice(struct applier *a, const struct slice_support *sup, uint64_t slice_ns)
{
    a->slice_support = *sup;
    a->slice_ns = sup->supported ? slice_ns : 0;
}

void apply_slice_pack(struct applier *a, struct applied_task *e)
{
    e->slice = (struct slice_saved){.applied = false};
    if (a->slice_ns == 0)
        return;
    if (a->dry_run) {
        log_info("would give pid %d (%s) a slice of %" PRIu64 " us", (int)e->tid, e->comm, a->slice_ns / 1000);
        return;
    }
    int r = slice_apply(a->ops, &a->slice_support, e->tid, a->slice_ns, &e->slice);
    if (r == 0) {
        log_debug("pid %d (%s): slice %" PRIu64 " us -> %" PRIu64 " us", (int)e->tid, e->comm,
                  e->slice.orig.runtime_ns / 1000, e->slice.set_runtime_ns / 1000);
        mark_task_changed(a, e->tid);
    } else if (r == SLICE_SKIP_POLICY)
        log_debug("pid %d (%s): real-time, deadline or idle policy, its slice is left as it is", (int)e->tid, e->comm);
    else if (r == SLICE_SKIP_SHORTER)
        log_debug("pid %d (%s): its slice is already this short", (int)e->tid, e->comm);
    else if (r < 0 && !errno_is_gone(r))
        /* the mask alone still packs it */
        log_notice_errno(r, "pid %d (%s): setting its slice: %m, packed without it", (int)e->tid, e->comm);
}

bool apply_slice_undo(struct applier *a, pid_t tid, const struct applied_task *t)
{
    if (!t->slice.applied || a->dry_run)
        return false;
    int r = slice_restore(a->ops, tid, &t->slice);
    if (r == SLICE_SKIP_CHANGED)
        log_debug("pid %d (%s): scheduling attributes changed by someone else after us, leaving them alone", (int)tid,
                  t->comm);
    else if (r < 0 && !errno_is_gone(r))
        log_warning_errno(r, "pid %d (%s): restoring its scheduling attributes: %m", (int)tid, t->comm);
    else if (r == 0)
        log_debug("pid %d (%s): slice %" PRIu64 " us -> %s (restored)", (int)tid, t->comm,
                  t->slice.set_runtime_ns / 1000, t->slice.orig_default ? "the default" : "its own");
    return r == 0;
}
