/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "power_capacity.h"
#include "topology.h"
#include "turbo-ratio.h"
#include "version.h"

#define DEFAULT_CONFIG CONFIG_PATH_DEFAULT

static void help(void)
{
    printf("Usage: turboschedd [OPTIONS]\n"
           "\n"
           "Keep busy cores in turbo by packing short, low-utilisation \"jitter\" tasks\n"
           "onto cores that are already busy and still have spare SMT capacity.\n"
           "Runs in the foreground (a Type=notify service); SIGHUP reloads the\n"
           "configuration, SIGTERM/SIGINT restore every change and exit.\n"
           "\n"
           "  -c, --config FILE       configuration file (default " DEFAULT_CONFIG ");\n"
           "                          drop-ins are read from FILE's directory, rules.d/*.conf\n"
           "      --check-config      validate the configuration, print it as understood, exit\n"
           "      --print-topology    print the packages, cores, SMT threads and capacities seen\n"
           "      --sysfs-root DIR    with --print-topology: read DIR/sys instead of /sys\n"
           "      --turbo-table       print the CPU's turbo frequencies by active cores as\n"
           "                          [capacity] keys (Intel, msr module loaded, root), exit\n"
           "  -n, --dry-run           decide and log every change, change nothing\n"
           "  -l, --log-level LEVEL   err, warning, notice, info or debug (overrides the config)\n"
           "  -h, --help              show this help\n"
           "  -V, --version           show the version\n"
           "\n"
           "Exit status: 0 success, 1 runtime failure (--check-config: invalid), 2 usage error,\n"
           "3 invalid configuration.\n"
           "See turboschedd(8), turbosched.conf(5), turbosched-ctl(8).\n");
}

/* What a print option wrote reached standard output (a full disk, a closed
 * pipe): EXIT_OK, or EXIT_RUNTIME, said on stderr. */
static int stdout_written(void)
{
    if (fflush(stdout) == 0 && !ferror(stdout))
        return EXIT_OK;
    fprintf(stderr, "turboschedd: writing to standard output: %s\n", strerror(errno ? errno : EIO));
    return EXIT_RUNTIME;
}

int cli_print_turbo_table(void)
{
    struct freq_response fr;
    char what[192];
    if (turbo_ratio_read("/", &fr, what, sizeof what) < 0) {
        fprintf(stderr, "turboschedd: no turbo ratio table: %s\n", what);
        return EXIT_RUNTIME;
    }
    printf("# From %s: the highest frequency\n"
           "# with N active cores. Check it against the CPU's specification.\n"
           "[capacity]\n",
           what);
    config_print_freq(stdout, &fr);
    return stdout_written();
}

int cli_print_topology(const char *root, const struct config *cfg)
{
    struct topology *t;
    if (topology_read(root, &t) < 0)
        return EXIT_RUNTIME; /* topology_read named the file */
    topology_print(stdout, t, &cfg->capacity);
    topology_free(t);
    return stdout_written();
}

int cli_print_config(const struct config *cfg)
{
    config_print(stdout, cfg);
    return stdout_written();
}

int cli_parse(int argc, char **argv, struct cli_options *o)
{
    enum { OPT_CHECK = 0x100, OPT_TOPO, OPT_SYSFS, OPT_TURBO };
    static const struct option opts[] = {
        {"config", required_argument, NULL, 'c'},
        {"check-config", no_argument, NULL, OPT_CHECK},
        {"print-topology", no_argument, NULL, OPT_TOPO},
        {"sysfs-root", required_argument, NULL, OPT_SYSFS},
        {"turbo-table", no_argument, NULL, OPT_TURBO},
        {"dry-run", no_argument, NULL, 'n'},
        {"log-level", required_argument, NULL, 'l'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {0},
    };
    int c;

    *o = (struct cli_options){.log_level = -1};
    while ((c = getopt_long(argc, argv, "c:nl:hV", opts, NULL)) >= 0) {
        switch (c) {
        case 'c':
            o->config_path = optarg;
            break;
        case OPT_CHECK:
            o->check = true;
            break;
        case OPT_TOPO:
            o->topo = true;
            break;
        case OPT_SYSFS:
            o->sysfs_root = optarg;
            break;
        case OPT_TURBO:
            o->turbo = true;
            break;
        case 'n':
            o->dry_run = true;
            break;
        case 'l':
            o->log_level = log_level_from_string(optarg);
            if (o->log_level < 0) {
                fprintf(stderr, "turboschedd: unknown log level '%s'\n", optarg);
                return EXIT_USAGE;
            }
            log_set_max_level(o->log_level);
            break;
        case 'h':
            help();
            return EXIT_OK;
        case 'V':
            printf("turboschedd %s\n", TS_VERSION);
            return EXIT_OK;
        default:
            fprintf(stderr, "Try 'turboschedd --help'.\n");
            return EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "turboschedd: unexpected argument '%s'\nTry 'turboschedd --help'.\n", argv[optind]);
        return EXIT_USAGE;
    }
    if (o->sysfs_root && !o->topo) {
        fprintf(stderr, "turboschedd: --sysfs-root only applies to --print-topology\n");
        return EXIT_USAGE;
    }
    return -1;
}

int cli_load_config(struct cli_options *o, struct config **ret)
{
    if (!o->config_path && access(DEFAULT_CONFIG, F_OK) < 0) {
        if (config_new_default(ret) < 0)
            return EXIT_RUNTIME;
        if (!o->topo)
            log_notice("%s not found: using built-in defaults and no rules", DEFAULT_CONFIG);
        return -1;
    }
    if (!o->config_path)
        o->config_path = DEFAULT_CONFIG;
    if (config_load(o->config_path, NULL, ret) < 0) {
        log_err("%s: invalid configuration%s", o->config_path, o->check || o->topo ? "" : ", not starting");
        /* --check-config answers yes or no, like sshd -t. */
        return o->check ? EXIT_RUNTIME : EXIT_CONFIG;
    }
    return -1;
}
