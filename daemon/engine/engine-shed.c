/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Renames not heard during a flood of them (engine.h says why). */
#include <inttypes.h>

#include "engine-shed.h"

#include "engine-internal.h"
#include "log.h"
#include "procmon.h"
#include "util.h"

static void start_shed(struct comm_shed *s, uint64_t now_ms)
{
    s->period_ms = s->period_ms ? MIN(2 * s->period_ms, COMM_SHED_MAX_MS) : COMM_SHED_MIN_MS;
    s->until_ms = now_ms + s->period_ms;
    s->on = true;
    s->sheds++;
}

/* COMM_SHED_MAX_MS without a flood since the last shed ends the doubling. */
static void calmed(struct comm_shed *s, uint64_t now_ms)
{
    if (s->period_ms && now_ms - s->until_ms >= COMM_SHED_MAX_MS)
        s->period_ms = 0;
}

int comm_shed_step(struct comm_shed *s, uint64_t comm_total, uint64_t now_ms)
{
    if (s->on) {
        s->last_total = comm_total;
        s->last_ms = now_ms;
        if (now_ms < s->until_ms)
            return 0;
        s->on = false;
        return -1;
    }
    uint64_t n = comm_total - s->last_total, ms = now_ms - s->last_ms;
    if (s->last_ms && ms < COMM_FLOOD_WINDOW_MS)
        return 0; /* too short to tell (a reload's tick right after one): counted with the next */
    bool first = s->last_ms == 0;
    s->last_total = comm_total;
    s->last_ms = now_ms;
    if (first || s->unsupported)
        return 0;
    if (n * 1000 <= (uint64_t)COMM_FLOOD_PER_S * ms) {
        calmed(s, now_ms);
        return 0;
    }
    start_shed(s, now_ms);
    return 1;
}

bool comm_shed_event(struct comm_shed *s, uint64_t now_ns)
{
    if (s->on || s->unsupported)
        return false;
    uint64_t each = 1000000000ull / COMM_FLOOD_PER_S;
    s->due_ns = MAX(s->due_ns, now_ns) + each;
    if (s->due_ns - now_ns <= (uint64_t)COMM_FLOOD_BURST * each)
        return false;
    uint64_t now_ms = now_ns / 1000000;
    calmed(s, now_ms); /* as at a tick */
    s->due_ns = now_ns;
    start_shed(s, now_ms);
    return true;
}

/* Do a step of the shed on the main socket; n: the renames that made it
 * start. */
static void shed_apply(struct engine *e, int step, uint64_t n)
{
    struct comm_shed *s = &e->events.shed;
    int r = procmon_hear_comm(e->events.procmon, step < 0);
    if (r < 0 && step > 0) {
        s->on = false;
        s->sheds--;
        s->unsupported = r == -EOPNOTSUPP;
        if (s->unsupported)
            log_info("renames: over %u a second, but this kernel cannot leave them out (its event filter is 6.6+): "
                     "every one is read",
                     COMM_FLOOD_PER_S);
        else
            log_errno_full(log_ratelimit_level(&e->events.logs, LOG_WARNING), r,
                           "renames: over %u a second; leaving them out: %m; every one is read", COMM_FLOOD_PER_S);
        return;
    }
    if (r < 0) {
        /* not heard again: the next tick tries */
        s->on = true;
        log_errno_full(log_ratelimit_level(&e->events.logs, LOG_WARNING), r,
                       "renames: hearing them again: %m; tried again at the next tick");
        return;
    }
    if (step > 0) {
        log_ratelimited(&e->events.logs, s->period_ms == COMM_SHED_MIN_MS ? LOG_NOTICE : LOG_DEBUG,
                        "renames: %" PRIu64 " since the last tick, over %u a second (a thread renaming itself in a "
                        "loop?): not heard for %u ms, then a rescan finds what was renamed",
                        n, COMM_FLOOD_PER_S, s->period_ms);
        return;
    }
    /* Heard again: whatever was renamed meanwhile is found by a rescan. */
    e->events.rescan_pending = true;
    log_debug("renames: heard again; rescanning for what was renamed meanwhile");
}

void engine_shed_renames(struct engine *e, uint64_t now_ms)
{
    struct comm_shed *s = &e->events.shed;
    if (!e->events.procmon)
        return;
    uint64_t before = s->last_total;
    int step = comm_shed_step(s, procmon_counters(e->events.procmon)->comm, now_ms);
    if (step)
        shed_apply(e, step, s->last_total - before);
}

bool engine_shed_rename(struct engine *e, uint64_t now_ns)
{
    struct comm_shed *s = &e->events.shed;
    if (!e->events.procmon)
        return false;
    if (s->on) {
        s->skipped++;
        return true;
    }
    if (comm_shed_event(s, now_ns))
        shed_apply(e, 1, procmon_counters(e->events.procmon)->comm - s->last_total);
    return false;
}
