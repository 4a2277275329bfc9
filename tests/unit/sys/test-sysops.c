/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The real syscall layer (sysops_real) on the test's own process and
 * threads only: its mask set within what it has and put back, its
 * scheduling attributes read (and changed only on a thread of its own that
 * then ends), its /proc figures against what libc says, and -ESRCH for a
 * task that does not exist. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sysops.h"

/* A gone TID: above the largest pid_max there is (2^22). */
#define TID_GONE 0x3fffffff

static const struct sysops *ops = &sysops_real;

static pid_t self_tid(void) { return (pid_t)syscall(SYS_gettid); }

static bool subset(const cpu_set_t *a, const cpu_set_t *b)
{
    cpu_set_t both;
    CPU_AND(&both, a, b);
    return CPU_EQUAL(&both, a);
}

/* Our mask narrowed to one of its CPUs, the thread runs there, and the
 * mask is put back as it was. */
static void test_affinity_self(void **state)
{
    (void)state;
    pid_t tid = self_tid();
    cpu_set_t orig, one, now;
    assert_int_equal(ops->getaffinity(NULL, tid, &orig), 0);
    assert_true(CPU_COUNT(&orig) > 0);
    cpu_set_t libc;
    assert_int_equal(sched_getaffinity(0, sizeof libc, &libc), 0);
    assert_true(CPU_EQUAL(&orig, &libc));
    int cpu = -1;
    for (int i = CPU_SETSIZE - 1; i >= 0 && cpu < 0; i--)
        if (CPU_ISSET(i, &orig))
            cpu = i; /* the last: not the one we start on, often */
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    assert_int_equal(ops->setaffinity(NULL, tid, &one), 0);
    assert_int_equal(ops->getaffinity(NULL, tid, &now), 0);
    assert_true(CPU_EQUAL(&now, &one));
    assert_int_equal(sched_getcpu(), cpu);
    assert_int_equal(ops->setaffinity(NULL, tid, &orig), 0);
    assert_int_equal(ops->getaffinity(NULL, tid, &now), 0);
    assert_true(CPU_EQUAL(&now, &orig));
    /* an empty mask is refused and changes nothing */
    CPU_ZERO(&one);
    assert_int_equal(ops->setaffinity(NULL, tid, &one), -EINVAL);
    assert_int_equal(ops->getaffinity(NULL, tid, &now), 0);
    assert_true(CPU_EQUAL(&now, &orig));
}

/* The mask the kernel keeps holds the one getaffinity reports; both lie
 * within the online CPUs' superset, and the online list is not empty. */
static void test_full_mask_and_online(void **state)
{
    (void)state;
    cpu_set_t mask, full, online;
    assert_int_equal(ops->getaffinity(NULL, self_tid(), &mask), 0);
    assert_int_equal(ops->getaffinity_full(NULL, self_tid(), &full), 0);
    assert_true(subset(&mask, &full));
    assert_int_equal(ops->online_cpus(NULL, &online), 0);
    assert_true(CPU_COUNT(&online) > 0);
    assert_true(subset(&mask, &online));
}

/* Our attributes as sched_getattr reports them: the policy and nice libc
 * reports, no real-time priority for a normal policy. */
static void test_getattr_self(void **state)
{
    (void)state;
    struct sysops_sched_attr a;
    assert_int_equal(ops->getattr(NULL, self_tid(), &a), 0);
    int policy = sched_getscheduler(0);
    assert_true(policy >= 0);
    assert_int_equal(a.policy, (uint32_t)(policy & ~SCHED_RESET_ON_FORK));
    errno = 0;
    int nice = getpriority(PRIO_PROCESS, (id_t)self_tid());
    assert_int_equal(errno, 0);
    if (a.policy == SCHED_OTHER || a.policy == SCHED_BATCH || a.policy == SCHED_IDLE) {
        assert_int_equal(a.nice, nice);
        assert_int_equal(a.priority, 0);
    }
    struct sysops_sched_attr again;
    assert_int_equal(ops->getattr(NULL, 0, &again), 0); /* 0: the caller */
    assert_int_equal(again.policy, a.policy);
    assert_int_equal(again.nice, a.nice);
    assert_int_equal(again.runtime_ns, a.runtime_ns);
}

struct nicer {
    int nice; /* what the thread's nice was */
    int set, get;
    struct sysops_sched_attr after;
    int libc_nice;
};

/* A thread of ours makes itself nicer by one (allowed without privilege)
 * and reads itself back; it ends, and the change with it. */
static void *be_nicer(void *arg)
{
    struct nicer *n = arg;
    struct sysops_sched_attr a;
    if ((n->get = ops->getattr(NULL, self_tid(), &a)) < 0)
        return NULL;
    n->nice = a.nice;
    a.nice = a.nice < 19 ? a.nice + 1 : 19;
    n->set = ops->setattr(NULL, self_tid(), &a);
    n->get = ops->getattr(NULL, self_tid(), &n->after);
    n->libc_nice = getpriority(PRIO_PROCESS, (id_t)self_tid());
    return NULL;
}

static void test_setattr_own_thread(void **state)
{
    (void)state;
    struct nicer n = {0};
    struct sysops_sched_attr before, after;
    assert_int_equal(ops->getattr(NULL, self_tid(), &before), 0);
    if (before.policy != SCHED_OTHER)
        skip(); /* run under another policy: a nice value means nothing there */
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, be_nicer, &n), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(n.set, 0);
    assert_int_equal(n.get, 0);
    int want = n.nice < 19 ? n.nice + 1 : 19;
    assert_int_equal(n.after.nice, want);
    assert_int_equal(n.libc_nice, want);
    assert_int_equal(n.after.policy, SCHED_OTHER);
    /* this thread is as it was */
    assert_int_equal(ops->getattr(NULL, self_tid(), &after), 0);
    assert_int_equal(after.nice, before.nice);
}

/* /proc figures of our own process against what libc and the kernel say. */
static void test_proc_self(void **state)
{
    (void)state;
    pid_t ppid;
    assert_int_equal(ops->parent_of(NULL, getpid(), &ppid), 0);
    assert_int_equal(ppid, getppid());
    uint64_t start, again;
    assert_int_equal(ops->task_start_time(NULL, getpid(), &start), 0);
    assert_true(start > 0 || getpid() == 1);
    assert_int_equal(ops->task_start_time(NULL, getpid(), &again), 0);
    assert_int_equal(start, again);
    char id[64];
    assert_int_equal(ops->boot_id(NULL, id, sizeof id), 0);
    assert_int_equal(strlen(id), 36); /* a UUID, its newline cut */
    assert_int_equal(id[8], '-');
    assert_int_equal(id[23], '-');
}

struct waiter {
    int fd;
    pid_t tid;
    pthread_mutex_t lock;
    pthread_cond_t cond;
};

static void *wait_on_pipe(void *arg)
{
    struct waiter *w = arg;
    pthread_mutex_lock(&w->lock);
    w->tid = self_tid();
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
    char c;
    while (read(w->fd, &c, 1) < 0 && errno == EINTR)
        ;
    return NULL;
}

/* Our threads, a second one among them; a child of ours among our
 * children, found while it waits and gone once it has exited. */
static void test_threads_and_children(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    struct waiter w = {.fd = fds[0], .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, wait_on_pipe, &w), 0);
    pthread_mutex_lock(&w.lock);
    while (!w.tid)
        pthread_cond_wait(&w.cond, &w.lock);
    pthread_mutex_unlock(&w.lock);
    pid_t tids[64];
    int n = ops->threads_of(NULL, getpid(), tids, 64);
    assert_true(n >= 2 && n <= 64);
    bool me = false, other = false;
    for (int i = 0; i < n; i++) {
        me |= tids[i] == self_tid();
        other |= tids[i] == w.tid;
    }
    assert_true(me);
    assert_true(other);
    assert_int_equal(ops->threads_of(NULL, getpid(), tids, 1), n); /* more than fit: all counted */

    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        char c;
        close(fds[1]);
        while (read(fds[0], &c, 1) < 0 && errno == EINTR)
            ;
        _exit(0);
    }
    pid_t kids[16];
    n = ops->children_of(NULL, self_tid(), kids, 16);
    assert_int_equal(n, 1);
    assert_int_equal(kids[0], child);
    pid_t parent;
    assert_int_equal(ops->parent_of(NULL, child, &parent), 0);
    assert_int_equal(parent, getpid());
    close(fds[1]); /* the child and the thread read EOF and end */
    assert_int_equal(waitpid(child, NULL, 0), child);
    assert_int_equal(pthread_join(th, NULL), 0);
    close(fds[0]);
    assert_int_equal(ops->children_of(NULL, self_tid(), kids, 16), 0);
}

/* Every per-task operation says -ESRCH for a task that does not exist. */
static void test_gone(void **state)
{
    (void)state;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(0, &set);
    struct sysops_sched_attr a = {0};
    uint64_t u;
    pid_t p, buf[4];
    assert_int_equal(ops->getaffinity(NULL, TID_GONE, &set), -ESRCH);
    assert_int_equal(ops->getaffinity_full(NULL, TID_GONE, &set), -ESRCH);
    assert_int_equal(ops->setaffinity(NULL, TID_GONE, &set), -ESRCH);
    assert_int_equal(ops->getattr(NULL, TID_GONE, &a), -ESRCH);
    assert_int_equal(ops->setattr(NULL, TID_GONE, &a), -ESRCH);
    assert_int_equal(ops->task_start_time(NULL, TID_GONE, &u), -ESRCH);
    assert_int_equal(ops->parent_of(NULL, TID_GONE, &p), -ESRCH);
    assert_int_equal(ops->threads_of(NULL, TID_GONE, buf, 4), -ESRCH);
    assert_int_equal(ops->children_of(NULL, TID_GONE, buf, 4), -ESRCH);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_affinity_self), cmocka_unit_test(test_full_mask_and_online),
        cmocka_unit_test(test_getattr_self),  cmocka_unit_test(test_setattr_own_thread),
        cmocka_unit_test(test_proc_self),     cmocka_unit_test(test_threads_and_children),
        cmocka_unit_test(test_gone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
