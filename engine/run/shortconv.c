/* The gated short convolution (shortconv.h).  For a pass of n tokens on
   the normed rows xn:
     B, C, x = in_proj xn (three rows of n_embd a token, in that order)
     bx = B * x
     y[t] = C[t] * sum_i w[i] bx[t - (l_cache - 1) + i]   (per channel)
     s->x += out_proj y
   the inputs before the pass from the layer's state (its last l_cache - 1
   rows of bx, recurrent.h), the taps summed oldest first as the
   reference's convolution does. */
#include "config.h"

#include <math.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>

#include "forward.h"
#include "matmul.h"
#include "recurrent.h"
#include "shortconv.h"
#include "conv1d.h"
#include "bind.h"
#include "plan.h"

typedef struct {
    const ember_shortconv *x;
    const float *st;            /* the layer's state: its last l_cache - 1 rows of bx, oldest first */
} sc_args;

/* bx of tokens [t0, t1) */
static void gate_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    (void)ctx, (void)ith;
    const int E = s->m->info.n_embd;
    for (int t = t0; t < t1; t++) {
        const float *bcx = s->sc_bcx + (size_t)t * 3 * E;
        float *bx = s->sc_bx + (size_t)t * E;
        for (int c = 0; c < E; c++) bx[c] = bcx[c] * bcx[2 * E + c];
    }
}

/* y of tokens [t0, t1): the convolution over bx, gated by C */
static void conv_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    (void)ith;
    const sc_args *a = ctx;
    const int E = s->m->info.n_embd, K = s->m->sc_lcache;
    const float *in[64];   /* hparams.c: l_cache <= 64 */
    for (int t = t0; t < t1; t++) {
        float *y = s->sc_y + (size_t)t * E;
        for (int i = 0; i < K; i++) {
            const int j = t - (K - 1) + i;   /* the input row this tap reads */
            in[i] = j >= 0 ? s->sc_bx + (size_t)j * E : a->st + (size_t)(K - 1 + j) * E;
        }
        ember_conv1d_row(y, in, a->x->conv, K, E);
        const float *C = s->sc_bcx + (size_t)t * 3 * E + E;
        for (int c = 0; c < E; c++) y[c] *= C[c];
    }
}

void ember_sc_block(ember_session *s, int l, int n, int skip)
{
    const ember_model *m = s->m;
    const ember_layer *L = &m->layers[l];
    const ember_shortconv *x = L->sc;
    const int E = m->info.n_embd;
    float *st = s->rec_state + x->state_off;
    ember_fw_norm_rows(s, s->xn, s->x, L->attn_norm, n);
    ember_mm_act_dirty(s);
    ember_mm(s, &x->in, s->sc_bcx, s->xn, n);
    ember_fw_tokens(s, n, gate_tokens, NULL);
    sc_args a = {x, st};
    ember_fw_tokens(s, n, conv_tokens, &a);
    ember_rec_conv_shift(st, s->sc_bx, n, m->sc_lcache - 1, E);
    ember_fw_block_out(s, &x->out, s->sc_y, E, n, skip, NULL);
}

/* ---- binding: the layer kind's tensors from the file ---- */

/* Layer l's short convolution (model.h, ember_shortconv) */
int ember_sc_bind(ember_model *m, ember_layer *L, int l, ember_err *err)
{
    const int64_t E = m->info.n_embd, K = m->sc_lcache;
    char nm[96];
    int rc = 0;
    ember_shortconv *x = calloc(1, sizeof *x);
    if (!(L->sc = x)) return ember_seterr(err, "out of memory");
    x->state_off = m->rec_floats;
    m->rec_floats += (size_t)(K - 1) * (size_t)E;
#define SC(fmt) (snprintf(nm, sizeof nm, "blk.%d.shortconv." fmt, l), nm)
    ember_bind_weight(m, &x->in, SC("in_proj.weight"), E, 3 * E, EMBER_PROJ_Q | EMBER_PROJ_K | EMBER_PROJ_V, err, &rc);
    if (!rc) ember_bind_weight(m, &x->out, SC("out_proj.weight"), E, E, EMBER_PROJ_O, err, &rc);
    if (!rc) x->conv = ember_load_taps(m, SC("conv.weight"), K, E, err, &rc);
#undef SC
    if (!rc) rc = ember_plan_weight(m, &x->in, err);
    if (!rc) rc = ember_plan_weight(m, &x->out, err);
    return rc;
}

void ember_sc_free(ember_shortconv *x)
{
    if (!x) return;
    free(x->in.f32);
    free(x->out.f32);
    free(x->conv);
    free(x);
}
