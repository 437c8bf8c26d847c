/* The type table (numbered as ggml) with reference dequantize/quantize rows
   and the block layouts the kernels read. */
#ifndef EMBER_DTYPE_H
#define EMBER_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef enum {
    EMBER_F32 = 0, EMBER_F16 = 1, EMBER_Q4_0 = 2, EMBER_Q4_1 = 3,
    EMBER_Q5_0 = 6, EMBER_Q5_1 = 7, EMBER_Q8_0 = 8, EMBER_Q8_1 = 9,
    EMBER_Q2_K = 10, EMBER_Q3_K = 11, EMBER_Q4_K = 12, EMBER_Q5_K = 13,
    EMBER_Q6_K = 14, EMBER_Q8_K = 15, EMBER_IQ2_XXS = 16, EMBER_IQ2_XS = 17,
    EMBER_IQ3_XXS = 18, EMBER_IQ1_S = 19, EMBER_IQ4_NL = 20, EMBER_IQ3_S = 21,
    EMBER_IQ2_S = 22, EMBER_IQ4_XS = 23, EMBER_IQ1_M = 29, EMBER_BF16 = 30,
    EMBER_MXFP4 = 39,
} ember_dtype;

/* A row conversion over nb whole blocks (for the plain float types a
   block is one element). */
typedef void (*ember_to_float_fn)(const void *src, float *dst, int64_t nb);
typedef void (*ember_from_float_fn)(const float *src, void *dst, int64_t nb);

/* One row per type: everything that differs between types is a field here,
   so callers look a type up instead of switching over it. */
typedef struct {
    const char *name;
    int block_elems;                 /* elements per block (1 for F32/F16/BF16) */
    int block_bytes;                 /* bytes per block */
    ember_to_float_fn to_float;      /* NULL: ember cannot read this type */
    ember_from_float_fn from_float;  /* NULL: ember cannot write this type */
} ember_dtype_info;

#define QK 32     /* elements per simple block */
#define QK_K 256  /* elements per K-quant super-block */
#define K_SCALE_SIZE 12

typedef struct { uint16_t d; uint8_t qs[QK / 2]; } block_q4_0;              /* 18 */
typedef struct { uint16_t d, m; uint8_t qs[QK / 2]; } block_q4_1;           /* 20 */
typedef struct { uint16_t d; uint8_t qh[4]; uint8_t qs[QK / 2]; } block_q5_0; /* 22 */
typedef struct { uint16_t d, m; uint8_t qh[4]; uint8_t qs[QK / 2]; } block_q5_1; /* 24 */
typedef struct { uint16_t d; int8_t qs[QK]; } block_q8_0;                   /* 34 */
typedef struct { uint16_t d, s; int8_t qs[QK]; } block_q8_1;                /* 36 */
typedef struct { uint16_t d; uint8_t qs[QK / 2]; } block_iq4_nl;            /* 18 */
/* OCP microscaling FP4 (gpt-oss's experts): an E8M0 exponent byte, then
   IQ4_NL's nibble order over the FP4 (E2M1) code book, held doubled as
   integers (ember_mxfp4_values) so that the scale is half of 2^(e - 127). */
typedef struct { uint8_t e; uint8_t qs[QK / 2]; } block_mxfp4;              /* 17 */

typedef struct {                    /* 84 */
    uint8_t scales[QK_K / 16];
    uint8_t qs[QK_K / 4];
    uint16_t d, dmin;
} block_q2_K;
typedef struct {                    /* 110 */
    uint8_t hmask[QK_K / 8];
    uint8_t qs[QK_K / 4];
    uint8_t scales[12];
    uint16_t d;
} block_q3_K;
typedef struct {                    /* 144 */
    uint16_t d, dmin;
    uint8_t scales[K_SCALE_SIZE];
    uint8_t qs[QK_K / 2];
} block_q4_K;
typedef struct {                    /* 176 */
    uint16_t d, dmin;
    uint8_t scales[K_SCALE_SIZE];
    uint8_t qh[QK_K / 8];
    uint8_t qs[QK_K / 2];
} block_q5_K;
typedef struct {                    /* 210 */
    uint8_t ql[QK_K / 2];
    uint8_t qh[QK_K / 4];
    int8_t scales[QK_K / 16];
    uint16_t d;
} block_q6_K;
/* 136: IQ4_NL's code book over a 256-element super-block of eight
   32-element sub-blocks, each with a 6-bit scale (low nibble in scales_l,
   two high bits in scales_h) that multiplies d after subtracting 32; qs
   as IQ4_NL's, 16 bytes a sub-block (element j low nibble, j + 16 high). */
typedef struct {
    uint16_t d;
    uint16_t scales_h;
    uint8_t scales_l[QK_K / 64];
    uint8_t qs[QK_K / 2];
} block_iq4_xs;

/* The grid formats (IQ1_S ... IQ3_S, dtype_iq.c): 256-element super-blocks
   whose groups of 8 (or 4) elements are an index into a code book of
   points ("grid"), with signs and a small integer scale per 16 or 32
   elements.  Layouts as ggml's (the names of the fields too). */
typedef struct { uint16_t d; uint16_t qs[QK_K / 8]; } block_iq2_xxs;                       /* 66 */
typedef struct { uint16_t d; uint16_t qs[QK_K / 8]; uint8_t scales[QK_K / 32]; } block_iq2_xs; /* 74 */
typedef struct {                                                                            /* 82 */
    uint16_t d;
    uint8_t qs[QK_K / 4];      /* 32 grid indices (low 8 bits), then 32 sign bytes */
    uint8_t qh[QK_K / 32];
    uint8_t scales[QK_K / 32];
} block_iq2_s;
typedef struct { uint16_t d; uint8_t qs[3 * QK_K / 8]; } block_iq3_xxs;                    /* 98 */
typedef struct {                                                                            /* 110 */
    uint16_t d;
    uint8_t qs[QK_K / 4];
    uint8_t qh[QK_K / 32];
    uint8_t signs[QK_K / 8];
    uint8_t scales[QK_K / 64];
} block_iq3_s;
typedef struct { uint16_t d; uint8_t qs[QK_K / 8]; uint16_t qh[QK_K / 32]; } block_iq1_s;  /* 50 */
typedef struct { uint8_t qs[QK_K / 8]; uint8_t qh[QK_K / 16]; uint8_t scales[QK_K / 32]; } block_iq1_m; /* 56 */

/* A grid-format super-block decoded (ember_iq_decode): every element's
   grid value with its sign, the raw scale field of each 16 elements, and
   for IQ1_S / IQ1_M the sign of the delta (+-1/8) of each 8 elements.  The
   element's value is d * K(s) * (v + delta / 8), K the type's scale rule
   (ember_iq_scale_factor). */
typedef struct {
    float d;
    uint8_t s[QK_K / 16];
    int8_t v[QK_K];
    int8_t delta[QK_K / 8];
} ember_iq_block;

/* The points of code book g (0..5: IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S,
   IQ1), 8 coordinates each (IQ3: 4, then zeros), into out (may be NULL);
   returns how many, or -1 for no such book. */
int ember_iq_grid_points(int g, int8_t (*out)[8]);
/* The code book a grid type indexes (IQ1_S and IQ1_M share one): 8 bytes a
   point, IQ3's 4 coordinates then zeros; NULL for another type. */
const int8_t (*ember_iq_points(int type))[8];
/* The 8-bit sign masks of the 7-bit sign fields (bit 7: their parity). */
const uint8_t *ember_iq_ksigns(void);
/* Each 8-bit sign mask m as 8 bytes, byte j -1 where bit j of m is set, else
   +1 (for vpsignb). */
const uint64_t *ember_iq_sign_bytes(void);
/* The same for the 7-bit sign fields, their parity bit added (128 entries). */
const uint64_t *ember_iq_ksign_bytes(void);
/* IQ1_M's scale word k (0..3): the 3-bit scales of two 32-element
   sub-blocks (6 bits each, the first 16 elements' low), then a nibble of the
   block's fp16 scale in its top 4 bits. */
static inline unsigned ember_iq1_m_scale_word(const block_iq1_m *b, int k)
{
    return b->scales[2 * k] | (unsigned)b->scales[2 * k + 1] << 8;
}

/* IQ1_M's fp16 scale, gathered from the four scale words' top nibbles. */
static inline uint16_t ember_iq1_m_d(const block_iq1_m *b)
{
    unsigned h = 0;
    for (int k = 0; k < 4; k++) h |= (ember_iq1_m_scale_word(b, k) >> 12) << 4 * k;
    return (uint16_t)h;
}

/* True for the seven grid formats. */
bool ember_iq_is_grid(int type);
/* Decode one super-block of a grid format. */
void ember_iq_decode(int type, const void *blk, ember_iq_block *o);
/* The float factor c of a grid type's integer dot: a weight's value is
   d * c * (2s + 1) * v (IQ1: d * (2s + 1) * (v + delta / 8), c = 1). */
float ember_iq_scale_factor(int type);

/* Sub-block ib's (0..7) IQ4_XS scale, minus 32 (-32..31). */
static inline int ember_iq4_xs_scale(const block_iq4_xs *b, int ib)
{
    return (((b->scales_l[ib / 2] >> (4 * (ib % 2))) & 0x0f) | ((b->scales_h >> (2 * ib)) & 3) << 4) - 32;
}

typedef struct {                    /* 292: activations for K-quant dots */
    float d;
    int8_t qs[QK_K];
    int16_t bsums[QK_K / 16];
} block_q8_K;

/* The 6-bit scale and min of sub-block j (0..7) of a Q4_K/Q5_K block: j < 4
   keep them in the low 6 bits of bytes j and j+4; j >= 4 split them into a
   low nibble in byte j+4 and two high bits borrowed from bytes j-4 / j.
   Inline because the scalar kernels call it per sub-block. */
static inline void ember_scale_min_k4(int j, const uint8_t *q, int *sc, int *m)
{
    if (j < 4) {
        *sc = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *sc = (q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4);
        *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

/* IQ4_NL's 16-entry code book (the reference's kvalues_iq4nl). */
extern const int8_t ember_iq4nl_values[16];
/* MXFP4's: the E2M1 values times 2 (the reference's kvalues_mxfp4). */
extern const int8_t ember_mxfp4_values[16];
/* The same plus 12 (0..24): the unsigned operand the SIMD kernels look up
   for vpmaddubsw / vpdpbusd, which subtract 12 times the activations' sum */
extern const int8_t ember_mxfp4_values_u12[16];
/* An MXFP4 block's scale: 2^(e - 128), half the E8M0 value, since the
   code book is doubled (e 0 and 1 give the subnormals 2^-128, 2^-127). */
static inline float ember_mxfp4_scale(uint8_t e)
{
    uint32_t bits = e < 2 ? (uint32_t)0x00200000 << e : (uint32_t)(e - 1) << 23;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* NULL for a type number ember does not know. */
const ember_dtype_info *ember_dtype_get(int type);
const char *ember_dtype_name(int type);      /* "?" when unknown */
int ember_dtype_from_name(const char *name); /* -1 when unknown */
/* Bytes of a row of n elements (n must be a multiple of block_elems). */
size_t ember_row_bytes(int type, int64_t n);

float ember_fp16_to_f32(uint16_t h);
uint16_t ember_f32_to_fp16(float f);   /* round to nearest even */
float ember_bf16_to_f32(uint16_t h);
uint16_t ember_f32_to_bf16(float f);   /* round to nearest even */

/* Reference (scalar) conversions of n elements through the table.  Return
   0, or -1 for an unknown type, a type without that conversion, or an n that
   is negative or not a multiple of the block size. */
int ember_dequantize_row(int type, const void *src, float *dst, int64_t n);
int ember_quantize_row(int type, const float *src, void *dst, int64_t n);

#endif
