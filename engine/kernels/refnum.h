/* The reference implementation's float order for the steps around the
   matrix kernels whose rounding its logits record (doc/DESIGN.md,
   "Numerics contract"): the exp approximation of its AVX-512 build, its
   16-lane tree sum, the two orders of its f16 dot products (the batched
   GEMM and the single-row dot), its softmax and SiLU.  Every ISA computes the same bits;
   the SIMD variants only make it fast. */
#ifndef EMBER_REFNUM_H
#define EMBER_REFNUM_H

#include <stddef.h>
#include <stdint.h>

/* ((v0+v8)+(v4+v12)) + ... : the reference's horizontal sum of 16 lanes */
float ember_ref_sum16(const float v[16]);

/* exp(x) by the reference's polynomial: within 1.5 ulp of expf, and
   bit-equal to what the reference computes for softmax and SiLU */
float ember_ref_expf(float x);

/* y[i] = exp(x[i] - max) for i < n and 0 for n <= i < 16 * ceil(n / 16);
   returns the sum as the reference forms it: each 16-wide chunk's tree sum
   in float, added in double.  y needs room for the padded length. */
double ember_ref_softmax_exp(float *y, const float *x, float max, int n);

/* g[i] = silu(g[i]) * u[i] over one row of n: 16-wide chunks use the
   approximation, a tail of n % 16 uses libm's expf (as the reference does). */
void ember_ref_silu_mul(float *g, const float *u, int n);

/* x[i] = silu(x[i]): the same chunks and bits as ember_ref_silu_mul by 1 */
void ember_ref_silu(float *x, int n);
/* x[i] = gelu(x[i]): the same chunks and bits as ember_ref_gelu_tanh_mul by 1 */
void ember_ref_gelu(float *x, int n);

/* g[i] = gelu(g[i]) * u[i] with the tanh form of GELU (Gemma's GeGLU), as
   the reference's SIMD path forms it: with a = 2 sqrt(2/pi) x (1 + 0.044715 x^2)
   (fmaf(x, 0.044715f * x, 1) * (1.5957691216f * x)), gelu = x * e / (e + 1)
   for e = the exp above of a (x itself where a > 30), then times u[i].
   (libm's tanhf cost a fifth of gemma-3-1b's prefill; the Gemma goldens
   are not bit-exact anyway, see tests/test_golden.c.) */
void ember_ref_gelu_tanh_mul(float *g, const float *u, int n);

/* gpt-oss's clamped SwiGLU, as the reference forms it: x = min(g, 7),
   y = clamp(u, -7, 7), g = x / (1 + expf(1.702 * -x)) * (y + 1), libm's
   expf. */
void ember_ref_swiglu_oai_mul(float *g, const float *u, int n);

/* x[i] = cap * tanh(x[i] * (1 / cap)) for i < n, in the reference's order
   (scale, tanh, scale), tanh as 1 - 2 / (exp(2y) + 1) through the exp
   above: final logit soft-capping, and Gemma 2's attention scores. */
void ember_ref_softcap(float *x, size_t n, float cap);
/* The same, returning the largest capped value (the softmax's max). */
float ember_ref_softcap_max(float *x, size_t n, float cap);

/* ember_attf_scores (att_f32.h) where AVX-512 and hd % 16 == 0 (up to 512)
   let the batched block take f32 queries: returns 1 when done, 0 when the
   caller must compute them itself. */
int ember_ref_scores_f32q(float *sc, size_t sc_stride, const uint16_t *k, size_t stride, const float *q,
                          size_t q_stride, int nh, int npos, int hd, float scale, float *mx);

/* Attention scores: sc[p] = dot(k row p, q) * scale for p < npos (rows
   `stride` apart, hd each, every product exact in f32), returning the max.
   gemm: the reference's batched order, 16 lanes over hd (hd % 16 == 0).
   Otherwise its single-row order, 4 x 16 lanes over hd & ~63, the rest in
   double. */
float ember_ref_scores_f16(float *sc, const uint16_t *k, size_t stride, const uint16_t *q,
                           int npos, int hd, int gemm, float scale);

/* ember_ref_scores_f16 for nh queries over the same rows k: query i at
   q + i * q_stride, its scores at sc + i * sc_stride, its max in mx[i].
   The same bits as nh separate calls, with each row read once. */
void ember_ref_scores_f16_heads(float *sc, size_t sc_stride, const uint16_t *k, size_t stride, const uint16_t *q,
                                size_t q_stride, int nh, int npos, int hd, int gemm, float scale, float *mx);
/* Weighted sum of f16 rows, out[d] = sum_p w[p] * v[p * stride + d] for
   p < npos, d < hd, in the lane order of the product that reference forms:
   gemm (batched, 16 lanes over positions) or vec (single row: 64 lanes over
   the first n_kv & ~63 positions, then double).  w holds f16-rounded
   weights as float; acc is scratch of 64 * hd floats. */
void ember_ref_wsum_f16(float *out, const float *w, const uint16_t *v, size_t stride,
                        int npos, int hd, int n_kv, int gemm, float *acc);

/* ember_ref_wsum_f16 for nh heads over the same rows v: head i's weights
   at w + i * w_stride, its result at out + i * out_stride; acc is scratch
   of nh * 64 * hd floats.  The same bits as nh separate calls, with each
   row read from memory once. */
void ember_ref_wsum_f16_heads(float *out, size_t out_stride, const float *w, size_t w_stride, int nh,
                              const uint16_t *v, size_t stride, int npos, int hd, int n_kv, int gemm, float *acc);

/* dst[i] = ember_f32_to_fp16(src[i]) for i < n */
void ember_ref_to_f16(uint16_t *dst, const float *src, int n);

/* x[i] = x[i] * s rounded to fp16 and back (the reference's f16 softmax
   weights), for i < n */
void ember_ref_scale_f16r(float *x, float s, int n);

/* Rotates the n_rot leading dims of nh heads (hd apart, in place) by one
   position's cos / sin (n_rot / 2 each), pairs (i, i + n_rot / 2) when
   neox, else (2i, 2i + 1): x0' = fmaf(x0, c, -(x1 s)), x1' = fmaf(x0, s,
   x1 c), as the reference rounds them. */
void ember_ref_rope(float *v, int nh, int hd, int n_rot, const float *cs, const float *sn, int neox);

#endif
