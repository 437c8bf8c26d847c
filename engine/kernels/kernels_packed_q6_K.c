/* Packed Q6_K: 16-row tiles for a broadcast-and-multiply GEMM (doc/DESIGN.md,
   "Packed Q6_K layout"), bit-identical to the compressed Q6_K kernels.
 *
 * Why a tile: as for Q4_K (kernels_packed_q4_K.c), dword r of every vector
 * is row r, so each instruction does one step for 16 rows instead of
 * folding one row's lanes, and the per-super-block float work is per 16
 * rows.  Quants stay 6 bits (no byte expansion): resident memory is the
 * file's 210 bytes a row per super-block plus 2 of padding.
 *
 * Record (one per super-block per tile, EMBER_PACK_Q6_K_RECORD = 3392
 * bytes: the 16 rows' 3360 and 32 of zeros, so that every record and every
 * 64-byte chunk starts on a cache line; unpadded, every other record's
 * chunk loads straddle two lines, and decode out of cache measured 20.4
 * against 24.0 GMAC/s padded, 16384 x 8192; odd records with their d
 * first, so their chunks start on lines at exactly 210 bytes a row, 13.7).  Group i
 * is elements 32i..32i+31, its lane l elements 32i + 4l + b (b = 0..3), the
 * reference's lanes; lanes 0-3 take scale 2i, lanes 4-7 scale 2i + 1.
 *   A  [0, 2048):    32 chunks of 64 bytes, chunk 4i + h (h = 0..3): row
 *                    r's 4 bytes at r * 4, byte b = q(32i + 4h + b) (all
 *                    6 bits) | the 2 high bits of q(32i + 4(h + 4) + b)
 *                    << 6;
 *   B  [2048, 3072): 16 chunks, chunk 2i + p: byte b of row r = the low
 *                    nibble of q(32i + 4(4 + 2p) + b) | that of
 *                    q(32i + 4(5 + 2p) + b) << 4;
 *   SC [3072, 3328): the int8 scales, 32 bytes per group i: scale 2i of
 *                    row 4k + m at 8k + m, scale 2i + 1 at 8k + 4 + m, so
 *                    that widened to words and unpacked with themselves
 *                    (low, high) they are the 16 rows' (sc, sc) dwords;
 *   D  [3328, 3360): row r's fp16 d;  [3360, 3392): zero.
 * So lane h is one mask, lane h + 4 two shifts for two lanes (A >> 2 for
 * the high bits, B >> 4 for the odd lanes' nibbles) plus masks and an or:
 * 6 shifts per 8 lane vectors, against 10 with the high bits 4 lanes to
 * a byte (3 shifts a chunk) next to Q4_K-style nibble chunks; shifts run
 * on the multiply pipes.  Rows past the matrix are zero.
 *
 * Numerics (kernels_kquant_impl.h): lane[l] = sum_e sc(e) (q(e) - 32) x(e)
 * in int32, acc[l] = fmaf(dx * d_w, lane[l], acc[l]) per super-block,
 * y = sum8(acc).  vpmaddubsw(q, x) gives q0 x0 + q1 x1 per word (|.| <=
 * 2 * 63 * 128 < 2^15); minus the activation's 32 (x0 + x1), made once per
 * call, it is (q0 - 32) x0 + (q1 - 32) x1, and vpdpwssd against the (sc,
 * sc) words adds it into the lane: the integers are the reference's. */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "dtype.h"
#include "kernels.h"
#include "kernels_kquant_impl.h"
#include "simd.h"
#include "kernels_packed_tiles.h"

#define AQ 0
#define BQ 2048
#define SC 3072
#define DW 3328
#define ROWS EMBER_PACK_ROWS
#define REC EMBER_PACK_Q6_K_RECORD

_Static_assert(DW + 2 * ROWS == ROWS * sizeof(block_q6_K) && REC == DW + 2 * ROWS + 32 && REC % 64 == 0,
               "the record is the 16 rows' blocks' bytes, padded to whole cache lines");

size_t ember_pack_q6_K_bytes(int rows, int64_t k) { return ember_tiles_bytes(rows, k, QK_K, REC); }

/* Element e of a Q6_K block, 0..63: each 128-element half n uses
   ql[64n..+64] (low nibbles for its first 64 elements, high for the rest)
   and qh[32n..+32] (two bits per quarter). */
static int q6k_quant(const block_q6_K *b, int e)
{
    int n = e / 128, quarter = (e % 128) / 32, l = e % 32;
    uint8_t lo = b->ql[64 * n + 32 * (quarter & 1) + l];
    return (quarter < 2 ? lo & 0x0f : lo >> 4) | ((b->qh[32 * n + l] >> (2 * quarter)) & 3) << 4;
}

/* Where scale j of tile row r lives in the record. */
static int sc_at(int j, int r)
{
    return SC + 32 * (j / 2) + 8 * (r / 4) + 4 * (j % 2) + r % 4;
}

/* The oracle: element by element, as the comment at the top lays it out. */
void ember_pack_q6_K_ref(const void *src, size_t row_bytes, int rows, int64_t k, void *dst, int t0, int t1)
{
    int64_t nb = k / QK_K;
    ember_tile_range(rows, &t0, &t1);
    for (int t = t0; t < t1; t++) {
        uint8_t *rec = (uint8_t *)dst + (size_t)t * (size_t)nb * REC;
        for (int64_t b = 0; b < nb; b++, rec += REC) {
            memset(rec, 0, REC);
            for (int r = 0; r < ROWS; r++) {
                int row = t * ROWS + r;
                if (row >= rows) break;
                const block_q6_K *blk = (const block_q6_K *)(const void *)
                    ((const uint8_t *)src + (size_t)row * row_bytes) + b;
                for (int i = 0; i < 8; i++)
                    for (int e = 0; e < 4; e++) {
                        for (int h = 0; h < 4; h++)
                            rec[AQ + (4 * i + h) * 64 + r * 4 + e] =
                                (uint8_t)(q6k_quant(blk, 32 * i + 4 * h + e) |
                                          (q6k_quant(blk, 32 * i + 4 * (h + 4) + e) >> 4) << 6);
                        for (int p = 0; p < 2; p++)
                            rec[BQ + (2 * i + p) * 64 + r * 4 + e] =
                                (uint8_t)((q6k_quant(blk, 32 * i + 4 * (4 + 2 * p) + e) & 0x0f) |
                                          (q6k_quant(blk, 32 * i + 4 * (5 + 2 * p) + e) & 0x0f) << 4);
                    }
                for (int j = 0; j < 16; j++) rec[sc_at(j, r)] = (uint8_t)blk->scales[j];
                memcpy(rec + DW + 2 * r, &blk->d, 2);
            }
        }
    }
}

#ifdef EMBER_SIMD   /* the packed layouts exist only with the SIMD kernels */
/* The same bytes a word at a time: the packer the lifecycle runs.  Group
   i = 4n + q (half n, quarter q) takes its low nibbles from ql[64n +
   32 (q & 1) ..+32] (shifted by 4 when q >= 2) and its high bits from
   qh[32n..+32] >> 2q, so lane h's 4 elements are word h of each. */
static void pack_q6_K_words(const void *src, size_t row_bytes, int rows, int64_t k, void *dst, int t0, int t1)
{
    int64_t nb = k / QK_K;
    ember_tile_range(rows, &t0, &t1);
    const uint32_t m4 = 0x0f0f0f0fu, m2 = 0x03030303u;
    for (int t = t0; t < t1; t++) {
        if (rows - t * ROWS < ROWS) {   /* a tail tile: the oracle pads it */
            ember_pack_q6_K_ref(src, row_bytes, rows, k, dst, t, t + 1);
            continue;
        }
        uint8_t *rec = (uint8_t *)dst + (size_t)t * (size_t)nb * REC;
        for (int64_t b = 0; b < nb; b++, rec += REC) {
            memset(rec + DW + 2 * ROWS, 0, REC - DW - 2 * ROWS);
            for (int r = 0; r < ROWS; r++) {
                const block_q6_K *blk = (const block_q6_K *)(const void *)
                    ((const uint8_t *)src + (size_t)(t * ROWS + r) * row_bytes) + b;
                uint32_t ql[32], qh[16];
                memcpy(ql, blk->ql, sizeof ql);
                memcpy(qh, blk->qh, sizeof qh);
                _Pragma("GCC unroll 8") for (int i = 0; i < 8; i++) {
                    int n = i / 4, q = i % 4;
                    const uint32_t *lw = ql + 16 * n + 8 * (q & 1), *hw = qh + 8 * n;
                    int ls = q < 2 ? 0 : 4;
                    uint32_t lo[8], hi[8];
                    _Pragma("GCC unroll 8") for (int l = 0; l < 8; l++) {
                        lo[l] = (lw[l] >> ls) & m4;
                        hi[l] = (hw[l] >> (2 * q)) & m2;
                    }
                    uint8_t *a = rec + AQ + 4 * i * 64 + r * 4, *bq = rec + BQ + 2 * i * 64 + r * 4;
                    _Pragma("GCC unroll 4") for (int h = 0; h < 4; h++) {
                        uint32_t v = lo[h] | hi[h] << 4 | hi[h + 4] << 6;
                        memcpy(a + h * 64, &v, 4);
                    }
                    _Pragma("GCC unroll 2") for (int p = 0; p < 2; p++) {
                        uint32_t v = lo[4 + 2 * p] | lo[5 + 2 * p] << 4;
                        memcpy(bq + p * 64, &v, 4);
                    }
                }
                for (int j = 0; j < 16; j++) rec[sc_at(j, r)] = (uint8_t)blk->scales[j];
                memcpy(rec + DW + 2 * r, &blk->d, 2);
            }
        }
    }
}
#endif

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

/* Element 32i + 4l + e of tile row r, 0..63, read back from the record. */
static int rec_quant(const uint8_t *rec, int r, int i, int l, int e)
{
    if (l < 4) return rec[AQ + (4 * i + l) * 64 + r * 4 + e] & 0x3f;
    int h = l - 4;
    int lo = (rec[BQ + (2 * i + h / 2) * 64 + r * 4 + e] >> (4 * (h % 2))) & 0x0f;
    return lo | (rec[AQ + (4 * i + h) * 64 + r * 4 + e] >> 6) << 4;
}

void ember_packed_q6_K_matmul_ref(const void *packed, size_t tile_bytes, int64_t k, int r0, int r1,
                                  const void *xq, size_t xq_stride, int nt, float *y, size_t y_stride)
{
    int64_t nb = k / QK_K;
    for (int r = r0; r < r1; r++) {
        const uint8_t *tile = (const uint8_t *)packed + (size_t)(r / ROWS) * tile_bytes;
        int lane = r % ROWS;
        for (int t = 0; t < nt; t++) {
            const block_q8_K *x = (const block_q8_K *)(const void *)((const uint8_t *)xq + (size_t)t * xq_stride);
            float acc[8] = {0};
            for (int64_t b = 0; b < nb; b++) {
                const uint8_t *rec = tile + (size_t)b * REC;
                int32_t lanes[8] = {0};
                for (int i = 0; i < 8; i++)
                    for (int l = 0; l < 8; l++) {
                        int sc = (int8_t)rec[sc_at(2 * i + l / 4, lane)];
                        for (int e = 0; e < 4; e++)
                            lanes[l] += sc * (rec_quant(rec, lane, i, l, e) - 32) * x[b].qs[32 * i + 4 * l + e];
                    }
                float d = x[b].d * ember_fp16_to_f32(rd16(rec + DW + 2 * lane));
                for (int l = 0; l < 8; l++) acc[l] = fmaf(d, (float)lanes[l], acc[l]);
            }
            y[(size_t)t * y_stride + (size_t)r] = ember_sum8(acc);
        }
    }
}

#ifdef EMBER_SIMD
#define INL512 static inline __attribute__((always_inline)) EMBER_TARGET_AVX512

/* Reading ahead in the tile stream, as the Q4_K tiles do. */
#define PF_L1 (2 * 1024)
#define PF_L2 (8 * 1024)

/* Tokens per pass over a tile's super-block (the Q4_K tiles' measure: 3 or
   4 spill the lane sums). */
#define TB 2
/* (the prefill loops pass a last odd token as tb 1: a TB of 3 or more
   would need the leftover count passed on) */
_Static_assert(TB == 2, "the prefill passes' leftover tokens assume pairs");

/* The activations' corrections 32 (x0 + x1), 32 (x2 + x3) as the word pair
   of dword 8i + l of each (token, super-block) slot, made once per call
   (or per chunk of tokens). */
#define CORR_SLOTS 1024

/* Prefill keeps the activations of this many bytes of tokens (and their
   corrections) in L2 while a tile is read from memory once for all. */
#define ACT_CHUNK (512 * 1024)

INL512 void corr_prep(const block_q8_K *x, int64_t nb, int32_t *cr)
{
    const __m512i ones = _mm512_set1_epi8(1);
    for (int64_t b = 0; b < nb; b++)
        _Pragma("GCC unroll 4") for (int c = 0; c < 4; c++) {
            __m512i s = _mm512_maddubs_epi16(ones, _mm512_loadu_si512((const void *)(x[b].qs + 64 * c)));
            _mm512_storeu_si512((void *)(cr + b * 64 + 16 * c), _mm512_slli_epi16(s, 5));
        }
}

/* Prefill's form of the activations: x ^ 0x80 = x + 128 as unsigned bytes,
   in the same slots. */
INL512 void xu_prep(const block_q8_K *x, int64_t nb, int32_t *xu)
{
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    for (int64_t b = 0; b < nb; b++)
        _Pragma("GCC unroll 4") for (int c = 0; c < 4; c++)
            _mm512_storeu_si512((void *)(xu + b * 64 + 16 * c),
                                _mm512_xor_si512(_mm512_loadu_si512((const void *)(x[b].qs + 64 * c)), flip));
}

/* Group i's two scale vectors as (sc, sc) words. */
INL512 void scales_group(const uint8_t *ri, int i, __m512i *s_lo, __m512i *s_hi)
{
    __m512i sw = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(const void *)(ri + SC + 32 * i)));
    *s_lo = _mm512_unpacklo_epi16(sw, sw);
    *s_hi = _mm512_unpackhi_epi16(sw, sw);
}

/* Group i of a record's 8 lane vectors, q (0..63) or, signed, q - 32, and
   its two scale vectors as (sc, sc) words. */
INL512 void decode_group(const uint8_t *ri, int i, const int sub32, __m512i q[8], __m512i *s_lo, __m512i *s_hi,
                         const int pf)
{
    const __m512i low4 = _mm512_set1_epi8(0x0f), low6 = _mm512_set1_epi8(0x3f), hi2 = _mm512_set1_epi8(0x30);
    const __m512i m32 = _mm512_set1_epi8(32);
    scales_group(ri, i, s_lo, s_hi);
    const uint8_t *bc = ri + BQ + 2 * i * 64;
    if (pf) {
        _mm_prefetch((const char *)bc + PF_L1, _MM_HINT_T0);
        _mm_prefetch((const char *)bc + PF_L2, _MM_HINT_T1);
        _mm_prefetch((const char *)bc + 64 + PF_L1, _MM_HINT_T0);
        _mm_prefetch((const char *)bc + 64 + PF_L2, _MM_HINT_T1);
    }
    const __m512i b0 = _mm512_loadu_si512((const void *)bc);
    const __m512i b1 = _mm512_loadu_si512((const void *)(bc + 64));
    _Pragma("GCC unroll 4") for (int h = 0; h < 4; h++) {
        const uint8_t *c = ri + AQ + (4 * i + h) * 64;
        if (pf) {
            _mm_prefetch((const char *)c + PF_L1, _MM_HINT_T0);
            _mm_prefetch((const char *)c + PF_L2, _MM_HINT_T1);
        }
        __m512i a = _mm512_loadu_si512((const void *)c);
        __m512i th = _mm512_and_si512(_mm512_srli_epi16(a, 2), hi2);
        __m512i bs = h % 2 ? _mm512_srli_epi16(h < 2 ? b0 : b1, 4) : (h < 2 ? b0 : b1);
        q[h] = _mm512_and_si512(a, low6);
        q[h + 4] = _mm512_or_si512(_mm512_and_si512(bs, low4), th);
        if (sub32) {
            q[h] = _mm512_sub_epi8(q[h], m32);
            q[h + 4] = _mm512_sub_epi8(q[h + 4], m32);
        }
    }
}

/* Prefill's weight side: with unsigned activations x + 128 and signed
   weights q - 32, vpmaddubsw gives (x + 128)(q - 32) per byte pair
   (|.| <= 2 * 255 * 32 < 2^15) and the lane holds the reference's integer
   plus 128 sum sc (q - 32), which depends on the row only: its negation,
   made once per tile for all the tokens of a chunk, is added to each
   lane.  The chunk's decoded weights (q - 32, 64 vectors a super-block,
   32 KiB for KCK super-blocks) are kept in dq for the token pairs: a
   pair then loads each vector instead of rebuilding it from its low and
   high bits (~4.6 vector operations a vector, against 4 multiplies for
   the pair's two tokens).  Xeon VM (AMX-era, 2 threads), llama-3.2-1b
   Q6_K pp128: 150 -> 190 tok/s, 4 alternating pairs, the same tokens. */
INL512 void wc_prep(const uint8_t *rec, int64_t nb, __m512i *wc, __m512i *dq)
{
    const __m512i u128 = _mm512_set1_epi8((char)0x80);
    for (int64_t b = 0; b < nb; b++, rec += REC) {
        __m512i c[8];
        _Pragma("GCC unroll 8") for (int l = 0; l < 8; l++) c[l] = _mm512_setzero_si512();
        _Pragma("GCC unroll 8") for (int i = 0; i < 8; i++) {
            __m512i q[8], s_lo, s_hi;
            decode_group(rec, i, 1, q, &s_lo, &s_hi, 0);
            _Pragma("GCC unroll 8") for (int l = 0; l < 8; l++) {
                c[l] = _mm512_dpwssd_epi32(c[l], _mm512_maddubs_epi16(u128, q[l]), l < 4 ? s_lo : s_hi);
                _mm512_store_si512((void *)(dq + (b * 8 + i) * 8 + l), q[l]);
            }
        }
        _Pragma("GCC unroll 8") for (int l = 0; l < 8; l++)
            wc[b * 8 + l] = _mm512_sub_epi32(_mm512_setzero_si512(), c[l]);
    }
}

/* One tile against tb (1..TB) tokens over all nb super-blocks;
   accumulator t is token t's.
   The int32 lane sums of a super-block live in registers, the float sums
   across super-blocks in L1.  Decode (wc NULL) takes the activations'
   corrections in cr; prefill (one tile) the unsigned activations in cr
   and the tile's weight corrections in wc: 2 multiplies per 64 MACs and
   no subtraction (subtracting the activations' corrections per token, as
   decode does, measured 79 against 89 GMAC/s at 2048 x 2048, 128 tokens). */
INL512 void tile_pass(const uint8_t *rec, int64_t b0, int64_t nb,
                      const block_q8_K *const x[TB], const int32_t *const cr[TB], const __m512i *wc,
                      const __m512i *dq, const int tb,
                      float *y, size_t y_stride, const __mmask16 m, const int pf, __m512 (*carry)[8],
                      const int first, const int last)
{
    const int us = wc != NULL;
    /* a local array, from and to the carry (a pointer into the carry would
       alias every load: kernels_packed_q45_K.c) */
    __m512 acc[TB][8];
    _Pragma("GCC unroll 4") for (int t = 0; t < tb; t++)
        _Pragma("GCC unroll 8") for (int l = 0; l < 8; l++) acc[t][l] = first ? _mm512_setzero_ps() : carry[t][l];
    for (int64_t b = b0; b < b0 + nb; b++, rec += REC) {
        __m512i is[TB][8];
        _Pragma("GCC unroll 4") for (int t = 0; t < tb; t++)
            _Pragma("GCC unroll 8") for (int l = 0; l < 8; l++)
                is[t][l] = _mm512_setzero_si512();
        _Pragma("GCC unroll 8") for (int i = 0; i < 8; i++) {
            __m512i q[8], s_lo, s_hi;
            if (dq) {
                scales_group(rec, i, &s_lo, &s_hi);
                _Pragma("GCC unroll 8") for (int l = 0; l < 8; l++)
                    q[l] = _mm512_load_si512((const void *)(dq + ((b - b0) * 8 + i) * 8 + l));
            } else {
                decode_group(rec, i, us, q, &s_lo, &s_hi, pf);
            }
            _Pragma("GCC unroll 4") for (int h = 0; h < 4; h++)
                _Pragma("GCC unroll 4") for (int t = 0; t < tb; t++) {
                    const int32_t *cv = cr[t] + b * 64 + 8 * i + h;
                    __m512i pl, ph;
                    if (us) {
                        pl = _mm512_maddubs_epi16(_mm512_set1_epi32(cv[0]), q[h]);
                        ph = _mm512_maddubs_epi16(_mm512_set1_epi32(cv[4]), q[h + 4]);
                    } else {
                        const int8_t *qs = x[t][b].qs + 32 * i + 4 * h;
                        pl = _mm512_sub_epi16(_mm512_maddubs_epi16(q[h], _mm512_set1_epi32(ember_rd32(qs))),
                                              _mm512_set1_epi32(cv[0]));
                        ph = _mm512_sub_epi16(_mm512_maddubs_epi16(q[h + 4], _mm512_set1_epi32(ember_rd32(qs + 16))),
                                              _mm512_set1_epi32(cv[4]));
                    }
                    is[t][h] = _mm512_dpwssd_epi32(is[t][h], pl, s_lo);
                    is[t][h + 4] = _mm512_dpwssd_epi32(is[t][h + 4], ph, s_hi);
                }
        }
        if (pf)
            _Pragma("GCC unroll 4") for (int q = 0; q < 4; q++)
                _mm_prefetch((const char *)rec + SC + 64 * q + PF_L1, _MM_HINT_T0);
        __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(rec + DW)));
        _Pragma("GCC unroll 4") for (int t = 0; t < tb; t++) {
            __m512 d = _mm512_mul_ps(_mm512_set1_ps(x[t][b].d), dw);
            /* prefill's weight correction added last: as the lanes'
               start it measured 6% slower (84 against 89 GMAC/s) */
            _Pragma("GCC unroll 8") for (int l = 0; l < 8; l++) {
                __m512i v = us ? _mm512_add_epi32(is[t][l], _mm512_load_si512((const void *)(wc + (b - b0) * 8 + l)))
                               : is[t][l];
                acc[t][l] = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(v), acc[t][l]);
            }
        }
    }
    if (!last) {
        _Pragma("GCC unroll 4") for (int t = 0; t < tb; t++)
            _Pragma("GCC unroll 8") for (int l = 0; l < 8; l++) carry[t][l] = acc[t][l];
        return;
    }
    _Pragma("GCC unroll 4") for (int t = 0; t < tb; t++)
        _mm512_mask_storeu_ps(y + (size_t)t * y_stride, m, ember_sum8x16(acc[t]));
}

/* Prefill takes the unsigned activations with the weights' corrections
   (made per tile chunk) for rows of up to this many super-blocks (k =
   32768: the activations' slots, CORR_SLOTS); longer rows take decode's
   form. */
#define WC_BLOCKS 128
#define KCK 8                   /* super-blocks of a tile chunk */
#define CARRY_PAIRS 128         /* token pairs' sums carried between chunks */

EMBER_TARGET_AVX512 void ember_packed_q6_K_matmul_avx512(const void *packed, size_t tile_bytes, int64_t k,
                                                         int r0, int r1, const void *xq, size_t xq_stride,
                                                         int nt, float *y, size_t y_stride)
{
    int64_t nb = k / QK_K;
    if (r0 >= r1 || nb <= 0) return;
    static _Thread_local int32_t corr[CORR_SLOTS * 64];
    if (nb * (nt == 1 ? 1 : TB) > CORR_SLOTS) {
        /* rows of more than 131072 inputs (262144 decoding): no room for
           their corrections */
        ember_packed_q6_K_matmul_ref(packed, tile_bytes, k, r0, r1, xq, xq_stride, nt, y, y_stride);
        return;
    }
    if (nt == 1) {
        const block_q8_K *x[TB];
        const int32_t *cr[TB];
        for (int t = 0; t < TB; t++) x[t] = (const block_q8_K *)xq, cr[t] = corr;
        corr_prep(x[0], nb, corr);
        /* one tile at a time: two interleaved tiles (two streams, as the
           Q8_0 decode takes them) kept 16 lane sums and 16 float sums in
           the 32 registers and spilled; one Zen 5 core, tiles in L2:
           ~78 -> ~100 GMAC/s, two threads from memory (16384 x 8192):
           50-60 -> 61-72 */
        for (int r = r0 - r0 % ROWS; r < r1; r += ROWS)
            tile_pass((const uint8_t *)packed + (size_t)(r / ROWS) * tile_bytes, 0, nb, x, cr, NULL, NULL, 1, y + r, y_stride,
                      ember_tile_mask(r, r0, r1), 1, NULL, 1, 1);
        return;
    }
    static _Thread_local __m512i wc[KCK * 8], dq[KCK * 64];
    static _Thread_local __m512 carry[CARRY_PAIRS][TB][8];
    const int us = nb <= WC_BLOCKS;
    int chunk = (int)(ACT_CHUNK / ((size_t)nb * sizeof(block_q8_K)));
    if (chunk > CORR_SLOTS / nb) chunk = (int)(CORR_SLOTS / nb);
    chunk = chunk < TB ? TB : chunk - chunk % TB;
    if (chunk > CARRY_PAIRS * TB) chunk = CARRY_PAIRS * TB;
    for (int c0 = 0; c0 < nt; c0 += chunk) {
        int c1 = nt - c0 < chunk ? nt : c0 + chunk;
        for (int t = c0; t < c1; t++) {
            const block_q8_K *xt = (const block_q8_K *)(const void *)((const uint8_t *)xq + (size_t)t * xq_stride);
            if (us) xu_prep(xt, nb, corr + (size_t)(t - c0) * nb * 64);
            else corr_prep(xt, nb, corr + (size_t)(t - c0) * nb * 64);
        }
        const int npairs = (c1 - c0 + TB - 1) / TB;
        for (int r = r0 - r0 % ROWS; r < r1; r += ROWS) {
            const __mmask16 m = ember_tile_mask(r, r0, r1);
            const uint8_t *tile = (const uint8_t *)packed + (size_t)(r / ROWS) * tile_bytes;
            /* KCK super-blocks at a time (k = 8192: 108 KiB a tile, read
               once per token pair from L2 otherwise), the pairs' sums
               carried, the next chunk prefetched into L2 a share per pair */
            for (int64_t k0 = 0; k0 < nb; k0 += KCK) {
                const int64_t nbc = nb - k0 < KCK ? nb - k0 : KCK;
                const int first = k0 == 0, last = k0 + nbc == nb;
                const uint8_t *rec = tile + (size_t)k0 * REC;
                if (us) wc_prep(rec, nbc, wc, dq);
                const ember_chunk_pf next = ember_chunk_pf_next(tile, tile_bytes, REC, nb, KCK, k0, nbc, npairs);
                for (int p = 0, t0 = c0; t0 < c1; t0 += TB, p++) {
                    ember_chunk_pf_share(&next, p);
                    const block_q8_K *x[TB];
                    const int32_t *cr[TB];
                    int tb = c1 - t0 < TB ? c1 - t0 : TB;
                    for (int t = 0; t < TB; t++) {
                        int tt = t0 + (t < tb ? t : 0);
                        x[t] = (const block_q8_K *)(const void *)((const uint8_t *)xq + (size_t)tt * xq_stride);
                        cr[t] = corr + (size_t)(tt - c0) * nb * 64;
                    }
                    float *yt = y + (size_t)t0 * y_stride + r;
                    __m512 (*cp)[8] = carry[p];
                    if (us && tb == TB) tile_pass(rec, k0, nbc, x, cr, wc, dq, TB, yt, y_stride, m, 0, cp, first, last);
                    else if (us) tile_pass(rec, k0, nbc, x, cr, wc, dq, 1, yt, y_stride, m, 0, cp, first, last);
                    else if (tb == TB) tile_pass(rec, k0, nbc, x, cr, NULL, NULL, TB, yt, y_stride, m, 0, cp, first, last);
                    else tile_pass(rec, k0, nbc, x, cr, NULL, NULL, 1, yt, y_stride, m, 0, cp, first, last);
                }
            }
        }
    }
}

const ember_layout ember_layout_q6_Kx16 = {"q6_Kx16", EMBER_PACK_Q6_KX16_VERSION, EMBER_Q6_K, ROWS, REC,
                                           ember_pack_q6_K_bytes, pack_q6_K_words};
#endif
