/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The run-delay guard: how long packed jitter waits on a run queue per
 * wake-up, and what the plan should do about it. Pure: the caller reads
 * /proc/TID/schedstat, passes the text or the numbers in, and applies the
 * decision (the packer's own hold and min-change hysteresis still apply).
 *
 * - Per thread: the mean wait per wake-up over the last DELAY_WINDOW samples,
 *   from schedstat deltas (wait ns / timeslices).
 * - Across threads: a high percentile of those means, weighted by wake-ups,
 *   so a thread that woke 500 times counts 500 times.
 * - Decision per tick: above max_run_delay for hold_ms: spill to the next
 *   busy core, or fall back when there is none. Below shrink_pct of it for
 *   shrink_hold_ms (and as long since the last spill): release the last core
 *   spilled to. A spill soon after a shrink doubles the shrink hold (up to
 *   DELAY_SHRINK_BACKOFF_MAX times), so the plan does not flap. After a
 *   fallback, packing is tried again after fallback_retry_ms, doubling with
 *   each fallback in a row. Both back to 1 once the plan held for ten times
 *   the base period. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* /proc/TID/schedstat: time on the CPU, time waiting on a run queue (both
 * ns), and the number of timeslices run. It exists without CONFIG_SCHEDSTATS. */
struct delay_schedstat {
    uint64_t run_ns;
    uint64_t wait_ns;
    uint64_t timeslices;
};
int delay_parse_schedstat(const char *text, struct delay_schedstat *ret);

#define DELAY_WINDOW 4

/* One packed jitter thread. Zero-initialised is ready for its first sample. */
struct delay_thread {
    struct delay_schedstat last;
    bool have_last;
    unsigned head, n; /* ring of the last n deltas */
    uint64_t wait_ns[DELAY_WINDOW];
    uint64_t wakeups[DELAY_WINDOW];
};

/* Feed a new reading. The first one only sets the base; counters that went
 * backwards (a reused TID) restart the window. Returns the wake-ups of this
 * delta (0 for a base) and the mean wait of this delta in *delta_mean_ns,
 * for the histogram (histogram_add_n). */
uint64_t delay_thread_sample(struct delay_thread *t, const struct delay_schedstat *now, uint64_t *delta_mean_ns);
/* Mean wait per wake-up over the window, ns; *wakeups: how many wake-ups
 * that is (0: no evidence, and it returns 0). */
uint64_t delay_thread_mean_ns(const struct delay_thread *t, uint64_t *wakeups);

struct delay_point {
    uint64_t delay_ns;
    uint64_t weight; /* wake-ups behind delay_ns */
    uint32_t group;  /* whose: the thread's uid (delay_percentile_by_group) */
};
/* The smallest delay at or below which pct percent of the total weight lies
 * (pct 0..100). Sorts pts in place. 0 for no weight at all. */
uint64_t delay_weighted_percentile(struct delay_point *pts, size_t n, unsigned pct);
/* The same within each group, and the largest of those: one user's many
 * cheap threads waking often weigh only in their own group, and cannot
 * hide another user's waits. With one group, delay_weighted_percentile.
 * Sorts pts in place. */
uint64_t delay_percentile_by_group(struct delay_point *pts, size_t n, unsigned pct);

/* Defaults. max_run_delay from tools/bench/slice.sh on the 2-CPU VM: packed
 * jitter with a 300 µs slice waited 8-80 µs per wake-up alone beside a hog
 * and 645-760 µs as six threads waking together (616-921 µs with no hog:
 * jitter queueing behind itself, which no spill to a busy core cures);
 * runs disturbed by other work on the CPU reached 1.6-2.7 ms. 1 ms is above
 * the first and below the second; hold_ms and the percentile keep single
 * noisy samples from acting. */
#define DELAY_MAX_RUN_DELAY_NS_DEFAULT 1000000ull
#define DELAY_MAX_RUN_DELAY_NS_MIN 10000u /* [packing] max_run_delay's range */
#define DELAY_MAX_RUN_DELAY_NS_MAX 1000000000u
#define DELAY_PERCENTILE_DEFAULT 90u
#define DELAY_HOLD_MS_DEFAULT 3000u
#define DELAY_SHRINK_PCT_DEFAULT 40u
#define DELAY_SHRINK_HOLD_MS_DEFAULT 30000u
#define DELAY_MIN_WAKEUPS_DEFAULT 20u
#define DELAY_FALLBACK_RETRY_MS_DEFAULT 60000u
#define DELAY_SHRINK_BACKOFF_MAX 8u
#define DELAY_FALLBACK_BACKOFF_MAX 16u
#define DELAY_MAX_SPILLED 64

struct delay_guard_config {
    uint64_t max_run_delay_ns;
    unsigned percentile;     /* across threads, weighted by wake-ups */
    unsigned hold_ms;        /* above the limit this long before acting */
    unsigned shrink_pct;     /* "well below": under this share of the limit */
    unsigned shrink_hold_ms; /* ... this long, and this long since the last spill */
    unsigned min_wakeups;    /* fewer in the window: no evidence, hold */
    unsigned fallback_retry_ms;
};
void delay_guard_config_defaults(struct delay_guard_config *c);

struct delay_guard {
    unsigned n_spilled;
    int spilled[DELAY_MAX_SPILLED]; /* cores added, oldest first */
    bool fallen_back;
    bool above, below; /* timers running */
    uint64_t above_since_ms, below_since_ms;
    uint64_t last_spill_ms, last_shrink_ms, fallback_ms;
    uint64_t retry_after_ms; /* of this fallback */
    bool spilled_once, shrunk_once;
    unsigned shrink_backoff;   /* multiplier of shrink_hold_ms, 1.. */
    unsigned fallback_backoff; /* multiplier of fallback_retry_ms, 1.. */
    /* for metrics */
    uint64_t spills_total, shrinks_total, fallbacks_total;
};
void delay_guard_init(struct delay_guard *g);
/* The plan was made anew (reload, the packer dropped the restriction for its
 * own reasons): forget spilled cores and timers, keep the totals. */
void delay_guard_reset(struct delay_guard *g);
/* A spilled core left the plan for another reason (offline, no longer busy). */
void delay_guard_forget_core(struct delay_guard *g, int core);

struct delay_guard_input {
    uint64_t now_ms;
    uint64_t delay_ns;     /* delay_weighted_percentile over packed jitter */
    uint64_t wakeups;      /* their wake-ups in the window */
    const int *candidates; /* busy cores not in the plan, best first */
    size_t n_candidates;
};

enum delay_action {
    DELAY_HOLD,     /* nothing to change */
    DELAY_SPILL,    /* add core */
    DELAY_SHRINK,   /* release core; -1: end of a fallback, pack again */
    DELAY_FALLBACK, /* give the plan up: no busy core left */
};

struct delay_decision {
    enum delay_action action;
    int core;
    /* "spilled to core 3: jitter waited 2.4 ms per wake-up" */
    char reason[160];
};

struct delay_decision delay_guard_step(struct delay_guard *g, const struct delay_guard_config *cfg,
                                       const struct delay_guard_input *in);
const char *delay_action_to_string(enum delay_action a);
