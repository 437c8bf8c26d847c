/* A prompt's last logits come from a last layer that carries only the
   output row past its attention (forward.c, attention's skip): they must
   be the last of all rows, which a prefill asking for every row computes
   with every row through every layer, bit for bit.  Synthesized models of
   every architecture (gemma4's per-layer inputs move with the row), the
   three strategies, prompts of one pass and of several (the last pass
   partial), 1 and 2 threads; then the decode after each must agree too
   (the cache holds every prompt row's K and V either way). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ember.h"
#include "synth_dir.h"
#include "tap.h"

/* The last logits and the first decode step's after a prefill of n tokens:
   via last_logits only (all = 0) or all rows (all = 1). */
static int run(ember_model *m, const int32_t *t, int n, int threads, int all, float *last, float *next)
{
    ember_err err;
    const int V = ember_model_get_info(m)->n_vocab;
    ember_session_opts so = {.n_ctx = n + 16, .threads = threads, .ubatch = 48};
    ember_session *s = ember_session_new(m, &so, &err);
    if (!s) {
        tap_diag("session: %s", err.msg);
        return -1;
    }
    float *rows = all ? malloc((size_t)n * (size_t)V * sizeof *rows) : NULL;
    int rc = ember_prefill(s, t, n, all ? NULL : last, rows, &err);
    if (!rc && all) memcpy(last, rows + (size_t)(n - 1) * V, (size_t)V * sizeof *last);
    if (!rc) rc = ember_decode(s, t[0], next, &err);
    if (rc) tap_diag("prefill/decode: %s", err.msg);
    free(rows);
    ember_session_free(s);
    return rc;
}

static size_t differ(const float *a, const float *b, int n)
{
    size_t bad = 0;
    for (int i = 0; i < n; i++) bad += memcmp(&a[i], &b[i], sizeof *a) != 0;
    return bad;
}

int main(void)
{
    synth_dir sd;
    synth_dir_open(&sd, "lastrows");
    static const char *likes[] = {"tiny", "tiny-qwen2", "tiny-gemma2", "tiny-gemma3", "tiny-gemma4",
                                   "tiny-phi3", "tiny-mistral3", "tiny-qwen3moe", "tiny-qwen35",
                                   "tiny-qwen35-dn", "tiny-deepseek2", "tiny-lfm2", "tiny-gemma4moe", "tiny-gemma3n",
                                   "tiny-granitehybrid", "tiny-granitehybrid-moe", "tiny-nemotron-h",
                                   "tiny-nemotron-h-moe", "tiny-falcon-h1"};
    static const struct {
        ember_strategy st;
        const char *name;
    } sts[] = {{EMBER_STRATEGY_EAGER, "eager"}, {EMBER_STRATEGY_COMPRESSED, "compressed"},
               {EMBER_STRATEGY_PACKED, "packed"}};
    static const int lens[] = {2, 30, 130};   /* passes of 48: one, one, three (the last partial) */
    for (size_t c = 0; c < sizeof likes / sizeof likes[0]; c++) {
        char model[256];
        if (!synth_model(&sd, likes[c], "Q8_0", (unsigned)c + 11, model, sizeof model)) continue;
        for (size_t k = 0; k < sizeof sts / sizeof sts[0]; k++) {
            ember_err err;
            ember_plan_opts po;
            ember_plan_opts_default(&po);
            po.strategy = sts[k].st;
            po.threads = 2;
            ember_model *m = ember_model_open(model, &po, &err);
            if (!m) {
                tap_ok(0, "%s %s: open: %s", likes[c], sts[k].name, err.msg);
                continue;
            }
            const int V = ember_model_get_info(m)->n_vocab;
            float *a = malloc(4 * (size_t)V * sizeof *a), *an = a + V, *b = a + 2 * V, *bn = a + 3 * V;
            for (size_t L = 0; L < sizeof lens / sizeof lens[0]; L++) {
                const int n = lens[L];
                int32_t t[130];
                for (int i = 0; i < n; i++) t[i] = (int32_t)((i * 97 + 5 * (int)c + 1) % V);
                for (int th = 2; th >= 1; th--) {
                    int ok = !run(m, t, n, th, 0, a, an) && !run(m, t, n, th, 1, b, bn);
                    size_t d1 = ok ? differ(a, b, V) : 0, d2 = ok ? differ(an, bn, V) : 0;
                    tap_ok(ok && !d1 && !d2,
                           "%s %s, %d tokens, %d thread%s: last logits == the last of all rows (%zu differ), "
                           "and the decode after (%zu differ)",
                           likes[c], sts[k].name, n, th, th > 1 ? "s" : "", d1, d2);
                }
            }
            free(a);
            ember_model_free(m);
        }
        unlink(model);
    }
    synth_dir_close(&sd);
    return tap_done();
}
