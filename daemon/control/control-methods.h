/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The control socket's methods: one table from each method to its handler,
 * with what the server checks before it calls one (root only, what it
 * costs). The handlers answer from the engine through report.c and
 * control-pause.c; what belongs to the daemon's process (a reload's
 * notifications, its status line, the event loop) comes through struct
 * control_methods. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "varlink.h"

struct control_peer;
struct engine;
struct json_object;
struct loop;
struct loop_batch;

/* What the handlers act on: given to the server as the userdata of
 * control_methods_handle. */
struct control_methods {
    struct engine *engine;
    const struct loop *loop;        /* Status's "event_loop" */
    const struct loop_batch *batch; /* whether an exec socket rings */
    void *userdata;
    /* The daemon's reload (the engine's, with what the process does around
     * it); fills msg. Returns 0 or a negative errno. */
    int (*reload)(void *userdata, char *msg, size_t size);
    /* The pause state changed: the status line follows. */
    void (*status_changed)(void *userdata);
};

typedef int (*control_method_fn)(const struct control_methods *m, struct json_object *params,
                                 const struct control_peer *peer, struct json_object **reply, const char **error);

/* What a method costs, as the server counts it. */
enum control_cost {
    CONTROL_COST_ONE, /* one request unit: GetInfo, and what only root may call */
    /* A report of the whole daemon, of a fixed size: one request unit, and
     * a share of one rate for all unprivileged callers (a member of
     * control_group asking for Status in a loop kept the daemon busy). */
    CONTROL_COST_RATED,
    /* Grows with the tasks it covers (every task, every thread of a
     * process): the whole of a client's budget per wake-up, and a share of
     * another rate for all unprivileged callers. */
    CONTROL_COST_TASKS,
};

struct control_method {
    enum varlink_method id;
    /* It changes the daemon's state: the server grants it to uid 0 only,
     * and runs it even one-way. */
    bool root_only;
    enum control_cost cost;
    control_method_fn fn; /* NULL: the server's own (GetInfo) */
};

/* The row of method id, NULL for one that is not ours. */
const struct control_method *control_method_find(enum varlink_method id);

/* A control_handler_fn (control.h): userdata is a struct control_methods.
 * Routes method through the table; -EOPNOTSUPP for a method without a
 * handler there. */
int control_methods_handle(void *userdata, const char *method, struct json_object *params,
                           const struct control_peer *peer, struct json_object **reply, const char **error);
/* A control_close_fn (control.h), with the same userdata: a pause held by
 * a connection (turbosched-ctl compare) ends with it. */
void control_methods_closed(void *userdata, const struct control_peer *peer);
