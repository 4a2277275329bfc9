/* SPDX-License-Identifier: GPL-2.0-or-later */
/* turbosched-ctl end to end: the real binary talks to a control server run
 * by this test with canned replies; the rendered text, exit codes and the
 * Prometheus exposition (parsed back) are checked. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <json-c/json.h>
#include <poll.h>
#include <pty.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "control.h"
#include "log.h"
#include "util.h"
#include "varlink.h"

#define CTL TS_BUILD_DIR "/turbosched-ctl"
#define TIMEOUT_MS 10000

static const char status_json[] =
    "{\"version\":\"0.1.0\",\"uptime_s\":3725,\"mode\":\"affinity\",\"dry_run\":false,\"uclamp_supported\":false,"
    "\"unit_optin\":false,\"tasks\":{\"tracked\":412,\"jitter\":23,\"intensive\":2,\"ignore\":387,\"packed\":23},"
    "\"events\":{\"fork\":1,\"exec\":1,\"comm\":1,\"exit\":1,\"uid\":0,\"other\":0},\"overflows\":0,\"rename_floods\":"
    "3,\"renames_unheard\":true,\"rescans\":1,"
    "\"placement_latency\":{\"count\":800,\"p50_us\":85,\"p99_us\":950,\"max_us\":12001,\"within_20ms\":796},"
    "\"plan\":{\"restricted\":true,\"cpus\":\"0\",\"reason\":\"packed on core 0\","
    "\"benefit\":{\"plan\":\"isolate\",\"estimate\":\"isolate on 1 core: a trial, measuring\","
    "\"deep_idle\":{\"available\":true,\"measured\":true,\"woken_milli\":1300,\"wakes_per_s\":35,"
    "\"isolated\":{\"measured\":true,\"woken_milli\":80,\"wakes_per_s\":326,\"trial\":true},"
    "\"what\":\"cpuidle\"}}},"
    "\"last_reload\":{\"ok\":true,\"time_s\":1700000000,\"message\":\"12 rules\"},"
    "\"cpus\":[{\"cpu\":0,\"freq_khz\":null,\"idle\":[{\"name\":\"POLL\",\"usage\":12,\"time_us\":34},"
    "{\"name\":\"haltpoll\",\"usage\":123456,\"time_us\":98765432}]},"
    "{\"cpu\":1,\"freq_khz\":2400000,\"idle\":[{\"name\":\"POLL\",\"usage\":7,\"time_us\":1500}]}]}";

static const char dump_json[] =
    "{\"cores\":[{\"package\":0,\"core\":0,\"core_id\":0,\"threads\":\"0\",\"online\":\"0\",\"n_online\":1,"
    "\"capacity_milli\":1000,\"util_milli\":700,\"spare_milli\":300,\"busy\":true,\"in_mask\":true},"
    "{\"package\":0,\"core\":1,\"core_id\":1,\"threads\":\"1,17\",\"online\":\"1,17\",\"n_online\":2,"
    "\"capacity_milli\":1250,\"util_milli\":50,\"spare_milli\":1200,\"busy\":false,\"in_mask\":false},"
    "{\"package\":1,\"core\":2}],"
    "\"tasks\":[{\"tid\":1,\"pid\":1,\"comm\":\"x\",\"class\":\"jitter\",\"source\":\"rule\","
    "\"detail\":\"rule 'monitoring' (turbosched.conf:12)\",\"original_mask\":\"0-1\",\"current_mask\":\"0\"},"
    "{\"tid\":123456,\"pid\":123400,\"comm\":\"\\u001b[2Jevil\",\"class\":\"intensive\",\"source\":\"uclamp\","
    "\"detail\":\"util_max 1024\",\"original_mask\":\"0-1\",\"current_mask\":\"0-1\"},"
    "{\"tid\":5,\"pid\":5,\"comm\":\"quiet\",\"class\":\"ignore\",\"source\":\"default\"}],"
    "\"plan\":{\"restricted\":true,\"cpus\":\"0\",\"reason\":\"packed on core 0\","
    "\"benefit\":{\"plan\":\"isolate\",\"estimate\":\"isolate on 1 core: a trial, measuring\","
    "\"deep_idle\":{\"available\":true,\"measured\":true,\"woken_milli\":1300,\"wakes_per_s\":35,"
    "\"isolated\":{\"measured\":true,\"woken_milli\":80,\"wakes_per_s\":326,\"trial\":true},"
    "\"what\":\"cpuidle\"}}},"
    "\"cpus\":[{\"cpu\":0,\"freq_khz\":null,\"idle\":[]},{\"cpu\":1}]}";

static const char explain_json[] =
    "{\"pid\":42,\"threads_total\":300,\"threads\":[{\"tid\":42,\"comm\":\"chronyd\",\"class\":\"jitter\",\"source\":"
    "\"rule\","
    "\"detail\":\"rule 'time' (turbosched.conf:3)\",\"placement\":\"packed on CPUs 0 (plan: packed on core 0)\","
    "\"original_mask\":\"0-1\",\"current_mask\":\"0\"},{\"tid\":43},"
    "{\"tid\":44,\"comm\":\"chronyd-w\",\"class\":\"jitter\",\"source\":\"rule\","
    "\"detail\":\"rule 'time' (turbosched.conf:3)\",\"placement\":\"packed on CPUs 0 (plan: packed on core 0)\","
    "\"original_mask\":\"0-1\",\"current_mask\":\"0\"}]}";

static const char metrics_json[] =
    "{\"metrics\":[{\"name\":\"turbosched_tasks\",\"help\":\"Tracked threads by class\",\"type\":\"gauge\","
    "\"samples\":[{\"labels\":{\"class\":\"jitter\"},\"value\":23},{\"labels\":{\"class\":\"intensive\"},\"value\":2}]}"
    ","
    "{\"name\":\"turbosched_events_total\",\"help\":\"Proc connector events\\nby kind \\\\ type\",\"type\":\"counter\","
    "\"samples\":[{\"labels\":{\"kind\":\"fork\"},\"value\":1},{\"labels\":{\"kind\":\"a\\\"b\\\\c\\nd\"},\"value\":4}]"
    "},"
    "{\"name\":\"turbosched_tasks\",\"help\":\"dup\",\"type\":\"gauge\",\"samples\":[{\"labels\":{\"class\":\"ignore\"}"
    ",\"value\":387}]},"
    "{\"name\":\"uptime_seconds\",\"help\":\"Daemon uptime\",\"type\":\"bogus\",\"samples\":[{\"value\":12.5}]},"
    "{\"name\":\"turbosched_plan_restricted\",\"type\":\"gauge\",\"samples\":[{\"labels\":{},\"value\":true},{"
    "\"value\":null}]},"
    "{\"name\":\"turbosched_placement_latency_seconds\",\"help\":\"h\",\"type\":\"histogram\",\"samples\":["
    "{\"labels\":{\"le\":\"0.001\"},\"value\":2,\"suffix\":\"_bucket\"},"
    "{\"labels\":{\"le\":\"+Inf\"},\"value\":3,\"suffix\":\"_bucket\"},"
    "{\"labels\":{},\"value\":0.5,\"suffix\":\"_sum\"},{\"labels\":{},\"value\":3,\"suffix\":\"_count\"},"
    "{\"labels\":{},\"value\":1,\"suffix\":\"{x=\\\"y\\\"} 9\\n\"}]}]}";

struct fixture {
    char dir[64];
    char path[128];
    sd_event *e;
    struct control_server *s;
    bool deny_reload;
    const char *status_override;
    bool deny_pause; /* answer Pause and Resume as to a non-root caller */
    char calls[64];  /* P: Pause, R: Resume ({"session":true} lower case) */
    size_t n_calls;
};

static int handler(void *userdata, const char *method, struct json_object *params, const struct control_peer *peer,
                   struct json_object **reply, const char **error)
{
    struct fixture *fx = userdata;
    const char *text = "{}";
    if (strcmp(method, "io.turbosched.Status") == 0)
        text = fx->status_override ? fx->status_override : status_json;
    else if (strcmp(method, "io.turbosched.Dump") == 0)
        text = dump_json;
    else if (strcmp(method, "io.turbosched.Metrics") == 0)
        text = metrics_json;
    else if (strcmp(method, "io.turbosched.Explain") == 0) {
        struct json_object *pid;
        json_object_object_get_ex(params, "pid", &pid);
        if (json_object_get_int(pid) != 42) {
            *error = TS_ERROR_NO_SUCH_PROCESS;
            *reply = json_object_new_object();
            json_object_object_add(*reply, "message", json_object_new_string("no process 999"));
            return -ESRCH;
        }
        text = explain_json;
    } else if (strcmp(method, "io.turbosched.Pause") == 0 || strcmp(method, "io.turbosched.Resume") == 0) {
        bool pause = strcmp(method, "io.turbosched.Pause") == 0;
        struct json_object *v;
        bool session = json_object_object_get_ex(params, "session", &v) && json_object_get_boolean(v);
        if (fx->deny_pause) {
            *error = TS_ERROR_PERMISSION_DENIED;
            return -EPERM;
        }
        if (fx->n_calls + 1 < sizeof fx->calls)
            fx->calls[fx->n_calls++] = session ? (pause ? 'p' : 'r') : (pause ? 'P' : 'R');
        text = pause ? "{\"paused\":true,\"changed\":true,\"admin\":true,\"sessions\":0,\"undone\":3}"
                     : "{\"paused\":false,\"changed\":true,\"admin\":false,\"sessions\":0}";
    } else if (strcmp(method, "io.turbosched.Reload") == 0) {
        if (fx->deny_reload) {
            *error = TS_ERROR_PERMISSION_DENIED;
            return -EPERM;
        }
        text = "{\"message\":\"3 rules\"}";
    }
    *reply = json_tokener_parse(text);
    assert_non_null(*reply);
    return 0;
}

static void quiet(int level, const char *msg, void *userdata) {}

static int setup(void **state)
{
    struct fixture *fx = calloc(1, sizeof *fx);
    log_set_sink(quiet, NULL);
    snprintf(fx->dir, sizeof fx->dir, "/tmp/ts-ctl-XXXXXX");
    assert_non_null(mkdtemp(fx->dir));
    snprintf(fx->path, sizeof fx->path, "%s/control", fx->dir);
    assert_int_equal(sd_event_new(&fx->e), 0);
    assert_int_equal(control_server_new(fx->e, fx->path, NULL, 0, handler, fx, &fx->s), 0);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;
    control_server_free(fx->s);
    sd_event_unref(fx->e);
    rmdir(fx->dir);
    free(fx);
    log_set_sink(NULL, NULL);
    return 0;
}

struct run {
    int status;
    char *out, *err;
    size_t out_len, err_len;
};

static void run_free(struct run *r)
{
    free(r->out);
    free(r->err);
}

static void drain(int *fd, char **buf, size_t *len)
{
    if (*fd < 0)
        return;
    char tmp[4096];
    for (;;) {
        ssize_t n = read(*fd, tmp, sizeof tmp);
        if (n > 0) {
            *buf = realloc(*buf, *len + (size_t)n + 1);
            memcpy(*buf + *len, tmp, (size_t)n);
            *len += (size_t)n;
            (*buf)[*len] = '\0';
            continue;
        }
        if (n < 0 && errno == EAGAIN)
            return;
        close(*fd); /* EOF, or EIO on a pty whose other side is gone */
        *fd = -1;
        return;
    }
}

/* Runs turbosched-ctl with args (NULL-terminated) and extra environment,
 * serving its requests meanwhile. With use_pty, stdout is a terminal. */
static struct run ctl_run(struct fixture *fx, bool use_pty, const char *const *env, ...)
{
    const char *argv[16] = {CTL};
    int argc = 1;
    va_list ap;
    va_start(ap, env);
    for (const char *a; (a = va_arg(ap, const char *)) && argc < 15;)
        argv[argc++] = a;
    va_end(ap);
    argv[argc] = NULL;

    int out[2], err[2], pty_master = -1, pty_slave = -1;
    assert_int_equal(pipe2(err, O_CLOEXEC), 0);
    if (use_pty) {
        assert_int_equal(openpty(&pty_master, &pty_slave, NULL, NULL, NULL), 0);
        out[0] = pty_master;
        out[1] = pty_slave;
    } else {
        assert_int_equal(pipe2(out, O_CLOEXEC), 0);
    }
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(out[1], STDOUT_FILENO);
        dup2(err[1], STDERR_FILENO);
        unsetenv("NO_COLOR");
        setenv("TERM", "xterm", 1);
        for (size_t i = 0; env && env[i]; i += 2) {
            if (env[i + 1])
                setenv(env[i], env[i + 1], 1);
            else
                unsetenv(env[i]);
        }
        execv(CTL, (char **)argv);
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    fcntl(err[0], F_SETFL, O_NONBLOCK);
    struct run r = {.status = -1};
    int ofd = out[0], efd = err[0];
    uint64_t deadline = now_ms() + TIMEOUT_MS;
    bool exited = false;
    while (!exited || ofd >= 0 || efd >= 0) {
        assert_true(now_ms() < deadline);
        assert_true(sd_event_run(fx->e, 1000) >= 0);
        drain(&ofd, &r.out, &r.out_len);
        drain(&efd, &r.err, &r.err_len);
        int st;
        if (!exited && waitpid(pid, &st, WNOHANG) == pid) {
            exited = true;
            r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
            if (use_pty) {
                /* The pty stays open on our side; what was written is buffered. */
                drain(&ofd, &r.out, &r.out_len);
                if (ofd >= 0)
                    close(ofd);
                ofd = -1;
            }
        }
    }
    if (!r.out)
        r.out = strdup("");
    if (!r.err)
        r.err = strdup("");
    return r;
}

#define RUN(fx, ...) ctl_run(fx, false, NULL, __VA_ARGS__, (const char *)NULL)

/* Lines of the block whose first line starts (after blanks) with the word `header`. */
static size_t table_lines(const char *text, const char *header, char lines[][256], size_t max)
{
    const char *p = text;
    size_t hl = strlen(header);
    for (;;) {
        const char *q = p + strspn(p, " ");
        if (strncmp(q, header, hl) == 0 && (q[hl] == ' ' || q[hl] == '\n'))
            break;
        p = strchr(p, '\n');
        if (!p)
            fail_msg("no table starting with %s in:\n%s", header, text);
        p++;
    }
    size_t n = 0;
    while (*p && *p != '\n' && n < max) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        assert_true(len < 256);
        memcpy(lines[n], p, len);
        lines[n][len] = '\0';
        n++;
        p += len + (e ? 1 : 0);
    }
    return n;
}

/* Splits on runs of two or more spaces; returns the cells' start and end columns. */
static size_t cells(const char *line, size_t *start, size_t *end, size_t max)
{
    size_t n = 0, i = 0, len = strlen(line);
    while (i < len && n < max) {
        while (i < len && line[i] == ' ')
            i++;
        if (i >= len)
            break;
        start[n] = i;
        while (i < len && !(line[i] == ' ' && (i + 1 >= len || line[i + 1] == ' ')))
            i++;
        end[n++] = i;
    }
    return n;
}

/* Every column is aligned: same start (left-aligned) or same end (right-aligned) on every line. */
static void assert_aligned(char lines[][256], size_t n_lines, size_t n_cols)
{
    size_t s0[32], e0[32];
    assert_int_equal(cells(lines[0], s0, e0, 32), n_cols);
    for (size_t l = 1; l < n_lines; l++) {
        size_t s[32], e[32];
        size_t n = cells(lines[l], s, e, 32);
        if (n != n_cols)
            fail_msg("line '%s' has %zu cells, header has %zu", lines[l], n, n_cols);
        for (size_t c = 0; c < n_cols; c++)
            if (s[c] != s0[c] && e[c] != e0[c])
                fail_msg("column %zu misaligned in '%s' against '%s'", c, lines[l], lines[0]);
    }
    /* No trailing blanks. */
    for (size_t l = 0; l < n_lines; l++)
        assert_true(lines[l][strlen(lines[l]) - 1] != ' ');
}

static void test_status(void **state)
{
    struct fixture *fx = *state;
    struct run r = RUN(fx, "status", "--socket", fx->path);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "turboschedd 0.1.0, up 1h 2min\n"));
    assert_non_null(strstr(r.out, "Mode:          affinity\n"));
    assert_non_null(strstr(r.out, "412 tracked: 23 jitter, 2 intensive, 387 ignored; 23 packed"));
    assert_non_null(strstr(r.out, "Events:        fork 1, exec 1, comm 1, exit 1, uid 0, other 0; "
                                  "renames left unheard 3 times (now too)\n"));
    assert_non_null(strstr(r.out, "Plan:          jitter tasks on CPUs 0: packed on core 0\n"));
    assert_non_null(strstr(r.out, "Benefit:       isolate on 1 core: a trial, measuring\n"));
    assert_non_null(strstr(r.out, "Deep idle:     1.30 idle cores kept awake by free jitter, 35 wake-ups/s (cpuidle)\n"
                                  "               0.08 idle cores awake with the jitter isolated (a trial), "
                                  "326 wake-ups/s\n"));
    assert_non_null(
        strstr(r.out, "Placement:     800 on events, p50 85 us, p99 950 us, max 12001 us; 99.5% within 20 ms\n"));
    assert_non_null(strstr(r.out, "Last reload:   ok at "));
    assert_null(strchr(r.out, '\033')); /* a pipe gets no colour */
    char lines[8][256];
    size_t n = table_lines(r.out, "CPU", lines, 8);
    assert_int_equal(n, 3);
    assert_aligned(lines, n, 4);
    assert_non_null(strstr(lines[0], "POLL"));
    assert_non_null(strstr(lines[0], "haltpoll"));
    assert_non_null(strstr(lines[1], "n/a"));
    assert_non_null(strstr(lines[1], "12 (34us)"));
    assert_non_null(strstr(lines[1], "123456 (1min 38s)"));
    assert_non_null(strstr(lines[2], "2.40 GHz"));
    assert_non_null(strstr(lines[2], "7 (1.5ms)"));
    /* CPU 1 has no haltpoll state: "-" and still aligned. */
    assert_true(lines[2][strlen(lines[2]) - 1] == '-');
    run_free(&r);
}

static void test_status_missing_fields(void **state)
{
    struct fixture *fx = *state;
    fx->status_override = "{\"last_reload\":{\"ok\":false,\"message\":\"rules.conf:3: unknown key\"},"
                          "\"cpus\":[{\"cpu\":0,\"freq_khz\":0}],\"plan\":{}}";
    struct run r = RUN(fx, "status", "--socket", fx->path);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "turboschedd -, up -\n"));
    assert_non_null(strstr(r.out, "Tasks:         - tracked: - jitter, - intensive, - ignored; - packed\n"));
    assert_non_null(strstr(r.out, "Plan:          CPUs -: -\n"));
    assert_non_null(strstr(r.out, "Last reload:   failed: rules.conf:3: unknown key\n"));
    assert_non_null(strstr(r.out, "Placement:     none made for an event yet\n"));
    assert_non_null(strstr(r.out, "  0   n/a\n"));
    run_free(&r);
    fx->status_override = "{}";
    r = RUN(fx, "status", "--socket", fx->path);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "Last reload:   -\n"));
    assert_non_null(strstr(r.out, "CPU statistics: -\n"));
    run_free(&r);
}

static void test_dump_and_topology(void **state)
{
    struct fixture *fx = *state;
    struct run r = RUN(fx, "dump", "-s", fx->path);
    assert_int_equal(r.status, 0);
    char lines[8][256];
    size_t n = table_lines(r.out, "PKG", lines, 8);
    assert_int_equal(n, 4);
    assert_aligned(lines, n, 9);
    assert_non_null(strstr(lines[1], "70%"));
    assert_non_null(strstr(lines[1], "busy"));
    assert_non_null(strstr(lines[2], "1,17"));
    assert_non_null(strstr(lines[2], "1.25"));
    assert_non_null(strstr(lines[2], "4%"));
    assert_non_null(strstr(lines[2], "idle"));
    /* Core 2 came with nothing but its numbers: dashes, no crash. */
    size_t s[16], e[16];
    assert_int_equal(cells(lines[3], s, e, 16), 9);
    assert_int_equal(strncmp(lines[3] + s[2], "-", e[2] - s[2]), 0);

    n = table_lines(r.out, "TID", lines, 8);
    assert_int_equal(n, 3); /* the ignored task is not listed */
    assert_aligned(lines, n, 8);
    assert_non_null(strstr(lines[1], "rule 'monitoring' (turbosched.conf:12)"));
    /* A task name cannot send escape sequences to the terminal. */
    assert_non_null(strstr(lines[2], "?[2Jevil"));
    assert_null(strchr(r.out, '\033'));

    n = table_lines(r.out, "CPU", lines, 8);
    assert_int_equal(n, 3);
    assert_non_null(strstr(lines[1], "n/a"));
    assert_non_null(strstr(lines[2], "-")); /* no freq_khz field at all */
    assert_non_null(strstr(r.out, "No cpuidle states reported."));
    run_free(&r);

    r = RUN(fx, "topology", "--socket", fx->path);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "PKG"));
    assert_null(strstr(r.out, "TID"));
    assert_null(strstr(r.out, "FREQ"));
    run_free(&r);
}

static void test_explain(void **state)
{
    struct fixture *fx = *state;
    struct run r = RUN(fx, "explain", "42", "--socket", fx->path);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "Process 42: 300 threads, the first 3 explained\n"));
    /* Threads with the same explanation share one block. */
    assert_non_null(strstr(r.out, "\n  threads 42 (chronyd), 44 (chronyd-w): jitter\n"));
    assert_null(strstr(r.out, "thread 44"));
    assert_non_null(strstr(r.out, "placement      packed on CPUs 0 (plan: packed on core 0)"));
    assert_non_null(strstr(r.out, "\n  thread 43 (-): -\n"));
    run_free(&r);

    r = RUN(fx, "explain", "999", "--socket", fx->path);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "no such process 999: no process 999\n"));
    run_free(&r);
}

struct sample {
    char name[64];
    char labels[256]; /* unescaped, "k=v;k=v" */
    char value[32];
};

/* A strict reader of the text exposition format: HELP/TYPE once per family
 * and before its samples, families contiguous, names and escapes valid. */
static size_t parse_exposition(const char *text, struct sample *out, size_t max)
{
    char families[16][64];
    size_t n_fam = 0, n = 0;
    char current[64] = "";
    const char *p = text;
    while (*p) {
        const char *eol = strchr(p, '\n');
        assert_non_null(eol); /* every line ends with a newline */
        char line[512];
        assert_true((size_t)(eol - p) < sizeof line);
        memcpy(line, p, (size_t)(eol - p));
        line[eol - p] = '\0';
        p = eol + 1;
        char name[64];
        if (strncmp(line, "# HELP ", 7) == 0) {
            assert_int_equal(sscanf(line + 7, "%63s", name), 1);
            for (size_t i = 0; i < n_fam; i++)
                if (strcmp(families[i], name) == 0)
                    fail_msg("family %s appears twice", name);
            assert_true(n_fam < 16);
            strcpy(families[n_fam++], name);
            strcpy(current, name);
            /* HELP text: only \\ and \n escapes. */
            for (const char *h = line + 7 + strlen(name); *h; h++)
                if (*h == '\\') {
                    h++;
                    assert_true(*h == '\\' || *h == 'n');
                }
            continue;
        }
        if (strncmp(line, "# TYPE ", 7) == 0) {
            char type[32];
            assert_int_equal(sscanf(line + 7, "%63s %31s", name, type), 2);
            assert_string_equal(name, current);
            assert_true(strcmp(type, "counter") == 0 || strcmp(type, "gauge") == 0 || strcmp(type, "untyped") == 0 ||
                        strcmp(type, "histogram") == 0 || strcmp(type, "summary") == 0);
            continue;
        }
        assert_true(line[0] != '#');
        assert_true(n < max);
        struct sample *s = &out[n++];
        memset(s, 0, sizeof *s);
        const char *q = line;
        size_t k = 0;
        while (*q && *q != '{' && *q != ' ') {
            bool ok = (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || *q == '_' || *q == ':' ||
                      (k > 0 && *q >= '0' && *q <= '9');
            assert_true(ok);
            s->name[k++] = *q++;
        }
        /* samples follow their own family; a histogram's carry its suffixes */
        size_t cl = strlen(current);
        assert_int_equal(strncmp(s->name, current, cl), 0);
        if (s->name[cl])
            assert_true(strcmp(s->name + cl, "_bucket") == 0 || strcmp(s->name + cl, "_sum") == 0 ||
                        strcmp(s->name + cl, "_count") == 0);
        assert_int_equal(strncmp(s->name, "turbosched_", 11), 0);
        if (*q == '{') {
            q++;
            size_t li = 0;
            while (*q != '}') {
                while (*q != '=') {
                    assert_true((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || *q == '_' ||
                                (*q >= '0' && *q <= '9'));
                    s->labels[li++] = *q++;
                }
                s->labels[li++] = *q++;
                assert_int_equal(*q++, '"');
                while (*q != '"') {
                    assert_true(*q != '\0' && *q != '\n');
                    if (*q == '\\') {
                        q++;
                        assert_true(*q == '\\' || *q == '"' || *q == 'n');
                        s->labels[li++] = *q == 'n' ? '\n' : *q;
                        q++;
                    } else {
                        s->labels[li++] = *q++;
                    }
                }
                q++;
                if (*q == ',') {
                    q++;
                    s->labels[li++] = ';';
                } else {
                    assert_int_equal(*q, '}');
                }
            }
            q++;
        }
        assert_int_equal(*q++, ' ');
        strcpy(s->value, q);
        char *end;
        strtod(s->value, &end);
        assert_true(*end == '\0' && end != s->value);
    }
    return n;
}

static void test_metrics_exposition(void **state)
{
    struct fixture *fx = *state;
    struct run r = RUN(fx, "metrics", "--socket", fx->path);
    assert_int_equal(r.status, 0);
    struct sample s[16];
    size_t n = parse_exposition(r.out, s, 16);
    assert_int_equal(n, 11);
    /* The duplicate family was merged into the first: its samples follow. */
    assert_string_equal(s[0].name, "turbosched_tasks");
    assert_string_equal(s[0].labels, "class=jitter");
    assert_string_equal(s[0].value, "23");
    assert_string_equal(s[2].name, "turbosched_tasks");
    assert_string_equal(s[2].labels, "class=ignore");
    assert_string_equal(s[2].value, "387");
    assert_string_equal(s[4].name, "turbosched_events_total");
    assert_string_equal(s[4].labels, "kind=a\"b\\c\nd");
    assert_string_equal(s[4].value, "4");
    assert_string_equal(s[5].name, "turbosched_uptime_seconds");
    assert_string_equal(s[5].labels, "");
    assert_string_equal(s[5].value, "12.5");
    assert_string_equal(s[6].name, "turbosched_plan_restricted");
    assert_string_equal(s[6].value, "1");
    /* A histogram's series carry their suffix; a sample with any other is
     * dropped, so a reply cannot inject a line or a label through it. */
    assert_string_equal(s[7].name, "turbosched_placement_latency_seconds_bucket");
    assert_string_equal(s[7].labels, "le=0.001");
    assert_string_equal(s[8].labels, "le=+Inf");
    assert_string_equal(s[8].value, "3");
    assert_string_equal(s[9].name, "turbosched_placement_latency_seconds_sum");
    assert_string_equal(s[9].value, "0.5");
    assert_string_equal(s[10].name, "turbosched_placement_latency_seconds_count");
    assert_non_null(strstr(r.out, "# TYPE turbosched_placement_latency_seconds histogram\n"));
    assert_non_null(strstr(r.out, "# TYPE turbosched_uptime_seconds untyped\n"));
    assert_non_null(strstr(r.out, "# HELP turbosched_events_total Proc connector events\\nby kind \\\\ type\n"));
    assert_non_null(strstr(r.out, "# HELP turbosched_plan_restricted turbosched_plan_restricted\n"));

    /* promtool ($PROMTOOL, or the one install-deps.sh takes from Debian's prometheus package), is the reference checker. */
    const char *promtool = getenv("PROMTOOL");
    if (!promtool) /* install-deps.sh puts it in /usr/local/bin */
        promtool = access("/usr/bin/promtool", X_OK) == 0 ? "/usr/bin/promtool" : "/usr/local/bin/promtool";
    if (access(promtool, X_OK) == 0) {
        char path[160];
        snprintf(path, sizeof path, "%s/metrics.prom", fx->dir);
        FILE *f = fopen(path, "w");
        fputs(r.out, f);
        fclose(f);
        char cmd[512];
        snprintf(cmd, sizeof cmd, "%s check metrics < %s", promtool, path);
        int st = system(cmd);
        unlink(path);
        assert_int_equal(st, 0);
    } else {
        print_message("promtool not installed; the built-in parser checked the exposition\n");
    }
    run_free(&r);
}

static void test_json_output(void **state)
{
    struct fixture *fx = *state;
    struct run r = RUN(fx, "--json", "status", "--socket", fx->path);
    assert_int_equal(r.status, 0);
    struct json_object *got = json_tokener_parse(r.out), *want = json_tokener_parse(status_json);
    assert_non_null(got);
    assert_true(json_object_equal(got, want));
    assert_non_null(strchr(r.out, '\n')); /* pretty, not one line */
    json_object_put(got);
    json_object_put(want);
    run_free(&r);
}

static void test_exit_codes(void **state)
{
    struct fixture *fx = *state;
    struct run r = RUN(fx, "--help");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "Exit status:"));
    assert_non_null(strstr(r.out, "4  permission denied"));
    run_free(&r);
    r = RUN(fx, "--version");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "turbosched-ctl 0.1.0"));
    run_free(&r);

    static const char *const usage[][3] = {
        {"--socket", "/x", NULL}, {"frobnicate", NULL, NULL}, {"explain", NULL, NULL}, {"explain", "abc", NULL},
        {"explain", "0", NULL},   {"status", "extra", NULL},  {"--bogus", NULL, NULL},
    };
    for (size_t i = 0; i < ELEMENTSOF(usage); i++) {
        r = ctl_run(fx, false, NULL, usage[i][0], usage[i][1], usage[i][2], (const char *)NULL);
        if (r.status != 2)
            fail_msg("'%s %s' exited %d", usage[i][0], usage[i][1] ? usage[i][1] : "", r.status);
        run_free(&r);
    }

    char missing[160];
    snprintf(missing, sizeof missing, "%s/nothing-here", fx->dir);
    r = RUN(fx, "status", "--socket", missing);
    assert_int_equal(r.status, 3);
    assert_non_null(strstr(r.err, "is turboschedd running?"));
    run_free(&r);

    r = RUN(fx, "reload", "--socket", fx->path);
    assert_int_equal(r.status, getuid() == 0 ? 0 : 4);
    if (getuid() == 0)
        assert_string_equal(r.out, "Configuration reloaded: 3 rules\n");
    run_free(&r);
    fx->deny_reload = true;
    r = RUN(fx, "reload", "--socket", fx->path);
    assert_int_equal(r.status, 4);
    assert_non_null(strstr(r.err, "permission denied"));
    run_free(&r);
    r = RUN(fx, "reload", "--json", "--socket", fx->path);
    assert_int_equal(r.status, 4);
    assert_non_null(strstr(r.out, "\"error\": \"io.turbosched.PermissionDenied\""));
    run_free(&r);
}

static void test_exit_code_unreadable_socket(void **state)
{
    struct fixture *fx = *state;
    if (geteuid() != 0)
        skip(); /* needs root to run the client as another user */
    assert_int_equal(chmod(fx->dir, 0755), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
            _exit(10);
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 1);
        dup2(devnull, 2);
        execl(CTL, CTL, "status", "--socket", fx->path, (char *)NULL);
        _exit(errno == EACCES ? 126 : 127);
    }
    int st;
    uint64_t deadline = now_ms() + TIMEOUT_MS;
    while (waitpid(pid, &st, WNOHANG) != pid) {
        assert_true(now_ms() < deadline);
        assert_true(sd_event_run(fx->e, 1000) >= 0);
    }
    assert_true(WIFEXITED(st));
    if (WEXITSTATUS(st) == 126) {
        /* a checkout in a directory only root may enter (mktemp -d) */
        printf("skip: user nobody cannot reach %s\n", CTL);
        skip();
    }
    assert_int_equal(WEXITSTATUS(st), 4); /* the socket is 0600 root */
}

static void test_color_only_on_terminals(void **state)
{
    struct fixture *fx = *state;
    struct run r = ctl_run(fx, true, NULL, "dump", "--socket", fx->path, (const char *)NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\033[33m")); /* jitter in yellow */
    run_free(&r);

    static const char *const no_color_env[][3] = {
        {"NO_COLOR", "1", NULL},
        {"TERM", "dumb", NULL},
        {"TERM", NULL, NULL},
    };
    for (size_t i = 0; i < ELEMENTSOF(no_color_env); i++) {
        r = ctl_run(fx, true, no_color_env[i], "dump", "--socket", fx->path, (const char *)NULL);
        assert_int_equal(r.status, 0);
        assert_null(strchr(r.out, '\033'));
        run_free(&r);
    }
    r = ctl_run(fx, true, NULL, "status", "--no-color", "--socket", fx->path, (const char *)NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "turboschedd 0.1.0"));
    assert_null(strchr(r.out, '\033'));
    run_free(&r);
}

static void test_pause_resume(void **state)
{
    struct fixture *fx = *state;
    struct run r = RUN(fx, "--socket", fx->path, "pause");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "Paused: every task has its own mask and CPU set back (3 changes undone)"));
    run_free(&r);
    r = RUN(fx, "--socket", fx->path, "resume");
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "Resumed: packing again.\n");
    run_free(&r);
    assert_string_equal(fx->calls, "PR");
    fx->status_override = "{\"pause\":{\"paused\":true,\"admin\":true,\"sessions\":0,\"since_s\":12}}";
    r = RUN(fx, "--socket", fx->path, "status");
    assert_non_null(strstr(r.out, "Packing:       paused for 12s (turbosched-ctl pause)"));
    run_free(&r);
    fx->deny_pause = true;
    r = RUN(fx, "--socket", fx->path, "pause");
    assert_int_equal(r.status, 4);
    assert_non_null(strstr(r.err, "permission denied"));
    run_free(&r);
}

static void test_compare_refusals(void **state)
{
    struct fixture *fx = *state;
    /* too short for two warm-up and two measured blocks */
    struct run r = RUN(fx, "--socket", fx->path, "compare", "--duration", "5s", "--block", "2s");
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "at least 4 blocks"));
    run_free(&r);
    r = RUN(fx, "compare", "--block", "soon", "--socket", fx->path);
    assert_int_equal(r.status, 2);
    run_free(&r);
    /* not root: refused before anything is paused or measured */
    fx->deny_pause = true;
    r = RUN(fx, "--socket", fx->path, "compare", "--duration", "8s", "--block", "2s");
    assert_int_equal(r.status, 4);
    assert_non_null(strstr(r.err, "permission denied: compare pauses and resumes the daemon"));
    assert_int_equal(fx->n_calls, 0);
    run_free(&r);
    /* already paused by the administrator: nothing to compare */
    fx->deny_pause = false;
    fx->status_override = "{\"pause\":{\"paused\":true,\"admin\":true,\"sessions\":0,\"since_s\":1}}";
    r = RUN(fx, "--socket", fx->path, "compare", "--duration", "8s", "--block", "2s");
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "turbosched-ctl resume first"));
    assert_int_equal(fx->n_calls, 0);
    run_free(&r);
}

/* A whole (short) comparison against fixture trees: nothing changes in
 * them between snapshots, so every rate is 0; what is checked is the
 * schedule of calls, the report's shape, and absent sources said so. */
static void test_compare_run(void **state)
{
    struct fixture *fx = *state;
    char csv[128];
    snprintf(csv, sizeof csv, "%s/out.csv", fx->dir);
    struct run r = RUN(fx, "--socket", fx->path, "compare", "--root", TS_FIXTURES "/compare-bare", "--duration", "4s",
                       "--block", "1s", "--csv", csv);
    if (r.status != 0)
        fail_msg("exit %d: %s", r.status, r.err);
    /* probe, then paused, packed warm-ups, a measured pair, a final resume */
    assert_string_equal(fx->calls, "rprprr");
    assert_non_null(strstr(r.out, "Compared 1 paused and 1 packed blocks of 1 s"));
    assert_non_null(strstr(r.out, "CPU 1 wake-ups/s (kept idle)"));
    assert_non_null(strstr(r.out, "Package energy: not measured (no RAPL zone under /sys/class/powercap)"));
    assert_non_null(strstr(r.out, "Frequency: not measured"));
    assert_non_null(strstr(r.out, "Wake-ups: local timer + rescheduling interrupts (no cpuidle states here)"));
    assert_non_null(strstr(r.out, "Verdict: CPU 1: no wake-ups in either mode; no jitter task woke"));
    FILE *f = fopen(csv, "r");
    assert_non_null(f);
    char line[512];
    int rows = 0;
    while (fgets(line, sizeof line, f))
        rows++;
    fclose(f);
    assert_int_equal(rows, 1 + 4 * 2);
    /* the plot's gnuplot script beside the CSV, always; the plot itself
     * where gnuplot runs (install-deps.sh installs it) */
    char gp[160], png[160], text[4096];
    snprintf(gp, sizeof gp, "%s/out.gp", fx->dir);
    snprintf(png, sizeof png, "%s/out.png", fx->dir);
    f = fopen(gp, "r");
    assert_non_null(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    assert_non_null(strstr(text, csv));
    assert_non_null(strstr(text, "title 'CPU 1 packed'"));
    if (system("command -v gnuplot >/dev/null 2>&1") == 0) {
        assert_int_equal(access(png, F_OK), 0);
        assert_non_null(strstr(r.err, "Plot: "));
    } else {
        printf("gnuplot not installed: the plot itself is not checked\n");
    }
    run_free(&r);
    unlink(csv);
    unlink(png);
    unlink(gp);

    /* with cpufreq and RAPL: their rows are there */
    fx->n_calls = 0;
    memset(fx->calls, 0, sizeof fx->calls);
    r = RUN(fx, "--socket", fx->path, "compare", "--root", TS_FIXTURES "/compare-cpuidle", "--duration", "4s",
            "--block", "1s");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "CPU 0 frequency MHz"));
    assert_non_null(strstr(r.out, "2400 (2400-2400)"));
    assert_non_null(strstr(r.out, "package power W"));
    assert_non_null(strstr(r.out, "Wake-ups: idle-state entries (cpuidle)"));
    assert_null(strstr(r.out, "not measured"));
    run_free(&r);
}

int main(void)
{
    if (access(CTL, X_OK) < 0) {
        printf("skip: %s is not built\n", CTL);
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_status, setup, teardown),
        cmocka_unit_test_setup_teardown(test_status_missing_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dump_and_topology, setup, teardown),
        cmocka_unit_test_setup_teardown(test_explain, setup, teardown),
        cmocka_unit_test_setup_teardown(test_metrics_exposition, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json_output, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exit_codes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exit_code_unreadable_socket, setup, teardown),
        cmocka_unit_test_setup_teardown(test_color_only_on_terminals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pause_resume, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compare_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compare_run, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
