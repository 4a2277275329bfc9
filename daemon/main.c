/* SPDX-License-Identifier: GPL-2.0-or-later */
/* turboschedd: wiring only. Options, config, event loop, signals, shutdown. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include "classifier.h"
#include "cli.h"
#include "config.h"
#include "control.h"
#include "control-methods.h"
#include "engine.h"
#include "instance.h"
#include "log.h"
#include "loop.h"
#include "privileges.h"
#include "seat.h"
#include "sysops.h"
#include "util.h"

struct daemon {
    sd_event *event;
    struct engine *engine;
    struct control_server *control;
    struct control_methods methods; /* what the control socket's methods act on */
    sd_event_source *tick_source;
    sd_event_source *state_source;    /* one-shot: a change waiting for the state file (always there) */
    sd_event_source *events_source;   /* the proc connector */
    sd_event_source *doorbell_source; /* its exec-only socket, NULL without one */
    struct loop_batch batch;          /* the main socket's mutes */
    struct loop loop;
    char status[256];
};

static void update_status(void *userdata)
{
    struct daemon *d = userdata;
    char buf[256];
    engine_status_line(d->engine, buf, sizeof buf);
    if (engine_paused(d->engine) && strlen(buf) + sizeof "; paused" <= sizeof buf)
        strcat(buf, "; paused");
    if (strcmp(buf, d->status) != 0) {
        snprintf(d->status, sizeof d->status, "%s", buf);
        sd_notifyf(false, "STATUS=%s", buf);
    }
}

/* CAP_SYS_PTRACE is given up at start when no rule reads exe=; a process
 * cannot raise its permitted set again, so a reload that adds such a rule
 * gets the rule without it until a restart, which regains it from the unit's
 * CapabilityBoundingSet=. Say so where the administrator looks. */
static void note_lost_privileges(const struct config *cfg, char *msg, size_t size)
{
    if (!privileges_exe_rules_lack_ptrace(cfg))
        return;
    log_notice("exe= rules are now configured, but CAP_SYS_PTRACE was given up at start when no rule needed it: "
               "until the daemon is restarted they match only processes whose /proc/PID/exe it may read without it");
    size_t len = strnlen(msg, size);
    if (len + 1 < size)
        snprintf(msg + len, size - len, "%sexe= rules need a restart to read other users' executables",
                 len ? "; " : "");
}

static int reload(void *userdata, char *msg, size_t size)
{
    struct daemon *d = userdata;
    sd_notifyf(false, "RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=reloading", (unsigned long long)(now_ns() / 1000));
    int r = engine_reload(d->engine, msg, size);
    if (r >= 0) {
        note_lost_privileges(engine_config(d->engine), msg, size);
        loop_set_nice(engine_config(d->engine)->nice);
        loop_set_priority(&d->loop, engine_config(d->engine)->realtime_priority);
    }
    /* The tick period may have changed. */
    int t = sd_event_source_set_time_relative(d->tick_source, (uint64_t)engine_config(d->engine)->tick_ms * 1000);
    if (t < 0)
        log_warning_errno(t, "rearming the tick: %m; the new tick_interval applies from the next tick");
    d->status[0] = '\0';
    sd_notify(false, "READY=1");
    update_status(d);
    return r;
}

static void write_state(struct daemon *d);

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata)
{
    struct daemon *d = userdata;
    engine_set_tick_at_rt(d->engine, d->loop.at_rt);
    engine_tick(d->engine);
    seat_tick(engine_seat(d->engine));
    loop_batch_tick(&d->batch);
    write_state(d); /* the tick wrote the file: no early write left */
    update_status(d);
    /* A time source fires once; arm it again. */
    int r = loop_arm_oneshot(s, (uint64_t)engine_config(d->engine)->tick_ms * 1000);
    if (r < 0)
        log_error_errno(r, "arming the tick timer: %m");
    return 0;
}

/* Write the state file if a change waits and may be written now, else arm
 * its timer for when it must be (not the next tick). The time a change must
 * be written by does not move with the changes after it: armed once, the
 * timer stays as it is; and off once the file is written (at an exec that
 * came in time, mostly), it wakes the daemon for nothing. */
static void write_state(struct daemon *d)
{
    int64_t due = engine_state_due_ms(d->engine);
    int on = SD_EVENT_OFF, r = sd_event_source_get_enabled(d->state_source, &on);
    if (r >= 0 && due > 0 && on == SD_EVENT_OFF)
        r = loop_arm_oneshot(d->state_source, (uint64_t)due * 1000);
    else if (r >= 0 && due <= 0 && on != SD_EVENT_OFF)
        r = sd_event_source_set_enabled(d->state_source, SD_EVENT_OFF);
    if (r < 0)
        log_warning_errno(r, "arming the state file timer: %m; the change is written at the next tick");
}

static int on_state_due(sd_event_source *s, uint64_t usec, void *userdata)
{
    write_state(userdata);
    return 0;
}

/* The state file's timer, made now (off) so that the loop knows it from the
 * start and it is there to arm; the main socket's mute timer with it. */
static int add_event_timers(struct daemon *d)
{
    int r = loop_batch_init(&d->batch, d->event, d->events_source, d->doorbell_source != NULL, NULL);
    if (r >= 0)
        r = sd_event_add_time_relative(d->event, &d->state_source, CLOCK_MONOTONIC, 0, 1000, on_state_due, d);
    if (r >= 0)
        r = sd_event_source_set_enabled(d->state_source, SD_EVENT_OFF);
    if (r < 0)
        log_error_errno(r, "adding the event loop's timers: %m");
    return r;
}

static int on_netlink(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
    struct daemon *d = userdata;
    engine_on_events(d->engine);
    write_state(d);
    loop_batch_woke(&d->batch);
    return 0;
}

static int on_doorbell(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
    struct daemon *d = userdata;
    loop_batch_rang(&d->batch);
    engine_on_doorbell(d->engine);
    write_state(d);
    return 0;
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
    struct daemon *d = userdata;
    if (si->ssi_signo == SIGHUP) {
        log_info("SIGHUP: reloading the configuration");
        reload(d, NULL, 0);
        return 0;
    }
    log_info("%s: restoring every change and exiting", strsignal((int)si->ssi_signo));
    sd_notify(false, "STOPPING=1\nSTATUS=stopping: restoring every change");
    return sd_event_exit(sd_event_source_get_event(s), 0);
}

static int run(struct daemon *d)
{
    struct engine *e = d->engine;
    sigset_t mask;
    int r = 0;

    static const int handled_signals[] = {SIGTERM, SIGINT, SIGHUP};
    sigemptyset(&mask);
    for (size_t i = 0; i < ELEMENTSOF(handled_signals); i++)
        sigaddset(&mask, handled_signals[i]);
    if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0 || (r = sd_event_default(&d->event)) < 0) {
        r = r < 0 ? r : -errno;
        log_error_errno(r, "setting up the event loop: %m");
        return r;
    }
    /* Unhandled, a stop would end in SIGKILL, with nothing restored. */
    for (size_t i = 0; i < ELEMENTSOF(handled_signals); i++)
        if ((r = sd_event_add_signal(d->event, NULL, handled_signals[i], on_signal, d)) < 0)
            return log_error_errno(r, "handling %s: %m", strsignal(handled_signals[i]));
    /* Sends WATCHDOG=1 at half of WatchdogSec= when the unit sets it. */
    if ((r = sd_event_set_watchdog(d->event, true)) < 0)
        return log_error_errno(r, "the service manager's watchdog: %m");

    if (engine_config(e)->state_file && (r = instance_lock(engine_config(e)->state_file)) < 0)
        return r;
    /* systemd's Reloading signal flushes the unit property cache. */
    if ((r = classifier_attach_event(engine_classifier(e), d->event)) < 0)
        log_warning_errno(r, "unit opt-in: attaching the system bus to the event loop: %m; "
                             "X-TurboSched= is read, but not again after a daemon-reload");
    loop_set_nice(engine_config(e)->nice);
    if ((r = engine_start(e)) < 0)
        return r;
    r = sd_event_add_io(d->event, &d->events_source, engine_procmon_fd(e), EPOLLIN, on_netlink, d);
    if (r >= 0 && engine_doorbell_fd(e) >= 0)
        r = sd_event_add_io(d->event, &d->doorbell_source, engine_doorbell_fd(e), EPOLLIN, on_doorbell, d);
    if (r < 0)
        return log_error_errno(r, "adding the proc connector to the event loop: %m");
    r = sd_event_add_time_relative(d->event, &d->tick_source, CLOCK_MONOTONIC,
                                   (uint64_t)engine_config(e)->tick_ms * 1000, 1000, on_tick, d);
    if (r < 0)
        return log_error_errno(r, "adding the tick timer: %m");
    d->methods = (struct control_methods){.engine = e,
                                          .loop = &d->loop,
                                          .batch = &d->batch,
                                          .userdata = d,
                                          .reload = reload,
                                          .status_changed = update_status};
    r = control_server_new(d->event, engine_config(e)->control_socket, engine_config(e)->control_group, 0,
                           control_methods_handle, &d->methods, &d->control);
    if (r < 0) {
        /* control.c said why; the shipped unit leaves chown out of reach. */
        if (r == -EPERM && engine_config(e)->control_group)
            log_notice("control_group= needs CAP_CHOWN and the @chown system calls: under systemd, add them with "
                       "the drop-in shown under PRIVILEGES in turboschedd(8)");
        return r;
    }
    control_server_set_close_hook(d->control, control_methods_closed);
    /* Everything that needs privilege beyond the working set is opened. */
    privileges_drop_unneeded((struct privilege_needs){
        .cpuset_v1 = engine_cgroup_privileged(e),
        .exe_rules = privileges_config_reads_exe(engine_config(e)),
        .request_paths = privileges_config_reads_sockets(engine_config(e)),
    });

    update_status(d);
    sd_notify(false, "READY=1");
    log_info("ready: %s", d->status);
    /* The doorbell first: its ring reads the main socket too. The two
     * timers finish the events' work: dispatched at normal priority under
     * a storm, each waited behind the storm with the events queued (92% of
     * a storm's tasks placed within 20 ms, a p99 of 45 ms). */
    if ((r = add_event_timers(d)) < 0)
        return r;
    sd_event_source *events[] = {d->doorbell_source, d->events_source, d->batch.timer, d->state_source};
    seat_init(engine_seat(e));
    loop_init(&d->loop, d->event, events, ELEMENTSOF(events), engine_config(e)->realtime_priority);
    /* A walk of /proc after lost events is the work of a tick at normal
     * priority: until it is done, the tick does not follow the events. */
    loop_follow(&d->loop, d->tick_source, engine_rescan_pending(e));
    r = loop_run(&d->loop);
    loop_done(&d->loop);
    return r;
}

int main(int argc, char **argv)
{
    struct cli_options o;
    struct config *cfg = NULL;
    int r = cli_parse(argc, argv, &o);
    if (r >= 0)
        return r;
    if (o.turbo)
        return cli_print_turbo_table();
    r = cli_load_config(&o, &cfg);
    if (r >= 0)
        return r;
    if (o.log_level < 0)
        log_set_max_level(cfg->log_level);
    if (o.check || o.topo) {
        r = o.check ? cli_print_config(cfg) : cli_print_topology(o.sysfs_root, cfg);
        config_destroy(cfg);
        return r;
    }

    struct engine_params p = {
        .config_path = o.config_path,
        .root = "/",
        .dry_run = o.dry_run,
        .log_level = o.log_level,
    };
    struct daemon d = {0};
    r = engine_new(cfg, &p, &d.engine);
    if (r < 0)
        return EXIT_RUNTIME;
    r = run(&d); /* a failure was logged where it happened */
    control_server_free(d.control);
    engine_free(d.engine); /* restores every change */
    sysops_real_close();   /* the system bus the unit operations opened */
    sd_event_source_unref(d.tick_source);
    sd_event_source_unref(d.state_source);
    sd_event_source_unref(d.events_source);
    sd_event_source_unref(d.doorbell_source);
    loop_batch_done(&d.batch);
    sd_event_unref(d.event);
    log_info("stopped");
    return r < 0 ? EXIT_RUNTIME : EXIT_OK;
}
