/* SPDX-License-Identifier: GPL-2.0-or-later */
/* N sleeping threads for the steady-state benchmark (tools/bench/steady.sh):
 * every JITTER_EVERY-th is named JITTER_NAME, the rest IDLE_NAME, so a rule
 * makes a share of them jitter tasks that the daemon samples every tick.
 * Prints "ready" once every thread exists and has its name, then sleeps
 * until killed.
 *
 *   bench-threads -n N [-j JITTER_EVERY] [-J JITTER_NAME] [-I IDLE_NAME] */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define STACK_BYTES (64 * 1024) /* 10,000 default 8 MiB stacks would reserve 80 GB */

static const char *jitter_name = "tsst-jitter", *idle_name = "tsst-idle";
static unsigned jitter_every = 10;
static pthread_barrier_t named;

static void *sleeper(void *arg)
{
    uintptr_t i = (uintptr_t)arg;
    prctl(PR_SET_NAME, jitter_every && i % jitter_every == 0 ? jitter_name : idle_name, 0, 0, 0);
    pthread_barrier_wait(&named);
    for (;;)
        pause();
    return NULL;
}

int main(int argc, char **argv)
{
    unsigned n = 1000;
    int c;
    while ((c = getopt(argc, argv, "n:j:J:I:h")) >= 0) {
        switch (c) {
        case 'n':
            n = (unsigned)atoi(optarg);
            break;
        case 'j':
            jitter_every = (unsigned)atoi(optarg);
            break;
        case 'J':
            jitter_name = optarg;
            break;
        case 'I':
            idle_name = optarg;
            break;
        default:
            fprintf(stderr, "usage: bench-threads -n N [-j JITTER_EVERY] [-J JITTER_NAME] [-I IDLE_NAME]\n");
            return c == 'h' ? 0 : 2;
        }
    }
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, STACK_BYTES);
    pthread_barrier_init(&named, NULL, n + 1);
    for (unsigned i = 0; i < n; i++) {
        pthread_t t;
        int r = pthread_create(&t, &attr, sleeper, (void *)(uintptr_t)i);
        if (r) {
            fprintf(stderr, "bench-threads: thread %u of %u: %s\n", i, n, strerror(r));
            return 1;
        }
    }
    pthread_barrier_wait(&named);
    printf("ready\n");
    fflush(stdout);
    for (;;)
        pause();
}
