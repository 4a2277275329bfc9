/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The packer's plan in words: the one-line summary that explain, status and
 * the log show. Pure like the packer: it only reads the plan and formats. */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "packer.h"
#include "util.h"

static const char *const reason_texts[_PACKER_REASON_MAX] = {
    [PACKER_REASON_NONE] = "no plan yet",
    [PACKER_REASON_PACKED] = "packed on busy cores",
    [PACKER_REASON_IDLE_MACHINE] = "machine nearly idle",
    [PACKER_REASON_ALL_BUSY] = "every core busy",
    [PACKER_REASON_NO_BUSY] = "no busy core",
    [PACKER_REASON_NO_ROOM] = "no busy core with room",
    [PACKER_REASON_NO_DATA] = "no utilisation data",
    [PACKER_REASON_RUN_DELAY] = "jitter waited too long to run",
    [PACKER_REASON_NO_BENEFIT] = "packing would not pay",
    [PACKER_REASON_ISOLATED] = "isolated on idle cores",
};

const char *packer_reason_describe(enum packer_reason r)
{
    return (unsigned)r < _PACKER_REASON_MAX ? reason_texts[r] : "unknown";
}

/* Append to a fixed buffer; text that does not fit is cut, never overflows. */
static void sappend(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void sappend(char *buf, size_t size, const char *fmt, ...)
{
    size_t len = strnlen(buf, size);
    if (len + 1 >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, size - len, fmt, ap);
    va_end(ap);
}

static const char *domain_kind(enum pack_domain d)
{
    switch (d) {
    case DOMAIN_LLC:
        return "LLC";
    case DOMAIN_NUMA:
        return "node";
    case DOMAIN_PACKAGE:
        break;
    }
    return "package";
}

static void describe_cores(const struct packer_input *in, const struct packer_plan *out, int dom, char *cores_buf,
                           size_t cores_size, char *cpus_buf, size_t cpus_size)
{
    cpu_set_t cores, cpus;
    CPU_ZERO(&cores);
    CPU_ZERO(&cpus);
    for (int i = 0; i < out->n_cores; i++) {
        const struct packer_core_info *ci = &out->cores[i];
        if (!ci->chosen || (dom >= 0 && ci->domain != dom))
            continue;
        CPU_SET(ci->core, &cores);
        CPU_OR(&cpus, &cpus, &in->topo->cores[ci->core].online);
    }
    if (cpulist_format(&cores, cores_buf, cores_size) < 0)
        snprintf(cores_buf, cores_size, "...");
    if (cpulist_format(&cpus, cpus_buf, cpus_size) < 0)
        snprintf(cpus_buf, cpus_size, "...");
}

static int n_cpus_chosen(const struct packer_input *in, const struct packer_plan *out)
{
    int n = 0;
    for (int i = 0; i < out->n_cores; i++)
        if (out->cores[i].chosen)
            n += CPU_COUNT(&in->topo->cores[out->cores[i].core].online);
    return n;
}

/* "; LLCs 2-3 unrestricted (no busy core)" for each fallback reason, or with
 * without unrestricted_form ": no busy core". */
static void append_fallback_groups(const struct packer_input *in, const struct packer_plan *out, char *buf, size_t size,
                                   bool *first, bool unrestricted_form)
{
    /* The reason that says most about the load first. */
    static const enum packer_reason order[] = {
        PACKER_REASON_NO_ROOM,      PACKER_REASON_ALL_BUSY, PACKER_REASON_NO_BUSY,
        PACKER_REASON_IDLE_MACHINE, PACKER_REASON_NO_DATA,  PACKER_REASON_NONE,
    };
    const char *kind = domain_kind(in->params->domain);
    for (size_t k = 0; k < ELEMENTSOF(order); k++) {
        enum packer_reason r = order[k];
        cpu_set_t ids;
        int n = 0;
        bool unknown = false;
        char list[128];

        CPU_ZERO(&ids);
        for (int i = 0; i < out->n_domains; i++) {
            const struct packer_domain_info *d = &out->domains[i];
            if (d->n_cores == 0 || d->packed || d->reason != r)
                continue;
            n++;
            if (d->id >= 0 && d->id < CPU_SETSIZE)
                CPU_SET(d->id, &ids);
            else
                unknown = true;
        }
        if (n == 0)
            continue;
        if (cpulist_format(&ids, list, sizeof(list)) < 0)
            snprintf(list, sizeof(list), "...");
        sappend(buf, size, "%s %s%s %s%s%s", *first ? "" : ";", kind, n > 1 ? "s" : "", list,
                unknown && list[0] ? "," : "", unknown ? "unknown" : "");
        if (unrestricted_form)
            sappend(buf, size, " unrestricted (%s)", packer_reason_describe(r));
        else
            sappend(buf, size, ": %s", packer_reason_describe(r));
        *first = false;
    }
}

/* Several packages weighed one by one (packer-benefit.c): what each got.
 * The estimates behind it are in benefit_explain. */
static void describe_weighed(const struct packer_input *in, const struct packer_plan *out, char *buf, size_t size)
{
    char cores[96], cpus[96];
    bool first = true;
    sappend(buf, size, "weighed per %s:", domain_kind(in->params->domain));
    for (int i = 0; i < out->n_domains; i++) {
        const struct packer_domain_info *d = &out->domains[i];
        if (d->n_cores == 0)
            continue;
        sappend(buf, size, "%s %s %d ", first ? "" : ";", domain_kind(in->params->domain), d->id);
        first = false;
        if (!d->packed) {
            sappend(buf, size, "unrestricted (%s)", packer_reason_describe(d->reason));
            continue;
        }
        describe_cores(in, out, i, cores, sizeof(cores), cpus, sizeof(cpus));
        sappend(buf, size, "%s core%s %s", d->reason == PACKER_REASON_ISOLATED ? "isolated on idle" : "packed on",
                d->n_chosen > 1 ? "s" : "", cores);
    }
}

/* The wanted plan in words, into buf. */
static void describe_wanted(const struct packer_input *in, const struct packer_plan *out, char *buf, size_t size)
{
    char a[32], b[32], c[32], cores[96], cpus[96];

    buf[0] = '\0';
    if (out->benefit_per_domain && out->wanted_reason != PACKER_REASON_RUN_DELAY) {
        describe_weighed(in, out, buf, size);
        return;
    }
    switch (out->wanted_reason) {
    case PACKER_REASON_IDLE_MACHINE: {
        unsigned permille =
            out->capacity_milli ? (unsigned)((uint64_t)out->util_milli * 1000 / out->capacity_milli) : 0;
        sappend(buf, size, "fallback: machine nearly idle (util %s < %s)", format_percent(a, sizeof(a), permille),
                format_percent(b, sizeof(b), in->params->idle_machine_milli));
        return;
    }
    case PACKER_REASON_NO_DATA:
    case PACKER_REASON_RUN_DELAY:
        sappend(buf, size, "fallback: %s", packer_reason_describe(out->wanted_reason));
        return;
    case PACKER_REASON_NO_BENEFIT:
        sappend(buf, size, out->benefit_probed ? "fallback: %s" : "fallback: packing would not pay: %s",
                out->benefit_explain);
        return;
    case PACKER_REASON_ISOLATED:
        describe_cores(in, out, -1, cores, sizeof(cores), cpus, sizeof(cpus));
        sappend(buf, size, "isolated on idle core%s %s (CPU%s %s): %s", strpbrk(cores, ",-") ? "s" : "", cores,
                n_cpus_chosen(in, out) > 1 ? "s" : "", cpus, out->benefit_explain);
        return;
    default:
        break;
    }

    int n_live = 0;
    for (int i = 0; i < out->n_domains; i++)
        n_live += out->domains[i].n_cores > 0;

    if (n_live <= 1) {
        const struct packer_domain_info *d = out->n_domains ? &out->domains[0] : NULL;
        if (out->wanted_reason == PACKER_REASON_PACKED) {
            describe_cores(in, out, -1, cores, sizeof(cores), cpus, sizeof(cpus));
            sappend(buf, size, "packed on core%s %s (CPU%s %s): spare %s covers jitter %s + headroom %s",
                    d && d->n_chosen > 1 ? "s" : "", cores, n_cpus_chosen(in, out) > 1 ? "s" : "", cpus,
                    format_milli(a, sizeof(a), d ? d->chosen_spare_milli : 0),
                    format_milli(b, sizeof(b), out->jitter_load_milli),
                    format_milli(c, sizeof(c), in->params->headroom_milli));
        } else if (out->wanted_reason == PACKER_REASON_NO_ROOM) {
            sappend(buf, size, "fallback: no busy core with room (spare %s < jitter %s + headroom %s)",
                    format_milli(a, sizeof(a), d ? d->busy_spare_milli : 0),
                    format_milli(b, sizeof(b), out->jitter_load_milli),
                    format_milli(c, sizeof(c), in->params->headroom_milli));
        } else {
            sappend(buf, size, "fallback: %s", packer_reason_describe(out->wanted_reason));
        }
        return;
    }

    /* Several domains: packing domains one by one, then the others grouped
     * by reason so a machine with many LLCs still fits on one line. */
    bool first = true;
    if (out->wanted_reason != PACKER_REASON_PACKED) {
        sappend(buf, size, "fallback:");
        append_fallback_groups(in, out, buf, size, &first, false);
        return;
    }
    sappend(buf, size, "packed:");
    for (int i = 0; i < out->n_domains; i++) {
        const struct packer_domain_info *d = &out->domains[i];
        if (d->n_cores == 0 || !d->packed)
            continue;
        describe_cores(in, out, i, cores, sizeof(cores), cpus, sizeof(cpus));
        sappend(buf, size, "%s %s %d on core%s %s (spare %s)", first ? "" : ";", domain_kind(in->params->domain), d->id,
                d->n_chosen > 1 ? "s" : "", cores, format_milli(a, sizeof(a), d->chosen_spare_milli));
        first = false;
    }
    append_fallback_groups(in, out, buf, size, &first, true);
    sappend(buf, size, "; need jitter %s + headroom %s", format_milli(b, sizeof(b), out->jitter_load_milli),
            format_milli(c, sizeof(c), in->params->headroom_milli));
}

void packer_describe(const struct packer_input *in, struct packer_plan *out)
{
    char wanted[PACKER_SUMMARY_MAX];
    describe_wanted(in, out, wanted, sizeof(wanted));
    out->summary[0] = '\0';
    if (out->wait == PACKER_WAIT_HOLD)
        sappend(out->summary, sizeof(out->summary),
                "holding: new plan must hold %u ms (%llu ms left): ", in->params->hold_ms,
                (unsigned long long)out->wait_left_ms);
    else if (out->wait == PACKER_WAIT_MIN_CHANGE)
        sappend(out->summary, sizeof(out->summary),
                "holding: mask changes at most once per %u ms (%llu ms left): ", in->params->min_change_ms,
                (unsigned long long)out->wait_left_ms);
    sappend(out->summary, sizeof(out->summary), "%s", wanted);
    if (in->delay_note && in->delay_note[0])
        sappend(out->summary, sizeof(out->summary), " (%s)", in->delay_note);
}

void packer_describe_error(const struct packer_input *in, int error, struct packer_plan *out)
{
    if (error == -E2BIG && in && in->params)
        snprintf(out->summary, sizeof(out->summary), "fallback: no plan (more than %d %s domains)", PACKER_MAX_DOMAINS,
                 domain_kind(in->params->domain));
    else
        snprintf(out->summary, sizeof(out->summary), "fallback: no plan (invalid input)");
}

const char *packer_packing_kind(const struct topology *topo, const cpu_set_t *mask, char *buf, size_t size)
{
    unsigned smt = 0, single = 0;
    for (int i = 0; i < topo->n_cores; i++) {
        const struct topo_core *c = &topo->cores[i];
        cpu_set_t in;
        CPU_AND(&in, &c->online, mask);
        if (CPU_COUNT(&in) == 0)
            continue;
        if (c->n_online >= 2)
            smt++;
        else
            single++;
    }
    if (smt && single)
        snprintf(buf, size, "on idle SMT siblings of %u busy core%s, time-sharing %u busy CPU%s without one", smt,
                 smt == 1 ? "" : "s", single, single == 1 ? "" : "s");
    else if (smt)
        snprintf(buf, size, "on idle SMT siblings of %u busy core%s", smt, smt == 1 ? "" : "s");
    else if (single)
        snprintf(buf, size,
                 "time-sharing %u busy CPU%s without an SMT sibling (the jitter's run time is taken from "
                 "the busy work)",
                 single, single == 1 ? "" : "s");
    else
        snprintf(buf, size, "on no online CPU");
    return buf;
}
