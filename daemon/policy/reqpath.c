/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "reqpath.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h> /* snprintf, sscanf only */
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

int reqpath_parse_syscall(const char *text, struct reqpath_syscall *ret)
{
    *ret = (struct reqpath_syscall){.nr = -1};
    if (strncmp(text, "running", 7) == 0) {
        ret->running = true;
        return 0;
    }
    char *end;
    errno = 0;
    long nr = strtol(text, &end, 10);
    if (end == text || errno)
        return -EINVAL;
    ret->nr = nr;
    /* "-1 SP PC": blocked outside a system call; no arguments follow */
    if (nr < 0)
        return 0;
    const char *p = end;
    for (int i = 0; i < 6; i++) {
        errno = 0;
        unsigned long v = strtoul(p, &end, 16);
        if (end == p || errno)
            return -EINVAL;
        ret->args[i] = v;
        p = end;
    }
    return 0;
}

const char *reqpath_sleep_to_string(enum reqpath_sleep k)
{
    switch (k) {
    case REQPATH_SLEEP_UNKNOWN:
        return "unknown";
    case REQPATH_SLEEP_TIMER:
        return "timer";
    case REQPATH_SLEEP_DEADLINE:
        return "deadline";
    case REQPATH_SLEEP_READ:
        return "read";
    case REQPATH_SLEEP_CHILD:
        return "child";
    case REQPATH_SLEEP_SIGNAL:
        return "signal";
    case REQPATH_SLEEP_UNTIMED:
        return "untimed";
    }
    return "?";
}

/* futex(2) commands that wait; the timeout is the fourth argument. */
#define FUTEX_CMD_MASK_ 0x7fu /* without FUTEX_PRIVATE_FLAG and FUTEX_CLOCK_REALTIME */
static bool futex_waits(unsigned long op)
{
    unsigned cmd = (unsigned)op & FUTEX_CMD_MASK_;
    return cmd == 0 /* WAIT */ || cmd == 9 /* WAIT_BITSET */ || cmd == 6 /* LOCK_PI */ ||
           cmd == 11 /* WAIT_REQUEUE_PI */ || cmd == 13 /* LOCK_PI2 */;
}

/* A timeout in milliseconds as an int argument: negative waits forever. */
static enum reqpath_sleep by_int_timeout(unsigned long arg)
{
    return (int)arg < 0 ? REQPATH_SLEEP_UNTIMED : REQPATH_SLEEP_DEADLINE;
}

/* A timeout given by pointer: NULL waits forever. */
static enum reqpath_sleep by_pointer(unsigned long arg)
{
    return arg == 0 ? REQPATH_SLEEP_UNTIMED : REQPATH_SLEEP_DEADLINE;
}

struct call {
    long nr;
    const char *name;
    enum reqpath_sleep kind; /* UNTIMED here: decided by the argument below */
    int timeout_arg;         /* -1: none */
    bool by_int;             /* the timeout is an int in ms, not a pointer */
};

/* The calls a sleeping thread is found in; the numbers are this
 * architecture's, from <sys/syscall.h>. */
static const struct call calls[] = {
#ifdef SYS_nanosleep
    {SYS_nanosleep, "nanosleep", REQPATH_SLEEP_TIMER, -1, false},
#endif
    {SYS_clock_nanosleep, "clock_nanosleep", REQPATH_SLEEP_TIMER, -1, false},
#ifdef SYS_poll
    {SYS_poll, "poll", REQPATH_SLEEP_UNTIMED, 2, true},
#endif
    {SYS_ppoll, "ppoll", REQPATH_SLEEP_UNTIMED, 2, false},
#ifdef SYS_select
    {SYS_select, "select", REQPATH_SLEEP_UNTIMED, 4, false},
#endif
    {SYS_pselect6, "pselect6", REQPATH_SLEEP_UNTIMED, 4, false},
#ifdef SYS_epoll_wait
    {SYS_epoll_wait, "epoll_wait", REQPATH_SLEEP_UNTIMED, 3, true},
#endif
    {SYS_epoll_pwait, "epoll_pwait", REQPATH_SLEEP_UNTIMED, 3, true},
#ifdef SYS_epoll_pwait2
    {SYS_epoll_pwait2, "epoll_pwait2", REQPATH_SLEEP_UNTIMED, 3, false},
#endif
    {SYS_futex, "futex", REQPATH_SLEEP_UNTIMED, 3, false},
#ifdef SYS_futex_waitv
    {SYS_futex_waitv, "futex_waitv", REQPATH_SLEEP_UNTIMED, 3, false},
#endif
#ifdef SYS_accept
    {SYS_accept, "accept", REQPATH_SLEEP_UNTIMED, -1, false},
#endif
    {SYS_accept4, "accept4", REQPATH_SLEEP_UNTIMED, -1, false},
    {SYS_read, "read", REQPATH_SLEEP_READ, -1, false},
    {SYS_readv, "readv", REQPATH_SLEEP_READ, -1, false},
    {SYS_pread64, "pread64", REQPATH_SLEEP_READ, -1, false},
    {SYS_recvfrom, "recvfrom", REQPATH_SLEEP_READ, -1, false},
    {SYS_recvmsg, "recvmsg", REQPATH_SLEEP_READ, -1, false},
    {SYS_recvmmsg, "recvmmsg", REQPATH_SLEEP_READ, -1, false},
    {SYS_wait4, "wait4", REQPATH_SLEEP_CHILD, -1, false},
    {SYS_waitid, "waitid", REQPATH_SLEEP_CHILD, -1, false},
#ifdef SYS_pause
    {SYS_pause, "pause", REQPATH_SLEEP_SIGNAL, -1, false},
#endif
    {SYS_rt_sigsuspend, "rt_sigsuspend", REQPATH_SLEEP_SIGNAL, -1, false},
    {SYS_rt_sigtimedwait, "rt_sigtimedwait", REQPATH_SLEEP_SIGNAL, -1, false},
};

enum reqpath_sleep reqpath_sleep_of(const struct reqpath_syscall *s, const char **name)
{
    *name = s->running ? "running" : "?";
    if (s->running || s->nr < 0)
        return REQPATH_SLEEP_UNKNOWN;
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        const struct call *c = &calls[i];
        if (c->nr != s->nr)
            continue;
        *name = c->name;
        if (c->kind != REQPATH_SLEEP_UNTIMED || c->timeout_arg < 0)
            return c->kind;
        if (s->nr == SYS_futex && !futex_waits(s->args[1]))
            return REQPATH_SLEEP_UNKNOWN; /* a wake or requeue: not sleeping there */
        unsigned long a = s->args[c->timeout_arg];
        return c->by_int ? by_int_timeout(a) : by_pointer(a);
    }
    return REQPATH_SLEEP_UNKNOWN;
}

/* ------------------------------------------------------------- sockets */

#define UNIX_ACCEPTCON 0x10000u /* __SO_ACCEPTCON in the Flags column */
#define UNIX_SS_CONNECTED 3u
#define SOCK_STREAM_ 1u
#define SOCK_SEQPACKET_ 5u
#define TCP_ESTABLISHED_ 1u
#define TCP_LISTEN_ 10u
#define TCP_CLOSE_ 7u /* an unconnected UDP socket */

int reqpath_parse_unix(const char *line, struct reqpath_sock *ret)
{
    /* "Num: RefCount Protocol Flags Type St Inode [Path]" */
    unsigned long flags, type, st;
    uint64_t ino;
    if (sscanf(line, "%*x: %*x %*x %lx %lx %lx %" SCNu64, &flags, &type, &st, &ino) != 4)
        return -EINVAL;
    *ret = (struct reqpath_sock){
        .ino = ino,
        .kind = REQPATH_SOCK_UNIX,
        .state = (uint8_t)st,
        .listening = (flags & UNIX_ACCEPTCON) != 0,
        .stream = type == SOCK_STREAM_ || type == SOCK_SEQPACKET_,
    };
    return 0;
}

/* "0100007F:1538": the address as the kernel printed its bytes (native
 * 32-bit words), and the port. */
static int parse_addr(const char *s, bool v6, struct in6_addr *addr, unsigned *port)
{
    size_t words = v6 ? 4 : 1;
    uint32_t w[4] = {0};
    for (size_t i = 0; i < words; i++) {
        char buf[9];
        memcpy(buf, s + 8 * i, 8);
        buf[8] = '\0';
        char *end;
        unsigned long v = strtoul(buf, &end, 16);
        if (end != buf + 8)
            return -EINVAL;
        w[i] = (uint32_t)v;
    }
    s += 8 * words;
    if (*s != ':')
        return -EINVAL;
    char *end;
    unsigned long p = strtoul(s + 1, &end, 16);
    if (end == s + 1 || p > 65535)
        return -EINVAL;
    memset(addr, 0, sizeof *addr);
    if (v6) {
        memcpy(addr->s6_addr, w, 16);
    } else {
        /* as ::ffff:a.b.c.d, so that one test serves both */
        addr->s6_addr[10] = addr->s6_addr[11] = 0xff;
        memcpy(addr->s6_addr + 12, w, 4);
    }
    *port = (unsigned)p;
    return 0;
}

static bool addr_loopback(const struct in6_addr *a)
{
    return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
}

int reqpath_parse_inet(const char *line, enum reqpath_sock_kind kind, bool v6, struct reqpath_sock *ret)
{
    /* "sl: local rem st tx:rx tr:when retrnsmt uid timeout inode ..." */
    char local[64], rem[64];
    unsigned long st;
    uint64_t ino;
    if (sscanf(line, "%*d: %63s %63s %lx %*x:%*x %*x:%*x %*x %*u %*u %" SCNu64, local, rem, &st, &ino) != 4)
        return -EINVAL;
    size_t want = v6 ? 32 + 5 : 8 + 5;
    if (strlen(local) != want || strlen(rem) != want)
        return -EINVAL;
    struct in6_addr la, ra;
    unsigned lport, rport;
    if (parse_addr(local, v6, &la, &lport) < 0 || parse_addr(rem, v6, &ra, &rport) < 0)
        return -EINVAL;
    *ret = (struct reqpath_sock){
        .ino = ino,
        .kind = (uint8_t)kind,
        .state = (uint8_t)st,
        .listening = kind == REQPATH_SOCK_TCP && st == TCP_LISTEN_,
        .stream = kind == REQPATH_SOCK_TCP,
        .peer_local = rport != 0 && (addr_loopback(&ra) || memcmp(&ra, &la, sizeof ra) == 0),
        .lport = (uint16_t)lport,
    };
    return 0;
}

bool reqpath_sock_serves(const struct reqpath_sock *s, int fd, unsigned ephemeral_low, char *why, size_t size)
{
    switch (s->kind) {
    case REQPATH_SOCK_UNIX:
        if (s->listening) {
            snprintf(why, size, "listens on a unix socket (fd %d)", fd);
            return true;
        }
        if (s->stream && s->state == UNIX_SS_CONNECTED && fd > 2) {
            snprintf(why, size, "holds a connected unix stream socket (fd %d)", fd);
            return true;
        }
        return false;
    case REQPATH_SOCK_TCP:
        if (s->listening) {
            snprintf(why, size, "listens on tcp port %u (fd %d)", s->lport, fd);
            return true;
        }
        if (s->state != TCP_ESTABLISHED_)
            return false;
        if (s->peer_local) {
            snprintf(why, size, "holds a tcp connection to a local peer (port %u, fd %d)", s->lport, fd);
            return true;
        }
        if (s->lport < ephemeral_low) {
            snprintf(why, size, "serves a tcp connection on port %u (fd %d)", s->lport, fd);
            return true;
        }
        return false;
    case REQPATH_SOCK_UDP:
        if (s->state == TCP_CLOSE_ && s->lport != 0 && s->lport < ephemeral_low) {
            snprintf(why, size, "receives on udp port %u (fd %d)", s->lport, fd);
            return true;
        }
        return false;
    }
    return false;
}

/* ------------------------------------------------------------ the guard */

static float decayed(float v, uint32_t last_ms, uint32_t now_ms, uint32_t window_ms)
{
    int32_t dt = (int32_t)(now_ms - last_ms);
    if (v <= 0 || dt <= 0)
        return v;
    return (float)(v * exp(-(double)dt / window_ms));
}

double reqpath_tail_limit_us(const struct reqpath_tail *t)
{
    double base = t->slack_us > 0 ? t->slack_us : REQPATH_GUARD_SLACK_US;
    double slack = t->run_us > base ? t->run_us : base;
    double cadence = REQPATH_GUARD_PERIOD_SHARE * t->period_us;
    if (cadence > REQPATH_GUARD_PERIOD_CAP_US)
        cadence = REQPATH_GUARD_PERIOD_CAP_US;
    if (cadence > slack)
        slack = cadence;
    return t->unpacked_us * REQPATH_GUARD_FACTOR + slack;
}

uint32_t reqpath_tail_left_ms(const struct reqpath_tail *t, uint32_t now_ms)
{
    int32_t left = (int32_t)(t->cooldown_until_ms - now_ms);
    return t->cooling && left > 0 ? (uint32_t)left : 0;
}

bool reqpath_tail_cooling(struct reqpath_tail *t, uint32_t now_ms)
{
    if (!reqpath_tail_left_ms(t, now_ms))
        t->cooling = false;
    return t->cooling;
}

/* One window's mean folded into a decayed maximum of that kind (packed or
 * not), with its time and count. */
static void fold_max(float *max_us, uint32_t *at_ms, uint16_t *windows, float v_us, uint32_t now_ms, uint32_t window_ms)
{
    float old = decayed(*max_us, *at_ms, now_ms, window_ms);
    *max_us = v_us > old ? v_us : old;
    *at_ms = now_ms;
    if (*windows < UINT16_MAX)
        (*windows)++;
}

static float smoothed(float old, float v) { return old > 0 ? 0.8f * old + 0.2f * v : v; }

bool reqpath_tail_sample(struct reqpath_tail *t, bool packed, uint64_t wait_ns, uint64_t run_ns, uint64_t wakeups,
                         uint32_t dt_ms, uint32_t now_ms, uint32_t window_ms, double slack_us)
{
    t->slack_us = (float)slack_us;
    if (!wakeups || window_ms == 0)
        return false;
    /* a window is all packed or all not */
    if (t->acc_packed != packed || !t->acc_wakeups) {
        t->acc_wakeups = 0;
        t->acc_wait_ns = t->acc_run_ns = t->acc_dt_ms = 0;
    }
    t->acc_packed = packed;
    t->acc_wait_ns += wait_ns;
    t->acc_run_ns += run_ns;
    t->acc_dt_ms += dt_ms;
    t->acc_wakeups = wakeups > UINT32_MAX - t->acc_wakeups ? UINT32_MAX : t->acc_wakeups + (uint32_t)wakeups;
    if (t->acc_wakeups < REQPATH_GUARD_MIN_WAKEUPS)
        return false;
    double n = (double)t->acc_wakeups;
    float wait_us = (float)((double)t->acc_wait_ns / 1e3 / n);
    t->run_us = smoothed(t->run_us, (float)((double)t->acc_run_ns / 1e3 / n));
    t->period_us = smoothed(t->period_us, (float)((double)t->acc_dt_ms * 1e3 / n));
    t->acc_wakeups = 0;
    if (!packed) {
        fold_max(&t->unpacked_us, &t->unpacked_ms, &t->unpacked_samples, wait_us, now_ms, window_ms);
        return false;
    }
    fold_max(&t->packed_us, &t->packed_ms, &t->packed_samples, wait_us, now_ms, window_ms);
    if (reqpath_tail_cooling(t, now_ms) || t->packed_samples < REQPATH_GUARD_MIN_SAMPLES ||
        t->packed_us <= reqpath_tail_limit_us(t))
        return false;
    t->cooling = true;
    t->cooldown_until_ms = now_ms + REQPATH_GUARD_COOLDOWN_MS;
    t->packed_samples = 0;
    return true;
}
