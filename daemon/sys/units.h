/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Per-service opt-in through X-TurboSched= in a unit's [Service] section
 * (unit file or drop-ins). Unit file and drop-in paths come from systemd over
 * sd-bus; results are cached per unit until systemd reloads or we do. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <systemd/sd-event.h>

#include "config.h"

struct units;

/* Where a unit's settings live: FragmentPath and DropInPaths. Returns 0 and
 * malloc'd *fragment (may be NULL) and NULL-terminated *dropins (may be NULL),
 * or -errno (-ENOENT: no such unit). */
typedef int (*units_lookup_fn)(void *userdata, const char *unit, char **fragment, char ***dropins);

/* Connect to systemd on the system bus. -EHOSTDOWN (or the bus error) when
 * systemd is not there: the caller says so once and runs without opt-in. */
int units_new(struct units **ret);
/* With an injected lookup instead of the bus (tests). */
int units_new_with_lookup(units_lookup_fn fn, void *userdata, struct units **ret);
void units_free(struct units *u);
/* Process systemd's Reloading signal (cache flush) from the event loop. */
int units_attach_event(struct units *u, sd_event *e);

/* The class a unit asks for: 1 and *ret (and *origin: the file that set it,
 * owned by the cache, valid until the next flush; may be NULL) if set, 0 if
 * the unit says nothing, -errno on lookup failure (logged once per unit). */
int units_get_class(struct units *u, const char *unit, enum task_class *ret, const char **origin);
void units_cache_flush(struct units *u);
/* Cache statistics: lookups that went to systemd, and cache hits. */
void units_stats(const struct units *u, unsigned long *lookups, unsigned long *hits);

/* Pure: X-TurboSched= in the [Service] section of a unit file's text; the
 * last assignment wins, an empty value resets. 1 and *ret if set, 0 if not,
 * -EINVAL if the last value is not a class. */
int units_parse_x_turbosched(const char *text, enum task_class *ret);
