/* ember tokenize: print the token ids (and pieces) of a text.  Loads only
   the tokenizer, so vocab-only GGUF files work. */
#include "config.h"

#include <getopt.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ember.h"
#include "model_arg.h"
#include "read_all.h"

static void usage(FILE *out)
{
    fprintf(out,
        "Usage: ember tokenize -m MODEL [--ids] [--no-bos] [--special] TEXT\n"
        "\n"
        "Prints the tokens of TEXT (TEXT '-' reads standard input; put -- before a\n"
        "TEXT that starts with a dash).\n"
        "\n"
        "  -m, --model FILE  GGUF file whose tokenizer to use (vocab-only files work)\n"
        "      --ids         print only the ids, separated by spaces\n"
        "      --no-bos      do not prepend the BOS token\n"
        "      --special     recognise special token strings such as <|eot_id|>\n"
        "  -h, --help        this help\n"
        "\n"
        "Without --ids each token is printed as ID<TAB>PIECE, with the piece's\n"
        "bytes escaped (\\n, \\t, \\\\, \\xNN) where they are not printable UTF-8.\n");
}

/* Valid multi-byte UTF-8 characters pass; everything else that would not
   show as itself on a terminal is escaped. */
static void print_piece(const unsigned char *s, int n)
{
    for (int i = 0; i < n;) {
        unsigned char c = s[i];
        if (c == '\n') fputs("\\n", stdout);
        else if (c == '\t') fputs("\\t", stdout);
        else if (c == '\r') fputs("\\r", stdout);
        else if (c == '\\') fputs("\\\\", stdout);
        else if (c >= 0x20 && c < 0x7F) putchar(c);
        else {
            int l = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
            bool ok = l > 0 && c <= 0xF4 && i + l <= n;
            for (int k = 1; ok && k < l; k++) ok = (s[i + k] & 0xC0) == 0x80;
            if (ok && l == 3 && ((c == 0xE0 && s[i + 1] < 0xA0) || (c == 0xED && s[i + 1] > 0x9F))) ok = false;
            if (ok && l == 4 && ((c == 0xF0 && s[i + 1] < 0x90) || (c == 0xF4 && s[i + 1] > 0x8F))) ok = false;
            if (ok) {
                fwrite(s + i, 1, (size_t)l, stdout);
                i += l;
                continue;
            }
            printf("\\x%02x", c);
        }
        i++;
    }
}

int cmd_tokenize(int argc, char **argv)
{
    enum { OPT_IDS = 256, OPT_NO_BOS, OPT_SPECIAL };
    static const struct option opts[] = {
        {"model", required_argument, NULL, 'm'},
        {"ids", no_argument, NULL, OPT_IDS},
        {"no-bos", no_argument, NULL, OPT_NO_BOS},
        {"special", no_argument, NULL, OPT_SPECIAL},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *model = NULL;
    bool ids_only = false, no_bos = false, special = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":m:h", opts, NULL)) != -1) {
        switch (c) {
        case 'm': model = optarg; break;
        case OPT_IDS: ids_only = true; break;
        case OPT_NO_BOS: no_bos = true; break;
        case OPT_SPECIAL: special = true; break;
        case 'h': usage(stdout); return 0;
        default: return cli_getopt_error("ember tokenize", argv, opts, c);
        }
    }
    if (!model) {
        return cli_usage_error("ember tokenize", "no model given: use -m MODEL");
    }
    char hf_path[PATH_MAX];
    if (model_arg_resolve("ember tokenize", &model, hf_path, sizeof hf_path)) return 1;
    if (optind != argc - 1) {
        fprintf(stderr, "ember tokenize: expected exactly one TEXT argument ('-' for standard input), got %d\n",
                argc - optind);
        return 2;
    }
    const char *arg = argv[optind];
    char *owned = NULL;
    size_t len;
    if (!strcmp(arg, "-")) {
        owned = read_all(stdin, &len);
        if (!owned) {
            fprintf(stderr, "ember tokenize: cannot read standard input\n");
            return 1;
        }
    } else {
        len = strlen(arg);
    }
    const char *text = owned ? owned : arg;

    int rc = 1;
    ember_err err = {{0}};
    ember_tokenizer *t = NULL;
    int32_t *ids = NULL;
    gguf_file *f = gguf_open(model, &err);
    if (!f) {
        fprintf(stderr, "ember tokenize: %s\n", err.msg);
        goto done;
    }
    t = ember_tokenizer_load(f, &err);
    if (!t) {
        fprintf(stderr, "ember tokenize: %s: %s\n", model, err.msg);
        goto done;
    }
    int cap = 256, n;
    for (;;) {
        int32_t *nb = realloc(ids, (size_t)cap * sizeof *ids);
        if (!nb) {
            fprintf(stderr, "ember tokenize: out of memory\n");
            goto done;
        }
        ids = nb;
        n = ember_tokenize(t, text, len, !no_bos, special, ids, cap, &err);
        if (n < 0) {
            fprintf(stderr, "ember tokenize: %s\n", err.msg);
            goto done;
        }
        if (n <= cap) break;
        cap = n;
    }
    if (ids_only) {
        for (int i = 0; i < n; i++) printf(i ? " %d" : "%d", ids[i]);
        putchar('\n');
    } else {
        int pcap = ember_tok_max_piece(t);
        char *piece = malloc((size_t)pcap);
        if (!piece) {
            fprintf(stderr, "ember tokenize: out of memory\n");
            goto done;
        }
        for (int i = 0; i < n; i++) {
            int pl = ember_token_bytes(t, ids[i], piece, pcap);
            printf("%d\t", ids[i]);
            print_piece((const unsigned char *)piece, pl < 0 ? 0 : pl);
            putchar('\n');
        }
        free(piece);
    }
    if (ember_stdout_flush() != 0) goto done;   /* main says why */
    rc = 0;
done:
    free(ids);
    ember_tokenizer_free(t);
    if (f) gguf_close(f);
    free(owned);
    return rc;
}
