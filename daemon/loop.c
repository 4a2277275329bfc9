/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The event loop. Under a fork storm at normal priority the daemon waits for
 * a CPU behind the very tasks it is to place (EEVDF gives weight, not
 * wake-up preemption: even nice -20 waited; docs/hacking.md). So with a
 * realtime priority configured the loop sleeps at SCHED_FIFO, where a proc
 * connector event wakes it ahead of them, and handles those events there,
 * with the timers that finish their work (main.c: the main socket heard
 * again, the state file written). While they keep coming the tick runs
 * there too: they wait behind it, and at normal priority, on a CPU crowded
 * with the tasks the daemon packed there, it took 100 ms and more. Every
 * other dispatch (the tick on a quiet machine, control requests, reloads,
 * signals, D-Bus) runs at SCHED_OTHER with the configured nice value: no
 * local user gets work done at realtime priority by asking for it, and a
 * walk of /proc after lost events (main.c) waits for a tick there.
 *
 * sd-event dispatches one source per iteration, the pending one of highest
 * priority; the event sources are given the highest, so when one is
 * pending it is the one dispatched, and the loop knows the policy to run it
 * at before it does. SCHED_RESET_ON_FORK keeps the policy from anything the
 * daemon starts. */
#include <errno.h>
#include <sched.h>

#include "log.h"
#include "loop.h"
#include "util.h"

bool loop_events_first(bool events_pending, uint64_t events_since_ns, uint64_t now_ns)
{
    if (!events_pending)
        return false;
    return events_since_ns == 0 || now_ns - events_since_ns < (uint64_t)LOOP_EVENTS_FAIR_MS * 1000000;
}

bool loop_follows_events(uint64_t last_events_ns, uint64_t now_ns)
{
    return last_events_ns && now_ns - last_events_ns < (uint64_t)LOOP_EVENTS_RECENT_MS * 1000000;
}

unsigned loop_mute_next_ms(unsigned last_ms, bool rang)
{
    if (!last_ms)
        return LOOP_MUTE_MIN_MS;
    if (!rang)
        return 0;
    return last_ms >= LOOP_MUTE_MAX_MS / 2 ? LOOP_MUTE_MAX_MS : 2 * last_ms;
}

bool loop_budget_refill(struct loop_budget *b, uint64_t now_ns)
{
    if (!b->at_ns || now_ns < b->at_ns) {
        b->left_ns = (int64_t)b->burst_ns;
        b->at_ns = now_ns;
    } else {
        /* whole hundreds of ns only, the rest credited at the next call */
        uint64_t hundreds = (now_ns - b->at_ns) / 100, add = hundreds * b->share_pct;
        b->left_ns = add >= b->burst_ns || b->left_ns + (int64_t)add > (int64_t)b->burst_ns
                         ? (int64_t)b->burst_ns : b->left_ns + (int64_t)add;
        b->at_ns += hundreds * 100;
    }
    return b->left_ns > 0;
}

void loop_budget_spend(struct loop_budget *b, uint64_t spent_ns)
{
    /* one long dispatch may overdraw it; never by more than one burst */
    uint64_t spent = MIN(spent_ns, 2 * b->burst_ns);
    b->left_ns -= (int64_t)spent;
}

static void set_events_priority(struct loop *l, bool first)
{
    for (unsigned i = 0; i < l->n_events; i++) {
        /* in the order given: the first one pending goes first */
        int r = sd_event_source_set_priority(l->events[i], first ? SD_EVENT_PRIORITY_IMPORTANT + (int64_t)i
                                                                 : SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
            log_warning_errno(r, "setting the proc connector's priority in the event loop: %m");
    }
}

static bool events_pending(const struct loop *l)
{
    for (unsigned i = 0; i < l->n_events; i++)
        if (sd_event_source_get_pending(l->events[i]) > 0)
            return true;
    return false;
}

static void set_policy(struct loop *l, bool rt)
{
    if (rt == l->at_rt)
        return;
    struct sched_param sp = {.sched_priority = rt ? (int)l->priority : 0};
    if (sched_setscheduler(0, (rt ? SCHED_FIFO : SCHED_OTHER) | SCHED_RESET_ON_FORK, &sp) == 0) {
        l->at_rt = rt;
        return;
    }
    if (rt)
        log_notice_errno(errno, "handling process events at normal priority: SCHED_FIFO priority %u refused: %m",
                         l->priority);
    else if (!l->rt_failed)
        log_warning_errno(errno, "returning to SCHED_OTHER for work other than process events: %m");
    /* Not asked again; and the events need not go first any more. */
    l->rt_failed = true;
    set_events_priority(l, false);
}

void loop_init(struct loop *l, sd_event *event, sd_event_source *const *events, unsigned n, unsigned priority)
{
    *l = (struct loop){.event = event,
                       .budget = {.share_pct = LOOP_RT_SHARE_PCT, .burst_ns = LOOP_RT_BURST_MS * 1000000ull}};
    for (unsigned i = 0; i < n; i++)
        if (events[i] && l->n_events < LOOP_EVENT_SOURCES_MAX)
            l->events[l->n_events++] = events[i];
    loop_set_priority(l, priority);
}

void loop_set_priority(struct loop *l, unsigned priority)
{
    if (priority == l->priority)
        return;
    if (priority && !l->priority)
        log_info("handling process events at SCHED_FIFO priority %u, everything else at normal priority", priority);
    else if (!priority)
        log_info("handling process events at normal priority");
    l->priority = priority;
    l->rt_failed = false;
    set_events_priority(l, priority > 0);
    if (!priority)
        set_policy(l, false);
}

void loop_follow(struct loop *l, sd_event_source *s, const bool *held)
{
    l->follower = s;
    l->follower_held = held;
    /* first among the others: when it is pending, it is the one dispatched */
    int r = sd_event_source_set_priority(s, SD_EVENT_PRIORITY_NORMAL - 1);
    if (r < 0)
        log_warning_errno(r, "setting the tick's priority in the event loop: %m");
}

/* Take the event sources out of (false) or back into (true) this dispatch,
 * as they were: the main socket may be left unheard for a while (main.c). */
static void hold_events(struct loop *l, bool back, int *was)
{
    for (unsigned i = 0; i < l->n_events; i++) {
        if (!back && sd_event_source_get_enabled(l->events[i], &was[i]) < 0)
            was[i] = SD_EVENT_ON;
        int r = sd_event_source_set_enabled(l->events[i], back ? was[i] : SD_EVENT_OFF);
        if (r < 0)
            log_warning_errno(r, "%s the proc connector in the event loop: %m", back ? "resuming" : "holding");
    }
}

static int dispatch(struct loop *l)
{
    uint64_t now = now_ns();
    bool budget = loop_budget_refill(&l->budget, now);
    bool pending = loop_realtime(l) && events_pending(l);
    bool first = pending && loop_events_first(pending, l->events_since_ns, now);
    /* the events go first; at realtime priority while the budget lasts */
    bool rt = first && budget;
    l->dispatched_over_budget += first && !budget;
    /* The events' turn is over: this dispatch goes to another pending
     * source, at normal priority, with the events held out of it; with none
     * pending it dispatches nothing, and the events go on at realtime
     * priority with a new run. */
    bool yield = pending && !first;
    /* not the events: the follower, first among the rest, when it is pending */
    bool follow = !first && budget && loop_realtime(l) && l->follower && !(l->follower_held && *l->follower_held) &&
                  sd_event_source_get_pending(l->follower) > 0 &&
                  loop_follows_events(l->last_events_ns, now);
    int was[LOOP_EVENT_SOURCES_MAX];
    if (yield)
        hold_events(l, false, was);
    set_policy(l, rt || follow);
    int r = sd_event_dispatch(l->event);
    if (yield)
        hold_events(l, true, was);
    if (!first)
        l->events_since_ns = 0;
    else if (!l->events_since_ns)
        l->events_since_ns = now;
    if (first)
        l->last_events_ns = now_ns();
    if (rt || follow) {
        loop_budget_spend(&l->budget, now_ns() - now);
        l->dispatched_rt++;
    } else {
        l->dispatched_normal++;
    }
    l->dispatched_followed += follow;
    return r;
}

int loop_run(struct loop *l)
{
    int r = 0;
    while (sd_event_get_state(l->event) != SD_EVENT_FINISHED) {
        /* sleep where an event wakes the daemon ahead of the tasks it
         * places, while the budget lasts */
        set_policy(l, loop_realtime(l) && loop_budget_refill(&l->budget, now_ns()));
        r = sd_event_prepare(l->event);
        if (r == 0) {
            /* Nothing was left pending by the last dispatch: no source
             * waited behind the events, whose run in a row ends here. */
            l->events_since_ns = 0;
            r = sd_event_wait(l->event, UINT64_MAX);
        }
        if (r > 0)
            r = dispatch(l);
        if (r < 0)
            break;
    }
    set_policy(l, false);
    if (r < 0)
        return r;
    int code = 0;
    r = sd_event_get_exit_code(l->event, &code);
    return r < 0 ? r : code;
}
