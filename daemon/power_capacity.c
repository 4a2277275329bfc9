/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "power_capacity.h"

void capacity_table_default(struct capacity_table *t)
{
    t->factor_milli[0] = 0;
    t->factor_milli[1] = 1000;
    /* powerpc: smt_mode == 1 ? cap : cap + ((cap * smt_mode) >> 3) */
    for (unsigned n = 2; n <= CAPACITY_MAX_SMT; n++)
        t->factor_milli[n] = 1000 + n * 125;
}

unsigned capacity_core_milli(const struct capacity_table *t, unsigned n_online)
{
    if (n_online > CAPACITY_MAX_SMT)
        n_online = CAPACITY_MAX_SMT;
    return t->factor_milli[n_online];
}

unsigned capacity_spare_milli(unsigned capacity_milli, unsigned util_milli)
{
    return util_milli >= capacity_milli ? 0 : capacity_milli - util_milli;
}
