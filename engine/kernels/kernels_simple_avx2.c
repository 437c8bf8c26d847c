/* AVX2 kernels for Q8_0, Q4_0, Q5_0, Q4_1, Q5_1, IQ4_NL, MXFP4 and the float formats.
 *
 * Integer formats work on 8 rows and one token at a time, as the reference
 * does: a row's block yields the 8 int32 dots of its 4-input groups in one
 * ymm, each lane keeps its own f32 sum
 * over the blocks by one fma, and the row's result is the reference's 8-lane
 * tree (ember_sum8): the scalar oracle's fmaf() sequence, bit-identical.
 * Q8_0 widens both sides to int16 (vpmaddwd, exact for every int8 input)
 * and pairs the pairs; Q4_0/Q5_0 enter vpmaddubsw as unsigned codes
 * u = w + off, where vpmaddubsw cannot saturate (31 * 128 * 2 < 32767),
 * minus off times each group's activation sum.  Q4_1/Q5_1 codes are
 * unsigned already; their m_w * s_x terms sum in one more ymm (8 rows).
 * IQ4_NL's code book values (-127..113) go through Q8_0's exact int16
 * path; one token takes 4 rows a pass for its two lane sets, prompts the
 * plain 8-lane order (kernels_simple.c).  MXFP4's doubled E2M1 values
 * (-12..12) enter vpmaddubsw as u = v + 12 through a vpshufb code book,
 * as Q4_0's nibbles do with 8, in the 8-row tile order.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "dtype.h"
#include "kernels_simple.h"
#include "simd.h"

#ifdef EMBER_SIMD

/* Several row streams defeat the hardware prefetchers once the matrix is
   out of cache; a software prefetch a few blocks ahead keeps decode at DRAM
   speed. */
#define PF_BYTES 256

#define INLINE2 static inline __attribute__((always_inline)) EMBER_TARGET_AVX2

typedef struct {
    __m256i a;      /* raw activation bytes */
    __m256i a0, a1; /* widened to int16 (Q8_0) */
    int has_m128;   /* some byte is -128 (not from our quantizer, which clamps to +-127) */
} act_t;

INLINE2 act_t act_prep(const int8_t *qs)
{
    act_t r;
    r.a = _mm256_loadu_si256((const __m256i *)qs);
    r.a0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)qs));
    r.a1 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(qs + 16)));
    r.has_m128 = _mm256_movemask_epi8(_mm256_cmpeq_epi8(r.a, _mm256_set1_epi8((char)0x80)));
    return r;
}

INLINE2 __m256i udot(__m256i u, const act_t *x)
{
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, x->a), _mm256_set1_epi16(1));
}

/* The 8 group sums (inputs 4g..4g+3) of one block.  vpmaddubsw(|w|,
   sign(x, w)) then vpmaddwd with ones is exact whenever no activation is
   -128 (|w| <= 128, x * sgn(w) fits a byte, a pair of products stays below
   2^15): always so for the quantizer's activations, in 4 instructions.
   Otherwise int16 pairs (exact for every int8), pairs of pairs by vphaddd,
   whose lane order [0 1 4 5 | 2 3 6 7] one qword permute undoes. */
INLINE2 __m256i dot_q8_0(const uint8_t *blk, const act_t *x)
{
    if (!x->has_m128) {
        __m256i w = _mm256_loadu_si256((const __m256i *)(blk + 2));
        return _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_abs_epi8(w), _mm256_sign_epi8(x->a, w)),
                                 _mm256_set1_epi16(1));
    }
    __m256i w0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(blk + 2)));
    __m256i w1 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(blk + 18)));
    __m256i h = _mm256_hadd_epi32(_mm256_madd_epi16(w0, x->a0), _mm256_madd_epi16(w1, x->a1));
    return _mm256_permute4x64_epi64(h, 0xd8);
}

INLINE2 __m256i nibbles(const uint8_t *qs)
{
    __m128i q = _mm_loadu_si128((const __m128i *)qs);
    __m256i u = _mm256_set_m128i(_mm_srli_epi16(q, 4), q);
    return _mm256_and_si256(u, _mm256_set1_epi8(0x0f));
}

INLINE2 __m256i dot_q4_0(const uint8_t *blk, const act_t *a)
{
    return udot(nibbles(blk + 2), a);
}

INLINE2 __m256i dot_q4_1(const uint8_t *blk, const act_t *a)
{
    return dot_q4_0(blk + 2, a);
}

INLINE2 __m256i dot_q5_0(const uint8_t *blk, const act_t *a)
{
    uint32_t qh;
    memcpy(&qh, blk + 2, 4);
    const __m256i sel = _mm256_set_epi64x(0x0303030303030303LL, 0x0202020202020202LL,
                                          0x0101010101010101LL, 0x0000000000000000LL);
    const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ULL);
    __m256i h = _mm256_shuffle_epi8(_mm256_set1_epi32((int)qh), sel);
    h = _mm256_cmpeq_epi8(_mm256_and_si256(h, bit), bit);
    __m256i u = _mm256_or_si256(nibbles(blk + 6), _mm256_and_si256(h, _mm256_set1_epi8(0x10)));
    return udot(u, a);
}

INLINE2 __m256i dot_q5_1(const uint8_t *blk, const act_t *a)
{
    return dot_q5_0(blk + 2, a);
}

/* The 8 rows' fp16 block scales: scalar loads assembled in registers run on
   the integer ports beside the vector work and cost less than a gather. */
INLINE2 uint64_t rd16x4(const uint8_t *const *p, size_t o)
{
    uint16_t a, b, c, d;
    memcpy(&a, p[0] + o, 2);
    memcpy(&b, p[1] + o, 2);
    memcpy(&c, p[2] + o, 2);
    memcpy(&d, p[3] + o, 2);
    return (uint64_t)a | (uint64_t)b << 16 | (uint64_t)c << 32 | (uint64_t)d << 48;
}

INLINE2 __m256 scales8(const uint8_t *const p[8], size_t o)
{
    return _mm256_cvtph_ps(_mm_set_epi64x((long long)rd16x4(p + 4, o), (long long)rd16x4(p, o)));
}

/* MXFP4: the 8 rows' exponent bytes as their scales (ember_mxfp4_scale):
   (e - 1) << 23 as float bits, the subnormals 0x00200000 << e for e < 2 */
INLINE2 __m256 scales8_e8m0(const uint8_t *const p[8], size_t o)
{
    __m256i e = _mm256_set_epi32(p[7][o], p[6][o], p[5][o], p[4][o], p[3][o], p[2][o], p[1][o], p[0][o]);
    __m256i normal = _mm256_slli_epi32(_mm256_sub_epi32(e, _mm256_set1_epi32(1)), 23);
    __m256i sub = _mm256_sllv_epi32(_mm256_set1_epi32(0x00200000), e);
    return _mm256_castsi256_ps(_mm256_blendv_epi8(normal, sub, _mm256_cmpgt_epi32(_mm256_set1_epi32(2), e)));
}

/* MXFP4's nibbles as u = v + 12 (0..24) */
INLINE2 __m256i dot_mxfp4(const uint8_t *blk, const act_t *a)
{
    const __m256i tbl = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)ember_mxfp4_values_u12));
    return udot(_mm256_shuffle_epi8(tbl, nibbles(blk + 1)), a);
}

/* Row totals of 8 rows' 8 lane partials, in row order. */
INLINE2 __m256i rowsum8(const __m256i g[8])
{
    __m256i a = _mm256_hadd_epi32(_mm256_hadd_epi32(g[0], g[1]), _mm256_hadd_epi32(g[2], g[3]));
    __m256i b = _mm256_hadd_epi32(_mm256_hadd_epi32(g[4], g[5]), _mm256_hadd_epi32(g[6], g[7]));
    return _mm256_add_epi32(_mm256_permute2x128_si256(a, b, 0x20), _mm256_permute2x128_si256(a, b, 0x31));
}

/* BO = 0: the reference's 8-lane order; BO = 1: its 8-row tile order, one
   f32 sum per row (kernels.h).  AB: activation block bytes (Q8_0 34, Q8_1
   36, whose codes follow d and s); MIN: the weights carry an fp16 min after
   d, folded as m_w * s_x (Q8_1). */
#define INT_KERNEL(name, fmt, BLOCK, OFF, BO, AB, MIN, SCALES)                                             \
    INLINE2 void name##_pass(const uint8_t *const p[8], int n, int64_t nb, const uint8_t *xq, float *y) \
    {                                                                                              \
        __m256 acc[8], summ = _mm256_setzero_ps();                                                 \
        _Pragma("GCC unroll 8") for (int i = 0; i < 8; i++) acc[i] = _mm256_setzero_ps();          \
        for (int64_t b = 0; b < nb; b++) {                                                         \
            size_t o = (size_t)b * (BLOCK);                                                        \
            if ((b & 1) == 0 && o + PF_BYTES < (size_t)nb * (BLOCK))                               \
                _Pragma("GCC unroll 8") for (int i = 0; i < 8; i++)                                \
                    _mm_prefetch((const char *)p[i] + o + PF_BYTES, _MM_HINT_T0);                  \
            const uint8_t *xb = xq + (size_t)b * (AB);                                             \
            uint16_t xd, xs;                                                                       \
            memcpy(&xd, xb, 2);                                                                    \
            memcpy(&xs, xb + 2, 2);                                                                \
            act_t a = act_prep((const int8_t *)(xb + (AB) - QK));                                  \
            __m256 d8 = _mm256_mul_ps(SCALES(p, o), _mm256_set1_ps(_cvtsh_ss(xd)));               \
            if (MIN) summ = _mm256_fmadd_ps(scales8(p, o + 2), _mm256_set1_ps(_cvtsh_ss(xs)), summ); \
            float d[8];                                                                            \
            _mm256_storeu_ps(d, d8);                                                               \
            __m256i corr = (OFF) ? _mm256_mullo_epi32(udot(_mm256_set1_epi8(1), &a),               \
                                                      _mm256_set1_epi32(OFF))                      \
                                 : _mm256_setzero_si256();                                         \
            __m256i g[8];                                                                          \
            _Pragma("GCC unroll 8") for (int i = 0; i < 8; i++) {                                  \
                g[i] = _mm256_sub_epi32(dot_##fmt(p[i] + o, &a), corr);                            \
                if (!(BO)) acc[i] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(g[i]), _mm256_set1_ps(d[i]), acc[i]); \
            }                                                                                      \
            if (BO) acc[0] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(rowsum8(g)), d8, acc[0]);          \
        }                                                                                          \
        if (BO) {                                                                                  \
            float l[8];                                                                            \
            _mm256_storeu_ps(l, acc[0]);                                                           \
            memcpy(y, l, (size_t)n * sizeof(float));                                               \
            return;                                                                                \
        }                                                                                          \
        float sm[8];                                                                               \
        _mm256_storeu_ps(sm, summ);                                                                \
        for (int i = 0; i < n; i++) {                                                              \
            float l[8];                                                                            \
            _mm256_storeu_ps(l, acc[i]);                                                           \
            y[i] = (MIN) ? ember_sum8(l) + sm[i] : ember_sum8(l);                                  \
        }                                                                                          \
    }                                                                                              \
    EMBER_TARGET_AVX2 void ember_matmul_##name##_avx2(EMBER_MATMUL_ARGS)                           \
    {                                                                                              \
        int64_t nb = k / QK;                                                                       \
        for (int g0 = r0; g0 < r1; g0 += 8) {                                                      \
            int n = r1 - g0 < 8 ? r1 - g0 : 8;                                                     \
            const uint8_t *p[8];                                                                   \
            for (int i = 0; i < 8; i++) /* tail lanes repeat a valid row */                       \
                p[i] = (const uint8_t *)w + (size_t)(g0 + (i < n ? i : n - 1)) * row_bytes;        \
            for (int t = 0; t < nt; t++)                                                           \
                name##_pass(p, n, nb, (const uint8_t *)xq + (size_t)t * xq_stride,                 \
                            y + (size_t)t * y_stride + g0);                                        \
        }                                                                                          \
    }

INT_KERNEL(q8_0, q8_0, sizeof(block_q8_0), 0, 0, sizeof(block_q8_0), 0, scales8)
INT_KERNEL(q4_0, q4_0, sizeof(block_q4_0), 8, 0, sizeof(block_q8_0), 0, scales8)
INT_KERNEL(q4_0x8, q4_0, sizeof(block_q4_0), 8, 1, sizeof(block_q8_0), 0, scales8)
INT_KERNEL(q5_0, q5_0, sizeof(block_q5_0), 16, 0, sizeof(block_q8_0), 0, scales8)
INT_KERNEL(q4_1, q4_1, sizeof(block_q4_1), 0, 0, sizeof(block_q8_1), 1, scales8)
INT_KERNEL(q5_1, q5_1, sizeof(block_q5_1), 0, 0, sizeof(block_q8_1), 1, scales8)
/* MXFP4: one f32 sum per row (kernels_simple.c, ORD_TILED) */
INT_KERNEL(mxfp4, mxfp4, sizeof(block_mxfp4), 12, 1, sizeof(block_q8_0), 0, scales8_e8m0)

/* ---- IQ4_NL: even / odd block lane sets, an odd last block whole ------- */

INLINE2 __m256i dot_iq4_nl(const uint8_t *blk, const act_t *x)
{
    const __m256i tbl = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)ember_iq4nl_values));
    __m256i v = _mm256_shuffle_epi8(tbl, nibbles(blk + 2));
    __m256i w0 = _mm256_cvtepi8_epi16(_mm256_castsi256_si128(v));
    __m256i w1 = _mm256_cvtepi8_epi16(_mm256_extracti128_si256(v, 1));
    __m256i h = _mm256_hadd_epi32(_mm256_madd_epi16(w0, x->a0), _mm256_madd_epi16(w1, x->a1));
    return _mm256_permute4x64_epi64(h, 0xd8);
}

INLINE2 int32_t hsum_i32(__m256i v)
{
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
    return _mm_cvtsi128_si32(_mm_add_epi32(s, _mm_shuffle_epi32(s, 1)));
}

INLINE2 void iq4_nl_pass(const uint8_t *const p[4], int n, int64_t nb, const uint8_t *xq, float *y)
{
    __m256 acc[2][4];
    _Pragma("GCC unroll 8") for (int i = 0; i < 4; i++) acc[0][i] = acc[1][i] = _mm256_setzero_ps();
    int64_t nbp = nb & ~(int64_t)1;
    for (int64_t b = 0; b < nbp; b += 2) {
        size_t o = (size_t)b * sizeof(block_iq4_nl);
        if (o + PF_BYTES < (size_t)nb * sizeof(block_iq4_nl))
            _Pragma("GCC unroll 4") for (int i = 0; i < 4; i++)
                _mm_prefetch((const char *)p[i] + o + PF_BYTES, _MM_HINT_T0);
        _Pragma("GCC unroll 2") for (int h = 0; h < 2; h++) {
            const block_q8_0 *xb = (const block_q8_0 *)xq + b + h;
            act_t a = act_prep(xb->qs);
            float dx = _cvtsh_ss(xb->d);
            size_t ob = o + (size_t)h * sizeof(block_iq4_nl);
            _Pragma("GCC unroll 4") for (int i = 0; i < 4; i++) {
                uint16_t dw;
                memcpy(&dw, p[i] + ob, 2);
                acc[h][i] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot_iq4_nl(p[i] + ob, &a)),
                                            _mm256_set1_ps(_cvtsh_ss(dw) * dx), acc[h][i]);
            }
        }
    }
    for (int i = 0; i < n; i++) {
        float l[8];
        _mm256_storeu_ps(l, _mm256_add_ps(acc[0][i], acc[1][i]));
        float v = ember_sum8(l);
        if (nb & 1) {
            const block_q8_0 *xb = (const block_q8_0 *)xq + nbp;
            act_t a = act_prep(xb->qs);
            const uint8_t *blk = p[i] + (size_t)nbp * sizeof(block_iq4_nl);
            uint16_t dw;
            memcpy(&dw, blk, 2);
            v = fmaf(_cvtsh_ss(dw) * _cvtsh_ss(xb->d), (float)hsum_i32(dot_iq4_nl(blk, &a)), v);
        }
        y[i] = v;
    }
}

/* prompts: the plain 8-lane order */
INT_KERNEL(iq4_nl_lanes, iq4_nl, sizeof(block_iq4_nl), 0, 0, sizeof(block_q8_0), 0, scales8)

EMBER_TARGET_AVX2 void ember_matmul_iq4_nl_avx2(EMBER_MATMUL_ARGS)
{
    if (nt > 1) {
        ember_matmul_iq4_nl_lanes_avx2(w, row_bytes, k, r0, r1, xq, xq_stride, nt, y, y_stride);
        return;
    }
    int64_t nb = k / QK;
    for (int g0 = r0; g0 < r1; g0 += 4) {
        int n = r1 - g0 < 4 ? r1 - g0 : 4;
        const uint8_t *p[4];
        for (int i = 0; i < 4; i++)
            p[i] = (const uint8_t *)w + (size_t)(g0 + (i < n ? i : n - 1)) * row_bytes;
        for (int t = 0; t < nt; t++)
            iq4_nl_pass(p, n, nb, (const uint8_t *)xq + (size_t)t * xq_stride, y + (size_t)t * y_stride + g0);
    }
}

/* ---- float formats: 4 rows x up to 2 tokens of 8-wide fma chains ------- */

INLINE2 __m256 fl_f32(const void *p, int64_t i)
{
    return _mm256_loadu_ps((const float *)p + i);
}

INLINE2 __m256 fl_f16(const void *p, int64_t i)
{
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const uint16_t *)p + i)));
}

INLINE2 __m256 fl_bf16(const void *p, int64_t i)
{
    __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)((const uint16_t *)p + i)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
}

static float el_f32(const void *p, int64_t i) { float f; memcpy(&f, (const char *)p + 4 * i, 4); return f; }
static float el_f16(const void *p, int64_t i) { uint16_t h; memcpy(&h, (const char *)p + 2 * i, 2); return ember_fp16_to_f32(h); }
static float el_bf16(const void *p, int64_t i) { uint16_t h; memcpy(&h, (const char *)p + 2 * i, 2); return ember_bf16_to_f32(h); }

INLINE2 float hsum8f(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

#define FLOAT_KERNEL(fmt)                                                                          \
    INLINE2 void fmt##_tile(const uint8_t *w, size_t row_bytes, int64_t k, const int rb,           \
                            const uint8_t *xq, size_t xq_stride, const int tb,                     \
                            float *y, size_t y_stride)                                             \
    {                                                                                              \
        __m256 acc[4][2];                                                                          \
        _Pragma("GCC unroll 16") for (int i = 0; i < 4; i++) /* all of it: quiets -Wmaybe-uninitialized */                                                               \
            _Pragma("GCC unroll 16") for (int t = 0; t < 2; t++) acc[i][t] = _mm256_setzero_ps();                          \
        int64_t k8 = k & ~(int64_t)7;                                                              \
        for (int64_t j = 0; j < k8; j += 8) {                                                      \
            __m256 x[2];                                                                           \
            _Pragma("GCC unroll 16") for (int t = 0; t < tb; t++)                                                           \
                x[t] = _mm256_loadu_ps((const float *)(xq + (size_t)t * xq_stride) + j);           \
            _Pragma("GCC unroll 16") for (int i = 0; i < rb; i++) {                                                         \
                __m256 wv = fl_##fmt(w + (size_t)i * row_bytes, j);                                \
                _Pragma("GCC unroll 16") for (int t = 0; t < tb; t++) acc[i][t] = _mm256_fmadd_ps(wv, x[t], acc[i][t]);     \
            }                                                                                      \
        }                                                                                          \
        _Pragma("GCC unroll 16") for (int i = 0; i < rb; i++)                                                               \
            _Pragma("GCC unroll 16") for (int t = 0; t < tb; t++) {                                                         \
                const float *x = (const float *)(xq + (size_t)t * xq_stride);                      \
                float s = hsum8f(acc[i][t]);                                                       \
                for (int64_t j = k8; j < k; j++) s += el_##fmt(w + (size_t)i * row_bytes, j) * x[j]; \
                y[(size_t)t * y_stride + i] = s;                                                   \
            }                                                                                      \
    }                                                                                              \
    EMBER_TARGET_AVX2 void ember_matmul_##fmt##_avx2(EMBER_MATMUL_ARGS)                            \
    {                                                                                              \
        for (int r = r0; r < r1;) {                                                                \
            int rb = r1 - r >= 4 ? 4 : 1;                                                          \
            const uint8_t *wr = (const uint8_t *)w + (size_t)r * row_bytes;                        \
            for (int t = 0; t < nt; t += 2) {                                                      \
                const uint8_t *xt = (const uint8_t *)xq + (size_t)t * xq_stride;                   \
                float *yt = y + (size_t)t * y_stride + r;                                          \
                int tb = nt - t < 2 ? 1 : 2;                                                       \
                if (rb == 4 && tb == 2) fmt##_tile(wr, row_bytes, k, 4, xt, xq_stride, 2, yt, y_stride); \
                else if (rb == 4) fmt##_tile(wr, row_bytes, k, 4, xt, xq_stride, 1, yt, y_stride); \
                else fmt##_tile(wr, row_bytes, k, 1, xt, xq_stride, tb, yt, y_stride);             \
            }                                                                                      \
            r += rb;                                                                               \
        }                                                                                          \
    }

FLOAT_KERNEL(f32)
FLOAT_KERNEL(f16)
FLOAT_KERNEL(bf16)

/* ---- Q8_0 activations: the reference's x86 quantizer's exact bytes ----- */

EMBER_TARGET_AVX2 void ember_q8_0_quantize_act_avx2(const float *x, void *xq, int64_t k)
{
    block_q8_0 *out = xq;
    const __m256 absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    const __m256 lo = _mm256_set1_ps(-127.0f), hi = _mm256_set1_ps(127.0f);
    for (int64_t i = 0; i < k / QK; i++, x += QK) {
        __m256 v[4];
        __m256 m = _mm256_setzero_ps();
        for (int h = 0; h < 4; h++) {
            v[h] = _mm256_loadu_ps(x + 8 * h);
            /* data first: max_ps returns its second operand for NaN, so
               NaNs are skipped like the reference's `fabsf(x) > amax` */
            m = _mm256_max_ps(_mm256_and_ps(v[h], absm), m);
        }
        __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
        m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
        m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
        float amax = _mm_cvtss_f32(m4);
        float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        out[i].d = _cvtss_sh(amax / 127.0f, 0);
        __m256 vid = _mm256_set1_ps(id);
        __m256i q[4];
        for (int h = 0; h < 4; h++) {
            __m256 s = _mm256_mul_ps(v[h], vid);
            __m256 t = _mm256_round_ps(s, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            t = _mm256_min_ps(_mm256_max_ps(t, lo), hi);
            t = _mm256_and_ps(t, _mm256_cmp_ps(s, s, _CMP_ORD_Q)); /* NaN -> 0 */
            q[h] = _mm256_cvttps_epi32(t);
        }
        __m256i b = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
        b = _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        _mm256_storeu_si256((__m256i *)out[i].qs, b);
    }
}

#endif
