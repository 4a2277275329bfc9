/* SPDX-License-Identifier: GPL-2.0-or-later */
/* turbosched-ctl: ask turboschedd what it is doing, over its control socket. */
#include <errno.h>
#include <inttypes.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "compare.h"
#include "control.h"
#include "render.h"
#include "table.h"
#include "util.h"
#include "varlink.h"
#include "version.h"

enum {
    EXIT_OK = 0,
    EXIT_DAEMON_ERROR = 1,
    EXIT_USAGE = 2,
    EXIT_NO_CONNECTION = 3,
    EXIT_PERMISSION = 4,
};

#define CALL_TIMEOUT_MS 10000

static void help(FILE *f)
{
    fprintf(f,
            "Usage: turbosched-ctl [OPTIONS] COMMAND [ARGS]\n\n"
            "Show what turboschedd is doing and ask it to reload.\n\n"
            "Commands:\n"
            "  status        mode, task counts, events, current plan, CPU frequency and idle states\n"
            "  dump          cores, per-CPU statistics and the tracked jitter/intensive tasks\n"
            "  topology      the cores table only: capacity, utilisation, spare, packing mask\n"
            "  explain PID   how each thread of PID was classified and where it may run\n"
            "  metrics       Prometheus text exposition (for node_exporter's textfile collector)\n"
            "  reload        re-read the configuration (root only)\n"
            "  pause         give every task its own mask back and stop packing (root only)\n"
            "  resume        pack again (root only)\n"
            "  compare [--duration 10min] [--block 30s] [--csv FILE]\n"
            "                alternate paused and packed blocks and compare wake-ups, idle,\n"
            "                frequency, energy, task waits and the daemon's cost (root only)\n\n"
            "Options:\n"
            "  -j, --json           print the daemon's reply as JSON\n"
            "  -s, --socket PATH    control socket (default %s)\n"
            "      --no-color       never use colour (also: NO_COLOR set, TERM=dumb, not a terminal)\n"
            "  -h, --help           show this help\n"
            "  -V, --version        show the version\n\n"
            "Exit status:\n"
            "  0  success\n"
            "  1  the daemon answered with an error (or sent a reply that could not be read)\n"
            "  2  usage error\n"
            "  3  cannot connect to the daemon (not running?) or the connection failed\n"
            "  4  permission denied\n",
            CONTROL_SOCKET_PATH_DEFAULT);
}

static bool want_color(bool no_color_opt)
{
    if (no_color_opt)
        return false;
    const char *nc = getenv("NO_COLOR");
    if (nc && *nc)
        return false;
    const char *term = getenv("TERM");
    if (!term || strcmp(term, "dumb") == 0)
        return false;
    return isatty(STDOUT_FILENO);
}

struct command {
    const char *name;
    const char *method;
    int (*render)(FILE *f, struct json_object *reply, const struct render_opts *o);
    bool takes_pid;
};

static int render_metrics_cb(FILE *f, struct json_object *reply, const struct render_opts *o)
{
    return render_metrics(f, reply);
}

static int render_reload_cb(FILE *f, struct json_object *reply, const struct render_opts *o)
{
    struct json_object *msg;
    if (json_object_object_get_ex(reply, "message", &msg) && json_object_is_type(msg, json_type_string) &&
        json_object_get_string_len(msg) > 0) {
        _cleanup_free_ char *m = strdup(json_object_get_string(msg));
        if (m)
            table_sanitize(m);
        fprintf(f, "Configuration reloaded: %s\n", m ? m : "-");
    } else {
        fprintf(f, "Configuration reloaded.\n");
    }
    return 0;
}

static int render_pause_cb(FILE *f, struct json_object *reply, const struct render_opts *o)
{
    struct json_object *v;
    bool paused = json_object_object_get_ex(reply, "paused", &v) && json_object_get_boolean(v);
    bool changed = json_object_object_get_ex(reply, "changed", &v) && json_object_get_boolean(v);
    int64_t sessions = json_object_object_get_ex(reply, "sessions", &v) ? json_object_get_int64(v) : 0;
    if (paused && changed)
        fprintf(f,
                "Paused: every task has its own mask and CPU set back (%" PRId64 " changes undone); "
                "tasks are still tracked and classified.\n",
                json_object_object_get_ex(reply, "undone", &v) ? json_object_get_int64(v) : 0);
    else if (paused && sessions > 0)
        fprintf(f, "Still paused: %" PRId64 " running comparison%s hold%s a pause until %s.\n", sessions,
                sessions == 1 ? "" : "s", sessions == 1 ? "s" : "", sessions == 1 ? "it ends" : "they end");
    else if (paused)
        fprintf(f, "Already paused.\n");
    else if (changed)
        fprintf(f, "Resumed: packing again.\n");
    else
        fprintf(f, "Not paused: packing.\n");
    return 0;
}

static const struct command commands[] = {
    {"status", "io.turbosched.Status", render_status, false},
    {"dump", "io.turbosched.Dump", render_dump, false},
    {"topology", "io.turbosched.Dump", render_topology, false},
    {"explain", "io.turbosched.Explain", render_explain, true},
    {"metrics", "io.turbosched.Metrics", render_metrics_cb, false},
    {"reload", "io.turbosched.Reload", render_reload_cb, false},
    {"pause", "io.turbosched.Pause", render_pause_cb, false},
    {"resume", "io.turbosched.Resume", render_pause_cb, false},
};

static void print_json(struct json_object *o)
{
    printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                         JSON_C_TO_STRING_NOSLASHESCAPE));
}

static int print_error(const char *error, struct json_object *params, bool json, const char *pid)
{
    if (json) {
        struct json_object *o = json_object_new_object();
        json_object_object_add(o, "error", json_object_new_string(error));
        json_object_object_add(o, "parameters", json_object_get(params));
        print_json(o);
        json_object_put(o);
    }
    const char *detail = NULL;
    struct json_object *v;
    static const char *const keys[] = {"message", "reason", "parameter", "method"};
    for (size_t i = 0; i < ELEMENTSOF(keys) && !detail; i++)
        if (json_object_object_get_ex(params, keys[i], &v) && json_object_is_type(v, json_type_string))
            detail = json_object_get_string(v);
    _cleanup_free_ char *d = detail ? strdup(detail) : NULL;
    if (d)
        table_sanitize(d);
    if (strcmp(error, TS_ERROR_PERMISSION_DENIED) == 0) {
        fprintf(stderr, "turbosched-ctl: permission denied%s%s (this command needs root)\n", d ? ": " : "", d ? d : "");
        return EXIT_PERMISSION;
    }
    if (strcmp(error, TS_ERROR_NO_SUCH_PROCESS) == 0)
        fprintf(stderr, "turbosched-ctl: no such process%s%s%s%s\n", pid ? " " : "", pid ? pid : "", d ? ": " : "",
                d ? d : "");
    else if (strcmp(error, TS_ERROR_TOO_MANY_CLIENTS) == 0)
        fprintf(stderr, "turbosched-ctl: the daemon has too many clients right now, try again\n");
    else
        fprintf(stderr, "turbosched-ctl: the daemon answered %s%s%s\n", error, d ? ": " : "", d ? d : "");
    return EXIT_DAEMON_ERROR;
}

struct options {
    bool json, no_color;
    const char *socket_path;
};

/* Returns -1 to go on, else the exit status (help, version, usage). */
static int parse_options(int argc, char **argv, struct options *o)
{
    enum { OPT_NO_COLOR = 0x100 };
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'},
        {"socket", required_argument, NULL, 's'},
        {"no-color", no_argument, NULL, OPT_NO_COLOR},
        {"no-colour", no_argument, NULL, OPT_NO_COLOR},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "js:hV", opts, NULL)) >= 0) {
        switch (c) {
        case 'j':
            o->json = true;
            break;
        case 's':
            o->socket_path = optarg;
            break;
        case OPT_NO_COLOR:
            o->no_color = true;
            break;
        case 'h':
            help(stdout);
            return EXIT_OK;
        case 'V':
            printf("turbosched-ctl %s\n", TS_VERSION);
            return EXIT_OK;
        default:
            fprintf(stderr, "Try 'turbosched-ctl --help'.\n");
            return EXIT_USAGE;
        }
    }
    return -1;
}

/* The command after the options and its parameters. Returns -1 to go on,
 * else the exit status. */
static int parse_command(int argc, char **argv, const struct command **ret_cmd, struct json_object **ret_params)
{
    if (optind >= argc) {
        fprintf(stderr, "turbosched-ctl: no command given. Try 'turbosched-ctl --help'.\n");
        return EXIT_USAGE;
    }
    const struct command *cmd = NULL;
    for (size_t i = 0; i < ELEMENTSOF(commands); i++)
        if (strcmp(argv[optind], commands[i].name) == 0)
            cmd = &commands[i];
    if (!cmd) {
        fprintf(stderr, "turbosched-ctl: unknown command '%s'. Try 'turbosched-ctl --help'.\n", argv[optind]);
        return EXIT_USAGE;
    }
    int n_args = argc - optind - 1;
    if (n_args != (cmd->takes_pid ? 1 : 0)) {
        fprintf(stderr, "turbosched-ctl: '%s' takes %s. Try 'turbosched-ctl --help'.\n", cmd->name,
                cmd->takes_pid ? "exactly one PID" : "no arguments");
        return EXIT_USAGE;
    }
    struct json_object *params = json_object_new_object();
    if (!params)
        return EXIT_DAEMON_ERROR;
    if (cmd->takes_pid) {
        unsigned pid;
        if (parse_uint(argv[optind + 1], &pid) < 0 || pid == 0 || pid > INT32_MAX) {
            fprintf(stderr, "turbosched-ctl: '%s' is not a process id.\n", argv[optind + 1]);
            json_object_put(params);
            return EXIT_USAGE;
        }
        json_object_object_add(params, "pid", json_object_new_int64(pid));
    }
    *ret_cmd = cmd;
    *ret_params = params;
    return -1;
}

/* The call failed before the daemon could answer: say why, with a hint. */
static int call_failed(int r, const char *socket_path)
{
    int ret = EXIT_NO_CONNECTION;
    const char *hint = "";
    if (r == -EACCES || r == -EPERM) {
        ret = EXIT_PERMISSION;
        hint = " (root, or a member of the socket's group, may connect)";
    } else if (r == -ENOENT || r == -ECONNREFUSED) {
        hint = " (is turboschedd running?)";
    } else if (r == -EBADMSG) {
        ret = EXIT_DAEMON_ERROR;
        hint = ": the reply is not valid Varlink";
    }
    fprintf(stderr, "turbosched-ctl: %s %s: %s%s\n", ctl_call_stage, socket_path,
            r == -EBADMSG ? "bad reply" : strerror(-r), hint);
    return ret;
}

int main(int argc, char **argv)
{
    struct options o = {.socket_path = CONTROL_SOCKET_PATH_DEFAULT};
    /* compare has options of its own: it parses the whole line. */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-s") == 0 || strcmp(argv[i], "--socket") == 0) {
            i++;
            continue;
        }
        if (argv[i][0] != '-') {
            if (strcmp(argv[i], "compare") == 0)
                return ctl_compare_main(argc, argv);
            break;
        }
    }
    int ret = parse_options(argc, argv, &o);
    if (ret >= 0)
        return ret;
    const struct command *cmd;
    struct json_object *params;
    ret = parse_command(argc, argv, &cmd, &params);
    if (ret >= 0)
        return ret;

    struct json_object *reply = NULL;
    _cleanup_free_ char *error = NULL;
    int r = ctl_call(o.socket_path, cmd->method, params, CALL_TIMEOUT_MS, &reply, &error);
    json_object_put(params);
    if (r < 0)
        return call_failed(r, o.socket_path);
    ret = EXIT_OK;
    if (error)
        ret = print_error(error, reply, o.json, cmd->takes_pid ? argv[optind + 1] : NULL);
    else if (o.json)
        print_json(reply);
    else {
        struct render_opts ro = {.color = want_color(o.no_color)};
        if (cmd->render(stdout, reply, &ro) < 0) {
            fprintf(stderr, "turbosched-ctl: writing the output failed\n");
            ret = EXIT_DAEMON_ERROR;
        }
    }
    json_object_put(reply);
    if (fflush(stdout) != 0 && ret == EXIT_OK)
        ret = EXIT_DAEMON_ERROR;
    return ret;
}
