/* The Mamba-2 selective state-space layer (IBM Granite 4.0's hybrid
   models; model.h: ember_mamba2) and its recurrent state.

   For a pass of n tokens at layer l, on the normed rows xn:
     [z | xBC | dt] = W_in xn
     xBC = silu(causal conv over the last d_conv rows of xBC + conv bias)
     x, B, C = xBC's parts: n_head heads of head_dim, n_group groups of
       d_state each for B and C (head h reads group h / (n_head / n_group))
     per head h, token by token (the reference's ssm_scan; the sums in
     kernels/ssmscan.h's order):
       dt' = softplus(dt[h] + dt_bias[h]), dA = exp(dt' A[h])
       S[p][j] = S[p][j] dA + B[j] x[p] dt'      (p < head_dim, j < d_state)
       y[p] = sum_j S[p][j] C[j]
     y += x D[h];  y = silu(z) y;  y = RMSNorm(y per group) * ssm_norm
     x += W_out y
   The state replaces a KV cache and cannot be cut back to an earlier
   position (recurrent.c keeps copies of it). */
#include "config.h"

#include <math.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>

#include "mamba2.h"
#include "forward.h"
#include "matmul.h"
#include "recurrent.h"
#include "refnum.h"
#include "ssmscan.h"
#include "conv1d.h"
#include "bind.h"
#include "plan.h"

/* ---- the convolution ------------------------------------------------------ */

typedef struct {
    const ember_mamba2 *x;
    const float *cs;            /* the layer's conv state: its last d_conv - 1 input rows, oldest first */
} conv_args;

/* The convolution's input rows, xBC of ssm_in's rows, gathered in a
   block (the state keeps whole rows of it) */
static void gather_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    (void)ctx, (void)ith;
    const ember_m2_shape *d = &s->m->m2;
    for (int t = t0; t < t1; t++)
        memcpy(s->m2_xbc + (size_t)t * d->conv_dim, s->m2_in + (size_t)t * d->in_dim + d->d_inner,
               (size_t)d->conv_dim * sizeof(float));
}

/* c[t] = silu(sum_i w[i] in[t - d_conv + 1 + i] + b) per channel, the taps
   summed oldest first from 0 as the reference's convolution does, the
   inputs before the pass from the state */
static void conv_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    (void)ith;
    const conv_args *a = ctx;
    const ember_m2_shape *d = &s->m->m2;
    const int K = d->d_conv, C = d->conv_dim;
    const float *in[64];   /* hparams.c: d_conv <= 64 */
    for (int t = t0; t < t1; t++) {
        float *out = s->m2_conv + (size_t)t * C;
        for (int i = 0; i < K; i++) {
            const int src = t - (K - 1) + i;
            in[i] = src >= 0 ? s->m2_xbc + (size_t)src * C : a->cs + (size_t)(K - 1 + src) * C;
        }
        ember_conv1d_row(out, in, a->x->conv, K, C);
        if (a->x->conv_b) ember_fw_add_into(out, a->x->conv_b, C);
        ember_ref_silu(out, C);
    }
}

/* ---- the scan ------------------------------------------------------------- */

/* Per token and head: the step dt' = softplus(dt + dt_bias) (the
   reference's: past 20 as is) and the decay exp(dt' A) */
static void steps_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    (void)ith;
    const ember_mamba2 *x = ctx;
    const ember_m2_shape *d = &s->m->m2;
    const int H = d->n_head;
    for (int t = t0; t < t1; t++) {
        const float *dt = s->m2_in + (size_t)t * d->in_dim + d->d_inner + d->conv_dim;
        float *st = s->m2_dt + (size_t)t * H, *da = s->m2_da + (size_t)t * H;
        for (int h = 0; h < H; h++) {
            const float v = dt[h] + x->dt_b[h];
            st[h] = v > 20.0f ? v : log1pf(expf(v));
            da[h] = expf(st[h] * x->a[h]);
        }
    }
}

typedef struct {
    ember_session *s;
    float *S;                   /* the layer's heads' states, [n_head][head_dim][d_state] */
    int n;
} scan_job;

/* Heads [h0, h1) over the pass's tokens (kernels/ssmscan.h); head h reads
   group h / (n_head / n_group)'s B and C */
static void scan_run(void *ctx, int ith, int nth)
{
    const scan_job *j = ctx;
    ember_session *s = j->s;
    const ember_m2_shape *d = &s->m->m2;
    const int H = d->n_head, P = d->head_dim, N = d->d_state, G = d->n_group;
    const int h0 = H * ith / nth, h1 = H * (ith + 1) / nth;
    for (int h = h0; h < h1; h++) {
        const int g = h / (H / G);
        const ember_ssm_args a = {
            .S = j->S + (size_t)h * P * N, .P = P, .N = N, .n = j->n,
            .x = s->m2_conv + (size_t)h * P, .B = s->m2_conv + d->d_inner + (size_t)g * N,
            .C = s->m2_conv + d->d_inner + (size_t)(G + g) * N, .stride = (size_t)d->conv_dim,
            .dt = s->m2_dt + h, .dA = s->m2_da + h, .dt_stride = (size_t)H,
            .y = s->m2_y + (size_t)h * P, .y_stride = (size_t)d->d_inner};
        ember_ssm_scan(&a);
    }
}

/* y = RMSNorm(silu(z) (y + D x) per group) * ssm_norm */
static void out_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    (void)ith;
    const ember_mamba2 *x = ctx;
    const ember_m2_shape *d = &s->m->m2;
    const int gw = d->d_inner / d->n_group, P = d->head_dim;
    for (int t = t0; t < t1; t++) {
        float *z = s->m2_in + (size_t)t * d->in_dim, *y = s->m2_y + (size_t)t * d->d_inner;
        const float *xi = s->m2_conv + (size_t)t * d->conv_dim;
        for (int i = 0; i < d->d_inner; i++) y[i] += xi[i] * x->d[i / P];
        ember_ref_silu_mul(z, y, d->d_inner);
        if (!x->norm) {   /* no grouped norm (Falcon-H1 without one) */
            memcpy(y, z, (size_t)d->d_inner * sizeof *y);
            continue;
        }
        for (int g = 0; g < d->n_group; g++)
            ember_fw_rmsnorm_rows(y + (size_t)g * gw, z + (size_t)g * gw, x->norm + (size_t)g * gw, gw, 0, 1,
                                  s->m->rms_eps);
    }
}

/* ---- the block ------------------------------------------------------------ */

void ember_m2_block(ember_session *s, int l, int n, int skip, float *side)
{
    const ember_model *m = s->m;
    const ember_layer *L = &m->layers[l];
    const ember_mamba2 *x = L->m2;
    const ember_m2_shape *d = &m->m2;
    float *st = s->rec_state + x->state_off;
    ember_fw_norm_rows(s, s->xn, s->x, L->attn_norm, n);
    ember_mm_act_dirty(s);
    ember_mm(s, &x->in, s->m2_in, s->xn, n);
    ember_fw_tokens(s, n, gather_tokens, NULL);
    conv_args ca = {x, st};
    ember_fw_tokens(s, n, conv_tokens, &ca);
    ember_rec_conv_shift(st, s->m2_xbc, n, d->d_conv - 1, d->conv_dim);
    ember_fw_tokens(s, n, steps_tokens, x);
    scan_job sj = {s, st + (size_t)(d->d_conv - 1) * (size_t)d->conv_dim, n};
    ember_pool_run(s->pool, scan_run, &sj);
    ember_fw_tokens(s, n, out_tokens, x);
    ember_fw_block_out(s, &x->out, s->m2_y, d->d_inner, n, skip, side);
}

/* ---- binding: the layer kind's tensors from the file ---- */

/* Layer l's Mamba-2 tensors (model.h, ember_mamba2) */
int ember_m2_bind(ember_model *m, ember_layer *L, int l, ember_err *err)
{
    ember_m2_shape *d = &m->m2;
    const int64_t E = m->info.n_embd, H = d->n_head, K = d->d_conv, C = d->conv_dim;
    char nm[96];
    int rc = 0;
    ember_mamba2 *x = calloc(1, sizeof *x);
    if (!(L->m2 = x)) return ember_seterr(err, "out of memory");
    x->state_off = m->rec_floats;
    m->rec_floats += d->state_floats;
    d->n_layers++;
#define M2(fmt) (snprintf(nm, sizeof nm, "blk.%d." fmt, l), nm)
    ember_bind_weight(m, &x->in, M2("ssm_in.weight"), E, d->in_dim, EMBER_PROJ_Q | EMBER_PROJ_K | EMBER_PROJ_V, err, &rc);
    if (!rc) ember_bind_weight(m, &x->out, M2("ssm_out.weight"), d->d_inner, E, EMBER_PROJ_O, err, &rc);
    if (!rc) x->conv = ember_load_taps(m, M2("ssm_conv1d.weight"), K, C, err, &rc);
    if (!rc) x->conv_b = ember_load_vec(m, M2("ssm_conv1d.bias"), C, false, err, &rc);
    if (!rc) x->dt_b = ember_load_vec(m, M2("ssm_dt.bias"), H, true, err, &rc);
    if (!rc) x->a = ember_load_f32(m, M2("ssm_a"), 1, H, true, err, &rc);
    if (!rc) x->d = ember_load_f32(m, M2("ssm_d"), 1, H, true, err, &rc);
    /* Falcon-H1's files may have none (its mamba_rms_norm off) */
    if (!rc)
        x->norm = ember_load_f32(m, M2("ssm_norm.weight"), d->d_inner / d->n_group, d->n_group,
                                 !(m->arch->flags & ARCH_PARALLEL_SSM), err, &rc);
#undef M2
    if (!rc) rc = ember_plan_weight(m, &x->in, err);
    if (!rc) rc = ember_plan_weight(m, &x->out, err);
    return rc;
}

void ember_m2_free(ember_mamba2 *x)
{
    if (!x) return;
    free(x->in.f32);
    free(x->out.f32);
    free(x->conv);
    free(x->conv_b);
    free(x->dt_b);
    free(x->a);
    free(x->d);
    free(x->norm);
    free(x);
}
