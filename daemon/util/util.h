/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Small helpers shared by every module: cleanup attributes, file reading,
 * number parsing and CPU-list formatting. No policy lives here. */
#pragma once
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

static inline void freep(void *p) { free(*(void **)p); }
static inline void closep(int *fd)
{
    if (*fd >= 0)
        close(*fd);
}
static inline void fclosep(FILE **f)
{
    if (*f)
        fclose(*f);
}
#define _cleanup_free_ __attribute__((cleanup(freep)))
#define _cleanup_close_ __attribute__((cleanup(closep)))
#define _cleanup_fclose_ __attribute__((cleanup(fclosep)))
/* Hand a pointer on and leave NULL behind, so a _cleanup_ does not free it. */
#define TAKE_PTR(p) \
    ({ \
        __typeof__(p) _p = (p); \
        (p) = NULL; \
        _p; \
    })
/* The same for a file descriptor, leaving -1 behind for _cleanup_close_. */
#define TAKE_FD(fd) \
    ({ \
        int _fd = (fd); \
        (fd) = -1; \
        _fd; \
    })

/* An errno value for "the task is gone": normal, never an error. */
static inline bool errno_is_gone(int err)
{
    err = err < 0 ? -err : err;
    return err == ESRCH || err == ENOENT;
}
/* An errno value for "not now": out of descriptors or memory, interrupted.
 * Tried again later; any other failure is the same the next time. */
static inline bool errno_is_transient(int err)
{
    err = err < 0 ? -err : err;
    return err == EMFILE || err == ENFILE || err == ENOMEM || err == ENOBUFS || err == EAGAIN || err == EINTR;
}

/* Read a whole (small) file into buf, NUL-terminated, trailing newline kept.
 * Returns bytes read or -errno; -EFBIG if it does not fit. */
ssize_t read_file(const char *path, char *buf, size_t size);
/* Same, relative to a directory fd (openat), for per-task files. */
ssize_t read_file_at(int dirfd, const char *path, char *buf, size_t size);
/* Same, but a file longer than the buffer is cut at size-1 bytes instead of
 * failing: for files only whose beginning matters (cmdline, status). */
ssize_t read_file_prefix_at(int dirfd, const char *path, char *buf, size_t size);
/* Join root and path ("/" root or NULL means the real system). */
int path_join(char *out, size_t size, const char *root, const char *path);
/* The one unsigned number of a file below root (a sysfs attribute), trailing
 * newline allowed. Returns 0 or -errno (-EINVAL: not a number). */
int read_u64_below(const char *root, const char *path, uint64_t *ret);
/* For /proc files the kernel generates whole on the first read (stat,
 * status, schedstat: one seq_file record), and regular files: a read
 * shorter than asked is the end, so no second read() just to see 0.
 * Otherwise as read_file. */
ssize_t read_proc_fd(int fd, char *buf, size_t size);
ssize_t read_proc_file(const char *path, char *buf, size_t size);
/* Reads root/proc/PID/task/TID/NAME (root "" or NULL: the real /proc) like
 * read_proc_file. */
ssize_t read_proc_task(const char *root, pid_t pid, pid_t tid, const char *name, char *buf, size_t size);
/* An fd of <root>/proc/PID, so that every file read below it comes from the
 * same process even if the PID is reused meanwhile; -errno. */
int open_proc_dir(const char *root, pid_t pid);

/* Strict parsers: whole string, no overflow; -EINVAL/-ERANGE on failure. */
int parse_uint(const char *s, unsigned *ret);
int parse_u64(const char *s, uint64_t *ret);
/* Field n (numbered from 1, as proc(5) does) of a /proc/PID/stat or
 * /proc/PID/task/TID/stat line. comm (field 2) may hold spaces and ')', so
 * fields from 3 on are counted from the last ')'. NULL when n < 3 or the
 * line is shorter. */
const char *procstat_field(const char *stat, int n);
/* Field n as an unsigned decimal; -EBADMSG when absent or not a number. */
int procstat_u64(const char *stat, int n, uint64_t *ret);
int parse_bool(const char *s, bool *ret);
/* "1.5", "0.125" → milli-units (1500, 125); at most 3 decimals. */
int parse_milli(const char *s, unsigned *ret);
/* Sizes with optional K/M/G suffix (binary). */
int parse_size(const char *s, uint64_t *ret);
/* Durations: "250ms", "2s", "1min", bare number = ms. */
int parse_duration_ms(const char *s, unsigned *ret);

/* Kernel CPU list syntax "0-3,8,10-11" ↔ cpu_set_t. */
int cpulist_parse(const char *s, cpu_set_t *set);
/* Writes "" for an empty set; returns -ENOSPC if it does not fit. */
int cpulist_format(const cpu_set_t *set, char *buf, size_t size);
/* Room for the cpulist of any cpu_set_t: every other CPU of 1024 is ~2.5 KB. */
#define CPULIST_MAX 8192
/* The cpulist of set for a message or a file, into buf (CPULIST_MAX bytes
 * always suffice); "(N CPUs)" if a shorter buffer is too small. Returns buf. */
const char *format_cpulist(const cpu_set_t *set, char *buf, size_t size);
/* mask holds every CPU of all (a task free to run on all of them). */
bool cpuset_covers(const cpu_set_t *mask, const cpu_set_t *all);

/* Milli-units as a short decimal: 1250 -> "1.25", 900 -> "0.9", 2000 -> "2". */
const char *format_milli(char *buf, size_t size, unsigned milli);
/* Per mille as a percentage: 125 -> "12.5%", 50 -> "5%". */
const char *format_percent(char *buf, size_t size, unsigned permille);

/* Monotonic clock in ms / ns. */
uint64_t now_ms(void);
uint64_t now_ns(void);
