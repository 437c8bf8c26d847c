/* Simple-format kernels: activation quantizers, the scalar oracles that
   define the numerics (kernels.h), and the per-ISA registration. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "dtype.h"
#include "kernels_simple.h"

/* Activations as the reference's x86 build quantizes them (not its scalar
   weight quantizer): id = 127 / amax and round-half-even, so a value's code
   can differ by one from the weight quantizer's at a rounding boundary.
   Returns the block's f32 scale (Q8_1 folds it into its sum). */
static float q8_block(const float *x, int8_t *qs)
{
    float amax = 0.0f;
    for (int j = 0; j < QK; j++)
        if (fabsf(x[j]) > amax) amax = fabsf(x[j]);
    float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    for (int j = 0; j < QK; j++) {
        float s = rintf(x[j] * id);
        if (!(s == s)) s = 0.0f;
        qs[j] = (int8_t)(s > 127.0f ? 127.0f : s < -127.0f ? -127.0f : s);
    }
    return amax / 127.0f;
}

void ember_q8_0_quantize_act_scalar(const float *x, void *xq, int64_t k)
{
    block_q8_0 *out = xq;
    for (int64_t i = 0; i < k / QK; i++, x += QK)
        out[i].d = ember_f32_to_fp16(q8_block(x, out[i].qs));
}

/* Q8_1 as the reference's x86 quantizer: Q8_0's codes and scale, and
   s = d * sum(qs) from the unrounded d, rounded once to fp16.  One version
   for every ISA: it is a small fraction of a matmul's time. */
void ember_q8_1_quantize_act(const float *x, void *xq, int64_t k)
{
    block_q8_1 *out = xq;
    for (int64_t i = 0; i < k / QK; i++, x += QK) {
        float d = q8_block(x, out[i].qs);
        int32_t sum = 0;
        for (int j = 0; j < QK; j++) sum += out[i].qs[j];
        out[i].d = ember_f32_to_fp16(d);
        out[i].s = ember_f32_to_fp16(d * (float)sum);
    }
}

void ember_f32_quantize_act(const float *x, void *xq, int64_t k)
{
    memcpy(xq, x, (size_t)k * sizeof(float));
}

/* BF16 matrices' activations (EMBER_ACT_BF16R): each value rounded to
   bf16, as the reference converts a BF16 product's input to its vec-dot
   type (and ik_llama.cpp's bf16 dot products need); kept as f32, so the
   float kernels read them as they read f32 rows. */
void ember_bf16r_quantize_act(const float *x, void *xq, int64_t k)
{
    float *y = xq;
    for (int64_t i = 0; i < k; i++) y[i] = ember_bf16_to_f32(ember_f32_to_bf16(x[i]));
}

/* ---- integer formats: the reference's 8-lane order ----------------------
   Lane g of a block is the int32 dot of its inputs 4g..4g+3; each lane keeps
   its own f32 sum over the blocks, fmaf(lane, d_w * d_x, sum), and the row's
   result is the reference's horizontal sum of the 8 lanes.  (d_w * d_x is
   exact: two fp16 values.)  Three variations, each the reference x86 build's:
   Q4_1/Q5_1 (Q8_1 activations) also sum m_w * s_x over the blocks in one f32
   (exact products, so fmaf or not is the same) added after the lanes;
   IQ4_NL, for one token (the reference's vec_dot), keeps two lane sets, for
   even and odd blocks, adds them lane by lane before the 8-lane sum, and
   folds a last odd block's whole int32 dot in after it, while for 2+
   tokens it takes the plain 8-lane order (the reference's prompt GEMM,
   llamafile's tinyBLAS, which handles IQ4_NL as it does Q4_0); the 8-row
   tile order is described at matmul_int_scalar. */

typedef void (*unpack_fn)(const uint8_t *blk, int8_t q[QK]);

static void unpack_q8_0(const uint8_t *blk, int8_t q[QK])
{
    memcpy(q, blk + 2, QK);
}

static void unpack_q4_0(const uint8_t *blk, int8_t q[QK])
{
    const uint8_t *qs = blk + 2;
    for (int j = 0; j < QK / 2; j++) {
        q[j] = (int8_t)((qs[j] & 0x0f) - 8);
        q[j + QK / 2] = (int8_t)((qs[j] >> 4) - 8);
    }
}

static void unpack_q5_0(const uint8_t *blk, int8_t q[QK])
{
    const uint8_t *qh = blk + 2, *qs = blk + 6;
    uint32_t h = (uint32_t)qh[0] | (uint32_t)qh[1] << 8 | (uint32_t)qh[2] << 16 | (uint32_t)qh[3] << 24;
    for (int j = 0; j < QK / 2; j++) {
        q[j] = (int8_t)(((qs[j] & 0x0f) | ((h >> j) & 1) << 4) - 16);
        q[j + QK / 2] = (int8_t)(((qs[j] >> 4) | ((h >> (j + 16)) & 1) << 4) - 16);
    }
}

/* Q4_1 / Q5_1: the Q4_0 / Q5_0 layouts after a second fp16 (the min),
   codes unsigned; the min term is folded separately. */
static void unpack_q4_1(const uint8_t *blk, int8_t q[QK])
{
    unpack_q4_0(blk + 2, q);
    for (int j = 0; j < QK; j++) q[j] = (int8_t)(q[j] + 8);
}

static void unpack_q5_1(const uint8_t *blk, int8_t q[QK])
{
    unpack_q5_0(blk + 2, q);
    for (int j = 0; j < QK; j++) q[j] = (int8_t)(q[j] + 16);
}

static void unpack_iq4_nl(const uint8_t *blk, int8_t q[QK])
{
    const uint8_t *qs = blk + 2;
    for (int j = 0; j < QK / 2; j++) {
        q[j] = ember_iq4nl_values[qs[j] & 0x0f];
        q[j + QK / 2] = ember_iq4nl_values[qs[j] >> 4];
    }
}

/* MXFP4: the exponent byte, then IQ4_NL's nibble order */
static void unpack_mxfp4(const uint8_t *blk, int8_t q[QK])
{
    const uint8_t *qs = blk + 1;
    for (int j = 0; j < QK / 2; j++) {
        q[j] = ember_mxfp4_values[qs[j] & 0x0f];
        q[j + QK / 2] = ember_mxfp4_values[qs[j] >> 4];
    }
}

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

typedef enum {
    ORD_LANES,   /* 8 lanes */
    ORD_TILED,   /* one sum: the reference's 8-row tiles (Q4_0, rows % 8 == 0) */
    ORD_MIN,     /* 8 lanes + the m_w * s_x sum (Q8_1 activations) */
    ORD_PAIRS,   /* two lane sets, even / odd blocks, odd tail block (IQ4_NL) */
} int_order;

/* tiled: the reference's order for matrices it repacks into 8-row tiles
   (Q4_0 with a multiple of 8 rows, on x86 with AVX2): one f32 sum per row
   and token, fmaf(block's int32 dot, d_w * d_x, sum), blocks in order. */
static void matmul_int_scalar(unpack_fn unpack, size_t block_bytes, int_order ord, EMBER_MATMUL_ARGS)
{
    int64_t nb = k / QK;
    /* Q8_1 blocks put s between d and the codes */
    size_t ab = ord == ORD_MIN ? sizeof(block_q8_1) : sizeof(block_q8_0), qo = ab - QK;
    for (int r = r0; r < r1; r++) {
        const uint8_t *wr = (const uint8_t *)w + (size_t)r * row_bytes;
        for (int t = 0; t < nt; t++) {
            const uint8_t *xr = (const uint8_t *)xq + (size_t)t * xq_stride;
            float acc[2][8] = {{0}}, summs = 0.0f, tail_s = 0.0f;
            int32_t tail = 0;
            for (int64_t b = 0; b < nb; b++) {
                const uint8_t *blk = wr + (size_t)b * block_bytes, *xb = xr + (size_t)b * ab;
                const int8_t *xs = (const int8_t *)(xb + qo);
                int8_t q[QK];
                unpack(blk, q);
                const float dw = unpack == unpack_mxfp4 ? ember_mxfp4_scale(blk[0]) : ember_fp16_to_f32(rd16(blk));
                float s = dw * ember_fp16_to_f32(rd16(xb));
                int32_t lane[8] = {0};
                for (int j = 0; j < QK; j++) lane[j / 4] += (int32_t)q[j] * xs[j];
                int32_t isum = 0;
                for (int g = 0; g < 8; g++) isum += lane[g];
                if (ord == ORD_TILED) {
                    acc[0][0] = fmaf((float)isum, s, acc[0][0]);
                } else if (ord == ORD_PAIRS && (nb & 1) && b == nb - 1) {
                    tail = isum;
                    tail_s = s;
                } else {
                    float *a = acc[ord == ORD_PAIRS ? (int)(b & 1) : 0];
                    for (int g = 0; g < 8; g++) a[g] = fmaf((float)lane[g], s, a[g]);
                }
                if (ord == ORD_MIN)
                    summs = fmaf(ember_fp16_to_f32(rd16(blk + 2)), ember_fp16_to_f32(rd16(xb + 2)), summs);
            }
            float v;
            if (ord == ORD_TILED) {
                v = acc[0][0];
            } else if (ord == ORD_PAIRS) {
                for (int g = 0; g < 8; g++) acc[0][g] += acc[1][g];
                v = ember_sum8(acc[0]);
                if (nb & 1) v = fmaf(tail_s, (float)tail, v);
            } else {
                v = ember_sum8(acc[0]) + summs;
            }
            y[(size_t)t * y_stride + r] = v;
        }
    }
}

#define SCALAR_INT(nm, blk_t, ord)                                                                   \
    void ember_matmul_##nm##_scalar(EMBER_MATMUL_ARGS)                                               \
    {                                                                                                \
        matmul_int_scalar(unpack_##nm, sizeof(blk_t), ord, w, row_bytes, k, r0, r1, xq, xq_stride,   \
                          nt, y, y_stride);                                                          \
    }

SCALAR_INT(q8_0, block_q8_0, ORD_LANES)
SCALAR_INT(q4_0, block_q4_0, ORD_LANES)
SCALAR_INT(q5_0, block_q5_0, ORD_LANES)
SCALAR_INT(q4_1, block_q4_1, ORD_MIN)
SCALAR_INT(q5_1, block_q5_1, ORD_MIN)

void ember_matmul_iq4_nl_scalar(EMBER_MATMUL_ARGS)
{
    matmul_int_scalar(unpack_iq4_nl, sizeof(block_iq4_nl), nt == 1 ? ORD_PAIRS : ORD_LANES, w, row_bytes, k, r0,
                      r1, xq, xq_stride, nt, y, y_stride);
}

/* MXFP4 in the 8-row tile order (one f32 sum per row and token) for
   every matrix: the order its 16-row tiles keep too (kernels_packed_q4_0.c),
   so a packed MoE's experts give compressed's logits bit for bit.  (The
   reference has no one order for it: its vec_dot pairs lanes, ik's GEMM
   its own; the goldens of quantized files hold to cos 0.995 anyway.) */
void ember_matmul_mxfp4_scalar(EMBER_MATMUL_ARGS)
{
    matmul_int_scalar(unpack_mxfp4, sizeof(block_mxfp4), ORD_TILED, w, row_bytes, k, r0, r1, xq, xq_stride, nt, y,
                      y_stride);
}

void ember_matmul_q4_0x8_scalar(EMBER_MATMUL_ARGS)
{
    matmul_int_scalar(unpack_q4_0, sizeof(block_q4_0), ORD_TILED, w, row_bytes, k, r0, r1, xq, xq_stride, nt, y, y_stride);
}

/* ---- float formats: double accumulation makes the oracle the accurate one */

static float elem_f32(const void *p, int64_t i) { float f; memcpy(&f, (const char *)p + 4 * i, 4); return f; }
static float elem_f16(const void *p, int64_t i) { return ember_fp16_to_f32(rd16((const uint8_t *)p + 2 * i)); }
static float elem_bf16(const void *p, int64_t i) { return ember_bf16_to_f32(rd16((const uint8_t *)p + 2 * i)); }

static void matmul_float_scalar(float (*elem)(const void *, int64_t), EMBER_MATMUL_ARGS)
{
    for (int r = r0; r < r1; r++) {
        const void *wr = (const uint8_t *)w + (size_t)r * row_bytes;
        for (int t = 0; t < nt; t++) {
            const float *x = (const float *)((const uint8_t *)xq + (size_t)t * xq_stride);
            double acc = 0.0;
            for (int64_t i = 0; i < k; i++) acc += (double)elem(wr, i) * x[i];
            y[(size_t)t * y_stride + r] = (float)acc;
        }
    }
}

void ember_matmul_f32_scalar(EMBER_MATMUL_ARGS)
{
    matmul_float_scalar(elem_f32, w, row_bytes, k, r0, r1, xq, xq_stride, nt, y, y_stride);
}

void ember_matmul_f16_scalar(EMBER_MATMUL_ARGS)
{
    matmul_float_scalar(elem_f16, w, row_bytes, k, r0, r1, xq, xq_stride, nt, y, y_stride);
}

void ember_matmul_bf16_scalar(EMBER_MATMUL_ARGS)
{
    matmul_float_scalar(elem_bf16, w, row_bytes, k, r0, r1, xq, xq_stride, nt, y, y_stride);
}

/* ---- registration ------------------------------------------------------- */

#define KQ(wt, nm, isa, isaname) \
    {#nm "_" #isaname, isa, wt, EMBER_Q8_0, ember_q8_0_quantize_act_##isaname, ember_matmul_##nm##_##isaname, NULL}
#define K1(wt, nm, isa, isaname) \
    {#nm "_" #isaname, isa, wt, EMBER_Q8_1, ember_q8_1_quantize_act, ember_matmul_##nm##_##isaname, NULL}
#define KF(wt, nm, isa, isaname) \
    {#nm "_" #isaname, isa, wt, EMBER_F32, ember_f32_quantize_act, ember_matmul_##nm##_##isaname, NULL}
#define KB(wt, nm, isa, isaname) \
    {#nm "_" #isaname, isa, wt, EMBER_ACT_BF16R, ember_bf16r_quantize_act, ember_matmul_##nm##_##isaname, NULL}
#define KSET(isa, isaname) \
    KQ(EMBER_Q8_0, q8_0, isa, isaname), KQ(EMBER_Q4_0, q4_0, isa, isaname), \
    KQ(EMBER_Q5_0, q5_0, isa, isaname), KQ(EMBER_IQ4_NL, iq4_nl, isa, isaname), \
    K1(EMBER_Q4_1, q4_1, isa, isaname), K1(EMBER_Q5_1, q5_1, isa, isaname), \
    KF(EMBER_F32, f32, isa, isaname),  \
    KF(EMBER_F16, f16, isa, isaname), KB(EMBER_BF16, bf16, isa, isaname)

static const ember_kernel table[] = {
    KSET(EMBER_ISA_SCALAR, scalar),
    KQ(EMBER_MXFP4, mxfp4, EMBER_ISA_SCALAR, scalar),
#ifdef EMBER_SIMD
    KSET(EMBER_ISA_AVX2, avx2),
    KQ(EMBER_MXFP4, mxfp4, EMBER_ISA_AVX2, avx2),
    KSET(EMBER_ISA_AVX512, avx512),
    /* no AVX-512 compressed MXFP4 kernel: the AVX2 one, under its own name
       (the packed tiles are MXFP4's AVX-512 kernel) */
    {"mxfp4_avx2", EMBER_ISA_AVX512, EMBER_MXFP4, EMBER_Q8_0, ember_q8_0_quantize_act_avx512, ember_matmul_mxfp4_avx2, NULL},
#endif
};

/* Where the reference repacks a matrix into 8-row tiles, which changes its
   float order (kernels.h): Q4_0 only. */
static const ember_kernel tiled[] = {
    KQ(EMBER_Q4_0, q4_0x8, EMBER_ISA_SCALAR, scalar),
#ifdef EMBER_SIMD
    KQ(EMBER_Q4_0, q4_0x8, EMBER_ISA_AVX2, avx2),
    KQ(EMBER_Q4_0, q4_0x8, EMBER_ISA_AVX512, avx512),
#endif
};

const ember_kernel *ember_kernels_simple(int wtype, ember_isa isa) { return EMBER_KERNEL_IN(table, wtype, isa); }

const ember_kernel *ember_kernels_simple_tiled(int wtype, ember_isa isa) { return EMBER_KERNEL_IN(tiled, wtype, isa); }
