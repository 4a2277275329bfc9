/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Running out of file descriptors on purpose: RLIMIT_NOFILE lowered so that
 * exactly n more can be opened. The caller puts *old back with
 * setrlimit(RLIMIT_NOFILE, old) before it asserts anything. */
#pragma once
#include <errno.h>
#include <sys/resource.h>
#include <unistd.h>

/* The limit is the (n+1)th lowest free descriptor: the n below it open, the
 * next open fails with EMFILE. Returns 0 or -errno. */
static inline int fd_limit_lower(int n, struct rlimit *old)
{
    int fds[16];
    if (n < 0 || n >= 16)
        return -EINVAL;
    if (getrlimit(RLIMIT_NOFILE, old) < 0)
        return -errno;
    int got = 0, r = 0;
    for (; got <= n; got++)
        if ((fds[got] = dup(0)) < 0) {
            r = -errno;
            break;
        }
    struct rlimit low = {.rlim_cur = r < 0 ? 0 : (rlim_t)fds[n], .rlim_max = old->rlim_max};
    while (got > 0)
        close(fds[--got]);
    if (r < 0)
        return r;
    return setrlimit(RLIMIT_NOFILE, &low) < 0 ? -errno : 0;
}
