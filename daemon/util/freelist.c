/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Entries handed out by id, freed ones reused first: see freelist.h. */
#include "freelist.h"

#include <stdlib.h>
#include <string.h>

static uint32_t *link_of(const struct freelist *fl, void *entry) { return (uint32_t *)((char *)entry + fl->link_off); }

void *freelist_take(struct freelist *fl, uint32_t *ret_id)
{
    uint32_t id;
    if (fl->free) {
        id = fl->free;
        fl->free = *link_of(fl, freelist_get(fl, id));
    } else {
        if (fl->n == fl->cap) {
            uint32_t cap = fl->cap ? fl->cap * 2 : fl->first_cap;
            void *items = reallocarray(fl->items, cap, fl->size);
            if (!items)
                return NULL;
            fl->items = items;
            fl->cap = cap;
        }
        id = ++fl->n;
    }
    void *entry = freelist_get(fl, id);
    memset(entry, 0, fl->size);
    *ret_id = id;
    return entry;
}

void freelist_put(struct freelist *fl, uint32_t id)
{
    void *entry = freelist_get(fl, id);
    if (!entry)
        return;
    memset(entry, 0, fl->size);
    *link_of(fl, entry) = fl->free;
    fl->free = id;
}

size_t freelist_memory_bytes(const struct freelist *fl) { return (size_t)fl->cap * fl->size; }

void freelist_done(struct freelist *fl)
{
    free(fl->items);
    *fl = (struct freelist){.size = fl->size, .link_off = fl->link_off, .first_cap = fl->first_cap};
}
