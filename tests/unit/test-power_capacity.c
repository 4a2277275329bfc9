/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "power_capacity.h"

static void test_default_table(void **state)
{
    struct capacity_table t;
    capacity_table_default(&t);
    /* TurboSched's POWER formula: 1.0x for SMT1, 1 + n/8 beyond. */
    static const unsigned expect[] = {0, 1000, 1250, 1375, 1500, 1625, 1750, 1875, 2000};
    for (unsigned n = 0; n <= CAPACITY_MAX_SMT; n++)
        assert_int_equal(capacity_core_milli(&t, n), expect[n]);
}

static void test_beyond_table_uses_largest(void **state)
{
    struct capacity_table t;
    capacity_table_default(&t);
    assert_int_equal(capacity_core_milli(&t, 16), 2000);
}

static void test_override(void **state)
{
    struct capacity_table t;
    capacity_table_default(&t);
    t.factor_milli[2] = 1300; /* e.g. x86 SMT2 measured at 1.3x */
    assert_int_equal(capacity_core_milli(&t, 2), 1300);
    assert_int_equal(capacity_core_milli(&t, 4), 1500);
}

static void test_spare(void **state)
{
    /* SMT4 core with one thread fully busy: 1.5 - 1.0 = 0.5 spare. */
    assert_int_equal(capacity_spare_milli(1500, 1000), 500);
    assert_int_equal(capacity_spare_milli(1500, 0), 1500);
    assert_int_equal(capacity_spare_milli(1500, 1500), 0);
    /* Four busy threads measure 4.0 on a 1.5 core: never negative. */
    assert_int_equal(capacity_spare_milli(1500, 4000), 0);
    assert_int_equal(capacity_spare_milli(1000, 700), 300);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_table),
        cmocka_unit_test(test_beyond_table_uses_largest),
        cmocka_unit_test(test_override),
        cmocka_unit_test(test_spare),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
