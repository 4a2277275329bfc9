/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Classification by observed behaviour: from a thread's schedstat samples
 * (run ns, run-queue wait ns, timeslices), is it light and bursty (jitter),
 * busy all the time (intensive), or neither?
 *
 * Pure: plain structs in, plain structs out, no I/O and no syscalls. The
 * sampler reads /proc/TID/schedstat and calls behaviour_update() with what it
 * read; the classifier uses the verdict below rules and uclamp and above
 * default_class; explain prints behaviour_format().
 *
 * Rules (thresholds in struct behaviour_params):
 *   jitter     util <= jitter_max_util AND mean run per wake-up <=
 *              jitter_max_run AND wake-ups >= jitter_min_wakeups, over a
 *              full window, and no heavy sample within the cool-down;
 *   intensive  util >= intensive_min_util over a full window, or runnable
 *              (running or waiting for a CPU) that share of the time with
 *              runs longer than jitter_max_run: CPU-bound but contended;
 *   none       otherwise (default_class decides).
 * A sample whose own utilisation is above jitter_max_util ("turned heavy")
 * takes a jitter verdict away at once and bars jitter for cooldown_ms.
 * Kernel threads and threads the user pinned are never candidates. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- parameters: [classify] behaviour* keys ---- */

struct behaviour_params {
    bool enabled;                      /* behaviour = yes|no */
    unsigned window_ms;                /* behaviour_window */
    unsigned jitter_max_util_milli;    /* behaviour_jitter_max_util, of one CPU (50 = 5%) */
    unsigned jitter_max_run_us;        /* behaviour_jitter_max_run, mean run per wake-up */
    unsigned jitter_min_wakeups_per_s; /* behaviour_jitter_min_wakeups */
    unsigned intensive_min_util_milli; /* behaviour_intensive_min_util */
    unsigned cooldown_ms;              /* behaviour_cooldown */
};

/* Defaults and bounds, for the config table and the man page. */
#define BEHAVIOUR_WINDOW_MS_DEFAULT 10000u
#define BEHAVIOUR_WINDOW_MS_MIN 1000u
#define BEHAVIOUR_WINDOW_MS_MAX 3600000u
#define BEHAVIOUR_JITTER_MAX_UTIL_MILLI_DEFAULT 50u
#define BEHAVIOUR_JITTER_MAX_RUN_US_DEFAULT 1000u
#define BEHAVIOUR_JITTER_MAX_RUN_US_MIN 1u
#define BEHAVIOUR_JITTER_MAX_RUN_US_MAX 1000000u
/* 1, not 10: a daemon that wakes once a second still wakes an idle core once
 * a second (vmstat 1: 1.1/s; ping -i 0.2: 4.7/s; never found at 10). */
#define BEHAVIOUR_JITTER_MIN_WAKEUPS_DEFAULT 1u
#define BEHAVIOUR_JITTER_MIN_WAKEUPS_MIN 1u
#define BEHAVIOUR_JITTER_MIN_WAKEUPS_MAX 1000000u
#define BEHAVIOUR_INTENSIVE_MIN_UTIL_MILLI_DEFAULT 500u
#define BEHAVIOUR_UTIL_MILLI_MIN 1u /* 0.1%: the finest a percent key takes */
#define BEHAVIOUR_UTIL_MILLI_MAX 1000u
#define BEHAVIOUR_COOLDOWN_MS_DEFAULT 60000u
#define BEHAVIOUR_COOLDOWN_MS_MAX 86400000u

/* Samples closer than this to the previous one are folded into the next:
 * the utilisation of a few milliseconds says nothing about a thread. */
#define BEHAVIOUR_MIN_SAMPLE_MS 50u

void behaviour_params_init(struct behaviour_params *p);
/* NULL if p is valid, else one line that starts with the config key at
 * fault, e.g. "behaviour_window: must be between 1s and 1h": the config
 * parser prefixes it with the file:line where that key was set. */
const char *behaviour_params_check(const struct behaviour_params *p);
/* Name of the key behaviour_params_check() complained about (NULL if
 * valid), for finding its file:line. */
const char *behaviour_params_bad_key(const struct behaviour_params *p);
/* Durations finer than the config's milliseconds, for
 * behaviour_jitter_max_run: "500us", "500µs", "1ms", "0.5ms", "1s"; a bare
 * number is µs. 0 or -EINVAL/-ERANGE. */
int behaviour_parse_duration_us(const char *s, unsigned *ret);

/* ---- per-thread state ---- */

enum behaviour_verdict {
    BEHAVIOUR_NONE = 0, /* default_class decides */
    BEHAVIOUR_JITTER,
    BEHAVIOUR_INTENSIVE,
};
const char *behaviour_verdict_to_string(enum behaviour_verdict v);

/* What the verdict rests on, for explain and metrics. */
enum behaviour_why {
    BEHAVIOUR_WHY_DISABLED = 0, /* behaviour = no */
    BEHAVIOUR_WHY_NOT_OBSERVED, /* seen once, or less than a full window */
    BEHAVIOUR_WHY_RESET,        /* a counter went backwards: TID reuse; window restarted */
    BEHAVIOUR_WHY_KERNEL_THREAD,
    BEHAVIOUR_WHY_USER_PINNED,
    BEHAVIOUR_WHY_INTENSIVE,   /* util (or runnable share, with long runs) >= intensive_min_util */
    BEHAVIOUR_WHY_JITTER,      /* light and bursty */
    BEHAVIOUR_WHY_COOLDOWN,    /* would be jitter, but turned heavy recently */
    BEHAVIOUR_WHY_BUSY,        /* util above jitter_max_util (and below intensive) */
    BEHAVIOUR_WHY_LONG_RUNS,   /* mean run per wake-up above jitter_max_run */
    BEHAVIOUR_WHY_FEW_WAKEUPS, /* wake-ups below jitter_min_wakeups */
    BEHAVIOUR_WHY_HELD,        /* light and bursty, but held back by its caller (a request path) */
};

/* Kept for every tracked thread: 56 bytes on 64-bit (asserted below).
 *
 * The window is a set of exponentially decayed sums, not a ring of deltas:
 * a ring holding ten 1 s slots of (run, wait, slices) would take 120 bytes
 * or more, and would need the samples to fall on slot boundaries, while the
 * sampler skips threads that did not run and so delivers deltas over
 * irregular intervals. Each delta is treated as spread evenly over its
 * interval and weighted by exp(-age/tau), tau = window/2 (mean age of the
 * weights: that of a flat window of window_ms), so an interval of any
 * length costs the same few operations and the figures are true weighted
 * averages whatever the spacing of the samples. Floats suffice: the figures
 * are compared with thresholds, not summed over days. */
struct behaviour_state {
    uint64_t run_ns; /* counters at the last sample */
    uint64_t wait_ns;
    uint64_t slices;
    float run_ms; /* decayed sums since the window started */
    float wait_ms;
    float wakeups;
    float span_ms;              /* decayed time: the denominator of every rate */
    uint32_t last_ms;           /* time of the last sample (monotonic ms, wraps) */
    uint32_t observed_ms;       /* time covered since the window started, saturates at UINT32_MAX */
    uint32_t cooldown_until_ms; /* no jitter before this (valid with BEHAVIOUR_F_COOLING) */
    uint8_t verdict;            /* enum behaviour_verdict, the last one returned */
    uint8_t flags;              /* BEHAVIOUR_F_* */
};
#define BEHAVIOUR_F_SEEN 0x01u    /* a baseline sample was taken */
#define BEHAVIOUR_F_COOLING 0x02u /* cooldown_until_ms is set */
#if defined(__x86_64__) || defined(__aarch64__) || defined(__powerpc64__)
_Static_assert(sizeof(struct behaviour_state) <= 64,
               "struct behaviour_state is kept per thread: keep it within 64 bytes");
#endif

/* One reading of /proc/TID/schedstat and what the caller knows of the thread. */
struct behaviour_sample {
    uint32_t now_ms;    /* monotonic ms (may wrap) */
    uint64_t run_ns;    /* schedstat field 1: time on CPU */
    uint64_t wait_ns;   /* field 2: time waiting on a run queue */
    uint64_t slices;    /* field 3: timeslices run, i.e. times it got a CPU */
    bool kernel_thread; /* PF_KTHREAD: never a candidate */
    bool user_pinned;   /* its own (original) mask is narrower than the online CPUs */
};

struct behaviour_result {
    enum behaviour_verdict verdict;
    enum behaviour_why why;
    bool changed;  /* verdict differs from the previous call's */
    bool released; /* was jitter, turned heavy in this sample: give its mask back */
    bool heavy;    /* this sample's util was above jitter_max_util */
    /* The figures behind the verdict (weighted over the window). */
    double util_pct; /* of one CPU */
    double wakeups_per_s;
    double run_per_wakeup_us;
    double wait_per_wakeup_us; /* run-queue wait: what confinement costs it */
    double runnable_pct;       /* (run + run-queue wait) / time: what it would use alone */
    double last_util_pct;      /* over this sample alone */
    uint32_t observed_ms;      /* how long it has been watched (up to the window: the span the figures cover) */
    uint32_t window_ms;
    uint32_t cooldown_left_ms; /* 0 unless cooling down */
};

/* A fresh thread (or one to forget): zeroed state. */
void behaviour_state_init(struct behaviour_state *s);
/* Feed one sample; *ret says what the thread is now. The first sample of a
 * thread only sets the baseline. A counter that went backwards (the TID was
 * reused, or the counters wrapped) restarts the window. Samples closer than
 * BEHAVIOUR_MIN_SAMPLE_MS to the last are folded into the next one (the
 * verdict stays, but for kernel_thread/user_pinned, which apply at once). */
void behaviour_update(const struct behaviour_params *p, struct behaviour_state *s, const struct behaviour_sample *in,
                      struct behaviour_result *ret);
/* The verdict the state holds, without a sample (for a thread that was not
 * sampled this tick). */
enum behaviour_verdict behaviour_current(const struct behaviour_state *s);

/* One line for explain:
 *   "behaviour: 1.2% util, 333 wake-ups/s, 36 µs per run over 10 s → jitter"
 *   "behaviour: observed 3.2 s of 10 s, no verdict yet"
 * Returns the length (truncated to size-1, as snprintf). */
int behaviour_format(const struct behaviour_params *p, const struct behaviour_result *r, char *buf, size_t size);
