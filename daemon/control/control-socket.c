/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The control server's listening socket: directory, stale socket, mode and
 * group, bind and listen. */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "control-internal.h"
#include "log.h"
#include "nss.h"
#include "util.h"

static int mkdir_parents(const char *path, mode_t mode)
{
    _cleanup_free_ char *p = strdup(path);
    if (!p)
        return -ENOMEM;
    char *slash = strrchr(p, '/');
    if (!slash || slash == p)
        return 0;
    *slash = '\0';
    for (char *q = p + 1;; q++) {
        bool end = *q == '\0';
        if (*q == '/' || end) {
            *q = '\0';
            if (mkdir(p, mode) == 0) {
                /* Under a strict umask the directory would bar the group. */
                if (chmod(p, mode) < 0)
                    return -errno;
            } else if (errno != EEXIST) {
                return -errno;
            }
            if (end)
                break;
            *q = '/';
        }
    }
    return 0;
}

/* A socket file left by a crashed daemon is removed; one that still answers
 * belongs to a running daemon and is left alone. */
static int remove_stale_socket(const struct sockaddr_un *sa, socklen_t salen)
{
    struct stat st;
    if (lstat(sa->sun_path, &st) < 0)
        return errno == ENOENT ? 0 : -errno;
    if (!S_ISSOCK(st.st_mode))
        return -EEXIST;
    _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (connect(fd, (const struct sockaddr *)sa, salen) == 0 || errno == EAGAIN)
        return -EADDRINUSE;
    if (errno != ECONNREFUSED && errno != ENOENT)
        return -errno;
    if (unlink(sa->sun_path) < 0 && errno != ENOENT)
        return -errno;
    return 0;
}

static int lookup_group(const char *name, gid_t *ret)
{
    int r = nss_group_gid(name, ret);
    if (r == -ENOENT) {
        unsigned gid;
        if (parse_uint(name, &gid) == 0) {
            *ret = (gid_t)gid;
            return 0;
        }
        return -ENOENT;
    }
    return r;
}
/* The address of path; -ENAMETOOLONG if it is empty or does not fit. */
static int socket_address(const char *path, struct sockaddr_un *sa, socklen_t *salen)
{
    size_t plen = strlen(path);
    *sa = (struct sockaddr_un){.sun_family = AF_UNIX};
    if (plen == 0 || plen >= sizeof sa->sun_path) {
        log_err("control: socket path '%s' is empty or longer than %zu bytes", path, sizeof sa->sun_path - 1);
        return -ENAMETOOLONG;
    }
    memcpy(sa->sun_path, path, plen + 1);
    *salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + plen + 1);
    return 0;
}

/* Makes room for the socket: its directory exists, nothing stale is left. */
static int prepare_path(const char *path, const struct sockaddr_un *sa, socklen_t salen)
{
    int r = mkdir_parents(path, 0755);
    if (r < 0)
        return log_error_errno(r, "control: creating the directory of %s: %m", path);
    r = remove_stale_socket(sa, salen);
    if (r == -EADDRINUSE)
        log_err("control: %s: another daemon answers on this socket", path);
    else if (r == -EEXIST)
        log_err("control: %s exists and is not a socket, leaving it alone", path);
    else if (r < 0)
        log_error_errno(r, "control: %s: checking for a stale socket: %m", path);
    return r;
}

int control_socket_listen(const char *path, const char *ro_group, int *ret_fd, mode_t *ret_mode)
{
    struct sockaddr_un sa;
    socklen_t salen;
    int r = socket_address(path, &sa, &salen);
    if (r < 0)
        return r;
    gid_t gid = (gid_t)-1;
    if (ro_group) {
        r = lookup_group(ro_group, &gid);
        if (r < 0)
            return log_error_errno(r, "control: group '%s' for read-only access: %m", ro_group);
    }
    r = prepare_path(path, &sa, salen);
    if (r < 0)
        return r;

    mode_t mode = ro_group ? 0660 : 0600;
    _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return log_error_errno(-errno, "control: socket: %m");
    /* The mode of a socket inode is what bind() gives the file: no window in
     * which the socket is reachable with looser permissions. */
    if (fchmod(fd, mode) < 0 || bind(fd, (struct sockaddr *)&sa, salen) < 0)
        return log_error_errno(-errno, "control: binding %s: %m", path);
    if (chmod(path, mode) < 0 || (ro_group && chown(path, (uid_t)-1, gid) < 0)) {
        r = log_error_errno(-errno, "control: setting the owner and mode of %s: %m", path);
        unlink(path);
        return r;
    }
    if (listen(fd, SOMAXCONN) < 0) {
        r = log_error_errno(-errno, "control: listen on %s: %m", path);
        unlink(path);
        return r;
    }
    *ret_fd = TAKE_FD(fd);
    *ret_mode = mode;
    return 0;
}
