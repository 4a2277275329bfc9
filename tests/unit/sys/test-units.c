/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The unit store (units.c) with an injected lookup in place of systemd's:
 * X-TurboSched= read from unit files and drop-ins written by the test and
 * from the fixture tree's nginx and cron units, the file it came from, the
 * cache and its limits, lookups that fail. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture-tree.h"
#include "log.h"
#include "units.h"

#define FIXTURE_UNITS TS_FIXTURES "/proc-classify/etc/systemd/system"

static char root[PATH_MAX / 2];
static char logged[4096];
static unsigned n_lookups;
static int lookup_error; /* what the lookup answers instead, 0: the files */
static struct units *u;  /* a store on lookup(), new for each test */

static void sink(int level, const char *msg, void *userdata)
{
    (void)userdata;
    size_t n = strlen(logged);
    snprintf(logged + n, sizeof logged - n, "<%d>%s\n", level, msg);
}

static char *in_root(const char *rel)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    return strdup(path);
}

/* systemd's answer for each unit: its fragment and drop-ins, below the
 * test's directory, or below the fixture tree for nginx and cron. */
static int lookup(void *userdata, const char *unit, char **fragment, char ***dropins)
{
    (void)userdata;
    n_lookups++;
    if (lookup_error)
        return lookup_error;
    char **d = calloc(4, sizeof *d);
    assert_non_null(d);
    if (strcmp(unit, "nginx.service") == 0 || strcmp(unit, "cron.service") == 0) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", FIXTURE_UNITS, unit);
        *fragment = strdup(path);
        if (unit[0] == 'n') {
            d[0] = strdup(FIXTURE_UNITS "/nginx.service.d/10-turbosched.conf");
            d[1] = strdup(FIXTURE_UNITS "/nginx.service.d/20-override.conf");
        } else {
            d[0] = strdup(FIXTURE_UNITS "/cron.service.d/10-bad.conf");
        }
    } else if (strcmp(unit, "fragment.service") == 0) {
        *fragment = in_root("fragment.service");
    } else if (strcmp(unit, "bad-dropin.service") == 0) {
        *fragment = in_root("bad-dropin.service");
        d[0] = in_root("bad-dropin.service.d/50-typo.conf");
    } else if (strcmp(unit, "reset.service") == 0) {
        *fragment = in_root("reset.service");
        d[0] = in_root("reset.service.d/90-reset.conf");
    } else if (strcmp(unit, "dropin-only.scope") == 0) {
        /* a transient scope: no fragment, one drop-in; another listed is gone */
        d[0] = in_root("dropin-only.scope.d/50-gone.conf");
        d[1] = in_root("dropin-only.scope.d/60-x.conf");
    } else if (strcmp(unit, "joined.service") == 0) {
        *fragment = in_root("joined.service");
    } else if (strncmp(unit, "many-", 5) == 0) {
        *fragment = in_root("fragment.service");
    } else {
        free(d);
        return -ENOENT;
    }
    *dropins = d;
    return 0;
}

static int setup(void **state)
{
    (void)state;
    const char *tmp = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/units-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    assert_non_null(mkdtemp(root));
    fixture_put(root, "fragment.service",
                "[Unit]\nDescription=x\n\n[Service]\nExecStart=/bin/true\nX-TurboSched=jitter\n");
    fixture_put(root, "bad-dropin.service", "[Service]\nX-TurboSched=intensive\n");
    fixture_put(root, "bad-dropin.service.d/50-typo.conf", "[Service]\nX-TurboSched=jiter\n");
    fixture_put(root, "reset.service", "[Service]\nX-TurboSched=jitter\n");
    fixture_put(root, "reset.service.d/90-reset.conf", "[Service]\nX-TurboSched=\n");
    fixture_put(root, "dropin-only.scope.d/60-x.conf", "# set by the launcher\n[Scope]\nX-TurboSched=ignore\n");
    fixture_put(root, "joined.service", "[Service]\nEnvironment=A=1 \\\n  B=2\nX-TurboSched=\\\n  intensive\n");
    logged[0] = '\0';
    log_set_sink(sink, NULL);
    n_lookups = 0;
    lookup_error = 0;
    assert_int_equal(units_new_with_lookup(lookup, NULL, &u), 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[PATH_MAX];
    units_free(u);
    u = NULL;
    log_set_sink(NULL, NULL);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
    return 0;
}

/* The class a unit asks for and the file that said so; -1 for an error. */
static int class_of(const char *unit, const char **origin)
{
    enum task_class cls = CLASS_UNSET;
    int r = units_get_class(u, unit, &cls, origin);
    if (r < 0)
        return -1;
    return r == 0 ? CLASS_UNSET : (int)cls;
}

/* origin is rel below the test's directory. */
static void assert_from(const char *origin, const char *rel)
{
    char want[PATH_MAX];
    snprintf(want, sizeof want, "%s/%s", root, rel);
    assert_non_null(origin);
    assert_string_equal(origin, want);
}

static void test_fragment_and_dropins(void **state)
{
    (void)state;
    const char *origin = NULL;
    /* in [Service] after other keys; the [Unit] section is not read */
    assert_int_equal(class_of("fragment.service", &origin), CLASS_JITTER);
    assert_from(origin, "fragment.service");
    /* the fixture's nginx: intensive in the fragment, ignore in a drop-in,
     * reset and jitter in the last drop-in: the last one wins */
    assert_int_equal(class_of("nginx.service", &origin), CLASS_JITTER);
    assert_string_equal(origin, FIXTURE_UNITS "/nginx.service.d/20-override.conf");
    /* a drop-in's empty assignment undoes the fragment's */
    origin = NULL;
    assert_int_equal(class_of("reset.service", &origin), CLASS_UNSET);
    assert_null(origin);
    /* no fragment, a drop-in gone from disk, [Scope] */
    assert_int_equal(class_of("dropin-only.scope", &origin), CLASS_IGNORE);
    assert_from(origin, "dropin-only.scope.d/60-x.conf");
    /* a backslash joins the value's next line */
    assert_int_equal(class_of("joined.service", NULL), CLASS_INTENSIVE);
    assert_int_equal(n_lookups, 5);
}

/* A value that is not a class is ignored with a warning naming unit and
 * file: what the files before it set stands. */
static void test_invalid_value_ignored(void **state)
{
    (void)state;
    const char *origin = NULL;
    assert_int_equal(class_of("bad-dropin.service", &origin), CLASS_INTENSIVE);
    assert_from(origin, "bad-dropin.service");
    assert_non_null(strstr(logged, "<4>bad-dropin.service: "));
    assert_non_null(strstr(logged, "X-TurboSched=jiter is not jitter, intensive or ignore, ignoring"));
    logged[0] = '\0';
    /* the fixture's cron: nothing in the fragment, "bogus" in a drop-in */
    assert_int_equal(class_of("cron.service", &origin), CLASS_UNSET);
    assert_non_null(strstr(logged, "X-TurboSched=bogus is not"));
    /* asked again: from the cache, not read or logged again */
    logged[0] = '\0';
    assert_int_equal(class_of("cron.service", &origin), CLASS_UNSET);
    assert_string_equal(logged, "");
    assert_int_equal(n_lookups, 2);
}

/* Each unit is looked up once until a flush; a unit systemd does not know
 * (-ENOENT) is remembered as saying nothing, quietly; any other failure is
 * returned and logged once, then remembered as nothing too. */
static void test_cache_and_failures(void **state)
{
    (void)state;
    unsigned long lookups, hits;
    assert_int_equal(class_of("fragment.service", NULL), CLASS_JITTER);
    assert_int_equal(class_of("fragment.service", NULL), CLASS_JITTER);
    assert_int_equal(class_of("unknown.service", NULL), CLASS_UNSET);
    assert_int_equal(class_of("unknown.service", NULL), CLASS_UNSET);
    assert_string_equal(logged, "");
    units_stats(u, &lookups, &hits);
    assert_int_equal(lookups, 2);
    assert_int_equal(hits, 2);

    lookup_error = -EIO;
    enum task_class cls = CLASS_UNSET;
    assert_int_equal(units_get_class(u, "reset.service", &cls, NULL), -EIO);
    assert_non_null(strstr(logged, "<4>reset.service: cannot look up its unit files"));
    assert_int_equal(units_get_class(u, "reset.service", &cls, NULL), 0);
    assert_int_equal(n_lookups, 3);
    /* a flush (systemd reloaded) asks again */
    lookup_error = 0;
    units_cache_flush(u);
    assert_int_equal(class_of("fragment.service", NULL), CLASS_JITTER);
    assert_int_equal(n_lookups, 4);
    units_stats(u, &lookups, &hits);
    assert_int_equal(lookups, 4);
    assert_int_equal(hits, 3); /* the failed unit's second ask */
}

/* Units come and go (scopes): past 4096 units the cache starts over
 * instead of growing. */
static void test_cache_bounded(void **state)
{
    (void)state;
    char name[64];
    for (unsigned i = 0; i < 4096; i++) {
        snprintf(name, sizeof name, "many-%u.scope", i);
        assert_int_equal(class_of(name, NULL), CLASS_JITTER);
    }
    assert_int_equal(class_of("many-0.scope", NULL), CLASS_JITTER);
    assert_int_equal(n_lookups, 4096); /* still cached */
    assert_int_equal(class_of("many-4096.scope", NULL), CLASS_JITTER);
    assert_int_equal(n_lookups, 4097);
    assert_int_equal(class_of("many-1.scope", NULL), CLASS_JITTER);
    assert_int_equal(n_lookups, 4098); /* forgotten at the flush */
    assert_int_equal(class_of("many-4096.scope", NULL), CLASS_JITTER);
    assert_int_equal(n_lookups, 4098); /* kept after it */
}

/* Without a store (no systemd) every unit says nothing. */
static void test_no_store(void **state)
{
    (void)state;
    enum task_class cls = CLASS_JITTER;
    unsigned long lookups = 1, hits = 1;
    assert_int_equal(units_get_class(NULL, "fragment.service", &cls, NULL), 0);
    assert_int_equal(cls, CLASS_JITTER);
    units_stats(NULL, &lookups, &hits);
    assert_int_equal(lookups, 0);
    assert_int_equal(hits, 0);
    assert_int_equal(units_get_class(u, NULL, &cls, NULL), 0);
    assert_int_equal(n_lookups, 0);
    units_cache_flush(NULL);
    units_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_fragment_and_dropins, setup, teardown),
        cmocka_unit_test_setup_teardown(test_invalid_value_ignored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_and_failures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_store, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
