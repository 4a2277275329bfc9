/* Task table: tasks live in fixed-size chunks (addresses never move, so a
 * struct task * stays valid until that task is removed) and an open-addressing
 * index with linear probing maps TID -> slot.
 *
 * Memory per tracked thread: sizeof(struct task) = 80 bytes on x86-64 (a
 * static assertion in task.h holds it there), one 8-byte index bucket at a
 * load factor between 0.35 and 0.7 (11..23 bytes), and 4 bytes of free-slot
 * stack: about 95..107 bytes. Chunks are TASK_CHUNK tasks (80 KiB)
 * and are kept once allocated: the table stays at its high-water mark. */
#include "task.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define TASK_CHUNK_SHIFT 10
#define TASK_CHUNK (1u << TASK_CHUNK_SHIFT)
#define INDEX_MIN 64u
/* Index load kept at or below 7/10: linear probing stays short. */
#define INDEX_LOAD_NUM 7u
#define INDEX_LOAD_DEN 10u
/* PID_MAX_LIMIT on 64-bit kernels. */
#define TASK_TABLE_MAX_LIMIT (4u * 1024 * 1024)

struct bucket {
    pid_t tid;          /* 0: empty */
    uint32_t slot;
};

struct task_table {
    unsigned max_tasks;
    unsigned count;
    uint32_t generation;
    /* slots: chunks[slot >> SHIFT][slot & (CHUNK-1)]; a free slot has tid 0 */
    struct task **chunks;
    unsigned n_chunks;
    unsigned n_slots;           /* slots handed out so far (high-water mark) */
    uint32_t *free_slots;       /* stack of freed slots */
    unsigned n_free, free_cap;
    struct bucket *index;
    size_t index_size;          /* power of two */
};

static inline size_t tid_hash(pid_t tid, size_t mask)
{
    /* Fibonacci hashing: consecutive TIDs spread over the index. */
    return (size_t)(((uint64_t)(uint32_t)tid * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

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
    t->index_size = INDEX_MIN;
    t->index = calloc(t->index_size, sizeof(*t->index));
    if (!t->index) {
        free(t);
        return -ENOMEM;
    }
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
    free(t->index);
    free(t);
}

static struct bucket *index_lookup(const struct task_table *t, pid_t tid)
{
    size_t mask = t->index_size - 1;
    for (size_t i = tid_hash(tid, mask);; i = (i + 1) & mask) {
        struct bucket *b = &t->index[i];
        if (b->tid == tid)
            return b;
        if (b->tid == 0)
            return NULL;
    }
}

static void index_insert(struct bucket *index, size_t size, pid_t tid, uint32_t slot)
{
    size_t mask = size - 1;
    size_t i = tid_hash(tid, mask);
    while (index[i].tid != 0)
        i = (i + 1) & mask;
    index[i] = (struct bucket){ .tid = tid, .slot = slot };
}

static int index_grow(struct task_table *t)
{
    size_t size = t->index_size * 2;
    struct bucket *n = calloc(size, sizeof(*n));
    if (!n)
        return -ENOMEM;
    for (size_t i = 0; i < t->index_size; i++)
        if (t->index[i].tid != 0)
            index_insert(n, size, t->index[i].tid, t->index[i].slot);
    free(t->index);
    t->index = n;
    t->index_size = size;
    return 0;
}

/* Backward-shift deletion: no tombstones, so lookups of absent TIDs stay
 * short after many removals. */
static void index_delete(struct task_table *t, struct bucket *b)
{
    size_t mask = t->index_size - 1;
    size_t hole = (size_t)(b - t->index);
    for (size_t i = (hole + 1) & mask; t->index[i].tid != 0; i = (i + 1) & mask) {
        size_t home = tid_hash(t->index[i].tid, mask);
        /* Move entry i into the hole unless its home lies cyclically in (hole, i]. */
        bool stays = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
        if (stays)
            continue;
        t->index[hole] = t->index[i];
        hole = i;
    }
    t->index[hole] = (struct bucket){ 0 };
}

struct task *task_table_find(struct task_table *t, pid_t tid)
{
    if (tid <= 0)
        return NULL;
    struct bucket *b = index_lookup(t, tid);
    return b ? slot_task(t, b->slot) : NULL;
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
    if (index_lookup(t, proto->tid))
        return -EEXIST;
    if (t->count >= t->max_tasks)
        return -ENOSPC;
    if ((t->count + 1) * INDEX_LOAD_DEN > t->index_size * INDEX_LOAD_NUM) {
        int r = index_grow(t);
        if (r < 0)
            return r;
    }
    /* Reserve room for this slot on the free stack now, so remove never fails. */
    if (t->free_cap < t->count + 1) {
        unsigned cap = MAX(t->free_cap * 2, 64u);
        uint32_t *f = realloc(t->free_slots, cap * sizeof(*f));
        if (!f)
            return -ENOMEM;
        t->free_slots = f;
        t->free_cap = cap;
    }
    uint32_t slot;
    int r = slot_alloc(t, &slot);
    if (r < 0)
        return r;
    struct task *task = slot_task(t, slot);
    *task = *proto;
    index_insert(t->index, t->index_size, proto->tid, slot);
    t->count++;
    if (ret)
        *ret = task;
    return 0;
}

int task_table_remove(struct task_table *t, pid_t tid)
{
    if (tid <= 0)
        return -ENOENT;
    struct bucket *b = index_lookup(t, tid);
    if (!b)
        return -ENOENT;
    uint32_t slot = b->slot;
    index_delete(t, b);
    memset(slot_task(t, slot), 0, sizeof(struct task));
    t->free_slots[t->n_free++] = slot;
    t->count--;
    return 0;
}

unsigned task_table_count(const struct task_table *t)
{
    return t->count;
}

struct task *task_table_next(struct task_table *t, size_t *iter)
{
    while (*iter < t->n_slots) {
        struct task *task = slot_task(t, (uint32_t)(*iter)++);
        if (task->tid != 0)
            return task;
    }
    return NULL;
}

unsigned task_table_max(const struct task_table *t)
{
    return t->max_tasks;
}

uint32_t task_table_generation(const struct task_table *t)
{
    return t->generation;
}

uint32_t task_table_new_generation(struct task_table *t)
{
    /* 0 is what a fresh struct task carries: never hand it out. */
    if (++t->generation == 0)
        t->generation = 1;
    return t->generation;
}

size_t task_table_memory_bytes(const struct task_table *t)
{
    return sizeof(*t) + (size_t)t->n_chunks * TASK_CHUNK * sizeof(struct task) +
           t->n_chunks * sizeof(struct task *) + t->free_cap * sizeof(uint32_t) +
           t->index_size * sizeof(struct bucket);
}
