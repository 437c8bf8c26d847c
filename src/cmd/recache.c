/* ember recache: re-read a model file into 2 MiB page-cache folios. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "ember.h"

static void usage(FILE *out)
{
    fprintf(out,
        "Usage: ember recache MODEL\n"
        "\n"
        "Drops MODEL's clean page-cache pages that no process maps and reads the file\n"
        "back through a huge-page-advised mapping, so that (where the filesystem keeps\n"
        "large folios) the cache holds it in 2 MiB folios, each mapped by one page-table\n"
        "entry: the compressed strategy then streams the weights with far fewer TLB\n"
        "misses. A file written or first read in 4 KiB pages (a fresh download) stays\n"
        "that way in the cache until evicted; this evicts it and reads it again, once.\n"
        "Costs one read of the file from disk; the file itself is not touched.\n"
        "Prints how much of the file was mapped 2 MiB at a time before and after.\n"
        "\n"
        "  -h, --help   this help\n");
}

int cmd_recache(int argc, char **argv)
{
    static const struct option opts[] = {{"help", no_argument, NULL, 'h'}, {0, 0, 0, 0}};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        if (c == 'h') {
            usage(stdout);
            return 0;
        }
        return cli_getopt_error("ember recache", argv, opts, c);
    }
    if (optind != argc - 1) {
        /* say what is wrong: the usage alone left the user to guess */
        if (optind == argc) return cli_usage_error("ember recache", "no MODEL given");
        fprintf(stderr, "ember recache: one MODEL only ('%s' and '%s' given)\n", argv[optind], argv[optind + 1]);
        return 2;
    }
    const char *path = argv[optind];
    ember_recache_stats st;
    ember_err err;
    if (ember_recache(path, &st, &err)) {
        fprintf(stderr, "ember recache: %s\n", err.msg);
        return 1;
    }
    double mib = (double)st.file_bytes / 1048576.0;
    printf("%s: %.1f MiB\n", path, mib);
    printf("mapped 2 MiB at a time: before %.1f MiB, after %.1f MiB (dropped and read back in %.0f ms)\n",
           st.pmd_before_kb / 1024.0, st.pmd_after_kb / 1024.0, st.read_ms);
    if (st.file_bytes >= (2u << 20) && st.pmd_after_kb * 1024.0 < 0.5 * (double)st.file_bytes)
        printf("note: most of the file is still in 4 KiB pages: another process maps it, or this\n"
               "kernel or filesystem does not keep large page-cache folios for it\n");
    return 0;
}
