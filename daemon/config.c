/* Configuration: inih does the key = value splitting; we feed it lines
 * ourselves so that every message carries file:line, over-long lines are
 * reported instead of split, and syntax errors inih only counts get said. */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "control.h"
#include "log.h"
#include "util.h"

#define CONFIG_MAX_FILE_BYTES (1024 * 1024)
#define CONFIG_MAX_RULES 10000u
#define CONFIG_MAX_GLOBS 1024u
#define RULE_NAME_MAX 64u
/* Longest value of a path-like key; keeps config_print's lines parseable. */
#define CONFIG_MAX_PATH_VALUE 160u
/* sun_path holds 108 bytes including the terminating NUL. */
#define CONTROL_SOCKET_MAX 107u

/* ---------------------------------------------------------------- names */

static const char *const rule_key_names[_RULE_KEY_MAX] = {
    [RULE_COMM] = "comm", [RULE_EXE] = "exe", [RULE_CMDLINE] = "cmdline",
    [RULE_CGROUP] = "cgroup", [RULE_UNIT] = "unit", [RULE_USER] = "user",
};

const char *rule_key_to_string(enum rule_key k)
{
    if ((unsigned)k >= _RULE_KEY_MAX)
        return "unknown";
    return rule_key_names[k];
}

enum rule_key rule_key_from_string(const char *s)
{
    for (unsigned k = 0; k < _RULE_KEY_MAX; k++)
        if (strcmp(s, rule_key_names[k]) == 0)
            return (enum rule_key)k;
    return _RULE_KEY_MAX;
}

static const char *const domain_names[] = {[DOMAIN_PACKAGE] = "package", [DOMAIN_LLC] = "llc", [DOMAIN_NUMA] = "numa"};
static const char *const mode_names[] = {[APPLY_AFFINITY] = "affinity", [APPLY_CGROUP] = "cgroup"};
static const char *const level_names[] = {"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"};

/* ------------------------------------------------------- defaults, free */

void config_init_defaults(struct config *c)
{
    *c = (struct config){
        .tick_ms = 250,
        .log_level = LOG_INFO,
        .dry_run = false,
        .mode = APPLY_AFFINITY,
        .rcvbuf_bytes = 16u << 20,
        .max_tasks = 131072,
        .busy_threshold_milli = 125,
        .headroom_milli = 100,
        .idle_machine_milli = 50,
        .hold_ms = 1000,
        .min_change_ms = 2000,
        .half_life_ms = 1000,
        .domain = DOMAIN_PACKAGE,
        .use_uclamp = true,
        .uclamp_threshold = 204,
        .uclamp_recheck_ms = 5000,
        .default_class = CLASS_IGNORE,
        .unit_optin = true,
    };
    capacity_table_default(&c->capacity);
    /* Allocation failure leaves NULL; config_print and users fall back. */
    c->control_socket = strdup(CONTROL_SOCKET_PATH_DEFAULT);
    c->state_file = strdup("/run/turbosched/state");
    c->cgroup_name = strdup("turbosched");
}

int config_new_default(struct config **ret)
{
    struct config *c = calloc(1, sizeof *c);
    if (!c)
        return -ENOMEM;
    config_init_defaults(c);
    if (!c->control_socket || !c->state_file || !c->cgroup_name) {
        config_destroy(c);
        return -ENOMEM;
    }
    *ret = c;
    return 0;
}

static void strv_free(char **l)
{
    if (!l)
        return;
    for (char **p = l; *p; p++)
        free(*p);
    free(l);
}

static void rule_done(struct rule *r)
{
    free(r->name);
    free(r->file);
    for (unsigned k = 0; k < _RULE_KEY_MAX; k++)
        strv_free(r->globs[k]);
}

void config_done(struct config *c)
{
    if (!c)
        return;
    free(c->path);
    free(c->control_socket);
    free(c->control_group);
    free(c->state_file);
    free(c->cgroup_name);
    for (size_t i = 0; i < c->n_rules; i++)
        rule_done(&c->rules[i]);
    free(c->rules);
    memset(c, 0, sizeof *c);
}

void config_destroy(struct config *c)
{
    config_done(c);
    free(c);
}

void config_destroyp(struct config **c)
{
    if (*c) {
        config_destroy(*c);
        *c = NULL;
    }
}

size_t config_max_line(void)
{
    return ini_max_line > 3 ? (size_t)ini_max_line - 3 : 0;
}

/* -------------------------------------------------------- value parsers */

/* "12.5%" → 125 (per mille). At most one decimal, at most max_milli. */
static int parse_percent_milli(const char *s, unsigned max_milli, unsigned *ret)
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
    v /= 100;
    if (v > max_milli)
        return -ERANGE;
    *ret = v;
    return 0;
}

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

static int lookup_name(const char *s, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (names[i] && strcmp(s, names[i]) == 0)
            return (int)i;
    return -EINVAL;
}

static bool is_blank(int ch) { return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n' || ch == '\f' || ch == '\v'; }

/* Whitespace-separated globs; a token that starts with '"' runs to the next
 * '"' (so a cmdline glob may contain spaces). Appends to *list. */
static int globs_append(char ***list, const char *value, const char **why)
{
    size_t n = 0;
    if (*list)
        while ((*list)[n])
            n++;
    const char *p = value;
    for (;;) {
        while (is_blank(*p))
            p++;
        if (!*p)
            return 0;
        const char *start, *end;
        if (*p == '"') {
            start = p + 1;
            end = strchr(start, '"');
            if (!end) {
                *why = "unterminated quote";
                return -EINVAL;
            }
            p = end + 1;
            if (*p && !is_blank(*p)) {
                *why = "text after a closing quote";
                return -EINVAL;
            }
        } else {
            start = p;
            while (*p && !is_blank(*p)) {
                /* Keeps every glob printable in quotes (use '?' for a quote). */
                if (*p == '"') {
                    *why = "'\"' inside a glob";
                    return -EINVAL;
                }
                p++;
            }
            end = p;
        }
        if (n >= CONFIG_MAX_GLOBS) {
            *why = "too many globs";
            return -E2BIG;
        }
        char *tok = strndup(start, (size_t)(end - start));
        char **nl = tok ? realloc(*list, (n + 2) * sizeof(char *)) : NULL;
        if (!nl) {
            free(tok);
            *why = "out of memory";
            return -ENOMEM;
        }
        nl[n++] = tok;
        nl[n] = NULL;
        *list = nl;
    }
}

/* -------------------------------------------------------------- parsing */

enum section_kind { SEC_NONE, SEC_DAEMON, SEC_CAPACITY, SEC_PACKING, SEC_CLASSIFY, SEC_RULE, SEC_IGNORED };

enum line_kind { LINE_BLANK, LINE_SECTION, LINE_KEY, LINE_CONTINUATION, LINE_BAD };

struct parser {
    struct config *c;
    const char *name;
    const char *pos;
    unsigned lineno;
    unsigned n_errors;
    enum line_kind line;
    bool prev_name;             /* mirrors inih: a key was seen in this section */
    enum section_kind section;
    char section_name[16];      /* for messages: "daemon", ... */
    size_t rule;                /* index of the current rule (SEC_RULE) */
    size_t first_rule;          /* first rule defined by this file */
    char last_key[32];
    bool last_key_ok;
    /* rules with a bad key: already reported, not checked again at the end */
    size_t *broken;
    size_t n_broken;
};

static void mark_broken(struct parser *p)
{
    size_t *nb = realloc(p->broken, (p->n_broken + 1) * sizeof *nb);
    if (!nb)
        return;
    p->broken = nb;
    p->broken[p->n_broken++] = p->rule;
}

static bool is_broken(const struct parser *p, size_t rule)
{
    for (size_t i = 0; i < p->n_broken; i++)
        if (p->broken[i] == rule)
            return true;
    return false;
}

static void perr(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void perr(struct parser *p, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    log_err("%s:%u: %s", p->name, p->lineno, msg);
    p->n_errors++;
}

/* inih's find_chars_or_comment: stop at one of chars, or at ';' after
 * whitespace (an inline comment). */
static const char *find_chars_or_comment(const char *s, const char *chars)
{
    bool was_space = false;
    while (*s && (!chars || !strchr(chars, *s)) && !(was_space && *s == ';')) {
        was_space = isspace((unsigned char)*s);
        s++;
    }
    return s;
}

static bool valid_rule_name(const char *s, size_t n)
{
    if (n == 0 || n > RULE_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr("-_.@:+", s[i]))
            return false;
    return true;
}

static void start_rule(struct parser *p, const char *name, size_t n)
{
    if (!valid_rule_name(name, n)) {
        perr(p, "invalid rule name '%.*s' (1-%u of A-Z a-z 0-9 - _ . @ : +)", (int)MIN(n, 200u), name, RULE_NAME_MAX);
        p->section = SEC_IGNORED;
        return;
    }
    struct config *c = p->c;
    for (size_t i = 0; i < c->n_rules; i++) {
        if (strlen(c->rules[i].name) == n && memcmp(c->rules[i].name, name, n) == 0) {
            perr(p, "duplicate rule '%.*s' (first defined at %s:%u)", (int)n, name, c->rules[i].file, c->rules[i].line);
            p->section = SEC_IGNORED;
            return;
        }
    }
    if (c->n_rules >= CONFIG_MAX_RULES) {
        perr(p, "too many rules (at most %u)", CONFIG_MAX_RULES);
        p->section = SEC_IGNORED;
        return;
    }
    struct rule *nr = realloc(c->rules, (c->n_rules + 1) * sizeof *nr);
    if (!nr) {
        perr(p, "out of memory");
        p->section = SEC_IGNORED;
        return;
    }
    c->rules = nr;
    struct rule *r = &c->rules[c->n_rules];
    *r = (struct rule){.class = CLASS_UNSET, .line = p->lineno};
    r->name = strndup(name, n);
    r->file = strdup(p->name);
    if (!r->name || !r->file) {
        rule_done(r);
        perr(p, "out of memory");
        p->section = SEC_IGNORED;
        return;
    }
    p->rule = c->n_rules++;
    p->section = SEC_RULE;
}

/* A "[...]" line (start points at '['). */
static void parse_section(struct parser *p, const char *start)
{
    const char *end = find_chars_or_comment(start + 1, "]");
    p->section = SEC_IGNORED;
    if (*end != ']') {
        perr(p, "section header without ']'");
        return;
    }
    const char *rest = end + 1;
    while (isspace((unsigned char)*rest))
        rest++;
    if (*rest && *rest != ';') {
        perr(p, "unexpected text after section header");
        return;
    }
    const char *s = start + 1;
    while (s < end && isspace((unsigned char)*s))
        s++;
    const char *e = end;
    while (e > s && isspace((unsigned char)e[-1]))
        e--;
    size_t n = (size_t)(e - s);
    static const struct {
        const char *name;
        enum section_kind kind;
    } sections[] = {
        {"daemon", SEC_DAEMON}, {"capacity", SEC_CAPACITY}, {"packing", SEC_PACKING}, {"classify", SEC_CLASSIFY},
    };
    for (size_t i = 0; i < ELEMENTSOF(sections); i++) {
        if (strlen(sections[i].name) == n && memcmp(sections[i].name, s, n) == 0) {
            p->section = sections[i].kind;
            snprintf(p->section_name, sizeof p->section_name, "%s", sections[i].name);
            return;
        }
    }
    if (n > 4 && memcmp(s, "rule", 4) == 0 && isspace((unsigned char)s[4])) {
        s += 4;
        while (s < e && isspace((unsigned char)*s))
            s++;
        start_rule(p, s, (size_t)(e - s));
        return;
    }
    if (n == 4 && memcmp(s, "rule", 4) == 0)
        perr(p, "rule section without a name (expected [rule NAME])");
    else
        perr(p, "unknown section [%.*s]", (int)MIN(n, 200u), s);
}

/* Classify the line as inih will, and keep our own section state. */
static void analyse_line(struct parser *p, const char *line)
{
    const char *start = line;
    if (p->lineno == 1 && (unsigned char)start[0] == 0xEF && (unsigned char)start[1] == 0xBB &&
        (unsigned char)start[2] == 0xBF)
        start += 3;
    while (isspace((unsigned char)*start))
        start++;
    if (*start == '\0' || *start == ';' || *start == '#')
        p->line = LINE_BLANK;
    else if (p->prev_name && start > line)
        p->line = LINE_CONTINUATION;
    else if (*start == '[') {
        p->line = LINE_SECTION;
        /* inih forgets the previous key only on a well-formed header. */
        if (*find_chars_or_comment(start + 1, "]") == ']')
            p->prev_name = false;
        parse_section(p, start);
    } else {
        const char *end = find_chars_or_comment(start, "=:");
        if (*end == '=' || *end == ':') {
            p->line = LINE_KEY;
            p->prev_name = true;
        } else {
            p->line = LINE_BAD;
            perr(p, "expected 'key = value', '[section]' or a comment");
        }
    }
}

static char *reader(char *str, int num, void *stream)
{
    struct parser *p = stream;
    if (!*p->pos)
        return NULL;
    const char *nl = strchr(p->pos, '\n');
    size_t len = nl ? (size_t)(nl - p->pos) : strlen(p->pos);
    const char *line = p->pos;
    p->pos += len + (nl ? 1 : 0);
    p->lineno++;
    size_t content = len;
    if (content > 0 && line[content - 1] == '\r')
        content--;
    /* inih needs room for "\r\n\0" after the longest line. */
    size_t max = num > 3 ? (size_t)num - 3 : 0;
    if (content > max) {
        perr(p, "line too long (%zu characters, at most %zu)", content, max);
        if (p->section == SEC_RULE)
            mark_broken(p);     /* its key is lost: no second error for it */
        p->line = LINE_BLANK;
        str[0] = '\n';
        str[1] = '\0';
        return str;
    }
    memcpy(str, line, len);
    str[len] = '\n';
    str[len + 1] = '\0';
    analyse_line(p, str);
    /* Already reported; inih would only count it. Section lines do go
     * through: inih forgets the previous key there, as analyse_line does. */
    if (p->line == LINE_BAD) {
        str[0] = '\n';
        str[1] = '\0';
    }
    return str;
}

/* Keys of the settings sections. */
enum value_type { V_DURATION, V_UINT, V_BOOL, V_SIZE, V_LOGLEVEL, V_MODE, V_PATH, V_SOCKET, V_GROUP, V_NAME,
                  V_FACTOR, V_PERCENT, V_DOMAIN, V_UCLAMP, V_CLASS };

struct setting {
    enum section_kind section;
    const char *key;
    enum value_type type;
    size_t offset;
    unsigned min, max;          /* V_DURATION, V_UINT, V_PERCENT (per mille), V_FACTOR (milli) */
};

#define OFF(f) offsetof(struct config, f)
static const struct setting settings[] = {
    {SEC_DAEMON, "tick_interval", V_DURATION, OFF(tick_ms), 10, 60000},
    {SEC_DAEMON, "mode", V_MODE, OFF(mode), 0, 0},
    {SEC_DAEMON, "dry_run", V_BOOL, OFF(dry_run), 0, 0},
    {SEC_DAEMON, "log_level", V_LOGLEVEL, OFF(log_level), 0, 0},
    {SEC_DAEMON, "netlink_rcvbuf", V_SIZE, OFF(rcvbuf_bytes), 0, 0},
    {SEC_DAEMON, "max_tasks", V_UINT, OFF(max_tasks), 16, 4194304},
    {SEC_DAEMON, "control_socket", V_SOCKET, OFF(control_socket), 0, 0},
    {SEC_DAEMON, "control_group", V_GROUP, OFF(control_group), 0, 0},
    {SEC_DAEMON, "state_file", V_PATH, OFF(state_file), 0, 0},
    {SEC_DAEMON, "cgroup_name", V_NAME, OFF(cgroup_name), 0, 0},
    {SEC_CAPACITY, "smt1", V_FACTOR, OFF(capacity.factor_milli[1]), 1, 1000},
    {SEC_CAPACITY, "smt2", V_FACTOR, OFF(capacity.factor_milli[2]), 1, 2000},
    {SEC_CAPACITY, "smt3", V_FACTOR, OFF(capacity.factor_milli[3]), 1, 3000},
    {SEC_CAPACITY, "smt4", V_FACTOR, OFF(capacity.factor_milli[4]), 1, 4000},
    {SEC_CAPACITY, "smt5", V_FACTOR, OFF(capacity.factor_milli[5]), 1, 5000},
    {SEC_CAPACITY, "smt6", V_FACTOR, OFF(capacity.factor_milli[6]), 1, 6000},
    {SEC_CAPACITY, "smt7", V_FACTOR, OFF(capacity.factor_milli[7]), 1, 7000},
    {SEC_CAPACITY, "smt8", V_FACTOR, OFF(capacity.factor_milli[8]), 1, 8000},
    {SEC_PACKING, "busy_threshold", V_PERCENT, OFF(busy_threshold_milli), 1, 1000},
    {SEC_PACKING, "headroom", V_PERCENT, OFF(headroom_milli), 0, 8000},
    {SEC_PACKING, "idle_threshold", V_PERCENT, OFF(idle_machine_milli), 0, 1000},
    {SEC_PACKING, "hold_time", V_DURATION, OFF(hold_ms), 0, 3600000},
    {SEC_PACKING, "min_change_interval", V_DURATION, OFF(min_change_ms), 0, 3600000},
    {SEC_PACKING, "half_life", V_DURATION, OFF(half_life_ms), 1, 3600000},
    {SEC_PACKING, "domain", V_DOMAIN, OFF(domain), 0, 0},
    {SEC_CLASSIFY, "uclamp", V_UCLAMP, OFF(use_uclamp), 0, 0},
    {SEC_CLASSIFY, "uclamp_threshold", V_UINT, OFF(uclamp_threshold), 0, 1023},
    {SEC_CLASSIFY, "uclamp_recheck_interval", V_DURATION, OFF(uclamp_recheck_ms), 0, 3600000},
    {SEC_CLASSIFY, "default_class", V_CLASS, OFF(default_class), 0, 0},
    {SEC_CLASSIFY, "unit_optin", V_BOOL, OFF(unit_optin), 0, 0},
};
#undef OFF

static int set_string(char **field, const char *value)
{
    char *s = strdup(value);
    if (!s)
        return -ENOMEM;
    free(*field);
    *field = s;
    return 0;
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

static void set_setting(struct parser *p, const struct setting *st, const char *value)
{
    void *field = (char *)p->c + st->offset;
    const char *expect = NULL;
    char range[96] = "";
    int r;
    switch (st->type) {
    case V_DURATION: {
        unsigned v;
        r = parse_duration_ms(value, &v);
        if (r < 0) {
            expect = "a duration such as 250ms, 2s or 1min";
            break;
        }
        if (v < st->min || v > st->max) {
            char a[32], b[32];
            format_duration(a, sizeof a, st->min);
            format_duration(b, sizeof b, st->max);
            snprintf(range, sizeof range, "between %s and %s", a, b);
            break;
        }
        *(unsigned *)field = v;
        return;
    }
    case V_UINT: {
        unsigned v;
        if (parse_uint(value, &v) < 0) {
            expect = "a whole number";
            break;
        }
        if (v < st->min || v > st->max) {
            snprintf(range, sizeof range, "between %u and %u", st->min, st->max);
            break;
        }
        *(unsigned *)field = v;
        return;
    }
    case V_BOOL:
        if (parse_bool(value, field) < 0)
            expect = "yes or no";
        else
            return;
        break;
    case V_SIZE: {
        uint64_t v;
        if (parse_size(value, &v) < 0) {
            expect = "a size such as 16M";
            break;
        }
        if (v < 4096 || v > (1ull << 30)) {
            snprintf(range, sizeof range, "between 4K and 1G");
            break;
        }
        *(uint64_t *)field = v;
        return;
    }
    case V_LOGLEVEL:
        r = log_level_from_string(value);
        if (r < 0) {
            expect = "err, warning, notice, info or debug";
            break;
        }
        *(int *)field = r;
        return;
    case V_MODE:
        r = lookup_name(value, mode_names, ELEMENTSOF(mode_names));
        if (r < 0) {
            expect = "affinity or cgroup";
            break;
        }
        *(enum apply_mode *)field = (enum apply_mode)r;
        return;
    case V_DOMAIN:
        r = lookup_name(value, domain_names, ELEMENTSOF(domain_names));
        if (r < 0) {
            expect = "package, llc or numa";
            break;
        }
        *(enum pack_domain *)field = (enum pack_domain)r;
        return;
    case V_CLASS:
        r = task_class_from_string(value);
        if (r < 0) {
            expect = "jitter, intensive or ignore";
            break;
        }
        *(enum task_class *)field = (enum task_class)r;
        return;
    case V_UCLAMP: {
        bool b;
        if (strcmp(value, "auto") == 0)
            b = true;
        else if (parse_bool(value, &b) < 0) {
            expect = "auto, yes or no";
            break;
        }
        *(bool *)field = b;
        return;
    }
    case V_PATH:
    case V_SOCKET: {
        size_t max = st->type == V_SOCKET ? CONTROL_SOCKET_MAX : CONFIG_MAX_PATH_VALUE;
        if (value[0] != '/') {
            expect = "an absolute path";
            break;
        }
        if (strlen(value) > max) {
            snprintf(range, sizeof range, "at most %zu characters long", max);
            break;
        }
        if (set_string(field, value) < 0)
            perr(p, "out of memory");
        return;
    }
    case V_GROUP:
        if (!*value) {
            free(*(char **)field);
            *(char **)field = NULL;
            return;
        }
        if (strlen(value) > 32 || strpbrk(value, " \t:/,")) {
            expect = "a group name, or nothing for root only";
            break;
        }
        if (set_string(field, value) < 0)
            perr(p, "out of memory");
        return;
    case V_NAME:
        if (!valid_cgroup_name(value)) {
            expect = "a relative cgroup path without '.' or '..' components";
            break;
        }
        if (set_string(field, value) < 0)
            perr(p, "out of memory");
        return;
    case V_FACTOR: {
        unsigned v;
        if (parse_milli(value, &v) < 0) {
            expect = "a factor such as 1.25";
            break;
        }
        if (v < st->min || v > st->max) {
            char b[32];
            format_factor(b, sizeof b, st->max);
            /* n threads never do more than n threads' work */
            snprintf(range, sizeof range, "above 0 and at most %s", b);
            break;
        }
        *(unsigned *)field = v;
        return;
    }
    case V_PERCENT: {
        unsigned v;
        r = parse_percent_milli(value, UINT_MAX, &v);
        if (r < 0) {
            expect = "a percentage such as 12.5%";
            break;
        }
        if (v < st->min || v > st->max) {
            char a[32], b[32];
            format_percent(a, sizeof a, st->min);
            format_percent(b, sizeof b, st->max);
            snprintf(range, sizeof range, "between %s and %s", a, b);
            break;
        }
        *(unsigned *)field = v;
        return;
    }
    }
    if (expect)
        perr(p, "bad value '%s' for '%s': expected %s", value, st->key, expect);
    else
        perr(p, "bad value '%s' for '%s': must be %s", value, st->key, range);
}

static bool rule_key_ok(struct parser *p, const char *key, const char *value, bool continuation);

static void rule_key(struct parser *p, const char *key, const char *value, bool continuation)
{
    if (rule_key_ok(p, key, value, continuation))
        p->last_key_ok = true;
    else
        mark_broken(p);
}

/* false: reported */
static bool rule_key_ok(struct parser *p, const char *key, const char *value, bool continuation)
{
    struct rule *r = &p->c->rules[p->rule];
    enum rule_key k = rule_key_from_string(key);
    const char *why = NULL;
    if (k != _RULE_KEY_MAX) {
        if (!continuation && r->globs[k]) {
            perr(p, "duplicate key '%s' in rule '%s'", key, r->name);
            return false;
        }
        if (!r->globs[k]) {
            /* An empty list still marks the key as used. */
            r->globs[k] = calloc(1, sizeof(char *));
            if (!r->globs[k]) {
                perr(p, "out of memory");
                return false;
            }
        }
        if (globs_append(&r->globs[k], value, &why) < 0) {
            perr(p, "bad value for '%s': %s", key, why);
            return false;
        }
        return true;
    }
    if (continuation) {
        perr(p, "continuation line for '%s', which takes a single value", key);
        return false;
    }
    if (strcmp(key, "class") == 0) {
        int c = task_class_from_string(value);
        if (c < 0) {
            perr(p, "bad value '%s' for 'class': expected jitter, intensive or ignore", value);
            return false;
        }
        r->class = (enum task_class)c;
    } else if (strcmp(key, "cgroup_mode") == 0) {
        if (parse_bool(value, &r->cgroup_mode) < 0) {
            perr(p, "bad value '%s' for 'cgroup_mode': expected yes or no", value);
            return false;
        }
    } else {
        perr(p, "unknown key '%s' in rule '%s'", key, r->name);
        return false;
    }
    return true;
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
    struct parser *p = user;
    bool continuation = p->line == LINE_CONTINUATION;
    char *cut;
    if (continuation) {
        if (!p->last_key_ok)
            return 1;   /* the key itself was already reported */
        name = p->last_key;
        /* inih 55 leaves inline comments on continuation lines; newer ones
         * strip them. Strip here so both behave the same. */
        cut = strdupa(value);
        char *e = (char *)find_chars_or_comment(cut, NULL);
        *e = '\0';
        while (e > cut && isspace((unsigned char)e[-1]))
            *--e = '\0';
        value = cut;
        /* inih takes an indented "[section]" after a key for a continuation;
         * as globs it would be accepted silently. */
        if (value[0] == '[' && value[strlen(value) - 1] == ']') {
            perr(p, "indented section header (an indented line continues '%s')", name);
            return 1;
        }
    } else {
        snprintf(p->last_key, sizeof p->last_key, "%s", name);
        p->last_key_ok = false;
        if (strlen(name) >= sizeof p->last_key) {
            perr(p, "unknown key '%s'", name);
            return 1;
        }
    }
    switch (p->section) {
    case SEC_NONE:
        perr(p, "key '%s' outside of any section", name);
        return 1;
    case SEC_IGNORED:
        return 1;
    case SEC_RULE:
        rule_key(p, name, value, continuation);
        return 1;
    default:
        break;
    }
    for (size_t i = 0; i < ELEMENTSOF(settings); i++) {
        if (settings[i].section != p->section || strcmp(settings[i].key, name) != 0)
            continue;
        if (continuation) {
            perr(p, "continuation line for '%s', which takes a single value", name);
            return 1;
        }
        set_setting(p, &settings[i], value);
        p->last_key_ok = true;
        return 1;
    }
    perr(p, "unknown key '%s' in [%s]", name, p->section_name);
    return 1;
}

static void check_rules(struct parser *p)
{
    for (size_t i = p->first_rule; i < p->c->n_rules; i++) {
        const struct rule *r = &p->c->rules[i];
        if (is_broken(p, i))
            continue;
        p->lineno = r->line;
        if (r->class == CLASS_UNSET)
            perr(p, "rule '%s' has no class (jitter, intensive or ignore)", r->name);
        bool any = false;
        for (unsigned k = 0; k < _RULE_KEY_MAX; k++) {
            if (!r->globs[k])
                continue;
            any = true;
            if (!r->globs[k][0])
                perr(p, "rule '%s': '%s' has no glob", r->name, rule_key_names[k]);
        }
        if (!any)
            perr(p, "rule '%s' has no match key (comm, exe, cmdline, cgroup, unit or user)", r->name);
    }
}

int config_load_string(const char *text, const char *name, struct config *c)
{
    struct parser p = {
        .c = c,
        .name = name ? name : "<string>",
        .pos = text ? text : "",
        .first_rule = c->n_rules,
    };
    int r = ini_parse_stream(reader, &p, handler, &p);
    if (r == -2) {
        log_err("%s: out of memory", p.name);
        free(p.broken);
        return -ENOMEM;
    }
    check_rules(&p);
    free(p.broken);
    return p.n_errors ? -EINVAL : 0;
}

/* ---------------------------------------------------------------- files */

static int read_config_file(const char *path, char **ret)
{
    _cleanup_fclose_ FILE *f = fopen(path, "re");
    if (!f)
        return -errno;
    struct stat st;
    if (fstat(fileno(f), &st) < 0)
        return -errno;
    if (S_ISDIR(st.st_mode))
        return -EISDIR;
    _cleanup_free_ char *buf = malloc(CONFIG_MAX_FILE_BYTES + 1);
    if (!buf)
        return -ENOMEM;
    size_t n = fread(buf, 1, CONFIG_MAX_FILE_BYTES + 1, f);
    if (ferror(f))
        return -EIO;
    if (n > CONFIG_MAX_FILE_BYTES)
        return -EFBIG;
    if (memchr(buf, '\0', n))
        return -EBADMSG;
    buf[n] = '\0';
    *ret = buf;
    buf = NULL;
    return 0;
}

static int load_file(struct config *c, const char *path)
{
    _cleanup_free_ char *text = NULL;
    int r = read_config_file(path, &text);
    if (r < 0) {
        if (r == -EBADMSG)
            log_err("%s: contains a NUL byte, not a text file", path);
        else if (r == -EFBIG)
            log_err("%s: larger than %d bytes", path, CONFIG_MAX_FILE_BYTES);
        else
            log_err("%s: cannot read: %s", path, strerror(-r));
        return r;
    }
    return config_load_string(text, path, c);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int load_dropins(struct config *c, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT)
            return 0;
        int r = -errno;
        log_err("%s: cannot read drop-in directory: %s", dir, strerror(-r));
        return r;
    }
    char **names = NULL;
    size_t n = 0;
    int r = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (de->d_name[0] == '.' || len < 6 || strcmp(de->d_name + len - 5, ".conf") != 0)
            continue;
        char **nn = realloc(names, (n + 1) * sizeof *nn);
        char *s = nn ? strdup(de->d_name) : NULL;
        if (nn)
            names = nn;
        if (!s) {
            r = -ENOMEM;
            break;
        }
        names[n++] = s;
    }
    closedir(d);
    if (r == 0) {
        if (n > 0)
            qsort(names, n, sizeof *names, cmp_str);
        for (size_t i = 0; i < n; i++) {
            char path[PATH_MAX];
            if (snprintf(path, sizeof path, "%s/%s", dir, names[i]) >= (int)sizeof path) {
                log_err("%s/%s: path too long", dir, names[i]);
                r = -EINVAL;
                continue;
            }
            int q = load_file(c, path);
            if (q < 0)
                r = -EINVAL;
        }
    } else
        log_err("%s: out of memory reading drop-ins", dir);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return r;
}

int config_load(const char *path, const char *dropin_dir, struct config **ret)
{
    if (!path)
        path = CONFIG_PATH_DEFAULT;
    struct config *c;
    if (config_new_default(&c) < 0)
        return -ENOMEM;
    if (!(c->path = strdup(path))) {
        config_destroy(c);
        return -ENOMEM;
    }
    char derived[PATH_MAX];
    if (!dropin_dir) {
        const char *slash = strrchr(path, '/');
        int n = slash ? snprintf(derived, sizeof derived, "%.*s/%s", (int)(slash == path ? 0 : slash - path), path,
                                 CONFIG_DROPIN_SUBDIR)
                      : snprintf(derived, sizeof derived, "%s", CONFIG_DROPIN_SUBDIR);
        if (n < 0 || (size_t)n >= sizeof derived) {
            log_err("%s: path too long", path);
            config_destroy(c);
            return -EINVAL;
        }
        dropin_dir = derived;
    }
    int r = load_file(c, path);
    if (r < 0 && r != -EINVAL) {
        /* Unreadable main file: nothing more worth saying. */
        config_destroy(c);
        return r == -ENOENT ? -ENOENT : -EINVAL;
    }
    int q = load_dropins(c, dropin_dir);
    if (r < 0 || q < 0) {
        config_destroy(c);
        return -EINVAL;
    }
    *ret = c;
    return 0;
}

/* ---------------------------------------------------------------- print */

static bool glob_needs_quotes(const char *g)
{
    /* Empty, or a start that inih would take for a comment. */
    if (!*g || *g == ';' || *g == '#')
        return true;
    for (const char *s = g; *s; s++)
        if (is_blank(*s))
            return true;
    return false;
}

static void print_globs(FILE *f, const char *key, char *const *globs)
{
    size_t limit = config_max_line();
    if (limit > 100)
        limit = 100;
    /* Everything on one line if it fits, else continuation lines. */
    size_t total = strlen(key) + 2;
    for (char *const *g = globs; *g; g++)
        total += strlen(*g) + 3;
    if (total <= limit) {
        fprintf(f, "%s =", key);
        for (char *const *g = globs; *g; g++)
            fprintf(f, glob_needs_quotes(*g) ? " \"%s\"" : " %s", *g);
        fputc('\n', f);
        return;
    }
    fprintf(f, "%s =\n", key);
    size_t col = 0;
    for (char *const *g = globs; *g; g++) {
        size_t w = strlen(*g) + (glob_needs_quotes(*g) ? 2 : 0);
        if (col > 0 && col + 1 + w > limit) {
            fputc('\n', f);
            col = 0;
        }
        fputc(col == 0 ? '\t' : ' ', f);
        fprintf(f, glob_needs_quotes(*g) ? "\"%s\"" : "%s", *g);
        col += 1 + w;
    }
    fputc('\n', f);
}

void config_print(FILE *f, const struct config *c)
{
    char b[64];
    fprintf(f, "# %s\n", c->path ? c->path : "(defaults)");
    fprintf(f, "[daemon]\n");
    format_duration(b, sizeof b, c->tick_ms);
    fprintf(f, "tick_interval = %s\n", b);
    fprintf(f, "mode = %s\n", (unsigned)c->mode < ELEMENTSOF(mode_names) ? mode_names[c->mode] : "?");
    fprintf(f, "dry_run = %s\n", c->dry_run ? "yes" : "no");
    fprintf(f, "log_level = %s\n", c->log_level >= 0 && c->log_level < 8 ? level_names[c->log_level] : "?");
    format_size(b, sizeof b, c->rcvbuf_bytes);
    fprintf(f, "netlink_rcvbuf = %s\n", b);
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
    fprintf(f, "\n[packing]\n");
    format_percent(b, sizeof b, c->busy_threshold_milli);
    fprintf(f, "busy_threshold = %s\n", b);
    format_percent(b, sizeof b, c->headroom_milli);
    fprintf(f, "headroom = %s\n", b);
    format_percent(b, sizeof b, c->idle_machine_milli);
    fprintf(f, "idle_threshold = %s\n", b);
    format_duration(b, sizeof b, c->hold_ms);
    fprintf(f, "hold_time = %s\n", b);
    format_duration(b, sizeof b, c->min_change_ms);
    fprintf(f, "min_change_interval = %s\n", b);
    format_duration(b, sizeof b, c->half_life_ms);
    fprintf(f, "half_life = %s\n", b);
    fprintf(f, "domain = %s\n", (unsigned)c->domain < ELEMENTSOF(domain_names) ? domain_names[c->domain] : "?");
    fprintf(f, "\n[classify]\n");
    fprintf(f, "uclamp = %s\n", c->use_uclamp ? "auto" : "no");
    fprintf(f, "uclamp_threshold = %u\n", c->uclamp_threshold);
    format_duration(b, sizeof b, c->uclamp_recheck_ms);
    fprintf(f, "uclamp_recheck_interval = %s\n", b);
    fprintf(f, "default_class = %s\n", task_class_to_string(c->default_class));
    fprintf(f, "unit_optin = %s\n", c->unit_optin ? "yes" : "no");
    for (size_t i = 0; i < c->n_rules; i++) {
        const struct rule *r = &c->rules[i];
        fprintf(f, "\n# %s:%u\n[rule %s]\n", r->file ? r->file : "?", r->line, r->name);
        for (unsigned k = 0; k < _RULE_KEY_MAX; k++)
            if (r->globs[k])
                print_globs(f, rule_key_names[k], r->globs[k]);
        fprintf(f, "class = %s\n", task_class_to_string(r->class));
        if (r->cgroup_mode)
            fprintf(f, "cgroup_mode = yes\n");
    }
}

/* config_print without the "# origin" comment lines. */
static char *print_bare(const struct config *c)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (!f)
        return NULL;
    config_print(f, c);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    char *w = buf;
    for (char *r = buf; *r;) {
        char *nl = strchrnul(r, '\n');
        size_t n = (size_t)(nl - r) + (*nl ? 1 : 0);
        if (*r != '#') {
            memmove(w, r, n);
            w += n;
        }
        r += n;
    }
    *w = '\0';
    return buf;
}

int config_check_print(const struct config *c)
{
    _cleanup_free_ char *once = print_bare(c);
    if (!once)
        return -ENOMEM;
    struct config again;
    config_init_defaults(&again);
    int r = config_load_string(once, "<printed>", &again);
    _cleanup_free_ char *twice = r == 0 ? print_bare(&again) : NULL;
    config_done(&again);
    if (r < 0) {
        log_debug("printed configuration does not parse:\n%s", once);
        return -EPROTO;
    }
    if (!twice)
        return -ENOMEM;
    if (strcmp(once, twice) != 0) {
        log_debug("configuration differs after print and parse:\n%s\n---\n%s", once, twice);
        return -EPROTO;
    }
    return 0;
}
