/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The event loop: process events at SCHED_FIFO, every other dispatch at
 * SCHED_OTHER, and no source held back by a stream of events. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <stdint.h>
#include <inttypes.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include "loop.h"
#include "util.h"

static void test_follows_events(void **state)
{
    const uint64_t ms = 1000000;
    assert_false(loop_follows_events(0, 100 * ms)); /* no event yet */
    assert_true(loop_follows_events(100 * ms, 100 * ms));
    assert_true(loop_follows_events(100 * ms, 100 * ms + LOOP_EVENTS_RECENT_MS * ms - 1));
    assert_false(loop_follows_events(100 * ms, 100 * ms + LOOP_EVENTS_RECENT_MS * ms));
}

/* The main socket stays unheard while the exec socket rings, each mute
 * twice the last up to the most; the first mute without a ring ends it. */
static void test_mute_grows_while_rung(void **state)
{
    unsigned ms = loop_mute_next_ms(0, false);
    assert_int_equal(ms, LOOP_MUTE_MIN_MS);
    assert_int_equal(loop_mute_next_ms(0, true), LOOP_MUTE_MIN_MS);
    unsigned mutes = 1, total = ms;
    while (ms < LOOP_MUTE_MAX_MS) {
        unsigned next = loop_mute_next_ms(ms, true);
        assert_true(next > ms && next <= 2 * ms);
        ms = next;
        total += ms;
        mutes++;
    }
    assert_int_equal(ms, LOOP_MUTE_MAX_MS);
    /* then long mutes, which the tick ends (loop_batch_tick) */
    assert_int_equal(loop_mute_next_ms(ms, true), LOOP_MUTE_LONG_MS);
    assert_int_equal(loop_mute_next_ms(LOOP_MUTE_LONG_MS, true), LOOP_MUTE_LONG_MS);
    /* a storm of two seconds rings the timer a few times, not 400 nor 25 */
    ms = LOOP_MUTE_LONG_MS;
    while (total < 2000) {
        total += ms;
        mutes++;
    }
    assert_true(mutes <= 8);
    /* heard again once a mute passes with no ring, at any length */
    assert_int_equal(loop_mute_next_ms(LOOP_MUTE_MIN_MS, false), 0);
    assert_int_equal(loop_mute_next_ms(LOOP_MUTE_MAX_MS, false), 0);
    assert_int_equal(loop_mute_next_ms(LOOP_MUTE_LONG_MS, false), 0);
}

/* The main socket's mutes, on a clock the test turns. */
static uint64_t fake_now;
static uint64_t fake_clock(void) { return fake_now; }
#define MS 1000000ull

struct batch_fixture {
    sd_event *e;
    int fd;
    sd_event_source *events;
    struct loop_batch b;
};

static int no_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) { return 0; }

static void batch_setup(struct batch_fixture *f, bool doorbell)
{
    fake_now = 1000 * MS;
    assert_int_equal(sd_event_new(&f->e), 0);
    f->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    assert_true(f->fd >= 0);
    assert_int_equal(sd_event_add_io(f->e, &f->events, f->fd, EPOLLIN, no_io, NULL), 0);
    assert_int_equal(loop_batch_init(&f->b, f->e, f->events, doorbell, fake_clock), 0);
    int on = -1;
    assert_int_equal(sd_event_source_get_enabled(f->b.timer, &on), 0);
    assert_int_equal(on, SD_EVENT_OFF);
}

static void batch_teardown(struct batch_fixture *f)
{
    loop_batch_done(&f->b);
    assert_null(f->b.timer);
    sd_event_source_unref(f->events);
    close(f->fd);
    sd_event_unref(f->e);
}

static int enabled(sd_event_source *s)
{
    int on = -1;
    assert_true(sd_event_source_get_enabled(s, &on) >= 0);
    return on;
}

/* Muted: the main socket off, the timer armed once, for ms. */
static void assert_muted(struct batch_fixture *f, unsigned ms)
{
    assert_int_equal(f->b.mute_ms, ms);
    assert_int_equal(enabled(f->events), SD_EVENT_OFF);
    assert_int_equal(enabled(f->b.timer), SD_EVENT_ONESHOT);
}

static void assert_heard(struct batch_fixture *f)
{
    assert_int_equal(f->b.mute_ms, 0);
    assert_int_equal(enabled(f->events), SD_EVENT_ON);
}

/* Wake-ups further apart than the least mute, or without an exec socket,
 * leave the main socket heard: each wake-up is one for its events. */
static void test_batch_heard_when_spaced_or_no_doorbell(void **state)
{
    struct batch_fixture f;
    batch_setup(&f, false);
    for (int i = 0; i < 10; i++) {
        loop_batch_woke(&f.b);
        fake_now += 1 * MS;
        assert_heard(&f);
    }
    assert_int_equal(enabled(f.b.timer), SD_EVENT_OFF);
    batch_teardown(&f);

    batch_setup(&f, true);
    for (int i = 0; i < 10; i++) {
        loop_batch_woke(&f.b);
        fake_now += LOOP_MUTE_MIN_MS * MS;
        assert_heard(&f);
    }
    assert_int_equal(enabled(f.b.timer), SD_EVENT_OFF);
    batch_teardown(&f);
}

/* After a while, a wake-up is heard and one 1 ms later begins the least
 * mute, which a due without a ring ends at once. */
static void assert_pair_begins_least_mute(struct batch_fixture *f)
{
    fake_now += 100 * MS;
    loop_batch_woke(&f->b);
    assert_heard(f);
    fake_now += 1 * MS;
    loop_batch_woke(&f->b);
    assert_muted(f, LOOP_MUTE_MIN_MS);
    loop_batch_due(&f->b);
    assert_heard(f);
}

/* Two wake-ups 1 ms apart: the least mute has begun. */
static void batch_setup_muted(struct batch_fixture *f)
{
    batch_setup(f, true);
    loop_batch_woke(&f->b);
    fake_now += 1 * MS;
    loop_batch_woke(&f->b);
    assert_muted(f, LOOP_MUTE_MIN_MS);
}

/* The mute after one of ms that was rung or found events at once: doubling
 * up to LOOP_MUTE_MAX_MS, then the long mute */
static unsigned next_mute(unsigned ms)
{
    return ms >= LOOP_MUTE_MAX_MS ? LOOP_MUTE_LONG_MS : ms * 2 > LOOP_MUTE_MAX_MS ? LOOP_MUTE_MAX_MS : ms * 2;
}

/* The second wake-up within LOOP_MUTE_MIN_MS mutes the main socket; the
 * mute doubles while the exec socket rings, up to LOOP_MUTE_MAX_MS, and the
 * first mute without a ring ends it. */
static void test_batch_mutes_and_grows_while_rung(void **state)
{
    struct batch_fixture f;
    batch_setup(&f, true);
    loop_batch_woke(&f.b);
    assert_heard(&f);
    fake_now += LOOP_MUTE_MIN_MS * MS - 1;
    loop_batch_woke(&f.b);
    assert_muted(&f, LOOP_MUTE_MIN_MS);
    unsigned ms = LOOP_MUTE_MIN_MS;
    for (int i = 0; i < 8; i++) {
        loop_batch_rang(&f.b);
        loop_batch_rang(&f.b);
        loop_batch_due(&f.b);
        ms = next_mute(ms);
        assert_muted(&f, ms);
        assert_int_equal(f.b.rings_at_mute, f.b.rings);
    }
    assert_int_equal(ms, LOOP_MUTE_LONG_MS);
    assert_int_equal(f.b.rings, 16);
    /* a mute that passes without a ring ends it */
    loop_batch_due(&f.b);
    assert_heard(&f);
    /* the next pair of wake-ups starts again from the least mute, and
     * the first mute without a ring ends at once */
    assert_pair_begins_least_mute(&f);
    batch_teardown(&f);
}

/* A stream of forks and exits with no exec (nothing rings): events found
 * as soon as a mute ends begin the next one, twice as long, up to
 * LOOP_MUTE_MAX_MS (never the long mute: nothing rings to read the socket
 * meanwhile), so the stream costs one wake-up per mute, not three every
 * 6 ms. A wake-up later than LOOP_MUTE_MIN_MS after the mute's end
 * is no stream: heard, and the next pair starts from the least mute. */
static void test_batch_grows_with_a_stream_without_execs(void **state)
{
    struct batch_fixture f;
    batch_setup_muted(&f);
    unsigned ms = LOOP_MUTE_MIN_MS;
    for (int i = 0; i < 8; i++) {
        fake_now += ms * MS;
        loop_batch_due(&f.b); /* no ring: heard */
        assert_heard(&f);
        /* the events that came meanwhile, read at once */
        loop_batch_woke(&f.b);
        /* doubling up to LOOP_MUTE_MAX_MS and no further: no ring reads
         * the main socket during a mute here */
        ms = ms * 2 > LOOP_MUTE_MAX_MS ? LOOP_MUTE_MAX_MS : ms * 2;
        assert_muted(&f, ms);
    }
    assert_int_equal(ms, LOOP_MUTE_MAX_MS);
    assert_int_equal(f.b.rings, 0);
    /* the stream stopped: the mute ends and nothing comes for a while */
    fake_now += ms * MS;
    loop_batch_due(&f.b);
    assert_heard(&f);
    fake_now += LOOP_MUTE_MIN_MS * MS;
    loop_batch_woke(&f.b);
    assert_heard(&f);
    /* a mute's end is counted once: its next wake-up, not a later one */
    assert_pair_begins_least_mute(&f);
    fake_now += 10 * MS;
    loop_batch_woke(&f.b);
    assert_heard(&f);
    batch_teardown(&f);

    /* without an exec socket nothing is muted, stream or not */
    batch_setup(&f, false);
    for (int i = 0; i < 10; i++) {
        loop_batch_woke(&f.b);
        fake_now += 1 * MS;
        assert_heard(&f);
    }
    batch_teardown(&f);
}

/* A storm longer than the doubling: the long mute's timer would wake the
 * daemon only once a second; the tick ends the mute once the exec socket
 * has been quiet for LOOP_MUTE_MAX_MS, and not while it rings, nor a mute
 * of the doubling (its own timer ends that). */
/* A storm rings through the doubling, a ring at the end of each mute: the
 * long mute has begun, the last ring just now. */
static void batch_setup_long_mute(struct batch_fixture *f)
{
    batch_setup_muted(f);
    for (int i = 0; i < 16 && f->b.mute_ms < LOOP_MUTE_LONG_MS; i++) {
        fake_now += f->b.mute_ms * MS;
        loop_batch_rang(&f->b);
        loop_batch_due(&f->b);
    }
    assert_muted(f, LOOP_MUTE_LONG_MS);
}

static void test_batch_tick_ends_long_mute(void **state)
{
    struct batch_fixture f;
    batch_setup_muted(&f);
    fake_now += 200 * MS; /* no ring yet: a short mute is the timer's to end */
    loop_batch_tick(&f.b);
    assert_muted(&f, LOOP_MUTE_MIN_MS);
    batch_teardown(&f);

    batch_setup_long_mute(&f);
    /* ticks while it rings leave it muted, the timer armed */
    for (int i = 0; i < 3; i++) {
        fake_now += LOOP_MUTE_MAX_MS / 2 * MS;
        loop_batch_rang(&f.b);
        fake_now += (LOOP_MUTE_MAX_MS / 2 - 1) * MS;
        loop_batch_tick(&f.b);
        assert_muted(&f, LOOP_MUTE_LONG_MS);
    }
    /* quiet for LOOP_MUTE_MAX_MS: heard again, the timer off */
    fake_now += (LOOP_MUTE_MAX_MS / 2 + 1) * MS;
    loop_batch_tick(&f.b);
    assert_heard(&f);
    assert_int_equal(enabled(f.b.timer), SD_EVENT_OFF);
    batch_teardown(&f);
}

/* The long mute lasts while the storm does, not while an exec or two a
 * second ring: its timer ends it when the last ring is LOOP_MUTE_MAX_MS
 * old, even one that rang during it, and a ring LOOP_MUTE_QUIET_MS after
 * the last ends it at once (what follows that exec, its rename say, is
 * heard as it comes, not at the tick). */
static void test_batch_long_mute_ends_with_the_storm(void **state)
{
    struct batch_fixture f;
    batch_setup_long_mute(&f);
    /* rings every 50 ms to its end: another long mute */
    for (unsigned t = 50; t < LOOP_MUTE_LONG_MS; t += 50) {
        fake_now += 50 * MS;
        loop_batch_rang(&f.b);
        assert_muted(&f, LOOP_MUTE_LONG_MS);
    }
    fake_now += 50 * MS;
    loop_batch_due(&f.b);
    assert_muted(&f, LOOP_MUTE_LONG_MS);
    /* one ring early in it, none in its last LOOP_MUTE_MAX_MS: heard */
    fake_now += 10 * MS;
    loop_batch_rang(&f.b);
    fake_now += (LOOP_MUTE_LONG_MS - 10) * MS;
    loop_batch_due(&f.b);
    assert_heard(&f);
    batch_teardown(&f);

    /* a storm in bursts rings on; a ring after a quiet LOOP_MUTE_QUIET_MS:
     * heard, the timer off */
    batch_setup_long_mute(&f);
    fake_now += (LOOP_MUTE_QUIET_MS - 1) * MS;
    loop_batch_rang(&f.b);
    assert_muted(&f, LOOP_MUTE_LONG_MS);
    fake_now += LOOP_MUTE_QUIET_MS * MS;
    loop_batch_rang(&f.b);
    assert_heard(&f);
    assert_int_equal(enabled(f.b.timer), SD_EVENT_OFF);
    /* a short mute is not ended by a ring: the doubling is the timer's */
    fake_now += 100 * MS;
    loop_batch_woke(&f.b);
    fake_now += 1 * MS;
    loop_batch_woke(&f.b);
    assert_muted(&f, LOOP_MUTE_MIN_MS);
    fake_now += 1 * MS;
    loop_batch_rang(&f.b);
    assert_muted(&f, LOOP_MUTE_MIN_MS);
    batch_teardown(&f);
}

/* Rings before a mute begins do not extend it; a clock that went back
 * (now before the last wake-up) is no burst of wake-ups. */
static void test_batch_edges(void **state)
{
    struct batch_fixture f;
    batch_setup(&f, true);
    loop_batch_rang(&f.b);
    loop_batch_rang(&f.b);
    loop_batch_woke(&f.b);
    fake_now += 1 * MS;
    loop_batch_woke(&f.b);
    assert_muted(&f, LOOP_MUTE_MIN_MS);
    loop_batch_due(&f.b);
    assert_heard(&f);
    fake_now -= 3 * MS;
    loop_batch_woke(&f.b);
    assert_heard(&f);
    assert_int_equal(f.b.woke_ns, fake_now);
    batch_teardown(&f);
}

/* Through the loop: the mute's timer fires on its own and the main socket
 * is heard again. */
static void test_batch_timer_in_the_loop(void **state)
{
    struct batch_fixture f;
    batch_setup_muted(&f);
    for (int i = 0; i < 10 && f.b.mute_ms; i++)
        assert_true(sd_event_run(f.e, 100 * 1000) >= 0);
    assert_heard(&f);
    batch_teardown(&f);
}

/* The realtime budget: full at first, emptied by all that is spent (a long
 * dispatch overdraws it in full: the time passed at realtime priority, not
 * a part of it), filled again at the share of the time passing, never
 * beyond the burst. */
static void test_budget(void **state)
{
    const uint64_t ms = 1000000;
    struct loop_budget b = {.share_pct = 25, .burst_ns = 50 * ms};
    assert_true(loop_budget_refill(&b, 1000 * ms));
    assert_int_equal(b.left_ns, 50 * ms);
    loop_budget_spend(&b, 50 * ms);
    assert_false(loop_budget_refill(&b, 1000 * ms));
    assert_true(loop_budget_refill(&b, 1004 * ms)); /* 1 ms back for 4 ms passed */
    assert_int_equal(b.left_ns, 1 * ms);
    loop_budget_spend(&b, 10 * 1000 * ms); /* a dispatch of 10 s */
    assert_int_equal(b.left_ns, 1 * ms - 10000 * ms);
    assert_false(loop_budget_refill(&b, 1600 * ms));  /* 150 ms back: far short */
    assert_false(loop_budget_refill(&b, 40996 * ms)); /* 9,998 ms back: still short */
    assert_true(loop_budget_refill(&b, 41004 * ms));  /* 40 s passed: a quarter pays the 10 s */
    assert_int_equal(b.left_ns, 1 * ms);
    assert_true(loop_budget_refill(&b, 100000 * ms));
    assert_int_equal(b.left_ns, 50 * ms); /* never beyond the burst */
    /* calls closer together than 100 ns lose nothing to rounding */
    loop_budget_spend(&b, 50 * ms);
    assert_int_equal(b.left_ns, 0);
    uint64_t t = b.at_ns;
    for (int i = 1; i <= 80; i++)
        loop_budget_refill(&b, t + 50 * (uint64_t)i);
    assert_int_equal(b.left_ns, 1000); /* a quarter of 4,000 ns */
    /* a flood that keeps it busy for a second gets about its share */
    uint64_t now = 200000 * ms, rt = 0;
    for (uint64_t end = now + 1000 * ms; now < end; now += ms)
        if (loop_budget_refill(&b, now)) {
            loop_budget_spend(&b, ms);
            rt += ms;
        }
    assert_true(rt >= 250 * ms && rt <= 300 * ms + 1 * ms);
}

static void test_events_first(void **state)
{
    const uint64_t ms = 1000000;
    assert_false(loop_events_first(false, 0, 100 * ms));
    assert_true(loop_events_first(true, 0, 100 * ms));
    /* in a row for less than LOOP_EVENTS_FAIR_MS: still first */
    assert_true(loop_events_first(true, 100 * ms, 100 * ms + LOOP_EVENTS_FAIR_MS * ms - 1));
    /* that long: the others' turn */
    assert_false(loop_events_first(true, 100 * ms, 100 * ms + LOOP_EVENTS_FAIR_MS * ms));
}

struct run {
    int efd;
    unsigned spin_ms;      /* CPU time each event dispatch spends, in small steps */
    unsigned spin_once_ms; /* ... only the first one */
    int policy_after_spin; /* the policy once the first spin ended */
    bool drain;            /* read the eventfd in the callback (else it stays readable) */
    bool quiet;            /* the eventfd starts unreadable: no events at all */
    bool timer_follows;    /* the timer is the loop's follower, as the tick is */
    bool follower_held;    /* ... with work for normal priority */
    unsigned rt_burst_ms;  /* the realtime budget's burst; 0: one that never runs out here */
    unsigned events, events_at_other;
    int events_policy, timer_policy;
};

static int policy_now(void) { return sched_getscheduler(0) & ~SCHED_RESET_ON_FORK; }

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    assert_int_equal(clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts), 0);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Work a dispatch does: ms of this thread's CPU time. */
static void spin_cpu_ms(unsigned ms)
{
    uint64_t t0 = thread_cpu_ns();
    while (thread_cpu_ns() - t0 < (uint64_t)ms * 1000000)
        ;
}

static int on_events(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
    struct run *run = userdata;
    uint64_t v;
    /* two sources read the one eventfd: the second finds it drained */
    if (run->drain && read(fd, &v, sizeof v) != (ssize_t)sizeof v)
        return 0;
    run->events++;
    run->events_policy = policy_now();
    if (run->events_policy != SCHED_FIFO)
        run->events_at_other++;
    unsigned spin = run->events == 1 && run->spin_once_ms ? run->spin_once_ms : run->spin_ms;
    if (spin) {
        spin_cpu_ms(spin);
        if (run->events == 1)
            run->policy_after_spin = policy_now();
    }
    return 0;
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
    struct run *run = userdata;
    run->timer_policy = policy_now();
    return sd_event_exit(sd_event_source_get_event(s), 42);
}

/* An eventfd as the proc connector's two sockets (two sources on two fds of
 * it, readable together, as the main socket and the exec-only one are in a
 * storm), readable from the start, and a timer that ends the loop. */
static int run_loop(struct run *run, unsigned priority, uint64_t timer_us, struct loop *l)
{
    sd_event *ev = NULL;
    sd_event_source *events[2] = {NULL, NULL}, *timer = NULL;
    assert_int_equal(sd_event_new(&ev), 0);
    run->efd = eventfd(run->quiet ? 0 : 1, EFD_NONBLOCK | EFD_CLOEXEC);
    assert_true(run->efd >= 0);
    int efd2 = dup(run->efd);
    assert_true(efd2 >= 0);
    assert_int_equal(sd_event_add_io(ev, &events[0], run->efd, EPOLLIN, on_events, run), 0);
    assert_int_equal(sd_event_add_io(ev, &events[1], efd2, EPOLLIN, on_events, run), 0);
    assert_int_equal(sd_event_add_time_relative(ev, &timer, CLOCK_MONOTONIC, timer_us, 1, on_timer, run), 0);
    loop_init(l, ev, events, 2, priority);
    l->budget.burst_ns = (run->rt_burst_ms ? run->rt_burst_ms : 3600000ull) * 1000000ull;
    if (run->timer_follows)
        loop_follow(l, timer, &run->follower_held);
    int r = loop_run(l);
    loop_done(l);
    sd_event_source_unref(timer);
    sd_event_source_unref(events[0]);
    sd_event_source_unref(events[1]);
    sd_event_unref(ev);
    close(run->efd);
    close(efd2);
    return r;
}

static bool may_use_fifo(void)
{
    struct sched_param sp = {.sched_priority = 1};
    if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0)
        return false;
    sp.sched_priority = 0;
    assert_int_equal(sched_setscheduler(0, SCHED_OTHER, &sp), 0);
    return true;
}

static void require_fifo(void)
{
    if (!may_use_fifo()) {
        print_message("skipped: SCHED_FIFO is not allowed here (needs CAP_SYS_NICE or RLIMIT_RTPRIO)\n");
        skip();
    }
}

static void test_events_at_fifo_rest_at_other(void **state)
{
    require_fifo();
    struct run run = {.drain = true, .events_policy = -1, .timer_policy = -1};
    struct loop l;
    assert_int_equal(run_loop(&run, 1, 20000, &l), 42);
    assert_int_equal(run.events, 1);
    assert_int_equal(run.events_policy, SCHED_FIFO);
    assert_int_equal(run.timer_policy, SCHED_OTHER);
    assert_int_equal(policy_now(), SCHED_OTHER);               /* left at normal priority */
    assert_true(l.dispatched_rt >= 1 && l.dispatched_rt <= 2); /* each source once */
    assert_false(l.rt_failed);
}

struct spaced {
    int efd;
    unsigned writes;               /* the writer's */
    unsigned left, calls, at_fifo; /* the loop's */
};

static void *write_spaced(void *arg)
{
    struct spaced *sp = arg;
    for (unsigned i = 0; i < sp->writes; i++) {
        /* apart by more than LOOP_EVENTS_FAIR_MS: each one after a sleep */
        struct timespec ts = {.tv_nsec = (LOOP_EVENTS_FAIR_MS + 5) * 1000000L};
        nanosleep(&ts, NULL);
        uint64_t one = 1;
        assert_int_equal(write(sp->efd, &one, sizeof one), (ssize_t)sizeof one);
    }
    return NULL;
}

static int on_spaced(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
    struct spaced *sp = userdata;
    uint64_t v;
    assert_int_equal(read(fd, &v, sizeof v), (ssize_t)sizeof v);
    sp->calls++;
    if (policy_now() == SCHED_FIFO)
        sp->at_fifo++;
    sp->left -= (unsigned)v;
    return sp->left ? 0 : sd_event_exit(sd_event_source_get_event(s), 7);
}

/* Events apart by more than LOOP_EVENTS_FAIR_MS, with nothing else to do:
 * every one is handled at SCHED_FIFO (the yield is for sources left
 * waiting, not for time passed asleep). */
static void test_spaced_events_all_at_fifo(void **state)
{
    require_fifo();
    sd_event *ev = NULL;
    sd_event_source *events = NULL;
    struct spaced sp = {.writes = 4, .left = 4};
    assert_int_equal(sd_event_new(&ev), 0);
    sp.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    assert_true(sp.efd >= 0);
    assert_int_equal(sd_event_add_io(ev, &events, sp.efd, EPOLLIN, on_spaced, &sp), 0);
    struct loop l;
    loop_init(&l, ev, &events, 1, 1);
    unsigned n = sp.writes;
    pthread_t writer;
    assert_int_equal(pthread_create(&writer, NULL, write_spaced, &sp), 0);
    alarm(60);
    assert_int_equal(loop_run(&l), 7);
    alarm(0);
    assert_int_equal(pthread_join(writer, NULL), 0);
    /* each write woke the loop once, unless two came together; the only
     * dispatch at normal priority is the exit's */
    assert_int_equal(sp.at_fifo, sp.calls);
    assert_true(sp.calls >= 1 && sp.calls <= n);
    assert_int_equal(l.dispatched_rt, sp.calls);
    loop_done(&l);
    sd_event_source_unref(events);
    sd_event_unref(ev);
    close(sp.efd);
}

/* Off: nothing changes the policy. */
static void test_priority_zero(void **state)
{
    struct run run = {.drain = true, .events_policy = -1, .timer_policy = -1};
    struct loop l;
    assert_int_equal(run_loop(&run, 0, 1000, &l), 42);
    assert_int_equal(run.events, 1);
    assert_int_equal(run.events_policy, SCHED_OTHER);
    assert_int_equal(run.timer_policy, SCHED_OTHER);
    assert_int_equal(l.dispatched_rt, 0);
}

/* Events that never stop (an eventfd nobody reads) hold the others back for
 * LOOP_EVENTS_FAIR_MS at a time, not for ever: the timer ends the loop. */
static void test_events_do_not_starve_the_rest(void **state)
{
    unsigned priority = may_use_fifo() ? 1 : 0;
    struct run run = {.drain = false, .events_policy = -1, .timer_policy = -1};
    struct loop l;
    uint64_t t0 = now_ns();
    alarm(60); /* a starved timer would spin here at realtime priority */
    /* due after a few runs of LOOP_EVENTS_FAIR_MS: the yields before it find
     * nothing else pending */
    assert_int_equal(run_loop(&run, priority, 3500 * LOOP_EVENTS_FAIR_MS, &l), 42);
    alarm(0);
    assert_true(run.events > 1);
    assert_int_equal(run.timer_policy, SCHED_OTHER);
    if (priority) {
        assert_true(l.dispatched_rt > 0);
        /* a yield goes to the timer, never to the events at normal priority */
        assert_int_equal(run.events_at_other, 0);
    }
    /* generous: the timer was due after 35 ms */
    assert_true(now_ns() - t0 < 5000000000ull);
}

/* Events that never stop spend the realtime budget: then they are handled
 * at normal priority, and at realtime priority again as it fills. */
static void test_flood_over_budget(void **state)
{
    require_fifo();
    struct run run = {.drain = false, .rt_burst_ms = 2, .events_policy = -1, .timer_policy = -1};
    struct loop l;
    alarm(60);
    assert_int_equal(run_loop(&run, 1, 100000, &l), 42);
    alarm(0);
    assert_true(l.dispatched_rt > 0);
    assert_true(l.dispatched_over_budget > 0);
    assert_true(run.events_at_other > 0);
    assert_true(run.events > run.events_at_other);
    assert_int_equal(policy_now(), SCHED_OTHER);
}

/* One dispatch with far more work than a slice of the budget (a plan
 * change that touches every jitter thread of a user with tens of
 * thousands, 4,096 events in a batch): dropped to normal priority in the
 * middle of its work, and the budget charged with the time it spent at
 * realtime priority, not with a share of it or with the whole. */
static void test_long_dispatch_dropped_mid_work(void **state)
{
    require_fifo();
    struct run run = {
        .drain = true, .spin_once_ms = 150, .events_policy = -1, .timer_policy = -1, .policy_after_spin = -1};
    struct loop l;
    alarm(60);
    assert_int_equal(run_loop(&run, 1, 1000, &l), 42);
    alarm(0);
    assert_int_equal(run.events, 1);
    assert_int_equal(run.events_policy, SCHED_FIFO);      /* started at realtime priority */
    assert_int_equal(run.policy_after_spin, SCHED_OTHER); /* ended at normal priority */
    int64_t charged = (int64_t)l.rt_cpu_ns;
    print_message("charged %.1f ms for a dispatch of 150 ms of CPU\n", charged / 1e6);
    assert_int_equal(l.dispatched_demoted, 1);
    /* the slice and at most two scheduler ticks (HZ 100) past it */
    assert_true(charged >= (int64_t)LOOP_RT_SLICE_MS * 1000000 - 1000000);
    assert_true(charged <= (int64_t)(LOOP_RT_SLICE_MS + 25) * 1000000);
    assert_int_equal(policy_now(), SCHED_OTHER);
}

/* The kernel's backstop (RLIMIT_RTTIME, LimitRTTIME= in the unit): its
 * SIGXCPU says the daemon ran at realtime priority for that long without
 * sleeping. The loop takes it through the event loop and handles events at
 * normal priority from then on, for a while, instead of being killed by
 * it (its default action) or killed at the hard limit. */
static void test_sigxcpu_drops_to_normal(void **state)
{
    require_fifo();
    struct rlimit was, low = {.rlim_cur = 30000, .rlim_max = 20000000}; /* us: 30 ms, 20 s */
    assert_int_equal(getrlimit(RLIMIT_RTTIME, &was), 0);
    if (was.rlim_max != RLIM_INFINITY && was.rlim_max < low.rlim_max)
        low.rlim_max = was.rlim_max;
    assert_int_equal(setrlimit(RLIMIT_RTTIME, &low), 0);
    /* events that never stop and never let the loop sleep, each 1 ms of
     * work, with a budget that never runs out */
    struct run run = {.drain = false, .spin_ms = 1, .events_policy = -1, .timer_policy = -1};
    struct loop l;
    alarm(60);
    int r = run_loop(&run, 1, 400000, &l);
    alarm(0);
    assert_int_equal(setrlimit(RLIMIT_RTTIME, &was), 0);
    assert_int_equal(r, 42);
    print_message("%u events, %u at normal priority, %" PRIu64 " SIGXCPU\n", run.events, run.events_at_other, l.xcpu);
    assert_true(l.xcpu >= 1);
    assert_int_equal(l.dispatched_over_budget, 0);
    assert_true(run.events_at_other > 0);
    assert_int_equal(policy_now(), SCHED_OTHER);
}

/* The tick, as the loop's follower, beside a stream of events that never
 * stops: at SCHED_FIFO (the events would wait behind it), unless held (a
 * walk of /proc waits for it at SCHED_OTHER). */
static void follower_in_a_stream(bool held, int want_policy)
{
    require_fifo();
    struct run run = {
        .drain = false, .timer_follows = true, .follower_held = held, .events_policy = -1, .timer_policy = -1};
    struct loop l;
    alarm(60);
    assert_int_equal(run_loop(&run, 1, 3500 * LOOP_EVENTS_FAIR_MS, &l), 42);
    alarm(0);
    assert_true(run.events > 1);
    assert_int_equal(run.timer_policy, want_policy);
    assert_int_equal(l.dispatched_followed, held ? 0 : 1);
    assert_int_equal(run.events_at_other, 0);
    assert_int_equal(policy_now(), SCHED_OTHER);
}

static void test_follower_at_fifo_while_events_come(void **state) { follower_in_a_stream(false, SCHED_FIFO); }
static void test_follower_held_at_other(void **state) { follower_in_a_stream(true, SCHED_OTHER); }

/* On a quiet loop: at SCHED_OTHER. */
static void test_follower_at_other_when_quiet(void **state)
{
    require_fifo();
    struct run run = {.quiet = true, .timer_follows = true, .events_policy = -1, .timer_policy = -1};
    struct loop l;
    assert_int_equal(run_loop(&run, 1, 1000, &l), 42);
    assert_int_equal(run.events, 0);
    assert_int_equal(run.timer_policy, SCHED_OTHER);
    assert_int_equal(l.dispatched_followed, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_events_first),
        cmocka_unit_test(test_batch_grows_with_a_stream_without_execs),
        cmocka_unit_test(test_budget),
        cmocka_unit_test(test_flood_over_budget),
        cmocka_unit_test(test_long_dispatch_dropped_mid_work),
        cmocka_unit_test(test_sigxcpu_drops_to_normal),
        cmocka_unit_test(test_mute_grows_while_rung),
        cmocka_unit_test(test_batch_heard_when_spaced_or_no_doorbell),
        cmocka_unit_test(test_batch_mutes_and_grows_while_rung),
        cmocka_unit_test(test_batch_edges),
        cmocka_unit_test(test_batch_tick_ends_long_mute),
        cmocka_unit_test(test_batch_long_mute_ends_with_the_storm),
        cmocka_unit_test(test_batch_timer_in_the_loop),
        cmocka_unit_test(test_follows_events),
        cmocka_unit_test(test_follower_at_fifo_while_events_come),
        cmocka_unit_test(test_follower_at_other_when_quiet),
        cmocka_unit_test(test_follower_held_at_other),
        cmocka_unit_test(test_events_at_fifo_rest_at_other),
        cmocka_unit_test(test_spaced_events_all_at_fifo),
        cmocka_unit_test(test_priority_zero),
        cmocka_unit_test(test_events_do_not_starve_the_rest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
