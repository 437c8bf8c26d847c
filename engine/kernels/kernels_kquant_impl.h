/* Private to the K-quant kernels: the per-ISA matmuls registered by
   kernels_kquant.c, and the numerics they all share.
 *
 * Exact order of operations (every ISA, so results are bit-identical, and
 * the reference implementation's, so logits equal its goldens bit for bit).
 * For each (row r, token t), f32 accumulators acc[0..7] = 0 (Q4_K also
 * accm[0..3] = 0, Q5_K summs = 0), then for each 256-element super-block
 * in order, with dx = the activation block's d and d_w, dmin_w the block's
 * fp16 values widened exactly:
 *   lane[l] = sum over elements e with (e mod 32) / 4 == l of sc(e) * q(e) * x(e)
 *             (int32; Q6_K: q(e) - 32, scale per 16 elements; Q4_K/Q5_K:
 *             scale per 32)
 *   d = dx * d_w;  acc[l] = fmaf(d, (float)lane[l], acc[l])
 *   Q4_K/Q5_K:  dmin = -dx * dmin_w;  q8s[j] = bsums[2j] + bsums[2j+1];
 *               P[k] = m[2k] * q8s[2k] + m[2k+1] * q8s[2k+1]   (int32, k < 4)
 *     Q4_K:     accm[k] = fmaf(dmin, (float)P[k], accm[k])
 *     Q5_K:     summs = fmaf(dmin, (float)(P[0] + P[1] + P[2] + P[3]), summs)
 * and at the end y = ember_sum8(acc), plus (accm0 + accm2) + (accm1 + accm3)
 * for Q4_K, plus summs for Q5_K.
 * Q2_K and Q3_K (scale per 16 elements; Q3_K's q in -4..3, scales -32..31):
 *   Q2_K:  dmin = -dx * dmin_w;  P[l] = m[2l] * bsums[2l] + m[2l+1] * bsums[2l+1]
 *          acc[l] = fmaf(dmin, (float)P[l], acc[l]), then the d term as above
 *   Q3_K:  the d term only
 * IQ4_XS (scale per 32 elements, ls - 32; q the code book's value): the d
 *   term only, as Q6_K
 * and y = ember_sum8(acc).  The integer sums cannot overflow for any
 * block bytes (|x| <= 127 from quantize_act, scales <= 63 or |128|). */
#ifndef EMBER_KERNELS_KQUANT_IMPL_H
#define EMBER_KERNELS_KQUANT_IMPL_H

#include "kernels.h"

#define EMBER_KQ_MATMUL_ARGS                                                     \
    const void *w, size_t row_bytes, int64_t k, int r0, int r1, const void *xq, \
        size_t xq_stride, int nt, float *y, size_t y_stride

/* Decode streams each thread's rows as one sequential run.  Out of cache the
   hardware prefetchers alone leave the decode of a super-block waiting on
   its lines (on a Xeon VM, one thread: Q4_K 7 GB/s out of cache against
   19 in cache with AVX-512, 6.6 against 15 with AVX2), so the SIMD walks
   fetch each line into L2 PF_KQ bytes ahead of the block in use and into
   L1 PF_KQ_L1 bytes ahead, running on into the following rows (one T0
   stream 4 KiB ahead: Q4_K 12.8 GB/s; the two levels: 8-9% more decode
   tok/s on the whole model).  Addresses are integers: the stream may step
   past the matrix, and prefetches never fault. */
#if defined(EMBER_SIMD) && defined(__x86_64__)
#include <stdint.h>
#include <immintrin.h>
#ifndef PF_KQ
#define PF_KQ 4096
#endif
#define PF_KQ_L1 1024
static inline __attribute__((always_inline)) void ember_kq_prefetch_to(uintptr_t *pf, uintptr_t upto)
{
    for (; *pf < upto; *pf += 64) {
        _mm_prefetch((const char *)*pf, _MM_HINT_T1);
        _mm_prefetch((const char *)(*pf - (PF_KQ - PF_KQ_L1)), _MM_HINT_T0);
    }
}
/* The first line of row r0: where a decode walk's prefetch stream starts. */
static inline uintptr_t ember_kq_prefetch_start(const void *w, size_t row_bytes, int r0)
{
    return ((uintptr_t)w + (size_t)r0 * row_bytes) & ~(uintptr_t)63;
}
#endif

void ember_kq_quantize_q8_K(const float *x, void *xq, int64_t k);
void ember_kq_quantize_q8_K_avx512(const float *x, void *xq, int64_t k);

void ember_kq_q2_K_avx2(EMBER_KQ_MATMUL_ARGS);
void ember_kq_q3_K_avx2(EMBER_KQ_MATMUL_ARGS);
void ember_kq_q2_K_avx512(EMBER_KQ_MATMUL_ARGS);
void ember_kq_q3_K_avx512(EMBER_KQ_MATMUL_ARGS);
void ember_kq_q4_K_avx2(EMBER_KQ_MATMUL_ARGS);
void ember_kq_q5_K_avx2(EMBER_KQ_MATMUL_ARGS);
void ember_kq_q6_K_avx2(EMBER_KQ_MATMUL_ARGS);
void ember_kq_iq4_xs_avx2(EMBER_KQ_MATMUL_ARGS);
void ember_kq_q4_K_avx512(EMBER_KQ_MATMUL_ARGS);
void ember_kq_q5_K_avx512(EMBER_KQ_MATMUL_ARGS);
void ember_kq_q6_K_avx512(EMBER_KQ_MATMUL_ARGS);
void ember_kq_iq4_xs_avx512(EMBER_KQ_MATMUL_ARGS);

#endif
