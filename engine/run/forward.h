/* The steps of a layer (forward.c) that blocks living in their own file
   (deltanet.c, moe.c, perlayer.c) run too: norms, the residual add, biases,
   the gated activation, per-token work split over the pool.  The matrix
   products are matmul.h's. */
#ifndef EMBER_FORWARD_H
#define EMBER_FORWARD_H

#include "session.h"

/* out = the layer's norm (RMSNorm, or LayerNorm) of n rows of n_embd */
void ember_fw_norm_rows(ember_session *s, float *out, const float *x, const float *wt, int n);
/* x = x / rms(x) * wt over rows [r0, r1) of width values each (wt NULL: no weight) */
void ember_fw_rmsnorm_rows(float *out, const float *x, const float *wt, int width, int r0, int r1, float eps);
/* s->x += post_norm(s->xn) over n rows (post NULL: no norm), then
   s->x *= *scale when scale is given */
void ember_fw_residual(ember_session *s, int n, const float *post, const float *scale);

/* y += b over n values: a bias after a product, as the reference adds it
   (its own rounding, before anything else touches the row) */
static inline void ember_fw_add_into(float *y, const float *b, int n)
{
    for (int i = 0; i < n; i++) y[i] += b[i];
}
/* ember_fw_add_into for n rows of y (stride apart), w values each */
void ember_fw_add_bias(ember_session *s, float *y, const float *b, int w, size_t stride, int n);

/* g = act(g) * u over n values (u unused by an ungated activation) */
typedef void (*ember_glu_fn)(float *g, const float *u, int n);
/* the architecture's FFN activation (arch.h, ember_ffn_act) */
ember_glu_fn ember_fw_ffn_act(const ember_model *m);
/* fn over n tokens: g's rows width apart, u's u_stride apart */
void ember_fw_glu(ember_session *s, float *g, const float *u, int width, size_t u_stride, ember_glu_fn fn, int n);

/* The end of a block whose output projection reads rows y of width w
   (the recurrent layers: deltanet.c, shortconv.c, mamba2.c): y's and the
   stream's rows from skip on moved to row 0 (the last layer's unread
   rows), then s->x += out y over the rows left; with side, out y goes
   there instead and the stream is not touched (Falcon-H1: s->side, which
   the attention beside adds to its own output before the residual add) */
void ember_fw_block_out(ember_session *s, const ember_weight *out, float *y, int w, int n, int skip, float *side);

/* The attention steps of a layer whose projections are its own (mla.c):
   the rope tables of a setting for n tokens at pos0 (cos and sin
   [token][n_rot / 2]); K and V rows of KV head h at pos into layer l's
   cache; s->q's rows (HQ wide) and the stream's from skip on moved to row
   0 (the last layer's unread rows); the attention of n queries in s->q
   (n_head x head_dim a token) over the cache into s->att, the first skip
   rows dropped before it (ember_fw_drop_rows): the rows left (0: none). */
const struct ember_rope_table *ember_fw_rope_table(ember_session *s, const ember_rope_cfg *rc, int pos0, int n);
void ember_fw_kv_write(ember_session *s, int l, int h, int pos, const float *k, const float *v);
void ember_fw_drop_rows(ember_session *s, int HQ, int n, int skip);
int ember_fw_attend(ember_session *s, int l, int n, int pos0, int skip, int HQ);

/* The attention block of layer l over n tokens at pos0: s->x +=
   post_norm(attention(norm(s->x))), only rows [skip, n) going on; the FFN
   block: s->x += post_norm(ffn(norm(s->x))), then s->x *= *scale when
   given (the architecture's plain layer, forward.c) */
void ember_fw_attention(ember_session *s, int l, int n, int pos0, int skip);
void ember_fw_ffn(ember_session *s, int l, int n, const float *scale);

/* Work on tokens [t0, t1) of a pass, on pool thread ith */
typedef void (*ember_tok_fn)(ember_session *s, const void *ctx, int t0, int t1, int ith);
/* fn over n tokens, a contiguous run of them per pool thread */
void ember_fw_tokens(ember_session *s, int n, ember_tok_fn fn, const void *ctx);

#endif
