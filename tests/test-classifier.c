/* The classifier against a fixture /proc, an injected uclamp reader and an
 * injected unit lookup: precedence slice > unit > rule > uclamp > default,
 * uclamp without kernel support never making jitter, the unit cache and its
 * flushes, X-TurboSched= parsing, explanations, and tasks that are gone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "classifier.h"
#include "log.h"
#include "procinfo.h"

#define ROOT TS_FIXTURES "/proc-classify"
#define UNITDIR ROOT "/etc/systemd/system"

static char captured[8192];

static void sink(int level, const char *msg, void *userdata)
{
    size_t n = strlen(captured);
    snprintf(captured + n, sizeof captured - n, "<%d>%s\n", level, msg);
}

/* ---------------------------------------------------------- injections */

static unsigned n_lookups;

static char **strv(const char *a, const char *b)
{
    char **l = calloc(3, sizeof *l);
    l[0] = a ? strdup(a) : NULL;
    l[1] = b ? strdup(b) : NULL;
    return l;
}

static int fake_lookup(void *userdata, const char *unit, char **fragment, char ***dropins)
{
    n_lookups++;
    if (strcmp(unit, "nginx.service") == 0) {
        *fragment = strdup(UNITDIR "/nginx.service");
        *dropins = strv(UNITDIR "/nginx.service.d/10-turbosched.conf", UNITDIR "/nginx.service.d/20-override.conf");
        return 0;
    }
    if (strcmp(unit, "cron.service") == 0) {
        *fragment = strdup(UNITDIR "/cron.service");
        *dropins = strv(UNITDIR "/cron.service.d/10-bad.conf", NULL);
        return 0;
    }
    if (strcmp(unit, "telegraf.service") == 0) {
        /* listed by systemd but gone from disk */
        *fragment = strdup(UNITDIR "/telegraf.service");
        *dropins = NULL;
        return 0;
    }
    return -ENOENT;
}

struct uclamp_value {
    pid_t tid;
    unsigned util_max;
};
static struct uclamp_value uclamp_values[8];
static unsigned n_uclamp_reads;

static int fake_uclamp(pid_t tid, unsigned *util_max, void *userdata)
{
    n_uclamp_reads++;
    for (size_t i = 0; i < sizeof uclamp_values / sizeof uclamp_values[0]; i++)
        if (uclamp_values[i].tid == tid) {
            *util_max = uclamp_values[i].util_max;
            return 0;
        }
    return -ESRCH;
}

/* What a kernel without CONFIG_UCLAMP_TASK reports for every task. */
static int zero_uclamp(pid_t tid, unsigned *util_max, void *userdata)
{
    *util_max = 0;
    return 0;
}

/* -------------------------------------------------------------- helpers */

struct fixture {
    struct config cfg;
    struct classifier *c;
};

static struct fixture fx;

static void setup_with(const char *conf, bool with_units, bool uclamp_supported)
{
    captured[0] = '\0';
    log_set_sink(sink, NULL);
    config_init_defaults(&fx.cfg);
    assert_int_equal(config_load_string(conf, "c.conf", &fx.cfg), 0);
    assert_int_equal(classifier_new(&fx.cfg, ROOT, &fx.c), 0);
    if (with_units) {
        struct units *u;
        assert_int_equal(units_new_with_lookup(fake_lookup, NULL, &u), 0);
        classifier_set_units(fx.c, u);
    }
    classifier_set_uclamp_ops(fx.c, uclamp_supported, fake_uclamp, NULL);
    n_lookups = 0;
    n_uclamp_reads = 0;
}

static int teardown(void **state)
{
    classifier_free(fx.c);
    fx.c = NULL;
    config_free(&fx.cfg);
    log_set_sink(NULL, NULL);
    memset(uclamp_values, 0, sizeof uclamp_values);
    return 0;
}

static struct task task(pid_t pid, pid_t tid, const char *comm)
{
    struct task t = {.pid = pid, .tid = tid, .rule = -1};
    if (comm)
        snprintf(t.comm, sizeof t.comm, "%s", comm);
    return t;
}

static void expect(pid_t pid, pid_t tid, enum task_class cls, enum class_source src, int rule)
{
    struct task t = task(pid, tid, NULL);
    assert_int_equal(classifier_classify(fx.c, &t), cls == CLASS_UNSET ? 0 : 1);
    assert_int_equal(t.class, cls);
    assert_int_equal(t.source, src);
    assert_int_equal(t.rule, rule);
}

static const char *explain(pid_t pid, pid_t tid)
{
    static char buf[1024];
    struct task t = task(pid, tid, NULL);
    assert_true(classifier_classify(fx.c, &t) >= 0);
    int n = classifier_explain(fx.c, &t, buf, sizeof buf);
    assert_int_equal(n, (int)strlen(buf));
    return buf;
}

/* ---------------------------------------------------------------- tests */

static const char *const precedence_conf = "[rule agents]\n"
                                           "comm = telegraf logrotate\n"
                                           "class = ignore\n"
                                           "[rule web]\n"
                                           "exe = /usr/sbin/nginx\n"
                                           "class = intensive\n"
                                           "[rule cron]\n"
                                           "unit = cron.service\n"
                                           "class = intensive\n";

static void test_precedence(void **state)
{
    setup_with(precedence_conf, true, true);
    uclamp_values[0] = (struct uclamp_value){300, 0};
    uclamp_values[1] = (struct uclamp_value){700, 1024};
    uclamp_values[2] = (struct uclamp_value){100, 0};
    uclamp_values[3] = (struct uclamp_value){400, 204};
    uclamp_values[4] = (struct uclamp_value){500, 205};
    uclamp_values[5] = (struct uclamp_value){501, 205};
    /* 1. the jitter slice beats a rule that says ignore (v2 and v1 name=systemd) */
    expect(200, 200, CLASS_JITTER, SOURCE_SLICE, -1);
    expect(800, 800, CLASS_JITTER, SOURCE_SLICE, -1);
    /* 2. X-TurboSched= of nginx.service (last drop-in: jitter) beats rule 'web' and uclamp */
    expect(100, 100, CLASS_JITTER, SOURCE_UNIT, -1);
    /* 3. cron.service has only an invalid X-TurboSched=: rule 'cron' decides */
    expect(600, 600, CLASS_INTENSIVE, SOURCE_RULE, 2);
    /* 4. no rule: uclamp util_max at or below the threshold (204) is jitter */
    expect(300, 300, CLASS_JITTER, SOURCE_UCLAMP, -1);
    expect(400, 400, CLASS_JITTER, SOURCE_UCLAMP, -1);
    /* 5. above it: the default class */
    expect(500, 501, CLASS_IGNORE, SOURCE_DEFAULT, -1);
    expect(700, 700, CLASS_IGNORE, SOURCE_DEFAULT, -1);
    assert_non_null(strstr(captured, "<4>cron.service: " UNITDIR "/cron.service.d/10-bad.conf: X-TurboSched=bogus is "
                                     "not jitter, intensive or ignore, ignoring\n"));
    teardown(state);

    /* unit opt-in off: neither the slice nor X-TurboSched= count */
    setup_with("[classify]\nunit_optin = no\ndefault_class = intensive\n"
               "[rule agents]\ncomm = telegraf\nclass = ignore\n",
               true, false);
    assert_false(classifier_unit_optin_active(fx.c));
    expect(200, 200, CLASS_IGNORE, SOURCE_RULE, 0);
    expect(800, 800, CLASS_INTENSIVE, SOURCE_DEFAULT, -1);
    expect(100, 100, CLASS_INTENSIVE, SOURCE_DEFAULT, -1);
    assert_int_equal(n_lookups, 0);
}

/* Without CONFIG_UCLAMP_TASK util_max reads 0 for every task: that must
 * never make anything jitter. */
static void test_uclamp_unsupported_never_jitter(void **state)
{
    setup_with("[classify]\nuclamp = yes\n", false, false);
    classifier_set_uclamp_ops(fx.c, false, zero_uclamp, NULL);
    for (pid_t pid = 100; pid <= 800; pid += 100) {
        struct task t = task(pid, pid, NULL);
        if (pid == 200 || pid == 800)
            continue;   /* jitter slice */
        assert_int_equal(classifier_classify(fx.c, &t), 1);
        assert_int_equal(t.class, CLASS_IGNORE);
        assert_int_equal(t.source, SOURCE_DEFAULT);
    }
    assert_int_equal(n_uclamp_reads, 0);
    /* the recheck path neither */
    struct task t = task(300, 300, NULL);
    assert_int_equal(classifier_classify(fx.c, &t), 1);
    assert_int_equal(classifier_recheck_uclamp(fx.c, &t), 0);
    assert_int_equal(t.class, CLASS_IGNORE);
    teardown(state);

    /* the fixture root has no sched_util_clamp_max: detected as unsupported */
    config_init_defaults(&fx.cfg);
    captured[0] = '\0';
    log_set_sink(sink, NULL);
    assert_int_equal(classifier_new(&fx.cfg, ROOT, &fx.c), 0);
    assert_false(classifier_uclamp_supported(fx.c));
    assert_non_null(strstr(captured, "<6>uclamp: the kernel lacks CONFIG_UCLAMP_TASK"));
    classifier_free(fx.c);
    fx.c = NULL;
    assert_int_equal(classifier_new(&fx.cfg, TS_FIXTURES "/proc-classify-uclamp", &fx.c), 0);
    assert_true(classifier_uclamp_supported(fx.c));
    assert_true(uclamp_supported(TS_FIXTURES "/proc-classify-uclamp"));
    assert_false(uclamp_supported(ROOT));
}

/* The real kernel and the real sched_getattr on ourselves: whether or not
 * this kernel has uclamp, an unclamped task is not jitter. */
static void test_live_self_not_jitter(void **state)
{
    config_init_defaults(&fx.cfg);
    log_set_sink(sink, NULL);
    assert_int_equal(classifier_new(&fx.cfg, NULL, &fx.c), 0);
    struct task t = task(getpid(), getpid(), NULL);
    assert_int_equal(classifier_classify(fx.c, &t), 1);
    assert_int_equal(t.class, CLASS_IGNORE);
    assert_true(t.source == SOURCE_DEFAULT || t.source == SOURCE_SLICE);
    unsigned util_max = 12345;
    assert_int_equal(uclamp_get_util_max(getpid(), &util_max), 0);
    if (uclamp_supported(NULL))
        assert_int_equal(util_max, UCLAMP_SCALE);
    else
        assert_int_equal(util_max, 0);  /* the kernel fact the detection guards against */
    assert_int_equal(uclamp_get_util_max(0x3fffffff, &util_max), -ESRCH);
}

static void test_uclamp_off_and_recheck(void **state)
{
    setup_with("[classify]\nuclamp = no\n", false, true);
    uclamp_values[0] = (struct uclamp_value){300, 0};
    expect(300, 300, CLASS_IGNORE, SOURCE_DEFAULT, -1);
    assert_int_equal(n_uclamp_reads, 0);
    teardown(state);

    setup_with("[classify]\nuclamp_threshold = 100\n[rule r]\ncomm = cron\nclass = intensive\n", false, true);
    uclamp_values[0] = (struct uclamp_value){300, 1024};
    uclamp_values[1] = (struct uclamp_value){600, 0};
    struct task t = task(300, 300, NULL);
    assert_int_equal(classifier_classify(fx.c, &t), 1);
    assert_int_equal(t.source, SOURCE_DEFAULT);
    /* util_max changes without any event: recheck picks it up */
    uclamp_values[0].util_max = 100;
    assert_int_equal(classifier_recheck_uclamp(fx.c, &t), 1);
    assert_int_equal(t.class, CLASS_JITTER);
    assert_int_equal(t.source, SOURCE_UCLAMP);
    assert_int_equal(classifier_recheck_uclamp(fx.c, &t), 0);
    uclamp_values[0].util_max = 101;
    assert_int_equal(classifier_recheck_uclamp(fx.c, &t), 1);
    assert_int_equal(t.class, CLASS_IGNORE);
    assert_int_equal(t.source, SOURCE_DEFAULT);
    /* a rule's decision is not touched by the recheck */
    struct task cron = task(600, 600, NULL);
    assert_int_equal(classifier_classify(fx.c, &cron), 1);
    assert_int_equal(cron.source, SOURCE_RULE);
    unsigned reads = n_uclamp_reads;
    assert_int_equal(classifier_recheck_uclamp(fx.c, &cron), 0);
    assert_int_equal(cron.class, CLASS_INTENSIVE);
    assert_int_equal(n_uclamp_reads, reads);
    /* gone during the recheck */
    t.tid = 301;
    assert_int_equal(classifier_recheck_uclamp(fx.c, &t), -ESRCH);
}

static void test_return_values(void **state)
{
    setup_with("[rule r]\ncomm = nginx*\nclass = jitter\n", false, false);
    struct task t = task(100, 100, NULL);
    assert_int_equal(classifier_classify(fx.c, &t), 1);
    assert_int_equal(classifier_classify(fx.c, &t), 0);
    assert_int_equal(t.class, CLASS_JITTER);
    assert_int_equal(t.rule, 0);
    /* the same class from another source is not a change */
    fx.cfg.default_class = CLASS_JITTER;
    fx.cfg.rules[0].globs[RULE_COMM][0][0] = 'X';
    classifier_set_config(fx.c, &fx.cfg);
    assert_int_equal(classifier_classify(fx.c, &t), 0);
    assert_int_equal(t.source, SOURCE_DEFAULT);
    assert_int_equal(t.rule, -1);

    /* gone: task untouched */
    struct task gone = task(999, 999, NULL);
    gone.class = CLASS_INTENSIVE;
    int r = classifier_classify(fx.c, &gone);
    assert_true(r == -ENOENT || r == -ESRCH);
    assert_int_equal(gone.class, CLASS_INTENSIVE);
    char buf[128];
    r = classifier_explain(fx.c, &gone, buf, sizeof buf);
    assert_true(r == -ENOENT || r == -ESRCH);
    /* process there, thread gone (comm is read per thread) */
    struct task thread_gone = task(100, 105, NULL);
    r = classifier_classify(fx.c, &thread_gone);
    assert_true(r == -ENOENT || r == -ESRCH);
}

/* comm is per thread; the task's own comm (from the proc connector) is
 * used when known, /proc/PID/task/TID/comm otherwise. */
static void test_threads_and_batch(void **state)
{
    setup_with("[rule cache]\ncomm = nginx-cache\nexe = /usr/sbin/nginx\nclass = jitter\n", false, false);
    for (int batch = 0; batch < 2; batch++) {
        if (batch)
            classifier_batch_begin(fx.c);
        struct task main_thread = task(100, 100, NULL), cache = task(100, 101, NULL);
        assert_int_equal(classifier_classify(fx.c, &main_thread), 1);
        assert_int_equal(classifier_classify(fx.c, &cache), 1);
        assert_int_equal(main_thread.class, CLASS_IGNORE);
        assert_int_equal(cache.class, CLASS_JITTER);
        /* a comm change reported by the kernel wins over the file */
        struct task renamed = task(100, 100, "nginx-cache");
        assert_int_equal(classifier_classify(fx.c, &renamed), 1);
        assert_int_equal(renamed.class, CLASS_JITTER);
        /* another process within the batch gets its own inputs */
        struct task other = task(300, 300, "nginx-cache");
        assert_int_equal(classifier_classify(fx.c, &other), 1);
        assert_int_equal(other.class, CLASS_IGNORE);
        if (batch)
            classifier_batch_end(fx.c);
    }
}

static void test_unit_cache(void **state)
{
    setup_with("", true, false);
    assert_true(classifier_unit_optin_active(fx.c));
    expect(100, 100, CLASS_JITTER, SOURCE_UNIT, -1);
    expect(100, 101, CLASS_JITTER, SOURCE_UNIT, -1);
    assert_int_equal(n_lookups, 1);
    /* a unit that systemd does not know is remembered as "nothing" too */
    expect(500, 501, CLASS_IGNORE, SOURCE_DEFAULT, -1);
    expect(500, 500, CLASS_IGNORE, SOURCE_DEFAULT, -1);
    assert_int_equal(n_lookups, 2);
    /* our reload flushes */
    classifier_set_config(fx.c, &fx.cfg);
    expect(100, 100, CLASS_JITTER, SOURCE_UNIT, -1);
    assert_int_equal(n_lookups, 3);
    teardown(state);

    /* the unit store on its own: precedence of fragment and drop-ins, origin, flush */
    struct units *u;
    assert_int_equal(units_new_with_lookup(fake_lookup, NULL, &u), 0);
    n_lookups = 0;
    enum task_class cls = CLASS_UNSET;
    const char *origin = NULL;
    assert_int_equal(units_get_class(u, "nginx.service", &cls, &origin), 1);
    assert_int_equal(cls, CLASS_JITTER);
    assert_string_equal(origin, UNITDIR "/nginx.service.d/20-override.conf");
    assert_int_equal(units_get_class(u, "nginx.service", &cls, NULL), 1);
    assert_int_equal(units_get_class(u, "telegraf.service", &cls, NULL), 0);
    assert_int_equal(units_get_class(u, "none.service", &cls, NULL), 0);
    unsigned long lookups, hits;
    units_stats(u, &lookups, &hits);
    assert_int_equal(lookups, 3);
    assert_int_equal(hits, 1);
    units_cache_flush(u);
    assert_int_equal(units_get_class(u, "nginx.service", &cls, NULL), 1);
    units_stats(u, &lookups, &hits);
    assert_int_equal(lookups, 4);
    units_free(u);
    units_free(NULL);
}

static void test_parse_x_turbosched(void **state)
{
    static const struct {
        const char *text;
        int ret;
        enum task_class cls;
    } cases[] = {
        {"[Service]\nX-TurboSched=jitter\n", 1, CLASS_JITTER},
        {"[Service]\nX-TurboSched = intensive \n", 1, CLASS_INTENSIVE},
        {"[Service]\nX-TurboSched=jitter\nX-TurboSched=ignore\n", 1, CLASS_IGNORE},
        {"[Service]\nX-TurboSched=jitter\nX-TurboSched=\n", 0, CLASS_UNSET},
        {"[Service]\nX-TurboSched=\nX-TurboSched=intensive\n", 1, CLASS_INTENSIVE},
        {"[Unit]\nX-TurboSched=jitter\n", 0, CLASS_UNSET},
        {"X-TurboSched=jitter\n", 0, CLASS_UNSET},
        {"[Service]\n#X-TurboSched=jitter\n; X-TurboSched=jitter\n", 0, CLASS_UNSET},
        {"[Service]\nX-TurboSchedX=jitter\nx-turbosched=jitter\n", 0, CLASS_UNSET},
        {"[Service]\nExecStart=/bin/true \\\n  X-TurboSched=jitter\n", 0, CLASS_UNSET},
        {"[Service]\nX-TurboSched=\\\njitter\n", 1, CLASS_JITTER},
        {"[Scope]\nX-TurboSched=jitter\n", 1, CLASS_JITTER},
        {"[Service]\nX-TurboSched=fast\n", -EINVAL, CLASS_UNSET},
        {"[Service]\r\nX-TurboSched=jitter\r\n", 1, CLASS_JITTER},
        {"", 0, CLASS_UNSET},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        enum task_class cls = CLASS_UNSET;
        print_message("case %zu\n", i);
        assert_int_equal(units_parse_x_turbosched(cases[i].text, &cls), cases[i].ret);
        assert_int_equal(cls, cases[i].cls);
    }
}

static void test_explain(void **state)
{
    setup_with(precedence_conf, true, true);
    uclamp_values[0] = (struct uclamp_value){300, 0};
    uclamp_values[1] = (struct uclamp_value){700, 1024};
    assert_string_equal(explain(200, 200), "in turbosched-jitter.slice as telegraf.service: jitter");
    assert_string_equal(explain(100, 100), "unit nginx.service sets X-TurboSched=jitter in " UNITDIR
                                           "/nginx.service.d/20-override.conf: jitter");
    assert_string_equal(explain(600, 600), "rule 'cron' (c.conf:7) matched unit 'cron.service': intensive");
    assert_string_equal(explain(300, 300),
                        "no rule matched ('agents': comm 'app'; 'web': exe '/usr/local/bin/app'; 'cron': unit "
                        "'docker-abc123.scope'); uclamp util_max 0 <= 204: jitter");
    assert_string_equal(explain(700, 700),
                        "no rule matched ('agents': comm 'batch'; 'web': exe '/opt/batch/run'; 'cron': unit "
                        "unknown); uclamp util_max 1024 > 204; default class: ignore");
    /* explain says when the task's current class is stale */
    struct task t = task(700, 700, NULL);
    t.class = CLASS_JITTER;
    t.source = SOURCE_UCLAMP;
    char buf[512];
    assert_true(classifier_explain(fx.c, &t, buf, sizeof buf) > 0);
    assert_string_equal(buf, "no rule matched ('agents': comm 'batch'; 'web': exe '/opt/batch/run'; 'cron': unit "
                             "unknown); uclamp util_max 1024 > 204; default class: ignore (currently jitter by "
                             "uclamp, not yet reclassified)");
    /* truncation keeps a terminated string */
    char small[16];
    assert_int_equal(classifier_explain(fx.c, &t, small, sizeof small), 15);
    assert_string_equal(small, "no rule matched");
    teardown(state);

    setup_with("", false, false);
    assert_string_equal(explain(700, 700), "no rules; uclamp not supported by the kernel; default class: ignore");
    teardown(state);
    setup_with("[classify]\nuclamp = no\n[rule a]\ncomm = batch\nuser = nobody\nclass = jitter\n", false, false);
    struct task b = task(700, 700, NULL);
    b.uid = 4000001;    /* as procscan reads it from the fixture's status */
    assert_int_equal(classifier_classify(fx.c, &b), 1);
    int n = classifier_explain(fx.c, &b, buf, sizeof buf);
    assert_int_equal(n, (int)strlen(buf));
    assert_string_equal(buf, "no rule matched ('a': user '4000001'); uclamp off; default class: ignore");
}

/* This machine may or may not have systemd on the system bus; without it
 * unit opt-in is off, the log says so once, and the slice still works. */
static void test_no_systemd_said_once(void **state)
{
    captured[0] = '\0';
    log_set_sink(sink, NULL);
    config_init_defaults(&fx.cfg);
    assert_int_equal(classifier_new(&fx.cfg, ROOT, &fx.c), 0);
    if (classifier_unit_optin_active(fx.c))
        skip();
    const char *msg = "<6>unit opt-in: systemd is not on the system bus";
    for (pid_t pid = 100; pid <= 800; pid += 100) {
        struct task t = task(pid, pid, NULL);
        assert_int_equal(classifier_classify(fx.c, &t), 1);
        assert_int_equal(t.class, pid == 200 || pid == 800 ? CLASS_JITTER : CLASS_IGNORE);
    }
    char *first = strstr(captured, msg);
    assert_non_null(first);
    assert_null(strstr(first + 1, msg));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_precedence, teardown),
        cmocka_unit_test_teardown(test_uclamp_unsupported_never_jitter, teardown),
        cmocka_unit_test_teardown(test_live_self_not_jitter, teardown),
        cmocka_unit_test_teardown(test_uclamp_off_and_recheck, teardown),
        cmocka_unit_test_teardown(test_return_values, teardown),
        cmocka_unit_test_teardown(test_threads_and_batch, teardown),
        cmocka_unit_test_teardown(test_unit_cache, teardown),
        cmocka_unit_test(test_parse_x_turbosched),
        cmocka_unit_test_teardown(test_explain, teardown),
        cmocka_unit_test_teardown(test_no_systemd_said_once, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
