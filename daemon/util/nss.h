/* SPDX-License-Identifier: GPL-2.0-or-later */
/* User and group lookups whose buffer grows: getgrnam_r and getpwuid_r fail
 * with ERANGE when an entry does not fit (a group of thousands of members),
 * and a daemon that treats that as fatal restarts in a loop. */
#pragma once
#include <stddef.h>
#include <sys/types.h>

/* Upper bound of the buffer: an entry beyond it is treated as unreadable. */
#define NSS_BUFFER_MAX (16u * 1024u * 1024u)

/* Calls fn(buf, size, userdata) with a buffer of start bytes (at least 256),
 * doubling it while fn returns ERANGE, up to NSS_BUFFER_MAX. fn returns 0 or a
 * positive errno, as the *_r functions do. Returns 0, or -errno (-ERANGE
 * past the bound). */
int nss_call_growing(int (*fn)(char *buf, size_t size, void *userdata), void *userdata, size_t start);

/* A group's gid by name; -ENOENT if there is none. */
int nss_group_gid(const char *name, gid_t *ret);
/* A user's name by uid, into buf; -ENOENT if there is none, -ENAMETOOLONG if
 * it does not fit in size, -EAGAIN if a service could not answer. */
int nss_user_name(uid_t uid, char *buf, size_t size);
