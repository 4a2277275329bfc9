/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Housekeeping or request path? A thread that is light and wakes often is
 * jitter by behaviour only with evidence that nobody waits on its wake-ups:
 * its process serves no one (no listening socket, no stream connected to a
 * local peer, no datagram server port) and, when read, it sleeps on its own
 * timer or with a deadline, not in an untimed wait on file descriptors or a
 * futex (where only another task or a device wakes it). A database backend,
 * a web worker, a key-value store or their local clients are light and wake
 * often too, and each of their wake-ups is a request someone waits on.
 *
 * And once packed: each process's own run-queue wait per wake-up, on its tail
 * (the decayed maximum of its per-sample means), against the same tail
 * measured before it was packed; worse by the margin, and the process is
 * released and kept out for a cool-down (struct reqpath_tail).
 *
 * Pure: plain structs and lines in, verdicts out; procsock.c reads /proc. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- where a thread sleeps: /proc/TID/syscall ---- */

enum reqpath_sleep {
    REQPATH_SLEEP_UNKNOWN = 0, /* running, unreadable, or a call we do not judge */
    REQPATH_SLEEP_TIMER,       /* nanosleep, clock_nanosleep: its own timer wakes it */
    REQPATH_SLEEP_DEADLINE,    /* poll/epoll/select/futex with a timeout: a deadline of its own */
    REQPATH_SLEEP_READ,        /* a blocking read or receive on one descriptor */
    REQPATH_SLEEP_CHILD,       /* wait4/waitid: a shell or supervisor waiting for a child */
    REQPATH_SLEEP_SIGNAL,      /* pause, sigsuspend, sigtimedwait: a timer signal, often */
    REQPATH_SLEEP_UNTIMED,     /* poll/epoll/select/futex without timeout, accept: woken by others only */
};

struct reqpath_syscall {
    bool running; /* the file said "running": no sleep to judge */
    long nr;      /* this architecture's system call number */
    unsigned long args[6];
};

/* Parse the contents of /proc/TID/syscall ("running", or "NR A1..A6 SP PC").
 * 0 or -EINVAL. */
int reqpath_parse_syscall(const char *text, struct reqpath_syscall *ret);
/* The kind of sleep, and the call's name for explain ("epoll_wait"). */
enum reqpath_sleep reqpath_sleep_of(const struct reqpath_syscall *s, const char **name);
/* Only an untimed wait is evidence against housekeeping. */
static inline bool reqpath_sleep_is_request(enum reqpath_sleep k) { return k == REQPATH_SLEEP_UNTIMED; }
const char *reqpath_sleep_to_string(enum reqpath_sleep k);

/* ---- sockets: /proc/PID/net/{unix,tcp,tcp6,udp,udp6} ---- */

enum reqpath_sock_kind { REQPATH_SOCK_UNIX = 1, REQPATH_SOCK_TCP, REQPATH_SOCK_UDP };

struct reqpath_sock {
    uint64_t ino;
    uint8_t kind;    /* enum reqpath_sock_kind */
    uint8_t state;   /* the table's st column (TCP states; unix: 1 unconnected, 3 connected) */
    bool listening;  /* unix __SO_ACCEPTCON, TCP LISTEN */
    bool stream;     /* unix SOCK_STREAM or SOCK_SEQPACKET; TCP */
    bool peer_local; /* TCP/UDP: the remote address is loopback or the local one */
    uint16_t lport;  /* TCP/UDP local port */
};

/* One line of /proc/net/unix; 0, or -EINVAL for the header or a bad line. */
int reqpath_parse_unix(const char *line, struct reqpath_sock *ret);
/* One line of /proc/net/{tcp,udp}{,6}: kind REQPATH_SOCK_TCP or _UDP, v6
 * for the *6 tables; 0 or -EINVAL. */
int reqpath_parse_inet(const char *line, enum reqpath_sock_kind kind, bool v6, struct reqpath_sock *ret);

/* Does this socket, held at descriptor fd, put its process on a request
 * path? ephemeral_low is the lowest port of ip_local_port_range: a TCP
 * connection whose local port lies below it was accepted on a server port,
 * and an unconnected UDP socket bound below it is a server's. A connected
 * unix stream on descriptors 0-2 is stdio (the journal's stream, under
 * systemd), not a peer the process answers. If it does, writes why
 * ("listens on tcp port 5432") into why. */
bool reqpath_sock_serves(const struct reqpath_sock *s, int fd, unsigned ephemeral_low, char *why, size_t size);

/* ---- the tail guard, per process ---- */

/* Released when the packed tail exceeds the unpacked one by half, plus the
 * largest of its own run per wake-up, a share of its period (below) and the
 * slack: the run-delay budget
 * (max_run_delay) where there is one, else this. Packed beside a busy task,
 * housekeeping waits a few hundred µs more by design (a python timer loop:
 * 167 µs packed against 20 µs unpacked): that alone is no harm. */
#define REQPATH_GUARD_SLACK_US 100.0
/* ... or, larger still, this share of its own time between wake-ups, up to
 * the cap: a packed thread whose wake-up does not preempt the busy task waits
 * for the next scheduler tick (4 ms at HZ=250), and a timer loop that wakes
 * every 50 ms and starts 2 ms late keeps its cadence (a status-bar loop that
 * forks a sleep every 100 ms waited 1.7 ms per wake-up packed, 0.1 ms not). */
#define REQPATH_GUARD_PERIOD_SHARE 0.05
#define REQPATH_GUARD_PERIOD_CAP_US 4000.0
#define REQPATH_GUARD_FACTOR 1.5
/* schedstat gives sums, not each wake-up's wait: the finest tail it shows
 * is the mean of a short window. Samples are gathered into windows of at
 * least this many wake-ups, so that the one wake-up of a timer loop that
 * woke just after a busy task's slice was renewed (it then waits for the
 * next tick, up to 4 ms at HZ=250) does not make the tail alone. */
#define REQPATH_GUARD_MIN_WAKEUPS 16u
/* A process is judged packed only after this many windows of it packed. */
#define REQPATH_GUARD_MIN_SAMPLES 4u
/* How long a released process is kept out. */
#define REQPATH_GUARD_COOLDOWN_MS 600000u

struct reqpath_tail {
    float unpacked_us;    /* decayed maximum of per-sample mean wait per wake-up, unpacked */
    float packed_us;      /* ... packed */
    float run_us;         /* mean run per wake-up (decayed), for the margin */
    float period_us;      /* mean time between a thread's wake-ups (decayed), for the margin */
    float slack_us;       /* the slack given with the last sample */
    uint32_t unpacked_ms; /* time of the last sample of each kind (monotonic ms, wraps) */
    uint32_t packed_ms;
    uint16_t unpacked_samples; /* windows, as the two below */
    uint16_t packed_samples;   /* since it was last packed */
    uint32_t acc_wakeups;      /* the window being gathered: all packed or all not */
    uint64_t acc_wait_ns;
    uint64_t acc_run_ns;
    uint64_t acc_dt_ms; /* its threads' sampled time, summed */
    bool acc_packed;
    uint32_t cooldown_until_ms; /* kept out until then (valid with cooling) */
    bool cooling;
};

/* One sample of one of its threads: wait and run over wakeups wake-ups in
 * dt_ms, while packed or not, added to the window being gathered (a sample of the
 * other kind starts a new one); a window of REQPATH_GUARD_MIN_WAKEUPS
 * wake-ups is one point of the tail. window_ms is the decay's time
 * constant. Returns true when this sample released the process (it is then
 * cooling). */
bool reqpath_tail_sample(struct reqpath_tail *t, bool packed, uint64_t wait_ns, uint64_t run_ns, uint64_t wakeups,
                         uint32_t dt_ms, uint32_t now_ms, uint32_t window_ms, double slack_us);
/* Kept out now? (clears an expired cool-down) */
bool reqpath_tail_cooling(struct reqpath_tail *t, uint32_t now_ms);
/* How long it is kept out still, in ms; 0 when it is not. */
uint32_t reqpath_tail_left_ms(const struct reqpath_tail *t, uint32_t now_ms);
/* The margin the packed tail may not exceed, in µs. */
double reqpath_tail_limit_us(const struct reqpath_tail *t);
