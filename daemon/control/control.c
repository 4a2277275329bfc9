/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "control.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>

#include "control-methods.h"
#include "log.h"
#include "nss.h"
#include "util.h"
#include "varlink.h"
#include "version.h"

#include "control-internal.h"

static void backlog_remove(struct control_client *c)
{
    struct control_server *s = c->server;
    if (!c->queued)
        return;
    struct control_client **pp = &s->q_head, *prev = NULL;
    while (*pp != c) {
        assert(*pp); /* queued means in the backlog */
        prev = *pp;
        pp = &(*pp)->q_next;
    }
    *pp = c->q_next;
    if (s->q_tail == c)
        s->q_tail = prev;
    c->q_next = NULL;
    c->queued = false;
    if (!s->q_head)
        sd_event_source_set_enabled(s->more, SD_EVENT_OFF);
}

static int backlog_add(struct control_client *c)
{
    struct control_server *s = c->server;
    if (c->queued)
        return 0;
    c->queued = true;
    c->q_next = NULL;
    if (s->q_tail)
        s->q_tail->q_next = c;
    else
        s->q_head = c;
    s->q_tail = c;
    return sd_event_source_set_enabled(s->more, SD_EVENT_ON);
}

void control_client_free(struct control_client *c)
{
    if (!c)
        return;
    struct control_server *s = c->server;
    if (s->on_close)
        s->on_close(s->userdata, &c->peer);
    sd_event_source_disable_unref(c->io);
    sd_event_source_disable_unref(c->timer);
    backlog_remove(c);
    if (c->fd >= 0)
        close(c->fd);
    varlink_reader_done(&c->in);
    free(c->out);
    if (c->prev)
        c->prev->next = c->next;
    else
        s->clients = c->next;
    if (c->next)
        c->next->prev = c->prev;
    assert(s->n_clients > 0);
    s->n_clients--;
    if (s->n_clients < s->max_clients)
        s->limit_logged = false;
    free(c);
}

static size_t client_unsent(const struct control_client *c)
{
    assert(c->out_off <= c->out_len && c->out_len <= c->out_cap);
    return c->out_len - c->out_off;
}

static void client_touch(struct control_client *c)
{
    uint64_t now;
    if (sd_event_now(c->server->event, CLOCK_MONOTONIC, &now) < 0)
        return;
    c->last_active_usec = now;
    int r = sd_event_source_set_time(c->timer, now + (uint64_t)c->server->idle_timeout_ms * 1000u);
    if (r < 0)
        log_debug_errno(r, "control: client pid %d: moving its idle deadline: %m", (int)c->peer.pid);
}

static bool client_has_frame(const struct control_client *c)
{
    const struct varlink_reader *r = &c->in;
    return r->len > r->start && memchr(r->buf + r->start, '\0', r->len - r->start);
}

/* Wait for input only while nothing is queued: a client that does not read
 * its replies stops being served instead of growing our buffer. Frames left
 * over when the budget ran out wait in the backlog; meanwhile nothing more
 * is read from that client. */
static int client_update_events(struct control_client *c)
{
    if (c->held_until_usec) {
        /* a held reply: nothing from or to this client until its timer */
        backlog_remove(c);
        int r = sd_event_source_set_enabled(c->io, SD_EVENT_OFF);
        if (r >= 0)
            r = sd_event_source_set_time(c->timer, c->held_until_usec);
        return r < 0 ? r : sd_event_source_set_enabled(c->timer, SD_EVENT_ONESHOT);
    }
    if (client_unsent(c) == 0 && !c->close_after_flush && client_has_frame(c)) {
        int r = sd_event_source_set_enabled(c->io, SD_EVENT_OFF);
        return r < 0 ? r : backlog_add(c);
    }
    backlog_remove(c);
    int r = sd_event_source_set_enabled(c->io, SD_EVENT_ON);
    if (r < 0)
        return r;
    uint32_t events = 0;
    if (client_unsent(c) > 0)
        events = EPOLLOUT;
    else if (!c->input_closed && !c->close_after_flush)
        events = EPOLLIN;
    if (events == 0)
        return 0;
    return sd_event_source_set_io_events(c->io, events);
}

static size_t server_unsent(const struct control_server *s)
{
    size_t total = 0;
    for (const struct control_client *c = s->clients; c; c = c->next)
        total += client_unsent(c);
    return total;
}

bool control_bucket_take(struct control_bucket *b, uint64_t now_usec)
{
    const uint64_t full = (uint64_t)b->burst * 1000u;
    if (b->refill_usec == 0 || now_usec < b->refill_usec) {
        b->tokens_milli = full;
        b->refill_usec = now_usec;
    } else {
        /* whole thousandths of a token only: the time of the rest is
         * credited at the next call, so that requests closer together
         * than a thousandth's refill do not keep the bucket empty */
        uint64_t milli = (now_usec - b->refill_usec) * b->per_s / 1000u;
        b->tokens_milli = MIN(full, b->tokens_milli + milli);
        b->refill_usec = b->tokens_milli == full ? now_usec : b->refill_usec + milli * 1000u / b->per_s;
    }
    if (b->tokens_milli < 1000u)
        return false;
    b->tokens_milli -= 1000u;
    return true;
}

/* One token of b per unprivileged request of its kind; false when there is none. */
static bool take_token(struct control_server *s, struct control_bucket *b)
{
    uint64_t now;
    if (sd_event_now(s->event, CLOCK_MONOTONIC, &now) < 0)
        return true;
    return control_bucket_take(b, now);
}

static int client_queue(struct control_client *c, const char *data, size_t len)
{
    if (c->out_off > 0 && c->out_off == c->out_len)
        c->out_off = c->out_len = 0;
    if (c->out_len + len > c->out_cap) {
        size_t cap = c->out_cap ? c->out_cap : 4096;
        while (cap < c->out_len + len)
            cap *= 2;
        char *p = realloc(c->out, cap);
        if (!p)
            return -ENOMEM;
        c->out = p;
        c->out_cap = cap;
    }
    memcpy(c->out + c->out_len, data, len);
    c->out_len += len;
    return 0;
}

/* Returns 0, or -errno when the client is gone. */
static int client_flush(struct control_client *c)
{
    while (client_unsent(c) > 0) {
        ssize_t n = send(c->fd, c->out + c->out_off, client_unsent(c), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN)
                return 0;
            return -errno;
        }
        c->out_off += (size_t)n;
        client_touch(c);
    }
    c->out_off = c->out_len = 0;
    /* One large dump must not pin its buffer for the life of the connection. */
    if (c->out_cap > 65536) {
        free(c->out);
        c->out = NULL;
        c->out_cap = 0;
    }
    return 0;
}

static int client_reply(struct control_client *c, struct json_object *params, const char *error)
{
    size_t len;
    _cleanup_free_ char *msg = varlink_reply_format(params, error, &len);
    if (!msg)
        return -ENOMEM;
    c->server->last_reply_len = len;
    int r = 0;
    if (client_unsent(c) == 0) {
        /* The usual case: adopt the formatted reply instead of copying it. */
        free(c->out);
        c->out = TAKE_PTR(msg);
        c->out_off = 0;
        c->out_len = c->out_cap = len;
    } else {
        r = client_queue(c, msg, len);
        if (r < 0)
            return r;
    }
    r = c->held_until_usec ? 0 : client_flush(c);
    if (r < 0)
        return r;
    if (client_unsent(c) > c->server->max_output) {
        log_ratelimited(&c->server->client_logs, LOG_WARNING,
                        "control: client pid %d uid %u: %zu reply bytes unread, over the %zu byte bound, dropping it",
                        (int)c->peer.pid, (unsigned)c->peer.uid, client_unsent(c), c->server->max_output);
        return -ENOBUFS;
    }
    if (c->peer.uid != 0 && client_unsent(c) > 0 && server_unsent(c->server) > c->server->max_output_total) {
        log_ratelimited(&c->server->client_logs, LOG_WARNING,
                        "control: client pid %d uid %u: replies unread by all clients over %zu bytes, dropping it",
                        (int)c->peer.pid, (unsigned)c->peer.uid, c->server->max_output_total);
        return -ENOBUFS;
    }
    return 0;
}

static int reply_error(struct control_client *c, const char *error, const char *key, const char *value)
{
    struct json_object *p = json_object_new_object();
    if (!p)
        return -ENOMEM;
    if (key && value)
        json_object_object_add(p, key, json_object_new_string(value));
    int r = client_reply(c, p, error);
    json_object_put(p);
    return r;
}

static struct json_object *get_info(void)
{
    struct json_object *o = json_object_new_object(), *ifaces = json_object_new_array();
    if (!o || !ifaces) {
        json_object_put(o);
        json_object_put(ifaces);
        return NULL;
    }
    json_object_object_add(o, "vendor", json_object_new_string("turbosched"));
    json_object_object_add(o, "product", json_object_new_string("turboschedd"));
    json_object_object_add(o, "version", json_object_new_string(TS_VERSION));
    json_object_object_add(o, "url", json_object_new_string(""));
    json_object_array_add(ifaces, json_object_new_string("org.varlink.service"));
    json_object_array_add(ifaces, json_object_new_string("io.turbosched"));
    json_object_object_add(o, "interfaces", ifaces);
    return o;
}

/* A frame that did not decode: one unit of cost, and an error reply unless
 * it was one-way. Returns 0, or -errno when the client must be dropped. */
static int reply_bad_request(struct control_client *c, struct varlink_request *req, const struct varlink_error *err,
                             int r)
{
    log_debug("control: client pid %d uid %u: %s: %s", (int)c->peer.pid, (unsigned)c->peer.uid,
              req->method ? req->method : "request", err->reason ? err->reason : strerror(-r));
    bool oneway = req->oneway;
    varlink_request_done(req);
    if (oneway)
        return 0;
    if (err->parameter && err->name && strcmp(err->name, VARLINK_ERROR_INVALID_PARAMETER) == 0)
        return reply_error(c, err->name, "parameter", err->parameter);
    return reply_error(c, err->name ? err->name : TS_ERROR_INTERNAL, "reason", err->reason);
}

/* An unprivileged Dump or Explain (whose cost grows with the tasks it
 * covers: every task, every thread of a process) waits when the unread
 * replies are many or the rate is spent; the two share one rate. Checked
 * before the reply is built, with the last Dump's length for a Dump's: it
 * may be megabytes. An unprivileged Status or Metrics waits when their
 * own rate is spent. Returns whether it was refused, with *reply and
 * *error set. */
static bool refuse_costly(struct control_client *c, const struct control_method *m, const char *method,
                          struct json_object **reply, const char **error)
{
    struct control_server *s = c->server;
    if (m->cost == CONTROL_COST_RATED) {
        if (take_token(s, &s->statuses))
            return false;
        uint64_t now;
        if (sd_event_now(s->event, CLOCK_MONOTONIC, &now) >= 0)
            c->held_until_usec = now + 1000000u / UNPRIV_STATUS_PER_S;
        log_debug("control: client pid %d uid %u: %s refused, over %u per second for unprivileged callers",
                  (int)c->peer.pid, (unsigned)c->peer.uid, method, UNPRIV_STATUS_PER_S);
        *error = TS_ERROR_BUSY;
        *reply = json_object_new_object();
        json_object_object_add(*reply, "reason",
                               json_object_new_string("unprivileged Status and Metrics rate exceeded"));
        json_object_object_add(*reply, "retry_after_ms", json_object_new_int64(1000 / UNPRIV_STATUS_PER_S));
        return true;
    }
    size_t expect = m->id == VARLINK_METHOD_DUMP ? s->last_dump_len : 0;
    if (server_unsent(s) + expect > s->max_output_total) {
        log_debug("control: client pid %d uid %u: %s refused, %zu reply bytes unread", (int)c->peer.pid,
                  (unsigned)c->peer.uid, method, server_unsent(s));
        *error = TS_ERROR_BUSY;
        *reply = json_object_new_object();
        json_object_object_add(*reply, "reason", json_object_new_string("too many unread replies"));
        return true;
    }
    if (!take_token(s, &s->dumps)) {
        log_debug("control: client pid %d uid %u: %s refused, over %u per second for unprivileged callers",
                  (int)c->peer.pid, (unsigned)c->peer.uid, method, UNPRIV_DUMP_PER_S);
        *error = TS_ERROR_BUSY;
        *reply = json_object_new_object();
        json_object_object_add(*reply, "reason", json_object_new_string("unprivileged Dump and Explain rate exceeded"));
        json_object_object_add(*reply, "retry_after_ms", json_object_new_int64(1000 / UNPRIV_DUMP_PER_S));
        return true;
    }
    return false;
}

/* The daemon's handler, its result checked: a non-object reply or a failure
 * without an error name becomes io.turbosched.InternalError. */
static void call_handler(struct control_client *c, const struct varlink_request *req, struct json_object **reply,
                         const char **error)
{
    struct control_server *s = c->server;
    int r = s->fn(s->userdata, req->method, req->params, &c->peer, reply, error);
    if (r >= 0) {
        *error = NULL;
        if (*reply && !json_object_is_type(*reply, json_type_object)) {
            log_err("control: %s: handler returned a non-object reply, answering an internal error", req->method);
            json_object_put(*reply);
            *reply = NULL;
            *error = TS_ERROR_INTERNAL;
        }
    } else if (!*error) {
        log_debug_errno(r, "control: %s: %m", req->method);
        json_object_put(*reply);
        *reply = json_object_new_object();
        json_object_object_add(*reply, "message", json_object_new_string(strerror(-r)));
        *error = TS_ERROR_INTERNAL;
    }
}

/* The answer to a decoded request: the server's own (GetInfo, unknown
 * methods, refusals as the method table says) or the handler's. */
static void answer(struct control_client *c, const struct varlink_request *req, struct json_object **reply,
                   const char **error)
{
    const struct control_method *m = control_method_find(req->method_id);
    bool unpriv = c->peer.uid != 0;
    if (unpriv && m && m->cost != CONTROL_COST_ONE && refuse_costly(c, m, req->method, reply, error))
        return;
    if (!m) {
        *error = VARLINK_ERROR_METHOD_NOT_FOUND;
        *reply = json_object_new_object();
        json_object_object_add(*reply, "method", json_object_new_string(req->method));
    } else if (!m->fn) {
        *reply = get_info();
        if (!*reply)
            *error = TS_ERROR_INTERNAL;
    } else if (m->root_only && unpriv) {
        log_ratelimited(&c->server->client_logs, LOG_NOTICE,
                        "control: client pid %d uid %u: %s refused, only root may change the daemon's state",
                        (int)c->peer.pid, (unsigned)c->peer.uid, req->method);
        *error = TS_ERROR_PERMISSION_DENIED;
        *reply = json_object_new_object();
        json_object_object_add(*reply, "method", json_object_new_string(req->method));
    } else {
        call_handler(c, req, reply, error);
    }
}

/* Answers one frame, adding what it cost to *cost. Returns 0, or -errno
 * when the client must be dropped. */
static int client_dispatch(struct control_client *c, const char *msg, size_t len, unsigned *cost)
{
    struct varlink_request req;
    struct varlink_error err = {0};
    c->server->last_reply_len = 0; /* this frame's reply, if it gets one */
    int r = varlink_request_decode(msg, len, &req, &err);
    if (r < 0) {
        *cost += 1;
        return reply_bad_request(c, &req, &err, r);
    }
    const struct control_method *m = control_method_find(req.method_id);
    *cost += m && m->cost == CONTROL_COST_TASKS ? COST_DUMP : 1;
    if (req.oneway && !(m && m->root_only)) {
        /* A query whose answer nobody wants: nothing to do. Running it
         * anyway let a flood of one-way Dumps keep the loop busy. */
        varlink_request_done(&req);
        return 0;
    }
    struct json_object *reply = NULL;
    const char *error = NULL;
    answer(c, &req, &reply, &error);
    bool oneway = req.oneway, dump = req.method_id == VARLINK_METHOD_DUMP && !error;
    varlink_request_done(&req);
    r = oneway ? 0 : client_reply(c, reply, error);
    if (dump && !oneway)
        c->server->last_dump_len = c->server->last_reply_len;
    json_object_put(reply);
    /* A reply of megabytes (a Dump of many tasks) leaves glibc's heap that
     * much larger after it is freed: give it back. */
    if (c->server->last_reply_len > CONTROL_TRIM_AFTER_BYTES)
        malloc_trim(0);
    return r;
}

/* Answers the complete frames buffered so far, one at a time, stopping while
 * a reply is still unsent or when *budget is spent (client_update_events
 * then schedules the rest). Returns 0, or -errno to drop the client. */
static int client_process(struct control_client *c, unsigned *budget)
{
    while (client_unsent(c) == 0 && !c->close_after_flush && *budget > 0) {
        const char *msg;
        size_t len;
        int r = varlink_reader_next(&c->in, &msg, &len);
        if (r == 0)
            break;
        if (r == -EMSGSIZE) {
            log_ratelimited(&c->server->client_logs, LOG_INFO,
                            "control: client pid %d uid %u: request over %zu bytes, closing the connection",
                            (int)c->peer.pid, (unsigned)c->peer.uid, c->server->max_request);
            char max[32];
            snprintf(max, sizeof max, "%zu", c->server->max_request);
            c->close_after_flush = true;
            c->input_closed = true;
            r = reply_error(c, TS_ERROR_REQUEST_TOO_LARGE, "max_bytes", max);
            if (r < 0)
                return r;
            break;
        }
        if (r < 0)
            return r;
        unsigned cost = 0;
        r = client_dispatch(c, msg, len, &cost);
        if (r < 0)
            return r;
        *budget -= MIN(cost, *budget);
    }
    return 0;
}

/* Returns 0, or -errno to drop the client. */
static int client_read(struct control_client *c, unsigned *budget)
{
    char buf[READ_CHUNK];
    for (int i = 0; i<READS_PER_DISPATCH && * budget> 0; i++) {
        ssize_t n = recv(c->fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN)
                return 0;
            return -errno;
        }
        if (n == 0) {
            /* A client may shut down its write side and still read replies. */
            c->input_closed = true;
            return 0;
        }
        client_touch(c);
        int r = varlink_reader_feed(&c->in, buf, (size_t)n);
        if (r < 0)
            return r;
        r = client_process(c, budget);
        if (r < 0 || client_unsent(c) > 0 || c->close_after_flush)
            return r;
    }
    return 0;
}

/* After a client's turn: close it when it is done, else wait for what it
 * needs next. Frees the client on error. */
static void client_settle(struct control_client *c, int r)
{
    if (r >= 0 && client_unsent(c) == 0 && (c->close_after_flush || (c->input_closed && !client_has_frame(c)))) {
        if (varlink_reader_pending(&c->in) > 0 && !c->close_after_flush)
            log_debug("control: client pid %d: closed with %zu bytes of an unfinished request", (int)c->peer.pid,
                      varlink_reader_pending(&c->in));
        r = -ECONNRESET; /* nothing more to say or hear */
    }
    if (r >= 0)
        r = client_update_events(c);
    if (r < 0) {
        if (r != -ECONNRESET && r != -EPIPE && r != -ENOBUFS)
            log_debug_errno(r, "control: client pid %d: %m, closing", (int)c->peer.pid);
        control_client_free(c);
    }
}

static int on_client_io(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
    struct control_client *c = userdata;
    unsigned budget = DISPATCH_BUDGET;
    int r = 0;
    /* EPOLLHUP/EPOLLERR come even while only EPOLLOUT is wanted; the send
     * then fails and the client is dropped instead of spinning. */
    if ((revents & (EPOLLOUT | EPOLLHUP | EPOLLERR)) && client_unsent(c) > 0) {
        r = client_flush(c);
        if (r >= 0 && client_unsent(c) == 0)
            r = client_process(c, &budget); /* frames that waited behind the reply */
    }
    if (r >= 0 && (revents & (EPOLLIN | EPOLLHUP | EPOLLERR)) && client_unsent(c) == 0 && !c->input_closed &&
        !client_has_frame(c))
        r = client_read(c, &budget);
    client_settle(c, r);
    return 0;
}

/* One backlogged client's turn; it goes to the back of the queue if it
 * still has frames after this one. */
static int on_backlog(sd_event_source *src, void *userdata)
{
    struct control_server *s = userdata;
    struct control_client *c = s->q_head;
    if (!c) {
        sd_event_source_set_enabled(s->more, SD_EVENT_OFF);
        return 0;
    }
    backlog_remove(c);
    unsigned budget = DISPATCH_BUDGET;
    client_settle(c, client_process(c, &budget));
    return 0;
}

static int on_client_timeout(sd_event_source *src, uint64_t usec, void *userdata)
{
    struct control_client *c = userdata;
    if (c->held_until_usec) {
        /* the held reply goes now; the idle deadline counts again */
        c->held_until_usec = 0;
        client_touch(c);
        int r = sd_event_source_set_enabled(c->timer, SD_EVENT_ONESHOT);
        if (r >= 0)
            r = client_flush(c);
        client_settle(c, r);
        return 0;
    }
    if (client_unsent(c) > 0 || varlink_reader_pending(&c->in) > 0)
        log_ratelimited(&c->server->client_logs, LOG_INFO,
                        "control: client pid %d uid %u: no progress for %u ms with %s pending, dropping it",
                        (int)c->peer.pid, (unsigned)c->peer.uid, c->server->idle_timeout_ms,
                        client_unsent(c) > 0 ? "a reply" : "a partial request");
    else
        log_debug("control: client pid %d: idle for %u ms, closing", (int)c->peer.pid, c->server->idle_timeout_ms);
    control_client_free(c);
    return 0;
}

static int client_new(struct control_server *s, int fd)
{
    struct ucred cred;
    socklen_t cl = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0) {
        int r = log_warning_errno(-errno, "control: SO_PEERCRED on a new connection: %m, closing it");
        close(fd);
        return r;
    }
    const char *why = NULL;
    if (!control_admit(s, cred.uid, &why)) {
        control_refuse(s, fd, cred.uid, why);
        return -EUSERS;
    }
    struct control_client *c = calloc(1, sizeof *c);
    if (!c) {
        close(fd);
        return -ENOMEM;
    }
    c->server = s;
    c->fd = fd;
    c->peer = (struct control_peer){.uid = cred.uid, .gid = cred.gid, .pid = cred.pid, .conn_id = ++s->last_conn_id};
    varlink_reader_init(&c->in, s->max_request);
    c->next = s->clients;
    if (s->clients)
        s->clients->prev = c;
    s->clients = c;
    s->n_clients++;
    uint64_t now;
    int r = sd_event_now(s->event, CLOCK_MONOTONIC, &now);
    if (r >= 0)
        r = sd_event_add_io(s->event, &c->io, fd, EPOLLIN, on_client_io, c);
    if (r >= 0)
        r = sd_event_add_time(s->event, &c->timer, CLOCK_MONOTONIC, now + (uint64_t)s->idle_timeout_ms * 1000u,
                              10 * 1000u, on_client_timeout, c);
    if (r >= 0)
        c->last_active_usec = now;
    if (r < 0) {
        control_client_free(c);
        return log_error_errno(r, "control: adding a client to the event loop: %m, closing it");
    }
    log_debug("control: client pid %d uid %u connected (%u clients)", (int)c->peer.pid, (unsigned)c->peer.uid,
              s->n_clients);
    return 0;
}

static int on_retry_accept(sd_event_source *src, uint64_t usec, void *userdata)
{
    struct control_server *s = userdata;
    int r = sd_event_source_set_enabled(s->listen_source, SD_EVENT_ON);
    if (r < 0)
        log_error_errno(r, "control: listening again: %m; no new connection is taken");
    return 0;
}

/* Leave the listener off for ACCEPT_RETRY_MS. On a failure it stays on. */
static int pause_accept(struct control_server *s)
{
    uint64_t now;
    int r = sd_event_now(s->event, CLOCK_MONOTONIC, &now);
    uint64_t when = now + ACCEPT_RETRY_MS * 1000u;
    if (r >= 0 && s->retry_timer)
        r = sd_event_source_set_time(s->retry_timer, when);
    else if (r >= 0)
        r = sd_event_add_time(s->event, &s->retry_timer, CLOCK_MONOTONIC, when, 0, on_retry_accept, s);
    if (r >= 0)
        r = sd_event_source_set_enabled(s->retry_timer, SD_EVENT_ONESHOT);
    if (r >= 0)
        r = sd_event_source_set_enabled(s->listen_source, SD_EVENT_OFF);
    return r;
}

static int on_accept(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
    struct control_server *s = userdata;
    for (;;) {
        int cfd = accept4(s->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EAGAIN)
                return 0;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                /* The listening socket stays readable: pause it instead of
                 * spinning until descriptors are free again. */
                log_warning("control: accept: %m, pausing new connections for %d ms", ACCEPT_RETRY_MS);
                int r = pause_accept(s);
                if (r < 0)
                    log_warning_errno(r, "control: pausing the listener: %m; it stays on");
                return 0;
            }
            log_warning("control: accept: %m");
            return 0;
        }
        client_new(s, cfd);
    }
}

/* The server's two event sources: the backlog's defer source, off until a
 * client has frames left over, and the listening socket. */
static int server_add_sources(struct control_server *s)
{
    int r = sd_event_add_defer(s->event, &s->more, on_backlog, s);
    if (r >= 0)
        r = sd_event_source_set_enabled(s->more, SD_EVENT_OFF);
    if (r >= 0)
        r = sd_event_source_set_priority(s->more, SD_EVENT_PRIORITY_NORMAL + 1);
    if (r < 0)
        return log_error_errno(r, "control: adding the backlog to the event loop: %m");
    r = sd_event_add_io(s->event, &s->listen_source, s->fd, EPOLLIN, on_accept, s);
    if (r < 0)
        return log_error_errno(r, "control: adding %s to the event loop: %m", s->path);
    return 0;
}

int control_server_new(sd_event *e, const char *path, const char *ro_group, unsigned max_clients, control_handler_fn fn,
                       void *userdata, struct control_server **ret)
{
    if (!e || !fn || !ret)
        return -EINVAL;
    if (!path)
        path = CONTROL_SOCKET_PATH_DEFAULT;
    struct control_server *s = calloc(1, sizeof *s);
    if (!s)
        return -ENOMEM;
    s->fd = -1;
    s->fn = fn;
    s->userdata = userdata;
    s->max_clients = max_clients ? max_clients : CONTROL_MAX_CLIENTS_DEFAULT;
    s->client_logs = (struct log_ratelimit){.what = "control: messages about clients"};
    s->dumps = (struct control_bucket){.burst = UNPRIV_DUMP_BURST, .per_s = UNPRIV_DUMP_PER_S};
    s->statuses = (struct control_bucket){.burst = UNPRIV_STATUS_BURST, .per_s = UNPRIV_STATUS_PER_S};
    s->max_request = CONTROL_MAX_REQUEST_DEFAULT;
    s->max_output = CONTROL_MAX_OUTPUT_DEFAULT;
    s->max_output_total = CONTROL_MAX_OUTPUT_TOTAL;
    s->idle_timeout_ms = CONTROL_IDLE_TIMEOUT_MS_DEFAULT;
    s->event = sd_event_ref(e);
    s->path = strdup(path);
    int r = s->path ? 0 : -ENOMEM;
    mode_t mode = 0;
    if (r >= 0)
        r = control_socket_listen(path, ro_group, &s->fd, &mode);
    if (r >= 0) {
        r = server_add_sources(s);
        if (r < 0)
            unlink(path);
    }
    if (r < 0) {
        sd_event_source_disable_unref(s->more);
        sd_event_source_disable_unref(s->listen_source);
        if (s->fd >= 0)
            close(s->fd);
        sd_event_unref(s->event);
        free(s->path);
        free(s);
        return r;
    }
    log_debug("control: listening on %s (mode %04o%s%s)", path, mode, ro_group ? ", group " : "",
              ro_group ? ro_group : "");
    *ret = s;
    return 0;
}

void control_server_free(struct control_server *s)
{
    if (!s)
        return;
    s->on_close = NULL; /* shutting down: nothing is resumed on the way out */
    while (s->clients)
        control_client_free(s->clients);
    sd_event_source_disable_unref(s->listen_source);
    sd_event_source_disable_unref(s->retry_timer);
    sd_event_source_disable_unref(s->more);
    if (s->fd >= 0) {
        close(s->fd);
        if (unlink(s->path) < 0 && errno != ENOENT)
            log_warning("control: removing %s: %m", s->path);
    }
    sd_event_unref(s->event);
    free(s->path);
    free(s);
}

void control_server_set_limits(struct control_server *s, size_t max_request, size_t max_output,
                               unsigned idle_timeout_ms)
{
    if (max_request)
        s->max_request = max_request;
    if (max_output) {
        s->max_output = max_output;
        s->max_output_total = 4 * max_output;
    }
    if (idle_timeout_ms)
        s->idle_timeout_ms = idle_timeout_ms;
    for (struct control_client *c = s->clients; c; c = c->next)
        c->in.max_message = s->max_request;
}

void control_server_set_close_hook(struct control_server *s, control_close_fn fn) { s->on_close = fn; }

unsigned control_server_n_clients(const struct control_server *s) { return s->n_clients; }

size_t control_server_unsent(const struct control_server *s) { return server_unsent(s); }

unsigned long control_server_n_refused(const struct control_server *s) { return s->n_refused; }
