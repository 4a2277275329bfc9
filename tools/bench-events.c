/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Event throughput of task discovery alone: a generator process makes a
 * fork/exit (or thread create/exit) storm while this process runs procmon,
 * the task table and procscan_handle_event as the daemon does, but without
 * its hooks (no classification, no placement), and reports events/s handled
 * and CPU time per 1000 events of the handling side. The whole daemon's cost
 * per event is tools/bench/event-cost.sh's. Needs root.
 *
 *   bench-events [--forks N] [--threads N] [--procs P] [--rcvbuf BYTES]
 *
 * Also times the pure parts (decoder, table) without the kernel. Numbers,
 * not a test: nothing here passes or fails. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#include "log.h"
#include "procmon.h"
#include "procscan.h"
#include "task.h"
#include "util.h"

struct bench {
    struct task_table *tt;
    uint64_t events, by_kind[7];
};

static int on_event(const struct procmon_event *ev, void *userdata)
{
    struct bench *b = userdata;
    b->events++;
    b->by_kind[ev->kind]++;
    procscan_handle_event(NULL, b->tt, ev, NULL);
    return 0;
}

static void *thread_noop(void *arg) { return arg; }

static void generate(unsigned forks, unsigned threads)
{
    signal(SIGCHLD, SIG_IGN);
    for (unsigned i = 0; i < forks; i++) {
        pid_t pid = fork();
        if (pid == 0)
            _exit(0);
    }
    for (unsigned i = 0; i < threads; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, thread_noop, NULL) == 0)
            pthread_join(t, NULL);
    }
    while (wait(NULL) > 0 || errno == EINTR)
        ;
}

static uint64_t cpu_us(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (uint64_t)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_sec * 1000000 +
           ru.ru_stime.tv_usec;
}

static void bench_pure(void)
{
    /* A fork message as the kernel sends it. */
    struct {
        struct nlmsghdr nlh;
        struct cn_msg cn;
        struct proc_event ev;
    } __attribute__((packed)) m = {
        .nlh = {.nlmsg_len = sizeof(m), .nlmsg_type = NLMSG_DONE},
        .cn = {.id = {CN_IDX_PROC, CN_VAL_PROC}, .len = sizeof(struct proc_event)},
        .ev = {.what = PROC_EVENT_FORK, .event_data.fork = {1, 1, 2, 2}},
    };
    enum { N = 2000000 };
    struct procmon_event ev;
    uint64_t t0 = now_ns();
    volatile pid_t sink = 0;
    for (unsigned i = 0; i < N; i++) {
        m.ev.event_data.fork.child_pid = (int)i;
        procmon_decode(&m, sizeof(m), &ev);
        sink += ev.tid;
    }
    uint64_t dt = now_ns() - t0;
    printf("decode:           %.1f ns/message\n", (double)dt / N);

    struct task_table *tt;
    enum { T = 200000 };
    if (task_table_new(T, &tt) < 0)
        return;
    struct task p = {.rule = -1};
    t0 = now_ns();
    for (int i = 1; i <= T; i++) {
        p.tid = i * 3;
        task_table_add(tt, &p, NULL);
    }
    uint64_t t_add = now_ns() - t0;
    t0 = now_ns();
    for (int r = 0; r < 5; r++)
        for (int i = 1; i <= T; i++)
            sink += task_table_find(tt, i * 3)->pid;
    uint64_t t_find = now_ns() - t0;
    size_t mem = task_table_memory_bytes(tt);
    t0 = now_ns();
    for (int i = 1; i <= T; i++)
        task_table_remove(tt, i * 3);
    uint64_t t_rm = now_ns() - t0;
    /* again into memory already touched: the steady state of a running daemon */
    t0 = now_ns();
    for (int i = 1; i <= T; i++) {
        p.tid = i * 3 + 1;
        task_table_add(tt, &p, NULL);
    }
    uint64_t t_readd = now_ns() - t0;
    printf("task table:       add %.1f ns (first touch of memory), %.1f ns (reused slots), find %.1f ns, remove %.1f "
           "ns (%d tasks)\n",
           (double)t_add / T, (double)t_readd / T, (double)t_find / (5.0 * T), (double)t_rm / T, T);
    printf("task table:       %zu bytes for %d tasks = %.1f bytes/thread (sizeof(struct task) = %zu)\n", mem, T,
           (double)mem / T, sizeof(struct task));
    task_table_free(tt);

    /* The /proc side of a fork event: one stat read of a live thread. */
    struct task t = {0};
    enum { R = 20000 };
    t0 = now_ns();
    for (int i = 0; i < R; i++)
        procscan_read_stat(NULL, getpid(), getpid(), &t);
    printf("read stat:        %.2f us per task (open+read+close+parse)\n", (now_ns() - t0) / 1e3 / R);
    t0 = now_ns();
    for (int i = 0; i < R; i++)
        procscan_read_task(NULL, getpid(), getpid(), &t);
    printf("read stat+status: %.2f us per task\n", (now_ns() - t0) / 1e3 / R);
    (void)sink;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"forks", required_argument, NULL, 'f'},
        {"threads", required_argument, NULL, 't'},
        {"procs", required_argument, NULL, 'p'},
        {"rcvbuf", required_argument, NULL, 'r'},
        {},
    };
    unsigned forks = 20000, threads = 0, procs = 2;
    if (argc == 4 && strcmp(argv[1], "--generate") == 0) {
        if (parse_uint(argv[2], &forks) < 0 || parse_uint(argv[3], &threads) < 0)
            return 2;
        generate(forks, threads);
        return 0;
    }
    uint64_t rcvbuf = 8 << 20;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) >= 0) {
        switch (c) {
        case 'f':
            if (parse_uint(optarg, &forks) < 0)
                return 2;
            break;
        case 't':
            if (parse_uint(optarg, &threads) < 0)
                return 2;
            break;
        case 'p':
            if (parse_uint(optarg, &procs) < 0 || procs == 0)
                return 2;
            break;
        case 'r':
            if (parse_size(optarg, &rcvbuf) < 0)
                return 2;
            break;
        default:
            fprintf(stderr, "usage: %s [--forks N] [--threads N] [--procs P] [--rcvbuf BYTES]\n", argv[0]);
            return 2;
        }
    }
    log_set_max_level(LOG_WARNING);
    bench_pure();

    struct bench b = {0};
    struct procmon *pm;
    int r = procmon_open(rcvbuf, &pm);
    if (r < 0) {
        fprintf(stderr, "proc connector: %s (needs root)\n", strerror(-r));
        return 1;
    }
    if (task_table_new(1 << 20, &b.tt) < 0)
        return 1;
    struct procscan_stats st;
    procscan_reconcile(NULL, b.tt, NULL, &st);
    printf("startup scan:     %u threads in %" PRIu64 " us\n", st.seen, st.duration_us);

    pid_t gens[64];
    procs = MIN(procs, 64u);
    uint64_t t0 = now_ns(), cpu0 = cpu_us();
    /* Generators exec a fresh image: forking from this process's large
     * address space would make the storm slow and bill us for COW faults. */
    char nf[16], nt[16];
    snprintf(nf, sizeof nf, "%u", forks / procs);
    snprintf(nt, sizeof nt, "%u", threads / procs);
    for (unsigned i = 0; i < procs; i++) {
        gens[i] = fork();
        if (gens[i] == 0) {
            execl("/proc/self/exe", "bench-events", "--generate", nf, nt, (char *)NULL);
            _exit(127);
        }
    }
    unsigned running = procs, rescans = 0;
    uint64_t last_event_ns = now_ns();
    for (;;) {
        struct pollfd p = {.fd = procmon_fd(pm), .events = POLLIN};
        int n = poll(&p, 1, running ? 50 : 300);
        if (n > 0) {
            r = procmon_dispatch(pm, on_event, &b);
            if (r == -ENOBUFS) {
                procscan_reconcile(NULL, b.tt, NULL, &st);
                rescans++;
            }
            last_event_ns = now_ns();
        }
        for (unsigned i = 0; i < procs; i++)
            if (gens[i] > 0 && waitpid(gens[i], NULL, WNOHANG) == gens[i]) {
                gens[i] = 0;
                running--;
            }
        if (!running && n == 0)
            break;
    }
    uint64_t wall_ns = last_event_ns - t0, cpu = cpu_us() - cpu0;
    const struct procmon_counters *pc = procmon_counters(pm);
    printf("storm:            %u forks, %u threads from %u processes, receive buffer %" PRIu64 " bytes\n", forks,
           threads, procs, rcvbuf);
    printf("events handled:   %" PRIu64 " (fork %" PRIu64 ", exec %" PRIu64 ", comm %" PRIu64 ", exit %" PRIu64
           ", other %" PRIu64 ")\n",
           b.events, pc->fork, pc->exec, pc->comm, pc->exit, pc->other);
    printf("throughput:       %.0f events/s over %.2f s\n", b.events / (wall_ns / 1e9), wall_ns / 1e9);
    printf("handling CPU:     %.3f ms per 1000 events (%.1f ms total)\n", b.events ? cpu / 1e3 / (b.events / 1e3) : 0,
           cpu / 1e3);
    printf("overflows:        %" PRIu64 " (rescans %u)\n", pc->overflows, rescans);
    printf("tracked at end:   %u threads, %zu bytes\n", task_table_count(b.tt), task_table_memory_bytes(b.tt));
    procmon_free(pm);
    task_table_free(b.tt);
    return 0;
}
