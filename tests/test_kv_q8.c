/* A decoded token's scores with the V rows prefetched chunk by chunk
   (kv.c, ember_kv_f16_scores_vpf) equal one call's bit for bit.
   The q8_0 KV cache (kv.c): its logits follow the f16 cache's closely on
   synthesized models (a 300-token prompt: 280 batched, then 20 single
   tokens; and 700, past a chunk of rows),
   latent attention (tiny-deepseek2: its one row a token as K and V);
   on the fixture models against the reference's goldens (llama-mini,
   gemma3-mini with its sliding layers in a ring, gemma4-mini, phi3-mini,
   qwen3-mini), its size is 34/64 of
   f16's as the session reports it, and a head dimension that is not whole
   blocks of 32 is refused at load with a message saying so. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtype.h"
#include "ember.h"
#include "golden_io.h"
#include "kv.h"
#include "refnum.h"
#include "logits_cmp.h"
#include "synth_dir.h"
#include "tap.h"

enum { NG = 20, MAXROWS = 700 };

/* Logits rows of prompt p (np, batched) then ids g (ng, one at a time) with
   KV rows of type kv in an n_ctx context; the session's stats in st. */
static float *run(const char *model, ember_kv_type kv, const int32_t *p, int np, const int32_t *g, int ng,
                  int n_ctx, int ubatch, int *V, ember_stats *st)
{
    ember_err err;
    ember_plan_opts po;
    ember_plan_opts_default(&po);
    po.threads = 2;
    po.kv_cache = kv;
    ember_model *m = ember_model_open(model, &po, &err);
    if (!m) {
        tap_diag("open %s: %s", model, err.msg);
        return NULL;
    }
    *V = ember_model_get_info(m)->n_vocab;
    ember_session_opts so = {.n_ctx = n_ctx, .threads = 2, .ubatch = ubatch};
    ember_session *s = ember_session_new(m, &so, &err);
    float *rows = s ? malloc((size_t)(np + ng) * (size_t)*V * sizeof *rows) : NULL;
    int rc = rows ? ember_prefill(s, p, np, NULL, rows, &err) : -1;
    for (int i = 0; i < ng && rc == 0; i++) rc = ember_decode(s, g[i], rows + (size_t)(np + i) * *V, &err);
    if (rc) {
        tap_diag("run %s: %s", model, err.msg);
        free(rows);
        rows = NULL;
    }
    if (s && st) {
        ember_stats_get(s, st);
        if (ember_kv_cache_bytes(m, n_ctx, kv, ubatch) != st->kv_bytes) {
            tap_diag("ember_kv_cache_bytes %zu != the session's %zu", ember_kv_cache_bytes(m, n_ctx, kv, ubatch),
                     st->kv_bytes);
            st->kv_bytes = 0;
        }
    }
    ember_session_free(s);
    ember_model_free(m);
    return rows;
}

/* every row's cosine >= min_cos and top-1 agreement >= min_top1; where the
   top-1 differs, how close b's own top two were (a near-tie flips on any
   rounding: eager's f32 weights flip some of the same rows, test_golden) */
static void compare(const char *what, const float *a, const float *b, int rows, int V, double min_cos,
                    double min_top1, double max_gap)
{
    double worst = 1, gap = 0;
    int agree = 0;
    for (int r = 0; r < rows; r++) {
        const float *x = a + (size_t)r * V, *y = b + (size_t)r * V;
        double c = logits_cos(x, y, V);
        if (!(c >= worst)) worst = c;
        int ia = logits_argmax(x, V), ib = logits_argmax(y, V);
        agree += ia == ib;
        if (ia != ib && y[ib] - y[ia] > gap) gap = y[ib] - y[ia];
    }
    double top1 = (double)agree / rows;
    if (agree < rows) tap_diag("%s: where top-1 differs, the reference's top two were at most %.3f apart", what, gap);
    tap_ok(worst >= min_cos && top1 >= min_top1 && gap < max_gap,
           "%s: min cos %.6f (>= %g), top-1 %.1f%% (>= %.0f%%) of %d rows, flips only at near-ties (%.3f < %g)",
           what, worst, min_cos, 100 * top1, 100 * min_top1, rows, gap, max_gap);
}

/* min_cos 0.999 and min_top1 95%, but tiny-gemma3 (random weights, one
   KV head of 128 dims, near-ties everywhere) measures 0.99875 and 94.7%
   with the query quantized as the reference's quantized-cache path does
   (att_q8.h); every flip is at a near-tie, below */
static void synth_case(const synth_dir *sd, const char *like, double min_cos, double min_top1, int rows)
{
    const int NP = rows - NG, ROWS = rows;
    char model[256];
    if (!synth_model(sd, like, "Q8_0", 0, model, sizeof model)) return;
    int32_t ids[MAXROWS];
    for (int i = 0; i < ROWS; i++) ids[i] = (int32_t)((i * 7919 + 11) % 251 + 3);
    int V = 0, V2 = 0;
    ember_stats a, b;
    float *f16 = run(model, EMBER_KV_F16, ids, NP, ids + NP, NG, ROWS + 4, 0, &V, &a);
    float *q8 = run(model, EMBER_KV_Q8_0, ids, NP, ids + NP, NG, ROWS + 4, 0, &V2, &b);
    if (tap_ok(f16 && q8 && V == V2, "%s: ran with both KV caches", like)) {
        char what[128];
        snprintf(what, sizeof what, "%s: q8_0 KV vs f16 KV logits, %d tokens", like, rows);
        compare(what, q8, f16, ROWS, V, min_cos, min_top1, 0.1);
        /* 34 bytes per 32 values where f16 takes 64 */
        tap_ok(b.kv_type == EMBER_KV_Q8_0 && a.kv_type == EMBER_KV_F16 && a.kv_bytes &&
                   b.kv_bytes * 64 == a.kv_bytes * 34,
               "%s: KV bytes reported %zu (q8_0) = 34/64 of %zu (f16)", like, b.kv_bytes, a.kv_bytes);
    }
    free(f16);
    free(q8);
    unlink(model);
}

/* n_ctx 4096 puts gemma3's sliding layers in a ring (session.h) of window
   32 + passes of 16, which the fixture's 105 rows wrap.  The goldens are
   the f16 cache's: the q8_0 cache's own rounding is what separates them
   (about 1e-3), and it moves with the query's quantization (att_q8.h:
   as the reference's q8_0 flash attention, gemma3-mini-Q8_0 at 0.99900,
   with llama.cpp's q8_0 query 0.99908), so min_cos is that margin */
static void golden_case(const char *name, const char *arch, int n_ctx, double min_cos, double min_top1)
{
    char model[1024], ids[1024], greedy[1024], logits[1024], rel[256];
    snprintf(rel, sizeof rel, "fixtures/models/%s.gguf", name);
    if (!tap_shared(rel, model, sizeof model)) {
        tap_skip("fixture model absent");
        return;
    }
    snprintf(rel, sizeof rel, "fixtures/golden/%s-prompt.ids", arch);
    tap_shared(rel, ids, sizeof ids);
    snprintf(rel, sizeof rel, "fixtures/golden/%s.greedy", name);
    tap_shared(rel, greedy, sizeof greedy);
    snprintf(rel, sizeof rel, "fixtures/golden/%s.logits", name);
    tap_shared(rel, logits, sizeof logits);
    int np = 0, ng = 0, V = 0;
    size_t nref = 0;
    int32_t *p = read_ids(ids, &np), *g = read_ids(greedy, &ng);
    float *ref = read_f32(logits, &nref);
    float *q8 = p && g && ref ? run(model, EMBER_KV_Q8_0, p, np, g, ng, n_ctx ? n_ctx : np + ng + 4, n_ctx ? 16 : 0, &V, NULL) : NULL;
    if (tap_ok(q8 && nref == (size_t)(np + ng) * (size_t)V, "%s q8_0 KV: ran, %d rows", name, np + ng)) {
        char what[128];
        snprintf(what, sizeof what, "%s q8_0 KV%s vs golden", name, n_ctx ? " (ring)" : "");
        compare(what, q8, ref, np + ng, V, min_cos, min_top1, 0.25);
    }
    free(p);
    free(g);
    free(ref);
    free(q8);
}

/* ember_kv_f16_scores_vpf against one ember_ref_scores_f16_heads call:
   position counts around its 512-position chunks and past its 512 KiB
   bound, head dims 64 and 128, 1 to 3 query heads */
static void vpf_case(void)
{
    enum { MAXP = 4200, HDM = 128 };
    static uint16_t K[MAXP * HDM], V[MAXP * HDM], q[3 * HDM];
    static float a[3 * (MAXP + 16)], b[3 * (MAXP + 16)];
    uint32_t r = 12345;
    for (int i = 0; i < MAXP * HDM; i++) {
        r = r * 1103515245u + 12345u;
        K[i] = ember_f32_to_fp16((float)((int)(r >> 16) % 2001 - 1000) * 1e-3f);
        V[i] = K[i];
    }
    for (int i = 0; i < 3 * HDM; i++) q[i] = ember_f32_to_fp16((float)(i % 17) * 0.05f - 0.4f);
    static const int nps[] = {1, 100, 511, 512, 513, 1024, 1500, 4096, 4100};
    int runs = 0, bad = 0;
    for (int hd = 64; hd <= HDM; hd += 64)
        for (size_t pi = 0; pi < sizeof nps / sizeof nps[0]; pi++)
            for (int nh = 1; nh <= 3; nh++) {
                const int np = nps[pi];
                const size_t st = MAXP + 16;
                float ma[3], mb[3];
                memset(a, 0, sizeof a);
                memset(b, 0, sizeof b);
                ember_ref_scores_f16_heads(a, st, K, (size_t)hd, q, (size_t)hd, nh, np, hd, 0, 0.125f, ma);
                ember_kv_f16_scores_vpf(b, st, K, V, q, nh, np, hd, 0.125f, mb);
                runs++;
                bad += memcmp(a, b, sizeof a) != 0 || memcmp(ma, mb, sizeof ma[0] * (size_t)nh) != 0;
            }
    tap_ok(bad == 0, "decode scores with V prefetched chunk by chunk == one call, bit for bit (%d of %d cases differ)",
           bad, runs);
}

int main(void)
{
    vpf_case();
    synth_dir sd;
    synth_dir_open(&sd, "kvq8");
    /* head dims 64 (tiny, tiny-phi3 with partial rotary) and 128 with a
       sliding window in a ring (tiny-gemma3: window 8, ring at 300) */
    synth_case(&sd, "tiny", 0.999, 0.95, 300);
    synth_case(&sd, "tiny-phi3", 0.999, 0.95, 300);
    synth_case(&sd, "tiny-gemma3", 0.998, 0.93, 300);
    /* (not tiny-gemma4: with random weights and gemma4's attention scale of
       1 its softmax is nearly one-hot, so any rounding of the cache moves
       it: cosines of 0.81-0.89 against f16 with q8_0 rows, whether read
       back as fp16 or taken as integers.  The gemma4-mini fixture below
       checks gemma4 against its golden instead, and test_att_block its
       prompt blocks.) */
    /* past 512 positions (a prompt pass's blocks of keys) */
    synth_case(&sd, "tiny", 0.999, 0.95, 700);
    /* latent attention: one 576-wide row a token, read as K and V by
       every head, with no V cache of its own */
    synth_case(&sd, "tiny-deepseek2", 0.999, 0.95, 300);

    /* heads of 48: refused with the reason and the way out */
    char model[256];
    if (synth_model(&sd, "tiny-hd48", "Q8_0", 0, model, sizeof model)) {
        ember_plan_opts po;
        ember_plan_opts_default(&po);
        po.kv_cache = EMBER_KV_Q8_0;
        ember_err err;
        ember_model *m = ember_model_open(model, &po, &err);
        tap_ok(!m && strstr(err.msg, "multiple of 32") && strstr(err.msg, "48") && strstr(err.msg, "f16"),
               "head dim 48 with kv_cache q8_0 refused: %s", m ? "(opened)" : err.msg);
        ember_model_free(m);
        po.kv_cache = EMBER_KV_F16;
        m = ember_model_open(model, &po, &err);
        tap_ok(m != NULL, "head dim 48 with kv_cache f16 opens");
        ember_model_free(m);
        unlink(model);
    }
    synth_dir_close(&sd);

    tap_ok(!strcmp(ember_kv_type_name(EMBER_KV_Q8_0), "q8_0") && ember_kv_type_from_name("q4") < 0 &&
               ember_kv_type_from_name("f16") == EMBER_KV_F16 && !ember_kv_type_name(EMBER_KV_TYPES),
           "KV type names: f16, q8_0, nothing else");

    char buf[1024];
    if (!tap_shared("fixtures/golden", buf, sizeof buf)) {
        tap_skip("../shared/fixtures absent: llama-mini golden");
        tap_skip("../shared/fixtures absent: gemma3-mini golden");
        return tap_done();
    }
    /* llama-mini's logits have near-ties: 5 of its 75 rows flip (93.3%),
       each where the golden's top two are within 0.15; eager's f32
       weights flip 2 (test_golden's bound there is 90%) */
    golden_case("llama-mini-Q8_0", "llama", 0, 0.999, 0.90);
    golden_case("gemma3-mini-f16", "gemma3", 4096, 0.999, 0.95);
    golden_case("gemma3-mini-Q8_0", "gemma3", 4096, 0.998, 0.95);
    /* gemma4: shared KV, heads of 128 and 256; phi3: heads of 96; qwen3: Q/K norms (the
       query's q8_0 rounding: min cos 0.99920, 0.99981, 0.99979, top-1
       99.1%, 97.6%, 94.7% on the Zen 5 VM) */
    golden_case("gemma4-mini-f16", "gemma4", 0, 0.999, 0.95);
    golden_case("phi3-mini-f16", "phi3", 0, 0.999, 0.95);
    golden_case("qwen3-mini-f16", "qwen3", 0, 0.999, 0.90);
    return tap_done();
}
