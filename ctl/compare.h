/* SPDX-License-Identifier: GPL-2.0-or-later */
/* turbosched-ctl compare: alternate paused and packed blocks on this
 * machine, with its own workload, and report what packing changed. */
#pragma once

/* argv as main() got it (compare parses every option itself). Returns the
 * exit status. */
int ctl_compare_main(int argc, char **argv);
