/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The sides of the hostile-user benchmark (tools/bench/hostile.sh): what an
 * unprivileged user may do to the daemon, and what another user measures
 * of it.
 *
 *   bench-hostile work SECONDS            one CPU-bound loop; prints the
 *                                         millions of iterations it did
 *   bench-hostile probe SECONDS PERIOD_US a timer loop (absolute sleeps of
 *                                         PERIOD_US); prints "p99_us max_us
 *                                         wakeups" of its own wake-up delay
 *   bench-hostile threads SECONDS N       N light threads, each waking every
 *                                         half second for a few microseconds
 *                                         (jitter by behaviour)
 *   bench-hostile spinner SECONDS ON_S    100% of a CPU for ON_S, idle for
 *                                         ON_S, and again (plan changes)
 *   bench-hostile execloop SECONDS PROG   fork and exec PROG in a loop;
 *                                         prints the execs
 *   bench-hostile forkstorm SECONDS       fork children that exit at once, in
 *                                         a loop; prints the forks
 *   bench-hostile ctlflood SECONDS SOCKET connect to the control socket and
 *                                         ask for its status in a loop;
 *                                         prints "connects replies"
 *   bench-hostile renames SECONDS N       N threads (1 to 64) rename
 *                                         themselves (prctl PR_SET_NAME) as
 *                                         fast as they can; prints the
 *                                         renames made
 *
 * tools/bench/rename-flood.sh runs the renames against work as well.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double seconds;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int work(void)
{
    volatile uint64_t n = 0;
    double end = now_s() + seconds;
    while (now_s() < end)
        for (int i = 0; i < 100000; i++)
            n++;
    printf("%llu\n", (unsigned long long)(n / 1000000));
    return 0;
}

static int by_value(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int probe(long period_us)
{
    size_t cap = (size_t)(seconds * 1e6 / (double)period_us) + 16, n = 0;
    uint64_t *late = calloc(cap, sizeof *late);
    if (!late)
        return 1;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    double end = now_s() + seconds;
    while (now_s() < end && n < cap) {
        next.tv_nsec += period_us * 1000;
        while (next.tv_nsec >= 1000000000) {
            next.tv_nsec -= 1000000000;
            next.tv_sec++;
        }
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
            ;
        struct timespec woke;
        clock_gettime(CLOCK_MONOTONIC, &woke);
        int64_t d = (int64_t)(woke.tv_sec - next.tv_sec) * 1000000000 + (woke.tv_nsec - next.tv_nsec);
        late[n++] = d > 0 ? (uint64_t)d : 0;
    }
    qsort(late, n, sizeof *late, by_value);
    printf("%.0f %.0f %zu\n", n ? late[n * 99 / 100] / 1e3 : 0, n ? late[n - 1] / 1e3 : 0, n);
    free(late);
    return 0;
}

static void *light(void *arg)
{
    (void)arg;
    struct timespec ts = {.tv_nsec = 500000000};
    double end = now_s() + seconds;
    volatile unsigned x = 0;
    while (now_s() < end) {
        for (int i = 0; i < 200; i++)
            x++;
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static int threads(long n)
{
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, PTHREAD_STACK_MIN > 65536 ? PTHREAD_STACK_MIN : 65536);
    pthread_t *t = calloc((size_t)n, sizeof *t);
    if (!t)
        return 1;
    long made = 0;
    for (; made < n; made++)
        if (pthread_create(&t[made], &a, light, NULL) != 0)
            break;
    fprintf(stderr, "bench-hostile: %ld light threads\n", made);
    for (long i = 0; i < made; i++)
        pthread_join(t[i], NULL);
    free(t);
    printf("%ld\n", made);
    return 0;
}

static int spinner(double on_s)
{
    double end = now_s() + seconds;
    while (now_s() < end) {
        double stop = now_s() + on_s;
        while (now_s() < stop && now_s() < end)
            ;
        struct timespec ts = {.tv_sec = (time_t)on_s, .tv_nsec = (long)((on_s - (double)(time_t)on_s) * 1e9)};
        nanosleep(&ts, NULL);
    }
    return 0;
}

static int execloop(const char *prog)
{
    double end = now_s() + seconds;
    unsigned long n = 0;
    while (now_s() < end) {
        pid_t p = fork();
        if (p < 0)
            continue;
        if (p == 0) {
            execl(prog, prog, (char *)NULL);
            _exit(127);
        }
        waitpid(p, NULL, 0);
        n++;
    }
    printf("%lu\n", n);
    return 0;
}

static int forkstorm(void)
{
    double end = now_s() + seconds;
    unsigned long n = 0;
    while (now_s() < end) {
        pid_t p = fork();
        if (p == 0)
            _exit(0);
        if (p > 0) {
            waitpid(p, NULL, 0);
            n++;
        }
    }
    printf("%lu\n", n);
    return 0;
}

static int ctlflood(const char *path)
{
    static const char req[] = "{\"method\":\"io.turbosched.Status\",\"parameters\":{}}";
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    double end = now_s() + seconds;
    unsigned long connects = 0, replies = 0;
    char buf[65536];
    while (now_s() < end) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return 1;
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
            connects++;
            /* varlink: a JSON object ended by a NUL */
            if (write(fd, req, sizeof req) == (ssize_t)sizeof req) {
                ssize_t k;
                while ((k = read(fd, buf, sizeof buf)) > 0)
                    if (memchr(buf, 0, (size_t)k)) {
                        replies++;
                        break;
                    }
            }
        }
        close(fd);
    }
    printf("%lu %lu\n", connects, replies);
    return 0;
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

static int renames(int nt)
{
    if (nt < 1 || nt > 64) {
        fprintf(stderr, "bench-hostile: THREADS must be 1 to 64\n");
        return 2;
    }
    pthread_t t[64];
    uint64_t counts[64] = {0}, total = 0;
    for (int i = 0; i < nt; i++)
        if (pthread_create(&t[i], NULL, renamer, &counts[i]) != 0) {
            fprintf(stderr, "bench-hostile: pthread_create failed\n");
            return 1;
        }
    for (int i = 0; i < nt; i++) {
        pthread_join(t[i], NULL);
        total += counts[i];
    }
    printf("%llu\n", (unsigned long long)total);
    return 0;
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    if (argc < 3 || (seconds = atof(argv[2])) <= 0) {
        fprintf(stderr,
                "usage: bench-hostile work|probe|threads|spinner|execloop|forkstorm|ctlflood|renames SECONDS [ARG]\n");
        return 2;
    }
    const char *what = argv[1], *arg = argc > 3 ? argv[3] : NULL;
    if (strcmp(what, "work") == 0)
        return work();
    if (strcmp(what, "probe") == 0)
        return probe(arg ? atol(arg) : 1000);
    if (strcmp(what, "threads") == 0)
        return threads(arg ? atol(arg) : 20000);
    if (strcmp(what, "spinner") == 0)
        return spinner(arg ? atof(arg) : 3);
    if (strcmp(what, "execloop") == 0 && arg)
        return execloop(arg);
    if (strcmp(what, "forkstorm") == 0)
        return forkstorm();
    if (strcmp(what, "ctlflood") == 0 && arg)
        return ctlflood(arg);
    if (strcmp(what, "renames") == 0)
        return renames(arg ? atoi(arg) : 2);
    fprintf(stderr, "bench-hostile: unknown mode or missing argument\n");
    return 2;
}
