/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A fixed fork+exec storm for measuring what one proc connector event costs
 * a listener (turboschedd, cgrulesengd):
 *
 *   fork-storm N EXE [PARALLEL]
 *
 * forks N children, at most PARALLEL (default 4) alive at once, each of
 * which execs EXE with the single argument "child" and exits at once: a
 * fork, an exec and an exit event each. EXE is usually a symlink to this
 * program under the name the rules should match (comm is taken from it).
 * Prints the events caused (3 per child) on stdout. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "child") == 0)
        return 0;
    if (argc < 3) {
        fprintf(stderr, "usage: fork-storm N EXE [PARALLEL]\n");
        return 2;
    }
    long n = strtol(argv[1], NULL, 10), par = argc > 3 ? strtol(argv[3], NULL, 10) : 4;
    if (n <= 0 || par <= 0)
        return 2;
    long alive = 0;
    for (long i = 0; i < n; i++) {
        if (alive >= par) {
            if (wait(NULL) > 0)
                alive--;
        }
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            return 1;
        }
        if (pid == 0) {
            execl(argv[2], argv[2], "child", (char *)NULL);
            _exit(127);
        }
        alive++;
    }
    while (wait(NULL) > 0 || errno == EINTR)
        ;
    printf("%ld\n", 3 * n);
    return 0;
}
