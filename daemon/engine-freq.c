/* The frequency table the benefit model weighs plans by: the
 * configuration's [capacity] active<N> keys, else the CPU's own turbo
 * ratios (turbo-ratio.h), read at start and at each reload. */
#include "engine.h"

#include "log.h"
#include "turbo-ratio.h"

/* Once per configuration: the frequency table plans are weighed by (the
 * configuration's, else the CPU's turbo ratios), or why there is none. */
void engine_find_freq_table(struct engine *e)
{
    e->freq.hw.n_cores = 0;
    e->freq.what[0] = '\0';
    const struct freq_response *fr = &e->cfg->freq;
    if (!fr->n_cores) {
        if (turbo_ratio_read(e->params.root, &e->freq.hw, e->freq.what, sizeof e->freq.what) < 0) {
            log_notice("benefit: no frequency table ([capacity] active<N> keys; turbo ratios: %s), "
                       "packing by the thresholds alone", e->freq.what);
            return;
        }
        fr = &e->freq.hw;
        log_info("benefit: frequency table from %s", e->freq.what);
    }
    if ((int)fr->n_cores < e->topo->n_cores)
        log_notice("benefit: the frequency table stops at %u active cores, the machine has %d: above %u, "
                   "the frequency of %u is assumed", fr->n_cores, e->topo->n_cores, fr->n_cores, fr->n_cores);
    else
        log_info("benefit: frequency table for up to %u active cores: packing only where it pays", fr->n_cores);
}
