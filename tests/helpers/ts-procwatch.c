/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Watches every task on the machine the way the daemon does (procmon + task
 * table + procscan) and answers queries for the integration test.
 *
 *   ts-procwatch --dir DIR [--rcvbuf BYTES] [--rcvbuf-after-overflow BYTES]
 *                [--slow-us N] [--debug]
 *
 * After the startup scan it creates DIR/ready. On SIGUSR1 it handles what is
 * queued, then writes DIR/table ("tid\tpid\tcomm\texe" per tracked thread;
 * exe is read once per process, at first sight and on exec) and DIR/stats
 * ("name value" lines), each by rename so readers never see half a file.
 * On ENOBUFS it rescans /proc (and, with --rcvbuf-after-overflow, sets that
 * buffer size after the first overflow). --slow-us makes each event cost that long, so
 * a small receive buffer overflows for sure. SIGTERM/SIGINT end it. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "log.h"
#include "procmon.h"
#include "procscan.h"
#include "task.h"
#include "util.h"

#define EXE_BUCKETS 4096

struct exe_entry {
    pid_t pid;
    char *exe;
    struct exe_entry *next;
};

struct watch {
    const char *dir;
    struct task_table *tt;
    struct procmon *pm;
    struct exe_entry *exe[EXE_BUCKETS];
    unsigned slow_us;
    uint64_t rcvbuf_after_overflow;
    bool grown;
    uint64_t rescans, rescan_us, handle_errors;
};

static struct exe_entry **exe_slot(struct watch *w, pid_t pid)
{
    struct exe_entry **e = &w->exe[(unsigned)pid % EXE_BUCKETS];
    while (*e && (*e)->pid != pid)
        e = &(*e)->next;
    return e;
}

static void exe_forget(struct watch *w, pid_t pid)
{
    struct exe_entry **e = exe_slot(w, pid);
    if (*e) {
        struct exe_entry *d = *e;
        *e = d->next;
        free(d->exe);
        free(d);
    }
}

static void exe_read(struct watch *w, pid_t pid)
{
    char path[64], buf[PATH_MAX];
    snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
    ssize_t n = readlink(path, buf, sizeof buf - 1);
    if (n < 0)
        n = snprintf(buf, sizeof buf, "-"); /* kernel threads have none */
    buf[n] = '\0';
    struct exe_entry **e = exe_slot(w, pid);
    if (!*e) {
        *e = calloc(1, sizeof(**e));
        if (!*e)
            return;
        (*e)->pid = pid;
    }
    free((*e)->exe);
    (*e)->exe = strdup(buf);
}

static int on_new(struct task *t, void *ud)
{
    struct watch *w = ud;
    if (t->tid == t->pid)
        exe_read(w, t->pid);
    return 0;
}

static void on_gone(struct task *t, void *ud)
{
    struct watch *w = ud;
    if (t->tid == t->pid)
        exe_forget(w, t->pid);
}

static int on_event(const struct procmon_event *ev, void *userdata)
{
    struct watch *w = userdata;
    struct procscan_hooks h = {.task_new = on_new, .task_gone = on_gone, .userdata = w};
    if (w->slow_us)
        usleep(w->slow_us);
    int r = procscan_handle_event(NULL, w->tt, ev, &h);
    if (r < 0)
        w->handle_errors++;
    if (ev->kind == PROCMON_EXEC && ev->tid == ev->tgid && task_table_find(w->tt, ev->tid))
        exe_read(w, ev->tgid);
    return 0;
}

static int rescan(struct watch *w)
{
    struct procscan_hooks h = {.task_new = on_new, .task_gone = on_gone, .userdata = w};
    struct procscan_stats st;
    int r = procscan_reconcile(NULL, w->tt, &h, &st);
    w->rescans++;
    w->rescan_us += st.duration_us;
    log_info("rescan %u: %u live, %u added, %u reused, %u removed, %" PRIu64 " us", st.generation, st.seen, st.added,
             st.reused, st.removed, st.duration_us);
    return r;
}

static int write_atomic(struct watch *w, const char *name, char *text, size_t len)
{
    char path[PATH_MAX], tmp[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", w->dir, name);
    snprintf(tmp, sizeof tmp, "%s/.%s.tmp", w->dir, name);
    FILE *f = fopen(tmp, "we");
    if (!f)
        return -errno;
    fwrite(text, 1, len, f);
    if (fclose(f) != 0 || rename(tmp, path) < 0)
        return -errno;
    return 0;
}

static void dump(struct watch *w)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return;
    size_t iter = 0;
    struct task *t;
    while ((t = task_table_next(w->tt, &iter))) {
        struct exe_entry *e = *exe_slot(w, t->pid);
        fprintf(f, "%d\t%d\t%s\t%s\n", (int)t->tid, (int)t->pid, t->comm, e && e->exe ? e->exe : "?");
    }
    fclose(f);
    write_atomic(w, "table", text, len);
    free(text);

    const struct procmon_counters *c = procmon_counters(w->pm);
    f = open_memstream(&text, &len);
    if (!f)
        return;
    fprintf(f,
            "fork %" PRIu64 "\nexec %" PRIu64 "\ncomm %" PRIu64 "\nexit %" PRIu64 "\nuid %" PRIu64 "\nother %" PRIu64
            "\nmalformed %" PRIu64 "\noverflows %" PRIu64 "\nrescans %" PRIu64 "\nrescan_us %" PRIu64
            "\ntracked %u\nmemory_bytes %zu\nhandle_errors %" PRIu64 "\nfiltered %d\n",
            c->fork, c->exec, c->comm, c->exit, c->uid, c->other, c->malformed, c->overflows, w->rescans, w->rescan_us,
            task_table_count(w->tt), task_table_memory_bytes(w->tt), w->handle_errors, procmon_filtered(w->pm));
    fclose(f);
    write_atomic(w, "stats", text, len);
    free(text);
}

/* Drain the socket; rescan after lost events. One rescan per wakeup: under
 * a storm the next overflow may come while rescanning, and the loop must
 * still answer signals. */
static int pump(struct watch *w)
{
    int r = procmon_dispatch(w->pm, on_event, w);
    if (r != -ENOBUFS)
        return r;
    if (w->rcvbuf_after_overflow && !w->grown) {
        w->grown = true;
        procmon_set_rcvbuf(w->pm, w->rcvbuf_after_overflow);
    }
    r = rescan(w);
    return r == -ENOSPC ? 0 : r;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"dir", required_argument, NULL, 'd'},     {"rcvbuf", required_argument, NULL, 'r'},
        {"slow-us", required_argument, NULL, 's'}, {"rcvbuf-after-overflow", required_argument, NULL, 'g'},
        {"debug", no_argument, NULL, 'D'},         {},
    };
    struct watch w = {0};
    uint64_t rcvbuf = 8 << 20;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) >= 0) {
        switch (c) {
        case 'd':
            w.dir = optarg;
            break;
        case 'r':
            if (parse_size(optarg, &rcvbuf) < 0)
                return 2;
            break;
        case 's':
            if (parse_uint(optarg, &w.slow_us) < 0)
                return 2;
            break;
        case 'g':
            if (parse_size(optarg, &w.rcvbuf_after_overflow) < 0)
                return 2;
            break;
        case 'D':
            log_set_max_level(LOG_DEBUG);
            break;
        default:
            return 2;
        }
    }
    if (!w.dir) {
        fprintf(stderr, "usage: %s --dir DIR [--rcvbuf BYTES] [--slow-us N]\n", argv[0]);
        return 2;
    }

    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGUSR1);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);

    int r = task_table_new(1 << 20, &w.tt);
    if (r < 0)
        return 1;
    /* Subscribe before the scan: whatever starts during it is an event. */
    r = procmon_open(rcvbuf, &w.pm);
    if (r < 0) {
        fprintf(stderr, "procmon_open: %s\n", strerror(-r));
        return r == -EPERM ? 77 : 1;
    }
    r = rescan(&w);
    if (r < 0)
        return 1;
    dump(&w);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/ready", w.dir);
    write_atomic(&w, "ready", (char *)"1\n", 2);

    for (;;) {
        struct pollfd p[2] = {{.fd = procmon_fd(w.pm), .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            return 1;
        }
        if (p[0].revents) {
            r = pump(&w);
            if (r < 0)
                log_err("handling events: %s", strerror(-r));
        }
        if (p[1].revents) {
            struct signalfd_siginfo si;
            bool quit = false, want_dump = false;
            while (read(sfd, &si, sizeof si) == sizeof si) {
                if (si.ssi_signo == SIGUSR1)
                    want_dump = true;
                else
                    quit = true;
            }
            if (want_dump) {
                pump(&w);
                dump(&w);
            }
            if (quit)
                break;
        }
    }
    procmon_free(w.pm);
    for (unsigned i = 0; i < EXE_BUCKETS; i++)
        while (w.exe[i]) {
            struct exe_entry *e = w.exe[i];
            w.exe[i] = e->next;
            free(e->exe);
            free(e);
        }
    task_table_free(w.tt);
    return 0;
}
