/* Packed Q8_0: 16-row tiles laid out for a broadcast-and-vpdpbusd kernel
   (DESIGN.md "Packed Q8_0 layout").  Results are bit-identical to the
   compressed Q8_0 kernels: per row, one fmaf(isum, d_w * d_x, acc) per
   block, in block order. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "dtype.h"
#include "kernels.h"
#include "simd.h"

#define GROUPS (QK / 4)          /* 8 groups of 4 inputs per block */
#define SCALES (GROUPS * 64)     /* byte 512: the 16 fp16 scales */

size_t ember_pack_q8_0_bytes(int rows, int64_t k)
{
    if (rows <= 0 || k <= 0) return 0;
    return (size_t)((rows + EMBER_PACK_ROWS - 1) / EMBER_PACK_ROWS) * (size_t)(k / QK) * EMBER_PACK_RECORD;
}

/* The oracle: byte by byte, as DESIGN.md lays the record out. */
void ember_pack_q8_0_ref(const void *src, size_t row_bytes, int rows, int64_t k,
                         void *dst, int t0, int t1)
{
    int64_t nb = k / QK;
    int ntiles = (rows + EMBER_PACK_ROWS - 1) / EMBER_PACK_ROWS;
    if (t0 < 0) t0 = 0;
    if (t1 > ntiles) t1 = ntiles;
    for (int t = t0; t < t1; t++) {
        uint8_t *rec = (uint8_t *)dst + (size_t)t * (size_t)nb * EMBER_PACK_RECORD;
        for (int64_t b = 0; b < nb; b++, rec += EMBER_PACK_RECORD) {
            memset(rec, 0, EMBER_PACK_RECORD);
            for (int r = 0; r < EMBER_PACK_ROWS; r++) {
                int row = t * EMBER_PACK_ROWS + r;
                if (row >= rows) break;
                const uint8_t *blk = (const uint8_t *)src + (size_t)row * row_bytes + (size_t)b * sizeof(block_q8_0);
                for (int g = 0; g < GROUPS; g++) memcpy(rec + g * 64 + r * 4, blk + 2 + g * 4, 4);
                memcpy(rec + SCALES + r * 2, blk, 2);
            }
        }
    }
}

#if defined(EMBER_SIMD) && defined(__x86_64__)
/* The record is a 16-row x 8-group transpose of 4-byte groups: one masked
   gather per group (row stride as the index) and one 64-byte store, instead
   of 16 x 9 small copies.  Rows past the end read as zero. */
static EMBER_TARGET_AVX512 void pack_q8_0_avx512(const void *src, size_t row_bytes, int rows,
                                                 int64_t k, void *dst, int t0, int t1)
{
    int64_t nb = k / QK;
    const __m512i idx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
                                                             11, 12, 13, 14, 15),
                                           _mm512_set1_epi32((int)row_bytes));
    for (int t = t0; t < t1; t++) {
        int left = rows - t * EMBER_PACK_ROWS;
        __mmask16 m = left >= EMBER_PACK_ROWS ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1);
        const uint8_t *base = (const uint8_t *)src + (size_t)t * EMBER_PACK_ROWS * row_bytes;
        uint8_t *rec = (uint8_t *)dst + (size_t)t * (size_t)nb * EMBER_PACK_RECORD;
        for (int64_t b = 0; b < nb; b++, rec += EMBER_PACK_RECORD, base += sizeof(block_q8_0)) {
            _Pragma("GCC unroll 8") for (int g = 0; g < GROUPS; g++) {
                __m512i v = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m, idx,
                                                        base + 2 + g * 4, 1);
                _mm512_storeu_si512((void *)(rec + g * 64), v);
            }
            __m512i d = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m, idx, base, 1);
            _mm256_storeu_si256((__m256i *)(rec + SCALES), _mm512_cvtepi32_epi16(d));
        }
    }
}
#endif

void ember_pack_q8_0(const void *src, size_t row_bytes, int rows, int64_t k,
                     void *dst, int t0, int t1)
{
    int ntiles = (rows + EMBER_PACK_ROWS - 1) / EMBER_PACK_ROWS;
    if (t0 < 0) t0 = 0;
    if (t1 > ntiles) t1 = ntiles;
#if defined(EMBER_SIMD) && defined(__x86_64__)
    /* row offsets of a tile are gathered as int32 */
    if (ember_cpu_has_vnni512() && row_bytes <= (size_t)INT32_MAX / EMBER_PACK_ROWS) {
        pack_q8_0_avx512(src, row_bytes, rows, k, dst, t0, t1);
        return;
    }
#endif
    ember_pack_q8_0_ref(src, row_bytes, rows, k, dst, t0, t1);
}

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

void ember_packed_matmul_ref(const void *packed, int rows, int64_t k,
                             int r0, int r1,
                             const void *xq, size_t xq_stride, int nt,
                             float *y, size_t y_stride)
{
    int64_t nb = k / QK;
    if (r1 > rows) r1 = rows;
    for (int r = r0; r < r1; r++) {
        const uint8_t *tile = (const uint8_t *)packed + (size_t)(r / EMBER_PACK_ROWS) * (size_t)nb * EMBER_PACK_RECORD;
        int lane = r % EMBER_PACK_ROWS;
        for (int t = 0; t < nt; t++) {
            const block_q8_0 *xb = (const block_q8_0 *)((const uint8_t *)xq + (size_t)t * xq_stride);
            float acc = 0.0f;
            for (int64_t b = 0; b < nb; b++) {
                const uint8_t *rec = tile + (size_t)b * EMBER_PACK_RECORD;
                int32_t isum = 0;
                for (int g = 0; g < GROUPS; g++)
                    for (int j = 0; j < 4; j++)
                        isum += (int32_t)(int8_t)rec[g * 64 + lane * 4 + j] * xb[b].qs[g * 4 + j];
                float s = ember_fp16_to_f32(rd16(rec + SCALES + lane * 2)) * ember_fp16_to_f32(xb[b].d);
                acc = fmaf((float)isum, s, acc);
            }
            y[(size_t)t * y_stride + r] = acc;
        }
    }
}

#ifdef EMBER_SIMD

/* Blocks whose activation sums and scales are precomputed per pass. */
#define CHUNK 64
#define TMAX 8
/* Reading ahead within the tile stream (may run past the end of the
   buffer: prefetches never fault). */
#ifndef PF_BYTES
#define PF_BYTES (2 * EMBER_PACK_RECORD)
#endif

/* vpdpbusd wants unsigned x signed bytes: weights enter as w ^ 0x80 = w + 128
   and each lane starts from -128 * sum(activations of the block), so every
   block sum is exact for any int8 weights and activations. */
#define INLINE512 static inline __attribute__((always_inline)) EMBER_TARGET_AVX512

INLINE512 void tile_pass(const uint8_t *rec, int64_t nbc, const uint8_t *const xb[TMAX], int64_t b0,
                         const int32_t *corr, const float *dx, const int tb,
                         float *y, size_t y_stride, __mmask16 m, int first)
{
    __m512 acc[TMAX];
    _Pragma("GCC unroll 16") for (int t = 0; t < tb; t++)
        acc[t] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(m, y + (size_t)t * y_stride);
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    for (int64_t b = 0; b < nbc; b++, rec += EMBER_PACK_RECORD) {
        __m512i wv[GROUPS];
        _Pragma("GCC unroll 16") for (int g = 0; g < GROUPS; g++) {
            _mm_prefetch((const char *)rec + PF_BYTES + g * 64, _MM_HINT_T0);
            wv[g] = _mm512_xor_si512(_mm512_loadu_si512((const void *)(rec + g * 64)), flip);
        }
        _mm_prefetch((const char *)rec + PF_BYTES + SCALES, _MM_HINT_T0);
        __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(rec + SCALES)));
        _Pragma("GCC unroll 16") for (int t = 0; t < tb; t++) {
            const uint8_t *qs = xb[t] + (size_t)(b0 + b) * sizeof(block_q8_0) + 2;
            __m512i isum = _mm512_set1_epi32(corr[b * TMAX + t]);
            _Pragma("GCC unroll 16") for (int g = 0; g < GROUPS; g++) {
                int32_t a4;
                memcpy(&a4, qs + 4 * g, 4);
                isum = _mm512_dpbusd_epi32(isum, wv[g], _mm512_set1_epi32(a4));
            }
            __m512 s = _mm512_mul_ps(dw, _mm512_set1_ps(dx[b * TMAX + t]));
            acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), s, acc[t]);
        }
    }
    _Pragma("GCC unroll 16") for (int t = 0; t < tb; t++) _mm512_mask_storeu_ps(y + (size_t)t * y_stride, m, acc[t]);
}

static EMBER_TARGET_AVX512 void packed_matmul_vnni(const void *packed, int rows, int64_t k,
                                                   int r0, int r1,
                                                   const void *xq, size_t xq_stride, int nt,
                                                   float *y, size_t y_stride)
{
    int64_t nb = k / QK;
    if (r1 > rows) r1 = rows;
    if (r0 >= r1 || nb <= 0) return;
    int32_t corr[CHUNK * TMAX];
    float dx[CHUNK * TMAX];
    for (int t0 = 0; t0 < nt; t0 += TMAX) {
        int tb = nt - t0 < TMAX ? nt - t0 : TMAX;
        const uint8_t *xb[TMAX] = {0};
        _Pragma("GCC unroll 16") for (int t = 0; t < tb; t++) xb[t] = (const uint8_t *)xq + (size_t)(t0 + t) * xq_stride;
        for (int64_t c0 = 0; c0 < nb; c0 += CHUNK) {
            int64_t nbc = nb - c0 < CHUNK ? nb - c0 : CHUNK;
            for (int64_t b = 0; b < nbc; b++)
                _Pragma("GCC unroll 16") for (int t = 0; t < tb; t++) {
                    const block_q8_0 *blk = (const block_q8_0 *)xb[t] + c0 + b;
                    __m256i a = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)blk->qs),
                                                 _mm256_set1_epi8((char)0x80));
                    __m256i s4 = _mm256_sad_epu8(a, _mm256_setzero_si256());
                    __m128i s2 = _mm_add_epi64(_mm256_castsi256_si128(s4), _mm256_extracti128_si256(s4, 1));
                    int32_t sum = (int32_t)(_mm_cvtsi128_si64(s2) + _mm_extract_epi64(s2, 1)) - 128 * QK;
                    corr[b * TMAX + t] = -128 * sum;
                    dx[b * TMAX + t] = _cvtsh_ss(blk->d);
                }
            for (int r = r0 - r0 % EMBER_PACK_ROWS; r < r1; r += EMBER_PACK_ROWS) {
                unsigned lo = r < r0 ? (unsigned)(r0 - r) : 0;
                unsigned hi = r1 - r < EMBER_PACK_ROWS ? (unsigned)(r1 - r) : EMBER_PACK_ROWS;
                __mmask16 m = (__mmask16)(((1u << hi) - 1) & ~((1u << lo) - 1));
                const uint8_t *rec = (const uint8_t *)packed +
                    ((size_t)(r / EMBER_PACK_ROWS) * (size_t)nb + (size_t)c0) * EMBER_PACK_RECORD;
                float *yt = y + (size_t)t0 * y_stride + r;
                int first = c0 == 0;
#define PASS(n) tile_pass(rec, nbc, xb, c0, corr, dx, n, yt, y_stride, m, first)
                switch (tb) {
                case 1: PASS(1); break;
                case 2: PASS(2); break;
                case 3: PASS(3); break;
                case 4: PASS(4); break;
                case 5: PASS(5); break;
                case 6: PASS(6); break;
                case 7: PASS(7); break;
                default: PASS(8); break;
                }
#undef PASS
            }
        }
    }
}

ember_packed_matmul_fn ember_packed_matmul_get(void)
{
    return ember_cpu_has_vnni512() ? packed_matmul_vnni : NULL;
}

#else

ember_packed_matmul_fn ember_packed_matmul_get(void)
{
    return NULL;
}

#endif
