/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The machine's layout as text, for turboschedd --show-topology and the
 * tests: per package its cores, threads online and offline, capacity, LLC
 * and node, then the totals. */
#include <stdio.h>

#include "power_capacity.h"
#include "topology.h"
#include "util.h"

static void print_cpulist(FILE *f, const cpu_set_t *set)
{
    char buf[CPULIST_MAX];
    if (cpulist_format(set, buf, sizeof buf) < 0)
        fputs("(too many to list)", f);
    else
        fputs(buf, f);
}

static void print_package_name(FILE *f, int package)
{
    if (package < 0)
        fputs("package unknown", f);
    else
        fprintf(f, "package %d", package);
}

void topology_print(FILE *f, const struct topology *t, const struct capacity_table *cap)
{
    int online_total = CPU_COUNT(&t->online), present_total = CPU_COUNT(&t->present);
    struct capacity_table fallback;
    if (!cap) {
        capacity_table_default(&fallback);
        cap = &fallback;
    }

    for (int i = 0; i < t->n_cores;) {
        int pkg = t->cores[i].package, end = i, online = 0, known_offline = 0;
        while (end < t->n_cores && t->cores[end].package == pkg) {
            online += t->cores[end].n_online;
            known_offline += t->cores[end].n_threads - t->cores[end].n_online;
            end++;
        }
        print_package_name(f, pkg);
        fprintf(f, ": %d core%s, %d thread%s online", end - i, end - i == 1 ? "" : "s", online, online == 1 ? "" : "s");
        if (known_offline)
            fprintf(f, ", %d offline", known_offline);
        fputc('\n', f);

        for (; i < end; i++) {
            const struct topo_core *c = &t->cores[i];
            fprintf(f, "  core %d (id %d): threads ", c->index, c->core_id);
            if (c->n_online) {
                print_cpulist(f, &c->online);
                fputs(" online", f);
            }
            if (c->n_online < c->n_threads) {
                cpu_set_t offline;
                CPU_XOR(&offline, &c->threads, &c->online);
                fputs(c->n_online ? ", " : "", f);
                print_cpulist(f, &offline);
                fputs(" offline", f);
            }
            unsigned milli = capacity_core_milli(cap, (unsigned)c->n_online);
            fprintf(f, ", capacity %u.%03ux, llc %d, node %d\n", milli / 1000, milli % 1000, c->llc, c->node);
        }
    }

    cpu_set_t orphans;
    CPU_ZERO(&orphans);
    for (int cpu = 0; cpu < t->n_cpus; cpu++)
        if (t->cpus[cpu].present && t->cpus[cpu].core < 0)
            CPU_SET(cpu, &orphans);
    if (CPU_COUNT(&orphans)) {
        fputs("offline, core unknown (the kernel hides an offline CPU's topology): ", f);
        print_cpulist(f, &orphans);
        fputc('\n', f);
    }

    fprintf(f, "%d package%s, %d core%s, %d of %d threads online, %d LLC group%s, %d NUMA node%s\n", t->n_packages,
            t->n_packages == 1 ? "" : "s", t->n_cores, t->n_cores == 1 ? "" : "s", online_total, present_total,
            t->n_llcs, t->n_llcs == 1 ? "" : "s", t->n_nodes, t->n_nodes == 1 ? "" : "s");
}
