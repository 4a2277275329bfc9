/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#include "procmon.h"
#include "util.h"

#define MSG_MAX 256
/* Offsets inside a captured message: nlmsghdr 16, cn_msg 20, proc_event. */
#define OFF_CN NLMSG_HDRLEN
#define OFF_CN_LEN (OFF_CN + offsetof(struct cn_msg, len))
#define OFF_PE (OFF_CN + sizeof(struct cn_msg))
#define OFF_DATA (OFF_PE + offsetof(struct proc_event, event_data))

static size_t load(const char *name, uint8_t *buf)
{
    char path[PATH_MAX], text[MSG_MAX + 1];
    snprintf(path, sizeof path, "%s/procconn/%s", TS_FIXTURES, name);
    ssize_t n = read_file(path, text, sizeof text);
    assert_true(n > 0);
    memcpy(buf, text, (size_t)n);
    return (size_t)n;
}

/* Decode from a heap copy of exactly len bytes, so ASan sees any overread. */
static int decode_exact(const uint8_t *buf, size_t len, struct procmon_event *ev)
{
    uint8_t *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    memcpy(copy, buf, len);
    int r = procmon_decode(copy, len, ev);
    free(copy);
    return r;
}

static struct procmon_event decode_fixture(const char *name)
{
    uint8_t buf[MSG_MAX];
    struct procmon_event ev;
    size_t n = load(name, buf);
    assert_int_equal(decode_exact(buf, n, &ev), 0);
    return ev;
}

static void test_decode_captured(void **state)
{
    struct procmon_event fork = decode_fixture("fork.bin");
    struct procmon_event exec = decode_fixture("exec.bin");
    struct procmon_event comm = decode_fixture("comm.bin");
    struct procmon_event uid = decode_fixture("uid.bin");
    struct procmon_event exit = decode_fixture("exit.bin");
    struct procmon_event ack = decode_fixture("ack.bin");

    assert_int_equal(fork.kind, PROCMON_FORK);
    /* a new process: its own thread group */
    assert_true(fork.tid > 0);
    assert_int_equal(fork.tid, fork.tgid);
    assert_true(fork.fork.parent_tid > 0);
    assert_int_not_equal(fork.fork.parent_tgid, fork.tgid);

    assert_int_equal(comm.kind, PROCMON_COMM);
    assert_int_equal(comm.tid, fork.tid);
    assert_string_equal(comm.comm.comm, "ts-cap (x) y");

    assert_int_equal(uid.kind, PROCMON_UID);
    assert_int_equal(uid.tid, fork.tid);
    assert_int_equal(uid.uid.ruid, 65534);
    assert_int_equal(uid.uid.euid, 65534);

    assert_int_equal(exec.kind, PROCMON_EXEC);
    assert_int_equal(exec.tid, fork.tid);
    assert_int_equal(exec.tgid, fork.tgid);

    assert_int_equal(exit.kind, PROCMON_EXIT);
    assert_int_equal(exit.tid, fork.tid);
    assert_int_equal(exit.exit.code, 3 << 8); /* sh -c 'exit 3', wait(2) encoding */
    assert_int_equal(exit.exit.signal, SIGCHLD);

    assert_int_equal(ack.kind, PROCMON_ACK);
    assert_int_equal(ack.ack.err, 0);

    /* events carry a timestamp and are in causal order */
    assert_true(fork.timestamp_ns < exec.timestamp_ns);
    assert_true(exec.timestamp_ns < exit.timestamp_ns);
}

static void test_decode_thread(void **state)
{
    struct procmon_event fork = decode_fixture("fork-thread.bin");
    struct procmon_event exit = decode_fixture("exit-thread.bin");
    assert_int_equal(fork.kind, PROCMON_FORK);
    assert_int_not_equal(fork.tid, fork.tgid); /* a thread */
    assert_int_equal(exit.kind, PROCMON_EXIT);
    assert_int_equal(exit.tid, fork.tid);
    assert_int_equal(exit.tgid, fork.tgid);
    assert_int_equal(exit.exit.signal, (uint32_t)-1); /* threads signal no one */
}

static const char *const fixtures[] = {
    "ack.bin", "fork.bin", "fork-thread.bin", "exec.bin", "comm.bin", "uid.bin", "exit.bin", "exit-thread.bin",
};

static void test_every_truncation_rejected(void **state)
{
    for (size_t f = 0; f < ELEMENTSOF(fixtures); f++) {
        uint8_t buf[MSG_MAX];
        struct procmon_event ev;
        size_t n = load(fixtures[f], buf);
        for (size_t len = 0; len < n; len++)
            if (decode_exact(buf, len, &ev) != -EBADMSG)
                fail_msg("%s truncated to %zu bytes was accepted", fixtures[f], len);
        /* trailing bytes beyond nlmsg_len are not part of the message */
        assert_int_equal(decode_exact(buf, n, &ev), 0);
        buf[n] = 0xff;
        assert_int_equal(decode_exact(buf, n + 1, &ev), 0);
    }
}

/* A message whose lengths all agree but which carries less of the event
 * than its kind needs is rejected; from exactly that size on it decodes. */
static void test_short_event_rejected(void **state)
{
    static const struct {
        const char *name;
        size_t need;
    } cases[] = {
        {"ack.bin", 4}, {"fork.bin", 16}, {"exec.bin", 8}, {"comm.bin", 24}, {"uid.bin", 16}, {"exit.bin", 16},
    };
    for (size_t f = 0; f < ELEMENTSOF(cases); f++) {
        uint8_t buf[MSG_MAX], m[MSG_MAX];
        struct procmon_event ev;
        size_t n = load(cases[f].name, buf);
        uint16_t cn_len;
        memcpy(&cn_len, buf + OFF_CN_LEN, sizeof cn_len);
        size_t need = offsetof(struct proc_event, event_data) + cases[f].need;
        for (uint16_t l = 0; l <= cn_len; l++) {
            memcpy(m, buf, n);
            memcpy(m + OFF_CN_LEN, &l, sizeof l);
            uint32_t nl = (uint32_t)(OFF_PE + l);
            memcpy(m, &nl, sizeof nl);
            int r = decode_exact(m, nl, &ev);
            if (l < need && r != -EBADMSG)
                fail_msg("%s with %u event bytes was accepted", cases[f].name, l);
            if (l >= need && r != 0)
                fail_msg("%s with %u event bytes was rejected", cases[f].name, l);
        }
    }
}

static void test_wrong_headers_rejected(void **state)
{
    uint8_t buf[MSG_MAX], m[MSG_MAX];
    struct procmon_event ev;
    size_t n = load("fork.bin", buf);
    uint32_t u32;
    uint16_t u16;

    /* wrong connector idx / val */
    memcpy(m, buf, n);
    u32 = CN_IDX_PROC + 1;
    memcpy(m + OFF_CN, &u32, 4);
    assert_int_equal(decode_exact(m, n, &ev), -EBADMSG);
    memcpy(m, buf, n);
    u32 = CN_VAL_PROC + 1;
    memcpy(m + OFF_CN + 4, &u32, 4);
    assert_int_equal(decode_exact(m, n, &ev), -EBADMSG);

    /* not an NLMSG_DONE (an error message, say) */
    memcpy(m, buf, n);
    u16 = NLMSG_ERROR;
    memcpy(m + offsetof(struct nlmsghdr, nlmsg_type), &u16, 2);
    assert_int_equal(decode_exact(m, n, &ev), -EBADMSG);

    /* nlmsg_len claiming more than the buffer, or less than its own header */
    uint32_t bad_nl[] = {(uint32_t)n + 1, 0xffffffff, NLMSG_HDRLEN - 1, 0, NLMSG_HDRLEN, NLMSG_HDRLEN + 19};
    for (size_t i = 0; i < ELEMENTSOF(bad_nl); i++) {
        memcpy(m, buf, n);
        memcpy(m, &bad_nl[i], 4);
        assert_int_equal(decode_exact(m, n, &ev), -EBADMSG);
    }

    /* cn_msg.len claiming more than the netlink payload */
    uint16_t bad_cn[] = {(uint16_t)(n - OFF_PE + 1), 0xffff};
    for (size_t i = 0; i < ELEMENTSOF(bad_cn); i++) {
        memcpy(m, buf, n);
        memcpy(m + OFF_CN_LEN, &bad_cn[i], 2);
        assert_int_equal(decode_exact(m, n, &ev), -EBADMSG);
    }
    assert_int_equal(procmon_decode(NULL, 0, &ev), -EBADMSG);
}

static void test_comm_without_nul(void **state)
{
    uint8_t buf[MSG_MAX];
    struct procmon_event ev;
    size_t n = load("comm.bin", buf);
    memset(buf + OFF_DATA + 8, 'A', 16);
    assert_int_equal(decode_exact(buf, n, &ev), 0);
    assert_int_equal(strlen(ev.comm.comm), 15);
}

static void test_unknown_and_unaligned(void **state)
{
    uint8_t buf[MSG_MAX + 1];
    struct procmon_event ev;
    size_t n = load("exec.bin", buf + 1);
    /* any alignment */
    assert_int_equal(procmon_decode(buf + 1, n, &ev), 0);
    assert_int_equal(ev.kind, PROCMON_EXEC);
    /* an event kind we do not use decodes as "other", keeping its ids */
    uint32_t what = PROC_EVENT_SID;
    memcpy(buf + 1 + OFF_PE, &what, 4);
    assert_int_equal(procmon_decode(buf + 1, n, &ev), 0);
    assert_int_equal(ev.kind, PROCMON_OTHER);
    assert_int_equal(ev.what, PROC_EVENT_SID);
    assert_true(ev.tid > 0);
}

/* Live: needs root (CAP_NET_ADMIN). */
struct seen {
    pid_t child;
    bool fork, comm, exit;
};

static int on_event(const struct procmon_event *ev, void *userdata)
{
    struct seen *s = userdata;
    if (ev->tid != s->child)
        return 0;
    if (ev->kind == PROCMON_FORK)
        s->fork = true;
    if (ev->kind == PROCMON_COMM && strcmp(ev->comm.comm, "ts-live") == 0)
        s->comm = true;
    if (ev->kind == PROCMON_EXIT && ev->exit.code == (7 << 8))
        s->exit = true;
    return 0;
}

static void test_live(void **state)
{
    struct procmon *pm;
    int r = procmon_open(4 << 20, &pm);
    if (r == -EPERM || r == -EACCES || geteuid() != 0)
        skip();
    assert_int_equal(r, 0);
    assert_true(procmon_fd(pm) >= 0);

    struct seen s = {0};
    s.child = fork();
    assert_true(s.child >= 0);
    if (s.child == 0) {
        prctl(PR_SET_NAME, "ts-live");
        /* a gid change: an event the filter excludes */
        if (setresgid(65534, 65534, 65534) < 0)
            _exit(1);
        _exit(7);
    }
    uint64_t deadline = now_ms() + 10000;
    while (!(s.fork && s.comm && s.exit) && now_ms() < deadline) {
        struct pollfd p = {.fd = procmon_fd(pm), .events = POLLIN};
        if (poll(&p, 1, 100) > 0)
            assert_true(procmon_dispatch(pm, on_event, &s) >= 0);
    }
    waitpid(s.child, NULL, 0);
    assert_true(s.fork);
    assert_true(s.comm);
    assert_true(s.exit);
    const struct procmon_counters *c = procmon_counters(pm);
    assert_true(c->fork >= 1 && c->exit >= 1 && c->comm >= 1);
    assert_int_equal(c->malformed, 0);
    if (procmon_filtered(pm))
        /* the kernel applied the filter: no gid/sid/ptrace... events at all */
        assert_int_equal(c->other, 0);
    procmon_free(pm);
}

struct kinds {
    pid_t child;
    unsigned n[PROCMON_KINDS];
};

static int count_kinds(const struct procmon_event *ev, void *userdata)
{
    struct kinds *k = userdata;
    if (ev->tid == k->child && (unsigned)ev->kind < PROCMON_KINDS)
        k->n[ev->kind]++;
    return 0;
}

/* The exec-only socket (the daemon's doorbell): a child that renames
 * itself, execs and exits brings its exec and nothing else, where the
 * kernel filters; elsewhere it does not open. */
static void test_live_exec_only(void **state)
{
    struct procmon *pm;
    int r = procmon_open_exec(1 << 20, &pm);
    if (r == -EPERM || r == -EACCES || geteuid() != 0)
        skip();
    if (r == -EOPNOTSUPP) {
        print_message("skipped: this kernel does not filter proc connector events (before 6.6)\n");
        skip();
    }
    assert_int_equal(r, 0);
    struct kinds k = {0};
    k.child = fork();
    assert_true(k.child >= 0);
    if (k.child == 0) {
        prctl(PR_SET_NAME, "ts-exec-only");
        execl("/bin/true", "true", (char *)NULL);
        _exit(127);
    }
    int status;
    assert_int_equal(waitpid(k.child, &status, 0), k.child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* the exit event was sent before waitpid returned: wait for the exec */
    uint64_t deadline = now_ms() + 10000;
    while (k.n[PROCMON_EXEC] == 0 && now_ms() < deadline) {
        struct pollfd p = {.fd = procmon_fd(pm), .events = POLLIN};
        if (poll(&p, 1, 100) > 0)
            assert_true(procmon_dispatch(pm, count_kinds, &k) >= 0);
    }
    (void)procmon_dispatch(pm, count_kinds, &k);
    assert_int_equal(k.n[PROCMON_EXEC], 1);
    assert_int_equal(k.n[PROCMON_FORK], 0);
    assert_int_equal(k.n[PROCMON_COMM], 0);
    assert_int_equal(k.n[PROCMON_EXIT], 0);
    procmon_free(pm);
}

static int count_only(const struct procmon_event *ev, void *userdata)
{
    (*(unsigned *)userdata)++;
    return 0;
}

/* A receive buffer far too small for a burst of forks: the kernel drops
 * events, dispatch says -ENOBUFS once and counts the overflow, and what is
 * queued after it is still delivered. */
static void test_live_overflow(void **state)
{
    struct procmon *pm;
    int r = procmon_open(0, &pm);
    if (r == -EPERM || r == -EACCES || geteuid() != 0)
        skip();
    assert_int_equal(r, 0);
    assert_true(procmon_set_rcvbuf(pm, 1) > 0); /* the kernel rounds up to its minimum */
    unsigned handled = 0;
    uint64_t deadline = now_ms() + 20000;
    while (procmon_counters(pm)->overflows == 0 && now_ms() < deadline) {
        for (int i = 0; i < 100; i++) {
            pid_t pid = fork();
            if (pid == 0)
                _exit(0);
            if (pid > 0)
                waitpid(pid, NULL, 0);
        }
        r = procmon_dispatch(pm, count_only, &handled);
        if (r < 0)
            assert_int_equal(r, -ENOBUFS);
    }
    assert_true(procmon_counters(pm)->overflows >= 1);
    /* events queued around the overflow were still delivered */
    for (int i = 0; i < 50 && (r = procmon_dispatch(pm, count_only, &handled)) == -ENOBUFS; i++)
        ;
    assert_true(handled > 0);
    assert_int_equal(procmon_counters(pm)->malformed, 0);
    procmon_free(pm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decode_captured),
        cmocka_unit_test(test_decode_thread),
        cmocka_unit_test(test_every_truncation_rejected),
        cmocka_unit_test(test_short_event_rejected),
        cmocka_unit_test(test_wrong_headers_rejected),
        cmocka_unit_test(test_comm_without_nul),
        cmocka_unit_test(test_unknown_and_unaligned),
        cmocka_unit_test(test_live),
        cmocka_unit_test(test_live_overflow),
        cmocka_unit_test(test_live_exec_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
