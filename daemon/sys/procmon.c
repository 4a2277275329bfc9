/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "procmon.h"

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "log.h"
#include "util.h"

/* Event filter (Linux 6.6+): PROC_CN_MCAST_LISTEN followed by an event mask
 * (struct proc_input). Older uapi headers lack it, so spell it out. */
#define TS_PROC_EVENTS_WANTED (PROC_EVENT_FORK | PROC_EVENT_EXEC | PROC_EVENT_UID | PROC_EVENT_COMM | PROC_EVENT_EXIT)

/* Messages per dispatch: a fork storm must not keep the loop here forever. */
#define DISPATCH_BATCH 4096

/* Datagrams per recvmmsg() and the room for each. An event is one small
 * datagram (about 100 bytes); a longer one comes back with MSG_TRUNC and
 * counts as malformed. */
#define RECV_VLEN 32
#define RECV_BUF 1024

struct procmon {
    struct nl_sock *sk;
    struct nl_cb *cb;
    struct procmon_counters counters;
    bool filtered;
    bool filter_ignored_logged;
    /* state of the current dispatch */
    procmon_event_fn fn;
    void *userdata;
    int handled;
    int fn_error;
    /* Receive buffers: libnl opens, binds and subscribes the socket, but
     * its receive path allocates a message and runs a callback chain per
     * event, which was half the daemon's CPU in a fork storm. */
    struct mmsghdr msgs[RECV_VLEN];
    struct iovec iov[RECV_VLEN];
    struct sockaddr_nl src[RECV_VLEN];
    _Alignas(struct nlmsghdr) uint8_t bufs[RECV_VLEN][RECV_BUF];
    /* Datagrams received but not handled yet because the callback stopped
     * the dispatch: the next dispatch starts with them. */
    unsigned next, received;
};

const char *procmon_kind_to_string(enum procmon_kind k)
{
    switch (k) {
    case PROCMON_OTHER:
        return "other";
    case PROCMON_ACK:
        return "ack";
    case PROCMON_FORK:
        return "fork";
    case PROCMON_EXEC:
        return "exec";
    case PROCMON_COMM:
        return "comm";
    case PROCMON_EXIT:
        return "exit";
    case PROCMON_UID:
        return "uid";
    }
    return "?";
}

/* Byte offset of the event union inside struct proc_event. */
#define PE_DATA offsetof(struct proc_event, event_data)

static uint32_t rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

/* Checks the netlink and connector headers of one datagram and finds the
 * proc_event in it: *pe and the length of the event (*pe_len, at least
 * PE_DATA). -EBADMSG for anything that is not one whole proc connector
 * event. */
static int decode_frame(const uint8_t *p, size_t len, const uint8_t **pe, size_t *pe_len)
{
    struct nlmsghdr nlh;
    struct cn_msg cn;

    if (!p || len < sizeof(nlh))
        return -EBADMSG;
    memcpy(&nlh, p, sizeof(nlh));
    if (nlh.nlmsg_len < NLMSG_HDRLEN || nlh.nlmsg_len > len)
        return -EBADMSG;
    /* The connector sends every event as a lone NLMSG_DONE. */
    if (nlh.nlmsg_type != NLMSG_DONE)
        return -EBADMSG;
    size_t payload = nlh.nlmsg_len - NLMSG_HDRLEN;
    if (payload < sizeof(cn))
        return -EBADMSG;
    memcpy(&cn, p + NLMSG_HDRLEN, sizeof(cn));
    if (cn.id.idx != CN_IDX_PROC || cn.id.val != CN_VAL_PROC)
        return -EBADMSG;
    if (cn.len > payload - sizeof(cn) || cn.len < PE_DATA)
        return -EBADMSG;
    *pe = p + NLMSG_HDRLEN + sizeof(cn);
    *pe_len = cn.len;
    return 0;
}

/* The union member of one event kind, d being dlen bytes long. */
static int decode_event_data(uint32_t what, const uint8_t *d, size_t dlen, struct procmon_event *ev)
{
    /* Each kind needs only its own union member: older kernels send a
     * shorter union than newer headers describe. */
    switch (what) {
    case PROC_EVENT_NONE:
        if (dlen < sizeof(uint32_t))
            return -EBADMSG;
        ev->kind = PROCMON_ACK;
        ev->ack.err = rd32(d);
        break;
    case PROC_EVENT_FORK:
        if (dlen < 4 * sizeof(uint32_t))
            return -EBADMSG;
        ev->kind = PROCMON_FORK;
        ev->fork.parent_tid = (pid_t)rd32(d);
        ev->fork.parent_tgid = (pid_t)rd32(d + 4);
        ev->tid = (pid_t)rd32(d + 8);
        ev->tgid = (pid_t)rd32(d + 12);
        break;
    case PROC_EVENT_EXEC:
        if (dlen < 2 * sizeof(uint32_t))
            return -EBADMSG;
        ev->kind = PROCMON_EXEC;
        ev->tid = (pid_t)rd32(d);
        ev->tgid = (pid_t)rd32(d + 4);
        break;
    case PROC_EVENT_UID:
        if (dlen < 4 * sizeof(uint32_t))
            return -EBADMSG;
        ev->kind = PROCMON_UID;
        ev->tid = (pid_t)rd32(d);
        ev->tgid = (pid_t)rd32(d + 4);
        ev->uid.ruid = rd32(d + 8);
        ev->uid.euid = rd32(d + 12);
        break;
    case PROC_EVENT_COMM:
        if (dlen < 2 * sizeof(uint32_t) + sizeof(ev->comm.comm))
            return -EBADMSG;
        ev->kind = PROCMON_COMM;
        ev->tid = (pid_t)rd32(d);
        ev->tgid = (pid_t)rd32(d + 4);
        memcpy(ev->comm.comm, d + 8, sizeof(ev->comm.comm));
        ev->comm.comm[sizeof(ev->comm.comm) - 1] = '\0';
        break;
    case PROC_EVENT_EXIT:
        if (dlen < 4 * sizeof(uint32_t))
            return -EBADMSG;
        ev->kind = PROCMON_EXIT;
        ev->tid = (pid_t)rd32(d);
        ev->tgid = (pid_t)rd32(d + 4);
        ev->exit.code = rd32(d + 8);
        ev->exit.signal = rd32(d + 12);
        break;
    default:
        /* gid, sid, ptrace, coredump: all start with pid, tgid */
        ev->kind = PROCMON_OTHER;
        if (dlen >= 2 * sizeof(uint32_t)) {
            ev->tid = (pid_t)rd32(d);
            ev->tgid = (pid_t)rd32(d + 4);
        }
        break;
    }
    return 0;
}

int procmon_decode(const void *buf, size_t len, struct procmon_event *ev)
{
    const uint8_t *pe;
    size_t pe_len;
    int r = decode_frame(buf, len, &pe, &pe_len);
    if (r < 0)
        return r;
    assert(pe_len >= PE_DATA);
    uint32_t what = rd32(pe + offsetof(struct proc_event, what));

    memset(ev, 0, sizeof(*ev));
    ev->what = what;
    ev->cpu = rd32(pe + offsetof(struct proc_event, cpu));
    memcpy(&ev->timestamp_ns, pe + offsetof(struct proc_event, timestamp_ns), sizeof(ev->timestamp_ns));
    return decode_event_data(what, pe + PE_DATA, pe_len - PE_DATA, ev);
}

/* Send a LISTEN/IGNORE request, optionally with an event mask. */
static int send_mcast_op(struct procmon *pm, uint32_t op, const uint32_t *events)
{
    uint8_t buf[NLMSG_HDRLEN + sizeof(struct cn_msg) + 2 * sizeof(uint32_t)] = {0};
    uint16_t data_len = events ? 2 * sizeof(uint32_t) : sizeof(uint32_t);
    struct nlmsghdr nlh = {
        .nlmsg_len = NLMSG_HDRLEN + sizeof(struct cn_msg) + data_len,
        .nlmsg_type = NLMSG_DONE,
        .nlmsg_pid = nl_socket_get_local_port(pm->sk),
    };
    struct cn_msg cn = {
        .id = {.idx = CN_IDX_PROC, .val = CN_VAL_PROC},
        .len = data_len,
    };
    memcpy(buf, &nlh, sizeof(nlh));
    memcpy(buf + NLMSG_HDRLEN, &cn, sizeof(cn));
    memcpy(buf + NLMSG_HDRLEN + sizeof(cn), &op, sizeof(op));
    if (events)
        memcpy(buf + NLMSG_HDRLEN + sizeof(cn) + sizeof(op), events, sizeof(*events));
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    ssize_t n = sendto(nl_socket_get_fd(pm->sk), buf, nlh.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel));
    if (n < 0)
        return -errno;
    return 0;
}

static bool kernel_has_event_filter(void)
{
    struct utsname u;
    unsigned major = 0, minor = 0;
    if (uname(&u) < 0 || sscanf(u.release, "%u.%u", &major, &minor) != 2)
        return false;
    return major > 6 || (major == 6 && minor >= 6);
}

static int count_event(struct procmon *pm, const struct procmon_event *ev)
{
    switch (ev->kind) {
    case PROCMON_FORK:
        pm->counters.fork++;
        break;
    case PROCMON_EXEC:
        pm->counters.exec++;
        break;
    case PROCMON_COMM:
        pm->counters.comm++;
        break;
    case PROCMON_EXIT:
        pm->counters.exit++;
        break;
    case PROCMON_UID:
        pm->counters.uid++;
        break;
    case PROCMON_ACK:
        pm->counters.ack++;
        break;
    case PROCMON_OTHER:
        pm->counters.other++;
        if (pm->filtered && !pm->filter_ignored_logged) {
            pm->filter_ignored_logged = true;
            log_debug("proc connector: event 0x%x arrived despite the event filter; the kernel does not apply it",
                      ev->what);
        }
        break;
    }
    return 0;
}

/* One netlink message from the socket. Returns 0, or < 0 when the event
 * callback asked to stop. */
static int handle_msg(struct procmon *pm, const struct nlmsghdr *nlh, const struct sockaddr_nl *src)
{
    struct procmon_event ev;

    /* Only the kernel (port 0) speaks for the proc connector. */
    if (src->nl_pid != 0 || procmon_decode(nlh, nlh->nlmsg_len, &ev) < 0) {
        pm->counters.malformed++;
        return 0;
    }
    count_event(pm, &ev);
    if (ev.kind == PROCMON_ACK) {
        if (ev.ack.err != 0)
            log_warning("proc connector: subscription answered with %s", strerror((int)ev.ack.err));
        return 0;
    }
    if (pm->fn) {
        int r = pm->fn(&ev, pm->userdata);
        if (r < 0) {
            pm->fn_error = r;
            return r;
        }
    }
    pm->handled++;
    return 0;
}

/* One datagram: every netlink message in it, as libnl's receive loop did
 * (it stops at the first message whose length does not fit). */
static int handle_datagram(struct procmon *pm, const uint8_t *buf, size_t len, unsigned flags,
                           const struct sockaddr_nl *src)
{
    if (flags & MSG_TRUNC) {
        pm->counters.malformed++;
        return 0;
    }
    const struct nlmsghdr *nlh = (const struct nlmsghdr *)buf;
    int n = (int)len;
    for (; NLMSG_OK(nlh, n); nlh = NLMSG_NEXT(nlh, n)) {
        int r = handle_msg(pm, nlh, src);
        if (r < 0)
            return r;
    }
    return 0;
}

static int get_rcvbuf(int fd)
{
    int v = 0;
    socklen_t l = sizeof(v);
    if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, &l) < 0)
        return -errno;
    return v;
}

int procmon_set_rcvbuf(struct procmon *pm, uint64_t bytes)
{
    int fd = nl_socket_get_fd(pm->sk);
    /* The kernel doubles the value (bookkeeping overhead) and takes an int. */
    int v = (int)MIN(bytes, (uint64_t)(INT32_MAX / 2));
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v)) < 0) {
        int err = errno;
        /* Without CAP_NET_ADMIN: SO_RCVBUF, capped at net.core.rmem_max. */
        if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)) < 0) {
            return log_warning_errno(-errno, "proc connector: setting receive buffer to %d bytes: %m", v);
        }
        log_info_errno(-err, "proc connector: SO_RCVBUFFORCE: %m, used SO_RCVBUF (capped by net.core.rmem_max)");
    }
    int got = get_rcvbuf(fd);
    if (got >= 0)
        log_info("proc connector: receive buffer asked %d bytes, kernel reports %d", v, got);
    return got;
}

static int nlerr_to_errno(int nlerr)
{
    switch (nlerr < 0 ? -nlerr : nlerr) {
    case NLE_AGAIN:
        return -EAGAIN;
    case NLE_NOMEM:
        return -ENOBUFS; /* recv's ENOBUFS maps to NLE_NOMEM */
    case NLE_PERM:
        return -EPERM;
    case NLE_NOACCESS:
        return -EACCES;
    case NLE_INTR:
        return -EINTR;
    case NLE_BAD_SOCK:
        return -EBADF;
    case NLE_PROTO_MISMATCH:
        return -EPROTONOSUPPORT;
    case NLE_OPNOTSUPP:
        return -EOPNOTSUPP;
    default:
        return -EIO;
    }
}

static int procmon_open_events(uint64_t rcvbuf_bytes, uint32_t events, struct procmon **ret)
{
    struct procmon *pm = calloc(1, sizeof(*pm));
    int r;
    if (!pm)
        return -ENOMEM;
    pm->cb = nl_cb_alloc(NL_CB_DEFAULT);
    pm->sk = pm->cb ? nl_socket_alloc_cb(pm->cb) : NULL;
    if (!pm->sk) {
        r = -ENOMEM;
        goto fail;
    }
    /* Events are unsolicited: no sequence numbers to check. */
    nl_socket_disable_seq_check(pm->sk);
    nl_socket_disable_auto_ack(pm->sk);
    for (unsigned i = 0; i < RECV_VLEN; i++) {
        pm->iov[i] = (struct iovec){.iov_base = pm->bufs[i], .iov_len = RECV_BUF};
        pm->msgs[i].msg_hdr = (struct msghdr){
            .msg_name = &pm->src[i],
            .msg_namelen = sizeof(pm->src[i]),
            .msg_iov = &pm->iov[i],
            .msg_iovlen = 1,
        };
    }

    r = nl_connect(pm->sk, NETLINK_CONNECTOR);
    if (r < 0) {
        r = log_error_errno(nlerr_to_errno(r), "proc connector: netlink socket: %m");
        goto fail;
    }
    r = nl_socket_set_nonblocking(pm->sk);
    if (r < 0) {
        r = nlerr_to_errno(r);
        goto fail;
    }
    if (rcvbuf_bytes > 0) {
        r = procmon_set_rcvbuf(pm, rcvbuf_bytes);
        if (r < 0)
            goto fail;
    }
    r = nl_socket_add_membership(pm->sk, CN_IDX_PROC);
    if (r < 0) {
        r = log_error_errno(nlerr_to_errno(r), "proc connector: joining the process events group: %m");
        goto fail;
    }
    /* Plain LISTEN first: every kernel accepts it (and acks it). */
    r = send_mcast_op(pm, PROC_CN_MCAST_LISTEN, NULL);
    if (r < 0) {
        log_error_errno(r, "proc connector: PROC_CN_MCAST_LISTEN: %m");
        goto fail;
    }
    /* Then narrow it with the event filter. Kernels before 6.6 return early
     * on any request that is not exactly 4 bytes (no ack, no error), leaving
     * the plain LISTEN in force; 6.6+ switch this socket to the mask (and the
     * ack of this request, what = 0, is itself filtered out). On 6.18 a gid
     * change arrives without the mask and not with it (test-procmon). */
    r = send_mcast_op(pm, PROC_CN_MCAST_LISTEN, &events);
    if (r < 0)
        log_debug_errno(r, "proc connector: event filter request: %m, receiving every event");
    else
        pm->filtered = kernel_has_event_filter();
    if (events != TS_PROC_EVENTS_WANTED && !pm->filtered) {
        /* a socket for some events only would get every one */
        r = -EOPNOTSUPP;
        goto fail;
    }
    log_debug("proc connector: listening%s (events 0x%x)", pm->filtered ? " with the event filter" : ", unfiltered",
              events);
    *ret = pm;
    return 0;

fail:
    procmon_free(pm);
    return r;
}

int procmon_open(uint64_t rcvbuf_bytes, struct procmon **ret)
{
    return procmon_open_events(rcvbuf_bytes, TS_PROC_EVENTS_WANTED, ret);
}

int procmon_open_exec(uint64_t rcvbuf_bytes, struct procmon **ret)
{
    return procmon_open_events(rcvbuf_bytes, PROC_EVENT_EXEC, ret);
}

int procmon_hear_comm(struct procmon *pm, bool on)
{
    if (!pm->filtered)
        return -EOPNOTSUPP;
    uint32_t events = on ? TS_PROC_EVENTS_WANTED : TS_PROC_EVENTS_WANTED & ~(uint32_t)PROC_EVENT_COMM;
    return send_mcast_op(pm, PROC_CN_MCAST_LISTEN, &events);
}

void procmon_free(struct procmon *pm)
{
    if (!pm)
        return;
    if (pm->sk && nl_socket_get_fd(pm->sk) >= 0)
        (void)send_mcast_op(pm, PROC_CN_MCAST_IGNORE, NULL);
    nl_socket_free(pm->sk);
    nl_cb_put(pm->cb);
    free(pm);
}

int procmon_fd(const struct procmon *pm) { return nl_socket_get_fd(pm->sk); }

int procmon_filtered(const struct procmon *pm) { return pm->filtered; }

int procmon_dispatch(struct procmon *pm, procmon_event_fn fn, void *userdata)
{
    int fd = nl_socket_get_fd(pm->sk);
    bool overflow = false;
    int err = 0;

    pm->fn = fn;
    pm->userdata = userdata;
    pm->handled = 0;
    pm->fn_error = 0;
    /* Until a short batch: the socket was empty then, and one more
     * recvmmsg() would only say EAGAIN (a tenth of the daemon's syscalls in
     * a fork storm). What comes later, an overflow too (EPOLLERR), wakes
     * the loop again. */
    bool drained = false;
    for (unsigned got = 0;;) {
        while (pm->next < pm->received && err == 0) {
            unsigned i = pm->next++;
            assert(pm->received <= RECV_VLEN);
            if (handle_datagram(pm, pm->bufs[i], pm->msgs[i].msg_len, pm->msgs[i].msg_hdr.msg_flags, &pm->src[i]) < 0)
                err = pm->fn_error;
        }
        if (err < 0 || got >= DISPATCH_BATCH || drained)
            break;
        for (unsigned i = 0; i < RECV_VLEN; i++)
            pm->msgs[i].msg_hdr.msg_namelen = sizeof(pm->src[i]);
        int n = recvmmsg(fd, pm->msgs, RECV_VLEN, MSG_DONTWAIT, NULL);
        if (n < 0) {
            int r = -errno;
            if (r == -EAGAIN)
                break;
            if (r == -EINTR)
                continue;
            if (r == -ENOBUFS) {
                /* The kernel dropped events; what is queued after it is still good. */
                pm->counters.overflows++;
                if (!overflow)
                    log_debug("proc connector: receive buffer overflowed, events lost");
                overflow = true;
                continue;
            }
            err = log_error_errno(r, "proc connector: receiving: %m");
            break;
        }
        got += (unsigned)n;
        pm->next = 0;
        pm->received = (unsigned)n;
        drained = (unsigned)n < RECV_VLEN;
    }
    pm->fn = NULL;
    pm->userdata = NULL;
    if (err < 0)
        return err;
    if (overflow)
        return -ENOBUFS;
    return pm->handled;
}

const struct procmon_counters *procmon_counters(const struct procmon *pm) { return &pm->counters; }
