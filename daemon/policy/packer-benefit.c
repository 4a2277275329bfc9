/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Pack only when it pays: the packer's wanted plan weighed by the benefit
 * model (benefit.h) against no restriction and against isolating jitter on
 * idle cores. See packer.h (packer_weigh_benefit). Pure like the packer. */
#include <stdio.h>
#include <string.h>

#include "packer.h"
#include "util.h"

/* The plan in effect, in the model's terms: the margin is counted from it. */
static enum benefit_plan applied_plan(const struct packer_state *st)
{
    if (!st->restricted)
        return BENEFIT_NONE;
    return st->reason == PACKER_REASON_ISOLATED ? BENEFIT_ISOLATE : BENEFIT_PACK;
}

/* What the packer measured, in the model's terms, for domain dom (-1: the
 * whole machine): a core's intensive load is its utilisation without the
 * jitter share, and busy is the packer's own verdict (with its
 * hysteresis). A domain gets its share of the jitter load and tasks by the
 * jitter charged to its cores (by its cores where none is charged
 * anywhere; one task at least where it has jitter): the frequency table is
 * taken for each package alone, as vendors give it. */
static void snapshot_of(const struct packer_input *in, const struct packer_plan *out, int dom,
                        struct benefit_core *cores, struct benefit_snapshot *snap)
{
    unsigned n = 0, on_busy = 0;
    uint64_t jit = 0, jit_all = 0;
    for (int i = 0; i < out->n_cores; i++) {
        const struct packer_core_info *ci = &out->cores[i];
        jit_all += ci->jitter_milli;
        if (dom >= 0 && ci->domain != dom)
            continue;
        cores[n++] = (struct benefit_core){
            .threads = ci->known ? ci->n_online : 0, .intensive_milli = ci->util_milli, .busy = ci->busy};
        jit += ci->jitter_milli;
        if (ci->busy)
            on_busy += ci->jitter_milli;
    }
    if (dom < 0) {
        jit = jit_all = 1; /* all of it */
    } else if (!jit_all) {
        jit = n;
        jit_all = (uint64_t)out->n_cores;
    }
    unsigned tasks = (unsigned)((in->n_jitter_tasks * jit + jit_all / 2) / jit_all);
    if (jit && !tasks && in->n_jitter_tasks)
        tasks = 1;
    *snap = (struct benefit_snapshot){
        .n_cores = n,
        .cores = cores,
        .cap = in->cap,
        .jitter_milli = (unsigned)((in->jitter_load_milli * jit + jit_all / 2) / jit_all),
        .jitter_on_busy_milli = on_busy,
        .n_jitter_tasks = tasks,
        .headroom_milli = in->params->headroom_milli,
        .freq = in->freq,
        .reeval_us = in->params->freq_reeval_us,
    };
}

/* The whole machine's snapshot, with the idle cores' measurements (which
 * are the machine's, not a domain's: a domain weighed alone is left
 * without them, so nothing is tried there). */
void packer_benefit_snapshot(const struct packer_input *in, const struct packer_plan *out, struct benefit_core *cores,
                             struct benefit_snapshot *snap)
{
    snapshot_of(in, out, -1, cores, snap);
    const struct packer_idle *idle = in->idle;
    if (!idle)
        return;
    if (idle->none.measured) {
        snap->none_woken_measured = snap->none_wakes_measured = true;
        snap->none_woken_milli = idle->none.woken_milli;
        snap->none_wakes_per_s = idle->none.wakes_per_s;
    }
    if (idle->iso.measured) {
        snap->iso_measured = true;
        snap->iso_sig = idle->iso_sig;
        snap->iso_woken_milli = idle->iso.woken_milli;
        snap->iso_wakes_per_s = idle->iso.wakes_per_s;
    }
    snap->iso_trial_ok = idle->trial_ok;
    snap->in_trial = idle->in_trial;
    snap->trial_from = idle->trial_from;
}

/* Mark `want` idle cores of domain dom (-1: any) chosen and their threads
 * into *mask: those of the applied isolation first, while they stay idle,
 * then the others from the highest index down (away from core 0, where
 * interrupts and housekeeping tend to run). Returns how many were found. */
static unsigned choose_isolated(const struct packer_input *in, const struct packer_state *st, struct packer_plan *out,
                                int dom, unsigned want, cpu_set_t *mask)
{
    bool keep = st->restricted && st->reason == PACKER_REASON_ISOLATED;
    unsigned have = 0;
    CPU_ZERO(mask);
    for (int i = 0; i < out->n_cores; i++)
        if (dom < 0 || out->cores[i].domain == dom)
            out->cores[i].chosen = false;
    for (int pass = keep ? 0 : 1; pass < 2; pass++)
        for (int i = out->n_cores - 1; i >= 0 && have < want; i--) {
            struct packer_core_info *ci = &out->cores[i];
            const cpu_set_t *online = &in->topo->cores[ci->core].online;
            if ((dom >= 0 && ci->domain != dom) || ci->chosen || ci->busy || !ci->known || ci->n_online == 0)
                continue;
            if (pass == 0 && !cpuset_covers(&st->chosen_cpus, online))
                continue;
            ci->chosen = true;
            CPU_OR(mask, mask, online);
            have++;
        }
    return have;
}

/* Make the wanted plan the model's (or the probe's) choice. */
static void apply_choice(const struct packer_input *in, const struct packer_state *st, struct packer_plan *out,
                         enum benefit_plan plan, const struct benefit_estimate est[BENEFIT_N_PLANS])
{
    cpu_set_t mask;
    switch (plan) {
    case BENEFIT_NONE:
        if (out->wanted_restricted) {
            out->wanted_restricted = false;
            out->wanted_mask = in->topo->online;
            out->wanted_reason = PACKER_REASON_NO_BENEFIT;
        }
        return;
    case BENEFIT_ISOLATE: {
        unsigned want = est[BENEFIT_ISOLATE].n_isolate;
        if (want && choose_isolated(in, st, out, -1, want, &mask) == want) {
            out->wanted_restricted = true;
            out->wanted_mask = mask;
            out->wanted_reason = PACKER_REASON_ISOLATED;
        }
        return;
    }
    default:
        /* pack: the packer's own plan, or its fallback where it found no
         * room by its thresholds */
        return;
    }
}

/* The load a probe's samples hold for: the busy cores (the packer's
 * verdict, with its hysteresis) and the jitter tasks counted by powers of
 * two, since on a real machine short-lived jitter moves the exact count
 * every tick and each move would throw the round away. */
static uint64_t load_signature(const struct packer_plan *out, unsigned n_jitter)
{
    uint64_t busy = 0;
    unsigned bits = 0;
    for (int i = 0; i < out->n_cores; i++)
        busy += out->cores[i].busy;
    for (; n_jitter; n_jitter >>= 1)
        bits++;
    return busy << 32 | bits;
}

/* No table: the probe loop chooses from what it measured, with the model's
 * jitter costs (estimates without frequencies). */
static void weigh_by_probe(const struct packer_input *in, const struct packer_state *st, struct packer_plan *out,
                           const struct benefit_snapshot *snap)
{
    struct benefit_estimate est[BENEFIT_N_PLANS];
    struct probe_state *ps = in->probe->state;
    benefit_estimate_all(snap, est);
    bool was_probing = ps->phase == PROBE_RUNNING;
    const struct probe_input pin = {
        .now_ms = in->now_ms,
        .measurable = in->probe->measurable,
        .busy_mhz = in->probe->busy_mhz,
        .load_sig = load_signature(out, in->n_jitter_tasks),
        .est = est,
    };
    enum benefit_plan plan = probe_step(ps, &pin);
    out->benefit = plan;
    out->benefit_probed = true;
    snprintf(out->benefit_explain, sizeof out->benefit_explain, "%s", ps->explain);
    if (plan == BENEFIT_UNKNOWN)
        return; /* nothing measurable: the thresholds' plan stays */
    out->benefit_now = was_probing || ps->phase == PROBE_RUNNING;
    apply_choice(in, st, out, plan, est);
}

/* ---- several domains ---- */

/* The plan in effect in domain dom, in the model's terms: no restriction
 * where the applied mask holds all its cores, isolation where the ones it
 * holds are all idle, else packing. */
static enum benefit_plan domain_applied_plan(const struct packer_input *in, const struct packer_state *st,
                                             const struct packer_plan *out, int dom)
{
    bool left_out = false, any_in = false, busy_in = false;
    if (!st->restricted)
        return BENEFIT_NONE;
    for (int i = 0; i < out->n_cores; i++) {
        const struct packer_core_info *ci = &out->cores[i];
        if (ci->domain != dom || ci->n_online == 0)
            continue;
        if (!cpuset_covers(&st->mask, &in->topo->cores[ci->core].online)) {
            left_out = true;
        } else {
            any_in = true;
            busy_in |= ci->busy;
        }
    }
    if (!left_out || !any_in)
        return BENEFIT_NONE;
    return busy_in ? BENEFIT_PACK : BENEFIT_ISOLATE;
}

/* Domain dom's part of the mask under plan p: isolation on the idle cores
 * the model asks for (if there are that many), packing as the packer
 * planned it (if it packed there), else all its CPUs. Returns the plan
 * that applies. */
static enum benefit_plan apply_domain(const struct packer_input *in, const struct packer_state *st,
                                      struct packer_plan *out, int dom, enum benefit_plan p, unsigned n_isolate,
                                      cpu_set_t *mask)
{
    struct packer_domain_info *d = &out->domains[dom];
    cpu_set_t m;
    if (p == BENEFIT_ISOLATE && n_isolate && choose_isolated(in, st, out, dom, n_isolate, &m) == n_isolate) {
        CPU_OR(mask, mask, &m);
        d->packed = true;
        d->reason = PACKER_REASON_ISOLATED;
        d->n_chosen = (int)n_isolate;
        return p;
    }
    if (p != BENEFIT_NONE && d->packed) {
        p = BENEFIT_PACK;
    } else {
        if (d->packed)
            d->reason = PACKER_REASON_NO_BENEFIT;
        d->packed = false;
        p = BENEFIT_NONE;
    }
    for (int i = 0; i < out->n_cores; i++) {
        struct packer_core_info *ci = &out->cores[i];
        if (ci->domain != dom)
            continue;
        if (p == BENEFIT_NONE)
            ci->chosen = false;
        if (p == BENEFIT_NONE || ci->chosen)
            CPU_OR(mask, mask, &in->topo->cores[ci->core].online);
    }
    return p;
}

/* Several packages, each with its own frequency limit: each is weighed on
 * its own with the table and their masks joined. The plan reported is
 * that of the package with the most busy cores. */
static void weigh_domains(const struct packer_input *in, const struct packer_state *st, struct packer_plan *out)
{
    struct benefit_core cores[PACKER_MAX_CORES];
    cpu_set_t mask;
    bool isolated = false, packed = false;
    int heaviest = -1;
    size_t used = 0;
    CPU_ZERO(&mask);
    for (int dom = 0; dom < out->n_domains; dom++) {
        struct packer_domain_info *d = &out->domains[dom];
        struct benefit_snapshot snap;
        struct benefit_choice ch;
        if (d->n_cores == 0)
            continue;
        snapshot_of(in, out, dom, cores, &snap);
        if (benefit_choose(&snap, domain_applied_plan(in, st, out, dom), BENEFIT_MARGIN_BP_DEFAULT, &ch) < 0)
            continue;
        enum benefit_plan p = apply_domain(in, st, out, dom, ch.plan, ch.est[BENEFIT_ISOLATE].n_isolate, &mask);
        isolated |= p == BENEFIT_ISOLATE;
        packed |= p == BENEFIT_PACK;
        if (heaviest < 0 || d->n_busy > out->domains[heaviest].n_busy) {
            heaviest = dom;
            out->benefit = p;
        }
        if (used < sizeof out->benefit_explain)
            used += (size_t)snprintf(out->benefit_explain + used, sizeof out->benefit_explain - used,
                                     "%spackage %d: %s", used ? "; " : "", d->id, ch.explain);
    }
    if (isolated || packed) {
        out->wanted_restricted = true;
        out->wanted_mask = mask;
        out->wanted_reason = isolated ? PACKER_REASON_ISOLATED : PACKER_REASON_PACKED;
    } else if (out->wanted_restricted) {
        out->wanted_restricted = false;
        out->wanted_mask = in->topo->online;
        out->wanted_reason = PACKER_REASON_NO_BENEFIT;
    }
}

void packer_weigh_benefit(const struct packer_input *in, const struct packer_state *st, struct packer_plan *out)
{
    out->benefit = BENEFIT_UNKNOWN;
    out->benefit_explain[0] = '\0';
    out->benefit_trial = false;
    bool table = in->freq && in->freq->n_cores > 0;
    if (!table && !(in->probe && in->probe->state))
        return;
    int n_live = 0;
    for (int i = 0; i < out->n_domains; i++)
        n_live += out->domains[i].n_cores > 0;
    if (n_live > 1 && table && in->params->domain == DOMAIN_PACKAGE) {
        out->benefit_per_domain = true;
        weigh_domains(in, st, out);
        return;
    }
    if (n_live > 1) {
        /* one measured frequency for the machine, or a table for a
         * package weighed over LLCs or nodes: not modelled */
        snprintf(out->benefit_explain, sizeof out->benefit_explain, "not weighed: %d %s, and the %s is for %s", n_live,
                 in->params->domain == DOMAIN_LLC    ? "LLCs"
                 : in->params->domain == DOMAIN_NUMA ? "nodes"
                                                     : "packages",
                 table ? "frequency table" : "probed frequency", table ? "a package" : "the machine");
        return;
    }

    struct benefit_core cores[PACKER_MAX_CORES];
    struct benefit_snapshot snap;
    struct benefit_choice ch;
    packer_benefit_snapshot(in, out, cores, &snap);
    if (!table) {
        snap.freq = NULL;
        weigh_by_probe(in, st, out, &snap);
        return;
    }
    if (benefit_choose(&snap, applied_plan(st), BENEFIT_MARGIN_BP_DEFAULT, &ch) < 0)
        return;
    out->benefit = ch.plan;
    out->benefit_trial = ch.trial;
    out->benefit_trial_from = ch.trial_from;
    out->benefit_iso_sig = ch.est[BENEFIT_ISOLATE].load_sig;
    snprintf(out->benefit_explain, sizeof out->benefit_explain, "%s", ch.explain);
    apply_choice(in, st, out, ch.plan, ch.est);
}
