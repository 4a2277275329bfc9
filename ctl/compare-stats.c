/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "compare-stats.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

const char *cmp_mode_name(enum cmp_mode m) { return m == CMP_PAUSED ? "paused" : m == CMP_PACKED ? "packed" : "?"; }

int cmp_schedule(uint64_t duration_ms, uint64_t block_ms, struct cmp_block *out, size_t max)
{
    if (block_ms == 0)
        return -EINVAL;
    uint64_t n = duration_ms / block_ms;
    n -= n % 2;
    if (n < 4)
        return -EINVAL;
    if (n > max)
        return -E2BIG;
    out[0] = (struct cmp_block){CMP_PAUSED, true};
    out[1] = (struct cmp_block){CMP_PACKED, true};
    for (uint64_t pair = 0; 2 + 2 * pair < n; pair++) {
        /* ABBA: the order flips each pair, so a linear drift cancels out */
        enum cmp_mode first = pair % 2 == 0 ? CMP_PAUSED : CMP_PACKED;
        out[2 + 2 * pair] = (struct cmp_block){first, false};
        out[3 + 2 * pair] = (struct cmp_block){first == CMP_PAUSED ? CMP_PACKED : CMP_PAUSED, false};
    }
    return (int)n;
}

void cmp_spread_of(const double *v, size_t n, struct cmp_spread *out)
{
    *out = (struct cmp_spread){0, NAN, NAN, NAN, NAN};
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(v[i]))
            continue;
        if (out->n == 0 || v[i] < out->min)
            out->min = v[i];
        if (out->n == 0 || v[i] > out->max)
            out->max = v[i];
        sum += v[i];
        out->n++;
    }
    if (out->n == 0)
        return;
    out->mean = sum / out->n;
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(v[i]))
            ss += (v[i] - out->mean) * (v[i] - out->mean);
    out->sd = out->n > 1 ? sqrt(ss / (out->n - 1)) : 0;
}

/* The measured values of one field for one mode. */
static void spread_field(const struct cmp_block_result *b, size_t n, enum cmp_mode m, size_t offset,
                         struct cmp_spread *out)
{
    double v[CMP_MAX_BLOCKS];
    size_t k = 0;
    for (size_t i = 0; i < n && k < CMP_MAX_BLOCKS; i++)
        if (b[i].mode == m && !b[i].warmup)
            v[k++] = *(const double *)((const char *)&b[i] + offset);
    cmp_spread_of(v, k, out);
}

void cmp_summarize(const struct cmp_block_result *b, size_t n, enum cmp_mode m, struct cmp_summary *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < n; i++) {
        if (b[i].n_cpus > out->n_cpus)
            out->n_cpus = b[i].n_cpus;
        if (b[i].mode == m && !b[i].warmup)
            out->n_blocks++;
    }
#define FIELD(f, dst) spread_field(b, n, m, offsetof(struct cmp_block_result, f), dst)
    for (unsigned c = 0; c < out->n_cpus && c < CMP_MAX_CPUS; c++) {
        FIELD(wakeups_ps[c], &out->wakeups_ps[c]);
        FIELD(idle_pct[c], &out->idle_pct[c]);
        FIELD(freq_mhz[c], &out->freq_mhz[c]);
    }
    FIELD(energy_w, &out->energy_w);
    FIELD(intensive_cpu_pct, &out->intensive_cpu_pct);
    FIELD(intensive_wait_ms_ps, &out->intensive_wait_ms_ps);
    FIELD(jitter_wait_ms_per_wakeup, &out->jitter_wait_ms_per_wakeup);
    FIELD(daemon_cpu_pct, &out->daemon_cpu_pct);
    FIELD(daemon_wakeups_ps, &out->daemon_wakeups_ps);
#undef FIELD
}

static bool overlap(const struct cmp_spread *a, const struct cmp_spread *b)
{
    return a->n && b->n && a->min <= b->max && b->min <= a->max;
}

/* Appends to buf at *len, keeping it NUL-terminated when truncated. */
#define APPEND(...) \
    do { \
        int _w = snprintf(buf + MIN_SZ(*len, size), size - MIN_SZ(*len, size), __VA_ARGS__); \
        if (_w > 0) \
            *len += (size_t)_w; \
    } while (0)
#define MIN_SZ(a, b) ((a) < (b) ? (a) : (b))

static void cpu_part(const struct cmp_summary *pa, const struct cmp_summary *pk, const bool *idle_cpus, char *buf,
                     size_t size, size_t *len)
{
    unsigned n = pa->n_cpus < pk->n_cpus ? pa->n_cpus : pk->n_cpus;
    bool any_idle = false;
    for (unsigned c = 0; idle_cpus && c < n; c++)
        any_idle |= idle_cpus[c];
    int best = -1;
    double best_drop = 0;
    for (unsigned c = 0; c < n; c++) {
        if (any_idle && !idle_cpus[c])
            continue;
        const struct cmp_spread *a = &pa->wakeups_ps[c], *k = &pk->wakeups_ps[c];
        if (!a->n || !k->n)
            continue;
        double drop = a->mean - k->mean;
        if (best < 0 || drop > best_drop) {
            best = (int)c;
            best_drop = drop;
        }
    }
    if (best < 0) {
        APPEND("no CPU measured in both modes");
        return;
    }
    const struct cmp_spread *a = &pa->wakeups_ps[best], *k = &pk->wakeups_ps[best];
    APPEND("CPU %d: ", best);
    if (a->mean <= 0 && k->mean <= 0)
        APPEND("no wake-ups in either mode");
    else if (a->mean <= 0)
        APPEND("%.0f wake-ups/s more (none when paused)", k->mean);
    else {
        double pct = (a->mean - k->mean) / a->mean * 100.0;
        if (fabs(pct) < 0.5)
            APPEND("no change in wake-ups");
        else
            APPEND("%.0f%% %s wake-ups", fabs(pct), pct > 0 ? "fewer" : "more");
    }
    if (overlap(a, k) && a->mean != k->mean)
        APPEND(" (within the spread)");
    const struct cmp_spread *ia = &pa->idle_pct[best], *ik = &pk->idle_pct[best];
    if (ia->n && ik->n)
        APPEND(", idle %.1f%% vs %.1f%%", ik->mean, ia->mean);
}

int cmp_verdict(const struct cmp_summary *pa, const struct cmp_summary *pk, const bool *idle_cpus, char *buf,
                size_t size)
{
    size_t l = 0, *len = &l;
    if (size)
        buf[0] = '\0';
    cpu_part(pa, pk, idle_cpus, buf, size, len);
    const struct cmp_spread *ja = &pa->jitter_wait_ms_per_wakeup, *jk = &pk->jitter_wait_ms_per_wakeup;
    if (ja->n && jk->n) {
        double d = jk->mean - ja->mean;
        if (fabs(d) < 0.05)
            APPEND("; jitter waits no longer per wake-up");
        else
            APPEND("; jitter waits %.1f ms %s per wake-up", fabs(d), d > 0 ? "more" : "less");
    } else {
        APPEND("; no jitter task woke");
    }
    /* the other cost: the busy CPUs' own tasks wait behind the jitter */
    const struct cmp_spread *ia = &pa->intensive_wait_ms_ps, *ik = &pk->intensive_wait_ms_ps;
    if (ia->n && ik->n && (ia->mean > 0 || ik->mean > 0)) {
        double d = ik->mean - ia->mean;
        if (fabs(d) < 0.05)
            APPEND("; intensive tasks wait no longer");
        else
            APPEND("; intensive tasks wait %.1f ms/s %s", fabs(d), d > 0 ? "more" : "less");
    }
    const struct cmp_spread *ea = &pa->energy_w, *ek = &pk->energy_w;
    if (ea->n && ek->n)
        APPEND("; package %.2f W vs %.2f W", ek->mean, ea->mean);
    const struct cmp_spread *dk = &pk->daemon_cpu_pct;
    if (dk->n)
        APPEND("; the daemon used %.1f%% of a CPU", dk->mean);
    return (int)MIN_SZ(l, size ? size - 1 : 0);
}
