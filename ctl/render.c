/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "render.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "table.h"
#include "util.h"

static struct json_object *get(struct json_object *o, const char *key)
{
    struct json_object *v;
    if (!o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v))
        return NULL;
    return v;
}

static bool is_number(struct json_object *v)
{
    return json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double);
}

/* A scalar as display text; "-" when missing. */
static const char *str(struct json_object *o, const char *key)
{
    struct json_object *v = get(o, key);
    if (!v || json_object_is_type(v, json_type_null))
        return "-";
    if (json_object_is_type(v, json_type_object) || json_object_is_type(v, json_type_array))
        return "-";
    return json_object_get_string(v);
}

/* str() as a copy fit for the terminal (control characters replaced, see
 * table_sanitize): for text the daemon took from tasks or the system. Free
 * it; NULL when out of memory. */
static char *str_sanitized(struct json_object *o, const char *key)
{
    char *s = strdup(str(o, key));
    if (s)
        table_sanitize(s);
    return s;
}

static bool num(struct json_object *o, const char *key, int64_t *ret)
{
    struct json_object *v = get(o, key);
    if (!v || !is_number(v))
        return false;
    *ret = json_object_get_int64(v);
    return true;
}

static int boolean(struct json_object *o, const char *key)
{
    struct json_object *v = get(o, key);
    if (!v || !json_object_is_type(v, json_type_boolean))
        return -1;
    return json_object_get_boolean(v);
}

static const char *yes_no(int b, const char *yes, const char *no) { return b < 0 ? "-" : b ? yes : no; }

static struct json_object *array(struct json_object *o, const char *key)
{
    struct json_object *v = get(o, key);
    return v && json_object_is_type(v, json_type_array) ? v : NULL;
}

void render_duration(char *buf, size_t size, double seconds)
{
    if (seconds < 0 || !isfinite(seconds)) {
        snprintf(buf, size, "-");
        return;
    }
    unsigned long long s = (unsigned long long)seconds;
    if (s < 60)
        snprintf(buf, size, "%llus", s);
    else if (s < 3600)
        snprintf(buf, size, "%llumin %llus", s / 60, s % 60);
    else if (s < 86400)
        snprintf(buf, size, "%lluh %llumin", s / 3600, s % 3600 / 60);
    else
        snprintf(buf, size, "%llud %lluh", s / 86400, s % 86400 / 3600);
}

void render_usec(char *buf, size_t size, unsigned long long usec)
{
    if (usec < 1000)
        snprintf(buf, size, "%lluus", usec);
    else if (usec < 1000000)
        snprintf(buf, size, "%.1fms", usec / 1e3);
    else if (usec < 60000000)
        snprintf(buf, size, "%.1fs", usec / 1e6);
    else
        render_duration(buf, size, usec / 1e6);
}

static void format_freq(char *buf, size_t size, struct json_object *cpu)
{
    struct json_object *v = get(cpu, "freq_khz");
    if (!cpu || !json_object_is_type(cpu, json_type_object) || !json_object_object_get_ex(cpu, "freq_khz", &v))
        snprintf(buf, size, "-");
    else if (!v || json_object_is_type(v, json_type_null) || !is_number(v) || json_object_get_int64(v) <= 0)
        snprintf(buf, size, "n/a");
    else {
        int64_t khz = json_object_get_int64(v);
        if (khz >= 1000000)
            snprintf(buf, size, "%.2f GHz", khz / 1e6);
        else
            snprintf(buf, size, "%" PRId64 " MHz", khz / 1000);
    }
}

static enum table_color class_color(const char *cls)
{
    if (strcmp(cls, "jitter") == 0)
        return TABLE_YELLOW;
    if (strcmp(cls, "intensive") == 0)
        return TABLE_RED;
    if (strcmp(cls, "ignore") == 0)
        return TABLE_DIM;
    return TABLE_PLAIN;
}

#define MAX_STATE_COLUMNS 16

/* CPU | FREQ | one column per idle state (union of names in order of
 * appearance), each cell "entries (residency)". */
static int render_cpus(FILE *f, struct json_object *cpus, const struct render_opts *o)
{
    if (!cpus) {
        fprintf(f, "CPU statistics: -\n");
        return 0;
    }
    const char *states[MAX_STATE_COLUMNS];
    unsigned n_states = 0;
    size_t n_cpus = json_object_array_length(cpus);
    for (size_t i = 0; i < n_cpus; i++) {
        struct json_object *idle = array(json_object_array_get_idx(cpus, i), "idle");
        for (size_t k = 0; idle && k < json_object_array_length(idle); k++) {
            const char *name = str(json_object_array_get_idx(idle, k), "name");
            bool seen = false;
            for (unsigned j = 0; j < n_states; j++)
                seen |= strcmp(states[j], name) == 0;
            if (!seen && n_states < MAX_STATE_COLUMNS)
                states[n_states++] = name;
        }
    }
    const char *headers[2 + MAX_STATE_COLUMNS] = {"CPU", "FREQ"};
    for (unsigned j = 0; j < n_states; j++)
        headers[2 + j] = states[j];
    struct table *t = table_new(2 + n_states, headers);
    if (!t)
        return -ENOMEM;
    table_align_right(t, 0);
    table_align_right(t, 1);
    for (unsigned j = 0; j < n_states; j++)
        table_align_right(t, 2 + j);
    for (size_t i = 0; i < n_cpus; i++) {
        struct json_object *cpu = json_object_array_get_idx(cpus, i);
        char freq[32];
        format_freq(freq, sizeof freq, cpu);
        table_add(t, str(cpu, "cpu"), TABLE_PLAIN);
        table_add(t, freq, strcmp(freq, "n/a") == 0 ? TABLE_DIM : TABLE_PLAIN);
        struct json_object *idle = array(cpu, "idle");
        for (unsigned j = 0; j < n_states; j++) {
            struct json_object *st = NULL;
            for (size_t k = 0; idle && k < json_object_array_length(idle); k++)
                if (strcmp(str(json_object_array_get_idx(idle, k), "name"), states[j]) == 0)
                    st = json_object_array_get_idx(idle, k);
            int64_t usage, time_us;
            char when[32] = "-";
            if (!st) {
                table_add(t, "-", TABLE_PLAIN);
                continue;
            }
            if (num(st, "time_us", &time_us) && time_us >= 0)
                render_usec(when, sizeof when, (unsigned long long)time_us);
            if (num(st, "usage", &usage))
                table_addf(t, TABLE_PLAIN, "%" PRId64 " (%s)", usage, when);
            else
                table_addf(t, TABLE_PLAIN, "- (%s)", when);
        }
    }
    if (n_states == 0)
        fprintf(f, "No cpuidle states reported.\n");
    else
        fprintf(f, "Idle states: times entered (total residency).\n");
    int r = table_print(t, f, o->color);
    table_free(t);
    return r;
}

/* "Run delay:     p90 0.12 ms per wake-up over 240 wake-ups, limit 1.00 ms; spilled to cores 1; <decision>" */
static void render_run_delay_line(FILE *f, struct json_object *d)
{
    int64_t limit = 0, delay = 0, n = 0, pct = 0;
    if (!d || !num(d, "limit_us", &limit))
        return;
    if (limit == 0) {
        fprintf(f, "Run delay:     not guarded (max_run_delay = off)\n");
        return;
    }
    num(d, "delay_us", &delay);
    num(d, "wakeups", &n);
    num(d, "percentile", &pct);
    fprintf(f, "Run delay:     p%" PRId64 " %.2f ms per wake-up over %" PRId64 " wake-ups, limit %.2f ms", pct,
            (double)delay / 1000, n, (double)limit / 1000);
    struct json_object *sp = get(d, "spilled_cores");
    size_t n_sp = sp && json_object_is_type(sp, json_type_array) ? json_object_array_length(sp) : 0;
    for (size_t i = 0; i < n_sp; i++)
        fprintf(f, "%s%d", i ? "," : "; spilled to core ", json_object_get_int(json_object_array_get_idx(sp, i)));
    _cleanup_free_ char *why = str_sanitized(d, "decision");
    fprintf(f, "; %s\n", why ? why : "-");
}

/* "Probe:         learned (cpufreq): probed: pack +3.1% (...); 2 rounds, 1 discarded; last change: ..."
 * or "Probe:         off: no measurable frequency (...)" */
static void render_probe_line(FILE *f, struct json_object *p)
{
    if (!p || !json_object_is_type(p, json_type_object))
        return;
    _cleanup_free_ char *what = str_sanitized(p, "what");
    if (strcmp(str(p, "state"), "off") == 0) {
        fprintf(f, "Probe:         off: %s\n", what ? what : "-");
        return;
    }
    _cleanup_free_ char *why = str_sanitized(p, "explain");
    _cleanup_free_ char *change = str_sanitized(p, "last_change");
    fprintf(f, "Probe:         %s (%s): %s; %s rounds, %s discarded", str(p, "state"), str(p, "source"),
            why ? why : "-", str(p, "rounds"), str(p, "discarded"));
    if (change && strcmp(change, "-") != 0)
        fprintf(f, "; last change: %s", change);
    fprintf(f, "\n");
}

/* "Deep idle:     1.30 idle cores kept awake by free jitter, 35 wake-ups/s (cpuidle, deep from 50 us ...)"
 * or "Deep idle:     not measured: ...", then, where isolation was measured,
 * "               0.08 idle cores awake with the jitter isolated (a trial), 326 wake-ups/s" */
static void render_deep_idle_line(FILE *f, struct json_object *d)
{
    if (!d || !json_object_is_type(d, json_type_object))
        return;
    _cleanup_free_ char *what = str_sanitized(d, "what");
    int64_t woken = 0;
    if (boolean(d, "measured") > 0 && num(d, "woken_milli", &woken))
        fprintf(f, "Deep idle:     %.2f idle cores kept awake by free jitter, %s wake-ups/s (%s)\n",
                (double)woken / 1000, str(d, "wakes_per_s"), what ? what : "-");
    else if (boolean(d, "available") > 0)
        fprintf(f, "Deep idle:     no tick with the jitter free measured yet (%s)\n", what ? what : "-");
    else
        fprintf(f, "Deep idle:     not measured: %s\n", what ? what : "-");
    struct json_object *iso = get(d, "isolated");
    if (iso && boolean(iso, "measured") > 0 && num(iso, "woken_milli", &woken))
        fprintf(f, "               %.2f idle cores awake with the jitter isolated%s, %s wake-ups/s\n",
                (double)woken / 1000, boolean(iso, "trial") > 0 ? " (a trial)" : "", str(iso, "wakes_per_s"));
}

static void render_plan_line(FILE *f, struct json_object *plan)
{
    if (!plan || !json_object_is_type(plan, json_type_object)) {
        fprintf(f, "Plan:          -\n");
        return;
    }
    int restricted = boolean(plan, "restricted");
    if (restricted > 0) {
        fprintf(f, "Plan:          jitter tasks on CPUs %s: %s\n", str(plan, "cpus"), str(plan, "reason"));
        if (get(plan, "packing"))
            fprintf(f, "Packing kind:  %s\n", str(plan, "packing"));
    } else if (restricted == 0)
        fprintf(f, "Plan:          unrestricted: %s\n", str(plan, "reason"));
    else
        fprintf(f, "Plan:          CPUs %s: %s\n", str(plan, "cpus"), str(plan, "reason"));
    render_run_delay_line(f, get(plan, "run_delay"));
    struct json_object *b = get(plan, "benefit");
    if (b) {
        _cleanup_free_ char *est = str_sanitized(b, "estimate");
        fprintf(f, "Benefit:       %s\n", est ? est : "-");
        render_probe_line(f, get(b, "probe"));
        render_deep_idle_line(f, get(b, "deep_idle"));
    }
}

/* "Event loop:    SCHED_FIFO 1, woken by execs alone; 9120 dispatches there, 310 at normal priority"
 * and, after a flood of events, " (events: 42 over the realtime budget)" */
static void render_loop_line(FILE *f, struct json_object *l)
{
    if (!l || !json_object_is_type(l, json_type_object))
        return;
    int64_t prio = 0;
    num(l, "realtime_priority", &prio);
    const char *woken = boolean(l, "exec_socket") > 0 ? "woken by execs alone" : "woken by every event";
    int64_t over = 0;
    num(l, "dispatched_over_budget", &over);
    if (prio > 0)
        fprintf(f, "Event loop:    SCHED_FIFO %" PRId64 ", %s; %s dispatches there, %s at normal priority%s%s%s\n",
                prio, woken, str(l, "dispatched_realtime"), str(l, "dispatched_normal"), over > 0 ? " (events: " : "",
                over > 0 ? str(l, "dispatched_over_budget") : "", over > 0 ? " over the realtime budget)" : "");
    else
        fprintf(f, "Event loop:    normal priority%s, %s\n",
                boolean(l, "realtime_refused") > 0 ? " (SCHED_FIFO refused: see the log)" : "", woken);
}

/* "Placement:     812 on events, p50 85 us, p99 950 us, max 12001 us; 100.0% within 20 ms" */
static void render_latency_line(FILE *f, struct json_object *l)
{
    int64_t n = 0, in_time = 0;
    if (!l || !num(l, "count", &n) || n <= 0) {
        fprintf(f, "Placement:     none made for an event yet\n");
        return;
    }
    num(l, "within_20ms", &in_time);
    fprintf(f, "Placement:     %" PRId64 " on events, p50 %s us, p99 %s us, max %s us; %.1f%% within 20 ms\n", n,
            str(l, "p50_us"), str(l, "p99_us"), str(l, "max_us"), 100.0 * (double)in_time / (double)n);
}

static void render_request_paths_line(FILE *f, struct json_object *r)
{
    if (!r)
        return;
    if (boolean(r, "on") <= 0) {
        fprintf(f, "Request paths: not looked for (behaviour or request_paths off)\n");
        return;
    }
    fprintf(f, "Request paths: jitter held back %s times (serves), %s (untimed sleep)", str(r, "held_serving"),
            str(r, "held_sleep"));
    if (boolean(r, "tail_guard") > 0)
        fprintf(f, "; tail guard released %s, %s kept out now\n", str(r, "released"), str(r, "kept_out"));
    else
        fprintf(f, "; tail guard off\n");
}

int render_status(FILE *f, struct json_object *reply, const struct render_opts *o)
{
    int64_t v;
    char up[64] = "-";
    if (num(reply, "uptime_s", &v))
        render_duration(up, sizeof up, (double)v);
    const char *b = o->color ? table_color_on(TABLE_BOLD) : "", *e = o->color ? TABLE_COLOR_OFF : "";
    fprintf(f, "%sturboschedd %s%s, up %s\n", b, str(reply, "version"), e, up);
    int dry = boolean(reply, "dry_run");
    fprintf(f, "Mode:          %s%s\n", str(reply, "mode"), dry > 0 ? " (dry run: nothing is changed)" : "");
    int uclamp = boolean(reply, "uclamp_supported");
    fprintf(f, "uclamp:        %s\n",
            yes_no(uclamp, "supported", "not supported by this kernel, classifying by rules"));
    fprintf(f, "Unit opt-in:   %s\n", yes_no(boolean(reply, "unit_optin"), "on", "off"));
    struct json_object *pause = get(reply, "pause");
    if (pause && boolean(pause, "paused") > 0)
        fprintf(f, "Packing:       paused for %ss (%s), tasks keep their own masks\n", str(pause, "since_s"),
                boolean(pause, "admin") > 0 ? "turbosched-ctl pause" : "a running comparison");
    else if (pause)
        fprintf(f, "Packing:       on\n");

    struct json_object *tasks = get(reply, "tasks");
    fprintf(f, "Tasks:         %s tracked: %s jitter, %s intensive, %s ignored; %s packed\n", str(tasks, "tracked"),
            str(tasks, "jitter"), str(tasks, "intensive"), str(tasks, "ignore"), str(tasks, "packed"));
    render_request_paths_line(f, get(reply, "request_paths"));
    struct json_object *ev = get(reply, "events");
    int64_t floods = 0;
    num(reply, "rename_floods", &floods);
    fprintf(f, "Events:        fork %s, exec %s, comm %s, exit %s, uid %s, other %s%s%s%s\n", str(ev, "fork"),
            str(ev, "exec"), str(ev, "comm"), str(ev, "exit"), str(ev, "uid"), str(ev, "other"),
            floods > 0 ? "; renames left unheard " : "", floods > 0 ? str(reply, "rename_floods") : "",
            floods > 0 ? (boolean(reply, "renames_unheard") > 0 ? " times (now too)" : " times") : "");
    int64_t overflows = 0;
    bool have_overflows = num(reply, "overflows", &overflows);
    const char *warn = o->color && overflows > 0 ? table_color_on(TABLE_YELLOW) : "";
    fprintf(f, "Overflows:     %s%s%s (rescans of /proc: %s)\n", warn, have_overflows ? str(reply, "overflows") : "-",
            *warn ? TABLE_COLOR_OFF : "", str(reply, "rescans"));
    render_loop_line(f, get(reply, "event_loop"));
    render_latency_line(f, get(reply, "placement_latency"));
    render_plan_line(f, get(reply, "plan"));

    struct json_object *rl = get(reply, "last_reload");
    if (!rl || !json_object_is_type(rl, json_type_object)) {
        fprintf(f, "Last reload:   -\n");
    } else {
        char when[64] = "-";
        if (num(rl, "time_s", &v) && v > 0) {
            time_t t = (time_t)v;
            struct tm tm;
            if (localtime_r(&t, &tm))
                strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S %Z", &tm);
        }
        int ok = boolean(rl, "ok");
        const char *col = !o->color ? ""
                          : ok > 0  ? table_color_on(TABLE_GREEN)
                          : ok == 0 ? table_color_on(TABLE_RED)
                                    : "";
        _cleanup_free_ char *msg = str_sanitized(rl, "message");
        fprintf(f, "Last reload:   %s%s%s%s%s: %s\n", col, yes_no(ok, "ok", "failed"), *col ? TABLE_COLOR_OFF : "",
                strcmp(when, "-") ? " at " : "", strcmp(when, "-") ? when : "", msg ? msg : "-");
    }
    fputc('\n', f);
    return render_cpus(f, array(reply, "cpus"), o);
}

static int render_cores(FILE *f, struct json_object *cores, const struct render_opts *o)
{
    static const char *const headers[] = {"PKG",  "CORE",  "THREADS", "ONLINE",     "CAPACITY",
                                          "UTIL", "SPARE", "STATE",   "JITTER MASK"};
    if (!cores) {
        fprintf(f, "Cores: -\n");
        return 0;
    }
    struct table *t = table_new(ELEMENTSOF(headers), headers);
    if (!t)
        return -ENOMEM;
    for (unsigned c = 0; c <= 6; c++)
        if (c != 2 && c != 3)
            table_align_right(t, c);
    for (size_t i = 0; i < json_object_array_length(cores); i++) {
        struct json_object *c = json_object_array_get_idx(cores, i);
        int64_t cap = 0, util = 0, spare = 0, n_online = 0;
        table_add(t, str(c, "package"), TABLE_PLAIN);
        table_add(t, get(c, "core_id") ? str(c, "core_id") : str(c, "core"), TABLE_PLAIN);
        table_add(t, str(c, "threads"), TABLE_PLAIN);
        if (num(c, "n_online", &n_online) && n_online == 0)
            table_add(t, "none", TABLE_DIM);
        else
            table_add(t, str(c, "online"), TABLE_PLAIN);
        bool have_cap = num(c, "capacity_milli", &cap);
        if (have_cap)
            table_addf(t, TABLE_PLAIN, "%.2f", cap / 1000.0);
        else
            table_add(t, "-", TABLE_PLAIN);
        if (num(c, "util_milli", &util) && have_cap && cap > 0)
            table_addf(t, TABLE_PLAIN, "%" PRId64 "%%", (util * 100 + cap / 2) / cap);
        else
            table_add(t, "-", TABLE_PLAIN);
        if (num(c, "spare_milli", &spare))
            table_addf(t, TABLE_PLAIN, "%.2f", spare / 1000.0);
        else
            table_add(t, "-", TABLE_PLAIN);
        int busy = boolean(c, "busy");
        table_add(t, yes_no(busy, "busy", "idle"), busy > 0 ? TABLE_GREEN : TABLE_DIM);
        int in_mask = boolean(c, "in_mask");
        table_add(t, yes_no(in_mask, "yes", "no"), in_mask > 0 ? TABLE_YELLOW : TABLE_PLAIN);
    }
    int r = table_print(t, f, o->color);
    table_free(t);
    return r;
}

int render_topology(FILE *f, struct json_object *reply, const struct render_opts *o)
{
    return render_cores(f, array(reply, "cores"), o);
}

int render_dump(FILE *f, struct json_object *reply, const struct render_opts *o)
{
    int r = render_cores(f, array(reply, "cores"), o);
    if (r < 0)
        return r;
    fputc('\n', f);
    render_plan_line(f, get(reply, "plan"));
    fputc('\n', f);
    r = render_cpus(f, array(reply, "cpus"), o);
    if (r < 0)
        return r;
    fputc('\n', f);

    static const char *const headers[] = {"TID", "PID", "COMM", "CLASS", "SOURCE", "ORIGINAL", "CURRENT", "WHY"};
    struct json_object *tasks = array(reply, "tasks");
    if (!tasks) {
        fprintf(f, "Tasks: -\n");
        return 0;
    }
    struct table *t = table_new(ELEMENTSOF(headers), headers);
    if (!t)
        return -ENOMEM;
    table_align_right(t, 0);
    table_align_right(t, 1);
    for (size_t i = 0; i < json_object_array_length(tasks); i++) {
        struct json_object *task = json_object_array_get_idx(tasks, i);
        const char *cls = str(task, "class");
        /* The daemon may send every task; the table is about the ones it acts on. */
        if (strcmp(cls, "jitter") != 0 && strcmp(cls, "intensive") != 0)
            continue;
        table_add(t, str(task, "tid"), TABLE_PLAIN);
        table_add(t, str(task, "pid"), TABLE_PLAIN);
        table_add(t, str(task, "comm"), TABLE_PLAIN);
        table_add(t, cls, class_color(cls));
        table_add(t, str(task, "source"), TABLE_PLAIN);
        table_add(t, str(task, "original_mask"), TABLE_PLAIN);
        table_add(t, str(task, "current_mask"), TABLE_PLAIN);
        table_add(t, str(task, "detail"), TABLE_PLAIN);
    }
    if (table_rows(t) == 0)
        fprintf(f, "No jitter or intensive tasks tracked.\n");
    else
        r = table_print(t, f, o->color);
    table_free(t);
    return r;
}

static const char *const explain_keys[] = {"class",        "source",    "detail",       "placement", "original_mask",
                                           "current_mask", "behaviour", "request_path", "run_delay"};

static bool same_explanation(struct json_object *a, struct json_object *b)
{
    for (size_t k = 0; k < ELEMENTSOF(explain_keys); k++)
        if (strcmp(str(a, explain_keys[k]), str(b, explain_keys[k])) != 0)
            return false;
    return true;
}

/* Threads of one process usually share their explanation: each distinct
 * explanation is printed once, with the threads it applies to. */
int render_explain(FILE *f, struct json_object *reply, const struct render_opts *o)
{
    struct json_object *threads = array(reply, "threads");
    size_t n = threads ? json_object_array_length(threads) : 0;
    int64_t total = (int64_t)n;
    num(reply, "threads_total", &total);
    if (total > (int64_t)n)
        fprintf(f, "Process %s: %" PRId64 " threads, the first %zu explained\n", str(reply, "pid"), total, n);
    else
        fprintf(f, "Process %s: %zu thread%s\n", str(reply, "pid"), n, n == 1 ? "" : "s");
    _cleanup_free_ bool *done = calloc(n + 1, sizeof *done);
    if (!done)
        return -ENOMEM;
    static const struct {
        const char *label, *key;
    } lines[] = {
        {"source", "source"},
        {"why", "detail"},
        {"placement", "placement"},
        {"original mask", "original_mask"},
        {"current mask", "current_mask"},
        {"behaviour", "behaviour"},
        {"request path", "request_path"},
        {"run delay", "run_delay"},
    };
    for (size_t i = 0; i < n; i++) {
        if (done[i])
            continue;
        struct json_object *th = json_object_array_get_idx(threads, i);
        size_t n_same = 0;
        for (size_t j = i; j < n; j++)
            if (!done[j] && same_explanation(th, json_object_array_get_idx(threads, j)))
                n_same++;
        fprintf(f, "\n  thread%s", n_same > 1 ? "s" : "");
        size_t shown = 0;
        for (size_t j = i; j < n; j++) {
            struct json_object *other = json_object_array_get_idx(threads, j);
            if (done[j] || !same_explanation(th, other))
                continue;
            done[j] = true;
            _cleanup_free_ char *comm = str_sanitized(other, "comm");
            fprintf(f, "%s %s (%s)", shown ? "," : "", str(other, "tid"), comm ? comm : "-");
            shown++;
        }
        const char *cls = str(th, "class");
        bool col = o->color && class_color(cls) != TABLE_PLAIN;
        fprintf(f, ": %s%s%s\n", col ? table_color_on(class_color(cls)) : "", cls, col ? TABLE_COLOR_OFF : "");
        for (size_t k = 0; k < ELEMENTSOF(lines); k++) {
            _cleanup_free_ char *v = str_sanitized(th, lines[k].key);
            fprintf(f, "    %-14s %s\n", lines[k].label, v ? v : "-");
        }
    }
    return ferror(f) ? -EIO : 0;
}

/* --- Prometheus text exposition --- */

static bool metric_name_char(char c, bool first, bool colon_ok)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon_ok && c == ':') ||
           (!first && c >= '0' && c <= '9');
}

/* Invalid characters become '_'; names without our prefix get it, so every
 * family the textfile collector sees is recognisably ours. */
static char *metric_name(const char *name)
{
    const char *prefix = strncmp(name, "turbosched_", 11) == 0 ? "" : "turbosched_";
    char *s;
    if (asprintf(&s, "%s%s", prefix, name) < 0)
        return NULL;
    for (char *p = s; *p; p++)
        if (!metric_name_char(*p, p == s, true))
            *p = '_';
    return s;
}

static void put_escaped(FILE *f, const char *s, bool quote)
{
    for (; *s; s++) {
        if (*s == '\\')
            fputs("\\\\", f);
        else if (*s == '\n')
            fputs("\\n", f);
        else if (quote && *s == '"')
            fputs("\\\"", f);
        else
            fputc(*s, f);
    }
}

static void put_value(FILE *f, struct json_object *v)
{
    if (json_object_is_type(v, json_type_int)) {
        fprintf(f, "%" PRId64, json_object_get_int64(v));
        return;
    }
    if (json_object_is_type(v, json_type_boolean)) {
        fputc(json_object_get_boolean(v) ? '1' : '0', f);
        return;
    }
    double d = json_object_get_double(v);
    if (isnan(d))
        fputs("NaN", f);
    else if (isinf(d))
        fputs(d > 0 ? "+Inf" : "-Inf", f);
    else
        fprintf(f, "%.17g", d);
}

static bool sample_has_value(struct json_object *sample)
{
    struct json_object *v = get(sample, "value");
    return v && (is_number(v) || json_object_is_type(v, json_type_boolean));
}

static void put_samples(FILE *f, const char *name, struct json_object *samples)
{
    for (size_t i = 0; samples && i < json_object_array_length(samples); i++) {
        struct json_object *sample = json_object_array_get_idx(samples, i);
        if (!sample_has_value(sample))
            continue;
        /* a histogram's series carry a suffix; a sample with any other is
         * not ours to render (nothing else is appended to a name) */
        const char *suffix = get(sample, "suffix") ? str(sample, "suffix") : "";
        if (*suffix && strcmp(suffix, "_bucket") != 0 && strcmp(suffix, "_sum") != 0 && strcmp(suffix, "_count") != 0)
            continue;
        fputs(name, f);
        fputs(suffix, f);
        struct json_object *labels = get(sample, "labels");
        if (labels && json_object_is_type(labels, json_type_object) && json_object_object_length(labels) > 0) {
            fputc('{', f);
            bool first = true;
            json_object_object_foreach(labels, key, val)
            {
                if (!first)
                    fputc(',', f);
                first = false;
                for (const char *p = key; *p; p++)
                    fputc(metric_name_char(*p, p == key, false) ? *p : '_', f);
                if (!*key)
                    fputc('_', f);
                fputs("=\"", f);
                put_escaped(f, json_object_is_type(val, json_type_null) ? "" : json_object_get_string(val), true);
                fputc('"', f);
            }
            fputc('}', f);
        }
        fputc(' ', f);
        put_value(f, get(sample, "value"));
        fputc('\n', f);
    }
}

int render_metrics(FILE *f, struct json_object *reply)
{
    static const char *const types[] = {"counter", "gauge", "histogram", "summary", "untyped"};
    struct json_object *families = array(reply, "metrics");
    size_t n = families ? json_object_array_length(families) : 0;
    _cleanup_free_ char **names = calloc(n + 1, sizeof *names);
    if (!names)
        return -ENOMEM;
    int r = 0;
    for (size_t i = 0; i < n && r == 0; i++) {
        const char *raw = str(json_object_array_get_idx(families, i), "name");
        names[i] = metric_name(raw);
        if (!names[i])
            r = -ENOMEM;
    }
    for (size_t i = 0; i < n && r == 0; i++) {
        bool done = false;
        for (size_t k = 0; k < i; k++)
            done |= strcmp(names[k], names[i]) == 0;
        if (done)
            continue; /* merged into its first occurrence */
        struct json_object *fam = json_object_array_get_idx(families, i);
        const char *help = str(fam, "help"), *type = str(fam, "type");
        bool known = false;
        for (size_t t = 0; t < ELEMENTSOF(types); t++)
            known |= strcmp(type, types[t]) == 0;
        fprintf(f, "# HELP %s ", names[i]);
        put_escaped(f, strcmp(help, "-") == 0 ? names[i] : help, false);
        fprintf(f, "\n# TYPE %s %s\n", names[i], known ? type : "untyped");
        for (size_t k = i; k < n; k++)
            if (strcmp(names[k], names[i]) == 0)
                put_samples(f, names[i], array(json_object_array_get_idx(families, k), "samples"));
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    if (r == 0 && ferror(f))
        r = -EIO;
    return r;
}
