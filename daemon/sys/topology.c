/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The machine's layout, read from sysfs under a root directory.
 *
 * Why sysfs and not libcpupower: libcpupower exports get_cpu_topology(), but
 * Debian's libcpupower-dev declares it in no installed header (only cpufreq.h
 * and cpuidle.h ship), and like every libcpupower reader it opens fixed
 * /sys/devices/system/cpu paths, so it cannot read the fixture trees of other
 * machines that the tests use. It also knows nothing of LLCs or NUMA nodes.
 * The daemon keeps libcpupower for what it is good at, frequency and idle-state
 * statistics; the layout comes from here.
 *
 * What the kernel shows, and what that means for this reader:
 * - An offline CPU keeps its cpuN directory (with online = 0) but loses its
 *   topology/ and cache/ directories, and it is dropped from its siblings'
 *   thread_siblings_list. Its core is therefore unknown (core = -1), unless a
 *   tree does show its topology, in which case it is counted in that core.
 * - cpu0 often has no online file (it cannot be unplugged): it is online.
 * - A CPU without cache information (VMs often have none) shares its LLC with
 *   the other such CPUs of its package, as the kernel's generic topology code
 *   falls back to the package when it knows no LLC. Taking every core as its
 *   own LLC instead would leave a packer restricted to the LLC nowhere to go.
 * - Without a node directory the machine has one NUMA node, 0.
 * Missing files give "unknown"; a file that is there but unparsable makes the
 * whole read fail with -EINVAL and a log line naming it. */
#include "topology.h"

#include "log.h"
#include "power_capacity.h"
#include "util.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CPU_SYSFS "/sys/devices/system/cpu"
#define NODE_SYSFS "/sys/devices/system/node"
#define _cleanup_(f) __attribute__((cleanup(f)))

/* What one cpuN directory says, before cores are formed. */
struct cpu_raw {
    bool present;
    bool online;
    bool has_topology;
    int package;
    int core_id;
    bool has_siblings;
    cpu_set_t siblings;
    bool has_llc;
    unsigned llc_level;
    cpu_set_t llc;
    int node;
};

struct reader {
    const char *root;
    char base[PATH_MAX]; /* <root>/sys/devices/system/cpu */
    int n_cpus;
    struct cpu_raw *raw;     /* n_cpus entries */
    int parent[CPU_SETSIZE]; /* union-find scratch */
};

static inline void closedirp(DIR **d)
{
    if (*d)
        closedir(*d);
}

static int uf_find(int *parent, int x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

static void uf_union(int *parent, int a, int b)
{
    a = uf_find(parent, a);
    b = uf_find(parent, b);
    /* The lower CPU is the root, so a group is named by its first thread. */
    if (a < b)
        parent[b] = a;
    else if (b < a)
        parent[a] = b;
}

/* snprintf for paths: a root so long that a path does not fit is an error,
 * never a silently truncated path. */
static int __attribute__((format(printf, 3, 4))) pathf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= size) {
        log_err("reading topology: path too long under '%.64s...'", buf);
        return -ENAMETOOLONG;
    }
    return 0;
}

static void strip_trailing_space(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
}

/* Read a small sysfs file. Returns 0, -ENOENT when absent (not logged: absence
 * is often normal here), or another -errno, logged. */
static int read_attr(const char *path, char *buf, size_t size)
{
    ssize_t n = read_file(path, buf, size);
    if (n == -ENOENT || n == -ENOTDIR)
        return -ENOENT;
    if (n < 0)
        return log_error_errno((int)n, "reading topology: %s: %m", path);
    strip_trailing_space(buf);
    return 0;
}

/* A signed id: physical_package_id and core_id read -1 when the platform has
 * no such notion. */
static int parse_id(const char *s, int *ret)
{
    if (s[0] == '-') {
        unsigned v;
        if (parse_uint(s + 1, &v) < 0 || v != 1)
            return -EINVAL;
        *ret = -1;
        return 0;
    }
    unsigned v;
    if (parse_uint(s, &v) < 0 || v > INT_MAX)
        return -EINVAL;
    *ret = (int)v;
    return 0;
}

static int read_id(const char *path, bool *found, int *ret)
{
    char buf[64];
    int r = read_attr(path, buf, sizeof buf);
    if (r == -ENOENT) {
        *found = false;
        return 0;
    }
    if (r < 0)
        return r;
    if (parse_id(buf, ret) < 0) {
        log_err("reading topology: %s: not a number: '%s'", path, buf);
        return -EINVAL;
    }
    *found = true;
    return 0;
}

/* Lists get a large buffer: a 1024-CPU machine in the worst notation
 * ("0,2,4,...") needs about 5 kB. */
#define LIST_BUF 8192

static int read_cpulist(const char *path, bool *found, cpu_set_t *set)
{
    _cleanup_free_ char *buf = malloc(LIST_BUF);
    if (!buf)
        return -ENOMEM;
    int r = read_attr(path, buf, LIST_BUF);
    if (r == -ENOENT) {
        *found = false;
        return 0;
    }
    if (r < 0)
        return r;
    if (cpulist_parse(buf, set) < 0) {
        log_err("reading topology: %s: not a CPU list (or a CPU >= %d): '%.80s'", path, CPU_SETSIZE, buf);
        return -EINVAL;
    }
    *found = true;
    return 0;
}

static bool dir_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* "cpu12" → 12; -1 for anything else (cpufreq, cpuidle...). */
static int name_number(const char *name, const char *prefix)
{
    size_t len = strlen(prefix);
    unsigned v;
    if (strncmp(name, prefix, len) != 0 || parse_uint(name + len, &v) < 0 || v >= CPU_SETSIZE)
        return -1;
    return (int)v;
}

static int find_present(struct reader *rd, cpu_set_t *present)
{
    char path[PATH_MAX];
    bool found;
    int r;

    _cleanup_(closedirp) DIR *d = opendir(rd->base);
    if (!d)
        return log_error_errno(-errno, "reading topology: %s: %m", rd->base);
    cpu_set_t dirs;
    CPU_ZERO(&dirs);
    struct dirent *de;
    while ((de = readdir(d))) {
        int cpu = name_number(de->d_name, "cpu");
        if (cpu < 0)
            continue;
        r = pathf(path, sizeof path, "%s/%s", rd->base, de->d_name);
        if (r < 0)
            return r;
        if (dir_exists(path))
            CPU_SET(cpu, &dirs);
    }

    r = pathf(path, sizeof path, "%s/present", rd->base);
    if (r < 0)
        return r;
    r = read_cpulist(path, &found, present);
    if (r < 0)
        return r;
    if (!found) {
        *present = dirs;
    } else {
        cpu_set_t listed = *present;
        CPU_AND(present, present, &dirs);
        if (!CPU_EQUAL(present, &listed))
            log_debug("reading topology: %s lists CPUs without a directory, ignoring them", path);
    }
    if (CPU_COUNT(present) == 0) {
        log_err("reading topology: no CPU directories in %s", rd->base);
        return -ENOENT;
    }
    return 0;
}

static int read_online(struct reader *rd, int cpu, const cpu_set_t *global, bool have_global)
{
    char path[PATH_MAX], buf[16];
    int r = pathf(path, sizeof path, "%s/cpu%d/online", rd->base, cpu);
    if (r < 0)
        return r;
    r = read_attr(path, buf, sizeof buf);
    if (r == -ENOENT) {
        /* cpu0 usually cannot be unplugged and has no online file. */
        rd->raw[cpu].online = have_global ? CPU_ISSET(cpu, global) : true;
        return 0;
    }
    if (r < 0)
        return r;
    if (strcmp(buf, "0") != 0 && strcmp(buf, "1") != 0) {
        log_err("reading topology: %s: expected 0 or 1, got '%s'", path, buf);
        return -EINVAL;
    }
    rd->raw[cpu].online = buf[0] == '1';
    if (have_global && rd->raw[cpu].online != CPU_ISSET(cpu, global))
        log_debug("reading topology: %s disagrees with the online list (hotplug under way?)", path);
    return 0;
}

static int read_cpu_topology(struct reader *rd, int cpu)
{
    struct cpu_raw *c = &rd->raw[cpu];
    char dir[PATH_MAX], path[PATH_MAX];
    bool found;
    int r;

    r = pathf(dir, sizeof dir, "%s/cpu%d/topology", rd->base, cpu);
    if (r < 0)
        return r;
    c->package = -1;
    c->core_id = -1;
    if (!dir_exists(dir))
        return 0; /* offline CPUs lose their topology directory */
    c->has_topology = true;

    r = pathf(path, sizeof path, "%s/physical_package_id", dir);
    if (r < 0)
        return r;
    r = read_id(path, &found, &c->package);
    if (r < 0)
        return r;
    r = pathf(path, sizeof path, "%s/core_id", dir);
    if (r < 0)
        return r;
    r = read_id(path, &found, &c->core_id);
    if (r < 0)
        return r;
    r = pathf(path, sizeof path, "%s/thread_siblings_list", dir);
    if (r < 0)
        return r;
    r = read_cpulist(path, &c->has_siblings, &c->siblings);
    if (r < 0)
        return r;
    if (!c->has_siblings) {
        /* Newer name of the same mask. */
        r = pathf(path, sizeof path, "%s/core_cpus_list", dir);
        if (r < 0)
            return r;
        r = read_cpulist(path, &c->has_siblings, &c->siblings);
        if (r < 0)
            return r;
    }
    return 0;
}

static int read_cpu_llc(struct reader *rd, int cpu)
{
    struct cpu_raw *c = &rd->raw[cpu];
    char dir[PATH_MAX], path[PATH_MAX], buf[32];
    int r;

    r = pathf(dir, sizeof dir, "%s/cpu%d/cache", rd->base, cpu);
    if (r < 0)
        return r;
    _cleanup_(closedirp) DIR *d = opendir(dir);
    if (!d)
        return 0; /* no cache information: see the package fallback */
    /* The highest level wins, the lowest index among equals, so the answer
     * does not depend on readdir order. */
    int best_index = -1;
    unsigned best_level = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        int index = name_number(de->d_name, "index");
        if (index < 0)
            continue;
        r = pathf(path, sizeof path, "%s/%s/level", dir, de->d_name);
        if (r < 0)
            return r;
        r = read_attr(path, buf, sizeof buf);
        if (r == -ENOENT)
            continue;
        if (r < 0)
            return r;
        unsigned level;
        if (parse_uint(buf, &level) < 0) {
            log_err("reading topology: %s: not a cache level: '%s'", path, buf);
            return -EINVAL;
        }
        if (best_index < 0 || level > best_level || (level == best_level && index < best_index)) {
            best_index = index;
            best_level = level;
        }
    }
    if (best_index < 0)
        return 0;
    r = pathf(path, sizeof path, "%s/index%d/shared_cpu_list", dir, best_index);
    if (r < 0)
        return r;
    r = read_cpulist(path, &c->has_llc, &c->llc);
    if (r < 0)
        return r;
    c->llc_level = best_level;
    return 0;
}

/* Node of each CPU from nodeN/cpulist. Returns 1 when the tree has NUMA
 * nodes, 0 when it has none (every CPU on node 0). */
static int read_nodes(struct reader *rd)
{
    char base[PATH_MAX], path[PATH_MAX];
    int r = path_join(base, sizeof base, rd->root, NODE_SYSFS);
    if (r < 0)
        return r;
    for (int cpu = 0; cpu < rd->n_cpus; cpu++)
        rd->raw[cpu].node = -1;

    bool any = false;
    _cleanup_(closedirp) DIR *d = opendir(base);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        int node = name_number(de->d_name, "node");
        if (node < 0)
            continue;
        r = pathf(path, sizeof path, "%s/%s/cpulist", base, de->d_name);
        if (r < 0)
            return r;
        bool found;
        cpu_set_t cpus;
        r = read_cpulist(path, &found, &cpus);
        if (r < 0)
            return r;
        any = true;
        if (!found)
            continue;
        for (int cpu = 0; cpu < rd->n_cpus; cpu++)
            if (CPU_ISSET(cpu, &cpus)) {
                if (rd->raw[cpu].node >= 0 && rd->raw[cpu].node != node)
                    log_debug("reading topology: cpu%d is listed on nodes %d and %d, keeping %d", cpu,
                              rd->raw[cpu].node, node, MIN(node, rd->raw[cpu].node));
                if (rd->raw[cpu].node < 0 || node < rd->raw[cpu].node)
                    rd->raw[cpu].node = node;
            }
    }
    if (!any)
        for (int cpu = 0; cpu < rd->n_cpus; cpu++)
            rd->raw[cpu].node = 0;
    return any;
}

static void reader_free(struct reader *rd)
{
    if (rd) {
        free(rd->raw);
        free(rd);
    }
}

static inline void reader_freep(struct reader **rd) { reader_free(*rd); }
static inline void topology_freep(struct topology **t) { topology_free(*t); }

static int core_cmp(const void *pa, const void *pb)
{
    const struct topo_core *a = pa, *b = pb;
    if (a->package != b->package)
        return a->package < b->package ? -1 : 1;
    /* index holds the lowest thread until the sort is done */
    return a->index < b->index ? -1 : a->index > b->index;
}

/* Joins each member CPU with its siblings (or, without a siblings list,
 * with the CPUs of the same package and core_id) in rd->parent; a CPU a
 * siblings list names becomes a member. */
static void join_siblings(struct reader *rd, bool *member)
{
    int n = rd->n_cpus;
    int *parent = rd->parent;
    for (int cpu = 0; cpu < n; cpu++) {
        struct cpu_raw *c = &rd->raw[cpu];
        if (!member[cpu] || !c->has_topology)
            continue;
        if (c->has_siblings) {
            for (int s = 0; s < n; s++)
                if (CPU_ISSET(s, &c->siblings) && rd->raw[s].present) {
                    member[s] = true;
                    uf_union(parent, cpu, s);
                }
        } else if (c->core_id >= 0) {
            for (int s = 0; s < cpu; s++)
                if (member[s] && rd->raw[s].has_topology && !rd->raw[s].has_siblings &&
                    rd->raw[s].package == c->package && rd->raw[s].core_id == c->core_id)
                    uf_union(parent, cpu, s);
        }
    }
}

/* The core whose lowest thread (union-find root) is first: its threads, the
 * online ones, and the ids of the first thread with readable topology. */
static void fill_core(struct reader *rd, const bool *member, int first, struct topo_core *core)
{
    int *parent = rd->parent;
    /* The root is the lowest thread (uf_union), so no thread is before it. */
    assert(uf_find(parent, first) == first);
    core->index = first; /* lowest thread, for sorting */
    core->package = -1;
    core->core_id = -1;
    CPU_ZERO(&core->threads);
    CPU_ZERO(&core->online);
    bool ids_known = false;
    for (int s = first; s < rd->n_cpus; s++) {
        if (!member[s] || uf_find(parent, s) != first)
            continue;
        CPU_SET(s, &core->threads);
        core->n_threads++;
        if (rd->raw[s].online) {
            CPU_SET(s, &core->online);
            core->n_online++;
        }
        if (!rd->raw[s].has_topology)
            continue;
        if (!ids_known) {
            core->package = rd->raw[s].package;
            core->core_id = rd->raw[s].core_id;
            ids_known = true;
        } else if (rd->raw[s].package != core->package || rd->raw[s].core_id != core->core_id) {
            log_debug("reading topology: cpu%d (package %d, core_id %d) is a sibling of cpu%d "
                      "(package %d, core_id %d); keeping the latter",
                      s, rd->raw[s].package, rd->raw[s].core_id, first, core->package, core->core_id);
        }
    }
}

/* Sorts the cores by package and first thread, numbers them in that order,
 * points each CPU at its core and counts the packages. */
static void number_cores(struct topology *t, int n_cpus)
{
    qsort(t->cores, (size_t)t->n_cores, sizeof *t->cores, core_cmp);
    for (int i = 0; i < t->n_cores; i++) {
        struct topo_core *core = &t->cores[i];
        core->index = i;
        for (int cpu = 0; cpu < n_cpus; cpu++)
            if (CPU_ISSET(cpu, &core->threads)) {
                t->cpus[cpu].core = i;
                t->cpus[cpu].package = core->package;
            }
    }

    bool seen_pkg = false;
    for (int i = 0; i < t->n_cores; i++)
        if (!seen_pkg || t->cores[i].package != t->cores[i - 1].package) {
            t->n_packages++;
            seen_pkg = true;
        }
}

/* Cores: union of each CPU with its siblings. Members are CPUs whose
 * topology is readable, plus any CPU a siblings list names. */
static int build_cores(struct reader *rd, struct topology *t)
{
    int n = rd->n_cpus;
    int *parent = rd->parent;
    bool member[CPU_SETSIZE] = {false};

    for (int cpu = 0; cpu < n; cpu++) {
        parent[cpu] = cpu;
        struct cpu_raw *c = &rd->raw[cpu];
        /* An online CPU without topology (a hotplug race) is a core of its own. */
        member[cpu] = c->present && (c->has_topology || c->online);
    }
    join_siblings(rd, member);

    int n_cores = 0;
    for (int cpu = 0; cpu < n; cpu++)
        if (member[cpu] && uf_find(parent, cpu) == cpu)
            n_cores++;
    t->cores = calloc(MAX(n_cores, 1), sizeof *t->cores);
    if (!t->cores)
        return -ENOMEM;
    t->n_cores = n_cores;

    int k = 0;
    for (int cpu = 0; cpu < n; cpu++)
        if (member[cpu] && uf_find(parent, cpu) == cpu)
            fill_core(rd, member, cpu, &t->cores[k++]);
    assert(k == n_cores);
    number_cores(t, n);
    return 0;
}

/* LLC groups: the threads of a core share one; CPUs whose last-level cache
 * lists overlap share one; CPUs without cache information share the package's. */
static void build_llcs(struct reader *rd, struct topology *t)
{
    int n = rd->n_cpus;
    int *parent = rd->parent;
    int pkg_cacheless[CPU_SETSIZE]; /* by a package's first core: its first cache-less CPU */

    for (int cpu = 0; cpu < n; cpu++)
        parent[cpu] = cpu;
    for (int i = 0; i < t->n_cores; i++) {
        pkg_cacheless[i] = -1;
        int first = -1;
        for (int cpu = 0; cpu < n; cpu++) {
            if (!CPU_ISSET(cpu, &t->cores[i].threads))
                continue;
            if (first < 0)
                first = cpu;
            else
                uf_union(parent, first, cpu);
        }
    }
    for (int cpu = 0; cpu < n; cpu++) {
        int ci = t->cpus[cpu].core;
        if (ci < 0)
            continue;
        struct cpu_raw *c = &rd->raw[cpu];
        if (c->has_llc) {
            for (int s = 0; s < n; s++)
                if (CPU_ISSET(s, &c->llc) && t->cpus[s].core >= 0)
                    uf_union(parent, cpu, s);
            continue;
        }
        /* Cores of one package are contiguous after the sort: the package's
         * first core holds its first cache-less CPU. */
        int first_core = ci;
        while (first_core > 0 && t->cores[first_core - 1].package == t->cores[ci].package)
            first_core--;
        if (pkg_cacheless[first_core] >= 0)
            uf_union(parent, pkg_cacheless[first_core], cpu);
        else
            pkg_cacheless[first_core] = cpu;
    }

    int dense[CPU_SETSIZE];
    for (int cpu = 0; cpu < n; cpu++)
        dense[cpu] = -1;
    t->n_llcs = 0;
    for (int i = 0; i < t->n_cores; i++) {
        int first = -1;
        for (int cpu = 0; cpu < n && first < 0; cpu++)
            if (CPU_ISSET(cpu, &t->cores[i].threads))
                first = cpu;
        int root = uf_find(parent, first);
        if (dense[root] < 0)
            dense[root] = t->n_llcs++;
        t->cores[i].llc = dense[root];
        for (int cpu = 0; cpu < n; cpu++)
            if (CPU_ISSET(cpu, &t->cores[i].threads))
                t->cpus[cpu].llc = dense[root];
    }
}

static void build_nodes(struct reader *rd, struct topology *t)
{
    int n = rd->n_cpus;
    cpu_set_t nodes; /* node ids, reusing the bitmap type */
    CPU_ZERO(&nodes);
    for (int cpu = 0; cpu < n; cpu++) {
        t->cpus[cpu].node = rd->raw[cpu].node;
        if (t->cpus[cpu].present && rd->raw[cpu].node >= 0 && rd->raw[cpu].node < CPU_SETSIZE)
            CPU_SET(rd->raw[cpu].node, &nodes);
    }
    t->n_nodes = MAX(CPU_COUNT(&nodes), 1);
    for (int i = 0; i < t->n_cores; i++) {
        struct topo_core *core = &t->cores[i];
        core->node = -1;
        /* The node of the first online thread, else of the first thread. */
        for (int pass = 0; pass < 2 && core->node < 0; pass++)
            for (int cpu = 0; cpu < n && core->node < 0; cpu++)
                if (CPU_ISSET(cpu, pass == 0 ? &core->online : &core->threads))
                    core->node = t->cpus[cpu].node;
    }
}

int topology_read(const char *root, struct topology **ret)
{
    _cleanup_(reader_freep) struct reader *rd = calloc(1, sizeof *rd);
    _cleanup_(topology_freep) struct topology *t = calloc(1, sizeof *t);
    char path[PATH_MAX];
    bool found;
    int r;

    if (!rd || !t)
        return -ENOMEM;
    rd->root = root;
    r = path_join(rd->base, sizeof rd->base, root, CPU_SYSFS);
    if (r < 0) {
        log_err("reading topology: root '%s' is too long", root);
        return r;
    }

    r = find_present(rd, &t->present);
    if (r < 0)
        return r;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &t->present))
            rd->n_cpus = cpu + 1;

    rd->raw = calloc((size_t)rd->n_cpus, sizeof *rd->raw);
    t->cpus = calloc((size_t)rd->n_cpus, sizeof *t->cpus);
    if (!rd->raw || !t->cpus)
        return -ENOMEM;
    t->n_cpus = rd->n_cpus;

    cpu_set_t global_online;
    r = pathf(path, sizeof path, "%s/online", rd->base);
    if (r < 0)
        return r;
    r = read_cpulist(path, &found, &global_online);
    if (r < 0)
        return r;

    CPU_ZERO(&t->online);
    for (int cpu = 0; cpu < rd->n_cpus; cpu++) {
        struct topo_cpu *tc = &t->cpus[cpu];
        tc->cpu = cpu;
        tc->core = -1;
        tc->package = -1;
        tc->llc = -1;
        tc->node = -1;
        if (!CPU_ISSET(cpu, &t->present))
            continue;
        rd->raw[cpu].present = tc->present = true;
        r = read_online(rd, cpu, &global_online, found);
        if (r < 0)
            return r;
        tc->online = rd->raw[cpu].online;
        if (tc->online)
            CPU_SET(cpu, &t->online);
        r = read_cpu_topology(rd, cpu);
        if (r < 0)
            return r;
        r = read_cpu_llc(rd, cpu);
        if (r < 0)
            return r;
    }
    if (CPU_COUNT(&t->online) == 0) {
        log_err("reading topology: no online CPU under %s", rd->base);
        return -EINVAL;
    }

    r = read_nodes(rd);
    if (r < 0)
        return r;
    r = build_cores(rd, t);
    if (r < 0)
        return r;
    build_llcs(rd, t);
    build_nodes(rd, t);

    *ret = t;
    t = NULL;
    return 0;
}

int topology_read_online(const char *root, cpu_set_t *ret)
{
    char path[PATH_MAX];
    bool found;
    int r = path_join(path, sizeof path, root, CPU_SYSFS "/online");
    if (r < 0)
        return r;
    r = read_cpulist(path, &found, ret);
    if (r < 0)
        return r;
    return found ? 0 : -ENOENT;
}

void topology_free(struct topology *t)
{
    if (!t)
        return;
    free(t->cpus);
    free(t->cores);
    free(t);
}

bool topology_equal(const struct topology *a, const struct topology *b)
{
    if (a == b)
        return true;
    if (!a || !b)
        return false;
    if (a->n_cpus != b->n_cpus || a->n_cores != b->n_cores || a->n_llcs != b->n_llcs || a->n_nodes != b->n_nodes ||
        !CPU_EQUAL(&a->online, &b->online) || !CPU_EQUAL(&a->present, &b->present))
        return false;
    for (int i = 0; i < a->n_cores; i++) {
        const struct topo_core *x = &a->cores[i], *y = &b->cores[i];
        if (x->package != y->package || x->core_id != y->core_id || x->llc != y->llc || x->node != y->node ||
            !CPU_EQUAL(&x->threads, &y->threads) || !CPU_EQUAL(&x->online, &y->online))
            return false;
    }
    return true;
}
