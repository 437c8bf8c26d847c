/* Packed Q8_0 tiles: the byte layout on a hand-built matrix, partial
   packing by tile range, and packed == compressed bit for bit (scalar
   reference and the VNNI kernel) on odd shapes, sub-ranges and nt 1..17. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "kernels.h"
#include "tap.h"

static uint64_t rng = 0x13198a2e03707344ULL;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* The packer in use: the packed kernel's (AVX-512 shuffles), else the oracle. */
static void (*pack)(const void *src, size_t row_bytes, int rows, int64_t k, void *dst, int t0, int t1);

static void test_layout(void)
{
    enum { ROWS = 18, K = 64, NB = K / 32 };
    block_q8_0 m[ROWS][NB];
    for (int r = 0; r < ROWS; r++)
        for (int b = 0; b < NB; b++) {
            m[r][b].d = (uint16_t)(0x3c00 + r * 16 + b);
            for (int i = 0; i < 32; i++) m[r][b].qs[i] = (int8_t)((r * 5 + b * 32 + i) % 251 - 125);
        }
    size_t bytes = ember_pack_q8_0_bytes(ROWS, K);
    tap_ok(bytes == 2 * NB * 544, "18 x 64 packs into 2 tiles x 2 blocks x 544 bytes (%zu)", bytes);
    uint8_t *p = malloc(bytes);
    memset(p, 0xaa, bytes);
    pack(m, sizeof m[0], ROWS, K, p, 1, 2);
    int untouched = 1;
    for (size_t i = 0; i < NB * 544; i++) untouched &= p[i] == 0xaa;
    tap_ok(untouched, "packing tiles [1,2) leaves tile 0 alone");
    pack(m, sizeof m[0], ROWS, K, p, 0, 1);

    int ok = 1, pad = 1;
    for (int t = 0; t < 2; t++)
        for (int b = 0; b < NB; b++) {
            const uint8_t *rec = p + ((size_t)t * NB + b) * 544;
            for (int rr = 0; rr < 16; rr++) {
                int r = t * 16 + rr;
                for (int g = 0; g < 8; g++)
                    for (int j = 0; j < 4; j++) {
                        uint8_t got = rec[g * 64 + rr * 4 + j];
                        if (r < ROWS) ok &= got == (uint8_t)m[r][b].qs[4 * g + j];
                        else pad &= got == 0;
                    }
                uint16_t d = (uint16_t)(rec[512 + rr * 2] | rec[513 + rr * 2] << 8);
                if (r < ROWS) ok &= d == m[r][b].d;
                else pad &= d == 0;
            }
        }
    tap_ok(ok, "record (tile, block): group g holds inputs 4g..4g+3, row r at g*64 + r*4, scales at 512 + 2r");
    tap_ok(pad, "tail tile rows 18..31 are zero (codes and scales)");
    /* one spot check written out by hand: tile 1, block 1, row 17 (lane 1),
       group 2, byte 3 = input 32 + 11 of row 17 = (85 + 43) % 251 - 125 = 3 */
    tap_ok(p[(1 * NB + 1) * 544 + 2 * 64 + 1 * 4 + 3] == 3, "hand-computed byte of tile 1 block 1 row 17");
    tap_ok(ember_pack_q8_0_bytes(0, 64) == 0 && ember_pack_q8_0_bytes(16, 0) == 0, "empty shapes pack to 0 bytes");
    free(p);
}

/* The kernel table's entry describes the layout the lifecycle packs with
   and the forward pass reads through (kernels.h). */
static void test_table(const ember_kernel *vnni, const ember_kernel *kc)
{
    tap_ok(ember_layout_exists(EMBER_Q8_0) && !ember_layout_exists(EMBER_Q3_K) && !ember_layout_exists(EMBER_F32),
           "Q8_0 has a packed layout, Q3_K and F32 not yet");
    tap_ok(!ember_kernel_packed(EMBER_Q8_0, EMBER_ISA_SCALAR) && !ember_kernel_packed(EMBER_Q3_K, ember_cpu_isa()),
           "no packed kernel for the scalar ISA or for a dtype without a layout");
    tap_ok(!kc->layout, "the compressed Q8_0 kernel reads the file's rows (no layout)");
    if (!vnni) {
        tap_skip("no AVX2 on this CPU (or build): no packed kernel is registered");
        tap_skip("no AVX2 on this CPU (or build): no packed kernel is registered");
        tap_skip("no AVX2 on this CPU (or build): no packed kernel is registered");
        return;
    }
    const ember_layout *L = vnni->layout;
    tap_ok(L && L->src_type == EMBER_Q8_0 && L->tile_rows == 16 && L->record_bytes == 544 &&
               L->bytes == ember_pack_q8_0_bytes && !strcmp(L->name, "q8_0x16"),
           "the packed entry's layout: q8_0x16, 16-row tiles of 544-byte records per Q8_0 block");
    tap_ok(vnni->wtype == EMBER_Q8_0 &&
               (ember_cpu_has_vnni512() ? vnni->isa == EMBER_ISA_AVX512 && !strcmp(vnni->name, "q8_0x16_avx512vnni")
                                        : vnni->isa == EMBER_ISA_AVX2 && !strcmp(vnni->name, "q8_0x16_avx2")),
           "the packed entry names its source dtype and ISA (%s)", vnni->name);
    if (vnni->act_type == EMBER_ACT_Q8_0U) {
        /* the AVX-512 kernel's activations: the compressed quantizer's codes
           + 128 and its d widened, for any row (NaN, inf, zeros, ties) */
        enum { K = 96 };
        float x[K];
        for (int i = 0; i < K; i++) x[i] = (float)((int)(next() % 2001) - 1000) * 0.01f;
        x[5] = 0.5f, x[6] = -0.5f, x[7] = 1e-30f;
        for (int i = 32; i < 64; i++) x[i] = 0.0f;
        x[70] = NAN, x[71] = INFINITY;
        uint8_t q8[K / 32 * sizeof(block_q8_0)], want[K / 32 * sizeof(ember_block_q8_0u)], got[sizeof want];
        kc->quantize_act(x, q8, K);
        ember_q8_0u_from_q8_0(q8, want, K);
        memset(got, 0xaa, sizeof got);
        vnni->quantize_act(x, got, K);
        tap_ok(ember_act_bytes(EMBER_ACT_Q8_0U, K) == sizeof want && !memcmp(got, want, sizeof want),
               "the packed kernel's activations are the compressed kernel's Q8_0 blocks, codes + 128 and d widened");
    } else {
        tap_ok(vnni->act_type == kc->act_type && vnni->quantize_act == kc->quantize_act,
               "packed and compressed Q8_0 weights take the same activations (one quantization per input)");
    }
}

typedef struct {
    int runs, ref_bad, vnni_bad, comp_bad, pack_bad;
} stats_t;

static void run_case(int rows, int64_t k, int nt, int r0, int r1, const ember_kernel *kc,
                     const ember_kernel *vnni, stats_t *st)
{
    int64_t nb = k / 32;
    size_t row_bytes = (size_t)nb * sizeof(block_q8_0) + 6; /* a padded stride */
    uint8_t *w = malloc(row_bytes * (size_t)rows);
    for (int r = 0; r < rows; r++) {
        block_q8_0 *b = (block_q8_0 *)(w + (size_t)r * row_bytes);
        for (int64_t i = 0; i < nb; i++) {
            b[i].d = (uint16_t)(next() % 3 == 0 ? next() % 0x400 : 0x2000 + next() % 0x1800);
            for (int j = 0; j < 32; j++) b[i].qs[j] = (int8_t)(next() & 0xff);
            if ((r + i) % 5 == 0)
                for (int j = 0; j < 32; j++) b[i].qs[j] = (int8_t)(j & 1 ? 127 : -128);
        }
    }
    size_t xs = sizeof(block_q8_0) * (size_t)nb + 2;
    uint8_t *xq = malloc(xs * (size_t)nt);
    float *xf = malloc(sizeof(float) * (size_t)k);
    for (int t = 0; t < nt; t++) {
        for (int64_t i = 0; i < k; i++) xf[i] = (float)((int64_t)(next() % 2001) - 1000) * 1e-3f;
        ember_quantize_row(EMBER_Q8_0, xf, xq + (size_t)t * xs, k);
        if (t % 3 == 1) {
            block_q8_0 *b = (block_q8_0 *)(xq + (size_t)t * xs);
            for (int j = 0; j < 32; j++) b[0].qs[j] = -128;
        }
    }
    uint8_t *p = malloc(ember_pack_q8_0_bytes(rows, k));
    int ntiles = (rows + 15) / 16;
    pack(w, row_bytes, rows, k, p, 0, ntiles / 2);
    pack(w, row_bytes, rows, k, p, ntiles / 2, ntiles);
    /* the packer in use (AVX-512 gathers where present) against the
       byte-by-byte oracle, over whole tiles including the padded tail */
    size_t pbytes = ember_pack_q8_0_bytes(rows, k);
    uint8_t *pr = malloc(pbytes);
    memset(pr, 0x5a, pbytes);
    ember_pack_q8_0_ref(w, row_bytes, rows, k, pr, 0, ntiles);
    if (memcmp(p, pr, pbytes) && !st->pack_bad++)
        tap_diag("packer differs from the oracle: rows=%d k=%lld", rows, (long long)k);
    free(pr);

    size_t ys = (size_t)rows + 5, yl = ys * (size_t)nt;
    float *yc = malloc(yl * 4), *ys0 = malloc(yl * 4), *yr = malloc(yl * 4), *yv = malloc(yl * 4);
    for (size_t i = 0; i < yl; i++) yc[i] = ys0[i] = yr[i] = yv[i] = -3.0f;
    kc->matmul(w, row_bytes, k, r0, r1, xq, xs, nt, yc, ys);
    ember_matmul_fn scalar = ember_kernels_simple(EMBER_Q8_0, EMBER_ISA_SCALAR)->matmul;
    scalar(w, row_bytes, k, r0, r1, xq, xs, nt, ys0, ys);
    size_t tile_bytes = ember_pack_q8_0_bytes(16, k);   /* the packed kernels' "row" stride */
    ember_packed_matmul_ref(p, tile_bytes, k, r0, r1, xq, xs, nt, yr, ys);
    st->runs++;
    st->comp_bad += memcmp(yc, ys0, yl * 4) != 0;
    if (memcmp(yr, ys0, yl * 4) && !st->ref_bad++)
        tap_diag("ref differs: rows=%d k=%lld nt=%d r0=%d r1=%d", rows, (long long)k, nt, r0, r1);
    if (vnni) {
        /* the kernel's own activation rows, from the same Q8_0 blocks */
        const uint8_t *xv = xq;
        size_t xvs = xs;
        uint8_t *xu = NULL;
        if (vnni->act_type == EMBER_ACT_Q8_0U) {
            xvs = ember_act_bytes(EMBER_ACT_Q8_0U, k) + 4;   /* a padded stride */
            xu = malloc(xvs * (size_t)nt);
            for (int t = 0; t < nt; t++) ember_q8_0u_from_q8_0(xq + (size_t)t * xs, xu + (size_t)t * xvs, k);
            xv = xu;
        }
        vnni->matmul(p, tile_bytes, k, r0, r1, xv, xvs, nt, yv, ys);
        free(xu);
        if (memcmp(yv, ys0, yl * 4) && !st->vnni_bad++) {
            for (size_t i = 0; i < yl; i++)
                if (memcmp(&yv[i], &ys0[i], 4)) {
                    tap_diag("vnni differs: rows=%d k=%lld nt=%d r0=%d r1=%d y[%zu] %.9g vs %.9g", rows,
                             (long long)k, nt, r0, r1, i, yv[i], ys0[i]);
                    break;
                }
        }
    }
    free(w);
    free(xq);
    free(xf);
    free(p);
    free(yc);
    free(ys0);
    free(yr);
    free(yv);
}

/* Q5_0 rows packed as q8_0x16 tiles (ember_pack_q5_0_ref): a hand-built
   block's codes where the record holds them, then over a battery of
   shapes the tiles' oracle and the packed kernel of Q5_0 equal the
   compressed Q5_0 kernels bit for bit (the scalar one the ground truth). */
static void test_q5_0(void)
{
    /* row 17 of 18, one block: qs[j] = j * 17 (low nibble j + j*17's, high
       nibble), qh bits set on codes 3 and 20 */
    enum { ROWS = 18, K = 32 };
    block_q5_0 m[ROWS];
    memset(m, 0, sizeof m);
    for (int r = 0; r < ROWS; r++) {
        m[r].d = (uint16_t)(0x3c00 + r);
        for (int j = 0; j < 16; j++) m[r].qs[j] = (uint8_t)(j * 17 + r);
        uint32_t qh = 1u << 3 | 1u << 20;
        memcpy(m[r].qh, &qh, 4);
    }
    uint8_t *p = malloc(ember_pack_q8_0_bytes(ROWS, K));
    ember_pack_q5_0_ref(m, sizeof m[0], ROWS, K, p, 0, 2);
    const uint8_t *rec = p + 544, *r17 = &m[17].qs[0];
    /* code 3 = (qs[3] & 15 | 16) - 16 in group 0 byte 3; code 20 = (qs[4] >> 4 | 16) - 16 in group 5 byte 0 */
    tap_ok((int8_t)rec[0 * 64 + 1 * 4 + 3] == (int8_t)((r17[3] & 15) | 16) - 16 &&
               (int8_t)rec[5 * 64 + 1 * 4 + 0] == (int8_t)((r17[4] >> 4) | 16) - 16 &&
               (int8_t)rec[0 * 64 + 1 * 4 + 2] == (int8_t)(r17[2] & 15) - 16 && !memcmp(rec + 512 + 2, &m[17].d, 2),
           "Q5_0 as q8_0x16: code j of row r at group j / 4, byte r * 4 + j %% 4, its fifth bit from qh, minus 16; d at 512 + 2r");
    free(p);
    const ember_kernel *kc = ember_kernel_find(EMBER_Q5_0, ember_cpu_isa()), *kp = ember_kernel_packed(EMBER_Q5_0, ember_cpu_isa());
    const ember_kernel *ks = ember_kernels_simple(EMBER_Q5_0, EMBER_ISA_SCALAR);
    static const int rows_list[] = {1, 16, 17, 40};
    static const int64_t k_list[] = {32, 96, 544, 1408};
    int runs = 0, ref_bad = 0, comp_bad = 0, kern_bad = 0;
    for (size_t ri = 0; ri < 4; ri++)
        for (size_t ki = 0; ki < 4; ki++)
            for (int nt = 1; nt <= 19; nt += 3) {
                const int rows = rows_list[ri], r0 = rows > 16 ? 5 : 0;
                const int64_t k = k_list[ki], nb = k / 32;
                const size_t rb = (size_t)nb * sizeof(block_q5_0) + 6;   /* a padded stride */
                uint8_t *w = malloc(rb * (size_t)rows);
                for (int r = 0; r < rows; r++)
                    for (int64_t b = 0; b < nb; b++) {
                        block_q5_0 *blk = (block_q5_0 *)(w + (size_t)r * rb) + b;
                        for (size_t i = 0; i < sizeof *blk; i++) ((uint8_t *)blk)[i] = (uint8_t)next();
                        blk->d = (uint16_t)(0x1000 + next() % 0x2800 + ((r + b) % 7 == 3 ? 0x8000 : 0));
                    }
                const size_t xs = ember_act_bytes(EMBER_Q8_0, k) + 4, xus = ember_act_bytes(EMBER_ACT_Q8_0U, k) + 4;
                uint8_t *xq = malloc(xs * (size_t)nt), *xu = malloc(xus * (size_t)nt);
                float *xf = malloc(sizeof(float) * (size_t)k);
                for (int t = 0; t < nt; t++) {
                    for (int64_t i = 0; i < k; i++) xf[i] = (float)((int64_t)(next() % 2001) - 1000) * 1e-3f;
                    ks->quantize_act(xf, xq + (size_t)t * xs, k);
                    ember_q8_0u_from_q8_0(xq + (size_t)t * xs, xu + (size_t)t * xus, k);
                }
                const size_t tb = ember_pack_q8_0_bytes(16, k), yl = (size_t)(rows + 2) * (size_t)nt;
                uint8_t *pk = malloc(ember_pack_q8_0_bytes(rows, k));
                ember_pack_q5_0_ref(w, rb, rows, k, pk, 0, (rows + 15) / 16);
                float *y0 = malloc(yl * 4), *yc = malloc(yl * 4), *yr = malloc(yl * 4), *yk = malloc(yl * 4);
                for (size_t i = 0; i < yl; i++) y0[i] = yc[i] = yr[i] = yk[i] = -3.0f;
                ks->matmul(w, rb, k, r0, rows, xq, xs, nt, y0, (size_t)rows + 2);
                kc->matmul(w, rb, k, r0, rows, xq, xs, nt, yc, (size_t)rows + 2);
                ember_packed_matmul_ref(pk, tb, k, r0, rows, xq, xs, nt, yr, (size_t)rows + 2);
                if (kp) {
                    const int u = kp->act_type == EMBER_ACT_Q8_0U;
                    kp->matmul(pk, tb, k, r0, rows, u ? xu : xq, u ? xus : xs, nt, yk, (size_t)rows + 2);
                    kern_bad += memcmp(yk, y0, yl * 4) != 0;
                }
                runs++;
                comp_bad += memcmp(yc, y0, yl * 4) != 0;
                ref_bad += memcmp(yr, y0, yl * 4) != 0;
                free(w); free(xq); free(xu); free(xf); free(pk); free(y0); free(yc); free(yr); free(yk);
            }
    tap_ok(comp_bad == 0, "Q5_0: %s == the scalar Q5_0 kernel (%d of %d cases differ)", kc->name, comp_bad, runs);
    tap_ok(ref_bad == 0, "Q5_0 rows as q8_0x16 tiles, the tiles' oracle == compressed Q5_0 bit for bit (%d of %d differ)",
           ref_bad, runs);
    if (kp)
        tap_ok(kern_bad == 0, "Q5_0 packed (%s) == compressed Q5_0 bit for bit (%d of %d cases differ)", kp->name,
               kern_bad, runs);
    else
        tap_skip("no packed Q5_0 kernel on this CPU");
}

int main(void)
{
    const ember_kernel *vnni = ember_kernel_packed(EMBER_Q8_0, ember_cpu_isa());
    pack = vnni ? vnni->layout->pack : ember_pack_q8_0_ref;
    test_layout();
    const ember_kernel *kc = ember_kernel_find(EMBER_Q8_0, ember_cpu_isa());
    tap_ok(kc != NULL, "a compressed Q8_0 kernel exists (%s)", kc ? kc->name : "none");
    if (!kc) return tap_done();
    tap_ok(!vnni == (ember_cpu_isa() < EMBER_ISA_AVX2), "ember_kernel_packed(Q8_0) is non-NULL exactly with AVX2 or better");
    test_table(vnni, kc);
    test_q5_0();

    static const int rows_list[] = {1, 5, 16, 17, 33, 100};
    static const int64_t k_list[] = {32, 64, 96, 544, 2048};
    stats_t st = {0};
    for (size_t ri = 0; ri < sizeof rows_list / sizeof rows_list[0]; ri++)
        for (size_t ki = 0; ki < sizeof k_list / sizeof k_list[0]; ki++)
            for (int nt = 1; nt <= 17; nt++) {
                int rows = rows_list[ri];
                int64_t k = k_list[ki];
                if (k >= 2048 && nt % 4 != 1) continue;
                run_case(rows, k, nt, 0, rows, kc, vnni, &st);
                if (rows > 16) {
                    run_case(rows, k, nt, 16, rows, kc, vnni, &st);     /* r0 on a tile boundary */
                    run_case(rows, k, nt, 0, rows - 3, kc, vnni, &st);  /* r1 inside a tile */
                    run_case(rows, k, nt, 16, 17, kc, vnni, &st);       /* one row */
                    run_case(rows, k, nt, 5, rows - 1, kc, vnni, &st);  /* r0 inside a tile, too */
                }
            }
    /* k = 8192 decode and prefill; 37 tokens at k = 8192 take two of the
       kernel's token chunks (16 pairs of activations prepared at a time) and
       end on a lone token */
    run_case(40, 8192, 1, 0, 40, kc, vnni, &st);
    run_case(40, 8192, 9, 16, 37, kc, vnni, &st);
    run_case(40, 8192, 37, 0, 40, kc, vnni, &st);
    run_case(21, 8192, 34, 5, 21, kc, vnni, &st);
    /* prefill takes rows in chunks of equal size up to 32 blocks, two
       blocks a turn, carrying the sums: 65 blocks are chunks of 22, 22 and
       21 (an odd turn), 36 blocks two of 18; a UBATCH of 64 tokens at k = 8192 is 21
       triples and a lone token over 4 chunks; 389 tokens of one block are
       more than the 128 triples prepared at a time */
    run_case(33, 65 * 32, 7, 3, 33, kc, vnni, &st);
    run_case(33, 36 * 32, 8, 0, 33, kc, vnni, &st);
    run_case(32, 8192, 64, 0, 32, kc, vnni, &st);
    run_case(17, 32, 389, 0, 17, kc, vnni, &st);
    /* rows of more than 1024 blocks go block chunk by block chunk */
    run_case(20, 1032 * 32, 1, 0, 20, kc, vnni, &st);
    run_case(20, 1032 * 32, 3, 0, 20, kc, vnni, &st);
    tap_ok(st.comp_bad == 0, "%s == scalar compressed (%d of %d cases differ)", kc->name, st.comp_bad, st.runs);
    tap_ok(st.pack_bad == 0, "packer (%s) == byte-by-byte oracle (%d of %d cases differ)",
           ember_cpu_has_vnni512() ? "avx512 shuffles" : "scalar", st.pack_bad, st.runs);
    tap_ok(st.ref_bad == 0, "packed reference == compressed Q8_0 bit for bit (%d of %d cases differ)", st.ref_bad,
           st.runs);
    if (vnni)
        tap_ok(st.vnni_bad == 0, "packed %s == compressed Q8_0 bit for bit (%d of %d cases differ)", vnni->name,
               st.vnni_bad, st.runs);
    else
        tap_skip("no AVX2 on this CPU");
    /* on an AVX-512 machine the AVX2 entry is checked as well */
    const ember_kernel *k2 = ember_kernels_packed(EMBER_Q8_0, EMBER_ISA_AVX2);
    if (k2 && vnni != k2 && ember_cpu_isa() >= EMBER_ISA_AVX2) {
        stats_t s2 = {0};
        run_case(40, 8192, 9, 16, 37, kc, k2, &s2);
        run_case(33, 2048, 17, 5, 32, kc, k2, &s2);
        run_case(100, 544, 3, 0, 100, kc, k2, &s2);
        tap_ok(s2.vnni_bad == 0, "packed AVX2 == compressed Q8_0 bit for bit on this CPU too (%d of %d)", s2.vnni_bad,
               s2.runs);
    } else {
        tap_skip("the AVX2 packed kernel is the one tested above (or there is none)");
    }
    return tap_done();
}
