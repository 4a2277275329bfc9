/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The event loop. Under a fork storm at normal priority the daemon waits for
 * a CPU behind the very tasks it is to place (EEVDF gives weight, not
 * wake-up preemption: even nice -20 waited; docs/hacking.md). So with a
 * realtime priority configured the loop sleeps at SCHED_FIFO, where a proc
 * connector event wakes it ahead of them, and handles those events there,
 * with the timers that finish their work (the main socket heard again:
 * loop_batch; the state file written: main.c). While they keep coming the
 * tick runs there too: they wait behind it, and at normal priority, on a
 * CPU crowded with the tasks the daemon packed there, it took 100 ms and
 * more. Every other dispatch (the tick on a quiet machine, control
 * requests, reloads, signals, D-Bus) runs at SCHED_OTHER with the
 * configured nice value: no local user gets work done at realtime priority
 * by asking for it, and a walk of /proc after lost events (main.c) waits
 * for a tick there.
 *
 * sd-event dispatches one source per iteration, the pending one of highest
 * priority; the event sources are given the highest, so when one is
 * pending it is the one dispatched, and the loop knows the policy to run it
 * at before it does. SCHED_RESET_ON_FORK keeps the policy from anything the
 * daemon starts.
 *
 * The time at realtime priority is a bound, not a hope: a budget (a share
 * of the time passing) charged with all the CPU time each realtime dispatch
 * spent there; a slice per dispatch past which a timer on the thread's CPU
 * clock drops it to normal priority mid-work, whatever the work; and the
 * kernel's RLIMIT_RTTIME behind both. In any window of W the daemon's CPU
 * time at realtime priority is at most share x W + the burst + what one
 * slice overruns (a scheduler tick): the budget never starts a dispatch
 * with nothing left, and none runs past what was left. */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

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

/* Twice a mute of ms, up to LOOP_MUTE_MAX_MS. */
static unsigned mute_doubled(unsigned ms) { return ms >= LOOP_MUTE_MAX_MS / 2 ? LOOP_MUTE_MAX_MS : 2 * ms; }

unsigned loop_mute_next_ms(unsigned last_ms, bool rang)
{
    if (!last_ms)
        return LOOP_MUTE_MIN_MS;
    if (!rang)
        return 0;
    if (last_ms >= LOOP_MUTE_MAX_MS)
        return LOOP_MUTE_LONG_MS;
    return mute_doubled(last_ms);
}

int loop_arm_oneshot(sd_event_source *s, uint64_t usec)
{
    int r = sd_event_source_set_time_relative(s, usec);
    return r < 0 ? r : sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

/* Begin a mute of the main socket of ms, or another one after it. */
static int mute_events(struct loop_batch *b, unsigned ms)
{
    b->mute_ms = ms;
    b->rings_at_mute = b->rings;
    return loop_arm_oneshot(b->timer, (uint64_t)ms * 1000);
}

static void hear_events(struct loop_batch *b)
{
    if (b->mute_ms >= LOOP_MUTE_LONG_MS)
        log_debug("the exec storm is over: the main proc connector socket is heard again");
    b->mute_ms = 0;
    int r = sd_event_source_set_enabled(b->events, SD_EVENT_ON);
    if (r >= 0)
        r = sd_event_source_set_enabled(b->timer, SD_EVENT_OFF); /* when the tick ended the mute */
    if (r < 0)
        log_warning_errno(r, "listening to the proc connector again: %m");
}

/* The exec socket rang within the last ms. */
static bool rang_within(const struct loop_batch *b, uint64_t now, unsigned ms)
{
    return b->rings && now - b->rang_ns < ms * 1000000ull;
}

/* A mute ends: heard again, unless the exec socket rang during it (during
 * its last LOOP_MUTE_MAX_MS, for the long mute: a ring or two a second is
 * no storm, and what follows such a ring would wait for the tick). */
void loop_batch_due(struct loop_batch *b)
{
    bool rang = b->rings != b->rings_at_mute;
    if (b->mute_ms >= LOOP_MUTE_LONG_MS)
        rang = rang && rang_within(b, b->now_ns(), LOOP_MUTE_MAX_MS);
    unsigned next = loop_mute_next_ms(b->mute_ms, rang);
    if (!next) {
        b->heard_after_ms = b->mute_ms;
        b->heard_ns = b->now_ns();
    }
    if (next >= LOOP_MUTE_LONG_MS && b->mute_ms < LOOP_MUTE_LONG_MS)
        log_debug("an exec storm: the main proc connector socket is read at each exec until it ends");
    if (!next || mute_events(b, next) < 0)
        hear_events(b);
}

void loop_batch_tick(struct loop_batch *b)
{
    if (b->mute_ms >= LOOP_MUTE_LONG_MS && !rang_within(b, b->now_ns(), LOOP_MUTE_MAX_MS))
        hear_events(b);
}

void loop_batch_rang(struct loop_batch *b)
{
    uint64_t now = b->now_ns();
    bool storm = rang_within(b, now, LOOP_MUTE_QUIET_MS);
    b->rings++;
    b->rang_ns = now;
    /* the first ring after a quiet LOOP_MUTE_QUIET_MS ends a long mute: it
     * reads the main socket now, and what follows it (the new program's
     * rename, its threads) is heard as it comes, not at the tick */
    if (b->mute_ms >= LOOP_MUTE_LONG_MS && !storm)
        hear_events(b);
}

static int on_batch_due(sd_event_source *s, uint64_t usec, void *userdata)
{
    loop_batch_due(userdata);
    return 0;
}

void loop_batch_woke(struct loop_batch *b)
{
    uint64_t now = b->now_ns(), last = b->woke_ns, heard = b->heard_ns;
    unsigned after = b->heard_after_ms, ms;
    b->woke_ns = now;
    b->heard_after_ms = 0;
    if (!b->doorbell)
        return;
    if (after && now >= heard && now - heard < LOOP_MUTE_MIN_MS * 1000000ull) {
        /* events again as soon as heard: a stream with no exec in it. Its
         * mutes stop at LOOP_MUTE_MAX_MS: the long mute is for a storm of
         * execs, whose rings read the main socket meanwhile; nothing would
         * read it here, and a fork storm overflows it in a second */
        ms = mute_doubled(after);
    } else if (now - last < LOOP_MUTE_MIN_MS * 1000000ull)
        ms = loop_mute_next_ms(0, false);
    else
        return;
    int r = sd_event_source_set_enabled(b->events, SD_EVENT_OFF);
    if (r >= 0)
        r = mute_events(b, ms);
    if (r < 0) {
        log_warning_errno(r, "batching the proc connector's events: %m");
        hear_events(b);
    }
}

int loop_batch_init(struct loop_batch *b, sd_event *event, sd_event_source *events, bool doorbell,
                    uint64_t (*now)(void))
{
    *b = (struct loop_batch){.events = events, .doorbell = doorbell, .now_ns = now ? now : now_ns};
    int r =
        sd_event_add_time_relative(event, &b->timer, CLOCK_MONOTONIC, LOOP_MUTE_MIN_MS * 1000, 1000, on_batch_due, b);
    return r < 0 ? r : sd_event_source_set_enabled(b->timer, SD_EVENT_OFF);
}

void loop_batch_done(struct loop_batch *b) { b->timer = sd_event_source_unref(b->timer); }

bool loop_budget_refill(struct loop_budget *b, uint64_t now_ns)
{
    if (!b->at_ns || now_ns < b->at_ns) {
        b->left_ns = (int64_t)b->burst_ns;
        b->at_ns = now_ns;
    } else {
        /* whole hundreds of ns only, the rest credited at the next call */
        uint64_t hundreds = (now_ns - b->at_ns) / 100, add = hundreds * b->share_pct;
        /* up to the burst, from however deep a long dispatch overdrew it */
        uint64_t room = (uint64_t)((int64_t)b->burst_ns - b->left_ns);
        b->left_ns = add >= room ? (int64_t)b->burst_ns : b->left_ns + (int64_t)add;
        b->at_ns += hundreds * 100;
    }
    return b->left_ns > 0;
}

void loop_budget_spend(struct loop_budget *b, uint64_t spent_ns)
{
    /* All of it: a dispatch charged a part ran past the budget for free.
     * It can overdraw only by what its slice overran (loop_rt_slice_ns). */
    b->left_ns -= (int64_t)MIN(spent_ns, (uint64_t)INT64_MAX / 2);
}

uint64_t loop_rt_slice_ns(const struct loop_budget *b)
{
    uint64_t slice = LOOP_RT_SLICE_MS * 1000000ull;
    if (b->left_ns <= 0)
        return 1; /* the least a timer takes: fires at the next scheduler tick */
    return MIN(slice, (uint64_t)b->left_ns);
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The slice timer's signal. Its handler is the one place that acts in a
 * signal handler: the work it interrupts cannot stop to ask (it may be a
 * walk of every thread in a sampler, or 4,096 events), and the point is to
 * stop running ahead of every other task now, not once that work is done.
 * So it makes one system call, dropping the thread to SCHED_OTHER, notes
 * the CPU time (for the budget) and nothing more; the loop does the rest
 * after the dispatch. Both calls are async-signal-safe system calls. */
#define LOOP_SLICE_SIGNAL (SIGRTMIN + 1)
static volatile sig_atomic_t slice_armed, slice_fired;
static struct timespec slice_fired_cpu;

static void on_slice_signal(int sig)
{
    (void)sig;
    if (!slice_armed)
        return; /* a slice of a dispatch that has ended */
    int saved = errno;
    struct sched_param sp = {.sched_priority = 0};
    (void)syscall(SYS_sched_setscheduler, 0, SCHED_OTHER | SCHED_RESET_ON_FORK, &sp);
    (void)clock_gettime(CLOCK_THREAD_CPUTIME_ID, (struct timespec *)&slice_fired_cpu);
    slice_armed = 0;
    slice_fired = 1;
    errno = saved;
}

static int slice_setup(struct loop *l)
{
    struct sigaction sa = {.sa_handler = on_slice_signal, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    if (sigaction(LOOP_SLICE_SIGNAL, &sa, NULL) < 0)
        return -errno;
    struct sigevent sev = {.sigev_notify = SIGEV_THREAD_ID, .sigev_signo = LOOP_SLICE_SIGNAL};
    sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &l->slice_timer) < 0)
        return -errno;
    l->slice_ok = true;
    return 0;
}

static void slice_arm(struct loop *l, uint64_t ns)
{
    struct itimerspec its = {
        .it_value = {.tv_sec = (time_t)(ns / 1000000000ull), .tv_nsec = (long)(ns % 1000000000ull)}};
    slice_fired = 0;
    slice_armed = 1;
    if (timer_settime(l->slice_timer, 0, &its, NULL) < 0) {
        /* not expected (the timer is ours); no bound without it */
        slice_armed = 0;
        log_warning_errno(errno, "arming the realtime slice timer: %m; handling events at normal priority");
        l->rt_failed = true;
    }
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

static int on_xcpu(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
    struct loop *l = userdata;
    l->xcpu++;
    l->rest_until_ns = now_ns() + LOOP_XCPU_REST_MS * 1000000ull;
    set_policy(l, false);
    log_notice("ran %llu ms at realtime priority without sleeping (RLIMIT_RTTIME's soft limit, SIGXCPU): "
               "handling process events at normal priority for %u ms",
               (unsigned long long)l->rttime.rlim_cur / 1000, LOOP_XCPU_REST_MS);
    return 0;
}

/* The kernel's backstop, set where nobody set one (outside the unit), and
 * SIGXCPU taken through the loop instead of killing the daemon. */
static int xcpu_setup(struct loop *l)
{
    if (getrlimit(RLIMIT_RTTIME, &l->rttime) < 0)
        return -errno;
    if (l->rttime.rlim_cur == RLIM_INFINITY) {
        struct rlimit r = {.rlim_cur = LOOP_RTTIME_SOFT_US,
                           .rlim_max = MIN(l->rttime.rlim_max, (rlim_t)LOOP_RTTIME_HARD_US)};
        if (setrlimit(RLIMIT_RTTIME, &r) < 0)
            return -errno;
        l->rttime = r;
    }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGXCPU);
    if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
        return -errno;
    int r = sd_event_add_signal(l->event, &l->xcpu_source, SIGXCPU, on_xcpu, l);
    if (r >= 0)
        r = sd_event_source_set_priority(l->xcpu_source, SD_EVENT_PRIORITY_IMPORTANT - 1);
    return r;
}

/* After a rest: sleep once at realtime priority, so that the kernel counts
 * from zero again, with the soft limit the kernel raised by a second put
 * back. */
static void end_rest(struct loop *l)
{
    l->rest_until_ns = 0;
    set_policy(l, true);
    struct timespec ts = {.tv_nsec = 100000};
    while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
        ;
    if (setrlimit(RLIMIT_RTTIME, &l->rttime) < 0)
        log_debug_errno(errno, "putting back RLIMIT_RTTIME's soft limit: %m");
}

void loop_init(struct loop *l, sd_event *event, sd_event_source *const *events, unsigned n, unsigned priority)
{
    *l = (struct loop){.event = event,
                       .budget = {.share_pct = LOOP_RT_SHARE_PCT, .burst_ns = LOOP_RT_BURST_MS * 1000000ull}};
    for (unsigned i = 0; i < n; i++)
        if (events[i] && l->n_events < LOOP_EVENT_SOURCES_MAX)
            l->events[l->n_events++] = events[i];
    int r = slice_setup(l);
    if (r < 0)
        log_warning_errno(r, "the realtime slice timer: %m; handling process events at normal priority");
    r = xcpu_setup(l);
    if (r < 0)
        log_warning_errno(r, "RLIMIT_RTTIME and SIGXCPU: %m; the kernel's backstop is not in place");
    loop_set_priority(l, priority);
}

void loop_done(struct loop *l)
{
    if (l->slice_ok) {
        slice_armed = 0;
        timer_delete(l->slice_timer);
        l->slice_ok = false;
    }
    l->xcpu_source = sd_event_source_disable_unref(l->xcpu_source);
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
 * as they were: the main socket may be left unheard for a while (loop_batch). */
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
    bool resting = now < l->rest_until_ns;
    bool budget = loop_budget_refill(&l->budget, now) && !resting;
    bool pending = loop_realtime(l) && events_pending(l);
    bool first = pending && loop_events_first(pending, l->events_since_ns, now);
    /* the events go first; at realtime priority while the budget lasts */
    bool rt = first && budget;
    l->dispatched_over_budget += first && !budget && !resting;
    l->dispatched_resting += first && resting;
    /* The events' turn is over: this dispatch goes to another pending
     * source, at normal priority, with the events held out of it; with none
     * pending it dispatches nothing, and the events go on at realtime
     * priority with a new run. */
    bool yield = pending && !first;
    /* not the events: the follower, first among the rest, when it is pending */
    bool follow = !first && budget && loop_realtime(l) && l->follower && !(l->follower_held && *l->follower_held) &&
                  sd_event_source_get_pending(l->follower) > 0 && loop_follows_events(l->last_events_ns, now);
    int was[LOOP_EVENT_SOURCES_MAX];
    if (yield)
        hold_events(l, false, was);
    bool at_rt = rt || follow;
    uint64_t cpu0 = 0;
    if (at_rt) {
        cpu0 = thread_cpu_ns();
        slice_arm(l, loop_rt_slice_ns(&l->budget));
    }
    set_policy(l, at_rt);
    int r = sd_event_dispatch(l->event);
    if (at_rt) {
        slice_armed = 0;
        /* dropped to normal priority mid-work: the time up to then */
        uint64_t cpu1 = slice_fired
                            ? (uint64_t)slice_fired_cpu.tv_sec * 1000000000ull + (uint64_t)slice_fired_cpu.tv_nsec
                            : thread_cpu_ns();
        if (slice_fired) {
            l->at_rt = false;
            l->dispatched_demoted++;
            slice_fired = 0;
        }
        uint64_t spent = cpu1 > cpu0 ? cpu1 - cpu0 : 0;
        loop_budget_spend(&l->budget, spent);
        l->rt_cpu_ns += spent;
    }
    if (yield)
        hold_events(l, true, was);
    if (!first)
        l->events_since_ns = 0;
    else if (!l->events_since_ns)
        l->events_since_ns = now;
    if (first)
        l->last_events_ns = now_ns();
    if (at_rt) {
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
        uint64_t now = now_ns();
        if (l->rest_until_ns && now >= l->rest_until_ns && loop_realtime(l))
            end_rest(l);
        set_policy(l, loop_realtime(l) && now >= l->rest_until_ns && loop_budget_refill(&l->budget, now));
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

void loop_set_nice(int nice)
{
    errno = 0;
    int now = getpriority(PRIO_PROCESS, 0);
    if (errno == 0 && now == nice)
        return;
    if (setpriority(PRIO_PROCESS, 0, nice) < 0)
        log_notice_errno(errno, "keeping nice %d, setting nice %d failed: %m", now, nice);
    else
        log_debug("nice %d", nice);
}
