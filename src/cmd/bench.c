/* ember bench: the measuring instrument.  Every repetition runs in a fresh
   process (so page cache residency, packing and eviction start equal); the
   parent collects one flat JSON line from each child and reports medians. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "cli.h"
#include "cli_profile.h"
#include "json.h"
#include "model_arg.h"
#include "numarg.h"
#include "options.h"
#include "run_report.h"

static void usage(FILE *out)
{
    fprintf(out,
        "Usage: ember bench -m MODEL [--strategy S | --profile P] [options]\n"
        "\n"
        "  -m, --model FILE        GGUF model, or hf:USER/REPO[:QUANT] (ember pull)\n"
        "      --hf USER/REPO[:QUANT]   the same as -m hf:USER/REPO[:QUANT]\n"
        "      --strategy S        eager | compressed | packed\n"
        "      --profile P         a profile name or file (ember-profile(5))\n"
        "  -p, --prompt-tokens N   prompt length for prefill (default 128)\n"
        "  -n, --tokens N          tokens to decode (default 128)\n"
        "  -r, --reps R            measured repetitions (default 3)\n"
        "  -w, --warmup W          unmeasured repetitions first (default 1)\n"
        "  -t, --threads T         threads (default: one per core)\n"
        "      --ctx N             context size (default: prompt + tokens + 1)\n"
        "      --kv-cache TYPE     KV cache rows: f16 (default) or q8_0\n"
        "      --json OUT          also write all results as JSON to OUT\n"
        "      --compute           measure the int8 multiply-add peak on the same threads\n"
        "                          (and with Q8_0's per-group float FMA: the ordered\n"
        "                          peak) and report prefill's fraction of each\n"
        "      --roofline          measure memory read bandwidth and report the\n"
        "                          achieved fraction of it during decode\n"
        "      --lifecycle         compare the packing lifecycles (control, pack-before-\n"
        "                          prefill, ..., projection selections); order shuffled\n"
        "                          with a fixed seed, each repetition a fresh process\n"
        "      --modes LIST        with --lifecycle: comma-separated subset of modes\n"
        "\n"
        "Each repetition runs in a fresh process. Reported: median / min / max of\n"
        "prefill tok/s, decode tok/s, TTFT, peak RSS, and the token hash (equal across\n"
        "repetitions, else the bench says so).\n");
}

int cmd_bench(int argc, char **argv)
{
    bench_opts b;
    memset(&b, 0, sizeof b);
    b.prompt_tokens = 128;
    b.tokens = 128;
    b.reps = 3;
    b.warmup = 1;
    const char *profile_name = NULL, *strategy = NULL;
    bool child = false;
    static const struct option lo[] = {
        {"model", required_argument, 0, 'm'}, {"strategy", required_argument, 0, 's'},
        {"profile", required_argument, 0, 'P'}, {"prompt-tokens", required_argument, 0, 'p'},
        {"tokens", required_argument, 0, 'n'}, {"reps", required_argument, 0, 'r'},
        {"warmup", required_argument, 0, 'w'}, {"threads", required_argument, 0, 't'},
        {"json", required_argument, 0, 'j'}, {"roofline", no_argument, 0, 'R'},
        {"compute", no_argument, 0, 'K'},
        {"lifecycle", no_argument, 0, 'L'}, {"modes", required_argument, 0, 'M'},
        {"child", no_argument, 0, 'C'}, {"mode", required_argument, 0, 'O'},
        {"ctx", required_argument, 0, 'c'}, {"kv-cache", required_argument, 0, 'k'},
        {"hf", required_argument, 0, 'H'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":m:p:n:r:w:t:h", lo, NULL)) != -1) {
        char typed[64];
        const char *opt = optarg ? gen_opts_typed(argc, argv, optarg, typed, sizeof typed) : "";
        int bad = 0;
        switch (c) {
        case 'm': b.model = optarg; break;
        case 'H': b.model = model_arg_hf(optarg); break;
        case 's':
            if (cli_strategy_arg("ember bench", optarg) < 0) return 2;
            strategy = optarg;
            break;
        case 'P': profile_name = optarg; break;
        case 'p': bad = numarg_cli_int("ember bench", opt, optarg, 1, 1048576, &b.prompt_tokens); break;
        case 'n': bad = numarg_cli_int("ember bench", opt, optarg, 1, 1048576, &b.tokens); break;
        case 'r': bad = numarg_cli_int("ember bench", opt, optarg, 1, 1000, &b.reps); break;
        case 'w': bad = numarg_cli_int("ember bench", opt, optarg, 0, 1000, &b.warmup); break;
        case 't': {
            /* the thread count's range is the option table's */
            gen_opts g;
            gen_opts_default(&g);
            char msg[256];
            if (gen_opt_parse(OPT_THREADS, optarg, &g, msg, sizeof msg) != NUMARG_OK) {
                fprintf(stderr, "ember bench: %s: %s\n", opt, msg);
                bad = -1;
            }
            b.threads = g.threads;
            break;
        }
        case 'c':
        case 'k': {
            /* the ranges and names are the option table's */
            gen_opts g;
            gen_opts_default(&g);
            char msg[256];
            if (gen_opt_parse(c == 'c' ? OPT_CTX : OPT_KV_CACHE, optarg, &g, msg, sizeof msg) != NUMARG_OK) {
                fprintf(stderr, "ember bench: %s: %s\n", opt, msg);
                bad = -1;
            }
            if (c == 'c') b.n_ctx = g.n_ctx;
            else b.kv_cache = optarg;
            break;
        }
        case 'j': b.json_out = optarg; break;
        case 'R': b.roofline = true; break;
        case 'K': b.compute = true; break;
        case 'L': b.lifecycle = true; break;
        case 'M': b.modes = optarg; break;
        case 'C': child = true; break;
        case 'O': b.mode = optarg; break;
        case 'h': usage(stdout); return 0;
        default: return cli_getopt_error("ember bench", argv, lo, c);
        }
        if (bad) return 2;
    }
    /* say what is wrong: the usage alone left the user to guess */
    if (optind != argc) {
        return cli_usage_error("ember bench", "unexpected argument '%s'", argv[optind]);
    }
    if (!b.model) {
        return cli_usage_error("ember bench", "no model given: use -m MODEL");
    }
    if (b.modes && !b.lifecycle) {
        /* it was ignored: the bench ran without the modes asked for */
        fprintf(stderr, "ember bench: --modes goes with --lifecycle\n");
        return 2;
    }
    if (profile_name && strategy && b.lifecycle) {
        fprintf(stderr, "ember bench: --lifecycle takes --strategy or --profile, not both\n");
        return 2;
    }
    /* the children are handed the resolved file: the cache is looked up once */
    char hf_path[PATH_MAX];
    if (model_arg_resolve("ember bench", &b.model, hf_path, sizeof hf_path)) return 1;
    b.profile = profile_name;
    b.strategy = strategy;
    if (child) return bench_child(&b);
    return b.lifecycle ? bench_lifecycle(&b) : bench_simple(&b);
}
