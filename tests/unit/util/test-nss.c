/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Lookups whose entries do not fit a fixed buffer: the growth helper alone,
 * then the daemon's real lookups against a /etc/group and /etc/passwd with
 * a huge entry, bind-mounted in a private mount namespace of a child. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "control.h"
#include "log.h"
#include "nss.h"
#include "procinfo.h"

struct fake {
    size_t need; /* the buffer the entry needs */
    unsigned calls;
    size_t last;
};

static int fake_fn(char *buf, size_t size, void *userdata)
{
    struct fake *f = userdata;
    f->calls++;
    f->last = size;
    if (size < f->need)
        return ERANGE;
    memset(buf, 0, size); /* the whole buffer is ours: ASan checks it */
    return 0;
}

static void test_growth(void **state)
{
    struct fake f = {.need = 100};
    assert_int_equal(nss_call_growing(fake_fn, &f, 0), 0);
    assert_int_equal(f.calls, 1);
    assert_int_equal(f.last, 256);

    f = (struct fake){.need = 300000};
    assert_int_equal(nss_call_growing(fake_fn, &f, 1024), 0);
    assert_int_equal(f.last, 524288);
    assert_int_equal(f.calls, 10); /* 1 KiB doubling to 512 KiB */

    /* Past the bound: an error to report, not a loop and not an exit. */
    f = (struct fake){.need = NSS_BUFFER_MAX + 1};
    assert_int_equal(nss_call_growing(fake_fn, &f, 4096), -ERANGE);
    assert_int_equal(f.last, NSS_BUFFER_MAX);
}

static int others_fn(char *buf, size_t size, void *userdata) { return EIO; }

static void test_other_errors(void **state) { assert_int_equal(nss_call_growing(others_fn, NULL, 0), -EIO); }

static void write_file(const char *path, const char *head, size_t filler, const char *tail)
{
    FILE *f = fopen(path, "we");
    assert_non_null(f);
    fputs(head, f);
    for (size_t i = 0; i < filler; i++)
        fprintf(f, "%su%zu", i ? "," : "", i);
    fputs(tail, f);
    assert_int_equal(fclose(f), 0);
}

static int no_handler(void *userdata, const char *method, struct json_object *params, const struct control_peer *peer,
                      struct json_object **reply, const char **error)
{
    return -ENOSYS;
}

/* The child exits with the step that failed. */
static int child(const char *dir)
{
    char group[256], passwd[256], sock[256];
    snprintf(group, sizeof group, "%s/group", dir);
    snprintf(passwd, sizeof passwd, "%s/passwd", dir);
    snprintf(sock, sizeof sock, "%s/run/control", dir);
    if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        return 10;
    if (mount(group, "/etc/group", NULL, MS_BIND, NULL) < 0 || mount(passwd, "/etc/passwd", NULL, MS_BIND, NULL) < 0)
        return 11;
    /* The control socket's read-only group: 200,000 members, ~1.5 MB. */
    sd_event *e;
    if (sd_event_new(&e) < 0)
        return 12;
    struct control_server *s = NULL;
    int r = control_server_new(e, sock, "bigroup", 0, no_handler, NULL, &s);
    if (r < 0) {
        fprintf(stderr, "control_server_new with a big group: %s\n", strerror(-r));
        return 13;
    }
    struct stat st;
    if (stat(sock, &st) < 0 || st.st_gid != 4242 || (st.st_mode & 0777) != 0660)
        return 14;
    control_server_free(s);
    sd_event_unref(e);
    /* A user whose passwd line carries a 1 MB comment. */
    char name[64];
    procinfo_user_name(4243, name, sizeof name);
    if (strcmp(name, "biguser") != 0) {
        fprintf(stderr, "uid 4243 named '%s'\n", name);
        return 15;
    }
    return 0;
}

static void test_big_entries(void **state)
{
    if (geteuid() != 0)
        skip(); /* a private mount namespace needs root */
    char dir[] = "/tmp/ts-nss-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/group", dir);
    write_file(path, "root:x:0:\nbigroup:x:4242:", 200000, "\n");
    snprintf(path, sizeof path, "%s/passwd", dir);
    FILE *f = fopen(path, "we");
    assert_non_null(f);
    fputs("root:x:0:0:root:/root:/bin/sh\nbiguser:x:4243:4243:", f);
    for (int i = 0; i < 1 << 20; i++)
        fputc('c', f);
    fputs(":/nonexistent:/usr/sbin/nologin\n", f);
    assert_int_equal(fclose(f), 0);

    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(child(dir));
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_growth),
        cmocka_unit_test(test_other_errors),
        cmocka_unit_test(test_big_entries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
