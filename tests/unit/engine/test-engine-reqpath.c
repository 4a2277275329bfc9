/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Request paths and the tail guard in the engine (engine-reqpath.c), on
 * the fixture's /proc: a process that listens on a socket is held back
 * from jitter by behaviour, one without sockets asleep on its own timer is
 * not; a process packed by behaviour whose run-queue wait got worse than
 * unpacked is released, kept out, and explain says so. The decisions
 * themselves are test-reqpath's and test-procsock's. See engine-fixture.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "apply.h"
#include "engine-expect.h"
#include "engine-fixture.h"
#include "engine-internal.h"
#include "engine-snapshot.h"
#include "procmon.h"
#include "reqpath.h"
#include "sampler.h"
#include "task.h"
#include "util.h"

static void put_link(struct engine_fixture *fx, const char *rel, const char *target)
{
    char path[PATH_MAX];
    efx_put(fx, rel, ""); /* its directories */
    snprintf(path, sizeof path, "%s/%s", fx->root, rel);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(symlink(target, path), 0);
}

/* pid's namespace: a TCP socket listening on port 8080 (inode 901), and
 * the thread asleep in the call nr. */
static void put_proc(struct engine_fixture *fx, pid_t pid, long nr)
{
    char rel[64], text[160];
    snprintf(rel, sizeof rel, "proc/%d/net/tcp", (int)pid);
    efx_put(fx, rel,
            "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
            "   0: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 901 1 0\n");
    snprintf(rel, sizeof rel, "proc/%d/net/unix", (int)pid);
    efx_put(fx, rel, "Num       RefCount Protocol Flags    Type St Inode Path\n");
    snprintf(rel, sizeof rel, "proc/%d/ns/net", (int)pid);
    put_link(fx, rel, "net:[4026531840]");
    snprintf(rel, sizeof rel, "proc/%d/fd/0", (int)pid);
    put_link(fx, rel, "/dev/null");
    snprintf(rel, sizeof rel, "proc/%d/task/%d/syscall", (int)pid, (int)pid);
    snprintf(text, sizeof text, "%ld 0x5 0x7ffc 0x40 0x0 0x0 0x0 0x7ffc900fc0d8 0x7f268d8ed503\n", nr);
    efx_put(fx, rel, text);
}

/* Behaviour on, request paths and the tail guard with it (their defaults). */
static void behaviour_on(struct engine_fixture *fx)
{
    char msg[256];
    efx_write_config(fx, true, "[classify]\nbehaviour = yes\nrequest_paths = yes\ntail_guard = yes\n");
    assert_int_equal(engine_reload(fx->e, msg, sizeof msg), 0);
    efx_log_reset();
}

static void test_listening_process_held_back(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    efx_start(fx);
    behaviour_on(fx);
    efx_put(fx, "proc/sys/net/ipv4/ip_local_port_range", "32768\t60999\n");
    const pid_t server = 1100, timer = 1101;
    efx_add_task(fx, server, server, "worker");
    put_proc(fx, server, SYS_epoll_pwait);
    char rel[64];
    snprintf(rel, sizeof rel, "proc/%d/fd/4", (int)server);
    put_link(fx, rel, "socket:[901]");
    efx_add_task(fx, timer, timer, "worker");
    put_proc(fx, timer, SYS_clock_nanosleep);
    const pid_t execs[] = {server, timer};
    for (size_t i = 0; i < ELEMENTSOF(execs); i++)
        engine_on_event(e, &(struct procmon_event){
                               .kind = PROCMON_EXEC, .tid = execs[i], .tgid = execs[i], .timestamp_ns = now_ns()});
    struct task *s = task_table_find(e->tasks, server), *t = task_table_find(e->tasks, timer);
    assert_non_null(s);
    assert_non_null(t);
    const struct engine_reqpath r0 = e->reqpath;

    assert_false(engine_reqpath_may_be_jitter(e, s, true));
    assert_int_equal(e->reqpath.held_serving, r0.held_serving + 1);
    assert_int_equal(e->reqpath.socket_checks, r0.socket_checks + 1);
    /* asked again (not granting) within the recheck time: not read again */
    assert_false(engine_reqpath_may_be_jitter(e, s, false));
    assert_int_equal(e->reqpath.socket_checks, r0.socket_checks + 1);
    assert_int_equal(e->reqpath.held_serving, r0.held_serving + 1);
    char buf[512];
    engine_reqpath_explain(e, s, buf, sizeof buf);
    if (!strstr(buf, "serves: listens on tcp port 8080 (fd 4), so not jitter by behaviour"))
        fail_msg("explain: %s", buf);

    assert_true(engine_reqpath_may_be_jitter(e, t, true));
    assert_int_equal(e->reqpath.held_serving, r0.held_serving + 1);
    assert_int_equal(e->reqpath.held_sleep, r0.held_sleep);
    assert_int_equal(e->reqpath.sleep_reads, r0.sleep_reads + 1);
    engine_reqpath_explain(e, t, buf, sizeof buf);
    if (!strstr(buf, "serves no one; a thread was last found in clock_nanosleep (timer: its own timer or deadline)"))
        fail_msg("explain: %s", buf);

    /* gone: forgotten, and explain says it was not looked at */
    engine_reqpath_gone(e, s);
    engine_reqpath_explain(e, s, buf, sizeof buf);
    assert_string_equal(buf, "not looked at yet");
}

/* Packed by behaviour and waiting 5 ms per wake-up where it waited 30 us
 * unpacked: released, kept out (even from a grant), and counted. */
static void test_tail_guard_release(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    efx_start(fx);
    pack(fx);
    behaviour_on(fx);
    struct task *t = task_table_find(e->tasks, fx->jit_a);
    assert_non_null(t);
    assert_non_null(applier_find(e->applier, t->tid));
    uint32_t now = (uint32_t)now_ms();
    /* unpacked as far as the guard sees: jitter by its rule, not behaviour */
    for (int i = 0; i < 5; i++) {
        struct sampler_sample d = {
            .run_ns = 20 * 40000, .wait_ns = 20 * 30000, .slices = 20, .dt_ms = 20, .now_ms = now};
        engine_reqpath_sample(e, t, &d);
    }
    char buf[512];
    engine_reqpath_explain(e, t, buf, sizeof buf);
    if (!strstr(buf, "; run-queue wait tail 30 µs per wake-up unpacked"))
        fail_msg("explain: %s", buf);
    assert_int_equal(e->reqpath.released, 0);

    t->source = SOURCE_BEHAVIOUR;
    for (int i = 0; i < 100 && !e->reqpath.released; i++) {
        struct sampler_sample d = {.run_ns = 5 * 40000, .wait_ns = 5 * 5000000, .slices = 5, .dt_ms = 5, .now_ms = now};
        engine_reqpath_sample(e, t, &d);
    }
    assert_int_equal(e->reqpath.released, 1);
    expect_log("packed, it waited ");
    expect_log("released, and not packed by behaviour for 10 min");
    assert_false(engine_reqpath_may_be_jitter(e, t, true));
    assert_int_equal(engine_reqpath_cooling(e), 1);
    engine_reqpath_explain(e, t, buf, sizeof buf);
    if (!strstr(buf, "; released by the tail guard: ") || !strstr(buf, " s more"))
        fail_msg("explain: %s", buf);
    struct engine_snapshot s;
    engine_snapshot_status(e, &s);
    assert_int_equal(s.kept_out, 1);
    assert_int_equal(s.released, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_listening_process_held_back, efx_setup, efx_teardown),
        cmocka_unit_test_setup_teardown(test_tail_guard_release, efx_setup, efx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
