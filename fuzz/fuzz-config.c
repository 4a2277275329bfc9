/* libFuzzer target for the configuration parser. Besides not crashing, a
 * config that parses must print (config_print) to text that parses again to
 * the same printed form. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"

static void quiet(int level, const char *msg, void *userdata) { (void)level, (void)msg, (void)userdata; }

/* The printed form without comment lines (they name the origin file). */
static char *print_bare(const struct config *c)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (!f)
        abort();
    config_print(f, c);
    fclose(f);
    char *w = buf;
    for (char *r = buf; *r;) {
        char *nl = strchrnul(r, '\n');
        size_t n = (size_t)(nl - r) + (*nl ? 1 : 0);
        if (*r != '#') {
            memmove(w, r, n);
            w += n;
        }
        r += n;
    }
    *w = '\0';
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* TS_FUZZ_VERBOSE=1 shows the parser's messages when debugging a crash. */
    if (!getenv("TS_FUZZ_VERBOSE"))
        log_set_sink(quiet, NULL);
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';

    struct config c;
    config_init_defaults(&c);
    if (config_load_string(text, "fuzz.conf", &c) == 0) {
        char *once = print_bare(&c);
        struct config again;
        config_init_defaults(&again);
        if (config_load_string(once, "printed.conf", &again) != 0) {
            fprintf(stderr, "printed config does not parse:\n%s\n", once);
            abort();
        }
        char *twice = print_bare(&again);
        if (strcmp(once, twice) != 0) {
            fprintf(stderr, "round trip differs:\n%s\n---\n%s\n", once, twice);
            abort();
        }
        free(twice);
        free(once);
        config_free(&again);
    }
    config_free(&c);
    free(text);
    return 0;
}
