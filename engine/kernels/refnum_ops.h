/* The table of refnum.h's per-ISA steps (refnum.c picks one by cpuid) and
   the scalar definitions that the SIMD files fall back on where a case is
   outside their fast path: every entry gives the scalar bits. */
#ifndef EMBER_REFNUM_OPS_H
#define EMBER_REFNUM_OPS_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    void (*exp16)(float *y, const float *x, float sub);
    void (*silu16)(float *g, const float *u);
    void (*gelu16)(float *g, const float *u);
    void (*scores_heads)(float *sc, size_t sc_stride, const uint16_t *k, size_t stride, const uint16_t *q,
                         size_t q_stride, int nh, int npos, int hd, int gemm, float scale, float *mx);
    void (*to_f16)(uint16_t *dst, const float *src, int n);
    void (*scale_f16r)(float *x, float s, int n);
    void (*wsum_heads)(float *out, size_t out_stride, const float *w, size_t w_stride, int nh,
                       const uint16_t *v, size_t stride, int npos, int hd, int n_kv, int gemm, float *acc);
} refnum_ops;

void ember_refnum_exp16_scalar(float *y, const float *x, float sub);
void ember_refnum_silu16_scalar(float *g, const float *u);
void ember_refnum_gelu16_scalar(float *g, const float *u);
void ember_refnum_scores_heads_scalar(float *sc, size_t sc_stride, const uint16_t *k, size_t stride,
                                      const uint16_t *q, size_t q_stride, int nh, int npos, int hd, int gemm,
                                      float scale, float *mx);
void ember_refnum_wsum_heads_scalar(float *out, size_t out_stride, const float *w, size_t w_stride, int nh,
                                    const uint16_t *v, size_t stride, int npos, int hd, int n_kv, int gemm,
                                    float *acc);
void ember_refnum_to_f16_scalar(uint16_t *dst, const float *src, int n);
void ember_refnum_scale_f16r_scalar(float *x, float s, int n);

/* The AVX2 + FMA + F16C table (refnum_avx2.c). */
extern const refnum_ops ember_refnum_avx2;

#endif
