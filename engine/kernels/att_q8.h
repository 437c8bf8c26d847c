/* Attention over a q8_0 KV cache (kv.h, EMBER_KV_Q8_0), computed the way
   the reference computes over a quantized cache (its flash-attention
   path): the rows stored as q8_0 blocks, the query quantized as that path
   quantizes it on x86 (ik_llama.cpp's q8_2: the block's scale rounded to
   bf16 before the values are divided by it), each score a sum
   of integer block dot products scaled by the two blocks' scales, and the
   weighted sum over the V rows' values d * q.  Nothing is rounded back to
   fp16: the integer sums are exact, so the scores do not depend on how
   rows are grouped, and each output lane adds its positions in order.
   Every ISA gives the scalar definitions' bits (test_att_q8). */
#ifndef EMBER_ATT_Q8_H
#define EMBER_ATT_Q8_H

#include <stddef.h>
#include <stdint.h>

/* One row of hd values (hd % 32 == 0): the hd / 32 blocks' fp16 scales,
   then the hd int8 values, so a row's values load as whole vectors (34
   bytes per 32 values, as block_q8_0). */
static inline size_t ember_attq8_row_bytes(int hd) { return (size_t)hd / 32 * 34; }
/* One quantized query head: hd / 32 float scales, hd / 32 int32
   corrections (-128 times the block's sum, for the unsigned-times-signed
   instruction), then the hd int8 values. */
static inline size_t ember_attq8_query_bytes(int hd) { return (size_t)hd + (size_t)hd / 32 * 8; }

/* x (hd floats) as one row: the reference's q8_0 rounding. */
void ember_attq8_store(uint8_t *row, const float *x, int hd);
/* q (hd floats) as one query head at dst. */
void ember_attq8_query(uint8_t *dst, const float *q, int hd);

/* sc[h * sc_stride + p] = scale * sum over blocks b, in order, of
   fmaf(dk_b * dq_b, (float)isum_b, .) from 0, for nh query heads (q_stride
   bytes apart) and npos rows k (ember_attq8_row_bytes apart); mx[h] the
   maximum of head h's scores. */
void ember_attq8_scores(float *sc, size_t sc_stride, const uint8_t *k, const uint8_t *q, size_t q_stride, int nh,
                        int npos, int hd, float scale, float *mx);
/* out[h * out_stride + d] = fmaf(w[h * w_stride + p], dv_p * qv_p[d], .)
   over p = 0 .. npos - 1 in order, from 0, for nh heads of weights w and
   npos rows v. */
void ember_attq8_wsum(float *out, size_t out_stride, const float *w, size_t w_stride, int nh, const uint8_t *v,
                      int npos, int hd);

/* The definitions, for the tests. */
void ember_attq8_scores_scalar(float *sc, size_t sc_stride, const uint8_t *k, const uint8_t *q, size_t q_stride,
                               int nh, int npos, int hd, float scale, float *mx);
void ember_attq8_wsum_scalar(float *out, size_t out_stride, const float *w, size_t w_stride, int nh, const uint8_t *v,
                             int npos, int hd);

#endif
