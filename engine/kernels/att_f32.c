/* Attention with f32 queries and weights over fp16 KV rows (att_f32.h).
   The scores convert a K row once and take it against up to four query
   heads at a time (one accumulator each, so a head's sum is the same
   whatever it is grouped with); the weighted sum converts each V slab
   once for up to four heads that share it. */
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

/* ember_ref_sum16's tree ((v[i] + v[i+8]), then + the upper 4, then
   (u0 + u2) + (u1 + u3)) of four sums at once, the same pairs added (an
   addition's operand order does not change its bits): the halves of two
   sums side by side, then the quarters of four, then the in-lane pairs;
   sum i ends in lane 4i, returned in lane i. */
static inline EMBER_TARGET_AVX512 __attribute__((always_inline)) __m128 sum16x4_512(__m512 a0, __m512 a1, __m512 a2,
                                                                                    __m512 a3)
{
    /* t01 = [a0.lo8 + a0.hi8 | a1.lo8 + a1.hi8], t23 likewise */
    const __m512 t01 = _mm512_add_ps(_mm512_shuffle_f32x4(a0, a1, 0x44), _mm512_shuffle_f32x4(a0, a1, 0xee));
    const __m512 t23 = _mm512_add_ps(_mm512_shuffle_f32x4(a2, a3, 0x44), _mm512_shuffle_f32x4(a2, a3, 0xee));
    /* u = [t0.lo4 + t0.hi4 | t1... | t2... | t3...] */
    const __m512 u = _mm512_add_ps(_mm512_shuffle_f32x4(t01, t23, 0x88), _mm512_shuffle_f32x4(t01, t23, 0xdd));
    /* (u0 + u2), (u1 + u3) in lanes 0, 1 of each group, then their sum in lane 0 */
    const __m512 w = _mm512_add_ps(u, _mm512_permute_ps(u, 0xee));
    const __m512 x = _mm512_add_ps(w, _mm512_permute_ps(w, 0x55));
    return _mm512_castps512_ps128(_mm512_maskz_compress_ps(0x1111, x));
}

static inline EMBER_TARGET_AVX512 __attribute__((always_inline)) __mmask16 tail16(int hd, int c)
{
    const int r = hd - 16 * c;
    return r >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << r) - 1);
}

/* Four K rows against four query heads at a time: per 16-wide chunk, 4
   row loads and 4 query loads feed 16 fmas (one accumulator per row and
   head, so each score's arithmetic is the definition's whatever the
   grouping); a short block repeats its last row or head and drops those
   results. */
static EMBER_TARGET_AVX512 void scores_avx512(float *sc, size_t sc_stride, const uint16_t *k, size_t k_stride,
                                              const float *q, size_t q_stride, int nh, int npos, int hd, float scale,
                                              float *mx)
{
    const int nc = (hd + 15) / 16;
    float kf[4][512 + 16] __attribute__((aligned(64)));
    for (int h = 0; h < nh; h++) mx[h] = -INFINITY;
    const __m128 vs = _mm_set1_ps(scale);
    for (int p = 0; p < npos; p += 4) {
        const int pb = npos - p < 4 ? npos - p : 4;
        for (int r = 0; r < pb; r++) {
            const uint16_t *kp = k + (size_t)(p + r) * k_stride;
            for (int c = 0; c < nc; c++)
                _mm512_store_ps(kf[r] + 16 * c, _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(tail16(hd, c), kp + 16 * c)));
        }
        const float *k0 = kf[0], *k1 = kf[pb > 1 ? 1 : 0], *k2 = kf[pb > 2 ? 2 : 0], *k3 = kf[pb > 3 ? 3 : 0];
        for (int h = 0; h < nh; h += 4) {
            const int hb = nh - h < 4 ? nh - h : 4;
            const float *q0 = q + (size_t)h * q_stride, *q1 = q0 + (hb > 1 ? q_stride : 0),
                        *q2 = q0 + (hb > 2 ? 2 * q_stride : 0), *q3 = q0 + (hb > 3 ? 3 * q_stride : 0);
            __m512 a[4][4];
            for (int r = 0; r < 4; r++)
                for (int i = 0; i < 4; i++) a[r][i] = _mm512_setzero_ps();
            for (int c = 0; c < nc; c++) {
                const __mmask16 m = tail16(hd, c);
                const __m512 x0 = _mm512_maskz_loadu_ps(m, q0 + 16 * c), x1 = _mm512_maskz_loadu_ps(m, q1 + 16 * c),
                             x2 = _mm512_maskz_loadu_ps(m, q2 + 16 * c), x3 = _mm512_maskz_loadu_ps(m, q3 + 16 * c);
#define ROW(r, kr)                                                   \
    {                                                                \
        const __m512 kv = _mm512_load_ps(kr + 16 * c);               \
        a[r][0] = _mm512_mask3_fmadd_ps(x0, kv, a[r][0], m);         \
        a[r][1] = _mm512_mask3_fmadd_ps(x1, kv, a[r][1], m);         \
        a[r][2] = _mm512_mask3_fmadd_ps(x2, kv, a[r][2], m);         \
        a[r][3] = _mm512_mask3_fmadd_ps(x3, kv, a[r][3], m);         \
    }
                ROW(0, k0)
                ROW(1, k1)
                ROW(2, k2)
                ROW(3, k3)
#undef ROW
            }
            for (int r = 0; r < pb; r++) {
                float v[4];
                _mm_storeu_ps(v, _mm_mul_ps(sum16x4_512(a[r][0], a[r][1], a[r][2], a[r][3]), vs));
                for (int i = 0; i < hb; i++) {
                    sc[(size_t)(h + i) * sc_stride + p + r] = v[i];
                    if (v[i] > mx[h + i]) mx[h + i] = v[i];
                }
            }
        }
    }
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
    /* the batched reference block's order is this definition's (refnum.c) */
    if (ember_ref_scores_f32q(sc, sc_stride, k, k_stride, q, q_stride, nh, npos, hd, scale, mx)) return;
#ifdef EMBER_SIMD
    if (hd <= 512 && ember_cpu_isa() >= EMBER_ISA_AVX512) {
        scores_avx512(sc, sc_stride, k, k_stride, q, q_stride, nh, npos, hd, scale, mx);
        return;
    }
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
