/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The packing policy, on topologies built by hand: POWER9 SMT4 (with and
 * without offline threads, LLC pairs), x86 two-socket SMT2, this 2-CPU
 * machine; every fallback, domains, and the hysteresis over time. */
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "packer.h"
#include "power_capacity.h"
#include "topology.h"
#include "util.h"

#define MAX_TEST_CPUS 256
#define MAX_TEST_CORES 128

/* ---- topology builder ---- */

struct topo_spec {
    int packages;
    int cores_per_pkg;
    int smt;
    int cores_per_llc;   /* 0: one LLC per package */
    int cores_per_node;  /* 0: one NUMA node per package */
    bool interleaved;    /* x86 numbering: thread t of core c is CPU c + t * n_cores */
    const char *offline; /* cpulist of offline CPUs, NULL for none */
};

struct fake_topo {
    struct topology t;
    struct topo_cpu cpus[MAX_TEST_CPUS];
    struct topo_core cores[MAX_TEST_CORES];
};

static void topo_build(struct fake_topo *f, const struct topo_spec *s)
{
    int n_cores = s->packages * s->cores_per_pkg;
    int n_cpus = n_cores * s->smt;
    cpu_set_t offline;

    assert_true(n_cores <= MAX_TEST_CORES && n_cpus <= MAX_TEST_CPUS);
    CPU_ZERO(&offline);
    if (s->offline)
        assert_int_equal(cpulist_parse(s->offline, &offline), 0);

    memset(f, 0, sizeof(*f));
    f->t.cpus = f->cpus;
    f->t.cores = f->cores;
    f->t.n_cpus = n_cpus;
    f->t.n_cores = n_cores;
    f->t.n_packages = s->packages;
    int per_llc = s->cores_per_llc ? s->cores_per_llc : s->cores_per_pkg;
    int per_node = s->cores_per_node ? s->cores_per_node : s->cores_per_pkg;
    f->t.n_llcs = n_cores / per_llc;
    f->t.n_nodes = n_cores / per_node;

    for (int c = 0; c < n_cores; c++) {
        struct topo_core *core = &f->cores[c];
        core->index = c;
        core->package = c / s->cores_per_pkg;
        core->core_id = c % s->cores_per_pkg;
        core->llc = c / per_llc;
        core->node = c / per_node;
        core->n_threads = s->smt;
        for (int t = 0; t < s->smt; t++) {
            int cpu = s->interleaved ? c + t * n_cores : c * s->smt + t;
            struct topo_cpu *tc = &f->cpus[cpu];
            tc->cpu = cpu;
            tc->present = true;
            tc->online = !CPU_ISSET(cpu, &offline);
            tc->core = c;
            tc->package = core->package;
            tc->llc = core->llc;
            tc->node = core->node;
            CPU_SET(cpu, &core->threads);
            CPU_SET(cpu, &f->t.present);
            if (tc->online) {
                CPU_SET(cpu, &core->online);
                CPU_SET(cpu, &f->t.online);
                core->n_online++;
            }
        }
    }
}

/* "0=900 4=1000": CPUs not named are at 0; offline CPUs get -1. */
static void util_build(const struct topology *t, const char *spec, int *util)
{
    for (int cpu = 0; cpu < t->n_cpus; cpu++)
        util[cpu] = CPU_ISSET(cpu, &t->online) ? 0 : -1;
    const char *p = spec;
    int cpu, val, n;
    while (p && sscanf(p, " %d=%d%n", &cpu, &val, &n) == 2) {
        assert_true(cpu >= 0 && cpu < t->n_cpus);
        util[cpu] = val;
        p += n;
    }
}

/* What the packer takes of a configuration: its parameters and the
 * capacity table. */
struct test_config {
    struct policy_params policy;
    struct capacity_table capacity;
};

static void config_build(struct test_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    capacity_table_default(&cfg->capacity);
    cfg->policy.busy_threshold_milli = 125;
    cfg->policy.headroom_milli = 100;
    cfg->policy.idle_machine_milli = 50;
    cfg->policy.hold_ms = 0;
    cfg->policy.min_change_ms = 0;
    cfg->policy.domain = DOMAIN_PACKAGE;
}

static struct packer_plan plan; /* ~45 KB: kept off the stack */

/* Rotates through a few buffers so two results can be compared. */
static char *mask_str(const cpu_set_t *set)
{
    static char bufs[4][512];
    static unsigned next;
    char *buf = bufs[next++ % 4];
    assert_int_equal(cpulist_format(set, buf, sizeof(bufs[0])), 0);
    return buf;
}

/* ---- single-shot cases (no hysteresis: hold and min-change 0) ---- */

struct plan_case {
    const char *name;
    struct topo_spec topo; /* built by hand, or */
    const char *tree;      /* a fixture tree of a real machine */
    const char *util;
    const char *jitter_util; /* per-CPU jitter share, NULL for none */
    unsigned jitter_milli;
    enum pack_domain domain;
    unsigned headroom_milli; /* 0: default 100 */
    const char *mask;        /* expected jitter mask; NULL: no restriction */
    enum packer_reason reason;
    const char *summary;     /* exact, or NULL */
    const char *summary_has; /* substring, or NULL */
};

#define P9_SMT4_4C \
    { \
        .packages = 1, .cores_per_pkg = 4, .smt = 4, .cores_per_llc = 2 \
    }
#define X86_2S_SMT2 \
    { \
        .packages = 2, .cores_per_pkg = 4, .smt = 2, .interleaved = true \
    }
#define THIS_MACHINE \
    { \
        .packages = 1, .cores_per_pkg = 2, .smt = 1 \
    }

static const struct plan_case plan_cases[] = {
    {
        .name = "POWER9 SMT4: one thread at 90% on cores 0 and 1, spare 0.6 each, one core holds 0.3",
        .topo = P9_SMT4_4C,
        .util = "0=900 4=900",
        .jitter_milli = 200,
        .mask = "0-3",
        .reason = PACKER_REASON_PACKED,
        .summary = "packed on core 0 (CPUs 0-3): spare 0.6 covers jitter 0.2 + headroom 0.1",
    },
    {
        .name = "POWER9 SMT4: most spare first, core 2 at 60% beats core 0 at 100%",
        .topo = P9_SMT4_4C,
        .util = "0=1000 8=600",
        .jitter_milli = 500,
        .mask = "8-11",
        .reason = PACKER_REASON_PACKED,
        .summary = "packed on core 2 (CPUs 8-11): spare 0.9 covers jitter 0.5 + headroom 0.1",
    },
    {
        .name = "POWER9 SMT4: threads at 100% leave 0.5 each; 0.55 needs two cores",
        .topo = P9_SMT4_4C,
        .util = "0=1000 4=1000 8=1000",
        .jitter_milli = 450,
        .mask = "0-7",
        .reason = PACKER_REASON_PACKED,
        .summary = "packed on cores 0-1 (CPUs 0-7): spare 1 covers jitter 0.45 + headroom 0.1",
    },
    {
        .name = "POWER9 SMT4: a full core (4 threads busy) has no room, the other busy core does",
        .topo = P9_SMT4_4C,
        .util = "0=1000 1=1000 2=1000 3=1000 4=800",
        .jitter_milli = 200,
        .mask = "4-7",
        .reason = PACKER_REASON_PACKED,
    },
    {
        .name = "POWER9 SMT4: the only busy core is full: fallback, no room",
        .topo = P9_SMT4_4C,
        .util = "0=1000 1=1000 2=1000 3=1000",
        .jitter_milli = 100,
        .reason = PACKER_REASON_NO_ROOM,
        .summary = "fallback: no busy core with room (spare 0 < jitter 0.1 + headroom 0.1)",
    },
    {
        .name = "POWER9 SMT4: busy cores' spare together short of jitter + headroom",
        .topo = P9_SMT4_4C,
        .util = "0=1000 4=1000",
        .jitter_milli = 950,
        .reason = PACKER_REASON_NO_ROOM,
        .summary = "fallback: no busy core with room (spare 1 < jitter 0.95 + headroom 0.1)",
    },
    {
        .name = "POWER9 SMT4: every core busy, nothing idle to protect",
        .topo = P9_SMT4_4C,
        .util = "0=900 4=900 8=900 12=900",
        .jitter_milli = 100,
        .reason = PACKER_REASON_ALL_BUSY,
        .summary = "fallback: every core busy",
    },
    {
        .name = "POWER9 SMT4: machine nearly idle (one thread at 20% of 6 threads' capacity)",
        .topo = P9_SMT4_4C,
        .util = "0=200",
        .jitter_milli = 50,
        .reason = PACKER_REASON_IDLE_MACHINE,
        .summary = "fallback: machine nearly idle (util 3.3% < 5%)",
    },
    {
        .name = "POWER9 SMT4: load spread thin, no core reaches 12.5% of 1.5",
        .topo = P9_SMT4_4C,
        .util = "0=40 1=40 2=40 3=40 4=40 5=40 6=40 7=40 8=40 9=40 10=40 11=40 12=40 13=40 14=40 15=40",
        .jitter_milli = 50,
        .reason = PACKER_REASON_NO_BUSY,
        .summary = "fallback: no busy core",
    },
    {
        .name = "POWER9 SMT4: busy threshold is 12.5% of core capacity: 190 is busy",
        .topo = P9_SMT4_4C,
        .util = "0=190 4=1000",
        .jitter_milli = 700,
        .headroom_milli = 90,
        .mask = "0-3",
        .reason = PACKER_REASON_PACKED,
    },
    {
        .name = "POWER9 SMT4: 180 (< 187.5) is not busy and never receives jitter",
        .topo = P9_SMT4_4C,
        .util = "0=180 4=1000",
        .jitter_milli = 700,
        .headroom_milli = 90,
        .reason = PACKER_REASON_NO_ROOM,
    },
    {
        .name = "POWER9 SMT4 with 2 threads of core 0 offline: capacity 1.25 leaves 0.25, core 1 is chosen",
        .topo = {.packages = 1, .cores_per_pkg = 4, .smt = 4, .offline = "2-3"},
        .util = "0=1000 4=1000",
        .jitter_milli = 200,
        .mask = "4-7",
        .reason = PACKER_REASON_PACKED,
    },
    {
        .name = "POWER9 SMT4, all threads online: same load, core 0 is chosen",
        .topo = {.packages = 1, .cores_per_pkg = 4, .smt = 4},
        .util = "0=1000 4=1000",
        .jitter_milli = 200,
        .mask = "0-3",
        .reason = PACKER_REASON_PACKED,
    },
    {
        .name = "POWER9 SMT4 with core 0 down to one thread: 170 is busy at capacity 1.0",
        .topo = {.packages = 1, .cores_per_pkg = 4, .smt = 4, .offline = "1-3"},
        .util = "0=170 4=1000",
        .jitter_milli = 900,
        .mask = "0,4-7",
        .reason = PACKER_REASON_PACKED,
    },
    {
        .name = "this machine: CPU 0 at 70%, CPU 1 idle: 0.3 spare holds small jitter",
        .topo = THIS_MACHINE,
        .util = "0=700",
        .jitter_milli = 100,
        .mask = "0",
        .reason = PACKER_REASON_PACKED,
        .summary = "packed on core 0 (CPU 0): spare 0.3 covers jitter 0.1 + headroom 0.1",
    },
    {
        .name = "this machine: jitter 0.25 + headroom 0.1 does not fit in 0.3",
        .topo = THIS_MACHINE,
        .util = "0=700",
        .jitter_milli = 250,
        .reason = PACKER_REASON_NO_ROOM,
    },
    {
        .name = "this machine: jitter's own load is not counted against its core",
        .topo = THIS_MACHINE,
        .util = "0=800",
        .jitter_util = "0=100",
        .jitter_milli = 100,
        .mask = "0",
        .reason = PACKER_REASON_PACKED,
        .summary = "packed on core 0 (CPU 0): spare 0.3 covers jitter 0.1 + headroom 0.1",
    },
    {
        .name = "this machine: a core busy only with jitter is not busy",
        .topo = THIS_MACHINE,
        .util = "0=700 1=200",
        .jitter_util = "1=200",
        .jitter_milli = 200,
        .mask = "0",
        .reason = PACKER_REASON_PACKED,
    },
    {
        .name = "this machine: both CPUs busy",
        .topo = THIS_MACHINE,
        .util = "0=700 1=500",
        .jitter_milli = 100,
        .reason = PACKER_REASON_ALL_BUSY,
    },
    {
        .name = "this machine: online CPU without a sample is not busy; the other packs",
        .topo = THIS_MACHINE,
        .util = "0=700 1=-1",
        .jitter_milli = 100,
        .mask = "0",
        .reason = PACKER_REASON_PACKED,
    },
    {
        .name = "this machine: no samples at all",
        .topo = THIS_MACHINE,
        .util = "0=-1 1=-1",
        .jitter_milli = 100,
        .reason = PACKER_REASON_NO_DATA,
        .summary = "fallback: no utilisation data",
    },
    {
        .name = "x86 2S SMT2: a busy core per socket, each socket packs on its own",
        .topo = X86_2S_SMT2,
        .util = "0=1000 5=1000",
        .jitter_milli = 100,
        .mask = "0,5,8,13",
        .reason = PACKER_REASON_PACKED,
        .summary = "packed: package 0 on core 0 (spare 0.25); package 1 on core 5 (spare 0.25); "
                   "need jitter 0.1 + headroom 0.1",
    },
    {
        .name = "x86 2S SMT2: socket 1 has no busy core: jitter is not pulled to socket 0",
        .topo = X86_2S_SMT2,
        .util = "0=1000",
        .jitter_milli = 100,
        .mask = "0,4-8,12-15",
        .reason = PACKER_REASON_PACKED,
        .summary_has = "package 1 unrestricted (no busy core)",
    },
    {
        .name = "x86 2S SMT2: socket 0 has no room, socket 1 packs",
        .topo = X86_2S_SMT2,
        .util = "0=1000 8=1000 5=1000",
        .jitter_milli = 100,
        .mask = "0-3,5,8-11,13",
        .reason = PACKER_REASON_PACKED,
        .summary_has = "package 0 unrestricted (no busy core with room)",
    },
    {
        .name = "x86 2S SMT2: no socket can pack: reason of the most loaded one",
        .topo = X86_2S_SMT2,
        .util = "0=1000 8=1000 1=1000 9=1000 5=100",
        .jitter_milli = 100,
        .reason = PACKER_REASON_NO_ROOM,
        .summary = "fallback: package 0: no busy core with room; package 1: no busy core",
    },
    {
        .name = "POWER9 LLC pairs, domain package: one core covers all",
        .topo = P9_SMT4_4C,
        .util = "0=900 8=900",
        .jitter_milli = 200,
        .mask = "0-3",
        .reason = PACKER_REASON_PACKED,
    },
    {
        .name = "POWER9 LLC pairs, domain llc: each LLC packs on its own busy core",
        .topo = P9_SMT4_4C,
        .util = "0=900 8=900",
        .jitter_milli = 200,
        .domain = DOMAIN_LLC,
        .mask = "0-3,8-11",
        .reason = PACKER_REASON_PACKED,
        .summary = "packed: LLC 0 on core 0 (spare 0.6); LLC 1 on core 2 (spare 0.6); "
                   "need jitter 0.2 + headroom 0.1",
    },
    {
        .name = "POWER9 LLC pairs, domain llc: the idle LLC keeps its CPUs",
        .topo = P9_SMT4_4C,
        .util = "0=900",
        .jitter_milli = 200,
        .domain = DOMAIN_LLC,
        .mask = "0-3,8-15",
        .reason = PACKER_REASON_PACKED,
        .summary_has = "LLC 1 unrestricted (no busy core)",
    },
    {
        .name = "POWER9 LLC pairs, domain package: the idle LLC stays idle",
        .topo = P9_SMT4_4C,
        .util = "0=900",
        .jitter_milli = 200,
        .mask = "0-3",
        .reason = PACKER_REASON_PACKED,
    },
    {
        .name = "one package, two NUMA nodes, domain numa: each node packs",
        .topo = {.packages = 1, .cores_per_pkg = 4, .smt = 4, .cores_per_node = 2},
        .util = "4=900 12=900",
        .jitter_milli = 200,
        .domain = DOMAIN_NUMA,
        .mask = "4-7,12-15",
        .reason = PACKER_REASON_PACKED,
        .summary_has = "node 0 on core 1",
    },
    {
        .name = "one package, two NUMA nodes, domain package: one core",
        .topo = {.packages = 1, .cores_per_pkg = 4, .smt = 4, .cores_per_node = 2},
        .util = "4=900 12=900",
        .jitter_milli = 200,
        .mask = "4-7",
        .reason = PACKER_REASON_PACKED,
    },
    {
        .name = "domain numa: a node whose cores are all busy keeps all its CPUs",
        .topo = {.packages = 1, .cores_per_pkg = 4, .smt = 4, .cores_per_node = 2},
        .util = "0=900 4=900 8=900",
        .jitter_milli = 200,
        .domain = DOMAIN_NUMA,
        .mask = "0-11",
        .reason = PACKER_REASON_PACKED,
        .summary_has = "node 0 unrestricted (every core busy)",
    },
};

/* One plan from a fresh state on t, checked against c: the outcome, and
 * per-core details that agree with the mask. */
static void check_case(const struct plan_case *c, const struct topology *t, uint64_t now_ms)
{
    struct test_config cfg;
    struct packer_state st;
    int util[MAX_TEST_CPUS], jitter[MAX_TEST_CPUS];
    cpu_set_t expect;
    bool restricted = c->mask != NULL;

    print_message("case: %s\n", c->name);
    assert_true(t->n_cpus <= MAX_TEST_CPUS);
    config_build(&cfg);
    cfg.policy.domain = c->domain;
    if (c->headroom_milli)
        cfg.policy.headroom_milli = c->headroom_milli;
    util_build(t, c->util, util);
    if (c->jitter_util) {
        util_build(t, c->jitter_util, jitter);
        for (int i = 0; i < t->n_cpus; i++)
            jitter[i] = MAX(jitter[i], 0);
    }
    packer_state_init(&st);
    struct packer_input in = {
        .topo = t,
        .cap = &cfg.capacity,
        .cpu_util_milli = util,
        .n_cpu_util = t->n_cpus,
        .cpu_jitter_milli = c->jitter_util ? jitter : NULL,
        .jitter_load_milli = c->jitter_milli,
        .params = &cfg.policy,
        .now_ms = now_ms,
    };

    assert_int_equal(packer_plan(&in, &st, &plan), 0);
    print_message("  -> %s [%s] %s\n", plan.restricted ? mask_str(&plan.mask) : "unrestricted",
                  packer_reason_to_string(plan.reason), plan.summary);
    assert_int_equal(plan.wait, PACKER_WAIT_NONE);
    assert_int_equal(plan.restricted, restricted);
    assert_int_equal(plan.reason, c->reason);
    assert_int_equal(plan.wanted_reason, c->reason);
    if (restricted) {
        assert_int_equal(cpulist_parse(c->mask, &expect), 0);
        assert_string_equal(mask_str(&plan.mask), mask_str(&expect));
        assert_true(CPU_EQUAL(&plan.mask, &expect));
        assert_true(plan.changed);
    } else {
        /* "No restriction" hands back every online CPU. */
        assert_true(CPU_EQUAL(&plan.mask, &t->online));
        assert_false(plan.changed);
    }
    if (c->summary)
        assert_string_equal(plan.summary, c->summary);
    if (c->summary_has)
        assert_non_null(strstr(plan.summary, c->summary_has));

    /* Per-core details agree with the mask: chosen cores are busy, and a
     * restricted mask never holds a core that is neither chosen nor in a
     * domain that fell back. */
    assert_int_equal(plan.n_cores, t->n_cores);
    for (int i = 0; i < plan.n_cores; i++) {
        const struct packer_core_info *ci = &plan.cores[i];
        if (ci->chosen)
            assert_true(ci->busy);
        if (ci->busy)
            assert_true(ci->util_milli * 1000 >= 100 * ci->capacity_milli);
        if (restricted && ci->domain >= 0 && plan.domains[ci->domain].packed) {
            cpu_set_t x;
            CPU_AND(&x, &t->cores[ci->core].online, &plan.mask);
            assert_int_equal(CPU_COUNT(&x) > 0, ci->chosen);
            assert_int_equal(ci->applied, ci->chosen);
        }
    }
}

static void test_plan_cases(void **state)
{
    static struct fake_topo f; /* large: kept off the stack */
    for (size_t i = 0; i < ELEMENTSOF(plan_cases); i++) {
        topo_build(&f, &plan_cases[i].topo);
        check_case(&plan_cases[i], &f.t, 1000);
    }
}

/* ---- a machine, its configuration, state and input: for one plan, or a
 * sequence of them over time ---- */

struct fx {
    struct fake_topo f;
    struct test_config cfg;
    struct packer_state st;
    int util[MAX_TEST_CPUS];
    struct packer_input in;
};

static void fx_init(struct fx *s, const struct topo_spec *spec, unsigned hold_ms, unsigned min_change_ms)
{
    memset(s, 0, sizeof(*s));
    topo_build(&s->f, spec);
    config_build(&s->cfg);
    s->cfg.policy.hold_ms = hold_ms;
    s->cfg.policy.min_change_ms = min_change_ms;
    packer_state_init(&s->st);
    s->in = (struct packer_input){.topo = &s->f.t,
                                  .cap = &s->cfg.capacity,
                                  .cpu_util_milli = s->util,
                                  .n_cpu_util = s->f.t.n_cpus,
                                  .params = &s->cfg.policy};
}

static struct fx fx_storage; /* large: kept off the stack */

/* A plan from a fresh state, as after a start; in `plan`. */
static int plan_fresh(struct fx *s)
{
    packer_state_init(&s->st);
    return packer_plan(&s->in, &s->st, &plan);
}

/* The next plan, from the state the last one left. */
static int plan_next(struct fx *s) { return packer_plan(&s->in, &s->st, &plan); }

/* Capacity and spare per core follow the online thread count. */
static void test_core_details(void **state)
{
    struct fx *s = &fx_storage;

    /* core 0: SMT4, core 1: 2 online (SMT2 1.25), core 2: 1 online, core 3: none */
    fx_init(s, &(struct topo_spec){.packages = 1, .cores_per_pkg = 4, .smt = 4, .offline = "6-7,9-11,12-15"}, 0, 0);
    util_build(&s->f.t, "0=900 1=300 4=1000 8=100", s->util);
    s->in.jitter_load_milli = 100;
    assert_int_equal(plan_fresh(s), 0);
    assert_int_equal(plan.cores[0].capacity_milli, 1500);
    assert_int_equal(plan.cores[0].util_milli, 1200);
    assert_int_equal(plan.cores[0].spare_milli, 300);
    assert_true(plan.cores[0].busy);
    assert_int_equal(plan.cores[1].capacity_milli, 1250);
    assert_int_equal(plan.cores[1].spare_milli, 250);
    assert_int_equal(plan.cores[2].n_online, 1);
    assert_int_equal(plan.cores[2].capacity_milli, 1000);
    assert_false(plan.cores[2].busy); /* 100 < 125 */
    assert_int_equal(plan.cores[3].n_online, 0);
    assert_false(plan.cores[3].known);
    assert_int_equal(plan.cores[3].domain, -1);
    assert_int_equal(plan.capacity_milli, 3750);
    assert_int_equal(plan.util_milli, 2300);
    assert_int_equal(plan.n_domains, 1);
    assert_int_equal(plan.domains[0].n_cores, 3);
    assert_int_equal(plan.domains[0].n_busy, 2);
    assert_int_equal(plan.domains[0].busy_spare_milli, 550);
    /* most spare first: core 0 (0.3) covers 0.2 alone */
    assert_true(plan.cores[0].chosen);
    assert_false(plan.cores[1].chosen);
    assert_string_equal(mask_str(&plan.mask), "0-3");
}

/* A jitter task's share goes to the CPU it last ran on, though it ran on its
 * sibling too: the share is capped per core, not per CPU. */
static void test_jitter_share_capped_per_core(void **state)
{
    struct fx *s = &fx_storage;
    int jitter[MAX_TEST_CPUS] = {0};

    fx_init(s, &(struct topo_spec){.packages = 1, .cores_per_pkg = 2, .smt = 2}, 0, 0);
    util_build(&s->f.t, "0=900 1=100", s->util);
    jitter[1] = 300; /* more than CPU 1's own 0.1: it also ran on CPU 0 */
    s->in.cpu_jitter_milli = jitter;
    s->in.jitter_load_milli = 300;
    assert_int_equal(plan_fresh(s), 0);
    assert_int_equal(plan.cores[0].jitter_milli, 300);
    assert_int_equal(plan.cores[0].util_milli, 700);  /* 1.0 - 0.3, not 1.0 - 0.1 */
    assert_int_equal(plan.cores[0].spare_milli, 550); /* 1.25 - 0.7 covers 0.3 + 0.1 */
    assert_true(plan.restricted);
    assert_string_equal(mask_str(&plan.mask), "0-1");
    /* A share larger than the whole core's load is capped at that load. */
    jitter[0] = 2000;
    assert_int_equal(plan_fresh(s), 0);
    assert_int_equal(plan.cores[0].jitter_milli, 1000);
    assert_int_equal(plan.cores[0].util_milli, 0);
}

/* A CPU beyond n_cpu_util or a NULL util array is "no sample". */
static void test_short_util_array(void **state)
{
    struct fx *s = &fx_storage;
    int util[1] = {700};

    fx_init(s, &(struct topo_spec)THIS_MACHINE, 0, 0);
    s->in.cpu_util_milli = util;
    s->in.n_cpu_util = 1;
    s->in.jitter_load_milli = 100;
    assert_int_equal(plan_fresh(s), 0);
    assert_false(plan.cores[1].known);
    assert_string_equal(mask_str(&plan.mask), "0");

    s->in.cpu_util_milli = NULL;
    s->in.n_cpu_util = 0;
    assert_int_equal(plan_fresh(s), 0);
    assert_false(plan.restricted);
    assert_int_equal(plan.reason, PACKER_REASON_NO_DATA);
}

static void test_invalid_input(void **state)
{
    struct fx *s = &fx_storage;

    fx_init(s, &(struct topo_spec)THIS_MACHINE, 0, 0);
    util_build(&s->f.t, "0=700 1=0", s->util);
    s->in.jitter_load_milli = 100;
    assert_int_equal(packer_plan(NULL, &s->st, &plan), -EINVAL);
    assert_false(plan.restricted);
    assert_int_equal(packer_plan(&s->in, NULL, &plan), -EINVAL);
    assert_int_equal(packer_plan(&s->in, &s->st, NULL), -EINVAL);
    s->in.params = NULL;
    assert_int_equal(plan_next(s), -EINVAL);
    assert_false(plan.restricted);
    s->in.params = &s->cfg.policy;
    s->in.topo = NULL;
    assert_int_equal(plan_next(s), -EINVAL);
    /* the failed calls left the state alone: still no plan applied */
    assert_false(s->st.restricted);
    assert_false(s->st.has_candidate);
}

/* More domains than the plan can describe is refused, not truncated. */
static void test_too_many_domains(void **state)
{
    struct fx *s = &fx_storage;

    fx_init(s, &(struct topo_spec){.packages = 1, .cores_per_pkg = 4, .smt = 1}, 0, 0);
    /* give every core its own LLC number, spread past the limit */
    for (int c = 0; c < 4; c++)
        s->f.cores[c].llc = c;
    s->cfg.policy.domain = DOMAIN_LLC;
    assert_int_equal(plan_next(s), 0);
    assert_int_equal(plan.n_domains, 4);

    /* 300 single-CPU cores with an LLC each */
    static struct topology big;
    static struct topo_core cores[300];
    memset(&big, 0, sizeof(big));
    memset(cores, 0, sizeof(cores));
    big.n_cores = 300;
    big.n_cpus = 300;
    big.cores = cores;
    for (int c = 0; c < 300; c++) {
        cores[c].index = c;
        cores[c].llc = c;
        cores[c].n_online = cores[c].n_threads = 1;
        CPU_SET(c, &cores[c].online);
        CPU_SET(c, &big.online);
    }
    static int big_util[300];
    s->in.topo = &big;
    s->in.cpu_util_milli = big_util;
    s->in.n_cpu_util = 300;
    assert_int_equal(plan_next(s), -E2BIG);
    assert_false(plan.restricted);
    assert_true(CPU_EQUAL(&plan.mask, &big.online));
}

/* ---- hysteresis: sequences over time ---- */

/* One tick: returns the applied mask as text ("-" when unrestricted). */
static const char *seq_tick(struct fx *s, uint64_t now_ms, const char *util, unsigned jitter_milli)
{
    util_build(&s->f.t, util, s->util);
    s->in.now_ms = now_ms;
    s->in.jitter_load_milli = jitter_milli;
    assert_int_equal(plan_next(s), 0);
    return plan.restricted ? mask_str(&plan.mask) : "-";
}

static void test_hold_before_apply(void **state)
{
    struct fx *s = &fx_storage;
    fx_init(s, &(struct topo_spec)P9_SMT4_4C, 1000, 0);

    /* the plan must be wanted for hold_ms before it applies */
    assert_string_equal(seq_tick(s, 0, "0=900", 200), "-");
    assert_int_equal(plan.wait, PACKER_WAIT_HOLD);
    assert_int_equal(plan.wait_left_ms, 1000);
    assert_true(plan.wanted_restricted);
    assert_string_equal(mask_str(&plan.wanted_mask), "0-3");
    assert_int_equal(plan.reason, PACKER_REASON_NONE);
    assert_string_equal(plan.summary, "holding: new plan must hold 1000 ms (1000 ms left): "
                                      "packed on core 0 (CPUs 0-3): spare 0.6 covers jitter 0.2 + headroom 0.1");
    assert_string_equal(seq_tick(s, 250, "0=900", 200), "-");
    assert_string_equal(seq_tick(s, 750, "0=900", 200), "-");
    assert_int_equal(plan.wait_left_ms, 250);
    assert_false(plan.changed);
    assert_string_equal(seq_tick(s, 1000, "0=900", 200), "0-3");
    assert_true(plan.changed);
    assert_int_equal(plan.wait, PACKER_WAIT_NONE);
    assert_int_equal(plan.reason, PACKER_REASON_PACKED);
    assert_string_equal(seq_tick(s, 1250, "0=900", 200), "0-3");
    assert_false(plan.changed);

    /* going back to no restriction holds too */
    assert_string_equal(seq_tick(s, 1500, "0=900 4=900 8=900 12=900", 200), "0-3");
    assert_int_equal(plan.wanted_reason, PACKER_REASON_ALL_BUSY);
    assert_non_null(
        strstr(plan.summary, "holding: new plan must hold 1000 ms (1000 ms left): fallback: every core busy"));
    /* another fallback reason, same "no restriction": the clock keeps running */
    assert_string_equal(seq_tick(s, 2000, "0=1000 1=1000 2=1000 3=1000", 200), "0-3");
    assert_int_equal(plan.wanted_reason, PACKER_REASON_NO_ROOM);
    assert_int_equal(plan.wait_left_ms, 500);
    assert_string_equal(seq_tick(s, 2500, "0=1000 1=1000 2=1000 3=1000", 200), "-");
    assert_true(plan.changed);
    assert_int_equal(plan.reason, PACKER_REASON_NO_ROOM);
}

static void test_candidate_restarts(void **state)
{
    struct fx *s = &fx_storage;
    fx_init(s, &(struct topo_spec)P9_SMT4_4C, 1000, 0);

    assert_string_equal(seq_tick(s, 0, "0=900 4=900", 200), "-");
    assert_string_equal(seq_tick(s, 500, "0=900 4=900", 200), "-");
    /* a different plan (two cores) replaces the candidate and restarts its clock */
    assert_string_equal(seq_tick(s, 750, "0=900 4=900", 800), "-");
    assert_int_equal(plan.wait_left_ms, 1000);
    assert_string_equal(seq_tick(s, 1000, "0=900 4=900", 800), "-");
    assert_string_equal(seq_tick(s, 1500, "0=900 4=900", 800), "-");
    assert_string_equal(seq_tick(s, 1750, "0=900 4=900", 800), "0-7");
}

/* Load flapping every tick between two plans never moves the mask. */
static void test_flapping_load(void **state)
{
    struct fx *s = &fx_storage;
    /* measured: none of the jitter runs on the busy threads, so the load
     * below really asks for one core, then two */
    static const int no_jitter[MAX_TEST_CPUS];
    fx_init(s, &(struct topo_spec)P9_SMT4_4C, 1000, 0);
    s->in.cpu_jitter_milli = no_jitter;

    uint64_t t = 0;
    for (; t <= 1000; t += 250)
        seq_tick(s, t, "0=900 4=900", 200);
    assert_string_equal(mask_str(&plan.mask), "0-3");
    int changes = 0;
    for (; t <= 20000; t += 250) {
        /* jitter alternating between 0.2 (one core) and 0.8 (two cores) */
        seq_tick(s, t, "0=900 4=900", (t / 250) % 2 ? 800 : 200);
        changes += plan.changed;
        assert_string_equal(mask_str(&plan.mask), "0-3");
    }
    assert_int_equal(changes, 0);

    /* the same flapping with hold 0 does move it every tick: the hold is what helps */
    fx_init(s, &(struct topo_spec)P9_SMT4_4C, 0, 0);
    s->in.cpu_jitter_milli = no_jitter;
    changes = 0;
    for (t = 0; t <= 5000; t += 250) {
        seq_tick(s, t, "0=900 4=900", (t / 250) % 2 ? 800 : 200);
        changes += plan.changed;
    }
    assert_int_equal(changes, 21);
}

static void test_min_change(void **state)
{
    struct fx *s = &fx_storage;
    fx_init(s, &(struct topo_spec)P9_SMT4_4C, 0, 5000);

    /* the first change is not delayed: nothing changed before it */
    assert_string_equal(seq_tick(s, 100, "0=900", 200), "0-3");
    assert_true(plan.changed);
    /* a new plan that has held (hold 0) still waits for min_change */
    assert_string_equal(seq_tick(s, 1100, "8=900", 200), "0-3");
    assert_int_equal(plan.wait, PACKER_WAIT_MIN_CHANGE);
    assert_int_equal(plan.wait_left_ms, 4000);
    assert_string_equal(plan.summary, "holding: mask changes at most once per 5000 ms (4000 ms left): "
                                      "packed on core 2 (CPUs 8-11): spare 0.6 covers jitter 0.2 + headroom 0.1");
    assert_string_equal(seq_tick(s, 5099, "8=900", 200), "0-3");
    assert_string_equal(seq_tick(s, 5100, "8=900", 200), "8-11");
    assert_true(plan.changed);
    assert_string_equal(seq_tick(s, 6000, "0=900 4=900 8=900 12=900", 200), "8-11");
    assert_int_equal(plan.wait_left_ms, 4100);
    assert_string_equal(seq_tick(s, 10100, "0=900 4=900 8=900 12=900", 200), "-");
}

/* With both: the longer of the two waits. */
static void test_hold_and_min_change(void **state)
{
    struct fx *s = &fx_storage;
    fx_init(s, &(struct topo_spec)P9_SMT4_4C, 1000, 3000);

    assert_string_equal(seq_tick(s, 0, "0=900", 200), "-");
    assert_string_equal(seq_tick(s, 1000, "0=900", 200), "0-3");
    assert_string_equal(seq_tick(s, 1500, "8=900", 200), "0-3");
    assert_int_equal(plan.wait, PACKER_WAIT_HOLD);
    assert_int_equal(plan.wait_left_ms, 2500); /* min-change ends at 4000 */
    assert_string_equal(seq_tick(s, 2500, "8=900", 200), "0-3");
    assert_int_equal(plan.wait, PACKER_WAIT_MIN_CHANGE);
    assert_string_equal(seq_tick(s, 3999, "8=900", 200), "0-3");
    assert_string_equal(seq_tick(s, 4000, "8=900", 200), "8-11");
}

/* A core hovering at the threshold stays busy until it drops below 80% of it. */
static void test_busy_hysteresis(void **state)
{
    struct fx *s = &fx_storage;
    /* SMT4 capacity 1500: enter at 187.5, leave below 150; from 1500 ms,
     * an explicit exit threshold of 120 */
    static const struct {
        uint64_t now_ms;
        const char *util;
        bool busy; /* core 1 */
    } ticks[] = {
        {0, "0=900 4=180", false},   {250, "0=900 4=190", true},   {500, "0=900 4=160", true},
        {750, "0=900 4=150", true},  {1000, "0=900 4=149", false}, {1250, "0=900 4=180", false},
        {1500, "0=900 4=190", true}, {1750, "0=900 4=181", true},  {2000, "0=900 4=179", false},
    };
    fx_init(s, &(struct topo_spec)P9_SMT4_4C, 0, 0);

    for (size_t i = 0; i < ELEMENTSOF(ticks); i++) {
        if (ticks[i].now_ms == 1500)
            s->in.busy_exit_milli = 120;
        seq_tick(s, ticks[i].now_ms, ticks[i].util, 100);
        if (plan.cores[1].busy != ticks[i].busy)
            fail_msg("%" PRIu64 " ms, %s: core 1 busy %d, want %d", ticks[i].now_ms, ticks[i].util, plan.cores[1].busy,
                     ticks[i].busy);
    }
}

/* Small shifts in spare between busy cores do not move the jitter. */
static void test_sticky_cores(void **state)
{
    struct fx *s = &fx_storage;
    fx_init(s, &(struct topo_spec)P9_SMT4_4C, 0, 0);

    assert_string_equal(seq_tick(s, 0, "0=900 4=950", 200), "0-3");
    /* core 1 now has more spare, but core 0 still covers the need alone */
    assert_string_equal(seq_tick(s, 250, "0=950 4=900", 200), "0-3");
    assert_false(plan.changed);
    assert_int_equal(plan.wait, PACKER_WAIT_NONE);
    /* core 0 can no longer cover it, even counting the jitter it carries
     * (1.5 - (1.5 - 0.2) = 0.2 < 0.3): core 1 takes over */
    assert_string_equal(seq_tick(s, 500, "0=1000 1=500 4=900", 200), "4-7");
    /* a fresh state picks the most spare */
    packer_state_init(&s->st);
    assert_string_equal(seq_tick(s, 750, "0=950 4=900", 200), "4-7");
    /* kept cores are given up when fewer would do: two kept, one suffices */
    packer_state_init(&s->st);
    assert_string_equal(seq_tick(s, 1000, "0=900 4=900", 800), "0-7");
    assert_string_equal(seq_tick(s, 1250, "0=900 4=900", 400), "0-3");
}

/* Packed jitter adds to its core's util; that must not read as "no room". */
static void test_jitter_on_its_core(void **state)
{
    struct fx *s = &fx_storage;
    fx_init(s, &(struct topo_spec)THIS_MACHINE, 0, 0);

    /* jitter 0.12 on CPU 1, intensive 0.7 on CPU 0: 0.3 spare covers 0.22 */
    assert_string_equal(seq_tick(s, 0, "0=700 1=120", 120), "0");
    /* the jitter moved in: CPU 0 reads 0.82, yet the plan stands */
    assert_string_equal(seq_tick(s, 250, "0=820 1=0", 120), "0");
    assert_int_equal(plan.wanted_reason, PACKER_REASON_PACKED);
    assert_int_equal(plan.cores[0].jitter_milli, 120);
    assert_int_equal(plan.cores[0].util_milli, 700);
    assert_int_equal(plan.cores[0].spare_milli, 300);
    /* the intensive load grows: now there is really no room */
    assert_string_equal(seq_tick(s, 500, "0=950 1=0", 120), "-");
    assert_int_equal(plan.reason, PACKER_REASON_NO_ROOM);
    /* no plan in effect, nothing is credited */
    seq_tick(s, 750, "0=820 1=0", 120);
    assert_int_equal(plan.cores[0].jitter_milli, 0);
    assert_false(plan.restricted);

    /* measured per-CPU jitter replaces the guess */
    int jitter[2] = {30, 0};
    fx_init(s, &(struct topo_spec)THIS_MACHINE, 0, 0);
    s->in.cpu_jitter_milli = jitter;
    assert_string_equal(seq_tick(s, 0, "0=700", 120), "0");
    assert_string_equal(seq_tick(s, 250, "0=820", 120), "-");
    assert_int_equal(plan.cores[0].jitter_milli, 30);
    assert_int_equal(plan.cores[0].util_milli, 790);

    /* the guess keeps a core busy that only jitter would keep busy: it adds
     * room, it does not decide */
    fx_init(s, &(struct topo_spec)THIS_MACHINE, 0, 0);
    assert_string_equal(seq_tick(s, 0, "0=700", 100), "0");
    seq_tick(s, 250, "0=150 1=0", 100);
    assert_true(plan.cores[0].busy);
    assert_int_equal(plan.cores[0].util_milli, 50);
}

/* A user fills CPU 0 with its own jitter-marked load (uclamp, or many light
 * threads) beside a little work of its own that makes the core busy: the
 * jitter counted as room on CPU 0 is also in the load the plan must place,
 * so a core it fills has no room for anyone's jitter; once there is room
 * it is the headroom's. */
static void test_jitter_room_is_also_demand(void **state)
{
    (void)state;
    struct fx *s = &fx_storage;
    int jitter[2] = {700, 0};
    fx_init(s, &(struct topo_spec)THIS_MACHINE, 0, 0);
    s->in.cpu_jitter_milli = jitter;
    /* 0.2 of its own + 0.7 of jitter-marked load on CPU 0, another user's
     * 0.02 of jitter: 1 - 0.2 = 0.8 does not cover 0.72 + 0.1 */
    assert_string_equal(seq_tick(s, 0, "0=900 1=20", 720), "-");
    assert_int_equal(plan.wanted_reason, PACKER_REASON_NO_ROOM);
    assert_int_equal(plan.cores[0].jitter_milli, 700);
    assert_int_equal(plan.cores[0].util_milli, 200);
    /* a core busy with 0.15 of its own: 0.85 covers 0.72 + 0.1, and CPU 0
     * then holds 0.87 with the other user's jitter: within the headroom */
    assert_string_equal(seq_tick(s, 250, "0=850 1=20", 720), "0");
    assert_true(plan.cores[0].spare_milli >= 720 + 100);
}

/* CPUs of the applied mask went offline: the new plan applies at once. */
static void test_hotplug_urgent(void **state)
{
    struct fx *s = &fx_storage;
    fx_init(s, &(struct topo_spec)P9_SMT4_4C, 1000, 10000);

    seq_tick(s, 0, "0=900", 200);
    assert_string_equal(seq_tick(s, 1000, "0=900", 200), "0-3");
    /* core 0 goes fully offline; core 1 is now the busy one */
    struct topo_spec off = P9_SMT4_4C;
    off.offline = "0-3";
    topo_build(&s->f, &off);
    assert_string_equal(seq_tick(s, 1250, "4=900", 200), "4-7");
    assert_true(plan.changed);
    /* without an offline CPU in the mask the usual waits apply again */
    assert_string_equal(seq_tick(s, 1500, "8=900", 200), "4-7");
    assert_int_equal(plan.wait, PACKER_WAIT_HOLD);
}

/* A zeroed state behaves like an initialised one. */
static void test_zero_state(void **state)
{
    struct fx *s = &fx_storage;
    fx_init(s, &(struct topo_spec)THIS_MACHINE, 500, 0);
    memset(&s->st, 0, sizeof(s->st));
    assert_string_equal(seq_tick(s, 0, "0=700", 100), "-");
    assert_int_equal(plan.wait, PACKER_WAIT_HOLD);
    assert_string_equal(seq_tick(s, 500, "0=700", 100), "0");
}

/* ---- properties over random machines and loads (fixed seed) ---- */

static unsigned rnd(unsigned *seed, unsigned n)
{
    *seed = *seed * 1103515245u + 12345u;
    return (*seed >> 16) % n;
}

static void random_machine(unsigned *seed, struct fake_topo *f, struct test_config *cfg, int *util)
{
    static const int smts[] = {1, 2, 4, 8};
    struct topo_spec spec = {
        .packages = 1 + (int)rnd(seed, 2),
        .cores_per_pkg = 1 + (int)rnd(seed, 8),
        .smt = smts[rnd(seed, 4)],
        .interleaved = rnd(seed, 2),
    };
    spec.cores_per_llc = 1 + (int)rnd(seed, (unsigned)spec.cores_per_pkg);
    while (spec.cores_per_pkg % spec.cores_per_llc)
        spec.cores_per_llc--;
    spec.cores_per_node = spec.cores_per_llc;
    char offline[256] = "";
    int n_cpus = spec.packages * spec.cores_per_pkg * spec.smt;
    for (int cpu = 1; cpu < n_cpus; cpu++)
        if (rnd(seed, 8) == 0)
            snprintf(offline + strlen(offline), sizeof(offline) - strlen(offline), "%s%d", offline[0] ? "," : "", cpu);
    spec.offline = offline;
    topo_build(f, &spec);
    config_build(cfg);
    cfg->policy.domain = (enum pack_domain)rnd(seed, 3);
    cfg->policy.headroom_milli = rnd(seed, 300);
    for (int cpu = 0; cpu < f->t.n_cpus; cpu++) {
        if (!CPU_ISSET(cpu, &f->t.online))
            util[cpu] = -1;
        else if (rnd(seed, 3) == 0)
            util[cpu] = 500 + (int)rnd(seed, 520); /* a few over 1000: clamped */
        else
            util[cpu] = (int)rnd(seed, 120);
    }
}

static void test_random_invariants(void **state)
{
    unsigned seed = 4242;
    struct fake_topo *f = calloc(1, sizeof(*f));
    int util[MAX_TEST_CPUS];
    struct test_config cfg;
    struct packer_state st;
    int packed_runs = 0, fallback_runs = 0;

    assert_non_null(f);
    for (int run = 0; run < 2000; run++) {
        random_machine(&seed, f, &cfg, util);
        packer_state_init(&st);
        struct packer_input in = {.topo = &f->t,
                                  .cap = &cfg.capacity,
                                  .cpu_util_milli = util,
                                  .n_cpu_util = f->t.n_cpus,
                                  .jitter_load_milli = rnd(&seed, 1500),
                                  .params = &cfg.policy,
                                  .now_ms = 1};
        assert_int_equal(packer_plan(&in, &st, &plan), 0);
        unsigned need = in.jitter_load_milli + cfg.policy.headroom_milli;
        cpu_set_t x;
        CPU_AND(&x, &plan.mask, &f->t.online);
        assert_true(CPU_EQUAL(&x, &plan.mask)); /* only online CPUs */

        for (int i = 0; i < plan.n_cores; i++) {
            const struct packer_core_info *ci = &plan.cores[i];
            const struct topo_core *tc = &f->t.cores[ci->core];
            unsigned sum = 0;
            for (int cpu = 0; cpu < f->t.n_cpus; cpu++)
                if (CPU_ISSET(cpu, &tc->online))
                    sum += (unsigned)MIN(util[cpu], 1000);
            assert_int_equal(ci->n_online, tc->n_online);
            if (tc->n_online == 0)
                continue;
            assert_int_equal(ci->capacity_milli, capacity_core_milli(&cfg.capacity, (unsigned)tc->n_online));
            assert_int_equal(ci->util_milli, sum);
            assert_int_equal(ci->busy, sum * 1000 >= 125 * ci->capacity_milli);
            if (ci->chosen)
                assert_true(ci->busy);
        }

        if (!plan.restricted) {
            fallback_runs++;
            assert_true(CPU_EQUAL(&plan.mask, &f->t.online));
            assert_int_not_equal(plan.reason, PACKER_REASON_PACKED);
            for (int d = 0; d < plan.n_domains; d++)
                assert_false(plan.domains[d].packed);
            continue;
        }
        packed_runs++;
        assert_int_equal(plan.reason, PACKER_REASON_PACKED);
        assert_false(plan.util_milli * 1000 < 50 * plan.capacity_milli);
        for (int d = 0; d < plan.n_domains; d++) {
            const struct packer_domain_info *di = &plan.domains[d];
            unsigned spares[PACKER_MAX_CORES];
            int n_busy = 0;
            unsigned chosen_spare = 0;
            int n_chosen = 0;
            for (int i = 0; i < plan.n_cores; i++) {
                const struct packer_core_info *ci = &plan.cores[i];
                if (ci->domain != d)
                    continue;
                CPU_AND(&x, &f->t.cores[ci->core].online, &plan.mask);
                if (!di->packed) {
                    /* jitter of a domain that cannot pack stays in it */
                    assert_true(CPU_EQUAL(&x, &f->t.cores[ci->core].online));
                    continue;
                }
                assert_int_equal(CPU_COUNT(&x) > 0, ci->chosen);
                if (ci->busy)
                    spares[n_busy++] = ci->spare_milli;
                if (ci->chosen) {
                    chosen_spare += ci->spare_milli;
                    n_chosen++;
                }
            }
            if (!di->packed) {
                if (di->reason == PACKER_REASON_NO_BUSY)
                    assert_int_equal(di->n_busy, 0);
                else if (di->reason == PACKER_REASON_ALL_BUSY)
                    assert_int_equal(di->n_busy, di->n_cores);
                else
                    assert_int_equal(di->reason, PACKER_REASON_NO_ROOM);
                continue;
            }
            assert_true(di->n_busy < di->n_cores);
            assert_true(chosen_spare >= need);
            assert_int_equal(n_chosen, di->n_chosen);
            /* fewest cores: the n_chosen - 1 largest spares fall short */
            for (int i = 0; i < n_busy; i++)
                for (int j = i + 1; j < n_busy; j++)
                    if (spares[j] > spares[i]) {
                        unsigned t = spares[i];
                        spares[i] = spares[j];
                        spares[j] = t;
                    }
            unsigned best = 0;
            for (int i = 0; i < n_chosen - 1; i++)
                best += spares[i];
            assert_true(best < need);
        }
    }
    print_message("random machines: %d packed, %d fell back\n", packed_runs, fallback_runs);
    /* the generator exercises both outcomes */
    assert_true(packed_runs > 200 && fallback_runs > 200);
    free(f);
}

/* Over random load sequences, an applied mask is one that was wanted on every
 * tick for hold_ms, and changes are min_change_ms apart. */
static void test_random_hysteresis(void **state)
{
    unsigned seed = 77;
    struct fake_topo *f = calloc(1, sizeof(*f));
    int util[MAX_TEST_CPUS];
    struct test_config cfg;
    struct packer_state st;
    enum { TICK = 250, TICKS = 400 };
    static cpu_set_t wanted[TICKS];
    static bool wanted_restricted[TICKS];
    int changes_total = 0;

    assert_non_null(f);
    for (int run = 0; run < 50; run++) {
        random_machine(&seed, f, &cfg, util);
        cfg.policy.hold_ms = 1000;
        cfg.policy.min_change_ms = 3000;
        packer_state_init(&st);
        int64_t last_change = -1;
        for (int t = 0; t < TICKS; t++) {
            /* a few CPUs move each tick, some across the busy threshold */
            for (int k = 0; k < 3; k++) {
                int cpu = (int)rnd(&seed, (unsigned)f->t.n_cpus);
                if (util[cpu] >= 0)
                    util[cpu] = rnd(&seed, 2) ? (int)rnd(&seed, 1000) : (int)rnd(&seed, 250);
            }
            struct packer_input in = {.topo = &f->t,
                                      .cap = &cfg.capacity,
                                      .cpu_util_milli = util,
                                      .n_cpu_util = f->t.n_cpus,
                                      .jitter_load_milli = 100 + rnd(&seed, 3) * 100,
                                      .params = &cfg.policy,
                                      .now_ms = (uint64_t)t * TICK};
            assert_int_equal(packer_plan(&in, &st, &plan), 0);
            wanted[t] = plan.wanted_mask;
            wanted_restricted[t] = plan.wanted_restricted;
            if (!plan.changed)
                continue;
            changes_total++;
            int64_t now = (int64_t)t * TICK;
            if (last_change >= 0)
                assert_true(now - last_change >= 3000);
            last_change = now;
            /* wanted identically on the last hold_ms / TICK + 1 ticks */
            assert_true(t >= 1000 / TICK);
            for (int b = t - 1000 / TICK; b <= t; b++) {
                assert_int_equal(wanted_restricted[b], plan.restricted);
                if (plan.restricted)
                    assert_true(CPU_EQUAL(&wanted[b], &plan.mask));
            }
        }
    }
    print_message("random sequences: %d mask changes in %d ticks\n", changes_total, 50 * TICKS);
    assert_true(changes_total > 0);
    free(f);
}

/* ---- the fixture trees of real machines, read by topology_read ---- */

static const struct plan_case fixture_cases[] = {
    {
        .name = "POWER9 SMT4 tree: a full-SMT4 core at 100% has 0.5 spare, core 0 packs",
        .tree = "power9-smt4",
        .util = "0=1000",
        .jitter_milli = 200,
        .mask = "0-3",
        .reason = PACKER_REASON_PACKED,
    },
    {
        .name = "POWER9 SMT4 tree: core 2 (2 of 4 online, 1.25x) has 0.25 spare, core 5 (3 of 4, 1.375x) 0.375",
        .tree = "power9-smt4",
        .util = "8=1000 20=1000",
        .jitter_milli = 200,
        .mask = "20-22",
        .reason = PACKER_REASON_PACKED,
        .summary_has = "packed on core 5 (CPUs 20-22): spare 0.375",
    },
    {
        .name = "POWER9 SMT4 tree: only the 2-thread core busy: no room for 0.3",
        .tree = "power9-smt4",
        .util = "8=1000 9=200",
        .jitter_milli = 100,
        .reason = PACKER_REASON_NO_ROOM,
    },
    {
        .name = "POWER9 SMT4 tree, domain llc (core pairs): LLC 1 cannot pack and keeps its CPUs",
        .tree = "power9-smt4",
        .util = "0=1000 8=1000",
        .jitter_milli = 200,
        .domain = DOMAIN_LLC,
        .mask = "0-3,8-9,12-22,24-31",
        .reason = PACKER_REASON_PACKED,
        .summary_has = "packed: LLC 0 on core 0 (spare 0.5); LLC 1 unrestricted (no busy core with room); "
                       "LLCs 2-3 unrestricted (no busy core); need jitter 0.2 + headroom 0.1",
    },
    {
        .name = "POWER9 SMT8 tree: 2.0x cores, one thread at 100% leaves 1.0",
        .tree = "power9-smt8",
        .util = "0=1000 8=1000",
        .jitter_milli = 900,
        .mask = "0-7",
        .reason = PACKER_REASON_PACKED,
        .summary_has = "packed on core 0 (CPUs 0-7): spare 1 covers jitter 0.9 + headroom 0.1",
    },
    {
        .name = "POWER9 SMT8 tree: two threads at 100% fill 2.0x; the other busy core takes it",
        .tree = "power9-smt8",
        .util = "0=1000 1=1000 8=1000",
        .jitter_milli = 300,
        .mask = "8-15",
        .reason = PACKER_REASON_PACKED,
    },
    {
        .name = "POWER9 SMT8 tree, domain llc: one core per LLC, so nothing can pack",
        .tree = "power9-smt8",
        .util = "0=1000 8=1000",
        .jitter_milli = 100,
        .domain = DOMAIN_LLC,
        .reason = PACKER_REASON_ALL_BUSY,
        .summary_has = "fallback: LLCs 0-1: every core busy; LLCs 2-5: no busy core",
    },
    {
        .name = "x86 2S SMT2 tree: socket 0 packs on core 0 (CPUs 0,8), idle socket 1 keeps its CPUs",
        .tree = "x86-smt2-2s",
        .util = "0=1000",
        .jitter_milli = 100,
        .mask = "0,4-8,12-15",
        .reason = PACKER_REASON_PACKED,
        .summary_has = "package 1 unrestricted (no busy core)",
    },
    {
        .name = "x86 2S SMT2 tree, domain numa (node per socket): the same split",
        .tree = "x86-smt2-2s",
        .util = "0=1000 13=1000",
        .jitter_milli = 100,
        .domain = DOMAIN_NUMA,
        .mask = "0,5,8,13",
        .reason = PACKER_REASON_PACKED,
        .summary_has = "node 0 on core 0 (spare 0.25); node 1 on core 5 (spare 0.25)",
    },
    {
        .name = "this VM's tree: CPU 0 at 70%, CPU 1 idle",
        .tree = "vm-2cpu",
        .util = "0=700",
        .jitter_milli = 100,
        .mask = "0",
        .reason = PACKER_REASON_PACKED,
        .summary_has = "packed on core 0 (CPU 0): spare 0.3 covers jitter 0.1 + headroom 0.1",
    },
    {
        .name = "this VM's tree: both CPUs busy",
        .tree = "vm-2cpu",
        .util = "0=700 1=400",
        .jitter_milli = 100,
        .reason = PACKER_REASON_ALL_BUSY,
    },
};

static void test_fixture_trees(void **state)
{
    for (size_t i = 0; i < ELEMENTSOF(fixture_cases); i++) {
        char root[4096];
        struct topology *t = NULL;

        snprintf(root, sizeof(root), "%s/%s", TS_FIXTURES, fixture_cases[i].tree);
        assert_int_equal(topology_read(root, &t), 0);
        check_case(&fixture_cases[i], t, 5);
        topology_free(t);
    }
}

/* The run-delay guard's say: spilled cores join the choice when busy (an
 * idle one never), a fallback gives the plan up with its own reason, and
 * the guard's note ends the summary. */
static void test_run_delay_guard(void **state)
{
    (void)state;
    struct fx *s = &fx_storage;
    struct packer_input *in = &s->in;
    cpu_set_t spill;

    /* 4 SMT1 cores: 0 and 1 busy with room, 2 busy, 3 idle */
    fx_init(s, &(struct topo_spec){.packages = 1, .cores_per_pkg = 4, .smt = 1}, 0, 0);
    util_build(&s->f.t, "0=300 1=400 2=500 3=0", s->util);
    in->jitter_load_milli = 100;
    assert_int_equal(plan_fresh(s), 0);
    assert_string_equal(mask_str(&plan.mask), "0");

    /* spilled to core 1, and to the idle core 3, which is not taken */
    CPU_ZERO(&spill);
    CPU_SET(1, &spill);
    CPU_SET(3, &spill);
    in->spill_cpus = &spill;
    in->delay_note = "spilled to core 1: jitter waited 2.4 ms per wake-up";
    assert_int_equal(plan_next(s), 0);
    assert_true(plan.restricted);
    assert_int_equal(plan.reason, PACKER_REASON_PACKED);
    assert_string_equal(mask_str(&plan.mask), "0-1");
    assert_true(plan.cores[1].chosen);
    assert_false(plan.cores[3].chosen);
    assert_non_null(strstr(plan.summary, "(spilled to core 1: jitter waited 2.4 ms per wake-up)"));

    /* the spill released: back to the fewest cores */
    in->spill_cpus = NULL;
    in->delay_note = "";
    assert_int_equal(plan_next(s), 0);
    assert_string_equal(mask_str(&plan.mask), "0");
    assert_null(strstr(plan.summary, "spilled"));

    /* given up: unrestricted, reason run-delay */
    in->delay_fallback = true;
    in->delay_note = "fell back: jitter waited 3.0 ms per wake-up and no busy core is left";
    assert_int_equal(plan_next(s), 0);
    assert_false(plan.restricted);
    assert_int_equal(plan.reason, PACKER_REASON_RUN_DELAY);
    assert_string_equal(mask_str(&plan.mask), "0-3");
    assert_non_null(strstr(plan.summary, "fallback: jitter waited too long to run (fell back: jitter waited 3.0 ms"));

    /* a fallback for another reason keeps that reason */
    util_build(&s->f.t, "0=10 1=10 2=10 3=0", s->util);
    assert_int_equal(plan_next(s), 0);
    assert_int_equal(plan.reason, PACKER_REASON_IDLE_MACHINE);
}

/* A chip whose frequency falls as cores wake (steep) and one that holds
 * the same frequency at any count (flat), for 8 cores. */
static void freq_build(struct freq_response *fr, bool steep)
{
    static const unsigned steep_mhz[] = {0, 4000, 3900, 3600, 3300, 3000, 2800, 2600, 2400};
    freq_response_init(fr, 8);
    for (unsigned a = 1; a <= 8; a++)
        fr->mhz[a] = steep ? steep_mhz[a] : 3000;
}

/* Pack only when it pays: with a frequency table the wanted plan is
 * weighed; without one, or across domains, the thresholds decide alone. */
static void test_benefit(void **state)
{
    (void)state;
    struct fx *s = &fx_storage;
    struct packer_input *in = &s->in;
    struct freq_response fr;

    /* 8 POWER9-like SMT4 cores, one intensive thread on cores 0 and 1 */
    fx_init(s, &(struct topo_spec){.packages = 1, .cores_per_pkg = 8, .smt = 4}, 0, 0);
    util_build(&s->f.t, "0=1000 4=1000", s->util);
    in->jitter_load_milli = 200;
    in->n_jitter_tasks = 3;

    /* no table: packed by the thresholds, nothing weighed */
    assert_int_equal(plan_fresh(s), 0);
    assert_int_equal(plan.reason, PACKER_REASON_PACKED);
    assert_int_equal(plan.benefit, BENEFIT_UNKNOWN);
    assert_string_equal(plan.benefit_explain, "");

    /* flat: waking fewer cores buys no frequency, and packed jitter takes
     * the busy cores' cycles: no restriction */
    freq_build(&fr, false);
    in->freq = &fr;
    assert_int_equal(plan_fresh(s), 0);
    assert_false(plan.restricted);
    assert_int_equal(plan.reason, PACKER_REASON_NO_BENEFIT);
    assert_int_equal(plan.benefit, BENEFIT_NONE);
    assert_string_equal(mask_str(&plan.mask), "0-31");
    assert_non_null(strstr(plan.summary, "fallback: packing would not pay: none: "));

    /* steep: 2 active cores instead of 5 is worth the cycles */
    freq_build(&fr, true);
    assert_int_equal(plan_fresh(s), 0);
    assert_true(plan.restricted);
    assert_int_equal(plan.reason, PACKER_REASON_PACKED);
    assert_int_equal(plan.benefit, BENEFIT_PACK);
    assert_string_equal(mask_str(&plan.mask), "0-3");
    assert_non_null(strstr(plan.benefit_explain, "pack"));

    /* cores 0 and 1 full (no thread free): no room to pack, and isolation
     * on one idle core keeps 3 cores active instead of 6 */
    in->n_jitter_tasks = 4;
    util_build(&s->f.t, "0=1000 1=1000 2=1000 3=1000 4=1000 5=1000 6=1000 7=1000", s->util);
    assert_int_equal(plan_fresh(s), 0);
    assert_true(plan.restricted);
    assert_int_equal(plan.reason, PACKER_REASON_ISOLATED);
    assert_int_equal(plan.benefit, BENEFIT_ISOLATE);
    assert_string_equal(mask_str(&plan.mask), "28-31");
    assert_non_null(strstr(plan.summary, "isolated on idle core 7 (CPUs 28-31): isolate"));

    /* core 7 fills up (all 4 threads busy, no room to pack there either):
     * the isolation moves to core 6 */
    util_build(&s->f.t,
               "0=1000 1=1000 2=1000 3=1000 4=1000 5=1000 6=1000 7=1000 "
               "28=1000 29=1000 30=1000 31=1000",
               s->util);
    assert_int_equal(plan_next(s), 0);
    assert_int_equal(plan.reason, PACKER_REASON_ISOLATED);
    assert_string_equal(mask_str(&plan.mask), "24-27");
    /* core 7 busy with one thread and room: jitter packs there, beside
     * cores 0 and 1 that are active anyway */
    util_build(&s->f.t, "0=1000 1=1000 2=1000 3=1000 4=1000 5=1000 6=1000 7=1000 28=1000", s->util);
    assert_int_equal(plan_next(s), 0);
    assert_int_equal(plan.reason, PACKER_REASON_PACKED);
    assert_int_equal(plan.benefit, BENEFIT_PACK);
    assert_string_equal(mask_str(&plan.mask), "28-31");
    /* isolated on core 6 again, then core 7 idle: core 6 stays, while it is idle */
    util_build(&s->f.t,
               "0=1000 1=1000 2=1000 3=1000 4=1000 5=1000 6=1000 7=1000 "
               "28=1000 29=1000 30=1000 31=1000",
               s->util);
    assert_int_equal(plan_next(s), 0);
    assert_string_equal(mask_str(&plan.mask), "24-27");
    util_build(&s->f.t, "0=1000 1=1000 2=1000 3=1000 4=1000 5=1000 6=1000 7=1000", s->util);
    assert_int_equal(plan_next(s), 0);
    assert_string_equal(mask_str(&plan.mask), "24-27");

    /* two packages, each weighed on its own with the table (each has
     * its own frequency limit): package 0 as the first case above (one
     * thread on cores 0 and 1: packing pays), package 1 as the second
     * (cores 8 and 9 full: isolation on its last idle core) */
    topo_build(&s->f, &(struct topo_spec){.packages = 2, .cores_per_pkg = 8, .smt = 4});
    int jit[MAX_TEST_CPUS];
    /* the jitter unconfined, on idle cores of its own package */
    util_build(&s->f.t,
               "0=1000 4=1000 8=70 12=70 16=60 32=1000 33=1000 34=1000 35=1000 36=1000 37=1000 38=1000 "
               "39=1000 40=70 44=70 48=60",
               s->util);
    util_build(&s->f.t, "8=70 12=70 16=60 40=70 44=70 48=60", jit);
    in->n_cpu_util = s->f.t.n_cpus;
    in->cpu_jitter_milli = jit;
    in->n_jitter_tasks = 6;
    in->jitter_load_milli = 400;
    assert_int_equal(plan_fresh(s), 0);
    assert_true(plan.restricted);
    assert_int_equal(plan.reason, PACKER_REASON_ISOLATED);
    assert_string_equal(mask_str(&plan.mask), "0-3,60-63");
    assert_string_equal(plan.summary, "weighed per package: package 0 packed on core 0; package 1 isolated on idle "
                                      "core 15");
    assert_int_equal(plan.benefit, BENEFIT_PACK); /* the first of the two with most busy cores */
    assert_non_null(strstr(plan.benefit_explain, "package 0: pack: +"));
    assert_non_null(strstr(plan.benefit_explain, "; package 1: isolate on 1 core: +"));
    /* the jitter where the plan put it: each package's plan is the one in
     * effect there, kept */
    util_build(&s->f.t,
               "0=1000 1=70 2=70 3=60 4=1000 32=1000 33=1000 34=1000 35=1000 36=1000 37=1000 38=1000 "
               "39=1000 60=70 61=70 62=60",
               s->util);
    util_build(&s->f.t, "1=70 2=70 3=60 60=70 61=70 62=60", jit);
    assert_int_equal(plan_next(s), 0);
    assert_string_equal(mask_str(&plan.mask), "0-3,60-63");
    assert_false(plan.changed);

    /* package 1's load gone: nothing to gain there, all its CPUs free */
    util_build(&s->f.t, "0=1000 1=70 2=70 3=60 4=1000 60=70 61=70 62=60", s->util);
    assert_int_equal(plan_next(s), 0);
    assert_int_equal(plan.reason, PACKER_REASON_PACKED);
    assert_string_equal(mask_str(&plan.mask), "0-3,32-63");
    assert_string_equal(plan.summary, "weighed per package: package 0 packed on core 0; package 1 unrestricted "
                                      "(no busy core)");

    /* the table is for a package: LLCs or nodes are not weighed, nor is
     * one probed frequency for the machine */
    s->cfg.policy.domain = DOMAIN_LLC;
    assert_int_equal(plan_fresh(s), 0);
    assert_int_equal(plan.benefit, BENEFIT_UNKNOWN);
    assert_string_equal(plan.benefit_explain, "not weighed: 2 LLCs, and the frequency table is for a package");
    assert_int_equal(plan.reason, PACKER_REASON_PACKED);
    s->cfg.policy.domain = DOMAIN_PACKAGE;
    struct probe_state ps;
    probe_init(&ps, NULL);
    struct packer_probe probe = {.state = &ps, .measurable = true, .busy_mhz = 3000};
    in->freq = NULL;
    in->probe = &probe;
    assert_int_equal(plan_fresh(s), 0);
    assert_int_equal(plan.benefit, BENEFIT_UNKNOWN);
    assert_string_equal(plan.benefit_explain, "not weighed: 2 packages, and the probed frequency is for the machine");
}

/* The idle figures measured with the jitter unconfined reach the model's
 * snapshot, and change its choice: the steep chip of test_benefit packs
 * when each jitter task is assumed to keep an idle core awake, and leaves
 * the jitter free when it is measured to keep none out of the deep states. */
static void test_benefit_measured_idle(void **state)
{
    (void)state;
    struct fx *s = &fx_storage;
    struct packer_input *in = &s->in;
    struct freq_response fr;
    struct benefit_core cores[8];
    struct benefit_snapshot snap;

    fx_init(s, &(struct topo_spec){.packages = 1, .cores_per_pkg = 8, .smt = 4}, 0, 0);
    util_build(&s->f.t, "0=1000 4=1000", s->util);
    freq_build(&fr, true);
    struct packer_idle idle = {0};
    in->jitter_load_milli = 200;
    in->n_jitter_tasks = 3;
    in->freq = &fr;
    in->idle = &idle;

    /* nothing kept yet: not measured, as without the input */
    assert_int_equal(plan_fresh(s), 0);
    assert_int_equal(plan.benefit, BENEFIT_PACK);
    packer_benefit_snapshot(in, &plan, cores, &snap);
    assert_false(snap.none_woken_measured);
    assert_false(snap.none_wakes_measured);

    /* measured: the jitter keeps no idle core out of the deep states */
    idle.none = (struct idle_kept){.measured = true, .woken_milli = 0, .wakes_per_s = 120};
    assert_int_equal(plan_fresh(s), 0);
    packer_benefit_snapshot(in, &plan, cores, &snap);
    assert_true(snap.none_woken_measured);
    assert_int_equal(snap.none_woken_milli, 0);
    assert_true(snap.none_wakes_measured);
    assert_int_equal(snap.none_wakes_per_s, 120);
    assert_int_equal(snap.reeval_us, 0);
    assert_int_equal(plan.benefit, BENEFIT_NONE);
    assert_false(plan.restricted);

    /* frequency_reevaluation reaches it too */
    s->cfg.policy.freq_reeval_us = 500;
    packer_benefit_snapshot(in, &plan, cores, &snap);
    assert_int_equal(snap.reeval_us, 500);

    /* three idle cores kept awake, as assumed: packing pays again */
    idle.none.woken_milli = 3000;
    assert_int_equal(plan_fresh(s), 0);
    assert_int_equal(plan.benefit, BENEFIT_PACK);

    /* light jitter reaching the deep states between wake-ups: a trial of
     * isolation where the caller allows one, with the load it is for */
    in->jitter_load_milli = 100;
    idle.none = (struct idle_kept){.measured = true, .woken_milli = 150, .wakes_per_s = 600};
    assert_int_equal(plan_fresh(s), 0);
    assert_int_equal(plan.benefit, BENEFIT_NONE);
    assert_false(plan.benefit_trial);
    idle.trial_ok = true;
    assert_int_equal(plan_fresh(s), 0);
    assert_int_equal(plan.benefit, BENEFIT_ISOLATE);
    assert_true(plan.benefit_trial);
    assert_int_equal(plan.benefit_trial_from, BENEFIT_NONE);
    assert_true(plan.wanted_restricted);
    assert_int_equal(plan.wanted_reason, PACKER_REASON_ISOLATED);
    assert_string_equal(mask_str(&plan.wanted_mask), "28-31"); /* the highest idle core */
    assert_string_equal(plan.benefit_explain, "isolate on 1 core: a trial, +0.8% est. if its tasks wake the core "
                                              "together, +0.2% if independently (none +0.0%)");
    packer_benefit_snapshot(in, &plan, cores, &snap);
    struct benefit_estimate est[BENEFIT_N_PLANS];
    benefit_estimate_all(&snap, est);
    uint64_t sig = est[BENEFIT_ISOLATE].load_sig;
    assert_true(plan.benefit_iso_sig == sig);

    /* measured under that load with the tasks independent after all: the
     * trial gives way to none; the figures reach the model */
    idle.iso = (struct idle_kept){.measured = true, .woken_milli = 150, .wakes_per_s = 700};
    idle.iso_sig = sig;
    idle.in_trial = true;
    idle.trial_from = BENEFIT_NONE;
    packer_benefit_snapshot(in, &plan, cores, &snap);
    assert_true(snap.iso_measured && snap.iso_sig == sig && snap.in_trial && snap.iso_trial_ok);
    assert_int_equal(snap.iso_woken_milli, 150);
    assert_int_equal(snap.iso_wakes_per_s, 700);
    assert_int_equal(plan_next(s), 0);
    assert_int_equal(plan.benefit, BENEFIT_NONE);
    assert_false(plan.benefit_trial);
}

static void test_reason_strings(void **state)
{
    for (int r = 0; r < _PACKER_REASON_MAX; r++) {
        assert_string_not_equal(packer_reason_to_string(r), "unknown");
        assert_string_not_equal(packer_reason_describe(r), "unknown");
    }
    assert_string_equal(packer_reason_to_string(_PACKER_REASON_MAX), "unknown");
    assert_string_equal(packer_reason_to_string(PACKER_REASON_NO_ROOM), "no-room");
    assert_string_equal(packer_reason_to_string(PACKER_REASON_RUN_DELAY), "run-delay");
    assert_string_equal(packer_wait_to_string(PACKER_WAIT_MIN_CHANGE), "min-change");
}

/* Status says which kind of packing is in force: beside the busy thread on
 * an SMT core, or in its place on a single-thread one. */
static void test_packing_kind(void **state)
{
    (void)state;
    char root[PATH_MAX], buf[192];
    struct topology *t;
    cpu_set_t m;
    snprintf(root, sizeof root, "%s/%s", TS_FIXTURES, "power9-smt4");
    assert_int_equal(topology_read(root, &t), 0);
    CPU_ZERO(&m);
    CPU_SET(0, &m);
    CPU_SET(1, &m); /* core 0: threads 0-3 */
    CPU_SET(8, &m); /* core 2: threads 8-9 */
    assert_string_equal(packer_packing_kind(t, &m, buf, sizeof buf), "on idle SMT siblings of 2 busy cores");
    topology_free(t);
    snprintf(root, sizeof root, "%s/%s", TS_FIXTURES, "vm-2cpu");
    assert_int_equal(topology_read(root, &t), 0);
    CPU_ZERO(&m);
    CPU_SET(0, &m);
    assert_non_null(
        strstr(packer_packing_kind(t, &m, buf, sizeof buf), "time-sharing 1 busy CPU without an SMT sibling"));
    CPU_ZERO(&m);
    assert_string_equal(packer_packing_kind(t, &m, buf, sizeof buf), "on no online CPU");
    topology_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_cases),
        cmocka_unit_test(test_core_details),
        cmocka_unit_test(test_jitter_share_capped_per_core),
        cmocka_unit_test(test_short_util_array),
        cmocka_unit_test(test_invalid_input),
        cmocka_unit_test(test_too_many_domains),
        cmocka_unit_test(test_hold_before_apply),
        cmocka_unit_test(test_candidate_restarts),
        cmocka_unit_test(test_flapping_load),
        cmocka_unit_test(test_min_change),
        cmocka_unit_test(test_hold_and_min_change),
        cmocka_unit_test(test_busy_hysteresis),
        cmocka_unit_test(test_sticky_cores),
        cmocka_unit_test(test_jitter_on_its_core),
        cmocka_unit_test(test_hotplug_urgent),
        cmocka_unit_test(test_zero_state),
        cmocka_unit_test(test_fixture_trees),
        cmocka_unit_test(test_random_invariants),
        cmocka_unit_test(test_random_hysteresis),
        cmocka_unit_test(test_run_delay_guard),
        cmocka_unit_test(test_benefit),
        cmocka_unit_test(test_benefit_measured_idle),
        cmocka_unit_test(test_reason_strings),
        cmocka_unit_test(test_packing_kind),
        cmocka_unit_test(test_jitter_room_is_also_demand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
