/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

static void test_cpulist_roundtrip(void **state)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"0", "0"},
        {"0-3", "0-3"},
        {"0-3,8,10-11\n", "0-3,8,10-11"},
        {"1,0", "0-1"},
        {"", ""},
        {"\n", ""},
        {"5,6,7,9", "5-7,9"},
        {"1023", "1023"},
        /* ranges across and at the edges of the 64-bit words it scans */
        {"63-64", "63-64"},
        {"0-1023", "0-1023"},
        {"62,63,127-129,1022", "62-63,127-129,1022"},
        {"64", "64"},
        {"1000-1023", "1000-1023"},
        {"0,1023", "0,1023"},
    };
    for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
        cpu_set_t s;
        char buf[64];
        assert_int_equal(cpulist_parse(cases[i].in, &s), 0);
        assert_int_equal(cpulist_format(&s, buf, sizeof buf), 0);
        assert_string_equal(buf, cases[i].out);
    }
}

static void test_cpulist_errors(void **state)
{
    cpu_set_t s;
    char small[4];
    assert_int_equal(cpulist_parse("a", &s), -EINVAL);
    assert_int_equal(cpulist_parse("3-1", &s), -ERANGE);
    assert_int_equal(cpulist_parse("1-", &s), -EINVAL);
    assert_int_equal(cpulist_parse("0,,1", &s), -EINVAL);
    assert_int_equal(cpulist_parse("1024", &s), -ERANGE);
    assert_int_equal(cpulist_parse("1 2", &s), -EINVAL);
    assert_int_equal(cpulist_parse("0,2,4,6", &s), 0);
    assert_int_equal(cpulist_format(&s, small, sizeof small), -ENOSPC);
}

static void test_procstat_field(void **state)
{
    /* comm "a) b (c" holds spaces and ')': fields count from the last ')' */
    const char *line = "42 (a) b (c) S 1 42 42 0 -1 4194560 99 0 0 0 7 3 0 0 20 0 1 0 123456 0\n";
    uint64_t v;
    assert_string_equal(procstat_field(line, 3), "S 1 42 42 0 -1 4194560 99 0 0 0 7 3 0 0 20 0 1 0 123456 0\n");
    assert_int_equal(procstat_u64(line, 4, &v), 0);
    assert_int_equal(v, 1);
    assert_int_equal(procstat_u64(line, 9, &v), 0);
    assert_int_equal(v, 4194560);
    assert_int_equal(procstat_u64(line, 14, &v), 0);
    assert_int_equal(v, 7);
    assert_int_equal(procstat_u64(line, 22, &v), 0);
    assert_int_equal(v, 123456);
    assert_int_equal(procstat_u64(line, 23, &v), 0); /* the last, before the newline */
    assert_int_equal(v, 0);
    assert_null(procstat_field(line, 24));                 /* past the end */
    assert_null(procstat_field(line, 2));                  /* comm is not a field from here */
    assert_int_equal(procstat_u64(line, 3, &v), -EBADMSG); /* "S" is no number */
    assert_int_equal(procstat_u64(line, 8, &v), -EBADMSG); /* "-1" is not unsigned */
    assert_null(procstat_field("42 no paren S 1", 3));
    assert_null(procstat_field("42 (x)", 3));
    assert_null(procstat_field("42 (x)S 1", 3));
    assert_int_equal(procstat_u64("42 (x) S 18446744073709551616", 4, &v), -EBADMSG);
}

static void test_numbers(void **state)
{
    unsigned u;
    uint64_t v;
    bool b;
    assert_int_equal(parse_uint("42", &u), 0);
    assert_int_equal(u, 42);
    assert_int_equal(parse_uint("-1", &u), -EINVAL);
    assert_int_equal(parse_uint("4294967296", &u), -ERANGE);
    assert_int_equal(parse_uint("12x", &u), -EINVAL);
    assert_int_equal(parse_u64("99999999999999999999999", &v), -ERANGE);
    assert_int_equal(parse_bool("Yes", &b), 0);
    assert_true(b);
    assert_int_equal(parse_bool("off", &b), 0);
    assert_false(b);
    assert_int_equal(parse_bool("maybe", &b), -EINVAL);
}

static void test_milli(void **state)
{
    unsigned u;
    assert_int_equal(parse_milli("1.5", &u), 0);
    assert_int_equal(u, 1500);
    assert_int_equal(parse_milli("0.125", &u), 0);
    assert_int_equal(u, 125);
    assert_int_equal(parse_milli("2", &u), 0);
    assert_int_equal(u, 2000);
    assert_int_equal(parse_milli("1.2345", &u), -EINVAL);
    assert_int_equal(parse_milli("1.", &u), -EINVAL);
    assert_int_equal(parse_milli(".5", &u), -EINVAL);
    assert_int_equal(parse_milli("99999999", &u), -ERANGE);
}

static void test_format_percent(void **state)
{
    char b[16];
    assert_string_equal(format_percent(b, sizeof b, 125), "12.5%");
    assert_string_equal(format_percent(b, sizeof b, 50), "5%");
    assert_string_equal(format_percent(b, sizeof b, 0), "0%");
    assert_string_equal(format_percent(b, sizeof b, 1000), "100%");
    assert_string_equal(format_percent(b, sizeof b, 8005), "800.5%");
}

static void test_format_cpulist(void **state)
{
    cpu_set_t s;
    char big[CPULIST_MAX], small[16];
    CPU_ZERO(&s);
    assert_string_equal(format_cpulist(&s, big, sizeof big), "");
    /* The worst case for length: every other CPU. */
    for (int c = 0; c < CPU_SETSIZE; c += 2)
        CPU_SET(c, &s);
    assert_non_null(strstr(format_cpulist(&s, big, sizeof big), ",1022"));
    assert_string_equal(format_cpulist(&s, small, sizeof small), "(512 CPUs)");
    CPU_ZERO(&s);
    CPU_SET(3, &s);
    CPU_SET(4, &s);
    assert_string_equal(format_cpulist(&s, small, sizeof small), "3-4");
}

static void test_units(void **state)
{
    uint64_t v;
    unsigned ms;
    assert_int_equal(parse_size("8M", &v), 0);
    assert_int_equal(v, 8u << 20);
    assert_int_equal(parse_size("4096", &v), 0);
    assert_int_equal(v, 4096);
    assert_int_equal(parse_size("1KiB", &v), 0);
    assert_int_equal(v, 1024);
    assert_int_equal(parse_size("3T", &v), -EINVAL);
    assert_int_equal(parse_size("99999999999999G", &v), -ERANGE);
    assert_int_equal(parse_duration_ms("250ms", &ms), 0);
    assert_int_equal(ms, 250);
    assert_int_equal(parse_duration_ms("2s", &ms), 0);
    assert_int_equal(ms, 2000);
    assert_int_equal(parse_duration_ms("1min", &ms), 0);
    assert_int_equal(ms, 60000);
    assert_int_equal(parse_duration_ms("100", &ms), 0);
    assert_int_equal(ms, 100);
    assert_int_equal(parse_duration_ms("5h", &ms), -EINVAL);
    assert_int_equal(parse_duration_ms("9999999999s", &ms), -ERANGE);
    /* Size suffixes ignore case, duration suffixes do not. */
    assert_int_equal(parse_size("2g", &v), 0);
    assert_int_equal(v, 2ull << 30);
    assert_int_equal(parse_size("16mib", &v), 0);
    assert_int_equal(v, 16u << 20);
    assert_int_equal(parse_duration_ms("2S", &ms), -EINVAL);
    assert_int_equal(parse_duration_ms("71582min", &ms), 0);
    assert_int_equal(ms, 71582u * 60000u);
    assert_int_equal(parse_duration_ms("71583min", &ms), -ERANGE);
    assert_int_equal(parse_duration_ms("4294967295", &ms), 0);
    assert_int_equal(parse_duration_ms("4294967296", &ms), -ERANGE);
    assert_int_equal(parse_size("17179869183G", &v), 0);
    assert_int_equal(parse_size("17179869184G", &v), -ERANGE);
    assert_int_equal(parse_size("s", &v), -EINVAL);
}

static void test_read_file(void **state)
{
    char buf[8];
    assert_int_equal(read_file("/nonexistent/x", buf, sizeof buf), -ENOENT);
    /* /proc/self/stat is longer than 8 bytes */
    assert_int_equal(read_file("/proc/self/stat", buf, sizeof buf), -EFBIG);
    char big[4096];
    assert_true(read_file("/proc/self/stat", big, sizeof big) > 0);
}

/* A short read ends it: no second read() that would see 0 (a pipe whose
 * writer stays open shows it: read_file would wait for the end). */
static void test_read_proc_file(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    assert_int_equal(write(p[1], "ab\n", 3), 3);
    char buf[16];
    assert_int_equal(read_proc_fd(p[0], buf, sizeof buf), 3);
    assert_string_equal(buf, "ab\n");
    close(p[0]);
    close(p[1]);

    char path[] = "/tmp/ts-test-util.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    char text[3000];
    memset(text, 'x', sizeof text);
    assert_int_equal(write(fd, text, sizeof text), (ssize_t)sizeof text);
    close(fd);
    char big[4096];
    assert_int_equal(read_proc_file(path, big, sizeof big), (ssize_t)sizeof text);
    assert_int_equal(memcmp(big, text, sizeof text), 0);
    assert_int_equal(read_proc_file(path, big, sizeof text), -EFBIG); /* no room for the NUL */
    unlink(path);
    assert_int_equal(read_proc_file("/nonexistent/x", buf, sizeof buf), -ENOENT);
    assert_true(read_proc_file("/proc/self/stat", big, sizeof big) > 0);
}

static void test_path_join(void **state)
{
    char p[32];
    assert_int_equal(path_join(p, sizeof p, NULL, "/proc/stat"), 0);
    assert_string_equal(p, "/proc/stat");
    assert_int_equal(path_join(p, sizeof p, "/", "/proc/stat"), 0);
    assert_string_equal(p, "/proc/stat");
    assert_int_equal(path_join(p, sizeof p, "/tmp/root", "/proc/stat"), 0);
    assert_string_equal(p, "/tmp/root/proc/stat");
    assert_int_equal(path_join(p, 8, "/tmp/root", "/proc/stat"), -ENAMETOOLONG);
}

/* A sysfs attribute's number below a root: newline allowed, text refused. */
static void test_read_u64_below(void **state)
{
    (void)state;
    char root[] = "/tmp/test-util.XXXXXX", path[64];
    uint64_t v = 0;
    assert_non_null(mkdtemp(root));
    snprintf(path, sizeof path, "%s/n", root);
    FILE *f = fopen(path, "we");
    assert_non_null(f);
    fputs("18446744073709551615\n", f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(read_u64_below(root, "/n", &v), 0);
    assert_true(v == UINT64_MAX);
    f = fopen(path, "we");
    assert_non_null(f);
    fputs("C6\n", f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(read_u64_below(root, "/n", &v), -EINVAL);
    assert_int_equal(read_u64_below(root, "/absent", &v), -ENOENT);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(root), 0);
}

struct captured {
    int level;
    char msg[128];
};
static void capture(int level, const char *msg, void *ud)
{
    struct captured *c = ud;
    c->level = level;
    snprintf(c->msg, sizeof c->msg, "%s", msg);
}

static void test_log(void **state)
{
    struct captured c = {-1, ""};
    log_set_sink(capture, &c);
    log_set_max_level(LOG_INFO);
    log_debug("hidden %d", 1);
    assert_int_equal(c.level, -1);
    log_warning("x.conf:%d: unknown key '%s'", 7, "clas");
    assert_int_equal(c.level, LOG_WARNING);
    assert_string_equal(c.msg, "x.conf:7: unknown key 'clas'");
    log_set_sink(NULL, NULL);
    assert_int_equal(log_level_from_string("debug"), LOG_DEBUG);
    assert_int_equal(log_level_from_string("3"), LOG_ERR);
    assert_int_equal(log_level_from_string("loud"), -EINVAL);
}

/* The default sink, in a child (the journal check is made once a process):
 * stderr goes to a file; JOURNAL_STREAM names that file, another one, or
 * nothing. Returns what the child wrote. */
static void log_in_child(const char *journal, char *out, size_t size)
{
    char path[] = "/tmp/test-util-log.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct stat st;
        char env[64];
        if (dup2(fd, STDERR_FILENO) < 0 || fstat(fd, &st) < 0)
            _exit(1);
        if (journal && strcmp(journal, "this") == 0) {
            snprintf(env, sizeof env, "%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
            setenv("JOURNAL_STREAM", env, 1);
        } else if (journal) {
            setenv("JOURNAL_STREAM", journal, 1);
        } else {
            unsetenv("JOURNAL_STREAM");
        }
        log_set_max_level(LOG_INFO);
        log_err("t.conf:%d: bad", 3);
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ssize_t n = pread(fd, out, size - 1, 0);
    assert_true(n >= 0);
    out[n] = '\0';
    close(fd);
    unlink(path);
}

static void test_log_stderr_prefix(void **state)
{
    (void)state;
    char out[256];
    log_in_child("this", out, sizeof out);
    assert_string_equal(out, "<3>t.conf:3: bad\n");
    log_in_child(NULL, out, sizeof out);
    assert_string_equal(out, "t.conf:3: bad\n");
    log_in_child("1:1", out, sizeof out); /* a stream inherited from elsewhere */
    assert_string_equal(out, "t.conf:3: bad\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpulist_roundtrip),
        cmocka_unit_test(test_cpulist_errors),
        cmocka_unit_test(test_procstat_field),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_milli),
        cmocka_unit_test(test_units),
        cmocka_unit_test(test_format_percent),
        cmocka_unit_test(test_format_cpulist),
        cmocka_unit_test(test_read_file),
        cmocka_unit_test(test_read_proc_file),
        cmocka_unit_test(test_path_join),
        cmocka_unit_test(test_read_u64_below),
        cmocka_unit_test(test_log),
        cmocka_unit_test(test_log_stderr_prefix),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
