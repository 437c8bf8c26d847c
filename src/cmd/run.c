/* ember run: one prompt in, streamed text out, numbers at the end. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chat.h"
#include "cli.h"
#include "cli_profile.h"
#include "ember.h"
#include "json.h"
#include "run_report.h"
#include "sampler.h"
#include "tokenizer.h"

static void usage(FILE *out)
{
    fprintf(out,
        "Usage: ember run -m MODEL -p TEXT [options]\n"
        "\n"
        "  -m, --model FILE       GGUF model\n"
        "  -p, --prompt TEXT      the prompt (- reads stdin)\n"
        "  -n, --n-predict N      tokens to generate (default 128)\n"
        "      --chat             wrap the prompt in the model's chat template\n"
        "      --system TEXT      system prompt (with --chat)\n"
        "      --temp T           temperature; 0 = greedy (default 0)\n"
        "      --top-k K          (default 40)\n"
        "      --top-p P          (default 0.95)\n"
        "      --min-p P          (default 0.05)\n"
        "      --repeat-penalty R (default 1.0 = off)\n"
        "      --seed S           sampling seed (default 0)\n"
        "  -t, --threads N        threads (default: one per core)\n"
        "      --ctx N            context size (default: prompt + n-predict)\n"
        "      --strategy S       eager | compressed | packed (default compressed);\n"
        "                         with --profile, overrides the matched rule's strategy\n"
        "      --profile P        a profile name or file (ember-profile(5)): its rule for\n"
        "                         this model sets the strategy and packing lifecycle\n"
        "      --json             print the numbers as one JSON object on stdout\n"
        "                         instead of the text\n"
        "\n"
        "At the end, stderr gets the prompt tokens, TTFT, prefill and decode tok/s,\n"
        "peak RSS and `hash fnv1a64:...` of the generated ids.\n");
}

static char *read_all(FILE *f)
{
    size_t cap = 4096, len = 0, r;
    char *b = malloc(cap);
    while (b && (r = fread(b + len, 1, cap - len - 1, f)) > 0) {
        len += r;
        if (len + 1 == cap) {
            char *nb = realloc(b, cap *= 2);
            if (!nb) free(b);
            b = nb;
        }
    }
    if (b) b[len] = '\0';
    return b;
}

int cmd_run(int argc, char **argv)
{
    run_opts ro;
    run_opts_default(&ro);
    const char *prompt = NULL, *profile_name = NULL, *strategy = NULL;
    static const struct option lo[] = {
        {"model", required_argument, 0, 'm'}, {"prompt", required_argument, 0, 'p'},
        {"n-predict", required_argument, 0, 'n'}, {"chat", no_argument, 0, 'c'},
        {"system", required_argument, 0, 'S'}, {"temp", required_argument, 0, 'T'},
        {"top-k", required_argument, 0, 'K'}, {"top-p", required_argument, 0, 'P'},
        {"min-p", required_argument, 0, 'M'}, {"repeat-penalty", required_argument, 0, 'R'},
        {"seed", required_argument, 0, 'e'}, {"threads", required_argument, 0, 't'},
        {"ctx", required_argument, 0, 'x'}, {"strategy", required_argument, 0, 's'},
        {"json", no_argument, 0, 'j'}, {"profile", required_argument, 0, 'F'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "m:p:n:t:h", lo, NULL)) != -1) {
        switch (c) {
        case 'm': ro.model = optarg; break;
        case 'p': prompt = optarg; break;
        case 'n': ro.n_predict = atoi(optarg); break;
        case 'c': ro.chat = true; break;
        case 'S': ro.system = optarg; break;
        case 'T': ro.samp.temperature = strtof(optarg, NULL); break;
        case 'K': ro.samp.top_k = atoi(optarg); break;
        case 'P': ro.samp.top_p = strtof(optarg, NULL); break;
        case 'M': ro.samp.min_p = strtof(optarg, NULL); break;
        case 'R': ro.samp.repeat_penalty = strtof(optarg, NULL); break;
        case 'e': ro.samp.seed = strtoull(optarg, NULL, 10); break;
        case 't': ro.plan.threads = atoi(optarg); break;
        case 'x': ro.n_ctx = atoi(optarg); break;
        case 's':
            if (ember_strategy_from_name(optarg) < 0) {
                fprintf(stderr, "ember run: unknown strategy '%s' (eager, compressed, packed)\n", optarg);
                return 2;
            }
            strategy = optarg;
            break;
        case 'F': profile_name = optarg; break;
        case 'j': ro.json = true; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!ro.model || !prompt || optind != argc || ro.n_predict < 0 || ro.plan.threads < 0) {
        usage(stderr);
        return 2;
    }
    ember_err err;
    if (profile_name || strategy) {
        int threads = ro.plan.threads;
        cli_resolved r = {ro.plan, ro.samp, 0, ""};
        if (cli_resolve(profile_name, strategy, ro.model, &r, &err)) {
            fprintf(stderr, "ember run: %s\n", err.msg);
            return 1;
        }
        ro.plan = r.plan;
        if (threads > 0) ro.plan.threads = threads;
        if (!ro.n_ctx && r.context > 0) ro.n_ctx = r.context;
    }
    char *owned = NULL;
    if (!strcmp(prompt, "-")) {
        owned = read_all(stdin);
        if (!owned) {
            fprintf(stderr, "ember run: cannot read the prompt from stdin\n");
            return 1;
        }
        prompt = owned;
    }
    ro.prompt = prompt;
    run_result res;
    int rc = run_generate(&ro, stdout, &res, &err);
    if (rc) {
        fprintf(stderr, "ember run: %s\n", err.msg);
    } else if (ro.json) {
        run_report_json(&ro, &res, stdout);
    } else {
        fflush(stdout);
        run_report_text(&res, stderr);
    }
    run_result_free(&res);
    free(owned);
    return rc ? 1 : 0;
}
