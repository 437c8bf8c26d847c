/* The steps of a layer (forward.c) that blocks living in their own file
   (deltanet.c) run too: matrix products on the pool, norms, the residual
   add, per-token work split over the pool. */
#ifndef EMBER_FORWARD_H
#define EMBER_FORWARD_H

#include "session.h"

/* y = W x for nt rows of x (w->in wide) into nt rows of y (w->out wide) */
void ember_fw_matmul(ember_session *s, const ember_weight *w, float *y, const float *x, int nt);
/* n products on the same input x, run as one job (its quantized rows made once) */
void ember_fw_matmul_n(ember_session *s, const ember_weight **ws, float **ys, int n, const float *x, int nt);
/* The quantized activations cached for the next product are stale: a
   buffer a product reads was rewritten in place. */
void ember_fw_act_dirty(ember_session *s);
/* out = the layer's norm (RMSNorm, or LayerNorm) of n rows of n_embd */
void ember_fw_norm_rows(ember_session *s, float *out, const float *x, const float *wt, int n);
/* x = x / rms(x) * wt over rows [r0, r1) of width values each (wt NULL: no weight) */
void ember_fw_rmsnorm_rows(float *out, const float *x, const float *wt, int width, int r0, int r1, float eps);
/* s->x += s->xn over n rows */
void ember_fw_residual(ember_session *s, int n);

/* Work on tokens [t0, t1) of a pass, on pool thread ith */
typedef void (*ember_tok_fn)(ember_session *s, const void *ctx, int t0, int t1, int ith);
/* fn over n tokens, a contiguous run of them per pool thread */
void ember_fw_tokens(ember_session *s, int n, ember_tok_fn fn, const void *ctx);

#endif
