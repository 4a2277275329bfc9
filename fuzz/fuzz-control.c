/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target for the control socket's request decoder: framing,
 * JSON, method and parameter validation, exactly as the server runs them. */
#include <stddef.h>
#include <stdint.h>

#include "varlink.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A small bound as well as the real one, so the oversize path is hit. */
    varlink_decode_stream(data, size, 256);
    varlink_decode_stream(data, size, VARLINK_MAX_MESSAGE_DEFAULT);
    return 0;
}
