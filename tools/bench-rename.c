/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The two sides of the rename-flood benchmark (tools/bench/rename-flood.sh):
 *
 *   bench-rename flood SECONDS THREADS   THREADS threads rename themselves
 *                                        (prctl PR_SET_NAME) as fast as they
 *                                        can; prints the renames made
 *   bench-rename work SECONDS            one CPU-bound loop; prints the
 *                                        millions of iterations it did
 *
 * A local user's flood against another user's work: the daemon's share of
 * the CPU shows as work not done. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

static double seconds;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *renamer(void *arg)
{
    uint64_t *n = arg;
    char name[16];
    double end = now_s() + seconds;
    while (now_s() < end)
        for (int k = 0; k < 1000; k++) {
            snprintf(name, sizeof name, "bf%llu", (unsigned long long)(*n)++);
            prctl(PR_SET_NAME, name, 0, 0, 0);
        }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "flood") != 0 && strcmp(argv[1], "work") != 0) ||
        (seconds = atof(argv[2])) <= 0) {
        fprintf(stderr, "usage: bench-rename flood SECONDS THREADS | work SECONDS\n");
        return 2;
    }
    if (strcmp(argv[1], "work") == 0) {
        volatile uint64_t n = 0;
        double end = now_s() + seconds;
        while (now_s() < end)
            for (int i = 0; i < 100000; i++)
                n++;
        printf("%llu\n", (unsigned long long)(n / 1000000));
        return 0;
    }
    int nt = argc > 3 ? atoi(argv[3]) : 2;
    if (nt < 1 || nt > 64) {
        fprintf(stderr, "bench-rename: THREADS must be 1 to 64\n");
        return 2;
    }
    pthread_t t[64];
    uint64_t counts[64] = {0}, total = 0;
    for (int i = 0; i < nt; i++)
        if (pthread_create(&t[i], NULL, renamer, &counts[i]) != 0) {
            fprintf(stderr, "bench-rename: pthread_create failed\n");
            return 1;
        }
    for (int i = 0; i < nt; i++) {
        pthread_join(t[i], NULL);
        total += counts[i];
    }
    printf("%llu\n", (unsigned long long)total);
    return 0;
}
