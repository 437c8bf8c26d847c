/* Attention with f32 queries and weights over fp16 KV rows (att_f32.h).
   On AVX-512 the scores are refnum's batched block (its order is this
   definition's); AVX2 converts a K row once for every head.  The
   weighted sum converts each V slab once for up to four heads that share
   it. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "att_f32.h"
#include "dtype.h"
#include "kernels.h"
#include "refnum.h"
#include "simd.h"

/* ---- the definitions ------------------------------------------------------ */

void ember_attf_scores_scalar(float *sc, size_t sc_stride, const uint16_t *k, size_t k_stride, const float *q,
                              size_t q_stride, int nh, int npos, int hd, float scale, float *mx)
{
    for (int h = 0; h < nh; h++) {
        const float *qh = q + (size_t)h * q_stride;
        float *s = sc + (size_t)h * sc_stride, m = -INFINITY;
        for (int p = 0; p < npos; p++) {
            const uint16_t *kp = k + (size_t)p * k_stride;
            float lane[16] = {0};
            for (int d = 0; d < hd; d++) lane[d % 16] = fmaf(qh[d], ember_fp16_to_f32(kp[d]), lane[d % 16]);
            s[p] = ember_ref_sum16(lane) * scale;
            if (s[p] > m) m = s[p];
        }
        mx[h] = m;
    }
}

void ember_attf_wsum_scalar(float *out, size_t out_stride, const float *w, size_t w_stride, int nh,
                            const uint16_t *v, size_t v_stride, int npos, int hd)
{
    for (int h = 0; h < nh; h++) {
        float *o = out + (size_t)h * out_stride;
        const float *wh = w + (size_t)h * w_stride;
        for (int d = 0; d < hd; d++) o[d] = 0.0f;
        for (int p = 0; p < npos; p++) {
            const uint16_t *vp = v + (size_t)p * v_stride;
            for (int d = 0; d < hd; d++) o[d] = fmaf(wh[p], ember_fp16_to_f32(vp[d]), o[d]);
        }
    }
}

#ifdef EMBER_SIMD

/* ---- AVX-512 ------------------------------------------------------------- */

static inline EMBER_TARGET_AVX512 __attribute__((always_inline)) __mmask16 tail16(int hd, int c)
{
    const int r = hd - 16 * c;
    return r >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << r) - 1);
}

/* H heads x C 16-wide chunks of one 64-wide slab at d0; H and C are
   constants where it is inlined, so the sums stay in registers */
static inline EMBER_TARGET_AVX512 __attribute__((always_inline)) void
wsum512_slab(float *out, size_t out_stride, const float *w, size_t w_stride, const uint16_t *v, size_t v_stride,
             int npos, int hd, int d0, const int H, const int C)
{
    __m512 acc[4][4];
    __mmask16 m[4];
    for (int c = 0; c < C; c++) m[c] = tail16(hd - d0, c);
    for (int i = 0; i < H; i++)
        for (int c = 0; c < C; c++) acc[i][c] = _mm512_setzero_ps();
    for (int p = 0; p < npos; p++) {
        const uint16_t *vp = v + (size_t)p * v_stride + d0;
        __m512 vv[4];
        for (int c = 0; c < C; c++) vv[c] = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m[c], vp + 16 * c));
        for (int i = 0; i < H; i++) {
            const __m512 wb = _mm512_set1_ps(w[(size_t)i * w_stride + p]);
            for (int c = 0; c < C; c++) acc[i][c] = _mm512_fmadd_ps(wb, vv[c], acc[i][c]);
        }
    }
    for (int i = 0; i < H; i++)
        for (int c = 0; c < C; c++) _mm512_mask_storeu_ps(out + (size_t)i * out_stride + d0 + 16 * c, m[c], acc[i][c]);
}

#define SLAB(H, C) wsum512_slab(out, out_stride, w, w_stride, v, v_stride, npos, hd, d0, H, C)
#define SLAB_C(H)                   \
    switch (C) {                    \
    case 1: SLAB(H, 1); break;      \
    case 2: SLAB(H, 2); break;      \
    case 3: SLAB(H, 3); break;      \
    default: SLAB(H, 4); break;     \
    }

static EMBER_TARGET_AVX512 void wsum_avx512(float *out0, size_t out_stride, const float *w0, size_t w_stride, int nh,
                                            const uint16_t *v, size_t v_stride, int npos, int hd)
{
    for (int h = 0; h < nh; h += 4) {
        const int H = nh - h < 4 ? nh - h : 4;
        float *out = out0 + (size_t)h * out_stride;
        const float *w = w0 + (size_t)h * w_stride;
        for (int d0 = 0; d0 < hd; d0 += 64) {
            const int C = (hd - d0 + 15) / 16 < 4 ? (hd - d0 + 15) / 16 : 4;
            switch (H) {
            case 1: SLAB_C(1); break;
            case 2: SLAB_C(2); break;
            case 3: SLAB_C(3); break;
            default: SLAB_C(4); break;
            }
        }
    }
}
#undef SLAB
#undef SLAB_C

/* ---- AVX2 (hd % 8 == 0; the scalar definition otherwise) ------------------ */

static inline EMBER_TARGET_AVX2 __attribute__((always_inline)) float sum16_avx2(__m256 lo, __m256 hi)
{
    __m256 t = _mm256_add_ps(lo, hi);
    __m128 u = _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
    __m128 x = _mm_add_ps(u, _mm_movehl_ps(u, u));
    return _mm_cvtss_f32(_mm_add_ss(x, _mm_shuffle_ps(x, x, 1)));
}

static EMBER_TARGET_AVX2 void scores_avx2(float *sc, size_t sc_stride, const uint16_t *k, size_t k_stride,
                                          const float *q, size_t q_stride, int nh, int npos, int hd, float scale,
                                          float *mx)
{
    const int n8 = hd / 8;   /* 8-wide pieces: even ones are lanes 0-7 of a 16-chunk, odd ones lanes 8-15 */
    float kf[512] __attribute__((aligned(32)));
    for (int h = 0; h < nh; h++) mx[h] = -INFINITY;
    for (int p = 0; p < npos; p++) {
        const uint16_t *kp = k + (size_t)p * k_stride;
        for (int j = 0; j < n8; j++)
            _mm256_store_ps(kf + 8 * j, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(kp + 8 * j))));
        for (int h = 0; h < nh; h++) {
            const float *qh = q + (size_t)h * q_stride;
            __m256 lo = _mm256_setzero_ps(), hi = lo;
            for (int j = 0; j + 1 < n8; j += 2) {
                lo = _mm256_fmadd_ps(_mm256_loadu_ps(qh + 8 * j), _mm256_load_ps(kf + 8 * j), lo);
                hi = _mm256_fmadd_ps(_mm256_loadu_ps(qh + 8 * j + 8), _mm256_load_ps(kf + 8 * j + 8), hi);
            }
            if (n8 & 1) lo = _mm256_fmadd_ps(_mm256_loadu_ps(qh + 8 * (n8 - 1)), _mm256_load_ps(kf + 8 * (n8 - 1)), lo);
            const float s = sum16_avx2(lo, hi) * scale;
            sc[(size_t)h * sc_stride + p] = s;
            if (s > mx[h]) mx[h] = s;
        }
    }
}

static EMBER_TARGET_AVX2 void wsum_avx2(float *out, size_t out_stride, const float *w, size_t w_stride, int nh,
                                        const uint16_t *v, size_t v_stride, int npos, int hd)
{
    for (int h = 0; h < nh; h++) {
        const float *wh = w + (size_t)h * w_stride;
        float *o = out + (size_t)h * out_stride;
        for (int d0 = 0; d0 < hd; d0 += 32) {
            const int C = (hd - d0) / 8 < 4 ? (hd - d0) / 8 : 4;
            __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
            for (int p = 0; p < npos; p++) {
                const uint16_t *vp = v + (size_t)p * v_stride + d0;
                const __m256 wb = _mm256_set1_ps(wh[p]);
                for (int c = 0; c < C; c++)
                    acc[c] = _mm256_fmadd_ps(wb, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(vp + 8 * c))), acc[c]);
            }
            for (int c = 0; c < C; c++) _mm256_storeu_ps(o + d0 + 8 * c, acc[c]);
        }
    }
}

#endif /* EMBER_SIMD */

/* ---- dispatch -------------------------------------------------------------- */

void ember_attf_scores(float *sc, size_t sc_stride, const uint16_t *k, size_t k_stride, const float *q,
                       size_t q_stride, int nh, int npos, int hd, float scale, float *mx)
{
    /* AVX-512 (hd % 16 == 0): the batched reference block, whose order is
       this definition's (refnum.c); other widths take AVX2 or the
       definition */
    if (ember_ref_scores_f32q(sc, sc_stride, k, k_stride, q, q_stride, nh, npos, hd, scale, mx)) return;
#ifdef EMBER_SIMD
    if (hd <= 512 && hd % 8 == 0 && ember_cpu_isa() >= EMBER_ISA_AVX2) {
        scores_avx2(sc, sc_stride, k, k_stride, q, q_stride, nh, npos, hd, scale, mx);
        return;
    }
#endif
    ember_attf_scores_scalar(sc, sc_stride, k, k_stride, q, q_stride, nh, npos, hd, scale, mx);
}

void ember_attf_wsum(float *out, size_t out_stride, const float *w, size_t w_stride, int nh, const uint16_t *v,
                     size_t v_stride, int npos, int hd)
{
#ifdef EMBER_SIMD
    if (ember_cpu_isa() >= EMBER_ISA_AVX512) {
        wsum_avx512(out, out_stride, w, w_stride, nh, v, v_stride, npos, hd);
        return;
    }
    if (hd % 8 == 0 && ember_cpu_isa() >= EMBER_ISA_AVX2) {
        wsum_avx2(out, out_stride, w, w_stride, nh, v, v_stride, npos, hd);
        return;
    }
#endif
    ember_attf_wsum_scalar(out, out_stride, w, w_stride, nh, v, v_stride, npos, hd);
}
