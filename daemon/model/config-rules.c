/* SPDX-License-Identifier: GPL-2.0-or-later */
/* [rule NAME] sections: their names, match keys with their globs, class and
 * cgroup_mode, the checks once a file is read, and their printed form. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config-parse.h"
#include "util.h"

#define CONFIG_MAX_RULES 10000u
#define CONFIG_MAX_GLOBS 1024u
#define RULE_NAME_MAX 64u

static const char *const rule_key_names[_RULE_KEY_MAX] = {
    [RULE_COMM] = "comm",     [RULE_EXE] = "exe",   [RULE_CMDLINE] = "cmdline",
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

static void strv_free(char **l)
{
    if (!l)
        return;
    for (char **p = l; *p; p++)
        free(*p);
    free(l);
}

void config_rule_done(struct rule *r)
{
    free(r->name);
    free(r->file);
    for (unsigned k = 0; k < _RULE_KEY_MAX; k++)
        strv_free(r->globs[k]);
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

void config_rule_mark_broken(struct parser *p)
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

static bool valid_rule_name(const char *s, size_t n)
{
    if (n == 0 || n > RULE_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr("-_.@:+", s[i]))
            return false;
    return true;
}

void config_rule_start(struct parser *p, const char *name, size_t n)
{
    if (!valid_rule_name(name, n)) {
        config_perr(p, "invalid rule name '%.*s' (1-%u of A-Z a-z 0-9 - _ . @ : +)", (int)MIN(n, 200u), name,
                    RULE_NAME_MAX);
        p->section = SEC_IGNORED;
        return;
    }
    struct config *c = p->c;
    for (size_t i = 0; i < c->n_rules; i++) {
        if (strlen(c->rules[i].name) == n && memcmp(c->rules[i].name, name, n) == 0) {
            config_perr(p, "duplicate rule '%.*s' (first defined at %s:%u)", (int)n, name, c->rules[i].file,
                        c->rules[i].line);
            p->section = SEC_IGNORED;
            return;
        }
    }
    if (c->n_rules >= CONFIG_MAX_RULES) {
        config_perr(p, "too many rules (at most %u)", CONFIG_MAX_RULES);
        p->section = SEC_IGNORED;
        return;
    }
    struct rule *nr = realloc(c->rules, (c->n_rules + 1) * sizeof *nr);
    if (!nr) {
        config_perr(p, "out of memory");
        p->section = SEC_IGNORED;
        return;
    }
    c->rules = nr;
    struct rule *r = &c->rules[c->n_rules];
    *r = (struct rule){.class = CLASS_UNSET, .line = p->lineno};
    r->name = strndup(name, n);
    r->file = strdup(p->name);
    if (!r->name || !r->file) {
        config_rule_done(r);
        config_perr(p, "out of memory");
        p->section = SEC_IGNORED;
        return;
    }
    p->rule = c->n_rules++;
    p->section = SEC_RULE;
}

/* false: reported */
static bool rule_key_ok(struct parser *p, const char *key, const char *value, bool continuation)
{
    struct rule *r = &p->c->rules[p->rule];
    enum rule_key k = rule_key_from_string(key);
    const char *why = NULL;
    if (k != _RULE_KEY_MAX) {
        if (!continuation && r->globs[k]) {
            config_perr(p, "duplicate key '%s' in rule '%s'", key, r->name);
            return false;
        }
        if (!r->globs[k]) {
            /* An empty list still marks the key as used. */
            r->globs[k] = calloc(1, sizeof(char *));
            if (!r->globs[k]) {
                config_perr(p, "out of memory");
                return false;
            }
        }
        if (globs_append(&r->globs[k], value, &why) < 0) {
            config_perr(p, "bad value for '%s': %s", key, why);
            return false;
        }
        return true;
    }
    if (continuation) {
        config_perr(p, "continuation line for '%s', which takes a single value", key);
        return false;
    }
    if (strcmp(key, "class") == 0) {
        int c = task_class_from_string(value);
        if (c < 0) {
            config_perr(p, "bad value '%s' for 'class': expected jitter, intensive or ignore", value);
            return false;
        }
        r->class = (enum task_class)c;
    } else if (strcmp(key, "cgroup_mode") == 0) {
        if (parse_bool(value, &r->cgroup_mode) < 0) {
            config_perr(p, "bad value '%s' for 'cgroup_mode': expected yes or no", value);
            return false;
        }
    } else {
        config_perr(p, "unknown key '%s' in rule '%s'", key, r->name);
        return false;
    }
    return true;
}

void config_rule_key(struct parser *p, const char *key, const char *value, bool continuation)
{
    if (rule_key_ok(p, key, value, continuation))
        p->last_key_ok = true;
    else
        config_rule_mark_broken(p);
}

void config_rules_check(struct parser *p)
{
    for (size_t i = p->first_rule; i < p->c->n_rules; i++) {
        const struct rule *r = &p->c->rules[i];
        if (is_broken(p, i))
            continue;
        p->lineno = r->line;
        if (r->class == CLASS_UNSET)
            config_perr(p, "rule '%s' has no class (jitter, intensive or ignore)", r->name);
        bool any = false;
        for (unsigned k = 0; k < _RULE_KEY_MAX; k++) {
            if (!r->globs[k])
                continue;
            any = true;
            if (!r->globs[k][0])
                config_perr(p, "rule '%s': '%s' has no glob", r->name, rule_key_names[k]);
        }
        if (!any)
            config_perr(p, "rule '%s' has no match key (comm, exe, cmdline, cgroup, unit or user)", r->name);
    }
}

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

void config_print_rules(FILE *f, const struct config *c)
{
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
