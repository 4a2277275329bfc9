/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The snapshots the control socket renders (engine-snapshot.c): the
 * status snapshot's fields after a packed tick, counted now rather than as
 * of the tick, and one task's snapshot and explanation, packed or not.
 * See engine-fixture.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "apply.h"
#include "engine-expect.h"
#include "engine-fixture.h"
#include "engine-internal.h"
#include "engine-snapshot.h"
#include "packer.h"
#include "procmon.h"
#include "task.h"
#include "util.h"

static void expect_has(const char *s, const char *what)
{
    if (!strstr(s, what))
        fail_msg("\"%s\" not in \"%s\"", what, s);
}

static void test_status_after_packed_tick(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    uint64_t before = now_ms(); /* the engine was made (setup) before */
    efx_start(fx);
    pack(fx);

    struct engine_snapshot s;
    engine_snapshot_status(e, &s);
    assert_true(s.start_ms > 0 && s.start_ms <= before);
    assert_true(s.dry_run);
    assert_false(s.mode_cgroup);
    assert_false(s.unit_optin);
    assert_false(s.uclamp_supported);
    assert_true(s.request_paths); /* behaviour, request paths and the tail guard: on by default */
    assert_true(s.tail_guard);
    assert_int_equal(s.tracked, 5);
    assert_int_equal(s.by_class[CLASS_JITTER], 3);
    assert_int_equal(s.by_class[CLASS_INTENSIVE], 1);
    assert_int_equal(s.by_class[CLASS_IGNORE], 1);
    assert_int_equal(s.packed, 3);
    assert_true(s.memory_bytes > 0);
    assert_true(s.max_tasks >= s.tracked);
    assert_true(s.planned);
    assert_true(s.plan->restricted);
    assert_int_equal(s.plan->reason, PACKER_REASON_PACKED);
    assert_string_equal(efx_fmt(&s.plan->mask), EFX_BUSY_PLAN);
    assert_int_equal(s.counters.ticks, 3); /* engine_start ticks once, pack twice */
    assert_int_equal(s.counters.rescans, 1);
    assert_int_equal(s.counters.reloads_ok, 0);
    /* events come from the test: no socket, no doorbell, nothing timed */
    assert_null(s.procmon);
    assert_false(s.doorbell);
    assert_int_equal(s.doorbell_rings, 0);
    assert_int_equal(s.placement_latency->count, 0);
    assert_int_equal(s.adopted_at_exec + s.adopted_at_tick + s.adopted_at_restore, 0);
    assert_int_equal(s.kept_out, 0);
    assert_false(s.pause.paused);
    assert_int_equal(s.pause.pauses, 0);
    assert_int_equal(s.delay.delay_ns, 0);

    /* an exec after the tick: counted at once, while the tick's count lags */
    efx_add_task(fx, 1010, 1010, "jitterbug");
    engine_on_event(e,
                    &(struct procmon_event){.kind = PROCMON_EXEC, .tid = 1010, .tgid = 1010, .timestamp_ns = now_ns()});
    assert_int_equal(efx_packed_at_tick(fx), 3);
    engine_snapshot(e, &s);
    assert_int_equal(s.tracked, 6);
    assert_int_equal(s.by_class[CLASS_JITTER], 4);
    assert_int_equal(s.packed, 4);
    assert_int_equal(s.placement_latency->count, 1);

    assert_int_equal(engine_pause(e, 0), 4);
    engine_snapshot(e, &s);
    assert_true(s.pause.paused);
    assert_true(s.pause.admin);
    assert_int_equal(s.pause.pauses, 1);
    assert_true(s.pause.since_ms > 0);
    assert_int_equal(s.packed, 0);
}

/* A packed jitter task: its record's masks and the plan; an intensive one
 * (no record): the mask the system has, both ways, and why it was not moved. */
static void test_task_snapshot_and_explain(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    efx_start(fx);
    pack(fx);

    const struct task *t = task_table_find(e->tasks, fx->jit_a);
    assert_non_null(t);
    struct engine_task_snapshot ts;
    engine_task_snapshot(e, t, &ts);
    expect_has(ts.detail, "rule 'jitterbugs'");
    assert_true(ts.masks);
    assert_string_equal(efx_fmt(&ts.original), efx_fmt(&fx->real_mask));
    assert_string_equal(efx_fmt(&ts.current), EFX_BUSY_PLAN);
    assert_false(ts.slice);
    struct engine_task_explain ex;
    engine_task_explain(e, t, &ex);
    expect_has(ex.placement, "packed on CPUs " EFX_BUSY_PLAN " (plan: ");
    expect_has(ex.request_path, "not looked at");

    t = task_table_find(e->tasks, fx->crunch);
    assert_non_null(t);
    engine_task_snapshot(e, t, &ts);
    expect_has(ts.detail, "rule 'crunchers'");
    assert_true(ts.masks);
    assert_string_equal(efx_fmt(&ts.original), efx_fmt(&fx->real_mask));
    assert_string_equal(efx_fmt(&ts.current), efx_fmt(&fx->real_mask));
    assert_false(ts.run_delay);
    engine_task_explain(e, t, &ex);
    assert_string_equal(ex.placement, "not moved: class intensive");

    /* every tracked task, once, in the table's order */
    size_t iter = 0;
    unsigned n = 0;
    while (engine_task_next(e, &iter))
        n++;
    assert_int_equal(n, 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_status_after_packed_tick, efx_setup, efx_teardown),
        cmocka_unit_test_setup_teardown(test_task_snapshot_and_explain, efx_setup, efx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
