/* Gemma 3n's alternating updates (ARCH_ALTUP; model.h, ember_altup). */
#ifndef EMBER_ALTUP_H
#define EMBER_ALTUP_H

#include "session.h"

/* The streams of n tokens from the scaled embeddings in s->x: stream 0
   the embedding, stream i its projection i - 1 scaled to its magnitude. */
void ember_altup_init(ember_session *s, int n);
/* Layer l over the streams of n tokens at pos0: predict, laurel and
   attention and FFN on the active stream, correct, the per-layer input
   added to streams 1..; then only rows [skip, n) go on. */
void ember_altup_layer(ember_session *s, int l, int n, int pos0, int skip);
/* s->x = the streams of n tokens merged: stream 0 and the others projected
   back (each scaled to the active stream's magnitude), averaged. */
void ember_altup_merge(ember_session *s, int n);

/* Gemma 3n's activation sparsity, an ember_tok_fn over the FFN's gate
   rows in s->g (ctx: the layer, its n_ff and sparsity) */
void ember_altup_gaussian_top(ember_session *s, const void *ctx, int t0, int t1, int ith);

/* The model's stream projections and layer l's part (L->alt, its FFN
   sparsity) from the file; ember_altup_free releases a layer's,
   ember_altup_free_model the model's. */
int ember_altup_bind_model(ember_model *m, ember_err *err);
int ember_altup_bind(ember_model *m, ember_layer *L, int l, ember_err *err);
void ember_altup_free(ember_altup *x);
void ember_altup_free_model(ember_model *m);

#endif
