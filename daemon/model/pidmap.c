/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The PID/TID map: see pidmap.h. */
#include "pidmap.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define PIDMAP_MIN_SLOTS 64u
/* Load kept at or below 7/10: linear probing stays short. */
#define PIDMAP_LOAD_NUM 7u
#define PIDMAP_LOAD_DEN 10u

static size_t round_up(size_t n, size_t align) { return (n + align - 1) / align * align; }

void pidmap_init(struct pidmap *m, size_t value_size, size_t value_align)
{
    if (value_align < alignof(pid_t))
        value_align = alignof(pid_t);
    *m = (struct pidmap){
        .value_size = value_size,
        .value_offset = round_up(sizeof(pid_t), value_align),
    };
    m->entry_size = round_up(m->value_offset + value_size, value_align);
}

void pidmap_done(struct pidmap *m)
{
    free(m->slots);
    m->slots = NULL;
    m->n_slots = m->count = 0;
}

void pidmap_clear(struct pidmap *m)
{
    if (m->slots)
        memset(m->slots, 0, m->n_slots * m->entry_size);
    m->count = 0;
}

static inline size_t home_of(pid_t key, size_t mask)
{
    /* Fibonacci hashing: consecutive PIDs spread over the table. */
    return (size_t)(((uint64_t)(uint32_t)key * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

static inline char *entry(const struct pidmap *m, size_t i) { return m->slots + i * m->entry_size; }
static inline pid_t key_at(const struct pidmap *m, size_t i) { return *(const pid_t *)entry(m, i); }
static inline void *value_at(const struct pidmap *m, size_t i) { return entry(m, i) + m->value_offset; }

/* The slot holding key, or the empty slot that ends its probe chain. */
static size_t probe(const struct pidmap *m, pid_t key)
{
    size_t mask = m->n_slots - 1;
    size_t i = home_of(key, mask);
    while (key_at(m, i) != 0 && key_at(m, i) != key)
        i = (i + 1) & mask;
    return i;
}

void *pidmap_find(const struct pidmap *m, pid_t key)
{
    if (key <= 0 || m->n_slots == 0)
        return NULL;
    size_t i = probe(m, key);
    return key_at(m, i) == key ? value_at(m, i) : NULL;
}

static int resize(struct pidmap *m, size_t n_slots)
{
    char *slots = calloc(n_slots, m->entry_size);
    if (!slots)
        return -ENOMEM;
    struct pidmap old = *m;
    m->slots = slots;
    m->n_slots = n_slots;
    for (size_t i = 0; i < old.n_slots; i++)
        if (key_at(&old, i) != 0)
            memcpy(entry(m, probe(m, key_at(&old, i))), entry(&old, i), m->entry_size);
    free(old.slots);
    return 0;
}

int pidmap_reserve(struct pidmap *m, size_t n)
{
    size_t want = m->n_slots ? m->n_slots : PIDMAP_MIN_SLOTS;
    while (n * PIDMAP_LOAD_DEN > want * PIDMAP_LOAD_NUM)
        want *= 2;
    return want == m->n_slots ? 0 : resize(m, want);
}

int pidmap_insert(struct pidmap *m, pid_t key, void **ret)
{
    if (key <= 0)
        return -EINVAL;
    void *found = pidmap_find(m, key);
    if (found) {
        if (ret)
            *ret = found;
        return -EEXIST;
    }
    int r = pidmap_reserve(m, m->count + 1);
    if (r < 0)
        return r;
    size_t i = probe(m, key);
    memset(entry(m, i), 0, m->entry_size);
    *(pid_t *)entry(m, i) = key;
    m->count++;
    if (ret)
        *ret = value_at(m, i);
    return 0;
}

int pidmap_remove(struct pidmap *m, pid_t key, void *ret)
{
    if (key <= 0 || m->n_slots == 0)
        return -ENOENT;
    size_t hole = probe(m, key);
    if (key_at(m, hole) != key)
        return -ENOENT;
    if (ret)
        memcpy(ret, value_at(m, hole), m->value_size);

    /* Backward-shift deletion: pull later entries of the chain into the hole
     * unless their home lies cyclically in (hole, i], so every chain stays
     * unbroken without tombstones. */
    size_t mask = m->n_slots - 1;
    for (size_t i = (hole + 1) & mask; key_at(m, i) != 0; i = (i + 1) & mask) {
        size_t home = home_of(key_at(m, i), mask);
        bool stays = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
        if (stays)
            continue;
        memcpy(entry(m, hole), entry(m, i), m->entry_size);
        hole = i;
    }
    memset(entry(m, hole), 0, m->entry_size);
    m->count--;
    return 0;
}

void *pidmap_next(const struct pidmap *m, size_t *iter, pid_t *key)
{
    while (*iter < m->n_slots) {
        size_t i = (*iter)++;
        if (key_at(m, i) != 0) {
            if (key)
                *key = key_at(m, i);
            return value_at(m, i);
        }
    }
    return NULL;
}
