/* Logging to stderr with syslog priority prefixes, which journald parses. */
#pragma once
#include <stddef.h>
#include <syslog.h>

/* Messages above this priority are dropped (LOG_DEBUG shows everything). */
void log_set_max_level(int level);
int log_get_max_level(void);
/* Parse "err", "warning", "notice", "info", "debug" (or 0..7); -EINVAL if unknown. */
int log_level_from_string(const char *s);

/* Tests capture messages by installing a sink; NULL restores stderr. */
typedef void (*log_sink_fn)(int level, const char *msg, void *userdata);
void log_set_sink(log_sink_fn fn, void *userdata);

/* Copies in to out (size bytes, NUL included) with control characters, DEL
 * and bytes above 0x7f written as \n, \t or \xNN, so that text from outside
 * (a thread named "x\n<0>FAKE") can neither end the line nor start a new
 * one with a priority prefix. Truncates at a whole escape. Returns the
 * length written. log_internal applies it to every message. */
size_t log_escape(const char *in, char *out, size_t size);

void log_internal(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_err(...)     log_internal(LOG_ERR, __VA_ARGS__)
#define log_warning(...) log_internal(LOG_WARNING, __VA_ARGS__)
#define log_notice(...)  log_internal(LOG_NOTICE, __VA_ARGS__)
#define log_info(...)    log_internal(LOG_INFO, __VA_ARGS__)
#define log_debug(...)   log_internal(LOG_DEBUG, __VA_ARGS__)
