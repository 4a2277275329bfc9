/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A latency histogram with fixed bounds, as Prometheus exposes one: counts
 * per bucket (each bucket holds what is at most its bound and above the
 * previous one; the last holds everything above the highest bound), the
 * number of samples, their sum and the largest. Pure; 168 bytes, no
 * allocation, so it can sit in the engine and be added to per event. */
#pragma once
#include <stddef.h>
#include <stdint.h>

/* From 10 us (a placement in the same wake-up as its event) to 1 s (a
 * daemon starved for CPU): the 20 ms that the storm benchmark counts as
 * "placed in time" is a bound, so that share is read off without estimate. */
#define HISTOGRAM_N_BOUNDS 15
extern const uint64_t histogram_bounds_ns[HISTOGRAM_N_BOUNDS];

struct histogram {
    uint64_t bucket[HISTOGRAM_N_BOUNDS + 1]; /* not cumulative; [N]: above every bound */
    uint64_t count;
    uint64_t sum_ns;
    uint64_t max_ns;
};

void histogram_add(struct histogram *h, uint64_t ns);
/* n samples of ns each (a thread's mean over n wake-ups, say). */
void histogram_add_n(struct histogram *h, uint64_t ns, uint64_t n);

/* Samples at most bound_ns (bound_ns one of histogram_bounds_ns for an
 * exact answer; otherwise the buckets whose bound is at most bound_ns). */
uint64_t histogram_count_le(const struct histogram *h, uint64_t bound_ns);

/* The q-quantile (0 < q <= 1) estimated as Prometheus' histogram_quantile()
 * does: linear within the bucket that holds it, from the previous bound (0
 * for the first). Never above the largest sample seen. 0 with no samples. */
uint64_t histogram_quantile_ns(const struct histogram *h, double q);
