/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ts-phase: one thread that is light and bursty for a while, then computes
 * without pause: the phase-changer of the behaviour benchmark (and of the
 * recorded samples of its unit test). Both phases run in the same thread,
 * so whatever classified it in the first phase must let go in the second.
 *
 * usage: ts-phase [-l LIGHT_S] [-H HEAVY_S] [-i INTERVAL_US] [-r RUN_US]
 *   light: every INTERVAL_US (default 5000) compute RUN_US (default 30),
 *          for LIGHT_S seconds (default 20);
 *   heavy: compute for HEAVY_S seconds (default 20; 0: until killed).
 * Prints "light MONO_MS REAL_MS" and "heavy MONO_MS REAL_MS" (CLOCK_MONOTONIC
 * and CLOCK_REALTIME, in ms) as each phase starts, so that a benchmark can
 * time the reaction to the change (a shell has only the wall clock). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t real_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000ull + (uint64_t)ts.tv_nsec / 1000000;
}

static volatile uint64_t sink;

static void spin_until(uint64_t end_ns)
{
    uint64_t x = sink;
    while (now_ns() < end_ns)
        for (int i = 0; i < 200; i++)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
    sink = x;
}

static int number(const char *s, unsigned long *ret)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end)
        return -EINVAL;
    *ret = v;
    return 0;
}

int main(int argc, char **argv)
{
    unsigned long light_s = 20, heavy_s = 20, interval_us = 5000, run_us = 30;
    int opt;
    while ((opt = getopt(argc, argv, "l:H:i:r:")) != -1) {
        unsigned long *v = opt == 'l'   ? &light_s
                           : opt == 'H' ? &heavy_s
                           : opt == 'i' ? &interval_us
                           : opt == 'r' ? &run_us
                                        : NULL;
        if (!v || number(optarg, v) < 0) {
            fprintf(stderr, "usage: ts-phase [-l LIGHT_S] [-H HEAVY_S] [-i INTERVAL_US] [-r RUN_US]\n");
            return 2;
        }
    }
    if (interval_us == 0 || run_us >= interval_us) {
        fprintf(stderr, "ts-phase: RUN_US must be below INTERVAL_US\n");
        return 2;
    }

    uint64_t start = now_ns();
    printf("light %llu %llu\n", (unsigned long long)(start / 1000000), (unsigned long long)real_ms());
    fflush(stdout);
    uint64_t next = start, light_end = start + light_s * 1000000000ull;
    while (next < light_end) {
        spin_until(now_ns() + run_us * 1000);
        next += interval_us * 1000;
        struct timespec ts = {.tv_sec = (time_t)(next / 1000000000ull), .tv_nsec = (long)(next % 1000000000ull)};
        int r;
        while ((r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL)) == EINTR)
            ;
        if (r != 0) {
            fprintf(stderr, "ts-phase: clock_nanosleep: %s\n", strerror(r));
            return 1;
        }
    }

    uint64_t heavy = now_ns();
    printf("heavy %llu %llu\n", (unsigned long long)(heavy / 1000000), (unsigned long long)real_ms());
    fflush(stdout);
    if (heavy_s == 0)
        for (;;)
            spin_until(now_ns() + 1000000000ull);
    spin_until(heavy + heavy_s * 1000000000ull);
    return 0;
}
