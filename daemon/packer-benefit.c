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

/* What the packer measured, in the model's terms: a core's intensive load is
 * its utilisation without the jitter share, and busy is the packer's own
 * verdict (with its hysteresis). */
void packer_benefit_snapshot(const struct packer_input *in, const struct packer_plan *out,
                             struct benefit_core *cores, struct benefit_snapshot *snap)
{
    unsigned on_busy = 0;
    for (int i = 0; i < out->n_cores; i++) {
        const struct packer_core_info *ci = &out->cores[i];
        cores[i] = (struct benefit_core){
            .threads = ci->known ? ci->n_online : 0, .intensive_milli = ci->util_milli, .busy = ci->busy};
        if (ci->busy)
            on_busy += ci->jitter_milli;
    }
    *snap = (struct benefit_snapshot){
        .n_cores = (unsigned)out->n_cores,
        .cores = cores,
        .cap = in->cap,
        .jitter_milli = in->jitter_load_milli,
        .jitter_on_busy_milli = on_busy,
        .n_jitter_tasks = in->n_jitter_tasks,
        .headroom_milli = in->cfg->headroom_milli,
        .freq = in->freq,
        .reeval_us = in->cfg->freq_reeval_us,
    };
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

/* Mark `want` idle cores chosen and their threads into *mask: those of the
 * applied isolation first, while they stay idle, then the others from the
 * highest index down (away from core 0, where interrupts and housekeeping
 * tend to run). Returns how many were found. */
static unsigned choose_isolated(const struct packer_input *in, const struct packer_state *st,
                                struct packer_plan *out, unsigned want, cpu_set_t *mask)
{
    bool keep = st->restricted && st->reason == PACKER_REASON_ISOLATED;
    unsigned have = 0;
    CPU_ZERO(mask);
    for (int i = 0; i < out->n_cores; i++)
        out->cores[i].chosen = false;
    for (int pass = keep ? 0 : 1; pass < 2; pass++)
        for (int i = out->n_cores - 1; i >= 0 && have < want; i--) {
            struct packer_core_info *ci = &out->cores[i];
            const cpu_set_t *online = &in->topo->cores[ci->core].online;
            if (ci->chosen || ci->busy || !ci->known || ci->n_online == 0)
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
        if (want && choose_isolated(in, st, out, want, &mask) == want) {
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
        return;     /* nothing measurable: the thresholds' plan stays */
    out->benefit_now = was_probing || ps->phase == PROBE_RUNNING;
    apply_choice(in, st, out, plan, est);
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
    if (n_live > 1) {
        /* one table (or one measured frequency) for the chip, and plans
         * made per domain: not modelled */
        snprintf(out->benefit_explain, sizeof out->benefit_explain, "not weighed: %d domains, and the %s is for one",
                 n_live, table ? "frequency table" : "probed frequency");
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
    out->benefit_iso_sig = benefit_isolate_sig(&snap, ch.est);
    snprintf(out->benefit_explain, sizeof out->benefit_explain, "%s", ch.explain);
    apply_choice(in, st, out, ch.plan, ch.est);
}
