/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The daemon's event loop (sd-event), with process events handled at a
 * realtime priority and everything else at normal priority. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <systemd/sd-event.h>
#include <time.h>

/* After this long of event dispatches in a row, one dispatch goes to the
 * other sources: a storm that keeps the proc connector readable does not
 * hold back the tick, control requests or signals for longer. */
#define LOOP_EVENTS_FAIR_MS 10

#define LOOP_EVENT_SOURCES_MAX 4

/* The tick runs at the events' priority while they keep coming: one
 * dispatched within this long. */
#define LOOP_EVENTS_RECENT_MS 10

/* The time the daemon may spend at realtime priority: a budget that fills
 * at share_pct of the time passing, up to burst_ns, and empties by all the
 * CPU time the realtime dispatches spend at realtime priority. Empty, the
 * events are handled at normal priority until it fills again, and no
 * dispatch runs at realtime priority past what was left when it began
 * (LOOP_RT_SLICE_MS): whatever a local user does (a rename flood, an exec
 * storm, tens of thousands of jitter threads and a plan change), the
 * daemon's CPU time at realtime priority in any window of W is at most
 * share x W + burst + one scheduler tick; 304 ms in any second at HZ 250.
 * An exec storm at this machine's full rate costs it under 10%
 * (docs/benchmarks.md). */
#define LOOP_RT_SHARE_PCT 25
#define LOOP_RT_BURST_MS 50
struct loop_budget {
    unsigned share_pct;
    uint64_t burst_ns;
    int64_t left_ns;
    uint64_t at_ns; /* of the last refill; 0: never (full) */
};
/* Pure: fill the budget for the time since the last call; whether it has
 * some left. */
bool loop_budget_refill(struct loop_budget *b, uint64_t now_ns);
/* Pure: take what a realtime dispatch took, all of it: the time it ran at
 * realtime priority. */
void loop_budget_spend(struct loop_budget *b, uint64_t spent_ns);

/* The work one dispatch may do at realtime priority: this much of the
 * thread's CPU time at most, less when the budget has less left. Past it a
 * timer on the thread's CPU clock drops the daemon to normal priority in
 * the middle of the work (the kernel checks such timers at its scheduler
 * tick: up to one tick later). Work whose size a user controls (a plan
 * change that touches every jitter thread, 4,096 events in a batch, the
 * tick's walk of every behaviour-jitter thread) goes on there. */
#define LOOP_RT_SLICE_MS 5
/* Pure: the slice a realtime dispatch starting now gets. */
uint64_t loop_rt_slice_ns(const struct loop_budget *b);

/* The kernel's backstop: RLIMIT_RTTIME (LimitRTTIME= in the unit; the
 * daemon sets these when it finds none) counts CPU time at realtime
 * priority since the thread last slept there, sends SIGXCPU past the soft
 * limit and SIGKILL past the hard one. SIGXCPU, taken through the event
 * loop, means the bounds above failed: events are handled at normal
 * priority for LOOP_XCPU_REST_MS, then the loop sleeps once at realtime
 * priority (which restarts the kernel's count) before using it again. */
#define LOOP_RTTIME_SOFT_US 200000
#define LOOP_RTTIME_HARD_US 2000000
#define LOOP_XCPU_REST_MS 1000

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
    const bool *follower_held; /* while true it has work for normal priority (a walk of /proc): not followed */
    unsigned priority;         /* SCHED_FIFO priority; 0: everything at normal priority */
    bool at_rt;                /* the thread's policy now */
    bool rt_failed;            /* SCHED_FIFO was refused: said once, then not asked again */
    /* start of the event dispatches in a row while another source was left
     * pending; 0 when the last dispatch was another's or nothing was left */
    uint64_t events_since_ns;
    uint64_t last_events_ns; /* end of the last event dispatch */
    /* dispatches by the priority they ran at (status, metrics); the
     * follower's at realtime priority among them */
    uint64_t dispatched_rt, dispatched_normal, dispatched_followed;
    struct loop_budget budget;
    uint64_t dispatched_over_budget; /* events handled at normal priority for want of budget */
    uint64_t dispatched_demoted;     /* realtime dispatches dropped to normal priority past their slice */
    uint64_t rt_cpu_ns;              /* CPU time the realtime dispatches spent at realtime priority */
    bool slice_ok;                   /* the slice timer exists: without it, no realtime priority */
    timer_t slice_timer;
    sd_event_source *xcpu_source;
    struct rlimit rttime;        /* the soft limit to put back after a SIGXCPU raised it */
    uint64_t rest_until_ns;      /* after SIGXCPU: normal priority until then */
    uint64_t xcpu;               /* SIGXCPUs taken */
    uint64_t dispatched_resting; /* events handled at normal priority after a SIGXCPU */
};

/* Whether events are handled at realtime priority: configured, and not
 * refused. */
static inline bool loop_realtime(const struct loop *l) { return l->priority > 0 && !l->rt_failed && l->slice_ok; }

/* events: the proc connector's sources (n of them, NULLs left out), already
 * in event; when several are pending, the first in this order goes first. */
void loop_init(struct loop *l, sd_event *event, sd_event_source *const *events, unsigned n, unsigned priority);
/* What loop_init made (the slice timer, the SIGXCPU source); the counters
 * stay readable. */
void loop_done(struct loop *l);
/* s (the tick, in event already) runs at realtime priority while events
 * keep coming (loop_follows_events) and *held (NULL: never) is false, and
 * goes before the other sources.
 * At normal priority on a CPU crowded with the tasks the daemon packed
 * there, a tick took 100 ms and more, with the events waiting behind it. */
void loop_follow(struct loop *l, sd_event_source *s, const bool *held);
/* A reload may change the priority; 0 turns realtime handling off. */
void loop_set_priority(struct loop *l, unsigned priority);
/* The daemon's own nice value, from the configuration, for everything at
 * normal priority: under a storm of forks it competes for a CPU with the
 * tasks it places. The daemon keeps CAP_SYS_NICE (it sets other users'
 * affinities), so a lower value is allowed; a failure leaves it where it
 * was and says so. */
void loop_set_nice(int nice);
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
 * the exec socket rang during the last one, doubles up to LOOP_MUTE_MAX_MS;
 * after that one it lasts LOOP_MUTE_LONG_MS, which the tick ends early
 * (loop_batch_tick). The next mute after one of last_ms (0 if none), or 0
 * when the socket is to be heard again (no ring during it). Pure. */
#define LOOP_MUTE_MIN_MS 5
#define LOOP_MUTE_MAX_MS 80
#define LOOP_MUTE_LONG_MS 1000
/* A ring this long after the last one ends a long mute (loop_batch_rang):
 * longer than the pauses inside a storm that comes in bursts (16 execs
 * every 200 ms, docs/hacking.md), shorter than a tick of the default. */
#define LOOP_MUTE_QUIET_MS 250
unsigned loop_mute_next_ms(unsigned last_ms, bool rang);

/* A one-shot timer source, armed again to fire usec from now. */
int loop_arm_oneshot(sd_event_source *s, uint64_t usec);

/* The main socket's mutes. With the exec doorbell, the main socket's other
 * events (fork, exit, comm, uid) need no wake-up each: after a wake-up for
 * them that follows another within LOOP_MUTE_MIN_MS, the main socket is
 * left unheard (each doorbell still reads it), and a storm's forks and exits
 * are read with its execs. It stays so while the doorbell keeps ringing,
 * each mute twice as long as the last up to LOOP_MUTE_MAX_MS
 * (loop_mute_next_ms). With mutes of 5 ms alone, an exec storm's forks woke
 * the daemon again after each: 0.19 wake-ups per exec beside the ring's, and
 * 0.09 for the timer. Only the events that come once the execs stop wait for
 * the mute's end.
 * A stream with no exec in it (a user forking children that exit at once,
 * 600 a second here) rang nothing, so each mute ended it and the next two
 * wake-ups began another of 5 ms: three wake-ups at realtime priority
 * every 6 ms, each on the CPU of whatever ran there (another user's 1 ms
 * timer then woke 5 ms late at the 99th percentile, against 2 ms without
 * the daemon). Events found as soon as a mute without a ring ended (within
 * LOOP_MUTE_MIN_MS) begin the next one as if it had rung: the stream's
 * forks and exits wait for up to LOOP_MUTE_MAX_MS, as an exec storm's do,
 * and cost one wake-up per mute. */
struct loop_batch {
    sd_event_source *events;       /* the main socket (not owned) */
    sd_event_source *timer;        /* one-shot: the main socket is heard again (always there once made) */
    bool doorbell;                 /* an exec socket rings: without one, no mute */
    uint64_t (*now_ns)(void);      /* the clock: tests drive time */
    uint64_t woke_ns;              /* the last wake-up for the main socket */
    uint64_t rings, rings_at_mute; /* the exec socket's wake-ups, in all and when the mute began */
    uint64_t rang_ns;              /* the last ring */
    unsigned mute_ms;              /* the main socket is unheard for this long (0: heard) */
    unsigned heard_after_ms;       /* the mute that ended with no ring, until the next wake-up; 0: none */
    uint64_t heard_ns;             /* when it ended */
};
/* Makes the timer (off) in event, so that the loop knows it from the start
 * and it is there to arm. events is the main socket, in event already;
 * now_ns NULL: the monotonic clock. Returns 0 or a negative errno (not
 * logged). */
int loop_batch_init(struct loop_batch *b, sd_event *event, sd_event_source *events, bool doorbell,
                    uint64_t (*now_ns)(void));
void loop_batch_done(struct loop_batch *b);
/* After a wake-up for the main socket: a mute begins when it follows the
 * last within LOOP_MUTE_MIN_MS, and the next longer one when it follows
 * the end of a mute (with no ring) that closely. */
void loop_batch_woke(struct loop_batch *b);
/* The exec socket rang. A ring LOOP_MUTE_QUIET_MS or more after the last
 * one ends a long mute: the storm is over, and the events that follow this
 * exec are heard as they come. */
void loop_batch_rang(struct loop_batch *b);
/* The mute's timer fired (its callback; for tests): another mute after it,
 * or the main socket heard again. */
void loop_batch_due(struct loop_batch *b);
/* At the tick: a long mute (LOOP_MUTE_LONG_MS) ends when the exec socket
 * has not rung for LOOP_MUTE_MAX_MS. A storm of execs longer than the
 * doubling then costs no wake-up of the mute's own until it ends (each of
 * those found a ring and did nothing else: 12 a second at the longest mute
 * of 80 ms), and what comes after it waits at most a tick and
 * LOOP_MUTE_MAX_MS (LOOP_MUTE_LONG_MS without a tick), or until the first
 * exec after a quiet LOOP_MUTE_QUIET_MS when that comes first
 * (loop_batch_rang). */
void loop_batch_tick(struct loop_batch *b);
