/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Makes tasks for the discovery integration test.
 *
 *   ts-spawner scenario FILE   threads, renames, fork+exec, exec from a
 *                              thread; writes what must be tracked to FILE
 *                              ("tid\tpid\tcomm\texe", and "absent\tTID" for
 *                              a TID that must not be), then waits for SIGTERM
 *   ts-spawner idle [NAME]     rename (PR_SET_NAME) and wait to be killed
 *   ts-spawner storm N         fork N children that exit at once
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

static char self_exe[PATH_MAX];
static pthread_barrier_t barrier;
static pid_t tid_a, tid_b;

static void *thread_a(void *arg)
{
    tid_a = gettid();
    pthread_barrier_wait(&barrier);
    for (;;)
        pause();
    return NULL;
}

static void *thread_b(void *arg)
{
    tid_b = gettid();
    prctl(PR_SET_NAME, "ts-sp (b) x y");
    pthread_barrier_wait(&barrier);
    for (;;)
        pause();
    return NULL;
}

static int exec_pipe[2];

static void *thread_exec(void *arg)
{
    pid_t me = gettid();
    /* the parent-death signal is per thread: this one becomes the process */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (write(exec_pipe[1], &me, sizeof me) != sizeof me)
        _exit(1);
    execl(self_exe, "ts-spawner", "idle", (char *)NULL);
    _exit(1);
}

static pid_t spawn(void (*fn)(void))
{
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        fn();
        _exit(1);
    }
    return pid;
}

static void child_exec_self_renamed(void) { execl(self_exe, "ts-spawner", "idle", "ts-sp c1 (r)", (char *)NULL); }

static void child_exec_sleep(void) { execl("/bin/sleep", "sleep", "1000", (char *)NULL); }

static void child_thread_exec(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, thread_exec, NULL) != 0)
        _exit(1);
    for (;;)
        pause();
}

/* Wait until /proc/PID/comm reads want and the process has nthreads. */
static int wait_comm(pid_t pid, const char *want, int nthreads)
{
    char path[64], buf[64];
    uint64_t deadline = now_ms() + 10000;
    while (now_ms() < deadline) {
        snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
        if (read_file(path, buf, sizeof buf) > 0) {
            buf[strcspn(buf, "\n")] = '\0';
            snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
            char status[4096];
            int threads = -1;
            if (read_file(path, status, sizeof status) > 0) {
                const char *p = strstr(status, "\nThreads:");
                if (p)
                    threads = atoi(p + 9);
            }
            if (strcmp(buf, want) == 0 && threads == nthreads)
                return 0;
        }
        usleep(2000);
    }
    fprintf(stderr, "pid %d never became '%s' with %d threads\n", (int)pid, want, nthreads);
    return -ETIMEDOUT;
}

static int scenario(const char *file)
{
    char sleep_exe[PATH_MAX];
    if (!realpath("/bin/sleep", sleep_exe))
        return 1;
    prctl(PR_SET_NAME, "ts-sp main");
    pthread_barrier_init(&barrier, NULL, 3);
    pthread_t a, b;
    pthread_create(&a, NULL, thread_a, NULL);
    pthread_create(&b, NULL, thread_b, NULL);
    pthread_barrier_wait(&barrier);
    /* renaming another thread goes through /proc/.../comm */
    pthread_setname_np(a, "ts-sp worker");

    if (pipe(exec_pipe) < 0)
        return 1;
    pid_t c1 = spawn(child_exec_self_renamed);
    pid_t c2 = spawn(child_exec_sleep);
    pid_t c3 = spawn(child_thread_exec);
    pid_t old_tid;
    if (read(exec_pipe[0], &old_tid, sizeof old_tid) != sizeof old_tid)
        return 1;
    if (wait_comm(c1, "ts-sp c1 (r)", 1) < 0 || wait_comm(c2, "sleep", 1) < 0 || wait_comm(c3, "ts-spawner", 1) < 0 ||
        wait_comm(getpid(), "ts-sp main", 3) < 0)
        return 1;

    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s.tmp", file);
    FILE *f = fopen(tmp, "we");
    if (!f)
        return 1;
    pid_t me = getpid();
    fprintf(f, "%d\t%d\tts-sp main\t%s\n", me, me, self_exe);
    fprintf(f, "%d\t%d\tts-sp worker\t%s\n", tid_a, me, self_exe);
    fprintf(f, "%d\t%d\tts-sp (b) x y\t%s\n", tid_b, me, self_exe);
    fprintf(f, "%d\t%d\tts-sp c1 (r)\t%s\n", c1, c1, self_exe);
    fprintf(f, "%d\t%d\tsleep\t%s\n", c2, c2, sleep_exe);
    fprintf(f, "%d\t%d\tts-spawner\t%s\n", c3, c3, self_exe);
    fprintf(f, "absent\t%d\n", old_tid);
    if (fclose(f) != 0 || rename(tmp, file) < 0)
        return 1;

    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    pthread_sigmask(SIG_BLOCK, &mask, NULL);
    int sig;
    sigwait(&mask, &sig);
    kill(c1, SIGKILL);
    kill(c2, SIGKILL);
    kill(c3, SIGKILL);
    while (wait(NULL) > 0 || errno == EINTR)
        ;
    return 0;
}

static int storm(unsigned n)
{
    /* children are reaped by the kernel */
    signal(SIGCHLD, SIG_IGN);
    for (unsigned i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0)
            _exit(0);
        if (pid < 0 && errno != EAGAIN)
            return 1;
    }
    while (wait(NULL) > 0 || errno == EINTR)
        ;
    return 0;
}

int main(int argc, char **argv)
{
    ssize_t n = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
    if (n < 0)
        return 1;
    self_exe[n] = '\0';
    if (argc == 3 && strcmp(argv[1], "scenario") == 0)
        return scenario(argv[2]);
    if (argc >= 2 && strcmp(argv[1], "idle") == 0) {
        if (argc == 3)
            prctl(PR_SET_NAME, argv[2]);
        for (;;)
            pause();
    }
    unsigned count;
    if (argc == 3 && strcmp(argv[1], "storm") == 0 && parse_uint(argv[2], &count) == 0)
        return storm(count);
    fprintf(stderr, "usage: %s scenario FILE | idle [NAME] | storm N\n", argv[0]);
    return 2;
}
