/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The daemon's state and what it does on each input: a proc connector event,
 * a tick, a reload, a stop. It orchestrates: procscan tracks tasks, the
 * classifier decides their class, the sampler measures load, the packer
 * plans, the applier changes affinity through the injected sysops. main.c
 * wires these to the sd-event loop; the control socket's replies are built
 * by report.c from the snapshots engine-snapshot.h fills. struct engine
 * itself is private to the engine (engine-internal.h). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct engine;
struct config;
struct classifier;
struct procmon_event;
struct seat;
struct sysops;

struct engine_params {
    const char *config_path; /* for reloads */
    const char *dropin_dir;  /* NULL: derived from config_path */
    const char *root;        /* "/" on a real system; /proc and /sys are read below it */
    bool dry_run;            /* --dry-run: overrides the config */
    int log_level;           /* --log-level, or -1: the config decides */
    /* Every system call that reads or changes a task's placement goes
     * through these; NULL: sysops_real. Tests pass a fake. */
    const struct sysops *sysops;
    /* No proc connector: the caller passes events in through
     * engine_on_event() and engine_events_lost() (tests, replays). */
    bool events_from_caller;
};

/* Takes ownership of cfg. Nothing on the system is touched yet. */
int engine_new(struct config *cfg, const struct engine_params *p, struct engine **ret);
/* Undo every change (restore_all, state file removed), release everything. */
void engine_free(struct engine *e);

/* Recover from a crashed predecessor, open the proc connector, scan every
 * existing thread through the same path as a new one, take the first load
 * sample. After this the daemon is ready. */
int engine_start(struct engine *e);
/* The proc connector's fd, -EBADF without one (params.events_from_caller). */
int engine_procmon_fd(const struct engine *e);
/* Drain the proc connector; rescans /proc after an overflow. Call
 * engine_state_due_ms() after it: changes it made go to the state file. */
int engine_on_events(struct engine *e);
/* One event, as engine_on_events hands each on (a failure is logged and
 * the event dropped: the next rescan corrects it). */
void engine_on_event(struct engine *e, const struct procmon_event *ev);
/* Events were lost: rescan /proc now, or at the next tick when one ran
 * within the last tick interval or when events are handled at a realtime
 * priority (a walk of /proc is the work of a tick at normal priority:
 * engine_set_tick_at_rt holds it back). */
int engine_events_lost(struct engine *e);
/* The exec doorbell's fd, -EBADF without one. */
int engine_doorbell_fd(const struct engine *e);
/* An exec rang: read the main socket (engine_on_events), then handle
 * whatever exec it did not have yet. */
int engine_on_doorbell(struct engine *e);
/* Write the state file if a change waits and may be written now; returns
 * -1 when nothing waits, else the ms after which to call again. */
int64_t engine_state_due_ms(struct engine *e);
/* Sample load, plan, apply; called every tick_interval. */
int engine_tick(struct engine *e);
/* Parse, validate, swap, reclassify. A bad config keeps the old one; the
 * reason goes to the log and into *msg. */
int engine_reload(struct engine *e, char *msg, size_t size);
/* Restore every change; the engine can be freed afterwards. */
void engine_stop(struct engine *e);
/* "412 tasks, 23 jitter packed on CPUs 0-3; uclamp unsupported" */
void engine_status_line(const struct engine *e, char *buf, size_t size);

/* What main.c wires: the configuration in force (replaced by a reload),
 * the classifier (its D-Bus watch), where the daemon itself runs (moved at
 * each tick), whether cgroup mode kept its privilege, and the flag the
 * loop follows while a rescan waits. */
const struct config *engine_config(const struct engine *e);
struct classifier *engine_classifier(struct engine *e);
struct seat *engine_seat(struct engine *e);
bool engine_cgroup_privileged(const struct engine *e);
const bool *engine_rescan_pending(const struct engine *e);
/* Whether the coming tick runs at a realtime priority: a rescan waits for
 * one that does not. */
void engine_set_tick_at_rt(struct engine *e, bool at_rt);

/* engine-pause.c. Paused: every change undone, nothing packed, tasks still
 * tracked and classified. */
bool engine_paused(const struct engine *e);
/* Pause for the administrator (session 0) or while control connection
 * `session` lives. Returns the changes undone (0 when it was already
 * paused), -EUSERS when too many connections hold a pause. */
int engine_pause(struct engine *e, uint64_t session);
/* Release the administrator's pause (session 0) or that connection's;
 * packs again once nothing holds a pause. Returns 1 when packing resumed,
 * 0 when it was not paused or something still holds a pause. */
int engine_resume(struct engine *e, uint64_t session);
/* A control connection closed: its pause, if any, ends with it. */
void engine_session_closed(struct engine *e, uint64_t session);
/* Milliseconds paused since start, the current pause included. */
uint64_t engine_paused_ms_total(const struct engine *e);
