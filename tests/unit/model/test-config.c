/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The config parser: every value of every key, every error message exactly
 * (with file:line, all of them, not only the first), drop-in order and
 * overrides, and config_print round trips. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "control.h"
#include "log.h"

#define FIX TS_FIXTURES "/config"

/* ---------------------------------------------------- captured messages */

static char captured[16384];

static void sink(int level, const char *msg, void *userdata)
{
    (void)userdata;
    size_t n = strlen(captured);
    snprintf(captured + n, sizeof captured - n, "<%d>%s\n", level, msg);
}

static int setup(void **state)
{
    captured[0] = '\0';
    log_set_sink(sink, NULL);
    return 0;
}

static int teardown(void **state)
{
    log_set_sink(NULL, NULL);
    return 0;
}

/* Parse text as "t.conf"; return the result, messages in `captured`. */
static int parse(const char *text, struct config *c)
{
    captured[0] = '\0';
    config_init_defaults(c);
    return config_load_string(text, "t.conf", c);
}

static char *print_to_string(const struct config *c)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    assert_non_null(f);
    config_print(f, c);
    fclose(f);
    return buf;
}

/* Without "# ..." lines, which name the origin. */
static char *strip_comments(char *s)
{
    char *w = s;
    for (char *r = s; *r;) {
        char *nl = strchrnul(r, '\n');
        size_t n = (size_t)(nl - r) + (*nl ? 1 : 0);
        if (*r != '#') {
            memmove(w, r, n);
            w += n;
        }
        r += n;
    }
    *w = '\0';
    return s;
}

/* The [daemon], [capacity], [packing] and [classify] values a
 * configuration should hold, and no rules. */
struct settings {
    unsigned tick_ms;
    enum apply_mode mode;
    bool dry_run;
    int log_level;
    uint64_t rcvbuf_bytes;
    int nice;
    unsigned realtime_priority;
    unsigned max_tasks;
    const char *control_socket, *control_group, *state_file, *cgroup_name; /* control_group NULL: root only */
    unsigned smt1_milli, smt2_milli, smt4_milli, smt8_milli;
    unsigned busy_threshold_milli, headroom_milli, idle_machine_milli;
    unsigned hold_ms, min_change_ms, half_life_ms;
    enum pack_domain domain;
    bool use_uclamp;
    unsigned uclamp_threshold, uclamp_recheck_ms;
    enum task_class default_class;
    bool unit_optin;
};

static void expect_uint(const char *key, unsigned long long got, unsigned long long want)
{
    if (got != want)
        fail_msg("%s is %llu, expected %llu", key, got, want);
}

static void expect_int(const char *key, long long got, long long want)
{
    if (got != want)
        fail_msg("%s is %lld, expected %lld", key, got, want);
}

static void expect_str(const char *key, const char *got, const char *want)
{
    if (!got != !want || (got && strcmp(got, want) != 0))
        fail_msg("%s is %s%s%s, expected %s%s%s", key, got ? "'" : "", got ? got : "NULL", got ? "'" : "",
                 want ? "'" : "", want ? want : "NULL", want ? "'" : "");
}

static void expect_settings(const struct config *c, const struct settings *w)
{
    expect_uint("tick_interval", c->tick_ms, w->tick_ms);
    expect_int("mode", c->mode, w->mode);
    expect_int("dry_run", c->dry_run, w->dry_run);
    expect_int("log_level", c->log_level, w->log_level);
    expect_uint("netlink_rcvbuf", c->rcvbuf_bytes, w->rcvbuf_bytes);
    expect_int("nice", c->nice, w->nice);
    expect_uint("realtime_priority", c->realtime_priority, w->realtime_priority);
    expect_uint("max_tasks", c->max_tasks, w->max_tasks);
    expect_str("control_socket", c->control_socket, w->control_socket);
    expect_str("control_group", c->control_group, w->control_group);
    expect_str("state_file", c->state_file, w->state_file);
    expect_str("cgroup_name", c->cgroup_name, w->cgroup_name);
    expect_uint("smt1", c->capacity.factor_milli[1], w->smt1_milli);
    expect_uint("smt2", c->capacity.factor_milli[2], w->smt2_milli);
    expect_uint("smt4", c->capacity.factor_milli[4], w->smt4_milli);
    expect_uint("smt8", c->capacity.factor_milli[8], w->smt8_milli);
    expect_uint("busy_threshold", c->policy.busy_threshold_milli, w->busy_threshold_milli);
    expect_uint("headroom", c->policy.headroom_milli, w->headroom_milli);
    expect_uint("idle_threshold", c->policy.idle_machine_milli, w->idle_machine_milli);
    expect_uint("hold_time", c->policy.hold_ms, w->hold_ms);
    expect_uint("min_change_interval", c->policy.min_change_ms, w->min_change_ms);
    expect_uint("half_life", c->policy.half_life_ms, w->half_life_ms);
    expect_int("domain", c->policy.domain, w->domain);
    expect_int("uclamp", c->use_uclamp, w->use_uclamp);
    expect_uint("uclamp_threshold", c->uclamp_threshold, w->uclamp_threshold);
    expect_uint("uclamp_recheck_interval", c->uclamp_recheck_ms, w->uclamp_recheck_ms);
    expect_int("default_class", c->default_class, w->default_class);
    expect_int("unit_optin", c->unit_optin, w->unit_optin);
    expect_uint("rules", c->n_rules, 0);
}

/* ------------------------------------------------------------- defaults */

static void test_defaults(void **state)
{
    struct config c;
    config_init_defaults(&c);
    expect_settings(&c, &(struct settings){.tick_ms = 250,
                                           .mode = APPLY_AFFINITY,
                                           .dry_run = false,
                                           .log_level = LOG_INFO,
                                           .rcvbuf_bytes = 16u << 20,
                                           .nice = -10,
                                           .realtime_priority = 1,
                                           .max_tasks = 131072,
                                           .control_socket = "/run/turbosched/control",
                                           .control_group = NULL,
                                           .state_file = "/run/turbosched/state",
                                           .cgroup_name = "turbosched",
                                           .smt1_milli = 1000,
                                           .smt2_milli = 1250,
                                           .smt4_milli = 1500,
                                           .smt8_milli = 2000,
                                           .busy_threshold_milli = 125,
                                           .headroom_milli = 100,
                                           .idle_machine_milli = 50,
                                           .hold_ms = 1000,
                                           .min_change_ms = 2000,
                                           .half_life_ms = 1000,
                                           .domain = DOMAIN_PACKAGE,
                                           .use_uclamp = true,
                                           .uclamp_threshold = 204,
                                           .uclamp_recheck_ms = 5000,
                                           .default_class = CLASS_IGNORE,
                                           .unit_optin = true});
    config_done(&c);
}

/* The heap default (no configuration file) is the in-place default, printed
 * the same, and the socket path is the control server's. */
static void test_new_default(void **state)
{
    struct config c;
    config_init_defaults(&c);
    __attribute__((cleanup(config_destroyp))) struct config *h = NULL;
    assert_int_equal(config_new_default(&h), 0);
    assert_string_equal(h->control_socket, CONTROL_SOCKET_PATH_DEFAULT);
    char *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    FILE *fa = open_memstream(&a, &na), *fb = open_memstream(&b, &nb);
    assert_non_null(fa);
    assert_non_null(fb);
    config_print(fa, &c);
    config_print(fb, h);
    fclose(fa);
    fclose(fb);
    assert_string_equal(a, b);
    free(a);
    free(b);
    config_done(&c);
    assert_null(c.control_socket); /* config_done leaves it zeroed */
}

/* The shipped conf/turbosched.conf documents every key with its default:
 * uncommenting every "#key = value" line must give exactly the defaults. */
static void test_shipped_conf_documents_defaults(void **state)
{
    FILE *f = fopen(TS_SOURCE_DIR "/conf/turbosched.conf", "re");
    assert_non_null(f);
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    char line[512];
    unsigned keys = 0;
    while (fgets(line, sizeof line, f)) {
        /* the settings end where the rules (shipped or examples) begin */
        if (strncmp(line, "#[rule", 6) == 0 || strncmp(line, "[rule", 5) == 0)
            break;
        /* "#key = value" (no space after '#') is a documented setting */
        if (line[0] == '#' && line[1] != ' ' && line[1] != '\n' && strchr(line, '=')) {
            fputs(line + 1, out);
            keys++;
        } else
            fputs(line, out);
    }
    fclose(f);
    fclose(out);
    struct config c, d;
    assert_int_equal(parse(text, &c), 0);
    assert_string_equal(captured, "");
    config_init_defaults(&d);
    char *pc = strip_comments(print_to_string(&c)), *pd = strip_comments(print_to_string(&d));
    assert_string_equal(pc, pd);
    /* every key config_print knows appears in the shipped file */
    unsigned printed = 0;
    for (char *s = pd; (s = strstr(s, " =")); s++)
        printed++;
    assert_int_equal(keys, printed);
    free(pc);
    free(pd);
    free(text);
    config_done(&c);
    config_done(&d);
}

/* The shipped config holds one rule; its example drop-in parses, with
 * turbo-bench's thread names. */
static void test_shipped_example_dropin(void **state)
{
    struct config *c = NULL;
    assert_int_equal(config_load(TS_SOURCE_DIR "/conf/turbosched.conf", TS_FIXTURES "/does-not-exist", &c), 0);
    /* one shipped rule: the daemon itself is jitter */
    assert_int_equal(c->n_rules, 1);
    assert_string_equal(c->rules[0].name, "turbosched-itself");
    assert_string_equal(c->rules[0].globs[RULE_COMM][0], "turboschedd");
    assert_null(c->rules[0].globs[RULE_COMM][1]);
    assert_int_equal(c->rules[0].class, CLASS_JITTER);
    config_destroy(c);
    FILE *f = fopen(TS_SOURCE_DIR "/conf/rules.d/50-turbo-bench.conf.example", "re");
    assert_non_null(f);
    char text[4096];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    struct config d;
    assert_int_equal(parse(text, &d), 0);
    assert_string_equal(captured, "");
    assert_int_equal(d.n_rules, 3);
    assert_string_equal(d.rules[0].globs[RULE_COMM][0], "tb-jitter");
    assert_int_equal(d.rules[0].class, CLASS_JITTER);
    assert_string_equal(d.rules[1].globs[RULE_COMM][0], "tb-intensive");
    assert_int_equal(d.rules[1].class, CLASS_INTENSIVE);
    config_done(&d);
}

/* ------------------------------------------------------------ good values */

static void test_values(void **state)
{
    struct config c;
    assert_int_equal(parse("[daemon]\n"
                           "tick_interval = 2s\n"
                           "mode = cgroup\n"
                           "dry_run = true\n"
                           "log_level = 7\n"
                           "netlink_rcvbuf = 1G\n"
                           "nice = 19\n"
                           "realtime_priority = 99\n"
                           "max_tasks = 16\n"
                           "control_socket = /tmp/x.sock\n"
                           "control_group = wheel\n"
                           "state_file = /var/lib/x\n"
                           "cgroup_name = a/b\n"
                           "[capacity]\n"
                           "smt1 = 0.9\n"
                           "smt8 = 8\n"
                           "[packing]\n"
                           "busy_threshold = 100%\n"
                           "headroom = 0.5%\n"
                           "idle_threshold = 0%\n"
                           "hold_time = 1min\n"
                           "min_change_interval = 0\n"
                           "half_life = 32ms\n"
                           "domain = llc\n"
                           "[classify]\n"
                           "uclamp = yes\n"
                           "uclamp_threshold = 1023\n"
                           "uclamp_recheck_interval = 10s\n"
                           "default_class = jitter\n"
                           "unit_optin = off\n",
                           &c),
                     0);
    assert_string_equal(captured, "");
    expect_settings(&c, &(struct settings){.tick_ms = 2000,
                                           .mode = APPLY_CGROUP,
                                           .dry_run = true,
                                           .log_level = LOG_DEBUG,
                                           .rcvbuf_bytes = 1u << 30,
                                           .nice = 19,
                                           .realtime_priority = 99,
                                           .max_tasks = 16,
                                           .control_socket = "/tmp/x.sock",
                                           .control_group = "wheel",
                                           .state_file = "/var/lib/x",
                                           .cgroup_name = "a/b",
                                           .smt1_milli = 900,
                                           .smt2_milli = 1250,
                                           .smt4_milli = 1500, /* not given: the default */
                                           .smt8_milli = 8000,
                                           .busy_threshold_milli = 1000,
                                           .headroom_milli = 5,
                                           .idle_machine_milli = 0,
                                           .hold_ms = 60000,
                                           .min_change_ms = 0,
                                           .half_life_ms = 32,
                                           .domain = DOMAIN_LLC,
                                           .use_uclamp = true,
                                           .uclamp_threshold = 1023,
                                           .uclamp_recheck_ms = 10000,
                                           .default_class = CLASS_JITTER,
                                           .unit_optin = false});
    config_done(&c);

    /* empty control_group: back to root only; uclamp = auto/no */
    assert_int_equal(parse("[daemon]\ncontrol_group = adm\ncontrol_group =\n[classify]\nuclamp = no\n", &c), 0);
    assert_null(c.control_group);
    assert_false(c.use_uclamp);
    config_done(&c);
    assert_int_equal(parse("[classify]\nuclamp = auto\n[packing]\ndomain = numa\n", &c), 0);
    assert_true(c.use_uclamp);
    assert_int_equal(c.policy.domain, DOMAIN_NUMA);
    config_done(&c);
}

static void test_rules_parsed(void **state)
{
    struct config c;
    assert_int_equal(parse("; comment\n"
                           "# comment\n"
                           "[rule first]\n"
                           "comm = a b*  c?\n"
                           "   d     ; indented: continues comm\n"
                           "cmdline = \"python3 *worker.py*\" \"\" x?y\n"
                           "exe: /usr/bin/*\n"
                           "class = jitter ; inline comment\n"
                           "\n"
                           "[ rule   second ]\n"
                           "user = root\n"
                           "cgroup = /a/* /b\n"
                           "unit = *.service\n"
                           "class = ignore\n"
                           "cgroup_mode = yes\n",
                           &c),
                     0);
    assert_string_equal(captured, "");
    assert_int_equal(c.n_rules, 2);
    const struct rule *r = &c.rules[0];
    assert_string_equal(r->name, "first");
    assert_string_equal(r->file, "t.conf");
    assert_int_equal(r->line, 3);
    assert_int_equal(r->class, CLASS_JITTER);
    assert_false(r->cgroup_mode);
    const char *comm[] = {"a", "b*", "c?", "d", NULL};
    for (int i = 0; comm[i]; i++)
        assert_string_equal(r->globs[RULE_COMM][i], comm[i]);
    assert_null(r->globs[RULE_COMM][4]);
    assert_string_equal(r->globs[RULE_CMDLINE][0], "python3 *worker.py*");
    assert_string_equal(r->globs[RULE_CMDLINE][1], "");
    assert_string_equal(r->globs[RULE_CMDLINE][2], "x?y");
    assert_null(r->globs[RULE_CMDLINE][3]);
    assert_string_equal(r->globs[RULE_EXE][0], "/usr/bin/*");
    assert_null(r->globs[RULE_USER]);
    r = &c.rules[1];
    assert_string_equal(r->name, "second");
    assert_int_equal(r->line, 10);
    assert_int_equal(r->class, CLASS_IGNORE);
    assert_true(r->cgroup_mode);
    assert_string_equal(r->globs[RULE_USER][0], "root");
    assert_string_equal(r->globs[RULE_CGROUP][1], "/b");
    assert_string_equal(r->globs[RULE_UNIT][0], "*.service");
    assert_null(r->globs[RULE_COMM]);
    config_done(&c);
}

/* ---------------------------------------------------------------- errors */

static const struct {
    const char *text;
    const char *messages;
} bad[] = {
    {"[daemon]\nprioity = 3\n", "<3>t.conf:2: unknown key 'prioity' in [daemon]\n"},
    {"[daemons]\ntick_interval = 1s\n", "<3>t.conf:1: unknown section [daemons]\n"},
    {"tick_interval = 1s\n", "<3>t.conf:1: key 'tick_interval' outside of any section\n"},
    {"[daemon\n", "<3>t.conf:1: section header without ']'\n"},
    {"[daemon] x\n", "<3>t.conf:1: unexpected text after section header\n"},
    {"[daemon]\njust words\n", "<3>t.conf:2: expected 'key = value', '[section]' or a comment\n"},
    {"[daemon]\ntick_interval = fast\n",
     "<3>t.conf:2: bad value 'fast' for 'tick_interval': expected a duration such as 250ms, 2s or 1min\n"},
    {"[daemon]\ntick_interval = 5ms\n",
     "<3>t.conf:2: bad value '5ms' for 'tick_interval': must be between 10ms and 1min\n"},
    {"[daemon]\nmode = both\n", "<3>t.conf:2: bad value 'both' for 'mode': expected affinity or cgroup\n"},
    {"[packing]\njitter_slice = 50us\n",
     "<3>t.conf:2: bad value '50us' for 'jitter_slice': must be between 100us and 100ms\n"},
    {"[packing]\n\njitter_slice = 101ms\n",
     "<3>t.conf:3: bad value '101ms' for 'jitter_slice': must be between 100us and 100ms\n"},
    {"[packing]\nmax_run_delay = 5us\n",
     "<3>t.conf:2: bad value '5us' for 'max_run_delay': must be between 10us and 1s\n"},
    {"[packing]\nmax_run_delay = 2s\n",
     "<3>t.conf:2: bad value '2s' for 'max_run_delay': must be between 10us and 1s\n"},
    {"[packing]\nmax_run_delay = never\n",
     "<3>t.conf:2: bad value 'never' for 'max_run_delay': expected a duration such as 300us or 1ms, or off\n"},
    {"[packing]\njitter_slice = short\n",
     "<3>t.conf:2: bad value 'short' for 'jitter_slice': expected a duration such as 300us or 1ms, or off\n"},
    {"[daemon]\ndry_run = maybe\n", "<3>t.conf:2: bad value 'maybe' for 'dry_run': expected yes or no\n"},
    {"[daemon]\nlog_level = loud\n",
     "<3>t.conf:2: bad value 'loud' for 'log_level': expected err, warning, notice, info or debug\n"},
    {"[daemon]\nnetlink_rcvbuf = 1K\n",
     "<3>t.conf:2: bad value '1K' for 'netlink_rcvbuf': must be between 4K and 1G\n"},
    {"[daemon]\nnetlink_rcvbuf = lots\n",
     "<3>t.conf:2: bad value 'lots' for 'netlink_rcvbuf': expected a size such as 16M\n"},
    {"[daemon]\nnice = -21\n", "<3>t.conf:2: bad value '-21' for 'nice': must be between -20 and 19\n"},
    {"[daemon]\nnice = 20\n", "<3>t.conf:2: bad value '20' for 'nice': must be between -20 and 19\n"},
    {"[daemon]\nnice = -10x\n", "<3>t.conf:2: bad value '-10x' for 'nice': expected a nice value such as -10\n"},
    {"[daemon]\nrealtime_priority = 100\n",
     "<3>t.conf:2: bad value '100' for 'realtime_priority': must be between 0 and 99\n"},
    {"[daemon]\nrealtime_priority = -1\n",
     "<3>t.conf:2: bad value '-1' for 'realtime_priority': expected a whole number\n"},
    {"[daemon]\nmax_tasks = -1\n", "<3>t.conf:2: bad value '-1' for 'max_tasks': expected a whole number\n"},
    {"[daemon]\nmax_tasks = 15\n", "<3>t.conf:2: bad value '15' for 'max_tasks': must be between 16 and 4194304\n"},
    {"[daemon]\ncontrol_socket = run/x\n",
     "<3>t.conf:2: bad value 'run/x' for 'control_socket': expected an absolute path\n"},
    {"[daemon]\ncontrol_socket = /0123456789012345678901234567890123456789012345678901234567890123456789"
     "0123456789012345678901234567890123456789\n",
     "<3>t.conf:2: bad value '/0123456789012345678901234567890123456789012345678901234567890123456789"
     "0123456789012345678901234567890123456789' for 'control_socket': must be at most 107 characters long\n"},
    {"[daemon]\ncontrol_group = a b\n",
     "<3>t.conf:2: bad value 'a b' for 'control_group': expected a group name, or nothing for root only\n"},
    {"[daemon]\ncgroup_name = ../x\n", "<3>t.conf:2: bad value '../x' for 'cgroup_name': expected a relative cgroup "
                                       "path without '.' or '..' components\n"},
    {"[daemon]\ncgroup_name = /x\n",
     "<3>t.conf:2: bad value '/x' for 'cgroup_name': expected a relative cgroup path without '.' or '..' components\n"},
    {"[capacity]\nsmt2 = 2.5\n", "<3>t.conf:2: bad value '2.5' for 'smt2': must be above 0 and at most 2.0\n"},
    {"[capacity]\nsmt4 = 0\n", "<3>t.conf:2: bad value '0' for 'smt4': must be above 0 and at most 4.0\n"},
    {"[capacity]\nsmt4 = 1.5x\n", "<3>t.conf:2: bad value '1.5x' for 'smt4': expected a factor such as 1.25\n"},
    /* the frequency response: each key, then the table whole at its last key */
    {"[capacity]\nactivex = 3GHz\n", "<3>t.conf:2: [capacity] 'activex': expected active<N> or active<A>-<B>\n"},
    {"[capacity]\nactive1 = fast\n",
     "<3>t.conf:2: [capacity] 'fast': expected a frequency such as 3300, 3300MHz or 3.3GHz\n"},
    {"[capacity]\nactive2 = 3GHz\n", "<3>t.conf:2: [capacity] active keys: no frequency for 1 active cores\n"},
    {"[capacity]\nactive1 = 3GHz\nactive2 = 3.5GHz\n\n",
     "<3>t.conf:3: [capacity] active keys: 3500 MHz with 2 active cores is above 3000 MHz with 1\n"},
    {"[capacity]\nsmt9 = 2\n", "<3>t.conf:2: unknown key 'smt9' in [capacity]\n"},
    {"[packing]\nbusy_threshold = 12.5\n",
     "<3>t.conf:2: bad value '12.5' for 'busy_threshold': expected a percentage such as 12.5%\n"},
    {"[packing]\nbusy_threshold = 0%\n",
     "<3>t.conf:2: bad value '0%' for 'busy_threshold': must be between 0.1% and 100%\n"},
    {"[packing]\nidle_threshold = 100.1%\n",
     "<3>t.conf:2: bad value '100.1%' for 'idle_threshold': must be between 0% and 100%\n"},
    {"[packing]\nheadroom = 12.25%\n",
     "<3>t.conf:2: bad value '12.25%' for 'headroom': expected a percentage such as 12.5%\n"},
    {"[packing]\ndomain = die\n", "<3>t.conf:2: bad value 'die' for 'domain': expected package, llc or numa\n"},
    {"[packing]\nhalf_life = 0\n", "<3>t.conf:2: bad value '0' for 'half_life': must be between 1ms and 60min\n"},
    {"[classify]\nuclamp = sometimes\n", "<3>t.conf:2: bad value 'sometimes' for 'uclamp': expected auto, yes or no\n"},
    {"[classify]\nuclamp_threshold = 1024\n",
     "<3>t.conf:2: bad value '1024' for 'uclamp_threshold': must be between 0 and 1023\n"},
    {"[classify]\ndefault_class = unset\n",
     "<3>t.conf:2: bad value 'unset' for 'default_class': expected jitter, intensive or ignore\n"},
    {"[daemon]\ntick_interval = 1s\n  2s\n",
     "<3>t.conf:3: continuation line for 'tick_interval', which takes a single value\n"},
    /* rules */
    {"[rule a]\ncomm = x\nclass = jitter\n  [rule b]\n",
     "<3>t.conf:4: indented section header (an indented line continues 'class')\n"},
    {"[rule a]\nclass = jitter\ncomm = x\n  [rule b]\n",
     "<3>t.conf:4: indented section header (an indented line continues 'comm')\n"},
    {"[rule]\n", "<3>t.conf:1: rule section without a name (expected [rule NAME])\n"},
    {"[rule a b]\ncomm = x\nclass = jitter\n",
     "<3>t.conf:1: invalid rule name 'a b' (1-64 of A-Z a-z 0-9 - _ . @ : +)\n"},
    {"[rule a]\ncomm = x\n", "<3>t.conf:1: rule 'a' has no class (jitter, intensive or ignore)\n"},
    {"[rule a]\nclass = jitter\n",
     "<3>t.conf:1: rule 'a' has no match key (comm, exe, cmdline, cgroup, unit or user)\n"},
    {"[rule a]\n", "<3>t.conf:1: rule 'a' has no class (jitter, intensive or ignore)\n"
                   "<3>t.conf:1: rule 'a' has no match key (comm, exe, cmdline, cgroup, unit or user)\n"},
    {"[rule a]\ncomm =\nclass = jitter\n", "<3>t.conf:1: rule 'a': 'comm' has no glob\n"},
    {"[rule a]\ncomm = x\nclass = fast\n",
     "<3>t.conf:3: bad value 'fast' for 'class': expected jitter, intensive or ignore\n"},
    /* a rule whose only key is broken: that error alone */
    {"[rule a]\ncomm = \"x\nclass = jitter\n[rule b]\nclass = ignore\n",
     "<3>t.conf:2: bad value for 'comm': unterminated quote\n"
     "<3>t.conf:4: rule 'b' has no match key (comm, exe, cmdline, cgroup, unit or user)\n"},
    {"[rule a]\ncomm = x\nclass = jitter\ncgroup_mode = perhaps\n",
     "<3>t.conf:4: bad value 'perhaps' for 'cgroup_mode': expected yes or no\n"},
    {"[rule a]\ncomm = x\ncomm = y\nclass = jitter\n", "<3>t.conf:3: duplicate key 'comm' in rule 'a'\n"},
    {"[rule a]\ncomm = x\nclass = jitter\nprio = 3\n", "<3>t.conf:4: unknown key 'prio' in rule 'a'\n"},
    {"[rule a]\ncomm = \"x y\nclass = jitter\n", "<3>t.conf:2: bad value for 'comm': unterminated quote\n"},
    {"[rule a]\ncomm = \"x\"y\nclass = jitter\n", "<3>t.conf:2: bad value for 'comm': text after a closing quote\n"},
    {"[rule a]\ncomm = x\"y\nclass = jitter\n", "<3>t.conf:2: bad value for 'comm': '\"' inside a glob\n"},
    {"[rule a]\ncomm = x\nclass = jitter\n  intensive\n",
     "<3>t.conf:4: continuation line for 'class', which takes a single value\n"},
    {"[rule a]\ncomm = x\nclass = jitter\n[rule a]\nexe = y\nclass = ignore\n",
     "<3>t.conf:4: duplicate rule 'a' (first defined at t.conf:1)\n"},
    /* behaviour keys */
    {"[classify]\nbehaviour = perhaps\n", "<3>t.conf:2: bad value 'perhaps' for 'behaviour': expected yes or no\n"},
    {"[classify]\nbehaviour_window = 500ms\n",
     "<3>t.conf:2: bad value '500ms' for 'behaviour_window': must be between 1s and 60min\n"},
    {"[classify]\nbehaviour_jitter_max_util = 0%\n",
     "<3>t.conf:2: bad value '0%' for 'behaviour_jitter_max_util': must be between 0.1% and 100%\n"},
    {"[classify]\nbehaviour_jitter_max_run = 2s\n",
     "<3>t.conf:2: bad value '2s' for 'behaviour_jitter_max_run': must be between 1us and 1s\n"},
    {"[classify]\nbehaviour_jitter_max_run = fast\n",
     "<3>t.conf:2: bad value 'fast' for 'behaviour_jitter_max_run': expected a duration such as 500us, 1ms or 0.5ms\n"},
    {"[classify]\nbehaviour_jitter_min_wakeups = 0\n",
     "<3>t.conf:2: bad value '0' for 'behaviour_jitter_min_wakeups': must be between 1 and 1000000\n"},
    {"[classify]\nbehaviour_cooldown = 2d\n",
     "<3>t.conf:2: bad value '2d' for 'behaviour_cooldown': expected a duration such as 250ms, 2s or 1min\n"},
    /* across keys: reported where the key at fault was set */
    {"[classify]\nbehaviour_intensive_min_util = 4%\n",
     "<3>t.conf:2: behaviour_intensive_min_util: must be above behaviour_jitter_max_util\n"},
    {"[classify]\nbehaviour_jitter_max_util = 60%\n\n",
     "<3>t.conf:2: behaviour_intensive_min_util: must be above behaviour_jitter_max_util\n"},
};

/* The behaviour keys: parsed, printed back, and the defaults. */
static void test_behaviour_keys(void **state)
{
    struct config c;
    assert_int_equal(parse("[classify]\nbehaviour = no\nbehaviour_window = 2s\nbehaviour_jitter_max_util = 2.5%\n"
                           "behaviour_jitter_max_run = 500us\nbehaviour_jitter_min_wakeups = 20\n"
                           "behaviour_intensive_min_util = 40%\nbehaviour_cooldown = 30s\n",
                           &c),
                     0);
    assert_string_equal(captured, "");
    assert_false(c.behaviour.enabled);
    assert_int_equal(c.behaviour.window_ms, 2000);
    assert_int_equal(c.behaviour.jitter_max_util_milli, 25);
    assert_int_equal(c.behaviour.jitter_max_run_us, 500);
    assert_int_equal(c.behaviour.jitter_min_wakeups_per_s, 20);
    assert_int_equal(c.behaviour.intensive_min_util_milli, 400);
    assert_int_equal(c.behaviour.cooldown_ms, 30000);
    char *out = print_to_string(&c);
    assert_non_null(strstr(out, "behaviour = no\n"));
    assert_non_null(strstr(out, "behaviour_jitter_max_run = 500us\n"));
    assert_int_equal(config_check_print(&c), 0);
    free(out);
    config_done(&c);
    /* the defaults: on, and a daemon that wakes once a second counts */
    config_init_defaults(&c);
    assert_true(c.behaviour.enabled);
    assert_int_equal(c.behaviour.jitter_min_wakeups_per_s, 1);
    assert_int_equal(c.behaviour.jitter_max_run_us, 1000);
    config_done(&c);
}

struct duration_case {
    const char *value;
    unsigned us;
    const char *printed;
};

/* A duration key of section: its default (in µs), and each value parses
 * without a message, lands in the field (an unsigned in µs, or with ns a
 * uint64_t in ns) and prints back as the canonical text, which parses
 * again. */
static void check_duration(const char *section, const char *key, size_t offset, bool ns, unsigned default_us,
                           const struct duration_case *cases, size_t n)
{
    struct config c;
    config_init_defaults(&c);
    const char *dflt = (const char *)&c + offset;
    if (ns)
        assert_int_equal(*(const uint64_t *)dflt, (uint64_t)default_us * 1000);
    else
        assert_int_equal(*(const unsigned *)dflt, default_us);
    config_done(&c);
    for (size_t i = 0; i < n; i++) {
        char text[96], want[64];
        print_message("%s = %s\n", key, cases[i].value);
        snprintf(text, sizeof text, "[%s]\n%s = %s\n", section, key, cases[i].value);
        assert_int_equal(parse(text, &c), 0);
        assert_string_equal(captured, "");
        const char *field = (const char *)&c + offset;
        if (ns)
            assert_int_equal(*(const uint64_t *)field, (uint64_t)cases[i].us * 1000);
        else
            assert_int_equal(*(const unsigned *)field, cases[i].us);
        char *out = print_to_string(&c);
        snprintf(want, sizeof want, "\n%s = %s\n", key, cases[i].printed);
        assert_non_null(strstr(out, want));
        assert_int_equal(config_check_print(&c), 0);
        free(out);
        config_done(&c);
    }
}

static void test_jitter_slice(void **state)
{
    (void)state;
    static const struct duration_case ok[] = {
        {"off", 0, "off"},    {"100us", 100, "100us"},    {"0.5ms", 500, "500us"},
        {"1ms", 1000, "1ms"}, {"100ms", 100000, "100ms"}, {"250", 250, "250us"},
    };
    check_duration("packing", "jitter_slice", offsetof(struct config, policy.jitter_slice_ns), true, 300, ok,
                   sizeof ok / sizeof ok[0]);
}

/* [capacity] active<N>: the chip's frequency response, absent by default,
 * parsed in any unit and printed back in runs of equal frequency. */
static void test_frequency_table(void **state)
{
    (void)state;
    struct config c;
    config_init_defaults(&c);
    assert_int_equal(c.freq.n_cores, 0);
    char *none = print_to_string(&c);
    assert_null(strstr(none, "active"));
    free(none);
    config_done(&c);

    assert_int_equal(parse("[capacity]\nactive1 = 4GHz\nactive2-3 = 3600MHz\nactive4 = 3300\n", &c), 0);
    assert_string_equal(captured, "");
    assert_int_equal(c.freq.n_cores, 4);
    assert_int_equal(c.freq.mhz[1], 4000);
    assert_int_equal(c.freq.mhz[2], 3600);
    assert_int_equal(c.freq.mhz[3], 3600);
    assert_int_equal(c.freq.mhz[4], 3300);
    char *printed = print_to_string(&c);
    assert_non_null(strstr(printed, "\nactive1 = 4000MHz\nactive2-3 = 3600MHz\nactive4 = 3300MHz\n"));
    /* what is printed parses to the same table */
    struct config d;
    assert_int_equal(parse(printed, &d), 0);
    assert_memory_equal(&c.freq, &d.freq, sizeof c.freq);
    free(printed);
    config_done(&c);
    config_done(&d);
}

static void test_max_run_delay(void **state)
{
    (void)state;
    static const struct duration_case ok[] = {
        {"off", 0, "off"}, {"10us", 10, "10us"}, {"0.5ms", 500, "500us"}, {"2ms", 2000, "2ms"}, {"1s", 1000000, "1s"},
    };
    check_duration("packing", "max_run_delay", offsetof(struct config, policy.max_run_delay_ns), true, 1000, ok,
                   sizeof ok / sizeof ok[0]);
}

/* [capacity] frequency_reevaluation: off (not counted) by default. */
static void test_frequency_reevaluation(void **state)
{
    (void)state;
    struct config c;
    static const struct duration_case ok[] = {
        {"off", 0, "off"},    {"500us", 500, "500us"}, {"0.5ms", 500, "500us"},
        {"1ms", 1000, "1ms"}, {"1s", 1000000, "1s"},
    };
    check_duration("capacity", "frequency_reevaluation", offsetof(struct config, policy.freq_reeval_us), false, 0, ok,
                   sizeof ok / sizeof ok[0]);
    assert_int_equal(parse("[capacity]\nfrequency_reevaluation = 2s\n", &c), -EINVAL);
    assert_string_equal(captured,
                        "<3>t.conf:2: bad value '2s' for 'frequency_reevaluation': must be between 1us and 1s\n");
    config_done(&c);
}

static void test_errors(void **state)
{
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct config c;
        print_message("case %zu\n", i);
        assert_int_equal(parse(bad[i].text, &c), -EINVAL);
        assert_string_equal(captured, bad[i].messages);
        config_done(&c);
    }
}

/* Every error of a file is reported, in line order, not only the first;
 * keys of a broken section are not reported a second time. */
static void test_all_errors_reported(void **state)
{
    struct config c;
    assert_int_equal(parse("[daemon]\n"
                           "bogus = 1\n"
                           "tick_interval = fast\n"
                           "[nope]\n"
                           "whatever = 1\n"
                           "[rule good]\n"
                           "comm = x\n"
                           "class = jitter\n"
                           "[rule bad]\n"
                           "comm = y\n"
                           "[packing]\n"
                           "domain = die\n",
                           &c),
                     -EINVAL);
    assert_string_equal(
        captured, "<3>t.conf:2: unknown key 'bogus' in [daemon]\n"
                  "<3>t.conf:3: bad value 'fast' for 'tick_interval': expected a duration such as 250ms, 2s or 1min\n"
                  "<3>t.conf:4: unknown section [nope]\n"
                  "<3>t.conf:12: bad value 'die' for 'domain': expected package, llc or numa\n"
                  "<3>t.conf:9: rule 'bad' has no class (jitter, intensive or ignore)\n");
    config_done(&c);
}

/* inih reads lines into a fixed buffer and would split a long one. */
static void test_long_line(void **state)
{
    size_t max = config_max_line();
    assert_true(max >= 100);
    char *text = malloc(max + 64);
    assert_non_null(text);
    struct config c;

    /* exactly the limit: fine */
    int n = snprintf(text, max + 64, "[rule a]\nclass = jitter\ncomm = ");
    size_t line = strlen("comm = ");
    memset(text + n, 'x', max - line);
    text[n + max - line] = '\0';
    assert_int_equal(parse(text, &c), 0);
    assert_string_equal(captured, "");
    assert_int_equal(strlen(c.rules[0].globs[RULE_COMM][0]), max - line);
    config_done(&c);

    /* one more: reported, and the rest of the line does not leak into the next */
    n = snprintf(text, max + 64, "[rule a]\nclass = jitter\ncomm = ");
    memset(text + n, 'x', max - line + 1);
    strcpy(text + n + max - line + 1, "\nexe = y\n");
    assert_int_equal(parse(text, &c), -EINVAL);
    char want[128];
    snprintf(want, sizeof want, "<3>t.conf:3: line too long (%zu characters, at most %zu)\n", max + 1, max);
    assert_string_equal(captured, want);
    assert_null(c.rules[0].globs[RULE_COMM]);
    assert_string_equal(c.rules[0].globs[RULE_EXE][0], "y");
    config_done(&c);

    /* the rule's only match key too long: one error, not also "no match key" */
    n = snprintf(text, max + 64, "[rule a]\nclass = jitter\ncomm = ");
    memset(text + n, 'x', max - line + 1);
    text[n + max - line + 1] = '\0';
    assert_int_equal(parse(text, &c), -EINVAL);
    assert_string_equal(captured, want);
    config_done(&c);
    free(text);
}

/* An indented key right after a section header is a key, not a
 * continuation of the previous section's last key (inih and we agree). */
static void test_indented_key_after_section(void **state)
{
    struct config c;
    assert_int_equal(parse("[rule a]\ncomm = x\nclass = jitter\n[rule b]\n  exe = y\nclass = ignore\n", &c), 0);
    assert_string_equal(captured, "");
    assert_int_equal(c.n_rules, 2);
    assert_string_equal(c.rules[1].globs[RULE_EXE][0], "y");
    assert_int_equal(c.rules[1].class, CLASS_IGNORE);
    assert_null(c.rules[0].globs[RULE_COMM][1]);
    config_done(&c);
    /* but an indented line after a key continues it */
    assert_int_equal(parse("[rule a]\nclass = jitter\ncomm = x\n  exe = y\n", &c), 0);
    assert_string_equal(c.rules[0].globs[RULE_COMM][1], "exe");
    assert_string_equal(c.rules[0].globs[RULE_COMM][3], "y");
    assert_null(c.rules[0].globs[RULE_EXE]);
    config_done(&c);
}

static void test_bom_crlf(void **state)
{
    struct config c;
    assert_int_equal(parse("\xef\xbb\xbf[rule r]\r\ncomm = a\r\n  b\r\nclass = jitter\r\n", &c), 0);
    assert_string_equal(captured, "");
    assert_string_equal(c.rules[0].globs[RULE_COMM][0], "a");
    assert_string_equal(c.rules[0].globs[RULE_COMM][1], "b");
    config_done(&c);
}

/* ----------------------------------------------------------------- files */

static void test_load_good(void **state)
{
    struct config *c = NULL;
    assert_int_equal(config_load(FIX "/good/turbosched.conf", NULL, &c), 0);
    assert_string_equal(captured, "");
    assert_string_equal(c->path, FIX "/good/turbosched.conf");
    /* main file first, then drop-ins in lexical order; README and
     * *.conf.disabled are not read */
    assert_int_equal(c->n_rules, 4);
    assert_string_equal(c->rules[0].name, "monitoring-agents");
    assert_string_equal(c->rules[1].name, "workers");
    assert_string_equal(c->rules[2].name, "early");
    assert_string_equal(c->rules[2].file, FIX "/good/rules.d/10-early.conf");
    assert_int_equal(c->rules[2].line, 1);
    assert_string_equal(c->rules[3].name, "late");
    /* a drop-in overrides the main file */
    assert_int_equal(c->tick_ms, 1000);
    assert_int_equal(c->mode, APPLY_CGROUP);
    /* the continuation line's inline comment is not a glob */
    assert_string_equal(c->rules[0].globs[RULE_COMM][2], "collectd");
    assert_null(c->rules[0].globs[RULE_COMM][3]);

    /* print, parse the output, print again: the same (rules keep their order) */
    char *once = print_to_string(c);
    assert_non_null(strstr(once, "# " FIX "/good/turbosched.conf:34\n[rule monitoring-agents]\n"
                                 "comm = telegraf node_exporter collectd\nuser = root nobody\nclass = jitter\n"));
    assert_non_null(strstr(once, "[rule workers]\ncmdline = \"python3 *worker.py*\"\ncgroup = /system.slice/*\n"
                                 "class = ignore\ncgroup_mode = yes\n"));
    assert_non_null(strstr(once, "[daemon]\ntick_interval = 1s\nmode = cgroup\ndry_run = yes\nlog_level = debug\n"
                                 "netlink_rcvbuf = 8M\nnice = -10\nrealtime_priority = 1\nmax_tasks = "
                                 "5000\ncontrol_socket = /run/ts-test/control\n"
                                 "control_group = adm\nstate_file = /run/ts-test/state.json\n"
                                 "cgroup_name = turbosched/jitter\n"));
    assert_non_null(strstr(once, "[packing]\nbusy_threshold = 15%\nheadroom = 2.5%\nidle_threshold = 0%\n"
                                 "hold_time = 0\nmin_change_interval = 1min\nhalf_life = 2s\ndomain = numa\n"));
    assert_non_null(strstr(once, "smt2 = 1.2\nsmt3 = 1.375\nsmt4 = 1.6\n"));
    struct config again;
    assert_int_equal(parse(once, &again), 0);
    assert_string_equal(captured, "");
    char *twice = print_to_string(&again);
    assert_string_equal(strip_comments(once), strip_comments(twice));
    free(once);
    free(twice);
    config_done(&again);
    config_destroy(c);
}

static void test_load_explicit_dropin_dir(void **state)
{
    struct config *c = NULL;
    /* no drop-ins: a missing directory is fine */
    assert_int_equal(config_load(FIX "/good/turbosched.conf", FIX "/does-not-exist", &c), 0);
    assert_string_equal(captured, "");
    assert_int_equal(c->n_rules, 2);
    assert_int_equal(c->tick_ms, 500);
    config_destroy(c);
}

static void test_duplicate_across_files(void **state)
{
    struct config *c = NULL;
    assert_int_equal(config_load(FIX "/dup/turbosched.conf", NULL, &c), -EINVAL);
    assert_null(c);
    assert_string_equal(captured, "<3>" FIX "/dup/rules.d/50-dup.conf:4: duplicate rule 'agents' (first defined at " FIX
                                  "/dup/turbosched.conf:1)\n");
}

static void test_errors_in_every_file(void **state)
{
    struct config *c = NULL;
    assert_int_equal(config_load(FIX "/badfiles/turbosched.conf", NULL, &c), -EINVAL);
    assert_null(c);
    assert_string_equal(
        captured, "<3>" FIX "/badfiles/turbosched.conf:2: bad value 'fast' for 'mode': expected affinity or cgroup\n"
                  "<3>" FIX "/badfiles/rules.d/10-bad.conf:1: rule 'x' has no match key (comm, exe, cmdline, "
                  "cgroup, unit or user)\n"
                  "<3>" FIX "/badfiles/rules.d/30-dir.conf: cannot read: Is a directory\n");
}

static void test_missing_file(void **state)
{
    struct config *c = NULL;
    assert_int_equal(config_load(FIX "/missing.conf", NULL, &c), -ENOENT);
    assert_null(c);
    assert_string_equal(captured, "<3>" FIX "/missing.conf: cannot read: No such file or directory\n");
}

static void test_names(void **state)
{
    assert_string_equal(task_class_to_string(CLASS_JITTER), "jitter");
    assert_string_equal(task_class_to_string(CLASS_INTENSIVE), "intensive");
    assert_string_equal(task_class_to_string(CLASS_IGNORE), "ignore");
    assert_string_equal(task_class_to_string(CLASS_UNSET), "unset");
    assert_int_equal(task_class_from_string("jitter"), CLASS_JITTER);
    assert_int_equal(task_class_from_string("intensive"), CLASS_INTENSIVE);
    assert_int_equal(task_class_from_string("ignore"), CLASS_IGNORE);
    assert_int_equal(task_class_from_string("unset"), -EINVAL);
    assert_int_equal(task_class_from_string("Jitter"), -EINVAL);
    assert_int_equal(task_class_from_string(NULL), -EINVAL);
    const char *src[] = {"none", "slice", "unit", "rule", "uclamp", "default"};
    for (int s = SOURCE_NONE; s <= SOURCE_DEFAULT; s++)
        assert_string_equal(class_source_to_string((enum class_source)s), src[s]);
    const char *keys[] = {"comm", "exe", "cmdline", "cgroup", "unit", "user"};
    for (int k = 0; k < _RULE_KEY_MAX; k++) {
        assert_string_equal(rule_key_to_string((enum rule_key)k), keys[k]);
        assert_int_equal(rule_key_from_string(keys[k]), k);
    }
    assert_int_equal(rule_key_from_string("class"), _RULE_KEY_MAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_default, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shipped_conf_documents_defaults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_jitter_slice, setup, teardown),
        cmocka_unit_test_setup_teardown(test_frequency_table, setup, teardown),
        cmocka_unit_test_setup_teardown(test_max_run_delay, setup, teardown),
        cmocka_unit_test_setup_teardown(test_frequency_reevaluation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shipped_example_dropin, setup, teardown),
        cmocka_unit_test_setup_teardown(test_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rules_parsed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_behaviour_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_all_errors_reported, setup, teardown),
        cmocka_unit_test_setup_teardown(test_long_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_indented_key_after_section, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bom_crlf, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_good, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_explicit_dropin_dir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duplicate_across_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors_in_every_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_names, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
