/* SPDX-License-Identifier: GPL-2.0-or-later */
/* uclamp util_max through the raw sched_getattr syscall. */
#include "uclamp.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sched-attr.h"
#include "util.h"

bool uclamp_supported(const char *proc_root)
{
    char path[PATH_MAX];
    if (path_join(path, sizeof path, proc_root, "/proc/sys/kernel/sched_util_clamp_max") < 0)
        return false;
    return access(path, F_OK) == 0;
}

int uclamp_get_util_max(pid_t tid, unsigned *util_max)
{
    struct kernel_sched_attr attr;
    memset(&attr, 0, sizeof attr);
    if (syscall(SYS_sched_getattr, tid, &attr, sizeof attr, 0) < 0)
        return -errno;
    /* Kernels before 5.3 fill only VER0 (48 bytes): no clamps there. */
    if (attr.size < sizeof attr) {
        *util_max = UCLAMP_SCALE;
        return 0;
    }
    *util_max = attr.sched_util_max;
    return 0;
}
