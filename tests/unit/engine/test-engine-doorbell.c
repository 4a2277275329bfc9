/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The exec doorbell (engine-doorbell.c): an exec handled once, whether the
 * main socket or the doorbell brings it first. See engine-fixture.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "apply.h"
#include "engine-expect.h"
#include "engine-fixture.h"
#include "engine-internal.h"
#include "procmon.h"
#include "util.h"

/* The exec doorbell: an exec the main socket had when the doorbell rang is
 * handled there, in order; one it lacked is handled from the doorbell, and
 * skipped once when the main socket brings it after all. */
static void test_doorbell_execs_once(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    struct engine_doorbell *d = &e->events.doorbell;
    efx_start(fx);
    assert_null(d->procmon); /* events from the caller: no sockets */
    pack(fx);

    efx_add_task(fx, 1030, 1030, "jitterbug");
    efx_add_task(fx, 1031, 1031, "jitterbug");
    struct procmon_event in_main = {.kind = PROCMON_EXEC, .tid = 1030, .tgid = 1030, .timestamp_ns = now_ns()};
    struct procmon_event late = {.kind = PROCMON_EXEC, .tid = 1031, .tgid = 1031, .timestamp_ns = now_ns()};
    d->rung[0] = in_main;
    d->rung[1] = late;
    d->n_rung = 2;
    /* the main socket's dispatch: the first exec is its to handle */
    assert_false(engine_doorbell_filter(d, &in_main));
    engine_on_event(e, &in_main);
    assert_true(d->rung_seen[0]);
    assert_false(d->rung_seen[1]);
    /* forks and exits are never filtered */
    assert_false(engine_doorbell_filter(d, &(struct procmon_event){.kind = PROCMON_EXIT, .tid = 1031, .tgid = 1031}));

    engine_doorbell_settle(e);
    assert_int_equal(d->n_rung, 0);
    assert_int_equal(d->ahead, 1);
    expect_class(e, 1031, CLASS_JITTER, SOURCE_RULE, 0);
    assert_non_null(applier_find(e->applier, 1031));
    assert_int_equal(e->events.placement_latency.count, 2);

    /* the main socket brings the late one: skipped, once */
    assert_true(engine_doorbell_filter(d, &late));
    assert_int_equal(d->skipped, 1);
    assert_false(engine_doorbell_filter(d, &late));
    /* an exec of the same TID at another time is another exec */
    late.timestamp_ns++;
    assert_false(engine_doorbell_filter(d, &late));

    /* the main socket handles an exec before the ring for it is read: the
     * ring finds it done */
    efx_add_task(fx, 1032, 1032, "jitterbug");
    struct procmon_event first = {.kind = PROCMON_EXEC, .tid = 1032, .tgid = 1032, .timestamp_ns = now_ns()};
    assert_int_equal(d->n_rung, 0);
    assert_false(engine_doorbell_filter(d, &first));
    engine_on_event(e, &first);
    uint64_t placed = e->events.placement_latency.count;
    d->rung[0] = first;
    d->rung_seen[0] = false;
    d->n_rung = 1;
    engine_doorbell_settle(e);
    assert_int_equal(d->already, 1);
    assert_int_equal(d->ahead, 1);
    assert_int_equal(e->events.placement_latency.count, placed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_doorbell_execs_once, efx_setup, efx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
