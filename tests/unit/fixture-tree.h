/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A file of a fixture tree that a test builds in a temporary directory
 * (cpufreq, cpuidle and msr files): include after cmocka.h. */
#pragma once
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

/* Write root/rel, its directories made. */
static inline void fixture_put(const char *root, const char *rel, const char *text)
{
    char path[PATH_MAX + 128], cmd[2 * PATH_MAX + 256];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", path);
    assert_int_equal(system(cmd), 0);
    FILE *f = fopen(path, "we");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}
