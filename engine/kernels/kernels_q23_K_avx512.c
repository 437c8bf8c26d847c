/* AVX-512 (BW/VL/VNNI) Q2_K / Q3_K kernels.  Same order of float operations
   as the scalar oracles (kernels_kquant_impl.h), so bit-identical to them.
 *
 * A 64-element chunk c (pieces 2c and 2c+1: half c / 2, bit pairs 4(c % 2)
 * and 4(c % 2) + 2 of its 32 qs bytes, one per 256-bit half) fills a zmm of
 * u8 quants; vpmaddubsw with the s8 activations gives word pairs (no
 * saturation: 2 * 7 * 128 < 32767), vpdpwssd by the scale words (one per
 * 16 elements) accumulates int32, and the two 256-bit halves added are the
 * reference's 8 lanes.  Q3_K's quants enter as q + 4 and 4 x the
 * activation's pairs is taken off before the scale (exact in int16).
 * Decode walks one row's super-blocks in order with the two-level prefetch;
 * prefill decodes each super-block once for up to 8 tokens. */
#include "config.h"

#ifdef EMBER_SIMD
#include <stddef.h>
#include <string.h>

#include "dtype.h"
#include "kernels_kquant_impl.h"
#include "simd.h"

#define T EMBER_TARGET_AVX512
#define INL static inline __attribute__((always_inline)) T
#include "kernels_kquant_simd.h"
#define ROW_BLOCK 16
/* Decode keeps Q3_K's 4 x activation pairs for up to this many super-blocks
   (32 KiB on the stack); longer rows compute them in place. */
#define X4_BLOCKS 128

typedef struct {
    __m512i idx[4], cnt[2], hb[4], m3, four;
} q23_const;

INL void q23_consts(q23_const *k)
{
    #pragma GCC unroll 4
    for (int c = 0; c < 4; c++) {
        /* word w of chunk c: the scale of its 16-element group 4c + w / 8 */
        short ix[32];
        for (int w = 0; w < 32; w++) ix[w] = (short)(4 * c + w / 8);
        k->idx[c] = _mm512_loadu_si512((const void *)ix);
        /* Q3_K: the hmask bit of piece 2c (low half) and 2c + 1 (high) */
        k->hb[c] = _mm512_inserti64x4(_mm512_set1_epi8((char)(1 << (2 * c))),
                                      _mm256_set1_epi8((char)(1 << (2 * c + 1))), 1);
    }
    k->cnt[0] = _mm512_set_epi64(2, 2, 2, 2, 0, 0, 0, 0);
    k->cnt[1] = _mm512_set_epi64(6, 6, 6, 6, 4, 4, 4, 4);
    k->m3 = _mm512_set1_epi8(3);
    k->four = _mm512_set1_epi8(4);
}

INL __m256 lanes8(__m512i a)
{
    return _mm256_cvtepi32_ps(_mm256_add_epi32(_mm512_castsi512_si256(a), _mm512_extracti64x4_epi64(a, 1)));
}

typedef struct {
    __m512i q[4], s[4];   /* chunk c's quants and scale words */
    __m256i mn;           /* Q2_K: the 16 mins as words */
    float d, dmin;
} q23_dec;

INL void q23_decode(const int three, const uint8_t *blk, const q23_const *k, q23_dec *o)
{
    __m256i scw;
    if (three) {
        const block_q3_K *b = (const block_q3_K *)(const void *)blk;
        scw = q3_scale_words(b->scales);
        __m512i hm = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(const void *)b->hmask));
        #pragma GCC unroll 4
        for (int c = 0; c < 4; c++) {
            __m512i bits = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(const void *)(b->qs + 32 * (c / 2))));
            __m512i q = _mm512_and_si512(_mm512_srlv_epi64(bits, k->cnt[c % 2]), k->m3);
            o->q[c] = _mm512_mask_add_epi8(q, _mm512_test_epi8_mask(hm, k->hb[c]), q, k->four);
        }
        o->d = _cvtsh_ss(b->d);
        o->dmin = 0.0f;
        o->mn = _mm256_setzero_si256();
    } else {
        const block_q2_K *b = (const block_q2_K *)(const void *)blk;
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)b->scales);
        scw = _mm256_cvtepu8_epi16(_mm_and_si128(v, _mm_set1_epi8(0x0f)));
        o->mn = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(v, 4), _mm_set1_epi8(0x0f)));
        #pragma GCC unroll 4
        for (int c = 0; c < 4; c++) {
            __m512i bits = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(const void *)(b->qs + 32 * (c / 2))));
            o->q[c] = _mm512_and_si512(_mm512_srlv_epi64(bits, k->cnt[c % 2]), k->m3);
        }
        o->d = _cvtsh_ss(b->d);
        o->dmin = _cvtsh_ss(b->dmin);
    }
    __m512i sz = _mm512_zextsi256_si512(scw);
    #pragma GCC unroll 4
    for (int c = 0; c < 4; c++) o->s[c] = _mm512_permutexvar_epi16(k->idx[c], sz);
}

/* acc (8 lanes) after one super-block of one token; x4 (Q3_K) holds 4 x
   the activation's pairs per chunk, or is NULL. */
INL __m256 q23_step(const int three, const q23_dec *o, const block_q8_K *x, const __m512i *x4,
                    const q23_const *k, __m256 acc)
{
    __m512i a = _mm512_setzero_si512();
    #pragma GCC unroll 4
    for (int c = 0; c < 4; c++) {
        __m512i xc = _mm512_loadu_si512((const void *)(x->qs + 64 * c));
        __m512i p = _mm512_maddubs_epi16(o->q[c], xc);
        if (three) p = _mm512_sub_epi16(p, x4 ? x4[c] : _mm512_maddubs_epi16(k->four, xc));
        a = _mm512_dpwssd_epi32(a, p, o->s[c]);
    }
    if (!three) {
        __m256i pm = _mm256_madd_epi16(o->mn, _mm256_loadu_si256((const __m256i *)(const void *)x->bsums));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(-x->d * o->dmin), _mm256_cvtepi32_ps(pm), acc);
    }
    return _mm256_fmadd_ps(_mm256_set1_ps(x->d * o->d), lanes8(a), acc);
}

INL void q23_matmul(const int three, EMBER_KQ_MATMUL_ARGS)
{
    const size_t bb = three ? sizeof(block_q3_K) : sizeof(block_q2_K);
    const int nb = (int)(k / QK_K);
    q23_const kc;
    q23_consts(&kc);
    if (nt == 1) {
        const block_q8_K *x = act(xq, xq_stride, 0);
        const int keep = three && nb <= X4_BLOCKS;
        __m512i x4[keep ? 4 * nb : 1];
        if (keep)
            for (int i = 0; i < 4 * nb; i++)
                x4[i] = _mm512_maddubs_epi16(kc.four, _mm512_loadu_si512((const void *)(x[i / 4].qs + 64 * (i % 4))));
        uintptr_t pf = ember_kq_prefetch_start(w, row_bytes, r0);
        for (int r = r0; r < r1; r++) {
            const uint8_t *row = (const uint8_t *)w + (size_t)r * row_bytes;
            __m256 acc = _mm256_setzero_ps();
            for (int b = 0; b < nb; b++) {
                const uint8_t *blk = row + (size_t)b * bb;
                ember_kq_prefetch_to(&pf, (uintptr_t)(blk + bb) + PF_KQ);
                q23_dec o;
                q23_decode(three, blk, &kc, &o);
                acc = q23_step(three, &o, x + b, keep ? x4 + 4 * b : NULL, &kc, acc);
            }
            y[r] = sum8(acc);
        }
        return;
    }
    /* Rows go in blocks whose weights stay in L2 while each group of up to
       8 tokens' activations is reused from L1 for all of them. */
    for (int rb = r0; rb < r1; rb += ROW_BLOCK) {
        int re = r1 - rb < ROW_BLOCK ? r1 : rb + ROW_BLOCK;
        for (int t = 0; t < nt; t += 8) {
            int cnt = nt - t < 8 ? nt - t : 8;
            const block_q8_K *x[8];
            for (int i = 0; i < 8; i++) x[i] = act(xq, xq_stride, t + (i < cnt ? i : cnt - 1));
            for (int r = rb; r < re; r++) {
                const uint8_t *row = (const uint8_t *)w + (size_t)r * row_bytes;
                __m256 acc[8];
                #pragma GCC unroll 8
                for (int i = 0; i < 8; i++) acc[i] = _mm256_setzero_ps();
                for (int b = 0; b < nb; b++) {
                    q23_dec o;
                    q23_decode(three, row + (size_t)b * bb, &kc, &o);
                    #pragma GCC unroll 8
                    for (int i = 0; i < 8; i++) {
                        if (i >= cnt) break;
                        acc[i] = q23_step(three, &o, x[i] + b, NULL, &kc, acc[i]);
                    }
                }
                for (int i = 0; i < cnt; i++) y[(size_t)(t + i) * y_stride + (size_t)r] = sum8(acc[i]);
            }
        }
    }
}

T void ember_kq_q2_K_avx512(EMBER_KQ_MATMUL_ARGS)
{
    q23_matmul(0, w, row_bytes, k, r0, r1, xq, xq_stride, nt, y, y_stride);
}

T void ember_kq_q3_K_avx512(EMBER_KQ_MATMUL_ARGS)
{
    q23_matmul(1, w, row_bytes, k, r0, r1, xq, xq_stride, nt, y, y_stride);
}

#endif /* EMBER_SIMD */
