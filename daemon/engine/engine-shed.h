/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Renames left unheard through a flood (engine-shed.c). */
#pragma once
#include <stdbool.h>
#include <stdint.h>

struct engine;

/* Renames are the one event any local user sends at will and at almost no
 * cost: a thread calling prctl(PR_SET_NAME) in a loop sends hundreds of
 * thousands a second, and receiving them took the daemon half a CPU. Above
 * COMM_FLOOD_PER_S over a tick (at least COMM_FLOOD_WINDOW_MS), the main
 * socket stops hearing them (the kernel's event filter, 6.6+) for
 * COMM_SHED_MIN_MS, twice as long each time a flood comes again, up to
 * COMM_SHED_MAX_MS; then a rescan finds what was renamed meanwhile (within
 * each user's rename budget). Only COMM_SHED_MAX_MS without a flood ends
 * the doubling: a flood of a tick at a time gets the longest shed too. */
#define COMM_FLOOD_PER_S 5000u
#define COMM_FLOOD_WINDOW_MS 100u
#define COMM_SHED_MIN_MS 1000u
#define COMM_SHED_MAX_MS 16000u
/* A flood is also told as it comes, not at the next tick: renames over
 * COMM_FLOOD_PER_S beyond a burst of COMM_FLOOD_BURST (a bucket that
 * fills at that rate) start the shed at once. Judged at the tick alone, a
 * flood of 1.5 million renames a second was read at realtime priority
 * for a whole tick each time it was heard again: a slice of 5 ms after
 * another on the CPU of another user's task, whose 1 ms timer then woke
 * 5 ms late at the 99th percentile. The renames read while the shed is
 * on (those the socket held already) are left to the rescan that ends
 * it. */
#define COMM_FLOOD_BURST 500u
struct comm_shed {
    uint64_t last_total, last_ms; /* comm events counted at the last step */
    uint64_t until_ms;            /* while on: when they are heard again */
    unsigned period_ms;           /* of the last shed; 0: no flood going on */
    bool on;                      /* comm events not heard now */
    bool unsupported;             /* the kernel cannot filter: never tried again */
    uint64_t sheds;
    uint64_t due_ns;  /* the bucket: when the renames heard so far are paid for at COMM_FLOOD_PER_S */
    uint64_t skipped; /* renames read while the shed was on: left to the rescan */
};
/* Pure: one tick's step, from the socket's comm events so far: +1 stop
 * hearing them, -1 hear them again, 0 nothing to do. */
int comm_shed_step(struct comm_shed *s, uint64_t comm_total, uint64_t now_ms);
/* Pure: one rename heard at now_ns (the monotonic clock): true when it
 * starts a shed (+1 of comm_shed_step). */
bool comm_shed_event(struct comm_shed *s, uint64_t now_ns);
/* comm_shed_step, done on the main socket (each tick). */
void engine_shed_renames(struct engine *e, uint64_t now_ms);
/* For each rename event, before it is handled: comm_shed_event, done on
 * the main socket. True when the event is to be skipped: renames are not
 * heard now, and the rescan that ends the shed finds this one. */
bool engine_shed_rename(struct engine *e, uint64_t now_ns);
