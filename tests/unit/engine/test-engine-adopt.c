/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Adoption (engine-adopt.c): a task forked by one the engine packed carries
 * its mask; adopted at its exec, at a tick, at a stop or found by a rescan,
 * with its creator's original. See engine-fixture.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/resource.h>
#include <stdio.h>

#include "apply.h"
#include "engine-expect.h"
#include "engine-fixture.h"
#include "engine-internal.h"
#include "fd-limit.h"
#include "procmon.h"
#include "task.h"
#include "util.h"

/* A child whose fork event was lost (the socket overflowed), forked by a
 * packed task that exited before the rescan, carries the mask the daemon
 * set on its creator: without a record it kept it for good, taken for one
 * its user chose. The rescan recognises the mask as the one an exited
 * record had set and adopts it with that record's original. */
static void test_orphan_of_lost_fork_adopted(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    efx_start(fx);
    pack(fx);
    const struct applied_task *rec = applier_find(e->applier, fx->jit_a);
    assert_non_null(rec);
    cpu_set_t set = rec->set, original = rec->original;
    assert_false(CPU_EQUAL(&set, &original));
    /* the child, forked while its creator was packed: the creator's mask
     * (the fixture's engine is a dry run, which sets nothing: there a task
     * of ours carries its original) */
    efx_add_task(fx, 1060, 1060, "crunch");
    fx->fake.tasks[fx->fake.n_tasks - 1].mask = *applier_expected_mask(e->applier, rec);
    efx_set_parent(fx, 1060, fx->jit_a);
    /* its fork event lost; the creator exits (its event comes) */
    efx_remove_task(fx, fx->jit_a, fx->jit_a);
    engine_on_event(e, &(struct procmon_event){.kind = PROCMON_EXIT, .tid = fx->jit_a, .tgid = fx->jit_a});
    assert_null(applier_find(e->applier, fx->jit_a));
    efx_set_parent(fx, 1060, 1); /* orphaned: init is its parent now */
    efx_log_reset();
    e->events.last_rescan_ms = 0;
    assert_int_equal(engine_events_lost(e), 0);
    efx_tick_with(fx, efx_busy_load);
    assert_false(e->events.rescan_pending);
    /* adopted with its creator's original; intensive, so given it back
     * (the fixture's engine is a dry run: it says what it would do) */
    assert_int_equal(e->events.adopt.orphans, 1);
    char want[256], fs[64], fo[64];
    snprintf(fs, sizeof fs, "%s", efx_fmt(&set));
    snprintf(fo, sizeof fo, "%s", efx_fmt(&original));
    snprintf(want, sizeof want, ") affinity %s -> %s", fs, fo);
    expect_log("would restore pid 1060 (");
    expect_log(want);

    /* a jitter one stays packed, with a record that restores it */
    efx_add_task(fx, 1061, 1061, "jitterbug");
    fx->fake.tasks[fx->fake.n_tasks - 1].mask = fx->fake.tasks[fx->fake.n_tasks - 2].mask;
    efx_set_parent(fx, 1061, 1);
    e->events.last_rescan_ms = 0;
    assert_int_equal(engine_events_lost(e), 0);
    efx_tick_with(fx, efx_busy_load);
    const struct applied_task *child = applier_find(e->applier, 1061);
    assert_non_null(child);
    assert_true(CPU_EQUAL(&child->original, &original));
    assert_int_equal(e->events.adopt.orphans, 2);
}

/* Started and packed: the mask jitter tasks have now (the plan's). */
static cpu_set_t start_packed(struct engine_fixture *fx)
{
    efx_start(fx);
    pack(fx);
    cpu_set_t packed = mask_of(fx, fx->jit_a);
    assert_string_equal(efx_fmt(&packed), EFX_BUSY_PLAN);
    return packed;
}

/* A process forked by one we packed inherits its mask. Its adoption waits:
 * its /proc/PID/stat, which gives the start time a record needs, stalls the
 * reader while the process is inside an exec, as a new one usually is. At
 * its exec it is adopted, then placed by its new class; with no exec, at
 * the first tick after it is a tick old; at a stop, before the restore. */
static void test_forked_child_adopted_later(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    const cpu_set_t packed = start_packed(fx);
    struct procmon_event fork = {.kind = PROCMON_FORK, .fork = {.parent_tid = fx->jit_a, .parent_tgid = fx->jit_a}};

    /* Forked and in its exec: no stat to read yet (the tree lists none). */
    fork.tid = fork.tgid = 1030;
    fork.timestamp_ns = now_ns();
    engine_on_event(e, &fork);
    struct task *t = task_table_find(e->tasks, 1030);
    assert_non_null(t);
    assert_true(t->flags & TASK_F_ADOPT_DUE);
    assert_null(applier_find(e->applier, 1030));
    /* the exec: now an intensive program, with the mask the kernel copied */
    efx_add_task(fx, 1030, 1030, "crunch");
    *(cpu_set_t *)efx_fake_mask(fx, 1030) = packed;
    unsigned sets = fx->fake.n_setaffinity;
    engine_on_event(e,
                    &(struct procmon_event){.kind = PROCMON_EXEC, .tid = 1030, .tgid = 1030, .timestamp_ns = now_ns()});
    expect_class(e, 1030, CLASS_INTENSIVE, SOURCE_RULE, 1);
    cpu_set_t now = mask_of(fx, 1030);
    assert_string_equal(efx_fmt(&now), efx_fmt(&fx->real_mask)); /* its creator's original back */
    assert_int_equal(fx->fake.n_setaffinity, sets + 1);
    assert_null(applier_find(e->applier, 1030));
    assert_int_equal(e->events.adopt.at_exec, 1);

    /* Forked two seconds ago and no exec since: adopted at the next tick,
     * and kept packed (a jitter task by its creator's name). */
    efx_add_task(fx, 1031, 1031, "jitterbug");
    *(cpu_set_t *)efx_fake_mask(fx, 1031) = packed;
    fork.tid = fork.tgid = 1031;
    fork.timestamp_ns = now_ns() - 2000000000ull;
    engine_on_event(e, &fork);
    assert_null(applier_find(e->applier, 1031));
    /* forked just now: it waits past this tick */
    efx_add_task(fx, 1032, 1032, "jitterbug");
    *(cpu_set_t *)efx_fake_mask(fx, 1032) = packed;
    fork.tid = fork.tgid = 1032;
    fork.timestamp_ns = now_ns();
    engine_on_event(e, &fork);
    efx_tick_with(fx, efx_busy_load);
    const struct applied_task *a = applier_find(e->applier, 1031);
    assert_non_null(a);
    assert_string_equal(efx_fmt(&a->original), efx_fmt(&fx->real_mask));
    assert_false(task_table_find(e->tasks, 1031)->flags & TASK_F_ADOPT_DUE);
    assert_int_equal(e->events.adopt.at_tick, 1);
    assert_null(applier_find(e->applier, 1032));
    assert_true(task_table_find(e->tasks, 1032)->flags & TASK_F_ADOPT_DUE);

    /* A stop adopts what still waits, and gives every mask back. */
    engine_stop(e);
    assert_int_equal(e->events.adopt.at_restore, 1);
    assert_true(efx_metric(fx, "turbosched_adoptions_waited_total", "at", "exec") == 1);
    assert_true(efx_metric(fx, "turbosched_adoptions_waited_total", "at", "tick") == 1);
    assert_true(efx_metric(fx, "turbosched_adoptions_waited_total", "at", "restore") == 1);
    assert_int_equal(applier_count(e->applier), 0);
    const pid_t children[] = {1031, 1032};
    for (size_t i = 0; i < ELEMENTSOF(children); i++) {
        now = mask_of(fx, children[i]);
        assert_string_equal(efx_fmt(&now), efx_fmt(&fx->real_mask));
    }
}

/* A process forked by a child that still waits for its adoption inherited
 * the same narrowed mask, and so did a thread of that child: they wait with
 * the grandparent's record, and a stop gives their masks back too. */
static void test_grandchild_adopted(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    const cpu_set_t packed = start_packed(fx);
    struct procmon_event fork = {.kind = PROCMON_FORK,
                                 .tid = 1040,
                                 .tgid = 1040,
                                 .timestamp_ns = now_ns(),
                                 .fork = {.parent_tid = fx->jit_a, .parent_tgid = fx->jit_a}};
    engine_on_event(e, &fork); /* the child, in its exec: no stat yet */
    assert_true(task_table_find(e->tasks, 1040)->flags & TASK_F_ADOPT_DUE);

    efx_add_task(fx, 1041, 1041, "renamed"); /* its child, by another name */
    *(cpu_set_t *)efx_fake_mask(fx, 1041) = packed;
    fork = (struct procmon_event){.kind = PROCMON_FORK,
                                  .tid = 1041,
                                  .tgid = 1041,
                                  .timestamp_ns = now_ns(),
                                  .fork = {.parent_tid = 1040, .parent_tgid = 1040}};
    engine_on_event(e, &fork);
    assert_true(task_table_find(e->tasks, 1041)->flags & TASK_F_ADOPT_DUE);
    efx_add_task(fx, 1040, 1042, "renamed"); /* a thread of the child */
    *(cpu_set_t *)efx_fake_mask(fx, 1042) = packed;
    fork = (struct procmon_event){.kind = PROCMON_FORK,
                                  .tid = 1042,
                                  .tgid = 1040,
                                  .timestamp_ns = now_ns(),
                                  .fork = {.parent_tid = 1040, .parent_tgid = 1040}};
    engine_on_event(e, &fork); /* adopted, and not jitter: given back at once */
    cpu_set_t now = mask_of(fx, 1042);
    assert_string_equal(efx_fmt(&now), efx_fmt(&fx->real_mask));
    assert_null(applier_find(e->applier, 1042));

    engine_stop(e);
    assert_int_equal(applier_count(e->applier), 0);
    const pid_t tids[] = {1041, 1042};
    for (size_t i = 0; i < ELEMENTSOF(tids); i++) {
        now = mask_of(fx, tids[i]);
        assert_string_equal(efx_fmt(&now), efx_fmt(&fx->real_mask));
    }
}

/* A waiting adoption whose start time cannot be read for want of file
 * descriptors waits on to a later tick, rather than being dropped with the
 * task left on the narrowed mask unrecorded. (Forked by a jitter task, and
 * named as it until it execs, it is jitter itself.) */
static void test_adoption_waits_out_of_fds(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    const cpu_set_t packed = start_packed(fx);
    efx_add_task(fx, 1070, 1070, "renamed");
    *(cpu_set_t *)efx_fake_mask(fx, 1070) = packed;
    struct procmon_event fork = {.kind = PROCMON_FORK,
                                 .tid = 1070,
                                 .tgid = 1070,
                                 .timestamp_ns = now_ns() - 2000000000ull,
                                 .fork = {.parent_tid = fx->jit_a, .parent_tgid = fx->jit_a}};
    engine_on_event(e, &fork);
    assert_true(task_table_find(e->tasks, 1070)->flags & TASK_F_ADOPT_DUE);
    struct rlimit old;
    assert_int_equal(fd_limit_lower(0, &old), 0);
    engine_adopt_due(e, now_ns() - 1000000000ull);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
    assert_true(task_table_find(e->tasks, 1070)->flags & TASK_F_ADOPT_DUE);
    assert_int_equal(e->events.adopt.n, 1);
    engine_adopt_due(e, now_ns() - 1000000000ull); /* adopted: its creator's original recorded */
    assert_false(task_table_find(e->tasks, 1070)->flags & TASK_F_ADOPT_DUE);
    const struct applied_task *a = applier_find(e->applier, 1070);
    assert_non_null(a);
    assert_string_equal(efx_fmt(&a->original), efx_fmt(&fx->real_mask));
}

/* Processes found by a rescan, their fork events lost: a child and a
 * grandchild of a packed task carry its mask, and are given its original
 * back (they are not jitter); a process whose creator is not ours keeps the
 * mask it has, even one like the plan. */
static void test_rescan_finds_descendants(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    const cpu_set_t packed = start_packed(fx);
    const pid_t child = 1060, grandchild = 1061, stranger = 1062;
    efx_add_task(fx, child, child, "renamed");
    efx_set_parent(fx, child, fx->jit_a);
    efx_add_task(fx, grandchild, grandchild, "renamed");
    efx_set_parent(fx, grandchild, child);
    efx_add_task(fx, stranger, stranger, "renamed");
    const pid_t all[] = {child, grandchild, stranger};
    for (size_t i = 0; i < ELEMENTSOF(all); i++)
        *(cpu_set_t *)efx_fake_mask(fx, all[i]) = packed;

    assert_int_equal(engine_events_lost(e), 0);
    efx_tick_with(fx, efx_busy_load);
    assert_non_null(task_table_find(e->tasks, grandchild));
    cpu_set_t now = mask_of(fx, child);
    assert_string_equal(efx_fmt(&now), efx_fmt(&fx->real_mask));
    now = mask_of(fx, grandchild);
    assert_string_equal(efx_fmt(&now), efx_fmt(&fx->real_mask));
    now = mask_of(fx, stranger);
    assert_string_equal(efx_fmt(&now), EFX_BUSY_PLAN);
    assert_null(applier_find(e->applier, stranger));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_orphan_of_lost_fork_adopted, efx_setup, efx_teardown),
        cmocka_unit_test_setup_teardown(test_forked_child_adopted_later, efx_setup_live, efx_teardown),
        cmocka_unit_test_setup_teardown(test_grandchild_adopted, efx_setup_live, efx_teardown),
        cmocka_unit_test_setup_teardown(test_rescan_finds_descendants, efx_setup_live, efx_teardown),
        cmocka_unit_test_setup_teardown(test_adoption_waits_out_of_fds, efx_setup_live, efx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
