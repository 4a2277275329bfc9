/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "behaviour.h"

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h> /* snprintf only */
#include <string.h>

/* The sums are floats: a figure within this share of a limit counts as at
 * the limit, so that "at most 5%" holds for a thread at exactly 5% whatever
 * the rounding of the weighted sums. */
#define LIMIT_SLACK 1e-5

void behaviour_params_init(struct behaviour_params *p)
{
    *p = (struct behaviour_params){
        .enabled = true,
        .window_ms = BEHAVIOUR_WINDOW_MS_DEFAULT,
        .jitter_max_util_milli = BEHAVIOUR_JITTER_MAX_UTIL_MILLI_DEFAULT,
        .jitter_max_run_us = BEHAVIOUR_JITTER_MAX_RUN_US_DEFAULT,
        .jitter_min_wakeups_per_s = BEHAVIOUR_JITTER_MIN_WAKEUPS_DEFAULT,
        .intensive_min_util_milli = BEHAVIOUR_INTENSIVE_MIN_UTIL_MILLI_DEFAULT,
        .cooldown_ms = BEHAVIOUR_COOLDOWN_MS_DEFAULT,
    };
}

struct check {
    const char *key;
    const char *message;
};

static struct check params_check(const struct behaviour_params *p)
{
    if (p->window_ms < BEHAVIOUR_WINDOW_MS_MIN || p->window_ms > BEHAVIOUR_WINDOW_MS_MAX)
        return (struct check){"behaviour_window", "behaviour_window: must be between 1s and 1h"};
    if (p->jitter_max_util_milli < BEHAVIOUR_UTIL_MILLI_MIN || p->jitter_max_util_milli > BEHAVIOUR_UTIL_MILLI_MAX)
        return (struct check){"behaviour_jitter_max_util", "behaviour_jitter_max_util: must be between 0.1% and 100%"};
    if (p->jitter_max_run_us < BEHAVIOUR_JITTER_MAX_RUN_US_MIN ||
        p->jitter_max_run_us > BEHAVIOUR_JITTER_MAX_RUN_US_MAX)
        return (struct check){"behaviour_jitter_max_run", "behaviour_jitter_max_run: must be between 1us and 1s"};
    if (p->jitter_min_wakeups_per_s < BEHAVIOUR_JITTER_MIN_WAKEUPS_MIN ||
        p->jitter_min_wakeups_per_s > BEHAVIOUR_JITTER_MIN_WAKEUPS_MAX)
        /* 0 would make every sleeping thread on the machine jitter. */
        return (struct check){"behaviour_jitter_min_wakeups",
                              "behaviour_jitter_min_wakeups: must be between 1 and 1000000 per second"};
    if (p->intensive_min_util_milli < BEHAVIOUR_UTIL_MILLI_MIN ||
        p->intensive_min_util_milli > BEHAVIOUR_UTIL_MILLI_MAX)
        return (struct check){"behaviour_intensive_min_util",
                              "behaviour_intensive_min_util: must be between 0.1% and 100%"};
    /* A thread must never be able to be both: the intensive limit lies above
     * the jitter one. */
    if (p->intensive_min_util_milli <= p->jitter_max_util_milli)
        return (struct check){"behaviour_intensive_min_util",
                              "behaviour_intensive_min_util: must be above behaviour_jitter_max_util"};
    if (p->cooldown_ms > BEHAVIOUR_COOLDOWN_MS_MAX)
        return (struct check){"behaviour_cooldown", "behaviour_cooldown: must be between 0 and 1d"};
    return (struct check){NULL, NULL};
}

const char *behaviour_params_check(const struct behaviour_params *p) { return params_check(p).message; }

const char *behaviour_params_bad_key(const struct behaviour_params *p) { return params_check(p).key; }

int behaviour_parse_duration_us(const char *s, unsigned *ret)
{
    /* digits, an optional fraction, a unit */
    const char *q = s;
    uint64_t whole = 0, frac = 0, frac_div = 1;
    if (!(*q >= '0' && *q <= '9'))
        return -EINVAL;
    for (; *q >= '0' && *q <= '9'; q++) {
        whole = whole * 10 + (uint64_t)(*q - '0');
        if (whole > UINT_MAX)
            return -ERANGE;
    }
    if (*q == '.') {
        q++;
        if (!(*q >= '0' && *q <= '9'))
            return -EINVAL;
        for (; *q >= '0' && *q <= '9'; q++) {
            if (frac_div >= 1000000)
                return -EINVAL; /* finer than a microsecond in any unit */
            frac = frac * 10 + (uint64_t)(*q - '0');
            frac_div *= 10;
        }
    }
    uint64_t mult;
    if (*q == '\0' || strcmp(q, "us") == 0 || strcmp(q, "µs") == 0)
        mult = 1;
    else if (strcmp(q, "ms") == 0)
        mult = 1000;
    else if (strcmp(q, "s") == 0)
        mult = 1000000;
    else
        return -EINVAL;
    if (frac_div > 1 && (frac * mult) % frac_div != 0)
        return -EINVAL; /* "0.5us": below the unit the value is kept in */
    uint64_t v = whole * mult + frac * mult / frac_div;
    if (v > UINT_MAX)
        return -ERANGE;
    *ret = (unsigned)v;
    return 0;
}

const char *behaviour_verdict_to_string(enum behaviour_verdict v)
{
    switch (v) {
    case BEHAVIOUR_NONE:
        return "none";
    case BEHAVIOUR_JITTER:
        return "jitter";
    case BEHAVIOUR_INTENSIVE:
        return "intensive";
    }
    return "?";
}

void behaviour_state_init(struct behaviour_state *s) { *s = (struct behaviour_state){0}; }

enum behaviour_verdict behaviour_current(const struct behaviour_state *s) { return (enum behaviour_verdict)s->verdict; }

/* Start the window over from this sample. The cool-down survives: after a
 * reset the caller cannot tell a reused TID from its own thread's wrap, and
 * keeping the bar only delays a jitter verdict. */
static void restart(struct behaviour_state *s, const struct behaviour_sample *in)
{
    uint32_t until = s->cooldown_until_ms;
    uint8_t cooling = s->flags & BEHAVIOUR_F_COOLING;
    *s = (struct behaviour_state){
        .run_ns = in->run_ns,
        .wait_ns = in->wait_ns,
        .slices = in->slices,
        .last_ms = in->now_ms,
        .cooldown_until_ms = until,
        .flags = (uint8_t)(BEHAVIOUR_F_SEEN | cooling),
        .verdict = BEHAVIOUR_NONE,
    };
}

static uint32_t cooldown_left(const struct behaviour_state *s, uint32_t now_ms)
{
    if (!(s->flags & BEHAVIOUR_F_COOLING))
        return 0;
    int32_t left = (int32_t)(s->cooldown_until_ms - now_ms);
    return left > 0 ? (uint32_t)left : 0;
}

static void figures(const struct behaviour_params *p, const struct behaviour_state *s, uint32_t now_ms,
                    struct behaviour_result *r)
{
    r->window_ms = p->window_ms;
    r->observed_ms = s->observed_ms < p->window_ms ? s->observed_ms : p->window_ms;
    r->cooldown_left_ms = cooldown_left(s, now_ms);
    if (s->span_ms > 0) {
        r->util_pct = 100.0 * s->run_ms / s->span_ms;
        r->wakeups_per_s = 1000.0 * s->wakeups / s->span_ms;
        r->runnable_pct = 100.0 * (s->run_ms + s->wait_ms) / s->span_ms;
    }
    if (s->wakeups > 0) {
        r->run_per_wakeup_us = 1000.0 * s->run_ms / s->wakeups;
        r->wait_per_wakeup_us = 1000.0 * s->wait_ms / s->wakeups;
    }
}

static bool at_most(double v, double limit) { return v <= limit * (1 + LIMIT_SLACK); }
static bool at_least(double v, double limit) { return v >= limit * (1 - LIMIT_SLACK); }

static void decide(const struct behaviour_params *p, const struct behaviour_sample *in, const struct behaviour_state *s,
                   struct behaviour_result *r)
{
    r->verdict = BEHAVIOUR_NONE;
    if (!p->enabled)
        r->why = BEHAVIOUR_WHY_DISABLED;
    else if (in->kernel_thread)
        r->why = BEHAVIOUR_WHY_KERNEL_THREAD;
    else if (in->user_pinned)
        r->why = BEHAVIOUR_WHY_USER_PINNED;
    else if (s->observed_ms < p->window_ms)
        r->why = BEHAVIOUR_WHY_NOT_OBSERVED;
    else if (at_least(r->util_pct, p->intensive_min_util_milli / 10.0) ||
             (at_least(r->runnable_pct, p->intensive_min_util_milli / 10.0) &&
              !at_most(r->run_per_wakeup_us, p->jitter_max_run_us))) {
        /* On a contended CPU a thread that never sleeps gets only its share
         * (stress-ng --cpu 1 ran 13-50% of the time on this 2-CPU VM with 8
         * runnable threads) but is runnable all the time. Runnable time
         * alone is no proof: light threads wait behind hogs (cyclictest at
         * 5 ms was runnable up to 78% of a sample there); their runs per
         * wake-up stay short (36 us against stress-ng's 2.2 ms). */
        r->verdict = BEHAVIOUR_INTENSIVE;
        r->why = BEHAVIOUR_WHY_INTENSIVE;
    } else if (!at_most(r->util_pct, p->jitter_max_util_milli / 10.0))
        r->why = BEHAVIOUR_WHY_BUSY;
    else if (!at_most(r->run_per_wakeup_us, p->jitter_max_run_us))
        r->why = BEHAVIOUR_WHY_LONG_RUNS;
    else if (!at_least(r->wakeups_per_s, p->jitter_min_wakeups_per_s))
        r->why = BEHAVIOUR_WHY_FEW_WAKEUPS;
    else if (r->cooldown_left_ms > 0)
        r->why = BEHAVIOUR_WHY_COOLDOWN;
    else {
        r->verdict = BEHAVIOUR_JITTER;
        r->why = BEHAVIOUR_WHY_JITTER;
    }
}

/* The figures of the window and the verdict on them. */
static void judge(const struct behaviour_params *p, const struct behaviour_sample *in, const struct behaviour_state *s,
                  struct behaviour_result *r)
{
    figures(p, s, in->now_ms, r);
    decide(p, in, s, r);
}

/* Adds one sample, dt_ms after the last, to the decayed sums and makes it
 * the new baseline. Each delta is spread evenly over its interval: its
 * weight in the decayed sums is the integral of exp(-age/tau) over the
 * interval, tau (1 - k) with k = exp(-dt/tau), shared out per ms of the
 * interval. */
static void accumulate(const struct behaviour_params *p, struct behaviour_state *s, const struct behaviour_sample *in,
                       uint32_t dt_ms)
{
    assert(dt_ms > 0);
    uint64_t d_run = in->run_ns - s->run_ns;
    uint64_t d_wait = in->wait_ns - s->wait_ns;
    uint64_t d_slices = in->slices - s->slices;
    double tau = p->window_ms / 2.0;
    double k = exp(-(double)dt_ms / tau);
    double g = tau * (1.0 - k) / (double)dt_ms;
    s->run_ms = (float)(s->run_ms * k + (double)d_run / 1e6 * g);
    s->wait_ms = (float)(s->wait_ms * k + (double)d_wait / 1e6 * g);
    s->wakeups = (float)(s->wakeups * k + (double)d_slices * g);
    s->span_ms = (float)(s->span_ms * k + tau * (1.0 - k));
    s->observed_ms = s->observed_ms > UINT32_MAX - dt_ms ? UINT32_MAX : s->observed_ms + dt_ms;
    s->run_ns = in->run_ns;
    s->wait_ns = in->wait_ns;
    s->slices = in->slices;
    s->last_ms = in->now_ms;
}

/* Turned heavy: this sample alone (d_run over dt_ms) is above the jitter
 * limit. Checked on the sample, not the window, so that a confined thread
 * that starts to compute is released at the next tick instead of after the
 * window. Starts or ends the cool-down. */
static void note_heavy(const struct behaviour_params *p, struct behaviour_state *s, uint32_t now_ms, uint64_t d_run,
                       uint32_t dt_ms, struct behaviour_result *r)
{
    r->last_util_pct = 100.0 * ((double)d_run / 1e6) / (double)dt_ms;
    if (!at_most(r->last_util_pct, p->jitter_max_util_milli / 10.0)) {
        r->heavy = true;
        s->cooldown_until_ms = now_ms + p->cooldown_ms;
        s->flags |= BEHAVIOUR_F_COOLING;
    } else if ((s->flags & BEHAVIOUR_F_COOLING) && cooldown_left(s, now_ms) == 0)
        s->flags &= (uint8_t)~BEHAVIOUR_F_COOLING;
    if (p->cooldown_ms == 0)
        s->flags &= (uint8_t)~BEHAVIOUR_F_COOLING; /* no bar; the heavy sample itself still is not jitter */
}

/* A sample too soon after the last: folded into the next one, the baseline
 * and the sums stay. A fold may take a verdict away (kernel thread, pinned,
 * behaviour off) but never grants jitter: only a real sample does. */
static void judge_fold(const struct behaviour_params *p, const struct behaviour_sample *in,
                       const struct behaviour_state *s, enum behaviour_verdict prev, struct behaviour_result *r)
{
    judge(p, in, s, r);
    if (r->verdict == BEHAVIOUR_JITTER && prev != BEHAVIOUR_JITTER) {
        r->verdict = prev;
        r->why = prev == BEHAVIOUR_INTENSIVE ? BEHAVIOUR_WHY_INTENSIVE : BEHAVIOUR_WHY_COOLDOWN;
    }
}

void behaviour_update(const struct behaviour_params *p, struct behaviour_state *s, const struct behaviour_sample *in,
                      struct behaviour_result *ret)
{
    struct behaviour_result r = {0};
    enum behaviour_verdict prev = (enum behaviour_verdict)s->verdict;
    uint32_t dt_ms = in->now_ms - s->last_ms; /* wraps with the clock */

    if (!(s->flags & BEHAVIOUR_F_SEEN)) {
        /* Seen once: a baseline, nothing to judge yet. */
        restart(s, in);
        s->flags &= (uint8_t)~BEHAVIOUR_F_COOLING;
        judge(p, in, s, &r);
    } else if (in->run_ns < s->run_ns || in->wait_ns < s->wait_ns || in->slices < s->slices || (int32_t)dt_ms < 0) {
        /* Counters never go back for one thread: another thread took the
         * TID (its exit event was lost), or the counters wrapped. */
        restart(s, in);
        judge(p, in, s, &r);
        if (r.why == BEHAVIOUR_WHY_NOT_OBSERVED)
            r.why = BEHAVIOUR_WHY_RESET;
    } else if (dt_ms < BEHAVIOUR_MIN_SAMPLE_MS) {
        judge_fold(p, in, s, prev, &r);
    } else {
        uint64_t d_run = in->run_ns - s->run_ns;
        accumulate(p, s, in, dt_ms);
        note_heavy(p, s, in->now_ms, d_run, dt_ms, &r);
        judge(p, in, s, &r);
        if (r.heavy && r.verdict == BEHAVIOUR_JITTER) {
            /* With no cool-down a heavy sample may leave the window light:
             * the sample itself still says "not now". */
            r.verdict = BEHAVIOUR_NONE;
            r.why = BEHAVIOUR_WHY_COOLDOWN;
        }
        r.released = prev == BEHAVIOUR_JITTER && r.verdict != BEHAVIOUR_JITTER && r.heavy;
    }
    r.changed = r.verdict != prev;
    s->verdict = (uint8_t)r.verdict;
    *ret = r;
}

/* "10 s", "2.5 s", "250 ms" */
static void format_span(char *buf, size_t size, uint32_t ms)
{
    if (ms < 1000)
        snprintf(buf, size, "%u ms", ms);
    else if (ms % 1000 == 0)
        snprintf(buf, size, "%u s", ms / 1000);
    else
        snprintf(buf, size, "%.1f s", ms / 1000.0);
}

/* Figures as people read them: "1.2%", "0.35%", "333", "3.3", "36 µs", "1.2 ms". */
static void format_pct(char *buf, size_t size, double v)
{
    snprintf(buf, size, v >= 10 ? "%.0f%%" : v >= 1 ? "%.1f%%" : "%.2f%%", v);
}

static void format_rate(char *buf, size_t size, double v) { snprintf(buf, size, v >= 10 ? "%.0f" : "%.1f", v); }

static void format_us(char *buf, size_t size, double us)
{
    if (us >= 1000)
        snprintf(buf, size, "%.1f ms", us / 1000);
    else
        snprintf(buf, size, "%.0f µs", us);
}

int behaviour_format(const struct behaviour_params *p, const struct behaviour_result *r, char *buf, size_t size)
{
    char span[32], win[32], util[32], rate[32], run[32], lim[128];
    format_span(span, sizeof span, r->observed_ms);
    format_span(win, sizeof win, r->window_ms);
    switch (r->why) {
    case BEHAVIOUR_WHY_DISABLED:
        return snprintf(buf, size, "behaviour: off (behaviour = no)");
    case BEHAVIOUR_WHY_KERNEL_THREAD:
        return snprintf(buf, size, "behaviour: kernel thread, never a candidate");
    case BEHAVIOUR_WHY_USER_PINNED:
        return snprintf(buf, size, "behaviour: pinned by its user, never a candidate");
    case BEHAVIOUR_WHY_NOT_OBSERVED:
        return snprintf(buf, size, "behaviour: observed %s of %s, no verdict yet", span, win);
    case BEHAVIOUR_WHY_RESET:
        return snprintf(buf, size, "behaviour: counters went backwards (a new thread under this TID), observing again");
    default:
        break;
    }
    format_pct(util, sizeof util, r->util_pct);
    format_rate(rate, sizeof rate, r->wakeups_per_s);
    format_us(run, sizeof run, r->run_per_wakeup_us);
    int n = snprintf(buf, size, "behaviour: %s util, %s wake-ups/s, %s per run over %s → %s", util, rate, run, span,
                     behaviour_verdict_to_string(r->verdict));
    if (n < 0 || (size_t)n >= size)
        return n;
    char a[32];
    switch (r->why) {
    case BEHAVIOUR_WHY_INTENSIVE:
        lim[0] = '\0';
        if (r->util_pct < p->intensive_min_util_milli / 10.0) {
            format_pct(a, sizeof a, r->runnable_pct);
            snprintf(lim, sizeof lim, " (runnable %s of the time: CPU-bound, sharing a CPU)", a);
        }
        break;
    case BEHAVIOUR_WHY_BUSY:
        format_pct(a, sizeof a, p->jitter_max_util_milli / 10.0);
        snprintf(lim, sizeof lim, " (util above %s)", a);
        break;
    case BEHAVIOUR_WHY_LONG_RUNS:
        format_us(a, sizeof a, p->jitter_max_run_us);
        snprintf(lim, sizeof lim, " (runs longer than %s)", a);
        break;
    case BEHAVIOUR_WHY_FEW_WAKEUPS:
        snprintf(lim, sizeof lim, " (fewer than %u wake-ups/s)", p->jitter_min_wakeups_per_s);
        break;
    case BEHAVIOUR_WHY_HELD:
        snprintf(lim, sizeof lim, " (light and frequent, but held back: see the request path)");
        break;
    case BEHAVIOUR_WHY_COOLDOWN:
        format_span(a, sizeof a, r->cooldown_left_ms);
        snprintf(lim, sizeof lim,
                 r->cooldown_left_ms ? " (turned heavy: no jitter for %s more)" : " (turned heavy in the last sample)",
                 a);
        break;
    default:
        lim[0] = '\0';
    }
    return n + snprintf(buf + n, size - (size_t)n, "%s", lim);
}
