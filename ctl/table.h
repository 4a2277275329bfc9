/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Aligned text tables for turbosched-ctl. Cells are copied; control
 * characters are replaced so task names cannot drive the terminal. */
#pragma once
#include <stdbool.h>
#include <stdio.h>

enum table_color { TABLE_PLAIN, TABLE_GREEN, TABLE_YELLOW, TABLE_RED, TABLE_DIM, TABLE_BOLD };

struct table;

struct table *table_new(unsigned n_cols, const char *const *headers);
void table_free(struct table *t);
/* Right-align a column (numbers). */
void table_align_right(struct table *t, unsigned col);
/* Append the next cell, row by row; NULL or "" prints "-". */
int table_add(struct table *t, const char *cell, enum table_color color);
int table_addf(struct table *t, enum table_color color, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
unsigned table_rows(const struct table *t);
/* Columns separated by two spaces, no trailing blanks. */
int table_print(const struct table *t, FILE *f, bool color);

/* Copy with bytes < 0x20 and 0x7f replaced by '?'. */
void table_sanitize(char *s);
/* Terminal columns taken by a UTF-8 string (one per code point). */
size_t table_text_width(const char *s);
const char *table_color_on(enum table_color c);
#define TABLE_COLOR_OFF "\033[0m"
