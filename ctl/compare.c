/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "compare.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client.h"
#include "compare-output.h"
#include "compare-read.h"
#include "compare-stats.h"
#include "control.h"
#include "table.h"
#include "util.h"
#include "varlink.h"

#define CALL_TIMEOUT_MS 30000
/* The daemon drops a connection idle for 30 s, and with it the pause the
 * connection holds: a call every 10 s keeps it. */
#define KEEPALIVE_MS 10000

enum { EXIT_OK = 0, EXIT_DAEMON_ERROR = 1, EXIT_USAGE = 2, EXIT_NO_CONNECTION = 3, EXIT_PERMISSION = 4 };

static volatile sig_atomic_t interrupted;
static void on_signal(int sig) { interrupted = sig; }

struct opts {
    const char *socket_path, *csv, *root;
    bool json;
    unsigned duration_ms, block_ms;
};

/* tid -> class, from the daemon's dump */
struct class_entry {
    pid_t tid;
    char cls; /* 'j'itter, 'i'ntensive, 'g' ignore, 0 unknown */
};
struct class_map {
    size_t n;
    struct class_entry *e;
};

struct session {
    int fd;
    pid_t daemon_pid;
    struct class_map classes;
};

static int call(struct session *s, const char *method, bool session_param, struct json_object **reply, char **error)
{
    struct json_object *p = json_object_new_object();
    if (!p)
        return -ENOMEM;
    if (session_param)
        json_object_object_add(p, "session", json_object_new_boolean(true));
    int r = ctl_call_fd(s->fd, method, p, CALL_TIMEOUT_MS, reply, error);
    json_object_put(p);
    return r;
}

/* A call whose reply only matters when it fails. */
static int call_checked(struct session *s, const char *method, bool session_param)
{
    struct json_object *reply = NULL;
    _cleanup_free_ char *error = NULL;
    int r = call(s, method, session_param, &reply, &error);
    json_object_put(reply);
    if (r < 0) {
        fprintf(stderr, "turbosched-ctl: %s the daemon: %s\n", ctl_call_stage, strerror(-r));
        return EXIT_NO_CONNECTION;
    }
    if (error) {
        if (strcmp(error, TS_ERROR_PERMISSION_DENIED) == 0) {
            fprintf(stderr, "turbosched-ctl: permission denied: compare pauses and resumes the daemon, "
                            "which only root may do\n");
            return EXIT_PERMISSION;
        }
        fprintf(stderr, "turbosched-ctl: the daemon answered %s to %s\n", error, method);
        return EXIT_DAEMON_ERROR;
    }
    return EXIT_OK;
}

static int by_class_tid(const void *a, const void *b)
{
    pid_t x = ((const struct class_entry *)a)->tid, y = ((const struct class_entry *)b)->tid;
    return (x > y) - (x < y);
}

static void classes_from_dump(struct class_map *m, struct json_object *dump)
{
    struct json_object *tasks;
    if (!json_object_object_get_ex(dump, "tasks", &tasks) || !json_object_is_type(tasks, json_type_array))
        return;
    size_t n = json_object_array_length(tasks);
    struct class_entry *e = realloc(m->e, (n ? n : 1) * sizeof *e);
    if (!e)
        return;
    m->e = e;
    m->n = 0;
    for (size_t i = 0; i < n; i++) {
        struct json_object *t = json_object_array_get_idx(tasks, i), *v;
        if (!json_object_object_get_ex(t, "tid", &v))
            continue;
        pid_t tid = (pid_t)json_object_get_int64(v);
        const char *c = json_object_object_get_ex(t, "class", &v) ? json_object_get_string(v) : "";
        char cls = !c                            ? 0
                   : strcmp(c, "jitter") == 0    ? 'j'
                   : strcmp(c, "intensive") == 0 ? 'i'
                   : strcmp(c, "ignore") == 0    ? 'g'
                                                 : 0;
        m->e[m->n++] = (struct class_entry){tid, cls};
    }
    qsort(m->e, m->n, sizeof *m->e, by_class_tid);
}

static char class_of(const struct class_map *m, pid_t tid)
{
    struct class_entry key = {.tid = tid};
    const struct class_entry *e = m->n ? bsearch(&key, m->e, m->n, sizeof *m->e, by_class_tid) : NULL;
    return e ? e->cls : 0;
}

static int refresh_classes(struct session *s)
{
    struct json_object *reply = NULL;
    _cleanup_free_ char *error = NULL;
    int r = ctl_call_fd(s->fd, "io.turbosched.Dump", NULL, CALL_TIMEOUT_MS, &reply, &error);
    if (r >= 0 && !error)
        classes_from_dump(&s->classes, reply);
    json_object_put(reply);
    return r < 0 ? r : error ? -EIO : 0;
}

/* The plan's CPUs from Status; false when jitter is not confined. */
static bool plan_cpus(struct session *s, bool *in_mask, unsigned n)
{
    struct json_object *reply = NULL, *plan, *v;
    _cleanup_free_ char *error = NULL;
    bool restricted = false;
    if (call(s, "io.turbosched.Status", false, &reply, &error) >= 0 && !error &&
        json_object_object_get_ex(reply, "plan", &plan) && json_object_object_get_ex(plan, "restricted", &v) &&
        json_object_get_boolean(v) && json_object_object_get_ex(plan, "cpus", &v)) {
        cpu_set_t set;
        if (cpulist_parse(json_object_get_string(v), &set) == 0) {
            restricted = true;
            for (unsigned c = 0; c < n; c++)
                in_mask[c] = CPU_ISSET(c, &set);
        }
    }
    json_object_put(reply);
    return restricted;
}

struct snapshot {
    uint64_t at_ms;
    struct cmp_cpus cpus;
    struct cmp_rapl rapl;
    bool have_rapl;
    struct cmp_threads threads, daemon;
};

static int snapshot_take(const struct opts *o, const struct session *s, struct snapshot *sn)
{
    sn->at_ms = now_ms();
    int r = cmp_read_cpus(o->root, &sn->cpus);
    if (r < 0)
        return r;
    sn->have_rapl = cmp_read_rapl(o->root, &sn->rapl) == 0;
    if ((r = cmp_read_threads(o->root, 0, &sn->threads)) < 0)
        return r;
    return cmp_read_threads(o->root, s->daemon_pid, &sn->daemon);
}

static void snapshot_done(struct snapshot *sn)
{
    cmp_threads_done(&sn->threads);
    cmp_threads_done(&sn->daemon);
}

static int wakers_add(struct wakers *w, enum cmp_mode m, const struct cmp_thread *t, char cls, uint64_t slices)
{
    for (size_t i = 0; i < w->n; i++)
        if (w->w[i].mode == m && w->w[i].cpu == t->last_cpu && w->w[i].tid == t->tid) {
            w->w[i].slices += slices;
            return 0;
        }
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 256;
        struct waker *p = realloc(w->w, cap * sizeof *p);
        if (!p)
            return -ENOMEM;
        w->w = p;
        w->cap = cap;
    }
    struct waker *x = &w->w[w->n++];
    *x = (struct waker){.mode = m, .cpu = t->last_cpu, .tid = t->tid, .cls = cls, .slices = slices};
    snprintf(x->comm, sizeof x->comm, "%s", t->comm);
    return 0;
}

/* What happened between two snapshots. freq_sum/freq_n: the frequency
 * samples taken during the block. */
static void block_measure(const struct snapshot *a, const struct snapshot *b, const struct class_map *cls,
                          const double *freq_sum, const unsigned *freq_n, struct cmp_block_result *res,
                          struct wakers *w)
{
    double secs = (double)(b->at_ms - a->at_ms) / 1000.0;
    res->seconds = secs;
    res->n_cpus = MIN(b->cpus.n_cpus, CMP_MAX_CPUS);
    for (unsigned c = 0; c < res->n_cpus; c++) {
        const struct cmp_cpu *x = &a->cpus.cpu[c], *y = &b->cpus.cpu[c];
        res->wakeups_ps[c] = res->idle_pct[c] = res->freq_mhz[c] = NAN;
        if (!x->present || !y->present)
            continue;
        if (x->has_cpuidle && y->has_cpuidle) {
            res->wakeups_ps[c] = (double)(y->idle_entries - x->idle_entries) / secs;
            res->idle_pct[c] = MIN(100.0, (double)(y->idle_time_us - x->idle_time_us) / 1e4 / secs);
        } else {
            res->wakeups_ps[c] = (double)(y->irq_wakeups - x->irq_wakeups) / secs;
            uint64_t tot = y->total_jiffies - x->total_jiffies;
            if (tot)
                res->idle_pct[c] = 100.0 * (double)(y->idle_jiffies - x->idle_jiffies) / (double)tot;
        }
        if (freq_n[c])
            res->freq_mhz[c] = freq_sum[c] / freq_n[c] / 1000.0;
    }
    res->energy_w = a->have_rapl && b->have_rapl ? cmp_rapl_joules(&a->rapl, &b->rapl) / secs : NAN;

    uint64_t irun = 0, iwait = 0, jwait = 0, jslices = 0;
    for (size_t i = 0; i < b->threads.n; i++) {
        const struct cmp_thread *y = &b->threads.t[i], *x = cmp_threads_find(&a->threads, y->tid);
        if (!x || x->start_time != y->start_time || y->slices < x->slices)
            continue; /* new in this block, or the TID was reused */
        char c = class_of(cls, y->tid);
        if (c == 'i') {
            irun += y->run_ns - x->run_ns;
            iwait += y->wait_ns - x->wait_ns;
        } else if (c == 'j') {
            jwait += y->wait_ns - x->wait_ns;
            jslices += y->slices - x->slices;
        }
        if (w && y->slices > x->slices && y->last_cpu >= 0)
            wakers_add(w, res->mode, y, c, y->slices - x->slices);
    }
    res->intensive_cpu_pct = (double)irun / 1e7 / secs;
    res->intensive_wait_ms_ps = (double)iwait / 1e6 / secs;
    res->jitter_wait_ms_per_wakeup = jslices ? (double)jwait / 1e6 / (double)jslices : NAN;

    uint64_t drun = 0, dslices = 0;
    for (size_t i = 0; i < b->daemon.n; i++) {
        const struct cmp_thread *y = &b->daemon.t[i], *x = cmp_threads_find(&a->daemon, y->tid);
        drun += y->run_ns - (x ? x->run_ns : 0);
        dslices += y->slices - (x ? x->slices : 0);
    }
    res->daemon_cpu_pct = (double)drun / 1e7 / secs;
    res->daemon_wakeups_ps = (double)dslices / secs;
}

/* Sleeps until deadline, keeping the connection alive and sampling the
 * CPU frequency now and then; false when interrupted or the daemon went. */
static bool wait_block(const struct opts *o, struct session *s, uint64_t deadline, double *freq_sum, unsigned *freq_n)
{
    uint64_t next_keepalive = now_ms() + KEEPALIVE_MS;
    for (;;) {
        uint64_t now = now_ms();
        if (interrupted)
            return false;
        if (now >= deadline)
            return true;
        uint64_t until = MIN(deadline, next_keepalive);
        struct pollfd p = {.fd = s->fd, .events = POLLIN};
        /* The daemon sends nothing unasked: readable means it closed. */
        int r = poll(&p, 1, (int)(until - now));
        if (r > 0) {
            fprintf(stderr, "turbosched-ctl: the daemon closed the connection\n");
            return false;
        }
        if (now_ms() >= next_keepalive) {
            struct json_object *reply = NULL;
            _cleanup_free_ char *error = NULL;
            if (call(s, "org.varlink.service.GetInfo", false, &reply, &error) < 0) {
                fprintf(stderr, "turbosched-ctl: lost the daemon: %s\n", strerror(errno));
                json_object_put(reply);
                return false;
            }
            json_object_put(reply);
            next_keepalive = now_ms() + KEEPALIVE_MS;
            struct cmp_cpus c;
            if (cmp_read_cpus(o->root, &c) == 0)
                for (unsigned i = 0; i < c.n_cpus; i++)
                    if (c.cpu[i].freq_khz) {
                        freq_sum[i] += c.cpu[i].freq_khz;
                        freq_n[i]++;
                    }
        }
    }
}

static int parse_args(int argc, char **argv, struct opts *o)
{
    enum { OPT_CSV = 0x100, OPT_DURATION, OPT_BLOCK, OPT_ROOT };
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'},
        {"socket", required_argument, NULL, 's'},
        {"no-color", no_argument, NULL, 'C'},
        {"no-colour", no_argument, NULL, 'C'},
        {"csv", required_argument, NULL, OPT_CSV},
        {"duration", required_argument, NULL, OPT_DURATION},
        {"block", required_argument, NULL, OPT_BLOCK},
        {"root", required_argument, NULL, OPT_ROOT},
        {0},
    };
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "js:", opts, NULL)) >= 0) {
        switch (c) {
        case 'j':
            o->json = true;
            break;
        case 's':
            o->socket_path = optarg;
            break;
        case 'C':
            break;
        case OPT_CSV:
            o->csv = optarg;
            break;
        case OPT_DURATION:
        case OPT_BLOCK: {
            unsigned ms;
            if (parse_duration_ms(optarg, &ms) < 0 || ms < 1000) {
                fprintf(stderr, "turbosched-ctl: '%s' is not a duration of at least 1s (e.g. 30s, 10min)\n", optarg);
                return EXIT_USAGE;
            }
            *(c == OPT_DURATION ? &o->duration_ms : &o->block_ms) = ms;
            break;
        }
        case OPT_ROOT:
            o->root = optarg;
            break;
        default:
            fprintf(stderr, "Try 'turbosched-ctl --help'.\n");
            return EXIT_USAGE;
        }
    }
    if (optind >= argc || strcmp(argv[optind], "compare") != 0 || optind + 1 != argc) {
        fprintf(stderr, "turbosched-ctl: usage: compare [--duration 10min] [--block 30s] [--json] [--csv FILE]\n");
        return EXIT_USAGE;
    }
    return -1;
}

/* Whether the daemon is paused already (by turbosched-ctl pause, or by
 * another comparison): comparing then would measure nothing. */
static int check_not_paused(struct session *s)
{
    struct json_object *reply = NULL, *p, *v;
    _cleanup_free_ char *error = NULL;
    int r = call(s, "io.turbosched.Status", false, &reply, &error);
    int ret = EXIT_OK;
    if (r < 0 || error) {
        fprintf(stderr, "turbosched-ctl: status: %s\n", error ? error : strerror(-r));
        ret = r < 0 ? EXIT_NO_CONNECTION : EXIT_DAEMON_ERROR;
    } else if (json_object_object_get_ex(reply, "pause", &p) && json_object_object_get_ex(p, "paused", &v) &&
               json_object_get_boolean(v)) {
        fprintf(stderr, "turbosched-ctl: the daemon is paused (%s): nothing to compare\n",
                json_object_object_get_ex(p, "admin", &v) && json_object_get_boolean(v)
                    ? "turbosched-ctl resume first"
                    : "another comparison is running");
        ret = EXIT_DAEMON_ERROR;
    }
    json_object_put(reply);
    return ret;
}

/* Connect and check that the caller may pause: Resume for this session is
 * a no-op that only root may make, so a non-root caller is refused here,
 * before anything is measured. Returns EXIT_OK or the exit status. */
static int open_session(const struct opts *o, struct session *s)
{
    s->fd = ctl_connect(o->socket_path);
    if (s->fd < 0) {
        fprintf(stderr, "turbosched-ctl: connecting to %s: %s\n", o->socket_path, strerror(-s->fd));
        return s->fd == -EACCES || s->fd == -EPERM ? EXIT_PERMISSION : EXIT_NO_CONNECTION;
    }
    struct ucred cred;
    socklen_t cl = sizeof cred;
    int ret = EXIT_NO_CONNECTION;
    if (getsockopt(s->fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0)
        fprintf(stderr, "turbosched-ctl: SO_PEERCRED: %m\n");
    else {
        s->daemon_pid = cred.pid;
        ret = check_not_paused(s);
        if (ret == EXIT_OK)
            ret = call_checked(s, "io.turbosched.Resume", true);
    }
    if (ret != EXIT_OK) {
        close(s->fd);
        s->fd = -1;
    }
    return ret;
}

/* What the blocks found, across the run. */
struct run {
    struct cmp_block_result *res;
    struct wakers w;
    bool idle_cpus[CMP_MAX_CPUS], any_idle, rapl, cpufreq, cpuidle;
    int done, n_blocks; /* blocks measured, of n_blocks */
};

/* The CPUs a packed block's plan left out are the ones to keep idle. */
static void note_idle_cpus(struct session *s, const struct cmp_block_result *r, struct run *run)
{
    bool in_mask[CMP_MAX_CPUS] = {0};
    if (!plan_cpus(s, in_mask, r->n_cpus))
        return;
    for (unsigned c = 0; c < r->n_cpus; c++)
        if (!in_mask[c]) {
            run->idle_cpus[c] = true;
            run->any_idle = true;
        }
}

/* One block: switch mode, measure between two snapshots. Returns EXIT_OK
 * or the exit status that ends the run. */
static int run_block(const struct opts *o, struct session *s, const struct cmp_block *blk, struct cmp_block_result *res,
                     struct run *run)
{
    int ret = call_checked(s, blk->mode == CMP_PAUSED ? "io.turbosched.Pause" : "io.turbosched.Resume", true);
    if (ret != EXIT_OK)
        return ret;
    struct snapshot a = {0}, b = {0};
    double freq_sum[CMP_MAX_CPUS] = {0};
    unsigned freq_n[CMP_MAX_CPUS] = {0};
    int r = snapshot_take(o, s, &a);
    if (r < 0) {
        fprintf(stderr, "turbosched-ctl: reading /proc and /sys: %s\n", strerror(-r));
        snapshot_done(&a);
        return EXIT_DAEMON_ERROR;
    }
    bool ok = wait_block(o, s, a.at_ms + o->block_ms, freq_sum, freq_n) && snapshot_take(o, s, &b) == 0 &&
              refresh_classes(s) == 0;
    if (ok) {
        for (unsigned c = 0; c < b.cpus.n_cpus; c++) {
            if (b.cpus.cpu[c].freq_khz) {
                freq_sum[c] += a.cpus.cpu[c].freq_khz + b.cpus.cpu[c].freq_khz;
                freq_n[c] += 2;
                run->cpufreq = true;
            }
            run->cpuidle |= b.cpus.cpu[c].has_cpuidle;
        }
        run->rapl |= a.have_rapl && b.have_rapl;
        *res = (struct cmp_block_result){.mode = blk->mode, .warmup = blk->warmup};
        block_measure(&a, &b, &s->classes, freq_sum, freq_n, res, blk->warmup ? NULL : &run->w);
        if (blk->mode == CMP_PACKED && !blk->warmup)
            note_idle_cpus(s, res, run);
        run->done++;
        if (!o->json)
            fprintf(stderr, "  block %d/%d %s%s done\n", run->done, run->n_blocks, cmp_mode_name(blk->mode),
                    blk->warmup ? " (warm-up)" : "");
    }
    snapshot_done(&a);
    snapshot_done(&b);
    if (!ok)
        return interrupted ? EXIT_OK : EXIT_NO_CONNECTION;
    return EXIT_OK;
}

/* Print (and write) what was measured. Returns the exit status. */
static int report(const struct opts *o, struct run *run, int ret)
{
    struct cmp_summary sum[_CMP_MODE_MAX];
    cmp_summarize(run->res, (size_t)run->done, CMP_PAUSED, &sum[CMP_PAUSED]);
    cmp_summarize(run->res, (size_t)run->done, CMP_PACKED, &sum[CMP_PACKED]);
    if (!sum[CMP_PAUSED].n_blocks || !sum[CMP_PACKED].n_blocks) {
        fprintf(stderr, "turbosched-ctl: no measured block of %s: nothing to report\n",
                sum[CMP_PAUSED].n_blocks ? "packing" : "the paused daemon");
        return ret != EXIT_OK ? ret : EXIT_DAEMON_ERROR;
    }
    const bool *idle = run->any_idle ? run->idle_cpus : NULL;
    char verdict[512];
    cmp_verdict(&sum[CMP_PAUSED], &sum[CMP_PACKED], idle, verdict, sizeof verdict);
    if (o->json)
        print_json_out(run->res, (size_t)run->done, sum, run->idle_cpus, run->any_idle, &run->w, verdict);
    else
        print_text(stdout, run->res, (size_t)run->done, sum, run->idle_cpus, run->any_idle, &run->w, run->rapl,
                   run->cpufreq, run->cpuidle, verdict);
    if (o->csv) {
        /* each writer says why it failed, naming the file */
        if (write_csv(o->csv, run->res, (size_t)run->done) < 0)
            ret = EXIT_DAEMON_ERROR;
        else if (in_path("gnuplot"))
            (void)write_plot(o->csv, sum[0].n_cpus);
    }
    if ((fflush(stdout) != 0 || ferror(stdout)) && ret == EXIT_OK) {
        fprintf(stderr, "turbosched-ctl: writing the report failed\n");
        ret = EXIT_DAEMON_ERROR;
    }
    return ret;
}

int ctl_compare_main(int argc, char **argv)
{
    struct opts o = {.socket_path = CONTROL_SOCKET_PATH_DEFAULT, .root = "/", .duration_ms = 600000, .block_ms = 30000};
    int ret = parse_args(argc, argv, &o);
    if (ret >= 0)
        return ret;
    static struct cmp_block sched[CMP_MAX_BLOCKS];
    int n = cmp_schedule(o.duration_ms, o.block_ms, sched, CMP_MAX_BLOCKS);
    if (n < 0) {
        fprintf(stderr, "turbosched-ctl: --duration must hold at least 4 blocks (2 warm-up, 1 paused, 1 packed)%s\n",
                n == -E2BIG ? " and at most 4096" : "");
        return EXIT_USAGE;
    }
    struct session s = {.fd = -1};
    if ((ret = open_session(&o, &s)) != EXIT_OK)
        return ret;

    /* Interrupted: stop measuring, resume, report what was measured. The
     * pause is tied to the connection, so even a killed client resumes. */
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);

    static struct cmp_block_result res[CMP_MAX_BLOCKS];
    struct run run = {.res = res, .n_blocks = n};
    if (!o.json)
        fprintf(stderr, "Comparing: %d blocks of %u s, about %u s in all; Ctrl-C stops and resumes packing\n", n,
                o.block_ms / 1000, (unsigned)(n * (uint64_t)o.block_ms / 1000));
    for (int i = 0; i < n && !interrupted && ret == EXIT_OK; i++)
        ret = run_block(&o, &s, &sched[i], &res[i], &run);
    /* Pack again now; closing the connection would too. */
    struct json_object *reply = NULL;
    _cleanup_free_ char *error = NULL;
    (void)call(&s, "io.turbosched.Resume", true, &reply, &error);
    json_object_put(reply);
    close(s.fd);
    if (interrupted)
        fprintf(stderr, "turbosched-ctl: interrupted after %d of %d blocks; packing resumed\n", run.done, n);
    ret = report(&o, &run, ret);
    free(run.w.w);
    free(s.classes.e);
    return ret;
}
