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
#include <stdio.h>
#include <stdlib.h>

#include "forward.h"
#include "matmul.h"
#include "mla.h"
#include "refnum.h"
#include "bind.h"
#include "dtype.h"
#include "plan.h"

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

/* ---- binding: the layer kind's tensors from the file ---- */

/* A latent attention layer's matrices other than the per-head ones
   (bound or not) into ws: how many */
int ember_mla_weights(ember_mla *x, ember_weight *ws[MLA_WEIGHTS])
{
    ember_weight *all[MLA_WEIGHTS] = {&x->q, &x->q_a, &x->q_b, &x->kv_a};
    memcpy(ws, all, sizeof all);
    return MLA_WEIGHTS;
}

/* A latent attention's per-head slabs: one record of the plan, every
   slab read by every token */
static int bind_heads(ember_model *m, ember_weight **out, const char *name, int64_t in, int64_t rows, int n, int proj,
                      ember_err *err)
{
    int rc = ember_bind_slabs(m, out, name, in, rows, n, proj, err);
    return rc ? rc : ember_plan_heads(m, *out, n, err);
}

/* attn_kv_b [kv_lora, n_head (nope + v)], each head's K rows then its V
   rows: the V rows are views of the file's (kv_lora wide, as a product
   reads them); the K rows run the other way (a query's nope values
   weigh the rows), so each head's are transposed once into f32 rows of
   nope, k_bt, the reference deriving its k_b from them as well. */
static int bind_kv_b(ember_model *m, ember_mla *x, const char *name, ember_err *err)
{
    const ember_mla_shape *d = &m->mla;
    const int nh = m->info.n_head, W = d->nope + d->v;
    int rc = 0;
    const gguf_tensor *t = ember_bind_tensor(m, name, d->kv_lora, (int64_t)nh * W, true, err, &rc);
    if (!t) return rc;
    const size_t rb = ember_row_bytes(t->type, d->kv_lora);
    const ember_kernel *k = ember_kernel_find(EMBER_F32, ember_cpu_isa());
    x->v_b = calloc((size_t)nh, sizeof *x->v_b);
    x->k_b = calloc((size_t)nh, sizeof *x->k_b);
    x->k_bt = malloc((size_t)nh * (size_t)d->kv_lora * (size_t)d->nope * sizeof *x->k_bt);
    float *row = malloc((size_t)d->kv_lora * sizeof *row);
    if (!x->v_b || !x->k_b || !x->k_bt || !row || !k) {
        free(row);
        return ember_seterr(err, k ? "out of memory" : "no F32 kernel available");
    }
    for (int h = 0; h < nh; h++) {
        x->v_b[h] = (ember_weight){.t = t, .dtype = t->type, .in = d->kv_lora, .out = d->v,
                                   .data = t->data + ((size_t)h * W + (size_t)d->nope) * rb, .row_bytes = rb,
                                   .proj = EMBER_PROJ_V};
        float *kt = x->k_bt + (size_t)h * d->kv_lora * d->nope;
        for (int i = 0; i < d->nope && !rc; i++) {
            if (ember_dequantize_row(t->type, t->data + ((size_t)h * W + (size_t)i) * rb, row, d->kv_lora))
                rc = ember_seterr(err, "tensor '%s': cannot read dtype %s", name, ember_dtype_name(t->type));
            for (int j = 0; j < d->kv_lora; j++) kt[(size_t)j * d->nope + i] = row[j];
        }
        x->k_b[h] = (ember_weight){.t = t, .dtype = EMBER_F32, .in = d->nope, .out = d->kv_lora,
                                   .rep = EMBER_REP_EAGER_F32, .f32 = kt, .kern = k,
                                   .one = {k, kt, (size_t)d->nope * sizeof(float)},
                                   .many = {k, kt, (size_t)d->nope * sizeof(float)}};
    }
    free(row);
    if (!rc) rc = ember_plan_heads(m, x->v_b, nh, err);
    const uint64_t kb = (uint64_t)nh * (uint64_t)d->kv_lora * (uint64_t)d->nope * 4;
    if (!rc && ember_plan_add(m, t, EMBER_REP_EAGER_F32, k->name, ember_isa_name(k->isa), kb,
                              "its K rows transposed per head into f32 (the queries' absorption)") < 0)
        rc = ember_seterr(err, "out of memory");
    return rc;
}

/* Layer l's latent attention tensors (model.h, ember_mla) */
int ember_mla_bind(ember_model *m, ember_layer *L, int l, ember_err *err)
{
    const ember_mla_shape *d = &m->mla;
    const int64_t E = m->info.n_embd, nh = m->info.n_head, QW = nh * (d->nope + d->rope);
    char nm[96];
    int rc = 0;
    ember_mla *x = calloc(1, sizeof *x);
    if (!(L->mla = x)) return ember_seterr(err, "out of memory");
#define MN(fmt) (snprintf(nm, sizeof nm, "blk.%d." fmt, l), nm)
    if (d->q_lora) {
        ember_bind_weight(m, &x->q_a, MN("attn_q_a.weight"), E, d->q_lora, EMBER_PROJ_Q, err, &rc);
        if (!rc) x->q_a_norm = ember_load_vec(m, MN("attn_q_a_norm.weight"), d->q_lora, true, err, &rc);
        if (!rc) ember_bind_weight(m, &x->q_b, MN("attn_q_b.weight"), d->q_lora, QW, EMBER_PROJ_Q, err, &rc);
    } else {
        ember_bind_weight(m, &x->q, MN("attn_q.weight"), E, QW, EMBER_PROJ_Q, err, &rc);
    }
    if (!rc) ember_bind_weight(m, &x->kv_a, MN("attn_kv_a_mqa.weight"), E, d->kv_lora + d->rope, EMBER_PROJ_K, err, &rc);
    if (!rc) x->kv_a_norm = ember_load_vec(m, MN("attn_kv_a_norm.weight"), d->kv_lora, true, err, &rc);
    if (rc) return rc;
    if (gguf_find_tensor(m->f, MN("attn_kv_b.weight"))) {
        rc = bind_kv_b(m, x, nm, err);
    } else {
        rc = bind_heads(m, &x->k_b, MN("attn_k_b.weight"), d->nope, d->kv_lora, (int)nh, EMBER_PROJ_K, err);
        if (!rc) rc = bind_heads(m, &x->v_b, MN("attn_v_b.weight"), d->kv_lora, d->v, (int)nh, EMBER_PROJ_V, err);
    }
#undef MN
    ember_weight *ws[MLA_WEIGHTS];
    for (int i = 0, nw = ember_mla_weights(x, ws); i < nw && !rc; i++)
        if (ws[i]->t) rc = ember_plan_weight(m, ws[i], err);
    return rc;
}

void ember_mla_free(ember_mla *x, int nh)
{
    if (!x) return;
    ember_weight *ws[MLA_WEIGHTS];
    for (int i = 0, nw = ember_mla_weights(x, ws); i < nw; i++) free(ws[i]->f32);
    for (int h = 0; h < nh; h++) {
        if (x->v_b) free(x->v_b[h].f32);
        if (x->k_b && !x->k_bt) free(x->k_b[h].f32);   /* k_bt's rows are one block */
    }
    free(x->k_bt);
    free(x->k_b);
    free(x->v_b);
    free(x->q_a_norm);
    free(x->kv_a_norm);
    free(x);
}
