/* Private to the packers and AVX-512 kernels of the 16-row packed layouts
   (kernels_packed.c, kernels_packed_q45_K.c, kernels_packed_q6_K.c,
   kernels_packed_q4_0.c): what every one of them does at a tile's edges. */
#ifndef EMBER_KERNELS_PACKED_TILES_H
#define EMBER_KERNELS_PACKED_TILES_H

#include <stdint.h>
#include <string.h>

#include "kernels.h"
#include "simd.h"

/* The bytes of a layout's tiles for rows x k: a record of rec bytes per
   block of qk inputs and tile of 16 rows (0 for an empty matrix). */
static inline size_t ember_tiles_bytes(int rows, int64_t k, int64_t qk, size_t rec)
{
    if (rows <= 0 || k <= 0) return 0;
    return (size_t)((rows + EMBER_PACK_ROWS - 1) / EMBER_PACK_ROWS) * (size_t)(k / qk) * rec;
}

/* A packer's tiles [t0, t1) clipped to the rows' tiles: a caller may ask
   past either end. */
static inline void ember_tile_range(int rows, int *t0, int *t1)
{
    int ntiles = (rows + EMBER_PACK_ROWS - 1) / EMBER_PACK_ROWS;
    if (*t0 < 0) *t0 = 0;
    if (*t1 > ntiles) *t1 = ntiles;
}

/* Prefill takes a tile kc blocks at a time from L1 while the next chunk
   (this tile's, or the next tile's first) is asked for into L2, a share of
   its lines before each of the chunk's npass passes over tokens. */
typedef struct {
    const char *p;
    size_t lines, share;
} ember_chunk_pf;

/* The chunk after blocks [k0, k0 + nbc) of a tile (rows of nb blocks,
   rec_bytes a block's record). */
static inline ember_chunk_pf ember_chunk_pf_next(const uint8_t *tile, size_t tile_bytes, size_t rec_bytes, int64_t nb,
                                                 int64_t kc, int64_t k0, int64_t nbc, int npass)
{
    const int last = k0 + nbc == nb;
    const int64_t n = last ? (nb < kc ? nb : kc) : (nb - k0 - nbc < kc ? nb - k0 - nbc : kc);
    ember_chunk_pf c = {(const char *)(last ? tile + tile_bytes : tile + (size_t)(k0 + nbc) * rec_bytes),
                        (size_t)n * rec_bytes / 64, 0};
    c.share = (c.lines + (size_t)npass - 1) / (size_t)(npass > 0 ? npass : 1);
    return c;
}

/* Pass p's share of those lines (prefetches never fault: past the last
   tile they ask for nothing useful, harmlessly). */
static inline void ember_chunk_pf_share(const ember_chunk_pf *c, int p)
{
    for (size_t l = (size_t)p * c->share; l < (size_t)(p + 1) * c->share && l < c->lines; l++)
        __builtin_prefetch(c->p + l * 64, 0, 2);
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
