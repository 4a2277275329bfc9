/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The turbo ratio table of Intel CPUs (see turbo-ratio.h). */
#include "turbo-ratio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

/* A "key : value" line's value, from the first line of text starting with
 * key (the first processor's block comes first). */
static const char *field(const char *text, const char *key)
{
    size_t n = strlen(key);
    for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        if (strncmp(l, key, n) != 0)
            continue;
        const char *c = l + n;
        while (*c == ' ' || *c == '\t')
            c++;
        if (*c != ':')
            continue; /* a longer key: "model name" is not "model" */
        c++;
        while (*c == ' ' || *c == '\t')
            c++;
        return c;
    }
    return NULL;
}

static int field_uint(const char *text, const char *key, unsigned *ret)
{
    const char *v = field(text, key);
    char *end;
    if (!v || *v < '0' || *v > '9')
        return -EINVAL;
    errno = 0;
    unsigned long x = strtoul(v, &end, 10);
    if (errno || x > 0xffff || (*end && *end != '\n'))
        return -EINVAL;
    *ret = (unsigned)x;
    return 0;
}

int cpu_ident_parse(const char *cpuinfo, struct cpu_ident *id)
{
    memset(id, 0, sizeof(*id));
    const char *v = field(cpuinfo, "vendor_id");
    if (!v)
        return -EINVAL;
    size_t n = strcspn(v, " \t\n");
    if (n == 0 || n >= sizeof id->vendor)
        return -EINVAL;
    memcpy(id->vendor, v, n);
    if (field_uint(cpuinfo, "cpu family", &id->family) < 0 || field_uint(cpuinfo, "model", &id->model) < 0)
        return -EINVAL;
    return 0;
}

bool turbo_ratio_grouped(unsigned model)
{
    static const unsigned grouped[] = {
        0x55,                   /* Skylake-SP, Cascade Lake, Cooper Lake */
        0x6a, 0x6c,             /* Ice Lake-SP, Ice Lake-D */
        0x8f, 0xcf,             /* Sapphire Rapids, Emerald Rapids */
        0xad, 0xae,             /* Granite Rapids */
        0x5c, 0x5f, 0x7a, 0x86, /* Atom Goldmont, Goldmont-D, Goldmont Plus, Tremont-D */
        0xaf, 0xb6,             /* Sierra Forest, Grand Ridge */
    };
    for (size_t i = 0; i < ELEMENTSOF(grouped); i++)
        if (grouped[i] == model)
            return true;
    return false;
}

unsigned turbo_ratio_bclk_khz(unsigned model)
{
    switch (model) {
    case 0x1a:
    case 0x1e:
    case 0x1f:
    case 0x2e: /* Nehalem */
    case 0x25:
    case 0x2c:
    case 0x2f: /* Westmere */
        return 133333;
    default:
        return 100000;
    }
}

static unsigned byte_of(uint64_t v, unsigned i) { return (unsigned)(v >> (8 * i)) & 0xff; }

int turbo_ratio_decode(uint64_t ratios, uint64_t counts, bool grouped, unsigned bclk_khz, struct freq_response *fr,
                       char *why, size_t why_len)
{
    unsigned n = 0;
    freq_response_init(fr, BENEFIT_MAX_CORES);
    for (unsigned i = 0; i < 8; i++) {
        unsigned r = byte_of(ratios, i);
        unsigned upto = grouped ? byte_of(counts, i) : i + 1;
        if (r == 0 || upto <= n)
            break; /* the table ends: an unused group or count */
        if (upto > BENEFIT_MAX_CORES)
            upto = BENEFIT_MAX_CORES;
        unsigned mhz = (unsigned)(((uint64_t)r * bclk_khz + 500) / 1000);
        for (unsigned a = n + 1; a <= upto; a++)
            fr->mhz[a] = mhz;
        n = upto;
    }
    fr->n_cores = n;
    char err[96];
    if (n == 0) {
        snprintf(why, why_len, "no ratio in MSR_TURBO_RATIO_LIMIT (0x%016llx%s)", (unsigned long long)ratios,
                 grouped ? ", by core group" : "");
        return -EINVAL;
    }
    if (freq_response_validate(fr, err, sizeof err) < 0) {
        snprintf(why, why_len, "MSR_TURBO_RATIO_LIMIT 0x%016llx is not a table this reads: %s",
                 (unsigned long long)ratios, err);
        fr->n_cores = 0;
        return -EINVAL;
    }
    return 0;
}

static int read_msr(int fd, unsigned reg, uint64_t *v)
{
    ssize_t k = pread(fd, v, sizeof *v, reg);
    if (k == (ssize_t)sizeof *v)
        return 0;
    return k < 0 ? -errno : -EIO;
}

/* vendor, family and model of the first processor, or why not */
static int read_ident(const char *root, struct cpu_ident *id, char *what, size_t what_len)
{
    char path[PATH_MAX], text[16384];
    if (path_join(path, sizeof path, root, "/proc/cpuinfo") < 0)
        return -ENAMETOOLONG;
    ssize_t k = read_file_prefix_at(AT_FDCWD, path, text, sizeof text);
    if (k < 0) {
        snprintf(what, what_len, "%s: %s", path, strerror((int)-k));
        return (int)k;
    }
    if (cpu_ident_parse(text, id) < 0) {
        snprintf(what, what_len, "%s: no vendor_id, cpu family and model", path);
        return -ENODEV;
    }
    return 0;
}

/* Whether this CPU publishes a table this reads, or why not. */
static int check_ident(const struct cpu_ident *id, char *what, size_t what_len)
{
    if (strcmp(id->vendor, "GenuineIntel") != 0) {
        snprintf(what, what_len, "not an Intel CPU (%s): no turbo ratio table to read", id->vendor);
        return -ENODEV;
    }
    if (id->family != 6) {
        snprintf(what, what_len, "Intel family %u: its turbo ratio table is not read", id->family);
        return -ENODEV;
    }
    if (id->model == 0x57 || id->model == 0x85) {
        snprintf(what, what_len, "Xeon Phi (model 0x%x): its turbo ratio encoding is not read", id->model);
        return -ENODEV;
    }
    return 0;
}

int turbo_ratio_read(const char *root, struct freq_response *fr, char *what, size_t what_len)
{
    struct cpu_ident id;
    fr->n_cores = 0;
    int r = read_ident(root, &id, what, what_len);
    if (r < 0 || (r = check_ident(&id, what, what_len)) < 0)
        return r;

    char path[PATH_MAX];
    if (path_join(path, sizeof path, root, "/dev/cpu/0/msr") < 0)
        return -ENAMETOOLONG;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        r = -errno;
        snprintf(what, what_len, "%s: %s (%s)", path, strerror(-r),
                 r == -ENOENT ? "the msr module is not loaded, or the unit's PrivateDevices= hides it"
                              : "reading it needs root with CAP_SYS_RAWIO");
        return r;
    }
    bool grouped = turbo_ratio_grouped(id.model);
    uint64_t ratios = 0, counts = 0;
    r = read_msr(fd, MSR_TURBO_RATIO_LIMIT, &ratios);
    if (r == 0 && grouped)
        r = read_msr(fd, MSR_TURBO_RATIO_LIMIT_CORES, &counts);
    close(fd);
    if (r < 0) {
        snprintf(what, what_len, "%s: reading MSR 0x%x: %s (a virtual machine often hides it)", path,
                 grouped && ratios ? MSR_TURBO_RATIO_LIMIT_CORES : MSR_TURBO_RATIO_LIMIT, strerror(-r));
        return r;
    }
    r = turbo_ratio_decode(ratios, counts, grouped, turbo_ratio_bclk_khz(id.model), fr, what, what_len);
    if (r < 0)
        return r;
    snprintf(what, what_len, "MSR_TURBO_RATIO_LIMIT of CPU 0 (Intel family 6 model 0x%x%s)", id.model,
             grouped ? ", by core group" : "");
    return 0;
}
