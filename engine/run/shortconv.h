/* The gated short convolution layer (LFM2; model.h, ember_shortconv). */
#ifndef EMBER_SHORTCONV_H
#define EMBER_SHORTCONV_H

#include "session.h"

/* Layer l (a short convolution) for n tokens at the session's position:
   s->x += the block's output, its state advanced by the n tokens.  skip:
   as forward.c's attention (the last layer keeps rows [skip, n) only). */
void ember_sc_block(ember_session *s, int l, int n, int skip);

/* Layer l's short convolution into L->sc, its state's place in the
   recurrent state reserved; ember_sc_free releases it. */
int ember_sc_bind(ember_model *m, ember_layer *L, int l, ember_err *err);
void ember_sc_free(ember_shortconv *x);

#endif
