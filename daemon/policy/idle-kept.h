/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the deep-idle measurement (idle-meter.h) gives the packer and the
 * benefit model: a plain struct. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

/* The measurement the model is given: the last ones taken with the jitter
 * unconfined, smoothed (load_ewma, half_life_ms). */
struct idle_kept {
    bool measured;
    unsigned woken_milli;
    unsigned wakes_per_s;
    uint64_t at_ms; /* when last updated */
};
