/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The packing policy: which cores are busy, how much spare capacity they have,
 * and the CPU mask that jitter tasks are confined to, with the reasons behind
 * it and the hysteresis that keeps the mask from flapping. Pure: plain structs
 * in, plain structs out, no I/O, no allocation.
 *
 * Policy (TurboSched's wake-up rule turned into a periodic plan):
 * - A core's utilisation is the sum over its online threads minus the share
 *   of jitter tasks (jitter must not make a core look busy, nor eat the room
 *   it is itself counted against): per CPU when the caller knows it, else the
 *   jitter load spread evenly over the cores of the plan in effect (that
 *   guess adds room but is not used for the busy test: it never turns a busy
 *   core idle). Its capacity comes from its online thread count.
 * - Busy: util >= busy_threshold x capacity. A core that was busy stays busy
 *   until util < busy_exit x capacity (default 80% of busy_threshold), so a
 *   core hovering at the threshold does not toggle.
 * - Machine nearly idle (total util < idle_machine x total capacity): no
 *   restriction, nothing to protect.
 * - Each domain (package, LLC or NUMA node) is planned on its own, since
 *   jitter is never pulled across domains:
 *     no busy core            -> domain unrestricted (all its online CPUs);
 *     every core busy         -> unrestricted: nothing idle to protect;
 *     busy cores' spare < jitter + headroom -> unrestricted: no room;
 *     otherwise the fewest busy cores whose spare covers jitter + headroom,
 *     most spare first (ties: lower core index); the cores already chosen are
 *     kept while they are still busy, still cover the need and are no more
 *     than that fewest count.
 *   The run-delay guard may add busy cores to a packing domain's choice
 *   (spill) or give the plan up for a while (packer_input).
 * - With the chip's frequency response ([capacity] active<N>), the plan is
 *   weighed by the benefit model: packing only when it is estimated to give
 *   the busy cores more throughput than no restriction, isolation on idle
 *   cores when that is estimated best (packer_weigh_benefit). Without it the
 *   rules above decide alone.
 *   Every packing domain must cover the whole jitter load: one affinity mask
 *   lets a jitter task run on any domain's chosen cores.
 * - The mask is the union over domains: chosen cores' online threads for
 *   domains that pack, all online CPUs for domains that fall back. When no
 *   domain packs there is no restriction; the overall fallback reason is that
 *   of the most loaded domain.
 * - Which domain: package (default) keeps every idle core of a chip idle, which
 *   is what the power budget cares about. llc/numa keep jitter near its cache
 *   or memory, at a price: an LLC or node without a busy core stays open to
 *   its own jitter, and with one core per LLC (POWER9 SMT8) nothing can pack.
 * - Hysteresis: a mask different from the applied one becomes a candidate;
 *   it is applied once it has been wanted on every call for hold_ms, and no
 *   sooner than min_change_ms after the previous change. Candidates are
 *   compared by mask, so switching between two fallback reasons (same "no
 *   restriction") does not restart the clock. If CPUs of the applied mask went
 *   offline, the new plan applies at once. The first plan waits too: the
 *   daemon starts unrestricted.
 *
 * struct packer_plan is ~43 KB (fixed arrays, no allocation): keep it on the
 * heap or static. Its restricted/mask/reason are the plan in effect; the
 * per-core and per-domain details and the summary describe this call's
 * wanted plan (the summary says "holding: ..." while it waits). After a
 * config reload, packer_state_init starts over from "no restriction".
 */
#pragma once
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#include "benefit.h"
#include "idle-kept.h"
#include "policy-params.h"
#include "power_capacity.h"
#include "topology-types.h"

/* cpu_set_t holds CPU_SETSIZE CPUs, so there are never more cores. */
#define PACKER_MAX_CORES CPU_SETSIZE
#define PACKER_MAX_DOMAINS 256
#define PACKER_SUMMARY_MAX 256
/* the benefit model's explanation: one per package where several are weighed */
#define PACKER_BENEFIT_EXPLAIN_MAX (2 * BENEFIT_EXPLAIN_MAX)
/* Default exit threshold for the busy state, as a share of busy_threshold. */
#define PACKER_BUSY_EXIT_PERMILLE 800

enum packer_reason {
    PACKER_REASON_NONE = 0,     /* nothing computed yet (initial state: no restriction) */
    PACKER_REASON_PACKED,       /* jitter confined to chosen busy cores */
    PACKER_REASON_IDLE_MACHINE, /* machine nearly idle: nothing to protect */
    PACKER_REASON_ALL_BUSY,     /* every core busy: nothing idle to protect */
    PACKER_REASON_NO_BUSY,      /* no core busy: nowhere to pack without waking one */
    PACKER_REASON_NO_ROOM,      /* busy cores' spare does not cover jitter + headroom */
    PACKER_REASON_NO_DATA,      /* no online core with a utilisation sample */
    PACKER_REASON_RUN_DELAY,    /* the run-delay guard gave packing up for now */
    PACKER_REASON_NO_BENEFIT,   /* the benefit model: packing would not pay */
    PACKER_REASON_ISOLATED,     /* the benefit model: jitter on the fewest idle cores */
    _PACKER_REASON_MAX,
};
/* "none", "packed", "idle-machine", "all-busy", "no-busy", "no-room", "no-data",
 * "run-delay", "no-benefit", "isolated". */
const char *packer_reason_to_string(enum packer_reason r);
/* One-line human text: "machine nearly idle", "every core busy", ...
 * (packer-describe.c, with the rest of the wording). */
const char *packer_reason_describe(enum packer_reason r);

/* Why the applied mask is not (yet) the wanted one. */
enum packer_wait {
    PACKER_WAIT_NONE = 0,   /* applied == wanted */
    PACKER_WAIT_HOLD,       /* wanted plan has not held for hold_ms yet */
    PACKER_WAIT_MIN_CHANGE, /* held, but the mask changed less than min_change_ms ago */
};
const char *packer_wait_to_string(enum packer_wait w);

struct packer_state {
    bool initialized;
    /* applied plan */
    bool restricted;
    cpu_set_t mask;
    enum packer_reason reason;
    bool ever_changed;
    uint64_t changed_ms; /* when the applied mask last changed */
    /* candidate (a wanted mask that differs from the applied one) */
    bool has_candidate;
    bool cand_restricted;
    cpu_set_t cand_mask;
    uint64_t cand_since_ms;
    /* memory for the busy-state hysteresis and core stickiness, by CPU number
     * so that it survives topology re-indexing */
    cpu_set_t busy_cpus;        /* online threads of cores busy on the last call */
    cpu_set_t chosen_cpus;      /* threads of the applied plan's chosen cores */
    cpu_set_t cand_chosen_cpus; /* threads of the candidate's chosen cores */
    uint64_t last_ms;
};

/* The probe loop learns from the busy cores' measured frequency which plan
 * pays (probe_step in benefit.h). The packer steps it once per call where
 * it weighs the plan, and applies the plan it returns through the same
 * path as the table's choice. */
struct packer_probe {
    struct probe_state *state; /* stepped by packer_plan */
    bool measurable;           /* false: no frequency could be read this time */
    double busy_mhz;           /* the busy cores' mean since the previous call */
};

struct packer_input {
    const struct topology *topo;
    const struct capacity_table *cap;
    const int *cpu_util_milli; /* per CPU, 0..1000; < 0 = no sample (offline, just onlined) */
    int n_cpu_util;            /* entries in cpu_util_milli; CPUs beyond are "no sample" */
    /* Share of each CPU's util that comes from jitter tasks. NULL: estimated
     * as jitter_load_milli spread evenly over the applied plan's chosen cores
     * (right when the jitter runs where it was put). Pass it when known. */
    const int *cpu_jitter_milli;
    unsigned jitter_load_milli;         /* total load of jitter tasks, milli of one CPU */
    const struct policy_params *params; /* busy_threshold, headroom, idle_machine, hold, min_change, domain,
                                         * freq_reeval (the configuration's, config.h) */
    unsigned busy_exit_milli;           /* leave busy below this share of capacity; 0 = 80% of busy_threshold */
    uint64_t now_ms;
    /* The run-delay guard's say (delay-guard.h, engine-delay.c): threads of
     * busy cores to choose besides those the spare asks for, in a domain
     * that packs (NULL: none; a core no longer busy is not chosen); give
     * packing up for now (reason run-delay); and why, appended to the
     * summary in parentheses (NULL or "": nothing). */
    const cpu_set_t *spill_cpus;
    bool delay_fallback;
    const char *delay_note;
    /* The chip's frequency by number of active cores ([capacity] active<N>;
     * NULL or n_cores 0: not known, the thresholds alone decide) and the
     * jitter threads there are: with it the wanted plan is weighed against
     * no restriction and isolation (packer-benefit.c). */
    const struct freq_response *freq;
    unsigned n_jitter_tasks;
    /* Without a frequency table: the probe loop (benefit.h) and this
     * call's measurement, or NULL (no probing: the thresholds decide). */
    const struct packer_probe *probe;
    /* Idle cores the jitter kept out of the deep idle states, and their
     * wake-ups, as measured (idle-meter.h), and the trial of isolation in
     * progress; NULL or not measured: the model counts one woken core per
     * jitter task, waking its core independently of the others. */
    const struct packer_idle *idle;
};

/* The benefit model's measured inputs about idle cores (engine-idle.c). */
struct packer_idle {
    struct idle_kept none; /* with the jitter unconfined */
    struct idle_kept iso;  /* with the jitter isolated, under the load iso_sig */
    uint64_t iso_sig;      /* the isolation estimate's load_sig when it was chosen */
    bool trial_ok;         /* no trial of isolation lately: one may start */
    bool in_trial;         /* the isolation applied is a trial, which displaced trial_from */
    enum benefit_plan trial_from;
};

struct packer_core_info {
    int core;   /* index into topology.cores */
    int domain; /* index into packer_plan.domains */
    unsigned n_online;
    unsigned capacity_milli;
    unsigned util_milli;   /* sum over online threads, jitter share removed */
    unsigned jitter_milli; /* the jitter share removed: measured, or estimated (see below) */
    unsigned spare_milli;
    bool known; /* at least one online thread had a sample */
    bool busy;
    bool chosen;  /* chosen by this call's plan (wanted) */
    bool applied; /* its online threads are in the applied restricted mask */
};

struct packer_domain_info {
    int id;      /* package / LLC / node number (-1 unknown) */
    int n_cores; /* cores with an online thread */
    int n_busy;
    int n_chosen;
    unsigned capacity_milli;
    unsigned util_milli;
    unsigned busy_spare_milli; /* spare of all busy cores */
    unsigned chosen_spare_milli;
    bool packed; /* false: the domain's online CPUs are all in the mask */
    enum packer_reason reason;
};

struct packer_plan {
    /* what to apply now (after hysteresis) */
    bool restricted;           /* false: leave jitter tasks unconfined */
    cpu_set_t mask;            /* when restricted: the jitter mask; else all online CPUs */
    enum packer_reason reason; /* why the applied mask is what it is */
    bool changed;              /* restricted/mask differ from the previous call's */
    /* what this call's input asks for */
    bool wanted_restricted;
    cpu_set_t wanted_mask;
    enum packer_reason wanted_reason;
    enum packer_wait wait;
    uint64_t wait_left_ms; /* until the wanted plan may apply, if nothing changes */
    /* machine totals */
    unsigned capacity_milli;
    unsigned util_milli;
    unsigned jitter_load_milli;
    unsigned need_milli; /* jitter + headroom each packing domain must cover */
    /* details for explain and dump */
    int n_cores;
    struct packer_core_info cores[PACKER_MAX_CORES];
    int n_domains;
    struct packer_domain_info domains[PACKER_MAX_DOMAINS];
    char summary[PACKER_SUMMARY_MAX];
    /* the benefit model's choice for this call's wanted plan and the
     * estimate behind it; BENEFIT_UNKNOWN and "" without a frequency response */
    enum benefit_plan benefit;
    char benefit_explain[PACKER_BENEFIT_EXPLAIN_MAX];
    /* this call stepped the probe loop (in->probe); its plan applies at
     * once, without the hysteresis, while it probes (benefit_now): each
     * probe's samples must be of the plan it names */
    bool benefit_probed;
    bool benefit_now;
    /* the table's choice is a trial of isolation, displacing
     * benefit_trial_from (benefit_choice.trial), and the load an
     * isolation chosen now is measured under (benefit_estimate.load_sig) */
    bool benefit_trial;
    enum benefit_plan benefit_trial_from;
    uint64_t benefit_iso_sig;
    /* several packages, each weighed on its own: benefit is the plan of
     * the one with the most busy cores, benefit_explain gives each */
    bool benefit_per_domain;
};

/* Zero-initialised state is valid too: no plan applied, no restriction. */
void packer_state_init(struct packer_state *s);

/* Compute the plan for this tick and advance the hysteresis in *st.
 * Returns 0, or -EINVAL on missing input, -E2BIG if the topology has more
 * domains than PACKER_MAX_DOMAINS; on error *out is "no restriction" with
 * reason NO_DATA and *st is left unchanged. */
int packer_plan(const struct packer_input *in, struct packer_state *st, struct packer_plan *out);

/* ---- Pack only when it pays (packer-benefit.c) ---- */

/* With a frequency response (in->freq), or else with the probe loop
 * (in->probe: its plan instead of the model's choice), weigh the wanted plan: a packed plan
 * becomes a fallback (reason no-benefit) when no restriction is estimated to
 * give the busy cores more throughput, and any plan becomes isolation
 * (reason isolated: the fewest idle cores that hold the jitter, those of the
 * applied isolation kept while they stay idle) when that is estimated best.
 * A plan other than the applied one must win by BENEFIT_MARGIN_BP_DEFAULT.
 * For a single domain, or each package on its own (domain = package);
 * fills out->benefit and out->benefit_explain.
 * packer_plan calls it. */
void packer_weigh_benefit(const struct packer_input *in, const struct packer_state *st, struct packer_plan *out);

/* The benefit model's snapshot of this call (cores[] has out->n_cores
 * entries, snap->cores points to it): the packer's cores, the jitter, and
 * the measured idle figures. packer_weigh_benefit weighs by it. */
void packer_benefit_snapshot(const struct packer_input *in, const struct packer_plan *out, struct benefit_core *cores,
                             struct benefit_snapshot *snap);

/* ---- The plan in words (packer-describe.c) ---- */

/* Fills out->summary from a computed plan: the wanted plan and why, prefixed
 * with "holding: ..." while it waits. packer_plan calls it. */
void packer_describe(const struct packer_input *in, struct packer_plan *out);
/* The summary of a plan that could not be computed (error as packer_plan
 * returned it); in may be NULL. */
void packer_describe_error(const struct packer_input *in, int error, struct packer_plan *out);
/* Which kind of packing a mask is, on this topology: "on idle SMT siblings
 * of 2 busy cores" (TurboSched's premise: the jitter runs beside the busy
 * thread, not in its place), "time-sharing 1 busy CPU without an SMT
 * sibling" (the jitter's run time is taken from the busy work), or both. */
const char *packer_packing_kind(const struct topology *topo, const cpu_set_t *mask, char *buf, size_t size);
