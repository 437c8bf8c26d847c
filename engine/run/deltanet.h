/* The gated delta-net layer (deltanet.c); its state is recurrent.h's. */
#ifndef EMBER_DELTANET_H
#define EMBER_DELTANET_H

#include "session.h"

/* Layer l (a delta-net layer) for n tokens at the session's position:
   s->x += the block's output, the state advanced by the n tokens.  skip:
   as forward.c's attention (the last layer keeps rows [skip, n) only). */
void ember_dn_block(ember_session *s, int l, int n, int skip);

/* Layer l's delta-net tensors into L->dn, its state's place in the
   recurrent state reserved; ember_dn_free releases them.
   ember_dn_weights: its matrices, bound or not, into ws (how many). */
#define DN_WEIGHTS 7
int ember_dn_bind(ember_model *m, ember_layer *L, int l, ember_err *err);
void ember_dn_free(ember_deltanet *x);
int ember_dn_weights(ember_deltanet *x, ember_weight *ws[DN_WEIGHTS]);

#endif
