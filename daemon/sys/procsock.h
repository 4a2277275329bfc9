/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the request-path test reads below a root directory: a process's
 * sockets (its /proc/PID/fd links, looked up in /proc/PID/net/{unix,tcp,
 * tcp6,udp,udp6}) and where a thread sleeps (/proc/PID/task/TID/syscall).
 * Reading another user's fd links and syscall file is a ptrace access check
 * (CAP_SYS_PTRACE), listing its fd directory a DAC one (CAP_DAC_READ_SEARCH).
 * Decides nothing: reqpath.c judges what is read. Does not log: a task's
 * files vanish with it. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "reqpath.h"

/* The sockets of one network namespace, sorted by inode; read again for
 * another namespace, when older than PROCSOCK_TABLE_MAX_AGE_MS, or when a
 * socket looked up is not in it and it is older than
 * PROCSOCK_TABLE_MIN_AGE_MS (the socket is newer than the table). On a
 * machine with 100,000 sockets a read takes tens of milliseconds: the
 * table is not read again for each process. */
struct procsock_table {
    struct reqpath_sock *v;
    size_t n, cap;
    uint64_t netns; /* inode of the namespace it was read in; 0 unknown */
    uint32_t read_ms;
    bool valid;
    unsigned ephemeral_low; /* ip_local_port_range's first port */
    uint64_t reads;         /* table reads, for metrics */
};
#define PROCSOCK_TABLE_MAX_AGE_MS 30000u
#define PROCSOCK_TABLE_MIN_AGE_MS 1000u
/* A process holding more sockets than this, or more descriptors than
 * PROCSOCK_MAX_FDS, is taken to serve: its scan stops there. */
#define PROCSOCK_MAX_SOCKETS 4096u
#define PROCSOCK_MAX_FDS 16384u

void procsock_table_free(struct procsock_table *t);

/* Does process pid serve anyone (reqpath_sock_serves on each socket it
 * holds)? 1 with why filled, 0 not, -ESRCH/-ENOENT gone, other -errno
 * (-EACCES: not ours to read). */
int procsock_serves(const char *root, pid_t pid, struct procsock_table *tab, uint32_t now_ms, char *why, size_t size);

/* Where thread tid of process pid is now. 0, or -errno. */
int procsock_sleep(const char *root, pid_t pid, pid_t tid, struct reqpath_syscall *ret);
