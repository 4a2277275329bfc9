/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sched_getattr/sched_setattr from the shell, for the integration tests of
 * the jitter slice (nothing in util-linux prints sched_runtime):
 *
 *   ts-schedattr probe             exit 0 when the kernel takes custom slices,
 *                                  else 1 and the reason on stdout
 *   ts-schedattr get TID...        one line per thread:
 *                                  "TID policy=P nice=N flags=F runtime=R"
 *   ts-schedattr set TID NS        give TID a slice of NS (0: the default),
 *                                  keeping its policy, nice and flags */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slice.h"
#include "sysops.h"

static int get(pid_t tid)
{
    struct sysops_sched_attr a;
    int r = sysops_real.getattr(NULL, tid, &a);
    if (r < 0) {
        fprintf(stderr, "sched_getattr %d: %s\n", (int)tid, strerror(-r));
        return 1;
    }
    printf("%d policy=%" PRIu32 " nice=%" PRId32 " flags=0x%" PRIx64 " runtime=%" PRIu64 "\n", (int)tid, a.policy,
           a.nice, a.flags, a.runtime_ns);
    return 0;
}

static int set(pid_t tid, uint64_t runtime_ns)
{
    struct sysops_sched_attr a;
    int r = sysops_real.getattr(NULL, tid, &a);
    if (r >= 0) {
        a.runtime_ns = runtime_ns;
        a.flags &= 1; /* SCHED_FLAG_RESET_ON_FORK: the only one set back */
        r = sysops_real.setattr(NULL, tid, &a);
    }
    if (r < 0) {
        fprintf(stderr, "sched_setattr %d: %s\n", (int)tid, strerror(-r));
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "probe") == 0) {
        struct slice_support s;
        int r = slice_detect(&sysops_real, &s);
        if (r < 0 || !s.supported) {
            printf("%s\n", s.reason);
            return 1;
        }
        printf("supported, default slice %" PRIu64 " ns\n", s.default_slice_ns);
        return 0;
    }
    if (argc >= 3 && strcmp(argv[1], "get") == 0) {
        int rc = 0;
        for (int i = 2; i < argc; i++)
            rc |= get((pid_t)atoi(argv[i]));
        return rc;
    }
    if (argc == 4 && strcmp(argv[1], "set") == 0)
        return set((pid_t)atoi(argv[2]), strtoull(argv[3], NULL, 10));
    fprintf(stderr, "usage: ts-schedattr probe | get TID... | set TID NS\n");
    return 2;
}
