/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "log.h"

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

static int max_level = LOG_INFO;
static log_sink_fn sink;
static void *sink_userdata;

void log_set_max_level(int level) { max_level = level; }
int log_get_max_level(void) { return max_level; }

void log_set_sink(log_sink_fn fn, void *userdata)
{
    sink = fn;
    sink_userdata = userdata;
}

int log_level_from_string(const char *s)
{
    static const char *const names[] = {"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"};
    for (int i = 0; i < 8; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    if (strcmp(s, "error") == 0)
        return LOG_ERR;
    if (s[0] >= '0' && s[0] <= '7' && s[1] == '\0')
        return s[0] - '0';
    return -EINVAL;
}

/* The "<N>" level prefix only where journald reads stderr (it turns the
 * prefix into the priority): JOURNAL_STREAM names the stream as "dev:ino",
 * and it must still be our stderr, not one inherited by a shell. Elsewhere
 * (a terminal, --check-config, a test's pipe) the bare message. */
static bool stderr_is_journal(void)
{
    static int cached = -1;
    if (cached < 0) {
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;
        cached = e && sscanf(e, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) == 0 &&
                 (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
    }
    return cached;
}

size_t log_escape(const char *in, char *out, size_t size)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    if (size == 0)
        return 0;
    for (const unsigned char *p = (const unsigned char *)in; *p; p++) {
        char esc[4];
        size_t n = 1;
        esc[0] = (char)*p;
        if (*p < 0x20 || *p >= 0x7f) {
            /* \n, \t and the rest as \xNN: the line stays one line, and a
             * "<0>" inside it is text, not a priority prefix. */
            esc[0] = '\\';
            if (*p == '\n' || *p == '\t') {
                esc[1] = *p == '\n' ? 'n' : 't';
                n = 2;
            } else {
                esc[1] = 'x';
                esc[2] = hex[*p >> 4];
                esc[3] = hex[*p & 15];
                n = 4;
            }
        }
        if (o + n >= size)
            break; /* never half an escape */
        memcpy(out + o, esc, n);
        o += n;
    }
    out[o] = '\0';
    return o;
}

static void log_internalv(int level, const char *fmt, va_list ap)
{
    int saved = errno;
    char raw[1024], buf[4 * sizeof raw];
    vsnprintf(raw, sizeof raw, fmt, ap);
    /* Task names, command lines, unit and cgroup names and client requests
     * reach messages through %s: escaping the whole message here covers
     * every one of them, whichever call site logs it. */
    log_escape(raw, buf, sizeof buf);
    if (sink)
        sink(level, buf, sink_userdata);
    else if (stderr_is_journal())
        fprintf(stderr, "<%d>%s\n", level, buf);
    else
        fprintf(stderr, "%s\n", buf);
    errno = saved;
}

void log_internal(int level, const char *fmt, ...)
{
    if (level > max_level)
        return;
    va_list ap;
    va_start(ap, fmt);
    log_internalv(level, fmt, ap);
    va_end(ap);
}

int log_errno_internal(int level, int r, const char *fmt, ...)
{
    /* 0 is not an error: a caller that passes it would return success
     * from an error path. */
    assert(r != 0);
    if (r > 0)
        r = -r;
    if (r == 0)
        r = -EINVAL;
    if (level > max_level)
        return r;
    int saved = errno;
    /* %m in fmt reads errno while the message is formatted. */
    errno = -r;
    va_list ap;
    va_start(ap, fmt);
    log_internalv(level, fmt, ap);
    va_end(ap);
    errno = saved;
    return r;
}

int log_ratelimit_level(struct log_ratelimit *rl, int level)
{
    uint64_t now = now_ms() + 1; /* never 0: begin_ms 0 is "none yet" */
    uint64_t interval = rl->interval_ms ? rl->interval_ms : LOG_RATELIMIT_INTERVAL_MS;
    if (!rl->begin_ms || now - rl->begin_ms >= interval) {
        if (rl->lowered)
            log_full(level, "%s: %u more in %llu s logged at debug level only", rl->what ? rl->what : "messages",
                     rl->lowered, (unsigned long long)((now - rl->begin_ms) / 1000u));
        rl->begin_ms = now;
        rl->n = rl->lowered = 0;
    }
    if (rl->n < (rl->burst ? rl->burst : LOG_RATELIMIT_BURST)) {
        rl->n++;
        return level;
    }
    rl->lowered++;
    return LOG_DEBUG;
}
