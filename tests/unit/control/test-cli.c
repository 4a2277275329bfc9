/* SPDX-License-Identifier: GPL-2.0-or-later */
/* turboschedd's command line: what each option sets, and the exit status
 * of a usage error, --help and --version. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "log.h"

/* Parses the arguments after "turboschedd", from a fresh getopt. */
static int parse(struct cli_options *o, const char *const *args, int n)
{
    char *argv[16];
    assert_true(n < 15);
    argv[0] = (char *)"turboschedd";
    for (int i = 0; i < n; i++)
        argv[i + 1] = (char *)args[i];
    argv[n + 1] = NULL;
    optind = 0; /* glibc: start over */
    opterr = 0;
    return cli_parse(n + 1, argv, o);
}

#define PARSE(o, ...) \
    parse((o), (const char *const[]){__VA_ARGS__}, \
          (int)(sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *)))

static void test_options_set(void **state)
{
    struct cli_options o;
    assert_int_equal(parse(&o, NULL, 0), -1);
    assert_null(o.config_path);
    assert_false(o.check || o.topo || o.turbo || o.dry_run);
    assert_int_equal(o.log_level, -1);

    assert_int_equal(PARSE(&o, "-c", "/x.conf", "-n", "--check-config"), -1);
    assert_string_equal(o.config_path, "/x.conf");
    assert_true(o.dry_run && o.check);
    assert_int_equal(PARSE(&o, "--config=/y.conf", "--dry-run", "--turbo-table"), -1);
    assert_string_equal(o.config_path, "/y.conf");
    assert_true(o.dry_run && o.turbo && !o.check);
    assert_int_equal(PARSE(&o, "--print-topology", "--sysfs-root", "/fixture"), -1);
    assert_true(o.topo);
    assert_string_equal(o.sysfs_root, "/fixture");
    assert_int_equal(PARSE(&o, "-l", "debug"), -1);
    assert_int_equal(o.log_level, LOG_DEBUG);
    assert_int_equal(PARSE(&o, "--log-level", "err"), -1);
    assert_int_equal(o.log_level, LOG_ERR);
    log_set_max_level(LOG_INFO);
}

static void test_usage_errors(void **state)
{
    struct cli_options o;
    assert_int_equal(PARSE(&o, "--no-such-option"), EXIT_USAGE);
    assert_int_equal(PARSE(&o, "-l", "loud"), EXIT_USAGE);
    assert_int_equal(PARSE(&o, "extra"), EXIT_USAGE);
    assert_int_equal(PARSE(&o, "-n", "extra"), EXIT_USAGE);
    assert_int_equal(PARSE(&o, "--sysfs-root", "/fixture"), EXIT_USAGE); /* only with --print-topology */
    assert_int_equal(PARSE(&o, "-c"), EXIT_USAGE);                       /* no argument */
}

static void test_help_and_version(void **state)
{
    struct cli_options o;
    assert_int_equal(PARSE(&o, "--help"), EXIT_OK);
    assert_int_equal(PARSE(&o, "-h", "--no-such-option"), EXIT_OK); /* answered at once */
    assert_int_equal(PARSE(&o, "-V"), EXIT_OK);
    assert_int_equal(PARSE(&o, "--version"), EXIT_OK);
    assert_int_equal(fflush(stdout), 0);
}

/* A --config that does not load: the daemon does not start (EXIT_CONFIG);
 * --check-config answers "invalid" (EXIT_RUNTIME). A good one loads. */
static void test_load_config(void **state)
{
    char dir[] = "/tmp/ts-cli-XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/none.conf", dir);
    struct cli_options o = {.config_path = path, .log_level = -1};
    struct config *cfg = NULL;
    assert_int_equal(cli_load_config(&o, &cfg), EXIT_CONFIG);
    o.check = true;
    assert_int_equal(cli_load_config(&o, &cfg), EXIT_RUNTIME);

    snprintf(path, sizeof path, "%s/bad.conf", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("[capacity]\nfrequency_reevaluation = 2s\n", f);
    fclose(f);
    o = (struct cli_options){.config_path = path, .log_level = -1};
    assert_int_equal(cli_load_config(&o, &cfg), EXIT_CONFIG);

    snprintf(path, sizeof path, "%s/good.conf", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("# defaults\n", f);
    fclose(f);
    o = (struct cli_options){.config_path = path, .log_level = -1};
    assert_int_equal(cli_load_config(&o, &cfg), -1);
    assert_non_null(cfg);
    config_destroy(cfg);

    char cmd[96];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options_set),
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_help_and_version),
        cmocka_unit_test(test_load_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
