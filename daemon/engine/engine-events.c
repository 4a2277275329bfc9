/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Process events as they come, and the walk of /proc when some were lost. */
#include <string.h>

#include "apply.h"
#include "classifier.h"
#include "engine-events.h"

#include "engine-internal.h"
#include "log.h"
#include "procmon.h"
#include "procscan.h"
#include "seat.h"
#include "util.h"

static void table_full(struct engine *e)
{
    e->counters.table_full++;
    if (e->table_full_logged)
        return;
    log_warning("task table full (max_tasks = %u): new threads are not tracked until some exit",
                task_table_max(e->tasks));
    e->table_full_logged = true;
}

int engine_rescan(struct engine *e)
{
    struct procscan_stats st;
    classifier_batch_begin(e->classifier);
    int r = procscan_reconcile(e->params.root, e->tasks, engine_hooks(e), &st);
    classifier_batch_end(e->classifier);
    /* Failed or left threads unread: again at each tick (at start, only for want of fds or memory). */
    bool failed = (r < 0 && r != -ENOSPC) || st.unread;
    bool first = e->counters.rescans++ == 0;
    e->events.rescan_pending = failed;
    /* Another walk soon after the last: the next waits twice as long. A
     * user who keeps the socket overflowing would otherwise have a walk of
     * every thread on the machine each tick, at the daemon's nice value. */
    uint64_t now = now_ms(), since = now - e->events.last_rescan_ms, g = e->events.rescan_gap_ms;
    uint64_t close = MAX(2 * g, 2 * (uint64_t)e->cfg->tick_ms);
    if (e->events.rescan_overflow)
        e->events.rescan_gap_ms = e->events.last_rescan_ms && since <= close
                                      ? MIN(MAX(2 * g, (uint64_t)e->cfg->tick_ms), (uint64_t)ENGINE_RESCAN_GAP_MAX_MS)
                                      : 0;
    e->events.rescan_overflow = false;
    e->events.last_rescan_ms = now;
    e->counters.table_full += st.failed;
    /* Renames put off by the per-user budget: looked at again a few ticks on. */
    e->events.rescan_renames_at = st.renames_deferred ? e->counters.ticks + RESCAN_RENAMES_TICKS : 0;
    if (r == -ENOSPC)
        table_full(e);
    else if (first && r < 0 && !errno_is_transient(r))
        return log_error_errno(r, "walking /proc: %m");
    else if (failed != e->events.rescan_failed)
        log_full(failed ? LOG_WARNING : LOG_INFO, "rescan of /proc: %s%s%s",
                 !failed ? "succeeded again"
                 : r < 0 ? "the walk failed: "
                         : "threads left unread",
                 r < 0 ? strerror(-r) : "", failed ? "; tried again at each tick" : "");
    e->events.rescan_failed = failed;
    return r == -ENOSPC ? 0 : r;
}

void engine_on_event(struct engine *e, const struct procmon_event *ev)
{
    uint64_t t0 = now_ns();
    if (ev->timestamp_ns)
        histogram_add(&e->events.queue_delay, t0 > ev->timestamp_ns ? t0 - ev->timestamp_ns : 0);
    /* a rename flood is shed as it comes, not at the next tick */
    if (ev->kind == PROCMON_COMM && engine_shed_rename(e, t0))
        return;
    e->events.fork_parent_tid = ev->kind == PROCMON_FORK ? ev->fork.parent_tid : 0;
    e->events.event_ns = ev->timestamp_ns;
    /* new threads read at once: a bounded number per user and tick */
    struct procscan_hooks h = *engine_hooks(e);
    h.thread_reads = &e->events.thread_reads;
    procscan_thread_budget_roll(h.thread_reads, t0 / 1000000, e->cfg->tick_ms);
    int r = procscan_handle_event(e->params.root, e->tasks, ev, &h);
    e->events.fork_parent_tid = 0;
    e->events.event_ns = 0;
    /* Only an exec the daemon placed tells where it should sit (seat.c):
     * any exec would let a user's exec loop, pinned with taskset, choose
     * the CPU the daemon runs on at realtime priority. A task its user
     * pinned is left alone and has no record. */
    if (ev->kind == PROCMON_EXEC && applier_find(e->applier, ev->tid))
        seat_note_exec(&e->seat, ev->cpu);
    if ((unsigned)ev->kind < PROCMON_KINDS)
        e->events.handled_ns[ev->kind] += now_ns() - t0;
    if (r == -ENOSPC)
        table_full(e);
    else if (r < 0)
        log_debug_errno(r, "tid %d: %s event: %m", (int)ev->tid, procmon_kind_to_string(ev->kind));
}

static int on_event(const struct procmon_event *ev, void *userdata)
{
    struct engine *e = userdata;
    if (!engine_doorbell_filter(&e->events.doorbell, ev))
        engine_on_event(e, ev);
    return 0;
}

bool engine_rescan_due(const struct engine *e, uint64_t gap_ms)
{
    /* only a walk for lost events backs off: a failed one is retried at
     * each tick, one for renames put off comes when it was set for */
    return !e->events.rescan_overflow || e->events.rescan_failed || now_ms() - e->events.last_rescan_ms >= gap_ms;
}

int engine_events_lost(struct engine *e)
{
    /* Under a sustained storm the socket overflows again and again: a full
     * walk of /proc each time would be the daemon's whole work, so rescan
     * at most once a tick (the tick does the pending one). Events handled
     * at a realtime priority leave it to the tick, at normal priority. */
    if (!e->events.rescan_pending)
        log_ratelimited(&e->events.logs, LOG_INFO, "proc connector overflowed, events lost: rescanning /proc");
    e->events.rescan_overflow = true;
    if (!e->cfg->realtime_priority && engine_rescan_due(e, MAX(e->events.rescan_gap_ms, (uint64_t)e->cfg->tick_ms)))
        return engine_rescan(e);
    e->events.rescan_pending = true;
    return 0;
}

int engine_on_events(struct engine *e)
{
    if (!e->events.procmon)
        return 0;
    uint64_t t0 = now_ns();
    int r = procmon_dispatch(e->events.procmon, on_event, e);
    e->events.wakeups++;
    e->events.wakeups_ns += now_ns() - t0;
    if (r == -ENOBUFS)
        return engine_events_lost(e);
    if (r < 0 && r != -EAGAIN && r != -EINTR)
        return log_warning_errno(r, "reading the proc connector: %m");
    return 0;
}
