/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Turns the daemon's replies into text: status screen, tables, Prometheus
 * text exposition. Missing fields print as "-", unknown frequencies as "n/a". */
#pragma once
#include <stdbool.h>
#include <stdio.h>

struct json_object;

struct render_opts {
    bool color;
};

int render_status(FILE *f, struct json_object *reply, const struct render_opts *o);
int render_dump(FILE *f, struct json_object *reply, const struct render_opts *o);
int render_topology(FILE *f, struct json_object *reply, const struct render_opts *o);
int render_explain(FILE *f, struct json_object *reply, const struct render_opts *o);
/* Prometheus text exposition format 0.0.4 (node_exporter textfile collector):
 * HELP and TYPE once per family, families contiguous, labels escaped. */
int render_metrics(FILE *f, struct json_object *reply);

/* Helpers shared with the error printer. */
void render_duration(char *buf, size_t size, double seconds);
void render_usec(char *buf, size_t size, unsigned long long usec);
