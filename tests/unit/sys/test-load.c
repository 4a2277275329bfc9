/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "load.h"
#include "util.h"

#define MAXCPU 8

static void read_fixture(const char *name, struct cpu_stat *cpus, int *n)
{
    char path[PATH_MAX], buf[4096];
    snprintf(path, sizeof path, "%s/proc-stat/%s", TS_FIXTURES, name);
    assert_true(read_file(path, buf, sizeof buf) > 0);
    assert_int_equal(load_parse_stat(buf, cpus, MAXCPU, n), 0);
}

static void test_parse_and_util(void **state)
{
    struct cpu_stat a[MAXCPU], b[MAXCPU];
    int na, nb, util[MAXCPU];
    read_fixture("vm-2cpu-a.txt", a, &na);
    read_fixture("vm-2cpu-b.txt", b, &nb);
    assert_int_equal(na, 2);
    assert_int_equal(nb, 2);
    /* busy = total - idle - iowait; guest columns are not double counted */
    assert_int_equal(a[0].total, 1000);
    assert_int_equal(a[0].busy, 100);
    load_cpu_util(a, na, b, nb, 0, util, MAXCPU);
    /* cpu0: 800 busy of 800 (steal counts as busy) */
    assert_int_equal(util[0], 1000);
    /* cpu1: 200 busy of 1100 = 181.8 */
    assert_int_equal(util[1], 182);
    for (int i = 2; i < MAXCPU; i++)
        assert_int_equal(util[i], -1);
}

/* A tick-accounting kernel charged more busy ticks than passed: the wall
 * time less the measured idle time is the load (the case measured on a
 * 2-vCPU VM: 113 busy ticks, 484 idle, 504 of wall time). Counters that
 * stay within the wall time are taken as they are. */
static void test_busy_beyond_wall_time(void **state)
{
    struct cpu_stat a[1] = {{.present = true, .busy = 1000, .idle = 5000, .total = 6000}};
    struct cpu_stat b[1] = {{.present = true, .busy = 1113, .idle = 5484, .total = 6597}};
    int util[1];
    load_cpu_util(a, 1, b, 1, 0, util, 1);
    assert_int_equal(util[0], 189); /* 113 of 597: the counters alone */
    load_cpu_util(a, 1, b, 1, 504, util, 1);
    assert_int_equal(util[0], 40); /* 20 of 504 */
    load_cpu_util(a, 1, b, 1, 700, util, 1);
    assert_int_equal(util[0], 189); /* within the wall time: unchanged */
    /* idle beyond the wall time (a late sample): no load, not a negative one */
    load_cpu_util(a, 1, b, 1, 400, util, 1);
    assert_int_equal(util[0], 0);
    /* idle that went backwards (a CPU that went offline and back): no sample */
    b[0].idle = 4000;
    load_cpu_util(a, 1, b, 1, 504, util, 1);
    assert_int_equal(util[0], -1);
}

static void test_hotplug(void **state)
{
    struct cpu_stat s1[MAXCPU], s2[MAXCPU], s3[MAXCPU];
    int n1, n2, n3, util[MAXCPU];
    read_fixture("hotplug-1.txt", s1, &n1);
    read_fixture("hotplug-2.txt", s2, &n2);
    read_fixture("hotplug-3.txt", s3, &n3);
    assert_int_equal(n1, 4);
    assert_int_equal(n2, 4); /* highest CPU seen + 1, with a hole at 2 */
    assert_false(s2[2].present);

    load_cpu_util(s1, n1, s2, n2, 0, util, 4);
    assert_int_equal(util[0], 100);
    assert_int_equal(util[1], 500);
    assert_int_equal(util[2], -1); /* went offline */
    assert_int_equal(util[3], 0);

    load_cpu_util(s2, n2, s3, n3, 0, util, 4);
    assert_int_equal(util[2], -1); /* just came back: no previous sample */
    assert_int_equal(util[1], 500);

    /* Against a sample from before it went away, its counters went backwards. */
    load_cpu_util(s1, n1, s3, n3, 0, util, 4);
    assert_int_equal(util[2], -1);
    assert_int_equal(util[0], 100);
}

static void test_no_time_passed(void **state)
{
    struct cpu_stat a[MAXCPU];
    int n, util[MAXCPU];
    read_fixture("vm-2cpu-a.txt", a, &n);
    load_cpu_util(a, n, a, n, 0, util, 2);
    assert_int_equal(util[0], -1);
    assert_int_equal(util[1], -1);
}

static void test_parse_errors(void **state)
{
    struct cpu_stat c[2];
    int n;
    assert_int_equal(load_parse_stat("intr 1 2 3\n", c, 2, &n), -EINVAL);
    assert_int_equal(load_parse_stat("cpu0 1 2\n", c, 2, &n), -EINVAL);
    assert_int_equal(load_parse_stat("cpu5 1 2 3 4 5 6 7 8\n", c, 2, &n), -ERANGE);
    assert_int_equal(load_parse_stat("", c, 2, &n), -EINVAL);
}

static void test_live(void **state)
{
    struct cpu_stat c[CPU_SETSIZE];
    int n;
    assert_int_equal(load_read_stat("/", c, CPU_SETSIZE, &n), 0);
    assert_true(n >= sysconf(_SC_NPROCESSORS_ONLN));
    assert_int_equal(load_read_stat("/nonexistent", c, CPU_SETSIZE, &n), -ENOENT);
}

static void test_ewma(void **state)
{
    /* No smoothing */
    assert_int_equal(load_ewma(0, 800, 250, 0), 800);
    /* One half-life: halfway */
    assert_int_equal(load_ewma(0, 1000, 1000, 1000), 500);
    /* Two half-lives: three quarters */
    assert_int_equal(load_ewma(0, 1000, 2000, 1000), 750);
    /* Steady input stays put */
    assert_int_equal(load_ewma(400, 400, 123, 1000), 400);
    /* Decays towards 0 */
    assert_int_equal(load_ewma(1000, 0, 1000, 1000), 500);
    /* Zero elapsed time: no change */
    assert_int_equal(load_ewma(300, 900, 0, 1000), 300);
    /* Converges: 20 ticks of 250 ms with a 1 s half-life get within 4% */
    unsigned v = 0;
    for (int i = 0; i < 20; i++)
        v = load_ewma(v, 1000, 250, 1000);
    assert_in_range(v, 960, 1000);
}

/* 40 ticks of 250 ms, 10 half-lives of 1 s, from prev towards a steady
 * sample: never past it, and on it at the end. */
static unsigned ewma_steady(unsigned v, unsigned sample)
{
    unsigned lo = MIN(v, sample), hi = MAX(v, sample);
    for (int i = 0; i < 40; i++) {
        v = load_ewma(v, sample, 250, 1000);
        assert_in_range(v, lo, hi);
    }
    return v;
}

static void test_ewma_reaches_sample(void **state)
{
    /* A light jitter task's 83 milli: rounding each step to the nearest
     * stopped at 80 from below and 86 from above. */
    assert_int_equal(ewma_steady(0, 83), 83);
    assert_int_equal(ewma_steady(1000, 83), 83);
    /* A task gone quiet decays to 0, which the sampler's per-process gate
     * waits for; it stopped at 3. */
    assert_int_equal(ewma_steady(83, 0), 0);
    assert_int_equal(ewma_steady(3, 0), 0);
    assert_int_equal(ewma_steady(997, 1000), 1000);
    /* One step under a milli still moves one milli towards the sample. */
    assert_int_equal(load_ewma(82, 83, 250, 1000), 83);
    assert_int_equal(load_ewma(1, 0, 250, 1000), 0);
}

static void test_task_runtime(void **state)
{
    char root[PATH_MAX];
    uint64_t ns;
    snprintf(root, sizeof root, "%s/proc-load", TS_FIXTURES);
    assert_int_equal(load_read_task_runtime(root, 1234, 1234, &ns), 0);
    assert_int_equal(ns, 123456789ull);
    /* no schedstat: falls back to utime+stime from stat (30+20 ticks) */
    assert_int_equal(load_read_task_runtime(root, 1234, 1240, &ns), 0);
    assert_int_equal(ns, 50ull * (1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK)));
    assert_int_equal(load_read_task_runtime(root, 1234, 9999, &ns), -ENOENT);
    /* comm with ") " inside */
    assert_int_equal(load_parse_task_stat_cputime("1 (a) b) S 1 1 1 0 -1 0 0 0 0 0 7 3 0", 100, &ns), 0);
    assert_int_equal(ns, 100000000ull);
    assert_int_equal(load_parse_task_stat_cputime("garbage", 100, &ns), -EINVAL);
    assert_int_equal(load_parse_schedstat("x", &ns), -EINVAL);
}

static void test_task_last_cpu(void **state)
{
    char root[PATH_MAX];
    uint64_t ns;
    int cpu = -1;
    snprintf(root, sizeof root, "%s/proc-load", TS_FIXTURES);
    /* field 39 of the fixture's stat lines: 1 for the leader, 0 for 1240 */
    assert_int_equal(load_read_task_sample(root, 1234, 1234, &ns, &cpu), 0);
    assert_int_equal(cpu, 1);
    assert_int_equal(ns, 123456789ull);
    assert_int_equal(load_read_task_sample(root, 1234, 1240, &ns, &cpu), 0);
    assert_int_equal(cpu, 0);
    assert_int_equal(load_read_task_sample(root, 1234, 4321, &ns, &cpu), -ENOENT);
    assert_int_equal(load_parse_task_stat_cpu("1 (x) S 1 2 3", &cpu), -EINVAL);
    /* the live thread runs on an online CPU */
    assert_int_equal(load_read_task_sample("/", getpid(), getpid(), &ns, &cpu), 0);
    assert_in_range(cpu, 0, sysconf(_SC_NPROCESSORS_CONF) - 1);
}

static void test_task_runtime_live(void **state)
{
    uint64_t a, b;
    pid_t self = getpid();
    assert_int_equal(load_read_task_runtime("/", self, self, &a), 0);
    volatile unsigned long x = 0;
    uint64_t until = now_ms() + 30;
    while (now_ms() < until)
        x++;
    assert_int_equal(load_read_task_runtime("/", self, self, &b), 0);
    assert_true(b > a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_and_util),
        cmocka_unit_test(test_hotplug),
        cmocka_unit_test(test_busy_beyond_wall_time),
        cmocka_unit_test(test_no_time_passed),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_live),
        cmocka_unit_test(test_ewma),
        cmocka_unit_test(test_ewma_reaches_sample),
        cmocka_unit_test(test_task_runtime),
        cmocka_unit_test(test_task_last_cpu),
        cmocka_unit_test(test_task_runtime_live),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
