/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Many idle clients of a unix socket, for the control socket's limits:
 *
 *   ts-clients SOCKET N [EXPECT]
 *
 * connects N times, then waits for what each connection receives: until
 * EXPECT connections have been closed or answered (at most 60 s), then a
 * further 500 ms to catch any beyond those (without EXPECT: 2 s in all). It
 * prints one line
 *   connected N refused R other O
 * where R counts connections closed with an io.turbosched.TooManyClients
 * error, O those closed or answered otherwise. It then holds the open ones
 * until SIGTERM. Exit 1 on a failed connect() or socket(). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_CLIENTS 1024

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: ts-clients SOCKET N [EXPECT]\n");
        return 2;
    }
    int n = atoi(argv[2]);
    if (n < 1 || n > MAX_CLIENTS) {
        fprintf(stderr, "ts-clients: N must be 1..%d\n", MAX_CLIENTS);
        return 2;
    }
    int expect = argc == 4 ? atoi(argv[3]) : -1;
    if (expect > n) {
        fprintf(stderr, "ts-clients: EXPECT must be at most N\n");
        return 2;
    }
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(argv[1]) >= sizeof sa.sun_path) {
        fprintf(stderr, "ts-clients: socket path too long\n");
        return 2;
    }
    strcpy(sa.sun_path, argv[1]);

    static struct pollfd pfd[MAX_CLIENTS];
    for (int i = 0; i < n; i++) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
            perror("ts-clients: connect");
            return 1;
        }
        pfd[i] = (struct pollfd){.fd = fd, .events = POLLIN};
    }

    /* Deadlines in real time: a poll() that returns early must not use up
     * the wait, since refusals arrive one by one. */
    int refused = 0, other = 0;
    long long deadline = now_ms() + (expect >= 0 ? 60000 : 2000);
    bool settling = expect < 0;
    for (;;) {
        long long left = deadline - now_ms();
        if (left <= 0) {
            if (settling)
                break;
            settling = true; /* EXPECT not reached in 60 s */
            deadline = now_ms() + 500;
            continue;
        }
        if (!settling && refused + other >= expect) {
            settling = true;
            deadline = now_ms() + 500;
            continue;
        }
        if (poll(pfd, (nfds_t)n, (int)(left < 100 ? left : 100)) <= 0)
            continue;
        for (int i = 0; i < n; i++) {
            if (pfd[i].fd < 0 || !pfd[i].revents)
                continue;
            char buf[4096];
            ssize_t len = recv(pfd[i].fd, buf, sizeof buf - 1, MSG_DONTWAIT);
            if (len < 0 && errno == EAGAIN)
                continue;
            buf[len > 0 ? len : 0] = '\0';
            if (len > 0 && strstr(buf, "io.turbosched.TooManyClients"))
                refused++;
            else
                other++;
            close(pfd[i].fd);
            pfd[i].fd = -1;
        }
    }
    printf("connected %d refused %d other %d\n", n, refused, other);
    fflush(stdout);

    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigprocmask(SIG_BLOCK, &term, NULL);
    int sig;
    sigwait(&term, &sig);
    return 0;
}
