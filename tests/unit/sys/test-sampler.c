/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The load sampler against a small /proc tree it writes: per-CPU figures
 * from /proc/stat, per-task figures from schedstat and stat, at times the
 * test chooses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sampler.h"
#include "task.h"
#include "util.h"

struct fx {
    char root[PATH_MAX / 2];
    struct sampler s;
    struct task_table *tt;
};

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "we");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

/* "mkdir -p" or "rm -rf" of path */
static void run(const char *what, const char *path)
{
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "%s '%s'", what, path);
    assert_int_equal(system(cmd), 0);
}

/* /proc/stat with n CPUs, cpuN busy[N] of 1000*ticks, absent where busy[N] < 0. */
static void write_stat(struct fx *f, const long long *busy, const long long *total, int n)
{
    char text[2048], path[PATH_MAX];
    size_t len = (size_t)snprintf(text, sizeof text, "cpu  0 0 0 0 0 0 0 0 0 0\n");
    for (int i = 0; i < n; i++)
        if (busy[i] >= 0)
            len += (size_t)snprintf(text + len, sizeof text - len, "cpu%d %lld 0 0 %lld 0 0 0 0 0 0\n", i, busy[i],
                                    total[i] - busy[i]);
    snprintf(text + len, sizeof text - len, "intr 0\nctxt 0\n");
    snprintf(path, sizeof path, "%s/proc/stat", f->root);
    write_text(path, text);
}

/* A task's schedstat (runtime) and stat (field 39: the CPU it last ran on). */
static void write_task(struct fx *f, pid_t tid, uint64_t runtime_ns, int cpu)
{
    char dir[PATH_MAX], path[PATH_MAX + 16], text[512];
    snprintf(dir, sizeof dir, "%s/proc/%d/task/%d", f->root, (int)tid, (int)tid);
    run("mkdir -p", dir);
    snprintf(path, sizeof path, "%s/schedstat", dir);
    snprintf(text, sizeof text, "%llu 0 10\n", (unsigned long long)runtime_ns);
    write_text(path, text);
    snprintf(path, sizeof path, "%s/stat", dir);
    snprintf(text, sizeof text,
             "%d (t) S 1 %d %d 0 -1 4194304 100 0 0 0 250 50 0 0 20 0 1 0 500 1000000 100 "
             "18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 %d 0 0 0 0 0\n",
             (int)tid, (int)tid, (int)tid, cpu);
    write_text(path, text);
}

/* A thread's stat in its process's task directory (field 39: its CPU). */
static void write_task_stat_in(struct fx *f, pid_t pid, pid_t tid, int cpu)
{
    char path[PATH_MAX], text[512];
    snprintf(path, sizeof path, "%s/proc/%d/task/%d/stat", f->root, (int)pid, (int)tid);
    snprintf(text, sizeof text,
             "%d (t) S 1 %d %d 0 -1 4194304 100 0 0 0 250 50 0 0 20 0 1 0 500 1000000 100 "
             "18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 %d 0 0 0 0 0\n",
             (int)tid, (int)pid, (int)pid, cpu);
    write_text(path, text);
}

/* A task the jitter sampler has already passed over once (its first read
 * is due): test_first_read_waits_a_tick shows that wait. */
static struct task *add(struct fx *f, pid_t tid, enum task_class cls)
{
    struct task proto = {
        .tid = tid, .pid = tid, .class = cls, .rule = -1, .last_cpu = -1, .flags = TASK_F_FIRST_READ_DUE};
    struct task *t;
    assert_int_equal(task_table_add(f->tt, &proto, &t), 0);
    return t;
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    assert_non_null(f);
    const char *tmp = getenv("TMPDIR");
    snprintf(f->root, sizeof f->root, "%s/sampler-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    assert_non_null(mkdtemp(f->root));
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/proc", f->root);
    run("mkdir -p", path);
    assert_int_equal(sampler_init(&f->s, f->root, 2), 0);
    assert_int_equal(task_table_new(1024, &f->tt), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    sampler_destroy(&f->s);
    task_table_free(f->tt);
    run("rm -rf", f->root);
    free(f);
    return 0;
}

/* No figure from one snapshot; the first delta taken as is; later ones
 * smoothed (half life = the interval: half old, half new). */
static void test_cpus_first_then_smoothed(void **state)
{
    struct fx *f = *state;
    long long busy[2] = {0, 0}, total[2] = {0, 0};
    write_stat(f, busy, total, 2);
    assert_int_equal(sampler_sample_cpus(&f->s, 1000, 100), 0);
    assert_int_equal(f->s.util_milli[0], -1);
    assert_int_equal(f->s.util_milli[1], -1);

    busy[0] += 800, total[0] += 1000; /* 80% */
    busy[1] += 100, total[1] += 1000; /* 10% */
    write_stat(f, busy, total, 2);
    assert_int_equal(sampler_sample_cpus(&f->s, 1100, 100), 0);
    assert_int_equal(f->s.util_milli[0], 800);
    assert_int_equal(f->s.util_milli[1], 100);

    busy[0] += 400, total[0] += 1000; /* 40% */
    busy[1] += 100, total[1] += 1000;
    write_stat(f, busy, total, 2);
    assert_int_equal(sampler_sample_cpus(&f->s, 1200, 100), 0);
    assert_int_equal(f->s.util_milli[0], (int)load_ewma(800, 400, 100, 100));
    assert_int_equal(f->s.util_milli[0], 600);
    assert_int_equal(f->s.util_milli[1], 100);
}

/* A CPU that goes offline loses its figure; one that comes online (a higher
 * CPU than at start: the caller grows the arrays, as the engine does when
 * the topology changes) starts without one. */
static void test_cpus_hotplug(void **state)
{
    struct fx *f = *state;
    long long busy[4] = {0, 0, -1, -1}, total[4] = {0, 0, 0, 0};
    write_stat(f, busy, total, 2);
    assert_int_equal(sampler_sample_cpus(&f->s, 1000, 0), 0);
    busy[0] = 500, total[0] = 1000, busy[1] = 500, total[1] = 1000;
    write_stat(f, busy, total, 2);
    assert_int_equal(sampler_sample_cpus(&f->s, 1100, 0), 0);
    assert_int_equal(f->s.util_milli[1], 500);

    busy[1] = -1; /* cpu1 offline, cpu3 online */
    busy[3] = 0, total[3] = 0;
    busy[0] += 200, total[0] += 1000;
    write_stat(f, busy, total, 4);
    assert_int_equal(sampler_sample_cpus(&f->s, 1200, 0), -ERANGE); /* more CPUs than it has room for */
    assert_int_equal(sampler_resize(&f->s, 4), 0);
    assert_int_equal(sampler_sample_cpus(&f->s, 1200, 0), 0);
    assert_int_equal(f->s.n_cpus, 4);
    assert_int_equal(f->s.util_milli[0], 200);
    assert_int_equal(f->s.util_milli[1], -1);
    assert_int_equal(f->s.util_milli[2], -1);
    assert_int_equal(f->s.util_milli[3], -1);

    busy[3] += 300, total[3] += 1000;
    write_stat(f, busy, total, 4);
    assert_int_equal(sampler_sample_cpus(&f->s, 1300, 0), 0);
    assert_int_equal(f->s.util_milli[3], 300);
    assert_int_equal(f->s.jitter_milli[3], 0);
}

static void test_cpus_unreadable(void **state)
{
    struct fx *f = *state;
    assert_int_equal(sampler_sample_cpus(&f->s, 1000, 0), -ENOENT);
}

/* The one reading and difference of a task's counters. */
static void test_task_delta(void **state)
{
    (void)state;
    struct task t = {.runtime_ns = 0, .sample_ms = 0};
    struct sampler_reading now = {.runtime_ns = 5000000};
    struct sampler_delta d;
    assert_false(sampler_task_delta(&t, &now, 100, &d)); /* never read */
    t.runtime_ns = 1000000, t.sample_ms = 100;
    assert_false(sampler_task_delta(&t, &now, 100, &d)); /* no time passed */
    assert_true(sampler_task_delta(&t, &now, 150, &d));
    assert_int_equal(d.dt_ms, 50);
    assert_int_equal(d.run_ns, 4000000);
    t.sample_ms = UINT32_MAX - 9; /* the ms clock wrapped */
    assert_true(sampler_task_delta(&t, &now, 10, &d));
    assert_int_equal(d.dt_ms, 20);
    now.runtime_ns = 500; /* went backwards */
    assert_false(sampler_task_delta(&t, &now, 200, &d));
}

/* Jitter tasks' CPU time, charged to the CPU each last ran on (at most a
 * whole CPU there), summed over all of them; other classes are not read. */
static void test_tasks_charged_to_their_cpu(void **state)
{
    struct fx *f = *state;
    struct task *a = add(f, 101, CLASS_JITTER), *b = add(f, 102, CLASS_JITTER), *c = add(f, 103, CLASS_JITTER);
    struct task *big = add(f, 104, CLASS_INTENSIVE);
    write_task(f, 101, 1000000, 1);
    write_task(f, 102, 1000000, 1);
    write_task(f, 103, 1000000, 0);
    write_task(f, 104, 1000000, 0);
    sampler_sample_tasks(&f->s, f->tt, 1000, 0);
    assert_int_equal(a->last_cpu, 1);
    assert_int_equal(c->last_cpu, 0);
    assert_int_equal(f->s.jitter_load_milli, 0);
    assert_int_equal(big->sample_ms, 0);

    /* over 100 ms: a ran 70 ms, b 50 ms (both on cpu 1), c 20 ms on cpu 0 */
    write_task(f, 101, 71000000, 1);
    write_task(f, 102, 51000000, 1);
    write_task(f, 103, 21000000, 0);
    write_task(f, 104, 91000000, 0);
    sampler_sample_tasks(&f->s, f->tt, 1100, 0);
    assert_int_equal(a->util_milli, 700);
    assert_int_equal(b->util_milli, 500);
    assert_int_equal(c->util_milli, 200);
    assert_int_equal(big->util_milli, 0);
    assert_int_equal(f->s.jitter_milli[1], 1000);
    assert_int_equal(f->s.jitter_milli[0], 200);
    assert_int_equal(f->s.jitter_load_milli, 1400);

    /* a and b sleep; c is gone, and keeps its figures until its exit
     * event removes it */
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/proc/103", f->root);
    run("rm -rf", path);
    sampler_sample_tasks(&f->s, f->tt, 1200, 0);
    assert_int_equal(a->util_milli, 0);
    assert_int_equal(b->util_milli, 0);
    assert_int_equal(c->util_milli, 200);
    assert_int_equal(f->s.jitter_milli[1], 0);
    assert_int_equal(f->s.jitter_load_milli, 200);
}

/* A new jitter task is first read at the tick after the one that first
 * saw it: that read only sets a baseline, and a short-lived task (most of
 * a fork storm) is gone before it would matter. */
static void test_first_read_waits_a_tick(void **state)
{
    struct fx *f = *state;
    struct task proto = {.tid = 401, .pid = 401, .class = CLASS_JITTER, .rule = -1, .last_cpu = -1};
    struct task *t;
    assert_int_equal(task_table_add(f->tt, &proto, &t), 0);
    write_task(f, 401, 1000000, 1);
    sampler_sample_tasks(&f->s, f->tt, 1000, 0);
    assert_int_equal(f->s.jitter_reads, 0);
    assert_int_equal(f->s.first_reads_deferred, 1);
    assert_int_equal(t->sample_ms, 0);
    assert_int_equal(t->last_cpu, -1);
    sampler_sample_tasks(&f->s, f->tt, 1100, 0);
    assert_int_equal(f->s.jitter_reads, 1);
    assert_int_equal(t->sample_ms, 1100);
    assert_int_equal(t->last_cpu, 1);
    /* then every tick, as any jitter task */
    write_task(f, 401, 51000000, 1);
    sampler_sample_tasks(&f->s, f->tt, 1200, 0);
    assert_int_equal(f->s.jitter_reads, 2);
    assert_int_equal(t->util_milli, 500);
    assert_int_equal(f->s.first_reads_deferred, 1);
}

/* A task that did not run is not asked for its CPU again. */
static void test_sleeping_task_keeps_its_cpu(void **state)
{
    struct fx *f = *state;
    struct task *t = add(f, 201, CLASS_JITTER);
    write_task(f, 201, 1000000, 0);
    sampler_sample_tasks(&f->s, f->tt, 1000, 0);
    assert_int_equal(t->last_cpu, 0);
    write_task(f, 201, 1000000, 1);
    sampler_sample_tasks(&f->s, f->tt, 1100, 0);
    assert_int_equal(t->last_cpu, 0);
    write_task(f, 201, 2000000, 1);
    sampler_sample_tasks(&f->s, f->tt, 1100 + SAMPLER_IDLE_BACKOFF_MS, 0);
    assert_int_equal(t->last_cpu, 1);
}

/* A jitter task asleep at its reads is read half as often each time, down
 * to once per SAMPLER_IDLE_BACKOFF_MS << (MAX_SHIFT - 1); the CPU time it
 * used meanwhile is counted at its next read, over the whole interval, and
 * from then on it is read every tick again. */
static void test_sleeping_task_read_less(void **state)
{
    struct fx *f = *state;
    struct task *t = add(f, 301, CLASS_JITTER);
    write_task(f, 301, 1000000, 0);
    unsigned reads = 0;
    uint32_t last = 0;
    /* 60 s of 100 ms ticks, asleep throughout */
    for (uint64_t now = 1000; now <= 61000; now += 100) {
        sampler_sample_tasks(&f->s, f->tt, now, 0);
        if (t->sample_ms != last) {
            reads++;
            if (last && t->idle_samples > 1)
                assert_true(t->sample_ms - last >= SAMPLER_IDLE_BACKOFF_MS << (t->idle_samples - 2));
            last = t->sample_ms;
        }
    }
    const uint32_t max_gap = SAMPLER_IDLE_BACKOFF_MS << (SAMPLER_IDLE_BACKOFF_MAX_SHIFT - 1);
    assert_int_equal(t->idle_samples, SAMPLER_IDLE_BACKOFF_MAX_SHIFT);
    /* 1000, 1100, then gaps of 0.3, 0.5, 1.1, 2.1, 4.1, 8 s: a handful, not 601 */
    assert_in_range(reads, 8, 2 + SAMPLER_IDLE_BACKOFF_MAX_SHIFT + 60000 / max_gap);
    /* it runs 400 ms of CPU: counted at its next read, at most max_gap later */
    write_task(f, 301, 401000000, 1);
    uint64_t now = 61100;
    while (t->sample_ms == last) {
        sampler_sample_tasks(&f->s, f->tt, now, 0);
        now += 100;
        assert_true(now - last <= max_gap + 100);
    }
    assert_int_equal(t->idle_samples, 0);
    assert_int_equal(t->last_cpu, 1);
    assert_int_equal(t->util_milli, 400000 / (t->sample_ms - last));
    assert_int_equal(f->s.jitter_load_milli, t->util_milli);
    /* read again at the next tick */
    uint32_t read_at = t->sample_ms;
    sampler_sample_tasks(&f->s, f->tt, now, 0);
    assert_int_equal(t->sample_ms, read_at + 100);
}

/* A tick reads at most SAMPLER_TASKS_PER_TICK tasks, going on where the
 * last one stopped, so every task is read in turn. */
static void test_round_robin(void **state)
{
    struct fx *f = *state;
    enum { N = SAMPLER_TASKS_PER_TICK + SAMPLER_TASKS_PER_TICK / 2 };
    for (int i = 0; i < N; i++) {
        add(f, 1000 + i, CLASS_JITTER);
        write_task(f, 1000 + i, 1000000, 0);
    }
    unsigned read_at[3] = {0};
    const uint64_t at[3] = {1000, 1100, 1200};
    for (int tick = 0; tick < 3; tick++) {
        sampler_sample_tasks(&f->s, f->tt, at[tick], 0);
        for (int i = 0; i < N; i++)
            if (task_table_find(f->tt, 1000 + i)->sample_ms == (uint32_t)at[tick])
                read_at[tick]++;
    }
    assert_int_equal(read_at[0], SAMPLER_TASKS_PER_TICK);
    assert_int_equal(read_at[1], SAMPLER_TASKS_PER_TICK);
    assert_int_equal(read_at[2], SAMPLER_TASKS_PER_TICK);
    /* after two ticks every task has been read at least once */
    for (int i = 0; i < N; i++)
        assert_true(task_table_find(f->tt, 1000 + i)->sample_ms >= 1000);
}

/* ---- behaviour ---- */

static void write_sched(struct fx *f, pid_t tid, uint64_t run_ns, uint64_t slices, unsigned long flags)
{
    char dir[PATH_MAX], path[PATH_MAX + 16], text[512];
    snprintf(dir, sizeof dir, "%s/proc/%d/task/%d", f->root, (int)tid, (int)tid);
    run("mkdir -p", dir);
    snprintf(path, sizeof path, "%s/schedstat", dir);
    snprintf(text, sizeof text, "%llu 1000 %llu\n", (unsigned long long)run_ns, (unsigned long long)slices);
    write_text(path, text);
    snprintf(path, sizeof path, "%s/stat", dir);
    snprintf(text, sizeof text, "%d (a b) c) S 1 %d %d 0 -1 %lu 100 0 0 0 250 50 0 0 20 0 1 0 500 1000000 100\n",
             (int)tid, (int)tid, (int)tid, flags);
    write_text(path, text);
}

struct verdicts {
    struct fx *f;
    unsigned n_candidate_asks, n_changes, n_released;
    enum behaviour_verdict last[8];
};

static bool hook_candidate(struct task *t, void *userdata)
{
    struct verdicts *v = userdata;
    v->n_candidate_asks++;
    if (sampler_is_kernel_thread(t)) {
        t->flags |= TASK_F_NOT_CANDIDATE;
        return false;
    }
    return true;
}

static void hook_verdict(struct task *t, const struct behaviour_result *r, void *userdata)
{
    struct verdicts *v = userdata;
    v->n_changes++;
    v->n_released += r->released;
    v->last[t->tid % 8] = (enum behaviour_verdict)sampler_watch_of(&v->f->s, t)->verdict;
}

/* The behaviour watch as the engine runs it: its parameters, the hooks,
 * and what they were told. */
struct watch {
    struct behaviour_params p;
    struct verdicts v;
    struct sampler_behaviour_hooks h;
};

static void watch_init(struct watch *w, struct fx *f, unsigned window_ms)
{
    behaviour_params_init(&w->p);
    w->p.window_ms = window_ms;
    w->v = (struct verdicts){.f = f};
    w->h =
        (struct sampler_behaviour_hooks){.is_candidate = hook_candidate, .on_verdict = hook_verdict, .userdata = &w->v};
}

/* One tick of the watch at now. */
static void watch_tick(struct fx *f, struct watch *w, uint64_t now)
{
    sampler_sample_behaviour(&f->s, f->tt, &w->p, now, &w->h);
}

/* Candidates only (the default decided them; no kernel thread), read when
 * due; a light thread that wakes often turns jitter after the window, is
 * read every tick from then on, and a heavy tick releases it at once. */
static void test_behaviour_watch(void **state)
{
    struct fx *f = *state;
    struct watch bw;
    watch_init(&bw, f, 2000);
    struct task *light = add(f, 1, CLASS_IGNORE), *ruled = add(f, 2, CLASS_JITTER), *kthread = add(f, 3, CLASS_IGNORE);
    light->source = SOURCE_DEFAULT;
    ruled->source = SOURCE_RULE;
    kthread->source = SOURCE_DEFAULT;
    kthread->flags |= TASK_F_KTHREAD; /* as procscan found it */
    uint64_t run_ns = 1000000, slices = 10, now = 100000;
    write_sched(f, 2, 1000, 1, 0);
    write_sched(f, 3, 1000, 1, 0x00200000ul); /* PF_KTHREAD */
    for (int k = 0; k < 14; k++) {            /* 3.5 s of 250 ms ticks: 100 wake-ups/s, 0.1% */
        write_sched(f, 1, run_ns, slices, 0x400000ul);
        watch_tick(f, &bw, now);
        run_ns += 250000;
        slices += 25;
        now += 250;
    }
    assert_non_null(sampler_watch_of(&f->s, light));
    assert_null(sampler_watch_of(&f->s, ruled));
    assert_null(sampler_watch_of(&f->s, kthread));
    assert_true(kthread->flags & TASK_F_NOT_CANDIDATE);
    assert_int_equal(bw.v.n_candidate_asks, 2); /* asked once each, never again */
    assert_int_equal(bw.v.last[1], BEHAVIOUR_JITTER);
    assert_int_equal(f->s.n_watching, 1);
    /* jitter: read at the very next tick, which finds it heavy */
    uint64_t reads = f->s.behaviour_reads;
    run_ns += 200000000; /* 200 ms of 250 */
    write_sched(f, 1, run_ns, slices + 25, 0x400000ul);
    watch_tick(f, &bw, now);
    assert_int_equal(f->s.behaviour_reads, reads + 1);
    assert_int_equal(bw.v.n_released, 1);
    assert_int_not_equal(bw.v.last[1], BEHAVIOUR_JITTER);
    /* gone from the table: its entry is free for the next */
    sampler_unwatch(&f->s, light);
    assert_int_equal(f->s.n_watching, 0);
    char buf[256];
    sampler_behaviour_explain(&f->s, ruled, &bw.p, now, buf, sizeof buf);
    assert_string_equal(buf, "behaviour: not needed (decided by rule)");
}

/* A thread tid of process pid (its schedstat), and the process's own stat
 * with ticks of CPU time in all (utime + stime) and n_threads threads. */
static void write_thread(struct fx *f, pid_t pid, pid_t tid, uint64_t run_ns, uint64_t slices)
{
    char dir[PATH_MAX], path[PATH_MAX + 16], text[128];
    snprintf(dir, sizeof dir, "%s/proc/%d/task/%d", f->root, (int)pid, (int)tid);
    if (access(dir, F_OK) != 0)
        run("mkdir -p", dir);
    snprintf(path, sizeof path, "%s/schedstat", dir);
    snprintf(text, sizeof text, "%llu 1000 %llu\n", (unsigned long long)run_ns, (unsigned long long)slices);
    write_text(path, text);
}

static void write_process(struct fx *f, pid_t pid, unsigned ticks, unsigned n_threads)
{
    char path[PATH_MAX], text[512];
    snprintf(path, sizeof path, "%s/proc/%d", f->root, (int)pid);
    run("mkdir -p", path);
    snprintf(path, sizeof path, "%s/proc/%d/stat", f->root, (int)pid);
    snprintf(text, sizeof text, "%d (a b) c) S 1 %d %d 0 -1 4194304 100 0 0 0 %u 0 0 0 20 0 %u 0 500 1000000 100\n",
             (int)pid, (int)pid, (int)pid, ticks, n_threads);
    write_text(path, text);
}

static struct task *add_thread(struct fx *f, pid_t pid, pid_t tid, enum task_class cls, enum class_source src)
{
    struct task proto = {.tid = tid, .pid = pid, .class = cls, .source = src, .rule = -1, .last_cpu = -1};
    struct task *t;
    assert_int_equal(task_table_add(f->tt, &proto, &t), 0);
    return t;
}

/* Run ticks of 250 ms until the watch of t was read after `after` (returns
 * when), failing after limit_ms. */
static uint64_t tick_until_read(struct fx *f, struct watch *w, struct task *t, uint64_t now, uint64_t limit_ms)
{
    uint32_t before = sampler_watch_of(&f->s, t)->st.last_ms;
    for (uint64_t end = now + limit_ms; now <= end; now += 250) {
        watch_tick(f, w, now);
        if (sampler_watch_of(&f->s, t)->st.last_ms != before)
            return now;
    }
    fail_msg("tid %d not read within %llu ms", (int)t->tid, (unsigned long long)limit_ms);
    return 0;
}

/* The sleeping threads of a process whose CPU time stands still are not
 * read (one read of the process's stat stands for them); they are read
 * again once it moves, or after SAMPLER_GATE_MAX_WINDOWS windows whatever it
 * does; the leader is read as before; an unreadable stat gates nothing. */
static void test_gate_spares_sleeping_threads(void **state)
{
    struct fx *f = *state;
    struct watch bw;
    watch_init(&bw, f, 2000);
    struct task *leader = add_thread(f, 100, 100, CLASS_IGNORE, SOURCE_DEFAULT);
    struct task *th[4];
    for (int i = 0; i < 4; i++) {
        th[i] = add_thread(f, 100, 101 + i, CLASS_IGNORE, SOURCE_DEFAULT);
        write_thread(f, 100, 101 + i, 5000000, 50);
    }
    write_thread(f, 100, 100, 5000000, 50);
    write_process(f, 100, 40, 5);
    uint64_t now = 100000;
    for (int k = 0; k < 40; k++, now += 250) /* 10 s: baseline, then reads that find them asleep */
        watch_tick(f, &bw, now);
    assert_true(sampler_watch_of(&f->s, th[0])->idle_reads > 0);
    /* 20 s more: the threads are not read, the process's stat now and then */
    uint64_t reads = f->s.behaviour_reads, gate_reads = f->s.gate_reads;
    uint32_t leader_read = sampler_watch_of(&f->s, leader)->st.last_ms;
    for (int k = 0; k < 80; k++, now += 250)
        watch_tick(f, &bw, now);
    for (int i = 0; i < 4; i++)
        assert_true(now - sampler_watch_of(&f->s, th[i])->st.last_ms > 20000);
    assert_true(f->s.gate_skips >= 4 * (20000 / (bw.p.window_ms / 5) - 5)); /* looked at every window/5 */
    assert_in_range(f->s.gate_reads - gate_reads, 1, 20000 / (bw.p.window_ms / SAMPLER_GATE_REFRESH_DIV) + 1);
    assert_int_not_equal(sampler_watch_of(&f->s, leader)->st.last_ms, leader_read);
    assert_true(f->s.behaviour_reads - reads <= 3); /* the leader's own, backing off */
    /* thread 102 runs 20 ms: the process's total moves, it is read within
     * the gate's refresh and window/5 */
    write_thread(f, 100, 102, 25000000, 60);
    write_process(f, 100, 42, 5);
    now = tick_until_read(f, &bw, th[1], now, bw.p.window_ms / SAMPLER_GATE_REFRESH_DIV + bw.p.window_ms / 5 + 250);
    assert_int_equal(sampler_watch_of(&f->s, th[1])->idle_reads, 0);
    /* thread 103 runs less than a clock tick: read anyway, at the latest
     * SAMPLER_GATE_MAX_WINDOWS windows after its last read */
    write_thread(f, 100, 103, 5100000, 55);
    uint32_t last = sampler_watch_of(&f->s, th[2])->st.last_ms;
    now = tick_until_read(f, &bw, th[2], now, (uint64_t)bw.p.window_ms * (SAMPLER_GATE_MAX_WINDOWS + 1));
    assert_true(now - last >= (uint64_t)bw.p.window_ms * SAMPLER_GATE_MAX_WINDOWS - bw.p.window_ms);
    /* the process's stat cannot be read: its threads are read again */
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/proc/100/stat", f->root);
    assert_int_equal(unlink(path), 0);
    tick_until_read(f, &bw, th[3], now, (uint64_t)bw.p.window_ms * 7);
    /* the leader leaves: its process's entry is free */
    assert_int_not_equal(leader->gate, 0);
    sampler_gate_release(&f->s, leader);
    assert_int_equal(leader->gate, 0);
    assert_int_equal(f->s.gate.free, 1);
    sampler_gate_release(&f->s, leader); /* twice: nothing */
    assert_int_equal(f->s.gate.free, 1);
    /* the next process takes the freed entry, afresh */
    struct task *other = add_thread(f, 300, 300, CLASS_IGNORE, SOURCE_DEFAULT);
    add_thread(f, 300, 301, CLASS_IGNORE, SOURCE_DEFAULT);
    write_process(f, 300, 7, 2);
    const struct task *t301 = task_table_find(f->tt, 301);
    /* first read: no thread read before it can be spared */
    assert_false(sampler_gate_quiet(&f->s, f->tt, t301, (uint32_t)now - 1, (uint32_t)now, 500));
    assert_int_equal(other->gate, 1);
    assert_int_equal(f->s.gate.free, 0);
    assert_true(sampler_gate_quiet(&f->s, f->tt, t301, (uint32_t)now, (uint32_t)now + 600, 500));
}

/* Threads that are due every tick, more than the budget, do not keep new
 * threads from their first reads: those are read within a few ticks. */
static void test_new_threads_not_starved(void **state)
{
    struct fx *f = *state;
    struct watch bw;
    watch_init(&bw, f, 1000); /* due every 200 ms */
    uint64_t now = 100000, run_ns = 1000000, slices = 10;
    for (pid_t tid = 1000; tid < 1300; tid++)
        add_thread(f, tid, tid, CLASS_IGNORE, SOURCE_DEFAULT);
    for (int k = 0; k < 30; k++, now += 200) { /* every one runs 40% in long runs: neither class */
        for (pid_t tid = 1000; tid < 1300; tid++)
            write_thread(f, tid, tid, run_ns, slices);
        run_ns += 80000000;
        slices += 2;
        watch_tick(f, &bw, now);
    }
    uint64_t reads = f->s.behaviour_reads;
    struct task *fresh[10];
    for (int i = 0; i < 10; i++) {
        fresh[i] = add_thread(f, 2000 + i, 2000 + i, CLASS_IGNORE, SOURCE_DEFAULT);
        write_thread(f, 2000 + i, 2000 + i, 1000, 1);
    }
    for (int k = 0; k < 4; k++, now += 200) {
        for (pid_t tid = 1000; tid < 1300; tid++)
            write_thread(f, tid, tid, run_ns, slices);
        run_ns += 80000000;
        slices += 2;
        watch_tick(f, &bw, now);
    }
    for (int i = 0; i < 10; i++) {
        const struct sampler_watch *w = sampler_watch_of(&f->s, fresh[i]);
        assert_non_null(w);
        assert_true(w->st.flags & BEHAVIOUR_F_SEEN);
    }
    assert_true(f->s.behaviour_reads - reads <= 4 * SAMPLER_BEHAVIOUR_READS_PER_TICK);
}

/* The same schedstat (and stat flags) for threads first..first+n-1 and for other. */
static void write_sched_users(struct fx *f, pid_t first, pid_t n, pid_t other, uint64_t run_ns, uint64_t slices)
{
    for (pid_t tid = first; tid < first + n; tid++)
        write_sched(f, tid, run_ns, slices, 0x400000ul);
    write_sched(f, other, run_ns, slices, 0x400000ul);
}

/* One user's threads that are jitter by behaviour are read at most
 * SAMPLER_JITTER_READS_PER_USER a tick, the rest at the next (every one
 * within two ticks here); another user's are read every tick. Before the
 * cap, every one was read every tick: 20,000 light threads of one user,
 * 20,000 reads a tick. */
static void test_jitter_reads_per_user(void **state)
{
    struct fx *f = *state;
    struct watch bw;
    watch_init(&bw, f, 1000);
    const pid_t first = 3000, n = (pid_t)SAMPLER_JITTER_READS_PER_USER + 44, other = 9000;
    for (pid_t tid = first; tid < first + n; tid++)
        add_thread(f, tid, tid, CLASS_IGNORE, SOURCE_DEFAULT)->uid = 1000;
    struct task *o = add_thread(f, other, other, CLASS_IGNORE, SOURCE_DEFAULT);
    o->uid = 2000;
    uint64_t run_ns = 1000000, slices = 10, now = 100000;
    unsigned jitter = 0;
    for (int k = 0; k < 40 && jitter < (unsigned)n + 1; k++, now += 250) { /* 100 wake-ups/s, 0.1% */
        write_sched_users(f, first, n, other, run_ns, slices);
        watch_tick(f, &bw, now);
        run_ns += 250000;
        slices += 25;
        jitter = 0;
        for (pid_t tid = first; tid <= other; tid++) {
            struct task *t = task_table_find(f->tt, tid);
            const struct sampler_watch *w = t ? sampler_watch_of(&f->s, t) : NULL;
            jitter += w && w->verdict == BEHAVIOUR_JITTER;
        }
    }
    assert_int_equal(jitter, n + 1);
    /* two ticks: at most the share each, every one read */
    uint32_t since = (uint32_t)now;
    for (int k = 0; k < 2; k++, now += 250) {
        write_sched_users(f, first, n, other, run_ns, slices);
        uint64_t capped = f->s.behaviour_capped, reads = f->s.behaviour_reads;
        watch_tick(f, &bw, now);
        run_ns += 250000;
        slices += 25;
        assert_int_equal(f->s.behaviour_reads - reads, SAMPLER_JITTER_READS_PER_USER + 1);
        assert_int_equal(f->s.behaviour_capped - capped, n - SAMPLER_JITTER_READS_PER_USER);
        assert_int_equal(sampler_watch_of(&f->s, o)->st.last_ms, (uint32_t)now); /* the other user's: every tick */
    }
    for (pid_t tid = first; tid < first + n; tid++)
        assert_true(sampler_watch_of(&f->s, task_table_find(f->tt, tid))->st.last_ms >= since);
}

/* A process its fork event added and nothing read since (no exec yet) is
 * not watched, asked about or read for behaviour until it is
 * SAMPLER_FORKED_WAIT_MS old; one that was read (start known) is at once. */
static void test_forked_child_waits(void **state)
{
    struct fx *f = *state;
    struct watch bw;
    watch_init(&bw, f, 2000);
    uint64_t now = 100000;
    struct task *child = add_thread(f, 600, 600, CLASS_IGNORE, SOURCE_DEFAULT);
    child->start_pending = true;
    child->start_time = (now - 100) * 1000000; /* its fork event, 100 ms ago */
    struct task *read = add_thread(f, 601, 601, CLASS_IGNORE, SOURCE_DEFAULT);
    write_thread(f, 600, 600, 1000000, 10);
    write_thread(f, 601, 601, 1000000, 10);
    watch_tick(f, &bw, now);
    assert_null(sampler_watch_of(&f->s, child));
    assert_non_null(sampler_watch_of(&f->s, read));
    assert_int_equal(bw.v.n_candidate_asks, 1);
    assert_int_equal(f->s.behaviour_reads, 1);
    /* a tick later it is SAMPLER_FORKED_WAIT_MS old: watched and read */
    now += 250;
    watch_tick(f, &bw, now);
    assert_non_null(sampler_watch_of(&f->s, child));
    assert_true(sampler_watch_of(&f->s, child)->st.flags & BEHAVIOUR_F_SEEN);
    assert_int_equal(bw.v.n_candidate_asks, 2);
}

/* Jitter tasks (sampler_sample_tasks) the same way: a sleeping jitter
 * thread of a quiet process is not read, and is read once the process's
 * total moves. */
static void test_gate_jitter_tasks(void **state)
{
    struct fx *f = *state;
    add_thread(f, 200, 200, CLASS_IGNORE, SOURCE_DEFAULT);
    struct task *t = add_thread(f, 200, 201, CLASS_JITTER, SOURCE_RULE);
    write_thread(f, 200, 201, 1000000, 10);
    write_task_stat_in(f, 200, 201, 1);
    write_process(f, 200, 10, 2);
    uint64_t now = 1000;
    for (; now <= 10000; now += 250)
        sampler_sample_tasks(&f->s, f->tt, now, 0);
    assert_true(t->idle_samples > 0);
    uint64_t reads = f->s.jitter_reads;
    for (; now <= 25000; now += 250)
        sampler_sample_tasks(&f->s, f->tt, now, 0);
    assert_int_equal(f->s.jitter_reads, reads);
    assert_true(f->s.gate_skips > 0);
    /* it runs 300 ms: read within the gate's refresh */
    write_thread(f, 200, 201, 301000000, 40);
    write_process(f, 200, 40, 2);
    uint64_t end = now + SAMPLER_GATE_JITTER_REFRESH_MS + 250;
    while (t->idle_samples && now <= end) {
        sampler_sample_tasks(&f->s, f->tt, now, 0);
        now += 250;
    }
    assert_int_equal(t->idle_samples, 0);
    assert_int_equal(t->last_cpu, 1);
    assert_true(t->util_milli > 0);
}

/* ---- catch-up: many threads that sleep from the start ---- */

enum { CU_PID = 5000, CU_THREADS = 10000 };

/* mkdir that may find the directory there */
static void make_dir(const char *path) { assert_true(mkdir(path, 0755) == 0 || errno == EEXIST); }

/* Threads pid+1..pid+n-1 of process pid (and pid itself), each with the
 * same schedstat, in a table of room for them: written with plain system
 * calls, since a shell per thread would take minutes. */
static void add_sleepers(struct fx *f, pid_t pid, unsigned n, enum task_class cls, enum class_source src)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/proc/%d", f->root, (int)pid);
    make_dir(path);
    snprintf(path, sizeof path, "%s/proc/%d/task", f->root, (int)pid);
    make_dir(path);
    for (pid_t tid = pid; tid < pid + (pid_t)n; tid++) {
        snprintf(path, sizeof path, "%s/proc/%d/task/%d", f->root, (int)pid, (int)tid);
        make_dir(path);
        write_thread(f, pid, tid, 5000000, 50);
        add_thread(f, pid, tid, tid == pid ? CLASS_IGNORE : cls, tid == pid ? SOURCE_DEFAULT : src);
    }
    write_process(f, pid, 40, n);
}

static void big_table(struct fx *f)
{
    task_table_free(f->tt);
    assert_int_equal(task_table_new(2 * CU_THREADS, &f->tt), 0);
}

static unsigned count_seen(struct fx *f, pid_t first, pid_t last)
{
    unsigned n = 0;
    for (pid_t tid = first; tid <= last; tid++) {
        const struct sampler_watch *w = sampler_watch_of(&f->s, task_table_find(f->tt, tid));
        n += w && (w->st.flags & BEHAVIOUR_F_SEEN);
    }
    return n;
}

/* 10,000 threads of one process that sleep from the start: their first
 * reads are spread at SAMPLER_CATCHUP_READS_PER_TICK a tick from the first
 * tick on (the process's gate never saw it run); once the gate has seen it
 * still (its second read, a quarter of the window later), each thread is
 * read once and the gate spares the next reads (those read before get a
 * second read, as before). Before, every tick of the first minutes spent
 * the whole budget on them (48 first or second reads and 48 candidate asks
 * a tick, about 20,000 reads in two minutes). Every one is still read
 * within (threads / that budget) ticks. */
static void test_catchup_reads_bounded(void **state)
{
    struct fx *f = *state;
    big_table(f);
    struct watch bw;
    watch_init(&bw, f, 10000); /* the default window */
    add_sleepers(f, CU_PID, CU_THREADS, CLASS_IGNORE, SOURCE_DEFAULT);
    uint64_t start = 100000, now = start;
    /* the first reads before the gate saw the process still, and their second reads */
    const uint64_t settled = start + bw.p.window_ms / SAMPLER_GATE_REFRESH_DIV + bw.p.window_ms / 5 + 1000;
    unsigned worst = 0, worst_before = 0;
    for (; now < start + 120000; now += 250) {
        uint64_t reads = f->s.behaviour_reads;
        watch_tick(f, &bw, now);
        unsigned n = (unsigned)(f->s.behaviour_reads - reads);
        if (now >= settled)
            worst = MAX(worst, n);
        else
            worst_before = MAX(worst_before, n);
    }
    assert_in_range(worst, 1, SAMPLER_CATCHUP_READS_PER_TICK + 1);            /* + the leader's own */
    assert_in_range(worst_before, 1, 2 * SAMPLER_CATCHUP_READS_PER_TICK + 1); /* and the second reads */
    assert_true(f->s.behaviour_reads < CU_THREADS + CU_THREADS / 10);
    assert_true(f->s.catchup_reads > 0);
    uint64_t end = start + (uint64_t)CU_THREADS / SAMPLER_CATCHUP_READS_PER_TICK * 250 + 1000;
    for (; now < end; now += 250)
        watch_tick(f, &bw, now);
    assert_int_equal(count_seen(f, CU_PID, CU_PID + CU_THREADS - 1), CU_THREADS);
}

/* A storm: 10,000 new threads of a process that runs for 2 s, then
 * sleeps. While it runs (and until its gate reads it again, a quarter of
 * the window after seeing it move) its threads are read at the full
 * budget as before; then the catch-up bound holds. Before, the full budget
 * went on for the first minute and more. */
static void test_catchup_after_storm(void **state)
{
    struct fx *f = *state;
    big_table(f);
    struct watch bw;
    watch_init(&bw, f, 10000);
    add_sleepers(f, CU_PID, CU_THREADS, CLASS_IGNORE, SOURCE_DEFAULT);
    uint64_t start = 100000, now = start;
    const uint64_t still_ms = bw.p.window_ms / SAMPLER_GATE_REFRESH_DIV, stop = start + 2000;
    /* seen moving at its second read (still_ms), still at its third
     * (2 * still_ms); then the second reads of what was read meanwhile */
    const uint64_t settled = start + 2 * still_ms + bw.p.window_ms / 5 + 1000;
    unsigned worst = 0, ticks = 40;
    for (; now < start + 60000; now += 250) {
        if (now <= stop)
            write_process(f, CU_PID, ticks += 5, CU_THREADS); /* the storm runs */
        uint64_t reads = f->s.behaviour_reads;
        watch_tick(f, &bw, now);
        if (now >= settled)
            worst = MAX(worst, (unsigned)(f->s.behaviour_reads - reads));
    }
    assert_in_range(worst, 1, SAMPLER_CATCHUP_READS_PER_TICK + 1);
}

/* While the catch-up goes on, threads of a process that runs are read
 * once its gate has seen it run (its second read, a quarter of the window
 * after the first), and a single-threaded process at once. Before, they
 * waited behind the sleeping threads' first reads, for half a minute. */
static void test_catchup_not_before_running(void **state)
{
    struct fx *f = *state;
    big_table(f);
    struct watch bw;
    watch_init(&bw, f, 10000);
    add_sleepers(f, CU_PID, CU_THREADS, CLASS_IGNORE, SOURCE_DEFAULT);
    uint64_t now = 100000;
    for (int k = 0; k < 40; k++, now += 250) /* 10 s: the catch-up under way */
        watch_tick(f, &bw, now);
    assert_true(count_seen(f, CU_PID, CU_PID + CU_THREADS - 1) < CU_THREADS / 2);
    const pid_t busy = 20000, single = 20010;
    add_sleepers(f, busy, 4, CLASS_IGNORE, SOURCE_DEFAULT);
    add_sleepers(f, single, 1, CLASS_IGNORE, SOURCE_DEFAULT);
    watch_tick(f, &bw, now);
    now += 250;
    assert_int_equal(count_seen(f, single, single), 1);
    const int ticks = (int)(bw.p.window_ms / SAMPLER_GATE_REFRESH_DIV / 250) + 2;
    for (int k = 0; k < ticks; k++, now += 250) {
        write_process(f, busy, 40 + 5 * (unsigned)(k + 1), 4); /* it runs */
        watch_tick(f, &bw, now);
    }
    assert_int_equal(count_seen(f, busy, busy + 3), 4);
}

/* The same for jitter tasks (a rule's): 1,000 sleeping ones of a process
 * not seen running are first read at SAMPLER_CATCHUP_READS_PER_TICK a
 * tick, and once the gate has seen it still, each once and then left to
 * the gate. Before, 64 a tick, two or three reads each. */
static void test_catchup_jitter_tasks(void **state)
{
    struct fx *f = *state;
    big_table(f);
    enum { N = 1000 };
    add_sleepers(f, CU_PID, N, CLASS_JITTER, SOURCE_RULE);
    uint64_t start = 100000, now = start;
    const uint64_t settled = start + 250 + SAMPLER_GATE_JITTER_REFRESH_MS + 500; /* as above */
    unsigned worst = 0, worst_before = 0;
    for (; now < start + 25000; now += 250) { /* before any forced read (SAMPLER_GATE_JITTER_MAX_MS) */
        uint64_t reads = f->s.jitter_reads;
        sampler_sample_tasks(&f->s, f->tt, now, 1000);
        unsigned n = (unsigned)(f->s.jitter_reads - reads);
        if (now >= settled)
            worst = MAX(worst, n);
        else
            worst_before = MAX(worst_before, n);
    }
    assert_in_range(worst, 1, SAMPLER_CATCHUP_READS_PER_TICK);
    assert_in_range(worst_before, 1, 2 * SAMPLER_CATCHUP_READS_PER_TICK);
    unsigned never = 0;
    for (pid_t tid = CU_PID + 1; tid < CU_PID + N; tid++) {
        const struct task *t = task_table_find(f->tt, tid);
        never += t->sample_ms == 0;
        assert_int_equal(t->util_milli, 0);
    }
    assert_int_equal(never, 0);
    assert_true(f->s.jitter_reads < N + N / 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_cpus_first_then_smoothed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cpus_hotplug, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cpus_unreadable, setup, teardown),
        cmocka_unit_test(test_task_delta),
        cmocka_unit_test_setup_teardown(test_tasks_charged_to_their_cpu, setup, teardown),
        cmocka_unit_test_setup_teardown(test_first_read_waits_a_tick, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forked_child_waits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sleeping_task_keeps_its_cpu, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sleeping_task_read_less, setup, teardown),
        cmocka_unit_test_setup_teardown(test_round_robin, setup, teardown),
        cmocka_unit_test_setup_teardown(test_behaviour_watch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gate_spares_sleeping_threads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gate_jitter_tasks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_threads_not_starved, setup, teardown),
        cmocka_unit_test_setup_teardown(test_jitter_reads_per_user, setup, teardown),
        cmocka_unit_test_setup_teardown(test_catchup_reads_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_catchup_after_storm, setup, teardown),
        cmocka_unit_test_setup_teardown(test_catchup_not_before_running, setup, teardown),
        cmocka_unit_test_setup_teardown(test_catchup_jitter_tasks, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
