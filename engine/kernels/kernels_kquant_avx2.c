/* AVX2 K-quant kernels (and IQ4_XS, which sums as Q6_K does).  Same order
   of float operations as the scalar oracles (kernels_kquant_impl.h), so
   bit-identical to them.
 *
 * One 32-element piece (a Q4_K/Q5_K sub-block, or two Q6_K groups) fills a
 * ymm of u8 quants; vpmaddubsw with the s8 activations gives word pairs
 * (no saturation: 2 * 63 * 128 < 32767) and vpmaddwd by the scale words
 * folds them into the reference's 8 int32 lanes (dword l: elements 4l..4l+3
 * of every piece).  Decode (nt == 1) walks one row's super-blocks in order;
 * prefill takes 1 row x 4 tokens (each weight piece decoded once for 4
 * tokens). */
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
#include "kernels_kquant_simd.h"
#define ROW_BLOCK 16

INL __m128i hsum4_128(__m128i a, __m128i b, __m128i c, __m128i d)
{
    return _mm_hadd_epi32(_mm_hadd_epi32(a, b), _mm_hadd_epi32(c, d));
}

INL __m128i bsum_pairs(const block_q8_K *x)
{
    return _mm_hadd_epi16(_mm_loadu_si128((const __m128i *)(const void *)x->bsums),
                          _mm_loadu_si128((const __m128i *)(const void *)(x->bsums + 8)));
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

/* A block's 8 lanes of sum sc * q * x against one activation block. */
INL __m256i q45_dot(const uint8_t *qs, int five, __m256i qh0, __m256i scb, const int8_t *xqs,
                    const q45_const *k)
{
    __m256i s = _mm256_setzero_si256(), qh = qh0;
    #pragma GCC unroll 8
    for (int j = 0; j < 8; j++) {
        __m256i q = q45_sub(qs, j, five, &qh, k);
        __m256i p = _mm256_maddubs_epi16(q, load256(xqs + 32 * j));
        s = _mm256_add_epi32(s, _mm256_madd_epi16(p, _mm256_shuffle_epi8(scb, k->ctl[j])));
    }
    return s;
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
        uintptr_t pf = ember_kq_prefetch_start(w, row_bytes, r0);
        for (int r = r0; r < r1; r++) {
            const uint8_t *row = (const uint8_t *)w + (size_t)r * row_bytes;
            __m256 acc = _mm256_setzero_ps();
            __m128 accm = _mm_setzero_ps();
            float summs = 0;
            for (int b = 0; b < nb; b++) {
                const uint8_t *blk = row + (size_t)b * bb;
                ember_kq_prefetch_to(&pf, (uintptr_t)(blk + bb) + PF_KQ);
                const block_q8_K *xb = x + b;
                __m256i scb;
                __m128i m;
                q45_scales(blk, &kc, &scb, &m);
                __m256i qh = five ? load256(((const block_q5_K *)(const void *)blk)->qh)
                                  : _mm256_setzero_si256();
                uint16_t dh[2];
                memcpy(dh, blk, 4);
                float d = xb->d * _cvtsh_ss(dh[0]), dmin = -xb->d * _cvtsh_ss(dh[1]);
                __m256i s = q45_dot(blk + qs_off, five, qh, scb, xb->qs, &kc);
                acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(s), acc);
                __m128i pm = _mm_madd_epi16(bsum_pairs(xb), m);
                if (five)
                    summs = fmaf(dmin, (float)_mm_cvtsi128_si32(hsum4_128(pm, pm, pm, pm)), summs);
                else
                    accm = _mm_fmadd_ps(_mm_set1_ps(dmin), _mm_cvtepi32_ps(pm), accm);
            }
            float mf[4];
            _mm_storeu_ps(mf, accm);
            y[r] = sum8(acc) + (five ? summs : (mf[0] + mf[2]) + (mf[1] + mf[3]));
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
                __m256 acc[4];
                __m128 accm[4], summs = _mm_setzero_ps();
                #pragma GCC unroll 8
                for (int i = 0; i < 4; i++) acc[i] = _mm256_setzero_ps(), accm[i] = _mm_setzero_ps();
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
                    uint16_t dh[2];
                    memcpy(dh, blk, 4);
                    __m128 dx = _mm_setr_ps(x[0][b].d, x[1][b].d, x[2][b].d, x[3][b].d);
                    float d[4], dmin[4];
                    _mm_storeu_ps(d, _mm_mul_ps(dx, _mm_set1_ps(_cvtsh_ss(dh[0]))));
                    __m128 dm4 = _mm_mul_ps(_mm_sub_ps(_mm_setzero_ps(), dx), _mm_set1_ps(_cvtsh_ss(dh[1])));
                    _mm_storeu_ps(dmin, dm4);
                    __m128i pm[4];
                    #pragma GCC unroll 8
                    for (int i = 0; i < 4; i++) {
                        acc[i] = _mm256_fmadd_ps(_mm256_set1_ps(d[i]), _mm256_cvtepi32_ps(a[i]), acc[i]);
                        pm[i] = _mm_madd_epi16(bsum_pairs(&x[i][b]), m);
                        if (!five)
                            accm[i] = _mm_fmadd_ps(_mm_set1_ps(dmin[i]), _mm_cvtepi32_ps(pm[i]), accm[i]);
                    }
                    if (five)
                        summs = _mm_fmadd_ps(dm4, _mm_cvtepi32_ps(hsum4_128(pm[0], pm[1], pm[2], pm[3])), summs);
                }
                float sf[4];
                _mm_storeu_ps(sf, summs);
                for (int i = 0; i < cnt; i++) {
                    float mf[4];
                    _mm_storeu_ps(mf, accm[i]);
                    y[(size_t)(t + i) * y_stride + (size_t)r] =
                        sum8(acc[i]) + (five ? sf[i] : (mf[0] + mf[2]) + (mf[1] + mf[3]));
                }
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

/* Quarter qi of half n against 32 activations, per word pair: the -32
   is taken before the scale, as the reference does (exact in int16). */
INL __m256i q6_pairs(__m256i q, const int8_t *xqs, __m256i m32)
{
    __m256i xv = load256(xqs);
    return _mm256_sub_epi16(_mm256_maddubs_epi16(q, xv), _mm256_maddubs_epi16(m32, xv));
}

T void ember_kq_q6_K_avx2(EMBER_KQ_MATMUL_ARGS)
{
    const int nb = (int)(k / QK_K);
    const __m256i m32 = _mm256_set1_epi8(32);
    q6_const kc;
    q6_consts(&kc);
    if (nt == 1) {
        const block_q8_K *x = act(xq, xq_stride, 0);
        uintptr_t pf = ember_kq_prefetch_start(w, row_bytes, r0);
        for (int r = r0; r < r1; r++) {
            const block_q6_K *row = (const block_q6_K *)(const void *)((const uint8_t *)w + (size_t)r * row_bytes);
            __m256 acc = _mm256_setzero_ps();
            for (int b = 0; b < nb; b++) {
                const block_q6_K *blk = row + b;
                ember_kq_prefetch_to(&pf, (uintptr_t)(blk + 1) + PF_KQ);
                __m128i sc = _mm_loadu_si128((const __m128i *)(const void *)blk->scales);
                __m256i s = _mm256_setzero_si256();
                #pragma GCC unroll 8
                for (int n = 0; n < 2; n++)
                    #pragma GCC unroll 8
                    for (int qi = 0; qi < 4; qi++) {
                        __m256i p = q6_pairs(q6_quarter(blk, n, qi, &kc), x[b].qs + 128 * n + 32 * qi, m32);
                        s = _mm256_add_epi32(s, _mm256_madd_epi16(p, q6_scale(sc, 4 * n + qi, &kc)));
                    }
                float d = x[b].d * _cvtsh_ss(blk->d);
                acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(s), acc);
            }
            y[r] = sum8(acc);
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
                __m256 acc[4];
                #pragma GCC unroll 8
                for (int i = 0; i < 4; i++) acc[i] = _mm256_setzero_ps();
                for (int b = 0; b < nb; b++) {
                    const block_q6_K *blk = row + b;
                    __m128i sc = _mm_loadu_si128((const __m128i *)(const void *)blk->scales);
                    __m256i a[4];
                    #pragma GCC unroll 8
                    for (int i = 0; i < 4; i++) a[i] = _mm256_setzero_si256();
                    #pragma GCC unroll 8
                    for (int n = 0; n < 2; n++)
                        #pragma GCC unroll 8
                        for (int qi = 0; qi < 4; qi++) {
                            __m256i q = q6_quarter(blk, n, qi, &kc);
                            __m256i s = q6_scale(sc, 4 * n + qi, &kc);
                            #pragma GCC unroll 8
                            for (int i = 0; i < 4; i++) {
                                __m256i p = q6_pairs(q, x[i][b].qs + 128 * n + 32 * qi, m32);
                                a[i] = _mm256_add_epi32(a[i], _mm256_madd_epi16(p, s));
                            }
                        }
                    float dw = _cvtsh_ss(blk->d);
                    #pragma GCC unroll 8
                    for (int i = 0; i < 4; i++)
                        acc[i] = _mm256_fmadd_ps(_mm256_set1_ps(x[i][b].d * dw), _mm256_cvtepi32_ps(a[i]), acc[i]);
                }
                for (int i = 0; i < cnt; i++) y[(size_t)(t + i) * y_stride + (size_t)r] = sum8(acc[i]);
            }
        }
    }
}

/* ---- IQ4_XS ------------------------------------------------------------ */

/* Sub-block ib's 32 values from the code book, as s8: the low nibbles of
   its 16 bytes (elements 0..15) in the low lane, the high nibbles
   (16..31) in the high lane. */
INL __m256i iq4_xs_values(const block_iq4_xs *b, int ib, __m256i book, __m128i low4)
{
    __m128i q = _mm_loadu_si128((const __m128i *)(const void *)(b->qs + 16 * ib));
    return _mm256_shuffle_epi8(book, _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(q, 4), low4), _mm_and_si128(q, low4)));
}

/* Word pairs of value x activation, as the reference forms them: |v| (av)
   times the activation with v's sign (exact: 2 * 127 * 127 < 32767). */
INL __m256i iq4_xs_pairs(__m256i v, __m256i av, const int8_t *xqs)
{
    return _mm256_maddubs_epi16(av, _mm256_sign_epi8(load256(xqs), v));
}

INL void iq4_xs_scale_words(const block_iq4_xs *b, __m256i s[8])
{
    #pragma GCC unroll 8
    for (int ib = 0; ib < 8; ib++) s[ib] = _mm256_set1_epi16((short)ember_iq4_xs_scale(b, ib));
}

T void ember_kq_iq4_xs_avx2(EMBER_KQ_MATMUL_ARGS)
{
    const int nb = (int)(k / QK_K);
    const __m256i book = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)ember_iq4nl_values));
    const __m128i low4 = _mm_set1_epi8(0x0f);
    if (nt == 1) {
        const block_q8_K *x = act(xq, xq_stride, 0);
        uintptr_t pf = ember_kq_prefetch_start(w, row_bytes, r0);
        for (int r = r0; r < r1; r++) {
            const block_iq4_xs *row = (const block_iq4_xs *)(const void *)((const uint8_t *)w + (size_t)r * row_bytes);
            __m256 acc = _mm256_setzero_ps();
            for (int b = 0; b < nb; b++) {
                const block_iq4_xs *blk = row + b;
                ember_kq_prefetch_to(&pf, (uintptr_t)(blk + 1) + PF_KQ);
                __m256i sc[8], s = _mm256_setzero_si256();
                iq4_xs_scale_words(blk, sc);
                #pragma GCC unroll 8
                for (int ib = 0; ib < 8; ib++) {
                    __m256i v = iq4_xs_values(blk, ib, book, low4);
                    __m256i p = iq4_xs_pairs(v, _mm256_abs_epi8(v), x[b].qs + 32 * ib);
                    s = _mm256_add_epi32(s, _mm256_madd_epi16(p, sc[ib]));
                }
                float d = x[b].d * _cvtsh_ss(blk->d);
                acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(s), acc);
            }
            y[r] = sum8(acc);
        }
        return;
    }
    /* as Q6_K: row blocks kept in L2, each weight piece decoded once for
       4 tokens */
    for (int rb = r0; rb < r1; rb += ROW_BLOCK) {
        int re = r1 - rb < ROW_BLOCK ? r1 : rb + ROW_BLOCK;
        for (int t = 0; t < nt; t += 4) {
            int cnt = nt - t < 4 ? nt - t : 4;
            const block_q8_K *x[4];
            #pragma GCC unroll 8
            for (int i = 0; i < 4; i++) x[i] = act(xq, xq_stride, t + (i < cnt ? i : cnt - 1));
            for (int r = rb; r < re; r++) {
                const block_iq4_xs *row = (const block_iq4_xs *)(const void *)((const uint8_t *)w + (size_t)r * row_bytes);
                __m256 acc[4];
                #pragma GCC unroll 8
                for (int i = 0; i < 4; i++) acc[i] = _mm256_setzero_ps();
                for (int b = 0; b < nb; b++) {
                    const block_iq4_xs *blk = row + b;
                    __m256i sc[8], a[4];
                    iq4_xs_scale_words(blk, sc);
                    #pragma GCC unroll 8
                    for (int i = 0; i < 4; i++) a[i] = _mm256_setzero_si256();
                    #pragma GCC unroll 8
                    for (int ib = 0; ib < 8; ib++) {
                        __m256i v = iq4_xs_values(blk, ib, book, low4), av = _mm256_abs_epi8(v);
                        #pragma GCC unroll 8
                        for (int i = 0; i < 4; i++) {
                            __m256i p = iq4_xs_pairs(v, av, x[i][b].qs + 32 * ib);
                            a[i] = _mm256_add_epi32(a[i], _mm256_madd_epi16(p, sc[ib]));
                        }
                    }
                    float dw = _cvtsh_ss(blk->d);
                    #pragma GCC unroll 8
                    for (int i = 0; i < 4; i++)
                        acc[i] = _mm256_fmadd_ps(_mm256_set1_ps(x[i][b].d * dw), _mm256_cvtepi32_ps(a[i]), acc[i]);
                }
                for (int i = 0; i < cnt; i++) y[(size_t)(t + i) * y_stride + (size_t)r] = sum8(acc[i]);
            }
        }
    }
}

#endif /* EMBER_SIMD */
