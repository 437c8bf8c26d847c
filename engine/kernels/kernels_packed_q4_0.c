/* Packed Q4_0: 16-row tiles for a broadcast-and-vpdpbusd GEMM (doc/DESIGN.md,
   "Packed Q4_0 layout"), bit-identical to the compressed Q4_0 kernel of the
   8-row tile order (kernels_simple.c, ORD_TILED: the one the plan runs for
   a Q4_0 matrix with a multiple of 8 rows that is not an embedding table,
   so the plan packs only those: cpu.c, ember_kernel_packed_for_matrix).
 *
 * Why a tile: the compressed kernel reads one row's 18-byte blocks and
 * spends a horizontal fold per row and block; in a tile dword r of every
 * vector is row r, so one vpdpbusd does 4 multiply-adds for each of 16
 * rows against one broadcast activation dword, and the block's float step
 * (convert, scale, fma) is one instruction for 16 rows.
 *
 * Block record (EMBER_PACK_Q4_0_RECORD = 288 bytes, the 16 rows' 18-byte
 * blocks: no byte more than the file):
 *   qs [0, 256): 4 chunks of 64 bytes, chunk c: row r's dword at r * 4 is
 *                its qs[4c..4c+3], so byte i's low nibble is element
 *                4c + i and its high nibble element 16 + 4c + i (the file's
 *                own nibble order, which pairs with activation dwords c and
 *                4 + c);
 *   d  [256, 288): row r's fp16 d at 2r.
 * Blocks go in pairs so that every chunk starts on a cache line (a 288-byte
 * record alone puts every other block's chunks across two lines, which for
 * the Q6_K tiles cost 15% of decode): blocks 2p and 2p + 1 are one 576-byte
 * pair, [qs of 2p | qs of 2p + 1 | d of 2p | d of 2p + 1]; an odd last
 * block is a lone 288-byte record.  Rows past the matrix are zero.
 *
 * Numerics (ORD_TILED): per row and token one f32 sum, per block in order
 * acc = fmaf((float)isum, d_w * d_x, acc) with isum = sum (q - 8) x, exact
 * in int32.  vpdpbusd takes the unsigned nibbles q against the int8 x and
 * starts from -8 * sum x, made once per call, so its sum is isum.
 *
 * MXFP4 (mxfp4x16, gpt-oss's experts) is the same tile: its record is the
 * 16 rows' 17-byte blocks, qs as above (the file's nibble order is Q4_0's)
 * and then the 16 exponent bytes, row r's at r (272 bytes, pairs of 544).
 * A vpshufb turns each nibble into its code-book value plus 12 (0..24),
 * vpdpbusd starts from -12 * sum x, and the row's scale is its exponent
 * as a float (ember_mxfp4_scale), in the same order: the compressed MXFP4
 * kernels' (ORD_TILED for every MXFP4 matrix). */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "kernels.h"
#include "simd.h"
#include "kernels_packed_tiles.h"

#define ROWS EMBER_PACK_ROWS
#define REC EMBER_PACK_Q4_0_RECORD
#define RECM EMBER_PACK_MXFP4_RECORD

_Static_assert(REC == ROWS * sizeof(block_q4_0), "the record is the 16 rows' blocks");
_Static_assert(RECM == ROWS * sizeof(block_mxfp4), "the MXFP4 record is the 16 rows' blocks");

/* mx: a compile-time constant in each caller (Q4_0, or MXFP4) */
static inline size_t rec_of(int mx) { return mx ? RECM : REC; }
static inline size_t scale_bytes(int mx) { return mx ? 1 : 2; }   /* a row's scale in the record */

size_t ember_pack_q4_0_bytes(int rows, int64_t k) { return ember_tiles_bytes(rows, k, QK, REC); }

size_t ember_pack_mxfp4_bytes(int rows, int64_t k) { return ember_tiles_bytes(rows, k, QK, RECM); }

/* Where block b's chunks and its scales sit in a tile of nb blocks. */
static inline size_t qs_at(int mx, int64_t b)
{
    return (size_t)(b / 2) * 2 * rec_of(mx) + (size_t)(b % 2) * 256;
}

static inline size_t d_at(int mx, int64_t b, int64_t nb)
{
    size_t pair = (size_t)(b / 2) * 2 * rec_of(mx), sb = ROWS * scale_bytes(mx);
    return b % 2 ? pair + 512 + sb : b + 1 < nb ? pair + 512 : pair + 256;
}

/* The oracle: nibble by nibble from the element each byte holds. */
static void pack_ref(int mx, const void *src, size_t row_bytes, int rows, int64_t k, void *dst, int t0, int t1)
{
    int64_t nb = k / QK;
    const size_t rb = rec_of(mx), bb = mx ? sizeof(block_mxfp4) : sizeof(block_q4_0), qo = mx ? 1 : 2;
    ember_tile_range(rows, &t0, &t1);
    for (int t = t0; t < t1; t++) {
        uint8_t *tile = (uint8_t *)dst + (size_t)t * (size_t)nb * rb;
        memset(tile, 0, (size_t)nb * rb);
        for (int r = 0; r < ROWS && t * ROWS + r < rows; r++) {
            const uint8_t *row = (const uint8_t *)src + (size_t)(t * ROWS + r) * row_bytes;
            for (int64_t b = 0; b < nb; b++) {
                const uint8_t *blk = row + (size_t)b * bb, *qs = blk + qo;
                int q[QK];
                for (int j = 0; j < QK / 2; j++) {
                    q[j] = qs[j] & 0x0f;
                    q[j + QK / 2] = qs[j] >> 4;
                }
                for (int c = 0; c < 4; c++)
                    for (int i = 0; i < 4; i++)
                        tile[qs_at(mx, b) + 64 * c + 4 * r + i] = (uint8_t)(q[4 * c + i] | q[16 + 4 * c + i] << 4);
                memcpy(tile + d_at(mx, b, nb) + scale_bytes(mx) * (size_t)r, blk, scale_bytes(mx));
            }
        }
    }
}

void ember_pack_q4_0_ref(const void *src, size_t row_bytes, int rows, int64_t k, void *dst, int t0, int t1)
{
    pack_ref(0, src, row_bytes, rows, k, dst, t0, t1);
}

void ember_pack_mxfp4_ref(const void *src, size_t row_bytes, int rows, int64_t k, void *dst, int t0, int t1)
{
    pack_ref(1, src, row_bytes, rows, k, dst, t0, t1);
}

#ifdef EMBER_SIMD
/* The same bytes a dword at a time: the packer the lifecycle runs (its
   layout exists where the AVX-512 kernel does).  A
   tail tile (fewer than 16 rows) goes through the oracle, which pads it. */
static void pack_dwords_of(int mx, const void *src, size_t row_bytes, int rows, int64_t k, void *dst, int t0, int t1)
{
    int64_t nb = k / QK;
    const size_t rb = rec_of(mx), bb = mx ? sizeof(block_mxfp4) : sizeof(block_q4_0), qo = mx ? 1 : 2,
                 sb = scale_bytes(mx);
    ember_tile_range(rows, &t0, &t1);
    for (int t = t0; t < t1; t++) {
        if (rows - t * ROWS < ROWS) {
            pack_ref(mx, src, row_bytes, rows, k, dst, t, t + 1);
            continue;
        }
        uint8_t *tile = (uint8_t *)dst + (size_t)t * (size_t)nb * rb;
        for (int64_t b = 0; b < nb; b++) {
            uint8_t *qs = tile + qs_at(mx, b), *d = tile + d_at(mx, b, nb);
            for (int r = 0; r < ROWS; r++) {
                const uint8_t *blk = (const uint8_t *)src + (size_t)(t * ROWS + r) * row_bytes + (size_t)b * bb;
                for (int c = 0; c < 4; c++) memcpy(qs + 64 * c + 4 * r, blk + qo + 4 * c, 4);
                memcpy(d + sb * (size_t)r, blk, sb);
            }
        }
    }
}

static void pack_dwords(const void *src, size_t row_bytes, int rows, int64_t k, void *dst, int t0, int t1)
{
    pack_dwords_of(0, src, row_bytes, rows, k, dst, t0, t1);
}

static void pack_dwords_mx(const void *src, size_t row_bytes, int rows, int64_t k, void *dst, int t0, int t1)
{
    pack_dwords_of(1, src, row_bytes, rows, k, dst, t0, t1);
}

#endif

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static void matmul_ref(int mx, const void *packed, size_t tile_bytes, int64_t k, int r0, int r1, const void *xq,
                       size_t xq_stride, int nt, float *y, size_t y_stride)
{
    int64_t nb = k / QK;
    for (int r = r0; r < r1; r++) {
        const uint8_t *tile = (const uint8_t *)packed + (size_t)(r / ROWS) * tile_bytes;
        int lane = r % ROWS;
        for (int t = 0; t < nt; t++) {
            const block_q8_0 *x = (const block_q8_0 *)(const void *)((const uint8_t *)xq + (size_t)t * xq_stride);
            float acc = 0.0f;
            for (int64_t b = 0; b < nb; b++) {
                const uint8_t *qs = tile + qs_at(mx, b) + 4 * lane;
                int32_t isum = 0;
                for (int c = 0; c < 4; c++)
                    for (int i = 0; i < 4; i++) {
                        uint8_t v = qs[64 * c + i];
                        int lo = mx ? ember_mxfp4_values[v & 0x0f] : (v & 0x0f) - 8;
                        int hi = mx ? ember_mxfp4_values[v >> 4] : (v >> 4) - 8;
                        isum += lo * x[b].qs[4 * c + i] + hi * x[b].qs[16 + 4 * c + i];
                    }
                const uint8_t *d = tile + d_at(mx, b, nb);
                float dw = mx ? ember_mxfp4_scale(d[lane]) : ember_fp16_to_f32(rd16(d + 2 * lane));
                float s = dw * ember_fp16_to_f32(x[b].d);
                acc = fmaf((float)isum, s, acc);
            }
            y[(size_t)t * y_stride + r] = acc;
        }
    }
}

void ember_packed_q4_0_matmul_ref(const void *packed, size_t tile_bytes, int64_t k, int r0, int r1, const void *xq,
                                  size_t xq_stride, int nt, float *y, size_t y_stride)
{
    matmul_ref(0, packed, tile_bytes, k, r0, r1, xq, xq_stride, nt, y, y_stride);
}

void ember_packed_mxfp4_matmul_ref(const void *packed, size_t tile_bytes, int64_t k, int r0, int r1, const void *xq,
                                   size_t xq_stride, int nt, float *y, size_t y_stride)
{
    matmul_ref(1, packed, tile_bytes, k, r0, r1, xq, xq_stride, nt, y, y_stride);
}

#ifdef EMBER_SIMD
#define INL512 static inline __attribute__((always_inline)) EMBER_TARGET_AVX512

/* Reading ahead in the tile stream, as the other tiles do. */
#define PF_L1 (2 * 1024)
#define PF_L2 (8 * 1024)

/* Tokens per pass over a tile: each nibble vector is decoded once for TB
   tokens' vpdpbusd. */
#define TB 4

/* Activations' -8 * sum x per block, made once per call for a chunk of
   tokens (longer rows than CORR blocks a token take a buffer of their own). */
#define CORR (16 * 1024)
/* Prefill keeps this many bytes of tokens' activations in L2 while each
   tile is read once for all of them. */
#define ACT_CHUNK (384 * 1024)

/* Block b of nti (1 or 2) tiles tile_bytes apart against tb tokens: adds
   its fmaf step into acc[i * tb + t].  qs, d: the block's chunks and
   scales in the first tile. */
INL512 void block_step(const int mx, const uint8_t *qs, const uint8_t *d, size_t tile_bytes, const int nti, int64_t b,
                       const block_q8_0 *const x[TB], const int32_t *const corr[TB], const int tb, __m512 acc[2 * TB])
{
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    const __m512i book = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(const void *)ember_mxfp4_values_u12));
    __m512i is[2 * TB];
    _Pragma("GCC unroll 2") for (int i = 0; i < nti; i++)
        _Pragma("GCC unroll 4") for (int t = 0; t < tb; t++) is[i * tb + t] = _mm512_set1_epi32(corr[t][b]);
    _Pragma("GCC unroll 4") for (int c = 0; c < 4; c++) {
        _Pragma("GCC unroll 2") for (int i = 0; i < nti; i++) {
            const uint8_t *p = qs + (size_t)i * tile_bytes + 64 * c;
            _mm_prefetch((const char *)p + PF_L1, _MM_HINT_T0);
            _mm_prefetch((const char *)p + PF_L2, _MM_HINT_T1);
            __m512i v = _mm512_loadu_si512((const void *)p);
            __m512i lo = _mm512_and_si512(v, low4), hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), low4);
            if (mx) {
                lo = _mm512_shuffle_epi8(book, lo);
                hi = _mm512_shuffle_epi8(book, hi);
            }
            _Pragma("GCC unroll 4") for (int t = 0; t < tb; t++) {
                const int8_t *xs = x[t][b].qs;
                const int u = i * tb + t;
                is[u] = _mm512_dpbusd_epi32(is[u], lo, _mm512_set1_epi32(ember_rd32(xs + 4 * c)));
                is[u] = _mm512_dpbusd_epi32(is[u], hi, _mm512_set1_epi32(ember_rd32(xs + 16 + 4 * c)));
            }
        }
    }
    _Pragma("GCC unroll 2") for (int i = 0; i < nti; i++) {
        __m512 dw;
        if (mx) {   /* the exponents as floats: (e - 1) << 23, 0x00200000 << e below 2 */
            __m512i e = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(d + (size_t)i * tile_bytes)));
            __m512i bits = _mm512_slli_epi32(_mm512_sub_epi32(e, _mm512_set1_epi32(1)), 23);
            bits = _mm512_mask_sllv_epi32(bits, _mm512_cmplt_epu32_mask(e, _mm512_set1_epi32(2)), _mm512_set1_epi32(0x00200000), e);
            dw = _mm512_castsi512_ps(bits);
        } else {
            dw = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(d + (size_t)i * tile_bytes)));
        }
        _Pragma("GCC unroll 4") for (int t = 0; t < tb; t++) {
            const int u = i * tb + t;
            __m512 s = _mm512_mul_ps(dw, _mm512_set1_ps(_cvtsh_ss(x[t][b].d)));
            acc[u] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is[u]), s, acc[u]);
        }
    }
}

/* nti tiles against tb tokens over all nb blocks, into y (masked rows). */
INL512 void tile_pass(const int mx, const uint8_t *tile, size_t tile_bytes, const int nti, int64_t nb,
                      const block_q8_0 *const x[TB], const int32_t *const corr[TB], const int tb, float *y,
                      size_t y_stride, const __mmask16 m[2])
{
    __m512 acc[2 * TB];
    _Pragma("GCC unroll 8") for (int u = 0; u < 2 * TB; u++) acc[u] = _mm512_setzero_ps();
    int64_t b = 0;
    const size_t rb = rec_of(mx), sb = ROWS * scale_bytes(mx);
    for (const uint8_t *pair = tile; b + 1 < nb; b += 2, pair += 2 * rb) {
        block_step(mx, pair, pair + 512, tile_bytes, nti, b, x, corr, tb, acc);
        block_step(mx, pair + 256, pair + 512 + sb, tile_bytes, nti, b + 1, x, corr, tb, acc);
    }
    if (b < nb) {
        const uint8_t *last = tile + (size_t)b * rb;
        block_step(mx, last, last + 256, tile_bytes, nti, b, x, corr, tb, acc);
    }
    _Pragma("GCC unroll 2") for (int i = 0; i < nti; i++)
        _Pragma("GCC unroll 4") for (int t = 0; t < tb; t++)
            _mm512_mask_storeu_ps(y + (size_t)t * y_stride + i * ROWS, m[i], acc[i * tb + t]);
}

/* -off * the sum of each block's 32 activations (off: the codes' offset,
   8 for Q4_0's nibbles, 12 for MXFP4's looked-up values) */
static void act_corr(const block_q8_0 *x, int64_t nb, int32_t *corr, int32_t off)
{
    for (int64_t b = 0; b < nb; b++) {
        int32_t s = 0;
        for (int j = 0; j < QK; j++) s += x[b].qs[j];
        corr[b] = -off * s;
    }
}

INL512 void matmul_avx512(const int mx, const void *packed, size_t tile_bytes, int64_t k, int r0, int r1, const void *xq,
                          size_t xq_stride, int nt, float *y, size_t y_stride)
{
    int64_t nb = k / QK;
    if (r0 >= r1 || nb <= 0) return;
    static _Thread_local int32_t corr_buf[CORR];
    int32_t *cb = corr_buf;
    int chunk = (int)(ACT_CHUNK / ((size_t)nb * sizeof(block_q8_0)));
    if (chunk > CORR / nb) chunk = (int)(CORR / nb);
    chunk -= chunk % TB;
    if (chunk < TB) {   /* rows too long for the buffer: one of their own */
        chunk = TB;
        cb = malloc((size_t)TB * (size_t)nb * sizeof *cb);
        if (!cb) {
            matmul_ref(mx, packed, tile_bytes, k, r0, r1, xq, xq_stride, nt, y, y_stride);
            return;
        }
    }
    for (int c0 = 0; c0 < nt; c0 += chunk) {
        int c1 = nt - c0 < chunk ? nt : c0 + chunk;
        for (int t = c0; t < c1; t++)
            act_corr((const block_q8_0 *)(const void *)((const uint8_t *)xq + (size_t)t * xq_stride), nb,
                     cb + (size_t)(t - c0) * (size_t)nb, mx ? 12 : 8);
        if (c1 - c0 == 1) {   /* decode: two tiles a pass, two streams in flight */
            const block_q8_0 *x[TB];
            const int32_t *corr[TB];
            for (int t = 0; t < TB; t++) {
                x[t] = (const block_q8_0 *)(const void *)((const uint8_t *)xq + (size_t)c0 * xq_stride);
                corr[t] = cb;
            }
            float *yt = y + (size_t)c0 * y_stride;
            int r = r0 - r0 % ROWS;
            for (; r + ROWS < r1; r += 2 * ROWS) {
                __mmask16 m[2] = {ember_tile_mask(r, r0, r1), ember_tile_mask(r + ROWS, r0, r1)};
                tile_pass(mx, (const uint8_t *)packed + (size_t)(r / ROWS) * tile_bytes, tile_bytes, 2, nb, x, corr, 1,
                          yt + r, y_stride, m);
            }
            if (r < r1) {
                __mmask16 m[2] = {ember_tile_mask(r, r0, r1), 0};
                tile_pass(mx, (const uint8_t *)packed + (size_t)(r / ROWS) * tile_bytes, tile_bytes, 1, nb, x, corr, 1,
                          yt + r, y_stride, m);
            }
            continue;
        }
        for (int r = r0 - r0 % ROWS; r < r1; r += ROWS) {
            __mmask16 m[2] = {ember_tile_mask(r, r0, r1), 0};
            const uint8_t *tile = (const uint8_t *)packed + (size_t)(r / ROWS) * tile_bytes;
            for (int t0 = c0; t0 < c1; t0 += TB) {
                const block_q8_0 *x[TB];
                const int32_t *corr[TB];
                int tb = c1 - t0 < TB ? c1 - t0 : TB;
                for (int t = 0; t < TB; t++) {
                    int tt = t0 + (t < tb ? t : 0);
                    x[t] = (const block_q8_0 *)(const void *)((const uint8_t *)xq + (size_t)tt * xq_stride);
                    corr[t] = cb + (size_t)(tt - c0) * (size_t)nb;
                }
                float *yt = y + (size_t)t0 * y_stride + r;
                switch (tb) {
                case 4: tile_pass(mx, tile, tile_bytes, 1, nb, x, corr, 4, yt, y_stride, m); break;
                case 3: tile_pass(mx, tile, tile_bytes, 1, nb, x, corr, 3, yt, y_stride, m); break;
                case 2: tile_pass(mx, tile, tile_bytes, 1, nb, x, corr, 2, yt, y_stride, m); break;
                default: tile_pass(mx, tile, tile_bytes, 1, nb, x, corr, 1, yt, y_stride, m); break;
                }
            }
        }
    }
    if (cb != corr_buf) free(cb);
}

EMBER_TARGET_AVX512 void ember_packed_q4_0_matmul_avx512(const void *packed, size_t tile_bytes, int64_t k, int r0,
                                                         int r1, const void *xq, size_t xq_stride, int nt, float *y,
                                                         size_t y_stride)
{
    matmul_avx512(0, packed, tile_bytes, k, r0, r1, xq, xq_stride, nt, y, y_stride);
}

EMBER_TARGET_AVX512 void ember_packed_mxfp4_matmul_avx512(const void *packed, size_t tile_bytes, int64_t k, int r0,
                                                          int r1, const void *xq, size_t xq_stride, int nt, float *y,
                                                          size_t y_stride)
{
    matmul_avx512(1, packed, tile_bytes, k, r0, r1, xq, xq_stride, nt, y, y_stride);
}

const ember_layout ember_layout_q4_0x16 = {"q4_0x16", EMBER_PACK_Q4_0X16_VERSION, EMBER_Q4_0, ROWS, REC,
                                           ember_pack_q4_0_bytes, pack_dwords};
const ember_layout ember_layout_mxfp4x16 = {"mxfp4x16", EMBER_PACK_MXFP4X16_VERSION, EMBER_MXFP4, ROWS, RECM,
                                            ember_pack_mxfp4_bytes, pack_dwords_mx};
#endif
