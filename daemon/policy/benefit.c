/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The benefit model: the frequency response and the plans weighed by it
 * (the probe loop is in benefit-probe.c). Pure: no I/O, no syscalls. */
#include "benefit.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MIN_D(a, b) ((double)(a) < (double)(b) ? (double)(a) : (double)(b))

static const char *const plan_names[] = {"none", "pack", "isolate", "unknown"};

const char *benefit_plan_name(enum benefit_plan p) { return (unsigned)p <= BENEFIT_UNKNOWN ? plan_names[p] : "?"; }

/* ---- frequency response ---- */

void freq_response_init(struct freq_response *fr, unsigned n_cores)
{
    memset(fr, 0, sizeof(*fr));
    fr->n_cores = n_cores > BENEFIT_MAX_CORES ? BENEFIT_MAX_CORES : n_cores;
}

static int parse_count(const char *s, char **end, unsigned *ret)
{
    if (*s < '0' || *s > '9')
        return -EINVAL;
    errno = 0;
    unsigned long v = strtoul(s, end, 10);
    if (errno || v == 0 || v > BENEFIT_MAX_CORES)
        return -EINVAL;
    *ret = (unsigned)v;
    return 0;
}

static int parse_mhz(const char *s, unsigned *ret)
{
    char *end;
    if (*s < '0' || *s > '9')
        return -EINVAL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s)
        return -EINVAL;
    if (strcasecmp(end, "ghz") == 0)
        v *= 1000;
    else if (*end && strcasecmp(end, "mhz") != 0)
        return -EINVAL;
    if (!(v >= 1 && v <= 100000))
        return -EINVAL;
    *ret = (unsigned)lround(v);
    return 0;
}

int freq_response_set(struct freq_response *fr, const char *key, const char *value, char *err, size_t err_len)
{
    unsigned lo, hi;
    char *end;
    if (strncmp(key, "active", 6) != 0 || parse_count(key + 6, &end, &lo) < 0) {
        snprintf(err, err_len, "'%s': expected active<N> or active<A>-<B>", key);
        return -EINVAL;
    }
    hi = lo;
    if (*end == '-' && parse_count(end + 1, &end, &hi) < 0) {
        snprintf(err, err_len, "'%s': bad range", key);
        return -EINVAL;
    }
    if (*end || hi < lo) {
        snprintf(err, err_len, "'%s': expected active<N> or active<A>-<B>", key);
        return -EINVAL;
    }
    if (hi > fr->n_cores) {
        snprintf(err, err_len, "'%s': the machine has %u cores", key, fr->n_cores);
        return -EINVAL;
    }
    unsigned mhz;
    if (parse_mhz(value, &mhz) < 0) {
        snprintf(err, err_len, "'%s': expected a frequency such as 3300, 3300MHz or 3.3GHz", value);
        return -EINVAL;
    }
    for (unsigned a = lo; a <= hi; a++)
        fr->mhz[a] = mhz;
    return 0;
}

int freq_response_validate(const struct freq_response *fr, char *err, size_t err_len)
{
    if (!fr || fr->n_cores == 0 || fr->n_cores > BENEFIT_MAX_CORES) {
        snprintf(err, err_len, "no cores");
        return -EINVAL;
    }
    for (unsigned a = 1; a <= fr->n_cores; a++) {
        if (fr->mhz[a] == 0) {
            snprintf(err, err_len, "no frequency for %u active cores", a);
            return -EINVAL;
        }
        if (a > 1 && fr->mhz[a] > fr->mhz[a - 1]) {
            snprintf(err, err_len, "%u MHz with %u active cores is above %u MHz with %u", fr->mhz[a], a, fr->mhz[a - 1],
                     a - 1);
            return -EINVAL;
        }
    }
    return 0;
}

unsigned freq_response_mhz(const struct freq_response *fr, unsigned active)
{
    if (!fr || fr->n_cores == 0)
        return 0;
    if (active < 1)
        active = 1;
    if (active > fr->n_cores)
        active = fr->n_cores;
    return fr->mhz[active];
}

/* The frequency at a time-averaged active count: between the table's two
 * neighbouring counts, in proportion. */
static double freq_response_mhz_at(const struct freq_response *fr, double active)
{
    unsigned lo = (unsigned)floor(active);
    double f_lo = freq_response_mhz(fr, lo), f_hi = freq_response_mhz(fr, lo + 1);
    return f_lo + (f_hi - f_lo) * (active - lo);
}

/* ---- the model ---- */

static double core_tput(const struct capacity_table *cap, unsigned k)
{
    return k ? capacity_core_milli(cap, k) / 1000.0 : 0;
}

static unsigned intensive_threads(const struct benefit_core *c)
{
    unsigned k = (c->intensive_milli + 500) / 1000;
    if (k < 1)
        k = 1;
    return k > c->threads ? c->threads : k;
}

/* Share of a core's throughput one unit of jitter work (lone-thread time)
 * takes beside k intensive threads, and the SMT share the jitter gets there. */
static double cost_per_work(const struct capacity_table *cap, unsigned k, unsigned threads, double *share)
{
    if (k + 1 > threads) {
        /* no free thread: jitter time-slices with intensive threads and
         * takes its whole run from them */
        if (share)
            *share = 1;
        return 1;
    }
    double sh = core_tput(cap, k + 1) / (k + 1);
    /* the core's k threads drop from cap(k) to cap(k+1) k/(k+1) while the
     * jitter runs beside them */
    double loss = core_tput(cap, k) - core_tput(cap, k + 1) * k / (k + 1);
    if (share)
        *share = sh;
    return sh > 0 ? loss / sh : 1;
}

static unsigned least_intensive(const struct benefit_snapshot *snap)
{
    unsigned k_min = 0;
    for (unsigned i = 0; i < snap->n_cores; i++) {
        const struct benefit_core *c = &snap->cores[i];
        if (c->busy && c->threads && (!k_min || intensive_threads(c) < k_min))
            k_min = intensive_threads(c);
    }
    return k_min;
}

bool benefit_pack_core(const struct benefit_snapshot *snap, unsigned core)
{
    if (core >= snap->n_cores)
        return false;
    const struct benefit_core *c = &snap->cores[core];
    unsigned k = intensive_threads(c);
    return c->busy && c->threads && k == least_intensive(snap) && k + 1 <= c->threads;
}

/* What the cores look like before any plan: the busy ones and their
 * throughput, the idle ones, and what jitter costs beside busy ones. */
struct tally {
    unsigned n_busy, n_idle;
    unsigned k_min;        /* intensive threads on the least loaded busy core */
    unsigned idle_threads; /* threads of the smallest idle core */
    double busy_tput;
    double cpw_sum;           /* cost per work beside each busy core, summed */
    double room_milli;        /* room for packed jitter */
    double work;              /* the jitter's work, in lone-thread time (CPUs) */
    double share;             /* SMT share a packed jitter thread gets */
    double cpw_pack, cpw_any; /* cost per work packed, and unconfined on a busy core */
};

static void tally_cores(const struct benefit_snapshot *snap, struct tally *t)
{
    for (unsigned i = 0; i < snap->n_cores; i++) {
        const struct benefit_core *c = &snap->cores[i];
        if (c->threads == 0)
            continue;
        if (!c->busy) {
            t->n_idle++;
            if (!t->idle_threads || c->threads < t->idle_threads)
                t->idle_threads = c->threads;
            continue;
        }
        unsigned k = intensive_threads(c);
        t->n_busy++;
        t->busy_tput += core_tput(snap->cap, k);
        if (!t->k_min || k < t->k_min)
            t->k_min = k;
        t->cpw_sum += cost_per_work(snap->cap, k, c->threads, NULL);
    }

    /* Room for packed jitter: half the free threads of the least loaded busy
     * cores (benefit_pack_core()), so that jitter threads rarely queue behind
     * each other. Counted in threads, not capacity: a jitter thread beside
     * busy ones runs on a thread of its own, slower. */
    for (unsigned i = 0; i < snap->n_cores; i++)
        if (benefit_pack_core(snap, i))
            t->room_milli += (snap->cores[i].threads - t->k_min) * 1000.0 / 2;
}

/* The jitter's work, in lone-thread time: on a busy core's sibling a thread
 * gets only its SMT share, so the time seen there is longer than the work.
 * Packing puts it beside the least loaded busy cores (k_min). */
static void jitter_work(const struct benefit_snapshot *snap, struct tally *t)
{
    unsigned threads = 0;
    for (unsigned i = 0; i < snap->n_cores; i++)
        if (snap->cores[i].busy && (!threads || snap->cores[i].threads < threads))
            threads = snap->cores[i].threads;
    t->share = 1;
    t->cpw_pack = 1;
    if (t->n_busy)
        t->cpw_pack = cost_per_work(snap->cap, t->k_min, threads, &t->share);
    /* unconfined, the jitter that finds no idle core lands beside any busy
     * core, not only the least loaded ones */
    t->cpw_any = t->n_busy ? t->cpw_sum / t->n_busy : 1;
    double on_busy = MIN_D(snap->jitter_on_busy_milli, snap->jitter_milli);
    t->work = (snap->jitter_milli - on_busy) / 1000.0 + on_busy / 1000.0 * t->share;
}

/* none: each unconfined jitter task keeps an idle core awake; those beyond
 * the idle cores land beside busy ones */
static double none_woken(const struct benefit_snapshot *snap, const struct tally *t)
{
    unsigned n_jit = snap->n_jitter_tasks;
    double woken = n_jit < t->n_idle ? n_jit : t->n_idle;
    if (snap->none_woken_measured)
        woken = MIN_D(snap->none_woken_milli / 1000.0, woken);
    return woken;
}

static void estimate_none(const struct benefit_snapshot *snap, const struct tally *t, struct benefit_estimate *e)
{
    unsigned n_jit = snap->n_jitter_tasks;
    double work_on_busy = n_jit > t->n_idle ? t->work * (n_jit - t->n_idle) / n_jit : 0;
    e->candidate = true;
    e->active_mean = t->n_busy + none_woken(snap, t);
    e->jitter_cost = t->busy_tput > 0 ? MIN_D(1, work_on_busy * t->cpw_any / t->busy_tput) : 0;
}

/* pack: the busy cores only, if their room holds the jitter's time there
 * plus the headroom */
static void estimate_pack(const struct benefit_snapshot *snap, const struct tally *t, struct benefit_estimate *e)
{
    e->candidate = t->n_busy > 0 && snap->n_jitter_tasks > 0 &&
                   t->room_milli >= t->work / t->share * 1000.0 + snap->headroom_milli;
    e->active_mean = t->n_busy;
    e->jitter_cost = t->busy_tput > 0 ? MIN_D(1, t->work * t->cpw_pack / t->busy_tput) : 0;
}

/* The share of the time an unconfined jitter task keeps its idle core out
 * of the deep states: as measured, else always (one core per task). */
static double woken_share(const struct benefit_snapshot *snap, const struct tally *t)
{
    unsigned n_woken = snap->n_jitter_tasks < t->n_idle ? snap->n_jitter_tasks : t->n_idle;
    if (!snap->none_woken_measured || !n_woken)
        return 1;
    return MIN_D(1, none_woken(snap, t) / n_woken);
}

static uint64_t iso_sig(unsigned n_busy, unsigned n_tasks, unsigned k)
{
    unsigned bits = 0;
    for (; n_tasks; n_tasks >>= 1)
        bits++;
    return (uint64_t)n_busy << 32 | (uint64_t)bits << 16 | k;
}

/* Isolation on k cores measured under the load it would be used in now. */
static bool iso_known(const struct benefit_snapshot *snap, const struct tally *t, unsigned k)
{
    return snap->iso_measured && k && snap->iso_sig == iso_sig(t->n_busy, snap->n_jitter_tasks, k);
}

/* Wake-ups per second of idle cores out of the deep states: none's as
 * measured, on the cores its jitter woke; packing wakes no idle core; an
 * isolated core holding m tasks is woken by one only when none of the
 * other m - 1 holds it awake (each a share w of the time, independently),
 * so isolation wakes cores less often than one core per task does; tasks
 * that wake it together (`together`) wake it as one task does. Isolation
 * measured: as measured. */
static double deep_wakes(const struct benefit_snapshot *snap, const struct tally *t, enum benefit_plan p,
                         unsigned n_isolate, bool together)
{
    unsigned n_jit = snap->n_jitter_tasks, n_woken = n_jit < t->n_idle ? n_jit : t->n_idle;
    if (!snap->reeval_us)
        return 0;
    if (p == BENEFIT_ISOLATE && iso_known(snap, t, n_isolate))
        return snap->iso_wakes_per_s;
    if (!snap->none_wakes_measured || !n_woken)
        return 0;
    if (p == BENEFIT_NONE)
        return snap->none_wakes_per_s;
    if (p != BENEFIT_ISOLATE || !n_isolate)
        return 0;
    double per_task = snap->none_wakes_per_s / (double)n_woken, others = (double)n_jit / n_isolate - 1;
    if (together)
        return n_isolate * per_task;
    return n_jit * per_task * pow(1 - woken_share(snap, t), others > 0 ? others : 0);
}

/* isolate: the fewest idle cores whose capacity holds the jitter */
static void estimate_isolate(const struct benefit_snapshot *snap, const struct tally *t, struct benefit_estimate *e)
{
    if (!t->n_idle || !snap->n_jitter_tasks || !t->idle_threads)
        return;
    double per_core = capacity_core_milli(snap->cap, t->idle_threads) - (double)snap->headroom_milli;
    unsigned k = 1;
    if (per_core > 0)
        while (k < t->n_idle && k * per_core < t->work * 1000.0)
            k++;
    e->candidate = per_core > 0 && k * per_core >= t->work * 1000.0 && t->n_busy > 0;
    e->n_isolate = k;
    e->load_sig = iso_sig(t->n_busy, snap->n_jitter_tasks, k);
    e->measured = iso_known(snap, t, k);
    e->active_mean = t->n_busy + k;
    if (e->measured) {
        e->active_mean = t->n_busy + snap->iso_woken_milli / 1000.0;
    } else if (snap->none_woken_measured) {
        /* each task keeps its core active a share w of the time when alone
         * on it; k cores sharing the tasks are active when any is */
        double w = woken_share(snap, t);
        e->active_mean = t->n_busy + k * (1 - pow(1 - w, (double)snap->n_jitter_tasks / k));
    }
    e->jitter_cost = 0;
}

/* The busy cores' frequency and the intensive throughput of an estimate
 * whose active cores, wake-ups and cost are set. */
static void estimate_throughput(const struct benefit_snapshot *snap, const struct tally *t, struct benefit_estimate *e)
{
    const struct freq_response *fr = snap->freq;
    e->active_cores = (unsigned)lround(e->active_mean);
    /* after each wake-up the limit stays one core lower until the next
     * re-evaluation, half an interval on average; wake-ups closer than
     * that share one lag (Poisson: the share of time with at least one) */
    e->lag_share = 1 - exp(-e->deep_wakes_per_s * snap->reeval_us / 2e6);
    double mhz = 0;
    if (fr && fr->n_cores) {
        mhz = freq_response_mhz_at(fr, e->active_mean);
        mhz -= e->lag_share * (mhz - freq_response_mhz_at(fr, e->active_mean + 1));
    }
    e->busy_mhz = (unsigned)lround(mhz);
    double f = fr ? mhz : 1;
    e->throughput = f * t->busy_tput * (1 - e->jitter_cost);
}

/* Isolation not measured under this load, with idle cores woken out of the
 * deep states unconfined: its estimate takes its tasks to wake their core
 * independently. If they wake it together instead, it would gain more:
 * that throughput, or 0 where nothing says how often they wake it. */
static double isolate_together(const struct benefit_snapshot *snap, const struct tally *t,
                               const struct benefit_estimate *iso)
{
    if (!iso->candidate || iso->measured || !snap->none_wakes_measured || !snap->none_wakes_per_s || !snap->reeval_us)
        return 0;
    struct benefit_estimate e = *iso;
    e.deep_wakes_per_s = deep_wakes(snap, t, BENEFIT_ISOLATE, e.n_isolate, true);
    estimate_throughput(snap, t, &e);
    return e.throughput;
}

void benefit_estimate_all(const struct benefit_snapshot *snap, struct benefit_estimate est[BENEFIT_N_PLANS])
{
    memset(est, 0, sizeof(*est) * BENEFIT_N_PLANS);
    struct tally t = {0};
    tally_cores(snap, &t);
    jitter_work(snap, &t);
    estimate_none(snap, &t, &est[BENEFIT_NONE]);
    estimate_pack(snap, &t, &est[BENEFIT_PACK]);
    estimate_isolate(snap, &t, &est[BENEFIT_ISOLATE]);
    for (int p = 0; p < BENEFIT_N_PLANS; p++) {
        est[p].deep_wakes_per_s = deep_wakes(snap, &t, (enum benefit_plan)p, est[p].n_isolate, false);
        estimate_throughput(snap, &t, &est[p]);
    }
    est[BENEFIT_ISOLATE].together = isolate_together(snap, &t, &est[BENEFIT_ISOLATE]);
}

static void fmt_ghz(char *b, size_t n, unsigned mhz) { snprintf(b, n, "%.2f GHz", mhz / 1000.0); }

/* none: what the best alternative would have gained */
static void explain_none(char *out, size_t n, const struct benefit_estimate *est)
{
    double base = est[BENEFIT_NONE].throughput;
    enum benefit_plan alt = BENEFIT_NONE;
    for (int p = 1; p < BENEFIT_N_PLANS; p++)
        if (est[p].candidate && (alt == BENEFIT_NONE || est[p].throughput > est[alt].throughput))
            alt = (enum benefit_plan)p;
    char f0[32];
    fmt_ghz(f0, sizeof f0, est[BENEFIT_NONE].busy_mhz);
    if (alt == BENEFIT_NONE)
        snprintf(out, n, "none: nothing to pack or isolate (%u active cores at %s)", est[BENEFIT_NONE].active_cores,
                 f0);
    else
        snprintf(out, n, "none: %s would gain %+.1f%% est. (%u active cores at %s, jitter takes %.1f%%)",
                 benefit_plan_name(alt), 100 * (est[alt].throughput / base - 1), est[alt].active_cores, f0,
                 100 * est[alt].jitter_cost);
}

static void explain_plan(char *out, size_t n, enum benefit_plan p, const struct benefit_estimate *est, double gain)
{
    const struct benefit_estimate *e = &est[p], *z = &est[BENEFIT_NONE];
    char f[32], f0[32];
    fmt_ghz(f, sizeof f, e->busy_mhz);
    fmt_ghz(f0, sizeof f0, z->busy_mhz);
    if (p == BENEFIT_NONE)
        explain_none(out, n, est);
    else if (p == BENEFIT_PACK)
        snprintf(out, n, "pack: %+.1f%% est. (%u active cores at %s vs %s, jitter takes %.1f%%)", 100 * gain,
                 e->active_cores, f, f0, 100 * e->jitter_cost);
    else if (p == BENEFIT_ISOLATE)
        snprintf(out, n, "isolate on %u core%s: %+.1f%% est. (%u active cores at %s vs %s, jitter takes %.1f%%)",
                 e->n_isolate, e->n_isolate == 1 ? "" : "s", 100 * gain, e->active_cores, f, f0, 100 * e->jitter_cost);
}

/* A trial of isolation (together > 0: the estimate with its tasks
 * together, benefit_estimate.together): worth it where it would beat the choice with its tasks
 * together, its worst (independent) is within the margin of the choice,
 * and the two differ by more than a tenth of the margin (the deep
 * wake-ups matter at all). */
static bool choose_trial(enum benefit_plan chosen, double together, double margin, struct benefit_choice *out)
{
    const struct benefit_estimate *est = out->est, *iso = &est[BENEFIT_ISOLATE];
    double base = est[BENEFIT_NONE].throughput;
    double c = est[chosen].throughput;
    if (!(together > c && together - iso->throughput > base * margin / 10 && iso->throughput >= c * (1 - margin)))
        return false;
    out->plan = BENEFIT_ISOLATE;
    out->trial = true;
    out->trial_from = chosen;
    out->gain = iso->throughput / base - 1;
    snprintf(out->explain, sizeof out->explain,
             "isolate on %u core%s: a trial, %+.1f%% est. if its tasks wake the core%s together, "
             "%+.1f%% if independently (%s %+.1f%%)",
             iso->n_isolate, iso->n_isolate == 1 ? "" : "s", 100 * (together / base - 1),
             iso->n_isolate == 1 ? "" : "s", 100 * out->gain, benefit_plan_name(chosen),
             100 * (est[chosen].throughput / base - 1));
    return true;
}

/* The trial's isolation is applied: until it is measured it goes on; then
 * it is weighed against the plan it displaced, which it must beat by half
 * the margin (the margin holds one estimate against another; this one is
 * measured, and was applied only to measure it). */
static void choose_in_trial(const struct benefit_snapshot *snap, double margin, struct benefit_choice *out)
{
    const struct benefit_estimate *est = out->est, *iso = &est[BENEFIT_ISOLATE];
    double base = est[BENEFIT_NONE].throughput;
    enum benefit_plan from =
        snap->trial_from < BENEFIT_N_PLANS && est[snap->trial_from].candidate ? snap->trial_from : BENEFIT_NONE;
    if (!iso->measured) {
        out->plan = BENEFIT_ISOLATE;
        out->trial = true;
        out->trial_from = from;
        out->gain = iso->throughput / base - 1;
        snprintf(out->explain, sizeof out->explain, "isolate on %u core%s: a trial, measuring", iso->n_isolate,
                 iso->n_isolate == 1 ? "" : "s");
        return;
    }
    out->plan = iso->throughput > est[from].throughput * (1 + margin / 2) ? BENEFIT_ISOLATE : from;
    out->gain = est[out->plan].throughput / base - 1;
    snprintf(out->explain, sizeof out->explain,
             "%s: after a trial, isolation measured at %+.1f%% est. "
             "(%u active cores at %.2f GHz, %.0f deep wake-ups/s) against %s's %+.1f%%",
             benefit_plan_name(out->plan), 100 * (iso->throughput / base - 1), iso->active_cores,
             iso->busy_mhz / 1000.0, iso->deep_wakes_per_s, benefit_plan_name(from),
             100 * (est[from].throughput / base - 1));
}

int benefit_choose(const struct benefit_snapshot *snap, enum benefit_plan current, unsigned margin_bp,
                   struct benefit_choice *out)
{
    if (!snap || !out || !snap->cap || (snap->n_cores && !snap->cores))
        return -EINVAL;
    memset(out, 0, sizeof(*out));
    char why[96];
    if (!snap->freq || freq_response_validate(snap->freq, why, sizeof why) < 0) {
        out->plan = BENEFIT_UNKNOWN;
        benefit_estimate_all(snap, out->est);
        snprintf(out->explain, sizeof out->explain, "benefit unknown (%s): current policy kept",
                 snap->freq ? why : "no frequency response");
        return 0;
    }
    benefit_estimate_all(snap, out->est);
    const struct benefit_estimate *est = out->est;
    double base = est[BENEFIT_NONE].throughput;
    if (base <= 0) {
        out->plan = BENEFIT_NONE;
        snprintf(out->explain, sizeof out->explain, "none: no busy cores to gain");
        return 0;
    }
    if (snap->in_trial && current == BENEFIT_ISOLATE && est[BENEFIT_ISOLATE].candidate) {
        choose_in_trial(snap, margin_bp / 10000.0, out);
        return 0;
    }

    /* The margin keeps a restriction against small gains elsewhere, not
     * one that no longer gains at all (its estimate sharpens as the
     * caller's smoothed jitter load settles): that one is weighed afresh
     * against none. Entering takes the margin, leaving a loss, so the
     * choice does not flap between them. */
    enum benefit_plan ref = current;
    if (ref >= BENEFIT_N_PLANS || !est[ref].candidate || est[ref].throughput <= base)
        ref = BENEFIT_NONE;
    enum benefit_plan best = ref;
    for (int p = 0; p < BENEFIT_N_PLANS; p++)
        if (est[p].candidate && est[p].throughput > est[best].throughput)
            best = (enum benefit_plan)p;
    double margin = margin_bp / 10000.0;
    enum benefit_plan chosen = ref;
    bool held = false;
    if (best != ref) {
        if (est[best].throughput > est[ref].throughput * (1 + margin))
            chosen = best;
        else
            held = true;
    }
    double together = chosen == BENEFIT_ISOLATE || current == BENEFIT_ISOLATE || !snap->iso_trial_ok
                          ? 0
                          : est[BENEFIT_ISOLATE].together;
    if (together > 0 && choose_trial(chosen, together, margin, out))
        return 0;
    out->plan = chosen;
    out->gain = est[chosen].throughput / base - 1;

    char *buf = out->explain;
    const size_t buf_len = sizeof out->explain;
    explain_plan(buf, buf_len, chosen, est, out->gain);
    size_t used = strlen(buf);
    if (held && used < buf_len)
        snprintf(buf + used, buf_len - used, "; %s %+.2f%% more is within the %.2f%% margin", benefit_plan_name(best),
                 100 * (est[best].throughput / est[ref].throughput - 1), 100 * margin);
    return 0;
}

bool benefit_trial_goes_on(bool in_trial, bool trial, enum benefit_plan chosen, bool may_change)
{
    return trial || (in_trial && (chosen != BENEFIT_ISOLATE || !may_change));
}
