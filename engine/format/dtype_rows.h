/* The per-type reference row conversions the dtype table (dtype.c) points
   at; defined beside their bit layouts in dtype_simple.c and dtype_kquant.c.
   Private to engine/format: everyone else goes through the table
   (ember_dtype_get(type)->to_float) or ember_(de)quantize_row. */
#ifndef EMBER_DTYPE_ROWS_H
#define EMBER_DTYPE_ROWS_H

#include <stdint.h>

#define EMBER_DTYPE_ROW(t) \
    void ember_to_float_##t(const void *src, float *y, int64_t nb); \
    void ember_from_float_##t(const float *x, void *dst, int64_t nb);

EMBER_DTYPE_ROW(f32)
EMBER_DTYPE_ROW(f16)
EMBER_DTYPE_ROW(bf16)
EMBER_DTYPE_ROW(q4_0)
EMBER_DTYPE_ROW(q4_1)
EMBER_DTYPE_ROW(q5_0)
EMBER_DTYPE_ROW(q5_1)
EMBER_DTYPE_ROW(q8_0)
EMBER_DTYPE_ROW(iq4_nl)
EMBER_DTYPE_ROW(iq4_xs)
EMBER_DTYPE_ROW(mxfp4)
EMBER_DTYPE_ROW(iq2_xxs)
EMBER_DTYPE_ROW(iq2_xs)
EMBER_DTYPE_ROW(iq2_s)
EMBER_DTYPE_ROW(iq3_xxs)
EMBER_DTYPE_ROW(iq3_s)
EMBER_DTYPE_ROW(iq1_s)
EMBER_DTYPE_ROW(iq1_m)
EMBER_DTYPE_ROW(q2_K)
EMBER_DTYPE_ROW(q3_K)
EMBER_DTYPE_ROW(q4_K)
EMBER_DTYPE_ROW(q5_K)
EMBER_DTYPE_ROW(q6_K)
EMBER_DTYPE_ROW(q8_K)

#undef EMBER_DTYPE_ROW

/* A 32-bit little-endian field of a block (Q5_0/Q5_1's qh, IQ3_XXS's scale
   and sign words), read and written byte by byte. */
static inline uint32_t ember_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void ember_put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> 8 * i);
}

#endif
