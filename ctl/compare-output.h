/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The compare report: text, JSON, CSV and a gnuplot plot of what
 * turbosched-ctl compare measured. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "compare-stats.h"

#define TOP_WAKERS 3

/* slices attributed to (mode, cpu, tid) over the measured blocks */
struct waker {
    enum cmp_mode mode;
    int cpu;
    pid_t tid;
    char comm[32];
    char cls;
    uint64_t slices;
};
struct wakers {
    size_t n, cap;
    struct waker *w;
};

const char *class_name(char c);

void print_text(FILE *f, const struct cmp_block_result *b, size_t n, const struct cmp_summary *sum,
                const bool *idle_cpus, bool any_idle, struct wakers *w, bool rapl, bool cpufreq, bool cpuidle,
                const char *verdict);
void print_json_out(const struct cmp_block_result *b, size_t n, const struct cmp_summary *sum, const bool *idle_cpus,
                    bool any_idle, struct wakers *w, const char *verdict);
/* The output files refuse a symbolic link (-ELOOP), another user's file
 * (-EPERM), a hard link (-EMLINK) and anything not a regular file: each is
 * what another user may plant in a shared directory for root to write
 * through. Each writer logs why it failed (on stderr, naming the file). */
#define EFTYPE_OUT EINVAL
const char *output_refusal(int r);
int write_csv(const char *path, const struct cmp_block_result *b, size_t n);
/* A PNG of wake-ups per block and mode next to the CSV, through gnuplot,
 * and the script FILE.gp that makes it. */
int write_plot(const char *csv, unsigned n_cpus);
bool in_path(const char *prog);
