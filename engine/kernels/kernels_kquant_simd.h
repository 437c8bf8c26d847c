/* Helpers shared by the AVX2 and AVX-512 K-quant kernels.  Include after
   defining INL as static inline always_inline with the file's target
   attribute, so each file compiles them for its own ISA. */
#ifndef EMBER_KERNELS_KQUANT_SIMD_H
#define EMBER_KERNELS_KQUANT_SIMD_H

#include <stdint.h>
#include <string.h>

#include "dtype.h"
#include "kernels.h"
#include "simd.h"

INL __m256i load256(const void *p) { return _mm256_loadu_si256((const __m256i *)p); }

static inline const block_q8_K *act(const void *xq, size_t stride, int t)
{
    return (const block_q8_K *)(const void *)((const uint8_t *)xq + (size_t)t * stride);
}

/* ember_sum8 of one register */
INL float sum8(__m256 v)
{
    float f[8];
    _mm256_storeu_ps(f, v);
    return ember_sum8(f);
}

/* Q3_K's 16 scales minus 32 as words: bytes 0..7 give the low nibbles
   (scales 0..7 low, 8..15 high), bytes 8..11 two top bits each. */
INL __m256i q3_scale_words(const uint8_t *s)
{
    uint32_t a0, a1, a2;
    memcpy(&a0, s, 4);
    memcpy(&a1, s + 4, 4);
    memcpy(&a2, s + 8, 4);
    const uint32_t lo4 = 0x0f0f0f0fu, hi2 = 0x03030303u;
    uint64_t w01 = (a0 & lo4) | (a2 & hi2) << 4 | (uint64_t)((a1 & lo4) | ((a2 >> 2) & hi2) << 4) << 32;
    uint64_t w23 = ((a0 >> 4) & lo4) | ((a2 >> 4) & hi2) << 4 |
                   (uint64_t)(((a1 >> 4) & lo4) | ((a2 >> 6) & hi2) << 4) << 32;
    __m128i b = _mm_sub_epi8(_mm_set_epi64x((long long)w23, (long long)w01), _mm_set1_epi8(32));
    return _mm256_cvtepi8_epi16(b);
}

#endif
