/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The control socket's method table: each method routed to its handler
 * (answering from the fixture engine of engine-fixture.h), the daemon's
 * part reached through struct control_methods, and what is not ours
 * refused. The server's checks from the table are in test-control. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "control.h"
#include "control-methods.h"
#include "engine-fixture.h"
#include "engine.h"
#include "loop.h"
#include "varlink.h"

struct daemon_fake {
    unsigned reloads, status_changes;
    int reload_result;
};

static int fake_reload(void *userdata, char *msg, size_t size)
{
    struct daemon_fake *d = userdata;
    d->reloads++;
    snprintf(msg, size, "reloaded %u", d->reloads);
    return d->reload_result;
}

static void fake_status_changed(void *userdata)
{
    struct daemon_fake *d = userdata;
    d->status_changes++;
}

static struct json_object *get(struct json_object *o, const char *key)
{
    struct json_object *v;
    if (!json_object_object_get_ex(o, key, &v))
        fail_msg("no \"%s\" in %s", key, json_object_to_json_string(o));
    return v;
}

static bool has(struct json_object *o, const char *key) { return json_object_object_get_ex(o, key, NULL); }

struct call {
    int r;
    struct json_object *reply;
    const char *error;
};

static struct call call(struct control_methods *m, const char *method, const char *params, uid_t uid)
{
    struct control_peer peer = {.uid = uid, .pid = 4242, .conn_id = 7};
    struct json_object *p = json_tokener_parse(params ? params : "{}");
    assert_non_null(p);
    struct call c = {0};
    c.r = control_methods_handle(m, method, p, &peer, &c.reply, &c.error);
    json_object_put(p);
    return c;
}

static void test_each_method_routed(void **state)
{
    struct engine_fixture *fx = *state;
    efx_start(fx);
    struct loop loop = {.priority = 0};
    struct loop_batch batch = {.doorbell = true};
    struct daemon_fake d = {0};
    struct control_methods m = {.engine = fx->e,
                                .loop = &loop,
                                .batch = &batch,
                                .userdata = &d,
                                .reload = fake_reload,
                                .status_changed = fake_status_changed};

    struct call c = call(&m, "io.turbosched.Status", NULL, 1000);
    assert_int_equal(c.r, 0);
    assert_null(c.error);
    assert_true(has(c.reply, "tasks") && has(c.reply, "pause"));
    struct json_object *ev = get(c.reply, "event_loop");
    assert_true(json_object_get_boolean(get(ev, "exec_socket")));
    assert_int_equal(json_object_get_int64(get(ev, "realtime_priority")), 0);
    json_object_put(c.reply);

    c = call(&m, "io.turbosched.Dump", NULL, 1000);
    assert_int_equal(c.r, 0);
    assert_true(has(c.reply, "cores") && has(c.reply, "tasks") && !has(c.reply, "event_loop"));
    json_object_put(c.reply);

    c = call(&m, "io.turbosched.Metrics", NULL, 1000);
    assert_int_equal(c.r, 0);
    assert_true(has(c.reply, "metrics"));
    json_object_put(c.reply);

    char params[64];
    snprintf(params, sizeof params, "{\"pid\":%d}", (int)fx->jit_a);
    c = call(&m, "io.turbosched.Explain", params, 1000);
    assert_int_equal(c.r, 0);
    assert_null(c.error);
    assert_int_equal(json_object_get_int64(get(c.reply, "pid")), fx->jit_a);
    json_object_put(c.reply);

    /* Neither handler made a reload or a status change. */
    assert_int_equal(d.reloads, 0);
    assert_int_equal(d.status_changes, 0);

    c = call(&m, "io.turbosched.Reload", NULL, 0);
    assert_int_equal(c.r, 0);
    assert_null(c.error);
    assert_string_equal(json_object_get_string(get(c.reply, "message")), "reloaded 1");
    json_object_put(c.reply);
    d.reload_result = -EINVAL;
    c = call(&m, "io.turbosched.Reload", NULL, 0);
    assert_int_equal(c.r, -EINVAL);
    assert_string_equal(c.error, "io.turbosched.ReloadFailed");
    assert_string_equal(json_object_get_string(get(c.reply, "message")), "reloaded 2");
    json_object_put(c.reply);
    assert_int_equal(d.status_changes, 0);

    c = call(&m, "io.turbosched.Pause", NULL, 0);
    assert_int_equal(c.r, 0);
    assert_true(json_object_get_boolean(get(c.reply, "paused")));
    assert_true(json_object_get_boolean(get(c.reply, "changed")));
    assert_true(engine_paused(fx->e));
    assert_int_equal(d.status_changes, 1);
    json_object_put(c.reply);

    c = call(&m, "io.turbosched.Resume", NULL, 0);
    assert_int_equal(c.r, 0);
    assert_false(json_object_get_boolean(get(c.reply, "paused")));
    assert_false(engine_paused(fx->e));
    assert_int_equal(d.status_changes, 2);
    json_object_put(c.reply);
    assert_int_equal(d.reloads, 2);
}

/* A pause held by a connection ends when it closes (the server's close
 * hook, with the same userdata as the handler); one held by another
 * connection, or by the administrator, stays. */
static void test_session_pause_ends_with_connection(void **state)
{
    struct engine_fixture *fx = *state;
    efx_start(fx);
    struct loop loop = {0};
    struct loop_batch batch = {0};
    struct daemon_fake d = {0};
    struct control_methods m = {.engine = fx->e,
                                .loop = &loop,
                                .batch = &batch,
                                .userdata = &d,
                                .reload = fake_reload,
                                .status_changed = fake_status_changed};
    struct call c = call(&m, "io.turbosched.Pause", "{\"session\":true}", 0); /* conn_id 7 */
    assert_int_equal(c.r, 0);
    json_object_put(c.reply);
    assert_true(engine_paused(fx->e));
    control_methods_closed(&m, &(struct control_peer){.conn_id = 8});
    assert_true(engine_paused(fx->e));
    control_methods_closed(&m, &(struct control_peer){.conn_id = 7});
    assert_false(engine_paused(fx->e));
    assert_int_equal(d.status_changes, 3);

    c = call(&m, "io.turbosched.Pause", NULL, 0);
    json_object_put(c.reply);
    control_methods_closed(&m, &(struct control_peer){.conn_id = 7});
    assert_true(engine_paused(fx->e));
}

/* Explain's errors: a process not tracked, and no "pid" (the decoder
 * checks it first; the handler does not trust that). */
static void test_explain_errors(void **state)
{
    struct engine_fixture *fx = *state;
    efx_start(fx);
    struct loop loop = {0};
    struct loop_batch batch = {0};
    struct control_methods m = {.engine = fx->e, .loop = &loop, .batch = &batch};
    struct call c = call(&m, "io.turbosched.Explain", "{\"pid\":999999}", 0);
    assert_int_equal(c.r, -ESRCH);
    assert_string_equal(c.error, TS_ERROR_NO_SUCH_PROCESS);
    json_object_put(c.reply);
    c = call(&m, "io.turbosched.Explain", NULL, 0);
    assert_int_equal(c.r, -EINVAL);
    assert_null(c.error);
    assert_null(c.reply);
}

/* What has no handler in the table is not the daemon's to answer:
 * GetInfo is the server's, and a method not ours reaches no handler. */
static void test_not_ours(void **state)
{
    struct control_methods m = {0}; /* no handler may touch it */
    static const char *const names[] = {"org.varlink.service.GetInfo", "io.turbosched.Nope", "io.turbosched.status",
                                        ""};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        struct call c = call(&m, names[i], NULL, 0);
        assert_int_equal(c.r, -EOPNOTSUPP);
        assert_null(c.reply);
        assert_null(c.error);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_each_method_routed, efx_setup, efx_teardown),
        cmocka_unit_test_setup_teardown(test_session_pause_ends_with_connection, efx_setup, efx_teardown),
        cmocka_unit_test_setup_teardown(test_explain_errors, efx_setup, efx_teardown),
        cmocka_unit_test(test_not_ours),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
