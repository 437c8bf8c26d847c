/* The grid formats IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S:
   their code books (pinned by size, order, alphabet and a hash of the
   reference's tables), hand-built blocks whose floats are worked out from
   the format description, quantize -> dequantize error bounds, and the
   kernels: the scalar oracle against dequantize-then-dot, and every ISA
   this CPU runs bit-identical to the oracle over a battery of shapes. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "kernels.h"
#include "tap.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}
static float gauss(void)
{
    float u = ((float)(rnd() & 0xffffff) + 1) / 16777217.0f, v = (float)(rnd() & 0xffffff) / 16777216.0f;
    return sqrtf(-2 * logf(u)) * cosf(6.2831853f * v);
}

static const int TYPES[] = {EMBER_IQ2_XXS, EMBER_IQ2_XS, EMBER_IQ2_S, EMBER_IQ3_XXS, EMBER_IQ3_S, EMBER_IQ1_S, EMBER_IQ1_M};
#define NTYPES 7

/* ---- code books ---------------------------------------------------------- */

static uint64_t fnv(const void *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ ((const uint8_t *)p)[i]) * 0x100000001b3ull;
    return h;
}

static void test_books(void)
{
    static const struct { const char *name; int n, dims; int8_t lev[8]; int nlev; uint64_t hash; } want[] = {
        {"IQ2_XXS", 256, 8, {8, 25, 43}, 3, 0xbb4ee025b5ac6e8eull},
        {"IQ2_XS", 512, 8, {8, 25, 43}, 3, 0xc9b1ee61e79909bdull},
        {"IQ2_S", 1024, 8, {8, 25, 43}, 3, 0x123edd38a3b62b90ull},
        {"IQ3_XXS", 256, 4, {4, 12, 20, 28, 36, 44, 52, 62}, 8, 0x01ae59a5620eb195ull},
        {"IQ3_S", 512, 4, {1, 3, 5, 7, 9, 11, 13, 15}, 8, 0x4f8359025ec9ac49ull},
        {"IQ1", 2048, 8, {-1, 0, 1}, 3, 0x6703ed863501ae2eull},
    };
    static int8_t pts[2048][8];
    for (int g = 0; g < 6; g++) {
        int n = ember_iq_grid_points(g, pts);
        int ok = n == want[g].n, sorted = 1, alpha = 1;
        long prev = -1;
        for (int p = 0; ok && p < n; p++) {
            long key = 0;
            for (int i = want[g].dims - 1; i >= 0; i--) {
                int l = 0;
                while (l < want[g].nlev && want[g].lev[l] != pts[p][i]) l++;
                if (l == want[g].nlev) alpha = 0;
                key = key * want[g].nlev + l;
            }
            for (int i = want[g].dims; i < 8; i++)
                if (pts[p][i]) alpha = 0;
            if (key <= prev) sorted = 0;
            prev = key;
        }
        tap_ok(ok && sorted && alpha, "%s book: %d points of %d coordinates from its levels, in the reference's order",
               want[g].name, want[g].n, want[g].dims);
        tap_ok(ok && fnv(pts, (size_t)n * 8) == want[g].hash, "%s book equals the reference's table (hash)", want[g].name);
    }
    tap_ok(ember_iq_grid_points(6, NULL) < 0, "no seventh book");
    const uint8_t *ks = ember_iq_ksigns();
    int kok = ks != NULL;
    for (int i = 0; kok && i < 128; i++) kok = (ks[i] & 127) == i && __builtin_popcount(ks[i]) % 2 == 0;
    tap_ok(kok, "the 7-bit sign fields gain an eighth bit that makes the count of minus signs even");
}

/* ---- hand-built blocks ------------------------------------------------- */

static void check_values(const char *what, int type, const void *blk, const float *want)
{
    float got[QK_K];
    int rc = ember_dequantize_row(type, blk, got, QK_K), at = -1;
    for (int i = 0; rc == 0 && i < QK_K && at < 0; i++)
        if (!(got[i] == want[i])) at = i;
    if (rc == 0 && at < 0) tap_ok(1, "%s", what);
    else tap_ok(0, "%s: element %d is %g, expected %g", what, at, rc ? NAN : got[at], rc ? NAN : want[at]);
}

static void test_hand_built(void)
{
    int8_t (*p2)[8] = calloc(2048, 8);
    float want[QK_K];
    const float d = 0.5f;
    const uint16_t dh = ember_f32_to_fp16(d);

    /* IQ2_XXS: sub-block 3 points (5, 200, 0, 255), sign fields 3 (two
       minus signs) and 1 (odd: the eighth element negative too), scale 7;
       the others all zero: point 0 (eight 8s), no signs, scale 0. */
    {
        ember_iq_grid_points(0, p2);
        block_iq2_xxs b;
        memset(&b, 0, sizeof b);
        b.d = dh;
        uint32_t a0 = 5u | 200u << 8 | 0u << 16 | 255u << 24, a1 = 3u | 1u << 7 | 7u << 28;
        b.qs[12] = (uint16_t)a0, b.qs[13] = (uint16_t)(a0 >> 16), b.qs[14] = (uint16_t)a1, b.qs[15] = (uint16_t)(a1 >> 16);
        for (int e = 0; e < QK_K; e++) want[e] = d * 0.125f * 8;
        const int idx[4] = {5, 200, 0, 255};
        for (int l = 0; l < 4; l++)
            for (int j = 0; j < 8; j++) {
                int neg = (l == 0 && j < 2) || (l == 1 && (j == 0 || j == 7));
                want[96 + 8 * l + j] = d * 7.5f * 0.25f * (float)p2[idx[l]][j] * (neg ? -1 : 1);
            }
        check_values("IQ2_XXS hand-built block (indices, 7-bit signs with parity, scale in the top nibble)", EMBER_IQ2_XXS, &b, want);
    }
    /* IQ2_XS: 9-bit indices and 7-bit signs per 16-bit word, a scale per 16 */
    {
        ember_iq_grid_points(1, p2);
        block_iq2_xs b;
        memset(&b, 0, sizeof b);
        b.d = dh;
        b.qs[10] = (uint16_t)(511 | 0x40 << 9); /* sub-block 2, third group: point 511, sign bit 6 (+ parity bit 7) */
        b.scales[2] = 0x3c;                       /* elements 64..79 scale 12, 80..95 scale 3 */
        for (int e = 0; e < QK_K; e++) want[e] = d * 0.125f * 8;
        for (int e = 64; e < 96; e++) want[e] = d * (0.5f + (e < 80 ? 12 : 3)) * 0.25f * 8;
        for (int j = 0; j < 8; j++) want[80 + j] = d * 3.5f * 0.25f * (float)p2[511][j] * (j >= 6 ? -1 : 1);
        check_values("IQ2_XS hand-built block (9-bit index, signs, a scale per 16 elements)", EMBER_IQ2_XS, &b, want);
    }
    /* IQ2_S: 10-bit indices (two high bits per group in qh), 8 stored signs */
    {
        ember_iq_grid_points(2, p2);
        block_iq2_s b;
        memset(&b, 0, sizeof b);
        b.d = dh;
        b.qs[4 * 5 + 3] = 0x21;   /* sub-block 5, group 3: low bits 0x21 */
        b.qh[5] = 3 << 6;        /* its high bits 3: point 0x321 */
        b.qs[32 + 4 * 5 + 3] = 0x81; /* elements 0 and 7 negative (odd count: allowed here) */
        b.scales[5] = 0xf0;      /* elements 176..191 scale 15 */
        for (int e = 0; e < QK_K; e++) want[e] = d * 0.125f * 8;
        for (int e = 176; e < 192; e++) want[e] = d * 15.5f * 0.25f * 8;
        for (int j = 0; j < 8; j++) want[184 + j] = d * 15.5f * 0.25f * (float)p2[0x321][j] * (j == 0 || j == 7 ? -1 : 1);
        check_values("IQ2_S hand-built block (two high index bits in qh, eight stored signs)", EMBER_IQ2_S, &b, want);
    }
    /* IQ3_XXS: byte indices of 4-element points, signs and scale in a word */
    {
        ember_iq_grid_points(3, p2);
        block_iq3_xxs b;
        memset(&b, 0, sizeof b);
        b.d = dh;
        b.qs[8 * 7 + 5] = 77;                    /* sub-block 7, elements 20..23 */
        uint32_t aux = 0x7fu << 14 | 9u << 28;    /* group 2 (elements 16..23): seven minus signs + parity */
        memcpy(b.qs + 64 + 4 * 7, &aux, 4);
        for (int e = 0; e < QK_K; e++) want[e] = d * 0.25f * 4;
        for (int e = 224; e < QK_K; e++) want[e] = d * 9.5f * 0.5f * 4;
        for (int j = 0; j < 8; j++) want[224 + 16 + j] = -want[224 + 16 + j];
        for (int j = 0; j < 4; j++) want[224 + 20 + j] = -(d * 9.5f * 0.5f * (float)p2[77][j]);
        check_values("IQ3_XXS hand-built block (4-element points, signs and scale in one word)", EMBER_IQ3_XXS, &b, want);
    }
    /* IQ3_S: 9-bit indices (a qh bit per point), 8 stored signs, nibble scales */
    {
        ember_iq_grid_points(4, p2);
        block_iq3_s b;
        memset(&b, 0, sizeof b);
        b.d = dh;
        b.qs[8 * 1 + 6] = 0x10;   /* sub-block 1, point 6: elements 56..59 */
        b.qh[1] = 1 << 6;         /* index 0x110 */
        b.signs[4 * 1 + 3] = 0x02; /* elements 56..63: the second (57) negative */
        b.scales[0] = 0x50;       /* sub-block 1 scale 5, sub-block 0 scale 0 */
        for (int e = 0; e < QK_K; e++) want[e] = d * 1 * 1;
        for (int e = 32; e < 64; e++) want[e] = d * 11 * 1;
        for (int j = 0; j < 4; j++) want[56 + j] = d * 11 * (float)p2[0x110][j] * (j == 1 ? -1 : 1);
        check_values("IQ3_S hand-built block (a qh bit per index, stored signs, nibble scales)", EMBER_IQ3_S, &b, want);
    }
    /* IQ1_S: 11-bit indices (3 high bits per group in a 16-bit word with the
       scale and the delta's sign) */
    {
        ember_iq_grid_points(5, p2);
        block_iq1_s b;
        memset(&b, 0, sizeof b);
        b.d = dh;
        b.qs[4 * 4 + 2] = 0xab;
        b.qh[4] = (uint16_t)(5u << 6 | 6u << 12 | 0x8000u); /* group 2 high bits 5, scale 6, delta -1/8 */
        for (int e = 0; e < QK_K; e++) want[e] = d * 1 * ((float)p2[0][0] + 0.125f);
        for (int e = 128; e < 160; e++) want[e] = d * 13 * ((float)p2[0][e % 8] - 0.125f);
        for (int j = 0; j < 8; j++) want[144 + j] = d * 13 * ((float)p2[0x5ab][j] - 0.125f);
        check_values("IQ1_S hand-built block (11-bit index, scale and delta sign in qh)", EMBER_IQ1_S, &b, want);
    }
    /* IQ1_M: the fp16 scale spread over the top nibbles of the scale words,
       3-bit scales per 16 elements, a delta sign per 8 */
    {
        block_iq1_m b;
        memset(&b, 0, sizeof b);
        uint16_t sc[4] = {0};
        for (int k = 0; k < 4; k++) sc[k] = (uint16_t)((dh >> 4 * k & 15) << 12);
        sc[1] |= (uint16_t)((2u | 7u << 3) << 6); /* sub-block 3: scales 2 (first 16) and 7 */
        memcpy(b.scales, sc, 8);
        b.qs[4 * 3 + 1] = 0x0f;
        b.qh[2 * 3] = 0x70 | 0x80; /* group 1: high bits 7, delta negative */
        for (int e = 0; e < QK_K; e++) want[e] = d * 1 * ((float)p2[0][0] + 0.125f);
        for (int e = 96; e < 128; e++) want[e] = d * (e < 112 ? 5 : 15) * ((float)p2[0][0] + 0.125f);
        for (int j = 0; j < 8; j++) want[104 + j] = d * 5 * ((float)p2[0x70f][j] - 0.125f);
        check_values("IQ1_M hand-built block (scale in the nibbles, per-16 scales, per-8 delta)", EMBER_IQ1_M, &b, want);
    }
    free(p2);
}

/* ---- quantize -> dequantize -------------------------------------------- */

static void test_roundtrip(void)
{
    /* relative squared error on Gaussian data (measured: 0.10-0.11, 0.07,
       0.06, 0.03, 0.02, 0.27, 0.17) */
    static const float bound[NTYPES] = {0.14f, 0.10f, 0.08f, 0.045f, 0.03f, 0.33f, 0.22f};
    enum { N = 16 * QK_K };
    static float x[N], y[N];
    static uint8_t q[16 * 110];
    for (int t = 0; t < NTYPES; t++) {
        for (int i = 0; i < N; i++) x[i] = gauss() * (i < QK_K ? 1e-3f : 1.0f);
        for (int i = 5 * QK_K; i < 6 * QK_K; i++) x[i] = 0;         /* an all-zero block */
        x[7 * QK_K + 3] = 40;                                       /* an outlier */
        int rc = ember_quantize_row(TYPES[t], x, q, N) | ember_dequantize_row(TYPES[t], q, y, N);
        double num = 0, den = 0;
        int zero = 1;
        for (int i = 0; i < N; i++) {
            if (i >= 5 * QK_K && i < 6 * QK_K) { zero = zero && y[i] == 0; continue; }
            if (i >= 7 * QK_K && i < 8 * QK_K) continue;
            num += (double)(y[i] - x[i]) * (y[i] - x[i]), den += (double)x[i] * x[i];
        }
        tap_ok(rc == 0 && num / den < bound[t] && zero, "%s quantize -> dequantize: relative squared error %.4f < %.3f, zeros stay zero",
               ember_dtype_name(TYPES[t]), num / den, bound[t]);
        /* a NaN among the inputs leaves every output finite */
        float nanx[QK_K];
        for (int i = 0; i < QK_K; i++) nanx[i] = i == 9 ? NAN : (i % 3) - 1.0f;
        rc = ember_quantize_row(TYPES[t], nanx, q, QK_K) | ember_dequantize_row(TYPES[t], q, y, QK_K);
        int finite = rc == 0;
        for (int i = 0; i < QK_K; i++) finite = finite && isfinite(y[i]);
        tap_ok(finite, "%s: a NaN input leaves every dequantized value finite", ember_dtype_name(TYPES[t]));
    }
}

/* ---- kernels -------------------------------------------------------- */

/* Random block bytes (every bit pattern decodes) with a sane fp16 scale,
   or blocks quantized from Gaussian rows. */
static void fill_row(int type, uint8_t *row, int nb, int quantized)
{
    size_t bb = (size_t)ember_dtype_get(type)->block_bytes;
    if (quantized) {
        float *x = malloc(sizeof(float) * QK_K * (size_t)nb);
        for (int i = 0; i < QK_K * nb; i++) x[i] = gauss();
        ember_quantize_row(type, x, row, (int64_t)QK_K * nb);
        free(x);
        return;
    }
    for (size_t i = 0; i < bb * (size_t)nb; i++) row[i] = (uint8_t)rnd();
    for (int b = 0; b < nb; b++) {
        uint16_t h = ember_f32_to_fp16((float)(rnd() % 1000 + 1) * 1e-4f);
        uint8_t *p = row + bb * (size_t)b;
        if (type == EMBER_IQ1_M) {
            for (int k = 0; k < 4; k++) p[48 + 2 * k + 1] = (uint8_t)((p[48 + 2 * k + 1] & 0x0f) | (h >> 4 * k & 15) << 4);
        } else {
            memcpy(p, &h, 2);
        }
    }
}

static void test_kernels(void)
{
    static const struct { int rows, k, nt; } cases[] = {
        {1, 256, 1}, {3, 512, 2}, {5, 1024, 7}, {4, 2048, 8}, {2, 4096, 9}, {7, 256, 17}, {1, 8192, 1}, {3, 768, 3}, {2, 16384, 17},
    };
    for (int t = 0; t < NTYPES; t++) {
        int type = TYPES[t];
        const char *name = ember_dtype_name(type);
        const ember_kernel *ks = ember_kernel_find(type, EMBER_ISA_SCALAR);
        tap_ok(ks && ks->act_type == EMBER_Q8_K && ks->wtype == type && ks->layout == NULL,
               "%s has a scalar kernel over Q8_K activations", name);
        if (!ks) continue;
        int ok_ref = 1, ok_simd = 1, simd_runs = 0;
        char names[128] = "";
        double worst = 0;
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            int rows = cases[c].rows, k = cases[c].k, nt = cases[c].nt, nb = k / QK_K;
            size_t rb = ember_row_bytes(type, k), xb = ember_act_bytes(EMBER_Q8_K, k);
            uint8_t *w = malloc(rb * (size_t)rows), *xq = malloc(xb * (size_t)nt);
            float *x = malloc(sizeof(float) * (size_t)k * (size_t)nt), *ys = calloc((size_t)rows * (size_t)nt, sizeof(float)),
                  *yv = calloc((size_t)rows * (size_t)nt, sizeof(float)), *wf = malloc(sizeof(float) * (size_t)k),
                  *xf = malloc(sizeof(float) * (size_t)k);
            for (int r = 0; r < rows; r++) fill_row(type, w + rb * (size_t)r, nb, (r + (int)c) % 2);
            for (int i = 0; i < k * nt; i++) x[i] = gauss();
            for (int tk = 0; tk < nt; tk++) ks->quantize_act(x + (size_t)k * (size_t)tk, xq + xb * (size_t)tk, k);
            ks->matmul(w, rb, k, 0, rows, xq, xb, nt, ys, (size_t)rows);
            /* the oracle against dequantize-then-dot of the same bits */
            for (int r = 0; r < rows; r++) {
                ember_dequantize_row(type, w + rb * (size_t)r, wf, k);
                for (int tk = 0; tk < nt; tk++) {
                    ember_dequantize_row(EMBER_Q8_K, xq + xb * (size_t)tk, xf, k);
                    double dot = 0, norm = 0;
                    for (int i = 0; i < k; i++) dot += (double)wf[i] * xf[i], norm += fabs((double)wf[i] * xf[i]);
                    double err = fabs(dot - ys[(size_t)tk * (size_t)rows + (size_t)r]) / (norm + 1e-30);
                    if (err > worst) worst = err;
                    if (err > 1e-5) ok_ref = 0;
                }
            }
            for (int isa = EMBER_ISA_AVX2; isa <= EMBER_ISA_AVX512; isa++) {
                const ember_kernel *kv = ember_kernel_find(type, (ember_isa)isa);
                if ((int)ember_cpu_isa() < isa || !kv || kv == ks) continue;
                /* rows [1, rows) as a second thread would see them */
                int r0 = rows > 1 ? 1 : 0;
                memset(yv, 0, sizeof(float) * (size_t)rows * (size_t)nt);
                kv->matmul(w, rb, k, r0, rows, xq, xb, nt, yv, (size_t)rows);
                simd_runs++;
                if (!strstr(names, kv->name) && strlen(names) + strlen(kv->name) + 2 < sizeof names)
                    strcat(strcat(names, " "), kv->name);
                for (int tk = 0; tk < nt; tk++)
                    for (int r = r0; r < rows; r++) {
                        size_t at = (size_t)tk * (size_t)rows + (size_t)r;
                        if (memcmp(&yv[at], &ys[at], 4)) ok_simd = 0;
                    }
            }
            free(w), free(xq), free(x), free(ys), free(yv), free(wf), free(xf);
        }
        tap_ok(ok_ref, "%s scalar oracle == dequantize-then-dot within 1e-5 of the |terms| sum (worst %.2g), %zu shapes", name,
               worst, sizeof cases / sizeof cases[0]);
        if (ember_cpu_isa() >= EMBER_ISA_AVX2)
            tap_ok(ok_simd && simd_runs > 0, "%s SIMD kernels (%s) == scalar bitwise (%d runs: random and quantized blocks, 1-17 tokens, row ranges)",
                   name, names, simd_runs);
        else
            tap_skip("no SIMD on this CPU (or EMBER_ISA)");
    }
}

int main(void)
{
    test_books();
    test_hand_built();
    test_roundtrip();
    test_kernels();
    return tap_done();
}
