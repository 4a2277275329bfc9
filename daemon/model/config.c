/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Configuration: inih does the key = value splitting; we feed it lines
 * ourselves so that every message carries file:line, over-long lines are
 * reported instead of split, and syntax errors inih only counts get said. */
#include "config.h"
#include "config-parse.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "delay-guard.h"
#include "log.h"
#include "util.h"
#include "varlink.h"

#define CONFIG_MAX_FILE_BYTES (1024 * 1024)

/* ------------------------------------------------------- defaults, free */

void config_init_defaults(struct config *c)
{
    *c = (struct config){
        .tick_ms = 250,
        .log_level = LOG_INFO,
        .dry_run = false,
        .mode = APPLY_AFFINITY,
        .rcvbuf_bytes = 16u << 20,
        /* Placement is a reaction to the storm of forks it follows: at nice 0
         * the daemon waits for a CPU behind that storm (docs/benchmarks.md). */
        .nice = -10,
        /* ... and under a storm even nice -20 waits behind it: EEVDF gives
         * weight, not wake-up preemption (docs/hacking.md). */
        .realtime_priority = 1,
        .max_tasks = 131072,
        .policy =
            {
                .busy_threshold_milli = 125,
                .headroom_milli = 100,
                .idle_machine_milli = 50,
                .hold_ms = 1000,
                .min_change_ms = 2000,
                .domain = DOMAIN_PACKAGE,
                .half_life_ms = 1000,
                .jitter_slice_ns = SLICE_DEFAULT_NS,
                .max_run_delay_ns = DELAY_MAX_RUN_DELAY_NS_DEFAULT,
            },
        .use_uclamp = true,
        .uclamp_threshold = 204,
        .uclamp_recheck_ms = 5000,
        .default_class = CLASS_IGNORE,
        .unit_optin = true,
        .request_paths = true,
        .tail_guard = true,
        .freq_probe = true,
    };
    capacity_table_default(&c->capacity);
    behaviour_params_init(&c->behaviour);
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
        config_rule_done(&c->rules[i]);
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

size_t config_max_line(void) { return ini_max_line > 3 ? (size_t)ini_max_line - 3 : 0; }

/* -------------------------------------------------------------- parsing */

void config_perr(struct parser *p, const char *fmt, ...)
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

/* A "[...]" line (start points at '['). */
static void parse_section(struct parser *p, const char *start)
{
    const char *end = find_chars_or_comment(start + 1, "]");
    p->section = SEC_IGNORED;
    if (*end != ']') {
        config_perr(p, "section header without ']'");
        return;
    }
    const char *rest = end + 1;
    while (isspace((unsigned char)*rest))
        rest++;
    if (*rest && *rest != ';') {
        config_perr(p, "unexpected text after section header");
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
        {"daemon", SEC_DAEMON},
        {"capacity", SEC_CAPACITY},
        {"packing", SEC_PACKING},
        {"classify", SEC_CLASSIFY},
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
        config_rule_start(p, s, (size_t)(e - s));
        return;
    }
    if (n == 4 && memcmp(s, "rule", 4) == 0)
        config_perr(p, "rule section without a name (expected [rule NAME])");
    else
        config_perr(p, "unknown section [%.*s]", (int)MIN(n, 200u), s);
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
            config_perr(p, "expected 'key = value', '[section]' or a comment");
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
        config_perr(p, "line too long (%zu characters, at most %zu)", content, max);
        if (p->section == SEC_RULE)
            config_rule_mark_broken(p); /* its key is lost: no second error for it */
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

static int handler(void *user, const char *section, const char *name, const char *value)
{
    struct parser *p = user;
    bool continuation = p->line == LINE_CONTINUATION;
    char *cut;
    if (continuation) {
        if (!p->last_key_ok)
            return 1; /* the key itself was already reported */
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
            config_perr(p, "indented section header (an indented line continues '%s')", name);
            return 1;
        }
    } else {
        snprintf(p->last_key, sizeof p->last_key, "%s", name);
        p->last_key_ok = false;
        if (strlen(name) >= sizeof p->last_key) {
            config_perr(p, "unknown key '%s'", name);
            return 1;
        }
    }
    switch (p->section) {
    case SEC_NONE:
        config_perr(p, "key '%s' outside of any section", name);
        return 1;
    case SEC_IGNORED:
        return 1;
    case SEC_RULE:
        config_rule_key(p, name, value, continuation);
        return 1;
    default:
        break;
    }
    if (config_setting_set(p, name, value, continuation))
        p->last_key_ok = true;
    else
        config_perr(p, "unknown key '%s' in [%s]", name, p->section_name);
    return 1;
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
    config_rules_check(&p);
    config_settings_check(&p);
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
            log_error_errno(r, "%s: cannot read: %m", path);
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
        log_error_errno(r, "%s: cannot read drop-in directory: %m", dir);
        return r;
    }
    char **names = NULL;
    size_t n = 0;
    int r = 0;
    struct dirent *de;
    for (errno = 0; (de = readdir(d)); errno = 0) {
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
    if (r == 0 && errno)
        r = log_error_errno(-errno, "%s: listing the drop-ins: %m", dir);
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
    } else if (r == -ENOMEM)
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

void config_print(FILE *f, const struct config *c)
{
    fprintf(f, "# %s\n", c->path ? c->path : "(defaults)");
    config_print_settings(f, c);
    config_print_rules(f, c);
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
