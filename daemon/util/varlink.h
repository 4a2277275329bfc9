/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Varlink wire format: NUL-terminated JSON objects on a stream socket.
 * Pure: framing, request/reply encoding and decoding, the io.turbosched
 * method names (control-methods.c routes them). No I/O; shared by the
 * control server and turbosched-ctl. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct json_object;

#define VARLINK_MAX_MESSAGE_DEFAULT (64u * 1024u)
/* Where the daemon serves io.turbosched unless control_socket= says otherwise. */
#define CONTROL_SOCKET_PATH_DEFAULT "/run/turbosched/control"

#define VARLINK_ERROR_METHOD_NOT_FOUND "org.varlink.service.MethodNotFound"
#define VARLINK_ERROR_INVALID_PARAMETER "org.varlink.service.InvalidParameter"
#define TS_ERROR_INVALID_REQUEST "io.turbosched.InvalidRequest"
#define TS_ERROR_REQUEST_TOO_LARGE "io.turbosched.RequestTooLarge"
#define TS_ERROR_PERMISSION_DENIED "io.turbosched.PermissionDenied"
#define TS_ERROR_TOO_MANY_CLIENTS "io.turbosched.TooManyClients"
#define TS_ERROR_INTERNAL "io.turbosched.InternalError"
#define TS_ERROR_NO_SUCH_PROCESS "io.turbosched.NoSuchProcess"
/* An unprivileged Dump over its rate, or while replies pile up unread:
 * "reason", and "retry_after_ms" where waiting helps. */
#define TS_ERROR_BUSY "io.turbosched.Busy"

enum varlink_method {
    VARLINK_METHOD_UNKNOWN = -1,
    VARLINK_METHOD_GET_INFO = 0, /* org.varlink.service.GetInfo */
    VARLINK_METHOD_STATUS,       /* io.turbosched.Status */
    VARLINK_METHOD_DUMP,         /* io.turbosched.Dump */
    VARLINK_METHOD_EXPLAIN,      /* io.turbosched.Explain {"pid":N} */
    VARLINK_METHOD_RELOAD,       /* io.turbosched.Reload */
    VARLINK_METHOD_METRICS,      /* io.turbosched.Metrics */
    VARLINK_METHOD_PAUSE,        /* io.turbosched.Pause {"session":bool} */
    VARLINK_METHOD_RESUME,       /* io.turbosched.Resume {"session":bool} */
    _VARLINK_METHOD_MAX,
};

/* Full method name ("io.turbosched.Status"), NULL for an out-of-range id. */
const char *varlink_method_name(enum varlink_method m);
enum varlink_method varlink_method_from_name(const char *name);

/* Accumulates bytes from a stream and hands out complete NUL-terminated
 * frames. A partial frame longer than max_message is an error. */
struct varlink_reader {
    char *buf;
    size_t len, cap, start;
    size_t max_message;
};

void varlink_reader_init(struct varlink_reader *r, size_t max_message);
void varlink_reader_done(struct varlink_reader *r);
/* Append bytes; -ENOMEM. Call varlink_reader_next until it returns 0. */
int varlink_reader_feed(struct varlink_reader *r, const void *data, size_t size);
/* 1 and *msg, *len (NUL not counted, *msg NUL-terminated, valid until the next
 * call) when a frame is complete; 0 when more bytes are needed; -EMSGSIZE
 * when the pending frame exceeds max_message (the stream cannot recover). */
int varlink_reader_next(struct varlink_reader *r, const char **msg, size_t *len);
/* Bytes of an incomplete frame waiting for its NUL. */
size_t varlink_reader_pending(const struct varlink_reader *r);

struct varlink_request {
    struct json_object *root;      /* owns everything below */
    const char *method;            /* as sent */
    enum varlink_method method_id; /* VARLINK_METHOD_UNKNOWN if not ours */
    struct json_object *params;    /* always an object (empty if absent) */
    bool oneway;                   /* the client wants no reply */
};

/* A decode failure as the server should answer it. */
struct varlink_error {
    const char *name;      /* varlink error name */
    const char *parameter; /* offending parameter or NULL */
    const char *reason;    /* short human text */
};

/* Decode one frame (without its NUL): JSON object, "method" string,
 * "parameters" object if present, and parameter validation of our methods
 * (Explain needs a positive integer "pid"). An unknown but well-formed method
 * decodes fine with method_id == VARLINK_METHOD_UNKNOWN; the caller answers
 * MethodNotFound. Returns 0, or -EBADMSG (not JSON / not an object / no
 * method) or -EINVAL (bad parameters; req->method is set) with *err filled,
 * or -ENOMEM. Call varlink_request_done afterwards in every case. */
int varlink_request_decode(const char *msg, size_t len, struct varlink_request *req, struct varlink_error *err);
void varlink_request_done(struct varlink_request *req);

/* Feed a byte stream through framing and decoding the way the server does;
 * the fuzz target and the corpus replay test share it. Returns the number of
 * requests decoded successfully, or -EMSGSIZE if the stream hit the bound. */
int varlink_decode_stream(const void *data, size_t size, size_t max_message);

/* Encode a request/reply as NUL-terminated JSON; *len counts the NUL.
 * params NULL → {}. error NULL → a normal reply. Returns malloc'd or NULL. */
char *varlink_request_format(const char *method, struct json_object *params, size_t *len);
char *varlink_reply_format(struct json_object *params, const char *error, size_t *len);

/* Decode a reply frame. *params (owned, an object) and *error (malloc'd, NULL
 * for success). Returns 0 or -EBADMSG. */
int varlink_reply_decode(const char *msg, size_t len, struct json_object **params, char **error);
