/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One blocking Varlink call to the daemon's control socket. */
#pragma once

struct json_object;

/* Returns 0 with *reply (an object) and *error (malloc'd varlink error name,
 * NULL on success); -ECONNREFUSED/-ENOENT/-EACCES... when connecting fails;
 * -ETIMEDOUT, -ECONNRESET or -EBADMSG when the exchange fails. */
int ctl_call(const char *path, const char *method, struct json_object *params, int timeout_ms,
             struct json_object **reply, char **error);
/* A connection kept for several calls (a pause tied to it lives as long as
 * it): the fd, or -errno. */
int ctl_connect(const char *path);
/* One call on a connection from ctl_connect; as ctl_call. */
int ctl_call_fd(int fd, const char *method, struct json_object *params, int timeout_ms, struct json_object **reply,
                char **error);
/* Where it failed, for the message: "connecting to" or "talking to". */
extern const char *ctl_call_stage;
