/* SPDX-License-Identifier: GPL-2.0-or-later */
/* procinfo against a fixture /proc tree: exe links (deleted binaries, kernel
 * threads), cmdline joining, cgroup v1/v2/hybrid picks, unit derivation and
 * the jitter slice, user names, and keys not asked for staying unknown. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "procinfo.h"

#define ROOT TS_FIXTURES "/proc-classify"
#define ALL ((1u << _RULE_KEY_MAX) - 1u)

static void assert_str_or_null(const char *got, const char *want)
{
    if (!want)
        assert_null(got);
    else {
        assert_non_null(got);
        assert_string_equal(got, want);
    }
}

static const struct {
    pid_t pid, tid;
    const char *comm, *exe, *cmdline, *cgroup, *unit, *system_unit, *user;
    bool jitter_slice;
} cases[] = {
    /* cgroup v2 service; a second thread has its own comm */
    {100, 100, "nginx", "/usr/sbin/nginx", "nginx: worker process", "/system.slice/nginx.service", "nginx.service",
     "nginx.service", NULL, false},
    {100, 101, "nginx-cache", "/usr/sbin/nginx", "nginx: worker process", "/system.slice/nginx.service",
     "nginx.service", "nginx.service", NULL, false},
    {200, 200, "telegraf", "/usr/bin/telegraf", "/usr/bin/telegraf --config /etc/telegraf/telegraf.conf",
     "/turbosched.slice/turbosched-jitter.slice/telegraf.service", "telegraf.service", "telegraf.service", "root",
     true},
    /* hybrid: 0:: is the root, so name=systemd decides; " (deleted)" stripped */
    {300, 300, "app", "/usr/local/bin/app", "/usr/local/bin/app -j", "/system.slice/docker-abc123.scope",
     "docker-abc123.scope", "docker-abc123.scope", "root", false},
    /* kernel thread: no exe, empty cmdline */
    {400, 400, "kworker/0:1", NULL, "", "/", NULL, NULL, "root", false},
    /* user session: unit is the innermost, system_unit the manager's */
    {500, 501, "gdbus", "/usr/bin/gnome-shell", "/usr/bin/gnome-shell",
     "/user.slice/user-4000000.slice/user@4000000.service/app.slice/gnome-shell.service", "gnome-shell.service",
     "user@4000000.service", "4000000", false},
    /* legacy v1 without a 0:: line */
    {600, 600, "cron", "/usr/sbin/cron", "/usr/sbin/cron -f", "/system.slice/cron.service", "cron.service",
     "cron.service", "root", false},
    /* v1 where only the cpuset group says anything */
    {700, 700, "batch", "/opt/batch/run", "/opt/batch/run", "/jobs/batch", NULL, NULL, "4000001", false},
    /* hybrid, jitter slice seen through name=systemd */
    {800, 800, "logrotate", "/usr/sbin/logrotate", "/usr/sbin/logrotate /etc/logrotate.conf",
     "/turbosched.slice/turbosched-jitter.slice/logrotate.service", "logrotate.service", "logrotate.service", "root",
     true},
};

static void test_fixture_tasks(void **state)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct procinfo pi;
        print_message("pid %d tid %d\n", (int)cases[i].pid, (int)cases[i].tid);
        assert_int_equal(procinfo_read(ROOT, cases[i].pid, cases[i].tid, ALL | PROCINFO_WANT_SLICE, &pi), 0);
        assert_str_or_null(pi.in.comm, cases[i].comm);
        assert_str_or_null(pi.in.exe, cases[i].exe);
        assert_str_or_null(pi.in.cmdline, cases[i].cmdline);
        assert_str_or_null(pi.in.cgroup, cases[i].cgroup);
        assert_str_or_null(pi.in.unit, cases[i].unit);
        if (cases[i].system_unit)
            assert_string_equal(pi.system_unit, cases[i].system_unit);
        if (cases[i].user)
            assert_str_or_null(pi.in.user, cases[i].user);
        assert_int_equal(pi.in_jitter_slice, cases[i].jitter_slice);
    }
}

/* Uid 33 and 1000 differ between machines: compare with the local database. */
static void test_user_from_passwd(void **state)
{
    struct procinfo pi;
    assert_int_equal(procinfo_read(ROOT, 100, 100, 1u << RULE_USER, &pi), 0);
    struct passwd *pw = getpwuid(33);
    assert_string_equal(pi.in.user, pw ? pw->pw_name : "33");
    assert_null(pi.in.comm);
}

static void test_only_asked_keys(void **state)
{
    struct procinfo pi;
    assert_int_equal(procinfo_read(ROOT, 200, 200, 1u << RULE_EXE, &pi), 0);
    assert_string_equal(pi.in.exe, "/usr/bin/telegraf");
    assert_null(pi.in.comm);
    assert_null(pi.in.cmdline);
    assert_null(pi.in.cgroup);
    assert_null(pi.in.unit);
    assert_null(pi.in.user);
    assert_false(pi.in_jitter_slice);
    /* the slice alone, without the unit key */
    assert_int_equal(procinfo_read(ROOT, 200, 200, PROCINFO_WANT_SLICE, &pi), 0);
    assert_true(pi.in_jitter_slice);
    assert_null(pi.in.unit);
    /* pid 0: the tid's own directory */
    assert_int_equal(procinfo_read(ROOT, 0, 600, 1u << RULE_COMM, &pi), 0);
    assert_string_equal(pi.in.comm, "cron");
}

static void test_gone(void **state)
{
    struct procinfo pi;
    int r = procinfo_read(ROOT, 999, 999, ALL, &pi);
    assert_true(r == -ENOENT || r == -ESRCH);
    /* process there, thread gone */
    r = procinfo_read(ROOT, 100, 102, ALL, &pi);
    assert_true(r == -ENOENT || r == -ESRCH);
    r = procinfo_read(ROOT, 999, 999, 0, &pi);
    assert_true(r == -ENOENT || r == -ESRCH);
}

static void test_live_self(void **state)
{
    struct procinfo pi;
    assert_int_equal(procinfo_read(NULL, getpid(), getpid(), ALL | PROCINFO_WANT_SLICE, &pi), 0);
    assert_string_equal(pi.in.comm, "test-procinfo");
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    assert_true(n > 0);
    exe[n] = '\0';
    assert_string_equal(pi.in.exe, exe);
    assert_non_null(strstr(pi.in.cmdline, "test-procinfo"));
    assert_non_null(pi.in.cgroup);
    assert_int_equal(pi.in.cgroup[0], '/');
    assert_non_null(pi.in.user);
}

static void test_cgroup_helpers(void **state)
{
    char buf[256];
    assert_int_equal(procinfo_cgroup_pick("", buf, sizeof buf), -ENOENT);
    assert_int_equal(procinfo_cgroup_pick("garbage\n", buf, sizeof buf), -ENOENT);
    assert_int_equal(procinfo_cgroup_pick("0::/\n", buf, sizeof buf), 0);
    assert_string_equal(buf, "/");
    assert_int_equal(procinfo_cgroup_pick("0::/a/b\n1:name=systemd:/c\n", buf, sizeof buf), 0);
    assert_string_equal(buf, "/a/b");
    /* cpuset co-mounted with other controllers */
    assert_int_equal(procinfo_cgroup_pick("5:cpu,cpuset:/x\n1:name=systemd:/\n", buf, sizeof buf), 0);
    assert_string_equal(buf, "/x");
    /* paths may contain ':' */
    assert_int_equal(procinfo_cgroup_pick("0::/a:b\n", buf, sizeof buf), 0);
    assert_string_equal(buf, "/a:b");
    assert_int_equal(procinfo_cgroup_pick("0::/very/long/path\n", buf, 8), -ENAMETOOLONG);
    assert_int_equal(procinfo_cgroup_systemd("4:cpuset:/x\n", buf, sizeof buf), -ENOENT);
    assert_int_equal(procinfo_cgroup_systemd("1:name=systemd:/s.slice/u.service\n0::/\n", buf, sizeof buf), 0);
    assert_string_equal(buf, "/s.slice/u.service");

    assert_int_equal(procinfo_unit_from_cgroup("/system.slice/a.service/sub", false, buf, sizeof buf), 0);
    assert_string_equal(buf, "a.service");
    assert_int_equal(procinfo_unit_from_cgroup("/a.slice/b.scope", false, buf, sizeof buf), 0);
    assert_string_equal(buf, "b.scope");
    assert_int_equal(procinfo_unit_from_cgroup("/a.slice/x.service/y.service", true, buf, sizeof buf), 0);
    assert_string_equal(buf, "x.service");
    assert_int_equal(procinfo_unit_from_cgroup("/a.slice/.service", false, buf, sizeof buf), -ENOENT);
    assert_int_equal(procinfo_unit_from_cgroup("/", false, buf, sizeof buf), -ENOENT);
    assert_int_equal(procinfo_unit_from_cgroup("/init.scope.d", false, buf, sizeof buf), -ENOENT);

    assert_true(procinfo_path_in_jitter_slice("/turbosched-jitter.slice"));
    assert_true(procinfo_path_in_jitter_slice("/turbosched.slice/turbosched-jitter.slice/a.service"));
    assert_false(procinfo_path_in_jitter_slice("/turbosched.slice/turbosched-jitter.slicex/a.service"));
    assert_false(procinfo_path_in_jitter_slice("/system.slice/turbosched-jitter.slice.service"));
    assert_false(procinfo_path_in_jitter_slice("/"));
    assert_false(procinfo_path_in_jitter_slice(""));
    assert_true(procinfo_path_in_jitter_slice("//turbosched.slice//turbosched-jitter.slice"));
    /* A user's own manager may make a slice of that name: it opts nothing in. */
    assert_false(procinfo_path_in_jitter_slice(
        "/user.slice/user-1000.slice/user@1000.service/turbosched-jitter.slice/run-r1.service"));
    assert_false(procinfo_path_in_jitter_slice(
        "/user.slice/user-1000.slice/user@1000.service/turbosched.slice/turbosched-jitter.slice/run-r1.service"));
    assert_false(procinfo_path_in_jitter_slice("/system.slice/turbosched-jitter.slice/a.service"));
    assert_false(procinfo_path_in_jitter_slice("/turbosched.slice/x.slice/turbosched-jitter.slice"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_tasks),   cmocka_unit_test(test_user_from_passwd),
        cmocka_unit_test(test_only_asked_keys), cmocka_unit_test(test_gone),
        cmocka_unit_test(test_live_self),       cmocka_unit_test(test_cgroup_helpers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
