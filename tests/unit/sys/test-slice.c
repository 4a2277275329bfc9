/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The slice module against a fake kernel: a few threads' scheduling
 * attributes, the 6.12 rules for custom slices (runtime 0 = the default,
 * others clamped to 0.1..100 ms), an older kernel that ignores them, and
 * injected errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "slice.h"
#include "sysops.h"

#define DEFAULT_SLICE 1400000ull
#define SELF 0 /* tid 0: the calling thread */

struct fake_thread {
    pid_t tid;
    struct sysops_sched_attr attr;
    bool alive;
};

struct fake_kernel {
    struct fake_thread threads[8];
    size_t n;
    bool ignores_runtime;         /* before 6.12: runtime ignored, reads 0 */
    int getattr_err, setattr_err; /* injected failures */
    unsigned setattr_fail_after;  /* setattr fails from this call on (0: never) */
    unsigned n_get, n_set;
};

static struct fake_thread *find(struct fake_kernel *k, pid_t tid)
{
    for (size_t i = 0; i < k->n; i++)
        if (k->threads[i].tid == tid && k->threads[i].alive)
            return &k->threads[i];
    return NULL;
}

static int fake_getattr(void *userdata, pid_t tid, struct sysops_sched_attr *ret)
{
    struct fake_kernel *k = userdata;
    k->n_get++;
    if (k->getattr_err)
        return k->getattr_err;
    struct fake_thread *t = find(k, tid);
    if (!t)
        return -ESRCH;
    *ret = t->attr;
    return 0;
}

static int fake_setattr(void *userdata, pid_t tid, const struct sysops_sched_attr *attr)
{
    struct fake_kernel *k = userdata;
    k->n_set++;
    if (k->setattr_err)
        return k->setattr_err;
    if (k->setattr_fail_after && k->n_set >= k->setattr_fail_after)
        return -EPERM;
    struct fake_thread *t = find(k, tid);
    if (!t)
        return -ESRCH;
    t->attr.policy = attr->policy;
    t->attr.nice = attr->nice;
    t->attr.priority = attr->priority;
    t->attr.flags = attr->flags;
    if (attr->policy == SCHED_OTHER || attr->policy == SCHED_BATCH) {
        if (k->ignores_runtime)
            t->attr.runtime_ns = 0;
        else if (attr->runtime_ns == 0)
            t->attr.runtime_ns = DEFAULT_SLICE;
        else
            t->attr.runtime_ns = attr->runtime_ns < 100000      ? 100000
                                 : attr->runtime_ns > 100000000 ? 100000000
                                                                : attr->runtime_ns;
    }
    return 0;
}

static struct fake_kernel kernel;
static struct sysops ops;

static struct fake_thread *add(pid_t tid, uint32_t policy, int nice, uint64_t runtime_ns)
{
    struct fake_thread *t = &kernel.threads[kernel.n++];
    *t = (struct fake_thread){
        .tid = tid, .alive = true, .attr = {.policy = policy, .nice = nice, .runtime_ns = runtime_ns}};
    if (policy == SCHED_FIFO || policy == SCHED_RR)
        t->attr.priority = 10;
    return t;
}

static int setup(void **state)
{
    memset(&kernel, 0, sizeof kernel);
    ops = (struct sysops){.userdata = &kernel, .getattr = fake_getattr, .setattr = fake_setattr};
    add(SELF, SCHED_OTHER, 0, DEFAULT_SLICE);
    return 0;
}

static struct slice_support supported(void)
{
    struct slice_support sup;
    assert_int_equal(slice_detect(&ops, &sup), 0);
    assert_true(sup.supported);
    return sup;
}

/* --- detection ------------------------------------------------------------------ */

static void test_detect_supported(void **state)
{
    struct slice_support sup = supported();
    assert_int_equal(sup.default_slice_ns, DEFAULT_SLICE);
    /* the daemon's own thread is back where it was */
    assert_int_equal(find(&kernel, SELF)->attr.runtime_ns, DEFAULT_SLICE);
    assert_int_equal(find(&kernel, SELF)->attr.policy, SCHED_OTHER);
}

static void test_detect_keeps_own_custom_slice(void **state)
{
    /* a daemon started with a custom slice of its own keeps it */
    find(&kernel, SELF)->attr.runtime_ns = 3000000;
    find(&kernel, SELF)->attr.nice = -10;
    struct slice_support sup = supported();
    assert_int_equal(sup.default_slice_ns, DEFAULT_SLICE);
    assert_int_equal(find(&kernel, SELF)->attr.runtime_ns, 3000000);
    assert_int_equal(find(&kernel, SELF)->attr.nice, -10);
}

static void test_detect_probe_differs_from_own(void **state)
{
    /* a thread already at the probe value must still prove the kernel took it */
    find(&kernel, SELF)->attr.runtime_ns = 300000;
    struct slice_support sup = supported();
    assert_int_equal(find(&kernel, SELF)->attr.runtime_ns, 300000);
    assert_int_equal(sup.default_slice_ns, DEFAULT_SLICE);
}

static void check_unsupported(int setattr_err, int getattr_err, const char *reason_part)
{
    kernel.setattr_err = setattr_err;
    kernel.getattr_err = getattr_err;
    struct slice_support sup;
    assert_int_equal(slice_detect(&ops, &sup), 0);
    assert_false(sup.supported);
    assert_int_equal(sup.default_slice_ns, 0);
    if (!strstr(sup.reason, reason_part))
        fail_msg("reason '%s' lacks '%s'", sup.reason, reason_part);
}

static void test_detect_einval(void **state) { check_unsupported(-EINVAL, 0, "Invalid argument"); }
static void test_detect_e2big(void **state) { check_unsupported(-E2BIG, 0, "sched_setattr"); }
static void test_detect_enosys(void **state) { check_unsupported(0, -ENOSYS, "sched_getattr"); }

static void test_detect_old_kernel(void **state)
{
    /* before 6.12: accepted, ignored, and read back as 0 */
    kernel.ignores_runtime = true;
    find(&kernel, SELF)->attr.runtime_ns = 0;
    check_unsupported(0, 0, "before 6.12");
    assert_int_equal(find(&kernel, SELF)->attr.policy, SCHED_OTHER);
}

static void test_detect_rt_daemon(void **state)
{
    struct fake_thread *self = find(&kernel, SELF);
    self->attr.policy = SCHED_FIFO;
    self->attr.priority = 10;
    check_unsupported(0, 0, "SCHED_OTHER");
    assert_int_equal(kernel.n_set, 0);
}

static void test_detect_restore_fails(void **state)
{
    /* the probe is taken, putting the daemon back is refused */
    kernel.setattr_fail_after = 2;
    struct slice_support sup;
    assert_int_equal(slice_detect(&ops, &sup), -EPERM);
    assert_false(sup.supported);
    assert_non_null(strstr(sup.reason, "restoring"));
}

/* --- apply and restore --------------------------------------------------------- */

static void test_apply_restore(void **state)
{
    struct slice_support sup = supported();
    struct fake_thread *t = add(100, SCHED_OTHER, 5, DEFAULT_SLICE);
    t->attr.flags = 0x01; /* reset-on-fork kept */
    struct slice_saved saved;
    assert_int_equal(slice_apply(&ops, &sup, 100, 100000, &saved), 0);
    assert_true(saved.applied);
    assert_int_equal(t->attr.runtime_ns, 100000);
    assert_int_equal(t->attr.nice, 5);
    assert_int_equal(t->attr.policy, SCHED_OTHER);
    assert_int_equal(t->attr.flags, 0x01);
    assert_true(saved.orig_default);

    kernel.n_set = 0;
    assert_int_equal(slice_restore(&ops, 100, &saved), 0);
    assert_int_equal(kernel.n_set, 1);
    assert_int_equal(t->attr.runtime_ns, DEFAULT_SLICE);
    assert_int_equal(t->attr.nice, 5);
    assert_int_equal(t->attr.flags, 0x01);
}

static void test_apply_clamps(void **state)
{
    struct slice_support sup = supported();
    struct fake_thread *t = add(100, SCHED_BATCH, 0, DEFAULT_SLICE);
    struct slice_saved saved;
    /* below the kernel's minimum: asked for at the minimum */
    assert_int_equal(slice_apply(&ops, &sup, 100, 10000, &saved), 0);
    assert_int_equal(t->attr.runtime_ns, SLICE_MIN_NS);
    assert_int_equal(saved.set_runtime_ns, SLICE_MIN_NS);
    assert_int_equal(t->attr.policy, SCHED_BATCH);
}

static void test_restore_custom_slice(void **state)
{
    /* a thread with its own custom 5 ms slice gets 5 ms back, not the default */
    struct slice_support sup = supported();
    struct fake_thread *t = add(100, SCHED_OTHER, -3, 5000000);
    struct slice_saved saved;
    assert_int_equal(slice_apply(&ops, &sup, 100, 300000, &saved), 0);
    assert_false(saved.orig_default);
    assert_int_equal(t->attr.runtime_ns, 300000);
    assert_int_equal(slice_restore(&ops, 100, &saved), 0);
    assert_int_equal(t->attr.runtime_ns, 5000000);
    assert_int_equal(t->attr.nice, -3);
}

static void test_restore_changed_under_us(void **state)
{
    struct slice_support sup = supported();
    struct fake_thread *t = add(100, SCHED_OTHER, 0, DEFAULT_SLICE);
    struct slice_saved saved;

    /* someone renices it */
    assert_int_equal(slice_apply(&ops, &sup, 100, 100000, &saved), 0);
    t->attr.nice = 7;
    kernel.n_set = 0;
    assert_int_equal(slice_restore(&ops, 100, &saved), SLICE_SKIP_CHANGED);
    assert_int_equal(kernel.n_set, 0);
    assert_int_equal(t->attr.nice, 7);
    assert_int_equal(t->attr.runtime_ns, 100000);

    /* someone sets a slice of their own */
    t->attr.nice = 0;
    t->attr.runtime_ns = DEFAULT_SLICE;
    assert_int_equal(slice_apply(&ops, &sup, 100, 100000, &saved), 0);
    t->attr.runtime_ns = 2000000;
    assert_int_equal(slice_restore(&ops, 100, &saved), SLICE_SKIP_CHANGED);
    assert_int_equal(t->attr.runtime_ns, 2000000);

    /* someone makes it SCHED_BATCH */
    t->attr.runtime_ns = DEFAULT_SLICE;
    assert_int_equal(slice_apply(&ops, &sup, 100, 100000, &saved), 0);
    t->attr.policy = SCHED_BATCH;
    assert_int_equal(slice_restore(&ops, 100, &saved), SLICE_SKIP_CHANGED);
    assert_int_equal(t->attr.policy, SCHED_BATCH);
    assert_int_equal(t->attr.runtime_ns, 100000);
}

static void test_rt_and_idle_untouched(void **state)
{
    struct slice_support sup = supported();
    add(100, SCHED_FIFO, 0, 0);
    add(101, SCHED_RR, 0, 0);
    add(102, 6 /* SCHED_DEADLINE */, 0, 500000);
    add(103, SCHED_IDLE, 0, 0);
    kernel.n_set = 0;
    for (pid_t tid = 100; tid <= 103; tid++) {
        struct slice_saved saved;
        assert_int_equal(slice_apply(&ops, &sup, tid, 100000, &saved), SLICE_SKIP_POLICY);
        assert_false(saved.applied);
        /* restoring what was not applied does nothing */
        assert_int_equal(slice_restore(&ops, tid, &saved), 0);
    }
    assert_int_equal(kernel.n_set, 0);
    assert_int_equal(find(&kernel, 102)->attr.runtime_ns, 500000);
}

static void test_already_shorter(void **state)
{
    struct slice_support sup = supported();
    struct fake_thread *t = add(100, SCHED_OTHER, 0, 200000);
    struct slice_saved saved;
    kernel.n_set = 0;
    assert_int_equal(slice_apply(&ops, &sup, 100, 300000, &saved), SLICE_SKIP_SHORTER);
    assert_int_equal(slice_apply(&ops, &sup, 100, 200000, &saved), SLICE_SKIP_SHORTER);
    assert_false(saved.applied);
    assert_int_equal(kernel.n_set, 0);
    assert_int_equal(t->attr.runtime_ns, 200000);
}

static void test_gone_and_unsupported(void **state)
{
    struct slice_support sup = supported();
    struct slice_saved saved;
    assert_int_equal(slice_apply(&ops, &sup, 999, 100000, &saved), -ESRCH);
    assert_false(saved.applied);

    struct fake_thread *t = add(100, SCHED_OTHER, 0, DEFAULT_SLICE);
    assert_int_equal(slice_apply(&ops, &sup, 100, 100000, &saved), 0);
    t->alive = false;
    assert_int_equal(slice_restore(&ops, 100, &saved), -ESRCH);

    struct slice_support none = {.supported = false};
    add(101, SCHED_OTHER, 0, DEFAULT_SLICE);
    assert_int_equal(slice_apply(&ops, &none, 101, 100000, &saved), -EOPNOTSUPP);
    assert_false(saved.applied);
}

static void test_apply_setattr_refused(void **state)
{
    struct slice_support sup = supported();
    add(100, SCHED_OTHER, 0, DEFAULT_SLICE);
    kernel.setattr_err = -EPERM;
    struct slice_saved saved;
    assert_int_equal(slice_apply(&ops, &sup, 100, 100000, &saved), -EPERM);
    assert_false(saved.applied);
}

/* --- serialisation ------------------------------------------------------------- */

static void test_string_roundtrip(void **state)
{
    struct slice_support sup = supported();
    struct fake_thread *t = add(100, SCHED_BATCH, -20, 7000000);
    t->attr.flags = 0x01;
    struct slice_saved saved, back;
    assert_int_equal(slice_apply(&ops, &sup, 100, 100000, &saved), 0);
    char buf[96];
    int n = slice_saved_to_string(&saved, buf, sizeof buf);
    assert_int_equal(n, (int)strlen(buf));
    assert_string_equal(buf, "p=3,n=-20,f=0x1,r=7000000,d=0,s=100000");
    assert_int_equal(slice_saved_from_string(buf, &back), 0);
    assert_true(back.applied);
    assert_int_equal(back.orig.policy, saved.orig.policy);
    assert_int_equal(back.orig.nice, saved.orig.nice);
    assert_int_equal(back.orig.flags, saved.orig.flags);
    assert_int_equal(back.orig.runtime_ns, saved.orig.runtime_ns);
    assert_int_equal(back.orig_default, saved.orig_default);
    assert_int_equal(back.set_runtime_ns, saved.set_runtime_ns);

    /* a restarted daemon restores from the parsed form */
    assert_int_equal(slice_restore(&ops, 100, &back), 0);
    assert_int_equal(t->attr.runtime_ns, 7000000);
    assert_int_equal(t->attr.nice, -20);

    /* the default flag survives too */
    add(101, SCHED_OTHER, 0, DEFAULT_SLICE);
    assert_int_equal(slice_apply(&ops, &sup, 101, 300000, &saved), 0);
    assert_true(slice_saved_to_string(&saved, buf, sizeof buf) > 0);
    assert_string_equal(buf, "p=0,n=0,f=0x0,r=1400000,d=1,s=300000");
    assert_int_equal(slice_saved_from_string(buf, &back), 0);
    assert_true(back.orig_default);

    assert_int_equal(slice_saved_to_string(&saved, buf, 10), -ENOSPC);
    struct slice_saved none = {.applied = false};
    assert_int_equal(slice_saved_to_string(&none, buf, sizeof buf), -EINVAL);
}

static void test_string_rejects(void **state)
{
    static const char *const bad[] = {
        "",
        "p=0,n=0,f=0x0,r=1400000,d=1",            /* short */
        "p=0,n=0,f=0x0,r=1400000,d=1,s=100000,x", /* trailing */
        "p=1,n=0,f=0x0,r=1400000,d=1,s=100000",   /* SCHED_FIFO: never ours */
        "p=0,n=20,f=0x0,r=1400000,d=1,s=100000",  /* nice out of range */
        "p=0,n=0,f=0x2,r=1400000,d=1,s=100000",   /* a flag we never write */
        "p=0,n=0,f=0x0,r=1400000,d=2,s=100000",
        "p=0,n=0,f=0x0,r=1400000,d=1,s=50000", /* below the kernel's minimum */
        "p=0,n=0,f=0x0,r=-1,d=1,s=100000",     /* sign in an unsigned field */
        "p=0,n=0,f=0x0,r=+1,d=1,s=100000",
        "p=0,n=0,f=0x0,r= 1,d=1,s=100000",
        "garbage",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct slice_saved s = {.applied = false};
        if (slice_saved_from_string(bad[i], &s) != -EINVAL)
            fail_msg("accepted '%s'", bad[i]);
        assert_false(s.applied);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_detect_supported, setup),
        cmocka_unit_test_setup(test_detect_keeps_own_custom_slice, setup),
        cmocka_unit_test_setup(test_detect_probe_differs_from_own, setup),
        cmocka_unit_test_setup(test_detect_einval, setup),
        cmocka_unit_test_setup(test_detect_e2big, setup),
        cmocka_unit_test_setup(test_detect_enosys, setup),
        cmocka_unit_test_setup(test_detect_old_kernel, setup),
        cmocka_unit_test_setup(test_detect_rt_daemon, setup),
        cmocka_unit_test_setup(test_detect_restore_fails, setup),
        cmocka_unit_test_setup(test_apply_restore, setup),
        cmocka_unit_test_setup(test_apply_clamps, setup),
        cmocka_unit_test_setup(test_restore_custom_slice, setup),
        cmocka_unit_test_setup(test_restore_changed_under_us, setup),
        cmocka_unit_test_setup(test_rt_and_idle_untouched, setup),
        cmocka_unit_test_setup(test_already_shorter, setup),
        cmocka_unit_test_setup(test_gone_and_unsupported, setup),
        cmocka_unit_test_setup(test_apply_setattr_refused, setup),
        cmocka_unit_test_setup(test_string_roundtrip, setup),
        cmocka_unit_test_setup(test_string_rejects, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
