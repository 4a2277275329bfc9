/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Wake-up latency of a periodic thread beside a CPU hog on the same CPU, with
 * the waker's EEVDF slice as given, for tools/bench/slice.sh.
 *
 * A hog child (a busy loop, SCHED_OTHER nice 0) and the waker are pinned to
 * CPU; the waker sleeps to absolute deadlines every period and records how
 * late it woke (clock_nanosleep on CLOCK_MONOTONIC, as cyclictest does), then
 * spins for work_us (what a jitter task does when it wakes). The slice is set
 * through the daemon's own slice module on the waker's thread.
 *
 *   bench-slice [--cpu N] [--period-us US] [--seconds S] [--work-us US]
 *               [--wakers N] [--slice-us US|default] [--nice N] [--no-hog] [--hog-only]
 *
 * --nice applies to the hog and the wakers alike: a lower nice shields the
 * pair from other work on a shared machine while keeping their weights equal.
 *
 * With several wakers (threads, all pinned to the same CPU, started at once
 * so they wake together as a packed program's threads do) the figures pool
 * every wake-up of all of them.
 *
 * Prints key=value lines: latency percentiles (µs), the waker's run-queue
 * wait per timeslice from its schedstat (what the run-delay guard sees), and
 * the hog's loops per second of wall time and per second on the CPU.
 * Numbers, not a test. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "delay-guard.h"
#include "slice.h"
#include "sysops.h"
#include "util.h"

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set) < 0 ? -errno : 0;
}

static int read_schedstat(pid_t tid, struct delay_schedstat *ret)
{
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", (int)tid);
    ssize_t n = read_file(path, buf, sizeof buf);
    if (n < 0)
        return (int)n;
    return delay_parse_schedstat(buf, ret);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

struct hog_shared {
    _Atomic uint64_t loops;
    _Atomic int stop;
};

static void hog_run(struct hog_shared *sh)
{
    uint64_t local = 0;
    while (!atomic_load_explicit(&sh->stop, memory_order_relaxed)) {
        /* a little arithmetic the compiler cannot drop */
        for (volatile int i = 0; i < 1000; i++)
            ;
        local++;
        atomic_store_explicit(&sh->loops, local, memory_order_relaxed);
    }
}

struct waker {
    pthread_t thread;
    unsigned period_us, work_us;
    long slice_us;
    const struct slice_support *sup;
    size_t n_max, n;
    int64_t *lat;
    struct delay_schedstat ss0, ss1;
    struct timespec start;
    double slice_read_us;
    int error;
};

static void *waker_run(void *arg)
{
    struct waker *w = arg;
    struct slice_saved saved = {.applied = false};
    pid_t self = gettid();
    if (w->slice_us >= 0) {
        int r = slice_apply(&sysops_real, w->sup, 0, (uint64_t)w->slice_us * 1000, &saved);
        if (r < 0) {
            fprintf(stderr, "bench-slice: setting a %ld µs slice: %s\n", w->slice_us, strerror(-r));
            w->error = r;
            return NULL;
        }
    }
    struct sysops_sched_attr attr;
    if (sysops_real.getattr(NULL, 0, &attr) == 0)
        w->slice_read_us = attr.runtime_ns / 1000.0;
    read_schedstat(self, &w->ss0);
    struct timespec next = w->start;
    for (w->n = 0; w->n < w->n_max; w->n++) {
        next.tv_nsec += (long)w->period_us * 1000;
        while (next.tv_nsec >= 1000000000) {
            next.tv_nsec -= 1000000000;
            next.tv_sec++;
        }
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
            ;
        int64_t now = mono_ns();
        w->lat[w->n] = now - ((int64_t)next.tv_sec * 1000000000 + next.tv_nsec);
        /* the jitter's bit of work */
        while (mono_ns() - now < (int64_t)w->work_us * 1000)
            ;
    }
    read_schedstat(self, &w->ss1);
    if (saved.applied)
        slice_restore(&sysops_real, 0, &saved);
    return NULL;
}

int main(int argc, char **argv)
{
    int cpu = 0;
    unsigned period_us = 1000, seconds = 10, work_us = 20, n_wakers = 1;
    long slice_us = -1; /* -1: leave the default */
    bool hog = true, waker = true;
    int nice_val = 0;
    static const struct option opts[] = {
        {"cpu", required_argument, NULL, 'c'},      {"period-us", required_argument, NULL, 'p'},
        {"seconds", required_argument, NULL, 's'},  {"work-us", required_argument, NULL, 'w'},
        {"slice-us", required_argument, NULL, 'l'}, {"no-hog", no_argument, NULL, 'n'},
        {"hog-only", no_argument, NULL, 'o'},       {"wakers", required_argument, NULL, 'k'},
        {"nice", required_argument, NULL, 'i'},     {0},
    };
    for (int c; (c = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
        switch (c) {
        case 'c':
            cpu = atoi(optarg);
            break;
        case 'p':
            period_us = (unsigned)atoi(optarg);
            break;
        case 's':
            seconds = (unsigned)atoi(optarg);
            break;
        case 'w':
            work_us = (unsigned)atoi(optarg);
            break;
        case 'l':
            slice_us = strcmp(optarg, "default") == 0 ? -1 : atol(optarg);
            break;
        case 'n':
            hog = false;
            break;
        case 'o':
            waker = false;
            break;
        case 'k':
            n_wakers = (unsigned)atoi(optarg);
            break;
        case 'i':
            nice_val = atoi(optarg);
            break;
        default:
            return 2;
        }
    }
    if (period_us == 0 || seconds == 0 || n_wakers == 0 || n_wakers > 64)
        return 2;

    int r = pin(cpu);
    if (r < 0) {
        fprintf(stderr, "bench-slice: pinning to CPU %d: %s\n", cpu, strerror(-r));
        return 1;
    }

    /* Before the fork and the threads: both inherit it. */
    if (nice_val != 0 && setpriority(PRIO_PROCESS, 0, nice_val) < 0) {
        perror("bench-slice: setpriority");
        return 1;
    }

    struct hog_shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        perror("bench-slice: mmap");
        return 1;
    }
    pid_t hog_pid = -1;
    if (hog) {
        hog_pid = fork();
        if (hog_pid < 0) {
            perror("bench-slice: fork");
            return 1;
        }
        if (hog_pid == 0) {
            hog_run(sh);
            _exit(0);
        }
    }

    struct slice_support sup;
    slice_detect(&sysops_real, &sup);
    if (waker && slice_us >= 0 && !sup.supported) {
        fprintf(stderr, "bench-slice: custom slices unsupported: %s\n", sup.reason);
        r = -EOPNOTSUPP;
        goto out;
    }

    /* Let the hog settle into its slice before measuring. */
    usleep(200000);

    struct waker *w = calloc(n_wakers, sizeof *w);
    size_t n_max = waker ? (size_t)seconds * 1000000 / period_us : 0;
    if (!w) {
        r = -ENOMEM;
        goto out;
    }
    struct delay_schedstat hog0 = {0}, hog1 = {0};
    char hog_path[64], buf[256];
    snprintf(hog_path, sizeof hog_path, "/proc/%d/schedstat", (int)hog_pid);
    if (hog && read_file(hog_path, buf, sizeof buf) > 0)
        delay_parse_schedstat(buf, &hog0);
    uint64_t loops0 = atomic_load(&sh->loops);
    int64_t t_start = mono_ns();
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    unsigned started = 0;
    if (waker)
        for (; started < n_wakers; started++) {
            w[started] = (struct waker){.period_us = period_us,
                                        .work_us = work_us,
                                        .slice_us = slice_us,
                                        .sup = &sup,
                                        .n_max = n_max,
                                        .start = start};
            w[started].lat = calloc(n_max ? n_max : 1, sizeof(int64_t));
            if (!w[started].lat || pthread_create(&w[started].thread, NULL, waker_run, &w[started]) != 0) {
                free(w[started].lat);
                fprintf(stderr, "bench-slice: starting waker %u failed\n", started);
                r = -ENOMEM;
                break;
            }
        }
    else
        sleep(seconds);
    for (unsigned i = 0; i < started; i++) {
        pthread_join(w[i].thread, NULL);
        if (w[i].error)
            r = w[i].error;
    }
    int64_t t_end = mono_ns();
    uint64_t loops1 = atomic_load(&sh->loops);
    if (hog && read_file(hog_path, buf, sizeof buf) > 0)
        delay_parse_schedstat(buf, &hog1);

    size_t n = 0;
    for (unsigned i = 0; i < started; i++)
        n += w[i].n;
    int64_t *lat = calloc(n ? n : 1, sizeof *lat);
    uint64_t wait = 0, slices = 0;
    n = 0;
    for (unsigned i = 0; lat && i < started; i++) {
        memcpy(lat + n, w[i].lat, w[i].n * sizeof *lat);
        n += w[i].n;
        wait += w[i].ss1.wait_ns - w[i].ss0.wait_ns;
        slices += w[i].ss1.timeslices - w[i].ss0.timeslices;
        free(w[i].lat);
    }
    if (started)
        printf("waker_slice_us=%.1f\n", w[0].slice_read_us);
    free(w);
    if (r < 0 || !lat) {
        free(lat);
        r = r < 0 ? r : -ENOMEM;
        goto out;
    }
    if (n > 0) {
        qsort(lat, n, sizeof *lat, cmp_i64);
        printf("samples=%zu\n", n);
        printf("lat_p50_us=%.1f\n", lat[n / 2] / 1000.0);
        printf("lat_p99_us=%.1f\n", lat[(n * 99) / 100] / 1000.0);
        printf("lat_p999_us=%.1f\n", lat[(n * 999) / 1000] / 1000.0);
        printf("lat_max_us=%.1f\n", lat[n - 1] / 1000.0);
        printf("wait_per_slice_us=%.1f\n", slices ? (double)wait / slices / 1000.0 : 0.0);
    }
    double wall_s = (double)(t_end - t_start) / 1e9;
    if (hog) {
        double hog_cpu_s = (double)(hog1.run_ns - hog0.run_ns) / 1e9;
        printf("hog_loops_per_s=%.0f\n", (double)(loops1 - loops0) / wall_s);
        printf("hog_cpu_share=%.3f\n", hog_cpu_s / wall_s);
        printf("hog_loops_per_cpu_s=%.0f\n", hog_cpu_s > 0 ? (double)(loops1 - loops0) / hog_cpu_s : 0.0);
        printf("hog_slices=%" PRIu64 "\n", hog1.timeslices - hog0.timeslices);
    }
    free(lat);
    r = 0;

out:
    if (hog_pid > 0) {
        atomic_store(&sh->stop, 1);
        kill(hog_pid, SIGTERM);
        waitpid(hog_pid, NULL, 0);
    }
    return r < 0 ? 1 : 0;
}
