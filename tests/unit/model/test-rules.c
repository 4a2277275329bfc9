/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The rule matcher, table-driven: each key, glob syntax, several globs,
 * all-keys-must-match, unknown inputs, first match wins, drop-in order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "rules.h"

/* Rules from config text, so the tests see what users write. */
static struct config cfg;

static void load(const char *text)
{
    config_init_defaults(&cfg);
    assert_int_equal(config_load_string(text, "r.conf", &cfg), 0);
}

static int teardown(void **state)
{
    config_done(&cfg);
    return 0;
}

static const struct match_input nginx = {
    .comm = "nginx",
    .exe = "/usr/sbin/nginx",
    .cmdline = "nginx: worker process",
    .cgroup = "/system.slice/nginx.service",
    .unit = "nginx.service",
    .user = "www-data",
};

static const struct match_input python = {
    .comm = "python3",
    .exe = "/usr/bin/python3.11",
    .cmdline = "/usr/bin/python3 /opt/app/worker.py --queue jobs",
    .cgroup = "/user.slice/user-1000.slice/session-3.scope",
    .unit = "session-3.scope",
    .user = "alice",
};

static const struct match_input kthread = {
    .comm = "kworker/3:1",
    .exe = NULL,
    .cmdline = "",
    .cgroup = "/",
    .unit = NULL,
    .user = "root",
};

static const struct {
    const char *rule; /* body of [rule r] without class */
    const struct match_input *in;
    bool match;
} cases[] = {
    /* each key, exact */
    {"comm = nginx", &nginx, true},
    {"comm = nginx", &python, false},
    {"exe = /usr/sbin/nginx", &nginx, true},
    {"exe = /usr/sbin/nginx", &python, false},
    {"cmdline = \"nginx: worker process\"", &nginx, true},
    {"cgroup = /system.slice/nginx.service", &nginx, true},
    {"unit = nginx.service", &nginx, true},
    {"unit = nginx.service", &python, false},
    {"user = www-data", &nginx, true},
    {"user = www-data", &python, false},
    /* globs: * ? [] and '*' crossing '/' */
    {"comm = ng*", &nginx, true},
    {"comm = ngin?", &nginx, true},
    {"comm = ngin??", &nginx, false},
    {"comm = [mn]ginx", &nginx, true},
    {"comm = [!n]ginx", &nginx, false},
    {"exe = /usr/*", &nginx, true},
    {"exe = /usr/bin/python3*", &python, true},
    {"cgroup = /user.slice/*", &python, true},
    {"cgroup = /system.slice/*", &python, false},
    {"cmdline = *worker.py*", &python, true},
    {"cmdline = \"* --queue jobs\"", &python, true},
    {"cmdline = worker.py", &python, false}, /* the whole value must match */
    {"unit = *.scope", &python, true},
    {"unit = session-*.scope", &python, true},
    /* several globs: any may match */
    {"comm = bash zsh nginx", &nginx, true},
    {"comm = bash zsh", &nginx, false},
    {"comm = bash\n  nginx", &nginx, true},
    /* every used key must match */
    {"comm = nginx\nuser = www-data", &nginx, true},
    {"comm = nginx\nuser = root", &nginx, false},
    {"comm = python3\nexe = /usr/bin/*\ncmdline = *worker*\ncgroup = /user.slice/*\nunit = *.scope\nuser = alice",
     &python, true},
    {"comm = python3\nexe = /usr/bin/*\ncmdline = *worker*\ncgroup = /user.slice/*\nunit = *.scope\nuser = bob",
     &python, false},
    /* unknown input: a rule using that key does not match */
    {"exe = *", &kthread, false},
    {"unit = *", &kthread, false},
    {"comm = kworker/*", &kthread, true},
    {"comm = kworker/*\nexe = *", &kthread, false},
    /* empty cmdline of a kernel thread matches only "" or "*" */
    {"cmdline = \"\"", &kthread, true},
    {"cmdline = *", &kthread, true},
    {"cmdline = \"\"", &nginx, false},
    {"cgroup = /", &kthread, true},
};

static void test_cases(void **state)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[512];
        snprintf(text, sizeof text, "[rule r]\n%s\nclass = jitter\n", cases[i].rule);
        print_message("case %zu: %s\n", i, cases[i].rule);
        load(text);
        assert_int_equal(rule_matches(&cfg.rules[0], cases[i].in), cases[i].match);
        assert_int_equal(rules_match(cfg.rules, cfg.n_rules, cases[i].in), cases[i].match ? 0 : -1);
        assert_int_equal(rule_first_mismatch(&cfg.rules[0], cases[i].in) < 0, cases[i].match);
        /* split in two at any set of keys, the parts agree with the whole */
        for (unsigned keys = 0; keys < (1u << _RULE_KEY_MAX); keys++)
            assert_int_equal(rule_matches_keys(&cfg.rules[0], cases[i].in, keys) &&
                                 rule_matches_keys(&cfg.rules[0], cases[i].in, ~keys),
                             cases[i].match);
        config_done(&cfg);
    }
}

static void test_first_match_wins(void **state)
{
    load("[rule a]\ncomm = bash\nclass = ignore\n"
         "[rule b]\nexe = /usr/sbin/*\nclass = intensive\n"
         "[rule c]\ncomm = nginx\nclass = jitter\n");
    assert_int_equal(rules_match(cfg.rules, cfg.n_rules, &nginx), 1);
    assert_int_equal(cfg.rules[1].class, CLASS_INTENSIVE);
    /* without the earlier rule, the later one decides */
    assert_int_equal(rules_match(cfg.rules + 2, 1, &nginx), 0);
    assert_int_equal(rules_match(cfg.rules, cfg.n_rules, &python), -1);
    assert_int_equal(rules_match(cfg.rules, 0, &nginx), -1);
}

static void test_first_mismatch(void **state)
{
    load("[rule a]\nuser = www-data\ncomm = bash\nexe = /usr/sbin/*\nclass = ignore\n");
    /* keys are checked in enum order: comm first */
    assert_int_equal(rule_first_mismatch(&cfg.rules[0], &nginx), RULE_COMM);
    assert_int_equal(rule_first_mismatch(&cfg.rules[0], &python), RULE_COMM);
    struct match_input in = nginx;
    in.comm = "bash";
    assert_int_equal(rule_first_mismatch(&cfg.rules[0], &in), -1);
    in.user = "root";
    assert_int_equal(rule_first_mismatch(&cfg.rules[0], &in), RULE_USER);
    /* a rule without keys matches nothing */
    struct rule empty = {.name = (char *)"empty", .class = CLASS_JITTER};
    assert_false(rule_matches(&empty, &nginx));
    assert_false(rule_matches_keys(&empty, &nginx, 0));
    /* keys outside the mask are not looked at */
    assert_true(rule_matches_keys(&cfg.rules[0], &nginx, (1u << RULE_USER) | (1u << RULE_EXE)));
    assert_false(rule_matches_keys(&cfg.rules[0], &python, 1u << RULE_USER));
}

static void test_keys_used(void **state)
{
    load("[rule a]\ncomm = x\nclass = ignore\n"
         "[rule b]\nuser = y\ncmdline = z\nclass = jitter\n");
    assert_int_equal(rules_keys_used(cfg.rules, cfg.n_rules),
                     (1u << RULE_COMM) | (1u << RULE_USER) | (1u << RULE_CMDLINE));
    assert_int_equal(rules_keys_used(cfg.rules, 1), 1u << RULE_COMM);
    assert_int_equal(rules_keys_used(cfg.rules, 0), 0);
}

/* Rules from drop-ins come after the main file's, in lexical file order,
 * so an earlier file's rule wins over a later one for the same task. */
static void test_dropin_order(void **state)
{
    struct config *c = NULL;
    assert_int_equal(config_load(TS_FIXTURES "/config/good/turbosched.conf", NULL, &c), 0);
    struct match_input cron = {.comm = "cron", .unit = "cron.service", .exe = "/usr/bin/late"};
    /* both "early" (10-early.conf) and "late" (20-late.conf) match */
    assert_true(rule_matches(&c->rules[3], &cron));
    int i = rules_match(c->rules, c->n_rules, &cron);
    assert_int_equal(i, 2);
    assert_string_equal(c->rules[i].name, "early");
    assert_int_equal(c->rules[i].class, CLASS_JITTER);
    config_destroy(c);
}

static void test_globs_helper(void **state)
{
    char *globs[] = {(char *)"a*", (char *)"b", NULL};
    assert_true(rules_globs_match(globs, "abc"));
    assert_true(rules_globs_match(globs, "b"));
    assert_false(rules_globs_match(globs, "bb"));
    assert_false(rules_globs_match(globs, NULL));
    assert_false(rules_globs_match(NULL, "a"));
    assert_string_equal(match_input_get(&nginx, RULE_UNIT), "nginx.service");
    assert_null(match_input_get(&kthread, RULE_EXE));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
        cmocka_unit_test_teardown(test_first_match_wins, teardown),
        cmocka_unit_test_teardown(test_first_mismatch, teardown),
        cmocka_unit_test_teardown(test_keys_used, teardown),
        cmocka_unit_test(test_dropin_order),
        cmocka_unit_test(test_globs_helper),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
