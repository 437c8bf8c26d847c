/* The KV cache's row formats (ember.h, ember_kv_type): how a row of
   head_dim values is stored, and read back as fp16 for attention. */
#ifndef EMBER_KV_H
#define EMBER_KV_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* Bytes of one stored row of hd values (hd % 32 == 0 for q8_0). */
size_t ember_kv_row_bytes(ember_kv_type t, int hd);
/* Stores src (hd floats) as one row of type t at dst. */
void ember_kv_store(ember_kv_type t, void *dst, const float *src, int hd);
/* nrows q8_0 rows of hd (row_bytes apart) as fp16, hd per row, into dst. */
void ember_kv_q8_to_f16(uint16_t *dst, const uint8_t *src, int nrows, int hd);

/* Positions a q8_0 run is read back in: the fp16 copy of a chunk stays in
   L2 (64 KiB at head_dim 64) instead of streaming a whole context out and
   back in. */
#define EMBER_KV_CHUNK 512
/* Per-thread scratch floats the two functions below need (group query
   heads per KV head, heads of at most hd). */
size_t ember_kv_q8_scratch(int group, int hd);
/* refnum.h's ember_ref_scores_f16_heads over npos q8_0 rows k, read back
   chunk by chunk: the same scores as over their fp16 copy. */
void ember_kv_q8_scores(float *sc, size_t sc_stride, const uint8_t *k, const uint16_t *q, int nh, int npos, int hd,
                        int gemm, float scale, float *mx, float *scratch);
/* A decoded token's scores over npos fp16 rows k (single-row order), as
   ember_ref_scores_f16_heads gives them, with the V rows v that the
   weighted sum reads next asked for into L2 while K streams. */
void ember_kv_f16_scores_vpf(float *sc, size_t sc_stride, const uint16_t *k, const uint16_t *v, const uint16_t *q,
                             int nh, int npos, int hd, float scale, float *mx);
/* ember_ref_wsum_f16_heads over npos q8_0 rows v (n_kv the padded length),
   chunk by chunk, the chunks' sums added in order (one chunk: the fp16
   path's order exactly). */
void ember_kv_q8_wsum(float *out, size_t out_stride, const float *w, size_t w_stride, int nh, const uint8_t *v,
                      int npos, int hd, int n_kv, int gemm, float *acc, float *scratch);
/* The layout session.c allocates and forward.c reads (session.h): the
   ring of the sliding layers for an n_ctx-token context (0: none), and
   layer l's rows per KV head under it. */
/* The prompt tokens per forward pass for a requested size (0, or out of
   2..EMBER_UBATCH: EMBER_UBATCH). */
int ember_ubatch(int requested);
int ember_kv_ring(const ember_model *m, int n_ctx, int ubatch);
int ember_kv_cap(const ember_model *m, int l, int ring, int n_ctx);

#endif
