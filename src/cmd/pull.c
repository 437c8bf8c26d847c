/* ember pull: a GGUF from the Hugging Face Hub into its cache. */
#include "config.h"

#include <getopt.h>

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ember.h"
#include "hf.h"

static void usage(FILE *out)
{
    fprintf(out,
        "Usage: ember pull [-q] USER/REPO[:QUANT]\n"
        "\n"
        "Downloads one GGUF file of a Hugging Face repository into the Hugging Face\n"
        "cache and prints its local path, so that  ember -m \"$(ember pull USER/REPO)\"\n"
        "works (as does  ember -m hf:USER/REPO, which pulls only when needed).\n"
        "\n"
        "QUANT picks the file whose name contains it (case-insensitive, e.g. Q4_K_M,\n"
        "IQ4_XS, or the whole file name; else the one whose folder's name does;\n"
        "FOLDER/FILE for a file in a folder); without it: Q4_K_M, else Q8_0, else\n"
        "the only GGUF. Several matches (two Q4_K_M files too) are an error that\n"
        "lists them. Split parts and mmproj projectors are not chosen.\n"
        "A file already in the cache is reused; an interrupted download resumes\n"
        "from its .incomplete file; the SHA-256 is checked against the Hub's.\n"
        "\n"
        "  -q, --quiet   no progress bar and no summary on stderr\n"
        "  -h, --help    this help\n"
        "\n"
        "Environment: HF_ENDPOINT (default https://huggingface.co), HF_TOKEN (gated\n"
        "and private repositories), HF_HOME / HF_HUB_CACHE (where the cache is),\n"
        "https_proxy / no_proxy.\n");
}

int cmd_pull(int argc, char **argv)
{
    bool quiet = false;
    const char *ref = NULL;
    static const struct option lo[] = {
        {"quiet", no_argument, 0, 'q'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":qh", lo, NULL)) != -1) {
        switch (c) {
        case 'q': quiet = true; break;
        case 'h': usage(stdout); return 0;
        default: return cli_getopt_error("ember pull", argv, lo, c);
        }
    }
    if (optind + 1 < argc) {
        fprintf(stderr, "ember pull: one model at a time ('%s' and '%s' given)\n", argv[optind], argv[optind + 1]);
        return 2;
    }
    if (optind < argc) ref = argv[optind];
    if (!ref) {
        usage(stderr);
        return 2;
    }
    hf_ref r;
    ember_err err = {{0}};
    if (hf_ref_parse(ref, &r, &err)) {
        fprintf(stderr, "ember pull: %s\n", err.msg);
        return 2;
    }
    char path[PATH_MAX];
    if (hf_pull(&r, !quiet && isatty(2), !quiet, NULL, path, sizeof path, &err)) {
        fprintf(stderr, "ember pull: %s\n", err.msg);
        return 1;
    }
    printf("%s\n", path);
    return 0;
}
