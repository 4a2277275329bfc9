/* SPDX-License-Identifier: GPL-2.0-or-later */
/* turboschedd's command line: its options, the configuration they name,
 * and the modes that print something and exit. */
#pragma once
#include <stdbool.h>

struct config;

/* Exit codes, as documented in turboschedd(8). */
enum {
    EXIT_OK = 0,
    EXIT_RUNTIME = 1,
    EXIT_USAGE = 2,
    EXIT_CONFIG = 3,
};

/* What the command line asked for. */
struct cli_options {
    const char *config_path, *sysfs_root;
    bool check, topo, turbo, dry_run;
    int log_level; /* -1: the config decides */
};

/* Returns -1 to go on, else the exit status (--help, --version, a usage
 * error). Sets the log level given with --log-level. */
int cli_parse(int argc, char **argv, struct cli_options *o);
/* Without --config, a missing default file means built-in defaults.
 * Returns -1 with *ret set, else the exit status. */
int cli_load_config(struct cli_options *o, struct config **ret);

/* The modes that print and exit; each returns the exit status.
 * --turbo-table: what the CPU publishes, as lines for turbosched.conf. */
int cli_print_turbo_table(void);
/* --check-config: the configuration as understood. */
int cli_print_config(const struct config *cfg);
/* --print-topology: what root's sysfs shows (NULL: the system's). */
int cli_print_topology(const char *root, const struct config *cfg);
