/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "nss.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int nss_call_growing(int (*fn)(char *buf, size_t size, void *userdata), void *userdata, size_t start)
{
    size_t size = start < 256 ? 256 : start;
    if (size > NSS_BUFFER_MAX)
        size = NSS_BUFFER_MAX;
    for (;;) {
        char *buf = malloc(size);
        if (!buf)
            return -ENOMEM;
        int r = fn(buf, size, userdata);
        free(buf);
        if (r != ERANGE)
            return -r;
        if (size >= NSS_BUFFER_MAX)
            return -ERANGE;
        size = size > NSS_BUFFER_MAX / 2 ? NSS_BUFFER_MAX : size * 2;
    }
}

static size_t start_size(int name)
{
    /* A hint only (often -1 or small): growth handles the rest. */
    long n = sysconf(name);
    return n > 0 ? (size_t)n : 1024;
}

struct group_query {
    const char *name;
    gid_t gid;
    bool found;
};

static int group_fn(char *buf, size_t size, void *userdata)
{
    struct group_query *q = userdata;
    struct group grp, *res = NULL;
    int r = getgrnam_r(q->name, &grp, buf, size, &res);
    if (r == 0 && res) {
        q->gid = res->gr_gid;
        q->found = true;
    }
    return r;
}

int nss_group_gid(const char *name, gid_t *ret)
{
    struct group_query q = {.name = name};
    int r = nss_call_growing(group_fn, &q, start_size(_SC_GETGR_R_SIZE_MAX));
    if (r < 0)
        return r;
    if (!q.found)
        return -ENOENT;
    *ret = q.gid;
    return 0;
}

struct user_query {
    uid_t uid;
    char *out;
    size_t out_size;
    int result;
};

static int user_fn(char *buf, size_t size, void *userdata)
{
    struct user_query *q = userdata;
    struct passwd pw, *res = NULL;
    int r = getpwuid_r(q->uid, &pw, buf, size, &res);
    if (r == 0) {
        if (!res)
            q->result = -ENOENT;
        else if (strlen(res->pw_name) >= q->out_size)
            q->result = -ENAMETOOLONG;
        else {
            strcpy(q->out, res->pw_name);
            q->result = 0;
        }
    }
    /* No such user is 0 and no entry. glibc passes on the errno of a
     * service that is unavailable (libnss_sss says ENOENT when its socket
     * is missing): a failure to ask again about, not an answer. */
    return r == ENOENT || r == ESRCH ? EAGAIN : r;
}

int nss_user_name(uid_t uid, char *buf, size_t size)
{
    struct user_query q = {.uid = uid, .out = buf, .out_size = size, .result = -ENOENT};
    int r = nss_call_growing(user_fn, &q, start_size(_SC_GETPW_R_SIZE_MAX));
    return r < 0 ? r : q.result;
}
