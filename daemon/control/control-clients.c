/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Admission of control clients: slots kept for root, a bound per user, and
 * eviction of the unprivileged client idle longest when that is fair. */
#include <json-c/json.h>
#include <sys/socket.h>

#include "control-internal.h"
#include "log.h"
#include "util.h"

/* Slots only root may take: however many connections other users hold,
 * root can still ask the daemon what it does (and reload it). */
static unsigned root_reserved(const struct control_server *s)
{
    return s->max_clients < 2 ? 0 : MAX(1u, s->max_clients / 16);
}

/* Slots one unprivileged uid may hold. */
static unsigned per_uid_max(const struct control_server *s) { return MAX(1u, (s->max_clients - root_reserved(s)) / 4); }

static unsigned count_uid(const struct control_server *s, uid_t uid)
{
    unsigned n = 0;
    for (const struct control_client *c = s->clients; c; c = c->next)
        n += c->peer.uid == uid;
    return n;
}

/* The unprivileged client idle longest, of uid (or of any non-root uid). */
static struct control_client *least_active(const struct control_server *s, const uid_t *uid)
{
    struct control_client *best = NULL;
    for (struct control_client *c = s->clients; c; c = c->next)
        if (c->peer.uid != 0 && (!uid || c->peer.uid == *uid) &&
            (!best || c->last_active_usec < best->last_active_usec))
            best = c;
    return best;
}

static void evict(struct control_server *s, struct control_client *victim, uid_t for_uid)
{
    log_ratelimited(&s->client_logs, LOG_NOTICE,
                    "control: client pid %d uid %u idle longest, closing it to make room for uid %u",
                    (int)victim->peer.pid, (unsigned)victim->peer.uid, (unsigned)for_uid);
    control_client_free(victim);
}

/* Whether a new client of uid gets a slot, evicting another if that is
 * fair: root takes a slot from the unprivileged client idle longest when
 * all are taken; an unprivileged uid under its own limit takes one from the
 * uid holding the most slots when that uid holds more than it would. */
bool control_admit(struct control_server *s, uid_t uid, const char **why)
{
    if (uid == 0) {
        if (s->n_clients < s->max_clients)
            return true;
        struct control_client *victim = least_active(s, NULL);
        if (!victim) {
            *why = "all slots are taken by root";
            return false;
        }
        evict(s, victim, uid);
        return true;
    }
    unsigned mine = count_uid(s, uid);
    if (mine >= per_uid_max(s)) {
        *why = "this user holds as many connections as one user may";
        return false;
    }
    unsigned unpriv = s->n_clients - count_uid(s, 0);
    if (unpriv < s->max_clients - root_reserved(s) && s->n_clients < s->max_clients)
        return true;
    uid_t top = 0;
    unsigned top_n = 0;
    for (const struct control_client *c = s->clients; c; c = c->next) {
        unsigned n;
        if (c->peer.uid != 0 && c->peer.uid != top && (n = count_uid(s, c->peer.uid)) > top_n) {
            top = c->peer.uid;
            top_n = n;
        }
    }
    if (top_n > mine + 1) {
        evict(s, least_active(s, &top), uid);
        return true;
    }
    *why = "all slots for unprivileged users are taken";
    return false;
}

void control_refuse(struct control_server *s, int fd, uid_t uid, const char *why)
{
    s->n_refused++;
    if (!s->limit_logged) {
        if (s->n_clients >= s->max_clients)
            log_warning("control: %u clients connected, the configured maximum; refusing new ones until some leave",
                        s->n_clients);
        else
            log_warning("control: %u clients connected (%u kept for root, %u per user); refusing uid %u: %s; "
                        "refusing new ones until some leave",
                        s->n_clients, root_reserved(s), per_uid_max(s), (unsigned)uid, why);
        s->limit_logged = true;
    }
    struct json_object *p = json_object_new_object();
    if (p)
        json_object_object_add(p, "max_clients", json_object_new_int64(s->max_clients));
    size_t len;
    _cleanup_free_ char *msg = varlink_reply_format(p, TS_ERROR_TOO_MANY_CLIENTS, &len);
    json_object_put(p);
    /* Best effort: a fresh socket has room for this one small message. */
    if (msg && send(fd, msg, len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
        log_debug("control: telling a refused client why: %m");
    close(fd);
}
