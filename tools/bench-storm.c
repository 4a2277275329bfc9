/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A fork+exec storm for the event benchmark (tools/bench/storm.sh).
 *
 * Worker processes fork children as fast as they can (or at a given rate);
 * each child execs PROBE, a copy of this program under a name that a
 * turboschedd rule and a cgrules.conf line both match. The probe sleeps, then
 * checks whether a daemon has placed it (its affinity is EXPECT, and with
 * --cgroup it sits in that cpuset group) and writes one byte, 'P' or 'N', to
 * the pipe this process reads; then it lives on until --lifetime-ms after its
 * exec. A probe whose lifetime is shorter than --check-ms does not check (it
 * would only see whether a placer beat its exec): it writes 'U' and exits,
 * and placement is judged by the placer's own count. Per child the kernel
 * reports a fork, an exec and an exit: the benchmark divides the daemons' CPU
 * time by those. --inflight bounds the children each worker has alive (or
 * not yet reaped) at once: with --lifetime-ms it sets how many tasks a placer
 * tracks through the storm.
 *
 *   bench-storm --probe PATH [--children N] [--workers W] [--rate PER_S]
 *               [--check-ms MS] [--lifetime-ms MS] [--inflight N]
 *               [--expect CPULIST] [--cgroup /PATH]
 *
 * Prints key=value lines. Numbers, not a test: nothing here passes or fails. */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

#define DEFAULT_INFLIGHT 256 /* children alive per worker: bounds the PIDs a storm takes */

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};
    while (ms && nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

static void sleep_until_ns(uint64_t t)
{
    struct timespec ts = {.tv_sec = (time_t)(t / 1000000000ull), .tv_nsec = (long)(t % 1000000000ull)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

static bool in_cgroup(const char *path)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f)
        return false;
    char line[512];
    bool found = false;
    size_t n = strlen(path);
    while (!found && fgets(line, sizeof line, f)) {
        /* "4:cpuset:/turbosched-bench" */
        char *c = strchr(line, ':');
        c = c ? strchr(c + 1, ':') : NULL;
        if (c && strncmp(c + 1, path, n) == 0 && (c[1 + n] == '\n' || c[1 + n] == '\0'))
            found = strstr(line, "cpuset") != NULL;
    }
    fclose(f);
    return found;
}

/* argv: PROBE --probe-run FD CHECK_MS EXPECT CGROUP|- LIFETIME_MS */
static int probe_main(int argc, char **argv)
{
    if (argc != 7)
        return 2;
    int fd = atoi(argv[2]);
    unsigned check_ms = (unsigned)atoi(argv[3]), lifetime_ms = (unsigned)atoi(argv[6]);
    cpu_set_t expect, now;
    if (cpulist_parse(argv[4], &expect) < 0)
        return 2;
    if (lifetime_ms < check_ms) {
        sleep_ms(lifetime_ms);
        return write(fd, "U", 1) == 1 ? 0 : 1;
    }
    sleep_ms(check_ms);
    bool placed = sched_getaffinity(0, sizeof now, &now) == 0 && CPU_EQUAL(&now, &expect);
    if (placed && strcmp(argv[5], "-") != 0)
        placed = in_cgroup(argv[5]);
    char c = placed ? 'P' : 'N';
    int r = write(fd, &c, 1) == 1 ? 0 : 1;
    sleep_ms(lifetime_ms - check_ms);
    return r;
}

struct opts {
    const char *probe, *expect, *cgroup;
    unsigned children, workers, rate, check_ms, lifetime_ms, inflight;
};

static void worker(const struct opts *o, unsigned count, unsigned rate, int fd)
{
    char fd_s[16], check_s[16], life_s[16];
    snprintf(fd_s, sizeof fd_s, "%d", fd);
    snprintf(check_s, sizeof check_s, "%u", o->check_ms);
    snprintf(life_s, sizeof life_s, "%u", o->lifetime_ms);
    const char *name = strrchr(o->probe, '/') ? strrchr(o->probe, '/') + 1 : o->probe;
    char *const args[] = {
        (char *)name, "--probe-run", fd_s, check_s, (char *)o->expect, (char *)(o->cgroup ? o->cgroup : "-"),
        life_s,       NULL};
    unsigned inflight = 0, fork_retries = 0;
    uint64_t next = mono_ns(), step = rate ? 1000000000ull / rate : 0;
    for (unsigned i = 0; i < count; i++) {
        if (step) {
            sleep_until_ns(next);
            next += step;
        }
        while (inflight > 0 && waitpid(-1, NULL, inflight >= o->inflight ? 0 : WNOHANG) > 0)
            inflight--;
        pid_t pid = fork();
        if (pid == 0) {
            execv(o->probe, args);
            _exit(127);
        }
        if (pid < 0) { /* EAGAIN: out of PIDs or the pids limit; let children finish */
            fork_retries++;
            if (inflight > 0 && waitpid(-1, NULL, 0) > 0)
                inflight--;
            i--;
            continue;
        }
        inflight++;
    }
    while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
        ;
    if (fork_retries)
        fprintf(stderr, "bench-storm: worker %d: %u forks retried\n", (int)getpid(), fork_retries);
    _exit(0);
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--probe-run") == 0)
        return probe_main(argc, argv);

    struct opts o = {.expect = "0", .children = 10000, .workers = 2, .check_ms = 20, .inflight = DEFAULT_INFLIGHT};
    bool lifetime_set = false;
    static const struct option longopts[] = {
        {"probe", required_argument, NULL, 'P'},
        {"children", required_argument, NULL, 'n'},
        {"workers", required_argument, NULL, 'w'},
        {"rate", required_argument, NULL, 'r'},
        {"check-ms", required_argument, NULL, 'c'},
        {"expect", required_argument, NULL, 'e'},
        {"cgroup", required_argument, NULL, 'g'},
        {"lifetime-ms", required_argument, NULL, 'l'},
        {"inflight", required_argument, NULL, 'i'},
        {"help", no_argument, NULL, 'h'},
        {0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "P:n:w:r:c:e:g:l:i:h", longopts, NULL)) >= 0) {
        switch (c) {
        case 'P':
            o.probe = optarg;
            break;
        case 'n':
            o.children = (unsigned)atoi(optarg);
            break;
        case 'w':
            o.workers = (unsigned)atoi(optarg);
            break;
        case 'r':
            o.rate = (unsigned)atoi(optarg);
            break;
        case 'c':
            o.check_ms = (unsigned)atoi(optarg);
            break;
        case 'e':
            o.expect = optarg;
            break;
        case 'g':
            o.cgroup = optarg;
            break;
        case 'l':
            o.lifetime_ms = (unsigned)atoi(optarg);
            lifetime_set = true;
            break;
        case 'i':
            o.inflight = (unsigned)atoi(optarg);
            break;
        default:
            fprintf(stderr, "usage: bench-storm --probe PATH [--children N] [--workers W] [--rate PER_S]\n"
                            "                   [--check-ms MS] [--lifetime-ms MS] [--inflight N]\n"
                            "                   [--expect CPULIST] [--cgroup /PATH]\n"
                            "  --rate 0 (the default) forks as fast as the workers can\n"
                            "  --lifetime-ms defaults to --check-ms; below it the probe does not check\n");
            return c == 'h' ? 0 : 2;
        }
    }
    cpu_set_t expect;
    if (!lifetime_set)
        o.lifetime_ms = o.check_ms;
    if (!o.probe || o.workers == 0 || o.children < o.workers || o.inflight == 0 ||
        cpulist_parse(o.expect, &expect) < 0) {
        fprintf(stderr,
                "bench-storm: need --probe, at least one child per worker, --inflight above 0 and a valid --expect\n");
        return 2;
    }
    int p[2];
    if (pipe(p) < 0) {
        perror("pipe");
        return 1;
    }
    uint64_t t0 = mono_ns();
    for (unsigned w = 0; w < o.workers; w++) {
        unsigned count = o.children / o.workers + (w < o.children % o.workers);
        unsigned rate = o.rate / o.workers + (w < o.rate % o.workers);
        pid_t pid = fork();
        if (pid == 0) {
            close(p[0]);
            worker(&o, count, o.rate ? (rate ? rate : 1) : 0, p[1]);
        }
        if (pid < 0) {
            perror("fork");
            return 1;
        }
    }
    close(p[1]);
    uint64_t placed = 0, missed = 0, unjudged = 0;
    char buf[4096];
    ssize_t n;
    while ((n = read(p[0], buf, sizeof buf)) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            perror("read");
            break;
        }
        for (ssize_t i = 0; i < n; i++)
            buf[i] == 'P' ? placed++ : buf[i] == 'U' ? unjudged++ : missed++;
    }
    while (wait(NULL) > 0 || errno == EINTR)
        ;
    double el = (double)(mono_ns() - t0) / 1e9;
    uint64_t reported = placed + missed + unjudged;
    printf(
        "children=%u\nreported=%llu\nplaced=%llu\nnot_placed=%llu\nunjudged=%llu\nelapsed_s=%.3f\nexecs_per_s=%.0f\n",
        o.children, (unsigned long long)reported, (unsigned long long)placed, (unsigned long long)missed,
        (unsigned long long)unjudged, el, (double)o.children / el);
    return 0;
}
