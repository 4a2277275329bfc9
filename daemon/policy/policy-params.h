/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The packing policy's parameters: the [packing] keys and [capacity]
 * frequency_reevaluation, each in the unit its user takes, settled once when
 * the configuration is parsed (config-settings.c) and passed on as they are.
 * The packer takes this struct, not the whole configuration; config.h embeds
 * it. Types only: no I/O header, no module of its own. */
#pragma once
#include <stdint.h>

enum pack_domain { DOMAIN_PACKAGE = 0, DOMAIN_LLC, DOMAIN_NUMA };

/* Default [packing] jitter_slice. tools/bench/slice.sh on the 2-CPU VM,
 * six jitter threads (200 µs every 20 ms, waking together) pinned beside a
 * 100% hog, two passes: run-queue wait per wake-up 851/1408 µs with the
 * default 1.4 ms slice, 645/760 µs with 300 µs, 683/714 µs with 100 µs,
 * 616/921 µs with no hog at all; p99 3.8/9.7 ms, 3.3/3.4 ms, 2.7/5.0 ms.
 * 300 µs was as good as 100 µs within the noise, the steadiest, and keeps a
 * burst of up to 300 µs in one slice. No hog throughput cost measurable. */
#define SLICE_DEFAULT_NS 300000ull

/* The kernel clamps a custom slice to 0.1..100 ms. */
#define SLICE_MIN_NS 100000ull
#define SLICE_MAX_NS 100000000ull

struct policy_params {
    /* the packer (packer.h) */
    unsigned busy_threshold_milli; /* core busy at >= this share of its capacity (125 = 12.5%) */
    unsigned headroom_milli;       /* extra spare capacity required beyond the jitter load, in thread-milli */
    unsigned idle_machine_milli;   /* machine util below this share of total capacity: no restriction */
    unsigned hold_ms;              /* a new plan must hold this long before it is applied */
    unsigned min_change_ms;        /* the mask changes at most once per this period */
    enum pack_domain domain;
    /* how often the chip re-evaluates its frequency limit, for the benefit
     * model (benefit_snapshot.reeval_us); 0: not known, the lag after a
     * wake-up of an idle core is not counted */
    unsigned freq_reeval_us;
    /* the samplers' utilisation smoothing (load_ewma), which the packer's
     * figures come from */
    unsigned half_life_ms;
    /* EEVDF slice of packed jitter, as sched_setattr takes it (slice.h,
     * applier_set_jitter_slice); 0: off */
    uint64_t jitter_slice_ns;
    /* the run-delay guard's limit, in schedstat's unit
     * (delay_guard_config.max_run_delay_ns); 0: off */
    uint64_t max_run_delay_ns;
};
