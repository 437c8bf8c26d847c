/* Attention over an fp16 KV cache with the queries and the softmax
   weights kept in f32: the numerics of the flash-attention path that the
   gemma3 / gemma4 / phi3 / qwen3 references run (ik_llama.cpp's default
   context: f16 K and V, f32 Q, f32 probabilities, f32 sums).  The
   mainline order (refnum.h) rounds the query and each weight to fp16;
   with Gemma 4's unscaled scores (normed Q and K, scale 1: scores of
   tens) that rounding alone moved a full-size model's logits to cosine
   0.98 of the reference (doc/PERFORMANCE.md, "Attention numerics").
   Every ISA gives the scalar definitions' bits (test_att_f32). */
#ifndef EMBER_ATT_F32_H
#define EMBER_ATT_F32_H

#include <stddef.h>
#include <stdint.h>

/* sc[h * sc_stride + p] = scale * dot(q_h, k_p) for nh query heads (hd
   floats, q_stride apart) and npos fp16 rows k (k_stride elements apart):
   lane j = d mod 16 sums fmaf(q[d], k[d], .) over d in order from 0, and
   the 16 lanes are added by ember_ref_sum16's tree; mx[h] = the maximum
   of head h's scores. */
void ember_attf_scores(float *sc, size_t sc_stride, const uint16_t *k, size_t k_stride, const float *q,
                       size_t q_stride, int nh, int npos, int hd, float scale, float *mx);

/* out[h * out_stride + d] = fmaf(w[h * w_stride + p], v_p[d], .) over p
   = 0 .. npos - 1 in order, from 0, for nh heads of weights w and npos
   fp16 rows v (v_stride elements apart). */
void ember_attf_wsum(float *out, size_t out_stride, const float *w, size_t w_stride, int nh, const uint16_t *v,
                     size_t v_stride, int npos, int hd);

/* The definitions, for the tests. */
void ember_attf_scores_scalar(float *sc, size_t sc_stride, const uint16_t *k, size_t k_stride, const float *q,
                              size_t q_stride, int nh, int npos, int hd, float scale, float *mx);
void ember_attf_wsum_scalar(float *out, size_t out_stride, const float *w, size_t w_stride, int nh,
                            const uint16_t *v, size_t v_stride, int npos, int hd);

#endif
