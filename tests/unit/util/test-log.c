/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The log's defence against text from outside: a thread may name itself
 * anything, and its name reaches the journal through the daemon's stderr. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "procinfo.h"
#include "util.h"

static void test_escape(void **state)
{
    char out[64];
    assert_int_equal(log_escape("plain text <3>", out, sizeof out), 14);
    assert_string_equal(out, "plain text <3>");
    log_escape("x\n<0>FAKE\t\r\x7f\xc3\xa9", out, sizeof out);
    assert_string_equal(out, "x\\n<0>FAKE\\t\\x0d\\x7f\\xc3\\xa9");
    /* Truncation keeps whole escapes and the NUL. */
    char small[6];
    assert_int_equal(log_escape("ab\x01z", small, sizeof small), 2);
    assert_string_equal(small, "ab");
    assert_int_equal(log_escape("ab\x01", out, 7), 6);
    assert_string_equal(out, "ab\\x01");
}

/* The real path: a thread names itself "x\n<0>FAKE", its name is read from
 * /proc as the daemon reads it and logged to a stderr that journald would
 * parse (JOURNAL_STREAM names it). The file must hold one line, with the
 * priority we chose and the newline visible as \n. In a child, because the
 * log caches whether stderr is the journal. */
static void test_forged_priority_line(void **state)
{
    char path[] = "/tmp/ts-log-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct stat st;
        char env[64];
        if (dup2(fd, STDERR_FILENO) < 0 || fstat(STDERR_FILENO, &st) < 0)
            _exit(10);
        snprintf(env, sizeof env, "%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
        setenv("JOURNAL_STREAM", env, 1);
        if (prctl(PR_SET_NAME, "x\n<0>FAKE") < 0)
            _exit(11);
        struct procinfo pi;
        if (procinfo_read("/", getpid(), getpid(), 1u << RULE_COMM, &pi) < 0 || !pi.in.comm)
            _exit(12);
        if (!strchr(pi.in.comm, '\n'))
            _exit(13); /* the kernel must hand the name back raw for this test to mean anything */
        log_notice("pid %d: comm %s matched no rule", (int)getpid(), pi.in.comm);
        fflush(stderr);
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    char buf[512] = {0};
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    close(fd);
    unlink(path);
    assert_true(n > 0);
    print_message("logged: %s", buf);
    unsigned lines = 0;
    for (ssize_t i = 0; i < n; i++)
        lines += buf[i] == '\n';
    assert_int_equal(lines, 1);
    assert_int_equal(strncmp(buf, "<5>pid ", 7), 0);
    assert_non_null(strstr(buf, "comm x\\n<0>FAKE matched no rule\n"));
}

struct captured {
    int level;
    char msg[256];
    unsigned n;
};

static void capture(int level, const char *msg, void *userdata)
{
    struct captured *c = userdata;
    c->level = level;
    snprintf(c->msg, sizeof c->msg, "%s", msg);
    c->n++;
}

/* log_error_errno() and friends: %m reads strerror(-r), the call returns r
 * (negative whatever sign it was given), errno is left as it was, and a
 * message above the maximum level is dropped but still returns r. */
static void test_errno_helper(void **state)
{
    struct captured c = {0};
    log_set_sink(capture, &c);
    int max = log_get_max_level();
    log_set_max_level(LOG_INFO);

    errno = EINTR;
    assert_int_equal(log_error_errno(-EACCES, "opening %s: %m, leaving it", "x"), -EACCES);
    assert_int_equal(errno, EINTR);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.level, LOG_ERR);
    char want[128];
    snprintf(want, sizeof want, "opening x: %s, leaving it", strerror(EACCES));
    assert_string_equal(c.msg, want);

    assert_int_equal(log_warning_errno(ENOENT, "gone: %m"), -ENOENT);
    assert_int_equal(c.level, LOG_WARNING);
    snprintf(want, sizeof want, "gone: %s", strerror(ENOENT));
    assert_string_equal(c.msg, want);

    assert_int_equal(log_debug_errno(-ESRCH, "pid 1: %m"), -ESRCH);
    assert_int_equal(c.n, 2); /* debug is above the maximum level: not logged */

    log_set_max_level(max);
    log_set_sink(NULL, NULL);
}

/* A rate limit lets its burst through at the level asked and lowers the
 * rest to debug; the first message of the next interval is logged, after
 * one line that counts what was lowered. The interval's end is simulated by
 * moving its start back. */
static void test_ratelimit(void **state)
{
    struct captured c = {0};
    log_set_sink(capture, &c);
    int max = log_get_max_level();
    log_set_max_level(LOG_INFO);
    struct log_ratelimit rl = {.what = "refusals", .burst = 3};
    for (int i = 0; i < 1000; i++)
        log_ratelimited(&rl, LOG_NOTICE, "refused %d", i);
    assert_int_equal(c.n, 3);
    assert_string_equal(c.msg, "refused 2");
    assert_int_equal(rl.lowered, 997);

    rl.begin_ms -= LOG_RATELIMIT_INTERVAL_MS;
    log_ratelimited(&rl, LOG_NOTICE, "refused again");
    assert_int_equal(c.n, 5);
    assert_string_equal(c.msg, "refused again");
    assert_int_equal(rl.lowered, 0);
    log_set_max_level(LOG_DEBUG); /* lowered, not lost: debug shows them */
    log_ratelimited(&rl, LOG_NOTICE, "a");
    log_ratelimited(&rl, LOG_NOTICE, "b");
    log_ratelimited(&rl, LOG_NOTICE, "c");
    assert_int_equal(c.n, 8);
    assert_int_equal(c.level, LOG_DEBUG);

    log_set_max_level(max);
    log_set_sink(NULL, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_forged_priority_line),
        cmocka_unit_test(test_errno_helper),
        cmocka_unit_test(test_ratelimit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
