/* The gated short convolution layer (LFM2; model.h, ember_shortconv). */
#ifndef EMBER_SHORTCONV_H
#define EMBER_SHORTCONV_H

#include "session.h"

/* Layer l (a short convolution) for n tokens at the session's position:
   s->x += the block's output, its state advanced by the n tokens.  skip:
   as forward.c's attention (the last layer keeps rows [skip, n) only). */
void ember_sc_block(ember_session *s, int l, int n, int skip);

#endif
