/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The whole engine (scan, classify, sample, plan, apply, reload, stop)
 * against a fixture root and a fake sysops, fed events directly: no
 * privilege needed. One test runs on the real kernel (sysops_real, the proc
 * connector) and skips without privilege. See engine-fixture.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apply.h"
#include "engine-fixture.h"
#include "engine-internal.h"
#include "fd-limit.h"
#include "packer.h"
#include "procmon.h"
#include "procscan.h"
#include "task.h"
#include "util.h"

static void expect_counts(const struct engine *e, unsigned jitter, unsigned intensive, unsigned ignore, unsigned packed)
{
    unsigned by_class[4], n_packed;
    engine_count_now(e, by_class, &n_packed);
    assert_int_equal(by_class[CLASS_UNSET], 0);
    assert_int_equal(by_class[CLASS_JITTER], jitter);
    assert_int_equal(by_class[CLASS_INTENSIVE], intensive);
    assert_int_equal(by_class[CLASS_IGNORE], ignore);
    assert_int_equal(n_packed, packed);
}

static void expect_class(struct engine *e, pid_t tid, enum task_class cls, enum class_source src, int rule)
{
    struct task *t = task_table_find(e->tasks, tid);
    if (!t)
        fail_msg("tid %d is not tracked", (int)tid);
    assert_int_equal(t->class, cls);
    assert_int_equal(t->source, src);
    assert_int_equal(t->rule, rule);
}

static void expect_log(const char *what)
{
    if (!strstr(efx_log(), what))
        fail_msg("not logged: \"%s\"; the log:\n%s", what, efx_log());
}

/* A task's mask as the system (the fake, or the kernel) has it now. */
static cpu_set_t mask_of(struct engine_fixture *fx, pid_t tid)
{
    cpu_set_t now;
    if (!fx->real)
        return *efx_fake_mask(fx, tid);
    assert_int_equal(sched_getaffinity(tid, sizeof now, &now), 0);
    return now;
}

/* The masks are what they were: the dry run changed nothing. */
static void expect_real_masks_unchanged(struct engine_fixture *fx)
{
    const pid_t tids[] = {fx->jit_a, fx->jit_b, fx->jit_b_thread, fx->crunch};
    for (size_t i = 0; i < ELEMENTSOF(tids); i++) {
        cpu_set_t now = mask_of(fx, tids[i]);
        assert_string_equal(efx_fmt(&now), efx_fmt(&fx->real_mask));
    }
    if (!fx->real)
        assert_int_equal(fx->fake.n_setaffinity, 0);
}

/* Busy ticks until the jitter tasks are packed, checked. */
static void pack(struct engine_fixture *fx)
{
    struct engine *e = fx->e;
    efx_tick_with(fx, efx_busy_load);
    efx_tick_with(fx, efx_busy_load);
    assert_true(e->planned);
    assert_true(e->plan->restricted);
    assert_int_equal(e->plan->reason, PACKER_REASON_PACKED);
    assert_string_equal(efx_fmt(&e->plan->mask), EFX_BUSY_PLAN);
    expect_counts(e, 3, 1, 1, 3);
}

static void test_startup_scan_classifies(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    efx_start(fx);

    assert_int_equal(task_table_count(e->tasks), 5);
    assert_int_equal(e->counters.rescans, 1);
    expect_class(e, fx->jit_a, CLASS_JITTER, SOURCE_RULE, 0);
    expect_class(e, fx->jit_b, CLASS_JITTER, SOURCE_RULE, 0);
    expect_class(e, fx->jit_b_thread, CLASS_JITTER, SOURCE_RULE, 0);
    expect_class(e, fx->crunch, CLASS_INTENSIVE, SOURCE_RULE, 1);
    expect_class(e, fx->self, CLASS_IGNORE, SOURCE_DEFAULT, -1);
    struct task *t = task_table_find(e->tasks, fx->jit_b_thread);
    assert_int_equal(t->pid, fx->jit_b);
    assert_string_equal(t->comm, "jitterbug");
    /* the first tick only took the first load sample: nothing planned yet */
    assert_true(e->planned);
    assert_false(e->plan->restricted);
    assert_int_equal(e->plan->reason, PACKER_REASON_NO_DATA);
    expect_counts(e, 3, 1, 1, 0);
    expect_log("tracking 5 threads");
}

static void test_busy_core_packs_then_unrestricted(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    efx_start(fx);
    pack(fx);

    /* core 2 of package 0 (CPUs 1,9) is busy but saturated: no room */
    bool saw_full = false;
    for (int i = 0; i < e->plan->n_cores; i++) {
        const struct packer_core_info *ci = &e->plan->cores[i];
        const struct topo_core *c = &e->topo->cores[ci->core];
        if (CPU_ISSET(1, &c->online)) {
            saw_full = true;
            assert_true(ci->busy);
            assert_int_equal(ci->spare_milli, 0);
            assert_false(ci->chosen);
        }
    }
    assert_true(saw_full);

    cpu_set_t plan, want;
    assert_int_equal(cpulist_parse(EFX_BUSY_PLAN, &plan), 0);
    CPU_AND(&want, &plan, &fx->real_mask);
    const pid_t jitter[] = {fx->jit_a, fx->jit_b, fx->jit_b_thread};
    for (size_t i = 0; i < ELEMENTSOF(jitter); i++) {
        const struct applied_task *at = applier_find(e->applier, jitter[i]);
        if (!at)
            fail_msg("jitter tid %d not packed; the log:\n%s", (int)jitter[i], efx_log());
        assert_string_equal(efx_fmt(&at->original), efx_fmt(&fx->real_mask));
        assert_string_equal(efx_fmt(&at->set), efx_fmt(&want));
        char msg[256];
        snprintf(msg, sizeof msg, "would set pid %d (jitterbug) affinity %s -> %s", (int)jitter[i],
                 efx_fmt(&fx->real_mask), efx_fmt(&want));
        expect_log(msg);
    }
    assert_null(applier_find(e->applier, fx->crunch));
    assert_null(applier_find(e->applier, fx->self));
    assert_int_equal(e->n_packed, 3);
    assert_int_equal(e->counters.packs, 3);
    char line[256];
    engine_status_line(e, line, sizeof line);
    assert_string_equal(line, "5 tasks, 3 jitter, 3 packed on CPUs " EFX_BUSY_PLAN "; uclamp unsupported; dry run");
    expect_real_masks_unchanged(fx);

    /* the load goes away: no restriction, every jitter task given back */
    efx_tick_with(fx, efx_no_load);
    assert_false(e->plan->restricted);
    assert_int_equal(e->plan->reason, PACKER_REASON_IDLE_MACHINE);
    expect_counts(e, 3, 1, 1, 0);
    assert_int_equal(e->n_packed, 0);
    assert_int_equal(e->counters.packs, 3);
    assert_int_equal(e->counters.restores, 3);
    for (size_t i = 0; i < ELEMENTSOF(jitter); i++) {
        char msg[256];
        snprintf(msg, sizeof msg, "would restore pid %d (jitterbug) affinity %s -> %s", (int)jitter[i], efx_fmt(&want),
                 efx_fmt(&fx->real_mask));
        expect_log(msg);
    }
    engine_status_line(e, line, sizeof line);
    assert_string_equal(line, "5 tasks, 3 jitter, 0 packed (no restriction); uclamp unsupported; dry run");
    expect_real_masks_unchanged(fx);
}

static void test_reload_without_rule_reclassifies(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    efx_start(fx);
    pack(fx);

    efx_write_config(fx, false, NULL);
    char msg[256] = "";
    assert_int_equal(engine_reload(e, msg, sizeof msg), 0);
    efx_log_reset();
    assert_string_equal(msg, "rules: 0, changes undone: 3");
    assert_true(e->last_reload.ok);
    assert_int_equal(e->counters.reloads_ok, 1);
    assert_int_equal(e->cfg->n_rules, 0);
    expect_counts(e, 0, 0, 5, 0);
    expect_class(e, fx->jit_a, CLASS_IGNORE, SOURCE_DEFAULT, -1);
    expect_class(e, fx->jit_b_thread, CLASS_IGNORE, SOURCE_DEFAULT, -1);
    expect_class(e, fx->crunch, CLASS_IGNORE, SOURCE_DEFAULT, -1);

    /* still busy, but there is nothing left to pack */
    efx_tick_with(fx, efx_busy_load);
    efx_tick_with(fx, efx_busy_load);
    expect_counts(e, 0, 0, 5, 0);
    assert_null(applier_find(e->applier, fx->jit_a));
    expect_real_masks_unchanged(fx);
}

static void test_bad_reload_keeps_config(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    efx_start(fx);
    pack(fx);
    const struct config *before = e->cfg;

    efx_write_config(fx, true, "[packing]\nhold_time = banana\n");
    /* the line of the bad value, counted in the file as written */
    FILE *f = fopen(fx->conf, "re");
    assert_non_null(f);
    char buf[256];
    unsigned line = 0, bad_line = 0;
    while (fgets(buf, sizeof buf, f)) {
        line++;
        if (strstr(buf, "banana"))
            bad_line = line;
    }
    fclose(f);
    assert_true(bad_line > 0);

    char msg[256] = "", want[PATH_MAX];
    assert_int_equal(engine_reload(e, msg, sizeof msg), -EINVAL);
    efx_log_reset();
    snprintf(want, sizeof want, "%s:%u: ", fx->conf, bad_line);
    if (strncmp(msg, want, strlen(want)) != 0)
        fail_msg("reload message \"%s\" does not start with \"%s\"", msg, want);
    assert_non_null(strstr(msg, "hold_time"));
    assert_string_equal(e->last_reload.msg, msg);
    assert_false(e->last_reload.ok);
    assert_int_equal(e->counters.reloads_failed, 1);
    assert_int_equal(e->counters.reloads_ok, 0);

    /* the old configuration stays, and nothing was undone */
    assert_ptr_equal(e->cfg, before);
    assert_int_equal(e->cfg->n_rules, 2);
    assert_int_equal(e->cfg->policy.hold_ms, 0);
    expect_counts(e, 3, 1, 1, 3);
    efx_tick_with(fx, efx_busy_load);
    assert_true(e->plan->restricted);
    expect_counts(e, 3, 1, 1, 3);
}

static void test_stop_leaves_nothing(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    efx_start(fx);
    pack(fx);

    engine_stop(e);
    assert_int_equal(applier_count(e->applier), 0);
    expect_counts(e, 3, 1, 1, 0);
    const pid_t jitter[] = {fx->jit_a, fx->jit_b, fx->jit_b_thread};
    for (size_t i = 0; i < ELEMENTSOF(jitter); i++) {
        char msg[64];
        snprintf(msg, sizeof msg, "would restore pid %d (jitterbug)", (int)jitter[i]);
        expect_log(msg);
    }
    /* a dry run writes no state file */
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/state", fx->root);
    assert_int_equal(access(path, F_OK), -1);
    expect_real_masks_unchanged(fx);
}

/* A sleeping jitter task's CPU cannot have changed: its stat file is read
 * again only once its runtime (schedstat) moved. */
static void set_last_cpu(struct engine_fixture *fx, pid_t tid, int cpu, const char *schedstat)
{
    char path[PATH_MAX], text[1024];
    struct task *t = task_table_find(fx->e->tasks, tid);
    assert_non_null(t);
    snprintf(path, sizeof path, "%s/proc/%d/task/%d/stat", fx->root, (int)t->pid, (int)tid);
    FILE *f = fopen(path, "re");
    assert_non_null(f);
    assert_non_null(fgets(text, sizeof text, f));
    fclose(f);
    /* field 39, processor: the 37th after the ") " that ends the comm */
    char *p = strrchr(text, ')') + 2, out[1024];
    size_t head = (size_t)(p - text);
    memcpy(out, text, head);
    out[head] = '\0';
    char *save = NULL;
    int field = 3;
    for (char *tok = strtok_r(p, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save), field++) {
        char num[16];
        snprintf(num, sizeof num, "%d", cpu);
        strcat(out, field == 39 ? num : tok);
        strcat(out, " ");
    }
    strcat(out, "\n");
    f = fopen(path, "we");
    assert_non_null(f);
    fputs(out, f);
    fclose(f);
    if (schedstat) {
        snprintf(path, sizeof path, "%s/proc/%d/task/%d/schedstat", fx->root, (int)t->pid, (int)tid);
        f = fopen(path, "we");
        assert_non_null(f);
        fputs(schedstat, f);
        fclose(f);
    }
}

static void test_sleeping_task_keeps_its_cpu(void **state)
{
    struct engine_fixture *fx = *state;
    efx_start(fx);
    efx_tick_with(fx, efx_no_load);
    assert_int_equal(task_table_find(fx->e->tasks, fx->jit_a)->last_cpu, 0);

    set_last_cpu(fx, fx->jit_a, 5, NULL); /* did not run: not read */
    efx_tick_with(fx, efx_no_load);
    assert_int_equal(task_table_find(fx->e->tasks, fx->jit_a)->last_cpu, 0);

    /* ran: read when it is due again (asleep at its last read: backed off
     * by SAMPLER_IDLE_BACKOFF_MS; a tick here takes at least 30 ms) */
    set_last_cpu(fx, fx->jit_a, 5, "2000000 0 11\n");
    for (unsigned i = 0; i < SAMPLER_IDLE_BACKOFF_MS / 30 + 2; i++) {
        efx_tick_with(fx, efx_no_load);
        if (task_table_find(fx->e->tasks, fx->jit_a)->last_cpu == 5)
            return;
    }
    fail_msg("not read again within %u ms of its last read", SAMPLER_IDLE_BACKOFF_MS);
}

/* Events reach the engine without the proc connector: a new thread of a
 * packed process and an exec'd process are tracked, classified and packed
 * under the plan; their exits forget them. */
static void test_events_fed_directly(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    efx_start(fx);
    assert_int_equal(engine_procmon_fd(e), -EBADF);
    pack(fx);

    /* what the ticks packed is not timed: no event behind it */
    const struct histogram *lat = &e->events.placement_latency;
    assert_int_equal(lat->count, 0);

    efx_add_task(fx, 1010, 1010, "jitterbug");
    uint64_t t_event = now_ns() - 2000000; /* the kernel saw the exec 2 ms ago */
    engine_on_event(e,
                    &(struct procmon_event){.kind = PROCMON_EXEC, .tid = 1010, .tgid = 1010, .timestamp_ns = t_event});
    expect_class(e, 1010, CLASS_JITTER, SOURCE_RULE, 0);
    assert_non_null(applier_find(e->applier, 1010));
    expect_log("would set pid 1010 (jitterbug)");
    assert_int_equal(lat->count, 1);
    assert_true(lat->max_ns >= 2000000 && lat->max_ns < now_ns() - t_event + 1);
    assert_int_equal(e->events.event_ns, 0); /* only while the event is handled */

    efx_add_task(fx, fx->jit_b, 1011, "jitterbug");
    engine_on_event(e, &(struct procmon_event){.kind = PROCMON_FORK,
                                               .tid = 1011,
                                               .tgid = fx->jit_b,
                                               .fork = {.parent_tid = 1, .parent_tgid = 1},
                                               .timestamp_ns = now_ns()});
    expect_class(e, 1011, CLASS_JITTER, SOURCE_RULE, 0);
    assert_non_null(applier_find(e->applier, 1011));
    expect_counts(e, 5, 1, 1, 5);
    /* the new thread inherited its creator's confined mask: recorded, with
     * nothing to set, so no placement to time */
    assert_int_equal(lat->count, 1);

    /* an event stamped after the daemon's clock (none should be) counts as 0 */
    efx_add_task(fx, 1012, 1012, "jitterbug");
    engine_on_event(e, &(struct procmon_event){
                           .kind = PROCMON_EXEC, .tid = 1012, .tgid = 1012, .timestamp_ns = now_ns() + 1000000000});
    assert_non_null(applier_find(e->applier, 1012));
    assert_int_equal(lat->count, 2);
    assert_int_equal(lat->bucket[0], 1);
    efx_remove_task(fx, 1012, 1012);
    engine_on_event(e, &(struct procmon_event){.kind = PROCMON_EXIT, .tid = 1012, .tgid = 1012});

    efx_remove_task(fx, 1010, 1010);
    engine_on_event(e, &(struct procmon_event){.kind = PROCMON_EXIT, .tid = 1010, .tgid = 1010});
    efx_remove_task(fx, fx->jit_b, 1011);
    engine_on_event(e, &(struct procmon_event){.kind = PROCMON_EXIT, .tid = 1011, .tgid = fx->jit_b});
    assert_null(task_table_find(e->tasks, 1010));
    assert_null(applier_find(e->applier, 1010));
    assert_null(task_table_find(e->tasks, 1011));
    expect_counts(e, 3, 1, 1, 3);
    assert_int_equal(lat->count, 2); /* exits place nothing */
    expect_real_masks_unchanged(fx);
}

/* A child whose fork event was lost (the socket overflowed), forked by a
 * packed task that exited before the rescan, carries the mask the daemon
 * set on its creator: without a record it kept it for good, taken for one
 * its user chose. The rescan recognises the mask as the one an exited
 * record had set and adopts it with that record's original. */
static void test_orphan_of_lost_fork_adopted(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    efx_start(fx);
    pack(fx);
    const struct applied_task *rec = applier_find(e->applier, fx->jit_a);
    assert_non_null(rec);
    cpu_set_t set = rec->set, original = rec->original;
    assert_false(CPU_EQUAL(&set, &original));
    /* the child, forked while its creator was packed: the creator's mask
     * (the fixture's engine is a dry run, which sets nothing: there a task
     * of ours carries its original) */
    efx_add_task(fx, 1060, 1060, "crunch");
    fx->fake.tasks[fx->fake.n_tasks - 1].mask = *applier_expected_mask(e->applier, rec);
    efx_set_parent(fx, 1060, fx->jit_a);
    /* its fork event lost; the creator exits (its event comes) */
    efx_remove_task(fx, fx->jit_a, fx->jit_a);
    engine_on_event(e, &(struct procmon_event){.kind = PROCMON_EXIT, .tid = fx->jit_a, .tgid = fx->jit_a});
    assert_null(applier_find(e->applier, fx->jit_a));
    efx_set_parent(fx, 1060, 1); /* orphaned: init is its parent now */
    efx_log_reset();
    e->events.last_rescan_ms = 0;
    assert_int_equal(engine_events_lost(e), 0);
    efx_tick_with(fx, efx_busy_load);
    assert_false(e->events.rescan_pending);
    /* adopted with its creator's original; intensive, so given it back
     * (the fixture's engine is a dry run: it says what it would do) */
    assert_int_equal(e->events.adopt.orphans, 1);
    char want[256], fs[64], fo[64];
    snprintf(fs, sizeof fs, "%s", efx_fmt(&set));
    snprintf(fo, sizeof fo, "%s", efx_fmt(&original));
    snprintf(want, sizeof want, ") affinity %s -> %s", fs, fo);
    expect_log("would restore pid 1060 (");
    expect_log(want);

    /* a jitter one stays packed, with a record that restores it */
    efx_add_task(fx, 1061, 1061, "jitterbug");
    fx->fake.tasks[fx->fake.n_tasks - 1].mask = fx->fake.tasks[fx->fake.n_tasks - 2].mask;
    efx_set_parent(fx, 1061, 1);
    e->events.last_rescan_ms = 0;
    assert_int_equal(engine_events_lost(e), 0);
    efx_tick_with(fx, efx_busy_load);
    const struct applied_task *child = applier_find(e->applier, 1061);
    assert_non_null(child);
    assert_true(CPU_EQUAL(&child->original, &original));
    assert_int_equal(e->events.adopt.orphans, 2);
}

/* A user who keeps the proc connector overflowing (a fork storm that never
 * stops) made every tick a walk of /proc at nice -10: rescans back off
 * while overflows keep coming close together, and one still follows once
 * the wait has passed. */
static void test_overflow_rescans_back_off(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    efx_start(fx);
    uint64_t r0 = e->counters.rescans;
    for (int i = 0; i < 40; i++) {
        assert_int_equal(engine_events_lost(e), 0);
        efx_tick_with(fx, efx_no_load);
    }
    uint64_t walks = e->counters.rescans - r0;
    print_message("40 ticks, each after lost events: %" PRIu64 " walks of /proc\n", walks);
    assert_true(walks >= 1 && walks <= 4);
    /* not forgotten: once the wait has passed, the walk comes */
    assert_true(e->events.rescan_pending);
    efx_add_task(fx, 1050, 1050, "crunch");
    e->events.last_rescan_ms -= 60000;
    efx_tick_with(fx, efx_no_load);
    assert_false(e->events.rescan_pending);
    expect_class(e, 1050, CLASS_INTENSIVE, SOURCE_RULE, 1);
}

/* Where the daemon sits (seat.c) follows the execs it places, not any
 * exec: a user's exec loop pinned to one CPU (taskset) would otherwise
 * choose the CPU the daemon runs on, at realtime priority, beside other
 * users' tasks there. A pinned task is left alone, so its execs do not
 * count; an unpinned jitter task's do. */
static void test_seat_counts_only_placed_execs(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    efx_start(fx);
    pack(fx);
    seat_init(&e->seat);
    const int pins[] = {3, 4}; /* out of the plan and in it */
    for (unsigned p = 0; p < ELEMENTSOF(pins); p++) {
        pid_t tid = (pid_t)(1040 + p);
        efx_add_task(fx, tid, tid, "jitterbug");
        CPU_ZERO(&fx->fake.tasks[fx->fake.n_tasks - 1].mask);
        CPU_SET(pins[p], &fx->fake.tasks[fx->fake.n_tasks - 1].mask);
        for (unsigned i = 0; i < 300; i++)
            engine_on_event(
                e,
                &(struct procmon_event){
                    .kind = PROCMON_EXEC, .tid = tid, .tgid = tid, .cpu = (uint32_t)pins[p], .timestamp_ns = now_ns()});
        assert_null(applier_find(e->applier, tid));
        assert_int_equal(e->seat.execs[pins[p]], 0);
    }
    assert_int_equal(e->seat.total, 0);
    efx_add_task(fx, 1042, 1042, "jitterbug");
    engine_on_event(e, &(struct procmon_event){
                           .kind = PROCMON_EXEC, .tid = 1042, .tgid = 1042, .cpu = 2, .timestamp_ns = now_ns()});
    assert_non_null(applier_find(e->applier, 1042));
    assert_int_equal(e->seat.execs[2], 1);
    assert_int_equal(e->seat.total, 1);
}

/* Lost events: a rescan at once when none ran within a tick interval, else
 * at the next tick; either finds the tasks whose events were lost. */
static void test_lost_events_rescan(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    efx_start(fx);
    assert_int_equal(e->counters.rescans, 1);
    efx_add_task(fx, 1020, 1020, "crunch");

    e->events.last_rescan_ms = now_ms(); /* as if the start's rescan were this moment */
    assert_int_equal(engine_events_lost(e), 0);
    expect_log("proc connector overflowed, events lost: rescanning /proc");
    assert_true(e->events.rescan_pending);
    assert_int_equal(e->counters.rescans, 1);
    assert_null(task_table_find(e->tasks, 1020));
    efx_tick_with(fx, efx_no_load);
    assert_false(e->events.rescan_pending);
    assert_int_equal(e->counters.rescans, 2);
    expect_class(e, 1020, CLASS_INTENSIVE, SOURCE_RULE, 1);

    /* events handled at a realtime priority (the default): the walk of
     * /proc waits for the tick, however long ago the last one ran */
    assert_true(e->cfg->realtime_priority > 0);
    efx_add_task(fx, 1021, 1021, "jitterbug");
    e->events.last_rescan_ms = 0; /* long ago */
    assert_int_equal(engine_events_lost(e), 0);
    assert_true(e->events.rescan_pending);
    assert_int_equal(e->counters.rescans, 2);
    /* a tick at realtime priority (events kept coming) leaves it to one at
     * normal priority */
    e->events.tick_at_rt = true;
    efx_tick_with(fx, efx_no_load);
    assert_true(e->events.rescan_pending);
    assert_int_equal(e->counters.rescans, 2);
    e->events.tick_at_rt = false;
    efx_tick_with(fx, efx_no_load);
    assert_int_equal(e->counters.rescans, 3);
    expect_class(e, 1021, CLASS_JITTER, SOURCE_RULE, 0);

    /* at normal priority: at once */
    e->cfg->realtime_priority = 0;
    efx_add_task(fx, 1022, 1022, "jitterbug");
    e->events.last_rescan_ms = 0;
    assert_int_equal(engine_events_lost(e), 0);
    assert_false(e->events.rescan_pending);
    assert_int_equal(e->counters.rescans, 4);
    expect_class(e, 1022, CLASS_JITTER, SOURCE_RULE, 0);
}

/* Threads 7000.. of process 7000 in the tree, all named comm. */
static void put_threads(struct engine_fixture *fx, unsigned n, const char *comm)
{
    for (unsigned i = 0; i < n; i++) {
        char rel[64], text[256];
        pid_t tid = 7000 + (pid_t)i;
        snprintf(rel, sizeof rel, "proc/7000/task/%d/stat", (int)tid);
        snprintf(text, sizeof text, "%d (%s) S 1 7000 7000 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %d 1 1\n", (int)tid, comm,
                 5000 + (int)tid);
        efx_put(fx, rel, text);
    }
}

/* Renames a rescan puts off (over one user's budget) are found by another
 * rescan RESCAN_RENAMES_TICKS ticks later, not left to the next overflow. */
static void test_deferred_renames_rescanned(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    efx_start(fx);
    const unsigned n = PROCSCAN_RENAMES_PER_USER + 2;
    put_threads(fx, n, "w-old");
    assert_int_equal(engine_events_lost(e), 0);
    efx_tick_with(fx, efx_no_load);
    assert_non_null(task_table_find(e->tasks, 7000 + (pid_t)n - 1));
    assert_int_equal(e->events.rescan_renames_at, 0);

    put_threads(fx, n, "w-new");
    e->events.last_rescan_ms = 0; /* a while ago: walks close together back off */
    assert_int_equal(engine_events_lost(e), 0);
    efx_tick_with(fx, efx_no_load);
    uint64_t rescans = e->counters.rescans;
    unsigned old = 0;
    for (unsigned i = 0; i < n; i++)
        old += strcmp(task_table_find(e->tasks, 7000 + (pid_t)i)->comm, "w-old") == 0;
    assert_int_equal(old, 2);
    assert_true(e->events.rescan_renames_at > 0);
    for (unsigned i = 0; i < RESCAN_RENAMES_TICKS; i++)
        efx_tick_with(fx, efx_no_load);
    assert_int_equal(e->counters.rescans, rescans + 1);
    for (unsigned i = 0; i < n; i++)
        assert_string_equal(task_table_find(e->tasks, 7000 + (pid_t)i)->comm, "w-new");
    assert_int_equal(e->events.rescan_renames_at, 0);
}

/* A rescan that finds a thread it may not read (EISDIR here; hidepid or a
 * security module in life) keeps it and is not repeated for it. One that
 * fails for want of file descriptors is repeated at each tick until it
 * succeeds, and says so once each way. */
static void test_rescan_retried(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    efx_start(fx);
    char rel[64], path[PATH_MAX], stat[1024];
    snprintf(rel, sizeof rel, "proc/%d/task/%d/stat", (int)fx->crunch, (int)fx->crunch);
    snprintf(path, sizeof path, "%s/%s", fx->root, rel);
    assert_true(read_file(path, stat, sizeof stat) > 0);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mkdir(path, 0755), 0); /* read(2) says EISDIR */
    assert_int_equal(engine_events_lost(e), 0);
    efx_tick_with(fx, efx_no_load);
    assert_int_equal(e->counters.rescans, 2);
    assert_false(e->events.rescan_pending);
    assert_null(strstr(efx_log(), "rescan of /proc:"));
    assert_non_null(task_table_find(e->tasks, fx->crunch));
    assert_int_equal(rmdir(path), 0);
    efx_put(fx, rel, stat);

    struct rlimit old;
    e->events.last_rescan_ms = 0; /* a while ago: walks close together back off */
    assert_int_equal(engine_events_lost(e), 0);
    assert_int_equal(fd_limit_lower(0, &old), 0);
    int r = engine_tick(e); /* /proc cannot be opened */
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
    assert_int_equal(r, 0);
    assert_int_equal(e->counters.rescans, 3);
    expect_log("rescan of /proc: the walk failed: Too many open files; tried again at each tick");
    assert_true(e->events.rescan_pending);
    assert_non_null(task_table_find(e->tasks, fx->crunch));

    efx_tick_with(fx, efx_no_load);
    assert_int_equal(e->counters.rescans, 4);
    assert_false(e->events.rescan_pending);
    expect_log("rescan of /proc: succeeded again");
    expect_class(e, fx->crunch, CLASS_INTENSIVE, SOURCE_RULE, 1);
}

/* The exec doorbell: an exec the main socket had when the doorbell rang is
 * handled there, in order; one it lacked is handled from the doorbell, and
 * skipped once when the main socket brings it after all. */
static void test_doorbell_execs_once(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    struct engine_doorbell *d = &e->events.doorbell;
    efx_start(fx);
    assert_null(d->procmon); /* events from the caller: no sockets */
    pack(fx);

    efx_add_task(fx, 1030, 1030, "jitterbug");
    efx_add_task(fx, 1031, 1031, "jitterbug");
    struct procmon_event in_main = {.kind = PROCMON_EXEC, .tid = 1030, .tgid = 1030, .timestamp_ns = now_ns()};
    struct procmon_event late = {.kind = PROCMON_EXEC, .tid = 1031, .tgid = 1031, .timestamp_ns = now_ns()};
    d->rung[0] = in_main;
    d->rung[1] = late;
    d->n_rung = 2;
    /* the main socket's dispatch: the first exec is its to handle */
    assert_false(engine_doorbell_filter(d, &in_main));
    engine_on_event(e, &in_main);
    assert_true(d->rung_seen[0]);
    assert_false(d->rung_seen[1]);
    /* forks and exits are never filtered */
    assert_false(engine_doorbell_filter(d, &(struct procmon_event){.kind = PROCMON_EXIT, .tid = 1031, .tgid = 1031}));

    engine_doorbell_settle(e);
    assert_int_equal(d->n_rung, 0);
    assert_int_equal(d->ahead, 1);
    expect_class(e, 1031, CLASS_JITTER, SOURCE_RULE, 0);
    assert_non_null(applier_find(e->applier, 1031));
    assert_int_equal(e->events.placement_latency.count, 2);

    /* the main socket brings the late one: skipped, once */
    assert_true(engine_doorbell_filter(d, &late));
    assert_int_equal(d->skipped, 1);
    assert_false(engine_doorbell_filter(d, &late));
    /* an exec of the same TID at another time is another exec */
    late.timestamp_ns++;
    assert_false(engine_doorbell_filter(d, &late));

    /* the main socket handles an exec before the ring for it is read: the
     * ring finds it done */
    efx_add_task(fx, 1032, 1032, "jitterbug");
    struct procmon_event first = {.kind = PROCMON_EXEC, .tid = 1032, .tgid = 1032, .timestamp_ns = now_ns()};
    assert_int_equal(d->n_rung, 0);
    assert_false(engine_doorbell_filter(d, &first));
    engine_on_event(e, &first);
    uint64_t placed = e->events.placement_latency.count;
    d->rung[0] = first;
    d->rung_seen[0] = false;
    d->n_rung = 1;
    engine_doorbell_settle(e);
    assert_int_equal(d->already, 1);
    assert_int_equal(d->ahead, 1);
    assert_int_equal(e->events.placement_latency.count, placed);
}

/* Not a dry run: the engine changes masks through the sysops it was given,
 * and gives every one back. */
/* Started and packed: the mask jitter tasks have now (the plan's). */
static cpu_set_t start_packed(struct engine_fixture *fx)
{
    efx_start(fx);
    pack(fx);
    cpu_set_t packed = mask_of(fx, fx->jit_a);
    assert_string_equal(efx_fmt(&packed), EFX_BUSY_PLAN);
    return packed;
}

/* A process forked by one we packed inherits its mask. Its adoption waits:
 * its /proc/PID/stat, which gives the start time a record needs, stalls the
 * reader while the process is inside an exec, as a new one usually is. At
 * its exec it is adopted, then placed by its new class; with no exec, at
 * the first tick after it is a tick old; at a stop, before the restore. */
static void test_forked_child_adopted_later(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    const cpu_set_t packed = start_packed(fx);
    struct procmon_event fork = {.kind = PROCMON_FORK, .fork = {.parent_tid = fx->jit_a, .parent_tgid = fx->jit_a}};

    /* Forked and in its exec: no stat to read yet (the tree lists none). */
    fork.tid = fork.tgid = 1030;
    fork.timestamp_ns = now_ns();
    engine_on_event(e, &fork);
    struct task *t = task_table_find(e->tasks, 1030);
    assert_non_null(t);
    assert_true(t->flags & TASK_F_ADOPT_DUE);
    assert_null(applier_find(e->applier, 1030));
    /* the exec: now an intensive program, with the mask the kernel copied */
    efx_add_task(fx, 1030, 1030, "crunch");
    *(cpu_set_t *)efx_fake_mask(fx, 1030) = packed;
    unsigned sets = fx->fake.n_setaffinity;
    engine_on_event(e,
                    &(struct procmon_event){.kind = PROCMON_EXEC, .tid = 1030, .tgid = 1030, .timestamp_ns = now_ns()});
    expect_class(e, 1030, CLASS_INTENSIVE, SOURCE_RULE, 1);
    cpu_set_t now = mask_of(fx, 1030);
    assert_string_equal(efx_fmt(&now), efx_fmt(&fx->real_mask)); /* its creator's original back */
    assert_int_equal(fx->fake.n_setaffinity, sets + 1);
    assert_null(applier_find(e->applier, 1030));
    assert_int_equal(e->events.adopt.at_exec, 1);

    /* Forked two seconds ago and no exec since: adopted at the next tick,
     * and kept packed (a jitter task by its creator's name). */
    efx_add_task(fx, 1031, 1031, "jitterbug");
    *(cpu_set_t *)efx_fake_mask(fx, 1031) = packed;
    fork.tid = fork.tgid = 1031;
    fork.timestamp_ns = now_ns() - 2000000000ull;
    engine_on_event(e, &fork);
    assert_null(applier_find(e->applier, 1031));
    /* forked just now: it waits past this tick */
    efx_add_task(fx, 1032, 1032, "jitterbug");
    *(cpu_set_t *)efx_fake_mask(fx, 1032) = packed;
    fork.tid = fork.tgid = 1032;
    fork.timestamp_ns = now_ns();
    engine_on_event(e, &fork);
    efx_tick_with(fx, efx_busy_load);
    const struct applied_task *a = applier_find(e->applier, 1031);
    assert_non_null(a);
    assert_string_equal(efx_fmt(&a->original), efx_fmt(&fx->real_mask));
    assert_false(task_table_find(e->tasks, 1031)->flags & TASK_F_ADOPT_DUE);
    assert_int_equal(e->events.adopt.at_tick, 1);
    assert_null(applier_find(e->applier, 1032));
    assert_true(task_table_find(e->tasks, 1032)->flags & TASK_F_ADOPT_DUE);

    /* A stop adopts what still waits, and gives every mask back. */
    engine_stop(e);
    assert_int_equal(e->events.adopt.at_restore, 1);
    assert_true(efx_metric(fx, "turbosched_adoptions_waited_total", "at", "exec") == 1);
    assert_true(efx_metric(fx, "turbosched_adoptions_waited_total", "at", "tick") == 1);
    assert_true(efx_metric(fx, "turbosched_adoptions_waited_total", "at", "restore") == 1);
    assert_int_equal(applier_count(e->applier), 0);
    const pid_t children[] = {1031, 1032};
    for (size_t i = 0; i < ELEMENTSOF(children); i++) {
        now = mask_of(fx, children[i]);
        assert_string_equal(efx_fmt(&now), efx_fmt(&fx->real_mask));
    }
}

/* A process forked by a child that still waits for its adoption inherited
 * the same narrowed mask, and so did a thread of that child: they wait with
 * the grandparent's record, and a stop gives their masks back too. */
static void test_grandchild_adopted(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    const cpu_set_t packed = start_packed(fx);
    struct procmon_event fork = {.kind = PROCMON_FORK,
                                 .tid = 1040,
                                 .tgid = 1040,
                                 .timestamp_ns = now_ns(),
                                 .fork = {.parent_tid = fx->jit_a, .parent_tgid = fx->jit_a}};
    engine_on_event(e, &fork); /* the child, in its exec: no stat yet */
    assert_true(task_table_find(e->tasks, 1040)->flags & TASK_F_ADOPT_DUE);

    efx_add_task(fx, 1041, 1041, "renamed"); /* its child, by another name */
    *(cpu_set_t *)efx_fake_mask(fx, 1041) = packed;
    fork = (struct procmon_event){.kind = PROCMON_FORK,
                                  .tid = 1041,
                                  .tgid = 1041,
                                  .timestamp_ns = now_ns(),
                                  .fork = {.parent_tid = 1040, .parent_tgid = 1040}};
    engine_on_event(e, &fork);
    assert_true(task_table_find(e->tasks, 1041)->flags & TASK_F_ADOPT_DUE);
    efx_add_task(fx, 1040, 1042, "renamed"); /* a thread of the child */
    *(cpu_set_t *)efx_fake_mask(fx, 1042) = packed;
    fork = (struct procmon_event){.kind = PROCMON_FORK,
                                  .tid = 1042,
                                  .tgid = 1040,
                                  .timestamp_ns = now_ns(),
                                  .fork = {.parent_tid = 1040, .parent_tgid = 1040}};
    engine_on_event(e, &fork); /* adopted, and not jitter: given back at once */
    cpu_set_t now = mask_of(fx, 1042);
    assert_string_equal(efx_fmt(&now), efx_fmt(&fx->real_mask));
    assert_null(applier_find(e->applier, 1042));

    engine_stop(e);
    assert_int_equal(applier_count(e->applier), 0);
    const pid_t tids[] = {1041, 1042};
    for (size_t i = 0; i < ELEMENTSOF(tids); i++) {
        now = mask_of(fx, tids[i]);
        assert_string_equal(efx_fmt(&now), efx_fmt(&fx->real_mask));
    }
}

/* A waiting adoption whose start time cannot be read for want of file
 * descriptors waits on to a later tick, rather than being dropped with the
 * task left on the narrowed mask unrecorded. (Forked by a jitter task, and
 * named as it until it execs, it is jitter itself.) */
static void test_adoption_waits_out_of_fds(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    const cpu_set_t packed = start_packed(fx);
    efx_add_task(fx, 1070, 1070, "renamed");
    *(cpu_set_t *)efx_fake_mask(fx, 1070) = packed;
    struct procmon_event fork = {.kind = PROCMON_FORK,
                                 .tid = 1070,
                                 .tgid = 1070,
                                 .timestamp_ns = now_ns() - 2000000000ull,
                                 .fork = {.parent_tid = fx->jit_a, .parent_tgid = fx->jit_a}};
    engine_on_event(e, &fork);
    assert_true(task_table_find(e->tasks, 1070)->flags & TASK_F_ADOPT_DUE);
    struct rlimit old;
    assert_int_equal(fd_limit_lower(0, &old), 0);
    engine_adopt_due(e, now_ns() - 1000000000ull);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
    assert_true(task_table_find(e->tasks, 1070)->flags & TASK_F_ADOPT_DUE);
    assert_int_equal(e->events.adopt.n, 1);
    engine_adopt_due(e, now_ns() - 1000000000ull); /* adopted: its creator's original recorded */
    assert_false(task_table_find(e->tasks, 1070)->flags & TASK_F_ADOPT_DUE);
    const struct applied_task *a = applier_find(e->applier, 1070);
    assert_non_null(a);
    assert_string_equal(efx_fmt(&a->original), efx_fmt(&fx->real_mask));
}

/* Processes found by a rescan, their fork events lost: a child and a
 * grandchild of a packed task carry its mask, and are given its original
 * back (they are not jitter); a process whose creator is not ours keeps the
 * mask it has, even one like the plan. */
static void test_rescan_finds_descendants(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    const cpu_set_t packed = start_packed(fx);
    const pid_t child = 1060, grandchild = 1061, stranger = 1062;
    efx_add_task(fx, child, child, "renamed");
    efx_set_parent(fx, child, fx->jit_a);
    efx_add_task(fx, grandchild, grandchild, "renamed");
    efx_set_parent(fx, grandchild, child);
    efx_add_task(fx, stranger, stranger, "renamed");
    const pid_t all[] = {child, grandchild, stranger};
    for (size_t i = 0; i < ELEMENTSOF(all); i++)
        *(cpu_set_t *)efx_fake_mask(fx, all[i]) = packed;

    assert_int_equal(engine_events_lost(e), 0);
    efx_tick_with(fx, efx_busy_load);
    assert_non_null(task_table_find(e->tasks, grandchild));
    cpu_set_t now = mask_of(fx, child);
    assert_string_equal(efx_fmt(&now), efx_fmt(&fx->real_mask));
    now = mask_of(fx, grandchild);
    assert_string_equal(efx_fmt(&now), efx_fmt(&fx->real_mask));
    now = mask_of(fx, stranger);
    assert_string_equal(efx_fmt(&now), EFX_BUSY_PLAN);
    assert_null(applier_find(e->applier, stranger));
}

static void test_live_masks_through_sysops(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    assert_false(e->cfg->dry_run);
    efx_start(fx);
    pack(fx);

    const pid_t jitter[] = {fx->jit_a, fx->jit_b, fx->jit_b_thread};
    for (size_t i = 0; i < ELEMENTSOF(jitter); i++) {
        cpu_set_t now = mask_of(fx, jitter[i]);
        assert_string_equal(efx_fmt(&now), EFX_BUSY_PLAN);
    }
    cpu_set_t now = mask_of(fx, fx->crunch);
    assert_string_equal(efx_fmt(&now), efx_fmt(&fx->real_mask));
    assert_int_equal(fx->fake.n_setaffinity, 3);

    efx_tick_with(fx, efx_no_load);
    assert_int_equal(e->n_packed, 0);
    assert_int_equal(fx->fake.n_setaffinity, 6);
    pack(fx);
    assert_int_equal(fx->fake.n_setaffinity, 9);
    engine_stop(e);
    assert_int_equal(applier_count(e->applier), 0);
    assert_int_equal(fx->fake.n_setaffinity, 12);
    for (size_t i = 0; i < ELEMENTSOF(jitter); i++) {
        now = mask_of(fx, jitter[i]);
        assert_string_equal(efx_fmt(&now), efx_fmt(&fx->real_mask));
    }
}

/* Each packed jitter thread woke 200 times since the last tick and waited
 * wait_per_wakeup_ns on a run queue each time; then a busy tick. */
struct delay_feed {
    uint64_t wait[3], slices[3];
};
static void feed_delay(struct engine_fixture *fx, struct delay_feed *f, uint64_t wait_per_wakeup_ns)
{
    const pid_t pids[] = {fx->jit_a, fx->jit_b, fx->jit_b}, tids[] = {fx->jit_a, fx->jit_b, fx->jit_b_thread};
    for (size_t i = 0; i < 3; i++) {
        f->slices[i] += 200;
        f->wait[i] += 200 * wait_per_wakeup_ns;
        /* 100 ns of run time per wake-up: it ran, and the jitter load
         * rounds to 0 */
        efx_set_schedstat(fx, pids[i], tids[i], 1000000 + 100 * f->slices[i], f->wait[i], 10 + f->slices[i]);
    }
    efx_tick_with(fx, efx_busy_load);
}

static bool jitter_masks_are(struct engine_fixture *fx, const char *cpus)
{
    const pid_t jitter[] = {fx->jit_a, fx->jit_b, fx->jit_b_thread};
    for (size_t i = 0; i < ELEMENTSOF(jitter); i++) {
        cpu_set_t now = mask_of(fx, jitter[i]);
        if (strcmp(efx_fmt(&now), cpus) != 0)
            return false;
    }
    return true;
}

/* Feed ticks at this delay until the plan's mask is want ("" for none), at
 * most max_ticks. */
static void feed_until(struct engine_fixture *fx, struct delay_feed *f, uint64_t ns, const char *want, int max_ticks)
{
    struct engine *e = fx->e;
    for (int i = 0; i < max_ticks; i++) {
        feed_delay(fx, f, ns);
        const char *now = e->plan->restricted ? efx_fmt(&e->plan->mask) : "";
        if (strcmp(now, want) == 0)
            return;
    }
    fail_msg("plan not \"%s\" after %d ticks at %llu ns per wake-up: %s (guard: %s); the log:\n%s", want, max_ticks,
             (unsigned long long)ns, e->plan->summary, e->delay.last, efx_log());
}

/* The run-delay guard through the whole engine: packed jitter that waits
 * 2 ms per wake-up (limit 1 ms) spills to the busy core with no room,
 * gets it back once the delay is low, and with no busy core left the plan
 * falls back, every mask restored; after the retry time it packs again.
 * Holds are 0 here: the decisions' order is what is tested. */
static void test_run_delay_guard(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    /* every tick reads every packed thread, asleep while packing or not:
     * the counts below are per tick */
    e->sampler.idle_backoff_ms = 0;
    efx_start(fx);
    pack(fx);
    e->delay.cfg.hold_ms = 60000;
    e->delay.cfg.shrink_hold_ms = 0;
    e->delay.cfg.fallback_retry_ms = 0;
    struct delay_feed f = {{0}, {0}};
    const char *spilled = "0-1,4,8-9,12"; /* + core 2 of package 0 (CPUs 1,9): busy, no room */

    /* measured, and held while the hold lasts */
    for (int i = 0; i < 3; i++)
        feed_delay(fx, &f, 2000000);
    uint64_t delay_ns, wakeups;
    assert_true(engine_delay_of(e, fx->jit_a, &delay_ns, &wakeups));
    assert_int_equal(delay_ns, 2000000);
    assert_int_equal(wakeups, 3 * 200); /* the base was read by pack()'s last tick */
    assert_int_equal(e->delay.delay_ns, 2000000);
    assert_int_equal(e->delay.wakeups, 3 * 600);
    assert_non_null(strstr(e->delay.last, "holding: jitter waited 2.0 ms per wake-up, above 1.0 ms"));
    assert_int_equal(e->delay.hist.count, 3 * 600);
    assert_int_equal(e->delay.hist.max_ns, 2000000);
    assert_string_equal(efx_fmt(&e->plan->mask), EFX_BUSY_PLAN);

    e->delay.cfg.hold_ms = 0;
    feed_until(fx, &f, 2000000, spilled, 6);
    expect_log("run delay: spilled to core ");
    expect_log("jitter waited 2.0 ms per wake-up");
    assert_non_null(strstr(e->plan->summary, "(spilled to core "));
    assert_true(jitter_masks_are(fx, spilled));
    assert_int_equal(e->delay.guard.spills_total, 1);

    feed_until(fx, &f, 100000, EFX_BUSY_PLAN, 6);
    expect_log("run delay: released core ");
    assert_true(jitter_masks_are(fx, EFX_BUSY_PLAN));

    /* high again: spill, and then no busy core is left */
    efx_log_reset();
    feed_until(fx, &f, 2000000, spilled, 6);
    feed_until(fx, &f, 2000000, "", 6);
    assert_int_equal(e->plan->reason, PACKER_REASON_RUN_DELAY);
    expect_log("run delay: fell back: jitter waited 2.0 ms per wake-up and no busy core is left");
    if (!strstr(e->plan->summary, "fallback: jitter waited too long to run (fell back: "))
        fail_msg("summary: %s", e->plan->summary);
    assert_true(jitter_masks_are(fx, efx_fmt(&fx->real_mask)));
    assert_int_equal(e->n_packed, 0);
    assert_int_equal(e->delay.guard.fallbacks_total, 1);

    /* the retry: packing again, delay measured afresh */
    feed_until(fx, &f, 100000, EFX_BUSY_PLAN, 4);
    expect_log("run delay: packing again after ");
    assert_true(jitter_masks_are(fx, EFX_BUSY_PLAN));

    /* off: the guard forgets and decides nothing */
    e->delay.cfg.max_run_delay_ns = 0;
    feed_delay(fx, &f, 5000000);
    feed_delay(fx, &f, 5000000);
    assert_string_equal(efx_fmt(&e->plan->mask), EFX_BUSY_PLAN);
    assert_false(engine_delay_of(e, fx->jit_a, &delay_ns, &wakeups));
}

/* Poll the proc connector and hand its events to the engine until tid is
 * tracked with class cls, for up to 10 s. */
static void wait_for_class(struct engine_fixture *fx, pid_t tid, enum task_class cls)
{
    struct engine *e = fx->e;
    uint64_t deadline = now_ms() + 10000;
    const struct task *t;
    while (!((t = task_table_find(e->tasks, tid)) && t->class == cls) && now_ms() < deadline) {
        struct pollfd p = {.fd = engine_procmon_fd(e), .events = POLLIN};
        if (poll(&p, 1, 100) > 0)
            assert_int_equal(engine_on_events(e), 0);
    }
    if (!((t = task_table_find(e->tasks, tid)) && t->class == cls))
        fail_msg("pid %d: not tracked as %s within 10 s (%s); the log:\n%s", (int)tid, task_class_to_string(cls),
                 t ? task_class_to_string(t->class) : "not tracked", efx_log());
}

/* The one test against the real kernel: sysops_real and the proc
 * connector, in dry run. A process forked while the engine runs reaches it
 * as a fork event (a copy of the test, "runner": ignored); when it renames
 * itself, the comm event makes it jitter, packed on paper: no mask changes. */
static void test_real_kernel(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    efx_start(fx); /* skips without the privilege to open the proc connector */
    assert_true(engine_procmon_fd(e) >= 0);
    pack(fx);

    pid_t child = efx_spawn_real(fx, "jitterbug");
    wait_for_class(fx, child, CLASS_IGNORE);
    assert_null(applier_find(e->applier, child));
    efx_rename_real(fx, child);
    wait_for_class(fx, child, CLASS_JITTER);
    expect_class(e, child, CLASS_JITTER, SOURCE_RULE, 0);
    assert_non_null(applier_find(e->applier, child));
    expect_counts(e, 4, 1, 1, 4);
    expect_real_masks_unchanged(fx);
    cpu_set_t now = mask_of(fx, child);
    assert_string_equal(efx_fmt(&now), efx_fmt(&fx->real_mask));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_startup_scan_classifies, efx_setup, efx_teardown),
        cmocka_unit_test_setup_teardown(test_sleeping_task_keeps_its_cpu, efx_setup, efx_teardown),
        cmocka_unit_test_setup_teardown(test_busy_core_packs_then_unrestricted, efx_setup, efx_teardown),
        cmocka_unit_test_setup_teardown(test_reload_without_rule_reclassifies, efx_setup, efx_teardown),
        cmocka_unit_test_setup_teardown(test_bad_reload_keeps_config, efx_setup, efx_teardown),
        cmocka_unit_test_setup_teardown(test_stop_leaves_nothing, efx_setup, efx_teardown),
        cmocka_unit_test_setup_teardown(test_events_fed_directly, efx_setup, efx_teardown),
        cmocka_unit_test_setup_teardown(test_seat_counts_only_placed_execs, efx_setup, efx_teardown),
        cmocka_unit_test_setup_teardown(test_overflow_rescans_back_off, efx_setup, efx_teardown),
        cmocka_unit_test_setup_teardown(test_orphan_of_lost_fork_adopted, efx_setup, efx_teardown),
        cmocka_unit_test_setup_teardown(test_doorbell_execs_once, efx_setup, efx_teardown),
        cmocka_unit_test_setup_teardown(test_lost_events_rescan, efx_setup, efx_teardown),
        cmocka_unit_test_setup_teardown(test_deferred_renames_rescanned, efx_setup, efx_teardown),
        cmocka_unit_test_setup_teardown(test_rescan_retried, efx_setup, efx_teardown),
        cmocka_unit_test_setup_teardown(test_live_masks_through_sysops, efx_setup_live, efx_teardown),
        cmocka_unit_test_setup_teardown(test_forked_child_adopted_later, efx_setup_live, efx_teardown),
        cmocka_unit_test_setup_teardown(test_grandchild_adopted, efx_setup_live, efx_teardown),
        cmocka_unit_test_setup_teardown(test_rescan_finds_descendants, efx_setup_live, efx_teardown),
        cmocka_unit_test_setup_teardown(test_adoption_waits_out_of_fds, efx_setup_live, efx_teardown),
        cmocka_unit_test_setup_teardown(test_run_delay_guard, efx_setup_live, efx_teardown),
        cmocka_unit_test_setup_teardown(test_real_kernel, efx_setup_real, efx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
