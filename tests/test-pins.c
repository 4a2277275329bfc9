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

/* Task 1 was packed by the daemon to CPU 7: keep that. */
static enum pin_choice packed_1(const struct task *t, cpu_set_t *m, void *ud)
{
    if (t->tid != 1)
        return PIN_CURRENT;
    CPU_ZERO(m);
    CPU_SET(7, m);
    return PIN_GIVEN;
}

static cpu_set_t list(const char *s)
{
    cpu_set_t m;
    assert_int_equal(cpulist_parse(s, &m), 0);
    return m;
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
    assert_int_equal(pins_snapshot(&p, tt, &online, &ops, 3, all_ours, NULL), 0);
    /* Only narrowed masks are remembered. */
    assert_int_equal(pins_snapshot(&p, tt, &online, &ops, 3, NULL, NULL), 4);

    /* The toggle: every task reset to all CPUs; task 4 exits and its TID is
     * reused; task 5 is narrowed by its user to 3 after the reset. */
    for (pid_t tid = 1; tid <= 5; tid++)
        f.mask[tid] = online;
    f.start[4] = 999;
    f.mask[5] = list("3");
    f.sets = 0;

    assert_int_equal(pins_repair(&p, &ops), 2);
    cpu_set_t want2 = list("2"), want3 = list("4-5"), want5 = list("3");
    assert_true(CPU_EQUAL(&f.mask[2], &want2));
    assert_true(CPU_EQUAL(&f.mask[3], &want3));
    assert_true(CPU_EQUAL(&f.mask[4], &online));   /* another task now: untouched */
    assert_true(CPU_EQUAL(&f.mask[5], &want5));    /* the user's choice: untouched */
    assert_true(CPU_EQUAL(&f.mask[1], &online));

    /* A reset that arrives late is caught by a later pass... */
    f.mask[2] = online;
    assert_int_equal(pins_repair(&p, &ops), 1);
    assert_true(CPU_EQUAL(&f.mask[2], &want2));
    /* ...until the passes are used up. */
    assert_int_equal(pins_repair(&p, &ops), 0);
    f.mask[3] = online;
    assert_int_equal(pins_repair(&p, &ops), 0);
    assert_true(CPU_EQUAL(&f.mask[3], &online));

    /* A mask the caller gives (a packed task's) is kept too. */
    for (pid_t tid = 1; tid <= 5; tid++)
        f.mask[tid] = online;
    assert_int_equal(pins_snapshot(&p, tt, &online, &ops, 1, packed_1, NULL), 1);
    assert_int_equal(pins_repair(&p, &ops), 1);
    cpu_set_t want1 = list("7");
    assert_true(CPU_EQUAL(&f.mask[1], &want1));

    pins_clear(&p);
    task_table_free(tt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_toggle_reset_is_undone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
