/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The exec doorbell (engine-doorbell.c). */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "procmon.h"

struct engine;
struct procmon;

/* The exec doorbell (engine-doorbell.c): a second proc connector socket
 * that the kernel filters to exec events (6.6+). Waking on it alone, the
 * daemon reads every other event in order from the main socket when the
 * next exec comes, not one wake-up each. */
#define DOORBELL_RUNG_MAX 32
#define DOORBELL_EARLY_MAX 64
struct engine_doorbell {
    struct procmon *procmon; /* NULL: none (older kernel, events_from_caller) */
    /* the execs of this ring, and whether the main socket had each */
    struct procmon_event rung[DOORBELL_RUNG_MAX];
    bool rung_seen[DOORBELL_RUNG_MAX];
    unsigned n_rung;
    /* execs handled from the doorbell ahead of the main socket: skipped
     * when the main socket brings them (a ring of the latest) */
    struct doorbell_key {
        pid_t tid;
        uint64_t timestamp_ns;
    } early[DOORBELL_EARLY_MAX];
    unsigned early_next;
    /* execs the main socket handled outside a ring (read before the
     * doorbell that rang for them): a ring that brings them later is done
     * already (a ring of the latest) */
    struct doorbell_key handled[DOORBELL_EARLY_MAX];
    unsigned handled_next;
    uint64_t rings, ahead, skipped, already;
};

/* After the main socket's dispatch: handle the rung execs it did not have,
 * and remember them. */
void engine_doorbell_settle(struct engine *e);
/* For the main socket's dispatch: true when ev is an exec the doorbell
 * handled already (skip it); notes the execs of the current ring, and the
 * ones handled outside a ring (for the ring that comes for them). */
bool engine_doorbell_filter(struct engine_doorbell *d, const struct procmon_event *ev);
/* Open the doorbell where the kernel filters events; its absence is not
 * an error. */
void engine_doorbell_open(struct engine *e);
