/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The rule matcher. Pure: no I/O. */
#include "rules.h"

#include <fnmatch.h>

const char *match_input_get(const struct match_input *in, enum rule_key k)
{
    switch (k) {
    case RULE_COMM:
        return in->comm;
    case RULE_EXE:
        return in->exe;
    case RULE_CMDLINE:
        return in->cmdline;
    case RULE_CGROUP:
        return in->cgroup;
    case RULE_UNIT:
        return in->unit;
    case RULE_USER:
        return in->user;
    case _RULE_KEY_MAX:
        break;
    }
    return NULL;
}

bool rules_globs_match(char *const *globs, const char *value)
{
    if (!globs || !value)
        return false;
    for (char *const *g = globs; *g; g++)
        if (fnmatch(*g, value, 0) == 0)
            return true;
    return false;
}

int rule_first_mismatch(const struct rule *r, const struct match_input *in)
{
    bool used = false;
    for (unsigned k = 0; k < _RULE_KEY_MAX; k++) {
        if (!r->globs[k])
            continue;
        used = true;
        if (!rules_globs_match(r->globs[k], match_input_get(in, (enum rule_key)k)))
            return (int)k;
    }
    /* A rule without keys matches nothing (the config loader rejects it). */
    return used ? -1 : 0;
}

bool rule_matches(const struct rule *r, const struct match_input *in) { return rule_first_mismatch(r, in) < 0; }

bool rule_matches_keys(const struct rule *r, const struct match_input *in, unsigned keys)
{
    bool used = false;
    for (unsigned k = 0; k < _RULE_KEY_MAX; k++) {
        if (!r->globs[k])
            continue;
        used = true;
        if ((keys & (1u << k)) && !rules_globs_match(r->globs[k], match_input_get(in, (enum rule_key)k)))
            return false;
    }
    return used;
}

int rules_match(const struct rule *rules, size_t n, const struct match_input *in)
{
    for (size_t i = 0; i < n; i++)
        if (rule_matches(&rules[i], in))
            return (int)i;
    return -1;
}

unsigned rules_keys_used(const struct rule *rules, size_t n)
{
    unsigned mask = 0;
    for (size_t i = 0; i < n; i++)
        for (unsigned k = 0; k < _RULE_KEY_MAX; k++)
            if (rules[i].globs[k])
                mask |= 1u << k;
    return mask;
}
