/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The probe loop (engine-probe.c). */
#pragma once
#include <stdbool.h>

#include "benefit.h"
#include "engine-snapshot.h"
#include "freq-meter.h"
#include "packer.h"

struct engine;

/* Without a table: the probe loop that learns which plan pays from the
 * busy cores' measured frequency (engine-probe.c). */
struct engine_probe {
    struct freq_meter meter; /* looked for once probe = yes (at start: see freq-meter.h) */
    bool on;                 /* no table, probe = yes, and a source */
    char off_why[448];       /* when not on: why, for status */
    struct probe_state state;
    struct packer_probe input;                  /* this tick's measurement, for the packer */
    bool read_failed;                           /* said once per episode */
    enum benefit_plan learned;                  /* the learned plan last logged */
    unsigned learned_round;                     /* ... and its round */
    char last_change[BENEFIT_EXPLAIN_MAX + 64]; /* why it last changed, "" none yet */
};

/* Without a table and with probe = yes: find the busy cores' frequency
 * source (once: opening the msr files needs a capability
 * the daemon gives up after start) and start the probe loop; false when
 * there is no source (e->probe.meter.what says what was looked for). */
bool engine_probe_setup(struct engine *e, bool have_table);
/* Before the plan: the busy cores' mean frequency since the previous tick,
 * for the packer; NULL when not probing. */
const struct packer_probe *engine_probe_measure(struct engine *e);
/* After the plan: start readings of cores that turned busy, and log the
 * learned plan when it changed, with why. */
void engine_probe_planned(struct engine *e);
/* The probe phase in one word: "off", "idle", "running", "learned",
 * "unmeasurable". */
const char *engine_probe_phase(const struct engine *e);
/* For status and metrics (engine-snapshot.h). */
void engine_probe_snapshot(const struct engine *e, struct engine_probe_snapshot *out);
