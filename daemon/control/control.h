/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Control socket server: Varlink over a unix stream socket in the daemon's
 * sd-event loop. Knows nothing of daemon state: it frames, decodes, checks
 * permissions and hands each request to the daemon's handler. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "varlink.h"

struct json_object;
struct control_server;

/* CONTROL_SOCKET_PATH_DEFAULT: varlink.h, beside the interface it serves */
#define CONTROL_MAX_CLIENTS_DEFAULT 64u
#define CONTROL_MAX_REQUEST_DEFAULT (64u * 1024u)
#define CONTROL_MAX_OUTPUT_DEFAULT (16u * 1024u * 1024u)
#define CONTROL_IDLE_TIMEOUT_MS_DEFAULT 30000u

struct control_peer {
    uid_t uid;
    gid_t gid;
    pid_t pid;
    uint64_t conn_id; /* this connection, unique while the server lives (never 0) */
};

/* Called for io.turbosched.* methods only (GetInfo, unknown methods, bad
 * requests and permission checks are handled by the server). Return 0 with
 * *reply set (ownership passes to the server; NULL means {}), or a negative
 * errno with *error set to a varlink error name (*reply may then carry the
 * error's parameters). A negative return without *error becomes
 * io.turbosched.InternalError. method is the full name; compare it with
 * varlink_method_from_name() (varlink.h). Explain's "pid" is already checked
 * to be a positive integer; the methods the table in control-methods.c
 * marks root_only (Reload, Pause, Resume) reach the handler only for uid 0.
 * The daemon's handler is control_methods_handle(). */
typedef int (*control_handler_fn)(void *userdata, const char *method, struct json_object *params,
                                  const struct control_peer *peer, struct json_object **reply, const char **error);

/* What a connected client can make the server do is bounded: per wake-up
 * each client gets a few requests' worth of work (a Dump is all of it), the
 * rest waits its turn behind every other event source; one-way queries are
 * not run. Of max_clients, 1/16 (at least one) are kept for root, one
 * unprivileged uid holds at most a quarter of the rest, and when the slots
 * are full root (or a user holding fewer) evicts the unprivileged client
 * idle longest. Unprivileged Dumps share a rate (8 at once, 4 per second)
 * and are refused with io.turbosched.Busy, before being built, while the
 * unsent replies of all clients exceed 4 * max_output.
 *
 * Creates the parent directory (0755) if missing, replaces a stale socket
 * (-EADDRINUSE if a live server answers there, -EEXIST if the path is not a
 * socket), binds mode 0600, or 0660 owned by ro_group when given (-ENOENT if
 * the group does not exist; a numeric gid works too). max_clients 0 →
 * CONTROL_MAX_CLIENTS_DEFAULT. Logs why it failed; the caller need not. */
int control_server_new(sd_event *e, const char *path, const char *ro_group, unsigned max_clients, control_handler_fn fn,
                       void *userdata, struct control_server **ret);
/* Called when a connection closes, for whatever reason (a pause held by a
 * connection ends with it). */
typedef void (*control_close_fn)(void *userdata, const struct control_peer *peer);
void control_server_set_close_hook(struct control_server *s, control_close_fn fn);
/* Closes every client and unlinks the socket. NULL is fine. */
void control_server_free(struct control_server *s);

/* Tuning, mainly for tests; 0 keeps the current value. max_request bounds one
 * request, max_output the unsent reply bytes per client (over it the client
 * is dropped), idle_timeout_ms drops a client that makes no progress. */
void control_server_set_limits(struct control_server *s, size_t max_request, size_t max_output,
                               unsigned idle_timeout_ms);
unsigned control_server_n_clients(const struct control_server *s);
/* Reply bytes queued for all clients and not yet taken by their sockets. */
size_t control_server_unsent(const struct control_server *s);
/* Clients refused since start: no slot free for their uid. */
unsigned long control_server_n_refused(const struct control_server *s);
