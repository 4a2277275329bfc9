/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "fixture-tree.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "turbo-ratio.h"

static const char intel_skx[] = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\n"
                                "model name\t: Intel(R) Xeon(R) Gold 6148\nstepping\t: 4\n\n"
                                "processor\t: 1\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\n";
static const char intel_cfl[] = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 158\n"
                                "model name\t: Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz\n";
static const char amd_zen5[] = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\n"
                               "model name\t: AMD EPYC\n";

static void test_ident(void **state)
{
    (void)state;
    struct cpu_ident id;
    assert_int_equal(cpu_ident_parse(intel_skx, &id), 0);
    assert_string_equal(id.vendor, "GenuineIntel");
    assert_int_equal(id.family, 6);
    assert_int_equal(id.model, 85); /* "model name" is not "model" */
    assert_int_equal(cpu_ident_parse(amd_zen5, &id), 0);
    assert_string_equal(id.vendor, "AuthenticAMD");
    assert_int_equal(id.family, 26);
    assert_int_equal(id.model, 2);
    assert_int_equal(cpu_ident_parse("processor\t: 0\nvendor_id\t: GenuineIntel\n", &id), -EINVAL);
    assert_int_equal(cpu_ident_parse("vendor_id : X\ncpu family : six\nmodel : 1\n", &id), -EINVAL);
    assert_int_equal(cpu_ident_parse("", &id), -EINVAL);

    assert_true(turbo_ratio_grouped(0x55));
    assert_true(turbo_ratio_grouped(0x8f));
    assert_false(turbo_ratio_grouped(0x9e));
    assert_int_equal(turbo_ratio_bclk_khz(0x1e), 133333);
    assert_int_equal(turbo_ratio_bclk_khz(0x9e), 100000);
}

/* One ratio per active-core count: an i7-8700 (4.6 GHz with one core
 * active, 4.3 GHz with four and more). */
static void test_decode_per_count(void **state)
{
    (void)state;
    struct freq_response fr;
    char why[160];
    assert_int_equal(turbo_ratio_decode(0x2b2b2b2b2b2c2d2eULL, 0, false, 100000, &fr, why, sizeof why), 0);
    assert_int_equal(fr.n_cores, 8);
    assert_int_equal(fr.mhz[1], 4600);
    assert_int_equal(fr.mhz[2], 4500);
    assert_int_equal(fr.mhz[3], 4400);
    assert_int_equal(fr.mhz[4], 4300);
    assert_int_equal(fr.mhz[8], 4300);
    assert_int_equal(freq_response_mhz(&fr, 12), 4300);

    /* a four-core part: the bytes above its count are 0 */
    assert_int_equal(turbo_ratio_decode(0x22232425ULL, 0, false, 100000, &fr, why, sizeof why), 0);
    assert_int_equal(fr.n_cores, 4);
    assert_int_equal(fr.mhz[4], 3400);

    /* Nehalem's 133.33 MHz bus clock */
    assert_int_equal(turbo_ratio_decode(0x1a1a1b1bULL, 0, false, turbo_ratio_bclk_khz(0x1e), &fr, why, sizeof why), 0);
    assert_int_equal(fr.mhz[1], 3600);
    assert_int_equal(fr.mhz[3], 3467);

    /* nothing, or a table that rises with active cores: refused, with why */
    assert_int_equal(turbo_ratio_decode(0, 0, false, 100000, &fr, why, sizeof why), -EINVAL);
    assert_int_equal(fr.n_cores, 0);
    assert_non_null(strstr(why, "no ratio in MSR_TURBO_RATIO_LIMIT (0x0000000000000000)"));
    assert_int_equal(turbo_ratio_decode(0x2e2d2c2bULL, 0, false, 100000, &fr, why, sizeof why), -EINVAL);
    assert_int_equal(fr.n_cores, 0);
    assert_non_null(strstr(why, "is not a table this reads: 4400 MHz with 2 active cores is above 4300 MHz with 1"));
}

/* By core group (Xeon Scalable): 0x1AE gives each group's highest count. */
static void test_decode_groups(void **state)
{
    (void)state;
    struct freq_response fr;
    char why[160];
    /* up to 2 cores 3.7 GHz, 4: 3.5, 8: 3.4, 12: 3.1, 16: 3.0, 20: 2.9, 24 and 28 (unused group: 28 again) */
    assert_int_equal(
        turbo_ratio_decode(0x1b1b1d1e1f222325ULL, 0x1c1814100c080402ULL, true, 100000, &fr, why, sizeof why), 0);
    assert_int_equal(fr.n_cores, 28);
    assert_int_equal(fr.mhz[1], 3700);
    assert_int_equal(fr.mhz[2], 3700);
    assert_int_equal(fr.mhz[3], 3500);
    assert_int_equal(fr.mhz[5], 3400);
    assert_int_equal(fr.mhz[8], 3400);
    assert_int_equal(fr.mhz[9], 3100);
    assert_int_equal(fr.mhz[20], 2900);
    assert_int_equal(fr.mhz[21], 2700);
    assert_int_equal(fr.mhz[28], 2700);

    /* groups past the part's core count repeat it, or are 0: the table ends there */
    assert_int_equal(
        turbo_ratio_decode(0x1f1f1f1f1f1f2225ULL, 0x0606060606060402ULL, true, 100000, &fr, why, sizeof why), 0);
    assert_int_equal(fr.n_cores, 6);
    assert_int_equal(fr.mhz[6], 3100);
    assert_int_equal(turbo_ratio_decode(0x2225ULL, 0x0402ULL, true, 100000, &fr, why, sizeof why), 0);
    assert_int_equal(fr.n_cores, 4);

    /* counts that do not start: nothing read */
    assert_int_equal(turbo_ratio_decode(0x2225ULL, 0, true, 100000, &fr, why, sizeof why), -EINVAL);
    assert_non_null(strstr(why, "by core group"));
}

/* ---- on a fixture root: proc/cpuinfo and dev/cpu/0/msr ---- */

static char root[PATH_MAX];

/* The msr driver: a read of 8 bytes at a register's number gives its value,
 * EIO for one the CPU does not have. Reads of the fixture's dev/cpu/0/msr
 * are answered from here (the link wraps pread); others go through. */
static struct {
    unsigned reg;
    uint64_t value;
} msrs[4];
static size_t n_msrs;

ssize_t __real_pread(int fd, void *buf, size_t n, off_t off);
ssize_t __wrap_pread(int fd, void *buf, size_t n, off_t off)
{
    char link[64], target[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t k = readlink(link, target, sizeof target - 1);
    if (k <= 0)
        return __real_pread(fd, buf, n, off);
    target[k] = '\0';
    if (!strstr(target, "/dev/cpu/0/msr"))
        return __real_pread(fd, buf, n, off);
    for (size_t i = 0; i < n_msrs; i++)
        if (msrs[i].reg == off && n == sizeof msrs[i].value) {
            memcpy(buf, &msrs[i].value, n);
            return (ssize_t)n;
        }
    errno = EIO;
    return -1;
}

static void put_msr(unsigned reg, uint64_t v)
{
    assert_true(n_msrs < sizeof msrs / sizeof msrs[0]);
    msrs[n_msrs].reg = reg;
    msrs[n_msrs++].value = v;
}

static int setup_root(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "%s/turbo-ratio-XXXXXX", TS_BUILD_DIR);
    return mkdtemp(root) ? 0 : -1;
}

static int remove_root(void **state)
{
    (void)state;
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_read(void **state)
{
    (void)state;
    struct freq_response fr;
    char what[192];

    assert_int_equal(turbo_ratio_read(root, &fr, what, sizeof what), -ENOENT);
    assert_non_null(strstr(what, "/proc/cpuinfo: No such file or directory"));

    fixture_put(root, "proc/cpuinfo", amd_zen5);
    assert_int_equal(turbo_ratio_read(root, &fr, what, sizeof what), -ENODEV);
    assert_string_equal(what, "not an Intel CPU (AuthenticAMD): no turbo ratio table to read");
    assert_int_equal(fr.n_cores, 0);

    fixture_put(root, "proc/cpuinfo", intel_cfl);
    assert_int_equal(turbo_ratio_read(root, &fr, what, sizeof what), -ENOENT);
    assert_non_null(strstr(what, "/dev/cpu/0/msr: No such file or directory (the msr module is not loaded"));

    /* the register unreadable (as a virtual machine answers) */
    fixture_put(root, "dev/cpu/0/msr", "");
    assert_int_equal(turbo_ratio_read(root, &fr, what, sizeof what), -EIO);
    assert_non_null(strstr(what, "reading MSR 0x1ad"));

    put_msr(MSR_TURBO_RATIO_LIMIT, 0x2b2b2b2b2b2c2d2eULL);
    assert_int_equal(turbo_ratio_read(root, &fr, what, sizeof what), 0);
    assert_string_equal(what, "MSR_TURBO_RATIO_LIMIT of CPU 0 (Intel family 6 model 0x9e)");
    assert_int_equal(fr.n_cores, 8);
    assert_int_equal(fr.mhz[1], 4600);

    /* a grouped model reads the counts too */
    fixture_put(root, "proc/cpuinfo", intel_skx);
    n_msrs = 0;
    put_msr(MSR_TURBO_RATIO_LIMIT, 0x1b1b1d1e1f222325ULL);
    assert_int_equal(turbo_ratio_read(root, &fr, what, sizeof what), -EIO);
    assert_non_null(strstr(what, "reading MSR 0x1ae"));
    put_msr(MSR_TURBO_RATIO_LIMIT_CORES, 0x1c1814100c080402ULL);
    assert_int_equal(turbo_ratio_read(root, &fr, what, sizeof what), 0);
    assert_string_equal(what, "MSR_TURBO_RATIO_LIMIT of CPU 0 (Intel family 6 model 0x55, by core group)");
    assert_int_equal(fr.n_cores, 28);
    assert_int_equal(fr.mhz[28], 2700);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ident),
        cmocka_unit_test(test_decode_per_count),
        cmocka_unit_test(test_decode_groups),
        cmocka_unit_test_setup_teardown(test_read, setup_root, remove_root),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
