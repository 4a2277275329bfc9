/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target for the configuration parser. Besides not crashing, a
 * config that parses must print (config_print) to text that parses again to
 * the same printed form. tests/unit/model/test-fuzz-replay.c runs the corpus through
 * the same two library calls in ordinary builds. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"

static void quiet(int level, const char *msg, void *userdata) { (void)level, (void)msg, (void)userdata; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* TS_FUZZ_VERBOSE=1 shows the parser's messages when debugging a crash. */
    if (getenv("TS_FUZZ_VERBOSE"))
        log_set_max_level(LOG_DEBUG);
    else
        log_set_sink(quiet, NULL);
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    struct config c;
    config_init_defaults(&c);
    if (config_load_string(text, "fuzz.conf", &c) == 0 && config_check_print(&c) == -EPROTO)
        abort();
    config_done(&c);
    free(text);
    return 0;
}
