/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The classifier: slice and unit opt-in, then rules, then uclamp, then the
 * default. The decision itself (decide) reads only what procinfo gathered,
 * or what was remembered of it for the task's process. */
#include "classifier.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "pidmap.h"
#include "procinfo.h"
#include "rules.h"
#include "util.h"

struct classifier {
    const struct config *cfg;
    char *proc_root;
    bool uclamp_supported;
    uclamp_get_fn uclamp_get;
    void *uclamp_userdata;
    struct units *units;
    bool units_tried;
    sd_event *event;                       /* the loop a bus made later is attached to (classifier_attach_event) */
    unsigned keys;                         /* what procinfo_read must fill */
    classifier_behaviour_fn behaviour_get; /* NULL: no behaviour verdicts */
    void *behaviour_userdata;
    /* batch cache of process-wide inputs */
    bool batch;
    bool cache_valid;
    pid_t cache_pid;
    struct procinfo cache;
    /* What the process-wide inputs decided, per process, for comm and uid
     * changes (see struct proc_entry). */
    struct pidmap procs; /* PID -> struct proc_entry * */
    uint32_t procs_gen;  /* entries of an older one predate the last rescan */
};

/* Keys that belong to one thread and change without an exec: comm (comm
 * event) and the user, taken from the task's euid (uid event). */
#define THREAD_KEYS ((1u << RULE_COMM) | (1u << RULE_USER))

/* A rename or a uid change cannot change a process's exe, cmdline or cgroup
 * (a cgroup move sends no event at all), so a comm or uid event needs only
 * what these inputs decided. Kept from a full read of the thread group
 * leader (new task, exec, reload, rescan) until the leader is gone; 16 bytes
 * plus a bit per rule plus the unit's name, and a 16-byte map entry, per
 * process. */
struct proc_entry {
    uint32_t gen; /* the classifier's procs_gen when it was read */
    bool in_jitter_slice;
    char *optin_unit;  /* whose X-TurboSched= counts; NULL: none */
    uint8_t wide_ok[]; /* bit i: rule i's keys other than THREAD_KEYS match */
};

/* What decide looks at: the thread's comm and user in `in`, and either the
 * process-wide inputs in `in` too (wide_ok NULL) or what they decided. */
struct view {
    const struct match_input *in;
    bool in_jitter_slice;
    const char *optin_unit;
    const uint8_t *wide_ok;
};

struct decision {
    enum task_class class;
    enum class_source source;
    int rule;
    unsigned util_max;
    bool util_read;
    const char *unit_origin;
};

static int apply(struct task *t, const struct decision *d);

static int default_uclamp_get(pid_t tid, unsigned *util_max, void *userdata)
{
    (void)userdata;
    return uclamp_get_util_max(tid, util_max);
}

static bool unit_optin_active(const struct classifier *c) { return c->cfg->unit_optin && c->units; }

static void update_keys(struct classifier *c)
{
    c->keys = rules_keys_used(c->cfg->rules, c->cfg->n_rules);
    if (c->cfg->unit_optin)
        c->keys |= PROCINFO_WANT_SLICE;
    if (unit_optin_active(c))
        c->keys |= 1u << RULE_UNIT;
}

static void connect_units(struct classifier *c)
{
    if (!c->cfg->unit_optin || c->units || c->units_tried)
        return;
    c->units_tried = true;
    int r = units_new(&c->units);
    if (r < 0)
        log_info_errno(r, "unit opt-in: systemd is not on the system bus (%m): X-TurboSched= is not read; "
                          "turbosched-jitter.slice still applies");
    else if (c->event && (r = units_attach_event(c->units, c->event)) < 0)
        log_warning_errno(r, "unit opt-in: attaching the system bus to the event loop: %m; "
                             "X-TurboSched= is read, but not again after a daemon-reload");
}

int classifier_new(const struct config *cfg, const char *proc_root, struct classifier **ret)
{
    struct classifier *c = calloc(1, sizeof *c);
    if (!c)
        return -ENOMEM;
    c->cfg = cfg;
    PIDMAP_INIT(&c->procs, struct proc_entry *);
    c->proc_root = strdup(proc_root ? proc_root : "/");
    if (!c->proc_root) {
        free(c);
        return -ENOMEM;
    }
    c->uclamp_supported = uclamp_supported(proc_root);
    c->uclamp_get = default_uclamp_get;
    if (cfg->use_uclamp && !c->uclamp_supported)
        /* util_max would read 0 for every task: all of them would look like jitter. */
        log_info("uclamp: the kernel lacks CONFIG_UCLAMP_TASK (no /proc/sys/kernel/sched_util_clamp_max); "
                 "classifying by rules only");
    connect_units(c);
    update_keys(c);
    *ret = c;
    return 0;
}

static void proc_entry_free(struct proc_entry *e)
{
    free(e->optin_unit);
    free(e);
}

static void procs_flush(struct classifier *c)
{
    size_t iter = 0;
    struct proc_entry **e;
    while ((e = pidmap_next(&c->procs, &iter, NULL)))
        proc_entry_free(*e);
    pidmap_clear(&c->procs); /* keeps the table for the next batch */
}

static struct proc_entry *procs_find(struct classifier *c, pid_t pid)
{
    struct proc_entry **e = pidmap_find(&c->procs, pid);
    return e ? *e : NULL;
}

static void procs_remove(struct classifier *c, pid_t pid)
{
    struct proc_entry *e;
    if (pidmap_remove(&c->procs, pid, &e) == 0)
        proc_entry_free(e);
}

static const char *optin_unit_of(const struct procinfo *pi)
{
    if (!pi->in.unit)
        return NULL;
    return pi->system_unit[0] ? pi->system_unit : pi->unit;
}

/* Remember what pi's process-wide inputs decide for the process pid. Out of
 * memory only costs a re-read at the next comm or uid event. */
static void procs_remember(struct classifier *c, pid_t pid, const struct procinfo *pi)
{
    const struct config *cfg = c->cfg;
    if (pidmap_reserve(&c->procs, pidmap_count(&c->procs) + 1) < 0)
        return;
    struct proc_entry *e = calloc(1, sizeof *e + (cfg->n_rules + 7) / 8);
    if (!e)
        return;
    e->gen = c->procs_gen;
    e->in_jitter_slice = pi->in_jitter_slice;
    const char *unit = unit_optin_active(c) ? optin_unit_of(pi) : NULL;
    if (unit && !(e->optin_unit = strdup(unit))) {
        free(e);
        return;
    }
    for (size_t i = 0; i < cfg->n_rules; i++)
        if (rule_matches_keys(&cfg->rules[i], &pi->in, ~THREAD_KEYS))
            e->wide_ok[i / 8] |= (uint8_t)(1u << (i % 8));
    struct proc_entry **slot;
    /* cannot fail: reserved above, and the caller removed pid first */
    if (pidmap_insert(&c->procs, pid, (void **)&slot) < 0) {
        proc_entry_free(e);
        return;
    }
    *slot = e;
}

void classifier_free(struct classifier *c)
{
    if (!c)
        return;
    procs_flush(c);
    pidmap_done(&c->procs);
    units_free(c->units);
    free(c->proc_root);
    free(c);
}

int classifier_attach_event(struct classifier *c, sd_event *e)
{
    c->event = e;
    return units_attach_event(c->units, e);
}

void classifier_set_config(struct classifier *c, const struct config *cfg)
{
    c->cfg = cfg;
    c->cache_valid = false;
    /* Rules, and so the inputs read, may have changed: read everything afresh. */
    procs_flush(c);
    units_cache_flush(c->units);
    procinfo_user_cache_flush();
    /* unit_optin may just have been switched on; a failed connect is retried once per reload. */
    c->units_tried = false;
    connect_units(c);
    update_keys(c);
}

void classifier_set_uclamp_ops(struct classifier *c, bool supported, uclamp_get_fn fn, void *userdata)
{
    c->uclamp_supported = supported;
    c->uclamp_get = fn ? fn : default_uclamp_get;
    c->uclamp_userdata = userdata;
}

void classifier_set_units(struct classifier *c, struct units *u)
{
    units_free(c->units);
    c->units = u;
    c->units_tried = true;
    procs_flush(c);
    update_keys(c);
}

bool classifier_uclamp_supported(const struct classifier *c) { return c->uclamp_supported; }
bool classifier_uses_user(const struct classifier *c) { return c->keys & (1u << RULE_USER); }
bool classifier_unit_optin_active(const struct classifier *c) { return unit_optin_active(c); }

void classifier_batch_begin(struct classifier *c)
{
    c->batch = true;
    c->cache_valid = false;
    /* A rescan follows lost events, execs among them: what was remembered
     * per process may be stale, and is read again at its next use. Kept,
     * not flushed, as its leader is still there to end it: a thread whose
     * entry was flushed read its whole process at each rename. (A reload
     * has flushed already.) */
    c->procs_gen++;
}

void classifier_task_gone(struct classifier *c, const struct task *t)
{
    pid_t pid = t->pid > 0 ? t->pid : t->tid;
    if (t->tid == pid)
        procs_remove(c, pid);
}

size_t classifier_memory_bytes(const struct classifier *c)
{
    size_t n = pidmap_memory_bytes(&c->procs), iter = 0;
    struct proc_entry *const *p;
    while ((p = pidmap_next(&c->procs, &iter, NULL))) {
        const struct proc_entry *e = *p;
        n += sizeof *e + (c->cfg->n_rules + 7) / 8 + (e->optin_unit ? strlen(e->optin_unit) + 1 : 0);
    }
    return n;
}

void classifier_batch_end(struct classifier *c)
{
    c->batch = false;
    c->cache_valid = false;
}

/* The thread's own inputs: comm from the task (the proc connector's) or
 * else its comm file, the user from its euid. */
static int gather_thread(struct classifier *c, const struct task *t, struct match_input *in, char comm[static 16],
                         char *user, size_t user_size)
{
    pid_t pid = t->pid > 0 ? t->pid : t->tid;
    in->comm = NULL;
    in->user = NULL;
    if (c->keys & (1u << RULE_COMM)) {
        if (t->comm[0]) {
            snprintf(comm, 16, "%s", t->comm);
        } else {
            struct procinfo one;
            int r = procinfo_read(c->proc_root, pid, t->tid, 1u << RULE_COMM, &one);
            if (r < 0)
                return r;
            memcpy(comm, one.comm, 16);
        }
        in->comm = comm;
    }
    if (c->keys & (1u << RULE_USER)) {
        if (t->uid != TASK_UID_UNKNOWN) {
            procinfo_user_name(t->uid, user, user_size);
        } else {
            struct procinfo one;
            int r = procinfo_read(c->proc_root, pid, t->tid, 1u << RULE_USER, &one);
            if (r < 0)
                return r;
            if (!one.in.user)
                return -EBADMSG;
            snprintf(user, user_size, "%s", one.user);
        }
        in->user = user;
    }
    return 0;
}

/* Process-wide inputs (cached within a batch) plus the thread's own. */
static int gather(struct classifier *c, const struct task *t, bool use_cache, struct procinfo *pi)
{
    pid_t pid = t->pid > 0 ? t->pid : t->tid;
    unsigned wide = c->keys & ~THREAD_KEYS;
    int r;
    if (use_cache && c->batch && c->cache_valid && c->cache_pid == pid) {
        *pi = c->cache;
        /* Re-point the inputs into our copy of the buffers. */
        struct match_input *in = &pi->in;
        if (in->exe)
            in->exe = pi->exe;
        if (in->cmdline)
            in->cmdline = pi->cmdline;
        if (in->cgroup)
            in->cgroup = pi->cgroup;
        if (in->unit)
            in->unit = pi->unit;
    } else if (wide == 0) {
        /* Rules on comm alone: nothing to read from /proc for a new task. */
        pi->in = (struct match_input){0};
        pi->in_jitter_slice = false;
    } else {
        r = procinfo_read(c->proc_root, pid, t->tid, wide, pi);
        if (r < 0)
            return r;
        if (use_cache && c->batch) {
            c->cache = *pi;
            c->cache_pid = pid;
            c->cache_valid = true;
        }
    }
    return gather_thread(c, t, &pi->in, pi->comm, pi->user, sizeof pi->user);
}

static struct view view_of(const struct procinfo *pi)
{
    return (struct view){.in = &pi->in, .in_jitter_slice = pi->in_jitter_slice, .optin_unit = optin_unit_of(pi)};
}

static int match_rules(const struct classifier *c, const struct view *v)
{
    const struct config *cfg = c->cfg;
    if (!v->wide_ok)
        return rules_match(cfg->rules, cfg->n_rules, v->in);
    for (size_t i = 0; i < cfg->n_rules; i++)
        if ((v->wide_ok[i / 8] & (1u << (i % 8))) && rule_matches_keys(&cfg->rules[i], v->in, THREAD_KEYS))
            return (int)i;
    return -1;
}

/* Below rules and uclamp: observed behaviour, then the default. */
static void fall_back(const struct classifier *c, const struct task *t, struct decision *d)
{
    enum behaviour_verdict v = BEHAVIOUR_NONE;
    if (c->cfg->behaviour.enabled && c->behaviour_get)
        v = c->behaviour_get(t, c->behaviour_userdata);
    if (v == BEHAVIOUR_JITTER || v == BEHAVIOUR_INTENSIVE) {
        d->class = v == BEHAVIOUR_JITTER ? CLASS_JITTER : CLASS_INTENSIVE;
        d->source = SOURCE_BEHAVIOUR;
        return;
    }
    d->class = c->cfg->default_class;
    d->source = SOURCE_DEFAULT;
}

void classifier_set_behaviour(struct classifier *c, classifier_behaviour_fn fn, void *userdata)
{
    c->behaviour_get = fn;
    c->behaviour_userdata = userdata;
}

int classifier_apply_behaviour(struct classifier *c, struct task *t)
{
    /* Anything above behaviour in the precedence keeps its decision. */
    if (t->source != SOURCE_DEFAULT && t->source != SOURCE_BEHAVIOUR)
        return 0;
    struct decision d = {.rule = -1};
    fall_back(c, t, &d);
    return apply(t, &d);
}

static int decide(struct classifier *c, const struct task *t, const struct view *v, struct decision *d)
{
    const struct config *cfg = c->cfg;
    *d = (struct decision){.rule = -1};
    if (cfg->unit_optin && v->in_jitter_slice) {
        d->class = CLASS_JITTER;
        d->source = SOURCE_SLICE;
        return 0;
    }
    if (unit_optin_active(c) && v->optin_unit) {
        enum task_class cls;
        if (units_get_class(c->units, v->optin_unit, &cls, &d->unit_origin) > 0) {
            d->class = cls;
            d->source = SOURCE_UNIT;
            return 0;
        }
    }
    int i = match_rules(c, v);
    if (i >= 0) {
        d->class = cfg->rules[i].class;
        d->source = SOURCE_RULE;
        d->rule = i;
        return 0;
    }
    if (cfg->use_uclamp && c->uclamp_supported) {
        int r = c->uclamp_get(t->tid, &d->util_max, c->uclamp_userdata);
        if (r < 0) {
            if (errno_is_gone(r))
                return -ESRCH;
            log_debug_errno(r, "tid %d: sched_getattr: %m, deciding without uclamp", (int)t->tid);
        } else {
            d->util_read = true;
            if (d->util_max <= cfg->uclamp_threshold) {
                d->class = CLASS_JITTER;
                d->source = SOURCE_UCLAMP;
                return 0;
            }
        }
    }
    fall_back(c, t, d);
    return 0;
}

static int apply(struct task *t, const struct decision *d)
{
    bool changed = t->class != d->class;
    t->class = d->class;
    t->source = d->source;
    t->rule = d->rule;
    return changed ? 1 : 0;
}

int classifier_classify(struct classifier *c, struct task *t)
{
    pid_t pid = t->pid > 0 ? t->pid : t->tid;
    bool leader = t->tid == pid;
    /* What the last exec read is stale from here on, even if this read fails. */
    if (leader)
        procs_remove(c, pid);
    struct procinfo pi;
    int r = gather(c, t, true, &pi);
    if (r < 0)
        return r;
    /* Kept for the leader only, whose exit (or the next flush) ends it: a
     * thread that outlives its leader has no event to end an entry. A
     * thread refreshes one its leader has, read before the last rescan. */
    const struct proc_entry *old = leader ? NULL : procs_find(c, pid);
    bool refresh = old && old->gen != c->procs_gen;
    if (refresh)
        procs_remove(c, pid);
    if ((leader || refresh) && (c->keys & ~THREAD_KEYS))
        procs_remember(c, pid, &pi);
    struct view v = view_of(&pi);
    struct decision d;
    r = decide(c, t, &v, &d);
    if (r < 0)
        return r;
    return apply(t, &d);
}

int classifier_classify_thread(struct classifier *c, struct task *t)
{
    pid_t pid = t->pid > 0 ? t->pid : t->tid;
    const struct proc_entry *e = (c->keys & ~THREAD_KEYS) ? procs_find(c, pid) : NULL;
    /* Nothing remembered (none needed, leader untracked, flushed), or read
     * before the last rescan: read (and remember again). */
    if (!e || e->gen != c->procs_gen)
        return classifier_classify(c, t);
    struct match_input in = {0};
    char comm[16], user[64];
    int r = gather_thread(c, t, &in, comm, user, sizeof user);
    if (r < 0)
        return r;
    struct view v = {
        .in = &in, .in_jitter_slice = e->in_jitter_slice, .optin_unit = e->optin_unit, .wide_ok = e->wide_ok};
    struct decision d;
    r = decide(c, t, &v, &d);
    if (r < 0)
        return r;
    return apply(t, &d);
}

int classifier_recheck_uclamp(struct classifier *c, struct task *t)
{
    const struct config *cfg = c->cfg;
    if (!cfg->use_uclamp || !c->uclamp_supported)
        return 0;
    if (t->source != SOURCE_UCLAMP && t->source != SOURCE_DEFAULT && t->source != SOURCE_BEHAVIOUR)
        return 0;
    unsigned util_max;
    int r = c->uclamp_get(t->tid, &util_max, c->uclamp_userdata);
    if (r < 0)
        return errno_is_gone(r) ? -ESRCH : 0;
    struct decision d = {.rule = -1};
    if (util_max <= cfg->uclamp_threshold) {
        d.class = CLASS_JITTER;
        d.source = SOURCE_UCLAMP;
    } else {
        fall_back(c, t, &d);
    }
    return apply(t, &d);
}

/* ---------------------------------------------------------------- explain */

struct out {
    char *buf;
    size_t size, len;
};

static void out_add(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out_add(struct out *o, const char *fmt, ...)
{
    if (o->len + 1 >= o->size)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->buf + o->len, o->size - o->len, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    o->len = MIN(o->len + (size_t)n, o->size - 1);
}

static void out_value(struct out *o, const struct match_input *in, enum rule_key k)
{
    const char *v = match_input_get(in, k);
    if (v)
        out_add(o, "%s '%s'", rule_key_to_string(k), v);
    else
        out_add(o, "%s unknown", rule_key_to_string(k));
}

int classifier_explain(struct classifier *c, const struct task *t, char *buf, size_t size)
{
    if (!buf || size == 0)
        return -EINVAL;
    buf[0] = '\0';
    const struct config *cfg = c->cfg;
    struct procinfo pi;
    int r = gather(c, t, false, &pi);
    if (r < 0)
        return r;
    struct view v = view_of(&pi);
    struct decision d;
    r = decide(c, t, &v, &d);
    if (r < 0)
        return r;
    struct out o = {buf, size, 0};
    switch (d.source) {
    case SOURCE_SLICE:
        out_add(&o, "in turbosched-jitter.slice%s%s", pi.in.unit ? " as " : "", pi.in.unit ? pi.in.unit : "");
        break;
    case SOURCE_UNIT:
        out_add(&o, "unit %s sets X-TurboSched=%s", pi.system_unit[0] ? pi.system_unit : pi.unit,
                task_class_to_string(d.class));
        if (d.unit_origin)
            out_add(&o, " in %s", d.unit_origin);
        break;
    case SOURCE_RULE: {
        const struct rule *rule = &cfg->rules[d.rule];
        out_add(&o, "rule '%s' (%s:%u) matched ", rule->name, rule->file ? rule->file : "?", rule->line);
        bool first = true;
        for (unsigned k = 0; k < _RULE_KEY_MAX; k++) {
            if (!rule->globs[k])
                continue;
            if (!first)
                out_add(&o, ", ");
            first = false;
            out_value(&o, &pi.in, (enum rule_key)k);
        }
        break;
    }
    case SOURCE_UCLAMP:
    case SOURCE_DEFAULT:
    case SOURCE_BEHAVIOUR:
    case SOURCE_NONE: {
        if (cfg->n_rules == 0)
            out_add(&o, "no rules");
        else {
            out_add(&o, "no rule matched (");
            for (size_t i = 0; i < cfg->n_rules; i++) {
                int k = rule_first_mismatch(&cfg->rules[i], &pi.in);
                out_add(&o, "%s'%s': ", i ? "; " : "", cfg->rules[i].name);
                out_value(&o, &pi.in, (enum rule_key)k);
            }
            out_add(&o, ")");
        }
        if (!cfg->use_uclamp)
            out_add(&o, "; uclamp off");
        else if (!c->uclamp_supported)
            out_add(&o, "; uclamp not supported by the kernel");
        else if (d.util_read)
            out_add(&o, "; uclamp util_max %u %s %u", d.util_max, d.util_max <= cfg->uclamp_threshold ? "<=" : ">",
                    cfg->uclamp_threshold);
        else
            out_add(&o, "; uclamp util_max unreadable");
        if (d.source == SOURCE_BEHAVIOUR)
            out_add(&o, "; observed behaviour");
        else if (d.source == SOURCE_DEFAULT)
            out_add(&o, "; default class");
        break;
    }
    }
    out_add(&o, ": %s", task_class_to_string(d.class));
    if (t->class != CLASS_UNSET && (t->class != d.class || t->source != d.source))
        out_add(&o, " (currently %s by %s, not yet reclassified)", task_class_to_string(t->class),
                class_source_to_string(t->source));
    return (int)o.len;
}
