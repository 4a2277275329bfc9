/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "compare-output.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "table.h"
#include "util.h"

const char *class_name(char c)
{
    return c == 'j' ? "jitter" : c == 'i' ? "intensive" : c == 'g' ? "ignore" : "untracked";
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

void print_text(FILE *f, const struct cmp_block_result *b, size_t n, const struct cmp_summary *sum,
                const bool *idle_cpus, bool any_idle, struct wakers *w, bool rapl, bool cpufreq, bool cpuidle,
                const char *verdict)
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
    row(f, "jitter run-queue ms per wake-up", &sum[0].jitter_wait_ms_per_wakeup, &sum[1].jitter_wait_ms_per_wakeup, 3);
    row(f, "daemon CPU %", &sum[0].daemon_cpu_pct, &sum[1].daemon_cpu_pct, 2);
    row(f, "daemon wake-ups/s", &sum[0].daemon_wakeups_ps, &sum[1].daemon_wakeups_ps, 1);
    fprintf(f, "Wake-ups: %s\n",
            cpuidle ? "idle-state entries (cpuidle)"
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

void print_json_out(const struct cmp_block_result *b, size_t n, const struct cmp_summary *sum, const bool *idle_cpus,
                    bool any_idle, struct wakers *w, const char *verdict)
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

const char *output_refusal(int r)
{
    switch (-r) {
    case ELOOP:
        return "it is a symbolic link; refusing to write through it";
    case EPERM:
        return "it belongs to another user; refusing to write to it";
    case EMLINK:
        return "it is a second name of another file (a hard link); refusing to write to it";
    case EFTYPE_OUT:
        return "it is not a regular file; refusing to write to it";
    default:
        return strerror(-r);
    }
}

/* compare runs as root, often in a shared directory (/tmp): a name there
 * may be a link or a file another user planted, and writing through it is
 * a root write wherever it points (with fs.protected_symlinks and
 * protected_regular off, which no kernel guarantees). So a new file is
 * created with O_EXCL and no link followed; a file already there is
 * rewritten only when it is a regular file of ours with no other name. */
static int open_output(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0)
        return fd;
    if (errno != EEXIST)
        return -errno;
    /* O_NONBLOCK: a FIFO planted there does not hang us (ENXIO instead) */
    _cleanup_close_ int old = open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (old < 0)
        return errno == EEXIST ? -ELOOP : -errno;
    struct stat st;
    if (fstat(old, &st) < 0)
        return -errno;
    if (!S_ISREG(st.st_mode))
        return -EFTYPE_OUT;
    if (st.st_uid != geteuid())
        return -EPERM;
    if (st.st_nlink != 1)
        return -EMLINK;
    if (ftruncate(old, 0) < 0)
        return -errno;
    return TAKE_FD(old);
}

/* The output file's stream, or NULL with *r set and the refusal said. */
static FILE *open_output_file(const char *path, int *r)
{
    int fd = open_output(path);
    if (fd < 0) {
        *r = fd;
        fprintf(stderr, "turbosched-ctl: %s: %s\n", path, output_refusal(fd));
        return NULL;
    }
    FILE *f = fdopen(fd, "w");
    if (!f) {
        *r = -errno;
        close(fd);
        fprintf(stderr, "turbosched-ctl: %s: %s\n", path, strerror(-*r));
    }
    return f;
}

/* Closes f; 0 or -errno, said. */
static int close_output(FILE *f, const char *path)
{
    int r = ferror(f) ? -EIO : 0;
    if (fclose(f) != 0 && r == 0)
        r = -errno;
    if (r < 0)
        fprintf(stderr, "turbosched-ctl: writing %s: %s\n", path, strerror(-r));
    return r;
}

int write_csv(const char *path, const struct cmp_block_result *b, size_t n)
{
    int r;
    FILE *f = open_output_file(path, &r);
    if (!f)
        return r;
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
    return close_output(f, path);
}

bool in_path(const char *prog)
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

/* s as a gnuplot single-quoted string: a quote is written twice. */
static void gp_quoted(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++)
        fputs(*s == '\'' ? "''" : (char[]){*s, 0}, f);
    fputc('\'', f);
}

/* The script: the picture to output ('' for standard output), the data
 * read from data. */
static void plot_script(FILE *f, const char *output, const char *data, unsigned n_cpus)
{
    fputs("set terminal pngcairo size 900,500\nset output", f);
    if (*output) {
        fputc(' ', f);
        gp_quoted(f, output);
    }
    fputs("\nset datafile separator ','\n"
          "set key outside\nset xlabel 'block'\nset ylabel 'wake-ups per second'\n"
          "set title 'turbosched-ctl compare: wake-ups per block (blocks 0 and 1: warm-up)'\nplot ",
          f);
    for (unsigned c = 0; c < n_cpus; c++) {
        fputs(c ? ", " : "", f);
        gp_quoted(f, data);
        fprintf(f,
                " using ($5==%u && stringcolumn(2) eq 'paused' ? $1 : NaN):6 with points pt 7 "
                "title 'CPU %u paused', ",
                c, c);
        gp_quoted(f, data);
        fprintf(f,
                " using ($5==%u && stringcolumn(2) eq 'packed' ? $1 : NaN):6 with points pt 5 "
                "title 'CPU %u packed'",
                c, c);
    }
    fputc('\n', f);
}

/* FILE.csv -> FILE.png: wake-ups per block, one line per CPU and mode.
 * FILE.gp is left for the user to run again; gnuplot itself runs on a copy
 * of it that no other user can touch (a pipe), reads the CSV through the
 * descriptor checked here and writes the picture to its standard output,
 * a file opened as the CSV is: no name another user planted is opened by
 * gnuplot, which as root would write through a link (set output) or run
 * what a planted script says (system). */
int write_plot(const char *csv, unsigned n_cpus)
{
    char png[4096], gp[4096];
    size_t l = strlen(csv);
    int base = l > 4 && strcmp(csv + l - 4, ".csv") == 0 ? (int)(l - 4) : (int)l;
    snprintf(png, sizeof png, "%.*s.png", base, csv);
    snprintf(gp, sizeof gp, "%.*s.gp", base, csv);

    /* the CSV as written: ours, regular, one name */
    _cleanup_close_ int data = open(csv, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    struct stat st;
    int r = data < 0 ? -errno : fstat(data, &st) < 0 ? -errno : 0;
    if (r == 0)
        r = !S_ISREG(st.st_mode) ? -EFTYPE_OUT : st.st_uid != geteuid() ? -EPERM : st.st_nlink != 1 ? -EMLINK : 0;
    if (r < 0) {
        fprintf(stderr, "turbosched-ctl: %s: %s; no plot\n", csv, output_refusal(r));
        return r;
    }
    FILE *f = open_output_file(gp, &r);
    if (!f)
        return r;
    plot_script(f, png, csv, n_cpus);
    if ((r = close_output(f, gp)) < 0)
        return r;
    _cleanup_close_ int out = open_output(png);
    if (out < 0) {
        fprintf(stderr, "turbosched-ctl: %s: %s\n", png, output_refusal(out));
        return out;
    }

    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) < 0)
        return -errno;
    _cleanup_close_ int rd = pipefd[0], wr = pipefd[1];
    pid_t pid = fork();
    if (pid < 0)
        return -errno;
    if (pid == 0) {
        /* dup2 clears close-on-exec on the copies, but not when there is
         * nothing to copy: data may be 3 already */
        if (dup2(rd, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0 ||
            (data == 3 ? fcntl(3, F_SETFD, 0) : dup2(data, 3)) < 0)
            _exit(127);
        execlp("gnuplot", "gnuplot", (char *)NULL);
        _exit(127);
    }
    close(TAKE_FD(rd));
    /* a few hundred bytes: well within a pipe's buffer */
    FILE *s = fdopen(TAKE_FD(wr), "w");
    if (s) {
        plot_script(s, "", "/dev/fd/3", n_cpus);
        fclose(s);
    }
    int status;
    if (waitpid(pid, &status, 0) < 0)
        return -errno;
    if (!s || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "turbosched-ctl: gnuplot failed; the CSV is written\n");
        return -EIO;
    }
    fprintf(stderr, "Plot: %s (gnuplot script %s)\n", png, gp);
    return 0;
}
