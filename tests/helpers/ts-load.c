/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A process that keeps a given duty cycle: busy for duty% of every period,
 * asleep for the rest. With a low duty and a short period it is a jitter
 * task; with a high duty, pinned to a CPU, it makes that CPU busy.
 * Used by the integration tests and the idle-wake-up benchmark. */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;
static void on_term(int sig) { stop = 1; }

static uint64_t ns_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    unsigned duty_pct = 50, period_ms = 10;
    int cpu = -1;
    double seconds = 0;
    const char *name = NULL, *rename_to = NULL;
    const char *rename_file = NULL;
    const char *heavy_file = NULL; /* -H: CPU-bound from when it exists (a phase change) */
    int c;
    while ((c = getopt(argc, argv, "d:p:c:n:t:r:f:H:h")) >= 0) {
        switch (c) {
        case 'd':
            duty_pct = (unsigned)atoi(optarg);
            break;
        case 'p':
            period_ms = (unsigned)atoi(optarg);
            break;
        case 'c':
            cpu = atoi(optarg);
            break;
        case 'n':
            name = optarg;
            break;
        case 't':
            seconds = atof(optarg);
            break;
        case 'r':
            rename_to = optarg;
            break;
        case 'f':
            rename_file = optarg;
            break;
        case 'H':
            heavy_file = optarg;
            break;
        default:
            fprintf(stderr, "usage: ts-load [-d duty%%] [-p period_ms] [-c cpu] [-n comm] [-t seconds]\n"
                            "               [-r new-comm -f trigger-file]  (rename once the file exists)\n"
                            "               [-H trigger-file]  (busy all the time once the file exists)\n");
            return 2;
        }
    }
    if (duty_pct > 100 || period_ms == 0)
        return 2;
    if (name && prctl(PR_SET_NAME, name, 0, 0, 0) < 0) {
        perror("prctl(PR_SET_NAME)");
        return 1;
    }
    if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) < 0) {
            perror("sched_setaffinity");
            return 1;
        }
    }
    signal(SIGTERM, on_term);
    signal(SIGINT, on_term);
    uint64_t period = (uint64_t)period_ms * 1000000ull, busy = period * duty_pct / 100;
    uint64_t end = seconds > 0 ? ns_now() + (uint64_t)(seconds * 1e9) : 0;
    uint64_t next = ns_now();
    volatile unsigned long sink = 0;
    while (!stop && (!end || ns_now() < end)) {
        if (rename_to && rename_file && access(rename_file, F_OK) == 0) {
            if (prctl(PR_SET_NAME, rename_to, 0, 0, 0) < 0) {
                perror("prctl(PR_SET_NAME)");
                return 1;
            }
            rename_to = NULL;
        }
        if (heavy_file && access(heavy_file, F_OK) == 0) {
            busy = period; /* the same thread turns CPU-bound */
            heavy_file = NULL;
        }
        uint64_t start = ns_now();
        while (ns_now() - start < busy)
            sink++;
        next += period;
        struct timespec ts = {.tv_sec = (time_t)(next / 1000000000ull), .tv_nsec = (long)(next % 1000000000ull)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR && !stop)
            ;
        if (ns_now() > next + period)
            next = ns_now(); /* fell behind (preempted): do not try to catch up */
    }
    return 0;
}
