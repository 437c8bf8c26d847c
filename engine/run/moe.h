/* The FFN block of a mixture-of-experts layer (model.h, ember_moe). */
#ifndef EMBER_MOE_H
#define EMBER_MOE_H

#include "session.h"

/* Layer l's MoE FFN over n rows of s->x: router, the chosen experts, the
   shared expert where there is one, the weighted sum added to the
   residual (then times *scale when given). */
void ember_moe_ffn(ember_session *s, int l, int n, const float *scale);

/* Layer l's mixture of experts into L->moe: the router, the experts'
   slabs (one record of the plan each), a shared expert where the file
   has one; ember_moe_free releases it (n experts). */
int ember_moe_bind(ember_model *m, ember_layer *L, int l, ember_err *err);
void ember_moe_free(ember_moe *moe, int n);

#endif
