/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The applier against a recorder: a fake kernel of a few tasks, cpuset
 * groups and systemd units that counts every call. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apply.h"
#include "log.h"
#include "state.h"
#include "sysops.h"
#include "util.h"

/* --- the recorder ------------------------------------------------------------------ */

struct fake_task {
    pid_t tid;
    pid_t pid;    /* thread group; 0: the task leads its own */
    pid_t parent; /* the thread that created this process */
    uint64_t start_time;
    cpu_set_t mask;
    bool alive;
    int set_err; /* setaffinity fails with this (-EPERM...) */
    char cpuset[64];
    struct sysops_sched_attr attr; /* runtime_ns: the slice, as sched_getattr reads it */
    cpu_set_t mask_at_setattr;     /* its mask when its attributes were last set */
};

struct fake_group {
    char name[64];
    char cpus[64];
    char mems[64];
    bool exists;
};

struct fake_unit {
    char name[64];
    uint8_t bits[16];
    size_t n;
};

struct recorder {
    struct fake_task tasks[80];
    size_t n_tasks;
    struct fake_group groups[8];
    size_t n_groups;
    struct fake_unit units[4];
    size_t n_units;
    unsigned n_get, n_set, n_start_time, n_cpuset_writes, n_unit_sets, n_setattr;
    /* SetUnitProperties: 1 = times out but systemd applies it later,
     * 2 = times out and nothing happens */
    int unit_set_timeout;
    char boot_id[40];
    cpu_set_t online; /* /sys/devices/system/cpu/online */
    /* The CPUs the scheduler may use: getaffinity reports masks intersected
     * with them. A CPU on its way down leaves them before it leaves online. */
    cpu_set_t active;
    bool active_differs; /* else active = online */
};

/* The kernel's base slice as sched_getattr reports it for a task without
 * a custom one (1.4 ms on a 2-CPU machine). */
#define FAKE_DEFAULT_SLICE 1400000ull

static const cpu_set_t *active_of(const struct recorder *r) { return r->active_differs ? &r->active : &r->online; }

static struct fake_task *rec_task(struct recorder *r, pid_t tid)
{
    for (size_t i = 0; i < r->n_tasks; i++)
        if (r->tasks[i].tid == tid && r->tasks[i].alive)
            return &r->tasks[i];
    return NULL;
}

static struct fake_task *add_task(struct recorder *r, pid_t tid, const char *cpus)
{
    struct fake_task *t = &r->tasks[r->n_tasks++];
    *t = (struct fake_task){.tid = tid,
                            .start_time = 1000 + (uint64_t)tid,
                            .alive = true,
                            .attr = {.policy = SCHED_OTHER, .runtime_ns = FAKE_DEFAULT_SLICE}};
    assert_int_equal(cpulist_parse(cpus, &t->mask), 0);
    strcpy(t->cpuset, "/");
    return t;
}

static struct fake_group *rec_group(struct recorder *r, const char *name)
{
    for (size_t i = 0; i < r->n_groups; i++)
        if (r->groups[i].exists && strcmp(r->groups[i].name, name) == 0)
            return &r->groups[i];
    return NULL;
}

static struct fake_group *add_group(struct recorder *r, const char *name, const char *cpus, const char *mems)
{
    struct fake_group *g = &r->groups[r->n_groups++];
    *g = (struct fake_group){.exists = true};
    snprintf(g->name, sizeof g->name, "%s", name);
    snprintf(g->cpus, sizeof g->cpus, "%s", cpus);
    snprintf(g->mems, sizeof g->mems, "%s", mems);
    return g;
}

static struct fake_unit *rec_unit(struct recorder *r, const char *name)
{
    for (size_t i = 0; i < r->n_units; i++)
        if (strcmp(r->units[i].name, name) == 0)
            return &r->units[i];
    return NULL;
}

static int f_getaffinity(void *ud, pid_t tid, cpu_set_t *ret)
{
    struct recorder *r = ud;
    r->n_get++;
    struct fake_task *t = rec_task(r, tid);
    if (!t)
        return -ESRCH;
    CPU_AND(ret, &t->mask, active_of(r));
    return 0;
}

static int f_parent_of(void *ud, pid_t tid, pid_t *ret)
{
    struct fake_task *t = rec_task(ud, tid);
    if (!t)
        return -ESRCH;
    *ret = t->parent ? t->parent : 1;
    return 0;
}

/* /proc/TID/status: the mask the kernel keeps, offline CPUs and all */
static int f_getaffinity_full(void *ud, pid_t tid, cpu_set_t *ret)
{
    struct recorder *r = ud;
    r->n_get++;
    struct fake_task *t = rec_task(r, tid);
    if (!t)
        return -ESRCH;
    *ret = t->mask;
    return 0;
}

static int f_online_cpus(void *ud, cpu_set_t *ret)
{
    struct recorder *r = ud;
    *ret = r->online;
    return 0;
}

static int f_threads_of(void *ud, pid_t pid, pid_t *buf, size_t max)
{
    struct recorder *r = ud;
    size_t n = 0;
    for (size_t i = 0; i < r->n_tasks; i++) {
        const struct fake_task *t = &r->tasks[i];
        if (t->alive && (t->pid ? t->pid : t->tid) == pid && n++ < max)
            buf[n - 1] = t->tid;
    }
    return n ? (int)n : -ESRCH;
}

static int f_children_of(void *ud, pid_t tid, pid_t *buf, size_t max)
{
    struct recorder *r = ud;
    size_t n = 0;
    for (size_t i = 0; i < r->n_tasks; i++) {
        const struct fake_task *t = &r->tasks[i];
        if (t->alive && t->parent == tid && (!t->pid || t->pid == t->tid) && n++ < max)
            buf[n - 1] = t->tid;
    }
    return (int)n;
}

static int f_setaffinity(void *ud, pid_t tid, const cpu_set_t *mask)
{
    struct recorder *r = ud;
    r->n_set++;
    struct fake_task *t = rec_task(r, tid);
    if (!t)
        return -ESRCH;
    if (t->set_err)
        return t->set_err;
    cpu_set_t usable;
    CPU_AND(&usable, mask, active_of(r));
    if (CPU_COUNT(&usable) == 0)
        return -EINVAL; /* as the kernel: no CPU it could run on */
    t->mask = *mask;    /* kept as given, offline CPUs included */
    return 0;
}

static int f_task_start_time(void *ud, pid_t tid, uint64_t *ret)
{
    struct recorder *r = ud;
    r->n_start_time++;
    struct fake_task *t = rec_task(r, tid);
    if (!t)
        return -ESRCH;
    *ret = t->start_time;
    return 0;
}

static int f_boot_id(void *ud, char *buf, size_t size)
{
    struct recorder *r = ud;
    snprintf(buf, size, "%s", r->boot_id);
    return 0;
}

static int f_cpuset_task_path(void *ud, pid_t tid, char *buf, size_t size)
{
    struct fake_task *t = rec_task(ud, tid);
    if (!t)
        return -ESRCH;
    snprintf(buf, size, "%s", t->cpuset);
    return 0;
}

static int f_cpuset_read(void *ud, const char *group, const char *key, char *buf, size_t size)
{
    struct fake_group *g = rec_group(ud, group);
    if (!g)
        return -ENOENT;
    snprintf(buf, size, "%s", strcmp(key, "cpuset.cpus") == 0 ? g->cpus : g->mems);
    return 0;
}

static int f_cpuset_create(void *ud, const char *group, const char *cpus, const char *mems)
{
    struct recorder *r = ud;
    r->n_cpuset_writes++;
    assert_non_null(mems);
    assert_true(mems[0] != '\0'); /* a cpuset without mems cannot hold tasks */
    struct fake_group *g = rec_group(r, group);
    if (!g)
        g = add_group(r, group, cpus, mems);
    snprintf(g->cpus, sizeof g->cpus, "%s", cpus);
    snprintf(g->mems, sizeof g->mems, "%s", mems);
    return 0;
}

static int f_cpuset_write(void *ud, const char *group, const char *key, const char *value)
{
    struct recorder *r = ud;
    r->n_cpuset_writes++;
    struct fake_group *g = rec_group(r, group);
    if (!g)
        return -ENOENT;
    assert_string_equal(key, "cpuset.cpus");
    snprintf(g->cpus, sizeof g->cpus, "%s", value);
    return 0;
}

static int f_cpuset_attach(void *ud, const char *group, pid_t tid)
{
    struct recorder *r = ud;
    r->n_cpuset_writes++;
    if (!rec_group(r, group))
        return -ENOENT;
    struct fake_task *t = rec_task(r, tid);
    if (!t)
        return -ESRCH;
    snprintf(t->cpuset, sizeof t->cpuset, "%s", group);
    return 0;
}

static int f_cpuset_delete(void *ud, const char *group)
{
    struct recorder *r = ud;
    r->n_cpuset_writes++;
    struct fake_group *g = rec_group(r, group);
    if (!g)
        return -ENOENT;
    /* as the kernel side of libcgroup: leftovers go to the parent */
    for (size_t i = 0; i < r->n_tasks; i++)
        if (strcmp(r->tasks[i].cpuset, group) == 0)
            strcpy(r->tasks[i].cpuset, "/");
    g->exists = false;
    return 0;
}

static int f_unit_get(void *ud, const char *unit, uint8_t *buf, size_t size)
{
    struct fake_unit *u = rec_unit(ud, unit);
    if (!u)
        return -ENOENT;
    memcpy(buf, u->bits, u->n);
    return (int)u->n;
}

static int f_unit_set(void *ud, const char *unit, const uint8_t *bits, size_t n)
{
    struct recorder *r = ud;
    r->n_unit_sets++;
    struct fake_unit *u = rec_unit(r, unit);
    if (!u)
        return -ENOENT;
    assert_true(n <= sizeof u->bits);
    if (r->unit_set_timeout == 2)
        return -ETIMEDOUT;
    memcpy(u->bits, bits, n);
    u->n = n;
    return r->unit_set_timeout ? -ETIMEDOUT : 0;
}

static int f_getattr(void *ud, pid_t tid, struct sysops_sched_attr *ret)
{
    struct fake_task *t = rec_task(ud, tid);
    if (!t)
        return -ESRCH;
    *ret = t->attr;
    return 0;
}

/* As the kernel: runtime 0 is the base slice, others are clamped to
 * 0.1..100 ms. */
static int f_setattr(void *ud, pid_t tid, const struct sysops_sched_attr *attr)
{
    struct recorder *r = ud;
    r->n_setattr++;
    struct fake_task *t = rec_task(r, tid);
    if (!t)
        return -ESRCH;
    t->mask_at_setattr = t->mask;
    t->attr = *attr;
    if (attr->runtime_ns == 0)
        t->attr.runtime_ns = FAKE_DEFAULT_SLICE;
    else if (attr->runtime_ns < 100000)
        t->attr.runtime_ns = 100000;
    return 0;
}

static struct sysops recorder_ops(struct recorder *r)
{
    return (struct sysops){
        .userdata = r,
        .getaffinity = f_getaffinity,
        .setaffinity = f_setaffinity,
        .task_start_time = f_task_start_time,
        .boot_id = f_boot_id,
        .online_cpus = f_online_cpus,
        .threads_of = f_threads_of,
        .children_of = f_children_of,
        .cpuset_task_path = f_cpuset_task_path,
        .cpuset_read = f_cpuset_read,
        .cpuset_create = f_cpuset_create,
        .cpuset_write = f_cpuset_write,
        .cpuset_attach = f_cpuset_attach,
        .cpuset_delete = f_cpuset_delete,
        .unit_get_allowed_cpus = f_unit_get,
        .unit_set_allowed_cpus = f_unit_set,
        .getaffinity_full = f_getaffinity_full,
        .parent_of = f_parent_of,
        .getattr = f_getattr,
        .setattr = f_setattr,
    };
}

/* --- captured log ------------------------------------------------------------------- */

static char logbuf[32768];
static unsigned n_warnings;

static void sink(int level, const char *msg, void *userdata)
{
    size_t n = strlen(logbuf);
    snprintf(logbuf + n, sizeof logbuf - n, "<%d>%s\n", level, msg);
    if (level <= LOG_WARNING)
        n_warnings++;
}

static bool logged(const char *s) { return strstr(logbuf, s) != NULL; }

/* --- fixture ------------------------------------------------------------------------ */

struct fx {
    struct recorder rec;
    struct sysops ops;
    struct applier *a;
    char dir[64];
    char state_file[128];
};

static int setup_mode(void **state, bool dry_run)
{
    struct fx *f = calloc(1, sizeof *f);
    assert_non_null(f);
    strcpy(f->rec.boot_id, "11111111-2222-3333-4444-555555555555");
    for (int cpu = 0; cpu < 64; cpu++)
        CPU_SET(cpu, &f->rec.online);
    f->ops = recorder_ops(&f->rec);
    strcpy(f->dir, "/tmp/test-apply.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->state_file, sizeof f->state_file, "%s/state", f->dir);
    assert_int_equal(applier_new(&f->ops, f->state_file, dry_run, &f->a), 0);
    logbuf[0] = '\0';
    n_warnings = 0;
    log_set_max_level(LOG_DEBUG);
    log_set_sink(sink, NULL);
    *state = f;
    return 0;
}

static int setup(void **state) { return setup_mode(state, false); }
static int setup_dry(void **state) { return setup_mode(state, true); }

static int teardown(void **state)
{
    struct fx *f = *state;
    applier_free(f->a);
    unlink(f->state_file);
    rmdir(f->dir);
    log_set_sink(NULL, NULL);
    free(f);
    return 0;
}

static struct task mk_task(const struct recorder *r, pid_t tid, pid_t pid, const char *comm)
{
    struct task t = {.tid = tid, .pid = pid, .start_time = 1000 + (uint64_t)tid};
    for (size_t i = 0; i < r->n_tasks; i++)
        if (r->tasks[i].tid == tid && r->tasks[i].alive)
            t.start_time = r->tasks[i].start_time;
    snprintf(t.comm, sizeof t.comm, "%s", comm);
    return t;
}

static cpu_set_t set_of(const char *cpus)
{
    cpu_set_t s;
    assert_int_equal(cpulist_parse(cpus, &s), 0);
    return s;
}

static void assert_mask(const cpu_set_t *m, const char *cpus)
{
    char buf[256];
    assert_int_equal(cpulist_format(m, buf, sizeof buf), 0);
    assert_string_equal(buf, cpus);
}

/* --- affinity ------------------------------------------------------------------------ */

static void test_pack_intersects_with_original(void **state)
{
    struct fx *f = *state;
    struct fake_task *ft = add_task(&f->rec, 100, "0-3");
    struct task t = mk_task(&f->rec, 100, 100, "kworkerish");
    cpu_set_t plan = set_of("0-1,5");

    assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);
    assert_mask(&ft->mask, "0-1");
    const struct applied_task *e = applier_find(f->a, 100);
    assert_non_null(e);
    assert_mask(&e->original, "0-3");
    assert_mask(&e->set, "0-1");
    assert_int_equal(e->start_time, t.start_time);
    assert_int_equal(applier_count(f->a), 1);

    /* same plan again: nothing to do, no syscall that changes anything */
    unsigned sets = f->rec.n_set;
    assert_int_equal(applier_pack_task(f->a, &t, &plan), 0);
    assert_int_equal(f->rec.n_set, sets);

    /* a new plan is intersected with the original, not with what we set */
    plan = set_of("1-2");
    assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);
    assert_mask(&ft->mask, "1-2");
    assert_mask(&applier_find(f->a, 100)->original, "0-3");

    /* a plan covering the original: no restriction left, back to the original */
    plan = set_of("0-7");
    assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);
    assert_mask(&ft->mask, "0-3");
    assert_null(applier_find(f->a, 100));
    assert_int_equal(n_warnings, 0);
}

static void test_empty_intersection_left_alone(void **state)
{
    struct fx *f = *state;
    struct fake_task *ft = add_task(&f->rec, 101, "2"); /* narrowed by its user */
    struct task t = mk_task(&f->rec, 101, 101, "pinned");
    cpu_set_t plan = set_of("0-1");

    assert_int_equal(applier_pack_task(f->a, &t, &plan), 0);
    assert_mask(&ft->mask, "2");
    assert_int_equal(f->rec.n_set, 0);
    assert_null(applier_find(f->a, 101));

    /* already within the plan: untouched and not recorded either */
    struct fake_task *ft2 = add_task(&f->rec, 102, "0");
    struct task t2 = mk_task(&f->rec, 102, 102, "inside");
    assert_int_equal(applier_pack_task(f->a, &t2, &plan), 0);
    assert_mask(&ft2->mask, "0");
    assert_int_equal(f->rec.n_set, 0);
}

static void test_packed_task_narrowed_out_of_plan_restored(void **state)
{
    struct fx *f = *state;
    struct fake_task *ft = add_task(&f->rec, 103, "0-1,3");
    struct task t = mk_task(&f->rec, 103, 103, "t");
    cpu_set_t plan = set_of("0");
    assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);
    /* the plan moves away from every CPU of its original: give it back */
    plan = set_of("2");
    assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);
    assert_mask(&ft->mask, "0-1,3");
    assert_null(applier_find(f->a, 103));
}

static void test_restore_exact_original(void **state)
{
    struct fx *f = *state;
    struct fake_task *ft = add_task(&f->rec, 110, "0,2-3,9");
    struct task t = mk_task(&f->rec, 110, 110, "odd");
    cpu_set_t plan = set_of("0");
    assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);
    assert_mask(&ft->mask, "0");

    assert_int_equal(applier_restore_task(f->a, 110), 1);
    assert_mask(&ft->mask, "0,2-3,9");
    assert_null(applier_find(f->a, 110));
    /* nothing left to restore */
    assert_int_equal(applier_restore_task(f->a, 110), 0);

    /* plan NULL (fallback: no restriction) restores as well */
    assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);
    assert_int_equal(applier_pack_task(f->a, &t, NULL), 1);
    assert_mask(&ft->mask, "0,2-3,9");
}

static void test_someone_else_changed_not_restored(void **state)
{
    struct fx *f = *state;
    struct fake_task *ft = add_task(&f->rec, 120, "0-3");
    struct task t = mk_task(&f->rec, 120, 120, "victim");
    cpu_set_t plan = set_of("0");
    assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);

    ft->mask = set_of("1"); /* taskset -p -c 1 */
    unsigned sets = f->rec.n_set;
    assert_int_equal(applier_restore_task(f->a, 120), 0);
    assert_mask(&ft->mask, "1");
    assert_int_equal(f->rec.n_set, sets);
    assert_null(applier_find(f->a, 120));
    assert_int_equal(applier_hands_off(f->a, 120), -EBUSY);
    assert_true(logged("pid 120 (victim): affinity changed to 1 by someone else"));

    /* and it is not packed again: it belongs to someone else now */
    ft->mask = set_of("0-3");
    assert_int_equal(applier_pack_task(f->a, &t, &plan), 0);
    assert_mask(&ft->mask, "0-3");
    assert_int_equal(f->rec.n_set, sets);

    /* on re-apply: the change is noticed before anything is written */
    struct fake_task *ft2 = add_task(&f->rec, 121, "0-3");
    struct task t2 = mk_task(&f->rec, 121, 121, "other");
    assert_int_equal(applier_pack_task(f->a, &t2, &plan), 1);
    ft2->mask = set_of("2-3");
    cpu_set_t plan2 = set_of("0,2");
    sets = f->rec.n_set;
    assert_int_equal(applier_pack_task(f->a, &t2, &plan2), 0);
    assert_int_equal(f->rec.n_set, sets);
    assert_mask(&ft2->mask, "2-3");
    assert_null(applier_find(f->a, 121));
}

/* Tasks that reset the masks the daemon set, at their owner's will, do not
 * fill the journal: the first LOG_RATELIMIT_BURST of those messages are
 * logged at their level, the rest at debug only. */
static void test_someone_else_logs_bounded(void **state)
{
    struct fx *f = *state;
    cpu_set_t plan = set_of("0");
    for (pid_t tid = 300; tid < 300 + 2 * (pid_t)LOG_RATELIMIT_BURST; tid++) {
        add_task(&f->rec, tid, "0-3");
        struct task t = mk_task(&f->rec, tid, tid, "w");
        assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);
        rec_task(&f->rec, tid)->mask = set_of("1");
        assert_int_equal(applier_restore_task(f->a, tid), 0);
        assert_int_equal(applier_hands_off(f->a, tid), -EBUSY);
    }
    unsigned at_info = 0, at_debug = 0;
    for (const char *line = logbuf; *line; line = strchr(line, '\n') + 1) {
        const char *end = strchr(line, '\n');
        const char *hit = strstr(line, "by someone else after we set");
        if (hit && hit < end) {
            at_info += strncmp(line, "<6>", 3) == 0;
            at_debug += strncmp(line, "<7>", 3) == 0;
        }
    }
    assert_int_equal(at_info, LOG_RATELIMIT_BURST);
    assert_true(at_debug == 0 || at_debug == LOG_RATELIMIT_BURST); /* as the test's level shows them */
}

static void test_verify_forgets_changed_tasks_bounded(void **state)
{
    struct fx *f = *state;
    cpu_set_t plan = set_of("0");
    for (pid_t tid = 200; tid < 210; tid++) {
        add_task(&f->rec, tid, "0-1");
        struct task t = mk_task(&f->rec, tid, tid, "w");
        assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);
    }
    rec_task(&f->rec, 203)->mask = set_of("1"); /* changed by someone else */
    rec_task(&f->rec, 207)->alive = false;      /* exited unseen */

    /* bounded: three checks cost three reads */
    unsigned gets = f->rec.n_get;
    int forgotten = 0;
    forgotten += applier_verify(f->a, 3);
    assert_int_equal(f->rec.n_get - gets, 3);
    /* round robin: enough bounded passes cover everything */
    for (int i = 0; i < 4; i++)
        forgotten += applier_verify(f->a, 3);
    assert_int_equal(forgotten, 2);
    assert_int_equal(applier_count(f->a), 8);
    assert_null(applier_find(f->a, 203));
    assert_null(applier_find(f->a, 207));
    assert_int_equal(applier_hands_off(f->a, 203), -EBUSY);

    /* a full pass finds nothing more */
    assert_int_equal(applier_verify(f->a, 0), 0);

    /* restore_all never writes over the changed one */
    unsigned sets = f->rec.n_set;
    assert_int_equal(applier_restore_all(f->a), 8);
    assert_int_equal(f->rec.n_set - sets, 8);
    assert_mask(&rec_task(&f->rec, 203)->mask, "1");
    assert_mask(&rec_task(&f->rec, 200)->mask, "0-1");
    assert_int_equal(applier_count(f->a), 0);
    /* restore_all (a reload) keeps a task someone else changed theirs */
    assert_int_equal(applier_hands_off(f->a, 203), -EBUSY);
    rec_task(&f->rec, 203)->mask = set_of("0-1"); /* the user widened it again */
    struct task t203 = mk_task(&f->rec, 203, 203, "w");
    assert_int_equal(applier_pack_task(f->a, &t203, &plan), 0);
    assert_mask(&rec_task(&f->rec, 203)->mask, "0-1");
    /* while the others are packed again */
    struct task t200 = mk_task(&f->rec, 200, 200, "w");
    assert_int_equal(applier_pack_task(f->a, &t200, &plan), 1);
}

static void test_esrch_forgets_quietly(void **state)
{
    struct fx *f = *state;
    struct fake_task *ft = add_task(&f->rec, 130, "0-3");
    struct task t = mk_task(&f->rec, 130, 130, "short");
    cpu_set_t plan = set_of("0");

    /* gone before we read its mask */
    ft->alive = false;
    assert_int_equal(applier_pack_task(f->a, &t, &plan), 0);
    assert_null(applier_find(f->a, 130));

    /* gone between pack and restore */
    ft->alive = true;
    assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);
    ft->alive = false;
    assert_int_equal(applier_restore_task(f->a, 130), 0);
    assert_null(applier_find(f->a, 130));
    assert_int_equal(applier_hands_off(f->a, 130), 0);
    assert_int_equal(n_warnings, 0);
    assert_false(logged("<4>"));
    assert_false(logged("<3>"));
}

static void test_eperm_logged_once_left_alone(void **state)
{
    struct fx *f = *state;
    struct fake_task *ft = add_task(&f->rec, 140, "0-3");
    ft->set_err = -EPERM;
    struct task t = mk_task(&f->rec, 140, 140, "guarded");
    cpu_set_t plan = set_of("0");

    assert_int_equal(applier_pack_task(f->a, &t, &plan), 0);
    assert_mask(&ft->mask, "0-3");
    assert_null(applier_find(f->a, 140));
    assert_int_equal(applier_hands_off(f->a, 140), -EPERM);
    assert_int_equal(n_warnings, 1);
    assert_true(logged("pid 140 (guarded): sched_setaffinity: Operation not permitted, leaving it alone"));

    unsigned sets = f->rec.n_set;
    for (int i = 0; i < 5; i++)
        assert_int_equal(applier_pack_task(f->a, &t, &plan), 0);
    assert_int_equal(f->rec.n_set, sets);
    assert_int_equal(n_warnings, 1);

    /* EINVAL likewise */
    struct fake_task *ft2 = add_task(&f->rec, 141, "0-3");
    ft2->set_err = -EINVAL;
    struct task t2 = mk_task(&f->rec, 141, 141, "odd");
    assert_int_equal(applier_pack_task(f->a, &t2, &plan), 0);
    assert_int_equal(applier_hands_off(f->a, 141), -EINVAL);

    /* the task exits: its TID may come back as another task, which is fair game */
    applier_forget_task(f->a, 140);
    assert_int_equal(applier_hands_off(f->a, 140), 0);
}

static void test_tid_reuse(void **state)
{
    struct fx *f = *state;
    struct fake_task *ft = add_task(&f->rec, 150, "0-3");
    struct task t = mk_task(&f->rec, 150, 150, "old");
    cpu_set_t plan = set_of("0");
    assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);

    /* the task exits unseen, a new one gets the TID with its own mask */
    ft->alive = false;
    struct fake_task *nt = add_task(&f->rec, 150, "0");
    nt->start_time = 99999;
    unsigned sets = f->rec.n_set;
    assert_int_equal(applier_restore_task(f->a, 150), 0);
    assert_int_equal(f->rec.n_set, sets);
    assert_mask(&nt->mask, "0");
    assert_null(applier_find(f->a, 150));

    /* packing the new task reads its own original */
    nt->mask = set_of("0-1");
    struct task t2 = mk_task(&f->rec, 150, 150, "new");
    assert_int_equal(t2.start_time, 99999);
    assert_int_equal(applier_pack_task(f->a, &t2, &plan), 1);
    assert_mask(&applier_find(f->a, 150)->original, "0-1");
}

static void test_inherited_threads(void **state)
{
    struct fx *f = *state;
    add_task(&f->rec, 160, "0-3");
    struct task t = mk_task(&f->rec, 160, 160, "parent");
    cpu_set_t plan = set_of("1");
    assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);

    /* a new thread inherits the packed mask from the kernel */
    struct fake_task *child = add_task(&f->rec, 161, "1");
    assert_int_equal(applier_adopt_inherited(f->a, 161, 160, child->start_time, 160), 1);
    const struct applied_task *e = applier_find(f->a, 161);
    assert_non_null(e);
    assert_mask(&e->original, "0-3");
    assert_mask(&e->set, "1");
    assert_int_equal(e->pid, 160);
    assert_int_equal(applier_restore_task(f->a, 161), 1);
    assert_mask(&child->mask, "0-3");

    /* a child whose mask is not what we set on its parent is not ours */
    struct fake_task *other = add_task(&f->rec, 162, "2");
    assert_int_equal(applier_adopt_inherited(f->a, 162, 160, other->start_time, 160), 0);
    assert_null(applier_find(f->a, 162));
    /* a thread we were never told about, carrying the mask we set on its
     * thread group leader: packing it takes over the leader's original */
    struct fake_task *unseen = add_task(&f->rec, 164, "1");
    struct task tu = mk_task(&f->rec, 164, 160, "parent");
    unsigned sets = f->rec.n_set;
    assert_int_equal(applier_pack_task(f->a, &tu, &plan), 0); /* already where the plan wants it */
    assert_int_equal(f->rec.n_set, sets);
    assert_non_null(e = applier_find(f->a, 164));
    assert_mask(&e->original, "0-3");
    cpu_set_t wider = set_of("1-2");
    assert_int_equal(applier_pack_task(f->a, &tu, &wider), 1);
    assert_mask(&unseen->mask, "1-2");
    assert_int_equal(applier_restore_task(f->a, 164), 1);
    assert_mask(&unseen->mask, "0-3");
    /* another unseen thread, and a plan that no longer restricts anything:
     * it gets the leader's original although we never recorded it */
    struct fake_task *unseen2 = add_task(&f->rec, 165, "1");
    struct task tu2 = mk_task(&f->rec, 165, 160, "parent");
    cpu_set_t all = set_of("0-7");
    assert_int_equal(applier_pack_task(f->a, &tu2, &all), 1);
    assert_mask(&unseen2->mask, "0-3");
    assert_null(applier_find(f->a, 165));
    unseen2->mask = set_of("1");
    cpu_set_t elsewhere = set_of("6");
    assert_int_equal(applier_pack_task(f->a, &tu2, &elsewhere), 1);
    assert_mask(&unseen2->mask, "0-3");

    /* nor is the child of a task we did not pack */
    add_task(&f->rec, 163, "1");
    assert_int_equal(applier_adopt_inherited(f->a, 163, 163, 1163, 999), 0);
}

static void test_dry_run_changes_nothing(void **state)
{
    struct fx *f = *state;
    struct fake_task *ft = add_task(&f->rec, 123, "0-1");
    struct task t = mk_task(&f->rec, 123, 123, "cron");
    cpu_set_t plan = set_of("0");

    assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);
    assert_true(logged("would set pid 123 (cron) affinity 0-1 -> 0"));
    assert_mask(&ft->mask, "0-1");
    /* recorded, so that dump shows the plan and the message is not repeated */
    assert_non_null(applier_find(f->a, 123));
    logbuf[0] = '\0';
    assert_int_equal(applier_pack_task(f->a, &t, &plan), 0);
    assert_false(logged("would set"));
    /* verify does not mistake the unchanged mask for someone else's change */
    assert_int_equal(applier_verify(f->a, 0), 0);

    /* inherited threads in a dry run carry the original */
    struct fake_task *c = add_task(&f->rec, 124, "0-1");
    assert_int_equal(applier_adopt_inherited(f->a, 124, 123, c->start_time, 123), 1);

    /* groups and units: logged, never written */
    add_group(&f->rec, "/", "0-3", "0");
    f->rec.units[f->rec.n_units++] = (struct fake_unit){.name = "jitter.slice"};
    assert_int_equal(applier_group_set_v1(f->a, "/ts-dry", &plan), 1);
    assert_true(logged("would create cpuset group /ts-dry with cpus 0, mems 0"));
    assert_int_equal(applier_group_attach_v1(f->a, "/ts-dry", 123, 123, t.start_time), 1);
    assert_true(logged("would move pid 123 from cpuset / to /ts-dry"));
    assert_int_equal(applier_unit_set_allowed_cpus(f->a, "jitter.slice", &plan), 1);
    assert_true(logged("would set unit jitter.slice AllowedCPUs (all) -> 0"));

    assert_int_equal(applier_restore_all(f->a), 4);
    assert_true(logged("would restore pid 123 (cron) affinity 0 -> 0-1"));
    assert_true(logged("would remove cpuset group /ts-dry"));

    assert_int_equal(applier_flush_state(f->a), 0);
    assert_int_equal(f->rec.n_set, 0);
    assert_int_equal(f->rec.n_cpuset_writes, 0);
    assert_int_equal(f->rec.n_unit_sets, 0);
    assert_null(rec_group(&f->rec, "/ts-dry"));
    assert_int_equal(access(f->state_file, F_OK), -1);
}

static void test_iteration(void **state)
{
    struct fx *f = *state;
    cpu_set_t plan = set_of("0");
    /* enough to make the index grow a few times */
    for (pid_t tid = 1; tid <= 30; tid++)
        add_task(&f->rec, tid * 1024, "0-1"); /* TIDs that collide in a small table */
    for (pid_t tid = 1; tid <= 30; tid++) {
        struct task t = mk_task(&f->rec, tid * 1024, tid * 1024, "x");
        assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);
    }
    assert_int_equal(applier_count(f->a), 30);
    /* removals from the middle keep every other entry findable */
    for (pid_t tid = 1; tid <= 30; tid += 3)
        applier_forget_task(f->a, tid * 1024);
    for (pid_t tid = 1; tid <= 30; tid++)
        assert_true((applier_find(f->a, tid * 1024) != NULL) == (tid % 3 != 1));
    size_t iter = 0, n = 0;
    for (const struct applied_task *e; (e = applier_next(f->a, &iter));) {
        assert_int_not_equal(e->tid / 1024 % 3, 1);
        n++;
    }
    assert_int_equal(n, applier_count(f->a));
    assert_int_equal(n, 20);
}

/* --- groups ------------------------------------------------------------------------------ */

static void test_cpuset_group(void **state)
{
    struct fx *f = *state;
    add_group(&f->rec, "/", "0-3", "0");
    add_group(&f->rec, "/batch", "0-3", "0");
    struct fake_task *a = add_task(&f->rec, 300, "0-3");
    struct fake_task *b = add_task(&f->rec, 301, "0-3");
    struct fake_task *c = add_task(&f->rec, 302, "0-3");
    strcpy(a->cpuset, "/batch");
    cpu_set_t plan = set_of("1,5");

    assert_int_equal(applier_group_attach_v1(f->a, "/ts", 300, 300, a->start_time), -ENOENT);
    assert_int_equal(applier_group_set_v1(f->a, "/ts", &plan), 1);
    struct fake_group *g = rec_group(&f->rec, "/ts");
    assert_non_null(g);
    assert_string_equal(g->cpus, "1"); /* within the parent's CPUs */
    assert_string_equal(g->mems, "0"); /* copied from the parent */
    assert_int_equal(applier_group_set_v1(f->a, "/ts", &plan), 0);

    assert_int_equal(applier_group_attach_v1(f->a, "/ts", 300, 300, a->start_time), 1);
    assert_int_equal(applier_group_attach_v1(f->a, "/ts", 301, 301, b->start_time), 1);
    assert_int_equal(applier_group_attach_v1(f->a, "/ts", 302, 302, c->start_time), 1);
    assert_int_equal(applier_group_attach_v1(f->a, "/ts", 300, 300, a->start_time), 0);
    assert_string_equal(a->cpuset, "/ts");

    plan = set_of("0-1");
    assert_int_equal(applier_group_set_v1(f->a, "/ts", &plan), 1);
    assert_string_equal(g->cpus, "0-1");
    assert_int_equal(applier_group_set_v1(f->a, "/ts", NULL), 1);
    assert_string_equal(g->cpus, "0-3");

    const struct applied_group *ag;
    size_t iter = 0;
    assert_non_null(ag = applier_next_group(f->a, &iter));
    assert_int_equal(ag->kind, GROUP_CPUSET_V1);
    assert_int_equal(ag->n_members, 3);
    assert_string_equal(ag->members[0].original_path, "/batch");

    /* someone else moves c elsewhere; b exits */
    strcpy(c->cpuset, "/batch");
    b->alive = false;
    assert_int_equal(applier_group_remove_v1(f->a, "/ts"), 1);
    assert_string_equal(a->cpuset, "/batch"); /* back where it was */
    assert_string_equal(c->cpuset, "/batch"); /* left where someone put it */
    assert_null(rec_group(&f->rec, "/ts"));
    assert_int_equal(applier_group_count(f->a), 0);

    /* many members: all recorded, all moved back */
    assert_int_equal(applier_group_set_v1(f->a, "/many", &plan), 1);
    for (pid_t tid = 1000; tid < 1040; tid++) {
        struct fake_task *m = add_task(&f->rec, tid, "0-3");
        strcpy(m->cpuset, "/batch");
        assert_int_equal(applier_group_attach_v1(f->a, "/many", tid, tid, m->start_time), 1);
    }
    iter = 0;
    assert_int_equal(applier_next_group(f->a, &iter)->n_members, 40);
    assert_int_equal(applier_group_remove_v1(f->a, "/many"), 1);
    for (pid_t tid = 1000; tid < 1040; tid++)
        assert_string_equal(rec_task(&f->rec, tid)->cpuset, "/batch");

    assert_int_equal(applier_group_set_v1(f->a, "../etc", &plan), -EINVAL);
    assert_int_equal(applier_group_set_v1(f->a, "/a b", &plan), -EINVAL);
}

static void test_bitmask(void **state)
{
    uint8_t bits[16];
    cpu_set_t s = set_of("0,9,15"), back;
    assert_int_equal(cpuset_to_bitmask(&s, bits, sizeof bits), 2);
    assert_int_equal(bits[0], 0x01);
    assert_int_equal(bits[1], 0x82);
    cpuset_from_bitmask(bits, 2, &back);
    assert_true(CPU_EQUAL(&s, &back));
    s = set_of("200");
    assert_int_equal(cpuset_to_bitmask(&s, bits, sizeof bits), -ENOSPC);
    CPU_ZERO(&s);
    assert_int_equal(cpuset_to_bitmask(&s, bits, sizeof bits), 0);
}

static void test_unit_allowed_cpus(void **state)
{
    struct fx *f = *state;
    struct fake_unit *all = &f->rec.units[f->rec.n_units++];
    *all = (struct fake_unit){.name = "turbosched-jitter.slice"}; /* AllowedCPUs= empty: all */
    struct fake_unit *some = &f->rec.units[f->rec.n_units++];
    *some = (struct fake_unit){.name = "db.service", .bits = {0x0c}, .n = 1}; /* 2-3 */

    cpu_set_t plan = set_of("0-1");
    assert_int_equal(applier_unit_set_allowed_cpus(f->a, "turbosched-jitter.slice", &plan), 1);
    assert_int_equal(all->n, 1);
    assert_int_equal(all->bits[0], 0x03);
    assert_int_equal(applier_unit_set_allowed_cpus(f->a, "turbosched-jitter.slice", &plan), 0);
    assert_int_equal(f->rec.n_unit_sets, 1);
    /* the original is kept from the first change, not the latest */
    plan = set_of("1");
    assert_int_equal(applier_unit_set_allowed_cpus(f->a, "turbosched-jitter.slice", &plan), 1);
    assert_int_equal(all->bits[0], 0x02);
    /* restore: an empty array is all CPUs again */
    assert_int_equal(applier_unit_set_allowed_cpus(f->a, "turbosched-jitter.slice", NULL), 1);
    assert_int_equal(all->n, 0);

    assert_int_equal(applier_unit_set_allowed_cpus(f->a, "db.service", &plan), 1);
    assert_int_equal(some->bits[0], 0x02);
    /* someone else changes it: restore leaves it */
    some->bits[0] = 0x08;
    unsigned sets = f->rec.n_unit_sets;
    assert_int_equal(applier_restore_all(f->a), 0);
    assert_int_equal(f->rec.n_unit_sets, sets);
    assert_int_equal(some->bits[0], 0x08);

    /* an unchanged unit is restored on restore_all, to its exact original */
    assert_int_equal(applier_unit_set_allowed_cpus(f->a, "db.service", &plan), 1);
    assert_int_equal(applier_restore_all(f->a), 1);
    assert_int_equal(some->bits[0], 0x08);
    assert_int_equal(some->n, 1);

    assert_int_equal(applier_unit_set_allowed_cpus(f->a, "no such unit", &plan), -EINVAL);
    /* a failure that repeats every tick is an error once, then debug */
    logbuf[0] = '\0';
    for (int i = 0; i < 3; i++)
        assert_int_equal(applier_unit_set_allowed_cpus(f->a, "missing.slice", &plan), -ENOENT);
    assert_non_null(strstr(logbuf, "<3>unit missing.slice: reading AllowedCPUs: No such file or directory"));
    assert_null(strstr(strstr(logbuf, "<3>") + 1, "<3>"));
    assert_non_null(strstr(logbuf, "<7>unit missing.slice: reading AllowedCPUs"));
    assert_int_equal(applier_group_count(f->a), 0);
}

/* A SetUnitProperties that times out may still be applied by systemd (a
 * daemon-reload holds its bus longer than the call waits). A late success
 * must be undone like any other, and the value it left must not be taken
 * for the unit's original. */
static void test_unit_set_timed_out(void **state)
{
    struct fx *f = *state;
    struct fake_unit *u = &f->rec.units[f->rec.n_units++];
    *u = (struct fake_unit){.name = "turbosched-jitter.slice"}; /* AllowedCPUs= empty: all */
    cpu_set_t plan = set_of("1");

    f->rec.unit_set_timeout = 1; /* times out, applied anyway */
    assert_int_equal(applier_unit_set_allowed_cpus(f->a, "turbosched-jitter.slice", &plan), -ETIMEDOUT);
    assert_int_equal(u->n, 1);
    assert_int_equal(applier_group_count(f->a), 1);
    f->rec.unit_set_timeout = 0;
    /* the next tick reads it back instead of taking 1 for the original */
    unsigned sets = f->rec.n_unit_sets;
    assert_int_equal(applier_unit_set_allowed_cpus(f->a, "turbosched-jitter.slice", &plan), 0);
    assert_int_equal(f->rec.n_unit_sets, sets);
    assert_true(logged("took effect after the call timed out"));
    assert_int_equal(applier_restore_all(f->a), 1);
    assert_int_equal(u->n, 0); /* all CPUs again */

    /* times out and never applied: written again at the next tick */
    f->rec.unit_set_timeout = 2;
    assert_int_equal(applier_unit_set_allowed_cpus(f->a, "turbosched-jitter.slice", &plan), -ETIMEDOUT);
    assert_int_equal(u->n, 0);
    f->rec.unit_set_timeout = 0;
    assert_int_equal(applier_unit_set_allowed_cpus(f->a, "turbosched-jitter.slice", &plan), 1);
    assert_int_equal(u->n, 1);
    assert_int_equal(u->bits[0], 0x02);
    assert_int_equal(applier_restore_all(f->a), 1);
    assert_int_equal(u->n, 0);

    /* timed out, never applied, then stop: nothing to restore, nothing written */
    f->rec.unit_set_timeout = 2;
    assert_int_equal(applier_unit_set_allowed_cpus(f->a, "turbosched-jitter.slice", &plan), -ETIMEDOUT);
    f->rec.unit_set_timeout = 0;
    sets = f->rec.n_unit_sets;
    assert_int_equal(applier_restore_all(f->a), 0);
    assert_int_equal(f->rec.n_unit_sets, sets);
    assert_true(logged("never took effect"));
    assert_int_equal(u->n, 0);
}

/* --- the D-Bus messages, against a fake systemd on a socket pair --------------------------- */

struct fake_systemd {
    sd_bus *bus;
    char unit[64];
    uint8_t bits[16];
    size_t n;
    bool runtime;
    int calls;
    char get_path[128];
    char get_iface[64];
};

static int fake_set_unit_properties(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
    struct fake_systemd *s = userdata;
    const char *unit, *name;
    int runtime;
    const void *data;
    size_t n;
    s->calls++;
    assert_true(sd_bus_message_read(m, "sb", &unit, &runtime) >= 0);
    assert_true(sd_bus_message_enter_container(m, 'a', "(sv)") > 0);
    assert_true(sd_bus_message_enter_container(m, 'r', "sv") > 0);
    assert_true(sd_bus_message_read(m, "s", &name) >= 0);
    assert_string_equal(name, "AllowedCPUs");
    assert_true(sd_bus_message_enter_container(m, 'v', "ay") > 0);
    assert_true(sd_bus_message_read_array(m, 'y', &data, &n) >= 0);
    snprintf(s->unit, sizeof s->unit, "%s", unit);
    s->runtime = runtime;
    memcpy(s->bits, data, n);
    s->n = n;
    return sd_bus_reply_method_return(m, NULL);
}

static int fake_get_property(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
    struct fake_systemd *s = userdata;
    const char *iface, *prop;
    assert_true(sd_bus_message_read(m, "ss", &iface, &prop) >= 0);
    snprintf(s->get_path, sizeof s->get_path, "%s", sd_bus_message_get_path(m));
    snprintf(s->get_iface, sizeof s->get_iface, "%s", iface);
    assert_string_equal(prop, "AllowedCPUs");
    sd_bus_message *reply = NULL;
    assert_true(sd_bus_message_new_method_return(m, &reply) >= 0);
    assert_true(sd_bus_message_open_container(reply, 'v', "ay") >= 0);
    assert_true(sd_bus_message_append_array(reply, 'y', s->bits, s->n) >= 0);
    assert_true(sd_bus_message_close_container(reply) >= 0);
    int r = sd_bus_send(NULL, reply, NULL);
    sd_bus_message_unref(reply);
    return r;
}

static int fake_filter(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
    if (sd_bus_message_is_method_call(m, "org.freedesktop.systemd1.Manager", "SetUnitProperties"))
        return fake_set_unit_properties(m, userdata, error);
    if (sd_bus_message_is_method_call(m, "org.freedesktop.DBus.Properties", "Get"))
        return fake_get_property(m, userdata, error);
    return 0;
}

static void *fake_systemd_run(void *arg)
{
    struct fake_systemd *s = arg;
    for (;;) {
        int r = sd_bus_process(s->bus, NULL);
        if (r < 0)
            break; /* the client hung up */
        if (r > 0)
            continue;
        if (sd_bus_wait(s->bus, UINT64_MAX) < 0)
            break;
    }
    return NULL;
}

static void test_bus_messages(void **state)
{
    int fds[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    struct fake_systemd s = {.bits = {0x05}, .n = 1};
    sd_id128_t id;
    assert_true(sd_id128_randomize(&id) >= 0);

    assert_true(sd_bus_new(&s.bus) >= 0);
    assert_true(sd_bus_set_fd(s.bus, fds[0], fds[0]) >= 0);
    assert_true(sd_bus_set_server(s.bus, 1, id) >= 0);
    assert_true(sd_bus_set_anonymous(s.bus, 1) >= 0);
    assert_true(sd_bus_add_filter(s.bus, NULL, fake_filter, &s) >= 0);
    assert_true(sd_bus_start(s.bus) >= 0);

    sd_bus *client = NULL;
    assert_true(sd_bus_new(&client) >= 0);
    assert_true(sd_bus_set_fd(client, fds[1], fds[1]) >= 0);
    assert_true(sd_bus_set_anonymous(client, 1) >= 0);
    assert_true(sd_bus_start(client) >= 0);

    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, fake_systemd_run, &s), 0);

    uint8_t bits[16];
    int n = sysops_bus_get_allowed_cpus(client, "turbosched-jitter.slice", bits, sizeof bits);
    assert_int_equal(n, 1);
    assert_int_equal(bits[0], 0x05);
    assert_string_equal(s.get_iface, "org.freedesktop.systemd1.Slice");
    /* '-' is escaped in object paths */
    assert_string_equal(s.get_path, "/org/freedesktop/systemd1/unit/turbosched_2djitter_2eslice");

    const uint8_t want[] = {0x00, 0x81};
    assert_int_equal(sysops_bus_set_allowed_cpus(client, "db.service", want, sizeof want), 0);
    assert_string_equal(s.unit, "db.service");
    assert_true(s.runtime);
    assert_int_equal(s.n, 2);
    assert_memory_equal(s.bits, want, 2);

    /* empty array = all CPUs */
    assert_int_equal(sysops_bus_set_allowed_cpus(client, "db.service", NULL, 0), 0);
    assert_int_equal(s.n, 0);
    assert_int_equal(s.calls, 2);

    assert_int_equal(sysops_bus_get_allowed_cpus(client, "foo.target", bits, sizeof bits), -EOPNOTSUPP);

    sd_bus_flush_close_unref(client);
    pthread_join(th, NULL);
    sd_bus_flush_close_unref(s.bus);
}

/* --- state file and recovery ------------------------------------------------------------------ */

static void test_flush_writes_once_per_batch(void **state)
{
    struct fx *f = *state;
    cpu_set_t plan = set_of("0");
    add_task(&f->rec, 400, "0-1");
    struct task t = mk_task(&f->rec, 400, 400, "a");

    assert_int_equal(applier_flush_state(f->a), 0);
    assert_int_equal(access(f->state_file, F_OK), -1); /* nothing changed yet */
    assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);
    assert_int_equal(access(f->state_file, F_OK), -1); /* not per syscall */
    assert_int_equal(applier_flush_state(f->a), 0);
    struct state s;
    assert_int_equal(state_read(f->state_file, f->rec.boot_id, &s), 0);
    assert_int_equal(s.n_tasks, 1);
    assert_int_equal(s.tasks[0].tid, 400);
    assert_string_equal(s.tasks[0].comm, "a");
    state_free(&s);

    /* clean stop: restore everything, flush: the file goes */
    assert_int_equal(applier_restore_all(f->a), 1);
    assert_int_equal(applier_flush_state(f->a), 0);
    assert_int_equal(access(f->state_file, F_OK), -1);
}

/* After a batch of events: a change made is written at once, a task that
 * only went away waits for the tick (its stale record harms no one), and
 * right after a write the next early one waits STATE_EARLY_WRITE_MS. */
static void test_flush_changes_only_for_changes(void **state)
{
    struct fx *f = *state;
    cpu_set_t plan = set_of("0");
    add_task(&f->rec, 410, "0-1");
    add_task(&f->rec, 411, "0-1");
    add_task(&f->rec, 412, "0-1");
    struct task a = mk_task(&f->rec, 410, 410, "a"), b = mk_task(&f->rec, 411, 411, "b"),
                c = mk_task(&f->rec, 412, 412, "c");

    assert_int_equal(applier_changes_due_ms(f->a, now_ms()), -1);
    assert_int_equal(applier_flush_changes(f->a, now_ms()), 0);
    assert_int_equal(access(f->state_file, F_OK), -1); /* nothing changed */
    assert_int_equal(applier_pack_task(f->a, &a, &plan), 1);
    assert_int_equal(applier_pack_task(f->a, &b, &plan), 1);
    uint64_t t0 = now_ms(); /* the write comes after */
    assert_int_equal(applier_changes_due_ms(f->a, t0), 0);
    assert_int_equal(applier_flush_changes(f->a, t0), 0);
    struct state s;
    assert_int_equal(state_read(f->state_file, f->rec.boot_id, &s), 0);
    assert_int_equal(s.n_tasks, 2);
    state_free(&s);

    applier_forget_task(f->a, 411); /* it exited */
    assert_int_equal(applier_changes_due_ms(f->a, now_ms() + 1000), -1);
    assert_int_equal(applier_flush_changes(f->a, now_ms() + 1000), 0);
    assert_int_equal(state_read(f->state_file, f->rec.boot_id, &s), 0);
    assert_int_equal(s.n_tasks, 2); /* written at the tick */
    state_free(&s);

    /* a change right after a write waits its turn */
    assert_int_equal(applier_pack_task(f->a, &c, &plan), 1);
    uint64_t now = t0; /* no later than the write */
    int64_t due = applier_changes_due_ms(f->a, now);
    assert_true(due >= STATE_EARLY_WRITE_MS);
    assert_int_equal(applier_flush_changes(f->a, now), 0);
    assert_int_equal(state_read(f->state_file, f->rec.boot_id, &s), 0);
    assert_int_equal(s.n_tasks, 2);
    state_free(&s);
    assert_int_equal(applier_flush_changes(f->a, now + (uint64_t)due), 0);
    assert_int_equal(applier_changes_due_ms(f->a, now + (uint64_t)due), -1);
    /* appended: 412's line after the file; 411's stale one stays till the tick */
    assert_int_equal(state_read(f->state_file, f->rec.boot_id, &s), 0);
    assert_int_equal(s.n_tasks, 3);
    state_free(&s);
    char text[4096];
    assert_true(read_file(f->state_file, text, sizeof text) > 0);
    assert_non_null(strstr(strstr(text, "\nend ") + 1, "task 412 "));
    assert_int_equal(applier_flush_state(f->a), 0); /* the tick: written whole */
    assert_int_equal(state_read(f->state_file, f->rec.boot_id, &s), 0);
    assert_int_equal(s.n_tasks, 2); /* 410 and 412 */
    assert_int_equal(s.tasks[0].tid + s.tasks[1].tid, 410 + 412);
    state_free(&s);
    assert_true(read_file(f->state_file, text, sizeof text) > 0);
    assert_null(strstr(strstr(text, "\nend ") + 5, "\nend ")); /* one end line */
}

/* A change left waiting is due STATE_EARLY_WRITE_MS after the batch that
 * found it, not after the last write, and a later batch writes it once the
 * last write is that old: at a steady exec rate no timer is needed. */
static void test_early_write_due_from_change(void **state)
{
    struct fx *f = *state;
    cpu_set_t plan = set_of("0");
    for (pid_t tid = 440; tid <= 443; tid++)
        add_task(&f->rec, tid, "0-1");
    struct task t[4];
    for (int i = 0; i < 4; i++)
        t[i] = mk_task(&f->rec, 440 + i, 440 + i, "a");
    uint64_t t0 = now_ms() + 100000;
    assert_int_equal(applier_pack_task(f->a, &t[0], &plan), 1);
    assert_int_equal(applier_flush_changes(f->a, t0), 0); /* written at once */
    assert_int_equal(applier_changes_due_ms(f->a, t0), -1);
    assert_int_equal(applier_pack_task(f->a, &t[1], &plan), 1);
    assert_int_equal(applier_flush_changes(f->a, t0 + 30), 0);
    assert_int_equal(applier_changes_due_ms(f->a, t0 + 30), STATE_EARLY_WRITE_MS); /* not 20 */
    assert_int_equal(applier_pack_task(f->a, &t[2], &plan), 1);
    assert_int_equal(applier_flush_changes(f->a, t0 + 40), 0);
    assert_int_equal(applier_changes_due_ms(f->a, t0 + 40), STATE_EARLY_WRITE_MS - 10); /* the first one's */
    struct state s;
    assert_int_equal(state_read(f->state_file, f->rec.boot_id, &s), 0);
    assert_int_equal(s.n_tasks, 1);
    state_free(&s);
    /* the next batch once the last write is old enough writes both */
    assert_int_equal(applier_flush_changes(f->a, t0 + STATE_EARLY_WRITE_MS), 0);
    assert_int_equal(applier_changes_due_ms(f->a, t0 + STATE_EARLY_WRITE_MS), -1);
    assert_int_equal(state_read(f->state_file, f->rec.boot_id, &s), 0);
    assert_int_equal(s.n_tasks, 3);
    state_free(&s);
    /* and the next change counts from itself again */
    assert_int_equal(applier_pack_task(f->a, &t[3], &plan), 1);
    assert_int_equal(applier_flush_changes(f->a, t0 + 60), 0);
    assert_int_equal(applier_changes_due_ms(f->a, t0 + 60), STATE_EARLY_WRITE_MS);
    assert_int_equal(applier_flush_changes(f->a, t0 + 60 + STATE_EARLY_WRITE_MS), 0);
    assert_int_equal(state_read(f->state_file, f->rec.boot_id, &s), 0);
    assert_int_equal(s.n_tasks, 4);
    state_free(&s);
    assert_int_equal(applier_restore_all(f->a), 4);
}

/* A change a block cannot say (a group's) is written whole at once, not
 * left for the tick as a removal is. */
static void test_group_change_written_whole(void **state)
{
    struct fx *f = *state;
    cpu_set_t plan = set_of("0");
    add_task(&f->rec, 420, "0-1");
    struct task t = mk_task(&f->rec, 420, 420, "a");
    assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);
    assert_int_equal(applier_flush_changes(f->a, now_ms()), 0);
    f->rec.units[f->rec.n_units++] = (struct fake_unit){.name = "turbosched-jitter.slice"};
    assert_int_equal(applier_unit_set_allowed_cpus(f->a, "turbosched-jitter.slice", &plan), 1);
    assert_int_equal(applier_flush_changes(f->a, now_ms() + 1000), 0);
    char text[4096];
    assert_true(read_file(f->state_file, text, sizeof text) > 0);
    assert_non_null(strstr(text, "\nunit 0 all turbosched-jitter.slice\n"));
    assert_null(strstr(strstr(text, "\nend ") + 5, "\nend ")); /* one end line: written whole */
    assert_int_equal(applier_restore_all(f->a), 2);
}

/* A state file deleted under the daemon is written whole again at the next
 * early write, not appended to the deleted one. */
static void test_deleted_file_written_again(void **state)
{
    struct fx *f = *state;
    cpu_set_t plan = set_of("0");
    add_task(&f->rec, 430, "0-1");
    add_task(&f->rec, 431, "0-1");
    struct task a = mk_task(&f->rec, 430, 430, "a"), b = mk_task(&f->rec, 431, 431, "b");
    assert_int_equal(applier_pack_task(f->a, &a, &plan), 1);
    uint64_t t0 = now_ms();
    assert_int_equal(applier_flush_changes(f->a, t0), 0);
    assert_int_equal(unlink(f->state_file), 0);
    assert_int_equal(applier_pack_task(f->a, &b, &plan), 1);
    assert_int_equal(applier_flush_changes(f->a, t0 + 1000), 0);
    struct state s;
    assert_int_equal(state_read(f->state_file, f->rec.boot_id, &s), 0);
    assert_int_equal(s.n_tasks, 2); /* 430 too: written whole */
    state_free(&s);
    assert_int_equal(applier_restore_all(f->a), 2);
}

static void test_recover_after_crash(void **state)
{
    struct fx *f = *state;
    cpu_set_t plan = set_of("0");
    struct fake_task *alive = add_task(&f->rec, 500, "0-3");
    struct fake_task *changed = add_task(&f->rec, 501, "0-3");
    struct fake_task *exited = add_task(&f->rec, 502, "0-3");
    struct fake_task *reused = add_task(&f->rec, 503, "0-3");
    add_group(&f->rec, "/", "0-3", "0");
    add_group(&f->rec, "/batch", "0-3", "0");
    strcpy(alive->cpuset, "/batch");
    f->rec.units[f->rec.n_units++] = (struct fake_unit){.name = "turbosched-jitter.slice", .bits = {0x0f}, .n = 1};

    for (pid_t tid = 500; tid <= 503; tid++) {
        struct task t = mk_task(&f->rec, tid, tid, "w");
        assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);
    }
    assert_int_equal(applier_group_set_v1(f->a, "/ts", &plan), 1);
    assert_int_equal(applier_group_attach_v1(f->a, "/ts", 500, 500, alive->start_time), 1);
    assert_int_equal(applier_unit_set_allowed_cpus(f->a, "turbosched-jitter.slice", &plan), 1);
    assert_int_equal(applier_flush_state(f->a), 0);

    /* kill -9: no restore; meanwhile the world moves on */
    applier_free(f->a);
    changed->mask = set_of("2");
    exited->alive = false;
    reused->alive = false;
    struct fake_task *newcomer = add_task(&f->rec, 503, "0");
    newcomer->start_time = 77777;

    assert_int_equal(applier_new(&f->ops, f->state_file, false, &f->a), 0);
    assert_int_equal(applier_recover(f->a), 3); /* one task, the cpuset group, the unit */
    assert_mask(&alive->mask, "0-3");
    assert_mask(&changed->mask, "2");
    assert_mask(&newcomer->mask, "0");
    assert_string_equal(alive->cpuset, "/batch");
    assert_null(rec_group(&f->rec, "/ts"));
    assert_int_equal(f->rec.units[0].bits[0], 0x0f);
    assert_true(logged("pid 501 (w): affinity is 2, not the 0 a previous run set, leaving it"));
    assert_int_equal(access(f->state_file, F_OK), -1);
    assert_int_equal(applier_count(f->a), 0);

    /* nothing left: a second recovery does nothing */
    assert_int_equal(applier_recover(f->a), 0);
}

/* Threads and processes created while no daemon ran carry the packed mask
 * they inherited: recovery gives them the original too, and leaves alone
 * what someone else changed (and what that created). */
static void test_recover_offspring(void **state)
{
    struct fx *f = *state;
    cpu_set_t plan = set_of("0");
    struct fake_task *leader = add_task(&f->rec, 700, "0-3");
    struct task t = mk_task(&f->rec, 700, 700, "w");
    assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);
    assert_int_equal(applier_flush_state(f->a), 0);
    applier_free(f->a); /* kill -9 */

    struct fake_task *thread = add_task(&f->rec, 701, "0");
    thread->pid = 700;
    struct fake_task *child = add_task(&f->rec, 710, "0");
    child->parent = 701;
    struct fake_task *grandthread = add_task(&f->rec, 711, "0");
    grandthread->pid = 710;
    struct fake_task *theirs = add_task(&f->rec, 702, "1"); /* taskset by its user */
    theirs->pid = 700;
    struct fake_task *theirs_child = add_task(&f->rec, 720, "0");
    theirs_child->parent = 702;
    struct fake_task *stranger = add_task(&f->rec, 730, "0"); /* pinned by its user */

    assert_int_equal(applier_new(&f->ops, f->state_file, false, &f->a), 0);
    assert_int_equal(applier_recover(f->a), 4);
    assert_mask(&leader->mask, "0-3");
    assert_mask(&thread->mask, "0-3");
    assert_mask(&child->mask, "0-3");
    assert_mask(&grandthread->mask, "0-3");
    assert_mask(&theirs->mask, "1");
    assert_mask(&theirs_child->mask, "0");
    assert_mask(&stranger->mask, "0");
    assert_true(logged("3 tasks created while no daemon ran"));
}

/* The kernel reports a mask without its offline CPUs and keeps the mask
 * itself: a packed task whose CPU goes offline is still ours, and gets its
 * original back. A mask someone else set is still told apart. */
static void test_hotplug_keeps_task(void **state)
{
    struct fx *f = *state;
    cpu_set_t plan = set_of("0-1");
    struct fake_task *ft = add_task(&f->rec, 800, "0-3");
    struct task t = mk_task(&f->rec, 800, 800, "w");
    struct fake_task *ft2 = add_task(&f->rec, 801, "0-3");
    struct task t2 = mk_task(&f->rec, 801, 801, "w");
    assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);
    assert_int_equal(applier_pack_task(f->a, &t2, &plan), 1);

    CPU_CLR(1, &f->rec.online); /* CPU 1 goes offline */
    ft2->mask = set_of("2-3");  /* someone moves 801 */
    assert_int_equal(applier_verify(f->a, 0), 1);
    assert_non_null(applier_find(f->a, 800));
    assert_null(applier_find(f->a, 801));
    assert_int_equal(applier_hands_off(f->a, 801), -EBUSY);

    plan = set_of("0"); /* the plan follows */
    assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);
    assert_mask(&ft->mask, "0");
    CPU_SET(1, &f->rec.online);
    assert_int_equal(applier_restore_all(f->a), 1);
    assert_mask(&ft->mask, "0-3");
    assert_mask(&ft2->mask, "2-3");

    /* every CPU of the plan goes offline: the kernel reports an empty mask
     * for a task that has not woken since; still ours, restored */
    plan = set_of("1");
    assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);
    CPU_CLR(1, &f->rec.online); /* the kernel keeps "1", reports nothing */
    assert_int_equal(applier_verify(f->a, 0), 0);
    assert_int_equal(applier_restore_all(f->a), 1);
    assert_mask(&ft->mask, "0-3");
}

/* Every CPU we confined a task to goes offline and the kernel gives it a
 * fallback mask as it wakes (every possible CPU on v1): the kernel's change,
 * not a user's. The task gets its original back and is packed again under
 * the next plan; a user who narrows a mask meanwhile still has it kept. */
static void test_hotplug_kernel_fallback(void **state)
{
    struct fx *f = *state;
    cpu_set_t plan = set_of("1");
    struct fake_task *fa = add_task(&f->rec, 810, "0-3");
    struct fake_task *fb = add_task(&f->rec, 811, "0-3");
    struct fake_task *fc = add_task(&f->rec, 812, "0-3");
    struct task ta = mk_task(&f->rec, 810, 810, "a"), tb = mk_task(&f->rec, 811, 811, "b"),
                tc = mk_task(&f->rec, 812, 812, "c");
    assert_int_equal(applier_pack_task(f->a, &ta, &plan), 1);
    assert_int_equal(applier_pack_task(f->a, &tb, &plan), 1);
    assert_int_equal(applier_pack_task(f->a, &tc, &plan), 1);

    CPU_CLR(1, &f->rec.online);
    fa->mask = set_of("0-3");                     /* the kernel's fallback */
    fb->mask = set_of("2");                       /* a user's choice */
    assert_int_equal(applier_verify(f->a, 0), 2); /* a and b: neither is ours any more */
    assert_non_null(applier_find(f->a, 812));     /* c has not woken: still on CPU 1 */
    assert_null(applier_find(f->a, 810));
    assert_int_equal(applier_hands_off(f->a, 810), 0); /* free to be packed again */
    assert_mask(&fa->mask, "0-3");
    assert_int_equal(applier_hands_off(f->a, 811), -EBUSY);
    assert_mask(&fb->mask, "2");

    fc->mask = set_of("0-3"); /* c wakes: the kernel's fallback */
    plan = set_of("0");
    assert_int_equal(applier_pack_task(f->a, &tc, &plan), 1); /* found at pack time */
    assert_mask(&fc->mask, "0");
    assert_non_null(applier_find(f->a, 812));
    assert_mask(&applier_find(f->a, 812)->original, "0-3"); /* not what getaffinity shows now */
    assert_int_equal(applier_pack_task(f->a, &tb, &plan), 0);
    assert_mask(&fb->mask, "2");

    CPU_SET(1, &f->rec.online); /* back: a is packed again */
    assert_int_equal(applier_pack_task(f->a, &ta, &plan), 1);
    assert_mask(&fa->mask, "0");
    assert_int_equal(applier_restore_all(f->a), 2);
    assert_mask(&fa->mask, "0-3");
    assert_mask(&fb->mask, "2");
    assert_mask(&fc->mask, "0-3");
}

/* CPU 1 on its way down: it has left the scheduler's active CPUs while
 * /sys/devices/system/cpu/online still lists it. A thread we packed onto it
 * that never wakes reads back an empty set from sched_getaffinity, while the
 * kernel keeps "1" (/proc/TID/status): still ours, and it gets its original
 * back whenever it is restored, on CPU 1's return too. */
static void test_hotplug_never_woken(void **state)
{
    struct fx *f = *state;
    cpu_set_t plan = set_of("1");
    struct fake_task *ft = add_task(&f->rec, 820, "0-3");
    struct task t = mk_task(&f->rec, 820, 820, "sleeper");
    struct fake_task *ft2 = add_task(&f->rec, 821, "0-3");
    struct task t2 = mk_task(&f->rec, 821, 821, "sleeper2");
    assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);
    assert_int_equal(applier_pack_task(f->a, &t2, &plan), 1);

    f->rec.active = f->rec.online;
    CPU_CLR(1, &f->rec.active);
    f->rec.active_differs = true;
    assert_int_equal(applier_verify(f->a, 0), 0); /* neither was changed by anyone */
    assert_int_equal(applier_hands_off(f->a, 820), 0);
    assert_non_null(applier_find(f->a, 820));

    /* the plan falls back while CPU 1 is down: the original, all of it */
    CPU_CLR(1, &f->rec.online);
    f->rec.active_differs = false;
    assert_int_equal(applier_pack_task(f->a, &t, NULL), 1);
    assert_mask(&ft->mask, "0-3");
    /* the other one is still down there at stop, after CPU 1 is back */
    CPU_SET(1, &f->rec.online);
    assert_int_equal(applier_restore_all(f->a), 1);
    assert_mask(&ft2->mask, "0-3");
    assert_int_equal(applier_count(f->a), 0);
}

/* The thread wakes while its only CPU is on its way down: the kernel gives
 * it its fallback (every possible CPU) before the online list drops the
 * CPU. The kernel's change, not a user's: the original comes back. */
static void test_hotplug_woken_while_going_down(void **state)
{
    struct fx *f = *state;
    cpu_set_t plan = set_of("1");
    struct fake_task *ft = add_task(&f->rec, 830, "0-2");
    struct task t = mk_task(&f->rec, 830, 830, "waker");
    assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);

    f->rec.active = f->rec.online;
    CPU_CLR(1, &f->rec.active);
    f->rec.active_differs = true;
    ft->mask = set_of("0-63"); /* the fallback: every possible CPU */
    assert_int_equal(applier_verify(f->a, 0), 1);
    assert_mask(&ft->mask, "0-2");
    assert_int_equal(applier_hands_off(f->a, 830), 0); /* free to be packed again */
    assert_null(applier_find(f->a, 830));

    /* packed again under the next plan, restored at stop */
    plan = set_of("0");
    assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);
    assert_mask(&applier_find(f->a, 830)->original, "0-2");
    f->rec.active_differs = false;
    assert_int_equal(applier_restore_all(f->a), 1);
    assert_mask(&ft->mask, "0-2");
}

/* A task first packed while a CPU of its mask is offline: its original is
 * the mask the kernel keeps, offline CPU included, or it would lose that
 * CPU for good once it is restored. */
static void test_hotplug_original_is_full_mask(void **state)
{
    struct fx *f = *state;
    cpu_set_t plan = set_of("0");
    struct fake_task *ft = add_task(&f->rec, 840, "0-3");
    struct task t = mk_task(&f->rec, 840, 840, "w");
    CPU_CLR(1, &f->rec.online);
    assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);
    assert_mask(&applier_find(f->a, 840)->original, "0-3");
    CPU_SET(1, &f->rec.online);
    assert_int_equal(applier_restore_all(f->a), 1);
    assert_mask(&ft->mask, "0-3");
}

/* The start time of a new task is read when its event is handled; under a
 * flood of events the task may exit and its PID go to another process before
 * the pack. That process must not be touched, nor recorded. */
static void test_pid_reused_before_pack(void **state)
{
    struct fx *f = *state;
    cpu_set_t plan = set_of("0");
    struct fake_task *ft = add_task(&f->rec, 850, "0-3");
    struct task t = mk_task(&f->rec, 850, 850, "jit"); /* as read at the fork event */
    ft->start_time += 7;                               /* exited; PID 850 now another process */
    unsigned sets = f->rec.n_set;
    assert_int_equal(applier_pack_task(f->a, &t, &plan), 0);
    assert_int_equal(f->rec.n_set, sets);
    assert_mask(&ft->mask, "0-3");
    assert_null(applier_find(f->a, 850));
    assert_int_equal(applier_hands_off(f->a, 850), 0);
}

/* A start time read for this very event (procscan's TASK_F_START_FRESH) is
 * not read again: the pack makes one system call fewer, and the check
 * above still runs for every task read earlier. */
static void test_fresh_start_not_read_again(void **state)
{
    struct fx *f = *state;
    cpu_set_t plan = set_of("0");
    struct fake_task *ft = add_task(&f->rec, 855, "0-3");
    (void)ft;
    struct task t = mk_task(&f->rec, 855, 855, "jit");
    t.flags |= TASK_F_START_FRESH;
    unsigned reads = f->rec.n_start_time;
    assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);
    assert_int_equal(f->rec.n_start_time, reads);
    assert_mask(&ft->mask, "0");

    struct fake_task *fo = add_task(&f->rec, 856, "0-3");
    struct task o = mk_task(&f->rec, 856, 856, "jit");
    assert_int_equal(applier_pack_task(f->a, &o, &plan), 1);
    assert_int_equal(f->rec.n_start_time, reads + 1);
    assert_mask(&fo->mask, "0");
}

/* A child process whose fork was never seen (events lost and found by a
 * rescan, or created while the task table was full) carries the mask we set
 * on its parent: its original is the parent's, or it would keep the narrowed
 * mask for good. A child whose own mask merely lies within the plan, under
 * a parent of ours with another mask, keeps it as its own. */
static void test_unseen_child_of_packed_parent(void **state)
{
    struct fx *f = *state;
    cpu_set_t plan = set_of("0-1");
    struct fake_task *fp = add_task(&f->rec, 860, "0-3");
    struct task tp = mk_task(&f->rec, 860, 860, "parent");
    assert_int_equal(applier_pack_task(f->a, &tp, &plan), 1);
    struct fake_task *fc = add_task(&f->rec, 861, "0-1"); /* forked after the pack */
    fc->parent = 860;
    struct task tc = mk_task(&f->rec, 861, 861, "parent");
    struct fake_task *fo = add_task(&f->rec, 862, "1"); /* its user chose CPU 1 */
    fo->parent = 860;
    struct task to = mk_task(&f->rec, 862, 862, "parent");

    assert_int_equal(applier_pack_task(f->a, &tc, &plan), 0); /* nothing to change now */
    assert_non_null(applier_find(f->a, 861));
    assert_mask(&applier_find(f->a, 861)->original, "0-3");
    assert_int_equal(applier_pack_task(f->a, &to, &plan), 0);
    assert_null(applier_find(f->a, 862));

    assert_int_equal(applier_restore_all(f->a), 2);
    assert_mask(&fp->mask, "0-3");
    assert_mask(&fc->mask, "0-3");
    assert_mask(&fo->mask, "1");
}

static void write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

/* A damaged state file is not believed: with a wrong checksum nothing in it
 * is (a blind reader would "restore" 600 here), and the daemon says that
 * tasks may stay confined, and says it again for a narrowed mask it then
 * takes for a task's own. A file cut short (no end line) still has its
 * lines as written: a task line that matches its live task exactly (start
 * time, the mask it says we set) gets its original back, so what can be
 * restored is; any other is left alone. */
static void test_recover_ignores_bad_file(void **state)
{
    struct fx *f = *state;
    cpu_set_t plan = set_of("0");
    struct fake_task *ft = add_task(&f->rec, 600, "0-3");
    struct task t = mk_task(&f->rec, 600, 600, "w");
    struct fake_task *ft2 = add_task(&f->rec, 601, "0-3");
    struct task t2 = mk_task(&f->rec, 601, 601, "w2");
    struct fake_task *ft3 = add_task(&f->rec, 602, "0-3");
    struct task t3 = mk_task(&f->rec, 602, 602, "w3");
    assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);
    assert_int_equal(applier_pack_task(f->a, &t2, &plan), 1);
    assert_int_equal(applier_pack_task(f->a, &t3, &plan), 1);
    assert_int_equal(applier_flush_state(f->a), 0);
    char whole[4096];
    assert_true(read_file(f->state_file, whole, sizeof whole) > 0);

    /* corrupt the set mask (0 -> 1) so a blind reader would "restore" */
    char buf[4096];
    memcpy(buf, whole, sizeof buf);
    char *line = strstr(buf, "task 600 600");
    assert_non_null(line);
    char *field = strstr(line, " 0-3 0 ");
    assert_non_null(field);
    field[5] = '1';
    write_file(f->state_file, buf);
    ft->mask = set_of("1");
    applier_free(f->a);

    assert_int_equal(applier_new(&f->ops, f->state_file, false, &f->a), 0);
    unsigned sets = f->rec.n_set;
    assert_int_equal(applier_recover(f->a), 0);
    assert_int_equal(f->rec.n_set, sets);
    assert_mask(&ft->mask, "1");
    assert_mask(&ft2->mask, "0");
    char want[256];
    snprintf(want, sizeof want, "state file %s: corrupted (checksum mismatch), ignoring it", f->state_file);
    assert_true(logged(want));
    assert_true(logged("damaged, nothing in it restored: tasks a previous run confined may keep their masks"));
    assert_int_equal(access(f->state_file, F_OK), -1);
    /* 601 is jitter again: its confined mask is not taken silently */
    assert_int_equal(applier_pack_task(f->a, &t2, &plan), 0);
    assert_true(logged("pid 601 (w2): mask 0 may be one a previous run set"));

    /* cut short, after the line of 601 or 600 (in the order written): those
     * lines that match their live task are restored; 602, changed by its
     * user since, is not */
    applier_free(f->a);
    ft->mask = set_of("0");
    ft3->mask = set_of("2");
    char *cut = strstr(whole, "\nend ");
    assert_non_null(cut);
    cut[1] = '\0';
    write_file(f->state_file, whole);
    assert_int_equal(applier_new(&f->ops, f->state_file, false, &f->a), 0);
    sets = f->rec.n_set;
    assert_int_equal(applier_recover(f->a), 2);
    assert_int_equal(f->rec.n_set, sets + 2);
    assert_mask(&ft->mask, "0-3");
    assert_mask(&ft2->mask, "0-3");
    assert_mask(&ft3->mask, "2");
    assert_true(logged("cut short; of its 3 task lines, 2 still matched"));
    ft->mask = set_of("1");
    sets = f->rec.n_set;

    /* another boot: the TIDs mean nothing now */
    struct applied_task rec = {.tid = 600,
                               .pid = 600,
                               .start_time = ft->start_time,
                               .original = set_of("0-3"),
                               .set = set_of("1"),
                               .comm = "w"};
    struct state other = {.boot_id = "99999999-2222-3333-4444-555555555555", .tasks = &rec, .n_tasks = 1};
    assert_int_equal(state_write(f->state_file, &other, NULL), 0);
    assert_int_equal(applier_recover(f->a), 0);
    assert_int_equal(f->rec.n_set, sets);
    assert_mask(&ft->mask, "1");
    assert_true(logged("written during another boot"));
    assert_int_equal(access(f->state_file, F_OK), -1);
}

/* The state file's path, swapped for what another user planted when it
 * is opened again after the checked read of a damaged file (test-apply
 * links with --wrap=fopen and --wrap=openat): the window between that read
 * and a second open of the file, by path or by its directory. */
static const char *swap_path, *swap_with;
static unsigned swap_opens;

static void maybe_swap(const char *path)
{
    if (!swap_path)
        return;
    const char *base = strrchr(swap_path, '/') + 1;
    const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    if (strcmp(name, base) != 0 || ++swap_opens < 2)
        return;
    assert_int_equal(rename(swap_with, swap_path), 0);
    swap_path = NULL;
}

FILE *__real_fopen(const char *path, const char *mode);
FILE *__wrap_fopen(const char *path, const char *mode);
FILE *__wrap_fopen(const char *path, const char *mode)
{
    maybe_swap(path);
    return __real_fopen(path, mode);
}

int __real_openat(int dfd, const char *path, int flags, ...);
int __wrap_openat(int dfd, const char *path, int flags, ...);
int __wrap_openat(int dfd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;
    va_end(ap);
    maybe_swap(path);
    return __real_openat(dfd, path, flags, mode);
}

/* A damaged file is read again for what can be saved from it: never
 * through a name someone could have swapped since the checked read. Here a
 * task its administrator pinned to CPU 1 (600) and a planted file, a link
 * to lines that say a previous run confined it from 0-3: believed, the
 * salvage would widen the pin. */
static void test_salvage_reads_no_swapped_file(void **state)
{
    struct fx *f = *state;
    struct fake_task *ft = add_task(&f->rec, 600, "1");
    char planted[160], link_path[176], text[512];
    snprintf(planted, sizeof planted, "%s.planted", f->state_file);
    snprintf(link_path, sizeof link_path, "%s.link", f->state_file);
    snprintf(text, sizeof text, "turbosched-state 2\nboot %s\ntask 600 600 %llu 0-3 1 w\n", f->rec.boot_id,
             (unsigned long long)ft->start_time);
    write_file(planted, text);
    assert_int_equal(symlink(planted, link_path), 0);
    /* the daemon's own file, cut short (no end line), naming no live task */
    snprintf(text, sizeof text, "turbosched-state 2\nboot %s\n", f->rec.boot_id);
    write_file(f->state_file, text);
    applier_free(f->a);
    assert_int_equal(applier_new(&f->ops, f->state_file, false, &f->a), 0);
    swap_path = f->state_file;
    swap_with = link_path;
    swap_opens = 0;
    unsigned sets = f->rec.n_set;
    int r = applier_recover(f->a);
    swap_path = NULL;
    assert_int_equal(r, 0);
    assert_int_equal(f->rec.n_set, sets);
    assert_mask(&ft->mask, "1");
    assert_true(logged("is a symbolic link, refusing it"));
    unlink(planted);
    unlink(link_path);
}

/* --- the jitter slice ------------------------------------------------------------ */

static const struct slice_support slice_yes = {.supported = true, .default_slice_ns = FAKE_DEFAULT_SLICE};

static void test_slice_on_pack_restored_on_release(void **state)
{
    struct fx *f = *state;
    struct fake_task *ft = add_task(&f->rec, 100, "0-3");
    ft->attr.nice = -3;
    applier_set_jitter_slice(f->a, &slice_yes, 300000);
    cpu_set_t plan = set_of("0-1");
    struct task t = mk_task(&f->rec, 100, 100, "w");
    assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);
    assert_mask(&ft->mask, "0-1");
    assert_int_equal(ft->attr.runtime_ns, 300000);
    assert_int_equal(ft->attr.nice, -3); /* only the slice changes */
    const struct applied_task *at = applier_find(f->a, 100);
    assert_non_null(at);
    assert_true(at->slice.applied);
    assert_true(at->slice.orig_default);

    /* the state file carries it, for a daemon after a crash */
    assert_int_equal(applier_flush_state(f->a), 0);
    char text[4096];
    assert_true(read_file(f->state_file, text, sizeof text) > 0);
    assert_non_null(strstr(text, " 0-3 0-1 slice=p=0,n=-3,f=0x0,r=1400000,d=1,s=300000 w\n"));

    /* a repack to another mask keeps the slice as it is */
    unsigned setattrs = f->rec.n_setattr;
    plan = set_of("0");
    assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);
    assert_mask(&ft->mask, "0");
    assert_int_equal(f->rec.n_setattr, setattrs);
    assert_true(applier_find(f->a, 100)->slice.applied);

    /* released: the default slice again, as the default (runtime 0) */
    assert_int_equal(applier_restore_task(f->a, 100), 1);
    assert_mask(&ft->mask, "0-3");
    assert_int_equal(ft->attr.runtime_ns, FAKE_DEFAULT_SLICE);
    assert_int_equal(ft->attr.nice, -3);
    assert_int_equal(f->rec.n_setattr, setattrs + 1);

    /* restore_all (reload, stop, pause) takes it back too */
    assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);
    assert_int_equal(ft->attr.runtime_ns, 300000);
    assert_int_equal(applier_restore_all(f->a), 1);
    assert_int_equal(ft->attr.runtime_ns, FAKE_DEFAULT_SLICE);
    assert_int_equal(n_warnings, 0);
}

/* The slice is set while the task is still where it ran (its run queue's
 * lock is the daemon's CPU's, not the packed one's), then the mask; a mask
 * the kernel refuses takes the slice back. */
/* Task 100 ("w", CPUs 0-3) packed onto CPU 0 with a slice of 300 us. */
static struct fake_task *pack_with_slice(struct fx *f, struct task *t)
{
    struct fake_task *ft = add_task(&f->rec, 100, "0-3");
    applier_set_jitter_slice(f->a, &slice_yes, 300000);
    cpu_set_t plan = set_of("0");
    *t = mk_task(&f->rec, 100, 100, "w");
    assert_int_equal(applier_pack_task(f->a, t, &plan), 1);
    return ft;
}

static void test_slice_before_mask(void **state)
{
    struct fx *f = *state;
    struct task t;
    struct fake_task *ft = pack_with_slice(f, &t);
    cpu_set_t plan = set_of("0");
    assert_mask(&ft->mask, "0");
    assert_mask(&ft->mask_at_setattr, "0-3");
    assert_int_equal(ft->attr.runtime_ns, 300000);
    assert_true(applier_find(f->a, 100)->slice.applied);

    struct fake_task *refusing = add_task(&f->rec, 101, "0-3");
    refusing->set_err = -EPERM;
    struct task t2 = mk_task(&f->rec, 101, 101, "r");
    assert_int_equal(applier_pack_task(f->a, &t2, &plan), 0);
    assert_mask(&refusing->mask, "0-3");
    assert_int_equal(refusing->attr.runtime_ns, FAKE_DEFAULT_SLICE); /* given, then taken back */
    assert_int_equal(f->rec.n_setattr, 3);
    assert_null(applier_find(f->a, 101));
    assert_int_equal(applier_hands_off(f->a, 101), -EPERM);
}

static void test_slice_changed_after_us_left_alone(void **state)
{
    struct fx *f = *state;
    struct fake_task *ft = add_task(&f->rec, 100, "0-3");
    struct fake_task *ft2 = add_task(&f->rec, 101, "0-3");
    ft2->attr.runtime_ns = 2000000; /* a custom slice of its own */
    applier_set_jitter_slice(f->a, &slice_yes, 300000);
    cpu_set_t plan = set_of("0");
    struct task t = mk_task(&f->rec, 100, 100, "w"), t2 = mk_task(&f->rec, 101, 101, "w2");
    assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);
    assert_int_equal(applier_pack_task(f->a, &t2, &plan), 1);
    assert_int_equal(ft2->attr.runtime_ns, 300000);

    /* someone renices 100 after us: its attributes are theirs now */
    ft->attr.nice = 7;
    unsigned setattrs = f->rec.n_setattr;
    assert_int_equal(applier_restore_task(f->a, 100), 1);
    assert_mask(&ft->mask, "0-3");
    assert_int_equal(ft->attr.nice, 7);
    assert_int_equal(ft->attr.runtime_ns, 300000);
    assert_int_equal(f->rec.n_setattr, setattrs);
    assert_true(logged("pid 100 (w): scheduling attributes changed by someone else after us, leaving them alone"));

    /* its own custom slice comes back as it was, not as the default */
    assert_int_equal(applier_restore_task(f->a, 101), 1);
    assert_int_equal(ft2->attr.runtime_ns, 2000000);
}

static void test_slice_never_on_realtime(void **state)
{
    struct fx *f = *state;
    struct fake_task *fifo = add_task(&f->rec, 100, "0-3");
    fifo->attr = (struct sysops_sched_attr){.policy = SCHED_FIFO, .priority = 10};
    struct fake_task *idle = add_task(&f->rec, 101, "0-3");
    idle->attr.policy = SCHED_IDLE;
    applier_set_jitter_slice(f->a, &slice_yes, 300000);
    cpu_set_t plan = set_of("0");
    struct task t = mk_task(&f->rec, 100, 100, "rt"), t2 = mk_task(&f->rec, 101, 101, "idle");
    assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);
    assert_int_equal(applier_pack_task(f->a, &t2, &plan), 1);
    assert_mask(&fifo->mask, "0"); /* the mask still packs it */
    assert_int_equal(f->rec.n_setattr, 0);
    assert_int_equal(fifo->attr.runtime_ns, 0);
    assert_false(applier_find(f->a, 100)->slice.applied);
    assert_int_equal(applier_restore_all(f->a), 2);
    assert_int_equal(f->rec.n_setattr, 0);
    assert_int_equal(fifo->attr.policy, SCHED_FIFO);
}

static void test_slice_unsupported_masks_only(void **state)
{
    struct fx *f = *state;
    struct fake_task *ft = add_task(&f->rec, 100, "0-3");
    struct slice_support no = {.supported = false, .reason = "kernel ignores sched_runtime"};
    applier_set_jitter_slice(f->a, &no, 300000);
    cpu_set_t plan = set_of("0");
    struct task t = mk_task(&f->rec, 100, 100, "w");
    assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);
    assert_mask(&ft->mask, "0");
    assert_int_equal(f->rec.n_setattr, 0);
    assert_int_equal(ft->attr.runtime_ns, FAKE_DEFAULT_SLICE);
    assert_false(applier_find(f->a, 100)->slice.applied);
    assert_int_equal(applier_restore_task(f->a, 100), 1);
    assert_mask(&ft->mask, "0-3");
    assert_int_equal(f->rec.n_setattr, 0);
    assert_int_equal(n_warnings, 0);

    /* off (0) under a kernel that has it: masks only as well */
    applier_set_jitter_slice(f->a, &slice_yes, 0);
    assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);
    assert_int_equal(f->rec.n_setattr, 0);
}

static void test_slice_recovered_after_crash(void **state)
{
    struct fx *f = *state;
    struct fake_task *ft = add_task(&f->rec, 100, "0-3");
    struct fake_task *moved = add_task(&f->rec, 101, "0-3");
    struct fake_task *reniced = add_task(&f->rec, 102, "0-3");
    applier_set_jitter_slice(f->a, &slice_yes, 300000);
    cpu_set_t plan = set_of("0");
    for (pid_t tid = 100; tid <= 102; tid++) {
        struct task t = mk_task(&f->rec, tid, tid, "w");
        assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);
    }
    assert_int_equal(applier_flush_state(f->a), 0);

    /* kill -9; meanwhile a user moves 101's mask and renices 102 */
    applier_free(f->a);
    moved->mask = set_of("2");
    reniced->attr.nice = 4;
    assert_int_equal(applier_new(&f->ops, f->state_file, false, &f->a), 0);
    assert_int_equal(applier_recover(f->a), 3);
    assert_mask(&ft->mask, "0-3");
    assert_int_equal(ft->attr.runtime_ns, FAKE_DEFAULT_SLICE);
    /* the slice is ours even where the mask is not any more */
    assert_mask(&moved->mask, "2");
    assert_int_equal(moved->attr.runtime_ns, FAKE_DEFAULT_SLICE);
    /* the attributes are theirs: the mask alone comes back */
    assert_mask(&reniced->mask, "0-3");
    assert_int_equal(reniced->attr.runtime_ns, 300000);
    assert_int_equal(reniced->attr.nice, 4);
}

/* fork copies the slice with the mask: a thread created by a packed one,
 * adopted or found later, gets its creator's own attributes back. */
static void test_slice_inherited(void **state)
{
    struct fx *f = *state;
    struct fake_task *leader = add_task(&f->rec, 160, "0-3");
    applier_set_jitter_slice(f->a, &slice_yes, 300000);
    struct task t = mk_task(&f->rec, 160, 160, "parent");
    cpu_set_t plan = set_of("1");
    assert_int_equal(applier_pack_task(f->a, &t, &plan), 1);
    assert_int_equal(leader->attr.runtime_ns, 300000);

    struct fake_task *child = add_task(&f->rec, 161, "1");
    child->attr = leader->attr;
    assert_int_equal(applier_adopt_inherited(f->a, 161, 160, child->start_time, 160), 1);
    struct fake_task *unseen = add_task(&f->rec, 164, "1");
    unseen->attr = leader->attr;
    struct task tu = mk_task(&f->rec, 164, 160, "parent");
    unsigned setattrs = f->rec.n_setattr;
    assert_int_equal(applier_pack_task(f->a, &tu, &plan), 0);
    assert_int_equal(f->rec.n_setattr, setattrs);
    assert_true(applier_find(f->a, 164)->slice.applied);

    assert_int_equal(applier_restore_all(f->a), 3);
    assert_int_equal(leader->attr.runtime_ns, FAKE_DEFAULT_SLICE);
    assert_int_equal(child->attr.runtime_ns, FAKE_DEFAULT_SLICE);
    assert_int_equal(unseen->attr.runtime_ns, FAKE_DEFAULT_SLICE);
}

static void test_slice_dry_run(void **state)
{
    struct fx *f = *state;
    struct task t;
    struct fake_task *ft = pack_with_slice(f, &t);
    assert_true(logged("would give pid 100 (w) a slice of 300 us"));
    assert_int_equal(f->rec.n_setattr, 0);
    assert_int_equal(ft->attr.runtime_ns, FAKE_DEFAULT_SLICE);
    assert_int_equal(applier_restore_task(f->a, 100), 1);
    assert_int_equal(f->rec.n_setattr, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pack_intersects_with_original, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_intersection_left_alone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_packed_task_narrowed_out_of_plan_restored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restore_exact_original, setup, teardown),
        cmocka_unit_test_setup_teardown(test_someone_else_changed_not_restored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_someone_else_logs_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_verify_forgets_changed_tasks_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_esrch_forgets_quietly, setup, teardown),
        cmocka_unit_test_setup_teardown(test_eperm_logged_once_left_alone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tid_reuse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inherited_threads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dry_run_changes_nothing, setup_dry, teardown),
        cmocka_unit_test_setup_teardown(test_iteration, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cpuset_group, setup, teardown),
        cmocka_unit_test(test_bitmask),
        cmocka_unit_test_setup_teardown(test_unit_allowed_cpus, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unit_set_timed_out, setup, teardown),
        cmocka_unit_test(test_bus_messages),
        cmocka_unit_test_setup_teardown(test_flush_writes_once_per_batch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flush_changes_only_for_changes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_early_write_due_from_change, setup, teardown),
        cmocka_unit_test_setup_teardown(test_group_change_written_whole, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deleted_file_written_again, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recover_after_crash, setup, teardown),
        cmocka_unit_test_setup_teardown(test_salvage_reads_no_swapped_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recover_ignores_bad_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recover_offspring, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hotplug_keeps_task, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hotplug_kernel_fallback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hotplug_never_woken, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hotplug_woken_while_going_down, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hotplug_original_is_full_mask, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pid_reused_before_pack, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fresh_start_not_read_again, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unseen_child_of_packed_parent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slice_on_pack_restored_on_release, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slice_before_mask, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slice_changed_after_us_left_alone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slice_never_on_realtime, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slice_unsupported_masks_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slice_recovered_after_crash, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slice_inherited, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slice_dry_run, setup_dry, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
