/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One map keyed by PID or TID, for every table of tasks or processes: open
 * addressing with linear probing and backward-shift deletion (no tombstones,
 * so lookups of absent keys stay short after many exits). Values are
 * fixed-size records stored inline beside their key; a user that needs
 * stable addresses or variable-size records stores an index or a pointer.
 *
 * Keys are > 0 (0 marks an empty slot). A value pointer is valid until the
 * next insert or remove. Memory per entry: the entry (key + value, aligned:
 * 8 bytes for a uint32_t value, 16 for a pointer) at a load factor between
 * 0.35 and 0.7. */
#pragma once
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct pidmap {
    char *slots;
    size_t n_slots; /* 0 or a power of two */
    size_t count;
    size_t value_size;
    size_t value_offset; /* of the value in an entry */
    size_t entry_size;
};

/* An empty map of values of value_size bytes aligned to value_align; it
 * allocates nothing until the first insert. */
void pidmap_init(struct pidmap *m, size_t value_size, size_t value_align);
#define PIDMAP_INIT(m, type) pidmap_init((m), sizeof(type), alignof(type))
void pidmap_done(struct pidmap *m);
/* Remove every entry but keep the table's memory for refilling. */
void pidmap_clear(struct pidmap *m);

/* The value of key, NULL if absent. */
void *pidmap_find(const struct pidmap *m, pid_t key);
/* Add key with a zeroed value; *ret (if not NULL) points at the value.
 * -EINVAL for key <= 0, -EEXIST if present (*ret then points at it), -ENOMEM. */
int pidmap_insert(struct pidmap *m, pid_t key, void **ret);
/* Remove key, copying its value to ret if not NULL. 0, or -ENOENT. */
int pidmap_remove(struct pidmap *m, pid_t key, void *ret);
/* Make room for n entries in all, so that inserts up to n do not allocate. */
int pidmap_reserve(struct pidmap *m, size_t n);
static inline size_t pidmap_count(const struct pidmap *m) { return m->count; }
/* Heap bytes held. */
static inline size_t pidmap_memory_bytes(const struct pidmap *m) { return m->n_slots * m->entry_size; }

/* Iterate: start with *iter = 0; returns the next value (its key in *key if
 * not NULL), NULL at the end, in slot order. The map must not change during
 * the walk: a backward shift would move a later entry into a visited slot.
 * Users that remove while walking keep their records elsewhere (the task
 * table's chunks, the applier's dense array) and walk those. */
void *pidmap_next(const struct pidmap *m, size_t *iter, pid_t *key);
