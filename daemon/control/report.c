/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "report.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "control-pause.h"
#include "cpustats.h"
#include "delay-guard.h"
#include "engine-snapshot.h"
#include "engine.h"
#include "histogram.h"
#include "power_capacity.h"
#include "procmon.h"
#include "sampler.h"
#include "task.h"
#include "topology.h"
#include "util.h"
#include "version.h"

static void add_int(struct json_object *o, const char *k, int64_t v)
{
    json_object_object_add(o, k, json_object_new_int64(v));
}

static void add_str(struct json_object *o, const char *k, const char *v)
{
    json_object_object_add(o, k, v ? json_object_new_string(v) : NULL);
}

static void add_bool(struct json_object *o, const char *k, bool v)
{
    json_object_object_add(o, k, json_object_new_boolean(v));
}

static void add_mask(struct json_object *o, const char *k, const cpu_set_t *m)
{
    char buf[CPULIST_MAX];
    add_str(o, k, format_cpulist(m, buf, sizeof buf));
}

/* The run-delay guard: its limit, this tick's figure and decision, the
 * cores it spilled to. */
static struct json_object *run_delay_json(const struct engine_snapshot *s)
{
    const struct engine_delay_snapshot *d = &s->delay;
    struct json_object *o = json_object_new_object();
    add_int(o, "limit_us", (int64_t)(d->limit_ns / 1000));
    add_int(o, "delay_us", (int64_t)(d->delay_ns / 1000));
    add_int(o, "percentile", d->percentile);
    add_int(o, "wakeups", (int64_t)d->wakeups);
    add_bool(o, "fallen_back", d->guard->fallen_back);
    struct json_object *sp = json_object_new_array();
    for (unsigned i = 0; i < d->guard->n_spilled; i++)
        json_object_array_add(sp, json_object_new_int(d->guard->spilled[i]));
    json_object_object_add(o, "spilled_cores", sp);
    add_str(o, "decision", d->last[0] ? d->last : "none yet");
    return o;
}

/* The probe loop: whether it runs and from what, its phase and words, its
 * rounds, and why the learned plan last changed. */
static struct json_object *probe_json(const struct engine_snapshot *s)
{
    const struct engine_probe_snapshot *p = &s->probe;
    struct json_object *o = json_object_new_object();
    add_str(o, "state", p->phase);
    add_str(o, "source", p->source);
    add_str(o, "what", p->what);
    add_str(o, "explain", p->explain);
    add_int(o, "rounds", p->on ? p->rounds : 0);
    add_int(o, "discarded", p->on ? p->discarded : 0);
    add_str(o, "learned", p->on && p->learned_any ? benefit_plan_name(p->learned) : NULL);
    add_str(o, "last_change", p->on && p->last_change[0] ? p->last_change : NULL);
    return o;
}

/* The estimate behind the plan, or why there is none. */
static const char *benefit_estimate(const struct engine_snapshot *s)
{
    if (!s->freq_table && !s->probe.on)
        return "no frequency table: packing by the thresholds alone";
    return s->planned && s->plan->benefit_explain[0] ? s->plan->benefit_explain : "not weighed this tick";
}

/* measured, woken_milli, wakes_per_s of a kept measurement (null when none) */
static void add_kept(struct json_object *o, const struct idle_kept *k)
{
    add_bool(o, "measured", k->measured);
    json_object_object_add(o, "woken_milli", k->measured ? json_object_new_int64(k->woken_milli) : NULL);
    json_object_object_add(o, "wakes_per_s", k->measured ? json_object_new_int64(k->wakes_per_s) : NULL);
}

/* What the model weighs no restriction and isolation by: the idle cores
 * the jitter kept out of the deep idle states, as measured, or why not. */
static struct json_object *deep_idle_json(const struct engine_snapshot *s)
{
    const struct engine_idle_snapshot *d = &s->idle;
    struct json_object *o = json_object_new_object();
    add_bool(o, "available", d->on);
    add_kept(o, &d->fig.none);
    struct json_object *i = json_object_new_object();
    add_kept(i, &d->fig.iso);
    add_bool(i, "trial", d->fig.in_trial);
    json_object_object_add(o, "isolated", i);
    add_str(o, "what", d->what);
    return o;
}

static struct json_object *plan_json(const struct engine_snapshot *s)
{
    struct json_object *p = json_object_new_object();
    const struct packer_plan *pl = s->plan;
    add_bool(p, "restricted", s->planned && pl->restricted);
    if (s->planned && pl->restricted) {
        char kind[192];
        add_mask(p, "cpus", &pl->mask);
        add_str(p, "packing", packer_packing_kind(s->topo, &pl->mask, kind, sizeof kind));
    } else
        add_str(p, "cpus", NULL);
    add_str(p, "reason", s->planned ? pl->summary : "no plan yet");
    add_str(p, "state", s->planned ? packer_reason_to_string(pl->reason) : "none");
    add_str(p, "wait", s->planned ? packer_wait_to_string(pl->wait) : "none");
    add_int(p, "jitter_load_milli", s->sampler->jitter_load_milli);
    json_object_object_add(p, "run_delay", run_delay_json(s));
    struct json_object *b = json_object_new_object();
    add_str(b, "plan", s->planned ? benefit_plan_name(pl->benefit) : "unknown");
    add_str(b, "estimate", benefit_estimate(s));
    json_object_object_add(b, "probe", probe_json(s));
    json_object_object_add(b, "deep_idle", deep_idle_json(s));
    json_object_object_add(p, "benefit", b);
    return p;
}

static struct json_object *cpus_json(void)
{
    struct cpustats cs;
    if (cpustats_read(&cs) < 0)
        return json_object_new_array();
    struct json_object *a = cpustats_to_json(&cs);
    cpustats_done(&cs);
    return a ? a : json_object_new_array();
}

/* The daemon's own latency, event to placement, in microseconds. */
static struct json_object *latency_json(const struct histogram *h)
{
    struct json_object *l = json_object_new_object();
    add_int(l, "count", (int64_t)h->count);
    add_int(l, "p50_us", (int64_t)(histogram_quantile_ns(h, 0.50) / 1000));
    add_int(l, "p99_us", (int64_t)(histogram_quantile_ns(h, 0.99) / 1000));
    add_int(l, "max_us", (int64_t)(h->max_ns / 1000));
    add_int(l, "within_20ms", (int64_t)histogram_count_le(h, 20000000));
    return l;
}

struct json_object *report_status(const struct engine *e)
{
    struct engine_snapshot snap, *s = &snap;
    engine_snapshot_status(e, s);
    struct json_object *o = json_object_new_object();
    add_str(o, "version", TS_VERSION);
    add_int(o, "uptime_s", (int64_t)((now_ms() - s->start_ms) / 1000));
    add_str(o, "mode", s->mode_cgroup ? "cgroup" : "affinity");
    add_bool(o, "dry_run", s->dry_run);
    add_bool(o, "uclamp_supported", s->uclamp_supported);
    add_bool(o, "unit_optin", s->unit_optin);

    struct json_object *t = json_object_new_object();
    add_int(t, "tracked", s->tracked);
    add_int(t, "jitter", s->by_class[CLASS_JITTER]);
    add_int(t, "intensive", s->by_class[CLASS_INTENSIVE]);
    add_int(t, "ignore", s->by_class[CLASS_IGNORE]);
    add_int(t, "unclassified", s->by_class[CLASS_UNSET]);
    add_int(t, "packed", s->packed);
    add_int(t, "max", s->max_tasks);
    add_int(t, "memory_bytes", (int64_t)s->memory_bytes);
    json_object_object_add(o, "tasks", t);

    struct json_object *rq = json_object_new_object();
    add_bool(rq, "on", s->request_paths);
    add_bool(rq, "tail_guard", s->tail_guard);
    add_int(rq, "held_serving", (int64_t)s->held_serving);
    add_int(rq, "held_sleep", (int64_t)s->held_sleep);
    add_int(rq, "released", (int64_t)s->released);
    add_int(rq, "kept_out", s->kept_out);
    json_object_object_add(o, "request_paths", rq);

    struct json_object *ev = json_object_new_object();
    const struct procmon_counters *pc = s->procmon;
    static const struct procmon_counters zero;
    if (!pc)
        pc = &zero;
    add_int(ev, "fork", (int64_t)pc->fork);
    add_int(ev, "exec", (int64_t)pc->exec);
    add_int(ev, "comm", (int64_t)pc->comm);
    add_int(ev, "exit", (int64_t)pc->exit);
    add_int(ev, "uid", (int64_t)pc->uid);
    add_int(ev, "other", (int64_t)pc->other);
    add_int(ev, "malformed", (int64_t)pc->malformed);
    json_object_object_add(o, "events", ev);
    add_int(o, "overflows", (int64_t)pc->overflows);
    add_int(o, "rename_floods", (int64_t)s->rename_floods);
    add_bool(o, "renames_unheard", s->renames_unheard);
    add_int(o, "rescans", (int64_t)s->counters.rescans);
    json_object_object_add(o, "placement_latency", latency_json(s->placement_latency));
    json_object_object_add(o, "plan", plan_json(s));

    struct json_object *rl = json_object_new_object();
    add_bool(rl, "ok", s->last_reload->ok);
    add_int(rl, "time_s", (int64_t)s->last_reload->time);
    add_str(rl, "message", s->last_reload->msg[0] ? s->last_reload->msg : "no reload yet");
    json_object_object_add(o, "last_reload", rl);
    json_object_object_add(o, "cpus", cpus_json());
    json_object_object_add(o, "pause", control_pause_json(e));
    return o;
}

static struct json_object *task_json(const struct task *t, const struct engine_task_snapshot *ts)
{
    struct json_object *o = json_object_new_object();
    add_int(o, "tid", t->tid);
    add_int(o, "pid", t->pid);
    add_str(o, "comm", t->comm);
    add_str(o, "class", task_class_to_string(t->class));
    add_str(o, "source", class_source_to_string(t->source));
    add_str(o, "detail", ts->detail);
    if (ts->masks) {
        add_mask(o, "original_mask", &ts->original);
        add_mask(o, "current_mask", &ts->current);
    }
    /* the jitter slice we gave it, and the one it had */
    if (ts->slice) {
        add_int(o, "slice_us", (int64_t)(ts->slice_ns / 1000));
        add_int(o, "original_slice_us", (int64_t)(ts->original_slice_ns / 1000));
    }
    if (ts->run_delay) {
        add_int(o, "run_delay_us", (int64_t)(ts->run_delay_ns / 1000));
        add_int(o, "run_delay_wakeups", (int64_t)ts->run_delay_wakeups);
    }
    return o;
}

struct json_object *report_dump(const struct engine *e)
{
    struct engine_snapshot snap, *s = &snap;
    engine_snapshot(e, s);
    struct json_object *o = json_object_new_object();
    struct json_object *cores = json_object_new_array();
    const struct packer_plan *pl = s->plan;
    for (int i = 0; i < s->topo->n_cores; i++) {
        const struct topo_core *c = &s->topo->cores[i];
        struct json_object *co = json_object_new_object();
        add_int(co, "package", c->package);
        add_int(co, "core", c->index);
        add_int(co, "core_id", c->core_id);
        add_mask(co, "threads", &c->threads);
        add_mask(co, "online", &c->online);
        add_int(co, "n_online", c->n_online);
        const struct packer_core_info *pi = NULL;
        for (int k = 0; s->planned && k < pl->n_cores; k++)
            if (pl->cores[k].core == i)
                pi = &pl->cores[k];
        add_int(co, "capacity_milli", capacity_core_milli(s->capacity, (unsigned)c->n_online));
        if (pi) {
            add_int(co, "util_milli", pi->util_milli);
            add_int(co, "spare_milli", pi->spare_milli);
            add_bool(co, "busy", pi->busy);
            add_bool(co, "in_mask", pi->applied);
        }
        json_object_array_add(cores, co);
    }
    json_object_object_add(o, "cores", cores);

    struct json_object *tasks = json_object_new_array();
    size_t iter = 0;
    const struct task *t;
    while ((t = engine_task_next(e, &iter)))
        if (t->class == CLASS_JITTER || t->class == CLASS_INTENSIVE) {
            struct engine_task_snapshot ts;
            engine_task_snapshot(e, t, &ts);
            json_object_array_add(tasks, task_json(t, &ts));
        }
    json_object_object_add(o, "tasks", tasks);
    json_object_object_add(o, "plan", plan_json(s));
    json_object_object_add(o, "cpus", cpus_json());
    return o;
}

int report_explain(const struct engine *e, pid_t pid, struct json_object **ret)
{
    struct json_object *threads = json_object_new_array();
    size_t iter = 0, total = 0;
    const struct task *t;
    while ((t = engine_task_next(e, &iter))) {
        if (t->pid != pid || total++ >= REPORT_EXPLAIN_THREADS_MAX)
            continue;
        struct engine_task_snapshot ts;
        struct engine_task_explain tx;
        engine_task_snapshot(e, t, &ts);
        struct json_object *o = task_json(t, &ts);
        engine_task_explain(e, t, &tx);
        add_str(o, "placement", tx.placement);
        add_str(o, "behaviour", tx.behaviour);
        add_str(o, "run_delay", tx.run_delay);
        add_str(o, "request_path", tx.request_path);
        json_object_array_add(threads, o);
    }
    if (json_object_array_length(threads) == 0) {
        json_object_put(threads);
        return -ESRCH;
    }
    struct json_object *o = json_object_new_object();
    add_int(o, "pid", pid);
    add_int(o, "threads_total", (int64_t)total);
    json_object_object_add(o, "threads", threads);
    *ret = o;
    return 0;
}

static struct json_object *family(struct json_object *arr, const char *name, const char *type, const char *help)
{
    struct json_object *f = json_object_new_object();
    add_str(f, "name", name);
    add_str(f, "help", help);
    add_str(f, "type", type);
    struct json_object *s = json_object_new_array();
    json_object_object_add(f, "samples", s);
    json_object_array_add(arr, f);
    return s;
}

static void sample2(struct json_object *samples, const char *label, const char *value_label, const char *label2,
                    const char *value_label2, double v)
{
    struct json_object *s = json_object_new_object();
    struct json_object *l = json_object_new_object();
    if (label)
        add_str(l, label, value_label);
    if (label2)
        add_str(l, label2, value_label2);
    json_object_object_add(s, "labels", l);
    json_object_object_add(s, "value", json_object_new_double(v));
    json_object_array_add(samples, s);
}

static void sample(struct json_object *samples, const char *label, const char *value_label, double v)
{
    sample2(samples, label, value_label, NULL, NULL, v);
}

/* A histogram family: cumulative _bucket samples by "le", then _sum and
 * _count (the renderer appends each sample's suffix to the name). */
static void histogram_family(struct json_object *arr, const char *name, const char *help, const struct histogram *h)
{
    struct json_object *s = family(arr, name, "histogram", help);
    uint64_t cum = 0;
    for (size_t i = 0; i <= HISTOGRAM_N_BOUNDS; i++) {
        char le[32];
        cum += h->bucket[i];
        if (i < HISTOGRAM_N_BOUNDS)
            snprintf(le, sizeof le, "%g", (double)histogram_bounds_ns[i] / 1e9);
        else
            snprintf(le, sizeof le, "+Inf");
        sample(s, "le", le, (double)cum);
        add_str(json_object_array_get_idx(s, json_object_array_length(s) - 1), "suffix", "_bucket");
    }
    sample(s, NULL, NULL, (double)h->sum_ns / 1e9);
    add_str(json_object_array_get_idx(s, json_object_array_length(s) - 1), "suffix", "_sum");
    sample(s, NULL, NULL, (double)h->count);
    add_str(json_object_array_get_idx(s, json_object_array_length(s) - 1), "suffix", "_count");
}

/* Tasks per class and what decided it, and behaviour's releases. */
static void behaviour_metrics(const struct engine *e, const struct engine_snapshot *sn, struct json_object *arr)
{
    unsigned n[_TASK_CLASS_MAX][SOURCE_BEHAVIOUR + 1] = {{0}};
    size_t iter = 0;
    const struct task *t;
    while ((t = engine_task_next(e, &iter)))
        if ((unsigned)t->class < _TASK_CLASS_MAX && (unsigned)t->source <= SOURCE_BEHAVIOUR)
            n[t->class][t->source]++;
    struct json_object *s =
        family(arr, "turbosched_tasks_by_source", "gauge", "Tracked threads by class and what decided it");
    for (unsigned c = CLASS_IGNORE; c < _TASK_CLASS_MAX; c++)
        for (unsigned src = SOURCE_SLICE; src <= SOURCE_BEHAVIOUR; src++)
            sample2(s, "class", task_class_to_string((enum task_class)c), "source",
                    class_source_to_string((enum class_source)src), n[c][src]);
    s = family(arr, "turbosched_behaviour_releases_total", "counter",
               "Jitter by behaviour that turned heavy and got its mask back");
    sample(s, NULL, NULL, (double)sn->counters.behaviour_released);
    s = family(arr, "turbosched_request_path_holds_total", "counter",
               "Threads light and frequent enough for jitter but held back: their process serves, or they sleep "
               "in an untimed wait");
    sample(s, "why", "serves", (double)sn->held_serving);
    sample(s, "why", "sleep", (double)sn->held_sleep);
    s = family(arr, "turbosched_tail_guard_releases_total", "counter",
               "Processes packed by behaviour whose run-queue wait tail got worse than unpacked: released");
    sample(s, NULL, NULL, (double)sn->released);
    s = family(arr, "turbosched_behaviour_watched", "gauge", "Threads watched for classification by behaviour");
    sample(s, NULL, NULL, sn->sampler->n_watching);
    s = family(arr, "turbosched_thread_reads_total", "counter",
               "Per-thread and per-process /proc reads of the tick's samplers, and thread reads spared");
    sample(s, "read", "behaviour", (double)sn->sampler->behaviour_reads);
    sample(s, "read", "sockets", (double)sn->socket_checks);
    sample(s, "read", "syscall", (double)sn->sleep_reads);
    sample(s, "read", "jitter", (double)sn->sampler->jitter_reads);
    sample(s, "read", "process", (double)sn->sampler->gate_reads);
    sample(s, "read", "spared", (double)sn->sampler->gate_skips);
}

static void run_delay_metrics(const struct engine_snapshot *sn, struct json_object *arr)
{
    const struct delay_guard *g = sn->delay.guard;
    histogram_family(arr, "turbosched_run_delay_seconds",
                     "Packed jitter's mean run-queue wait per wake-up between two readings, once per wake-up",
                     sn->delay.hist);
    struct json_object *s = family(arr, "turbosched_run_delay_actions_total", "counter",
                                   "What the run-delay guard did: spilled to a core, released one, gave packing up");
    sample(s, "action", "spill", (double)g->spills_total);
    sample(s, "action", "shrink", (double)g->shrinks_total);
    sample(s, "action", "fallback", (double)g->fallbacks_total);
    s = family(arr, "turbosched_run_delay_spilled_cores", "gauge",
               "Busy cores jitter was spilled to for its run delay");
    sample(s, NULL, NULL, g->n_spilled);
}

/* Tracked threads and the proc connector's events. */
static void metrics_tasks(struct json_object *arr, const struct engine_snapshot *sn)
{
    struct json_object *s;
    static const enum task_class classes[] = {CLASS_JITTER, CLASS_INTENSIVE, CLASS_IGNORE, CLASS_UNSET};
    static_assert(ELEMENTSOF(classes) == _TASK_CLASS_MAX, "every class has its sample");

    s = family(arr, "turbosched_tasks", "gauge", "Tracked threads by class");
    for (size_t i = 0; i < ELEMENTSOF(classes); i++)
        sample(s, "class", task_class_to_string(classes[i]), sn->by_class[classes[i]]);
    s = family(arr, "turbosched_tasks_packed", "gauge", "Threads whose affinity the daemon set");
    sample(s, NULL, NULL, sn->packed);

    const struct procmon_counters *pc = sn->procmon;
    if (pc) {
        s = family(arr, "turbosched_events_total", "counter", "Proc connector events handled by kind");
        sample(s, "kind", "fork", (double)pc->fork);
        sample(s, "kind", "exec", (double)pc->exec);
        sample(s, "kind", "comm", (double)pc->comm);
        sample(s, "kind", "exit", (double)pc->exit);
        sample(s, "kind", "uid", (double)pc->uid);
        sample(s, "kind", "other", (double)pc->other);
        s = family(arr, "turbosched_netlink_overflows_total", "counter",
                   "Proc connector receive buffer overflows (events lost, /proc rescanned)");
        sample(s, NULL, NULL, (double)pc->overflows);
        s = family(arr, "turbosched_rename_floods_total", "counter",
                   "Times renames were left unheard for a while, coming faster than the daemon reads them usefully");
        sample(s, NULL, NULL, (double)sn->rename_floods);
    }
    histogram_family(arr, "turbosched_placement_latency_seconds",
                     "From the kernel's event to the call that placed its task, per placement made for an event",
                     sn->placement_latency);
    histogram_family(arr, "turbosched_event_delay_seconds",
                     "From the kernel's event to the start of its handling (queued in the socket or behind other work)",
                     sn->queue_delay);
    s = family(arr, "turbosched_event_handling_seconds_total", "counter",
               "Time spent handling events, by kind (turbosched_events_total counts them)");
    for (unsigned k = PROCMON_FORK; k < PROCMON_KINDS; k++)
        sample(s, "kind", procmon_kind_to_string((enum procmon_kind)k), (double)sn->handled_ns[k] / 1e9);
    if (sn->doorbell) {
        s = family(arr, "turbosched_exec_doorbell_total", "counter",
                   "The exec-only socket: wake-ups it rang, execs handled from it ahead of the main socket, "
                   "those the main socket then brought and were skipped, and rung execs the main socket "
                   "had handled already");
        sample(s, "what", "rung", (double)sn->doorbell_rings);
        sample(s, "what", "ahead", (double)sn->doorbell_ahead);
        sample(s, "what", "skipped", (double)sn->doorbell_skipped);
        sample(s, "what", "already", (double)sn->doorbell_already);
    }
    s = family(arr, "turbosched_adoptions_waited_total", "counter",
               "New processes of a task whose mask the daemon set, recorded once their start time could be read "
               "without waiting on an exec: at their exec, at a tick, or before a restore of everything");
    sample(s, "at", "exec", (double)sn->adopted_at_exec);
    sample(s, "at", "tick", (double)sn->adopted_at_tick);
    sample(s, "at", "restore", (double)sn->adopted_at_restore);
    s = family(arr, "turbosched_event_wakeups_total", "counter", "Wake-ups that read the proc connector");
    sample(s, NULL, NULL, (double)sn->wakeups);
    s = family(arr, "turbosched_event_wakeups_seconds_total", "counter",
               "Time spent in those wake-ups: reading the socket and handling what it held");
    sample(s, NULL, NULL, (double)sn->wakeups_ns / 1e9);
}

/* The plan the benefit model chose, the probe loop's progress (where it
 * runs) and the deep idle measurement (where there is one). */
static void benefit_metrics(const struct engine_snapshot *sn, struct json_object *arr)
{
    struct json_object *s =
        family(arr, "turbosched_benefit_plan", "gauge", "1 for the plan the benefit model chose at the last tick");
    for (unsigned p = 0; p < BENEFIT_N_PLANS; p++)
        sample(s, "plan", benefit_plan_name((enum benefit_plan)p),
               sn->planned && sn->plan->benefit == (enum benefit_plan)p);
    const struct engine_probe_snapshot *pr = &sn->probe;
    if (pr->on) {
        s = family(arr, "turbosched_probe_rounds_total", "counter", "Probe rounds completed, and probes thrown away");
        sample(s, "outcome", "completed", pr->rounds);
        sample(s, "outcome", "discarded", pr->discarded);
        s = family(arr, "turbosched_probe_learned", "gauge", "1 for the plan the probes found best so far");
        for (unsigned p = 0; p < BENEFIT_N_PLANS; p++)
            sample(s, "plan", benefit_plan_name((enum benefit_plan)p),
                   pr->learned_any && pr->learned == (enum benefit_plan)p);
    }
    const struct engine_idle_snapshot *d = &sn->idle;
    if (d->fig.none.measured) {
        s = family(arr, "turbosched_idle_cores_woken_ratio", "gauge",
                   "Idle cores kept out of the deep idle states while the jitter ran free (cores)");
        sample(s, NULL, NULL, d->fig.none.woken_milli / 1000.0);
        s = family(arr, "turbosched_idle_core_wakeups_per_second", "gauge",
                   "Wake-ups of idle cores out of the deep idle states while the jitter ran free");
        sample(s, NULL, NULL, d->fig.none.wakes_per_s);
    }
    if (d->on) {
        s = family(arr, "turbosched_benefit_isolation_trials_total", "counter",
                   "Trials of isolation started to measure how often its tasks wake their core");
        sample(s, NULL, NULL, d->trials);
    }
}

/* The engine's own counters and its current plan. */
static void metrics_engine(struct json_object *arr, const struct engine *e, const struct engine_snapshot *sn)
{
    struct json_object *s;
    s = family(arr, "turbosched_untracked_tasks_total", "counter",
               "Threads not tracked because the task table was full");
    sample(s, NULL, NULL, (double)sn->counters.table_full);
    s = family(arr, "turbosched_rescans_total", "counter", "Full rescans of /proc");
    sample(s, NULL, NULL, (double)sn->counters.rescans);
    s = family(arr, "turbosched_ticks_total", "counter", "Ticks: load sampled and the plan made again");
    sample(s, NULL, NULL, (double)sn->counters.ticks);
    s = family(arr, "turbosched_daemon_moves_total", "counter",
               "Moves of the daemon itself to the CPU where most of a tick's execs were");
    sample(s, NULL, NULL, (double)sn->daemon_moves);
    s = family(arr, "turbosched_plan_changes_total", "counter", "Changes of the jitter CPU mask");
    sample(s, NULL, NULL, (double)sn->counters.plan_changes);
    s = family(arr, "turbosched_plan_restricted", "gauge", "1 when jitter tasks are confined");
    sample(s, NULL, NULL, sn->planned && sn->plan->restricted);
    s = family(arr, "turbosched_paused", "gauge", "1 while packing is paused (turbosched-ctl pause, compare)");
    sample(s, NULL, NULL, sn->pause.paused);
    s = family(arr, "turbosched_pauses_total", "counter", "Times packing was paused");
    sample(s, NULL, NULL, (double)sn->pause.pauses);
    s = family(arr, "turbosched_paused_seconds_total", "counter", "Time spent paused");
    sample(s, NULL, NULL, sn->pause.paused_ms_total / 1000.0);
    s = family(arr, "turbosched_jitter_load_ratio", "gauge", "Load of jitter tasks in CPUs");
    sample(s, NULL, NULL, sn->sampler->jitter_load_milli / 1000.0);
    s = family(arr, "turbosched_reloads_total", "counter", "Configuration reloads by result");
    sample(s, "result", "ok", (double)sn->counters.reloads_ok);
    sample(s, "result", "failed", (double)sn->counters.reloads_failed);
    behaviour_metrics(e, sn, arr);
    run_delay_metrics(sn, arr);
    benefit_metrics(sn, arr);
}

/* Per CPU: the smoothed utilisation, then frequency and idle states as the
 * kernel reports them. */
static void metrics_cpus(struct json_object *arr, const struct engine_snapshot *sn)
{
    struct json_object *s;
    s = family(arr, "turbosched_cpu_utilisation_ratio", "gauge", "Smoothed utilisation per CPU");
    for (int i = 0; i < sn->sampler->n_cpus; i++) {
        if (sn->sampler->util_milli[i] < 0)
            continue;
        char cpu[16];
        snprintf(cpu, sizeof cpu, "%d", i);
        sample(s, "cpu", cpu, sn->sampler->util_milli[i] / 1000.0);
    }

    struct cpustats cs;
    if (cpustats_read(&cs) == 0) {
        struct json_object *fq = family(arr, "turbosched_cpu_frequency_hertz", "gauge",
                                        "Current CPU frequency (absent without a cpufreq driver)");
        struct json_object *iu =
            family(arr, "turbosched_cpu_idle_entries_total", "counter", "Idle state entries per CPU, all states");
        struct json_object *su =
            family(arr, "turbosched_cpu_idle_state_entries_total", "counter", "Entries into each idle state per CPU");
        struct json_object *st =
            family(arr, "turbosched_cpu_idle_state_seconds_total", "counter", "Residency in each idle state per CPU");
        for (unsigned i = 0; i < cs.n_cpus; i++) {
            char cpu[16];
            snprintf(cpu, sizeof cpu, "%u", cs.cpus[i].cpu);
            if (cs.cpus[i].freq_khz)
                sample(fq, "cpu", cpu, (double)cs.cpus[i].freq_khz * 1000.0);
            uint64_t n = 0;
            for (unsigned k = 0; k < cs.cpus[i].n_idle; k++) {
                const struct cpustats_idle_state *is = &cs.cpus[i].idle[k];
                n += is->usage;
                sample2(su, "cpu", cpu, "state", is->name, (double)is->usage);
                sample2(st, "cpu", cpu, "state", is->name, (double)is->time_us / 1e6);
            }
            if (cs.cpus[i].n_idle)
                sample(iu, "cpu", cpu, (double)n);
        }
        cpustats_done(&cs);
    }
}

struct json_object *report_metrics(const struct engine *e)
{
    struct engine_snapshot sn;
    engine_snapshot(e, &sn);
    struct json_object *arr = json_object_new_array();
    metrics_tasks(arr, &sn);
    metrics_engine(arr, e, &sn);
    metrics_cpus(arr, &sn);
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "metrics", arr);
    return o;
}
