/* The recurrent state of the layers that keep one instead of a KV cache
   (delta-net layers, deltanet.c; short convolutions, shortconv.c): one
   block of floats for the session, each layer's part at its state_off.
   It cannot be cut back to an earlier position as a KV cache can: a few
   copies of it (checkpoints, at the start and end of a prefill and the end
   of a generation) let ember_session_truncate return to one of those. */
#ifndef EMBER_RECURRENT_H
#define EMBER_RECURRENT_H

#include "session.h"

/* Bytes of one copy of every recurrent layer's state (0: none) */
size_t ember_rec_state_bytes(const ember_model *m);
/* What a session keeps of it: the state and its copies (counted as its KV memory) */
size_t ember_rec_session_bytes(const ember_model *m);
/* The state of position 0 (zeros), no checkpoints */
void ember_rec_reset(ember_session *s);
/* Keeps a copy of the state at s->n_past */
void ember_rec_checkpoint(ember_session *s);
/* The state of the latest checkpoint at or before position n, or the
   reset state: returns its position (the caller's new n_past). */
int ember_rec_rewind(ember_session *s, int n);

/* A causal convolution's state after a pass of n input rows (width
   floats each): its last k1 input rows, oldest first, from the pass where
   it has them, else from before it (rows only move down: a row keeps an
   older state row only when the pass is shorter than the window) */
void ember_rec_conv_shift(float *cs, const float *rows, int n, int k1, int width);

#endif
