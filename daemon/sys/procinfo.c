/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reads a task's match inputs from <root>/proc. */
#include "procinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "nss.h"
#include "util.h"

/* Like read_file_at, but a long file is truncated instead of refused. */
static void chomp(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' '))
        s[--n] = '\0';
}

/* Walks "ID:controllers:path" lines. */
struct cgroup_lines {
    const char *v2, *systemd, *cpuset;
    size_t v2_len, systemd_len, cpuset_len;
};

static bool controller_listed(const char *list, size_t n, const char *name)
{
    size_t len = strlen(name);
    const char *s = list, *end = list + n;
    while (s < end) {
        const char *comma = memchr(s, ',', (size_t)(end - s));
        const char *e = comma ? comma : end;
        if ((size_t)(e - s) == len && memcmp(s, name, len) == 0)
            return true;
        s = e + 1;
    }
    return false;
}

static void cgroup_lines_parse(const char *file, struct cgroup_lines *cl)
{
    *cl = (struct cgroup_lines){0};
    for (const char *line = file; *line;) {
        const char *nl = strchrnul(line, '\n');
        const char *c1 = memchr(line, ':', (size_t)(nl - line));
        const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(nl - c1 - 1)) : NULL;
        if (c2) {
            const char *path = c2 + 1;
            size_t plen = (size_t)(nl - path);
            size_t idlen = (size_t)(c1 - line);
            if (idlen == 1 && line[0] == '0' && c2 == c1 + 1) {
                cl->v2 = path;
                cl->v2_len = plen;
            } else if (controller_listed(c1 + 1, (size_t)(c2 - c1 - 1), "name=systemd")) {
                cl->systemd = path;
                cl->systemd_len = plen;
            } else if (controller_listed(c1 + 1, (size_t)(c2 - c1 - 1), "cpuset")) {
                cl->cpuset = path;
                cl->cpuset_len = plen;
            }
        }
        line = *nl ? nl + 1 : nl;
    }
}

static bool is_root(const char *p, size_t n) { return n == 1 && p[0] == '/'; }

static int copy_path(const char *p, size_t n, char *buf, size_t size)
{
    if (n >= size)
        return -ENAMETOOLONG;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return 0;
}

int procinfo_cgroup_pick(const char *cgroup_file, char *buf, size_t size)
{
    struct cgroup_lines cl;
    cgroup_lines_parse(cgroup_file, &cl);
    const char *order[] = {cl.v2, cl.systemd, cl.cpuset};
    size_t lens[] = {cl.v2_len, cl.systemd_len, cl.cpuset_len};
    bool any = false;
    for (size_t i = 0; i < ELEMENTSOF(order); i++) {
        if (!order[i])
            continue;
        any = true;
        if (!is_root(order[i], lens[i]))
            return copy_path(order[i], lens[i], buf, size);
    }
    if (!any)
        return -ENOENT;
    return copy_path("/", 1, buf, size);
}

int procinfo_cgroup_systemd(const char *cgroup_file, char *buf, size_t size)
{
    struct cgroup_lines cl;
    cgroup_lines_parse(cgroup_file, &cl);
    /* Unified or hybrid hierarchy: systemd keeps units in the v2 tree; legacy: name=systemd. */
    if (cl.v2 && !is_root(cl.v2, cl.v2_len))
        return copy_path(cl.v2, cl.v2_len, buf, size);
    if (cl.systemd)
        return copy_path(cl.systemd, cl.systemd_len, buf, size);
    if (cl.v2)
        return copy_path(cl.v2, cl.v2_len, buf, size);
    return -ENOENT;
}

static bool ends_with(const char *s, size_t n, const char *suffix)
{
    size_t m = strlen(suffix);
    return n > m && memcmp(s + n - m, suffix, m) == 0;
}

int procinfo_unit_from_cgroup(const char *path, bool first, char *buf, size_t size)
{
    const char *found = NULL;
    size_t found_len = 0;
    for (const char *s = path; *s;) {
        while (*s == '/')
            s++;
        const char *e = strchrnul(s, '/');
        size_t n = (size_t)(e - s);
        if (ends_with(s, n, ".service") || ends_with(s, n, ".scope")) {
            found = s;
            found_len = n;
            if (first)
                break;
        }
        s = e;
    }
    if (!found)
        return -ENOENT;
    return copy_path(found, found_len, buf, size);
}

/* Length of the path component at *s (after any slashes), advancing *s past it. */
static size_t next_component(const char **s, const char **comp)
{
    while (**s == '/')
        (*s)++;
    *comp = *s;
    const char *e = strchrnul(*s, '/');
    *s = e;
    return (size_t)(e - *comp);
}

static bool component_is(const char *c, size_t n, const char *name)
{
    return n == strlen(name) && memcmp(c, name, n) == 0;
}

/* Only the system's slice counts: systemd places turbosched-jitter.slice
 * under turbosched.slice at the top of the hierarchy (a dash in a slice name
 * is nesting), and only root can create cgroups there. The same name deeper
 * down, as in a user's own manager
 * (/user.slice/user-1000.slice/user@1000.service/turbosched-jitter.slice, from
 * "systemd-run --user --slice=turbosched-jitter.slice"), is anyone's to make
 * and opts nothing in. A first component of turbosched-jitter.slice itself
 * is accepted too: a cgroup made there by hand is root's just as well. */
bool procinfo_path_in_jitter_slice(const char *path)
{
    const char *s = path, *c;
    size_t n = next_component(&s, &c);
    if (component_is(c, n, PROCINFO_JITTER_SLICE))
        return true;
    if (!component_is(c, n, "turbosched.slice"))
        return false;
    n = next_component(&s, &c);
    return component_is(c, n, PROCINFO_JITTER_SLICE);
}

/* getpwuid_r reads and parses /etc/passwd (or asks NSS) on every call: about
 * half the cost of reading a task's inputs. Names are remembered per uid,
 * direct-mapped, until procinfo_user_cache_flush (on reload). */
#define USER_CACHE_SLOTS 64u
static struct {
    bool valid;
    uid_t uid;
    char name[64];
} user_cache[USER_CACHE_SLOTS];

void procinfo_user_cache_flush(void) { memset(user_cache, 0, sizeof user_cache); }

void procinfo_user_name(uid_t uid, char *buf, size_t size)
{
    unsigned slot = (unsigned)uid % USER_CACHE_SLOTS;
    if (user_cache[slot].valid && user_cache[slot].uid == uid) {
        snprintf(buf, size, "%s", user_cache[slot].name);
        return;
    }
    /* A lookup that fails (no such user, a name longer than the cache's, an
     * entry past NSS_BUFFER_MAX) shows the uid, as ps(1) does. Any other
     * failure (a directory service down, out of memory) is not kept: the
     * next lookup asks again. */
    int r = nss_user_name(uid, user_cache[slot].name, sizeof user_cache[slot].name);
    if (r < 0)
        snprintf(user_cache[slot].name, sizeof user_cache[slot].name, "%lu", (unsigned long)uid);
    user_cache[slot].uid = uid;
    user_cache[slot].valid = r >= 0 || r == -ENOENT || r == -ENAMETOOLONG || r == -ERANGE;
    snprintf(buf, size, "%s", user_cache[slot].name);
}

static int read_user(int dirfd, char *buf, size_t size)
{
    char status[4096];
    ssize_t r = read_file_prefix_at(dirfd, "status", status, sizeof status);
    if (r < 0)
        return (int)r;
    const char *uid_line = strstr(status, "\nUid:");
    if (!uid_line)
        return -EBADMSG;
    unsigned long real, eff;
    if (sscanf(uid_line + 5, "%lu %lu", &real, &eff) != 2)
        return -EBADMSG;
    /* The effective uid, as ps(1) shows in USER. */
    procinfo_user_name((uid_t)eff, buf, size);
    return 0;
}

int procinfo_read(const char *proc_root, pid_t pid, pid_t tid, unsigned keys, struct procinfo *pi)
{
    pi->in = (struct match_input){0};
    pi->in_jitter_slice = false;
    if (pid <= 0)
        pid = tid;
    char rel[64];
    int r;
    /* One directory fd: every file below comes from the same process even
     * if the PID is reused meanwhile. */
    _cleanup_close_ int dirfd = open_proc_dir(proc_root, pid);
    if (dirfd < 0)
        return dirfd;

    if (keys & (1u << RULE_COMM)) {
        snprintf(rel, sizeof rel, "task/%d/comm", (int)tid);
        ssize_t n = read_file_prefix_at(dirfd, rel, pi->comm, sizeof pi->comm);
        if (n < 0)
            return errno_is_gone((int)n) ? -ESRCH : (int)n;
        chomp(pi->comm);
        pi->in.comm = pi->comm;
    }
    if (keys & (1u << RULE_EXE)) {
        ssize_t n = readlinkat(dirfd, "exe", pi->exe, sizeof pi->exe - 1);
        if (n >= 0) {
            pi->exe[n] = '\0';
            static const char deleted[] = " (deleted)";
            size_t dl = sizeof deleted - 1;
            /* An upgraded binary still runs under its old name. */
            if ((size_t)n > dl && strcmp(pi->exe + n - dl, deleted) == 0)
                pi->exe[n - dl] = '\0';
            pi->in.exe = pi->exe;
        } else if (errno == ESRCH)
            return -ESRCH;
        /* ENOENT: kernel thread or zombie; EACCES: leave unknown. */
    }
    if (keys & (1u << RULE_CMDLINE)) {
        ssize_t n = read_file_prefix_at(dirfd, "cmdline", pi->cmdline, sizeof pi->cmdline);
        if (n < 0)
            return errno_is_gone((int)n) ? -ESRCH : (int)n;
        while (n > 0 && pi->cmdline[n - 1] == '\0')
            n--;
        for (ssize_t i = 0; i < n; i++)
            if (pi->cmdline[i] == '\0')
                pi->cmdline[i] = ' ';
        pi->cmdline[n] = '\0';
        pi->in.cmdline = pi->cmdline;
    }
    if (keys & ((1u << RULE_CGROUP) | (1u << RULE_UNIT) | PROCINFO_WANT_SLICE)) {
        char file[8192];
        ssize_t n = read_file_prefix_at(dirfd, "cgroup", file, sizeof file);
        if (n < 0)
            return errno_is_gone((int)n) ? -ESRCH : (int)n;
        if ((keys & (1u << RULE_CGROUP)) && procinfo_cgroup_pick(file, pi->cgroup, sizeof pi->cgroup) >= 0)
            pi->in.cgroup = pi->cgroup;
        char sd[1024];
        if ((keys & ((1u << RULE_UNIT) | PROCINFO_WANT_SLICE)) && procinfo_cgroup_systemd(file, sd, sizeof sd) >= 0) {
            pi->in_jitter_slice = procinfo_path_in_jitter_slice(sd);
            if ((keys & (1u << RULE_UNIT)) && procinfo_unit_from_cgroup(sd, false, pi->unit, sizeof pi->unit) >= 0) {
                pi->in.unit = pi->unit;
                if (procinfo_unit_from_cgroup(sd, true, pi->system_unit, sizeof pi->system_unit) < 0)
                    pi->system_unit[0] = '\0';
            }
        }
    }
    if (keys & (1u << RULE_USER)) {
        r = read_user(dirfd, pi->user, sizeof pi->user);
        if (r < 0 && errno_is_gone(r))
            return -ESRCH;
        if (r >= 0)
            pi->in.user = pi->user;
    }
    return 0;
}
