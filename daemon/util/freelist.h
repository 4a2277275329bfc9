/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A table of fixed-size entries handed out by id and taken back, a freed
 * entry reused before the table grows. An id is 1 + the entry's index, 0
 * meaning none, so a struct field zeroed at birth holds no entry. A free
 * entry keeps the id of the next free one in a uint32_t of its own
 * (link_off): the list costs no memory beside the entries. The table moves
 * when it grows: keep ids, not pointers. Used by the sampler for its
 * per-thread watches and per-process gates. */
#pragma once
#include <stddef.h>
#include <stdint.h>

struct freelist {
    void *items;
    size_t size;        /* bytes an entry */
    size_t link_off;    /* offset of the uint32_t that links a free entry */
    uint32_t first_cap; /* entries the first growth allocates; doubled after */
    uint32_t n, cap;    /* entries handed out at least once; allocated */
    uint32_t free;      /* id of the first free entry, 0: none */
};

/* An empty table of entries of type, linked through its uint32_t field
 * link while free. */
#define FREELIST_INIT(type, link, first) \
    ((struct freelist){.size = sizeof(type), .link_off = offsetof(type, link), .first_cap = (first)})

/* The entry of id, NULL for 0 or an id never handed out (a freed entry is
 * returned: its owner tells whether it is in use). */
static inline void *freelist_get(const struct freelist *fl, uint32_t id)
{
    if (!id || id > fl->n)
        return NULL;
    return (char *)fl->items + (size_t)(id - 1) * fl->size;
}
/* A zeroed entry and its id (*ret_id, never 0); NULL when out of memory. */
void *freelist_take(struct freelist *fl, uint32_t *ret_id);
/* Give id back (zeroed, taken first by the next freelist_take). id must be
 * one handed out and not given back since. */
void freelist_put(struct freelist *fl, uint32_t id);
/* Heap bytes of the table. */
size_t freelist_memory_bytes(const struct freelist *fl);
/* Free the table; it is empty afterwards, usable again with the same layout. */
void freelist_done(struct freelist *fl);
