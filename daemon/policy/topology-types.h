/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The machine's layout as the decisions take it: packages, cores, SMT
 * threads (online or not), LLC groups and NUMA nodes, as plain structs.
 * topology.h reads them from sysfs. */
#pragma once
#include <sched.h>
#include <stdbool.h>

struct topo_cpu {
    int cpu;      /* logical CPU number */
    bool present; /* has a cpuN directory */
    bool online;
    int core;    /* index into topology.cores, -1 when unknown (offline, no topology dir) */
    int package; /* physical_package_id, -1 when unknown */
    int llc;     /* dense index of the last-level cache group, -1 when unknown */
    int node;    /* NUMA node, 0 when the machine has none */
};

struct topo_core {
    int index;   /* position in topology.cores */
    int package; /* physical_package_id */
    int core_id; /* core_id as sysfs reports it (unique within a package) */
    int llc;
    int node;
    int n_threads; /* threads known to belong to the core, online or not */
    int n_online;  /* online threads: what the capacity factor depends on */
    cpu_set_t threads;
    cpu_set_t online;
};

struct topology {
    int n_cpus; /* highest present CPU + 1; cpus[] has this many entries */
    struct topo_cpu *cpus;
    int n_cores;
    struct topo_core *cores; /* sorted by (package, lowest thread) */
    int n_packages;
    int n_llcs;
    int n_nodes;
    cpu_set_t online;
    cpu_set_t present;
};
