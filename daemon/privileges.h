/* After start-up the daemon keeps only the capabilities its work needs, also
 * when it runs outside systemd (which would otherwise bound them). */
#pragma once
#include <stdint.h>

/* The capabilities kept, as a bit mask of CAP_* numbers. */
uint64_t privileges_kept_mask(void);
/* Drop every other capability from the effective, permitted, inheritable and
 * bounding sets. Returns 0, or -errno (logged) if the kernel refused. */
int privileges_drop_unneeded(void);
