/* SPDX-License-Identifier: GPL-2.0-or-later */
/* bench-client: an open-loop, fixed-rate client for tools/bench/services.sh,
 * for the protocols Debian has no such client for (HTTP/1.1, Redis RESP,
 * memcached text).
 *
 * Request i is due at start + i / RATE (or at Poisson arrivals of that mean
 * rate) whatever happened to request i - 1, and its latency runs from that
 * intended time to the end of its response: a stall of the server, or of
 * this client itself (say, waiting for a CPU), shows in the latency of every
 * request due meanwhile instead of delaying the schedule (no coordinated
 * omission). A due request goes to the connection with the fewest requests
 * outstanding; one that is busy gets it pipelined.
 *
 *   bench-client --proto http|redis|memcached (--unix PATH | --tcp 127.0.0.1:PORT)
 *                [--rate R] [--time S] [--count N] [--connections C]
 *                [--poisson] [--seed N] [--key KEY] [--from S] [--until U] [--grace S]
 *
 * Loopback only: --tcp takes 127.0.0.0/8 or [::1]. Bounded: at most
 * R * S requests (and --count), then --grace seconds for the last answers.
 * Prints key=value lines; latencies in microseconds over the requests due
 * from --from seconds on and before --until (a harness may look at the
 * threads after the window, while the load goes on). Exit 0 when every request was answered without an
 * error, 1 otherwise, 2 on a usage error. Numbers, not a test. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

#define RATE_MAX 100000u
#define TIME_MAX_S 3600u
#define COUNT_MAX 10000000u
#define CONNS_MAX 64u
#define RING 1024u /* requests outstanding on one connection at most */
#define RBUF 65536u

enum proto { PROTO_HTTP, PROTO_REDIS, PROTO_MEMCACHED };

struct conn {
    int fd;
    char rbuf[RBUF];
    size_t rlen;
    uint32_t ring[RING]; /* indices of the requests outstanding, oldest first */
    unsigned head, n;
};

static struct {
    enum proto proto;
    const char *unix_path, *tcp;
    unsigned rate, time_s, count, conns, from_s, until_s, grace_s;
    bool poisson;
    uint64_t seed;
    const char *key;
} opt = {.rate = 100, .time_s = 10, .count = COUNT_MAX, .conns = 4, .grace_s = 5, .seed = 1};

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* nearest rank, as turbo-bench does */
static int64_t pct(const int64_t *v, size_t n, double p)
{
    if (!n)
        return 0;
    size_t i = (size_t)ceil(p / 100.0 * (double)n);
    return v[i ? i - 1 : 0];
}

/* --tcp: "127.x.y.z:PORT" or "[::1]:PORT" and nothing else */
static int tcp_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
    char host[64];
    const char *colon = strrchr(s, ':');
    unsigned port;
    if (!colon || (size_t)(colon - s) >= sizeof host || parse_uint(colon + 1, &port) < 0 || port == 0 || port > 65535)
        return -EINVAL;
    memcpy(host, s, (size_t)(colon - s));
    host[colon - s] = 0;
    memset(ss, 0, sizeof *ss);
    if (strcmp(host, "[::1]") == 0) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
        a->sin6_family = AF_INET6;
        a->sin6_addr = in6addr_loopback;
        a->sin6_port = htons((uint16_t)port);
        *len = sizeof *a;
        return 0;
    }
    struct sockaddr_in *a = (struct sockaddr_in *)ss;
    if (inet_pton(AF_INET, host, &a->sin_addr) != 1 || (ntohl(a->sin_addr.s_addr) >> 24) != 127)
        return -EADDRNOTAVAIL;
    a->sin_family = AF_INET;
    a->sin_port = htons((uint16_t)port);
    *len = sizeof *a;
    return 0;
}

static int connect_one(void)
{
    struct sockaddr_storage ss;
    socklen_t len;
    if (opt.unix_path) {
        struct sockaddr_un *a = (struct sockaddr_un *)&ss;
        memset(a, 0, sizeof *a);
        a->sun_family = AF_UNIX;
        if (strlen(opt.unix_path) >= sizeof a->sun_path)
            return -ENAMETOOLONG;
        strcpy(a->sun_path, opt.unix_path);
        len = sizeof *a;
    } else {
        int r = tcp_addr(opt.tcp, &ss, &len);
        if (r < 0)
            return r;
    }
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (connect(fd, (struct sockaddr *)&ss, len) < 0) {
        int err = errno;
        close(fd);
        return -err;
    }
    if (ss.ss_family != AF_UNIX) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return fd;
}

/* Length of the first complete response in buf; 0: not complete yet;
 * -EBADMSG: not a response. *err set when the server answered an error. */
static ssize_t response_len(const char *buf, size_t len, bool *err)
{
    const char *eol = memmem(buf, len, "\r\n", 2);
    *err = false;
    if (!eol)
        return len > 8192 ? -EBADMSG : 0;
    size_t line = (size_t)(eol - buf) + 2;
    switch (opt.proto) {
    case PROTO_HTTP: {
        const char *end = memmem(buf, len, "\r\n\r\n", 4);
        if (!end)
            return len > 16384 ? -EBADMSG : 0;
        size_t hdr = (size_t)(end - buf) + 4;
        long body = -1;
        if (strncmp(buf, "HTTP/1.", 7) != 0 || line < 13)
            return -EBADMSG;
        *err = buf[9] != '2';
        for (const char *p = eol + 2; p < end;) {
            const char *q = memmem(p, (size_t)(end + 2 - p), "\r\n", 2);
            if (!q)
                break;
            if ((size_t)(q - p) > 15 && strncasecmp(p, "content-length:", 15) == 0)
                body = strtol(p + 15, NULL, 10);
            p = q + 2;
        }
        if (body < 0)
            return -EBADMSG; /* chunked or close-delimited: not from a static file */
        return len >= hdr + (size_t)body ? (ssize_t)(hdr + (size_t)body) : 0;
    }
    case PROTO_REDIS:
        switch (buf[0]) {
        case '-':
            *err = true;
            /* fall through */
        case '+':
        case ':':
            return (ssize_t)line;
        case '$': {
            long n = strtol(buf + 1, NULL, 10);
            if (n < 0)
                return (ssize_t)line;
            size_t need = line + (size_t)n + 2;
            return len >= need ? (ssize_t)need : 0;
        }
        default:
            return -EBADMSG;
        }
    case PROTO_MEMCACHED:
        if (line == 5 && memcmp(buf, "END\r\n", 5) == 0)
            return 5;
        if (strncmp(buf, "VALUE ", 6) == 0) {
            /* VALUE key flags bytes */
            const char *p = eol;
            while (p > buf && p[-1] != ' ')
                p--;
            size_t need = line + strtoul(p, NULL, 10) + 2 + 5;
            return len >= need ? (ssize_t)need : 0;
        }
        *err = true; /* ERROR, SERVER_ERROR ...: one line */
        return (ssize_t)line;
    }
    return -EBADMSG;
}

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: bench-client --proto http|redis|memcached (--unix PATH | --tcp 127.0.0.1:PORT) [OPTIONS]\n"
            "  -r, --rate R         requests per second, all connections together (default 100, at most %u)\n"
            "  -t, --time S         send for S seconds (default 10, at most %u)\n"
            "  -n, --count N        at most N requests (default and most %u)\n"
            "  -c, --connections C  connections (default 4, at most %u)\n"
            "      --poisson        Poisson arrivals of mean rate R (default: fixed intervals)\n"
            "      --seed N         seed of the arrivals (default 1)\n"
            "  -k, --key KEY        http: the path (default /); redis, memcached: GET this key\n"
            "                       (default: redis PING, memcached get of \"bench\")\n"
            "      --from S         latency figures over the requests due from S s on (default 0)\n"
            "      --until U        ... and before U s (default: the whole --time)\n"
            "      --grace S        wait S s for answers after the last send (default 5)\n"
            "  -h, --help\n",
            RATE_MAX, TIME_MAX_S, COUNT_MAX, CONNS_MAX);
}

static int parse_args(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"proto", required_argument, NULL, 'p'},
        {"unix", required_argument, NULL, 'u'},
        {"tcp", required_argument, NULL, 'T'},
        {"rate", required_argument, NULL, 'r'},
        {"time", required_argument, NULL, 't'},
        {"count", required_argument, NULL, 'n'},
        {"connections", required_argument, NULL, 'c'},
        {"poisson", no_argument, NULL, 'P'},
        {"seed", required_argument, NULL, 'S'},
        {"key", required_argument, NULL, 'k'},
        {"from", required_argument, NULL, 'F'},
        {"until", required_argument, NULL, 'U'},
        {"grace", required_argument, NULL, 'G'},
        {"help", no_argument, NULL, 'h'},
        {},
    };
    bool have_proto = false;
    int c;
    while ((c = getopt_long(argc, argv, "p:u:T:r:t:n:c:k:h", longopts, NULL)) >= 0) {
        unsigned *dst = NULL;
        switch (c) {
        case 'p':
            have_proto = true;
            if (strcmp(optarg, "http") == 0)
                opt.proto = PROTO_HTTP;
            else if (strcmp(optarg, "redis") == 0)
                opt.proto = PROTO_REDIS;
            else if (strcmp(optarg, "memcached") == 0)
                opt.proto = PROTO_MEMCACHED;
            else {
                fprintf(stderr, "unknown protocol '%s'\n", optarg);
                return -EINVAL;
            }
            continue;
        case 'u':
            opt.unix_path = optarg;
            continue;
        case 'T':
            opt.tcp = optarg;
            continue;
        case 'k':
            opt.key = optarg;
            continue;
        case 'P':
            opt.poisson = true;
            continue;
        case 'S':
            if (parse_u64(optarg, &opt.seed) < 0) {
                fprintf(stderr, "invalid seed '%s'\n", optarg);
                return -EINVAL;
            }
            continue;
        case 'r':
            dst = &opt.rate;
            break;
        case 't':
            dst = &opt.time_s;
            break;
        case 'n':
            dst = &opt.count;
            break;
        case 'c':
            dst = &opt.conns;
            break;
        case 'F':
            dst = &opt.from_s;
            break;
        case 'U':
            dst = &opt.until_s;
            break;
        case 'G':
            dst = &opt.grace_s;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return -EINVAL;
        }
        if (parse_uint(optarg, dst) < 0) {
            fprintf(stderr, "invalid number '%s'\n", optarg);
            return -EINVAL;
        }
    }
    if (optind < argc || !have_proto || !opt.unix_path == !opt.tcp) {
        usage(stderr);
        return -EINVAL;
    }
    if (opt.rate == 0 || opt.rate > RATE_MAX || opt.time_s == 0 || opt.time_s > TIME_MAX_S || opt.count == 0 ||
        opt.count > COUNT_MAX || opt.conns == 0 || opt.conns > CONNS_MAX || opt.grace_s > 60) {
        fprintf(stderr, "rate 1..%u, time 1..%u s, count 1..%u, connections 1..%u, grace at most 60 s\n", RATE_MAX,
                TIME_MAX_S, COUNT_MAX, CONNS_MAX);
        return -EINVAL;
    }
    if (opt.until_s == 0)
        opt.until_s = opt.time_s;
    if (opt.from_s >= opt.until_s || opt.until_s > opt.time_s) {
        fprintf(stderr, "need --from < --until <= --time\n");
        return -EINVAL;
    }
    if (opt.tcp) {
        struct sockaddr_storage ss;
        socklen_t len;
        if (tcp_addr(opt.tcp, &ss, &len) < 0) {
            fprintf(stderr, "--tcp takes 127.0.0.0/8:PORT or [::1]:PORT only, not '%s'\n", opt.tcp);
            return -EINVAL;
        }
    }
    return 1;
}

static int build_request(char *buf, size_t size)
{
    const char *key = opt.key;
    switch (opt.proto) {
    case PROTO_HTTP:
        return snprintf(buf, size, "GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n", key ? key : "/");
    case PROTO_REDIS:
        if (!key)
            return snprintf(buf, size, "*1\r\n$4\r\nPING\r\n");
        return snprintf(buf, size, "*2\r\n$3\r\nGET\r\n$%zu\r\n%s\r\n", strlen(key), key);
    case PROTO_MEMCACHED:
        return snprintf(buf, size, "get %s\r\n", key ? key : "bench");
    }
    return -EINVAL;
}

/* xorshift64*: arrivals only, no need for more */
static double uniform01(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (double)((*s * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

int main(int argc, char **argv)
{
    int r = parse_args(argc, argv);
    if (r <= 0)
        return r < 0 ? 2 : 0;

    char req[512];
    int req_len = build_request(req, sizeof req);
    if (req_len <= 0 || (size_t)req_len >= sizeof req) {
        fprintf(stderr, "key too long\n");
        return 2;
    }
    uint64_t want = (uint64_t)opt.rate * opt.time_s;
    size_t total = (size_t)MIN(want, (uint64_t)opt.count);
    _cleanup_free_ int64_t *due = calloc(total, sizeof *due); /* offsets from the start, ns */
    _cleanup_free_ int64_t *lat = calloc(total, sizeof *lat); /* -1: no answer */
    _cleanup_free_ int64_t *lag = calloc(total, sizeof *lag); /* send time - due time */
    _cleanup_free_ struct conn *conns = calloc(opt.conns, sizeof *conns);
    if (!due || !lat || !lag || !conns) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    uint64_t seed = opt.seed ? opt.seed : 1;
    double t = 0, gap = 1e9 / opt.rate;
    for (size_t i = 0; i < total; i++) {
        due[i] = (int64_t)t;
        lat[i] = -1;
        t += opt.poisson ? -log(1.0 - uniform01(&seed)) * gap : gap;
    }

    _cleanup_close_ int ep = epoll_create1(EPOLL_CLOEXEC);
    _cleanup_close_ int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    if (ep < 0 || tfd < 0) {
        perror("epoll/timerfd");
        return 1;
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = UINT32_MAX};
    epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);
    for (unsigned i = 0; i < opt.conns; i++) {
        conns[i].fd = connect_one();
        if (conns[i].fd < 0) {
            fprintf(stderr, "connecting to %s: %s\n", opt.unix_path ? opt.unix_path : opt.tcp, strerror(-conns[i].fd));
            for (unsigned k = 0; k < i; k++)
                close(conns[k].fd);
            return 1;
        }
        ev = (struct epoll_event){.events = EPOLLIN, .data.u32 = i};
        epoll_ctl(ep, EPOLL_CTL_ADD, conns[i].fd, &ev);
    }

    uint64_t errors = 0, bad = 0;
    size_t next = 0, outstanding = 0;
    const int64_t start = mono_ns() + 10000000; /* 10 ms to settle */
    const int64_t deadline = start + (int64_t)opt.time_s * 1000000000 + (int64_t)opt.grace_s * 1000000000;
    int64_t now;
    while ((now = mono_ns()) < deadline && (next < total || outstanding)) {
        /* everything due, in order; a request waits here only while every
         * connection has RING outstanding (its latency still counts from due) */
        while (next < total && start + due[next] <= now) {
            unsigned best = 0;
            for (unsigned i = 1; i < opt.conns; i++)
                if (conns[i].n < conns[best].n)
                    best = i;
            struct conn *cn = &conns[best];
            if (cn->n >= RING)
                break;
            ssize_t w = send(cn->fd, req, (size_t)req_len, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (w != req_len) {
                /* a few hundred bytes per connection never fill a socket buffer */
                fprintf(stderr, "send: %s\n", w < 0 ? strerror(errno) : "short write");
                bad++;
                goto out;
            }
            lag[next] = now - (start + due[next]);
            cn->ring[(cn->head + cn->n) % RING] = (uint32_t)next;
            cn->n++;
            outstanding++;
            next++;
            now = mono_ns();
        }
        int64_t wake = deadline;
        if (next < total)
            wake = MIN(wake, start + due[next]);
        struct itimerspec its = {.it_value = {.tv_sec = wake / 1000000000, .tv_nsec = wake % 1000000000}};
        timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL);
        struct epoll_event evs[CONNS_MAX + 1];
        int n = epoll_wait(ep, evs, (int)ELEMENTSOF(evs), -1);
        if (n < 0 && errno != EINTR) {
            perror("epoll_wait");
            bad++;
            break;
        }
        now = mono_ns();
        for (int k = 0; k < n; k++) {
            if (evs[k].data.u32 == UINT32_MAX) {
                uint64_t exp;
                if (read(tfd, &exp, sizeof exp) < 0) {
                    /* EAGAIN: already read */
                }
                continue;
            }
            struct conn *cn = &conns[evs[k].data.u32];
            ssize_t got = recv(cn->fd, cn->rbuf + cn->rlen, RBUF - cn->rlen, MSG_DONTWAIT);
            if (got <= 0) {
                if (got < 0 && (errno == EAGAIN || errno == EINTR))
                    continue;
                fprintf(stderr, "connection %u: %s\n", evs[k].data.u32, got ? strerror(errno) : "closed by the server");
                bad++;
                goto out;
            }
            cn->rlen += (size_t)got;
            for (;;) {
                bool err;
                ssize_t len = response_len(cn->rbuf, cn->rlen, &err);
                if (len == 0)
                    break;
                if (len < 0 || cn->n == 0) {
                    fprintf(stderr, "connection %u: not an answer to a request: %.40s\n", evs[k].data.u32, cn->rbuf);
                    bad++;
                    goto out;
                }
                uint32_t i = cn->ring[cn->head];
                cn->head = (cn->head + 1) % RING;
                cn->n--;
                outstanding--;
                lat[i] = now - (start + due[i]);
                errors += err;
                memmove(cn->rbuf, cn->rbuf + len, cn->rlen - (size_t)len);
                cn->rlen -= (size_t)len;
            }
        }
    }
out:
    for (unsigned i = 0; i < opt.conns; i++)
        close(conns[i].fd);

    /* figures over the requests due from --from on; one never answered
     * counts as lost (and is left out of the percentiles: say so) */
    const int64_t from_ns = (int64_t)opt.from_s * 1000000000;
    const int64_t until_ns = (int64_t)opt.until_s * 1000000000;
    size_t n_win = 0, n_done = 0, n_lost = 0;
    for (size_t i = 0; i < total; i++) {
        if (due[i] < from_ns || due[i] >= until_ns)
            continue;
        n_win++;
        if (i >= next || lat[i] < 0) {
            n_lost++;
            continue;
        }
        lag[n_done] = lag[i];
        lat[n_done++] = lat[i];
    }
    qsort(lat, n_done, sizeof *lat, cmp_i64);
    qsort(lag, n_done, sizeof *lag, cmp_i64);
    double span_s = opt.until_s - opt.from_s;
    printf("requests=%zu\nsent=%zu\nwindow_requests=%zu\nwindow_answered=%zu\nwindow_lost=%zu\nerrors=%" PRIu64 "\n",
           total, next, n_win, n_done, n_lost, errors);
    printf("window_s=%.0f\nrate_achieved=%.1f\n", span_s, span_s > 0 ? n_done / span_s : 0);
    printf("p50_us=%.1f\np90_us=%.1f\np99_us=%.1f\np999_us=%.1f\nmax_us=%.1f\n", pct(lat, n_done, 50) / 1e3,
           pct(lat, n_done, 90) / 1e3, pct(lat, n_done, 99) / 1e3, pct(lat, n_done, 99.9) / 1e3,
           n_done ? lat[n_done - 1] / 1e3 : 0);
    printf("send_lag_p99_us=%.1f\nsend_lag_max_us=%.1f\n", pct(lag, n_done, 99) / 1e3,
           n_done ? lag[n_done - 1] / 1e3 : 0);
    return bad || errors || n_lost ? 1 : 0;
}
