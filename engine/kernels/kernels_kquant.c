/* K-quant kernels (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K and IQ4_XS weights x Q8_K
   activations):
   the activation quantizer, the scalar oracles and the registration table.
   The order of float operations is spelled out in kernels_kquant_impl.h; the
   SIMD files (kernels_kquant_avx2.c, kernels_kquant_avx512.c and, for Q2_K /
   Q3_K, kernels_q23_K_avx2.c, kernels_q23_K_avx512.c) keep it. */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "dtype.h"
#include "kernels_kquant_impl.h"

void ember_kq_quantize_q8_K(const float *x, void *xq, int64_t k)
{
    ember_quantize_row(EMBER_Q8_K, x, xq, k - k % QK_K);
}

/* Weight element i of a Q4_K/Q5_K block without its high bit: sub-block
   pairs (2c, 2c+1) share qs[32c..32c+31], low nibble then high nibble. */
static int q4_nibble(const uint8_t *qs, int i)
{
    int c = i / 64, l = i % 32;
    return (i % 64) < 32 ? qs[32 * c + l] & 0x0f : qs[32 * c + l] >> 4;
}


/* Q4_K/Q5_K: the 8 lanes of sum sc*q*x, and the 4 lanes of the min term
   (pairs of sub-blocks, over the activation's 16-element sums). */
static void mins4(const uint8_t *scales, const block_q8_K *x, int32_t p[4])
{
    for (int k = 0; k < 4; k++) {
        p[k] = 0;
        for (int j = 2 * k; j < 2 * k + 2; j++) {
            int sc, m;
            ember_scale_min_k4(j, scales, &sc, &m);
            p[k] += m * (x->bsums[2 * j] + x->bsums[2 * j + 1]);
        }
    }
}

/* Q4_K and Q5_K share the layout d, dmin, scales[12] at offsets 0, 2, 4;
   qs (and Q5_K's qh) follow at the given offsets. */
static float dot_q45_K(const uint8_t *blk, size_t bb, size_t qs_off, ptrdiff_t qh_off,
                       const block_q8_K *x, int nb)
{
    float acc[8] = {0}, accm[4] = {0}, summs = 0;
    for (int i = 0; i < nb; i++, x++, blk += bb) {
        const uint8_t *scales = blk + 4, *qs = blk + qs_off;
        int32_t lane[8] = {0}, p[4];
        for (int e = 0; e < QK_K; e++) {
            int sc, m, j = e / 32;
            ember_scale_min_k4(j, scales, &sc, &m);
            int q = q4_nibble(qs, e);
            if (qh_off >= 0) q |= ((blk[qh_off + e % 32] >> j) & 1) << 4;
            lane[EMBER_LANE(e)] += sc * q * x->qs[e];
        }
        mins4(scales, x, p);
        uint16_t dh, mh;
        memcpy(&dh, blk, 2);
        memcpy(&mh, blk + 2, 2);
        float d = x->d * ember_fp16_to_f32(dh), dmin = -x->d * ember_fp16_to_f32(mh);
        for (int l = 0; l < 8; l++) acc[l] = fmaf(d, (float)lane[l], acc[l]);
        /* the reference folds Q5_K's min term as one scalar, Q4_K's as 4 lanes */
        if (qh_off >= 0)
            summs = fmaf(dmin, (float)((p[0] + p[1]) + (p[2] + p[3])), summs);
        else
            for (int k = 0; k < 4; k++) accm[k] = fmaf(dmin, (float)p[k], accm[k]);
    }
    float mins = qh_off >= 0 ? summs : (accm[0] + accm[2]) + (accm[1] + accm[3]);
    return ember_sum8(acc) + mins;
}

static float dot_q4_K(const block_q4_K *b, const block_q8_K *x, int nb)
{
    return dot_q45_K((const uint8_t *)b, sizeof *b, offsetof(block_q4_K, qs), -1, x, nb);
}

static float dot_q5_K(const block_q5_K *b, const block_q8_K *x, int nb)
{
    return dot_q45_K((const uint8_t *)b, sizeof *b, offsetof(block_q5_K, qs),
                     (ptrdiff_t)offsetof(block_q5_K, qh), x, nb);
}

/* Element i of a Q6_K block, 0..63: each 128-element half n uses
   ql[64n..64n+63] (low nibbles for its first 64, high for the rest) and
   qh[32n..32n+31] (two bits per quarter). */
static int q6_value(const block_q6_K *b, int i)
{
    int n = i / 128, r = i % 128, quarter = r / 32, l = r % 32;
    uint8_t lo = b->ql[64 * n + 32 * (quarter & 1) + l];
    int nib = quarter < 2 ? lo & 0x0f : lo >> 4;
    return nib | ((b->qh[32 * n + l] >> (2 * quarter)) & 3) << 4;
}

static float dot_q6_K(const block_q6_K *b, const block_q8_K *x, int nb)
{
    float acc[8] = {0};
    for (int i = 0; i < nb; i++, b++, x++) {
        int32_t lane[8] = {0};
        for (int e = 0; e < QK_K; e++)
            lane[EMBER_LANE(e)] += b->scales[e / 16] * (q6_value(b, e) - 32) * x->qs[e];
        float d = x->d * ember_fp16_to_f32(b->d);
        for (int l = 0; l < 8; l++) acc[l] = fmaf(d, (float)lane[l], acc[l]);
    }
    return ember_sum8(acc);
}

/* Q2_K / Q3_K element e's two low bits: each 128-element half n uses
   qs[32n..32n+31], quarter j of it the bits at 2j. */
static int q2_bits(const uint8_t *qs, int e)
{
    return (qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
}

static float dot_q2_K(const block_q2_K *b, const block_q8_K *x, int nb)
{
    float acc[8] = {0};
    for (int i = 0; i < nb; i++, b++, x++) {
        int32_t lane[8] = {0}, pm[8];
        for (int e = 0; e < QK_K; e++)
            lane[EMBER_LANE(e)] += (b->scales[e / 16] & 0x0f) * q2_bits(b->qs, e) * x->qs[e];
        /* the mins against the activation's 16-element sums, paired */
        for (int l = 0; l < 8; l++)
            pm[l] = (b->scales[2 * l] >> 4) * x->bsums[2 * l] + (b->scales[2 * l + 1] >> 4) * x->bsums[2 * l + 1];
        float d = x->d * ember_fp16_to_f32(b->d), dmin = -x->d * ember_fp16_to_f32(b->dmin);
        for (int l = 0; l < 8; l++) acc[l] = fmaf(dmin, (float)pm[l], acc[l]);
        for (int l = 0; l < 8; l++) acc[l] = fmaf(d, (float)lane[l], acc[l]);
    }
    return ember_sum8(acc);
}

/* Q3_K's sixteen 6-bit scales minus 32: low nibbles in bytes 0..7 (scales
   0..7 low, 8..15 high), the two top bits in bytes 8..11. */
static int q3_scale(const uint8_t *s, int j)
{
    int lo = j < 8 ? s[j] & 0x0f : s[j - 8] >> 4;
    int hi = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
    return (lo | hi << 4) - 32;
}

static float dot_q3_K(const block_q3_K *b, const block_q8_K *x, int nb)
{
    float acc[8] = {0};
    for (int i = 0; i < nb; i++, b++, x++) {
        int32_t lane[8] = {0};
        int sc[16];
        for (int j = 0; j < 16; j++) sc[j] = q3_scale(b->scales, j);
        for (int e = 0; e < QK_K; e++) {
            /* a clear hmask bit (bit e / 32 of byte e % 32) means -4 */
            int q = q2_bits(b->qs, e) - ((b->hmask[e % 32] >> (e / 32)) & 1 ? 0 : 4);
            lane[EMBER_LANE(e)] += sc[e / 16] * q * x->qs[e];
        }
        float d = x->d * ember_fp16_to_f32(b->d);
        for (int l = 0; l < 8; l++) acc[l] = fmaf(d, (float)lane[l], acc[l]);
    }
    return ember_sum8(acc);
}

/* IQ4_XS element e: sub-block e / 32's 16 bytes, low nibble for its first
   16 elements, high for the rest, through IQ4_NL's code book. */
static int iq4_xs_value(const block_iq4_xs *b, int e)
{
    uint8_t q = b->qs[16 * (e / 32) + e % 16];
    return ember_iq4nl_values[e % 32 < 16 ? q & 0x0f : q >> 4];
}

static float dot_iq4_xs(const block_iq4_xs *b, const block_q8_K *x, int nb)
{
    float acc[8] = {0};
    for (int i = 0; i < nb; i++, b++, x++) {
        int32_t lane[8] = {0};
        for (int e = 0; e < QK_K; e++)
            lane[EMBER_LANE(e)] += ember_iq4_xs_scale(b, e / 32) * iq4_xs_value(b, e) * x->qs[e];
        float d = x->d * ember_fp16_to_f32(b->d);
        for (int l = 0; l < 8; l++) acc[l] = fmaf(d, (float)lane[l], acc[l]);
    }
    return ember_sum8(acc);
}

#define SCALAR_MATMUL(name, block_t, dot)                                              \
    static void name(EMBER_KQ_MATMUL_ARGS)                                             \
    {                                                                                  \
        int nb = (int)(k / QK_K);                                                      \
        for (int r = r0; r < r1; r++) {                                                \
            const block_t *row = (const block_t *)(const void *)                       \
                ((const uint8_t *)w + (size_t)r * row_bytes);                          \
            for (int t = 0; t < nt; t++) {                                             \
                const block_q8_K *xt = (const block_q8_K *)(const void *)              \
                    ((const uint8_t *)xq + (size_t)t * xq_stride);                     \
                y[(size_t)t * y_stride + (size_t)r] = dot(row, xt, nb);                \
            }                                                                          \
        }                                                                              \
    }

SCALAR_MATMUL(q2_K_scalar, block_q2_K, dot_q2_K)
SCALAR_MATMUL(q3_K_scalar, block_q3_K, dot_q3_K)
SCALAR_MATMUL(q4_K_scalar, block_q4_K, dot_q4_K)
SCALAR_MATMUL(q5_K_scalar, block_q5_K, dot_q5_K)
SCALAR_MATMUL(q6_K_scalar, block_q6_K, dot_q6_K)
SCALAR_MATMUL(iq4_xs_scalar, block_iq4_xs, dot_iq4_xs)

#define KQ(wt, isa, nm, fn) {nm, isa, wt, EMBER_Q8_K, ember_kq_quantize_q8_K, fn, NULL}
#define KQ512(wt, nm, fn) {nm, EMBER_ISA_AVX512, wt, EMBER_Q8_K, ember_kq_quantize_q8_K_avx512, fn, NULL}

static const ember_kernel scalar_kernels[] = {
    KQ(EMBER_Q2_K, EMBER_ISA_SCALAR, "q2_K_scalar", q2_K_scalar),
    KQ(EMBER_Q3_K, EMBER_ISA_SCALAR, "q3_K_scalar", q3_K_scalar),
    KQ(EMBER_Q4_K, EMBER_ISA_SCALAR, "q4_K_scalar", q4_K_scalar),
    KQ(EMBER_Q5_K, EMBER_ISA_SCALAR, "q5_K_scalar", q5_K_scalar),
    KQ(EMBER_Q6_K, EMBER_ISA_SCALAR, "q6_K_scalar", q6_K_scalar),
    KQ(EMBER_IQ4_XS, EMBER_ISA_SCALAR, "iq4_xs_scalar", iq4_xs_scalar),
};

#ifdef EMBER_SIMD
static const ember_kernel simd_kernels[] = {
    KQ(EMBER_Q2_K, EMBER_ISA_AVX2, "q2_K_avx2", ember_kq_q2_K_avx2),
    KQ(EMBER_Q3_K, EMBER_ISA_AVX2, "q3_K_avx2", ember_kq_q3_K_avx2),
    KQ512(EMBER_Q2_K, "q2_K_avx512vnni", ember_kq_q2_K_avx512),
    KQ512(EMBER_Q3_K, "q3_K_avx512vnni", ember_kq_q3_K_avx512),
    KQ(EMBER_Q4_K, EMBER_ISA_AVX2, "q4_K_avx2", ember_kq_q4_K_avx2),
    KQ(EMBER_Q5_K, EMBER_ISA_AVX2, "q5_K_avx2", ember_kq_q5_K_avx2),
    KQ(EMBER_Q6_K, EMBER_ISA_AVX2, "q6_K_avx2", ember_kq_q6_K_avx2),
    KQ(EMBER_IQ4_XS, EMBER_ISA_AVX2, "iq4_xs_avx2", ember_kq_iq4_xs_avx2),
    KQ512(EMBER_Q4_K, "q4_K_avx512vnni", ember_kq_q4_K_avx512),
    KQ512(EMBER_Q5_K, "q5_K_avx512vnni", ember_kq_q5_K_avx512),
    KQ512(EMBER_Q6_K, "q6_K_avx512vnni", ember_kq_q6_K_avx512),
    KQ512(EMBER_IQ4_XS, "iq4_xs_avx512vnni", ember_kq_iq4_xs_avx512),
};
#endif

const ember_kernel *ember_kernels_kquant(int wtype, ember_isa isa)
{
    const ember_kernel *k = EMBER_KERNEL_IN(scalar_kernels, wtype, isa);
#ifdef EMBER_SIMD
    if (!k) k = EMBER_KERNEL_IN(simd_kernels, wtype, isa);
#endif
    return k;
}
