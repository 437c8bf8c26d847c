/* The reference's float order (refnum.h) on AVX2 + FMA + F16C: each step
   does the scalar definition's operations lane for lane, a 16-lane
   accumulator being two 8-lane registers, and the same trees for sums, so
   it gives the scalar bits.  FMA stands where the scalar code adds an
   exact product (fp16 times fp16, or an fp16-rounded weight times fp16),
   where fusing cannot change the sum.  Cases outside a fast path (an exp
   whose result would be subnormal, a NaN to round to fp16, head dims the
   order does not tile) take the scalar definition. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "dtype.h"
#include "refnum.h"
#include "refnum_ops.h"
#include "simd.h"

#ifdef EMBER_SIMD
#define INLINE2 static inline __attribute__((always_inline)) EMBER_TARGET_AVX2

/* exp of 8 lanes; false when a lane's 2^n is outside -125..127, where the
   scalar ldexpf rounds into subnormals or saturates (and for NaN): the
   caller then takes the scalar path.  Inside, j * 2^n is exact. */
INLINE2 bool exp8(__m256 x, __m256 *out)
{
    const __m256 r = _mm256_set1_ps(EXP_SHIFT);
    __m256 z = _mm256_fmadd_ps(x, _mm256_set1_ps(EXP_INVLN2), r);
    __m256 n = _mm256_sub_ps(z, r);
    __m256 ok = _mm256_and_ps(_mm256_cmp_ps(n, _mm256_set1_ps(-125.0f), _CMP_GE_OQ),
                              _mm256_cmp_ps(n, _mm256_set1_ps(127.0f), _CMP_LE_OQ));
    if (_mm256_movemask_ps(ok) != 0xff) return false;
    __m256 b = _mm256_fnmadd_ps(n, _mm256_set1_ps(EXP_LN2_LO), _mm256_fnmadd_ps(n, _mm256_set1_ps(EXP_LN2_HI), x));
    __m256 u = _mm256_mul_ps(b, b);
    __m256 j = _mm256_fmadd_ps(
        _mm256_fmadd_ps(_mm256_fmadd_ps(_mm256_set1_ps(EXP_C1), b, _mm256_set1_ps(EXP_C2)), u,
                        _mm256_fmadd_ps(_mm256_set1_ps(EXP_C3), b, _mm256_set1_ps(EXP_C4))),
        u, _mm256_fmadd_ps(_mm256_set1_ps(EXP_C5), b, _mm256_set1_ps(1.0f)));
    __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    *out = _mm256_mul_ps(j, _mm256_castsi256_ps(e));
    return true;
}

static EMBER_TARGET_AVX2 void exp16_avx2(float *y, const float *x, float sub)
{
    const __m256 s = _mm256_set1_ps(sub);
    __m256 a, b;
    if (exp8(_mm256_sub_ps(_mm256_loadu_ps(x), s), &a) && exp8(_mm256_sub_ps(_mm256_loadu_ps(x + 8), s), &b)) {
        _mm256_storeu_ps(y, a);
        _mm256_storeu_ps(y + 8, b);
    } else {
        ember_refnum_exp16_scalar(y, x, sub);
    }
}

static EMBER_TARGET_AVX2 void silu16_avx2(float *g, const float *u)
{
    __m256 x0 = _mm256_loadu_ps(g), x1 = _mm256_loadu_ps(g + 8), e0, e1;
    if (!exp8(_mm256_sub_ps(_mm256_setzero_ps(), x0), &e0) || !exp8(_mm256_sub_ps(_mm256_setzero_ps(), x1), &e1)) {
        ember_refnum_silu16_scalar(g, u);
        return;
    }
    const __m256 one = _mm256_set1_ps(1.0f);
    _mm256_storeu_ps(g, _mm256_mul_ps(_mm256_div_ps(x0, _mm256_add_ps(one, e0)), _mm256_loadu_ps(u)));
    _mm256_storeu_ps(g + 8, _mm256_mul_ps(_mm256_div_ps(x1, _mm256_add_ps(one, e1)), _mm256_loadu_ps(u + 8)));
}

/* refnum.c's gelu16 */
static EMBER_TARGET_AVX2 void gelu16_avx2(float *g, const float *u)
{
    const __m256 one = _mm256_set1_ps(1.0f);
    __m256 x[2], arg[2], e[2];
    for (int h = 0; h < 2; h++) {
        x[h] = _mm256_loadu_ps(g + 8 * h);
        arg[h] = _mm256_mul_ps(_mm256_fmadd_ps(x[h], _mm256_mul_ps(_mm256_set1_ps(GELU_A), x[h]), one),
                               _mm256_mul_ps(_mm256_set1_ps(GELU_2C), x[h]));
        if (!exp8(arg[h], &e[h])) {
            ember_refnum_gelu16_scalar(g, u);
            return;
        }
    }
    for (int h = 0; h < 2; h++) {
        __m256 ratio = _mm256_div_ps(e[h], _mm256_add_ps(e[h], one));
        __m256 big = _mm256_cmp_ps(arg[h], _mm256_set1_ps(30.0f), _CMP_GT_OQ);
        _mm256_storeu_ps(g + 8 * h, _mm256_mul_ps(_mm256_mul_ps(x[h], _mm256_blendv_ps(ratio, one, big)),
                                                  _mm256_loadu_ps(u + 8 * h)));
    }
}

INLINE2 __m256 ldh8(const uint16_t *p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p)); }

/* ember_ref_sum16 of the 16 lanes lo | hi */
INLINE2 float sum16_avx2(__m256 lo, __m256 hi)
{
    __m256 t = _mm256_add_ps(hi, lo);
    __m128 u = _mm_add_ps(_mm256_extractf128_ps(t, 1), _mm256_castps256_ps128(t));
    __m128 w = _mm_add_ps(u, _mm_shuffle_ps(u, u, _MM_SHUFFLE(1, 0, 3, 2)));
    return _mm_cvtss_f32(_mm_add_ss(w, _mm_shuffle_ps(w, w, _MM_SHUFFLE(3, 2, 0, 1))));
}

/* One position's score for each of hn queries (already converted, nq8
   registers each): the row is converted once for all of them.  gemm: 16
   lanes over hd; vec: 4 x 16 lanes over hd (hd % 64 == 0 here, so no
   double tail). */
/* rows of up to SCORES_MAXQ8 x 8 dims (512: Gemma 4's global heads) */
#define SCORES_MAXQ8 64

INLINE2 void scores_row(float *sc, size_t sc_stride, int p, const uint16_t *k, const __m256 *qv, int hn,
                        int gemm, float scale, float *mx, const int nq8)
{
    __m256 kv[SCORES_MAXQ8];
    _Pragma("GCC unroll 16") for (int i = 0; i < nq8; i++) kv[i] = ldh8(k + 8 * i);
    for (int h = 0; h < hn; h++) {
        const __m256 *qh = qv + h * SCORES_MAXQ8;
        float d;
        if (gemm) {
            __m256 lo = _mm256_setzero_ps(), hi = lo;
            _Pragma("GCC unroll 8") for (int i = 0; i < nq8; i += 2) {
                lo = _mm256_fmadd_ps(kv[i], qh[i], lo);
                hi = _mm256_fmadd_ps(kv[i + 1], qh[i + 1], hi);
            }
            d = sum16_avx2(lo, hi);
        } else {
            __m256 s[8];
            _Pragma("GCC unroll 8") for (int j = 0; j < 8; j++) s[j] = _mm256_setzero_ps();
            _Pragma("GCC unroll 4") for (int i = 0; i < nq8; i += 8)
                _Pragma("GCC unroll 8") for (int j = 0; j < 8; j++) s[j] = _mm256_fmadd_ps(kv[i + j], qh[i + j], s[j]);
            /* s[2j], s[2j+1]: lanes 0-7 and 8-15 of the scalar's s[j] */
            __m256 lo = _mm256_add_ps(_mm256_add_ps(s[0], s[4]), _mm256_add_ps(s[2], s[6]));
            __m256 hi = _mm256_add_ps(_mm256_add_ps(s[1], s[5]), _mm256_add_ps(s[3], s[7]));
            d = sum16_avx2(lo, hi);
        }
        float v = d * scale;
        sc[(size_t)h * sc_stride + (size_t)p] = v;
        if (v > mx[h]) mx[h] = v;
    }
}

/* A single token's dot product over its np (a multiple of 64) leading
   dims: its 64-wide steps as 8 registers, folded as scores_row folds them. */
INLINE2 float steps64_avx2(const uint16_t *a, const uint16_t *b, int np)
{
    __m256 s[8];
    for (int j = 0; j < 8; j++) s[j] = _mm256_setzero_ps();
    for (int i = 0; i < np; i += 64)
        _Pragma("GCC unroll 8") for (int j = 0; j < 8; j++)
            s[j] = _mm256_fmadd_ps(ldh8(a + i + 8 * j), ldh8(b + i + 8 * j), s[j]);
    __m256 lo = _mm256_add_ps(_mm256_add_ps(s[0], s[4]), _mm256_add_ps(s[2], s[6]));
    __m256 hi = _mm256_add_ps(_mm256_add_ps(s[1], s[5]), _mm256_add_ps(s[3], s[7]));
    return sum16_avx2(lo, hi);
}

/* A single token's scores of one query over npos rows when hd is not whole
   64-wide steps (Phi-3's heads of 96): the steps, then the reference's
   tail of products added one by one in double, 4 rows side by side, one
   row per double lane, each in its own order (refnum.c's 8-row form). */
static EMBER_TARGET_AVX2 float scores_tail4_avx2(float *sc, const uint16_t *k, size_t stride, const uint16_t *q,
                                                 int npos, int hd, float scale)
{
    const int np = hd & ~63, nt = hd - np;
    float qt[64], prod[64][4];
    for (int i = 0; i < nt; i++) qt[i] = ember_fp16_to_f32(q[np + i]);
    float m = -INFINITY;
    for (int p = 0; p < npos; p += 4) {
        const int nr = npos - p < 4 ? npos - p : 4;
        double head[4] = {0, 0, 0, 0};
        for (int r = 0; r < nr; r++) {
            const uint16_t *kr = k + (size_t)(p + r) * stride;
            head[r] = steps64_avx2(kr, q, np);
            int i = 0;
            for (; i + 8 <= nt; i += 8) {
                float t[8];
                _mm256_storeu_ps(t, _mm256_mul_ps(ldh8(kr + np + i), _mm256_loadu_ps(qt + i)));
                for (int j = 0; j < 8; j++) prod[i + j][r] = t[j];
            }
            for (; i < nt; i++) prod[i][r] = ember_fp16_to_f32(kr[np + i]) * qt[i];
        }
        for (int r = nr; r < 4; r++)
            for (int i = 0; i < nt; i++) prod[i][r] = 0;
        __m256d acc = _mm256_loadu_pd(head);
        for (int i = 0; i < nt; i++) acc = _mm256_add_pd(acc, _mm256_cvtps_pd(_mm_loadu_ps(prod[i])));
        float v[4];
        _mm_storeu_ps(v, _mm_mul_ps(_mm256_cvtpd_ps(acc), _mm_set1_ps(scale)));
        for (int r = 0; r < nr; r++) {
            sc[p + r] = v[r];
            if (v[r] > m) m = v[r];
        }
    }
    return m;
}

static EMBER_TARGET_AVX2 void scores_heads_avx2(float *sc, size_t sc_stride, const uint16_t *k, size_t stride,
                                                const uint16_t *q, size_t q_stride, int nh, int npos, int hd,
                                                int gemm, float scale, float *mx)
{
    enum { HQ = 4 };
    if (!gemm && hd % 64 != 0) {
        for (int h = 0; h < nh; h++)
            mx[h] = scores_tail4_avx2(sc + (size_t)h * sc_stride, k, stride, q + (size_t)h * q_stride, npos, hd, scale);
        return;
    }
    if ((gemm && hd % 16 != 0) || hd > 8 * SCORES_MAXQ8) {
        ember_refnum_scores_heads_scalar(sc, sc_stride, k, stride, q, q_stride, nh, npos, hd, gemm, scale, mx);
        return;
    }
    const int nq8 = hd / 8;
    const size_t ahead = (4096 / (stride * sizeof *k) + 1) * stride;   /* rows ~4 KiB ahead, as refnum.c */
    for (int h0 = 0; h0 < nh; h0 += HQ) {
        const int hn = nh - h0 < HQ ? nh - h0 : HQ;
        __m256 qv[HQ * SCORES_MAXQ8];
        for (int h = 0; h < hn; h++) {
            mx[h0 + h] = -INFINITY;
            for (int i = 0; i < nq8; i++) qv[h * SCORES_MAXQ8 + i] = ldh8(q + (size_t)(h0 + h) * q_stride + 8 * i);
        }
        float *sch = sc + (size_t)h0 * sc_stride;
        for (int p = 0; p < npos; p++) {
            const uint16_t *kp = k + (size_t)p * stride;
            for (int o = 0; o < hd * 2; o += 64) _mm_prefetch((const char *)(kp + ahead) + o, _MM_HINT_T0);
            if (nq8 == 8) scores_row(sch, sc_stride, p, kp, qv, hn, gemm, scale, mx + h0, 8);
            else if (nq8 == 16) scores_row(sch, sc_stride, p, kp, qv, hn, gemm, scale, mx + h0, 16);
            else scores_row(sch, sc_stride, p, kp, qv, hn, gemm, scale, mx + h0, nq8);
        }
    }
}

/* The lane accumulators (refnum.c's wsum_lanes, 8-wide): accumulator row r
   of head i takes positions r, r + lanes, ... in order, 32 dimensions of
   two heads at a time in registers. */
static EMBER_TARGET_AVX2 void wsum_lanes_avx2(const float *w, size_t w_stride, int nh, const uint16_t *v,
                                              size_t stride, int hd, int lanes, int end, float *acc,
                                              size_t acc_stride)
{
    enum { HW = 2 };
    for (int r = 0; r < lanes && r < end; r++)
        for (int d0 = 0; d0 < hd; d0 += 32) {
            const int nd = hd - d0 < 32 ? (hd - d0) / 8 : 4;
            for (int h0 = 0; h0 < nh; h0 += HW) {
                const int hn = nh - h0 < HW ? nh - h0 : HW;
                __m256 c[HW][4];
                _Pragma("GCC unroll 2") for (int i = 0; i < HW; i++)
                    _Pragma("GCC unroll 4") for (int x = 0; x < 4; x++) c[i][x] = _mm256_setzero_ps();
                const float *wh = w + (size_t)h0 * w_stride;
                for (int p = r; p < end; p += lanes) {
                    const uint16_t *vp = v + (size_t)p * stride + d0;
                    __m256 vv[4];
                    _Pragma("GCC unroll 4") for (int x = 0; x < 4; x++) vv[x] = x < nd ? ldh8(vp + 8 * x) : _mm256_setzero_ps();
                    _Pragma("GCC unroll 2") for (int i = 0; i < HW; i++) {
                        if (i >= hn) break;
                        __m256 wp = _mm256_set1_ps(wh[(size_t)i * w_stride + (size_t)p]);
                        _Pragma("GCC unroll 4") for (int x = 0; x < 4; x++)
                            if (x < nd) c[i][x] = _mm256_fmadd_ps(wp, vv[x], c[i][x]);
                    }
                }
                for (int i = 0; i < hn; i++) {
                    float *a = acc + (size_t)(h0 + i) * acc_stride + (size_t)r * (size_t)hd + d0;
                    for (int x = 0; x < nd; x++) _mm256_storeu_ps(a + 8 * x, c[i][x]);
                }
            }
        }
    for (int i = 0; i < nh; i++)
        for (int r = end; r < lanes; r++)
            memset(acc + (size_t)i * acc_stride + (size_t)r * (size_t)hd, 0, (size_t)hd * sizeof *acc);
}

/* The lanes' tree sum of one head (and for vec, the positions past the
   lanes in double), 8 dimensions at a time. */
static EMBER_TARGET_AVX2 void wsum_finish_avx2(float *out, const float *w, const uint16_t *v, size_t stride,
                                               int npos, int hd, int end, int gemm, const float *acc)
{
    const size_t H = (size_t)hd;
    for (int d = 0; d < hd; d += 8) {
        __m256 c[16];
        for (int l = 0; l < 16; l++) {
            const float *r = acc + (size_t)l * H + d;
            c[l] = gemm ? _mm256_loadu_ps(r)
                        : _mm256_add_ps(_mm256_add_ps(_mm256_loadu_ps(r), _mm256_loadu_ps(r + 32 * H)),
                                        _mm256_add_ps(_mm256_loadu_ps(r + 16 * H), _mm256_loadu_ps(r + 48 * H)));
        }
        __m256 t[8], u[4];
        for (int i = 0; i < 8; i++) t[i] = _mm256_add_ps(c[i + 8], c[i]);
        for (int i = 0; i < 4; i++) u[i] = _mm256_add_ps(t[i + 4], t[i]);
        __m256 s = _mm256_add_ps(_mm256_add_ps(u[0], u[2]), _mm256_add_ps(u[1], u[3]));
        if (gemm || end == npos) {
            _mm256_storeu_ps(out + d, s);
        } else {
            __m256d lo = _mm256_cvtps_pd(_mm256_castps256_ps128(s)), hi = _mm256_cvtps_pd(_mm256_extractf128_ps(s, 1));
            for (int p = end; p < npos; p++) {
                __m256 pr = _mm256_mul_ps(_mm256_set1_ps(w[p]), ldh8(v + (size_t)p * stride + d));
                lo = _mm256_add_pd(lo, _mm256_cvtps_pd(_mm256_castps256_ps128(pr)));
                hi = _mm256_add_pd(hi, _mm256_cvtps_pd(_mm256_extractf128_ps(pr, 1)));
            }
            _mm_storeu_ps(out + d, _mm256_cvtpd_ps(lo));
            _mm_storeu_ps(out + d + 4, _mm256_cvtpd_ps(hi));
        }
    }
}

static EMBER_TARGET_AVX2 void wsum_heads_avx2(float *out, size_t out_stride, const float *w, size_t w_stride, int nh,
                                              const uint16_t *v, size_t stride, int npos, int hd, int n_kv, int gemm,
                                              float *acc)
{
    if (hd % 16) {
        ember_refnum_wsum_heads_scalar(out, out_stride, w, w_stride, nh, v, stride, npos, hd, n_kv, gemm, acc);
        return;
    }
    int lanes = gemm ? 16 : 64, end = gemm ? npos : (n_kv & ~63);
    if (end > npos) end = npos;
    const size_t as = (size_t)64 * (size_t)hd;
    wsum_lanes_avx2(w, w_stride, nh, v, stride, hd, lanes, end, acc, as);
    for (int i = 0; i < nh; i++)
        wsum_finish_avx2(out + (size_t)i * out_stride, w + (size_t)i * w_stride, v, stride, npos, hd, end, gemm,
                         acc + (size_t)i * as);
}

/* The hardware's round-to-nearest-even equals ember_f32_to_fp16 for every
   non-NaN float (refnum.c); a chunk with a NaN takes the scalar path. */
INLINE2 bool f16_8(__m256 x, __m128i *h)
{
    if (_mm256_movemask_ps(_mm256_cmp_ps(x, x, _CMP_UNORD_Q))) return false;
    *h = _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    return true;
}

static EMBER_TARGET_AVX2 void to_f16_avx2(uint16_t *dst, const float *src, int n)
{
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h;
        if (f16_8(_mm256_loadu_ps(src + i), &h)) _mm_storeu_si128((__m128i *)(dst + i), h);
        else ember_refnum_to_f16_scalar(dst + i, src + i, 8);
    }
    if (i < n) ember_refnum_to_f16_scalar(dst + i, src + i, n - i);
}

static EMBER_TARGET_AVX2 void scale_f16r_avx2(float *x, float s, int n)
{
    const __m256 sv = _mm256_set1_ps(s);
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h;
        if (f16_8(_mm256_mul_ps(_mm256_loadu_ps(x + i), sv), &h)) _mm256_storeu_ps(x + i, _mm256_cvtph_ps(h));
        else ember_refnum_scale_f16r_scalar(x + i, s, 8);
    }
    if (i < n) ember_refnum_scale_f16r_scalar(x + i, s, n - i);
}

/* refnum.c's softcap16; lanes whose exp leaves exp8's range take the
   scalar definition, all 16 of them */
static EMBER_TARGET_AVX2 void softcap16_avx2(float *x, float inv, float cap, float *m)
{
    const __m256 one = _mm256_set1_ps(1.0f), two = _mm256_set1_ps(2.0f), vi = _mm256_set1_ps(inv);
    __m256 e[2];
    for (int h = 0; h < 2; h++)
        if (!exp8(_mm256_mul_ps(two, _mm256_mul_ps(_mm256_loadu_ps(x + 8 * h), vi)), &e[h])) {
            ember_refnum_softcap16_scalar(x, inv, cap, m);
            return;
        }
    for (int h = 0; h < 2; h++) {
        __m256 y = _mm256_mul_ps(_mm256_sub_ps(one, _mm256_div_ps(two, _mm256_add_ps(e[h], one))), _mm256_set1_ps(cap));
        _mm256_storeu_ps(x + 8 * h, y);
        _mm256_storeu_ps(m + 8 * h, _mm256_max_ps(y, _mm256_loadu_ps(m + 8 * h)));
    }
}

/* The scalar definition where fmaf is the FMA instruction (no libm call). */
static EMBER_TARGET_AVX2 void rope_avx2(float *v, int nh, int hd, int n_rot, const float *cs, const float *sn, int neox)
{
    ember_refnum_rope_body(v, nh, hd, n_rot, cs, sn, neox);
}

const refnum_ops ember_refnum_avx2 = {exp16_avx2, silu16_avx2, gelu16_avx2, scores_heads_avx2, to_f16_avx2, scale_f16r_avx2,
                                      wsum_heads_avx2, rope_avx2, NULL, softcap16_avx2};
#endif
