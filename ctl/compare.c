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
#define TOP_WAKERS 3

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
    char cls;           /* 'j'itter, 'i'ntensive, 'g' ignore, 0 unknown */
};
struct class_map {
    size_t n;
    struct class_entry *e;
};

/* slices attributed to (mode, cpu, tid) over the measured blocks */
struct waker {
    enum cmp_mode mode;
    int cpu;
    pid_t tid;
    char comm[32];
    char cls;
    uint64_t slices;
};
struct wakers {
    size_t n, cap;
    struct waker *w;
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
        char cls = !c ? 0 : strcmp(c, "jitter") == 0 ? 'j' : strcmp(c, "intensive") == 0 ? 'i' : strcmp(c, "ignore") == 0 ? 'g' : 0;
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

static const char *class_name(char c)
{
    return c == 'j' ? "jitter" : c == 'i' ? "intensive" : c == 'g' ? "ignore" : "untracked";
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
            continue;   /* new in this block, or the TID was reused */
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
static bool wait_block(const struct opts *o, struct session *s, uint64_t deadline, double *freq_sum,
                       unsigned *freq_n)
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

static void fmt_spread(char *buf, size_t size, const struct cmp_spread *s, int decimals)
{
    if (!s->n) {
        snprintf(buf, size, "n/a");
        return;
    }
    char m[32], lo[32], hi[32];
    snprintf(m, sizeof m, "%.*f", decimals, s->mean);
    snprintf(lo, sizeof lo, "%.*f", decimals, s->min);
    snprintf(hi, sizeof hi, "%.*f", decimals, s->max);
    snprintf(buf, size, "%s (%s-%s)", m, lo, hi);
}

static void row(FILE *f, const char *label, const struct cmp_spread *pa, const struct cmp_spread *pk, int decimals)
{
    char a[128], k[128];
    fmt_spread(a, sizeof a, pa, decimals);
    fmt_spread(k, sizeof k, pk, decimals);
    fprintf(f, "  %-34s %-24s %s\n", label, a, k);
}

static int by_slices_desc(const void *a, const void *b)
{
    uint64_t x = ((const struct waker *)a)->slices, y = ((const struct waker *)b)->slices;
    return (x < y) - (x > y);
}

/* Seconds measured in mode m. */
static double measured_seconds(const struct cmp_block_result *b, size_t n, enum cmp_mode m)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        if (b[i].mode == m && !b[i].warmup)
            s += b[i].seconds;
    return s;
}

static void print_text(FILE *f, const struct cmp_block_result *b, size_t n, const struct cmp_summary *sum,
                       const bool *idle_cpus, bool any_idle, struct wakers *w, bool rapl, bool cpufreq,
                       bool cpuidle, const char *verdict)
{
    unsigned cpus = MIN(sum[0].n_cpus, sum[1].n_cpus);
    fprintf(f, "Compared %u paused and %u packed blocks of %.0f s (the first of each discarded as warm-up)\n",
            sum[CMP_PAUSED].n_blocks, sum[CMP_PACKED].n_blocks, n ? b[0].seconds : 0);
    fprintf(f, "Mean (min-max across blocks)\n");
    fprintf(f, "  %-34s %-24s %s\n", "", "paused", "packed");
    for (unsigned c = 0; c < cpus; c++) {
        char l[64];
        snprintf(l, sizeof l, "CPU %u wake-ups/s%s", c, any_idle && idle_cpus[c] ? " (kept idle)" : "");
        row(f, l, &sum[0].wakeups_ps[c], &sum[1].wakeups_ps[c], 0);
        snprintf(l, sizeof l, "CPU %u idle %%", c);
        row(f, l, &sum[0].idle_pct[c], &sum[1].idle_pct[c], 1);
        if (cpufreq) {
            snprintf(l, sizeof l, "CPU %u frequency MHz", c);
            row(f, l, &sum[0].freq_mhz[c], &sum[1].freq_mhz[c], 0);
        }
    }
    if (rapl)
        row(f, "package power W", &sum[0].energy_w, &sum[1].energy_w, 2);
    row(f, "intensive tasks CPU %", &sum[0].intensive_cpu_pct, &sum[1].intensive_cpu_pct, 1);
    row(f, "intensive tasks run-queue ms/s", &sum[0].intensive_wait_ms_ps, &sum[1].intensive_wait_ms_ps, 1);
    row(f, "jitter run-queue ms per wake-up", &sum[0].jitter_wait_ms_per_wakeup, &sum[1].jitter_wait_ms_per_wakeup,
        3);
    row(f, "daemon CPU %", &sum[0].daemon_cpu_pct, &sum[1].daemon_cpu_pct, 2);
    row(f, "daemon wake-ups/s", &sum[0].daemon_wakeups_ps, &sum[1].daemon_wakeups_ps, 1);
    fprintf(f, "Wake-ups: %s\n", cpuidle ? "idle-state entries (cpuidle)"
                                         : "local timer + rescheduling interrupts (no cpuidle states here)");
    if (!rapl)
        fprintf(f, "Package energy: not measured (no RAPL zone under /sys/class/powercap)\n");
    if (!cpufreq)
        fprintf(f, "Frequency: not measured (no cpufreq driver reports it)\n");

    if (w->n)
        qsort(w->w, w->n, sizeof *w->w, by_slices_desc);
    fprintf(f, "Top wakers of %s (timeslices/s by the CPU each thread last ran on):\n",
            any_idle ? "the CPUs the plan kept idle" : "every CPU (the plan never confined jitter)");
    for (unsigned c = 0; c < cpus; c++) {
        if (any_idle && !idle_cpus[c])
            continue;
        for (int m = 0; m < _CMP_MODE_MAX; m++) {
            double secs = measured_seconds(b, n, (enum cmp_mode)m);
            fprintf(f, "  CPU %u %s:", c, cmp_mode_name((enum cmp_mode)m));
            int shown = 0;
            for (size_t i = 0; i < w->n && shown < TOP_WAKERS; i++) {
                const struct waker *x = &w->w[i];
                if (x->cpu != (int)c || x->mode != (enum cmp_mode)m)
                    continue;
                char comm[32];
                snprintf(comm, sizeof comm, "%s", x->comm);
                table_sanitize(comm);
                fprintf(f, "%s %s[%d] %s %.1f/s", shown ? "," : "", comm, (int)x->tid, class_name(x->cls),
                        secs > 0 ? x->slices / secs : 0);
                shown++;
            }
            fprintf(f, "%s\n", shown ? "" : " none");
        }
    }
    fprintf(f, "Verdict: %s\n", verdict);
}

static struct json_object *spread_json(const struct cmp_spread *s)
{
    if (!s->n)
        return NULL;
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "mean", json_object_new_double(s->mean));
    json_object_object_add(o, "sd", json_object_new_double(s->sd));
    json_object_object_add(o, "min", json_object_new_double(s->min));
    json_object_object_add(o, "max", json_object_new_double(s->max));
    json_object_object_add(o, "blocks", json_object_new_int64(s->n));
    return o;
}

static struct json_object *summary_json(const struct cmp_summary *s)
{
    struct json_object *o = json_object_new_object(), *cpus = json_object_new_array();
    json_object_object_add(o, "blocks", json_object_new_int64(s->n_blocks));
    for (unsigned c = 0; c < s->n_cpus; c++) {
        struct json_object *x = json_object_new_object();
        json_object_object_add(x, "cpu", json_object_new_int64(c));
        json_object_object_add(x, "wakeups_per_s", spread_json(&s->wakeups_ps[c]));
        json_object_object_add(x, "idle_pct", spread_json(&s->idle_pct[c]));
        json_object_object_add(x, "freq_mhz", spread_json(&s->freq_mhz[c]));
        json_object_array_add(cpus, x);
    }
    json_object_object_add(o, "cpus", cpus);
    json_object_object_add(o, "package_w", spread_json(&s->energy_w));
    json_object_object_add(o, "intensive_cpu_pct", spread_json(&s->intensive_cpu_pct));
    json_object_object_add(o, "intensive_wait_ms_per_s", spread_json(&s->intensive_wait_ms_ps));
    json_object_object_add(o, "jitter_wait_ms_per_wakeup", spread_json(&s->jitter_wait_ms_per_wakeup));
    json_object_object_add(o, "daemon_cpu_pct", spread_json(&s->daemon_cpu_pct));
    json_object_object_add(o, "daemon_wakeups_per_s", spread_json(&s->daemon_wakeups_ps));
    return o;
}

static void print_json_out(const struct cmp_block_result *b, size_t n, const struct cmp_summary *sum,
                           const bool *idle_cpus, bool any_idle, struct wakers *w, const char *verdict)
{
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "paused", summary_json(&sum[CMP_PAUSED]));
    json_object_object_add(o, "packed", summary_json(&sum[CMP_PACKED]));
    struct json_object *kept = json_object_new_array();
    for (unsigned c = 0; any_idle && c < sum[0].n_cpus; c++)
        if (idle_cpus[c])
            json_object_array_add(kept, json_object_new_int64(c));
    json_object_object_add(o, "kept_idle_cpus", kept);
    if (w->n)
        qsort(w->w, w->n, sizeof *w->w, by_slices_desc);
    struct json_object *wa = json_object_new_array();
    for (size_t i = 0; i < w->n; i++) {
        const struct waker *x = &w->w[i];
        if (any_idle && (x->cpu >= CMP_MAX_CPUS || !idle_cpus[x->cpu]))
            continue;
        double secs = measured_seconds(b, n, x->mode);
        struct json_object *j = json_object_new_object();
        json_object_object_add(j, "mode", json_object_new_string(cmp_mode_name(x->mode)));
        json_object_object_add(j, "cpu", json_object_new_int64(x->cpu));
        json_object_object_add(j, "tid", json_object_new_int64(x->tid));
        json_object_object_add(j, "comm", json_object_new_string(x->comm));
        json_object_object_add(j, "class", json_object_new_string(class_name(x->cls)));
        json_object_object_add(j, "slices_per_s", json_object_new_double(secs > 0 ? x->slices / secs : 0));
        json_object_array_add(wa, j);
        if (json_object_array_length(wa) >= 32)
            break;
    }
    json_object_object_add(o, "top_wakers", wa);
    json_object_object_add(o, "verdict", json_object_new_string(verdict));
    printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED));
    json_object_put(o);
}

static void csv_num(FILE *f, double v)
{
    if (isnan(v))
        fputs(",", f);
    else
        fprintf(f, ",%.4f", v);
}

static int write_csv(const char *path, const struct cmp_block_result *b, size_t n)
{
    FILE *f = fopen(path, "we");
    if (!f)
        return -errno;
    fprintf(f, "block,mode,warmup,seconds,cpu,wakeups_per_s,idle_pct,freq_mhz,package_w,intensive_cpu_pct,"
               "intensive_wait_ms_per_s,jitter_wait_ms_per_wakeup,daemon_cpu_pct,daemon_wakeups_per_s\n");
    for (size_t i = 0; i < n; i++)
        for (unsigned c = 0; c < b[i].n_cpus; c++) {
            fprintf(f, "%zu,%s,%d,%.3f,%u", i, cmp_mode_name(b[i].mode), b[i].warmup, b[i].seconds, c);
            csv_num(f, b[i].wakeups_ps[c]);
            csv_num(f, b[i].idle_pct[c]);
            csv_num(f, b[i].freq_mhz[c]);
            csv_num(f, b[i].energy_w);
            csv_num(f, b[i].intensive_cpu_pct);
            csv_num(f, b[i].intensive_wait_ms_ps);
            csv_num(f, b[i].jitter_wait_ms_per_wakeup);
            csv_num(f, b[i].daemon_cpu_pct);
            csv_num(f, b[i].daemon_wakeups_ps);
            fputc('\n', f);
        }
    int r = ferror(f) ? -EIO : 0;
    if (fclose(f) != 0 && r == 0)
        r = -errno;
    return r;
}

static bool in_path(const char *prog)
{
    const char *path = getenv("PATH");
    _cleanup_free_ char *copy = strdup(path ? path : "/usr/bin:/bin");
    if (!copy)
        return false;
    for (char *save = NULL, *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", d, prog);
        if (access(p, X_OK) == 0)
            return true;
    }
    return false;
}

/* FILE.csv -> FILE.png: wake-ups per block, one line per CPU and mode. */
static int write_plot(const char *csv, unsigned n_cpus)
{
    char png[4096], gp[4096];
    size_t l = strlen(csv);
    int base = l > 4 && strcmp(csv + l - 4, ".csv") == 0 ? (int)(l - 4) : (int)l;
    snprintf(png, sizeof png, "%.*s.png", base, csv);
    snprintf(gp, sizeof gp, "%.*s.gp", base, csv);
    FILE *f = fopen(gp, "we");
    if (!f)
        return -errno;
    fprintf(f, "set terminal pngcairo size 900,500\nset output '%s'\nset datafile separator ','\n"
               "set key outside\nset xlabel 'block'\nset ylabel 'wake-ups per second'\n"
               "set title 'turbosched-ctl compare: wake-ups per block (blocks 0 and 1: warm-up)'\nplot ",
            png);
    for (unsigned c = 0; c < n_cpus; c++)
        fprintf(f, "%s'%s' using ($5==%u && stringcolumn(2) eq 'paused' ? $1 : NaN):6 with points pt 7 "
                   "title 'CPU %u paused', "
                   "'%s' using ($5==%u && stringcolumn(2) eq 'packed' ? $1 : NaN):6 with points pt 5 "
                   "title 'CPU %u packed'",
                c ? ", " : "", csv, c, c, csv, c, c);
    fputc('\n', f);
    if (fclose(f) != 0)
        return -errno;
    pid_t pid = fork();
    if (pid < 0)
        return -errno;
    if (pid == 0) {
        execlp("gnuplot", "gnuplot", gp, (char *)NULL);
        _exit(127);
    }
    int st;
    if (waitpid(pid, &st, 0) < 0)
        return -errno;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return -EIO;
    fprintf(stderr, "Plot: %s (gnuplot script %s)\n", png, gp);
    return 0;
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

int ctl_compare_main(int argc, char **argv)
{
    struct opts o = {.socket_path = CONTROL_SOCKET_PATH_DEFAULT, .root = "/", .duration_ms = 600000,
                     .block_ms = 30000};
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

    struct session s = {.fd = ctl_connect(o.socket_path)};
    if (s.fd < 0) {
        fprintf(stderr, "turbosched-ctl: connecting to %s: %s\n", o.socket_path, strerror(-s.fd));
        return s.fd == -EACCES || s.fd == -EPERM ? EXIT_PERMISSION : EXIT_NO_CONNECTION;
    }
    struct ucred cred;
    socklen_t cl = sizeof cred;
    if (getsockopt(s.fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0) {
        fprintf(stderr, "turbosched-ctl: SO_PEERCRED: %m\n");
        close(s.fd);
        return EXIT_NO_CONNECTION;
    }
    s.daemon_pid = cred.pid;
    /* Resume for this session is a no-op that only root may make: a
     * non-root caller is refused here, before anything is measured. */
    if ((ret = check_not_paused(&s)) != EXIT_OK || (ret = call_checked(&s, "io.turbosched.Resume", true)) != EXIT_OK) {
        close(s.fd);
        return ret;
    }

    /* Interrupted: stop measuring, resume, report what was measured. The
     * pause is tied to the connection, so even a killed client resumes. */
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);

    static struct cmp_block_result res[CMP_MAX_BLOCKS];
    struct wakers w = {0};
    bool idle_cpus[CMP_MAX_CPUS] = {0}, any_idle = false, rapl = false, cpufreq = false, cpuidle = false;
    int done = 0;
    if (!o.json)
        fprintf(stderr, "Comparing: %d blocks of %u s, about %u s in all; Ctrl-C stops and resumes packing\n", n,
                o.block_ms / 1000, (unsigned)(n * (uint64_t)o.block_ms / 1000));
    for (int i = 0; i < n && !interrupted; i++) {
        ret = call_checked(&s, sched[i].mode == CMP_PAUSED ? "io.turbosched.Pause" : "io.turbosched.Resume", true);
        if (ret != EXIT_OK)
            break;
        struct snapshot a = {0}, b = {0};
        double freq_sum[CMP_MAX_CPUS] = {0};
        unsigned freq_n[CMP_MAX_CPUS] = {0};
        int r = snapshot_take(&o, &s, &a);
        if (r < 0) {
            fprintf(stderr, "turbosched-ctl: reading /proc and /sys: %s\n", strerror(-r));
            ret = EXIT_DAEMON_ERROR;
            snapshot_done(&a);
            break;
        }
        bool ok = wait_block(&o, &s, a.at_ms + o.block_ms, freq_sum, freq_n);
        if (ok)
            ok = snapshot_take(&o, &s, &b) == 0 && refresh_classes(&s) == 0;
        if (ok) {
            for (unsigned c = 0; c < b.cpus.n_cpus; c++)
                if (b.cpus.cpu[c].freq_khz) {
                    freq_sum[c] += a.cpus.cpu[c].freq_khz + b.cpus.cpu[c].freq_khz;
                    freq_n[c] += 2;
                    cpufreq = true;
                }
            rapl |= a.have_rapl && b.have_rapl;
            for (unsigned c = 0; c < b.cpus.n_cpus; c++)
                cpuidle |= b.cpus.cpu[c].has_cpuidle;
            res[i] = (struct cmp_block_result){.mode = sched[i].mode, .warmup = sched[i].warmup};
            block_measure(&a, &b, &s.classes, freq_sum, freq_n, &res[i], sched[i].warmup ? NULL : &w);
            if (sched[i].mode == CMP_PACKED && !sched[i].warmup) {
                bool in_mask[CMP_MAX_CPUS] = {0};
                if (plan_cpus(&s, in_mask, res[i].n_cpus))
                    for (unsigned c = 0; c < res[i].n_cpus; c++)
                        if (!in_mask[c]) {
                            idle_cpus[c] = true;
                            any_idle = true;
                        }
            }
            done = i + 1;
            if (!o.json)
                fprintf(stderr, "  block %d/%d %s%s done\n", i + 1, n, cmp_mode_name(sched[i].mode),
                        sched[i].warmup ? " (warm-up)" : "");
        }
        snapshot_done(&a);
        snapshot_done(&b);
        if (!ok) {
            if (!interrupted)
                ret = EXIT_NO_CONNECTION;
            break;
        }
    }
    /* Pack again now; closing the connection would too. */
    if (s.fd >= 0) {
        struct json_object *reply = NULL;
        _cleanup_free_ char *error = NULL;
        (void)call(&s, "io.turbosched.Resume", true, &reply, &error);
        json_object_put(reply);
        close(s.fd);
    }
    if (interrupted)
        fprintf(stderr, "turbosched-ctl: interrupted after %d of %d blocks; packing resumed\n", done, n);

    struct cmp_summary sum[_CMP_MODE_MAX];
    cmp_summarize(res, (size_t)done, CMP_PAUSED, &sum[CMP_PAUSED]);
    cmp_summarize(res, (size_t)done, CMP_PACKED, &sum[CMP_PACKED]);
    if (!sum[CMP_PAUSED].n_blocks || !sum[CMP_PACKED].n_blocks) {
        fprintf(stderr, "turbosched-ctl: no measured block of %s: nothing to report\n",
                sum[CMP_PAUSED].n_blocks ? "packing" : "the paused daemon");
        free(w.w);
        free(s.classes.e);
        return ret != EXIT_OK ? ret : EXIT_DAEMON_ERROR;
    }
    char verdict[512];
    cmp_verdict(&sum[CMP_PAUSED], &sum[CMP_PACKED], any_idle ? idle_cpus : NULL, verdict, sizeof verdict);
    if (o.json)
        print_json_out(res, (size_t)done, sum, idle_cpus, any_idle, &w, verdict);
    else
        print_text(stdout, res, (size_t)done, sum, idle_cpus, any_idle, &w, rapl, cpufreq, cpuidle, verdict);
    if (o.csv) {
        int r = write_csv(o.csv, res, (size_t)done);
        if (r < 0) {
            fprintf(stderr, "turbosched-ctl: writing %s: %s\n", o.csv, strerror(-r));
            ret = EXIT_DAEMON_ERROR;
        } else if (in_path("gnuplot") && (r = write_plot(o.csv, sum[0].n_cpus)) < 0) {
            fprintf(stderr, "turbosched-ctl: gnuplot failed (%s); the CSV is written\n", strerror(-r));
        }
    }
    free(w.w);
    free(s.classes.e);
    fflush(stdout);
    return ret;
}
