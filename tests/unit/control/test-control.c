/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The control socket server through real unix sockets: the server runs in
 * this process's sd-event loop, which the test pumps while it plays the
 * clients (non-blocking sockets), so no threads and no sleeps. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <inttypes.h>
#include <unistd.h>

#include <cmocka.h>

#include "control-internal.h"
#include "control-methods.h"
#include "control.h"
#include "fd-limit.h"
#include "log.h"
#include "util.h"
#include "varlink.h"

#define TIMEOUT_MS 10000

struct fixture {
    char dir[64];
    char path[128];
    sd_event *e;
    struct control_server *s;
    size_t dump_size; /* bytes of filler in the Dump reply */
    unsigned reloads;
    unsigned handler_calls;
    int handler_mode;          /* 0 normal, 1 -EIO without error, 2 non-object reply */
    unsigned handler_delay_us; /* what each request costs the daemon */
};

static unsigned n_warnings, n_limit_logs, n_pause_logs, n_refusal_logs;

static void sink(int level, const char *msg, void *userdata)
{
    if (level <= LOG_WARNING)
        n_warnings++;
    if (strstr(msg, "refusing new ones"))
        n_limit_logs++;
    if (strstr(msg, "pausing new connections"))
        n_pause_logs++;
    if (strstr(msg, "refused, only root may change") && level < LOG_DEBUG)
        n_refusal_logs++;
}

static int fake_handler(void *userdata, const char *method, struct json_object *params, const struct control_peer *peer,
                        struct json_object **reply, const char **error)
{
    struct fixture *fx = userdata;
    fx->handler_calls++;
    if (fx->handler_delay_us)
        usleep(fx->handler_delay_us);
    if (fx->handler_mode == 1)
        return -EIO;
    if (fx->handler_mode == 2) {
        *reply = json_object_new_array();
        return 0;
    }
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "method", json_object_new_string(method));
    json_object_object_add(o, "peer_uid", json_object_new_int64(peer->uid));
    json_object_object_add(o, "peer_pid", json_object_new_int64(peer->pid));
    if (strcmp(method, "io.turbosched.Dump") == 0 && fx->dump_size) {
        char *filler = malloc(fx->dump_size + 1);
        memset(filler, 'x', fx->dump_size);
        filler[fx->dump_size] = '\0';
        json_object_object_add(o, "filler", json_object_new_string(filler));
        free(filler);
    } else if (strcmp(method, "io.turbosched.Explain") == 0) {
        struct json_object *pid;
        assert_true(json_object_object_get_ex(params, "pid", &pid));
        if (json_object_get_int64(pid) == 999999) {
            *error = TS_ERROR_NO_SUCH_PROCESS;
            *reply = o;
            return -ESRCH;
        }
        json_object_object_add(o, "pid", json_object_get(pid));
    } else if (strcmp(method, "io.turbosched.Reload") == 0) {
        fx->reloads++;
    }
    *reply = o;
    return 0;
}

static int fx_start(struct fixture *fx, const char *group, unsigned max_clients)
{
    snprintf(fx->dir, sizeof fx->dir, "/tmp/ts-control-XXXXXX");
    assert_non_null(mkdtemp(fx->dir));
    snprintf(fx->path, sizeof fx->path, "%s/run/control", fx->dir);
    assert_int_equal(sd_event_new(&fx->e), 0);
    return control_server_new(fx->e, fx->path, group, max_clients, fake_handler, fx, &fx->s);
}

static int setup(void **state)
{
    struct fixture *fx = calloc(1, sizeof *fx);
    log_set_sink(sink, NULL);
    n_warnings = n_limit_logs = n_pause_logs = n_refusal_logs = 0;
    assert_int_equal(fx_start(fx, NULL, 0), 0);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;
    control_server_free(fx->s);
    sd_event_unref(fx->e);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fx->dir);
    assert_int_equal(system(cmd), 0);
    free(fx);
    log_set_sink(NULL, NULL);
    return 0;
}

static void pump(struct fixture *fx) { assert_true(sd_event_run(fx->e, 1000) >= 0); }

static int client_connect(const char *path)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    strcpy(sa.sun_path, path);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

static void send_all(struct fixture *fx, int fd, const void *data, size_t len)
{
    uint64_t deadline = now_ms() + TIMEOUT_MS;
    for (size_t off = 0; off < len;) {
        ssize_t n = send(fd, (const char *)data + off, len - off, MSG_NOSIGNAL);
        if (n < 0) {
            assert_int_equal(errno, EAGAIN);
            assert_true(now_ms() < deadline);
            pump(fx);
            continue;
        }
        off += (size_t)n;
    }
}

static void send_str(struct fixture *fx, int fd, const char *s)
{
    send_all(fx, fd, s, strlen(s) + 1); /* with its NUL */
}

/* One reply frame, or NULL on EOF. Pumps the server while waiting. */
static struct json_object *recv_reply(struct fixture *fx, int fd, char **error)
{
    struct varlink_reader rd;
    varlink_reader_init(&rd, SIZE_MAX - 1);
    uint64_t deadline = now_ms() + TIMEOUT_MS;
    struct json_object *params = NULL;
    *error = NULL;
    for (;;) {
        const char *msg;
        size_t len;
        if (varlink_reader_next(&rd, &msg, &len) > 0) {
            assert_int_equal(varlink_reply_decode(msg, len, &params, error), 0);
            /* A test reads one frame at a time; a second queued frame would be lost here. */
            assert_int_equal(varlink_reader_pending(&rd), 0);
            break;
        }
        char buf[65536];
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n == 0 || (n < 0 && errno == ECONNRESET))
            break;
        if (n < 0) {
            assert_int_equal(errno, EAGAIN);
            assert_true(now_ms() < deadline);
            pump(fx);
            continue;
        }
        assert_int_equal(varlink_reader_feed(&rd, buf, (size_t)n), 0);
    }
    varlink_reader_done(&rd);
    return params;
}

/* Reads exactly one frame at a time even when several replies are queued. */
static struct json_object *recv_one(struct fixture *fx, int fd, char **error)
{
    char *frame = NULL;
    size_t len = 0;
    uint64_t deadline = now_ms() + TIMEOUT_MS;
    for (;;) {
        char ch;
        ssize_t n = recv(fd, &ch, 1, 0);
        if (n == 0 || (n < 0 && errno == ECONNRESET)) {
            free(frame);
            *error = NULL;
            return NULL;
        }
        if (n < 0) {
            assert_int_equal(errno, EAGAIN);
            assert_true(now_ms() < deadline);
            pump(fx);
            continue;
        }
        frame = realloc(frame, len + 1);
        frame[len] = ch;
        if (ch == '\0')
            break;
        len++;
    }
    struct json_object *params;
    assert_int_equal(varlink_reply_decode(frame, len, &params, error), 0);
    free(frame);
    return params;
}

static bool is_eof(struct fixture *fx, int fd)
{
    char *err;
    struct json_object *p = recv_reply(fx, fd, &err);
    bool eof = p == NULL;
    json_object_put(p);
    free(err);
    return eof;
}

static struct json_object *call(struct fixture *fx, int fd, const char *request, char **error)
{
    send_str(fx, fd, request);
    return recv_reply(fx, fd, error);
}

static const char *get_str(struct json_object *o, const char *key)
{
    struct json_object *v;
    assert_true(json_object_object_get_ex(o, key, &v));
    return json_object_get_string(v);
}

static void expect_error(struct fixture *fx, int fd, const char *request, const char *error_name)
{
    char *err;
    struct json_object *p = call(fx, fd, request, &err);
    assert_non_null(p);
    assert_non_null(err);
    assert_string_equal(err, error_name);
    json_object_put(p);
    free(err);
}

static void wait_for_clients(struct fixture *fx, unsigned n)
{
    uint64_t deadline = now_ms() + TIMEOUT_MS;
    while (control_server_n_clients(fx->s) != n) {
        assert_true(now_ms() < deadline);
        pump(fx);
    }
}

/* Until the server has taken or refused n connections. */
static void wait_for_connections(struct fixture *fx, unsigned long n)
{
    uint64_t deadline = now_ms() + TIMEOUT_MS;
    while (control_server_n_clients(fx->s) + control_server_n_refused(fx->s) < n) {
        assert_true(now_ms() < deadline);
        pump(fx);
    }
}

/* Until the handler has run at least once. */
static void wait_for_handler(struct fixture *fx)
{
    uint64_t deadline = now_ms() + TIMEOUT_MS;
    while (fx->handler_calls == 0) {
        assert_true(now_ms() < deadline);
        pump(fx);
    }
}

/* A new connection asks for Status: whether it was answered without an
 * error (the caller asserts, so a failure names its line). */
static bool status_answered(struct fixture *fx)
{
    int fd = client_connect(fx->path);
    char *err;
    struct json_object *p = call(fx, fd, "{\"method\":\"io.turbosched.Status\"}", &err);
    bool ok = err == NULL;
    json_object_put(p);
    free(err);
    close(fd);
    return ok;
}

static void test_every_method(void **state)
{
    struct fixture *fx = *state;
    int fd = client_connect(fx->path);
    assert_true(fd >= 0);
    char *err;

    struct json_object *p = call(fx, fd, "{\"method\":\"org.varlink.service.GetInfo\"}", &err);
    assert_null(err);
    assert_string_equal(get_str(p, "product"), "turboschedd");
    struct json_object *ifaces;
    assert_true(json_object_object_get_ex(p, "interfaces", &ifaces));
    assert_int_equal(json_object_array_length(ifaces), 2);
    json_object_put(p);

    static const char *const methods[] = {"io.turbosched.Status", "io.turbosched.Dump", "io.turbosched.Metrics"};
    for (size_t i = 0; i < ELEMENTSOF(methods); i++) {
        char req[128];
        snprintf(req, sizeof req, "{\"method\":\"%s\",\"parameters\":{}}", methods[i]);
        p = call(fx, fd, req, &err);
        assert_null(err);
        assert_string_equal(get_str(p, "method"), methods[i]);
        assert_int_equal(atoi(get_str(p, "peer_pid")), getpid());
        assert_int_equal(atoi(get_str(p, "peer_uid")), getuid());
        json_object_put(p);
    }

    p = call(fx, fd, "{\"method\":\"io.turbosched.Explain\",\"parameters\":{\"pid\":4242}}", &err);
    assert_null(err);
    assert_string_equal(get_str(p, "pid"), "4242");
    json_object_put(p);

    /* A handler error carries its name and parameters through. */
    p = call(fx, fd, "{\"method\":\"io.turbosched.Explain\",\"parameters\":{\"pid\":999999}}", &err);
    assert_string_equal(err, TS_ERROR_NO_SUCH_PROCESS);
    assert_string_equal(get_str(p, "method"), "io.turbosched.Explain");
    json_object_put(p);
    free(err);

    p = call(fx, fd, "{\"method\":\"io.turbosched.Reload\"}", &err);
    if (getuid() == 0) {
        assert_null(err);
        assert_int_equal(fx->reloads, 1);
    } else {
        assert_string_equal(err, TS_ERROR_PERMISSION_DENIED);
        assert_int_equal(fx->reloads, 0);
        free(err);
    }
    json_object_put(p);
    close(fd);
    wait_for_clients(fx, 0);
}

static void test_pipelined_and_oneway(void **state)
{
    struct fixture *fx = *state;
    int fd = client_connect(fx->path);
    /* Three requests in one write, the first one-way: two replies, in order. */
    const char req[] = "{\"method\":\"io.turbosched.Reload\",\"oneway\":true}\0"
                       "{\"method\":\"io.turbosched.Status\"}\0"
                       "{\"method\":\"io.turbosched.Metrics\"}";
    send_all(fx, fd, req, sizeof req);
    char *err;
    struct json_object *p = recv_one(fx, fd, &err);
    assert_null(err);
    assert_string_equal(get_str(p, "method"), "io.turbosched.Status");
    json_object_put(p);
    p = recv_one(fx, fd, &err);
    assert_null(err);
    assert_string_equal(get_str(p, "method"), "io.turbosched.Metrics");
    json_object_put(p);
    assert_int_equal(fx->reloads, getuid() == 0 ? 1 : 0);
    close(fd);
}

static void test_errors_keep_connection(void **state)
{
    struct fixture *fx = *state;
    int fd = client_connect(fx->path);
    char *err;
    struct json_object *p = call(fx, fd, "{\"method\":\"io.turbosched.Frobnicate\"}", &err);
    assert_string_equal(err, VARLINK_ERROR_METHOD_NOT_FOUND);
    assert_string_equal(get_str(p, "method"), "io.turbosched.Frobnicate");
    json_object_put(p);
    free(err);

    expect_error(fx, fd, "{\"method\":", TS_ERROR_INVALID_REQUEST);
    expect_error(fx, fd, "[1,2,3]", TS_ERROR_INVALID_REQUEST);
    expect_error(fx, fd, "\"io.turbosched.Status\"", TS_ERROR_INVALID_REQUEST);
    expect_error(fx, fd, "{\"parameters\":{}}", TS_ERROR_INVALID_REQUEST);
    expect_error(fx, fd, "{\"method\":42}", TS_ERROR_INVALID_REQUEST);
    expect_error(fx, fd, "{\"method\":\"Status\"}", TS_ERROR_INVALID_REQUEST);
    expect_error(fx, fd, "{\"method\":\"io.turbosched.Status\",\"parameters\":[]}", TS_ERROR_INVALID_REQUEST);
    expect_error(fx, fd, "{\"method\":\"io.turbosched.Status\"} trailing", TS_ERROR_INVALID_REQUEST);
    expect_error(fx, fd, "", TS_ERROR_INVALID_REQUEST);

    p = call(fx, fd, "{\"method\":\"io.turbosched.Explain\",\"parameters\":{\"pid\":\"1\"}}", &err);
    assert_string_equal(err, VARLINK_ERROR_INVALID_PARAMETER);
    assert_string_equal(get_str(p, "parameter"), "pid");
    json_object_put(p);
    free(err);
    expect_error(fx, fd, "{\"method\":\"io.turbosched.Explain\",\"parameters\":{\"pid\":-1}}",
                 VARLINK_ERROR_INVALID_PARAMETER);
    expect_error(fx, fd, "{\"method\":\"io.turbosched.Explain\"}", VARLINK_ERROR_INVALID_PARAMETER);
    assert_int_equal(fx->handler_calls, 0);

    /* Still usable after all that. */
    p = call(fx, fd, "{\"method\":\"io.turbosched.Status\"}", &err);
    assert_null(err);
    json_object_put(p);

    fx->handler_mode = 1;
    expect_error(fx, fd, "{\"method\":\"io.turbosched.Status\"}", TS_ERROR_INTERNAL);
    fx->handler_mode = 2;
    expect_error(fx, fd, "{\"method\":\"io.turbosched.Status\"}", TS_ERROR_INTERNAL);
    close(fd);
}

static void test_oversized_request(void **state)
{
    struct fixture *fx = *state;
    control_server_set_limits(fx->s, 1024, 0, 0);
    for (int with_nul = 0; with_nul < 2; with_nul++) {
        int fd = client_connect(fx->path);
        size_t len = 4000;
        char *big = malloc(len);
        memset(big, ' ', len);
        memcpy(big, "{\"method\":\"io.turbosched.Status\",\"parameters\":{\"x\":\"", 52);
        big[len - 1] = with_nul ? '\0' : ' ';
        send_all(fx, fd, big, len);
        free(big);
        char *err;
        struct json_object *p = recv_reply(fx, fd, &err);
        assert_non_null(p);
        assert_string_equal(err, TS_ERROR_REQUEST_TOO_LARGE);
        assert_string_equal(get_str(p, "max_bytes"), "1024");
        json_object_put(p);
        free(err);
        assert_true(is_eof(fx, fd));
        close(fd);
    }
    assert_int_equal(fx->handler_calls, 0);
    /* Just under the bound is fine. */
    int fd = client_connect(fx->path);
    /* Exactly 1024 bytes before the NUL: the bound is inclusive. */
    char req[1025];
    const char *head = "{\"method\":\"io.turbosched.Status\",\"parameters\":{\"x\":\"";
    int pad = 1024 - (int)strlen(head) - 3;
    int n = snprintf(req, sizeof req, "%s%0*d\"}}", head, pad, 0);
    assert_int_equal(n, 1024);
    char *err;
    struct json_object *p = call(fx, fd, req, &err);
    assert_null(err);
    json_object_put(p);
    close(fd);
}

static void test_partial_and_bytewise(void **state)
{
    struct fixture *fx = *state;
    int fd = client_connect(fx->path);
    const char *req = "{\"method\":\"io.turbosched.Status\"}";
    send_all(fx, fd, req, 10);
    for (int i = 0; i < 20; i++)
        assert_true(sd_event_run(fx->e, 0) >= 0);
    char ch;
    assert_int_equal(recv(fd, &ch, 1, 0), -1);
    assert_int_equal(errno, EAGAIN);
    assert_int_equal(fx->handler_calls, 0);
    send_str(fx, fd, req + 10);
    char *err;
    struct json_object *p = recv_reply(fx, fd, &err);
    assert_null(err);
    assert_string_equal(get_str(p, "method"), "io.turbosched.Status");
    json_object_put(p);

    /* Byte by byte, the server running between bytes. */
    const char *req2 = "{\"method\":\"io.turbosched.Explain\",\"parameters\":{\"pid\":7}}";
    for (size_t i = 0; i <= strlen(req2); i++) {
        send_all(fx, fd, req2 + i, 1);
        assert_true(sd_event_run(fx->e, 0) >= 0);
    }
    p = recv_reply(fx, fd, &err);
    assert_null(err);
    assert_string_equal(get_str(p, "pid"), "7");
    json_object_put(p);
    close(fd);
}

static void test_half_request_times_out(void **state)
{
    struct fixture *fx = *state;
    control_server_set_limits(fx->s, 0, 0, 200);
    int fd = client_connect(fx->path);
    send_all(fx, fd, "{\"method\":", 10);
    wait_for_clients(fx, 1);
    assert_true(is_eof(fx, fd));
    wait_for_clients(fx, 0);
    close(fd);
}

static void test_shutdown_write_still_answered(void **state)
{
    struct fixture *fx = *state;
    int fd = client_connect(fx->path);
    send_str(fx, fd, "{\"method\":\"io.turbosched.Status\"}");
    assert_int_equal(shutdown(fd, SHUT_WR), 0);
    char *err;
    struct json_object *p = recv_reply(fx, fd, &err);
    assert_non_null(p);
    assert_null(err);
    json_object_put(p);
    assert_true(is_eof(fx, fd));
    close(fd);
    wait_for_clients(fx, 0);
}

static void test_many_clients(void **state)
{
    struct fixture *fx = *state;
    control_server_free(fx->s);
    assert_int_equal(control_server_new(fx->e, fx->path, NULL, 64, fake_handler, fx, &fx->s), 0);
    int fds[100];
    for (int i = 0; i < 100; i++) {
        fds[i] = client_connect(fx->path);
        assert_true(fds[i] >= 0);
    }
    wait_for_connections(fx, 100);
    assert_int_equal(control_server_n_clients(fx->s), 64);
    assert_int_equal(control_server_n_refused(fx->s), 36);
    assert_int_equal(n_limit_logs, 1);
    /* Accepted in connection order: the first 64 are served, the rest told why. */
    for (int i = 0; i < 100; i++) {
        char *err;
        if (i < 64) {
            send_str(fx, fds[i], "{\"method\":\"io.turbosched.Status\"}");
            continue;
        }
        struct json_object *p = recv_reply(fx, fds[i], &err);
        assert_non_null(p);
        assert_string_equal(err, TS_ERROR_TOO_MANY_CLIENTS);
        json_object_put(p);
        free(err);
        assert_true(is_eof(fx, fds[i]));
        close(fds[i]);
    }
    for (int i = 0; i < 64; i++) {
        char *err;
        struct json_object *p = recv_reply(fx, fds[i], &err);
        assert_non_null(p);
        assert_null(err);
        json_object_put(p);
    }
    assert_int_equal(fx->handler_calls, 64);
    for (int i = 0; i < 64; i++)
        close(fds[i]);
    wait_for_clients(fx, 0);
    /* Room again, and the next saturation would be logged again. */
    assert_true(status_answered(fx));
}

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* One loop iteration, timing only the dispatch: how long the daemon's loop
 * would be deaf to netlink and to the watchdog. */
struct loop_stats {
    uint64_t max_dispatch_us;
    unsigned max_calls;
};

static void timed_pump(struct fixture *fx, struct loop_stats *st)
{
    int r = sd_event_prepare(fx->e);
    assert_true(r >= 0);
    if (r == 0) {
        r = sd_event_wait(fx->e, 100 * 1000);
        assert_true(r >= 0);
        if (r == 0)
            return;
    }
    unsigned calls = fx->handler_calls;
    uint64_t t0 = now_us();
    assert_true(sd_event_dispatch(fx->e) >= 0);
    uint64_t dt = now_us() - t0;
    st->max_dispatch_us = MAX(st->max_dispatch_us, dt);
    st->max_calls = MAX(st->max_calls, fx->handler_calls - calls);
}

/* A reply frame on a non-blocking socket, pumping (timed) meanwhile. */
static void await_reply(struct fixture *fx, int fd, struct loop_stats *st, const char *what)
{
    char buf[4096];
    size_t len = 0;
    uint64_t deadline = now_ms() + TIMEOUT_MS;
    for (;;) {
        ssize_t n = recv(fd, buf + len, sizeof buf - len, 0);
        if (n > 0) {
            len += (size_t)n;
            if (memchr(buf, '\0', len))
                break;
            assert_true(len < sizeof buf);
            continue;
        }
        assert_true(n < 0 && errno == EAGAIN);
        if (now_ms() >= deadline)
            fail_msg("%s: no reply within %d ms", what, TIMEOUT_MS);
        timed_pump(fx, st);
    }
    struct json_object *p;
    char *err;
    assert_int_equal(varlink_reply_decode(buf, strlen(buf), &p, &err), 0);
    if (err)
        fail_msg("%s: error %s", what, err);
    json_object_put(p);
}

/* A client pipelines a socket buffer full of requests, each costing the
 * daemon 1 ms: however many, one wake-up runs only a few, and another
 * client is answered while the rest wait. One-way queries are not run at
 * all. Before the bound, one dispatch ran all ~1,400 (1.5 s here; in the
 * daemon, Dumps of every task, until the watchdog fired). */
static void test_request_flood_bounded(void **state)
{
    struct fixture *fx = *state;
    fx->handler_delay_us = 1000;
    static const char *const kinds[] = {
        "{\"method\":\"io.turbosched.Dump\",\"oneway\":true}",
        "{\"method\":\"io.turbosched.Status\"}",
        "{\"method\":\"io.turbosched.Status\",\"oneway\":true}",
    };
    for (size_t k = 0; k < ELEMENTSOF(kinds); k++) {
        struct loop_stats st = {0};
        size_t one = strlen(kinds[k]) + 1, n = (64 * 1024) / one;
        char *flood = malloc(n * one);
        for (size_t i = 0; i < n; i++)
            memcpy(flood + i * one, kinds[k], one);
        int attacker = client_connect(fx->path), other = client_connect(fx->path);
        assert_true(attacker >= 0 && other >= 0);
        /* Into the kernel buffer in one go, before the server looks. */
        assert_int_equal(send(attacker, flood, n * one, MSG_NOSIGNAL), (ssize_t)(n * one));
        free(flood);
        unsigned calls0 = fx->handler_calls;
        uint64_t t0 = now_ms();
        send_str(fx, other, "{\"method\":\"io.turbosched.Status\"}");
        await_reply(fx, other, &st, "the other client");
        uint64_t answered_ms = now_ms() - t0;
        print_message("%s x%zu: other client answered after %" PRIu64 " ms, %u handler calls; "
                      "longest dispatch %" PRIu64 " us, most calls in one %u\n",
                      kinds[k], n, answered_ms, fx->handler_calls - calls0, st.max_dispatch_us, st.max_calls);
        assert_true(st.max_calls <= 8);
        assert_true(st.max_dispatch_us < 250 * 1000);
        if (k != 1) {
            /* The flood is worked off (a reply behind it proves it) without running a query. */
            send_str(fx, attacker, "{\"method\":\"io.turbosched.Metrics\"}");
            await_reply(fx, attacker, &st, "the flooding client");
            assert_int_equal(fx->handler_calls - calls0, 2);
        }
        assert_true(st.max_calls <= 8);
        assert_true(st.max_dispatch_us < 250 * 1000);
        close(attacker);
        close(other);
        wait_for_clients(fx, 0);
    }
}

static void test_slow_reader_over_bound_dropped(void **state)
{
    struct fixture *fx = *state;
    fx->dump_size = 4 << 20;
    control_server_set_limits(fx->s, 0, 64 << 10, 0);
    int slow = client_connect(fx->path);
    send_str(fx, slow, "{\"method\":\"io.turbosched.Dump\"}");
    wait_for_clients(fx, 1);
    wait_for_handler(fx);
    /* The kernel buffer takes a few hundred KiB at most; the rest is over
     * the bound, so the server dropped the client instead of keeping it. */
    wait_for_clients(fx, 0);
    assert_true(status_answered(fx));
    close(slow);
}

static void test_never_reading_client_does_not_block(void **state)
{
    struct fixture *fx = *state;
    fx->dump_size = 1 << 20;
    control_server_set_limits(fx->s, 0, 0, 1000);
    int slow = client_connect(fx->path);
    send_str(fx, slow, "{\"method\":\"io.turbosched.Dump\"}");
    wait_for_handler(fx);
    /* Its reply is stuck in our buffer; it keeps asking without reading
     * until its own socket is full (the server is not running meanwhile). */
    const char req[] = "{\"method\":\"io.turbosched.Dump\"}";
    unsigned sent = 0;
    for (;;) {
        ssize_t n = send(slow, req, sizeof req, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            assert_int_equal(errno, EAGAIN);
            break;
        }
        assert_int_equal(n, (ssize_t)sizeof req); /* small writes are atomic here */
        sent++;
    }
    assert_true(sent > 1);
    /* The server answers the others meanwhile. */
    for (int i = 0; i < 5; i++)
        assert_true(status_answered(fx));
    /* None of the slow client's queued requests was processed, so nothing
     * grew on its behalf. */
    assert_int_equal(fx->handler_calls, 1 + 5);
    /* And it is dropped when it makes no progress. */
    wait_for_clients(fx, 0);
    assert_int_equal(fx->handler_calls, 1 + 5);
    close(slow);
}

static void test_client_gone_with_reply_pending(void **state)
{
    struct fixture *fx = *state;
    fx->dump_size = 2 << 20;
    int fd = client_connect(fx->path);
    send_str(fx, fd, "{\"method\":\"io.turbosched.Dump\"}");
    wait_for_handler(fx);
    assert_int_equal(control_server_n_clients(fx->s), 1); /* reply still queued */
    close(fd);
    /* Noticed at once, long before the 30 s idle timeout. */
    wait_for_clients(fx, 0);
}

static void test_socket_file(void **state)
{
    struct fixture *fx = *state;
    struct stat st;
    assert_int_equal(stat(fx->path, &st), 0);
    assert_true(S_ISSOCK(st.st_mode));
    assert_int_equal(st.st_mode & 07777, 0600);
    char dir[160];
    snprintf(dir, sizeof dir, "%s/run", fx->dir);
    assert_int_equal(stat(dir, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0755);

    /* Even under a strict umask the directory we create is 0755. */
    mode_t old_umask = umask(077);
    struct control_server *deep = NULL;
    char deep_path[200];
    snprintf(deep_path, sizeof deep_path, "%s/a/b/control", fx->dir);
    assert_int_equal(control_server_new(fx->e, deep_path, NULL, 0, fake_handler, fx, &deep), 0);
    umask(old_umask);
    snprintf(dir, sizeof dir, "%s/a/b", fx->dir);
    assert_int_equal(stat(dir, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0755);
    assert_int_equal(stat(deep_path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    control_server_free(deep);
    assert_int_equal(access(deep_path, F_OK), -1); /* unlinked on free */

    /* A live server owns the path. */
    struct control_server *other = NULL;
    assert_int_equal(control_server_new(fx->e, fx->path, NULL, 0, fake_handler, fx, &other), -EADDRINUSE);

    /* A stale socket (nobody listening) is replaced. */
    control_server_free(fx->s);
    fx->s = NULL;
    assert_int_equal(stat(fx->path, &st), -1);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    strcpy(sa.sun_path, fx->path);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    close(fd);
    assert_int_equal(control_server_new(fx->e, fx->path, NULL, 0, fake_handler, fx, &fx->s), 0);
    fd = client_connect(fx->path);
    assert_true(fd >= 0);
    close(fd);
    control_server_free(fx->s);
    fx->s = NULL;

    /* Something that is not a socket is left alone. */
    int f = open(fx->path, O_CREAT | O_WRONLY, 0644);
    close(f);
    assert_int_equal(control_server_new(fx->e, fx->path, NULL, 0, fake_handler, fx, &fx->s), -EEXIST);
    assert_int_equal(stat(fx->path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    unlink(fx->path);

    assert_int_equal(control_server_new(fx->e, fx->path, "no-such-group-here", 0, fake_handler, fx, &fx->s), -ENOENT);
    if (geteuid() != 0)
        return; /* giving the socket to another group needs root */
    assert_int_equal(control_server_new(fx->e, fx->path, "65534", 0, fake_handler, fx, &fx->s), 0);
    assert_int_equal(stat(fx->path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0660);
    assert_int_equal(st.st_gid, 65534);
}

/* Runs the server loop until the child exits; returns its exit status. */
static int run_child(struct fixture *fx, pid_t pid)
{
    uint64_t deadline = now_ms() + TIMEOUT_MS;
    for (;;) {
        int status;
        pid_t r = waitpid(pid, &status, WNOHANG);
        assert_true(r >= 0);
        if (r == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (now_ms() >= deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            fail_msg("child did not finish in time");
        }
        pump(fx);
    }
}

static int child_call(int fd, const char *req, char **error, struct json_object **params)
{
    if (send(fd, req, strlen(req) + 1, MSG_NOSIGNAL) < 0)
        return -1;
    char buf[4096];
    size_t len = 0;
    for (;;) {
        ssize_t n = recv(fd, buf + len, sizeof buf - len, 0);
        if (n <= 0)
            return -1;
        len += (size_t)n;
        if (memchr(buf, '\0', len))
            break;
        if (len == sizeof buf)
            return -1;
    }
    return varlink_reply_decode(buf, strlen(buf), params, error);
}

static void drop_to_nobody(void)
{
    if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
        _exit(10);
}

static int child_connect(const char *path)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    strcpy(sa.sun_path, path);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
        return -1;
    return fd;
}

/* The socket readable by group 65534 (nobody's), as control_group makes
 * it, for max_clients (0: the default). A test of it plays nobody, so it
 * needs root, and skips without. */
static void serve_nobody(struct fixture *fx, unsigned max_clients)
{
    if (geteuid() != 0)
        skip(); /* needs root to become another user */
    control_server_free(fx->s);
    assert_int_equal(chmod(fx->dir, 0755), 0);
    assert_int_equal(control_server_new(fx->e, fx->path, "65534", max_clients, fake_handler, fx, &fx->s), 0);
}

/* Forks a client that is nobody: returns 0 in the child, connected on
 * *fd (it exits 11 if it cannot connect), the child's PID in the parent. */
static pid_t fork_nobody(struct fixture *fx, int *fd)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        drop_to_nobody();
        *fd = child_connect(fx->path);
        if (*fd < 0)
            _exit(11);
    }
    return pid;
}

/* A child, nobody, holding n connections that each sent req (len bytes),
 * until hog_release: started once they are all sent. */
struct hog {
    pid_t pid;
    int ready, done; /* the parent's ends of the pipes */
};

static struct hog hog_start(struct fixture *fx, int n, const char *req, size_t len)
{
    int ready[2], done[2];
    assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
    assert_int_equal(pipe2(done, O_CLOEXEC), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(ready[0]);
        close(done[1]);
        drop_to_nobody();
        for (int i = 0; i < n; i++) {
            int fd = child_connect(fx->path);
            if (fd < 0 || send(fd, req, len, MSG_NOSIGNAL) != (ssize_t)len)
                _exit(20);
        }
        char ch = 'r';
        if (write(ready[1], &ch, 1) != 1)
            _exit(21);
        /* Hold every connection until the parent is done. */
        if (read(done[0], &ch, 1) < 0)
            _exit(22);
        _exit(0);
    }
    close(ready[1]);
    close(done[0]);
    char ch;
    assert_int_equal(read(ready[0], &ch, 1), 1);
    return (struct hog){.pid = pid, .ready = ready[0], .done = done[1]};
}

static void hog_release(struct fixture *fx, struct hog *h)
{
    assert_int_equal(write(h->done, "d", 1), 1);
    close(h->done);
    close(h->ready);
    assert_int_equal(run_child(fx, h->pid), 0);
}

static void test_peer_credentials(void **state)
{
    struct fixture *fx = *state;
    int fd = -1;
    /* Group-readable socket: nobody (in group 65534) may connect and read. */
    serve_nobody(fx, 0);
    pid_t pid = fork_nobody(fx, &fd);
    if (pid == 0) {
        char *err;
        struct json_object *p;
        if (child_call(fd, "{\"method\":\"io.turbosched.Reload\"}", &err, &p) < 0)
            _exit(12);
        if (!err || strcmp(err, TS_ERROR_PERMISSION_DENIED) != 0)
            _exit(13);
        if (child_call(fd, "{\"method\":\"io.turbosched.Status\"}", &err, &p) < 0 || err)
            _exit(14);
        struct json_object *uid;
        if (!json_object_object_get_ex(p, "peer_uid", &uid) || json_object_get_int64(uid) != 65534)
            _exit(15);
        _exit(0);
    }
    assert_int_equal(run_child(fx, pid), 0);
    assert_int_equal(fx->reloads, 0);
    assert_int_equal(fx->handler_calls, 1); /* Status only: Reload never reached the handler */

    /* Owner-only socket: nobody cannot even connect. */
    control_server_free(fx->s);
    assert_int_equal(control_server_new(fx->e, fx->path, NULL, 0, fake_handler, fx, &fx->s), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        drop_to_nobody();
        _exit(child_connect(fx->path) < 0 && errno == EACCES ? 0 : 16);
    }
    assert_int_equal(run_child(fx, pid), 0);
}

/* The method table the server checks: a row for each of our methods and
 * none for others; root only for what changes the daemon's state, the
 * whole budget and the unprivileged rate for what grows with the tasks,
 * another rate for the reports of the whole daemon (Status, Metrics);
 * GetInfo the server's own. */
static void test_method_table(void **state)
{
    assert_null(control_method_find(VARLINK_METHOD_UNKNOWN));
    assert_null(control_method_find(_VARLINK_METHOD_MAX));
    for (int id = 0; id < _VARLINK_METHOD_MAX; id++) {
        const struct control_method *m = control_method_find((enum varlink_method)id);
        assert_non_null(m);
        assert_int_equal(m->id, id);
        assert_int_equal(m->root_only,
                         id == VARLINK_METHOD_RELOAD || id == VARLINK_METHOD_PAUSE || id == VARLINK_METHOD_RESUME);
        enum control_cost want = id == VARLINK_METHOD_DUMP || id == VARLINK_METHOD_EXPLAIN     ? CONTROL_COST_TASKS
                                 : id == VARLINK_METHOD_STATUS || id == VARLINK_METHOD_METRICS ? CONTROL_COST_RATED
                                                                                               : CONTROL_COST_ONE;
        assert_int_equal(m->cost, want);
        assert_int_equal(m->fn == NULL, id == VARLINK_METHOD_GET_INFO);
    }
}

/* Each method of the table, called by nobody: the root-only ones refused
 * before the handler, the others answered; a method not ours is not found. */
static void test_table_permissions(void **state)
{
    struct fixture *fx = *state;
    int fd = -1;
    serve_nobody(fx, 0);
    unsigned reached = 0;
    for (int id = 0; id < _VARLINK_METHOD_MAX; id++)
        reached += !control_method_find((enum varlink_method)id)->root_only &&
                   control_method_find((enum varlink_method)id)->fn;
    pid_t pid = fork_nobody(fx, &fd);
    if (pid == 0) {
        for (int id = 0; id < _VARLINK_METHOD_MAX; id++) {
            char req[128], *err;
            struct json_object *p;
            snprintf(req, sizeof req, "{\"method\":\"%s\"%s}", varlink_method_name((enum varlink_method)id),
                     id == VARLINK_METHOD_EXPLAIN ? ",\"parameters\":{\"pid\":4242}" : "");
            if (child_call(fd, req, &err, &p) < 0)
                _exit(12);
            bool refused = err && strcmp(err, TS_ERROR_PERMISSION_DENIED) == 0;
            if (refused != control_method_find((enum varlink_method)id)->root_only || (!refused && err))
                _exit(20 + id);
        }
        char *err;
        struct json_object *p;
        if (child_call(fd, "{\"method\":\"io.turbosched.Nope\"}", &err, &p) < 0 || !err ||
            strcmp(err, VARLINK_ERROR_METHOD_NOT_FOUND) != 0)
            _exit(13);
        _exit(0);
    }
    assert_int_equal(run_child(fx, pid), 0);
    assert_int_equal(fx->reloads, 0);
    assert_int_equal(fx->handler_calls, reached);
}

/* An unprivileged client that asks for a reload again and again is refused
 * each time, but the journal hears of the first LOG_RATELIMIT_BURST only. */
static void test_refusals_logged_bounded(void **state)
{
    struct fixture *fx = *state;
    int fd = -1;
    serve_nobody(fx, 0);
    pid_t pid = fork_nobody(fx, &fd);
    if (pid == 0) {
        for (unsigned i = 0; i < 3 * LOG_RATELIMIT_BURST; i++) {
            char *err;
            struct json_object *p;
            if (child_call(fd, "{\"method\":\"io.turbosched.Reload\"}", &err, &p) < 0)
                _exit(12);
            if (!err || strcmp(err, TS_ERROR_PERMISSION_DENIED) != 0)
                _exit(13);
        }
        _exit(0);
    }
    assert_int_equal(run_child(fx, pid), 0);
    assert_int_equal(fx->reloads, 0);
    assert_int_equal(n_refusal_logs, LOG_RATELIMIT_BURST);
}

/* An unprivileged user opens 100 connections and keeps each alive with a
 * byte (a request never finished), as one could forever by sending a byte
 * every 30 s. Root must still be answered, and so must another user. Before
 * slots were kept for root, that user held all 64 and root was refused. */
static void test_slot_exhaustion_by_user(void **state)
{
    struct fixture *fx = *state;
    serve_nobody(fx, 64);
    struct hog hog = hog_start(fx, 100, "{", 1);
    wait_for_connections(fx, 100);
    unsigned held = control_server_n_clients(fx->s);
    print_message("uid 65534 holds %u of 64 slots, %lu refused\n", held, control_server_n_refused(fx->s));
    assert_true(held < 64);

    /* Root gets in and gets an answer. */
    int fd = client_connect(fx->path);
    assert_true(fd >= 0);
    char *err;
    struct json_object *p = call(fx, fd, "{\"method\":\"io.turbosched.Status\"}", &err);
    assert_non_null(p);
    if (err)
        fail_msg("root was answered %s", err);
    assert_int_equal(atoi(get_str(p, "peer_uid")), 0);
    json_object_put(p);

    /* So does another user. */
    pid_t other = fork();
    assert_true(other >= 0);
    if (other == 0) {
        if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(1) < 0)
            _exit(10);
        int cfd = child_connect(fx->path);
        if (cfd < 0)
            _exit(11);
        struct json_object *q;
        char *e2;
        if (child_call(cfd, "{\"method\":\"io.turbosched.Status\"}", &e2, &q) < 0)
            _exit(12);
        _exit(e2 ? 13 : 0);
    }
    assert_int_equal(run_child(fx, other), 0);

    /* Root fills every slot left, and one more: the user's connection idle
     * longest makes room for it. */
    int extra[64], n_extra = 0;
    while (control_server_n_clients(fx->s) < 64) {
        extra[n_extra] = client_connect(fx->path);
        assert_true(extra[n_extra] >= 0);
        p = call(fx, extra[n_extra++], "{\"method\":\"io.turbosched.Status\"}", &err);
        assert_non_null(p);
        assert_null(err);
        json_object_put(p);
    }
    extra[n_extra] = client_connect(fx->path);
    p = call(fx, extra[n_extra++], "{\"method\":\"io.turbosched.Status\"}", &err);
    assert_non_null(p);
    if (err)
        fail_msg("root, with all slots taken, was answered %s", err);
    json_object_put(p);
    assert_int_equal(control_server_n_clients(fx->s), 64);
    for (int i = 0; i < n_extra; i++)
        close(extra[i]);
    close(fd);
    hog_release(fx, &hog);
}

/* Requests req from an unprivileged user: a burst, then
 * io.turbosched.Busy (held for held_ms first), and the connection stays
 * usable for another method (other), whose rate is not req's. Root is not
 * limited. */
static void unprivileged_rate(struct fixture *fx, const char *req, unsigned burst, unsigned held_ms, const char *other)
{
    int fd = -1;
    serve_nobody(fx, 0);
    pid_t pid = fork_nobody(fx, &fd);
    if (pid == 0) {
        unsigned ok = 0, busy = 0;
        for (unsigned i = 0; i < burst + 22; i++) {
            struct json_object *q;
            char *e2;
            uint64_t t0 = now_ms();
            if (child_call(fd, req, &e2, &q) < 0)
                _exit(12);
            if (!e2)
                ok++;
            else if (strcmp(e2, TS_ERROR_BUSY) == 0 && now_ms() - t0 + 10 >= held_ms)
                busy++;
            else
                _exit(13);
        }
        /* The burst and what refilled meanwhile: fewer than asked. */
        if (ok < burst || ok > burst + 16 || busy == 0)
            _exit(14);
        struct json_object *q;
        char *e2;
        if (child_call(fd, other, &e2, &q) < 0 || e2)
            _exit(15);
        _exit(0);
    }
    assert_int_equal(run_child(fx, pid), 0);
    fd = client_connect(fx->path);
    for (int i = 0; i < 30; i++) {
        char *err;
        struct json_object *p = call(fx, fd, req, &err);
        assert_non_null(p);
        assert_null(err);
        json_object_put(p);
    }
    close(fd);
}

/* The unprivileged bucket: its burst, then its rate, however close together
 * the requests come (a refill rounded down at each request kept it empty). */
static void test_bucket_rate(void **state)
{
    struct control_bucket b = {.burst = UNPRIV_DUMP_BURST, .per_s = UNPRIV_DUMP_PER_S};
    uint64_t now = 1000000;
    unsigned granted = 0;
    for (uint64_t end = now + 20 * 1000000ull; now < end; now += 200) /* every 200 µs for 20 s */
        granted += control_bucket_take(&b, now);
    unsigned want = UNPRIV_DUMP_BURST + 20 * UNPRIV_DUMP_PER_S;
    if (granted + 1 < want || granted > want)
        fail_msg("granted %u, want %u", granted, want);
    /* a quiet minute fills it to the burst, no further */
    now += 60 * 1000000ull;
    granted = 0;
    for (int i = 0; i < 100; i++)
        granted += control_bucket_take(&b, now);
    assert_int_equal(granted, UNPRIV_DUMP_BURST);
}

static void test_unprivileged_dump_rate(void **state)
{
    unprivileged_rate(*state, "{\"method\":\"io.turbosched.Dump\"}", UNPRIV_DUMP_BURST, 0,
                      "{\"method\":\"io.turbosched.Status\"}");
}

static void test_unprivileged_explain_rate(void **state)
{
    unprivileged_rate(*state, "{\"method\":\"io.turbosched.Explain\",\"parameters\":{\"pid\":42}}", UNPRIV_DUMP_BURST,
                      0, "{\"method\":\"io.turbosched.Status\"}");
}

/* Statuses and Metrics, the reports of the whole daemon: their own rate
 * for unprivileged callers (a member of control_group asking for Status in
 * a loop kept the daemon busy), which leaves Dump's alone; a refusal comes
 * after the time a token takes, so that asking again at once is paced. */
static void test_unprivileged_status_rate(void **state)
{
    unprivileged_rate(*state, "{\"method\":\"io.turbosched.Status\"}", UNPRIV_STATUS_BURST, 1000 / UNPRIV_STATUS_PER_S,
                      "{\"method\":\"io.turbosched.Dump\"}");
}

static void test_unprivileged_metrics_rate(void **state)
{
    unprivileged_rate(*state, "{\"method\":\"io.turbosched.Metrics\"}", UNPRIV_STATUS_BURST, 1000 / UNPRIV_STATUS_PER_S,
                      "{\"method\":\"io.turbosched.Dump\"}");
}

/* Unprivileged clients that ask for large Dumps and never read them: the
 * replies they leave unread are bounded all together, not 16 MiB each, and
 * a Dump is refused before it is built once the bound is reached. */
static void test_unread_replies_bounded(void **state)
{
    struct fixture *fx = *state;
    serve_nobody(fx, 0);
    /* 2 MiB per client, so 8 MiB for all; each Dump leaves ~1.5 MiB unread. */
    control_server_set_limits(fx->s, 0, 2 << 20, 0);
    fx->dump_size = 1536 << 10;
    static const char dump[] = "{\"method\":\"io.turbosched.Dump\"}";
    struct hog hog = hog_start(fx, 8, dump, sizeof dump);
    /* Every Dump is either built or refused; let the loop settle. */
    uint64_t deadline = now_ms() + TIMEOUT_MS;
    size_t peak = 0;
    unsigned quiet = 0;
    while (quiet < 20) {
        assert_true(now_ms() < deadline);
        unsigned calls = fx->handler_calls;
        assert_true(sd_event_run(fx->e, 50 * 1000) >= 0);
        peak = MAX(peak, control_server_unsent(fx->s));
        quiet = fx->handler_calls == calls ? quiet + 1 : 0;
    }
    print_message("8 Dumps of 1.5 MiB unread: %u built, %zu bytes unsent at the peak, %u clients left\n",
                  fx->handler_calls, peak, control_server_n_clients(fx->s));
    assert_true(fx->handler_calls < 8);
    assert_true(peak <= (8u << 20) + (2u << 20));
    hog_release(fx, &hog);
}

/* Out of file descriptors, the listener pauses instead of spinning on a
 * readable socket, and takes the waiting client once they are free. */
static void test_accept_paused_out_of_fds(void **state)
{
    struct fixture *fx = *state;
    int c = client_connect(fx->path);
    assert_true(c >= 0);
    struct rlimit old;
    assert_int_equal(fd_limit_lower(0, &old), 0);
    uint64_t deadline = now_ms() + TIMEOUT_MS;
    while (!n_pause_logs && now_ms() < deadline)
        pump(fx);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
    assert_int_equal(n_pause_logs, 1);
    assert_int_equal(control_server_n_clients(fx->s), 0);
    while (control_server_n_clients(fx->s) == 0 && now_ms() < deadline)
        pump(fx);
    assert_int_equal(control_server_n_clients(fx->s), 1);
    assert_int_equal(n_pause_logs, 1);
    close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_every_method, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipelined_and_oneway, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors_keep_connection, setup, teardown),
        cmocka_unit_test_setup_teardown(test_oversized_request, setup, teardown),
        cmocka_unit_test_setup_teardown(test_partial_and_bytewise, setup, teardown),
        cmocka_unit_test_setup_teardown(test_half_request_times_out, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shutdown_write_still_answered, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_clients, setup, teardown),
        cmocka_unit_test_setup_teardown(test_request_flood_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slow_reader_over_bound_dropped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_never_reading_client_does_not_block, setup, teardown),
        cmocka_unit_test_setup_teardown(test_client_gone_with_reply_pending, setup, teardown),
        cmocka_unit_test_setup_teardown(test_socket_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals_logged_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_peer_credentials, setup, teardown),
        cmocka_unit_test(test_method_table),
        cmocka_unit_test_setup_teardown(test_table_permissions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slot_exhaustion_by_user, setup, teardown),
        cmocka_unit_test(test_bucket_rate),
        cmocka_unit_test_setup_teardown(test_unprivileged_dump_rate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unprivileged_explain_rate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unprivileged_status_rate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unprivileged_metrics_rate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unread_replies_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_accept_paused_out_of_fds, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
