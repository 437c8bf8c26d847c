/* The Mamba-2 selective state-space layer (Granite 4.0's hybrids; model.h,
   ember_mamba2); its state is recurrent.h's. */
#ifndef EMBER_MAMBA2_H
#define EMBER_MAMBA2_H

#include "session.h"

/* Layer l (a Mamba-2 layer) for n tokens at the session's position: s->x
   += the block's output, its state advanced by the n tokens.  skip: as
   forward.c's attention (the last layer keeps rows [skip, n) only).  With
   side, the output's rows [skip, n) go there, s->x untouched (Falcon-H1's
   attention beside adds them: forward.h, ember_fw_block_out). */
void ember_m2_block(ember_session *s, int l, int n, int skip, float *side);

/* Layer l's Mamba-2 tensors into L->m2, its state's place in the
   recurrent state reserved; ember_m2_free releases them. */
int ember_m2_bind(ember_model *m, ember_layer *L, int l, ember_err *err);
void ember_m2_free(ember_mamba2 *x);

#endif
