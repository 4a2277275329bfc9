/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The control socket's replies (status, dump, explain, metrics) built from
 * the fixture engine of engine-fixture.h with its jitter tasks packed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine-fixture.h"
#include "config.h"
#include "engine.h"
#include "engine-snapshot.h"
#include "histogram.h"
#include "report.h"
#include "task.h"
#include "util.h"

static struct json_object *get(struct json_object *o, const char *key)
{
    struct json_object *v;
    if (!json_object_object_get_ex(o, key, &v))
        fail_msg("no \"%s\" in %s", key, json_object_to_json_string(o));
    return v;
}

static int64_t get_int(struct json_object *o, const char *key)
{
    struct json_object *v = get(o, key);
    assert_true(json_object_is_type(v, json_type_int));
    return json_object_get_int64(v);
}

static const char *get_str(struct json_object *o, const char *key)
{
    struct json_object *v = get(o, key);
    if (!json_object_is_type(v, json_type_string))
        fail_msg("\"%s\" is not a string in %s", key, json_object_to_json_string(o));
    return json_object_get_string(v);
}

static bool get_bool(struct json_object *o, const char *key)
{
    struct json_object *v = get(o, key);
    assert_true(json_object_is_type(v, json_type_boolean));
    return json_object_get_boolean(v);
}

static void start_packed(struct engine_fixture *fx)
{
    efx_start(fx);
    efx_tick_with(fx, efx_busy_load);
    efx_tick_with(fx, efx_busy_load);
    struct engine_snapshot s;
    engine_snapshot(fx->e, &s);
    assert_true(s.planned && s.plan->restricted);
}

static void test_status(void **state)
{
    struct engine_fixture *fx = *state;
    start_packed(fx);
    struct json_object *o = report_status(fx->e);
    assert_non_null(o);
    assert_string_equal(get_str(o, "mode"), "affinity");
    assert_true(get_bool(o, "dry_run"));
    assert_false(get_bool(o, "uclamp_supported"));
    assert_false(get_bool(o, "unit_optin"));
    assert_int_equal(get_int(o, "rescans"), 1);
    assert_true(json_object_is_type(get(o, "cpus"), json_type_array));

    struct json_object *t = get(o, "tasks");
    assert_int_equal(get_int(t, "tracked"), 5);
    assert_int_equal(get_int(t, "jitter"), 3);
    assert_int_equal(get_int(t, "intensive"), 1);
    assert_int_equal(get_int(t, "ignore"), 1);
    assert_int_equal(get_int(t, "unclassified"), 0);
    assert_int_equal(get_int(t, "packed"), 3);
    assert_int_equal(get_int(t, "max"), engine_config(fx->e)->max_tasks);

    struct json_object *p = get(o, "plan");
    assert_true(get_bool(p, "restricted"));
    assert_string_equal(get_str(p, "cpus"), EFX_BUSY_PLAN);
    assert_string_equal(get_str(p, "state"), "packed");
    assert_string_equal(get_str(p, "wait"), "none");
    struct engine_snapshot s;
    engine_snapshot(fx->e, &s);
    assert_string_equal(get_str(p, "reason"), s.plan->summary);

    struct json_object *rl = get(o, "last_reload");
    assert_true(get_bool(rl, "ok"));
    assert_string_equal(get_str(rl, "message"), "no reload yet");
    json_object_put(o);

    /* counted when asked, not as of the last tick: after a stop nothing is
     * packed although no tick has run since */
    engine_stop(fx->e);
    assert_int_equal(efx_packed_at_tick(fx), 3);
    o = report_status(fx->e);
    assert_int_equal(get_int(get(o, "tasks"), "packed"), 0);
    assert_int_equal(get_int(get(o, "tasks"), "jitter"), 3);
    json_object_put(o);
}

static void test_dump(void **state)
{
    struct engine_fixture *fx = *state;
    start_packed(fx);
    cpu_set_t plan, want;
    assert_int_equal(cpulist_parse(EFX_BUSY_PLAN, &plan), 0);
    CPU_AND(&want, &plan, &fx->real_mask);

    struct json_object *o = report_dump(fx->e);
    assert_non_null(o);
    struct json_object *tasks = get(o, "tasks");
    /* jitter and intensive tasks; the ignored runner is left out */
    assert_int_equal(json_object_array_length(tasks), 4);
    unsigned seen = 0;
    for (size_t i = 0; i < json_object_array_length(tasks); i++) {
        struct json_object *t = json_object_array_get_idx(tasks, i);
        pid_t tid = (pid_t)get_int(t, "tid");
        if (tid == fx->jit_a || tid == fx->jit_b || tid == fx->jit_b_thread) {
            seen |= tid == fx->jit_a ? 1 : tid == fx->jit_b ? 2 : 4;
            assert_int_equal(get_int(t, "pid"), tid == fx->jit_a ? fx->jit_a : fx->jit_b);
            assert_string_equal(get_str(t, "comm"), "jitterbug");
            assert_string_equal(get_str(t, "class"), "jitter");
            assert_string_equal(get_str(t, "source"), "rule");
            assert_non_null(strstr(get_str(t, "detail"), "rule 'jitterbugs'"));
            assert_string_equal(get_str(t, "original_mask"), efx_fmt(&fx->real_mask));
            assert_string_equal(get_str(t, "current_mask"), efx_fmt(&want));
        } else if (tid == fx->crunch) {
            seen |= 8;
            assert_string_equal(get_str(t, "class"), "intensive");
            assert_non_null(strstr(get_str(t, "detail"), "rule 'crunchers'"));
            /* never moved: both are its real mask */
            assert_string_equal(get_str(t, "original_mask"), efx_fmt(&fx->real_mask));
            assert_string_equal(get_str(t, "current_mask"), efx_fmt(&fx->real_mask));
        } else {
            fail_msg("unexpected task %d in the dump", (int)tid);
        }
    }
    assert_int_equal(seen, 15);

    /* every core, the chosen ones in the mask */
    struct json_object *cores = get(o, "cores");
    assert_int_equal(json_object_array_length(cores), 8);
    unsigned in_mask = 0;
    for (size_t i = 0; i < 8; i++) {
        struct json_object *c = json_object_array_get_idx(cores, i);
        assert_int_equal(get_int(c, "capacity_milli"), 1250);
        if (get_bool(c, "in_mask")) {
            in_mask++;
            assert_true(get_bool(c, "busy"));
            assert_int_equal(get_int(c, "core_id"), 0);
        }
    }
    assert_int_equal(in_mask, 2);
    assert_true(get_bool(get(o, "plan"), "restricted"));
    json_object_put(o);
}

static void test_explain(void **state)
{
    struct engine_fixture *fx = *state;
    start_packed(fx);
    struct json_object *o = NULL;
    assert_int_equal(report_explain(fx->e, fx->jit_b, &o), 0);
    assert_int_equal(get_int(o, "pid"), fx->jit_b);
    assert_int_equal(get_int(o, "threads_total"), 2);
    struct json_object *threads = get(o, "threads");
    assert_int_equal(json_object_array_length(threads), 2);
    for (size_t i = 0; i < 2; i++) {
        const char *pl = get_str(json_object_array_get_idx(threads, i), "placement");
        if (strncmp(pl, "packed on CPUs ", 15) != 0)
            fail_msg("placement \"%s\"", pl);
    }
    json_object_put(o);

    assert_int_equal(report_explain(fx->e, fx->crunch, &o), 0);
    assert_string_equal(get_str(json_object_array_get_idx(get(o, "threads"), 0), "placement"),
                        "not moved: class intensive");
    json_object_put(o);
    o = NULL;
    assert_int_equal(report_explain(fx->e, 999999999, &o), -ESRCH);
    assert_null(o);

    /* a process of many threads: the first REPORT_EXPLAIN_THREADS_MAX explained, all counted */
    for (pid_t tid = 5000; tid < 5000 + REPORT_EXPLAIN_THREADS_MAX + 44; tid++)
        assert_int_equal(efx_track(fx, 5000, tid), 0);
    assert_int_equal(report_explain(fx->e, 5000, &o), 0);
    assert_int_equal(json_object_array_length(get(o, "threads")), REPORT_EXPLAIN_THREADS_MAX);
    assert_int_equal(get_int(o, "threads_total"), REPORT_EXPLAIN_THREADS_MAX + 44);
    json_object_put(o);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static double sample_value(struct json_object *samples, const char *label, const char *value)
{
    for (size_t i = 0; i < json_object_array_length(samples); i++) {
        struct json_object *s = json_object_array_get_idx(samples, i);
        struct json_object *l = get(s, "labels");
        struct json_object *v;
        if (!label ? json_object_object_length(l) == 0
                   : json_object_object_get_ex(l, label, &v) && strcmp(json_object_get_string(v), value) == 0)
            return json_object_get_double(get(s, "value"));
    }
    fail_msg("no sample %s=%s", label ? label : "", value ? value : "");
    return NAN;
}

/* A histogram's samples: cumulative buckets by ascending "le" ending in
 * +Inf, then _sum and _count, the +Inf bucket equal to the count. */
static void expect_histogram(struct json_object *samples, double count)
{
    assert_non_null(samples);
    size_t n = json_object_array_length(samples);
    assert_int_equal(n, HISTOGRAM_N_BOUNDS + 3);
    double prev = 0, prev_le = 0;
    for (size_t i = 0; i <= HISTOGRAM_N_BOUNDS; i++) {
        struct json_object *s = json_object_array_get_idx(samples, i);
        assert_string_equal(get_str(s, "suffix"), "_bucket");
        const char *le = get_str(get(s, "labels"), "le");
        double v = json_object_get_double(get(s, "value"));
        assert_true(v >= prev);
        prev = v;
        if (i < HISTOGRAM_N_BOUNDS) {
            assert_true(strtod(le, NULL) > prev_le);
            prev_le = strtod(le, NULL);
        } else {
            assert_string_equal(le, "+Inf");
            assert_true(v == count);
        }
    }
    assert_string_equal(get_str(json_object_array_get_idx(samples, HISTOGRAM_N_BOUNDS + 1), "suffix"), "_sum");
    struct json_object *c = json_object_array_get_idx(samples, HISTOGRAM_N_BOUNDS + 2);
    assert_string_equal(get_str(c, "suffix"), "_count");
    assert_true(json_object_get_double(get(c, "value")) == count);
}

static void test_metrics(void **state)
{
    struct engine_fixture *fx = *state;
    start_packed(fx);
    /* what the ticks placed is not timed; two placements for events are */
    assert_int_equal(efx_placement_latency(fx)->count, 0);
    histogram_add(efx_placement_latency(fx), 300000);
    histogram_add(efx_placement_latency(fx), 30000000);
    struct json_object *o = report_metrics(fx->e);
    struct json_object *arr = get(o, "metrics");
    size_t n = json_object_array_length(arr);
    assert_true(n >= 10);
    struct json_object *tasks = NULL, *packed = NULL, *restricted = NULL, *util = NULL, *latency = NULL;
    for (size_t i = 0; i < n; i++) {
        struct json_object *f = json_object_array_get_idx(arr, i);
        const char *name = get_str(f, "name"), *type = get_str(f, "type"), *help = get_str(f, "help");
        if (strncmp(name, "turbosched_", 11) != 0)
            fail_msg("family %s: not in the turbosched_ namespace", name);
        if (strlen(help) == 0)
            fail_msg("family %s: empty help", name);
        if (strcmp(type, "gauge") != 0 && strcmp(type, "counter") != 0 && strcmp(type, "histogram") != 0)
            fail_msg("family %s: type \"%s\"", name, type);
        /* Prometheus: counters, and only they, end in _total */
        if ((strcmp(type, "counter") == 0) != ends_with(name, "_total"))
            fail_msg("family %s: type %s", name, type);
        assert_true(json_object_is_type(get(f, "samples"), json_type_array));
        for (size_t k = 0; k < i; k++)
            if (strcmp(name, get_str(json_object_array_get_idx(arr, k), "name")) == 0)
                fail_msg("family %s twice", name);
        if (strcmp(name, "turbosched_tasks") == 0)
            tasks = get(f, "samples");
        else if (strcmp(name, "turbosched_tasks_packed") == 0)
            packed = get(f, "samples");
        else if (strcmp(name, "turbosched_plan_restricted") == 0)
            restricted = get(f, "samples");
        else if (strcmp(name, "turbosched_cpu_utilisation_ratio") == 0)
            util = get(f, "samples");
        else if (strcmp(name, "turbosched_placement_latency_seconds") == 0)
            latency = get(f, "samples");
    }
    assert_non_null(tasks);
    assert_non_null(packed);
    assert_non_null(restricted);
    assert_non_null(util);
    assert_true(sample_value(tasks, "class", "jitter") == 3);
    assert_true(sample_value(tasks, "class", "intensive") == 1);
    assert_true(sample_value(tasks, "class", "ignore") == 1);
    assert_true(sample_value(packed, NULL, NULL) == 3);
    assert_true(sample_value(restricted, NULL, NULL) == 1);
    assert_int_equal(json_object_array_length(util), EFX_N_CPUS);
    assert_true(fabs(sample_value(util, "cpu", "0") - 0.5) < 0.002);
    assert_true(fabs(sample_value(util, "cpu", "1") - 1.0) < 0.002);
    assert_true(fabs(sample_value(util, "cpu", "2")) < 0.002);
    expect_histogram(latency, 2);
    json_object_put(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_status, efx_setup, efx_teardown),
        cmocka_unit_test_setup_teardown(test_dump, efx_setup, efx_teardown),
        cmocka_unit_test_setup_teardown(test_explain, efx_setup, efx_teardown),
        cmocka_unit_test_setup_teardown(test_metrics, efx_setup, efx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
