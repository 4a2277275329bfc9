/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "table.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

struct cell {
    char *text;
    enum table_color color;
};

struct table {
    unsigned n_cols;
    struct cell *cells; /* headers first, then rows */
    size_t n_cells, cap;
    bool *right;
};

void table_sanitize(char *s)
{
    for (unsigned char *p = (unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            *p = '?';
}

size_t table_text_width(const char *s)
{
    size_t w = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p & 0xc0) != 0x80)
            w++;
    return w;
}

const char *table_color_on(enum table_color c)
{
    switch (c) {
    case TABLE_GREEN:
        return "\033[32m";
    case TABLE_YELLOW:
        return "\033[33m";
    case TABLE_RED:
        return "\033[31m";
    case TABLE_DIM:
        return "\033[2m";
    case TABLE_BOLD:
        return "\033[1m";
    default:
        return "";
    }
}

struct table *table_new(unsigned n_cols, const char *const *headers)
{
    struct table *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->n_cols = n_cols;
    t->right = calloc(n_cols, sizeof *t->right);
    if (!t->right) {
        free(t);
        return NULL;
    }
    for (unsigned i = 0; i < n_cols; i++)
        if (table_add(t, headers[i], TABLE_BOLD) < 0) {
            table_free(t);
            return NULL;
        }
    return t;
}

void table_free(struct table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n_cells; i++)
        free(t->cells[i].text);
    free(t->cells);
    free(t->right);
    free(t);
}

void table_align_right(struct table *t, unsigned col)
{
    if (col < t->n_cols)
        t->right[col] = true;
}

int table_add(struct table *t, const char *cell, enum table_color color)
{
    if (t->n_cells == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        struct cell *p = realloc(t->cells, cap * sizeof *p);
        if (!p)
            return -ENOMEM;
        t->cells = p;
        t->cap = cap;
    }
    char *s = strdup(cell && *cell ? cell : "-");
    if (!s)
        return -ENOMEM;
    table_sanitize(s);
    t->cells[t->n_cells++] = (struct cell){.text = s, .color = color};
    return 0;
}

int table_addf(struct table *t, enum table_color color, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    _cleanup_free_ char *s = NULL;
    int r = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (r < 0) {
        s = NULL;
        return -ENOMEM;
    }
    return table_add(t, s, color);
}

unsigned table_rows(const struct table *t) { return (unsigned)(t->n_cells / t->n_cols) - 1; }

int table_print(const struct table *t, FILE *f, bool color)
{
    _cleanup_free_ size_t *width = calloc(t->n_cols, sizeof *width);
    if (!width)
        return -ENOMEM;
    for (size_t i = 0; i < t->n_cells; i++)
        width[i % t->n_cols] = MAX(width[i % t->n_cols], table_text_width(t->cells[i].text));
    for (size_t i = 0; i < t->n_cells; i++) {
        unsigned col = (unsigned)(i % t->n_cols);
        const struct cell *c = &t->cells[i];
        size_t pad = width[col] - table_text_width(c->text);
        bool last = col == t->n_cols - 1;
        bool on = color && c->color != TABLE_PLAIN;
        if (t->right[col])
            fprintf(f, "%*s", (int)pad, "");
        fprintf(f, "%s%s%s", on ? table_color_on(c->color) : "", c->text, on ? TABLE_COLOR_OFF : "");
        if (last)
            fputc('\n', f);
        else
            fprintf(f, "%*s", (int)(t->right[col] ? 2 : pad + 2), "");
    }
    /* A row that was left incomplete still ends its line. */
    if (t->n_cells % t->n_cols)
        fputc('\n', f);
    return ferror(f) ? -EIO : 0;
}
