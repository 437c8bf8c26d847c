/* Simple-block formats: hand-built blocks against values worked out from
   the ggml bit layouts, reference quantizer outputs for known inputs, and
   quantize -> dequantize error bounds. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "dtype.h"
#include "tap.h"

static int all_eq(const float *got, const float *want, int n, const char *what)
{
    for (int i = 0; i < n; i++)
        if (got[i] != want[i] && !(isnan(got[i]) && isnan(want[i]))) {
            tap_diag("%s: element %d is %g, want %g", what, i, got[i], want[i]);
            return 0;
        }
    return 1;
}

static void test_floats(void)
{
    uint16_t h[6] = {0x3c00, 0xc000, 0x0001, 0x7bff, 0x8000, 0x3555};
    float want_h[6] = {1.0f, -2.0f, 0x1p-24f, 65504.0f, -0.0f, 0.333251953125f};
    float out[6];
    tap_ok(ember_dequantize_row(EMBER_F16, h, out, 6) == 0 && all_eq(out, want_h, 6, "f16"),
           "F16 dequantize: 1, -2, smallest subnormal, max, -0, 1/3");
    uint16_t b[4] = {0x3f80, 0xc040, 0x4049, 0x0000};
    float want_b[4] = {1.0f, -3.0f, 3.140625f, 0.0f};
    tap_ok(ember_dequantize_row(EMBER_BF16, b, out, 4) == 0 && all_eq(out, want_b, 4, "bf16"),
           "BF16 dequantize: 1, -3, 3.140625, 0");
    float f[3] = {1.5f, -0.25f, 1e-30f};
    tap_ok(ember_dequantize_row(EMBER_F32, f, out, 3) == 0 && all_eq(out, f, 3, "f32"),
           "F32 dequantize copies");

    float x[4] = {1.0f, -2.0f, 65504.0f, 0.1f};
    uint16_t q[4];
    tap_ok(ember_quantize_row(EMBER_F16, x, q, 4) == 0 && q[0] == 0x3c00 && q[1] == 0xc000 &&
           q[2] == 0x7bff && q[3] == 0x2e66, "F16 quantize (0.1 rounds to 0x2e66)");
    tap_ok(ember_quantize_row(EMBER_BF16, x, q, 4) == 0 && q[0] == 0x3f80 && q[1] == 0xc000 &&
           q[3] == 0x3dcd, "BF16 quantize (0.1 rounds to 0x3dcd)");
}

static void test_q4_0(void)
{
    block_q4_0 blk = {.d = 0x3800}; /* 0.5 */
    for (int j = 0; j < 16; j++) blk.qs[j] = (uint8_t)(j | (15 - j) << 4);
    float out[32], want[32];
    for (int j = 0; j < 16; j++) {
        want[j] = (float)(j - 8) * 0.5f;           /* low nibble j */
        want[16 + j] = (float)(15 - j - 8) * 0.5f; /* high nibble 15-j */
    }
    tap_ok(ember_dequantize_row(EMBER_Q4_0, &blk, out, 32) == 0 && all_eq(out, want, 32, "q4_0") &&
           out[0] == -4.0f && out[15] == 3.5f && out[16] == 3.5f && out[31] == -4.0f,
           "Q4_0 dequantize: low nibbles 0..15, high nibbles 16..31, (q-8)*d");
}

static void test_q4_1(void)
{
    block_q4_1 blk = {.d = 0x3800, .m = 0xbc00}; /* 0.5, -1 */
    for (int j = 0; j < 16; j++) blk.qs[j] = (uint8_t)(j | (15 - j) << 4);
    float out[32];
    int ok = ember_dequantize_row(EMBER_Q4_1, &blk, out, 32) == 0;
    tap_ok(ok && out[0] == -1.0f && out[1] == -0.5f && out[15] == 6.5f && out[16] == 6.5f && out[31] == -1.0f,
           "Q4_1 dequantize: q*d + m");
}

static void test_q5(void)
{
    /* qh = 0xa5a5f00f: bits 0-3 set, 4-11 clear, 12-15 set, 16-31 = 0xa5a5 */
    block_q5_0 b0 = {.d = 0x3400, .qh = {0x0f, 0xf0, 0xa5, 0xa5}}; /* d = 0.25 */
    for (int j = 0; j < 16; j++) b0.qs[j] = (uint8_t)((j & 0xf) | ((j * 3) & 0xf) << 4);
    float out[32];
    int ok = ember_dequantize_row(EMBER_Q5_0, &b0, out, 32) == 0;
    /* element 0: lo 0 + bit0 (16) -> 0; element 1: 1+16-16 = 1 -> 0.25;
       element 4: 4, bit4 clear -> -12 -> -3; element 12: 12+16-16 -> 3;
       element 16: hi(qs0) = 0, bit16 set -> 0; element 17: hi(qs1) = 3, bit17
       clear -> -13 -> -3.25; element 31: hi(qs15) = 13, bit31 set -> 13 -> 3.25 */
    tap_ok(ok && out[0] == 0.0f && out[1] == 0.25f && out[4] == -3.0f && out[12] == 3.0f &&
           out[16] == 0.0f && out[17] == -3.25f && out[31] == 3.25f,
           "Q5_0 dequantize: fifth bit from qh (bit j for element j)");
    block_q5_1 b1 = {.d = 0x3400, .m = 0x4000, .qh = {0x0f, 0xf0, 0xa5, 0xa5}}; /* m = 2 */
    memcpy(b1.qs, b0.qs, 16);
    ok = ember_dequantize_row(EMBER_Q5_1, &b1, out, 32) == 0;
    tap_ok(ok && out[0] == 6.0f && out[1] == 6.25f && out[4] == 3.0f && out[17] == 2.75f && out[31] == 9.25f,
           "Q5_1 dequantize: q5*d + m");
}

static void test_q8_0_iq4(void)
{
    block_q8_0 b = {.d = 0x4000}; /* 2 */
    for (int j = 0; j < 32; j++) b.qs[j] = (int8_t)(j * 8 - 127);
    b.qs[0] = -127;
    b.qs[1] = 127;
    b.qs[2] = 0;
    float out[32];
    int ok = ember_dequantize_row(EMBER_Q8_0, &b, out, 32) == 0;
    tap_ok(ok && out[0] == -254.0f && out[1] == 254.0f && out[2] == 0.0f && out[3] == -206.0f,
           "Q8_0 dequantize: q*d");
    b.d = 0x0001; /* subnormal scale 2^-24 */
    ok = ember_dequantize_row(EMBER_Q8_0, &b, out, 32) == 0;
    tap_ok(ok && out[1] == 127.0f * 0x1p-24f && out[0] == -127.0f * 0x1p-24f,
           "Q8_0 dequantize with a subnormal fp16 scale");

    block_iq4_nl n = {.d = 0x3c00};
    for (int j = 0; j < 16; j++) n.qs[j] = (uint8_t)(j | (15 - j) << 4);
    ok = ember_dequantize_row(EMBER_IQ4_NL, &n, out, 32) == 0;
    tap_ok(ok && out[0] == -127.0f && out[7] == -10.0f && out[8] == 1.0f && out[15] == 113.0f &&
           out[16] == 113.0f && out[31] == -127.0f, "IQ4_NL dequantize through its code book");

    /* MXFP4: e = 127 is the E8M0 value 1, so the E2M1 values themselves
       (0, 0.5, 1, 1.5, 2, 3, 4, 6; codes 8..15 negative) */
    block_mxfp4 mx = {.e = 127};
    for (int j = 0; j < 16; j++) mx.qs[j] = (uint8_t)(j | (15 - j) << 4);
    ok = ember_dequantize_row(EMBER_MXFP4, &mx, out, 32) == 0;
    tap_ok(ok && out[0] == 0.0f && out[1] == 0.5f && out[5] == 3.0f && out[7] == 6.0f && out[9] == -0.5f &&
               out[15] == -6.0f && out[16] == -6.0f && out[31] == 0.0f,
           "MXFP4 dequantize: E2M1 values times 2^(e - 127), low nibbles first");
    mx.e = 130;   /* 2^3 */
    ok = ember_dequantize_row(EMBER_MXFP4, &mx, out, 32) == 0;
    tap_ok(ok && out[7] == 48.0f && out[14] == -32.0f, "MXFP4 dequantize: the exponent byte scales by 2^(e - 127)");
    mx.e = 0;     /* the smallest scale: 2^-127, a subnormal float */
    ok = ember_dequantize_row(EMBER_MXFP4, &mx, out, 32) == 0;
    tap_ok(ok && out[2] == 0x1p-127f && out[7] == 6.0f * 0x1p-127f, "MXFP4 dequantize: e = 0 gives 2^-127 (subnormal)");
    int u12 = 1;
    for (int i = 0; i < 16; i++) u12 &= ember_mxfp4_values_u12[i] == ember_mxfp4_values[i] + 12;
    tap_ok(u12, "the SIMD kernels' MXFP4 table is the code book plus 12");
}

static void test_known_quant(void)
{
    float x[32];
    for (int j = 0; j < 32; j++) x[j] = (float)(j - 16);
    block_q8_0 q8;
    int ok = ember_quantize_row(EMBER_Q8_0, x, &q8, 32) == 0;
    /* d = 16/127, id = 7.9375: 15 -> 119.06 -> 119, -1 -> -7.9375 -> -8 */
    tap_ok(ok && q8.d == ember_f32_to_fp16(16.0f / 127.0f) && q8.qs[0] == -127 && q8.qs[16] == 0 &&
           q8.qs[31] == 119 && q8.qs[15] == -8, "Q8_0 quantize: d = amax/127, round to nearest");
    block_q4_0 q4;
    ok = ember_quantize_row(EMBER_Q4_0, x, &q4, 32) == 0;
    /* signed max -16: d = 2, id = 0.5; -16 -> 0, 0 -> 8, -1 -> 8, 15 -> 16 clamps to 15 */
    tap_ok(ok && q4.d == 0x4000 && q4.qs[0] == 0x80 && q4.qs[15] == 0xf8,
           "Q4_0 quantize: d = max/-8 with the signed max, clamp at 15");
    block_q5_0 q5;
    ok = ember_quantize_row(EMBER_Q5_0, x, &q5, 32) == 0;
    /* d = 1, id = 1: x+16.5 truncated = j; element 31 -> 31 (0x1f) */
    uint32_t qh = (uint32_t)q5.qh[0] | (uint32_t)q5.qh[1] << 8 | (uint32_t)q5.qh[2] << 16 | (uint32_t)q5.qh[3] << 24;
    tap_ok(ok && q5.d == 0x3c00 && q5.qs[0] == 0x00 && q5.qs[15] == 0xff && qh == 0xffff0000u,
           "Q5_0 quantize: d = max/-16, high bits in qh");
    block_q4_1 q41;
    ok = ember_quantize_row(EMBER_Q4_1, x, &q41, 32) == 0;
    /* min -16, d = 31/15: codes round((x+16)*15/31) */
    tap_ok(ok && q41.m == 0xcc00 && (q41.qs[0] & 0xf) == 0 && (q41.qs[15] >> 4) == 15,
           "Q4_1 quantize: m = min, d = (max-min)/15");
    float zero[32] = {0};
    ok = ember_quantize_row(EMBER_Q8_0, zero, &q8, 32) == 0;
    int allz = q8.d == 0;
    for (int j = 0; j < 32; j++) allz &= q8.qs[j] == 0;
    tap_ok(ok && allz, "Q8_0 quantize of zeros gives d = 0 and zero codes");
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static float frand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)((rng >> 11) * 0x1p-53) * 2.0f - 1.0f;
}

static void test_roundtrip(void)
{
    enum { N = 32 * 64 };
    static float x[N], back[N];
    static uint8_t buf[N * 4];
    for (int i = 0; i < N; i++) x[i] = frand() * (1.0f + (float)(i / 32 % 7) * 10.0f);
    for (int i = 64; i < 96; i++) x[i] = 0.0f;                     /* an all-zero block */
    for (int i = 96; i < 128; i++) x[i] = -fabsf(x[i]);            /* all negative */
    const int types[] = {EMBER_F16, EMBER_BF16, EMBER_Q4_0, EMBER_Q4_1, EMBER_Q5_0, EMBER_Q5_1, EMBER_Q8_0,
                         EMBER_IQ4_NL, EMBER_MXFP4};
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        int type = types[ti];
        int ok = ember_quantize_row(type, x, buf, N) == 0 &&
                 ember_dequantize_row(type, buf, back, N) == 0;
        double worst = 0;
        for (int b = 0; ok && b < N / 32; b++) {
            float amax = 0, mn = INFINITY, mx = -INFINITY;
            for (int j = 0; j < 32; j++) {
                float v = x[b * 32 + j];
                if (fabsf(v) > amax) amax = fabsf(v);
                if (v < mn) mn = v;
                if (v > mx) mx = v;
            }
            for (int j = 0; j < 32; j++) {
                float v = x[b * 32 + j];
                double bound;
                switch (type) {
                case EMBER_F16: bound = fabsf(v) * 0x1p-11; break;
                case EMBER_BF16: bound = fabsf(v) * 0x1p-8; break;
                case EMBER_Q8_0: bound = amax / 127.0 * 0.57; break;
                /* the extreme opposite to the signed max clips by one step */
                case EMBER_Q4_0: bound = amax / 8.0 * 1.01; break;
                case EMBER_Q5_0: bound = amax / 16.0 * 1.01; break;
                case EMBER_Q4_1: bound = (mx - mn) / 15.0 * 0.55 + fabsf(mn) * 1e-3; break;
                /* values of the other sign than the max may clip at the book's
                   short end: 127 - 113 steps of amax / 127 */
                case EMBER_IQ4_NL: bound = amax / 127.0 * 14.0 * 1.01; break;
                /* the scale s puts amax in [4s, 8s) (as the reference's
                   quantizer does), above the book's 6s: values past 6s
                   clip, by up to 2s <= amax / 2 */
                case EMBER_MXFP4: bound = amax / 2.0 * 1.0001; break;
                default: bound = (mx - mn) / 31.0 * 0.55 + fabsf(mn) * 1e-3; break;
                }
                double e = fabs((double)back[b * 32 + j] - v);
                if (e > bound + 1e-30) {
                    tap_diag("%s block %d elem %d: %g -> %g (bound %g)", ember_dtype_name(type), b, j, v,
                             back[b * 32 + j], bound);
                    ok = 0;
                    break;
                }
                if (bound > 0 && e / bound > worst) worst = e / bound;
            }
        }
        tap_ok(ok, "%s quantize -> dequantize within bound (worst %.2f of bound)", ember_dtype_name(type), worst);
    }
}

static void test_rejects(void)
{
    float f[64] = {0};
    uint8_t buf[512] = {0};
    tap_ok(ember_dequantize_row(EMBER_Q4_K, buf, f, 32) == -1, "dequantize 32 elements of Q4_K (not a super-block): -1");
    tap_ok(ember_dequantize_row(99, buf, f, 32) == -1, "dequantize unknown type 99: -1");
    tap_ok(ember_quantize_row(EMBER_Q8_1, f, buf, 32) == -1, "quantize Q8_1 (an activation type) unsupported: -1");
    tap_ok(ember_quantize_row(EMBER_Q8_0, f, buf, 33) == -1 &&
           ember_dequantize_row(EMBER_Q4_0, buf, f, 48) == -1, "length not a multiple of 32: -1");
    tap_ok(ember_dequantize_row(EMBER_Q8_0, buf, f, 32) == 0, "ember_dequantize_row dispatches to Q8_0");
}

int main(void)
{
    test_floats();
    test_q4_0();
    test_q4_1();
    test_q5();
    test_q8_0_iq4();
    test_known_quant();
    test_roundtrip();
    test_rejects();
    return tap_done();
}
