/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the request-path test reads, on fixture /proc trees with the shapes
 * of a timer loop (no socket but its journal stream on stdout, asleep in
 * clock_nanosleep), an epoll server (a listening TCP socket, asleep in
 * epoll_wait without timeout) and a socket client (a connected unix
 * stream, asleep in recvfrom). Built at run time: the syscall numbers are
 * this architecture's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fixture-tree.h"
#include "procsock.h"

static char root[64];

static void put_link(const char *rel, const char *target)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    char cmd[PATH_MAX + 32];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", path);
    assert_int_equal(system(cmd), 0);
    *slash = '/';
    assert_int_equal(symlink(target, path), 0);
}

static void put_syscall(int pid, long nr, unsigned long a3)
{
    char rel[64], text[160];
    snprintf(rel, sizeof rel, "proc/%d/task/%d/syscall", pid, pid);
    snprintf(text, sizeof text, "%ld 0x5 0x7ffc 0x40 0x%lx 0x0 0x0 0x7ffc900fc0d8 0x7f268d8ed503\n", nr, a3);
    fixture_put(root, rel, text);
}

/* One network namespace's tables, seen from each process's net/ */
static void put_net(int pid)
{
    char rel[64];
    unsigned char lo[4] = {127, 0, 0, 1};
    uint32_t w;
    memcpy(&w, lo, 4);
    char tcp[512];
    snprintf(tcp, sizeof tcp,
             "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
             "   0: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 901 1 0\n"
             "   1: %08X:D431 %08X:01BB 01 00000000:00000000 00:00000000 00000000     0        0 950 1 0\n",
             w, 0x070200c0u);
    snprintf(rel, sizeof rel, "proc/%d/net/tcp", pid);
    fixture_put(root, rel, tcp);
    snprintf(rel, sizeof rel, "proc/%d/net/unix", pid);
    fixture_put(root, rel,
                "Num       RefCount Protocol Flags    Type St Inode Path\n"
                "0000000000000000: 00000003 00000000 00000000 0001 03 900\n"
                "0000000000000000: 00000003 00000000 00000000 0001 03 902\n"
                "0000000000000000: 00000002 00000000 00000000 0002 01 903\n");
    /* no udp, tcp6 or udp6 tables: as on a kernel without IPv6 */
    snprintf(rel, sizeof rel, "proc/%d/ns/net", pid);
    put_link(rel, "net:[4026531840]");
}

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/test-procsock.XXXXXX");
    assert_non_null(mkdtemp(root));
    fixture_put(root, "proc/sys/net/ipv4/ip_local_port_range", "32768\t60999\n");
    /* 100: a timer loop, its stdout the journal's stream */
    put_link("proc/100/fd/0", "/dev/null");
    put_link("proc/100/fd/1", "socket:[900]");
    put_link("proc/100/fd/2", "socket:[900]");
    put_syscall(100, SYS_clock_nanosleep, 0);
    put_net(100);
    /* 200: an epoll server listening on port 8080 */
    put_link("proc/200/fd/3", "anon_inode:[eventpoll]");
    put_link("proc/200/fd/4", "socket:[901]");
    put_syscall(200, SYS_epoll_pwait, 0xffffffffUL);
    put_net(200);
    /* 300: a client of a local server, over a unix stream */
    put_link("proc/300/fd/3", "socket:[903]");
    put_link("proc/300/fd/5", "socket:[902]");
    put_syscall(300, SYS_recvfrom, 0);
    put_net(300);
    /* 400: an agent pushing to a remote collector over TCP */
    put_link("proc/400/fd/3", "socket:[950]");
    put_syscall(400, SYS_clock_nanosleep, 0);
    put_net(400);
    /* 500: a socket newer than any table read before it (or a netlink one) */
    put_link("proc/500/fd/3", "socket:[960]");
    put_syscall(500, SYS_clock_nanosleep, 0);
    put_net(500);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd);
}

static void test_serves(void **state)
{
    (void)state;
    struct procsock_table tab = {0};
    char why[128] = "";
    assert_int_equal(procsock_serves(root, 100, &tab, 1000, why, sizeof why), 0);
    assert_int_equal(procsock_serves(root, 200, &tab, 1000, why, sizeof why), 1);
    assert_string_equal(why, "listens on tcp port 8080 (fd 4)");
    assert_int_equal(procsock_serves(root, 300, &tab, 1000, why, sizeof why), 1);
    assert_string_equal(why, "holds a connected unix stream socket (fd 5)");
    assert_int_equal(procsock_serves(root, 400, &tab, 1000, why, sizeof why), 0);
    /* one read of the tables served all four: same namespace, within a second */
    assert_int_equal(tab.reads, 1);
    assert_int_equal(tab.ephemeral_low, 32768);
    assert_int_equal(procsock_serves(root, 200, &tab, 1000 + PROCSOCK_TABLE_MAX_AGE_MS + 1, why, sizeof why), 1);
    assert_int_equal(tab.reads, 2);
    /* a socket the table lacks: read again, but not within a second of the last read */
    uint64_t reads = tab.reads;
    uint32_t last = tab.read_ms;
    assert_int_equal(procsock_serves(root, 500, &tab, last + 10, why, sizeof why), 0);
    assert_int_equal(tab.reads, reads);
    assert_int_equal(procsock_serves(root, 500, &tab, last + PROCSOCK_TABLE_MIN_AGE_MS, why, sizeof why), 0);
    assert_int_equal(tab.reads, reads + 1);
    /* gone */
    assert_true(procsock_serves(root, 999, &tab, 1000, why, sizeof why) == -ENOENT);
    procsock_table_free(&tab);
}

static void test_sleep(void **state)
{
    (void)state;
    struct reqpath_syscall sc;
    const char *name;
    assert_int_equal(procsock_sleep(root, 100, 100, &sc), 0);
    assert_int_equal(reqpath_sleep_of(&sc, &name), REQPATH_SLEEP_TIMER);
    assert_int_equal(procsock_sleep(root, 200, 200, &sc), 0);
    assert_int_equal(reqpath_sleep_of(&sc, &name), REQPATH_SLEEP_UNTIMED);
    assert_string_equal(name, "epoll_pwait");
    assert_int_equal(procsock_sleep(root, 300, 300, &sc), 0);
    assert_int_equal(reqpath_sleep_of(&sc, &name), REQPATH_SLEEP_READ);
    assert_true(procsock_sleep(root, 999, 999, &sc) < 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_serves), cmocka_unit_test(test_sleep)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
