/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The state file (what we changed, written so a crash strands nothing)
 * and recovery from the file a crashed daemon left. See apply.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apply-internal.h"
#include "log.h"

static int boot_id_get(struct applier *a)
{
    if (a->boot_id[0])
        return 0;
    int r = a->ops->boot_id(a->ops->userdata, a->boot_id, sizeof a->boot_id);
    if (r < 0)
        a->boot_id[0] = '\0';
    return r;
}

void mark_task_changed(struct applier *a, pid_t tid)
{
    a->dirty = true;
    a->unsaved = true;
    if (a->n_pending && a->pending[a->n_pending - 1] == tid)
        return; /* the same record again (its mask, then its slice) */
    if (a->n_pending == a->cap_pending) {
        size_t cap = a->cap_pending ? 2 * a->cap_pending : 64;
        pid_t *p = reallocarray(a->pending, cap, sizeof *p);
        if (!p) {
            a->rewrite = true; /* the whole file, then */
            return;
        }
        a->pending = p;
        a->cap_pending = cap;
    }
    a->pending[a->n_pending++] = tid;
}

static int write_whole(struct applier *a)
{
    int r = boot_id_get(a);
    int fd = -1;
    if (r >= 0) {
        struct state s = {
            .tasks = (struct applied_task *)a->tasks.items,
            .n_tasks = a->tasks.n,
            .groups = a->groups,
            .n_groups = a->n_groups,
        };
        snprintf(s.boot_id, sizeof s.boot_id, "%s", a->boot_id);
        r = state_write(a->state_file, &s, &fd);
    }
    if (r < 0)
        return r;
    if (a->state_fd >= 0)
        close(a->state_fd);
    a->state_fd = fd;
    a->journal_lines = 0;
    a->rewrite = a->removed = false;
    a->dirty = false;
    return 0;
}

/* Whether the file written last is still the one at the path: deleted or
 * replaced since (by hand, or a package's cleanup), a block appended to it
 * would be written where no recovery reads it. */
static bool still_linked(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 && st.st_nlink > 0;
}

/* The records changed since the file was written, as one block after it:
 * while they are few beside the file (else it is written whole again). */
#define JOURNAL_MIN_LINES 1024
static bool can_append(const struct applier *a)
{
    size_t limit = a->tasks.n > JOURNAL_MIN_LINES / 2 ? 2 * a->tasks.n : JOURNAL_MIN_LINES;
    return a->state_fd >= 0 && a->journal_lines + a->n_pending <= limit && still_linked(a->state_fd);
}

static int append_changes(struct applier *a)
{
    _cleanup_free_ const struct applied_task **recs = calloc(a->n_pending, sizeof *recs);
    if (!recs)
        return -ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < a->n_pending; i++) {
        const struct applied_task *t = tidmap_find(&a->tasks, a->pending[i]);
        if (t)
            recs[n++] = t; /* a record gone since: removed is set */
    }
    int r = n ? state_append(a->state_fd, recs, n) : 0;
    if (r < 0) {
        close(a->state_fd); /* the file may hold part of it: written whole next */
        a->state_fd = -1;
        a->rewrite = true;
        return r;
    }
    a->journal_lines += n;
    a->dirty = a->removed;
    return 0;
}

/* Write what changed: a block appended when that says it all (early, the
 * removals may wait for the tick), else the whole file. */
static int flush(struct applier *a, bool early, uint64_t now)
{
    if (!a->state_file || a->dry_run || !a->dirty)
        return 0;
    bool append = a->unsaved && !a->rewrite && can_append(a) && (early || !a->removed);
    int r = append ? append_changes(a) : write_whole(a);
    if (r < 0) {
        /* kept dirty: the next flush tries again */
        if (!a->state_warned)
            log_warning_errno(r, "state file %s: writing it: %m; changes would not be undone after a crash",
                              a->state_file);
        a->state_warned = true;
        return r;
    }
    if (a->state_warned)
        log_info("state file %s: written again", a->state_file);
    a->state_warned = false;
    a->unsaved = false;
    a->unsaved_ms = 0;
    a->n_pending = 0;
    a->written_ms = now;
    return 0;
}

int applier_flush_state(struct applier *a) { return flush(a, false, now_ms()); }

int64_t applier_changes_due_ms(const struct applier *a, uint64_t now)
{
    if (!a->unsaved || !a->state_file || a->dry_run)
        return -1;
    if (now >= a->written_ms + STATE_EARLY_WRITE_MS)
        return 0;
    /* Not yet: by STATE_EARLY_WRITE_MS after the change, not after the
     * last write. At a steady exec rate an exec comes before then and
     * writes it, and no timer wakes the daemon for it (at 74 execs a
     * second, before: 14 timer wake-ups a second, one per write). */
    uint64_t since = MAX(a->unsaved_ms ? a->unsaved_ms : now, a->written_ms);
    return (int64_t)(since + STATE_EARLY_WRITE_MS - now);
}

int applier_flush_changes(struct applier *a, uint64_t now)
{
    if (a->unsaved && !a->unsaved_ms)
        a->unsaved_ms = now;
    return applier_changes_due_ms(a, now) == 0 ? flush(a, true, now) : 0;
}

/* Give tid the original mask of a change a previous run made, if its mask is
 * still the one that run set. */
static bool recover_mask(struct applier *a, pid_t tid, const char *comm, const cpu_set_t *set,
                         const cpu_set_t *original)
{
    cpu_set_t now;
    if (apply_get_full(a, tid, &now) < 0)
        return false;
    if (!apply_mask_matches(a, &now, set)) {
        log_info("pid %d (%s): affinity is %s, not the %s a previous run set, leaving it", (int)tid, comm,
                 apply_fmt_set(&now), apply_fmt_set(set));
        return false;
    }
    if (a->dry_run) {
        log_info("would restore pid %d (%s) affinity %s -> %s", (int)tid, comm, apply_fmt_set(set),
                 apply_fmt_set(original));
        return true;
    }
    int r = a->ops->setaffinity(a->ops->userdata, tid, original);
    if (r < 0) {
        if (!errno_is_gone(r))
            log_warning_errno(r, "pid %d (%s): restoring affinity %s: %m", (int)tid, comm, apply_fmt_set(original));
        return false;
    }
    log_debug("pid %d (%s): affinity %s -> %s (left by a previous run)", (int)tid, comm, apply_fmt_set(set),
              apply_fmt_set(original));
    return true;
}

static bool recover_task(struct applier *a, const struct applied_task *t)
{
    uint64_t start_time;
    if (a->ops->task_start_time(a->ops->userdata, t->tid, &start_time) < 0 || start_time != t->start_time)
        return false; /* exited, or the TID names another task now */
    /* The slice is judged on its own: attributes still as that run set
     * them are its change even where someone else has moved the mask. */
    bool sliced = apply_slice_undo(a, t->tid, t);
    return recover_mask(a, t->tid, t->comm, &t->set, &t->original) || sliced;
}

/* Threads and processes created while no daemon ran inherited the mask a
 * previous run had set on their creator. They are in no state file, yet the
 * mask is ours: walk the threads of each recorded task's process and, from
 * every thread, its child processes (and theirs), and give each one that
 * still carries the creator's set mask the creator's original. A task whose
 * mask is something else was changed by someone else: neither it nor what
 * it created since is touched. At most RECOVER_MAX tasks are visited. */
#define RECOVER_MAX 65536
#define RECOVER_BATCH 4096

struct recover_walk {
    struct applier *a;
    const struct state *s;
    struct pidmap seen; /* a set: no values */
    struct {
        pid_t tid, pid;
        size_t rec;
    } * queue;
    size_t head, n, cap;
    int restored;
    bool truncated;
};

static void walk_push(struct recover_walk *w, pid_t tid, pid_t pid, size_t rec)
{
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 256;
        void *q = cap <= RECOVER_MAX ? reallocarray(w->queue, cap, sizeof *w->queue) : NULL;
        if (!q) {
            w->truncated = true;
            return;
        }
        w->queue = q;
        w->cap = cap;
    }
    w->queue[w->n].tid = tid;
    w->queue[w->n].pid = pid;
    w->queue[w->n].rec = rec;
    w->n++;
}

/* A task found in the walk: not seen before and not in the file itself. */
static void walk_visit(struct recover_walk *w, pid_t tid, pid_t pid, size_t rec)
{
    if (pidmap_find(&w->seen, tid) || tid <= 0)
        return;
    if (pidmap_count(&w->seen) >= RECOVER_MAX || pidmap_insert(&w->seen, tid, NULL) < 0) {
        w->truncated = true;
        return;
    }
    const struct applied_task *t = &w->s->tasks[rec];
    if (recover_mask(w->a, tid, t->comm, &t->set, &t->original)) {
        /* it inherited the creator's slice with its mask (fork copies both) */
        (void)apply_slice_undo(w->a, tid, t);
        w->restored++;
        walk_push(w, tid, pid, rec);
    }
}

static int recover_offspring(struct applier *a, const struct state *s)
{
    if (!a->ops->threads_of || !a->ops->children_of)
        return 0;
    struct recover_walk w = {.a = a, .s = s};
    pidmap_init(&w.seen, 0, 1);
    pid_t *buf = malloc(RECOVER_BATCH * sizeof *buf);
    if (!buf)
        return -ENOMEM;
    for (size_t i = 0; i < s->n_tasks; i++)
        if (pidmap_insert(&w.seen, s->tasks[i].tid, NULL) == -ENOMEM)
            w.truncated = true;
    for (size_t i = 0; i < s->n_tasks; i++) {
        uint64_t start_time;
        const struct applied_task *t = &s->tasks[i];
        if (a->ops->task_start_time(a->ops->userdata, t->tid, &start_time) == 0 && start_time == t->start_time)
            walk_push(&w, t->tid, t->pid, i);
    }
    while (w.head < w.n) {
        pid_t tid = w.queue[w.head].tid, pid = w.queue[w.head].pid;
        size_t rec = w.queue[w.head].rec;
        w.head++;
        int k = a->ops->threads_of(a->ops->userdata, pid, buf, RECOVER_BATCH);
        w.truncated |= k > RECOVER_BATCH;
        for (int j = 0; j < k && j < RECOVER_BATCH; j++)
            walk_visit(&w, buf[j], pid, rec);
        k = a->ops->children_of(a->ops->userdata, tid, buf, RECOVER_BATCH);
        w.truncated |= k > RECOVER_BATCH;
        for (int j = 0; j < k && j < RECOVER_BATCH; j++)
            walk_visit(&w, buf[j], buf[j], rec); /* a child process: its TID is its PID */
    }
    if (w.truncated)
        log_warning("state file %s: too many tasks created while no daemon ran; some may keep a mask a previous "
                    "run set",
                    a->state_file);
    if (w.restored)
        log_info("state file %s: %d tasks created while no daemon ran carried a mask a previous run set; "
                 "restored",
                 a->state_file, w.restored);
    free(buf);
    free(w.queue);
    pidmap_done(&w.seen);
    return w.restored;
}

/* What can be saved from a state file cut short (no end line, so no
 * checksum to hold its lines against): the task lines before the cut, one
 * by one. None is believed on its own word: a line counts only when it
 * names a live task of this boot with its exact start time whose mask is
 * still exactly the one the line says we set, strictly within the original
 * the line gives (a line cut inside a field fails one of these); it then
 * gets its original back, as from a sound file. A file whose lines do not
 * match their end line was altered, and nothing in it is believed. Either
 * way the tasks a previous run confined that are not restored may keep
 * their masks: that is said, here and for each task later packed with a
 * narrowed mask taken for its own (pack_task). */
#define SALVAGE_MAX_TASKS 65536
static int recover_salvage(struct applier *a)
{
    a->state_untrusted = true;
    /* Opened again with the checks of the first read: by its name alone,
     * the file read now could be one another user swapped in since (a
     * link to lines that "restore" a pinned task to a wider mask). */
    int err = 0;
    _cleanup_fclose_ FILE *f = state_open_trusted(a->state_file, &err);
    if (!f) {
        log_warning_errno(err,
                          "state file %s: damaged and unreadable (%m): tasks a previous run confined may "
                          "keep their masks",
                          a->state_file);
        return 0;
    }
    char line[512 + CPULIST_MAX * 2];
    bool same_boot = false, altered = false;
    struct applied_task *cand = NULL;
    size_t n = 0, cap = 0;
    int r = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char boot[64];
        if (strncmp(line, "end ", 4) == 0) {
            altered = true; /* whole, yet its checksum or count is wrong */
            break;
        }
        if (sscanf(line, "boot %63s", boot) == 1) {
            same_boot = strcmp(boot, a->boot_id) == 0;
            continue;
        }
        struct applied_task t = {0};
        int tid, pid, comm_at = 0;
        unsigned long long start;
        char orig[CPULIST_MAX], set[CPULIST_MAX];
        _Static_assert(CPULIST_MAX == 8192, "the scanf widths below follow CPULIST_MAX");
        if (!same_boot || n >= SALVAGE_MAX_TASKS ||
            sscanf(line, "task %d %d %llu %8191s %8191s %n", &tid, &pid, &start, orig, set, &comm_at) < 5 || tid <= 0 ||
            pid <= 0 || cpulist_parse(orig, &t.original) < 0 || cpulist_parse(set, &t.set) < 0 ||
            CPU_COUNT(&t.set) == 0 || CPU_EQUAL(&t.set, &t.original) || !subset_of(&t.set, &t.original))
            continue;
        t.tid = tid;
        t.pid = pid;
        t.start_time = start;
        if (state_task_tail(comm_at > 0 ? line + comm_at : "?", &t) < 0)
            continue;
        if (n == cap) {
            size_t c = cap ? cap * 2 : 64;
            struct applied_task *m = reallocarray(cand, c, sizeof *m);
            if (!m) {
                r = -ENOMEM;
                break;
            }
            cand = m;
            cap = c;
        }
        cand[n++] = t;
    }
    int restored = 0;
    if (altered || r < 0)
        log_warning("state file %s: damaged, nothing in it restored: tasks a previous run confined may keep their "
                    "masks",
                    a->state_file);
    else {
        for (size_t i = 0; i < n; i++)
            restored += recover_task(a, &cand[i]);
        log_warning("state file %s: cut short; of its %zu task lines, %d still matched their live task exactly and "
                    "got their original back; other tasks a previous run confined may keep their masks",
                    a->state_file, n, restored);
    }
    free(cand);
    return r < 0 ? r : restored;
}

/* Once read: left there, a bad file would be read again at the next start. */
static void remove_state_file(struct applier *a)
{
    if (!a->dry_run && unlink(a->state_file) < 0 && errno != ENOENT)
        log_warning_errno(-errno, "state file %s: removing it: %m", a->state_file);
}

int applier_recover(struct applier *a)
{
    if (!a->state_file)
        return 0;
    int r = boot_id_get(a);
    if (r < 0) {
        log_warning_errno(r, "state file %s: reading the boot id: %m, not recovering", a->state_file);
        return r;
    }
    struct state s;
    r = state_read(a->state_file, a->boot_id, &s);
    if (r == -ENOENT)
        return 0;
    if (r == -EBADMSG) {
        /* Damaged (state_read said how): the tasks a previous run of this
         * boot confined would otherwise be packed again with their confined
         * mask taken for their own, for good. */
        r = recover_salvage(a);
        remove_state_file(a);
        return r;
    }
    if (r < 0) {
        /* state_read said why; a bad file would only confuse the next start */
        remove_state_file(a);
        return r == -ENOMEM ? r : 0;
    }

    /* Restoring (rather than adopting) is simpler and safe: the task is
     * repacked at the next tick if it still is jitter. */
    int restored = 0;
    for (size_t i = 0; i < s.n_tasks; i++)
        restored += recover_task(a, &s.tasks[i]);
    r = recover_offspring(a, &s);
    if (r < 0) /* the groups are still undone and the file removed */
        log_error_errno(r,
                        "state file %s: following the new processes and threads of its tasks: %m; those "
                        "started while no daemon ran may keep the masks they inherited",
                        a->state_file);
    else
        restored += r;
    for (size_t i = 0; i < s.n_groups; i++) {
        int k = s.groups[i].kind == GROUP_CPUSET_V1 ? apply_cpuset_undo(a, &s.groups[i], true)
                                                    : apply_unit_undo(a, &s.groups[i]);
        restored += k > 0;
    }
    log_info("state file %s: undid %d of %zu changes left by a previous run", a->state_file, restored,
             s.n_tasks + s.n_groups);
    state_free(&s);
    remove_state_file(a);
    return restored;
}
