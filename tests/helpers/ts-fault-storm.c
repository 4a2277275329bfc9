/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fork/thread storms for the fault tests: many short-lived processes, each
 * creating a few threads, named so that a rule classifies them, plus some
 * long-lived processes (with threads) that the daemon packs and must give
 * back their masks.
 *
 *   ts-fault-storm [-n TASKS] [-w WORKERS] [-j JOBS] [-t THREADS] [-p PAUSE_US]
 *                  [-c COMM] [-k KEEP] [-K COMM] [-T THREADS] [-o FILE]
 *
 *   -n TASKS    short tasks in all, spread over the workers; 0: until SIGTERM
 *   -w WORKERS  forking processes (default 4); 0: only the long-lived ones
 *   -j JOBS     short tasks each worker keeps alive at once (default 4)
 *   -t THREADS  threads each short task creates and joins (default 2)
 *   -p PAUSE_US pause of a worker after each fork (default 0), to make churn
 *               rather than a storm
 *   -c COMM     name of the short tasks (default ts-storm)
 *   -k KEEP     long-lived processes, alive until SIGTERM (default 0)
 *   -K COMM     their name (default: COMM)
 *   -T THREADS  threads of each long-lived process besides its main one
 *   -o FILE     once they all run, write "PID TID..." per long-lived
 *               process to FILE (atomically)
 *
 * A long-lived process creates one more thread on SIGUSR1 and one more child
 * process (named alike, killed with it) on SIGUSR2; on SIGURG its main thread
 * sets its own affinity to every CPU (sched_setaffinity(0, ...)).
 *
 * The storm runs once every long-lived process is up. At its end (all TASKS
 * done, or SIGTERM) it prints one line:
 *   storm: tasks N threads N failed N fork_retries N elapsed_ms N
 * and then, if it keeps long-lived processes, waits for SIGTERM. Exit 0 when
 * every short task and every syscall succeeded, 1 otherwise, 2 on usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Built without the sanitizers and without the daemon's library (see
 * tests/CMakeLists.txt): a handful of local helpers instead. */

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

#define MAX_WORKERS 64
#define MAX_KEEP 256
#define MAX_THREADS 16

struct totals {
    unsigned long tasks, threads, failed, fork_retries;
};

static volatile sig_atomic_t stopping;
static void on_stop(int sig) { stopping = 1; }

static void die_errno(const char *what)
{
    fprintf(stderr, "ts-fault-storm: %s: %s\n", what, strerror(errno));
    _exit(1);
}

/* The child side of fork(): it dies with its parent, and signals blocked in
 * the parent are not blocked here. */
static void child_setup(const char *comm)
{
    sigset_t none;
    sigemptyset(&none);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
        die_errno("prctl(PR_SET_PDEATHSIG)");
    if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
        die_errno("sigprocmask");
    if (comm && prctl(PR_SET_NAME, comm) < 0)
        die_errno("prctl(PR_SET_NAME)");
}

static void *short_thread(void *arg)
{
    /* a little work, so that the thread is seen running at least once */
    volatile unsigned sink = 0;
    for (unsigned i = 0; i < 1000; i++)
        sink += i;
    return NULL;
}

static pthread_attr_t small_stack;

/* One short task: threads created and joined, then exit. */
static void short_task(const char *comm, unsigned n_threads)
{
    pthread_t t[MAX_THREADS];
    int r;
    child_setup(comm);
    for (unsigned i = 0; i < n_threads; i++)
        if ((r = pthread_create(&t[i], &small_stack, short_thread, NULL)) != 0) {
            fprintf(stderr, "ts-fault-storm: pthread_create: %s\n", strerror(r));
            _exit(1);
        }
    for (unsigned i = 0; i < n_threads; i++)
        if ((r = pthread_join(t[i], NULL)) != 0) {
            fprintf(stderr, "ts-fault-storm: pthread_join: %s\n", strerror(r));
            _exit(1);
        }
    _exit(0);
}

static void count_exit(struct totals *tot, int status, unsigned n_threads)
{
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        tot->tasks++;
        tot->threads += n_threads;
    } else
        tot->failed++;
}

/* Reap one child; blocks unless nohang. Returns 1 if one was reaped. */
static int reap_one(struct totals *tot, unsigned n_threads, bool nohang)
{
    int status;
    for (;;) {
        pid_t p = waitpid(-1, &status, nohang ? WNOHANG : 0);
        if (p > 0) {
            count_exit(tot, status, n_threads);
            return 1;
        }
        if (p == 0 || (p < 0 && errno == ECHILD))
            return 0;
        if (errno != EINTR)
            die_errno("waitpid");
    }
}

/* A worker forks n short tasks (0: until SIGTERM), at most jobs at once,
 * and writes its totals to fd. */
static void worker(unsigned long n, unsigned jobs, unsigned n_threads, unsigned pause_us, const char *comm, int fd)
{
    struct totals tot = {0};
    unsigned running = 0;
    struct sigaction sa = {.sa_handler = on_stop}; /* no SA_RESTART: waitpid returns */
    if (sigaction(SIGTERM, &sa, NULL) < 0)
        die_errno("sigaction");
    child_setup(NULL); /* unblocks SIGTERM, now that it only sets a flag */
    for (unsigned long i = 0; (n == 0 || i < n) && !stopping;) {
        while (running >= jobs && !stopping)
            running -= (unsigned)reap_one(&tot, n_threads, false);
        if (stopping)
            break;
        pid_t p = fork();
        if (p == 0)
            short_task(comm, n_threads);
        if (p < 0) {
            if (errno != EAGAIN && errno != ENOMEM)
                die_errno("fork");
            /* the machine's task limit: wait for one of ours to go */
            tot.fork_retries++;
            if (running > 0)
                running -= (unsigned)reap_one(&tot, n_threads, false);
            else
                nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
            continue;
        }
        running++;
        i++;
        while (running > 0 && reap_one(&tot, n_threads, true))
            running--;
        if (pause_us)
            nanosleep(&(struct timespec){.tv_nsec = (long)pause_us * 1000}, NULL);
    }
    while (running > 0 && reap_one(&tot, n_threads, false))
        running--;
    if (write(fd, &tot, sizeof tot) != (ssize_t)sizeof tot)
        die_errno("write to the parent");
    _exit(0);
}

static pthread_barrier_t keep_barrier;
static pid_t keep_tids[MAX_THREADS];
static unsigned keep_next;
static pthread_mutex_t keep_lock = PTHREAD_MUTEX_INITIALIZER;

static void *idle_thread(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

static void *keep_thread(void *arg)
{
    pthread_mutex_lock(&keep_lock);
    keep_tids[keep_next++] = gettid();
    pthread_mutex_unlock(&keep_lock);
    pthread_barrier_wait(&keep_barrier);
    for (;;)
        pause();
    return NULL;
}

/* A long-lived process: its threads, then one line "PID TID..." to fd. */
static void keeper(const char *comm, unsigned n_threads, int fd)
{
    char line[32 * (MAX_THREADS + 1)];
    int len, r;
    child_setup(comm);
    /* SIGUSR1 and SIGUSR2 are taken by the main thread alone (sigwait below):
     * every thread blocks them, starting with those created here. */
    sigset_t offspring;
    sigemptyset(&offspring);
    sigaddset(&offspring, SIGUSR1);
    sigaddset(&offspring, SIGUSR2);
    sigaddset(&offspring, SIGURG);
    if ((r = pthread_sigmask(SIG_BLOCK, &offspring, NULL)) != 0) {
        fprintf(stderr, "ts-fault-storm: pthread_sigmask: %s\n", strerror(r));
        _exit(1);
    }
    if ((r = pthread_barrier_init(&keep_barrier, NULL, n_threads + 1)) != 0) {
        fprintf(stderr, "ts-fault-storm: pthread_barrier_init: %s\n", strerror(r));
        _exit(1);
    }
    for (unsigned i = 0; i < n_threads; i++) {
        pthread_t t;
        if ((r = pthread_create(&t, &small_stack, keep_thread, NULL)) != 0) {
            fprintf(stderr, "ts-fault-storm: pthread_create: %s\n", strerror(r));
            _exit(1);
        }
    }
    pthread_barrier_wait(&keep_barrier);
    len = snprintf(line, sizeof line, "%d", (int)getpid());
    for (unsigned i = 0; i < n_threads; i++)
        len += snprintf(line + len, sizeof line - (size_t)len, " %d", (int)keep_tids[i]);
    len += snprintf(line + len, sizeof line - (size_t)len, "\n");
    if (write(fd, line, (size_t)len) != len) /* < PIPE_BUF: one atomic write */
        die_errno("write to the parent");
    /* Offspring on demand, for the fault tests that create tasks while no
     * daemon runs: SIGUSR1 adds a thread, SIGUSR2 a child process (same
     * name, killed with its parent). Both inherit the current mask. */
    for (;;) {
        int sig;
        if (sigwait(&offspring, &sig) != 0)
            continue;
        if (sig == SIGURG) {
            /* the main thread widens its own mask to every CPU it may use */
            cpu_set_t all;
            CPU_ZERO(&all);
            for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
                CPU_SET(cpu, &all);
            if (sched_setaffinity(0, sizeof all, &all) < 0)
                perror("ts-fault-storm: sched_setaffinity");
        } else if (sig == SIGUSR1) {
            pthread_t t;
            if ((r = pthread_create(&t, &small_stack, idle_thread, NULL)) != 0)
                fprintf(stderr, "ts-fault-storm: pthread_create: %s\n", strerror(r));
        } else {
            pid_t c = fork();
            if (c < 0)
                perror("ts-fault-storm: fork");
            else if (c == 0) {
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                for (;;)
                    pause();
            }
        }
    }
}

static int write_atomically(const char *path, const char *buf, size_t len)
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    if (write(fd, buf, len) != (ssize_t)len || close(fd) < 0 || rename(tmp, path) < 0)
        return -errno;
    return 0;
}

static int parse_arg(const char *s, unsigned max, unsigned *ret)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || *s == '-' || v > max) {
        fprintf(stderr, "ts-fault-storm: '%s': not a number up to %u\n", s, max);
        return -EINVAL;
    }
    *ret = (unsigned)v;
    return 0;
}

int main(int argc, char **argv)
{
    unsigned n_tasks = 1000, n_workers = 4, jobs = 4, n_threads = 2, pause_us = 0;
    unsigned n_keep = 0, keep_threads = 2;
    const char *comm = "ts-storm", *keep_comm = NULL, *keep_file = NULL;
    int c;
    while ((c = getopt(argc, argv, "n:w:j:t:p:c:k:K:T:o:")) >= 0) {
        int r = 0;
        switch (c) {
        case 'n':
            r = parse_arg(optarg, UINT_MAX, &n_tasks);
            break;
        case 'w':
            r = parse_arg(optarg, MAX_WORKERS, &n_workers);
            break;
        case 'j':
            r = parse_arg(optarg, 1024, &jobs);
            break;
        case 't':
            r = parse_arg(optarg, MAX_THREADS, &n_threads);
            break;
        case 'p':
            r = parse_arg(optarg, 999999, &pause_us);
            break;
        case 'c':
            comm = optarg;
            break;
        case 'k':
            r = parse_arg(optarg, MAX_KEEP, &n_keep);
            break;
        case 'K':
            keep_comm = optarg;
            break;
        case 'T':
            r = parse_arg(optarg, MAX_THREADS, &keep_threads);
            break;
        case 'o':
            keep_file = optarg;
            break;
        default:
            r = -EINVAL;
        }
        if (r < 0) {
            fprintf(stderr, "usage: ts-fault-storm [-n TASKS] [-w WORKERS] [-j JOBS] [-t THREADS] [-p PAUSE_US]\n"
                            "                      [-c COMM] [-k KEEP] [-K COMM] [-T THREADS] [-o FILE]\n");
            return 2;
        }
    }
    if (optind != argc || jobs == 0 || (n_workers == 0 && n_keep == 0))
        return 2;
    if (!keep_comm)
        keep_comm = comm;
    if (pthread_attr_init(&small_stack) != 0 || pthread_attr_setstacksize(&small_stack, 64 * 1024) != 0)
        return 1;

    /* SIGTERM and SIGINT are taken with sigwaitinfo; children unblock them. */
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGCHLD);
    if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
        die_errno("sigprocmask");

    pid_t keepers[MAX_KEEP];
    int kp[2];
    if (n_keep && pipe2(kp, O_CLOEXEC) < 0)
        die_errno("pipe2");
    for (unsigned i = 0; i < n_keep; i++) {
        if ((keepers[i] = fork()) < 0)
            die_errno("fork");
        if (keepers[i] == 0)
            keeper(keep_comm, keep_threads, kp[1]);
    }
    if (n_keep) {
        close(kp[1]);
        static char lines[MAX_KEEP * 32 * (MAX_THREADS + 1)];
        size_t len = 0;
        unsigned seen = 0;
        while (seen < n_keep) {
            ssize_t n = read(kp[0], lines + len, sizeof lines - len);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                fprintf(stderr, "ts-fault-storm: a long-lived process died before it was up\n");
                return 1;
            }
            for (ssize_t i = 0; i < n; i++)
                seen += lines[len + (size_t)i] == '\n';
            len += (size_t)n;
        }
        close(kp[0]);
        if (keep_file) {
            int r = write_atomically(keep_file, lines, len);
            if (r < 0) {
                fprintf(stderr, "ts-fault-storm: writing %s: %s\n", keep_file, strerror(-r));
                return 1;
            }
        }
    }

    uint64_t start = now_ms();
    pid_t workers[MAX_WORKERS];
    int wp[2];
    if (pipe2(wp, O_CLOEXEC) < 0)
        die_errno("pipe2");
    for (unsigned i = 0; i < n_workers; i++) {
        unsigned long share = n_tasks / n_workers + (i < n_tasks % n_workers);
        if (n_tasks && !share) {
            workers[i] = 0;
            continue;
        }
        if ((workers[i] = fork()) < 0)
            die_errno("fork");
        if (workers[i] == 0)
            worker(share, jobs, n_threads, pause_us, comm, wp[1]);
    }
    close(wp[1]);
    if (n_workers == 0) { /* only long-lived tasks: no storm to report */
        close(wp[0]);
        wp[0] = -1;
    }

    /* Wait for the workers; a SIGTERM stops them early. */
    bool terminated = false;
    unsigned busy = 0, lost_keepers = 0;
    for (unsigned i = 0; i < n_workers; i++)
        busy += workers[i] > 0;
    int bad_workers = 0;
    while (busy > 0 || (n_keep && !terminated)) {
        siginfo_t si;
        if (sigwaitinfo(&mask, &si) < 0) {
            if (errno == EINTR)
                continue;
            die_errno("sigwaitinfo");
        }
        if (si.si_signo != SIGCHLD) {
            if (!terminated)
                for (unsigned i = 0; i < n_workers; i++)
                    if (workers[i] > 0)
                        kill(workers[i], SIGTERM);
            terminated = true;
            continue;
        }
        int status;
        pid_t p;
        while ((p = waitpid(-1, &status, WNOHANG)) > 0) {
            bool was_worker = false;
            for (unsigned i = 0; i < n_workers; i++)
                if (workers[i] == p) {
                    workers[i] = 0;
                    busy--;
                    was_worker = true;
                    bad_workers += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
                }
            if (!was_worker)
                lost_keepers++;
        }
        if (busy == 0 && wp[0] >= 0) {
            struct totals sum = {0}, t;
            ssize_t n;
            while ((n = read(wp[0], &t, sizeof t)) == (ssize_t)sizeof t) {
                sum.tasks += t.tasks;
                sum.threads += t.threads;
                sum.failed += t.failed;
                sum.fork_retries += t.fork_retries;
            }
            close(wp[0]);
            wp[0] = -1;
            printf("storm: tasks %lu threads %lu failed %lu fork_retries %lu elapsed_ms %llu\n", sum.tasks, sum.threads,
                   sum.failed, sum.fork_retries, (unsigned long long)(now_ms() - start));
            fflush(stdout);
            bad_workers += sum.failed > 0;
        }
    }
    for (unsigned i = 0; i < n_keep; i++)
        kill(keepers[i], SIGKILL);
    while (wait(NULL) > 0 || errno == EINTR)
        ;
    if (lost_keepers)
        fprintf(stderr, "ts-fault-storm: %u long-lived process(es) died early\n", lost_keepers);
    if (bad_workers)
        fprintf(stderr, "ts-fault-storm: %d worker(s) failed or short tasks failed\n", bad_workers);
    return bad_workers || lost_keepers ? 1 : 0;
}
