/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Logging to stderr with syslog priority prefixes, which journald parses. */
#pragma once
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
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

/* The level is checked before the arguments are evaluated: the CPU lists a
 * debug line formats for every placement cost nothing at the default level. */
#define log_full(level, ...) \
    do { \
        if ((level) <= log_get_max_level()) \
            log_internal((level), __VA_ARGS__); \
    } while (0)
#define log_err(...) log_full(LOG_ERR, __VA_ARGS__)
#define log_warning(...) log_full(LOG_WARNING, __VA_ARGS__)
#define log_notice(...) log_full(LOG_NOTICE, __VA_ARGS__)
#define log_info(...) log_full(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_full(LOG_DEBUG, __VA_ARGS__)

/* Logs and returns in one call, as systemd's log_error_errno(): the message
 * is formatted with errno set to -r, so "%m" in fmt reads as strerror(-r)
 * ("binding %s: %m"), and the call returns r, always negative (r must not be
 * 0; a positive errno value is negated). Logged once, where the error is
 * handled; a caller that gets r back does not log it again:
 *
 *     if (r < 0)
 *         return log_error_errno(r, "control: creating the directory of %s: %m", path);
 */
int log_errno_internal(int level, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* What log_errno_internal returns, for a message dropped by its level. */
static inline int log_errno_value(int r)
{
    assert(r != 0);
    return r > 0 ? -r : r;
}
#define log_errno_full(level, r, ...) \
    ((level) <= log_get_max_level() ? log_errno_internal((level), (r), __VA_ARGS__) : log_errno_value(r))

#define log_error_errno(r, ...) log_errno_full(LOG_ERR, (r), __VA_ARGS__)
#define log_warning_errno(r, ...) log_errno_full(LOG_WARNING, (r), __VA_ARGS__)
#define log_notice_errno(r, ...) log_errno_full(LOG_NOTICE, (r), __VA_ARGS__)
#define log_info_errno(r, ...) log_errno_full(LOG_INFO, (r), __VA_ARGS__)
#define log_debug_errno(r, ...) log_errno_full(LOG_DEBUG, (r), __VA_ARGS__)

/* Messages a local user can cause at will (a refused request, a task that
 * resets its own mask): the first burst of each interval at their level,
 * the rest at LOG_DEBUG, so that a flood of them neither fills the journal
 * nor makes journald's own rate limit drop the daemon's other messages. The
 * first message after an interval that lowered some says how many (what
 * names them). Zero-initialised fields take LOG_RATELIMIT_BURST and
 * LOG_RATELIMIT_INTERVAL_MS. */
#define LOG_RATELIMIT_BURST 20u
#define LOG_RATELIMIT_INTERVAL_MS 60000u
struct log_ratelimit {
    const char *what;
    unsigned burst;
    uint64_t interval_ms;
    uint64_t begin_ms; /* of the current interval; 0: none yet */
    unsigned n, lowered;
};
/* The level to log the next message at. */
int log_ratelimit_level(struct log_ratelimit *rl, int level);
#define log_ratelimited(rl, level, ...) \
    do { \
        int _rl_level = log_ratelimit_level((rl), (level)); \
        log_full(_rl_level, __VA_ARGS__); \
    } while (0)
