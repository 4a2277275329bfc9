/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Capture real proc connector messages of this kernel as raw bytes, for the
 * decoder's fixtures: ts-proccapture OUTDIR. Needs root. Writes ack.bin,
 * fork.bin, exec.bin, comm.bin, uid.bin, exit.bin, fork-thread.bin and
 * exit-thread.bin, each one netlink message exactly as received. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#include "util.h"

static const char *outdir;
static pid_t child = -1;
static pid_t thread_tid = -1;
static unsigned saved;

static void save(const char *name, const void *buf, size_t len)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", outdir, name);
    if (access(path, F_OK) == 0)
        return;
    FILE *f = fopen(path, "we");
    if (!f || fwrite(buf, 1, len, f) != len) {
        perror(path);
        exit(1);
    }
    fclose(f);
    saved++;
    printf("%s: %zu bytes\n", name, len);
}

static int send_op(int fd, uint32_t op)
{
    struct {
        struct nlmsghdr nlh;
        struct cn_msg cn;
        uint32_t op;
    } __attribute__((packed)) m = {
        .nlh = {.nlmsg_len = sizeof(m), .nlmsg_type = NLMSG_DONE, .nlmsg_pid = (uint32_t)getpid()},
        .cn = {.id = {CN_IDX_PROC, CN_VAL_PROC}, .seq = 1, .ack = 41, .len = sizeof(uint32_t)},
        .op = op,
    };
    return send(fd, &m, sizeof(m), 0) < 0 ? -errno : 0;
}

static void *thread_fn(void *arg)
{
    (void)arg;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
        return 2;
    }
    outdir = argv[1];
    int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_CONNECTOR);
    struct sockaddr_nl sa = {.nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC, .nl_pid = (uint32_t)getpid()};
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || send_op(fd, PROC_CN_MCAST_LISTEN) < 0) {
        perror("proc connector");
        return 77;
    }
    int pipefd[2];
    if (pipe(pipefd) < 0)
        return 1;
    child = fork();
    if (child == 0) {
        char c;
        /* wait until the parent is ready, then: rename, change uid, exec */
        if (read(pipefd[0], &c, 1) != 1)
            _exit(1);
        prctl(PR_SET_NAME, "ts-cap (x) y");
        if (setresuid(65534, 65534, 0) < 0)
            _exit(1);
        execl("/bin/sh", "sh", "-c", "exit 3", (char *)NULL);
        _exit(1);
    }
    pthread_t th;
    pthread_create(&th, NULL, thread_fn, NULL);
    pthread_join(th, NULL);
    if (write(pipefd[1], "x", 1) != 1)
        return 1;

    uint64_t deadline = now_ms() + 10000;
    while (saved < 8 && now_ms() < deadline) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 200) <= 0)
            continue;
        uint8_t buf[8192];
        ssize_t n = recv(fd, buf, sizeof(buf), 0);
        if (n < (ssize_t)(NLMSG_HDRLEN + sizeof(struct cn_msg) + 16))
            continue;
        struct proc_event ev;
        memcpy(&ev, buf + NLMSG_HDRLEN + sizeof(struct cn_msg),
               MIN(sizeof(ev), (size_t)n - NLMSG_HDRLEN - sizeof(struct cn_msg)));
        pid_t me = getpid();
        switch (ev.what) {
        case PROC_EVENT_NONE:
            save("ack.bin", buf, n);
            break;
        case PROC_EVENT_FORK:
            if (ev.event_data.fork.child_pid == child)
                save("fork.bin", buf, n);
            else if (ev.event_data.fork.child_tgid == me && ev.event_data.fork.child_pid != me) {
                thread_tid = ev.event_data.fork.child_pid;
                save("fork-thread.bin", buf, n);
            }
            break;
        case PROC_EVENT_EXEC:
            if (ev.event_data.exec.process_pid == child)
                save("exec.bin", buf, n);
            break;
        case PROC_EVENT_COMM:
            if (ev.event_data.comm.process_pid == child)
                save("comm.bin", buf, n);
            break;
        case PROC_EVENT_UID:
            if (ev.event_data.id.process_pid == child)
                save("uid.bin", buf, n);
            break;
        case PROC_EVENT_EXIT:
            if (ev.event_data.exit.process_pid == child)
                save("exit.bin", buf, n);
            else if (ev.event_data.exit.process_pid == thread_tid)
                save("exit-thread.bin", buf, n);
            break;
        default:
            break;
        }
    }
    waitpid(child, NULL, 0);
    send_op(fd, PROC_CN_MCAST_IGNORE);
    if (saved < 8) {
        fprintf(stderr, "captured only %u of 8 messages\n", saved);
        return 1;
    }
    return 0;
}
