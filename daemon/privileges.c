#include "privileges.h"

#include <errno.h>
#include <linux/capability.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"

uint64_t privileges_kept_mask(bool cpuset_v1)
{
    return (1ull << CAP_SYS_NICE) |     /* sched_setaffinity on other users' tasks */
           (1ull << CAP_NET_ADMIN) |    /* proc connector, SO_RCVBUFFORCE */
           (1ull << CAP_SYS_PTRACE) |   /* readlink /proc/PID/exe of other users' tasks for exe= rules */
           /* mkdir/rmdir of our group below the v1 cpuset root, which is 0555 */
           (cpuset_v1 ? 1ull << CAP_DAC_OVERRIDE : 0);
}

int privileges_drop_unneeded(bool cpuset_v1)
{
    uint64_t keep = privileges_kept_mask(cpuset_v1);
    struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
    struct __user_cap_data_struct data[2];

    if (syscall(SYS_capget, &hdr, data) < 0) {
        int r = -errno;
        log_warning("reading capabilities: %s", strerror(errno));
        return r;
    }
    uint64_t held = (uint64_t)data[0].permitted | ((uint64_t)data[1].permitted << 32);
    if ((held & ~keep) == 0 && data[0].inheritable == 0 && data[1].inheritable == 0) {
        /* Already bounded, as under the shipped unit (whose system call
         * filter also refuses capset). */
        log_debug("capabilities already limited to what is needed");
        return 0;
    }
    for (int cap = 0; cap <= 63; cap++) {
        if (keep & (1ull << cap))
            continue;
        /* EINVAL: the kernel does not know this capability number. */
        if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) > 0 && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 &&
            errno != EINVAL && errno != EPERM)
            log_debug("dropping capability %d from the bounding set: %s", cap, strerror(errno));
    }
    for (int i = 0; i < 2; i++) {
        uint32_t k = (uint32_t)(keep >> (32 * i));
        data[i].effective &= k;
        data[i].permitted &= k;
        data[i].inheritable = 0;
    }
    if (syscall(SYS_capset, &hdr, data) < 0) {
        int r = -errno;
        log_warning("dropping capabilities: %s", strerror(errno));
        return r;
    }
    log_debug("capabilities reduced to sys_nice, net_admin, sys_ptrace%s", cpuset_v1 ? ", dac_override" : "");
    return 0;
}
