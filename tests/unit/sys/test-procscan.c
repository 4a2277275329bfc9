/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fd-limit.h"
#include "procscan.h"
#include "util.h"

#define SMALL TS_FIXTURES "/proc-small"

/* ---- reading ---- */

static void test_read_task(void **state)
{
    struct task t;
    assert_int_equal(procscan_read_task(SMALL, 100, 100, &t), 0);
    assert_int_equal(t.tid, 100);
    assert_int_equal(t.pid, 100);
    assert_string_equal(t.comm, "my prog (v2)");
    assert_int_equal(t.start_time, 1000);
    assert_int_equal(t.uid, 1000);
    assert_int_equal(t.rule, -1);
    assert_int_equal(t.class, CLASS_UNSET);

    assert_int_equal(procscan_read_task(SMALL, 100, 101, &t), 0);
    assert_int_equal(t.tid, 101);
    assert_int_equal(t.pid, 100);
    assert_string_equal(t.comm, "worker) 1 (x");
    assert_int_equal(t.start_time, 1001);

    /* the effective uid counts */
    assert_int_equal(procscan_read_task(SMALL, 300, 300, &t), 0);
    assert_int_equal(t.uid, 0);

    /* a zombie has sent its exit event: gone */
    assert_int_equal(procscan_read_task(SMALL, 200, 200, &t), -ESRCH);
    assert_true(errno_is_gone(procscan_read_task(SMALL, 100, 999, &t)));
    assert_true(errno_is_gone(procscan_read_task(SMALL, 999, 999, &t)));
    /* a TID under the wrong process */
    assert_true(errno_is_gone(procscan_read_task(SMALL, 1, 101, &t)));

    pid_t tgid = 0;
    assert_int_equal(procscan_tgid_of(SMALL, 101, &tgid), 0);
    assert_int_equal(tgid, 100);
    assert_int_equal(procscan_tgid_of(SMALL, 100, &tgid), 0);
    assert_int_equal(tgid, 100);
    assert_true(errno_is_gone(procscan_tgid_of(SMALL, 999, &tgid)));
}

static void test_parse_stat(void **state)
{
    struct task t = {0};
    char st = 0;
    assert_int_equal(
        procscan_parse_stat("7 ((sd-pam)) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 424242 1 2\n", &t, &st), 0);
    assert_int_equal(t.tid, 7);
    assert_string_equal(t.comm, "(sd-pam)");
    assert_int_equal(t.start_time, 424242);
    assert_int_equal(st, 'S');
    assert_false(t.flags & TASK_F_KTHREAD);
    /* field 9, the kernel's flags: PF_KTHREAD (0x200000) marks a kernel thread */
    assert_int_equal(procscan_parse_stat("2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 9\n", &t, &st), 0);
    assert_true(t.flags & TASK_F_KTHREAD);
    assert_int_equal(procscan_parse_stat("7 (a) S 1 2 3 4 5 4194560 7 8 9 10 11 12 13 14 15 16 17 18 9\n", &t, &st), 0);
    assert_false(t.flags & TASK_F_KTHREAD);
    /* starttime as the last field */
    assert_int_equal(procscan_parse_stat("7 (a b) R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 99", &t, &st), 0);
    assert_int_equal(t.start_time, 99);
    assert_string_equal(t.comm, "a b");
    /* a comm longer than the kernel's 15 bytes is cut, not overflowed */
    assert_int_equal(
        procscan_parse_stat("7 (0123456789abcdefghij) R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 99", &t, &st), 0);
    assert_string_equal(t.comm, "0123456789abcde");

    static const char *const bad[] = {
        "",
        "7 (x",                                                  /* no ')' */
        "7 x) R 1",                                              /* no '(' */
        "(x) R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 99", /* no tid */
        "-7 (x) R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 99",
        "7 (x) R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18", /* short */
        "7 (x) R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 ",
        "7 (x) R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 9x9 1",
        "7 (x)R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 99",
        "7 (x) ",
        "7x (x) R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 99",
    };
    for (size_t i = 0; i < ELEMENTSOF(bad); i++)
        if (procscan_parse_stat(bad[i], &t, &st) != -EBADMSG)
            fail_msg("accepted \"%s\"", bad[i]);

    uid_t uid = 1;
    assert_int_equal(procscan_parse_status_uid("Name:\tx\nUid:\t5\t6\t7\t8\n", &uid), 0);
    assert_int_equal(uid, 6);
    assert_int_equal(procscan_parse_status_uid("Name:\tx\nGid:\t5\t6\t7\t8\n", &uid), -EBADMSG);
    assert_int_equal(procscan_parse_status_uid("Uid:\t5\n", &uid), -EBADMSG);
}

struct collected {
    unsigned n;
    pid_t pid[32], tid[32];
};

static int collect(pid_t pid, pid_t tid, void *userdata)
{
    struct collected *c = userdata;
    assert_true(c->n < 32);
    c->pid[c->n] = pid;
    c->tid[c->n] = tid;
    c->n++;
    return 0;
}

static bool has(const struct collected *c, pid_t pid, pid_t tid)
{
    for (unsigned i = 0; i < c->n; i++)
        if (c->pid[i] == pid && c->tid[i] == tid)
            return true;
    return false;
}

static int stop_at_second(pid_t pid, pid_t tid, void *userdata) { return ++*(int *)userdata == 2 ? -ECANCELED : 0; }

static void test_walk(void **state)
{
    struct collected c = {0};
    unsigned unlisted = 0;
    /* self, 123abc, stat and the task-less (gone) 400 and 101 are skipped */
    assert_int_equal(procscan_all(SMALL, collect, &c, &unlisted), 6);
    assert_int_equal(unlisted, 0);
    assert_int_equal(c.n, 6);
    assert_true(has(&c, 1, 1));
    assert_true(has(&c, 100, 100));
    assert_true(has(&c, 100, 101));
    assert_true(has(&c, 100, 102));
    assert_true(has(&c, 200, 200));
    assert_true(has(&c, 300, 300));
    int calls = 0;
    assert_int_equal(procscan_all(SMALL, stop_at_second, &calls, NULL), -ECANCELED);
    assert_int_equal(calls, 2);
    assert_true(errno_is_gone(procscan_all(TS_FIXTURES "/no-such-tree", collect, &c, NULL)));
}

/* ---- a mutable tree for reconcile and events ---- */

struct tree {
    char root[1024];
};

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "we");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void mk_task(struct tree *tr, pid_t pid, pid_t tid, const char *comm, char state, uint64_t start, int euid,
                    bool with_status)
{
    char path[PATH_MAX], text[1024];
    snprintf(path, sizeof path, "%s/proc/%d/task/%d", tr->root, pid, tid);
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", path);
    assert_int_equal(system(cmd), 0);
    snprintf(path, sizeof path, "%s/proc/%d/task/%d/stat", tr->root, pid, tid);
    snprintf(text, sizeof text, "%d (%s) %c 1 %d %d 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %llu 1 2 3\n", tid, comm, state,
             pid, pid, (unsigned long long)start);
    write_text(path, text);
    snprintf(path, sizeof path, "%s/proc/%d/task/%d/status", tr->root, pid, tid);
    if (with_status) {
        snprintf(text, sizeof text, "Name:\t%s\nTgid:\t%d\nPid:\t%d\nUid:\t%d\t%d\t%d\t%d\n", comm, pid, tid, euid,
                 euid, euid, euid);
        write_text(path, text);
    } else {
        unlink(path);
    }
}

static void rm_task(struct tree *tr, pid_t pid, pid_t tid)
{
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/proc/%d/task/%d'", tr->root, pid, tid);
    assert_int_equal(system(cmd), 0);
}

static int tree_setup(void **state)
{
    struct tree *tr = calloc(1, sizeof(*tr));
    snprintf(tr->root, sizeof tr->root, "%s/procscan-XXXXXX", TS_BUILD_DIR);
    if (!mkdtemp(tr->root))
        return -1;
    *state = tr;
    return 0;
}

static int tree_teardown(void **state)
{
    struct tree *tr = *state;
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tr->root);
    int r = system(cmd);
    free(tr);
    return r == 0 ? 0 : -1;
}

struct rec {
    struct task_table *tt;
    unsigned n_new, n_changed, n_gone;
    pid_t last_new, last_changed, last_gone;
    enum procscan_change last_what;
    uint64_t last_gone_start;
    bool gone_was_tracked; /* task_gone runs before removal */
    int new_ret;
    unsigned n_fresh; /* hooks that found TASK_F_START_FRESH */
};

static int on_new(struct task *t, void *ud)
{
    struct rec *r = ud;
    r->n_new++;
    r->n_fresh += (t->flags & TASK_F_START_FRESH) != 0;
    r->last_new = t->tid;
    assert_ptr_equal(task_table_find(r->tt, t->tid), t);
    return r->new_ret;
}

static int on_changed(struct task *t, enum procscan_change what, void *ud)
{
    struct rec *r = ud;
    r->n_changed++;
    r->n_fresh += (t->flags & TASK_F_START_FRESH) != 0;
    r->last_what = what;
    r->last_changed = t->tid;
    return 0;
}

static void on_gone(struct task *t, void *ud)
{
    struct rec *r = ud;
    r->n_gone++;
    r->last_gone = t->tid;
    r->last_gone_start = t->start_time;
    r->gone_was_tracked = task_table_find(r->tt, t->tid) == t;
}

#define HOOKS(rec) \
    { \
        .task_new = on_new, .task_changed = on_changed, .task_gone = on_gone, .userdata = &(rec) \
    }

/* A table for max_tasks (tt), its recorder (rec) and the hooks that feed
 * it (h). */
#define TABLE_AND_HOOKS(max_tasks) \
    struct task_table *tt; \
    assert_int_equal(task_table_new((max_tasks), &tt), 0); \
    struct rec rec = {.tt = tt}; \
    struct procscan_hooks h = HOOKS(rec)

/* A table, its recorder and lazy-start hooks (the daemon's), with "parent"
 * (PID 100, uid 1000) tracked by a rescan. */
#define LAZY_SETUP(tr) \
    TABLE_AND_HOOKS(100); \
    h.lazy_start = true; \
    mk_task((tr), 100, 100, "parent", 'S', 1000, 1000, true); \
    assert_int_equal(procscan_reconcile((tr)->root, tt, &h, NULL), 0)

static void test_reconcile(void **state)
{
    struct tree *tr = *state;
    struct procscan_stats st;
    TABLE_AND_HOOKS(100);

    mk_task(tr, 1, 1, "init", 'S', 5, 0, true);
    mk_task(tr, 100, 100, "srv (main)", 'S', 1000, 1000, true);
    mk_task(tr, 100, 101, "srv) w", 'R', 1001, 1000, true);
    mk_task(tr, 100, 102, "srv gc", 'S', 1002, 1000, true);
    mk_task(tr, 200, 200, "zombie", 'Z', 2000, 0, true);

    /* startup: everything live is added, the zombie is not */
    assert_int_equal(procscan_reconcile(tr->root, tt, &h, &st), 0);
    assert_int_equal(st.generation, 1);
    assert_int_equal(st.seen, 4);
    assert_int_equal(st.added, 4);
    assert_int_equal(st.removed, 0);
    assert_int_equal(rec.n_new, 4);
    assert_int_equal(task_table_count(tt), 4);
    assert_string_equal(task_table_find(tt, 101)->comm, "srv) w");
    assert_int_equal(task_table_find(tt, 101)->pid, 100);
    assert_int_equal(task_table_find(tt, 101)->uid, 1000);
    assert_null(task_table_find(tt, 200));

    /* nothing changed: nothing to do */
    rec = (struct rec){.tt = tt};
    assert_int_equal(procscan_reconcile(tr->root, tt, &h, &st), 0);
    assert_int_equal(st.generation, 2);
    assert_int_equal(st.added + st.removed + st.reused, 0);
    assert_int_equal(rec.n_new + rec.n_gone, 0);

    /* a thread gone, another new: removal through task_gone first */
    rm_task(tr, 100, 101);
    mk_task(tr, 100, 103, "srv w2", 'S', 1500, 1000, true);
    rec = (struct rec){.tt = tt};
    assert_int_equal(procscan_reconcile(tr->root, tt, &h, &st), 0);
    assert_int_equal(st.added, 1);
    assert_int_equal(st.removed, 1);
    assert_int_equal(rec.n_gone, 1);
    assert_int_equal(rec.last_gone, 101);
    assert_true(rec.gone_was_tracked);
    assert_null(task_table_find(tt, 101));
    assert_int_equal(rec.last_new, 103);
    assert_non_null(task_table_find(tt, 103));

    /* TID reuse: same TID, another start time -> old gone, new added */
    mk_task(tr, 100, 102, "new one", 'S', 9999, 1000, true);
    rec = (struct rec){.tt = tt};
    assert_int_equal(procscan_reconcile(tr->root, tt, &h, &st), 0);
    assert_int_equal(st.reused, 1);
    assert_int_equal(st.added, 0);
    assert_int_equal(rec.n_gone, 1);
    assert_int_equal(rec.last_gone, 102);
    assert_int_equal(rec.last_gone_start, 1002);
    assert_int_equal(rec.n_new, 1);
    assert_int_equal(task_table_find(tt, 102)->start_time, 9999);
    assert_string_equal(task_table_find(tt, 102)->comm, "new one");

    /* TID reused by another process */
    rm_task(tr, 100, 103);
    mk_task(tr, 300, 103, "other", 'S', 1500, 0, true);
    rec = (struct rec){.tt = tt};
    assert_int_equal(procscan_reconcile(tr->root, tt, &h, &st), 0);
    assert_int_equal(st.reused, 1);
    assert_int_equal(task_table_find(tt, 103)->pid, 300);

    /* a whole process gone; the hooks see every thread of it */
    char cmd[PATH_MAX + 32];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/proc/100'", tr->root);
    assert_int_equal(system(cmd), 0);
    rec = (struct rec){.tt = tt};
    assert_int_equal(procscan_reconcile(tr->root, tt, &h, &st), 0);
    assert_int_equal(st.removed, 2);
    assert_int_equal(rec.n_gone, 2);
    assert_int_equal(task_table_count(tt), 2);
    assert_int_equal(task_table_generation(tt), 6);

    /* a rename whose comm event was lost (same task, same start time): the
     * rescan takes the new comm and says so, so that rules see it */
    mk_task(tr, 300, 103, "renamed", 'S', 1500, 0, true);
    rec = (struct rec){.tt = tt};
    assert_int_equal(procscan_reconcile(tr->root, tt, &h, &st), 0);
    assert_int_equal(st.added + st.removed + st.reused, 0);
    assert_int_equal(st.renamed, 1);
    assert_string_equal(task_table_find(tt, 103)->comm, "renamed");
    assert_int_equal(task_table_find(tt, 103)->start_time, 1500);
    assert_int_equal(rec.n_changed, 1);
    assert_int_equal(rec.last_changed, 103);
    assert_int_equal(rec.n_new + rec.n_gone, 0);
    assert_int_equal(task_table_generation(tt), 7);

    /* a failed walk removes nothing */
    assert_true(procscan_reconcile(TS_FIXTURES "/no-such-tree", tt, &h, &st) < 0);
    assert_int_equal(task_table_count(tt), 2);
    task_table_free(tt);
}

/* A thread whose stat cannot be read for a reason other than its exit (here
 * EISDIR; hidepid or a security module in life) is kept as it was, and so
 * are the threads of a process whose threads cannot be listed: neither is
 * tried again at each tick. Only a thread gone for real is removed. */
static void test_reconcile_unreadable(void **state)
{
    struct tree *tr = *state;
    LAZY_SETUP(tr);
    mk_task(tr, 100, 101, "worker", 'S', 1001, 1000, true);
    mk_task(tr, 300, 300, "other", 'S', 3000, 1000, true);
    struct procscan_stats st;
    assert_int_equal(procscan_reconcile(tr->root, tt, &h, &st), 0);
    assert_int_equal(task_table_count(tt), 3);
    assert_int_equal(st.unread + st.denied, 0);

    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/proc/100/task/101/stat", tr->root);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mkdir(path, 0755), 0); /* read(2) says EISDIR */
    rec = (struct rec){.tt = tt};
    assert_int_equal(procscan_reconcile(tr->root, tt, &h, &st), 0);
    assert_int_equal(st.unread, 0);
    assert_int_equal(st.denied, 1);
    assert_int_equal(st.removed, 0);
    assert_int_equal(rec.n_gone, 0);
    assert_non_null(task_table_find(tt, 101));
    rmdir(path);

    rm_task(tr, 100, 101); /* gone for real: removed */
    snprintf(path, sizeof path, "%s/proc/300/task", tr->root);
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    assert_int_equal(system(cmd), 0);
    write_text(path, "not a directory\n"); /* openat(O_DIRECTORY) says ENOTDIR */
    assert_int_equal(procscan_reconcile(tr->root, tt, &h, &st), 0);
    assert_int_equal(st.denied, 1);
    assert_int_equal(st.removed, 1); /* 101; 300 is kept */
    assert_non_null(task_table_find(tt, 300));
    assert_null(task_table_find(tt, 101));
    assert_int_equal(unlink(path), 0); /* 300 gone: no task/ */
    assert_int_equal(procscan_reconcile(tr->root, tt, &h, &st), 0);
    assert_int_equal(st.removed, 1);
    assert_int_equal(st.denied, 0);
    task_table_free(tt);
}

/* A process that exits between the listing of /proc and the opening of its
 * task directory is passed over wherever it falls in the listing, the last
 * entry included, and so is one whose threads may not be listed: the walk
 * succeeds and counts the latter. */
static void test_walk_last_gone(void **state)
{
    struct tree *tr = *state;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/proc", tr->root);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/proc/500", tr->root);
    assert_int_equal(mkdir(path, 0755), 0); /* listed, its task/ gone */
    struct collected c = {0};
    unsigned unlisted = 0;
    assert_int_equal(procscan_all(tr->root, collect, &c, &unlisted), 0);
    assert_int_equal(unlisted, 0);
    mk_task(tr, 100, 100, "worker", 'S', 1001, 1000, true);
    snprintf(path, sizeof path, "%s/proc/600", tr->root);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/proc/600/task", tr->root);
    write_text(path, "not a directory\n"); /* openat(O_DIRECTORY) says ENOTDIR */
    c = (struct collected){0};
    assert_int_equal(procscan_all(tr->root, collect, &c, &unlisted), 1);
    assert_true(has(&c, 100, 100));
    assert_int_equal(unlisted, 1);
}

/* Reconcile with only n descriptors to spare; the limit is back on return. */
static int reconcile_with_fds(struct tree *tr, struct task_table *tt, const struct procscan_hooks *h, int n,
                              struct procscan_stats *st)
{
    struct rlimit old;
    assert_int_equal(fd_limit_lower(n, &old), 0);
    int r = procscan_reconcile(tr->root, tt, h, st);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
    return r;
}

/* Out of descriptors: a walk that cannot open /proc fails and removes
 * nothing; one that cannot open a stat file keeps the tasks it knows and
 * says the walk wants repeating (unread). */
static void test_reconcile_out_of_fds(void **state)
{
    struct tree *tr = *state;
    LAZY_SETUP(tr);
    mk_task(tr, 100, 101, "worker", 'S', 1001, 1000, true);
    struct procscan_stats st;
    assert_int_equal(procscan_reconcile(tr->root, tt, &h, &st), 0);
    assert_int_equal(task_table_count(tt), 2);
    rm_task(tr, 100, 101);

    assert_int_equal(reconcile_with_fds(tr, tt, &h, 0, &st), -EMFILE);
    assert_int_equal(task_table_count(tt), 2);                   /* 101 not removed on a failed walk */
    assert_int_equal(reconcile_with_fds(tr, tt, &h, 2, &st), 0); /* /proc and 100/task: no stat */
    assert_int_equal(st.unread, 1);
    assert_int_equal(st.removed, 1); /* 101: not listed, gone */
    assert_non_null(task_table_find(tt, 100));
    assert_int_equal(procscan_reconcile(tr->root, tt, &h, &st), 0);
    assert_int_equal(st.unread, 0);
    assert_int_equal(st.seen, 1);
    task_table_free(tt);
}

static void test_reconcile_bound(void **state)
{
    struct tree *tr = *state;
    struct task_table *tt;
    struct procscan_stats st;
    assert_int_equal(task_table_new(2, &tt), 0);
    for (pid_t p = 10; p < 15; p++)
        mk_task(tr, p, p, "p", 'S', (uint64_t)p, 0, true);
    assert_int_equal(procscan_reconcile(tr->root, tt, NULL, &st), -ENOSPC);
    assert_int_equal(st.added, 2);
    assert_int_equal(st.failed, 3);
    assert_int_equal(task_table_count(tt), 2);
    task_table_free(tt);
}

static struct procmon_event ev_of(enum procmon_kind kind, pid_t tgid, pid_t tid)
{
    return (struct procmon_event){.kind = kind, .tgid = tgid, .tid = tid};
}

/* The fork of tid (in tgid) by thread `parent`, which leads its group. */
static struct procmon_event fork_of(pid_t tgid, pid_t tid, pid_t parent)
{
    struct procmon_event ev = ev_of(PROCMON_FORK, tgid, tid);
    ev.fork.parent_tid = ev.fork.parent_tgid = parent;
    return ev;
}

static void test_events(void **state)
{
    struct tree *tr = *state;
    TABLE_AND_HOOKS(100);
    struct procmon_event ev;

    mk_task(tr, 100, 100, "parent", 'S', 1000, 1000, true);
    assert_int_equal(procscan_reconcile(tr->root, tt, &h, NULL), 0);
    rec = (struct rec){.tt = tt};

    /* fork of a process: its stat is read once; the uid comes from the
     * tracked parent (no status file needed) */
    mk_task(tr, 500, 500, "parent", 'S', 5000, 0, false);
    ev = fork_of(500, 500, 100);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    struct task *t = task_table_find(tt, 500);
    assert_non_null(t);
    assert_int_equal(t->pid, 500);
    assert_int_equal(t->start_time, 5000);
    assert_int_equal(t->uid, 1000);
    assert_int_equal(rec.n_new, 1);

    /* a new thread: the event names the process's parent, the uid comes
     * from its own thread group */
    mk_task(tr, 500, 501, "parent", 'S', 5001, 0, false);
    t->uid = 4242;
    ev = fork_of(500, 501, 100);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    assert_int_equal(task_table_find(tt, 501)->pid, 500);
    assert_int_equal(task_table_find(tt, 501)->uid, 4242);

    /* an untracked parent: the uid is read from status */
    mk_task(tr, 600, 600, "orphan", 'S', 6000, 77, true);
    ev = fork_of(600, 600, 999);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    assert_int_equal(task_table_find(tt, 600)->uid, 77);

    /* a child already gone when its fork event is handled: not an error */
    rec = (struct rec){.tt = tt};
    ev = fork_of(700, 700, 100);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    assert_null(task_table_find(tt, 700));
    assert_int_equal(rec.n_new, 0);

    /* a fork event for a task a rescan already found: nothing happens */
    ev = ev_of(PROCMON_FORK, 500, 500);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    assert_int_equal(rec.n_new + rec.n_gone, 0);

    /* comm: taken from the event, no file read (the files are gone) */
    rm_task(tr, 500, 501);
    ev = ev_of(PROCMON_COMM, 500, 501);
    strcpy(ev.comm.comm, "renamed (1)");
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    assert_string_equal(task_table_find(tt, 501)->comm, "renamed (1)");
    assert_int_equal(rec.n_changed, 1);
    assert_int_equal(rec.last_changed, 501);
    assert_int_equal(rec.last_what, PROCSCAN_COMM);

    /* exec: comm and uid re-read */
    mk_task(tr, 500, 500, "sh", 'S', 5000, 33, true);
    ev = ev_of(PROCMON_EXEC, 500, 500);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    assert_string_equal(task_table_find(tt, 500)->comm, "sh");
    assert_int_equal(task_table_find(tt, 500)->uid, 33);
    assert_int_equal(rec.n_changed, 2);
    assert_int_equal(rec.last_what, PROCSCAN_EXEC);

    /* uid */
    ev = ev_of(PROCMON_UID, 500, 500);
    ev.uid.ruid = 1;
    ev.uid.euid = 2;
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    assert_int_equal(task_table_find(tt, 500)->uid, 2);
    assert_int_equal(rec.n_changed, 3);
    assert_int_equal(rec.last_what, PROCSCAN_UID);

    /* exit of a thread, then of the process: task_gone before removal */
    ev = ev_of(PROCMON_EXIT, 500, 501);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    assert_int_equal(rec.last_gone, 501);
    assert_true(rec.gone_was_tracked);
    assert_null(task_table_find(tt, 501));
    ev = ev_of(PROCMON_EXIT, 500, 500);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    assert_null(task_table_find(tt, 500));
    assert_int_equal(rec.n_gone, 2);
    /* exit of something untracked */
    ev = ev_of(PROCMON_EXIT, 12345, 12345);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    assert_int_equal(rec.n_gone, 2);

    /* an event for a task we never saw adds it */
    mk_task(tr, 800, 800, "late", 'S', 8000, 5, true);
    ev = ev_of(PROCMON_COMM, 800, 800);
    strcpy(ev.comm.comm, "late");
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    assert_non_null(task_table_find(tt, 800));

    /* fork onto a tracked TID with another start time: a reuse */
    rec = (struct rec){.tt = tt};
    mk_task(tr, 800, 800, "late2", 'S', 8888, 5, true);
    ev = fork_of(800, 800, 100);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    assert_int_equal(rec.n_gone, 1);
    assert_int_equal(rec.last_gone_start, 8000);
    assert_int_equal(task_table_find(tt, 800)->start_time, 8888);

    /* other kinds and acks change nothing */
    unsigned n = task_table_count(tt);
    ev = ev_of(PROCMON_OTHER, 800, 800);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    ev = ev_of(PROCMON_ACK, 0, 0);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    assert_int_equal(task_table_count(tt), n);
    task_table_free(tt);
}

/* exec from a non-leader thread: the kernel gives it the leader's TID and
 * its own TID disappears without an exit event. */
static void test_exec_from_thread(void **state)
{
    struct tree *tr = *state;
    TABLE_AND_HOOKS(100);
    struct procmon_event ev;

    mk_task(tr, 900, 900, "mt", 'S', 9000, 0, true);
    mk_task(tr, 900, 901, "mt", 'S', 9001, 0, true);
    mk_task(tr, 900, 902, "mt", 'S', 9002, 0, true);
    mk_task(tr, 50, 50, "bystander", 'S', 50, 0, true);
    assert_int_equal(procscan_reconcile(tr->root, tt, &h, NULL), 0);
    assert_int_equal(task_table_count(tt), 4);

    /* thread 902 execs: the leader and 901 exit (events), 902 becomes 900 */
    rm_task(tr, 900, 901);
    rm_task(tr, 900, 902);
    mk_task(tr, 900, 900, "newprog", 'S', 9002, 0, true);
    rec = (struct rec){.tt = tt};
    ev = ev_of(PROCMON_EXIT, 900, 901);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    ev = ev_of(PROCMON_EXIT, 900, 900);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    ev = ev_of(PROCMON_EXEC, 900, 900);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    assert_null(task_table_find(tt, 902));
    assert_string_equal(task_table_find(tt, 900)->comm, "newprog");
    assert_non_null(task_table_find(tt, 50));
    assert_int_equal(task_table_count(tt), 2);
    assert_int_equal(rec.n_gone, 3);
    task_table_free(tt);
}

/* A kernel thread is known by its stat's flags when read, and by its
 * creator's until it execs: the sampler asks without reading /proc (a read
 * of a thread's stat waits while its process is in the middle of an exec). */
static void test_kernel_thread_flag(void **state)
{
    struct tree *tr = *state;
    LAZY_SETUP(tr);
    mk_task(tr, 2, 2, "kthreadd", 'S', 10, 0, true);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/proc/2/task/2/stat", tr->root);
    write_text(path, "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 10 1 2 3\n");
    assert_int_equal(procscan_reconcile(tr->root, tt, &h, NULL), 0);
    assert_true(task_table_find(tt, 2)->flags & TASK_F_KTHREAD);
    assert_false(task_table_find(tt, 100)->flags & TASK_F_KTHREAD);

    struct procmon_event ev = fork_of(300, 300, 2);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    struct task *t = task_table_find(tt, 300);
    assert_non_null(t);
    assert_true(t->start_pending); /* nothing was read */
    assert_true(t->flags & TASK_F_KTHREAD);
    ev = fork_of(301, 301, 100);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    assert_false(task_table_find(tt, 301)->flags & TASK_F_KTHREAD);

    /* a usermode helper: a kernel thread that execs a program is one no more */
    mk_task(tr, 300, 300, "modprobe", 'R', 3000, 0, true);
    ev = ev_of(PROCMON_EXEC, 300, 300);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    t = task_table_find(tt, 300);
    assert_non_null(t);
    assert_false(t->flags & TASK_F_KTHREAD);
    task_table_free(tt);
}

/* TASK_F_START_FRESH: set while the hooks run for an event whose handling
 * read the task's stat (exec, a fork read at once), never for a rescan or
 * a fork taken from its creator, and cleared when they return. */
static void test_start_fresh(void **state)
{
    struct tree *tr = *state;
    LAZY_SETUP(tr);
    assert_int_equal(rec.n_new, 1);
    assert_int_equal(rec.n_fresh, 0);

    /* exec of a tracked task */
    struct procmon_event ev = ev_of(PROCMON_EXEC, 100, 100);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    assert_int_equal(rec.n_changed, 1);
    assert_int_equal(rec.n_fresh, 1);
    assert_false(task_table_find(tt, 100)->flags & TASK_F_START_FRESH);
    /* exec of one not tracked yet */
    mk_task(tr, 200, 200, "other", 'R', 2000, 1000, true);
    ev = ev_of(PROCMON_EXEC, 200, 200);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    assert_int_equal(rec.n_new, 2);
    assert_int_equal(rec.n_fresh, 2);
    assert_false(task_table_find(tt, 200)->flags & TASK_F_START_FRESH);
    /* a fork taken from its creator: nothing read, nothing fresh */
    ev = fork_of(300, 300, 100);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    assert_int_equal(rec.n_new, 3);
    assert_int_equal(rec.n_fresh, 2);
    task_table_free(tt);
}

/* The daemon's fork path (lazy_start): a new process whose forking thread is
 * tracked is added without reading /proc; its start time is read when
 * something is about to act on it, by exec, or by a rescan. */
static void test_lazy_start(void **state)
{
    struct tree *tr = *state;
    LAZY_SETUP(tr);
    struct procmon_event ev;
    rec = (struct rec){.tt = tt};

    /* no file for the child at all: nothing is read; comm and uid come
     * from the forking thread */
    ev = fork_of(500, 500, 100);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    struct task *t = task_table_find(tt, 500);
    assert_non_null(t);
    assert_true(t->start_pending);
    assert_int_equal(t->pid, 500);
    assert_string_equal(t->comm, "parent");
    assert_int_equal(t->uid, 1000);
    assert_int_equal(rec.n_new, 1);
    /* ... and an exit before anyone looked costs nothing more */
    ev = ev_of(PROCMON_EXIT, 500, 500);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    assert_null(task_table_find(tt, 500));
    assert_int_equal(rec.n_gone, 1);

    /* ensure_start reads it when needed, once */
    ev = fork_of(501, 501, 100);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    t = task_table_find(tt, 501);
    assert_true(t->start_pending);
    assert_true(errno_is_gone(procscan_ensure_start(tr->root, t))); /* not in /proc yet */
    assert_true(t->start_pending);
    mk_task(tr, 501, 501, "parent", 'S', 5010, 1000, false);
    assert_int_equal(procscan_ensure_start(tr->root, t), 0);
    assert_false(t->start_pending);
    assert_int_equal(t->start_time, 5010);
    rm_task(tr, 501, 501);
    assert_int_equal(procscan_ensure_start(tr->root, t), 0); /* known: no read */
    assert_int_equal(t->start_time, 5010);

    /* exec takes the start time with the new comm */
    ev = fork_of(502, 502, 100);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    mk_task(tr, 502, 502, "sh", 'S', 5020, 1000, true);
    rec = (struct rec){.tt = tt};
    ev = ev_of(PROCMON_EXEC, 502, 502);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    t = task_table_find(tt, 502);
    assert_false(t->start_pending);
    assert_int_equal(t->start_time, 5020);
    assert_string_equal(t->comm, "sh");
    assert_int_equal(rec.n_changed, 1);
    assert_int_equal(rec.n_gone + rec.n_new, 0);

    /* a second fork of a pending TID: the first task exited unseen */
    ev = fork_of(503, 503, 100);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    rec = (struct rec){.tt = tt};
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    assert_int_equal(rec.n_gone, 1);
    assert_int_equal(rec.n_new, 1);
    assert_true(task_table_find(tt, 503)->start_pending);

    /* not lazy: a new thread (its creator is not named), and a process
     * whose forking thread is not tracked */
    mk_task(tr, 100, 101, "worker", 'S', 1010, 1000, false);
    ev = fork_of(100, 101, 1);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    assert_false(task_table_find(tt, 101)->start_pending);
    assert_string_equal(task_table_find(tt, 101)->comm, "worker");
    mk_task(tr, 600, 600, "orphan", 'S', 6000, 77, true);
    ev = fork_of(600, 600, 999);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    assert_false(task_table_find(tt, 600)->start_pending);
    assert_int_equal(task_table_find(tt, 600)->start_time, 6000);

    /* a rescan resolves every pending task: the same thread group and comm
     * keep it (start time taken), anything else replaces it */
    ev = fork_of(504, 504, 100);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    ev = fork_of(505, 505, 100);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    mk_task(tr, 503, 503, "parent", 'S', 5030, 1000, true);
    mk_task(tr, 504, 504, "parent", 'S', 5040, 1000, true);
    mk_task(tr, 505, 505, "other", 'S', 5050, 1000, true);
    rec = (struct rec){.tt = tt};
    struct procscan_stats st;
    assert_int_equal(procscan_reconcile(tr->root, tt, &h, &st), 0);
    for (pid_t tid = 503; tid <= 505; tid++)
        assert_false(task_table_find(tt, tid)->start_pending);
    assert_int_equal(task_table_find(tt, 504)->start_time, 5040);
    assert_string_equal(task_table_find(tt, 505)->comm, "other");
    assert_int_equal(task_table_find(tt, 505)->start_time, 5050);
    assert_int_equal(st.reused, 1);
    assert_int_equal(rec.n_gone, 1 + 1); /* 505 replaced; 501 (files removed) gone */
    assert_int_equal(rec.n_new, 1);
    task_table_free(tt);
}

static uint64_t clock_now_ns(clockid_t id)
{
    struct timespec ts;
    assert_int_equal(clock_gettime(id, &ts), 0);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* PID reuse before the daemon acts: under a flood of events the fork of a
 * child is handled after the child exited and its PID went to another
 * process (that one's own fork event is further down the queue). Whatever
 * reads the TID then must not take the newcomer for the child: not when its
 * start is read lazily, nor on a fork handled late, nor in a rescan after
 * lost events, even when the newcomer has the child's name. */
static void test_pid_reused_before_read(void **state)
{
    struct tree *tr = *state;
    TABLE_AND_HOOKS(100);
    h.lazy_start = true;
    struct procmon_event ev;
    long hz = sysconf(_SC_CLK_TCK);
    uint64_t ns_per_tick = 1000000000u / (uint64_t)hz;
    uint64_t fork_ns = clock_now_ns(CLOCK_MONOTONIC);
    uint64_t child_start = clock_now_ns(CLOCK_BOOTTIME) / ns_per_tick; /* at the fork */
    uint64_t later_start = child_start + (uint64_t)hz / 5;             /* 200 ms on */
    assert_true(procscan_started_by_fork(child_start, fork_ns));
    assert_false(procscan_started_by_fork(later_start, fork_ns));

    mk_task(tr, 100, 100, "jit", 'S', 1000, 1000, true);
    assert_int_equal(procscan_reconcile(tr->root, tt, &h, NULL), 0);

    /* lazy: the start time is read when the task is acted upon */
    ev = fork_of(700, 700, 100);
    ev.timestamp_ns = fork_ns;
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    struct task *t = task_table_find(tt, 700);
    assert_true(t->start_pending);
    mk_task(tr, 700, 700, "jit", 'S', later_start, 2000, true); /* same name, someone else's */
    assert_int_equal(procscan_ensure_start(tr->root, t), -ESRCH);
    assert_true(t->start_pending);
    /* the child it was: taken */
    mk_task(tr, 700, 700, "jit", 'S', child_start, 1000, true);
    assert_int_equal(procscan_ensure_start(tr->root, t), 0);
    assert_int_equal(t->start_time, child_start);

    /* not lazy (the creator is not tracked): the fork handled late adds
     * nothing in the child's place */
    rec = (struct rec){.tt = tt};
    mk_task(tr, 701, 701, "jit", 'S', later_start, 2000, true);
    ev = fork_of(701, 701, 999);
    ev.timestamp_ns = fork_ns;
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    assert_null(task_table_find(tt, 701));
    assert_int_equal(rec.n_new, 0);
    /* ...and when the newcomer's own fork event comes, it is added */
    ev.timestamp_ns = clock_now_ns(CLOCK_MONOTONIC) + 1000000000u;
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    assert_non_null(task_table_find(tt, 701));

    /* exec of a pending TID by a newcomer: replaced, not taken over */
    ev = fork_of(702, 702, 100);
    ev.timestamp_ns = fork_ns;
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    mk_task(tr, 702, 702, "jit", 'S', later_start, 2000, true);
    rec = (struct rec){.tt = tt};
    ev = ev_of(PROCMON_EXEC, 702, 702);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    assert_int_equal(rec.n_gone, 1);
    assert_int_equal(rec.n_new, 1);
    assert_int_equal(task_table_find(tt, 702)->uid, 2000);

    /* a rescan after lost events: same thread group, same name, started
     * after the fork: another task */
    ev = fork_of(703, 703, 100);
    ev.timestamp_ns = fork_ns;
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    mk_task(tr, 703, 703, "jit", 'S', later_start, 2000, true);
    rec = (struct rec){.tt = tt};
    struct procscan_stats st;
    assert_int_equal(procscan_reconcile(tr->root, tt, &h, &st), 0);
    assert_int_equal(st.reused, 1);
    assert_int_equal(rec.last_gone, 703);
    assert_int_equal(task_table_find(tt, 703)->start_time, later_start);
    assert_int_equal(task_table_find(tt, 703)->uid, 2000);
    task_table_free(tt);
}

/* A rename flood: one user's threads all renamed since the last rescan
 * (their comm events lost). One rescan reclassifies at most
 * PROCSCAN_RENAMES_PER_USER of them and leaves the rest, still with their
 * old comm, for the next; another user's rename is handled at once. */
static void test_rename_flood_bounded(void **state)
{
    struct tree *tr = *state;
    const unsigned n = PROCSCAN_RENAMES_PER_USER + 40;
    TABLE_AND_HOOKS(1000);
    for (unsigned i = 0; i < n; i++)
        mk_task(tr, 800, 800 + (pid_t)i, "flood", 'S', 8000 + i, 1000, true);
    mk_task(tr, 2000, 2000, "other", 'S', 9000, 2000, true);
    assert_int_equal(procscan_reconcile(tr->root, tt, &h, NULL), 0);
    assert_int_equal(task_table_count(tt), n + 1);

    for (unsigned i = 0; i < n; i++)
        mk_task(tr, 800, 800 + (pid_t)i, "flood2", 'S', 8000 + i, 1000, true);
    mk_task(tr, 2000, 2000, "other2", 'S', 9000, 2000, true);
    rec = (struct rec){.tt = tt};
    struct procscan_stats st;
    assert_int_equal(procscan_reconcile(tr->root, tt, &h, &st), 0);
    assert_int_equal(st.renamed, PROCSCAN_RENAMES_PER_USER + 1);
    assert_int_equal(st.renames_deferred, n - PROCSCAN_RENAMES_PER_USER);
    assert_int_equal(rec.n_changed, PROCSCAN_RENAMES_PER_USER + 1);
    assert_string_equal(task_table_find(tt, 2000)->comm, "other2");
    assert_int_equal(rec.n_gone, 0);

    /* the rest at the next rescan */
    rec = (struct rec){.tt = tt};
    assert_int_equal(procscan_reconcile(tr->root, tt, &h, &st), 0);
    assert_int_equal(st.renamed, n - PROCSCAN_RENAMES_PER_USER);
    assert_int_equal(st.renames_deferred, 0);
    for (unsigned i = 0; i < n; i++)
        assert_string_equal(task_table_find(tt, 800 + (pid_t)i)->comm, "flood2");
    task_table_free(tt);
}

/* New threads of one user beyond PROCSCAN_THREAD_READS_PER_USER in a
 * window are added from their fork events alone (their process's comm and
 * uid, start pending), not read; another user's are still read, and so
 * are the first user's in the next window. Before the bound, 20,000 light
 * threads of one user were 20,000 reads of /proc at realtime priority. */
static void test_thread_reads_bounded(void **state)
{
    struct tree *tr = *state;
    const unsigned n = PROCSCAN_THREAD_READS_PER_USER + 40;
    TABLE_AND_HOOKS(1000);
    struct procscan_thread_budget b = {0};
    h.thread_reads = &b;
    mk_task(tr, 800, 800, "leader", 'S', 8000, 1000, true);
    mk_task(tr, 2000, 2000, "other", 'S', 9000, 2000, true);
    assert_int_equal(procscan_reconcile(tr->root, tt, &h, NULL), 0);
    for (unsigned i = 1; i <= n + 1; i++)
        mk_task(tr, 800, 800 + (pid_t)i, "worker", 'S', 8000 + i, 1000, true);
    mk_task(tr, 2000, 2001, "helper", 'S', 9001, 2000, true);
    procscan_thread_budget_roll(&b, 1000, 250);
    rec = (struct rec){.tt = tt};
    for (unsigned i = 1; i <= n; i++) {
        struct procmon_event ev = ev_of(PROCMON_FORK, 800, 800 + (pid_t)i);
        assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    }
    struct procmon_event ev = ev_of(PROCMON_FORK, 2000, 2001);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    assert_int_equal(rec.n_new, n + 1);
    unsigned read = 0, deferred = 0;
    for (unsigned i = 1; i <= n; i++) {
        struct task *t = task_table_find(tt, 800 + (pid_t)i);
        assert_non_null(t);
        assert_int_equal(t->uid, 1000);
        if (strcmp(t->comm, "worker") == 0) {
            read++;
            assert_false(t->start_pending);
        } else {
            deferred++;
            assert_string_equal(t->comm, "leader");
            assert_true(t->start_pending);
            assert_int_equal(procscan_ensure_start(tr->root, t), 0); /* read when acted upon */
            assert_int_equal(t->start_time, 8000 + i);
        }
    }
    assert_int_equal(read, PROCSCAN_THREAD_READS_PER_USER);
    assert_int_equal(deferred, n - PROCSCAN_THREAD_READS_PER_USER);
    assert_int_equal(b.deferred, deferred);
    assert_string_equal(task_table_find(tt, 2001)->comm, "helper"); /* another user: read */
    /* a window on: read again */
    procscan_thread_budget_roll(&b, 1100, 250);
    ev = ev_of(PROCMON_FORK, 800, 800 + (pid_t)n + 1);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    assert_string_equal(task_table_find(tt, 800 + (pid_t)n + 1)->comm, "leader");
    procscan_thread_budget_roll(&b, 1250, 250);
    struct procmon_event exit_ev = ev_of(PROCMON_EXIT, 800, 800 + (pid_t)n + 1);
    assert_int_equal(procscan_handle_event(tr->root, tt, &exit_ev, &h), 0);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    assert_string_equal(task_table_find(tt, 800 + (pid_t)n + 1)->comm, "worker");
    task_table_free(tt);
}

/* lazy_uid (the daemon while no rule names a user): exec, a rescan and the
 * fork of a process whose creator is not tracked read no status (the
 * fixtures here have none) and leave the uid unknown; a uid event and a
 * tracked creator still give it. */
static void test_lazy_uid(void **state)
{
    struct tree *tr = *state;
    TABLE_AND_HOOKS(100);
    h.lazy_start = true;
    h.lazy_uid = true;
    struct procmon_event ev;

    mk_task(tr, 700, 700, "svc", 'S', 7000, 1000, false);
    assert_int_equal(procscan_reconcile(tr->root, tt, &h, NULL), 0);
    struct task *t = task_table_find(tt, 700);
    assert_non_null(t);
    assert_int_equal(t->uid, TASK_UID_UNKNOWN);

    ev = ev_of(PROCMON_UID, 700, 700);
    ev.uid.euid = 33;
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    assert_int_equal(t->uid, 33);

    ev = fork_of(701, 701, 700); /* tracked creator */
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    assert_int_equal(task_table_find(tt, 701)->uid, 33);

    mk_task(tr, 700, 700, "svc2", 'S', 7000, 1000, false);
    rec.n_changed = 0;
    ev = ev_of(PROCMON_EXEC, 700, 700); /* a set-user-ID binary may run */
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    assert_string_equal(t->comm, "svc2");
    assert_int_equal(t->uid, TASK_UID_UNKNOWN);
    assert_int_equal(rec.n_changed, 1);

    mk_task(tr, 800, 800, "orphan", 'S', 8000, 1000, false);
    ev = fork_of(800, 800, 999); /* creator not tracked */
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    assert_int_equal(task_table_find(tt, 800)->start_time, 8000);
    assert_int_equal(task_table_find(tt, 800)->uid, TASK_UID_UNKNOWN);

    /* not lazy: the status is read, and without one the task is not kept */
    h.lazy_uid = false;
    mk_task(tr, 801, 801, "orphan", 'S', 8010, 1000, false);
    ev = fork_of(801, 801, 999);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    assert_null(task_table_find(tt, 801));
    mk_task(tr, 802, 802, "orphan", 'S', 8020, 1000, true);
    ev = fork_of(802, 802, 999);
    assert_int_equal(procscan_handle_event(tr->root, tt, &ev, &h), 0);
    assert_int_equal(task_table_find(tt, 802)->uid, 1000);
    task_table_free(tt);
}

/* The real /proc through the cached directory fd and the hand-built path. */
static void test_live_self(void **state)
{
    struct task a, b;
    pid_t pid = getpid(), tid = gettid();
    assert_int_equal(procscan_read_task("/", pid, tid, &a), 0);
    assert_int_equal(procscan_read_task(NULL, pid, tid, &b), 0);
    assert_int_equal(a.tid, tid);
    assert_int_equal(a.pid, pid);
    assert_true(a.start_time > 0 || pid < 10);
    assert_int_equal(a.start_time, b.start_time);
    assert_int_equal(a.uid, geteuid());
    char comm[32] = "";
    FILE *f = fopen("/proc/self/comm", "r");
    assert_non_null(f);
    assert_non_null(fgets(comm, sizeof comm, f));
    fclose(f);
    comm[strcspn(comm, "\n")] = '\0';
    assert_string_equal(a.comm, comm);
    struct task t = {.tid = tid, .pid = pid, .start_pending = true};
    assert_int_equal(procscan_ensure_start(NULL, &t), 0);
    assert_int_equal(t.start_time, a.start_time);
    /* a TID under another process is not there */
    assert_true(errno_is_gone(procscan_read_task("/", 1, tid, &a)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_task),
        cmocka_unit_test(test_parse_stat),
        cmocka_unit_test(test_walk),
        cmocka_unit_test_setup_teardown(test_reconcile, tree_setup, tree_teardown),
        cmocka_unit_test_setup_teardown(test_reconcile_unreadable, tree_setup, tree_teardown),
        cmocka_unit_test_setup_teardown(test_walk_last_gone, tree_setup, tree_teardown),
        cmocka_unit_test_setup_teardown(test_reconcile_out_of_fds, tree_setup, tree_teardown),
        cmocka_unit_test_setup_teardown(test_reconcile_bound, tree_setup, tree_teardown),
        cmocka_unit_test_setup_teardown(test_events, tree_setup, tree_teardown),
        cmocka_unit_test_setup_teardown(test_lazy_start, tree_setup, tree_teardown),
        cmocka_unit_test_setup_teardown(test_thread_reads_bounded, tree_setup, tree_teardown),
        cmocka_unit_test_setup_teardown(test_kernel_thread_flag, tree_setup, tree_teardown),
        cmocka_unit_test_setup_teardown(test_start_fresh, tree_setup, tree_teardown),
        cmocka_unit_test_setup_teardown(test_pid_reused_before_read, tree_setup, tree_teardown),
        cmocka_unit_test_setup_teardown(test_rename_flood_bounded, tree_setup, tree_teardown),
        cmocka_unit_test_setup_teardown(test_lazy_uid, tree_setup, tree_teardown),
        cmocka_unit_test(test_live_self),
        cmocka_unit_test_setup_teardown(test_exec_from_thread, tree_setup, tree_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
