/* AVX2 Q2_K / Q3_K kernels.  Same order of float operations as the scalar
   oracles (kernels_kquant_impl.h), so bit-identical to them.
 *
 * A 32-element piece (quarter j of half n: qs[32n..] >> 2j) fills a ymm of
 * u8 quants; vpmaddubsw with the s8 activations gives word pairs (no
 * saturation: 2 * 7 * 128 < 32767) and vpmaddwd by the piece's two scale
 * words (one per 16 elements: low lane, high lane) folds them into the
 * reference's 8 int32 lanes.  Q3_K's quants enter as q + 4 (0..7), and 4 x
 * the activation's pairs is taken off before the scale, exact in int16.
 * Decode walks one row's super-blocks in order with the two-level prefetch;
 * prefill takes 1 row x 4 tokens (each piece decoded once for 4 tokens). */
#include "config.h"

#ifdef EMBER_SIMD
#include <stddef.h>
#include <string.h>

#include "dtype.h"
#include "kernels_kquant_impl.h"
#include "simd.h"

#define T EMBER_TARGET_AVX2
#define INL static inline __attribute__((always_inline)) T
#include "kernels_kquant_simd.h"
#define ROW_BLOCK 16
/* Decode keeps Q3_K's 4 x activation pairs for up to this many super-blocks
   (32 KiB on the stack); longer rows compute them in place. */
#define X4_BLOCKS 128

typedef struct {
    __m256i ctl[4], m3, one, four;
} q23_const;

INL void q23_consts(q23_const *k)
{
    /* piece j of a half: words 2j (low lane) and 2j + 1 (high lane) of the
       half's 8 scale words, broadcast over the lane */
    #pragma GCC unroll 4
    for (int j = 0; j < 4; j++) {
        char a = (char)(4 * j), b = (char)(4 * j + 2);
        k->ctl[j] = _mm256_setr_epi8(a, (char)(a + 1), a, (char)(a + 1), a, (char)(a + 1), a, (char)(a + 1),
                                     a, (char)(a + 1), a, (char)(a + 1), a, (char)(a + 1), a, (char)(a + 1),
                                     b, (char)(b + 1), b, (char)(b + 1), b, (char)(b + 1), b, (char)(b + 1),
                                     b, (char)(b + 1), b, (char)(b + 1), b, (char)(b + 1), b, (char)(b + 1));
    }
    k->m3 = _mm256_set1_epi8(3);
    k->one = _mm256_set1_epi8(1);
    k->four = _mm256_set1_epi8(4);
}

/* One row against tb tokens' activations; out[t] its results.  x4 (decode,
   Q3_K) holds 4 x each activation piece's pairs, or is NULL. */
INL void q23_row(const int three, const uint8_t *row, int nb, const block_q8_K *const x[4], const int tb,
                 const __m256i *x4, uintptr_t *pf, float out[4], const q23_const *k)
{
    const size_t bb = three ? sizeof(block_q3_K) : sizeof(block_q2_K);
    const size_t qs_off = three ? offsetof(block_q3_K, qs) : offsetof(block_q2_K, qs);
    const size_t d_off = three ? offsetof(block_q3_K, d) : offsetof(block_q2_K, d);
    __m256 acc[4];
    #pragma GCC unroll 4
    for (int t = 0; t < 4; t++) acc[t] = _mm256_setzero_ps();
    for (int b = 0; b < nb; b++) {
        const uint8_t *blk = row + (size_t)b * bb;
        if (pf) ember_kq_prefetch_to(pf, (uintptr_t)(blk + bb) + PF_KQ);
        __m256i scw, mnw = _mm256_setzero_si256();
        if (three) {
            scw = q3_scale_words(blk + offsetof(block_q3_K, scales));
        } else {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)blk);
            scw = _mm256_cvtepu8_epi16(_mm_and_si128(v, _mm_set1_epi8(0x0f)));
            mnw = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(v, 4), _mm_set1_epi8(0x0f)));
        }
        const __m256i sl[2] = {_mm256_permute2x128_si256(scw, scw, 0x00), _mm256_permute2x128_si256(scw, scw, 0x11)};
        const __m256i hm = three ? load256(blk) : _mm256_setzero_si256();
        __m256i a[4];
        #pragma GCC unroll 4
        for (int t = 0; t < 4; t++) a[t] = _mm256_setzero_si256();
        #pragma GCC unroll 2
        for (int n = 0; n < 2; n++) {
            __m256i bits = load256(blk + qs_off + 32 * n);
            #pragma GCC unroll 4
            for (int j = 0; j < 4; j++) {
                const int pi = 4 * n + j;
                __m256i q = _mm256_and_si256(_mm256_srli_epi16(bits, 2 * j), k->m3);
                if (three)
                    q = _mm256_or_si256(q, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hm, pi), k->one), 2));
                __m256i sc = _mm256_shuffle_epi8(sl[n], k->ctl[j]);
                #pragma GCC unroll 4
                for (int t = 0; t < tb; t++) {
                    __m256i xv = load256(x[t][b].qs + 32 * pi);
                    __m256i p = _mm256_maddubs_epi16(q, xv);
                    if (three) p = _mm256_sub_epi16(p, x4 ? x4[8 * b + pi] : _mm256_maddubs_epi16(k->four, xv));
                    a[t] = _mm256_add_epi32(a[t], _mm256_madd_epi16(p, sc));
                }
            }
        }
        uint16_t dh[2];
        memcpy(dh, blk + d_off, three ? 2 : 4);
        float dw = _cvtsh_ss(dh[0]);
        float dmw = three ? 0.0f : _cvtsh_ss(dh[1]);
        #pragma GCC unroll 4
        for (int t = 0; t < tb; t++) {
            const block_q8_K *xb = &x[t][b];
            if (!three) {
                __m256i pm = _mm256_madd_epi16(mnw, load256(xb->bsums));
                acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(-xb->d * dmw), _mm256_cvtepi32_ps(pm), acc[t]);
            }
            acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(xb->d * dw), _mm256_cvtepi32_ps(a[t]), acc[t]);
        }
    }
    #pragma GCC unroll 4
    for (int t = 0; t < tb; t++) out[t] = sum8(acc[t]);
}

INL void q23_matmul(const int three, EMBER_KQ_MATMUL_ARGS)
{
    const int nb = (int)(k / QK_K);
    q23_const kc;
    q23_consts(&kc);
    if (nt == 1) {
        const block_q8_K *x[4] = {act(xq, xq_stride, 0)};
        x[1] = x[2] = x[3] = x[0];
        const int keep = three && nb <= X4_BLOCKS;
        __m256i x4[keep ? 8 * nb : 1];
        if (keep)
            for (int i = 0; i < 8 * nb; i++)
                x4[i] = _mm256_maddubs_epi16(kc.four, load256(x[0][i / 8].qs + 32 * (i % 8)));
        uintptr_t pf = ember_kq_prefetch_start(w, row_bytes, r0);
        for (int r = r0; r < r1; r++) {
            float out[4];
            q23_row(three, (const uint8_t *)w + (size_t)r * row_bytes, nb, x, 1, keep ? x4 : NULL, &pf, out, &kc);
            y[r] = out[0];
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
            for (int i = 0; i < 4; i++) x[i] = act(xq, xq_stride, t + (i < cnt ? i : cnt - 1));
            for (int r = rb; r < re; r++) {
                float out[4];
                q23_row(three, (const uint8_t *)w + (size_t)r * row_bytes, nb, x, 4, NULL, NULL, out, &kc);
                for (int i = 0; i < cnt; i++) y[(size_t)(t + i) * y_stride + (size_t)r] = out[i];
            }
        }
    }
}

T void ember_kq_q2_K_avx2(EMBER_KQ_MATMUL_ARGS)
{
    q23_matmul(0, w, row_bytes, k, r0, r1, xq, xq_stride, nt, y, y_stride);
}

T void ember_kq_q3_K_avx2(EMBER_KQ_MATMUL_ARGS)
{
    q23_matmul(1, w, row_bytes, k, r0, r1, xq, xq_stride, nt, y, y_stride);
}

#endif /* EMBER_SIMD */
