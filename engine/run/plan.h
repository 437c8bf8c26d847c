/* The weight strategy's plan: which representation each tensor takes
   (eager f32 rows, the file's rows, or a packed layout made later by the
   lifecycle), and the record `ember inspect --plan` prints. */
#ifndef EMBER_PLAN_H
#define EMBER_PLAN_H

#include "model.h"

/* Chooses one matrix's representation, prepares it (eager: dequantized
   now) and records it in the plan.  (A bias after the product changes
   nothing here: forward.c adds it to either representation's output.) */
int ember_plan_weight(ember_model *m, ember_weight *w, ember_err *err);
/* The n expert slabs of one 3-D tensor (model.h, ember_moe): one
   representation for all (packed where a dense projection of the same
   kind and dtype would be, each slab its own tiles), one record. */
int ember_plan_experts(ember_model *m, ember_weight *ws, int n, ember_err *err);
/* The per-head matrices of a latent attention layer (model.h, ember_mla):
   as ember_plan_experts, every one of them read by every token. */
int ember_plan_heads(ember_model *m, ember_weight *ws, int n, ember_err *err);
/* After every matrix: the embedding table (sharing a tied eager LM head's
   floats) and the small tensors, which live as f32. */
int ember_plan_finish(ember_model *m, ember_err *err);
/* One record of the plan for a tensor that is no matrix of the forward
   pass's kind (gemma4's per-layer embedding rows); returns its index. */
int ember_plan_add(ember_model *m, const gguf_tensor *t, ember_rep rep, const char *kernel,
                   const char *isa, uint64_t bytes, const char *reason);

#endif
