/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reading tasks from /proc (or a fixture tree in its place): one task, a full
 * walk, reconciling the task table with what is live, and applying proc
 * connector events to the table.
 *
 * root is a filesystem root as for the other readers: files are read under
 * ROOT/proc; NULL or "/" means the real system. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "procmon.h"
#include "task.h"

/* Fill tid, pid, start_time, comm and uid (effective) of one thread from
 * ROOT/proc/PID/task/TID/stat and status; other fields are zeroed, rule = -1.
 * -ESRCH/-ENOENT (quietly) when it is gone; a zombie (state Z or X) counts as
 * gone (-ESRCH): its exit event has been sent already. -EBADMSG when
 * unparsable. */
int procscan_read_task(const char *root, pid_t pid, pid_t tid, struct task *out);
/* Same from stat alone (uid left alone): the cheap path when the uid is known. */
int procscan_read_stat(const char *root, pid_t pid, pid_t tid, struct task *out);
/* The start time is the guard against TID reuse, and it is read lazily.
 * Invariant: a task with start_pending set was added from its own fork event
 * (a new process whose forking thread is tracked, or a new thread beyond
 * its user's reads: procscan_thread_budget) and nothing has been done
 * to it since: no affinity set, no cgroup move, no record in the applier or
 * the pins. Until an event is lost its TID still names that task, because
 * the kernel queues a task's exit event before its TID can be freed, so a
 * reuse always arrives as exit, then fork. Whatever acts on a TID
 * (setaffinity, cgroup attach, adopting an inherited mask, pinning) calls
 * procscan_ensure_start() first; exec reads it with the new comm; after lost
 * events the rescan reads every live task's start time anyway, and replaces a
 * pending task whose thread group no longer matches or which started after
 * its fork event (see procscan_started_by_fork).
 * Returns 0 (t->start_time valid), or -ESRCH/-ENOENT when the task is gone
 * (or the TID names a task that started after the fork event: ours exited). */
int procscan_ensure_start(const char *root, struct task *t);
/* While start_pending is set, start_time holds the timestamp of the task's
 * fork event (the proc connector's, CLOCK_MONOTONIC ns; 0: unknown), so
 * that the read can tell the task from a later one under its TID: the
 * start time is read when the task is acted upon, maybe long after the
 * event under a flood, and a PID reused by then names a task that started
 * after the event. True when a task that started at start_ticks (field 22
 * of stat) may be the one the event announced, or fork_ns is 0. */
#define PROCSCAN_FORK_SLACK_NS (20 * 1000000ull) /* a tick's rounding, with room */
bool procscan_started_by_fork(uint64_t start_ticks, uint64_t fork_ns);
/* Thread group of a TID, from ROOT/proc/TID/status "Tgid:". */
int procscan_tgid_of(const char *root, pid_t tid, pid_t *tgid);

/* Pure: parse the content of a stat file. comm may contain spaces and ')':
 * it ends at the last ')'. Fills tid, comm, start_time and *state (R, S, Z...). */
int procscan_parse_stat(const char *buf, struct task *out, char *state);
/* Pure: the effective uid from the content of a status file. */
int procscan_parse_status_uid(const char *buf, uid_t *euid);

/* Walk ROOT/proc/[0-9]*\/task/[0-9]* calling fn(pid, tid). A negative return from
 * fn stops the walk and is returned. Processes that vanish mid-walk are
 * skipped, and so are those the daemon may not list (hidepid, a security
 * module), counted in *unlisted (may be NULL); running out of fds or memory
 * (errno_is_transient) stops the walk with its -errno. Returns the number
 * of threads visited. */
typedef int (*procscan_fn)(pid_t pid, pid_t tid, void *userdata);
int procscan_all(const char *root, procscan_fn fn, void *userdata, unsigned *unlisted);

/* What task_changed reports: an exec (a new program: exe, cmdline and the
 * rest of the process may differ), or a new comm or euid of one thread
 * (nothing else about its process changed). */
enum procscan_change { PROCSCAN_EXEC, PROCSCAN_COMM, PROCSCAN_UID };

/* New threads read at once, per user (per thread group while the uid is
 * not known) and per window (the daemon's: a tick). A thread's fork event
 * does not name the thread that created it, so its comm is read from its
 * stat: one open and read of /proc at realtime priority per thread, and a
 * user who starts 20,000 light threads made 20,000 of them in 2-3 s while
 * other users' tasks waited. Beyond PROCSCAN_THREAD_READS_PER_USER a new
 * thread of a tracked process is added from its event alone, as a new
 * process with a tracked creator is (lazy_start): its process's comm and
 * uid, its start time pending until something acts on it; a rename, an
 * exec or a rescan gives it its own comm. Users beyond
 * PROCSCAN_USER_KEYS in a window share one count. */
#define PROCSCAN_THREAD_READS_PER_USER 32u
/* Counts per user (per thread group where the uid is not known), for a
 * per-user cap; users beyond PROCSCAN_USER_KEYS share the last count. */
#define PROCSCAN_USER_KEYS 16u
struct procscan_user_counts {
    struct {
        uint64_t key; /* uid, or 1 << 32 | pid */
        unsigned n;
    } keys[PROCSCAN_USER_KEYS];
    unsigned n_keys;
};
/* Pure: count one more for t's user; whether that is within max. */
bool procscan_user_take(struct procscan_user_counts *c, const struct task *t, unsigned max);
struct procscan_thread_budget {
    uint64_t since_ms; /* the window's start */
    struct procscan_user_counts users;
    uint64_t deferred; /* new threads added unread, in all */
};
/* Start a new window when window_ms have passed since this one began. */
void procscan_thread_budget_roll(struct procscan_thread_budget *b, uint64_t now_ms, uint64_t window_ms);

/* What the daemon does when the table changes. All optional (NULL).
 * task_new: the task was just added (classify it); its return value is
 *   passed back to the caller of procscan_handle_event, the task stays.
 * task_changed: exec, comm or uid changed (classify again).
 * task_gone: called before the task is removed (forget applied state). */
struct procscan_hooks {
    int (*task_new)(struct task *t, void *userdata);
    int (*task_changed)(struct task *t, enum procscan_change what, void *userdata);
    void (*task_gone)(struct task *t, void *userdata);
    void *userdata;
    /* Fork of a process whose forking thread is tracked: take its comm and
     * uid and leave the start time pending (procscan_ensure_start) instead
     * of reading the child's stat. The daemon sets it; callers that want
     * every task read at once (tools, the tests of that path) do not. */
    bool lazy_start;
    /* Leave the uid TASK_UID_UNKNOWN where it would read the task's status
     * (exec, rescan, a fork whose creator is not tracked): the status read
     * is half the cost of an exec event, and only user rules need the uid.
     * Uid events and a tracked creator still set it. */
    bool lazy_uid;
    /* The reads of new threads, per user (NULL: every new thread is read). */
    struct procscan_thread_budget *thread_reads;
};

struct procscan_stats {
    uint32_t generation;       /* the table's rescan generation used */
    unsigned seen;             /* threads found in /proc */
    unsigned added;            /* not tracked before */
    unsigned reused;           /* tracked TID with another start time: old gone, new added */
    unsigned removed;          /* tracked but not live any more */
    unsigned renamed;          /* tracked, but its comm changed unseen (task_changed) */
    unsigned renames_deferred; /* renamed, beyond its user's budget: left for the next rescan */
    unsigned failed;           /* could not be added (table full, unreadable) */
    unsigned unread;           /* live, but their stat or status could not be read for now (out of fds or memory):
                               kept as they were, the walk wants repeating */
    unsigned denied;           /* live, but not ours to read (hidepid, a security module) or a process not ours
                               to list: kept as they were, not tried again */
    uint64_t duration_us;
};

/* A rescan reclassifies at most this many renamed threads of one user (of
 * one thread group while the uid is not known); the others keep their old
 * comm until a later rescan, so that a rename flood from one user costs a
 * bounded amount of work per rescan and others' tasks are placed meanwhile.
 * New tasks are not counted. */
#define PROCSCAN_RENAMES_PER_USER 128
/* Full scan with a new generation: add what is missing (task_new), replace
 * reused TIDs (task_gone, then task_new), take the comm of a task renamed
 * since it was read (task_changed), remove what was not seen
 * (task_gone, then removal). Hooks must not add or remove tasks themselves.
 * Returns 0 or -errno (the table is then still consistent, maybe incomplete). */
int procscan_reconcile(const char *root, struct task_table *tt, const struct procscan_hooks *h,
                       struct procscan_stats *out);

/* Apply one proc connector event to the table, without a rescan: fork adds
 * the child (one read of its stat, uid from the parent when tracked; with
 * h->lazy_start, a new process whose forking thread is tracked takes its comm
 * and uid and no read), exec
 * re-reads comm, comm takes the event's comm, uid takes the euid (all three
 * then call task_changed), exit calls task_gone and removes. Returns 0, or
 * the hook's / the reader's -errno (-ENOSPC when the table is full; a task
 * gone before it could be read is not an error). */
int procscan_handle_event(const char *root, struct task_table *tt, const struct procmon_event *ev,
                          const struct procscan_hooks *h);
