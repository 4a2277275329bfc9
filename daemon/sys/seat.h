/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Where the daemon itself runs under an exec storm. */
#pragma once
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

/* Fewer execs a second than this since the last tick and the daemon stays
 * where it is. */
#define SEAT_MIN_EXECS_PER_S 200

struct seat {
    uint32_t execs[CPU_SETSIZE]; /* this tick's execs, by the CPU each happened on */
    uint32_t total;
    uint64_t since_ms; /* counting since (the last tick) */
    uint64_t moves;
};

/* Start counting. */
void seat_init(struct seat *s);
static inline void seat_note_exec(struct seat *s, uint32_t cpu)
{
    if (cpu < CPU_SETSIZE) {
        s->execs[cpu]++;
        s->total++;
    }
}
/* The CPU to move to: at least SEAT_MIN_EXECS_PER_S execs a second over
 * the elapsed_ms counted, more than half of them on one CPU in own (the
 * daemon's mask; NULL: not known, stay) that is not current_cpu; else -1.
 * Pure. */
int seat_choose(const struct seat *s, int current_cpu, uint64_t elapsed_ms, const cpu_set_t *own);
/* At each tick: move where seat_choose says, with the mask the daemon has
 * now put back right after, and start counting again. */
void seat_tick(struct seat *s);
