/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Records keyed by TID in a dense array (cheap iteration, a contiguous array
 * the state file is written from, a cursor that survives between calls)
 * indexed by a pidmap of array positions. Records start with their pid_t tid.
 * Removing a record moves the last one into its place. Used by the applier
 * for the tasks it changed, the hands-off list and recovery's walk. */
#pragma once
#include <stddef.h>
#include <sys/types.h>

#include "pidmap.h"

struct tidmap {
    size_t elem_size;
    char *items;
    size_t n, cap;
    struct pidmap index; /* tid -> uint32_t position in items */
};

void tidmap_init(struct tidmap *m, size_t elem_size);
void tidmap_done(struct tidmap *m);
static inline void *tidmap_item(const struct tidmap *m, size_t i) { return m->items + i * m->elem_size; }
/* NULL if tid is absent. */
void *tidmap_find(const struct tidmap *m, pid_t tid);
/* Add a copy of elem (its tid must be absent); returns the copy, NULL when
 * out of memory. The pointer is valid until the next add or remove. */
void *tidmap_add(struct tidmap *m, const void *elem);
/* Remove tid if present. */
void tidmap_remove(struct tidmap *m, pid_t tid);
