/* AVX-512 (BW/VL/VNNI) K-quant and IQ4_XS kernels.  Same order of float
   operations as the scalar oracles (kernels_kquant_impl.h), so bit-identical
   to them.
 *
 * A 64-element chunk of a super-block fills one zmm of weights: u8 quants
 * times s8 activations through vpmaddubsw (pairs, no saturation possible:
 * 2 * 63 * 128 < 32767), then vpdpwssd multiplies by the per-sub-block
 * scale words and accumulates in int32.  Dword j of a chunk's result holds
 * elements 4j..4j+3, so the reference's 8 lanes (index mod 32 / 4) are the
 * two 256-bit halves added.  Decode (nt == 1) walks one row's super-blocks
 * in order (weights stream linearly: on this class of machine, interleaving
 * several rows' streams cut single-thread read bandwidth by 3x), decoding
 * the scales of 4 blocks at once; prefill takes 1 row x 8 tokens per decoded
 * weight super-block, two tokens' 8 lanes per zmm accumulator. */
#include "config.h"

#ifdef EMBER_SIMD
#include <math.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "dtype.h"
#include "kernels_kquant_impl.h"
#include "simd.h"

#define T EMBER_TARGET_AVX512
#define INL static inline __attribute__((always_inline)) T
#include "kernels_kquant_simd.h"
#define ROW_BLOCK 16

/* A super-block's 16 int32 partial sums as the reference's 8 lanes. */
INL __m256 lanes8(__m512i a)
{
    return _mm256_cvtepi32_ps(_mm256_add_epi32(_mm512_castsi512_si256(a), _mm512_extracti64x4_epi64(a, 1)));
}

/* Two super-blocks' partial sums: a's 8 lanes, then b's. */
INL __m512 lanes8x2(__m512i a, __m512i b)
{
    return _mm512_cvtepi32_ps(_mm512_add_epi32(_mm512_shuffle_i64x2(a, b, 0x44),
                                               _mm512_shuffle_i64x2(a, b, 0xee)));
}

/* Lanes 8i..8i+7 of v are 8 per-item partial float sums: item i's total. */
INL void sum8x2(__m512 v, float out[2])
{
    float f[16];
    _mm512_storeu_ps(f, v);
    out[0] = ember_sum8(f);
    out[1] = ember_sum8(f + 8);
}

/* The block-b activation scales of 8 tokens. */
INL __m256 tok8_d(const block_q8_K *const x[8], int b)
{
    return _mm256_setr_ps(x[0][b].d, x[1][b].d, x[2][b].d, x[3][b].d, x[4][b].d, x[5][b].d, x[6][b].d, x[7][b].d);
}

/* [a x 8 | b x 8]: two tokens' block scales against their 8 lanes each. */
INL __m512 pair_bcast(float a, float b)
{
    return _mm512_insertf32x8(_mm512_set1_ps(a), _mm256_set1_ps(b), 1);
}

/* ---- Q4_K / Q5_K -------------------------------------------------------- */

typedef struct {
    __m512i q[4];   /* chunk c: elements 64c..64c+63 as u8 */
    __m512i s[4];   /* chunk c: words 0..15 = scale 2c, 16..31 = scale 2c+1 */
    __m128i m;      /* the 8 mins as words */
} q45_dec;

typedef struct {
    __m512i idx[4], cnt, low4, hb[4], sixteen, mdup;
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
    __m512i pidx[2][4];   /* the same for the pair layout (q45_pair_quants) */
    __m512i phb[4];       /* Q5_K: the qh bit of each pair-layout vector's halves */
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
    /* pair-layout vector v = 2h + u holds sub-blocks 4h + u (low half) and
       4h + u + 2 (high half) */
    #pragma GCC unroll 8
    for (int p = 0; p < 2; p++)
        #pragma GCC unroll 8
        for (int v = 0; v < 4; v++) {
            int sb = 4 * (v / 2) + v % 2;
            k->pidx[p][v] = _mm512_inserti64x4(_mm512_set1_epi16((short)(16 * p + sb)),
                                               _mm256_set1_epi16((short)(16 * p + sb + 2)), 1);
        }
    #pragma GCC unroll 8
    for (int v = 0; v < 4; v++) {
        int sb = 4 * (v / 2) + v % 2;
        k->phb[v] = _mm512_inserti64x4(_mm512_set1_epi8((char)(1 << sb)), _mm256_set1_epi8((char)(1 << (sb + 2))), 1);
    }
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

/* bsums of two activation blocks as 32 words. */
INL __m512i bsums2(const block_q8_K *a, const block_q8_K *b)
{
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(const void *)a->bsums)),
                              _mm256_loadu_si256((const __m256i *)(const void *)b->bsums), 1);
}

/* q8s[j] = bsums[2j] + bsums[2j+1] of one activation block, as 8 words:
   the reference's min lanes are P[k] = m[2k] q8s[2k] + m[2k+1] q8s[2k+1]. */
INL __m128i q8s_pairs(const block_q8_K *x)
{
    return _mm_hadd_epi16(_mm_loadu_si128((const __m128i *)(const void *)x->bsums),
                          _mm_loadu_si128((const __m128i *)(const void *)(x->bsums + 8)));
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

/* Index vectors: each of 4 values 4 times (one per 128-bit lane), and the
   even / odd dwords of two zmm. */
typedef struct {
    __m512i quad, even, odd;
} tok8_idx;

INL void tok8_consts(tok8_idx *k)
{
    k->quad = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    k->even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    k->odd = _mm512_add_epi32(k->even, _mm512_set1_epi32(1));
}

/* Final per-token values of up to 8 tokens: 8 lanes from acc[t / 2], and
   for Q4_K 4 min lanes (Q5_K: one sum, in every lane) from accm[t / 4]. */
T static void store8(float *y, size_t y_stride, int t0, int r, int cnt, const __m512 acc[4],
                   const __m512 accm[2], int mins, int five)
{
    float tot[8], mf[2][16];
    #pragma GCC unroll 8
    for (int p = 0; p < 4; p++) sum8x2(acc[p], tot + 2 * p);
    if (mins) {
        _mm512_storeu_ps(mf[0], accm[0]);
        _mm512_storeu_ps(mf[1], accm[1]);
    }
    for (int i = 0; i < cnt; i++) {
        float v = tot[i];
        if (mins) {
            const float *m = mf[i / 4] + 4 * (i % 4);
            v += five ? m[0] : (m[0] + m[2]) + (m[1] + m[3]);
        }
        y[(size_t)(t0 + i) * y_stride + (size_t)r] = v;
    }
}

/* Decode's pair layout: a block's qs[64h..64h+63] in one zmm gives, as low
   nibbles, elements [128h..128h+31 | 128h+64..128h+95] (vector 2h) and as
   high nibbles [128h+32..63 | 128h+96..127] (vector 2h+1): one load and
   three ops per 128 elements.  The activations are laid out the same way
   once per call (q45_pair_acts).  Element e still lands in dword lane
   (e mod 32) / 4 of its 256-bit half, so the lanes are the reference's. */
INL void q45_pair_quants(const uint8_t *blk, int five, const q45_const *k, const q45_meta_const *km,
                         __m512i q[4])
{
    const uint8_t *qs = blk + (five ? offsetof(block_q5_K, qs) : offsetof(block_q4_K, qs));
    __m512i qh = five ? _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(const void *)
                                                                  ((const block_q5_K *)(const void *)blk)->qh))
                      : _mm512_setzero_si512();
    #pragma GCC unroll 8
    for (int h = 0; h < 2; h++) {
        __m512i v = _mm512_loadu_si512((const void *)(qs + 64 * h));
        q[2 * h] = _mm512_and_si512(v, k->low4);
        q[2 * h + 1] = _mm512_and_si512(_mm512_srli_epi16(v, 4), k->low4);
    }
    if (five)
        #pragma GCC unroll 8
        for (int u = 0; u < 4; u++)
            q[u] = _mm512_mask_add_epi8(q[u], _mm512_test_epi8_mask(qh, km->phb[u]), q[u], k->sixteen);
}

/* x's 256 codes per block in the pair layout: 4 zmm per block. */
INL void q45_pair_acts(const block_q8_K *x, int nb, __m512i *xs)
{
    for (int b = 0; b < nb; b++)
        #pragma GCC unroll 8
        for (int h = 0; h < 2; h++)
            #pragma GCC unroll 8
            for (int u = 0; u < 2; u++) {
                const int8_t *p = x[b].qs + 128 * h + 32 * u;
                xs[4 * b + 2 * h + u] = _mm512_inserti64x4(
                    _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(const void *)p)),
                    _mm256_loadu_si256((const __m256i *)(const void *)(p + 64)), 1);
            }
}

/* Decode keeps the pair-layout activations of up to this many super-blocks
   (k = 65536) on the stack (64 KiB); longer rows take the plain layout. */
#define PAIR_BLOCKS 256

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
        const int pair = nb <= PAIR_BLOCKS;
        __m512i xs[pair ? 4 * nb : 1];
        /* and the activation's bsum pairs q8s (8 words a block, 3 blocks of
           zeros after the last), for 4 blocks' min lanes in one vpmaddwd */
        __m128i q8s[pair ? nb + 3 : 1];
        if (pair) {
            q45_pair_acts(x, nb, xs);
            for (int b = 0; b < nb; b++) q8s[b] = q8s_pairs(x + b);
            for (int b = nb; b < nb + 3; b++) q8s[b] = _mm_setzero_si128();
        }
        const __m512i mins4 = _mm512_setr_epi64(2, 3, 6, 7, 10, 11, 14, 15);
        uintptr_t pf = ember_kq_prefetch_start(w, row_bytes, r0);
        for (int r = r0; r < r1; r++) {
            const uint8_t *row = (const uint8_t *)w + (size_t)r * row_bytes;
            __m256 acc = _mm256_setzero_ps();
            __m128 accm = _mm_setzero_ps();
            float summs = 0;
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
                ember_kq_prefetch_to(&pf, (uintptr_t)(row + (size_t)(b0 + 4) * bb) + PF_KQ);
                q45_meta md;
                q45_meta4(blk, &km, &md);
                __m128 dx = _mm_setr_ps(xb[0]->d, xb[1]->d, xb[2]->d, xb[3]->d);
                float d[4], dmin[4];
                _mm_storeu_ps(d, _mm_mul_ps(dx, md.dw));
                _mm_storeu_ps(dmin, _mm_mul_ps(_mm_sub_ps(_mm_setzero_ps(), dx), md.dm));
                /* the 4 blocks' min lanes P[k] in one vpmaddwd (the mins are
                   128-bit lanes 1 and 3 of both words vectors); Q5_K folds
                   their sum, left in each block's first dword */
                __m512i q8s4 = pair ? _mm512_loadu_si512((const void *)(q8s + b0))
                                    : _mm512_inserti32x4(_mm512_inserti32x4(_mm512_inserti32x4(
                                          _mm512_castsi128_si512(q8s_pairs(xb[0])), q8s_pairs(xb[1]), 1),
                                          q8s_pairs(xb[2]), 2), q8s_pairs(xb[3]), 3);
                __m512i pm4 = _mm512_madd_epi16(q8s4, _mm512_permutex2var_epi64(md.w[0], mins4, md.w[1]));
                float pmf[16];
                int32_t pms[16];
                if (five) {
                    pm4 = _mm512_add_epi32(pm4, _mm512_shuffle_epi32(pm4, 0x4e));
                    _mm512_storeu_si512((void *)pms, _mm512_add_epi32(pm4, _mm512_shuffle_epi32(pm4, 0xb1)));
                } else {
                    _mm512_storeu_ps(pmf, _mm512_cvtepi32_ps(pm4));
                }
                #pragma GCC unroll 8
                for (int i = 0; i < 4; i++) {
                    if (i >= cnt) break;
                    __m512i a;
                    if (pair) {
                        __m512i q[4];
                        q45_pair_quants(blk[i], five, &kc, &km, q);
                        const __m512i *xv = xs + 4 * (b0 + i);
                        a = _mm512_setzero_si512();
                        #pragma GCC unroll 8
                        for (int v = 0; v < 4; v++)
                            a = _mm512_dpwssd_epi32(a, _mm512_maddubs_epi16(q[v], _mm512_load_si512((const void *)(xv + v))),
                                                    _mm512_permutexvar_epi16(km.pidx[i & 1][v], md.w[i >> 1]));
                    } else {
                        q45_dec o;
                        q45_quants(blk[i], five, &kc, &o);
                        #pragma GCC unroll 8
                        for (int c = 0; c < 4; c++)
                            o.s[c] = _mm512_permutexvar_epi16(km.sidx[i & 1][c], md.w[i >> 1]);
                        a = q45_dot(&o, xb[i]->qs);
                    }
                    acc = _mm256_fmadd_ps(_mm256_set1_ps(d[i]), lanes8(a), acc);
                    if (five)
                        summs = fmaf(dmin[i], (float)pms[4 * i], summs);
                    else
                        accm = _mm_fmadd_ps(_mm_set1_ps(dmin[i]), _mm_loadu_ps(pmf + 4 * i), accm);
                }
            }
            float m[4];
            _mm_storeu_ps(m, accm);
            y[r] = sum8(acc) + (five ? summs : (m[0] + m[2]) + (m[1] + m[3]));
        }
        return;
    }
    /* Rows go in blocks whose weights stay in L2 while each group of up to
       8 tokens' activations is reused from L1 for all of them; each weight
       super-block is decoded once per 8 tokens. */
    tok8_idx ti;
    tok8_consts(&ti);
    for (int rb = r0; rb < r1; rb += ROW_BLOCK) {
        int re = r1 - rb < ROW_BLOCK ? r1 : rb + ROW_BLOCK;
        for (int t = 0; t < nt; t += 8) {
            int cnt = nt - t < 8 ? nt - t : 8, two = cnt > 4;
            const block_q8_K *x[8];
            #pragma GCC unroll 8
            for (int i = 0; i < 8; i++) x[i] = act(xq, xq_stride, t + (i < cnt ? i : cnt - 1));
            for (int r = rb; r < re; r++) {
                const uint8_t *row = (const uint8_t *)w + (size_t)r * row_bytes;
                __m512 acc[4], accm[2];
                #pragma GCC unroll 8
                for (int p = 0; p < 4; p++) acc[p] = _mm512_setzero_ps();
                accm[0] = accm[1] = _mm512_setzero_ps();
                for (int b = 0; b < nb; b++) {
                    const uint8_t *blk = row + (size_t)b * bb;
                    q45_dec o;
                    q45_decode(blk, five, &kc, &o);
                    /* each min twice, in both halves, against 2 tokens' bsums */
                    __m512i md = _mm512_permutexvar_epi16(kc.mdup, _mm512_zextsi128_si512(o.m));
                    uint16_t dh[2];
                    memcpy(dh, blk, 4);
                    __m256 dx = tok8_d(x, b);
                    float d[8];
                    _mm256_storeu_ps(d, _mm256_mul_ps(dx, _mm256_set1_ps(_cvtsh_ss(dh[0]))));
                    __m256 dmin = _mm256_mul_ps(_mm256_sub_ps(_mm256_setzero_ps(), dx),
                                                _mm256_set1_ps(_cvtsh_ss(dh[1])));
                    #pragma GCC unroll 8
                    for (int q = 0; q < 2; q++) {
                        if (q == 1 && !two) break;
                        #pragma GCC unroll 8
                        for (int h = 0; h < 2; h++) {
                            int p = 2 * q + h;
                            __m512i a0 = q45_dot(&o, x[2 * p][b].qs), a1 = q45_dot(&o, x[2 * p + 1][b].qs);
                            acc[p] = _mm512_fmadd_ps(pair_bcast(d[2 * p], d[2 * p + 1]), lanes8x2(a0, a1), acc[p]);
                        }
                        /* dwords 2j, 2j+1 of D are m_j * q8s halves: pair them */
                        __m512i d01 = _mm512_madd_epi16(md, bsums2(&x[4 * q][b], &x[4 * q + 1][b]));
                        __m512i d23 = _mm512_madd_epi16(md, bsums2(&x[4 * q + 2][b], &x[4 * q + 3][b]));
                        __m512i pm = _mm512_add_epi32(_mm512_permutex2var_epi32(d01, ti.even, d23),
                                                      _mm512_permutex2var_epi32(d01, ti.odd, d23));
                        if (five) {
                            pm = _mm512_add_epi32(pm, _mm512_shuffle_epi32(pm, 0x4e));
                            pm = _mm512_add_epi32(pm, _mm512_shuffle_epi32(pm, 0xb1));
                        }
                        __m128 dm4 = q ? _mm256_extractf128_ps(dmin, 1) : _mm256_castps256_ps128(dmin);
                        accm[q] = _mm512_fmadd_ps(_mm512_permutexvar_ps(ti.quad, _mm512_castps128_ps512(dm4)),
                                                  _mm512_cvtepi32_ps(pm), accm[q]);
                    }
                }
                store8(y, y_stride, t, r, cnt, acc, accm, 1, five);
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
    __m512i sz = _mm512_zextsi256_si512(_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)b->scales)));
    #pragma GCC unroll 8
    for (int c = 0; c < 4; c++) o->s[c] = _mm512_permutexvar_epi16(k->idx[c], sz);
}

/* sum_g sc_g * sum (q - 32) x per lane: the -32 is taken per word pair,
   before the scale, as the reference does (exact in int16: |63 - 32| * 127
   * 2 < 32767), so every lane holds the same integer as the oracle's. */
INL __m512i q6_dot(const q6_dec *o, const block_q8_K *x, __m512i m32)
{
    __m512i acc = _mm512_setzero_si512();
    #pragma GCC unroll 8
    for (int c = 0; c < 4; c++) {
        __m512i xc = _mm512_loadu_si512((const void *)(x->qs + 64 * c));
        __m512i p = _mm512_sub_epi16(_mm512_maddubs_epi16(o->q[c], xc), _mm512_maddubs_epi16(m32, xc));
        acc = _mm512_dpwssd_epi32(acc, p, o->s[c]);
    }
    return acc;
}

/* Prefill's form of q6_dot.  The multiply ports bound it, and q6_dot spends
   three of their ops per 64 elements (two vpmaddubsw, one vpdpwssd).  With
   the activation made unsigned (xu = x + 128, i.e. x ^ 0x80, once per token
   group) and the weight signed (q - 32), one vpmaddubsw gives
   (x + 128)(q - 32) per pair (|2 * 255 * 32| < 32767: exact), and the extra
   128 (q - 32) terms, scaled, depend on the row only: wneg, made once per
   decoded super-block for all its tokens, starts the sum.  So the lanes
   hold q6_dot's integers exactly, at two ops per 64 elements. */
typedef struct {
    __m512i q[4];    /* chunk c: q - 32 as s8 */
    __m512i wneg;    /* -sum_c sc * 128 (q - 32), as q6_dot's dwords */
} q6_pre;

INL void q6_prefill_weights(const q6_dec *o, q6_pre *w)
{
    const __m512i m32 = _mm512_set1_epi8(32), u128 = _mm512_set1_epi8((char)0x80);
    __m512i wc = _mm512_setzero_si512();
    #pragma GCC unroll 8
    for (int c = 0; c < 4; c++) {
        w->q[c] = _mm512_sub_epi8(o->q[c], m32);
        wc = _mm512_dpwssd_epi32(wc, _mm512_maddubs_epi16(u128, w->q[c]), o->s[c]);
    }
    w->wneg = _mm512_sub_epi32(_mm512_setzero_si512(), wc);
}

INL __m512i q6_dot_pre(const q6_dec *o, const q6_pre *w, const __m512i *xu)
{
    __m512i acc = w->wneg;
    #pragma GCC unroll 8
    for (int c = 0; c < 4; c++)
        acc = _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(_mm512_load_si512((const void *)(xu + c)), w->q[c]), o->s[c]);
    return acc;
}

/* Prefill keeps the unsigned activations of 8 tokens for up to this many
   super-blocks per thread (k = 8192, 128 KiB); longer rows take q6_dot. */
#define XU_BLOCKS 32
#define Q6_TOK 16

T void ember_kq_q6_K_avx512(EMBER_KQ_MATMUL_ARGS)
{
    const int nb = (int)(k / QK_K);
    const __m512i m32 = _mm512_set1_epi8(32);
    q6_const kc;
    q6_consts(&kc);
    if (nt == 1) {
        const block_q8_K *x = act(xq, xq_stride, 0);
        uintptr_t pf = ember_kq_prefetch_start(w, row_bytes, r0);
        for (int r = r0; r < r1; r++) {
            const block_q6_K *row = (const block_q6_K *)(const void *)((const uint8_t *)w + (size_t)r * row_bytes);
            __m256 acc = _mm256_setzero_ps();
            for (int b = 0; b < nb; b++) {
                ember_kq_prefetch_to(&pf, (uintptr_t)(row + b + 1) + PF_KQ);
                q6_dec o;
                q6_decode(row + b, &kc, &o);
                float d = x[b].d * _cvtsh_ss(row[b].d);
                acc = _mm256_fmadd_ps(_mm256_set1_ps(d), lanes8(q6_dot(&o, x + b, m32)), acc);
            }
            y[r] = sum8(acc);
        }
        return;
    }
    /* As for Q4_K: row blocks, but up to 16 tokens per decoded super-block:
       decoding a Q6_K super-block costs about as much as 8 tokens' dots. */
    for (int rb = r0; rb < r1; rb += ROW_BLOCK) {
        int re = r1 - rb < ROW_BLOCK ? r1 : rb + ROW_BLOCK;
        for (int t = 0; t < nt; t += Q6_TOK) {
            int cnt = nt - t < Q6_TOK ? nt - t : Q6_TOK, pairs = (cnt + 1) / 2;
            const block_q8_K *x[Q6_TOK];
            #pragma GCC unroll 16
            for (int i = 0; i < Q6_TOK; i++) x[i] = act(xq, xq_stride, t + (i < cnt ? i : cnt - 1));
            static _Thread_local __m512i xu[Q6_TOK * XU_BLOCKS * 4];
            const int pre = nb <= XU_BLOCKS;
            if (pre)
                for (int i = 0; i < 2 * pairs; i++)
                    for (int b = 0; b < nb; b++)
                        #pragma GCC unroll 8
                        for (int c = 0; c < 4; c++)
                            xu[(i * nb + b) * 4 + c] = _mm512_xor_si512(
                                _mm512_loadu_si512((const void *)(x[i][b].qs + 64 * c)), _mm512_set1_epi8((char)0x80));
            for (int r = rb; r < re; r++) {
                const block_q6_K *row = (const block_q6_K *)(const void *)((const uint8_t *)w + (size_t)r * row_bytes);
                __m512 acc[Q6_TOK / 2];
                #pragma GCC unroll 8
                for (int p = 0; p < Q6_TOK / 2; p++) acc[p] = _mm512_setzero_ps();
                for (int b = 0; b < nb; b++) {
                    q6_dec o;
                    q6_decode(row + b, &kc, &o);
                    q6_pre wp;
                    if (pre) q6_prefill_weights(&o, &wp);
                    float dw = _cvtsh_ss(row[b].d);
                    #pragma GCC unroll 8
                    for (int p = 0; p < Q6_TOK / 2; p++) {
                        if (p >= pairs) break;
                        __m512i a0 = pre ? q6_dot_pre(&o, &wp, xu + ((2 * p) * nb + b) * 4)
                                         : q6_dot(&o, x[2 * p] + b, m32);
                        __m512i a1 = pre ? q6_dot_pre(&o, &wp, xu + ((2 * p + 1) * nb + b) * 4)
                                         : q6_dot(&o, x[2 * p + 1] + b, m32);
                        acc[p] = _mm512_fmadd_ps(pair_bcast(x[2 * p][b].d * dw, x[2 * p + 1][b].d * dw),
                                                 lanes8x2(a0, a1), acc[p]);
                    }
                }
                store8(y, y_stride, t, r, cnt < 8 ? cnt : 8, acc, NULL, 0, 0);
                if (cnt > 8) store8(y, y_stride, t + 8, r, cnt - 8, acc + 4, NULL, 0, 0);
            }
        }
    }
}

/* ---- IQ4_XS ------------------------------------------------------------ */

/* A decoded IQ4_XS super-block as 4 zmm of two sub-blocks each (2p in the
   low 256 bits, 2p+1 in the high, elements in order): the values'
   magnitudes as u8, the bytes whose value is negative (code < 8: the book
   is sorted, with no 0) and each half's scale (ls - 32) as words.  A
   token's dot is then the reference's: vpmaddubsw of |v| with the
   activation negated where v < 0 (exact: 2 * 127 * 127 < 32767), and
   vpdpwssd by the scale words; dword j of a half holds elements 4j..4j+3,
   so the two halves added are the reference's 8 lanes. */
typedef struct {
    __m512i a[4], s[4];
    __mmask64 neg[4];
} iq4_xs_dec;

typedef struct {
    __m512i abook, low4, eight, shift, idx[4], pair[4];
    __m128i spread, lsh, hsh;
} iq4_xs_const;

/* Prefill keeps the 8 tokens' activation scales of rows of up to this many
   super-blocks for all the rows (longer rows gather them per block): 1.04x
   prefill against gathering per row (4 rounds, 1.01-1.09). */
#define IQ4_DX_BLOCKS 128

INL void iq4_xs_consts(iq4_xs_const *k)
{
    uint8_t ab[16];
    for (int i = 0; i < 16; i++) ab[i] = (uint8_t)abs(ember_iq4nl_values[i]);
    k->abook = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(const void *)ab));
    k->low4 = _mm512_set1_epi8(0x0f);
    k->eight = _mm512_set1_epi8(8);
    /* [q0 | q0 >> 4 | q1 | q1 >> 4] per 128 bits: low nibbles are a
       sub-block's elements 0..15, high nibbles 16..31 */
    k->shift = _mm512_set_epi64(4, 4, 0, 0, 4, 4, 0, 0);
    #pragma GCC unroll 4
    for (int p = 0; p < 4; p++) {
        k->idx[p] = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi16((short)(2 * p))),
                                       _mm256_set1_epi16((short)(2 * p + 1)), 1);
        /* [d_2p x 8 | d_2p+1 x 8] from 8 tokens' block scales */
        k->pair[p] = _mm512_inserti64x4(_mm512_set1_epi32(2 * p), _mm256_set1_epi32(2 * p + 1), 1);
    }
    k->spread = _mm_setr_epi8(0, -1, 0, -1, 1, -1, 1, -1, 2, -1, 2, -1, 3, -1, 3, -1);
    k->lsh = _mm_setr_epi16(0, 4, 0, 4, 0, 4, 0, 4);
    k->hsh = _mm_setr_epi16(0, 2, 4, 6, 8, 10, 12, 14);
}

/* The 8 scales minus 32 as words: scales_l's byte ib / 2 (low nibble for
   even ib), scales_h's bits 2ib..2ib+1 on top. */
INL __m128i iq4_xs_scales(const block_iq4_xs *b, const iq4_xs_const *k)
{
    uint32_t l;
    memcpy(&l, b->scales_l, 4);
    __m128i lo = _mm_and_si128(_mm_srlv_epi16(_mm_shuffle_epi8(_mm_cvtsi32_si128((int)l), k->spread), k->lsh),
                               _mm_set1_epi16(0x0f));
    __m128i hi = _mm_and_si128(_mm_srlv_epi16(_mm_set1_epi16((short)b->scales_h), k->hsh), _mm_set1_epi16(3));
    return _mm_sub_epi16(_mm_or_si128(lo, _mm_slli_epi16(hi, 4)), _mm_set1_epi16(32));
}

INL void iq4_xs_decode(const block_iq4_xs *b, const iq4_xs_const *k, iq4_xs_dec *o)
{
    __m512i sz = _mm512_zextsi128_si512(iq4_xs_scales(b, k));
    #pragma GCC unroll 4
    for (int p = 0; p < 4; p++) {
        __m512i q = _mm512_castsi256_si512(load256(b->qs + 32 * p));
        q = _mm512_shuffle_i64x2(q, q, 0x50);           /* [q0 | q0 | q1 | q1] */
        __m512i n = _mm512_and_si512(_mm512_srlv_epi64(q, k->shift), k->low4);
        o->a[p] = _mm512_shuffle_epi8(k->abook, n);
        o->neg[p] = _mm512_cmplt_epu8_mask(n, k->eight);
        o->s[p] = _mm512_permutexvar_epi16(k->idx[p], sz);
    }
}

INL __m512i iq4_xs_dot(const iq4_xs_dec *o, const int8_t *xqs)
{
    __m512i acc = _mm512_setzero_si512();
    #pragma GCC unroll 4
    for (int p = 0; p < 4; p++) {
        __m512i x = _mm512_loadu_si512((const void *)(xqs + 64 * p));
        x = _mm512_mask_sub_epi8(x, o->neg[p], _mm512_setzero_si512(), x);
        acc = _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(o->a[p], x), o->s[p]);
    }
    return acc;
}

T void ember_kq_iq4_xs_avx512(EMBER_KQ_MATMUL_ARGS)
{
    const int nb = (int)(k / QK_K);
    iq4_xs_const kc;
    iq4_xs_consts(&kc);
    if (nt == 1) {
        const block_q8_K *x = act(xq, xq_stride, 0);
        uintptr_t pf = ember_kq_prefetch_start(w, row_bytes, r0);
        for (int r = r0; r < r1; r++) {
            const block_iq4_xs *row = (const block_iq4_xs *)(const void *)((const uint8_t *)w + (size_t)r * row_bytes);
            __m256 acc = _mm256_setzero_ps();
            for (int b = 0; b < nb; b++) {
                ember_kq_prefetch_to(&pf, (uintptr_t)(row + b + 1) + PF_KQ);
                iq4_xs_dec o;
                iq4_xs_decode(row + b, &kc, &o);
                float d = x[b].d * _cvtsh_ss(row[b].d);
                acc = _mm256_fmadd_ps(_mm256_set1_ps(d), lanes8(iq4_xs_dot(&o, x[b].qs)), acc);
            }
            y[r] = sum8(acc);
        }
        return;
    }
    /* As for Q4_K: row blocks kept in L2, each super-block decoded once for
       up to 8 tokens, two tokens' lanes per accumulator (16 measured the
       same). */
    for (int rb = r0; rb < r1; rb += ROW_BLOCK) {
        int re = r1 - rb < ROW_BLOCK ? r1 : rb + ROW_BLOCK;
        for (int t = 0; t < nt; t += 8) {
            int cnt = nt - t < 8 ? nt - t : 8;
            const block_q8_K *x[8];
            #pragma GCC unroll 8
            for (int i = 0; i < 8; i++) x[i] = act(xq, xq_stride, t + (i < cnt ? i : cnt - 1));
            static _Thread_local __m256 dx[IQ4_DX_BLOCKS];
            const int keep = nb <= IQ4_DX_BLOCKS;
            for (int b = 0; keep && b < nb; b++) dx[b] = tok8_d(x, b);
            for (int r = rb; r < re; r++) {
                const block_iq4_xs *row = (const block_iq4_xs *)(const void *)((const uint8_t *)w + (size_t)r * row_bytes);
                __m512 acc[4];
                #pragma GCC unroll 4
                for (int p = 0; p < 4; p++) acc[p] = _mm512_setzero_ps();
                for (int b = 0; b < nb; b++) {
                    iq4_xs_dec o;
                    iq4_xs_decode(row + b, &kc, &o);
                    float dw = _cvtsh_ss(row[b].d);
                    /* the 8 tokens' d x dw once, paired per accumulator below */
                    __m512 d = _mm512_castps256_ps512(_mm256_mul_ps(keep ? dx[b] : tok8_d(x, b), _mm256_set1_ps(dw)));
                    #pragma GCC unroll 4
                    for (int p = 0; p < 4; p++) {
                        if (2 * p >= cnt) break;
                        __m512i a0 = iq4_xs_dot(&o, x[2 * p][b].qs), a1 = iq4_xs_dot(&o, x[2 * p + 1][b].qs);
                        acc[p] = _mm512_fmadd_ps(_mm512_permutexvar_ps(kc.pair[p], d), lanes8x2(a0, a1), acc[p]);
                    }
                }
                store8(y, y_stride, t, r, cnt, acc, NULL, 0, 0);
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
