/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Pause and Resume as the control socket answers them (control-pause.c):
 * the administrator's pause or a connection's, the reply's fields, and the
 * error when too many connections hold one. The engine's side is
 * test-engine-pause's; the routing, test-control-methods'. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>

#include "control-pause.h"
#include "control.h"
#include "engine-fixture.h"
#include "engine.h"

static struct json_object *get(struct json_object *o, const char *key)
{
    struct json_object *v;
    if (!json_object_object_get_ex(o, key, &v))
        fail_msg("no \"%s\" in %s", key, json_object_to_json_string(o));
    return v;
}

static bool get_bool(struct json_object *o, const char *key) { return json_object_get_boolean(get(o, key)); }
static int64_t get_int(struct json_object *o, const char *key) { return json_object_get_int64(get(o, key)); }

/* One call of the handler: params as JSON text (NULL: none), from the
 * connection conn_id; the reply is returned, the result in *r. */
static struct json_object *handle(struct engine *e, bool resume, const char *params, uint64_t conn_id, int *r,
                                  const char **error)
{
    struct control_peer peer = {.uid = 0, .pid = 4242, .conn_id = conn_id};
    struct json_object *p = params ? json_tokener_parse(params) : NULL;
    if (params)
        assert_non_null(p);
    struct json_object *reply = NULL;
    *error = NULL;
    *r = control_pause_handle(e, resume, p, &peer, &reply, error);
    json_object_put(p);
    assert_non_null(reply);
    return reply;
}

/* The administrator's pause: undone the three packed tasks, changed once;
 * a second pause changes nothing; the resume has no "undone". */
static void test_admin_pause_and_resume(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    efx_start(fx);
    efx_tick_with(fx, efx_busy_load);
    efx_tick_with(fx, efx_busy_load);

    struct json_object *o = control_pause_json(e);
    assert_false(get_bool(o, "paused"));
    assert_int_equal(get_int(o, "since_s"), 0);
    json_object_put(o);

    int r;
    const char *error;
    o = handle(e, false, NULL, 7, &r, &error);
    assert_int_equal(r, 0);
    assert_null(error);
    assert_true(get_bool(o, "paused"));
    assert_true(get_bool(o, "admin"));
    assert_int_equal(get_int(o, "sessions"), 0);
    assert_int_equal(get_int(o, "since_s"), 0);
    assert_true(get_bool(o, "changed"));
    assert_int_equal(get_int(o, "undone"), 3);
    json_object_put(o);
    assert_true(engine_paused(e));

    o = handle(e, false, "{}", 7, &r, &error);
    assert_int_equal(r, 0);
    assert_false(get_bool(o, "changed"));
    assert_int_equal(get_int(o, "undone"), 0);
    json_object_put(o);

    o = handle(e, true, NULL, 7, &r, &error);
    assert_int_equal(r, 0);
    assert_null(error);
    assert_false(get_bool(o, "paused"));
    assert_false(get_bool(o, "admin"));
    assert_true(get_bool(o, "changed"));
    assert_false(json_object_object_get_ex(o, "undone", NULL));
    json_object_put(o);
    assert_false(engine_paused(e));
}

/* "session": true holds the pause for the calling connection only: the
 * administrator's resume does not end it, that connection's does; past
 * the limit of connections holding one, the reply is an error. */
static void test_session_pause(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    efx_start(fx);
    int r;
    const char *error;
    struct json_object *o = handle(e, false, "{\"session\":true}", 9, &r, &error);
    assert_int_equal(r, 0);
    assert_true(get_bool(o, "paused"));
    assert_false(get_bool(o, "admin"));
    assert_int_equal(get_int(o, "sessions"), 1);
    assert_true(get_bool(o, "changed"));
    json_object_put(o);

    o = handle(e, true, NULL, 9, &r, &error); /* the administrator's: none held */
    assert_true(get_bool(o, "paused"));
    assert_false(get_bool(o, "changed"));
    json_object_put(o);
    o = handle(e, true, "{\"session\":true}", 10, &r, &error); /* another connection's */
    assert_true(get_bool(o, "paused"));
    json_object_put(o);
    o = handle(e, true, "{\"session\":true}", 9, &r, &error);
    assert_false(get_bool(o, "paused"));
    assert_true(get_bool(o, "changed"));
    json_object_put(o);

    unsigned held = 0;
    for (uint64_t id = 100;; id++) {
        o = handle(e, false, "{\"session\":true}", id, &r, &error);
        if (r < 0)
            break;
        assert_int_equal(get_int(o, "sessions"), ++held);
        json_object_put(o);
        assert_true(held < 1000);
    }
    assert_int_equal(r, -EUSERS);
    assert_string_equal(error, "io.turbosched.Busy");
    assert_string_equal(json_object_get_string(get(o, "reason")), "too many connections hold a pause");
    assert_false(json_object_object_get_ex(o, "paused", NULL));
    json_object_put(o);
    assert_true(held > 1);
    o = control_pause_json(e);
    assert_int_equal(get_int(o, "sessions"), held);
    json_object_put(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_admin_pause_and_resume, efx_setup_live, efx_teardown),
        cmocka_unit_test_setup_teardown(test_session_pause, efx_setup, efx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
