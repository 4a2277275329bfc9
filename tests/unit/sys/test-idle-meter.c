/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Idle cores kept out of the deep idle states (idle-meter.c): the
 * computation on a 2-core SMT2 chip built by hand (deep and shallow
 * residencies, a core with one thread awake, deep time reported late,
 * what is not measured), the smoothing that keeps only ticks with the
 * jitter unconfined, and the reader on fixture trees (x86 intel_idle
 * states, a disabled deep state, a virtual machine's POLL and haltpoll,
 * no cpuidle at all). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fixture-tree.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "idle-meter.h"
#include "load.h"

#define SEC_US 1000000

/* Two cores of two threads: CPUs 0-1 and 2-3. */
struct chip {
    struct topology t;
    struct topo_cpu cpus[4];
    struct topo_core cores[2];
};

static void chip_build(struct chip *c)
{
    memset(c, 0, sizeof *c);
    c->t = (struct topology){.n_cpus = 4, .cpus = c->cpus, .n_cores = 2, .cores = c->cores, .n_packages = 1};
    for (int cpu = 0; cpu < 4; cpu++) {
        struct topo_core *core = &c->cores[cpu / 2];
        c->cpus[cpu] = (struct topo_cpu){.cpu = cpu, .present = true, .online = true, .core = cpu / 2};
        core->index = cpu / 2;
        core->n_threads = core->n_online = 2;
        CPU_SET(cpu, &core->threads);
        CPU_SET(cpu, &core->online);
        CPU_SET(cpu, &c->t.online);
        CPU_SET(cpu, &c->t.present);
    }
}

/* One tick of one second: CPU n spent deep_ms[n] in deep states, entered
 * them entries[n] times. */
struct tick {
    struct chip chip;
    uint16_t deep[4];
    struct idle_counters prev[4], cur[4];
    uint64_t carry_us[CPU_SETSIZE];
    cpu_set_t busy;
};

static void tick_build(struct tick *tk, const unsigned deep_ms[4], const unsigned entries[4])
{
    memset(tk, 0, sizeof *tk);
    chip_build(&tk->chip);
    for (int cpu = 0; cpu < 4; cpu++) {
        tk->deep[cpu] = 1u << 3;
        tk->prev[cpu] = (struct idle_counters){.valid = true, .time_us = 5 * SEC_US, .usage = 100};
        tk->cur[cpu] = (struct idle_counters){
            .valid = true, .time_us = 5 * SEC_US + deep_ms[cpu] * 1000ull, .usage = 100 + entries[cpu]};
    }
}

static struct idle_measurement measure(struct tick *tk, uint64_t dt_us)
{
    const struct idle_measure_input in = {.topo = &tk->chip.t,
                                          .busy_cpus = &tk->busy,
                                          .deep = tk->deep,
                                          .prev = tk->prev,
                                          .cur = tk->cur,
                                          .dt_us = dt_us};
    struct idle_measurement m;
    idle_measure(&in, tk->carry_us, &m);
    return m;
}

/* Core 0: threads out of the deep states 200 and 100 ms, which add up to
 * 300; core 1: CPU 2 deep all along, CPU 3 never, so the core is never
 * deep (one thread awake keeps it out). Entries: 10 + 20 + 5. */
static void test_woken_and_wakes(void **state)
{
    (void)state;
    struct tick tk;
    tick_build(&tk, (const unsigned[]){800, 900, 1000, 0}, (const unsigned[]){10, 20, 5, 0});
    struct idle_measurement m = measure(&tk, SEC_US);
    assert_true(m.measured);
    assert_int_equal(m.woken_milli, 300 + 1000);
    assert_int_equal(m.wakes_per_s, 35);

    /* core 0 busy: only core 1 counts */
    tick_build(&tk, (const unsigned[]){800, 900, 1000, 0}, (const unsigned[]){10, 20, 5, 0});
    CPU_SET(0, &tk.busy);
    m = measure(&tk, SEC_US);
    assert_true(m.measured);
    assert_int_equal(m.woken_milli, 1000);
    assert_int_equal(m.wakes_per_s, 5);

    /* a half-second tick: the same counts are twice the rate; the
     * threads' times out add up to at most the tick */
    tick_build(&tk, (const unsigned[]){400, 450, 500, 0}, (const unsigned[]){10, 20, 5, 0});
    m = measure(&tk, SEC_US / 2);
    assert_int_equal(m.woken_milli, 300 + 1000);
    assert_int_equal(m.wakes_per_s, 70);

    /* both cores deep all along */
    tick_build(&tk, (const unsigned[]){1000, 1000, 1000, 1000}, (const unsigned[]){1, 1, 1, 1});
    m = measure(&tk, SEC_US);
    assert_true(m.measured);
    assert_int_equal(m.woken_milli, 0);
    assert_int_equal(m.wakes_per_s, 4);
}

/* cpuidle adds a residency when the CPU leaves the state: 1.5 s deep
 * reported in a tick of 1 s fills it, and the rest goes to the next. */
static void test_deep_time_reported_late(void **state)
{
    (void)state;
    struct tick tk;
    tick_build(&tk, (const unsigned[]){1000, 1000, 1000, 1500}, (const unsigned[]){0, 0, 0, 1});
    struct idle_measurement m = measure(&tk, SEC_US);
    assert_int_equal(m.woken_milli, 0);
    assert_int_equal(tk.carry_us[3], SEC_US / 2);
    /* next tick: CPU 3 reports nothing, but half of it was deep */
    for (int cpu = 0; cpu < 4; cpu++)
        tk.prev[cpu] = tk.cur[cpu];
    tk.cur[0].time_us += SEC_US;
    tk.cur[1].time_us += SEC_US;
    tk.cur[2].time_us += SEC_US;
    m = measure(&tk, SEC_US);
    assert_int_equal(m.woken_milli, 500);
    assert_int_equal(tk.carry_us[3], 0);
}

static void test_not_measured(void **state)
{
    (void)state;
    static const unsigned deep_ms[4] = {900, 900, 900, 900}, entries[4] = {1, 1, 1, 1};
    struct tick tk;

    /* no time passed */
    tick_build(&tk, deep_ms, entries);
    assert_false(measure(&tk, 0).measured);
    /* every core busy */
    tick_build(&tk, deep_ms, entries);
    CPU_SET(1, &tk.busy);
    CPU_SET(2, &tk.busy);
    assert_false(measure(&tk, SEC_US).measured);
    /* a thread of an idle core without a deep state */
    tick_build(&tk, deep_ms, entries);
    tk.deep[3] = 0;
    assert_false(measure(&tk, SEC_US).measured);
    /* ... or without a reading, or whose counters went back (replugged) */
    tick_build(&tk, deep_ms, entries);
    tk.prev[2].valid = false;
    assert_false(measure(&tk, SEC_US).measured);
    tick_build(&tk, deep_ms, entries);
    tk.cur[1].time_us = 0;
    assert_false(measure(&tk, SEC_US).measured);
    /* a busy core's thread without a reading does not matter */
    tick_build(&tk, deep_ms, entries);
    tk.cur[1].valid = false;
    CPU_SET(0, &tk.busy);
    struct idle_measurement m = measure(&tk, SEC_US);
    assert_true(m.measured);
    assert_int_equal(m.woken_milli, 200);
}

/* Only ticks with the jitter unconfined are kept, smoothed. */
static void test_keep(void **state)
{
    (void)state;
    struct idle_kept k = {0};
    const struct idle_measurement a = {.measured = true, .woken_milli = 800, .wakes_per_s = 400};
    const struct idle_measurement b = {.measured = true, .woken_milli = 200, .wakes_per_s = 100};
    const struct idle_measurement none = {0};

    idle_keep(&k, &a, false, 1000, 2000);
    assert_false(k.measured);
    idle_keep(&k, &none, true, 1000, 2000);
    assert_false(k.measured);
    idle_keep(&k, &a, true, 1000, 2000);
    assert_true(k.measured);
    assert_int_equal(k.woken_milli, 800);
    assert_int_equal(k.wakes_per_s, 400);
    /* confined: what the packed plan measured says nothing of none */
    idle_keep(&k, &b, false, 3000, 2000);
    assert_int_equal(k.woken_milli, 800);
    assert_int_equal(k.at_ms, 1000);
    /* one half-life since the last kept: half way */
    idle_keep(&k, &b, true, 3000, 2000);
    assert_int_equal(k.woken_milli, load_ewma(800, 200, 2000, 2000));
    assert_int_equal(k.woken_milli, 500);
    assert_int_equal(k.wakes_per_s, 250);
    assert_int_equal(k.at_ms, 3000);
}

/* ---- the reader, on fixture trees ---- */

static char root[PATH_MAX];

static void put_state(int cpu, int k, const char *file, uint64_t v)
{
    char rel[128], text[32];
    snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpu%d/cpuidle/state%d/%s", cpu, k, file);
    snprintf(text, sizeof text, "%llu\n", (unsigned long long)v);
    fixture_put(root, rel, text);
}

static void put_state_name(int cpu, int k, const char *name)
{
    char rel[128], text[32];
    snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpu%d/cpuidle/state%d/name", cpu, k);
    snprintf(text, sizeof text, "%s\n", name);
    fixture_put(root, rel, text);
}

static int setup_root(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/test-idle-meter.XXXXXX");
    assert_non_null(mkdtemp(root));
    return 0;
}

static int teardown_root(void **state)
{
    (void)state;
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd);
}

/* intel_idle on every CPU: POLL, C1, C1E shallow; C3 and C6 deep. */
static void put_x86_states(void)
{
    static const char *const names[] = {"POLL", "C1", "C1E", "C3", "C6"};
    static const unsigned latency[] = {0, 1, 10, 59, 82};
    for (int cpu = 0; cpu < 4; cpu++)
        for (int k = 0; k < 5; k++) {
            put_state_name(cpu, k, names[k]);
            put_state(cpu, k, "latency", latency[k]);
            put_state(cpu, k, "disable", 0);
            put_state(cpu, k, "usage", 1000);
            put_state(cpu, k, "time", 1000000);
        }
}

static void test_reader_x86(void **state)
{
    (void)state;
    struct chip c;
    static struct idle_meter m;
    struct idle_measurement out;
    chip_build(&c);
    put_x86_states();
    assert_int_equal(idle_meter_open(&m, root, &c.t), 4);
    assert_int_equal(m.deep[0], (1u << 3) | (1u << 4));
    assert_non_null(strstr(m.what, "deep from 50 us (cpu0: POLL 0us, C1 1us, C1E 10us, C3 59us, C6 82us) on 4 CPUs"));
    idle_meter_sample(&m, &c.t, &(cpu_set_t){0}, 10 * (uint64_t)SEC_US, &out);
    assert_false(out.measured); /* the first reading: nothing to compare */

    /* one second: core 0's threads 600 ms in C6 + 200 ms in C3, and 1 s in
     * C6 (0.2 s out); core 1's CPU 2 deep all along, CPU 3 only in C1E
     * (shallow: out all along); 5 + 2 + 3 + 0 deep entries */
    put_state(0, 4, "time", 1600000);
    put_state(0, 3, "time", 1200000);
    put_state(0, 4, "usage", 1005);
    put_state(1, 4, "time", 2000000);
    put_state(1, 4, "usage", 1002);
    put_state(2, 3, "time", 2000000);
    put_state(2, 3, "usage", 1003);
    put_state(3, 2, "time", 2000000);
    put_state(3, 2, "usage", 1400);
    assert_int_equal(idle_meter_sample(&m, &c.t, &(cpu_set_t){0}, 11 * (uint64_t)SEC_US, &out), 4);
    assert_true(out.measured);
    assert_int_equal(out.woken_milli, 200 + 1000);
    assert_int_equal(out.wakes_per_s, 10);

    /* C3 and C6 disabled on CPU 3: it has no deep state, nothing is
     * measured while its core is idle */
    put_state(3, 3, "disable", 1);
    put_state(3, 4, "disable", 1);
    assert_int_equal(idle_meter_open(&m, root, &c.t), 3);
    assert_int_equal(m.deep[3], 0);
    idle_meter_sample(&m, &c.t, &(cpu_set_t){0}, 12 * (uint64_t)SEC_US, &out);
    idle_meter_sample(&m, &c.t, &(cpu_set_t){0}, 13 * (uint64_t)SEC_US, &out);
    assert_false(out.measured);
}

/* A virtual machine's POLL and haltpoll: nothing deep, nothing measured. */
static void test_reader_vm(void **state)
{
    (void)state;
    struct chip c;
    static struct idle_meter m;
    chip_build(&c);
    for (int cpu = 0; cpu < 4; cpu++) {
        put_state_name(cpu, 0, "POLL");
        put_state(cpu, 0, "latency", 0);
        put_state_name(cpu, 1, "haltpoll idle");
        put_state(cpu, 1, "latency", 1);
    }
    assert_int_equal(idle_meter_open(&m, root, &c.t), -ENODEV);
    assert_string_equal(m.what, "no enabled idle state with an exit latency of 50 us or more "
                                "(cpu0: POLL 0us, haltpoll idle 1us)");
}

static void test_reader_no_cpuidle(void **state)
{
    (void)state;
    struct chip c;
    static struct idle_meter m;
    chip_build(&c);
    assert_int_equal(idle_meter_open(&m, root, &c.t), -ENODEV);
    assert_string_equal(m.what, "no cpuidle states (sys/devices/system/cpu/cpuN/cpuidle)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_woken_and_wakes),
        cmocka_unit_test(test_deep_time_reported_late),
        cmocka_unit_test(test_not_measured),
        cmocka_unit_test(test_keep),
        cmocka_unit_test_setup_teardown(test_reader_x86, setup_root, teardown_root),
        cmocka_unit_test_setup_teardown(test_reader_vm, setup_root, teardown_root),
        cmocka_unit_test_setup_teardown(test_reader_no_cpuidle, setup_root, teardown_root),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
