/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The busy cores' measured frequency (freq-meter.c) on fixture roots:
 * cpufreq present and absent, msr files present, unreadable and absent,
 * the base frequency from each place it is found, counters that wrap and
 * counters that were reset. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fixture-tree.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "freq-meter.h"

static char root[PATH_MAX];

static void rm(const char *rel)
{
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/%s'", root, rel);
    assert_int_equal(system(cmd), 0);
}

/* The msr driver, faked: a read of 8 bytes at a register's number gives its
 * value, EIO for one the CPU does not have (as in most virtual machines).
 * Reads of the fixture's dev/cpu/N/msr are answered from here (the link
 * wraps pread: in a regular file 0xE7 and 0xE8 would overlap). */
struct fake_cpu {
    bool has_counters;
    uint64_t aperf, mperf, platform_info;
    unsigned reads;
};
static struct fake_cpu cpus[4];

ssize_t __real_pread(int fd, void *buf, size_t n, off_t off);
ssize_t __wrap_pread(int fd, void *buf, size_t n, off_t off)
{
    char link[64], target[PATH_MAX];
    unsigned cpu;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t k = readlink(link, target, sizeof target - 1);
    if (k <= 0)
        return __real_pread(fd, buf, n, off);
    target[k] = '\0';
    const char *d = strstr(target, "/dev/cpu/");
    if (!d || sscanf(d, "/dev/cpu/%u/msr", &cpu) != 1 || cpu >= 4)
        return __real_pread(fd, buf, n, off);
    struct fake_cpu *c = &cpus[cpu];
    uint64_t v = 0;
    c->reads++;
    if (n == 8 && off == MSR_IA32_APERF && c->has_counters)
        v = c->aperf;
    else if (n == 8 && off == MSR_IA32_MPERF && c->has_counters)
        v = c->mperf;
    else if (n == 8 && off == MSR_PLATFORM_INFO && c->platform_info)
        v = c->platform_info;
    else {
        errno = EIO;
        return -1;
    }
    memcpy(buf, &v, 8);
    return 8;
}

static int setup_root(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "%s/freq-meter-XXXXXX", TS_BUILD_DIR);
    memset(cpus, 0, sizeof cpus);
    return mkdtemp(root) ? 0 : -1;
}

static int remove_root(void **state)
{
    (void)state;
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

static cpu_set_t set_of(const char *list)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    for (const char *p = list; *p; p++)
        if (*p >= '0' && *p <= '9')
            CPU_SET(*p - '0', &s);
    return s;
}

static void test_pure(void **state)
{
    (void)state;
    uint64_t d;
    assert_true(freq_counter_delta(100, 350, &d));
    assert_int_equal(d, 250);
    /* a 64-bit wrap: the counter passed UINT64_MAX and went on */
    assert_true(freq_counter_delta(UINT64_MAX - 99, 900, &d));
    assert_int_equal(d, 1000);
    /* reset: far back, not a wrap */
    assert_false(freq_counter_delta(1000000000000ULL, 5000, &d));

    assert_int_equal(freq_base_from_model_name("vendor_id\t: GenuineIntel\n"
                                               "model name\t: Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz\n"),
                     3200000);
    assert_int_equal(freq_base_from_model_name("model name\t: Some CPU @ 2400MHz\nflags: x\n"), 2400000);
    assert_int_equal(freq_base_from_model_name("model name\t: AMD EPYC 7B13\nflags\t: a@b\n"), 0);
    assert_int_equal(freq_base_from_model_name("processor : 0\n"), 0);
}

/* Neither source: the message names what was looked for and why each is
 * absent. */
static void test_absent(void **state)
{
    struct freq_meter m;
    cpu_set_t all = set_of("01");
    freq_meter_init(&m);
    assert_int_equal(freq_meter_open(&m, root, &all), -ENODEV);
    assert_int_equal(m.source, FREQ_SOURCE_NONE);
    assert_non_null(strstr(m.what, "APERF/MPERF: "));
    assert_non_null(strstr(m.what, "/dev/cpu/0/msr: No such file or directory (no msr module, or the unit's "
                                   "PrivateDevices= hides it)"));
    assert_non_null(strstr(m.what, "; cpufreq: "));
    assert_non_null(strstr(m.what, "/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq: No such file"));
    double mhz = 1;
    assert_int_equal(freq_meter_sample(&m, &all, &mhz), -ENODEV);
    assert_true(mhz == 0);
    freq_meter_close(&m);
}

/* cpufreq: the mean of the asked CPUs' current frequency; cpuinfo_cur_freq
 * where scaling_cur_freq is missing; a CPU that reads nothing is left out. */
static void test_cpufreq(void **state)
{
    struct freq_meter m;
    cpu_set_t all = set_of("0123"), busy = set_of("01");
    double mhz;
    fixture_put(root, "sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", "3000000\n");
    fixture_put(root, "sys/devices/system/cpu/cpu1/cpufreq/cpuinfo_cur_freq", "2000000\n");
    freq_meter_init(&m);
    assert_int_equal(freq_meter_open(&m, root, &all), FREQ_SOURCE_CPUFREQ);
    assert_string_equal(freq_source_name(m.source), "cpufreq");
    assert_int_equal(freq_meter_sample(&m, &busy, &mhz), 2);
    assert_true(mhz > 2499.9 && mhz < 2500.1);
    /* CPU 2 has no cpufreq directory: left out */
    assert_int_equal(freq_meter_sample(&m, &all, &mhz), 2);
    cpu_set_t two = set_of("2");
    assert_true(freq_meter_sample(&m, &two, &mhz) < 0);
    cpu_set_t none = set_of("");
    assert_int_equal(freq_meter_sample(&m, &none, &mhz), 0);
    freq_meter_close(&m);
}

/* The msr file is there but the counters do not read (a virtual machine):
 * cpufreq instead; without it, why APERF/MPERF is not used. */
static void test_msr_unreadable(void **state)
{
    struct freq_meter m;
    cpu_set_t all = set_of("01");
    fixture_put(root, "dev/cpu/0/msr", "");
    fixture_put(root, "dev/cpu/1/msr", "");
    freq_meter_init(&m);
    assert_int_equal(freq_meter_open(&m, root, &all), -ENODEV);
    assert_non_null(strstr(m.what, "/dev/cpu/0/msr: reading APERF/MPERF: Input/output error"));
    for (int i = 0; i < 1024; i++)
        assert_int_equal(m.fd[i], -1); /* nothing left open */

    fixture_put(root, "sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", "2800000\n");
    assert_int_equal(freq_meter_open(&m, root, &all), FREQ_SOURCE_CPUFREQ);
    freq_meter_close(&m);

    /* counters, but no base frequency to scale them by */
    rm("sys");
    cpus[0].has_counters = cpus[1].has_counters = true;
    fixture_put(root, "proc/cpuinfo",
                "vendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\nmodel name\t: AMD EPYC\n");
    assert_int_equal(freq_meter_open(&m, root, &all), -ENODEV);
    assert_non_null(strstr(m.what, "APERF/MPERF: readable, but no base frequency"));
    freq_meter_close(&m);
}

static void advance(unsigned cpu, uint64_t da, uint64_t dm)
{
    cpus[cpu].aperf += da;
    cpus[cpu].mperf += dm;
}

/* APERF/MPERF: the base times the ratio of the summed advances, over the
 * CPUs read at the previous sample too; a CPU primed after a plan counts
 * from then; wrapped counters count, reset ones do not; idle CPUs are
 * never read. */
static void test_aperf(void **state)
{
    struct freq_meter m;
    cpu_set_t all = set_of("0123"), busy = set_of("01");
    double mhz;
    for (int i = 0; i < 4; i++) {
        char rel[32];
        snprintf(rel, sizeof rel, "dev/cpu/%d/msr", i);
        fixture_put(root, rel, "");
        cpus[i].has_counters = true;
        cpus[i].aperf = cpus[i].mperf = 1000000;
    }
    fixture_put(root, "sys/devices/system/cpu/cpu0/cpufreq/base_frequency", "2000000\n");
    freq_meter_init(&m);
    assert_int_equal(freq_meter_open(&m, root, &all), FREQ_SOURCE_APERF);
    assert_string_equal(m.what, "APERF/MPERF of /dev/cpu/N/msr, base 2000 MHz from cpufreq base_frequency");
    for (int i = 0; i < 4; i++)
        cpus[i].reads = 0;

    assert_int_equal(freq_meter_sample(&m, &busy, &mhz), 0); /* nothing to compare yet */
    advance(0, 3000, 1000);                                  /* 6000 MHz worth... */
    advance(1, 1000, 1000);                                  /* ... and 2000: weighted by unhalted time, 4000 */
    assert_int_equal(freq_meter_sample(&m, &busy, &mhz), 2);
    assert_true(mhz > 3999.9 && mhz < 4000.1);
    assert_int_equal(cpus[2].reads + cpus[3].reads, 0); /* idle CPUs: not woken */

    /* CPU 2 turns busy: primed after the plan, counted from the next sample */
    cpu_set_t busy3 = set_of("012");
    freq_meter_prime(&m, &busy3);
    assert_int_equal(cpus[2].reads, 2);
    advance(0, 1000, 1000);
    advance(1, 1000, 1000);
    advance(2, 4000, 1000);
    assert_int_equal(freq_meter_sample(&m, &busy3, &mhz), 3);
    assert_true(mhz > 3999.9 && mhz < 4000.1);

    /* a wrap on CPU 0 counts; CPU 1's counters were reset and do not */
    cpus[0].aperf = UINT64_MAX - 499;
    cpus[0].mperf = UINT64_MAX - 999;
    cpus[1].aperf = cpus[1].mperf = 1ULL << 40;
    cpus[2].aperf = cpus[2].mperf = 1ULL << 40;
    cpu_set_t b01 = set_of("01");
    freq_meter_sample(&m, &b01, &mhz); /* new starts for 0 and 1; 2 not read */
    cpus[0].aperf = 1500;              /* +2000 across the wrap */
    cpus[0].mperf = 0;                 /* +1000 */
    cpus[1].aperf = cpus[1].mperf = 5; /* went back: reset */
    advance(2, 1000, 1000);            /* read two samples ago: stale, left out */
    assert_int_equal(freq_meter_sample(&m, &busy3, &mhz), 1);
    assert_true(mhz > 3999.9 && mhz < 4000.1);

    /* every read fails (the CPUs went away): an error */
    cpus[0].has_counters = cpus[1].has_counters = cpus[2].has_counters = false;
    assert_int_equal(freq_meter_sample(&m, &busy3, &mhz), -EIO);
    freq_meter_close(&m);
}

/* Base frequency from Intel's MSR_PLATFORM_INFO, else the model name. */
static void test_aperf_base(void **state)
{
    struct freq_meter m;
    cpu_set_t one = set_of("0");
    fixture_put(root, "dev/cpu/0/msr", "");
    cpus[0].has_counters = true;
    cpus[0].platform_info = 0x1800; /* ratio 24: 2.4 GHz at 100 MHz */
    fixture_put(root, "proc/cpuinfo",
                "vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\n"
                "model name\t: Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz\n");
    freq_meter_init(&m);
    assert_int_equal(freq_meter_open(&m, root, &one), FREQ_SOURCE_APERF);
    assert_int_equal(m.base_khz, 2400000);
    assert_non_null(strstr(m.what, "from MSR_PLATFORM_INFO"));
    cpus[0].platform_info = 0;
    fixture_put(root, "proc/cpuinfo",
                "vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 158\n"
                "model name\t: Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz\n");
    assert_int_equal(freq_meter_open(&m, root, &one), FREQ_SOURCE_APERF);
    assert_int_equal(m.base_khz, 3200000);
    assert_non_null(strstr(m.what, "from the model name"));
    freq_meter_close(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pure),
        cmocka_unit_test_setup_teardown(test_absent, setup_root, remove_root),
        cmocka_unit_test_setup_teardown(test_cpufreq, setup_root, remove_root),
        cmocka_unit_test_setup_teardown(test_msr_unreadable, setup_root, remove_root),
        cmocka_unit_test_setup_teardown(test_aperf, setup_root, remove_root),
        cmocka_unit_test_setup_teardown(test_aperf_base, setup_root, remove_root),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
