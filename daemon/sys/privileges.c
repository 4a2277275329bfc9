/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "privileges.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "rules.h"

bool privileges_config_reads_exe(const struct config *cfg)
{
    return (rules_keys_used(cfg->rules, cfg->n_rules) & (1u << RULE_EXE)) != 0;
}

bool privileges_config_reads_sockets(const struct config *cfg) { return cfg->behaviour.enabled && cfg->request_paths; }

uint64_t privileges_kept_mask(struct privilege_needs needs)
{
    return (1ull << CAP_SYS_NICE) |  /* sched_setaffinity on other users' tasks */
           (1ull << CAP_NET_ADMIN) | /* proc connector, SO_RCVBUFFORCE */
           /* readlink /proc/PID/exe of other users' tasks for exe= rules */
           (needs.exe_rules || needs.request_paths ? 1ull << CAP_SYS_PTRACE : 0) |
           /* list /proc/PID/fd of other users' processes (mode 0500) */
           (needs.request_paths ? 1ull << CAP_DAC_READ_SEARCH : 0) |
           /* mkdir/rmdir of our group below the v1 cpuset root, which is 0555 */
           (needs.cpuset_v1 ? 1ull << CAP_DAC_OVERRIDE : 0);
}

/* The permitted set, as a bit mask of CAP_* numbers. Returns 0 or -errno. */
static int privileges_permitted(uint64_t *ret)
{
    struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
    struct __user_cap_data_struct data[2];

    if (syscall(SYS_capget, &hdr, data) < 0)
        return -errno;
    *ret = (uint64_t)data[0].permitted | ((uint64_t)data[1].permitted << 32);
    return 0;
}

bool privileges_exe_rules_lack_ptrace(const struct config *cfg)
{
    uint64_t permitted = 0;
    return privileges_config_reads_exe(cfg) && privileges_permitted(&permitted) == 0 &&
           !(permitted & (1ull << CAP_SYS_PTRACE));
}

/* "sys_nice, net_admin" for the log, in the order the documentation uses. */
static void mask_names(uint64_t mask, char *buf, size_t size)
{
    static const struct {
        int cap;
        const char *name;
    } names[] = {
        {CAP_SYS_NICE, "sys_nice"},
        {CAP_NET_ADMIN, "net_admin"},
        {CAP_SYS_PTRACE, "sys_ptrace"},
        {CAP_DAC_OVERRIDE, "dac_override"},
        {CAP_DAC_READ_SEARCH, "dac_read_search"},
    };
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if ((mask & (1ull << names[i].cap)) && len < size)
            len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "", names[i].name);
}

int privileges_drop_unneeded(struct privilege_needs needs)
{
    uint64_t keep = privileges_kept_mask(needs);
    struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
    struct __user_cap_data_struct data[2];
    char names[128];

    if (syscall(SYS_capget, &hdr, data) < 0)
        return log_warning_errno(-errno, "reading capabilities: %m");
    uint64_t held = (uint64_t)data[0].permitted | ((uint64_t)data[1].permitted << 32);
    if (needs.exe_rules && !(held & (1ull << CAP_SYS_PTRACE)))
        log_notice("exe= rules are configured but CAP_SYS_PTRACE is not available: they match only processes "
                   "whose /proc/PID/exe the daemon may read without it");
    if ((held & ~keep) == 0 && data[0].inheritable == 0 && data[1].inheritable == 0) {
        log_debug("capabilities already limited to what is needed");
        return 0;
    }
    for (int cap = 0; cap <= 63; cap++) {
        if (keep & (1ull << cap))
            continue;
        /* EINVAL: the kernel does not know this capability number. */
        if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) > 0 && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL &&
            errno != EPERM)
            log_debug_errno(-errno, "dropping capability %d from the bounding set: %m", cap);
    }
    for (int i = 0; i < 2; i++) {
        uint32_t k = (uint32_t)(keep >> (32 * i));
        data[i].effective &= k;
        data[i].permitted &= k;
        data[i].inheritable = 0;
    }
    if (syscall(SYS_capset, &hdr, data) < 0)
        return log_warning_errno(-errno, "dropping capabilities: %m");
    mask_names(held & keep, names, sizeof names);
    log_debug("capabilities reduced to %s", names);
    return 0;
}
