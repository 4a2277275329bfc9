/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "control-pause.h"

#include <errno.h>
#include <json-c/json.h>

#include "control.h"
#include "engine.h"
#include "engine-snapshot.h"
#include "log.h"
#include "util.h"

struct json_object *control_pause_json(const struct engine *e)
{
    struct json_object *o = json_object_new_object();
    if (!o)
        return NULL;
    struct engine_pause_snapshot p;
    engine_pause_snapshot(e, &p);
    json_object_object_add(o, "paused", json_object_new_boolean(p.paused));
    json_object_object_add(o, "admin", json_object_new_boolean(p.admin));
    json_object_object_add(o, "sessions", json_object_new_int64(p.n_sessions));
    uint64_t since = p.paused && p.since_ms ? (now_ms() - p.since_ms) / 1000 : 0;
    json_object_object_add(o, "since_s", json_object_new_int64((int64_t)since));
    return o;
}

int control_pause_handle(struct engine *e, bool resume, struct json_object *params, const struct control_peer *peer,
                         struct json_object **reply, const char **error)
{
    struct json_object *v;
    bool session = params && json_object_object_get_ex(params, "session", &v) && json_object_get_boolean(v);
    uint64_t id = session ? peer->conn_id : 0;
    bool was = engine_paused(e);
    int r;
    if (resume) {
        r = engine_resume(e, id);
    } else {
        log_info("pause requested over the control socket by uid %u pid %d%s", (unsigned)peer->uid, (int)peer->pid,
                 session ? " while its connection lives" : "");
        r = engine_pause(e, id);
        if (r == -EUSERS) {
            *error = "io.turbosched.Busy";
            *reply = json_object_new_object();
            json_object_object_add(*reply, "reason", json_object_new_string("too many connections hold a pause"));
            return r;
        }
    }
    struct json_object *o = control_pause_json(e);
    if (!o)
        return -ENOMEM;
    json_object_object_add(o, "changed", json_object_new_boolean(was != engine_paused(e)));
    if (!resume)
        json_object_object_add(o, "undone", json_object_new_int64(r > 0 ? r : 0));
    *reply = o;
    return 0;
}
