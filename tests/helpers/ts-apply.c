/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Drives the applier on the real system for tests/integration/apply.sh: reads
 * one command per line on stdin and answers one line per command, "ok
 * <result>" or "err <errno name>" (find: "ok original CPUS set CPUS" or "ok
 * none"), so the test can check the real effect between steps and kill the
 * driver at any point.
 *
 *   ts-apply [--dry-run] STATE_FILE
 *   pack TID CPULIST | adopt TID PARENT_TID | restore TID | forget TID
 *   verify | restore-all | flush
 *   recover | find TID | hands-off TID | count
 *   group-set GROUP CPULIST|- | group-attach GROUP TID | group-remove GROUP
 *   quit
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apply.h"
#include "log.h"
#include "sysops.h"
#include "util.h"

static int task_from_proc(pid_t tid, struct task *t)
{
    char path[64], buf[4096];
    *t = (struct task){.tid = tid, .pid = tid};
    int r = sysops_real.task_start_time(NULL, tid, &t->start_time);
    if (r < 0)
        return r;
    snprintf(path, sizeof path, "/proc/%d/comm", (int)tid);
    if (read_file(path, buf, sizeof buf) > 0) {
        buf[MIN(strcspn(buf, "\n"), sizeof t->comm - 1)] = '\0';
        memcpy(t->comm, buf, strlen(buf) + 1);
    }
    snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
    if (read_file(path, buf, sizeof buf) > 0) {
        const char *tgid = strstr(buf, "\nTgid:");
        if (tgid)
            t->pid = (pid_t)atoi(tgid + 6);
    }
    return 0;
}

static int parse_tid(const char *s, pid_t *ret)
{
    unsigned v;
    if (!s || parse_uint(s, &v) < 0 || v == 0)
        return -EINVAL;
    *ret = (pid_t)v;
    return 0;
}

static int run(struct applier *a, char *line, char *answer, size_t answer_size)
{
    char *save = NULL;
    const char *cmd = strtok_r(line, " \n", &save);
    const char *arg1 = strtok_r(NULL, " \n", &save);
    const char *arg2 = strtok_r(NULL, " \n", &save);
    pid_t tid;
    cpu_set_t set;
    struct task t;
    int r;

    if (!cmd)
        return -EINVAL;
    if (strcmp(cmd, "pack") == 0) {
        if (parse_tid(arg1, &tid) < 0 || !arg2 || cpulist_parse(arg2, &set) < 0)
            return -EINVAL;
        if ((r = task_from_proc(tid, &t)) < 0)
            return r;
        return applier_pack_task(a, &t, &set);
    }
    if (strcmp(cmd, "adopt") == 0) {
        pid_t parent;
        if (parse_tid(arg1, &tid) < 0 || parse_tid(arg2, &parent) < 0)
            return -EINVAL;
        if ((r = task_from_proc(tid, &t)) < 0)
            return r;
        return applier_adopt_inherited(a, t.tid, t.pid, t.start_time, parent);
    }
    if (strcmp(cmd, "restore") == 0)
        return parse_tid(arg1, &tid) < 0 ? -EINVAL : applier_restore_task(a, tid);
    if (strcmp(cmd, "forget") == 0) {
        if (parse_tid(arg1, &tid) < 0)
            return -EINVAL;
        applier_forget_task(a, tid);
        return 0;
    }
    if (strcmp(cmd, "verify") == 0)
        return applier_verify(a, 0);
    if (strcmp(cmd, "restore-all") == 0)
        return applier_restore_all(a);
    if (strcmp(cmd, "flush") == 0)
        return applier_flush_state(a);
    if (strcmp(cmd, "recover") == 0)
        return applier_recover(a);
    if (strcmp(cmd, "count") == 0)
        return (int)applier_count(a);
    if (strcmp(cmd, "hands-off") == 0)
        return parse_tid(arg1, &tid) < 0 ? -EINVAL : applier_hands_off(a, tid);
    if (strcmp(cmd, "find") == 0) {
        if (parse_tid(arg1, &tid) < 0)
            return -EINVAL;
        const struct applied_task *e = applier_find(a, tid);
        char o[256], s[256];
        if (!e) {
            snprintf(answer, answer_size, "ok none");
            return 0;
        }
        cpulist_format(&e->original, o, sizeof o);
        cpulist_format(&e->set, s, sizeof s);
        snprintf(answer, answer_size, "ok original %s set %s", o, s);
        return 0;
    }
    if (strcmp(cmd, "group-set") == 0) {
        if (!arg1 || !arg2)
            return -EINVAL;
        if (strcmp(arg2, "-") == 0)
            return applier_group_set_v1(a, arg1, NULL);
        if (cpulist_parse(arg2, &set) < 0)
            return -EINVAL;
        return applier_group_set_v1(a, arg1, &set);
    }
    if (strcmp(cmd, "group-attach") == 0) {
        if (!arg1 || parse_tid(arg2, &tid) < 0)
            return -EINVAL;
        if ((r = task_from_proc(tid, &t)) < 0)
            return r;
        return applier_group_attach_v1(a, arg1, t.tid, t.pid, t.start_time);
    }
    if (strcmp(cmd, "group-remove") == 0)
        return arg1 ? applier_group_remove_v1(a, arg1) : -EINVAL;
    return -EINVAL;
}

int main(int argc, char **argv)
{
    bool dry_run = argc > 1 && strcmp(argv[1], "--dry-run") == 0;
    if (argc != 2 + dry_run) {
        fprintf(stderr, "usage: %s [--dry-run] STATE_FILE\n", argv[0]);
        return 2;
    }
    log_set_max_level(LOG_DEBUG);
    struct applier *a;
    int r = applier_new(&sysops_real, argv[1 + dry_run], dry_run, &a);
    if (r < 0)
        return 1;

    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, stdin) > 0) {
        if (strncmp(line, "quit", 4) == 0)
            break;
        char answer[1024] = "";
        r = run(a, line, answer, sizeof answer);
        if (answer[0])
            printf("%s\n", answer);
        else if (r < 0)
            printf("err %s\n", strerrorname_np(-r) ?: "?");
        else
            printf("ok %d\n", r);
        fflush(stdout);
    }
    free(line);
    applier_free(a);
    sysops_real_close();
    return 0;
}
