/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The probe loop (benefit.h): learns from measured busy-core frequency
 * which plan pays, where no frequency table says. Pure: no I/O, no
 * syscalls. */
#include "benefit.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void probe_config_default(struct probe_config *c)
{
    c->settle_samples = 1;
    c->samples = 2;
    c->margin_bp = 30;
    c->reprobe_ms = 0;
    c->max_samples = 6;
    c->confidence_se = 2;
}

void probe_init(struct probe_state *ps, const struct probe_config *cfg)
{
    memset(ps, 0, sizeof(*ps));
    if (cfg)
        ps->cfg = *cfg;
    else
        probe_config_default(&ps->cfg);
    if (ps->cfg.samples == 0)
        ps->cfg.samples = 1;
    if (ps->cfg.max_samples < ps->cfg.samples)
        ps->cfg.max_samples = ps->cfg.samples;
    ps->phase = PROBE_IDLE;
    ps->learned = BENEFIT_NONE;
    snprintf(ps->explain, sizeof ps->explain, "not probed yet");
}

static void round_start(struct probe_state *ps, const struct probe_input *in)
{
    ps->phase = PROBE_RUNNING;
    ps->probing = BENEFIT_NONE;
    ps->tick_in_probe = 0;
    ps->block_end = ps->cfg.samples;
    ps->extending = false;
    ps->load_sig = in->load_sig;
    ps->have_sig = true;
    memset(ps->st, 0, sizeof(ps->st));
    memset(ps->cost, 0, sizeof(ps->cost));
    for (int p = 0; p < BENEFIT_N_PLANS; p++)
        ps->candidate[p] = p == BENEFIT_NONE || (in->est && in->est[p].candidate);
    snprintf(ps->explain, sizeof ps->explain, "probing none");
}

static enum benefit_plan next_candidate(const struct probe_state *ps, enum benefit_plan after)
{
    for (int p = after + 1; p < BENEFIT_N_PLANS; p++)
        if (ps->candidate[p])
            return (enum benefit_plan)p;
    return BENEFIT_N_PLANS;
}

static double plan_mean(const struct probe_plan_stats *s) { return s->n ? s->sum_mhz / s->n : 0; }

static double plan_tput(const struct probe_state *ps, const double *cost, enum benefit_plan p)
{
    const struct probe_plan_stats *s = &ps->st[p];
    return ps->candidate[p] && s->n ? plan_mean(s) * (1 - cost[p]) : 0;
}

/* The samples' standard deviation around their own plan's mean, pooled over
 * the plans (the noise is the meter's and the chip's, not a plan's), and its
 * degrees of freedom; 0 with no plan sampled twice. */
static double pooled_sd(const struct probe_state *ps, unsigned *dof)
{
    double ss = 0;
    unsigned n = 0, k = 0;
    for (int p = 0; p < BENEFIT_N_PLANS; p++) {
        const struct probe_plan_stats *s = &ps->st[p];
        if (!s->n)
            continue;
        ss += s->sumsq_mhz - s->sum_mhz * s->sum_mhz / s->n;
        n += s->n;
        k++;
    }
    *dof = n - k;
    return n > k && ss > 0 ? sqrt(ss / (n - k)) : 0;
}

/* confidence_se standard errors, widened as Student's t is for a standard
 * deviation estimated from few samples (Cornish-Fisher, within 4% of the
 * table from 3 degrees of freedom): two samples of each of three plans
 * give 3, and an estimate that rests on them reads the noise as half what
 * it is one time in six. */
static double t_band(double z, unsigned dof)
{
    if (dof == 0)
        return z;
    double v = dof, z3 = z * z * z;
    return z + (z3 + z) / (4 * v) + (5 * z3 * z * z + 16 * z3 + 3 * z) / (96 * v * v);
}

/* Standard error of tput(a) / tput(b) - 1, relative to b's mean frequency. */
static double rel_se(const struct probe_state *ps, double sd, enum benefit_plan a, enum benefit_plan b)
{
    const struct probe_plan_stats *sa = &ps->st[a], *sb = &ps->st[b];
    return sd * sqrt(1.0 / sa->n + 1.0 / sb->n) / plan_mean(sb);
}

/* What the samples say: `chosen`, whether the comparison that decided it
 * is within the noise (`unsure`, between plans a and b), and the choice by
 * the estimates alone (`point`: the best plan if it beats none by the
 * margin), taken when more samples cannot be had. */
struct probe_verdict {
    enum benefit_plan chosen, a, b, point;
    bool unsure;
};

static struct probe_verdict probe_judge(const struct probe_state *ps, const double *cost)
{
    struct probe_verdict v = {BENEFIT_NONE, BENEFIT_NONE, BENEFIT_NONE, BENEFIT_NONE, false};
    enum benefit_plan best = BENEFIT_N_PLANS, runner = BENEFIT_N_PLANS;
    for (int p = BENEFIT_NONE + 1; p < BENEFIT_N_PLANS; p++) {
        double t = plan_tput(ps, cost, (enum benefit_plan)p);
        if (t <= 0)
            continue;
        if (best == BENEFIT_N_PLANS || t > plan_tput(ps, cost, best)) {
            runner = best;
            best = (enum benefit_plan)p;
        } else if (runner == BENEFIT_N_PLANS || t > plan_tput(ps, cost, runner)) {
            runner = (enum benefit_plan)p;
        }
    }
    double t0 = plan_tput(ps, cost, BENEFIT_NONE);
    if (t0 <= 0 || best == BENEFIT_N_PLANS)
        return v;
    unsigned dof;
    double sd = pooled_sd(ps, &dof), k = t_band(ps->cfg.confidence_se, dof), margin = ps->cfg.margin_bp / 10000.0;
    double gain = plan_tput(ps, cost, best) / t0 - 1, band = k * rel_se(ps, sd, best, BENEFIT_NONE);
    v.a = best;
    v.point = gain > margin ? best : BENEFIT_NONE;
    if (gain <= margin + band) {
        /* none stays; unsure if the gain might still clear the margin */
        v.unsure = gain > margin - band;
        return v;
    }
    v.chosen = best;
    if (runner != BENEFIT_N_PLANS) {
        v.b = runner;
        v.unsure = plan_tput(ps, cost, best) / plan_tput(ps, cost, runner) - 1 <= k * rel_se(ps, sd, best, runner);
    }
    return v;
}

static void probe_explain(struct probe_state *ps, const double *cost)
{
    double f0 = plan_mean(&ps->st[BENEFIT_NONE]);
    enum benefit_plan best = ps->learned;
    ps->learned_gain = best == BENEFIT_NONE || f0 <= 0
                           ? 0
                           : plan_mean(&ps->st[best]) * (1 - cost[best]) / (f0 * (1 - cost[BENEFIT_NONE])) - 1;
    if (best == BENEFIT_NONE)
        snprintf(ps->explain, sizeof ps->explain, "probed: none pays (busy cores at %.0f MHz unrestricted)", f0);
    else
        snprintf(ps->explain, sizeof ps->explain,
                 "probed: %s %+.1f%% (busy cores at %.0f MHz vs %.0f MHz, jitter takes %.1f%%)",
                 benefit_plan_name(best), 100 * ps->learned_gain, plan_mean(&ps->st[best]), f0, 100 * cost[best]);
}

static void probe_switch(struct probe_state *ps, enum benefit_plan p)
{
    if (p != ps->probing) {
        ps->probing = p;
        ps->tick_in_probe = 0;
    }
    ps->block_end = ps->st[p].n + ps->cfg.samples;
    if (ps->block_end > ps->cfg.max_samples && ps->extending)
        ps->block_end = ps->cfg.max_samples;
    snprintf(ps->explain, sizeof ps->explain, "probing %s%s", benefit_plan_name(p), ps->extending ? " again" : "");
}

static void learn(struct probe_state *ps, enum benefit_plan p, const double *cost)
{
    ps->recheck_seen = false;
    ps->sig_grace = p != (ps->phase == PROBE_RUNNING ? ps->probing : ps->learned);
    ps->learned = p;
    probe_explain(ps, cost);
}

/* The first pass is over, or an extra probe: decide, or probe the two plans
 * the decision hangs on again (the one with fewer samples first; the one
 * applied now on a tie, which needs no settling). With max_samples of both
 * and still within the noise, the estimates decide: a plan whose estimate
 * beats none by the margin is more likely to gain than to lose, and what
 * it can lose is small, since the noise band was that narrow. */
static void round_decide(struct probe_state *ps, const struct probe_input *in)
{
    struct probe_verdict v = probe_judge(ps, ps->cost);
    const unsigned cap = ps->cfg.max_samples;
    if (v.unsure && (ps->st[v.a].n < cap || ps->st[v.b].n < cap)) {
        unsigned na = ps->st[v.a].n, nb = ps->st[v.b].n;
        enum benefit_plan next = na < nb ? v.a : nb < na ? v.b : ps->probing == v.b ? v.b : v.a;
        ps->extending = true;
        ps->extra_probes++;
        probe_switch(ps, next);
        return;
    }
    learn(ps, v.unsure ? v.point : v.chosen, ps->cost);
    ps->learned_at_ms = in->now_ms;
    ps->phase = PROBE_LEARNED;
    ps->rounds++;
}

/* The frequencies stay valid while the load does; the costs are the model's
 * and sharpen as the caller's smoothed jitter load settles (at start-up it
 * still rises while none is probed), so the choice is made again with the
 * costs of each tick. Only the costs move, and smoothly, so half the margin
 * of hysteresis keeps it from flapping: a plan 0.3% better once the costs
 * have settled is not kept out by a full margin. */
static void learned_recheck(struct probe_state *ps, const struct probe_input *in)
{
    if (!in->est)
        return;
    double cost[BENEFIT_N_PLANS];
    for (int p = 0; p < BENEFIT_N_PLANS; p++)
        cost[p] = in->est[p].jitter_cost;
    enum benefit_plan c = probe_judge(ps, cost).chosen;
    double now = plan_tput(ps, cost, ps->learned);
    if (c == ps->learned || plan_tput(ps, cost, c) <= now * (1 + ps->cfg.margin_bp / 20000.0)) {
        ps->recheck_seen = false;
        return;
    }
    /* two calls in a row: one tick's cost can be the caller's view of a
     * move (a mask the packer shifted), not the load */
    if (ps->recheck_seen && ps->recheck_want == c) {
        ps->recheck_seen = false;
        learn(ps, c, cost);
        return;
    }
    ps->recheck_seen = true;
    ps->recheck_want = c;
}

static void probe_sample(struct probe_state *ps, const struct probe_input *in)
{
    struct probe_plan_stats *s = &ps->st[ps->probing];
    if (s->n == 0 || in->busy_mhz < s->min_mhz)
        s->min_mhz = in->busy_mhz;
    if (s->n == 0 || in->busy_mhz > s->max_mhz)
        s->max_mhz = in->busy_mhz;
    s->sum_mhz += in->busy_mhz;
    s->sumsq_mhz += in->busy_mhz * in->busy_mhz;
    s->n++;
    if (ps->probing == BENEFIT_NONE)
        for (int p = 0; p < BENEFIT_N_PLANS; p++)
            ps->cost[p] = in->est ? in->est[p].jitter_cost : 0;
}

enum benefit_plan probe_step(struct probe_state *ps, const struct probe_input *in)
{
    if (!in->measurable) {
        if (ps->phase != PROBE_UNMEASURABLE)
            snprintf(ps->explain, sizeof ps->explain, "no measurable frequency: current policy kept");
        ps->phase = PROBE_UNMEASURABLE;
        return BENEFIT_UNKNOWN;
    }
    switch (ps->phase) {
    case PROBE_UNMEASURABLE:
    case PROBE_IDLE:
        round_start(ps, in);
        return ps->probing;
    case PROBE_LEARNED: {
        /* right after a switch the caller's view of the load follows the
         * jitter's move for a tick, as the chip does: a signature change
         * then counts only if it is still there at the next call, and that
         * tick's costs (the moved jitter's load charged twice over) are
         * not weighed */
        bool grace = ps->sig_grace;
        ps->sig_grace = false;
        if ((in->load_sig != ps->load_sig && !grace) ||
            (ps->cfg.reprobe_ms && in->now_ms - ps->learned_at_ms >= ps->cfg.reprobe_ms)) {
            round_start(ps, in);
            return ps->probing;
        }
        if (!grace)
            learned_recheck(ps, in);
        return ps->learned;
    }
    case PROBE_RUNNING:
        break;
    }

    /* the sample is the plan applied since the previous call; a settle
     * tick's signature is as unreliable as its frequency */
    if (in->load_sig != ps->load_sig && ps->tick_in_probe >= ps->cfg.settle_samples) {
        /* the load moved under the probe: its samples compare nothing */
        ps->discarded++;
        round_start(ps, in);
        return ps->probing;
    }
    ps->tick_in_probe++;
    if (ps->tick_in_probe <= ps->cfg.settle_samples)
        return ps->probing;
    probe_sample(ps, in);
    if (ps->st[ps->probing].n < ps->block_end)
        return ps->probing;
    enum benefit_plan next = ps->extending ? BENEFIT_N_PLANS : next_candidate(ps, ps->probing);
    if (next != BENEFIT_N_PLANS) {
        probe_switch(ps, next);
        return ps->probing;
    }
    round_decide(ps, in);
    return ps->phase == PROBE_LEARNED ? ps->learned : ps->probing;
}

void probe_discard(struct probe_state *ps, const char *why)
{
    if (ps->phase != PROBE_RUNNING)
        return;
    ps->phase = PROBE_IDLE;
    ps->discarded++;
    snprintf(ps->explain, sizeof ps->explain, "probe interrupted (%s), starting over", why);
}
