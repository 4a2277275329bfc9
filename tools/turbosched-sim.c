/* SPDX-License-Identifier: GPL-2.0-or-later */
/* turbosched-sim: an event-driven simulator of a POWER9-like chip running the
 * turbo-bench workload (N CPU-intensive + N jitter threads), to compare where
 * jitter wake-ups are placed:
 *
 *   cfs          stock wake-up path: prev CPU if idle, else an idle core, else
 *                an idle CPU in the LLC (select_idle_sibling)
 *   turbosched   TurboSched's in-kernel rule (v2-v4): first fit from prev_cpu
 *                over non-idle cores whose utilisation plus the task's fits the
 *                core's capacity; cores under 12.5% are skipped
 *   iso<K>       jitter statically confined to K cores, intensive threads to
 *                the others
 *   turboschedd  the daemon's packer_plan() every tick; its mask is the jitter
 *                tasks' affinity, inside which the stock wake-up path runs
 *
 * The chip: cores of 4 SMT threads, LLC = core pair, per-thread stop states
 * with exit latencies and target residencies, and a chip-wide frequency limit
 * that depends on how many cores are not in a deep stop state (WOF-like).
 * Every parameter and its source is in docs/simulator.md.
 *
 * Between events nothing changes rate, so the state advances in closed form:
 * no time step to tune. Deterministic: the only randomness (timer slack) comes
 * from a seeded generator.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "benefit.h"
#include "config.h"
#include "load.h"
#include "power_capacity.h"
#include "topology.h"
#include "util.h"

#if __has_include("packer.h")
#include "packer.h"
#define HAVE_PACKER 1
#else
#define HAVE_PACKER 0
#endif

#define SMT (P.smt) /* threads per core of the modelled chip */
#define MAX_SMT 8
#define MAX_CORES 64
#define MAX_CPUS (MAX_CORES * MAX_SMT)
#define MAX_TASKS 256
#define MAX_QUEUE MAX_TASKS /* never full: at most every task waits on one CPU */
#define LAT_BINS 20000      /* wake-up latency histogram, 1 us bins */
#define NEVER 1e300

/* ---- parameters ---- */

struct idle_state {
    const char *name;
    double exit_us;
    double residency_us;
    bool deep; /* loses full context: the core counts as inactive */
};

/* skiboot hw/slw.c power9_cpu_idle_states[], with the default OPAL mask
 * ~0xEC000000 (stop8 and stop11 disabled). */
static const struct idle_state p9_states[] = {
    {"stop0_lite", 1, 10, false}, {"stop0", 2, 20, false},     {"stop1", 5, 50, false},
    {"stop2", 10, 100, false},    {"stop4", 100, 10000, true}, {"stop5", 200, 20000, true},
};

/* intel_idle's skl_cstates[] (Skylake/Coffee Lake client): exit latency and
 * target residency in us. A core in C3 or deeper has its clocks stopped and,
 * as assumed here, no longer counts as active for the turbo limit. */
static const struct idle_state x86_states[] = {
    {"C1", 2, 2, false},     {"C1E", 10, 20, false}, {"C3", 70, 100, true},   {"C6", 85, 200, true},
    {"C7s", 124, 800, true}, {"C8", 200, 800, true}, {"C9", 480, 5000, true}, {"C10", 890, 5000, true},
};

/* intel_idle's ivt_cstates[] (Ivy Bridge-EP, Xeon E5 v2): exit latency and
 * target residency in us; C3 and deeper count as inactive, as above. */
static const struct idle_state ivt_states[] = {
    {"C1", 1, 1, false},
    {"C1E", 10, 80, false},
    {"C3", 59, 156, true},
    {"C6", 82, 300, true},
};

struct params {
    const char *chip; /* the shape's name, for reports */
    int smt;          /* threads per core */
    const struct idle_state *stop;
    int n_stop;
    unsigned f_given_mhz[MAX_CORES + 1]; /* a published table by active cores; [1] == 0: the power law */
    int n_cores;
    int llc_cores;          /* cores sharing an LLC: the stock wake-up search span */
    double f_nominal_mhz;   /* sustainable with every core active */
    double f_max_mhz;       /* highest WOF/boost frequency */
    double power_exp;       /* core power ~ f^power_exp along the V/f curve */
    double wof_interval_us; /* how often the limit may rise again */
    double period_us;       /* jitter period */
    double work_kcycles;    /* jitter work per period, fixed in cycles */
    double slack_us;        /* hrtimer slack: wake-up lands in [t, t + slack] */
    double pelt_half_life_us;
    double warmup_s, measure_s;
    bool wof_by_quad;
    uint64_t seed;
};

static bool trace; /* print every daemon tick's plan to stderr */
/* Give packer_plan() each CPU's jitter share, as engine.c does; off: NULL, as
 * the daemon passed before it charged jitter time to CPUs. */
static bool pass_cpu_jitter = true;
/* benefit-table: give the model the idle cores the unconfined jitter keeps
 * active, as measured in the last unrestricted ticks; off: not measured,
 * one core per jitter task, as turboschedd's packer-benefit.c passes. */
static bool pass_none_woken = true;
/* Jitter threads sleep to one period after their previous timer
 * (clock_nanosleep TIMER_ABSTIME, as tools/turbo-bench), not a period
 * from the start of their work (turbo_bench's usleep). */
static bool abs_timers;
/* The benefit model's margin (basis points) and the probes' measurement
 * noise: a uniform error of up to this many MHz on each tick's sample. */
static unsigned benefit_margin_bp = BENEFIT_MARGIN_BP_DEFAULT;
static double probe_noise_mhz = 20;
/* turboschedd's settings: config_init_defaults(), then the options. The
 * packer reads tick, hold, min_change, half-life, busy, headroom, idle and
 * domain from it, so the simulated daemon is the shipped one. */
static struct config daemon_cfg;

static struct params P = {
    .chip = "p9-16",
    .smt = 4,
    .stop = p9_states,
    .n_stop = (int)ELEMENTSOF(p9_states),
    .n_cores = 16,
    .llc_cores = 2,
    .f_nominal_mhz = 2700,
    .f_max_mhz = 3300,
    .power_exp = 3.0,
    .wof_interval_us = 500,
    .period_us = 3000,
    .work_kcycles = 200,
    .slack_us = 50,
    .pelt_half_life_us = 32000,
    .warmup_s = 6,
    .measure_s = 3,
    .wof_by_quad = false,
    .seed = 1,
};

/* ---- state ---- */

enum task_kind { T_INTENSIVE, T_JITTER };

struct task {
    enum task_kind kind;
    int cpu; /* CPU it runs or is queued on, or last ran on (prev_cpu) */
    bool runnable;
    double wake_at;     /* sleeping jitter: when its timer fires */
    int timer_cpu;      /* the hrtimer lives on the CPU the task slept on */
    double intended;    /* timer's nominal expiry, for latency */
    double left_cycles; /* jitter work still to do this period, in cycles */
    double util;        /* PELT-like utilisation, 0..1000 */
    cpu_set_t allowed;
    /* measurement */
    double ops;       /* intensive: cycles x SMT share */
    double freq_time; /* intensive: integral of frequency while running */
    double run_time;
    double busy_tick_us;  /* jitter: running time in the current daemon tick */
    unsigned daemon_util; /* jitter: the daemon's smoothed view of its utilisation */
};

struct cpu {
    int core;
    int home;             /* intensive task living here, -1 none */
    int cur;              /* jitter task running (or starting), -1 none */
    int queue[MAX_QUEUE]; /* waiting jitter tasks */
    int n_queue;
    double start_at;        /* cur (or the intensive thread) runs from then on */
    double transient_until; /* woken only to run a timer interrupt */
    int idle_state;         /* when idle: chosen stop state */
    double util;            /* PELT-like, 0..1000 */
    double busy_tick_us;    /* running time in the current daemon tick */
};

struct sim {
    int n_int, n_jit;
    int n_cpus;
    struct task tasks[MAX_TASKS];
    int n_tasks;
    struct cpu cpus[MAX_CPUS];
    struct capacity_table cap;
    double f_table[MAX_CORES + 1];
    double now, f_mhz, next_wof, next_tick, end, measure_from;
    uint64_t rng;
    /* policy */
    const struct policy *pol;
    int iso_k;
    /* measurement (from measure_from on) */
    double chip_freq_time, active_time, f_seen_max;
    uint64_t lat_hist[LAT_BINS + 1];
    uint64_t n_lat;
    double packed_time;    /* turboschedd: time the mask was restricted */
    unsigned mask_changes; /* turboschedd: applied mask changes while measuring */
    bool restricted;
#if HAVE_PACKER
    struct topology topo;
    struct topo_cpu topo_cpus[MAX_CPUS];
    struct topo_core topo_cores[MAX_CORES];
    struct packer_state pst;
    struct packer_plan *plan;
    unsigned cpu_util_s[MAX_CPUS];
    bool smooth_init;
#endif
    /* the benefit policies */
    enum benefit_plan bplan; /* applied */
    double bplan_since;      /* when it was applied */
    bool bplan_set;
    bool iso_core[MAX_CORES]; /* BENEFIT_ISOLATE: the cores jitter is confined to */
    cpu_set_t jit_mask;       /* the jitter tasks' affinity as last applied */
    struct freq_response fr;  /* benefit-table: the chip's table, as a [capacity] section would give it */
    struct probe_state probe; /* benefit-probe */
    uint64_t noise_rng;
    double tick_freq_time, tick_run_time; /* intensive threads' frequency since the last tick */
    double tick_active_time, tick_time;   /* active cores since the last tick (benefit-table) */
    double none_woken;                    /* benefit-table: idle cores unconfined jitter keeps active */
    bool none_woken_known;
    bool core_was_deep[MAX_CORES];
    unsigned tick_core_wakes[MAX_CORES]; /* benefit-table: wake-ups out of deep states since the last tick */
    double none_wakes;                   /* benefit-table: per second, of idle cores, with jitter unconfined */
    bool iso_known;                      /* benefit-table: the same two, measured with jitter isolated */
    double iso_woken, iso_wakes;
    uint64_t iso_sig;      /* the load they were measured under (the isolation estimate's load_sig) */
    uint64_t iso_plan_sig; /* the load the applied isolation was chosen under */
    bool in_trial;         /* the applied isolation is a trial, which displaced trial_from */
    enum benefit_plan trial_from;
    double trial_at;     /* when isolation was last tried (us); < 0: never */
    unsigned deep_wakes; /* cores woken out of the deep states while measuring */
    char bexplain[BENEFIT_EXPLAIN_MAX];
};

struct policy {
    const char *name;
    /* where a waking jitter task goes (t->timer_cpu is the CPU whose timer fired) */
    int (*select)(struct sim *s, struct task *t);
    void (*tick)(struct sim *s); /* NULL: no periodic work */
};

/* ---- helpers ---- */

static uint64_t rng_next(uint64_t *x)
{
    /* splitmix64: small, deterministic and good enough for timer slack */
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double rng_unit(struct sim *s) { return (double)(rng_next(&s->rng) >> 11) / 9007199254740992.0; }

static int core_first_cpu(int core) { return core * SMT; }

static int llc_of_core(int core) { return core / P.llc_cores; }

/* The CPU executes something (a task whose start time has come). */
static bool cpu_running(const struct sim *s, const struct cpu *c)
{
    return (c->cur >= 0 || c->home >= 0) && s->now >= c->start_at;
}

/* Not idle: running, starting (exit latency), or handling a timer. */
static bool cpu_busy(const struct sim *s, const struct cpu *c)
{
    return c->cur >= 0 || c->home >= 0 || s->now < c->transient_until;
}

/* Idle in the scheduler's sense: nothing queued or running. */
static bool cpu_idle(const struct sim *s, int cpu)
{
    const struct cpu *c = &s->cpus[cpu];
    return c->cur < 0 && c->home < 0 && c->n_queue == 0;
}

static bool core_idle(const struct sim *s, int core)
{
    for (int i = 0; i < SMT; i++)
        if (!cpu_idle(s, core_first_cpu(core) + i))
            return false;
    return true;
}

/* A core in a deep stop state on every thread is off the power budget. */
static bool core_deep(const struct sim *s, int core)
{
    for (int i = 0; i < SMT; i++) {
        const struct cpu *c = &s->cpus[core_first_cpu(core) + i];
        if (cpu_busy(s, c) || !P.stop[c->idle_state].deep)
            return false;
    }
    return true;
}

static int n_active_units(const struct sim *s)
{
    int n = 0;
    if (P.wof_by_quad) {
        for (int q = 0; q < P.n_cores; q += 4) {
            bool active = false;
            for (int c = q; c < q + 4 && c < P.n_cores; c++)
                active |= !core_deep(s, c);
            n += active ? 4 : 0; /* a quad counts as its four cores */
        }
        return MIN(n, P.n_cores);
    }
    for (int c = 0; c < P.n_cores; c++)
        n += !core_deep(s, c);
    return n;
}

/* Time to the next timer queued on this CPU. */
static double next_timer_on(const struct sim *s, int cpu)
{
    double t = NEVER;
    for (int i = 0; i < s->n_tasks; i++) {
        const struct task *k = &s->tasks[i];
        if (k->kind == T_JITTER && !k->runnable && k->timer_cpu == cpu && k->wake_at < t)
            t = k->wake_at;
    }
    return t - s->now;
}

/* The idle governor: the deepest enabled state whose target residency fits
 * the time to the next timer (menu's main term; no history correction). */
static int choose_idle_state(const struct sim *s, int cpu)
{
    double until = next_timer_on(s, cpu);
    int best = 0;
    for (int i = 0; i < P.n_stop; i++)
        if (P.stop[i].residency_us <= until)
            best = i;
    return best;
}

/* Exit latency a task pays to start on this CPU now. Thread-level wake-ups on
 * a core that is running anyway take ~1-5 us (stop0/1): neglected. */
static double wake_latency(const struct sim *s, int cpu)
{
    const struct cpu *c = &s->cpus[cpu];
    int core = c->core;
    bool core_awake = false;
    int shallowest = P.n_stop - 1;
    for (int i = 0; i < SMT; i++) {
        const struct cpu *o = &s->cpus[core_first_cpu(core) + i];
        if (cpu_busy(s, o))
            core_awake = true;
        else if (o->idle_state < shallowest)
            shallowest = o->idle_state;
    }
    if (core_awake || c->cur >= 0 || c->home >= 0)
        return 0;
    return P.stop[shallowest].exit_us;
}

/* ---- placement ---- */

/* select_idle_sibling(), for a timer wake-up (waker CPU = prev CPU):
 * prev if idle; else the first fully idle core of prev's LLC; else the first
 * idle CPU of prev's LLC; else prev. Only allowed CPUs count. When prev is
 * not allowed, the kernel falls back to the first allowed CPU. */
static int cfs_select(struct sim *s, struct task *t)
{
    int target = t->cpu;
    if (target < 0 || !CPU_ISSET(target, &t->allowed)) {
        target = -1;
        for (int i = 0; i < s->n_cpus; i++)
            if (CPU_ISSET(i, &t->allowed)) {
                target = i;
                break;
            }
        if (target < 0)
            return t->cpu;
    }
    if (cpu_idle(s, target))
        return target;

    int llc = llc_of_core(s->cpus[target].core);
    int first_core = llc * P.llc_cores;
    int tcore = s->cpus[target].core;
    /* select_idle_core: scan cores from the target's, wrapping */
    for (int k = 0; k < P.llc_cores; k++) {
        int core = first_core + (tcore - first_core + k) % P.llc_cores;
        if (core >= P.n_cores || !core_idle(s, core))
            continue;
        for (int i = 0; i < SMT; i++)
            if (CPU_ISSET(core_first_cpu(core) + i, &t->allowed))
                return core_first_cpu(core) + i;
    }
    /* select_idle_cpu: any idle allowed CPU in the LLC, from target on */
    int span = P.llc_cores * SMT, base = first_core * SMT;
    for (int k = 1; k < span; k++) {
        int cpu = base + (target - base + k) % span;
        if (cpu < s->n_cpus && CPU_ISSET(cpu, &t->allowed) && cpu_idle(s, cpu))
            return cpu;
    }
    return target;
}

/* TurboSched v4 select_non_idle_core() (REFERENCE §3.1), search domain = the
 * chip (powerpc: NUMA node): first fit from prev_cpu, each core once. */
static int turbosched_select(struct sim *s, struct task *t)
{
    const unsigned core_cap = capacity_core_milli(&s->cap, SMT);
    int start = t->cpu >= 0 ? t->cpu : 0;
    bool seen[MAX_CORES] = {false};

    for (int k = 0; k < s->n_cpus; k++) {
        int cpu = (start + k) % s->n_cpus;
        int core = s->cpus[cpu].core;
        if (seen[core] || !CPU_ISSET(cpu, &t->allowed))
            continue;
        seen[core] = true;
        double core_util = 0, best_util = NEVER;
        int best = -1;
        for (int i = 0; i < SMT; i++) {
            int c = core_first_cpu(core) + i;
            /* cpu_util() is capped at the CPU's capacity */
            double u = MIN(s->cpus[c].util, 1000.0);
            core_util += u;
            if (CPU_ISSET(c, &t->allowed) && u < best_util) {
                best_util = u;
                best = c;
            }
        }
        /* "may go idle soon": skip cores under 12.5% of their capacity */
        if (core_util < core_cap / 8.0 || best < 0)
            continue;
        if (core_util + t->util < core_cap)
            return s->cpus[t->cpu].core == core ? t->cpu : best;
    }
    return cfs_select(s, t);
}

static void turboschedd_tick(struct sim *s);
static void benefit_table_tick(struct sim *s);
static void benefit_probe_tick(struct sim *s);

static const struct policy policies[] = {
    {"cfs", cfs_select, NULL},
    {"turbosched", turbosched_select, NULL},
    {"iso", cfs_select, NULL},
    {"turboschedd", cfs_select, turboschedd_tick},
    {"benefit-table", cfs_select, benefit_table_tick},
    {"benefit-probe", cfs_select, benefit_probe_tick},
};

/* ---- dynamics ---- */

static double share_of_core(const struct sim *s, int core)
{
    int k = 0;
    for (int i = 0; i < SMT; i++)
        k += cpu_running(s, &s->cpus[core_first_cpu(core) + i]);
    return k ? capacity_core_milli(&s->cap, (unsigned)k) / 1000.0 / k : 0;
}

/* Advance every continuous quantity by dt, with rates fixed since the last event. */
static void advance(struct sim *s, double dt, const double *share, int n_active)
{
    if (dt <= 0)
        return;
    double decay = exp2(-dt / P.pelt_half_life_us);
    bool measuring = s->now >= s->measure_from;

    for (int i = 0; i < s->n_cpus; i++) {
        struct cpu *c = &s->cpus[i];
        bool run = cpu_running(s, c);
        double r = run ? 1000.0 : 0.0;
        c->util = r + (c->util - r) * decay;
        if (!run)
            continue;
        c->busy_tick_us += dt;
        double rate = s->f_mhz * share[c->core]; /* MHz x us = cycles */
        if (c->cur >= 0) {
            struct task *t = &s->tasks[c->cur];
            t->left_cycles -= rate * dt;
            t->busy_tick_us += dt;
        } else if (c->home >= 0) {
            /* what APERF/MPERF on the busy cores would read, for the probes */
            s->tick_freq_time += s->f_mhz * dt;
            s->tick_run_time += dt;
            if (!measuring)
                continue;
            struct task *t = &s->tasks[c->home];
            t->ops += rate * dt;
            t->freq_time += s->f_mhz * dt;
            t->run_time += dt;
        }
    }
    for (int i = 0; i < s->n_tasks; i++) {
        struct task *t = &s->tasks[i];
        if (t->kind != T_JITTER)
            continue;
        bool run = t->runnable && s->cpus[t->cpu].cur == i && s->now >= s->cpus[t->cpu].start_at;
        double r = run ? 1000.0 : 0.0;
        t->util = r + (t->util - r) * decay;
    }
    s->tick_active_time += n_active * dt;
    s->tick_time += dt;
    if (measuring) {
        s->chip_freq_time += s->f_mhz * dt;
        s->active_time += n_active * dt;
        if (s->restricted)
            s->packed_time += dt;
    }
}

/* Throttling is instantaneous (REFERENCE §5); the limit rises again only at
 * the next WOF pass. */
static void update_freq(struct sim *s, bool wof_pass)
{
    for (int c = 0; c < P.n_cores; c++) {
        /* what the cores' entries into the deep states count */
        bool deep = core_deep(s, c), woke = s->core_was_deep[c] && !deep;
        s->tick_core_wakes[c] += woke;
        s->deep_wakes += woke && s->now >= s->measure_from;
        s->core_was_deep[c] = deep;
    }
    double limit = s->f_table[n_active_units(s)];
    if (limit < s->f_mhz || wof_pass)
        s->f_mhz = limit;
    if (s->now >= s->measure_from && s->f_mhz > s->f_seen_max)
        s->f_seen_max = s->f_mhz;
}

static void cpu_go_idle_if_empty(struct sim *s, int cpu)
{
    struct cpu *c = &s->cpus[cpu];
    if (c->cur < 0 && c->home < 0 && c->n_queue == 0)
        c->idle_state = choose_idle_state(s, cpu);
}

/* Put a runnable jitter task on a CPU: run at once (preempting the resident
 * intensive thread: CFS wake-up preemption favours the sleeper) or queue. */
static void enqueue(struct sim *s, int ti, int cpu)
{
    struct task *t = &s->tasks[ti];
    struct cpu *c = &s->cpus[cpu];
    t->cpu = cpu;
    t->runnable = true;
    if (c->cur < 0) {
        double lat = wake_latency(s, cpu);
        c->cur = ti;
        c->start_at = s->now + lat;
    } else {
        c->queue[c->n_queue++] = ti;
    }
}

static void record_latency(struct sim *s, double lat_us)
{
    if (s->now < s->measure_from)
        return;
    int bin = lat_us < 0 ? 0 : lat_us >= LAT_BINS ? LAT_BINS : (int)lat_us;
    s->lat_hist[bin]++;
    s->n_lat++;
}

static void jitter_wake(struct sim *s, int ti)
{
    struct task *t = &s->tasks[ti];
    int tcpu = t->timer_cpu;
    struct cpu *tc = &s->cpus[tcpu];
    double handler_lat = wake_latency(s, tcpu);
    int cpu = s->pol->select(s, t);

    if (cpu != tcpu && handler_lat > 0 && !cpu_busy(s, tc)) {
        /* the timer still had to wake its own, idle CPU */
        tc->transient_until = s->now + handler_lat + 2;
    }
    enqueue(s, ti, cpu);
    t->left_cycles = P.work_kcycles * 1000.0;
    /* the task starts at start_at; latency is measured there */
    if (s->cpus[cpu].cur == ti) {
        /* an IPI from the timer's CPU, after it woke itself */
        if (cpu != tcpu)
            s->cpus[cpu].start_at += handler_lat;
        record_latency(s, s->cpus[cpu].start_at - t->intended);
    }
    if (cpu != tcpu)
        cpu_go_idle_if_empty(s, tcpu);
}

static void jitter_done(struct sim *s, int cpu)
{
    struct cpu *c = &s->cpus[cpu];
    struct task *t = &s->tasks[c->cur];
    /* turbo_bench: usleep(run_period - elapsed) after the work, i.e. the next
     * wake-up is one period after this one started, plus timer slack */
    t->runnable = false;
    t->timer_cpu = cpu;
    double started = t->wake_at; /* wake_at still holds the last actual start */
    /* turbo_bench sleeps what is left of the period after the work, so a
     * late start (a deep core's exit latency) delays every later period;
     * an absolute timer keeps the phase */
    t->intended = MAX((abs_timers ? t->intended : started) + P.period_us, s->now);
    t->wake_at = t->intended + rng_unit(s) * P.slack_us;
    c->cur = -1;
    if (c->n_queue > 0) {
        int next = c->queue[0];
        memmove(c->queue, c->queue + 1, (size_t)(c->n_queue - 1) * sizeof(int));
        c->n_queue--;
        c->cur = next;
        c->start_at = s->now;
        record_latency(s, s->now - s->tasks[next].intended);
        s->tasks[next].wake_at = s->now;
    } else {
        c->start_at = s->now;
    }
    cpu_go_idle_if_empty(s, cpu);
}

/* ---- turboschedd ---- */

#if HAVE_PACKER
static void daemon_setup(struct sim *s)
{
    struct topology *tp = &s->topo;
    memset(tp, 0, sizeof(*tp));
    tp->n_cpus = s->n_cpus;
    tp->cpus = s->topo_cpus;
    tp->n_cores = P.n_cores;
    tp->cores = s->topo_cores;
    tp->n_packages = 1;
    tp->n_llcs = (P.n_cores + P.llc_cores - 1) / P.llc_cores;
    tp->n_nodes = 1;
    for (int i = 0; i < s->n_cpus; i++) {
        s->topo_cpus[i] = (struct topo_cpu){.cpu = i,
                                            .present = true,
                                            .online = true,
                                            .core = i / SMT,
                                            .package = 0,
                                            .llc = llc_of_core(i / SMT),
                                            .node = 0};
        CPU_SET(i, &tp->online);
        CPU_SET(i, &tp->present);
    }
    for (int c = 0; c < P.n_cores; c++) {
        struct topo_core *k = &s->topo_cores[c];
        memset(k, 0, sizeof(*k));
        k->index = c;
        k->core_id = c;
        k->llc = llc_of_core(c);
        k->n_threads = k->n_online = SMT;
        for (int i = 0; i < SMT; i++) {
            CPU_SET(core_first_cpu(c) + i, &k->threads);
            CPU_SET(core_first_cpu(c) + i, &k->online);
        }
    }
    packer_state_init(&s->pst);
    s->smooth_init = false;
    s->jit_mask = tp->online;
    struct probe_config pc;
    probe_config_default(&pc);
    probe_init(&s->probe, &pc);
}

/* What the daemon's tick does (engine.c): per-CPU utilisation from /proc/stat
 * deltas smoothed with load_ewma(); each jitter task's CPU time since the last
 * tick, smoothed per task, summed into the jitter load and charged to the CPU
 * the task last ran on (field 39 of its stat: t->cpu here); then
 * packer_plan(); a changed mask becomes every jitter task's affinity. */
/* The daemon's view this tick: smoothed per-CPU utilisation, per-CPU jitter
 * shares and the jitter load, then packer_plan(). */
static int daemon_observe(struct sim *s, int *util, int *jit, unsigned *jload_ret)
{
    const struct config *cfg = &daemon_cfg;
    double tick_us = cfg->tick_ms * 1000.0;
    unsigned jload = 0;

    for (int i = 0; i < s->n_cpus; i++)
        jit[i] = 0;
    for (int i = 0; i < s->n_tasks; i++) {
        struct task *t = &s->tasks[i];
        if (t->kind != T_JITTER)
            continue;
        unsigned sample = (unsigned)MIN(1000.0, t->busy_tick_us / tick_us * 1000.0);
        t->busy_tick_us = 0;
        /* the first tick only records the runtime: no delta yet */
        if (s->smooth_init)
            t->daemon_util = load_ewma(t->daemon_util, sample, cfg->tick_ms, cfg->policy.half_life_ms);
        jload += t->daemon_util;
        jit[t->cpu] = (int)MIN((unsigned)jit[t->cpu] + t->daemon_util, 1000u);
    }
    for (int i = 0; i < s->n_cpus; i++) {
        struct cpu *c = &s->cpus[i];
        unsigned u = (unsigned)MIN(1000.0, c->busy_tick_us / tick_us * 1000.0);
        c->busy_tick_us = 0;
        s->cpu_util_s[i] = s->smooth_init ? load_ewma(s->cpu_util_s[i], u, cfg->tick_ms, cfg->policy.half_life_ms) : u;
        util[i] = (int)s->cpu_util_s[i];
    }
    s->smooth_init = true;
    *jload_ret = jload;

    struct packer_input in = {
        .topo = &s->topo,
        .cap = &cfg->capacity,
        .cpu_util_milli = util,
        .n_cpu_util = s->n_cpus,
        .cpu_jitter_milli = pass_cpu_jitter ? jit : NULL,
        .jitter_load_milli = jload,
        .params = &cfg->policy,
        .now_ms = (uint64_t)llround(s->now / 1000.0),
    };
    int r = packer_plan(&in, &s->pst, s->plan);
    if (r < 0)
        return r;
    if (trace)
        fprintf(stderr, "N=%d t=%.0f ms%s: %s\n", s->n_int, s->now / 1000, s->plan->changed ? " (changed)" : "",
                s->plan->summary);
    return 0;
}

/* Every jitter task's affinity becomes mask (all online CPUs when not
 * restricted). A sleeping task keeps prev_cpu; the wake-up falls back if it
 * is no longer allowed. A running one finishes its (short) burst. */
static void set_jitter_mask(struct sim *s, bool restricted, const cpu_set_t *mask)
{
    cpu_set_t m;
    if (restricted)
        CPU_AND(&m, mask, &s->topo.online);
    else
        m = s->topo.online;
    s->restricted = restricted;
    if (CPU_EQUAL(&m, &s->jit_mask))
        return;
    s->jit_mask = m;
    if (s->now >= s->measure_from)
        s->mask_changes++;
    for (int i = 0; i < s->n_tasks; i++)
        if (s->tasks[i].kind == T_JITTER)
            s->tasks[i].allowed = m;
}

static void turboschedd_tick(struct sim *s)
{
    int util[MAX_CPUS], jit[MAX_CPUS];
    unsigned jload;
    if (daemon_observe(s, util, jit, &jload) < 0)
        return;
    set_jitter_mask(s, s->plan->restricted, &s->plan->mask);
}

/* The benefit policies see what the daemon sees: a core is busy when its
 * utilisation without the jitter charged to it passes the busy threshold;
 * the jitter's time on busy cores is the shares charged to them. */
static void benefit_snapshot_build(struct sim *s, const int *util, const int *jit, unsigned jload,
                                   struct benefit_core *cores, struct benefit_snapshot *snap)
{
    const struct config *cfg = &daemon_cfg;
    unsigned on_busy = 0;
    for (int c = 0; c < P.n_cores; c++) {
        /* summed over the core: a jitter task's whole share is charged to
         * the one CPU it last ran on, though it ran on several siblings */
        int u = 0, jc = 0;
        for (int i = 0; i < SMT; i++) {
            int cpu = core_first_cpu(c) + i;
            u += util[cpu];
            jc += jit[cpu];
        }
        unsigned intensive = (unsigned)MAX(0, u - jc);
        unsigned cap = capacity_core_milli(&cfg->capacity, (unsigned)SMT);
        cores[c] = (struct benefit_core){.threads = (unsigned)SMT,
                                         .intensive_milli = intensive,
                                         .busy = intensive * 1000 >= cfg->policy.busy_threshold_milli * cap};
        if (cores[c].busy)
            on_busy += (unsigned)jc;
    }
    *snap = (struct benefit_snapshot){
        .n_cores = (unsigned)P.n_cores,
        .cores = cores,
        .cap = &cfg->capacity,
        .jitter_milli = jload,
        .jitter_on_busy_milli = on_busy,
        .n_jitter_tasks = (unsigned)s->n_jit,
        .headroom_milli = cfg->policy.headroom_milli,
        .freq = NULL,
    };
}

/* Apply a benefit plan: pack = the packer's own applied mask; isolate = the
 * n idle cores, keeping the ones already in use while they stay idle. */
static void benefit_apply(struct sim *s, enum benefit_plan plan, const struct benefit_snapshot *snap,
                          const struct benefit_estimate *est)
{
    const struct benefit_core *cores = snap->cores;
    cpu_set_t m;
    CPU_ZERO(&m);
    if (plan != s->bplan || !s->bplan_set) {
        s->bplan = plan;
        s->bplan_since = s->now;
        s->bplan_set = true;
    }
    switch (plan) {
    case BENEFIT_PACK:
        if (s->plan->restricted) {
            set_jitter_mask(s, true, &s->plan->mask);
            return;
        }
        /* the packer does not restrict (every core busy): the least loaded
         * busy cores, where jitter costs least */
        for (int c = 0; c < P.n_cores; c++)
            if (benefit_pack_core(snap, (unsigned)c))
                for (int i = 0; i < SMT; i++)
                    CPU_SET(core_first_cpu(c) + i, &m);
        set_jitter_mask(s, CPU_COUNT(&m) > 0, &m);
        return;
    case BENEFIT_ISOLATE: {
        unsigned want = est[BENEFIT_ISOLATE].n_isolate, have = 0;
        for (int c = 0; c < P.n_cores; c++) {
            if (s->iso_core[c] && (cores[c].busy || have >= want))
                s->iso_core[c] = false;
            have += s->iso_core[c];
        }
        for (int c = P.n_cores - 1; c >= 0 && have < want; c--)
            if (!cores[c].busy && !s->iso_core[c]) {
                s->iso_core[c] = true;
                have++;
            }
        for (int c = 0; c < P.n_cores; c++)
            if (s->iso_core[c])
                for (int i = 0; i < SMT; i++)
                    CPU_SET(core_first_cpu(c) + i, &m);
        set_jitter_mask(s, have > 0, &m);
        return;
    }
    default:
        set_jitter_mask(s, false, &m);
        return;
    }
}

/* What per-core residency in the deep idle states (cpuidle's stateN/time)
 * would give over the last tick: the active cores beyond the busy ones; and
 * their entries (stateN/usage): the idle cores' wake-ups. Kept for no
 * restriction, or for the isolation applied (under the load it was chosen
 * for), halfway towards each new tick's figure. */
static void measure_idle(struct sim *s, const struct benefit_core *cores, double active, double tick_us, bool isolated)
{
    unsigned n_busy = 0, wakes = 0;
    for (int c = 0; c < P.n_cores; c++) {
        n_busy += cores[c].busy;
        wakes += cores[c].busy ? 0 : s->tick_core_wakes[c];
    }
    double woken = MAX(0.0, active - n_busy), wakes_per_s = wakes / (tick_us / 1e6);
    if (isolated) {
        bool same = s->iso_known && s->iso_sig == s->iso_plan_sig;
        s->iso_woken = same ? 0.5 * (s->iso_woken + woken) : woken;
        s->iso_wakes = same ? 0.5 * (s->iso_wakes + wakes_per_s) : wakes_per_s;
        s->iso_sig = s->iso_plan_sig;
        s->iso_known = true;
        return;
    }
    s->none_woken = s->none_woken_known ? 0.5 * (s->none_woken + woken) : woken;
    s->none_wakes = s->none_woken_known ? 0.5 * (s->none_wakes + wakes_per_s) : wakes_per_s;
    s->none_woken_known = true;
}

/* benefit-table: the model with the chip's frequency table; a changed plan
 * applies only after the packer's hold time of observation, and at most once
 * per min_change (the packer's settings), besides the model's own margin. */
static void benefit_table_tick(struct sim *s)
{
    const struct config *cfg = &daemon_cfg;
    int util[MAX_CPUS], jit[MAX_CPUS];
    unsigned jload;
    struct benefit_core cores[MAX_CORES];
    struct benefit_snapshot snap;
    struct benefit_choice ch;

    double active = s->tick_time > 0 ? s->tick_active_time / s->tick_time : 0, tick_us = s->tick_time;
    bool unconfined = !s->restricted, isolated = s->restricted && s->bplan_set && s->bplan == BENEFIT_ISOLATE;
    s->tick_active_time = s->tick_time = 0;
    if (daemon_observe(s, util, jit, &jload) < 0)
        return;
    benefit_snapshot_build(s, util, jit, jload, cores, &snap);
    snap.freq = &s->fr;
    if ((unconfined || isolated) && active > 0)
        measure_idle(s, cores, active, tick_us, isolated);
    memset(s->tick_core_wakes, 0, sizeof(s->tick_core_wakes));
    snap.none_woken_measured = snap.none_wakes_measured = pass_none_woken && s->none_woken_known;
    snap.none_woken_milli = (unsigned)lround(1000 * s->none_woken);
    snap.none_wakes_per_s = (unsigned)lround(s->none_wakes);
    snap.iso_measured = pass_none_woken && s->iso_known;
    snap.iso_sig = s->iso_sig;
    snap.iso_woken_milli = (unsigned)lround(1000 * s->iso_woken);
    snap.iso_wakes_per_s = (unsigned)lround(s->iso_wakes);
    snap.iso_trial_ok = s->trial_at < 0 || s->now - s->trial_at >= BENEFIT_TRIAL_AGAIN_MS * 1000.0;
    snap.in_trial = s->in_trial;
    snap.trial_from = s->trial_from;
    snap.reeval_us = (unsigned)lround(P.wof_interval_us);
    if (benefit_choose(&snap, s->bplan_set ? s->bplan : BENEFIT_UNKNOWN, benefit_margin_bp, &ch) < 0)
        return;
    snprintf(s->bexplain, sizeof s->bexplain, "%s", ch.explain);
    if (trace)
        fprintf(stderr, "N=%d t=%.0f ms benefit: %s\n", s->n_int, s->now / 1000, ch.explain);
    if (ch.plan == BENEFIT_UNKNOWN) {
        /* no table: today's policy */
        set_jitter_mask(s, s->plan->restricted, &s->plan->mask);
        return;
    }
    double now_ms = s->now / 1000.0;
    bool may_change = !s->bplan_set ? now_ms >= cfg->tick_ms + cfg->policy.hold_ms
                                    : now_ms - s->bplan_since / 1000.0 >= cfg->policy.min_change_ms;
    enum benefit_plan plan = ch.plan;
    if (s->bplan_set && plan != s->bplan && !may_change)
        plan = s->bplan;
    if (!s->bplan_set && !may_change)
        return;
    if (plan == BENEFIT_ISOLATE) {
        /* what the next tick measures is for this load */
        s->iso_plan_sig = ch.est[BENEFIT_ISOLATE].load_sig;
        if (ch.trial && !s->in_trial)
            s->trial_at = s->now;
        s->in_trial = benefit_trial_goes_on(s->in_trial, ch.trial, ch.plan, may_change);
        if (ch.trial)
            s->trial_from = ch.trial_from;
    } else {
        s->in_trial = false;
    }
    benefit_apply(s, plan, &snap, ch.est);
}

/* benefit-probe: no table; the probe loop alternates plans and learns from
 * the busy cores' measured frequency (with --probe-noise-mhz of noise). */
static void benefit_probe_tick(struct sim *s)
{
    const struct config *cfg = &daemon_cfg;
    int util[MAX_CPUS], jit[MAX_CPUS];
    unsigned jload;
    struct benefit_core cores[MAX_CORES];
    struct benefit_snapshot snap;
    struct benefit_estimate est[BENEFIT_N_PLANS];

    if (daemon_observe(s, util, jit, &jload) < 0)
        return;
    double f = s->tick_run_time > 0 ? s->tick_freq_time / s->tick_run_time : 0;
    s->tick_freq_time = s->tick_run_time = 0;
    if (s->now / 1000.0 < cfg->tick_ms + cfg->policy.hold_ms)
        return; /* the same start as the packer: hold before the first plan */
    benefit_snapshot_build(s, util, jit, jload, cores, &snap);
    benefit_estimate_all(&snap, est);
    if (probe_noise_mhz > 0)
        f += (2 * ((double)(rng_next(&s->noise_rng) >> 11) / 9007199254740992.0) - 1) * probe_noise_mhz;
    /* the load's signature: cores with a CPU carrying at least half an
     * intensive thread, and the jitter tasks. Half a thread is far above
     * what jitter leaves behind when it moves between plans. Counted per
     * CPU, not per core: when a probe moves many jitter tasks onto one
     * busy core, their whole smoothed load is charged to it at once while
     * its utilisation catches up over a second, and the core's sum read
     * as less than half a thread for two ticks (p9-22, N = 18-19); the
     * intensive thread's own CPU is charged only the jitter that last ran
     * there. */
    unsigned n_loaded = 0;
    for (int c = 0; c < P.n_cores; c++) {
        bool loaded = false;
        for (int i = 0; i < SMT; i++) {
            int cpu = core_first_cpu(c) + i;
            loaded |= util[cpu] - jit[cpu] >= 500;
        }
        n_loaded += loaded;
    }
    struct probe_input in = {
        .now_ms = (uint64_t)llround(s->now / 1000.0),
        .measurable = f > 0,
        .busy_mhz = f,
        .load_sig = (uint64_t)n_loaded << 32 | (unsigned)s->n_jit,
        .est = est,
    };
    enum benefit_plan plan = probe_step(&s->probe, &in);
    snprintf(s->bexplain, sizeof s->bexplain, "%s", s->probe.explain);
    if (trace)
        fprintf(stderr, "N=%d t=%.0f ms probe (%.0f MHz; cost pack %.2f%%; %u loaded cores): %s -> %s\n", s->n_int,
                s->now / 1000, f, 100 * est[BENEFIT_PACK].jitter_cost, n_loaded, s->probe.explain,
                benefit_plan_name(plan));
    if (plan == BENEFIT_UNKNOWN) {
        set_jitter_mask(s, s->plan->restricted, &s->plan->mask);
        return;
    }
    benefit_apply(s, plan, &snap, est);
}
#else
static void turboschedd_tick(struct sim *s) { (void)s; }
static void benefit_table_tick(struct sim *s) { (void)s; }
static void benefit_probe_tick(struct sim *s) { (void)s; }
#endif

/* ---- one run ---- */

struct result {
    double ops_per_s;     /* G thread-cycles per second (SMT share weighted) */
    double freq_mhz;      /* mean frequency seen by intensive threads */
    double chip_freq_mhz; /* time-averaged chip frequency */
    double max_freq_mhz;
    double active_cores;
    double lat_p50_us, lat_p99_us;
    double packed_share;
    double mask_changes_per_min;
    double deep_wakes_per_s; /* cores woken out of the deep states (each throttles the chip) */
    char plan_summary[256];  /* turboschedd: the last plan's explanation */
};

/* Cores in the order CFS's fork balancing fills them: one per LLC first,
 * then the LLCs' other cores. */
static void spread_order(int *order)
{
    int n = 0;
    for (int k = 0; k < P.llc_cores; k++)
        for (int c = k; c < P.n_cores; c += P.llc_cores)
            order[n++] = c;
}

static int place_fork(const int *load, const int *cpu_load, const bool *core_ok, const int *order)
{
    /* find_idlest: the core with the fewest tasks, then its least loaded CPU */
    int best = -1;
    for (int k = 0; k < P.n_cores; k++) {
        int c = order[k];
        if (!core_ok[c])
            continue;
        if (best < 0 || load[c] < load[best])
            best = c;
    }
    if (best < 0)
        return -1;
    int cpu = core_first_cpu(best);
    for (int i = 1; i < SMT; i++)
        if (cpu_load[core_first_cpu(best) + i] < cpu_load[cpu])
            cpu = core_first_cpu(best) + i;
    return cpu;
}

static double hist_pct(const struct sim *s, double pct)
{
    if (!s->n_lat)
        return 0;
    uint64_t rank = (uint64_t)ceil(s->n_lat * pct / 100.0), acc = 0;
    for (int i = 0; i <= LAT_BINS; i++) {
        acc += s->lat_hist[i];
        if (acc >= rank)
            return i + 0.5;
    }
    return LAT_BINS;
}

static int run_one(const struct policy *pol, int iso_k, int n, struct result *res, void *plan_buf)
{
    _cleanup_free_ struct sim *s = calloc(1, sizeof(*s));
    if (!s)
        return -ENOMEM;
    s->pol = pol;
    s->iso_k = iso_k;
    s->n_int = n;
    s->n_jit = n;
    s->trial_at = -1;
    s->n_cpus = P.n_cores * SMT;
    s->rng = P.seed * 0x2545f4914f6cdd1dull + (uint64_t)n * 7919 + (uint64_t)iso_k * 104729;
    capacity_table_default(&s->cap);
    for (int a = 1; a <= P.n_cores; a++)
        s->f_table[a] = P.f_given_mhz[1]
                            ? P.f_given_mhz[a]
                            : MIN(P.f_max_mhz, P.f_nominal_mhz * pow((double)P.n_cores / a, 1.0 / P.power_exp));
    s->f_table[0] = s->f_table[1];
    /* benefit-table's input: the chip's table, as a [capacity] section gives it */
    freq_response_init(&s->fr, (unsigned)P.n_cores);
    for (int a = 1; a <= P.n_cores; a++)
        s->fr.mhz[a] = (unsigned)lround(s->f_table[a]);
    s->noise_rng = P.seed * 0x9e3779b97f4a7c15ull + (uint64_t)n;
    if (2 * n > MAX_TASKS || 2 * n > s->n_cpus * 2)
        return -E2BIG;

    cpu_set_t all, jit_ok, int_ok;
    CPU_ZERO(&all);
    CPU_ZERO(&jit_ok);
    CPU_ZERO(&int_ok);
    bool core_jit[MAX_CORES], core_int[MAX_CORES];
    for (int c = 0; c < P.n_cores; c++) {
        bool iso_core = iso_k > 0 && c >= P.n_cores - iso_k;
        core_jit[c] = iso_k == 0 || iso_core;
        core_int[c] = iso_k == 0 || !iso_core;
        for (int i = 0; i < SMT; i++) {
            int cpu = core_first_cpu(c) + i;
            CPU_SET(cpu, &all);
            if (core_jit[c])
                CPU_SET(cpu, &jit_ok);
            if (core_int[c])
                CPU_SET(cpu, &int_ok);
        }
    }
    for (int i = 0; i < s->n_cpus; i++) {
        s->cpus[i] = (struct cpu){.core = i / SMT, .home = -1, .cur = -1, .idle_state = P.n_stop - 1};
    }

    /* turbo_bench creates the intensive threads first, then the jitter ones,
     * 1 ms apart; fork placement spreads them by load. */
    int order[MAX_CORES], load[MAX_CORES] = {0}, cpu_load[MAX_CPUS] = {0};
    spread_order(order);
    s->now = 0;
    for (int i = 0; i < n; i++) {
        struct task *t = &s->tasks[s->n_tasks];
        *t = (struct task){.kind = T_INTENSIVE, .allowed = int_ok};
        int cpu = place_fork(load, cpu_load, core_int, order);
        if (cpu < 0)
            return -EINVAL;
        t->cpu = cpu;
        t->runnable = true;
        s->cpus[cpu].home = s->n_tasks;
        s->cpus[cpu].start_at = i * 1000.0;
        load[cpu / SMT]++;
        cpu_load[cpu]++;
        s->n_tasks++;
    }
    for (int i = 0; i < n; i++) {
        struct task *t = &s->tasks[s->n_tasks];
        *t = (struct task){.kind = T_JITTER, .allowed = jit_ok};
        int cpu = place_fork(load, cpu_load, core_jit, order);
        if (cpu < 0)
            return -EINVAL;
        load[cpu / SMT]++;
        cpu_load[cpu]++;
        t->cpu = cpu;
        t->timer_cpu = cpu;
        t->runnable = false;
        t->intended = (n + i) * 1000.0;
        t->wake_at = t->intended;
        s->n_tasks++;
    }

#if HAVE_PACKER
    if (pol->tick) {
        s->plan = plan_buf;
        daemon_setup(s);
    }
#else
    (void)plan_buf;
    if (pol->tick)
        return -EOPNOTSUPP;
#endif

    s->measure_from = P.warmup_s * 1e6;
    s->end = s->measure_from + P.measure_s * 1e6;
    s->f_mhz = s->f_table[n_active_units(s)];
    s->next_tick = pol->tick ? daemon_cfg.tick_ms * 1000.0 : NEVER;

    while (s->now < s->end) {
        /* next event */
        double t_next = MIN(s->end, s->next_tick);
        int n_active = n_active_units(s);
        /* a WOF pass only matters while the limit is above the frequency */
        s->next_wof = NEVER;
        if (s->f_mhz < s->f_table[n_active]) {
            s->next_wof = (floor(s->now / P.wof_interval_us + 1e-9) + 1) * P.wof_interval_us;
            t_next = MIN(t_next, s->next_wof);
        }
        if (s->now < s->measure_from)
            t_next = MIN(t_next, s->measure_from);
        double share[MAX_CORES];
        for (int c = 0; c < P.n_cores; c++)
            share[c] = share_of_core(s, c);
        for (int i = 0; i < s->n_cpus; i++) {
            struct cpu *c = &s->cpus[i];
            if (c->start_at > s->now)
                t_next = MIN(t_next, c->start_at);
            if (c->transient_until > s->now)
                t_next = MIN(t_next, c->transient_until);
            if (c->cur >= 0 && s->now >= c->start_at) {
                double rate = s->f_mhz * share[c->core];
                double left = s->tasks[c->cur].left_cycles;
                t_next = MIN(t_next, s->now + (left > 0 ? left / rate : 0));
            }
        }
        for (int i = 0; i < s->n_tasks; i++) {
            struct task *t = &s->tasks[i];
            if (t->kind == T_JITTER && !t->runnable)
                t_next = MIN(t_next, MAX(t->wake_at, s->now));
        }

        advance(s, t_next - s->now, share, n_active);
        s->now = t_next;

        const double eps = 1e-6, eps_cycles = 1e-3;
        bool wof = false;
        /* finished jitter bursts */
        for (int i = 0; i < s->n_cpus; i++) {
            struct cpu *c = &s->cpus[i];
            if (c->cur >= 0 && s->now >= c->start_at && s->tasks[c->cur].left_cycles <= eps_cycles)
                jitter_done(s, i);
        }
        /* timers */
        for (int i = 0; i < s->n_tasks; i++) {
            struct task *t = &s->tasks[i];
            if (t->kind == T_JITTER && !t->runnable && t->wake_at <= s->now + eps) {
                jitter_wake(s, i);
                if (s->cpus[t->cpu].cur == i)
                    t->wake_at = s->cpus[t->cpu].start_at;
            }
        }
        /* CPUs whose transient wake-up ended go back to idle */
        for (int i = 0; i < s->n_cpus; i++) {
            struct cpu *c = &s->cpus[i];
            if (c->transient_until > 0 && c->transient_until <= s->now + eps) {
                c->transient_until = 0;
                cpu_go_idle_if_empty(s, i);
            }
        }
        if (s->now >= s->next_wof - eps)
            wof = true;
        if (s->now >= s->next_tick - eps) {
            s->next_tick += daemon_cfg.tick_ms * 1000.0;
            pol->tick(s);
        }
        update_freq(s, wof);
    }

    double ops = 0, ft = 0, rt = 0;
    for (int i = 0; i < s->n_tasks; i++) {
        ops += s->tasks[i].ops;
        ft += s->tasks[i].freq_time;
        rt += s->tasks[i].run_time;
    }
    double dur = s->end - s->measure_from;
    res->ops_per_s = ops / dur / 1000.0; /* cycles per us / 1000 = G per s */
    res->freq_mhz = rt > 0 ? ft / rt : 0;
    res->chip_freq_mhz = s->chip_freq_time / dur;
    res->max_freq_mhz = s->f_seen_max;
    res->active_cores = s->active_time / dur;
    res->lat_p50_us = hist_pct(s, 50);
    res->lat_p99_us = hist_pct(s, 99);
    res->packed_share = s->packed_time / dur;
    res->mask_changes_per_min = s->mask_changes / (dur / 60e6);
    res->deep_wakes_per_s = s->deep_wakes / (dur / 1e6);
#if HAVE_PACKER
    if (pol->tick)
        snprintf(res->plan_summary, sizeof(res->plan_summary), "%s",
                 pol->tick == turboschedd_tick ? s->plan->summary : s->bexplain);
#endif
    return 0;
}

/* ---- sweep ---- */

enum { POL_CFS, POL_TS, POL_ISO1, POL_ISO2, POL_TSD, POL_BT, POL_BP, N_POL };
static const char *const pol_names[N_POL] = {"cfs",         "turbosched",    "iso1",         "iso2",
                                             "turboschedd", "benefit-table", "benefit-probe"};

#define MAX_WORKERS 16

/* Runs are independent: workers take them from a shared counter. Results land
 * in fixed slots, so the output does not depend on the number of workers. */
struct sweep {
    const int *ns;
    int n_n;
    const bool *have;
    struct result *res;
    atomic_int next;
    pthread_mutex_t lock;
    int err, err_n, err_pol;
};

static void *sweep_worker(void *arg)
{
    struct sweep *sw = arg;
    _cleanup_free_ void *plan_buf = NULL;
#if HAVE_PACKER
    plan_buf = malloc(sizeof(struct packer_plan));
    if (!plan_buf) {
        pthread_mutex_lock(&sw->lock);
        sw->err = -ENOMEM;
        pthread_mutex_unlock(&sw->lock);
        return NULL;
    }
#endif
    for (;;) {
        int job = atomic_fetch_add(&sw->next, 1);
        if (job >= sw->n_n * N_POL)
            break;
        int k = job / N_POL, p = job % N_POL;
        if (!sw->have[p])
            continue;
        const struct policy *pol = &policies[p == POL_CFS   ? 0
                                             : p == POL_TS  ? 1
                                             : p == POL_TSD ? 3
                                             : p == POL_BT  ? 4
                                             : p == POL_BP  ? 5
                                                            : 2];
        int iso_k = p == POL_ISO1 ? 1 : p == POL_ISO2 ? 2 : 0;
        int r = run_one(pol, iso_k, sw->ns[k], &sw->res[job], plan_buf);
        if (r < 0) {
            pthread_mutex_lock(&sw->lock);
            sw->err = r;
            sw->err_n = sw->ns[k];
            sw->err_pol = p;
            pthread_mutex_unlock(&sw->lock);
        }
    }
    return NULL;
}

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: turbosched-sim [OPTIONS]\n"
            "  --quick               short sweep (N = 2,8,12,16,32; short runs), for tests\n"
            "  --n LIST              intensive thread counts, CPU-list syntax (default 2-32)\n"
            "  --csv PATH            write the results as CSV\n"
            "  --png PATH            plot the CSV with gnuplot (needs --csv)\n"
            "  --plot-script PATH    gnuplot script (default tools/sim-plot.gp)\n"
            "  --seed S              timer-slack seed (default 1)\n"
            "  --jobs J              runs in parallel (default: online CPUs)\n"
            "  -v, --verbose         print the daemon's last plan for each N\n"
            "      --trace           print every daemon tick's plan to stderr\n"
            "  --chip p9-16|p9-22|x86-8|x86-e5v2  chip shape (p9-16; see docs/simulator.md)\n"
            "  --benefit-margin-bp B the benefit model's margin (%u basis points)\n"
            "  --probe-noise-mhz F   benefit-probe's frequency samples err by up to F MHz (20)\n"
            "      --no-woken        benefit-table without the measured count of idle cores unconfined\n"
            "                        jitter keeps active and their wake-ups (one core per jitter task,\n"
            "                        never deep, as turboschedd assumes)\n"
            "      --abs-timers      jitter sleeps to absolute times (as tools/turbo-bench), not a period\n"
            "                        from the start of its work (turbo_bench's usleep)\n"
            "      --no-cpu-jitter   turboschedd without per-CPU jitter shares (NULL to packer_plan(),\n"
            "                        as the daemon passed before it charged jitter time to CPUs)\n"
            "  --warmup-s S, --measure-s S   simulated time before/while measuring (6, 3)\n"
            "  --cores C             SMT4 cores on the chip (16)\n"
            "  --fnom-mhz F, --fmax-mhz F    all-core and highest frequency (2700, 3300)\n"
            "  --power-exp X         core power ~ f^X (3)\n"
            "  --wof cores|quads     what the frequency limit counts (cores)\n"
            "  --work-kcycles W      jitter work per period in kcycles (200)\n"
            "  --period-us P         jitter period (3000)\n"
            "  --tick-ms, --hold-ms, --min-change-ms, --half-life-ms, --headroom-milli,\n"
            "  --busy-threshold-milli, --idle-machine-milli, --domain package|llc|numa\n"
            "                        turboschedd settings (default: the daemon's own defaults)\n",
            BENEFIT_MARGIN_BP_DEFAULT);
}

/* The chip shapes. p9-16 is the default (docs/simulator.md); p9-22 is the
 * 22-core POWER9 SMT4 with the same power law; x86-8 is an 8-core SMT2 x86
 * with the per-active-core turbo bins reported for the Core i9-9900K;
 * x86-e5v2 is the Xeon E5-2667 v2 (8 cores, SMT2), whose bins Intel
 * publishes: 3/3/3/3/4/5/6/7 above the 3.3 GHz base for 8 down to 1 active
 * cores. */
static int set_chip(const char *name)
{
    if (strcmp(name, "p9-16") == 0) {
        P.n_cores = 16;
    } else if (strcmp(name, "p9-22") == 0) {
        P.n_cores = 22;
    } else if (strcmp(name, "x86-8") == 0) {
        static const unsigned bins[] = {0, 5000, 5000, 4800, 4800, 4700, 4700, 4700, 4700};
        P.smt = 2;
        P.stop = x86_states;
        P.n_stop = (int)ELEMENTSOF(x86_states);
        P.n_cores = 8;
        P.llc_cores = 8;        /* one L3 for the chip */
        P.f_nominal_mhz = 4700; /* all-core turbo */
        P.f_max_mhz = 5000;
        memcpy(P.f_given_mhz, bins, sizeof(bins));
    } else if (strcmp(name, "x86-e5v2") == 0) {
        static const unsigned bins[] = {0, 4000, 3900, 3800, 3700, 3600, 3600, 3600, 3600};
        P.smt = 2;
        P.stop = ivt_states;
        P.n_stop = (int)ELEMENTSOF(ivt_states);
        P.n_cores = 8;
        P.llc_cores = 8;        /* one L3 for the chip */
        P.f_nominal_mhz = 3600; /* all-core turbo */
        P.f_max_mhz = 4000;
        memcpy(P.f_given_mhz, bins, sizeof(bins));
    } else {
        return -EINVAL;
    }
    P.chip = name;
    return 0;
}

static int parse_double(const char *s, double *ret)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= 0))
        return -EINVAL;
    *ret = v;
    return 0;
}

int main(int argc, char **argv)
{
    enum {
        O_QUICK = 256,
        O_N,
        O_CSV,
        O_PNG,
        O_SCRIPT,
        O_SEED,
        O_WARM,
        O_MEAS,
        O_CORES,
        O_FNOM,
        O_FMAX,
        O_PEXP,
        O_WOF,
        O_WORK,
        O_PERIOD,
        O_TICK,
        O_HOLD,
        O_MINCH,
        O_HALF,
        O_HEAD,
        O_BUSY,
        O_IDLE,
        O_JOBS,
        O_DOMAIN,
        O_NO_CPU_JITTER,
        O_CHIP,
        O_MARGIN,
        O_NOISE,
        O_NO_WOKEN,
        O_ABS_TIMERS,
    };
    static const struct option longopts[] = {
        {"quick", no_argument, NULL, O_QUICK},
        {"n", required_argument, NULL, O_N},
        {"csv", required_argument, NULL, O_CSV},
        {"png", required_argument, NULL, O_PNG},
        {"plot-script", required_argument, NULL, O_SCRIPT},
        {"seed", required_argument, NULL, O_SEED},
        {"warmup-s", required_argument, NULL, O_WARM},
        {"measure-s", required_argument, NULL, O_MEAS},
        {"cores", required_argument, NULL, O_CORES},
        {"fnom-mhz", required_argument, NULL, O_FNOM},
        {"fmax-mhz", required_argument, NULL, O_FMAX},
        {"power-exp", required_argument, NULL, O_PEXP},
        {"wof", required_argument, NULL, O_WOF},
        {"work-kcycles", required_argument, NULL, O_WORK},
        {"period-us", required_argument, NULL, O_PERIOD},
        {"tick-ms", required_argument, NULL, O_TICK},
        {"hold-ms", required_argument, NULL, O_HOLD},
        {"min-change-ms", required_argument, NULL, O_MINCH},
        {"half-life-ms", required_argument, NULL, O_HALF},
        {"headroom-milli", required_argument, NULL, O_HEAD},
        {"busy-threshold-milli", required_argument, NULL, O_BUSY},
        {"idle-machine-milli", required_argument, NULL, O_IDLE},
        {"jobs", required_argument, NULL, O_JOBS},
        {"domain", required_argument, NULL, O_DOMAIN},
        {"no-cpu-jitter", no_argument, NULL, O_NO_CPU_JITTER},
        {"chip", required_argument, NULL, O_CHIP},
        {"benefit-margin-bp", required_argument, NULL, O_MARGIN},
        {"probe-noise-mhz", required_argument, NULL, O_NOISE},
        {"no-woken", no_argument, NULL, O_NO_WOKEN},
        {"abs-timers", no_argument, NULL, O_ABS_TIMERS},
        {"verbose", no_argument, NULL, 'v'},
        {"trace", no_argument, NULL, 'T'},
        {"help", no_argument, NULL, 'h'},
        {},
    };
    unsigned jobs = 0;
    bool verbose = false;
    const char *csv_path = NULL, *png_path = NULL, *script = "tools/sim-plot.gp";
    cpu_set_t nset;
    bool quick = false, n_given = false;
    int c, r = 0;

    config_init_defaults(&daemon_cfg); /* stays reachable until exit: never freed */
    CPU_ZERO(&nset);
    /* the chip shape first, so that the other options refine it */
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        if (strncmp(argv[i], "--chip=", 7) == 0)
            v = argv[i] + 7;
        else if (strcmp(argv[i], "--chip") == 0 && i + 1 < argc)
            v = argv[i + 1];
        if (v && set_chip(v) < 0) {
            fprintf(stderr, "invalid value for --chip: '%s' (p9-16, p9-22, x86-8, x86-e5v2)\n", v);
            return 2;
        }
    }
    while ((c = getopt_long(argc, argv, "hv", longopts, NULL)) >= 0) {
        unsigned u = 0;
        double d = 0;
        switch (c) {
        case O_QUICK:
            quick = true;
            break;
        case O_N:
            r = cpulist_parse(optarg, &nset);
            n_given = true;
            break;
        case O_CSV:
            csv_path = optarg;
            break;
        case O_PNG:
            png_path = optarg;
            break;
        case O_SCRIPT:
            script = optarg;
            break;
        case O_SEED:
            r = parse_uint(optarg, &u);
            P.seed = u;
            break;
        case O_WARM:
            r = parse_double(optarg, &P.warmup_s);
            break;
        case O_MEAS:
            r = parse_double(optarg, &P.measure_s);
            break;
        case O_CORES:
            r = parse_uint(optarg, &u);
            P.n_cores = (int)u;
            break;
        case O_FNOM:
            r = parse_double(optarg, &P.f_nominal_mhz);
            break;
        case O_FMAX:
            r = parse_double(optarg, &P.f_max_mhz);
            break;
        case O_PEXP:
            r = parse_double(optarg, &d);
            P.power_exp = d;
            break;
        case O_WOF:
            if (strcmp(optarg, "cores") == 0)
                P.wof_by_quad = false;
            else if (strcmp(optarg, "quads") == 0)
                P.wof_by_quad = true;
            else
                r = -EINVAL;
            break;
        case O_WORK:
            r = parse_double(optarg, &P.work_kcycles);
            break;
        case O_PERIOD:
            r = parse_double(optarg, &P.period_us);
            break;
        case O_TICK:
            r = parse_uint(optarg, &daemon_cfg.tick_ms);
            break;
        case O_HOLD:
            r = parse_uint(optarg, &daemon_cfg.policy.hold_ms);
            break;
        case O_MINCH:
            r = parse_uint(optarg, &daemon_cfg.policy.min_change_ms);
            break;
        case O_HALF:
            r = parse_uint(optarg, &daemon_cfg.policy.half_life_ms);
            break;
        case O_HEAD:
            r = parse_uint(optarg, &daemon_cfg.policy.headroom_milli);
            break;
        case O_BUSY:
            r = parse_uint(optarg, &daemon_cfg.policy.busy_threshold_milli);
            break;
        case O_IDLE:
            r = parse_uint(optarg, &daemon_cfg.policy.idle_machine_milli);
            break;
        case O_DOMAIN:
            if (strcmp(optarg, "package") == 0)
                daemon_cfg.policy.domain = DOMAIN_PACKAGE;
            else if (strcmp(optarg, "llc") == 0)
                daemon_cfg.policy.domain = DOMAIN_LLC;
            else if (strcmp(optarg, "numa") == 0)
                daemon_cfg.policy.domain = DOMAIN_NUMA;
            else
                r = -EINVAL;
            break;
        case O_NO_CPU_JITTER:
            pass_cpu_jitter = false;
            break;
        case O_CHIP:
            break; /* applied above */
        case O_MARGIN:
            r = parse_uint(optarg, &benefit_margin_bp);
            break;
        case O_NOISE:
            r = parse_double(optarg, &probe_noise_mhz);
            break;
        case O_NO_WOKEN:
            pass_none_woken = false;
            break;
        case O_ABS_TIMERS:
            abs_timers = true;
            break;
        case O_JOBS:
            r = parse_uint(optarg, &jobs);
            break;
        case 'v':
            verbose = true;
            break;
        case 'T':
            trace = true;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
        if (r < 0) {
            fprintf(stderr, "invalid value for --%s: '%s'\n", longopts[c - O_QUICK].name, optarg);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (png_path && !csv_path) {
        fprintf(stderr, "--png needs --csv\n");
        return 2;
    }
    if (P.n_cores < 2 || P.n_cores > MAX_CORES || P.f_max_mhz < P.f_nominal_mhz || P.f_nominal_mhz <= 0 ||
        P.power_exp <= 0 || P.period_us <= 0 || P.measure_s <= 0 || daemon_cfg.tick_ms == 0) {
        fprintf(stderr, "inconsistent model parameters\n");
        return 2;
    }
    if (quick) {
        if (!n_given)
            cpulist_parse("2,8,12,16,32", &nset);
        P.warmup_s = 3.5;
        P.measure_s = 0.5;
    } else if (!n_given) {
        cpulist_parse("2-32", &nset);
    }

    int ns[CPU_SETSIZE], n_n = 0;
    for (int i = 1; i < CPU_SETSIZE; i++)
        if (CPU_ISSET(i, &nset)) {
            if (2 * i > P.n_cores * SMT) {
                fprintf(stderr, "N=%d: more threads than the %d CPUs of the chip\n", i, P.n_cores * SMT);
                return 2;
            }
            ns[n_n++] = i;
        }
    if (n_n == 0) {
        fprintf(stderr, "no N to simulate\n");
        return 2;
    }

    _cleanup_free_ struct result *res = calloc((size_t)n_n * N_POL, sizeof(*res));
    if (!res) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    bool have[N_POL] = {true, true, true, true, HAVE_PACKER, HAVE_PACKER, HAVE_PACKER};
    struct sweep sw = {.ns = ns, .n_n = n_n, .have = have, .res = res, .lock = PTHREAD_MUTEX_INITIALIZER};
    long n_online = sysconf(_SC_NPROCESSORS_ONLN);
    int n_workers = (int)MAX(1, MIN(n_online, MAX_WORKERS));
    if (jobs > 0)
        n_workers = (int)MIN(jobs, MAX_WORKERS);
    pthread_t workers[MAX_WORKERS];
    int started = 0;
    uint64_t t0 = now_ms();

    for (int i = 0; i < n_workers; i++) {
        if (pthread_create(&workers[i], NULL, sweep_worker, &sw) != 0)
            break;
        started++;
    }
    if (started == 0)
        sweep_worker(&sw);
    for (int i = 0; i < started; i++)
        pthread_join(workers[i], NULL);
    if (sw.err < 0) {
        fprintf(stderr, "N=%d %s: %s\n", sw.err_n, pol_names[sw.err_pol], strerror(-sw.err));
        return 1;
    }
    uint64_t elapsed_ms = now_ms() - t0;

    printf("# chip %s: %d SMT%d cores, %.0f-%.0f MHz (%s; limit by active %s), jitter %.0f kcycles every %.0f us, "
           "warm-up %.1f s, measured %.1f s, seed %llu\n",
           P.chip, P.n_cores, P.smt, P.f_nominal_mhz, P.f_max_mhz, P.f_given_mhz[1] ? "published table" : "power law",
           P.wof_by_quad ? "quads" : "cores", P.work_kcycles, P.period_us, P.warmup_s, P.measure_s,
           (unsigned long long)P.seed);
    if (!HAVE_PACKER)
        printf("# turboschedd: not built (no packer.h in this tree)\n");
    else
        printf("# turboschedd: tick %u ms, hold %u ms, min-change %u ms, half-life %u ms, busy %u, headroom %u, "
               "idle-machine %u (milli), domain %s, per-CPU jitter shares %s\n",
               daemon_cfg.tick_ms, daemon_cfg.policy.hold_ms, daemon_cfg.policy.min_change_ms,
               daemon_cfg.policy.half_life_ms, daemon_cfg.policy.busy_threshold_milli, daemon_cfg.policy.headroom_milli,
               daemon_cfg.policy.idle_machine_milli,
               daemon_cfg.policy.domain == DOMAIN_LLC    ? "llc"
               : daemon_cfg.policy.domain == DOMAIN_NUMA ? "numa"
                                                         : "package",
               pass_cpu_jitter ? "on" : "off");
    printf("# ops/s and mean frequency of the intensive threads, relative to cfs (%%)\n");
    printf("%4s %8s %7s | %14s | %14s | %14s | %14s | %14s | %14s\n", "N", "cfs Gop/s", "cfs MHz", "turbosched", "iso1",
           "iso2", "turboschedd", "benefit-table", "benefit-probe");
    for (int k = 0; k < n_n; k++) {
        const struct result *b = &res[k * N_POL];
        printf("%4d %8.2f %7.0f", ns[k], b->ops_per_s, b->freq_mhz);
        for (int p = POL_TS; p < N_POL; p++) {
            const struct result *x = &res[k * N_POL + p];
            if (!have[p])
                printf(" | %14s", "-");
            else
                printf(" | %+6.1f%% %+5.1f%%", 100 * (x->ops_per_s / b->ops_per_s - 1),
                       100 * (x->freq_mhz / b->freq_mhz - 1));
        }
        printf("\n");
    }
    for (int p = POL_TS; p < N_POL; p++) {
        if (!have[p])
            continue;
        double best = -1e9;
        int best_n = 0;
        for (int k = 0; k < n_n; k++) {
            double g = 100 * (res[k * N_POL + p].ops_per_s / res[k * N_POL].ops_per_s - 1);
            if (g > best) {
                best = g;
                best_n = ns[k];
            }
        }
        printf("# %-12s peak ops gain %+.1f%% at N=%d\n", pol_names[p], best, best_n);
    }
    printf("# simulated %d runs in %.1f s\n", n_n * (4 + 3 * HAVE_PACKER), elapsed_ms / 1000.0);
    if (verbose && HAVE_PACKER)
        for (int k = 0; k < n_n; k++)
            for (int p = POL_TSD; p <= POL_BP; p++)
                printf("# %s N=%d: %s\n", pol_names[p], ns[k], res[k * N_POL + p].plan_summary);

    if (csv_path) {
        _cleanup_fclose_ FILE *f = fopen(csv_path, "we");
        if (!f) {
            fprintf(stderr, "%s: %s\n", csv_path, strerror(errno));
            return 1;
        }
        fprintf(f, "policy,n,ops_gps,ops_rel_cfs,freq_mhz,freq_rel_cfs,chip_freq_mhz,max_freq_mhz,"
                   "active_cores,lat_p50_us,lat_p99_us,restricted_share,mask_changes_per_min,deep_wakes_per_s\n");
        for (int p = 0; p <= N_POL; p++) {
            for (int k = 0; k < n_n; k++) {
                const struct result *b = &res[k * N_POL];
                const struct result *x;
                const char *name;
                if (p == N_POL) {
                    /* the better static split for this N */
                    const struct result *i1 = &res[k * N_POL + POL_ISO1], *i2 = &res[k * N_POL + POL_ISO2];
                    x = i1->ops_per_s >= i2->ops_per_s ? i1 : i2;
                    name = "iso-best";
                } else {
                    if (!have[p])
                        break;
                    x = &res[k * N_POL + p];
                    name = pol_names[p];
                }
                fprintf(f, "%s,%d,%.4f,%.4f,%.1f,%.4f,%.1f,%.1f,%.2f,%.1f,%.1f,%.3f,%.1f,%.0f\n", name, ns[k],
                        x->ops_per_s, x->ops_per_s / b->ops_per_s, x->freq_mhz, x->freq_mhz / b->freq_mhz,
                        x->chip_freq_mhz, x->max_freq_mhz, x->active_cores, x->lat_p50_us, x->lat_p99_us,
                        x->packed_share, x->mask_changes_per_min, x->deep_wakes_per_s);
            }
        }
        if (fflush(f) != 0) {
            fprintf(stderr, "%s: %s\n", csv_path, strerror(errno));
            return 1;
        }
    }
    if (png_path) {
        pid_t pid = fork();
        if (pid < 0) {
            fprintf(stderr, "fork: %s\n", strerror(errno));
            return 1;
        }
        if (pid == 0) {
            char arg[8192];
            snprintf(arg, sizeof(arg),
                     "csv='%s'; out='%s'; fmax=%.0f; chip='%s: %d SMT%d cores'; "
                     "tsd='turboschedd (packer_plan; tick %u ms, hold %u ms, min-change %u ms, half-life %u ms%s)'",
                     csv_path, png_path, P.f_max_mhz, P.chip, P.n_cores, P.smt, daemon_cfg.tick_ms,
                     daemon_cfg.policy.hold_ms, daemon_cfg.policy.min_change_ms, daemon_cfg.policy.half_life_ms,
                     pass_cpu_jitter ? "" : ", no per-CPU jitter shares");
            execlp("gnuplot", "gnuplot", "-e", arg, script, (char *)NULL);
            fprintf(stderr, "gnuplot: %s\n", strerror(errno));
            _exit(127);
        }
        int st;
        if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "gnuplot failed; the CSV is still in %s\n", csv_path);
            return 1;
        }
    }
    return 0;
}
