/* The type table and fp16/bf16 conversions; per-family row conversions live
   in dtype_simple.c and dtype_kquant.c. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "dtype.h"
#include "dtype_rows.h"

/* Q8_1 is known by name and size (a file may hold it) but has no
   conversions: ember neither reads nor writes it. */
#define ROW(name, elems, block, t) {name, elems, sizeof(block), ember_to_float_##t, ember_from_float_##t}
static const ember_dtype_info table[] = {
    [EMBER_F32] = ROW("F32", 1, float, f32),
    [EMBER_F16] = ROW("F16", 1, uint16_t, f16),
    [EMBER_BF16] = ROW("BF16", 1, uint16_t, bf16),
    [EMBER_Q4_0] = ROW("Q4_0", QK, block_q4_0, q4_0),
    [EMBER_Q4_1] = ROW("Q4_1", QK, block_q4_1, q4_1),
    [EMBER_Q5_0] = ROW("Q5_0", QK, block_q5_0, q5_0),
    [EMBER_Q5_1] = ROW("Q5_1", QK, block_q5_1, q5_1),
    [EMBER_Q8_0] = ROW("Q8_0", QK, block_q8_0, q8_0),
    [EMBER_Q8_1] = {"Q8_1", QK, sizeof(block_q8_1), NULL, NULL},
    [EMBER_Q2_K] = ROW("Q2_K", QK_K, block_q2_K, q2_K),
    [EMBER_Q3_K] = ROW("Q3_K", QK_K, block_q3_K, q3_K),
    [EMBER_Q4_K] = ROW("Q4_K", QK_K, block_q4_K, q4_K),
    [EMBER_Q5_K] = ROW("Q5_K", QK_K, block_q5_K, q5_K),
    [EMBER_Q6_K] = ROW("Q6_K", QK_K, block_q6_K, q6_K),
    [EMBER_Q8_K] = ROW("Q8_K", QK_K, block_q8_K, q8_K),
    [EMBER_IQ2_XXS] = ROW("IQ2_XXS", QK_K, block_iq2_xxs, iq2_xxs),
    [EMBER_IQ2_XS] = ROW("IQ2_XS", QK_K, block_iq2_xs, iq2_xs),
    [EMBER_IQ3_XXS] = ROW("IQ3_XXS", QK_K, block_iq3_xxs, iq3_xxs),
    [EMBER_IQ1_S] = ROW("IQ1_S", QK_K, block_iq1_s, iq1_s),
    [EMBER_IQ4_NL] = ROW("IQ4_NL", QK, block_iq4_nl, iq4_nl),
    [EMBER_IQ3_S] = ROW("IQ3_S", QK_K, block_iq3_s, iq3_s),
    [EMBER_IQ2_S] = ROW("IQ2_S", QK_K, block_iq2_s, iq2_s),
    [EMBER_IQ4_XS] = ROW("IQ4_XS", QK_K, block_iq4_xs, iq4_xs),
    [EMBER_IQ1_M] = ROW("IQ1_M", QK_K, block_iq1_m, iq1_m),
    [EMBER_MXFP4] = ROW("MXFP4", QK, block_mxfp4, mxfp4),
};
#undef ROW

_Static_assert(sizeof(block_q4_0) == 18, "q4_0 layout");
_Static_assert(sizeof(block_q5_0) == 22, "q5_0 layout");
_Static_assert(sizeof(block_q8_0) == 34, "q8_0 layout");
_Static_assert(sizeof(block_q2_K) == 84, "q2_K layout");
_Static_assert(sizeof(block_q3_K) == 110, "q3_K layout");
_Static_assert(sizeof(block_q4_K) == 144, "q4_K layout");
_Static_assert(sizeof(block_q5_K) == 176, "q5_K layout");
_Static_assert(sizeof(block_q6_K) == 210, "q6_K layout");
_Static_assert(sizeof(block_iq2_xxs) == 66 && sizeof(block_iq2_xs) == 74 && sizeof(block_iq2_s) == 82 &&
                   sizeof(block_iq3_xxs) == 98 && sizeof(block_iq3_s) == 110 && sizeof(block_iq1_s) == 50 &&
                   sizeof(block_iq1_m) == 56,
               "grid format layouts");
_Static_assert(sizeof(block_q8_K) == 292, "q8_K layout");
_Static_assert(sizeof(block_iq4_xs) == 136, "iq4_xs layout");
_Static_assert(sizeof(block_mxfp4) == 17, "mxfp4 layout");

const ember_dtype_info *ember_dtype_get(int type)
{
    if (type < 0 || (size_t)type >= sizeof table / sizeof table[0] || !table[type].name)
        return NULL;
    return &table[type];
}

const char *ember_dtype_name(int type)
{
    const ember_dtype_info *i = ember_dtype_get(type);
    return i ? i->name : "?";
}

int ember_dtype_from_name(const char *name)
{
    for (size_t t = 0; t < sizeof table / sizeof table[0]; t++)
        if (table[t].name && strcasecmp(table[t].name, name) == 0)
            return (int)t;
    return -1;
}

size_t ember_row_bytes(int type, int64_t n)
{
    const ember_dtype_info *i = ember_dtype_get(type);
    if (!i || n < 0) return 0;
    return (size_t)(n / i->block_elems) * (size_t)i->block_bytes;
}

float ember_fp16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else {                     /* subnormal: renormalise */
            int e = -1;
            do { e++; man <<= 1; } while (!(man & 0x400));
            bits = sign | (uint32_t)(127 - 15 - e) << 23 | (man & 0x3ff) << 13;
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | man << 13;
    } else {
        bits = sign | (exp + 112) << 23 | man << 13;
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t ember_f32_to_fp16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000;
    uint32_t ax = x & 0x7fffffff;
    if (ax >= 0x7f800000u)                       /* inf / nan */
        return (uint16_t)(sign | 0x7c00 | (ax > 0x7f800000u ? 0x200 : 0));
    if (ax >= 0x477ff000u)                       /* rounds to >= 65520: inf */
        return (uint16_t)(sign | 0x7c00);
    if (ax < 0x38800000u) {                      /* subnormal or zero in fp16 */
        if (ax < 0x33000000u) return (uint16_t)sign;
        uint32_t e = ax >> 23, m = (ax & 0x7fffff) | 0x800000;
        int shift = 126 - (int)e;            /* to units of 2^-24 */
        uint32_t r = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1))) r++;
        return (uint16_t)(sign | r);
    }
    uint32_t r = ((ax >> 13) - (112u << 10));
    uint32_t rem = ax & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (r & 1))) r++;
    return (uint16_t)(sign | r);
}

float ember_bf16_to_f32(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t ember_f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffff) > 0x7f800000u) return (uint16_t)((x >> 16) | 64); /* quiet nan */
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

/* The element count a row conversion may take: whole blocks of a type
   that has the conversion; the number of blocks, or -1. */
static int64_t row_blocks(const ember_dtype_info *i, bool has_fn, int64_t n)
{
    if (!i || !has_fn || n < 0 || n % i->block_elems) return -1;
    return n / i->block_elems;
}

int ember_dequantize_row(int type, const void *src, float *dst, int64_t n)
{
    const ember_dtype_info *i = ember_dtype_get(type);
    int64_t nb = row_blocks(i, i && i->to_float, n);
    if (nb < 0) return -1;
    i->to_float(src, dst, nb);
    return 0;
}

int ember_quantize_row(int type, const float *src, void *dst, int64_t n)
{
    const ember_dtype_info *i = ember_dtype_get(type);
    int64_t nb = row_blocks(i, i && i->from_float, n);
    if (nb < 0) return -1;
    i->from_float(src, dst, nb);
    return 0;
}
