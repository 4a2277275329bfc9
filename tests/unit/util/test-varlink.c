/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Varlink framing and decoding (pure), and replay of the fuzz corpus through
 * the same entry point the fuzzer uses. */
#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util.h"
#include "varlink.h"

static void test_reader_frames(void **state)
{
    struct varlink_reader r;
    varlink_reader_init(&r, 64);
    const char *msg;
    size_t len;
    assert_int_equal(varlink_reader_next(&r, &msg, &len), 0);
    assert_int_equal(varlink_reader_feed(&r, "ab", 2), 0);
    assert_int_equal(varlink_reader_next(&r, &msg, &len), 0);
    assert_int_equal(varlink_reader_pending(&r), 2);
    assert_int_equal(varlink_reader_feed(&r, "c\0de\0f", 6), 0);
    assert_int_equal(varlink_reader_next(&r, &msg, &len), 1);
    assert_int_equal(len, 3);
    assert_string_equal(msg, "abc");
    assert_int_equal(varlink_reader_next(&r, &msg, &len), 1);
    assert_string_equal(msg, "de");
    assert_int_equal(varlink_reader_next(&r, &msg, &len), 0);
    assert_int_equal(varlink_reader_pending(&r), 1);
    /* Empty frames are frames. */
    assert_int_equal(varlink_reader_feed(&r, "\0\0", 2), 0);
    assert_int_equal(varlink_reader_next(&r, &msg, &len), 1);
    assert_string_equal(msg, "f");
    assert_int_equal(varlink_reader_next(&r, &msg, &len), 1);
    assert_int_equal(len, 0);
    assert_int_equal(varlink_reader_next(&r, &msg, &len), 0);
    assert_int_equal(varlink_reader_pending(&r), 0);
    varlink_reader_done(&r);
}

static void test_reader_bound(void **state)
{
    struct varlink_reader r;
    varlink_reader_init(&r, 8);
    const char *msg;
    size_t len;
    /* 8 bytes and the NUL: at the bound, accepted. */
    assert_int_equal(varlink_reader_feed(&r, "12345678\0", 9), 0);
    assert_int_equal(varlink_reader_next(&r, &msg, &len), 1);
    assert_int_equal(len, 8);
    /* 8 bytes without a NUL yet: keep waiting. */
    assert_int_equal(varlink_reader_feed(&r, "12345678", 8), 0);
    assert_int_equal(varlink_reader_next(&r, &msg, &len), 0);
    /* A ninth byte that is not the NUL: over. */
    assert_int_equal(varlink_reader_feed(&r, "9\0", 2), 0);
    assert_int_equal(varlink_reader_next(&r, &msg, &len), -EMSGSIZE);
    varlink_reader_done(&r);

    /* Over the bound within one feed, NUL included. */
    varlink_reader_init(&r, 4);
    assert_int_equal(varlink_reader_feed(&r, "123456\0", 7), 0);
    assert_int_equal(varlink_reader_next(&r, &msg, &len), -EMSGSIZE);
    varlink_reader_done(&r);
}

static void test_reader_long_connection_does_not_grow(void **state)
{
    struct varlink_reader r;
    varlink_reader_init(&r, 64);
    const char frame[] = "{\"method\":\"io.turbosched.Status\"}";
    for (int i = 0; i < 10000; i++) {
        /* Half a frame pending across feeds, like a stream would deliver it. */
        assert_int_equal(varlink_reader_feed(&r, frame, 10), 0);
        assert_int_equal(varlink_reader_feed(&r, frame + 10, sizeof frame - 10), 0);
        const char *msg;
        size_t len;
        assert_int_equal(varlink_reader_next(&r, &msg, &len), 1);
        assert_string_equal(msg, frame);
    }
    assert_true(r.cap <= 4096);
    varlink_reader_done(&r);
}

static int decode(const char *s, struct varlink_request *req, struct varlink_error *err)
{
    return varlink_request_decode(s, strlen(s), req, err);
}

static void test_decode_requests(void **state)
{
    struct varlink_request req;
    struct varlink_error err;
    assert_int_equal(decode("{\"method\":\"io.turbosched.Status\"}", &req, &err), 0);
    assert_int_equal(req.method_id, VARLINK_METHOD_STATUS);
    assert_true(json_object_is_type(req.params, json_type_object));
    assert_false(req.oneway);
    varlink_request_done(&req);

    assert_int_equal(
        decode("{\"method\":\"io.turbosched.Explain\",\"parameters\":{\"pid\":42},\"oneway\":true}", &req, &err), 0);
    assert_int_equal(req.method_id, VARLINK_METHOD_EXPLAIN);
    assert_true(req.oneway);
    varlink_request_done(&req);

    assert_int_equal(decode("{\"method\":\"org.varlink.service.GetInfo\",\"parameters\":{}}", &req, &err), 0);
    assert_int_equal(req.method_id, VARLINK_METHOD_GET_INFO);
    varlink_request_done(&req);

    /* Well-formed but not ours: decodes, unknown id. */
    assert_int_equal(decode("{\"method\":\"com.example.Foo.Bar\"}", &req, &err), 0);
    assert_int_equal(req.method_id, VARLINK_METHOD_UNKNOWN);
    assert_string_equal(req.method, "com.example.Foo.Bar");
    varlink_request_done(&req);

    static const char *const bad[] = {
        "",
        "{",
        "nul",
        "[]",
        "42",
        "\"x\"",
        "{}",
        "{\"method\":null}",
        "{\"method\":\"\"}",
        "{\"method\":\"Status\"}",
        "{\"method\":\".Status\"}",
        "{\"method\":\"io..Status\"}",
        "{\"method\":\"io.turbosched.status\"}",
        "{\"method\":\"io.turbosched.Sta tus\"}",
        "{\"method\":\"io.turbosched.Status\",\"parameters\":1}",
        "{\"method\":\"io.turbosched.Status\"}{}",
        "{\"method\":\"io.turbosched.Status\"} x",
    };
    for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
        err = (struct varlink_error){0};
        int r = decode(bad[i], &req, &err);
        if (r != -EBADMSG)
            fail_msg("'%s' decoded to %d", bad[i], r);
        assert_string_equal(err.name, TS_ERROR_INVALID_REQUEST);
        assert_non_null(err.reason);
        varlink_request_done(&req);
    }

    static const char *const bad_pid[] = {
        "{\"method\":\"io.turbosched.Explain\"}",
        "{\"method\":\"io.turbosched.Explain\",\"parameters\":{\"pid\":0}}",
        "{\"method\":\"io.turbosched.Explain\",\"parameters\":{\"pid\":-5}}",
        "{\"method\":\"io.turbosched.Explain\",\"parameters\":{\"pid\":1.5}}",
        "{\"method\":\"io.turbosched.Explain\",\"parameters\":{\"pid\":\"12\"}}",
        "{\"method\":\"io.turbosched.Explain\",\"parameters\":{\"pid\":99999999999}}",
    };
    for (size_t i = 0; i < ELEMENTSOF(bad_pid); i++) {
        err = (struct varlink_error){0};
        int r = decode(bad_pid[i], &req, &err);
        if (r != -EINVAL)
            fail_msg("'%s' decoded to %d", bad_pid[i], r);
        assert_string_equal(err.name, VARLINK_ERROR_INVALID_PARAMETER);
        assert_string_equal(err.parameter, "pid");
        assert_string_equal(req.method, "io.turbosched.Explain");
        varlink_request_done(&req);
    }
}

static void test_method_table(void **state)
{
    for (int m = 0; m < _VARLINK_METHOD_MAX; m++)
        assert_int_equal(varlink_method_from_name(varlink_method_name(m)), m);
    assert_null(varlink_method_name(VARLINK_METHOD_UNKNOWN));
    assert_int_equal(varlink_method_from_name("io.turbosched.Nope"), VARLINK_METHOD_UNKNOWN);
}

static void test_format_round_trip(void **state)
{
    struct json_object *p = json_object_new_object();
    json_object_object_add(p, "pid", json_object_new_int(7));
    size_t len;
    char *s = varlink_request_format("io.turbosched.Explain", p, &len);
    assert_non_null(s);
    assert_int_equal(s[len - 1], '\0');
    assert_int_equal(strlen(s), len - 1);
    struct varlink_request req;
    struct varlink_error err;
    assert_int_equal(varlink_request_decode(s, len - 1, &req, &err), 0);
    assert_int_equal(req.method_id, VARLINK_METHOD_EXPLAIN);
    struct json_object *pid;
    assert_true(json_object_object_get_ex(req.params, "pid", &pid));
    assert_int_equal(json_object_get_int(pid), 7);
    varlink_request_done(&req);
    free(s);

    s = varlink_reply_format(p, TS_ERROR_PERMISSION_DENIED, &len);
    struct json_object *params;
    char *error;
    assert_int_equal(varlink_reply_decode(s, len - 1, &params, &error), 0);
    assert_string_equal(error, TS_ERROR_PERMISSION_DENIED);
    assert_true(json_object_equal(params, p));
    json_object_put(params);
    free(error);
    free(s);

    s = varlink_reply_format(NULL, NULL, &len);
    assert_string_equal(s, "{\"parameters\":{}}");
    assert_int_equal(varlink_reply_decode(s, len - 1, &params, &error), 0);
    assert_null(error);
    assert_int_equal(json_object_object_length(params), 0);
    json_object_put(params);
    free(s);
    json_object_put(p);

    assert_int_equal(varlink_reply_decode("[1]", 3, &params, &error), -EBADMSG);
    assert_int_equal(varlink_reply_decode("{\"error\":1}", 11, &params, &error), -EBADMSG);
    assert_int_equal(varlink_reply_decode("{\"parameters\":{}", 16, &params, &error), -EBADMSG);
}

static void test_decode_stream(void **state)
{
    const char stream[] =
        "{\"method\":\"io.turbosched.Status\"}\0garbage\0{\"method\":\"io.turbosched.Dump\"}\0{\"meth";
    assert_int_equal(varlink_decode_stream(stream, sizeof stream - 1, 0), 2);
    assert_int_equal(varlink_decode_stream("xxxxxxxxxxxxxxxxxxxx", 20, 8), -EMSGSIZE);
    assert_int_equal(varlink_decode_stream("", 0, 0), 0);
}

/* Every corpus file goes through the fuzzer's entry point: a regression
 * found by fuzzing stays fixed. Well-formed seeds must decode. */
static void test_fuzz_corpus(void **state)
{
    const char *dirpath = TS_SOURCE_DIR "/fuzz/corpus/control";
    DIR *d = opendir(dirpath);
    assert_non_null(d);
    unsigned n_files = 0, n_ok_seeds = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dirpath, de->d_name);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        static char buf[1 << 20];
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        int r = varlink_decode_stream(buf, n, VARLINK_MAX_MESSAGE_DEFAULT);
        if (strncmp(de->d_name, "ok-", 3) == 0) {
            if (r < 1)
                fail_msg("%s: expected a valid request, got %d", de->d_name, r);
            n_ok_seeds++;
        }
        n_files++;
    }
    closedir(d);
    assert_true(n_files >= 10);
    assert_true(n_ok_seeds >= 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reader_frames),
        cmocka_unit_test(test_reader_bound),
        cmocka_unit_test(test_reader_long_connection_does_not_grow),
        cmocka_unit_test(test_decode_requests),
        cmocka_unit_test(test_method_table),
        cmocka_unit_test(test_format_round_trip),
        cmocka_unit_test(test_decode_stream),
        cmocka_unit_test(test_fuzz_corpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
