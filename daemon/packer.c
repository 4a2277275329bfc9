/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The packing policy. See packer.h for the rules; this file only says why
 * where the code is not obvious. No I/O; the plan in words is
 * packer-describe.c. */
#include <errno.h>
#include <string.h>

#include "packer.h"
#include "util.h"

static const char *const reason_names[_PACKER_REASON_MAX] = {
    [PACKER_REASON_NONE] = "none",
    [PACKER_REASON_PACKED] = "packed",
    [PACKER_REASON_IDLE_MACHINE] = "idle-machine",
    [PACKER_REASON_ALL_BUSY] = "all-busy",
    [PACKER_REASON_NO_BUSY] = "no-busy",
    [PACKER_REASON_NO_ROOM] = "no-room",
    [PACKER_REASON_NO_DATA] = "no-data",
    [PACKER_REASON_RUN_DELAY] = "run-delay",
    [PACKER_REASON_NO_BENEFIT] = "no-benefit",
    [PACKER_REASON_ISOLATED] = "isolated",
};

const char *packer_reason_to_string(enum packer_reason r)
{
    return (unsigned)r < _PACKER_REASON_MAX ? reason_names[r] : "unknown";
}

const char *packer_wait_to_string(enum packer_wait w)
{
    switch (w) {
    case PACKER_WAIT_NONE:
        return "none";
    case PACKER_WAIT_HOLD:
        return "hold";
    case PACKER_WAIT_MIN_CHANGE:
        return "min-change";
    }
    return "unknown";
}

void packer_state_init(struct packer_state *s)
{
    memset(s, 0, sizeof(*s));
    s->initialized = true;
}

/* ---- planning ---- */

static int core_domain_id(const struct topo_core *c, enum pack_domain d)
{
    switch (d) {
    case DOMAIN_LLC:
        return c->llc;
    case DOMAIN_NUMA:
        return c->node;
    case DOMAIN_PACKAGE:
        break;
    }
    return c->package;
}

static bool set_intersects(const cpu_set_t *a, const cpu_set_t *b)
{
    cpu_set_t x;
    CPU_AND(&x, a, b);
    return CPU_COUNT(&x) > 0;
}

/* Next CPU of s at or after from, or -1. A word at a time: a core's few
 * threads sit in a 1024-bit set, and this runs for every core every tick. */
static int set_next(const cpu_set_t *s, int from)
{
    const int bits = 8 * (int)sizeof(s->__bits[0]);
    for (int w = from / bits; from >= 0 && w < (int)ELEMENTSOF(s->__bits); w++) {
        __cpu_mask m = s->__bits[w];
        if (w == from / bits)
            m &= ~(__cpu_mask)0 << (from % bits);
        if (m)
            return w * bits + __builtin_ctzl(m);
    }
    return -1;
}

static bool same_plan(bool a_restricted, const cpu_set_t *a, bool b_restricted, const cpu_set_t *b)
{
    if (a_restricted != b_restricted)
        return false;
    return !a_restricted || CPU_EQUAL(a, b);
}

/* The cores of each domain, grouped, and which of them the plan in effect
 * (kept[0]) or the pending candidate (kept[1]) uses: per-domain work then
 * stays linear in the size of the domain. */
struct members {
    int start[PACKER_MAX_DOMAINS + 1];
    int core[PACKER_MAX_CORES]; /* indices into plan.cores */
    bool kept[2][PACKER_MAX_CORES];
    bool spill[PACKER_MAX_CORES]; /* the run-delay guard spilled to it */
};

#define FOREACH_MEMBER(m, dom, i) \
    for (int _k = (m)->start[dom], i; _k < (m)->start[(dom) + 1] && ((i) = (m)->core[_k], 1); _k++)

static void members_build(const struct packer_input *in, const struct packer_state *st, const struct packer_plan *out,
                          struct members *m)
{
    int count[PACKER_MAX_DOMAINS + 1] = {0};
    for (int i = 0; i < out->n_cores; i++)
        if (out->cores[i].domain >= 0)
            count[out->cores[i].domain + 1]++;
    m->start[0] = 0;
    for (int d = 0; d < out->n_domains; d++)
        m->start[d + 1] = m->start[d] + count[d + 1];
    int fill[PACKER_MAX_DOMAINS];
    memcpy(fill, m->start, sizeof(int) * (size_t)out->n_domains);
    for (int i = 0; i < out->n_cores; i++) {
        const struct packer_core_info *ci = &out->cores[i];
        const cpu_set_t *online = &in->topo->cores[ci->core].online;
        if (ci->domain >= 0)
            m->core[fill[ci->domain]++] = i;
        m->kept[0][i] = st->restricted && set_intersects(online, &st->chosen_cpus);
        m->kept[1][i] = st->has_candidate && st->cand_restricted && set_intersects(online, &st->cand_chosen_cpus);
        m->spill[i] = in->spill_cpus && set_intersects(online, in->spill_cpus);
    }
}

/* Spare and count of the busy cores of domain dom in keep set t. */
static unsigned kept_spare(const struct packer_plan *out, const struct members *m, int dom, int t, int *n)
{
    unsigned spare = 0;
    *n = 0;
    FOREACH_MEMBER(m, dom, i)
    {
        if (!out->cores[i].busy || !m->kept[t][i])
            continue;
        spare += out->cores[i].spare_milli;
        (*n)++;
    }
    return spare;
}

/* Plan one domain: fill its reason and mark its chosen cores. */
static void plan_domain(const struct members *m, struct packer_plan *out, int dom)
{
    struct packer_domain_info *d = &out->domains[dom];
    int order[PACKER_MAX_CORES];
    int n = 0;

    if (d->n_busy == 0) {
        d->reason = PACKER_REASON_NO_BUSY;
        return;
    }
    if (d->n_busy == d->n_cores) {
        d->reason = PACKER_REASON_ALL_BUSY;
        return;
    }
    if (d->busy_spare_milli < out->need_milli) {
        d->reason = PACKER_REASON_NO_ROOM;
        return;
    }

    /* Most spare first: taking the largest spares is what reaches the need
     * with the fewest cores. Ties go to the lower index so the choice is
     * stable from one tick to the next. */
    FOREACH_MEMBER(m, dom, i)
    {
        const struct packer_core_info *ci = &out->cores[i];
        if (!ci->busy)
            continue;
        int j = n++;
        while (j > 0 && out->cores[order[j - 1]].spare_milli < ci->spare_milli) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
    int k = 0;
    unsigned sum = 0;
    while (k < n && sum < out->need_milli)
        sum += out->cores[order[k++]].spare_milli;

    /* Keep the cores already in use (applied, else the pending candidate)
     * while they still do the job with no more cores than needed, so small
     * shifts in spare between busy cores do not move the jitter around. */
    for (int t = 0; t < 2; t++) {
        int kn;
        unsigned ks = kept_spare(out, m, dom, t, &kn);
        if (kn > 0 && kn <= k && ks >= out->need_milli) {
            FOREACH_MEMBER(m, dom, i)
            if (out->cores[i].busy && m->kept[t][i])
                out->cores[i].chosen = true;
            d->reason = PACKER_REASON_PACKED;
            d->packed = true;
            goto done;
        }
    }
    for (int i = 0; i < k; i++)
        out->cores[order[i]].chosen = true;
    d->reason = PACKER_REASON_PACKED;
    d->packed = true;
done:
    FOREACH_MEMBER(m, dom, i)
    {
        struct packer_core_info *ci = &out->cores[i];
        /* Jitter waited too long to run on the others: one more busy core
         * shares it (an idle one never: that is what packing protects). */
        if (m->spill[i] && ci->busy)
            ci->chosen = true;
        if (ci->chosen) {
            d->n_chosen++;
            d->chosen_spare_milli += ci->spare_milli;
        }
    }
}

static int find_or_add_domain(struct packer_plan *out, int id)
{
    for (int i = 0; i < out->n_domains; i++)
        if (out->domains[i].id == id)
            return i;
    if (out->n_domains >= PACKER_MAX_DOMAINS)
        return -E2BIG;
    struct packer_domain_info *d = &out->domains[out->n_domains];
    memset(d, 0, sizeof(*d));
    d->id = id;
    return out->n_domains++;
}

/* Utilisation and jitter share summed over a core's online threads that have
 * a sample; false if none has. */
static bool sum_core(const struct packer_input *in, const struct topo_core *tc, unsigned *util, unsigned *jitter)
{
    bool known = false;
    *util = *jitter = 0;
    for (int cpu = set_next(&tc->online, 0); cpu >= 0; cpu = set_next(&tc->online, cpu + 1)) {
        int u = cpu < in->n_cpu_util && in->cpu_util_milli ? in->cpu_util_milli[cpu] : -1;
        if (u < 0)
            continue;
        known = true;
        u = MIN(u, 1000);
        int j = in->cpu_jitter_milli && cpu < in->n_cpu_util ? in->cpu_jitter_milli[cpu] : 0;
        *util += (unsigned)u;
        *jitter += (unsigned)MAX(0, j);
    }
    return known;
}

/* Per-core figures, busy state and domains. */
static int measure(const struct packer_input *in, const struct packer_state *st, struct packer_plan *out)
{
    const struct policy_params *pp = in->params;
    unsigned enter = pp->busy_threshold_milli;
    unsigned leave =
        in->busy_exit_milli ? in->busy_exit_milli : (unsigned)((uint64_t)enter * PACKER_BUSY_EXIT_PERMILLE / 1000);
    if (leave > enter)
        leave = enter;

    /* Without a per-CPU figure, assume the jitter load runs on the cores of
     * the plan in effect, evenly: otherwise packing it would eat the very
     * spare it was packed into, and the plan would flip to "no room" and
     * back. */
    unsigned est_jitter = 0;
    if (!in->cpu_jitter_milli && st->restricted && in->jitter_load_milli > 0) {
        int n = 0;
        for (int i = 0; i < in->topo->n_cores; i++)
            n += set_intersects(&in->topo->cores[i].online, &st->chosen_cpus);
        if (n > 0)
            est_jitter = in->jitter_load_milli / (unsigned)n;
    }

    for (int i = 0; i < in->topo->n_cores; i++) {
        const struct topo_core *tc = &in->topo->cores[i];
        struct packer_core_info *ci = &out->cores[out->n_cores++];
        unsigned util, jitter;

        memset(ci, 0, sizeof(*ci));
        ci->core = i;
        ci->domain = -1;
        ci->n_online = (unsigned)CPU_COUNT(&tc->online);
        if (ci->n_online == 0)
            continue;
        ci->known = sum_core(in, tc, &util, &jitter);
        /* A jitter task's share is charged to the CPU it last ran on, but
         * between samples it moves between siblings: cap the share per core,
         * not per CPU, or the excess is lost and the core looks fuller. */
        jitter = MIN(jitter, util);
        util -= jitter;
        /* A guess may add room but never turns a busy core idle. */
        unsigned util_for_busy = util;
        if (est_jitter && set_intersects(&tc->online, &st->chosen_cpus)) {
            jitter = MIN(est_jitter, util);
            util -= jitter;
        }
        ci->capacity_milli = capacity_core_milli(in->cap, ci->n_online);
        ci->jitter_milli = jitter;
        ci->util_milli = util;
        ci->spare_milli = capacity_spare_milli(ci->capacity_milli, util);
        /* A core that was busy leaves the state only below the lower
         * threshold, so load hovering at the threshold does not toggle it. */
        bool was_busy = set_intersects(&tc->online, &st->busy_cpus);
        uint64_t thr = (uint64_t)(was_busy ? leave : enter) * ci->capacity_milli;
        ci->busy = ci->known && (uint64_t)util_for_busy * 1000 >= thr;
        int dom = find_or_add_domain(out, core_domain_id(tc, pp->domain));
        if (dom < 0)
            return dom;
        ci->domain = dom;
        struct packer_domain_info *d = &out->domains[dom];
        d->n_cores++;
        d->capacity_milli += ci->capacity_milli;
        d->util_milli += util;
        if (ci->busy) {
            d->n_busy++;
            d->busy_spare_milli += ci->spare_milli;
        }
        if (ci->known) {
            out->capacity_milli += ci->capacity_milli;
            out->util_milli += util;
        }
    }
    return 0;
}

static void plan_fallback(struct packer_plan *out, const struct topology *topo, enum packer_reason r)
{
    out->wanted_restricted = false;
    out->wanted_reason = r;
    if (topo)
        out->wanted_mask = topo->online;
    else
        CPU_ZERO(&out->wanted_mask);
}

static void reset_output(struct packer_plan *out)
{
    out->restricted = false;
    CPU_ZERO(&out->mask);
    out->reason = PACKER_REASON_NO_DATA;
    out->changed = false;
    out->wanted_restricted = false;
    CPU_ZERO(&out->wanted_mask);
    out->wanted_reason = PACKER_REASON_NO_DATA;
    out->wait = PACKER_WAIT_NONE;
    out->wait_left_ms = 0;
    out->capacity_milli = out->util_milli = out->jitter_load_milli = out->need_milli = 0;
    out->n_cores = 0;
    out->n_domains = 0;
    out->summary[0] = '\0';
    out->benefit = BENEFIT_UNKNOWN;
    out->benefit_explain[0] = '\0';
    out->benefit_probed = out->benefit_now = out->benefit_trial = out->benefit_per_domain = false;
    out->benefit_trial_from = BENEFIT_NONE;
    out->benefit_iso_sig = 0;
}

/* ---- the wanted plan ---- */

/* Plan every domain on its own and join their masks. */
static void plan_domains(const struct packer_input *in, const struct packer_state *st, struct packer_plan *out)
{
    struct members m;
    cpu_set_t mask;
    bool any_packed = false;
    int heaviest = -1;

    members_build(in, st, out, &m);
    CPU_ZERO(&mask);
    for (int dom = 0; dom < out->n_domains; dom++) {
        struct packer_domain_info *d = &out->domains[dom];
        plan_domain(&m, out, dom);
        /* Jitter never crosses domains: a domain that cannot pack keeps
         * all its CPUs for its own jitter. */
        FOREACH_MEMBER(&m, dom, i)
        if (!d->packed || out->cores[i].chosen)
            CPU_OR(&mask, &mask, &in->topo->cores[out->cores[i].core].online);
        if (d->packed) {
            any_packed = true;
        } else {
            if (heaviest < 0 || d->util_milli > out->domains[heaviest].util_milli)
                heaviest = dom;
        }
    }
    /* A packing domain leaves out at least its non-busy cores, so the
     * mask is a real restriction whenever any domain packs. */
    if (any_packed) {
        out->wanted_restricted = true;
        out->wanted_mask = mask;
        out->wanted_reason = PACKER_REASON_PACKED;
    } else {
        plan_fallback(out, in->topo, heaviest >= 0 ? out->domains[heaviest].reason : PACKER_REASON_ALL_BUSY);
    }
}

static void plan_wanted(const struct packer_input *in, const struct packer_state *st, struct packer_plan *out)
{
    if (out->capacity_milli == 0) {
        plan_fallback(out, in->topo, PACKER_REASON_NO_DATA);
    } else if ((uint64_t)out->util_milli * 1000 < (uint64_t)in->params->idle_machine_milli * out->capacity_milli) {
        /* Nothing throttles a nearly idle chip: packing would only cost
         * latency (TurboSched lost ~5% at 2 busy threads). */
        for (int i = 0; i < out->n_domains; i++)
            out->domains[i].reason = PACKER_REASON_IDLE_MACHINE;
        plan_fallback(out, in->topo, PACKER_REASON_IDLE_MACHINE);
    } else {
        plan_domains(in, st, out);
        packer_weigh_benefit(in, st, out);
        /* The run-delay guard gave packing up for now: jitter waited too
         * long to run on every busy core it could have. */
        if (out->wanted_restricted && in->delay_fallback)
            plan_fallback(out, in->topo, PACKER_REASON_RUN_DELAY);
    }
}

/* The threads of the wanted plan's chosen cores into *chosen; the threads of
 * this call's busy cores into the state, for the next call's busy test. */
static void remember_cores(const struct packer_input *in, const struct packer_plan *out, struct packer_state *st,
                           cpu_set_t *chosen)
{
    CPU_ZERO(chosen);
    CPU_ZERO(&st->busy_cpus);
    for (int i = 0; i < out->n_cores; i++) {
        const cpu_set_t *online = &in->topo->cores[out->cores[i].core].online;
        if (out->cores[i].chosen)
            CPU_OR(chosen, chosen, online);
        if (out->cores[i].busy)
            CPU_OR(&st->busy_cpus, &st->busy_cpus, online);
    }
}

/* ---- hysteresis ---- */

/* The applied mask names CPUs that went offline: the kernel already broke
 * those affinities, waiting would only keep a stale plan. */
static bool applied_cpus_gone(const struct packer_input *in, const struct packer_state *st)
{
    if (!st->restricted)
        return false;
    cpu_set_t gone;
    CPU_XOR(&gone, &st->mask, &in->topo->online);
    CPU_AND(&gone, &gone, &st->mask);
    return CPU_COUNT(&gone) > 0;
}

/* Apply the wanted plan, or keep it as the candidate and say how long it
 * still has to wait. */
static void advance_hysteresis(const struct packer_input *in, struct packer_state *st, struct packer_plan *out,
                               const cpu_set_t *wanted_chosen)
{
    const struct policy_params *pp = in->params;
    uint64_t now = in->now_ms;
    /* a probe measures the plan it names: no waiting for it */
    bool urgent = applied_cpus_gone(in, st) || out->benefit_now;

    if (same_plan(out->wanted_restricted, &out->wanted_mask, st->restricted, &st->mask)) {
        st->has_candidate = false;
        st->reason = out->wanted_reason;
        if (out->wanted_restricted)
            st->chosen_cpus = *wanted_chosen;
    } else {
        if (!st->has_candidate ||
            !same_plan(out->wanted_restricted, &out->wanted_mask, st->cand_restricted, &st->cand_mask)) {
            st->has_candidate = true;
            st->cand_restricted = out->wanted_restricted;
            st->cand_mask = out->wanted_mask;
            st->cand_since_ms = now;
        }
        st->cand_chosen_cpus = *wanted_chosen;
        uint64_t held_ms = now > st->cand_since_ms ? now - st->cand_since_ms : 0;
        uint64_t since_change_ms = !st->ever_changed ? UINT64_MAX : now > st->changed_ms ? now - st->changed_ms : 0;
        bool held = held_ms >= pp->hold_ms;
        bool spaced = since_change_ms >= pp->min_change_ms;
        if (urgent || (held && spaced)) {
            st->restricted = out->wanted_restricted;
            st->mask = out->wanted_mask;
            st->reason = out->wanted_reason;
            st->chosen_cpus = *wanted_chosen;
            st->ever_changed = true;
            st->changed_ms = now;
            st->has_candidate = false;
            out->changed = true;
        } else {
            uint64_t left_hold = held ? 0 : pp->hold_ms - held_ms;
            uint64_t left_spacing = spaced ? 0 : pp->min_change_ms - since_change_ms;
            out->wait = !held ? PACKER_WAIT_HOLD : PACKER_WAIT_MIN_CHANGE;
            out->wait_left_ms = MAX(left_hold, left_spacing);
        }
    }
    st->last_ms = now;
}

/* ---- the plan in effect ---- */

static void mark_applied(const struct packer_input *in, const struct packer_state *st, struct packer_plan *out)
{
    out->restricted = st->restricted;
    out->mask = st->restricted ? st->mask : in->topo->online;
    out->reason = st->reason;
    for (int i = 0; i < out->n_cores; i++) {
        struct packer_core_info *ci = &out->cores[i];
        if (!st->restricted) {
            ci->applied = false;
        } else if (ci->n_online > 0) {
            cpu_set_t x;
            CPU_AND(&x, &in->topo->cores[ci->core].online, &st->mask);
            ci->applied = CPU_EQUAL(&x, &in->topo->cores[ci->core].online);
        }
    }
}

static bool input_valid(const struct packer_input *in, const struct packer_state *st)
{
    return in && st && in->topo && in->cap && in->params && in->topo->n_cores >= 0 &&
           in->topo->n_cores <= PACKER_MAX_CORES && (in->topo->n_cores == 0 || in->topo->cores);
}

int packer_plan(const struct packer_input *in, struct packer_state *st, struct packer_plan *out)
{
    if (!out)
        return -EINVAL;
    reset_output(out);
    if (!input_valid(in, st)) {
        packer_describe_error(in, -EINVAL, out);
        return -EINVAL;
    }
    if (!st->initialized)
        packer_state_init(st);

    int r = measure(in, st, out);
    if (r < 0) {
        reset_output(out);
        out->mask = in->topo->online;
        packer_describe_error(in, r, out);
        return r;
    }
    out->jitter_load_milli = in->jitter_load_milli;
    out->need_milli = in->jitter_load_milli + in->params->headroom_milli;

    cpu_set_t wanted_chosen;
    plan_wanted(in, st, out);
    remember_cores(in, out, st, &wanted_chosen);
    advance_hysteresis(in, st, out, &wanted_chosen);
    mark_applied(in, st, out);
    packer_describe(in, out);
    return 0;
}
