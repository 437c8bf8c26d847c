/* Packed Q4_K on AVX2: the 16-row tiles of kernels_packed_q45_K.c read as
   two 8-row halves, row r of a half in dword r.  Per lane and sub-block,
   vpmaddubsw (quants x activations, pairs in words) and vpmaddwd against
   the words (sc, sc) give 8 rows' scaled 4-quant dots, exact, added into
   the lane's int32 sum; per super-block the float steps of
   kernels_kquant_impl.h, so the results are the compressed kernels' bit
   for bit.
 *
 * One token per pass: sixteen ymm registers hold one half's 8 lane sums
 * and the vectors they need.  Two tokens sharing each decoded chunk (lane
 * sums for half the lanes at a time) measured slower in prefill and in
 * decode on a Zen 4 core, so prefill gains little here (0.9-1.04x the
 * compressed AVX2 kernel, 2048 x 2048 x 128 tokens); decode out of cache
 * 1.06-1.2x. */
#include "config.h"

#include <string.h>

#include "dtype.h"
#include "kernels.h"
#include "kernels_packed_q45_K.h"
#include "simd.h"
#include "kernels_packed_tiles.h"

#ifdef EMBER_SIMD
#define INL2 static inline __attribute__((always_inline)) EMBER_TARGET_AVX2

#define PF_L1 (2 * 1024)

/* Both halves of one tile against one token over nb super-blocks, each
   super-block's record read once (half 0, then half 1 from L1), rows
   [lo, hi) of the tile stored at y.  The float sums of both halves live
   in L1. */
INL2 void tile_pass(const uint8_t *rec, int64_t nb, const block_q8_K *x, float *y, int lo, int hi)
{
    __m256 acc[2][12];   /* per half: 8 lanes, then the 4 min lanes */
    for (int g = 0; g < 2; g++)
        for (int l = 0; l < 12; l++) acc[g][l] = _mm256_setzero_ps();
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    for (int64_t b = 0; b < nb; b++, rec += REC) {
        const block_q8_K *xb = x + b;
        _mm_prefetch((const char *)rec + SC + PF_L1, _MM_HINT_T0);
        _mm_prefetch((const char *)rec + MN + PF_L1, _MM_HINT_T0);
        _mm_prefetch((const char *)rec + MN + 64 + PF_L1, _MM_HINT_T0);
        _mm_prefetch((const char *)rec + DW + PF_L1, _MM_HINT_T0);
        /* q8s_j = bsums[2j] + bsums[2j+1] as words, dword q = (q8s_2q, q8s_2q+1) */
        __m128i q8s = _mm_hadd_epi16(_mm_loadu_si128((const __m128i *)(const void *)xb->bsums),
                                     _mm_loadu_si128((const __m128i *)(const void *)(xb->bsums + 8)));
        int32_t qd[4];
        _mm_storeu_si128((__m128i *)(void *)qd, q8s);
        for (int half = 0; half < 2; half++) {
            const int o = half * 8;
            __m256i is[8];
            _Pragma("GCC unroll 8") for (int l = 0; l < 8; l++) is[l] = _mm256_setzero_si256();
            _Pragma("GCC unroll 8") for (int j = 0; j < 8; j++) {
                __m256i s = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(rec + SC + 16 * j + o)));
                s = _mm256_or_si256(s, _mm256_slli_epi32(s, 16));
                _Pragma("GCC unroll 4") for (int h = 0; h < 4; h++) {
                    const uint8_t *c = rec + QS + (4 * j + h) * 64 + 4 * o;
                    if (!half) _mm_prefetch((const char *)c + PF_L1, _MM_HINT_T0);
                    __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)c);
                    __m256i wl = _mm256_and_si256(v, low4), wh = _mm256_and_si256(_mm256_srli_epi16(v, 4), low4);
                    const int8_t *qs = xb->qs + 32 * j + 4 * h;
                    is[h] = _mm256_add_epi32(is[h],
                                             _mm256_madd_epi16(_mm256_maddubs_epi16(wl, _mm256_set1_epi32(ember_rd32(qs))), s));
                    is[h + 4] = _mm256_add_epi32(
                        is[h + 4], _mm256_madd_epi16(_mm256_maddubs_epi16(wh, _mm256_set1_epi32(ember_rd32(qs + 16))), s));
                }
            }
            __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(rec + DW + 2 * o)));
            __m256 dm = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(rec + DM + 2 * o)));
            __m256 d = _mm256_mul_ps(_mm256_set1_ps(xb->d), dw);
            __m256 dmin = _mm256_mul_ps(_mm256_set1_ps(-xb->d), dm);
            _Pragma("GCC unroll 8") for (int l = 0; l < 8; l++)
                acc[half][l] = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(is[l]), acc[half][l]);
            _Pragma("GCC unroll 4") for (int q = 0; q < 4; q++) {
                __m256i mn = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(rec + MN + 32 * q + 2 * o)));
                acc[half][8 + q] = _mm256_fmadd_ps(
                    dmin, _mm256_cvtepi32_ps(_mm256_madd_epi16(mn, _mm256_set1_epi32(qd[q]))), acc[half][8 + q]);
            }
        }
    }
    float out[16];
    for (int g = 0; g < 2; g++) {
        const __m256 *a = acc[g];
        __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a[0], a[4]), _mm256_add_ps(a[2], a[6])),
                                 _mm256_add_ps(_mm256_add_ps(a[1], a[5]), _mm256_add_ps(a[3], a[7])));
        __m256 mins = _mm256_add_ps(_mm256_add_ps(a[8], a[10]), _mm256_add_ps(a[9], a[11]));
        _mm256_storeu_ps(out + 8 * g, _mm256_add_ps(s, mins));
    }
    for (int r = lo; r < hi; r++) y[r] = out[r];
}

/* Tokens whose activations stay in L2 while a tile is read once for all
   of them (as kernels_packed_q45_K.c's ACT_CHUNK). */
#define ACT_CHUNK (512 * 1024)

EMBER_TARGET_AVX2 void ember_packed_q4_K_matmul_avx2(const void *packed, size_t tile_bytes, int64_t k, int r0, int r1,
                                                     const void *xq, size_t xq_stride, int nt, float *y,
                                                     size_t y_stride)
{
    int64_t nb = k / QK_K;
    if (r0 >= r1 || nb <= 0) return;
    int chunk = (int)(ACT_CHUNK / ((size_t)nb * sizeof(block_q8_K)));
    if (chunk < 1) chunk = 1;
    for (int c0 = 0; c0 < nt; c0 += chunk) {
        int c1 = nt - c0 < chunk ? nt : c0 + chunk;
        for (int r = r0 - r0 % ROWS; r < r1; r += ROWS) {
            const uint8_t *tile = (const uint8_t *)packed + (size_t)(r / ROWS) * tile_bytes;
            int lo = r0 > r ? r0 - r : 0, hi = r1 - r < ROWS ? r1 - r : ROWS;
            for (int t = c0; t < c1; t++)
                tile_pass(tile, nb, (const block_q8_K *)(const void *)((const uint8_t *)xq + (size_t)t * xq_stride),
                          y + (size_t)t * y_stride + r, lo, hi);
        }
    }
}
#endif
