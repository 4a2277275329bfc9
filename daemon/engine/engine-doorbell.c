/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The exec doorbell. Handling process events at a realtime priority, the
 * daemon woke for every event of a fork storm: fork, exec and exit of each
 * task, about one wake-up each at a cost (the switch, the loop's own calls)
 * well above the 1 µs a fork or exit takes to handle. Only an exec needs
 * handling at once: it is where a task gets its class and its CPUs. So a
 * second socket asks the kernel (6.6+, the proc connector's per-socket
 * filter) for exec events alone, and the loop sleeps on it at realtime
 * priority; the main socket, which carries every event in order, is read
 * whenever the doorbell rings (main.c also reads it on its own, at most
 * every few ms).
 *
 * Order: the main socket is read first, so an exec is handled after the
 * fork that created its task, as it was before. The kernel hands an event
 * to every listener in one loop, and the main socket, subscribed last,
 * comes first in it; should the main socket still lack a rung exec (not
 * there yet, or lost in an overflow), it is handled from the doorbell and
 * skipped when the main socket brings it later. An exec the main socket
 * brought before its ring was read (the main socket woke the loop first)
 * is not handled again when the ring comes. */
#include <errno.h>

#include "engine-doorbell.h"

#include "engine-internal.h"
#include "log.h"

void engine_doorbell_open(struct engine *e)
{
    struct engine_doorbell *d = &e->events.doorbell;
    if (e->params.events_from_caller || d->procmon)
        return;
    int r = procmon_open_exec(e->cfg->rcvbuf_bytes, &d->procmon);
    if (r < 0)
        log_debug_errno(r, "proc connector: no exec-only socket (%m): waking for every event");
}

int engine_doorbell_fd(const struct engine *e)
{
    const struct engine_doorbell *d = &e->events.doorbell;
    return d->procmon ? procmon_fd(d->procmon) : -EBADF;
}

static bool same_exec(const struct procmon_event *a, pid_t tid, uint64_t timestamp_ns)
{
    return a->tid == tid && a->timestamp_ns == timestamp_ns;
}

/* Take ev's key out of keys (a ring of DOORBELL_EARLY_MAX); whether it was there. */
static bool take_key(struct doorbell_key *keys, const struct procmon_event *ev)
{
    for (unsigned i = 0; i < DOORBELL_EARLY_MAX; i++)
        if (keys[i].tid && keys[i].tid == ev->tid && keys[i].timestamp_ns == ev->timestamp_ns) {
            keys[i] = (struct doorbell_key){0};
            return true;
        }
    return false;
}

static void put_key(struct doorbell_key *keys, unsigned *next, const struct procmon_event *ev)
{
    keys[*next] = (struct doorbell_key){ev->tid, ev->timestamp_ns};
    *next = (*next + 1) % DOORBELL_EARLY_MAX;
}

bool engine_doorbell_filter(struct engine_doorbell *d, const struct procmon_event *ev)
{
    if (ev->kind != PROCMON_EXEC)
        return false;
    for (unsigned i = 0; i < d->n_rung; i++)
        if (!d->rung_seen[i] && same_exec(&d->rung[i], ev->tid, ev->timestamp_ns)) {
            d->rung_seen[i] = true; /* handled now, in order */
            return false;
        }
    if (take_key(d->early, ev)) {
        d->skipped++;
        return true;
    }
    /* handled now, before the doorbell that rang for it is read */
    put_key(d->handled, &d->handled_next, ev);
    return false;
}

static int on_ring(const struct procmon_event *ev, void *userdata)
{
    struct engine_doorbell *d = userdata;
    /* more execs than that in one ring: the main socket has the rest */
    if (ev->kind == PROCMON_EXEC && d->n_rung < DOORBELL_RUNG_MAX) {
        d->rung_seen[d->n_rung] = false;
        d->rung[d->n_rung++] = *ev;
    }
    return 0;
}

int engine_on_doorbell(struct engine *e)
{
    struct engine_doorbell *d = &e->events.doorbell;
    if (!d->procmon)
        return 0;
    d->n_rung = 0;
    int r = procmon_dispatch(d->procmon, on_ring, d);
    if (r < 0 && r != -ENOBUFS && r != -EAGAIN && r != -EINTR)
        log_warning_errno(r, "reading the proc connector's exec socket: %m");
    /* an overflow here loses nothing: the main socket has every event */
    d->rings++;
    r = engine_on_events(e);
    engine_doorbell_settle(e);
    return r;
}

void engine_doorbell_settle(struct engine *e)
{
    struct engine_doorbell *d = &e->events.doorbell;
    for (unsigned i = 0; i < d->n_rung; i++) {
        if (d->rung_seen[i])
            continue;
        if (take_key(d->handled, &d->rung[i])) {
            d->already++; /* the main socket had it before this ring */
            continue;
        }
        engine_on_event(e, &d->rung[i]);
        put_key(d->early, &d->early_next, &d->rung[i]);
        d->ahead++;
    }
    d->n_rung = 0;
}
