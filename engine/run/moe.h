/* The FFN block of a mixture-of-experts layer (model.h, ember_moe). */
#ifndef EMBER_MOE_H
#define EMBER_MOE_H

#include "session.h"

/* Layer l's MoE FFN over n rows of s->x: router, the chosen experts, the
   shared expert where there is one, the weighted sum added to the
   residual (then times *scale when given). */
void ember_moe_ffn(ember_session *s, int l, int n, const float *scale);

#endif
