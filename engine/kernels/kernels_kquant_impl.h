/* Private to the K-quant kernels: the per-ISA matmuls registered by
   kernels_kquant.c, and the numerics they all share.
 *
 * Exact order of operations (every ISA, so results are bit-identical):
 * for each (row r, token t) one f32 accumulator acc = 0, then for each
 * 256-element super-block b in order, with dx = activation block's d (f32):
 *   Q4_K / Q5_K:  isum = sum_j sc_j * sum_{i in sub-block j} q_i * x_i   (int32)
 *                 msum = sum_j m_j * (bsums[2j] + bsums[2j+1])           (int32)
 *                 acc = fmaf(d_w * dx, (float)isum, acc);
 *                 acc = fmaf(-(dmin_w * dx), (float)msum, acc);
 *   Q6_K:         isum = sum_g sc_g * sum_{i in group g} (q_i - 32) * x_i (int32)
 *                 acc = fmaf(d_w * dx, (float)isum, acc);
 * where d_w, dmin_w are the block's fp16 values widened exactly to f32 and
 * each product is one f32 multiply.  The integer sums cannot overflow for
 * any block bytes (|x| <= 127 from quantize_act, scales <= 63 or |128|). */
#ifndef EMBER_KERNELS_KQUANT_IMPL_H
#define EMBER_KERNELS_KQUANT_IMPL_H

#include "kernels.h"

#define EMBER_KQ_MATMUL_ARGS                                                     \
    const void *w, size_t row_bytes, int64_t k, int r0, int r1, const void *xq, \
        size_t xq_stride, int nt, float *y, size_t y_stride

void ember_kq_quantize_q8_K(const float *x, void *xq, int64_t k);
void ember_kq_quantize_q8_K_avx512(const float *x, void *xq, int64_t k);

void ember_kq_q4_K_avx2(EMBER_KQ_MATMUL_ARGS);
void ember_kq_q5_K_avx2(EMBER_KQ_MATMUL_ARGS);
void ember_kq_q6_K_avx2(EMBER_KQ_MATMUL_ARGS);
void ember_kq_q4_K_avx512(EMBER_KQ_MATMUL_ARGS);
void ember_kq_q5_K_avx512(EMBER_KQ_MATMUL_ARGS);
void ember_kq_q6_K_avx512(EMBER_KQ_MATMUL_ARGS);

#endif
