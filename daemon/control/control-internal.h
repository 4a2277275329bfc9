/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the control server's modules share: the server and client structs
 * and the few functions one module calls in another. Not for other daemon
 * modules, which see only control.h. */
#pragma once
#include "log.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "control.h"
#include "varlink.h"

#define READ_CHUNK 16384
/* Reads per wake-up: one busy client must not starve the others. */
#define READS_PER_DISPATCH 4
#define ACCEPT_RETRY_MS 100
/* Work per client per wake-up, in request units: the rest of what a client
 * sent waits for a later loop iteration, behind every other event source
 * (netlink, the timer, the watchdog, other clients). Without it a client
 * that pipelines thousands of requests held the loop until systemd's
 * watchdog killed the daemon. A Dump or an Explain costs the whole budget. */
#define DISPATCH_BUDGET 8u
#define COST_DUMP DISPATCH_BUDGET
/* Dumps and Explains for unprivileged callers, all of them together: a
 * burst, then a steady rate. Root is not limited. */
#define UNPRIV_DUMP_BURST 8u
#define UNPRIV_DUMP_PER_S 4u
/* Statuses and Metrics for unprivileged callers, all of them together:
 * their own bucket, so that a client polling Status does not hold back
 * another's Dump. Root is not limited. A refusal is answered after the
 * time a token takes to come (1 / UNPRIV_STATUS_PER_S s): answered at
 * once, a client connecting for each request had its refusals at 24,000
 * a second, and the daemon spent 0.7 CPU accepting and refusing them. */
#define UNPRIV_STATUS_BURST 20u
#define UNPRIV_STATUS_PER_S 10u
/* A token bucket: in thousandths of a token, refilled at per_s up to burst. */
struct control_bucket {
    unsigned burst, per_s;
    uint64_t tokens_milli, refill_usec; /* refill_usec 0: never used (full) */
};
/* Pure: take a token at now_usec; false when there is none. */
bool control_bucket_take(struct control_bucket *b, uint64_t now_usec);
/* Replies beyond this give glibc's freed heap back to the system. */
#define CONTROL_TRIM_AFTER_BYTES (1u << 20)
/* Unsent reply bytes of all clients together, over which an unprivileged
 * client's Dump is refused before it is built (and an unprivileged client
 * whose reply pushes the total over is dropped). */
#define CONTROL_MAX_OUTPUT_TOTAL (4u * CONTROL_MAX_OUTPUT_DEFAULT)

struct control_client {
    struct control_server *server;
    struct control_client *prev, *next;
    int fd;
    sd_event_source *io, *timer;
    bool queued; /* in the server's backlog: frames left over from a used-up budget */
    struct control_client *q_next;
    uint64_t last_active_usec; /* for choosing whom to evict */
    struct control_peer peer;
    struct varlink_reader in;
    char *out;
    size_t out_off, out_len, out_cap; /* unsent bytes are out[out_off..out_len) */
    bool input_closed;                /* EOF seen, or input no longer wanted */
    /* A refused Status or Metrics: its reply waits until then (0: none),
     * so that asking again at once costs the asker the wait, not the
     * daemon another request */
    uint64_t held_until_usec;
    bool close_after_flush;
};

struct control_server {
    sd_event *event;
    char *path;
    int fd;
    sd_event_source *listen_source, *retry_timer;
    control_handler_fn fn;
    void *userdata;
    unsigned max_clients, n_clients;
    unsigned long n_refused;
    bool limit_logged;
    struct log_ratelimit client_logs; /* what clients cause: refusals, drops */
    size_t max_request, max_output, max_output_total;
    unsigned idle_timeout_ms;
    struct control_bucket dumps;          /* unprivileged Dumps and Explains */
    struct control_bucket statuses;       /* unprivileged Statuses and Metrics */
    size_t last_reply_len, last_dump_len; /* the next Dump will be about as long */
    struct control_client *clients;
    control_close_fn on_close; /* a pause held by a connection ends with it */
    uint64_t last_conn_id;
    /* Clients with frames left over, served round-robin by a defer source
     * below normal priority: any socket, timer or signal that is ready
     * goes first, and every backlogged client gets its turn. */
    sd_event_source *more;
    struct control_client *q_head, *q_tail;
};

/* control.c */
void control_client_free(struct control_client *c);

/* control-clients.c: who gets a slot. Whether a new client of uid is
 * admitted, evicting another client if that is fair; on false *why says
 * why not. */
bool control_admit(struct control_server *s, uid_t uid, const char **why);
/* Counts, logs (once until a slot frees) and tells the client why, then
 * closes fd. */
void control_refuse(struct control_server *s, int fd, uid_t uid, const char *why);

/* control-socket.c: the listening socket. Creates the parent directory,
 * replaces a stale socket and binds path with mode 0600, or 0660 owned by
 * ro_group, then listens. Logs why it failed. On success *ret_fd is the
 * listening socket (non-blocking, close-on-exec) and *ret_mode its mode. */
int control_socket_listen(const char *path, const char *ro_group, int *ret_fd, mode_t *ret_mode);
