/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The thin syscall layer under the applier: every call that changes (or reads
 * back) what the applier changes goes through one of these function pointers,
 * so unit tests swap in a recorder and integration tests check the real effect.
 * No policy lives here. */
#pragma once
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

/* The scheduling attributes of a task as sched_getattr(2) reports them and
 * sched_setattr(2) takes them, without the utilisation clamps (not ours to
 * change). For SCHED_OTHER and SCHED_BATCH, runtime_ns is the EEVDF slice
 * (Linux 6.12 and later; older kernels report 0 and ignore it). */
struct sysops_sched_attr {
    uint32_t policy;
    uint64_t flags; /* SCHED_FLAG_*; only RESET_ON_FORK is written */
    int32_t nice;
    uint32_t priority; /* real-time priority */
    uint64_t runtime_ns;
    uint64_t deadline_ns;
    uint64_t period_ns;
};

/* All operations return 0 (or a length where said) on success, -errno on
 * failure. -ESRCH means the task is gone. */
struct sysops {
    void *userdata; /* passed back to every call; NULL for sysops_real */

    int (*getaffinity)(void *userdata, pid_t tid, cpu_set_t *ret);
    int (*setaffinity)(void *userdata, pid_t tid, const cpu_set_t *mask);
    /* Field 22 of /proc/TID/stat: guards a recorded TID against reuse. */
    int (*task_start_time)(void *userdata, pid_t tid, uint64_t *ret);
    /* /proc/sys/kernel/random/boot_id, without the newline. */
    int (*boot_id)(void *userdata, char *buf, size_t size);
    /* /sys/devices/system/cpu/online. The kernel reports a task's mask
     * intersected with it, while keeping the mask that was set. */
    int (*online_cpus)(void *userdata, cpu_set_t *ret);
    /* The threads of process pid (/proc/PID/task) and the child processes of
     * thread tid (/proc/TID/task/TID/children): up to max TIDs into buf.
     * Return how many there are (more than max when buf was too small). */
    int (*threads_of)(void *userdata, pid_t pid, pid_t *buf, size_t max);
    int (*children_of)(void *userdata, pid_t tid, pid_t *buf, size_t max);

    /* cgroup v1 cpuset hierarchy. Group paths are relative to its root and
     * start with "/" ("/" is the root itself). */
    int (*cpuset_task_path)(void *userdata, pid_t tid, char *buf, size_t size);
    /* Read a value ("cpuset.cpus", "cpuset.mems") without its newline. */
    int (*cpuset_read)(void *userdata, const char *group, const char *key, char *buf, size_t size);
    /* Create the group with both values set (a new cpuset is unusable until
     * cpuset.cpus and cpuset.mems are written); existing group: values rewritten. */
    int (*cpuset_create)(void *userdata, const char *group, const char *cpus, const char *mems);
    int (*cpuset_write)(void *userdata, const char *group, const char *key, const char *value);
    int (*cpuset_attach)(void *userdata, const char *group, pid_t tid);
    /* Remove the group; threads still in it move to its parent. */
    int (*cpuset_delete)(void *userdata, const char *group);

    /* systemd units: AllowedCPUs= as D-Bus "ay" (byte i bit j = CPU 8i+j);
     * an empty array means all CPUs. get returns the length. */
    int (*unit_get_allowed_cpus)(void *userdata, const char *unit, uint8_t *buf, size_t size);
    int (*unit_set_allowed_cpus)(void *userdata, const char *unit, const uint8_t *bits, size_t n_bytes);

    /* sched_getattr(2) / sched_setattr(2) of one thread (tid 0: the caller).
     * setattr leaves the utilisation clamps as they are. */
    int (*getattr)(void *userdata, pid_t tid, struct sysops_sched_attr *ret);
    int (*setattr)(void *userdata, pid_t tid, const struct sysops_sched_attr *attr);

    /* The mask the kernel keeps for tid, offline CPUs included
     * (Cpus_allowed_list: of /proc/TID/status). getaffinity reports it
     * intersected with the CPUs active at the moment: empty for a sleeping
     * thread whose every CPU went offline, and without a CPU that is on its
     * way down before /sys/devices/system/cpu/online says so. Originals are
     * recorded from this one, or one taken while a CPU was offline would
     * lose it for good. NULL: getaffinity stands in. */
    int (*getaffinity_full)(void *userdata, pid_t tid, cpu_set_t *ret);
    /* The parent process of tid's process (field 4 of /proc/TID/stat). NULL:
     * not known. */
    int (*parent_of)(void *userdata, pid_t tid, pid_t *ret);
};

/* The real system: sched_*affinity, /proc, libcgroup, the system bus. */
extern const struct sysops sysops_real;

/* Drop the system-bus connection sysops_real opened lazily (on stop). */
void sysops_real_close(void);

/* The D-Bus calls behind sysops_real's unit operations, on a given bus, so
 * tests can run them against a fake org.freedesktop.systemd1.
 * Reads org.freedesktop.systemd1.<Type>.AllowedCPUs of the unit (Type from the
 * unit suffix: Slice, Service, Scope, Socket, Mount, Swap); sets it through
 * Manager.SetUnitProperties(unit, runtime=true, [("AllowedCPUs", ay)]). */
int sysops_bus_get_allowed_cpus(sd_bus *bus, const char *unit, uint8_t *buf, size_t size);
int sysops_bus_set_allowed_cpus(sd_bus *bus, const char *unit, const uint8_t *bits, size_t n_bytes);

/* cpu_set_t <-> "ay" bitmask; returns the number of bytes used (trailing zero
 * bytes trimmed), -ENOSPC if buf is too small. */
int cpuset_to_bitmask(const cpu_set_t *set, uint8_t *buf, size_t size);
void cpuset_from_bitmask(const uint8_t *bits, size_t n_bytes, cpu_set_t *ret);
