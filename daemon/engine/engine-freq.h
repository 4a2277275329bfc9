/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The frequency table plans are weighed by (engine-freq.c). */
#pragma once
#include "benefit.h"

struct engine;

/* The frequency table read from the CPU (turbo-ratio.h) where the
 * configuration gives none: at start and at each reload. */
struct engine_freq {
    struct freq_response hw; /* n_cores 0: none */
    char what[192];          /* what was read, or why nothing was */
};

/* Find the table (the configuration's, else the CPU's) and say which it
 * is, or why there is none; without one, start the probe loop where a
 * frequency can be measured. */
void engine_find_freq_table(struct engine *e);
