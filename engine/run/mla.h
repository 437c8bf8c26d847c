/* Multi-head latent attention (ARCH_MLA; model.h, ember_mla). */
#ifndef EMBER_MLA_H
#define EMBER_MLA_H

#include "session.h"

/* The attention block of latent attention layer l for n tokens at pos0,
   as forward.c's attention: s->x += attention(s->x), each token's
   latent row into the cache, only tokens [skip, n) going on. */
void ember_mla_block(ember_session *s, int l, int n, int pos0, int skip);

#endif
