/* SPDX-License-Identifier: GPL-2.0-or-later */
/* turbosched-ctl compare: the block schedule, the spread across blocks with
 * warm-ups discarded, the verdict's wording, and the readers of /proc and
 * /sys against fixture trees with and without cpuidle, cpufreq and RAPL;
 * and that --csv, run as root in a shared directory, writes through no link
 * or file another user planted there. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "compare-output.h"
#include "compare-read.h"
#include "compare-stats.h"

#define FIX_IDLE TS_FIXTURES "/compare-cpuidle"
#define FIX_BARE TS_FIXTURES "/compare-bare"

static void test_schedule(void **state)
{
    struct cmp_block b[64];
    /* the defaults: 10 min of 30 s blocks */
    int n = cmp_schedule(600000, 30000, b, 64);
    assert_int_equal(n, 20);
    assert_true(b[0].warmup && b[0].mode == CMP_PAUSED);
    assert_true(b[1].warmup && b[1].mode == CMP_PACKED);
    unsigned count[2] = {0}, warm = 0;
    for (int i = 0; i < n; i++) {
        warm += b[i].warmup;
        if (!b[i].warmup)
            count[b[i].mode]++;
    }
    assert_int_equal(warm, 2);
    assert_int_equal(count[CMP_PAUSED], 9);
    assert_int_equal(count[CMP_PACKED], 9);
    /* measured pairs alternate their order: paused packed, packed paused */
    static const enum cmp_mode want[] = {CMP_PAUSED, CMP_PACKED, CMP_PACKED, CMP_PAUSED, CMP_PAUSED, CMP_PACKED};
    for (size_t i = 0; i < 6; i++)
        assert_int_equal(b[2 + i].mode, want[i]);
    /* a linear drift (value = block index) hits both modes alike over
     * whole quadruples */
    double sum[2] = {0};
    for (int i = 2; i < 18; i++)
        sum[b[i].mode] += i;
    assert_true(sum[CMP_PAUSED] == sum[CMP_PACKED]);

    /* 5 blocks' worth: rounded down to 4, one measured of each */
    assert_int_equal(cmp_schedule(25000, 5000, b, 64), 4);
    assert_false(b[2].warmup || b[3].warmup);
    assert_int_not_equal(b[2].mode, b[3].mode);
    /* fewer than 4 blocks: nothing would be measured */
    assert_int_equal(cmp_schedule(15000, 5000, b, 64), -EINVAL);
    assert_int_equal(cmp_schedule(15000, 0, b, 64), -EINVAL);
    assert_int_equal(cmp_schedule(1000000, 1000, b, 64), -E2BIG);
}

static void test_spread(void **state)
{
    struct cmp_spread s;
    const double v[] = {1, 2, NAN, 3};
    cmp_spread_of(v, 4, &s);
    assert_int_equal(s.n, 3);
    assert_true(fabs(s.mean - 2) < 1e-9);
    assert_true(fabs(s.sd - 1) < 1e-9);
    assert_true(s.min == 1 && s.max == 3);
    cmp_spread_of(v, 1, &s);
    assert_int_equal(s.n, 1);
    assert_true(s.sd == 0);
    const double none[] = {NAN, NAN};
    cmp_spread_of(none, 2, &s);
    assert_int_equal(s.n, 0);
    assert_true(isnan(s.mean) && isnan(s.min));
}

static void fill(struct cmp_block_result *r, enum cmp_mode m, bool warm, double wake1, double idle1)
{
    *r = (struct cmp_block_result){.mode = m, .warmup = warm, .seconds = 30, .n_cpus = 2};
    r->wakeups_ps[0] = 1000;
    r->idle_pct[0] = 10;
    r->wakeups_ps[1] = wake1;
    r->idle_pct[1] = idle1;
    r->freq_mhz[0] = r->freq_mhz[1] = NAN;
    r->energy_w = NAN;
    r->jitter_wait_ms_per_wakeup = m == CMP_PACKED ? 0.5 : 0.2;
    r->daemon_cpu_pct = m == CMP_PACKED ? 0.2 : 0.1;
}

static void test_summary_discards_warmup(void **state)
{
    struct cmp_block_result b[6];
    fill(&b[0], CMP_PAUSED, true, 99999, 0); /* warm-up: must not count */
    fill(&b[1], CMP_PACKED, true, 99999, 0);
    fill(&b[2], CMP_PAUSED, false, 100, 93);
    fill(&b[3], CMP_PACKED, false, 10, 99);
    fill(&b[4], CMP_PACKED, false, 8, 99.2);
    fill(&b[5], CMP_PAUSED, false, 120, 93.8);
    struct cmp_summary pa, pk;
    cmp_summarize(b, 6, CMP_PAUSED, &pa);
    cmp_summarize(b, 6, CMP_PACKED, &pk);
    assert_int_equal(pa.n_blocks, 2);
    assert_int_equal(pk.n_blocks, 2);
    assert_true(fabs(pa.wakeups_ps[1].mean - 110) < 1e-9);
    assert_true(pa.wakeups_ps[1].min == 100 && pa.wakeups_ps[1].max == 120);
    assert_true(fabs(pk.wakeups_ps[1].mean - 9) < 1e-9);
    assert_true(fabs(pk.idle_pct[1].mean - 99.1) < 1e-9);
    /* absent sources stay absent */
    assert_int_equal(pa.freq_mhz[0].n, 0);
    assert_int_equal(pa.energy_w.n, 0);
}

static void verdict_of(const struct cmp_block_result *b, size_t n, const bool *idle, char *buf, size_t size)
{
    struct cmp_summary pa, pk;
    cmp_summarize(b, n, CMP_PAUSED, &pa);
    cmp_summarize(b, n, CMP_PACKED, &pk);
    cmp_verdict(&pa, &pk, idle, buf, size);
}

static void test_verdict_wording(void **state)
{
    struct cmp_block_result b[4];
    char v[256];
    fill(&b[0], CMP_PAUSED, true, 0, 0);
    fill(&b[1], CMP_PACKED, true, 0, 0);
    fill(&b[2], CMP_PAUSED, false, 100, 93.4);
    fill(&b[3], CMP_PACKED, false, 9, 99.1);
    b[2].jitter_wait_ms_per_wakeup = 0.2;
    b[3].jitter_wait_ms_per_wakeup = 0.5;
    bool idle[2] = {false, true};
    verdict_of(b, 4, idle, v, sizeof v);
    assert_string_equal(v, "CPU 1: 91% fewer wake-ups, idle 99.1% vs 93.4%; jitter waits 0.3 ms more per "
                           "wake-up; the daemon used 0.2% of a CPU");

    /* without a kept-idle CPU, the CPU whose wake-ups fell most is named */
    verdict_of(b, 4, NULL, v, sizeof v);
    assert_true(strncmp(v, "CPU 1: 91% fewer", 16) == 0);

    /* more wake-ups, less waiting, no jitter task, overlapping ranges */
    struct cmp_block_result c[6];
    fill(&c[0], CMP_PAUSED, true, 0, 0);
    fill(&c[1], CMP_PACKED, true, 0, 0);
    fill(&c[2], CMP_PAUSED, false, 100, 90);
    fill(&c[3], CMP_PACKED, false, 130, 88);
    fill(&c[4], CMP_PACKED, false, 110, 89);
    fill(&c[5], CMP_PAUSED, false, 120, 91);
    for (int i = 0; i < 6; i++)
        c[i].jitter_wait_ms_per_wakeup = NAN;
    verdict_of(c, 6, idle, v, sizeof v);
    assert_string_equal(v, "CPU 1: 9% more wake-ups (within the spread), idle 88.5% vs 90.5%; no jitter task woke; "
                           "the daemon used 0.2% of a CPU");

    /* intensive tasks that wait longer when packed: said */
    b[2].intensive_wait_ms_ps = 10.5;
    b[3].intensive_wait_ms_ps = 67.1;
    verdict_of(b, 4, idle, v, sizeof v);
    assert_non_null(strstr(v, "per wake-up; intensive tasks wait 56.6 ms/s more; the daemon"));

    /* energy where RAPL exists */
    b[2].energy_w = 12.5;
    b[3].energy_w = 11.25;
    verdict_of(b, 4, idle, v, sizeof v);
    assert_non_null(strstr(v, "; package 11.25 W vs 12.50 W;"));

    /* truncation keeps a terminated string */
    char small[10];
    verdict_of(b, 4, idle, small, sizeof small);
    assert_int_equal(strlen(small), 9);
}

static void test_read_cpuidle_cpufreq(void **state)
{
    struct cmp_cpus c;
    assert_int_equal(cmp_read_cpus(FIX_IDLE, &c), 0);
    assert_int_equal(c.n_cpus, 2);
    assert_true(c.cpu[1].has_cpuidle);
    assert_int_equal(c.cpu[0].idle_entries, 10 + 1000);
    assert_int_equal(c.cpu[1].idle_entries, 11 + 2000);
    assert_int_equal(c.cpu[1].idle_time_us, 5 + 700001);
    assert_int_equal(c.cpu[0].freq_khz, 2400000);
    assert_int_equal(c.cpu[1].freq_khz, 2500000);
    assert_int_equal(c.cpu[1].idle_jiffies, 5050);
    assert_int_equal(c.cpu[1].total_jiffies, 400 + 200 + 5000 + 50 + 5);
}

static void test_read_bare(void **state)
{
    struct cmp_cpus c;
    assert_int_equal(cmp_read_cpus(FIX_BARE, &c), 0);
    assert_int_equal(c.n_cpus, 2);
    assert_false(c.cpu[0].has_cpuidle);
    assert_int_equal(c.cpu[0].freq_khz, 0);
    /* LOC + RES, not the other interrupts */
    assert_int_equal(c.cpu[0].irq_wakeups, 100000 + 3000);
    assert_int_equal(c.cpu[1].irq_wakeups, 20000 + 500);
    struct cmp_rapl r;
    assert_int_equal(cmp_read_rapl(FIX_BARE, &r), -ENOENT);
    assert_int_equal(r.n_zones, 0);
    assert_int_equal(cmp_read_cpus(TS_FIXTURES "/no-such-tree", &c), -ENOENT);
}

static void test_read_rapl(void **state)
{
    struct cmp_rapl a, b;
    /* the package zone only: not its core subzone, not psys */
    assert_int_equal(cmp_read_rapl(FIX_IDLE, &a), 0);
    assert_int_equal(a.n_zones, 1);
    assert_true(a.energy_uj[0] == 262143000000ull);
    b = a;
    b.energy_uj[0] += 5000000;
    assert_true(fabs(cmp_rapl_joules(&a, &b) - 5.0) < 1e-9);
    /* the counter wrapped at max_energy_range_uj */
    b.energy_uj[0] = 671150;
    assert_true(fabs(cmp_rapl_joules(&a, &b) - 1.0) < 1e-9);
}

static void test_read_threads(void **state)
{
    struct cmp_threads t = {0};
    assert_int_equal(cmp_read_threads(FIX_BARE, 0, &t), 0);
    assert_int_equal(t.n, 2);
    const struct cmp_thread *j = cmp_threads_find(&t, 100), *h = cmp_threads_find(&t, 101);
    assert_non_null(j);
    assert_non_null(h);
    assert_string_equal(j->comm, "tj (a) b");
    assert_int_equal(j->start_time, 4242);
    assert_int_equal(j->last_cpu, 1);
    assert_int_equal(j->wait_ns, 2000000);
    assert_int_equal(j->slices, 40);
    assert_int_equal(h->last_cpu, 0);
    assert_int_equal(h->run_ns, 900000000);
    assert_null(cmp_threads_find(&t, 102));
    assert_int_equal(cmp_read_threads(FIX_BARE, 100, &t), 0);
    assert_int_equal(t.n, 2);
    assert_int_equal(cmp_read_threads(FIX_BARE, 555, &t), 0);
    assert_int_equal(t.n, 0);
    cmp_threads_done(&t);

    struct cmp_thread x;
    assert_int_equal(cmp_parse_stat("7 (short) S 1 2", &x), -EINVAL);
    assert_int_equal(cmp_parse_stat("garbage", &x), -EINVAL);
}

/* A directory of its own for each case, removed with what is in it. */
static char out_dir[64];

static int out_setup(void **state)
{
    snprintf(out_dir, sizeof out_dir, "/tmp/test-compare-XXXXXX");
    return mkdtemp(out_dir) ? 0 : -1;
}

static int out_teardown(void **state)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", out_dir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *in_dir(const char *name)
{
    static char p[8][128];
    static unsigned i;
    char *s = p[i++ % 8];
    snprintf(s, sizeof p[0], "%s/%s", out_dir, name);
    return s;
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void assert_holds(const char *path, const char *text)
{
    char buf[256] = "";
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    assert_string_equal(buf, text);
}

static void one_block(struct cmp_block_result *b)
{
    *b = (struct cmp_block_result){.mode = CMP_PACKED, .seconds = 2, .n_cpus = 1};
}

static void test_csv_refuses_planted_link(void **state)
{
    struct cmp_block_result b;
    one_block(&b);
    const char *target = in_dir("target"), *csv = in_dir("out.csv");
    put(target, "precious\n");
    assert_int_equal(symlink(target, csv), 0);
    assert_int_equal(write_csv(csv, &b, 1), -ELOOP);
    assert_holds(target, "precious\n");

    /* a dangling link: nothing created at its end */
    const char *absent = in_dir("absent"), *csv2 = in_dir("dangling.csv");
    assert_int_equal(symlink(absent, csv2), 0);
    assert_true(write_csv(csv2, &b, 1) < 0);
    assert_int_equal(access(absent, F_OK), -1);

    /* a second name of another file (a hard link) */
    const char *csv3 = in_dir("hard.csv");
    assert_int_equal(link(target, csv3), 0);
    assert_int_equal(write_csv(csv3, &b, 1), -EMLINK);
    assert_holds(target, "precious\n");

    /* a file of another user */
    if (geteuid() == 0) {
        const char *csv4 = in_dir("theirs.csv");
        put(csv4, "theirs\n");
        assert_int_equal(chown(csv4, 65534, 65534), 0);
        assert_int_equal(write_csv(csv4, &b, 1), -EPERM);
        assert_holds(csv4, "theirs\n");
    }
}

static void test_csv_rewrites_own_file(void **state)
{
    struct cmp_block_result b;
    one_block(&b);
    const char *csv = in_dir("mine.csv");
    assert_int_equal(write_csv(csv, &b, 1), 0);
    struct stat st;
    assert_int_equal(stat(csv, &st), 0);
    off_t size = st.st_size;
    assert_true(size > 0);
    /* run again: the same file rewritten, not appended to */
    put(csv, "old content that is longer than nothing at all, longer than the csv's header line by far; "
             "and longer still, so that a rewrite that left it would show\n");
    assert_int_equal(write_csv(csv, &b, 1), 0);
    assert_int_equal(stat(csv, &st), 0);
    assert_int_equal(st.st_size, size);
}

static void test_plot_refuses_planted_script(void **state)
{
    struct cmp_block_result b;
    one_block(&b);
    const char *target = in_dir("target"), *csv = in_dir("p.csv"), *gp = in_dir("p.gp"), *png = in_dir("p.png");
    put(target, "precious\n");
    assert_int_equal(write_csv(csv, &b, 1), 0);
    assert_int_equal(symlink(target, gp), 0);
    assert_int_equal(write_plot(csv, 1), -ELOOP);
    assert_holds(target, "precious\n");
    /* gnuplot was not run on anything */
    assert_int_equal(access(png, F_OK), -1);

    /* the picture's name planted instead: gnuplot writes nothing through it */
    assert_int_equal(unlink(gp), 0);
    assert_int_equal(symlink(target, png), 0);
    assert_true(write_plot(csv, 1) < 0);
    assert_holds(target, "precious\n");

    /* nothing planted: the picture is made, through gnuplot's output */
    if (!in_path("gnuplot"))
        return;
    assert_int_equal(unlink(png), 0);
    assert_int_equal(unlink(gp), 0);
    assert_int_equal(write_plot(csv, 1), 0);
    char magic[8] = "";
    FILE *f = fopen(png, "r");
    assert_non_null(f);
    assert_int_equal(fread(magic, 1, 4, f), 4);
    fclose(f);
    assert_memory_equal(magic, "\x89PNG", 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schedule),
        cmocka_unit_test(test_spread),
        cmocka_unit_test(test_summary_discards_warmup),
        cmocka_unit_test(test_verdict_wording),
        cmocka_unit_test(test_read_cpuidle_cpufreq),
        cmocka_unit_test(test_read_bare),
        cmocka_unit_test(test_read_rapl),
        cmocka_unit_test(test_read_threads),
        cmocka_unit_test_setup_teardown(test_csv_refuses_planted_link, out_setup, out_teardown),
        cmocka_unit_test_setup_teardown(test_csv_rewrites_own_file, out_setup, out_teardown),
        cmocka_unit_test_setup_teardown(test_plot_refuses_planted_script, out_setup, out_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
