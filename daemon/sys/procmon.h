/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Process events from the kernel's proc connector (netlink, libnl-3):
 * fork/exec/comm/exit/uid for every thread on the machine. A socket overflow
 * loses events; procmon_dispatch() then returns -ENOBUFS and the caller must
 * rescan /proc (procscan_reconcile). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum procmon_kind {
    PROCMON_OTHER = 0, /* an event we do not use (gid, sid, ptrace, coredump...) */
    PROCMON_ACK,       /* the kernel's answer to a LISTEN/IGNORE request */
    PROCMON_FORK,
    PROCMON_EXEC,
    PROCMON_COMM,
    PROCMON_EXIT,
    PROCMON_UID,
};
#define PROCMON_KINDS (PROCMON_UID + 1)
const char *procmon_kind_to_string(enum procmon_kind k);

/* One decoded event. tid/tgid name the task the event is about: for fork the
 * child (a new thread when tid != tgid), for the others the task itself.
 * fork.parent_* is the kernel's real_parent: for a new thread that is the
 * parent of its process, not the thread that created it. */
struct procmon_event {
    enum procmon_kind kind;
    uint32_t what; /* raw PROC_EVENT_* value */
    uint32_t cpu;
    uint64_t timestamp_ns; /* since boot */
    pid_t tid;
    pid_t tgid;
    union {
        struct {
            pid_t parent_tid, parent_tgid;
        } fork;
        struct {
            uint32_t code, signal;
        } exit; /* code as for wait(2) */
        struct {
            char comm[16];
        } comm; /* always NUL-terminated */
        struct {
            uid_t ruid, euid;
        } uid;
        struct {
            uint32_t err;
        } ack; /* errno, 0 on success */
    };
};

/* Pure: one netlink message (nlmsghdr + cn_msg + proc_event) of len bytes.
 * Returns 0, or -EBADMSG for anything malformed or truncated (wrong type,
 * wrong connector idx/val, a length at any layer claiming more than there
 * is). Never reads past buf+len; buf needs no alignment. */
int procmon_decode(const void *buf, size_t len, struct procmon_event *ev);

struct procmon_counters {
    uint64_t fork, exec, comm, exit, uid, other, malformed, overflows;
    uint64_t ack;
};

struct procmon;

/* Open the socket, join CN_IDX_PROC, send PROC_CN_MCAST_LISTEN (with an event
 * filter for fork/exec/comm/exit/uid, which kernels from 6.6 honour and older
 * ones ignore: then every event arrives and the extra ones count as "other").
 * Non-blocking. rcvbuf_bytes: SO_RCVBUFFORCE, falling back to SO_RCVBUF
 * (capped by net.core.rmem_max) without CAP_NET_ADMIN; 0 keeps the default.
 * Needs CAP_NET_ADMIN to receive anything: -EPERM otherwise. */
int procmon_open(uint64_t rcvbuf_bytes, struct procmon **ret);
/* The same for exec events only, where the kernel filters (6.6+):
 * -EOPNOTSUPP where it would not. */
int procmon_open_exec(uint64_t rcvbuf_bytes, struct procmon **ret);
/* Stop (false) or start again (true) receiving comm events on a socket
 * opened by procmon_open, through the kernel's event filter (6.6+):
 * -EOPNOTSUPP where the kernel does not filter. */
int procmon_hear_comm(struct procmon *pm, bool on);
/* Sends PROC_CN_MCAST_IGNORE and closes. NULL is fine. */
void procmon_free(struct procmon *pm);
int procmon_fd(const struct procmon *pm);
/* Set the receive buffer; returns the size the kernel reports afterwards
 * (SO_RCVBUF, which is double the requested size) or -errno. */
int procmon_set_rcvbuf(struct procmon *pm, uint64_t bytes);
/* True when the kernel is expected to apply the event filter (6.6+). */
int procmon_filtered(const struct procmon *pm);

/* Called for every decoded event except ACKs. A negative return stops the
 * dispatch and is returned by procmon_dispatch (the fd stays readable). */
typedef int (*procmon_event_fn)(const struct procmon_event *ev, void *userdata);

/* Read until the socket is empty (a short batch or EAGAIN; at most a
 * bounded batch, so a storm cannot starve the loop: the fd then stays
 * readable). Returns the number of events handled, or
 * -ENOBUFS if the socket overflowed since the last call (events were lost:
 * rescan /proc), or another -errno. Events read after an overflow are still
 * passed to fn. */
int procmon_dispatch(struct procmon *pm, procmon_event_fn fn, void *userdata);

const struct procmon_counters *procmon_counters(const struct procmon *pm);
