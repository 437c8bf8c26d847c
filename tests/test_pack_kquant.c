/* Packed K-quant and Q4_0 tiles (kernels_packed_q45_K.c, kernels_packed_q6_K.c,
   kernels_packed_q4_0.c): the
   record layouts on hand-built blocks, the layout's packer against the element-by-element
   oracle, and packed == compressed bit for bit (the scalar oracle over the
   tiles and this CPU's packed kernel against the scalar compressed kernel)
   over a battery of shapes, row sub-ranges and token counts, with extreme
   quants, scales and activations. */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "kernels.h"
#include "tap.h"

static uint64_t rng = 0x243f6a8885a308d3ULL;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* One packed K-quant layout under test: its oracles and block size. */
typedef struct {
    int dtype;
    int qk;                  /* elements a block */
    int tiled;               /* reproduces the compressed 8-row tile order */
    size_t block;
    size_t record;
    int d_off, dmin_off;     /* the fp16 scales' offsets in a block (-1: none) */
    int sc_off;              /* int8 scales' offset (-1: none) */
    size_t (*bytes)(int rows, int64_t k);
    void (*pack_ref)(const void *src, size_t row_bytes, int rows, int64_t k, void *dst, int t0, int t1);
    ember_matmul_fn matmul_ref;
} kq_layout;

static const kq_layout layouts[] = {
    {EMBER_Q4_0, 32, 1, sizeof(block_q4_0), EMBER_PACK_Q4_0_RECORD, 0, -1, -1, ember_pack_q4_0_bytes,
     ember_pack_q4_0_ref, ember_packed_q4_0_matmul_ref},
    {EMBER_Q4_K, 256, 0, sizeof(block_q4_K), EMBER_PACK_Q4_K_RECORD, offsetof(block_q4_K, d), offsetof(block_q4_K, dmin), -1,
     ember_pack_q4_K_bytes, ember_pack_q4_K_ref, ember_packed_q4_K_matmul_ref},
    {EMBER_Q5_K, 256, 0, sizeof(block_q5_K), EMBER_PACK_Q5_K_RECORD, offsetof(block_q5_K, d), offsetof(block_q5_K, dmin), -1,
     ember_pack_q5_K_bytes, ember_pack_q5_K_ref, ember_packed_q5_K_matmul_ref},
    {EMBER_Q6_K, 256, 0, sizeof(block_q6_K), EMBER_PACK_Q6_K_RECORD, offsetof(block_q6_K, d), -1, offsetof(block_q6_K, scales),
     ember_pack_q6_K_bytes, ember_pack_q6_K_ref, ember_packed_q6_K_matmul_ref},
    {EMBER_IQ4_XS, 256, 0, sizeof(block_iq4_xs), EMBER_PACK_IQ4_XS_RECORD, offsetof(block_iq4_xs, d), -1, -1,
     ember_pack_iq4_xs_bytes, ember_pack_iq4_xs_ref, ember_packed_iq4_xs_matmul_ref},
    /* MXFP4: no fp16 scale (d_off -1), its exponent byte set by fill_blocks */
    {EMBER_MXFP4, 32, 0, sizeof(block_mxfp4), EMBER_PACK_MXFP4_RECORD, -1, -1, -1, ember_pack_mxfp4_bytes,
     ember_pack_mxfp4_ref, ember_packed_mxfp4_matmul_ref},
};

/* Random blocks of the layout's dtype; every fifth block extreme (all
   quants and scales at their maximum; signed int8 scales alternately at
   -128 and 127), fp16 scales finite. */
static void fill_blocks(const kq_layout *L, uint8_t *w, size_t row_bytes, int rows, int64_t nb)
{
    for (int r = 0; r < rows; r++)
        for (int64_t b = 0; b < nb; b++) {
            uint8_t *blk = w + (size_t)r * row_bytes + (size_t)b * L->block;
            for (size_t i = 0; i < L->block; i++) blk[i] = (uint8_t)next();
            if ((r + b) % 5 == 0) {
                memset(blk, 0xff, L->block);
                if (L->sc_off >= 0) memset(blk + L->sc_off, (r + b) % 10 ? 0x7f : 0x80, 16);
            }
            uint16_t d = (uint16_t)(0x1000 + next() % 0x2800), dm = (uint16_t)(0x1000 + next() % 0x2800);
            if ((r + b) % 7 == 3) d |= 0x8000;   /* a negative scale */
            if (L->dtype == EMBER_MXFP4) {   /* exponents 0 and 1 (subnormal scales) now and then, else near 1 */
                blk[0] = (uint8_t)((r + b) % 11 == 4 ? (uint64_t)((r + b) % 2) : 110 + next() % 30);
                continue;
            }
            memcpy(blk + L->d_off, &d, 2);
            if (L->dmin_off >= 0) memcpy(blk + L->dmin_off, &dm, 2);
        }
}

static void test_record(void)
{
    /* one Q4_K block with known contents, in row 17 of a 20-row matrix */
    enum { ROWS = 20, K = 256 };
    block_q4_K m[ROWS];
    memset(m, 0, sizeof m);
    for (int r = 0; r < ROWS; r++) {
        m[r].d = (uint16_t)(0x3c00 + r);
        m[r].dmin = (uint16_t)(0x3800 + r);
        for (int i = 0; i < 128; i++) m[r].qs[i] = (uint8_t)(r * 7 + i * 3);
        for (int i = 0; i < 12; i++) m[r].scales[i] = (uint8_t)(r * 11 + i * 29);
    }
    size_t bytes = ember_pack_q4_K_bytes(ROWS, K);
    tap_ok(bytes == 2 * 2368, "20 x 256 Q4_K packs into 2 tiles x 1 record of 2368 bytes (%zu)", bytes);
    uint8_t *p = malloc(bytes);
    memset(p, 0xaa, bytes);
    ember_pack_q4_K_ref(m, sizeof m[0], ROWS, K, p, 1, 2);
    int untouched = 1;
    for (size_t i = 0; i < 2368; i++) untouched &= p[i] == 0xaa;
    tap_ok(untouched, "packing tiles [1,2) leaves tile 0 alone");
    const uint8_t *rec = p + 2368;   /* tile 1: rows 16..19, lane 1 = row 17 */
    /* element 32*3 + 4*1 + 2 = 102 of row 17: qs chunk 1 (elements 64..127),
       high nibble (102 % 64 >= 32) of qs[32 + 102 % 32 = 38]; element
       32*3 + 4*5 + 2 = 118: high nibble of qs[32 + 22 = 54] */
    int e102 = m[17].qs[38] >> 4, e118 = m[17].qs[54] >> 4;
    tap_ok(rec[(4 * 3 + 1) * 64 + 1 * 4 + 2] == (uint8_t)(e102 | e118 << 4),
           "chunk 4j+h of row r at r*4: element 32j+4h+i low nibble, 32j+4(h+4)+i high (hand-computed)");
    int sc, mn;
    ember_scale_min_k4(5, m[17].scales, &sc, &mn);
    tap_ok(rec[2048 + 16 * 5 + 1] == sc && rec[2176 + 32 * 2 + 2 * 1 + 1] == mn,
           "scale j of row r at 2048 + 16j + r, min 2k+e at 2176 + 32k + 2r + e");
    tap_ok(!memcmp(rec + 2304 + 2, &m[17].d, 2) && !memcmp(rec + 2336 + 2, &m[17].dmin, 2),
           "fp16 d at 2304 + 2r, dmin at 2336 + 2r");
    int pad = 1;
    for (int r = 4; r < 16; r++) {
        for (int c = 0; c < 32; c++)
            for (int i = 0; i < 4; i++) pad &= rec[c * 64 + r * 4 + i] == 0;
        pad &= rec[2304 + 2 * r] == 0 && rec[2336 + 2 * r + 1] == 0 && rec[2048 + 16 * 7 + r] == 0;
    }
    tap_ok(pad, "the tail tile's rows past the matrix are zero");
    free(p);
}

/* Element e of a Q6_K block as the file stores it (ggml's layout, written
   out independently of the packer's). */
static int q6_file(const block_q6_K *b, int e)
{
    int half = e / 128, quarter = (e % 128) / 32, l = e % 32;
    int lo = b->ql[64 * half + 32 * (quarter % 2) + l];
    return (quarter >= 2 ? lo >> 4 : lo & 15) | ((b->qh[32 * half + l] >> (2 * quarter)) & 3) << 4;
}

static void test_record_q6(void)
{
    enum { ROWS = 20, K = 512 };
    block_q6_K m[ROWS][2];
    memset(m, 0, sizeof m);
    for (int r = 0; r < ROWS; r++)
        for (int b = 0; b < 2; b++) {
            m[r][b].d = (uint16_t)(0x3c00 + 2 * r + b);
            for (int i = 0; i < 128; i++) m[r][b].ql[i] = (uint8_t)(r * 7 + i * 3 + b * 5);
            for (int i = 0; i < 64; i++) m[r][b].qh[i] = (uint8_t)(r * 13 + i * 17 + b);
            for (int i = 0; i < 16; i++) m[r][b].scales[i] = (int8_t)(r * 11 + i * 29 - 100 + b);
        }
    size_t bytes = ember_pack_q6_K_bytes(ROWS, K);
    tap_ok(bytes == 2 * 2 * 3392 && 3392 == 16 * sizeof(block_q6_K) + 32,
           "20 x 512 Q6_K packs into 2 tiles x 2 records of 3392 bytes, the 16 rows' 210-byte blocks + 32 (%zu)", bytes);
    uint8_t *p = malloc(bytes);
    memset(p, 0xaa, bytes);
    ember_pack_q6_K_ref(m, sizeof m[0], ROWS, K, p, 1, 2);
    int untouched = 1;
    for (size_t i = 0; i < 2 * 3392; i++) untouched &= p[i] == 0xaa;
    tap_ok(untouched, "packing tiles [1,2) leaves tile 0 alone");
    const uint8_t *rec = p + 3 * 3392;   /* tile 1, super-block 1: row 17 is lane 1 */
    const block_q6_K *b17 = &m[17][1];
    /* group 5, lane 2, byte 3: element 160 + 8 + 3 = 171 in A chunk 4*5+2;
       its top bits hold element 160 + 24 + 3 = 187's bits 4-5 */
    int e171 = q6_file(b17, 171), e187 = q6_file(b17, 187);
    tap_ok(rec[(4 * 5 + 2) * 64 + 1 * 4 + 3] == (uint8_t)(e171 | (e187 >> 4) << 6),
           "A chunk 4i+h, row r at r*4: element 32i+4h+b's 6 bits, 32i+4(h+4)+b's high 2 bits on top");
    /* B chunk 2*5+1: lanes 6 and 7 of group 5, byte 3: elements 187 and 191 */
    int e191 = q6_file(b17, 191), e183 = q6_file(b17, 183), e179 = q6_file(b17, 179);
    tap_ok(rec[2048 + (2 * 5 + 1) * 64 + 4 + 3] == (uint8_t)((e187 & 15) | (e191 & 15) << 4) &&
               rec[2048 + (2 * 5) * 64 + 4 + 3] == (uint8_t)((e179 & 15) | (e183 & 15) << 4),
           "B chunk 2i+p: low nibbles of lanes 4+2p (low) and 5+2p (high)");
    /* scale 11 (group 5, odd) of row 17 (k = 0, m = 1): 3072 + 32*5 + 4 + 1 */
    tap_ok((int8_t)rec[3072 + 32 * 5 + 4 + 1] == b17->scales[11] &&
               (int8_t)rec[3072 + 32 * 5 + 1] == b17->scales[10],
           "scales of group i at 3072 + 32i: scale 2i of row 4k+m at 8k+m, scale 2i+1 at 8k+4+m");
    int zero = 1;
    for (int i = 3360; i < 3392; i++) zero &= rec[i] == 0;
    tap_ok(!memcmp(rec + 3328 + 2, &b17->d, 2) && zero, "fp16 d at 3328 + 2r, then 32 bytes of zeros");
    int pad = 1;
    for (int r = 4; r < 16; r++) {
        for (int c = 0; c < 48; c++)
            for (int i = 0; i < 4; i++) pad &= rec[c * 64 + r * 4 + i] == 0;
        pad &= rec[3328 + 2 * r] == 0 && rec[3072 + 32 * 7 + 8 * (r / 4) + r % 4] == 0;
    }
    tap_ok(pad, "the tail tile's rows past the matrix are zero");
    free(p);
}

typedef struct {
    int runs, ref_bad, kern_bad, pack_bad;
} stats_t;

static void run_case(const kq_layout *L, const ember_kernel *kc, const ember_kernel *kp, int rows, int64_t k,
                     int nt, int r0, int r1, stats_t *st)
{
    int64_t nb = k / L->qk;
    size_t row_bytes = (size_t)nb * L->block + 8;   /* a padded stride */
    uint8_t *w = malloc(row_bytes * (size_t)rows);
    fill_blocks(L, w, row_bytes, rows, nb);
    size_t xs = ember_act_bytes(kc->act_type, k) + 4;
    uint8_t *xq = malloc(xs * (size_t)nt);
    float *xf = malloc(sizeof(float) * (size_t)k);
    for (int t = 0; t < nt; t++) {
        for (int64_t i = 0; i < k; i++) xf[i] = (float)((int64_t)(next() % 2001) - 1000) * 1e-3f;
        if (t % 3 == 1)
            for (int i = 0; i < 256 && i < k; i++) xf[i] = i & 1 ? -1.0f : 1.0f;   /* the extremes, +-127 */
        (kp ? kp : kc)->quantize_act(xf, xq + (size_t)t * xs, k);
    }
    size_t pbytes = L->bytes(rows, k);
    int ntiles = (rows + 15) / 16;
    uint8_t *pr = malloc(pbytes), *pk = malloc(pbytes);
    memset(pr, 0x5a, pbytes);
    L->pack_ref(w, row_bytes, rows, k, pr, 0, ntiles);
    if (kp) {
        memset(pk, 0xa5, pbytes);
        kp->layout->pack(w, row_bytes, rows, k, pk, 0, ntiles / 2);
        kp->layout->pack(w, row_bytes, rows, k, pk, ntiles / 2, ntiles);
        if (memcmp(pk, pr, pbytes) && !st->pack_bad++)
            tap_diag("packer differs from the oracle: rows=%d k=%lld", rows, (long long)k);
    }
    size_t ys = (size_t)rows + 3, yl = ys * (size_t)nt;
    float *yc = malloc(yl * 4), *yr = malloc(yl * 4), *yk = malloc(yl * 4);
    for (size_t i = 0; i < yl; i++) yc[i] = yr[i] = yk[i] = -3.0f;
    ember_matmul_fn scalar = kc->matmul;
    scalar(w, row_bytes, k, r0, r1, xq, xs, nt, yc, ys);
    size_t tile_bytes = L->bytes(16, k);
    L->matmul_ref(pr, tile_bytes, k, r0, r1, xq, xs, nt, yr, ys);
    st->runs++;
    if (memcmp(yr, yc, yl * 4) && !st->ref_bad++)
        tap_diag("oracle differs: rows=%d k=%lld nt=%d r0=%d r1=%d", rows, (long long)k, nt, r0, r1);
    if (kp) {
        kp->matmul(pk, tile_bytes, k, r0, r1, xq, xs, nt, yk, ys);
        if (memcmp(yk, yc, yl * 4) && !st->kern_bad++)
            for (size_t i = 0; i < yl; i++)
                if (memcmp(&yk[i], &yc[i], 4)) {
                    tap_diag("%s differs: rows=%d k=%lld nt=%d r0=%d r1=%d y[%zu] %.9g vs %.9g", kp->name, rows,
                             (long long)k, nt, r0, r1, i, yk[i], yc[i]);
                    break;
                }
    }
    free(w);
    free(xq);
    free(xf);
    free(pr);
    free(pk);
    free(yc);
    free(yr);
    free(yk);
}

/* The whole battery for one packed kernel (NULL: the oracle alone). */
static void battery(const kq_layout *L, const ember_kernel *kc, const ember_kernel *kp, stats_t *st)
{
    static const int rows_list[] = {1, 7, 16, 17, 40};
    static const int64_t k_list[] = {256, 512, 2304};
    for (size_t ri = 0; ri < sizeof rows_list / sizeof rows_list[0]; ri++)
        for (size_t ki = 0; ki < sizeof k_list / sizeof k_list[0]; ki++)
            for (int nt = 1; nt <= 9; nt++) {
                int rows = rows_list[ri];
                int64_t k = k_list[ki];
                if (k > 512 && nt % 4 != 1) continue;
                run_case(L, kc, kp, rows, k, nt, 0, rows, st);
                if (rows > 16) {
                    run_case(L, kc, kp, rows, k, nt, 16, rows, st);    /* r0 on a tile boundary */
                    run_case(L, kc, kp, rows, k, nt, 5, rows - 3, st); /* both ends inside tiles */
                    run_case(L, kc, kp, rows, k, nt, 16, 17, st);      /* one row */
                    run_case(L, kc, kp, rows, k, nt, 9, 12, st);       /* inside a tile's second half */
                }
            }
    /* k = 8192 (a down projection) decode and prefill; 35 tokens end on
       a lone token; and enough tokens at a long k to take two of the
       kernel's activation chunks */
    run_case(L, kc, kp, 33, 8192, 1, 0, 33, st);
    run_case(L, kc, kp, 33, 8192, 35, 3, 33, st);
    run_case(L, kc, kp, 18, 65536, 37, 0, 18, st);
    /* more tokens than one chunk carries at a short k (the Q4_K/Q5_K
       kernels carry 256 tokens' sums between a tile's chunks) */
    run_case(L, kc, kp, 17, 2304, 301, 0, 17, st);
    /* past the rows the Q6_K kernel keeps corrections for (131072
       inputs a token pair) */
    run_case(L, kc, kp, 17, 131072 + 256, 3, 0, 17, st);
    if (L->qk == 32)   /* an odd number of blocks: a lone record after the pairs */
        for (int nt = 1; nt <= 6; nt++) {
            run_case(L, kc, kp, 40, 96, nt, 0, 40, st);
            run_case(L, kc, kp, 33, 288, nt, 5, 30, st);
        }
}

/* The compressed kernel a layout reproduces, for one ISA. */
static const ember_kernel *compressed(const kq_layout *L, ember_isa isa)
{
    return L->tiled ? ember_kernels_simple_tiled(L->dtype, isa) : ember_kernel_find(L->dtype, isa);
}

static void test_record_q4_0(void)
{
    /* 20 rows of 3 blocks: tile 1 holds rows 16..19, blocks 0 and 1 as a
       pair, block 2 alone */
    enum { ROWS = 20, K = 96 };
    block_q4_0 m[ROWS][3];
    for (int r = 0; r < ROWS; r++)
        for (int b = 0; b < 3; b++) {
            m[r][b].d = (uint16_t)(0x3c00 + 3 * r + b);
            for (int i = 0; i < 16; i++) m[r][b].qs[i] = (uint8_t)(r * 7 + i * 3 + b * 5);
        }
    size_t bytes = ember_pack_q4_0_bytes(ROWS, K);
    tap_ok(bytes == 2 * 3 * 288, "20 x 96 Q4_0 packs into 2 tiles x 3 records of 288 bytes (%zu)", bytes);
    uint8_t *p = malloc(bytes);
    memset(p, 0xaa, bytes);
    ember_pack_q4_0_ref(m, sizeof m[0], ROWS, K, p, 1, 2);
    int untouched = 1;
    for (size_t i = 0; i < 3 * 288; i++) untouched &= p[i] == 0xaa;
    tap_ok(untouched, "packing tiles [1,2) leaves tile 0 alone");
    const uint8_t *t1 = p + 3 * 288;
    /* row 18 (lane 2), block 1, chunk 3, byte 1: element 13 low (qs[13]
       low), element 29 high (qs[13] high): the file's own byte */
    tap_ok(t1[256 + 64 * 3 + 2 * 4 + 1] == m[18][1].qs[13] && t1[64 * 0 + 2 * 4 + 0] == m[18][0].qs[0],
           "a pair's second block's chunks at 256; chunk c of row r at r*4 is its qs[4c..4c+3]");
    tap_ok(!memcmp(t1 + 512 + 2 * 2, &m[18][0].d, 2) && !memcmp(t1 + 544 + 2 * 2, &m[18][1].d, 2),
           "the pair's d: block 2p at 512 + 2r, block 2p + 1 at 544 + 2r");
    tap_ok(t1[576 + 64 * 2 + 3 * 4 + 2] == m[19][2].qs[10] && !memcmp(t1 + 576 + 256 + 2 * 3, &m[19][2].d, 2),
           "the odd last block alone: chunks at 0, d at 256");
    int pad = 1;
    for (int r = 4; r < 16; r++)
        for (int b = 0; b < 3; b++)
            for (int c = 0; c < 4; c++) pad &= !memcmp(t1 + (b / 2) * 576 + (b % 2) * 256 + 64 * c + 4 * r, "\0\0\0\0", 4);
    pad &= t1[512 + 2 * 9] == 0 && t1[576 + 256 + 2 * 15 + 1] == 0;
    tap_ok(pad, "the tail tile's rows past the matrix are zero");
    free(p);
    /* packed only where the compressed kernel is the 8-row tile order */
    const ember_kernel *pk = ember_kernel_packed(EMBER_Q4_0, ember_cpu_isa());
    tap_ok(!pk || (ember_kernel_packed_for_matrix(EMBER_Q4_0, ember_cpu_isa(), 64, 0) == pk &&
                   !ember_kernel_packed_for_matrix(EMBER_Q4_0, ember_cpu_isa(), 60, 0) &&
                   !ember_kernel_packed_for_matrix(EMBER_Q4_0, ember_cpu_isa(), 64, 1)),
           "Q4_0 packs a matrix of 8k rows, not one of 60 rows or an embedding table");
    const ember_kernel *p8 = ember_kernel_packed(EMBER_Q8_0, ember_cpu_isa());
    tap_ok(ember_kernel_packed_for_matrix(EMBER_Q8_0, ember_cpu_isa(), 60, 1) == p8,
           "Q8_0 (one order) packs any matrix");
}

static void test_record_iq4_xs(void)
{
    /* one IQ4_XS block with known contents in each of 20 rows */
    enum { ROWS = 20, K = 256 };
    block_iq4_xs m[ROWS];
    for (int r = 0; r < ROWS; r++) {
        m[r].d = (uint16_t)(0x3c00 + r);
        m[r].scales_h = (uint16_t)(r * 1237 + 11);
        for (int i = 0; i < 4; i++) m[r].scales_l[i] = (uint8_t)(r * 31 + i * 77);
        for (int i = 0; i < 128; i++) m[r].qs[i] = (uint8_t)(r * 7 + i * 3);
    }
    size_t bytes = ember_pack_iq4_xs_bytes(ROWS, K);
    tap_ok(bytes == 2 * 2208 && 2208 == 16 * sizeof(block_iq4_xs) + 32,
           "20 x 256 IQ4_XS packs into 2 tiles x 1 record of 2208 bytes, the 16 rows' 136-byte blocks + 32 (%zu)", bytes);
    uint8_t *p = malloc(bytes);
    memset(p, 0xaa, bytes);
    ember_pack_iq4_xs_ref(m, sizeof m[0], ROWS, K, p, 1, 2);
    int untouched = 1;
    for (size_t i = 0; i < 2208; i++) untouched &= p[i] == 0xaa;
    tap_ok(untouched, "packing tiles [1,2) leaves tile 0 alone");
    const uint8_t *rec = p + 2208;   /* tile 1: row 17 is lane 1 */
    /* element 32*3 + 4*1 + 2 = 102 of row 17: sub-block 3's bytes
       qs[48..64), element 6 of it: low nibble of qs[54]; element
       32*3 + 4*5 + 2 = 118 (sub-block element 22): high nibble of qs[48 + 6] */
    int e102 = m[17].qs[54] & 15, e118 = m[17].qs[54] >> 4;
    tap_ok(rec[(4 * 3 + 1) * 64 + 1 * 4 + 2] == (uint8_t)(e102 | e118 << 4),
           "IQ4_XS chunk 4j+h of row r at r*4: element 32j+4h+i low nibble, 32j+4(h+4)+i high (hand-computed)");
    /* scale 5 of row 17: scales_l[2]'s high nibble, scales_h bits 10-11 */
    int sc5 = ((m[17].scales_l[2] >> 4) | ((m[17].scales_h >> 10) & 3) << 4) - 32;
    tap_ok((int8_t)rec[2048 + 16 * 5 + 1] == sc5 && !memcmp(rec + 2176 + 2, &m[17].d, 2),
           "IQ4_XS: signed scale ls - 32 of sub-block j of row r at 2048 + 16j + r (%d), fp16 d at 2176 + 2r", sc5);
    int pad = 1;
    for (int r = 4; r < 16; r++) {
        for (int c = 0; c < 32; c++)
            for (int i = 0; i < 4; i++) pad &= rec[c * 64 + r * 4 + i] == 0;
        pad &= rec[2176 + 2 * r] == 0 && rec[2048 + 16 * 7 + r] == 0;
    }
    tap_ok(pad, "IQ4_XS: the tail tile's rows past the matrix are zero");
    free(p);
}

int main(void)
{
    test_record();
    test_record_q6();
    test_record_q4_0();
    test_record_iq4_xs();
    static const ember_isa isas[] = {EMBER_ISA_AVX512, EMBER_ISA_AVX2};
    for (size_t li = 0; li < sizeof layouts / sizeof layouts[0]; li++) {
        const kq_layout *L = &layouts[li];
        const char *dn = ember_dtype_name(L->dtype);
        tap_ok(ember_layout_exists(L->dtype), "%s has a packed layout", dn);
        const ember_kernel *kc = compressed(L, EMBER_ISA_SCALAR);
        stats_t st = {0};
        battery(L, kc, NULL, &st);
        tap_ok(st.ref_bad == 0, "%s: the tile oracle == scalar compressed bit for bit (%d of %d cases differ)", dn,
               st.ref_bad, st.runs);
        /* each ISA's entry this CPU runs */
        for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
            const ember_kernel *kp = ember_kernels_packed(L->dtype, isas[ii]);
            if (!kp || isas[ii] > ember_cpu_isa()) {
                tap_skip("no packed kernel for this dtype and ISA on this CPU");
                tap_skip("no packed kernel for this dtype and ISA on this CPU");
                tap_skip("no packed kernel for this dtype and ISA on this CPU");
                continue;
            }
            const ember_kernel *kn = compressed(L, isas[ii]);
            tap_ok(kp->wtype == L->dtype && kp->layout && kp->layout->src_type == L->dtype &&
                       kp->layout->tile_rows == 16 && kp->layout->record_bytes == L->record &&
                       kp->layout->bytes == L->bytes && kp->act_type == kn->act_type &&
                       kp->quantize_act == kn->quantize_act,
                   "%s: the entry %s names its layout %s (16-row tiles, %zu-byte records) and shares the compressed "
                   "%s kernel's activations", dn, kp->name, kp->layout->name, L->record, kn->name);
            stats_t sk = {0};
            battery(L, kc, kp, &sk);
            tap_ok(sk.pack_bad == 0, "%s: the layout's packer == the oracle's bytes (%d of %d cases differ)", dn,
                   sk.pack_bad, sk.runs);
            tap_ok(sk.kern_bad == 0, "%s: %s == scalar compressed bit for bit (%d of %d cases differ)", dn, kp->name,
                   sk.kern_bad, sk.runs);
        }
        tap_ok(ember_kernel_packed(L->dtype, ember_cpu_isa()) == ember_kernels_packed(L->dtype, ember_cpu_isa()) ||
                   ember_cpu_isa() < EMBER_ISA_AVX2,
               "%s: this CPU's best ISA has its own packed entry", dn);
    }
    return tap_done();
}
