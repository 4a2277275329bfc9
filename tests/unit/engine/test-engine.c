/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The whole engine's life (scan, classify, sample, plan, apply, reload,
 * stop) against a fixture root and a fake sysops: no privilege needed; the
 * cases of its parts are in test-engine-<part>.c. One test runs on the real
 * kernel (sysops_real, the proc connector) and skips without privilege. See
 * engine-fixture.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "apply.h"
#include "engine-expect.h"
#include "engine-fixture.h"
#include "engine-internal.h"
#include "packer.h"
#include "procmon.h"
#include "task.h"
#include "util.h"

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

/* Not a dry run: the engine changes masks through the sysops it was given,
 * and gives every one back. */
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
        cmocka_unit_test_setup_teardown(test_live_masks_through_sysops, efx_setup_live, efx_teardown),
        cmocka_unit_test_setup_teardown(test_real_kernel, efx_setup_real, efx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
