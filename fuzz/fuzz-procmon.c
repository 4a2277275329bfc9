/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target for the proc connector decoder. The input is one
 * datagram: it is decoded as a whole (as procmon_dispatch's callback sees a
 * message), then walked as a sequence of netlink messages, each decoded one
 * is applied to a small task table with procscan_handle_event against an
 * empty /proc (every read fails as for a task that has exited), so table
 * bookkeeping under arbitrary event orders is exercised too. Besides not
 * crashing: a decoded comm is always NUL-terminated, and the table never
 * exceeds its bound. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/netlink.h>

#include "log.h"
#include "procmon.h"
#include "procscan.h"
#include "task.h"

static void quiet(int level, const char *msg, void *userdata) { (void)level, (void)msg, (void)userdata; }

static void check(const struct procmon_event *ev)
{
    if ((unsigned)ev->kind > PROCMON_UID)
        abort();
    if (ev->kind == PROCMON_COMM && memchr(ev->comm.comm, '\0', sizeof(ev->comm.comm)) == NULL)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct procmon_event ev;
    struct task_table *tt;

    log_set_sink(quiet, NULL);
    if (procmon_decode(data, size, &ev) == 0)
        check(&ev);

    if (task_table_new(8, &tt) < 0)
        return 0;
    /* seed the table from the input's own TIDs so exits and reuses hit */
    for (size_t off = 0; off + NLMSG_HDRLEN <= size;) {
        struct nlmsghdr nlh;
        memcpy(&nlh, data + off, sizeof(nlh));
        size_t len = nlh.nlmsg_len;
        if (len < NLMSG_HDRLEN || len > size - off)
            break;
        if (procmon_decode(data + off, len, &ev) == 0) {
            check(&ev);
            if (ev.tid > 0 && ev.kind == PROCMON_FORK) {
                struct task t = {.tid = ev.tid, .pid = ev.tgid, .rule = -1};
                task_table_add(tt, &t, NULL);
            }
            procscan_handle_event("/nonexistent-root", tt, &ev, NULL);
            if (task_table_count(tt) > task_table_max(tt))
                abort();
        }
        off += NLMSG_ALIGN(len);
    }
    task_table_free(tt);
    return 0;
}
