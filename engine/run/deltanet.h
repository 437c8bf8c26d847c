/* The gated delta-net layer and its recurrent state (deltanet.c). */
#ifndef EMBER_DELTANET_H
#define EMBER_DELTANET_H

#include "session.h"

/* Layer l (a delta-net layer) for n tokens at the session's position:
   s->x += the block's output, the state advanced by the n tokens.  skip:
   as forward.c's attention (the last layer keeps rows [skip, n) only). */
void ember_dn_block(ember_session *s, int l, int n, int skip);

/* Bytes of one copy of every delta-net layer's state (0: none) */
size_t ember_dn_state_bytes(const ember_model *m);
/* What a session keeps of it: the state and its copies (counted as its KV memory) */
size_t ember_dn_session_bytes(const ember_model *m);
/* The state of position 0 (zeros), no checkpoints */
void ember_dn_reset(ember_session *s);
/* Keeps a copy of the state at s->n_past */
void ember_dn_checkpoint(ember_session *s);
/* The state of the latest checkpoint at or before position n, or the
   reset state: returns its position (the caller's new n_past). */
int ember_dn_rewind(ember_session *s, int n);

#endif
