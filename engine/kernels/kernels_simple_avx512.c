/* AVX-512 (VNNI) kernels for Q8_0, Q4_0, Q5_0, Q4_1, Q5_1, IQ4_NL and the
 * float formats.
 *
 * Integer formats are vectorised across 16 rows: four zmm each hold four
 * rows' (one per 128-bit lane) first 16 codes of a block and four more
 * their last 16; one vpdpbusd per zmm leaves, per row, the int32 dots of
 * its 4-input groups 0..3 (lo) and 4..7 (hi) in the lanes where the rows'
 * f32 group sums live.  Each group sum takes one fma per block, and the
 * row's result is the reference's 8-lane tree (ember_sum8) at the end: the
 * scalar oracle's fmaf() sequence lane for lane, bit-identical.  The loaded
 * codes are reused for up to 2 tokens per pass.
 *
 * vpdpbusd multiplies unsigned by signed bytes, so weights enter as
 * u = w + off (unsigned) and the accumulator starts at -off * (partial sums
 * of the activations), which makes every partial exact for any int8 input.
 * Q4_1/Q5_1 (unsigned codes, Q8_1 activations) add the 16 rows' m_w * s_x
 * sums in one more zmm; IQ4_NL enters as code book value + 128, for one
 * token with a second set of group sums for odd blocks (its decode order,
 * kernels_simple.c) and so one token per pass.
 */
#include "config.h"

#include <string.h>

#include "dtype.h"
#include "kernels_simple.h"
#include "simd.h"

#ifdef EMBER_SIMD

#define INLINE512 static inline __attribute__((always_inline)) EMBER_TARGET_AVX512

/* A pass reads 16 rows: evenly spaced (row i at b + i * rs, which keeps
   every address in base + index form instead of 16 live pointers that spill)
   or, for a range of fewer than 16 rows, through a pointer table whose tail
   lanes repeat a valid row. */
typedef struct {
    const uint8_t *b;
    size_t rs;
    const uint8_t *const *p;
} rows16;

#define RP(R, i, S) ((S) ? (R).b + (size_t)(i) * (R).rs : (R).p[i])

/* Loaders fill, for row group j (rows j, 4+j, 8+j, 12+j of the 16, one per
   128-bit lane), the unsigned codes u = w + off of the block's first 16
   inputs (lo) and of its last 16 (hi). */
INLINE512 void ld_q8_0(rows16 R, const int S, size_t o, __m512i lo[4], __m512i hi[4])
{
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) {
        __m512i a = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(RP(R, j, S) + o + 2))),
                                       _mm256_loadu_si256((const __m256i *)(RP(R, 4 + j, S) + o + 2)), 1);
        __m512i b = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(RP(R, 8 + j, S) + o + 2))),
                                       _mm256_loadu_si256((const __m256i *)(RP(R, 12 + j, S) + o + 2)), 1);
        a = _mm512_xor_si512(a, flip);
        b = _mm512_xor_si512(b, flip);
        lo[j] = _mm512_shuffle_i64x2(a, b, 0x88);
        hi[j] = _mm512_shuffle_i64x2(a, b, 0xdd);
    }
}

/* 16 bytes of nibbles per row: low nibbles are inputs 0..15, high 16..31. */
INLINE512 __m512i ld16x4(const uint8_t *a, const uint8_t *b, const uint8_t *c, const uint8_t *d)
{
    __m512i v = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)a));
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)b), 1);
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)c), 2);
    return _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)d), 3);
}

INLINE512 void ld_q4_0(rows16 R, const int S, size_t o, __m512i lo[4], __m512i hi[4])
{
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) {
        __m512i v = ld16x4(RP(R, j, S) + o + 2, RP(R, 4 + j, S) + o + 2, RP(R, 8 + j, S) + o + 2, RP(R, 12 + j, S) + o + 2);
        lo[j] = _mm512_and_si512(v, m4);
        hi[j] = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
    }
}

INLINE512 uint32_t rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

INLINE512 void ld_q4_1(rows16 R, const int S, size_t o, __m512i lo[4], __m512i hi[4])
{
    ld_q4_0(R, S, o + 2, lo, hi);
}

/* IQ4_NL: the nibbles index the code book, stored + 128 as unsigned bytes */
INLINE512 void ld_iq4_nl(rows16 R, const int S, size_t o, __m512i lo[4], __m512i hi[4])
{
    const __m512i tbl = _mm512_xor_si512(_mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)ember_iq4nl_values)),
                                         _mm512_set1_epi8((char)0x80));
    ld_q4_0(R, S, o, lo, hi);
    _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) {
        lo[j] = _mm512_shuffle_epi8(tbl, lo[j]);
        hi[j] = _mm512_shuffle_epi8(tbl, hi[j]);
    }
}

/* Q5_0's fifth bits become byte masks: lane L of group j takes the low
   (inputs 0..15) or high (16..31) half of its row's qh. */
INLINE512 void ld_q5_0(rows16 R, const int S, size_t o, __m512i lo[4], __m512i hi[4])
{
    const __m512i m4 = _mm512_set1_epi8(0x0f), b4 = _mm512_set1_epi8(0x10);
    _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) {
        uint64_t h0 = rd32(RP(R, j, S) + o + 2), h1 = rd32(RP(R, 4 + j, S) + o + 2);
        uint64_t h2 = rd32(RP(R, 8 + j, S) + o + 2), h3 = rd32(RP(R, 12 + j, S) + o + 2);
        uint64_t mlo = (h0 & 0xffff) | (h1 & 0xffff) << 16 | (h2 & 0xffff) << 32 | (h3 & 0xffff) << 48;
        uint64_t mhi = h0 >> 16 | (h1 >> 16) << 16 | (h2 >> 16) << 32 | (h3 >> 16) << 48;
        __m512i v = ld16x4(RP(R, j, S) + o + 6, RP(R, 4 + j, S) + o + 6, RP(R, 8 + j, S) + o + 6, RP(R, 12 + j, S) + o + 6);
        __m512i l = _mm512_and_si512(v, m4), h = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
        lo[j] = _mm512_mask_add_epi8(l, _cvtu64_mask64(mlo), l, b4);
        hi[j] = _mm512_mask_add_epi8(h, _cvtu64_mask64(mhi), h, b4);
    }
}

INLINE512 void ld_q5_1(rows16 R, const int S, size_t o, __m512i lo[4], __m512i hi[4])
{
    ld_q5_0(R, S, o + 2, lo, hi);
}

/* a[j] slot (L, k) holds row 4L+j's sum for group k (lo) or k+4 (hi);
   the result is the 16 rows' ember_sum8 in row order. */
INLINE512 __m512 finish16(const __m512 lo[4], const __m512 hi[4])
{
    __m512 q[4];
    _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) {
        __m512 t = _mm512_add_ps(lo[j], hi[j]);                       /* a_k + a_k+4 */
        t = _mm512_add_ps(t, _mm512_permute_ps(t, _MM_SHUFFLE(1, 0, 3, 2)));   /* (..0 + ..2), (..1 + ..3) */
        q[j] = _mm512_add_ps(t, _mm512_permute_ps(t, _MM_SHUFFLE(2, 3, 0, 1)));
    }
    __m512 a = _mm512_unpacklo_ps(q[0], q[1]), b = _mm512_unpacklo_ps(q[2], q[3]);
    return _mm512_shuffle_ps(a, b, _MM_SHUFFLE(1, 0, 1, 0));
}

/* g[j] slot (L, k) holds row 4L+j's partial k: the 16 rows' totals in
   row order. */
INLINE512 __m512i rowsum16(const __m512i g[4])
{
    __m512i a = _mm512_add_epi32(_mm512_unpacklo_epi32(g[0], g[1]), _mm512_unpackhi_epi32(g[0], g[1]));
    __m512i b = _mm512_add_epi32(_mm512_unpacklo_epi32(g[2], g[3]), _mm512_unpackhi_epi32(g[2], g[3]));
    return _mm512_add_epi32(_mm512_unpacklo_epi64(a, b), _mm512_unpackhi_epi64(a, b));
}

/* The 16 rows' fp16 block scales.  Scalar loads assembled in registers run
   on the integer ports beside the vector work and cost less than a gather
   (slow on AMD). */
INLINE512 uint64_t rd16x4(rows16 R, const int S, int i0, size_t o)
{
    uint16_t a, b, c, d;
    memcpy(&a, RP(R, i0, S) + o, 2);
    memcpy(&b, RP(R, i0 + 1, S) + o, 2);
    memcpy(&c, RP(R, i0 + 2, S) + o, 2);
    memcpy(&d, RP(R, i0 + 3, S) + o, 2);
    return (uint64_t)a | (uint64_t)b << 16 | (uint64_t)c << 32 | (uint64_t)d << 48;
}

INLINE512 __m256i scales16(rows16 R, const int S, size_t o)
{
    return _mm256_set_epi64x((long long)rd16x4(R, S, 12, o), (long long)rd16x4(R, S, 8, o),
                             (long long)rd16x4(R, S, 4, o), (long long)rd16x4(R, S, 0, o));
}

/* Decode reads 16 row streams at once, which the hardware prefetchers follow
   poorly out of cache (one sequential stream reads ~1.4x faster here).
   Software prefetch makes up for it: while a group of 16 rows is computed,
   the next group (contiguous in memory) streams into L2 sequentially, one
   block's worth per row per step; each row is fetched into L1 PF_BYTES ahead
   of use, running on into the next group's rows at the end, and a group's
   first bytes are fetched before its first block.  Only a group's first pass
   prefetches: prefill's later passes find the rows in cache. */
#ifndef PF_BYTES
#define PF_BYTES 256
#endif

/* AB: activation block bytes (Q8_0 34; Q8_1 36, codes after d and s);
   MIN: fp16 mins after d, folded as m_w * s_x; PR: IQ4_NL's even / odd
   group sums and whole odd last block. */
#define INT_KERNEL(name, fmt, BLOCK, OFF, BO, AB, MIN, PR)                                         \
    INLINE512 void name##_pass(rows16 R, const int S, int64_t nb, const uint8_t *xq,               \
                              size_t xq_stride, const int tb, float *y, size_t y_stride,          \
                              __mmask16 m, uintptr_t pf, uintptr_t pfe, const char *nx, int warm) \
    {                                                                                             \
        /* slot (L, k) of a row group's vectors belongs to row 4L + j */                          \
        const __m512i row4 = _mm512_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12); \
        __m512 alo[2][4], ahi[2][4], summ[2], tail = _mm512_setzero_ps(), tail_d = tail;                         \
        _Pragma("GCC unroll 2") for (int t = 0; t < 2; t++) {                                     \
            summ[t] = _mm512_setzero_ps();                                                        \
            _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++)                                   \
                alo[t][j] = ahi[t][j] = _mm512_setzero_ps();                                      \
        }                                                                                         \
        const __m512i offv = _mm512_set1_epi8((char)(OFF)), zero = _mm512_setzero_si512();        \
        if (warm) for (size_t o = 0; o < PF_BYTES && o < (size_t)nb * (BLOCK); o += 64)                   \
            _Pragma("GCC unroll 16") for (int i = 0; i < 16; i++)                                 \
                _mm_prefetch((const char *)RP(R, i, S) + o, _MM_HINT_T0);                         \
        for (int64_t b = 0; b < nb; b++) {                                                        \
            size_t o = (size_t)b * (BLOCK);                                                       \
            if (!warm || (b & 1)) {                                                               \
            } else if (o + PF_BYTES < (size_t)nb * (BLOCK)) {                                     \
                _Pragma("GCC unroll 16") for (int i = 0; i < 16; i++)                             \
                    _mm_prefetch((const char *)RP(R, i, S) + o + PF_BYTES, _MM_HINT_T0);          \
            } else if (nx != NULL) { /* integer arithmetic: rows past r1 may lie past the matrix */ \
                uintptr_t a = (uintptr_t)nx + (o + PF_BYTES - (size_t)nb * (BLOCK));              \
                _Pragma("GCC unroll 16") for (int i = 0; i < 16; i++)                             \
                    _mm_prefetch((const char *)(a + (size_t)i * R.rs), _MM_HINT_T0);              \
            }                                                                                     \
            if (pf < pfe) {                                                                       \
                _Pragma("GCC unroll 16") for (int q = 0; q < 16 * (int)(BLOCK); q += 64)          \
                    _mm_prefetch((const char *)(pf + q), _MM_HINT_T1);                            \
                pf += 16 * (BLOCK);                                                               \
            }                                                                                     \
            __m512i lo[4], hi[4];                                                                 \
            ld_##fmt(R, S, o, lo, hi);                                                            \
            __m512 dw = _mm512_cvtph_ps(scales16(R, S, o)), dwj[4];                               \
            __m512 mw = (MIN) ? _mm512_cvtph_ps(scales16(R, S, o + 2)) : dw;                      \
            _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++)                                   \
                dwj[j] = _mm512_permutexvar_ps(_mm512_add_epi32(row4, _mm512_set1_epi32(j)), dw); \
            const int odd = (PR) && (b & 1);                                                      \
            _Pragma("GCC unroll 2") for (int t = 0; t < tb; t++) {                                \
                const uint8_t *xb = xq + (size_t)t * xq_stride + (size_t)b * (AB);                \
                const int8_t *xs = (const int8_t *)(xb + (AB) - QK);                              \
                uint16_t xd, xsum;                                                                \
                memcpy(&xd, xb, 2);                                                               \
                memcpy(&xsum, xb + 2, 2);                                                         \
                __m512i xlo = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)xs));       \
                __m512i xhi = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(xs + 16))); \
                __m512i clo = _mm512_sub_epi32(zero, _mm512_dpbusd_epi32(zero, offv, xlo));       \
                __m512i chi = _mm512_sub_epi32(zero, _mm512_dpbusd_epi32(zero, offv, xhi));       \
                __m512 dx = _mm512_set1_ps(_cvtsh_ss(xd));                                        \
                if (MIN) summ[t] = _mm512_fmadd_ps(mw, _mm512_set1_ps(_cvtsh_ss(xsum)), summ[t]); \
                if (BO || ((PR) && (nb & 1) && b == nb - 1)) { /* one sum per row: its 8 partials added in int32 */ \
                    __m512i c = _mm512_add_epi32(clo, chi), g[4];                                 \
                    _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++)                           \
                        g[j] = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(c, lo[j], xlo), hi[j], xhi); \
                    if (PR) tail = _mm512_cvtepi32_ps(rowsum16(g)), tail_d = _mm512_mul_ps(dw, dx); \
                    else alo[t][0] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(rowsum16(g)), _mm512_mul_ps(dw, dx), alo[t][0]); \
                } else                                                                            \
                _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) {                             \
                    __m512 dj = _mm512_mul_ps(dwj[j], dx);                                        \
                    __m512 *al = odd ? &alo[1][j] : &alo[t][j], *ah = odd ? &ahi[1][j] : &ahi[t][j]; \
                    *al = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_dpbusd_epi32(clo, lo[j], xlo)), dj, *al); \
                    *ah = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_dpbusd_epi32(chi, hi[j], xhi)), dj, *ah); \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
        if (PR) { /* one token: set 1 holds the odd blocks' sums */    \
            _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) {                                 \
                alo[0][j] = _mm512_add_ps(alo[0][j], alo[1][j]);                                  \
                ahi[0][j] = _mm512_add_ps(ahi[0][j], ahi[1][j]);                                  \
            }                                                                                     \
            __m512 v = finish16(alo[0], ahi[0]);                                                  \
            if (nb & 1) v = _mm512_fmadd_ps(tail, tail_d, v);                                    \
            _mm512_mask_storeu_ps(y, m, v);                                                       \
            return;                                                                               \
        }                                                                                         \
        _Pragma("GCC unroll 2") for (int t = 0; t < tb; t++) {                                    \
            __m512 v = (BO) ? alo[t][0] : finish16(alo[t], ahi[t]);                               \
            if (MIN) v = _mm512_add_ps(v, summ[t]);                                               \
            _mm512_mask_storeu_ps(y + (size_t)t * y_stride, m, v);                                \
        }                                                                                         \
    }                                                                                             \
    INLINE512 void name##_group(rows16 R, const int S, int64_t nb, const uint8_t *xq,              \
                               size_t xq_stride, int nt, float *y, size_t y_stride, __mmask16 m,  \
                               uintptr_t pf, uintptr_t pfe, const char *nx)                       \
    {                                                                                             \
        for (int t = 0; t < nt; t += (PR) ? 1 : 2) {                                              \
            const uint8_t *xt = xq + (size_t)t * xq_stride;                                       \
            float *yt = y + (size_t)t * y_stride;                                                 \
            if ((PR) || nt - t == 1) name##_pass(R, S, nb, xt, xq_stride, 1, yt, y_stride, m, pf, pfe, nx, t == 0); \
            else name##_pass(R, S, nb, xt, xq_stride, 2, yt, y_stride, m, pf, pfe, nx, t == 0);  \
            pf = pfe; /* the first pass fetched what the next group needs */                     \
            nx = NULL;                                                                            \
        }                                                                                         \
    }                                                                                             \
    EMBER_TARGET_AVX512 void ember_matmul_##name##_avx512(EMBER_MATMUL_ARGS)                      \
    {                                                                                             \
        int64_t nb = k / QK;                                                                      \
        const uint8_t *w8 = w, *x8 = xq;                                                          \
        if (r1 - r0 < 16) { /* fewer rows than one group: tail lanes repeat the last row */       \
            if (r1 <= r0) return;                                                                 \
            const uint8_t *p[16];                                                                 \
            for (int i = 0; i < 16; i++) p[i] = w8 + (size_t)(r0 + (i < r1 - r0 ? i : r1 - r0 - 1)) * row_bytes; \
            rows16 R = {NULL, 0, p};                                                              \
            name##_group(R, 0, nb, x8, xq_stride, nt, y + r0, y_stride,                            \
                        (__mmask16)((1u << (r1 - r0)) - 1), 0, 0, NULL);                          \
            return;                                                                               \
        }                                                                                         \
        /* prefetch addresses are integers: the stream may step a little past r1 */               \
        const uintptr_t end = (uintptr_t)(w8 + (size_t)r1 * row_bytes);                           \
        for (int g0 = r0; g0 < r1; g0 += 16) {                                                    \
            /* a last partial group moves back over rows already done: same values */            \
            int g = r1 - g0 < 16 ? r1 - 16 : g0;                                                  \
            rows16 R = {w8 + (size_t)g * row_bytes, row_bytes, NULL};                             \
            const uintptr_t pf = (uintptr_t)R.b + 16 * row_bytes;                                 \
            const uintptr_t pfe = end - pf > 16 * row_bytes ? pf + 16 * row_bytes : end;          \
            name##_group(R, 1, nb, x8, xq_stride, nt, y + g, y_stride, (__mmask16)0xffff, pf, pfe,  \
                        pfe > pf ? (const char *)pf : NULL);                                      \
        }                                                                                         \
    }

#define Q8_0B sizeof(block_q8_0)
#define Q8_1B sizeof(block_q8_1)
INT_KERNEL(q8_0, q8_0, sizeof(block_q8_0), 128, 0, Q8_0B, 0, 0)
INT_KERNEL(q4_0, q4_0, sizeof(block_q4_0), 8, 0, Q8_0B, 0, 0)
INT_KERNEL(q4_0x8, q4_0, sizeof(block_q4_0), 8, 1, Q8_0B, 0, 0)
INT_KERNEL(q5_0, q5_0, sizeof(block_q5_0), 16, 0, Q8_0B, 0, 0)
INT_KERNEL(q4_1, q4_1, sizeof(block_q4_1), 0, 0, Q8_1B, 1, 0)
INT_KERNEL(q5_1, q5_1, sizeof(block_q5_1), 0, 0, Q8_1B, 1, 0)
INT_KERNEL(iq4_nl_pairs, iq4_nl, sizeof(block_iq4_nl), 128, 0, Q8_0B, 0, 1)
INT_KERNEL(iq4_nl_lanes, iq4_nl, sizeof(block_iq4_nl), 128, 0, Q8_0B, 0, 0)

EMBER_TARGET_AVX512 void ember_matmul_iq4_nl_avx512(EMBER_MATMUL_ARGS)
{
    if (nt == 1) ember_matmul_iq4_nl_pairs_avx512(w, row_bytes, k, r0, r1, xq, xq_stride, nt, y, y_stride);
    else ember_matmul_iq4_nl_lanes_avx512(w, row_bytes, k, r0, r1, xq, xq_stride, nt, y, y_stride);
}

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

/* ---- Q8_0 activations: the reference's x86 quantizer's exact bytes ----- */

/* One Q8_0 block of x: its fp16 d and its 32 codes, the reference
   quantizer's bytes. */
static inline __attribute__((always_inline)) EMBER_TARGET_AVX512 __m256i q8_0_block(const float *x, uint16_t *d)
{
    const __m512 absm = _mm512_castsi512_ps(_mm512_set1_epi32(0x7fffffff));
    const __m512 lo = _mm512_set1_ps(-127.0f), hi = _mm512_set1_ps(127.0f);
    __m512 v[2] = {_mm512_loadu_ps(x), _mm512_loadu_ps(x + 16)};
    /* data first: max_ps returns its second operand for NaN, so NaNs
       are skipped like the reference's `fabsf(x) > amax` */
    __m512 m = _mm512_max_ps(_mm512_and_ps(v[0], absm), _mm512_setzero_ps());
    m = _mm512_max_ps(_mm512_and_ps(v[1], absm), m);
    float amax = _mm512_reduce_max_ps(m);
    float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    *d = _cvtss_sh(amax / 127.0f, 0);
    __m512 vid = _mm512_set1_ps(id);
    __m128i q[2];
    for (int h = 0; h < 2; h++) {
        __m512 s = _mm512_mul_ps(v[h], vid);
        __m512 t = _mm512_roundscale_ps(s, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        t = _mm512_min_ps(_mm512_max_ps(t, lo), hi);
        t = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(s, s, _CMP_ORD_Q), t); /* NaN -> 0 */
        q[h] = _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(t));
    }
    return _mm256_set_m128i(q[1], q[0]);
}

EMBER_TARGET_AVX512 void ember_q8_0_quantize_act_avx512(const float *x, void *xq, int64_t k)
{
    block_q8_0 *out = xq;
    for (int64_t i = 0; i < k / QK; i++, x += QK)
        _mm256_storeu_si256((__m256i *)out[i].qs, q8_0_block(x, &out[i].d));
}

EMBER_TARGET_AVX512 void ember_q8_0u_quantize_act_avx512(const float *x, void *xq, int64_t k)
{
    ember_block_q8_0u *out = xq;
    const __m256i flip = _mm256_set1_epi8((char)0x80);
    for (int64_t i = 0; i < k / QK; i++, x += QK) {
        uint16_t d;
        _mm256_storeu_si256((__m256i *)out[i].xu, _mm256_xor_si256(q8_0_block(x, &d), flip));
        out[i].d = _cvtsh_ss(d);
    }
}

#endif
