/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The control socket's Pause and Resume, and the pause state as status and
 * metrics show it. */
#pragma once
#include <stdbool.h>

struct engine;
struct json_object;
struct control_peer;

/* io.turbosched.Pause / io.turbosched.Resume. {"session": true} ties the
 * pause to the calling connection: it ends when that connection closes,
 * however the client ends. Reply: {"paused", "changed", "admin",
 * "sessions", "undone"}. The server lets only root reach this. */
int control_pause_handle(struct engine *e, bool resume, struct json_object *params, const struct control_peer *peer,
                         struct json_object **reply, const char **error);
/* {"paused", "admin", "sessions", "since_s"} for Status. */
struct json_object *control_pause_json(const struct engine *e);
