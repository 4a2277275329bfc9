/* turboschedd: wiring only. Options, config, event loop, signals, shutdown. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "version.h"

static void help(void)
{
    printf("Usage: turboschedd [OPTIONS]\n\n"
           "Keep busy cores in turbo by packing jitter tasks onto them.\n\n"
           "  -h, --help      show this help\n"
           "  -V, --version   show the version\n");
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "hV", opts, NULL)) >= 0) {
        switch (c) {
        case 'h':
            help();
            return 0;
        case 'V':
            printf("turboschedd %s\n", TS_VERSION);
            return 0;
        default:
            return 2;
        }
    }
    return 0;
}
