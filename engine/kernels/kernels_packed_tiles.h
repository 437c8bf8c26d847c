/* Private to the packers and AVX-512 kernels of the 16-row packed layouts
   (kernels_packed.c, kernels_packed_q45_K.c, kernels_packed_q6_K.c,
   kernels_packed_q4_0.c): what every one of them does at a tile's edges. */
#ifndef EMBER_KERNELS_PACKED_TILES_H
#define EMBER_KERNELS_PACKED_TILES_H

#include <stdint.h>
#include <string.h>

#include "kernels.h"
#include "simd.h"

/* An activation dword (4 int8) for a broadcast. */
static inline int32_t ember_rd32(const void *p)
{
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* A packer's tiles [t0, t1) clipped to the rows' tiles: a caller may ask
   past either end. */
static inline void ember_tile_range(int rows, int *t0, int *t1)
{
    int ntiles = (rows + EMBER_PACK_ROWS - 1) / EMBER_PACK_ROWS;
    if (*t0 < 0) *t0 = 0;
    if (*t1 > ntiles) *t1 = ntiles;
}

#ifdef EMBER_SIMD
/* Rows [r, r + 16) clipped to [r0, r1), as a lane mask: a thread's row
   range need not start or end on a tile. */
static inline __mmask16 ember_tile_mask(int r, int r0, int r1)
{
    unsigned lo = r < r0 ? (unsigned)(r0 - r) : 0;
    unsigned hi = r1 - r < EMBER_PACK_ROWS ? (unsigned)(r1 - r) : EMBER_PACK_ROWS;
    return (__mmask16)(((1u << hi) - 1) & ~((1u << lo) - 1));
}

/* The reference's 8-lane tree (ember_sum8) for 16 rows at once. */
static inline __attribute__((always_inline)) EMBER_TARGET_AVX512 __m512 ember_sum8x16(const __m512 a[8])
{
    return _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a[0], a[4]), _mm512_add_ps(a[2], a[6])),
                         _mm512_add_ps(_mm512_add_ps(a[1], a[5]), _mm512_add_ps(a[3], a[7])));
}
#endif

#endif
