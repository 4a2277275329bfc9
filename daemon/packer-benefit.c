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
static void snapshot(const struct packer_input *in, const struct packer_plan *out, struct benefit_core *cores,
                     struct benefit_snapshot *snap)
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
    };
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

void packer_weigh_benefit(const struct packer_input *in, const struct packer_state *st, struct packer_plan *out)
{
    out->benefit = BENEFIT_UNKNOWN;
    out->benefit_explain[0] = '\0';
    if (!in->freq || in->freq->n_cores == 0)
        return;
    int n_live = 0;
    for (int i = 0; i < out->n_domains; i++)
        n_live += out->domains[i].n_cores > 0;
    if (n_live > 1) {
        /* one table for the chip, and plans made per domain: not modelled */
        snprintf(out->benefit_explain, sizeof out->benefit_explain,
                 "not weighed: %d domains, and the frequency table is for one", n_live);
        return;
    }

    struct benefit_core cores[PACKER_MAX_CORES];
    struct benefit_snapshot snap;
    struct benefit_choice ch;
    snapshot(in, out, cores, &snap);
    if (benefit_choose(&snap, applied_plan(st), BENEFIT_MARGIN_BP_DEFAULT, &ch) < 0)
        return;
    out->benefit = ch.plan;
    snprintf(out->benefit_explain, sizeof out->benefit_explain, "%s", ch.explain);

    cpu_set_t mask;
    switch (ch.plan) {
    case BENEFIT_NONE:
        if (out->wanted_restricted) {
            out->wanted_restricted = false;
            out->wanted_mask = in->topo->online;
            out->wanted_reason = PACKER_REASON_NO_BENEFIT;
        }
        return;
    case BENEFIT_ISOLATE: {
        unsigned want = ch.est[BENEFIT_ISOLATE].n_isolate;
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
