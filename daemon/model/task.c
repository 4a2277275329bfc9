/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Task table: tasks live in fixed-size chunks (addresses never move, so a
 * struct task * stays valid until that task is removed) and a pidmap index
 * maps TID -> slot.
 *
 * Memory per tracked thread: sizeof(struct task) = 80 bytes on x86-64 (a
 * static assertion in task.h holds it there), one 8-byte index entry (TID and
 * slot) at a load factor between 0.35 and 0.7 (11..23 bytes), and 4 bytes of free-slot
 * stack: about 95..107 bytes. Chunks are TASK_CHUNK tasks (80 KiB)
 * and are kept once allocated: the table stays at its high-water mark. */
#include "task.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pidmap.h"
#include "util.h"

#define TASK_CHUNK_SHIFT 10
#define TASK_CHUNK (1u << TASK_CHUNK_SHIFT)
/* PID_MAX_LIMIT on 64-bit kernels. */
#define TASK_TABLE_MAX_LIMIT (4u * 1024 * 1024)

struct task_table {
    unsigned max_tasks;
    unsigned count;
    uint32_t generation;
    /* slots: chunks[slot >> SHIFT][slot & (CHUNK-1)]; a free slot has tid 0 */
    struct task **chunks;
    unsigned n_chunks;
    unsigned n_slots;     /* slots handed out so far (high-water mark) */
    uint32_t *free_slots; /* stack of freed slots */
    unsigned n_free, free_cap;
    struct pidmap index; /* TID -> uint32_t slot */
};

static inline struct task *slot_task(struct task_table *t, uint32_t slot)
{
    return &t->chunks[slot >> TASK_CHUNK_SHIFT][slot & (TASK_CHUNK - 1)];
}

int task_table_new(unsigned max_tasks, struct task_table **ret)
{
    if (max_tasks == 0 || max_tasks > TASK_TABLE_MAX_LIMIT)
        return -EINVAL;
    struct task_table *t = calloc(1, sizeof(*t));
    if (!t)
        return -ENOMEM;
    t->max_tasks = max_tasks;
    PIDMAP_INIT(&t->index, uint32_t);
    *ret = t;
    return 0;
}

void task_table_free(struct task_table *t)
{
    if (!t)
        return;
    for (unsigned i = 0; i < t->n_chunks; i++)
        free(t->chunks[i]);
    free(t->chunks);
    free(t->free_slots);
    pidmap_done(&t->index);
    free(t);
}

struct task *task_table_find(struct task_table *t, pid_t tid)
{
    if (tid <= 0)
        return NULL;
    const uint32_t *slot = pidmap_find(&t->index, tid);
    return slot ? slot_task(t, *slot) : NULL;
}

static int slot_alloc(struct task_table *t, uint32_t *ret)
{
    if (t->n_free > 0) {
        *ret = t->free_slots[--t->n_free];
        return 0;
    }
    if (t->n_slots == t->n_chunks * TASK_CHUNK) {
        struct task **c = realloc(t->chunks, (t->n_chunks + 1) * sizeof(*c));
        if (!c)
            return -ENOMEM;
        t->chunks = c;
        c[t->n_chunks] = calloc(TASK_CHUNK, sizeof(struct task));
        if (!c[t->n_chunks])
            return -ENOMEM;
        t->n_chunks++;
    }
    *ret = t->n_slots++;
    return 0;
}

int task_table_add(struct task_table *t, const struct task *proto, struct task **ret)
{
    if (proto->tid <= 0)
        return -EINVAL;
    if (pidmap_find(&t->index, proto->tid))
        return -EEXIST;
    if (t->count >= t->max_tasks)
        return -ENOSPC;
    /* Room in the index first, so the insert below cannot fail. */
    int r = pidmap_reserve(&t->index, t->count + 1);
    if (r < 0)
        return r;
    /* Reserve room for this slot on the free stack now, so remove never fails. */
    if (t->free_cap < t->count + 1) {
        unsigned cap = MAX(t->free_cap * 2, 64u);
        uint32_t *f = realloc(t->free_slots, cap * sizeof(*f));
        if (!f)
            return -ENOMEM;
        t->free_slots = f;
        t->free_cap = cap;
    }
    uint32_t slot, *index_slot;
    r = slot_alloc(t, &slot);
    if (r < 0)
        return r;
    struct task *task = slot_task(t, slot);
    *task = *proto;
    r = pidmap_insert(&t->index, proto->tid, (void **)&index_slot);
    assert(r == 0);
    *index_slot = slot;
    t->count++;
    if (ret)
        *ret = task;
    return 0;
}

int task_table_remove(struct task_table *t, pid_t tid)
{
    if (tid <= 0)
        return -ENOENT;
    uint32_t slot;
    if (pidmap_remove(&t->index, tid, &slot) < 0)
        return -ENOENT;
    memset(slot_task(t, slot), 0, sizeof(struct task));
    t->free_slots[t->n_free++] = slot;
    t->count--;
    return 0;
}

unsigned task_table_count(const struct task_table *t) { return t->count; }

struct task *task_table_next(struct task_table *t, size_t *iter)
{
    while (*iter < t->n_slots) {
        struct task *task = slot_task(t, (uint32_t)(*iter)++);
        if (task->tid != 0)
            return task;
    }
    return NULL;
}

unsigned task_table_max(const struct task_table *t) { return t->max_tasks; }

uint32_t task_table_generation(const struct task_table *t) { return t->generation; }

uint32_t task_table_new_generation(struct task_table *t)
{
    /* 0 is what a fresh struct task carries: never hand it out. */
    if (++t->generation == 0)
        t->generation = 1;
    return t->generation;
}

size_t task_table_memory_bytes(const struct task_table *t)
{
    return sizeof(*t) + (size_t)t->n_chunks * TASK_CHUNK * sizeof(struct task) + t->n_chunks * sizeof(struct task *) +
           t->free_cap * sizeof(uint32_t) + pidmap_memory_bytes(&t->index);
}
