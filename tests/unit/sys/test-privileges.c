/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The capabilities the daemon keeps, and dropping the rest for real in a
 * forked child (as root), read back from /proc/self/status. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "config.h"
#include "privileges.h"

static const struct privilege_needs NONE = {0}, EXE = {.exe_rules = true}, CPUSET = {.cpuset_v1 = true},
                                    BOTH = {.cpuset_v1 = true, .exe_rules = true};

static void test_kept_mask(void **state)
{
    /* CAP_NET_ADMIN 12, CAP_SYS_PTRACE 19, CAP_SYS_NICE 23; CAP_DAC_OVERRIDE 1 */
    assert_int_equal(privileges_kept_mask(NONE), 0x801000);
    assert_int_equal(privileges_kept_mask(NONE), (1ull << CAP_SYS_NICE) | (1ull << CAP_NET_ADMIN));
    assert_int_equal(privileges_kept_mask(EXE), 0x881000);
    assert_int_equal(privileges_kept_mask(CPUSET), 0x801002);
    assert_int_equal(privileges_kept_mask(BOTH), 0x881002);
    assert_int_equal(privileges_kept_mask(EXE) & ~privileges_kept_mask(NONE), 1ull << CAP_SYS_PTRACE);
    assert_int_equal(privileges_kept_mask(CPUSET) & ~privileges_kept_mask(NONE), 1ull << CAP_DAC_OVERRIDE);
    /* request paths: CAP_SYS_PTRACE 19 and CAP_DAC_READ_SEARCH 2 */
    const struct privilege_needs req = {.request_paths = true}, req_exe = {.request_paths = true, .exe_rules = true};
    assert_int_equal(privileges_kept_mask(req), 0x881004);
    assert_int_equal(privileges_kept_mask(req) & ~privileges_kept_mask(NONE),
                     (1ull << CAP_SYS_PTRACE) | (1ull << CAP_DAC_READ_SEARCH));
    assert_int_equal(privileges_kept_mask(req_exe), privileges_kept_mask(req));
}

/* Request paths are looked for only while behaviour classification is on. */
static void test_config_reads_sockets(void **state)
{
    (void)state;
    struct config cfg = {.request_paths = true};
    cfg.behaviour.enabled = true;
    assert_true(privileges_config_reads_sockets(&cfg));
    cfg.request_paths = false;
    assert_false(privileges_config_reads_sockets(&cfg));
    cfg.request_paths = true;
    cfg.behaviour.enabled = false;
    assert_false(privileges_config_reads_sockets(&cfg));
}

/* Only a rule that uses exe= asks for CAP_SYS_PTRACE, wherever it is. */
static void test_config_reads_exe(void **state)
{
    char *glob_list[] = {"x", NULL};
    struct rule rules[3] = {0};
    struct config cfg = {.rules = rules, .n_rules = 0};

    assert_false(privileges_config_reads_exe(&cfg));
    rules[0].globs[RULE_COMM] = glob_list;
    rules[1].globs[RULE_CMDLINE] = glob_list;
    rules[1].globs[RULE_USER] = glob_list;
    cfg.n_rules = 2;
    assert_false(privileges_config_reads_exe(&cfg));
    rules[2].globs[RULE_EXE] = glob_list;
    cfg.n_rules = 3;
    assert_true(privileges_config_reads_exe(&cfg));
    /* the last of several keys */
    rules[2].globs[RULE_EXE] = NULL;
    rules[0].globs[RULE_EXE] = glob_list;
    assert_true(privileges_config_reads_exe(&cfg));
}

struct caps {
    uint64_t inh, prm, eff, bnd;
};

/* -errno, or 0 with every set read. */
static int read_caps(struct caps *c)
{
    FILE *f = fopen("/proc/self/status", "re");
    if (!f)
        return -errno;
    char line[256];
    unsigned found = 0;
    while (fgets(line, sizeof line, f)) {
        static const char *const keys[] = {"CapInh:", "CapPrm:", "CapEff:", "CapBnd:"};
        uint64_t *fields[] = {&c->inh, &c->prm, &c->eff, &c->bnd};
        for (size_t i = 0; i < 4; i++)
            if (strncmp(line, keys[i], strlen(keys[i])) == 0 &&
                sscanf(line + strlen(keys[i]), "%" SCNx64, fields[i]) == 1)
                found |= 1u << i;
    }
    fclose(f);
    return found == 0xf ? 0 : -EBADMSG;
}

/* What the child saw; it must not use cmocka's asserts (they would unwind
 * into the parent's copy of the runner). */
struct report {
    int read_before, r1, read_after1, r2, read_after2;
    struct caps before, after1, after2;
    bool second_said_limited;
    bool exe_lacks_before, exe_lacks_after; /* privileges_exe_rules_lack_ptrace, config with exe= */
};

static bool said_limited;

static void sink(int level, const char *msg, void *userdata)
{
    if (strstr(msg, "capabilities already limited to what is needed"))
        said_limited = true;
}

static struct report drop_in_child(struct privilege_needs needs)
{
    int p[2];
    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct report rep = {0};
        close(p[0]);
        log_set_max_level(LOG_DEBUG);
        char *glob_list[] = {"x", NULL};
        struct rule exe_rule = {.globs[RULE_EXE] = glob_list};
        struct config exe_cfg = {.rules = &exe_rule, .n_rules = 1};
        rep.read_before = read_caps(&rep.before);
        rep.exe_lacks_before = privileges_exe_rules_lack_ptrace(&exe_cfg);
        rep.r1 = privileges_drop_unneeded(needs);
        rep.read_after1 = read_caps(&rep.after1);
        rep.exe_lacks_after = privileges_exe_rules_lack_ptrace(&exe_cfg);
        log_set_sink(sink, NULL);
        rep.r2 = privileges_drop_unneeded(needs);
        log_set_sink(NULL, NULL);
        rep.second_said_limited = said_limited;
        rep.read_after2 = read_caps(&rep.after2);
        _exit(write(p[1], &rep, sizeof rep) == sizeof rep ? 0 : 1);
    }
    close(p[1]);
    struct report rep;
    assert_int_equal(read(p[0], &rep, sizeof rep), (ssize_t)sizeof rep);
    close(p[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return rep;
}

static void check_drop(struct privilege_needs needs)
{
    if (geteuid() != 0) {
        print_message("skipped: dropping capabilities needs root\n");
        skip();
    }
    uint64_t keep = privileges_kept_mask(needs);
    struct report rep = drop_in_child(needs);
    assert_int_equal(rep.read_before, 0);
    if ((rep.before.prm & keep) != keep || (rep.before.bnd & keep) != keep) {
        print_message("skipped: this root lacks some of the kept capabilities (permitted %" PRIx64 ", bounding %" PRIx64
                      ")\n",
                      rep.before.prm, rep.before.bnd);
        skip();
    }
    /* something to drop, or the call has nothing to show */
    assert_true((rep.before.prm & ~keep) != 0);

    assert_int_equal(rep.r1, 0);
    assert_int_equal(rep.read_after1, 0);
    assert_int_equal(rep.after1.eff, keep);
    assert_int_equal(rep.after1.prm, keep);
    assert_int_equal(rep.after1.bnd, keep);
    assert_int_equal(rep.after1.inh, 0);

    /* a second call finds nothing to do */
    assert_int_equal(rep.r2, 0);
    assert_true(rep.second_said_limited);
    assert_int_equal(rep.read_after2, 0);
    assert_memory_equal(&rep.after2, &rep.after1, sizeof rep.after1);
    /* what a reload that adds an exe= rule finds: gone for good, and said */
    assert_false(rep.exe_lacks_before);
    assert_int_equal(rep.exe_lacks_after, !needs.exe_rules);
    if (!needs.exe_rules)
        assert_false(rep.after1.bnd & (1ull << CAP_SYS_PTRACE));
}

static void test_drop_minimal(void **state) { check_drop(NONE); }
static void test_drop_with_exe_rules(void **state) { check_drop(EXE); }
static void test_drop_with_cpuset(void **state) { check_drop(CPUSET); }
static void test_drop_with_both(void **state) { check_drop(BOTH); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kept_mask),
        cmocka_unit_test(test_config_reads_exe),
        cmocka_unit_test(test_config_reads_sockets),
        cmocka_unit_test(test_drop_minimal),
        cmocka_unit_test(test_drop_with_exe_rules),
        cmocka_unit_test(test_drop_with_cpuset),
        cmocka_unit_test(test_drop_with_both),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
