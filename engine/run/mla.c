/* Multi-head latent attention (mla.h), in the absorbed form: the cache
   keeps one row a token, [rope(k_pe), norm(c)] (rope + kv_lora values),
   which serves as K and as V for every head.  A head's query is
   [rope(q_pe), k_b q_nope]: its score against a row is then
   q_pe . k_pe + q_nope . (k_b^T c), the score of the model's own keys
   k_nope = k_b^T c, without forming them.  The head's output over the rows'
   latent part goes through v_b, the model's own value projection of the
   same weighted sum.  Attention itself is forward.c's (one KV head of
   n_head queries), at the model's scale (hparams.c: DeepSeek's YaRN
   mscale over sqrt(nope + rope)). */
#include "config.h"

#include <string.h>

#include "forward.h"
#include "matmul.h"
#include "mla.h"
#include "refnum.h"

/* y_h = W_h x_h for the n_head heads, x head-major [head][token][in], y
   [head][token][out].  A prompt runs a product per head; one token's
   heads are quantized together as n_head rows and run in jobs of up to
   EMBER_MM_ITEMS products. */
static void heads_mm(ember_session *s, const ember_weight *w, float *y, const float *x, int nh, int nt)
{
    const size_t in = (size_t)w[0].in, out = (size_t)w[0].out;
    ember_mm_act_dirty(s);   /* x was rewritten since its last product */
    if (nt > 1) {
        for (int h = 0; h < nh; h++) ember_mm(s, &w[h], y + (size_t)h * nt * out, x + (size_t)h * nt * in, nt);
        return;
    }
    size_t stride;
    const uint8_t *xq = ember_mm_act(s, w[0].one.kern, w[0].in, x, nh, &stride);
    for (int h0 = 0; h0 < nh; h0 += EMBER_MM_ITEMS) {
        ember_mm_job j;
        ember_mm_start(&j, 1);
        for (int h = h0; h < nh && h < h0 + EMBER_MM_ITEMS; h++)
            ember_mm_add(&j, &w[h], y + (size_t)h * out, xq + (size_t)h * stride, stride);
        ember_mm_finish(s, &j);
    }
}

typedef struct {
    int l, pos0, n;
    const struct ember_rope_table *rt;
} mla_args;

/* Tokens [t0, t1) after the projections: the latent row normed and the
   rope part rotated, into the cache as K and V; each head's rope part
   rotated into its query's first values; the no-rope parts gathered head
   by head for k_b (s->mla_hx). */
static void rows_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    (void)ith;
    const mla_args *a = ctx;
    const ember_model *m = s->m;
    const ember_layer *L = &m->layers[a->l];
    const ember_mla_shape *d = &m->mla;
    const int nh = m->info.n_head, hd = L->head_dim, QW = d->nope + d->rope, h2 = d->rope / 2;
    const int neox = m->arch->rope != ROPE_NORM;
    float krow[hd];
    for (int t = t0; t < t1; t++) {
        const float *cs = a->rt->cs + (size_t)t * h2, *sn = a->rt->sn + (size_t)t * h2;
        const float *kv = s->mla_kv + (size_t)t * (size_t)(d->kv_lora + d->rope);
        memcpy(krow, kv + d->kv_lora, (size_t)d->rope * sizeof *krow);
        ember_fw_rmsnorm_rows(krow + d->rope, kv, L->mla->kv_a_norm, d->kv_lora, 0, 1, m->rms_eps);
        ember_ref_rope(krow, 1, hd, d->rope, cs, sn, neox);
        ember_fw_kv_write(s, a->l, 0, a->pos0 + t, krow, krow);
        float *q = s->q + (size_t)t * nh * hd;
        const float *qs = s->mla_q + (size_t)t * nh * QW;
        for (int h = 0; h < nh; h++) {
            memcpy(q + (size_t)h * hd, qs + (size_t)h * QW + d->nope, (size_t)d->rope * sizeof *q);
            memcpy(s->mla_hx + ((size_t)h * a->n + t) * d->nope, qs + (size_t)h * QW, (size_t)d->nope * sizeof *q);
        }
        ember_ref_rope(q, nh, hd, d->rope, cs, sn, neox);
    }
}

/* Rows of width values a head between the head-major buffers of the
   per-head products ([head][token][width], n tokens) and token-major rows
   ([token][head] of head_stride values, the head's part at off): into the
   heads (to_heads) or out of them */
typedef struct {
    float *heads, *rows;
    int n, width, head_stride, off;
    bool to_heads;
} heads_copy;

static void heads_copy_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    (void)ith;
    const heads_copy *c = ctx;
    const int nh = s->m->info.n_head;
    for (int t = t0; t < t1; t++)
        for (int h = 0; h < nh; h++) {
            float *hp = c->heads + ((size_t)h * c->n + t) * c->width;
            float *rp = c->rows + ((size_t)t * nh + h) * c->head_stride + c->off;
            memcpy(c->to_heads ? hp : rp, c->to_heads ? rp : hp, (size_t)c->width * sizeof(float));
        }
}

static void copy_heads(ember_session *s, int n, float *heads, float *rows, int width, int head_stride, int off,
                       bool to_heads)
{
    heads_copy c = {heads, rows, n, width, head_stride, off, to_heads};
    ember_fw_tokens(s, n, heads_copy_tokens, &c);
}

void ember_mla_block(ember_session *s, int l, int n, int pos0, int skip)
{
    const ember_model *m = s->m;
    const ember_layer *L = &m->layers[l];
    const ember_mla *x = L->mla;
    const ember_mla_shape *d = &m->mla;
    const int nh = m->info.n_head, HQ = nh * L->head_dim;
    ember_fw_norm_rows(s, s->xn, s->x, L->attn_norm, n);
    ember_mm_act_dirty(s);
    const ember_weight *ws[2] = {x->q_a.t ? &x->q_a : &x->q, &x->kv_a};
    float *ys[2] = {x->q_a.t ? s->mla_qa : s->mla_q, s->mla_kv};
    ember_mm_n(s, ws, ys, 2, s->xn, n);
    if (x->q_a.t) {   /* the low-rank query: normed, then up */
        ember_fw_rmsnorm_rows(s->mla_qa, s->mla_qa, x->q_a_norm, d->q_lora, 0, n, m->rms_eps);
        ember_mm_act_dirty(s);
        ember_mm(s, &x->q_b, s->mla_q, s->mla_qa, n);
    }
    mla_args a = {l, pos0, n, ember_fw_rope_table(s, &L->rope, pos0, n)};
    ember_fw_tokens(s, n, rows_tokens, &a);
    heads_mm(s, x->k_b, s->mla_hy, s->mla_hx, nh, n);
    /* the absorbed queries after each head's rope part */
    copy_heads(s, n, s->mla_hy, s->q, d->kv_lora, L->head_dim, d->rope, false);
    if ((n = ember_fw_attend(s, l, n, pos0, skip, HQ)) == 0) return;
    /* the heads' outputs over the rows' latent part, through v_b, as
       attn_output's input rows */
    copy_heads(s, n, s->mla_hx, s->att, d->kv_lora, L->head_dim, d->rope, true);
    heads_mm(s, x->v_b, s->mla_hy, s->mla_hx, nh, n);
    copy_heads(s, n, s->mla_hy, s->mla_o, d->v, d->v, 0, false);
    ember_mm_act_dirty(s);
    ember_mm(s, &L->wo, s->xn, s->mla_o, n);
    ember_fw_residual(s, n, L->post_attn_norm, NULL);
}
