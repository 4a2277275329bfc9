/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "engine-fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include "config.h"
#include "engine-internal.h"
#include "histogram.h"
#include "task.h"
#include "log.h"
#include "procscan.h"
#include "report.h"
#include "util.h"

#define TOPOLOGY TS_FIXTURES "/x86-smt2-2s/sys"
#define TOPOLOGY_2CPU TS_FIXTURES "/vm-2cpu/sys"

/*                                   cpu 0   1    2  3  4   5  6  7  8   9    10 11 12  13 14 15 */
const unsigned efx_busy_load[EFX_N_CPUS] = {50, 100, 0, 0, 40, 0, 0, 0, 50, 100, 0, 0, 40, 0, 0, 0};
const unsigned efx_no_load[EFX_N_CPUS];

/* --- log capture ------------------------------------------------------------ */

static char captured[1 << 16];

static void sink(int level, const char *msg, void *userdata)
{
    size_t n = strlen(captured);
    snprintf(captured + n, sizeof captured - n, "<%d>%s\n", level, msg);
}

const char *efx_log(void) { return captured; }

void efx_log_reset(void)
{
    captured[0] = '\0';
    log_set_sink(sink, NULL);
}

/* --- real tasks ----------------------------------------------------------------- */

static void *sleeper(void *arg)
{
    int fd = *(int *)arg;
    pid_t tid = (pid_t)syscall(SYS_gettid);
    if (write(fd, &tid, sizeof tid) != sizeof tid)
        _exit(1);
    for (;;)
        pause();
    return NULL;
}

/* A child that sleeps until killed (or until the test dies); with_thread:
 * it runs a second thread too, whose TID goes to *thread_tid. */
static pid_t spawn(bool with_thread, pid_t *thread_tid)
{
    int p[2];
    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        close(p[0]);
        pthread_t th;
        if (with_thread) {
            if (pthread_create(&th, NULL, sleeper, &p[1]) != 0)
                _exit(1);
        } else {
            pid_t none = 0;
            if (write(p[1], &none, sizeof none) != sizeof none)
                _exit(1);
        }
        for (;;)
            pause();
    }
    close(p[1]);
    pid_t tid = 0;
    assert_int_equal(read(p[0], &tid, sizeof tid), (ssize_t)sizeof tid);
    close(p[0]);
    if (thread_tid)
        *thread_tid = tid;
    return pid;
}

static void reap(pid_t pid)
{
    if (pid <= 0)
        return;
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* --- the tree ---------------------------------------------------------------- */

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "we");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

static void write_at(const char *dir, const char *file, const char *text)
{
    char path[PATH_MAX];
    int n = snprintf(path, sizeof path, "%s/%s", dir, file);
    assert_true(n > 0 && (size_t)n < sizeof path);
    write_text(path, text);
}

static void mkdirs(const char *path)
{
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", path);
    assert_int_equal(system(cmd), 0);
}

/* /proc/PID/task/TID as the readers see it: stat (comm, state, the start
 * time, last CPU 0), status, comm, schedstat (a runtime that does not grow:
 * the jitter load stays 0); and the process-wide files. */
static void write_task(struct engine_fixture *fx, pid_t pid, pid_t tid, const char *comm, uint64_t start_time)
{
    char dir[PATH_MAX], text[1024];
    snprintf(dir, sizeof dir, "%s/proc/%d/task/%d", fx->root, (int)pid, (int)tid);
    mkdirs(dir);
    snprintf(text, sizeof text,
             "%d (%s) S 1 %d %d 0 -1 4194304 100 0 0 0 250 50 0 0 20 0 1 0 %llu 1000000 100 "
             "18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n",
             (int)tid, comm, (int)pid, (int)pid, (unsigned long long)start_time);
    write_at(dir, "stat", text);
    snprintf(text, sizeof text,
             "Name:\t%s\nState:\tS (sleeping)\nTgid:\t%d\nPid:\t%d\nPPid:\t1\n"
             "Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\n",
             comm, (int)pid, (int)tid);
    write_at(dir, "status", text);
    snprintf(text, sizeof text, "%s\n", comm);
    write_at(dir, "comm", text);
    write_at(dir, "schedstat", "1000000 0 10\n");

    snprintf(dir, sizeof dir, "%s/proc/%d", fx->root, (int)pid);
    if (pid == tid) {
        snprintf(text, sizeof text, "Name:\t%s\nTgid:\t%d\nPid:\t%d\nUid:\t0\t0\t0\t0\n", comm, (int)pid, (int)pid);
        write_at(dir, "status", text);
        write_at(dir, "cmdline", comm);
        write_at(dir, "cgroup", "0::/system.slice/fixture.service\n");
    }
}

/* --- the fake sysops ---------------------------------------------------------------- */

static struct efx_fake_task *fake_find(struct efx_fake *f, pid_t tid)
{
    for (size_t i = 0; i < f->n_tasks; i++)
        if (f->tasks[i].tid == tid)
            return &f->tasks[i];
    return NULL;
}

static int f_getaffinity(void *ud, pid_t tid, cpu_set_t *ret)
{
    struct efx_fake_task *t = fake_find(ud, tid);
    if (!t)
        return -ESRCH;
    *ret = t->mask;
    return 0;
}

static int f_setaffinity(void *ud, pid_t tid, const cpu_set_t *mask)
{
    struct efx_fake *f = ud;
    struct efx_fake_task *t = fake_find(f, tid);
    if (!t)
        return -ESRCH;
    if (CPU_COUNT(mask) == 0)
        return -EINVAL;
    t->mask = *mask;
    f->n_setaffinity++;
    return 0;
}

static int f_task_start_time(void *ud, pid_t tid, uint64_t *ret)
{
    struct efx_fake_task *t = fake_find(ud, tid);
    if (!t)
        return -ESRCH;
    *ret = t->start_time;
    return 0;
}

static int f_parent_of(void *ud, pid_t tid, pid_t *ret)
{
    struct efx_fake_task *t = fake_find(ud, tid);
    if (!t)
        return -ESRCH;
    *ret = t->ppid;
    return 0;
}

static int f_boot_id(void *ud, char *buf, size_t size)
{
    snprintf(buf, size, "efx00000-0000-0000-0000-000000000000");
    return 0;
}

static int f_online_cpus(void *ud, cpu_set_t *ret)
{
    *ret = ((struct efx_fake *)ud)->online;
    return 0;
}

static int f_threads_of(void *ud, pid_t pid, pid_t *buf, size_t max)
{
    struct efx_fake *f = ud;
    size_t n = 0;
    for (size_t i = 0; i < f->n_tasks; i++)
        if (f->tasks[i].pid == pid) {
            if (n < max)
                buf[n] = f->tasks[i].tid;
            n++;
        }
    return n ? (int)n : -ESRCH;
}

static int f_children_of(void *ud, pid_t tid, pid_t *buf, size_t max) { return fake_find(ud, tid) ? 0 : -ESRCH; }

/* The fixture's configuration uses neither cpuset groups nor units. */
static int f_cpuset_task_path(void *ud, pid_t tid, char *buf, size_t size) { return -EOPNOTSUPP; }
static int f_cpuset_read(void *ud, const char *group, const char *key, char *buf, size_t size) { return -EOPNOTSUPP; }
static int f_cpuset_create(void *ud, const char *group, const char *cpus, const char *mems) { return -EOPNOTSUPP; }
static int f_cpuset_write(void *ud, const char *group, const char *key, const char *value) { return -EOPNOTSUPP; }
static int f_cpuset_attach(void *ud, const char *group, pid_t tid) { return -EOPNOTSUPP; }
static int f_cpuset_delete(void *ud, const char *group) { return -EOPNOTSUPP; }
static int f_unit_get(void *ud, const char *unit, uint8_t *buf, size_t size) { return -EOPNOTSUPP; }
static int f_unit_set(void *ud, const char *unit, const uint8_t *bits, size_t n) { return -EOPNOTSUPP; }

static struct sysops fake_ops(struct efx_fake *f)
{
    return (struct sysops){
        .userdata = f,
        .getaffinity = f_getaffinity,
        .setaffinity = f_setaffinity,
        .task_start_time = f_task_start_time,
        .parent_of = f_parent_of,
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
    };
}

void efx_set_schedstat(struct engine_fixture *fx, pid_t pid, pid_t tid, uint64_t run_ns, uint64_t wait_ns,
                       uint64_t slices)
{
    char dir[PATH_MAX], text[96];
    snprintf(dir, sizeof dir, "%s/proc/%d/task/%d", fx->root, (int)pid, (int)tid);
    snprintf(text, sizeof text, "%llu %llu %llu\n", (unsigned long long)run_ns, (unsigned long long)wait_ns,
             (unsigned long long)slices);
    write_at(dir, "schedstat", text);
}

void efx_add_task(struct engine_fixture *fx, pid_t pid, pid_t tid, const char *comm)
{
    assert_false(fx->real);
    struct efx_fake *f = &fx->fake;
    assert_null(fake_find(f, tid));
    assert_true(f->n_tasks < ELEMENTSOF(f->tasks));
    /* start times as /proc/TID/stat gives them, distinct per task */
    struct efx_fake_task *t = &f->tasks[f->n_tasks++];
    /* Started a few seconds after boot (ticks): before any fork event the
     * tests stamp with the time now, however recently the machine booted
     * (a fork event older than the start is a reused TID's). */
    *t = (struct efx_fake_task){
        .pid = pid, .tid = tid, .ppid = 1, .start_time = 100 + (uint64_t)tid, .mask = fx->real_mask};
    write_task(fx, pid, tid, comm, t->start_time);
}

void efx_set_parent(struct engine_fixture *fx, pid_t tid, pid_t ppid)
{
    struct efx_fake_task *t = fake_find(&fx->fake, tid);
    assert_non_null(t);
    t->ppid = ppid;
}

void efx_remove_task(struct engine_fixture *fx, pid_t pid, pid_t tid)
{
    struct efx_fake *f = &fx->fake;
    struct efx_fake_task *t = fake_find(f, tid);
    assert_non_null(t);
    *t = f->tasks[--f->n_tasks];
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/proc/%d/task/%d'", fx->root, (int)pid, (int)tid);
    assert_int_equal(system(cmd), 0);
}

const cpu_set_t *efx_fake_mask(struct engine_fixture *fx, pid_t tid)
{
    struct efx_fake_task *t = fake_find(&fx->fake, tid);
    if (!t)
        fail_msg("tid %d is not a fake task", (int)tid);
    return &t->mask;
}

/* A real task (efx_setup_real): listed with its real start time. */
static void add_real_task(struct engine_fixture *fx, pid_t pid, pid_t tid, const char *comm)
{
    struct task real = {0};
    assert_int_equal(procscan_read_stat("/", pid, tid, &real), 0);
    write_task(fx, pid, tid, comm, real.start_time);
}

static void write_stat(struct engine_fixture *fx)
{
    char text[4096], path[PATH_MAX];
    unsigned long long busy = 0, idle = 0;
    for (int i = 0; i < fx->n_cpus; i++) {
        busy += fx->busy[i];
        idle += fx->idle[i];
    }
    size_t n = (size_t)snprintf(text, sizeof text, "cpu  %llu 0 0 %llu 0 0 0 0 0 0\n", busy, idle);
    for (int i = 0; i < fx->n_cpus; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "cpu%d %llu 0 0 %llu 0 0 0 0 0 0\n", i, fx->busy[i],
                              fx->idle[i]);
    snprintf(text + n, sizeof text - n, "intr 0\nctxt 0\nbtime 0\nprocesses 1\n");
    assert_true(strlen(text) < sizeof text - 1);
    snprintf(path, sizeof path, "%s/proc/stat", fx->root);
    write_text(path, text);
}

void efx_write_config(struct engine_fixture *fx, bool rules, const char *extra)
{
    char text[4096];
    int n = snprintf(text, sizeof text,
                     "[daemon]\n"
                     "dry_run = %s\n"
                     "state_file = %s/state\n"
                     "[packing]\n"
                     "hold_time = 0\n"
                     "min_change_interval = 0\n"
                     "half_life = 1ms\n"
                     "[classify]\n"
                     "uclamp = no\n"
                     "unit_optin = no\n"
                     "%s%s",
                     fx->live ? "no" : "yes", fx->root,
                     rules ? "[rule jitterbugs]\ncomm = jitterbug\nclass = jitter\n"
                             "[rule crunchers]\ncomm = crunch\nclass = intensive\n"
                           : "",
                     extra ? extra : "");
    assert_true(n > 0 && (size_t)n < sizeof text);
    write_text(fx->conf, text);
}

void efx_put(struct engine_fixture *fx, const char *rel, const char *text)
{
    char path[PATH_MAX], dir[PATH_MAX];
    int n = snprintf(path, sizeof path, "%s/%s", fx->root, rel);
    assert_true(n > 0 && (size_t)n < sizeof path);
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    mkdirs(dir);
    write_text(path, text);
}

/* The tree, the config, the tasks (made up, or forked when real), the engine. */
static int setup(void **state, bool real, bool live, bool two_cpus)
{
    struct engine_fixture *fx = calloc(1, sizeof *fx);
    assert_non_null(fx);
    fx->real = real;
    fx->live = live;
    fx->n_cpus = two_cpus ? 2 : EFX_N_CPUS;
    efx_log_reset();
    /* under TMPDIR when set: the fake needs no privilege, nor a writable build tree */
    const char *tmp = getenv("TMPDIR");
    snprintf(fx->root, sizeof fx->root, "%s/engine-XXXXXX", tmp && *tmp ? tmp : TS_BUILD_DIR);
    assert_non_null(mkdtemp(fx->root));
    snprintf(fx->conf, sizeof fx->conf, "%s/turbosched.conf", fx->root);

    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/sys", fx->root);
    if (two_cpus) {
        char cmd[2 * PATH_MAX];
        snprintf(cmd, sizeof cmd, "cp -r '%s' '%s'", TOPOLOGY_2CPU, path);
        assert_int_equal(system(cmd), 0);
    } else {
        assert_int_equal(symlink(TOPOLOGY, path), 0);
    }
    snprintf(path, sizeof path, "%s/proc", fx->root);
    mkdirs(path);

    if (real) {
        fx->jit_a = spawn(false, NULL);
        fx->jit_b = spawn(true, &fx->jit_b_thread);
        fx->crunch = spawn(false, NULL);
        fx->self = getpid();
        assert_int_equal(sched_getaffinity(fx->jit_a, sizeof fx->real_mask, &fx->real_mask), 0);
        add_real_task(fx, fx->jit_a, fx->jit_a, "jitterbug");
        add_real_task(fx, fx->jit_b, fx->jit_b, "jitterbug");
        add_real_task(fx, fx->jit_b, fx->jit_b_thread, "jitterbug");
        add_real_task(fx, fx->crunch, fx->crunch, "crunch");
        add_real_task(fx, fx->self, fx->self, "runner");
    } else {
        /* every CPU of the fixture's topology online, every task on all of them */
        for (int i = 0; i < fx->n_cpus; i++)
            CPU_SET(i, &fx->fake.online);
        fx->real_mask = fx->fake.online;
        fx->ops = fake_ops(&fx->fake);
        fx->jit_a = 1001;
        fx->jit_b = 1002;
        fx->jit_b_thread = 1003;
        fx->crunch = 1004;
        fx->self = 1005;
        efx_add_task(fx, fx->jit_a, fx->jit_a, "jitterbug");
        efx_add_task(fx, fx->jit_b, fx->jit_b, "jitterbug");
        efx_add_task(fx, fx->jit_b, fx->jit_b_thread, "jitterbug");
        efx_add_task(fx, fx->crunch, fx->crunch, "crunch");
        efx_add_task(fx, fx->self, fx->self, "runner");
    }

    for (int i = 0; i < EFX_N_CPUS; i++) {
        fx->busy[i] = 1000;
        fx->idle[i] = 100000;
    }
    write_stat(fx);

    efx_write_config(fx, true, NULL);
    struct config *cfg = NULL;
    assert_int_equal(config_load(fx->conf, NULL, &cfg), 0);
    struct engine_params p = {
        .config_path = fx->conf,
        .root = fx->root,
        .dry_run = !live,
        .log_level = -1,
        .sysops = real ? NULL : &fx->ops,
        .events_from_caller = !real,
    };
    assert_int_equal(engine_new(cfg, &p, &fx->e), 0);
    *state = fx;
    return 0;
}

int efx_setup(void **state) { return setup(state, false, false, false); }
int efx_setup_live(void **state) { return setup(state, false, true, false); }
int efx_setup_real(void **state) { return setup(state, true, false, false); }
int efx_setup_2cpu(void **state) { return setup(state, false, true, true); }

pid_t efx_spawn_real(struct engine_fixture *fx, const char *comm)
{
    assert_true(fx->real);
    assert_true(fx->n_spawned < ELEMENTSOF(fx->spawned));
    int go[2];
    assert_int_equal(pipe2(go, O_CLOEXEC), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        close(go[1]);
        char c;
        if (read(go[0], &c, 1) == 1)
            prctl(PR_SET_NAME, comm);
        for (;;)
            pause();
    }
    close(go[0]);
    fx->spawned[fx->n_spawned] = pid;
    fx->spawned_go[fx->n_spawned++] = go[1];
    add_real_task(fx, pid, pid, comm);
    return pid;
}

void efx_rename_real(struct engine_fixture *fx, pid_t pid)
{
    for (size_t i = 0; i < fx->n_spawned; i++)
        if (fx->spawned[i] == pid) {
            assert_int_equal(write(fx->spawned_go[i], "x", 1), 1);
            return;
        }
    fail_msg("pid %d was not spawned by efx_spawn_real", (int)pid);
}
int efx_teardown(void **state)
{
    struct engine_fixture *fx = *state;
    if (!fx)
        return 0;
    engine_free(fx->e);
    if (fx->real) {
        reap(fx->jit_a);
        reap(fx->jit_b);
        reap(fx->crunch);
        for (size_t i = 0; i < fx->n_spawned; i++) {
            reap(fx->spawned[i]);
            close(fx->spawned_go[i]);
        }
    }
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fx->root);
    int r = system(cmd);
    log_set_sink(NULL, NULL);
    free(fx);
    return r == 0 ? 0 : -1;
}

void efx_start(struct engine_fixture *fx)
{
    if (!fx->real) {
        assert_int_equal(engine_start(fx->e), 0);
        return;
    }
    cpu_set_t plan, narrowed;
    assert_int_equal(cpulist_parse(EFX_BUSY_PLAN, &plan), 0);
    CPU_AND(&narrowed, &plan, &fx->real_mask);
    if (CPU_COUNT(&narrowed) == 0 || CPU_EQUAL(&narrowed, &fx->real_mask)) {
        print_message("skipped: this process's CPU mask leaves the fixture's plan " EFX_BUSY_PLAN
                      " nothing to narrow\n");
        skip();
    }
    int r = engine_start(fx->e);
    if (r == -EPERM) {
        print_message("skipped: opening the proc connector needs CAP_NET_ADMIN\n");
        skip();
    }
    assert_int_equal(r, 0);
}

void efx_tick_with(struct engine_fixture *fx, const unsigned util_pct[EFX_N_CPUS])
{
    for (int i = 0; i < EFX_N_CPUS; i++) {
        assert_true(util_pct[i] <= 100);
        fx->busy[i] += util_pct[i] * 10;
        fx->idle[i] += (100 - util_pct[i]) * 10;
    }
    write_stat(fx);
    /* With half_life 1ms, 30ms leave 2^-30 of the previous sample. */
    nanosleep(&(struct timespec){.tv_nsec = 30 * 1000 * 1000}, NULL);
    assert_int_equal(engine_tick(fx->e), 0);
}

const char *efx_fmt(const cpu_set_t *set)
{
    static char bufs[4][256];
    static unsigned next;
    char *b = bufs[next++ % 4];
    assert_int_equal(cpulist_format(set, b, 256), 0);
    return b;
}

/* One sample's value of a metrics family (label, value: NULL for none); -1 if absent. */
double efx_metric(struct engine_fixture *fx, const char *family, const char *label, const char *value)
{
    struct json_object *o = report_metrics(fx->e), *arr, *samples, *v, *l;
    double found = -1;
    assert_true(json_object_object_get_ex(o, "metrics", &arr));
    for (size_t i = 0; i < json_object_array_length(arr); i++) {
        struct json_object *f = json_object_array_get_idx(arr, i), *name;
        if (!json_object_object_get_ex(f, "name", &name) || strcmp(json_object_get_string(name), family) != 0)
            continue;
        assert_true(json_object_object_get_ex(f, "samples", &samples));
        for (size_t k = 0; k < json_object_array_length(samples); k++) {
            struct json_object *sm = json_object_array_get_idx(samples, k);
            bool match = !label;
            if (label && json_object_object_get_ex(sm, "labels", &l) && json_object_object_get_ex(l, label, &v))
                match = strcmp(json_object_get_string(v), value) == 0;
            if (match && json_object_object_get_ex(sm, "value", &v))
                found = json_object_get_double(v);
        }
    }
    json_object_put(o);
    return found;
}

unsigned efx_packed_at_tick(struct engine_fixture *fx) { return fx->e->n_packed; }

int efx_track(struct engine_fixture *fx, pid_t pid, pid_t tid)
{
    return task_table_add(fx->e->tasks, &(struct task){.tid = tid, .pid = pid, .rule = -1}, NULL);
}

struct histogram *efx_placement_latency(struct engine_fixture *fx) { return &fx->e->events.placement_latency; }
