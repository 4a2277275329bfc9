/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The rule matcher: which [rule NAME] section, if any, a task matches. Pure:
 * plain structs in, an index out; no I/O. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "config.h"

/* What is known about a task. NULL means unknown (not read, unreadable, a
 * kernel thread's exe): a rule that uses that key does not match. */
struct match_input {
    const char *comm;
    const char *exe;
    const char *cmdline; /* arguments joined by single spaces */
    const char *cgroup;
    const char *unit; /* e.g. "nginx.service", "session-3.scope" */
    const char *user; /* user name, or the uid in decimal */
};

/* The input field for a key. */
const char *match_input_get(const struct match_input *in, enum rule_key k);

/* fnmatch(3) without flags: '*' also matches '/'. True if any glob matches. */
bool rules_globs_match(char *const *globs, const char *value);
/* True if every key the rule uses has a matching glob. */
bool rule_matches(const struct rule *r, const struct match_input *in);
/* The first key (in enum order) that keeps the rule from matching, or -1 if
 * it matches. For explanations. */
int rule_first_mismatch(const struct rule *r, const struct match_input *in);
/* A rule's match in two parts: true if the rule uses some key and each of
 * its keys within `keys` (a mask of 1u << enum rule_key) has a matching
 * glob; its other keys are not looked at. rule_matches(r, in) is
 * rule_matches_keys(r, in, A) && rule_matches_keys(r, in, ~A) for any A, so
 * the part on process-wide keys can be remembered while comm changes. */
bool rule_matches_keys(const struct rule *r, const struct match_input *in, unsigned keys);
/* Index of the first matching rule, or -1. */
int rules_match(const struct rule *rules, size_t n, const struct match_input *in);
/* Bitmask of (1u << enum rule_key) over every key some rule uses, so the
 * caller reads only those inputs. */
unsigned rules_keys_used(const struct rule *rules, size_t n);
