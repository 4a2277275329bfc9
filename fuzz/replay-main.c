/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Replays a fuzz corpus through a libFuzzer target's entry point in an
 * ordinary build (gcc, ASan/UBSan in the dev preset), so every input that
 * once mattered keeps being run by the test suite. A crash or an abort()
 * in the target fails the test. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv)
{
    unsigned total = 0;
    for (int i = 1; i < argc; i++) {
        DIR *d = opendir(argv[i]);
        if (!d) {
            perror(argv[i]);
            return 1;
        }
        char **names = NULL;
        size_t n = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
            if (de->d_name[0] == '.')
                continue;
            char **nn = realloc(names, (n + 1) * sizeof *names);
            if (!nn)
                return 1;
            names = nn;
            names[n++] = strdup(de->d_name);
        }
        closedir(d);
        qsort(names, n, sizeof *names, cmp);
        for (size_t k = 0; k < n; k++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], names[k]);
            FILE *f = fopen(path, "rb");
            if (!f) {
                perror(path);
                return 1;
            }
            uint8_t *buf = NULL;
            size_t len = 0, cap = 0, r;
            uint8_t chunk[4096];
            while ((r = fread(chunk, 1, sizeof chunk, f)) > 0) {
                if (len + r > cap) {
                    cap = (len + r) * 2;
                    uint8_t *nb = realloc(buf, cap);
                    if (!nb)
                        return 1;
                    buf = nb;
                }
                memcpy(buf + len, chunk, r);
                len += r;
            }
            fclose(f);
            LLVMFuzzerTestOneInput(buf ? buf : (const uint8_t *)"", len);
            free(buf);
            free(names[k]);
            total++;
        }
        free(names);
    }
    if (total == 0) {
        fprintf(stderr, "no corpus inputs found\n");
        return 1;
    }
    printf("%u inputs replayed\n", total);
    return 0;
}
