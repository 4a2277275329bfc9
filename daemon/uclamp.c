/* uclamp util_max through the raw sched_getattr syscall. */
#include "uclamp.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util.h"

/* Our own copy: <linux/sched/types.h> clashes with <sched.h>. Layout of
 * SCHED_ATTR_SIZE_VER1 (56 bytes, Linux 5.3). */
struct ts_sched_attr {
    uint32_t size;
    uint32_t sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime;
    uint64_t sched_deadline;
    uint64_t sched_period;
    uint32_t sched_util_min;
    uint32_t sched_util_max;
};
_Static_assert(sizeof(struct ts_sched_attr) == 56, "sched_attr VER1 is 56 bytes");

bool uclamp_supported(const char *proc_root)
{
    char path[PATH_MAX];
    if (path_join(path, sizeof path, proc_root, "/proc/sys/kernel/sched_util_clamp_max") < 0)
        return false;
    return access(path, F_OK) == 0;
}

int uclamp_get_util_max(pid_t tid, unsigned *util_max)
{
    struct ts_sched_attr attr;
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
