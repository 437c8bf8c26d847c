/* The dtype table (dtype.c): each row's sizes are ggml's, each row's
   conversions belong to that row (a row pointing at another type's function
   would not round-trip), and ember_(de)quantize_row refuse what the table
   cannot do. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "dtype.h"
#include "ember.h"
#include "tap.h"

/* ggml's numbering and block layouts, written out independently of dtype.c. */
static const struct { int type; const char *name; int elems, bytes; int convertible; } want[] = {
    {EMBER_F32, "F32", 1, 4, 1},        {EMBER_F16, "F16", 1, 2, 1},
    {EMBER_Q4_0, "Q4_0", 32, 18, 1},    {EMBER_Q4_1, "Q4_1", 32, 20, 1},
    {EMBER_Q5_0, "Q5_0", 32, 22, 1},    {EMBER_Q5_1, "Q5_1", 32, 24, 1},
    {EMBER_Q8_0, "Q8_0", 32, 34, 1},    {EMBER_Q8_1, "Q8_1", 32, 36, 0},
    {EMBER_Q2_K, "Q2_K", 256, 84, 1},   {EMBER_Q3_K, "Q3_K", 256, 110, 1},
    {EMBER_Q4_K, "Q4_K", 256, 144, 1},  {EMBER_Q5_K, "Q5_K", 256, 176, 1},
    {EMBER_Q6_K, "Q6_K", 256, 210, 1},  {EMBER_Q8_K, "Q8_K", 256, 292, 1},
    {EMBER_IQ4_NL, "IQ4_NL", 32, 18, 1}, {EMBER_IQ4_XS, "IQ4_XS", 256, 136, 1},
    {EMBER_IQ2_XXS, "IQ2_XXS", 256, 66, 1}, {EMBER_IQ2_XS, "IQ2_XS", 256, 74, 1},
    {EMBER_IQ2_S, "IQ2_S", 256, 82, 1}, {EMBER_IQ3_XXS, "IQ3_XXS", 256, 98, 1},
    {EMBER_IQ3_S, "IQ3_S", 256, 110, 1}, {EMBER_IQ1_S, "IQ1_S", 256, 50, 1},
    {EMBER_IQ1_M, "IQ1_M", 256, 56, 1},
    {EMBER_BF16, "BF16", 1, 2, 1},      {EMBER_MXFP4, "MXFP4", 32, 17, 1},
};
#define NWANT (int)(sizeof want / sizeof want[0])

static void test_rows(void)
{
    int known = 0;
    for (int t = -2; t < 64; t++)
        if (ember_dtype_get(t)) known++;
    tap_ok(known == NWANT, "the table knows exactly the %d ggml types ember handles (got %d)", NWANT, known);
    for (int i = 0; i < NWANT; i++) {
        const ember_dtype_info *d = ember_dtype_get(want[i].type);
        int ok = d && !strcmp(d->name, want[i].name) && d->block_elems == want[i].elems &&
                 d->block_bytes == want[i].bytes && !!d->to_float == want[i].convertible &&
                 !!d->from_float == want[i].convertible && ember_dtype_from_name(want[i].name) == want[i].type &&
                 ember_row_bytes(want[i].type, 2 * 256) == (size_t)(2 * 256 / want[i].elems * want[i].bytes);
        tap_ok(ok, "%s: type %d, %d elements in %d bytes, conversions %s", want[i].name, want[i].type,
               want[i].elems, want[i].bytes, want[i].convertible ? "both" : "none");
    }
}

/* Quantize a smooth row through the table's own function pointers and read it
   back: a from_float/to_float pair from two different types scrambles it. */
static void test_pairs(void)
{
    enum { N = 512 };
    static float x[N], y[N];
    static uint8_t q[N * 4];
    for (int i = 0; i < N; i++) x[i] = sinf((float)i * 0.37f) * (1.0f + (float)(i % 7) * 0.1f);
    for (int i = 0; i < NWANT; i++) {
        const ember_dtype_info *d = ember_dtype_get(want[i].type);
        if (!d || !d->to_float) continue;
        memset(q, 0xa5, sizeof q);
        d->from_float(x, q, N / d->block_elems);
        d->to_float(q, y, N / d->block_elems);
        double se = 0, ss = 0;
        for (int j = 0; j < N; j++) {
            se += ((double)y[j] - x[j]) * ((double)y[j] - x[j]);
            ss += (double)x[j] * x[j];
        }
        double rel = sqrt(se / ss);
        /* the formats under 2.6 bits a weight (IQ1, IQ2) keep less */
        double bound = d->block_bytes * 8.0 / d->block_elems < 2.6 ? 0.45 : 0.25;
        tap_ok(rel < bound, "%s: from_float then to_float keeps the row (relative error %.4f < %.2f)", d->name, rel, bound);
    }
}

static void test_refusals(void)
{
    float f[256] = {0};
    uint8_t b[512] = {0};
    tap_ok(ember_quantize_row(EMBER_Q8_1, f, b, 32) == -1 && ember_dequantize_row(EMBER_Q8_1, b, f, 32) == -1,
           "Q8_1 has a table row but no conversions: -1 both ways");
    tap_ok(ember_dequantize_row(EMBER_Q8_0, b, f, 31) == -1 && ember_quantize_row(EMBER_Q6_K, f, b, 32) == -1,
           "a length that is not whole blocks: -1");
    tap_ok(ember_dequantize_row(5, b, f, 32) == -1 && ember_dequantize_row(1000, b, f, 32) == -1,
           "a hole in the numbering (5) and an out-of-range type: -1");
    tap_ok(ember_dequantize_row(EMBER_F16, b, f, 3) == 0 && ember_quantize_row(EMBER_BF16, f, b, 3) == 0,
           "the plain float types take any length");
}

/* general.file_type numbers (llama_ftype), including the retired gaps. */
static void test_file_types(void)
{
    const char *q4km = ember_file_type_name(15), *bf16 = ember_file_type_name(32);
    tap_ok(q4km && !strcmp(q4km, "Q4_K_M") && bf16 && !strcmp(bf16, "BF16") &&
           !strcmp(ember_file_type_name(7), "Q8_0") && !strcmp(ember_file_type_name(37), "TQ2_0"),
           "file types 15, 32, 7, 37 are Q4_K_M, BF16, Q8_0, TQ2_0");
    tap_ok(!ember_file_type_name(4) && !ember_file_type_name(-1) && !ember_file_type_name(EMBER_FILE_TYPE_MAX) &&
           !ember_file_type_name(1LL << 40), "retired (4), negative and out-of-range numbers name nothing");
}

int main(void)
{
    test_file_types();
    test_rows();
    test_pairs();
    test_refusals();
    return tap_done();
}
