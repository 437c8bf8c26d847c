/* The gated delta-net layer (deltanet.c); its state is recurrent.h's. */
#ifndef EMBER_DELTANET_H
#define EMBER_DELTANET_H

#include "session.h"

/* Layer l (a delta-net layer) for n tokens at the session's position:
   s->x += the block's output, the state advanced by the n tokens.  skip:
   as forward.c's attention (the last layer keeps rows [skip, n) only). */
void ember_dn_block(ember_session *s, int l, int n, int skip);

#endif
