/* K-quant reference conversions: hand-built blocks whose floats are worked
   out from the format description, quantize -> dequantize error bounds, and
   (with the optional fixtures) the reference's own Q4_K/Q5_K/Q6_K tensors
   checked against the F16 file of the same weights. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "gguf.h"
#include "tap.h"

static int same(const float *a, const float *b, int n, int *where)
{
    for (int i = 0; i < n; i++)
        if (!(a[i] == b[i])) { *where = i; return 0; }
    *where = -1;
    return 1;
}

static void report(const char *what, const float *got, const float *want, int n)
{
    int at;
    if (same(got, want, n, &at)) tap_ok(1, "%s", what);
    else tap_ok(0, "%s: element %d is %g, expected %g", what, at, got[at], want[at]);
}

/* Scales {1,2,3,4,17,33,50,63} and mins {0,5,10,15,20,40,60,63}: sub-blocks
   4..7 need the high bits stored in the top of bytes 0..7. */
static const uint8_t k4_scales[12] = {0x41, 0x82, 0xc3, 0xc4, 0x40, 0x85, 0xca, 0xcf,
                                      0x41, 0x81, 0xc2, 0xff};
static const int k4_sc[8] = {1, 2, 3, 4, 17, 33, 50, 63};
static const int k4_m[8] = {0, 5, 10, 15, 20, 40, 60, 63};

static void test_q4_K(void)
{
    block_q4_K b;
    b.d = ember_f32_to_fp16(1.0f);
    b.dmin = ember_f32_to_fp16(0.5f);
    memcpy(b.scales, k4_scales, 12);
    for (int i = 0; i < 128; i++) b.qs[i] = (uint8_t)(i * 37 + 11);
    float got[QK_K], want[QK_K];
    /* qs[32c + l]: low nibble is element 64c + l, high nibble 64c + 32 + l */
    for (int c = 0; c < 4; c++)
        for (int l = 0; l < 32; l++) {
            uint8_t q = b.qs[32 * c + l];
            want[64 * c + l] = (float)(k4_sc[2 * c] * (q & 15)) - 0.5f * (float)k4_m[2 * c];
            want[64 * c + 32 + l] = (float)(k4_sc[2 * c + 1] * (q >> 4)) - 0.5f * (float)k4_m[2 * c + 1];
        }
    tap_ok(ember_dequantize_row(EMBER_Q4_K, &b, got, QK_K) == 0, "Q4_K dequantize accepted");
    report("Q4_K hand-built block (6-bit split scales and mins)", got, want, QK_K);
}

static void test_q5_K(void)
{
    block_q5_K b;
    b.d = ember_f32_to_fp16(0.25f);
    b.dmin = ember_f32_to_fp16(2.0f);
    memcpy(b.scales, k4_scales, 12);
    for (int i = 0; i < 128; i++) b.qs[i] = (uint8_t)(i * 53 + 7);
    for (int i = 0; i < 32; i++) b.qh[i] = (uint8_t)(i * 29 + 3);
    float got[QK_K], want[QK_K];
    /* the fifth bit of element 64c + l is bit 2c of qh[l]; of 64c + 32 + l, bit 2c+1 */
    for (int c = 0; c < 4; c++)
        for (int l = 0; l < 32; l++) {
            uint8_t q = b.qs[32 * c + l], h = b.qh[l];
            int lo = (q & 15) + 16 * ((h >> (2 * c)) & 1), hi = (q >> 4) + 16 * ((h >> (2 * c + 1)) & 1);
            want[64 * c + l] = 0.25f * (float)(k4_sc[2 * c] * lo) - 2.0f * (float)k4_m[2 * c];
            want[64 * c + 32 + l] = 0.25f * (float)(k4_sc[2 * c + 1] * hi) - 2.0f * (float)k4_m[2 * c + 1];
        }
    ember_dequantize_row(EMBER_Q5_K, &b, got, QK_K);
    report("Q5_K hand-built block (qh fifth bits)", got, want, QK_K);
}

static void test_q6_K(void)
{
    block_q6_K b;
    memset(&b, 0, sizeof b);
    b.d = ember_f32_to_fp16(0.5f);
    for (int g = 0; g < 16; g++) b.scales[g] = (int8_t)(g * 9 - 70);
    float got[QK_K], want[QK_K];
    /* all quants 0 -> every value is -32 * d * scale */
    for (int i = 0; i < QK_K; i++) want[i] = -32 * 0.5f * (float)(b.scales[i / 16]);
    /* one probe: element 229 = half 1, quarter 3 (high nibble of ql[64 + 32 + l],
       bits 6-7 of qh[32 + l]) with l = 5; q = 7 | 2 << 4 = 39 */
    b.ql[64 + 32 + 5] = 0x70;
    b.qh[32 + 5] = 0x80;
    want[229] = 0.5f * (float)b.scales[14] * (39 - 32);
    /* another: element 2 = half 0, quarter 0, low nibble 15 and bits 0-1 = 3 -> 63 */
    b.ql[2] = 0x0f;
    b.qh[2] = 0x03;
    want[2] = 0.5f * (float)b.scales[0] * (63 - 32);
    ember_dequantize_row(EMBER_Q6_K, &b, got, QK_K);
    report("Q6_K hand-built block (int8 scales, -32 offset, ql/qh placement)", got, want, QK_K);
}

/* IQ4_XS: sub-block scales from a nibble of scales_l (low for even
   sub-blocks) and two bits of scales_h, minus 32; values through IQ4_NL's
   code book, low nibbles for a sub-block's first 16 elements. */
static void test_iq4_xs(void)
{
    static const int sc[8] = {-31, -14, 3, 20, -27, -10, 7, 24};
    block_iq4_xs b;
    memset(&b, 0, sizeof b);
    b.d = ember_f32_to_fp16(0.5f);
    b.scales_l[0] = 0x21;
    b.scales_l[1] = 0x43;
    b.scales_l[2] = 0x65;
    b.scales_l[3] = 0x87;
    b.scales_h = 0xe4e4;            /* high bits 0, 1, 2, 3, 0, 1, 2, 3 */
    float got[QK_K], want[QK_K];
    for (int i = 0; i < QK_K; i++) want[i] = 0.5f * (float)sc[i / 32] * -127.0f;   /* code 0 */
    b.qs[84] = 0xf0;                /* sub-block 5, j 4: element 180 (high) gets code 15 */
    want[5 * 32 + 16 + 4] = 0.5f * (float)sc[5] * 113.0f;
    b.qs[55] = 0x09;                /* sub-block 3, j 7: element 103 (low) gets code 9 */
    want[3 * 32 + 7] = 0.5f * (float)sc[3] * 13.0f;
    ember_dequantize_row(EMBER_IQ4_XS, &b, got, QK_K);
    report("IQ4_XS hand-built block (split 6-bit scales, code book, nibble placement)", got, want, QK_K);
}

static void test_q3_K(void)
{
    static const uint8_t sc_bytes[12] = {0x80, 0x21, 0x5f, 0xf0, 0x91, 0x3f, 0xda, 0x74,
                                         0x68, 0xbc, 0x81, 0xc6};
    static const int sc[16] = {-32, -31, -1, 0, 1, 31, -22, -12, 8, 18, -27, -17, -7, 3, 13, 23};
    block_q3_K b;
    memset(&b, 0, sizeof b);
    b.d = ember_f32_to_fp16(2.0f);
    memcpy(b.scales, sc_bytes, 12);
    float got[QK_K], want[QK_K];
    /* quants 0 and no hmask bit: every value is d * scale * (0 - 4) */
    for (int i = 0; i < QK_K; i++) want[i] = 2.0f * (float)sc[i / 16] * -4;
    /* element e takes bits 2s..2s+1 of qs[32n + l] and bit 4n + s of
       hmask[l] (n = e / 128, s = e % 128 / 32, l = e % 32).  Element 150:
       n = 1, s = 0, l = 22; q = 2 with its hmask bit set -> +2 */
    b.qs[32 + 22] = 0x02;
    b.hmask[22] = 0x10;
    want[150] = 2.0f * (float)sc[150 / 16] * 2;
    /* element 77: n = 0, s = 2, l = 13; q = 3, hmask bit clear -> 3 - 4 */
    b.qs[13] = 0x30;
    want[77] = 2.0f * (float)sc[77 / 16] * (3 - 4);
    ember_dequantize_row(EMBER_Q3_K, &b, got, QK_K);
    report("Q3_K hand-built block (6-bit scales -32, hmask)", got, want, QK_K);
}

static void test_q2_K(void)
{
    block_q2_K b;
    memset(&b, 0, sizeof b);
    b.d = ember_f32_to_fp16(0.5f);
    b.dmin = ember_f32_to_fp16(0.25f);
    for (int j = 0; j < 16; j++) b.scales[j] = (uint8_t)((j + 1) % 16 | (15 - j) << 4);
    for (int i = 0; i < 64; i++) b.qs[i] = (uint8_t)(i * 77 + 5);
    float got[QK_K], want[QK_K];
    /* element 128h + 32s + l takes bits 2s..2s+1 of qs[32h + l]; its
       16-group (and scale byte) is its index / 16 */
    for (int i = 0; i < QK_K; i++) {
        int h = i / 128, s = (i % 128) / 32, l = i % 32;
        int q = (b.qs[32 * h + l] >> (2 * s)) & 3;
        uint8_t scb = b.scales[i / 16];
        want[i] = 0.5f * (float)(scb & 15) * (float)q - 0.25f * (float)(scb >> 4);
    }
    ember_dequantize_row(EMBER_Q2_K, &b, got, QK_K);
    report("Q2_K hand-built block (4-bit scale/min pairs)", got, want, QK_K);
}

static void test_q8_K(void)
{
    float x[2 * QK_K];
    for (int i = 0; i < QK_K; i++) x[i] = (float)(i - 100);   /* max-abs value +155 */
    for (int i = 0; i < QK_K; i++) x[QK_K + i] = (float)(50 - i) * 0.5f; /* -102.5 */
    block_q8_K q[2];
    memset(q, 0x55, sizeof q);
    tap_ok(ember_quantize_row(EMBER_Q8_K, x, q, 2 * QK_K) == 0, "Q8_K quantize accepted");
    int ok = q[0].qs[255] == -127 && q[0].qs[100] == 0 && q[0].qs[0] == 82;
    ok = ok && fabsf(q[0].d - (-155.0f / 127)) < 1e-6f;
    ok = ok && q[1].qs[255] == -127 && fabsf(q[1].d - 102.5f / 127) < 1e-6f;
    for (int b = 0; b < 2; b++)
        for (int j = 0; j < 16; j++) {
            int s = 0;
            for (int l = 0; l < 16; l++) s += q[b].qs[16 * j + l];
            ok = ok && s == q[b].bsums[j];
        }
    tap_ok(ok, "Q8_K: d = -max/127 (sign of the max-abs value), qs rounded, bsums per 16");
    float y[2 * QK_K];
    ember_dequantize_row(EMBER_Q8_K, q, y, 2 * QK_K);
    double worst = 0;
    for (int i = 0; i < 2 * QK_K; i++) {
        double e = fabs(y[i] - x[i]) / fabs(q[i / QK_K].d);
        if (e > worst) worst = e;
    }
    tap_ok(worst <= 0.5 + 1e-4, "Q8_K round trip within half a step (%.4f)", worst);
    float z[QK_K] = {0};
    ember_quantize_row(EMBER_Q8_K, z, q, QK_K);
    int zero = q[0].d == 0;
    for (int i = 0; i < QK_K; i++) zero = zero && q[0].qs[i] == 0;
    for (int j = 0; j < 16; j++) zero = zero && q[0].bsums[j] == 0;
    tap_ok(zero, "Q8_K all-zero block: d = 0, quants and bsums 0");
}

static uint64_t rng = 0x243f6a8885a308d3ull;
static float gauss(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    float u = ((float)(rng >> 40) + 0.5f) / 16777216.0f;
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    float v = (float)(rng >> 40) / 16777216.0f;
    return sqrtf(-2 * logf(u)) * cosf(6.2831853f * v);
}

/* RMSE / RMS of quantize -> dequantize on 64 Gaussian blocks with outliers;
   bounds sit ~15% above what this quantizer reaches (ggml's reference
   quantizers land in the same range). */
static void test_round_trip(void)
{
    static const struct { int type; double bound; } cases[] = {
        {EMBER_Q2_K, 0.36}, {EMBER_Q3_K, 0.20}, {EMBER_Q4_K, 0.095},
        {EMBER_Q5_K, 0.048}, {EMBER_Q6_K, 0.024}, {EMBER_Q8_K, 0.015}, {EMBER_IQ4_XS, 0.10},
    };
    enum { N = 64 * QK_K };
    float *x = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * N);
    void *q = malloc((size_t)N * 2);
    for (int i = 0; i < N; i++) x[i] = gauss() * (i % 311 == 0 ? 6.0f : 1.0f) + (i / QK_K % 4 == 1 ? 0.7f : 0);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int t = cases[c].type;
        int rq = ember_quantize_row(t, x, q, N), rd = ember_dequantize_row(t, q, y, N);
        double se = 0, ss = 0;
        int finite = 1;
        for (int i = 0; i < N; i++) {
            se += ((double)y[i] - x[i]) * ((double)y[i] - x[i]);
            ss += (double)x[i] * x[i];
            finite = finite && isfinite(y[i]);
        }
        double rel = sqrt(se / ss);
        tap_ok(rq == 0 && rd == 0 && finite && rel <= cases[c].bound,
               "%s round trip: relative RMSE %.4f <= %.3f", ember_dtype_name(t), rel, cases[c].bound);
    }
    /* constant and all-zero blocks come back exactly (or nearly) */
    for (int i = 0; i < QK_K; i++) x[i] = 0;
    for (int i = QK_K; i < 2 * QK_K; i++) x[i] = -0.75f;
    static const int all[] = {EMBER_Q2_K, EMBER_Q3_K, EMBER_Q4_K, EMBER_Q5_K, EMBER_Q6_K, EMBER_Q8_K, EMBER_IQ4_XS};
    for (size_t c = 0; c < sizeof all / sizeof all[0]; c++) {
        ember_quantize_row(all[c], x, q, 2 * QK_K);
        ember_dequantize_row(all[c], q, y, 2 * QK_K);
        double worst = 0;
        for (int i = 0; i < 2 * QK_K; i++) worst = fmax(worst, fabs((double)y[i] - x[i]));
        /* symmetric formats cannot place a constant offset exactly */
        double tol = (all[c] == EMBER_Q2_K || all[c] == EMBER_Q4_K || all[c] == EMBER_Q5_K) ? 2e-3 : 0.75 / 3;
        tap_ok(worst <= tol, "%s zero and constant blocks: worst error %.2e", ember_dtype_name(all[c]), worst);
    }
    free(x);
    free(y);
    free(q);
}

/* Non-finite and huge input must not trip undefined behaviour (the suite
   also runs under UBSan) and must stay confined to its own block. */
static void test_garbage(void)
{
    static const int all[] = {EMBER_Q2_K, EMBER_Q3_K, EMBER_Q4_K, EMBER_Q5_K, EMBER_Q6_K, EMBER_Q8_K, EMBER_IQ4_XS};
    float x[2 * QK_K], y[2 * QK_K];
    uint8_t q[2 * sizeof(block_q8_K)];
    for (int i = 0; i < QK_K; i++)
        x[i] = i % 4 == 0 ? NAN : i % 4 == 1 ? INFINITY : i % 4 == 2 ? -3e38f : 1e-45f;
    for (int i = QK_K; i < 2 * QK_K; i++) x[i] = gauss();
    for (size_t c = 0; c < sizeof all / sizeof all[0]; c++) {
        int rq = ember_quantize_row(all[c], x, q, 2 * QK_K);
        ember_dequantize_row(all[c], q, y, 2 * QK_K);
        double se = 0, ss = 0;
        for (int i = QK_K; i < 2 * QK_K; i++) {
            se += ((double)y[i] - x[i]) * ((double)y[i] - x[i]);
            ss += (double)x[i] * x[i];
        }
        tap_ok(rq == 0 && sqrt(se / ss) < 0.4, "%s: NaN/inf/huge block quantizes, next block unaffected",
               ember_dtype_name(all[c]));
    }
}

static void test_rejects(void)
{
    float buf[QK_K] = {0};
    uint8_t q[400] = {0};
    tap_ok(ember_dequantize_row(99, q, buf, QK_K) == -1 && ember_quantize_row(-1, buf, q, QK_K) == -1,
           "unknown type numbers are refused");
    tap_ok(ember_dequantize_row(EMBER_Q4_K, q, buf, 100) == -1 &&
           ember_quantize_row(EMBER_Q6_K, buf, q, 255) == -1 &&
           ember_quantize_row(EMBER_Q2_K, buf, q, -256) == -1,
           "row lengths that are not a multiple of 256 are refused");
}

/* The reference quantized the same random weights into each llama-mini file:
   its Q4_K/Q5_K/Q6_K tensors must decode close to the F16 ones, and our own
   quantizer must do about as well as the reference's on the same data. */
static void test_fixtures(void)
{
    char p16[512], pq[512];
    static const struct { const char *file; int type; double bound; } fx[] = {
        {"fixtures/models/llama-mini-Q4_K_M.gguf", EMBER_Q4_K, 0.12},
        {"fixtures/models/llama-mini-Q5_K_M.gguf", EMBER_Q5_K, 0.06},
        {"fixtures/models/llama-mini-Q6_K.gguf", EMBER_Q6_K, 0.03},
    };
    if (!tap_shared("fixtures/models/llama-mini-f16.gguf", p16, sizeof p16)) {
        tap_skip("../shared fixtures absent: reference K-quant tensors not checked");
        return;
    }
    ember_err err;
    gguf_file *f16 = gguf_open(p16, &err);
    if (!f16) {
        tap_ok(0, "open %s: %s", p16, err.msg);
        return;
    }
    for (size_t c = 0; c < 3; c++) {
        if (!tap_shared(fx[c].file, pq, sizeof pq)) {
            tap_skip("fixture file absent");
            continue;
        }
        gguf_file *fq = gguf_open(pq, &err);
        if (!fq) {
            tap_ok(0, "open %s: %s", pq, err.msg);
            continue;
        }
        const gguf_tensor *tq = NULL, *t16 = NULL;
        for (uint64_t i = 0; i < fq->n_tensors && !tq; i++) {
            const gguf_tensor *t = &fq->tensors[i];
            if (t->type != fx[c].type || t->ne[0] % QK_K) continue;
            const gguf_tensor *o = gguf_find_tensor(f16, t->name_z);
            if (o && o->type == EMBER_F16 && o->ne[0] == t->ne[0] && o->ne[1] == t->ne[1]) {
                tq = t;
                t16 = o;
            }
        }
        if (!tq) {
            tap_skip("no matching tensor of that type");
            gguf_close(fq);
            continue;
        }
        int64_t n = tq->ne[0], rows = tq->ne[1] < 64 ? tq->ne[1] : 64;
        size_t rb = ember_row_bytes(fx[c].type, n);
        float *ref = malloc(sizeof(float) * (size_t)n), *got = malloc(sizeof(float) * (size_t)n);
        void *mine = malloc(rb);
        double se_ref = 0, se_mine = 0, ss = 0;
        int64_t same_blocks = 0, blocks = 0;
        int bb = ember_dtype_get(fx[c].type)->block_bytes;
        int ok = tq->nbytes >= rb * (uint64_t)rows;
        for (int64_t r = 0; ok && r < rows; r++) {
            ember_dequantize_row(EMBER_F16, t16->data + (size_t)r * (size_t)n * 2, ref, n);
            ember_dequantize_row(fx[c].type, tq->data + (size_t)r * rb, got, n);
            for (int64_t i = 0; i < n; i++) {
                se_ref += ((double)got[i] - ref[i]) * ((double)got[i] - ref[i]);
                ss += (double)ref[i] * ref[i];
            }
            ember_quantize_row(fx[c].type, ref, mine, n);
            for (int64_t b = 0; b < n / QK_K; b++, blocks++)
                same_blocks += !memcmp((const uint8_t *)mine + b * bb, tq->data + (size_t)r * rb + (size_t)(b * bb), (size_t)bb);
            ember_dequantize_row(fx[c].type, mine, got, n);
            for (int64_t i = 0; i < n; i++) se_mine += ((double)got[i] - ref[i]) * ((double)got[i] - ref[i]);
        }
        double rr = sqrt(se_ref / (ss > 0 ? ss : 1)), rm = sqrt(se_mine / (ss > 0 ? ss : 1));
        tap_ok(ok && ss > 0 && rr <= fx[c].bound,
               "%s: reference %s tensor %s decodes to the F16 weights (rel RMSE %.4f)",
               fx[c].file, ember_dtype_name(fx[c].type), tq->name_z, rr);
        tap_ok(ok && ss > 0 && rm <= rr * 1.10,
               "%s: our quantizer's rel RMSE %.4f vs the reference's %.4f on the same rows",
               ember_dtype_name(fx[c].type), rm, rr);
        tap_diag("%s: %lld of %lld blocks byte-identical to the reference's", ember_dtype_name(fx[c].type),
                 (long long)same_blocks, (long long)blocks);
        free(ref);
        free(got);
        free(mine);
        gguf_close(fq);
    }
    gguf_close(f16);
}

int main(void)
{
    test_q4_K();
    test_q5_K();
    test_q6_K();
    test_q3_K();
    test_iq4_xs();
    test_q2_K();
    test_q8_K();
    test_round_trip();
    test_garbage();
    test_rejects();
    test_fixtures();
    return tap_done();
}
