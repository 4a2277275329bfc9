/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Pause and resume: an administrator who suspects the daemon, or a
 * comparison of paused and packed blocks, gets every task's own mask and
 * CPU set back while tracking and classification go on. The engine
 * consults engine_paused() where it places tasks; this file only changes
 * who holds a pause and undoes or redoes the changes. */
#include "engine-pause.h"

#include "engine-internal.h"

#include <errno.h>
#include <string.h>

#include "apply.h"
#include "log.h"
#include "util.h"

bool engine_paused(const struct engine *e) { return e->pause.admin || e->pause.n_sessions > 0; }

static int find_session(const struct engine *e, uint64_t session)
{
    for (unsigned i = 0; i < e->pause.n_sessions; i++)
        if (e->pause.sessions[i] == session)
            return (int)i;
    return -1;
}

int engine_pause(struct engine *e, uint64_t session)
{
    bool was = engine_paused(e);
    if (session == 0)
        e->pause.admin = true;
    else if (find_session(e, session) < 0) {
        if (e->pause.n_sessions >= ENGINE_PAUSE_SESSIONS_MAX)
            return -EUSERS;
        e->pause.sessions[e->pause.n_sessions++] = session;
    }
    if (was)
        return 0;
    e->pause.since_ms = now_ms();
    e->pause.pauses++;
    int n = engine_undo_all(e);
    e->n_packed = 0;
    log_notice("paused%s: %d changes undone; tasks are still tracked and classified",
               session ? " for a comparison" : "", n);
    return n;
}

static void resume_now(struct engine *e)
{
    e->pause.paused_ms_total += now_ms() - e->pause.since_ms;
    e->pause.since_ms = 0;
    /* The plan went on while paused: every task is placed under it now,
     * and the next tick applies it as a first one (groups, the slice).
     * No tick here: a load sample a few ms after the last one is noise. */
    engine_place_all(e);
    e->n_packed = (unsigned)applier_count(e->applier);
    e->planned = false;
    log_notice("resumed: packing again (%u tasks packed)", e->n_packed);
}

int engine_resume(struct engine *e, uint64_t session)
{
    if (!engine_paused(e))
        return 0;
    if (session == 0)
        e->pause.admin = false;
    else {
        int i = find_session(e, session);
        if (i >= 0)
            e->pause.sessions[i] = e->pause.sessions[--e->pause.n_sessions];
    }
    if (engine_paused(e))
        return 0;
    resume_now(e);
    return 1;
}

void engine_session_closed(struct engine *e, uint64_t session)
{
    if (session == 0 || find_session(e, session) < 0)
        return;
    log_info("control connection %llu closed while holding a pause: releasing it", (unsigned long long)session);
    engine_resume(e, session);
}

uint64_t engine_paused_ms_total(const struct engine *e)
{
    uint64_t t = e->pause.paused_ms_total;
    if (engine_paused(e) && e->pause.since_ms)
        t += now_ms() - e->pause.since_ms;
    return t;
}

void engine_pause_snapshot(const struct engine *e, struct engine_pause_snapshot *out)
{
    *out = (struct engine_pause_snapshot){
        .paused = engine_paused(e),
        .admin = e->pause.admin,
        .n_sessions = e->pause.n_sessions,
        .since_ms = e->pause.since_ms,
        .pauses = e->pause.pauses,
        .paused_ms_total = engine_paused_ms_total(e),
    };
}
