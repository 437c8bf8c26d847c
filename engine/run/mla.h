/* Multi-head latent attention (ARCH_MLA; model.h, ember_mla). */
#ifndef EMBER_MLA_H
#define EMBER_MLA_H

#include "session.h"

/* The attention block of latent attention layer l for n tokens at pos0,
   as forward.c's attention: s->x += attention(s->x), each token's
   latent row into the cache, only tokens [skip, n) going on. */
void ember_mla_block(ember_session *s, int l, int n, int pos0, int skip);

/* Layer l's latent attention tensors into L->mla; ember_mla_free
   releases them (nh heads).  ember_mla_weights: its matrices other than
   the per-head ones, bound or not, into ws (how many). */
#define MLA_WEIGHTS 4
int ember_mla_bind(ember_model *m, ember_layer *L, int l, ember_err *err);
void ember_mla_free(ember_mla *x, int nh);
int ember_mla_weights(ember_mla *x, ember_weight *ws[MLA_WEIGHTS]);

#endif
