/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cpustats.h"

#include <cpufreq.h>
#include <cpuidle.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

static unsigned n_configured_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_CONF);
    return n > 0 ? (unsigned)n : 1;
}

static void read_cpu(unsigned cpu, struct cpustats_cpu *out)
{
    *out = (struct cpustats_cpu){.cpu = cpu};
    /* 0 when there is no cpufreq driver (VMs) or the CPU is offline. */
    out->freq_khz = cpufreq_get_freq_kernel(cpu);
    unsigned n = cpuidle_state_count(cpu);
    out->n_idle = MIN(n, (unsigned)CPUSTATS_MAX_IDLE_STATES);
    for (unsigned i = 0; i < out->n_idle; i++) {
        struct cpustats_idle_state *st = &out->idle[i];
        char *name = cpuidle_state_name(cpu, i);
        snprintf(st->name, sizeof st->name, "%s", name ? name : "-");
        free(name);
        st->usage = cpuidle_state_usage(cpu, i);
        st->time_us = cpuidle_state_time(cpu, i);
    }
}

int cpustats_read(struct cpustats *ret)
{
    unsigned n = n_configured_cpus();
    struct cpustats_cpu *cpus = calloc(n, sizeof *cpus);
    if (!cpus)
        return -ENOMEM;
    for (unsigned i = 0; i < n; i++)
        read_cpu(i, &cpus[i]);
    *ret = (struct cpustats){.n_cpus = n, .cpus = cpus};
    return 0;
}

void cpustats_done(struct cpustats *s)
{
    free(s->cpus);
    *s = (struct cpustats){0};
}

struct json_object *cpustats_to_json(const struct cpustats *s)
{
    struct json_object *arr = json_object_new_array();
    if (!arr)
        return NULL;
    for (unsigned i = 0; i < s->n_cpus; i++) {
        const struct cpustats_cpu *c = &s->cpus[i];
        struct json_object *o = json_object_new_object(), *idle = json_object_new_array();
        if (!o || !idle || json_object_array_add(arr, o) < 0) {
            json_object_put(o);
            json_object_put(idle);
            json_object_put(arr);
            return NULL;
        }
        json_object_object_add(o, "cpu", json_object_new_int64(c->cpu));
        json_object_object_add(o, "freq_khz", c->freq_khz ? json_object_new_int64((int64_t)c->freq_khz) : NULL);
        for (unsigned k = 0; k < c->n_idle; k++) {
            struct json_object *st = json_object_new_object();
            if (!st)
                break;
            json_object_object_add(st, "name", json_object_new_string(c->idle[k].name));
            json_object_object_add(st, "usage", json_object_new_int64((int64_t)c->idle[k].usage));
            json_object_object_add(st, "time_us", json_object_new_int64((int64_t)c->idle[k].time_us));
            json_object_array_add(idle, st);
        }
        json_object_object_add(o, "idle", idle);
    }
    return arr;
}

int cpustats_idle_usage(uint64_t *usage, unsigned n_cpus)
{
    unsigned n = MIN(n_cpus, n_configured_cpus());
    bool any = false;
    for (unsigned cpu = 0; cpu < n; cpu++) {
        uint64_t sum = 0;
        unsigned states = cpuidle_state_count(cpu);
        any |= states > 0;
        for (unsigned i = 0; i < states; i++)
            sum += cpuidle_state_usage(cpu, i);
        usage[cpu] = sum;
    }
    return any ? (int)n : -ENODATA;
}
