/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared by config.c (lines, sections, files, print), config-settings.c (the
 * keys of the settings sections, one parser per value type) and
 * config-rules.c ([rule NAME] sections). Not for other modules. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "config.h"

enum section_kind { SEC_NONE, SEC_DAEMON, SEC_CAPACITY, SEC_PACKING, SEC_CLASSIFY, SEC_RULE, SEC_IGNORED };

enum line_kind { LINE_BLANK, LINE_SECTION, LINE_KEY, LINE_CONTINUATION, LINE_BAD };

/* One file being parsed. */
struct parser {
    struct config *c;
    const char *name;
    const char *pos;
    unsigned lineno;
    unsigned n_errors;
    enum line_kind line;
    bool prev_name; /* mirrors inih: a key was seen in this section */
    enum section_kind section;
    char section_name[16]; /* for messages: "daemon", ... */
    size_t rule;           /* index of the current rule (SEC_RULE) */
    size_t first_rule;     /* first rule defined by this file */
    char last_key[32];
    /* line of each behaviour_* key in this file (0: not set here), for
     * the checks across keys that run after the file */
    unsigned behaviour_lines[8];
    unsigned freq_line; /* the last [capacity] active<N> key of this file */
    bool last_key_ok;
    /* rules with a bad key: already reported, not checked again at the end */
    size_t *broken;
    size_t n_broken;
};

/* "file:line: message" at error level, and the file counts as bad. */
void config_perr(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- config-settings.c ---- */

/* A key of the section p is in (not a rule): set it, or report why not.
 * false if the section has no such key (not reported). */
bool config_setting_set(struct parser *p, const char *key, const char *value, bool continuation);
/* The settings sections in config-file syntax, every key. */
void config_print_settings(FILE *f, const struct config *c);
/* After the file: the behaviour_* keys together (the intensive limit above
 * the jitter one), reported at the line of the key at fault. */
void config_settings_check(struct parser *p);

/* ---- config-rules.c ---- */

/* A "[rule NAME]" header: the rule starts, or the section is ignored. */
void config_rule_start(struct parser *p, const char *name, size_t n);
/* A key (or continuation line) inside the current rule. */
void config_rule_key(struct parser *p, const char *key, const char *value, bool continuation);
/* The current rule's key is lost (reported already): no more errors for it. */
void config_rule_mark_broken(struct parser *p);
/* After the file: rules of this file without a class or a match key. */
void config_rules_check(struct parser *p);
/* Frees what a rule holds. */
void config_rule_done(struct rule *r);
/* The rules as [rule NAME] sections with their origin. */
void config_print_rules(FILE *f, const struct config *c);
