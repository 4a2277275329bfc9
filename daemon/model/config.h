/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The daemon's configuration: parsed from an INI file (inih) and its drop-ins
 * into a new struct, validated, and only then swapped in. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "behaviour.h"
#include "benefit.h"
#include "policy-params.h"
#include "power_capacity.h"
#include "task-class.h"

enum apply_mode { APPLY_AFFINITY = 0, APPLY_CGROUP };

/* Match keys of a rule: NULL-terminated lists of fnmatch(3) globs; NULL means
 * "key not used". A rule matches when every used key has a matching glob. */
enum rule_key { RULE_COMM = 0, RULE_EXE, RULE_CMDLINE, RULE_CGROUP, RULE_UNIT, RULE_USER, _RULE_KEY_MAX };
const char *rule_key_to_string(enum rule_key k);

struct rule {
    char *name;
    char *file; /* where it was defined, for messages and explain */
    unsigned line;
    char **globs[_RULE_KEY_MAX];
    enum task_class class;
    bool cgroup_mode; /* confine the task's whole cgroup instead of its threads */
};

struct config {
    char *path; /* main file */
    /* [daemon] */
    unsigned tick_ms; /* load sampling and repacking period */
    int log_level;
    bool dry_run;
    enum apply_mode mode;
    uint64_t rcvbuf_bytes;      /* netlink receive buffer (SO_RCVBUFFORCE) */
    int nice;                   /* the daemon's own nice value, -20..19 */
    unsigned realtime_priority; /* SCHED_FIFO priority for handling process events, 0 = off */
    unsigned max_tasks;         /* bound on tracked threads */
    char *control_socket;
    char *control_group; /* group allowed read-only methods; NULL: root only */
    char *state_file;
    char *cgroup_name; /* v1 cpuset group the daemon creates for cgroup mode */
    /* [capacity] */
    struct capacity_table capacity;
    /* the chip's frequency by number of active cores (active<N> keys);
     * n_cores 0: not given, packing goes by the thresholds alone */
    struct freq_response freq;
    /* probe = yes: without a table, learn which plan pays from the busy
     * cores' measured frequency (APERF/MPERF or cpufreq) where it can be read */
    bool freq_probe;
    /* [packing], and [capacity] frequency_reevaluation: in the units their
     * users take (policy-params.h) */
    struct policy_params policy;
    /* [classify] */
    bool use_uclamp;
    unsigned uclamp_threshold; /* util_max at or below this (0..1024) is jitter */
    unsigned uclamp_recheck_ms;
    enum task_class default_class;
    bool unit_optin;                   /* X-TurboSched= and the jitter slice */
    struct behaviour_params behaviour; /* behaviour and behaviour_* keys */
    /* Behaviour packs only housekeeping: a thread whose process serves
     * (listening socket, local stream peer, server port) or that sleeps in
     * an untimed wait is not jitter by behaviour (reqpath.h). */
    bool request_paths;
    /* A process packed by behaviour whose own run-queue wait tail got worse
     * than unpacked by the margin is released and kept out (reqpath.h). */
    bool tail_guard;
    /* rules, in file order then drop-in order */
    struct rule *rules;
    size_t n_rules;
};

/* Defaults for every key (documented in conf/turbosched.conf), in place: for
 * a config on the stack or inside another struct; config_done frees what it
 * holds (and leaves it zeroed), not the struct itself. */
void config_init_defaults(struct config *c);
void config_done(struct config *c);
/* A heap config with the defaults and no rules (what the daemon runs with when
 * there is no configuration file); 0 or -ENOMEM. Free with config_destroy. */
int config_new_default(struct config **ret);

/* ---- Loading (config.c) ---- */
#include <stdio.h>

#define CONFIG_PATH_DEFAULT "/etc/turbosched/turbosched.conf"
/* Drop-ins live in "rules.d" next to the main file: /etc/turbosched/rules.d
 * by default, <dir of FILE>/rules.d with --config FILE. */
#define CONFIG_DROPIN_SUBDIR "rules.d"
/* Longest line we accept (without its newline): inih reads lines into a fixed
 * buffer of ini_max_line bytes (200 in Debian's build) and would silently
 * split a longer one, so such lines are reported instead. */
size_t config_max_line(void);

/* Allocate a config with defaults, parse `path` (NULL: CONFIG_PATH_DEFAULT)
 * and then every *.conf in dropin_dir (NULL: derived as above) in lexical
 * order. Every problem is logged as "file:line: message" (all of them, not
 * only the first); any problem makes the whole load fail with -EINVAL (a
 * missing main file: -ENOENT), leaving *ret untouched. */
int config_load(const char *path, const char *dropin_dir, struct config **ret);
/* Parse one file's worth of text into c (initialised with
 * config_init_defaults, possibly holding earlier files' rules), as if it came
 * from a file called `name`. Same messages as config_load; returns 0 or
 * -EINVAL. On error c is still valid (freeable) but may be partly updated.
 * This is the fuzz target's entry point. */
int config_load_string(const char *text, const char *name, struct config *c);
/* The effective configuration in config-file syntax, every key, defaults
 * included, rules in match order with their origin (like `sshd -T`). The
 * output parses back to an equal config. */
void config_print(FILE *f, const struct config *c);
/* A frequency table as [capacity] keys, in runs of equal frequency
 * ("active2-4 = 3600MHz"); nothing for an empty one. */
void config_print_freq(FILE *f, const struct freq_response *fr);
/* Self-check used by the fuzzer and the corpus replay: c printed, parsed
 * again and printed again gives the same text (origin comments aside).
 * 0 if so, -EPROTO (with both texts logged at debug) if not. */
int config_check_print(const struct config *c);
/* config_done() and free() of a config from config_load or
 * config_new_default; NULL is fine. config_destroyp is for
 * __attribute__((cleanup)). */
void config_destroy(struct config *c);
void config_destroyp(struct config **c);
/* Inverse of rule_key_to_string. */
enum rule_key rule_key_from_string(const char *s); /* _RULE_KEY_MAX if unknown */
