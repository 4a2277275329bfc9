/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "varlink.h"

#include "util.h"

#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static const char *const method_names[_VARLINK_METHOD_MAX] = {
    [VARLINK_METHOD_GET_INFO] = "org.varlink.service.GetInfo",
    [VARLINK_METHOD_STATUS] = "io.turbosched.Status",
    [VARLINK_METHOD_DUMP] = "io.turbosched.Dump",
    [VARLINK_METHOD_EXPLAIN] = "io.turbosched.Explain",
    [VARLINK_METHOD_RELOAD] = "io.turbosched.Reload",
    [VARLINK_METHOD_METRICS] = "io.turbosched.Metrics",
    [VARLINK_METHOD_PAUSE] = "io.turbosched.Pause",
    [VARLINK_METHOD_RESUME] = "io.turbosched.Resume",
};

const char *varlink_method_name(enum varlink_method m)
{
    if (m < 0 || m >= _VARLINK_METHOD_MAX)
        return NULL;
    return method_names[m];
}

enum varlink_method varlink_method_from_name(const char *name)
{
    if (!name)
        return VARLINK_METHOD_UNKNOWN;
    for (int i = 0; i < _VARLINK_METHOD_MAX; i++)
        if (strcmp(name, method_names[i]) == 0)
            return (enum varlink_method)i;
    return VARLINK_METHOD_UNKNOWN;
}

void varlink_reader_init(struct varlink_reader *r, size_t max_message)
{
    *r = (struct varlink_reader){.max_message = max_message ? max_message : VARLINK_MAX_MESSAGE_DEFAULT};
}

void varlink_reader_done(struct varlink_reader *r)
{
    free(r->buf);
    *r = (struct varlink_reader){.max_message = r->max_message};
}

size_t varlink_reader_pending(const struct varlink_reader *r) { return r->len - r->start; }

int varlink_reader_feed(struct varlink_reader *r, const void *data, size_t size)
{
    if (size == 0)
        return 0;
    /* Drop consumed frames before growing, so a long-lived connection does
     * not accumulate the history of its requests. */
    if (r->start > 0) {
        memmove(r->buf, r->buf + r->start, r->len - r->start);
        r->len -= r->start;
        r->start = 0;
    }
    if (size > SIZE_MAX - r->len - 1)
        return -ENOMEM;
    if (r->len + size + 1 > r->cap) {
        size_t cap = r->cap ? r->cap : 4096;
        while (cap < r->len + size + 1)
            cap *= 2;
        char *p = realloc(r->buf, cap);
        if (!p)
            return -ENOMEM;
        r->buf = p;
        r->cap = cap;
    }
    memcpy(r->buf + r->len, data, size);
    r->len += size;
    return 0;
}

int varlink_reader_next(struct varlink_reader *r, const char **msg, size_t *len)
{
    size_t avail = r->len - r->start;
    if (avail == 0)
        return 0;
    char *begin = r->buf + r->start;
    char *nul = memchr(begin, '\0', MIN(avail, r->max_message + 1));
    if (!nul)
        return avail > r->max_message ? -EMSGSIZE : 0;
    *msg = begin;
    *len = (size_t)(nul - begin);
    r->start += *len + 1;
    if (r->start == r->len)
        r->start = r->len = 0; /* buffer stays valid until the next feed */
    return 1;
}

static void set_error(struct varlink_error *err, const char *name, const char *parameter, const char *reason)
{
    if (err)
        *err = (struct varlink_error){.name = name, .parameter = parameter, .reason = reason};
}

/* Varlink interface names are reverse-domain, methods start upper-case:
 * "org.example.Iface.Method". Anything else is not a method name. */
static bool method_name_valid(const char *s, size_t len)
{
    if (len == 0 || len > 255)
        return false;
    const char *dot = memrchr(s, '.', len);
    if (!dot || dot == s)
        return false;
    const char *m = dot + 1;
    if (!(*m >= 'A' && *m <= 'Z'))
        return false;
    for (const char *p = m; p < s + len; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')))
            return false;
    bool label_start = true;
    for (const char *p = s; p < dot; p++) {
        if (*p == '.') {
            if (label_start)
                return false;
            label_start = true;
            continue;
        }
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-'))
            return false;
        label_start = false;
    }
    return !label_start;
}

static int validate_params(enum varlink_method m, struct json_object *params, struct varlink_error *err)
{
    if (m == VARLINK_METHOD_EXPLAIN) {
        struct json_object *pid;
        if (!json_object_object_get_ex(params, "pid", &pid) || !json_object_is_type(pid, json_type_int)) {
            set_error(err, VARLINK_ERROR_INVALID_PARAMETER, "pid", "\"pid\" must be an integer");
            return -EINVAL;
        }
        errno = 0;
        int64_t v = json_object_get_int64(pid);
        if (v <= 0 || v > INT_MAX || errno == ERANGE) {
            set_error(err, VARLINK_ERROR_INVALID_PARAMETER, "pid", "\"pid\" must be a positive process id");
            return -EINVAL;
        }
    }
    return 0;
}

int varlink_request_decode(const char *msg, size_t len, struct varlink_request *req, struct varlink_error *err)
{
    *req = (struct varlink_request){.method_id = VARLINK_METHOD_UNKNOWN};
    if (len > INT_MAX) {
        set_error(err, TS_ERROR_REQUEST_TOO_LARGE, NULL, "request too large");
        return -EBADMSG;
    }
    struct json_tokener *tok = json_tokener_new();
    if (!tok) {
        set_error(err, TS_ERROR_INTERNAL, NULL, "out of memory");
        return -ENOMEM;
    }
    struct json_object *root = json_tokener_parse_ex(tok, msg, (int)len);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    /* Trailing bytes after the object mean two messages without a NUL
     * between them, or garbage; neither is a request. */
    bool trailing = root && (size_t)json_tokener_get_parse_end(tok) < len;
    json_tokener_free(tok);
    if (!root || jerr != json_tokener_success || trailing) {
        json_object_put(root);
        set_error(err, TS_ERROR_INVALID_REQUEST, NULL, "not a JSON document");
        return -EBADMSG;
    }
    if (!json_object_is_type(root, json_type_object)) {
        json_object_put(root);
        set_error(err, TS_ERROR_INVALID_REQUEST, NULL, "request is not a JSON object");
        return -EBADMSG;
    }
    struct json_object *method, *params = NULL, *oneway;
    if (json_object_object_get_ex(root, "oneway", &oneway) && json_object_is_type(oneway, json_type_boolean))
        req->oneway = json_object_get_boolean(oneway);
    if (!json_object_object_get_ex(root, "method", &method) || !json_object_is_type(method, json_type_string) ||
        !method_name_valid(json_object_get_string(method), (size_t)json_object_get_string_len(method))) {
        json_object_put(root);
        req->oneway = false;
        set_error(err, TS_ERROR_INVALID_REQUEST, "method", "\"method\" missing or not a method name");
        return -EBADMSG;
    }
    if (json_object_object_get_ex(root, "parameters", &params) && !json_object_is_type(params, json_type_object)) {
        json_object_put(root);
        req->oneway = false;
        set_error(err, TS_ERROR_INVALID_REQUEST, "parameters", "\"parameters\" is not an object");
        return -EBADMSG;
    }
    if (!params) {
        params = json_object_new_object();
        if (!params || json_object_object_add(root, "parameters", params) < 0) {
            json_object_put(params);
            json_object_put(root);
            set_error(err, TS_ERROR_INTERNAL, NULL, "out of memory");
            return -ENOMEM;
        }
    }
    req->root = root;
    req->method = json_object_get_string(method);
    req->method_id = varlink_method_from_name(req->method);
    req->params = params;
    int r = validate_params(req->method_id, params, err);
    if (r < 0) {
        /* The caller still needs the method name for its log line. */
        return r;
    }
    return 0;
}

void varlink_request_done(struct varlink_request *req)
{
    json_object_put(req->root);
    *req = (struct varlink_request){.method_id = VARLINK_METHOD_UNKNOWN};
}

int varlink_decode_stream(const void *data, size_t size, size_t max_message)
{
    struct varlink_reader r;
    varlink_reader_init(&r, max_message);
    int n_ok = 0, ret = 0;
    /* Feed in uneven chunks to exercise the reassembly the socket sees. */
    const char *p = data;
    size_t off = 0, chunk = 1;
    while (off < size && ret >= 0) {
        size_t n = MIN(chunk, size - off);
        if (varlink_reader_feed(&r, p + off, n) < 0) {
            ret = -ENOMEM;
            break;
        }
        off += n;
        chunk = chunk * 3 + 1;
        for (;;) {
            const char *msg;
            size_t len;
            int k = varlink_reader_next(&r, &msg, &len);
            if (k < 0) {
                ret = k;
                break;
            }
            if (k == 0)
                break;
            struct varlink_request req;
            struct varlink_error err;
            int d = varlink_request_decode(msg, len, &req, &err);
            if (d == 0)
                n_ok++;
            else if (!err.name)
                abort(); /* every decode failure must say what to answer */
            varlink_request_done(&req);
        }
    }
    varlink_reader_done(&r);
    return ret < 0 ? ret : n_ok;
}

static char *format_object(struct json_object *obj, size_t *len)
{
    size_t n;
    const char *s = json_object_to_json_string_length(obj, JSON_C_TO_STRING_PLAIN, &n);
    if (!s)
        return NULL;
    char *out = malloc(n + 1);
    if (!out)
        return NULL;
    memcpy(out, s, n + 1); /* json-c NUL-terminates: that NUL is the frame end */
    *len = n + 1;
    return out;
}

char *varlink_request_format(const char *method, struct json_object *params, size_t *len)
{
    struct json_object *o = json_object_new_object();
    if (!o)
        return NULL;
    json_object_object_add(o, "method", json_object_new_string(method));
    json_object_object_add(o, "parameters", params ? json_object_get(params) : json_object_new_object());
    char *s = format_object(o, len);
    json_object_put(o);
    return s;
}

char *varlink_reply_format(struct json_object *params, const char *error, size_t *len)
{
    struct json_object *o = json_object_new_object();
    if (!o)
        return NULL;
    if (error)
        json_object_object_add(o, "error", json_object_new_string(error));
    json_object_object_add(o, "parameters", params ? json_object_get(params) : json_object_new_object());
    char *s = format_object(o, len);
    json_object_put(o);
    return s;
}

int varlink_reply_decode(const char *msg, size_t len, struct json_object **params, char **error)
{
    *params = NULL;
    *error = NULL;
    if (len > INT_MAX)
        return -EBADMSG;
    struct json_tokener *tok = json_tokener_new();
    if (!tok)
        return -ENOMEM;
    struct json_object *root = json_tokener_parse_ex(tok, msg, (int)len);
    bool ok = root && json_tokener_get_error(tok) == json_tokener_success &&
              (size_t)json_tokener_get_parse_end(tok) == len && json_object_is_type(root, json_type_object);
    json_tokener_free(tok);
    if (!ok) {
        json_object_put(root);
        return -EBADMSG;
    }
    struct json_object *e, *p;
    if (json_object_object_get_ex(root, "error", &e)) {
        if (!json_object_is_type(e, json_type_string)) {
            json_object_put(root);
            return -EBADMSG;
        }
        *error = strdup(json_object_get_string(e));
        if (!*error) {
            json_object_put(root);
            return -ENOMEM;
        }
    }
    if (json_object_object_get_ex(root, "parameters", &p) && json_object_is_type(p, json_type_object))
        *params = json_object_get(p);
    else
        *params = json_object_new_object();
    json_object_put(root);
    if (!*params) {
        free(*error);
        *error = NULL;
        return -ENOMEM;
    }
    return 0;
}
