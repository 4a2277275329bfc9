/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The frequency table the benefit model weighs plans by: the
 * configuration's [capacity] active<N> keys, else the CPU's own turbo
 * ratios (turbo-ratio.h), read at start and at each reload. Without one,
 * the probe loop learns from measured frequency (engine-probe.c). */
#include "engine-freq.h"

#include "engine-internal.h"

#include "log.h"
#include "turbo-ratio.h"

/* No table: probe where the busy cores' frequency can be measured, else
 * say once what was looked for and that the thresholds decide. */
static void no_table(struct engine *e)
{
    if (engine_probe_setup(e, false)) {
        log_notice("benefit: no frequency table ([capacity] active<N> keys; turbo ratios: %s): learning which "
                   "plan pays by probes of the busy cores' frequency (%s)",
                   e->freq.what, e->probe.meter.what);
        return;
    }
    if (!e->cfg->freq_probe)
        log_notice("benefit: no frequency table ([capacity] active<N> keys; turbo ratios: %s) and probe = no, "
                   "packing by the thresholds alone",
                   e->freq.what);
    else
        log_notice("benefit: no frequency table ([capacity] active<N> keys; turbo ratios: %s) and no measurable "
                   "frequency to probe with (%s), packing by the thresholds alone",
                   e->freq.what, e->probe.meter.what);
}

/* Once per configuration: the frequency table plans are weighed by (the
 * configuration's, else the CPU's turbo ratios), or why there is none. */
void engine_find_freq_table(struct engine *e)
{
    /* the model's other measured input: a reload may have enabled or
     * disabled idle states */
    engine_idle_setup(e, true);
    e->freq.hw.n_cores = 0;
    e->freq.what[0] = '\0';
    const struct freq_response *fr = &e->cfg->freq;
    if (!fr->n_cores) {
        if (turbo_ratio_read(e->params.root, &e->freq.hw, e->freq.what, sizeof e->freq.what) < 0) {
            no_table(e);
            return;
        }
        fr = &e->freq.hw;
        log_info("benefit: frequency table from %s", e->freq.what);
    }
    engine_probe_setup(e, true);
    if ((int)fr->n_cores < e->topo->n_cores)
        log_notice("benefit: the frequency table stops at %u active cores, the machine has %d: above %u, "
                   "the frequency of %u is assumed",
                   fr->n_cores, e->topo->n_cores, fr->n_cores, fr->n_cores);
    else
        log_info("benefit: frequency table for up to %u active cores: packing only where it pays", fr->n_cores);
}
