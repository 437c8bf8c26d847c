/* Attention over q8_0 KV rows (att_q8.h).  A decoded token at 4096
   positions of a 1B Llama reads 68 MiB of these rows; read back as fp16
   for the reference's f16 steps they cost twice the f16 cache's time
   (doc/PERFORMANCE.md).  Here the scores are VPDPBUSD products of 16
   rows at a time, transposed so that a lane is a row and the query's
   4-byte groups are broadcast (no horizontal sums), and the weighted sum
   converts each row once for all heads that share it. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "att_q8.h"
#include "dtype.h"
#include "kernels.h"
#include "kernels_simple.h"
#include "simd.h"

/* ---- rows and queries ---------------------------------------------------- */

static void quantize_blocks(block_q8_0 *b, const float *x, int hd)
{
#ifdef EMBER_SIMD
    if (ember_cpu_isa() >= EMBER_ISA_AVX2) {
        ember_q8_0_quantize_act_avx2(x, b, hd);
        return;
    }
#endif
    ember_q8_0_quantize_act_scalar(x, b, hd);
}

void ember_attq8_store(uint8_t *row, const float *x, int hd)
{
    const int nb = hd / 32;
    block_q8_0 b[nb];
    quantize_blocks(b, x, hd);
    for (int i = 0; i < nb; i++) {
        memcpy(row + 2 * i, &b[i].d, 2);
        memcpy(row + 2 * nb + 32 * i, b[i].qs, 32);
    }
}

/* A query block as the reference's flash attention quantizes it on x86
   (ik_llama.cpp's q8_2): the scale amax / 127 rounded to bf16 first, the
   values then divided by that rounded scale, to nearest even, saturated
   to int8.  (llama.cpp's q8_0 divides by the unrounded scale and keeps it
   in fp16.)  The query's rounding moves every score by up to a block's
   scale, so it is felt where scores are large: against ik with a q8_0
   cache, tiny-qwen3moe went from cosine 0.989 to 0.9999993 and tiny-gemma4
   from 0.974 to 0.998 (doc/PERFORMANCE.md); Llama's did not move. */
static float query_block(int8_t *qs, const float *x)
{
    float amax = 0;
    for (int j = 0; j < 32; j++) amax = fabsf(x[j]) > amax ? fabsf(x[j]) : amax;
    const float d = ember_bf16_to_f32(ember_f32_to_bf16(amax / 127.f)), id = d > 0 ? 1 / d : 0.f;
    for (int j = 0; j < 32; j++) {
        const float v = nearbyintf(x[j] * id);
        qs[j] = (int8_t)(v > 127 ? 127 : v < -128 ? -128 : v);
    }
    return d;
}

void ember_attq8_query(uint8_t *dst, const float *q, int hd)
{
    const int nb = hd / 32;
    for (int i = 0; i < nb; i++) {
        int8_t qs[32];
        const float d = query_block(qs, q + 32 * i);
        int32_t sum = 0;
        for (int j = 0; j < 32; j++) sum += qs[j];
        const int32_t bias = -128 * sum;
        memcpy(dst + 4 * i, &d, 4);
        memcpy(dst + 4 * (nb + i), &bias, 4);
        memcpy(dst + 8 * nb + 32 * i, qs, 32);
    }
}

static inline float query_d(const uint8_t *q, int b)
{
    float d;
    memcpy(&d, q + 4 * b, 4);
    return d;
}

static inline uint16_t row_d(const uint8_t *row, int b)
{
    uint16_t d;
    memcpy(&d, row + 2 * b, 2);
    return d;
}

/* ---- the definitions ----------------------------------------------------- */

void ember_attq8_scores_scalar(float *sc, size_t sc_stride, const uint8_t *k, const uint8_t *q, size_t q_stride,
                               int nh, int npos, int hd, float scale, float *mx)
{
    const int nb = hd / 32;
    const size_t rb = ember_attq8_row_bytes(hd);
    for (int h = 0; h < nh; h++) {
        const uint8_t *qh = q + (size_t)h * q_stride;
        const int8_t *qq = (const int8_t *)(qh + 8 * nb);
        float m = -INFINITY;
        for (int p = 0; p < npos; p++) {
            const uint8_t *row = k + (size_t)p * rb;
            const int8_t *kq = (const int8_t *)(row + 2 * nb);
            float s = 0.0f;
            for (int b = 0; b < nb; b++) {
                int32_t isum = 0;
                for (int j = 0; j < 32; j++) isum += (int32_t)kq[32 * b + j] * qq[32 * b + j];
                const float dd = ember_fp16_to_f32(row_d(row, b)) * query_d(qh, b);
                s = fmaf(dd, (float)isum, s);
            }
            s *= scale;
            sc[(size_t)h * sc_stride + (size_t)p] = s;
            if (s > m) m = s;
        }
        mx[h] = m;
    }
}

void ember_attq8_wsum_scalar(float *out, size_t out_stride, const float *w, size_t w_stride, int nh, const uint8_t *v,
                             int npos, int hd)
{
    const int nb = hd / 32;
    const size_t rb = ember_attq8_row_bytes(hd);
    for (int h = 0; h < nh; h++) {
        float *o = out + (size_t)h * out_stride;
        for (int d = 0; d < hd; d++) o[d] = 0.0f;
        for (int p = 0; p < npos; p++) {
            const uint8_t *row = v + (size_t)p * rb;
            const int8_t *vq = (const int8_t *)(row + 2 * nb);
            const float wp = w[(size_t)h * w_stride + (size_t)p];
            for (int d = 0; d < hd; d++) {
                /* d * q is exact in a float (11 and 8 significant bits) */
                const float x = ember_fp16_to_f32(row_d(row, d / 32)) * (float)vq[d];
                o[d] = fmaf(wp, x, o[d]);
            }
        }
    }
}

#ifdef EMBER_SIMD

/* ---- AVX-512 VNNI -------------------------------------------------------- */

/* r[i] holds row i's 16 dwords; after, r[j] holds dword j of rows 0..15. */
static inline EMBER_TARGET_AVX512 __attribute__((always_inline)) void transpose16(__m512i r[16])
{
    __m512i t[16], u[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
    }
    /* u[4g + c], 128-bit lane L: rows 4g..4g+3 of dword 4L + c */
    for (int g = 0; g < 16; g += 4) {
        u[g] = _mm512_unpacklo_epi64(t[g], t[g + 2]);
        u[g + 1] = _mm512_unpackhi_epi64(t[g], t[g + 2]);
        u[g + 2] = _mm512_unpacklo_epi64(t[g + 1], t[g + 3]);
        u[g + 3] = _mm512_unpackhi_epi64(t[g + 1], t[g + 3]);
    }
    for (int c = 0; c < 4; c++) {
        const __m512i v0 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0x44), v1 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0xee);
        const __m512i v2 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0x44),
                      v3 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0xee);
        r[c] = _mm512_shuffle_i32x4(v0, v2, 0x88);
        r[4 + c] = _mm512_shuffle_i32x4(v0, v2, 0xdd);
        r[8 + c] = _mm512_shuffle_i32x4(v1, v3, 0x88);
        r[12 + c] = _mm512_shuffle_i32x4(v1, v3, 0xdd);
    }
}

static inline EMBER_TARGET_AVX512 __attribute__((always_inline)) __m512i bcast32(const uint8_t *p)
{
    int32_t x;
    memcpy(&x, p, 4);
    return _mm512_set1_epi32(x);
}

/* Rows 4 KiB ahead asked for (the distance the f16 kernels found best). */
#define ATTQ8_PF 4096

static EMBER_TARGET_AVX512 void scores_avx512(float *sc, size_t sc_stride, const uint8_t *k, const uint8_t *q,
                                              size_t q_stride, int nh, int npos, int hd, float scale, float *mx)
{
    const int nb = hd / 32;
    const size_t rb = ember_attq8_row_bytes(hd);
    __m512 part[nh], mxv[nh];
    for (int h = 0; h < nh; h++) mxv[h] = _mm512_set1_ps(-INFINITY);
    const __m512i off = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                           _mm512_set1_epi32((int)rb));
    const __m512i x80 = _mm512_set1_epi8((char)0x80);
    const __m512 vscale = _mm512_set1_ps(scale);
    for (int p0 = 0; p0 < npos; p0 += 16) {
        const int n = npos - p0 < 16 ? npos - p0 : 16;
        const __mmask16 m = (__mmask16)(n == 16 ? 0xffff : (1u << n) - 1);
        const uint8_t *base = k + (size_t)p0 * rb;
        for (size_t o = 0; o < 16 * rb; o += 64) _mm_prefetch((const char *)base + ATTQ8_PF + o, _MM_HINT_T0);
        for (int b0 = 0; b0 < nb; b0 += 2) {
            const int two = b0 + 1 < nb;
            /* scales b0 and b0 + 1 of each row (or b0 and the first values) */
            const __m512i g = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m, off, base + 2 * b0, 1);
            const __m512 dk0 = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(g));
            const __m512 dk1 = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(g, 16)));
            const uint8_t *vals = base + 2 * nb + 32 * b0;
            const __mmask16 lm = two ? 0xffff : 0x00ff;
            __m512i r[16];
#pragma GCC unroll 16
            for (int i = 0; i < 16; i++)
                r[i] = _mm512_xor_si512(_mm512_maskz_loadu_epi32(i < n ? lm : 0, vals + (size_t)i * rb), x80);
            transpose16(r);
            for (int h = 0; h < nh; h++) {
                const uint8_t *qh = q + (size_t)h * q_stride, *qq = qh + 8 * nb + 32 * b0;
                int32_t bias[2];
                memcpy(bias, qh + 4 * (nb + b0), two ? 8 : 4);
                /* (k + 128) . q - 128 sum(q) = k . q */
                __m512i a0 = _mm512_set1_epi32(bias[0]);
#pragma GCC unroll 8
                for (int j = 0; j < 8; j++) a0 = _mm512_dpbusd_epi32(a0, r[j], bcast32(qq + 4 * j));
                __m512 s = b0 ? part[h] : _mm512_setzero_ps();
                s = _mm512_fmadd_ps(_mm512_mul_ps(dk0, _mm512_set1_ps(query_d(qh, b0))), _mm512_cvtepi32_ps(a0), s);
                if (two) {
                    __m512i a1 = _mm512_set1_epi32(bias[1]);
#pragma GCC unroll 8
                    for (int j = 0; j < 8; j++) a1 = _mm512_dpbusd_epi32(a1, r[8 + j], bcast32(qq + 32 + 4 * j));
                    s = _mm512_fmadd_ps(_mm512_mul_ps(dk1, _mm512_set1_ps(query_d(qh, b0 + 1))), _mm512_cvtepi32_ps(a1),
                                        s);
                }
                part[h] = s;
            }
        }
        for (int h = 0; h < nh; h++) {
            const __m512 s = _mm512_mul_ps(part[h], vscale);
            _mm512_mask_storeu_ps(sc + (size_t)h * sc_stride + (size_t)p0, m, s);
            mxv[h] = _mm512_mask_max_ps(mxv[h], m, mxv[h], s);
        }
    }
    for (int h = 0; h < nh; h++) mx[h] = _mm512_reduce_max_ps(mxv[h]);
}

/* H heads over NZ vectors of 16 dimensions from c0 (a multiple of 32):
   each row's values converted once for the H heads.  H * NZ accumulators
   stay in registers; every lane adds its positions in order. */
static inline EMBER_TARGET_AVX512 __attribute__((always_inline)) void
wsum_avx512_hz(float *out, size_t out_stride, const float *w, size_t w_stride, const uint8_t *v, int npos, int nb,
               size_t rb, int c0, const int H, const int NZ)
{
    __m512 acc[8][8];   /* fixed sizes: [H][NZ] of them, in registers once unrolled */
#pragma GCC unroll 8
    for (int h = 0; h < H; h++)
#pragma GCC unroll 8
        for (int z = 0; z < NZ; z++) acc[h][z] = _mm512_setzero_ps();
    const uint8_t *row = v;
    for (int p = 0; p < npos; p++, row += rb) {
        /* 4 KiB ahead, as the scores' keys (a row is 68 bytes at head_dim 64:
           two lines cover each row's next): without it the sum was 6.3-7.0%
           of decode at 4096 positions against 4.5-4.9%, and 8 KiB ahead no
           better (Zen 5 VM) */
        _mm_prefetch((const char *)row + ATTQ8_PF, _MM_HINT_T0);
        _mm_prefetch((const char *)row + ATTQ8_PF + 63, _MM_HINT_T0);
        __m512 f[8];
#pragma GCC unroll 8
        for (int z = 0; z < NZ; z += 2) {
            const __m512 d = _mm512_set1_ps(_cvtsh_ss(row_d(row, (c0 + 16 * z) / 32)));
            const uint8_t *x = row + 2 * nb + c0 + 16 * z;
            f[z] = _mm512_mul_ps(d, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)x))));
            f[z + 1] =
                _mm512_mul_ps(d, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(x + 16)))));
        }
#pragma GCC unroll 8
        for (int h = 0; h < H; h++) {
            const __m512 wb = _mm512_set1_ps(w[(size_t)h * w_stride + (size_t)p]);
#pragma GCC unroll 8
            for (int z = 0; z < NZ; z++) acc[h][z] = _mm512_fmadd_ps(wb, f[z], acc[h][z]);
        }
    }
#pragma GCC unroll 8
    for (int h = 0; h < H; h++)
#pragma GCC unroll 8
        for (int z = 0; z < NZ; z++) _mm512_storeu_ps(out + (size_t)h * out_stride + (size_t)(c0 + 16 * z), acc[h][z]);
}

#define WSUM512(H, NZ)                                                                                                 \
    static EMBER_TARGET_AVX512 void wsum512_##H##_##NZ(float *out, size_t os, const float *w, size_t ws,            \
                                                        const uint8_t *v, int npos, int nb, size_t rb, int c0)     \
    {                                                                                                                  \
        wsum_avx512_hz(out, os, w, ws, v, npos, nb, rb, c0, H, NZ);                                                    \
    }
WSUM512(1, 2) WSUM512(1, 4) WSUM512(1, 8)
WSUM512(2, 2) WSUM512(2, 4) WSUM512(2, 8)
WSUM512(3, 2) WSUM512(3, 4)
WSUM512(4, 2) WSUM512(4, 4)
WSUM512(8, 2)

typedef void (*wsum_fn)(float *, size_t, const float *, size_t, const uint8_t *, int, int, size_t, int);

/* [heads][NZ / 2 - 1]: the widest dimension run each head count keeps in
   16 accumulators (8 heads: 2 vectors; 3 or 4: 4; 1 or 2: 8) */
static const wsum_fn wsum512[9][4] = {
    [1] = {wsum512_1_2, wsum512_1_4, NULL, wsum512_1_8},
    [2] = {wsum512_2_2, wsum512_2_4, NULL, wsum512_2_8},
    [3] = {wsum512_3_2, wsum512_3_4},
    [4] = {wsum512_4_2, wsum512_4_4},
    [8] = {wsum512_8_2},
};

static EMBER_TARGET_AVX512 void wsum_avx512(float *out, size_t out_stride, const float *w, size_t w_stride, int nh,
                                            const uint8_t *v, int npos, int hd)
{
    const int nb = hd / 32;
    const size_t rb = ember_attq8_row_bytes(hd);
    for (int h0 = 0; h0 < nh;) {
        const int H = nh - h0 >= 8 ? 8 : nh - h0 >= 4 ? 4 : nh - h0;
        const int widest = H >= 8 ? 2 : H >= 3 ? 4 : 8;
        for (int c0 = 0; c0 < hd;) {
            int nz = (hd - c0) / 16;
            if (nz > widest) nz = widest;
            if (nz == 6) nz = 4;   /* 8 vectors or 4 then 2 */
            wsum512[H][nz / 2 - 1](out + (size_t)h0 * out_stride, out_stride, w + (size_t)h0 * w_stride, w_stride, v,
                                   npos, nb, rb, c0);
            c0 += 16 * nz;
        }
        h0 += H;
    }
}

/* ---- AVX2 ----------------------------------------------------------------- */

/* r[i] holds row i's 8 dwords; after, r[j] holds dword j of rows 0..7. */
static inline EMBER_TARGET_AVX2 __attribute__((always_inline)) void transpose8(__m256i r[8])
{
    __m256i t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_epi32(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_epi32(r[i], r[i + 1]);
    }
    /* u[4g + c], 128-bit lane L: rows 4g..4g+3 of dword 4L + c */
    for (int g = 0; g < 8; g += 4) {
        u[g] = _mm256_unpacklo_epi64(t[g], t[g + 2]);
        u[g + 1] = _mm256_unpackhi_epi64(t[g], t[g + 2]);
        u[g + 2] = _mm256_unpacklo_epi64(t[g + 1], t[g + 3]);
        u[g + 3] = _mm256_unpackhi_epi64(t[g + 1], t[g + 3]);
    }
    for (int c = 0; c < 4; c++) {
        r[c] = _mm256_permute2x128_si256(u[c], u[4 + c], 0x20);
        r[4 + c] = _mm256_permute2x128_si256(u[c], u[4 + c], 0x31);
    }
}

static EMBER_TARGET_AVX2 void scores_avx2(float *sc, size_t sc_stride, const uint8_t *k, const uint8_t *q,
                                          size_t q_stride, int nh, int npos, int hd, float scale, float *mx)
{
    const int nb = hd / 32;
    const size_t rb = ember_attq8_row_bytes(hd);
    __m256 part[nh];
    float m[nh];
    for (int h = 0; h < nh; h++) m[h] = -INFINITY;
    const __m256i ones = _mm256_set1_epi16(1);
    for (int p0 = 0; p0 < npos; p0 += 8) {
        const int n = npos - p0 < 8 ? npos - p0 : 8;
        const uint8_t *base = k + (size_t)p0 * rb;
        for (size_t o = 0; o < 8 * rb; o += 64) _mm_prefetch((const char *)base + ATTQ8_PF + o, _MM_HINT_T0);
        for (int b = 0; b < nb; b++) {
            uint16_t ds[8] = {0};
            __m256i r[8];
            for (int i = 0; i < 8; i++) {
                if (i < n) {
                    ds[i] = row_d(base + (size_t)i * rb, b);
                    r[i] = _mm256_loadu_si256((const __m256i *)(base + (size_t)i * rb + 2 * nb + 32 * b));
                } else {
                    r[i] = _mm256_setzero_si256();
                }
            }
            const __m256 dk = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)ds));
            transpose8(r);
            /* |k| times q with k's sign: the pairs' sums fit in 16 bits */
            __m256i ak[8];
            for (int j = 0; j < 8; j++) ak[j] = _mm256_abs_epi8(r[j]);
            for (int h = 0; h < nh; h++) {
                const uint8_t *qh = q + (size_t)h * q_stride, *qq = qh + 8 * nb + 32 * b;
                __m256i a = _mm256_setzero_si256();
                for (int j = 0; j < 8; j++) {
                    int32_t x;
                    memcpy(&x, qq + 4 * j, 4);
                    const __m256i sq = _mm256_sign_epi8(_mm256_set1_epi32(x), r[j]);
                    a = _mm256_add_epi32(a, _mm256_madd_epi16(_mm256_maddubs_epi16(ak[j], sq), ones));
                }
                const __m256 s = b ? part[h] : _mm256_setzero_ps();
                part[h] = _mm256_fmadd_ps(_mm256_mul_ps(dk, _mm256_set1_ps(query_d(qh, b))), _mm256_cvtepi32_ps(a), s);
            }
        }
        for (int h = 0; h < nh; h++) {
            float o[8];
            _mm256_storeu_ps(o, _mm256_mul_ps(part[h], _mm256_set1_ps(scale)));
            float *dst = sc + (size_t)h * sc_stride + (size_t)p0;
            for (int i = 0; i < n; i++) {
                dst[i] = o[i];
                if (o[i] > m[h]) m[h] = o[i];
            }
        }
    }
    for (int h = 0; h < nh; h++) mx[h] = m[h];
}

/* One block of 32 dimensions (4 vectors) for H heads. */
static inline EMBER_TARGET_AVX2 __attribute__((always_inline)) void
wsum_avx2_h(float *out, size_t out_stride, const float *w, size_t w_stride, const uint8_t *v, int npos, int nb,
            size_t rb, int b, const int H)
{
    __m256 acc[2][4];   /* fixed size: in registers once unrolled */
#pragma GCC unroll 8
    for (int h = 0; h < H; h++)
#pragma GCC unroll 8
        for (int z = 0; z < 4; z++) acc[h][z] = _mm256_setzero_ps();
    const uint8_t *row = v;
    for (int p = 0; p < npos; p++, row += rb) {
        const __m256 d = _mm256_set1_ps(_cvtsh_ss(row_d(row, b)));
        const __m256i x = _mm256_loadu_si256((const __m256i *)(row + 2 * nb + 32 * b));
        const __m128i lo = _mm256_castsi256_si128(x), hi = _mm256_extracti128_si256(x, 1);
        const __m128i part[4] = {lo, _mm_srli_si128(lo, 8), hi, _mm_srli_si128(hi, 8)};
        __m256 f[4];
#pragma GCC unroll 8
        for (int z = 0; z < 4; z++) f[z] = _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(part[z])));
#pragma GCC unroll 8
        for (int h = 0; h < H; h++) {
            const __m256 wb = _mm256_set1_ps(w[(size_t)h * w_stride + (size_t)p]);
#pragma GCC unroll 8
            for (int z = 0; z < 4; z++) acc[h][z] = _mm256_fmadd_ps(wb, f[z], acc[h][z]);
        }
    }
#pragma GCC unroll 8
    for (int h = 0; h < H; h++)
#pragma GCC unroll 8
        for (int z = 0; z < 4; z++) _mm256_storeu_ps(out + (size_t)h * out_stride + (size_t)(32 * b + 8 * z), acc[h][z]);
}

static EMBER_TARGET_AVX2 void wsum_avx2(float *out, size_t out_stride, const float *w, size_t w_stride, int nh,
                                        const uint8_t *v, int npos, int hd)
{
    const int nb = hd / 32;
    const size_t rb = ember_attq8_row_bytes(hd);
    for (int h0 = 0; h0 < nh;) {
        const int H = nh - h0 >= 2 ? 2 : 1;
        for (int b = 0; b < nb; b++) {
            float *o = out + (size_t)h0 * out_stride;
            const float *wh = w + (size_t)h0 * w_stride;
            if (H == 2) wsum_avx2_h(o, out_stride, wh, w_stride, v, npos, nb, rb, b, 2);
            else wsum_avx2_h(o, out_stride, wh, w_stride, v, npos, nb, rb, b, 1);
        }
        h0 += H;
    }
}

#endif /* EMBER_SIMD */

/* ---- dispatch ------------------------------------------------------------ */

void ember_attq8_scores(float *sc, size_t sc_stride, const uint8_t *k, const uint8_t *q, size_t q_stride, int nh,
                        int npos, int hd, float scale, float *mx)
{
#ifdef EMBER_SIMD
    if (ember_cpu_isa() >= EMBER_ISA_AVX512) {
        scores_avx512(sc, sc_stride, k, q, q_stride, nh, npos, hd, scale, mx);
        return;
    }
    if (ember_cpu_isa() >= EMBER_ISA_AVX2) {
        scores_avx2(sc, sc_stride, k, q, q_stride, nh, npos, hd, scale, mx);
        return;
    }
#endif
    ember_attq8_scores_scalar(sc, sc_stride, k, q, q_stride, nh, npos, hd, scale, mx);
}

void ember_attq8_wsum(float *out, size_t out_stride, const float *w, size_t w_stride, int nh, const uint8_t *v,
                      int npos, int hd)
{
#ifdef EMBER_SIMD
    if (ember_cpu_isa() >= EMBER_ISA_AVX512) {
        wsum_avx512(out, out_stride, w, w_stride, nh, v, npos, hd);
        return;
    }
    if (ember_cpu_isa() >= EMBER_ISA_AVX2) {
        wsum_avx2(out, out_stride, w, w_stride, nh, v, npos, hd);
        return;
    }
#endif
    ember_attq8_wsum_scalar(out, out_stride, w, w_stride, nh, v, npos, hd);
}
