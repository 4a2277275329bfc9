/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "engine-internal.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "apply.h"
#include "classifier.h"
#include "log.h"
#include "procmon.h"
#include "procscan.h"
#include "sampler.h"
#include "sysops.h"
#include "task.h"
#include "util.h"

/* The jitter unit's AllowedCPUs= follows the plan where systemd owns it. */

static const char *root_of(const struct engine *e) { return e->params.root; }

/* Jitter confined through the daemon's cpuset group rather than per thread:
 * every jitter task in cgroup mode, or those of rules that ask for it. */
static bool uses_group(const struct engine *e, const struct task *t)
{
    if (t->class != CLASS_JITTER || !e->group.usable)
        return false;
    if (e->cfg->mode == APPLY_CGROUP)
        return true;
    return t->source == SOURCE_RULE && t->rule >= 0 && (size_t)t->rule < e->cfg->n_rules &&
           e->cfg->rules[t->rule].cgroup_mode;
}

/* Tasks confined per thread: jitter, except those whose group is confined
 * as a whole (the daemon's cpuset group, or the jitter unit under systemd). */
static bool packs_per_thread(const struct engine *e, const struct task *t)
{
    if (t->class != CLASS_JITTER || uses_group(e, t))
        return false;
    if (t->source == SOURCE_SLICE && classifier_unit_optin_active(e->classifier))
        return false;
    return true;
}

static int ensure_group(struct engine *e)
{
    if (e->group.ready)
        return 0;
    int r = applier_group_set_v1(e->applier, e->group.path, engine_plan_mask(e));
    if (r < 0)
        return r; /* the applier said why */
    e->group.ready = true;
    return 0;
}

/* A task whose mask leaves out some online CPU was narrowed by its user (or
 * itself): moving it into the cpuset group would make the kernel replace
 * that mask with the group's CPUs. It stays where it is, as in per-thread
 * mode a task whose mask has no CPU of the plan does. Unreadable: not ours
 * to judge (gone, or its exit event follows). */
static bool narrowed_by_user(const struct engine *e, const struct task *t)
{
    cpu_set_t now;
    if (t->flags & TASK_F_GROUP)
        return false; /* in the group: the mask is the group's */
    if (e->ops->getaffinity(e->ops->userdata, t->tid, &now) < 0)
        return true;
    return !cpuset_covers(&now, &e->topo->online);
}

/* Bring one task's placement in line with its class and the current plan.
 * Before the applier records or changes a task, its start time must be known
 * (procscan_ensure_start): it guards every later action on the TID. */
/* A placement made for an event: how long after the kernel's event. */
static void placed(struct engine *e)
{
    e->counters.packs++;
    if (e->events.event_ns == 0)
        return; /* a tick's, a rescan's or a verdict's: no event to time from */
    uint64_t now = now_ns();
    histogram_add(&e->events.placement_latency, now > e->events.event_ns ? now - e->events.event_ns : 0);
}

void engine_place(struct engine *e, struct task *t)
{
    int r;
    if (engine_paused(e) || (t->flags & TASK_F_ADOPT_DUE))
        return; /* paused: every task keeps its own placement (engine-pause.c); due: engine-adopt.c */
    if (uses_group(e, t) && narrowed_by_user(e, t)) {
        log_debug("tid %d (%s): mask narrower than the online CPUs, leaving it out of the cpuset group", (int)t->tid,
                  t->comm);
        return;
    }
    if (uses_group(e, t) && ensure_group(e) == 0) {
        if (procscan_ensure_start(root_of(e), t) < 0)
            return; /* gone: its exit event follows */
        if (applier_find(e->applier, t->tid))
            applier_restore_task(e->applier, t->tid);
        if (applier_group_attach_v1(e->applier, e->group.path, t->tid, t->pid, t->start_time) > 0) {
            t->flags |= TASK_F_GROUP;
            placed(e);
        }
        return;
    }
    if (t->flags & TASK_F_GROUP) {
        t->flags &= ~TASK_F_GROUP;
        if (applier_group_detach_v1(e->applier, e->group.path, t->tid) > 0)
            e->counters.restores++;
    }
    if (packs_per_thread(e, t)) {
        if (engine_plan_mask(e) && procscan_ensure_start(root_of(e), t) < 0)
            return;
        const cpu_set_t *mask = engine_plan_mask(e);
        r = applier_pack_task(e->applier, t, mask);
        if (r > 0 && mask)
            placed(e);
        else if (r > 0)
            e->counters.restores++; /* an unrestricted plan puts it back */
    } else if (applier_find(e->applier, t->tid)) {
        r = applier_restore_task(e->applier, t->tid);
        if (r > 0)
            e->counters.restores++;
    }
}

/* cgroup mode needs a cpuset group the daemon can create: cgroup v1, and the
 * privilege to create it, which the daemon keeps only when cgroup mode is
 * configured at start (a reload that asks for it later needs a restart). */
static void setup_group_mode(struct engine *e, bool at_start)
{
    char path[PATH_MAX];
    e->group.ready = false;
    snprintf(e->group.path, sizeof e->group.path, "/%s", e->cfg->cgroup_name ? e->cfg->cgroup_name : "turbosched");
    bool mounted =
        path_join(path, sizeof path, root_of(e), "/sys/fs/cgroup/cpuset/cpuset.cpus") == 0 && access(path, F_OK) == 0;
    bool wanted = e->cfg->mode == APPLY_CGROUP;
    for (size_t i = 0; i < e->cfg->n_rules && !wanted; i++)
        wanted = e->cfg->rules[i].cgroup_mode;
    if (at_start)
        e->group.privileged = mounted && wanted;
    e->group.usable = mounted && e->group.privileged;
    if (wanted && !mounted)
        log_notice("cgroup mode needs the cgroup v1 cpuset controller, which is not mounted: "
                   "confining jitter per thread instead");
    else if (wanted && !e->group.usable)
        log_notice("cgroup mode was not configured at start, so the daemon gave up the privilege to create its "
                   "cpuset group: confining jitter per thread until a restart");
}

/* thread_only: a comm or uid event, nothing process-wide to read again. */
static int classify_and_place(struct engine *e, struct task *t, bool thread_only)
{
    int r = thread_only ? classifier_classify_thread(e->classifier, t) : classifier_classify(e->classifier, t);
    e->counters.classified++;
    if (r < 0) {
        if (!errno_is_gone(r))
            log_debug_errno(r, "tid %d: classification failed: %m", (int)t->tid);
        /* Leave it unclassified; a later exec, rename or rescan tries again. */
        return 0;
    }
    if (r > 0)
        log_debug("tid %d (%s): %s (%s)", (int)t->tid, t->comm, task_class_to_string(t->class),
                  class_source_to_string(t->source));
    engine_place(e, t);
    return 0;
}

static int hook_task_new(struct task *t, void *userdata)
{
    struct engine *e = userdata;
    /* A new task inherits its creator's mask: if that is one we set, record
     * the new task with the creator's original so it is restored like it. */
    pid_t parent = t->tid != t->pid ? t->pid : e->events.fork_parent_tid;
    struct applied_task from;
    bool inherits = parent > 0
                        ? engine_inheritance(e, parent, &from)
                        : engine_ancestor_inheritance(e, t->tid, &from) || engine_orphan_inheritance(e, t, &from);
    if (inherits && !engine_adopt_defer(e, t, &from) && procscan_ensure_start(root_of(e), t) == 0)
        (void)applier_adopt_from(e->applier, t->tid, t->pid, t->start_time, &from);
    return classify_and_place(e, t, false);
}

static int hook_task_changed(struct task *t, enum procscan_change what, void *userdata)
{
    struct engine *e = userdata;
    if (what == PROCSCAN_EXEC) {
        engine_adopt_at_exec(e, t);
        /* A new program: what the old one did says nothing of it. Observed
         * afresh (and read first), and asked again whether it is pinned. */
        sampler_watch_reset(&e->sampler, t);
        t->flags &= ~TASK_F_NOT_CANDIDATE;
    }
    return classify_and_place(e, t, what != PROCSCAN_EXEC);
}

/* ------------------------------------------------------------- behaviour */

static enum behaviour_verdict behaviour_of(const struct task *t, void *userdata)
{
    const struct engine *e = userdata;
    const struct sampler_watch *w = sampler_watch_of(&e->sampler, t);
    return w ? (enum behaviour_verdict)w->verdict : BEHAVIOUR_NONE;
}

/* Its user's mask, not ours: the original where the daemon changed it. */
static bool pinned_by_user(struct engine *e, const struct task *t)
{
    const struct applied_task *a = applier_find(e->applier, t->tid);
    cpu_set_t mask;
    if (a)
        mask = a->original;
    else if (e->ops->getaffinity(e->ops->userdata, t->tid, &mask) < 0)
        return true; /* gone, or not ours to judge */
    return !cpuset_covers(&mask, &e->topo->online);
}

static bool behaviour_candidate(struct task *t, void *userdata)
{
    struct engine *e = userdata;
    if (sampler_is_kernel_thread(t) || pinned_by_user(e, t)) {
        t->flags |= TASK_F_NOT_CANDIDATE;
        return false;
    }
    return true;
}

static void behaviour_verdict(struct task *t, const struct behaviour_result *r, void *userdata)
{
    struct engine *e = userdata;
    e->counters.behaviour_verdicts++;
    if (r->verdict == BEHAVIOUR_JITTER && pinned_by_user(e, t)) {
        /* pinned since it was first looked at: never confined by behaviour */
        t->flags |= TASK_F_NOT_CANDIDATE;
        sampler_unwatch(&e->sampler, t);
    }
    bool was_jitter = t->class == CLASS_JITTER;
    if (classifier_apply_behaviour(e->classifier, t) <= 0)
        return;
    if (was_jitter && t->class != CLASS_JITTER && r->heavy)
        e->counters.behaviour_released++;
    log_debug("tid %d (%s): %s (%s): %.1f%% util, %.0f wake-ups/s, %.0f us per run", (int)t->tid, t->comm,
              task_class_to_string(t->class), class_source_to_string(t->source), r->util_pct, r->wakeups_per_s,
              r->run_per_wakeup_us);
    engine_place(e, t);
}

static void behaviour_sample(struct task *t, const struct sampler_sample *d, void *userdata)
{
    engine_reqpath_sample(userdata, t, d);
}

static bool behaviour_may_be_jitter(struct task *t, bool granting, void *userdata)
{
    return engine_reqpath_may_be_jitter(userdata, t, granting);
}

static void hook_task_gone(struct task *t, void *userdata)
{
    struct engine *e = userdata;
    sampler_unwatch(&e->sampler, t);
    sampler_gate_release(&e->sampler, t);
    engine_adopt_note_gone(e, t->tid);
    applier_forget_task(e->applier, t->tid);
    classifier_task_gone(e->classifier, t);
    engine_reqpath_gone(e, t);
}

const struct procscan_hooks *engine_hooks(struct engine *e)
{
    static struct procscan_hooks h;
    h = (struct procscan_hooks){
        .task_new = hook_task_new,
        .task_changed = hook_task_changed,
        .task_gone = hook_task_gone,
        .userdata = e,
        .lazy_start = true,
        /* without user rules no uid is needed; with them, read as events come */
        .lazy_uid = !classifier_uses_user(e->classifier),
    };
    return &h;
}

int engine_new(struct config *cfg, const struct engine_params *p, struct engine **ret)
{
    struct engine *e = calloc(1, sizeof(*e));
    int r;
    if (!e) {
        config_destroy(cfg);
        return -ENOMEM;
    }
    e->params = *p;
    e->events.logs = (struct log_ratelimit){.what = "messages about floods of process events"};
    freq_meter_init(&e->probe.meter); /* before any failure: engine_free closes it */
    if (!e->params.root)
        e->params.root = "/";
    e->ops = p->sysops ? p->sysops : &sysops_real;
    e->cfg = cfg;
    if (p->dry_run)
        cfg->dry_run = true;
    if (p->log_level >= 0)
        cfg->log_level = p->log_level;
    log_set_max_level(cfg->log_level);
    e->start_ms = now_ms();
    e->last_reload.ok = true;
    e->plan = calloc(1, sizeof(*e->plan));
    if (!e->plan) {
        r = -ENOMEM;
        goto fail;
    }
    packer_state_init(&e->pstate);

    r = topology_read(e->params.root, &e->topo);
    if (r < 0) {
        log_error_errno(r, "reading the CPU topology: %m");
        goto fail;
    }
    if ((r = sampler_init(&e->sampler, e->params.root, e->topo->n_cpus)) < 0)
        goto fail;
    engine_delay_init(&e->delay, cfg);
    engine_reqpath_init(&e->reqpath);
    engine_delay_hook(e);
    if ((r = task_table_new(cfg->max_tasks, &e->tasks)) < 0)
        goto fail;
    if ((r = classifier_new(cfg, e->params.root, &e->classifier)) < 0) {
        log_error_errno(r, "setting up classification: %m");
        goto fail;
    }
    classifier_set_behaviour(e->classifier, behaviour_of, e);
    if ((r = applier_new(e->ops, cfg->state_file, cfg->dry_run, &e->applier)) < 0) {
        log_error_errno(r, "setting up the applier: %m");
        goto fail;
    }
    setup_group_mode(e, true);
    *ret = e;
    return 0;
fail:
    engine_free(e);
    return r;
}

int engine_procmon_fd(const struct engine *e) { return e->events.procmon ? procmon_fd(e->events.procmon) : -EBADF; }

const struct config *engine_config(const struct engine *e) { return e->cfg; }
struct classifier *engine_classifier(struct engine *e) { return e->classifier; }
struct seat *engine_seat(struct engine *e) { return &e->seat; }
bool engine_cgroup_privileged(const struct engine *e) { return e->group.privileged; }
const bool *engine_rescan_pending(const struct engine *e) { return &e->events.rescan_pending; }
void engine_set_tick_at_rt(struct engine *e, bool at_rt) { e->events.tick_at_rt = at_rt; }

/* Tasks by class and in the jitter unit, as of this tick. */
static void count_tasks(struct engine *e)
{
    size_t iter = 0;
    const struct task *t;
    memset(e->n_by_class, 0, sizeof e->n_by_class);
    e->unit.n_tasks = 0;
    while ((t = task_table_next(e->tasks, &iter))) {
        if ((unsigned)t->class < ELEMENTSOF(e->n_by_class))
            e->n_by_class[t->class]++;
        if (t->source == SOURCE_SLICE)
            e->unit.n_tasks++;
    }
}

void engine_count_now(const struct engine *e, unsigned by_class[_TASK_CLASS_MAX], unsigned *packed)
{
    memset(by_class, 0, _TASK_CLASS_MAX * sizeof *by_class);
    size_t iter = 0;
    const struct task *t;
    while ((t = task_table_next(e->tasks, &iter)))
        if ((unsigned)t->class < _TASK_CLASS_MAX)
            by_class[t->class]++;
    *packed = (unsigned)applier_count(e->applier);
}

static void apply_plan(struct engine *e)
{
    const cpu_set_t *mask = engine_plan_mask(e);
    if (engine_paused(e))
        return;
    size_t iter = 0;
    struct task *t;
    while ((t = task_table_next(e->tasks, &iter)))
        if (packs_per_thread(e, t))
            engine_place(e, t);
    /* Groups follow with one write each; the applier logs failures. */
    if (e->group.ready)
        applier_group_set_v1(e->applier, e->group.path, mask);
    engine_unit_follow_plan(e, mask);
}

/* Topology changes (hotplug, SMT switches) show in the online list first:
 * one small read a tick, the full topology only when it changed. */
static void refresh_topology(struct engine *e)
{
    cpu_set_t online;
    if (topology_read_online(root_of(e), &online) < 0 || CPU_EQUAL(&online, &e->topo->online))
        return;
    struct topology *t = NULL;
    /* The load arrays cover every CPU of the topology; without room for
     * them the old topology stays, and the next tick tries again. */
    int r = topology_read(root_of(e), &t);
    if (r >= 0)
        r = sampler_resize(&e->sampler, t->n_cpus);
    if (r < 0) {
        log_warning_errno(r, "re-reading the CPU topology: %m");
        topology_free(t);
        return;
    }
    char was[256], now_s[256];
    log_notice("online CPUs changed: %s -> %s", format_cpulist(&e->topo->online, was, sizeof was),
               format_cpulist(&t->online, now_s, sizeof now_s));
    topology_free(e->topo);
    e->topo = t;
    engine_delay_reset(&e->delay, e->cfg); /* it counts cores by their index */
    engine_idle_setup(e, false);
}

/* No event reports a changed clamp: look again now and then. */
static void recheck_uclamp(struct engine *e, uint64_t now)
{
    if (!classifier_uclamp_supported(e->classifier) || !e->cfg->uclamp_recheck_ms ||
        now - e->last_uclamp_ms < e->cfg->uclamp_recheck_ms)
        return;
    size_t iter = 0;
    struct task *t;
    while ((t = task_table_next(e->tasks, &iter)))
        if (classifier_recheck_uclamp(e->classifier, t) > 0)
            engine_place(e, t);
    e->last_uclamp_ms = now;
}

/* The packer's decision from this tick's samples; applied when it changed
 * (and the first time, which places every task under a plan). */
static void plan(struct engine *e, uint64_t now)
{
    struct packer_input in = {
        .topo = e->topo,
        .cap = &e->cfg->capacity,
        .cpu_util_milli = e->sampler.util_milli,
        .n_cpu_util = e->sampler.n_cpus,
        .cpu_jitter_milli = e->sampler.jitter_milli,
        .jitter_load_milli = e->sampler.jitter_load_milli,
        .params = &e->cfg->policy,
        .now_ms = now,
        .spill_cpus = &e->delay.spill_cpus,
        .delay_fallback = e->delay.guard.fallen_back,
        .delay_note = e->delay.note,
        .freq = engine_freq_table(e),
        .n_jitter_tasks = e->n_by_class[CLASS_JITTER],
        .probe = engine_probe_measure(e), /* before the plan: the busy cores it read */
        .idle = engine_idle_measure(e, now),
    };
    int r = packer_plan(&in, &e->pstate, e->plan);
    if (r < 0) {
        log_warning_errno(r, "planning: %m");
        return;
    }
    engine_probe_planned(e);
    engine_idle_planned(e, now);
    bool first = !e->planned;
    e->planned = true;
    if (e->plan->changed || first) {
        engine_delay_plan_changed(e);
        if (e->plan->changed) {
            e->counters.plan_changes++;
            log_info("plan: %s", e->plan->summary);
        }
        apply_plan(e);
    }
    /* While a cpuset toggle may still reset masks, a packed task whose mask
     * changed is being put back, not changed by someone else. */
    if (!engine_unit_repairing(e))
        applier_verify(e->applier, 256);
    applier_flush_state(e->applier);
    e->n_packed = (unsigned)applier_count(e->applier);
}

static void log_counters(struct engine *e, uint64_t now)
{
    if (!e->events.procmon || now - e->last_counters_log_ms < 60000)
        return;
    const struct procmon_counters *pc = procmon_counters(e->events.procmon);
    log_debug("counters: %u threads; events fork %" PRIu64 " exec %" PRIu64 " comm %" PRIu64 " exit %" PRIu64
              " uid %" PRIu64 "; overflows %" PRIu64 ", rescans %" PRIu64 ", not tracked (table full) %" PRIu64,
              task_table_count(e->tasks), pc->fork, pc->exec, pc->comm, pc->exit, pc->uid, pc->overflows,
              e->counters.rescans, e->counters.table_full);
    e->last_counters_log_ms = now;
}

int engine_tick(struct engine *e)
{
    uint64_t now = now_ms();
    e->counters.ticks++;
    engine_shed_renames(e, now);
    if (e->events.rescan_renames_at && e->counters.ticks >= e->events.rescan_renames_at)
        e->events.rescan_pending = true;
    if (e->events.rescan_pending && !e->events.tick_at_rt && engine_rescan_due(e, e->events.rescan_gap_ms))
        engine_rescan(e);
    engine_adopt_due(e, now_ns() - (uint64_t)e->cfg->tick_ms * 1000000);
    engine_unit_tick(e);
    refresh_topology(e);
    if (sampler_sample_cpus(&e->sampler, now, e->cfg->policy.half_life_ms) < 0)
        return 0;
    sampler_sample_tasks(&e->sampler, e->tasks, now, e->cfg->policy.half_life_ms);
    const struct sampler_behaviour_hooks bh = {.is_candidate = behaviour_candidate,
                                               .on_verdict = behaviour_verdict,
                                               .on_sample = behaviour_sample,
                                               .may_be_jitter = behaviour_may_be_jitter,
                                               .userdata = e};
    sampler_sample_behaviour(&e->sampler, e->tasks, &e->cfg->behaviour, now, &bh);
    count_tasks(e);
    recheck_uclamp(e, now);
    engine_delay_tick(e, now);
    plan(e, now);

    /* A full table said so once; say it again after it has drained. */
    if (e->table_full_logged && task_table_count(e->tasks) < task_table_max(e->tasks) / 10 * 9)
        e->table_full_logged = false;
    log_counters(e, now);
    return 0;
}

/* Whether this kernel takes a custom slice, tried once on our own thread;
 * without it packing goes on with masks alone. */
static void detect_jitter_slice(struct engine *e)
{
    struct slice_support *s = &e->jitter_slice;
    if (!e->ops->getattr || !e->ops->setattr) {
        *s = (struct slice_support){.supported = false, .reason = "no sched_getattr"};
    } else {
        int r = slice_detect(e->ops, s);
        if (r < 0)
            log_warning_errno(r, "jitter slice: putting the daemon's own scheduling attributes back: %m");
    }
    if (s->supported)
        log_info("jitter slice: supported (kernel default slice %" PRIu64 " us)", s->default_slice_ns / 1000);
    else
        log_notice("jitter slice: not supported (%s), packing with CPU masks alone", s->reason);
}

int engine_start(struct engine *e)
{
    detect_jitter_slice(e);
    engine_find_freq_table(e);
    applier_set_jitter_slice(e->applier, &e->jitter_slice, e->cfg->policy.jitter_slice_ns);
    int r = applier_recover(e->applier);
    if (r > 0)
        log_notice("restored %d changes left by a previous run", r);

    engine_doorbell_open(e); /* first: the main socket, joining last, hears each event first */
    r = e->params.events_from_caller ? 0 : procmon_open(e->cfg->rcvbuf_bytes, &e->events.procmon);
    if (r < 0)
        return log_error_errno(r, "opening the proc connector: %m%s", r == -EPERM ? " (needs CAP_NET_ADMIN)" : "");
    /* Subscribe first, then scan: a task born in between is seen twice,
     * which the table tolerates, rather than not at all. */
    r = engine_rescan(e);
    if (r < 0 && !errno_is_transient(r))
        return r;
    log_info("tracking %u threads", task_table_count(e->tasks));
    engine_tick(e);
    return 0;
}

/* A task packed on its exec is in the state file before the daemon sleeps
 * again (or within STATE_EARLY_WRITE_MS), not a tick later: a crash in
 * between would leave it confined with no record of its original mask. */
int64_t engine_state_due_ms(struct engine *e)
{
    uint64_t now = now_ms();
    applier_flush_changes(e->applier, now);
    return applier_changes_due_ms(e->applier, now);
}

static void reset_classes(struct engine *e)
{
    size_t iter = 0;
    struct task *t;
    while ((t = task_table_next(e->tasks, &iter))) {
        t->class = CLASS_UNSET;
        t->source = SOURCE_NONE;
        t->rule = -1;
        t->flags &= ~TASK_F_GROUP; /* restore_all removed the group */
    }
}

struct first_error {
    char msg[256];
};

static void capture_first_error(int level, const char *msg, void *userdata)
{
    struct first_error *fe = userdata;
    fprintf(stderr, "<%d>%s\n", level, msg);
    if (level <= LOG_ERR && !fe->msg[0])
        snprintf(fe->msg, sizeof fe->msg, "%s", msg);
}

int engine_reload(struct engine *e, char *msg, size_t size)
{
    struct config *cfg = NULL;
    struct first_error fe = {{0}};
    log_set_sink(capture_first_error, &fe);
    int r;
    if (e->params.config_path)
        r = config_load(e->params.config_path, e->params.dropin_dir, &cfg);
    else
        r = config_new_default(&cfg); /* started without a configuration file */
    log_set_sink(NULL, NULL);
    e->last_reload.time = time(NULL);
    if (r < 0) {
        e->counters.reloads_failed++;
        e->last_reload.ok = false;
        snprintf(e->last_reload.msg, sizeof e->last_reload.msg, "%s", fe.msg[0] ? fe.msg : strerror(-r));
        log_err("reload failed, keeping the previous configuration: %s", e->last_reload.msg);
        if (msg)
            snprintf(msg, size, "%s", e->last_reload.msg);
        return r;
    }
    if (e->params.dry_run)
        cfg->dry_run = true;
    if (e->params.log_level >= 0)
        cfg->log_level = e->params.log_level;

    /* Start from a clean slate: every change undone, every task classified
     * again under the new rules, the plan recomputed from scratch. */
    int restored = engine_restore_everything(e, false);
    if (cfg->dry_run != e->cfg->dry_run ||
        (cfg->state_file && e->cfg->state_file && strcmp(cfg->state_file, e->cfg->state_file) != 0)) {
        struct applier *a;
        r = applier_new(e->ops, cfg->state_file, cfg->dry_run, &a);
        if (r < 0) {
            config_destroy(cfg);
            e->counters.reloads_failed++;
            snprintf(e->last_reload.msg, sizeof e->last_reload.msg, "applier: %s", strerror(-r));
            if (msg)
                snprintf(msg, size, "%s", e->last_reload.msg);
            return r;
        }
        applier_free(e->applier);
        e->applier = a;
    }
    applier_set_jitter_slice(e->applier, &e->jitter_slice, cfg->policy.jitter_slice_ns);
    classifier_set_config(e->classifier, cfg);
    config_destroy(e->cfg);
    e->cfg = cfg;
    log_set_max_level(cfg->log_level);
    setup_group_mode(e, false);
    packer_state_init(&e->pstate);
    e->planned = false;
    engine_delay_reset(&e->delay, cfg);
    reset_classes(e);
    size_t iter = 0;
    struct task *t;
    classifier_batch_begin(e->classifier);
    while ((t = task_table_next(e->tasks, &iter)))
        classify_and_place(e, t, false);
    classifier_batch_end(e->classifier);
    e->counters.reloads_ok++;
    e->last_reload.ok = true;
    snprintf(e->last_reload.msg, sizeof e->last_reload.msg, "rules: %zu, changes undone: %d", cfg->n_rules, restored);
    log_notice("configuration reloaded: %s", e->last_reload.msg);
    engine_find_freq_table(e);
    if (msg)
        snprintf(msg, size, "%s", e->last_reload.msg);
    engine_tick(e);
    return 0;
}

void engine_stop(struct engine *e)
{
    if (!e->applier)
        return;
    int n = engine_restore_everything(e, true);
    if (n > 0)
        log_info("restored %d changes", n);
}

void engine_free(struct engine *e)
{
    if (!e)
        return;
    engine_stop(e);
    engine_adopt_free(e);
    applier_free(e->applier);
    procmon_free(e->events.procmon);
    procmon_free(e->events.doorbell.procmon);
    classifier_free(e->classifier);
    task_table_free(e->tasks);
    topology_free(e->topo);
    sampler_destroy(&e->sampler);
    engine_delay_done(&e->delay);
    engine_reqpath_done(&e->reqpath);
    freq_meter_close(&e->probe.meter);
    engine_unit_done(&e->unit);
    free(e->plan);
    config_destroy(e->cfg);
    free(e);
}

void engine_status_line(const struct engine *e, char *buf, size_t size)
{
    char cpus[128] = "";
    const cpu_set_t *mask = engine_plan_mask(e);
    if (mask)
        format_cpulist(mask, cpus, sizeof cpus);
    snprintf(buf, size, "%u tasks, %u jitter, %u packed %s%s; uclamp %s%s", task_table_count(e->tasks),
             e->n_by_class[CLASS_JITTER], e->n_packed, mask ? "on CPUs " : "(no restriction", mask ? cpus : ")",
             classifier_uclamp_supported(e->classifier) ? "supported" : "unsupported",
             e->cfg->dry_run ? "; dry run" : "");
}

/* For engine-pause.c: undo every change, or place every task again. */
int engine_undo_all(struct engine *e)
{
    int n = engine_restore_everything(e, false);
    size_t iter = 0;
    struct task *t;
    while ((t = task_table_next(e->tasks, &iter)))
        t->flags &= ~TASK_F_GROUP; /* restore_all removed the group */
    e->group.ready = false;
    return n;
}

void engine_place_all(struct engine *e)
{
    size_t iter = 0;
    struct task *t;
    while ((t = task_table_next(e->tasks, &iter)))
        if (t->class != CLASS_UNSET)
            engine_place(e, t);
}
