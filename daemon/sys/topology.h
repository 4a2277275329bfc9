/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The machine as the daemon sees it: packages, cores, SMT threads (online or
 * not), LLC groups and NUMA nodes, read from a sysfs tree under a given root
 * so tests can use fixture trees of real machines. */
#pragma once
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>

struct topo_cpu {
    int cpu;          /* logical CPU number */
    bool present;     /* has a cpuN directory */
    bool online;
    int core;         /* index into topology.cores, -1 when unknown (offline, no topology dir) */
    int package;      /* physical_package_id, -1 when unknown */
    int llc;          /* dense index of the last-level cache group, -1 when unknown */
    int node;         /* NUMA node, 0 when the machine has none */
};

struct topo_core {
    int index;        /* position in topology.cores */
    int package;      /* physical_package_id */
    int core_id;      /* core_id as sysfs reports it (unique within a package) */
    int llc;
    int node;
    int n_threads;    /* threads known to belong to the core, online or not */
    int n_online;     /* online threads: what the capacity factor depends on */
    cpu_set_t threads;
    cpu_set_t online;
};

struct topology {
    int n_cpus;               /* highest present CPU + 1; cpus[] has this many entries */
    struct topo_cpu *cpus;
    int n_cores;
    struct topo_core *cores;  /* sorted by (package, lowest thread) */
    int n_packages;
    int n_llcs;
    int n_nodes;
    cpu_set_t online;
    cpu_set_t present;
};

/* Read <root>/sys/devices/system/cpu (and .../node). root NULL or "/" reads the
 * running system. Returns 0 or -errno; *ret is freed with topology_free. */
int topology_read(const char *root, struct topology **ret);
void topology_free(struct topology *t);
/* Same layout? Used to notice hotplug and SMT switches between ticks. */
bool topology_equal(const struct topology *a, const struct topology *b);
/* Only <root>/sys/devices/system/cpu/online: one file, so a tick can poll it and
 * call topology_read only when it differs from topology.online (hotplug and
 * SMT switches change it). Returns 0 or -errno. */
int topology_read_online(const char *root, cpu_set_t *ret);

struct capacity_table;
/* Human-readable layout for --print-topology: per package, each core with its
 * online and offline threads and its capacity factor, then a summary line.
 * cap NULL: capacity_table_default. */
void topology_print(FILE *f, const struct topology *t, const struct capacity_table *cap);
