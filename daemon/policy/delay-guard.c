/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "delay-guard.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int delay_parse_schedstat(const char *text, struct delay_schedstat *ret)
{
    unsigned long long run, wait, slices;
    int used = -1;
    if (sscanf(text, "%llu %llu %llu%n", &run, &wait, &slices, &used) != 3 || used < 0)
        return -EINVAL;
    if (text[used] != '\0' && text[used] != '\n')
        return -EINVAL;
    *ret = (struct delay_schedstat){.run_ns = run, .wait_ns = wait, .timeslices = slices};
    return 0;
}

uint64_t delay_thread_sample(struct delay_thread *t, const struct delay_schedstat *now, uint64_t *delta_mean_ns)
{
    *delta_mean_ns = 0;
    bool backwards = t->have_last && (now->wait_ns < t->last.wait_ns || now->timeslices < t->last.timeslices ||
                                      now->run_ns < t->last.run_ns);
    if (!t->have_last || backwards) {
        *t = (struct delay_thread){.last = *now, .have_last = true};
        return 0;
    }
    uint64_t wait = now->wait_ns - t->last.wait_ns, wakeups = now->timeslices - t->last.timeslices;
    t->last = *now;
    /* A thread that did not run has no wake-ups to judge; its wait (if it is
     * still queued) shows in the sample where it finally runs. */
    t->wait_ns[t->head] = wakeups ? wait : 0;
    t->wakeups[t->head] = wakeups;
    t->head = (t->head + 1) % DELAY_WINDOW;
    if (t->n < DELAY_WINDOW)
        t->n++;
    if (wakeups)
        *delta_mean_ns = wait / wakeups;
    return wakeups;
}

uint64_t delay_thread_mean_ns(const struct delay_thread *t, uint64_t *wakeups)
{
    uint64_t wait = 0, n = 0;
    for (unsigned i = 0; i < t->n; i++) {
        wait += t->wait_ns[i];
        n += t->wakeups[i];
    }
    *wakeups = n;
    return n ? wait / n : 0;
}

static int cmp_point(const void *a, const void *b)
{
    uint64_t x = ((const struct delay_point *)a)->delay_ns, y = ((const struct delay_point *)b)->delay_ns;
    return (x > y) - (x < y);
}

uint64_t delay_weighted_percentile(struct delay_point *pts, size_t n, unsigned pct)
{
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += pts[i].weight;
    if (total == 0)
        return 0;
    if (pct > 100)
        pct = 100;
    qsort(pts, n, sizeof *pts, cmp_point);
    /* the first point whose cumulative weight reaches pct% of the total
     * (compared as cum*100 >= pct*total, no rounding) */
    uint64_t cum = 0;
    for (size_t i = 0; i < n; i++) {
        cum += pts[i].weight;
        if (pts[i].weight && cum * 100 >= (uint64_t)pct * total)
            return pts[i].delay_ns;
    }
    return pts[n - 1].delay_ns;
}

static int cmp_group(const void *a, const void *b)
{
    uint32_t x = ((const struct delay_point *)a)->group, y = ((const struct delay_point *)b)->group;
    return x < y ? -1 : x > y;
}

uint64_t delay_percentile_by_group(struct delay_point *pts, size_t n, unsigned pct)
{
    uint64_t worst = 0;
    if (n == 0)
        return 0;
    qsort(pts, n, sizeof *pts, cmp_group);
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && pts[j].group == pts[i].group; j++)
            ;
        uint64_t d = delay_weighted_percentile(pts + i, j - i, pct);
        if (d > worst)
            worst = d;
    }
    return worst;
}

void delay_guard_config_defaults(struct delay_guard_config *c)
{
    *c = (struct delay_guard_config){
        .max_run_delay_ns = DELAY_MAX_RUN_DELAY_NS_DEFAULT,
        .percentile = DELAY_PERCENTILE_DEFAULT,
        .hold_ms = DELAY_HOLD_MS_DEFAULT,
        .shrink_pct = DELAY_SHRINK_PCT_DEFAULT,
        .shrink_hold_ms = DELAY_SHRINK_HOLD_MS_DEFAULT,
        .min_wakeups = DELAY_MIN_WAKEUPS_DEFAULT,
        .fallback_retry_ms = DELAY_FALLBACK_RETRY_MS_DEFAULT,
    };
}

void delay_guard_init(struct delay_guard *g) { *g = (struct delay_guard){.shrink_backoff = 1, .fallback_backoff = 1}; }

void delay_guard_reset(struct delay_guard *g)
{
    struct delay_guard keep = *g;
    delay_guard_init(g);
    g->spills_total = keep.spills_total;
    g->shrinks_total = keep.shrinks_total;
    g->fallbacks_total = keep.fallbacks_total;
    g->shrink_backoff = keep.shrink_backoff;
    g->fallback_backoff = keep.fallback_backoff;
}

void delay_guard_forget_core(struct delay_guard *g, int core)
{
    for (unsigned i = 0; i < g->n_spilled; i++)
        if (g->spilled[i] == core) {
            memmove(&g->spilled[i], &g->spilled[i + 1], (g->n_spilled - i - 1) * sizeof g->spilled[0]);
            g->n_spilled--;
            return;
        }
}

const char *delay_action_to_string(enum delay_action a)
{
    switch (a) {
    case DELAY_HOLD:
        return "hold";
    case DELAY_SPILL:
        return "spill";
    case DELAY_SHRINK:
        return "shrink";
    case DELAY_FALLBACK:
        return "fallback";
    }
    return "?";
}

/* "2.4 ms", "0.35 ms", "12 ms" */
static const char *fmt_ms(char *buf, size_t size, uint64_t ns)
{
    double ms = (double)ns / 1e6;
    snprintf(buf, size, ms >= 10 ? "%.0f ms" : ms >= 1 ? "%.1f ms" : "%.2f ms", ms);
    return buf;
}

static struct delay_decision decide(enum delay_action a, int core, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static struct delay_decision decide(enum delay_action a, int core, const char *fmt, ...)
{
    struct delay_decision d = {.action = a, .core = core};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d.reason, sizeof d.reason, fmt, ap);
    va_end(ap);
    return d;
}

static uint64_t since(uint64_t now, uint64_t then) { return now >= then ? now - then : 0; }

/* Jitter is not packed now: its delay says nothing about the plan. Holds
 * until the retry time, then packs again. */
static struct delay_decision step_fallen_back(struct delay_guard *g, const struct delay_guard_input *in)
{
    uint64_t retry_ms = g->retry_after_ms;
    uint64_t waited = since(in->now_ms, g->fallback_ms);
    if (waited < retry_ms)
        return decide(DELAY_HOLD, -1, "fallen back: packing again in %" PRIu64 " s", (retry_ms - waited + 999) / 1000);
    g->fallen_back = false;
    g->above = g->below = false;
    g->last_shrink_ms = in->now_ms;
    g->shrunk_once = true;
    g->shrinks_total++;
    return decide(DELAY_SHRINK, -1, "packing again after %" PRIu64 " s of fallback", waited / 1000);
}

/* A spill this soon after a shrink: the shrink was wrong, wait longer
 * before the next one. A shrink that held long: the workload changed,
 * start over. */
static void adjust_shrink_backoff(struct delay_guard *g, const struct delay_guard_config *cfg, uint64_t now_ms)
{
    uint64_t shrink_hold = (uint64_t)cfg->shrink_hold_ms * g->shrink_backoff;
    if (g->shrunk_once && since(now_ms, g->last_shrink_ms) < 2 * shrink_hold) {
        if (g->shrink_backoff < DELAY_SHRINK_BACKOFF_MAX)
            g->shrink_backoff *= 2;
    } else if (g->shrunk_once && since(now_ms, g->last_shrink_ms) >= 10ull * cfg->shrink_hold_ms)
        g->shrink_backoff = 1;
}

/* The delay stayed above the limit for the hold time: spill to the next
 * candidate core, or, with none left, fall back to not packing. */
static struct delay_decision spill_or_fall_back(struct delay_guard *g, const struct delay_guard_config *cfg,
                                                const struct delay_guard_input *in, const char *d)
{
    assert(g->n_spilled <= DELAY_MAX_SPILLED);
    if (in->n_candidates > 0 && g->n_spilled < DELAY_MAX_SPILLED) {
        int core = in->candidates[0];
        g->spilled[g->n_spilled++] = core;
        g->last_spill_ms = in->now_ms;
        g->spilled_once = true;
        g->spills_total++;
        return decide(DELAY_SPILL, core, "spilled to core %d: jitter waited %s per wake-up", core, d);
    }
    g->fallen_back = true;
    g->fallback_ms = in->now_ms;
    g->fallbacks_total++;
    /* packed again and held for long: this fallback is news, not a repeat */
    if (g->shrunk_once && since(in->now_ms, g->last_shrink_ms) >= 10ull * cfg->fallback_retry_ms)
        g->fallback_backoff = 1;
    g->retry_after_ms = (uint64_t)cfg->fallback_retry_ms * g->fallback_backoff;
    /* each fallback in a row waits twice as long before packing again */
    if (g->fallback_backoff < DELAY_FALLBACK_BACKOFF_MAX)
        g->fallback_backoff *= 2;
    g->n_spilled = 0;
    return decide(DELAY_FALLBACK, -1,
                  "fell back: jitter waited %s per wake-up and no busy core is left (retry in %" PRIu64 " s)", d,
                  g->retry_after_ms / 1000);
}

/* The delay is above the limit: hold for a while, then act. */
static struct delay_decision step_above(struct delay_guard *g, const struct delay_guard_config *cfg,
                                        const struct delay_guard_input *in, const char *d, const char *lim)
{
    g->below = false;
    if (!g->above) {
        g->above = true;
        g->above_since_ms = in->now_ms;
    }
    uint64_t held = since(in->now_ms, g->above_since_ms);
    if (held < cfg->hold_ms)
        return decide(DELAY_HOLD, -1, "holding: jitter waited %s per wake-up, above %s for %" PRIu64 " ms", d, lim,
                      held);
    g->above = false;
    adjust_shrink_backoff(g, cfg, in->now_ms);
    return spill_or_fall_back(g, cfg, in, d);
}

/* The delay is within the limit: release the last spilled core once the
 * delay has stayed well below it (and no spill happened) for the shrink
 * hold. */
static struct delay_decision step_within(struct delay_guard *g, const struct delay_guard_config *cfg,
                                         const struct delay_guard_input *in, const char *d, const char *lim)
{
    g->above = false;
    uint64_t shrink_below = cfg->max_run_delay_ns * cfg->shrink_pct / 100;
    if (g->n_spilled == 0 || in->delay_ns >= shrink_below) {
        g->below = false;
        return decide(DELAY_HOLD, -1, "jitter waited %s per wake-up, within %s", d, lim);
    }
    if (!g->below) {
        g->below = true;
        g->below_since_ms = in->now_ms;
    }
    uint64_t shrink_hold = (uint64_t)cfg->shrink_hold_ms * g->shrink_backoff;
    if (since(in->now_ms, g->below_since_ms) < shrink_hold ||
        (g->spilled_once && since(in->now_ms, g->last_spill_ms) < shrink_hold))
        return decide(DELAY_HOLD, -1, "jitter waited %s per wake-up; may release core %d after %" PRIu64 " s below", d,
                      g->spilled[g->n_spilled - 1], shrink_hold / 1000);
    int core = g->spilled[--g->n_spilled];
    g->below = false;
    g->last_shrink_ms = in->now_ms;
    g->shrunk_once = true;
    g->shrinks_total++;
    return decide(DELAY_SHRINK, core, "released core %d: jitter waited %s per wake-up", core, d);
}

struct delay_decision delay_guard_step(struct delay_guard *g, const struct delay_guard_config *cfg,
                                       const struct delay_guard_input *in)
{
    char d[32], lim[32];
    fmt_ms(d, sizeof d, in->delay_ns);
    fmt_ms(lim, sizeof lim, cfg->max_run_delay_ns);

    if (g->fallen_back)
        return step_fallen_back(g, in);
    if (in->wakeups < cfg->min_wakeups) {
        g->above = g->below = false;
        return decide(DELAY_HOLD, -1, "too few jitter wake-ups to judge (%" PRIu64 ")", in->wakeups);
    }
    if (in->delay_ns > cfg->max_run_delay_ns)
        return step_above(g, cfg, in, d, lim);
    return step_within(g, cfg, in, d, lim);
}
