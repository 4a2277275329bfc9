/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The request-path test and the per-process tail guard, wired to the
 * sampler's behaviour reads (reqpath.h says what is judged, procsock.h what
 * is read). Per process seen waking: what its sockets said and when, and
 * its tail of run-queue waits, packed and not. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "log.h"
#include "pidmap.h"
#include "procsock.h"
#include "reqpath.h"

struct engine;
struct task;
struct sampler_sample;

/* A process's sockets are looked at again after this long. */
#define REQPATH_RECHECK_MS 60000u

struct engine_reqpath {
    struct pidmap procs; /* pid -> struct reqpath_proc */
    struct procsock_table socks;
    bool unreadable_said; /* logged once: sockets of other users' processes unreadable */
    struct log_ratelimit logs;
    /* counters, for status and metrics */
    uint64_t held_serving;  /* grants held back: the process serves */
    uint64_t held_sleep;    /* ... the thread sleeps in an untimed wait, or could not be read */
    uint64_t released;      /* processes released by the tail guard */
    uint64_t socket_checks; /* fd scans of a process */
    uint64_t sleep_reads;   /* /proc/TID/syscall reads */
};

struct reqpath_proc {
    uint64_t start_time; /* its leader's, against PID reuse; 0 unknown */
    uint32_t checked_ms; /* when its sockets were last read */
    int8_t serves;       /* -1 not read, 0 no, 1 yes, 2 could not be read */
    uint8_t sleep;       /* enum reqpath_sleep of the last thread read */
    char sleep_call[16]; /* ... and the call it was in */
    char why[80];        /* what its sockets said */
    struct reqpath_tail tail;
};

void engine_reqpath_init(struct engine_reqpath *r);
void engine_reqpath_done(struct engine_reqpath *r);
/* The sampler's hooks (struct sampler_behaviour_hooks). */
bool engine_reqpath_may_be_jitter(struct engine *e, struct task *t, bool granting);
void engine_reqpath_sample(struct engine *e, struct task *t, const struct sampler_sample *d);
/* A leader left the table: its process's entry goes. */
void engine_reqpath_gone(struct engine *e, const struct task *t);
/* explain's line for t's process. */
void engine_reqpath_explain(const struct engine *e, const struct task *t, char *buf, size_t size);
/* Processes kept out by the tail guard now. */
unsigned engine_reqpath_cooling(const struct engine *e);
