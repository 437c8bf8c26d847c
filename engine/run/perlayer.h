/* Gemma 4's per-layer inputs: a second embedding, one slice per layer,
   gated into the residual after each layer's FFN. */
#ifndef EMBER_PERLAYER_H
#define EMBER_PERLAYER_H

#include "session.h"

/* The per-layer inputs of n tokens into s->pl, from s->x (the scaled
   token embeddings) and each token's per_layer_token_embd row */
int ember_pl_inputs(ember_session *s, const int32_t *tok, int n, ember_err *err);
/* After layer l's FFN: x += post_norm(proj(gelu(inp_gate x) * input_l)),
   then x *= *scale when given */
void ember_pl_block(ember_session *s, int l, int n, const float *scale);

#endif
