/* AVX-512 (BW/VL/VNNI) K-quant kernels.  Same order of float operations as
   the scalar oracles (kernels_kquant_impl.h), so bit-identical to them.
 *
 * A 64-element chunk of a super-block fills one zmm of weights: u8 quants
 * times s8 activations through vpmaddubsw (pairs, no saturation possible:
 * 2 * 63 * 128 < 32767), then vpdpwssd multiplies by the per-sub-block
 * scale words and accumulates in int32.  Four dot products run side by side
 * so their horizontal sums and float products share instructions: decode
 * (nt == 1) takes 4 consecutive super-blocks of one row (weights stream
 * linearly: on this class of machine, interleaving several rows' streams
 * cut single-thread read bandwidth by 3x), then folds them into the row's
 * accumulator in block order; prefill takes 1 row x 4 tokens, twice per
 * decoded weight super-block (8 tokens). */
#include "config.h"

#ifdef EMBER_SIMD
#include <math.h>
#include <string.h>

#include "dtype.h"
#include "kernels_kquant_impl.h"
#include "simd.h"

#define T EMBER_TARGET_AVX512
#define INL static inline __attribute__((always_inline)) T
#define ROW_BLOCK 16

/* Sums of a, b, c, d as lanes 0..3. */
INL __m128i hsum4_512(__m512i a, __m512i b, __m512i c, __m512i d)
{
    __m512i ab = _mm512_add_epi32(_mm512_unpacklo_epi32(a, b), _mm512_unpackhi_epi32(a, b));
    __m512i cd = _mm512_add_epi32(_mm512_unpacklo_epi32(c, d), _mm512_unpackhi_epi32(c, d));
    __m512i s = _mm512_add_epi32(_mm512_unpacklo_epi64(ab, cd), _mm512_unpackhi_epi64(ab, cd));
    __m256i h = _mm256_add_epi32(_mm512_castsi512_si256(s), _mm512_extracti64x4_epi64(s, 1));
    return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

static const block_q8_K *act(const void *xq, size_t stride, int t)
{
    return (const block_q8_K *)(const void *)((const uint8_t *)xq + (size_t)t * stride);
}

/* The in-order folds of up to 4 consecutive blocks (lanes 0..cnt-1). */
INL float fold_q45(float acc, __m128 p, __m128 isum, __m128 q, __m128 msum, int cnt)
{
    float pf[4], qf[4], inf[4], mf[4];
    _mm_storeu_ps(pf, p);
    _mm_storeu_ps(qf, q);
    _mm_storeu_ps(inf, isum);
    _mm_storeu_ps(mf, msum);
    for (int i = 0; i < cnt; i++) {
        acc = fmaf(pf[i], inf[i], acc);
        acc = fmaf(-qf[i], mf[i], acc);
    }
    return acc;
}

INL float fold_q6(float acc, __m128 p, __m128 isum, int cnt)
{
    float pf[4], inf[4];
    _mm_storeu_ps(pf, p);
    _mm_storeu_ps(inf, isum);
    for (int i = 0; i < cnt; i++) acc = fmaf(pf[i], inf[i], acc);
    return acc;
}

/* Lanes 0..cnt-1 are row r of tokens t..t+cnt-1. */
static void store_tokens(float *y, size_t y_stride, int t, int r, int cnt, __m128 v)
{
    float o[4];
    _mm_storeu_ps(o, v);
    for (int i = 0; i < cnt; i++) y[(size_t)(t + i) * y_stride + (size_t)r] = o[i];
}

/* ---- Q4_K / Q5_K -------------------------------------------------------- */

typedef struct {
    __m512i q[4];   /* chunk c: elements 64c..64c+63 as u8 */
    __m512i s[4];   /* chunk c: words 0..15 = scale 2c, 16..31 = scale 2c+1 */
    __m128i m;      /* the 8 mins as words */
} q45_dec;

typedef struct {
    __m512i idx[4], cnt, low4, hb[4], sixteen, mdup, lane0;
} q45_const;

INL void q45_consts(q45_const *k)
{
    #pragma GCC unroll 8
    for (int c = 0; c < 4; c++) {
        k->idx[c] = _mm512_inserti64x4(_mm512_set1_epi16((short)(2 * c)),
                                       _mm256_set1_epi16((short)(2 * c + 1)), 1);
        k->hb[c] = _mm512_inserti64x4(_mm512_set1_epi8((char)(1 << (2 * c))),
                                      _mm256_set1_epi8((char)(1 << (2 * c + 1))), 1);
    }
    k->cnt = _mm512_set_epi64(4, 4, 4, 4, 0, 0, 0, 0);
    k->low4 = _mm512_set1_epi8(0x0f);
    k->sixteen = _mm512_set1_epi8(16);
    short mi[32];
    for (int j = 0; j < 32; j++) mi[j] = (short)((j % 16) / 2);
    k->mdup = _mm512_loadu_si512((const void *)mi);
    k->lane0 = _mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
}

/* Scales and mins sit at byte 4 of both Q4_K and Q5_K blocks; the 6-bit
   values of sub-blocks 4..7 borrow their top bits from bytes 0..7. */
INL void q45_scales(const uint8_t *s12, const q45_const *k, q45_dec *o)
{
    uint32_t w0, w1, w2;
    memcpy(&w0, s12, 4);
    memcpy(&w1, s12 + 4, 4);
    memcpy(&w2, s12 + 8, 4);
    uint64_t sc = (w0 & 0x3f3f3f3fu) |
                  (uint64_t)((w2 & 0x0f0f0f0fu) | ((w0 >> 6) & 0x03030303u) << 4) << 32;
    uint64_t mn = (w1 & 0x3f3f3f3fu) |
                  (uint64_t)(((w2 >> 4) & 0x0f0f0f0fu) | ((w1 >> 6) & 0x03030303u) << 4) << 32;
    __m512i scw = _mm512_zextsi128_si512(_mm_cvtepu8_epi16(_mm_cvtsi64_si128((long long)sc)));
    o->m = _mm_cvtepu8_epi16(_mm_cvtsi64_si128((long long)mn));
    #pragma GCC unroll 8
    for (int c = 0; c < 4; c++) o->s[c] = _mm512_permutexvar_epi16(k->idx[c], scw);
}

/* qs chunk c (32 bytes) holds elements 64c..64c+31 in its low nibbles and
   64c+32..64c+63 in its high ones: broadcast it and shift the upper half. */
INL __m512i q4_chunk(const uint8_t *qs, int c, const q45_const *k)
{
    __m512i raw = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(const void *)(qs + 32 * c)));
    return _mm512_and_si512(_mm512_srlv_epi64(raw, k->cnt), k->low4);
}

INL void q45_quants(const uint8_t *blk, int five, const q45_const *k, q45_dec *o)
{
    if (five) {
        const block_q5_K *b = (const block_q5_K *)(const void *)blk;
        __m512i qh = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(const void *)b->qh));
        #pragma GCC unroll 8
        for (int c = 0; c < 4; c++) {
            __m512i q = q4_chunk(b->qs, c, k);
            __mmask64 m = _mm512_test_epi8_mask(qh, k->hb[c]);
            o->q[c] = _mm512_mask_add_epi8(q, m, q, k->sixteen);
        }
    } else {
        const block_q4_K *b = (const block_q4_K *)(const void *)blk;
        #pragma GCC unroll 8
        for (int c = 0; c < 4; c++) o->q[c] = q4_chunk(b->qs, c, k);
    }
}

INL void q45_decode(const uint8_t *blk, int five, const q45_const *k, q45_dec *o)
{
    q45_scales(blk + 4, k, o);
    q45_quants(blk, five, k, o);
}

/* Decode's per-block scalar work, done for 4 blocks in one zmm: each
   128-bit lane gets a block's bytes 0..15 (d, dmin, scales), laid out as
   dwords [d|dmin, w0, w1, w2], and becomes bytes [sc0..7, m0..7]. */
typedef struct {
    __m512i sidx[2][4];   /* scale words of chunk c for an even/odd block */
    __m512i midx;         /* each min twice, for both blocks of a zmm */
    __m512i pick_cnt, pick_low, pick_high, lane0;
} q45_meta_const;

INL void q45_meta_consts(q45_meta_const *k)
{
    #pragma GCC unroll 8
    for (int p = 0; p < 2; p++)
        #pragma GCC unroll 8
        for (int c = 0; c < 4; c++)
            k->sidx[p][c] = _mm512_inserti64x4(_mm512_set1_epi16((short)(16 * p + 2 * c)),
                                               _mm256_set1_epi16((short)(16 * p + 2 * c + 1)), 1);
    short mi[32];
    for (int j = 0; j < 32; j++) mi[j] = (short)(16 * (j / 16) + 8 + (j % 16) / 2);
    k->midx = _mm512_loadu_si512((const void *)mi);
    k->pick_cnt = _mm512_setr4_epi32(0, 0, 0, 4);
    k->pick_low = _mm512_setr4_epi32(0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f);
    k->pick_high = _mm512_setr4_epi32(0, 0x30303030, 0, 0x30303030);
    k->lane0 = _mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
}

typedef struct {
    __m512i w[2];   /* words: blocks 0,1 then 2,3; per block sc0..7, m0..7 */
    __m128 dw, dm;  /* the blocks' d and dmin */
} q45_meta;

INL void q45_meta4(const uint8_t *const blk[4], const q45_meta_const *k, q45_meta *o)
{
    __m512i v = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)(const void *)blk[0]));
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(const void *)blk[1]), 1);
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(const void *)blk[2]), 2);
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(const void *)blk[3]), 3);
    /* [w0, w2, w1, w2]: sc0..3 = w0 & 0x3f.., sc4..7 low = w2 & 0x0f..,
       m0..3 = w1 & 0x3f.., m4..7 low = (w2 >> 4) & 0x0f.. */
    __m512i lo = _mm512_and_si512(_mm512_srlv_epi32(_mm512_shuffle_epi32(v, 0xed), k->pick_cnt),
                                  k->pick_low);
    /* [., w0, ., w1]: the high two bits of sc4..7 / m4..7 are bits 6-7 of
       w0 / w1's bytes, moved to bits 4-5 */
    __m512i hi = _mm512_and_si512(_mm512_srli_epi32(_mm512_shuffle_epi32(v, 0xa5), 2), k->pick_high);
    __m512i r = _mm512_or_si512(lo, hi);
    o->w[0] = _mm512_cvtepu8_epi16(_mm512_castsi512_si256(r));
    o->w[1] = _mm512_cvtepu8_epi16(_mm512_extracti64x4_epi64(r, 1));
    const __m128i split = _mm_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15);
    __m128i dd = _mm512_castsi512_si128(_mm512_permutexvar_epi32(k->lane0, v));
    __m256 f = _mm256_cvtph_ps(_mm_shuffle_epi8(dd, split));
    o->dw = _mm256_castps256_ps128(f);
    o->dm = _mm256_extractf128_ps(f, 1);
}

/* v[0] holds 8 partial sums of item 0 then 8 of item 1, v[1] items 2, 3:
   returns the 4 totals. */
INL __m128i hsum_2x8(__m512i v0, __m512i v1, __m512i lane0)
{
    /* item i's lanes to 128-bit lane i, then sum within lanes */
    __m512i s = _mm512_add_epi32(_mm512_shuffle_i64x2(v0, v1, 0x88), _mm512_shuffle_i64x2(v0, v1, 0xdd));
    s = _mm512_add_epi32(s, _mm512_shuffle_epi32(s, 0x4e));
    s = _mm512_add_epi32(s, _mm512_shuffle_epi32(s, 0xb1));
    return _mm512_castsi512_si128(_mm512_permutexvar_epi32(lane0, s));
}

/* bsums of two activation blocks as 32 words. */
INL __m512i bsums2(const block_q8_K *a, const block_q8_K *b)
{
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(const void *)a->bsums)),
                              _mm256_loadu_si256((const __m256i *)(const void *)b->bsums), 1);
}

/* [msum0..3] for 4 blocks: mins (each twice) times the 16 bsums, summed. */
INL __m128i q45_msum4(const q45_meta *o, const block_q8_K *const x[4], const q45_meta_const *k)
{
    __m512i v0 = _mm512_madd_epi16(_mm512_permutexvar_epi16(k->midx, o->w[0]), bsums2(x[0], x[1]));
    __m512i v1 = _mm512_madd_epi16(_mm512_permutexvar_epi16(k->midx, o->w[1]), bsums2(x[2], x[3]));
    return hsum_2x8(v0, v1, k->lane0);
}

INL __m512i q45_dot(const q45_dec *o, const int8_t *xqs)
{
    __m512i acc = _mm512_setzero_si512();
    #pragma GCC unroll 8
    for (int c = 0; c < 4; c++) {
        __m512i p = _mm512_maddubs_epi16(o->q[c], _mm512_loadu_si512((const void *)(xqs + 64 * c)));
        acc = _mm512_dpwssd_epi32(acc, p, o->s[c]);
    }
    return acc;
}

/* One decoded block against 4 tokens: their in-order fold into acc. */
INL __m128 q45_tokens4(const q45_dec *o, __m512i md, __m128 dw, __m128 dm,
                       const block_q8_K *const x[4], int b, const q45_const *kc, __m128 acc)
{
    __m512i a[4];
    #pragma GCC unroll 8
    for (int i = 0; i < 4; i++) a[i] = q45_dot(o, x[i][b].qs);
    __m128i isum = hsum4_512(a[0], a[1], a[2], a[3]);
    __m128i msum = hsum_2x8(_mm512_madd_epi16(md, bsums2(&x[0][b], &x[1][b])),
                            _mm512_madd_epi16(md, bsums2(&x[2][b], &x[3][b])), kc->lane0);
    __m128 dx = _mm_setr_ps(x[0][b].d, x[1][b].d, x[2][b].d, x[3][b].d);
    acc = _mm_fmadd_ps(_mm_mul_ps(dw, dx), _mm_cvtepi32_ps(isum), acc);
    return _mm_fnmadd_ps(_mm_mul_ps(dm, dx), _mm_cvtepi32_ps(msum), acc);
}

INL void q45_matmul(int five, EMBER_KQ_MATMUL_ARGS)
{
    const size_t bb = five ? sizeof(block_q5_K) : sizeof(block_q4_K);
    const int nb = (int)(k / QK_K);
    q45_const kc;
    q45_consts(&kc);
    if (nt == 1) {
        const block_q8_K *x = act(xq, xq_stride, 0);
        q45_meta_const km;
        q45_meta_consts(&km);
        for (int r = r0; r < r1; r++) {
            const uint8_t *row = (const uint8_t *)w + (size_t)r * row_bytes;
            float acc = 0;
            for (int b0 = 0; b0 < nb; b0 += 4) {
                int cnt = nb - b0 < 4 ? nb - b0 : 4;
                const uint8_t *blk[4];
                const block_q8_K *xb[4];
                #pragma GCC unroll 8
                for (int i = 0; i < 4; i++) {
                    int b = b0 + (i < cnt ? i : cnt - 1);
                    blk[i] = row + (size_t)b * bb;
                    xb[i] = x + b;
                }
                q45_meta md;
                q45_meta4(blk, &km, &md);
                __m512i a[4];
                #pragma GCC unroll 8
                for (int i = 0; i < 4; i++) {
                    q45_dec o;
                    q45_quants(blk[i], five, &kc, &o);
                    #pragma GCC unroll 8
                    for (int c = 0; c < 4; c++)
                        o.s[c] = _mm512_permutexvar_epi16(km.sidx[i & 1][c], md.w[i >> 1]);
                    a[i] = q45_dot(&o, xb[i]->qs);
                }
                __m128i isum = hsum4_512(a[0], a[1], a[2], a[3]);
                __m128i msum = q45_msum4(&md, xb, &km);
                __m128 dx = _mm_setr_ps(xb[0]->d, xb[1]->d, xb[2]->d, xb[3]->d);
                acc = fold_q45(acc, _mm_mul_ps(md.dw, dx), _mm_cvtepi32_ps(isum),
                               _mm_mul_ps(md.dm, dx), _mm_cvtepi32_ps(msum), cnt);
            }
            y[r] = acc;
        }
        return;
    }
    /* Rows go in blocks whose weights stay in L2 while each group of up to
       8 tokens' activations is reused from L1 for all of them; each weight
       super-block is decoded once per 8 tokens. */
    for (int rb = r0; rb < r1; rb += ROW_BLOCK) {
        int re = r1 - rb < ROW_BLOCK ? r1 : rb + ROW_BLOCK;
        for (int t = 0; t < nt; t += 8) {
            int cnt = nt - t < 8 ? nt - t : 8, two = cnt > 4;
            const block_q8_K *x[8];
            #pragma GCC unroll 8
            for (int i = 0; i < 8; i++) x[i] = act(xq, xq_stride, t + (i < cnt ? i : cnt - 1));
            for (int r = rb; r < re; r++) {
                const uint8_t *row = (const uint8_t *)w + (size_t)r * row_bytes;
                __m128 acc0 = _mm_setzero_ps(), acc1 = _mm_setzero_ps();
                for (int b = 0; b < nb; b++) {
                    const uint8_t *blk = row + (size_t)b * bb;
                    q45_dec o;
                    q45_decode(blk, five, &kc, &o);
                    /* each min twice, in both halves, against 2 tokens' bsums */
                    __m512i md = _mm512_permutexvar_epi16(kc.mdup, _mm512_zextsi128_si512(o.m));
                    uint16_t dh[2];
                    memcpy(dh, blk, 4);
                    __m128 dd = _mm_cvtph_ps(_mm_cvtsi32_si128((int)(dh[0] | (uint32_t)dh[1] << 16)));
                    __m128 dw = _mm_shuffle_ps(dd, dd, 0x00), dm = _mm_shuffle_ps(dd, dd, 0x55);
                    acc0 = q45_tokens4(&o, md, dw, dm, x, b, &kc, acc0);
                    if (two) acc1 = q45_tokens4(&o, md, dw, dm, x + 4, b, &kc, acc1);
                }
                store_tokens(y, y_stride, t, r, two ? 4 : cnt, acc0);
                if (two) store_tokens(y, y_stride, t + 4, r, cnt - 4, acc1);
            }
        }
    }
}

T void ember_kq_q4_K_avx512(EMBER_KQ_MATMUL_ARGS)
{
    q45_matmul(0, w, row_bytes, k, r0, r1, xq, xq_stride, nt, y, y_stride);
}

T void ember_kq_q5_K_avx512(EMBER_KQ_MATMUL_ARGS)
{
    q45_matmul(1, w, row_bytes, k, r0, r1, xq, xq_stride, nt, y, y_stride);
}

/* ---- Q6_K ---------------------------------------------------------------- */

typedef struct {
    __m512i q[4];    /* chunk c: elements 64c..64c+63 as u8 in 0..63 */
    __m512i s[4];    /* chunk c: 128-bit lane i = scale of group 4c+i as words */
    __m256i sw;      /* the 16 scales as words, for the -32 * bsums term */
} q6_dec;

typedef struct {
    __m512i idx[4], shl, shr, low4, hi2;
} q6_const;

INL void q6_consts(q6_const *k)
{
    #pragma GCC unroll 8
    for (int c = 0; c < 4; c++)
        k->idx[c] = _mm512_inserti64x4(
            _mm512_castsi256_si512(_mm256_inserti128_si256(
                _mm256_castsi128_si256(_mm_set1_epi16((short)(4 * c))), _mm_set1_epi16((short)(4 * c + 1)), 1)),
            _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_set1_epi16((short)(4 * c + 2))),
                                    _mm_set1_epi16((short)(4 * c + 3)), 1),
            1);
    k->shl = _mm512_set_epi64(2, 2, 2, 2, 4, 4, 4, 4);
    k->shr = _mm512_set_epi64(2, 2, 2, 2, 0, 0, 0, 0);
    k->low4 = _mm512_set1_epi8(0x0f);
    k->hi2 = _mm512_set1_epi8(0x30);
}

/* Half n: ql[64n..64n+63] low nibbles are elements 128n..128n+63 and high
   nibbles 128n+64..128n+127; qh[32n..32n+31] gives each quarter two bits
   (bits 0-1, 2-3, 4-5, 6-7), moved to bits 4-5 by per-half shifts. */
INL void q6_decode(const block_q6_K *b, const q6_const *k, q6_dec *o)
{
    #pragma GCC unroll 8
    for (int n = 0; n < 2; n++) {
        __m512i ql = _mm512_loadu_si512((const void *)(b->ql + 64 * n));
        __m512i qh = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(const void *)(b->qh + 32 * n)));
        __m512i lo = _mm512_and_si512(ql, k->low4);
        __m512i hi = _mm512_and_si512(_mm512_srli_epi16(ql, 4), k->low4);
        /* 0xf8: A | (B & C) */
        o->q[2 * n] = _mm512_ternarylogic_epi32(lo, _mm512_sllv_epi64(qh, k->shl), k->hi2, 0xf8);
        o->q[2 * n + 1] = _mm512_ternarylogic_epi32(hi, _mm512_srlv_epi64(qh, k->shr), k->hi2, 0xf8);
    }
    o->sw = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)b->scales));
    __m512i sz = _mm512_zextsi256_si512(o->sw);
    #pragma GCC unroll 8
    for (int c = 0; c < 4; c++) o->s[c] = _mm512_permutexvar_epi16(k->idx[c], sz);
}

/* sum_g sc_g * sum (q - 32) x, spread over lanes: the -32 comes out as
   32 * sum_g sc_g * bsums_g, exact in int32. */
INL __m512i q6_dot(const q6_dec *o, const block_q8_K *x)
{
    __m512i acc = _mm512_setzero_si512();
    #pragma GCC unroll 8
    for (int c = 0; c < 4; c++) {
        __m512i p = _mm512_maddubs_epi16(o->q[c], _mm512_loadu_si512((const void *)(x->qs + 64 * c)));
        acc = _mm512_dpwssd_epi32(acc, p, o->s[c]);
    }
    __m256i bs = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(const void *)x->bsums), o->sw);
    return _mm512_sub_epi32(acc, _mm512_zextsi256_si512(_mm256_slli_epi32(bs, 5)));
}

INL __m128 q6_tokens4(const q6_dec *o, __m128 dw, const block_q8_K *const x[4], int b, __m128 acc)
{
    __m512i a[4];
    #pragma GCC unroll 8
    for (int i = 0; i < 4; i++) a[i] = q6_dot(o, x[i] + b);
    __m128i isum = hsum4_512(a[0], a[1], a[2], a[3]);
    __m128 dx = _mm_setr_ps(x[0][b].d, x[1][b].d, x[2][b].d, x[3][b].d);
    return _mm_fmadd_ps(_mm_mul_ps(dw, dx), _mm_cvtepi32_ps(isum), acc);
}

T void ember_kq_q6_K_avx512(EMBER_KQ_MATMUL_ARGS)
{
    const int nb = (int)(k / QK_K);
    q6_const kc;
    q6_consts(&kc);
    if (nt == 1) {
        const block_q8_K *x = act(xq, xq_stride, 0);
        for (int r = r0; r < r1; r++) {
            const block_q6_K *row = (const block_q6_K *)(const void *)((const uint8_t *)w + (size_t)r * row_bytes);
            float acc = 0;
            for (int b0 = 0; b0 < nb; b0 += 4) {
                int cnt = nb - b0 < 4 ? nb - b0 : 4;
                __m512i a[4];
                int bi[4];
                #pragma GCC unroll 8
                for (int i = 0; i < 4; i++) {
                    bi[i] = b0 + (i < cnt ? i : cnt - 1);
                    q6_dec o;
                    q6_decode(row + bi[i], &kc, &o);
                    a[i] = q6_dot(&o, x + bi[i]);
                }
                __m128i isum = hsum4_512(a[0], a[1], a[2], a[3]);
                __m128 dw = _mm_cvtph_ps(_mm_setr_epi16((short)row[bi[0]].d, (short)row[bi[1]].d,
                                                        (short)row[bi[2]].d, (short)row[bi[3]].d, 0, 0, 0, 0));
                __m128 dx = _mm_setr_ps(x[bi[0]].d, x[bi[1]].d, x[bi[2]].d, x[bi[3]].d);
                acc = fold_q6(acc, _mm_mul_ps(dw, dx), _mm_cvtepi32_ps(isum), cnt);
            }
            y[r] = acc;
        }
        return;
    }
    /* As for Q4_K: row blocks, up to 8 tokens per decoded super-block. */
    for (int rb = r0; rb < r1; rb += ROW_BLOCK) {
        int re = r1 - rb < ROW_BLOCK ? r1 : rb + ROW_BLOCK;
        for (int t = 0; t < nt; t += 8) {
            int cnt = nt - t < 8 ? nt - t : 8, two = cnt > 4;
            const block_q8_K *x[8];
            #pragma GCC unroll 8
            for (int i = 0; i < 8; i++) x[i] = act(xq, xq_stride, t + (i < cnt ? i : cnt - 1));
            for (int r = rb; r < re; r++) {
                const block_q6_K *row = (const block_q6_K *)(const void *)((const uint8_t *)w + (size_t)r * row_bytes);
                __m128 acc0 = _mm_setzero_ps(), acc1 = _mm_setzero_ps();
                for (int b = 0; b < nb; b++) {
                    q6_dec o;
                    q6_decode(row + b, &kc, &o);
                    __m128 dw = _mm_set1_ps(_cvtsh_ss(row[b].d));
                    acc0 = q6_tokens4(&o, dw, x, b, acc0);
                    if (two) acc1 = q6_tokens4(&o, dw, x + 4, b, acc1);
                }
                store_tokens(y, y_stride, t, r, two ? 4 : cnt, acc0);
                if (two) store_tokens(y, y_stride, t + 4, r, cnt - 4, acc1);
            }
        }
    }
}

/* ---- Q8_K activations ----------------------------------------------------
   Byte-identical to the scalar quantizer (dtype_kquant.c): NaN inputs are
   skipped by the max and quantize to 0, the sign of d comes from the first
   element of largest magnitude, rounding is half-to-even (MXCSR default). */
T void ember_kq_quantize_q8_K_avx512(const float *x, void *xq, int64_t k)
{
    block_q8_K *y = xq;
    const __m512i lo = _mm512_set1_epi32(-127), hi = _mm512_set1_epi32(127);
    for (int64_t b = 0; b < k / QK_K; b++, y++, x += QK_K) {
        __m512 am = _mm512_setzero_ps();
        for (int v = 0; v < 16; v++)   /* max_ps returns its 2nd operand on NaN */
            am = _mm512_max_ps(_mm512_abs_ps(_mm512_loadu_ps(x + 16 * v)), am);
        float amax = _mm512_reduce_max_ps(am), max = 0;
        if (amax == 0 || !(amax < INFINITY)) {
            memset(y, 0, sizeof *y);
            continue;
        }
        __m512 va = _mm512_set1_ps(amax);
        for (int v = 0; v < 16; v++) {
            __mmask16 m = _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_loadu_ps(x + 16 * v)), va, _CMP_EQ_OQ);
            if (m) {
                max = x[16 * v + __builtin_ctz(m)];
                break;
            }
        }
        float iscale = -127.f / max;
        __m512 vs = _mm512_set1_ps(iscale);
        for (int v = 0; v < 16; v++) {
            __m512 p = _mm512_mul_ps(vs, _mm512_loadu_ps(x + 16 * v));
            __mmask16 ok = _mm512_cmp_ps_mask(p, p, _CMP_ORD_Q);
            __m512i q = _mm512_maskz_cvtps_epi32(ok, p);
            q = _mm512_min_epi32(_mm512_max_epi32(q, lo), hi);
            _mm_storeu_si128((__m128i *)(void *)(y->qs + 16 * v), _mm512_cvtepi32_epi8(q));
            y->bsums[v] = (int16_t)_mm512_reduce_add_epi32(q);
        }
        y->d = 1 / iscale;
    }
}

#endif /* EMBER_SIMD */
