/* SPDX-License-Identifier: GPL-2.0-or-later */
/* turbo-bench: a synthetic mix of CPU-intensive and jitter threads, after the
 * workload TurboSched was evaluated with (turbo_bench.c in parthsl/tools).
 *
 * Intensive threads sum an array of doubles in a loop and count the additions.
 * Jitter threads wake every period on an absolute timer, spin for a fixed time
 * and sleep again; the gap between the intended and the actual wake-up is
 * their latency. Both kinds record the CPUs they were seen on, so a run under
 * turboschedd shows where the jitter went.
 *
 *   turbo-bench -n 4 -m 4 -p 3 -w 300 -t 10 [--json]
 *
 * --ops-from S counts the intensive threads' ops over the last T - S
 * seconds only, and --ops-until U up to U seconds in: a busy job that runs
 * through a whole benchmark round while its throughput is taken over the
 * round's measuring window (which the harness may leave before the end, to
 * look at the threads without disturbing what it measures).
 */
#include <errno.h>
#include <inttypes.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

#define ARRAY_LEN 10000 /* turbo_bench's array_size */
#define NAME_INTENSIVE "tb-intensive"
#define NAME_JITTER "tb-jitter"

struct options {
    unsigned n_intensive;
    unsigned n_jitter;
    unsigned period_ms;
    unsigned work_us;
    unsigned time_s;
    bool json;
    bool uclamp;          /* jitter threads ask for util_max = 0, as turbo_bench -u did */
    int intensive_cpu;    /* pin intensive threads here (-1: anywhere); jitter stays free */
    unsigned duty_pct;    /* intensive threads compute this share of each 10 ms, sleep the rest */
    unsigned ops_from_s;  /* count intensive ops from this many seconds in (0: from the start) */
    unsigned ops_until_s; /* ... up to this many seconds in (0: to the end) */
};

struct intensive {
    pthread_t thread;
    bool started;
    _Atomic uint64_t ops;
    cpu_set_t cpus;
};

struct jitter {
    pthread_t thread;
    bool started;
    uint64_t *lat_ns; /* one sample per wake-up */
    size_t n_lat, cap_lat;
    uint64_t wakeups, missed; /* missed: periods skipped because work overran */
    cpu_set_t cpus;
};

/* uapi struct sched_attr (linux/sched/types.h clashes with glibc's sched.h) */
struct bench_sched_attr {
    uint32_t size, sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime, sched_deadline, sched_period;
    uint32_t sched_util_min, sched_util_max;
};
#define BENCH_FLAG_KEEP_POLICY 0x08
#define BENCH_FLAG_KEEP_PARAMS 0x10
#define BENCH_FLAG_UTIL_CLAMP_MAX 0x40

static atomic_bool stop_flag;
static atomic_int uclamp_err; /* first error from sched_setattr, as -errno */
static struct options opt = {
    .n_intensive = 1,
    .n_jitter = 2,
    .period_ms = 3,
    .work_us = 300,
    .time_s = 10,
    .intensive_cpu = -1,
    .duty_pct = 100,
};

static uint64_t ts_ns(const struct timespec *ts)
{
    return (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
}

static void note_cpu(cpu_set_t *set)
{
    int cpu = sched_getcpu();
    if (cpu >= 0 && cpu < CPU_SETSIZE)
        CPU_SET(cpu, set);
}

static void *intensive_main(void *arg)
{
    struct intensive *t = arg;
    _cleanup_free_ double *a = malloc(ARRAY_LEN * sizeof(double));
    volatile double sum = 0;

    pthread_setname_np(pthread_self(), NAME_INTENSIVE);
    if (opt.intensive_cpu >= 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(opt.intensive_cpu, &one);
        if (sched_setaffinity(0, sizeof(one), &one) < 0)
            fprintf(stderr, "pinning intensive thread to CPU %d: %s\n", opt.intensive_cpu, strerror(errno));
    }
    if (!a)
        return NULL;
    for (unsigned i = 0; i < ARRAY_LEN; i++)
        a[i] = (double)(i % 97) + 0.1;

    /* Below 100% duty: compute for duty% of each period, sleep to its end
     * (a busy core that still has room, as a POWER core beside its SMT
     * siblings has). */
    const uint64_t period_ns = 10000000ull;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    uint64_t period_start = ts_ns(&now);
    while (!atomic_load_explicit(&stop_flag, memory_order_relaxed)) {
        double s = 0;
        for (unsigned i = 0; i < ARRAY_LEN; i++)
            s += a[i];
        sum += s;
        atomic_fetch_add_explicit(&t->ops, ARRAY_LEN, memory_order_relaxed);
        note_cpu(&t->cpus);
        if (opt.duty_pct >= 100)
            continue;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (ts_ns(&now) - period_start < period_ns * opt.duty_pct / 100)
            continue;
        period_start += period_ns;
        if (period_start < ts_ns(&now))
            period_start = ts_ns(&now); /* overran (preempted): start afresh */
        struct timespec until = {.tv_sec = (time_t)(period_start / 1000000000ull),
                                 .tv_nsec = (long)(period_start % 1000000000ull)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
            ;
    }
    return NULL;
}

static void spin_until(uint64_t end_ns)
{
    struct timespec now;
    volatile uint64_t x = 0;

    do {
        for (unsigned i = 0; i < 256; i++)
            x += 45; /* turbo_bench's jitter adds 45 in a loop */
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (ts_ns(&now) < end_ns);
}

static void *jitter_main(void *arg)
{
    struct jitter *t = arg;
    const uint64_t period_ns = (uint64_t)opt.period_ms * 1000000ull;
    struct timespec now;
    uint64_t next_ns;

    pthread_setname_np(pthread_self(), NAME_JITTER);
    if (opt.uclamp) {
        struct bench_sched_attr attr = {
            .size = sizeof(attr),
            /* keep policy and nice, change only the clamp */
            .sched_flags = BENCH_FLAG_KEEP_POLICY | BENCH_FLAG_KEEP_PARAMS | BENCH_FLAG_UTIL_CLAMP_MAX,
            .sched_util_max = 0,
        };
        if (syscall(SYS_sched_setattr, 0, &attr, 0) < 0) {
            int expected = 0;
            atomic_compare_exchange_strong(&uclamp_err, &expected, -errno);
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    next_ns = ts_ns(&now) + period_ns;

    while (!atomic_load_explicit(&stop_flag, memory_order_relaxed)) {
        struct timespec target = {
            .tv_sec = (time_t)(next_ns / 1000000000ull),
            .tv_nsec = (long)(next_ns % 1000000000ull),
        };
        /* Absolute time, so the period does not drift by the work and the
         * wake-up latency; EINTR only comes from a signal we do not expect. */
        int r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &target, NULL);
        if (r != 0 && r != EINTR)
            break;
        clock_gettime(CLOCK_MONOTONIC, &now);
        uint64_t woke_ns = ts_ns(&now);
        if (woke_ns < next_ns)
            continue;
        if (t->n_lat == t->cap_lat) {
            size_t cap = t->cap_lat ? t->cap_lat * 2 : 1024;
            uint64_t *p = realloc(t->lat_ns, cap * sizeof(*p));
            if (!p)
                break;
            t->lat_ns = p;
            t->cap_lat = cap;
        }
        t->lat_ns[t->n_lat++] = woke_ns - next_ns;
        t->wakeups++;
        note_cpu(&t->cpus);
        spin_until(woke_ns + (uint64_t)opt.work_us * 1000ull);
        note_cpu(&t->cpus);

        next_ns += period_ns;
        clock_gettime(CLOCK_MONOTONIC, &now);
        while (next_ns <= ts_ns(&now)) {
            next_ns += period_ns;
            t->missed++;
        }
    }
    return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of a sorted array. */
static uint64_t percentile(const uint64_t *v, size_t n, unsigned pct)
{
    if (n == 0)
        return 0;
    size_t rank = (n * pct + 99) / 100;
    return v[rank ? rank - 1 : 0];
}

static void usage(FILE *f)
{
    fprintf(f, "Usage: turbo-bench [OPTIONS]\n"
               "  -n, --intensive N    CPU-intensive threads (default 1)\n"
               "  -m, --jitter M       jitter threads (default 2)\n"
               "  -p, --period-ms P    jitter wake-up period in ms (default 3)\n"
               "  -w, --work-us W      jitter work per period in us (default 300)\n"
               "  -t, --time T         run time in seconds (default 10)\n"
               "  -u, --uclamp-max0    jitter threads set their uclamp util_max to 0\n"
               "  -c, --intensive-cpu C  pin the intensive threads to CPU C (jitter threads stay free)\n"
               "  -d, --intensive-duty D  intensive threads compute D%% of each 10 ms and sleep the rest\n"
               "                       (default 100)\n"
               "      --ops-from S     count intensive ops from S seconds in (default 0)\n"
               "      --ops-until U    ... up to U seconds in (default: to the end)\n"
               "      --json           print the report as JSON\n"
               "  -h, --help\n");
}

static int parse_args(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"intensive", required_argument, NULL, 'n'},
        {"jitter", required_argument, NULL, 'm'},
        {"period-ms", required_argument, NULL, 'p'},
        {"work-us", required_argument, NULL, 'w'},
        {"time", required_argument, NULL, 't'},
        {"json", no_argument, NULL, 'J'},
        {"uclamp-max0", no_argument, NULL, 'u'},
        {"intensive-cpu", required_argument, NULL, 'c'},
        {"intensive-duty", required_argument, NULL, 'd'},
        {"ops-from", required_argument, NULL, 'O'},
        {"ops-until", required_argument, NULL, 'U'},
        {"help", no_argument, NULL, 'h'},
        {},
    };
    int c;

    while ((c = getopt_long(argc, argv, "n:m:p:w:t:c:d:uh", longopts, NULL)) >= 0) {
        unsigned *dst = NULL;
        switch (c) {
        case 'n':
            dst = &opt.n_intensive;
            break;
        case 'm':
            dst = &opt.n_jitter;
            break;
        case 'p':
            dst = &opt.period_ms;
            break;
        case 'w':
            dst = &opt.work_us;
            break;
        case 't':
            dst = &opt.time_s;
            break;
        case 'd':
            dst = &opt.duty_pct;
            break;
        case 'O':
            dst = &opt.ops_from_s;
            break;
        case 'U':
            dst = &opt.ops_until_s;
            break;
        case 'J':
            opt.json = true;
            continue;
        case 'u':
            opt.uclamp = true;
            continue;
        case 'c': {
            unsigned cpu;
            if (parse_uint(optarg, &cpu) < 0 || cpu >= CPU_SETSIZE) {
                fprintf(stderr, "invalid CPU for -c: '%s'\n", optarg);
                return -EINVAL;
            }
            opt.intensive_cpu = (int)cpu;
            continue;
        }
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return -EINVAL;
        }
        if (parse_uint(optarg, dst) < 0) {
            fprintf(stderr, "invalid number for -%c: '%s'\n", c, optarg);
            return -EINVAL;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "unexpected argument '%s'\n", argv[optind]);
        return -EINVAL;
    }
    if (opt.n_intensive + opt.n_jitter == 0 || opt.time_s == 0 || (opt.n_jitter > 0 && opt.period_ms == 0)) {
        fprintf(stderr, "need at least one thread, a run time and a period\n");
        return -EINVAL;
    }
    if (opt.duty_pct == 0 || opt.duty_pct > 100) {
        fprintf(stderr, "intensive duty must be 1..100%%\n");
        return -EINVAL;
    }
    if (opt.ops_until_s == 0)
        opt.ops_until_s = opt.time_s;
    if (opt.ops_from_s >= opt.ops_until_s || opt.ops_until_s > opt.time_s) {
        fprintf(stderr, "need --ops-from < --ops-until <= the run time\n");
        return -EINVAL;
    }
    if (opt.work_us >= opt.period_ms * 1000u)
        fprintf(stderr, "warning: jitter work %u us fills the whole %u ms period\n", opt.work_us, opt.period_ms);
    return 1;
}

static void print_json_cpus(const char *key, const cpu_set_t *set, bool comma)
{
    char buf[4096];
    if (cpulist_format(set, buf, sizeof(buf)) < 0)
        strcpy(buf, "?");
    printf("  \"%s\": \"%s\"%s\n", key, buf, comma ? "," : "");
}

int main(int argc, char **argv)
{
    _cleanup_free_ struct intensive *in = NULL;
    _cleanup_free_ struct jitter *ji = NULL;
    _cleanup_free_ uint64_t *lat = NULL;
    struct timespec t0, t1, t_ops, timeout;
    sigset_t sigs;
    int sig = 0, r;

    r = parse_args(argc, argv);
    if (r <= 0)
        return r < 0 ? 2 : 0;
    r = 0;

    in = calloc(opt.n_intensive ? opt.n_intensive : 1, sizeof(*in));
    ji = calloc(opt.n_jitter ? opt.n_jitter : 1, sizeof(*ji));
    if (!in || !ji) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }

    /* Workers inherit the blocked mask: only main sees SIGINT/SIGTERM, and
     * it answers them with the same report as a timed end. */
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);

    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (unsigned i = 0; i < opt.n_intensive; i++) {
        r = pthread_create(&in[i].thread, NULL, intensive_main, &in[i]);
        if (r) {
            fprintf(stderr, "creating intensive thread %u: %s\n", i, strerror(r));
            break;
        }
        in[i].started = true;
    }
    for (unsigned i = 0; i < opt.n_jitter && r == 0; i++) {
        r = pthread_create(&ji[i].thread, NULL, jitter_main, &ji[i]);
        if (r) {
            fprintf(stderr, "creating jitter thread %u: %s\n", i, strerror(r));
            break;
        }
        ji[i].started = true;
    }

    /* ops_at[0]: each intensive thread's count when the --ops-from window
     * opened (all zero without it), ops_at[1] when --ops-until closed it */
    _cleanup_free_ uint64_t *ops_at = calloc(2 * (opt.n_intensive ? opt.n_intensive : 1), sizeof(*ops_at));
    if (!ops_at) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    t_ops = t0;
    struct timespec t_ops_end = t0;
    bool closed = false; /* the window's end was reached (not cut short by a signal) */
    /* three phases: before the window, the window, after it; at the end of
     * each of the first two, the counts (and the time) are taken */
    unsigned phases[3] = {opt.ops_from_s, opt.ops_until_s - opt.ops_from_s, opt.time_s - opt.ops_until_s};
    for (unsigned ph = 0; ph < 3 && r == 0 && sig == 0; ph++) {
        if (phases[ph]) {
            timeout.tv_sec = phases[ph];
            timeout.tv_nsec = 0;
            do {
                sig = sigtimedwait(&sigs, NULL, &timeout);
                /* EINTR (a stop/continue) restarts with the full timeout: close enough. */
            } while (sig < 0 && errno == EINTR);
            if (sig < 0)
                sig = 0;
        }
        if (ph < 2 && sig == 0) {
            clock_gettime(CLOCK_MONOTONIC, ph == 0 ? &t_ops : &t_ops_end);
            for (unsigned i = 0; i < opt.n_intensive; i++)
                ops_at[ph * opt.n_intensive + i] = atomic_load(&in[i].ops);
            closed = ph == 1;
        }
    }
    atomic_store(&stop_flag, true);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    for (unsigned i = 0; i < opt.n_intensive; i++)
        if (in[i].started)
            pthread_join(in[i].thread, NULL);
    for (unsigned i = 0; i < opt.n_jitter; i++)
        if (ji[i].started)
            pthread_join(ji[i].thread, NULL);

    double elapsed_s = (double)(ts_ns(&t1) - ts_ns(&t0)) / 1e9;
    if (!closed) { /* stopped inside the window: it ends here */
        t_ops_end = t1;
        for (unsigned i = 0; i < opt.n_intensive; i++)
            ops_at[opt.n_intensive + i] = atomic_load(&in[i].ops);
    }
    double ops_s = (double)(ts_ns(&t_ops_end) - ts_ns(&t_ops)) / 1e9; /* the time ops were counted over */
    uint64_t total_ops = 0, wakeups = 0, missed = 0;
    size_t n_lat = 0;
    cpu_set_t cpus_in, cpus_ji;
    CPU_ZERO(&cpus_in);
    CPU_ZERO(&cpus_ji);
    for (unsigned i = 0; i < opt.n_intensive; i++) {
        total_ops += ops_at[opt.n_intensive + i] - ops_at[i];
        CPU_OR(&cpus_in, &cpus_in, &in[i].cpus);
    }
    for (unsigned i = 0; i < opt.n_jitter; i++) {
        n_lat += ji[i].n_lat;
        wakeups += ji[i].wakeups;
        missed += ji[i].missed;
        CPU_OR(&cpus_ji, &cpus_ji, &ji[i].cpus);
    }
    lat = malloc((n_lat ? n_lat : 1) * sizeof(*lat));
    if (!lat) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    n_lat = 0;
    for (unsigned i = 0; i < opt.n_jitter; i++) {
        if (ji[i].n_lat)
            memcpy(lat + n_lat, ji[i].lat_ns, ji[i].n_lat * sizeof(*lat));
        n_lat += ji[i].n_lat;
        free(ji[i].lat_ns);
    }
    qsort(lat, n_lat, sizeof(*lat), cmp_u64);
    double p50 = percentile(lat, n_lat, 50) / 1e3, p90 = percentile(lat, n_lat, 90) / 1e3;
    double p99 = percentile(lat, n_lat, 99) / 1e3, pmax = n_lat ? lat[n_lat - 1] / 1e3 : 0;
    const char *ended = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "time";
    int uerr = atomic_load(&uclamp_err);
    char uclamp_txt[128];
    if (!opt.uclamp)
        snprintf(uclamp_txt, sizeof(uclamp_txt), "not set");
    else if (uerr == 0)
        snprintf(uclamp_txt, sizeof(uclamp_txt), "util_max 0");
    else
        snprintf(uclamp_txt, sizeof(uclamp_txt), "failed: %s", strerror(-uerr));

    if (opt.json) {
        printf("{\n  \"elapsed_s\": %.3f,\n  \"ended_by\": \"%s\",\n", elapsed_s, ended);
        printf("  \"intensive\": %u,\n  \"jitter\": %u,\n  \"period_ms\": %u,\n  \"work_us\": %u,\n", opt.n_intensive,
               opt.n_jitter, opt.period_ms, opt.work_us);
        printf("  \"jitter_uclamp\": \"%s\",\n", uclamp_txt);
        printf("  \"ops_counted_s\": %.3f,\n", ops_s);
        printf("  \"ops_per_s_total\": %.0f,\n  \"ops_per_s_thread\": [", total_ops / ops_s);
        for (unsigned i = 0; i < opt.n_intensive; i++)
            printf("%s%.0f", i ? ", " : "", (ops_at[opt.n_intensive + i] - ops_at[i]) / ops_s);
        printf("],\n");
        printf("  \"jitter_wakeups\": %" PRIu64 ",\n  \"jitter_missed_periods\": %" PRIu64 ",\n", wakeups, missed);
        printf("  \"latency_us\": { \"p50\": %.1f, \"p90\": %.1f, \"p99\": %.1f, \"max\": %.1f },\n", p50, p90, p99,
               pmax);
        print_json_cpus("cpus_intensive", &cpus_in, true);
        print_json_cpus("cpus_jitter", &cpus_ji, false);
        printf("}\n");
    } else {
        char buf_in[4096], buf_ji[4096];
        if (cpulist_format(&cpus_in, buf_in, sizeof(buf_in)) < 0)
            strcpy(buf_in, "?");
        if (cpulist_format(&cpus_ji, buf_ji, sizeof(buf_ji)) < 0)
            strcpy(buf_ji, "?");
        printf("elapsed: %.3f s (ended by %s)\n", elapsed_s, ended);
        printf("intensive threads: %u, jitter threads: %u (period %u ms, work %u us)\n", opt.n_intensive, opt.n_jitter,
               opt.period_ms, opt.work_us);
        for (unsigned i = 0; i < opt.n_intensive; i++)
            printf("intensive %u: %.0f ops/s\n", i, (ops_at[opt.n_intensive + i] - ops_at[i]) / ops_s);
        printf("ops/s total: %.0f (over the last %.1f s)\n", total_ops / ops_s, ops_s);
        printf("jitter wake-ups: %" PRIu64 ", missed periods: %" PRIu64 "\n", wakeups, missed);
        printf("jitter uclamp: %s\n", uclamp_txt);
        printf("jitter latency us: p50 %.1f p90 %.1f p99 %.1f max %.1f\n", p50, p90, p99, pmax);
        printf("cpus intensive: %s\n", buf_in);
        printf("cpus jitter: %s\n", buf_ji);
    }
    return r == 0 ? 0 : 1;
}
