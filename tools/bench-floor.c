/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The least a placer can spend per exec, for tools/bench/storm.sh: what
 * turboschedd does for a storm task, and nothing else. It sleeps in poll()
 * on the exec-only proc connector socket (Linux 6.6+) at SCHED_FIFO, reads
 * each new process's /proc/PID/stat for its name and, for one that matches,
 * reads its mask, confines it to one CPU and gives it an EEVDF slice (read,
 * then set) as the daemon does. No fork or exit events, no task table, no
 * state file, no tick, nothing undone: a floor to measure the daemon's CPU
 * per task against, not a placer to use.
 *
 *   bench-floor --comm NAME [--cpu N] [--slice-us US] [--fifo PRIO]
 *
 * Runs until SIGTERM or SIGINT, then prints key=value lines: execs seen,
 * tasks placed, and those placed within 20 ms of the kernel's timestamp on
 * their exec event (as the daemon's latency histogram counts them: the one
 * judge of placement for tasks that exit too soon to check their own).
 * Numbers, not a test. */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "procmon.h"
#include "procscan.h"
#include "sysops.h"
#include "task.h"

static volatile sig_atomic_t stopping;
static void on_stop(int sig)
{
    (void)sig;
    stopping = 1;
}

struct floor {
    const char *comm;
    cpu_set_t mask;
    uint64_t slice_ns;
    unsigned long execs, placed, placed_20ms;
};

static void place(struct floor *f, pid_t pid, uint64_t event_ns)
{
    struct task t = {0};
    if (procscan_read_stat(NULL, pid, pid, &t) < 0 || strcmp(t.comm, f->comm) != 0)
        return;
    cpu_set_t was;
    struct sysops_sched_attr a;
    if (sysops_real.getaffinity(NULL, pid, &was) < 0 || sysops_real.setaffinity(NULL, pid, &f->mask) < 0 ||
        sysops_real.getattr(NULL, pid, &a) < 0)
        return;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* the proc connector's timestamp is monotonic */
    uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    a.runtime_ns = f->slice_ns;
    if (sysops_real.setattr(NULL, pid, &a) == 0) {
        f->placed++;
        if (now - event_ns <= 20000000ull || now < event_ns)
            f->placed_20ms++;
    }
}

static int on_event(const struct procmon_event *ev, void *userdata)
{
    struct floor *f = userdata;
    if (ev->kind == PROCMON_EXEC && ev->tid == ev->tgid) {
        f->execs++;
        place(f, ev->tid, ev->timestamp_ns);
    }
    return 0;
}

static int usage(FILE *out, int code)
{
    fprintf(out, "usage: bench-floor --comm NAME [--cpu N] [--slice-us US] [--fifo PRIO]\n");
    return code;
}

int main(int argc, char **argv)
{
    struct floor f = {.slice_ns = 300000};
    int cpu = 0, fifo = 1;
    static const struct option opts[] = {
        {"comm", required_argument, NULL, 'n'},     {"cpu", required_argument, NULL, 'c'},
        {"slice-us", required_argument, NULL, 's'}, {"fifo", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0}};
    for (int o; (o = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
        switch (o) {
        case 'n':
            f.comm = optarg;
            break;
        case 'c':
            cpu = atoi(optarg);
            break;
        case 's':
            f.slice_ns = strtoull(optarg, NULL, 10) * 1000;
            break;
        case 'f':
            fifo = atoi(optarg);
            break;
        case 'h':
            return usage(stdout, 0);
        default:
            return usage(stderr, 2);
        }
    }
    if (!f.comm || cpu < 0 || cpu >= CPU_SETSIZE)
        return usage(stderr, 2);
    CPU_ZERO(&f.mask);
    CPU_SET(cpu, &f.mask);
    struct sched_param sp = {.sched_priority = fifo};
    if (fifo > 0 && sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp) < 0) {
        fprintf(stderr, "bench-floor: SCHED_FIFO %d: %s\n", fifo, strerror(errno));
        return 1;
    }
    struct procmon *pm = NULL;
    int r = procmon_open_exec(0, &pm);
    if (r < 0) {
        fprintf(stderr, "bench-floor: exec-only proc connector socket: %s\n", strerror(-r));
        return r == -EOPNOTSUPP ? 77 : 1;
    }
    /* no SA_RESTART: poll() returns on the signal */
    struct sigaction sa = {.sa_handler = on_stop};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    printf("ready=1\n");
    fflush(stdout);
    while (!stopping) {
        struct pollfd p = {.fd = procmon_fd(pm), .events = POLLIN};
        if (poll(&p, 1, -1) > 0)
            (void)procmon_dispatch(pm, on_event, &f);
    }
    procmon_free(pm);
    printf("execs=%lu\nplaced=%lu\nplaced_20ms=%lu\n", f.execs, f.placed, f.placed_20ms);
    return 0;
}
