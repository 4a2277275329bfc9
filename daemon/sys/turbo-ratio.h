/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The chip's frequency by number of active cores, as x86 Intel CPUs publish
 * it in MSR_TURBO_RATIO_LIMIT (0x1AD), read through the msr driver
 * (/dev/cpu/N/msr, root with CAP_SYS_RAWIO). It fills the benefit model's
 * frequency table (benefit.h) where the configuration gives none.
 *
 * What is read: on most models each byte of 0x1AD is the highest ratio with
 * 1, 2, ... 8 active cores. On the models that group cores (Xeon Scalable
 * from Skylake-SP, Atom Goldmont and later server Atoms) byte i is the ratio
 * of group i and byte i of 0x1AE (MSR_TURBO_RATIO_LIMIT_CORES) the highest
 * active-core count of that group. A ratio times the bus clock (100 MHz;
 * 133.33 MHz on Nehalem and Westmere) is the frequency. Not read: other
 * vendors (AMD publishes no such table), other families, Xeon Phi's
 * encoding, and the ratios for 9-16 active cores of Ivy Bridge-EP and
 * Haswell-EP (their table stops at 8). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "benefit.h"

#define MSR_TURBO_RATIO_LIMIT 0x1ad
#define MSR_TURBO_RATIO_LIMIT_CORES 0x1ae

struct cpu_ident {
    char vendor[16]; /* vendor_id of /proc/cpuinfo: GenuineIntel, AuthenticAMD */
    unsigned family, model;
};

/* The first processor's vendor, family and model from /proc/cpuinfo text.
 * 0, or -EINVAL when a field is missing. */
int cpu_ident_parse(const char *cpuinfo, struct cpu_ident *id);

/* Whether an Intel family 6 model groups cores in 0x1AD (0x1AE counts). */
bool turbo_ratio_grouped(unsigned model);
/* The bus clock of an Intel family 6 model, in kHz. */
unsigned turbo_ratio_bclk_khz(unsigned model);

/* The table from the registers' values: `ratios` is 0x1AD; `counts` is 0x1AE
 * for a grouped model, else ignored. 0, or -EINVAL with why (a table that
 * is empty or rises with active cores). Pure. */
int turbo_ratio_decode(uint64_t ratios, uint64_t counts, bool grouped, unsigned bclk_khz, struct freq_response *fr,
                       char *why, size_t why_len);

/* Read it on this machine: root "/" (or a test's directory) holds
 * proc/cpuinfo and dev/cpu/0/msr. 0 with the table and, in `what`, what was
 * read ("MSR_TURBO_RATIO_LIMIT of CPU 0, Intel family 6 model 0x55, by core
 * group"); or a negative errno with why it is not there in `what` ("not an
 * Intel CPU (AuthenticAMD): no turbo ratio table to read", "/dev/cpu/0/msr:
 * No such file or directory (the msr module is not loaded, or the unit's
 * PrivateDevices= hides it)"). */
int turbo_ratio_read(const char *root, struct freq_response *fr, char *what, size_t what_len);
