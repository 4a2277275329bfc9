/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "control-methods.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>

#include "control.h"
#include "control-pause.h"
#include "engine.h"
#include "log.h"
#include "loop.h"
#include "report.h"
#include "util.h"

/* How process events are handled (loop.c): for status. */
static struct json_object *loop_json(const struct control_methods *m)
{
    const struct loop *l = m->loop;
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "realtime_priority", json_object_new_int64(loop_realtime(l) ? l->priority : 0));
    json_object_object_add(o, "realtime_refused", json_object_new_boolean(l->priority > 0 && l->rt_failed));
    json_object_object_add(o, "exec_socket", json_object_new_boolean(m->batch->doorbell));
    json_object_object_add(o, "dispatched_realtime", json_object_new_int64((int64_t)l->dispatched_rt));
    json_object_object_add(o, "dispatched_normal", json_object_new_int64((int64_t)l->dispatched_normal));
    json_object_object_add(o, "dispatched_over_budget", json_object_new_int64((int64_t)l->dispatched_over_budget));
    json_object_object_add(o, "dispatched_demoted", json_object_new_int64((int64_t)l->dispatched_demoted));
    json_object_object_add(o, "dispatched_resting", json_object_new_int64((int64_t)l->dispatched_resting));
    json_object_object_add(o, "realtime_cpu_ns", json_object_new_int64((int64_t)l->rt_cpu_ns));
    json_object_object_add(o, "sigxcpu", json_object_new_int64((int64_t)l->xcpu));
    return o;
}

static int method_status(const struct control_methods *m, struct json_object *params, const struct control_peer *peer,
                         struct json_object **reply, const char **error)
{
    *reply = report_status(m->engine);
    if (*reply)
        json_object_object_add(*reply, "event_loop", loop_json(m));
    return 0;
}

static int method_dump(const struct control_methods *m, struct json_object *params, const struct control_peer *peer,
                       struct json_object **reply, const char **error)
{
    *reply = report_dump(m->engine);
    return 0;
}

static int method_metrics(const struct control_methods *m, struct json_object *params, const struct control_peer *peer,
                          struct json_object **reply, const char **error)
{
    *reply = report_metrics(m->engine);
    return 0;
}

static int method_explain(const struct control_methods *m, struct json_object *params, const struct control_peer *peer,
                          struct json_object **reply, const char **error)
{
    struct json_object *pid;
    if (!json_object_object_get_ex(params, "pid", &pid))
        return -EINVAL;
    int r = report_explain(m->engine, (pid_t)json_object_get_int64(pid), reply);
    if (r == -ESRCH)
        *error = TS_ERROR_NO_SUCH_PROCESS;
    return r;
}

static int method_reload(const struct control_methods *m, struct json_object *params, const struct control_peer *peer,
                         struct json_object **reply, const char **error)
{
    char msg[256];
    log_info("reload requested over the control socket by uid %u pid %d", (unsigned)peer->uid, (int)peer->pid);
    int r = m->reload(m->userdata, msg, sizeof msg);
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "message", json_object_new_string(msg));
    *reply = o;
    if (r < 0)
        *error = "io.turbosched.ReloadFailed";
    return r;
}

static int pause_or_resume(const struct control_methods *m, bool resume, struct json_object *params,
                           const struct control_peer *peer, struct json_object **reply, const char **error)
{
    int r = control_pause_handle(m->engine, resume, params, peer, reply, error);
    m->status_changed(m->userdata);
    return r;
}

static int method_pause(const struct control_methods *m, struct json_object *params, const struct control_peer *peer,
                        struct json_object **reply, const char **error)
{
    return pause_or_resume(m, false, params, peer, reply, error);
}

static int method_resume(const struct control_methods *m, struct json_object *params, const struct control_peer *peer,
                         struct json_object **reply, const char **error)
{
    return pause_or_resume(m, true, params, peer, reply, error);
}

static const struct control_method methods[_VARLINK_METHOD_MAX] = {
    [VARLINK_METHOD_GET_INFO] = {VARLINK_METHOD_GET_INFO, .fn = NULL},
    [VARLINK_METHOD_STATUS] = {VARLINK_METHOD_STATUS, .cost = CONTROL_COST_RATED, .fn = method_status},
    [VARLINK_METHOD_DUMP] = {VARLINK_METHOD_DUMP, .cost = CONTROL_COST_TASKS, .fn = method_dump},
    [VARLINK_METHOD_EXPLAIN] = {VARLINK_METHOD_EXPLAIN, .cost = CONTROL_COST_TASKS, .fn = method_explain},
    [VARLINK_METHOD_RELOAD] = {VARLINK_METHOD_RELOAD, .root_only = true, .fn = method_reload},
    [VARLINK_METHOD_METRICS] = {VARLINK_METHOD_METRICS, .cost = CONTROL_COST_RATED, .fn = method_metrics},
    [VARLINK_METHOD_PAUSE] = {VARLINK_METHOD_PAUSE, .root_only = true, .fn = method_pause},
    [VARLINK_METHOD_RESUME] = {VARLINK_METHOD_RESUME, .root_only = true, .fn = method_resume},
};

const struct control_method *control_method_find(enum varlink_method id)
{
    if (id < 0 || id >= _VARLINK_METHOD_MAX)
        return NULL;
    return &methods[id];
}

int control_methods_handle(void *userdata, const char *method, struct json_object *params,
                           const struct control_peer *peer, struct json_object **reply, const char **error)
{
    const struct control_method *row = control_method_find(varlink_method_from_name(method));
    if (!row || !row->fn)
        return -EOPNOTSUPP;
    return row->fn(userdata, params, peer, reply, error);
}

void control_methods_closed(void *userdata, const struct control_peer *peer)
{
    const struct control_methods *m = userdata;
    engine_session_closed(m->engine, peer->conn_id);
    m->status_changed(m->userdata);
}
