/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the engine's tests check again and again, on the engine fixture: the
 * counts by class, a task's class, a line of the log, a task's mask, and
 * the busy ticks that pack the jitter tasks. Static: each test program
 * takes what it uses. */
#pragma once
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sched.h>
#include <string.h>

#include "engine-fixture.h"
#include "engine-internal.h"
#include "packer.h"
#include "task.h"
#include "util.h"

static inline void expect_counts(const struct engine *e, unsigned jitter, unsigned intensive, unsigned ignore,
                                 unsigned packed)
{
    unsigned by_class[4], n_packed;
    engine_count_now(e, by_class, &n_packed);
    assert_int_equal(by_class[CLASS_UNSET], 0);
    assert_int_equal(by_class[CLASS_JITTER], jitter);
    assert_int_equal(by_class[CLASS_INTENSIVE], intensive);
    assert_int_equal(by_class[CLASS_IGNORE], ignore);
    assert_int_equal(n_packed, packed);
}

static inline void expect_class(struct engine *e, pid_t tid, enum task_class cls, enum class_source src, int rule)
{
    struct task *t = task_table_find(e->tasks, tid);
    if (!t)
        fail_msg("tid %d is not tracked", (int)tid);
    assert_int_equal(t->class, cls);
    assert_int_equal(t->source, src);
    assert_int_equal(t->rule, rule);
}

static inline void expect_log(const char *what)
{
    if (!strstr(efx_log(), what))
        fail_msg("not logged: \"%s\"; the log:\n%s", what, efx_log());
}

/* A task's mask as the system (the fake, or the kernel) has it now. */
static inline cpu_set_t mask_of(struct engine_fixture *fx, pid_t tid)
{
    cpu_set_t now;
    if (!fx->real)
        return *efx_fake_mask(fx, tid);
    assert_int_equal(sched_getaffinity(tid, sizeof now, &now), 0);
    return now;
}

/* The masks are what they were: the dry run changed nothing. */
static inline void expect_real_masks_unchanged(struct engine_fixture *fx)
{
    const pid_t tids[] = {fx->jit_a, fx->jit_b, fx->jit_b_thread, fx->crunch};
    for (size_t i = 0; i < ELEMENTSOF(tids); i++) {
        cpu_set_t now = mask_of(fx, tids[i]);
        assert_string_equal(efx_fmt(&now), efx_fmt(&fx->real_mask));
    }
    if (!fx->real)
        assert_int_equal(fx->fake.n_setaffinity, 0);
}

/* Busy ticks until the jitter tasks are packed, checked. */
static inline void pack(struct engine_fixture *fx)
{
    struct engine *e = fx->e;
    efx_tick_with(fx, efx_busy_load);
    efx_tick_with(fx, efx_busy_load);
    assert_true(e->planned);
    assert_true(e->plan->restricted);
    assert_int_equal(e->plan->reason, PACKER_REASON_PACKED);
    assert_string_equal(efx_fmt(&e->plan->mask), EFX_BUSY_PLAN);
    expect_counts(e, 3, 1, 1, 3);
}
