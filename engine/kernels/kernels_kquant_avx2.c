/* AVX2 K-quant kernels.  Same order of float operations as the scalar
   oracles (kernels_kquant_impl.h), so bit-identical to them.
 *
 * One 32-element piece (a Q4_K/Q5_K sub-block, or two Q6_K groups) fills a
 * ymm of u8 quants; vpmaddubsw with the s8 activations gives word pairs
 * (no saturation: 2 * 63 * 128 < 32767) and vpmaddwd by the scale words
 * folds them into int32 lanes.  Four dot products run side by side: for
 * decode (nt == 1) 4 consecutive super-blocks of one row, so the weights
 * stream linearly, folded into the row's accumulator in block order; for
 * prefill 1 row x 4 tokens (each weight piece decoded once for 4 tokens). */
#include "config.h"

#ifdef EMBER_SIMD
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "dtype.h"
#include "kernels_kquant_impl.h"
#include "simd.h"

#define T EMBER_TARGET_AVX2
#define INL static inline __attribute__((always_inline)) T
#define ROW_BLOCK 16

INL __m128i hsum4_256(__m256i a, __m256i b, __m256i c, __m256i d)
{
    __m256i ab = _mm256_add_epi32(_mm256_unpacklo_epi32(a, b), _mm256_unpackhi_epi32(a, b));
    __m256i cd = _mm256_add_epi32(_mm256_unpacklo_epi32(c, d), _mm256_unpackhi_epi32(c, d));
    __m256i s = _mm256_add_epi32(_mm256_unpacklo_epi64(ab, cd), _mm256_unpackhi_epi64(ab, cd));
    return _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
}

INL __m128i hsum4_128(__m128i a, __m128i b, __m128i c, __m128i d)
{
    return _mm_hadd_epi32(_mm_hadd_epi32(a, b), _mm_hadd_epi32(c, d));
}

INL __m128i bsum_pairs(const block_q8_K *x)
{
    return _mm_hadd_epi16(_mm_loadu_si128((const __m128i *)(const void *)x->bsums),
                          _mm_loadu_si128((const __m128i *)(const void *)(x->bsums + 8)));
}

INL __m256i load256(const void *p) { return _mm256_loadu_si256((const __m256i *)p); }

static const block_q8_K *act(const void *xq, size_t stride, int t)
{
    return (const block_q8_K *)(const void *)((const uint8_t *)xq + (size_t)t * stride);
}

/* Lanes 0..cnt-1 are row r of tokens t..t+cnt-1. */
static void store_tokens(float *y, size_t y_stride, int t, int r, int cnt, __m128 v)
{
    float o[4];
    _mm_storeu_ps(o, v);
    for (int i = 0; i < cnt; i++) y[(size_t)(t + i) * y_stride + (size_t)r] = o[i];
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

/* ---- Q4_K / Q5_K -------------------------------------------------------- */

typedef struct {
    __m256i ctl[8], low4, one;
    __m128i pick_cnt, pick_low, pick_high;
} q45_const;

INL void q45_consts(q45_const *k)
{
    #pragma GCC unroll 8
    for (int j = 0; j < 8; j++) k->ctl[j] = _mm256_set1_epi16((short)(0x8000 | j));
    k->low4 = _mm256_set1_epi8(0x0f);
    k->one = _mm256_set1_epi8(1);
    k->pick_cnt = _mm_setr_epi32(0, 0, 0, 4);
    k->pick_low = _mm_setr_epi32(0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f);
    k->pick_high = _mm_setr_epi32(0, 0x30303030, 0, 0x30303030);
}

/* The 8 scales (bytes, in every qword of *scb) and 8 mins (words, *m) from
   a block's bytes 0..15, dwords [d|dmin, w0, w1, w2]: sc0..3 = w0 & 0x3f..,
   m0..3 = w1 & 0x3f.., sc4..7 / m4..7 take their low nibbles from w2 and
   their top two bits from bits 6-7 of w0 / w1's bytes. */
INL void q45_scales(const uint8_t *blk, const q45_const *k, __m256i *scb, __m128i *m)
{
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)blk);
    __m128i lo = _mm_and_si128(_mm_srlv_epi32(_mm_shuffle_epi32(v, 0xed), k->pick_cnt), k->pick_low);
    __m128i hi = _mm_and_si128(_mm_srli_epi32(_mm_shuffle_epi32(v, 0xa5), 2), k->pick_high);
    __m128i r = _mm_or_si128(lo, hi);   /* bytes sc0..7, m0..7 */
    *scb = _mm256_broadcastq_epi64(r);
    *m = _mm_cvtepu8_epi16(_mm_unpackhi_epi64(r, r));
}

/* Sub-block j's 32 quants: nibble (low for even j, high for odd) plus, for
   Q5_K, bit j of qh moved to bit 4.  *qh_cur is qh shifted right by j
   (16-bit lanes: bit 0 of every byte is still that byte's bit j). */
INL __m256i q45_sub(const uint8_t *qs, int j, int five, __m256i *qh_cur, const q45_const *k)
{
    __m256i raw = load256(qs + 32 * (j / 2));
    __m256i q = (j & 1) ? _mm256_and_si256(_mm256_srli_epi16(raw, 4), k->low4)
                        : _mm256_and_si256(raw, k->low4);
    if (five) {
        q = _mm256_or_si256(q, _mm256_slli_epi16(_mm256_and_si256(*qh_cur, k->one), 4));
        *qh_cur = _mm256_srli_epi16(*qh_cur, 1);
    }
    return q;
}

INL void q45_matmul(int five, EMBER_KQ_MATMUL_ARGS)
{
    const size_t bb = five ? sizeof(block_q5_K) : sizeof(block_q4_K);
    const size_t qs_off = five ? offsetof(block_q5_K, qs) : offsetof(block_q4_K, qs);
    const int nb = (int)(k / QK_K);
    q45_const kc;
    q45_consts(&kc);
    if (nt == 1) {
        const block_q8_K *x = act(xq, xq_stride, 0);
        for (int r = r0; r < r1; r++) {
            const uint8_t *row = (const uint8_t *)w + (size_t)r * row_bytes;
            float acc = 0;
            for (int b0 = 0; b0 < nb; b0 += 4) {
                int cnt = nb - b0 < 4 ? nb - b0 : 4;
                __m256i a[4];
                __m128i mv[4];
                uint16_t dh[4], mh[4];
                float dxs[4];
                #pragma GCC unroll 8
                for (int i = 0; i < 4; i++) {
                    int b = b0 + (i < cnt ? i : cnt - 1);
                    const uint8_t *blk = row + (size_t)b * bb;
                    const block_q8_K *xb = x + b;
                    __m256i scb;
                    __m128i m;
                    q45_scales(blk, &kc, &scb, &m);
                    memcpy(&dh[i], blk, 2);
                    memcpy(&mh[i], blk + 2, 2);
                    dxs[i] = xb->d;
                    mv[i] = _mm_madd_epi16(bsum_pairs(xb), m);
                    __m256i qh = five ? load256(((const block_q5_K *)(const void *)blk)->qh)
                                      : _mm256_setzero_si256();
                    __m256i s = _mm256_setzero_si256();
                    #pragma GCC unroll 8
                    for (int j = 0; j < 8; j++) {
                        __m256i q = q45_sub(blk + qs_off, j, five, &qh, &kc);
                        __m256i p = _mm256_maddubs_epi16(q, load256(xb->qs + 32 * j));
                        s = _mm256_add_epi32(s, _mm256_madd_epi16(p, _mm256_shuffle_epi8(scb, kc.ctl[j])));
                    }
                    a[i] = s;
                }
                __m128i isum = hsum4_256(a[0], a[1], a[2], a[3]);
                __m128i msum = hsum4_128(mv[0], mv[1], mv[2], mv[3]);
                __m128 dx = _mm_loadu_ps(dxs);
                __m128 dw = _mm_cvtph_ps(_mm_loadl_epi64((const __m128i *)(const void *)dh));
                __m128 dm = _mm_cvtph_ps(_mm_loadl_epi64((const __m128i *)(const void *)mh));
                acc = fold_q45(acc, _mm_mul_ps(dw, dx), _mm_cvtepi32_ps(isum),
                               _mm_mul_ps(dm, dx), _mm_cvtepi32_ps(msum), cnt);
            }
            y[r] = acc;
        }
        return;
    }
    /* Rows go in blocks whose weights stay in L2 while each 4-token
       activation group is reused from L1 for all of them. */
    for (int rb = r0; rb < r1; rb += ROW_BLOCK) {
        int re = r1 - rb < ROW_BLOCK ? r1 : rb + ROW_BLOCK;
        for (int t = 0; t < nt; t += 4) {
            int cnt = nt - t < 4 ? nt - t : 4;
            const block_q8_K *x[4];
            #pragma GCC unroll 8
            for (int i = 0; i < 4; i++) x[i] = act(xq, xq_stride, t + (i < cnt ? i : cnt - 1));
            for (int r = rb; r < re; r++) {
                const uint8_t *row = (const uint8_t *)w + (size_t)r * row_bytes;
                __m128 acc = _mm_setzero_ps();
                for (int b = 0; b < nb; b++) {
                    const uint8_t *blk = row + (size_t)b * bb;
                    __m256i scb;
                    __m128i m;
                    q45_scales(blk, &kc, &scb, &m);
                    __m256i qh = five ? load256(((const block_q5_K *)(const void *)blk)->qh)
                                      : _mm256_setzero_si256();
                    __m256i a[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(),
                                    _mm256_setzero_si256(), _mm256_setzero_si256()};
                    #pragma GCC unroll 8
                    for (int j = 0; j < 8; j++) {
                        __m256i q = q45_sub(blk + qs_off, j, five, &qh, &kc);
                        __m256i s = _mm256_shuffle_epi8(scb, kc.ctl[j]);
                        #pragma GCC unroll 8
                        for (int i = 0; i < 4; i++) {
                            __m256i p = _mm256_maddubs_epi16(q, load256(x[i][b].qs + 32 * j));
                            a[i] = _mm256_add_epi32(a[i], _mm256_madd_epi16(p, s));
                        }
                    }
                    __m128i mv[4];
                    #pragma GCC unroll 8
                    for (int i = 0; i < 4; i++) mv[i] = _mm_madd_epi16(bsum_pairs(&x[i][b]), m);
                    __m128i isum = hsum4_256(a[0], a[1], a[2], a[3]);
                    __m128i msum = hsum4_128(mv[0], mv[1], mv[2], mv[3]);
                    uint16_t dh[2];
                    memcpy(dh, blk, 4);
                    __m128 dd = _mm_cvtph_ps(_mm_cvtsi32_si128((int)(dh[0] | (uint32_t)dh[1] << 16)));
                    __m128 dx = _mm_setr_ps(x[0][b].d, x[1][b].d, x[2][b].d, x[3][b].d);
                    __m128 dw = _mm_shuffle_ps(dd, dd, 0x00), dm = _mm_shuffle_ps(dd, dd, 0x55);
                    acc = _mm_fmadd_ps(_mm_mul_ps(dw, dx), _mm_cvtepi32_ps(isum), acc);
                    acc = _mm_fnmadd_ps(_mm_mul_ps(dm, dx), _mm_cvtepi32_ps(msum), acc);
                }
                store_tokens(y, y_stride, t, r, cnt, acc);
            }
        }
    }
}

T void ember_kq_q4_K_avx2(EMBER_KQ_MATMUL_ARGS)
{
    q45_matmul(0, w, row_bytes, k, r0, r1, xq, xq_stride, nt, y, y_stride);
}

T void ember_kq_q5_K_avx2(EMBER_KQ_MATMUL_ARGS)
{
    q45_matmul(1, w, row_bytes, k, r0, r1, xq, xq_stride, nt, y, y_stride);
}

/* ---- Q6_K ---------------------------------------------------------------- */

typedef struct {
    __m128i ctl[8];
    __m256i low4, hi2;
} q6_const;

INL void q6_consts(q6_const *k)
{
    #pragma GCC unroll 8
    for (int p = 0; p < 8; p++)
        k->ctl[p] = _mm_setr_epi8((char)(2 * p), (char)(2 * p), (char)(2 * p), (char)(2 * p),
                                  (char)(2 * p), (char)(2 * p), (char)(2 * p), (char)(2 * p),
                                  (char)(2 * p + 1), (char)(2 * p + 1), (char)(2 * p + 1),
                                  (char)(2 * p + 1), (char)(2 * p + 1), (char)(2 * p + 1),
                                  (char)(2 * p + 1), (char)(2 * p + 1));
    k->low4 = _mm256_set1_epi8(0x0f);
    k->hi2 = _mm256_set1_epi8(0x30);
}

/* Quarter qi of half n (elements 128n + 32qi ..): nibble from ql[64n] or
   ql[64n+32] (low for qi < 2), two bits of qh[32n..] moved to bits 4-5. */
INL __m256i q6_quarter(const block_q6_K *b, int n, int qi, const q6_const *k)
{
    __m256i ql = load256(b->ql + 64 * n + 32 * (qi & 1));
    __m256i qh = load256(b->qh + 32 * n);
    __m256i nib = qi < 2 ? _mm256_and_si256(ql, k->low4)
                         : _mm256_and_si256(_mm256_srli_epi16(ql, 4), k->low4);
    __m256i h = qi == 0 ? _mm256_slli_epi16(qh, 4) : qi == 1 ? _mm256_slli_epi16(qh, 2)
              : qi == 2 ? qh : _mm256_srli_epi16(qh, 2);
    return _mm256_or_si256(nib, _mm256_and_si256(h, k->hi2));
}

/* Words of groups 2p (low lane) and 2p+1 (high lane). */
INL __m256i q6_scale(__m128i sc, int p, const q6_const *k)
{
    return _mm256_cvtepi8_epi16(_mm_shuffle_epi8(sc, k->ctl[p]));
}

INL __m256i q6_bterm(const block_q8_K *x, __m256i sw)
{
    return _mm256_slli_epi32(_mm256_madd_epi16(load256(x->bsums), sw), 5);
}

T void ember_kq_q6_K_avx2(EMBER_KQ_MATMUL_ARGS)
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
                __m256i a[4];
                uint16_t dh[4];
                float dxs[4];
                #pragma GCC unroll 8
                for (int i = 0; i < 4; i++) {
                    int b = b0 + (i < cnt ? i : cnt - 1);
                    const block_q6_K *blk = row + b;
                    __m128i sc = _mm_loadu_si128((const __m128i *)(const void *)blk->scales);
                    __m256i s = _mm256_sub_epi32(_mm256_setzero_si256(),
                                                 q6_bterm(x + b, _mm256_cvtepi8_epi16(sc)));
                    #pragma GCC unroll 8
                    for (int n = 0; n < 2; n++)
                        #pragma GCC unroll 8
                        for (int qi = 0; qi < 4; qi++) {
                            __m256i q = q6_quarter(blk, n, qi, &kc);
                            __m256i p = _mm256_maddubs_epi16(q, load256(x[b].qs + 128 * n + 32 * qi));
                            s = _mm256_add_epi32(s, _mm256_madd_epi16(p, q6_scale(sc, 4 * n + qi, &kc)));
                        }
                    a[i] = s;
                    dh[i] = blk->d;
                    dxs[i] = x[b].d;
                }
                __m128i isum = hsum4_256(a[0], a[1], a[2], a[3]);
                __m128 dw = _mm_cvtph_ps(_mm_loadl_epi64((const __m128i *)(const void *)dh));
                acc = fold_q6(acc, _mm_mul_ps(dw, _mm_loadu_ps(dxs)), _mm_cvtepi32_ps(isum), cnt);
            }
            y[r] = acc;
        }
        return;
    }
    /* Rows go in blocks whose weights stay in L2 while each 4-token
       activation group is reused from L1 for all of them. */
    for (int rb = r0; rb < r1; rb += ROW_BLOCK) {
        int re = r1 - rb < ROW_BLOCK ? r1 : rb + ROW_BLOCK;
        for (int t = 0; t < nt; t += 4) {
            int cnt = nt - t < 4 ? nt - t : 4;
            const block_q8_K *x[4];
            #pragma GCC unroll 8
            for (int i = 0; i < 4; i++) x[i] = act(xq, xq_stride, t + (i < cnt ? i : cnt - 1));
            for (int r = rb; r < re; r++) {
                const block_q6_K *row = (const block_q6_K *)(const void *)((const uint8_t *)w + (size_t)r * row_bytes);
                __m128 acc = _mm_setzero_ps();
                for (int b = 0; b < nb; b++) {
                    const block_q6_K *blk = row + b;
                    __m128i sc = _mm_loadu_si128((const __m128i *)(const void *)blk->scales);
                    __m256i sw = _mm256_cvtepi8_epi16(sc);
                    __m256i a[4];
                    #pragma GCC unroll 8
                    for (int i = 0; i < 4; i++)
                        a[i] = _mm256_sub_epi32(_mm256_setzero_si256(), q6_bterm(x[i] + b, sw));
                    #pragma GCC unroll 8
                    for (int n = 0; n < 2; n++)
                        #pragma GCC unroll 8
                        for (int qi = 0; qi < 4; qi++) {
                            __m256i q = q6_quarter(blk, n, qi, &kc);
                            __m256i s = q6_scale(sc, 4 * n + qi, &kc);
                            #pragma GCC unroll 8
                            for (int i = 0; i < 4; i++) {
                                __m256i p = _mm256_maddubs_epi16(q, load256(x[i][b].qs + 128 * n + 32 * qi));
                                a[i] = _mm256_add_epi32(a[i], _mm256_madd_epi16(p, s));
                            }
                        }
                    __m128i isum = hsum4_256(a[0], a[1], a[2], a[3]);
                    __m128 dw = _mm_set1_ps(_cvtsh_ss(blk->d));
                    __m128 dx = _mm_setr_ps(x[0][b].d, x[1][b].d, x[2][b].d, x[3][b].d);
                    acc = _mm_fmadd_ps(_mm_mul_ps(dw, dx), _mm_cvtepi32_ps(isum), acc);
                }
                store_tokens(y, y_stride, t, r, cnt, acc);
            }
        }
    }
}

#endif /* EMBER_SIMD */
