/* SPDX-License-Identifier: GPL-2.0-or-later */
/* After start-up the daemon keeps only the capabilities its configuration
 * needs, also when it runs outside systemd (which would otherwise bound them). */
#pragma once
#include <stdbool.h>
#include <stdint.h>

struct config;

/* What the configuration at start needs beyond the working set
 * (CAP_SYS_NICE for affinity, CAP_NET_ADMIN for the proc connector). */
struct privilege_needs {
    /* cgroup mode is configured and a cgroup v1 cpuset hierarchy is mounted:
     * the daemon creates and removes its group below the hierarchy's root
     * directory, which is mode 0555 even for root (CAP_DAC_OVERRIDE). */
    bool cpuset_v1;
    /* Some rule matches on exe=: readlink(/proc/PID/exe) of another user's
     * process, or of a root process holding capabilities the daemon lacks,
     * is a ptrace access check (CAP_SYS_PTRACE). */
    bool exe_rules;
    /* Behaviour classification looks for request paths: the fd links and
     * syscall file of another user's process are ptrace access checks
     * (CAP_SYS_PTRACE), its fd directory is mode 0500 (CAP_DAC_READ_SEARCH). */
    bool request_paths;
};

/* True if cfg looks for request paths (behaviour and request_paths on). */
bool privileges_config_reads_sockets(const struct config *cfg);

/* True if some rule of cfg matches on exe=. */
bool privileges_config_reads_exe(const struct config *cfg);
/* The capabilities kept, as a bit mask of CAP_* numbers. */
uint64_t privileges_kept_mask(struct privilege_needs needs);
/* Drop every other capability from the effective, permitted and inheritable
 * sets, and from the bounding set where allowed (it takes CAP_SETPCAP, which
 * the shipped unit does not grant; its NoNewPrivileges= keeps an exec from
 * regaining more than the permitted set). Returns 0, or -errno (logged) if
 * the kernel refused. */
int privileges_drop_unneeded(struct privilege_needs needs);
/* True if cfg has exe= rules and CAP_SYS_PTRACE is no longer permitted (it
 * was given up at start, when no rule needed it). */
bool privileges_exe_rules_lack_ptrace(const struct config *cfg);
