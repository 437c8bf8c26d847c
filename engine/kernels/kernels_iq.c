/* Kernels of the grid formats (IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S,
   IQ3_XXS, IQ3_S) against Q8_K activations: the scalar oracle, AVX2, and
   their registration.
 *
 * Order of float operations: the reference's x86 vec_dot for each type, so
 * that logits follow its numerics (and every ISA here gives the same bits).
 * Per super-block, with v(e) the element's signed grid value, s its 16
 * elements' scale field and dx the activation block's d:
 *   lane[l] = sum over e with (e mod 32) / 4 == l of (2s + 1) * v(e) * x(e)
 *             (int32, exact)
 *   d = d_w * dx;  acc[l] = fmaf(d, (float)lane[l], acc[l])
 * and y = c * ember_sum8(acc), c = 1/8 for IQ2, 1/4 for IQ3_XXS, 1 for IQ3_S.
 * IQ1 adds its +-1/8 shifts: IQ1_S as one int per super-block,
 *   D = sum over 32-blocks of (2s + 1) * sign * (bsums of the block),
 *   accd = fmaf(d, (float)D, accd), y = fmaf(1/8, accd, ember_sum8(acc));
 * IQ1_M as lanes of (2s + 1) * sign(e) * x(e) in acc2 like acc,
 *   y = fmaf(1/8, ember_sum8(acc2), ember_sum8(acc)).
 * (The reference writes those two as a multiply and an add, which its
 * build contracts into one fma; checked against its library's vec_dot.) */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "dtype.h"
#include "kernels_kquant_impl.h"
#include "simd.h"

static float dot_iq(int type, const uint8_t *row, size_t bb, const block_q8_K *x, int nb)
{
    float acc[8] = {0}, acc2[8] = {0}, accd = 0;
    for (int i = 0; i < nb; i++, x++, row += bb) {
        ember_iq_block o;
        ember_iq_decode(type, row, &o);
        int32_t lane[8] = {0}, lane2[8] = {0}, dsum = 0;
        for (int e = 0; e < QK_K; e++) {
            int sc = 2 * o.s[e / 16] + 1;
            lane[EMBER_LANE(e)] += sc * o.v[e] * x->qs[e];
            lane2[EMBER_LANE(e)] += sc * o.delta[e / 8] * x->qs[e];
        }
        for (int ib = 0; ib < QK_K / 32; ib++)
            dsum += (2 * o.s[2 * ib] + 1) * o.delta[4 * ib] * (x->bsums[2 * ib] + x->bsums[2 * ib + 1]);
        float d = o.d * x->d;
        for (int l = 0; l < 8; l++) {
            acc[l] = fmaf(d, (float)lane[l], acc[l]);
            acc2[l] = fmaf(d, (float)lane2[l], acc2[l]);
        }
        accd = fmaf(d, (float)dsum, accd);
    }
    if (type == EMBER_IQ1_S) return fmaf(0.125f, accd, ember_sum8(acc));
    if (type == EMBER_IQ1_M) return fmaf(0.125f, ember_sum8(acc2), ember_sum8(acc));
    return ember_iq_scale_factor(type) * ember_sum8(acc);
}

#define SCALAR_MATMUL(name, type, block_t)                                                          \
    static void name(EMBER_KQ_MATMUL_ARGS)                                                          \
    {                                                                                               \
        int nb = (int)(k / QK_K);                                                                   \
        for (int r = r0; r < r1; r++)                                                               \
            for (int t = 0; t < nt; t++)                                                            \
                y[(size_t)t * y_stride + (size_t)r] =                                               \
                    dot_iq(type, (const uint8_t *)w + (size_t)r * row_bytes, sizeof(block_t),       \
                           (const block_q8_K *)(const void *)((const uint8_t *)xq + (size_t)t * xq_stride), nb); \
    }

SCALAR_MATMUL(iq2_xxs_scalar, EMBER_IQ2_XXS, block_iq2_xxs)
SCALAR_MATMUL(iq2_xs_scalar, EMBER_IQ2_XS, block_iq2_xs)
SCALAR_MATMUL(iq2_s_scalar, EMBER_IQ2_S, block_iq2_s)
SCALAR_MATMUL(iq3_xxs_scalar, EMBER_IQ3_XXS, block_iq3_xxs)
SCALAR_MATMUL(iq3_s_scalar, EMBER_IQ3_S, block_iq3_s)
SCALAR_MATMUL(iq1_s_scalar, EMBER_IQ1_S, block_iq1_s)
SCALAR_MATMUL(iq1_m_scalar, EMBER_IQ1_M, block_iq1_m)

/* ---- AVX2 ----------------------------------------------------------------
 * A 32-element sub-block decodes to the magnitudes (u8) and a +-1 byte per
 * element (IQ1: the value itself, -1 / 0 / 1); vpmaddubsw of the magnitudes
 * with the activations given those signs makes word pairs (no saturation:
 * 2 * 62 * 127 < 32767) and vpmaddwd by the scale words (2s + 1, one per
 * 16 elements: the low and high halves) folds them into the 8 int32 lanes.
 * A super-block is decoded once for up to 8 tokens. */
#ifdef EMBER_SIMD
#include <immintrin.h>

#define T EMBER_TARGET_AVX2
#define INL static inline __attribute__((always_inline)) T

/* One decoded 32-element sub-block. */
typedef struct {
    __m256i mag, sgn, sc;
    __m256i dl;      /* IQ1_M: the delta signs, +-1 per 8 elements */
    int dsc;         /* IQ1_S: (2s + 1) times the delta's sign */
} iq_sub;

INL __m256i pts8x4(const int8_t (*p)[8], unsigned a, unsigned b, unsigned c, unsigned d)
{
    uint64_t w[4];
    memcpy(&w[0], p[a], 8), memcpy(&w[1], p[b], 8), memcpy(&w[2], p[c], 8), memcpy(&w[3], p[d], 8);
    return _mm256_set_epi64x((long long)w[3], (long long)w[2], (long long)w[1], (long long)w[0]);
}

INL __m256i pts4x8(const int8_t (*p)[8], const unsigned i[8])
{
    uint32_t w[8];
    for (int j = 0; j < 8; j++) memcpy(&w[j], p[i[j]], 4);
    return _mm256_setr_epi32((int)w[0], (int)w[1], (int)w[2], (int)w[3], (int)w[4], (int)w[5], (int)w[6], (int)w[7]);
}

/* Four sign masks (indices into a table of 8 +-1 bytes each) as 32 bytes. */
INL __m256i signs4(const uint64_t *sb, unsigned m0, unsigned m1, unsigned m2, unsigned m3)
{
    return _mm256_set_epi64x((long long)sb[m3], (long long)sb[m2], (long long)sb[m1], (long long)sb[m0]);
}

INL __m256i scale_words(unsigned s0, unsigned s1)
{
    return _mm256_set_m128i(_mm_set1_epi16((short)(2 * s1 + 1)), _mm_set1_epi16((short)(2 * s0 + 1)));
}

/* A super-block's fp16 scale, converted in a register (F16C is part of
   the AVX2 target): a call to the generic converter per super-block was
   4% of an IQ2_XXS decode */
INL float block_d(int type, const uint8_t *blk)
{
    uint16_t h;
    if (type == EMBER_IQ1_M) h = ember_iq1_m_d((const block_iq1_m *)(const void *)blk);
    else memcpy(&h, blk, 2);
    return _cvtsh_ss(h);
}

/* What every walk over a type's rows reads besides them. */
typedef struct {
    const int8_t (*P)[8];   /* the code book's points */
    const uint64_t *ks;     /* the 7-bit sign fields as +-1 bytes */
    const uint64_t *sb;     /* the 8-bit sign masks as +-1 bytes */
    int nb;                 /* super-blocks a row */
    size_t bb;              /* bytes a super-block */
    float c;                /* the type's final factor */
} iq_ctx;

static inline void iq_ctx_init(int type, int64_t k, size_t row_bytes, iq_ctx *x)
{
    x->P = ember_iq_points(type);
    x->ks = ember_iq_ksign_bytes();
    x->sb = ember_iq_sign_bytes();
    x->nb = (int)(k / QK_K);
    x->bb = row_bytes / (size_t)x->nb;
    x->c = ember_iq_scale_factor(type);
}

/* IQ2_S's and IQ3_S's sub-block ib: its magnitudes and scale words, and
   where its four sign bytes are (both walks read them: as +-1 bytes, or
   as the AVX-512 decode's mask) */
INL const uint8_t *sbyte_decode(int type, const uint8_t *blk, int ib, const int8_t (*P)[8], __m256i *mag, __m256i *sc)
{
    if (type == EMBER_IQ2_S) {
        const block_iq2_s *b = (const block_iq2_s *)(const void *)blk;
        const uint8_t *q = b->qs + 4 * ib;
        const unsigned h = b->qh[ib];
        *mag = pts8x4(P, q[0] | (h & 3) << 8, q[1] | (h >> 2 & 3) << 8, q[2] | (h >> 4 & 3) << 8, q[3] | (h >> 6) << 8);
        *sc = scale_words(b->scales[ib] & 15, b->scales[ib] >> 4);
        return b->qs + QK_K / 8 + 4 * ib;
    }
    const block_iq3_s *b = (const block_iq3_s *)(const void *)blk;
    const uint8_t *q = b->qs + 8 * ib;
    const unsigned h = b->qh[ib];
    unsigned i[8];
    for (int j = 0; j < 8; j++) i[j] = q[j] | (h >> j & 1) << 8;
    *mag = pts4x8(P, i);
    *sc = _mm256_set1_epi16((short)(2 * (b->scales[ib / 2] >> 4 * (ib % 2) & 15) + 1));
    return b->signs + 4 * ib;
}

INL void sub_decode(int type, const uint8_t *blk, int ib, const iq_ctx *cx, iq_sub *o)
{
    const int8_t (*P)[8] = cx->P;
    const uint64_t *ks = cx->ks, *sb = cx->sb;
    o->dsc = 0;
    switch (type) {
    case EMBER_IQ2_XXS: {
        const block_iq2_xxs *b = (const block_iq2_xxs *)(const void *)blk;
        const uint8_t *q = (const uint8_t *)(const void *)(b->qs + 4 * ib);
        uint32_t a1 = (uint32_t)ember_rd32(q + 4);
        o->mag = pts8x4(P, q[0], q[1], q[2], q[3]);
        o->sgn = signs4(ks, a1 & 127, a1 >> 7 & 127, a1 >> 14 & 127, a1 >> 21 & 127);
        o->sc = _mm256_set1_epi16((short)(2 * (a1 >> 28) + 1));
        break;
    }
    case EMBER_IQ2_XS: {
        const block_iq2_xs *b = (const block_iq2_xs *)(const void *)blk;
        const uint16_t *q = b->qs + 4 * ib;
        o->mag = pts8x4(P, q[0] & 511, q[1] & 511, q[2] & 511, q[3] & 511);
        o->sgn = signs4(ks, q[0] >> 9, q[1] >> 9, q[2] >> 9, q[3] >> 9);
        o->sc = scale_words(b->scales[ib] & 15, b->scales[ib] >> 4);
        break;
    }
    case EMBER_IQ2_S:
    case EMBER_IQ3_S: {
        const uint8_t *g = sbyte_decode(type, blk, ib, P, &o->mag, &o->sc);
        o->sgn = signs4(sb, g[0], g[1], g[2], g[3]);
        break;
    }
    case EMBER_IQ3_XXS: {
        const block_iq3_xxs *b = (const block_iq3_xxs *)(const void *)blk;
        const uint8_t *q = b->qs + 8 * ib;
        unsigned i[8] = {q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7]};
        uint32_t aux = (uint32_t)ember_rd32(b->qs + QK_K / 4 + 4 * ib);
        o->mag = pts4x8(P, i);
        o->sgn = signs4(ks, aux & 127, aux >> 7 & 127, aux >> 14 & 127, aux >> 21 & 127);
        o->sc = _mm256_set1_epi16((short)(2 * (aux >> 28) + 1));
        break;
    }
    case EMBER_IQ1_S: {
        const block_iq1_s *b = (const block_iq1_s *)(const void *)blk;
        const uint8_t *q = b->qs + 4 * ib;
        unsigned h = b->qh[ib], s = h >> 12 & 7;
        __m256i v = pts8x4(P, q[0] | (h & 7) << 8, q[1] | (h >> 3 & 7) << 8, q[2] | (h >> 6 & 7) << 8, q[3] | (h >> 9 & 7) << 8);
        o->mag = _mm256_abs_epi8(v);
        o->sgn = v;
        o->sc = scale_words(s, s);
        o->dsc = (int)(2 * s + 1) * (h & 0x8000 ? -1 : 1);
        break;
    }
    case EMBER_IQ1_M: {
        const block_iq1_m *b = (const block_iq1_m *)(const void *)blk;
        const uint8_t *q = b->qs + 4 * ib;
        unsigned h0 = b->qh[2 * ib], h1 = b->qh[2 * ib + 1];
        unsigned w = ember_iq1_m_scale_word(b, ib / 2) >> 6 * (ib % 2);
        __m256i v = pts8x4(P, q[0] | (h0 & 7) << 8, q[1] | (h0 >> 4 & 7) << 8, q[2] | (h1 & 7) << 8, q[3] | (h1 >> 4 & 7) << 8);
        o->mag = _mm256_abs_epi8(v);
        o->sgn = v;
        o->sc = scale_words(w & 7, w >> 3 & 7);
        /* the delta signs: bit 3 and bit 7 of each qh byte, one per 8 elements */
        o->dl = signs4(sb, h0 & 0x08 ? 255 : 0, h0 & 0x80 ? 255 : 0, h1 & 0x08 ? 255 : 0, h1 & 0x80 ? 255 : 0);
        break;
    }
    }
}

/* One sub-block's lanes for one token: (2s + 1) * v * x folded into 8 int32. */
INL void sub_dot(int type, const iq_sub *o, const int8_t *xqs, __m256i *lanes, __m256i *lanes2)
{
    __m256i xv = _mm256_loadu_si256((const __m256i *)(const void *)xqs);
    __m256i p = _mm256_maddubs_epi16(o->mag, _mm256_sign_epi8(xv, o->sgn));
    *lanes = _mm256_add_epi32(*lanes, _mm256_madd_epi16(p, o->sc));
    if (type == EMBER_IQ1_M) {
        __m256i p2 = _mm256_maddubs_epi16(_mm256_set1_epi8(1), _mm256_sign_epi8(xv, o->dl));
        *lanes2 = _mm256_add_epi32(*lanes2, _mm256_madd_epi16(p2, o->sc));
    }
}

/* IQ1_S's shift term of a token's super-block: each 32 elements' (2s + 1)
   times the shift's sign times their activations' sum. */
INL int iq1s_shift(const int dsc[8], const block_q8_K *x)
{
    int dsum = 0;
    for (int ib = 0; ib < 8; ib++) dsum += dsc[ib] * (x->bsums[2 * ib] + x->bsums[2 * ib + 1]);
    return dsum;
}

/* A super-block's integer sums into one token's accumulators, d = d_w * dx
   (the oracle's order: one fma per lane, IQ1's shift sums beside). */
INL void accumulate(int type, float d, __m256i lanes, __m256i lanes2, const int dsc[8], const block_q8_K *x,
                    __m256 *acc, __m256 *acc2, float *accd)
{
    *acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(lanes), *acc);
    if (type == EMBER_IQ1_M) *acc2 = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(lanes2), *acc2);
    if (type == EMBER_IQ1_S) *accd = fmaf(d, (float)iq1s_shift(dsc, x), *accd);
}

INL float finish(int type, float c, __m256 acc, __m256 acc2, float accd)
{
    float a[8], a2[8];
    _mm256_storeu_ps(a, acc);
    _mm256_storeu_ps(a2, acc2);
    return type == EMBER_IQ1_S   ? fmaf(0.125f, accd, ember_sum8(a))
           : type == EMBER_IQ1_M ? fmaf(0.125f, ember_sum8(a2), ember_sum8(a))
                                 : c * ember_sum8(a);
}

#define TOK 8

INL void matmul_avx2(int type, EMBER_KQ_MATMUL_ARGS)
{
    iq_ctx cx;
    iq_ctx_init(type, k, row_bytes, &cx);
    const int nb = cx.nb;
    const size_t bb = cx.bb;
    const float c = cx.c;
    uintptr_t pf = ember_kq_prefetch_start(w, row_bytes, r0);
    for (int r = r0; r < r1; r++) {
        const uint8_t *row = (const uint8_t *)w + (size_t)r * row_bytes;
        if (nt == 1) {
            /* decode: each sub-block decoded and used at once */
            const block_q8_K *x = (const block_q8_K *)xq;
            __m256 acc = _mm256_setzero_ps(), acc2 = _mm256_setzero_ps();
            float accd = 0;
            for (int i = 0; i < nb; i++, x++) {
                const uint8_t *blk = row + (size_t)i * bb;
                ember_kq_prefetch_to(&pf, (uintptr_t)blk + bb + PF_KQ);
                /* even and odd sub-blocks in their own sums: two chains */
                __m256i lanes = _mm256_setzero_si256(), lanes2 = _mm256_setzero_si256();
                __m256i lanes_o = _mm256_setzero_si256(), lanes2_o = _mm256_setzero_si256();
                int dsc[8];
                for (int ib = 0; ib < 8; ib += 2) {
                    iq_sub o, o1;
                    sub_decode(type, blk, ib, &cx, &o);
                    sub_decode(type, blk, ib + 1, &cx, &o1);
                    sub_dot(type, &o, x->qs + 32 * ib, &lanes, &lanes2);
                    sub_dot(type, &o1, x->qs + 32 * ib + 32, &lanes_o, &lanes2_o);
                    dsc[ib] = o.dsc, dsc[ib + 1] = o1.dsc;
                }
                lanes = _mm256_add_epi32(lanes, lanes_o);
                lanes2 = _mm256_add_epi32(lanes2, lanes2_o);
                accumulate(type, block_d(type, blk) * x->d, lanes, lanes2, dsc, x, &acc, &acc2, &accd);
            }
            y[r] = finish(type, c, acc, acc2, accd);
            continue;
        }
        /* prefill: each super-block decoded once for up to TOK tokens */
        for (int t0 = 0; t0 < nt; t0 += TOK) {
            int tn = nt - t0 < TOK ? nt - t0 : TOK;
            __m256 acc[TOK], acc2[TOK];
            float accd[TOK];
            for (int t = 0; t < tn; t++) acc[t] = acc2[t] = _mm256_setzero_ps(), accd[t] = 0;
            for (int i = 0; i < nb; i++) {
                const uint8_t *blk = row + (size_t)i * bb;
                iq_sub o[8];
                int dsc[8];
                for (int ib = 0; ib < 8; ib++) sub_decode(type, blk, ib, &cx, &o[ib]), dsc[ib] = o[ib].dsc;
                const float dw = block_d(type, blk);
                for (int t = 0; t < tn; t++) {
                    const block_q8_K *x =
                        (const block_q8_K *)(const void *)((const uint8_t *)xq + (size_t)(t0 + t) * xq_stride) + i;
                    __m256i lanes = _mm256_setzero_si256(), lanes2 = _mm256_setzero_si256();
                    for (int ib = 0; ib < 8; ib++) sub_dot(type, &o[ib], x->qs + 32 * ib, &lanes, &lanes2);
                    accumulate(type, dw * x->d, lanes, lanes2, dsc, x, &acc[t], &acc2[t], &accd[t]);
                }
            }
            for (int t = 0; t < tn; t++) y[(size_t)(t0 + t) * y_stride + (size_t)r] = finish(type, c, acc[t], acc2[t], accd[t]);
        }
    }
}

#define AVX2_MATMUL(name, type) \
    static T void name(EMBER_KQ_MATMUL_ARGS) { matmul_avx2(type, w, row_bytes, k, r0, r1, xq, xq_stride, nt, y, y_stride); }
AVX2_MATMUL(iq2_xxs_avx2, EMBER_IQ2_XXS)
AVX2_MATMUL(iq2_xs_avx2, EMBER_IQ2_XS)
AVX2_MATMUL(iq2_s_avx2, EMBER_IQ2_S)
AVX2_MATMUL(iq3_xxs_avx2, EMBER_IQ3_XXS)
AVX2_MATMUL(iq3_s_avx2, EMBER_IQ3_S)
AVX2_MATMUL(iq1_s_avx2, EMBER_IQ1_S)
AVX2_MATMUL(iq1_m_avx2, EMBER_IQ1_M)

/* ---- AVX-512 prefill -----------------------------------------------------
 * Two sub-blocks a zmm.  AVX-512 has no vpsignb: the minus signs become a
 * mask that negates those activations (vpsubb from zero under the mask),
 * then vpmaddubsw and vpdpwssd by the scale words.  The two halves' int32
 * lanes add into the reference's 8 (exact integers: the order is free).
 * Decode (one token) has a walk of its own, below. */
#define T5 EMBER_TARGET_AVX512
#define INL5 static inline __attribute__((always_inline)) T5

typedef struct {
    __m512i mag, sc;
    __mmask64 neg, dneg;
} iq_pair;

INL5 __m512i join(__m256i lo, __m256i hi) { return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1); }

/* The two sub-blocks' int32 lanes added into the reference's 8. */
INL5 __m256i fold8(__m512i v) { return _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1)); }

/* Sub-blocks 2q and 2q+1 of a super-block as one zmm, without a scalar
   walk: their grid indices assembled in a register and the points
   gathered in one instruction (IQ2_S: 8 of 8 bytes; IQ3_S: 16 of 4), the
   scale words permuted from the nibbles, the 64 sign bits read as the
   mask (the two sub-blocks' sign bytes lie together) */
INL5 __m512i pair_decode(int type, const uint8_t *blk, int q, const int8_t (*P)[8], __m512i *sc, __mmask64 *neg)
{
    if (type == EMBER_IQ2_S) {
        const block_iq2_s *b = (const block_iq2_s *)(const void *)blk;
        const __m256i lo = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(b->qs + 8 * q)));
        const unsigned h = b->qh[2 * q] | (unsigned)b->qh[2 * q + 1] << 8;
        const __m256i hi = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32((int)h), _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14)),
                                            _mm256_set1_epi32(3));
        const __m256i idx = _mm256_or_si256(lo, _mm256_slli_epi32(hi, 8));
        const unsigned s = b->scales[2 * q] | (unsigned)b->scales[2 * q + 1] << 8;
        const __m128i w4 = _mm_setr_epi16((short)(2 * (s & 15) + 1), (short)(2 * (s >> 4 & 15) + 1),
                                          (short)(2 * (s >> 8 & 15) + 1), (short)(2 * (s >> 12) + 1), 0, 0, 0, 0);
        *sc = _mm512_permutexvar_epi16(_mm512_set_epi16(3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1,
                                                        1, 1, 0, 0, 0, 0, 0, 0, 0, 0),
                                       _mm512_castsi128_si512(w4));
        *neg = (__mmask64)ember_rd64(b->qs + QK_K / 8 + 8 * q);
        return _mm512_i32gather_epi64(idx, (const void *)P, 8);
    }
    const block_iq3_s *b = (const block_iq3_s *)(const void *)blk;
    const __m512i lo = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(b->qs + 16 * q)));
    const unsigned h = b->qh[2 * q] | (unsigned)b->qh[2 * q + 1] << 8;
    const __m512i hi = _mm512_and_si512(_mm512_srlv_epi32(_mm512_set1_epi32((int)h),
                                                          _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)),
                                        _mm512_set1_epi32(1));
    const __m512i idx = _mm512_or_si512(lo, _mm512_slli_epi32(hi, 8));
    const unsigned s = b->scales[q];
    *sc = _mm512_mask_blend_epi16((__mmask32)0xFFFF0000u, _mm512_set1_epi16((short)(2 * (s & 15) + 1)),
                                  _mm512_set1_epi16((short)(2 * (s >> 4) + 1)));
    *neg = (__mmask64)ember_rd64(b->signs + 8 * q);
    return _mm512_i32gather_epi32(idx, (const void *)P, 8);
}

#define TOK5 16

INL5 void matmul_avx512(int type, EMBER_KQ_MATMUL_ARGS)
{
    iq_ctx cx;
    iq_ctx_init(type, k, row_bytes, &cx);
    const int nb = cx.nb;
    const size_t bb = cx.bb;
    const float c = cx.c;
    const __m512i zero = _mm512_setzero_si512(), ones = _mm512_set1_epi8(1);
    for (int r = r0; r < r1; r++) {
        const uint8_t *row = (const uint8_t *)w + (size_t)r * row_bytes;
        for (int t0 = 0; t0 < nt; t0 += TOK5) {
            int tn = nt - t0 < TOK5 ? nt - t0 : TOK5;
            __m256 acc[TOK5], acc2[TOK5];
            float accd[TOK5];
            for (int t = 0; t < tn; t++) acc[t] = acc2[t] = _mm256_setzero_ps(), accd[t] = 0;
            for (int i = 0; i < nb; i++) {
                const uint8_t *blk = row + (size_t)i * bb;
                iq_pair pr[4];
                int dsc[8];
                for (int q = 0; q < 4; q++) {
                    if (type == EMBER_IQ2_S || type == EMBER_IQ3_S) {   /* gathered (pair_decode) */
                        pr[q].mag = pair_decode(type, blk, q, cx.P, &pr[q].sc, &pr[q].neg);
                        dsc[2 * q] = dsc[2 * q + 1] = 0;
                        continue;
                    }
                    iq_sub a, b;
                    sub_decode(type, blk, 2 * q, &cx, &a);
                    sub_decode(type, blk, 2 * q + 1, &cx, &b);
                    pr[q].mag = join(a.mag, b.mag);
                    pr[q].sc = join(a.sc, b.sc);
                    pr[q].neg = _mm512_movepi8_mask(join(a.sgn, b.sgn));
                    if (type == EMBER_IQ1_M) pr[q].dneg = _mm512_movepi8_mask(join(a.dl, b.dl));
                    dsc[2 * q] = a.dsc, dsc[2 * q + 1] = b.dsc;
                }
                const float dw = block_d(type, blk);
                for (int t = 0; t < tn; t++) {
                    const block_q8_K *x =
                        (const block_q8_K *)(const void *)((const uint8_t *)xq + (size_t)(t0 + t) * xq_stride) + i;
                    __m512i lanes = _mm512_setzero_si512(), lanes2 = _mm512_setzero_si512();
                    for (int q = 0; q < 4; q++) {
                        __m512i xv = _mm512_loadu_si512((const void *)(x->qs + 64 * q));
                        __m512i p = _mm512_maddubs_epi16(pr[q].mag, _mm512_mask_sub_epi8(xv, pr[q].neg, zero, xv));
                        lanes = _mm512_dpwssd_epi32(lanes, p, pr[q].sc);
                        if (type == EMBER_IQ1_M) {
                            __m512i p2 = _mm512_maddubs_epi16(ones, _mm512_mask_sub_epi8(xv, pr[q].dneg, zero, xv));
                            lanes2 = _mm512_dpwssd_epi32(lanes2, p2, pr[q].sc);
                        }
                    }
                    accumulate(type, dw * x->d, fold8(lanes), fold8(lanes2), dsc, x, &acc[t], &acc2[t], &accd[t]);
                }
            }
            for (int t = 0; t < tn; t++) y[(size_t)(t0 + t) * y_stride + (size_t)r] = finish(type, c, acc[t], acc2[t], accd[t]);
        }
    }
}

/* ---- AVX-512 prefill by vpdpbusd --------------------------------------
 * For the types without IQ1's extra sums.  The signs go onto the weights
 * once per super-block and block of tokens (w = +-magnitude, -62..62), and
 * the activations enter vpdpbusd unsigned, x + 128 (made once per block of
 * tokens, iq_xu), so each 4-element lane of a token is sum w (x + 128) =
 * sum w x + 128 * sum w: its accumulator starts from -128 * (the 4
 * weights' sum), made with the weights.  Then per 64 elements and token two
 * instructions, not three (the old path negates the activations per token
 * and row): vpdpbusd, and vpdpwssd of the exact sum w x (|.| <= 4 * 62 *
 * 128 < 2^15, so its low word is itself and its high word its sign) by the
 * scale word in the low half of each dword.  Two tokens' 16 lanes fold
 * into one register, so the convert and the fma serve two tokens.  A block
 * of tokens' activations (16 x k bytes) stays in L1/L2 while every row of
 * the call walks them; the rows' blocks are read once a block of tokens.
 * The integer lanes are exact, and each token's float steps are the
 * reference's in block order: bit for bit the old path (test_iq). */
#define IQ_XU_BYTES (256 * 1024)

static _Thread_local uint8_t iq_xu[IQ_XU_BYTES] __attribute__((aligned(64)));
static _Thread_local float iq_dx2[IQ_XU_BYTES / 32] __attribute__((aligned(64)));

/* A super-block's pairs q = 0..3 as signed weights, their corrections
   (-128 * each 4 weights' sum) and scale dwords (2s + 1 in the low word,
   0 in the high) */
INL5 void vnni_decode(int type, const uint8_t *blk, const iq_ctx *cx, __m512i w[4], __m512i corr[4], __m512i sc[4])
{
    const __m512i ones = _mm512_set1_epi8(1), lo16 = _mm512_set1_epi32(0xffff), zero = _mm512_setzero_si512();
    for (int q = 0; q < 4; q++) {
        __m512i s;
        if (type == EMBER_IQ2_S || type == EMBER_IQ3_S) {
            __mmask64 neg;
            const __m512i mag = pair_decode(type, blk, q, cx->P, &s, &neg);
            w[q] = _mm512_mask_sub_epi8(mag, neg, zero, mag);
        } else {
            iq_sub a, b;
            sub_decode(type, blk, 2 * q, cx, &a);
            sub_decode(type, blk, 2 * q + 1, cx, &b);
            w[q] = join(_mm256_sign_epi8(a.mag, a.sgn), _mm256_sign_epi8(b.mag, b.sgn));
            s = join(a.sc, b.sc);
        }
        corr[q] = _mm512_slli_epi32(_mm512_sub_epi32(zero, _mm512_dpbusd_epi32(zero, ones, w[q])), 7);
        sc[q] = _mm512_and_si512(s, lo16);
    }
}

/* One token's 16 int32 lanes of a super-block (pairs 0-3) */
INL5 __m512i vnni_lanes(const __m512i w[4], const __m512i corr[4], const __m512i sc[4], const uint8_t *xu)
{
    __m512i l = _mm512_setzero_si512();
    _Pragma("GCC unroll 4") for (int q = 0; q < 4; q++) {
        const __m512i dp = _mm512_dpbusd_epi32(corr[q], _mm512_load_si512((const void *)(xu + 64 * q)), w[q]);
        l = _mm512_dpwssd_epi32(l, dp, sc[q]);
    }
    return l;
}

/* Rows r0..r1 against a block of tn tokens (np pairs) in iq_xu / iq_dx2 */
INL5 void vnni_rows(int type, const iq_ctx *cx, const void *w, size_t row_bytes, int r0, int r1, const int np, int tn,
                    int t0, float *y, size_t y_stride)
{
    const int nb = cx->nb;
    const size_t bb = cx->bb, k = (size_t)nb * QK_K;
    for (int r = r0; r < r1; r++) {
        const uint8_t *row = (const uint8_t *)w + (size_t)r * row_bytes;
        __m512 acc[TOK5 / 2];
        _Pragma("GCC unroll 8") for (int p = 0; p < TOK5 / 2; p++) acc[p] = _mm512_setzero_ps();
        for (int i = 0; i < nb; i++) {
            const uint8_t *blk = row + (size_t)i * bb;
            __m512i wq[4], corr[4], sc[4];
            vnni_decode(type, blk, cx, wq, corr, sc);
            const __m512 dw = _mm512_set1_ps(block_d(type, blk));
            _Pragma("GCC unroll 8") for (int p = 0; p < np; p++) {
                const uint8_t *ua = iq_xu + (size_t)(2 * p) * k + 256 * (size_t)i;
                const __m512i la = vnni_lanes(wq, corr, sc, ua), lb = vnni_lanes(wq, corr, sc, ua + k);
                /* [a's lanes 0-7 | b's] + [a's 8-15 | b's]: each token's 8 */
                const __m512i l = _mm512_add_epi32(_mm512_shuffle_i64x2(la, lb, _MM_SHUFFLE(1, 0, 1, 0)),
                                                   _mm512_shuffle_i64x2(la, lb, _MM_SHUFFLE(3, 2, 3, 2)));
                const __m512 d = _mm512_mul_ps(dw, _mm512_load_ps(iq_dx2 + ((size_t)p * (size_t)nb + (size_t)i) * 16));
                acc[p] = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(l), acc[p]);
            }
        }
        for (int t = 0; t < tn; t++) {
            float a[16];
            _mm512_storeu_ps(a, acc[t / 2]);
            y[(size_t)(t0 + t) * y_stride + (size_t)r] = cx->c * ember_sum8(a + 8 * (t % 2));
        }
    }
}

INL5 void matmul_vnni(int type, EMBER_KQ_MATMUL_ARGS)
{
    iq_ctx cx;
    iq_ctx_init(type, k, row_bytes, &cx);
    const int nb = cx.nb;
    /* tokens a block: 16, or as many (even) as iq_xu holds */
    int tb = (int)(IQ_XU_BYTES / k) & ~1;
    if (tb > TOK5) tb = TOK5;
    if (tb < 2) {   /* rows past 128K elements: the old path */
        matmul_avx512(type, w, row_bytes, k, r0, r1, xq, xq_stride, nt, y, y_stride);
        return;
    }
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    for (int t0 = 0; t0 < nt; t0 += tb) {
        const int tn = nt - t0 < tb ? nt - t0 : tb, np = (tn + 1) / 2;
        /* the block's activations + 128, and its pairs' two scales side by
           side (an odd count's last token twice) */
        for (int t = 0; t < 2 * np; t++) {
            const int ts = t < tn ? t : tn - 1;
            const block_q8_K *x = (const block_q8_K *)(const void *)((const uint8_t *)xq + (size_t)(t0 + ts) * xq_stride);
            uint8_t *u = iq_xu + (size_t)t * (size_t)k;
            for (int i = 0; i < nb; i++) {
                for (int q = 0; q < 4; q++)
                    _mm512_store_si512((void *)(u + 256 * i + 64 * q),
                                       _mm512_xor_si512(_mm512_loadu_si512((const void *)(x[i].qs + 64 * q)), flip));
                _mm256_store_ps(iq_dx2 + ((size_t)(t / 2) * (size_t)nb + (size_t)i) * 16 + 8 * (t % 2), _mm256_set1_ps(x[i].d));
            }
        }
        /* a whole block's 8 pairs with a constant count, so that their
           sums stay in registers */
        if (np == TOK5 / 2) vnni_rows(type, &cx, w, row_bytes, r0, r1, TOK5 / 2, tn, t0, y, y_stride);
        else vnni_rows(type, &cx, w, row_bytes, r0, r1, np, tn, t0, y, y_stride);
    }
}

/* ---- AVX-512 decode ------------------------------------------------------
 * One token, for the types whose blocks hold their sign bytes whole (IQ2_S,
 * IQ3_S): two sub-blocks a zmm by pair_decode (its gathers), the sign bytes
 * the mask itself, two rows at once (IQ2_M 1.2x in decode).  The 7-bit
 * sign fields (IQ2_XXS, IQ2_XS, IQ3_XXS) keep the AVX2 walk: their eighth
 * bit, the field's parity, computed in registers cost more than the table
 * (IQ2_XXS 0.88x), and a second gather for the table's bytes more still
 * (0.6x); IQ1's values carry their own signs. */

/* One token's products with sub-blocks 2q and 2q+1 added into *l */
INL5 void pair_dot(int type, const uint8_t *blk, int q, const int8_t (*P)[8], __m512i xv, __m512i *l)
{
    __m512i sc;
    __mmask64 neg;
    const __m512i mag = pair_decode(type, blk, q, P, &sc, &neg);
    const __m512i p = _mm512_maddubs_epi16(mag, _mm512_mask_sub_epi8(xv, neg, _mm512_setzero_si512(), xv));
    *l = _mm512_dpwssd_epi32(*l, p, sc);
}

/* acc += the super-block's scale x the token's times its even and odd
   pairs' lanes (l[0], l[1]) */
INL5 __m256 block_acc(int type, const uint8_t *blk, const block_q8_K *x, const __m512i l[2], __m256 acc)
{
    const __m256i lanes = fold8(_mm512_add_epi32(l[0], l[1]));
    return _mm256_fmadd_ps(_mm256_set1_ps(block_d(type, blk) * x->d), _mm256_cvtepi32_ps(lanes), acc);
}

INL5 void decode_avx512(int type, EMBER_KQ_MATMUL_ARGS)
{
    (void)xq_stride, (void)nt, (void)y_stride;
    iq_ctx cx;
    iq_ctx_init(type, k, row_bytes, &cx);
    const int nb = cx.nb;
    const size_t bb = cx.bb;
    const __m512i zero = _mm512_setzero_si512();
    uintptr_t pf = ember_kq_prefetch_start(w, row_bytes, r0);
    /* two rows at once: their gathers in flight together, the
       activations loaded once; each row's sums in its own order (even and
       odd pairs in their own chains) */
    int r = r0;
    for (; r + 1 < r1; r += 2) {
        const uint8_t *row = (const uint8_t *)w + (size_t)r * row_bytes;
        const block_q8_K *x = (const block_q8_K *)xq;
        __m256 acc = _mm256_setzero_ps(), acc2 = _mm256_setzero_ps();
        for (int i = 0; i < nb; i++, x++) {
            const uint8_t *blk = row + (size_t)i * bb, *blk2 = blk + row_bytes;
            ember_kq_prefetch_to(&pf, (uintptr_t)blk2 + bb + PF_KQ);
            __m512i l[2] = {zero, zero}, m[2] = {zero, zero};
#pragma GCC unroll 4
            for (int q = 0; q < 4; q++) {
                const __m512i xv = _mm512_loadu_si512((const void *)(x->qs + 64 * q));
                pair_dot(type, blk, q, cx.P, xv, &l[q & 1]);
                pair_dot(type, blk2, q, cx.P, xv, &m[q & 1]);
            }
            acc = block_acc(type, blk, x, l, acc);
            acc2 = block_acc(type, blk2, x, m, acc2);
        }
        y[r] = finish(type, cx.c, acc, acc, 0);
        y[r + 1] = finish(type, cx.c, acc2, acc2, 0);
    }
    for (; r < r1; r++) {
        const uint8_t *row = (const uint8_t *)w + (size_t)r * row_bytes;
        const block_q8_K *x = (const block_q8_K *)xq;
        __m256 acc = _mm256_setzero_ps();
        for (int i = 0; i < nb; i++, x++) {
            const uint8_t *blk = row + (size_t)i * bb;
            ember_kq_prefetch_to(&pf, (uintptr_t)blk + bb + PF_KQ);
            __m512i l[2] = {zero, zero};
#pragma GCC unroll 4
            for (int q = 0; q < 4; q++)
                pair_dot(type, blk, q, cx.P, _mm512_loadu_si512((const void *)(x->qs + 64 * q)), &l[q & 1]);
            acc = block_acc(type, blk, x, l, acc);
        }
        y[r] = finish(type, cx.c, acc, acc, 0);
    }
}

#define AVX512_MATMUL(name, type, dec)                                                                   \
    static T5 void name(EMBER_KQ_MATMUL_ARGS)                                                            \
    {                                                                                                    \
        if (nt == 1) dec(w, row_bytes, k, r0, r1, xq, xq_stride, nt, y, y_stride);                       \
        else if (type == EMBER_IQ1_S || type == EMBER_IQ1_M)                                              \
            matmul_avx512(type, w, row_bytes, k, r0, r1, xq, xq_stride, nt, y, y_stride);                \
        else matmul_vnni(type, w, row_bytes, k, r0, r1, xq, xq_stride, nt, y, y_stride);                 \
    }
#define DEC512(name, type) \
    static T5 void name(EMBER_KQ_MATMUL_ARGS) { decode_avx512(type, w, row_bytes, k, r0, r1, xq, xq_stride, nt, y, y_stride); }
DEC512(iq2_s_dec512, EMBER_IQ2_S)
DEC512(iq3_s_dec512, EMBER_IQ3_S)
AVX512_MATMUL(iq2_xxs_avx512, EMBER_IQ2_XXS, iq2_xxs_avx2)
AVX512_MATMUL(iq2_xs_avx512, EMBER_IQ2_XS, iq2_xs_avx2)
AVX512_MATMUL(iq2_s_avx512, EMBER_IQ2_S, iq2_s_dec512)
AVX512_MATMUL(iq3_xxs_avx512, EMBER_IQ3_XXS, iq3_xxs_avx2)
AVX512_MATMUL(iq3_s_avx512, EMBER_IQ3_S, iq3_s_dec512)
AVX512_MATMUL(iq1_s_avx512, EMBER_IQ1_S, iq1_s_avx2)
AVX512_MATMUL(iq1_m_avx512, EMBER_IQ1_M, iq1_m_avx2)
#endif

#define KQ(wt, isa, nm, fn) {nm, isa, wt, EMBER_Q8_K, ember_kq_quantize_q8_K, fn, NULL}
#define KQ512(wt, nm, fn) {nm, EMBER_ISA_AVX512, wt, EMBER_Q8_K, ember_kq_quantize_q8_K_avx512, fn, NULL}

static const ember_kernel kernels[] = {
    KQ(EMBER_IQ2_XXS, EMBER_ISA_SCALAR, "iq2_xxs_scalar", iq2_xxs_scalar),
    KQ(EMBER_IQ2_XS, EMBER_ISA_SCALAR, "iq2_xs_scalar", iq2_xs_scalar),
    KQ(EMBER_IQ2_S, EMBER_ISA_SCALAR, "iq2_s_scalar", iq2_s_scalar),
    KQ(EMBER_IQ3_XXS, EMBER_ISA_SCALAR, "iq3_xxs_scalar", iq3_xxs_scalar),
    KQ(EMBER_IQ3_S, EMBER_ISA_SCALAR, "iq3_s_scalar", iq3_s_scalar),
    KQ(EMBER_IQ1_S, EMBER_ISA_SCALAR, "iq1_s_scalar", iq1_s_scalar),
    KQ(EMBER_IQ1_M, EMBER_ISA_SCALAR, "iq1_m_scalar", iq1_m_scalar),
#ifdef EMBER_SIMD
    KQ(EMBER_IQ2_XXS, EMBER_ISA_AVX2, "iq2_xxs_avx2", iq2_xxs_avx2),
    KQ(EMBER_IQ2_XS, EMBER_ISA_AVX2, "iq2_xs_avx2", iq2_xs_avx2),
    KQ(EMBER_IQ2_S, EMBER_ISA_AVX2, "iq2_s_avx2", iq2_s_avx2),
    KQ(EMBER_IQ3_XXS, EMBER_ISA_AVX2, "iq3_xxs_avx2", iq3_xxs_avx2),
    KQ(EMBER_IQ3_S, EMBER_ISA_AVX2, "iq3_s_avx2", iq3_s_avx2),
    KQ(EMBER_IQ1_S, EMBER_ISA_AVX2, "iq1_s_avx2", iq1_s_avx2),
    KQ(EMBER_IQ1_M, EMBER_ISA_AVX2, "iq1_m_avx2", iq1_m_avx2),
    KQ512(EMBER_IQ2_XXS, "iq2_xxs_avx512vnni", iq2_xxs_avx512),
    KQ512(EMBER_IQ2_XS, "iq2_xs_avx512vnni", iq2_xs_avx512),
    KQ512(EMBER_IQ2_S, "iq2_s_avx512vnni", iq2_s_avx512),
    KQ512(EMBER_IQ3_XXS, "iq3_xxs_avx512vnni", iq3_xxs_avx512),
    KQ512(EMBER_IQ3_S, "iq3_s_avx512vnni", iq3_s_avx512),
    KQ512(EMBER_IQ1_S, "iq1_s_avx512vnni", iq1_s_avx512),
    KQ512(EMBER_IQ1_M, "iq1_m_avx512vnni", iq1_m_avx512),
#endif
};

const ember_kernel *ember_kernels_iq(int wtype, ember_isa isa) { return EMBER_KERNEL_IN(kernels, wtype, isa); }
