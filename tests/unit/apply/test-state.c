/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The state file: round trip, and every way a file can be unusable is
 * refused with a message naming the file and the reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "state.h"
#include "util.h"

#define BOOT "0a1b2c3d-2222-3333-4444-555555555555"

static char logbuf[8192];

static void sink(int level, const char *msg, void *userdata)
{
    size_t n = strlen(logbuf);
    snprintf(logbuf + n, sizeof logbuf - n, "<%d>%s\n", level, msg);
}

struct fx {
    char dir[64];
    char path[128];
    struct state s;
    struct applied_task tasks[3];
    struct applied_group groups[2];
    struct applied_member members[2];
};

static cpu_set_t set_of(const char *cpus)
{
    cpu_set_t s;
    assert_int_equal(cpulist_parse(cpus, &s), 0);
    return s;
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    assert_non_null(f);
    strcpy(f->dir, "/tmp/test-state.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    /* the parent directory is created on the first write */
    snprintf(f->path, sizeof f->path, "%s/run/state", f->dir);

    f->tasks[0] = (struct applied_task){.tid = 4242,
                                        .pid = 4240,
                                        .start_time = 123456789012ull,
                                        .original = set_of("0-3,8-11"),
                                        .set = set_of("1"),
                                        .comm = "kworker helper"};
    f->tasks[1] = (struct applied_task){.tid = 7,
                                        .pid = 7,
                                        .start_time = 5,
                                        .original = set_of("0-1023"),
                                        .set = set_of("0,2,4,6,1023"),
                                        .comm = "we\nird"};
    f->tasks[2] = (struct applied_task){
        .tid = 8, .pid = 7, .start_time = 6, .original = set_of("0-1"), .set = set_of("0"), .comm = ""};
    f->members[0] = (struct applied_member){
        .tid = 4242, .pid = 4240, .start_time = 1, .original_path = "/system.slice/a b.service"};
    f->members[1] = (struct applied_member){.tid = 9, .pid = 9, .start_time = 2, .original_path = "/"};
    f->groups[0] = (struct applied_group){
        .kind = GROUP_CPUSET_V1, .name = "/turbosched", .set = set_of("0-1"), .members = f->members, .n_members = 2};
    f->groups[1] = (struct applied_group){
        .kind = GROUP_UNIT, .name = "turbosched-jitter.slice", .set = set_of("2"), .original_all = true};
    f->s = (struct state){.boot_id = BOOT, .tasks = f->tasks, .n_tasks = 3, .groups = f->groups, .n_groups = 2};

    logbuf[0] = '\0';
    log_set_sink(sink, NULL);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    char run[160];
    unlink(f->path);
    snprintf(run, sizeof run, "%s/run", f->dir);
    rmdir(run);
    rmdir(f->dir);
    log_set_sink(NULL, NULL);
    free(f);
    return 0;
}

static void test_round_trip(void **state)
{
    struct fx *f = *state;
    assert_int_equal(state_write(f->path, &f->s, NULL), 0);

    struct state r;
    assert_int_equal(state_read(f->path, BOOT, &r), 0);
    assert_string_equal(r.boot_id, BOOT);
    assert_int_equal(r.n_tasks, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(r.tasks[i].tid, f->tasks[i].tid);
        assert_int_equal(r.tasks[i].pid, f->tasks[i].pid);
        assert_int_equal(r.tasks[i].start_time, f->tasks[i].start_time);
        assert_true(CPU_EQUAL(&r.tasks[i].original, &f->tasks[i].original));
        assert_true(CPU_EQUAL(&r.tasks[i].set, &f->tasks[i].set));
    }
    assert_string_equal(r.tasks[0].comm, "kworker helper");
    assert_string_equal(r.tasks[1].comm, "we?ird"); /* one record per line, whatever the name */
    assert_string_equal(r.tasks[2].comm, "");

    assert_int_equal(r.n_groups, 2);
    assert_int_equal(r.groups[0].kind, GROUP_CPUSET_V1);
    assert_string_equal(r.groups[0].name, "/turbosched");
    assert_int_equal(r.groups[0].n_members, 2);
    assert_string_equal(r.groups[0].members[0].original_path, "/system.slice/a b.service");
    assert_int_equal(r.groups[0].members[0].tid, 4242);
    assert_int_equal(r.groups[0].members[0].start_time, 1);
    assert_string_equal(r.groups[0].members[1].original_path, "/");
    assert_int_equal(r.groups[1].kind, GROUP_UNIT);
    assert_string_equal(r.groups[1].name, "turbosched-jitter.slice");
    assert_true(r.groups[1].original_all);
    assert_true(CPU_EQUAL(&r.groups[1].set, &f->groups[1].set));
    state_free(&r);

    /* a unit with a real original survives too */
    f->groups[1].original_all = false;
    f->groups[1].original = set_of("4-7");
    assert_int_equal(state_write(f->path, &f->s, NULL), 0);
    assert_int_equal(state_read(f->path, BOOT, &r), 0);
    assert_false(r.groups[1].original_all);
    assert_true(CPU_EQUAL(&r.groups[1].original, &f->groups[1].original));
    state_free(&r);

    /* no temporary files left next to it */
    char cmd[256];
    snprintf(cmd, sizeof cmd, "test $(ls -A %s/run | wc -l) -eq 1", f->dir);
    assert_int_equal(system(cmd), 0);
}

static void test_empty_state_removes_file(void **state)
{
    struct fx *f = *state;
    assert_int_equal(state_write(f->path, &f->s, NULL), 0);
    assert_int_equal(access(f->path, F_OK), 0);
    struct state empty = {.boot_id = BOOT};
    assert_int_equal(state_write(f->path, &empty, NULL), 0);
    assert_int_equal(access(f->path, F_OK), -1);
    struct state r;
    assert_int_equal(state_read(f->path, BOOT, &r), -ENOENT);
    assert_string_equal(logbuf, ""); /* no file is not worth a message */
}

static size_t load(const char *path, char *buf, size_t size)
{
    ssize_t n = read_file(path, buf, size);
    assert_true(n > 0);
    return (size_t)n;
}

static void store(const char *path, const char *buf, size_t n)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    assert_int_equal(fwrite(buf, 1, n, fp), n);
    fclose(fp);
}

static const struct applied_task *task_of(const struct state *s, pid_t tid)
{
    const struct applied_task *found = NULL;
    for (size_t i = 0; i < s->n_tasks; i++)
        if (s->tasks[i].tid == tid) {
            assert_null(found); /* one record per TID */
            found = &s->tasks[i];
        }
    assert_non_null(found);
    return found;
}

/* Changes appended as blocks after the file: a block's task line replaces
 * the earlier one of its TID; a block cut off or damaged is left out with
 * every block after it. */
static void test_appended_blocks(void **state)
{
    struct fx *f = *state;
    int fd;
    assert_int_equal(state_write(f->path, &f->s, &fd), 0);
    assert_true(fd >= 0);
    struct applied_task moved = f->tasks[1], added = {.tid = 77,
                                                      .pid = 77,
                                                      .start_time = 5,
                                                      .original = set_of("0-3"),
                                                      .set = set_of("1"),
                                                      .comm = "new"};
    moved.set = set_of("3");
    const struct applied_task *block1[] = {&added}, *block2[] = {&moved};
    assert_int_equal(state_append(fd, block1, 1), 0);
    assert_int_equal(state_append(fd, block2, 1), 0);
    static char good[65536];
    size_t n = load(f->path, good, sizeof good);

    struct state r;
    assert_int_equal(state_read(f->path, BOOT, &r), 0);
    assert_int_equal(r.n_tasks, 4);
    assert_true(CPU_EQUAL(&task_of(&r, moved.tid)->set, &moved.set)); /* as the later block has it */
    assert_string_equal(task_of(&r, 77)->comm, "new");
    assert_non_null(task_of(&r, 4242));
    assert_non_null(task_of(&r, 8));
    assert_int_equal(r.n_groups, 2);
    state_free(&r);

    /* the last block cut off in its write: the first still counts */
    store(f->path, good, n - 3);
    logbuf[0] = '\0';
    assert_int_equal(state_read(f->path, BOOT, &r), 0);
    assert_int_equal(r.n_tasks, 4);
    assert_true(CPU_EQUAL(&task_of(&r, moved.tid)->set, &f->tasks[1].set));
    state_free(&r);
    assert_non_null(strstr(logbuf, "left out"));

    /* a damaged block ends the reading: neither it nor the next counts */
    char *first_block = strstr(good, "\ntask 77 ") + 1;
    first_block[strlen("task 77 77 ")] = '6'; /* start time 5 -> 6: its checksum fails */
    store(f->path, good, n);
    assert_int_equal(state_read(f->path, BOOT, &r), 0);
    assert_int_equal(r.n_tasks, 3);
    assert_true(CPU_EQUAL(&task_of(&r, moved.tid)->set, &f->tasks[1].set));
    state_free(&r);

    /* only task lines go in a block */
    first_block[strlen("task 77 77 ")] = '5';
    memcpy(first_block, "unit", 4);
    store(f->path, good, n);
    assert_int_equal(state_read(f->path, BOOT, &r), 0);
    assert_int_equal(r.n_tasks, 3);
    assert_int_equal(r.n_groups, 2);
    state_free(&r);
    close(fd);
}

static void test_truncated(void **state)
{
    struct fx *f = *state;
    assert_int_equal(state_write(f->path, &f->s, NULL), 0);
    static char full[65536];
    size_t n = load(f->path, full, sizeof full);

    /* every possible cut (a crash cannot produce them with rename, but a full
     * disk or a hand edit can) is refused */
    for (size_t cut = 0; cut < n; cut++) {
        store(f->path, full, cut);
        struct state r;
        logbuf[0] = '\0';
        int ret = state_read(f->path, BOOT, &r);
        assert_true(ret < 0);
        assert_true(strstr(logbuf, f->path) != NULL);
        assert_true(strstr(logbuf, "ignoring it") != NULL);
    }
    /* cut at a line boundary before the end line: said plainly */
    char *end = strstr(full, "\nend ");
    assert_non_null(end);
    store(f->path, full, (size_t)(end - full) + 1);
    struct state r;
    logbuf[0] = '\0';
    assert_int_equal(state_read(f->path, BOOT, &r), -EBADMSG);
    char want[256];
    snprintf(want, sizeof want, "state file %s: truncated (no end line), ignoring it", f->path);
    assert_non_null(strstr(logbuf, want));
}

static void test_corrupted(void **state)
{
    struct fx *f = *state;
    assert_int_equal(state_write(f->path, &f->s, NULL), 0);
    static char full[65536], copy[65536];
    size_t n = load(f->path, full, sizeof full);
    struct state r;

    /* every single changed byte before the end line is caught */
    size_t end = (size_t)(strstr(full, "\nend ") - full) + 1;
    for (size_t i = 0; i < end; i++) {
        memcpy(copy, full, n);
        copy[i] = copy[i] == '1' ? '2' : '1';
        store(f->path, copy, n);
        logbuf[0] = '\0';
        assert_true(state_read(f->path, BOOT, &r) < 0);
        assert_non_null(strstr(logbuf, f->path));
    }

    /* a changed mask: the checksum says so */
    memcpy(copy, full, n);
    char *p = strstr(copy, "task 4242 4240 123456789012 0-3,8-11 1 ");
    assert_non_null(p);
    p[strlen("task 4242 4240 123456789012 0-3,8-11 ")] = '2';
    store(f->path, copy, n);
    logbuf[0] = '\0';
    assert_int_equal(state_read(f->path, BOOT, &r), -EBADMSG);
    assert_non_null(strstr(logbuf, "corrupted (checksum mismatch)"));

    /* a block after the end line with no end of its own (a write cut
     * off): left out, the rest read */
    memcpy(copy, full, n);
    memcpy(copy + n, "task 1 1 1 0 0 x\n", 17);
    store(f->path, copy, n + 17);
    logbuf[0] = '\0';
    assert_int_equal(state_read(f->path, BOOT, &r), 0);
    assert_int_equal(r.n_tasks, f->s.n_tasks);
    state_free(&r);
    assert_non_null(strstr(logbuf, "its last change (1 line) cut off by the end of the file, left out"));

    /* not ours at all */
    store(f->path, "hello\n", 6);
    logbuf[0] = '\0';
    assert_int_equal(state_read(f->path, BOOT, &r), -EBADMSG);
    assert_non_null(strstr(logbuf, "not a turbosched state file"));
}

static void test_unreadable_line_with_valid_checksum(void **state)
{
    struct fx *f = *state;
    /* a well-formed file (right checksum) with a record we cannot read is
     * refused as a whole: nothing is restored from half a file */
    f->tasks[0].original = (cpu_set_t){0}; /* written as an empty field */
    assert_int_equal(state_write(f->path, &f->s, NULL), 0);
    struct state r;
    assert_int_equal(state_read(f->path, BOOT, &r), -EBADMSG);
    assert_non_null(strstr(logbuf, "corrupted (line 3 unreadable)"));
}

/* The jitter slice a task got travels with it; files without it (written
 * before it existed, or for tasks without one) read as before. */
static void test_slice_token(void **state)
{
    struct fx *f = *state;
    /* without any slice: the line is the one older daemons wrote */
    assert_int_equal(state_write(f->path, &f->s, NULL), 0);
    char text[8192];
    assert_true(read_file(f->path, text, sizeof text) > 0);
    assert_null(strstr(text, "slice="));
    assert_non_null(strstr(text, "task 4242 4240 123456789012 0-3,8-11 1 kworker helper\n"));
    struct state r;
    assert_int_equal(state_read(f->path, BOOT, &r), 0);
    for (size_t i = 0; i < 3; i++)
        assert_false(r.tasks[i].slice.applied);
    state_free(&r);

    f->tasks[0].slice =
        (struct slice_saved){.applied = true,
                             .orig = {.policy = 3 /* SCHED_BATCH */, .nice = -5, .flags = 1, .runtime_ns = 2000000},
                             .orig_default = false,
                             .set_runtime_ns = 300000};
    /* a comm that looks like the token's start is still a comm */
    strcpy(f->tasks[2].comm, "slice=a b");
    assert_int_equal(state_write(f->path, &f->s, NULL), 0);
    assert_true(read_file(f->path, text, sizeof text) > 0);
    assert_non_null(strstr(text, " 0-3,8-11 1 slice=p=3,n=-5,f=0x1,r=2000000,d=0,s=300000 kworker helper\n"));
    assert_int_equal(state_read(f->path, BOOT, &r), 0);
    assert_true(r.tasks[0].slice.applied);
    assert_int_equal(r.tasks[0].slice.orig.policy, 3);
    assert_int_equal(r.tasks[0].slice.orig.nice, -5);
    assert_int_equal(r.tasks[0].slice.orig.flags, 1);
    assert_int_equal(r.tasks[0].slice.orig.runtime_ns, 2000000);
    assert_false(r.tasks[0].slice.orig_default);
    assert_int_equal(r.tasks[0].slice.set_runtime_ns, 300000);
    assert_string_equal(r.tasks[0].comm, "kworker helper");
    assert_false(r.tasks[1].slice.applied);
    assert_false(r.tasks[2].slice.applied);
    assert_string_equal(r.tasks[2].comm, "slice=a b");
    state_free(&r);

    /* a token we could not have written makes the file corrupted */
    f->tasks[0].slice.orig.policy = 1; /* SCHED_FIFO: never touched */
    assert_int_equal(state_write(f->path, &f->s, NULL), 0);
    assert_int_equal(state_read(f->path, BOOT, &r), -EBADMSG);
    assert_non_null(strstr(logbuf, "corrupted (line 3 unreadable)"));
}

static void test_other_boot(void **state)
{
    struct fx *f = *state;
    assert_int_equal(state_write(f->path, &f->s, NULL), 0);
    struct state r;
    assert_int_equal(state_read(f->path, "ffffffff-2222-3333-4444-555555555555", &r), -ESTALE);
    char want[256];
    snprintf(want, sizeof want, "state file %s: written during another boot (%s), ignoring it", f->path, BOOT);
    assert_non_null(strstr(logbuf, want));
}

static void test_other_version(void **state)
{
    struct fx *f = *state;
    assert_int_equal(state_write(f->path, &f->s, NULL), 0);
    static char full[65536];
    size_t n = load(f->path, full, sizeof full);
    full[strlen("turbosched-state ")] = '3';
    store(f->path, full, n);
    struct state r;
    assert_int_equal(state_read(f->path, BOOT, &r), -EPROTONOSUPPORT);
    char want[256];
    snprintf(want, sizeof want, "state file %s: format version 3, this daemon reads 2, ignoring it", f->path);
    assert_non_null(strstr(logbuf, want));
}

static void test_many_tasks(void **state)
{
    struct fx *f = *state;
    enum { N = 5000 };
    struct applied_task *tasks = calloc(N, sizeof *tasks);
    assert_non_null(tasks);
    for (int i = 0; i < N; i++)
        tasks[i] = (struct applied_task){.tid = i + 1,
                                         .pid = i + 1,
                                         .start_time = (uint64_t)i * 3,
                                         .original = set_of("0-63"),
                                         .set = set_of("0,32"),
                                         .comm = "w"};
    struct state s = {.boot_id = BOOT, .tasks = tasks, .n_tasks = N};
    assert_int_equal(state_write(f->path, &s, NULL), 0);
    struct state r;
    assert_int_equal(state_read(f->path, BOOT, &r), 0);
    assert_int_equal(r.n_tasks, N);
    assert_int_equal(r.tasks[N - 1].tid, N);
    assert_int_equal(r.tasks[N - 1].start_time, (uint64_t)(N - 1) * 3);
    state_free(&r);
    free(tasks);
}

/* A symlink at the state file's path is refused, and neither reading nor
 * the next write touches what it points to. */
static void test_symlink_refused(void **state)
{
    struct fx *f = *state;
    assert_int_equal(state_write(f->path, &f->s, NULL), 0);
    char target[160];
    snprintf(target, sizeof target, "%s/target", f->dir);
    assert_int_equal(rename(f->path, target), 0);
    assert_int_equal(symlink(target, f->path), 0);
    static char before[65536], after[65536];
    size_t n = load(target, before, sizeof before);
    struct stat st0, st1;
    assert_int_equal(stat(target, &st0), 0);

    struct state r;
    assert_int_equal(state_read(f->path, BOOT, &r), -ELOOP);
    assert_non_null(strstr(logbuf, "is a symbolic link, refusing it"));
    /* Writing replaces the link itself (rename), never the file behind it. */
    f->s.n_tasks = 1;
    assert_int_equal(state_write(f->path, &f->s, NULL), 0);
    struct stat lst;
    assert_int_equal(lstat(f->path, &lst), 0);
    assert_true(S_ISREG(lst.st_mode));
    assert_int_equal(stat(target, &st1), 0);
    assert_int_equal(load(target, after, sizeof after), n);
    assert_memory_equal(before, after, n);
    assert_int_equal(st0.st_mtim.tv_sec, st1.st_mtim.tv_sec);
    assert_int_equal(st0.st_mtim.tv_nsec, st1.st_mtim.tv_nsec);
    assert_int_equal(unlink(target), 0);
}

static void test_owner_and_mode(void **state)
{
    struct fx *f = *state;
    assert_int_equal(state_write(f->path, &f->s, NULL), 0);
    struct state r;
    assert_int_equal(state_read(f->path, BOOT, &r), 0);
    state_free(&r);

    assert_int_equal(chmod(f->path, 0666), 0);
    assert_int_equal(state_read(f->path, BOOT, &r), -EPERM);
    assert_non_null(strstr(logbuf, "writable by group or others"));
    assert_int_equal(chmod(f->path, 0620), 0);
    assert_int_equal(state_read(f->path, BOOT, &r), -EPERM);
    assert_int_equal(chmod(f->path, 0644), 0);
    assert_int_equal(state_read(f->path, BOOT, &r), 0);
    state_free(&r);

    /* A directory anyone may write to: anyone could have put the file there. */
    char run[160];
    snprintf(run, sizeof run, "%s/run", f->dir);
    assert_int_equal(chmod(run, 0777), 0);
    logbuf[0] = '\0';
    assert_int_equal(state_read(f->path, BOOT, &r), -EPERM);
    assert_non_null(strstr(logbuf, "writable by others; not trusting it"));
    /* Sticky (as /tmp): others cannot replace our file, only add theirs. */
    assert_int_equal(chmod(run, 01777), 0);
    assert_int_equal(state_read(f->path, BOOT, &r), 0);
    state_free(&r);
    assert_int_equal(chmod(run, 0755), 0);

    if (geteuid() != 0)
        return; /* giving a file away needs root; the mode checks above ran */
    assert_int_equal(chown(f->path, 65534, 65534), 0);
    logbuf[0] = '\0';
    assert_int_equal(state_read(f->path, BOOT, &r), -EPERM);
    assert_non_null(strstr(logbuf, "owned by another user (uid 65534"));
    assert_int_equal(chown(f->path, 0, 0), 0);
    assert_int_equal(chown(run, 65534, 65534), 0);
    assert_int_equal(state_read(f->path, BOOT, &r), -EPERM);
    assert_int_equal(chown(run, 0, 0), 0);

    /* A FIFO in its place is refused without blocking. */
    assert_int_equal(unlink(f->path), 0);
    assert_int_equal(mkfifo(f->path, 0600), 0);
    assert_int_equal(state_read(f->path, BOOT, &r), -EPERM);
    assert_non_null(strstr(logbuf, "not a regular file"));
}

/* Names that, joined to the cpuset mount or handed to systemd, would reach
 * something other than what the daemon wrote. A correct checksum does not
 * make them acceptable. */
static void test_paths_and_unit_names(void **state)
{
    struct fx *f = *state;
    static const char *const bad_groups[] = {
        "/turbosched/../../etc", "/..", "turbosched", "/a//b", "/a/", "/a/./b", "/", "/a\x01b"};
    static const char *const bad_members[] = {"/../x", "//", "x", "/a/.."};
    static const char *const bad_units[] = {"../../etc/x.service", "a b.service", "x.socket", ".service",
                                            "a/b.slice",           "slice"};
    struct state r;
    for (size_t i = 0; i < ELEMENTSOF(bad_groups); i++) {
        f->groups[0].name = (char *)bad_groups[i];
        assert_int_equal(state_write(f->path, &f->s, NULL), 0);
        print_message("cpuset %s\n", bad_groups[i]);
        assert_int_equal(state_read(f->path, BOOT, &r), -EBADMSG);
    }
    f->groups[0].name = "/turbosched";
    for (size_t i = 0; i < ELEMENTSOF(bad_members); i++) {
        f->members[1].original_path = (char *)bad_members[i];
        assert_int_equal(state_write(f->path, &f->s, NULL), 0);
        print_message("member %s\n", bad_members[i]);
        assert_int_equal(state_read(f->path, BOOT, &r), -EBADMSG);
    }
    f->members[1].original_path = "/";
    for (size_t i = 0; i < ELEMENTSOF(bad_units); i++) {
        f->groups[1].name = (char *)bad_units[i];
        assert_int_equal(state_write(f->path, &f->s, NULL), 0);
        print_message("unit %s\n", bad_units[i]);
        assert_int_equal(state_read(f->path, BOOT, &r), -EBADMSG);
    }
    static const char *const good_units[] = {"turbosched-jitter.slice", "getty@tty1.service", "run-u12.scope",
                                             "foo\\x2dbar.service"};
    for (size_t i = 0; i < ELEMENTSOF(good_units); i++) {
        f->groups[1].name = (char *)good_units[i];
        assert_int_equal(state_write(f->path, &f->s, NULL), 0);
        assert_int_equal(state_read(f->path, BOOT, &r), 0);
        assert_string_equal(r.groups[1].name, good_units[i]);
        state_free(&r);
    }
    assert_true(state_cgroup_path_valid("/turbosched/sub group", false));
    assert_true(state_cgroup_path_valid("/", true));
    assert_false(state_cgroup_path_valid("/", false));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_state_removes_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_appended_blocks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unreadable_line_with_valid_checksum, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_boot, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_version, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_tasks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symlink_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_owner_and_mode, setup, teardown),
        cmocka_unit_test_setup_teardown(test_paths_and_unit_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slice_token, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
