#include "engine-fixture.h"
#include "procmon.h"

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

#include "config.h"
#include "log.h"
#include "procscan.h"
#include "util.h"

#define TOPOLOGY TS_FIXTURES "/x86-smt2-2s/sys"

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

/* /proc/PID/task/TID as the readers see it: stat (comm, state, the real
 * start time, last CPU 0), status, comm, schedstat (a runtime that does not
 * grow: the jitter load stays 0); and the process-wide files. */
static void add_task(struct engine_fixture *fx, pid_t pid, pid_t tid, const char *comm)
{
    struct task real = {0};
    assert_int_equal(procscan_read_stat("/", pid, tid, &real), 0);

    char dir[PATH_MAX], text[1024];
    snprintf(dir, sizeof dir, "%s/proc/%d/task/%d", fx->root, (int)pid, (int)tid);
    mkdirs(dir);
    snprintf(text, sizeof text,
             "%d (%s) S 1 %d %d 0 -1 4194304 100 0 0 0 250 50 0 0 20 0 1 0 %llu 1000000 100 "
             "18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n",
             (int)tid, comm, (int)pid, (int)pid, (unsigned long long)real.start_time);
    write_at(dir, "stat", text);
    snprintf(text, sizeof text, "Name:\t%s\nState:\tS (sleeping)\nTgid:\t%d\nPid:\t%d\nPPid:\t1\n"
             "Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\n", comm, (int)pid, (int)tid);
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

static void write_stat(struct engine_fixture *fx)
{
    char text[4096], path[PATH_MAX];
    unsigned long long busy = 0, idle = 0;
    for (int i = 0; i < EFX_N_CPUS; i++) {
        busy += fx->busy[i];
        idle += fx->idle[i];
    }
    size_t n = (size_t)snprintf(text, sizeof text, "cpu  %llu 0 0 %llu 0 0 0 0 0 0\n", busy, idle);
    for (int i = 0; i < EFX_N_CPUS; i++)
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
                     "dry_run = yes\n"
                     "state_file = %s/state\n"
                     "[packing]\n"
                     "hold_time = 0\n"
                     "min_change_interval = 0\n"
                     "half_life = 1ms\n"
                     "[classify]\n"
                     "uclamp = no\n"
                     "unit_optin = no\n"
                     "%s%s",
                     fx->root,
                     rules ? "[rule jitterbugs]\ncomm = jitterbug\nclass = jitter\n"
                             "[rule crunchers]\ncomm = crunch\nclass = intensive\n"
                           : "",
                     extra ? extra : "");
    assert_true(n > 0 && (size_t)n < sizeof text);
    write_text(fx->conf, text);
}

int efx_preflight(void)
{
    struct procmon *pm;
    int r = procmon_open(4096, &pm);
    if (r < 0) {
        printf("SKIP: opening the proc connector: %s (needs CAP_NET_ADMIN)\n", strerror(-r));
        return 77;
    }
    procmon_free(pm);
    return 0;
}

int efx_setup(void **state)
{
    struct engine_fixture *fx = calloc(1, sizeof *fx);
    assert_non_null(fx);
    efx_log_reset();
    snprintf(fx->root, sizeof fx->root, "%s/engine-XXXXXX", TS_BUILD_DIR);
    assert_non_null(mkdtemp(fx->root));
    snprintf(fx->conf, sizeof fx->conf, "%s/turbosched.conf", fx->root);

    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/sys", fx->root);
    assert_int_equal(symlink(TOPOLOGY, path), 0);
    snprintf(path, sizeof path, "%s/proc", fx->root);
    mkdirs(path);

    fx->jit_a = spawn(false, NULL);
    fx->jit_b = spawn(true, &fx->jit_b_thread);
    fx->crunch = spawn(false, NULL);
    fx->self = getpid();
    assert_int_equal(sched_getaffinity(fx->jit_a, sizeof fx->real_mask, &fx->real_mask), 0);
    add_task(fx, fx->jit_a, fx->jit_a, "jitterbug");
    add_task(fx, fx->jit_b, fx->jit_b, "jitterbug");
    add_task(fx, fx->jit_b, fx->jit_b_thread, "jitterbug");
    add_task(fx, fx->crunch, fx->crunch, "crunch");
    add_task(fx, fx->self, fx->self, "runner");

    for (int i = 0; i < EFX_N_CPUS; i++) {
        fx->busy[i] = 1000;
        fx->idle[i] = 100000;
    }
    write_stat(fx);

    efx_write_config(fx, true, NULL);
    struct config *cfg = NULL;
    assert_int_equal(config_load(fx->conf, NULL, &cfg), 0);
    struct engine_params p = {.config_path = fx->conf, .root = fx->root, .dry_run = true, .log_level = -1};
    assert_int_equal(engine_new(cfg, &p, &fx->e), 0);
    *state = fx;
    return 0;
}

int efx_teardown(void **state)
{
    struct engine_fixture *fx = *state;
    if (!fx)
        return 0;
    engine_free(fx->e);
    reap(fx->jit_a);
    reap(fx->jit_b);
    reap(fx->crunch);
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fx->root);
    int r = system(cmd);
    log_set_sink(NULL, NULL);
    free(fx);
    return r == 0 ? 0 : -1;
}

void efx_start(struct engine_fixture *fx)
{
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
