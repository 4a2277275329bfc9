/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>

#include "reqpath.h"

/* A /proc/TID/syscall line for this architecture's call nr. */
static enum reqpath_sleep kind_of(long nr, unsigned long a0, unsigned long a1, unsigned long a2, unsigned long a3,
                                  const char **name)
{
    char text[256];
    struct reqpath_syscall s;
    snprintf(text, sizeof text, "%ld 0x%lx 0x%lx 0x%lx 0x%lx 0x0 0x0 0x7ffc900fc0d8 0x7f268d8ed503\n", nr, a0, a1, a2,
             a3);
    assert_int_equal(reqpath_parse_syscall(text, &s), 0);
    return reqpath_sleep_of(&s, name);
}

static void test_sleep_kinds(void **state)
{
    (void)state;
    const char *name;
    /* a timer loop: python's time.sleep, ts-load, sleep(1) */
    assert_int_equal(kind_of(SYS_clock_nanosleep, 1, 1, 0x7ffc, 0, &name), REQPATH_SLEEP_TIMER);
    assert_string_equal(name, "clock_nanosleep");
    /* an epoll server: epoll_wait(fd, events, n, -1) */
    assert_int_equal(kind_of(SYS_epoll_pwait, 5, 0x7ffc, 64, 0xffffffff, &name), REQPATH_SLEEP_UNTIMED);
    assert_string_equal(name, "epoll_pwait");
    /* an event loop with a deadline of its own: epoll_wait(.., 1000) */
    assert_int_equal(kind_of(SYS_epoll_pwait, 5, 0x7ffc, 64, 1000, &name), REQPATH_SLEEP_DEADLINE);
    /* ppoll with and without a timeout pointer */
    assert_int_equal(kind_of(SYS_ppoll, 0x7ffc, 1, 0, 0, &name), REQPATH_SLEEP_UNTIMED);
    assert_int_equal(kind_of(SYS_ppoll, 0x7ffc, 1, 0x7ffd, 0, &name), REQPATH_SLEEP_DEADLINE);
    /* a worker parked on a condition variable: FUTEX_WAIT_BITSET|PRIVATE, no timeout */
    assert_int_equal(kind_of(SYS_futex, 0x7f00, 0x89, 0, 0, &name), REQPATH_SLEEP_UNTIMED);
    assert_int_equal(kind_of(SYS_futex, 0x7f00, 0x89, 0, 0x7ffc, &name), REQPATH_SLEEP_DEADLINE);
    /* a futex wake is no sleep */
    assert_int_equal(kind_of(SYS_futex, 0x7f00, 0x81, 1, 0, &name), REQPATH_SLEEP_UNKNOWN);
    /* ping waits in recvmsg with SO_RCVTIMEO; a socket client in recvfrom */
    assert_int_equal(kind_of(SYS_recvmsg, 3, 0x7ffc, 0, 0, &name), REQPATH_SLEEP_READ);
    assert_int_equal(kind_of(SYS_accept4, 3, 0, 0, 0x80000, &name), REQPATH_SLEEP_UNTIMED);
    assert_int_equal(kind_of(SYS_wait4, -1UL, 0x7ffc, 0, 0, &name), REQPATH_SLEEP_CHILD);
    /* a call we do not judge */
    assert_int_equal(kind_of(SYS_write, 1, 0x7ffc, 1, 0, &name), REQPATH_SLEEP_UNKNOWN);
    assert_true(reqpath_sleep_is_request(REQPATH_SLEEP_UNTIMED));
    assert_false(reqpath_sleep_is_request(REQPATH_SLEEP_TIMER));
    assert_false(reqpath_sleep_is_request(REQPATH_SLEEP_DEADLINE));
}

static void test_parse_syscall(void **state)
{
    (void)state;
    struct reqpath_syscall s;
    const char *name;
    assert_int_equal(reqpath_parse_syscall("running\n", &s), 0);
    assert_true(s.running);
    assert_int_equal(reqpath_sleep_of(&s, &name), REQPATH_SLEEP_UNKNOWN);
    assert_string_equal(name, "running");
    /* blocked outside a system call */
    assert_int_equal(reqpath_parse_syscall("-1 0x7ffc 0x7f00\n", &s), 0);
    assert_int_equal(reqpath_sleep_of(&s, &name), REQPATH_SLEEP_UNKNOWN);
    assert_int_equal(reqpath_parse_syscall("", &s), -EINVAL);
    assert_int_equal(reqpath_parse_syscall("230 0x1 0x1\n", &s), -EINVAL); /* cut short */
    assert_int_equal(reqpath_parse_syscall("garbage", &s), -EINVAL);
}

static void test_parse_sockets(void **state)
{
    (void)state;
    struct reqpath_sock s;
    char why[128];
    assert_int_equal(reqpath_parse_unix("Num       RefCount Protocol Flags    Type St Inode Path\n", &s), -EINVAL);
    /* a listening stream socket */
    assert_int_equal(reqpath_parse_unix("0000000000000000: 00000002 00000000 00010000 0001 01 21011 /run/x.sock\n", &s),
                     0);
    assert_int_equal(s.ino, 21011);
    assert_true(s.listening && s.stream);
    assert_true(reqpath_sock_serves(&s, 5, 32768, why, sizeof why));
    assert_non_null(strstr(why, "listens on a unix socket"));
    /* a connected stream (a socketpair end): serves on fd 4, not as stdio */
    assert_int_equal(reqpath_parse_unix("0000000000000000: 00000003 00000000 00000000 0001 03 21012\n", &s), 0);
    assert_true(reqpath_sock_serves(&s, 4, 32768, why, sizeof why));
    assert_false(reqpath_sock_serves(&s, 1, 32768, why, sizeof why));
    /* a datagram socket (syslog's /dev/log client) */
    assert_int_equal(reqpath_parse_unix("0000000000000000: 00000002 00000000 00000000 0002 01 21013\n", &s), 0);
    assert_false(reqpath_sock_serves(&s, 3, 32768, why, sizeof why));

    /* TCP: 127.0.0.1:5432 listening (the address as the kernel prints its
     * bytes: a native word, so build it from the bytes) */
    unsigned char lo[4] = {127, 0, 0, 1}, remote[4] = {192, 0, 2, 7};
    uint32_t w_lo, w_rem;
    memcpy(&w_lo, lo, 4);
    memcpy(&w_rem, remote, 4);
    char line[256];
    snprintf(line, sizeof line,
             "   0: %08X:1538 00000000:0000 0A 00000000:00000000 00:00000000 00000000   117        0 31001 1 0\n",
             w_lo);
    assert_int_equal(reqpath_parse_inet(line, REQPATH_SOCK_TCP, false, &s), 0);
    assert_int_equal(s.ino, 31001);
    assert_int_equal(s.lport, 5432);
    assert_true(s.listening);
    assert_true(reqpath_sock_serves(&s, 6, 32768, why, sizeof why));
    assert_string_equal(why, "listens on tcp port 5432 (fd 6)");
    /* a client's connection to a local server (ephemeral local port) */
    snprintf(line, sizeof line,
             "   1: %08X:D431 %08X:1538 01 00000000:00000000 00:00000000 00000000     0        0 31002 1 0\n", w_lo,
             w_lo);
    assert_int_equal(reqpath_parse_inet(line, REQPATH_SOCK_TCP, false, &s), 0);
    assert_true(s.peer_local);
    assert_true(reqpath_sock_serves(&s, 7, 32768, why, sizeof why));
    /* an accepted connection from a remote client, on the server port */
    snprintf(line, sizeof line,
             "   2: %08X:1538 %08X:D431 01 00000000:00000000 00:00000000 00000000     0        0 31003 1 0\n", w_lo,
             w_rem);
    assert_int_equal(reqpath_parse_inet(line, REQPATH_SOCK_TCP, false, &s), 0);
    assert_false(s.peer_local);
    assert_true(reqpath_sock_serves(&s, 8, 32768, why, sizeof why));
    /* an outgoing connection to a remote server: not by itself */
    snprintf(line, sizeof line,
             "   3: %08X:D432 %08X:01BB 01 00000000:00000000 00:00000000 00000000     0        0 31004 1 0\n", w_lo,
             w_rem);
    assert_int_equal(reqpath_parse_inet(line, REQPATH_SOCK_TCP, false, &s), 0);
    assert_false(reqpath_sock_serves(&s, 9, 32768, why, sizeof why));
    /* UDP: a DNS server's port, and a client's unconnected ephemeral port */
    snprintf(line, sizeof line,
             "  10: %08X:0035 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 31005 2 0 0\n",
             w_lo);
    assert_int_equal(reqpath_parse_inet(line, REQPATH_SOCK_UDP, false, &s), 0);
    assert_true(reqpath_sock_serves(&s, 3, 32768, why, sizeof why));
    assert_string_equal(why, "receives on udp port 53 (fd 3)");
    snprintf(line, sizeof line,
             "  11: %08X:E001 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 31006 2 0 0\n",
             w_lo);
    assert_int_equal(reqpath_parse_inet(line, REQPATH_SOCK_UDP, false, &s), 0);
    assert_false(reqpath_sock_serves(&s, 3, 32768, why, sizeof why));
    /* IPv6: [::1]:6379 established to [::1] */
    unsigned char v6lo[16] = {0};
    v6lo[15] = 1;
    uint32_t w6[4];
    memcpy(w6, v6lo, 16);
    snprintf(
        line, sizeof line,
        "   0: %08X%08X%08X%08X:18EB %08X%08X%08X%08X:D431 01 00000000:00000000 00:00000000 00000000 0 0 41001 1 0\n",
        w6[0], w6[1], w6[2], w6[3], w6[0], w6[1], w6[2], w6[3]);
    assert_int_equal(reqpath_parse_inet(line, REQPATH_SOCK_TCP, true, &s), 0);
    assert_int_equal(s.lport, 6379);
    assert_true(s.peer_local);
    assert_int_equal(reqpath_parse_inet("  sl  local_address rem_address   st\n", REQPATH_SOCK_TCP, false, &s),
                     -EINVAL);
}

/* The guard: a process packed by behaviour whose tail of waits per wake-up
 * got worse than unpacked by the margin is released and kept out. */
static void test_tail_guard(void **state)
{
    (void)state;
    struct reqpath_tail t = {0};
    uint32_t now = 1000, window = 10000;
    /* unpacked: 20 wake-ups per sample, 30 µs of wait and 40 µs of run each */
    for (int i = 0; i < 5; i++, now += 2000)
        assert_false(
            reqpath_tail_sample(&t, false, 20 * 30000, 20 * 40000, 20, 20, now, window, REQPATH_GUARD_SLACK_US));
    assert_float_equal(t.unpacked_us, 30.0, 1.0);
    /* the limit: 1.5 x 30 + max(40, 100) */
    assert_float_equal(reqpath_tail_limit_us(&t), 145.0, 1.0);
    /* packed, within the margin: never released */
    for (int i = 0; i < 20; i++, now += 250)
        assert_false(reqpath_tail_sample(&t, true, 5 * 120000, 5 * 40000, 5, 5, now, window, REQPATH_GUARD_SLACK_US));
    assert_false(reqpath_tail_cooling(&t, now));
    /* packed behind a busy task: 2 ms per wake-up; released after
     * REQPATH_GUARD_MIN_SAMPLES samples of this packing, not before */
    struct reqpath_tail u = t;
    u.packed_samples = 0;
    u.packed_us = 0;
    bool released = false;
    unsigned n = 0;
    while (!released && n < 100) {
        released = reqpath_tail_sample(&u, true, 5 * 2000000, 5 * 40000, 5, 5, now, window, REQPATH_GUARD_SLACK_US);
        now += 250;
        n++;
    }
    assert_true(released);
    /* 5 wake-ups a sample: a window is gathered every 4 samples */
    assert_int_equal(n, REQPATH_GUARD_MIN_SAMPLES * ((REQPATH_GUARD_MIN_WAKEUPS + 4) / 5));
    assert_true(reqpath_tail_cooling(&u, now));
    /* kept out for the cool-down, whatever it does meanwhile */
    assert_false(reqpath_tail_sample(&u, true, 5 * 2000000, 5 * 40000, 5, 5, now, window, REQPATH_GUARD_SLACK_US));
    assert_true(reqpath_tail_cooling(&u, now + REQPATH_GUARD_COOLDOWN_MS - 1000));
    assert_true(reqpath_tail_left_ms(&u, now) > REQPATH_GUARD_COOLDOWN_MS - 1000);
    assert_int_equal(reqpath_tail_left_ms(&u, now + REQPATH_GUARD_COOLDOWN_MS + 1000), 0);
    assert_false(reqpath_tail_cooling(&u, now + REQPATH_GUARD_COOLDOWN_MS + 1000));
    /* with the run-delay budget as the slack (1 ms), housekeeping packed
     * beside a busy task and waiting 170 µs more stays packed; 2 ms still
     * releases it */
    struct reqpath_tail w = {0};
    uint32_t t0 = 1000;
    for (int i = 0; i < 5; i++, t0 += 2000)
        assert_false(reqpath_tail_sample(&w, false, 20 * 20000, 20 * 40000, 20, 20, t0, window, 1000.0));
    for (int i = 0; i < 20; i++, t0 += 250)
        assert_false(reqpath_tail_sample(&w, true, 5 * 170000, 5 * 40000, 5, 5, t0, window, 1000.0));
    released = false;
    for (n = 0; n < 100 && !released; n++, t0 += 250)
        released = reqpath_tail_sample(&w, true, 5 * 2000000, 5 * 40000, 5, 5, t0, window, 1000.0);
    assert_true(released);
    /* a sample with too few wake-ups says nothing yet */
    struct reqpath_tail v = {0};
    assert_false(reqpath_tail_sample(&v, false, 1000000, 1000, 1, 1, now, window, REQPATH_GUARD_SLACK_US));
    assert_int_equal(v.unpacked_samples, 0);
}

/* The tail is a decayed maximum: one bad sample long ago does not count
 * as today's tail. */
static void test_tail_decays(void **state)
{
    (void)state;
    struct reqpath_tail t = {0};
    assert_false(reqpath_tail_sample(&t, false, 16 * 500000, 16 * 10000, 16, 16, 1000, 10000, REQPATH_GUARD_SLACK_US));
    assert_float_equal(t.unpacked_us, 500.0, 1.0);
    assert_false(
        reqpath_tail_sample(&t, false, 16 * 10000, 16 * 10000, 16, 16, 1000 + 30000, 10000, REQPATH_GUARD_SLACK_US));
    /* 500 e^-3 = 24.9 */
    assert_float_equal(t.unpacked_us, 24.9, 0.5);
}

/* A timer loop packed beside a busy task on a single-thread CPU: most
 * wake-ups preempt it within tens of µs, but one now and then wakes just
 * after the busy task's slice was renewed and waits for the next tick (up to
 * 4 ms at HZ=250). Judged per sample of two wake-ups, that one made the tail
 * and released real housekeeping; judged over windows of 16 wake-ups it does
 * not, while a wait on every wake-up still does. */
static void test_tail_one_tick(void **state)
{
    (void)state;
    uint32_t now = 1000, window = 10000;
    struct reqpath_tail t = {0};
    for (int i = 0; i < 5; i++, now += 1000)
        assert_false(reqpath_tail_sample(&t, false, 16 * 8000, 16 * 30000, 16, 16, now, window, 1000.0));
    struct reqpath_tail hard = t;
    for (int i = 0; i < 400; i++, now += 40) {
        uint64_t wait = (i % 8 == 0) ? 4000000 + 50000 : 2 * 50000;
        assert_false(reqpath_tail_sample(&t, true, wait, 2 * 30000, 2, 2, now, window, 1000.0));
    }
    assert_false(reqpath_tail_cooling(&t, now));
    assert_true(t.packed_us > 250 && t.packed_us < 350);
    /* every wake-up waiting 1.5 ms: released */
    bool released = false;
    for (int i = 0; i < 400 && !released; i++, now += 40)
        released = reqpath_tail_sample(&hard, true, 2 * 1500000, 2 * 30000, 2, 2, now, window, 1000.0);
    assert_true(released);
    /* a window is all packed or all not: a packed sample after unpacked
     * ones starts a new one */
    struct reqpath_tail m = {0};
    assert_false(reqpath_tail_sample(&m, false, 10 * 8000, 10 * 30000, 10, 10, now, window, 1000.0));
    assert_false(reqpath_tail_sample(&m, true, 10 * 900000, 10 * 30000, 10, 10, now, window, 1000.0));
    assert_int_equal(m.unpacked_samples, 0);
    assert_int_equal(m.packed_samples, 0);
    assert_false(reqpath_tail_sample(&m, true, 10 * 900000, 10 * 30000, 10, 10, now, window, 1000.0));
    assert_int_equal(m.packed_samples, 1);
    assert_float_equal(m.packed_us, 900.0, 1.0);
}

/* A loop that wakes every 50 ms may start a few ms late packed beside a busy
 * task (a wake-up that does not preempt it waits for the next tick): 5% of
 * its period, up to 4 ms, is allowed, and a wait past that still releases. */
static void test_tail_cadence(void **state)
{
    (void)state;
    uint32_t now = 1000, window = 10000;
    struct reqpath_tail t = {0};
    /* unpacked: 16 wake-ups in 800 ms, 84 µs of wait and 100 µs of run each */
    for (int i = 0; i < 5; i++, now += 800)
        assert_false(reqpath_tail_sample(&t, false, 16 * 84000, 16 * 100000, 16, 800, now, window, 1000.0));
    struct reqpath_tail fast = t;
    /* limit: 1.5 x 84 + 5% of 50 ms */
    assert_float_equal(reqpath_tail_limit_us(&t), 126 + 2500, 5.0);
    for (int i = 0; i < 40; i++, now += 800)
        assert_false(reqpath_tail_sample(&t, true, 16 * 1700000, 16 * 100000, 16, 800, now, window, 1000.0));
    assert_false(reqpath_tail_cooling(&t, now));
    bool released = false;
    for (int i = 0; i < 40 && !released; i++, now += 800)
        released = reqpath_tail_sample(&t, true, 16 * 3000000, 16 * 100000, 16, 800, now, window, 1000.0);
    assert_true(released);
    /* the same waits at a 5 ms cadence (a service's rate): released */
    released = false;
    for (int i = 0; i < 5; i++, now += 80)
        assert_false(reqpath_tail_sample(&fast, false, 16 * 84000, 16 * 100000, 16, 80, now, window, 1000.0));
    for (int i = 0; i < 40 && !released; i++, now += 80)
        released = reqpath_tail_sample(&fast, true, 16 * 1700000, 16 * 100000, 16, 80, now, window, 1000.0);
    assert_true(released);
    /* a rare waker's allowance stops at the cap */
    struct reqpath_tail slow = {0};
    for (int i = 0; i < 5; i++, now += 16000)
        assert_false(reqpath_tail_sample(&slow, false, 16 * 84000, 16 * 100000, 16, 16000, now, window, 1000.0));
    assert_float_equal(reqpath_tail_limit_us(&slow), 126 + REQPATH_GUARD_PERIOD_CAP_US, 5.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sleep_kinds),  cmocka_unit_test(test_parse_syscall), cmocka_unit_test(test_parse_sockets),
        cmocka_unit_test(test_tail_guard),   cmocka_unit_test(test_tail_decays),   cmocka_unit_test(test_tail_one_tick),
        cmocka_unit_test(test_tail_cadence),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
