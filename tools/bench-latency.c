/* SPDX-License-Identifier: GPL-2.0-or-later */
/* exec -> placement latency for tools/bench/latency.sh.
 *
 * One child at a time: the forked child reads CLOCK_MONOTONIC just before it
 * execs PROBE (a copy of this program under a jitter name) and passes the
 * time in argv. The probe polls its own affinity with sched_getaffinity from
 * its first instruction in main() until the mask is EXPECT, and reports two
 * times since that clock reading: to its first sched_getaffinity (the cost of
 * exec itself, the baseline) and to the first call that saw the narrowed mask.
 *
 *   bench-latency --probe PATH [--samples N] [--interval-ms MS]
 *                 [--expect CPULIST] [--timeout-ms MS]
 *
 * Prints key=value lines (microseconds). Numbers, not a test. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

struct sample {
    int64_t first_ns;  /* exec to the first sched_getaffinity */
    int64_t placed_ns; /* exec to the narrowed mask; -1: not within the timeout */
};

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* argv: PROBE --probe-run FD T0_NS EXPECT TIMEOUT_MS */
static int probe_main(int argc, char **argv)
{
    if (argc != 6)
        return 2;
    int64_t t0 = strtoll(argv[3], NULL, 10);
    cpu_set_t expect, now;
    struct sample s = {.first_ns = -1, .placed_ns = -1};
    int64_t deadline = t0 + (int64_t)atoi(argv[5]) * 1000000;
    if (cpulist_parse(argv[4], &expect) < 0)
        return 2;
    for (;;) {
        int r = sched_getaffinity(0, sizeof now, &now);
        int64_t t = mono_ns();
        if (s.first_ns < 0)
            s.first_ns = t - t0;
        if (r == 0 && CPU_EQUAL(&now, &expect)) {
            s.placed_ns = t - t0;
            break;
        }
        if (t > deadline)
            break;
    }
    return write(atoi(argv[2]), &s, sizeof s) == (ssize_t)sizeof s ? 0 : 1;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of a sorted array. */
static double pct_us(const int64_t *v, size_t n, double p)
{
    if (n == 0)
        return -1;
    size_t k = (size_t)(p / 100.0 * (double)n + 0.999999);
    k = k == 0 ? 0 : k - 1;
    return (double)v[k < n ? k : n - 1] / 1000.0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--probe-run") == 0)
        return probe_main(argc, argv);

    const char *probe = NULL, *expect = "0";
    unsigned samples = 500, interval_ms = 20, timeout_ms = 1000;
    static const struct option longopts[] = {
        {"probe", required_argument, NULL, 'P'},
        {"samples", required_argument, NULL, 'n'},
        {"interval-ms", required_argument, NULL, 'i'},
        {"expect", required_argument, NULL, 'e'},
        {"timeout-ms", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},
        {0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "P:n:i:e:t:h", longopts, NULL)) >= 0) {
        switch (c) {
        case 'P':
            probe = optarg;
            break;
        case 'n':
            samples = (unsigned)atoi(optarg);
            break;
        case 'i':
            interval_ms = (unsigned)atoi(optarg);
            break;
        case 'e':
            expect = optarg;
            break;
        case 't':
            timeout_ms = (unsigned)atoi(optarg);
            break;
        default:
            fprintf(stderr, "usage: bench-latency --probe PATH [--samples N] [--interval-ms MS]\n"
                            "                     [--expect CPULIST] [--timeout-ms MS]\n");
            return c == 'h' ? 0 : 2;
        }
    }
    cpu_set_t set;
    if (!probe || samples == 0 || cpulist_parse(expect, &set) < 0) {
        fprintf(stderr, "bench-latency: need --probe, --samples > 0 and a valid --expect\n");
        return 2;
    }
    int64_t *first = calloc(samples, sizeof *first), *placed = calloc(samples, sizeof *placed);
    /* placed - first per sample: how long the probe, once running, still
     * waited (0: confined before its first look). exec completes, and the
     * daemon hears of it, somewhere between the two clock readings, so this
     * is a lower bound of the daemon's latency and placed_ns an upper one. */
    int64_t *after = calloc(samples, sizeof *after);
    size_t n_at_first = 0;
    if (!first || !placed || !after) {
        fprintf(stderr, "bench-latency: out of memory\n");
        return 1;
    }
    const char *name = strrchr(probe, '/') ? strrchr(probe, '/') + 1 : probe;
    size_t n_first = 0, n_placed = 0, n_lost = 0;
    char timeout_s[16];
    snprintf(timeout_s, sizeof timeout_s, "%u", timeout_ms);
    for (unsigned i = 0; i < samples; i++) {
        int p[2];
        if (pipe(p) < 0) {
            perror("pipe");
            return 1;
        }
        pid_t pid = fork();
        if (pid == 0) {
            char fd_s[16], t0_s[32];
            close(p[0]);
            snprintf(fd_s, sizeof fd_s, "%d", p[1]);
            snprintf(t0_s, sizeof t0_s, "%" PRId64, mono_ns());
            char *const args[] = {(char *)name, "--probe-run", fd_s, t0_s, (char *)expect, timeout_s, NULL};
            execv(probe, args);
            _exit(127);
        }
        close(p[1]);
        if (pid < 0) {
            perror("fork");
            return 1;
        }
        struct sample s;
        ssize_t n;
        while ((n = read(p[0], &s, sizeof s)) < 0 && errno == EINTR)
            ;
        close(p[0]);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
        if (n != (ssize_t)sizeof s) {
            n_lost++;
        } else {
            first[n_first++] = s.first_ns;
            if (s.placed_ns >= 0) {
                after[n_placed] = s.placed_ns - s.first_ns;
                n_at_first += after[n_placed] == 0;
                placed[n_placed++] = s.placed_ns;
            }
        }
        nanosleep(&(struct timespec){.tv_sec = interval_ms / 1000, .tv_nsec = (long)(interval_ms % 1000) * 1000000},
                  NULL);
    }
    qsort(first, n_first, sizeof *first, cmp_i64);
    qsort(placed, n_placed, sizeof *placed, cmp_i64);
    qsort(after, n_placed, sizeof *after, cmp_i64);
    printf("samples=%u\nreported=%zu\nplaced=%zu\nlost=%zu\n", samples, n_first, n_placed, n_lost);
    printf("first_p50_us=%.1f\nfirst_p99_us=%.1f\nfirst_max_us=%.1f\n", pct_us(first, n_first, 50),
           pct_us(first, n_first, 99), pct_us(first, n_first, 100));
    printf("placed_p50_us=%.1f\nplaced_p99_us=%.1f\nplaced_max_us=%.1f\n", pct_us(placed, n_placed, 50),
           pct_us(placed, n_placed, 99), pct_us(placed, n_placed, 100));
    printf("after_first_p50_us=%.1f\nafter_first_p99_us=%.1f\nafter_first_max_us=%.1f\nplaced_at_first=%zu\n",
           pct_us(after, n_placed, 50), pct_us(after, n_placed, 99), pct_us(after, n_placed, 100), n_at_first);
    free(first);
    free(placed);
    free(after);
    return 0;
}
