/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Core capacity from its number of online SMT threads, in milli-units of one
 * thread's capacity (1000 = one thread). Pure: no I/O. */
#pragma once

#define CAPACITY_MAX_SMT 8

struct capacity_table {
    /* factor_milli[n] = capacity of a core with n online threads; [0] is 0. */
    unsigned factor_milli[CAPACITY_MAX_SMT + 1];
};

/* TurboSched's POWER formula: 1.0x for one thread, 1 + n/8 for n >= 2
 * (SMT2 1.25x, SMT4 1.5x, SMT8 2.0x). */
void capacity_table_default(struct capacity_table *t);
/* Capacity of a core with n online threads; beyond the table, the factor of
 * the largest entry (a core never gains from threads we know nothing about). */
unsigned capacity_core_milli(const struct capacity_table *t, unsigned n_online);
/* capacity − utilisation, never negative. */
unsigned capacity_spare_milli(unsigned capacity_milli, unsigned util_milli);
