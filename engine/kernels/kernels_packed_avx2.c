/* Packed Q8_0 on AVX2 (no VNNI): the 16-row tiles of kernels_packed.c read
   as two 8-row halves, one 8-row group sum per instruction sequence, rows
   in lanes.  The float order is the compressed kernels' (kernels.h): per
   row and group g, one fmaf(isum_g, d_w * d_x, acc_g) per block in block
   order, then the reference's 8-lane tree, so the results equal the
   compressed Q8_0 kernel bit for bit.

   A group sum of 8 rows is vpmaddubsw(|w|, sign(x, w)) then vpmaddwd with
   ones: exact while the activation is not -128 (|w| <= 128, x * sgn(w) fits
   a byte, and a pair of products stays below 2^15).  The activation
   quantizer clamps to +-127, so that is the path taken; a block holding a
   -128 (other producers) goes through int16 products instead, exact for
   every int8. */
#include "config.h"

#include <string.h>

#include "dtype.h"
#include "kernels.h"
#include "simd.h"

#ifdef EMBER_SIMD

#define GROUPS (QK / 4)
#define SCALES (GROUPS * 64)
#define PF_BYTES (2 * EMBER_PACK_RECORD)
#define INLINEP static inline __attribute__((always_inline)) EMBER_TARGET_AVX2

/* rows 0..7 of one group: w holds 8 rows x 4 weights, xb the 4 activations
   broadcast to every dword */
INLINEP __m256i gsum_fast(__m256i w, __m256i xb)
{
    return _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_abs_epi8(w), _mm256_sign_epi8(xb, w)),
                             _mm256_set1_epi16(1));
}

/* the same through int16 products; x16 holds the 4 activations as int16,
   repeated.  vphaddd leaves rows [0 1 4 5 | 2 3 6 7]: one qword permute. */
INLINEP __m256i gsum_exact(__m256i w, __m256i x16)
{
    __m256i lo = _mm256_cvtepi8_epi16(_mm256_castsi256_si128(w));
    __m256i hi = _mm256_cvtepi8_epi16(_mm256_extracti128_si256(w, 1));
    __m256i h = _mm256_hadd_epi32(_mm256_madd_epi16(lo, x16), _mm256_madd_epi16(hi, x16));
    return _mm256_permute4x64_epi64(h, 0xd8);
}

/* Rows 8h..8h+7 of a tile against one token's activations: the 8 rows' dots. */
INLINEP __m256 half_pass(const uint8_t *tile, int h, int64_t nb, const block_q8_0 *x)
{
    __m256 acc[GROUPS];
    _Pragma("GCC unroll 8") for (int g = 0; g < GROUPS; g++) acc[g] = _mm256_setzero_ps();
    const __m256i m128 = _mm256_set1_epi8((char)0x80);
    for (int64_t b = 0; b < nb; b++) {
        const uint8_t *rec = tile + (size_t)b * EMBER_PACK_RECORD;
        if (h == 0)
            _Pragma("GCC unroll 9") for (int q = 0; q <= SCALES; q += 64)
                _mm_prefetch((const char *)rec + PF_BYTES + q, _MM_HINT_T0);
        const block_q8_0 *xb = x + b;
        __m256 s = _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(rec + SCALES + h * 16))),
                                 _mm256_set1_ps(_cvtsh_ss(xb->d)));
        __m256i xa = _mm256_loadu_si256((const __m256i *)xb->qs);
        if (!_mm256_movemask_epi8(_mm256_cmpeq_epi8(xa, m128))) {
            _Pragma("GCC unroll 8") for (int g = 0; g < GROUPS; g++) {
                int32_t a4;
                memcpy(&a4, xb->qs + 4 * g, 4);
                __m256i w = _mm256_loadu_si256((const __m256i *)(rec + g * 64 + h * 32));
                __m256i is = gsum_fast(w, _mm256_set1_epi32(a4));
                acc[g] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(is), s, acc[g]);
            }
        } else {
            for (int g = 0; g < GROUPS; g++) {
                int16_t v[4];
                for (int j = 0; j < 4; j++) v[j] = xb->qs[4 * g + j];
                long long x16;
                memcpy(&x16, v, 8);
                __m256i w = _mm256_loadu_si256((const __m256i *)(rec + g * 64 + h * 32));
                __m256i is = gsum_exact(w, _mm256_set1_epi64x(x16));
                acc[g] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(is), s, acc[g]);
            }
        }
    }
    /* ember_sum8 for 8 rows at once */
    return _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(acc[0], acc[4]), _mm256_add_ps(acc[2], acc[6])),
                         _mm256_add_ps(_mm256_add_ps(acc[1], acc[5]), _mm256_add_ps(acc[3], acc[7])));
}

/* Tiles outer, tokens inner: a tile is read from memory once and served
   from L2 for every token of the call. */
EMBER_TARGET_AVX2 void ember_packed_matmul_avx2(const void *packed, size_t tile_bytes, int64_t k, int r0, int r1,
                                                const void *xq, size_t xq_stride, int nt, float *y,
                                                size_t y_stride)
{
    int64_t nb = k / QK;
    if (r0 >= r1 || nb <= 0) return;
    for (int r = r0 - r0 % 8; r < r1; r += 8) {
        const uint8_t *tile = (const uint8_t *)packed + (size_t)(r / EMBER_PACK_ROWS) * tile_bytes;
        int h = (r % EMBER_PACK_ROWS) / 8;
        int lo = r < r0 ? r0 - r : 0, hi = r1 - r < 8 ? r1 - r : 8;
        for (int t = 0; t < nt; t++) {
            const block_q8_0 *x = (const block_q8_0 *)((const uint8_t *)xq + (size_t)t * xq_stride);
            __m256 v = half_pass(tile, h, nb, x);
            float *yt = y + (size_t)t * y_stride + r;
            if (lo == 0 && hi == 8) {
                _mm256_storeu_ps(yt, v);
            } else {
                float l[8];
                _mm256_storeu_ps(l, v);
                memcpy(yt + lo, l + lo, (size_t)(hi - lo) * sizeof(float));
            }
        }
    }
}

#endif
