/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The names of classes and of what decided them: the words the
 * configuration, the state file and the replies use. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "task-class.h"

static void test_class_names(void **state)
{
    (void)state;
    assert_string_equal(task_class_to_string(CLASS_UNSET), "unset");
    assert_string_equal(task_class_to_string(CLASS_IGNORE), "ignore");
    assert_string_equal(task_class_to_string(CLASS_JITTER), "jitter");
    assert_string_equal(task_class_to_string(CLASS_INTENSIVE), "intensive");
    assert_string_equal(task_class_to_string(_TASK_CLASS_MAX), "unknown");
}

/* A rule may give jitter, intensive or ignore; each parses back to the
 * class it names. */
static void test_class_round_trip(void **state)
{
    (void)state;
    static const enum task_class given[] = {CLASS_IGNORE, CLASS_JITTER, CLASS_INTENSIVE};
    for (size_t i = 0; i < sizeof given / sizeof given[0]; i++)
        assert_int_equal(task_class_from_string(task_class_to_string(given[i])), given[i]);
}

/* Anything else is -EINVAL: "unset" (not a class a rule gives), other
 * spellings, blanks around the word (the callers strip them), nothing. */
static void test_class_parse_rejects(void **state)
{
    (void)state;
    static const char *const bad[] = {"unset",   "unknown", "Jitter", "JITTER",   "jitter ",
                                      " ignore", "intense", "",       "jitter\n", "ignored"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        print_message("'%s'\n", bad[i]);
        assert_int_equal(task_class_from_string(bad[i]), -EINVAL);
    }
    assert_int_equal(task_class_from_string(NULL), -EINVAL);
}

/* Every source has its own name, in the words explain and the metrics use. */
static void test_source_names(void **state)
{
    (void)state;
    static const struct {
        enum class_source s;
        const char *name;
    } cases[] = {
        {SOURCE_NONE, "none"},     {SOURCE_SLICE, "slice"},     {SOURCE_UNIT, "unit"},           {SOURCE_RULE, "rule"},
        {SOURCE_UCLAMP, "uclamp"}, {SOURCE_DEFAULT, "default"}, {SOURCE_BEHAVIOUR, "behaviour"},
    };
    size_t n = sizeof cases / sizeof cases[0];
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(class_source_to_string(cases[i].s), cases[i].name);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(class_source_to_string(cases[i].s), class_source_to_string(cases[j].s));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_class_names),
        cmocka_unit_test(test_class_round_trip),
        cmocka_unit_test(test_class_parse_rejects),
        cmocka_unit_test(test_source_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
