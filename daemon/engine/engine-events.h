/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Where events come from, lost events and rescans (engine-events.c). */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "engine-adopt.h"
#include "engine-doorbell.h"
#include "engine-shed.h"
#include "histogram.h"
#include "log.h"
#include "procmon.h"
#include "procscan.h"

struct engine;
struct procmon;

/* A rescan that put renames off (procscan's per-user budget) is followed by
 * another this many ticks later: they are found then, not at the next
 * overflow, and a rename flood costs a walk per second, not per tick. */
#define RESCAN_RENAMES_TICKS 4u

#define ENGINE_RESCAN_GAP_MAX_MS 8000
/* Where events come from, and what happens when some are lost. */
struct engine_events {
    struct procmon *procmon; /* NULL with params.events_from_caller */
    struct engine_doorbell doorbell;
    pid_t fork_parent_tid; /* a fork event in flight: whose mask the new task inherited */
    struct engine_adopt adopt;
    struct comm_shed shed;
    struct procscan_thread_budget thread_reads; /* new threads read per user and tick */
    struct log_ratelimit logs;                  /* what a flood of events says: overflows, renames unheard */
    uint64_t rescan_renames_at; /* tick at which renames a rescan put off are looked at again; 0: none */
    bool rescan_pending;        /* events were lost: rescan, at most once a tick */
    bool rescan_failed;         /* the last rescan did not finish: the next tick tries again */
    bool tick_at_rt;            /* this tick runs at realtime priority: the rescan waits for one that does not */
    uint64_t last_rescan_ms;
    /* Walks of /proc close together (the socket overflowing again and
     * again, which any user's fork storm can make it do) wait this long
     * after the last one: twice as long each time, up to
     * ENGINE_RESCAN_GAP_MAX_MS; 0 after a quiet while. */
    uint64_t rescan_gap_ms;
    bool rescan_overflow; /* the pending walk is for lost events (the one kind that backs off) */
    uint64_t event_ns;    /* the kernel's timestamp of the event in flight (monotonic), 0: none */
    /* From an event's kernel timestamp to the return of the call that
     * placed its task: the daemon's own latency, per placement. */
    struct histogram placement_latency;
    /* Where the time goes (a profile that is always on: two reads of the
     * monotonic clock per event, through the vDSO): from each event's
     * timestamp to the start of its handling (queued in the socket or
     * behind other work), the handling itself by kind, and the wake-ups
     * that read the socket with their whole time (reading included). */
    struct histogram queue_delay;
    uint64_t handled_ns[PROCMON_KINDS];
    uint64_t wakeups, wakeups_ns;
};

/* Walk /proc for what lost events hid (procscan_reconcile), with the
 * hooks every change of the table goes through (engine.c). */
int engine_rescan(struct engine *e);
/* Whether gap_ms have passed since the last walk of /proc. */
bool engine_rescan_due(const struct engine *e, uint64_t gap_ms);
