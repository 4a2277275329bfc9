/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ts-debug-exit VALUE: end the qemu guest at once through the isa-debug-exit
 * device (iobase 0xf4), which makes qemu exit with status (VALUE << 1) | 1.
 * The guest kernel has no /dev/port, so this takes the I/O port directly.
 * Built static by test-systemd.sh so it runs in the guest whatever its libs. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/io.h>

#define DEBUG_EXIT_PORT 0xf4

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: ts-debug-exit VALUE\n");
        return 2;
    }
    unsigned long value = strtoul(argv[1], NULL, 0);
    if (ioperm(DEBUG_EXIT_PORT, 4, 1) < 0) {
        perror("ts-debug-exit: ioperm");
        return 1;
    }
    outl((unsigned)value, DEBUG_EXIT_PORT);
    /* Only reached without the device: qemu would have exited already. */
    fprintf(stderr, "ts-debug-exit: no isa-debug-exit device at 0x%x\n", DEBUG_EXIT_PORT);
    return 1;
}
