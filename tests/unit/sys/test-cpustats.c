/* SPDX-License-Identifier: GPL-2.0-or-later */
/* CPU frequency and idle statistics: libcpupower reads the live /sys, so
 * the readers are checked against the same files read directly, and the JSON
 * builder against hand-made values (including the n/a path). */
#include <errno.h>
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cpustats.h"
#include "util.h"

#define CPU_SYS "/sys/devices/system/cpu"

static bool read_u64_file(const char *path, uint64_t *ret)
{
    char buf[64];
    if (read_file(path, buf, sizeof buf) < 0)
        return false;
    buf[strcspn(buf, "\n")] = '\0';
    return parse_u64(buf, ret) == 0;
}

static unsigned sysfs_state_count(unsigned cpu)
{
    char buf[64], path[128];
    /* libcpupower reports no states when no cpuidle driver is active. */
    if (read_file(CPU_SYS "/cpuidle/current_driver", buf, sizeof buf) < 0 || strncmp(buf, "none", 4) == 0)
        return 0;
    unsigned n = 0;
    for (;; n++) {
        snprintf(path, sizeof path, CPU_SYS "/cpu%u/cpuidle/state%u", cpu, n);
        if (access(path, F_OK) < 0)
            return n;
    }
}

static uint64_t sysfs_usage(unsigned cpu, unsigned state)
{
    char path[128];
    uint64_t v = 0;
    snprintf(path, sizeof path, CPU_SYS "/cpu%u/cpuidle/state%u/usage", cpu, state);
    assert_true(read_u64_file(path, &v));
    return v;
}

static void test_live_values_match_sysfs(void **state)
{
    unsigned n_conf = (unsigned)sysconf(_SC_NPROCESSORS_CONF);
    /* Counters only grow: read sysfs before and after our reader. */
    uint64_t before[64][CPUSTATS_MAX_IDLE_STATES] = {{0}};
    for (unsigned c = 0; c < MIN(n_conf, 64u); c++)
        for (unsigned k = 0; k < MIN(sysfs_state_count(c), (unsigned)CPUSTATS_MAX_IDLE_STATES); k++)
            before[c][k] = sysfs_usage(c, k);

    struct cpustats s;
    assert_int_equal(cpustats_read(&s), 0);
    assert_int_equal(s.n_cpus, n_conf);
    unsigned any_states = 0;
    for (unsigned c = 0; c < MIN(s.n_cpus, 64u); c++) {
        const struct cpustats_cpu *cpu = &s.cpus[c];
        assert_int_equal(cpu->cpu, c);
        char path[128];
        uint64_t khz;
        snprintf(path, sizeof path, CPU_SYS "/cpu%u/cpufreq/scaling_cur_freq", c);
        if (read_u64_file(path, &khz))
            assert_true(cpu->freq_khz > 0); /* it moves; only that it is known */
        else
            assert_int_equal(cpu->freq_khz, 0);

        unsigned n = sysfs_state_count(c);
        assert_int_equal(cpu->n_idle, MIN(n, (unsigned)CPUSTATS_MAX_IDLE_STATES));
        any_states += cpu->n_idle;
        for (unsigned k = 0; k < cpu->n_idle; k++) {
            char name[64];
            snprintf(path, sizeof path, CPU_SYS "/cpu%u/cpuidle/state%u/name", c, k);
            assert_true(read_file(path, name, sizeof name) > 0);
            name[strcspn(name, "\n")] = '\0';
            assert_string_equal(cpu->idle[k].name, name);
            uint64_t after = sysfs_usage(c, k);
            assert_true(before[c][k] <= cpu->idle[k].usage && cpu->idle[k].usage <= after);
        }
    }

    uint64_t usage[64];
    int r = cpustats_idle_usage(usage, MIN(n_conf, 64u));
    if (any_states == 0) {
        print_message("no cpuidle driver active here: checking the no-data path\n");
        assert_int_equal(r, -ENODATA);
    } else {
        assert_int_equal(r, (int)MIN(n_conf, 64u));
        for (unsigned c = 0; c < (unsigned)r; c++) {
            uint64_t sum_before = 0;
            for (unsigned k = 0; k < s.cpus[c].n_idle; k++)
                sum_before += s.cpus[c].idle[k].usage;
            assert_true(usage[c] >= sum_before);
        }
    }

    struct json_object *j = cpustats_to_json(&s);
    assert_non_null(j);
    assert_int_equal(json_object_array_length(j), s.n_cpus);
    json_object_put(j);
    cpustats_done(&s);
    assert_null(s.cpus);
}

static void test_json_shape(void **state)
{
    struct cpustats_cpu cpus[2] = {
        {.cpu = 0, .freq_khz = 0, .n_idle = 2, .idle = {{"POLL", 12, 34}, {"haltpoll", 5000000000ull, 7}}},
        {.cpu = 1, .freq_khz = 2400000, .n_idle = 0},
    };
    struct cpustats s = {.n_cpus = 2, .cpus = cpus};
    struct json_object *j = cpustats_to_json(&s);
    assert_non_null(j);
    const char *text = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN);
    assert_string_equal(text, "[{\"cpu\":0,\"freq_khz\":null,\"idle\":[{\"name\":\"POLL\",\"usage\":12,\"time_us\":34},"
                              "{\"name\":\"haltpoll\",\"usage\":5000000000,\"time_us\":7}]},"
                              "{\"cpu\":1,\"freq_khz\":2400000,\"idle\":[]}]");
    json_object_put(j);

    struct cpustats empty = {0};
    j = cpustats_to_json(&empty);
    assert_string_equal(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN), "[]");
    json_object_put(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_live_values_match_sysfs),
        cmocka_unit_test(test_json_shape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
