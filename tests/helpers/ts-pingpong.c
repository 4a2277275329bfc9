/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A request/response pair, as a service and its client are: the client
 * sends a byte every period and waits for the answer; the server (its child)
 * waits for each request and answers it. Light and frequent, like jitter,
 * and someone waits on every wake-up. -t: over TCP on loopback (the server
 * listens, the client connects), else over a unix stream socketpair.
 *
 * usage: ts-pingpong [-p PERIOD_MS] [-n NAME] [-t]
 * The server is named NAME-srv, the client NAME-cli. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;
static const char *name = "pingpong";
static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

static void name_self(const char *base, const char *suffix)
{
    char comm[16];
    snprintf(comm, sizeof comm, "%s-%s", base, suffix);
    prctl(PR_SET_NAME, comm, 0, 0, 0);
}

static int serve(int fd)
{
    char c;
    for (;;) {
        ssize_t n = read(fd, &c, 1);
        if (n <= 0)
            return n == 0 || stop ? 0 : 1;
        if (write(fd, &c, 1) != 1)
            return 1;
    }
}

/* Over TCP: a listening socket on an ephemeral loopback port; the child
 * accepts one connection and serves it. Returns the client's fd. */
static int tcp_pair(pid_t *child)
{
    int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) < 0 || listen(l, 1) < 0 ||
        getsockname(l, (struct sockaddr *)&a, &len) < 0) {
        perror("ts-pingpong: listen");
        return -1;
    }
    *child = fork();
    if (*child < 0)
        return -1;
    if (*child == 0) {
        name_self(name, "srv");
        int s = accept(l, NULL, NULL);
        _exit(s < 0 ? 1 : serve(s));
    }
    int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof a) < 0) {
        perror("ts-pingpong: connect");
        return -1;
    }
    close(l);
    return c;
}

int main(int argc, char **argv)
{
    unsigned period_ms = 10;
    bool tcp = false;
    int opt;
    while ((opt = getopt(argc, argv, "p:n:th")) >= 0) {
        switch (opt) {
        case 'p':
            period_ms = (unsigned)atoi(optarg);
            break;
        case 'n':
            name = optarg;
            break;
        case 't':
            tcp = true;
            break;
        default:
            fprintf(stderr, "usage: ts-pingpong [-p PERIOD_MS] [-n NAME] [-t]\n");
            return opt == 'h' ? 0 : 2;
        }
    }
    signal(SIGTERM, on_term);
    signal(SIGINT, on_term);
    pid_t child;
    int fd;
    if (tcp) {
        fd = tcp_pair(&child);
        if (fd < 0)
            return 1;
    } else {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
            perror("ts-pingpong: socketpair");
            return 1;
        }
        child = fork();
        if (child < 0)
            return 1;
        if (child == 0) {
            close(sv[0]);
            name_self(name, "srv");
            _exit(serve(sv[1]));
        }
        close(sv[1]);
        fd = sv[0];
    }
    name_self(name, "cli");
    struct timespec p = {.tv_sec = period_ms / 1000, .tv_nsec = (long)(period_ms % 1000) * 1000000L};
    int rc = 0;
    while (!stop) {
        char c = 'x';
        if (write(fd, &c, 1) != 1 || read(fd, &c, 1) != 1) {
            rc = stop ? 0 : 1;
            break;
        }
        nanosleep(&p, NULL);
    }
    close(fd);
    kill(child, SIGTERM);
    waitpid(child, NULL, 0);
    return rc;
}
