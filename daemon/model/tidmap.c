/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Dense TID-keyed records: see tidmap.h. */
#include "tidmap.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static pid_t tid_at(const struct tidmap *m, size_t i) { return *(const pid_t *)tidmap_item(m, i); }

void tidmap_init(struct tidmap *m, size_t elem_size)
{
    *m = (struct tidmap){.elem_size = elem_size};
    PIDMAP_INIT(&m->index, uint32_t);
}

void tidmap_done(struct tidmap *m)
{
    free(m->items);
    m->items = NULL;
    m->n = m->cap = 0;
    pidmap_done(&m->index);
}

void *tidmap_find(const struct tidmap *m, pid_t tid)
{
    const uint32_t *pos = pidmap_find(&m->index, tid);
    return pos ? tidmap_item(m, *pos) : NULL;
}

void *tidmap_add(struct tidmap *m, const void *elem)
{
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        char *items = reallocarray(m->items, cap, m->elem_size);
        if (!items)
            return NULL;
        m->items = items;
        m->cap = cap;
    }
    uint32_t *pos;
    if (pidmap_insert(&m->index, *(const pid_t *)elem, (void **)&pos) < 0)
        return NULL;
    *pos = (uint32_t)m->n;
    void *item = tidmap_item(m, m->n++);
    memcpy(item, elem, m->elem_size);
    return item;
}

void tidmap_remove(struct tidmap *m, pid_t tid)
{
    uint32_t idx;
    if (pidmap_remove(&m->index, tid, &idx) < 0)
        return;
    /* keep the array dense: the last element takes the freed place */
    size_t last = m->n - 1;
    if (idx != last) {
        memcpy(tidmap_item(m, idx), tidmap_item(m, last), m->elem_size);
        *(uint32_t *)pidmap_find(&m->index, tid_at(m, idx)) = idx;
    }
    m->n--;
}
