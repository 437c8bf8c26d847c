/* ember eval: batched prefill of prompt ids, then single-token decode of
   each forced id, writing every logits row (the golden fixtures' format). */
#include "config.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ember.h"
#include "cli_profile.h"
#include "model_arg.h"
#include "ids.h"
#include "options.h"

static void usage(FILE *out)
{
    fprintf(out,
        "Usage: ember eval -m MODEL --ids PROMPT_IDS [--force IDS] --logits OUT\n"
        "                  [--strategy eager|compressed|packed] [--threads N] [--ctx N]\n"
        "                  [--kv-cache f16|q8_0]\n"
        "\n"
        "Runs the prompt ids (a file of whitespace-separated ids, - for stdin) as one\n"
        "batched prefill, then decodes each id of --force (a file) one at a time, and\n"
        "writes f32 little-endian logits: one row of n_vocab per prompt position, then\n"
        "one row after each forced id.  --ctx sets the session's context size (default:\n"
        "prompt + forced + 1; at least that): settings chosen by the context size, such\n"
        "as LongRoPE's long or short factors, follow it.  --kv-cache picks the KV\n"
        "cache's rows (default f16), as for the chat.\n");
}

int cmd_eval(int argc, char **argv)
{
    const char *model = NULL, *ids_path = NULL, *force_path = NULL, *out_path = NULL;
    int n_ctx = 0;
    ember_plan_opts po;
    ember_plan_opts_default(&po);
    static const struct option lo[] = {
        {"model", required_argument, 0, 'm'}, {"ids", required_argument, 0, 'i'},
        {"force", required_argument, 0, 'f'}, {"logits", required_argument, 0, 'o'},
        {"strategy", required_argument, 0, 's'}, {"threads", required_argument, 0, 't'},
        {"ctx", required_argument, 0, 'c'}, {"kv-cache", required_argument, 0, 'k'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":m:t:h", lo, NULL)) != -1) {
        switch (c) {
        case 'm': model = optarg; break;
        case 'i': ids_path = optarg; break;
        case 'f': force_path = optarg; break;
        case 'o': out_path = optarg; break;
        case 's': {
            int s = cli_strategy_arg("ember eval", optarg);
            if (s < 0) return 2;
            po.strategy = (ember_strategy)s;
            break;
        }
        case 't':
        case 'c':
        case 'k': {
            /* the thread count's, the context's and the cache's words are the option table's */
            gen_opts g;
            gen_opts_default(&g);
            const int id = c == 't' ? OPT_THREADS : c == 'c' ? OPT_CTX : OPT_KV_CACHE;
            if (gen_opts_getopt_handle(GEN_OPT_GETOPT + id, "ember eval", argc, argv, optarg, &g) < 0) return 2;
            if (c == 't') po.threads = g.threads;
            else if (c == 'c') n_ctx = g.n_ctx;
            else po.kv_cache = (ember_kv_type)g.kv_cache;
            break;
        }
        case 'h': usage(stdout); return 0;
        default: return cli_getopt_error("ember eval", argv, lo, c);
        }
    }
    /* say what is wrong: the usage alone left the user to guess */
    if (optind != argc) {
        return cli_usage_error("ember eval", "unexpected argument '%s'", argv[optind]);
    }
    if (!model || !ids_path || !out_path) {
        return cli_usage_error("ember eval", "%s is required",
                               !model ? "-m MODEL" : !ids_path ? "--ids PROMPT_IDS" : "--logits OUT");
    }
    char hf_path[PATH_MAX];
    if (model_arg_resolve("ember eval", &model, hf_path, sizeof hf_path)) return 1;
    ember_err err;
    int np = 0, nf = 0;
    int32_t *ids = ids_read_file(ids_path, &np, &err), *force = NULL;
    if (!ids) {
        fprintf(stderr, "ember eval: %s\n", err.msg);
        return 1;
    }
    if (np == 0) {
        fprintf(stderr, "ember eval: %s holds no token ids\n", ids_path);
        free(ids);
        return 1;
    }
    if (force_path && !(force = ids_read_file(force_path, &nf, &err))) {
        fprintf(stderr, "ember eval: %s\n", err.msg);
        free(ids);
        return 1;
    }
    int rc = 1;
    ember_model *m = ember_model_open(model, &po, &err);
    ember_session *s = NULL;
    float *rows = NULL;
    ember_file *out = NULL;
    bool write_err = false;
    if (!m) goto fail;
    const int V = ember_model_get_info(m)->n_vocab;
    if (n_ctx && n_ctx < np + nf + 1) {
        ember_seterr(&err, "--ctx %d cannot hold the %d prompt and forced ids (it needs at least %d)", n_ctx, np + nf,
                     np + nf + 1);
        goto fail;
    }
    ember_session_opts so = {.n_ctx = n_ctx ? n_ctx : np + nf + 1, .threads = po.threads};
    if (!(s = ember_session_new(m, &so, &err))) goto fail;
    rows = malloc((size_t)np * V * sizeof *rows);
    if (!rows) {
        ember_seterr(&err, "out of memory for %d logits rows", np);
        goto fail;
    }
    if (ember_prefill(s, ids, np, NULL, rows, &err)) goto fail;
    /* a write error reads "ember: cannot write PATH: REASON", as at every write site */
    write_err = true;
    if (!(out = ember_file_create(out_path, EMBER_MODE_PUBLIC, &err))) goto fail;
    if (ember_file_write(out, rows, sizeof *rows * (size_t)np * V, &err)) goto fail;
    for (int i = 0; i < nf; i++) {
        write_err = false;
        if (ember_decode(s, force[i], rows, &err)) goto fail;
        write_err = true;
        if (ember_file_write(out, rows, sizeof *rows * (size_t)V, &err)) goto fail;
    }
    ember_file *done = out;
    out = NULL;
    if (ember_file_commit(done, &err)) goto fail;
    rc = 0;
fail:
    if (rc) fprintf(stderr, "%s%s\n", write_err ? "ember: " : "ember eval: ", err.msg);
    ember_file_abort(out);
    free(rows);
    ember_session_free(s);
    ember_model_free(m);
    free(ids);
    free(force);
    return rc;
}
