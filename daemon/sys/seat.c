/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Where the daemon itself runs. Placing a task that is running on another
 * CPU costs the daemon a sleep: sched_setaffinity wakes that CPU's
 * migration thread and waits until it has moved the task. On the CPU where
 * a task execs, the exec's event wakes the daemon there, preempting the
 * task, which then moves off a run queue at once. Under an unpaced storm
 * the daemon spent 84-94 ms of CPU per 1,000 tasks when it sat on another
 * CPU than the storm's execs, 45-65 ms on theirs (docs/hacking.md); which
 * one it sat on was luck, since a realtime task wakes where it last ran.
 * So when one CPU has most of a tick's execs, the daemon moves there once:
 * its mask set to that CPU and straight back to its own, which leaves it
 * where it now is. A CPU with a storm of execs is busy already: the
 * daemon wakes no idle one by going there. */
#include <errno.h>
#include <string.h>

#include "log.h"
#include "seat.h"
#include "util.h"

void seat_init(struct seat *s)
{
    memset(s, 0, sizeof *s);
    s->since_ms = now_ms();
}

/* At least SEAT_MIN_EXECS_PER_S execs a second over elapsed_ms. */
static bool storm(const struct seat *s, uint64_t elapsed_ms)
{
    return elapsed_ms && (uint64_t)s->total * 1000 >= (uint64_t)SEAT_MIN_EXECS_PER_S * elapsed_ms;
}

int seat_choose(const struct seat *s, int current_cpu, uint64_t elapsed_ms, const cpu_set_t *own)
{
    if (!own || !storm(s, elapsed_ms))
        return -1;
    int best = -1;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (s->execs[cpu] && (best < 0 || s->execs[cpu] > s->execs[best]))
            best = cpu;
    if (best < 0 || (uint64_t)s->execs[best] * 2 <= s->total || best == current_cpu || !CPU_ISSET(best, own))
        return -1;
    return best;
}

void seat_tick(struct seat *s)
{
    uint64_t now = now_ms();
    /* its mask as it is now (whoever set it), not as it was at start; read
     * only under a storm */
    cpu_set_t own;
    bool known = storm(s, now - s->since_ms) && sched_getaffinity(0, sizeof own, &own) == 0;
    int to = seat_choose(s, sched_getcpu(), now - s->since_ms, known ? &own : NULL);
    memset(s->execs, 0, sizeof s->execs);
    s->total = 0;
    s->since_ms = now;
    if (to < 0)
        return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(to, &one);
    if (sched_setaffinity(0, sizeof one, &one) < 0) {
        log_debug_errno(errno, "moving to CPU %d, where the execs are: %m", to);
        return;
    }
    if (sched_setaffinity(0, sizeof own, &own) < 0) {
        /* Stuck on one CPU would be worse than where it was: say so. */
        log_warning_errno(errno, "putting back the daemon's own CPU mask after moving to CPU %d: %m", to);
        return;
    }
    s->moves++;
}
