/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the applier changed, and the state file in /run that lets a daemon
 * restarted after a crash undo it. The file is text:
 *
 *   turbosched-state 2
 *   boot <boot id>
 *   task <tid> <pid> <start_time> <original cpulist> <set cpulist> [slice=<attrs>] <comm>
 *   cpuset <group path>
 *   member <tid> <pid> <start_time> <original cpuset path>     (of the cpuset above)
 *   unit <cpulist we set> <original cpulist, or "all"> <unit name>
 *   end <number of lines before this one> <FNV-1a 64 of those lines, hex>
 *   then blocks (version 2): task lines and an end line of their own,
 *   each a change appended after the file was written (state_append)
 *
 * slice=<attrs> (slice_saved_to_string) is there when we shortened the
 * thread's slice; files written before it existed have none. A comm (at most
 * 15 bytes) can never be mistaken for it: the shortest token is longer.
 *
 * A file without its end line (truncated), with a wrong checksum or line
 * count (corrupted), another version, or another boot id is ignored. */
#pragma once
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "slice.h"

#define STATE_VERSION 2

/* A thread whose affinity we set. */
struct applied_task {
    pid_t tid;
    pid_t pid;
    uint64_t start_time;      /* guards against TID reuse */
    cpu_set_t original;       /* read the first time we touched it; restored exactly */
    cpu_set_t set;            /* what we set; anything else now means someone else changed it */
    char comm[16];            /* for messages only */
    struct slice_saved slice; /* the jitter slice we gave it, if any (slice.applied) */
};

/* A thread we moved into a cpuset group, and where it was before. */
struct applied_member {
    pid_t tid;
    pid_t pid;
    uint64_t start_time;
    char *original_path; /* cpuset path relative to the hierarchy root */
};

enum applied_group_kind {
    GROUP_CPUSET_V1 = 0, /* a cgroup v1 cpuset group the daemon created (and removes) */
    GROUP_UNIT,          /* a systemd unit's AllowedCPUs= (cgroup v2) */
};

struct applied_group {
    enum applied_group_kind kind;
    char *name;    /* cpuset group path, or unit name */
    cpu_set_t set; /* the CPUs we wrote */
    /* GROUP_UNIT: AllowedCPUs= before us; original_all = it was empty (all CPUs). */
    bool original_all;
    cpu_set_t original;
    /* GROUP_UNIT: our last write timed out, so systemd may or may not have
     * applied it (it can, after the call gave up): read it back before
     * trusting or repeating it. Not in the state file: recovery compares the
     * unit's value with set anyway. */
    bool unconfirmed;
    /* GROUP_CPUSET_V1: the threads we moved in. */
    struct applied_member *members;
    size_t n_members;
};

struct state {
    char boot_id[40];
    struct applied_task *tasks;
    size_t n_tasks;
    struct applied_group *groups;
    size_t n_groups;
};

/* Write atomically (temporary file in the same directory, then rename). An
 * empty state removes the file instead. Creates the parent directory.
 * keep_fd (NULL: none): the written file's fd, open at its end, for
 * state_append; -1 when no file was left. */
int state_write(const char *path, const struct state *s, int *keep_fd);
/* Append a block: the task lines of tasks[0..n) and an end line for them
 * alone, in one write. A reader takes a block's task line over an earlier
 * one of the same TID, and leaves out a block cut off or damaged (and any
 * after it). So a change costs its own lines, not the whole file again. */
int state_append(int fd, const struct applied_task *const *tasks, size_t n);

/* Read and validate. Returns 0 and fills *ret; -ENOENT when there is no file;
 * for a file that must be ignored, logs a message naming the file and the
 * reason and returns -EBADMSG (truncated or corrupted), -EPROTONOSUPPORT
 * (another version) or -ESTALE (written during another boot). */
int state_read(const char *path, const char *boot_id, struct state *ret);
/* The state file opened for reading with the checks state_read makes (its
 * directory, no symbolic link, a regular file of root or the daemon's user
 * that no one else may write): for any other reader of it, such as the
 * salvage of a damaged file, so that nothing swapped in since the checked
 * read is believed. NULL with -errno in *err (-ENOENT quietly; the rest
 * logged, naming the file). */
FILE *state_open_trusted(const char *path, int *err);
/* Also refused, with -ELOOP or -EPERM and a message: a symlink, anything but
 * a regular file, a file owned by another uid than root or the daemon's, or
 * writable by group or others, a directory so (unless sticky). A cpuset
 * path that is not absolute or has an empty, "." or ".." component, or a
 * unit name systemd would not accept, makes the file corrupted (-EBADMSG). */
bool state_cgroup_path_valid(const char *path, bool allow_root);
bool state_unit_name_valid(const char *name);

/* The rest of a task line after the set cpulist: an optional slice=<attrs>
 * token, then the comm. 0, or -EBADMSG for a malformed token. */
int state_task_tail(const char *text, struct applied_task *t);

void state_free(struct state *s);
void applied_group_free_members(struct applied_group *g);
