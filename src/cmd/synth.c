/* ember synth: command-line front end of synth_write(). */
#include "config.h"

#include <getopt.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach.h"
#include "cli.h"
#include "ember.h"
#include "numarg.h"
#include "options.h"
#include "read_all.h"
#include "synth.h"

static void usage(FILE *out)
{
    fprintf(out,
        "Usage: ember synth -o OUT --like SHAPE [--dtype DTYPE] [--vocab VOCAB.gguf]\n"
        "                   [--chat-template T.jinja] [--seed S] [--threads N] [--untied] [-q]\n"
        "\n"
        "Writes a model with random weights and a real model's layout and metadata.\n"
        "\n"
        "  -o, --out OUT     output GGUF file (written atomically)\n"
        "  --like SHAPE      tiny (256 embd, 2 layers), tiny-qwen2 (384 embd, rows\n"
        "                    that take the K-quant fallbacks), tiny-gemma2 (window 8),\n"
        "                    tiny-gemma3 (window 8), tiny-gemma3-w160 (window 160),\n"
        "                    tiny-gemma4, tiny-mistral3, tiny-qwen3moe (8 experts),\n"
        "                    tiny-hd48 (heads of 48), tiny-phi3, llama-3.2-1b,\n"
        "                    qwen2.5-0.5b, gemma-2-2b, gemma-3-1b, gemma-4-e2b,\n"
        "                    ministral-3-3b, qwen3-30b-a3b, tiny-gpt-oss, gpt-oss-20b\n"
        "                    (MXFP4 experts), phi-3.5-mini, phi-4-mini, tiny-qwen35,\n"
        "                    tiny-qwen35-dn (its last layer a delta-net one) and\n"
        "                    qwen3.5-0.8b (gated delta-net layers), tiny-deepseek2\n"
        "                    and deepseek-v2-lite (latent attention), tiny-lfm2 and\n"
        "                    lfm2-1.2b (short convolutions), tiny-gemma4moe and\n"
        "                    gemma-4-26b-a4b (experts beside the dense FFN),\n"
        "                    tiny-gemma3n and gemma-3n-e2b (four residual streams),\n"
        "                    tiny-granitehybrid, tiny-granitehybrid-moe and\n"
        "                    granite-4.0-h-micro (Mamba-2 layers beside attention),\n"
        "                    tiny-falcon-h1 (Mamba-2 and attention in each layer),\n"
        "                    tiny-nemotron-h and tiny-nemotron-h-moe (Mamba-2,\n"
        "                    attention and FFN layers)\n"
        "  --dtype DTYPE     F16, Q8_0 (default), Q4_0, Q2_K, Q3_K_M, Q4_K_M, Q5_K_M,\n"
        "                    Q6_K, IQ4_XS, IQ2_XXS, IQ2_XS, IQ2_M, IQ3_XXS, IQ3_M,\n"
        "                    IQ1_S, IQ1_M (mixes as the reference's quantizer makes\n"
        "                    them)\n"
        "  --vocab FILE      copy the tokenizer of this GGUF (else a built-in toy\n"
        "                    byte-level BPE vocabulary with the Llama 3 chat template)\n"
        "  --chat-template FILE  write this Jinja text as tokenizer.chat_template\n"
        "  --seed S          random seed (default 0): same seed, same file\n"
        "  --threads N       worker threads (default: one per core)\n"
        "  --untied          a separate output.weight where the shape ties the output\n"
        "                    to token_embd (same work per token; for programs that\n"
        "                    require the tensor, e.g. phi-4-mini in older llama.cpp)\n"
        "  -q, --quiet       no progress on stderr\n"
        "  -h, --help        this help\n");
}

int cmd_synth(int argc, char **argv)
{
    synth_opts o = {0};
    bool quiet = false;
    const char *tmpl_path = NULL;
    enum { O_LIKE = 256, O_DTYPE, O_VOCAB, O_TMPL, O_SEED, O_THREADS, O_UNTIED };
    static const struct option lo[] = {
        {"out", required_argument, 0, 'o'}, {"like", required_argument, 0, O_LIKE},
        {"dtype", required_argument, 0, O_DTYPE}, {"vocab", required_argument, 0, O_VOCAB},
        {"chat-template", required_argument, 0, O_TMPL}, {"seed", required_argument, 0, O_SEED},
        {"threads", required_argument, 0, O_THREADS}, {"untied", no_argument, 0, O_UNTIED},
        {"quiet", no_argument, 0, 'q'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:qh", lo, NULL)) != -1) {
        switch (c) {
        case 'o': o.out = optarg; break;
        case O_LIKE: o.like = optarg; break;
        case O_DTYPE: o.dtype = optarg; break;
        case O_VOCAB: o.vocab = optarg; break;
        case O_TMPL: tmpl_path = optarg; break;
        case O_SEED: {
            uint64_t seed;
            if (numarg_cli_u64("ember synth", "--seed", optarg, &seed)) return 2;
            o.seed = seed;
            break;
        }
        case O_THREADS: {
            /* the thread count's range is the option table's */
            gen_opts g;
            gen_opts_default(&g);
            if (gen_opts_getopt_handle(GEN_OPT_GETOPT + OPT_THREADS, "ember synth", argc, argv, optarg, &g) < 0)
                return 2;
            o.threads = g.threads;
            break;
        }
        case O_UNTIED: o.untied = 1; break;
        case 'q': quiet = true; break;
        case 'h': usage(stdout); return 0;
        default: return cli_getopt_error("ember synth", argv, lo, c);
        }
    }
    if (optind < argc) return cli_usage_error("ember synth", "unexpected argument '%s'", argv[optind]);
    if (!o.out || !o.like) {
        return cli_usage_error("ember synth", "-o OUT and --like SHAPE are required");
    }
    char *tmpl = NULL;
    if (tmpl_path) {
        FILE *f = fopen(tmpl_path, "rb");
        size_t len = 0;
        errno = 0;
        tmpl = f ? read_all(f, &len) : NULL;
        int e = errno ? errno : ENOMEM;
        if (f) fclose(f);
        if (!tmpl) {
            fprintf(stderr, "ember synth: cannot read the chat template '%s': %s\n", tmpl_path, strerror(e));
            return 1;
        }
        /* a binary file was cut at its first NUL and written as the
           template (a GGUF gave "GGUF\x03"): a template is UTF-8 text */
        if (!ui_attach_is_text(tmpl, len)) {
            fprintf(stderr, "ember synth: the chat template '%s' is not text (a NUL byte or not UTF-8)\n",
                    tmpl_path);
            free(tmpl);
            return 1;
        }
        o.chat_template = tmpl;
    }
    o.verbose = !quiet && isatty(2);
    double t0 = ember_now_ms();
    ember_err err = {{0}};
    int rc = synth_write(&o, &err);
    free(tmpl);
    if (rc) {
        /* a write failure reads "ember: cannot write PATH: REASON" as everywhere */
        fprintf(stderr, "%s%s\n", strncmp(err.msg, "cannot write ", 13) ? "ember synth: " : "ember: ", err.msg);
        return 1;
    }
    if (!quiet)
        fprintf(stderr, "ember synth: wrote %s (%s, %s) in %.1f s\n", o.out, o.like,
                o.dtype ? o.dtype : "Q8_0",
                (ember_now_ms() - t0) / 1e3);
    return 0;
}
