/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "client.h"

#include <errno.h>
#include <json-c/json.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "util.h"
#include "varlink.h"

const char *ctl_call_stage = "connecting to";

static int wait_fd(int fd, short events, uint64_t deadline_ms)
{
    for (;;) {
        uint64_t now = now_ms();
        if (now >= deadline_ms)
            return -ETIMEDOUT;
        struct pollfd p = {.fd = fd, .events = events};
        int r = poll(&p, 1, (int)MIN(deadline_ms - now, (uint64_t)INT32_MAX));
        if (r < 0 && errno != EINTR)
            return -errno;
        if (r > 0)
            return 0;
    }
}

int ctl_connect(const char *path)
{
    ctl_call_stage = "connecting to";
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path)
        return -ENAMETOOLONG;
    strcpy(sa.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        int r = -errno;
        close(fd);
        return r;
    }
    return fd;
}

int ctl_call(const char *path, const char *method, struct json_object *params, int timeout_ms,
             struct json_object **reply, char **error)
{
    *reply = NULL;
    *error = NULL;
    _cleanup_close_ int fd = ctl_connect(path);
    if (fd < 0)
        return fd;
    return ctl_call_fd(fd, method, params, timeout_ms, reply, error);
}

int ctl_call_fd(int fd, const char *method, struct json_object *params, int timeout_ms, struct json_object **reply,
                char **error)
{
    *reply = NULL;
    *error = NULL;
    ctl_call_stage = "talking to";
    uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
    size_t len;
    _cleanup_free_ char *req = varlink_request_format(method, params, &len);
    if (!req)
        return -ENOMEM;
    /* A daemon that refuses the connection (too many clients) sends its
     * reason and closes: on EPIPE, read that reason before giving up. */
    int send_err = 0;
    for (size_t off = 0; off < len;) {
        int r = wait_fd(fd, POLLOUT, deadline);
        if (r < 0)
            return r;
        ssize_t n = send(fd, req + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            if (errno != EPIPE && errno != ECONNRESET)
                return -errno;
            send_err = -errno;
            break;
        }
        off += (size_t)n;
    }

    /* Replies can be large (a dump of every thread); no bound beyond memory. */
    struct varlink_reader rd;
    varlink_reader_init(&rd, SIZE_MAX - 1);
    int r;
    for (;;) {
        const char *msg;
        size_t mlen;
        r = varlink_reader_next(&rd, &msg, &mlen);
        if (r > 0) {
            r = varlink_reply_decode(msg, mlen, reply, error);
            break;
        }
        r = wait_fd(fd, POLLIN, deadline);
        if (r < 0)
            break;
        char buf[65536];
        ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            r = send_err ? send_err : -errno;
            break;
        }
        if (n == 0) {
            r = send_err ? send_err : -ECONNRESET;
            break;
        }
        r = varlink_reader_feed(&rd, buf, (size_t)n);
        if (r < 0)
            break;
    }
    varlink_reader_done(&rd);
    return r;
}
