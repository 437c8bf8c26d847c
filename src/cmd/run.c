/* ember run: one prompt in, streamed text out, numbers at the end. */
#include "config.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "read_all.h"
#include "cli_profile.h"
#include "ember.h"
#include "json.h"
#include "model_arg.h"
#include "options.h"
#include "run_report.h"

/* run's own defaults: greedy and short, so a run is reproducible */
static void run_defaults(const run_opts *ro, gen_opts *g)
{
    gen_opts_default(g);
    g->samp = ro->samp;
    g->n_predict = ro->n_predict;
    g->n_ctx = 0;
    g->threads = ro->plan.threads;
}

static void usage(FILE *out)
{
    run_opts ro;
    run_opts_default(&ro);
    gen_opts d;
    run_defaults(&ro, &d);
    const char *dflt_text[OPT_COUNT] = {[OPT_CTX] = "profile's, else prompt+n-predict",
                                        [OPT_THREADS] = "the profile's, else 0"};
    fprintf(out,
        "Usage: ember run -m MODEL -p TEXT [options]\n"
        "\n"
        "  -m, --model FILE       GGUF model, or hf:USER/REPO[:QUANT] (ember pull)\n"
        "      --hf USER/REPO[:QUANT]  the same as -m hf:USER/REPO[:QUANT]\n"
        "  -p, --prompt TEXT      the prompt (- reads stdin)\n"
        "      --chat             wrap the prompt in the model's own chat template (its\n"
        "                         Jinja tokenizer.chat_template; a named built-in one when\n"
        "                         it is absent or fails); stderr says which\n"
        "      --system TEXT      system prompt (with --chat)\n");
    gen_opts_usage(out, GEN_OPT_ALL, &d, dflt_text);
    fprintf(out,
        "      --strategy S       eager | compressed | packed (default compressed);\n"
        "                         with --profile, overrides the matched rule's strategy\n"
        "      --profile P        a profile name or file (ember-profile(5)): its rule for\n"
        "                         this model sets the strategy and packing lifecycle, its\n"
        "                         values the sampling, context and threads\n"
        "      --json             print the numbers as one JSON object on stdout\n"
        "                         instead of the text\n"
        "\n"
        "At the end, stderr gets the prompt tokens, TTFT, prefill and decode tok/s,\n"
        "peak RSS and `hash fnv1a64:...` of the generated ids.\n");
}

int cmd_run(int argc, char **argv)
{
    run_opts ro;
    run_opts_default(&ro);
    cli_resolve_in in;
    memset(&in, 0, sizeof in);
    run_defaults(&ro, &in.defaults);
    in.cli = in.defaults;
    in.cli.set = 0;
    in.plan = ro.plan;
    const char *prompt = NULL;
    struct option lo[16 + OPT_COUNT + 1] = {
        {"model", required_argument, 0, 'm'}, {"prompt", required_argument, 0, 'p'},
        {"chat", no_argument, 0, 'c'}, {"system", required_argument, 0, 'S'},
        {"strategy", required_argument, 0, 's'}, {"json", no_argument, 0, 'j'},
        {"profile", required_argument, 0, 'F'}, {"help", no_argument, 0, 'h'},
        {"hf", required_argument, 0, 'H'}};
    char shorts[32] = ":m:p:h";
    gen_opts_getopt(lo, 9, GEN_OPT_ALL, shorts, sizeof shorts);
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
        int t = gen_opts_getopt_handle(c, "ember run", argc, argv, optarg, &in.cli);
        if (t < 0) return 2;
        if (t > 0) continue;
        switch (c) {
        case 'm': ro.model = optarg; break;
        case 'H': ro.model = model_arg_hf(optarg); break;
        case 'p': prompt = optarg; break;
        case 'c': ro.chat = true; break;
        case 'S': ro.system = optarg; break;
        case 's':
            if (cli_strategy_arg("ember run", optarg) < 0) return 2;
            in.strategy = optarg;
            break;
        case 'F': in.profile = optarg; break;
        case 'j': ro.json = true; break;
        case 'h': usage(stdout); return 0;
        default: return cli_getopt_error("ember run", argv, lo, c);
        }
    }
    /* say what is wrong: the usage alone left the user to guess */
    if (optind != argc) {
        return cli_usage_error("ember run", "unexpected argument '%s': the prompt goes after -p", argv[optind]);
    }
    if (!ro.model || !prompt) {
        return cli_usage_error("ember run", "%s",
                               !ro.model ? "no model given: use -m MODEL"
                                         : "no prompt given: use -p TEXT (-p - reads stdin)");
    }
    char hf_path[PATH_MAX];
    if (model_arg_resolve("ember run", &ro.model, hf_path, sizeof hf_path)) return 1;
    ember_err err;
    in.model = ro.model;
    cli_resolved r;
    if (cli_resolve(&in, &r, &err)) {
        fprintf(stderr, "ember run: %s\n", err.msg);
        return 1;
    }
    ro.plan = r.plan;
    ro.samp = r.gen.samp;
    ro.n_predict = r.gen.n_predict;
    ro.n_ctx = r.gen.n_ctx;
    ro.think = gen_opts_reasoning_mode(&r.gen);
    char *owned = NULL;
    if (!strcmp(prompt, "-")) {
        size_t len = 0;
        owned = read_all(stdin, &len);
        if (!owned) {
            fprintf(stderr, "ember run: cannot read the prompt from stdin\n");
            return 1;
        }
        /* the prompt is a C string: one with a NUL byte ran cut short at it */
        if (strlen(owned) != len) {
            fprintf(stderr, "ember run: the prompt on stdin holds a NUL byte (at byte %zu)\n", strlen(owned));
            free(owned);
            return 1;
        }
        prompt = owned;
    }
    ro.prompt = prompt;
    run_result res;
    int rc = run_generate(&ro, stdout, &res, &err);
    if (!rc && res.st.pack_cache_note[0]) fprintf(stderr, "ember run: note: %s\n", res.st.pack_cache_note);
    if (rc) {
        fprintf(stderr, "ember run: %s\n", err.msg);
    } else if (ro.json) {
        run_report_json(&ro, &res, stdout);
    } else {
        ember_stdout_flush();   /* the text before the stats; a failure is reported at exit */
        run_report_text(&res, stderr);
    }
    run_result_free(&res);
    free(owned);
    return rc ? 1 : 0;
}
