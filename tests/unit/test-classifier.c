/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The classifier against a fixture /proc, an injected uclamp reader and an
 * injected unit lookup: precedence slice > unit > rule > uclamp > default,
 * uclamp without kernel support never making jitter, the unit cache and its
 * flushes, X-TurboSched= parsing, explanations, and tasks that are gone.
 * File opens are counted (the build wraps open, openat and readlinkat): a
 * comm or uid event reads nothing process-wide, an exec reads it once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "classifier.h"
#include "log.h"
#include "procinfo.h"
#include "procscan.h"

#define ROOT TS_FIXTURES "/proc-classify"
#define UNITDIR ROOT "/etc/systemd/system"

static char captured[8192];

static void sink(int level, const char *msg, void *userdata)
{
    size_t n = strlen(captured);
    snprintf(captured + n, sizeof captured - n, "<%d>%s\n", level, msg);
}

/* ---------------------------------------------------------- injections */

/* Opens by the file's last path component ("cgroup", "exe", "status"...). */
static struct {
    char name[32];
    unsigned n;
} opens[32];

static void count_open(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    for (size_t i = 0; i < sizeof opens / sizeof opens[0]; i++) {
        if (!opens[i].name[0])
            snprintf(opens[i].name, sizeof opens[i].name, "%s", name);
        if (strcmp(opens[i].name, name) == 0) {
            opens[i].n++;
            return;
        }
    }
}

static unsigned opened(const char *name)
{
    for (size_t i = 0; i < sizeof opens / sizeof opens[0]; i++)
        if (strcmp(opens[i].name, name) == 0)
            return opens[i].n;
    return 0;
}

static void opens_reset(void) { memset(opens, 0, sizeof opens); }

/* The process-wide inputs, and status (the uid, which the task has). */
static unsigned opened_process_wide(void)
{
    return opened("cgroup") + opened("exe") + opened("cmdline") + opened("status");
}

int __real_open(const char *path, int flags, ...);
int __real_openat(int dirfd, const char *path, int flags, ...);
ssize_t __real_readlinkat(int dirfd, const char *path, char *buf, size_t size);

static mode_t mode_arg(int flags, va_list ap) { return (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0; }

int __wrap_open(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    count_open(path);
    return __real_open(path, flags, mode);
}

int __wrap_openat(int dirfd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    count_open(path);
    return __real_openat(dirfd, path, flags, mode);
}

ssize_t __wrap_readlinkat(int dirfd, const char *path, char *buf, size_t size)
{
    count_open(path);
    return __real_readlinkat(dirfd, path, buf, size);
}

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
    config_done(&fx.cfg);
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
            continue; /* jitter slice */
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
        assert_int_equal(util_max, 0); /* the kernel fact the detection guards against */
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
    b.uid = 4000001; /* as procscan reads it from the fixture's status */
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

/* ------------------------------------------------ comm and uid events */

/* Every fixture thread, with the euid its status file gives. */
static const struct {
    pid_t pid, tid;
    uid_t uid;
} fixture_tasks[] = {
    {100, 100, 33},      {100, 101, 33},      {200, 200, 0}, {300, 300, 0},       {400, 400, 0},
    {500, 500, 4000000}, {500, 501, 4000000}, {600, 600, 0}, {700, 700, 4000001}, {800, 800, 0},
};

static const char *const thread_confs[] = {
    precedence_conf,
    "[rule cache]\ncomm = nginx-cache\nexe = /usr/sbin/*\nclass = jitter\n"
    "[rule www]\nuser = www-data 33\ncgroup = /system.slice/*\nclass = intensive\n"
    "[rule shell]\ncmdline = *gnome*\ncomm = gnome-shell renamed\nclass = jitter\n"
    "[rule scopes]\nunit = *.scope\nuser = root 0\nclass = intensive\n"
    "[rule renamed]\ncomm = renamed\nclass = intensive\n"
    "[rule batch]\nuser = 4000001\nclass = jitter\n",
    "[classify]\nunit_optin = no\n"
    "[rule cache]\ncomm = nginx-cache\nexe = /usr/sbin/*\nclass = jitter\n"
    "[rule logs]\ncgroup = *logrotate*\ncomm = renamed\nclass = intensive\n",
    "[rule agents]\ncomm = telegraf renamed\nclass = intensive\n",
};

/* After a task's leader was classified, a rename or a uid change of any of
 * its threads decides exactly what a classification from scratch decides,
 * and opens nothing but (when the task has no comm) its comm file. */
static void test_thread_change_same_result(void **state)
{
    static const char *const comms[] = {"", "nginx", "nginx-cache", "gnome-shell", "renamed", "telegraf"};
    static const uid_t uids[] = {0, 33, 4000001};
    for (size_t conf = 0; conf < sizeof thread_confs / sizeof thread_confs[0]; conf++)
        for (int with_units = 0; with_units < 2; with_units++) {
            setup_with(thread_confs[conf], with_units, false);
            for (size_t i = 0; i < sizeof fixture_tasks / sizeof fixture_tasks[0]; i++) {
                struct task t = task(fixture_tasks[i].pid, fixture_tasks[i].tid, NULL);
                t.uid = fixture_tasks[i].uid;
                if (t.tid != t.pid) {
                    /* its leader, as a new task */
                    struct task leader = task(t.pid, t.pid, NULL);
                    assert_true(classifier_classify(fx.c, &leader) >= 0);
                }
                assert_true(classifier_classify(fx.c, &t) >= 0);
                for (size_t ci = 0; ci < sizeof comms / sizeof comms[0]; ci++)
                    for (size_t ui = 0; ui < sizeof uids / sizeof uids[0]; ui++) {
                        print_message("conf %zu units %d tid %d comm '%s' uid %u\n", conf, with_units, (int)t.tid,
                                      comms[ci], (unsigned)uids[ui]);
                        struct task changed = t;
                        snprintf(changed.comm, sizeof changed.comm, "%s", comms[ci]);
                        changed.uid = uids[ui];
                        struct task fresh = changed;
                        fresh.class = CLASS_UNSET;
                        opens_reset();
                        assert_true(classifier_classify_thread(fx.c, &changed) >= 0);
                        assert_int_equal(opened_process_wide(), 0);
                        assert_int_equal(opened("comm"), comms[ci][0] ? 0 : 1);
                        assert_true(classifier_classify(fx.c, &fresh) >= 0);
                        assert_int_equal(changed.class, fresh.class);
                        assert_int_equal(changed.source, fresh.source);
                        assert_int_equal(changed.rule, fresh.rule);
                    }
            }
            teardown(state);
        }
}

static const char *const reads_conf = "[rule web]\nexe = /usr/sbin/nginx\ncmdline = *worker*\ncomm = nginx-cache\n"
                                      "class = jitter\n"
                                      "[rule www]\nuser = www-data 33\ncgroup = /system.slice/*\nclass = intensive\n";

static void assert_read_once(void)
{
    assert_int_equal(opened("cgroup"), 1);
    assert_int_equal(opened("exe"), 1);
    assert_int_equal(opened("cmdline"), 1);
    assert_int_equal(opened("status"), 0); /* the user comes from t->uid */
}

/* The daemon reads no uid while no rule names a user (procscan lazy_uid):
 * a user rule, after a reload, reads the status of a task whose uid is
 * not known yet, and only then. */
static void test_unknown_uid_read_when_needed(void **state)
{
    setup_with("[rule a]\ncomm = nginx\nclass = jitter\n", false, false);
    assert_false(classifier_uses_user(fx.c));
    teardown(state);

    setup_with(reads_conf, false, false);
    assert_true(classifier_uses_user(fx.c));
    struct task t = task(100, 100, "nginx");
    t.uid = TASK_UID_UNKNOWN;
    opens_reset();
    assert_int_equal(classifier_classify(fx.c, &t), 1);
    assert_int_equal(t.class, CLASS_INTENSIVE); /* www: euid 33 in its status */
    assert_int_equal(t.rule, 1);
    assert_int_equal(opened("status"), 1);
    t.uid = 0; /* known: no read */
    opens_reset();
    assert_int_equal(classifier_classify_thread(fx.c, &t), 1);
    assert_int_equal(t.source, SOURCE_DEFAULT);
    assert_int_equal(opened("status"), 0);
}

static void test_thread_change_reads(void **state)
{
    setup_with(reads_conf, false, false);
    struct task leader = task(100, 100, "nginx");
    opens_reset();
    assert_int_equal(classifier_classify(fx.c, &leader), 1);
    assert_int_equal(leader.source, SOURCE_DEFAULT);
    assert_read_once();
    assert_true(classifier_memory_bytes(fx.c) > 0);

    /* rename: the rule on comm and exe and cmdline matches, nothing read */
    snprintf(leader.comm, sizeof leader.comm, "nginx-cache");
    opens_reset();
    assert_int_equal(classifier_classify_thread(fx.c, &leader), 1);
    assert_int_equal(leader.class, CLASS_JITTER);
    assert_int_equal(leader.rule, 0);
    assert_int_equal(opened_process_wide() + opened("comm"), 0);

    /* uid event: user= is evaluated again, from the new euid, status unread */
    snprintf(leader.comm, sizeof leader.comm, "nginx");
    leader.uid = 33;
    assert_int_equal(classifier_classify_thread(fx.c, &leader), 1);
    assert_int_equal(leader.class, CLASS_INTENSIVE);
    assert_int_equal(leader.rule, 1);
    leader.uid = 0;
    assert_int_equal(classifier_classify_thread(fx.c, &leader), 1);
    assert_int_equal(leader.source, SOURCE_DEFAULT);
    assert_int_equal(opened_process_wide() + opened("comm"), 0);

    /* another thread of the process: the leader's inputs serve it */
    struct task thread = task(100, 101, "nginx-cache");
    assert_int_equal(classifier_classify_thread(fx.c, &thread), 1);
    assert_int_equal(thread.class, CLASS_JITTER);
    assert_int_equal(opened_process_wide() + opened("comm"), 0);

    /* exec: everything read again, once */
    opens_reset();
    assert_int_equal(classifier_classify(fx.c, &leader), 0);
    assert_read_once();

    /* the leader gone: its thread reads for itself (and keeps nothing) */
    classifier_task_gone(fx.c, &thread);
    opens_reset();
    assert_int_equal(classifier_classify_thread(fx.c, &thread), 0);
    assert_int_equal(opened_process_wide() + opened("comm"), 0);
    classifier_task_gone(fx.c, &leader);
    assert_int_equal(classifier_classify_thread(fx.c, &thread), 0);
    assert_read_once();
    opens_reset();
    assert_int_equal(classifier_classify_thread(fx.c, &thread), 0);
    assert_read_once();
    /* only the empty table is left: 64 slots of a PID and a pointer */
    assert_int_equal(classifier_memory_bytes(fx.c), 64 * 2 * sizeof(void *));

    /* a rescan makes what was remembered stale (events were lost, an exec
     * among them maybe): read again at the next rename, once, whether the
     * leader's or a thread's */
    assert_int_equal(classifier_classify(fx.c, &leader), 0);
    classifier_batch_begin(fx.c);
    classifier_batch_end(fx.c);
    opens_reset();
    assert_int_equal(classifier_classify_thread(fx.c, &leader), 0);
    assert_read_once();
    opens_reset();
    assert_int_equal(classifier_classify_thread(fx.c, &leader), 0);
    assert_int_equal(opened_process_wide() + opened("comm"), 0);
    classifier_batch_begin(fx.c);
    classifier_batch_end(fx.c);
    struct task renamed = task(100, 102, "nginx-cache");
    opens_reset();
    for (int i = 0; i < 3; i++) /* a thread renaming itself again and again */
        assert_true(classifier_classify_thread(fx.c, &renamed) >= 0);
    assert_read_once();
    assert_int_equal(renamed.class, CLASS_JITTER);
}

/* A reload may add rules on keys that were not read before: what was
 * remembered is dropped and the next look reads them. */
static void test_reload_reads_new_keys(void **state)
{
    setup_with("[rule agents]\ncomm = nginx-cache\nclass = intensive\n", false, false);
    struct task leader = task(100, 100, "nginx");
    opens_reset();
    assert_int_equal(classifier_classify(fx.c, &leader), 1);
    assert_int_equal(opened("cgroup"), 1); /* the jitter slice (unit_optin) */
    assert_int_equal(opened("exe") + opened("cmdline") + opened("status"), 0);

    struct config cfg2;
    config_init_defaults(&cfg2);
    assert_int_equal(
        config_load_string("[rule web]\nexe = /usr/sbin/nginx\ncomm = nginx-cache\nclass = jitter\n", "c.conf", &cfg2),
        0);
    classifier_set_config(fx.c, &cfg2);
    /* even a rename right after the reload reads the new key */
    snprintf(leader.comm, sizeof leader.comm, "nginx-cache");
    opens_reset();
    assert_int_equal(classifier_classify_thread(fx.c, &leader), 1);
    assert_int_equal(leader.class, CLASS_JITTER);
    assert_int_equal(opened("exe"), 1);
    assert_int_equal(opened("cgroup"), 1);
    /* and from then on remembers it */
    snprintf(leader.comm, sizeof leader.comm, "nginx");
    opens_reset();
    assert_int_equal(classifier_classify_thread(fx.c, &leader), 1);
    assert_int_equal(leader.source, SOURCE_DEFAULT);
    assert_int_equal(opened_process_wide(), 0);
    classifier_set_config(fx.c, &fx.cfg);
    config_done(&cfg2);
}

/* ------------------------------------- through procscan, as the daemon */

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "we");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void mk_thread(const char *root, pid_t pid, pid_t tid, const char *comm, uid_t uid)
{
    char dir[PATH_MAX], cmd[PATH_MAX + 16], text[512];
    snprintf(dir, sizeof dir, "%s/proc/%d/task/%d", root, (int)pid, (int)tid);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    assert_int_equal(system(cmd), 0);
    snprintf(text, sizeof text, "%d (%s) S 1 %d %d 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %d 1 2 3\n", (int)tid, comm,
             (int)pid, (int)pid, 1000 + (int)tid);
    write_file(dir, "stat", text);
    snprintf(text, sizeof text, "Name:\t%s\nTgid:\t%d\nPid:\t%d\nUid:\t%u\t%u\t%u\t%u\n", comm, (int)pid, (int)tid,
             (unsigned)uid, (unsigned)uid, (unsigned)uid, (unsigned)uid);
    write_file(dir, "status", text);
    snprintf(text, sizeof text, "%s\n", comm);
    write_file(dir, "comm", text);
}

static void mk_process(const char *root, pid_t pid, const char *exe, const char *cmdline, const char *cgroup)
{
    char dir[PATH_MAX], path[PATH_MAX + 8];
    snprintf(dir, sizeof dir, "%s/proc/%d", root, (int)pid);
    snprintf(path, sizeof path, "%s/exe", dir);
    unlink(path);
    assert_int_equal(symlink(exe, path), 0);
    write_file(dir, "cmdline", cmdline);
    write_file(dir, "cgroup", cgroup);
}

/* The hooks as the engine sets them. */
static int on_new(struct task *t, void *ud) { return classifier_classify(ud, t) < 0 ? 0 : 0; }

static int on_changed(struct task *t, enum procscan_change what, void *ud)
{
    int r = what == PROCSCAN_EXEC ? classifier_classify(ud, t) : classifier_classify_thread(ud, t);
    return r < 0 ? r : 0;
}

static void on_gone(struct task *t, void *ud) { classifier_task_gone(ud, t); }

static void test_events_read_once(void **state)
{
    char root[PATH_MAX], cmd[PATH_MAX + 64];
    snprintf(root, sizeof root, "%s/classifier-XXXXXX", TS_BUILD_DIR);
    assert_non_null(mkdtemp(root));
    mk_thread(root, 100, 100, "nginx", 0);
    mk_thread(root, 100, 101, "nginx", 0);
    mk_process(root, 100, "/usr/sbin/nginx", "nginx: worker process", "0::/system.slice/nginx.service\n");

    setup_with(reads_conf, false, false);
    classifier_free(fx.c);
    assert_int_equal(classifier_new(&fx.cfg, root, &fx.c), 0);
    classifier_set_uclamp_ops(fx.c, false, fake_uclamp, NULL);
    struct task_table *tt;
    assert_int_equal(task_table_new(64, &tt), 0);
    struct procscan_hooks h = {.task_new = on_new, .task_changed = on_changed, .task_gone = on_gone, .userdata = fx.c};
    classifier_batch_begin(fx.c);
    assert_int_equal(procscan_reconcile(root, tt, &h, NULL), 0);
    classifier_batch_end(fx.c);
    struct task *leader = task_table_find(tt, 100), *thread = task_table_find(tt, 101);
    assert_int_equal(leader->source, SOURCE_DEFAULT);

    /* rename of each thread: no file opened at all */
    struct procmon_event ev = {.kind = PROCMON_COMM, .tgid = 100, .tid = 101};
    snprintf(ev.comm.comm, sizeof ev.comm.comm, "nginx-cache");
    opens_reset();
    assert_int_equal(procscan_handle_event(root, tt, &ev, &h), 0);
    assert_int_equal(thread->class, CLASS_JITTER);
    ev.tid = 100;
    assert_int_equal(procscan_handle_event(root, tt, &ev, &h), 0);
    assert_int_equal(leader->class, CLASS_JITTER);
    for (size_t i = 0; i < sizeof opens / sizeof opens[0]; i++)
        assert_int_equal(opens[i].n, 0);

    /* uid event: none either, and user= follows the euid */
    ev = (struct procmon_event){.kind = PROCMON_UID, .tgid = 100, .tid = 101};
    ev.uid.euid = 33;
    snprintf(thread->comm, sizeof thread->comm, "nginx");
    assert_int_equal(procscan_handle_event(root, tt, &ev, &h), 0);
    assert_int_equal(thread->class, CLASS_INTENSIVE);
    for (size_t i = 0; i < sizeof opens / sizeof opens[0]; i++)
        assert_int_equal(opens[i].n, 0);

    /* exec of another program (setuid): each file once, status once
     * (procscan's, for the uid), the new exe decides */
    snprintf(cmd, sizeof cmd, "rm -rf '%s/proc/100/task/101'", root);
    assert_int_equal(system(cmd), 0);
    mk_thread(root, 100, 100, "nginx-cache", 33);
    mk_process(root, 100, "/usr/bin/other", "other", "0::/user.slice/other.scope\n");
    ev = (struct procmon_event){.kind = PROCMON_EXEC, .tgid = 100, .tid = 100};
    opens_reset();
    assert_int_equal(procscan_handle_event(root, tt, &ev, &h), 0);
    assert_int_equal(opened("cgroup"), 1);
    assert_int_equal(opened("exe"), 1);
    assert_int_equal(opened("cmdline"), 1);
    assert_int_equal(opened("status"), 1); /* was 2: the classifier read it for user= too */
    assert_int_equal(leader->class, CLASS_IGNORE);
    assert_int_equal(leader->source, SOURCE_DEFAULT);
    assert_int_equal(leader->uid, 33);

    /* a rename after the exec sees the new program's inputs */
    ev = (struct procmon_event){.kind = PROCMON_COMM, .tgid = 100, .tid = 100};
    snprintf(ev.comm.comm, sizeof ev.comm.comm, "nginx-cache");
    opens_reset();
    assert_int_equal(procscan_handle_event(root, tt, &ev, &h), 0);
    assert_int_equal(leader->source, SOURCE_DEFAULT);
    assert_int_equal(opened_process_wide(), 0);

    task_table_free(tt);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
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
        cmocka_unit_test(test_thread_change_same_result),
        cmocka_unit_test_teardown(test_unknown_uid_read_when_needed, teardown),
        cmocka_unit_test_teardown(test_thread_change_reads, teardown),
        cmocka_unit_test_teardown(test_reload_reads_new_keys, teardown),
        cmocka_unit_test_teardown(test_events_read_once, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
