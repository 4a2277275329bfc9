/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "pins.h"
#include "task.h"
#include "util.h"

/* A fake kernel: masks and start times of a few tasks. */
struct fake {
    cpu_set_t mask[8];
    uint64_t start[8];
    bool alive[8];
    int sets;
};

static int f_get(void *ud, pid_t tid, cpu_set_t *ret)
{
    struct fake *f = ud;
    if (tid < 1 || tid > 7 || !f->alive[tid])
        return -ESRCH;
    *ret = f->mask[tid];
    return 0;
}

static int f_set(void *ud, pid_t tid, const cpu_set_t *m)
{
    struct fake *f = ud;
    if (tid < 1 || tid > 7 || !f->alive[tid])
        return -ESRCH;
    f->mask[tid] = *m;
    f->sets++;
    return 0;
}

static int f_start(void *ud, pid_t tid, uint64_t *ret)
{
    struct fake *f = ud;
    if (tid < 1 || tid > 7 || !f->alive[tid])
        return -ESRCH;
    *ret = f->start[tid];
    return 0;
}

static enum pin_choice all_ours(const struct task *t, cpu_set_t *m, void *ud) { return PIN_SKIP; }

static cpu_set_t list(const char *s)
{
    cpu_set_t m;
    assert_int_equal(cpulist_parse(s, &m), 0);
    return m;
}

/* The caller's view of task 1, which it packed: held to `set` while `held`,
 * `original` once given back. */
struct packer_view {
    bool held;
    const char *set, *original;
};

static enum pin_choice packed_1(const struct task *t, cpu_set_t *m, void *ud)
{
    const struct packer_view *v = ud;
    if (t->tid != 1 || !v->held)
        return PIN_CURRENT;
    *m = list(v->original);
    return PIN_MANAGED;
}

static bool packed_1_now(pid_t tid, uint64_t start_time, cpu_set_t *m, void *ud)
{
    const struct packer_view *v = ud;
    if (tid != 1 || !v->held)
        return false;
    *m = list(v->set);
    return true;
}

static void test_toggle_reset_is_undone(void **state)
{
    struct fake f = {0};
    struct sysops ops = {.userdata = &f, .getaffinity = f_get, .setaffinity = f_set, .task_start_time = f_start};
    struct task_table *tt;
    assert_int_equal(task_table_new(64, &tt), 0);
    /* 1: all CPUs; 2: pinned to 2; 3: pinned to 4-5; 4: pinned, exits; 5: pinned, user changes it */
    const char *masks[] = {NULL, "0-7", "2", "4-5", "6", "1"};
    for (pid_t tid = 1; tid <= 5; tid++) {
        f.mask[tid] = list(masks[tid]);
        f.start[tid] = 100 + (uint64_t)tid;
        f.alive[tid] = true;
        struct task t = {.tid = tid, .pid = tid, .start_time = f.start[tid], .rule = -1};
        assert_int_equal(task_table_add(tt, &t, NULL), 0);
    }
    cpu_set_t online = list("0-7");
    struct pins p = {0};
    /* The daemon's own narrowing is not a pin: nothing is remembered. */
    assert_int_equal(pins_snapshot(&p, tt, &online, &ops, 3, all_ours, NULL, NULL), 0);
    /* Only narrowed masks are remembered. */
    assert_int_equal(pins_snapshot(&p, tt, &online, &ops, 3, NULL, NULL, NULL), 4);

    /* The toggle: every task reset to all CPUs; task 4 exits and its TID is
     * reused; task 5 is narrowed by its user to 3 after the reset. */
    for (pid_t tid = 1; tid <= 5; tid++)
        if (tid != 3) /* 3: its reset comes late */
            f.mask[tid] = online;
    f.start[4] = 999;
    f.mask[5] = list("3");
    f.sets = 0;

    assert_int_equal(pins_repair(&p, &ops), 1);
    cpu_set_t want2 = list("2"), want3 = list("4-5"), want5 = list("3");
    assert_true(CPU_EQUAL(&f.mask[2], &want2));
    assert_true(CPU_EQUAL(&f.mask[3], &want3));
    assert_true(CPU_EQUAL(&f.mask[4], &online)); /* another task now: untouched */
    assert_true(CPU_EQUAL(&f.mask[5], &want5));  /* the user's choice: untouched */
    assert_true(CPU_EQUAL(&f.mask[1], &online));

    /* A reset that arrives late is caught by a later pass; a task put back
     * once and widened again is widened by its user (a toggle resets a task
     * once), and keeps it. */
    f.mask[3] = online;
    f.mask[2] = online;
    assert_int_equal(pins_repair(&p, &ops), 1);
    assert_true(CPU_EQUAL(&f.mask[3], &want3));
    assert_true(CPU_EQUAL(&f.mask[2], &online));
    /* ...until the passes are used up. */
    assert_int_equal(pins_repair(&p, &ops), 0);
    f.mask[3] = online;
    assert_int_equal(pins_repair(&p, &ops), 0);
    assert_true(CPU_EQUAL(&f.mask[3], &online));

    /* A task the caller packed keeps the caller's mask. */
    struct packer_view v = {.held = true, .set = "7", .original = "0-7"};
    for (pid_t tid = 1; tid <= 5; tid++)
        f.mask[tid] = online;
    assert_int_equal(pins_snapshot(&p, tt, &online, &ops, 3, packed_1, packed_1_now, &v), 1);
    assert_int_equal(pins_repair(&p, &ops), 1);
    cpu_set_t want1 = list("7");
    assert_true(CPU_EQUAL(&f.mask[1], &want1));
    pins_clear(&p);
    task_table_free(tt);
}

/* The plan moves while the pins are kept: the caller packs task 1 elsewhere,
 * then gives it its original back. A repair follows the caller, never the
 * snapshot's mask (which would confine a task nobody records any more). */
static void test_managed_follows_the_caller(void **state)
{
    struct fake f = {0};
    struct sysops ops = {.userdata = &f, .getaffinity = f_get, .setaffinity = f_set, .task_start_time = f_start};
    struct task_table *tt;
    assert_int_equal(task_table_new(64, &tt), 0);
    f.mask[1] = list("2-3");
    f.start[1] = 101;
    f.alive[1] = true;
    struct task t = {.tid = 1, .pid = 1, .start_time = 101, .rule = -1};
    assert_int_equal(task_table_add(tt, &t, NULL), 0);
    cpu_set_t online = list("0-3");
    struct pins p = {0};
    struct packer_view v = {.held = true, .set = "2-3", .original = "0-3"};
    assert_int_equal(pins_snapshot(&p, tt, &online, &ops, 10, packed_1, packed_1_now, &v), 1);

    /* Repacked onto 3 by the caller, then reset by the toggle: back to 3. */
    v.set = "3";
    f.mask[1] = online;
    assert_int_equal(pins_repair(&p, &ops), 1);
    cpu_set_t three = list("3");
    assert_true(CPU_EQUAL(&f.mask[1], &three));

    /* The caller gives it its original back: no pass confines it again. */
    v.held = false;
    f.mask[1] = list("0-3");
    f.sets = 0;
    for (int i = 0; i < 5; i++)
        assert_int_equal(pins_repair(&p, &ops), 0);
    assert_int_equal(f.sets, 0);
    assert_true(CPU_EQUAL(&f.mask[1], &online));

    /* A narrowed original is what a late reset is repaired to. */
    v = (struct packer_view){.held = true, .set = "3", .original = "1-3"};
    f.mask[1] = list("3");
    assert_int_equal(pins_snapshot(&p, tt, &online, &ops, 10, packed_1, packed_1_now, &v), 1);
    v.held = false;
    f.mask[1] = online; /* restored to 1-3, then reset */
    assert_int_equal(pins_repair(&p, &ops), 1);
    cpu_set_t orig = list("1-3");
    assert_true(CPU_EQUAL(&f.mask[1], &orig));

    pins_clear(&p);
    task_table_free(tt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_toggle_reset_is_undone),
        cmocka_unit_test(test_managed_follows_the_caller),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
