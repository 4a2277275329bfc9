/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "procscan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

/* A stat line is about 52 numeric fields plus a 15-byte comm. */
#define STAT_BUF 2048
#define STATUS_BUF 8192

/* The real /proc, opened once: a per-task file is then one openat() of a
 * relative path built without snprintf. A fixture root (tests) is joined as
 * a path on every call, since tests remove and recreate their trees. */
static bool is_real_root(const char *root) { return !root || !*root || strcmp(root, "/") == 0; }

static int real_proc_fd(void)
{
    static int fd = -1;
    if (fd < 0)
        fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return fd;
}

static char *put_uint(char *p, unsigned v)
{
    char tmp[10];
    unsigned n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

/* "PID/task/TID/FILE" into out (at least TASK_REL_MAX bytes), or
 * "PID/FILE" for a leader when leader_short. */
#define TASK_REL_MAX 64
static void task_rel(char *out, pid_t pid, pid_t tid, const char *file, bool leader_short)
{
    char *p = put_uint(out, (unsigned)pid);
    if (!leader_short || pid != tid) {
        memcpy(p, "/task/", 6);
        p = put_uint(p + 6, (unsigned)tid);
    }
    *p++ = '/';
    size_t n = strlen(file);
    memcpy(p, file, n + 1);
}

static int open_task_file(const char *root, pid_t pid, pid_t tid, const char *file)
{
    char rel[TASK_REL_MAX + 6] = "/proc/";
    int fd;
    if (is_real_root(root) && real_proc_fd() >= 0) {
        /* A leader's own stat and status are its process's: PID/FILE walks
         * two path components and makes two proc inodes fewer, most of an
         * exec's cost of reading them. (Only the CPU times of PID/stat are
         * the whole process's, which the callers do not read.) */
        task_rel(rel + 6, pid, tid, file, true);
        fd = openat(real_proc_fd(), rel + 6, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    } else {
        task_rel(rel + 6, pid, tid, file, false);
        char path[PATH_MAX];
        int r = path_join(path, sizeof(path), root, rel);
        if (r < 0)
            return r;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    }
    return fd < 0 ? -errno : fd;
}

/* Read ROOT/proc/PID/task/TID/FILE, NUL-terminated (read_proc_fd). -EFBIG
 * if it does not fit. */
static ssize_t read_task_file(const char *root, pid_t pid, pid_t tid, const char *file, char *buf, size_t size)
{
    _cleanup_close_ int fd = open_task_file(root, pid, tid, file);
    if (fd < 0)
        return fd;
    return read_proc_fd(fd, buf, size);
}

int procscan_parse_stat(const char *buf, struct task *out, char *state)
{
    /* "TID (comm) S ppid ...": comm may hold spaces and ')', so it ends at
     * the last ')'. */
    const char *open = strchr(buf, '(');
    const char *close = strrchr(buf, ')');
    if (!open || !close || close < open)
        return -EBADMSG;

    char *end;
    errno = 0;
    long tid = strtol(buf, &end, 10);
    if (errno || end == buf || tid <= 0 || tid > INT32_MAX || *end != ' ' || end + 1 != open)
        return -EBADMSG;

    size_t n = MIN((size_t)(close - open - 1), sizeof(out->comm) - 1);
    memcpy(out->comm, open + 1, n);
    out->comm[n] = '\0';

    const char *p = close + 1;
    if (*p != ' ')
        return -EBADMSG;
    p++;
    char st = *p;
    if (st == '\0' || st == ' ')
        return -EBADMSG;
    uint64_t start, flags; /* fields 22 and 9 */
    if (procstat_u64(buf, 22, &start) < 0 || procstat_u64(buf, 9, &flags) < 0)
        return -EBADMSG;

    out->tid = (pid_t)tid;
    out->start_time = start;
    out->flags &= ~TASK_F_KTHREAD;
    if (flags & 0x00200000ull) /* PF_KTHREAD */
        out->flags |= TASK_F_KTHREAD;
    if (state)
        *state = st;
    return 0;
}

int procscan_parse_status_uid(const char *buf, uid_t *euid)
{
    const char *p = buf;
    while (p && *p) {
        if (strncmp(p, "Uid:", 4) == 0) {
            unsigned long r, e;
            if (sscanf(p + 4, "%lu %lu", &r, &e) != 2)
                return -EBADMSG;
            *euid = (uid_t)e;
            return 0;
        }
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    return -EBADMSG;
}

static int read_status_uid(const char *root, pid_t pid, pid_t tid, uid_t *euid)
{
    char buf[STATUS_BUF];
    ssize_t n = read_task_file(root, pid, tid, "status", buf, sizeof(buf));
    if (n < 0)
        return (int)n;
    return procscan_parse_status_uid(buf, euid);
}

static int uid_of(const char *root, pid_t pid, pid_t tid, const struct procscan_hooks *h, uid_t *euid)
{
    if (h && h->lazy_uid) {
        *euid = TASK_UID_UNKNOWN;
        return 0;
    }
    return read_status_uid(root, pid, tid, euid);
}

int procscan_read_stat(const char *root, pid_t pid, pid_t tid, struct task *out)
{
    char buf[STAT_BUF];
    char state = 0;
    struct task t = {.rule = -1};
    ssize_t n = read_task_file(root, pid, tid, "stat", buf, sizeof(buf));
    if (n < 0)
        return (int)n;
    int r = procscan_parse_stat(buf, &t, &state);
    if (r < 0) {
        log_debug("/proc/%d/task/%d/stat: unparsable", (int)pid, (int)tid);
        return r;
    }
    if (t.tid != tid)
        return -EBADMSG;
    /* A zombie's exit event has been sent: it is gone for us. */
    if (state == 'Z' || state == 'X' || state == 'x')
        return -ESRCH;
    t.pid = pid;
    t.uid = out->uid;
    *out = t;
    return 0;
}

/* stat, then the uid unless h says it may wait */
static int read_task(const char *root, pid_t pid, pid_t tid, const struct procscan_hooks *h, struct task *out)
{
    struct task t = {0};
    int r = procscan_read_stat(root, pid, tid, &t);
    if (r < 0)
        return r;
    r = uid_of(root, pid, tid, h, &t.uid);
    if (r < 0)
        return r;
    *out = t;
    return 0;
}

int procscan_read_task(const char *root, pid_t pid, pid_t tid, struct task *out)
{
    return read_task(root, pid, tid, NULL, out);
}

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) < 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

bool procscan_started_by_fork(uint64_t start_ticks, uint64_t fork_ns)
{
    if (!fork_ns)
        return true; /* not known: nothing to tell by */
    static long ns_per_tick;
    if (!ns_per_tick) {
        long hz = sysconf(_SC_CLK_TCK);
        ns_per_tick = hz > 0 ? 1000000000L / hz : 10000000L;
    }
    /* The start time counts CLOCK_BOOTTIME (in ticks, rounded down), the
     * event's timestamp CLOCK_MONOTONIC; they differ by the time spent
     * suspended, which only grows: with today's difference a task that
     * started at or before its fork event is never taken for a later one. */
    uint64_t boot = clock_ns(CLOCK_BOOTTIME), mono = clock_ns(CLOCK_MONOTONIC);
    uint64_t suspended = boot > mono ? boot - mono : 0;
    return start_ticks * (uint64_t)ns_per_tick <= fork_ns + suspended + PROCSCAN_FORK_SLACK_NS;
}

int procscan_ensure_start(const char *root, struct task *t)
{
    if (!t->start_pending)
        return 0;
    struct task fresh = {0};
    int r = procscan_read_stat(root, t->pid, t->tid, &fresh);
    if (r < 0)
        return r;
    /* Started after its fork event: the child exited before we got here and
     * the TID is another task's (its exit event, then the new task's fork
     * event, follow). Gone for us: nothing may act on the TID under this
     * entry. */
    if (!procscan_started_by_fork(fresh.start_time, t->start_time)) {
        log_debug("tid %d (%s): exited before its fork event was handled, the TID is reused", (int)t->tid, t->comm);
        return -ESRCH;
    }
    t->start_time = fresh.start_time;
    t->start_pending = false;
    return 0;
}

int procscan_tgid_of(const char *root, pid_t tid, pid_t *tgid)
{
    char rel[64], path[PATH_MAX], buf[STATUS_BUF];
    snprintf(rel, sizeof(rel), "/proc/%d/status", (int)tid);
    int r = path_join(path, sizeof(path), root, rel);
    if (r < 0)
        return r;
    ssize_t n = read_file(path, buf, sizeof(buf));
    if (n < 0)
        return (int)n;
    const char *p = strstr(buf, "\nTgid:");
    if (!p)
        return -EBADMSG;
    unsigned long v;
    if (sscanf(p + 6, "%lu", &v) != 1 || v == 0 || v > INT32_MAX)
        return -EBADMSG;
    *tgid = (pid_t)v;
    return 0;
}

static bool parse_pid_name(const char *s, pid_t *ret)
{
    unsigned v;
    if (parse_uint(s, &v) < 0 || v == 0 || v > INT32_MAX)
        return false;
    *ret = (pid_t)v;
    return true;
}

/* The threads of PID (its task directory open as fd, which this closes):
 * fn for each; how many, or an error (fn's in *fn_err too). A process gone
 * while it is read has no more threads; one whose listing fails otherwise
 * returns the error after the threads it listed. */
static int walk_threads(int fd, pid_t pid, procscan_fn fn, void *userdata, int *fn_err)
{
    DIR *tasks = fdopendir(fd);
    if (!tasks) {
        int r = -errno;
        close(fd);
        return r;
    }
    int visited = 0, r = 0;
    struct dirent *te;
    for (errno = 0; (te = readdir(tasks)); errno = 0) {
        pid_t tid;
        if (!parse_pid_name(te->d_name, &tid))
            continue;
        visited++;
        if ((r = fn(pid, tid, userdata)) < 0) {
            *fn_err = r;
            break;
        }
    }
    if (r >= 0 && errno && !errno_is_gone(errno))
        r = -errno;
    closedir(tasks);
    return r < 0 ? r : visited;
}

/* Every thread of ROOT/proc. A process that exited since it was listed is
 * passed over, and so is one the daemon may not list: a failure the next
 * walk would meet again. Running out of file descriptors or memory fails
 * the walk, as it would leave live processes out: its callers take "not
 * seen" for "gone". The caller reports a failure; it may repeat at each tick. */
int procscan_all(const char *root, procscan_fn fn, void *userdata, unsigned *unlisted)
{
    char path[PATH_MAX];
    int r = path_join(path, sizeof(path), root, "/proc");
    if (r < 0)
        return r;
    DIR *proc = opendir(path);
    if (!proc)
        return -errno;
    int visited = 0, fn_err = 0;
    struct dirent *de;
    for (errno = 0; (de = readdir(proc)); errno = 0) {
        pid_t pid;
        if (!parse_pid_name(de->d_name, &pid))
            continue;
        char rel[64];
        snprintf(rel, sizeof(rel), "%d/task", (int)pid);
        int fd = openat(dirfd(proc), rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        r = fd < 0 ? -errno : walk_threads(fd, pid, fn, userdata, &fn_err);
        if (r < 0 && !fn_err && !errno_is_transient(r)) {
            /* exited since readdir, or not ours to list: not the walk's failure */
            if (!errno_is_gone(r)) {
                log_debug_errno(r, "%s/%d: listing its threads: %m; passed over", path, (int)pid);
                if (unlisted)
                    ++*unlisted;
            }
            r = 0;
            continue;
        }
        if (r < 0)
            break;
        visited += r;
    }
    if (r >= 0 && errno)
        r = -errno;
    if (r < 0 && !fn_err)
        log_debug_errno(r, "%s: walking it: %m; the walk is left unfinished", path);
    closedir(proc);
    return r < 0 ? r : visited;
}

/* Add a freshly read task and tell the daemon. */
static int add_new(struct task_table *tt, const struct task *proto, const struct procscan_hooks *h, struct task **ret)
{
    struct task *t;
    int r = task_table_add(tt, proto, &t);
    if (r < 0) {
        if (r == -ENOSPC)
            log_debug("tid %d: task table full (%u tasks), not tracking it", (int)proto->tid, task_table_max(tt));
        return r;
    }
    log_debug("tid %d (pid %d, %s): tracking", (int)t->tid, (int)t->pid, t->comm);
    if (ret)
        *ret = t;
    if (h && h->task_new)
        r = h->task_new(t, h->userdata);
    if (proto->flags & TASK_F_START_FRESH) {
        struct task *x = task_table_find(tt, proto->tid); /* the hook may have dropped it */
        if (x)
            x->flags &= ~TASK_F_START_FRESH;
    }
    return r;
}

/* A task whose stat this event's handling just read: new, hooks told. */
static int add_fresh(struct task_table *tt, struct task *proto, const struct procscan_hooks *h)
{
    proto->seen_gen = task_table_generation(tt);
    proto->flags |= TASK_F_START_FRESH;
    return add_new(tt, proto, h, NULL);
}

static void drop(struct task_table *tt, struct task *t, const struct procscan_hooks *h)
{
    pid_t tid = t->tid;
    if (h && h->task_gone)
        h->task_gone(t, h->userdata);
    task_table_remove(tt, tid);
}

/* Renames found by one rescan, counted per user (per thread group while the
 * uid is not known): each costs a full classification, and a rename flood
 * (prctl(PR_SET_NAME) in a loop keeps the socket overflowing, so the daemon
 * rescans every tick) must not make every rescan reclassify all of one
 * user's threads while everyone else's wait. */
#define RENAME_BUCKETS 64
struct rename_bucket {
    uint64_t key; /* uid, or 1 << 32 | pid */
    unsigned n;
};

struct reconcile_ctx {
    const char *root;
    struct task_table *tt;
    const struct procscan_hooks *h;
    struct procscan_stats *st;
    int first_error;
    struct rename_bucket renames[RENAME_BUCKETS];
    unsigned n_buckets;
};

/* May t's rename be handled in this rescan? Beyond the budget it waits for
 * the next one, with its old comm kept so that it is found again. Users
 * beyond RENAME_BUCKETS share the last bucket. */
static bool rename_allowed(struct reconcile_ctx *c, const struct task *t)
{
    uint64_t key = t->uid != TASK_UID_UNKNOWN ? (uint64_t)t->uid : (1ull << 32) | (uint32_t)t->pid;
    struct rename_bucket *b = NULL;
    for (unsigned i = 0; i < c->n_buckets && !b; i++)
        if (c->renames[i].key == key)
            b = &c->renames[i];
    if (!b) {
        if (c->n_buckets < RENAME_BUCKETS)
            c->renames[c->n_buckets] = (struct rename_bucket){.key = key};
        b = &c->renames[c->n_buckets < RENAME_BUCKETS ? c->n_buckets++ : RENAME_BUCKETS - 1];
    }
    return b->n++ < PROCSCAN_RENAMES_PER_USER;
}

static int reconcile_one(pid_t pid, pid_t tid, void *userdata)
{
    struct reconcile_ctx *c = userdata;
    struct task *t = task_table_find(c->tt, tid);
    struct task fresh = {0};

    int r = procscan_read_stat(c->root, pid, tid, &fresh);
    if (r < 0 && (errno_is_gone(r) || r == -EBADMSG))
        return 0; /* gone since readdir, a zombie, or no stat to read: not live */
    if (r < 0) {
        /* Live, but not read: out of file descriptors or memory (read at a
         * later walk), or not ours to read. A task we know stays as it is. */
        if (t)
            t->seen_gen = c->st->generation;
        if (errno_is_transient(r))
            c->st->unread++;
        else
            c->st->denied++;
        return 0;
    }
    c->st->seen++;
    /* A task never looked at since its fork event has no start time to
     * compare: events were lost, so its exit and a reuse of the TID may have
     * been too. The same thread group and a start no later than the fork
     * event count as the same task (a name proves nothing: a reused PID can
     * carry the same one); without the event's time, the same comm does (if
     * it was not, nothing was done to the old one: see procscan.h). Anything
     * else is replaced and classified afresh. */
    if (t && t->pid == pid &&
        (!t->start_pending               ? t->start_time == fresh.start_time
         : t->start_time /* fork time */ ? procscan_started_by_fork(fresh.start_time, t->start_time)
                                         : strcmp(t->comm, fresh.comm) == 0)) {
        t->start_time = fresh.start_time;
        t->start_pending = false;
        t->seen_gen = c->st->generation;
        /* Renamed since it was read (PR_SET_NAME right after fork, before
         * the daemon read it) and the comm event was lost: classified by a
         * name it no longer has until told. A hook's error is the hook's to
         * report; the walk goes on. */
        if (strcmp(t->comm, fresh.comm) != 0) {
            if (!rename_allowed(c, t)) {
                c->st->renames_deferred++;
                return 0;
            }
            memcpy(t->comm, fresh.comm, sizeof(t->comm));
            c->st->renamed++;
            if (c->h && c->h->task_changed)
                /* events were lost: an exec may be among them */
                (void)c->h->task_changed(t, PROCSCAN_EXEC, c->h->userdata);
        }
        return 0;
    }
    if (t) {
        /* Same TID, another task: we missed an exit and a fork. */
        log_debug("tid %d: reused (start time %" PRIu64 " -> %" PRIu64 ")", (int)tid, t->start_time, fresh.start_time);
        drop(c->tt, t, c->h);
        c->st->reused++;
    }
    r = uid_of(c->root, pid, tid, c->h, &fresh.uid);
    if (r < 0) {
        c->st->seen--;
        if (errno_is_transient(r))
            c->st->unread++; /* added at a later walk */
        return 0;
    }
    fresh.seen_gen = c->st->generation;
    r = add_new(c->tt, &fresh, c->h, NULL);
    if (r < 0 && !task_table_find(c->tt, tid)) {
        c->st->failed++;
        if (c->first_error == 0)
            c->first_error = r;
        return 0;
    }
    if (!t)
        c->st->added++;
    return 0;
}

/* Whether a task not seen by a walk that passed over processes may still
 * be live: not gone, and the same task if its start time can be read. */
static bool still_there(const char *root, const struct task *t)
{
    struct task fresh;
    int r = procscan_read_stat(root, t->pid, t->tid, &fresh);
    if (r < 0)
        return !errno_is_gone(r) && r != -EBADMSG;
    return t->start_pending ? procscan_started_by_fork(fresh.start_time, t->start_time)
                            : fresh.start_time == t->start_time;
}

int procscan_reconcile(const char *root, struct task_table *tt, const struct procscan_hooks *h,
                       struct procscan_stats *out)
{
    struct procscan_stats st = {0};
    uint64_t start_ns = now_ns();
    st.generation = task_table_new_generation(tt);
    struct reconcile_ctx c = {.root = root, .tt = tt, .h = h, .st = &st};

    unsigned unlisted = 0;
    int r = procscan_all(root, reconcile_one, &c, &unlisted);
    if (r < 0) {
        /* Without a full walk, "not seen" means nothing: remove nothing. */
        if (out)
            *out = st;
        return r;
    }
    st.denied += unlisted;
    size_t iter = 0;
    struct task *t;
    while ((t = task_table_next(tt, &iter))) {
        if (t->seen_gen == st.generation)
            continue;
        /* A process passed over is not gone: its threads are, when reading
         * them says so. */
        if (unlisted && still_there(root, t))
            continue;
        log_debug("tid %d (pid %d, %s): gone", (int)t->tid, (int)t->pid, t->comm);
        drop(tt, t, h);
        st.removed++;
    }
    st.duration_us = (now_ns() - start_ns) / 1000;
    log_debug("rescan %" PRIu32 ": %u threads live, %u added, %u reused, %u renamed (%u left for later), %u removed, "
              "%u failed, %u unread, %u denied, %" PRIu64 " us",
              st.generation, st.seen, st.added, st.reused, st.renamed, st.renames_deferred, st.removed, st.failed,
              st.unread, st.denied, st.duration_us);
    if (out)
        *out = st;
    return c.first_error;
}

void procscan_thread_budget_roll(struct procscan_thread_budget *b, uint64_t now_ms, uint64_t window_ms)
{
    if (b->since_ms && now_ms >= b->since_ms && now_ms - b->since_ms < window_ms)
        return;
    b->since_ms = now_ms;
    b->users.n_keys = 0;
}

bool procscan_user_take(struct procscan_user_counts *c, const struct task *t, unsigned max)
{
    uint64_t key = t->uid != TASK_UID_UNKNOWN ? (uint64_t)t->uid : (1ull << 32) | (uint32_t)t->pid;
    unsigned i = 0;
    while (i < c->n_keys && c->keys[i].key != key)
        i++;
    if (i == c->n_keys) {
        if (c->n_keys < PROCSCAN_USER_KEYS)
            c->keys[c->n_keys++].n = 0;
        i = c->n_keys - 1; /* beyond the table: the last one, shared */
        c->keys[i].key = key;
    }
    return c->keys[i].n++ < max;
}

/* Read a task we hear of for the first time and add it. */
static int track(const char *root, struct task_table *tt, pid_t tgid, pid_t tid, const struct procscan_hooks *h)
{
    struct task fresh;
    int r = read_task(root, tgid, tid, h, &fresh);
    if (r < 0)
        return errno_is_gone(r) ? 0 : r;
    return add_fresh(tt, &fresh, h);
}

static int changed(struct task *t, enum procscan_change what, const struct procscan_hooks *h)
{
    if (h && h->task_changed)
        return h->task_changed(t, what, h->userdata);
    return 0;
}

static int handle_fork(const char *root, struct task_table *tt, const struct procmon_event *ev,
                       const struct procscan_hooks *h)
{
    struct task *old = task_table_find(tt, ev->tid);
    if (old && old->start_pending) {
        /* Added by its own fork event and never looked at: a second fork
         * of the TID means the first task exited unseen. */
        drop(tt, old, h);
        old = NULL;
    }
    /* A new process is a copy of the thread that forked it (the event's
     * parent_tid, its real_parent), comm and credentials included: when
     * that thread is tracked, take both from it and leave the start time
     * for when the task is acted upon. Most such children exec or exit
     * before that, and one that exits costs a table insert and delete.
     * (Under CLONE_PARENT parent_tid is the forker's parent: the comm and
     * uid are then its, until the exec or comm event that usually follows.)
     * A new thread's comm is that of whichever thread created it, which the
     * event does not name: read it. */
    const struct task *creator = NULL;
    if (h && h->lazy_start && !old && ev->tid == ev->tgid)
        creator = task_table_find(tt, ev->fork.parent_tid);
    /* A new thread beyond its user's reads (procscan_thread_budget): its
     * process stands for its creator. */
    if (h && h->thread_reads && !old && ev->tid != ev->tgid) {
        creator = task_table_find(tt, ev->tgid);
        if (creator && procscan_user_take(&h->thread_reads->users, creator, PROCSCAN_THREAD_READS_PER_USER))
            creator = NULL;
        else if (creator)
            h->thread_reads->deferred++;
    }
    if (creator) {
        /* until it is read, start_time holds the fork event's time */
        struct task child = {.tid = ev->tid,
                             .pid = ev->tgid,
                             .uid = creator->uid,
                             .rule = -1,
                             .start_pending = true,
                             .start_time = ev->timestamp_ns,
                             .flags = creator->flags & TASK_F_KTHREAD};
        memcpy(child.comm, creator->comm, sizeof(child.comm));
        child.seen_gen = task_table_generation(tt);
        return add_new(tt, &child, h, NULL);
    }

    struct task fresh = {0};
    int r = procscan_read_stat(root, ev->tgid, ev->tid, &fresh);
    if (r < 0)
        return errno_is_gone(r) ? 0 : r; /* its exit event follows */
    /* Handled late (a flood of events): the child may have exited and its
     * TID gone to a task that started after the event; that one's own fork
     * event follows, and this one's exit must not find it in its place. */
    if (!procscan_started_by_fork(fresh.start_time, ev->timestamp_ns))
        return 0;

    if (old) {
        if (old->start_time == fresh.start_time && old->pid == fresh.pid)
            return 0; /* a rescan found it before its fork event came */
        drop(tt, old, h);
    }
    /* Credentials are copied from the creating thread. For a new thread the
     * event's "parent" is the real parent of the whole process, so take the
     * uid from its own thread group; for a new process from the forking
     * thread (wrong only under CLONE_PARENT, which rescans do not fix). */
    struct task *parent;
    if (ev->tid != ev->tgid)
        parent = task_table_find(tt, ev->tgid);
    else {
        parent = task_table_find(tt, ev->fork.parent_tid);
        if (!parent)
            parent = task_table_find(tt, ev->fork.parent_tgid);
    }
    if (parent) {
        fresh.uid = parent->uid;
    } else {
        r = uid_of(root, ev->tgid, ev->tid, h, &fresh.uid);
        if (r < 0)
            return errno_is_gone(r) ? 0 : r;
    }
    return add_fresh(tt, &fresh, h);
}

/* exec from a thread other than the leader: the kernel gives the execing
 * thread the leader's TID and kills every other thread; the execing thread's
 * old TID vanishes without an exit event. Drop every sibling still tracked. */
static void drop_siblings(struct task_table *tt, pid_t tgid, const struct procscan_hooks *h)
{
    size_t iter = 0;
    struct task *t;
    while ((t = task_table_next(tt, &iter)))
        if (t->pid == tgid && t->tid != tgid)
            drop(tt, t, h);
}

static int handle_exec(const char *root, struct task_table *tt, const struct procmon_event *ev,
                       const struct procscan_hooks *h)
{
    struct task *t = task_table_find(tt, ev->tid);
    if (!t) {
        if (ev->tid == ev->tgid)
            drop_siblings(tt, ev->tgid, h);
        return track(root, tt, ev->tgid, ev->tid, h);
    }
    /* comm changes at exec without a comm event; the uid may change too
     * (set-user-ID binaries) without a uid event. */
    struct task fresh;
    int r = read_task(root, ev->tgid, ev->tid, h, &fresh);
    if (r < 0) {
        if (errno_is_gone(r))
            return 0; /* exit event follows */
        return r;
    }
    if (t->start_pending && procscan_started_by_fork(fresh.start_time, t->start_time)) {
        /* Tracked since its fork event and no event lost since (or a rescan
         * would have read its start): the same task. */
        t->start_time = fresh.start_time;
        t->start_pending = false;
    } else if (t->start_pending || fresh.start_time != t->start_time) {
        drop(tt, t, h);
        return add_fresh(tt, &fresh, h);
    }
    memcpy(t->comm, fresh.comm, sizeof(t->comm));
    t->uid = fresh.uid;
    t->pid = fresh.pid;
    t->flags = (t->flags & ~TASK_F_KTHREAD) | (fresh.flags & TASK_F_KTHREAD); /* a usermode helper's exec */
    t->flags |= TASK_F_START_FRESH;
    r = changed(t, PROCSCAN_EXEC, h);
    if ((t = task_table_find(tt, ev->tid))) /* the hook may have dropped it */
        t->flags &= ~TASK_F_START_FRESH;
    return r;
}

int procscan_handle_event(const char *root, struct task_table *tt, const struct procmon_event *ev,
                          const struct procscan_hooks *h)
{
    struct task *t;

    if (ev->tid <= 0 || ev->tgid <= 0)
        return 0;
    switch (ev->kind) {
    case PROCMON_FORK:
        return handle_fork(root, tt, ev, h);
    case PROCMON_EXEC:
        return handle_exec(root, tt, ev, h);
    case PROCMON_COMM:
        t = task_table_find(tt, ev->tid);
        if (!t)
            return track(root, tt, ev->tgid, ev->tid, h);
        memcpy(t->comm, ev->comm.comm, sizeof(t->comm));
        return changed(t, PROCSCAN_COMM, h);
    case PROCMON_UID:
        t = task_table_find(tt, ev->tid);
        if (!t)
            return track(root, tt, ev->tgid, ev->tid, h);
        if (t->uid == (uid_t)ev->uid.euid)
            return 0;
        t->uid = (uid_t)ev->uid.euid;
        return changed(t, PROCSCAN_UID, h);
    case PROCMON_EXIT:
        t = task_table_find(tt, ev->tid);
        if (t) {
            log_debug("tid %d (pid %d, %s): exited", (int)t->tid, (int)t->pid, t->comm);
            drop(tt, t, h);
        }
        return 0;
    case PROCMON_ACK:
    case PROCMON_OTHER:
        break;
    }
    return 0;
}
