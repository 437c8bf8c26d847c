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

/* ---- prefill by vpdpbusd ----------------------------------------------
 * A super-block's scale goes into its weights once per 16 tokens: each
 * 128-bit lane of a chunk is one 16-element group, so vpshufb spreads the
 * group's scale over its bytes, and three masked adds by the quant's bits
 * make the byte q * s (Q2_K: 0..45), or for Q3_K 124 + (q - 4) * s (0..252:
 * (q - 4) * s alone reaches 128, past a signed byte).  Then a token's chunk
 * is one vpdpbusd of those unsigned bytes and its signed activations, as
 * they lie in its Q8_K row, into the lanes: sum over the lane's groups of
 * s * (sum q x), the integer the reference forms, exactly; Q3_K's lanes
 * start from -124 * (the lane's activations' sum), made once per token
 * block.  The block's activations are laid out once in pairs of tokens,
 * each 32-element piece as [token a's | token b's] (q23_tb.xp), against
 * the piece's weights in both halves: one vpdpbusd then serves two tokens
 * and leaves token a's 8 lanes below token b's, so a pair's convert, fma
 * and (Q2_K) min term are one each, with no fold of two tokens' lanes
 * (which this replaced: Xeon VM pp128, Q2_K 1.17-1.27x, Q3_K_M 1.10-1.14x).
 * Each token's float steps are the reference's in block order: bit for
 * bit (test_kernels_kquant). */
#define Q23_TB 16
#define Q23_MAXNB 128   /* super-blocks a row the token block's buffers hold */

typedef struct {
    int8_t xp[Q23_TB / 2][Q23_MAXNB][8][64]; /* a pair's activations, piece by piece */
    int32_t c124[Q23_TB / 2][Q23_MAXNB][16]; /* Q3_K: -124 x each lane's activations */
    float dx2[Q23_TB / 2][Q23_MAXNB][16];    /* a pair's two d, 8 lanes each */
    int16_t bs2[Q23_TB / 2][Q23_MAXNB][32];  /* Q2_K: a pair's two bsums */
} q23_tok;

static _Thread_local q23_tok q23_tb __attribute__((aligned(64)));

/* lane L of chunk c: 16 bytes of index 4c + L (vpshufb within the lane) */
INL __m512i lane_sel(int c)
{
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set_m128i(_mm_set1_epi8((char)(4 * c + 1)), _mm_set1_epi8((char)(4 * c)))),
                              _mm256_set_m128i(_mm_set1_epi8((char)(4 * c + 3)), _mm_set1_epi8((char)(4 * c + 2))), 1);
}

/* The super-block's chunks as unsigned bytes of q * s (+ Q3_K's offset) */
INL void q23_weights(const int three, const uint8_t *blk, const q23_const *k, const __m512i sel[4], __m512i wq[4],
                     __m256i *mn, float *d, float *dmin)
{
    const __m512i one = _mm512_set1_epi8(1), two = _mm512_set1_epi8(2);
    __m512i sb, hm = _mm512_setzero_si512();
    const uint8_t *qs;
    if (three) {
        const block_q3_K *b = (const block_q3_K *)(const void *)blk;
        sb = _mm512_broadcast_i32x4(_mm256_cvtepi16_epi8(q3_scale_words(b->scales)));
        hm = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(const void *)b->hmask));
        qs = b->qs;
        *d = _cvtsh_ss(b->d);
        *dmin = 0.0f;
    } else {
        const block_q2_K *b = (const block_q2_K *)(const void *)blk;
        const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)b->scales);
        sb = _mm512_broadcast_i32x4(_mm_and_si128(v, _mm_set1_epi8(0x0f)));
        *mn = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(v, 4), _mm_set1_epi8(0x0f)));
        qs = b->qs;
        *d = _cvtsh_ss(b->d);
        *dmin = _cvtsh_ss(b->dmin);
    }
    _Pragma("GCC unroll 4") for (int c = 0; c < 4; c++) {
        const __m512i bits = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(const void *)(qs + 32 * (c / 2))));
        const __m512i q = _mm512_and_si512(_mm512_srlv_epi64(bits, k->cnt[c % 2]), k->m3);
        const __m512i sc = _mm512_shuffle_epi8(sb, sel[c]), s2 = _mm512_add_epi8(sc, sc);
        __m512i w;
        if (three) {   /* 124 - 4s, + 4s where the high bit is set, + low bits x s */
            const __m512i s4 = _mm512_add_epi8(s2, s2);
            w = _mm512_sub_epi8(_mm512_set1_epi8(124), s4);
            w = _mm512_mask_add_epi8(w, _mm512_test_epi8_mask(hm, k->hb[c]), w, s4);
        } else {
            w = _mm512_setzero_si512();
        }
        w = _mm512_mask_add_epi8(w, _mm512_test_epi8_mask(q, one), w, sc);
        wq[c] = _mm512_mask_add_epi8(w, _mm512_test_epi8_mask(q, two), w, s2);
    }
}

INL void q23_rows(const int three, const void *w, size_t row_bytes, int nb, int r0, int r1, const int np, int tn,
                  int t0, float *y, size_t y_stride)
{
    const size_t bb = three ? sizeof(block_q3_K) : sizeof(block_q2_K);
    q23_const kc;
    q23_consts(&kc);
    const __m512i sel[4] = {lane_sel(0), lane_sel(1), lane_sel(2), lane_sel(3)};
    for (int r = r0; r < r1; r++) {
        const uint8_t *row = (const uint8_t *)w + (size_t)r * row_bytes;
        __m512 acc[Q23_TB / 2];
        _Pragma("GCC unroll 8") for (int p = 0; p < Q23_TB / 2; p++) acc[p] = _mm512_setzero_ps();
        for (int i = 0; i < nb; i++) {
            __m512i wq[4];
            __m256i mn = _mm256_setzero_si256();
            float d, dmin;
            q23_weights(three, row + (size_t)i * bb, &kc, sel, wq, &mn, &d, &dmin);
            const __m512 dv = _mm512_set1_ps(d), dmv = _mm512_set1_ps(dmin);
            const __m512i mn2 = _mm512_broadcast_i64x4(mn);
            __m512i wd[8];   /* piece 2c + h of chunk c in both halves */
            _Pragma("GCC unroll 4") for (int c = 0; c < 4; c++) {
                wd[2 * c] = _mm512_shuffle_i64x2(wq[c], wq[c], _MM_SHUFFLE(1, 0, 1, 0));
                wd[2 * c + 1] = _mm512_shuffle_i64x2(wq[c], wq[c], _MM_SHUFFLE(3, 2, 3, 2));
            }
            _Pragma("GCC unroll 8") for (int p = 0; p < np; p++) {
                __m512i l = three ? _mm512_load_si512((const void *)q23_tb.c124[p][i]) : _mm512_setzero_si512();
                _Pragma("GCC unroll 8") for (int m = 0; m < 8; m++)
                    l = _mm512_dpbusd_epi32(l, wd[m], _mm512_load_si512((const void *)q23_tb.xp[p][i][m]));
                const __m512 dx = _mm512_load_ps(q23_tb.dx2[p][i]);
                if (!three) {   /* the mins first: fma(-(dx dmin), mins . bsums, acc) */
                    const __m512i pm = _mm512_madd_epi16(mn2, _mm512_load_si512((const void *)q23_tb.bs2[p][i]));
                    acc[p] = _mm512_fnmadd_ps(_mm512_mul_ps(dx, dmv), _mm512_cvtepi32_ps(pm), acc[p]);
                }
                acc[p] = _mm512_fmadd_ps(_mm512_mul_ps(dx, dv), _mm512_cvtepi32_ps(l), acc[p]);
            }
        }
        for (int t = 0; t < tn; t++) {
            float a[16];
            _mm512_storeu_ps(a, acc[t / 2]);
            y[(size_t)(t0 + t) * y_stride + (size_t)r] = ember_sum8(a + 8 * (t % 2));
        }
    }
}

INL void q23_prefill(const int three, EMBER_KQ_MATMUL_ARGS)
{
    const int nb = (int)(k / QK_K);
    const __m512i c124 = _mm512_set1_epi8(124);
    for (int t0 = 0; t0 < nt; t0 += Q23_TB) {
        const int tn = nt - t0 < Q23_TB ? nt - t0 : Q23_TB, np = (tn + 1) / 2;
        const block_q8_K *x[Q23_TB];
        for (int t = 0; t < Q23_TB; t++) x[t] = act(xq, xq_stride, t0 + (t < tn ? t : tn - 1));
        for (int t = 0; t < 2 * np; t++)
            for (int i = 0; i < nb; i++) {
                _mm256_store_ps(&q23_tb.dx2[t / 2][i][8 * (t % 2)], _mm256_set1_ps(x[t][i].d));
                for (int m = 0; m < 8; m++)
                    _mm256_store_si256((__m256i *)(void *)&q23_tb.xp[t / 2][i][m][32 * (t % 2)],
                                       _mm256_loadu_si256((const __m256i *)(const void *)(x[t][i].qs + 32 * m)));
                if (!three)
                    _mm256_store_si256((__m256i *)(void *)&q23_tb.bs2[t / 2][i][16 * (t % 2)],
                                       _mm256_loadu_si256((const __m256i *)(const void *)x[t][i].bsums));
            }
        if (three)   /* each pair's -124 x its lanes' activations, as the lanes lie */
            for (int p = 0; p < np; p++)
                for (int i = 0; i < nb; i++) {
                    __m512i s = _mm512_setzero_si512();
                    for (int m = 0; m < 8; m++) s = _mm512_dpbusd_epi32(s, c124, _mm512_load_si512((const void *)q23_tb.xp[p][i][m]));
                    _mm512_store_si512((void *)q23_tb.c124[p][i], _mm512_sub_epi32(_mm512_setzero_si512(), s));
                }
        /* a whole block's 8 pairs with a constant count: their sums stay in registers */
        if (np == Q23_TB / 2) q23_rows(three, w, row_bytes, nb, r0, r1, Q23_TB / 2, tn, t0, y, y_stride);
        else q23_rows(three, w, row_bytes, nb, r0, r1, np, tn, t0, y, y_stride);
    }
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
    if (nb <= Q23_MAXNB) {
        q23_prefill(three, w, row_bytes, k, r0, r1, xq, xq_stride, nt, y, y_stride);
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
