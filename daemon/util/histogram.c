/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "histogram.h"

const uint64_t histogram_bounds_ns[HISTOGRAM_N_BOUNDS] = {
    10000,   25000,    50000,    100000,   250000,    500000,    1000000,    2500000,
    5000000, 10000000, 20000000, 50000000, 100000000, 250000000, 1000000000,
};

void histogram_add(struct histogram *h, uint64_t ns) { histogram_add_n(h, ns, 1); }

void histogram_add_n(struct histogram *h, uint64_t ns, uint64_t n)
{
    size_t i = 0;
    if (n == 0)
        return;
    while (i < HISTOGRAM_N_BOUNDS && ns > histogram_bounds_ns[i])
        i++;
    h->bucket[i] += n;
    h->count += n;
    h->sum_ns += ns * n;
    if (ns > h->max_ns)
        h->max_ns = ns;
}

uint64_t histogram_count_le(const struct histogram *h, uint64_t bound_ns)
{
    uint64_t n = 0;
    for (size_t i = 0; i < HISTOGRAM_N_BOUNDS && histogram_bounds_ns[i] <= bound_ns; i++)
        n += h->bucket[i];
    return n;
}

uint64_t histogram_quantile_ns(const struct histogram *h, double q)
{
    if (h->count == 0 || !(q > 0))
        return 0;
    if (q > 1)
        q = 1;
    double rank = q * (double)h->count;
    uint64_t below = 0;
    for (size_t i = 0; i <= HISTOGRAM_N_BOUNDS; i++) {
        if (h->bucket[i] == 0 || (double)(below + h->bucket[i]) < rank) {
            below += h->bucket[i];
            continue;
        }
        uint64_t lo = i ? histogram_bounds_ns[i - 1] : 0;
        uint64_t hi = i < HISTOGRAM_N_BOUNDS ? histogram_bounds_ns[i] : h->max_ns;
        double at = (double)lo + (double)(hi - lo) * (rank - (double)below) / (double)h->bucket[i];
        uint64_t v = (uint64_t)at;
        return v < h->max_ns ? v : h->max_ns;
    }
    return h->max_ns;
}
