/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Replays the config fuzz corpus (fuzz/corpus/config/) through the same
 * library calls as fuzz/fuzz-config.c, in an ordinary build: no crash, no
 * sanitizer report, and a config that parses prints to text that parses
 * back to the same printed form. Files named ok-* must parse, bad-* must
 * not; regress-* are fuzzer finds kept as regression inputs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"

#define CORPUS TS_SOURCE_DIR "/fuzz/corpus/config"

static void quiet(int level, const char *msg, void *userdata) { (void)level, (void)msg, (void)userdata; }

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "re");
    assert_non_null(f);
    char *buf = NULL;
    size_t size = 0;
    FILE *m = open_memstream(&buf, &size);
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        fwrite(chunk, 1, n, m);
    fclose(f);
    fclose(m);
    *len = size;
    return buf;
}

/* The same library calls as LLVMFuzzerTestOneInput; returns the parse result. */
static int run_one(const char *data, size_t size)
{
    char *text = malloc(size + 1);
    assert_non_null(text);
    memcpy(text, data, size);
    text[size] = '\0';
    struct config c;
    config_init_defaults(&c);
    int r = config_load_string(text, "fuzz.conf", &c);
    if (r == 0)
        assert_int_equal(config_check_print(&c), 0);
    config_done(&c);
    free(text);
    return r;
}

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void test_config_corpus(void **state)
{
    log_set_sink(quiet, NULL);
    DIR *d = opendir(CORPUS);
    assert_non_null(d);
    char *names[4096];
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)) && n < sizeof names / sizeof names[0])
        if (de->d_name[0] != '.')
            names[n++] = strdup(de->d_name);
    closedir(d);
    qsort(names, n, sizeof names[0], cmp);
    unsigned ok = 0, bad = 0;
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", CORPUS, names[i]);
        size_t len;
        char *data = slurp(path, &len);
        print_message("%s\n", names[i]);
        int r = run_one(data, len);
        if (strncmp(names[i], "ok-", 3) == 0) {
            assert_int_equal(r, 0);
            ok++;
        } else if (strncmp(names[i], "bad-", 4) == 0) {
            assert_int_equal(r, -EINVAL);
            bad++;
        }
        free(data);
        free(names[i]);
    }
    /* the corpus is there and holds both kinds */
    assert_true(ok >= 3);
    assert_true(bad >= 3);
    log_set_sink(NULL, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_corpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
