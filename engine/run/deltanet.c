/* The gated delta-net layer (Qwen3.5's linear attention, model.h:
   ember_deltanet) and its recurrent state.

   For a pass of n tokens at layer l, on the normed rows xn:
     qkv = W_qkv xn, z = W_z xn, b = W_beta xn, a = W_alpha xn
     c = silu(causal conv over the last d_conv rows of qkv, per channel)
     q, k = c's Q and K parts, each head L2-normalised; v = c's V part
     per V head h (reading Q/K head h % n_k; h / ratio with Qwen3-Next's
     fused ssm_ba), token by token:
       decay = exp(min(softplus(a + dt_bias) * A, 50)), beta = sigmoid(b)
       u = beta (v - decay S^T k)           (the delta rule's correction)
       o = decay S^T q / sqrt(d) + u (k . q) / sqrt(d)
       S = clamp(decay S + k u^T, +-1e6)
     o = RMSNorm(o per head) * ssm_norm * silu(z);  x += W_out o
   in the reference's float order where it has one (its fused delta-net
   operator: the two products of S in one sweep over its columns, then the
   update; kernels/deltarule.c).  S is a head's d x d matrix, kept as d
   columns (one per key dim) of d values (one per value dim).

   The state replaces a KV cache and cannot be cut back to an earlier
   position (recurrent.c keeps copies of it). */
#include "config.h"

#include <math.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>

#include "deltanet.h"
#include "deltarule.h"
#include "forward.h"
#include "matmul.h"
#include "recurrent.h"
#include "refnum.h"
#include "bind.h"
#include "plan.h"

static float *layer_state(const ember_session *s, const ember_deltanet *x)
{
    return s->rec_state + x->state_off;
}

/* ---- the convolution ------------------------------------------------------ */

typedef struct {
    const ember_deltanet *x;
    const float *cs;            /* the layer's conv state: its last d_conv - 1 input rows, oldest first */
} conv_args;

/* c[t] = silu(sum_i w[i] in[t - d_conv + 1 + i]) per channel, the inputs
   before the pass from the state; then each K and Q head L2-normalised
   (x / max(|x|, eps), the sum of squares in double, as the reference) */
static void conv_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    (void)ith;
    const conv_args *a = ctx;
    const ember_dn_shape *d = &s->m->dn;
    const int K = d->d_conv, C = d->conv_dim;
    const float eps = s->m->rms_eps;
    for (int t = t0; t < t1; t++) {
        float *out = s->dn_conv + (size_t)t * C;
        for (int c = 0; c < C; c++) out[c] = 0.0f;
        for (int i = 0; i < K; i++) {
            const int src = t - (K - 1) + i;
            const float *in = src >= 0 ? s->dn_qkv + (size_t)src * C : a->cs + (size_t)(K - 1 + src) * C;
            const float *w = a->x->conv + (size_t)i * C;
            for (int c = 0; c < C; c++) out[c] += in[c] * w[c];
        }
        ember_ref_silu(out, C);
        for (int h = 0; h < 2 * d->n_k; h++) {
            float *v = out + (size_t)h * d->hd;
            double ss = 0;
            for (int i = 0; i < d->hd; i++) ss += (double)(v[i] * v[i]);
            const float sc = 1.0f / fmaxf(sqrtf((float)ss), eps);
            for (int i = 0; i < d->hd; i++) v[i] *= sc;
        }
    }
}

/* ---- the recurrence ------------------------------------------------------- */

typedef struct {
    ember_session *s;
    const ember_deltanet *x;
    float *S;                   /* the layer's heads' matrices */
    int n;
} rec_job;

/* V heads [h0, h1) over the pass's tokens, in order: each head's matrix
   stays in this thread's cache for the whole pass (kernels: deltarule.h) */
static void rec_run(void *ctx, int ith, int nth)
{
    const rec_job *j = ctx;
    ember_session *s = j->s;
    const ember_dn_shape *d = &s->m->dn;
    const int D = d->hd, NV = d->n_v;
    const int h0 = NV * ith / nth, h1 = NV * (ith + 1) / nth;
    for (int h = h0; h < h1; h++) {
        const int kh = d->fused_ba ? h / (NV / d->n_k) : h % d->n_k;
        const ember_delta_args a = {
            .S = j->S + (size_t)h * D * D, .d = D, .n = j->n,
            .q = s->dn_conv + (size_t)kh * D, .k = s->dn_conv + d->key_dim + (size_t)kh * D,
            .v = s->dn_conv + 2 * (size_t)d->key_dim + (size_t)h * D, .qkv_stride = (size_t)d->conv_dim,
            .b = s->dn_b + h, .g = s->dn_a + h, .bg_stride = (size_t)NV,
            .o = s->dn_o + (size_t)h * D, .o_stride = (size_t)d->value_dim};
        ember_delta_rule(&a);
    }
}

/* ---- the block ------------------------------------------------------------ */

/* Qwen3-Next's fused products taken apart: ssm_in holds, per Q/K head g,
   its q and k rows then the v and z rows of its ratio V heads; ssm_ba,
   per g, those heads' b then a.  Into the layout of the separate
   products: Q, K, V rows whole, z, b and a whole. */
static void unfuse_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    (void)ith;
    const ember_deltanet *x = ctx;
    const ember_dn_shape *d = &s->m->dn;
    const int D = d->hd, r = d->n_v / d->n_k, C = d->conv_dim;
    const size_t hv = (size_t)r * D * sizeof(float), hk = (size_t)D * sizeof(float);
    for (int t = t0; t < t1; t++) {
        if (x->in.t) {
            const float *src = s->dn_in + (size_t)t * (C + d->value_dim);
            float *qkv = s->dn_qkv + (size_t)t * C, *z = s->dn_z + (size_t)t * d->value_dim;
            for (int g = 0; g < d->n_k; g++, src += 2 * D + 2 * r * D) {
                memcpy(qkv + (size_t)g * D, src, hk);
                memcpy(qkv + d->key_dim + (size_t)g * D, src + D, hk);
                memcpy(qkv + 2 * (size_t)d->key_dim + (size_t)g * r * D, src + 2 * D, hv);
                memcpy(z + (size_t)g * r * D, src + 2 * D + r * D, hv);
            }
        }
        if (x->ba.t) {
            const float *src = s->dn_ba + (size_t)t * 2 * d->n_v;
            for (int g = 0; g < d->n_k; g++, src += 2 * r) {
                memcpy(s->dn_b + (size_t)t * d->n_v + (size_t)g * r, src, (size_t)r * sizeof(float));
                memcpy(s->dn_a + (size_t)t * d->n_v + (size_t)g * r, src + r, (size_t)r * sizeof(float));
            }
        }
    }
}

/* Per token: a -> the decay's exponent softplus(a + dt_bias) * A (the
   reference's softplus: x past 20 as is); after the recurrence,
   o = RMSNorm(o) * ssm_norm * silu(z) per head. */
static void gates_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    (void)ith;
    const ember_deltanet *x = ctx;
    const int NV = s->m->dn.n_v;
    for (int t = t0; t < t1; t++) {
        float *g = s->dn_a + (size_t)t * NV;
        for (int h = 0; h < NV; h++) {
            const float y = g[h] + x->dt_bias[h];
            g[h] = (y > 20.0f ? y : logf(1.0f + expf(y))) * x->a[h];
        }
    }
}

static void out_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    (void)ith;
    const ember_deltanet *x = ctx;
    const ember_dn_shape *d = &s->m->dn;
    for (int t = t0; t < t1; t++) {
        float *o = s->dn_o + (size_t)t * d->value_dim, *z = s->dn_z + (size_t)t * d->value_dim;
        ember_fw_rmsnorm_rows(o, o, x->norm, d->hd, 0, d->n_v, s->m->rms_eps);
        ember_ref_silu(z, d->value_dim);
        for (int i = 0; i < d->value_dim; i++) o[i] = z[i] * o[i];
    }
}

void ember_dn_block(ember_session *s, int l, int n, int skip)
{
    const ember_model *m = s->m;
    const ember_layer *L = &m->layers[l];
    const ember_deltanet *x = L->dn;
    const ember_dn_shape *d = &m->dn;
    float *st = layer_state(s, x);
    ember_fw_norm_rows(s, s->xn, s->x, L->attn_norm, n);
    ember_mm_act_dirty(s);
    const ember_weight *ws[4];
    float *ys[4];
    int nw = 0;
    if (x->in.t) ws[nw] = &x->in, ys[nw++] = s->dn_in;
    else ws[nw] = &x->qkv, ys[nw++] = s->dn_qkv, ws[nw] = &x->z, ys[nw++] = s->dn_z;
    if (x->ba.t) ws[nw] = &x->ba, ys[nw++] = s->dn_ba;
    else ws[nw] = &x->beta, ys[nw++] = s->dn_b, ws[nw] = &x->alpha, ys[nw++] = s->dn_a;
    ember_mm_n(s, ws, ys, nw, s->xn, n);
    if (x->in.t || x->ba.t) ember_fw_tokens(s, n, unfuse_tokens, x);
    ember_fw_tokens(s, n, gates_tokens, x);
    conv_args ca = {x, st};
    ember_fw_tokens(s, n, conv_tokens, &ca);
    ember_rec_conv_shift(st, s->dn_qkv, n, d->d_conv - 1, d->conv_dim);
    rec_job rj = {s, x, st + (size_t)(d->d_conv - 1) * (size_t)d->conv_dim, n};
    ember_pool_run(s->pool, rec_run, &rj);
    ember_fw_tokens(s, n, out_tokens, x);
    ember_fw_block_out(s, &x->out, s->dn_o, d->value_dim, n, skip, NULL);
}

/* ---- binding: the layer kind's tensors from the file ---- */

/* A delta-net layer's matrices (bound or not) into ws: how many */
int ember_dn_weights(ember_deltanet *x, ember_weight *ws[DN_WEIGHTS])
{
    ember_weight *all[DN_WEIGHTS] = {&x->qkv, &x->z, &x->beta, &x->alpha, &x->out, &x->in, &x->ba};
    memcpy(ws, all, sizeof all);
    return DN_WEIGHTS;
}

/* Layer l's delta-net tensors (model.h, ember_deltanet) */
int ember_dn_bind(ember_model *m, ember_layer *L, int l, ember_err *err)
{
    ember_dn_shape *d = &m->dn;
    const int64_t E = m->info.n_embd;
    char nm[96];
    int rc = 0;
    ember_deltanet *x = calloc(1, sizeof *x);
    if (!(L->dn = x)) return ember_seterr(err, "out of memory");
    x->state_off = m->rec_floats;
    m->rec_floats += d->state_floats;
    const bool first = d->n_layers++ == 0;
#define DN(fmt) (snprintf(nm, sizeof nm, "blk.%d." fmt, l), nm)
    /* the output gate z is as wide as V: packed with the V projections */
    if (gguf_find_tensor(m->f, DN("ssm_in.weight"))) {
        ember_bind_weight(m, &x->in, nm, E, d->conv_dim + d->value_dim, EMBER_PROJ_Q | EMBER_PROJ_K | EMBER_PROJ_V, err, &rc);
        d->fused_in = true;
    } else {
        ember_bind_weight(m, &x->qkv, DN("attn_qkv.weight"), E, d->conv_dim, EMBER_PROJ_Q | EMBER_PROJ_K | EMBER_PROJ_V, err, &rc);
        if (!rc) ember_bind_weight(m, &x->z, DN("attn_gate.weight"), E, d->value_dim, EMBER_PROJ_V, err, &rc);
    }
    /* beta and alpha fused: the V heads in Q/K head order, h / ratio (the
       reference's tiling follows the file's form, one for every layer) */
    const bool fused_ba = gguf_find_tensor(m->f, DN("ssm_ba.weight")) != NULL;
    if (first) d->fused_ba = fused_ba;
    else if (d->fused_ba != fused_ba) rc = ember_seterr(err, "layer %d: ssm_ba in some delta-net layers and not in others", l);
    if (!rc && fused_ba) {
        ember_bind_weight(m, &x->ba, DN("ssm_ba.weight"), E, 2 * (int64_t)d->n_v, 0, err, &rc);
    } else if (!rc) {
        ember_bind_weight(m, &x->beta, DN("ssm_beta.weight"), E, d->n_v, 0, err, &rc);
        if (!rc) ember_bind_weight(m, &x->alpha, DN("ssm_alpha.weight"), E, d->n_v, 0, err, &rc);
    }
    if (!rc) ember_bind_weight(m, &x->out, DN("ssm_out.weight"), d->value_dim, E, EMBER_PROJ_O, err, &rc);
    if (!rc) x->conv = ember_load_taps(m, DN("ssm_conv1d.weight"), d->d_conv, d->conv_dim, err, &rc);
    if (!rc) x->dt_bias = ember_load_vec(m, DN("ssm_dt.bias"), d->n_v, true, err, &rc);
    if (!rc) x->a = ember_load_vec(m, DN("ssm_a"), d->n_v, true, err, &rc);
    if (!rc) x->norm = ember_load_vec(m, DN("ssm_norm.weight"), d->hd, true, err, &rc);
#undef DN
    ember_weight *ws[DN_WEIGHTS];
    for (int i = 0, nw = ember_dn_weights(x, ws); i < nw && !rc; i++)
        if (ws[i]->t) rc = ember_plan_weight(m, ws[i], err);
    return rc;
}

void ember_dn_free(ember_deltanet *x)
{
    if (!x) return;
    ember_weight *ws[DN_WEIGHTS];
    for (int i = 0, nw = ember_dn_weights(x, ws); i < nw; i++) free(ws[i]->f32);
    free(x->conv);
    free(x->dt_bias);
    free(x->a);
    free(x->norm);
    free(x);
}
