/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "procsock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

void procsock_table_free(struct procsock_table *t)
{
    free(t->v);
    *t = (struct procsock_table){0};
}

static int cmp_ino(const void *a, const void *b)
{
    uint64_t x = ((const struct reqpath_sock *)a)->ino, y = ((const struct reqpath_sock *)b)->ino;
    return x < y ? -1 : x > y;
}

static int table_add(struct procsock_table *t, const struct reqpath_sock *s)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        struct reqpath_sock *v = realloc(t->v, cap * sizeof *v);
        if (!v)
            return -ENOMEM;
        t->v = v;
        t->cap = cap;
    }
    t->v[t->n++] = *s;
    return 0;
}

/* One of the net tables below the process's directory; a table the kernel
 * lacks (no IPv6) is none. */
static int table_read_one(struct procsock_table *t, int piddir, const char *name, enum reqpath_sock_kind kind, bool v6)
{
    int fd = openat(piddir, name, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 0 : -errno;
    _cleanup_fclose_ FILE *f = fdopen(fd, "r");
    if (!f) {
        int r = -errno;
        close(fd);
        return r;
    }
    _cleanup_free_ char *line = NULL;
    size_t len = 0;
    bool header = true;
    while (getline(&line, &len, f) >= 0) {
        struct reqpath_sock s;
        if (header) {
            header = false;
            continue;
        }
        int r = kind == REQPATH_SOCK_UNIX ? reqpath_parse_unix(line, &s) : reqpath_parse_inet(line, kind, v6, &s);
        if (r < 0)
            continue;
        if ((r = table_add(t, &s)) < 0)
            return r;
    }
    return ferror(f) ? -EIO : 0;
}

static unsigned ephemeral_low(int piddir)
{
    char buf[64];
    unsigned lo = 32768; /* the kernel's default */
    int fd = openat(piddir, "../sys/net/ipv4/ip_local_port_range", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return lo;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n > 0) {
        buf[n] = '\0';
        unsigned v;
        if (sscanf(buf, "%u", &v) == 1 && v > 0 && v <= 65535)
            lo = v;
    }
    return lo;
}

static int table_read(struct procsock_table *t, int piddir, uint64_t netns, uint32_t now_ms)
{
    static const struct {
        const char *name;
        enum reqpath_sock_kind kind;
        bool v6;
    } tables[] = {
        {"net/unix", REQPATH_SOCK_UNIX, false}, {"net/tcp", REQPATH_SOCK_TCP, false},
        {"net/tcp6", REQPATH_SOCK_TCP, true},   {"net/udp", REQPATH_SOCK_UDP, false},
        {"net/udp6", REQPATH_SOCK_UDP, true},
    };
    t->n = 0;
    t->valid = false;
    t->reads++;
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
        int r = table_read_one(t, piddir, tables[i].name, tables[i].kind, tables[i].v6);
        if (r < 0)
            return r;
    }
    qsort(t->v, t->n, sizeof *t->v, cmp_ino);
    t->ephemeral_low = ephemeral_low(piddir);
    t->netns = netns;
    t->read_ms = now_ms;
    t->valid = true;
    return 0;
}

/* "socket:[12345]" -> 12345 */
static bool socket_ino(const char *link, uint64_t *ret) { return sscanf(link, "socket:[%" SCNu64 "]", ret) == 1; }

static uint64_t netns_of(int piddir)
{
    char link[64];
    ssize_t n = readlinkat(piddir, "ns/net", link, sizeof link - 1);
    uint64_t ino = 0;
    if (n > 0) {
        link[n] = '\0';
        if (sscanf(link, "net:[%" SCNu64 "]", &ino) != 1)
            ino = 0;
    }
    return ino;
}

struct held {
    int fd;
    uint64_t ino;
};

/* The sockets the process holds: up to cap of them in v, *n; 1 when there
 * were more, 2 when it holds more than PROCSOCK_MAX_FDS descriptors. */
static int list_sockets(int piddir, struct held *v, size_t cap, size_t *n)
{
    int dfd = openat(piddir, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return -errno;
    DIR *d = fdopendir(dfd);
    if (!d) {
        int r = -errno;
        close(dfd);
        return r;
    }
    struct dirent *de;
    int r = 0;
    unsigned fds = 0;
    *n = 0;
    errno = 0;
    while ((de = readdir(d))) {
        char link[64];
        if (de->d_name[0] == '.')
            continue;
        if (++fds > PROCSOCK_MAX_FDS) {
            r = 2;
            break;
        }
        ssize_t len = readlinkat(dirfd(d), de->d_name, link, sizeof link - 1);
        if (len < 0)
            continue; /* closed since the listing */
        link[len] = '\0';
        uint64_t ino;
        if (!socket_ino(link, &ino))
            continue;
        if (*n == cap) {
            r = 1;
            break;
        }
        v[(*n)++] = (struct held){.fd = atoi(de->d_name), .ino = ino};
    }
    if (!de && errno)
        r = -errno;
    closedir(d);
    return r;
}

int procsock_serves(const char *root, pid_t pid, struct procsock_table *tab, uint32_t now_ms, char *why, size_t size)
{
    int r;
    _cleanup_close_ int piddir = open_proc_dir(root, pid);
    if (piddir < 0)
        return piddir;
    _cleanup_free_ struct held *held = malloc(PROCSOCK_MAX_SOCKETS * sizeof *held);
    if (!held)
        return -ENOMEM;
    size_t n = 0;
    r = list_sockets(piddir, held, PROCSOCK_MAX_SOCKETS, &n);
    if (r < 0)
        return r;
    if (r > 0) {
        snprintf(why, size, r == 1 ? "holds over %u sockets" : "holds over %u descriptors",
                 r == 1 ? PROCSOCK_MAX_SOCKETS : PROCSOCK_MAX_FDS);
        return 1;
    }
    if (n == 0)
        return 0;
    uint64_t netns = netns_of(piddir);
    if (!tab->valid || tab->netns != netns || now_ms - tab->read_ms > PROCSOCK_TABLE_MAX_AGE_MS) {
        r = table_read(tab, piddir, netns, now_ms);
        if (r < 0)
            return r;
    }
    for (int pass = 0; pass < 2; pass++) {
        bool missing = false;
        for (size_t i = 0; i < n; i++) {
            struct reqpath_sock key = {.ino = held[i].ino};
            const struct reqpath_sock *s = bsearch(&key, tab->v, tab->n, sizeof *tab->v, cmp_ino);
            if (!s)
                missing = true;
            else if (reqpath_sock_serves(s, held[i].fd, tab->ephemeral_low, why, size))
                return 1;
        }
        /* A socket newer than the table (or of a kind no table lists, as
         * netlink): read it again, at most once a PROCSOCK_TABLE_MIN_AGE_MS. */
        if (pass > 0 || !missing || now_ms - tab->read_ms < PROCSOCK_TABLE_MIN_AGE_MS)
            break;
        r = table_read(tab, piddir, netns, now_ms);
        if (r < 0)
            return r;
    }
    return 0;
}

int procsock_sleep(const char *root, pid_t pid, pid_t tid, struct reqpath_syscall *ret)
{
    char buf[256];
    ssize_t n = read_proc_task(root, pid, tid, "syscall", buf, sizeof buf);
    if (n < 0)
        return (int)n;
    return reqpath_parse_syscall(buf, ret);
}
