/* SPDX-License-Identifier: GPL-2.0-or-later */
/* topology_read against fixture trees of real machines, modified copies of
 * them (hotplug, missing and garbage files), and the running system. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "power_capacity.h"
#include "topology.h"
#include "util.h"

#define FIXTURE(name) TS_FIXTURES "/" name

static struct topology *read_ok(const char *root)
{
    struct topology *t = NULL;
    int r = topology_read(root, &t);
    if (r < 0)
        fail_msg("topology_read(%s): %s", root, strerror(-r));
    assert_non_null(t);
    return t;
}

static cpu_set_t set_of(const char *list)
{
    cpu_set_t s;
    assert_int_equal(cpulist_parse(list, &s), 0);
    return s;
}

static void assert_set(const cpu_set_t *got, const char *want)
{
    cpu_set_t w = set_of(want);
    char buf[256];
    assert_int_equal(cpulist_format(got, buf, sizeof buf), 0);
    if (!CPU_EQUAL(got, &w))
        fail_msg("CPU set is '%s', expected '%s'", buf, want);
}

static unsigned capacity_of(const struct topo_core *c)
{
    struct capacity_table cap;
    capacity_table_default(&cap);
    return capacity_core_milli(&cap, (unsigned)c->n_online);
}

/* What a machine adds up to. */
struct shape {
    int n_cpus, n_packages, n_cores, online, n_llcs, n_nodes;
};

static void expect_count(const char *machine, const char *what, int got, int want)
{
    if (got != want)
        fail_msg("%s: %d %s, expected %d", machine, got, what, want);
}

static void expect_shape(const char *machine, const struct topology *t, struct shape want)
{
    expect_count(machine, "CPUs", t->n_cpus, want.n_cpus);
    expect_count(machine, "packages", t->n_packages, want.n_packages);
    expect_count(machine, "cores", t->n_cores, want.n_cores);
    expect_count(machine, "online CPUs", CPU_COUNT(&t->online), want.online);
    expect_count(machine, "LLC groups", t->n_llcs, want.n_llcs);
    expect_count(machine, "NUMA nodes", t->n_nodes, want.n_nodes);
}

/* topology_print's text, to be freed. */
static char *print_to_string(const struct topology *t)
{
    struct capacity_table cap;
    capacity_table_default(&cap);
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    assert_non_null(f);
    topology_print(f, t, &cap);
    assert_int_equal(fclose(f), 0);
    return out;
}

/* ---- temporary copies of fixture trees ---- */

static char copy_dst[PATH_MAX];
static size_t copy_src_len;

static int copy_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    char dst[PATH_MAX];
    snprintf(dst, sizeof dst, "%s%s", copy_dst, path + copy_src_len);
    if (type == FTW_D)
        return mkdir(dst, 0755) < 0 && errno != EEXIST ? -1 : 0;
    if (type != FTW_F)
        return 0;
    char buf[8192];
    ssize_t n = read_file(path, buf, sizeof buf);
    if (n < 0)
        return -1;
    FILE *f = fopen(dst, "we");
    if (!f)
        return -1;
    fwrite(buf, 1, (size_t)n, f);
    return fclose(f);
}

/* A private copy of a fixture in a new temp dir; returns the dir (malloc'd). */
static char *copy_fixture(const char *name)
{
    char tmpl[] = "/tmp/test-topology-XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    char src[PATH_MAX];
    snprintf(src, sizeof src, "%s/%s", TS_FIXTURES, name);
    snprintf(copy_dst, sizeof copy_dst, "%s", tmpl);
    copy_src_len = strlen(src);
    assert_int_equal(nftw(src, copy_one, 16, FTW_PHYS), 0);
    return strdup(tmpl);
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw) { return remove(path); }

static void remove_tree(const char *dir) { nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS); }

static void tree_write(const char *root, const char *rel, const char *content)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/sys/devices/system/%s", root, rel);
    FILE *f = fopen(path, "we");
    if (!f)
        fail_msg("%s: %s", path, strerror(errno));
    fprintf(f, "%s\n", content);
    assert_int_equal(fclose(f), 0);
}

static void tree_remove(const char *root, const char *rel)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/sys/devices/system/%s", root, rel);
    remove_tree(path);
    assert_int_equal(access(path, F_OK), -1);
}

/* Offline cpu13 of the x86 tree as the kernel does: online file 0, the lists
 * without it, and (unless keep_topology) no topology or cache directory. */
/* rel (below cpu/cpuN/) removed for each of CPUs 0..n_cpus-1. */
static void tree_remove_each_cpu(const char *root, int n_cpus, const char *rel)
{
    for (int cpu = 0; cpu < n_cpus; cpu++) {
        char path[128];
        snprintf(path, sizeof path, "cpu/cpu%d/%s", cpu, rel);
        tree_remove(root, path);
    }
}

static void x86_offline_cpu13(const char *root, bool keep_topology)
{
    tree_write(root, "cpu/cpu13/online", "0");
    tree_write(root, "cpu/online", "0-12,14-15");
    tree_write(root, "cpu/offline", "13");
    tree_write(root, "node/node1/cpulist", "4-7,12,14-15");
    if (keep_topology)
        return;
    tree_remove(root, "cpu/cpu13/topology");
    tree_remove(root, "cpu/cpu13/cache");
    tree_write(root, "cpu/cpu5/topology/thread_siblings_list", "5");
    for (int i = 0; i < 3; i++) {
        char rel[128];
        snprintf(rel, sizeof rel, "cpu/cpu5/cache/index%d/shared_cpu_list", i);
        tree_write(root, rel, "5");
    }
    for (int cpu = 4; cpu < 16; cpu++) {
        if (cpu >= 8 && cpu < 12)
            continue;
        if (cpu == 13)
            continue;
        char rel[128];
        snprintf(rel, sizeof rel, "cpu/cpu%d/cache/index3/shared_cpu_list", cpu);
        tree_write(root, rel, "4-7,12,14-15");
    }
}

/* ---- log capture ---- */

static char logged[4096];

static void capture_log(int level, const char *msg, void *userdata)
{
    size_t n = strlen(logged);
    snprintf(logged + n, sizeof logged - n, "%s\n", msg);
}

static int read_capturing(const char *root, struct topology **t)
{
    logged[0] = '\0';
    log_set_sink(capture_log, NULL);
    int r = topology_read(root, t);
    log_set_sink(NULL, NULL);
    return r;
}

/* ---- the machines ---- */

static void test_power9_smt4(void **state)
{
    struct topology *t = read_ok(FIXTURE("power9-smt4"));

    expect_shape("power9-smt4", t,
                 (struct shape){.n_cpus = 32, .n_packages = 1, .n_cores = 8, .online = 29, .n_llcs = 4, .n_nodes = 1});
    assert_int_equal(CPU_COUNT(&t->present), 32);

    static const int core_ids[] = {16, 20, 32, 36, 48, 52, 64, 68};
    for (int i = 0; i < t->n_cores; i++) {
        assert_int_equal(t->cores[i].index, i);
        assert_int_equal(t->cores[i].core_id, core_ids[i]);
        assert_int_equal(t->cores[i].package, 0);
        assert_int_equal(t->cores[i].node, 0);
        /* a slice (core pair) shares L2 and L3 */
        assert_int_equal(t->cores[i].llc, i / 2);
    }

    /* core 2: threads 10 and 11 offline, no topology: 2 threads known */
    assert_set(&t->cores[2].threads, "8-9");
    assert_set(&t->cores[2].online, "8-9");
    assert_int_equal(t->cores[2].n_threads, 2);
    assert_int_equal(t->cores[2].n_online, 2);
    assert_int_equal(capacity_of(&t->cores[2]), 1250);
    /* core 5: thread 23 offline */
    assert_set(&t->cores[5].online, "20-22");
    assert_int_equal(t->cores[5].n_online, 3);
    assert_int_equal(capacity_of(&t->cores[5]), 1375);
    for (int i = 0; i < t->n_cores; i++) {
        if (i == 2 || i == 5)
            continue;
        assert_int_equal(t->cores[i].n_online, 4);
        assert_int_equal(t->cores[i].n_threads, 4);
        assert_int_equal(capacity_of(&t->cores[i]), 1500);
    }
    assert_set(&t->cores[7].threads, "28-31");

    for (int cpu = 0; cpu < t->n_cpus; cpu++) {
        const struct topo_cpu *c = &t->cpus[cpu];
        assert_int_equal(c->cpu, cpu);
        assert_true(c->present);
        if (cpu == 10 || cpu == 11 || cpu == 23) {
            assert_false(c->online);
            assert_int_equal(c->core, -1);
            assert_int_equal(c->package, -1);
            assert_int_equal(c->llc, -1);
        } else {
            assert_true(c->online);
            assert_true(CPU_ISSET(cpu, &t->cores[c->core].threads));
            assert_int_equal(c->llc, t->cores[c->core].llc);
        }
    }
    assert_int_equal(t->cpus[9].core, 2);
    assert_int_equal(t->cpus[12].core, 3);
    topology_free(t);
}

static void test_power9_smt8(void **state)
{
    struct topology *t = read_ok(FIXTURE("power9-smt8"));

    /* L1 lists every other thread; the LLC is the L3 of the whole SMT8 core */
    expect_shape("power9-smt8", t,
                 (struct shape){.n_cpus = 48, .n_packages = 1, .n_cores = 6, .online = 48, .n_llcs = 6, .n_nodes = 1});
    for (int i = 0; i < t->n_cores; i++) {
        const struct topo_core *c = &t->cores[i];
        assert_int_equal(c->core_id, 8 * i);
        assert_int_equal(c->n_threads, 8);
        assert_int_equal(c->n_online, 8);
        assert_int_equal(c->llc, i);
        assert_int_equal(capacity_of(c), 2000);
    }
    assert_set(&t->cores[1].threads, "8-15");
    assert_int_equal(t->cpus[47].core, 5);
    topology_free(t);
}

static void test_x86_smt2_2s(void **state)
{
    struct topology *t = read_ok(FIXTURE("x86-smt2-2s"));

    expect_shape("x86-smt2-2s", t,
                 (struct shape){.n_cpus = 16, .n_packages = 2, .n_cores = 8, .online = 16, .n_llcs = 2, .n_nodes = 2});

    /* sorted by (package, lowest thread); sibling of N is N+8 */
    static const int core_ids[] = {0, 2, 8, 10};
    for (int i = 0; i < 8; i++) {
        const struct topo_core *c = &t->cores[i];
        int first = i; /* cores 0-3: cpu0-3, cores 4-7: cpu4-7 */
        cpu_set_t want;
        CPU_ZERO(&want);
        CPU_SET(first, &want);
        CPU_SET(first + 8, &want);
        assert_true(CPU_EQUAL(&c->threads, &want));
        assert_int_equal(c->package, i / 4);
        assert_int_equal(c->core_id, core_ids[i % 4]);
        assert_int_equal(c->llc, i / 4);
        assert_int_equal(c->node, i / 4);
        assert_int_equal(c->n_online, 2);
        assert_int_equal(capacity_of(c), 1250);
    }
    /* same core_id in both sockets: distinct cores */
    assert_int_not_equal(t->cpus[0].core, t->cpus[4].core);
    assert_int_equal(t->cpus[12].core, 4);
    assert_int_equal(t->cpus[12].node, 1);
    assert_int_equal(t->cpus[11].node, 0);
    topology_free(t);
}

static void test_vm_2cpu(void **state)
{
    struct topology *t = read_ok(FIXTURE("vm-2cpu"));

    /* no cache/ at all: the package is the LLC */
    expect_shape("vm-2cpu", t,
                 (struct shape){.n_cpus = 2, .n_packages = 1, .n_cores = 2, .online = 2, .n_llcs = 1, .n_nodes = 1});
    for (int i = 0; i < 2; i++) {
        assert_int_equal(t->cores[i].n_threads, 1);
        assert_int_equal(t->cores[i].n_online, 1);
        assert_true(CPU_ISSET(i, &t->cores[i].threads));
        assert_int_equal(capacity_of(&t->cores[i]), 1000);
    }
    /* cpu0 has no online file and is online */
    assert_true(t->cpus[0].online);
    topology_free(t);
}

/* ---- hotplug detection ---- */

static void test_equal_same_tree(void **state)
{
    static const char *const trees[] = {"power9-smt4", "power9-smt8", "x86-smt2-2s", "vm-2cpu"};
    for (size_t i = 0; i < ELEMENTSOF(trees); i++) {
        char root[PATH_MAX];
        snprintf(root, sizeof root, "%s/%s", TS_FIXTURES, trees[i]);
        struct topology *a = read_ok(root), *b = read_ok(root);
        assert_true(topology_equal(a, b));
        topology_free(a);
        topology_free(b);
    }
    struct topology *x = read_ok(FIXTURE("x86-smt2-2s")), *p = read_ok(FIXTURE("power9-smt4"));
    assert_false(topology_equal(x, p));
    assert_false(topology_equal(x, NULL));
    topology_free(x);
    topology_free(p);
}

static void test_equal_after_offline(void **state)
{
    _cleanup_free_ char *root = copy_fixture("x86-smt2-2s");
    struct topology *before = read_ok(root);
    x86_offline_cpu13(root, false);
    struct topology *after = read_ok(root);

    assert_false(topology_equal(before, after));
    assert_int_equal(CPU_COUNT(&after->online), 15);
    assert_int_equal(after->n_cores, 8);
    assert_int_equal(after->n_llcs, 2);
    /* cpu5's core is now SMT1; cpu13 belongs to no core */
    const struct topo_core *c = &after->cores[after->cpus[5].core];
    assert_set(&c->threads, "5");
    assert_int_equal(c->n_threads, 1);
    assert_int_equal(c->n_online, 1);
    assert_int_equal(capacity_of(c), 1000);
    assert_int_equal(after->cpus[13].core, -1);
    assert_false(after->cpus[13].online);
    assert_true(after->cpus[13].present);

    /* back online: equal again */
    remove_tree(root);
    free(root);
    root = copy_fixture("x86-smt2-2s");
    struct topology *again = read_ok(root);
    assert_true(topology_equal(before, again));

    topology_free(before);
    topology_free(after);
    topology_free(again);
    remove_tree(root);
}

static void test_read_online(void **state)
{
    cpu_set_t online;
    assert_int_equal(topology_read_online(FIXTURE("power9-smt4"), &online), 0);
    assert_set(&online, "0-9,12-22,24-31");

    struct topology *t = read_ok(NULL);
    assert_int_equal(topology_read_online(NULL, &online), 0);
    assert_true(CPU_EQUAL(&online, &t->online));
    topology_free(t);

    assert_int_equal(topology_read_online("/nonexistent/turbosched-root", &online), -ENOENT);
    _cleanup_free_ char *root = copy_fixture("vm-2cpu");
    tree_write(root, "cpu/online", "0-");
    assert_int_equal(topology_read_online(root, &online), -EINVAL);
    remove_tree(root);
}

/* A tree that shows an offline CPU's topology: it counts in its core. */
static void test_offline_with_topology(void **state)
{
    _cleanup_free_ char *root = copy_fixture("x86-smt2-2s");
    x86_offline_cpu13(root, true);
    struct topology *t = read_ok(root);

    const struct topo_core *c = &t->cores[5];
    assert_set(&c->threads, "5,13");
    assert_set(&c->online, "5");
    assert_int_equal(c->n_threads, 2);
    assert_int_equal(c->n_online, 1);
    assert_int_equal(capacity_of(c), 1000);
    assert_int_equal(t->cpus[13].core, 5);
    assert_int_equal(t->cpus[13].package, 1);

    _cleanup_free_ char *out = print_to_string(t);
    assert_non_null(strstr(out, "package 1: 4 cores, 7 threads online, 1 offline\n"));
    assert_non_null(strstr(out, "threads 5 online, 13 offline, capacity 1.000x"));
    assert_non_null(strstr(out, "15 of 16 threads online"));

    topology_free(t);
    remove_tree(root);
}

/* ---- missing files ---- */

static void test_missing_optional_files(void **state)
{
    struct topology *ref = read_ok(FIXTURE("x86-smt2-2s"));
    _cleanup_free_ char *root = copy_fixture("x86-smt2-2s");

    /* No thread_siblings_list: core_cpus_list, its newer name, is used. */
    for (int cpu = 0; cpu < 16; cpu++) {
        char rel[128], list[32];
        snprintf(rel, sizeof rel, "cpu/cpu%d/topology/thread_siblings_list", cpu);
        tree_remove(root, rel);
        snprintf(rel, sizeof rel, "cpu/cpu%d/topology/core_cpus_list", cpu);
        snprintf(list, sizeof list, "%d,%d", cpu % 8, cpu % 8 + 8);
        tree_write(root, rel, list);
    }
    struct topology *t = read_ok(root);
    assert_true(topology_equal(ref, t));
    topology_free(t);

    /* Neither list: cores from (package, core_id). */
    tree_remove_each_cpu(root, 16, "topology/core_cpus_list");
    t = read_ok(root);
    assert_true(topology_equal(ref, t));
    topology_free(t);

    /* No cache information: one LLC per package, as before. */
    tree_remove_each_cpu(root, 16, "cache");
    t = read_ok(root);
    assert_int_equal(t->n_llcs, 2);
    assert_int_equal(t->cores[3].llc, 0);
    assert_int_equal(t->cores[4].llc, 1);
    topology_free(t);

    /* No node directory: one node, 0. */
    tree_remove(root, "node");
    t = read_ok(root);
    assert_int_equal(t->n_nodes, 1);
    for (int cpu = 0; cpu < 16; cpu++)
        assert_int_equal(t->cpus[cpu].node, 0);
    assert_int_equal(t->cores[7].node, 0);
    topology_free(t);

    /* No present or online list: the cpuN directories and online files. */
    tree_remove(root, "cpu/present");
    tree_remove(root, "cpu/online");
    t = read_ok(root);
    assert_int_equal(t->n_cpus, 16);
    assert_int_equal(CPU_COUNT(&t->online), 16);
    assert_int_equal(t->n_cores, 8);
    topology_free(t);

    topology_free(ref);
    remove_tree(root);
}

/* CPUs without cache/ share an LLC group with the package's other cache-less
 * CPUs, while the rest keep the groups their lists give. */
static void test_partial_cache_info(void **state)
{
    _cleanup_free_ char *root = copy_fixture("power9-smt4");
    for (int cpu = 16; cpu < 32; cpu++) {
        char rel[128];
        if (cpu == 23)
            continue; /* offline: no cache/ already */
        snprintf(rel, sizeof rel, "cpu/cpu%d/cache", cpu);
        tree_remove(root, rel);
    }
    struct topology *t = read_ok(root);
    assert_int_equal(t->n_llcs, 3);
    assert_int_equal(t->cores[0].llc, t->cores[1].llc);
    assert_int_equal(t->cores[2].llc, t->cores[3].llc);
    assert_int_not_equal(t->cores[1].llc, t->cores[2].llc);
    for (int i = 5; i < 8; i++)
        assert_int_equal(t->cores[i].llc, t->cores[4].llc);
    assert_int_equal(t->cpus[31].llc, t->cores[4].llc);
    topology_free(t);
    remove_tree(root);
}

/* ---- errors ---- */

static void test_missing_root(void **state)
{
    struct topology *t = NULL;
    assert_int_equal(read_capturing("/nonexistent/turbosched-root", &t), -ENOENT);
    assert_null(t);
    assert_non_null(strstr(logged, "/nonexistent/turbosched-root/sys/devices/system/cpu"));

    /* a root with an empty cpu directory */
    char tmpl[] = "/tmp/test-topology-XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/sys/devices/system/cpu", tmpl);
    char *p = path + strlen(tmpl);
    while ((p = strchr(p + 1, '/'))) {
        *p = '\0';
        mkdir(path, 0755);
        *p = '/';
    }
    assert_int_equal(mkdir(path, 0755), 0);
    assert_int_equal(read_capturing(tmpl, &t), -ENOENT);
    assert_null(t);
    remove_tree(tmpl);
}

static void expect_garbage(const char *fixture, const char *rel, const char *content)
{
    _cleanup_free_ char *root = copy_fixture(fixture);
    tree_write(root, rel, content);
    struct topology *t = NULL;
    int r = read_capturing(root, &t);
    if (r != -EINVAL)
        fail_msg("%s = '%s': got %d, expected -EINVAL", rel, content, r);
    assert_null(t);
    /* the log names the file */
    if (!strstr(logged, rel))
        fail_msg("%s = '%s': log does not name the file: %s", rel, content, logged);
    remove_tree(root);
}

static void test_garbage(void **state)
{
    expect_garbage("vm-2cpu", "cpu/cpu1/topology/core_id", "banana");
    expect_garbage("vm-2cpu", "cpu/cpu0/topology/physical_package_id", "-7");
    expect_garbage("vm-2cpu", "cpu/cpu1/topology/thread_siblings_list", "1-");
    expect_garbage("vm-2cpu", "cpu/cpu1/online", "2");
    expect_garbage("vm-2cpu", "cpu/present", "0-1,x");
    expect_garbage("vm-2cpu", "cpu/online", "0-99999");
    expect_garbage("vm-2cpu", "node/node0/cpulist", "zz");
    expect_garbage("power9-smt4", "cpu/cpu4/cache/index3/level", "three");
    expect_garbage("power9-smt4", "cpu/cpu4/cache/index3/shared_cpu_list", "4-7,,");
    expect_garbage("x86-smt2-2s", "cpu/cpu9/topology/core_id", "");
}

/* Odd but parseable contents: no crash, a sane answer. */
static void test_odd_contents(void **state)
{
    _cleanup_free_ char *root = copy_fixture("vm-2cpu");

    /* A siblings list naming CPUs that do not exist. */
    tree_write(root, "cpu/cpu0/topology/thread_siblings_list", "0-1000");
    struct topology *t = read_ok(root);
    assert_int_equal(t->n_cpus, 2);
    assert_int_equal(t->n_cores, 1);
    assert_set(&t->cores[0].threads, "0-1");
    topology_free(t);

    /* Platforms without a package id report -1. */
    tree_write(root, "cpu/cpu0/topology/thread_siblings_list", "0");
    tree_write(root, "cpu/cpu0/topology/physical_package_id", "-1");
    tree_write(root, "cpu/cpu1/topology/physical_package_id", "-1");
    t = read_ok(root);
    assert_int_equal(t->n_cores, 2);
    assert_int_equal(t->n_packages, 1);
    assert_int_equal(t->cores[0].package, -1);
    topology_free(t);

    /* Every CPU offline but the boot CPU; cpu1 with nothing but online=0. */
    tree_write(root, "cpu/cpu1/online", "0");
    tree_write(root, "cpu/online", "0");
    tree_remove(root, "cpu/cpu1/topology");
    t = read_ok(root);
    assert_int_equal(t->n_cores, 1);
    assert_int_equal(t->cpus[1].core, -1);
    assert_int_equal(CPU_COUNT(&t->online), 1);
    topology_free(t);

    /* An online CPU whose topology is gone (a hotplug race): a core of its own. */
    tree_write(root, "cpu/cpu1/online", "1");
    tree_write(root, "cpu/online", "0-1");
    t = read_ok(root);
    assert_int_equal(t->n_cores, 2);
    assert_int_equal(t->cores[t->cpus[1].core].n_online, 1);
    topology_free(t);

    remove_tree(root);
}

/* ---- the running system ---- */

static void test_live_system(void **state)
{
    struct topology *t = read_ok(NULL), *u = read_ok("/");
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    assert_true(n > 0);
    assert_int_equal(CPU_COUNT(&t->online), n);
    assert_true(t->n_cores >= 1);
    assert_true(t->n_packages >= 1);
    assert_true(t->n_llcs >= 1);
    int online_in_cores = 0;
    for (int i = 0; i < t->n_cores; i++)
        online_in_cores += t->cores[i].n_online;
    assert_int_equal(online_in_cores, n);
    for (int cpu = 0; cpu < t->n_cpus; cpu++)
        if (t->cpus[cpu].online)
            assert_true(t->cpus[cpu].core >= 0);
    /* Another test could hotplug a CPU in between, but nothing here does. */
    assert_true(topology_equal(t, u));
    topology_free(t);
    topology_free(u);
}

/* ---- printing ---- */

static void test_print_power9_smt4(void **state)
{
    struct topology *t = read_ok(FIXTURE("power9-smt4"));
    _cleanup_free_ char *out = print_to_string(t);

    assert_non_null(strstr(out, "package 0: 8 cores, 29 threads online\n"));
    assert_non_null(strstr(out, "  core 0 (id 16): threads 0-3 online, capacity 1.500x"));
    assert_non_null(strstr(out, "  core 2 (id 32): threads 8-9 online, capacity 1.250x"));
    assert_non_null(strstr(out, "  core 5 (id 52): threads 20-22 online, capacity 1.375x"));
    assert_non_null(strstr(out, "offline, core unknown"));
    assert_non_null(strstr(out, ": 10-11,23\n"));
    assert_non_null(strstr(out, "1 package, 8 cores, 29 of 32 threads online, 4 LLC groups, 1 NUMA node\n"));
    topology_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_power9_smt4),
        cmocka_unit_test(test_power9_smt8),
        cmocka_unit_test(test_x86_smt2_2s),
        cmocka_unit_test(test_vm_2cpu),
        cmocka_unit_test(test_equal_same_tree),
        cmocka_unit_test(test_equal_after_offline),
        cmocka_unit_test(test_read_online),
        cmocka_unit_test(test_offline_with_topology),
        cmocka_unit_test(test_missing_optional_files),
        cmocka_unit_test(test_partial_cache_info),
        cmocka_unit_test(test_missing_root),
        cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_odd_contents),
        cmocka_unit_test(test_live_system),
        cmocka_unit_test(test_print_power9_smt4),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
