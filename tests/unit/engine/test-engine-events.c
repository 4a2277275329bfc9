/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The engine's events (engine-events.c): fork, exec and exit events fed
 * directly, the seat they count for, and the rescans of /proc when events
 * are lost. See engine-fixture.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apply.h"
#include "engine-expect.h"
#include "engine-fixture.h"
#include "engine-internal.h"
#include "fd-limit.h"
#include "procmon.h"
#include "procscan.h"
#include "task.h"
#include "util.h"

/* Events reach the engine without the proc connector: a new thread of a
 * packed process and an exec'd process are tracked, classified and packed
 * under the plan; their exits forget them. */
static void test_events_fed_directly(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    efx_start(fx);
    assert_int_equal(engine_procmon_fd(e), -EBADF);
    pack(fx);

    /* what the ticks packed is not timed: no event behind it */
    const struct histogram *lat = &e->events.placement_latency;
    assert_int_equal(lat->count, 0);

    efx_add_task(fx, 1010, 1010, "jitterbug");
    uint64_t t_event = now_ns() - 2000000; /* the kernel saw the exec 2 ms ago */
    engine_on_event(e,
                    &(struct procmon_event){.kind = PROCMON_EXEC, .tid = 1010, .tgid = 1010, .timestamp_ns = t_event});
    expect_class(e, 1010, CLASS_JITTER, SOURCE_RULE, 0);
    assert_non_null(applier_find(e->applier, 1010));
    expect_log("would set pid 1010 (jitterbug)");
    assert_int_equal(lat->count, 1);
    assert_true(lat->max_ns >= 2000000 && lat->max_ns < now_ns() - t_event + 1);
    assert_int_equal(e->events.event_ns, 0); /* only while the event is handled */

    efx_add_task(fx, fx->jit_b, 1011, "jitterbug");
    engine_on_event(e, &(struct procmon_event){.kind = PROCMON_FORK,
                                               .tid = 1011,
                                               .tgid = fx->jit_b,
                                               .fork = {.parent_tid = 1, .parent_tgid = 1},
                                               .timestamp_ns = now_ns()});
    expect_class(e, 1011, CLASS_JITTER, SOURCE_RULE, 0);
    assert_non_null(applier_find(e->applier, 1011));
    expect_counts(e, 5, 1, 1, 5);
    /* the new thread inherited its creator's confined mask: recorded, with
     * nothing to set, so no placement to time */
    assert_int_equal(lat->count, 1);

    /* an event stamped after the daemon's clock (none should be) counts as 0 */
    efx_add_task(fx, 1012, 1012, "jitterbug");
    engine_on_event(e, &(struct procmon_event){
                           .kind = PROCMON_EXEC, .tid = 1012, .tgid = 1012, .timestamp_ns = now_ns() + 1000000000});
    assert_non_null(applier_find(e->applier, 1012));
    assert_int_equal(lat->count, 2);
    assert_int_equal(lat->bucket[0], 1);
    efx_remove_task(fx, 1012, 1012);
    engine_on_event(e, &(struct procmon_event){.kind = PROCMON_EXIT, .tid = 1012, .tgid = 1012});

    efx_remove_task(fx, 1010, 1010);
    engine_on_event(e, &(struct procmon_event){.kind = PROCMON_EXIT, .tid = 1010, .tgid = 1010});
    efx_remove_task(fx, fx->jit_b, 1011);
    engine_on_event(e, &(struct procmon_event){.kind = PROCMON_EXIT, .tid = 1011, .tgid = fx->jit_b});
    assert_null(task_table_find(e->tasks, 1010));
    assert_null(applier_find(e->applier, 1010));
    assert_null(task_table_find(e->tasks, 1011));
    expect_counts(e, 3, 1, 1, 3);
    assert_int_equal(lat->count, 2); /* exits place nothing */
    expect_real_masks_unchanged(fx);
}

/* A user who keeps the proc connector overflowing (a fork storm that never
 * stops) made every tick a walk of /proc at nice -10: rescans back off
 * while overflows keep coming close together, and one still follows once
 * the wait has passed. */
static void test_overflow_rescans_back_off(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    efx_start(fx);
    uint64_t r0 = e->counters.rescans;
    for (int i = 0; i < 40; i++) {
        assert_int_equal(engine_events_lost(e), 0);
        efx_tick_with(fx, efx_no_load);
    }
    uint64_t walks = e->counters.rescans - r0;
    print_message("40 ticks, each after lost events: %" PRIu64 " walks of /proc\n", walks);
    assert_true(walks >= 1 && walks <= 4);
    /* not forgotten: once the wait has passed, the walk comes */
    assert_true(e->events.rescan_pending);
    efx_add_task(fx, 1050, 1050, "crunch");
    e->events.last_rescan_ms -= 60000;
    efx_tick_with(fx, efx_no_load);
    assert_false(e->events.rescan_pending);
    expect_class(e, 1050, CLASS_INTENSIVE, SOURCE_RULE, 1);
}

/* Where the daemon sits (seat.c) follows the execs it places, not any
 * exec: a user's exec loop pinned to one CPU (taskset) would otherwise
 * choose the CPU the daemon runs on, at realtime priority, beside other
 * users' tasks there. A pinned task is left alone, so its execs do not
 * count; an unpinned jitter task's do. */
static void test_seat_counts_only_placed_execs(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    efx_start(fx);
    pack(fx);
    seat_init(&e->seat);
    const int pins[] = {3, 4}; /* out of the plan and in it */
    for (unsigned p = 0; p < ELEMENTSOF(pins); p++) {
        pid_t tid = (pid_t)(1040 + p);
        efx_add_task(fx, tid, tid, "jitterbug");
        CPU_ZERO(&fx->fake.tasks[fx->fake.n_tasks - 1].mask);
        CPU_SET(pins[p], &fx->fake.tasks[fx->fake.n_tasks - 1].mask);
        for (unsigned i = 0; i < 300; i++)
            engine_on_event(
                e,
                &(struct procmon_event){
                    .kind = PROCMON_EXEC, .tid = tid, .tgid = tid, .cpu = (uint32_t)pins[p], .timestamp_ns = now_ns()});
        assert_null(applier_find(e->applier, tid));
        assert_int_equal(e->seat.execs[pins[p]], 0);
    }
    assert_int_equal(e->seat.total, 0);
    efx_add_task(fx, 1042, 1042, "jitterbug");
    engine_on_event(e, &(struct procmon_event){
                           .kind = PROCMON_EXEC, .tid = 1042, .tgid = 1042, .cpu = 2, .timestamp_ns = now_ns()});
    assert_non_null(applier_find(e->applier, 1042));
    assert_int_equal(e->seat.execs[2], 1);
    assert_int_equal(e->seat.total, 1);
}

/* Lost events: a rescan at once when none ran within a tick interval, else
 * at the next tick; either finds the tasks whose events were lost. */
static void test_lost_events_rescan(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    efx_start(fx);
    assert_int_equal(e->counters.rescans, 1);
    efx_add_task(fx, 1020, 1020, "crunch");

    e->events.last_rescan_ms = now_ms(); /* as if the start's rescan were this moment */
    assert_int_equal(engine_events_lost(e), 0);
    expect_log("proc connector overflowed, events lost: rescanning /proc");
    assert_true(e->events.rescan_pending);
    assert_int_equal(e->counters.rescans, 1);
    assert_null(task_table_find(e->tasks, 1020));
    efx_tick_with(fx, efx_no_load);
    assert_false(e->events.rescan_pending);
    assert_int_equal(e->counters.rescans, 2);
    expect_class(e, 1020, CLASS_INTENSIVE, SOURCE_RULE, 1);

    /* events handled at a realtime priority (the default): the walk of
     * /proc waits for the tick, however long ago the last one ran */
    assert_true(e->cfg->realtime_priority > 0);
    efx_add_task(fx, 1021, 1021, "jitterbug");
    e->events.last_rescan_ms = 0; /* long ago */
    assert_int_equal(engine_events_lost(e), 0);
    assert_true(e->events.rescan_pending);
    assert_int_equal(e->counters.rescans, 2);
    /* a tick at realtime priority (events kept coming) leaves it to one at
     * normal priority */
    e->events.tick_at_rt = true;
    efx_tick_with(fx, efx_no_load);
    assert_true(e->events.rescan_pending);
    assert_int_equal(e->counters.rescans, 2);
    e->events.tick_at_rt = false;
    efx_tick_with(fx, efx_no_load);
    assert_int_equal(e->counters.rescans, 3);
    expect_class(e, 1021, CLASS_JITTER, SOURCE_RULE, 0);

    /* at normal priority: at once */
    e->cfg->realtime_priority = 0;
    efx_add_task(fx, 1022, 1022, "jitterbug");
    e->events.last_rescan_ms = 0;
    assert_int_equal(engine_events_lost(e), 0);
    assert_false(e->events.rescan_pending);
    assert_int_equal(e->counters.rescans, 4);
    expect_class(e, 1022, CLASS_JITTER, SOURCE_RULE, 0);
}

/* Threads 7000.. of process 7000 in the tree, all named comm. */
static void put_threads(struct engine_fixture *fx, unsigned n, const char *comm)
{
    for (unsigned i = 0; i < n; i++) {
        char rel[64], text[256];
        pid_t tid = 7000 + (pid_t)i;
        snprintf(rel, sizeof rel, "proc/7000/task/%d/stat", (int)tid);
        snprintf(text, sizeof text, "%d (%s) S 1 7000 7000 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %d 1 1\n", (int)tid, comm,
                 5000 + (int)tid);
        efx_put(fx, rel, text);
    }
}

/* Renames a rescan puts off (over one user's budget) are found by another
 * rescan RESCAN_RENAMES_TICKS ticks later, not left to the next overflow. */
static void test_deferred_renames_rescanned(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    efx_start(fx);
    const unsigned n = PROCSCAN_RENAMES_PER_USER + 2;
    put_threads(fx, n, "w-old");
    assert_int_equal(engine_events_lost(e), 0);
    efx_tick_with(fx, efx_no_load);
    assert_non_null(task_table_find(e->tasks, 7000 + (pid_t)n - 1));
    assert_int_equal(e->events.rescan_renames_at, 0);

    put_threads(fx, n, "w-new");
    e->events.last_rescan_ms = 0; /* a while ago: walks close together back off */
    assert_int_equal(engine_events_lost(e), 0);
    efx_tick_with(fx, efx_no_load);
    uint64_t rescans = e->counters.rescans;
    unsigned old = 0;
    for (unsigned i = 0; i < n; i++)
        old += strcmp(task_table_find(e->tasks, 7000 + (pid_t)i)->comm, "w-old") == 0;
    assert_int_equal(old, 2);
    assert_true(e->events.rescan_renames_at > 0);
    for (unsigned i = 0; i < RESCAN_RENAMES_TICKS; i++)
        efx_tick_with(fx, efx_no_load);
    assert_int_equal(e->counters.rescans, rescans + 1);
    for (unsigned i = 0; i < n; i++)
        assert_string_equal(task_table_find(e->tasks, 7000 + (pid_t)i)->comm, "w-new");
    assert_int_equal(e->events.rescan_renames_at, 0);
}

/* A rescan that finds a thread it may not read (EISDIR here; hidepid or a
 * security module in life) keeps it and is not repeated for it. One that
 * fails for want of file descriptors is repeated at each tick until it
 * succeeds, and says so once each way. */
static void test_rescan_retried(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    efx_start(fx);
    char rel[64], path[PATH_MAX], stat[1024];
    snprintf(rel, sizeof rel, "proc/%d/task/%d/stat", (int)fx->crunch, (int)fx->crunch);
    snprintf(path, sizeof path, "%s/%s", fx->root, rel);
    assert_true(read_file(path, stat, sizeof stat) > 0);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mkdir(path, 0755), 0); /* read(2) says EISDIR */
    assert_int_equal(engine_events_lost(e), 0);
    efx_tick_with(fx, efx_no_load);
    assert_int_equal(e->counters.rescans, 2);
    assert_false(e->events.rescan_pending);
    assert_null(strstr(efx_log(), "rescan of /proc:"));
    assert_non_null(task_table_find(e->tasks, fx->crunch));
    assert_int_equal(rmdir(path), 0);
    efx_put(fx, rel, stat);

    struct rlimit old;
    e->events.last_rescan_ms = 0; /* a while ago: walks close together back off */
    assert_int_equal(engine_events_lost(e), 0);
    assert_int_equal(fd_limit_lower(0, &old), 0);
    int r = engine_tick(e); /* /proc cannot be opened */
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
    assert_int_equal(r, 0);
    assert_int_equal(e->counters.rescans, 3);
    expect_log("rescan of /proc: the walk failed: Too many open files; tried again at each tick");
    assert_true(e->events.rescan_pending);
    assert_non_null(task_table_find(e->tasks, fx->crunch));

    efx_tick_with(fx, efx_no_load);
    assert_int_equal(e->counters.rescans, 4);
    assert_false(e->events.rescan_pending);
    expect_log("rescan of /proc: succeeded again");
    expect_class(e, fx->crunch, CLASS_INTENSIVE, SOURCE_RULE, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_events_fed_directly, efx_setup, efx_teardown),
        cmocka_unit_test_setup_teardown(test_seat_counts_only_placed_execs, efx_setup, efx_teardown),
        cmocka_unit_test_setup_teardown(test_overflow_rescans_back_off, efx_setup, efx_teardown),
        cmocka_unit_test_setup_teardown(test_lost_events_rescan, efx_setup, efx_teardown),
        cmocka_unit_test_setup_teardown(test_deferred_renames_rescanned, efx_setup, efx_teardown),
        cmocka_unit_test_setup_teardown(test_rescan_retried, efx_setup, efx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
