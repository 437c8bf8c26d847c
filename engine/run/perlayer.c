/* Gemma 4's per-layer inputs (perlayer.h). */
#include "config.h"

#include <math.h>
#include <stdatomic.h>

#include "dtype.h"
#include "forward.h"
#include "matmul.h"
#include "perlayer.h"
#include "refnum.h"

/* gemma4's per-layer inputs for n tokens, s->pl[t][layer][n_pl]:
   (RMSNorm(per_layer_model_proj x0 / sqrt(n_embd)) * per_layer_proj_norm
    + per_layer_token_embd[tok] * sqrt(n_pl)) * (1 / sqrt(2)), per layer's
   chunk of n_pl, x0 being the scaled token embedding (s->x on entry). */
typedef struct {
    const int32_t *tok;
    atomic_int *bad;              /* a token whose row could not be read, + 1 */
} pl_args;

/* The per-layer inputs of tokens [t0, t1), each thread dequantizing rows
   into its own slot of s->pl_row. */
static void pl_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    const pl_args *a = ctx;
    const ember_model *m = s->m;
    const int np = m->n_pl, NL = m->info.n_layer, W = np * NL;
    const float in_scale = 1.0f / sqrtf((float)m->info.n_embd), emb_scale = sqrtf((float)np);
    const float out_scale = 1.0f / sqrtf(2.0f);
    const size_t rb = m->pl_embd.row_bytes;
    float *row = s->pl_row + (size_t)W * (size_t)ith;
    for (int t = t0; t < t1; t++) {
        float *p = s->pl + (size_t)t * W;
        if (ember_dequantize_row(m->pl_embd.dtype, m->pl_embd.data + (size_t)a->tok[t] * rb, row, W)) {
            atomic_store(a->bad, t + 1);
            return;
        }
        for (int i = 0; i < W; i++) p[i] *= in_scale;
        ember_fw_rmsnorm_rows(p, p, m->pl_proj_norm, np, 0, NL, m->rms_eps);
        for (int i = 0; i < W; i++) p[i] = (p[i] + row[i] * emb_scale) * out_scale;
    }
}

int ember_pl_inputs(ember_session *s, const int32_t *tok, int n, ember_err *err)
{
    const ember_model *m = s->m;
    ember_mm_act_dirty(s);
    ember_mm(s, &m->pl_model_proj, s->pl, s->x, n);
    ember_mm_act_dirty(s);
    atomic_int bad_tok = 0;
    pl_args a = {tok, &bad_tok};
    ember_fw_tokens(s, n, pl_tokens, &a);
    int bad = atomic_load(&bad_tok);
    if (bad) return ember_seterr(err, "per_layer_token_embd row %d cannot be read", tok[bad - 1]);
    return 0;
}

/* After layer l's FFN: x += post_norm(proj(gelu(inp_gate x) * input_l)),
   then x *= *scale when given. */
void ember_pl_block(ember_session *s, int l, int n, const float *scale)
{
    const ember_model *m = s->m;
    const ember_layer *L = &m->layers[l];
    ember_mm_act_dirty(s);
    ember_mm(s, &L->pl_gate, s->plg, s->x, n);
    const int np = m->n_pl;
    ember_fw_glu(s, s->plg, s->pl + (size_t)l * np, np, (size_t)np * m->info.n_layer, ember_ref_gelu_tanh_mul, n);
    ember_mm_act_dirty(s);
    ember_mm(s, &L->pl_proj, s->xn, s->plg, n);
    ember_fw_residual(s, n, L->pl_post_norm, scale);
}
