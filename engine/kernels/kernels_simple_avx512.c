/* AVX-512 (VNNI) kernels for Q8_0, Q4_0, Q5_0 and the float formats.
 *
 * Integer formats are vectorised across 16 rows: one zmm holds the 32
 * weights of two rows for one block, vpdpbusd folds them against the
 * block's activations into 8 partial sums per row, a shuffle tree turns the
 * 16 rows' partials into one int32 per lane, and a single vector fma per
 * block adds them to 16 per-row accumulators.  Each lane therefore sees
 * exactly the scalar oracle's sequence of fmaf() calls: bit-identical.
 *
 * vpdpbusd multiplies unsigned by signed bytes, so weights enter as
 * u = w + off (unsigned) and the accumulator starts at -off * (partial sums
 * of the activations), which makes every partial exact for any int8 input.
 */
#include "config.h"

#include <string.h>

#include "dtype.h"
#include "kernels_simple.h"
#include "simd.h"

#ifdef EMBER_SIMD

/* 16 row streams defeat the hardware prefetchers once the matrix is out of
   cache; a software prefetch a few blocks ahead keeps decode at DRAM speed. */
#ifndef PF_BYTES
#define PF_BYTES 256
#endif

#define INLINE512 static inline __attribute__((always_inline)) EMBER_TARGET_AVX512

/* Two rows' weights (row a in the low 256 bits) as unsigned u = w + off. */
INLINE512 __m512i ld_q8_0(const uint8_t *a, const uint8_t *b)
{
    __m512i z = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(a + 2))),
                                   _mm256_loadu_si256((const __m256i *)(b + 2)), 1);
    return _mm512_xor_si512(z, _mm512_set1_epi8((char)0x80));
}

/* Nibbles of 16 bytes: low ones are elements 0..15, high ones 16..31. */
INLINE512 __m512i nibbles(const uint8_t *qa, const uint8_t *qb)
{
    __m512i z = _mm512_mask_broadcast_i32x4(_mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)qa)),
                                            0xff00, _mm_loadu_si128((const __m128i *)qb));
    __m512i hi = _mm512_srli_epi16(z, 4);
    z = _mm512_mask_blend_epi64(0xcc, z, hi);
    return _mm512_and_si512(z, _mm512_set1_epi8(0x0f));
}

INLINE512 __m512i ld_q4_0(const uint8_t *a, const uint8_t *b)
{
    return nibbles(a + 2, b + 2);
}

INLINE512 __m512i ld_q5_0(const uint8_t *a, const uint8_t *b)
{
    uint32_t ha, hb;
    memcpy(&ha, a + 2, 4);
    memcpy(&hb, b + 2, 4);
    __mmask64 m = _cvtu64_mask64((uint64_t)ha | (uint64_t)hb << 32);
    __m512i z = nibbles(a + 6, b + 6);
    return _mm512_mask_add_epi8(z, m, z, _mm512_set1_epi8(0x10));
}

/* z[i] holds rows (i, i+4) for i < 4 and (8+i-4, 12+i-4) for i >= 4; the
   result is the 16 rows' sums in row order. */
INLINE512 __m512i reduce16(const __m512i s[8])
{
    __m512i p01 = _mm512_add_epi32(_mm512_unpacklo_epi32(s[0], s[1]), _mm512_unpackhi_epi32(s[0], s[1]));
    __m512i p23 = _mm512_add_epi32(_mm512_unpacklo_epi32(s[2], s[3]), _mm512_unpackhi_epi32(s[2], s[3]));
    __m512i p45 = _mm512_add_epi32(_mm512_unpacklo_epi32(s[4], s[5]), _mm512_unpackhi_epi32(s[4], s[5]));
    __m512i p67 = _mm512_add_epi32(_mm512_unpacklo_epi32(s[6], s[7]), _mm512_unpackhi_epi32(s[6], s[7]));
    __m512i q0 = _mm512_add_epi32(_mm512_unpacklo_epi64(p01, p23), _mm512_unpackhi_epi64(p01, p23));
    __m512i q1 = _mm512_add_epi32(_mm512_unpacklo_epi64(p45, p67), _mm512_unpackhi_epi64(p45, p67));
    return _mm512_add_epi32(_mm512_shuffle_i64x2(q0, q1, 0x88), _mm512_shuffle_i64x2(q0, q1, 0xdd));
}

#define INT_KERNEL(fmt, BLOCK, OFF)                                                              \
    INLINE512 void fmt##_pass(const uint8_t *const p[16], __m512i gidx, int64_t nb,               \
                              const uint8_t *xq, size_t xq_stride, const int tb,                  \
                              float *y, size_t y_stride, __mmask16 m)                             \
    {                                                                                             \
        __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),          \
                         _mm512_setzero_ps()};                                                    \
        const __m512i offv = _mm512_set1_epi8((char)(OFF)), zero = _mm512_setzero_si512();        \
        for (int64_t b = 0; b < nb; b++) {                                                        \
            size_t o = (size_t)b * (BLOCK);                                                       \
            if ((b & 1) == 0 && o + PF_BYTES < (size_t)nb * (BLOCK))                                               \
                _Pragma("GCC unroll 16") for (int i = 0; i < 16; i++)                                                      \
                    _mm_prefetch((const char *)p[i] + o + PF_BYTES, _MM_HINT_T0);      \
            __m512i z[8];                                                                         \
            _Pragma("GCC unroll 16") for (int i = 0; i < 4; i++) {                                                         \
                z[i] = ld_##fmt(p[i] + o, p[i + 4] + o);                                          \
                z[4 + i] = ld_##fmt(p[8 + i] + o, p[12 + i] + o);                                 \
            }                                                                                     \
            __m512i g = _mm512_i32gather_epi32(gidx, (const void *)(p[0] + o), 1);               \
            __m512 dw = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(g));                                \
            _Pragma("GCC unroll 16") for (int t = 0; t < tb; t++) {                                                        \
                const block_q8_0 *xb = (const block_q8_0 *)(xq + (size_t)t * xq_stride) + b;      \
                __m512i a = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)xb->qs)); \
                __m512i negc = _mm512_sub_epi32(zero, _mm512_dpbusd_epi32(zero, offv, a));       \
                __m512i s[8];                                                                     \
                _Pragma("GCC unroll 16") for (int i = 0; i < 8; i++) s[i] = _mm512_dpbusd_epi32(negc, z[i], a);            \
                __m512i isum = reduce16(s);                                                       \
                __m512 dx = _mm512_set1_ps(_cvtsh_ss(xb->d));                                     \
                acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_mul_ps(dw, dx), acc[t]); \
            }                                                                                     \
        }                                                                                         \
        _Pragma("GCC unroll 16") for (int t = 0; t < tb; t++) _mm512_mask_storeu_ps(y + (size_t)t * y_stride, m, acc[t]); \
    }                                                                                             \
    EMBER_TARGET_AVX512 void ember_matmul_##fmt##_avx512(EMBER_MATMUL_ARGS)                       \
    {                                                                                             \
        if (row_bytes > ((size_t)1 << 26)) { /* gather offsets are int32 */                       \
            ember_matmul_##fmt##_scalar(w, row_bytes, k, r0, r1, xq, xq_stride, nt, y, y_stride); \
            return;                                                                               \
        }                                                                                         \
        int64_t nb = k / QK;                                                                      \
        for (int g0 = r0; g0 < r1; g0 += 16) {                                                    \
            int n = r1 - g0 < 16 ? r1 - g0 : 16;                                                  \
            const uint8_t *p[16];                                                                 \
            int idx[16];                                                                          \
            for (int i = 0; i < 16; i++) {                                                        \
                int r = g0 + (i < n ? i : n - 1); /* tail lanes repeat a valid row */             \
                p[i] = (const uint8_t *)w + (size_t)r * row_bytes;                                \
            }                                                                                     \
            for (int i = 0; i < 16; i++) idx[i] = (int)(p[i] - p[0]);                             \
            __m512i gidx = _mm512_loadu_si512(idx);                                               \
            __mmask16 m = (__mmask16)((1u << n) - 1);                                             \
            for (int t = 0; t < nt; t += 4) {                                                     \
                const uint8_t *xt = (const uint8_t *)xq + (size_t)t * xq_stride;                  \
                float *yt = y + (size_t)t * y_stride + g0;                                        \
                switch (nt - t) {                                                                 \
                case 1: fmt##_pass(p, gidx, nb, xt, xq_stride, 1, yt, y_stride, m); break;       \
                case 2: fmt##_pass(p, gidx, nb, xt, xq_stride, 2, yt, y_stride, m); break;       \
                case 3: fmt##_pass(p, gidx, nb, xt, xq_stride, 3, yt, y_stride, m); break;       \
                default: fmt##_pass(p, gidx, nb, xt, xq_stride, 4, yt, y_stride, m); break;      \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
    }

INT_KERNEL(q8_0, sizeof(block_q8_0), 128)
INT_KERNEL(q4_0, sizeof(block_q4_0), 8)
INT_KERNEL(q5_0, sizeof(block_q5_0), 16)

/* ---- float formats: 4 rows x up to 4 tokens of 16-wide fma chains ------ */

typedef float fl_elem_f32;
typedef uint16_t fl_elem_f16, fl_elem_bf16;

INLINE512 __m512 fl_f32(const void *p, int64_t i, __mmask16 m)
{
    return _mm512_maskz_loadu_ps(m, (const float *)p + i);
}

INLINE512 __m512 fl_f16(const void *p, int64_t i, __mmask16 m)
{
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, (const uint16_t *)p + i));
}

INLINE512 __m512 fl_bf16(const void *p, int64_t i, __mmask16 m)
{
    __m512i v = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, (const uint16_t *)p + i));
    return _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
}

#define FLOAT_KERNEL(fmt)                                                                         \
    INLINE512 void fmt##_tile(const uint8_t *w, size_t row_bytes, int64_t k, const int rb,        \
                              const uint8_t *xq, size_t xq_stride, const int tb,                  \
                              float *y, size_t y_stride)                                          \
    {                                                                                             \
        __m512 acc[4][4];                                                                         \
        _Pragma("GCC unroll 16") for (int i = 0; i < 4; i++) /* all of it: quiets -Wmaybe-uninitialized */                                                              \
            _Pragma("GCC unroll 16") for (int t = 0; t < 4; t++) acc[i][t] = _mm512_setzero_ps();                         \
        for (int64_t j = 0; j < k; j += 16) {                                                     \
            __mmask16 m = k - j >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (k - j)) - 1);     \
            if (j + 256 < k)                                                                      \
                _Pragma("GCC unroll 16") for (int i = 0; i < rb; i++)                                                      \
                    _mm_prefetch((const char *)w + (size_t)i * row_bytes + (j + 256) * (int64_t)sizeof(fl_elem_##fmt), _MM_HINT_T0); \
            __m512 x[4];                                                                          \
            _Pragma("GCC unroll 16") for (int t = 0; t < tb; t++)                                                          \
                x[t] = _mm512_maskz_loadu_ps(m, (const float *)(xq + (size_t)t * xq_stride) + j); \
            _Pragma("GCC unroll 16") for (int i = 0; i < rb; i++) {                                                        \
                __m512 wv = fl_##fmt(w + (size_t)i * row_bytes, j, m);                            \
                _Pragma("GCC unroll 16") for (int t = 0; t < tb; t++) acc[i][t] = _mm512_fmadd_ps(wv, x[t], acc[i][t]);    \
            }                                                                                     \
        }                                                                                         \
        _Pragma("GCC unroll 16") for (int i = 0; i < rb; i++)                                                              \
            _Pragma("GCC unroll 16") for (int t = 0; t < tb; t++) y[(size_t)t * y_stride + i] = _mm512_reduce_add_ps(acc[i][t]); \
    }                                                                                             \
    EMBER_TARGET_AVX512 void ember_matmul_##fmt##_avx512(EMBER_MATMUL_ARGS)                       \
    {                                                                                             \
        for (int r = r0; r < r1;) {                                                               \
            int rb = r1 - r >= 4 ? 4 : 1;                                                         \
            const uint8_t *wr = (const uint8_t *)w + (size_t)r * row_bytes;                       \
            for (int t = 0; t < nt; t += 4) {                                                     \
                const uint8_t *xt = (const uint8_t *)xq + (size_t)t * xq_stride;                  \
                float *yt = y + (size_t)t * y_stride + r;                                         \
                int tb = nt - t < 4 ? nt - t : 4;                                                 \
                if (rb == 4) {                                                                    \
                    switch (tb) {                                                                 \
                    case 1: fmt##_tile(wr, row_bytes, k, 4, xt, xq_stride, 1, yt, y_stride); break; \
                    case 2: fmt##_tile(wr, row_bytes, k, 4, xt, xq_stride, 2, yt, y_stride); break; \
                    case 3: fmt##_tile(wr, row_bytes, k, 4, xt, xq_stride, 3, yt, y_stride); break; \
                    default: fmt##_tile(wr, row_bytes, k, 4, xt, xq_stride, 4, yt, y_stride); break; \
                    }                                                                             \
                } else {                                                                          \
                    fmt##_tile(wr, row_bytes, k, 1, xt, xq_stride, tb, yt, y_stride);            \
                }                                                                                 \
            }                                                                                     \
            r += rb;                                                                              \
        }                                                                                         \
    }

FLOAT_KERNEL(f32)
FLOAT_KERNEL(f16)
FLOAT_KERNEL(bf16)

#endif
