/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The deep idle measurement (engine-idle.c). */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "engine-snapshot.h"
#include "idle-meter.h"
#include "packer.h"

struct engine;

/* Idle cores kept out of the deep idle states by unconfined jitter
 * (engine-idle.c), where cpuidle has a deep state. */
struct engine_idle {
    struct idle_meter meter;
    bool on;         /* a deep state to measure */
    bool said;       /* "not measured" logged */
    bool unconfined; /* the jitter was unconfined after the last plan */
    bool isolated;   /* ... or isolated on idle cores, chosen under planned_sig */
    uint64_t planned_sig;
    struct idle_measurement last; /* this tick's, whatever the plan */
    struct packer_idle fig;       /* the model's: kept from ticks unconfined and isolated; the trial */
    bool tried;                   /* a trial of isolation started, at trial_at_ms */
    uint64_t trial_at_ms;
    unsigned trials; /* trials started, for the metrics */
};

/* Find the deep idle states (at start, at each reload, and after a
 * topology change, which drops the kept measurement: keep false). */
void engine_idle_setup(struct engine *e, bool keep);
/* Before the plan: this tick's measurement, and the kept ones for the
 * packer (NULL when nothing can be measured). */
const struct packer_idle *engine_idle_measure(struct engine *e, uint64_t now);
/* After the plan: whether the jitter runs unconfined, or isolated, until
 * the next tick, and the trial of isolation it starts or ends. */
void engine_idle_planned(struct engine *e, uint64_t now);
/* For status and metrics (engine-snapshot.h). */
void engine_idle_snapshot(const struct engine *e, struct engine_idle_snapshot *out);
