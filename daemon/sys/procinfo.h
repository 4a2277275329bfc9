/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The match inputs of a task, read from <root>/proc/PID. Only the keys asked
 * for are read. A task that exited yields -ESRCH or -ENOENT, quietly. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "rules.h"

#define PROCINFO_JITTER_SLICE "turbosched-jitter.slice"

/* Besides the rule keys (1u << enum rule_key), callers may ask for: */
#define PROCINFO_WANT_SLICE (1u << 16) /* in_jitter_slice (needs the cgroup file) */

struct procinfo {
    struct match_input in; /* points into the buffers below; NULL = unknown */
    bool in_jitter_slice;  /* the system's turbosched-jitter.slice, at the top of the hierarchy */
    char comm[16];
    char exe[4096];
    char cmdline[4096]; /* truncated if longer */
    char cgroup[1024];
    char unit[256];
    char system_unit[256]; /* first .service or .scope component: the system manager's unit */
    char user[64];
};

/* Fill pi for thread tid of process pid (pid 0: tid's own process) under
 * proc_root (NULL or "/" = the real /proc). `keys` is a mask of
 * (1u << enum rule_key) plus PROCINFO_WANT_*; unasked fields stay NULL.
 *  comm    /proc/PID/task/TID/comm (per thread)
 *  exe     readlink /proc/PID/exe, " (deleted)" stripped; NULL for kernel threads
 *  cmdline /proc/PID/cmdline, NULs as spaces; "" for kernel threads
 *  cgroup  /proc/PID/cgroup: the first path other than "/" among the cgroup2
 *          line ("0::"), the v1 name=systemd line and the v1 cpuset line;
 *          "/" if all are the root
 *  unit    from the cgroup2 or name=systemd path: its last component that
 *          ends in .service or .scope; NULL if none. system_unit (filled
 *          with unit) is the first such component: for a user session's
 *          app, user@UID.service, the unit the system manager knows
 *  user    the effective uid's name (getpwuid_r), else the uid in decimal */
int procinfo_read(const char *proc_root, pid_t pid, pid_t tid, unsigned keys, struct procinfo *pi);

/* The name the `user` key matches for a uid: its passwd name, else the uid
 * in decimal. No /proc read: the caller knows the uid (struct task). */
void procinfo_user_name(uid_t uid, char *buf, size_t size);
/* User names are cached per uid; forget them (on reload). */
void procinfo_user_cache_flush(void);

/* Pure helpers on /proc/PID/cgroup contents and cgroup paths. */
/* The path used for the cgroup key (see above). -ENOENT if no usable line. */
int procinfo_cgroup_pick(const char *cgroup_file, char *buf, size_t size);
/* The systemd path (cgroup2 line unless it is "/", else name=systemd). */
int procinfo_cgroup_systemd(const char *cgroup_file, char *buf, size_t size);
/* Last (or first) *.service or *.scope component of a path; -ENOENT if none. */
int procinfo_unit_from_cgroup(const char *path, bool first, char *buf, size_t size);
/* The path is in the system's slice: /turbosched.slice/turbosched-jitter.slice
 * (where systemd puts it) or /turbosched-jitter.slice; the name deeper down
 * (a user's own manager) does not count. */
bool procinfo_path_in_jitter_slice(const char *path);
