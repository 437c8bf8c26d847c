/* Golden parity: every fixture model, teacher-forced with the reference's
   prompt and greedy tokens, under each strategy, against the reference's
   logits (in the optional fixtures folder, doc/DESIGN.md "Fixtures").
   Also: packed == compressed bit for bit, and 1 vs 2 threads give
   identical logits. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "ember.h"
#include "kernels.h"
#include "golden_io.h"
#include "logits_cmp.h"
#include "tap.h"

/* Logits rows for prompt (batched) + forced ids (one at a time), in a
   context of n_ctx tokens (0: just enough), prefill passes of ubatch
   tokens (0: the default). */
static float *run_ctx(const char *model, ember_plan_opts *po, const int32_t *p, int np,
                      const int32_t *g, int ng, int threads, int *V, int n_ctx, int ubatch)
{
    ember_err err;
    po->threads = threads;
    ember_model *m = ember_model_open(model, po, &err);
    if (!m) {
        tap_diag("open %s: %s", model, err.msg);
        return NULL;
    }
    *V = ember_model_get_info(m)->n_vocab;
    ember_session_opts so = {.n_ctx = n_ctx ? n_ctx : np + ng + 4, .threads = threads, .ubatch = ubatch};
    ember_session *s = ember_session_new(m, &so, &err);
    float *rows = s ? malloc((size_t)(np + ng) * *V * sizeof *rows) : NULL;
    int rc = rows ? ember_prefill(s, p, np, NULL, rows, &err) : -1;
    for (int i = 0; i < ng && rc == 0; i++)
        rc = ember_decode(s, g[i], rows + (size_t)(np + i) * *V, &err);
    if (rc) {
        tap_diag("run %s: %s", model, err.msg);
        free(rows);
        rows = NULL;
    }
    ember_session_free(s);
    ember_model_free(m);
    return rows;
}

static float *run(const char *model, ember_plan_opts *po, const int32_t *p, int np,
                  const int32_t *g, int ng, int threads, int *V)
{
    return run_ctx(model, po, p, np, g, ng, threads, V, 0, 0);
}

/* Truncation with the sliding layers in a KV ring (n_ctx 4096, passes of
   16 tokens: a ring of window 32 + 16 slots): going back
   a few tokens keeps the cache and the logits of the tokens fed again equal
   the uninterrupted run's; going back past what the ring still holds
   resets it (n_past 0) instead of attending to overwritten rows. */
static void ring_truncate(const char *model, ember_plan_opts *po, const int32_t *p, int np,
                          const int32_t *g, int ng, const float *want, int V)
{
    ember_err err;
    po->threads = 2;
    ember_model *m = ember_model_open(model, po, &err);
    ember_session_opts so = {.n_ctx = 4096, .threads = 2, .ubatch = 16};
    ember_session *s = m ? ember_session_new(m, &so, &err) : NULL;
    float *row = malloc((size_t)V * sizeof *row);
    int rc = s && row ? ember_prefill(s, p, np, NULL, NULL, &err) : -1;
    for (int i = 0; i < ng && rc == 0; i++) rc = ember_decode(s, g[i], NULL, &err);
    int back = np + ng - 5, kept = -1;
    bool same = rc == 0;
    if (rc == 0) {
        ember_session_truncate(s, back);
        kept = ember_session_n_past(s);
        for (int i = back - np; i < ng && same; i++)
            same = ember_decode(s, g[i], row, &err) == 0 &&
                   !memcmp(row, want + (size_t)(np + i) * V, (size_t)V * sizeof *row);
    }
    tap_ok(kept == back && same, "%s: KV ring kept after going back 5 tokens (n_past %d of %d), same logits after",
           strrchr(model, '/') + 1, kept, back);
    ember_session_truncate(s, 10);   /* positions 58.. overwrote 10 */
    tap_ok(s && ember_session_n_past(s) == 0, "%s: going back past the ring resets the cache", strrchr(model, '/') + 1);
    free(row);
    ember_session_free(s);
    ember_model_free(m);
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* min_cos bounds every row; med_cos the median row (0 = not checked). */
static void compare(const char *what, const float *a, const float *b, int rows, int V,
                    double min_cos, double med_cos, double min_top1)
{
    double worst = 1, cs[4096];
    int agree = 0, wr = -1;
    for (int r = 0; r < rows; r++) {
        const float *x = a + (size_t)r * V, *y = b + (size_t)r * V;
        double c = logits_cos(x, y, V);
        cs[r < 4096 ? r : 4095] = c;
        if (!(c >= worst)) {
            worst = c;
            wr = r;
        }
        agree += logits_argmax(x, V) == logits_argmax(y, V);
    }
    double top1 = (double)agree / rows;
    qsort(cs, (size_t)(rows < 4096 ? rows : 4096), sizeof cs[0], cmp_dbl);
    double med = cs[(rows < 4096 ? rows : 4096) / 2];
    if (worst < min_cos) tap_diag("%s: worst row %d of %d", what, wr, rows);
    tap_ok(worst >= min_cos && med >= med_cos && top1 >= min_top1,
           "%s: min cos %.7f (>= %.7g), median %.7f (>= %.7g), top-1 %.1f%% (>= %.0f%%)",
           what, worst, min_cos, med, med_cos, 100 * top1, 100 * min_top1);
}

int main(void)
{
    char buf[1024];
    if (!tap_shared("fixtures/golden", buf, sizeof buf)) tap_skip_all("../shared/fixtures absent");
    /* ik: goldens of ik_llama.cpp, whose quantized numerics differ from the
       mainline ones this engine follows (fixtures/README.md): agreement of
       two correct implementations, not bit equality */
    /* qcos: a quantized ik file's bound on every row's cosine, against
       the golden and against eager (0: 0.995 and 0.999).  gemma4's are
       looser: an exact f64 pass reaches only 0.998 against its goldens
       (fixtures/README.md), four times the others' distance, and these
       engine's 8-bit activations add as much again on Q4_K_M (0.9950 vs
       eager, 0.9949 vs the golden on the last forced token, median 0.9985) */
    static const struct { const char *model, *arch; bool f16, ik; double qcos; } fx[] = {
        {"llama-mini-f16", "llama", true, false, 0}, {"llama-mini-Q8_0", "llama", false, false, 0},
        {"llama-mini-Q4_0", "llama", false, false, 0}, {"llama-mini-Q4_K_M", "llama", false, false, 0},
        {"llama-mini-Q5_K_M", "llama", false, false, 0}, {"llama-mini-Q6_K", "llama", false, false, 0},
        {"qwen2-mini-Q8_0", "qwen2", false, false, 0}, {"qwen2-mini-Q4_K_M", "qwen2", false, false, 0},
        {"qwen3-mini-f16", "qwen3", true, false, 0},
        {"gemma3-mini-f16", "gemma3", true, true, 0}, {"gemma3-mini-Q8_0", "gemma3", false, true, 0},
        {"gemma3-mini-Q4_K_M", "gemma3", false, true, 0},
        {"gemma4-mini-f16", "gemma4", true, true, 0}, {"gemma4-mini-Q8_0", "gemma4", false, true, 0.99},
        {"gemma4-mini-Q4_K_M", "gemma4", false, true, 0.99},
        {"phi3-mini-f16", "phi3", true, true, 0}, {"phi3-mini-Q8_0", "phi3", false, true, 0},
        {"qwen3-mini-Q8_0", "qwen3", false, true, 0}, {"qwen3-mini-Q4_K_M", "qwen3", false, true, 0},
    };
    for (size_t i = 0; i < sizeof fx / sizeof fx[0]; i++) {
        char model[1024], ids[1024], greedy[1024], logits[1024], rel[256];
        snprintf(rel, sizeof rel, "fixtures/models/%s.gguf", fx[i].model);
        if (!tap_shared(rel, model, sizeof model)) { tap_skip(fx[i].model); continue; }
        snprintf(rel, sizeof rel, "fixtures/golden/%s-prompt.ids", fx[i].arch);
        tap_shared(rel, ids, sizeof ids);
        snprintf(rel, sizeof rel, "fixtures/golden/%s.greedy", fx[i].model);
        tap_shared(rel, greedy, sizeof greedy);
        snprintf(rel, sizeof rel, "fixtures/golden/%s.logits", fx[i].model);
        tap_shared(rel, logits, sizeof logits);
        int np = 0, ng = 0, V = 0;
        int32_t *p = read_ids(ids, &np), *g = read_ids(greedy, &ng);
        size_t nref;
        float *ref = read_f32(logits, &nref);
        if (!p || !g || !ref) {
            tap_ok(0, "%s: fixture files readable", fx[i].model);
            continue;
        }
        int rows = np + ng;
        char what[128];
        /* An F16 file against ik's goldens: its flash attention keeps Q
           and the softmax weights in f32, as these architectures' attention
           does here (att_f32.h); with the mainline fp16 rounding of both,
           gemma4-mini-f16 reached only 0.9999985 */
        const double f16_cos = fx[i].ik ? 0.9999999 : 0.99999;
        ember_plan_opts po;
        ember_plan_opts_default(&po);
        po.strategy = EMBER_STRATEGY_EAGER;
        float *eager = run(model, &po, p, np, g, ng, 2, &V);
        tap_ok(eager && nref == (size_t)rows * V, "%s eager: ran, %d rows of %d", fx[i].model, rows, V);
        if (eager && nref == (size_t)rows * V) {
            snprintf(what, sizeof what, "%s eager vs golden", fx[i].model);
            compare(what, eager, ref, rows, V, fx[i].f16 ? f16_cos : fx[i].ik ? 0.995 : 0.999, 0,
                    fx[i].f16 ? 0.98 : fx[i].ik ? 0.85 : 0.90);
        }
        po.strategy = EMBER_STRATEGY_COMPRESSED;
        float *comp = run(model, &po, p, np, g, ng, 2, &V);
        tap_ok(comp != NULL, "%s compressed: ran", fx[i].model);
        if (comp && nref == (size_t)rows * V) {
            snprintf(what, sizeof what, "%s compressed vs golden", fx[i].model);
            /* Quantized activations make these random-weight models chaotic:
               one value on the other side of a rounding boundary moves every
               later row to cos ~0.9999, so the quantized formats follow the
               reference's float order everywhere (kernels.h,
               kernels_kquant_impl.h, refnum.h) and must equal its logits bit
               for bit. */
            if (!fx[i].f16 && !fx[i].ik)
                tap_ok(!memcmp(comp, ref, (size_t)rows * V * 4),
                       "%s compressed == golden bit for bit (all %d rows)", fx[i].model, rows);
            if (fx[i].f16)
                compare(what, comp, ref, rows, V, f16_cos, 0.99999, 0.98);
            else if (fx[i].ik)
                compare(what, comp, ref, rows, V, fx[i].qcos ? fx[i].qcos : 0.995, fx[i].qcos ? 0.998 : 0, 0.85);
            else
                compare(what, comp, ref, rows, V, 0.9995, 0.9998, 0.95);
            if (eager) {
                snprintf(what, sizeof what, "%s compressed vs eager", fx[i].model);
                compare(what, comp, eager, rows, V, fx[i].qcos ? fx[i].qcos : 0.999, fx[i].qcos ? 0.999 : 0,
                        fx[i].qcos ? 0.85 : 0.90);
            }
            float *one = run(model, &po, p, np, g, ng, 1, &V);
            tap_ok(one && !memcmp(one, comp, (size_t)rows * V * 4),
                   "%s compressed: 1 thread == 2 threads bit for bit", fx[i].model);
            free(one);
            if (!strcmp(fx[i].arch, "gemma3") || !strcmp(fx[i].arch, "gemma4")) {
                /* a long context puts the sliding layers' KV in a ring of
                   window + ubatch slots (session.h), which the prompt (in
                   passes of 16) and the forced tokens wrap: the same rows
                   in the same order */
                float *ring = run_ctx(model, &po, p, np, g, ng, 2, &V, 4096, 16);
                tap_ok(ring && !memcmp(ring, comp, (size_t)rows * V * 4),
                       "%s compressed: sliding layers in a KV ring == all positions kept, bit for bit", fx[i].model);
                free(ring);
                if (fx[i].f16) ring_truncate(model, &po, p, np, g, ng, comp, V);
            }
        }
        /* the files whose projections have a packed layout: Q8_0, Q4_0, Q6_K,
           and the Q4_K of Q4_K_M, the Q5_K of Q5_K_M (whose Q6_K tensors,
           attn_v / ffn_down in some layers, are packed too where the Q6_K
           tiles run) */
        int pk_type = strstr(fx[i].model, "Q8_0")   ? EMBER_Q8_0
                      : strstr(fx[i].model, "Q4_0") ? EMBER_Q4_0
                      : strstr(fx[i].model, "Q4_K") ? EMBER_Q4_K
                      : strstr(fx[i].model, "Q5_K") ? EMBER_Q5_K
                      : strstr(fx[i].model, "Q6_K") ? EMBER_Q6_K
                                                    : -1;
        if (pk_type >= 0 && !ember_kernel_packed(pk_type, ember_cpu_isa())) {
            tap_skip("packed == compressed: no packed kernel for this dtype on this CPU/build");
            tap_skip("packed == compressed: no packed kernel for this dtype on this CPU/build");
            tap_skip("packed == compressed: no packed kernel for this dtype on this CPU/build");
        } else if (pk_type >= 0) {
            po.strategy = EMBER_STRATEGY_PACKED;
            po.projections = EMBER_PROJ_ALL;
            for (int pp = 0; pp < 2; pp++) {
                po.packed_prefill = pp;
                float *pk = run(model, &po, p, np, g, ng, 2, &V);
                tap_ok(pk && comp && !memcmp(pk, comp, (size_t)rows * V * 4),
                       "%s packed (%s prefill) == compressed bit for bit", fx[i].model,
                       pp ? "packed" : "generic");
                free(pk);
            }
            /* the LM head packed too: where it is the tied embedding table,
               its released rows are then read with pread */
            po.projections = EMBER_PROJ_ALL | EMBER_PROJ_OUTPUT;
            float *pk = run(model, &po, p, np, g, ng, 2, &V);
            tap_ok(pk && comp && !memcmp(pk, comp, (size_t)rows * V * 4),
                   "%s packed with the LM head == compressed bit for bit", fx[i].model);
            free(pk);
        }
        free(eager);
        free(comp);
        free(p);
        free(g);
        free(ref);
    }
    return tap_done();
}
