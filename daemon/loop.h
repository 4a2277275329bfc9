/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The daemon's event loop (sd-event), with process events handled at a
 * realtime priority and everything else at normal priority. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

/* After this long of event dispatches in a row, one dispatch goes to the
 * other sources: a storm that keeps the proc connector readable does not
 * hold back the tick, control requests or signals for longer. */
#define LOOP_EVENTS_FAIR_MS 10

#define LOOP_EVENT_SOURCES_MAX 4

/* The tick runs at the events' priority while they keep coming: one
 * dispatched within this long. */
#define LOOP_EVENTS_RECENT_MS 10

/* The time the daemon may spend at realtime priority: a budget that fills
 * at share_pct of the time passing, up to burst_ns, and empties by what the
 * realtime dispatches take. Empty, the events are handled at normal
 * priority until it fills again: a flood of events that any local user can
 * cause (a thread renaming itself in a loop) gets no more than that share
 * of a CPU from the daemon ahead of every other task. An exec storm at this
 * machine's full rate costs it under 10% (docs/benchmarks.md). */
#define LOOP_RT_SHARE_PCT 25
#define LOOP_RT_BURST_MS 50
struct loop_budget {
    unsigned share_pct;
    uint64_t burst_ns;
    int64_t left_ns;
    uint64_t at_ns;             /* of the last refill; 0: never (full) */
};
/* Pure: fill the budget for the time since the last call; whether it has
 * some left. */
bool loop_budget_refill(struct loop_budget *b, uint64_t now_ns);
/* Pure: take what a realtime dispatch took. */
void loop_budget_spend(struct loop_budget *b, uint64_t spent_ns);

struct loop {
    sd_event *event;
    /* the proc connector's sources (the exec doorbell, the main socket) and
     * the timers that finish their work (the main socket heard again, the
     * state file written): the ones handled at realtime priority */
    sd_event_source *events[LOOP_EVENT_SOURCES_MAX];
    unsigned n_events;
    /* the tick: at realtime priority too while events keep coming, since
     * they wait behind it (loop_follow) */
    sd_event_source *follower;
    const bool *follower_held;  /* while true it has work for normal priority (a walk of /proc): not followed */
    unsigned priority;          /* SCHED_FIFO priority; 0: everything at normal priority */
    bool at_rt;                 /* the thread's policy now */
    bool rt_failed;             /* SCHED_FIFO was refused: said once, then not asked again */
    /* start of the event dispatches in a row while another source was left
     * pending; 0 when the last dispatch was another's or nothing was left */
    uint64_t events_since_ns;
    uint64_t last_events_ns;    /* end of the last event dispatch */
    /* dispatches by the priority they ran at (status, metrics); the
     * follower's at realtime priority among them */
    uint64_t dispatched_rt, dispatched_normal, dispatched_followed;
    struct loop_budget budget;
    uint64_t dispatched_over_budget;    /* events handled at normal priority for want of budget */
};

/* Whether events are handled at realtime priority: configured, and not
 * refused. */
static inline bool loop_realtime(const struct loop *l) { return l->priority > 0 && !l->rt_failed; }

/* events: the proc connector's sources (n of them, NULLs left out), already
 * in event; when several are pending, the first in this order goes first. */
void loop_init(struct loop *l, sd_event *event, sd_event_source *const *events, unsigned n, unsigned priority);
/* s (the tick, in event already) runs at realtime priority while events
 * keep coming (loop_follows_events) and *held (NULL: never) is false, and
 * goes before the other sources.
 * At normal priority on a CPU crowded with the tasks the daemon packed
 * there, a tick took 100 ms and more, with the events waiting behind it. */
void loop_follow(struct loop *l, sd_event_source *s, const bool *held);
/* A reload may change the priority; 0 turns realtime handling off. */
void loop_set_priority(struct loop *l, unsigned priority);
/* sd_event_loop(), with the policy switched around each dispatch. Returns
 * the exit code given to sd_event_exit(), or a negative errno. Leaves the
 * thread at normal priority. */
int loop_run(struct loop *l);
/* Whether a dispatch of a proc connector source runs at realtime
 * priority: one is pending, it is first in line and the other sources have
 * not waited too long (LOOP_EVENTS_FAIR_MS). Pure; for the loop and tests. */
bool loop_events_first(bool events_pending, uint64_t events_since_ns, uint64_t now_ns);
/* Whether the follower runs at realtime priority: an event dispatch ended
 * less than LOOP_EVENTS_RECENT_MS ago (last_events_ns 0: none yet). Pure. */
bool loop_follows_events(uint64_t last_events_ns, uint64_t now_ns);

/* The main proc connector socket, left unheard while the exec-only socket
 * rings (each ring reads it): a mute starts at LOOP_MUTE_MIN_MS and, while
 * the exec socket rang during the last one, doubles up to LOOP_MUTE_MAX_MS.
 * The next mute after one of last_ms (0 if none), or 0 when the socket is
 * to be heard again (no ring during it). Pure. */
#define LOOP_MUTE_MIN_MS 5
#define LOOP_MUTE_MAX_MS 80
unsigned loop_mute_next_ms(unsigned last_ms, bool rang);
