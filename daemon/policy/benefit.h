/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The benefit model: which placement of jitter pays, estimated from the
 * chip's frequency response (frequency by number of active cores) and from
 * the cycles jitter takes from the cores it shares.
 *
 * Candidate plans: no restriction; pack jitter onto busy cores with room;
 * isolate jitter on the fewest idle cores that hold it. For each, the model
 * estimates the frequency the busy cores get from the number of cores that
 * stay active, and the share of the busy cores' throughput that jitter takes,
 * and chooses the highest estimated throughput of the intensive tasks, with a
 * margin so that the choice does not flap.
 *
 * Where the frequency response is not known, the probe loop (below) learns
 * from measured busy-core frequency which plan pays. Pure: no I/O, no
 * syscalls; the caller measures and applies. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "power_capacity.h"

#define BENEFIT_MAX_CORES 256
#define BENEFIT_EXPLAIN_MAX 192
/* the margin a plan must beat the applied one by (basis points: 30 = 0.3%) */
#define BENEFIT_MARGIN_BP_DEFAULT 30
/* A trial of isolation (benefit_choice.trial) is not started again sooner
 * than this after the last one started, whatever the load: each may cost
 * up to the margin for as long as the caller holds a plan. */
#define BENEFIT_TRIAL_AGAIN_MS 60000

/* ---- frequency response ---- */

/* mhz[a] = the highest frequency sustainable with a active cores, a = 1..n.
 * Vendors publish it per active-core count (x86 turbo ratio limits, POWER's
 * ibm,pstate-core-max); 0 = entry not given. */
struct freq_response {
    unsigned n_cores;
    unsigned mhz[BENEFIT_MAX_CORES + 1];
};

void freq_response_init(struct freq_response *fr, unsigned n_cores);
/* One [capacity]-style entry: key "active<A>" or "active<A>-<B>" (active-core
 * counts, 1-based), value "<MHz>", "<N>MHz" or "<X.Y>GHz". Returns 0, or
 * -EINVAL with a reason in err. */
int freq_response_set(struct freq_response *fr, const char *key, const char *value, char *err, size_t err_len);
/* Every count 1..n_cores given, none zero, never rising as more cores are
 * active (a chip does not speed up by waking cores). 0 or -EINVAL + reason. */
int freq_response_validate(const struct freq_response *fr, char *err, size_t err_len);
/* Frequency with a active cores (clamped to 1..n_cores); 0 if unknown. */
unsigned freq_response_mhz(const struct freq_response *fr, unsigned active);

/* ---- the model ---- */

enum benefit_plan {
    BENEFIT_NONE,    /* no restriction: jitter wakes idle cores */
    BENEFIT_PACK,    /* jitter on busy cores with room */
    BENEFIT_ISOLATE, /* jitter on the fewest idle cores that hold it */
    BENEFIT_N_PLANS,
    BENEFIT_UNKNOWN = BENEFIT_N_PLANS, /* no frequency response: keep today's policy */
};

const char *benefit_plan_name(enum benefit_plan p);

struct benefit_core {
    unsigned threads;         /* online SMT threads */
    unsigned intensive_milli; /* utilisation of non-jitter work, thread-milli */
    bool busy;
};

struct benefit_snapshot {
    unsigned n_cores;
    const struct benefit_core *cores;
    const struct capacity_table *cap; /* SMT throughput by running threads */
    /* Jitter CPU time, thread-milli, and how much of it ran on busy cores
     * (where a thread gets only its SMT share, so the same work takes longer). */
    unsigned jitter_milli;
    unsigned jitter_on_busy_milli;
    unsigned n_jitter_tasks;          /* each unconfined one keeps an idle core awake */
    unsigned headroom_milli;          /* spare kept beyond the jitter when it is confined */
    const struct freq_response *freq; /* NULL or invalid: unknown */
    /* Idle cores the unconfined jitter keeps out of the deep idle states
     * that leave the turbo count, as measured (thousandths of a core, over
     * a tick with jitter unconfined). Not measured: one per jitter task,
     * which holds where the idle governor cannot go deep between two
     * wake-ups (POWER9's stop4 wants 10 ms, the jitter sleeps 3) and fails
     * where it can (x86's C6 wants 0.2-0.3 ms). */
    bool none_woken_measured;
    unsigned none_woken_milli;
    /* Wake-ups per second of idle cores out of those deep states, with the
     * jitter unconfined, as measured (on a real machine: the idle cores'
     * entries into the deep states, cpuidle's stateN/usage), and how often
     * the chip re-evaluates its frequency limit (us). A wake-up lowers the
     * limit at once; it rises again only at the next re-evaluation, half an
     * interval on average after the core is back in a deep state: a loss
     * the time-averaged active count does not show. Either unknown (not
     * measured, or reeval_us 0): not counted. */
    bool none_wakes_measured;
    unsigned none_wakes_per_s;
    unsigned reeval_us;
    /* The same two figures measured while the jitter was isolated, under
     * the load the isolation estimate named (load_sig) when it was chosen.
     * Tasks that share a core need not wake it independently: a wake-up
     * that falls into another task's awake time costs nothing, and tasks
     * that sleep a period from their start drift into one another's awake
     * time and stay there. How much, only a measurement says. Used while
     * iso_sig is this snapshot's; otherwise the tasks are taken to wake
     * their core independently. */
    bool iso_measured;
    uint64_t iso_sig;
    unsigned iso_woken_milli;
    unsigned iso_wakes_per_s;
    /* The caller allows a trial of isolation (benefit_choice.trial) now:
     * it has not tried one lately. */
    bool iso_trial_ok;
    /* The isolation applied is a trial, which displaced trial_from: the
     * caller sets this from a choice with trial set until a choice without
     * it has been applied. */
    bool in_trial;
    enum benefit_plan trial_from;
};

struct benefit_estimate {
    bool candidate;          /* the plan is possible in this snapshot */
    unsigned active_cores;   /* active_mean rounded, for reports */
    double active_mean;      /* time-averaged active cores (fractional when measured) */
    double deep_wakes_per_s; /* wake-ups of idle cores out of the deep states (when measured) */
    double lag_share;        /* share of the time the limit lags one active core behind them */
    unsigned busy_mhz;       /* 0 when the frequency is unknown; the lag counted */
    unsigned n_isolate;      /* BENEFIT_ISOLATE: idle cores used */
    double jitter_cost;      /* share of the busy cores' throughput jitter takes, 0..1 */
    double throughput;       /* busy_mhz x capacity x (1 - cost); relative units */
    /* BENEFIT_ISOLATE: the load it is estimated for (the busy cores, the
     * jitter tasks counted by powers of two, the cores it uses), which a
     * measurement of it is kept under (benefit_snapshot.iso_sig); whether
     * the estimate is from such a measurement; and, where it is not and
     * idle cores' deep wake-ups are counted, the throughput if its tasks
     * woke their core together (0 otherwise), which a trial would find */
    uint64_t load_sig;
    bool measured;
    double together;
};

struct benefit_choice {
    enum benefit_plan plan; /* BENEFIT_UNKNOWN without a frequency response */
    /* plan is BENEFIT_ISOLATE to measure it: idle cores' deep wake-ups are
     * in play, isolation has not been measured under this load, and it
     * would pay if its tasks woke their core together; trial_from is the
     * plan it displaces (weighed against it, without the margin, once
     * measured) */
    bool trial;
    enum benefit_plan trial_from;
    double gain; /* chosen over no restriction, estimated (0.061 = +6.1%) */
    struct benefit_estimate est[BENEFIT_N_PLANS];
    char explain[BENEFIT_EXPLAIN_MAX];
};

/* Estimates for every plan, without frequencies when snap->freq is NULL
 * (busy_mhz 0, throughput from the cost alone, at 1 MHz): the probe loop uses
 * the costs. */
void benefit_estimate_all(const struct benefit_snapshot *snap, struct benefit_estimate est[BENEFIT_N_PLANS]);

/* BENEFIT_PACK's cores: busy, with a free thread, at the least intensive
 * load (where jitter costs least). A packer with its own choice of cores
 * (fewest that hold the jitter) may use a subset. */
bool benefit_pack_core(const struct benefit_snapshot *snap, unsigned core);

/* Choose. A plan other than `current` wins only if its estimate beats
 * current's by more than margin_bp (basis points, 100 = 1%); with current
 * BENEFIT_UNKNOWN, against no restriction. Where isolation would beat the
 * choice by the margin if its tasks woke their core together, but not if
 * they wake it independently, and snap->iso_trial_ok, isolation is chosen
 * as a trial (out->trial) so that the caller measures it: the next choice
 * weighs what was measured. Returns 0, -EINVAL on bad input. */
int benefit_choose(const struct benefit_snapshot *snap, enum benefit_plan current, unsigned margin_bp,
                   struct benefit_choice *out);

/* With isolation applied, after a choice (trial: a trial, chosen: its
 * plan): whether the trial in effect (in_trial) goes on. It ends once
 * isolation is chosen without a trial when the plan could change anyway
 * (may_change: the caller's hold after the trial began has passed), by
 * when the estimates have settled after the move; until then, and while a
 * choice to leave waits for the caller, it goes on. */
bool benefit_trial_goes_on(bool in_trial, bool trial, enum benefit_plan chosen, bool may_change);

/* ---- the probe loop ---- */

/* Learns which plan pays from measured busy-core frequency. The caller, every
 * tick: applies the plan probe_step() returns and, at the next tick, feeds
 * the mean frequency its busy cores ran at since (APERF/MPERF or cpufreq),
 * the model's jitter cost per plan (benefit_estimate_all without a
 * frequency), and a signature of the load (busy cores, jitter tasks...).
 *
 * Each plan is probed for settle + samples ticks, the first `settle`
 * discarded while the chip follows. A plan beats no restriction only by more
 * than margin + confidence_se standard errors of the difference, the
 * standard error from the spread of the round's samples around each plan's
 * mean (pooled over the plans). Where the comparison that decides is within
 * that band (a plan's gain over none near the margin, or two restricting
 * plans as good as each other), the two plans are probed again, `samples`
 * ticks at a time, until the difference stands out or both have
 * max_samples; then the estimates decide (the higher one; against none,
 * with the margin but no noise band). A load change during a
 * probe discards the round; a load change after learning starts a new
 * round. The model's jitter costs enter each estimate; after learning, the
 * choice is made again at each call from the same frequencies with that
 * call's costs (the caller's smoothed jitter load may still be settling),
 * and another plan taken if it beats the learned one by more than half the
 * margin at two calls in a row. The band widens as Student's t does for few samples. A signature
 * change in the tick right after a switch (a settle tick, or the first
 * tick of a newly learned plan) counts only if it is still there at the
 * next call, and the first tick's costs after a learned switch are not
 * weighed: the caller's view of the load follows the jitter's move. */
struct probe_config {
    unsigned settle_samples; /* ticks discarded after each switch (1) */
    unsigned samples;        /* ticks measured per plan and per extra probe (2) */
    unsigned margin_bp;      /* required gain beyond the noise (30 = 0.3%) */
    uint64_t reprobe_ms;     /* re-probe this long after learning; 0 = only on load change */
    unsigned max_samples;    /* cap per plan when two plans are within the noise (6) */
    double confidence_se;    /* standard errors a difference must clear, many samples (2) */
};

enum probe_phase { PROBE_IDLE, PROBE_RUNNING, PROBE_LEARNED, PROBE_UNMEASURABLE };

struct probe_plan_stats {
    unsigned n;
    double sum_mhz, min_mhz, max_mhz;
    double sumsq_mhz; /* for the standard error */
};

struct probe_state {
    struct probe_config cfg;
    enum probe_phase phase;
    enum benefit_plan probing; /* the plan under probe in PROBE_RUNNING */
    unsigned tick_in_probe;
    uint64_t load_sig;
    bool have_sig;
    bool candidate[BENEFIT_N_PLANS];
    struct probe_plan_stats st[BENEFIT_N_PLANS];
    /* the model's jitter cost per plan, taken while no restriction is
     * probed: the jitter then runs where it settled unconfined, so the load
     * the caller smooths is not still catching up with a probe's switch */
    double cost[BENEFIT_N_PLANS];
    enum benefit_plan learned;
    double learned_gain;
    uint64_t learned_at_ms;
    unsigned rounds, discarded; /* for status: rounds completed, probes thrown away */
    char explain[BENEFIT_EXPLAIN_MAX];
    unsigned block_end;    /* the probed plan's sample count at which its probe ends */
    bool extending;        /* probing two close plans again, past the first pass */
    unsigned extra_probes; /* for status: probes added to rounds that were within the noise */
    bool sig_grace;        /* the applied plan changed at the previous call (learned phase) */
    bool recheck_seen;     /* learned phase: recheck_want beat the learned plan at the previous call */
    enum benefit_plan recheck_want;
};

struct probe_input {
    uint64_t now_ms;
    bool measurable; /* false: no frequency source (no cpufreq, no APERF) */
    double busy_mhz; /* mean since the previous call, under the plan applied then */
    uint64_t load_sig;
    const struct benefit_estimate *est; /* [BENEFIT_N_PLANS]: candidates and jitter costs */
};

void probe_config_default(struct probe_config *c);
void probe_init(struct probe_state *ps, const struct probe_config *cfg);
/* Returns the plan to apply until the next call; BENEFIT_UNKNOWN when
 * nothing is measurable (the caller keeps today's policy and says so once). */
enum benefit_plan probe_step(struct probe_state *ps, const struct probe_input *in);
/* What runs now is not the plan under probe (the caller did not apply it:
 * paused, nothing weighed this tick): a round in progress is thrown away
 * (counted in discarded, explained with why) and the next call starts a new
 * one. Nothing happens outside a round. */
void probe_discard(struct probe_state *ps, const char *why);
