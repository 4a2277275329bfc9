/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* short_ends: a read shorter than asked is the end (see read_proc_fd) */
static ssize_t read_fd_full(int fd, char *buf, size_t size, bool truncate, bool short_ends)
{
    size_t n = 0;
    for (;;) {
        if (n + 1 >= size) {
            if (truncate)
                break;
            return -EFBIG;
        }
        size_t want = size - 1 - n;
        ssize_t r = read(fd, buf + n, want);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (r == 0)
            break;
        n += (size_t)r;
        if (short_ends && (size_t)r < want)
            break;
    }
    buf[n] = '\0';
    return (ssize_t)n;
}

ssize_t read_proc_fd(int fd, char *buf, size_t size) { return read_fd_full(fd, buf, size, false, true); }

static ssize_t read_at(int dirfd, const char *path, char *buf, size_t size, bool truncate)
{
    if (size == 0)
        return -EINVAL;
    _cleanup_close_ int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return -errno;
    return read_fd_full(fd, buf, size, truncate, false);
}

ssize_t read_proc_file(const char *path, char *buf, size_t size)
{
    if (size == 0)
        return -EINVAL;
    _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return -errno;
    return read_proc_fd(fd, buf, size);
}

ssize_t read_file_at(int dirfd, const char *path, char *buf, size_t size)
{
    return read_at(dirfd, path, buf, size, false);
}

ssize_t read_file_prefix_at(int dirfd, const char *path, char *buf, size_t size)
{
    return read_at(dirfd, path, buf, size, true);
}

ssize_t read_file(const char *path, char *buf, size_t size) { return read_file_at(AT_FDCWD, path, buf, size); }

int path_join(char *out, size_t size, const char *root, const char *path)
{
    int n;
    if (!root || !*root || strcmp(root, "/") == 0)
        n = snprintf(out, size, "%s", path);
    else
        n = snprintf(out, size, "%s%s%s", root, path[0] == '/' ? "" : "/", path);
    if (n < 0 || (size_t)n >= size)
        return -ENAMETOOLONG;
    return 0;
}

int read_u64_below(const char *root, const char *path, uint64_t *ret)
{
    char full[PATH_MAX], buf[64];
    if (path_join(full, sizeof full, root, path) < 0)
        return -ENAMETOOLONG;
    ssize_t k = read_file(full, buf, sizeof buf);
    if (k < 0)
        return (int)k;
    buf[strcspn(buf, "\n")] = '\0';
    return parse_u64(buf, ret);
}

ssize_t read_proc_task(const char *root, pid_t pid, pid_t tid, const char *name, char *buf, size_t size)
{
    char rel[96], path[PATH_MAX];
    snprintf(rel, sizeof rel, "/proc/%d/task/%d/%s", (int)pid, (int)tid, name);
    int r = path_join(path, sizeof path, root, rel);
    if (r < 0)
        return r;
    return read_proc_file(path, buf, size);
}

int open_proc_dir(const char *root, pid_t pid)
{
    char rel[32], path[PATH_MAX];
    snprintf(rel, sizeof rel, "/proc/%d", (int)pid);
    int r = path_join(path, sizeof path, root, rel);
    if (r < 0)
        return r;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

int parse_u64(const char *s, uint64_t *ret)
{
    if (!s || !isdigit((unsigned char)*s))
        return -EINVAL;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno == ERANGE)
        return -ERANGE;
    if (*end != '\0')
        return -EINVAL;
    *ret = v;
    return 0;
}

int parse_uint(const char *s, unsigned *ret)
{
    uint64_t v;
    int r = parse_u64(s, &v);
    if (r < 0)
        return r;
    if (v > UINT_MAX)
        return -ERANGE;
    *ret = (unsigned)v;
    return 0;
}

int parse_bool(const char *s, bool *ret)
{
    static const char *const yes[] = {"1", "yes", "true", "on"};
    static const char *const no[] = {"0", "no", "false", "off"};
    for (size_t i = 0; i < ELEMENTSOF(yes); i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *ret = true;
            return 0;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *ret = false;
            return 0;
        }
    }
    return -EINVAL;
}

int parse_milli(const char *s, unsigned *ret)
{
    if (!s || !isdigit((unsigned char)*s))
        return -EINVAL;
    uint64_t whole = 0, frac = 0;
    const char *p = s;
    for (; isdigit((unsigned char)*p); p++) {
        whole = whole * 10 + (uint64_t)(*p - '0');
        if (whole > UINT_MAX / 1000)
            return -ERANGE;
    }
    if (*p == '.') {
        p++;
        int digits = 0;
        if (!isdigit((unsigned char)*p))
            return -EINVAL;
        for (; isdigit((unsigned char)*p); p++, digits++) {
            if (digits >= 3)
                return -EINVAL;
            frac = frac * 10 + (uint64_t)(*p - '0');
        }
        for (; digits < 3; digits++)
            frac *= 10;
    }
    if (*p != '\0')
        return -EINVAL;
    *ret = (unsigned)(whole * 1000 + frac);
    return 0;
}

/* A number with a unit suffix: the suffix's factor applied, at most max. */
struct unit_suffix {
    const char *name;
    uint64_t factor;
};

static int parse_with_unit(const char *s, const struct unit_suffix *units, size_t n_units, bool ignore_case,
                           uint64_t max, uint64_t *ret)
{
    if (!s || !isdigit((unsigned char)*s))
        return -EINVAL;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno == ERANGE)
        return -ERANGE;
    for (size_t i = 0; i < n_units; i++) {
        if ((ignore_case ? strcasecmp(end, units[i].name) : strcmp(end, units[i].name)) != 0)
            continue;
        if (v > max / units[i].factor)
            return -ERANGE;
        *ret = v * units[i].factor;
        return 0;
    }
    return -EINVAL;
}

int parse_size(const char *s, uint64_t *ret)
{
    static const struct unit_suffix units[] = {
        {"", 1},           {"K", 1ull << 10},   {"KiB", 1ull << 10}, {"M", 1ull << 20}, {"MiB", 1ull << 20},
        {"G", 1ull << 30}, {"GiB", 1ull << 30},
    };
    return parse_with_unit(s, units, ELEMENTSOF(units), true, UINT64_MAX, ret);
}

int parse_duration_ms(const char *s, unsigned *ret)
{
    static const struct unit_suffix units[] = {{"", 1}, {"ms", 1}, {"s", 1000}, {"min", 60000}};
    uint64_t v;
    int r = parse_with_unit(s, units, ELEMENTSOF(units), false, UINT_MAX, &v);
    if (r < 0)
        return r;
    *ret = (unsigned)v;
    return 0;
}

int cpulist_parse(const char *s, cpu_set_t *set)
{
    CPU_ZERO(set);
    const char *p = s;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p == '\0' || *p == '\n')
        return 0;
    for (;;) {
        char *end;
        if (!isdigit((unsigned char)*p))
            return -EINVAL;
        unsigned long a = strtoul(p, &end, 10), b = a;
        p = end;
        if (*p == '-') {
            p++;
            if (!isdigit((unsigned char)*p))
                return -EINVAL;
            b = strtoul(p, &end, 10);
            p = end;
        }
        if (a > b || b >= CPU_SETSIZE)
            return -ERANGE;
        for (unsigned long c = a; c <= b; c++)
            CPU_SET(c, set);
        if (*p == ',') {
            p++;
            continue;
        }
        while (*p == '\n' || *p == ' ' || *p == '\t')
            p++;
        return *p == '\0' ? 0 : -EINVAL;
    }
}

/* The first CPU from `from` on that is (set) or is not (!set) in s, a word
 * at a time: a mask is mostly empty words, and this runs for every mask the
 * state file and the log print. CPU_SETSIZE when there is none. */
static int next_cpu(const cpu_set_t *s, int from, bool set)
{
    const unsigned long *w = (const unsigned long *)s;
    const int bits = (int)(8 * sizeof *w), n = CPU_SETSIZE / bits;
    for (int i = from / bits; i < n; i++) {
        unsigned long v = set ? w[i] : ~w[i];
        if (i == from / bits)
            v &= ~0ul << (from % bits);
        if (v)
            return i * bits + __builtin_ctzl(v);
    }
    return CPU_SETSIZE;
}

int cpulist_format(const cpu_set_t *set, char *buf, size_t size)
{
    size_t n = 0;
    if (size == 0)
        return -ENOSPC;
    buf[0] = '\0';
    for (int c = next_cpu(set, 0, true); c < CPU_SETSIZE; c = next_cpu(set, c + 1, true)) {
        int e = next_cpu(set, c, false) - 1;
        int w = e == c ? snprintf(buf + n, size - n, "%s%d", n ? "," : "", c)
                       : snprintf(buf + n, size - n, "%s%d-%d", n ? "," : "", c, e);
        if (w < 0 || (size_t)w >= size - n)
            return -ENOSPC;
        n += (size_t)w;
        c = e;
    }
    return 0;
}

const char *procstat_field(const char *stat, int n)
{
    const char *p = strrchr(stat, ')');
    if (!p || n < 3)
        return NULL;
    p++; /* the space before field 3 */
    for (int f = 3; f < n; f++) {
        p = strchr(p + 1, ' '); /* the space before field f + 1 */
        if (!p)
            return NULL;
    }
    if (*p != ' ')
        return NULL;
    p++;
    return *p && *p != ' ' && *p != '\n' ? p : NULL;
}

int procstat_u64(const char *stat, int n, uint64_t *ret)
{
    const char *p = procstat_field(stat, n);
    if (!p || *p < '0' || *p > '9')
        return -EBADMSG;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(p, &end, 10);
    if (errno || (*end != ' ' && *end != '\n' && *end != '\0'))
        return -EBADMSG;
    *ret = v;
    return 0;
}

const char *format_cpulist(const cpu_set_t *set, char *buf, size_t size)
{
    if (cpulist_format(set, buf, size) < 0)
        snprintf(buf, size, "(%d CPUs)", CPU_COUNT(set));
    return buf;
}

const char *format_percent(char *buf, size_t size, unsigned permille)
{
    if (permille % 10 == 0)
        snprintf(buf, size, "%u%%", permille / 10);
    else
        snprintf(buf, size, "%u.%u%%", permille / 10, permille % 10);
    return buf;
}

const char *format_milli(char *buf, size_t size, unsigned milli)
{
    unsigned whole = milli / 1000, frac = milli % 1000;
    if (frac == 0)
        snprintf(buf, size, "%u", whole);
    else if (frac % 100 == 0)
        snprintf(buf, size, "%u.%u", whole, frac / 100);
    else if (frac % 10 == 0)
        snprintf(buf, size, "%u.%02u", whole, frac / 10);
    else
        snprintf(buf, size, "%u.%03u", whole, frac);
    return buf;
}

uint64_t now_ns(void)
{
    struct timespec ts;
    /* It fails only for a clock the kernel lacks, which CLOCK_MONOTONIC never is. */
    if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
        abort();
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t now_ms(void) { return now_ns() / 1000000ull; }

bool cpuset_covers(const cpu_set_t *mask, const cpu_set_t *all)
{
    cpu_set_t both;
    CPU_AND(&both, mask, all);
    return CPU_EQUAL(&both, all);
}
