/* K-quant kernels (Q4_K, Q5_K, Q6_K weights x Q8_K activations): the
   activation quantizer, the scalar oracles and the registration table.  The
   order of float operations is spelled out in kernels_kquant_impl.h; the
   SIMD files (kernels_kquant_avx2.c, kernels_kquant_avx512.c) keep it. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "dtype.h"
#include "kernels_kquant_impl.h"

void ember_kq_quantize_q8_K(const float *x, void *xq, int64_t k)
{
    ember_quantize_row_kquant(EMBER_Q8_K, x, xq, k - k % QK_K);
}

static void scale_min_k4(int j, const uint8_t *q, int *sc, int *m)
{
    if (j < 4) {
        *sc = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *sc = (q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4);
        *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

/* Weight element i of a Q4_K/Q5_K block without its high bit: sub-block
   pairs (2c, 2c+1) share qs[32c..32c+31], low nibble then high nibble. */
static int q4_nibble(const uint8_t *qs, int i)
{
    int c = i / 64, l = i % 32;
    return (i % 64) < 32 ? qs[32 * c + l] & 0x0f : qs[32 * c + l] >> 4;
}

static float dot_q4_K(const block_q4_K *b, const block_q8_K *x, int nb)
{
    float acc = 0;
    for (int i = 0; i < nb; i++, b++, x++) {
        int32_t isum = 0, msum = 0;
        for (int j = 0; j < 8; j++) {
            int sc, m;
            scale_min_k4(j, b->scales, &sc, &m);
            int32_t dot = 0;
            for (int l = 32 * j; l < 32 * j + 32; l++) dot += q4_nibble(b->qs, l) * x->qs[l];
            isum += sc * dot;
            msum += m * (x->bsums[2 * j] + x->bsums[2 * j + 1]);
        }
        float dw = ember_fp16_to_f32(b->d), dm = ember_fp16_to_f32(b->dmin);
        acc = fmaf(dw * x->d, (float)isum, acc);
        acc = fmaf(-(dm * x->d), (float)msum, acc);
    }
    return acc;
}

static float dot_q5_K(const block_q5_K *b, const block_q8_K *x, int nb)
{
    float acc = 0;
    for (int i = 0; i < nb; i++, b++, x++) {
        int32_t isum = 0, msum = 0;
        for (int j = 0; j < 8; j++) {
            int sc, m;
            scale_min_k4(j, b->scales, &sc, &m);
            int32_t dot = 0;
            for (int l = 32 * j; l < 32 * j + 32; l++) {
                int q = q4_nibble(b->qs, l) | ((b->qh[l % 32] >> j) & 1) << 4;
                dot += q * x->qs[l];
            }
            isum += sc * dot;
            msum += m * (x->bsums[2 * j] + x->bsums[2 * j + 1]);
        }
        float dw = ember_fp16_to_f32(b->d), dm = ember_fp16_to_f32(b->dmin);
        acc = fmaf(dw * x->d, (float)isum, acc);
        acc = fmaf(-(dm * x->d), (float)msum, acc);
    }
    return acc;
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
    float acc = 0;
    for (int i = 0; i < nb; i++, b++, x++) {
        int32_t isum = 0;
        for (int g = 0; g < 16; g++) {
            int32_t dot = 0;
            for (int l = 16 * g; l < 16 * g + 16; l++) dot += (q6_value(b, l) - 32) * x->qs[l];
            isum += b->scales[g] * dot;
        }
        acc = fmaf(ember_fp16_to_f32(b->d) * x->d, (float)isum, acc);
    }
    return acc;
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

SCALAR_MATMUL(q4_K_scalar, block_q4_K, dot_q4_K)
SCALAR_MATMUL(q5_K_scalar, block_q5_K, dot_q5_K)
SCALAR_MATMUL(q6_K_scalar, block_q6_K, dot_q6_K)

#define KQ(wt, isa, nm, fn) {nm, isa, wt, EMBER_Q8_K, ember_kq_quantize_q8_K, fn}
#define KQ512(wt, nm, fn) {nm, EMBER_ISA_AVX512, wt, EMBER_Q8_K, ember_kq_quantize_q8_K_avx512, fn}

static const ember_kernel scalar_kernels[] = {
    KQ(EMBER_Q4_K, EMBER_ISA_SCALAR, "q4_K_scalar", q4_K_scalar),
    KQ(EMBER_Q5_K, EMBER_ISA_SCALAR, "q5_K_scalar", q5_K_scalar),
    KQ(EMBER_Q6_K, EMBER_ISA_SCALAR, "q6_K_scalar", q6_K_scalar),
};

#ifdef EMBER_SIMD
static const ember_kernel simd_kernels[] = {
    KQ(EMBER_Q4_K, EMBER_ISA_AVX2, "q4_K_avx2", ember_kq_q4_K_avx2),
    KQ(EMBER_Q5_K, EMBER_ISA_AVX2, "q5_K_avx2", ember_kq_q5_K_avx2),
    KQ(EMBER_Q6_K, EMBER_ISA_AVX2, "q6_K_avx2", ember_kq_q6_K_avx2),
    KQ512(EMBER_Q4_K, "q4_K_avx512vnni", ember_kq_q4_K_avx512),
    KQ512(EMBER_Q5_K, "q5_K_avx512vnni", ember_kq_q5_K_avx512),
    KQ512(EMBER_Q6_K, "q6_K_avx512vnni", ember_kq_q6_K_avx512),
};
#endif

const ember_kernel *ember_kernels_kquant(int wtype, ember_isa isa)
{
    for (size_t i = 0; i < sizeof scalar_kernels / sizeof scalar_kernels[0]; i++)
        if (scalar_kernels[i].wtype == wtype && scalar_kernels[i].isa == isa)
            return &scalar_kernels[i];
#ifdef EMBER_SIMD
    for (size_t i = 0; i < sizeof simd_kernels / sizeof simd_kernels[0]; i++)
        if (simd_kernels[i].wtype == wtype && simd_kernels[i].isa == isa)
            return &simd_kernels[i];
#endif
    return NULL;
}
