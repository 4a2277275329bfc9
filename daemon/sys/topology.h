/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The machine as the daemon sees it: packages, cores, SMT threads (online or
 * not), LLC groups and NUMA nodes, read from a sysfs tree under a given root
 * so tests can use fixture trees of real machines. */
#pragma once
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>

#include "topology-types.h"

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
