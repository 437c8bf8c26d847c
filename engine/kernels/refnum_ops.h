/* The table of refnum.h's per-ISA steps (refnum.c picks one by cpuid) and
   the scalar definitions that the SIMD files fall back on where a case is
   outside their fast path: every entry gives the scalar bits. */
#ifndef EMBER_REFNUM_OPS_H
#define EMBER_REFNUM_OPS_H

#include <stddef.h>
#include <stdint.h>

/* Polynomial coefficients and range reduction of the reference's exp
   (an Arm optimized-routines design): n = round(x / ln 2), b = x - n ln 2
   in two parts, exp(b) by a degree-5 polynomial in b and b^2, times 2^n. */
#define EXP_SHIFT 0x1.8p23f
#define EXP_INVLN2 0x1.715476p+0f
#define EXP_LN2_HI 0x1.62e4p-1f
#define EXP_LN2_LO 0x1.7f7d1cp-20f
#define EXP_C1 0x1.0e4020p-7f
#define EXP_C2 0x1.573e2ep-5f
#define EXP_C3 0x1.555e66p-3f
#define EXP_C4 0x1.fffdb6p-2f
#define EXP_C5 0x1.ffffecp-1f

/* GELU's tanh form through that exp: 0.5 (1 + tanh(a)) = e / (e + 1) with
   e = exp(2a), 2a = (1 + A x^2) * (2C x); past 2a > 30 the ratio is 1 (e
   would overflow into inf / inf). */
#define GELU_A 0.044715f
#define GELU_2C 1.5957691216f   /* 2 * sqrt(2 / pi) */

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
    void (*rope)(float *v, int nh, int hd, int n_rot, const float *cs, const float *sn, int neox);
    /* a whole row of ember_ref_softmax_exp in one call (NULL: exp16 and
       the scalar tree sum, 16 at a time) */
    double (*softmax_exp)(float *y, const float *x, float max, int n);
    /* x[l] = (1 - 2 / (exp(2 (x[l] inv)) + 1)) cap, and m[l] = the larger of
       m[l] and x[l] (x[l] > m[l] ? x[l] : m[l]) for 16 lanes */
    void (*softcap16)(float *x, float inv, float cap, float *m);
} refnum_ops;

void ember_refnum_exp16_scalar(float *y, const float *x, float sub);
void ember_refnum_silu16_scalar(float *g, const float *u);
void ember_refnum_gelu16_scalar(float *g, const float *u);
void ember_refnum_softcap16_scalar(float *x, float inv, float cap, float *m);
void ember_refnum_scores_heads_scalar(float *sc, size_t sc_stride, const uint16_t *k, size_t stride,
                                      const uint16_t *q, size_t q_stride, int nh, int npos, int hd, int gemm,
                                      float scale, float *mx);
void ember_refnum_wsum_heads_scalar(float *out, size_t out_stride, const float *w, size_t w_stride, int nh,
                                    const uint16_t *v, size_t stride, int npos, int hd, int n_kv, int gemm,
                                    float *acc);
void ember_refnum_to_f16_scalar(uint16_t *dst, const float *src, int n);
void ember_refnum_scale_f16r_scalar(float *x, float s, int n);
void ember_refnum_rope_scalar(float *v, int nh, int hd, int n_rot, const float *cs, const float *sn, int neox);

/* The scalar definition of RoPE's rotation, inlined into the scalar entry
   and into the AVX2 one, whose target makes fmaf the FMA instruction
   instead of a libm call. */
static inline __attribute__((always_inline)) void ember_refnum_rope_body(float *v, int nh, int hd, int n_rot,
                                                                        const float *cs, const float *sn, int neox)
{
    const int h2 = n_rot / 2;
    for (int h = 0; h < nh; h++) {
        float *p = v + (size_t)h * (size_t)hd;
        for (int i = 0; i < h2; i++) {
            int a = neox ? i : 2 * i, b = neox ? i + h2 : 2 * i + 1;
            float x0 = p[a], x1 = p[b];
            p[a] = __builtin_fmaf(x0, cs[i], -(x1 * sn[i]));
            p[b] = __builtin_fmaf(x0, sn[i], x1 * cs[i]);
        }
    }
}

/* The AVX2 + FMA + F16C table (refnum_avx2.c). */
extern const refnum_ops ember_refnum_avx2;

#endif
