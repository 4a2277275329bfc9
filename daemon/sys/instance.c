/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "instance.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

int instance_lock(const char *state_file)
{
    char path[PATH_MAX], dir[PATH_MAX];
    if (snprintf(path, sizeof path, "%s.lock", state_file) >= (int)sizeof path)
        return -ENAMETOOLONG;
    snprintf(dir, sizeof dir, "%s", state_file);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
            return log_error_errno(-errno, "%s: %m", dir);
    }
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return log_error_errno(-errno, "%s: %m", path);
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        int r = -errno;
        if (errno == EWOULDBLOCK)
            log_err("another turboschedd is running (%s is locked)", path);
        else
            log_error_errno(r, "%s: flock: %m", path);
        close(fd);
        return r;
    }
    return fd;
}
