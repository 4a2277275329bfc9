/* SPDX-License-Identifier: GPL-2.0-or-later */
/* uclamp: support detected from a root's sysctl file (fixture trees), and
 * util_max read with the real sched_getattr on the test's own threads. On a
 * kernel without CONFIG_UCLAMP_TASK setting a clamp fails with EOPNOTSUPP
 * and util_max reads 0: the fact the detection guards against. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sched-attr.h"
#include "uclamp.h"

/* uapi/linux/sched.h */
#define TS_SCHED_FLAG_KEEP_ALL 0x18
#define TS_SCHED_FLAG_UTIL_CLAMP_MAX 0x40

/* A gone TID: above the largest pid_max there is (2^22). */
#define TID_GONE 0x3fffffff

static void test_supported_by_root(void **state)
{
    (void)state;
    assert_true(uclamp_supported(TS_FIXTURES "/proc-classify-uclamp"));
    assert_false(uclamp_supported(TS_FIXTURES "/proc-classify"));
    assert_false(uclamp_supported(TS_FIXTURES "/no-such-root"));
}

/* The test's own thread, unclamped: the whole scale where the kernel has
 * uclamp, 0 where it has not. */
static void test_self_unclamped(void **state)
{
    (void)state;
    unsigned util_max = 12345;
    assert_int_equal(uclamp_get_util_max((pid_t)syscall(SYS_gettid), &util_max), 0);
    assert_int_equal(util_max, uclamp_supported(NULL) ? UCLAMP_SCALE : 0);
    util_max = 12345;
    assert_int_equal(uclamp_get_util_max(0, &util_max), 0); /* 0: the caller */
    assert_int_equal(util_max, uclamp_supported(NULL) ? UCLAMP_SCALE : 0);
}

static void test_gone(void **state)
{
    (void)state;
    unsigned util_max = 77;
    assert_int_equal(uclamp_get_util_max(TID_GONE, &util_max), -ESRCH);
    assert_int_equal(util_max, 77);
    assert_int_equal(uclamp_get_util_max(-5, &util_max), -EINVAL);
}

struct clamp_result {
    int set; /* sched_setattr: 0 or -errno */
    int get;
    unsigned util_max;
};

/* In a thread of its own, which takes the clamp with it when it ends. */
static void *clamp_self(void *arg)
{
    struct clamp_result *res = arg;
    struct kernel_sched_attr attr = {.size = sizeof attr,
                                     .sched_flags = TS_SCHED_FLAG_KEEP_ALL | TS_SCHED_FLAG_UTIL_CLAMP_MAX,
                                     .sched_util_max = 100};
    res->set = syscall(SYS_sched_setattr, 0, &attr, 0) < 0 ? -errno : 0;
    res->get = uclamp_get_util_max((pid_t)syscall(SYS_gettid), &res->util_max);
    return NULL;
}

/* A clamp set on a thread is what util_max reads; without kernel support
 * the kernel refuses it (EOPNOTSUPP) and util_max still reads 0. */
static void test_clamp_read_back(void **state)
{
    (void)state;
    struct clamp_result res = {.util_max = 12345};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, clamp_self, &res), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(res.get, 0);
    if (!uclamp_supported(NULL)) {
        assert_int_equal(res.set, -EOPNOTSUPP);
        assert_int_equal(res.util_max, 0);
    } else if (res.set == -EPERM) {
        skip(); /* lowering a clamp needs CAP_SYS_NICE on this kernel */
    } else {
        assert_int_equal(res.set, 0);
        assert_int_equal(res.util_max, 100);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_supported_by_root),
        cmocka_unit_test(test_self_unclamped),
        cmocka_unit_test(test_gone),
        cmocka_unit_test(test_clamp_read_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
