/* Packed Q4_K, Q5_K and IQ4_XS: 16-row tiles for a broadcast-and-multiply GEMM
   (doc/DESIGN.md, "Packed Q4_K, Q5_K and IQ4_XS layouts"), bit-identical to the
   compressed Q4_K, Q5_K and IQ4_XS kernels.
 *
 * Why a tile: the compressed kernel reads one row's super-block and spends
 * about as many shuffles, converts and horizontal adds per row as it does
 * multiply-adds (each row's 8 reference lanes sit in one register and must
 * be folded, its scales expanded, its min term paired).  In a tile the
 * dword r of every vector is row r, so each instruction does the same step
 * for 16 rows: lane l of sub-block j is one vector of 16 rows x 4 quants,
 * multiplied by one broadcast dword of activations, its scale one vector of
 * 16 rows' scales, and the float work per super-block (8 converts, 8 FMAs,
 * the mins) is per 16 rows instead of per row.
 *
 * Record (one per super-block per tile, Q4X_RECORD bytes):
 *   qs  [0, 2048):   32 chunks of 64 bytes, chunk 4j + h (sub-block j,
 *                    h = 0..3): row r's 4 bytes at r * 4, byte i holding
 *                    element 32j + 4h + i in its low nibble and element
 *                    32j + 4(h + 4) + i in its high nibble, so one load
 *                    and a mask / a shift give lanes h and h + 4;
 *   sc  [2048, 2176): sub-block j's 6-bit scale of row r at 16j + r;
 *   mn  [2176, 2304): pairs: byte 32k + 2r + e = min 2k + e of row r, so
 *                    that widened to words a dword is (m_2k, m_2k+1);
 *   d   [2304, 2336): row r's fp16 d;  dmin [2336, 2368): its fp16 dmin.
 * 148 bytes a row per super-block against the file's 144: the scales and
 * mins decoded out of their 12-byte form.  Rows past the matrix are zero.
 * Q5_K (q5_Kx16) appends the fifth bits, qh [2368, 2880): chunk j, byte
 * r * 4 + i, bit l = the fifth bit of element 32j + 4l + i of row r, so
 * lane l's vector of sub-block j takes bit l of one load: 180 bytes a row
 * against the file's 176.
 * IQ4_XS (iq4_xsx16) keeps the same qs chunks, of code-book indices
 * (element e's nibble in the file: qs[16 (e / 32) + e % 16], low for
 * e % 32 < 16), then sc [2048, 2176): sub-block j's signed scale ls - 32
 * of row r at 16j + r, and d [2176, 2208): row r's fp16 d: 138 bytes a row
 * against the file's 136.  The kernel looks the indices up in the code
 * book (vpshufb), multiplies their magnitudes by activations carrying the
 * value's sign (vpmaddubsw takes an unsigned and a signed operand), and
 * has no min term.
 *
 * Numerics (kernels_kquant_impl.h): lane[l] = sum_j sc_j * dot4 in int32,
 * P[k] = m_2k q8s_2k + m_2k+1 q8s_2k+1, then per super-block
 * acc[l] = fmaf(dx * d_w, lane[l], acc[l]) and accm[k] = fmaf(-dx * dmin_w,
 * P[k], accm[k]), y = sum8(acc) + ((accm0 + accm2) + (accm1 + accm3)).
 * Q5_K folds its min term as one sum: summs = fmaf(-dx * dmin_w,
 * (float)((P0 + P1) + (P2 + P3)), summs), y = sum8(acc) + summs.
 * IQ4_XS: lane[l] as above with the code book's value for q and the
 * signed scale, acc[l] = fmaf(dx * d_w, lane[l], acc[l]), y = sum8(acc).
 * The integer parts are exact, so any grouping of them is the same. */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "dtype.h"
#include "kernels.h"
#include "kernels_kquant_impl.h"
#include "simd.h"
#include "kernels_packed_tiles.h"

#include "kernels_packed_q45_K.h"

size_t ember_pack_q4_K_bytes(int rows, int64_t k) { return ember_tiles_bytes(rows, k, QK_K, REC); }

size_t ember_pack_q5_K_bytes(int rows, int64_t k) { return ember_tiles_bytes(rows, k, QK_K, REC5); }

size_t ember_pack_iq4_xs_bytes(int rows, int64_t k) { return ember_tiles_bytes(rows, k, QK_K, RECI); }

/* Q4_K and Q5_K blocks share d, dmin and scales at 0, 2, 4; their low 4
   bits of element e (0..15) sit in qs at qs_off. */
static int low4(const uint8_t *qs, int e)
{
    int c = e / 64, l = e % 32;
    return (e % 64) < 32 ? qs[32 * c + l] & 0x0f : qs[32 * c + l] >> 4;
}

/* Where a block's parts are: Q4_K (five = 0) or Q5_K. */
static size_t blk_bytes(int five) { return five ? sizeof(block_q5_K) : sizeof(block_q4_K); }
static size_t qs_off(int five) { return five ? offsetof(block_q5_K, qs) : offsetof(block_q4_K, qs); }

/* Row r's decoded scales and mins and its d, dmin, into a record (both
   packers). */
static void put_meta(uint8_t *rec, int r, const uint8_t *blk)
{
    for (int j = 0; j < 8; j++) {
        int sc, m;
        ember_scale_min_k4(j, blk + 4, &sc, &m);
        rec[SC + 16 * j + r] = (uint8_t)sc;
        rec[MN + 32 * (j / 2) + 2 * r + j % 2] = (uint8_t)m;
    }
    memcpy(rec + DW + 2 * r, blk, 2);
    memcpy(rec + DM + 2 * r, blk + 2, 2);
}

/* Q5_K: row r's fifth bits into the record's qh chunks (both packers):
   the block's qh[e % 32] holds element e's at bit e / 32. */
static void put_qh(uint8_t *rec, int r, const uint8_t *blk)
{
    const uint8_t *qh = blk + offsetof(block_q5_K, qh);
    for (int j = 0; j < 8; j++)
        for (int i = 0; i < 4; i++) {
            uint8_t v = 0;
            for (int l = 0; l < 8; l++) v |= (uint8_t)(((qh[4 * l + i] >> j) & 1) << l);
            rec[QH + 64 * j + r * 4 + i] = v;
        }
}

/* The oracle: element by element, as the comment at the top lays it out. */
static void pack_ref(int five, const void *src, size_t row_bytes, int rows, int64_t k, void *dst, int t0, int t1)
{
    const size_t rb = five ? REC5 : REC;
    int64_t nb = k / QK_K;
    ember_tile_range(rows, &t0, &t1);
    for (int t = t0; t < t1; t++) {
        uint8_t *rec = (uint8_t *)dst + (size_t)t * (size_t)nb * rb;
        for (int64_t b = 0; b < nb; b++, rec += rb) {
            memset(rec, 0, rb);
            for (int r = 0; r < ROWS; r++) {
                int row = t * ROWS + r;
                if (row >= rows) break;
                const uint8_t *blk = (const uint8_t *)src + (size_t)row * row_bytes + (size_t)b * blk_bytes(five);
                const uint8_t *qs = blk + qs_off(five);
                for (int j = 0; j < 8; j++)
                    for (int h = 0; h < 4; h++)
                        for (int i = 0; i < 4; i++)
                            rec[QS + (4 * j + h) * 64 + r * 4 + i] =
                                (uint8_t)(low4(qs, 32 * j + 4 * h + i) | low4(qs, 32 * j + 4 * (h + 4) + i) << 4);
                put_meta(rec, r, blk);
                if (five) put_qh(rec, r, blk);
            }
        }
    }
}

void ember_pack_q4_K_ref(const void *src, size_t row_bytes, int rows, int64_t k, void *dst, int t0, int t1)
{
    pack_ref(0, src, row_bytes, rows, k, dst, t0, t1);
}

void ember_pack_q5_K_ref(const void *src, size_t row_bytes, int rows, int64_t k, void *dst, int t0, int t1)
{
    pack_ref(1, src, row_bytes, rows, k, dst, t0, t1);
}

/* IQ4_XS element e's code-book index. */
static int iq4_index(const block_iq4_xs *b, int e)
{
    uint8_t q = b->qs[16 * (e / 32) + e % 16];
    return e % 32 < 16 ? q & 0x0f : q >> 4;
}

/* Row r's block into a record (nib: the block's 256 indices), with its
   scales and d. */
static void put_iq4_row(uint8_t *rec, int r, const block_iq4_xs *blk, const uint8_t nib[QK_K])
{
    for (int j = 0; j < 8; j++) {
        for (int h = 0; h < 4; h++)
            for (int i = 0; i < 4; i++)
                rec[QS + (4 * j + h) * 64 + r * 4 + i] =
                    (uint8_t)(nib[32 * j + 4 * h + i] | nib[32 * j + 4 * (h + 4) + i] << 4);
        rec[SCI + 16 * j + r] = (uint8_t)(int8_t)ember_iq4_xs_scale(blk, j);
    }
    memcpy(rec + DWI + 2 * r, &blk->d, 2);
}

/* The oracle (each index read element by element), and the packer the
   lifecycle runs, which decodes a block's 128 bytes of nibbles in one
   sweep: the file's two halves of each 32-element sub-block. */
static void pack_iq4(int fast, const void *src, size_t row_bytes, int rows, int64_t k, void *dst, int t0, int t1)
{
    int64_t nb = k / QK_K;
    ember_tile_range(rows, &t0, &t1);
    for (int t = t0; t < t1; t++) {
        uint8_t *rec = (uint8_t *)dst + (size_t)t * (size_t)nb * RECI;
        for (int64_t b = 0; b < nb; b++, rec += RECI) {
            memset(rec, 0, RECI);
            for (int r = 0; r < ROWS && t * ROWS + r < rows; r++) {
                const block_iq4_xs *blk =
                    (const block_iq4_xs *)(const void *)((const uint8_t *)src + (size_t)(t * ROWS + r) * row_bytes) + b;
                uint8_t nib[QK_K];
                if (fast)
                    for (int j = 0; j < 8; j++)
                        for (int i = 0; i < 16; i++) {
                            nib[32 * j + i] = blk->qs[16 * j + i] & 0x0f;
                            nib[32 * j + 16 + i] = blk->qs[16 * j + i] >> 4;
                        }
                else
                    for (int e = 0; e < QK_K; e++) nib[e] = (uint8_t)iq4_index(blk, e);
                put_iq4_row(rec, r, blk, nib);
            }
        }
    }
}

void ember_pack_iq4_xs_ref(const void *src, size_t row_bytes, int rows, int64_t k, void *dst, int t0, int t1)
{
    pack_iq4(0, src, row_bytes, rows, k, dst, t0, t1);
}

#ifdef EMBER_SIMD
static void pack_iq4_xs_sweep(const void *src, size_t row_bytes, int rows, int64_t k, void *dst, int t0, int t1)
{
    pack_iq4(1, src, row_bytes, rows, k, dst, t0, t1);
}
#endif

#ifdef EMBER_SIMD   /* the packed layouts exist only with the SIMD kernels */
/* The same bytes a word at a time: the packer the lifecycle runs (a 1B
   model's Q4_K projections are ~0.7 GB; element by element takes seconds).
   Sub-block j's quants are the low (j even) or high (j odd) nibbles of
   qs[32 (j / 2) ..+32]; its lane h and h + 4 dwords are words h and h + 4
   of those 32 bytes. */
static void pack_words(int five, const void *src, size_t row_bytes, int rows, int64_t k, void *dst, int t0, int t1)
{
    const size_t rb = five ? REC5 : REC;
    int64_t nb = k / QK_K;
    ember_tile_range(rows, &t0, &t1);
    for (int t = t0; t < t1; t++) {
        if (rows - t * ROWS < ROWS) {   /* a tail tile: the oracle pads it */
            pack_ref(five, src, row_bytes, rows, k, dst, t, t + 1);
            continue;
        }
        uint8_t *rec = (uint8_t *)dst + (size_t)t * (size_t)nb * rb;
        for (int64_t b = 0; b < nb; b++, rec += rb)
            for (int r = 0; r < ROWS; r++) {
                const uint8_t *blk = (const uint8_t *)src + (size_t)(t * ROWS + r) * row_bytes + (size_t)b * blk_bytes(five);
                uint32_t q[32];
                memcpy(q, blk + qs_off(five), sizeof q);
                for (int j = 0; j < 8; j++)
                    for (int h = 0; h < 4; h++) {
                        uint32_t lo = q[8 * (j / 2) + h], hi = q[8 * (j / 2) + h + 4];
                        uint32_t v = j % 2 ? ((lo >> 4) & 0x0f0f0f0fu) | (hi & 0xf0f0f0f0u)
                                           : (lo & 0x0f0f0f0fu) | (hi & 0x0f0f0f0fu) << 4;
                        memcpy(rec + QS + (4 * j + h) * 64 + r * 4, &v, 4);
                    }
                put_meta(rec, r, blk);
                if (five) put_qh(rec, r, blk);
            }
    }
}

static void pack_q4_K_words(const void *src, size_t row_bytes, int rows, int64_t k, void *dst, int t0, int t1)
{
    pack_words(0, src, row_bytes, rows, k, dst, t0, t1);
}

static void pack_q5_K_words(const void *src, size_t row_bytes, int rows, int64_t k, void *dst, int t0, int t1)
{
    pack_words(1, src, row_bytes, rows, k, dst, t0, t1);
}
#endif

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

/* The three layouts (kind: a compile-time constant in each caller of the
   tile kernel, so every branch on it folds away there). */
enum { K4 = 0, K5 = 1, KI = 2 };

static inline size_t rec_of(int kind) { return kind == K5 ? REC5 : kind == KI ? RECI : REC; }

/* The oracle of each kind (IQ4_XS: the code book's values, signed scales,
   no min term) */
static void matmul_ref(int kind, const void *packed, size_t tile_bytes, int64_t k, int r0, int r1, const void *xq,
                       size_t xq_stride, int nt, float *y, size_t y_stride)
{
    const int five = kind == K5, iq4 = kind == KI;
    const size_t rb = rec_of(kind);
    int64_t nb = k / QK_K;
    for (int r = r0; r < r1; r++) {
        const uint8_t *tile = (const uint8_t *)packed + (size_t)(r / ROWS) * tile_bytes;
        int lane = r % ROWS;
        for (int t = 0; t < nt; t++) {
            const block_q8_K *x = (const block_q8_K *)(const void *)((const uint8_t *)xq + (size_t)t * xq_stride);
            float acc[8] = {0}, accm[4] = {0}, summs = 0;
            for (int64_t b = 0; b < nb; b++) {
                const uint8_t *rec = tile + (size_t)b * rb;
                int32_t lanes[8] = {0}, p[4] = {0};
                for (int j = 0; j < 8; j++)
                    for (int l = 0; l < 8; l++)
                        for (int i = 0; i < 4; i++) {
                            uint8_t byte = rec[QS + (4 * j + l % 4) * 64 + lane * 4 + i];
                            int q = l < 4 ? byte & 0x0f : byte >> 4;
                            if (five) q |= ((rec[QH + 64 * j + lane * 4 + i] >> l) & 1) << 4;
                            if (iq4) q = ember_iq4nl_values[q];
                            const int sc = iq4 ? (int8_t)rec[SCI + 16 * j + lane] : rec[SC + 16 * j + lane];
                            lanes[l] += sc * q * x[b].qs[32 * j + 4 * l + i];
                        }
                float d = x[b].d * ember_fp16_to_f32(rd16(rec + (iq4 ? DWI : DW) + 2 * lane));
                for (int l = 0; l < 8; l++) acc[l] = fmaf(d, (float)lanes[l], acc[l]);
                if (iq4) continue;
                for (int j = 0; j < 8; j++)
                    p[j / 2] += rec[MN + 32 * (j / 2) + 2 * lane + j % 2] * (x[b].bsums[2 * j] + x[b].bsums[2 * j + 1]);
                float dmin = -x[b].d * ember_fp16_to_f32(rd16(rec + DM + 2 * lane));
                if (five)
                    summs = fmaf(dmin, (float)((p[0] + p[1]) + (p[2] + p[3])), summs);
                else
                    for (int q = 0; q < 4; q++) accm[q] = fmaf(dmin, (float)p[q], accm[q]);
            }
            float mins = five ? summs : (accm[0] + accm[2]) + (accm[1] + accm[3]);
            y[(size_t)t * y_stride + (size_t)r] = iq4 ? ember_sum8(acc) : ember_sum8(acc) + mins;
        }
    }
}

void ember_packed_q4_K_matmul_ref(const void *packed, size_t tile_bytes, int64_t k, int r0, int r1,
                                  const void *xq, size_t xq_stride, int nt, float *y, size_t y_stride)
{
    matmul_ref(K4, packed, tile_bytes, k, r0, r1, xq, xq_stride, nt, y, y_stride);
}

void ember_packed_q5_K_matmul_ref(const void *packed, size_t tile_bytes, int64_t k, int r0, int r1,
                                  const void *xq, size_t xq_stride, int nt, float *y, size_t y_stride)
{
    matmul_ref(K5, packed, tile_bytes, k, r0, r1, xq, xq_stride, nt, y, y_stride);
}

void ember_packed_iq4_xs_matmul_ref(const void *packed, size_t tile_bytes, int64_t k, int r0, int r1,
                                    const void *xq, size_t xq_stride, int nt, float *y, size_t y_stride)
{
    matmul_ref(KI, packed, tile_bytes, k, r0, r1, xq, xq_stride, nt, y, y_stride);
}

#ifdef EMBER_SIMD
#define INL512 static inline __attribute__((always_inline)) EMBER_TARGET_AVX512


/* Reading ahead in the tile stream, as the Q8_0 tiles do (kernels_packed.c). */
#define PF_L1 (2 * 1024)
#define PF_L2 (8 * 1024)

/* Tokens per pass over a tile's super-block: each decoded lane vector is
   used TB times.  More do not pay: 3 or 4 spill the lane sums (TB 2: 83
   GMAC/s, 3: 79, 4: 69 on one Zen 4 core, 2048 x 2048, 128 tokens), and
   the quants' decode is not what limits (leaving it out: +2%).  What does
   is the multiply pipe: vpmaddubsw + vpdpwssd per 64 quants, and the
   float work of each super-block (+17% without it).  Packing two
   sub-blocks' dots into one dword's words (vpdpbusd, shift, vpdpbusd,
   one vpdpwssd: 3 multiplies for 2 groups) measured slower, 98 against
   109 GMAC/s for the integer part alone: the shifts share those pipes. */
#define TB 2
/* (the prefill loops pass a last odd token as tb 1: a TB of 3 or more
   would need the leftover count passed on) */
_Static_assert(TB == 2, "the prefill passes' leftover tokens assume pairs");

/* Lane vectors 4j + h of a record: the low and high nibbles' weights
   (Q5_K with their fifth bits from qh; IQ4_XS as magnitudes, nl and nh
   the lanes whose value is negative). */
INL512 void decode_h(const int kind, const uint8_t *ri, const int j, const int h, const __m512i qh, const int pf,
                     __m512i *wl_out, __m512i *wh_out, __mmask64 *nl, __mmask64 *nh)
{
    const __m512i low4 = _mm512_set1_epi8(0x0f), sixteen = _mm512_set1_epi8(16);
    const uint8_t *c = ri + QS + (4 * j + h) * 64;
    if (pf) {
        _mm_prefetch((const char *)c + PF_L1, _MM_HINT_T0);
        _mm_prefetch((const char *)c + PF_L2, _MM_HINT_T1);
    }
    __m512i v = _mm512_loadu_si512((const void *)c);
    __m512i wl = _mm512_and_si512(v, low4);
    __m512i wh = _mm512_and_si512(_mm512_srli_epi16(v, 4), low4);
    if (kind == K5) {   /* lane l's fifth bits: bit l of qh */
        wl = _mm512_mask_add_epi8(wl, _mm512_test_epi8_mask(qh, _mm512_set1_epi8((char)(1 << h))), wl, sixteen);
        wh = _mm512_mask_add_epi8(wh, _mm512_test_epi8_mask(qh, _mm512_set1_epi8((char)(1 << (h + 4)))), wh, sixteen);
    }
    /* IQ4_XS: the values' magnitudes, their signs moved onto the
       activations (|x| <= 127, so a negation is exact) */
    if (kind == KI) {
        const __m512i book = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(const void *)ember_iq4nl_values));
        wl = _mm512_shuffle_epi8(book, wl);
        wh = _mm512_shuffle_epi8(book, wh);
        *nl = _mm512_movepi8_mask(wl);
        *nh = _mm512_movepi8_mask(wh);
        wl = _mm512_abs_epi8(wl);
        wh = _mm512_abs_epi8(wh);
    }
    *wl_out = wl;
    *wh_out = wh;
}

/* Prefill decodes a tile chunk's weights once (KCK super-blocks, 32 KiB
   and 4 KiB of sign masks) and every token pair loads them: rebuilding
   them per pair took 3 (Q4_K) to 7 (IQ4_XS) more vector operations beside
   the pair's 8 multiplies, on the same two ports on a Xeon (where the Zen 4
   core above lost only 2% to them).  Xeon VM, 2 threads, llama-3.2-1b
   shape, pp128, 4 alternating pairs, same tokens: Q4_K_M 183 -> 200 tok/s,
   Q5_K_M 155 -> 191, IQ4_XS 122 -> 163. */
#define KCK 8                   /* super-blocks of a tile chunk */
typedef struct {
    __m512i w[KCK * 8 * 4 * 2];   /* [block][j][h][low, high] */
    __mmask64 neg[KCK * 8 * 4 * 2];
} dq_buf;

INL512 void dq_prep(const int kind, const uint8_t *rec, int64_t nbc, dq_buf *dq)
{
    const size_t rb = rec_of(kind);
    for (int64_t b = 0; b < nbc; b++, rec += rb)
        for (int j = 0; j < 8; j++) {
            const __m512i qh = kind == K5 ? _mm512_loadu_si512((const void *)(rec + QH + 64 * j)) : _mm512_setzero_si512();
            _Pragma("GCC unroll 4") for (int h = 0; h < 4; h++) {
                const size_t e = (size_t)((b * 8 + j) * 4 + h) * 2;
                __mmask64 nl = 0, nh = 0;
                decode_h(kind, rec, j, h, qh, 0, &dq->w[e], &dq->w[e + 1], &nl, &nh);
                if (kind == KI) {   /* the sign masks are IQ4_XS's alone */
                    dq->neg[e] = nl;
                    dq->neg[e + 1] = nh;
                }
            }
        }
}

/* nti (1 or 2) tiles, tile_bytes apart, against tb (1..TB) tokens over
   all nb super-blocks; accumulator u = i * tb + t is tile i's with token t.
   The int32 lane sums of a super-block live in registers (8 per pair);
   the float sums across super-blocks, touched once per super-block, in
   L1.  Q4_K decode takes two tiles at a time: two streams of tiles keep
   more lines in flight than one (as for the Q8_0 tiles); Q5_K one. */
INL512 void tile_pass(const int kind, const uint8_t *rec, size_t tile_bytes, const int nti, int64_t b0, int64_t nb,
                      const block_q8_K *const x[TB], const int tb, float *y, size_t y_stride, const __mmask16 m[2],
                      const int pf, __m512 (*carry)[12], const int first, const int last, const dq_buf *dq)
{
    const int five = kind == K5;
    const size_t rb = rec_of(kind);
    /* the sums in a local array (its address never escapes: a pointer to
       the carry would alias every load, __m512 being may_alias, and ran
       at two thirds of the speed), from and to the carry between chunks */
    __m512 acc[TB][12];   /* 8 lanes, then the 4 min lanes */
    const int nu = nti * tb;
    _Pragma("GCC unroll 4") for (int u = 0; u < nu; u++)
        _Pragma("GCC unroll 12") for (int l = 0; l < 12; l++) acc[u][l] = first ? _mm512_setzero_ps() : carry[u][l];
    for (int64_t b = b0; b < b0 + nb; b++, rec += rb) {
        __m512i is[TB][8];
        _Pragma("GCC unroll 4") for (int u = 0; u < nu; u++)
            _Pragma("GCC unroll 8") for (int l = 0; l < 8; l++) is[u][l] = _mm512_setzero_si512();
        _Pragma("GCC unroll 8") for (int j = 0; j < 8; j++) {
            _Pragma("GCC unroll 2") for (int i = 0; i < nti; i++) {
                const uint8_t *ri = rec + (size_t)i * tile_bytes;
                /* (sc, sc) words per row: vpdpwssd scales both halves of a
                   vpmaddubsw dword by it */
                __m512i s;
                if (kind == KI) {   /* signed: the low word keeps its own sign bits only */
                    s = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(ri + SCI + 16 * j)));
                    s = _mm512_or_si512(_mm512_and_si512(s, _mm512_set1_epi32(0xffff)), _mm512_slli_epi32(s, 16));
                } else {
                    s = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(ri + SC + 16 * j)));
                    s = _mm512_or_si512(s, _mm512_slli_epi32(s, 16));
                }
                __m512i qh = _mm512_setzero_si512();
                if (five && !dq) {
                    if (pf) {
                        _mm_prefetch((const char *)ri + QH + 64 * j + PF_L1, _MM_HINT_T0);
                        _mm_prefetch((const char *)ri + QH + 64 * j + PF_L2, _MM_HINT_T1);
                    }
                    qh = _mm512_loadu_si512((const void *)(ri + QH + 64 * j));
                }
                _Pragma("GCC unroll 4") for (int h = 0; h < 4; h++) {
                    __m512i wl, wh;
                    __mmask64 nl = 0, nh = 0;
                    if (dq) {
                        const size_t e = (size_t)(((b - b0) * 8 + j) * 4 + h) * 2;
                        wl = _mm512_load_si512((const void *)(dq->w + e));
                        wh = _mm512_load_si512((const void *)(dq->w + e + 1));
                        if (kind == KI) nl = dq->neg[e], nh = dq->neg[e + 1];
                    } else {
                        decode_h(kind, ri, j, h, qh, pf, &wl, &wh, &nl, &nh);
                    }
                    _Pragma("GCC unroll 4") for (int t = 0; t < tb; t++) {
                        const int8_t *qs = x[t][b].qs + 32 * j + 4 * h;
                        const int u = i * tb + t;
                        __m512i xl = _mm512_set1_epi32(ember_rd32(qs)), xh = _mm512_set1_epi32(ember_rd32(qs + 16));
                        if (kind == KI) {
                            xl = _mm512_mask_sub_epi8(xl, nl, _mm512_setzero_si512(), xl);
                            xh = _mm512_mask_sub_epi8(xh, nh, _mm512_setzero_si512(), xh);
                        }
                        is[u][h] = _mm512_dpwssd_epi32(is[u][h], _mm512_maddubs_epi16(wl, xl), s);
                        is[u][h + 4] = _mm512_dpwssd_epi32(is[u][h + 4], _mm512_maddubs_epi16(wh, xh), s);
                    }
                }
            }
        }
        _Pragma("GCC unroll 2") for (int i = 0; i < nti; i++) {
        const uint8_t *ri = rec + (size_t)i * tile_bytes;
        if (pf && kind == KI) {
            _mm_prefetch((const char *)ri + SCI + PF_L1, _MM_HINT_T0);
            _mm_prefetch((const char *)ri + SCI + 64 + PF_L1, _MM_HINT_T0);
            _mm_prefetch((const char *)ri + DWI + PF_L1, _MM_HINT_T0);
        } else if (pf) {
            _mm_prefetch((const char *)ri + SC + PF_L1, _MM_HINT_T0);
            _mm_prefetch((const char *)ri + SC + 64 + PF_L1, _MM_HINT_T0);
            _mm_prefetch((const char *)ri + MN + PF_L1, _MM_HINT_T0);
            _mm_prefetch((const char *)ri + MN + 64 + PF_L1, _MM_HINT_T0);
            _mm_prefetch((const char *)ri + DW + PF_L1, _MM_HINT_T0);
        }
        if (kind == KI) {   /* the d term only */
            __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(ri + DWI)));
            _Pragma("GCC unroll 4") for (int t = 0; t < tb; t++) {
                const int u = i * tb + t;
                __m512 d = _mm512_mul_ps(_mm512_set1_ps(x[t][b].d), dw);
                _Pragma("GCC unroll 8") for (int l = 0; l < 8; l++)
                    acc[u][l] = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(is[u][l]), acc[u][l]);
            }
            continue;
        }
        __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(ri + DW)));
        __m512 dm = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(ri + DM)));
        __m512i mn[4];
        _Pragma("GCC unroll 4") for (int q = 0; q < 4; q++)
            mn[q] = _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)(const void *)(ri + MN + 32 * q)));
        _Pragma("GCC unroll 4") for (int t = 0; t < tb; t++) {
            const int u = i * tb + t;
            const block_q8_K *xb = x[t] + b;
            __m512 d = _mm512_mul_ps(_mm512_set1_ps(xb->d), dw);
            __m512 dmin = _mm512_mul_ps(_mm512_set1_ps(-xb->d), dm);
            _Pragma("GCC unroll 8") for (int l = 0; l < 8; l++)
                acc[u][l] = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(is[u][l]), acc[u][l]);
            /* q8s_j = bsums[2j] + bsums[2j+1] as words, dword q = (q8s_2q, q8s_2q+1) */
            __m128i q8s = _mm_hadd_epi16(_mm_loadu_si128((const __m128i *)(const void *)xb->bsums),
                                         _mm_loadu_si128((const __m128i *)(const void *)(xb->bsums + 8)));
            int32_t qd[4];
            _mm_storeu_si128((__m128i *)(void *)qd, q8s);
            if (five) {   /* one min sum: (P0 + P1) + (P2 + P3), in int32 */
                __m512i p01 = _mm512_add_epi32(_mm512_madd_epi16(mn[0], _mm512_set1_epi32(qd[0])),
                                               _mm512_madd_epi16(mn[1], _mm512_set1_epi32(qd[1])));
                __m512i p23 = _mm512_add_epi32(_mm512_madd_epi16(mn[2], _mm512_set1_epi32(qd[2])),
                                               _mm512_madd_epi16(mn[3], _mm512_set1_epi32(qd[3])));
                acc[u][8] = _mm512_fmadd_ps(dmin, _mm512_cvtepi32_ps(_mm512_add_epi32(p01, p23)), acc[u][8]);
            } else {
                _Pragma("GCC unroll 4") for (int q = 0; q < 4; q++)
                    acc[u][8 + q] = _mm512_fmadd_ps(
                        dmin, _mm512_cvtepi32_ps(_mm512_madd_epi16(mn[q], _mm512_set1_epi32(qd[q]))), acc[u][8 + q]);
            }
        }
        }
    }
    if (!last) {
        _Pragma("GCC unroll 4") for (int u = 0; u < nu; u++)
            _Pragma("GCC unroll 12") for (int l = 0; l < 12; l++) carry[u][l] = acc[u][l];
        return;
    }
    _Pragma("GCC unroll 4") for (int u = 0; u < nu; u++) {
        const int i = u / tb, t = u % tb;
        if (kind == KI) {
            _mm512_mask_storeu_ps(y + (size_t)t * y_stride + i * ROWS, m[i], ember_sum8x16(acc[u]));
            continue;
        }
        __m512 mins = five ? acc[u][8]
                           : _mm512_add_ps(_mm512_add_ps(acc[u][8], acc[u][10]), _mm512_add_ps(acc[u][9], acc[u][11]));
        _mm512_mask_storeu_ps(y + (size_t)t * y_stride + i * ROWS, m[i], _mm512_add_ps(ember_sum8x16(acc[u]), mins));
    }
}

/* Prefill keeps the activations of this many bytes of tokens in L2 while
   a tile (k = 2048: 19 KiB, 8192: 74 KiB) is read from memory once for
   all of them. */
#define ACT_CHUNK (512 * 1024)
#define CARRY_PAIRS 128         /* token pairs' sums carried between chunks (as the Q6_K tiles) */

INL512 void matmul_avx512(const int kind, const void *packed, size_t tile_bytes, int64_t k, int r0, int r1,
                          const void *xq, size_t xq_stride, int nt, float *y, size_t y_stride)
{
    int64_t nb = k / QK_K;
    if (r0 >= r1 || nb <= 0) return;
    if (nt == 1) {
        const block_q8_K *x[TB];
        for (int t = 0; t < TB; t++) x[t] = (const block_q8_K *)xq;
        int r = r0 - r0 % ROWS;
        /* Q5_K one tile at a time: its decode's extra high-bit work spills
           two tiles' sums (llama-3.2-1b Q5_K_M decode 1.10x, 1.04-1.15 over
           5 alternating rounds on the Zen 5 VM); Q4_K measured 0.99 so */
        for (; r + ROWS < r1 && kind != K5; r += 2 * ROWS) {
            __mmask16 m[2] = {ember_tile_mask(r, r0, r1), ember_tile_mask(r + ROWS, r0, r1)};
            tile_pass(kind, (const uint8_t *)packed + (size_t)(r / ROWS) * tile_bytes, tile_bytes, 2, 0, nb, x, 1, y + r, y_stride, m,
                      1, NULL, 1, 1, NULL);
        }
        for (; r < r1; r += ROWS) {
            __mmask16 m[2] = {ember_tile_mask(r, r0, r1), 0};
            tile_pass(kind, (const uint8_t *)packed + (size_t)(r / ROWS) * tile_bytes, tile_bytes, 1, 0, nb, x, 1, y + r, y_stride, m,
                      1, NULL, 1, 1, NULL);
        }
        return;
    }
    /* Prefill: a tile is taken KCK super-blocks at a time (k = 2048 is
       one chunk of 19 KiB, 8192 four: a whole tile, 74 KiB, would be
       streamed from L2 once per token pair), every token pair's float
       sums carried from chunk to chunk, while the next chunk's lines are
       prefetched into L2, a share per pair; the passes themselves run
       from L1 without prefetches. */
    static _Thread_local __m512 carry[CARRY_PAIRS][TB][12];
    static _Thread_local dq_buf dq;
    int chunk = (int)(ACT_CHUNK / ((size_t)nb * sizeof(block_q8_K)));
    chunk = chunk < TB ? TB : chunk - chunk % TB;
    if (chunk > CARRY_PAIRS * TB) chunk = CARRY_PAIRS * TB;
    const size_t rb = rec_of(kind);
    for (int c0 = 0; c0 < nt; c0 += chunk) {
        int c1 = nt - c0 < chunk ? nt : c0 + chunk;
        const int npairs = (c1 - c0 + TB - 1) / TB;
        for (int r = r0 - r0 % ROWS; r < r1; r += ROWS) {
            __mmask16 m[2] = {ember_tile_mask(r, r0, r1), 0};
            const uint8_t *tile = (const uint8_t *)packed + (size_t)(r / ROWS) * tile_bytes;
            for (int64_t k0 = 0; k0 < nb; k0 += KCK) {
                const int64_t nbc = nb - k0 < KCK ? nb - k0 : KCK;
                const int first = k0 == 0, last = k0 + nbc == nb;
                const uint8_t *rec = tile + (size_t)k0 * rb;
                const ember_chunk_pf next = ember_chunk_pf_next(tile, tile_bytes, rb, nb, KCK, k0, nbc, npairs);
                dq_prep(kind, rec, nbc, &dq);
                for (int p = 0, t0 = c0; t0 < c1; t0 += TB, p++) {
                    ember_chunk_pf_share(&next, p);
                    const block_q8_K *x[TB];
                    int tb = c1 - t0 < TB ? c1 - t0 : TB;
                    for (int t = 0; t < TB; t++)
                        x[t] = (const block_q8_K *)(const void *)((const uint8_t *)xq + (size_t)(t0 + (t < tb ? t : 0)) * xq_stride);
                    float *yt = y + (size_t)t0 * y_stride + r;
                    if (tb == TB) tile_pass(kind, rec, tile_bytes, 1, k0, nbc, x, TB, yt, y_stride, m, 0, carry[p], first, last, &dq);
                    else tile_pass(kind, rec, tile_bytes, 1, k0, nbc, x, 1, yt, y_stride, m, 0, carry[p], first, last, &dq);
                }
            }
        }
    }
}

EMBER_TARGET_AVX512 void ember_packed_q4_K_matmul_avx512(const void *packed, size_t tile_bytes, int64_t k, int r0,
                                                         int r1, const void *xq, size_t xq_stride, int nt, float *y,
                                                         size_t y_stride)
{
    matmul_avx512(K4, packed, tile_bytes, k, r0, r1, xq, xq_stride, nt, y, y_stride);
}

EMBER_TARGET_AVX512 void ember_packed_q5_K_matmul_avx512(const void *packed, size_t tile_bytes, int64_t k, int r0,
                                                         int r1, const void *xq, size_t xq_stride, int nt, float *y,
                                                         size_t y_stride)
{
    matmul_avx512(K5, packed, tile_bytes, k, r0, r1, xq, xq_stride, nt, y, y_stride);
}

EMBER_TARGET_AVX512 void ember_packed_iq4_xs_matmul_avx512(const void *packed, size_t tile_bytes, int64_t k, int r0,
                                                           int r1, const void *xq, size_t xq_stride, int nt, float *y,
                                                           size_t y_stride)
{
    matmul_avx512(KI, packed, tile_bytes, k, r0, r1, xq, xq_stride, nt, y, y_stride);
}

const ember_layout ember_layout_iq4_xsx16 = {"iq4_xsx16", EMBER_PACK_IQ4_XSX16_VERSION, EMBER_IQ4_XS, ROWS, RECI,
                                             ember_pack_iq4_xs_bytes, pack_iq4_xs_sweep};
const ember_layout ember_layout_q5_Kx16 = {"q5_Kx16", EMBER_PACK_Q5_KX16_VERSION, EMBER_Q5_K, ROWS, REC5,
                                           ember_pack_q5_K_bytes, pack_q5_K_words};
const ember_layout ember_layout_q4_Kx16 = {"q4_Kx16", EMBER_PACK_Q4_KX16_VERSION, EMBER_Q4_K, ROWS, REC,
                                           ember_pack_q4_K_bytes, pack_q4_K_words};
#endif
