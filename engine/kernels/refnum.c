/* Reference float order, scalar definition and AVX-512 speed (refnum.h).
   The scalar functions define the results; the AVX-512 ones do the same
   operations lane for lane (fma where the scalar code has fmaf, the same
   tree for sums), so both give the same bits. */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

#include "dtype.h"
#include "kernels.h"
#include "refnum.h"
#include "refnum_ops.h"
#include "simd.h"

float ember_ref_sum16(const float v[16])
{
    float t[8], u[4];
    for (int i = 0; i < 8; i++) t[i] = v[i + 8] + v[i];
    for (int i = 0; i < 4; i++) u[i] = t[i + 4] + t[i];
    return (u[0] + u[2]) + (u[1] + u[3]);
}

/* The reference's exp (EXP_* in refnum_ops.h). */

float ember_ref_expf(float x)
{
    float z = fmaf(x, EXP_INVLN2, EXP_SHIFT);
    float n = z - EXP_SHIFT;
    float b = fmaf(-n, EXP_LN2_LO, fmaf(-n, EXP_LN2_HI, x));
    float u = b * b;
    float j = fmaf(fmaf(fmaf(EXP_C1, b, EXP_C2), u, fmaf(EXP_C3, b, EXP_C4)), u, fmaf(EXP_C5, b, 1.0f));
    if (n != n) return n;
    if (fabsf(n) > 192.0f) return n <= 0.0f ? 0.0f : INFINITY;
    return ldexpf(j, (int)n);
}

void ember_refnum_exp16_scalar(float *y, const float *x, float sub)
{
    for (int l = 0; l < 16; l++) y[l] = ember_ref_expf(x[l] - sub);
}

void ember_refnum_silu16_scalar(float *g, const float *u)
{
    for (int l = 0; l < 16; l++) g[l] = g[l] / (1.0f + ember_ref_expf(0.0f - g[l])) * u[l];
}

/* GELU's tanh form through the exp above (GELU_* in refnum_ops.h). */

static float gelu_one(float x)
{
    float arg = fmaf(x, GELU_A * x, 1.0f) * (GELU_2C * x);
    float e = ember_ref_expf(arg);
    return x * (arg > 30.0f ? 1.0f : e / (e + 1.0f));
}

void ember_refnum_gelu16_scalar(float *g, const float *u)
{
    for (int l = 0; l < 16; l++) g[l] = gelu_one(g[l]) * u[l];
}

static float f16(uint16_t h) { return ember_fp16_to_f32(h); }

static float dot_gemm_scalar(const uint16_t *a, const uint16_t *b, int n)
{
    float s[16] = {0};
    for (int i = 0; i < n; i += 16)
        for (int l = 0; l < 16; l++) s[l] += f16(a[i + l]) * f16(b[i + l]);
    return ember_ref_sum16(s);
}

static float dot_vec_scalar(const uint16_t *a, const uint16_t *b, int n)
{
    int np = n & ~63;
    float s[4][16] = {{0}};
    for (int i = 0; i < np; i += 64)
        for (int j = 0; j < 4; j++)
            for (int l = 0; l < 16; l++) s[j][l] += f16(a[i + 16 * j + l]) * f16(b[i + 16 * j + l]);
    for (int l = 0; l < 16; l++) {
        s[0][l] += s[2][l];
        s[1][l] += s[3][l];
        s[0][l] += s[1][l];
    }
    double sum = ember_ref_sum16(s[0]);
    for (int i = np; i < n; i++) sum += (double)(f16(a[i]) * f16(b[i]));
    return (float)sum;
}

/* acc row r collects positions p = r (mod lanes) below the lane region's end */
static void wsum_scalar(float *out, const float *w, const uint16_t *v, size_t stride,
                        int npos, int hd, int n_kv, int gemm, float *acc)
{
    int lanes = gemm ? 16 : 64, end = gemm ? npos : (n_kv & ~63);
    if (end > npos) end = npos;
    memset(acc, 0, (size_t)lanes * (size_t)hd * sizeof *acc);
    for (int p = 0; p < end; p++) {
        float *a = acc + (size_t)(p % lanes) * (size_t)hd;
        for (int d = 0; d < hd; d++) a[d] += w[p] * f16(v[(size_t)p * stride + d]);
    }
    for (int d = 0; d < hd; d++) {
        float c[16];
        for (int l = 0; l < 16; l++) {
            const float *r = acc + (size_t)l * (size_t)hd + d;
            c[l] = gemm ? r[0] : (r[0] + r[32 * (size_t)hd]) + (r[16 * (size_t)hd] + r[48 * (size_t)hd]);
        }
        if (gemm) {
            out[d] = ember_ref_sum16(c);
        } else {
            double sum = ember_ref_sum16(c);
            for (int p = end; p < npos; p++) sum += (double)(w[p] * f16(v[(size_t)p * stride + d]));
            out[d] = (float)sum;
        }
    }
}

static float scores_scalar(float *sc, const uint16_t *k, size_t stride, const uint16_t *q,
                           int npos, int hd, int gemm, float scale)
{
    float mx = -INFINITY;
    for (int p = 0; p < npos; p++) {
        sc[p] = (gemm ? dot_gemm_scalar : dot_vec_scalar)(k + (size_t)p * stride, q, hd) * scale;
        if (sc[p] > mx) mx = sc[p];
    }
    return mx;
}

void ember_refnum_scores_heads_scalar(float *sc, size_t sc_stride, const uint16_t *k, size_t stride,
                                      const uint16_t *q, size_t q_stride, int nh, int npos, int hd, int gemm, float scale, float *mx)
{
    for (int h = 0; h < nh; h++)
        mx[h] = scores_scalar(sc + (size_t)h * sc_stride, k, stride, q + (size_t)h * q_stride, npos, hd, gemm, scale);
}

void ember_refnum_wsum_heads_scalar(float *out, size_t out_stride, const float *w, size_t w_stride, int nh,
                                    const uint16_t *v, size_t stride, int npos, int hd, int n_kv, int gemm, float *acc)
{
    for (int i = 0; i < nh; i++)
        wsum_scalar(out + (size_t)i * out_stride, w + (size_t)i * w_stride, v, stride, npos, hd, n_kv, gemm, acc);
}

void ember_refnum_to_f16_scalar(uint16_t *dst, const float *src, int n)
{
    for (int i = 0; i < n; i++) dst[i] = ember_f32_to_fp16(src[i]);
}

void ember_refnum_scale_f16r_scalar(float *x, float s, int n)
{
    for (int i = 0; i < n; i++) x[i] = ember_fp16_to_f32(ember_f32_to_fp16(x[i] * s));
}

void ember_refnum_rope_scalar(float *v, int nh, int hd, int n_rot, const float *cs, const float *sn, int neox)
{
    ember_refnum_rope_body(v, nh, hd, n_rot, cs, sn, neox);
}

#ifdef EMBER_SIMD
#define INLINE512 static inline __attribute__((always_inline)) EMBER_TARGET_AVX512

INLINE512 __m512 exp_avx512(__m512 x)
{
    const __m512 r = _mm512_set1_ps(EXP_SHIFT);
    __m512 z = _mm512_fmadd_ps(x, _mm512_set1_ps(EXP_INVLN2), r);
    __m512 n = _mm512_sub_ps(z, r);
    __m512 b = _mm512_fnmadd_ps(n, _mm512_set1_ps(EXP_LN2_LO),
                                _mm512_fnmadd_ps(n, _mm512_set1_ps(EXP_LN2_HI), x));
    __m512 u = _mm512_mul_ps(b, b);
    __m512 j = _mm512_fmadd_ps(
        _mm512_fmadd_ps(_mm512_fmadd_ps(_mm512_set1_ps(EXP_C1), b, _mm512_set1_ps(EXP_C2)), u,
                        _mm512_fmadd_ps(_mm512_set1_ps(EXP_C3), b, _mm512_set1_ps(EXP_C4))),
        u, _mm512_fmadd_ps(_mm512_set1_ps(EXP_C5), b, _mm512_set1_ps(1.0f)));
    __m512 res = _mm512_scalef_ps(j, n);
    __mmask16 big = _mm512_cmp_ps_mask(_mm512_abs_ps(n), _mm512_set1_ps(192.0f), _CMP_GT_OQ);
    if (!big) return res;
    __m512 alt = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(n, _mm512_setzero_ps(), _CMP_LE_OQ),
                                      _mm512_set1_ps(INFINITY), _mm512_setzero_ps());
    return _mm512_mask_blend_ps(big, res, alt);
}

static EMBER_TARGET_AVX512 void softcap16_avx512(float *x, float inv, float cap, float *m)
{
    const __m512 one = _mm512_set1_ps(1.0f), two = _mm512_set1_ps(2.0f);
    __m512 e = exp_avx512(_mm512_mul_ps(two, _mm512_mul_ps(_mm512_loadu_ps(x), _mm512_set1_ps(inv))));
    __m512 y = _mm512_mul_ps(_mm512_sub_ps(one, _mm512_div_ps(two, _mm512_add_ps(e, one))), _mm512_set1_ps(cap));
    _mm512_storeu_ps(x, y);
    /* max_ps(y, m) is y > m ? y : m, lane for lane (NaN and equal zeros: m) */
    _mm512_storeu_ps(m, _mm512_max_ps(y, _mm512_loadu_ps(m)));
}

/* the scalar tree of ember_ref_sum16, on one register */
INLINE512 float sum16_avx512(__m512 v)
{
    __m256 t = _mm256_add_ps(_mm512_extractf32x8_ps(v, 1), _mm512_castps512_ps256(v));
    __m128 u = _mm_add_ps(_mm256_extractf128_ps(t, 1), _mm256_castps256_ps128(t));
    __m128 w = _mm_add_ps(u, _mm_shuffle_ps(u, u, _MM_SHUFFLE(1, 0, 3, 2)));
    return _mm_cvtss_f32(_mm_add_ss(w, _mm_shuffle_ps(w, w, _MM_SHUFFLE(3, 2, 0, 1))));
}

static EMBER_TARGET_AVX512 void exp16_avx512(float *y, const float *x, float sub)
{
    _mm512_storeu_ps(y, exp_avx512(_mm512_sub_ps(_mm512_loadu_ps(x), _mm512_set1_ps(sub))));
}

static EMBER_TARGET_AVX512 void gelu16_avx512(float *g, const float *u)
{
    const __m512 one = _mm512_set1_ps(1.0f);
    __m512 x = _mm512_loadu_ps(g);
    __m512 arg = _mm512_mul_ps(_mm512_fmadd_ps(x, _mm512_mul_ps(_mm512_set1_ps(GELU_A), x), one),
                               _mm512_mul_ps(_mm512_set1_ps(GELU_2C), x));
    __m512 e = exp_avx512(arg);
    __m512 ratio = _mm512_div_ps(e, _mm512_add_ps(e, one));
    __mmask16 big = _mm512_cmp_ps_mask(arg, _mm512_set1_ps(30.0f), _CMP_GT_OQ);
    _mm512_storeu_ps(g, _mm512_mul_ps(_mm512_mul_ps(x, _mm512_mask_blend_ps(big, ratio, one)), _mm512_loadu_ps(u)));
}

/* The softmax row with exp and the tree sum in registers: the same
   steps as exp16 and ember_ref_sum16, without a call and a reload per 16
   (a fifth of the attention's time in a 4096-token prefill). */
static EMBER_TARGET_AVX512 double softmax_exp_avx512(float *y, const float *x, float max, int n)
{
    const __m512 m = _mm512_set1_ps(max);
    double sum = 0;
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 e = exp_avx512(_mm512_sub_ps(_mm512_loadu_ps(x + i), m));
        _mm512_storeu_ps(y + i, e);
        sum += (double)sum16_avx512(e);
    }
    if (i < n) {
        const __mmask16 k = (__mmask16)((1u << (n - i)) - 1);
        __m512 e = exp_avx512(_mm512_sub_ps(_mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), k, x + i), m));
        _mm512_storeu_ps(y + i, e);
        sum += (double)sum16_avx512(e);
    }
    return sum;
}

static EMBER_TARGET_AVX512 void silu16_avx512(float *g, const float *u)
{
    __m512 x = _mm512_loadu_ps(g);
    __m512 e = exp_avx512(_mm512_sub_ps(_mm512_setzero_ps(), x));
    __m512 s = _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
    _mm512_storeu_ps(g, _mm512_mul_ps(s, _mm512_loadu_ps(u)));
}

INLINE512 __m512 ldh(const uint16_t *p) { return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p)); }

static EMBER_TARGET_AVX512 float dot_gemm_avx512(const uint16_t *a, const uint16_t *b, int n)
{
    __m512 s = _mm512_setzero_ps();
    for (int i = 0; i < n; i += 16) s = _mm512_fmadd_ps(ldh(a + i), ldh(b + i), s);
    return sum16_avx512(s);
}

/* A single token's dot product over its np (a multiple of 64) leading
   dims: 4 x 16 lanes, folded as the reference folds them. */
INLINE512 float steps64_avx512(const uint16_t *a, const uint16_t *b, int np)
{
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    for (int i = 0; i < np; i += 64) {
        s0 = _mm512_fmadd_ps(ldh(a + i), ldh(b + i), s0);
        s1 = _mm512_fmadd_ps(ldh(a + i + 16), ldh(b + i + 16), s1);
        s2 = _mm512_fmadd_ps(ldh(a + i + 32), ldh(b + i + 32), s2);
        s3 = _mm512_fmadd_ps(ldh(a + i + 48), ldh(b + i + 48), s3);
    }
    return sum16_avx512(_mm512_add_ps(_mm512_add_ps(s0, s2), _mm512_add_ps(s1, s3)));
}

/* ...and its tail, product by product in double */
static EMBER_TARGET_AVX512 float dot_vec_avx512(const uint16_t *a, const uint16_t *b, int n)
{
    int np = n & ~63;
    double sum = steps64_avx512(a, b, np);
    for (int i = np; i < n; i++) sum += (double)(f16(a[i]) * f16(b[i]));
    return (float)sum;
}

/* The lane accumulators of nh heads that share the rows v: accumulator row
   r of head i (acc + i * acc_stride) takes positions r, r + lanes, ... in
   order, kept in registers 64 dimensions at a time.  Up to four heads run
   side by side, so each row is read and converted once for them and their
   chains hide each other's latency; every head's order is its own.
   A single token's 64 lanes take the rows in chunks of 64 KiB, the next
   chunk asked for while the lanes walk this one: a lane's rows are 64 rows
   apart (8 KiB for 64 dims), a stride the prefetchers do not follow, and
   walked over the whole run the sum waited on memory.  A lane's chain
   carries from chunk to chunk through acc, in the same order.  Decode at
   4096 positions on the Zen 5 VM (perf samples, the sum's time over the
   projections'): 0.55 unchunked, 0.42-0.45 in 32 KiB chunks, 0.29-0.33 in
   64 KiB, 0.30-0.33 in 96 or 128 KiB, 0.38-0.48 in 256 KiB. */
#ifndef WS_AHEAD
#define WS_AHEAD 4   /* rows of a lane ahead, unchunked */
#endif
#define WS_CHUNK_BYTES 65536
#define WS_CHUNK_HINT _MM_HINT_T0
#define WS_CHUNKED_MIN (256 * 1024)
/* Lane r's run over the rows [c0, c1) for hn heads and nd x 16 dims from
   v (the block's first dimension): accumulators from a (head i at
   a + i * acc_stride) unless c0 is the first row, back to a after. */
#define WS_HW 4
INLINE512 void wsum_lane(float *a, size_t acc_stride, const float *wh, size_t w_stride, const uint16_t *v,
                         size_t stride, int r, int c0, int c1, int lanes, bool chunked, const int hn, const int nd)
{
    __m512 c[WS_HW][4];
    /* + 0.0f as the scalar's zeroed accumulator: -0 becomes +0 */
    _Pragma("GCC unroll 4") for (int i = 0; i < WS_HW; i++)
        _Pragma("GCC unroll 4") for (int q = 0; q < 4; q++)
            c[i][q] = c0 && i < hn && q < nd ? _mm512_loadu_ps(a + (size_t)i * acc_stride + 16 * q) : _mm512_setzero_ps();
    for (int p = c0 + r; p < c1; p += lanes) {
        const uint16_t *vp = v + (size_t)p * stride;
        if (!chunked)
            _Pragma("GCC unroll 4") for (int q = 0; q < 4; q += 2)
                if (q < nd) _mm_prefetch((const char *)(vp + (size_t)WS_AHEAD * lanes * stride + 16 * q), _MM_HINT_T0);
        __m512 vv[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
        _Pragma("GCC unroll 4") for (int q = 0; q < 4; q++)
            if (q < nd) vv[q] = ldh(vp + 16 * q);
        _Pragma("GCC unroll 4") for (int i = 0; i < WS_HW; i++) {
            if (i >= hn) break;
            __m512 wp = _mm512_set1_ps(wh[(size_t)i * w_stride + (size_t)p]);
            _Pragma("GCC unroll 4") for (int q = 0; q < 4; q++)
                if (q < nd) c[i][q] = _mm512_fmadd_ps(wp, vv[q], c[i][q]);
        }
    }
    for (int i = 0; i < hn; i++)
        _Pragma("GCC unroll 4") for (int q = 0; q < 4; q++)
            if (q < nd) _mm512_storeu_ps(a + (size_t)i * acc_stride + 16 * q, c[i][q]);
}

INLINE512 void wsum_lanes(const float *w, size_t w_stride, int nh, const uint16_t *v, size_t stride,
                          int hd, int lanes, int end, float *acc, size_t acc_stride)
{
    /* the prompt's 16 lanes walk rows 16 apart, which the prefetch in the
       loop covers (32 KiB chunks there measured slower: a 4096-token
       prefill's attention 0.60-0.64 of the matmuls' time against 0.46-0.56) */
    int chunk = WS_CHUNK_BYTES / 2 / hd / lanes * lanes;
    if (chunk < lanes) chunk = lanes;
    /* a run of one chunk or less, or of 256 KiB or less (which the scores'
       V prefetch has put in L2, kv.c), as before: the lanes prefetch their
       own rows (decode at 16-144 positions was 2% slower chunked, at
       600-728 4%; at 2048, 256 KiB, the same either way) */
    const bool chunked = lanes == 64 && end > chunk && (size_t)end * (size_t)hd * sizeof *v > WS_CHUNKED_MIN;
    if (!chunked) chunk = (end + lanes - 1) / lanes * lanes;
    const size_t row_bytes = (size_t)hd * sizeof *v;
    for (int c0 = 0; c0 < end; c0 += chunk) {
        const int c1 = end - c0 < chunk ? end : c0 + chunk, n1 = end - c1 < chunk ? end - c1 : chunk;
        const int per_lane = (n1 + lanes - 1) / lanes;   /* the next chunk's rows asked for per lane */
        for (int r = 0; r < lanes && c0 + r < c1; r++) {
            if (chunked)
                for (int p = c1 + r * per_lane; p < c1 + (r + 1) * per_lane && p < c1 + n1; p++)
                    for (size_t o = 0; o < row_bytes; o += 64)
                        _mm_prefetch((const char *)(v + (size_t)p * stride) + o, WS_CHUNK_HINT);
            for (int d0 = 0; d0 < hd; d0 += 64) {
                const int nd = hd - d0 < 64 ? (hd - d0) / 16 : 4;
                for (int h0 = 0; h0 < nh; h0 += WS_HW) {
                    const int hn = nh - h0 < WS_HW ? nh - h0 : WS_HW;
                    float *a = acc + (size_t)h0 * acc_stride + (size_t)r * (size_t)hd + d0;
                    const float *wh = w + (size_t)h0 * w_stride;
                    /* a group of up to four heads and 64 dimensions with
                       constant counts: the general body tests hn and nd at
                       every row and spills.  One thread, 4 heads over 4096
                       rows of 64 dims (Zen 5 VM, in rounds): 11-15 -> 16-23
                       GB/s with the rows in L2, 8-12 -> 12-18 from memory */
#define WS_LANE(HN, ND) wsum_lane(a, acc_stride, wh, w_stride, v + d0, stride, r, c0, c1, lanes, chunked, HN, ND)
                    if (nd == 2 && hn == 1) WS_LANE(1, 2);   /* Phi-3's 96 dims: the last 32, one head */
                    else if (nd != 4) WS_LANE(hn, nd);
                    else if (hn == 4) WS_LANE(4, 4);
                    else if (hn == 3) WS_LANE(3, 4);   /* Phi-3/4 mini: groups of 3 */
                    else if (hn == 2) WS_LANE(2, 4);   /* Qwen3, Gemma 2: groups of 2 */
                    else WS_LANE(1, 4);
#undef WS_LANE
                }
            }
        }
    }
    for (int i = 0; i < nh; i++)
        for (int r = end; r < lanes; r++)
            memset(acc + (size_t)i * acc_stride + (size_t)r * (size_t)hd, 0, (size_t)hd * sizeof *acc);
}

/* The lanes' tree sum (and, for vec, the positions past the lanes in
   double) of one head. */
INLINE512 void wsum_finish(float *out, const float *w, const uint16_t *v, size_t stride,
                           int npos, int hd, int end, int gemm, const float *acc)
{
    const size_t H = (size_t)hd;
    for (int d = 0; d < hd; d += 16) {
        __m512 c[16];
        for (int l = 0; l < 16; l++) {
            const float *r = acc + (size_t)l * H + d;
            c[l] = gemm ? _mm512_loadu_ps(r)
                        : _mm512_add_ps(_mm512_add_ps(_mm512_loadu_ps(r), _mm512_loadu_ps(r + 32 * H)),
                                        _mm512_add_ps(_mm512_loadu_ps(r + 16 * H), _mm512_loadu_ps(r + 48 * H)));
        }
        __m512 t[8], u[4];
        for (int i = 0; i < 8; i++) t[i] = _mm512_add_ps(c[i + 8], c[i]);
        for (int i = 0; i < 4; i++) u[i] = _mm512_add_ps(t[i + 4], t[i]);
        __m512 s = _mm512_add_ps(_mm512_add_ps(u[0], u[2]), _mm512_add_ps(u[1], u[3]));
        if (gemm || end == npos) {
            _mm512_storeu_ps(out + d, s);
        } else {   /* the f32 products added in double, position by position, 8 lanes a register */
            __m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(s)), hi = _mm512_cvtps_pd(_mm512_extractf32x8_ps(s, 1));
            for (int p = end; p < npos; p++) {
                __m512 pr = _mm512_mul_ps(_mm512_set1_ps(w[p]), ldh(v + (size_t)p * stride + d));
                lo = _mm512_add_pd(lo, _mm512_cvtps_pd(_mm512_castps512_ps256(pr)));
                hi = _mm512_add_pd(hi, _mm512_cvtps_pd(_mm512_extractf32x8_ps(pr, 1)));
            }
            _mm256_storeu_ps(out + d, _mm512_cvtpd_ps(lo));
            _mm256_storeu_ps(out + d + 8, _mm512_cvtpd_ps(hi));
        }
    }
}

static EMBER_TARGET_AVX512 void wsum_heads_avx512(float *out, size_t out_stride, const float *w, size_t w_stride,
                                                  int nh, const uint16_t *v, size_t stride, int npos, int hd,
                                                  int n_kv, int gemm, float *acc)
{
    if (hd % 16) {
        for (int i = 0; i < nh; i++)
            wsum_scalar(out + (size_t)i * out_stride, w + (size_t)i * w_stride, v, stride, npos, hd, n_kv, gemm, acc);
        return;
    }
    int lanes = gemm ? 16 : 64, end = gemm ? npos : (n_kv & ~63);
    if (end > npos) end = npos;
    const size_t as = (size_t)64 * (size_t)hd;
    wsum_lanes(w, w_stride, nh, v, stride, hd, lanes, end, acc, as);
    for (int i = 0; i < nh; i++)
        wsum_finish(out + (size_t)i * out_stride, w + (size_t)i * w_stride, v, stride, npos, hd, end, gemm,
                    acc + (size_t)i * as);
}

/* 16 lanes to fp16 and back as ember_f32_to_fp16 rounds: the hardware's
   round-to-nearest-even, which equals it for every non-NaN float (checked
   over all 2^32); NaN becomes its quiet NaN with no payload, as there. */
INLINE512 __m256i f16_512(__m512 x)
{
    __m256i h = _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    if (nan) {
        __m256i sign = _mm256_and_si256(_mm512_cvtepi32_epi16(_mm512_srli_epi32(_mm512_castps_si512(x), 16)),
                                        _mm256_set1_epi16((short)0x8000));
        h = _mm256_mask_blend_epi16(nan, h, _mm256_or_si256(sign, _mm256_set1_epi16(0x7e00)));
    }
    return h;
}

static EMBER_TARGET_AVX512 void to_f16_avx512(uint16_t *dst, const float *src, int n)
{
    int i = 0;
    for (; i + 16 <= n; i += 16) _mm256_storeu_si256((__m256i *)(dst + i), f16_512(_mm512_loadu_ps(src + i)));
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        _mm256_mask_storeu_epi16(dst + i, m, f16_512(_mm512_maskz_loadu_ps(m, src + i)));
    }
}

static EMBER_TARGET_AVX512 void scale_f16r_avx512(float *x, float s, int n)
{
    const __m512 sv = _mm512_set1_ps(s);
    int i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(x + i, _mm512_cvtph_ps(f16_512(_mm512_mul_ps(_mm512_loadu_ps(x + i), sv))));
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        _mm512_mask_storeu_ps(x + i, m, _mm512_cvtph_ps(f16_512(_mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + i), sv))));
    }
}

/* ember_ref_sum16 of 16 vectors at once, v[i] -> lane i: the same tree
   (v[j+8]+v[j], then t[j+4]+t[j], then (u0+u2)+(u1+u3)) with the lanes of
   several positions moved side by side so each add serves several. */
INLINE512 __m512 sum16x16(const __m512 v[16])
{
    __m512 t[8], u[4], x[4];
    _Pragma("GCC unroll 8") for (int i = 0; i < 8; i++)
        t[i] = _mm512_add_ps(_mm512_shuffle_f32x4(v[2 * i], v[2 * i + 1], _MM_SHUFFLE(3, 2, 3, 2)),
                             _mm512_shuffle_f32x4(v[2 * i], v[2 * i + 1], _MM_SHUFFLE(1, 0, 1, 0)));
    /* t[i]: [t of 2i | t of 2i+1], 8 lanes each */
    _Pragma("GCC unroll 4") for (int i = 0; i < 4; i++)
        u[i] = _mm512_add_ps(_mm512_shuffle_f32x4(t[2 * i], t[2 * i + 1], _MM_SHUFFLE(3, 1, 3, 1)),
                             _mm512_shuffle_f32x4(t[2 * i], t[2 * i + 1], _MM_SHUFFLE(2, 0, 2, 0)));
    /* u[i]: 128-bit chunk c holds u0..u3 of 4i+c */
    _Pragma("GCC unroll 4") for (int i = 0; i < 4; i++) {
        __m512 w = _mm512_add_ps(u[i], _mm512_permute_ps(u[i], _MM_SHUFFLE(1, 0, 3, 2)));
        x[i] = _mm512_add_ps(w, _mm512_permute_ps(w, _MM_SHUFFLE(3, 2, 0, 1)));   /* lane 0 of each chunk */
    }
    const __m512i pick = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 0, 0, 0, 0, 0, 0, 0, 0);
    __m512 a = _mm512_permutex2var_ps(x[0], pick, x[1]), b = _mm512_permutex2var_ps(x[2], pick, x[3]);
    return _mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(1, 0, 1, 0));
}

/* Sixteen positions per pass, each with its own accumulators in the order
   of dot_gemm / dot_vec, then one sum16x16 for all of them; a tail of
   npos % 16 positions by dot_gemm / dot_vec.  nh queries share the rows:
   each row is converted once for all of them (up to HQ at a time). */
/* Query and key rows of up to SCORES_MAXQ x 16 dims (512: Gemma 4's
   global heads) take the AVX-512 path; wider ones the scalar one. */
#define SCORES_MAXQ 32

INLINE512 void scores_heads_block(float *sc, size_t sc_stride, const uint16_t *k, size_t stride,
                                  const __m512 *qv, int hn, int npos, int gemm, float scale, float *mx,
                                  const int nq)
{
    enum { HQ = 4 };
    const __m512 sv = _mm512_set1_ps(scale);
    __m512 mxv[HQ], v[HQ][16];
    for (int h = 0; h < hn; h++) mxv[h] = _mm512_set1_ps(-INFINITY);
    const size_t ahead = (4096 / (stride * sizeof *k) + 1) * stride;   /* rows ~4 KiB ahead */
    int p0 = 0;
    for (; p0 + 16 <= npos; p0 += 16) {
        for (int j = 0; j < 16; j++) {
            const uint16_t *aj = k + (size_t)(p0 + j) * stride;
            /* a KV head's rows are one stream, but the prefetchers alone
               leave it waiting on memory (2x the in-cache time) */
            for (int o = 0; o < nq * 32; o += 64) _mm_prefetch((const char *)(aj + ahead) + o, _MM_HINT_T0);
            /* only the row's nq vectors: a loop over all SCORES_MAXQ slots
               (zeros past nq) was not unrolled and stored 32 vectors per
               position, 6x the time of the dot products at 4096 positions */
            __m512 kv[SCORES_MAXQ];
            _Pragma("GCC unroll 16") for (int i = 0; i < nq; i++) kv[i] = ldh(aj + 16 * i);
            for (int h = 0; h < hn; h++) {
                const __m512 *qh = qv + h * SCORES_MAXQ;
                if (gemm) {
                    __m512 a = _mm512_setzero_ps();
                    _Pragma("GCC unroll 16") for (int i = 0; i < nq; i++) a = _mm512_fmadd_ps(kv[i], qh[i], a);
                    v[h][j] = a;
                } else {
                    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
                    /* (a single row's order comes here only with nq a
                       multiple of 4: hd % 64 == 0) */
                    _Pragma("GCC unroll 4") for (int i = 0; i + 3 < nq; i += 4) {
                        s0 = _mm512_fmadd_ps(kv[i], qh[i], s0);
                        s1 = _mm512_fmadd_ps(kv[i + 1], qh[i + 1], s1);
                        s2 = _mm512_fmadd_ps(kv[i + 2], qh[i + 2], s2);
                        s3 = _mm512_fmadd_ps(kv[i + 3], qh[i + 3], s3);
                    }
                    v[h][j] = _mm512_add_ps(_mm512_add_ps(s0, s2), _mm512_add_ps(s1, s3));
                }
            }
        }
        for (int h = 0; h < hn; h++) {
            __m512 r = _mm512_mul_ps(sum16x16(v[h]), sv);
            _mm512_storeu_ps(sc + (size_t)h * sc_stride + p0, r);
            mxv[h] = _mm512_max_ps(mxv[h], r);
        }
    }
    for (int h = 0; h < hn; h++) mx[h] = _mm512_reduce_max_ps(mxv[h]);
    (void)p0;
}

/* scores_heads_block with the row width as a constant for the heads
   models have (64, 128; Phi-3's 96 and Gemma's 256 in a prompt): the
   general body's loops over nq are not unrolled */
static EMBER_TARGET_AVX512 void scores_heads_blocks(float *sc, size_t sc_stride, const uint16_t *k, size_t stride,
                                                    const __m512 *qv, int hn, int npos, int gemm, float scale,
                                                    float *mx, int nq)
{
#define SH_BLOCK(NQ) scores_heads_block(sc, sc_stride, k, stride, qv, hn, npos, gemm, scale, mx, NQ)
    if (nq == 4) SH_BLOCK(4);
    else if (nq == 8) SH_BLOCK(8);
    else if (nq == 6) SH_BLOCK(6);
    else if (nq == 16) SH_BLOCK(16);
    else if (nq == 32) SH_BLOCK(32);
    else SH_BLOCK(nq);
#undef SH_BLOCK
}

/* One row against an f32 query already in registers: lane d % 16 of fmas
   over the row, the 16-lane tree (the block's order, att_f32.h) */
static inline EMBER_TARGET_AVX512 float dot_f32q_avx512(const uint16_t *k, const __m512 *qv, int nq)
{
    __m512 a = _mm512_setzero_ps();
    for (int i = 0; i < nq; i++) a = _mm512_fmadd_ps(ldh(k + 16 * i), qv[i], a);
    float lane[16];
    _mm512_storeu_ps(lane, a);
    return ember_ref_sum16(lane);
}

/* hd % 16 == 0 heads, HQ at a time, their queries converted once -- the
   fp16 ones (qh) or the f32 ones (qf, att_f32.h, always the batched
   order) -- through the batched block; the rows past the last whole 16
   one at a time, each in its form's order */
static EMBER_TARGET_AVX512 void scores_heads_groups(float *sc, size_t sc_stride, const uint16_t *k, size_t stride,
                                                    const uint16_t *qh, const float *qf, size_t q_stride, int nh,
                                                    int npos, int hd, int gemm, float scale, float *mx)
{
    enum { HQ = 4 };
    const int nq = hd / 16, pe = npos & ~15;
    for (int h0 = 0; h0 < nh; h0 += HQ) {
        const int hn = nh - h0 < HQ ? nh - h0 : HQ;
        __m512 qv[HQ * SCORES_MAXQ];
        for (int h = 0; h < hn; h++)
            for (int i = 0; i < nq; i++) {
                const size_t o = (size_t)(h0 + h) * q_stride + 16 * (size_t)i;
                qv[h * SCORES_MAXQ + i] = qf ? _mm512_loadu_ps(qf + o) : ldh(qh + o);
            }
        float *sch = sc + (size_t)h0 * sc_stride;
        scores_heads_blocks(sch, sc_stride, k, stride, qv, hn, npos, gemm, scale, mx + h0, nq);
        for (int h = 0; h < hn; h++) {
            float *sh = sch + (size_t)h * sc_stride, m = mx[h0 + h];
            for (int p = pe; p < npos; p++) {
                const uint16_t *kp = k + (size_t)p * stride;
                sh[p] = (qf ? dot_f32q_avx512(kp, qv + h * SCORES_MAXQ, nq)
                            : (gemm ? dot_gemm_avx512 : dot_vec_avx512)(kp, qh + (size_t)(h0 + h) * q_stride, hd)) *
                        scale;
                if (sh[p] > m) m = sh[p];
            }
            mx[h0 + h] = m;
        }
    }
}

/* A single token's scores of one query over npos rows when hd is not whole
   64-wide steps (Phi-3's heads of 96): each row's steps as dot_vec_avx512
   takes them, then its tail of hd % 64 products added one by one in double,
   as the reference does.  That chain of dependent adds is the cost, so 8
   rows go side by side, one row per double lane: lane r adds row r's
   products in the same order, so every score has dot_vec_avx512's bits. */
static EMBER_TARGET_AVX512 float scores_tail8_avx512(float *sc, const uint16_t *k, size_t stride, const uint16_t *q,
                                                     int npos, int hd, float scale)
{
    const int np = hd & ~63, nt = hd - np;
    float qt[64], prod[64][8];
    for (int i = 0; i < nt; i++) qt[i] = ember_fp16_to_f32(q[np + i]);
    float m = -INFINITY;
    int p = 0;
    for (; p + 8 <= npos; p += 8) {
        double head[8];
        for (int r = 0; r < 8; r++) {
            const uint16_t *kr = k + (size_t)(p + r) * stride;
            head[r] = steps64_avx512(kr, q, np);
            for (int i = 0; i < nt; i += 16) {
                const __mmask16 mk = nt - i >= 16 ? 0xffff : (__mmask16)((1u << (nt - i)) - 1);
                float t[16];
                _mm512_storeu_ps(t, _mm512_mul_ps(_mm512_cvtph_ps(_mm256_maskz_loadu_epi16(mk, kr + np + i)),
                                                  _mm512_maskz_loadu_ps(mk, qt + i)));
                for (int j = 0; j < 16 && i + j < nt; j++) prod[i + j][r] = t[j];
            }
        }
        __m512d acc = _mm512_loadu_pd(head);
        for (int i = 0; i < nt; i++) acc = _mm512_add_pd(acc, _mm512_cvtps_pd(_mm256_loadu_ps(prod[i])));
        __m256 v = _mm256_mul_ps(_mm512_cvtpd_ps(acc), _mm256_set1_ps(scale));
        _mm256_storeu_ps(sc + p, v);
        for (int r = 0; r < 8; r++)
            if (sc[p + r] > m) m = sc[p + r];
    }
    for (; p < npos; p++) {
        sc[p] = dot_vec_avx512(k + (size_t)p * stride, q, hd) * scale;
        if (sc[p] > m) m = sc[p];
    }
    return m;
}

static EMBER_TARGET_AVX512 void scores_heads_avx512(float *sc, size_t sc_stride, const uint16_t *k, size_t stride,
                                                    const uint16_t *q, size_t q_stride, int nh, int npos, int hd,
                                                    int gemm, float scale, float *mx)
{
    if ((gemm ? hd % 16 != 0 : hd % 64 != 0) || hd > 16 * SCORES_MAXQ) {
        /* one score at a time: a single token's dot product (any hd: its
           64-wide steps, then the reference's scalar tail, as Phi-3's heads
           of 96 need) or a batch's over whole 16-lane steps */
        for (int h = 0; h < nh; h++) {
            float *sh = sc + (size_t)h * sc_stride, m = -INFINITY;
            const uint16_t *qh = q + (size_t)h * q_stride;
            if (!gemm) {
                m = scores_tail8_avx512(sh, k, stride, qh, npos, hd, scale);
            } else if (hd % 16) {
                m = scores_scalar(sh, k, stride, qh, npos, hd, gemm, scale);
            } else {
                for (int p = 0; p < npos; p++) {
                    sh[p] = dot_gemm_avx512(k + (size_t)p * stride, qh, hd) * scale;
                    if (sh[p] > m) m = sh[p];
                }
            }
            mx[h] = m;
        }
        return;
    }
    scores_heads_groups(sc, sc_stride, k, stride, q, NULL, q_stride, nh, npos, hd, gemm, scale, mx);
}
/* fmsub(x0, c, x1 s) is fmaf(x0, c, -(x1 s)): one rounding of the same
   value.  Interleaved pairs (not neox) are split into even and odd lanes
   and merged back. */
static EMBER_TARGET_AVX512 void rope_avx512(float *v, int nh, int hd, int n_rot, const float *cs, const float *sn,
                                            int neox)
{
    const int h2 = n_rot / 2;
    const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i od = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i hi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    for (int h = 0; h < nh; h++) {
        float *p = v + (size_t)h * (size_t)hd;
        for (int i = 0; i < h2; i += 16) {
            const int left = h2 - i < 16 ? h2 - i : 16;
            const __mmask16 m = (__mmask16)((1u << left) - 1);
            const __m512 c = _mm512_maskz_loadu_ps(m, cs + i), s = _mm512_maskz_loadu_ps(m, sn + i);
            __m512 x0, x1;
            if (neox) {
                x0 = _mm512_maskz_loadu_ps(m, p + i);
                x1 = _mm512_maskz_loadu_ps(m, p + i + h2);
            } else {
                const __mmask16 m0 = (__mmask16)(left >= 8 ? 0xffff : (1u << (2 * left)) - 1);
                const __mmask16 m1 = (__mmask16)(left > 8 ? (1u << (2 * (left - 8))) - 1 : 0);
                const __m512 a = _mm512_maskz_loadu_ps(m0, p + 2 * i), b = _mm512_maskz_loadu_ps(m1, p + 2 * i + 16);
                x0 = _mm512_permutex2var_ps(a, ev, b);
                x1 = _mm512_permutex2var_ps(a, od, b);
            }
            const __m512 y0 = _mm512_fmsub_ps(x0, c, _mm512_mul_ps(x1, s));
            const __m512 y1 = _mm512_fmadd_ps(x0, s, _mm512_mul_ps(x1, c));
            if (neox) {
                _mm512_mask_storeu_ps(p + i, m, y0);
                _mm512_mask_storeu_ps(p + i + h2, m, y1);
            } else {
                const __mmask16 m0 = (__mmask16)(left >= 8 ? 0xffff : (1u << (2 * left)) - 1);
                const __mmask16 m1 = (__mmask16)(left > 8 ? (1u << (2 * (left - 8))) - 1 : 0);
                _mm512_mask_storeu_ps(p + 2 * i, m0, _mm512_permutex2var_ps(y0, lo, y1));
                _mm512_mask_storeu_ps(p + 2 * i + 16, m1, _mm512_permutex2var_ps(y0, hi, y1));
            }
        }
    }
}
#endif


static refnum_ops ops = {ember_refnum_exp16_scalar, ember_refnum_silu16_scalar, ember_refnum_gelu16_scalar,
                         ember_refnum_scores_heads_scalar,
                         ember_refnum_to_f16_scalar, ember_refnum_scale_f16r_scalar, ember_refnum_wsum_heads_scalar,
                         ember_refnum_rope_scalar, NULL, ember_refnum_softcap16_scalar};
static pthread_once_t ops_once = PTHREAD_ONCE_INIT;

static void ops_pick(void)
{
#ifdef EMBER_SIMD
    if (ember_cpu_isa() >= EMBER_ISA_AVX512)
        ops = (refnum_ops){exp16_avx512, silu16_avx512, gelu16_avx512, scores_heads_avx512, to_f16_avx512, scale_f16r_avx512,
                           wsum_heads_avx512, rope_avx512, softmax_exp_avx512, softcap16_avx512};
    else if (ember_cpu_isa() >= EMBER_ISA_AVX2)
        ops = ember_refnum_avx2;
#endif
}

static const refnum_ops *get_ops(void)
{
    pthread_once(&ops_once, ops_pick);
    return &ops;
}

double ember_ref_softmax_exp(float *y, const float *x, float max, int n)
{
    const refnum_ops *o = get_ops();
    if (o->softmax_exp) return o->softmax_exp(y, x, max, n);
    double sum = 0;
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        o->exp16(y + i, x + i, max);
        sum += (double)ember_ref_sum16(y + i);
    }
    if (i < n) {
        float t[16];
        for (int l = 0; l < 16; l++) t[l] = i + l < n ? x[i + l] : -INFINITY;
        o->exp16(y + i, t, max);
        sum += (double)ember_ref_sum16(y + i);
    }
    return sum;
}

void ember_ref_silu_mul(float *g, const float *u, int n)
{
    const refnum_ops *o = get_ops();
    int i = 0;
    for (; i + 16 <= n; i += 16) o->silu16(g + i, u + i);
    for (; i < n; i++) g[i] = g[i] / (1.0f + expf(-g[i])) * u[i];
}

/* the gate of an activation without one: silu16 and gelu16 times 1 */
static const float ones16[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};

void ember_ref_silu(float *x, int n)
{
    const refnum_ops *o = get_ops();
    int i = 0;
    for (; i + 16 <= n; i += 16) o->silu16(x + i, ones16);
    for (; i < n; i++) x[i] = x[i] / (1.0f + expf(-x[i]));
}

void ember_ref_gelu(float *x, int n)
{
    const refnum_ops *o = get_ops();
    int i = 0;
    for (; i + 16 <= n; i += 16) o->gelu16(x + i, ones16);
    for (; i < n; i++) x[i] = gelu_one(x[i]);
}

void ember_ref_swiglu_oai_mul(float *g, const float *u, int n)
{
    const float alpha = 1.702f, limit = 7.0f;
    for (int i = 0; i < n; i++) {
        const float x = g[i] < limit ? g[i] : limit;
        const float y = u[i] < -limit ? -limit : u[i] > limit ? limit : u[i];
        g[i] = x / (1.0f + expf(alpha * -x)) * (y + 1.0f);
    }
}

float ember_ref_scores_f16(float *sc, const uint16_t *k, size_t stride, const uint16_t *q,
                           int npos, int hd, int gemm, float scale)
{
    float mx;
    get_ops()->scores_heads(sc, 0, k, stride, q, 0, 1, npos, hd, gemm, scale, &mx);
    return mx;
}

void ember_ref_scores_f16_heads(float *sc, size_t sc_stride, const uint16_t *k, size_t stride, const uint16_t *q,
                                size_t q_stride, int nh, int npos, int hd, int gemm, float scale, float *mx)
{
    get_ops()->scores_heads(sc, sc_stride, k, stride, q, q_stride, nh, npos, hd, gemm, scale, mx);
}

void ember_ref_wsum_f16_heads(float *out, size_t out_stride, const float *w, size_t w_stride, int nh,
                              const uint16_t *v, size_t stride, int npos, int hd, int n_kv, int gemm, float *acc)
{
    get_ops()->wsum_heads(out, out_stride, w, w_stride, nh, v, stride, npos, hd, n_kv, gemm, acc);
}

void ember_ref_to_f16(uint16_t *dst, const float *src, int n)
{
    get_ops()->to_f16(dst, src, n);
}

void ember_ref_scale_f16r(float *x, float s, int n)
{
    get_ops()->scale_f16r(x, s, n);
}

void ember_ref_rope(float *v, int nh, int hd, int n_rot, const float *cs, const float *sn, int neox)
{
    get_ops()->rope(v, nh, hd, n_rot, cs, sn, neox);
}

void ember_ref_wsum_f16(float *out, const float *w, const uint16_t *v, size_t stride,
                        int npos, int hd, int n_kv, int gemm, float *acc)
{
    get_ops()->wsum_heads(out, 0, w, 0, 1, v, stride, npos, hd, n_kv, gemm, acc);
}

void ember_ref_gelu_tanh_mul(float *g, const float *u, int n)
{
    const refnum_ops *o = get_ops();
    int i = 0;
    for (; i + 16 <= n; i += 16) o->gelu16(g + i, u + i);
    for (; i < n; i++) g[i] = gelu_one(g[i]) * u[i];
}

/* cap * tanh(x / cap), tanh as 1 - 2 / (exp(2y) + 1) through the exp
   above, so that every ISA gives the same bits and a row costs a vector
   exp per 16 scores: libm's tanhf took ~7 ns a score, 40% on top of a
   4096-token Gemma 2 prefill, whose every score is capped (now ~0.3).
   Against tanh: within 2.4e-7 of cap (test_refnum); the logits stay at
   cosine >= 0.99999 of the reference's (test_arch_variants, test_golden's
   gemma4).  The max is kept per lane of 16 and folded in one order, so
   every ISA gives the same one, -0 and +0 included. */
static float softcap_one(float x, float inv, float cap)
{
    return (1.0f - 2.0f / (ember_ref_expf(2.0f * (x * inv)) + 1.0f)) * cap;
}

void ember_refnum_softcap16_scalar(float *x, float inv, float cap, float *m)
{
    for (int l = 0; l < 16; l++) {
        x[l] = softcap_one(x[l], inv, cap);
        m[l] = x[l] > m[l] ? x[l] : m[l];
    }
}

float ember_ref_softcap_max(float *x, size_t n, float cap)
{
    const refnum_ops *o = get_ops();
    const float inv = 1.0f / cap;
    float m[16];
    for (int l = 0; l < 16; l++) m[l] = -INFINITY;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) o->softcap16(x + i, inv, cap, m);
    for (; i < n; i++) {
        x[i] = softcap_one(x[i], inv, cap);
        m[i % 16] = x[i] > m[i % 16] ? x[i] : m[i % 16];
    }
    float r = m[0];
    for (int l = 1; l < 16; l++) r = m[l] > r ? m[l] : r;
    return r;
}

void ember_ref_softcap(float *x, size_t n, float cap)
{
    ember_ref_softcap_max(x, n, cap);
}

/* ember_attf_scores (att_f32.h) by the batched block above: its order is
   that definition's (lane d % 16 of fmas over the row, the 16-lane tree),
   so only the queries differ: taken as the f32 they are.  Rows past the
   last whole 16 one at a time, in the same order. */
int ember_ref_scores_f32q(float *sc, size_t sc_stride, const uint16_t *k, size_t stride, const float *q,
                          size_t q_stride, int nh, int npos, int hd, float scale, float *mx)
{
#ifdef EMBER_SIMD
    if (ember_cpu_isa() < EMBER_ISA_AVX512 || hd % 16 || hd > 16 * SCORES_MAXQ) return 0;
    scores_heads_groups(sc, sc_stride, k, stride, NULL, q, q_stride, nh, npos, hd, 1, scale, mx);
    return 1;
#else
    (void)sc, (void)sc_stride, (void)k, (void)stride, (void)q, (void)q_stride, (void)nh, (void)npos, (void)hd;
    (void)scale, (void)mx;
    return 0;
#endif
}
