/* After start-up the daemon keeps only the capabilities its work needs, also
 * when it runs outside systemd (which would otherwise bound them). */
#pragma once
#include <stdint.h>

#include <stdbool.h>

/* The capabilities kept, as a bit mask of CAP_* numbers. cpuset_v1: cgroup
 * mode is configured and the daemon creates and removes its group in a
 * cgroup v1 cpuset hierarchy, whose root directory is mode 0555 even for root. */
uint64_t privileges_kept_mask(bool cpuset_v1);
/* Drop every other capability from the effective, permitted, inheritable and
 * bounding sets. Returns 0, or -errno (logged) if the kernel refused. */
int privileges_drop_unneeded(bool cpuset_v1);
