/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Idle cores kept out of the deep idle states, measured (see idle-meter.h). */
#include "idle-meter.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "load.h"
#include "util.h"

/* One number of <root>/sys/devices/system/cpu/cpuN/cpuidle/stateK/<name>. */
static int read_state_u64(const char *root, int cpu, int k, const char *name, uint64_t *v)
{
    char rel[128];
    snprintf(rel, sizeof rel, "/sys/devices/system/cpu/cpu%d/cpuidle/state%d/%s", cpu, k, name);
    return read_u64_below(root, rel, v);
}

/* " C6 82us" (the state's name and exit latency) appended to buf. */
static void describe_state(const char *root, int cpu, int k, uint64_t latency_us, char *buf, size_t size)
{
    char rel[128], path[PATH_MAX], name[32] = "?";
    snprintf(rel, sizeof rel, "/sys/devices/system/cpu/cpu%d/cpuidle/state%d/name", cpu, k);
    if (path_join(path, sizeof path, root, rel) >= 0 && read_file(path, name, sizeof name) > 0)
        name[strcspn(name, "\n")] = '\0';
    size_t len = strlen(buf);
    if (len < size)
        snprintf(buf + len, size - len, "%s%s %" PRIu64 "us", len ? ", " : "", name, latency_us);
}

/* The deep, enabled states of one CPU as a bit mask; *n_states: the states
 * it has (0: no cpuidle). The first CPU with states describes them. */
static uint16_t deep_states(const char *root, int cpu, unsigned *n_states, char *desc, size_t desc_len)
{
    uint16_t deep = 0;
    unsigned k = 0;
    for (; k < IDLE_MAX_STATES; k++) {
        uint64_t latency_us, disabled = 0;
        if (read_state_u64(root, cpu, (int)k, "latency", &latency_us) < 0)
            break;
        /* "disable" appeared in 3.x; without it every state is enabled */
        (void)read_state_u64(root, cpu, (int)k, "disable", &disabled);
        if (latency_us >= IDLE_DEEP_EXIT_LATENCY_US && !disabled)
            deep |= (uint16_t)(1u << k);
        if (desc)
            describe_state(root, cpu, (int)k, latency_us, desc, desc_len);
    }
    *n_states = k;
    return deep;
}

int idle_meter_open(struct idle_meter *m, const char *root, const struct topology *topo)
{
    memset(m, 0, sizeof *m);
    snprintf(m->root, sizeof m->root, "%s", root ? root : "/");
    m->n_cpus = topo->n_cpus < CPU_SETSIZE ? topo->n_cpus : CPU_SETSIZE;
    char desc[128] = "";
    int n_deep = 0, n_cpuidle = 0, described = -1;
    for (int cpu = 0; cpu < m->n_cpus; cpu++) {
        if (!CPU_ISSET(cpu, &topo->online))
            continue;
        unsigned n_states;
        bool describe = described < 0;
        m->deep[cpu] = deep_states(m->root, cpu, &n_states, describe ? desc : NULL, sizeof desc);
        if (n_states && describe)
            described = cpu;
        n_cpuidle += n_states > 0;
        n_deep += m->deep[cpu] != 0;
    }
    if (!n_cpuidle) {
        snprintf(m->what, sizeof m->what, "no cpuidle states (sys/devices/system/cpu/cpuN/cpuidle)");
        return -ENODEV;
    }
    if (!n_deep) {
        snprintf(m->what, sizeof m->what, "no enabled idle state with an exit latency of %u us or more (cpu%d: %s)",
                 IDLE_DEEP_EXIT_LATENCY_US, described, desc);
        return -ENODEV;
    }
    snprintf(m->what, sizeof m->what, "cpuidle, deep from %u us (cpu%d: %s) on %d CPUs", IDLE_DEEP_EXIT_LATENCY_US,
             described, desc, n_deep);
    return n_deep;
}

int idle_meter_read(const struct idle_meter *m, struct idle_counters *cur)
{
    int n = 0;
    for (int cpu = 0; cpu < m->n_cpus; cpu++) {
        struct idle_counters c = {.valid = m->deep[cpu] != 0};
        for (int k = 0; c.valid && k < IDLE_MAX_STATES; k++) {
            uint64_t time_us, usage;
            if (!(m->deep[cpu] & (1u << k)))
                continue;
            if (read_state_u64(m->root, cpu, k, "time", &time_us) < 0 ||
                read_state_u64(m->root, cpu, k, "usage", &usage) < 0) {
                c.valid = false;
                break;
            }
            c.time_us += time_us;
            c.usage += usage;
        }
        cur[cpu] = c;
        n += c.valid;
    }
    return n;
}

void idle_meter_restart(struct idle_meter *m)
{
    m->prev_us = 0;
    memset(m->carry_us, 0, sizeof m->carry_us);
}

int idle_meter_sample(struct idle_meter *m, const struct topology *topo, const cpu_set_t *busy_cpus, uint64_t now_us,
                      struct idle_measurement *out)
{
    int n = idle_meter_read(m, m->cur);
    const struct idle_measure_input in = {
        .topo = topo,
        .busy_cpus = busy_cpus,
        .deep = m->deep,
        .prev = m->prev,
        .cur = m->cur,
        .dt_us = m->prev_us && now_us > m->prev_us ? now_us - m->prev_us : 0,
    };
    idle_measure(&in, m->carry_us, out);
    memcpy(m->prev, m->cur, sizeof m->prev);
    m->prev_us = now_us;
    return n;
}

/* ---- the computation (pure) ---- */

/* One thread's deep time over the tick (into *deep_us, at most the tick)
 * and its entries; false without two readings in order. cpuidle adds a
 * residency, and counts the entry, when the CPU leaves the state: a CPU
 * deep across a tick shows that time in the tick it wakes, so what exceeds
 * a tick is carried to the next ones. */
static bool thread_tick(const struct idle_measure_input *in, int cpu, uint64_t *carry_us, uint64_t *deep_us,
                        uint64_t *entries)
{
    const struct idle_counters *p = &in->prev[cpu], *c = &in->cur[cpu];
    if (!in->deep[cpu] || !p->valid || !c->valid || c->time_us < p->time_us || c->usage < p->usage) {
        carry_us[cpu] = 0;
        return false;
    }
    uint64_t d = c->time_us - p->time_us + carry_us[cpu];
    carry_us[cpu] = d > in->dt_us ? d - in->dt_us : 0;
    *deep_us = d - carry_us[cpu];
    *entries = c->usage - p->usage;
    return true;
}

static bool core_idle(const struct idle_measure_input *in, const struct topo_core *core)
{
    cpu_set_t busy;
    CPU_AND(&busy, &core->online, in->busy_cpus);
    return CPU_COUNT(&core->online) > 0 && CPU_COUNT(&busy) == 0;
}

void idle_measure(const struct idle_measure_input *in, uint64_t *carry_us, struct idle_measurement *out)
{
    const struct topology *t = in->topo;
    uint64_t deep_us[CPU_SETSIZE], entries[CPU_SETSIZE];
    bool ok[CPU_SETSIZE];
    *out = (struct idle_measurement){0};
    if (!in->dt_us)
        return;
    /* every CPU, so that the carry of a busy core's thread is right when
     * its core turns idle */
    for (int cpu = 0; cpu < t->n_cpus && cpu < CPU_SETSIZE; cpu++)
        ok[cpu] = thread_tick(in, cpu, carry_us, &deep_us[cpu], &entries[cpu]);

    uint64_t woken_us = 0, n_entries = 0;
    unsigned n_idle = 0;
    for (int i = 0; i < t->n_cores; i++) {
        const struct topo_core *core = &t->cores[i];
        if (!core_idle(in, core))
            continue;
        /* A core is deep only while all its threads are. On an idle core
         * the jitter's wake-ups are short and seldom meet on two siblings,
         * so the threads' times out of the deep states add up (exact for
         * one thread awake, an upper bound where they overlap). */
        uint64_t awake_us = 0;
        for (int cpu = 0; cpu < t->n_cpus && cpu < CPU_SETSIZE; cpu++) {
            if (!CPU_ISSET(cpu, &core->online))
                continue;
            if (!ok[cpu])
                return;
            awake_us += in->dt_us - deep_us[cpu];
            n_entries += entries[cpu];
        }
        woken_us += MIN(awake_us, in->dt_us);
        n_idle++;
    }
    if (!n_idle)
        return;
    uint64_t wakes = (n_entries * 1000000 + in->dt_us / 2) / in->dt_us;
    *out = (struct idle_measurement){
        .measured = true,
        .woken_milli = (unsigned)((woken_us * 1000 + in->dt_us / 2) / in->dt_us),
        .wakes_per_s = wakes > UINT32_MAX ? UINT32_MAX : (unsigned)wakes,
    };
}

void idle_keep(struct idle_kept *k, const struct idle_measurement *m, bool unconfined, uint64_t now_ms,
               unsigned half_life_ms)
{
    if (!unconfined || !m->measured)
        return;
    if (!k->measured) {
        *k = (struct idle_kept){.measured = true, .woken_milli = m->woken_milli, .wakes_per_s = m->wakes_per_s};
    } else {
        uint64_t dt_ms = now_ms > k->at_ms ? now_ms - k->at_ms : 0;
        k->woken_milli = load_ewma(k->woken_milli, m->woken_milli, dt_ms, half_life_ms);
        k->wakes_per_s = load_ewma(k->wakes_per_s, m->wakes_per_s, dt_ms, half_life_ms);
    }
    k->at_ms = now_ms;
}
