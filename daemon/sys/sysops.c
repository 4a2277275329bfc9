/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "sysops.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <libcgroup.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "sched-attr.h"
#include "util.h"

/* --- affinity and /proc ------------------------------------------------------ */

static int real_getaffinity(void *userdata, pid_t tid, cpu_set_t *ret)
{
    /* glibc zeroes the part of the set beyond the kernel's nr_cpu_ids, so
     * whole sets compare with CPU_EQUAL. */
    if (sched_getaffinity(tid, sizeof(*ret), ret) < 0)
        return -errno;
    return 0;
}

static int real_setaffinity(void *userdata, pid_t tid, const cpu_set_t *mask)
{
    if (sched_setaffinity(tid, sizeof(*mask), mask) < 0)
        return -errno;
    return 0;
}

/* /proc/TID/<name> into buf; a task that is gone is -ESRCH, as for the
 * syscalls beside it. */
static ssize_t read_task_file(pid_t tid, const char *name, char *buf, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", (int)tid, name);
    ssize_t n = read_proc_file(path, buf, size);
    return n == -ENOENT ? -ESRCH : n;
}

static int real_task_start_time(void *userdata, pid_t tid, uint64_t *ret)
{
    char buf[1024];
    ssize_t n = read_task_file(tid, "stat", buf, sizeof buf);
    if (n < 0)
        return (int)n;
    return procstat_u64(buf, 22, ret); /* starttime */
}

/* Every possible CPU, read once (it does not change while the system runs):
 * no mask holds any other. NULL when it cannot be read. */
static const cpu_set_t *possible_cpus(void)
{
    static cpu_set_t set;
    static int state; /* 0: not read yet, 1: read, -1: unreadable */
    if (state == 0) {
        char buf[1024];
        state = -1;
        if (read_file("/sys/devices/system/cpu/possible", buf, sizeof buf) > 0) {
            buf[strcspn(buf, "\n")] = '\0';
            if (cpulist_parse(buf, &set) == 0)
                state = 1;
        }
    }
    return state > 0 ? &set : NULL;
}

static int real_getaffinity_full(void *userdata, pid_t tid, cpu_set_t *ret)
{
    /* sched_getaffinity leaves out the CPUs not active; when it reports
     * every possible CPU, it left out nothing. One system call then, where
     * the status file costs four, and a read that waits while the task's
     * process is in an exec. */
    const cpu_set_t *possible = possible_cpus();
    if (possible && sched_getaffinity(tid, sizeof *ret, ret) == 0 && CPU_EQUAL(ret, possible))
        return 0;
    char buf[4096];
    ssize_t n = read_task_file(tid, "status", buf, sizeof buf);
    if (n < 0)
        return (int)n;
    char *p = strstr(buf, "\nCpus_allowed_list:");
    if (!p)
        return -EBADMSG;
    p += strlen("\nCpus_allowed_list:");
    p += strspn(p, " \t");
    p[strcspn(p, "\n")] = '\0';
    return cpulist_parse(p, ret);
}

static int real_parent_of(void *userdata, pid_t tid, pid_t *ret)
{
    char buf[1024];
    ssize_t n = read_task_file(tid, "stat", buf, sizeof buf);
    if (n < 0)
        return (int)n;
    uint64_t ppid; /* field 4 */
    if (procstat_u64(buf, 4, &ppid) < 0 || ppid > INT32_MAX)
        return -EBADMSG;
    *ret = (pid_t)ppid;
    return 0;
}

static int real_boot_id(void *userdata, char *buf, size_t size)
{
    ssize_t n = read_file("/proc/sys/kernel/random/boot_id", buf, size);
    if (n < 0)
        return (int)n;
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

static int real_online_cpus(void *userdata, cpu_set_t *ret)
{
    char buf[8192];
    ssize_t n = read_file("/sys/devices/system/cpu/online", buf, sizeof buf);
    if (n < 0)
        return (int)n;
    buf[strcspn(buf, "\n")] = '\0';
    return cpulist_parse(buf, ret);
}

static int real_threads_of(void *userdata, pid_t pid, pid_t *buf, size_t max)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return errno == ENOENT ? -ESRCH : -errno;
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        unsigned tid;
        if (parse_uint(de->d_name, &tid) < 0 || tid == 0 || tid > INT_MAX)
            continue;
        if (n < max)
            buf[n] = (pid_t)tid;
        n++;
    }
    closedir(d);
    return n > INT_MAX ? INT_MAX : (int)n;
}

static int real_children_of(void *userdata, pid_t tid, pid_t *buf, size_t max)
{
    char path[64], text[16384];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)tid, (int)tid);
    /* A longer list is cut: the children beyond it are not seen. */
    int dirfd = AT_FDCWD;
    ssize_t r = read_file_prefix_at(dirfd, path, text, sizeof text);
    if (r < 0)
        return errno_is_gone((int)r) ? -ESRCH : (int)r;
    size_t n = 0;
    for (char *save = NULL, *tok = strtok_r(text, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
        unsigned pid;
        if (parse_uint(tok, &pid) < 0 || pid == 0 || pid > INT_MAX)
            continue;
        if (n < max)
            buf[n] = (pid_t)pid;
        n++;
    }
    return n > INT_MAX ? INT_MAX : (int)n;
}

/* --- cgroup v1 cpuset through libcgroup ---------------------------------------- */

/* libcgroup's errors come back to us as return codes, which the applier logs
 * once where it handles them; its own messages are only debugging detail. By
 * default it would print them to stdout. */
static void cgroup_log_cb(void *userdata, int level, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));
static void cgroup_log_cb(void *userdata, int level, const char *fmt, va_list ap)
{
    char buf[512];
    vsnprintf(buf, sizeof buf, fmt, ap);
    buf[strcspn(buf, "\n")] = '\0';
    if (buf[0])
        log_debug("libcgroup: %s", buf);
}

static int cg_errno(int ret)
{
    switch (ret) {
    case 0:
        return 0;
    case ECGOTHER: {
        int e = cgroup_get_last_errno();
        return e > 0 ? -e : -EIO;
    }
    case ECGROUPNOTEXIST:
    case ECGROUPVALUENOTEXIST:
        return -ENOENT;
    case ECGROUPNOTMOUNTED:
    case ECGROUPSUBSYSNOTMOUNTED:
        return -ENODEV;
    case ECGROUPNOTOWNER:
    case ECGROUPNOTALLOWED:
        return -EPERM;
    case ECGINVAL:
        return -EINVAL;
    case ECGNONEMPTY:
        return -EBUSY;
    default:
        log_debug("libcgroup: %s", cgroup_strerror(ret));
        return -EIO;
    }
}

static int cg_ready(void)
{
    static int init_result = 1;
    if (init_result == 1) {
        cgroup_set_logger(cgroup_log_cb, CGROUP_LOG_DEBUG, NULL);
        init_result = cg_errno(cgroup_init());
    }
    return init_result;
}

/* libcgroup names groups relative to the hierarchy root, without a leading '/'. */
static const char *cg_name(const char *group)
{
    while (*group == '/')
        group++;
    return group;
}

static void cg_freep(struct cgroup **cg)
{
    if (*cg)
        cgroup_free(cg);
}
#define _cleanup_cgroup_ __attribute__((cleanup(cg_freep)))

/* A group handle with only the cpuset controller, so that attach and delete
 * touch the cpuset hierarchy and no other. */
static int cg_open(const char *group, struct cgroup **ret_cg, struct cgroup_controller **ret_ctrl)
{
    int r = cg_ready();
    if (r < 0)
        return r;
    struct cgroup *cg = cgroup_new_cgroup(cg_name(group));
    if (!cg)
        return -ENOMEM;
    struct cgroup_controller *ctrl = cgroup_add_controller(cg, "cpuset");
    if (!ctrl) {
        cgroup_free(&cg);
        return -ENOMEM;
    }
    *ret_cg = cg;
    if (ret_ctrl)
        *ret_ctrl = ctrl;
    return 0;
}

static int real_cpuset_task_path(void *userdata, pid_t tid, char *buf, size_t size)
{
    int r = cg_ready();
    if (r < 0)
        return r;
    char *path = NULL;
    r = cg_errno(cgroup_get_current_controller_path(tid, "cpuset", &path));
    if (r < 0)
        return r == -ENOENT ? -ESRCH : r;
    /* libcgroup returns "/" for the root and "/a/b" otherwise */
    int n = snprintf(buf, size, "%s%s", path[0] == '/' ? "" : "/", path);
    free(path);
    if (n < 0 || (size_t)n >= size)
        return -ENAMETOOLONG;
    return 0;
}

static int real_cpuset_read(void *userdata, const char *group, const char *key, char *buf, size_t size)
{
    int r = cg_ready();
    if (r < 0)
        return r;
    if (size > INT32_MAX)
        size = INT32_MAX;
    void *handle = NULL;
    _cleanup_free_ char *name = strdup(key);
    if (!name)
        return -ENOMEM;
    int ret = cgroup_read_value_begin("cpuset", cg_name(group), name, &handle, buf, (int)size);
    if (handle)
        cgroup_read_value_end(&handle);
    if (ret == ECGEOF) {
        buf[0] = '\0'; /* an empty value, as cpuset.mems of a new group */
        return 0;
    }
    r = cg_errno(ret);
    if (r < 0)
        return r;
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

static int real_cpuset_create(void *userdata, const char *group, const char *cpus, const char *mems)
{
    _cleanup_cgroup_ struct cgroup *cg = NULL;
    struct cgroup_controller *ctrl;
    int r = cg_open(group, &cg, &ctrl);
    if (r < 0)
        return r;
    /* mems first: the kernel refuses tasks in a cpuset with either one empty */
    r = cg_errno(cgroup_set_value_string(ctrl, "cpuset.mems", mems));
    if (r >= 0)
        r = cg_errno(cgroup_set_value_string(ctrl, "cpuset.cpus", cpus));
    if (r >= 0)
        r = cg_errno(cgroup_create_cgroup(cg, 0));
    return r;
}

static int real_cpuset_write(void *userdata, const char *group, const char *key, const char *value)
{
    _cleanup_cgroup_ struct cgroup *cg = NULL;
    struct cgroup_controller *ctrl;
    int r = cg_open(group, &cg, &ctrl);
    if (r < 0)
        return r;
    r = cg_errno(cgroup_set_value_string(ctrl, key, value));
    if (r >= 0)
        r = cg_errno(cgroup_modify_cgroup(cg));
    return r;
}

static int real_cpuset_attach(void *userdata, const char *group, pid_t tid)
{
    _cleanup_cgroup_ struct cgroup *cg = NULL;
    int r = cg_open(group, &cg, NULL);
    if (r < 0)
        return r;
    return cg_errno(cgroup_attach_task_pid(cg, tid));
}

/* How long removing the group may keep trying while threads land in it. */
#define CPUSET_DELETE_BUDGET_MS 2000
static int real_cpuset_delete(void *userdata, const char *group)
{
    _cleanup_cgroup_ struct cgroup *cg = NULL;
    int r = cg_open(group, &cg, NULL);
    if (r < 0)
        return r;
    /* 0 = do not ignore migration errors: moves remaining threads to the
     * parent, then removes the directory. A thread that was being forked
     * inside the group as the others left lands there in between (EBUSY,
     * under a fork storm at SIGTERM). Each try moves the newcomers out too;
     * tries back to back could lose to the storm 20 times in a row, so they
     * pause (1 ms, doubling up to 100 ms) to let the forks in flight finish,
     * for at most about 2 s: well inside the unit's TimeoutStopSec. */
    unsigned waited_ms = 0, pause_ms = 1;
    for (;;) {
        r = cg_errno(cgroup_delete_cgroup(cg, 0));
        if (r != -EBUSY || waited_ms >= CPUSET_DELETE_BUDGET_MS)
            break;
        struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)pause_ms * 1000000L};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
            ;
        waited_ms += pause_ms;
        pause_ms = MIN(pause_ms * 2, 100u);
    }
    if (waited_ms)
        log_debug("cpuset group %s: %s after %u ms of tries", group, r == -EBUSY ? "still busy" : "done", waited_ms);
    return r;
}

/* --- systemd units over D-Bus ------------------------------------------------------ */

int cpuset_to_bitmask(const cpu_set_t *set, uint8_t *buf, size_t size)
{
    size_t n = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, set))
            continue;
        size_t byte = (size_t)cpu / 8;
        if (byte >= size)
            return -ENOSPC;
        for (; n <= byte; n++)
            buf[n] = 0;
        buf[byte] |= (uint8_t)(1u << (cpu % 8));
    }
    return (int)n;
}

void cpuset_from_bitmask(const uint8_t *bits, size_t n_bytes, cpu_set_t *ret)
{
    CPU_ZERO(ret);
    for (size_t i = 0; i < n_bytes && i < CPU_SETSIZE / 8; i++)
        for (int b = 0; b < 8; b++)
            if (bits[i] & (1u << b))
                CPU_SET(i * 8 + (size_t)b, ret);
}

static int unit_interface(const char *unit, char *buf, size_t size)
{
    static const char *const types[][2] = {
        {".slice", "Slice"},   {".service", "Service"}, {".scope", "Scope"},
        {".socket", "Socket"}, {".mount", "Mount"},     {".swap", "Swap"},
    };
    const char *dot = strrchr(unit, '.');
    if (!dot)
        return -EINVAL;
    for (size_t i = 0; i < ELEMENTSOF(types); i++)
        if (strcmp(dot, types[i][0]) == 0) {
            snprintf(buf, size, "org.freedesktop.systemd1.%s", types[i][1]);
            return 0;
        }
    return -EOPNOTSUPP; /* no AllowedCPUs= on other unit types */
}

int sysops_bus_get_allowed_cpus(sd_bus *bus, const char *unit, uint8_t *buf, size_t size)
{
    char iface[64];
    int r = unit_interface(unit, iface, sizeof iface);
    if (r < 0)
        return r;
    _cleanup_free_ char *path = NULL;
    r = sd_bus_path_encode("/org/freedesktop/systemd1/unit", unit, &path);
    if (r < 0)
        return r;
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = NULL;
    r = sd_bus_get_property(bus, "org.freedesktop.systemd1", path, iface, "AllowedCPUs", &error, &reply, "ay");
    if (r < 0) {
        log_debug("unit %s: reading AllowedCPUs: %s", unit, error.message ?: strerror(-r));
        sd_bus_error_free(&error);
        return r;
    }
    const void *data;
    size_t n;
    r = sd_bus_message_read_array(reply, 'y', &data, &n);
    if (r >= 0) {
        if (n > size)
            r = -ENOSPC;
        else {
            memcpy(buf, data, n);
            r = (int)n;
        }
    }
    sd_bus_message_unref(reply);
    return r;
}

int sysops_bus_set_allowed_cpus(sd_bus *bus, const char *unit, const uint8_t *bits, size_t n_bytes)
{
    sd_bus_message *m = NULL;
    sd_bus_error error = SD_BUS_ERROR_NULL;
    int r = sd_bus_message_new_method_call(bus, &m, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                           "org.freedesktop.systemd1.Manager", "SetUnitProperties");
    if (r < 0)
        return r;
    /* runtime=true: the change lives in /run and is gone after a reboot */
    if ((r = sd_bus_message_append(m, "sb", unit, 1)) < 0 || (r = sd_bus_message_open_container(m, 'a', "(sv)")) < 0 ||
        (r = sd_bus_message_open_container(m, 'r', "sv")) < 0 ||
        (r = sd_bus_message_append(m, "s", "AllowedCPUs")) < 0 ||
        (r = sd_bus_message_open_container(m, 'v', "ay")) < 0 ||
        (r = sd_bus_message_append_array(m, 'y', bits, n_bytes)) < 0 || (r = sd_bus_message_close_container(m)) < 0 ||
        (r = sd_bus_message_close_container(m)) < 0 || (r = sd_bus_message_close_container(m)) < 0)
        goto out;
    r = sd_bus_call(bus, m, 0, &error, NULL);
    if (r < 0)
        log_debug("unit %s: SetUnitProperties: %s", unit, error.message ?: strerror(-r));
    else
        r = 0;
out:
    sd_bus_error_free(&error);
    sd_bus_message_unref(m);
    return r;
}

static sd_bus *system_bus;

static int system_bus_get(sd_bus **ret)
{
    if (!system_bus) {
        int r = sd_bus_open_system(&system_bus);
        if (r < 0)
            return r;
    }
    *ret = system_bus;
    return 0;
}

void sysops_real_close(void) { system_bus = sd_bus_flush_close_unref(system_bus); }

static int real_unit_get_allowed_cpus(void *userdata, const char *unit, uint8_t *buf, size_t size)
{
    sd_bus *bus;
    int r = system_bus_get(&bus);
    return r < 0 ? r : sysops_bus_get_allowed_cpus(bus, unit, buf, size);
}

static int real_unit_set_allowed_cpus(void *userdata, const char *unit, const uint8_t *bits, size_t n_bytes)
{
    sd_bus *bus;
    int r = system_bus_get(&bus);
    return r < 0 ? r : sysops_bus_set_allowed_cpus(bus, unit, bits, n_bytes);
}

/* --- scheduling attributes ------------------------------------------------------ */

/* The kernel's SCHED_FLAG_RESET_ON_FORK (uapi/linux/sched.h). */
#define TS_SCHED_FLAG_RESET_ON_FORK 0x01

static int real_getattr(void *userdata, pid_t tid, struct sysops_sched_attr *ret)
{
    struct kernel_sched_attr k;
    memset(&k, 0, sizeof k);
    if (syscall(SYS_sched_getattr, tid, &k, sizeof k, 0) < 0)
        return -errno;
    *ret = (struct sysops_sched_attr){
        .policy = k.sched_policy,
        .flags = k.sched_flags,
        .nice = k.sched_nice,
        .priority = k.sched_priority,
        .runtime_ns = k.sched_runtime,
        .deadline_ns = k.sched_deadline,
        .period_ns = k.sched_period,
    };
    return 0;
}

static int real_setattr(void *userdata, pid_t tid, const struct sysops_sched_attr *attr)
{
    /* Without SCHED_FLAG_UTIL_CLAMP_* in the flags the kernel leaves the
     * clamps alone; the other flags (deadline reclaim, overrun) belong to
     * deadline tasks, which we never write. */
    struct kernel_sched_attr k = {
        .size = sizeof k,
        .sched_policy = attr->policy,
        .sched_flags = attr->flags & TS_SCHED_FLAG_RESET_ON_FORK,
        .sched_nice = attr->nice,
        .sched_priority = attr->priority,
        .sched_runtime = attr->runtime_ns,
        .sched_deadline = attr->deadline_ns,
        .sched_period = attr->period_ns,
    };
    if (syscall(SYS_sched_setattr, tid, &k, 0) < 0)
        return -errno;
    return 0;
}

const struct sysops sysops_real = {
    .userdata = NULL,
    .getaffinity = real_getaffinity,
    .setaffinity = real_setaffinity,
    .task_start_time = real_task_start_time,
    .boot_id = real_boot_id,
    .online_cpus = real_online_cpus,
    .threads_of = real_threads_of,
    .children_of = real_children_of,
    .cpuset_task_path = real_cpuset_task_path,
    .cpuset_read = real_cpuset_read,
    .cpuset_create = real_cpuset_create,
    .cpuset_write = real_cpuset_write,
    .cpuset_attach = real_cpuset_attach,
    .cpuset_delete = real_cpuset_delete,
    .unit_get_allowed_cpus = real_unit_get_allowed_cpus,
    .unit_set_allowed_cpus = real_unit_set_allowed_cpus,
    .getattr = real_getattr,
    .setattr = real_setattr,
    .getaffinity_full = real_getaffinity_full,
    .parent_of = real_parent_of,
};
