/* The KV cache's row formats (ember.h, ember_kv_type): how a row of
   head_dim values is stored (q8_0 rows: att_q8.h). */
#ifndef EMBER_KV_H
#define EMBER_KV_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* Bytes of one stored row of hd values (hd % 32 == 0 for q8_0). */
size_t ember_kv_row_bytes(ember_kv_type t, int hd);
/* Stores src (hd floats) as one row of type t at dst. */
void ember_kv_store(ember_kv_type t, void *dst, const float *src, int hd);
/* A decoded token's scores over npos fp16 rows k (single-row order), as
   ember_ref_scores_f16_heads gives them, with the V rows v that the
   weighted sum reads next asked for into L2 while K streams. */
void ember_kv_f16_scores_vpf(float *sc, size_t sc_stride, const uint16_t *k, const uint16_t *v, const uint16_t *q,
                             int nh, int npos, int hd, float scale, float *mx);
/* The same for f32 queries (att_f32.h, ember_attf_scores). */
void ember_kv_attf_scores_vpf(float *sc, size_t sc_stride, const uint16_t *k, const uint16_t *v, const float *q,
                              int nh, int npos, int hd, float scale, float *mx);
/* The layout session.c allocates and forward.c reads (session.h): the
   ring of the sliding layers for an n_ctx-token context (0: none), and
   layer l's rows per KV head under it. */
/* The prompt tokens per forward pass for a requested size (0, or out of
   2..EMBER_UBATCH: EMBER_UBATCH). */
int ember_ubatch(int requested);
int ember_kv_ring(const ember_model *m, int n_ctx, int ubatch);
int ember_kv_cap(const ember_model *m, int l, int ring, int n_ctx);

#endif
