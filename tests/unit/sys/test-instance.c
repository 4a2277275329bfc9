/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One daemon per state file: the lock beside it, its directory made, and a
 * second daemon refused while the first holds it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "instance.h"

static void test_lock_once(void **state)
{
    char dir[] = "/tmp/ts-instance-XXXXXX", state_file[96], lock[128];
    assert_non_null(mkdtemp(dir));
    snprintf(state_file, sizeof state_file, "%s/run/state", dir);
    int fd = instance_lock(state_file);
    assert_true(fd >= 0);
    snprintf(lock, sizeof lock, "%s.lock", state_file);
    struct stat st;
    assert_int_equal(stat(lock, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    /* a second daemon: a lock of its own open file, refused */
    assert_int_equal(instance_lock(state_file), -EWOULDBLOCK);
    close(fd);
    /* the first one gone, the next may run */
    fd = instance_lock(state_file);
    assert_true(fd >= 0);
    close(fd);

    char cmd[96];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_path_too_long(void **state)
{
    char *name = malloc(PATH_MAX + 1);
    memset(name, 'x', PATH_MAX);
    name[0] = '/';
    name[PATH_MAX] = '\0';
    assert_int_equal(instance_lock(name), -ENAMETOOLONG);
    free(name);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lock_once),
        cmocka_unit_test(test_path_too_long),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
