/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The keys of [daemon], [capacity], [packing] and [classify]: a table with
 * one parser per value type (systemd's config tables are the model), and the
 * same keys printed back in config-file syntax. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config-parse.h"
#include "delay-guard.h"
#include "log.h"
#include "util.h"

/* Longest value of a path-like key; keeps config_print's lines parseable. */
#define CONFIG_MAX_PATH_VALUE 160u
/* sun_path holds 108 bytes including the terminating NUL. */
#define CONTROL_SOCKET_MAX 107u

static const char *const domain_names[] = {[DOMAIN_PACKAGE] = "package", [DOMAIN_LLC] = "llc", [DOMAIN_NUMA] = "numa"};
static const char *const mode_names[] = {[APPLY_AFFINITY] = "affinity", [APPLY_CGROUP] = "cgroup"};
static const char *const level_names[] = {"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"};

/* ------------------------------------------------------------ formatting */

static void format_duration(char *buf, size_t size, unsigned ms)
{
    if (ms == 0)
        snprintf(buf, size, "0");
    else if (ms % 60000 == 0)
        snprintf(buf, size, "%umin", ms / 60000);
    else if (ms % 1000 == 0)
        snprintf(buf, size, "%us", ms / 1000);
    else
        snprintf(buf, size, "%ums", ms);
}

static void format_size(char *buf, size_t size, uint64_t v)
{
    static const char suffix[] = "GMK";
    for (int i = 0; i < 3; i++) {
        unsigned shift = 30 - 10 * (unsigned)i;
        if (v != 0 && v % (1ull << shift) == 0) {
            snprintf(buf, size, "%llu%c", (unsigned long long)(v >> shift), suffix[i]);
            return;
        }
    }
    snprintf(buf, size, "%llu", (unsigned long long)v);
}

/* Factors print with a decimal point, as the shipped file writes them. */
static void format_factor(char *buf, size_t size, unsigned milli)
{
    format_milli(buf, size, milli);
    if (milli % 1000 == 0 && strlen(buf) + 2 < size)
        strcat(buf, ".0");
}

/* ------------------------------------------------------- the value types */

struct setting;
/* Parse value into field, or report why not (file:line, key, what was
 * expected) and return -EINVAL (-ENOMEM). */
typedef int (*setting_parse_fn)(struct parser *p, const struct setting *st, const char *value, void *field);

struct setting {
    enum section_kind section;
    const char *key;
    setting_parse_fn parse;
    size_t offset;
    unsigned min, max; /* durations, whole numbers, percentages (per mille), factors (milli) */
};

static int bad_value(struct parser *p, const struct setting *st, const char *value, const char *expect)
{
    config_perr(p, "bad value '%s' for '%s': expected %s", value, st->key, expect);
    return -EINVAL;
}

static int bad_range(struct parser *p, const struct setting *st, const char *value, const char *range)
{
    config_perr(p, "bad value '%s' for '%s': must be %s", value, st->key, range);
    return -EINVAL;
}

static int set_string(struct parser *p, char **field, const char *value)
{
    char *s = strdup(value);
    if (!s) {
        config_perr(p, "out of memory");
        return -ENOMEM;
    }
    free(*field);
    *field = s;
    return 0;
}

static int lookup_name(const char *s, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (names[i] && strcmp(s, names[i]) == 0)
            return (int)i;
    return -EINVAL;
}

static void format_whole(char *buf, size_t size, unsigned v) { snprintf(buf, size, "%u", v); }
static void format_permille(char *buf, size_t size, unsigned v) { format_percent(buf, size, v); }

/* The setting's bounds, in the key's own notation. */
static int bad_bounds(struct parser *p, const struct setting *st, const char *value,
                      void (*format)(char *buf, size_t size, unsigned v))
{
    char a[32], b[32], range[96];
    format(a, sizeof a, st->min);
    format(b, sizeof b, st->max);
    snprintf(range, sizeof range, "between %s and %s", a, b);
    return bad_range(p, st, value, range);
}

/* v into field if it is within the setting's bounds. */
static int set_in_range(struct parser *p, const struct setting *st, const char *value, void *field, unsigned v,
                        void (*format)(char *buf, size_t size, unsigned v))
{
    if (v < st->min || v > st->max)
        return bad_bounds(p, st, value, format);
    *(unsigned *)field = v;
    return 0;
}

static int parse_duration(struct parser *p, const struct setting *st, const char *value, void *field)
{
    unsigned v;
    if (parse_duration_ms(value, &v) < 0)
        return bad_value(p, st, value, "a duration such as 250ms, 2s or 1min");
    return set_in_range(p, st, value, field, v, format_duration);
}

static int parse_whole(struct parser *p, const struct setting *st, const char *value, void *field)
{
    unsigned v;
    if (parse_uint(value, &v) < 0)
        return bad_value(p, st, value, "a whole number");
    return set_in_range(p, st, value, field, v, format_whole);
}

static int parse_yes_no(struct parser *p, const struct setting *st, const char *value, void *field)
{
    if (parse_bool(value, field) < 0)
        return bad_value(p, st, value, "yes or no");
    return 0;
}

static int parse_bytes(struct parser *p, const struct setting *st, const char *value, void *field)
{
    uint64_t v;
    if (parse_size(value, &v) < 0)
        return bad_value(p, st, value, "a size such as 16M");
    if (v < 4096 || v > (1ull << 30))
        return bad_range(p, st, value, "between 4K and 1G");
    *(uint64_t *)field = v;
    return 0;
}

static int parse_nice(struct parser *p, const struct setting *st, const char *value, void *field)
{
    char *end;
    errno = 0;
    long v = strtol(value, &end, 10);
    if (errno != 0 || end == value || *end != '\0')
        return bad_value(p, st, value, "a nice value such as -10");
    if (v < -20 || v > 19)
        return bad_range(p, st, value, "between -20 and 19");
    *(int *)field = (int)v;
    return 0;
}

static int mode_from_string(const char *s) { return lookup_name(s, mode_names, ELEMENTSOF(mode_names)); }
static int domain_from_string(const char *s) { return lookup_name(s, domain_names, ELEMENTSOF(domain_names)); }

/* A parser for a key whose value is one of a few names (systemd's
 * DEFINE_CONFIG_PARSE_ENUM): from_string gives the value or -EINVAL. */
#define DEFINE_PARSE_ENUM(function, type, from_string, expect) \
    static int function(struct parser *p, const struct setting *st, const char *value, void *field) \
    { \
        int r = from_string(value); \
        if (r < 0) \
            return bad_value(p, st, value, expect); \
        *(type *)field = (type)r; \
        return 0; \
    }

DEFINE_PARSE_ENUM(parse_log_level, int, log_level_from_string, "err, warning, notice, info or debug")
DEFINE_PARSE_ENUM(parse_mode, enum apply_mode, mode_from_string, "affinity or cgroup")
DEFINE_PARSE_ENUM(parse_domain, enum pack_domain, domain_from_string, "package, llc or numa")
DEFINE_PARSE_ENUM(parse_class, enum task_class, task_class_from_string, "jitter, intensive or ignore")

static int parse_uclamp(struct parser *p, const struct setting *st, const char *value, void *field)
{
    bool b;
    if (strcmp(value, "auto") == 0)
        b = true;
    else if (parse_bool(value, &b) < 0)
        return bad_value(p, st, value, "auto, yes or no");
    *(bool *)field = b;
    return 0;
}

static int set_absolute_path(struct parser *p, const struct setting *st, const char *value, void *field, size_t max)
{
    if (value[0] != '/')
        return bad_value(p, st, value, "an absolute path");
    if (strlen(value) > max) {
        char range[96];
        snprintf(range, sizeof range, "at most %zu characters long", max);
        return bad_range(p, st, value, range);
    }
    return set_string(p, field, value);
}

static int parse_path(struct parser *p, const struct setting *st, const char *value, void *field)
{
    return set_absolute_path(p, st, value, field, CONFIG_MAX_PATH_VALUE);
}

static int parse_socket(struct parser *p, const struct setting *st, const char *value, void *field)
{
    return set_absolute_path(p, st, value, field, CONTROL_SOCKET_MAX);
}

/* Nothing means root only. */
static int parse_group(struct parser *p, const struct setting *st, const char *value, void *field)
{
    if (!*value) {
        free(*(char **)field);
        *(char **)field = NULL;
        return 0;
    }
    if (strlen(value) > 32 || strpbrk(value, " \t:/,"))
        return bad_value(p, st, value, "a group name, or nothing for root only");
    return set_string(p, field, value);
}

static bool valid_cgroup_name(const char *v)
{
    if (!*v || *v == '/' || strlen(v) > CONFIG_MAX_PATH_VALUE)
        return false;
    /* No ".." or "." components, no empty components: it is joined below a mount point. */
    const char *s = v;
    for (;;) {
        const char *e = strchrnul(s, '/');
        size_t n = (size_t)(e - s);
        if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
            return false;
        if (!*e)
            return true;
        s = e + 1;
    }
}

static int parse_cgroup_name(struct parser *p, const struct setting *st, const char *value, void *field)
{
    if (!valid_cgroup_name(value))
        return bad_value(p, st, value, "a relative cgroup path without '.' or '..' components");
    return set_string(p, field, value);
}

static int parse_factor(struct parser *p, const struct setting *st, const char *value, void *field)
{
    unsigned v;
    if (parse_milli(value, &v) < 0)
        return bad_value(p, st, value, "a factor such as 1.25");
    if (v < st->min || v > st->max) {
        char b[32], range[96];
        format_factor(b, sizeof b, st->max);
        /* n threads never do more than n threads' work */
        snprintf(range, sizeof range, "above 0 and at most %s", b);
        return bad_range(p, st, value, range);
    }
    *(unsigned *)field = v;
    return 0;
}

/* "12.5%" → 125 (per mille). At most one decimal. */
static int parse_percent_milli(const char *s, unsigned *ret)
{
    size_t n = strlen(s);
    if (n < 2 || s[n - 1] != '%')
        return -EINVAL;
    char num[32];
    if (n - 1 >= sizeof num)
        return -EINVAL;
    memcpy(num, s, n - 1);
    num[n - 1] = '\0';
    unsigned v;
    int r = parse_milli(num, &v);
    if (r < 0)
        return r;
    if (v % 100 != 0)
        return -EINVAL;
    *ret = v / 100;
    return 0;
}

static int parse_percent(struct parser *p, const struct setting *st, const char *value, void *field)
{
    unsigned v;
    if (parse_percent_milli(value, &v) < 0)
        return bad_value(p, st, value, "a percentage such as 12.5%");
    return set_in_range(p, st, value, field, v, format_permille);
}

/* Finer than milliseconds: "500us", "500µs", "0.5ms"; a bare number is µs. */
static void format_duration_us(char *buf, size_t size, unsigned us)
{
    if (us != 0 && us % 1000000 == 0)
        snprintf(buf, size, "%us", us / 1000000);
    else if (us != 0 && us % 1000 == 0)
        snprintf(buf, size, "%ums", us / 1000);
    else
        snprintf(buf, size, "%uus", us);
}

static int parse_duration_us(struct parser *p, const struct setting *st, const char *value, void *field)
{
    unsigned v;
    if (behaviour_parse_duration_us(value, &v) < 0)
        return bad_value(p, st, value, "a duration such as 500us, 1ms or 0.5ms");
    return set_in_range(p, st, value, field, v, format_duration_us);
}

/* frequency_reevaluation: a duration within the key's range, or off. */
static int parse_duration_us_or_off(struct parser *p, const struct setting *st, const char *value, void *field)
{
    if (strcmp(value, "off") == 0) {
        *(unsigned *)field = 0;
        return 0;
    }
    unsigned v;
    if (behaviour_parse_duration_us(value, &v) < 0)
        return bad_value(p, st, value, "a duration such as 300us or 1ms, or off");
    return set_in_range(p, st, value, field, v, format_duration_us);
}

/* A duration kept in ns, written in µs (the keys take whole µs). */
static void format_duration_ns(char *buf, size_t size, unsigned ns) { format_duration_us(buf, size, ns / 1000); }

/* jitter_slice, max_run_delay: written as finer than ms durations or off,
 * kept in ns, the unit of sched_setattr's slice and of schedstat's waits,
 * which is how the applier and the run-delay guard take them; the
 * setting's bounds are in ns too. */
static int parse_duration_ns_or_off(struct parser *p, const struct setting *st, const char *value, void *field)
{
    if (strcmp(value, "off") == 0) {
        *(uint64_t *)field = 0;
        return 0;
    }
    unsigned us;
    if (behaviour_parse_duration_us(value, &us) < 0)
        return bad_value(p, st, value, "a duration such as 300us or 1ms, or off");
    uint64_t ns = (uint64_t)us * 1000;
    if (ns < st->min || ns > st->max)
        return bad_bounds(p, st, value, format_duration_ns);
    *(uint64_t *)field = ns;
    return 0;
}

/* ------------------------------------------------------------ the table */

#define OFF(f) offsetof(struct config, f)
static const struct setting settings[] = {
    {SEC_DAEMON, "tick_interval", parse_duration, OFF(tick_ms), 10, 60000},
    {SEC_DAEMON, "mode", parse_mode, OFF(mode), 0, 0},
    {SEC_DAEMON, "dry_run", parse_yes_no, OFF(dry_run), 0, 0},
    {SEC_DAEMON, "log_level", parse_log_level, OFF(log_level), 0, 0},
    {SEC_DAEMON, "netlink_rcvbuf", parse_bytes, OFF(rcvbuf_bytes), 0, 0},
    {SEC_DAEMON, "nice", parse_nice, OFF(nice), 0, 0},
    {SEC_DAEMON, "realtime_priority", parse_whole, OFF(realtime_priority), 0, 99},
    {SEC_DAEMON, "max_tasks", parse_whole, OFF(max_tasks), 16, 4194304},
    {SEC_DAEMON, "control_socket", parse_socket, OFF(control_socket), 0, 0},
    {SEC_DAEMON, "control_group", parse_group, OFF(control_group), 0, 0},
    {SEC_DAEMON, "state_file", parse_path, OFF(state_file), 0, 0},
    {SEC_DAEMON, "cgroup_name", parse_cgroup_name, OFF(cgroup_name), 0, 0},
    {SEC_CAPACITY, "smt1", parse_factor, OFF(capacity.factor_milli[1]), 1, 1000},
    {SEC_CAPACITY, "smt2", parse_factor, OFF(capacity.factor_milli[2]), 1, 2000},
    {SEC_CAPACITY, "smt3", parse_factor, OFF(capacity.factor_milli[3]), 1, 3000},
    {SEC_CAPACITY, "smt4", parse_factor, OFF(capacity.factor_milli[4]), 1, 4000},
    {SEC_CAPACITY, "smt5", parse_factor, OFF(capacity.factor_milli[5]), 1, 5000},
    {SEC_CAPACITY, "smt6", parse_factor, OFF(capacity.factor_milli[6]), 1, 6000},
    {SEC_CAPACITY, "smt7", parse_factor, OFF(capacity.factor_milli[7]), 1, 7000},
    {SEC_CAPACITY, "smt8", parse_factor, OFF(capacity.factor_milli[8]), 1, 8000},
    {SEC_CAPACITY, "probe", parse_yes_no, OFF(freq_probe), 0, 0},
    {SEC_CAPACITY, "frequency_reevaluation", parse_duration_us_or_off, OFF(policy.freq_reeval_us), 1, 1000000},
    {SEC_PACKING, "busy_threshold", parse_percent, OFF(policy.busy_threshold_milli), 1, 1000},
    {SEC_PACKING, "headroom", parse_percent, OFF(policy.headroom_milli), 0, 8000},
    {SEC_PACKING, "idle_threshold", parse_percent, OFF(policy.idle_machine_milli), 0, 1000},
    {SEC_PACKING, "hold_time", parse_duration, OFF(policy.hold_ms), 0, 3600000},
    {SEC_PACKING, "min_change_interval", parse_duration, OFF(policy.min_change_ms), 0, 3600000},
    {SEC_PACKING, "half_life", parse_duration, OFF(policy.half_life_ms), 1, 3600000},
    {SEC_PACKING, "domain", parse_domain, OFF(policy.domain), 0, 0},
    {SEC_PACKING, "jitter_slice", parse_duration_ns_or_off, OFF(policy.jitter_slice_ns), SLICE_MIN_NS, SLICE_MAX_NS},
    {SEC_PACKING, "max_run_delay", parse_duration_ns_or_off, OFF(policy.max_run_delay_ns), DELAY_MAX_RUN_DELAY_NS_MIN,
     DELAY_MAX_RUN_DELAY_NS_MAX},
    {SEC_CLASSIFY, "uclamp", parse_uclamp, OFF(use_uclamp), 0, 0},
    {SEC_CLASSIFY, "uclamp_threshold", parse_whole, OFF(uclamp_threshold), 0, 1023},
    {SEC_CLASSIFY, "uclamp_recheck_interval", parse_duration, OFF(uclamp_recheck_ms), 0, 3600000},
    {SEC_CLASSIFY, "default_class", parse_class, OFF(default_class), 0, 0},
    {SEC_CLASSIFY, "unit_optin", parse_yes_no, OFF(unit_optin), 0, 0},
    {SEC_CLASSIFY, "behaviour", parse_yes_no, OFF(behaviour.enabled), 0, 0},
    {SEC_CLASSIFY, "behaviour_window", parse_duration, OFF(behaviour.window_ms), BEHAVIOUR_WINDOW_MS_MIN,
     BEHAVIOUR_WINDOW_MS_MAX},
    {SEC_CLASSIFY, "behaviour_jitter_max_util", parse_percent, OFF(behaviour.jitter_max_util_milli),
     BEHAVIOUR_UTIL_MILLI_MIN, BEHAVIOUR_UTIL_MILLI_MAX},
    {SEC_CLASSIFY, "behaviour_jitter_max_run", parse_duration_us, OFF(behaviour.jitter_max_run_us),
     BEHAVIOUR_JITTER_MAX_RUN_US_MIN, BEHAVIOUR_JITTER_MAX_RUN_US_MAX},
    {SEC_CLASSIFY, "behaviour_jitter_min_wakeups", parse_whole, OFF(behaviour.jitter_min_wakeups_per_s),
     BEHAVIOUR_JITTER_MIN_WAKEUPS_MIN, BEHAVIOUR_JITTER_MIN_WAKEUPS_MAX},
    {SEC_CLASSIFY, "behaviour_intensive_min_util", parse_percent, OFF(behaviour.intensive_min_util_milli),
     BEHAVIOUR_UTIL_MILLI_MIN, BEHAVIOUR_UTIL_MILLI_MAX},
    {SEC_CLASSIFY, "behaviour_cooldown", parse_duration, OFF(behaviour.cooldown_ms), 0, BEHAVIOUR_COOLDOWN_MS_MAX},
    {SEC_CLASSIFY, "request_paths", parse_yes_no, OFF(request_paths), 0, 0},
    {SEC_CLASSIFY, "tail_guard", parse_yes_no, OFF(tail_guard), 0, 0},
};
#undef OFF

/* The keys behaviour_params_check() may name, in parser.behaviour_lines order. */
static const char *const behaviour_keys[] = {
    "behaviour_window",
    "behaviour_jitter_max_util",
    "behaviour_jitter_max_run",
    "behaviour_jitter_min_wakeups",
    "behaviour_intensive_min_util",
    "behaviour_cooldown",
};

static void note_behaviour_line(struct parser *p, const char *key)
{
    for (size_t i = 0; i < ELEMENTSOF(behaviour_keys); i++)
        if (strcmp(key, behaviour_keys[i]) == 0)
            p->behaviour_lines[i] = p->lineno;
}

/* The frequency response whole: every count from 1 up given, never rising. */
static void check_freq(struct parser *p)
{
    char err[128];
    if (!p->freq_line || !p->c->freq.n_cores || freq_response_validate(&p->c->freq, err, sizeof err) == 0)
        return;
    unsigned saved = p->lineno;
    p->lineno = p->freq_line;
    config_perr(p, "[capacity] active keys: %s", err);
    p->lineno = saved;
}

void config_settings_check(struct parser *p)
{
    check_freq(p);
    const char *msg = behaviour_params_check(&p->c->behaviour);
    const char *bad = behaviour_params_bad_key(&p->c->behaviour);
    if (!msg || !bad)
        return;
    /* The key at fault, or its partner, where this file set it; a file that
     * set neither inherited the fault from an earlier one, which said so. */
    unsigned line = 0;
    for (size_t i = 0; i < ELEMENTSOF(behaviour_keys); i++)
        if (strcmp(bad, behaviour_keys[i]) == 0)
            line = p->behaviour_lines[i];
    if (!line && strcmp(bad, "behaviour_intensive_min_util") == 0)
        line = p->behaviour_lines[1];
    if (!line)
        return;
    unsigned saved = p->lineno;
    p->lineno = line;
    config_perr(p, "%s", msg);
    p->lineno = saved;
}

/* [capacity] active<N> or active<A>-<B> = frequency: the chip's frequency
 * response, as many counts as the file gives (checked whole after it). */
static bool set_freq(struct parser *p, const char *key, const char *value, bool continuation)
{
    if (p->section != SEC_CAPACITY || strncmp(key, "active", 6) != 0)
        return false;
    struct freq_response *fr = &p->c->freq;
    char err[128];
    fr->n_cores = BENEFIT_MAX_CORES;
    if (continuation)
        config_perr(p, "continuation line for '%s', which takes a single value", key);
    else if (freq_response_set(fr, key, value, err, sizeof err) < 0)
        config_perr(p, "[capacity] %s", err);
    fr->n_cores = 0;
    for (unsigned a = BENEFIT_MAX_CORES; a > 0 && !fr->n_cores; a--)
        if (fr->mhz[a])
            fr->n_cores = a;
    p->freq_line = p->lineno;
    return true;
}

bool config_setting_set(struct parser *p, const char *key, const char *value, bool continuation)
{
    if (set_freq(p, key, value, continuation))
        return true;
    for (size_t i = 0; i < ELEMENTSOF(settings); i++) {
        const struct setting *st = &settings[i];
        if (st->section != p->section || strcmp(st->key, key) != 0)
            continue;
        if (continuation)
            config_perr(p, "continuation line for '%s', which takes a single value", key);
        else
            (void)st->parse(p, st, value, (char *)p->c + st->offset); /* reported */
        note_behaviour_line(p, key);
        return true;
    }
    return false;
}

/* ------------------------------------------------------------- printing */

void config_print_freq(FILE *f, const struct freq_response *fr)
{
    /* in runs of equal frequency: active2-4 = 3600MHz */
    for (unsigned a = 1; a <= fr->n_cores;) {
        unsigned z = a;
        while (z < fr->n_cores && fr->mhz[z + 1] == fr->mhz[a])
            z++;
        if (z > a)
            fprintf(f, "active%u-%u = %uMHz\n", a, z, fr->mhz[a]);
        else
            fprintf(f, "active%u = %uMHz\n", a, fr->mhz[a]);
        a = z + 1;
    }
}

void config_print_settings(FILE *f, const struct config *c)
{
    char b[64];
    fprintf(f, "[daemon]\n");
    format_duration(b, sizeof b, c->tick_ms);
    fprintf(f, "tick_interval = %s\n", b);
    fprintf(f, "mode = %s\n", (unsigned)c->mode < ELEMENTSOF(mode_names) ? mode_names[c->mode] : "?");
    fprintf(f, "dry_run = %s\n", c->dry_run ? "yes" : "no");
    fprintf(f, "log_level = %s\n", c->log_level >= 0 && c->log_level < 8 ? level_names[c->log_level] : "?");
    format_size(b, sizeof b, c->rcvbuf_bytes);
    fprintf(f, "netlink_rcvbuf = %s\n", b);
    fprintf(f, "nice = %d\n", c->nice);
    fprintf(f, "realtime_priority = %u\n", c->realtime_priority);
    fprintf(f, "max_tasks = %u\n", c->max_tasks);
    fprintf(f, "control_socket = %s\n", c->control_socket ? c->control_socket : "");
    if (c->control_group)
        fprintf(f, "control_group = %s\n", c->control_group);
    else
        fprintf(f, "control_group =\n");
    fprintf(f, "state_file = %s\n", c->state_file ? c->state_file : "");
    fprintf(f, "cgroup_name = %s\n", c->cgroup_name ? c->cgroup_name : "");
    fprintf(f, "\n[capacity]\n");
    for (unsigned n = 1; n <= CAPACITY_MAX_SMT; n++) {
        format_factor(b, sizeof b, c->capacity.factor_milli[n]);
        fprintf(f, "smt%u = %s\n", n, b);
    }
    fprintf(f, "probe = %s\n", c->freq_probe ? "yes" : "no");
    const struct policy_params *pp = &c->policy;
    if (pp->freq_reeval_us)
        format_duration_us(b, sizeof b, pp->freq_reeval_us);
    fprintf(f, "frequency_reevaluation = %s\n", pp->freq_reeval_us ? b : "off");
    config_print_freq(f, &c->freq);
    fprintf(f, "\n[packing]\n");
    format_percent(b, sizeof b, pp->busy_threshold_milli);
    fprintf(f, "busy_threshold = %s\n", b);
    format_percent(b, sizeof b, pp->headroom_milli);
    fprintf(f, "headroom = %s\n", b);
    format_percent(b, sizeof b, pp->idle_machine_milli);
    fprintf(f, "idle_threshold = %s\n", b);
    format_duration(b, sizeof b, pp->hold_ms);
    fprintf(f, "hold_time = %s\n", b);
    format_duration(b, sizeof b, pp->min_change_ms);
    fprintf(f, "min_change_interval = %s\n", b);
    format_duration(b, sizeof b, pp->half_life_ms);
    fprintf(f, "half_life = %s\n", b);
    fprintf(f, "domain = %s\n", (unsigned)pp->domain < ELEMENTSOF(domain_names) ? domain_names[pp->domain] : "?");
    /* both whole µs, as parsed */
    if (pp->jitter_slice_ns)
        format_duration_ns(b, sizeof b, (unsigned)pp->jitter_slice_ns);
    fprintf(f, "jitter_slice = %s\n", pp->jitter_slice_ns ? b : "off");
    if (pp->max_run_delay_ns)
        format_duration_ns(b, sizeof b, (unsigned)pp->max_run_delay_ns);
    fprintf(f, "max_run_delay = %s\n", pp->max_run_delay_ns ? b : "off");
    fprintf(f, "\n[classify]\n");
    fprintf(f, "uclamp = %s\n", c->use_uclamp ? "auto" : "no");
    fprintf(f, "uclamp_threshold = %u\n", c->uclamp_threshold);
    format_duration(b, sizeof b, c->uclamp_recheck_ms);
    fprintf(f, "uclamp_recheck_interval = %s\n", b);
    fprintf(f, "default_class = %s\n", task_class_to_string(c->default_class));
    fprintf(f, "unit_optin = %s\n", c->unit_optin ? "yes" : "no");
    const struct behaviour_params *bp = &c->behaviour;
    fprintf(f, "behaviour = %s\n", bp->enabled ? "yes" : "no");
    format_duration(b, sizeof b, bp->window_ms);
    fprintf(f, "behaviour_window = %s\n", b);
    format_percent(b, sizeof b, bp->jitter_max_util_milli);
    fprintf(f, "behaviour_jitter_max_util = %s\n", b);
    format_duration_us(b, sizeof b, bp->jitter_max_run_us);
    fprintf(f, "behaviour_jitter_max_run = %s\n", b);
    fprintf(f, "behaviour_jitter_min_wakeups = %u\n", bp->jitter_min_wakeups_per_s);
    format_percent(b, sizeof b, bp->intensive_min_util_milli);
    fprintf(f, "behaviour_intensive_min_util = %s\n", b);
    format_duration(b, sizeof b, bp->cooldown_ms);
    fprintf(f, "behaviour_cooldown = %s\n", b);
    fprintf(f, "request_paths = %s\n", c->request_paths ? "yes" : "no");
    fprintf(f, "tail_guard = %s\n", c->tail_guard ? "yes" : "no");
}
