/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "state.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

#define STATE_MAGIC "turbosched-state"

static uint64_t fnv1a(uint64_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ull;
    }
    return h;
}
#define FNV_INIT 0xcbf29ce484222325ull

void applied_group_free_members(struct applied_group *g)
{
    for (size_t i = 0; i < g->n_members; i++)
        free(g->members[i].original_path);
    free(g->members);
    g->members = NULL;
    g->n_members = 0;
}

void state_free(struct state *s)
{
    free(s->tasks);
    for (size_t i = 0; i < s->n_groups; i++) {
        applied_group_free_members(&s->groups[i]);
        free(s->groups[i].name);
    }
    free(s->groups);
    *s = (struct state){0};
}

/* --- writing ---------------------------------------------------------------------- */

struct writer {
    FILE *f;
    uint64_t hash;
    unsigned lines;
    bool failed;
};

static void w_line(struct writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void w_line(struct writer *w, const char *fmt, ...)
{
    char *line = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&line, fmt, ap);
    va_end(ap);
    if (n < 0) {
        w->failed = true;
        return;
    }
    w->hash = fnv1a(w->hash, line, (size_t)n);
    w->lines++;
    fputs(line, w->f);
    free(line);
}

static void sanitize(char *dst, const char *src, size_t size)
{
    size_t i = 0;
    for (; src[i] && i + 1 < size; i++)
        dst[i] = (unsigned char)src[i] < 0x20 || src[i] == 0x7f ? '?' : src[i];
    dst[i] = '\0';
}

static int mkdir_parent(const char *path)
{
    _cleanup_free_ char *copy = strdup(path);
    if (!copy)
        return -ENOMEM;
    const char *dir = dirname(copy);
    if (mkdir(dir, 0755) < 0 && errno != EEXIST)
        return -errno;
    return 0;
}

static int write_all(int fd, const char *text, size_t len)
{
    for (size_t off = 0; off < len;) {
        ssize_t n = write(fd, text + off, len - off);
        if (n < 0 && errno != EINTR)
            return -errno;
        if (n > 0)
            off += (size_t)n;
    }
    return 0;
}

/* The file's text is built in memory and written with one write(): the
 * daemon writes it whole at a tick after records went away, at once after
 * a change a block cannot say, and when its blocks have grown long. */
static int write_file_atomically(const char *path, const char *text, size_t len, int *keep_fd)
{
    _cleanup_free_ char *tmp = NULL;
    if (asprintf(&tmp, "%s.XXXXXX", path) < 0)
        return -ENOMEM;
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        /* the directory is made once, when the first write finds it missing */
        int r = mkdir_parent(path);
        if (r < 0)
            return r;
        snprintf(tmp + strlen(path), 8, ".XXXXXX");
        fd = mkostemp(tmp, O_CLOEXEC);
    }
    if (fd < 0)
        return -errno;
    int r = write_all(fd, text, len);
    /* No fsync: the file guards against a crash of the daemon, not of the
     * machine, and after a reboot its boot id no longer matches anyway. */
    if (r == 0 && rename(tmp, path) < 0)
        r = -errno;
    if (r < 0)
        unlink(tmp);
    if (r == 0 && keep_fd) {
        *keep_fd = fd; /* at the end of the file: blocks go after it */
        return 0;
    }
    if (close(fd) < 0 && r == 0)
        r = -errno;
    return r;
}

/* a and b: CPULIST_MAX bytes each */
static void w_task(struct writer *w, const struct applied_task *t, char *a, char *b)
{
    char comm[sizeof t->comm];
    sanitize(comm, t->comm, sizeof comm);
    char token[96];
    bool sliced = t->slice.applied && slice_saved_to_string(&t->slice, token, sizeof token) > 0;
    w_line(w, "task %d %d %" PRIu64 " %s %s %s%s%s%s\n", (int)t->tid, (int)t->pid, t->start_time,
           format_cpulist(&t->original, a, CPULIST_MAX), format_cpulist(&t->set, b, CPULIST_MAX),
           sliced ? "slice=" : "", sliced ? token : "", sliced ? " " : "", comm);
}

/* The lines of a whole file or of a block, into w; a and b: CPULIST_MAX
 * bytes each for the cpulists. */
typedef void (*fill_fn)(struct writer *w, const void *what, char *a, char *b);

static void fill_file(struct writer *w, const void *what, char *a, char *b)
{
    const struct state *s = what;
    w_line(w, "%s %d\n", STATE_MAGIC, STATE_VERSION);
    w_line(w, "boot %s\n", s->boot_id);
    for (size_t i = 0; i < s->n_tasks; i++)
        w_task(w, &s->tasks[i], a, b);
    for (size_t i = 0; i < s->n_groups; i++) {
        const struct applied_group *g = &s->groups[i];
        if (g->kind == GROUP_CPUSET_V1) {
            w_line(w, "cpuset %s\n", g->name);
            for (size_t j = 0; j < g->n_members; j++) {
                const struct applied_member *m = &g->members[j];
                w_line(w, "member %d %d %" PRIu64 " %s\n", (int)m->tid, (int)m->pid, m->start_time, m->original_path);
            }
        } else {
            w_line(w, "unit %s %s %s\n", format_cpulist(&g->set, a, CPULIST_MAX),
                   g->original_all ? "all" : format_cpulist(&g->original, b, CPULIST_MAX), g->name);
        }
    }
}

struct block {
    const struct applied_task *const *tasks;
    size_t n;
};

static void fill_block(struct writer *w, const void *what, char *a, char *b)
{
    const struct block *blk = what;
    for (size_t i = 0; i < blk->n; i++)
        w_task(w, blk->tasks[i], a, b);
}

/* fill's lines and their end line, built in memory (*text, *len). */
static int build_text(fill_fn fill, const void *what, char **text, size_t *len)
{
    FILE *f = open_memstream(text, len);
    if (!f)
        return -ENOMEM;
    _cleanup_free_ char *a = malloc(CPULIST_MAX), *b = malloc(CPULIST_MAX);
    if (!a || !b) {
        fclose(f);
        return -ENOMEM;
    }
    struct writer w = {.f = f, .hash = FNV_INIT};
    fill(&w, what, a, b);
    fprintf(f, "end %u %016" PRIx64 "\n", w.lines, w.hash);
    int r = w.failed || ferror(f) ? -ENOMEM : 0;
    if (fclose(f) != 0 && r == 0)
        r = -ENOMEM;
    return r;
}

int state_write(const char *path, const struct state *s, int *keep_fd)
{
    if (keep_fd)
        *keep_fd = -1;
    if (s->n_tasks == 0 && s->n_groups == 0) {
        if (unlink(path) < 0 && errno != ENOENT)
            return -errno;
        return 0;
    }
    _cleanup_free_ char *text = NULL;
    size_t len = 0;
    int r = build_text(fill_file, s, &text, &len);
    return r < 0 ? r : write_file_atomically(path, text, len, keep_fd);
}

int state_append(int fd, const struct applied_task *const *tasks, size_t n)
{
    _cleanup_free_ char *text = NULL;
    size_t len = 0;
    int r = build_text(fill_block, &(struct block){tasks, n}, &text, &len);
    return r < 0 ? r : write_all(fd, text, len);
}

/* --- reading ---------------------------------------------------------------------- */

/* Split off the next space-separated field; *p then points past the space. */
static char *next_field(char **p)
{
    char *s = *p;
    if (!s || !*s)
        return NULL;
    char *sp = strchr(s, ' ');
    if (sp) {
        *sp = '\0';
        *p = sp + 1;
    } else
        *p = s + strlen(s);
    return s;
}

static int field_pid(char **p, pid_t *ret)
{
    unsigned v;
    char *f = next_field(p);
    if (!f || parse_uint(f, &v) < 0 || v == 0 || v > INT32_MAX)
        return -EBADMSG;
    *ret = (pid_t)v;
    return 0;
}

static int field_u64(char **p, uint64_t *ret)
{
    char *f = next_field(p);
    if (!f || parse_u64(f, ret) < 0)
        return -EBADMSG;
    return 0;
}

static int field_set(char **p, cpu_set_t *ret)
{
    char *f = next_field(p);
    if (!f || cpulist_parse(f, ret) < 0 || CPU_COUNT(ret) == 0)
        return -EBADMSG;
    return 0;
}

/* Make room for element n of *array: capacity doubles at each power of two,
 * so reading a file of many records stays linear. */
static int grow(void *array, size_t n, size_t elem_size)
{
    void **p = array;
    if (n >= 16 && (n & (n - 1)) != 0)
        return 0;
    void *m = reallocarray(*p, n < 16 ? 16 : n * 2, elem_size);
    if (!m)
        return -ENOMEM;
    *p = m;
    return 0;
}

/* A cpuset path relative to the hierarchy root, as the daemon writes them:
 * absolute, no empty, "." or ".." component, so that joined to the mount
 * point it cannot leave the hierarchy. "/" itself only where allow_root (a
 * member's original group may be the root; the daemon's group never is). */
bool state_cgroup_path_valid(const char *p, bool allow_root)
{
    if (p[0] != '/')
        return false;
    if (p[1] == '\0')
        return allow_root;
    for (const char *s = p + 1;;) {
        const char *e = strchrnul(s, '/');
        size_t n = (size_t)(e - s);
        if (n == 0 || n > 255 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
            return false;
        for (const char *c = s; c < e; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7f)
                return false;
        if (*e == '\0')
            return true;
        s = e + 1;
    }
}

/* systemd's unit name rules (unit_name_is_valid) for the kinds whose
 * AllowedCPUs= the daemon sets: [A-Za-z0-9:_.\\@-], at most 255 bytes, a
 * non-empty name before the suffix. */
bool state_unit_name_valid(const char *name)
{
    static const char *const suffixes[] = {".slice", ".service", ".scope"};
    size_t len = strlen(name);
    if (len == 0 || len > 255 || name[0] == '.')
        return false;
    for (const char *c = name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              strchr(":_.\\@-", *c)))
            return false;
    for (size_t i = 0; i < ELEMENTSOF(suffixes); i++) {
        size_t m = strlen(suffixes[i]);
        if (len > m && strcmp(name + len - m, suffixes[i]) == 0)
            return true;
    }
    return false;
}

int state_task_tail(const char *text, struct applied_task *t)
{
    /* A comm is at most 15 bytes: a longer first field that starts so is
     * the token, anything else is the comm (which may hold spaces). */
    size_t n = strcspn(text, " ");
    t->slice = (struct slice_saved){.applied = false};
    if (n > sizeof t->comm && strncmp(text, "slice=", 6) == 0) {
        char token[96];
        if (n - 6 >= sizeof token)
            return -EBADMSG;
        memcpy(token, text + 6, n - 6);
        token[n - 6] = '\0';
        if (slice_saved_from_string(token, &t->slice) < 0)
            return -EBADMSG;
        text += n + (text[n] == ' ');
    }
    snprintf(t->comm, sizeof t->comm, "%s", text);
    return 0;
}

static int parse_entry(char *line, struct state *s)
{
    char *p = line;
    char *kind = next_field(&p);
    if (!kind)
        return -EBADMSG;

    if (strcmp(kind, "boot") == 0) {
        if (strlen(p) >= sizeof s->boot_id || !*p)
            return -EBADMSG;
        strcpy(s->boot_id, p);
        return 0;
    }
    if (strcmp(kind, "task") == 0) {
        struct applied_task t = {0};
        if (field_pid(&p, &t.tid) < 0 || field_pid(&p, &t.pid) < 0 || field_u64(&p, &t.start_time) < 0 ||
            field_set(&p, &t.original) < 0 || field_set(&p, &t.set) < 0 || state_task_tail(p, &t) < 0)
            return -EBADMSG;
        if (grow(&s->tasks, s->n_tasks, sizeof *s->tasks) < 0)
            return -ENOMEM;
        s->tasks[s->n_tasks++] = t;
        return 0;
    }
    if (strcmp(kind, "cpuset") == 0 || strcmp(kind, "unit") == 0) {
        struct applied_group g = {.kind = kind[0] == 'c' ? GROUP_CPUSET_V1 : GROUP_UNIT};
        if (g.kind == GROUP_UNIT) {
            char *orig;
            if (field_set(&p, &g.set) < 0 || !(orig = next_field(&p)))
                return -EBADMSG;
            if (strcmp(orig, "all") == 0)
                g.original_all = true;
            else if (cpulist_parse(orig, &g.original) < 0 || CPU_COUNT(&g.original) == 0)
                return -EBADMSG;
        }
        if (g.kind == GROUP_CPUSET_V1 ? !state_cgroup_path_valid(p, false) : !state_unit_name_valid(p))
            return -EBADMSG;
        if (grow(&s->groups, s->n_groups, sizeof *s->groups) < 0)
            return -ENOMEM;
        if (!(g.name = strdup(p)))
            return -ENOMEM;
        s->groups[s->n_groups++] = g;
        return 0;
    }
    if (strcmp(kind, "member") == 0) {
        struct applied_group *g = s->n_groups ? &s->groups[s->n_groups - 1] : NULL;
        if (!g || g->kind != GROUP_CPUSET_V1)
            return -EBADMSG;
        struct applied_member m = {0};
        if (field_pid(&p, &m.tid) < 0 || field_pid(&p, &m.pid) < 0 || field_u64(&p, &m.start_time) < 0 ||
            !state_cgroup_path_valid(p, true))
            return -EBADMSG;
        if (grow(&g->members, g->n_members, sizeof *g->members) < 0)
            return -ENOMEM;
        if (!(m.original_path = strdup(p)))
            return -ENOMEM;
        g->members[g->n_members++] = m;
        return 0;
    }
    return -EBADMSG;
}

/* The file tells the daemon which threads and cgroups to change: only a
 * file that no one but root (or the daemon's own user) could have written
 * is read. The directory is opened first and checked, then the file is
 * opened in it without following a symlink and checked by its fd, so
 * nothing can be swapped in between. A sticky directory (/tmp) is allowed:
 * others may create files there but not replace ours, and a file of theirs
 * fails the owner check. Returns an open FILE, or NULL with -errno in *err
 * (-ENOENT quietly; the rest logged). */
FILE *state_open_trusted(const char *path, int *err)
{
    _cleanup_free_ char *copy = strdup(path), *copy2 = strdup(path);
    if (!copy || !copy2) {
        *err = -ENOMEM;
        return NULL;
    }
    const char *dir = dirname(copy), *base = basename(copy2);
    uid_t euid = geteuid();
    _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        *err = -errno;
        if (errno != ENOENT)
            log_warning("state file %s: opening its directory: %m, ignoring it", path);
        return NULL;
    }
    struct stat st;
    if (fstat(dfd, &st) < 0) {
        *err = log_warning_errno(-errno, "state file %s: fstat of its directory: %m, ignoring it", path);
        return NULL;
    }
    if ((st.st_uid != 0 && st.st_uid != euid) || ((st.st_mode & 0022) && !(st.st_mode & S_ISVTX))) {
        *err = -EPERM;
        log_warning("state file %s: its directory %s is owned by uid %u with mode %04o, writable by others; "
                    "not trusting it",
                    path, dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
        return NULL;
    }
    /* O_NONBLOCK: a FIFO planted here must not hang the start. */
    _cleanup_close_ int fd = openat(dfd, base, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        *err = -errno;
        if (errno == ELOOP)
            log_warning("state file %s: is a symbolic link, refusing it", path);
        else if (errno != ENOENT)
            log_warning("state file %s: %m, ignoring it", path);
        return NULL;
    }
    const char *why = NULL;
    if (fstat(fd, &st) < 0)
        why = "fstat failed";
    else if (!S_ISREG(st.st_mode))
        why = "not a regular file";
    else if (st.st_uid != 0 && st.st_uid != euid)
        why = "owned by another user";
    else if (st.st_mode & 0022)
        why = "writable by group or others";
    if (why) {
        log_warning("state file %s: %s (uid %u, mode %04o), refusing it", path, why, (unsigned)st.st_uid,
                    (unsigned)(st.st_mode & 07777));
        *err = -EPERM;
        return NULL;
    }
    FILE *f = fdopen(fd, "r");
    if (!f) {
        *err = log_warning_errno(-errno, "state file %s: %m, ignoring it", path);
        return NULL;
    }
    TAKE_FD(fd); /* the FILE owns it now */
    return f;
}

/* What reading the lines found, checked once the file is read. */
struct read_status {
    unsigned lines;    /* lines before the end line, the header included */
    unsigned bad_line; /* the first entry that did not parse, 0 if none */
    bool ended;        /* a valid end line was read */
};

static bool parse_end(const char *line, unsigned *lines, uint64_t *hash)
{
    char extra;
    return sscanf(line, "end %u %" SCNx64 "%c", lines, hash, &extra) == 3 && extra == '\n';
}

/* The end line names the number of lines before it and their FNV-1a hash. */
static int check_end_line(const char *path, const char *line, const struct read_status *rs, uint64_t hash)
{
    unsigned want_lines;
    uint64_t want_hash;
    if (!parse_end(line, &want_lines, &want_hash)) {
        log_warning("state file %s: corrupted (bad end line), ignoring it", path);
        return -EBADMSG;
    }
    if (want_lines != rs->lines || want_hash != hash) {
        log_warning("state file %s: corrupted (checksum mismatch), ignoring it", path);
        return -EBADMSG;
    }
    return 0;
}

static int check_header(const char *path, const char *line)
{
    unsigned version;
    char magic[32];
    if (sscanf(line, "%31s %u", magic, &version) != 2 || strcmp(magic, STATE_MAGIC) != 0) {
        log_warning("state file %s: not a turbosched state file, ignoring it", path);
        return -EBADMSG;
    }
    if (version != STATE_VERSION && version != 1) { /* 1: the same, never with blocks */
        log_warning("state file %s: format version %u, this daemon reads %d, ignoring it", path, version,
                    STATE_VERSION);
        return -EPROTONOSUPPORT;
    }
    return 0;
}

/* Reads every line into *s, hashing them up to the end line. An entry that
 * does not parse is remembered in rs->bad_line, not fatal here: a missing
 * end line (truncation) is the better reason to give. Returns 0 or -errno,
 * logged. */
static int read_lines(FILE *f, const char *path, struct state *s, struct read_status *rs)
{
    _cleanup_free_ char *line = NULL;
    size_t cap = 0;
    uint64_t hash = FNV_INIT;
    ssize_t n;

    while ((n = getline(&line, &cap, f)) > 0) {
        bool complete = line[n - 1] == '\n';
        if (strncmp(line, "end ", 4) == 0 && complete) {
            int r = check_end_line(path, line, rs, hash);
            if (r < 0)
                return r;
            rs->ended = true;
            break; /* the blocks after it: read_blocks */
        }
        hash = fnv1a(hash, line, (size_t)n);
        rs->lines++;
        if (!complete)
            continue; /* a truncated last line: no end line follows */
        line[n - 1] = '\0';

        if (rs->lines == 1) {
            int r = check_header(path, line);
            if (r < 0)
                return r;
            continue;
        }
        if (rs->bad_line)
            continue;
        int r = parse_entry(line, s);
        if (r == -ENOMEM)
            return log_error_errno(r, "state file %s: out of memory reading it", path);
        if (r < 0)
            rs->bad_line = rs->lines;
    }
    if (ferror(f))
        return log_warning_errno(-errno ?: -EIO, "state file %s: read error: %m, ignoring it", path);
    return 0;
}

/* After the snapshot, the blocks state_append wrote: task lines, each
 * block closed by its own end line. A block cut off (the daemon died in its
 * write) or damaged ends the reading, with what came before kept. A task
 * line of a block replaces the earlier one of its TID (dedupe_tasks). */
static int read_blocks(FILE *f, const char *path, struct state *s, unsigned *blocks)
{
    _cleanup_free_ char *line = NULL;
    size_t cap = 0, first = s->n_tasks;
    uint64_t hash = FNV_INIT;
    unsigned lines = 0, want_lines;
    uint64_t want_hash;
    ssize_t n;
    const char *why = NULL;
    while ((n = getline(&line, &cap, f)) > 0) {
        bool complete = line[n - 1] == '\n';
        if (complete && strncmp(line, "end ", 4) == 0) {
            if (!parse_end(line, &want_lines, &want_hash) || want_lines != lines || want_hash != hash) {
                why = "damaged";
                break;
            }
            (*blocks)++;
            first = s->n_tasks;
            hash = FNV_INIT;
            lines = 0;
            continue;
        }
        hash = fnv1a(hash, line, (size_t)n);
        lines++;
        if (!complete)
            break;
        line[n - 1] = '\0';
        int r = strncmp(line, "task ", 5) == 0 ? parse_entry(line, s) : -EBADMSG;
        if (r == -ENOMEM)
            return log_error_errno(r, "state file %s: out of memory reading it", path);
        if (r < 0) {
            why = "damaged";
            break;
        }
    }
    if (ferror(f))
        return log_warning_errno(-errno ?: -EIO, "state file %s: read error: %m, ignoring it", path);
    if (lines || why) {
        log_notice("state file %s: its last change (%u line%s) %s, left out", path, lines, lines == 1 ? "" : "s",
                   why ? why : "cut off by the end of the file");
        s->n_tasks = first;
    }
    return 0;
}

static int cmp_tid_then_later(const void *x, const void *y, void *userdata)
{
    const struct applied_task *t = userdata;
    size_t i = *(const size_t *)x, j = *(const size_t *)y;
    if (t[i].tid != t[j].tid)
        return t[i].tid < t[j].tid ? -1 : 1;
    return i > j ? -1 : i < j; /* the later line first */
}

/* Keep each TID's last task line, in file order. */
static int dedupe_tasks(struct state *s)
{
    if (s->n_tasks < 2)
        return 0;
    _cleanup_free_ size_t *idx = calloc(s->n_tasks, sizeof *idx);
    _cleanup_free_ bool *keep = calloc(s->n_tasks, sizeof *keep);
    if (!idx || !keep)
        return -ENOMEM;
    for (size_t i = 0; i < s->n_tasks; i++)
        idx[i] = i;
    qsort_r(idx, s->n_tasks, sizeof *idx, cmp_tid_then_later, s->tasks);
    for (size_t k = 0; k < s->n_tasks; k++)
        keep[idx[k]] = k == 0 || s->tasks[idx[k]].tid != s->tasks[idx[k - 1]].tid;
    size_t kept = 0;
    for (size_t i = 0; i < s->n_tasks; i++)
        if (keep[i])
            s->tasks[kept++] = s->tasks[i];
    s->n_tasks = kept;
    return 0;
}

int state_read(const char *path, const char *boot_id, struct state *ret)
{
    int open_err = 0;
    _cleanup_fclose_ FILE *f = state_open_trusted(path, &open_err);
    if (!f)
        return open_err;

    __attribute__((cleanup(state_free))) struct state s = {0};
    struct read_status rs = {0};
    int r = read_lines(f, path, &s, &rs);
    if (r < 0)
        return r;
    if (rs.lines == 0) {
        log_warning("state file %s: empty, ignoring it", path);
        return -EBADMSG;
    }
    if (!rs.ended) {
        log_warning("state file %s: truncated (no end line), ignoring it", path);
        return -EBADMSG;
    }
    if (rs.bad_line) {
        log_warning("state file %s: corrupted (line %u unreadable), ignoring it", path, rs.bad_line);
        return -EBADMSG;
    }
    if (!s.boot_id[0]) {
        log_warning("state file %s: corrupted (no boot id), ignoring it", path);
        return -EBADMSG;
    }
    if (boot_id && strcmp(s.boot_id, boot_id) != 0) {
        log_notice("state file %s: written during another boot (%s), ignoring it", path, s.boot_id);
        return -ESTALE;
    }
    unsigned blocks = 0;
    r = read_blocks(f, path, &s, &blocks);
    if (r >= 0 && blocks)
        r = dedupe_tasks(&s);
    if (r < 0)
        return r;
    *ret = s;
    s = (struct state){0}; /* *ret owns the members now */
    return 0;
}
