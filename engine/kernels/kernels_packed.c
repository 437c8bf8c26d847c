/* Packed Q8_0: 16-row tiles laid out for a broadcast-and-vpdpbusd kernel
   (doc/DESIGN.md, "Packed Q8_0 layout"), registered as a layout and its kernel
   (kernels.h: ember_kernel_packed).  Results are bit-identical to the
   compressed Q8_0 kernels: per row and 4-input group g, one
   fmaf(isum_g, d_w * d_x, acc_g) per block in block order, then the
   reference's 8-lane tree (kernels.h).  A record's group g is exactly the
   16 rows' group g, so each vpdpbusd yields one lane of 16 rows. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "dtype.h"
#include "kernels.h"
#include "kernels_kquant_impl.h"
#include "kernels_simple.h"
#include "simd.h"
#include "kernels_packed_tiles.h"

#define GROUPS (QK / 4)          /* 8 groups of 4 inputs per block */
#define SCALES (GROUPS * 64)     /* byte 512: the 16 fp16 scales */

size_t ember_pack_q8_0_bytes(int rows, int64_t k) { return ember_tiles_bytes(rows, k, QK, EMBER_PACK_RECORD); }

/* The oracle: byte by byte, as doc/DESIGN.md lays the record out. */
/* The record walk both oracles share: for each tile, block and row, the
   block's 32 int8 codes (codes()) in its groups at g * 64 + r * 4, its fp16
   d (the first two bytes of a Q8_0 or Q5_0 block) at SCALES + 2r; rows
   past the matrix zero. */
static void pack_records(const void *src, size_t row_bytes, int rows, int64_t k, void *dst, int t0, int t1,
                         size_t block_bytes, void (*codes)(const uint8_t *blk, int8_t q[QK]))
{
    int64_t nb = k / QK;
    ember_tile_range(rows, &t0, &t1);
    for (int t = t0; t < t1; t++) {
        uint8_t *rec = (uint8_t *)dst + (size_t)t * (size_t)nb * EMBER_PACK_RECORD;
        for (int64_t b = 0; b < nb; b++, rec += EMBER_PACK_RECORD) {
            memset(rec, 0, EMBER_PACK_RECORD);
            for (int r = 0; r < EMBER_PACK_ROWS; r++) {
                int row = t * EMBER_PACK_ROWS + r;
                if (row >= rows) break;
                const uint8_t *blk = (const uint8_t *)src + (size_t)row * row_bytes + (size_t)b * block_bytes;
                int8_t q[QK];
                codes(blk, q);
                for (int g = 0; g < GROUPS; g++) memcpy(rec + g * 64 + r * 4, q + g * 4, 4);
                memcpy(rec + SCALES + r * 2, blk, 2);
            }
        }
    }
}

static void q8_0_codes(const uint8_t *blk, int8_t q[QK]) { memcpy(q, blk + 2, QK); }

void ember_pack_q8_0_ref(const void *src, size_t row_bytes, int rows, int64_t k,
                         void *dst, int t0, int t1)
{
    pack_records(src, row_bytes, rows, k, dst, t0, t1, sizeof(block_q8_0), q8_0_codes);
}

/* Q5_0 rows packed as q8_0x16 tiles: each block's d as it is, its codes
   q - 16 as int8.  Every weight keeps its value, so the Q8_0 tile kernels'
   integer sums and float steps are the compressed Q5_0 kernel's (one
   template, kernels_simple_avx512.c): the same bits, at the packed GEMM's
   speed, in 8.5 bits a weight where the file has 5.5 (Q4_K_M files keep
   rows that are not whole K-quant super-blocks in Q5_0: DeepSeek-V2-Lite's
   expert down projections, 1408 wide, most of its layers'). */
static void q5_0_codes(const uint8_t *p, int8_t q[QK])
{
    const block_q5_0 *blk = (const block_q5_0 *)p;
    uint32_t qh;
    memcpy(&qh, blk->qh, 4);
    for (int j = 0; j < QK / 2; j++) {   /* low nibbles then high, each with its fifth bit */
        q[j] = (int8_t)(((blk->qs[j] & 0x0F) | ((qh >> j & 1) << 4)) - 16);
        q[j + QK / 2] = (int8_t)(((blk->qs[j] >> 4) | ((qh >> (j + QK / 2) & 1) << 4)) - 16);
    }
}

void ember_pack_q5_0_ref(const void *src, size_t row_bytes, int rows, int64_t k, void *dst, int t0, int t1)
{
    pack_records(src, row_bytes, rows, k, dst, t0, t1, sizeof(block_q5_0), q5_0_codes);
}

void ember_q8_0u_from_q8_0(const void *q8, void *out, int64_t k)
{
    const block_q8_0 *b = q8;
    ember_block_q8_0u *o = out;
    for (int64_t i = 0; i < k / QK; i++) {
        o[i].d = ember_fp16_to_f32(b[i].d);
        for (int j = 0; j < QK; j++) o[i].xu[j] = (uint8_t)b[i].qs[j] ^ 0x80;
    }
}

#ifdef EMBER_SIMD
/* The record's 8 groups are a 16-row x 8-dword transpose of the rows'
   codes.  Row j and row j + 8 share a register (low and high half), so an
   8 x 8 dword transpose done in both halves at once (unpack 32, unpack 64,
   then one two-source lane permute per output) yields each group's 16 rows
   in order.  Shuffles, not gathers: AMD's gathers run ~4x slower here.
   A tile with fewer than 16 rows left goes through the oracle. */
static inline __attribute__((always_inline)) EMBER_TARGET_AVX512 __m512i rows2(const uint8_t *a, const uint8_t *b)
{
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)a)),
                              _mm256_loadu_si256((const __m256i *)b), 1);
}

static inline uint64_t scales4(const uint8_t *p, size_t rs)
{
    uint16_t a, b, c, d;
    memcpy(&a, p, 2);
    memcpy(&b, p + rs, 2);
    memcpy(&c, p + 2 * rs, 2);
    memcpy(&d, p + 3 * rs, 2);
    return (uint64_t)a | (uint64_t)b << 16 | (uint64_t)c << 32 | (uint64_t)d << 48;
}

static EMBER_TARGET_AVX512 void pack_q8_0_avx512(const void *src, size_t row_bytes, int rows,
                                                 int64_t k, void *dst, int t0, int t1)
{
    int64_t nb = k / QK;
    ember_tile_range(rows, &t0, &t1);
    const __m512i lo = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13);
    const __m512i hi = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
    for (int t = t0; t < t1; t++) {
        if (rows - t * EMBER_PACK_ROWS < EMBER_PACK_ROWS) {
            ember_pack_q8_0_ref(src, row_bytes, rows, k, dst, t, t + 1);
            continue;
        }
        const uint8_t *base = (const uint8_t *)src + (size_t)t * EMBER_PACK_ROWS * row_bytes;
        uint8_t *rec = (uint8_t *)dst + (size_t)t * (size_t)nb * EMBER_PACK_RECORD;
        for (int64_t b = 0; b < nb; b++, rec += EMBER_PACK_RECORD, base += sizeof(block_q8_0)) {
            __m512i r[8], u[8];
            _Pragma("GCC unroll 8") for (int j = 0; j < 8; j++)
                r[j] = rows2(base + (size_t)j * row_bytes + 2, base + (size_t)(j + 8) * row_bytes + 2);
            _Pragma("GCC unroll 2") for (int h = 0; h < 2; h++) {   /* rows 0..3 (+8), 4..7 (+8) */
                __m512i a0 = _mm512_unpacklo_epi32(r[4 * h], r[4 * h + 1]);
                __m512i a1 = _mm512_unpackhi_epi32(r[4 * h], r[4 * h + 1]);
                __m512i a2 = _mm512_unpacklo_epi32(r[4 * h + 2], r[4 * h + 3]);
                __m512i a3 = _mm512_unpackhi_epi32(r[4 * h + 2], r[4 * h + 3]);
                /* per 128-bit lane, 4 rows' dword 0, 1, 2, 3 (+4 in odd lanes) */
                u[4 * h + 0] = _mm512_unpacklo_epi64(a0, a2);
                u[4 * h + 1] = _mm512_unpackhi_epi64(a0, a2);
                u[4 * h + 2] = _mm512_unpacklo_epi64(a1, a3);
                u[4 * h + 3] = _mm512_unpackhi_epi64(a1, a3);
            }
            _Pragma("GCC unroll 4") for (int g = 0; g < 4; g++) {
                _mm512_storeu_si512((void *)(rec + g * 64), _mm512_permutex2var_epi64(u[g], lo, u[4 + g]));
                _mm512_storeu_si512((void *)(rec + (g + 4) * 64), _mm512_permutex2var_epi64(u[g], hi, u[4 + g]));
            }
            _mm256_storeu_si256((__m256i *)(rec + SCALES),
                                _mm256_set_epi64x((long long)scales4(base + 12 * row_bytes, row_bytes),
                                                  (long long)scales4(base + 8 * row_bytes, row_bytes),
                                                  (long long)scales4(base + 4 * row_bytes, row_bytes),
                                                  (long long)scales4(base, row_bytes)));
        }
    }
}
#endif

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

void ember_packed_matmul_ref(const void *packed, size_t tile_bytes, int64_t k,
                             int r0, int r1,
                             const void *xq, size_t xq_stride, int nt,
                             float *y, size_t y_stride)
{
    int64_t nb = k / QK;
    for (int r = r0; r < r1; r++) {
        const uint8_t *tile = (const uint8_t *)packed + (size_t)(r / EMBER_PACK_ROWS) * tile_bytes;
        int lane = r % EMBER_PACK_ROWS;
        for (int t = 0; t < nt; t++) {
            const block_q8_0 *xb = (const block_q8_0 *)((const uint8_t *)xq + (size_t)t * xq_stride);
            float acc[GROUPS] = {0};
            for (int64_t b = 0; b < nb; b++) {
                const uint8_t *rec = tile + (size_t)b * EMBER_PACK_RECORD;
                float s = ember_fp16_to_f32(rd16(rec + SCALES + lane * 2)) * ember_fp16_to_f32(xb[b].d);
                for (int g = 0; g < GROUPS; g++) {
                    int32_t isum = 0;
                    for (int j = 0; j < 4; j++)
                        isum += (int32_t)(int8_t)rec[g * 64 + lane * 4 + j] * xb[b].qs[g * 4 + j];
                    acc[g] = fmaf((float)isum, s, acc[g]);
                }
            }
            y[(size_t)t * y_stride + r] = ember_sum8(acc);
        }
    }
}

#ifdef EMBER_SIMD

/* Decode (one token) prepares its activation group sums, scales and signed
   codes once per call for up to NBMAX blocks; longer rows go CHUNK blocks
   at a time, carrying the sums. */
#define NBMAX 1024
#define CHUNK 64
/* Reading ahead within the tile stream (may run past the end of the
   buffer: prefetches never fault): into L1 two records ahead, and into L2
   eight ahead, which on a Xeon VM took the decode kernel from 0.88x to 1.0x
   of a plain read loop's bandwidth (the L1 stream alone leaves the cores'
   miss queues short of the memory's latency). */
#ifndef PF_BYTES
#define PF_BYTES (2 * EMBER_PACK_RECORD)
#endif
#define PF_L2_BYTES (8 * EMBER_PACK_RECORD)

/* vpdpbusd wants unsigned x signed bytes: weights enter as w ^ 0x80 = w + 128
   and each group's lane starts from -128 * sum(its 4 activations), so every
   group sum is exact for any int8 weights and activations. */
#define INLINE512 static inline __attribute__((always_inline)) EMBER_TARGET_AVX512

/* From the token's activation row x (ember_block_q8_0u), blocks b0..
   b0 + nbc: corr[b * 8 + g], dx[b] and the signed codes again, sq[b * 32
   ..], as decode's sign trick wants them. */
INLINE512 void act_prep(const ember_block_q8_0u *x, int64_t b0, int64_t nbc, int32_t *corr, float *dx, int8_t *sq)
{
    const __m256i ones = _mm256_set1_epi8(1), flip = _mm256_set1_epi8((char)0x80);
    for (int64_t b = 0; b < nbc; b++) {
        const ember_block_q8_0u *blk = x + b0 + b;
        __m256i a = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)blk->xu), flip);
        _mm256_storeu_si256((__m256i *)(sq + b * 32), a);
        __m256i sum = _mm256_dpbusd_epi32(_mm256_setzero_si256(), ones, a);
        _mm256_storeu_si256((__m256i *)(corr + b * 8), _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(sum, 7)));
        dx[b] = blk->d;
    }
}

/* One tile over nbc blocks (a long row's chunk).  The 8 group sums start
   at zero (first) or from carry, and end in y (last) or in carry. */
INLINE512 void tile_pass(const uint8_t *rec, int64_t nbc, const int8_t *sq, const int32_t *corr, const float *dx,
                         float *y, __mmask16 m, float *carry, int first, int last)
{
    __m512 acc[GROUPS];
    _Pragma("GCC unroll 8") for (int g = 0; g < GROUPS; g++)
        acc[g] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(carry + g * 16);
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    for (int64_t b = 0; b < nbc; b++, rec += EMBER_PACK_RECORD) {
        __m512i wv[GROUPS];
        _Pragma("GCC unroll 8") for (int g = 0; g < GROUPS; g++) {
            _mm_prefetch((const char *)rec + PF_BYTES + g * 64, _MM_HINT_T0);
            _mm_prefetch((const char *)rec + PF_L2_BYTES + g * 64, _MM_HINT_T1);
            wv[g] = _mm512_xor_si512(_mm512_loadu_si512((const void *)(rec + g * 64)), flip);
        }
        _mm_prefetch((const char *)rec + PF_BYTES + SCALES, _MM_HINT_T0);
        _mm_prefetch((const char *)rec + PF_L2_BYTES + SCALES, _MM_HINT_T1);
        __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(rec + SCALES)));
        const int8_t *qs = sq + b * 32;
        const int32_t *c = corr + b * 8;
        __m512 s = _mm512_mul_ps(dw, _mm512_set1_ps(dx[b]));
        _Pragma("GCC unroll 8") for (int g = 0; g < GROUPS; g++) {
            __m512i isum = _mm512_dpbusd_epi32(_mm512_set1_epi32(c[g]), wv[g], _mm512_set1_epi32(ember_rd32(qs + 4 * g)));
            acc[g] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), s, acc[g]);
        }
    }
    if (last) {
        _mm512_mask_storeu_ps(y, m, ember_sum8x16(acc));
        return;
    }
    _Pragma("GCC unroll 8") for (int g = 0; g < GROUPS; g++) _mm512_storeu_ps(carry + g * 16, acc[g]);
}

/* Decode (one token): two tiles per pass.  A single tile is one sequential
   stream per thread, which this machine's prefetchers feed ~15% slower than
   the 16 row streams of the compressed kernel; two interleaved tile streams
   close that gap.  Each tile keeps its own 8 group sums, so the float order
   is tile_pass's. */
INLINE512 void tile_pair_pass(const uint8_t *rec0, const uint8_t *rec1, int64_t nb, const int8_t *sq,
                              const int32_t *corr, const float *dx,
                              float *y0, __mmask16 m0, float *y1, __mmask16 m1)
{
    __m512 a0[GROUPS], a1[GROUPS];
    _Pragma("GCC unroll 8") for (int g = 0; g < GROUPS; g++) a0[g] = a1[g] = _mm512_setzero_ps();
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    for (int64_t b = 0; b < nb; b++, rec0 += EMBER_PACK_RECORD, rec1 += EMBER_PACK_RECORD) {
        _Pragma("GCC unroll 9") for (int q = 0; q <= SCALES; q += 64) {
            _mm_prefetch((const char *)rec0 + PF_BYTES + q, _MM_HINT_T0);
            _mm_prefetch((const char *)rec1 + PF_BYTES + q, _MM_HINT_T0);
            _mm_prefetch((const char *)rec0 + PF_L2_BYTES + q, _MM_HINT_T1);
            _mm_prefetch((const char *)rec1 + PF_L2_BYTES + q, _MM_HINT_T1);
        }
        const int8_t *qs = sq + b * 32;
        const int32_t *c = corr + b * 8;
        __m512 dxv = _mm512_set1_ps(dx[b]);
        __m512 s0 = _mm512_mul_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(rec0 + SCALES))), dxv);
        __m512 s1 = _mm512_mul_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(rec1 + SCALES))), dxv);
        _Pragma("GCC unroll 8") for (int g = 0; g < GROUPS; g++) {
            int32_t a4;
            memcpy(&a4, qs + 4 * g, 4);
            __m512i av = _mm512_set1_epi32(a4), cv = _mm512_set1_epi32(c[g]);
            __m512i w0 = _mm512_xor_si512(_mm512_loadu_si512((const void *)(rec0 + g * 64)), flip);
            __m512i w1 = _mm512_xor_si512(_mm512_loadu_si512((const void *)(rec1 + g * 64)), flip);
            a0[g] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_dpbusd_epi32(cv, w0, av)), s0, a0[g]);
            a1[g] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_dpbusd_epi32(cv, w1, av)), s1, a1[g]);
        }
    }
    _mm512_mask_storeu_ps(y0, m0, ember_sum8x16(a0));
    _mm512_mask_storeu_ps(y1, m1, ember_sum8x16(a1));
}

/* Prefill (two or more tokens): three tokens per pass over a tile, the
   other way round from decode's sign trick.  The activations come
   unsigned (x ^ 0x80 = x + 128: the act type EMBER_ACT_Q8_0U, quantized
   once for all threads) against the weights as stored (signed), so
   each group sum is raw - 128 * (sum of its 4 weights): a correction that
   depends on the weights only, made once per tile and k-chunk (one
   vpdpbusd per group of a record) and shared by every token.  Per group,
   the pass then loads the weights and the correction once for three
   tokens, and each token adds one broadcast, one vpdpbusd, a convert and
   its fma: 24 float sums in registers.  The integer sums are exact either
   way and every fma is the reference's, in block order, so the result is
   decode's and the compressed kernel's bit for bit.  A row is taken in
   chunks of at most KC blocks, the tokens' sums carried between chunks:
   32 blocks' records, corrections and scales are 35 KiB, in a 48 KiB L1
   (64 blocks, 71 KiB, ran 1.04-1.06x slower in the model on Zen 5).  On a
   Zen 5 core (tile in L1) the loop ran ~1.4x the two-token form with
   decode's correction. */
#define TRI 3
#define KC 32
#define TRI_MAX 128                       /* triples whose sums are carried between chunks */

typedef struct {
    int32_t wc[KC * GROUPS * 16];         /* [block][group][row]: -128 * sum of the 4 weights */
    float wd[KC * 16];                    /* [block][row]: d_w */
    float carry[TRI_MAX * TRI * GROUPS * 16];
} prefill_buf;

INLINE512 void tile_chunk_prep(prefill_buf *pb, const uint8_t *rec, int64_t nbc)
{
    const __m512i ones = _mm512_set1_epi8(1);
    for (int64_t b = 0; b < nbc; b++, rec += EMBER_PACK_RECORD) {
        _Pragma("GCC unroll 8") for (int g = 0; g < GROUPS; g++) {
            __m512i ws = _mm512_dpbusd_epi32(_mm512_setzero_si512(), ones, _mm512_loadu_si512((const void *)(rec + g * 64)));
            _mm512_store_si512((void *)(pb->wc + (b * GROUPS + g) * 16), _mm512_slli_epi32(_mm512_sub_epi32(_mm512_setzero_si512(), ws), 7));
        }
        _mm512_store_ps(pb->wd + b * 16, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(rec + SCALES))));
    }
}

/* tb (1..3) tokens' rows x[t] (ember_block_q8_0u, from block b0) over nbc
   blocks of a tile chunk; the sums start at zero (first) or from carry,
   and end in y (last) or in carry. */
INLINE512 void tri_pass(const prefill_buf *pb, const uint8_t *rec, int64_t nbc, const ember_block_q8_0u *const x[TRI],
                        const int tb, float *carry, int first, int last, float *y, size_t y_stride, __mmask16 m)
{
    __m512 acc[TRI][GROUPS];
    _Pragma("GCC unroll 3") for (int t = 0; t < tb; t++)
        _Pragma("GCC unroll 8") for (int g = 0; g < GROUPS; g++)
            acc[t][g] = first ? _mm512_setzero_ps() : _mm512_load_ps(carry + (t * GROUPS + g) * 16);
    /* two blocks a turn: the next block's scale products start while this
       one's sums finish (1.02-1.04x in a kernel harness on Zen 5) */
    _Pragma("GCC unroll 2") for (int64_t b = 0; b < nbc; b++, rec += EMBER_PACK_RECORD) {
        const __m512 dw = _mm512_load_ps(pb->wd + b * 16);
        __m512 s[TRI];
        _Pragma("GCC unroll 3") for (int t = 0; t < tb; t++) s[t] = _mm512_mul_ps(dw, _mm512_set1_ps(x[t][b].d));
        _Pragma("GCC unroll 8") for (int g = 0; g < GROUPS; g++) {
            __m512i w = _mm512_loadu_si512((const void *)(rec + g * 64));
            __m512i c = _mm512_load_si512((const void *)(pb->wc + (b * GROUPS + g) * 16));
            /* in registers for the three tokens, not reloaded per token */
            __asm__("" : "+v"(w), "+v"(c));
            _Pragma("GCC unroll 3") for (int t = 0; t < tb; t++) {
                __m512i isum = _mm512_dpbusd_epi32(c, _mm512_set1_epi32(ember_rd32(x[t][b].xu + 4 * g)), w);
                acc[t][g] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), s[t], acc[t][g]);
            }
        }
    }
    _Pragma("GCC unroll 3") for (int t = 0; t < tb; t++) {
        if (last) {
            _mm512_mask_storeu_ps(y + (size_t)t * y_stride, m, ember_sum8x16(acc[t]));
        } else {
            _Pragma("GCC unroll 8") for (int g = 0; g < GROUPS; g++)
                _mm512_store_ps(carry + (t * GROUPS + g) * 16, acc[t][g]);
        }
    }
}

static EMBER_TARGET_AVX512 void packed_prefill_vnni(const void *packed, size_t tile_bytes, int64_t nb, int r0, int r1,
                                                     const uint8_t *xq, size_t xq_stride, int nt, float *y, size_t y_stride)
{
    static _Thread_local prefill_buf pb __attribute__((aligned(64)));
    /* chunks of equal size up to KC: 36 blocks (k = 1152, gemma-3-1b) go
       18 + 18, not 32 + a 4-block chunk that carries all its sums for
       little work */
    const int64_t nch = (nb + KC - 1) / KC, kc = (nb + nch - 1) / nch;
    for (int c0 = 0; c0 < nt; c0 += TRI * TRI_MAX) {
        const int c1 = nt - c0 < TRI * TRI_MAX ? nt : c0 + TRI * TRI_MAX;
        const int np = (c1 - c0 + TRI - 1) / TRI;
        for (int r = r0 - r0 % EMBER_PACK_ROWS; r < r1; r += EMBER_PACK_ROWS) {
            __mmask16 m = ember_tile_mask(r, r0, r1);
            const uint8_t *tile = (const uint8_t *)packed + (size_t)(r / EMBER_PACK_ROWS) * tile_bytes;
            for (int64_t k0 = 0; k0 < nb; k0 += kc) {
                const int64_t nbc = nb - k0 < kc ? nb - k0 : kc;
                const uint8_t *rec = tile + (size_t)k0 * EMBER_PACK_RECORD;
                const int first = k0 == 0, last = k0 + nbc == nb;
                tile_chunk_prep(&pb, rec, nbc);
                const ember_chunk_pf next = ember_chunk_pf_next(tile, tile_bytes, EMBER_PACK_RECORD, nb, kc, k0, nbc, np);
                for (int p = 0; p < np; p++) {
                    ember_chunk_pf_share(&next, p);
                    const int t0 = c0 + p * TRI, tb = c1 - t0 < TRI ? c1 - t0 : TRI;
                    const ember_block_q8_0u *x[TRI];
                    for (int t = 0; t < TRI; t++)
                        x[t] = (const ember_block_q8_0u *)(const void *)(xq + (size_t)(t0 + (t < tb ? t : 0)) * xq_stride) + k0;
                    float *carry = pb.carry + (size_t)p * TRI * GROUPS * 16;
                    float *yt = y + (size_t)t0 * y_stride + r;
                    if (tb == 3) tri_pass(&pb, rec, nbc, x, 3, carry, first, last, yt, y_stride, m);
                    else if (tb == 2) tri_pass(&pb, rec, nbc, x, 2, carry, first, last, yt, y_stride, m);
                    else tri_pass(&pb, rec, nbc, x, 1, carry, first, last, yt, y_stride, m);
                }
            }
        }
    }
}

static EMBER_TARGET_AVX512 void packed_matmul_vnni(const void *packed, size_t tile_bytes, int64_t k,
                                                   int r0, int r1,
                                                   const void *xq, size_t xq_stride, int nt,
                                                   float *y, size_t y_stride)
{
    int64_t nb = k / QK;
    if (r0 >= r1 || nb <= 0) return;
    static _Thread_local int32_t corr[NBMAX * 8];
    static _Thread_local float dx[NBMAX];
    static _Thread_local int8_t sq[NBMAX * 32];
    if (nt > 1) {
        packed_prefill_vnni(packed, tile_bytes, nb, r0, r1, (const uint8_t *)xq, xq_stride, nt, y, y_stride);
        return;
    }
    /* decode: one token */
    const ember_block_q8_0u *x = xq;
    const int whole = nb <= NBMAX;
    if (whole) act_prep(x, 0, nb, corr, dx, sq);
    int r = r0 - r0 % EMBER_PACK_ROWS;
    if (whole)
        for (; r + EMBER_PACK_ROWS < r1; r += 2 * EMBER_PACK_ROWS) {
            const uint8_t *tile = (const uint8_t *)packed + (size_t)(r / EMBER_PACK_ROWS) * tile_bytes;
            tile_pair_pass(tile, tile + tile_bytes, nb, sq, corr, dx, y + r, ember_tile_mask(r, r0, r1),
                           y + r + EMBER_PACK_ROWS, ember_tile_mask(r + EMBER_PACK_ROWS, r0, r1));
        }
    float carry[GROUPS * 16];
    for (; r < r1; r += EMBER_PACK_ROWS) {
        __mmask16 m = ember_tile_mask(r, r0, r1);
        const uint8_t *tile = (const uint8_t *)packed + (size_t)(r / EMBER_PACK_ROWS) * tile_bytes;
        int64_t step = whole ? nb : CHUNK;
        for (int64_t c0 = 0; c0 < nb; c0 += step) {
            int64_t nbc = nb - c0 < step ? nb - c0 : step;
            if (!whole) act_prep(x, c0, nbc, corr, dx, sq);
            tile_pass(tile + (size_t)c0 * EMBER_PACK_RECORD, nbc, sq, corr, dx, y + r, m, carry, c0 == 0, c0 + nbc == nb);
        }
    }
}

#endif

/* ---- registration ------------------------------------------------------- */

/* Source dtypes with a packed layout, whatever this CPU runs. */
static const int sources[] = {EMBER_Q8_0, EMBER_Q4_0, EMBER_Q5_0, EMBER_Q4_K, EMBER_Q5_K, EMBER_Q6_K, EMBER_IQ4_XS, EMBER_MXFP4};

int ember_layout_exists(int src_type)
{
    for (size_t i = 0; i < sizeof sources / sizeof sources[0]; i++)
        if (sources[i] == src_type) return 1;
    return 0;
}

#ifdef EMBER_SIMD
/* The layout as its AVX-512 kernel reads it, packed with AVX-512 shuffles
   (a layout is reached through its kernel's entry, so on that kernel's CPU). */
static const ember_layout q8_0x16 = {"q8_0x16", EMBER_PACK_Q8_0X16_VERSION, EMBER_Q8_0, EMBER_PACK_ROWS, EMBER_PACK_RECORD,
                                     ember_pack_q8_0_bytes, pack_q8_0_avx512};

/* The same layout where AVX2 reads it (kernels_packed_avx2.c), packed by
   the byte-by-byte packer. */
static const ember_layout q8_0x16_avx2 = {"q8_0x16", EMBER_PACK_Q8_0X16_VERSION, EMBER_Q8_0, EMBER_PACK_ROWS, EMBER_PACK_RECORD,
                                          ember_pack_q8_0_bytes, ember_pack_q8_0_ref};

/* Q5_0 rows as q8_0x16 tiles (ember_pack_q5_0_ref): a layout of its own
   name, so the pack cache never reads one for the other */
static const ember_layout q5_0_q8_0x16 = {"q5_0:q8_0x16", EMBER_PACK_Q8_0X16_VERSION, EMBER_Q5_0, EMBER_PACK_ROWS,
                                          EMBER_PACK_RECORD, ember_pack_q8_0_bytes, ember_pack_q5_0_ref};

/* The AVX-512 kernel's activations are EMBER_ACT_Q8_0U (a weight on the
   same input that runs compressed gets its own Q8_0 rows); the AVX2
   kernel's are the compressed Q8_0 kernel's, shared with it. */
static const ember_kernel table[] = {
    {"q8_0x16_avx512vnni", EMBER_ISA_AVX512, EMBER_Q8_0, EMBER_ACT_Q8_0U, ember_q8_0u_quantize_act_avx512,
     packed_matmul_vnni, &q8_0x16},
    {"q8_0x16_avx2", EMBER_ISA_AVX2, EMBER_Q8_0, EMBER_Q8_0, ember_q8_0_quantize_act_avx2,
     ember_packed_matmul_avx2, &q8_0x16_avx2},
    {"q5_0:q8_0x16_avx512vnni", EMBER_ISA_AVX512, EMBER_Q5_0, EMBER_ACT_Q8_0U, ember_q8_0u_quantize_act_avx512,
     packed_matmul_vnni, &q5_0_q8_0x16},
    /* the compressed Q4_0 kernels' activations (Q8_0, same quantizer) */
    {"q4_0x16_avx512vnni", EMBER_ISA_AVX512, EMBER_Q4_0, EMBER_Q8_0, ember_q8_0_quantize_act_avx512,
     ember_packed_q4_0_matmul_avx512, &ember_layout_q4_0x16},
    /* and the compressed MXFP4 kernels' (Q8_0) */
    {"mxfp4x16_avx512vnni", EMBER_ISA_AVX512, EMBER_MXFP4, EMBER_Q8_0, ember_q8_0_quantize_act_avx512,
     ember_packed_mxfp4_matmul_avx512, &ember_layout_mxfp4x16},
    /* the compressed Q4_K kernels' activations (Q8_K, same quantizer) */
    {"q4_Kx16_avx512", EMBER_ISA_AVX512, EMBER_Q4_K, EMBER_Q8_K, ember_kq_quantize_q8_K_avx512,
     ember_packed_q4_K_matmul_avx512, &ember_layout_q4_Kx16},
    {"q5_Kx16_avx512", EMBER_ISA_AVX512, EMBER_Q5_K, EMBER_Q8_K, ember_kq_quantize_q8_K_avx512,
     ember_packed_q5_K_matmul_avx512, &ember_layout_q5_Kx16},
    {"q4_Kx16_avx2", EMBER_ISA_AVX2, EMBER_Q4_K, EMBER_Q8_K, ember_kq_quantize_q8_K, ember_packed_q4_K_matmul_avx2,
     &ember_layout_q4_Kx16},
    /* and the compressed Q6_K kernels' (Q8_K) */
    {"q6_Kx16_avx512", EMBER_ISA_AVX512, EMBER_Q6_K, EMBER_Q8_K, ember_kq_quantize_q8_K_avx512,
     ember_packed_q6_K_matmul_avx512, &ember_layout_q6_Kx16},
    /* and the compressed IQ4_XS kernel's (Q8_K) */
    {"iq4_xsx16_avx512", EMBER_ISA_AVX512, EMBER_IQ4_XS, EMBER_Q8_K, ember_kq_quantize_q8_K_avx512,
     ember_packed_iq4_xs_matmul_avx512, &ember_layout_iq4_xsx16},
};
#endif

const ember_kernel *ember_kernels_packed(int src_type, ember_isa isa)
{
#ifdef EMBER_SIMD
    return EMBER_KERNEL_IN(table, src_type, isa);
#else
    (void)src_type;
    (void)isa;
    return NULL;
#endif
}
