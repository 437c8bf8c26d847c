/* Prompt attention a block of tokens at a time (forward.c, att_tokens):
   the keys read once per block, each token's scores, maximum, softmax and
   weighted sum the same floats as one token at a time.  Every logit row of
   long prompts (several passes, so the blocks start deep in the cache and
   past the chunks every token sees whole), on synthesized models of every
   attention shape: heads of 64, 48 (gemm over 16 lanes, not 64), a window
   the prompt outgrows (gemma3: a block's rows start at its first token's
   window, and in passes of 40 tokens they wrap around the ring; a window
   of 160 that holds whole chunks of keys), gemma4's
   shared KV and its 512-wide global heads, phi3's partial rotary, a q8_0
   KV cache; 1 and 2 threads, and prompts whose last pass leaves a partial
   block. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ember.h"
#include "synth_dir.h"
#include "tap.h"

/* All logit rows of a prompt of n tokens, prefilled in one call. */
static float *prefill_rows(ember_model *m, const int32_t *t, int n, int threads, int att_block, int n_ctx, int ubatch)
{
    ember_err err;
    const int V = ember_model_get_info(m)->n_vocab;
    ember_session_opts so = {.n_ctx = n_ctx, .threads = threads, .att_block = att_block, .ubatch = ubatch};
    ember_session *s = ember_session_new(m, &so, &err);
    float *rows = s ? malloc((size_t)n * (size_t)V * sizeof *rows) : NULL;
    if (rows && ember_prefill(s, t, n, NULL, rows, &err)) {
        tap_diag("prefill: %s", err.msg);
        free(rows);
        rows = NULL;
    } else if (!s) {
        tap_diag("session: %s", err.msg);
    }
    ember_session_free(s);
    return rows;
}

int main(void)
{
    synth_dir sd;
    synth_dir_open(&sd, "attblk");
    static const struct {
        const char *like, *dtype;
        int n;                  /* prompt tokens */
        ember_kv_type kv;
        int ubatch;             /* 0: the default; 40: sliding layers keep a ring of window + 40 */
    } cs[] = {
        {"tiny", "F16", 300, EMBER_KV_F16, 0},          /* passes of 128, 128, 44 */
        {"tiny-hd48", "Q8_0", 270, EMBER_KV_F16, 0},
        {"tiny-gemma3", "Q8_0", 200, EMBER_KV_F16, 0},
        {"tiny-gemma2", "Q8_0", 190, EMBER_KV_F16, 0},   /* soft-capped scores */
        {"tiny-gemma4", "Q8_0", 181, EMBER_KV_F16, 0},
        {"tiny-phi3", "Q8_0", 150, EMBER_KV_F16, 0},
        {"tiny-qwen2", "Q8_0", 77, EMBER_KV_F16, 0},     /* one pass, a partial last block */
        /* a q8_0 cache (att_q8.h): a chunk of keys against a block's queries */
        {"tiny", "Q8_0", 300, EMBER_KV_Q8_0, 0},
        {"tiny-gemma3", "Q8_0", 200, EMBER_KV_Q8_0, 0},
        {"tiny-gemma2", "Q8_0", 190, EMBER_KV_Q8_0, 40},
        {"tiny-gemma4", "Q8_0", 181, EMBER_KV_Q8_0, 0},
        {"tiny-phi3", "Q8_0", 150, EMBER_KV_Q8_0, 0},
        {"tiny-gemma4", "Q8_0", 200, EMBER_KV_Q8_0, 40},
        {"tiny-gemma3", "Q8_0", 200, EMBER_KV_F16, 40},
        {"tiny-gemma4", "Q8_0", 200, EMBER_KV_F16, 40},
        {"tiny-gemma3", "Q8_0", 200, EMBER_KV_Q8_0, 40},
        /* a window of 160: blocks share whole chunks of keys inside it */
        {"tiny-gemma3-w160", "Q8_0", 420, EMBER_KV_F16, 0},
        {"tiny-gemma3-w160", "Q8_0", 420, EMBER_KV_F16, 40},
        {"tiny-gemma3-w160", "Q8_0", 420, EMBER_KV_Q8_0, 40},
    };
    for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
        char model[256];
        if (!synth_model(&sd, cs[c].like, cs[c].dtype, (unsigned)c + 5, model, sizeof model)) continue;
        ember_err err;
        ember_plan_opts po;
        ember_plan_opts_default(&po);
        po.strategy = EMBER_STRATEGY_COMPRESSED;
        po.threads = 2;
        po.kv_cache = cs[c].kv;
        ember_model *m = ember_model_open(model, &po, &err);
        if (!m) {
            tap_ok(0, "%s: open: %s", model, err.msg);
            continue;
        }
        const int V = ember_model_get_info(m)->n_vocab, n = cs[c].n;
        int32_t *t = malloc((size_t)n * sizeof *t);
        for (int i = 0; i < n; i++) t[i] = (int32_t)((i * 131 + 7 * (int)c + 3) % V);
        for (int th = 2; th >= 1; th--) {
            float *one = prefill_rows(m, t, n, th, 1, n + 8, cs[c].ubatch);
            float *blk = prefill_rows(m, t, n, th, 0, n + 8, cs[c].ubatch);
            size_t bad = 0, first = 0;
            for (size_t i = 0; one && blk && i < (size_t)n * (size_t)V; i++)
                if (memcmp(&one[i], &blk[i], sizeof *one) && !bad++) first = i;
            tap_ok(one && blk && !bad,
                   "%s %s, KV %s, %d tokens, ubatch %d, %d thread%s: blocks of prompt tokens == one at a time, every logit "
                   "bit for bit (%zu differ, the first in row %zu)",
                   cs[c].like, cs[c].dtype, cs[c].kv == EMBER_KV_Q8_0 ? "q8_0" : "f16", n, cs[c].ubatch, th, th > 1 ? "s" : "",
                   bad, first / (size_t)V);
            free(one);
            free(blk);
        }
        free(t);
        ember_model_free(m);
        unlink(model);
    }
    synth_dir_close(&sd);
    return tap_done();
}
